//! The async client (feature `sqlx`) on each server, in a tokio runtime of
//! its own per test: the sync client's guarantees, through sqlx's driver.

use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use slotted_counters::sqlx::MySqlPool;
use slotted_counters::sqlx::mysql::MySqlPoolOptions;
use slotted_counters::{
    AsyncCoalescing, AsyncCounters, ClientBuilder, CounterError, NewCounter, PackageOptions, RetryBudget,
    StartDate,
};
use slotted_counters_cli::{render, script};
use slotted_counters_core::package::{errno, server_errno};
use tokio::runtime::Runtime;
use tokio::task::JoinHandle;

use crate::support::{self, Database, on_each_server, stderr, stdout};

on_each_server!(
    tasks_count_exactly_through_both_handles_and_acknowledged_means_committed,
    calls_in_the_callers_transaction_commit_or_roll_back_with_it,
    errors_arrive_as_the_sync_clients_do,
    a_deadlocked_call_is_retried_and_one_in_the_callers_transaction_is_not,
    rollbacks_are_tried_again_after_growing_pauses,
    an_unknown_counter_in_a_shared_flush_fails_only_its_callers,
    a_dropped_caller_loses_nobody_elses_increment,
    a_lost_connection_fails_only_the_flush_in_flight,
    a_stalled_flush_lets_a_second_one_through,
    a_coalescing_handle_keeps_its_connection_and_replaces_one_the_server_closed,
    calls_ride_through_a_reinstall,
    the_async_example_counts_as_the_client_guide_says,
);

/// How long a test waits for a call: one that no flush ever carries fails
/// the test instead of hanging it.
const CALL_LIMIT: Duration = Duration::from_secs(60);

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(4).enable_all().build().unwrap()
}

/// A database with the default package and counters `names` of one slot
/// each, and an async client on it.
fn installed(runtime: &Runtime, names: &[&str]) -> (Database, AsyncCounters) {
    let db = support::with_default_package(names);
    let counters = client(runtime, &db, |builder| builder);
    (db, counters)
}

/// An async client on `db`, built with what `settings` sets.
fn client(
    runtime: &Runtime,
    db: &Database,
    settings: impl FnOnce(ClientBuilder<MySqlPool>) -> ClientBuilder<MySqlPool>,
) -> AsyncCounters {
    runtime.block_on(async {
        let pool = MySqlPoolOptions::new().max_connections(20).connect(&db.url()).await.unwrap();
        settings(AsyncCounters::builder(pool)).build().unwrap()
    })
}

/// The outcome of a spawned call, within [`CALL_LIMIT`].
fn outcome<T>(runtime: &Runtime, task: JoinHandle<T>) -> T {
    runtime
        .block_on(async { tokio::time::timeout(CALL_LIMIT, task).await })
        .expect("the call never returned: no flush carried it")
        .expect("the call panicked")
}

/// `coalescing.add(name, delta)` in a task of its own.
fn add(
    runtime: &Runtime,
    coalescing: &AsyncCoalescing,
    name: &'static str,
    delta: i64,
) -> JoinHandle<Result<(), CounterError>> {
    let coalescing = coalescing.clone();
    runtime.spawn(async move { coalescing.add(name, delta).await })
}

