//! Counters per period through the routines, as any client calls them:
//! `counter_track`, writes counted in the UTC buckets of their moment,
//! late writes, refused writes that count nowhere, reads of a bucket, a
//! range and a series, and every committed package.

use std::collections::BTreeMap;
use std::thread;

use mysql::prelude::Queryable;
use mysql::{PooledConn, TxOpts};
use slotted_counters::PackageOptions;
use slotted_counters_core::Feature;
use slotted_counters_core::package::{errno, server_errno};

use super::{at, bucket, bucket_rows, buckets, period, tracked, with_package};
use crate::support::{self, on_each_server, server_error, total, with_committed};

on_each_server!(
    writes_count_in_the_utc_buckets_of_their_moment,
    a_write_at_a_boundary_counts_in_one_bucket_of_each_period,
    late_writes_count_in_their_buckets_unless_too_old_to_keep,
    refused_writes_change_no_bucket,
    a_write_id_counts_once_in_every_bucket,
    concurrent_writers_count_exactly_in_every_bucket,
    a_series_has_every_bucket_of_its_range_and_no_more,
    bad_periods_ranges_and_moments_are_refused,
    every_committed_package_counts_per_period,
    only_the_writes_of_a_tracked_counter_look_at_the_periods,
    an_upgrade_marks_untracked_only_the_counters_that_track_no_period,
);

fn range(conn: &mut PooledConn, name: &str, period: &str, from: &str, to: &str) -> Option<i64> {
    conn.exec_first("SELECT counter_get_range(?, ?, ?, ?)", (name, period, from, to)).unwrap().flatten()
}

pub(super) fn series(
    conn: &mut PooledConn,
    name: &str,
    period: &str,
    from: &str,
    to: &str,
) -> Vec<(String, i64)> {
    conn.exec("CALL counter_series(?, ?, ?, ?)", (name, period, from, to))
        .unwrap()
        .into_iter()
        .map(|row: mysql::Row| {
            let (start, value): (mysql::Value, i64) = mysql::from_row(row);
            (start.as_sql(true).trim_matches('\'').to_owned(), value)
        })
        .collect()
}

