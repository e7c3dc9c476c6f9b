//! What both coalescing handles, the sync and the async one, do with the
//! deltas their callers queue: gather them into one flush, summed per
//! counter with the callers each sum answers to, and tell from a flush's
//! failure whether the other counters may still be applied.

use std::collections::BTreeMap;

use crate::error::CounterError;

/// One caller's delta, waiting for a flush; `C` is how the flush answers it.
#[derive(Debug)]
pub(crate) struct Pending<C> {
    pub(crate) caller: C,
    pub(crate) name: String,
    pub(crate) delta: i64,
}

/// One flush: a sum per counter, and the callers whose deltas it holds.
#[derive(Debug)]
pub(crate) struct Batch<C> {
    pub(crate) counters: BTreeMap<String, Share<C>>,
}

#[derive(Debug)]
pub(crate) struct Share<C> {
    pub(crate) delta: i64,
    pub(crate) callers: Vec<C>,
}

impl<C> Batch<C> {
    /// Takes the oldest of `waiting` into a batch of up to `max_counters`
    /// counters. Deltas that would take a counter's sum past BIGINT stay
    /// queued for a later flush, in their order.
    pub(crate) fn take(waiting: &mut Vec<Pending<C>>, max_counters: usize) -> Self {
        let mut batch = Batch { counters: BTreeMap::new() };
        let mut later = Vec::new();
        for queued in waiting.drain(..) {
            let room = batch.counters.len() < max_counters;
            match batch.counters.get_mut(&queued.name) {
                Some(share) => match share.delta.checked_add(queued.delta) {
                    Some(sum) => {
                        share.delta = sum;
                        share.callers.push(queued.caller);
                    }
                    None => later.push(queued),
                },
                None if room => {
                    batch
                        .counters
                        .insert(queued.name, Share { delta: queued.delta, callers: vec![queued.caller] });
                }
                None => later.push(queued),
            }
        }
        *waiting = later;
        batch
    }

    /// The counter and sum of a batch of one counter, the usual one when a
    /// single counter is hot: `counter_add` applies it at half the cost of
    /// `counter_add_many`.
    pub(crate) fn single(&self) -> Option<(&str, i64)> {
        match self.counters.first_key_value() {
            Some((name, share)) if self.counters.len() == 1 => Some((name, share.delta)),
            _ => None,
        }
    }

    /// Each counter's sum, in the order of the names.
    pub(crate) fn deltas(&self) -> impl Iterator<Item = (&str, i64)> {
        self.counters.iter().map(|(name, share)| (name.as_str(), share.delta))
    }

    /// One outcome per counter, all `applied`'s.
    pub(crate) fn same_for_all(&self, applied: Result<(), CounterError>) -> Vec<Result<(), CounterError>> {
        self.counters.values().map(|_| copy_outcome(&applied)).collect()
    }
}

/// One flush outcome, copied for another of the callers it answers.
pub(crate) fn copy_outcome(outcome: &Result<(), CounterError>) -> Result<(), CounterError> {
    match outcome {
        Ok(()) => Ok(()),
        Err(error) => Err(error.duplicate()),
    }
}

/// Whether a batch's failure may be one counter's alone, so that the other
/// counters can still be applied, each on its own: an unknown counter, a bad
/// name, a slot that would leave BIGINT's range (1690).
pub(crate) fn is_about_a_counter(error: &CounterError) -> bool {
    match error {
        CounterError::NotFound(_) | CounterError::InvalidArgument(_) => true,
        CounterError::Database(mysql::Error::MySqlError(error)) => error.code == 1690,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waiting(deltas: &[(&str, i64)]) -> Vec<Pending<u64>> {
        deltas
            .iter()
            .enumerate()
            .map(|(ticket, &(name, delta))| Pending { caller: ticket as u64, name: name.to_owned(), delta })
            .collect()
    }

    fn sums(batch: &Batch<u64>) -> Vec<(&str, i64, Vec<u64>)> {
        batch
            .counters
            .iter()
            .map(|(name, share)| (name.as_str(), share.delta, share.callers.clone()))
            .collect()
    }

    #[test]
    fn a_batch_sums_each_counters_deltas_and_remembers_their_callers() {
        let mut queue = waiting(&[("views", 1), ("likes", 2), ("views", 3)]);
        let batch = Batch::take(&mut queue, 10);
        assert_eq!(sums(&batch), [("likes", 2, vec![1]), ("views", 4, vec![0, 2])]);
        assert!(queue.is_empty());
        assert_eq!(batch.single(), None);
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
    fn a_delta_that_would_overflow_the_sum_waits_for_the_next_flush() {
        let mut queue = waiting(&[("n", i64::MAX), ("n", 1), ("n", -1)]);
        let batch = Batch::take(&mut queue, 10);
        assert_eq!(sums(&batch), [("n", i64::MAX - 1, vec![0, 2])]);
        assert_eq!(batch.single(), Some(("n", i64::MAX - 1)));
        assert_eq!(queue.len(), 1);
    }
}
