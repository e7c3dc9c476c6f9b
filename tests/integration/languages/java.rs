//! Java, through MariaDB Connector/J, its batches written by Jackson.

use std::path::Path;
use std::process::{Command, Stdio};

use mysql::prelude::Queryable;

use super::{Address, printed};
use crate::support::{self, in_project, on_each_server};

on_each_server!(java_calls_every_routine_through_connector_j);

/// The jars Java applications take from Debian's `libmariadb-java` and
/// `libjackson2-databind-java`, which `scripts/test` installs.
const JAVA_CLASSPATH: [&str; 4] = [
    "/usr/share/java/mariadb-java-client.jar",
    "/usr/share/java/jackson-databind.jar",
    "/usr/share/java/jackson-core.jar",
    "/usr/share/java/jackson-annotations.jar",
];

/// MariaDB Connector/J, as a Java application uses it: every routine,
/// batches written by Jackson (as is, and with non-ASCII escaped), a whole
/// number sent as a double counted, a fractional one refused. The
/// package's refusals arrive as `SQLIntegrityConstraintViolationException`,
/// a permanent error that retry layers deciding by exception class (Spring's
/// among them) do not retry; with SQLSTATE 45000 they were
/// `SQLTransientConnectionException`s. A missing routine (1305, a reinstall
/// on MySQL) arrives as a `SQLSyntaxErrorException`, which such layers do
/// not retry either: retry code must key on the error number.
fn java_calls_every_routine_through_connector_j() {
    let db = support::with_committed("generated");
    let address = Address::of(&db);
    // Connector/J logs in to MySQL with caching_sha2_password: over plain
    // TCP it needs the server's RSA key (see docs/other-languages.md).
    let jdbc_url = format!(
        "jdbc:mariadb://{}:{}/{}?user={}&password={}&allowPublicKeyRetrieval=true",
        address.host, address.port, address.database, address.user, address.password
    );
    for jar in JAVA_CLASSPATH {
        assert!(Path::new(jar).exists(), "{jar} is missing: run `scripts/test`, which installs it");
    }
    let output = Command::new("java")
        .arg("-cp")
        .arg(JAVA_CLASSPATH.join(":"))
        .arg(in_project("tests/integration/languages/CountersFromJava.java"))
        .arg(&jdbc_url)
        .stdin(Stdio::null())
        .output()
        .expect("run java");
    let refused = "23000 java.sql.SQLIntegrityConstraintViolationException transient=false";
    assert_eq!(
        printed(output, "java with Connector/J"),
        [
            "after adds: 44".to_owned(),
            r#"ascii-only batch: {"downloads":1,"\u540D\u524D \uD83D\uDE00":2,"a&b<c>/d\"q\\":3}"#.to_owned(),
            "after batches downloads: 46".to_owned(),
            "after batches 名前 😀: 4".to_owned(),
            "after batches a&b<c>/d\"q\\: 6".to_owned(),
            "estimate is a multiple of 4: 0".to_owned(),
            "after reset: 10".to_owned(),
            "after resize and compact: 46".to_owned(),
            "after delete: null".to_owned(),
            format!("unknown counter: 9001 {refused}"),
            format!("already exists: 9002 {refused}"),
            format!("empty name: 9003 {refused}"),
            format!("fractional delta: 9003 {refused}"),
            format!("fractional batch: 9003 {refused}"),
            "missing routine: 1305 42000 java.sql.SQLSyntaxErrorException transient=false".to_owned(),
            format!("past the floor: 9004 {refused}"),
            "after refusals: 46".to_owned(),
        ]
    );
    let slots: u32 = db
        .conn()
        .query_first("SELECT COUNT(*) FROM counters WHERE counter_name = 'downloads'")
        .unwrap()
        .unwrap();
    assert_eq!(slots, 8, "the resize from Java took effect");
}
