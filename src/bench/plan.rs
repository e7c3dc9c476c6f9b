//! What a benchmark run measures: the variants, the client counts, the slot
//! counts and hold times, and how long each round lasts.

use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand_distr::{Distribution, Exp};
use serde::Serialize;

use super::population::{COUNTERS_LIMIT, Population};
use super::variant::Variant;

use crate::error::Error;
use slotted_counters_core::options::SLOT_LIMIT;

/// How much work each client does in a round.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Budget {
    /// This many iterations of one increment on each hot counter.
    Iterations(u32),
    /// Iterations until this much time has passed.
    Seconds(f64),
}

/// No client runs more iterations than this in a timed round.
const ITERATION_LIMIT: u32 = 10_000_000;

impl Budget {
    /// How many iterations a client that starts at `started` may run, and
    /// until when: a round never outlasts [`ROUND_TIME_LIMIT`].
    pub(super) fn limits(self, started: Instant) -> (u32, Instant) {
        match self {
            Budget::Iterations(iterations) => (iterations, started + ROUND_TIME_LIMIT),
            Budget::Seconds(seconds) => (ITERATION_LIMIT, started + Duration::from_secs_f64(seconds)),
        }
    }
}

/// One round: a variant (and its slot count) under a number of clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Case {
    pub variant: Variant,
    /// The hot counters' slot count; `None` for the classic layout (1 to 50
    /// slots at random) and for the variants without slots.
    pub slots: Option<u32>,
    pub clients: u32,
    /// Milliseconds of application work between the increment and COMMIT;
    /// 0 runs each increment on its own with autocommit.
    pub hold_ms: u32,
    /// Each client's mean pause between iterations, in microseconds
    /// ([`Think`]); 0 is a closed loop, each iteration right after the last.
    pub think_us: u32,
}

/// A client's pause between its iterations, drawn afresh each time from an
/// exponential distribution around a mean: the gaps between the requests of
/// a user arriving at random, so that a round shows the latency such calls
/// meet, not only a closed loop's, where every caller calls again at once.
#[derive(Debug)]
pub(super) struct Think {
    gaps: Option<Exp<f64>>,
    rng: SmallRng,
}

impl Think {
    pub(super) fn new(mean_us: u32) -> Self {
        let gaps = (mean_us > 0).then(|| Exp::new(1.0 / f64::from(mean_us)).expect("a positive rate"));
        Think { gaps, rng: rand::make_rng() }
    }

    /// The next pause; none in a closed loop.
    pub(super) fn next(&mut self) -> Option<Duration> {
        let gap_us = self.gaps?.sample(&mut self.rng);
        Some(Duration::from_secs_f64(gap_us / 1e6))
    }
}

impl Case {
    /// A short name for tables and plots: `dynamic, 64 slots`.
    pub fn label(&self) -> String {
        let name = self.variant.name();
        match (self.variant, self.slots) {
            // Fixed and lazy rounds always have a slot count.
            (variant, None) if variant.profile().has_slots => format!("{name}, 1-50 slots"),
            (_, Some(slots)) => format!("{name}, {slots} slots"),
            _ => name.to_owned(),
        }
    }
}

/// Everything a benchmark run measures.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub clients: Vec<u32>,
    /// Slot counts for the hot counters; empty for the classic layout.
    pub slots: Vec<u32>,
    pub hold_ms: Vec<u32>,
    /// Each client's mean pause between iterations, in microseconds
    /// ([`Case::think_us`]).
    pub think_us: u32,
    pub budget: Budget,
    pub variants: Vec<Variant>,
    /// Hot counters every client increments, each once per iteration.
    pub hot: u32,
    /// Flushes each node's coalescing handle keeps in flight at most, each
    /// on a connection of its own.
    pub flushes: u32,
    /// A table of many counters instead of the hot ones: each iteration
    /// increments one of them, drawn from its spread.
    pub population: Option<Population>,
}

/// No round runs longer than this, whatever its budget.
pub(super) const ROUND_TIME_LIMIT: Duration = Duration::from_secs(600);

/// The longest mean pause between a client's iterations, in microseconds.
const THINK_LIMIT_US: u32 = 10_000_000;

/// Hot counters of the classic test.
pub const DEFAULT_HOT: u32 = 4;

/// Counters in the classic layout, as in the 2012 load test.
pub(super) const CLASSIC_COUNTERS: u32 = 1_500;

/// Hot counters a benchmark may ask for: one per counter of the layout.
pub(super) const HOT_LIMIT: u32 = CLASSIC_COUNTERS;

/// Flushes in flight a benchmark may ask for: each holds a connection.
pub(super) const FLUSHES_LIMIT: u32 = 64;

