//! `install`, `uninstall`, `status` and `show` against a live server, run as
//! an operator runs them: the binary, a URL, exit codes and output.

use std::process::Command;

use crate::support::{
    self, Database, Flavor, flavor, on_each_server, slotted_counters, stderr, stdout, succeeded,
};
use mysql::prelude::Queryable;

on_each_server!(
    install_creates_the_package_and_reinstall_keeps_counts,
    adding_features_to_the_classic_package_adds_their_columns_and_keeps_counts,
    a_reinstall_keeps_the_width_of_names_the_tables_hold_until_the_documented_alter_widens_them,
    install_reads_the_url_from_database_url,
    install_from_a_generated_folder,
    dry_run_prints_statements_and_runs_none,
    uninstall_keeps_data_unless_drop_data,
    status_names_missing_and_stale_routines_and_triggers,
    show_lists_counters,
    install_without_super_says_how_to_get_function_privileges,
    bad_urls_name_the_host_not_the_password,
    a_group_replication_package_installs_only_where_its_routines_can_read_the_group,
);

fn tables(db: &Database) -> Vec<String> {
    db.conn().query("SHOW TABLES").unwrap()
}

fn install_creates_the_package_and_reinstall_keeps_counts() {
    let db = Database::new();
    let url = db.url();
    let output = succeeded(slotted_counters(&["install", "--url", &url]));
    let message = stderr(&output);
    assert!(message.starts_with("installed: ") && message.trim_end().ends_with(db.name()), "{message}");
    assert_eq!(support::routines_in(&mut db.conn()), support::ROUTINES);

    let mut conn = db.conn();
    conn.query_drop("CALL counter_setup('downloads', 'd', 8, 10)").unwrap();
    conn.query_drop("CALL counter_increment('downloads')").unwrap();
    succeeded(slotted_counters(&["install", "--url", &url]));
    assert_eq!(support::total(&mut db.conn(), "downloads"), Some(11));
    conn.query_drop("CALL counter_increment('downloads')").unwrap();
    assert_eq!(support::total(&mut db.conn(), "downloads"), Some(12));

    let output = succeeded(slotted_counters(&["status", "--url", &url]));
    let report = stdout(&output);
    assert_eq!(report.matches("current").count(), support::ROUTINES.len(), "{report}");
    assert!(report.contains("counter_totals") && report.contains("view"), "{report}");
    assert!(report.contains("counters") && report.contains("present"), "{report}");
}

/// The classic package's table, with counts in it: installing the complete
/// package adds the two columns of the slots' shares (bounds) and
/// `untracked` (periods, set: the counter tracks no period), last, keeps
/// every count, and the counter can be bounded; a second install changes
/// nothing.
fn adding_features_to_the_classic_package_adds_their_columns_and_keeps_counts() {
    let db = Database::new();
    let mut conn = db.conn();
    succeeded(slotted_counters(&["install", "--url", &db.url(), "--features", "none"]));
    conn.query_drop("CALL counter_setup('stock', NULL, 2, 7)").unwrap();
    conn.query_drop("CALL counter_add('stock', 3)").unwrap();
    let columns = |conn: &mut mysql::PooledConn| -> Vec<String> {
        conn.query(
            "SELECT COLUMN_NAME FROM information_schema.COLUMNS \
             WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'counters' ORDER BY ORDINAL_POSITION",
        )
        .unwrap()
    };
    for _ in 0..2 {
        succeeded(slotted_counters(&["install", "--url", &db.url()]));
        assert_eq!(
            columns(&mut conn),
            [
                "counter_name",
                "counter_id",
                "description",
                "start_date",
                "counter",
                "lowest",
                "highest",
                "untracked"
            ]
        );
        assert_eq!(support::total(&mut conn, "stock"), Some(10));
        let untracked: Option<bool> =
            conn.query_first("SELECT MIN(untracked) FROM counters WHERE counter_name = 'stock'").unwrap();
        assert_eq!(untracked, Some(true), "a counter that tracks no period skips the look at them");
    }
    conn.query_drop("CALL counter_bound('stock', 0, NULL)").unwrap();
    let (code, _) = support::server_error(conn.query_drop("CALL counter_add('stock', -11)").unwrap_err());
    assert_eq!(code, slotted_counters_core::package::errno::PAST_BOUND);
}

