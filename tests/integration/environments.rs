//! The package where DBAs and applications run it, beyond a utf8mb4
//! database, a strict session and the Rust client: latin1 databases,
//! non-strict sessions, statement-based logging, accounts without SUPER,
//! other collations. Other languages' drivers are in `languages`.

use mysql::prelude::Queryable;
use mysql::{Params, PooledConn};
use slotted_counters::PackageOptions;
use slotted_counters_core::package::errno;

use crate::support::{
    self, Database, Flavor, flavor, on_each_server, routines_in, server_error, slots_of, table, total,
};

on_each_server!(
    latin1_database_reports_every_error_for_non_latin1_names,
    latin1_database_keeps_non_latin1_names_and_descriptions_through_resize,
    over_long_names_never_reach_another_counter_in_any_sql_mode,
    no_routine_warns_under_statement_based_logging,
    setup_sql_refused_for_an_account_without_super_changes_nothing,
    collation_option_matches_application_tables,
    refused_resize_keeps_the_callers_transaction,
    changes_inside_the_callers_transaction_commit_or_roll_back_with_it,
    every_routine_and_trigger_runs_in_one_sql_mode_whatever_the_installing_session,
);

fn error_of(conn: &mut PooledConn, sql: &str, params: impl Into<Params>) -> (u16, String) {
    server_error(conn.exec_drop(sql, params).expect_err(sql))
}

/// A latin1 database with the default package installed.
fn latin1() -> Database {
    let db = Database::with_charset("latin1");
    support::install_committed(&db, "generated");
    db
}

fn latin1_database_reports_every_error_for_non_latin1_names() {
    let db = latin1();
    let mut conn = db.conn();
    conn.exec_drop("CALL counter_setup(?, 'd', 3, NULL)", ("日本語",)).unwrap();
    let before = table(&mut conn);

    let unknown = [
        ("CALL counter_increment(?)", Params::from(("ユニコード",))),
        ("CALL counter_add(?, 2)", ("ユニコード",).into()),
        ("CALL counter_reset(?, 0, FALSE)", ("ユニコード",).into()),
        ("CALL counter_resize(?, 4)", ("ユニコード",).into()),
        ("CALL counter_compact(?)", ("ユニコード",).into()),
        ("CALL counter_delete(?)", ("ユニコード",).into()),
    ];
    for (sql, params) in unknown {
        assert_eq!(
            error_of(&mut conn, sql, params),
            (errno::UNKNOWN_COUNTER, "unknown counter: 'ユニコード'".into())
        );
    }
    // The server's error text cannot carry characters outside the BMP: an
    // emoji arrives as '?'. The number is what callers match on.
    let (code, message) = error_of(&mut conn, "CALL counter_increment(?)", ("clicks 😀",));
    assert_eq!((code, message.as_str()), (errno::UNKNOWN_COUNTER, "unknown counter: 'clicks ?'"));
    assert_eq!(
        error_of(&mut conn, "CALL counter_setup(?, 'd', NULL, NULL)", ("日本語",)),
        (errno::ALREADY_EXISTS, "counter already exists: '日本語'".into())
    );
    let long_name = "語".repeat(129);
    let (code, message) = error_of(&mut conn, "CALL counter_setup(?, 'd', NULL, NULL)", (&long_name,));
    assert_eq!(code, errno::INVALID_ARGUMENT);
    assert!(message.starts_with("counter name is longer than 128 characters: '語語"), "{message}");
    assert_eq!(
        error_of(&mut conn, "CALL counter_setup(?, ?, NULL, NULL)", ("説明", "説".repeat(256))),
        (errno::INVALID_ARGUMENT, "description is longer than 255 characters, for counter: '説明'".into())
    );
    assert_eq!(
        error_of(&mut conn, "CALL counter_resize(?, 0)", ("日本語",)),
        (
            errno::INVALID_ARGUMENT,
            "slots must be a whole number between 1 and 1024, not 0, for counter: '日本語'".into()
        )
    );
    assert_eq!(table(&mut conn), before, "no failed call changed the table");
}

