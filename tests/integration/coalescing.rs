//! The coalescing client against a live server: many threads' deltas in few
//! transactions, exact; each caller gets its own delta's outcome; a flush
//! that deadlocks is retried whole; a lost connection fails only its flush;
//! a stalled flush holds up no other counter.

use std::sync::{Arc, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use slotted_counters::{Coalescing, CounterError, Counters, FlushStats};

use crate::support::{self, Database, on_each_server};

on_each_server!(
    many_threads_count_exactly_in_few_transactions_and_acknowledged_means_committed,
    an_unknown_counter_fails_only_the_calls_that_named_it,
    a_flush_that_deadlocks_is_retried_whole,
    a_lost_connection_fails_only_the_flush_in_flight,
    a_stalled_flush_lets_a_second_one_through,
);

/// A database with the default package and counters `names` of one slot
/// each, and a client for it.
fn installed(names: &[&str]) -> (Database, Counters) {
    let db = support::with_default_package(names);
    let counters = Counters::new(db.pool().clone()).unwrap();
    (db, counters)
}

/// A handle flushing one batch at a time, so that calls queued behind a
/// flush that waits all go into the next one.
fn one_flush_at_a_time(db: &Database) -> Arc<Coalescing> {
    flushing(db, 1)
}

/// A handle of a client on `db` with at most `flushes` flushes in flight.
fn flushing(db: &Database, flushes: usize) -> Arc<Coalescing> {
    Arc::new(Counters::builder(db.pool().clone()).max_flushes(flushes).build().unwrap().coalescing())
}

/// How long a test waits for a call: a call that no flush ever carries
/// fails the test instead of hanging it.
const CALL_LIMIT: Duration = Duration::from_secs(60);

/// A call running on a thread of its own.
struct Running<T>(mpsc::Receiver<T>);

/// Runs `work` on a thread of its own.
fn run<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Running<T> {
    let (sender, receiver) = mpsc::channel();
    thread::spawn(move || {
        let _ = sender.send(work());
    });
    Running(receiver)
}

impl<T> Running<T> {
    /// The work's result, within [`CALL_LIMIT`].
    fn outcome(self) -> T {
        self.within(CALL_LIMIT)
    }

    /// The work's result, within `limit`.
    fn within(self, limit: Duration) -> T {
        self.0.recv_timeout(limit).expect("the call panicked, or never returned: no flush carried it")
    }
}

/// `coalescing.add(name, delta)` on a thread of its own.
fn add(coalescing: &Arc<Coalescing>, name: &'static str, delta: i64) -> Running<Result<(), CounterError>> {
    let coalescing = Arc::clone(coalescing);
    run(move || coalescing.add(name, delta))
}

/// Waits until `count` calls' deltas are queued behind the flush in flight.
fn wait_until_waiting(coalescing: &Coalescing, count: usize) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while coalescing.waiting() < count {
        assert!(Instant::now() < deadline, "only {} calls queued, not {count}", coalescing.waiting());
        thread::sleep(Duration::from_millis(5));
    }
}

fn many_threads_count_exactly_in_few_transactions_and_acknowledged_means_committed() {
    let (threads, calls): (i64, i64) = (24, 40);
    let own: Vec<String> = (0..threads).map(|thread| format!("own {thread}")).collect();
    let mut names = vec!["views", "stock"];
    names.extend(own.iter().map(String::as_str));
    let (db, counters) = installed(&names);
    let coalescing = flushing(&db, 2);
    let workers: Vec<_> = own
        .into_iter()
        .enumerate()
        .map(|(thread, own)| {
            let (coalescing, counters) = (Arc::clone(&coalescing), counters.clone());
            run(move || {
                for call in 1..=calls {
                    coalescing.increment("views").unwrap();
                    coalescing.add("stock", if thread % 2 == 0 { 5 } else { -3 }).unwrap();
                    coalescing.increment(&own).unwrap();
                    let committed = counters.get(&own).unwrap();
                    assert_eq!(committed, Some(call), "{own}: an acknowledged increment is committed");
                }
            })
        })
        .collect();
    for worker in workers {
        worker.outcome();
    }
    let stats: FlushStats = coalescing.stats();
    drop(coalescing);

    let mut conn = db.conn();
    assert_eq!(support::total(&mut conn, "views"), Some(threads * calls));
    assert_eq!(support::total(&mut conn, "stock"), Some(threads / 2 * calls * 5 - threads / 2 * calls * 3));
    assert_eq!(stats.deltas, (threads * calls * 3) as u64, "every call's delta was flushed once");
    // Batching comes from the callers waiting, not from slow commits: with
    // 24 callers each waiting for its flush and at most 2 flushes in
    // flight, most calls queue behind one (about 11 a flush on the shared
    // servers, which do not sync each commit).
    assert!(stats.mean_batch() >= 4.0, "{threads} threads shared few flushes: {stats:?}");
}