/// The variants a population's rounds can measure: those whose counters are
/// made in bulk (or where hit) and incremented by name.
const POPULATION_VARIANTS: [Variant; 6] = [
    Variant::SingleRow,
    Variant::Dynamic,
    Variant::Fixed,
    Variant::Lazy,
    Variant::Coalesced,
    Variant::CoalescedAsync,
];

/// A population's variants by default: the counter the package replaces,
/// the package with every slot made, lazy rows made where hit, and the
/// coalescing handle.
const POPULATION_DEFAULT: [Variant; 4] =
    [Variant::SingleRow, Variant::Dynamic, Variant::Lazy, Variant::Coalesced];

impl Plan {
    /// Checks the plan and fills in the variants when none were chosen.
    pub fn validated(mut self) -> Result<Self, Error> {
        let invalid = |message: &str| Err(Error::InvalidOption(message.to_owned()));
        if self.clients.is_empty() || self.clients.contains(&0) {
            return invalid("--clients needs at least one count, each at least 1");
        }
        if self.slots.contains(&0) || self.slots.iter().any(|&slots| slots > SLOT_LIMIT) {
            return Err(Error::InvalidOption(format!("--slots must be between 1 and {SLOT_LIMIT}")));
        }
        if self.hold_ms.is_empty() {
            return invalid("--hold-ms needs at least one value");
        }
        if !(1..=HOT_LIMIT).contains(&self.hot) {
            return Err(Error::InvalidOption(format!("--hot must be between 1 and {HOT_LIMIT}")));
        }
        if self.think_us > THINK_LIMIT_US {
            return Err(Error::InvalidOption(format!(
                "--think-us must be at most {THINK_LIMIT_US} (10 s), not {}",
                self.think_us
            )));
        }
        if !(1..=FLUSHES_LIMIT).contains(&self.flushes) {
            return Err(Error::InvalidOption(format!("--flushes must be between 1 and {FLUSHES_LIMIT}")));
        }
        match self.budget {
            Budget::Iterations(0) => return invalid("--iterations must be at least 1"),
            Budget::Seconds(seconds) if !(seconds > 0.0 && seconds <= ROUND_TIME_LIMIT.as_secs_f64()) => {
                return Err(Error::InvalidOption(format!(
                    "--duration must be more than 0 and at most {} seconds",
                    ROUND_TIME_LIMIT.as_secs()
                )));
            }
            _ => {}
        }
        if let Some(population) = self.population {
            self.validate_population(population)?;
        }
        if self.variants.is_empty() {
            self.variants = match self.population {
                Some(_) => POPULATION_DEFAULT.to_vec(),
                None if self.slots.is_empty() => {
                    vec![Variant::SingleRow, Variant::Dynamic, Variant::OwnCounter]
                }
                None => vec![Variant::SingleRow, Variant::Dynamic, Variant::OwnCounter, Variant::Fixed],
            };
        }
        self.variants.sort();
        self.variants.dedup();
        if let Some(variant) = self.variants.iter().find(|variant| !variant.profile().holds)
            && !self.hold_ms.contains(&0)
        {
            return Err(Error::InvalidOption(format!(
                "--variant {} runs at hold 0 only, so --hold-ms needs 0: it makes its own \
                 transactions, which no application work holds open",
                variant.name()
            )));
        }
        if let Some(variant) = self.variants.iter().find(|variant| variant.profile().needs_slots)
            && self.slots.is_empty()
        {
            return Err(Error::InvalidOption(format!(
                "--variant {} needs --slots: its package has one fixed slot count",
                variant.name()
            )));
        }
        Ok(self)
    }

    /// A population needs one slot count, every counter's, and variants
    /// whose counters are made in bulk and read by name.
    fn validate_population(&self, population: Population) -> Result<(), Error> {
        if !(1..=COUNTERS_LIMIT).contains(&population.counters) {
            return Err(Error::InvalidOption(format!("--counters must be between 1 and {COUNTERS_LIMIT}")));
        }
        if let Some(head) = population.slotted_head
            && !(1..=population.counters).contains(&head)
        {
            return Err(Error::InvalidOption(format!(
                "--slotted-head must be between 1 and --counters ({}), not {head}",
                population.counters
            )));
        }
        if self.slots.len() != 1 {
            return Err(Error::InvalidOption(
                "--counters needs one --slots value: the slots of every counter of the table".to_owned(),
            ));
        }
        if let Some(variant) = self.variants.iter().find(|variant| !POPULATION_VARIANTS.contains(variant)) {
            let names: Vec<&str> = POPULATION_VARIANTS.iter().map(|variant| variant.name()).collect();
            return Err(Error::InvalidOption(format!(
                "--variant {} does not run with --counters, which measures {}",
                variant.name(),
                names.join(", ")
            )));
        }
        Ok(())
    }