fn latin1_database_keeps_non_latin1_names_and_descriptions_through_resize() {
    let db = latin1();
    let mut conn = db.conn();
    let (name, description) = ("😀 clicks 日本", "説明 ✓ 😀");
    conn.exec_drop("CALL counter_setup(?, ?, 4, 10)", (name, description)).unwrap();
    for _ in 0..20 {
        conn.exec_drop("CALL counter_increment(?)", (name,)).unwrap();
    }
    for slots in [9, 2, 5] {
        conn.exec_drop("CALL counter_resize(?, ?)", (name, slots)).unwrap();
        assert_eq!(slots_of(&mut conn, name).len(), slots, "resized to {slots}");
        assert_eq!(total(&mut conn, name), Some(30));
    }
    conn.exec_drop("CALL counter_compact(?)", (name,)).unwrap();
    let descriptions: Vec<String> =
        conn.exec("SELECT DISTINCT description FROM counters WHERE counter_name = ?", (name,)).unwrap();
    assert_eq!(descriptions, [description], "every slot keeps the description");
    let shown: Vec<(String, u32, i64)> =
        conn.query("SELECT counter_name, slots, total FROM counter_totals").unwrap();
    assert_eq!(shown, [(name.to_owned(), 5, 30)]);
}

/// A name longer than the column must never be cut to another counter's
/// name: in a non-strict session the server cuts an argument that does not
/// fit its parameter with only a warning.
fn over_long_names_never_reach_another_counter_in_any_sql_mode() {
    let db = support::with_committed("generated");
    let short = "k".repeat(128);
    // The collation ignores trailing spaces: cut after the space, this name
    // would be the 128-character counter.
    let long = format!("{short} tttttttttt");
    let huge = format!("{short} {}", "t".repeat(2000));
    db.conn().exec_drop("CALL counter_setup(?, 'd', 2, 7)", (&short,)).unwrap();

    for sql_mode in ["", "STRICT_TRANS_TABLES"] {
        let mut conn = db.conn();
        conn.exec_drop("SET SESSION sql_mode = ?", (sql_mode,)).unwrap();
        let before = table(&mut conn);
        for name in [&long, &huge] {
            for sql in [
                "CALL counter_increment(?)",
                "CALL counter_add(?, 5)",
                "CALL counter_reset(?, 0, TRUE)",
                "CALL counter_resize(?, 3)",
                "CALL counter_compact(?)",
                "CALL counter_delete(?)",
                "CALL counter_setup(?, 'd', NULL, NULL)",
            ] {
                let (code, message) = error_of(&mut conn, sql, (name,));
                // A strict session rejects an argument wider than the
                // parameter itself (1406); either way nothing is written.
                let expected =
                    if sql_mode.is_empty() || name == &long { errno::INVALID_ARGUMENT } else { 1406 };
                assert_eq!(code, expected, "sql_mode '{sql_mode}', {sql} of {} chars: {message}", name.len());
            }
            if sql_mode.is_empty() || name == &long {
                let read: (Option<i64>, Option<i64>) = conn
                    .exec_first("SELECT counter_get(?), counter_estimate(?)", (name, name))
                    .unwrap()
                    .unwrap();
                assert_eq!(read, (None, None), "sql_mode '{sql_mode}': a long name reads no counter");
            }
        }
        assert_eq!(table(&mut conn), before, "sql_mode '{sql_mode}': nothing was written");
        assert_eq!(total(&mut conn, &short), Some(7));
    }
}

