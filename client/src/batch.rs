//! A flush, written once for both coalescing handles, the sync and the
//! async one: the deltas callers queued, gathered into one batch summed per
//! counter with the callers each sum answers to; the batch applied; and
//! each caller answered with its own counter's outcome.

use std::collections::BTreeMap;
use std::time::{Duration, Instant, SystemTime};

use crate::call::{Moment, seconds};
use crate::engine::{Driver, Engine};
use crate::error::CounterError;

mod split;

/// When a flush counts as stalled, at the least, however fast the last
/// flushes were: a durable commit's syncs vary by milliseconds, while what
/// a second flush is for (a lock wait, a retry's pause, a lost connection)
/// lasts longer.
pub(crate) const SHORTEST_STALL: Duration = Duration::from_millis(5);

/// How many times as long as flushes usually take a flush runs before it
/// counts as stalled.
const STALL_FACTOR: u32 = 4;

/// When a coalescing handle may start a flush: at once when none is in
/// flight; beside flushes in flight only once the latest of them has
/// stalled: run for [`STALL_FACTOR`] times as long as flushes usually
/// take, and at least [`SHORTEST_STALL`]. Measured with 64 callers on
/// one hot counter (docs/benchmarks.md), a second flush in flight split the
/// callers into three groups (two flushing, one gathering) where one flush
/// splits them into two, and the server commits the two flushes one after
/// the other: one at a time carried 32 deltas a flush where two carried 21,
/// for 10-27% more increments per second on MariaDB and MySQL.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Pace {
    /// How long flushes take, as a moving average; `None` before the first.
    usual: Option<Duration>,
    /// When the latest flush started.
    latest_start: Option<Instant>,
}

impl Pace {
    /// Whether a flush may start at `now`, with `in_flight` of at most
    /// `max` flushes in flight.
    pub(crate) fn may_start(&self, in_flight: usize, max: usize, now: Instant) -> bool {
        in_flight == 0 || (in_flight < max && self.stalled_in(now).is_zero())
    }

    /// How long from `now` until the latest flush counts as stalled; zero
    /// when it does already.
    pub(crate) fn stalled_in(&self, now: Instant) -> Duration {
        let stall = self.usual.map_or(SHORTEST_STALL, |usual| (usual * STALL_FACTOR).max(SHORTEST_STALL));
        self.latest_start.map_or(Duration::ZERO, |start| (start + stall).saturating_duration_since(now))
    }

    /// Counts a flush that starts at `now`.
    pub(crate) fn started(&mut self, now: Instant) {
        self.latest_start = Some(now);
    }

    /// Counts a flush that took `took`.
    pub(crate) fn finished(&mut self, took: Duration) {
        self.usual = Some(self.usual.map_or(took, |usual| (usual * 7 + took) / 8));
    }
}

/// Tells a subscriber, at debug, that a flush stalled and another starts
/// beside the `in_flight` ones: a lock wait, a retry's pause, a lost
/// connection is holding a flush up.
pub(crate) fn report_stall(in_flight: usize) {
    log::debug!(in_flight; "a flush stalled with {in_flight} in flight: another starts beside it");
}

/// What a coalescing handle has flushed so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FlushStats {
    /// Batches sent, each one call (split up only when some of its
    /// counters failed).
    pub flushes: u64,
    /// Callers' deltas those batches carried.
    pub deltas: u64,
    /// The time those flushes took, summed: from taking their deltas to
    /// having every outcome, retries included.
    pub busy: Duration,
}

impl FlushStats {
    /// Deltas per flush: how many calls shared each transaction.
    pub fn mean_batch(&self) -> f64 {
        if self.flushes == 0 { 0.0 } else { self.deltas as f64 / self.flushes as f64 }
    }

    /// What one flush took on average: beside a bare commit's time, what
    /// a flush adds to the commit it carries.
    pub fn mean_flush(&self) -> Duration {
        u32::try_from(self.flushes)
            .ok()
            .filter(|&flushes| flushes > 0)
            .map_or(Duration::ZERO, |flushes| self.busy / flushes)
    }

