//! Accounts with least privilege: `install --app-user`, and what `status`
//! tells an account that cannot see everything or a package whose definer
//! is gone.

use mysql::prelude::Queryable;
use mysql::{Conn, Opts};
use slotted_counters::Counters;

use crate::support::schema::Schema;
use crate::support::{
    self, Account, Database, Flavor, flavor, on_each_server, server_error, slotted_counters, stderr, stdout,
    succeeded,
};

on_each_server!(
    an_app_user_counts_and_reads_and_nothing_else,
    an_unknown_app_user_is_one_line_and_installs_nothing,
    status_fails_naming_the_definer_when_it_was_dropped,
    status_tells_a_restricted_account_what_it_cannot_see,
    status_checks_every_committed_package_without_changing_it,
    a_reinstall_never_loses_an_applications_routine_grants,
    a_reinstall_that_could_not_give_grants_back_changes_nothing,
    the_documented_installer_grants_are_enough_and_each_is_needed,
);

fn conn_as(url: &str) -> Conn {
    Conn::new(Opts::from_url(url).unwrap()).unwrap()
}

fn an_app_user_counts_and_reads_and_nothing_else() {
    let db = Database::new();
    let app = db.account("counting", &[]);
    let output = succeeded(slotted_counters(&["install", "--url", &db.url(), "--app-user", &app.spec]));
    assert!(
        stderr(&output).contains(&format!("granted counting and reading to {}", app.quoted)),
        "{}",
        stderr(&output)
    );
    db.conn().query_drop("CALL counter_setup('hits', 'd', 4, 10)").unwrap();

    let mut conn = conn_as(&app.url);
    conn.query_drop("CALL counter_increment('hits')").unwrap();
    conn.query_drop("CALL counter_add('hits', 4)").unwrap();
    let read: (Option<i64>, Option<i64>) =
        conn.query_first("SELECT counter_get('hits'), counter_estimate('hits')").unwrap().unwrap();
    assert_eq!(read.0, Some(15));
    assert!(read.1.is_some(), "estimate reads too");
    let total: Option<i64> =
        conn.query_first("SELECT total FROM counter_totals WHERE counter_name = 'hits'").unwrap();
    assert_eq!(total, Some(15));
    db.conn()
        .query_drop("CALL counter_setup('quota', 'd', 2, NULL); CALL counter_limit('quota', 'day', 5)")
        .unwrap();
    conn.query_drop("CALL counter_add('quota', 2)").unwrap();
    let rooms: Vec<(String, String, i64)> =
        conn.query("SELECT counter_name, kind, room FROM counter_rooms").unwrap();
    assert_eq!(rooms, [("quota".to_owned(), "limit".to_owned(), 3)], "a dashboard reads the room");
    let counters = Counters::new(mysql::Pool::new(app.url.as_str()).unwrap()).unwrap();
    counters.increment("hits").unwrap();
    assert_eq!(counters.get("hits").unwrap(), Some(16));
    // A flush tries the table first, is refused it, and calls the routine.
    let coalescing = counters.coalescing();
    coalescing.add("hits", 3).unwrap();
    coalescing.add("hits", 1).unwrap();
    assert_eq!(counters.get("hits").unwrap(), Some(20));

    for call in [
        "CALL counter_setup('other', 'd', NULL, NULL)",
        "CALL counter_reset('hits', 0, 1)",
        "CALL counter_resize('hits', 2)",
        "CALL counter_compact('hits')",
        "CALL counter_delete('hits')",
    ] {
        let (code, message) = server_error(conn.query_drop(call).unwrap_err());
        assert_eq!(code, 1370, "{call}: {message}");
    }
    for statement in [
        "UPDATE counters SET counter = 0",
        "DELETE FROM counters",
        "INSERT INTO counters (counter_name, counter_id) VALUES ('x', 1)",
        "SELECT COUNT(*) FROM counters",
    ] {
        let (code, message) = server_error(conn.query_drop(statement).unwrap_err());
        assert_eq!(code, 1142, "{statement}: {message}");
    }
    assert_eq!(support::total(&mut db.conn(), "hits"), Some(20), "nothing refused changed a count");
}

