//! The async handle's queue against a scripted driver, on a runtime whose
//! clock stands still until every task waits: who flushes what, when a
//! stalled flush gets company, and that every caller hears its own outcome.
//! A caller never answered fails its test at once, when the clock jumps to
//! its deadline.

use std::time::Duration;

use slotted_counters_core::PackageOptions;
use slotted_counters_core::package::errno;
use tokio::runtime::Runtime;
use tokio::task::JoinHandle;

use super::*;
use crate::scripted::{Arg, Reply, ScriptedDriver, seen_while};

/// A flush counts in the buckets of its oldest delta's hand-over: a time
/// before the server's now.
const ADD: &str = "CALL `counter_add_at`(?, ?, UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND)";
const ADD_MANY: &str = "CALL `counter_add_many_at`(?, ?, UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND)";

/// A flush's answer that takes this long is far past any stall.
const SLOW: Duration = Duration::from_secs(1);

impl FlushTasks for ScriptedDriver {
    fn spawn_flush(shared: Arc<Shared<Self>>, batch: Batch<ReplyTo>) {
        tokio::spawn(shared.flush_until_empty(batch));
    }
}

/// A runtime on one thread, whose clock stands still while any task can
/// run and jumps to the next timer when none can.
fn paused() -> Runtime {
    tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true).build().unwrap()
}

fn shared(
    max_flushes: usize,
    replies: impl IntoIterator<Item = Reply>,
) -> (Arc<Shared<ScriptedDriver>>, ScriptedDriver) {
    let driver = ScriptedDriver::new(replies);
    let engine = Engine::routines_only(driver.clone(), &PackageOptions::default());
    let settings = FlushSettings { max_flushes, ..FlushSettings::default() };
    (Arc::new(Shared::new(engine, settings)), driver)
}

/// A task's call of `add`.
fn add(shared: &Arc<Shared<ScriptedDriver>>, name: &'static str) -> JoinHandle<Result<(), CounterError>> {
    let shared = Arc::clone(shared);
    tokio::spawn(async move { shared.add(name, 1).await })
}

async fn answer(call: JoinHandle<Result<(), CounterError>>) -> Result<(), CounterError> {
    tokio::time::timeout(SLOW * 10, call).await.expect("a caller was never answered").unwrap()
}

/// Lets the spawned tasks run until they wait, without the clock moving.
async fn settle() {
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
}

fn slow() -> Reply {
    Reply::Slow(SLOW, Box::new(Reply::Changed(1)))
}

#[test]
fn calls_made_during_a_flush_are_carried_by_the_next_one_together() {
    paused().block_on(async {
        let (shared, driver) = shared(1, [slow(), Reply::Changed(1)]);
        let first = add(&shared, "views");
        settle().await;
        let later: Vec<_> = (0..4).map(|_| add(&shared, "views")).collect();
        settle().await;
        assert_eq!(shared.lock().waiting.len(), 4);
        assert_eq!(driver.sent().len(), 1, "one flush at a time");

        answer(first).await.unwrap();
        for call in later {
            answer(call).await.unwrap();
        }
        let sent = driver.sent();
        assert!(sent.iter().all(|sent| sent.sql == ADD), "{sent:?}");
        assert_eq!(sent[1].params[..2], [Arg::text("views"), Arg::number(4)], "one add for the four");
        let stats = shared.lock().stats;
        assert_eq!((stats.flushes, stats.deltas), (2, 5));
        settle().await;
        assert_eq!(shared.lock().in_flight, 0, "the task gave its place back once it ran dry");
    });
}

/// Four callers each adding 3 times in a loop, one flush at a time: the
/// first flush carries the first caller alone; from then on, each flush
/// carries the callers queued during it and those it answered, who call
/// again at once (4, 4, then the 3 still calling), not every other flush
/// half of them.
#[test]
fn callers_a_flush_answered_who_call_again_at_once_ride_the_next_flush_together() {
    paused().block_on(async {
        let (shared, driver) = shared(1, (0..4).map(|_| slow()));
        let callers: Vec<_> = (0..4)
            .map(|_| {
                let shared = Arc::clone(&shared);
                tokio::spawn(async move {
                    for _ in 0..3 {
                        shared.add("views", 1).await?;
                    }
                    Ok(())
                })
            })
            .collect();
        for caller in callers {
            answer(caller).await.unwrap();
        }
        let deltas: Vec<_> = driver.sent().into_iter().map(|sent| sent.params[1].clone()).collect();
        assert_eq!(deltas, [1, 4, 4, 3].map(Arg::number), "deltas per flush");
    });
}

/// Three callers calling twice each, two flushes allowed: the second flush
/// is slow enough to count as stalled, but nobody is queued beside it; the
/// callers it answered, calling again while its task yields, find no
/// stalled flush to start another beside, and ride the next one together.
#[test]
fn callers_answered_after_a_slow_flush_ride_one_flush_not_a_stalled_ones_company() {
    let events = seen_while(|| {
        paused().block_on(async {
            let (shared, driver) = shared(2, [Reply::Changed(1), slow(), Reply::Changed(1)]);
            let callers: Vec<_> = (0..3)
                .map(|_| {
                    let shared = Arc::clone(&shared);
                    tokio::spawn(async move {
                        shared.add("views", 1).await?;
                        shared.add("views", 1).await
                    })
                })
                .collect();
            for caller in callers {
                answer(caller).await.unwrap();
            }
            let deltas: Vec<_> = driver.sent().into_iter().map(|sent| sent.params[1].clone()).collect();
            assert_eq!(deltas, [1, 3, 2].map(Arg::number), "deltas per flush");
        })
    });
    assert!(events.is_empty(), "{events:?}");
}