/// Every routine of every committed package, run in a session that logs
/// statements, raises no warning: 1592 (unsafe for statement-based
/// logging) would mean replicas may diverge.
fn no_routine_warns_under_statement_based_logging() {
    for (dir, _) in support::committed_here() {
        let db = support::with_committed(dir);
        let mut conn = db.conn();
        conn.query_drop("SET SESSION binlog_format = 'STATEMENT'").unwrap();
        let installed = routines_in(&mut conn);
        let resizable = installed.iter().any(|routine| routine == "counter_resize");
        let mut calls: Vec<String> = [
            "CALL counter_setup('a', 'd', NULL, 5)",
            "CALL counter_increment('a')",
            "CALL counter_add('a', -2)",
            "CALL counter_setup('b', 'd', NULL, NULL)",
            r#"CALL counter_add_many('{"a": 3, "b": -1}')"#,
            r#"CALL counter_add_many_once(UNHEX(LEFT(SHA2('batch', 256), 32)), '{"a": 1}')"#,
        ]
        .map(String::from)
        .into();
        // A write with an id forgets expired ids in one call of 16, at
        // random: 200 of them forget some with a chance of 1 - 10^-6.
        calls.extend(
            (0..200).map(|n| format!("CALL counter_add_once(UNHEX(LEFT(SHA2('{n}', 256), 32)), 'a', 1)")),
        );
        calls.push("CALL counter_forget_writes(1)".to_owned());
        if dir.contains("auto-create") {
            calls.push("CALL counter_increment('created by its first increment')".to_owned());
        }
        if resizable {
            calls.extend(["CALL counter_resize('a', 40)", "CALL counter_resize('a', 3)"].map(String::from));
            // Inside a caller's transaction, where MariaDB 11.6+ under
            // snapshot isolation reads the slot count with locking reads.
            calls.extend(
                ["START TRANSACTION", "CALL counter_resize('a', 5)", "CALL counter_resize('a', 2)", "COMMIT"]
                    .map(String::from),
            );
        }
        calls.extend(
            [
                "CALL counter_compact('a')",
                "CALL counter_reset('a', 9, TRUE)",
                "SELECT counter_get('a'), counter_estimate('a')",
                "CALL counter_delete('a')",
            ]
            .map(String::from),
        );
        // Each call of a routine the package has: the classic one has no
        // batch, write id, resize nor compaction.
        let calls = calls.iter().filter(|sql| {
            let routine = sql.split(['(', ' ']).find(|word| word.starts_with("counter_"));
            routine.is_none_or(|routine| installed.iter().any(|name| name == routine))
        });
        for sql in calls {
            let sql = sql.as_str();
            conn.query_drop(sql).unwrap_or_else(|error| panic!("{dir}: {sql}: {error}"));
            let warnings: Vec<(String, u16, String)> = conn.query("SHOW WARNINGS").unwrap();
            assert!(warnings.is_empty(), "{dir}: {sql} warned: {warnings:?}");
        }
    }
}

/// A DBA without SUPER, on a server with binary logging, sources setup.sql
/// over an installed package: the script must stop before it drops anything.
fn setup_sql_refused_for_an_account_without_super_changes_nothing() {
    let db = support::with_committed("generated");
    let mut conn = db.conn();
    let (log_bin, trusted): (u8, u8) =
        conn.query_first("SELECT @@log_bin, @@log_bin_trust_function_creators").unwrap().unwrap();
    assert_eq!(
        (log_bin, trusted),
        (1, 0),
        "this test needs binary logging on and untrusted function creators"
    );
    conn.query_drop("CALL counter_setup('kept', 'd', 3, 41)").unwrap();
    let routines = routines_in(&mut conn);
    let app = db.unprivileged_user();

    let output = db
        .client_as(&app)
        .stdin(std::fs::File::open(support::committed_setup_sql("generated")).unwrap())
        .output()
        .unwrap();
    let message = support::stderr(&output);
    assert!(!output.status.success(), "the account could install: {message}");
    assert_eq!(routines_in(&mut conn), routines, "every routine is still there: {message}");
    conn.query_drop("CALL counter_increment('kept')").unwrap();
    assert_eq!(total(&mut conn, "kept"), Some(42), "and works");
    let probe_line = std::fs::read_to_string(support::committed_setup_sql("generated"))
        .unwrap()
        .lines()
        .position(|line| line.starts_with("CREATE FUNCTION `counter_install_probe`"))
        .unwrap()
        + 1;
    assert!(
        message.contains(&format!("ERROR 1419 (HY000) at line {probe_line}")),
        "the probe stopped it: {message}"
    );
}

