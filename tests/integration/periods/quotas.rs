//! Quotas per period (`counter_limit`): a bucket of a limited period never
//! counts past its limit, under 20 clients at once, through the routines,
//! the plain mode beside them or the plain mode alone, with several limits
//! on one counter checked together; the room is readable (`counter_room`) and
//! agrees with what a refusal says; the room comes back when the bucket
//! ends, and a late write counts against the bucket it lands in.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mysql::prelude::Queryable;
use mysql::{Pool, PooledConn};
use slotted_counters::sqlx::mysql::MySqlPoolOptions;
use slotted_counters::{
    AsyncCounters, Bound, CounterError, Counters, Keep, NewCounter, PackageOptions, Period, Room, RoomOf,
    UtcOffset,
};
use slotted_counters_core::package::errno;
use slotted_counters_core::periods;

use super::{at, period, with_package};
use crate::support::{self, client_error, on_each_server, server_error, total};

on_each_server!(
    a_day_limit_alone_lets_exactly_the_limit_through_per_customer,
    batches_under_a_day_limit_let_exactly_the_limit_through_per_customer,
    increments_in_applications_transactions_let_exactly_the_limit_through,
    plain_writes_beside_the_routines_let_exactly_the_limit_through,
    plain_writes_without_routines_let_exactly_the_limit_through,
    writes_in_an_applications_transaction_take_the_quota_only_when_it_commits,
    a_day_limit_below_an_hour_limit_lets_the_day_limit_through_and_names_the_day,
    an_hour_limit_below_a_day_limit_lets_the_hour_limit_through_and_names_the_hour,
    a_day_quota_comes_back_at_midnight_and_a_late_write_counts_against_its_own_day,
    the_room_is_read_as_a_refusal_tells_it,
    the_rooms_view_holds_what_counter_room_returns_for_every_counter,
    a_batch_past_a_limit_is_refused_whole,
    bad_limits_are_refused_and_null_removes_one,
    the_clients_tell_a_quotas_refusal_apart_with_its_room_and_reset,
    a_quota_on_a_key_of_128_characters_is_refused_with_its_fields_whole,
    a_limit_set_first_counts_at_utc_and_moving_its_period_drops_it,
    a_customer_is_set_up_with_its_quotas_in_one_transaction_from_either_client,
    a_coalescing_handles_callers_each_hear_their_own_quota_outcome,
);

/// The moment every client of the races writes at: a fixed session clock,
/// so that no run crosses the end of an hour.
const RACE_AT: &str = "2026-03-10 10:30:00";

/// [`RACE_AT`] as the clients take a time.
fn race_at() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(periods::utc_seconds(RACE_AT).unwrap().try_into().unwrap())
}

/// The customers of a race, each a counter of its own.
const CUSTOMERS: [&str; 3] = ["customer-a", "customer-b", "customer-c"];

/// How a race's clients write 1 to a customer.
enum Write {
    /// `counter_increment` in autocommit: a write whose routine looks at
    /// its rows' room first, so that writes near a limit queue on slot 1.
    Increment,
    /// A batch of one entry: its slot is picked by the batch's plan, which
    /// looks at no limit, so that near a limit writes from every slot check
    /// it at once.
    Batch,
    /// `counter_increment` in a transaction of the application's beside
    /// an insert of its own (`START TRANSACTION; CALL counter_increment(?);
    /// INSERT INTO calls ...; COMMIT`), under REPEATABLE READ with
    /// MariaDB's snapshot isolation off, as the reference advises.
    InTransaction,
    /// Every other client through the plain mode, by a late write at
    /// [`RACE_AT`] (its pool's sessions keep the server's clock), which
    /// takes the quota's lock each time; the others by `counter_increment`.
    PlainBesideRoutines,
    /// Every client through the plain mode, by a late write at
    /// [`RACE_AT`], on a database with no routine and no trigger whose
    /// account may run none, as on an engine without stored routines: the
    /// counters and their limits are set up through it too.
    PlainWithoutRoutines,
}

impl Write {
    /// Writes 1 to `customer` as client number `client`, on `conn` or
    /// through `plain`; a failure as its errno and message.
    fn to(
        &self,
        conn: &mut PooledConn,
        plain: &Counters,
        client: usize,
        customer: &str,
    ) -> Result<(), (u16, String)> {
        let routine = |written: Result<(), mysql::Error>| written.map_err(server_error);
        let plain_write = || plain.add_at(customer, 1, race_at()).map_err(client_error);
        match self {
            Write::Increment => routine(conn.exec_drop("CALL counter_increment(?)", (customer,))),
            Write::Batch => {
                routine(conn.exec_drop("CALL counter_add_many(?)", (format!("{{\"{customer}\": 1}}"),)))
            }
            Write::InTransaction => {
                let mut call = || {
                    conn.query_drop("START TRANSACTION")?;
                    conn.exec_drop("CALL counter_increment(?)", (customer,))?;
                    conn.exec_drop("INSERT INTO calls (customer) VALUES (?)", (customer,))?;
                    conn.query_drop("COMMIT")
                };
                let called = call();
                if called.is_err() {
                    routine(conn.query_drop("ROLLBACK"))?;
                }
                routine(called)
            }
            Write::PlainBesideRoutines if client % 2 == 1 => plain_write(),
            Write::PlainWithoutRoutines => plain_write(),
            Write::PlainBesideRoutines => routine(conn.exec_drop("CALL counter_increment(?)", (customer,))),
        }
    }