fn an_unknown_app_user_is_one_line_and_installs_nothing() {
    let db = Database::new();
    let app = db.account("known", &[]);
    let output = slotted_counters(&[
        "install",
        "--url",
        &db.url(),
        "--app-user",
        &app.spec,
        "--app-user",
        "nobody@localhost",
    ]);
    assert_eq!(output.status.code(), Some(1));
    let message = stderr(&output);
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(message.contains("no such account: 'nobody'@'localhost'"), "{message}");
    assert!(!message.contains(&app.quoted), "only the unknown account is named: {message}");
    assert!(support::routines_in(&mut db.conn()).is_empty(), "nothing was installed");
    let grants: Vec<String> = db.conn().query(format!("SHOW GRANTS FOR {}", app.quoted)).unwrap();
    assert_eq!(grants.len(), 1, "the known account got nothing either: {grants:?}");

    let output = slotted_counters(&["install", "--url", &db.url(), "--app-user", "app@"]);
    assert_eq!(output.status.code(), Some(2), "a malformed account is bad usage");
    assert!(stderr(&output).contains("--app-user \"app@\""), "{}", stderr(&output));
}

#[test]
fn dry_run_prints_the_grants_of_the_package_it_would_install() {
    let expected = |prefix: &str| {
        [
            format!("GRANT EXECUTE ON PROCEDURE `{prefix}add` TO 'app'@'10.0.0.%';"),
            format!("GRANT EXECUTE ON PROCEDURE `{prefix}increment` TO 'app'@'10.0.0.%';"),
            format!("GRANT EXECUTE ON PROCEDURE `{prefix}add_many` TO 'app'@'10.0.0.%';"),
            format!("GRANT EXECUTE ON FUNCTION `{prefix}get` TO 'app'@'10.0.0.%';"),
            format!("GRANT EXECUTE ON FUNCTION `{prefix}estimate` TO 'app'@'10.0.0.%';"),
            format!("GRANT EXECUTE ON PROCEDURE `{prefix}add_once` TO 'app'@'10.0.0.%';"),
            format!("GRANT EXECUTE ON PROCEDURE `{prefix}add_many_once` TO 'app'@'10.0.0.%';"),
            format!("GRANT EXECUTE ON PROCEDURE `{prefix}forget_writes` TO 'app'@'10.0.0.%';"),
            format!("GRANT EXECUTE ON PROCEDURE `{prefix}add_at` TO 'app'@'10.0.0.%';"),
            format!("GRANT EXECUTE ON PROCEDURE `{prefix}add_many_at` TO 'app'@'10.0.0.%';"),
            format!("GRANT EXECUTE ON FUNCTION `{prefix}get_period` TO 'app'@'10.0.0.%';"),
            format!("GRANT EXECUTE ON FUNCTION `{prefix}get_range` TO 'app'@'10.0.0.%';"),
            format!("GRANT EXECUTE ON FUNCTION `{prefix}utc_offset` TO 'app'@'10.0.0.%';"),
            format!("GRANT EXECUTE ON PROCEDURE `{prefix}series` TO 'app'@'10.0.0.%';"),
            format!("GRANT EXECUTE ON PROCEDURE `{prefix}expire_periods` TO 'app'@'10.0.0.%';"),
            format!("GRANT EXECUTE ON PROCEDURE `{prefix}room` TO 'app'@'10.0.0.%';"),
            format!("GRANT EXECUTE ON FUNCTION `{prefix}package` TO 'app'@'10.0.0.%';"),
            format!("GRANT SELECT ON `{prefix}totals` TO 'app'@'10.0.0.%';"),
            format!("GRANT SELECT ON `{prefix}rooms` TO 'app'@'10.0.0.%';"),
        ]
    };
    let url = "mysql://nobody@127.0.0.1:1/app";
    let rendered = stdout(&succeeded(slotted_counters(&[
        "install",
        "--url",
        url,
        "--dry-run",
        "--app-user",
        "app@10.0.0.%",
        "--prefix",
        "hits_",
    ])));
    let folder = support::in_project("generated/fixed-slots-64");
    let folder = folder.to_str().unwrap();
    let committed = stdout(&succeeded(slotted_counters(&[
        "install",
        "--url",
        url,
        "--dry-run",
        "--app-user",
        "app@10.0.0.%",
        "--from",
        folder,
    ])));
    for (listing, prefix) in [(rendered, "hits_"), (committed, "counter_")] {
        let grants: Vec<&str> = listing.lines().filter(|line| line.starts_with("GRANT")).collect();
        assert_eq!(grants, expected(prefix), "{listing}");
    }
}

