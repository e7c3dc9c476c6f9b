//! Sessions of any collation. A routine keeps the `collation_connection` of
//! the session that created it (its literals and `CAST(... AS CHAR)` take
//! it), and a variable declared without `COLLATE` takes the server's default
//! for its character set: `utf8mb4_0900_ai_ci` on MySQL 8+,
//! `utf8mb4_general_ci` on MariaDB. Two of those in one comparison fail
//! with 1267. So every committed package is installed here from sessions of
//! each collation, and every routine is called from sessions of each.

use mysql::prelude::Queryable;
use mysql::{PooledConn, Value};
use slotted_counters::PackageOptions;
use slotted_counters_core::Feature;
use slotted_counters_core::package::errno;

use crate::support::call_script::{assert_alike, script_client, script_of_calls, script_pool};
use crate::support::{
    self, Database, Flavor, committed_here, flavor, on_each_server, server_error, slotted_counters, succeeded,
};

on_each_server!(
    every_routine_answers_sessions_of_every_collation_whatever_session_installed_it,
    a_package_of_a_collation_not_the_databases_answers_as_the_default_package_does,
);

/// A session's character set and collation, as `SET NAMES` takes them.
#[derive(Debug, Clone, Copy)]
struct Session {
    names: &'static str,
    /// Whether strings travel as latin1: non-latin1 names cannot be sent.
    latin1: bool,
}

/// The mysql crate's sessions, and so the `install` command's.
const CRATE_SESSION: Session = Session { names: "utf8mb4 COLLATE utf8mb4_general_ci", latin1: false };

/// The sessions to try on this server: the mysql crate's own, latin1, and
/// MySQL's default `utf8mb4_0900_ai_ci` where the server has it (every
/// MySQL 8+; newer MariaDB as an alias).
fn sessions(conn: &mut PooledConn) -> Vec<Session> {
    let has_0900: bool = conn
        .query_first("SELECT COUNT(*) > 0 FROM information_schema.COLLATIONS WHERE COLLATION_NAME = 'utf8mb4_0900_ai_ci'")
        .unwrap()
        .unwrap();
    assert!(has_0900 || flavor() == Flavor::MariaDb, "MySQL 8+ has utf8mb4_0900_ai_ci");
    let mut sessions = vec![CRATE_SESSION, Session { names: "latin1", latin1: true }];
    if has_0900 {
        sessions.push(Session { names: "utf8mb4 COLLATE utf8mb4_0900_ai_ci", latin1: false });
    }
    sessions
}

/// A connection to `db` whose session is `session`.
fn conn_in(db: &Database, session: Session) -> PooledConn {
    let mut conn = db.conn();
    conn.query_drop(format!("SET NAMES {}", session.names)).unwrap();
    conn
}

/// `text` as the session's bytes: latin1 sessions read each byte as a character.
fn encode(session: Session, text: &str) -> Value {
    if session.latin1 {
        let bytes = text.chars().map(|c| u8::try_from(u32::from(c)).expect("a latin1 character")).collect();
        Value::Bytes(bytes)
    } else {
        Value::from(text)
    }
}

fn every_routine_answers_sessions_of_every_collation_whatever_session_installed_it() {
    let sessions = sessions(&mut Database::new().conn());
    for (dir, flags) in committed_here() {
        for installer in &sessions {
            let db = Database::new();
            install_from(&db, dir, *installer);
            for caller in &sessions {
                let context =
                    format!("{dir} installed from {}, called from {}", installer.names, caller.names);
                call_every_routine(&db, *caller, flags, &context);
            }
        }
    }
}

/// Installs the committed package in `dir` from an `installer` session:
/// with the `install` command for the mysql crate's own, as a DBA runs it.
fn install_from(db: &Database, dir: &str, installer: Session) {
    let setup_sql = support::committed_setup_sql(dir);
    if installer.names == CRATE_SESSION.names {
        let folder = setup_sql.parent().unwrap().to_str().unwrap();
        succeeded(slotted_counters(&["install", "--from", folder, "--url", &db.url()]));
    } else {
        let script = std::fs::read_to_string(setup_sql).unwrap();
        slotted_counters_cli::script::run(&mut conn_in(db, installer), &script)
            .unwrap_or_else(|error| panic!("{dir} from a {} session: {error}", installer.names));
    }
}

