//! A name is a key: under the default collation every distinct name is its
//! own counter, through the routines, both clients and the plain mode; a
//! table made in another collation is refused by `install` and named by
//! `status`; and the documented change of its collation, run under
//! increments, loses and merges nothing.

use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Duration;

use mysql::prelude::Queryable;
use slotted_counters::sqlx::mysql::MySqlPoolOptions;
use slotted_counters::{AsyncCounters, Counters, PackageOptions};

use crate::support::{
    self, Database, StopOnDrop, in_project, on_each_server, server_error, slotted_counters, stderr, stdout,
    succeeded, total,
};

on_each_server!(
    names_that_differ_by_case_accent_emoji_or_mark_are_distinct_counters,
    a_write_for_a_name_a_pad_space_collation_takes_for_a_counters_is_refused,
    install_and_status_refuse_a_table_whose_names_compare_in_another_collation,
    the_documented_collation_change_under_increments_loses_and_merges_nothing,
);

/// Pairs of names that `utf8mb4_unicode_ci` made one counter: case, an
/// accent (precomposed, and as a combining mark), two emoji, a Thai tone
/// mark and a Devanagari sign (both ignored there).
const LOOK_ALIKES: [&str; 11] = [
    "downloads",
    "Downloads",
    "café",
    "cafe",
    "cafe\u{301}",
    "post:👍",
    "post:😂",
    "กา",
    "ก\u{e48}า",
    "क",
    "क\u{902}",
];

/// Each name gets its own delta through the routines, the sync client in
/// both modes and the async client, and keeps its own total.
fn names_that_differ_by_case_accent_emoji_or_mark_are_distinct_counters() {
    let db = support::with_committed("generated");
    let mut conn = db.conn();
    for name in LOOK_ALIKES {
        conn.exec_drop("CALL counter_setup(?, 'look-alike', 2, NULL)", (name,))
            .unwrap_or_else(|error| panic!("{name:?}: {error}"));
    }
    let options = PackageOptions::default();
    let routines = Counters::new(db.pool().clone()).unwrap();
    let plain = Counters::builder(db.pool().clone()).package(&options).plain_sql().build().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let asynchronous = runtime.block_on(async {
        AsyncCounters::new(MySqlPoolOptions::new().connect(&db.url()).await.unwrap()).unwrap()
    });
    for (delta, name) in (1..).zip(LOOK_ALIKES) {
        conn.exec_drop("CALL counter_add(?, ?)", (name, delta)).unwrap();
        routines.add(name, delta).unwrap();
        plain.add(name, delta).unwrap();
        runtime.block_on(asynchronous.add(name, delta)).unwrap();
    }
    let read = routines.get_many(LOOK_ALIKES).unwrap();
    for ((delta, name), read) in (1..).zip(LOOK_ALIKES).zip(read) {
        assert_eq!(total(&mut conn, name), Some(4 * delta), "{name:?}");
        assert_eq!(read, Some(4 * delta), "{name:?} through get_many");
    }
}

/// Installs the package an earlier version made by default: names in
/// `utf8mb4_unicode_ci`.
/// `counter_increment` and `counter_add` check a name only once their
/// write found no row (binary collations): a name with trailing spaces,
/// which the PAD SPACE `utf8mb4_bin` compares equal to a counter's, is
/// refused, in every committed package with a binary collation, and the
/// counter keeps its count.
fn a_write_for_a_name_a_pad_space_collation_takes_for_a_counters_is_refused() {
    for dir in ["generated", "generated/classic", "generated/fixed-slots-64", "generated/connection-slots"] {
        let db = support::with_committed(dir);
        let mut conn = db.conn();
        conn.query_drop("CALL counter_setup('padded', 'd', NULL, 7)").unwrap();
        for call in ["CALL counter_increment('padded ')", "CALL counter_add('padded  ', 5)"] {
            let (code, message) = support::server_error(conn.query_drop(call).unwrap_err());
            assert_eq!(
                code,
                slotted_counters_core::package::errno::INVALID_ARGUMENT,
                "{dir}: {call}: {message}"
            );
            assert!(message.contains("trailing space"), "{dir}: {call}: {message}");
        }
        assert_eq!(support::total(&mut conn, "padded"), Some(7), "{dir}: the counter kept its count");
    }
}

fn install_unicode_ci(db: &Database) {
    succeeded(slotted_counters(&["install", "--url", &db.url(), "--collation", "utf8mb4_unicode_ci"]));
}