    /// The deadlocks per 1,000 writes a race may meet: point 1's figures
    /// for a bound, in autocommit and in applications' transactions.
    fn deadlocks_allowed(&self) -> f64 {
        match self {
            Write::Increment | Write::Batch => 1.0,
            // A routine's write that saw room in its row, and lost it to a
            // plain write's new shares before it locked the row, waits for
            // the quota's lock holding the row: 0 to 2 per 1,200 writes.
            Write::PlainBesideRoutines => 5.0,
            // Every write takes the quota's lock, then every row of the
            // bucket, in one order: none met in 900 writes per server; the
            // allowance of the plain writes beside the routines.
            Write::PlainWithoutRoutines => 5.0,
            Write::InTransaction => 50.0,
        }
    }
}

/// The application's own table, whose inserts go with the counted writes.
fn create_calls(conn: &mut PooledConn) {
    conn.query_drop("CREATE TABLE calls (id INT AUTO_INCREMENT PRIMARY KEY, customer VARCHAR(50) NOT NULL)")
        .unwrap();
}

/// 20 clients writing 1 at a time (`write`) over three customers, each
/// client moving on to the next customer after each write,
/// until every customer was refused: each customer's total and buckets
/// hold `expected` exactly, and every refusal names `named`, a period's
/// limit (`day limit 100`). A client skips a customer once any client was
/// refused for it, so a false refusal shows as a count short of `expected`.
fn race(write: &Write, limits: &[(Period, u32)], expected: i64, named: &str) {
    let options = PackageOptions::default();
    let (db, plain_pool) = if let Write::PlainWithoutRoutines = write {
        let (db, url) = support::plain_database(&options);
        (db, Pool::new(url.as_str()).unwrap())
    } else {
        let db = with_package();
        let pool = db.pool().clone();
        (db, pool)
    };
    let plain = Counters::builder(plain_pool).package(&options).plain_sql().build().unwrap();
    // What sets the customers up and reads them: the routines where there
    // are some.
    let admin = match write {
        Write::PlainWithoutRoutines => plain.clone(),
        _ => Counters::new(db.pool().clone()).unwrap(),
    };
    let mut conn = db.conn();
    create_calls(&mut conn);
    for customer in CUSTOMERS {
        admin.setup(customer, NewCounter::new("api calls").slots(16)).unwrap();
        for &(period, limit) in limits {
            admin.limit(customer, period, Some(limit.into())).unwrap();
        }
    }
    let full = CUSTOMERS.map(|_| AtomicBool::new(false));
    let refusals = Mutex::new(Vec::new());
    let (accepted, deadlocks) = (AtomicU64::new(0), AtomicU64::new(0));
    let allowed = CUSTOMERS.len() as u64 * expected.unsigned_abs();
    thread::scope(|scope| {
        for client in 0..20 {
            let (db, plain, full, refusals) = (&db, &plain, &full, &refusals);
            let (accepted, deadlocks) = (&accepted, &deadlocks);
            scope.spawn(move || {
                let mut conn = db.conn();
                at(&mut conn, RACE_AT);
                if let Write::InTransaction = write {
                    support::without_snapshot_isolation(&mut conn);
                }
                let mut turn = client;
                while let Some(next) =
                    (0..3).map(|step| (turn + step) % 3).find(|&c| !full[c].load(Ordering::SeqCst))
                {
                    match write.to(&mut conn, plain, client, CUSTOMERS[next]) {
                        // Past what the limits allow the customers together,
                        // a limit let writes through: the totals below fail,
                        // rather than the clients writing on for ever.
                        Ok(()) if accepted.fetch_add(1, Ordering::SeqCst) >= allowed => return,
                        Ok(()) => {}
                        Err((1213, _)) => drop(deadlocks.fetch_add(1, Ordering::SeqCst)),
                        Err((code, message)) if code == errno::PAST_BOUND => {
                            full[next].store(true, Ordering::SeqCst);
                            refusals.lock().unwrap().push(message);
                        }
                        Err((code, message)) => panic!("an increment failed otherwise: {code} {message}"),
                    }
                    turn = next + 1;
                }
            });
        }
    });
    for customer in CUSTOMERS {
        assert_eq!(admin.get(customer).unwrap(), Some(expected), "{customer}'s total");
        if let Write::InTransaction = write {
            let calls: i64 = conn
                .exec_first("SELECT COUNT(*) FROM calls WHERE customer = ?", (customer,))
                .unwrap()
                .unwrap();
            assert_eq!(calls, expected, "each of {customer}'s writes has its insert");
        }
        for &(period, _) in limits {
            assert_eq!(
                admin.get_period(customer, period, race_at()).unwrap(),
                Some(expected),
                "{customer}'s {period}"
            );
        }
    }
    let refusals = refusals.into_inner().unwrap();
    assert!(refusals.len() >= 3, "each customer was refused: {refusals:?}");
    for message in &refusals {
        assert!(
            message.starts_with(&format!("the write would pass the {named} (room left: 0, resets ")),
            "{message}"
        );
    }
    let (writes, deadlocks) = (accepted.load(Ordering::SeqCst), deadlocks.load(Ordering::SeqCst));
    eprintln!("{:?} {limits:?}: {writes} writes, {deadlocks} deadlocks", support::server::release());
    // The rate is a figure per 1,000 writes; a race of 240 writes can
    // count only whole deadlocks, so it may meet the one its rate rounds
    // up to (the bug this guards against met 127 to 161 per 1,000).
    let allowed = (write.deadlocks_allowed() * writes as f64 / 1_000.0).ceil() as u64;
    assert!(
        deadlocks <= allowed,
        "{deadlocks} deadlocks in {writes} writes, more than {allowed} ({} per 1,000)",
        write.deadlocks_allowed()
    );
}