/// The report line of one object.
fn line<'a>(report: &'a str, name: &str) -> &'a str {
    report.lines().find(|line| line.split_whitespace().next() == Some(name)).unwrap_or_default()
}

fn status_fails_naming_the_definer_when_it_was_dropped() {
    let db = Database::new();
    let installer = db.account("installer", &["ALL ON *.*"]);
    succeeded(slotted_counters(&["install", "--url", &installer.url]));
    db.conn().query_drop("CALL counter_setup('kept', 'd', 4, 42)").unwrap();
    succeeded(slotted_counters(&["status", "--url", &db.url()]));

    db.conn().query_drop(format!("DROP USER {}", installer.quoted)).unwrap();
    let output = slotted_counters(&["status", "--url", &db.url()]);
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    let (report, message) = (stdout(&output), stderr(&output));
    for name in support::ROUTINES.into_iter().chain(["counter_totals", "counter_rooms"]) {
        assert!(line(&report, name).contains("broken: "), "{name}: {report}");
    }
    assert!(line(&report, "counters").ends_with("present"), "{report}");
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(message.contains(&format!("definer ({})", installer.quoted)), "names the definer: {message}");
    assert!(message.contains("reinstall") && message.contains("slotted-counters install"), "{message}");

    succeeded(slotted_counters(&["install", "--url", &db.url()]));
    succeeded(slotted_counters(&["status", "--url", &db.url()]));
    assert_eq!(support::total(&mut db.conn(), "kept"), Some(42), "the way out keeps the counts");
}

fn status_tells_a_restricted_account_what_it_cannot_see() {
    let db = Database::new();
    let executor = db.account("executor", &["EXECUTE ON {db}.*"]);
    let app = db.account("counting", &[]);
    succeeded(slotted_counters(&["install", "--url", &db.url(), "--app-user", &app.spec]));

    let output = slotted_counters(&["status", "--url", &executor.url]);
    assert_eq!(output.status.code(), Some(1));
    let (report, message) = (stdout(&output), stderr(&output));
    for name in support::ROUTINES {
        assert!(line(&report, name).ends_with("current"), "{name}: {report}");
    }
    for name in [
        "counter_totals",
        "counter_rooms",
        "counters",
        "counter_writes",
        "counter_changes",
        "counter_periods",
        "counter_buckets",
    ] {
        assert!(
            line(&report, name).ends_with("not visible to this account (needs SELECT)"),
            "{name}: {report}"
        );
    }
    for name in [
        "counter_slot_bound_insert",
        "counter_slot_bound_update",
        "counter_apply_write",
        "counter_apply_change",
        "counter_apply_tracked_write",
    ] {
        assert!(
            line(&report, name).ends_with("not visible to this account (needs TRIGGER)"),
            "{name}: {report}"
        );
    }
    assert!(
        !report.contains("missing") && !message.contains("install`"),
        "nothing is called missing: {message}"
    );
    assert!(
        message.contains("cannot check with this account: view counter_totals (needs SELECT), view counter_rooms (needs SELECT), table counters (needs SELECT)"),
        "{message}"
    );

    let report = stdout(&slotted_counters(&["status", "--url", &app.url]));
    for name in ["counter_add", "counter_increment", "counter_get", "counter_estimate"] {
        assert!(line(&report, name).ends_with("current"), "{name}: {report}");
    }
    for name in ["counter_setup", "counter_reset", "counter_resize", "counter_compact", "counter_delete"] {
        assert!(
            line(&report, name).ends_with("not visible to this account (needs EXECUTE)"),
            "{name}: {report}"
        );
    }
    assert!(line(&report, "counter_totals").ends_with("present"), "{report}");
    assert!(line(&report, "counter_rooms").ends_with("present"), "{report}");
    assert!(line(&report, "counters").ends_with("not visible to this account (needs SELECT)"), "{report}");
}

