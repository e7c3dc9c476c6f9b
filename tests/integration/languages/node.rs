//! Node, through mysql2 from npm.

use std::path::Path;
use std::process::{Command, Stdio};

use mysql::prelude::Queryable;

use super::{Address, printed};
use crate::support::{self, in_project, on_each_server};

on_each_server!(node_calls_every_routine_and_the_plain_statements_through_mysql2);

/// mysql2, as a Node application uses it from npm (the version
/// `tests/integration/languages/package-lock.json` pins, which `scripts/test`
/// installs): every routine with prepared statements, a batch written by
/// `JSON.stringify`, writes with ids sent twice, the refusals with the
/// numbers docs/other-languages.md gives; then the plain mode's statements,
/// read from the package's plain_statements.sql by name, with the steps
/// around them that docs/plain-sql.md lists and the errors it says to
/// raise. mysql2 sends every JavaScript number as a double and a boolean as
/// a TINYINT, and names only the errors it knows (`code` is undefined for
/// the package's own).
fn node_calls_every_routine_and_the_plain_statements_through_mysql2() {
    let db = support::with_committed("generated");
    let address = Address::of(&db);
    let modules = std::env::var("SLOTTED_COUNTERS_NODE_PATH")
        .expect("SLOTTED_COUNTERS_NODE_PATH names the Node modules: run `scripts/test`, which installs mysql2 with npm");
    assert!(Path::new(&modules).join("mysql2").is_dir(), "no mysql2 in {modules}: run `scripts/test`");
    let output = Command::new("node")
        .arg(in_project("tests/integration/languages/counters_from_node.js"))
        .arg(in_project("generated/plain_statements.sql"))
        .env("NODE_PATH", &modules)
        .env("HOST", &address.host)
        .env("PORT", address.port.to_string())
        .env("USER", &address.user)
        .env("PASSWORD", &address.password)
        .env("DATABASE", &address.database)
        .stdin(Stdio::null())
        .output()
        .expect("run node");
    let refused = "23000 undefined";
    let raised = "23000 (raised by the caller)";
    assert_eq!(
        printed(output, "node with mysql2"),
        [
            "after adds: 42".to_owned(),
            r#"batch: {"downloads":1,"名前 😀":2,"a&b<c>/d\"q\\":3}"#.to_owned(),
            "after batch downloads: 43".to_owned(),
            "after batch 名前 😀: 2".to_owned(),
            "after batch a&b<c>/d\"q\\: 3".to_owned(),
            "after writes with ids: 49 3".to_owned(),
            "estimate is a multiple of 4: 0".to_owned(),
            "after reset: 10".to_owned(),
            "after resize and compact: 49".to_owned(),
            "after delete: null".to_owned(),
            format!("unknown counter: 9001 {refused}"),
            format!("already exists: 9002 {refused}"),
            format!("empty name: 9003 {refused}"),
            format!("fractional delta: 9003 {refused}"),
            format!("fractional batch: 9003 {refused}"),
            format!("short write id: 9003 {refused}"),
            "missing routine: 1305 42000 ER_SP_DOES_NOT_EXIST".to_owned(),
            format!("past the floor: 9004 {refused} room 49"),
            "after refusals: 49".to_owned(),
            "plain get_many: 18 null 5".to_owned(),
            "plain slots: 4".to_owned(),
            "plain after reset: 3".to_owned(),
            format!("plain unknown counter: 9001 {raised}"),
            format!("plain already exists: 9002 {raised}"),
            format!("plain past the bound: 9003 {raised}"),
            format!("plain past the floor: 9004 {raised} room 7"),
            "plain stock sold out: 0".to_owned(),
            format!("plain delete of a deleted counter: 9001 {raised}"),
            "plain after refusals: 18 null".to_owned(),
        ]
    );
    // Committed, as another connection reads them.
    let mut conn = db.conn();
    assert_eq!(support::total(&mut conn, "downloads"), Some(49));
    assert_eq!(support::total(&mut conn, "plain"), Some(18));
    let slots: u32 =
        conn.query_first("SELECT COUNT(*) FROM counters WHERE counter_name = 'plain'").unwrap().unwrap();
    assert_eq!(slots, 4, "the plain setup made a row per slot");
}