/// Waits until `count` calls' deltas are queued behind the flush in flight.
fn wait_until_waiting(coalescing: &AsyncCoalescing, count: usize) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while coalescing.waiting() < count {
        assert!(Instant::now() < deadline, "only {} calls queued, not {count}", coalescing.waiting());
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn tasks_count_exactly_through_both_handles_and_acknowledged_means_committed() {
    let runtime = runtime();
    let (tasks, calls) = (64_i64, 20_i64);
    let own: Vec<String> = (0..tasks).map(|task| format!("own {task}")).collect();
    let mut names = vec!["direct", "coalesced"];
    names.extend(own.iter().map(String::as_str));
    let (db, counters) = installed(&runtime, &names);
    let coalescing = counters.coalescing();
    let workers: Vec<_> = own
        .into_iter()
        .enumerate()
        .map(|(task, own)| {
            let (counters, coalescing) = (counters.clone(), coalescing.clone());
            runtime.spawn(async move {
                for call in 1..=calls {
                    if task % 2 == 0 {
                        counters.increment("direct").await.unwrap();
                        counters.increment(&own).await.unwrap();
                    } else {
                        coalescing.increment("coalesced").await.unwrap();
                        coalescing.increment(&own).await.unwrap();
                    }
                    let committed = counters.get(&own).await.unwrap();
                    assert_eq!(committed, Some(call), "{own}: an acknowledged increment is committed");
                }
            })
        })
        .collect();
    for worker in workers {
        outcome(&runtime, worker);
    }
    let stats = coalescing.stats();

    let mut conn = db.conn();
    assert_eq!(support::total(&mut conn, "direct"), Some(tasks / 2 * calls));
    assert_eq!(support::total(&mut conn, "coalesced"), Some(tasks / 2 * calls));
    assert_eq!(stats.deltas, (tasks * calls) as u64, "every coalesced call's delta was flushed once");
    assert!(stats.mean_batch() > 1.0, "{tasks} tasks shared flushes: {stats:?}");
}

fn calls_in_the_callers_transaction_commit_or_roll_back_with_it() {
    let runtime = runtime();
    let (db, counters) = installed(&runtime, &[]);
    runtime.block_on(async {
        counters.setup("orders", NewCounter::new("d").slots(4)).await.unwrap();
        let pool = MySqlPoolOptions::new().connect(&db.url()).await.unwrap();
        for commit in [false, true] {
            let mut tx = pool.begin().await.unwrap();
            counters.on(&mut tx).increment("orders").await.unwrap();
            counters.on(&mut tx).add("orders", 4).await.unwrap();
            counters.on(&mut tx).add_many([("orders", 2)]).await.unwrap();
            let seen = counters.on(&mut tx).get("orders").await.unwrap();
            assert_eq!(seen, Some(7), "the transaction sees its own increments");
            if commit {
                tx.commit().await.unwrap();
            } else {
                tx.rollback().await.unwrap();
                assert_eq!(counters.get("orders").await.unwrap(), Some(0), "rolled back with the caller's");
            }
        }
        assert_eq!(counters.get("orders").await.unwrap(), Some(7), "committed with the caller's");
    });
}

fn errors_arrive_as_the_sync_clients_do() {
    let runtime = runtime();
    let (_db, counters) = installed(&runtime, &["exists"]);
    runtime.block_on(async {
        let again = counters.setup("exists", NewCounter::new("d")).await.unwrap_err();
        assert!(matches!(again, CounterError::AlreadyExists { .. }), "{again:?}");
        assert_eq!((again.code(), again.sqlstate()), (Some(errno::ALREADY_EXISTS), Some("23000")));

        let unknown = counters.increment("missing").await.unwrap_err();
        assert_eq!(unknown.to_string(), "unknown counter: 'missing'");
        assert_eq!(unknown.code(), Some(errno::UNKNOWN_COUNTER));
        let batch = counters.add_many([("exists", 1), ("missing", 1)]).await.unwrap_err();
        assert!(matches!(batch, CounterError::NotFound { .. }), "{batch:?}");
        assert_eq!(counters.get("exists").await.unwrap(), Some(0), "nothing of the batch was applied");

        let blank = counters.setup(" ", NewCounter::new("d")).await.unwrap_err();
        assert!(matches!(blank, CounterError::InvalidArgument { .. }), "{blank:?}");
        assert_eq!(counters.get("missing").await.unwrap(), None);
        assert!(!unknown.is_retryable() && !blank.is_retryable());
    });
}

/// [`support::deadlock_against`], with `call` in a task of its own.
fn deadlock_against<T: Send + 'static>(
    runtime: &Runtime,
    db: &Database,
    call: impl Future<Output = T> + Send + 'static,
) -> T {
    support::deadlock_against(db, || runtime.spawn(call), |caller| outcome(runtime, caller))
}