fn a_day_limit_alone_lets_exactly_the_limit_through_per_customer() {
    race(&Write::Increment, &[(Period::Day, 1_000)], 1_000, "day limit 1000");
}

fn batches_under_a_day_limit_let_exactly_the_limit_through_per_customer() {
    race(&Write::Batch, &[(Period::Day, 300)], 300, "day limit 300");
}

fn increments_in_applications_transactions_let_exactly_the_limit_through() {
    race(&Write::InTransaction, &[(Period::Hour, 200), (Period::Day, 300)], 200, "hour limit 200");
}

/// The plain mode's writes beside the routines' keep one limit: each
/// takes the quota's lock and checks every row of the bucket, and shares
/// the room again only when its own row is short of it.
fn plain_writes_beside_the_routines_let_exactly_the_limit_through() {
    race(&Write::PlainBesideRoutines, &[(Period::Hour, 400), (Period::Day, 2000)], 400, "hour limit 400");
}

/// The plain mode alone keeps a limit, with no trigger to apply its
/// writes: each takes the quota's lock and checks every row of the bucket.
fn plain_writes_without_routines_let_exactly_the_limit_through() {
    race(&Write::PlainWithoutRoutines, &[(Period::Hour, 300), (Period::Day, 2000)], 300, "hour limit 300");
}

/// Writes of either mode to a limited counter inside an application's
/// transaction (`on(&mut tx)`), beside an insert of the application's: the
/// write the limit refuses leaves the transaction open with the writes
/// before it and the insert; rolled back, neither the total nor the day
/// counts them; committed, both do.
fn writes_in_an_applications_transaction_take_the_quota_only_when_it_commits() {
    let db = with_package();
    let mut conn = db.conn();
    create_calls(&mut conn);
    let routines = Counters::new(db.pool().clone()).unwrap();
    let plain =
        Counters::builder(db.pool().clone()).package(&PackageOptions::default()).plain_sql().build().unwrap();
    for (mode, counters) in [("routines", &routines), ("plain", &plain)] {
        conn.exec_drop("CALL counter_setup(?, 'api calls', 4, NULL)", (mode,)).unwrap();
        conn.exec_drop("CALL counter_limit(?, 'day', 3)", (mode,)).unwrap();
        for commit in [false, true] {
            let mut tx = db.pool().start_transaction(mysql::TxOpts::default()).unwrap();
            at(&mut tx, RACE_AT);
            tx.exec_drop("INSERT INTO calls (customer) VALUES (?)", (mode,)).unwrap();
            for _ in 0..3 {
                counters.on(&mut tx).increment(mode).unwrap();
            }
            let refused = counters.on(&mut tx).increment(mode).unwrap_err();
            assert!(
                matches!(refused, CounterError::PastLimit { period: Period::Day, limit: 3, room: 0, .. }),
                "{mode}: {refused:?}"
            );
            let (calls, counted): (i64, Option<i64>) = tx
                .exec_first(
                    "SELECT (SELECT COUNT(*) FROM calls WHERE customer = ?), counter_get(?)",
                    (mode, mode),
                )
                .unwrap()
                .unwrap();
            assert_eq!((calls, counted), (1, Some(3)), "{mode}: the transaction goes on after the refusal");
            if commit { tx.commit() } else { tx.rollback() }.unwrap();
            let kept = if commit { 3 } else { 0 };
            assert_eq!(total(&mut conn, mode), Some(kept), "{mode}, committed: {commit}");
            assert_eq!(period(&mut conn, mode, "day", RACE_AT), Some(kept), "{mode}, committed: {commit}");
        }
    }
}

