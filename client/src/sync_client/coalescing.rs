//! Group commit in the client: many threads' increments, one transaction
//! per flush.
//!
//! A [`Coalescing`] handle is shared by many threads. [`Coalescing::add`]
//! queues a delta and waits. When no flush is in flight, or the one in
//! flight has stalled and fewer than the allowed number are, one waiting
//! caller becomes the leader: it takes what is queued, applies it as one
//! batch, and wakes the callers whose deltas it carried. Deltas queued
//! while a flush is in flight gather for the next one, and its leader waits
//! for the callers just woken to call again, as many calls as they were or
//! at most [`GATHER`] (while such waits pay: callers who pause between
//! calls do not come back so soon), so under load a flush carries many
//! callers' deltas, and an idle handle flushes each call at once. There is no thread of its
//! own: every queued delta has its caller waiting on it (the oldest with a
//! timeout, to end that wait or notice a stalled flush), so nothing is
//! ever pending without someone to flush it, and dropping the handle loses
//! nothing.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use super::{Counters, Pooled};
use crate::batch::{Batch, Outcomes, Pace, Pending, report_stall};
use crate::driver::ready;
use crate::engine::{Driver, Engine};
use crate::error::CounterError;
use crate::flushing::FlushSettings;

use crate::batch::FlushStats;

/// Coalesces the increments of many threads into few transactions. Made by
/// [`Counters::coalescing`]; share it by reference or in an `Arc`.
///
/// Each call returns once the transaction holding its delta has committed,
/// so an acknowledged increment is as durable as one made by
/// [`Counters::add`]. The price is latency: a call may wait for the flush
/// in flight before its own is sent.
///
/// ```no_run
/// use std::sync::Arc;
///
/// # let pool = mysql::Pool::new("mysql://app:secret@127.0.0.1:3306/app")?;
/// let views = Arc::new(slotted_counters::Counters::new(pool)?.coalescing());
/// let workers: Vec<_> = (0..8)
///     .map(|_| {
///         let views = Arc::clone(&views);
///         std::thread::spawn(move || views.increment("front page"))
///     })
///     .collect();
/// for worker in workers {
///     worker.join().expect("a worker panicked")?;
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Coalescing {
    group: Group<Pooled>,
}

/// The handle's queue and flushes, over any driver: its logic, which the
/// unit tests run on a scripted one.
#[derive(Debug)]
struct Group<D> {
    engine: Engine<D>,
    max_flushes: usize,
    max_counters: usize,
    /// How long the next flush may wait for the callers a flush answered
    /// to call again.
    gather: Duration,
    queue: Mutex<Queue>,
}

/// How long the next flush waits, at most, for the callers the last one
/// answered: a woken thread is back with its next call within tens of
/// microseconds, where a flush takes hundreds.
const GATHER: Duration = Duration::from_micros(100);

/// The deltas waiting for a flush, and the outcomes of flushed ones until
/// their callers collect them.
#[derive(Debug, Default)]
struct Queue {
    waiting: Vec<Pending<Caller>>,
    in_flight: usize,
    pace: Pace,
    outcomes: HashMap<u64, Result<(), CounterError>>,
    next_ticket: u64,
    stats: FlushStats,
    /// Callers the last flush answered, less the calls queued since: the
    /// next flush waits for them until `gather_until`.
    returning: usize,
    gather_until: Option<Instant>,
    /// How many callers the last flush answered, and how many calls came
    /// within the wait after it, whether a flush waited or not.
    answered: usize,
    came_back: usize,
    /// Whether the next flush waits: it does while at least half as many
    /// calls come within the wait as the flush before answered. Callers
    /// who pause between their calls (requests arriving at random) do not
    /// come back so soon, and a wait for them would only delay the others.
    gathers: bool,
    /// Calls whose leading thread panicked, still in a flush beside the one
    /// that panicked: that flush drops their answers.
    abandoned: HashSet<u64>,
}

