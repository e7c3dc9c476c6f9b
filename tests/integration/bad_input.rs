//! Bad input answered by the package, whatever the calling session: the
//! defects a sweep of about 750 bad inputs per server found in the newer
//! routines, each checked from four sessions, strict and not (`sql_mode`
//! ''), at UTC-12:00 and UTC+13:00. A refusal is one of the package's
//! numbers (9003, 9004), never the server's, and changes nothing.

use mysql::prelude::Queryable;
use mysql::{Conn, Opts};
use slotted_counters_core::package::errno;

use crate::support::{Database, on_each_server, random_write_id_hex, server_error};

on_each_server!(
    a_write_id_counts_once_whatever_the_time_zones_of_its_writer_and_its_forgetter,
    the_largest_keeps_neither_stop_expiry_nor_break_writes,
    a_write_past_bigint_is_refused_by_the_package_on_every_path,
    numbers_that_are_not_whole_are_refused_in_every_session,
    moments_with_an_offset_or_a_zero_date_are_refused_in_every_session,
    a_restock_through_a_write_id_is_spread_as_counter_add_spreads_it,
    a_batch_with_a_nul_character_or_nested_too_deep_is_refused,
    a_bucket_that_would_pass_bigint_refuses_the_write,
);

/// The sessions every check runs in: its `sql_mode` and time zone.
const SESSIONS: [(&str, &str); 4] = [
    ("STRICT_ALL_TABLES", "-12:00"),
    ("STRICT_ALL_TABLES", "+13:00"),
    ("", "-12:00"),
    ("ANSI_QUOTES,NO_BACKSLASH_ESCAPES", "+13:00"),
];

/// A connection of its own to `db`, in `sql_mode` at `zone`.
fn session(db: &Database, (sql_mode, zone): (&str, &str)) -> Conn {
    let mut conn = Conn::new(Opts::from_url(&db.url()).unwrap()).unwrap();
    conn.exec_drop("SET SESSION sql_mode = ?, time_zone = ?", (sql_mode, zone)).unwrap();
    conn
}

/// The package's error number of `sql`, which must fail.
fn refused(conn: &mut Conn, sql: &str) -> (u16, String) {
    match conn.query::<mysql::Row, _>(sql) {
        Ok(rows) => panic!("{sql} was accepted: {rows:?}"),
        Err(error) => server_error(error),
    }
}

/// Asserts that `sql` is refused with `code`, its message containing `words`.
fn assert_refused(conn: &mut Conn, sql: &str, code: u16, words: &str) {
    let (found, message) = refused(conn, sql);
    assert_eq!(found, code, "{sql}: {message}");
    assert!(message.contains(words), "{sql}: {message}");
}

/// Everything a counter's rows hold: its slots (with their bounds), its
/// periods and its buckets.
fn rows_of(conn: &mut Conn, name: &str) -> Vec<String> {
    let mut rows: Vec<String> = conn
        .exec(
            "SELECT CONCAT_WS(' ', 'slot', counter_id, counter, lowest, highest) FROM counters \
             WHERE counter_name = ? ORDER BY counter_id",
            (name,),
        )
        .unwrap();
    rows.extend(
        conn.exec::<String, _, _>(
            "SELECT CONCAT_WS(' ', 'period', period, keep) FROM counter_periods WHERE counter_name = ? ORDER BY 1",
            (name,),
        )
        .unwrap(),
    );
    rows.extend(
        conn.exec::<String, _, _>(
            "SELECT CONCAT_WS(' ', 'bucket', period, bucket_start, counter_id, counter) FROM counter_buckets \
             WHERE counter_name = ? ORDER BY 1",
            (name,),
        )
        .unwrap(),
    );
    rows
}

/// A total through `counter_get`.
fn total(conn: &mut Conn, name: &str) -> Option<i64> {
    conn.exec_first("SELECT counter_get(?)", (name,)).unwrap().flatten()
}

/// A write id no call has used, as an SQL literal.
fn fresh_id() -> String {
    format!("X'{}'", random_write_id_hex())
}

/// A database with the default package.
fn package() -> Database {
    crate::support::with_default_package(&[])
}