fn a_day_limit_below_an_hour_limit_lets_the_day_limit_through_and_names_the_day() {
    race(&Write::Increment, &[(Period::Hour, 150), (Period::Day, 100)], 100, "day limit 100");
}

fn an_hour_limit_below_a_day_limit_lets_the_hour_limit_through_and_names_the_hour() {
    race(&Write::Increment, &[(Period::Hour, 80), (Period::Day, 500)], 80, "hour limit 80");
}

/// The refusal of a write of counter `name` (9004), its message.
pub(super) fn refusal(conn: &mut PooledConn, sql: &str, name: &str) -> String {
    let error = conn.exec_drop(sql, (name,)).expect_err(sql);
    let (code, message) = server_error(error);
    assert_eq!(code, errno::PAST_BOUND, "{message}");
    message
}

/// Each row of `counter_room(name)`: kind, period, bound, value, room and
/// the end of the bucket.
pub(super) type RoomRow = (String, Option<String>, i64, i64, i64, Option<String>);

pub(super) fn room(conn: &mut PooledConn, name: &str) -> Vec<RoomRow> {
    conn.exec_map(
        "CALL counter_room(?)",
        (name,),
        |(kind, period, bound, value, room, resets): (
            String,
            Option<String>,
            i64,
            i64,
            i64,
            mysql::Value,
        )| {
            let resets = match resets {
                mysql::Value::NULL => None,
                mysql::Value::Bytes(text) => Some(String::from_utf8(text).unwrap()),
                other => panic!("resets_at is a text, not {other:?}"),
            };
            (kind, period, bound, value, room, resets)
        },
    )
    .unwrap()
}

pub(super) fn limit_row(period: &str, bound: i64, value: i64, room: i64, resets: &str) -> RoomRow {
    ("limit".into(), Some(period.into()), bound, value, room, Some(resets.into()))
}

/// A day limit of 10: the day fills at 23:59, and its room comes back
/// whole at the next UTC midnight while the hour tracked beside it counts
/// on; a late write into the full day before is refused, a refund there
/// gives room back, and a reset of the total gives none.
fn a_day_quota_comes_back_at_midnight_and_a_late_write_counts_against_its_own_day() {
    let db = with_package();
    let mut conn = db.conn();
    conn.query_drop("CALL counter_setup('q', 'quota', 8, NULL)").unwrap();
    conn.query_drop("CALL counter_track('q', 'hour', NULL)").unwrap();
    conn.query_drop("CALL counter_limit('q', 'day', 10)").unwrap();
    at(&mut conn, "2026-03-10 23:59:00");
    for _ in 0..10 {
        conn.query_drop("CALL counter_increment('q')").unwrap();
    }
    let message = refusal(&mut conn, "CALL counter_increment(?)", "q");
    assert_eq!(
        message,
        "the write would pass the day limit 10 (room left: 0, resets 2026-03-11 00:00:00), for counter: 'q'"
    );
    assert_eq!(
        period(&mut conn, "q", "hour", "2026-03-10 23:59:00"),
        Some(10),
        "the refused write counted nowhere"
    );
    conn.query_drop("CALL counter_reset('q', 0, FALSE)").unwrap();
    refusal(&mut conn, "CALL counter_increment(?)", "q");

    at(&mut conn, "2026-03-11 00:00:30");
    assert_eq!(room(&mut conn, "q"), [limit_row("day", 10, 0, 10, "2026-03-12 00:00:00")]);
    for _ in 0..10 {
        conn.query_drop("CALL counter_increment('q')").unwrap();
    }
    refusal(&mut conn, "CALL counter_increment(?)", "q");

    let late = refusal(&mut conn, "CALL counter_add_at(?, 1, '2026-03-10 12:00:00')", "q");
    assert!(late.contains("(room left: 0, resets 2026-03-11 00:00:00)"), "yesterday's room: {late}");
    conn.query_drop("CALL counter_add_at('q', -3, '2026-03-10 12:00:00')").unwrap();
    conn.query_drop("CALL counter_add_at('q', 3, '2026-03-10 12:00:00')").unwrap();
    refusal(&mut conn, "CALL counter_add_at(?, 1, '2026-03-10 12:00:00')", "q");
    assert_eq!(period(&mut conn, "q", "day", "2026-03-10 12:00:00"), Some(10));
    assert_eq!(period(&mut conn, "q", "day", "2026-03-11 00:00:30"), Some(10));
    assert_eq!(total(&mut conn, "q"), Some(10), "the reset, then today's 10; the late writes cancel out");
}