/// The default package over a table of `utf8mb4_unicode_ci` names, whose
/// key folds what the routines would tell apart: `install` installs
/// nothing and `status` says so, both naming the way out; with that
/// collation both are content.
fn install_and_status_refuse_a_table_whose_names_compare_in_another_collation() {
    let db = Database::new();
    install_unicode_ci(&db);
    let url = db.url();
    let comments = |db: &Database| -> Vec<String> {
        db.conn()
            .query("SELECT ROUTINE_COMMENT FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE() ORDER BY ROUTINE_NAME")
            .unwrap()
    };
    let before = comments(&db);
    let package: String = db.conn().query_first("SELECT counter_package()").unwrap().unwrap();
    assert!(package.ends_with("--collation utf8mb4_unicode_ci"), "{package}");
    let refusal = "error: `counters` compares counter names in utf8mb4_unicode_ci, this package in utf8mb4_bin; \
                   use --collation utf8mb4_unicode_ci to keep the table as it is, or change the table's \
                   collation first (docs/operations.md, \"Changing the collation of names\")";

    let output = slotted_counters(&["install", "--url", &url]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert_eq!(stderr(&output).trim_end(), refusal);
    assert_eq!(comments(&db), before, "nothing was installed");

    let output = slotted_counters(&["status", "--url", &url]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stderr(&output).trim_end(), refusal);
    let report = stdout(&output);
    for table in ["counters", "counter_writes", "counter_changes"] {
        let line = report.lines().find(|line| line.starts_with(&format!("{table} "))).unwrap_or_default();
        assert!(line.ends_with("names in utf8mb4_unicode_ci, not the package's collation"), "{report}");
    }

    succeeded(slotted_counters(&["status", "--url", &url, "--collation", "utf8mb4_unicode_ci"]));
    succeeded(slotted_counters(&["install", "--url", &url, "--collation", "utf8mb4_unicode_ci"]));
}

/// The statements of docs/operations.md's "Changing the collation of
/// names", the page's own text.
fn documented_collation_change() -> Vec<String> {
    let page = std::fs::read_to_string(in_project("docs/operations.md")).unwrap();
    let section = &page[page.find("## Changing the collation of names").expect("the section")..];
    let start = section.find("```sql\n").expect("an SQL block") + "```sql\n".len();
    let block = &section[start..start + section[start..].find("```").expect("the block's end")];
    block.split(';').map(str::trim).filter(|statement| !statement.is_empty()).map(str::to_owned).collect()
}

/// Four writers increment a counter of a `utf8mb4_unicode_ci` table while
/// the documented `ALTER`s and an install of the default package run:
/// every increment acknowledged is counted, the only calls that failed did
/// so while MySQL recreated their routine (1305), and names that differ
/// only by case are two counters after.
fn the_documented_collation_change_under_increments_loses_and_merges_nothing() {
    let db = Database::new();
    install_unicode_ci(&db);
    db.conn().query_drop("CALL counter_setup('downloads', 'd', 4, 100)").unwrap();
    let running = AtomicBool::new(true);
    let (acknowledged, failures) = thread::scope(|scope| {
        let stop = StopOnDrop(&running);
        let writers: Vec<_> = (0..4)
            .map(|_| {
                scope.spawn(|| {
                    let mut conn = db.conn();
                    let (mut acknowledged, mut failures) = (0, Vec::new());
                    while running.load(Ordering::Relaxed) {
                        match conn.query_drop("CALL counter_increment('downloads')") {
                            Ok(()) => acknowledged += 1,
                            Err(error) => failures.push(server_error(error).0),
                        }
                    }
                    (acknowledged, failures)
                })
            })
            .collect();
        thread::sleep(Duration::from_millis(300));
        let mut admin = db.conn();
        for statement in documented_collation_change() {
            admin.query_drop(&statement).unwrap_or_else(|error| panic!("{statement}: {error}"));
        }
        succeeded(slotted_counters(&["install", "--url", &db.url()]));
        thread::sleep(Duration::from_millis(300));
        drop(stop);
        writers.into_iter().map(|writer| writer.join().unwrap()).fold(
            (0, Vec::new()),
            |(acknowledged, mut failures), (more, failed)| {
                failures.extend(failed);
                (acknowledged + more, failures)
            },
        )
    });
    assert!(acknowledged > 0, "the writers ran");
    assert!(failures.iter().all(|&code| code == 1305), "{failures:?}");
    assert_eq!(total(&mut db.conn(), "downloads"), Some(100 + acknowledged), "failures: {}", failures.len());

    let mut conn = db.conn();
    conn.query_drop("CALL counter_setup('Downloads', 'd', 2, 7)").unwrap();
    assert_eq!(total(&mut conn, "Downloads"), Some(7));
    assert_eq!(total(&mut conn, "downloads"), Some(100 + acknowledged));
    succeeded(slotted_counters(&["status", "--url", &db.url()]));
    println!("collation change: {acknowledged} increments acknowledged, {} failed", failures.len());
}