/// Tables made for 50-character names (the earlier default): `install`
/// and `status` keep that width; the default `setup.sql`, for 128, is
/// refused before it changes anything; the ALTERs of operations.md widen
/// the tables with every count kept, and the next install takes a quota
/// key of 128 characters.
fn a_reinstall_keeps_the_width_of_names_the_tables_hold_until_the_documented_alter_widens_them() {
    let db = Database::new();
    let url = db.url();
    let mut conn = db.conn();
    succeeded(slotted_counters(&["install", "--url", &url, "--name-length", "50"]));
    conn.query_drop("CALL counter_setup('old', 'd', 4, 41)").unwrap();
    let package = |conn: &mut mysql::PooledConn| -> String {
        conn.query_first("SELECT counter_package()").unwrap().unwrap()
    };
    succeeded(slotted_counters(&["install", "--url", &url]));
    assert!(package(&mut conn).contains("--name-length 50 "), "{}", package(&mut conn));
    succeeded(slotted_counters(&["status", "--url", &url]));

    let script = std::fs::read_to_string(support::committed_setup_sql("generated")).unwrap();
    let refused = slotted_counters_cli::script::run(&mut conn, &script).unwrap_err().to_string();
    assert!(
        refused.contains(
            "the table `counters` holds names of 50 characters, not 128: generate with --name-length 50 \
             or widen it; nothing changed"
        ),
        "{refused}"
    );
    assert!(package(&mut conn).contains("--name-length 50 "), "the refused script changed nothing");

    let operations = std::fs::read_to_string(support::in_project("docs/operations.md")).unwrap();
    let widening = operations
        .split("<!-- widening names -->")
        .nth(1)
        .and_then(|after| after.split("```sql").nth(1))
        .and_then(|block| block.split("```").next())
        .expect("operations.md has the widening's SQL");
    for statement in widening.split(";\n").map(str::trim).filter(|statement| !statement.is_empty()) {
        conn.query_drop(statement).unwrap_or_else(|error| panic!("{statement}: {error}"));
    }
    succeeded(slotted_counters(&["install", "--url", &url]));
    assert!(package(&mut conn).contains("--name-length 128 "), "{}", package(&mut conn));
    let key = "api:3f2c9a1e-7b4d-4c8e-9f1a-2b3c4d5e6f70:day:".repeat(3);
    let key = &key[..128];
    conn.exec_drop("CALL counter_setup(?, 'd', 4, NULL)", (key,)).unwrap();
    conn.exec_drop("CALL counter_increment(?)", (key,)).unwrap();
    assert_eq!(support::total(&mut conn, key), Some(1));
    assert_eq!(support::total(&mut conn, "old"), Some(41), "the widening kept every count");
    let (code, _) =
        support::server_error(conn.exec_drop("CALL counter_increment(?)", (format!("{key}x"),)).unwrap_err());
    assert_eq!(code, slotted_counters_core::package::errno::INVALID_ARGUMENT, "129 characters");
}

fn install_reads_the_url_from_database_url() {
    let db = Database::new();
    let output = Command::new(env!("CARGO_BIN_EXE_slotted-counters-under-test"))
        .arg("install")
        .env("DATABASE_URL", db.url())
        .output()
        .unwrap();
    succeeded(output);
    assert_eq!(support::routines_in(&mut db.conn()), support::ROUTINES);
}