/// `counter_room` has a row per bound and limit, and after a refusal its
/// row of the period refused says the room and the end of the bucket the
/// refusal said.
fn the_room_is_read_as_a_refusal_tells_it() {
    let db = with_package();
    let mut conn = db.conn();
    conn.query_drop("CALL counter_setup('plan', 'sends', 4, NULL)").unwrap();
    conn.query_drop("CALL counter_bound('plan', 0, 1000)").unwrap();
    conn.query_drop("CALL counter_limit('plan', 'month', 7)").unwrap();
    conn.query_drop("CALL counter_limit('plan', 'minute', 5)").unwrap();
    at(&mut conn, "2026-02-27 08:15:42");
    conn.query_drop("CALL counter_add('plan', 4)").unwrap();
    assert_eq!(
        room(&mut conn, "plan"),
        [
            ("floor".into(), None, 0, 4, 4, None),
            ("ceiling".into(), None, 1000, 4, 996, None),
            limit_row("minute", 5, 4, 1, "2026-02-27 08:16:00"),
            limit_row("month", 7, 4, 3, "2026-03-01 00:00:00"),
        ]
    );
    let message = refusal(&mut conn, "CALL counter_add(?, 2)", "plan");
    assert_eq!(
        message,
        "the write would pass the minute limit 5 (room left: 1, resets 2026-02-27 08:16:00), for counter: 'plan'"
    );
    at(&mut conn, "2026-02-27 08:16:00");
    conn.query_drop("CALL counter_add('plan', 2)").unwrap();
    let message = refusal(&mut conn, "CALL counter_add(?, 2)", "plan");
    assert!(message.contains("month limit 7 (room left: 1, resets 2026-03-01 00:00:00)"), "{message}");
    assert_eq!(room(&mut conn, "plan")[3], limit_row("month", 7, 6, 1, "2026-03-01 00:00:00"));
}

/// The view of rooms has, for every counter with a bound or a limit, the
/// rows `counter_room` returns for it, each led by the counter's name, in
/// the offset of each period; a counter with neither has none.
fn the_rooms_view_holds_what_counter_room_returns_for_every_counter() {
    let db = with_package();
    let mut conn = db.conn();
    conn.query_drop(
        "CALL counter_setup('plan', 'd', 4, NULL); CALL counter_bound('plan', 0, 1000); \
         CALL counter_limit('plan', 'month', 7); CALL counter_limit('plan', 'minute', 5); \
         CALL counter_setup('stock', 'd', 3, 10); CALL counter_bound('stock', 0, NULL); \
         CALL counter_setup('api', 'd', 2, NULL); CALL counter_track_at_offset('api', 'day', NULL, 480); \
         CALL counter_limit('api', 'day', 100); CALL counter_limit('api', 'minute', 50); \
         CALL counter_setup('views', 'd', 4, 3)",
    )
    .unwrap();
    at(&mut conn, "2026-02-27 08:15:42");
    conn.query_drop("CALL counter_add('plan', 4); CALL counter_add('stock', -2); CALL counter_add('api', 9)")
        .unwrap();
    let mut from_view: Vec<(String, RoomRow)> = conn
        .query_map(
            "SELECT counter_name, kind, period, bound, value, room, resets_at FROM counter_rooms",
            |(name, kind, period, bound, value, room, resets)| {
                (name, (kind, period, bound, value, room, resets))
            },
        )
        .unwrap();
    from_view.sort();
    let mut from_calls: Vec<(String, RoomRow)> = ["plan", "stock", "api", "views"]
        .into_iter()
        .flat_map(|name| room(&mut conn, name).into_iter().map(move |row| (name.to_owned(), row)))
        .collect();
    from_calls.sort();
    assert_eq!(from_view, from_calls);
    assert_eq!(from_view.len(), 7, "{from_view:?}");
    assert!(from_view.contains(&("api".into(), limit_row("day", 100, 9, 91, "2026-02-27 16:00:00"))));
    assert!(from_view.contains(&("api".into(), limit_row("minute", 50, 9, 41, "2026-02-27 08:16:00"))));
    assert!(from_view.contains(&("plan".into(), limit_row("minute", 5, 4, 1, "2026-02-27 08:16:00"))));
    assert!(from_view.contains(&("stock".into(), ("floor".into(), None, 0, 8, 8, None))));
}

/// A batch one of whose counters would pass its limit is refused whole:
/// neither counter, nor any bucket, changes.
fn a_batch_past_a_limit_is_refused_whole() {
    let db = with_package();
    let mut conn = db.conn();
    for name in ["a", "b"] {
        conn.exec_drop("CALL counter_setup(?, 'd', 4, NULL)", (name,)).unwrap();
    }
    conn.query_drop("CALL counter_limit('b', 'hour', 3)").unwrap();
    conn.query_drop("CALL counter_add_many('{\"a\": 1, \"b\": 3}')").unwrap();
    let message = refusal(&mut conn, "CALL counter_add_many(?)", "{\"a\": 1, \"b\": 1}");
    assert!(message.starts_with("the write would pass the hour limit 3 (room left: 0"), "{message}");
    assert_eq!((total(&mut conn, "a"), total(&mut conn, "b")), (Some(1), Some(3)));
    conn.query_drop("CALL counter_add_once(X'000102030405060708090a0b0c0d0e0f', 'b', -1)").unwrap();
    conn.query_drop("CALL counter_add_many('{\"a\": 1, \"b\": 1}')").unwrap();
    assert_eq!((total(&mut conn, "a"), total(&mut conn, "b")), (Some(2), Some(3)));
}