fn a_deadlocked_call_is_retried_and_one_in_the_callers_transaction_is_not() {
    let runtime = runtime();
    let (db, counters) = installed(&runtime, &[]);
    runtime.block_on(counters.setup("d", NewCounter::new("d").slots(4))).unwrap();
    let before = support::deadlocks(&mut db.conn());

    let retried = counters.clone();
    let outcome =
        deadlock_against(&runtime, &db, async move { retried.reset("d", 50, StartDate::Keep).await });
    assert!(outcome.is_ok(), "{outcome:?}");
    assert!(support::deadlocks(&mut db.conn()) > before, "the server saw no deadlock");
    assert_eq!(runtime.block_on(counters.get("d")).unwrap(), Some(50), "the retried reset ran last");

    let pool = runtime.block_on(MySqlPoolOptions::new().connect(&db.url())).unwrap();
    let in_transaction = counters.clone();
    let outcome = deadlock_against(&runtime, &db, async move {
        let mut tx = pool.begin().await.unwrap();
        in_transaction.on(&mut tx).reset("d", 70, StartDate::Keep).await
    });
    let error = outcome.unwrap_err();
    assert_eq!(error.code(), Some(server_errno::DEADLOCK), "{error:?}");
    assert!(error.is_retryable(), "the caller may run its transaction again");
    assert_eq!(runtime.block_on(counters.get("d")).unwrap(), Some(52), "only the other transaction landed");
}

/// As the sync client's: as many tries as the budget says, with pauses
/// between them.
fn rollbacks_are_tried_again_after_growing_pauses() {
    let runtime = runtime();
    let db = support::rolling_back_every_increment();

    let four_tries = client(&runtime, &db, |builder| builder.retry(RetryBudget::Attempts(4)));
    let error = runtime.block_on(four_tries.increment("a")).unwrap_err();
    assert_eq!((error.code(), error.is_retryable()), (Some(server_errno::DEADLOCK), true), "{error:?}");
    assert_eq!(support::tries(&db), 4, "four tries in all");

    let budgeted =
        client(&runtime, &db, |builder| builder.retry(RetryBudget::Time(support::ROLLBACK_BUDGET)));
    let error = runtime.block_on(budgeted.increment("a")).unwrap_err();
    assert_eq!(error.code(), Some(server_errno::DEADLOCK), "{error:?}");
    let tries = support::tries(&db) - 4;
    assert!(
        (3..=support::MOST_TRIES_IN_BUDGET).contains(&tries),
        "{tries} tries in {:?}",
        support::ROLLBACK_BUDGET
    );
}

fn an_unknown_counter_in_a_shared_flush_fails_only_its_callers() {
    let runtime = runtime();
    let (db, counters) = installed(&runtime, &["gate", "a", "b"]);
    let coalescing = client(&runtime, &db, |builder| builder.max_flushes(1)).coalescing();
    let mut gate = support::close_gate(&db);
    let first = add(&runtime, &coalescing, "gate", 1);
    support::wait_for_lock_wait(&mut db.conn());
    let calls: Vec<_> = [("a", 1), ("missing", 1), ("a", 1), ("b", 2), ("missing", 4), ("a", 1)]
        .into_iter()
        .map(|(name, delta)| (name, add(&runtime, &coalescing, name, delta)))
        .collect();
    wait_until_waiting(&coalescing, calls.len());
    gate.query_drop("COMMIT").unwrap();
    assert!(outcome(&runtime, first).is_ok());

    for (name, call) in calls {
        let result = outcome(&runtime, call);
        match name {
            "missing" => assert!(
                matches!(&result, Err(CounterError::NotFound { message, .. }) if message == "unknown counter: 'missing'"),
                "{result:?}"
            ),
            _ => assert!(result.is_ok(), "{name}: {result:?}"),
        }
    }
    let totals = runtime.block_on(counters.get_many(["gate", "a", "b"])).unwrap();
    assert_eq!(totals, [Some(2), Some(3), Some(2)]);
    let stats = coalescing.stats();
    assert_eq!((stats.flushes, stats.deltas), (2, 7), "the six calls shared one flush, after the gate's");
}