    /// Counters each client increments per iteration: every hot counter,
    /// or one of a population.
    pub(super) fn per_iteration(&self) -> u32 {
        if self.population.is_some() { 1 } else { self.hot }
    }

    /// Every round of the plan, in the order they run: by hold, then
    /// clients, then variant and slots, so compared rounds run close
    /// together. The batching variants run at hold 0 only.
    pub fn cases(&self) -> Vec<Case> {
        let mut cases = Vec::new();
        for &hold_ms in &self.hold_ms {
            for &clients in &self.clients {
                for &variant in &self.variants {
                    if hold_ms > 0 && !variant.profile().holds {
                        continue;
                    }
                    let slot_counts: Vec<Option<u32>> =
                        if variant.profile().has_slots && !self.slots.is_empty() {
                            self.slots.iter().copied().map(Some).collect()
                        } else {
                            vec![None]
                        };
                    for slots in slot_counts {
                        cases.push(Case { variant, slots, clients, hold_ms, think_us: self.think_us });
                    }
                }
            }
        }
        cases
    }

    /// Increments the whole plan makes when every call succeeds, for the
    /// progress bar; `None` for timed rounds.
    pub(super) fn planned_increments(&self) -> Option<u64> {
        match self.budget {
            Budget::Iterations(iterations) => Some(
                self.cases()
                    .iter()
                    .map(|case| {
                        u64::from(case.clients) * u64::from(iterations) * u64::from(self.per_iteration())
                    })
                    .sum(),
            ),
            Budget::Seconds(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(slots: Vec<u32>, variants: Vec<Variant>) -> Result<Plan, Error> {
        Plan {
            clients: vec![1, 4],
            slots,
            hold_ms: vec![0, 2],
            think_us: 0,
            budget: Budget::Iterations(1),
            variants,
            hot: 3,
            flushes: 2,
            population: None,
        }
        .validated()
    }

    #[test]
    fn each_variant_is_named_as_variant_takes_it() {
        use clap::ValueEnum;
        for variant in Variant::value_variants() {
            let takes = variant.to_possible_value().expect("no variant is skipped");
            assert_eq!(variant.name(), takes.get_name());
        }
    }

    #[test]
    fn default_variants_follow_the_slots() {
        assert_eq!(
            plan(vec![], vec![]).unwrap().variants,
            [Variant::SingleRow, Variant::Dynamic, Variant::OwnCounter]
        );
        assert_eq!(plan(vec![4], vec![]).unwrap().variants.len(), 4);
        let error = plan(vec![], vec![Variant::Fixed]).unwrap_err().to_string();
        assert!(error.contains("needs --slots"), "{error}");
    }

    #[test]
    fn cases_cover_every_combination_once() {
        let plan = plan(vec![4, 64], vec![]).unwrap();
        let cases = plan.cases();
        // Per hold and client count: single-row, 2 dynamic, 2 fixed, own-counter.
        assert_eq!(cases.len(), 2 * 2 * 6);
        assert_eq!(
            cases[0],
            Case { variant: Variant::SingleRow, slots: None, clients: 1, hold_ms: 0, think_us: 0 }
        );
        assert_eq!(
            cases.iter().filter(|case| case.variant == Variant::Fixed && case.slots == Some(64)).count(),
            4
        );
        assert_eq!(plan.planned_increments(), Some(2 * 6 * (1 + 4) * 3), "3 hot counters");
    }

    #[test]
    fn coalesced_rounds_run_in_autocommit_only() {
        let plan = plan(vec![], vec![Variant::Dynamic, Variant::Coalesced]).unwrap();
        let coalesced: Vec<u32> = plan
            .cases()
            .iter()
            .filter(|case| case.variant == Variant::Coalesced)
            .map(|case| case.hold_ms)
            .collect();
        assert_eq!(coalesced, [0, 0], "hold 0 for each client count, never hold 2");
        assert_eq!(plan.cases().iter().filter(|case| case.variant == Variant::Dynamic).count(), 4);
    }

    #[test]
    fn a_budget_bounds_both_iterations_and_time() {
        let started = Instant::now();
        assert_eq!(Budget::Iterations(7).limits(started), (7, started + ROUND_TIME_LIMIT));
        let timed = Budget::Seconds(1.5).limits(started);
        assert_eq!(timed, (ITERATION_LIMIT, started + Duration::from_millis(1500)));
    }

    #[test]
    fn async_variants_count_in_their_threaded_twins_counters() {
        for (variant, twin) in
            [(Variant::ClientAsync, Variant::Client), (Variant::CoalescedAsync, Variant::Coalesced)]
        {
            assert!(variant.profile().is_async && !twin.profile().is_async);
            assert_eq!(variant.profile().counters_of, twin.profile().counters_of);
            assert_eq!(
                (variant.profile().holds, variant.profile().coalesces),
                (twin.profile().holds, twin.profile().coalesces)
            );
        }
    }

    #[test]
    fn a_population_takes_one_slot_count_and_one_counter_per_iteration() {
        use super::super::population::Spread;
        let base = Plan {
            clients: vec![2, 8],
            slots: vec![4],
            hold_ms: vec![0],
            think_us: 0,
            budget: Budget::Iterations(3),
            variants: vec![],
            hot: 4,
            flushes: 2,
            population: Some(Population { counters: 1_000, spread: Spread::Zipf, slotted_head: None }),
        };
        let plan = base.clone().validated().unwrap();
        assert_eq!(plan.variants, [Variant::SingleRow, Variant::Dynamic, Variant::Lazy, Variant::Coalesced]);
        assert_eq!(plan.planned_increments(), Some(4 * (2 + 8) * 3), "not --hot's 4 per iteration");
        let bad = |plan: Plan| plan.validated().unwrap_err().to_string();
        assert!(bad(Plan { slots: vec![], ..base.clone() }).contains("--counters needs one --slots value"));
        assert!(
            bad(Plan { slots: vec![4, 8], ..base.clone() }).contains("--counters needs one --slots value")
        );
        let empty = Some(Population { counters: 0, spread: Spread::Zipf, slotted_head: None });
        assert!(bad(Plan { population: empty, ..base.clone() }).contains("--counters must be between 1 and"));
        for head in [0, 1_001] {
            let population =
                Some(Population { counters: 1_000, spread: Spread::Zipf, slotted_head: Some(head) });
            assert_eq!(
                bad(Plan { population, ..base.clone() }),
                format!("--slotted-head must be between 1 and --counters (1000), not {head}")
            );
        }
        let whole = Some(Population { counters: 1_000, spread: Spread::Zipf, slotted_head: Some(1_000) });
        assert!(Plan { population: whole, ..base.clone() }.validated().is_ok());
        let periods = bad(Plan { variants: vec![Variant::Dynamic, Variant::Periods], ..base.clone() });
        assert!(
            periods.starts_with(
                "--variant periods does not run with --counters, which measures single-row, dynamic, fixed, lazy"
            ),
            "{periods}"
        );
    }

    #[test]
    fn bad_plans_are_refused() {
        let bad = |plan: Plan| plan.validated().unwrap_err().to_string();
        let base = Plan {
            clients: vec![1],
            slots: vec![],
            hold_ms: vec![0],
            think_us: 0,
            budget: Budget::Iterations(1),
            variants: vec![],
            hot: 4,
            flushes: 2,
            population: None,
        };
        assert!(bad(Plan { clients: vec![0], ..base.clone() }).contains("--clients"));
        assert!(bad(Plan { slots: vec![0], ..base.clone() }).contains("--slots"));
        assert!(bad(Plan { hot: 0, ..base.clone() }).contains("--hot must be between 1 and 1500"));
        assert!(bad(Plan { hot: 1501, ..base.clone() }).contains("--hot"));
        assert!(bad(Plan { flushes: 0, ..base.clone() }).contains("--flushes must be between 1 and 64"));
        assert!(bad(Plan { flushes: 65, ..base.clone() }).contains("--flushes"));
        assert!(bad(Plan { budget: Budget::Iterations(0), ..base.clone() }).contains("--iterations"));
        assert!(bad(Plan { budget: Budget::Seconds(0.0), ..base.clone() }).contains("--duration"));
        let held = Plan { variants: vec![Variant::Coalesced], hold_ms: vec![2], ..base.clone() };
        assert!(bad(held).contains("--variant coalesced runs at hold 0 only"));
        assert!(bad(Plan { think_us: 10_000_001, ..base.clone() }).contains("--think-us must be at most"));
        assert!(Plan { think_us: 10_000_000, ..base }.validated().is_ok());
    }

    #[test]
    fn pauses_average_their_mean_and_a_closed_loop_has_none() {
        assert_eq!(Think::new(0).next(), None);
        let mut think = Think::new(500);
        let pauses: Vec<Duration> = (0..100_000).map(|_| think.next().expect("a pause")).collect();
        let mean_us = pauses.iter().sum::<Duration>().as_secs_f64() * 1e6 / pauses.len() as f64;
        // The mean of 100,000 draws strays 2% from 500 us once in billions
        // of runs (6 standard deviations of 0.32%).
        assert!((mean_us - 500.0).abs() < 10.0, "mean pause {mean_us} us");
        // Exponential: about 37% (1/e) of the pauses are longer than the mean.
        let longer = pauses.iter().filter(|pause| pause.as_secs_f64() * 1e6 > 500.0).count();
        assert!((35_000..39_000).contains(&longer), "{longer} of 100,000 pauses longer than the mean");
    }
}