fn bad_limits_are_refused_and_null_removes_one() {
    let db = with_package();
    let mut conn = db.conn();
    conn.query_drop("CALL counter_setup('c', 'd', 4, NULL)").unwrap();
    for (sql, code, words) in [
        ("CALL counter_limit('c', 'week', 5)", errno::INVALID_ARGUMENT, "period must be"),
        (
            "CALL counter_limit('c', 'day', -1)",
            errno::INVALID_ARGUMENT,
            "a limit must be NULL or a whole number from 0",
        ),
        (
            "CALL counter_limit('c', 'day', 1.5)",
            errno::INVALID_ARGUMENT,
            "a limit must be NULL or a whole number from 0",
        ),
        ("CALL counter_limit('nobody', 'day', 5)", errno::UNKNOWN_COUNTER, "unknown counter"),
        ("CALL counter_room('nobody')", errno::UNKNOWN_COUNTER, "unknown counter"),
    ] {
        let (got, message) = server_error(conn.query_drop(sql).expect_err(sql));
        assert_eq!(got, code, "{sql}: {message}");
        assert!(message.starts_with(words), "{sql}: {message}");
    }
    let tracked: u32 = conn.query_first("SELECT COUNT(*) FROM counter_periods").unwrap().unwrap();
    assert_eq!(tracked, 0, "a refused limit tracks nothing");
    conn.query_drop("CALL counter_limit('c', 'day', 0)").unwrap();
    refusal(&mut conn, "CALL counter_increment(?)", "c");
    conn.query_drop("CALL counter_limit('c', 'day', NULL)").unwrap();
    conn.query_drop("CALL counter_increment('c')").unwrap();
    assert_eq!(room(&mut conn, "c"), []);
    conn.query_drop("CALL counter_limit('c', 'day', 1)").unwrap();
    let message = refusal(&mut conn, "CALL counter_increment(?)", "c");
    assert!(message.contains("day limit 1 (room left: 0"), "the day counted on without its limit: {message}");
}

/// Both clients, and the plain mode of either, set limits, read the room as
/// `counter_room` does, and read a quota's refusal as
/// [`CounterError::PastLimit`], with the period, the limit, the room left
/// and the end of the bucket that `counter_room` reads too. The plain
/// mode's writes keep a limit the routines set, and the routines' keep
/// one the plain mode set.
fn the_clients_tell_a_quotas_refusal_apart_with_its_room_and_reset() {
    let db = with_package();
    let mut conn = db.conn();
    conn.query_drop("CALL counter_setup('sends', 'd', 8, NULL)").unwrap();
    let counters = Counters::new(db.pool().clone()).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let async_counters = runtime.block_on(async {
        let pool = MySqlPoolOptions::new().connect(&db.url()).await.unwrap();
        AsyncCounters::new(pool).unwrap()
    });
    let plain =
        Counters::builder(db.pool().clone()).package(&PackageOptions::default()).plain_sql().build().unwrap();
    runtime.block_on(async_counters.limit("sends", Period::Month, Some(5))).unwrap();
    plain.limit("sends", Period::Month, Some(4)).unwrap();
    counters.limit("sends", Period::Month, Some(3)).unwrap();
    for client in [&counters, &plain] {
        let too_big = client.limit("sends", Period::Month, Some(u64::MAX)).unwrap_err();
        assert!(
            matches!(&too_big, CounterError::InvalidArgument { message, .. } if message.contains("a limit must be")),
            "{too_big:?}"
        );
    }
    let limits: Vec<(String, i64)> = conn
        .query("SELECT CAST(period AS CHAR), highest FROM counter_periods WHERE highest IS NOT NULL")
        .unwrap();
    assert_eq!(limits, [("month".to_owned(), 3)], "the last limit set");
    counters.bound("sends", 0..=100).unwrap();
    plain.add("sends", 2).unwrap();
    runtime.block_on(async_counters.increment("sends")).unwrap();
    let (.., room_now, resets_at) = room(&mut conn, "sends").remove(2);
    assert_eq!(room_now, 0);
    let resets_at = resets_at.expect("a limit resets");
    let resets =
        UNIX_EPOCH + Duration::from_secs(periods::utc_seconds(&resets_at).unwrap().try_into().unwrap());
    let rooms = [
        Room { of: RoomOf::Total(Bound::Floor), bound: 0, value: 3, room: 3, resets: None },
        Room { of: RoomOf::Total(Bound::Ceiling), bound: 100, value: 3, room: 97, resets: None },
        Room { of: RoomOf::Limit(Period::Month), bound: 3, value: 3, room: 0, resets: Some(resets) },
    ];
    assert_eq!(counters.room("sends").unwrap(), rooms);
    assert_eq!(runtime.block_on(async_counters.room("sends")).unwrap(), rooms);
    assert_eq!(plain.room("sends").unwrap(), rooms);
    let refusals = [
        counters.increment("sends"),
        runtime.block_on(async_counters.increment("sends")),
        plain.increment("sends"),
        plain.add_many([("sends", 1)]),
    ];
    for refused in refusals {
        match refused {
            Err(CounterError::PastLimit {
                period: Period::Month,
                limit: 3,
                room: 0,
                resets: at,
                message,
                name,
            }) => {
                assert_eq!(at, resets, "{message}");
                assert_eq!(name.as_deref(), Some("sends"), "{message}");
                assert!(message.contains(&format!("resets {resets_at})")), "{message}");
            }
            other => panic!("a quota's refusal: {other:?}"),
        }
    }
    assert_eq!(total(&mut conn, "sends"), Some(3));
    plain.limit("sends", Period::Month, None).unwrap();
    plain.increment("sends").unwrap();
    let bounds_only = [
        Room { of: RoomOf::Total(Bound::Floor), bound: 0, value: 4, room: 4, resets: None },
        Room { of: RoomOf::Total(Bound::Ceiling), bound: 100, value: 4, room: 96, resets: None },
    ];
    assert_eq!(plain.room("sends").unwrap(), bounds_only, "the limit went");
    assert_eq!(counters.room("sends").unwrap(), bounds_only);
}