fn an_unknown_counter_fails_only_the_calls_that_named_it() {
    let (db, counters) = installed(&["gate", "a", "b"]);
    let coalescing = one_flush_at_a_time(&db);
    let mut gate = support::close_gate(&db);
    let first = add(&coalescing, "gate", 1);
    support::wait_for_lock_wait(&mut db.conn());
    let calls: Vec<_> = [("a", 1), ("missing", 1), ("a", 1), ("b", 2), ("missing", 4), ("a", 1)]
        .into_iter()
        .map(|(name, delta)| (name, add(&coalescing, name, delta)))
        .collect();
    wait_until_waiting(&coalescing, calls.len());
    gate.query_drop("COMMIT").unwrap();
    assert!(first.outcome().is_ok());
    let outcomes: Vec<_> = calls.into_iter().map(|(name, call)| (name, call.outcome())).collect();

    for (name, outcome) in &outcomes {
        match *name {
            "missing" => assert!(
                matches!(outcome, Err(CounterError::NotFound { message, .. }) if message == "unknown counter: 'missing'"),
                "{outcome:?}"
            ),
            _ => assert!(outcome.is_ok(), "{name}: {outcome:?}"),
        }
    }
    assert_eq!(counters.get_many(["gate", "a", "b"]).unwrap(), [Some(2), Some(3), Some(2)]);
    let stats = coalescing.stats();
    assert_eq!((stats.flushes, stats.deltas), (2, 7), "the six calls shared one flush, after the gate's");
}

fn a_flush_that_deadlocks_is_retried_whole() {
    let (db, counters) = installed(&["gate", "a", "b"]);
    let coalescing = one_flush_at_a_time(&db);
    // `heavy` writes 200 rows, then holds b: InnoDB picks the flush, which
    // did less, as the deadlock's victim.
    let mut heavy = support::heavy_transaction(&db);
    heavy
        .query_drop("UPDATE counters SET counter = counter + 1 WHERE counter_name = 'b' AND counter_id = 1")
        .unwrap();
    let deadlocks_before = support::deadlocks(&mut db.conn());

    let mut gate = support::close_gate(&db);
    let first = add(&coalescing, "gate", 1);
    support::wait_for_lock_wait(&mut db.conn());
    let calls: Vec<_> = ["a", "b", "a"].into_iter().map(|name| add(&coalescing, name, 1)).collect();
    wait_until_waiting(&coalescing, calls.len());
    gate.query_drop("COMMIT").unwrap();
    assert!(first.outcome().is_ok());
    // The flush of a and b holds a and waits for b; asking for a closes the cycle.
    support::wait_for_lock_wait(&mut db.conn());
    heavy
        .query_drop("UPDATE counters SET counter = counter + 1 WHERE counter_name = 'a' AND counter_id = 1")
        .unwrap();
    heavy.query_drop("COMMIT").unwrap();
    let outcomes: Vec<_> = calls.into_iter().map(Running::outcome).collect();

    assert!(outcomes.iter().all(Result::is_ok), "{outcomes:?}");
    assert!(support::deadlocks(&mut db.conn()) > deadlocks_before, "the server saw no deadlock");
    assert_eq!(counters.get_many(["a", "b"]).unwrap(), [Some(3), Some(2)], "the retried flush applied all");
    let stats = coalescing.stats();
    assert_eq!((stats.flushes, stats.deltas), (2, 4));
}

fn a_lost_connection_fails_only_the_flush_in_flight() {
    let (db, counters) = installed(&["gate", "a"]);
    let coalescing = one_flush_at_a_time(&db);
    let mut gate = support::close_gate(&db);
    let first = add(&coalescing, "gate", 1);
    support::wait_for_lock_wait(&mut db.conn());
    let next = add(&coalescing, "a", 1);
    wait_until_waiting(&coalescing, 1);

    let flush = support::lock_waiting_connection(&mut db.conn());
    db.conn().query_drop(format!("KILL {flush}")).unwrap();
    let lost = first.outcome();
    assert!(matches!(lost, Err(CounterError::Server { .. } | CounterError::Connection { .. })), "{lost:?}");
    assert!(next.outcome().is_ok(), "the next flush runs on another connection");
    gate.query_drop("COMMIT").unwrap();
    assert_eq!(
        counters.get_many(["gate", "a"]).unwrap(),
        [Some(1), Some(1)],
        "the killed flush applied nothing"
    );
}

/// One flush at a time gathers the most calls per commit; a second starts
/// only once the one in flight has run four times as long as flushes usually
/// take. A flush held by a lock lets a call of another counter through in
/// a flush of its own, started by the oldest waiting call when the held
/// one stalls: here flushes usually take 300 ms, and the call is queued at
/// once behind the held flush, before it counts as stalled.
fn a_stalled_flush_lets_a_second_one_through() {
    let (db, counters) = installed(&["gate", "a"]);
    let coalescing = flushing(&db, 2);
    let mut gate = support::close_gate(&db);
    let slow = add(&coalescing, "gate", 1);
    thread::sleep(Duration::from_millis(300));
    gate.query_drop("COMMIT").unwrap();
    assert!(slow.outcome().is_ok());

    let mut gate = support::close_gate(&db);
    let held = add(&coalescing, "gate", 1);
    support::wait_for_lock_wait(&mut db.conn());
    let next = add(&coalescing, "a", 1);
    assert!(
        next.within(Duration::from_secs(10)).is_ok(),
        "a second flush carried it while the gate was held"
    );
    gate.query_drop("COMMIT").unwrap();
    assert!(held.outcome().is_ok());
    assert_eq!(counters.get_many(["gate", "a"]).unwrap(), [Some(4), Some(1)]);
    let stats = coalescing.stats();
    assert_eq!((stats.flushes, stats.deltas), (3, 3));
}
