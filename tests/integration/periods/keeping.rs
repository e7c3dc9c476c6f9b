//! What a counter keeps of its periods: the last `keep` buckets of each
//! through expiry, `keep` changed or 0, and the history a reset keeps and a
//! delete removes.

use std::collections::BTreeMap;

use mysql::prelude::Queryable;

use super::{at, bucket, bucket_rows, buckets, period, tracked, with_package};
use crate::support::{on_each_server, server_error, total};

on_each_server!(
    expiry_removes_exactly_the_buckets_beyond_keep,
    tracking_again_changes_keep_and_keep_0_drops_the_buckets,
    a_reset_keeps_the_history_and_a_delete_removes_it,
    a_delete_interrupted_after_the_slots_is_finished_by_a_second_call,
);

/// Expiry deletes the buckets before the last `keep` of each period, the
/// current one included, many statements' worth of rows of them, and
/// never a total; a period that keeps all keeps all.
fn expiry_removes_exactly_the_buckets_beyond_keep() {
    let db = with_package();
    let mut conn = db.conn();
    tracked(&mut conn, "c", 64, &[("minute", None), ("hour", None), ("day", None)]);
    tracked(&mut conn, "other", 2, &[("minute", Some(1))]);
    // 40 minutes of rows over 64 slots each: 2,560 rows, more than two
    // statements of expiry.
    for minute in 0..40 {
        let rows: Vec<String> = (1..=64)
            .map(|slot| format!("('c', 'minute', '2026-11-25 11:{minute:02}:00', {slot}, 1)"))
            .collect();
        conn.query_drop(format!(
            "INSERT INTO counter_buckets (counter_name, period, bucket_start, counter_id, counter) VALUES {}",
            rows.join(", ")
        ))
        .unwrap();
    }
    at(&mut conn, "2026-11-25 11:39:30");
    conn.query_drop("CALL counter_add('c', 5)").unwrap();
    conn.query_drop("CALL counter_add_at('c', 2, '2026-11-25 08:00:00')").unwrap();
    conn.query_drop("CALL counter_add('other', 1)").unwrap();
    at(&mut conn, "2026-11-25 11:40:30");
    conn.query_drop("CALL counter_add('other', 1)").unwrap();
    let total_before = total(&mut conn, "c");
    conn.query_drop("CALL counter_track('c', 'minute', 10)").unwrap();
    conn.query_drop("CALL counter_track('c', 'hour', 2)").unwrap();
    at(&mut conn, "2026-11-25 11:40:30");
    conn.query_drop("CALL counter_expire_periods()").unwrap();

    let kept: Vec<String> = buckets(&mut conn, "c")
        .into_keys()
        .filter(|(period, _)| period == "minute")
        .map(|(_, start)| start)
        .collect();
    let expected: Vec<String> = (31..40).map(|minute| format!("2026-11-25 11:{minute}:00")).collect();
    assert_eq!(kept, expected, "minutes 11:31 to 11:40 are the last 10; 11:40 has nothing");
    assert_eq!(period(&mut conn, "c", "minute", "2026-11-25 11:39:00"), Some(64 + 5));
    assert_eq!(period(&mut conn, "c", "minute", "2026-11-25 11:30:00"), Some(0), "expired");
    assert_eq!(
        buckets(&mut conn, "c")
            .into_iter()
            .filter(|((period, _), _)| period != "minute")
            .collect::<BTreeMap<_, _>>(),
        BTreeMap::from([bucket("hour", "2026-11-25 11:00:00", 5), bucket("day", "2026-11-25 00:00:00", 7)]),
        "the 08:00 hour is beyond the last 2; days keep all"
    );
    assert_eq!(buckets(&mut conn, "other"), BTreeMap::from([bucket("minute", "2026-11-25 11:40:00", 1)]));
    assert_eq!(total(&mut conn, "c"), total_before, "expiry never changes a total");
}