/// `status` calls every routine to see that it runs: the calls must change
/// nothing, in every committed package.
fn status_checks_every_committed_package_without_changing_it() {
    for (dir, flags) in support::committed_here() {
        let db = support::with_committed(dir);
        db.conn().query_drop("CALL counter_setup('kept', 'd', NULL, 7)").unwrap();
        let before = support::table(&mut db.conn());
        let url = db.url();
        let mut args = vec!["status", "--url", &url];
        args.extend_from_slice(flags);
        let report = stdout(&succeeded(slotted_counters(&args)));
        assert!(!report.contains("broken") && !report.contains("missing"), "{dir}: {report}");
        assert_eq!(support::table(&mut db.conn()), before, "{dir}: status changed the table");
    }
}

/// An installer with every privilege on the application's database and
/// none on `mysql.*`, as DBAs give installers (and SUPER, for functions
/// under binary logging). MySQL revokes a routine's grants when a
/// re-install drops it, and this account cannot read them to grant them
/// again: it installs where no routine is, and refuses to replace them,
/// through `install` and the command-line client alike, changing nothing.
/// Once it may read `mysql.procs_priv` it re-installs, and the
/// application keeps its grant. MariaDB keeps grants across a re-install.
fn a_reinstall_never_loses_an_applications_routine_grants() {
    let db = Database::new();
    let installer = db.account("installer", &["SUPER ON *.*"]);
    db.conn()
        .query_drop(format!("GRANT ALL ON `{}`.* TO {} WITH GRANT OPTION", db.name(), installer.quoted))
        .unwrap();
    succeeded(slotted_counters(&["install", "--url", &installer.url]));
    db.conn().query_drop("CALL counter_setup('hits', 'd', 4, NULL)").unwrap();
    let app = db.account("app", &["EXECUTE ON PROCEDURE {db}.`counter_increment`"]);
    let increment = || conn_as(&app.url).query_drop("CALL counter_increment('hits')");
    increment().unwrap();
    let reinstall = || {
        let setup_sql = std::fs::File::open(support::committed_setup_sql("generated")).unwrap();
        let by_client = db.client_as(&installer.url).stdin(setup_sql).output().unwrap();
        (slotted_counters(&["install", "--url", &installer.url]), by_client)
    };

    if flavor() == Flavor::MySql {
        let before = Schema::read(&mut db.conn(), db.name()).unwrap();
        let (by_install, by_client) = reinstall();
        for output in [&by_install, &by_client] {
            assert!(!output.status.success(), "a re-install that would lose the grants is refused");
            assert!(stderr(output).contains("cannot read mysql.procs_priv"), "{}", stderr(output));
        }
        // The client's refusal leaves the probe; `install`'s, run next,
        // drops it.
        let after = Schema::read(&mut db.conn(), db.name()).unwrap();
        assert_eq!(before.changes_to(&after), Vec::<String>::new(), "nothing changed");
        increment().unwrap();
        db.conn().query_drop(format!("GRANT SELECT ON mysql.procs_priv TO {}", installer.quoted)).unwrap();
    }
    let (by_install, by_client) = reinstall();
    succeeded(by_install);
    succeeded(by_client);
    increment().expect("the application's grant outlives the re-installs");
    assert_eq!(support::total(&mut db.conn(), "hits"), Some(if flavor() == Flavor::MySql { 3 } else { 2 }));
}

