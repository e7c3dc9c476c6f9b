//! Counting per period through both Rust clients, in both modes: the plain
//! mode on a database with no routine, through an account with no
//! EXECUTE. And the coalescing handles: a delta counts in the bucket of its
//! hand-over, however much later its flush runs.

use std::thread;
use std::time::{Duration, SystemTime};

use mysql::prelude::Queryable;
use mysql::{Opts, OptsBuilder, Pool};
use slotted_counters::sqlx::Executor;
use slotted_counters::sqlx::mysql::MySqlPoolOptions;
use slotted_counters::{AsyncCounters, CounterError, Counters, Keep, NewCounter, PackageOptions, Period};
use slotted_counters_core::package::errno;

use super::{bucket, buckets};
use crate::support::{self, Database, on_each_server};

on_each_server!(
    both_clients_count_per_period_in_both_modes,
    a_coalesced_delta_counts_in_the_minute_it_was_handed_over,
);

const HOUR: Duration = Duration::from_secs(3_600);

/// The calls of a client, sync or async, as the tests make them.
trait PeriodCalls {
    fn setup(&self, name: &str) -> Result<(), CounterError>;
    fn track(&self, name: &str, period: Period, keep: Keep) -> Result<(), CounterError>;
    fn untrack(&self, name: &str, period: Period) -> Result<(), CounterError>;
    fn add(&self, name: &str, delta: i64) -> Result<(), CounterError>;
    fn add_many(&self, deltas: &[(&str, i64)]) -> Result<(), CounterError>;
    fn add_at(&self, name: &str, delta: i64, at: SystemTime) -> Result<(), CounterError>;
    fn get(&self, name: &str) -> Result<Option<i64>, CounterError>;
    fn get_period(&self, name: &str, period: Period, at: SystemTime) -> Result<Option<i64>, CounterError>;
    fn get_range(
        &self,
        name: &str,
        period: Period,
        from: SystemTime,
        to: SystemTime,
    ) -> Result<Option<i64>, CounterError>;
    fn series(
        &self,
        name: &str,
        period: Period,
        from: SystemTime,
        to: SystemTime,
    ) -> Result<Vec<(SystemTime, i64)>, CounterError>;
}

impl PeriodCalls for Counters {
    fn setup(&self, name: &str) -> Result<(), CounterError> {
        Counters::setup(self, name, NewCounter::new("d").slots(8))
    }
    fn track(&self, name: &str, period: Period, keep: Keep) -> Result<(), CounterError> {
        Counters::track(self, name, period, keep)
    }
    fn untrack(&self, name: &str, period: Period) -> Result<(), CounterError> {
        Counters::untrack(self, name, period)
    }
    fn add(&self, name: &str, delta: i64) -> Result<(), CounterError> {
        Counters::add(self, name, delta)
    }
    fn add_many(&self, deltas: &[(&str, i64)]) -> Result<(), CounterError> {
        Counters::add_many(self, deltas.iter().copied())
    }
    fn add_at(&self, name: &str, delta: i64, at: SystemTime) -> Result<(), CounterError> {
        Counters::add_at(self, name, delta, at)
    }
    fn get(&self, name: &str) -> Result<Option<i64>, CounterError> {
        Counters::get(self, name)
    }
    fn get_period(&self, name: &str, period: Period, at: SystemTime) -> Result<Option<i64>, CounterError> {
        Counters::get_period(self, name, period, at)
    }
    fn get_range(
        &self,
        name: &str,
        period: Period,
        from: SystemTime,
        to: SystemTime,
    ) -> Result<Option<i64>, CounterError> {
        Counters::get_range(self, name, period, from, to)
    }
    fn series(
        &self,
        name: &str,
        period: Period,
        from: SystemTime,
        to: SystemTime,
    ) -> Result<Vec<(SystemTime, i64)>, CounterError> {
        Counters::series(self, name, period, from, to)
    }
}

/// The async client, each call run to its end on a runtime of its own.
struct Blocking(AsyncCounters, tokio::runtime::Runtime);