/// Increments, adds and batches made at two moments count in the UTC
/// buckets that hold them, each period on its own, and only in the periods
/// the counter tracks; the total holds them all.
fn writes_count_in_the_utc_buckets_of_their_moment() {
    let db = with_package();
    let mut conn = db.conn();
    tracked(&mut conn, "views", 8, &[("minute", None), ("hour", None), ("day", None), ("month", None)]);
    tracked(&mut conn, "likes", 8, &[("day", None)]);
    at(&mut conn, "2026-11-24 10:15:30");
    conn.query_drop("CALL counter_increment('views')").unwrap();
    conn.query_drop("CALL counter_add('views', 41)").unwrap();
    conn.query_drop(r#"CALL counter_add_many('{"views": 100, "likes": 3}')"#).unwrap();
    at(&mut conn, "2026-11-25 07:00:00");
    conn.query_drop("CALL counter_add('views', -2)").unwrap();
    conn.query_drop("CALL counter_increment('likes')").unwrap();

    assert_eq!(total(&mut conn, "views"), Some(140));
    assert_eq!(
        buckets(&mut conn, "views"),
        BTreeMap::from([
            bucket("minute", "2026-11-24 10:15:00", 142),
            bucket("minute", "2026-11-25 07:00:00", -2),
            bucket("hour", "2026-11-24 10:00:00", 142),
            bucket("hour", "2026-11-25 07:00:00", -2),
            bucket("day", "2026-11-24 00:00:00", 142),
            bucket("day", "2026-11-25 00:00:00", -2),
            bucket("month", "2026-11-01 00:00:00", 140),
        ])
    );
    assert_eq!(
        buckets(&mut conn, "likes"),
        BTreeMap::from([bucket("day", "2026-11-24 00:00:00", 3), bucket("day", "2026-11-25 00:00:00", 1)])
    );
    assert_eq!(period(&mut conn, "views", "hour", "2026-11-24 10:59:59.999999"), Some(142));
    assert_eq!(period(&mut conn, "views", "hour", "2026-11-24 11:00:00"), Some(0), "nothing counted then");
    assert_eq!(period(&mut conn, "likes", "hour", "2026-11-24 10:15:00"), None, "hours untracked");
    assert_eq!(period(&mut conn, "missing", "hour", "2026-11-24 10:15:00"), None, "unknown counter");
    assert_eq!(range(&mut conn, "views", "hour", "2026-11-24 00:00:00", "2026-11-25 07:00:00"), Some(142));
    assert_eq!(range(&mut conn, "views", "hour", "2026-11-24 00:00:00", "2026-11-25 07:00:01"), Some(140));
    // A day in UTC-5, read from hours: 05:00 UTC to 05:00 UTC the next day.
    assert_eq!(range(&mut conn, "views", "hour", "2026-11-24 05:00:00", "2026-11-25 05:00:00"), Some(142));
}

/// A write just before a boundary and one just after it count in exactly
/// one bucket of each period: the last microsecond of a month is its own.
fn a_write_at_a_boundary_counts_in_one_bucket_of_each_period() {
    let db = with_package();
    let mut conn = db.conn();
    tracked(&mut conn, "c", 4, &[("minute", None), ("hour", None), ("day", None), ("month", None)]);
    at(&mut conn, "2026-03-31 23:59:59.999999");
    conn.query_drop("CALL counter_add('c', 1)").unwrap();
    at(&mut conn, "2026-04-01 00:00:00");
    conn.query_drop("CALL counter_add('c', 10)").unwrap();
    let mut expected = BTreeMap::new();
    for (period, before, after) in [
        ("minute", "2026-03-31 23:59:00", "2026-04-01 00:00:00"),
        ("hour", "2026-03-31 23:00:00", "2026-04-01 00:00:00"),
        ("day", "2026-03-31 00:00:00", "2026-04-01 00:00:00"),
        ("month", "2026-03-01 00:00:00", "2026-04-01 00:00:00"),
    ] {
        expected.extend([bucket(period, before, 1), bucket(period, after, 10)]);
    }
    assert_eq!(buckets(&mut conn, "c"), expected);
}

/// `counter_add_at` and `counter_add_many_at` add to the total and to the
/// bucket of their moment in each period that still keeps it; a moment
/// older than a period keeps counts in the others and in the total.
fn late_writes_count_in_their_buckets_unless_too_old_to_keep() {
    let db = with_package();
    let mut conn = db.conn();
    tracked(&mut conn, "c", 4, &[("hour", Some(24)), ("day", None)]);
    at(&mut conn, "2026-11-25 12:30:00");
    conn.query_drop("CALL counter_add_at('c', 5, '2026-11-25 10:59:59')").unwrap();
    conn.query_drop("CALL counter_add_at('c', 7, '2026-11-24 13:00:00')").unwrap(); // the 24th hour back
    conn.query_drop("CALL counter_add_at('c', 9, '2026-11-24 12:59:59')").unwrap(); // the 25th
    conn.query_drop(r#"CALL counter_add_many_at(NULL, '{"c": 100}', '2026-11-20 00:00:00')"#).unwrap();
    conn.query_drop("CALL counter_add_at('c', 1, '2026-11-25 12:30:00')").unwrap(); // now
    assert_eq!(total(&mut conn, "c"), Some(122));
    assert_eq!(
        buckets(&mut conn, "c"),
        BTreeMap::from([
            bucket("hour", "2026-11-24 13:00:00", 7),
            bucket("hour", "2026-11-25 10:00:00", 5),
            bucket("hour", "2026-11-25 12:00:00", 1),
            bucket("day", "2026-11-20 00:00:00", 100),
            bucket("day", "2026-11-24 00:00:00", 16),
            bucket("day", "2026-11-25 00:00:00", 6),
        ])
    );
}

/// A write that is refused, or rolled back with the caller's transaction,
/// changes no bucket, in a batch neither; one in the caller's committed
/// transaction counts.
fn refused_writes_change_no_bucket() {
    let db = with_package();
    let mut conn = db.conn();
    tracked(&mut conn, "c", 4, &[("hour", None), ("day", None)]);
    at(&mut conn, "2026-11-25 12:00:00");
    conn.query_drop("CALL counter_add('c', 3)").unwrap();
    let before = bucket_rows(&mut conn, "c");
    for (call, code) in [
        ("CALL counter_add('c', 9007199254740992)", errno::INVALID_ARGUMENT),
        ("CALL counter_add('c', 1.5)", errno::INVALID_ARGUMENT),
        (r#"CALL counter_add_many('{"c": 1, "missing": 1}')"#, errno::UNKNOWN_COUNTER),
        (r#"CALL counter_add_many('{"c": 9007199254740992}')"#, errno::INVALID_ARGUMENT),
        ("CALL counter_add_at('c', 1, '2026-11-25 12:00:01')", errno::INVALID_ARGUMENT),
        ("CALL counter_add_at('c', 1, NULL)", errno::INVALID_ARGUMENT),
        (r#"CALL counter_add_many_at(NULL, '{"c": 1}', '2026-11-26 00:00:00')"#, errno::INVALID_ARGUMENT),
    ] {
        let (refused, message) = server_error(conn.query_drop(call).expect_err(call));
        assert_eq!(refused, code, "{call}: {message}");
        assert_eq!(bucket_rows(&mut conn, "c"), before, "{call}");
    }
    let mut tx = db.pool().start_transaction(TxOpts::default()).unwrap();
    at(&mut tx, "2026-11-25 12:00:00");
    tx.query_drop("CALL counter_add('c', 10)").unwrap();
    tx.query_drop(r#"CALL counter_add_many('{"c": 20}')"#).unwrap();
    tx.rollback().unwrap();
    assert_eq!(bucket_rows(&mut conn, "c"), before, "rolled back with the caller");
    assert_eq!(total(&mut conn, "c"), Some(3));

    let mut tx = db.pool().start_transaction(TxOpts::default()).unwrap();
    at(&mut tx, "2026-11-25 12:00:00");
    tx.query_drop("CALL counter_add('c', 10)").unwrap();
    tx.commit().unwrap();
    assert_eq!(total(&mut conn, "c"), Some(13));
    assert_eq!(period(&mut conn, "c", "day", "2026-11-25 12:00:00"), Some(13), "committed with the caller");
}

/// A write sent again with its id counts in no bucket a second time.
fn a_write_id_counts_once_in_every_bucket() {
    let db = with_package();
    let mut conn = db.conn();
    tracked(&mut conn, "c", 4, &[("minute", None), ("day", None)]);
    at(&mut conn, "2026-11-25 12:00:00");
    for _ in 0..3 {
        conn.exec_drop("CALL counter_add_once(?, 'c', 5)", (b"write-id-0000001".to_vec(),)).unwrap();
        conn.exec_drop("CALL counter_add_many_once(?, ?)", (b"write-id-0000002".to_vec(), r#"{"c": 7}"#))
            .unwrap();
        conn.exec_drop(
            "CALL counter_add_many_at(?, ?, '2026-11-25 11:00:00')",
            (b"write-id-0000003".to_vec(), r#"{"c": 100}"#),
        )
        .unwrap();
    }
    assert_eq!(total(&mut conn, "c"), Some(112));
    assert_eq!(
        buckets(&mut conn, "c"),
        BTreeMap::from([
            bucket("minute", "2026-11-25 11:00:00", 100),
            bucket("minute", "2026-11-25 12:00:00", 12),
            bucket("day", "2026-11-25 00:00:00", 112),
        ])
    );
}

/// 16 writers on one counter of 16 slots: every bucket holds exactly what
/// the writers counted, spread over the slots as the total is.
fn concurrent_writers_count_exactly_in_every_bucket() {
    let db = with_package();
    let mut conn = db.conn();
    tracked(&mut conn, "hot", 16, &[("hour", None), ("day", None)]);
    let writers: Vec<_> = (0..16)
        .map(|writer| {
            let pool = db.pool().clone();
            thread::spawn(move || {
                let mut conn = pool.get_conn().unwrap();
                at(&mut conn, "2026-11-25 12:00:00");
                for write in 0..50 {
                    if write % 10 == 0 {
                        conn.query_drop(r#"CALL counter_add_many('{"hot": 2}')"#).unwrap();
                    } else {
                        conn.exec_drop("CALL counter_add('hot', ?)", (writer % 3 + 1,)).unwrap();
                    }
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().unwrap();
    }
    let expected: i64 = (0..16).map(|writer| 45 * (writer % 3 + 1) + 5 * 2).sum();
    assert_eq!(total(&mut conn, "hot"), Some(expected));
    assert_eq!(
        buckets(&mut conn, "hot"),
        BTreeMap::from([
            bucket("hour", "2026-11-25 12:00:00", expected),
            bucket("day", "2026-11-25 00:00:00", expected)
        ])
    );
    let slots: std::collections::BTreeSet<u32> =
        bucket_rows(&mut conn, "hot").into_keys().map(|(_, _, slot)| slot).collect();
    assert!(slots.len() > 8, "the hour's rows spread over the slots: {slots:?}");
}

/// A series has one row per bucket that starts in its range, in order,
/// with 0 where nothing was counted, months by the calendar.
fn a_series_has_every_bucket_of_its_range_and_no_more() {
    let db = with_package();
    let mut conn = db.conn();
    tracked(&mut conn, "c", 4, &[("hour", None), ("month", None)]);
    at(&mut conn, "2026-11-25 12:00:00");
    for (delta, moment) in
        [(1, "2026-11-25 09:10:00"), (2, "2026-11-25 11:59:59"), (4, "2026-01-31 00:00:00")]
    {
        conn.exec_drop("CALL counter_add_at('c', ?, ?)", (delta, moment)).unwrap();
    }
    assert_eq!(
        series(&mut conn, "c", "hour", "2026-11-25 08:30:00", "2026-11-25 12:00:00"),
        [
            ("2026-11-25 09:00:00".to_owned(), 1),
            ("2026-11-25 10:00:00".to_owned(), 0),
            ("2026-11-25 11:00:00".to_owned(), 2),
        ],
        "from rounds up to a bucket's start, to is not in the range"
    );
    let months = series(&mut conn, "c", "month", "2025-12-01", "2026-03-01 00:00:01");
    assert_eq!(
        months.iter().map(|(start, value)| (&start[..10], *value)).collect::<Vec<_>>(),
        [("2025-12-01", 0), ("2026-01-01", 4), ("2026-02-01", 0), ("2026-03-01", 0)]
    );
    assert_eq!(series(&mut conn, "c", "hour", "2026-11-25 12:00:00", "2026-11-25 12:00:00"), []);
    // 4,096 hours from 2026-01-01: the most a series reads.
    let rows: Vec<mysql::Row> =
        conn.query("CALL counter_series('c', 'hour', '2026-01-01 00:00:00', '2026-06-20 16:00:00')").unwrap();
    assert_eq!(rows.len(), 4096);
}

/// Periods, keeps, moments and ranges a routine cannot use are refused with
/// 9003 (9001 for a counter that does not exist), changing nothing.
fn bad_periods_ranges_and_moments_are_refused() {
    let db = with_package();
    let mut conn = db.conn();
    tracked(&mut conn, "c", 4, &[("day", None)]);
    for (call, code, says) in [
        (
            "CALL counter_track('c', 'week', NULL)",
            errno::INVALID_ARGUMENT,
            "period must be 'minute', 'hour', 'day' or 'month', not 'week'",
        ),
        ("CALL counter_track('c', 'Hour', NULL)", errno::INVALID_ARGUMENT, "not 'Hour'"),
        ("CALL counter_track('c', 'hour ', NULL)", errno::INVALID_ARGUMENT, "not 'hour '"),
        ("CALL counter_track('c', NULL, NULL)", errno::INVALID_ARGUMENT, "not NULL"),
        (
            "CALL counter_track('c', 'hour', -1)",
            errno::INVALID_ARGUMENT,
            "keep must be NULL or a whole number",
        ),
        ("CALL counter_track('c', 'hour', 2.5)", errno::INVALID_ARGUMENT, "keep must be"),
        ("CALL counter_track('c', 'hour', 4294967296)", errno::INVALID_ARGUMENT, "keep must be"),
        ("CALL counter_track('missing', 'hour', NULL)", errno::UNKNOWN_COUNTER, "unknown counter: 'missing'"),
        (
            "CALL counter_series('c', 'hour', '2026-01-01', '2026-01-02')",
            errno::INVALID_ARGUMENT,
            "untracked period 'hour'",
        ),
        (
            "CALL counter_series('missing', 'day', '2026-01-01', '2026-01-02')",
            errno::UNKNOWN_COUNTER,
            "unknown counter",
        ),
        (
            "CALL counter_series('c', 'day', NULL, '2026-01-02')",
            errno::INVALID_ARGUMENT,
            "from must be a UTC time",
        ),
        (
            "CALL counter_series('c', 'day', '2026-01-01', '2040-01-02')",
            errno::INVALID_ARGUMENT,
            "at most 4096 buckets",
        ),
        ("SELECT counter_get_period('c', 'weeks', '2026-01-01')", errno::INVALID_ARGUMENT, "period must be"),
        (
            "SELECT counter_get_range('c', 'weeks', '2026-01-01', '2026-01-02')",
            errno::INVALID_ARGUMENT,
            "period must be",
        ),
    ] {
        // Rows are read: a function's error arrives in place of its row.
        let (refused, message) = server_error(conn.query::<mysql::Row, _>(call).expect_err(call));
        assert_eq!(refused, code, "{call}: {message}");
        assert!(message.contains(says), "{call}: {message}");
    }
    let periods: Vec<String> = conn.query("SELECT CAST(period AS CHAR) FROM counter_periods").unwrap();
    assert_eq!(periods, ["day"], "nothing tracked by a refused call");
    assert_eq!(period(&mut conn, "c", "day", "2026-01-01"), Some(0));
    let nothing: Option<Option<i64>> =
        conn.query_first("SELECT counter_get_period('c', 'day', NULL)").unwrap();
    assert_eq!(nothing, Some(None), "no moment, no bucket");
}

/// Every committed package counts per period: lazy counters (tracked
/// before they exist, their slot rows created by the writes), fixed slots,
/// per-connection slots, and the cluster packages on one server.
fn every_committed_package_counts_per_period() {
    for (dir, _) in support::committed_with(Feature::Periods) {
        let db = with_committed(dir);
        let mut conn = db.conn();
        if !dir.contains("auto-create") {
            conn.query_drop("CALL counter_setup('c', 'd', NULL, NULL)").unwrap();
        }
        conn.query_drop("CALL counter_track('c', 'hour', NULL)").unwrap();
        at(&mut conn, "2026-11-25 12:00:00");
        conn.query_drop("CALL counter_increment('c')").unwrap();
        conn.query_drop(r#"CALL counter_add_many('{"c": 10}')"#).unwrap();
        conn.exec_drop("CALL counter_add_once(?, 'c', 100)", (b"write-id-0000001".to_vec(),)).unwrap();
        conn.query_drop("CALL counter_add_at('c', 1000, '2026-11-25 11:00:00')").unwrap();
        assert_eq!(total(&mut conn, "c"), Some(1111), "{dir}");
        assert_eq!(
            buckets(&mut conn, "c"),
            BTreeMap::from([
                bucket("hour", "2026-11-25 11:00:00", 1000),
                bucket("hour", "2026-11-25 12:00:00", 111)
            ]),
            "{dir}"
        );
        conn.query_drop("CALL counter_reset('c', 0, FALSE)").unwrap();
        assert_eq!(
            period(&mut conn, "c", "hour", "2026-11-25 12:00:00"),
            Some(111),
            "{dir}: a reset keeps history"
        );
    }
}

/// A write of a counter that tracks no period is one UPDATE of its slot:
/// with `counter_periods` locked by another session, it still goes
/// through, where a tracked counter's write waits for the lock (and here
/// gives up after a second). The slots learn of a track and of its end,
/// and slots a resize adds follow the others.
fn only_the_writes_of_a_tracked_counter_look_at_the_periods() {
    let db = with_package();
    let mut conn = db.conn();
    conn.query_drop("SET SESSION lock_wait_timeout = 1").unwrap();
    conn.query_drop("CALL counter_setup('plain', 'd', 4, NULL)").unwrap();
    tracked(&mut conn, "views", 4, &[("minute", None)]);
    let mut holder = db.conn();
    let periods_locked = |conn: &mut PooledConn, holder: &mut PooledConn, name: &str, writes: u32| {
        holder.query_drop("LOCK TABLES counter_periods WRITE").unwrap();
        let outcome = (0..writes).try_for_each(|_| conn.exec_drop("CALL counter_increment(?)", (name,)));
        holder.query_drop("UNLOCK TABLES").unwrap();
        outcome.map_err(|error| support::server_error(error).0)
    };

    assert_eq!(periods_locked(&mut conn, &mut holder, "plain", 40), Ok(()));
    assert_eq!(periods_locked(&mut conn, &mut holder, "views", 1), Err(server_errno::LOCK_WAIT_TIMEOUT));

    conn.query_drop("CALL counter_resize('plain', 16)").unwrap();
    assert_eq!(
        periods_locked(&mut conn, &mut holder, "plain", 60),
        Ok(()),
        "the new slots skip the look too"
    );
    conn.query_drop("CALL counter_track('views', 'minute', 0)").unwrap();
    assert_eq!(periods_locked(&mut conn, &mut holder, "views", 20), Ok(()), "no period tracked any more");
    conn.query_drop("CALL counter_track('plain', 'hour', NULL)").unwrap();
    assert_eq!(periods_locked(&mut conn, &mut holder, "plain", 1), Err(server_errno::LOCK_WAIT_TIMEOUT));

    // A tracked counter grown: its new slots count in its buckets too.
    conn.query_drop("CALL counter_resize('plain', 32)").unwrap();
    at(&mut conn, "2026-11-24 10:15:30");
    for _ in 0..64 {
        conn.query_drop("CALL counter_increment('plain')").unwrap();
    }
    assert_eq!(period(&mut conn, "plain", "hour", "2026-11-24 10:00:00"), Some(64));
    assert_eq!(total(&mut conn, "plain"), Some(40 + 60 + 64));
    assert_eq!(total(&mut conn, "views"), Some(20));
}

/// A slot table made before `untracked` gains it on install, set for the
/// counters that track no period and for no other: a tracked counter's
/// writes still count in its buckets, and the others' skip the periods.
fn an_upgrade_marks_untracked_only_the_counters_that_track_no_period() {
    let db = support::with_own_package(&PackageOptions::default());
    let mut conn = db.conn();
    conn.query_drop("CALL counter_setup('plain', 'd', 4, NULL)").unwrap();
    tracked(&mut conn, "views", 4, &[("day", Some(7))]);
    conn.query_drop("ALTER TABLE counters DROP COLUMN untracked").unwrap();

    support::install_package(&db, &PackageOptions::default());
    let untracked: Vec<(String, bool)> = conn
        .query(
            "SELECT counter_name, MIN(untracked) FROM counters GROUP BY counter_name ORDER BY counter_name",
        )
        .unwrap();
    assert_eq!(untracked, [("plain".to_owned(), true), ("views".to_owned(), false)]);
    at(&mut conn, "2026-11-24 10:15:30");
    conn.query_drop("CALL counter_increment('views')").unwrap();
    assert_eq!(period(&mut conn, "views", "day", "2026-11-24"), Some(1));

    conn.query_drop("CALL counter_track('views', 'day', 0)").unwrap();
    support::install_package(&db, &PackageOptions::default());
    let untracked: Vec<bool> =
        conn.query("SELECT untracked FROM counters WHERE counter_name = 'views'").unwrap();
    assert_eq!(untracked, [true; 4], "the track's end set them; a second install kept them");
}