/// The default collation joins application tables of any collation,
/// comparing as written; a package generated with the application's
/// collation joins as it compares; a `_ci` package meets error 1267
/// (illegal mix of collations) on a table of another `_ci` collation, as
/// MySQL 8 applications in utf8mb4_0900_ai_ci do.
fn collation_option_matches_application_tables() {
    let join = "SELECT p.title, t.total FROM pages AS p LEFT JOIN counter_totals AS t ON t.counter_name = p.slug ORDER BY 1";
    let app_table = "CREATE TABLE pages (slug VARCHAR(50) COLLATE utf8mb4_general_ci, title TEXT)";

    let db = support::with_committed("generated");
    let mut conn = db.conn();
    conn.query_drop(app_table).unwrap();
    conn.query_drop("INSERT INTO pages VALUES ('home', 'Home page'), ('Home', 'Other page')").unwrap();
    conn.query_drop("CALL counter_setup('home', 'd', 2, 3)").unwrap();
    let joined: Vec<(String, Option<i64>)> = conn.query(join).unwrap();
    assert_eq!(joined, [("Home page".to_owned(), Some(3)), ("Other page".to_owned(), None)], "as written");

    let unicode_ci = PackageOptions::builder().collation("utf8mb4_unicode_ci").build().unwrap();
    let db = support::with_package(&unicode_ci);
    let mut conn = db.conn();
    conn.query_drop(app_table).unwrap();
    let (code, _) = server_error(conn.query_drop(join).unwrap_err());
    assert_eq!(code, 1267, "utf8mb4_unicode_ci does not mix with utf8mb4_general_ci");

    for collation in ["utf8mb4_general_ci", "utf8mb4_bin"] {
        let options = PackageOptions::builder().collation(collation).build().unwrap();
        let db = Database::new();
        let mut conn = db.conn();
        slotted_counters_cli::install::install(
            &mut conn,
            &slotted_counters_cli::render::setup_sql(&options).unwrap(),
        )
        .unwrap();
        conn.query_drop("CALL counter_setup('Home', 'd', 2, 3)").unwrap();
        let table_collation: String = conn
            .query_first("SELECT TABLE_COLLATION FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'counters'")
            .unwrap()
            .unwrap();
        assert_eq!(table_collation, collation);
        if collation == "utf8mb4_general_ci" {
            conn.query_drop(app_table).unwrap();
            conn.query_drop("INSERT INTO pages VALUES ('home', 'Home page')").unwrap();
            let joined: Vec<(String, Option<i64>)> = conn.query(join).unwrap();
            assert_eq!(joined, [("Home page".to_owned(), Some(3))], "joins, case-insensitively");
        } else {
            assert_eq!(total(&mut conn, "home"), None, "utf8mb4_bin tells case apart");
            conn.query_drop("CALL counter_setup('home', 'd', 2, 1)").unwrap();
            assert_eq!((total(&mut conn, "Home"), total(&mut conn, "home")), (Some(3), Some(1)));
        }
    }
}

/// A resize refused for its arguments leaves the caller's open transaction
/// alone.
fn refused_resize_keeps_the_callers_transaction() {
    let db = support::with_committed("generated");
    let mut conn = db.conn();
    conn.query_drop("CALL counter_setup('orders', 'd', 4, NULL)").unwrap();
    conn.query_drop("START TRANSACTION").unwrap();
    conn.query_drop("CALL counter_add('orders', 5)").unwrap();
    for refused in ["CALL counter_resize('orders', 0)", "CALL counter_resize('orders', NULL)"] {
        let (code, _) = server_error(conn.query_drop(refused).unwrap_err());
        assert_eq!(code, errno::INVALID_ARGUMENT, "{refused}");
    }
    let too_long = format!("CALL counter_compact('{}')", "x".repeat(129));
    assert_eq!(server_error(conn.query_drop(&too_long).unwrap_err()).0, errno::INVALID_ARGUMENT);
    assert_eq!(total(&mut conn, "orders"), Some(5), "the caller's add is still there");
    conn.query_drop("ROLLBACK").unwrap();
    assert_eq!(total(&mut conn, "orders"), Some(0), "in a transaction still open: the caller rolls it back");
    assert_eq!(slots_of(&mut conn, "orders").len(), 4);
}

/// Resize both ways, compaction and the cluster reset, called inside the
/// caller's transaction, are part of it: rolled back with it, they leave
/// the counter as it was; committed with it, they all hold.
fn changes_inside_the_callers_transaction_commit_or_roll_back_with_it() {
    let db = support::with_committed("generated/galera");
    let mut conn = db.conn();
    conn.query_drop("CALL counter_setup('orders', 'd', 4, 3)").unwrap();
    let before = slots_of(&mut conn, "orders");
    let changes = [
        "CALL counter_add('orders', 5)",
        "CALL counter_resize('orders', 8)",
        "CALL counter_compact('orders')",
        "CALL counter_resize('orders', 2)",
    ];
    conn.query_drop("START TRANSACTION").unwrap();
    for change in changes {
        conn.query_drop(change).unwrap_or_else(|error| panic!("{change}: {error}"));
    }
    conn.query_drop("CALL counter_reset('orders', 7, FALSE)").unwrap();
    conn.query_drop("ROLLBACK").unwrap();
    assert_eq!(slots_of(&mut conn, "orders"), before, "rolled back with the caller's transaction");

    conn.query_drop("START TRANSACTION").unwrap();
    for change in changes {
        conn.query_drop(change).unwrap_or_else(|error| panic!("{change}: {error}"));
    }
    let mut other = db.conn();
    assert_eq!(slots_of(&mut other, "orders"), before, "nothing seen before the caller commits");
    conn.query_drop("COMMIT").unwrap();
    assert_eq!(total(&mut other, "orders"), Some(8), "committed with it");
    assert_eq!(slots_of(&mut other, "orders").len(), 2);
}