fn install_from_a_generated_folder() {
    let db = Database::new();
    let folder = support::in_project("generated/fixed-slots-64");
    let folder = folder.to_str().unwrap();
    succeeded(slotted_counters(&["install", "--url", &db.url(), "--from", folder]));
    let mut conn = db.conn();
    conn.query_drop("CALL counter_setup('fixed', 'd', NULL, NULL)").unwrap();
    let slots: u32 =
        conn.query_first("SELECT COUNT(*) FROM counters WHERE counter_name = 'fixed'").unwrap().unwrap();
    assert_eq!(slots, 64, "the folder's fixed-slot package was installed");

    let output = slotted_counters(&["install", "--url", &db.url(), "--from", folder, "--prefix", "x_"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("--from installs a generated folder as it is"), "{}", stderr(&output));
}

fn dry_run_prints_statements_and_runs_none() {
    let db = Database::new();
    let output =
        succeeded(slotted_counters(&["install", "--url", &db.url(), "--dry-run", "--prefix", "hits_"]));
    let listing = stdout(&output);
    assert!(listing.starts_with("-- statement 1 (line "), "{listing}");
    assert!(listing.contains("CREATE TABLE IF NOT EXISTS `counters`"), "{listing}");
    assert!(listing.contains("CREATE /*M! OR REPLACE */ FUNCTION `hits_get`"), "{listing}");
    assert!(!listing.contains("DELIMITER"), "the listing shows statements, not client directives");
    assert!(
        tables(&db).is_empty() && support::routines_in(&mut db.conn()).is_empty(),
        "a dry run changed the database"
    );

    let output = succeeded(slotted_counters(&["uninstall", "--url", &db.url(), "--dry-run", "--drop-data"]));
    assert!(stdout(&output).contains("DROP TABLE IF EXISTS `counters`;"), "{}", stdout(&output));
}

fn uninstall_keeps_data_unless_drop_data() {
    let db = Database::new();
    let url = db.url();
    succeeded(slotted_counters(&["install", "--url", &url]));
    db.conn().query_drop("CALL counter_setup('kept', 'd', NULL, 7)").unwrap();

    succeeded(slotted_counters(&["uninstall", "--url", &url]));
    assert!(support::routines_in(&mut db.conn()).is_empty());
    let kept: i64 = db
        .conn()
        .query_first("SELECT SUM(counter) FROM counters WHERE counter_name = 'kept'")
        .unwrap()
        .unwrap();
    assert_eq!(kept, 7, "uninstall kept the counts");

    succeeded(slotted_counters(&["install", "--url", &url]));
    assert_eq!(support::total(&mut db.conn(), "kept"), Some(7), "a reinstall finds the counts again");

    succeeded(slotted_counters(&["uninstall", "--url", &url, "--drop-data"]));
    assert!(support::routines_in(&mut db.conn()).is_empty());
    assert!(tables(&db).is_empty(), "--drop-data dropped the table");
}

/// `status` names what is missing, what another version made, what runs
/// broken, and a routine created again in another sql_mode.
fn status_names_missing_and_stale_routines_and_triggers() {
    let db = Database::new();
    let url = db.url();
    succeeded(slotted_counters(&["install", "--url", &url]));
    let mut conn = db.conn();
    conn.query_drop("DROP PROCEDURE counter_reset").unwrap();
    conn.query_drop("ALTER PROCEDURE counter_add COMMENT 'slotted-counters 0.0.1'").unwrap();
    conn.query_drop("DROP TRIGGER counter_apply_change").unwrap();
    conn.query_drop("DROP TRIGGER counter_slot_bound_insert").unwrap();
    conn.query_drop(
        "CREATE TRIGGER counter_slot_bound_insert BEFORE INSERT ON counters FOR EACH ROW SET NEW.counter = 0",
    )
    .unwrap();
    // The same CREATE, COMMENT included, run again from a session in
    // another sql_mode: the routine would run differently.
    let create: mysql::Row = conn.query_first("SHOW CREATE FUNCTION counter_estimate").unwrap().unwrap();
    let create: String = create.get("Create Function").unwrap();
    let trigger: mysql::Row = conn.query_first("SHOW CREATE TRIGGER counter_apply_spread").unwrap().unwrap();
    let trigger: String = trigger.get("SQL Original Statement").unwrap();
    conn.query_drop("DROP FUNCTION counter_estimate").unwrap();
    conn.query_drop("DROP TRIGGER counter_apply_spread").unwrap();
    conn.query_drop("SET SESSION sql_mode = ''").unwrap();
    conn.query_drop(create).unwrap();
    conn.query_drop(trigger).unwrap();

    let output = slotted_counters(&["status", "--url", &url]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let report = stdout(&output);
    let line = |name: &str| report.lines().find(|line| line.starts_with(name)).unwrap_or_default().to_owned();
    assert!(line("counter_reset").ends_with("missing"), "{report}");
    assert!(line("counter_add ").contains("stale (installed: slotted-counters 0.0.1)"), "{report}");
    assert!(line("counter_get").ends_with("current"), "{report}");
    for name in ["counter_estimate", "counter_apply_spread"] {
        assert!(
            line(name).contains(&format!(
                "stale (installed: created in sql_mode '', not '{}')",
                slotted_counters_core::package::ROUTINE_SQL_MODE
            )),
            "{name}: {report}"
        );
    }
    let words = |name: &str| line(name).split_whitespace().map(str::to_owned).collect::<Vec<_>>();
    assert_eq!(words("counter_apply_change"), ["counter_apply_change", "trigger", "missing"], "{report}");
    assert!(
        line("counter_compact").contains("broken: Column 'counter_name' cannot be null"),
        "its trigger is gone: {report}"
    );
    assert!(
        line("counter_slot_bound_insert").contains("stale (installed: another version's body)"),
        "{report}"
    );
    for present in ["counter_slot_bound_update", "counter_apply_write", "counter_writes", "counter_changes"] {
        assert!(line(present).ends_with("present"), "{present}: {report}");
    }
    let message = stderr(&output);
    assert!(
        message.contains("counter_add, counter_reset")
            && message.contains("counter_slot_bound_insert, counter_apply_change")
            && message.contains("slotted-counters install"),
        "{message}"
    );

    // For a package with other options, a routine is stale exactly when
    // that package's CREATE statement for it is another: its COMMENT is a
    // digest of the statement, not the version and every option.
    let output = slotted_counters(&["status", "--url", &url, "--fixed-slots", "64"]);
    assert_eq!(output.status.code(), Some(1));
    let report = stdout(&output);
    let creates = |dir: &str| std::fs::read_to_string(support::committed_setup_sql(dir)).unwrap();
    let (installed, asked) = (creates("generated"), creates("generated/fixed-slots-64"));
    let mut current = Vec::new();
    for name in
        support::ROUTINES.into_iter().filter(|name| !["counter_reset", "counter_resize"].contains(name))
    {
        let line = report.lines().find(|line| line.starts_with(&format!("{name} "))).unwrap();
        let same = routine_statement(&installed, name) == routine_statement(&asked, name);
        assert_eq!(line.contains("stale"), !same, "{line}");
        if same {
            current.push(name);
        }
    }
    assert!(current.contains(&"counter_name_problem"), "the name check is the same: {current:?}");
    assert!(!current.contains(&"counter_add"), "the slot count reaches the increment: {current:?}");
}

/// The CREATE statement of routine `name` in a `setup.sql`, without its
/// COMMENT line.
fn routine_statement(setup: &str, name: &str) -> String {
    let created = format!("`{name}`(");
    let lines: Vec<&str> =
        setup.lines().skip_while(|line| !(line.starts_with("CREATE") && line.contains(&created))).collect();
    let end =
        lines.iter().position(|line| line.contains("$$")).unwrap_or_else(|| panic!("{name} is created"));
    lines[..=end].iter().filter(|line| !line.starts_with("COMMENT '")).copied().collect::<Vec<_>>().join("\n")
}

fn show_lists_counters() {
    let db = Database::new();
    let url = db.url();
    succeeded(slotted_counters(&["install", "--url", &url]));
    let mut conn = db.conn();
    conn.query_drop("CALL counter_setup('page', 'front page views', 4, 100)").unwrap();
    conn.query_drop("CALL counter_setup('likes', NULL, 2, NULL)").unwrap();
    conn.query_drop("CALL counter_add('likes', 3)").unwrap();

    let report = stdout(&succeeded(slotted_counters(&["show", "--url", &url])));
    let lines: Vec<Vec<&str>> = report.lines().map(|line| line.split_whitespace().collect()).collect();
    assert_eq!(lines[0], ["name", "slots", "total", "start", "date", "description"]);
    assert_eq!(lines[1][..3], ["likes", "2", "3"]);
    assert_eq!(lines[2][..3], ["page", "4", "100"]);
    assert_eq!(lines[2][5..], ["front", "page", "views"]);
    assert_eq!(lines.len(), 3);

    // Names compare as written under the default collation.
    let output = slotted_counters(&["show", "--url", &url, "PAGE"]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stderr(&output).trim(), "error: unknown counter: PAGE");

    let output = slotted_counters(&["show", "--url", &url, "page", "nope"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stdout(&output).contains("page"));
    assert_eq!(stderr(&output).trim(), "error: unknown counter: nope");
}

fn install_without_super_says_how_to_get_function_privileges() {
    let db = Database::new();
    let (log_bin, trusted): (u8, u8) =
        db.conn().query_first("SELECT @@log_bin, @@log_bin_trust_function_creators").unwrap().unwrap();
    assert_eq!(
        (log_bin, trusted),
        (1, 0),
        "this test needs a server with binary logging on and log_bin_trust_function_creators off"
    );
    let app = db.unprivileged_user();

    let output = slotted_counters(&["install", "--url", &app]);
    assert_eq!(output.status.code(), Some(1));
    let message = stderr(&output);
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(message.contains("CREATE FUNCTION") && message.contains("1419"), "{message}");
    assert!(message.contains("log_bin_trust_function_creators=1"), "{message}");
    assert!(!message.contains("app-password"), "{message}");
    assert!(
        tables(&db).is_empty() && support::routines_in(&mut db.conn()).is_empty(),
        "a refused install changed nothing"
    );

    // With the package installed by a privileged account, the same user
    // can use it, and a refused reinstall leaves it working.
    succeeded(slotted_counters(&["install", "--url", &db.url()]));
    assert_eq!(slotted_counters(&["install", "--url", &app]).status.code(), Some(1));
    assert_eq!(support::routines_in(&mut db.conn()), support::ROUTINES);
}

fn bad_urls_name_the_host_not_the_password() {
    let db = Database::new();
    let wrong_password = db.url_as("slotted", "Wrong-Secret-1");
    let cases = [
        ("not a url", "invalid database URL"),
        ("mysql://someone:Hidden-Secret-2@127.0.0.1:1/app", "cannot connect to someone@127.0.0.1:1/app"),
        (wrong_password.as_str(), "Access denied"),
        ("mysql://someone:Hidden-Secret-3@127.0.0.1:3306", "names no database"),
    ];
    for (url, expected) in cases {
        for command in ["install", "status", "show"] {
            let output = slotted_counters(&[command, "--url", url]);
            let message = stderr(&output);
            assert_eq!(output.status.code(), Some(1), "{command} {url}: {message}");
            assert_eq!(message.lines().count(), 1, "{command} {url}: {message}");
            assert!(message.contains(expected), "{command} {url}: {message}");
            assert!(!message.contains("Secret"), "{command} {url} shows the password: {message}");
            assert!(!message.contains("Error {"), "{command} {url}: a debug dump, not a sentence: {message}");
        }
    }
}

/// MariaDB has no `performance_schema.replication_group_members`: both ways
/// of installing the Group Replication package stop before changing
/// anything, the command with a sentence that names the way out. MySQL has
/// it in or out of a group: a server in no group is its only member, whose
/// increments take every slot.
fn a_group_replication_package_installs_only_where_its_routines_can_read_the_group() {
    let db = Database::new();
    let url = db.url();
    let install = slotted_counters(&["install", "--url", &url, "--cluster", "group-replication"]);
    let folder = support::in_project("generated/group-replication");
    let setup_sql = std::fs::File::open(folder.join("setup.sql")).unwrap();
    let by_client = db.client().stdin(setup_sql).output().unwrap();
    match flavor() {
        Flavor::MariaDb => {
            for output in [&install, &by_client] {
                assert!(!output.status.success(), "{}", stderr(output));
            }
            let message = stderr(&install);
            assert!(
                message.contains("made for MySQL Group Replication")
                    && message.contains("performance_schema.replication_group_members")
                    && message.contains("--cluster galera")
                    && message.contains("nothing was installed"),
                "{message}"
            );
            assert!(stderr(&by_client).contains("replication_group_members"), "{}", stderr(&by_client));
            assert!(tables(&db).is_empty() && support::routines_in(&mut db.conn()).is_empty());
        }
        Flavor::MySql => {
            succeeded(install);
            succeeded(by_client);
            let mut conn = db.conn();
            conn.query_drop("CALL counter_setup('alone', 'd', 4, NULL)").unwrap();
            for _ in 0..200 {
                conn.query_drop("CALL counter_increment('alone')").unwrap();
            }
            let slots: Vec<(u32, i64)> =
                conn.query("SELECT counter_id, counter FROM counters WHERE counter_name = 'alone'").unwrap();
            assert!(slots.iter().all(|&(_, count)| count > 0), "position 1 of 1 owns every slot: {slots:?}");
            assert_eq!(support::total(&mut conn, "alone"), Some(200));
            // A shrink waits for the group only where the plugin is loaded.
            conn.query_drop("CALL counter_resize('alone', 2)").unwrap();
            assert_eq!(support::total(&mut conn, "alone"), Some(200));
        }
    }
}
