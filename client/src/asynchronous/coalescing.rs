//! Group commit for async callers: many tasks' increments, one transaction
//! per flush, as the sync [`crate::Coalescing`] does.
//!
//! [`AsyncCoalescing::add`] queues a delta and awaits its outcome. When no
//! flush is in flight, or the one in flight has stalled and fewer than the
//! allowed flushes are, it spawns a flush task, which takes what is
//! queued, applies it with one call and answers each caller it carried,
//! then takes what was queued meanwhile, until the queue is empty. A flush
//! that stalls starts the next one itself, on a timer. The flush runs in its own task, so a caller whose future is
//! dropped cannot abort a flush that carries other callers' deltas; and the
//! task holds the handle's state, so dropping every handle loses nothing
//! that was queued.

use std::pin::pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use tokio::sync::oneshot;

use slotted_counters_core::package::BATCH_LIMIT;

use super::AsyncCounters;
use crate::batch::{Batch, DEFAULT_COUNTERS_PER_FLUSH, DEFAULT_FLUSHES, FlushStats, Pace, Pending};
use crate::error::CounterError;

/// Where a flush sends one caller's outcome.
type Reply = oneshot::Sender<Result<(), CounterError>>;

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
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    counters: AsyncCounters,
    queue: Mutex<Queue>,
}

/// The deltas waiting for a flush, with the settings that shape the
/// flushes: kept together, so a setting changed on any clone holds for all.
#[derive(Debug)]
struct Queue {
    waiting: Vec<Pending<Reply>>,
    in_flight: usize,
    pace: Pace,
    stats: FlushStats,
    max_flushes: usize,
    max_counters: usize,
}

impl Queue {
    /// The oldest waiting deltas, as one flush that starts now.
    fn take_batch(&mut self) -> Batch<Reply> {
        self.pace.started(Instant::now());
        Batch::take(&mut self.waiting, self.max_counters)
    }

    /// A flush of the waiting deltas beside those in flight, when the pace
    /// allows one now; it counts as in flight.
    fn another_flush(&mut self) -> Option<Batch<Reply>> {
        let may_start = self.pace.may_start(self.in_flight, self.max_flushes, Instant::now());
        (may_start && !self.waiting.is_empty()).then(|| {
            self.in_flight += 1;
            self.take_batch()
        })
    }
}

impl AsyncCounters {
    /// A handle that coalesces the increments of many tasks, with
    /// [`DEFAULT_FLUSHES`] flushes in flight at most. Its flushes are
    /// spawned on the tokio runtime of the call that starts them.
    pub fn coalescing(&self) -> AsyncCoalescing {
        AsyncCoalescing {
            shared: Arc::new(Shared {
                counters: self.clone(),
                queue: Mutex::new(Queue {
                    waiting: Vec::new(),
                    in_flight: 0,
                    pace: Pace::default(),
                    stats: FlushStats::default(),
                    max_flushes: DEFAULT_FLUSHES,
                    max_counters: DEFAULT_COUNTERS_PER_FLUSH,
                }),
            }),
        }
    }
}

impl AsyncCoalescing {
    /// How many flushes may be in flight at once (at least 1), for this
    /// handle and its clones; beyond the first, one starts only when those
    /// in flight have stalled. Each holds a pooled connection while it runs.
    pub fn max_flushes(self, flushes: usize) -> Self {
        self.shared.lock().max_flushes = flushes.max(1);
        self
    }

    /// How many counters one flush may carry, 1 to 4,096.
    pub fn max_counters_per_flush(self, counters: usize) -> Self {
        self.shared.lock().max_counters = counters.clamp(1, BATCH_LIMIT as usize);
        self
    }

    /// Adds 1 to a counter; returns once that is committed.
    pub async fn increment(&self, name: &str) -> Result<(), CounterError> {
        self.add(name, 1).await
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
        self.shared.counters.engine.check(name)?;
        let (reply, outcome) = oneshot::channel();
        {
            let mut queue = self.shared.lock();
            queue.waiting.push(Pending { caller: reply, name: name.to_owned(), delta });
            if let Some(batch) = queue.another_flush() {
                Arc::clone(&self.shared).spawn_flush(batch);
            }
        }
        outcome.await.unwrap_or(Err(CounterError::FlushPanicked))
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

impl Shared {
    /// Starts a flush task for `batch`. A plain function: the task's future
    /// spawns flushes itself, and its type cannot name its own.
    fn spawn_flush(self: Arc<Self>, batch: Batch<Reply>) {
        tokio::spawn(self.flush_until_empty(batch));
    }

    /// A flush task: applies `batch`, answers its callers, and goes on with
    /// what was queued meanwhile until nothing is. A flush that stalls
    /// starts another beside it, when the pace allows. Its slot among the
    /// flushes in flight is given back when it ends, and if it panicked,
    /// another task takes over the queue.
    async fn flush_until_empty(self: Arc<Self>, mut batch: Batch<Reply>) {
        let slot = FlushSlot { shared: Arc::clone(&self) };
        loop {
            let started = Instant::now();
            let stalled_in = self.lock().pace.stalled_in(started);
            let outcomes = {
                let mut applying = pin!(batch.apply(&self.counters.engine));
                match tokio::time::timeout(stalled_in, &mut applying).await {
                    Ok(outcomes) => outcomes,
                    Err(_stalled) => {
                        let next = self.lock().another_flush();
                        if let Some(next) = next {
                            Arc::clone(&self).spawn_flush(next);
                        }
                        applying.await
                    }
                }
            };
            let mut answered = Vec::new();
            let next = {
                let mut queue = self.lock();
                queue.pace.finished(started.elapsed());
                batch.answer(outcomes, &mut queue.stats, |reply, outcome| answered.push((reply, outcome)));
                (!queue.waiting.is_empty()).then(|| queue.take_batch())
            };
            // Outside the lock, which the woken callers' next calls take. A
            // caller that went away is not told; its delta is applied.
            for (reply, outcome) in answered {
                drop(reply.send(outcome));
            }
            match next {
                Some(next) => batch = next,
                None => break,
            }
        }
        drop(slot);
    }

    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A flush task's place among the flushes in flight. Dropped when the task
/// ends, normally or by a panic: the place is given back, and deltas still
/// queued get a task of their own, so that none waits for a task that is
/// gone.
struct FlushSlot {
    shared: Arc<Shared>,
}

impl Drop for FlushSlot {
    fn drop(&mut self) {
        let mut queue = self.shared.lock();
        if queue.waiting.is_empty() {
            queue.in_flight -= 1;
        } else {
            let batch = queue.take_batch();
            Arc::clone(&self.shared).spawn_flush(batch);
        }
    }
}