/// Every routine of the package in `db`, its errors and the view, called
/// from a `session` connection, with a non-ASCII name.
fn call_every_routine(db: &Database, session: Session, flags: &[&str], context: &str) {
    let fixed = flags.contains(&"--fixed-slots");
    let lazy = flags.contains(&"--auto-create");
    let features = support::features_of(flags);
    let name = if session.latin1 { "Zürich café" } else { "Zürich ☕ 日本" };
    let encoded = || encode(session, name);
    let mut conn = conn_in(db, session);
    let mut call = |sql: &str, params: Vec<Value>| {
        conn.exec_drop(sql, params).unwrap_or_else(|error| panic!("{context}: {sql}: {error}"))
    };

    let slots = if fixed { Value::NULL } else { Value::from(4) };
    call("CALL counter_setup(?, ?, ?, 7)", vec![encoded(), encode(session, "déscription"), slots.clone()]);
    call("CALL counter_increment(?)", vec![encoded()]);
    call("CALL counter_add(?, 5)", vec![encoded()]);
    if features.has(Feature::Batches) {
        let batch = format!("{{\"{name}\": 3}}");
        call("CALL counter_add_many(?)", vec![encode(session, &batch)]);
    } else {
        call("CALL counter_add(?, 3)", vec![encoded()]);
    }
    if features.has(Feature::Resize) {
        if !fixed {
            call("CALL counter_resize(?, 2)", vec![encoded()]);
        }
        call("CALL counter_compact(?)", vec![encoded()]);
    }

    let mut conn = conn_in(db, session);
    let read: (Option<i64>, Option<i64>) = conn
        .exec_first("SELECT counter_get(?), counter_estimate(?)", vec![encoded(), encoded()])
        .unwrap()
        .unwrap();
    assert_eq!(read.0, Some(16), "{context}: counter_get");
    assert!(read.1.is_some(), "{context}: counter_estimate");
    let viewed: Option<(i64, Vec<u8>)> = conn
        .exec_first("SELECT total, description FROM counter_totals WHERE counter_name = ?", vec![encoded()])
        .unwrap();
    let expected_description =
        if session.latin1 { encode(session, "déscription") } else { Value::from("déscription") };
    assert_eq!(
        viewed.map(|(total, description)| (total, Value::Bytes(description))),
        Some((16, expected_description)),
        "{context}: counter_totals"
    );

    let mut refused = |sql: &str, params: Vec<Value>| -> (u16, String) {
        server_error(conn.exec_drop(sql, params).expect_err(&format!("{context}: {sql}")))
    };
    let (code, message) = refused("CALL counter_setup(?, 'd', ?, NULL)", vec![encoded(), slots]);
    assert_eq!(code, errno::ALREADY_EXISTS, "{context}: {message}");
    let unknown = if session.latin1 { "ünknown" } else { "ünknown 日本" };
    if features.has(Feature::Resize) {
        let (code, message) = refused("CALL counter_compact(?)", vec![encode(session, unknown)]);
        assert_eq!(code, errno::UNKNOWN_COUNTER, "{context}: {message}");
    }
    let batches = features.has(Feature::Batches);
    if !lazy {
        let (code, message) = refused("CALL counter_increment(?)", vec![encode(session, unknown)]);
        assert_eq!(code, errno::UNKNOWN_COUNTER, "{context}: {message}");
        let (code, message) = refused("CALL counter_reset(?, 1, FALSE)", vec![encode(session, unknown)]);
        assert_eq!(code, errno::UNKNOWN_COUNTER, "{context}: {message}");
        if batches {
            let batch = format!("{{\"{name}\": 1, \"{unknown}\": 1}}");
            let (code, message) = refused("CALL counter_add_many(?)", vec![encode(session, &batch)]);
            assert_eq!(code, errno::UNKNOWN_COUNTER, "{context}: {message}");
        }
    }
    if batches {
        let batch = format!("{{\"{name}\": 1.5}}");
        let (code, message) = refused("CALL counter_add_many(?)", vec![encode(session, &batch)]);
        assert_eq!(code, errno::INVALID_ARGUMENT, "{context}: {message}");
    }
    let (code, message) = refused("CALL counter_add(?, NULL)", vec![encoded()]);
    assert_eq!(code, errno::INVALID_ARGUMENT, "{context}: {message}");
    let too_long = "ü".repeat(129);
    let (code, message) = refused("CALL counter_increment(?)", vec![encode(session, &too_long)]);
    assert_eq!(code, errno::INVALID_ARGUMENT, "{context}: {message}");
    assert_eq!(support::total(&mut conn, "no such counter"), None, "{context}");

    let mut conn = conn_in(db, session);
    let total = |conn: &mut PooledConn| -> Option<i64> {
        conn.exec_first("SELECT counter_get(?)", vec![encoded()]).unwrap().flatten()
    };
    assert_eq!(total(&mut conn), Some(16), "{context}: refused calls change nothing");
    conn.exec_drop("CALL counter_reset(?, 2, TRUE)", vec![encoded()]).unwrap();
    assert_eq!(total(&mut conn), Some(2), "{context}: counter_reset");
    conn.exec_drop("CALL counter_delete(?)", vec![encoded()]).unwrap();
    assert_eq!(total(&mut conn), None, "{context}: counter_delete");
}

/// A package generated with `--collation utf8mb4_unicode_ci`, in a
/// database of the server's default collation (the variables of no
/// collation of their own take it), answers the script of calls as the
/// default package does, through its routines and in the plain mode: a
/// routine's period compared with the periods' column failed every write
/// to a limited period with 1267.
fn a_package_of_a_collation_not_the_databases_answers_as_the_default_package_does() {
    let default = PackageOptions::default();
    let reference = support::with_package(&default);
    let expected = script_of_calls(&script_client(script_pool(&reference.url()), &default, false, false));
    let options = PackageOptions::builder().collation("utf8mb4_unicode_ci").build().unwrap();
    let with_routines = support::with_package(&options);
    let (_plain_db, plain_url) = support::plain_database(&options);
    for (url, plain) in [(with_routines.url(), false), (plain_url, true)] {
        let got = script_of_calls(&script_client(script_pool(&url), &options, false, plain));
        assert_alike(&expected, &got, &format!("utf8mb4_unicode_ci, plain: {plain}"));
    }
}