#[test]
fn a_stalled_flush_lets_a_second_start_beside_it_and_says_so() {
    let events = seen_while(|| {
        paused().block_on(async {
            let (shared, driver) = shared(2, [slow(), Reply::Changed(1)]);
            let first = add(&shared, "views");
            settle().await;
            let started = tokio::time::Instant::now();
            answer(add(&shared, "likes")).await.expect("answered while the first flush is slow");
            assert!(started.elapsed() < SLOW, "answered after {:?}", started.elapsed());
            assert!(!first.is_finished());
            answer(first).await.unwrap();
            assert_eq!(driver.sent().len(), 2);
            let stats = shared.lock().stats;
            assert_eq!((stats.flushes, stats.deltas), (2, 2));
        })
    });
    assert_eq!(events.len(), 1, "{events:?}");
    assert!(events[0].starts_with("DEBUG") && events[0].contains("a flush stalled"), "{}", events[0]);
}

#[test]
fn callers_of_two_flushes_in_flight_each_hear_their_own_flushs_outcome() {
    paused().block_on(async {
        // The first flush is slow and then loses its connection; the second
        // starts beside it and commits.
        let (shared, driver) = shared(2, [Reply::Slow(SLOW, Box::new(Reply::Lost)), Reply::Changed(1)]);
        let first = add(&shared, "views");
        settle().await;
        answer(add(&shared, "likes")).await.expect("the second flush commits while the first is in flight");
        let lost = answer(first).await.expect_err("the first flush's connection broke");
        assert_eq!(lost.code(), None, "no server answered: {lost}");
        let sent = driver.sent();
        assert_eq!(sent[0].params[0], Arg::text("views"));
        assert_eq!(sent[1].params[0], Arg::text("likes"), "each flush carried its own caller");
    });
}

#[test]
fn one_flush_at_a_time_waits_out_a_stall() {
    paused().block_on(async {
        let (shared, driver) = shared(1, [slow(), Reply::Changed(1)]);
        let first = add(&shared, "views");
        settle().await;
        let started = tokio::time::Instant::now();
        answer(add(&shared, "likes")).await.unwrap();
        assert!(started.elapsed() >= SLOW, "the second flush waited for the first");
        answer(first).await.unwrap();
        assert_eq!(driver.sent().len(), 2);
    });
}

#[test]
fn each_caller_of_a_flush_refused_for_one_counter_hears_its_own_outcome() {
    use Reply::{Changed, Error};
    paused().block_on(async {
        let refused = Error(errno::UNKNOWN_COUNTER);
        let (shared, driver) = shared(1, [slow(), refused.clone(), refused, Changed(1)]);
        let first = add(&shared, "views");
        settle().await;
        let views = add(&shared, "views");
        let missing = add(&shared, "missing");

        answer(first).await.unwrap();
        answer(views).await.unwrap();
        assert_eq!(answer(missing).await.unwrap_err().code(), Some(errno::UNKNOWN_COUNTER));
        assert_eq!(driver.sql(), [ADD, ADD_MANY, ADD_MANY, ADD_MANY], "the batch, then each counter alone");
    });
}

#[test]
fn the_callers_of_a_flush_task_that_panicked_hear_it_and_the_queue_goes_on() {
    paused().block_on(async {
        let (shared, driver) = shared(1, [slow(), Reply::Panic, Reply::Changed(1)]);
        let first = add(&shared, "views");
        settle().await;
        let carried = [add(&shared, "views"), add(&shared, "likes")];

        answer(first).await.unwrap();
        for call in carried {
            assert!(matches!(answer(call).await, Err(CounterError::FlushPanicked)));
        }
        assert_eq!(shared.lock().in_flight, 0, "the panicked task gave its place back");
        answer(add(&shared, "views")).await.expect("a later call has a flush of its own");
        assert_eq!(driver.sent().len(), 3);
    });
}

#[test]
fn every_handle_of_a_client_and_its_clones_flushes_as_its_builder_said() {
    paused().block_on(async {
        let pool = sqlx::MySqlPool::connect_lazy("mysql://nobody@127.0.0.1:1/none").unwrap();
        let counters =
            AsyncCounters::builder(pool).max_flushes(0).max_counters_per_flush(5_000).build().unwrap();
        let narrow = FlushSettings { max_flushes: 1, max_counters: 4_096 };
        assert_eq!(counters.coalescing().shared.settings, narrow, "each within its range");
        assert_eq!(counters.clone().coalescing().shared.settings, narrow);
        let pool = sqlx::MySqlPool::connect_lazy("mysql://nobody@127.0.0.1:1/none").unwrap();
        let default = AsyncCounters::new(pool).unwrap().coalescing();
        assert_eq!(default.shared.settings, FlushSettings { max_flushes: 2, max_counters: 256 });
    });
}