impl PeriodCalls for Blocking {
    fn setup(&self, name: &str) -> Result<(), CounterError> {
        self.1.block_on(self.0.setup(name, NewCounter::new("d").slots(8)))
    }
    fn track(&self, name: &str, period: Period, keep: Keep) -> Result<(), CounterError> {
        self.1.block_on(self.0.track(name, period, keep))
    }
    fn untrack(&self, name: &str, period: Period) -> Result<(), CounterError> {
        self.1.block_on(self.0.untrack(name, period))
    }
    fn add(&self, name: &str, delta: i64) -> Result<(), CounterError> {
        self.1.block_on(self.0.add(name, delta))
    }
    fn add_many(&self, deltas: &[(&str, i64)]) -> Result<(), CounterError> {
        self.1.block_on(self.0.add_many(deltas.iter().copied()))
    }
    fn add_at(&self, name: &str, delta: i64, at: SystemTime) -> Result<(), CounterError> {
        self.1.block_on(self.0.add_at(name, delta, at))
    }
    fn get(&self, name: &str) -> Result<Option<i64>, CounterError> {
        self.1.block_on(self.0.get(name))
    }
    fn get_period(&self, name: &str, period: Period, at: SystemTime) -> Result<Option<i64>, CounterError> {
        self.1.block_on(self.0.get_period(name, period, at))
    }
    fn get_range(
        &self,
        name: &str,
        period: Period,
        from: SystemTime,
        to: SystemTime,
    ) -> Result<Option<i64>, CounterError> {
        self.1.block_on(self.0.get_range(name, period, from, to))
    }
    fn series(
        &self,
        name: &str,
        period: Period,
        from: SystemTime,
        to: SystemTime,
    ) -> Result<Vec<(SystemTime, i64)>, CounterError> {
        self.1.block_on(self.0.series(name, period, from, to))
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

/// Each client in each mode: the sync and the async one over the routines,
/// and over a database with no routine, whose account may run none.
fn clients() -> Vec<(&'static str, Database, Box<dyn PeriodCalls>)> {
    let options = PackageOptions::default();
    let mut clients: Vec<(&'static str, Database, Box<dyn PeriodCalls>)> = Vec::new();
    let db = support::with_package(&options);
    let counters = Counters::new(db.pool().clone()).unwrap();
    clients.push(("sync client, routines", db, Box::new(counters)));
    let db = support::with_package(&options);
    let rt = runtime();
    let pool = rt.block_on(async { MySqlPoolOptions::new().connect_lazy(&db.url()).unwrap() });
    clients.push(("async client, routines", db, Box::new(Blocking(AsyncCounters::new(pool).unwrap(), rt))));
    let (db, url) = support::plain_database(&options);
    let counters =
        Counters::builder(Pool::new(url.as_str()).unwrap()).package(&options).plain_sql().build().unwrap();
    clients.push(("sync client, plain", db, Box::new(counters)));
    let (db, url) = support::plain_database(&options);
    let rt = runtime();
    let pool = rt.block_on(async { MySqlPoolOptions::new().connect_lazy(&url).unwrap() });
    let counters = AsyncCounters::builder(pool).package(&options).plain_sql().build().unwrap();
    clients.push(("async client, plain", db, Box::new(Blocking(counters, rt))));
    clients
}

/// Writes made now and late writes count in the buckets of their moment,
/// read as a bucket, a range and a series; a late write after now and a
/// read of an untracked period are refused, and refused writes count in no
/// bucket.
fn both_clients_count_per_period_in_both_modes() {
    for (client, db, counters) in clients() {
        counters.setup("c").unwrap();
        counters.track("c", Period::Hour, Keep::Last(48)).unwrap();
        counters.track("c", Period::Day, Keep::All).unwrap();
        let now = SystemTime::now();
        counters.add("c", 1).unwrap();
        counters.add_many(&[("c", 2)]).unwrap();
        let three_hours_ago = now - 3 * HOUR;
        counters.add_at("c", 40, three_hours_ago).unwrap();
        counters.add_at("c", 500, now - 60 * HOUR).unwrap();

        assert_eq!(counters.get("c").unwrap(), Some(543), "{client}");
        assert_eq!(counters.get_period("c", Period::Hour, three_hours_ago).unwrap(), Some(40), "{client}");
        assert_eq!(
            counters.get_period("c", Period::Hour, now - 60 * HOUR).unwrap(),
            Some(0),
            "{client}: beyond 48"
        );
        assert_eq!(counters.get_period("c", Period::Minute, now).unwrap(), None, "{client}: untracked");
        assert_eq!(counters.get_period("missing", Period::Hour, now).unwrap(), None, "{client}");
        let wide = (now - 4 * HOUR, now + HOUR);
        assert_eq!(counters.get_range("c", Period::Hour, wide.0, wide.1).unwrap(), Some(43), "{client}");
        let days: i64 = counters
            .series("c", Period::Day, now - 4 * 24 * HOUR, now + HOUR)
            .unwrap()
            .iter()
            .map(|(_, value)| value)
            .sum();
        assert_eq!(days, 543, "{client}: every day's bucket");

        let hours =
            counters.series("c", Period::Hour, three_hours_ago - HOUR, three_hours_ago + HOUR).unwrap();
        assert_eq!(hours.len(), 2, "{client}: {hours:?}");
        let (start, value) =
            hours.iter().find(|(_, value)| *value != 0).copied().expect("the late write's hour");
        assert_eq!(value, 40, "{client}");
        assert!(start <= three_hours_ago && three_hours_ago < start + HOUR, "{client}: {start:?}");
        assert_eq!(
            start.duration_since(SystemTime::UNIX_EPOCH).unwrap().as_secs() % 3_600,
            0,
            "{client}: an hour starts on a UTC hour"
        );

        let mut conn = db.conn();
        let before = buckets(&mut conn, "c");
        let future = counters.add_at("c", 1, now + HOUR).unwrap_err();
        assert_eq!(future.code(), Some(errno::INVALID_ARGUMENT), "{client}: {future}");
        assert!(future.to_string().contains("no later than now"), "{client}: {future}");
        assert_eq!(
            counters.add("c", 9_007_199_254_740_992).unwrap_err().code(),
            Some(errno::INVALID_ARGUMENT),
            "{client}"
        );
        assert_eq!(
            counters.add_many(&[("c", 1), ("missing", 1)]).unwrap_err().code(),
            Some(errno::UNKNOWN_COUNTER),
            "{client}"
        );
        assert_eq!(buckets(&mut conn, "c"), before, "{client}: refused writes count in no bucket");
        assert_eq!(counters.get("c").unwrap(), Some(543), "{client}");

        counters.untrack("c", Period::Hour).unwrap();
        assert_eq!(counters.get_period("c", Period::Hour, three_hours_ago).unwrap(), None, "{client}");
        let untracked = counters.series("c", Period::Hour, now - HOUR, now).unwrap_err();
        assert_eq!(untracked.code(), Some(errno::INVALID_ARGUMENT), "{client}: {untracked}");
        let unknown = counters.series("missing", Period::Day, now - HOUR, now).unwrap_err();
        assert_eq!(unknown.code(), Some(errno::UNKNOWN_COUNTER), "{client}: {unknown}");
        assert_eq!(
            counters.track("c", Period::Hour, Keep::Last(0)).unwrap_err().code(),
            Some(errno::INVALID_ARGUMENT),
            "{client}"
        );
    }
}

/// The statement that sets a session's clock to 0.5 s past 12:00 UTC, in a
/// time zone five hours east.
const CLOCK: &str = "SET time_zone = '+05:00', TIMESTAMP = 1795608000.5";
const MINUTE_BEFORE: &str = "2026-11-25 11:59:00";
const MINUTE_AFTER: &str = "2026-11-25 12:00:00";

/// How long the first flush is held: the delta queued behind it waits as long.
const HELD: Duration = Duration::from_millis(1_200);

/// Counter `gate` of one slot, counted per minute; the connection that
/// holds its slot until it rolls back.
fn gated(db: &Database, counters: &Counters) -> mysql::PooledConn {
    counters.setup("gate", NewCounter::new("d").slots(1)).unwrap();
    counters.track("gate", Period::Minute, Keep::All).unwrap();
    let mut holder = db.conn();
    holder.query_drop("START TRANSACTION").unwrap();
    holder.query_drop("UPDATE counters SET counter = counter + 1 WHERE counter_name = 'gate'").unwrap();
    holder
}

/// A flush held back by a lock and run 0.5 s after a minute began (the
/// sessions' clock reads 12:00:00.5): the delta that waited behind it,
/// handed over 1.2 s before, counts in the minute before, through the sync
/// and the async handle, with routines and in the plain mode.
fn a_coalesced_delta_counts_in_the_minute_it_was_handed_over() {
    let options = PackageOptions::default();
    let clocked = |url: &str| {
        Pool::new(OptsBuilder::from_opts(Opts::from_url(url).unwrap()).init(vec![CLOCK])).unwrap()
    };
    for plain in [false, true] {
        let (db, counters) = if plain {
            let (db, url) = support::plain_database(&options);
            let builder = Counters::builder(clocked(&url)).package(&options).plain_sql();
            (db, builder.max_flushes(1).build().unwrap())
        } else {
            let db = support::with_package(&options);
            let counters = Counters::builder(clocked(&db.url())).max_flushes(1).build().unwrap();
            (db, counters)
        };
        let mut holder = gated(&db, &counters);
        let coalescing = counters.coalescing();
        thread::scope(|scope| {
            let first = scope.spawn(|| coalescing.increment("gate"));
            // Long enough for the first flush to meet the lock.
            thread::sleep(Duration::from_millis(200));
            let waiting = scope.spawn(|| coalescing.increment("gate"));
            while coalescing.waiting() == 0 {
                thread::sleep(Duration::from_millis(1));
            }
            thread::sleep(HELD);
            holder.query_drop("ROLLBACK").unwrap();
            first.join().unwrap().unwrap();
            waiting.join().unwrap().unwrap();
        });
        check_minutes(&db, if plain { "sync handle, plain" } else { "sync handle, routines" });

        if !plain {
            async_handle(&options);
        }
    }
}

/// The same through the async handle, over the routines.
fn async_handle(options: &PackageOptions) {
    let db = support::with_package(options);
    let setup = Counters::new(db.pool().clone()).unwrap();
    let mut holder = gated(&db, &setup);
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async {
        let pool = MySqlPoolOptions::new()
            .after_connect(|conn, _| Box::pin(async move { conn.execute(CLOCK).await.map(drop) }))
            .connect_lazy(&db.url())
            .unwrap();
        let coalescing = AsyncCounters::builder(pool).max_flushes(1).build().unwrap().coalescing();
        let first = tokio::spawn({
            let coalescing = coalescing.clone();
            async move { coalescing.increment("gate").await }
        });
        // Long enough for the first flush to meet the lock.
        tokio::time::sleep(Duration::from_millis(200)).await;
        let waiting = tokio::spawn({
            let coalescing = coalescing.clone();
            async move { coalescing.increment("gate").await }
        });
        while coalescing.waiting() == 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        tokio::time::sleep(HELD).await;
        holder.query_drop("ROLLBACK").unwrap();
        first.await.unwrap().unwrap();
        waiting.await.unwrap().unwrap();
    });
    check_minutes(&db, "async handle, routines");
}

/// Counter `gate` counted both deltas, the one that waited in the minute
/// before its flush's.
fn check_minutes(db: &Database, handle: &str) {
    let minutes = buckets(&mut db.conn(), "gate");
    assert_eq!(minutes.values().sum::<i64>(), 2, "{handle}: {minutes:?}");
    assert!(
        minutes.get(&bucket("minute", MINUTE_BEFORE, 0).0).copied().unwrap_or(0) >= 1,
        "{handle}: the waiting delta counts in the minute it was handed over, not its flush's {MINUTE_AFTER}: {minutes:?}"
    );
}
