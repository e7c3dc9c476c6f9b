//! The slot-count advisor: short benchmark rounds over 1, 2, 4, ... slots,
//! and the smallest slot count whose throughput is within 10% of the best.

use indicatif::ProgressBar;

use super::plan::{Budget, Case, DEFAULT_HOT};
use super::report::RoundResult;
use super::variant::Variant;
use super::workbench::Workbench;
use crate::error::Error;
use slotted_counters::defaults;
use slotted_counters_core::options::SLOT_LIMIT;

/// A slot count is good enough when it reaches this share of the best throughput.
const GOOD_ENOUGH: f64 = 0.9;

/// The rounds behind a recommendation, and the recommendation.
#[derive(Debug, Clone, PartialEq)]
pub struct Advice {
    pub rounds: Vec<RoundResult>,
    /// Index into `rounds` of the recommended slot count.
    pub recommended: usize,
    /// Index into `rounds` of the best throughput.
    pub best: usize,
}

/// 1, 2, 4, ... up to `max_slots`, which is included even when it is not a power of two.
pub fn slot_counts(max_slots: u32) -> Vec<u32> {
    let mut counts: Vec<u32> = std::iter::successors(Some(1u32), |&slots| slots.checked_mul(2))
        .take_while(|&slots| slots <= max_slots)
        .collect();
    if counts.last() != Some(&max_slots) {
        counts.push(max_slots);
    }
    counts
}

/// The smallest slot count within 90% of the best, and the best.
/// `rounds` must be in increasing slot order.
pub fn recommend(rounds: &[RoundResult]) -> Option<(usize, usize)> {
    let best = (0..rounds.len())
        .max_by(|&a, &b| rounds[a].increments_per_second.total_cmp(&rounds[b].increments_per_second))?;
    let threshold = rounds[best].increments_per_second * GOOD_ENOUGH;
    let recommended = rounds.iter().position(|round| round.increments_per_second >= threshold)?;
    Some((recommended, best))
}

/// Measures every slot count for `clients` clients holding their locks for
/// `hold_ms`, spread over the nodes `urls` name (node-owned slots when there
/// are several), each round lasting `seconds`, and recommends one.
pub fn advise(
    urls: &[String],
    clients: u32,
    hold_ms: u32,
    max_slots: u32,
    seconds: f64,
) -> Result<Advice, Error> {
    if clients == 0 || !(1..=SLOT_LIMIT).contains(&max_slots) || !(seconds > 0.0 && seconds <= 600.0) {
        return Err(Error::InvalidOption(
            "advise needs --clients of at least 1, --max-slots between 1 and 65534 and --duration between 0 and 600 seconds"
                .to_owned(),
        ));
    }
    let counts = slot_counts(max_slots);
    // On a cluster, the slots a node owns: random ones would measure
    // certification conflicts between nodes more than slot contention.
    let variant = if urls.len() > 1 { Variant::Node } else { Variant::Dynamic };
    let bench =
        Workbench::prepare(urls, &[variant], &counts, DEFAULT_HOT, None, clients, defaults::FLUSHES as u32)?;
    let progress = ProgressBar::new(counts.len() as u64);
    let rounds: Result<Vec<RoundResult>, Error> = counts
        .iter()
        .map(|&slots| {
            let case = Case { variant, slots: Some(slots), clients, hold_ms, think_us: 0 };
            progress.set_message(case.label());
            let round = bench.round(case, Budget::Seconds(seconds), &ProgressBar::hidden(), None);
            progress.inc(1);
            round
        })
        .collect();
    progress.finish_and_clear();
    bench.clean_up()?;
    let rounds = rounds?;
    let (recommended, best) = recommend(&rounds).expect("at least one round ran");
    Ok(Advice { rounds, recommended, best })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(slots: u32, increments_per_second: f64) -> RoundResult {
        RoundResult::sample(slots, increments_per_second, 100)
    }

    #[test]
    fn slot_counts_double_up_to_the_maximum() {
        assert_eq!(slot_counts(1), [1]);
        assert_eq!(slot_counts(64), [1, 2, 4, 8, 16, 32, 64]);
        assert_eq!(slot_counts(100), [1, 2, 4, 8, 16, 32, 64, 100]);
    }

    #[test]
    fn recommends_the_smallest_count_within_ten_percent_of_the_best() {
        let rounds = [round(1, 100.0), round(2, 500.0), round(4, 905.0), round(8, 1000.0), round(16, 950.0)];
        assert_eq!(recommend(&rounds), Some((2, 3)));
        let rounds = [round(1, 1000.0), round(2, 990.0)];
        assert_eq!(recommend(&rounds), Some((0, 0)), "one slot is enough when there is no contention");
        assert_eq!(recommend(&[]), None);
    }
}