    /// What was flushed since `earlier`, stats of the same handle.
    pub fn since(&self, earlier: &FlushStats) -> FlushStats {
        FlushStats {
            flushes: self.flushes.saturating_sub(earlier.flushes),
            deltas: self.deltas.saturating_sub(earlier.deltas),
            busy: self.busy.saturating_sub(earlier.busy),
        }
    }
}

/// One caller's delta, waiting for a flush; `C` is how the flush answers it.
#[derive(Debug)]
pub(crate) struct Pending<C> {
    pub(crate) caller: C,
    pub(crate) name: String,
    pub(crate) delta: i64,
    /// When the caller handed it over, and the minute that was by the
    /// wall clock: the delta counts in the buckets of its hand-over.
    handed: Instant,
    minute: i64,
}

impl<C> Pending<C> {
    /// `delta` to counter `name`, handed over now by `caller`.
    pub(crate) fn new(caller: C, name: &str, delta: i64) -> Self {
        let minute = seconds(SystemTime::now()).div_euclid(60);
        Pending { caller, name: name.to_owned(), delta, handed: Instant::now(), minute }
    }
}

/// One flush: a sum per counter, and the callers whose deltas it holds,
/// all handed over within one minute of the wall clock.
#[derive(Debug)]
pub(crate) struct Batch<C> {
    counters: BTreeMap<String, Share<C>>,
    /// When the oldest delta was handed over, and in which minute.
    handed: Option<(Instant, i64)>,
}

/// One counter's part of a batch: the sum of its callers' deltas, and each
/// caller with its own.
#[derive(Debug)]
struct Share<C> {
    delta: i64,
    callers: Vec<(C, i64)>,
}

/// Each counter's outcome for each of its callers, in the batch's order.
pub(crate) type Outcomes = Vec<Vec<Result<(), CounterError>>>;

impl<C> Batch<C> {
    /// Takes the oldest of `waiting` into a batch of up to `max_counters`
    /// counters. Deltas that would take a counter's sum past BIGINT, and
    /// those handed over in a later minute than the oldest, stay queued for
    /// a later flush, in their order: a batch counts in the buckets of its
    /// oldest delta's hand-over, which must be each delta's.
    pub(crate) fn take(waiting: &mut Vec<Pending<C>>, max_counters: usize) -> Self {
        let mut batch = Batch { counters: BTreeMap::new(), handed: None };
        let mut later = Vec::new();
        for queued in waiting.drain(..) {
            let (_, minute) = *batch.handed.get_or_insert((queued.handed, queued.minute));
            if queued.minute != minute {
                later.push(queued);
                continue;
            }
            let room = batch.counters.len() < max_counters;
            match batch.counters.get_mut(&queued.name) {
                Some(share) => match share.delta.checked_add(queued.delta) {
                    Some(sum) => {
                        share.delta = sum;
                        share.callers.push((queued.caller, queued.delta));
                    }
                    None => later.push(queued),
                },
                None if room => {
                    let share = Share { delta: queued.delta, callers: vec![(queued.caller, queued.delta)] };
                    batch.counters.insert(queued.name, share);
                }
                None => later.push(queued),
            }
        }
        *waiting = later;
        batch
    }

    /// Applies the batch through `engine`, counted in the buckets of its
    /// oldest delta's hand-over, and says how each caller of each of its
    /// counters fared, in their order. A single counter, the usual batch
    /// when one counter is hot, goes through an add, at half the cost of a
    /// batch; when a batch fails for one counter's sake, each counter is
    /// applied alone; when a counter's sum would pass its bound, as many of
    /// its callers as fit are applied ([`split`]).
    pub(crate) async fn apply<D: Driver>(&self, engine: &Engine<D>) -> Outcomes {
        let at = self.handed.map_or(Moment::Now, |(handed, _)| Moment::Since(handed));
        let deltas = || self.counters.iter().map(|(name, share)| (name.as_str(), share.delta));
        let applied = match self.counters.first_key_value() {
            Some((name, share)) if self.counters.len() == 1 => engine.flush_add(name, share.delta, at).await,
            _ => engine.add_many_at(deltas(), at).await,
        };
        let mut outcomes = Vec::with_capacity(self.counters.len());
        match applied {
            Err(error) if self.counters.len() > 1 && error.is_about_a_counter() => {
                let counters = self.counters.len();
                log::debug!(
                    counters, error:%;
                    "a flush of {counters} counters failed for one counter's sake ({error}): they are applied one by one"
                );
                for (name, share) in &self.counters {
                    let applied = engine.add_many_at([(name.as_str(), share.delta)], at).await;
                    outcomes.push(share.settle(engine, name, at, applied).await);
                }
            }
            applied => {
                for (name, share) in &self.counters {
                    outcomes.push(share.settle(engine, name, at, applied.clone()).await);
                }
            }
        }
        outcomes
    }

