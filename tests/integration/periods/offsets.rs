//! Periods whose buckets start at a fixed offset from UTC
//! (`counter_track_at_offset`): a customer's day, and its quota, start at
//! the customer's midnight; series, ranges and expiry follow the offset; an
//! offset stays while buckets are kept; and a point read of a moment past
//! now, a local time taken for UTC, is refused.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mysql::PooledConn;
use mysql::prelude::Queryable;
use slotted_counters::sqlx::mysql::MySqlPoolOptions;
use slotted_counters::{AsyncCounters, CounterError, Counters, Keep, PackageOptions, Period, UtcOffset};
use slotted_counters_core::package::errno;

use super::quotas::{limit_row, refusal, room};
use super::routines::series;
use super::{at, bucket, buckets, period, with_package};
use crate::support::{on_each_server, server_error, total};

on_each_server!(
    a_day_quota_at_plus_eight_resets_at_sixteen_utc,
    hours_and_months_at_a_quarter_hour_offset_start_at_its_minutes,
    expiry_keeps_the_last_buckets_of_a_day_west_of_utc,
    an_offset_stays_while_the_period_keeps_buckets,
    a_point_read_past_now_is_refused_and_a_range_may_end_in_the_future,
    the_clients_track_at_an_offset_and_read_series_in_it,
);

/// The refusal of a call or a read (9003), its message: read as rows, as
/// a function's error comes with its row.
fn invalid(conn: &mut PooledConn, sql: &str) -> String {
    let error = conn.query::<mysql::Row, _>(sql).expect_err(sql);
    let (code, message) = server_error(error);
    assert_eq!(code, errno::INVALID_ARGUMENT, "{message}");
    message
}

/// Where counter `name`'s buckets of `period` start, in minutes.
fn utc_offset(conn: &mut PooledConn, name: &str, period: &str) -> Option<i32> {
    conn.exec_first("SELECT counter_utc_offset(?, ?)", (name, period)).unwrap().flatten()
}

/// A day quota of 10 at +08:00 (Shanghai): the day fills at 15:59 UTC and
/// its room comes back whole at 16:00 UTC, the midnight there, as the room
/// and every refusal say; each day's bucket starts at 16:00 UTC, reads
/// and series find it there, and a late write at 12:00 UTC counts against
/// the day that ends at 16:00.
fn a_day_quota_at_plus_eight_resets_at_sixteen_utc() {
    let db = with_package();
    let mut conn = db.conn();
    conn.query_drop("CALL counter_setup('q', 'quota', 8, NULL)").unwrap();
    conn.query_drop("CALL counter_track_at_offset('q', 'day', NULL, 480)").unwrap();
    conn.query_drop("CALL counter_limit('q', 'day', 10)").unwrap();
    assert_eq!(utc_offset(&mut conn, "q", "day"), Some(480), "a limit keeps the period's offset");
    at(&mut conn, "2026-03-10 15:59:00");
    for _ in 0..10 {
        conn.query_drop("CALL counter_increment('q')").unwrap();
    }
    assert_eq!(
        refusal(&mut conn, "CALL counter_increment(?)", "q"),
        "the write would pass the day limit 10 (room left: 0, resets 2026-03-10 16:00:00), for counter: 'q'"
    );
    assert_eq!(room(&mut conn, "q"), [limit_row("day", 10, 10, 0, "2026-03-10 16:00:00")]);

    at(&mut conn, "2026-03-10 16:00:00");
    assert_eq!(room(&mut conn, "q"), [limit_row("day", 10, 0, 10, "2026-03-11 16:00:00")]);
    for _ in 0..10 {
        conn.query_drop("CALL counter_increment('q')").unwrap();
    }
    assert_eq!(
        refusal(&mut conn, "CALL counter_increment(?)", "q"),
        "the write would pass the day limit 10 (room left: 0, resets 2026-03-11 16:00:00), for counter: 'q'"
    );
    let late = refusal(&mut conn, "CALL counter_add_at(?, 1, '2026-03-10 12:00:00')", "q");
    assert!(late.contains("(room left: 0, resets 2026-03-10 16:00:00)"), "the day before's room: {late}");

    assert_eq!(
        buckets(&mut conn, "q"),
        [bucket("day", "2026-03-09 16:00:00", 10), bucket("day", "2026-03-10 16:00:00", 10)].into(),
    );
    assert_eq!(period(&mut conn, "q", "day", "2026-03-10 15:59:59"), Some(10));
    assert_eq!(period(&mut conn, "q", "day", "2026-03-10 08:00:00"), Some(10), "the same day at +08:00");
    assert_eq!(period(&mut conn, "q", "day", "2026-03-10 16:00:00"), Some(10));
    assert_eq!(period(&mut conn, "q", "day", "2026-03-09 15:59:59"), Some(0));
    assert_eq!(
        series(&mut conn, "q", "day", "2026-03-09 00:00:00", "2026-03-11 00:00:00"),
        [("2026-03-09 16:00:00".to_owned(), 10), ("2026-03-10 16:00:00".to_owned(), 10)]
    );
    let range: Option<i64> = conn
        .query_first("SELECT counter_get_range('q', 'day', '2026-03-10 16:00:00', '2026-03-11 16:00:00')")
        .unwrap()
        .flatten();
    assert_eq!(range, Some(10), "a range of UTC times holds the buckets that start in it");
    assert_eq!(total(&mut conn, "q"), Some(20));
}