/// Callers whose futures are dropped, one while its delta is in the flush
/// in flight and one while its delta waits for the next: the flushes go on,
/// every other caller's delta is applied and acknowledged, and the dropped
/// deltas are applied too (the handle's documented behaviour), never more.
fn a_dropped_caller_loses_nobody_elses_increment() {
    let runtime = runtime();
    let (db, counters) = installed(&runtime, &["gate", "a"]);
    let coalescing = client(&runtime, &db, |builder| builder.max_flushes(1)).coalescing();
    let mut gate = support::close_gate(&db);
    let in_flight = add(&runtime, &coalescing, "gate", 1);
    support::wait_for_lock_wait(&mut db.conn());
    let mut queued: Vec<_> = [("gate", 1), ("gate", 1), ("a", 1), ("a", 1), ("a", 1), ("a", 1), ("a", 1)]
        .into_iter()
        .map(|(name, delta)| add(&runtime, &coalescing, name, delta))
        .collect();
    wait_until_waiting(&coalescing, queued.len());

    in_flight.abort();
    queued.remove(3).abort();
    let dropped = 2;
    gate.query_drop("COMMIT").unwrap();
    let acknowledged = queued.into_iter().map(|call| outcome(&runtime, call)).filter(Result::is_ok).count();
    assert_eq!(acknowledged, 6, "every caller that stayed is acknowledged");

    // The flushes end after the last acknowledgement: wait for the stats.
    let deadline = Instant::now() + CALL_LIMIT;
    while coalescing.stats().deltas < 8 {
        assert!(Instant::now() < deadline, "the flushes never finished: {:?}", coalescing.stats());
        std::thread::sleep(Duration::from_millis(10));
    }
    let totals = runtime.block_on(counters.get_many(["gate", "a"])).unwrap();
    assert_eq!(
        totals,
        [Some(1 + 1 + 2), Some(5)],
        "the gate's holder, then {acknowledged} acknowledged and {dropped} dropped deltas, all applied once"
    );
}

fn a_lost_connection_fails_only_the_flush_in_flight() {
    let runtime = runtime();
    let (db, counters) = installed(&runtime, &["gate", "a"]);
    let coalescing = client(&runtime, &db, |builder| builder.max_flushes(1)).coalescing();
    let mut gate = support::close_gate(&db);
    let first = add(&runtime, &coalescing, "gate", 1);
    support::wait_for_lock_wait(&mut db.conn());
    let next = add(&runtime, &coalescing, "a", 1);
    wait_until_waiting(&coalescing, 1);

    let flush = support::lock_waiting_connection(&mut db.conn());
    db.conn().query_drop(format!("KILL {flush}")).unwrap();
    let lost = outcome(&runtime, first);
    assert!(matches!(lost, Err(CounterError::Server { .. } | CounterError::Connection { .. })), "{lost:?}");
    assert!(outcome(&runtime, next).is_ok(), "the next flush runs on another connection");
    gate.query_drop("COMMIT").unwrap();
    let totals = runtime.block_on(counters.get_many(["gate", "a"])).unwrap();
    assert_eq!(totals, [Some(1), Some(1)], "the killed flush applied nothing");
}

/// One flush at a time gathers the most calls per commit; a second starts
/// only once the one in flight has run four times as long as flushes usually
/// take. A flush held by a lock lets a call of another counter through in
/// a flush of its own, started by the held flush's own timer: here flushes
/// usually take 300 ms, and the call is queued at once behind the held
/// flush, before it counts as stalled.
fn a_stalled_flush_lets_a_second_one_through() {
    let runtime = runtime();
    let (db, counters) = installed(&runtime, &["gate", "a"]);
    let coalescing = client(&runtime, &db, |builder| builder.max_flushes(2)).coalescing();
    let mut gate = support::close_gate(&db);
    let slow = add(&runtime, &coalescing, "gate", 1);
    std::thread::sleep(Duration::from_millis(300));
    gate.query_drop("COMMIT").unwrap();
    assert!(outcome(&runtime, slow).is_ok());

    let mut gate = support::close_gate(&db);
    let held = add(&runtime, &coalescing, "gate", 1);
    support::wait_for_lock_wait(&mut db.conn());
    let next = add(&runtime, &coalescing, "a", 1);
    let through = runtime.block_on(async { tokio::time::timeout(Duration::from_secs(10), next).await });
    assert!(
        matches!(through, Ok(Ok(Ok(())))),
        "a second flush carried it while the gate was held: {through:?}"
    );
    gate.query_drop("COMMIT").unwrap();
    assert!(outcome(&runtime, held).is_ok());
    let totals = runtime.block_on(counters.get_many(["gate", "a"])).unwrap();
    assert_eq!(totals, [Some(4), Some(1)]);
    let stats = coalescing.stats();
    assert_eq!((stats.flushes, stats.deltas), (3, 3));
}