/// The `sql_mode` docs/operations.md says the package's routines and
/// triggers run in, as a set of modes.
const PACKAGE_SQL_MODE: [&str; 6] = [
    "ERROR_FOR_DIVISION_BY_ZERO",
    "NO_ENGINE_SUBSTITUTION",
    "NO_ZERO_DATE",
    "NO_ZERO_IN_DATE",
    "ONLY_FULL_GROUP_BY",
    "STRICT_TRANS_TABLES",
];

/// Each routine and trigger in `db` with its `sql_mode`, split into a set.
fn modes_of_routines_and_triggers(db: &Database) -> Vec<(String, Vec<String>)> {
    let modes: Vec<(String, String)> = db
        .conn()
        .exec(
            "SELECT ROUTINE_NAME, SQL_MODE FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = ? \
             UNION ALL SELECT TRIGGER_NAME, SQL_MODE FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = ? \
             ORDER BY 1",
            (db.name(), db.name()),
        )
        .unwrap();
    modes
        .into_iter()
        .map(|(name, mode)| {
            let mut modes: Vec<String> =
                mode.split(',').filter(|mode| !mode.is_empty()).map(String::from).collect();
            modes.sort();
            (name, modes)
        })
        .collect()
}

/// A routine runs in the `sql_mode` of the session that created it, and
/// is parsed in it. The package's, its probe first, are created in one
/// mode whoever installs them, from a session of no mode, of ANSI quotes
/// and literal backslashes, or (MariaDB) of Oracle's syntax, sourced by
/// the server's client or run by `install`'s script runner, which gives
/// the session its own mode back, after a refusal too.
fn every_routine_and_trigger_runs_in_one_sql_mode_whatever_the_installing_session() {
    let mut installers = vec!["", "ANSI_QUOTES,NO_BACKSLASH_ESCAPES"];
    if flavor() != Flavor::MySql {
        installers.push("ORACLE");
    }
    for installer in installers {
        for dir in ["generated", "generated/classic"] {
            let db = Database::new();
            let setup_sql = std::fs::File::open(support::committed_setup_sql(dir)).unwrap();
            let sourced = db
                .client()
                .arg(format!("--init-command=SET SESSION sql_mode = '{installer}'"))
                .stdin(setup_sql)
                .output()
                .unwrap();
            assert!(sourced.status.success(), "{dir}: {}", String::from_utf8_lossy(&sourced.stderr));
            let modes = modes_of_routines_and_triggers(&db);
            assert!(modes.len() >= 5, "{dir}: {modes:?}");
            for (name, modes) in modes {
                assert_eq!(modes, PACKAGE_SQL_MODE, "{dir}: {name} sourced from a session in '{installer}'");
            }
        }

        let db = Database::new();
        let mut conn = db.conn();
        conn.exec_drop("SET SESSION sql_mode = ?", (installer,)).unwrap();
        let own: String = conn.query_first("SELECT @@SESSION.sql_mode").unwrap().unwrap();
        let script = std::fs::read_to_string(support::committed_setup_sql("generated")).unwrap();
        slotted_counters_cli::script::run(&mut conn, &script).unwrap();
        let after: String = conn.query_first("SELECT @@SESSION.sql_mode").unwrap().unwrap();
        assert_eq!(after, own, "the installing session's own mode, back");
        for (name, modes) in modes_of_routines_and_triggers(&db) {
            assert_eq!(modes, PACKAGE_SQL_MODE, "{name} installed from a session in '{installer}'");
        }

        let refusing = Database::new();
        refusing.conn().query_drop("CREATE TABLE counter_totals (x INT)").unwrap();
        let mut conn = refusing.conn();
        conn.exec_drop("SET SESSION sql_mode = ?", (installer,)).unwrap();
        let refused =
            slotted_counters_cli::install::install(&mut conn, &script).expect_err("a clash is refused");
        assert!(refused.to_string().contains("is not the package's"), "{refused}");
        let after: String = conn.query_first("SELECT @@SESSION.sql_mode").unwrap().unwrap();
        assert_eq!(after, own, "the refused session's own mode, back");
    }
}