/// At +05:45 (Kathmandu) an hour starts at a quarter past the UTC hour, and
/// a month at its local midnight of the 1st: February's bucket starts on 31
/// January at 18:15 UTC and ends on 28 February at 18:15 UTC, and March's
/// ends on 31 March (not a month after 28 February), as a limit's reset
/// says.
fn hours_and_months_at_a_quarter_hour_offset_start_at_its_minutes() {
    let db = with_package();
    let mut conn = db.conn();
    conn.query_drop("CALL counter_setup('k', 'd', 4, NULL)").unwrap();
    conn.query_drop("CALL counter_track_at_offset('k', 'hour', NULL, 345)").unwrap();
    conn.query_drop("CALL counter_track_at_offset('k', 'month', NULL, 345)").unwrap();
    conn.query_drop("CALL counter_limit('k', 'month', 100)").unwrap();
    at(&mut conn, "2026-01-31 18:20:00");
    conn.query_drop("CALL counter_add('k', 3)").unwrap();
    conn.query_drop("CALL counter_add_at('k', 2, '2026-01-31 18:14:59')").unwrap();
    conn.query_drop(r#"CALL counter_add_many('{"k": 4}')"#).unwrap();
    assert_eq!(
        buckets(&mut conn, "k"),
        [
            bucket("hour", "2026-01-31 17:15:00", 2),
            bucket("hour", "2026-01-31 18:15:00", 7),
            bucket("month", "2025-12-31 18:15:00", 2),
            bucket("month", "2026-01-31 18:15:00", 7),
        ]
        .into(),
    );
    assert_eq!(room(&mut conn, "k"), [limit_row("month", 100, 7, 93, "2026-02-28 18:15:00")]);
    at(&mut conn, "2026-03-01 00:00:00");
    assert_eq!(
        room(&mut conn, "k"),
        [limit_row("month", 100, 0, 100, "2026-03-31 18:15:00")],
        "March there starts on 28 February at 18:15 UTC, and ends with March"
    );
    assert_eq!(
        series(&mut conn, "k", "month", "2026-01-01 00:00:00", "2026-04-01 00:00:00"),
        [
            ("2026-01-31 18:15:00".to_owned(), 7),
            ("2026-02-28 18:15:00".to_owned(), 0),
            ("2026-03-31 18:15:00".to_owned(), 0),
        ]
    );
}

/// A day at -05:00 that keeps 2 buckets: expiry drops the days before the
/// one before the current one, each starting at 05:00 UTC, and a late
/// write to a day no longer kept counts in the total alone.
fn expiry_keeps_the_last_buckets_of_a_day_west_of_utc() {
    let db = with_package();
    let mut conn = db.conn();
    conn.query_drop("CALL counter_setup('w', 'd', 2, NULL)").unwrap();
    conn.query_drop("CALL counter_track_at_offset('w', 'day', 2, -300)").unwrap();
    for moment in ["2026-05-01 04:59:59", "2026-05-01 05:00:00", "2026-05-02 05:00:00", "2026-05-03 04:00:00"]
    {
        at(&mut conn, moment);
        conn.query_drop("CALL counter_increment('w')").unwrap();
    }
    conn.query_drop("CALL counter_expire_periods()").unwrap();
    assert_eq!(
        buckets(&mut conn, "w"),
        [bucket("day", "2026-05-01 05:00:00", 1), bucket("day", "2026-05-02 05:00:00", 2)].into(),
        "the current day (from 2 May 05:00 UTC) and the one before"
    );
    conn.query_drop("CALL counter_add_at('w', 5, '2026-05-01 04:00:00')").unwrap();
    assert_eq!(buckets(&mut conn, "w").len(), 2, "a day no longer kept gains no bucket");
    assert_eq!(total(&mut conn, "w"), Some(9));
}

/// A period tracked at an offset keeps it: tracked again without one, it
/// keeps its offset; at another, it is refused until untracked; bad
/// offsets are refused with what was passed.
fn an_offset_stays_while_the_period_keeps_buckets() {
    let db = with_package();
    let mut conn = db.conn();
    conn.query_drop("CALL counter_setup('s', 'd', 2, NULL)").unwrap();
    assert_eq!(utc_offset(&mut conn, "s", "day"), None, "untracked");
    conn.query_drop("CALL counter_track_at_offset('s', 'day', NULL, 480)").unwrap();
    conn.query_drop("CALL counter_increment('s')").unwrap();
    conn.query_drop("CALL counter_track('s', 'day', 30)").unwrap();
    assert_eq!(utc_offset(&mut conn, "s", "day"), Some(480));
    assert_eq!(
        invalid(&mut conn, "CALL counter_track_at_offset('s', 'day', 30, 0)"),
        "the day starts at UTC offset 480 (minutes): untrack it (keep 0) before moving it to 0, for counter: 's'"
    );
    let kept: Vec<(Option<u32>, i32)> =
        conn.query("SELECT keep, utc_offset FROM counter_periods WHERE counter_name = 's'").unwrap();
    assert_eq!(kept, [(Some(30), 480)], "the refused call changed nothing");
    assert_eq!(buckets(&mut conn, "s").values().sum::<i64>(), 1);
    conn.query_drop("CALL counter_track_at_offset('s', 'day', 0, NULL)").unwrap();
    conn.query_drop("CALL counter_track_at_offset('s', 'day', NULL, 0)").unwrap();
    assert_eq!(utc_offset(&mut conn, "s", "day"), Some(0));
    assert!(buckets(&mut conn, "s").is_empty(), "untracking dropped the buckets at 480");
    for (bad, shown) in [("841", "841"), ("-721", "-721"), ("1.5", "1.5"), ("'+08:00'", "'+08:00'")] {
        let message = invalid(&mut conn, &format!("CALL counter_track_at_offset('s', 'hour', NULL, {bad})"));
        assert_eq!(
            message,
            format!(
                "utc offset must be NULL or a whole number of minutes from -720 to 840, not {shown}, for counter: 's'"
            )
        );
    }
    assert_eq!(utc_offset(&mut conn, "s", "hour"), None, "no refused call tracked the hour");
}

/// A point read of a moment more than 5 minutes past the server's now (a
/// local time east of UTC taken for UTC) is refused; one a little ahead
/// (a client's clock) reads the current bucket; a range or a series may end
/// in the future.
fn a_point_read_past_now_is_refused_and_a_range_may_end_in_the_future() {
    let db = with_package();
    let mut conn = db.conn();
    conn.query_drop("CALL counter_setup('p', 'd', 2, NULL)").unwrap();
    conn.query_drop("CALL counter_track('p', 'hour', NULL)").unwrap();
    at(&mut conn, "2026-06-01 10:20:00");
    conn.query_drop("CALL counter_add('p', 4)").unwrap();
    let local_taken_for_utc = "SELECT counter_get_period('p', 'hour', '2026-06-01 15:20:00')";
    assert_eq!(
        invalid(&mut conn, local_taken_for_utc),
        "the moment must be a UTC time at most 300 seconds past now (a local time taken for UTC?), \
         not 2026-06-01 15:20:00.000000"
    );
    assert_eq!(period(&mut conn, "p", "hour", "2026-06-01 10:25:00"), Some(4), "five minutes ahead");
    invalid(&mut conn, "SELECT counter_get_period('p', 'hour', '2026-06-01 10:25:00.000001')");
    let range: Option<i64> = conn
        .query_first("SELECT counter_get_range('p', 'hour', '2026-06-01 00:00:00', '2026-06-02 00:00:00')")
        .unwrap()
        .flatten();
    assert_eq!(range, Some(4));
    assert_eq!(
        series(&mut conn, "p", "hour", "2026-06-01 10:00:00", "2026-06-01 12:00:00"),
        [("2026-06-01 10:00:00".to_owned(), 4), ("2026-06-01 11:00:00".to_owned(), 0)]
    );
}

/// Both clients track a day at +08:00 and read a series whose buckets start
/// at 16:00 UTC, a bucket of the future read as 0; the plain mode, which
/// counts at UTC only, refuses both the offset and a write to a counter
/// tracked at one.
fn the_clients_track_at_an_offset_and_read_series_in_it() {
    let db = with_package();
    let mut conn = db.conn();
    conn.query_drop("CALL counter_setup('c', 'd', 4, NULL)").unwrap();
    conn.query_drop("CALL counter_setup('async', 'd', 4, NULL)").unwrap();
    let shanghai = UtcOffset::minutes(480).unwrap();
    let counters = Counters::new(db.pool().clone()).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let async_counters = runtime.block_on(async {
        let pool = MySqlPoolOptions::new().connect(&db.url()).await.unwrap();
        AsyncCounters::new(pool).unwrap()
    });
    counters.track_at_offset("c", Period::Day, Keep::All, shanghai).unwrap();
    runtime.block_on(async_counters.track_at_offset("async", Period::Day, Keep::All, shanghai)).unwrap();
    counters.add("c", 3).unwrap();
    runtime.block_on(async_counters.add("async", 3)).unwrap();

    let now = SystemTime::now();
    let day = Duration::from_secs(86_400);
    let sixteen =
        |start: SystemTime| start.duration_since(UNIX_EPOCH).unwrap().as_secs() % 86_400 == 16 * 3_600;
    let sync_series = counters.series("c", Period::Day, now - 2 * day, now + day).unwrap();
    let async_series =
        runtime.block_on(async_counters.series("async", Period::Day, now - 2 * day, now + day));
    for series in [sync_series, async_series.unwrap()] {
        assert_eq!(series.len(), 3, "{series:?}");
        assert!(series.iter().all(|&(start, _)| sixteen(start)), "{series:?}");
        let current = series.iter().position(|&(start, _)| start <= now && now < start + day).unwrap();
        assert_eq!(series[current].1, 3, "{series:?}");
        assert_eq!(series.iter().map(|&(_, value)| value).sum::<i64>(), 3, "{series:?}");
    }
    let refused = counters.track_at_offset("c", Period::Day, Keep::All, UtcOffset::UTC).unwrap_err();
    assert!(
        matches!(&refused, CounterError::InvalidArgument { message, .. } if message.contains("before moving it"))
    );

    let plain =
        Counters::builder(db.pool().clone()).package(&PackageOptions::default()).plain_sql().build().unwrap();
    for refused in [
        plain.track_at_offset("c", Period::Hour, Keep::All, shanghai).unwrap_err(),
        plain.add("c", 1).unwrap_err(),
    ] {
        assert!(
            matches!(&refused, CounterError::InvalidArgument { message, .. }
                if message.starts_with("the plain mode counts periods at UTC only")),
            "{refused:?}"
        );
    }
    assert_eq!(total(&mut conn, "c"), Some(3), "the plain mode wrote nothing");
}
