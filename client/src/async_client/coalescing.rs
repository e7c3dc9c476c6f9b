//! Group commit for async callers: many tasks' increments, one transaction
//! per flush, as the sync [`crate::Coalescing`] does.
//!
//! [`AsyncCoalescing::add`] queues a delta and awaits its outcome. When no
//! flush is in flight, or the one in flight has stalled and fewer than the
//! allowed flushes are, it spawns a flush task, which takes what is
//! queued, applies it with one call and answers each caller it carried,
//! lets them run, then takes what was queued meanwhile (by them too),
//! until the queue is empty. A flush that stalls starts the next one
//! itself, on a timer. The flush runs in its own task, so a caller whose
//! future is dropped cannot abort a flush that carries other callers'
//! deltas; and the task holds the handle's state, so dropping every handle
//! loses nothing that was queued.

use std::pin::pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use tokio::sync::oneshot;

use super::{AsyncCounters, AsyncPooled};
use crate::batch::{Batch, FlushStats, Pace, Pending, report_stall};
use crate::engine::{Driver, Engine};
use crate::error::CounterError;
use crate::flushing::FlushSettings;

/// Where a flush sends one caller's outcome.
type ReplyTo = oneshot::Sender<Result<(), CounterError>>;

/// Coalesces the increments of many tasks into few transactions. Made by
/// [`AsyncCounters::coalescing`]; cheap to clone, and clones share one
/// queue.
///
/// Each call returns once the transaction holding its delta has committed.
/// A call whose future is dropped before then (a cancelled request) leaves
/// its delta queued or in flight: it is applied with its flush, unless that
/// flush fails, and nobody is told. So after cancellations a counter may
/// exceed the sum of the acknowledged calls, by at most the cancelled
/// calls' deltas; it never loses an acknowledged one.
///
/// ```no_run
/// # async fn run(pool: sqlx::MySqlPool) -> Result<(), Box<dyn std::error::Error>> {
/// let views = slotted_counters::AsyncCounters::new(pool)?.coalescing();
/// let tasks: Vec<_> = (0..64)
///     .map(|_| {
///         let views = views.clone();
///         tokio::spawn(async move { views.increment("front page").await })
///     })
///     .collect();
/// for task in tasks {
///     task.await.expect("a task panicked")?;
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct AsyncCoalescing {
    shared: Arc<Shared<AsyncPooled>>,
}

/// A handle's queue and settings, shared by its clones and its flush tasks,
/// over any driver: the handle's logic, which the unit tests run on a
/// scripted one.
#[derive(Debug)]
struct Shared<D> {
    engine: Engine<D>,
    settings: FlushSettings,
    queue: Mutex<Queue>,
}

/// Now, on tokio's clock: the one the stall timer waits on, so that the
/// pace judges a stall by the time that timer saw pass.
fn now() -> Instant {
    tokio::time::Instant::now().into_std()
}

/// The deltas waiting for a flush.
#[derive(Debug, Default)]
struct Queue {
    waiting: Vec<Pending<ReplyTo>>,
    in_flight: usize,
    pace: Pace,
    stats: FlushStats,
}

impl Queue {
    /// The oldest waiting deltas, as one flush that starts now.
    fn take_batch(&mut self, settings: FlushSettings) -> Batch<ReplyTo> {
        self.pace.started(now());
        Batch::take(&mut self.waiting, settings.max_counters)
    }

    /// A flush of the waiting deltas beside those in flight, when the pace
    /// allows one now; it counts as in flight.
    fn another_flush(&mut self, settings: FlushSettings) -> Option<Batch<ReplyTo>> {
        let may_start = self.pace.may_start(self.in_flight, settings.max_flushes, now());
        (may_start && !self.waiting.is_empty()).then(|| {
            if self.in_flight > 0 {
                report_stall(self.in_flight);
            }
            self.in_flight += 1;
            self.take_batch(settings)
        })
    }
}

/// A driver whose flushes run as tokio tasks. Spawning needs the task's
/// future to be `Send`, which the compiler shows for a named driver but not
/// for any `D`: so each driver spawns its own.
trait FlushTasks: Driver + Send + Sync + Sized + 'static {
    fn spawn_flush(shared: Arc<Shared<Self>>, batch: Batch<ReplyTo>);
}

impl FlushTasks for AsyncPooled {
    fn spawn_flush(shared: Arc<Shared<Self>>, batch: Batch<ReplyTo>) {
        tokio::spawn(shared.flush_until_empty(batch));
    }
}

/// `engine`'s calls, on a connection kept for each flush in flight.
fn keeping(engine: &Engine<AsyncPooled>, settings: FlushSettings) -> Engine<AsyncPooled> {
    let mut engine = engine.clone();
    let driver = engine.driver_mut();
    *driver = driver.keeping(settings.max_flushes);
    engine
}