/// A quota key of 128 characters (a prefix, a customer's UUID, a period):
/// its refusal's message is cut to 128 characters, cutting the name, and
/// the client's error still carries the period, limit, room, reset and
/// name.
fn a_quota_on_a_key_of_128_characters_is_refused_with_its_fields_whole() {
    let db = with_package();
    let key = format!("api:{}:", "3f2c9a1e-7b4d-4c8e-9f1a-2b3c4d5e6f70:".repeat(4));
    let key = &key[..128];
    let counters = Counters::new(db.pool().clone()).unwrap();
    counters.setup(key, NewCounter::new("quota")).unwrap();
    counters.limit(key, Period::Day, Some(1)).unwrap();
    counters.increment(key).unwrap();
    match counters.increment(key) {
        Err(CounterError::PastLimit { period: Period::Day, limit: 1, room: 0, resets, message, name }) => {
            assert_eq!(message.chars().count(), 128, "{message}");
            assert_eq!(name.as_deref(), Some(key), "the call names the counter the message lost");
            assert!(
                message.starts_with("the write would pass the day limit 1 (room left: 0, resets "),
                "{message}"
            );
            let day = Duration::from_secs(86_400);
            let since_1970 = resets.duration_since(UNIX_EPOCH).unwrap();
            assert_eq!(since_1970.as_secs() % day.as_secs(), 0, "a UTC midnight: {message}");
        }
        other => panic!("a quota's refusal: {other:?}"),
    }
    assert_eq!(counters.get(key).unwrap(), Some(1));
}

/// As reference.md says: a limit set on an untracked period tracks it at
/// UTC; moving the period to an offset takes untracking it, which drops
/// the limit with its buckets, and the limit is set again after.
fn a_limit_set_first_counts_at_utc_and_moving_its_period_drops_it() {
    let db = with_package();
    let counters = Counters::new(db.pool().clone()).unwrap();
    counters.setup("api", NewCounter::new("quota")).unwrap();
    counters.limit("api", Period::Day, Some(5)).unwrap();
    let shanghai = UtcOffset::minutes(480).unwrap();
    let moved = counters.track_at_offset("api", Period::Day, Keep::All, shanghai).unwrap_err();
    assert_eq!(moved.code(), Some(errno::INVALID_ARGUMENT), "a limit's period is at UTC: {moved:?}");
    counters.untrack("api", Period::Day).unwrap();
    assert_eq!(counters.room("api").unwrap(), [], "the limit went with its period");
    counters.track_at_offset("api", Period::Day, Keep::All, shanghai).unwrap();
    counters.limit("api", Period::Day, Some(5)).unwrap();
    let room = counters.room("api").unwrap();
    let [Room { of: RoomOf::Limit(Period::Day), bound: 5, room: 5, resets: Some(resets), .. }] = room[..]
    else {
        panic!("the day's limit, set again: {room:?}");
    };
    let since_1970 = resets.duration_since(UNIX_EPOCH).unwrap().as_secs();
    assert_eq!(since_1970 % 86_400, 16 * 3_600, "Shanghai's midnight, 16:00 UTC");
}