/// A coalescing handle keeps a connection per flush in flight, so that a
/// flush skips the pool's ping, and gives it back when dropped; a kept
/// connection the server closed meanwhile is replaced, and the flush
/// succeeds. The client checks one idle for any time here, not the default
/// second.
fn a_coalescing_handle_keeps_its_connection_and_replaces_one_the_server_closed() {
    let runtime = runtime();
    let db = support::with_default_package(&["a"]);
    runtime.block_on(async {
        let pool = MySqlPoolOptions::new()
            .max_connections(1)
            .acquire_timeout(Duration::from_secs(5))
            .connect(&db.url())
            .await
            .unwrap();
        let counters = AsyncCounters::builder(pool.clone())
            .max_flushes(1)
            .check_kept_connections_after(Duration::ZERO)
            .build()
            .unwrap();
        let coalescing = counters.coalescing();
        coalescing.increment("a").await.unwrap();
        // sqlx gives a connection back in a task: long enough for it to run.
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(pool.try_acquire().is_none(), "the handle keeps the pool's only connection");

        let mut conn = db.conn();
        let kept: Vec<u64> = support::despite_emoji_elsewhere(|| {
            conn.query(
                "SELECT ID FROM information_schema.PROCESSLIST WHERE DB = DATABASE() AND ID <> CONNECTION_ID()",
            )
        })
        .unwrap();
        assert!(!kept.is_empty(), "the handle's connection is open");
        for id in kept {
            let _ = db.conn().query_drop(format!("KILL {id}"));
        }
        coalescing.increment("a").await.unwrap();

        drop(coalescing);
        let total = counters.get("a").await.expect("the dropped handle gave its connection back");
        assert_eq!(total, Some(2));
    });
}

/// On MySQL a reinstall drops each routine before creating it again: a call
/// that meets the gap is sent again until the routine is back, and fails as
/// not installed only after [`slotted_counters::defaults::REINSTALL_WINDOW`].
fn calls_ride_through_a_reinstall() {
    let runtime = runtime();
    let db = support::with_own_package(&PackageOptions::default());
    db.conn().query_drop("CALL counter_setup('views', 'd', 1, NULL)").unwrap();
    // One connection, whose cached statement must survive the reinstall.
    let pool = runtime.block_on(MySqlPoolOptions::new().max_connections(1).connect(&db.url())).unwrap();
    let counters = AsyncCounters::new(pool).unwrap();
    runtime.block_on(counters.increment("views")).unwrap();
    db.conn().query_drop("DROP PROCEDURE counter_increment").unwrap();
    let call = {
        let counters = counters.clone();
        runtime.spawn(async move { counters.increment("views").await })
    };
    std::thread::sleep(Duration::from_millis(300));
    script::run(&mut db.conn(), &render::setup_sql(&PackageOptions::default()).unwrap()).unwrap();
    assert!(outcome(&runtime, call).is_ok(), "the call waited for the routine to come back");
    runtime.block_on(counters.increment("views")).unwrap();
    assert_eq!(runtime.block_on(counters.get("views")).unwrap(), Some(3));

    db.conn().query_drop("DROP PROCEDURE counter_increment").unwrap();
    let started = Instant::now();
    let error = runtime.block_on(counters.increment("views")).unwrap_err();
    assert!(matches!(error, CounterError::NotInstalled(_)), "{error:?}");
    assert_eq!(error.code(), Some(server_errno::NO_SUCH_ROUTINE));
    assert!(
        started.elapsed() >= slotted_counters::defaults::REINSTALL_WINDOW,
        "it waited for a reinstall first"
    );
}

/// The example `async_page_views`, as `cargo run --example async_page_views
/// --features sqlx` runs it with `DATABASE_URL` set, which the client guide
/// says: 64 tasks, 50 views each, half of them coalesced, every one
/// counted. This suite builds it from its file (tests/Cargo.toml).
fn the_async_example_counts_as_the_client_guide_says() {
    let db = Database::new();
    script::run(&mut db.conn(), &render::setup_sql(&PackageOptions::default()).unwrap()).unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_async-page-views"))
        .env("DATABASE_URL", db.url())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let report = stdout(&output);
    let counted: i64 = report
        .lines()
        .filter(|line| line.starts_with("page:"))
        .filter_map(|line| line.split(": ").nth(1)?.split(' ').next()?.parse::<i64>().ok())
        .sum();
    assert_eq!(counted, 64 * 50, "{report}");
    assert!(report.contains("coalesced: 1600 views in "), "{report}");
    let mut conn = db.conn();
    let totals: i64 = ["page:home", "page:pricing", "page:docs"]
        .into_iter()
        .map(|page| support::total(&mut conn, page).unwrap_or(0))
        .sum();
    assert_eq!(totals, 64 * 50);
}