/// Tracking a period again changes what it keeps and nothing else; keep 0
/// stops it and drops its buckets, and tracking it again starts from none,
/// even where a keep 0 cut short between its steps left a bucket behind.
fn tracking_again_changes_keep_and_keep_0_drops_the_buckets() {
    let db = with_package();
    let mut conn = db.conn();
    tracked(&mut conn, "c", 4, &[("hour", None), ("day", None)]);
    at(&mut conn, "2026-11-25 12:00:00");
    conn.query_drop("CALL counter_add('c', 3)").unwrap();
    conn.query_drop("CALL counter_track('c', 'hour', 5)").unwrap();
    let keeps: Vec<(String, Option<u32>)> =
        conn.query("SELECT CAST(period AS CHAR), keep FROM counter_periods ORDER BY period").unwrap();
    assert_eq!(keeps, [("hour".to_owned(), Some(5)), ("day".to_owned(), None)]);
    assert_eq!(period(&mut conn, "c", "hour", "2026-11-25 12:00:00"), Some(3));

    conn.query_drop("CALL counter_track('c', 'hour', 0)").unwrap();
    assert_eq!(period(&mut conn, "c", "hour", "2026-11-25 12:00:00"), None, "no longer tracked");
    assert_eq!(buckets(&mut conn, "c"), BTreeMap::from([bucket("day", "2026-11-25 00:00:00", 3)]));
    conn.query_drop("CALL counter_add('c', 4)").unwrap();
    // What a keep 0 killed after it stopped the period, before its drop, leaves.
    conn.query_drop(
        "INSERT INTO counter_buckets (counter_name, period, bucket_start, counter_id, counter)
         VALUES ('c', 'hour', '2026-11-25 12:00:00', 1, 7)",
    )
    .unwrap();
    conn.query_drop("CALL counter_track('c', 'hour', NULL)").unwrap();
    conn.query_drop("CALL counter_add('c', 5)").unwrap();
    assert_eq!(period(&mut conn, "c", "hour", "2026-11-25 12:00:00"), Some(5), "counted from the new start");
    assert_eq!(period(&mut conn, "c", "day", "2026-11-25 12:00:00"), Some(12));
}

/// A reset sets the total and leaves every bucket as it was; a delete
/// removes the counter's periods and buckets, so a counter set up again
/// under its name starts with none.
fn a_reset_keeps_the_history_and_a_delete_removes_it() {
    let db = with_package();
    let mut conn = db.conn();
    tracked(&mut conn, "c", 4, &[("hour", None), ("day", None)]);
    tracked(&mut conn, "other", 1, &[("hour", None)]);
    at(&mut conn, "2026-11-25 12:00:00");
    conn.query_drop("CALL counter_add('c', 30)").unwrap();
    conn.query_drop("CALL counter_add('other', 1)").unwrap();
    let history = bucket_rows(&mut conn, "c");
    conn.query_drop("CALL counter_reset('c', 1000, FALSE)").unwrap();
    conn.query_drop("CALL counter_compact('c')").unwrap();
    conn.query_drop("CALL counter_resize('c', 9)").unwrap();
    conn.query_drop("CALL counter_resize('c', 2)").unwrap();
    assert_eq!(total(&mut conn, "c"), Some(1000));
    assert_eq!(bucket_rows(&mut conn, "c"), history, "a reset, a compaction and resizes are no writes");

    conn.query_drop("CALL counter_delete('c')").unwrap();
    assert_eq!(bucket_rows(&mut conn, "c"), BTreeMap::new());
    let periods: u32 =
        conn.query_first("SELECT COUNT(*) FROM counter_periods WHERE counter_name = 'c'").unwrap().unwrap();
    assert_eq!(periods, 0);
    tracked(&mut conn, "c", 4, &[("hour", None)]);
    assert_eq!(period(&mut conn, "c", "hour", "2026-11-25 12:00:00"), Some(0), "a new counter");
    assert_eq!(period(&mut conn, "other", "hour", "2026-11-25 12:00:00"), Some(1), "another counter's stay");
}