impl Queue {
    /// How much longer the next flush waits for the callers the last one
    /// answered; `None` once they are back or the wait is over, or when
    /// waiting has not paid of late.
    fn gathering(&self, now: Instant) -> Option<Duration> {
        let until = self.gather_until.filter(|&until| self.gathers && self.returning > 0 && now < until)?;
        Some(until - now)
    }

    /// Notes the answers of a flush, and whether waiting after the last one
    /// paid: the wait of `gather` starts now.
    fn answered(&mut self, callers: usize, gather: Duration) {
        self.gathers = self.came_back * 2 >= self.answered;
        (self.answered, self.came_back, self.returning) = (callers, 0, callers);
        self.gather_until = Some(Instant::now() + gather);
    }

    /// Notes a call queued at `now`: one of those the next flush waits for.
    fn arrived(&mut self, now: Instant) {
        if self.gather_until.is_some_and(|until| now < until) {
            self.came_back += 1;
        }
        // The last one back leads the next flush itself: it finds the
        // conditions the oldest call waits for.
        self.returning = self.returning.saturating_sub(1);
    }
}

/// A waiting call: its ticket, under which its outcome is kept, and what
/// wakes it. Each call waits on a condition of its own, so that a flush
/// wakes only its own callers and the one call that leads next.
#[derive(Debug)]
struct Caller {
    ticket: u64,
    wake: Arc<Condvar>,
}

impl Counters {
    /// A handle that coalesces the increments of many threads, flushing as
    /// the client's builder said
    /// ([`max_flushes`](crate::ClientBuilder::max_flushes),
    /// [`max_counters_per_flush`](crate::ClientBuilder::max_counters_per_flush)).
    /// Each handle has a queue of its own: share one.
    pub fn coalescing(&self) -> Coalescing {
        Coalescing { group: Group::new(self.engine.clone()) }
    }
}

impl Coalescing {
    /// Adds 1 to a counter; returns once that is committed.
    pub fn increment(&self, name: &str) -> Result<(), CounterError> {
        self.group.add(name, 1)
    }

    /// Adds `delta` to a counter; returns once that is committed.
    ///
    /// The outcome is this delta's own: an unknown counter fails the calls
    /// that named it and the rest of their flush is applied; a deadlock, a
    /// lock wait timeout or a lost certification retries the whole flush
    /// within the client's retry budget; a lost connection fails the calls
    /// of the flush in flight, as it fails a single call (whether the
    /// server committed it is unknown).
    pub fn add(&self, name: &str, delta: i64) -> Result<(), CounterError> {
        self.group.add(name, delta)
    }

    /// How many calls' deltas wait for a flush now: the queue's depth.
    pub fn waiting(&self) -> usize {
        self.group.lock().waiting.len()
    }

    /// What this handle has flushed so far.
    pub fn stats(&self) -> FlushStats {
        self.group.lock().stats
    }
}

