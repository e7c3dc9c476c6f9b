//! Connections cut at random moments by a proxy (`support::fault_proxy`),
//! through the sync, async and coalescing clients: an increment is
//! acknowledged only once committed, and every one not acknowledged comes
//! back as an error that says whether it may have been applied. What the
//! clients cannot yet say is which of those did apply: the tests print how
//! many had, which an application that resends them would count twice, and
//! how many had not, which one that drops them would lose. With write ids
//! the clients can: every increment is acknowledged and counted once. The
//! counter is counted per hour and per day: its buckets hold exactly what
//! its total holds.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread;

use slotted_counters::sqlx::mysql::MySqlPoolOptions;
use slotted_counters::{
    AsyncCounters, CounterError, Counters, Keep, NewCounter, PackageOptions, Period, RetryBudget,
};

use crate::support::fault_proxy::FaultProxy;
use crate::support::{self, Database, on_each_server};

on_each_server!(
    cut_connections_never_turn_an_increment_into_a_silent_loss,
    cut_connections_through_the_async_client_and_coalescing,
    with_write_ids_every_increment_counts_exactly_once_through_cuts,
    with_write_ids_the_plain_mode_counts_exactly_once_through_cuts,
    with_write_ids_the_async_client_and_coalescing_count_exactly_once,
);

/// How long a write-id client retries a lost answer: far below the window
/// the server keeps its ids.
const ID_RETRY_BUDGET: std::time::Duration = std::time::Duration::from_secs(30);

/// The chance that the proxy cuts a chunk: about one cut per 50 writes.
const CUT_CHANCE: f64 = 1.0 / 50.0;

/// What the callers learned of their increments.
#[derive(Debug, Default)]
struct Outcomes {
    acknowledged: AtomicU64,
    /// Failed with an error that says the call may have been applied.
    unknown: AtomicU64,
    /// Failed with an error that says the call was not applied.
    not_applied: AtomicU64,
}

impl Outcomes {
    fn record(&self, outcome: Result<(), CounterError>) {
        let count = match outcome {
            Ok(()) => &self.acknowledged,
            Err(error) if error.may_have_applied() => &self.unknown,
            Err(_) => &self.not_applied,
        };
        count.fetch_add(1, Ordering::Relaxed);
    }

    /// Checks that every increment was acknowledged and counted once: the
    /// write ids made each lost answer safe to send again.
    fn check_exact(&self, total: i64, proxy: &FaultProxy, client: &str) {
        let acknowledged = self.acknowledged.load(Ordering::Relaxed) as i64;
        let unknown = self.unknown.load(Ordering::Relaxed);
        let not_applied = self.not_applied.load(Ordering::Relaxed);
        assert!(proxy.cuts.answers_lost.load(Ordering::Relaxed) > 0, "{client}: {}", proxy.summary());
        assert_eq!((unknown, not_applied), (0, 0), "{client}: every call acknowledged");
        assert_eq!(total, acknowledged, "{client}: each increment counted exactly once");
        println!(
            "{client} with write ids on {:?}: {}; {acknowledged} acknowledged, {total} counted: 0 doubles, 0 losses",
            support::release(),
            proxy.summary()
        );
    }

    /// Checks the counter's `total` against what the callers learned, and
    /// prints what an application without write ids could not know.
    fn check(&self, total: i64, proxy: &FaultProxy, client: &str) {
        let acknowledged = self.acknowledged.load(Ordering::Relaxed) as i64;
        let unknown = self.unknown.load(Ordering::Relaxed) as i64;
        let not_applied = self.not_applied.load(Ordering::Relaxed);
        assert!(
            proxy.cuts.answers_lost.load(Ordering::Relaxed) > 0
                && proxy.cuts.statements_lost.load(Ordering::Relaxed) > 0,
            "{client}: the proxy cut nothing both ways: {}",
            proxy.summary()
        );
        assert!(unknown > 0, "{client}: no caller saw a cut: {}", proxy.summary());
        assert!(
            (acknowledged..=acknowledged + unknown).contains(&total),
            "{client}: {total} counted, {acknowledged} acknowledged, {unknown} unknown: an acknowledged \
             increment was lost, or one reported as not applied was counted"
        );
        let applied = total - acknowledged;
        println!(
            "{client} on {:?}: {}; {acknowledged} acknowledged, {not_applied} not applied, {unknown} unknown: \
             {applied} of those had committed (a resend would count them twice), {} had not (dropping \
             them would lose them)",
            support::release(),
            proxy.summary(),
            unknown - applied
        );
    }
}

/// Counter `hot` of 64 slots, counted per hour and per day.
fn setup(db: &Database) {
    track(&Counters::new(db.pool().clone()).unwrap());
}

fn track(counters: &Counters) {
    counters.setup("hot", NewCounter::new("cut").slots(64)).unwrap();
    for period in [Period::Hour, Period::Day] {
        counters.track("hot", period, Keep::All).unwrap();
    }
}

/// Checks that counter `hot`'s hours and days each sum to its `total`: a
/// write counts in its buckets exactly when it counts in the total, a
/// write with an id sent again in neither.
fn check_buckets(db: &Database, total: i64, client: &str) {
    let sums: Vec<(String, i64)> = mysql::prelude::Queryable::query(
        &mut db.conn(),
        "SELECT CAST(period AS CHAR), CAST(SUM(counter) AS SIGNED) FROM counter_buckets          WHERE counter_name = 'hot' GROUP BY period ORDER BY period",
    )
    .unwrap();
    assert_eq!(sums, [("hour".to_owned(), total), ("day".to_owned(), total)], "{client}");
}

