//! The package beside what is not its own: an install or uninstall that
//! meets an object of one of the package's names that another application
//! made changes nothing; an upgrade keeps the accounts' grants on the
//! routines; an uninstall says what it leaves.

use std::process::{Command, Output, Stdio};

use mysql::prelude::Queryable;
use mysql::{Conn, Opts};

use crate::support::{
    self, Database, committed_setup_sql, on_each_server, server_error, slotted_counters, stderr, succeeded,
};

on_each_server!(
    an_install_over_another_applications_counters_table_changes_nothing,
    an_install_over_another_applications_totals_view_changes_nothing,
    an_install_or_uninstall_beside_a_routine_or_trigger_of_the_packages_names_changes_nothing,
    an_upgrade_keeps_what_the_application_account_may_call,
    uninstall_revokes_the_grants_and_names_the_tables_and_events_it_leaves,
);

/// Everything the database holds, as text: tables and views with their
/// columns, each view's definition, routines with their definitions,
/// triggers with their bodies.
fn schema(db: &Database) -> Vec<String> {
    let mut conn = db.conn();
    let mut schema: Vec<String> = Vec::new();
    for sql in [
        "SELECT CONCAT_WS(' ', 'relation', TABLE_NAME, TABLE_TYPE) FROM information_schema.TABLES \
         WHERE TABLE_SCHEMA = DATABASE()",
        "SELECT CONCAT_WS(' ', 'column', TABLE_NAME, ORDINAL_POSITION, COLUMN_NAME, COLUMN_TYPE) \
         FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE()",
        "SELECT CONCAT_WS(' ', 'view', TABLE_NAME, VIEW_DEFINITION) FROM information_schema.VIEWS \
         WHERE TABLE_SCHEMA = DATABASE()",
        "SELECT CONCAT_WS(' ', 'routine', ROUTINE_TYPE, ROUTINE_NAME, ROUTINE_DEFINITION) \
         FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE()",
        "SELECT CONCAT_WS(' ', 'trigger', TRIGGER_NAME, EVENT_OBJECT_TABLE, ACTION_STATEMENT) \
         FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE()",
    ] {
        schema.extend(conn.query::<String, _>(sql).unwrap());
    }
    schema.sort();
    schema
}

/// Sources the default `setup.sql` with the server's command-line client;
/// its output.
fn source_setup_sql(client: &mut Command) -> Output {
    let mut child =
        client.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let setup_sql = std::fs::read(committed_setup_sql("generated")).unwrap();
    // A client that stops at an error stops reading its input too.
    if let Err(error) = std::io::Write::write_all(child.stdin.as_mut().unwrap(), &setup_sql) {
        assert_eq!(error.kind(), std::io::ErrorKind::BrokenPipe, "{error}");
    }
    drop(child.stdin.take());
    child.wait_with_output().unwrap()
}