    /// Hands each caller its own outcome through `reply`, and counts the
    /// flush, which `took` so long, in `stats`; the batch is empty
    /// afterwards. `outcomes` are the counters' callers', in their order;
    /// those missing, as after a flush that panicked, answer
    /// [`CounterError::FlushPanicked`].
    pub(crate) fn answer(
        &mut self,
        outcomes: Outcomes,
        took: Duration,
        stats: &mut FlushStats,
        mut reply: impl FnMut(C, Result<(), CounterError>),
    ) {
        stats.flushes += 1;
        stats.busy += took;
        let mut outcomes = outcomes.into_iter();
        for share in std::mem::take(&mut self.counters).into_values() {
            let mut outcomes = outcomes.next().unwrap_or_default().into_iter();
            stats.deltas += share.callers.len() as u64;
            for (caller, _) in share.callers {
                reply(caller, outcomes.next().unwrap_or(Err(CounterError::FlushPanicked)));
            }
        }
    }
}

impl<C> Share<C> {
    /// Each caller's outcome, from `applied`, the outcome of the counter's
    /// sum: the same for all, unless the sum would have passed the
    /// counter's bound or a limit of its period, when its callers are
    /// applied in groups until each has its own ([`split`]).
    async fn settle<D: Driver>(
        &self,
        engine: &Engine<D>,
        name: &str,
        at: Moment,
        applied: Result<(), CounterError>,
    ) -> Vec<Result<(), CounterError>> {
        match applied {
            Err(error @ (CounterError::PastBound { .. } | CounterError::PastLimit { .. }))
                if self.callers.len() > 1 =>
            {
                let deltas: Vec<i64> = self.callers.iter().map(|&(_, delta)| delta).collect();
                split::settle(engine, name, at, &deltas, error).await
            }
            applied => vec![applied; self.callers.len()],
        }
    }
}

#[cfg(test)]
mod tests {
    use slotted_counters_core::PackageOptions;
    use slotted_counters_core::package::errno;

    use super::*;
    use crate::driver::ready;
    use crate::scripted::{Reply, ScriptedDriver};

    fn waiting(deltas: &[(&str, i64)]) -> Vec<Pending<u64>> {
        deltas
            .iter()
            .enumerate()
            .map(|(ticket, &(name, delta))| Pending::new(ticket as u64, name, delta))
            .collect()
    }

    fn sums(batch: &Batch<u64>) -> Vec<(&str, i64, Vec<u64>)> {
        batch
            .counters
            .iter()
            .map(|(name, share)| {
                (name.as_str(), share.delta, share.callers.iter().map(|&(caller, _)| caller).collect())
            })
            .collect()
    }

    #[test]
    fn a_second_flush_starts_only_once_the_latest_has_stalled() {
        let start = Instant::now();
        let mut pace = Pace::default();
        assert!(pace.may_start(0, 2, start), "the first flush starts at once");
        pace.started(start);
        pace.finished(Duration::from_millis(4));
        pace.started(start);
        assert!(pace.may_start(0, 2, start), "none in flight: at once");
        assert!(!pace.may_start(1, 2, start + Duration::from_millis(15)), "four times the usual 4 ms is 16");
        assert_eq!(pace.stalled_in(start + Duration::from_millis(15)), Duration::from_millis(1));
        assert!(pace.may_start(1, 2, start + Duration::from_millis(16)));
        assert!(!pace.may_start(2, 2, start + Duration::from_secs(1)), "never past the most in flight");
    }