/// On MySQL a re-install drops each routine, which revokes its grants,
/// and gives them back. An account that holds every documented grant but
/// GRANT OPTION cannot give them back: sourcing the package stops before
/// it drops anything, every grant (the application's, and the first
/// installer's own on the routines it made) and every object as they were
/// but for the procedure that gives grants back, left for the next
/// install to drop. MariaDB keeps grants, and re-installs.
fn a_reinstall_that_could_not_give_grants_back_changes_nothing() {
    let db = Database::new();
    let grants = installer_grants();
    let first = db.account("first", &grants);
    succeeded(slotted_counters(&["install", "--url", &first.url, "--features", "none"]));
    db.conn().query_drop("CALL counter_setup('hits', 'd', 4, NULL)").unwrap();
    let app = db.account("app", &["EXECUTE ON PROCEDURE {db}.`counter_increment`"]);
    let no_grant_option: Vec<&str> =
        grants.iter().filter(|grant| !grant.starts_with("GRANT OPTION")).copied().collect();
    let second = db.account("second", &no_grant_option);
    let before = Schema::read(&mut db.conn(), db.name()).unwrap();
    let setup_sql = std::fs::File::open(support::committed_setup_sql("generated")).unwrap();
    let sourced = db.client_as(&second.url).stdin(setup_sql).output().unwrap();
    if flavor() == Flavor::MySql {
        assert!(!sourced.status.success(), "a re-install that cannot give the grants back goes on");
        assert!(stderr(&sourced).contains("grant command denied"), "{}", stderr(&sourced));
        let after = Schema::read(&mut db.conn(), db.name()).unwrap();
        let (left, changed): (Vec<String>, Vec<String>) =
            before.changes_to(&after).into_iter().partition(|line| line.contains("counter_install_grants"));
        assert_eq!(changed, Vec::<String>::new(), "nothing changed");
        assert!(!left.is_empty() && left.iter().all(|line| line.starts_with('+')), "{left:?}");
    } else {
        succeeded(sourced);
    }
    conn_as(&app.url).query_drop("CALL counter_increment('hits')").expect("the application's grant is kept");
    assert_eq!(support::total(&mut db.conn(), "hits"), Some(1));
}

/// The documented installer grants this server needs (MySQL needs them all).
fn installer_grants() -> Vec<&'static str> {
    INSTALLER_GRANTS
        .iter()
        .filter(|(_, on_mariadb)| flavor() == Flavor::MySql || *on_mariadb)
        .map(|(grant, _)| *grant)
        .collect()
}

/// The installing account's privileges, as docs/operations.md grants them
/// ("The installing account"), with `{db}` for the database: each, and
/// whether MariaDB needs it too (MySQL needs them all).
const INSTALLER_GRANTS: [(&str, bool); 15] = [
    ("SELECT ON {db}.*", true),
    ("INSERT ON {db}.*", true),
    ("UPDATE ON {db}.*", true),
    ("DELETE ON {db}.*", true),
    ("CREATE ON {db}.*", true),
    ("ALTER ON {db}.*", true),
    ("DROP ON {db}.*", true),
    ("CREATE VIEW ON {db}.*", true),
    ("CREATE ROUTINE ON {db}.*", true),
    ("ALTER ROUTINE ON {db}.*", true),
    ("TRIGGER ON {db}.*", true),
    ("SUPER ON *.*", true),
    ("GRANT OPTION ON {db}.*", false),
    ("EXECUTE ON {db}.*", false),
    ("SELECT ON mysql.procs_priv", false),
];

/// Words of the servers' refusals for a privilege the account lacks
/// (1044, 1142, 1227, 1370, 1419 and their kin), and of the probe's for the
/// grants it cannot read.
const PRIVILEGE_FAILURES: [&str; 3] = ["denied", "SUPER privilege", "cannot read mysql.procs_priv"];