impl<D> Group<D> {
    fn new(engine: Engine<D>) -> Self {
        let FlushSettings { max_flushes, max_counters } = engine.flushes();
        Group { engine, max_flushes, max_counters, gather: GATHER, queue: Mutex::default() }
    }

    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<D: Driver> Group<D> {
    /// Queues `delta` and waits for its outcome, leading a flush when one
    /// may start.
    fn add(&self, name: &str, delta: i64) -> Result<(), CounterError> {
        self.engine.check(name)?;
        let mut queue = self.lock();
        let ticket = queue.next_ticket;
        queue.next_ticket += 1;
        let wake = Arc::new(Condvar::new());
        queue.waiting.push(Pending::new(Caller { ticket, wake: Arc::clone(&wake) }, name, delta));
        queue.arrived(Instant::now());
        loop {
            if let Some(outcome) = queue.outcomes.remove(&ticket) {
                return outcome;
            }
            let now = Instant::now();
            let gathering = queue.gathering(now);
            if !queue.waiting.is_empty()
                && gathering.is_none()
                && queue.pace.may_start(queue.in_flight, self.max_flushes, now)
            {
                if queue.in_flight > 0 {
                    report_stall(queue.in_flight);
                }
                let batch = Batch::take(&mut queue.waiting, self.max_counters);
                queue.in_flight += 1;
                queue.pace.started(now);
                // Calls left for a later flush: the oldest watches this one.
                if let Some(next) = queue.waiting.first() {
                    next.caller.wake.notify_one();
                }
                drop(queue);
                let mut flight =
                    InFlight { group: self, batch, leader: ticket, started: now, outcomes: None };
                flight.outcomes = Some(ready(flight.batch.apply(&self.engine)));
                drop(flight);
                queue = self.lock();
            } else if queue.in_flight < self.max_flushes
                && queue.waiting.first().is_some_and(|oldest| oldest.caller.ticket == ticket)
            {
                // The oldest call waits for the callers the last flush
                // answered, or watches for the flush in flight to stall.
                let wait = gathering.unwrap_or_else(|| queue.pace.stalled_in(now));
                queue = wake.wait_timeout(queue, wait).unwrap_or_else(PoisonError::into_inner).0;
            } else {
                queue = wake.wait(queue).unwrap_or_else(PoisonError::into_inner);
            }
        }
    }
}

/// A flush under way. Dropping it, once the flush returned or if it
/// panicked, hands each caller its outcome and wakes the oldest waiting
/// call to lead the next flush, which first waits a moment for the callers
/// answered here to call again, so that they ride it too: no caller waits
/// forever on a flush that is gone.
///
/// If the flush panicked, its leader's thread unwinds out of [`Group::add`]
/// and never comes back, so under the same lock its call is given up
/// ([`Queue::abandoned`]): its delta leaves the queue if the flush had left
/// it for a later one (its caller heard a panic, not an acknowledgement),
/// and no flush waits for it or keeps its outcome.
struct InFlight<'a, D> {
    group: &'a Group<D>,
    batch: Batch<Caller>,
    /// The ticket of the call leading the flush.
    leader: u64,
    started: Instant,
    /// Each counter's callers' outcomes, in the batch's order, once the
    /// flush returned; `None` if it panicked.
    outcomes: Option<Outcomes>,
}

impl<D> Drop for InFlight<'_, D> {
    fn drop(&mut self) {
        let mut queue = self.group.lock();
        queue.in_flight -= 1;
        let took = self.started.elapsed();
        queue.pace.finished(took);
        let panicked = self.outcomes.is_none();
        if panicked {
            queue.abandoned.insert(self.leader);
        }
        let Queue { outcomes, stats, abandoned, .. } = &mut *queue;
        let mut answered = Vec::new();
        self.batch.answer(self.outcomes.take().unwrap_or_default(), took, stats, |caller, outcome| {
            if !abandoned.remove(&caller.ticket) {
                outcomes.insert(caller.ticket, outcome);
                answered.push(caller.wake);
            }
        });
        if panicked && queue.abandoned.contains(&self.leader) {
            let queued = queue.waiting.len();
            queue.waiting.retain(|pending| pending.caller.ticket != self.leader);
            if queue.waiting.len() < queued {
                queue.abandoned.remove(&self.leader);
            }
            // Else a flush beside this one carries it, and drops its answer.
        }
        queue.answered(answered.len(), self.group.gather);
        let next = queue.waiting.first().map(|next| Arc::clone(&next.caller.wake));
        drop(queue);
        // Outside the lock, which each woken call takes first; the answered
        // callers first, since the next flush waits for them. Every outcome
        // is in place, so a call that has not begun to wait yet finds its
        // own.
        for wake in answered {
            wake.notify_one();
        }
        if let Some(next) = next {
            next.notify_one();
        }
    }
}

#[cfg(test)]
mod tests;