/// The load of the sync tests: 64 threads, 40 increments each.
fn sync_load(counters: &Counters, outcomes: &Outcomes) {
    thread::scope(|scope| {
        for _ in 0..64 {
            scope.spawn(|| {
                for _ in 0..40 {
                    outcomes.record(counters.increment("hot"));
                }
            });
        }
    });
}

fn with_write_ids_every_increment_counts_exactly_once_through_cuts() {
    let db = support::with_default_package(&[]);
    setup(&db);
    let proxy = FaultProxy::start(db.address(), CUT_CHANCE);
    let pool = proxy.pool(&db.url());
    let counters =
        Counters::builder(pool).write_ids().retry(RetryBudget::Time(ID_RETRY_BUDGET)).build().unwrap();
    let outcomes = Outcomes::default();
    sync_load(&counters, &outcomes);
    proxy.stop_cutting();
    let total = support::total(&mut db.conn(), "hot").unwrap();
    outcomes.check_exact(total, &proxy, "sync client");
    check_buckets(&db, total, "sync client");
}

/// The plain mode, on a database with no routine, through an account with
/// no EXECUTE: each increment a transaction of its id row and its slot's
/// update.
fn with_write_ids_the_plain_mode_counts_exactly_once_through_cuts() {
    let options = PackageOptions::default();
    let (db, url) = support::plain_database(&options);
    let reader = Counters::builder(db.pool().clone()).package(&options).plain_sql().build().unwrap();
    track(&reader);
    let proxy = FaultProxy::start(db.address(), CUT_CHANCE);
    let counters = Counters::builder(proxy.pool(&url))
        .package(&options)
        .plain_sql()
        .write_ids()
        .retry(RetryBudget::Time(ID_RETRY_BUDGET))
        .build()
        .unwrap();
    let outcomes = Outcomes::default();
    sync_load(&counters, &outcomes);
    proxy.stop_cutting();
    let total = reader.get("hot").unwrap().unwrap_or_default();
    outcomes.check_exact(total, &proxy, "plain mode");
    check_buckets(&db, total, "plain mode");
}

fn cut_connections_never_turn_an_increment_into_a_silent_loss() {
    let db = support::with_default_package(&[]);
    setup(&db);
    let proxy = FaultProxy::start(db.address(), CUT_CHANCE);
    let counters = Counters::new(proxy.pool(&db.url())).unwrap();
    let outcomes = Outcomes::default();
    sync_load(&counters, &outcomes);
    proxy.stop_cutting();
    let total = support::total(&mut db.conn(), "hot").unwrap();
    outcomes.check(total, &proxy, "sync client");
    check_buckets(&db, total, "sync client");
}

fn cut_connections_through_the_async_client_and_coalescing() {
    let (db, total, outcomes, proxy) = async_load(false);
    outcomes.check(total, &proxy, "async client and coalescing");
    check_buckets(&db, total, "async client and coalescing");
}

fn with_write_ids_the_async_client_and_coalescing_count_exactly_once() {
    let (db, total, outcomes, proxy) = async_load(true);
    outcomes.check_exact(total, &proxy, "async client and coalescing");
    check_buckets(&db, total, "async client and coalescing");
}

/// 64 tasks through a cutting proxy, half with single calls and half
/// through a coalescing handle, 40 increments each; the database, the
/// counter's total and what the callers learned.
fn async_load(write_ids: bool) -> (Database, i64, Outcomes, FaultProxy) {
    let db = support::with_default_package(&[]);
    setup(&db);
    let proxy = FaultProxy::start(db.address(), CUT_CHANCE);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(4).enable_all().build().unwrap();
    let outcomes = Arc::new([Outcomes::default(), Outcomes::default()]);
    runtime.block_on(async {
        let pool = MySqlPoolOptions::new().max_connections(16).connect_lazy(&proxy.url(&db.url())).unwrap();
        let builder = AsyncCounters::builder(pool);
        let builder =
            if write_ids { builder.write_ids().retry(RetryBudget::Time(ID_RETRY_BUDGET)) } else { builder };
        let counters = builder.build().unwrap();
        let coalescing = counters.coalescing();
        let tasks: Vec<_> = (0..64)
            .map(|task| {
                let (counters, coalescing, outcomes) =
                    (counters.clone(), coalescing.clone(), Arc::clone(&outcomes));
                tokio::spawn(async move {
                    for _ in 0..40 {
                        if task % 2 == 0 {
                            outcomes[0].record(counters.increment("hot").await);
                        } else {
                            outcomes[1].record(coalescing.increment("hot").await);
                        }
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
    });
    proxy.stop_cutting();
    let total = support::total(&mut db.conn(), "hot").unwrap();
    let merged = Outcomes::default();
    for outcome in outcomes.iter() {
        for (into, from) in [
            (&merged.acknowledged, &outcome.acknowledged),
            (&merged.unknown, &outcome.unknown),
            (&merged.not_applied, &outcome.not_applied),
        ] {
            into.fetch_add(from.load(Ordering::Relaxed), Ordering::Relaxed);
        }
    }
    (db, total, merged, proxy)
}