/// Ids are stamped and forgotten in UTC: an id written from a session at
/// UTC-12:00 looked twelve hours old to a writer at UTC, whose writes
/// forget ids as they go, and to `counter_forget_writes(600)` from a
/// session at UTC+14:00, which deleted it at once: its resend counted
/// again. Written from each session and forgotten from each other one, it
/// counts once, in the total and in the bucket.
fn a_write_id_counts_once_whatever_the_time_zones_of_its_writer_and_its_forgetter() {
    let db = package();
    let mut admin = session(&db, SESSIONS[0]);
    admin.query_drop("CALL counter_setup('ids', 'd', 4, NULL)").unwrap();
    admin.query_drop("CALL counter_setup('other', 'd', 4, NULL)").unwrap();
    admin.query_drop("CALL counter_track('ids', 'day', NULL)").unwrap();
    let zones = [("STRICT_ALL_TABLES", "-12:00"), ("STRICT_ALL_TABLES", "+13:00"), ("", "+00:00")];
    let mut sent = 0;
    for writer in zones {
        for forgetter in zones {
            let id = random_write_id_hex();
            let mut writing = session(&db, writer);
            writing.exec_drop("CALL counter_add_once(UNHEX(?), 'ids', 1)", (&id,)).unwrap();
            sent += 1;
            let mut forgetting = session(&db, forgetter);
            forgetting.query_drop("CALL counter_forget_writes(600)").unwrap();
            // A writer forgets up to 64 expired ids once in 16 writes.
            for _ in 0..64 {
                forgetting
                    .exec_drop("CALL counter_add_once(UNHEX(?), 'other', 1)", (random_write_id_hex(),))
                    .unwrap();
            }
            writing.exec_drop("CALL counter_add_once(UNHEX(?), 'ids', 1)", (&id,)).unwrap();
            assert_eq!(
                total(&mut admin, "ids"),
                Some(sent),
                "written at {writer:?}, forgotten at {forgetter:?}"
            );
        }
    }
    let bucket: Option<i64> =
        admin.query_first("SELECT counter_get_period('ids', 'day', UTC_TIMESTAMP())").unwrap().flatten();
    assert_eq!(bucket, Some(sent), "the day's bucket counted each write once");
}

/// A `keep` as large as the routines take (4294967295) reaches before the
/// year 0, and so did 741,000 days, 24,400 months and 17.8 million hours:
/// `counter_expire_periods` failed with 1441 at the first counter with
/// one, expiring no counter after it; writes of such a counter failed with
/// 1441 on MySQL and counted in no bucket on MariaDB.
fn the_largest_keeps_neither_stop_expiry_nor_break_writes() {
    let db = package();
    for (sql_mode, zone) in SESSIONS {
        let mut conn = session(&db, (sql_mode, zone));
        conn.query_drop("DELETE FROM counters").unwrap();
        conn.query_drop("DELETE FROM counter_periods").unwrap();
        conn.query_drop("DELETE FROM counter_buckets").unwrap();
        conn.query_drop("DELETE FROM counter_tracked_writes").unwrap();
        for (name, keeps) in [
            ("a_long", [4_294_967_295_u64; 4]),
            ("b_long", [17_800_000, 17_800_000, 741_000, 24_400]),
            ("c_short", [1, 1, 1, 1]),
        ] {
            conn.exec_drop("CALL counter_setup(?, 'd', 2, NULL)", (name,)).unwrap();
            for (period, keep) in ["minute", "hour", "day", "month"].into_iter().zip(keeps) {
                conn.exec_drop("CALL counter_track(?, ?, ?)", (name, period, keep)).unwrap();
            }
            conn.exec_drop("CALL counter_add(?, 3)", (name,)).unwrap();
            conn.exec_drop("CALL counter_add_at(?, 4, UTC_TIMESTAMP() - INTERVAL 40 DAY)", (name,)).unwrap();
        }
        for name in ["a_long", "b_long"] {
            let buckets: Vec<(String, i64)> = conn
                .exec(
                    "SELECT CAST(period AS CHAR), CAST(SUM(counter) AS SIGNED) FROM counter_buckets \
                     WHERE counter_name = ? GROUP BY period ORDER BY period",
                    (name,),
                )
                .unwrap();
            let seven = |period: &str| (period.to_owned(), 7);
            assert_eq!(
                buckets,
                [seven("minute"), seven("hour"), seven("day"), seven("month")],
                "{name} in {sql_mode:?} at {zone}"
            );
        }
        conn.query_drop("CALL counter_expire_periods()").unwrap();
        let old: u32 = conn
            .query_first(
                "SELECT COUNT(*) FROM counter_buckets WHERE counter_name = 'c_short' \
                 AND bucket_start < UTC_TIMESTAMP() - INTERVAL 39 DAY",
            )
            .unwrap()
            .unwrap();
        assert_eq!(old, 0, "the counter after the long keeps expired in {sql_mode:?} at {zone}");
        let kept: u32 = conn
            .query_first("SELECT COUNT(*) FROM counter_buckets WHERE counter_name = 'a_long'")
            .unwrap()
            .unwrap();
        assert!(kept >= 8, "a keep of every bucket drops none: {kept}");
    }
}