    #[test]
    fn the_usual_flush_time_follows_the_last_flushes() {
        let start = Instant::now();
        let mut pace = Pace::default();
        pace.started(start);
        assert!(pace.may_start(1, 2, start + SHORTEST_STALL), "before any flush ended, the shortest stall");
        for _ in 0..40 {
            pace.finished(Duration::from_millis(20));
        }
        assert!(!pace.may_start(1, 2, start + Duration::from_millis(70)));
        for _ in 0..40 {
            pace.finished(Duration::from_micros(100));
        }
        assert!(!pace.may_start(1, 2, start + Duration::from_millis(4)), "fast flushes: the shortest stall");
        assert!(pace.may_start(1, 2, start + SHORTEST_STALL));
    }

    #[test]
    fn mean_batch_is_deltas_per_flush_and_mean_flush_its_time() {
        let stats = FlushStats { flushes: 4, deltas: 10, busy: Duration::from_millis(3) };
        assert_eq!(stats.mean_batch(), 2.5);
        assert_eq!(stats.mean_flush(), Duration::from_micros(750));
        assert_eq!(FlushStats::default().mean_batch(), 0.0);
        assert_eq!(FlushStats::default().mean_flush(), Duration::ZERO);
    }

    #[test]
    fn stats_since_an_earlier_reading_are_what_was_flushed_between() {
        let earlier = FlushStats { flushes: 4, deltas: 10, busy: Duration::from_millis(3) };
        let later = FlushStats { flushes: 6, deltas: 50, busy: Duration::from_millis(7) };
        assert_eq!(
            later.since(&earlier),
            FlushStats { flushes: 2, deltas: 40, busy: Duration::from_millis(4) }
        );
    }

    #[test]
    fn a_batch_sums_each_counters_deltas_and_remembers_their_callers() {
        let mut queue = waiting(&[("views", 1), ("likes", 2), ("views", 3)]);
        let batch = Batch::take(&mut queue, 10);
        assert_eq!(sums(&batch), [("likes", 2, vec![1]), ("views", 4, vec![0, 2])]);
        assert!(queue.is_empty());
    }

    #[test]
    fn counters_beyond_the_limit_wait_for_the_next_flush_in_order() {
        let mut queue = waiting(&[("a", 1), ("b", 1), ("c", 1), ("a", 1), ("d", 1)]);
        let batch = Batch::take(&mut queue, 2);
        assert_eq!(sums(&batch), [("a", 2, vec![0, 3]), ("b", 1, vec![1])]);
        let left: Vec<u64> = queue.iter().map(|queued| queued.caller).collect();
        assert_eq!(left, [2, 4]);
    }

    #[test]
    fn deltas_handed_over_in_a_later_minute_wait_for_the_next_flush() {
        let mut queue = waiting(&[("a", 1), ("b", 1), ("a", 1)]);
        queue[1].minute += 1;
        let batch = Batch::take(&mut queue, 10);
        assert_eq!(sums(&batch), [("a", 2, vec![0, 2])]);
        assert_eq!(queue.iter().map(|queued| queued.caller).collect::<Vec<_>>(), [1]);
    }

    #[test]
    fn a_delta_that_would_overflow_the_sum_waits_for_the_next_flush() {
        let mut queue = waiting(&[("n", i64::MAX), ("n", 1), ("n", -1)]);
        let batch = Batch::take(&mut queue, 10);
        assert_eq!(sums(&batch), [("n", i64::MAX - 1, vec![0, 2])]);
        assert_eq!(queue.len(), 1);
    }