impl AsyncCounters {
    /// A handle that coalesces the increments of many tasks, flushing as
    /// the client's builder said
    /// ([`max_flushes`](crate::ClientBuilder::max_flushes),
    /// [`max_counters_per_flush`](crate::ClientBuilder::max_counters_per_flush)).
    /// Each handle has a queue of its own, which its clones share. Its
    /// flushes are spawned on the tokio runtime of the call that starts
    /// them.
    pub fn coalescing(&self) -> AsyncCoalescing {
        let settings = self.engine.flushes();
        AsyncCoalescing { shared: Arc::new(Shared::new(keeping(&self.engine, settings), settings)) }
    }
}

impl AsyncCoalescing {
    /// Adds 1 to a counter; returns once that is committed.
    pub async fn increment(&self, name: &str) -> Result<(), CounterError> {
        self.shared.add(name, 1).await
    }

    /// Adds `delta` to a counter; returns once that is committed.
    ///
    /// The outcome is this delta's own, as with the sync handle: an unknown
    /// counter fails the calls that named it and the rest of their flush is
    /// applied; a rollback the call may outlive retries the whole flush
    /// within the client's retry budget; a lost connection fails the calls
    /// of the flush in flight. A flush task that panicked fails its calls
    /// with [`CounterError::FlushPanicked`].
    pub async fn add(&self, name: &str, delta: i64) -> Result<(), CounterError> {
        self.shared.add(name, delta).await
    }

    /// How many calls' deltas wait for a flush now.
    pub fn waiting(&self) -> usize {
        self.shared.lock().waiting.len()
    }

    /// What this handle and its clones have flushed so far.
    pub fn stats(&self) -> FlushStats {
        self.shared.lock().stats
    }
}

impl<D> Shared<D> {
    fn new(engine: Engine<D>, settings: FlushSettings) -> Self {
        Shared { engine, settings, queue: Mutex::default() }
    }

    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<D: FlushTasks> Shared<D> {
    /// Queues `delta`, starting a flush task when one may start, and waits
    /// for its outcome.
    async fn add(self: &Arc<Self>, name: &str, delta: i64) -> Result<(), CounterError> {
        self.engine.check(name)?;
        let (reply, outcome) = oneshot::channel();
        {
            let mut queue = self.lock();
            queue.waiting.push(Pending::new(reply, name, delta));
            if let Some(batch) = queue.another_flush(self.settings) {
                D::spawn_flush(Arc::clone(self), batch);
            }
        }
        outcome.await.unwrap_or(Err(CounterError::FlushPanicked))
    }

    /// A flush task: applies `batch`, answers its callers, and goes on with
    /// what was queued meanwhile until nothing is. A flush that stalls
    /// starts another beside it, when the pace allows. Its slot among the
    /// flushes in flight is given back when it ends, and if it panicked,
    /// another task takes over the queue.
    async fn flush_until_empty(self: Arc<Self>, mut batch: Batch<ReplyTo>) {
        let slot = FlushSlot { shared: Arc::clone(&self) };
        loop {
            let started = now();
            let stalled_in = self.lock().pace.stalled_in(started);
            let outcomes = {
                let mut applying = pin!(batch.apply(&self.engine));
                match tokio::time::timeout(stalled_in, &mut applying).await {
                    Ok(outcomes) => outcomes,
                    Err(_stalled) => {
                        let next = self.lock().another_flush(self.settings);
                        if let Some(next) = next {
                            D::spawn_flush(Arc::clone(&self), next);
                        }
                        applying.await
                    }
                }
            };
            let mut answered = Vec::new();
            {
                let mut queue = self.lock();
                let finished = now();
                queue.pace.finished(finished - started);
                // The next flush's start, for the stall rule: a call made
                // while this task yields below finds no stalled flush to
                // start another beside.
                queue.pace.started(finished);
                batch.answer(outcomes, finished - started, &mut queue.stats, |reply, outcome| {
                    answered.push((reply, outcome))
                });
            }
            // Outside the lock, which the woken callers' next calls take. A
            // caller that went away is not told; its delta is applied.
            for (reply, outcome) in answered {
                drop(reply.send(outcome));
            }
            // The answered callers get a turn before the next batch is
            // taken (on a multi-threaded runtime, those woken on this
            // worker for certain), so that those who call again at once
            // ride it with the callers queued meanwhile, rather than wait a
            // whole flush for the one after it.
            tokio::task::yield_now().await;
            let next = {
                let mut queue = self.lock();
                (!queue.waiting.is_empty()).then(|| queue.take_batch(self.settings))
            };
            match next {
                Some(next) => batch = next,
                None => break,
            }
        }
        drop(slot);
    }
}

/// A flush task's place among the flushes in flight. Dropped when the task
/// ends, normally or by a panic: the place is given back, and deltas still
/// queued get a task of their own, so that none waits for a task that is
/// gone.
struct FlushSlot<D: FlushTasks> {
    shared: Arc<Shared<D>>,
}

impl<D: FlushTasks> Drop for FlushSlot<D> {
    fn drop(&mut self) {
        let mut queue = self.shared.lock();
        if queue.waiting.is_empty() {
            queue.in_flight -= 1;
        } else {
            let batch = queue.take_batch(self.shared.settings);
            D::spawn_flush(Arc::clone(&self.shared), batch);
        }
    }
}

#[cfg(test)]
mod tests;