/// A customer's counter is set up with its floor, its day at +08:00 and
/// two limits in one transaction of the application's, from either client
/// (`setup_if_missing` first): rolled back, none of it is there; committed,
/// all of it, the day's limit resetting at 16:00 UTC. Set up "if missing"
/// again, it keeps what it has.
fn a_customer_is_set_up_with_its_quotas_in_one_transaction_from_either_client() {
    let db = with_package();
    let mut conn = db.conn();
    let shanghai = UtcOffset::minutes(480).unwrap();
    let counters = Counters::new(db.pool().clone()).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let sqlx_pool = runtime.block_on(MySqlPoolOptions::new().connect(&db.url())).unwrap();
    let async_counters = AsyncCounters::new(sqlx_pool.clone()).unwrap();
    let periods_of = |conn: &mut PooledConn, name: &str| -> Vec<(String, Option<i64>, i32)> {
        conn.exec(
            "SELECT CAST(period AS CHAR), highest, utc_offset FROM counter_periods WHERE counter_name = ? ORDER BY period",
            (name,),
        )
        .unwrap()
    };
    for commit in [false, true] {
        let mut tx = db.pool().start_transaction(mysql::TxOpts::default()).unwrap();
        {
            let customer = counters.on(&mut tx);
            customer.setup_if_missing("sync", NewCounter::new("API calls").slots(4)).unwrap();
            customer.bound("sync", 0..).unwrap();
            customer.track_at_offset("sync", Period::Day, Keep::Last(31), shanghai).unwrap();
            customer.limit("sync", Period::Day, Some(1_000)).unwrap();
            customer.limit("sync", Period::Minute, Some(100)).unwrap();
        }
        if commit { tx.commit() } else { tx.rollback() }.unwrap();
        runtime.block_on(async {
            let mut tx = sqlx_pool.begin().await.unwrap();
            {
                let customer = async_counters.on(&mut tx);
                customer.setup_if_missing("async", NewCounter::new("API calls").slots(4)).await.unwrap();
                customer.bound("async", 0..).await.unwrap();
                customer.track_at_offset("async", Period::Day, Keep::Last(31), shanghai).await.unwrap();
                customer.limit("async", Period::Day, Some(1_000)).await.unwrap();
                customer.limit("async", Period::Minute, Some(100)).await.unwrap();
            }
            if commit { tx.commit().await } else { tx.rollback().await }.unwrap();
        });
        for name in ["sync", "async"] {
            if !commit {
                assert_eq!(total(&mut conn, name), None, "rolled back: {name}");
                assert!(periods_of(&mut conn, name).is_empty(), "rolled back: {name}");
                continue;
            }
            assert_eq!(
                periods_of(&mut conn, name),
                [("minute".to_owned(), Some(100), 0), ("day".to_owned(), Some(1_000), 480)],
                "{name}"
            );
            let rooms = counters.room(name).unwrap();
            let kinds: Vec<(RoomOf, i64, u64)> =
                rooms.iter().map(|room| (room.of, room.bound, room.room)).collect();
            assert_eq!(
                kinds,
                [
                    (RoomOf::Total(Bound::Floor), 0, 0),
                    (RoomOf::Limit(Period::Minute), 100, 100),
                    (RoomOf::Limit(Period::Day), 1_000, 1_000)
                ],
                "{name}"
            );
            let day_resets = rooms[2].resets.unwrap().duration_since(UNIX_EPOCH).unwrap().as_secs();
            assert_eq!(day_resets % 86_400, 16 * 3_600, "{name}: Shanghai's midnight");
        }
    }
    counters.increment("sync").unwrap();
    counters.setup_if_missing("sync", NewCounter::new("another").initial_value(5)).unwrap();
    runtime.block_on(async_counters.setup_if_missing("sync", NewCounter::new("another"))).unwrap();
    assert_eq!(total(&mut conn, "sync"), Some(1), "set up if missing: the counter as it was");
}

/// 30 increments through one coalescing handle, from 30 threads at once,
/// under a month limit of 10: the handle sums them into flushes, and each
/// caller hears its own outcome, exactly 10 accepted and 20 refused with the
/// quota's refusal, as if each had called alone.
fn a_coalescing_handles_callers_each_hear_their_own_quota_outcome() {
    let db = with_package();
    let counters = Counters::new(db.pool().clone()).unwrap();
    counters.setup("coalesced", NewCounter::new("d").slots(8)).unwrap();
    counters.limit("coalesced", Period::Month, Some(10)).unwrap();
    let handle = counters.coalescing();
    let outcomes: Vec<Result<(), CounterError>> = thread::scope(|scope| {
        let callers: Vec<_> = (0..30).map(|_| scope.spawn(|| handle.increment("coalesced"))).collect();
        callers.into_iter().map(|caller| caller.join().unwrap()).collect()
    });
    assert_eq!(outcomes.iter().filter(|outcome| outcome.is_ok()).count(), 10, "{outcomes:?}");
    for refused in outcomes.iter().filter_map(|outcome| outcome.as_ref().err()) {
        assert!(
            matches!(refused, CounterError::PastLimit { period: Period::Month, limit: 10, room: 0, .. }),
            "{refused:?}"
        );
    }
    assert_eq!(counters.get("coalesced").unwrap(), Some(10));
    let month: Option<i64> =
        db.conn().query_first("SELECT counter_get_period('coalesced', 'month', UTC_TIMESTAMP())").unwrap();
    assert_eq!(month, Some(10));
}