/// A delta that takes a slot or a total past BIGINT got the server's 1690
/// on all five write paths, where a counter with a ceiling of 100 is to
/// answer 9004 and an unbounded one the slot bound's 9003.
fn a_write_past_bigint_is_refused_by_the_package_on_every_path() {
    let db = package();
    let mut admin = session(&db, SESSIONS[0]);
    admin.query_drop("CALL counter_setup('capped', 'd', 4, 50)").unwrap();
    admin.query_drop("CALL counter_bound('capped', NULL, 100)").unwrap();
    admin.query_drop("CALL counter_setup('open', 'd', 4, 50)").unwrap();
    admin.query_drop("CALL counter_setup('tracked', 'd', 4, 50)").unwrap();
    admin.query_drop("CALL counter_track('tracked', 'day', NULL)").unwrap();
    admin.query_drop("CALL counter_bound('tracked', NULL, 100)").unwrap();
    let names = ["capped", "open", "tracked"];
    let before = names.map(|name| rows_of(&mut admin, name));
    let max = i64::MAX;
    for sessions in SESSIONS {
        let mut conn = session(&db, sessions);
        for (name, code) in
            [("capped", errno::PAST_BOUND), ("tracked", errno::PAST_BOUND), ("open", errno::INVALID_ARGUMENT)]
        {
            for sql in [
                format!("CALL counter_add('{name}', {max})"),
                format!("CALL counter_add_at('{name}', {max}, UTC_TIMESTAMP())"),
                format!("CALL counter_add_once({}, '{name}', {max})", fresh_id()),
                format!(r#"CALL counter_add_many('{{"{name}": {max}}}')"#),
                format!(r#"CALL counter_add_many_once({}, '{{"{name}": {max}}}')"#, fresh_id()),
            ] {
                let (found, message) = refused(&mut conn, &sql);
                assert_eq!(found, code, "{sql} in {sessions:?}: {message}");
            }
        }
    }
    assert_eq!(names.map(|name| rows_of(&mut admin, name)), before, "nothing refused changed a row");
    for name in names {
        assert_eq!(total(&mut admin, name), Some(50), "{name}");
    }
}

/// A session whose sql_mode is not strict turned `'abc'` into 0 and
/// `'5abc'` into 5 on their way into a numeric parameter, with only a
/// warning: `counter_track(n, 'day', 'abc')` acted as keep 0 and dropped
/// the day's buckets, `counter_reset(n, 'abc', 0)` zeroed the counter,
/// `counter_bound(n, 'abc', NULL)` set a floor of 0, `counter_add(n, '5abc')`
/// added 5. Refused now in every session, changing nothing; a number
/// written as a decimal or with an exponent still counts.
fn numbers_that_are_not_whole_are_refused_in_every_session() {
    let db = package();
    let mut admin = session(&db, SESSIONS[0]);
    admin.query_drop("CALL counter_setup('n', 'd', 4, 10)").unwrap();
    admin.query_drop("CALL counter_track('n', 'day', NULL)").unwrap();
    admin.query_drop("CALL counter_add('n', 5)").unwrap();
    let before = rows_of(&mut admin, "n");
    for sessions in SESSIONS {
        let mut conn = session(&db, sessions);
        for (sql, words) in [
            ("CALL counter_track('n', 'day', 'abc')", "keep must be NULL or a whole number"),
            ("CALL counter_reset('n', 'abc', 0)", "value must be an integer"),
            ("CALL counter_bound('n', 'abc', NULL)", "a bound must be NULL or a whole number"),
            ("CALL counter_bound('n', NULL, '7 apples')", "a bound must be NULL or a whole number"),
            ("CALL counter_add('n', '5abc')", "delta must be an integer"),
            ("CALL counter_add('n', '')", "delta must be an integer"),
            ("CALL counter_add('n', ' 5')", "delta must be an integer"),
            ("CALL counter_add('n', '1e-40')", "delta must be an integer"),
            ("CALL counter_add('n', '0x10')", "delta must be an integer"),
            ("CALL counter_add_at('n', 'abc', UTC_TIMESTAMP())", "delta must be an integer"),
            (
                format!("CALL counter_add_once({}, 'n', 'abc')", fresh_id()).as_str(),
                "delta must be an integer",
            ),
            ("CALL counter_resize('n', 'abc')", "slots must be a whole number"),
            ("CALL counter_setup('m', 'd', 'abc', NULL)", "slots must be a whole number"),
            ("CALL counter_setup('m', 'd', NULL, '3 dozen')", "initial value must be an integer"),
            ("CALL counter_forget_writes('abc')", "seconds must be a whole number"),
            ("CALL counter_forget_writes(NULL)", "seconds must be a whole number"),
            ("CALL counter_forget_writes(1e30)", "seconds must be a whole number"),
        ] {
            assert_refused(&mut conn, sql, errno::INVALID_ARGUMENT, words);
        }
        assert_eq!(rows_of(&mut conn, "n"), before, "nothing refused changed 'n' in {sessions:?}");
        let created: u32 =
            conn.query_first("SELECT COUNT(*) FROM counters WHERE counter_name = 'm'").unwrap().unwrap();
        assert_eq!(created, 0);
    }
    let mut conn = session(&db, SESSIONS[2]);
    for delta in ["'2.0'", "'1e2'", "'+3'", "4.000"] {
        conn.query_drop(format!("CALL counter_add('n', {delta})")).unwrap();
        conn.query_drop(format!("CALL counter_add('n', -{delta})")).unwrap();
    }
    assert_eq!(total(&mut conn, "n"), Some(15));
}

/// MySQL moved a time written with an offset into the session's zone on
/// its way into a DATETIME parameter: `counter_add_at` with '... +00:00'
/// from a session at UTC-12:00 counted twelve hours off, and
/// `counter_get_period` agreed, so nothing showed it; MariaDB refused the
/// offset. Both refuse it now, as they refuse zero dates (which MariaDB
/// took as moments) and moments past the years a bucket can be computed
/// in (a series past 9999 failed with 1441).
fn moments_with_an_offset_or_a_zero_date_are_refused_in_every_session() {
    let db = package();
    let mut admin = session(&db, SESSIONS[0]);
    admin.query_drop("CALL counter_setup('t', 'd', 4, NULL)").unwrap();
    admin.query_drop("CALL counter_track('t', 'hour', NULL)").unwrap();
    admin.query_drop("CALL counter_track('t', 'month', NULL)").unwrap();
    for sessions in SESSIONS {
        let mut conn = session(&db, sessions);
        let before = rows_of(&mut conn, "t");
        for moment in [
            "2026-01-01 10:00:00 +00:00",
            "2026-01-01 10:00:00+00:00",
            "2026-01-01 10:00:00-12:00",
            "2026-01-01T10:00:00Z",
            "0000-00-00",
            "0000-00-00 00:00:00",
            "2026-00-00",
            "2026-02-30",
            "2026-01-01 24:00:00",
            "garbage",
            "0999-12-31",
        ] {
            for sql in [
                format!("CALL counter_add_at('t', 1, '{moment}')"),
                format!(r#"CALL counter_add_many_at(NULL, '{{"t": 1}}', '{moment}')"#),
                format!("SELECT counter_get_period('t', 'hour', '{moment}')"),
                format!("SELECT counter_get_range('t', 'hour', '{moment}', '2026-01-02')"),
                format!("CALL counter_series('t', 'hour', '{moment}', '2026-01-02')"),
            ] {
                assert_refused(&mut conn, &sql, errno::INVALID_ARGUMENT, "must be a UTC time");
            }
        }
        for end in ["9999-12-15", "9999-12-31 23:59:59"] {
            let sql = format!("CALL counter_series('t', 'month', '9998-12-15', '{end}')");
            assert_refused(&mut conn, &sql, errno::INVALID_ARGUMENT, "must be a UTC time");
        }
        let months: Vec<(String, i64)> = conn
            .query("CALL counter_series('t', 'month', '9998-11-15', '9998-12-31 23:59:59.999999')")
            .unwrap();
        assert_eq!(months, [("9998-12-01 00:00:00".to_owned(), 0)], "the last month there is");
        assert_eq!(rows_of(&mut conn, "t"), before, "nothing refused counted in {sessions:?}");
        conn.query_drop("CALL counter_add_at('t', 1, '2026-01-01 10:30')").unwrap();
        let hour: Option<i64> = conn
            .query_first("SELECT counter_get_period('t', 'hour', '2026-01-01 10:00:00')")
            .unwrap()
            .flatten();
        conn.query_drop("CALL counter_add_at('t', -1, '2026-01-01T10:30:00.5')").unwrap();
        assert_eq!(hour, Some(1), "a UTC time counts in its UTC hour, whatever the session's zone");
    }
}

/// A restock of a bounded counter by 2^53 was spread over its slots by
/// `counter_add` and refused (9003, the slot bound) through the write-id
/// paths, whose trigger took it on one slot.
fn a_restock_through_a_write_id_is_spread_as_counter_add_spreads_it() {
    let db = package();
    let mut conn = session(&db, SESSIONS[2]);
    conn.query_drop("CALL counter_setup('stock', 'd', 64, NULL)").unwrap();
    conn.query_drop("CALL counter_bound('stock', 0, NULL)").unwrap();
    let restock = 1_i64 << 53;
    conn.exec_drop("CALL counter_add('stock', ?)", (restock,)).unwrap();
    conn.exec_drop("CALL counter_add_once(UNHEX(?), 'stock', ?)", (random_write_id_hex(), restock)).unwrap();
    conn.exec_drop(
        "CALL counter_add_many_once(UNHEX(?), CONCAT('{\"stock\": ', ?, '}'))",
        (random_write_id_hex(), restock),
    )
    .unwrap();
    conn.exec_drop("CALL counter_add_many(CONCAT('{\"stock\": ', ?, '}'))", (restock,)).unwrap();
    assert_eq!(total(&mut conn, "stock"), Some(4 * restock));
    let largest: i64 =
        conn.query_first("SELECT MAX(counter) FROM counters WHERE counter_name = 'stock'").unwrap().unwrap();
    assert!(largest <= restock, "spread over the slots: {largest}");
}

/// MySQL read a batch's text only up to a NUL character, dropping the
/// deltas after it, and failed a batch nested past 100 levels with its own
/// 3157: both are refused by the package, on both servers, changing
/// nothing.
fn a_batch_with_a_nul_character_or_nested_too_deep_is_refused() {
    let db = package();
    let mut conn = session(&db, SESSIONS[0]);
    conn.query_drop("CALL counter_setup('a', 'd', 2, NULL)").unwrap();
    conn.query_drop("CALL counter_setup('b', 'd', 2, NULL)").unwrap();
    let deep = format!(r#"{{"a": 1, "b": {}1{}}}"#, "[".repeat(120), "]".repeat(120));
    for sessions in SESSIONS {
        let mut conn = session(&db, sessions);
        for batch in
            ["{\"a\": 1}\0, \"b\": 2}", "{\"a\": 1, \"b\": 2}\0 more", "{\"a\": 1,\0 \"b\": 2}", &deep]
        {
            for sql in [
                "CALL counter_add_many(?)",
                &format!("CALL counter_add_many_once({}, ?)", fresh_id()),
                "CALL counter_add_many_at(NULL, ?, UTC_TIMESTAMP())",
            ] {
                let (code, message) = server_error(conn.exec_drop(sql, (batch,)).unwrap_err());
                assert_eq!(code, errno::INVALID_ARGUMENT, "{sql} with {batch:?}: {message}");
            }
        }
    }
    assert_eq!((total(&mut conn, "a"), total(&mut conn, "b")), (Some(0), Some(0)));
}

/// A bucket counts every write of its period, and a reset does not take
/// the period's writes back: 1,025 writes of 2^53 - 1 to a one-slot counter,
/// reset between them, took its month's bucket row past BIGINT, and every
/// later write failed with the server's 1690. The write that would take
/// it past is refused with the package's 9003 and changes nothing.
fn a_bucket_that_would_pass_bigint_refuses_the_write() {
    let db = package();
    let mut conn = session(&db, SESSIONS[1]);
    conn.query_drop("CALL counter_setup('huge', 'd', 1, NULL)").unwrap();
    conn.query_drop("CALL counter_track('huge', 'month', NULL)").unwrap();
    let largest = (1_i64 << 53) - 1;
    let writes = (i64::MAX / largest) as usize;
    for _ in 0..writes {
        conn.exec_drop("CALL counter_add('huge', ?)", (largest,)).unwrap();
        conn.query_drop("CALL counter_reset('huge', 0, FALSE)").unwrap();
    }
    let before = rows_of(&mut conn, "huge");
    let (code, message) =
        server_error(conn.exec_drop("CALL counter_add('huge', ?)", (largest,)).unwrap_err());
    assert_eq!(code, errno::INVALID_ARGUMENT, "{message}");
    assert!(message.contains("bucket of its period past a BIGINT"), "{message}");
    assert_eq!(rows_of(&mut conn, "huge"), before);
    conn.query_drop("CALL counter_add('huge', -5)").unwrap();
    assert_eq!(total(&mut conn, "huge"), Some(-5), "a write the bucket can take still counts");
}