    #[test]
    fn every_caller_is_answered_with_its_own_counters_outcome() {
        let mut queue = waiting(&[("views", 1), ("missing", 2), ("views", 3)]);
        let mut batch = Batch::take(&mut queue, 10);
        let mut stats = FlushStats::default();
        let mut answers = Vec::new();
        let refused = CounterError::not_found("unknown counter: 'missing'".to_owned());
        let outcomes = vec![vec![Err(refused)], vec![Ok(()), Ok(())]];
        batch.answer(outcomes, Duration::from_millis(2), &mut stats, |caller, outcome| {
            answers.push((caller, outcome.is_ok()))
        });
        answers.sort();
        assert_eq!(answers, [(0, true), (1, false), (2, true)]);
        assert_eq!(stats, FlushStats { flushes: 1, deltas: 3, busy: Duration::from_millis(2) });
    }

    #[test]
    fn the_callers_of_a_flush_that_panicked_learn_it() {
        let mut queue = waiting(&[("views", 1), ("likes", 2)]);
        let mut batch = Batch::take(&mut queue, 10);
        let mut answers = Vec::new();
        batch.answer(Vec::new(), Duration::ZERO, &mut FlushStats::default(), |caller, outcome| {
            answers.push((caller, outcome))
        });
        assert_eq!(answers.len(), 2);
        assert!(answers.iter().all(|(_, outcome)| matches!(outcome, Err(CounterError::FlushPanicked))));
    }

    /// Applies a batch of `deltas` through an engine whose connection
    /// answers with `replies`; each counter's callers' outcomes (the error
    /// number of a failure), and the statements sent.
    fn applied(deltas: &[(&str, i64)], replies: Vec<Reply>) -> (Vec<Vec<Option<u16>>>, Vec<String>) {
        let engine = Engine::routines_only(ScriptedDriver::new(replies), &PackageOptions::default());
        let batch = Batch::take(&mut waiting(deltas), 10);
        let outcomes = ready(batch.apply(&engine));
        let codes = outcomes
            .iter()
            .map(|callers| {
                callers
                    .iter()
                    .map(|outcome| outcome.as_ref().err().map(|error| error.code().unwrap_or(0)))
                    .collect()
            })
            .collect();
        (codes, engine.driver().sql())
    }

    #[test]
    fn a_batch_of_one_counter_is_one_add() {
        let (outcomes, sent) = applied(&[("views", 1), ("views", 2)], vec![Reply::Changed(1)]);
        assert_eq!(outcomes, [[None, None]]);
        assert_eq!(sent, ["CALL `counter_add_at`(?, ?, UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND)"]);
    }

    #[test]
    fn a_batch_refused_for_one_counter_is_applied_counter_by_counter() {
        use Reply::{Changed, Error};
        let replies =
            vec![Error(errno::UNKNOWN_COUNTER), Changed(1), Error(errno::UNKNOWN_COUNTER), Changed(1)];
        let (outcomes, sent) = applied(&[("views", 1), ("missing", 2), ("likes", 3)], replies);
        // In the order of the names: likes, missing, views.
        assert_eq!(outcomes, [[None], [Some(errno::UNKNOWN_COUNTER)], [None]]);
        assert_eq!(sent, ["CALL `counter_add_many_at`(?, ?, UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND)"; 4]);
    }

    #[test]
    fn a_batch_whose_connection_broke_fails_whole_and_is_not_split() {
        let (outcomes, sent) = applied(&[("views", 1), ("likes", 3)], vec![Reply::Lost]);
        assert_eq!(outcomes, [[Some(0)], [Some(0)]], "no server answered: no error number");
        assert_eq!(sent.len(), 1);
    }

    #[test]
    fn the_callers_of_a_counter_whose_sum_would_pass_its_bound_each_hear_their_own() {
        use Reply::{Changed, PastFloor};
        // likes fits; stock's three takes have room for two.
        let deltas = [("stock", -1), ("likes", 1), ("stock", -1), ("stock", -1)];
        let replies = vec![PastFloor(2), Changed(1), PastFloor(2), Changed(1), PastFloor(0)];
        let (outcomes, sent) = applied(&deltas, replies);
        assert_eq!(outcomes, [vec![None], vec![None, None, Some(errno::PAST_BOUND)]]);
        assert_eq!(sent.len(), 5, "the batch, each counter alone, stock's first two, its last: {sent:?}");
    }
}