/// What a DBA does with the installing accounts, each step as the account
/// that runs it: one installs the classic package, an application is
/// granted one routine, another account sources the package again and
/// adds every feature (a column ALTERed in, tables, triggers), the
/// routines count and refuse through their definers' rights and the
/// application keeps its grant, and the first account uninstalls what the
/// second made. The first step that fails, named.
fn install_upgrade_and_uninstall_as(db: &Database, first: &Account, second: &Account) -> Result<(), String> {
    let ran = |step: &str, output: std::process::Output| {
        if output.status.success() { Ok(()) } else { Err(format!("{step}: {}", stderr(&output))) }
    };
    let call_as =
        |url: &str, sql: &str| conn_as(url).query_drop(sql).map_err(|error| format!("{sql}: {error}"));
    let call = |sql: &str| call_as(&db.url(), sql);
    ran(
        "install --features none",
        slotted_counters(&["install", "--url", &first.url, "--features", "none"]),
    )?;
    call("CALL counter_setup('c', 'd', 4, 10)")?;
    call("CALL counter_setup('gone', 'd', 2, NULL)")?;
    call("CALL counter_delete('gone')")?;
    let app = db.account("app", &["EXECUTE ON PROCEDURE {db}.`counter_increment`"]);
    call_as(&app.url, "CALL counter_increment('c')")?;
    let classic = std::fs::File::open(support::committed_setup_sql("generated/classic")).unwrap();
    ran("the classic setup.sql sourced again", db.client_as(&second.url).stdin(classic).output().unwrap())?;
    call_as(&app.url, "CALL counter_increment('c')")?;
    ran("install (every feature)", slotted_counters(&["install", "--url", &second.url]))?;
    call_as(&app.url, "CALL counter_increment('c')")?;
    call("CALL counter_bound('c', 0, NULL)")?;
    call("CALL counter_track('c', 'day', NULL)")?;
    call(r#"CALL counter_add_many('{"c": 2}')"#)?;
    call("CALL counter_add('c', -1)")?;
    let total: Option<i64> =
        db.conn().query_first("SELECT counter_get('c')").map_err(|error| error.to_string())?;
    if total != Some(14) {
        return Err(format!("the total is {total:?}, not 14"));
    }
    ran("uninstall", slotted_counters(&["uninstall", "--url", &first.url]))
}

/// Two accounts that hold exactly the documented grants install the
/// classic package, re-install it, add every feature and uninstall, the
/// routines working through their definers' rights; without any one of
/// the grants (MariaDB: those it needs) some step fails.
fn the_documented_installer_grants_are_enough_and_each_is_needed() {
    let operations = std::fs::read_to_string(support::in_project("docs/operations.md")).unwrap();
    for (grant, _) in INSTALLER_GRANTS {
        let documented = format!("GRANT {} TO 'installer'@'%';", grant.replace("{db}", "`app`"));
        assert!(operations.contains(&documented), "docs/operations.md lacks {documented}");
    }
    let grants = installer_grants();
    let db = Database::new();
    let (first, second) = (db.account("first", &grants), db.account("second", &grants));
    install_upgrade_and_uninstall_as(&db, &first, &second).expect("the documented grants are enough");
    for left_out in &grants {
        let fewer: Vec<&str> = grants.iter().filter(|grant| grant != &left_out).copied().collect();
        let db = Database::new();
        let (first, second) = (db.account("first", &fewer), db.account("second", &fewer));
        let failure = install_upgrade_and_uninstall_as(&db, &first, &second)
            .expect_err(&format!("everything worked without {left_out}"));
        eprintln!("without {left_out}: {failure}");
        assert!(
            PRIVILEGE_FAILURES.iter().any(|words| failure.contains(words)),
            "without {left_out}, a failure that names no privilege: {failure}"
        );
    }
}