/// Rows of counter `name` in each of the package's tables, by table.
fn rows_of(conn: &mut mysql::PooledConn, name: &str) -> Vec<(String, u64)> {
    [
        "counters",
        "counter_changes",
        "counter_spreads",
        "counter_periods",
        "counter_tracked_writes",
        "counter_buckets",
    ]
    .into_iter()
    .map(|table| {
        let rows: u64 = conn
            .exec_first(format!("SELECT COUNT(*) FROM {table} WHERE counter_name = ?"), (name,))
            .unwrap()
            .unwrap();
        (table.to_owned(), rows)
    })
    .filter(|(_, rows)| *rows > 0)
    .collect()
}

/// A delete that gives up on a lock of its day buckets (1205), after its
/// slots, periods and tracked writes went (each statement commits alone):
/// the counter is gone for reads and writes, buckets are left, a setup of
/// the name is refused (it would inherit them), and a second call removes
/// them and succeeds; only a third meets "unknown counter". Another
/// counter keeps everything.
fn a_delete_interrupted_after_the_slots_is_finished_by_a_second_call() {
    let db = with_package();
    let mut conn = db.conn();
    tracked(&mut conn, "c", 4, &[("hour", None), ("day", None)]);
    tracked(&mut conn, "other", 2, &[("hour", None)]);
    at(&mut conn, "2026-11-25 12:00:00");
    conn.query_drop("CALL counter_add('c', 30)").unwrap();
    conn.query_drop("CALL counter_add('other', 1)").unwrap();
    // 2,500 hour rows: the delete takes three statements over them first.
    for hour in 0..25 {
        let rows: Vec<String> = (1..=100)
            .map(|slot| {
                format!("('c', 'hour', '2026-10-{:02} {:02}:00:00', {slot}, 1)", 1 + hour / 24, hour % 24)
            })
            .collect();
        conn.query_drop(format!(
            "INSERT INTO counter_buckets (counter_name, period, bucket_start, counter_id, counter) VALUES {}",
            rows.join(", ")
        ))
        .unwrap();
    }
    let other = rows_of(&mut conn, "other");
    let day_rows: u64 = conn
        .query_first("SELECT COUNT(*) FROM counter_buckets WHERE counter_name = 'c' AND period = 'day'")
        .unwrap()
        .unwrap();

    let mut holder = db.conn();
    holder.query_drop("BEGIN").unwrap();
    holder
        .query_drop(
            "SELECT * FROM counter_buckets FORCE INDEX (PRIMARY) \
             WHERE counter_name = 'c' AND period = 'day' FOR UPDATE",
        )
        .unwrap();
    let mut deleter = db.conn();
    deleter.query_drop("SET SESSION innodb_lock_wait_timeout = 1").unwrap();
    let (code, _) = server_error(deleter.query_drop("CALL counter_delete('c')").unwrap_err());
    assert_eq!(code, 1205, "the delete gave up on the day buckets' lock");
    holder.query_drop("ROLLBACK").unwrap();

    assert_eq!(total(&mut conn, "c"), None, "the slots went first");
    let left = rows_of(&mut conn, "c");
    assert!(
        matches!(left[..], [(ref table, rows)] if table == "counter_buckets" && rows >= day_rows),
        "{left:?}"
    );
    let (code, _) = server_error(conn.query_drop("CALL counter_increment('c')").unwrap_err());
    assert_eq!(code, slotted_counters_core::package::errno::UNKNOWN_COUNTER);
    let (code, message) = server_error(conn.query_drop("CALL counter_setup('c', 'd', 4, NULL)").unwrap_err());
    assert_eq!(code, slotted_counters_core::package::errno::ALREADY_EXISTS, "{message}");
    assert!(message.contains("its delete was interrupted"), "{message}");

    conn.query_drop("CALL counter_delete('c')").unwrap();
    assert_eq!(rows_of(&mut conn, "c"), []);
    conn.query_drop("CALL counter_setup('c', 'd', 4, NULL)").unwrap();
    conn.query_drop("CALL counter_delete('c')").unwrap();
    let (code, _) = server_error(conn.query_drop("CALL counter_delete('c')").unwrap_err());
    assert_eq!(code, slotted_counters_core::package::errno::UNKNOWN_COUNTER);
    assert_eq!(rows_of(&mut conn, "other"), other);
}