/// `install` refuses, naming `object` and the option that names it; a DBA's
/// `setup.sql` stops at the same check; and the database holds what it
/// held before, but for the check's function that `setup.sql` leaves (and
/// names).
fn check_refused(db: &Database, object: &str, option: &str) {
    let before = schema(db);
    let output = slotted_counters(&["install", "--url", &db.url()]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(
        message.contains("install refused, nothing was changed")
            && message.contains(&format!("{object} ({option}) is not the package's")),
        "{message}"
    );
    assert_eq!(schema(db), before, "install changed nothing");

    let sourced = source_setup_sql(&mut db.client());
    assert!(!sourced.status.success(), "setup.sql stops");
    let message = String::from_utf8_lossy(&sourced.stderr);
    assert!(
        message.contains("ERROR 9005")
            && message.contains(&format!("{object} ({option}) is not the package's"))
            && message.contains("nothing changed but `counter_install_probe` left"),
        "{message}"
    );
    let mut after = schema(db);
    after.retain(|line| !line.starts_with("routine FUNCTION counter_install_probe "));
    assert_eq!(after, before, "setup.sql changed nothing but the function it names");
    assert!(
        schema(db).iter().any(|line| line.starts_with("routine FUNCTION counter_install_probe ")),
        "the function the message names is there"
    );
}

/// A table of another application's named `counters`: `setup.sql` used to
/// add the bound's columns to it, and fail further on with no routine left.
fn an_install_over_another_applications_counters_table_changes_nothing() {
    let db = Database::new();
    db.conn().query_drop("CREATE TABLE counters (id INT PRIMARY KEY, hits INT)").unwrap();
    db.conn().query_drop("INSERT INTO counters VALUES (1, 41)").unwrap();
    check_refused(&db, "table `counters`", "--table");
    let hits: Option<i64> = db.conn().query_first("SELECT hits FROM counters WHERE id = 1").unwrap();
    assert_eq!(hits, Some(41));

    let other = ["install", "--url", &db.url(), "--table", "page_counters"];
    succeeded(slotted_counters(&other));
    let mut conn = db.conn();
    conn.query_drop("CALL counter_setup('hits', 'd', 4, 1)").unwrap();
    assert_eq!(support::total(&mut conn, "hits"), Some(1), "the package under another --table");
}

/// A view of another application's named `counter_totals`, and no table
/// `counters`: `setup.sql` used to replace its definition and exit 0.
fn an_install_over_another_applications_totals_view_changes_nothing() {
    let db = Database::new();
    let mut conn = db.conn();
    conn.query_drop("CREATE TABLE sales (region VARCHAR(10), amount INT)").unwrap();
    conn.query_drop(
        "CREATE VIEW counter_totals AS SELECT region, SUM(amount) AS total FROM sales GROUP BY region",
    )
    .unwrap();
    check_refused(&db, "view `counter_totals`", "--prefix");
}

/// A function `counter_get` of another application's, and a trigger
/// `counter_apply_write` on one of its tables: an install refuses to
/// replace either, and so does an uninstall to drop them.
fn an_install_or_uninstall_beside_a_routine_or_trigger_of_the_packages_names_changes_nothing() {
    let db = Database::new();
    let mut conn = db.conn();
    conn.query_drop("CREATE FUNCTION counter_get(p_name VARCHAR(10)) RETURNS INT NO SQL RETURN 7").unwrap();
    check_refused(&db, "function `counter_get`", "--prefix");
    db.conn().query_drop("DROP FUNCTION counter_install_probe").unwrap();
    let before = schema(&db);
    let output = slotted_counters(&["uninstall", "--url", &db.url()]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains("function `counter_get` (--prefix) is not the package's"));
    assert_eq!(schema(&db), before, "uninstall dropped nothing");

    let db = Database::new();
    let mut conn = db.conn();
    conn.query_drop("CREATE TABLE orders (id INT PRIMARY KEY, placed DATETIME)").unwrap();
    conn.query_drop(
        "CREATE TRIGGER counter_apply_write BEFORE INSERT ON orders FOR EACH ROW SET NEW.placed = NOW()",
    )
    .unwrap();
    check_refused(&db, "trigger `counter_apply_write`", "--prefix");
}

/// The application routines as an application account calls them, each
/// refusing its NULL arguments with one of the package's errors or
/// answering NULL: the call ran, so the account may call it.
const APPLICATION_CALLS: [&str; 15] = [
    "CALL counter_add(NULL, NULL)",
    "CALL counter_increment(NULL)",
    "CALL counter_add_many(NULL)",
    "SELECT counter_get(NULL)",
    "SELECT counter_estimate(NULL)",
    "CALL counter_add_once(NULL, NULL, NULL)",
    "CALL counter_add_many_once(NULL, NULL)",
    "CALL counter_forget_writes(600)",
    "CALL counter_add_at(NULL, NULL, NULL)",
    "CALL counter_add_many_at(NULL, NULL, NULL)",
    "SELECT counter_get_period(NULL, NULL, NULL)",
    "SELECT counter_get_range(NULL, NULL, NULL, NULL)",
    "CALL counter_series(NULL, NULL, NULL, NULL)",
    "CALL counter_expire_periods()",
    "SELECT counter_package()",
];

/// Each of [`APPLICATION_CALLS`] as the account `url` names: Ok, or the
/// number of the server's refusal.
fn calls_as(url: &str) -> Vec<(&'static str, Result<(), u16>)> {
    let mut conn = Conn::new(Opts::from_url(url).unwrap()).unwrap();
    APPLICATION_CALLS
        .iter()
        .map(|&call| {
            let outcome = match conn.query::<mysql::Row, _>(call) {
                Ok(_) => Ok(()),
                Err(error) => match server_error(error) {
                    (9001..=9004, _) => Ok(()),
                    (code, _) => Err(code),
                },
            };
            (call, outcome)
        })
        .collect()
}

/// On MySQL a re-install drops each routine, which revokes the grants on
/// it: `setup.sql` grants again what each account held, right after it
/// creates the routine, as `install` (which runs it) does. MariaDB keeps
/// the grants. Either way the application account calls after an upgrade
/// every routine it could before, and still nothing else.
fn an_upgrade_keeps_what_the_application_account_may_call() {
    let db = Database::new();
    let app = db.account("counting", &[]);
    succeeded(slotted_counters(&["install", "--url", &db.url(), "--app-user", &app.spec]));
    let before = calls_as(&app.url);
    assert!(before.iter().all(|(_, outcome)| outcome.is_ok()), "{before:?}");

    let sourced = source_setup_sql(&mut db.client());
    assert!(sourced.status.success(), "{}", String::from_utf8_lossy(&sourced.stderr));
    assert_eq!(calls_as(&app.url), before, "after setup.sql");
    succeeded(slotted_counters(&["install", "--url", &db.url()]));
    assert_eq!(calls_as(&app.url), before, "after install without --app-user");

    let mut conn = Conn::new(Opts::from_url(&app.url).unwrap()).unwrap();
    let (code, message) = server_error(conn.query_drop("CALL counter_delete('x')").unwrap_err());
    assert_eq!(code, 1370, "still no administrator's routine: {message}");
}

/// `uninstall` revokes every grant on the package's routines and view,
/// says which tables it keeps and which events still call the package;
/// with `--drop-data` it drops every table of the package.
fn uninstall_revokes_the_grants_and_names_the_tables_and_events_it_leaves() {
    let db = Database::new();
    let app = db.account("counting", &[]);
    succeeded(slotted_counters(&["install", "--url", &db.url(), "--app-user", &app.spec]));
    db.conn()
        .query_drop(
            "CREATE EVENT counter_forget_writes_every_minute ON SCHEDULE EVERY 1 MINUTE \
             DISABLE DO CALL counter_forget_writes(600)",
        )
        .unwrap();

    let output = succeeded(slotted_counters(&["uninstall", "--url", &db.url()]));
    let report = stderr(&output);
    assert!(
        report.contains(&format!("revoked: REVOKE SELECT ON `counter_totals` FROM {}", app.quoted)),
        "{report}"
    );
    assert!(
        report.contains(&format!("revoked: REVOKE EXECUTE ON PROCEDURE `counter_add` FROM {}", app.quoted))
            || support::flavor() == support::Flavor::MySql,
        "MariaDB keeps a dropped routine's grants, so uninstall revokes them: {report}"
    );
    let grants: Vec<String> = db.conn().query(format!("SHOW GRANTS FOR {}", app.quoted)).unwrap();
    assert_eq!(grants.len(), 1, "only USAGE is left: {grants:?}");
    let tables = [
        "counters",
        "counter_writes",
        "counter_changes",
        "counter_periods",
        "counter_buckets",
        "counter_tracked_writes",
        "counter_spreads",
    ];
    let kept: Vec<String> = tables.iter().map(|table| format!("`{table}`")).collect();
    assert!(report.contains(&format!("kept, with every count: {}", kept.join(", "))), "{report}");
    assert!(
        report.contains("event `counter_forget_writes_every_minute` calls the package's routines"),
        "{report}"
    );
    let uninstall_sql = std::fs::read_to_string(support::in_project("generated/uninstall.sql")).unwrap();
    for table in tables {
        assert!(
            uninstall_sql.contains(&format!("--   DROP TABLE `{table}`;")),
            "uninstall.sql names {table}"
        );
    }

    succeeded(slotted_counters(&["uninstall", "--url", &db.url(), "--drop-data"]));
    let left: Vec<String> = db.conn().query("SHOW TABLES").unwrap();
    assert!(left.is_empty(), "--drop-data drops every table: {left:?}");
}
