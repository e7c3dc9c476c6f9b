//! What a benchmark run measures: the variants, the client counts, the slot
//! counts and hold times, and how long each round lasts.

use std::time::{Duration, Instant};

use serde::Serialize;

use crate::error::Error;
use slotted_counters_core::options::SLOT_LIMIT;

/// What is being incremented.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    /// The counter the package replaces: one row per counter, `UPDATE ... SET n = n + 1`.
    SingleRow,
    /// The stock a bounded counter replaces: one row per item, each client
    /// taking 1 at a time with `UPDATE ... SET n = n - 1 WHERE id = ? AND
    /// n >= 1`, from a stock that does not run out in a round.
    SingleRowGuarded,
    /// The package with slot counts chosen per counter.
    Dynamic,
    /// `dynamic`'s package with its hot counters bounded at 0
    /// (`counter_bound`), each client taking 1 at a time
    /// (`counter_add(name, -1)`) from a stock that does not run out in a
    /// round: what a bound costs while room is plentiful. Its totals count
    /// as exact when they fell by exactly the takes.
    Bounded,
    /// A sale that runs out: `bounded`'s takes from a stock of 100 per
    /// client, restocked before each round, each client taking until a take
    /// is refused (9004). The round reports the units sold and the takes
    /// refused; its totals are exact when it sold exactly the stock. Runs at
    /// hold 0 only.
    Sale,
    /// `dynamic` with each counter counted per hour and per day
    /// (`counter_track`): every increment also adds to a bucket of each,
    /// in its statement. Its totals count as exact only when every
    /// period's buckets sum to them.
    Periods,
    /// The package generated with `--fixed-slots`.
    Fixed,
    /// Lazy counters (`--fixed-slots --auto-create`): rows appear when first
    /// hit, through INSERT ... ON DUPLICATE KEY UPDATE.
    Lazy,
    /// The dynamic package with `--slot-choice connection`.
    Connection,
    /// The dynamic package with `--slot-choice node`: on a multi-primary
    /// cluster, each node increments only slots of its own.
    Node,
    /// The dynamic package, each iteration one transaction of one
    /// `counter_add` per hot counter: what an application batching by hand
    /// does without `counter_add_many`. Runs at hold 0 only.
    Transaction,
    /// The dynamic package, each iteration one `counter_add_many` call for
    /// all hot counters. Runs at hold 0 only.
    AddMany,
    /// The dynamic package through one coalescing handle per node
    /// (`Counters::coalescing`) that the clients share over a small pool:
    /// their increments gather into one transaction per flush. Runs at hold
    /// 0 only: an increment inside an application's transaction cannot be coalesced.
    Coalesced,
    /// The ceiling: every client increments a 1-slot counter of its own, so
    /// no two clients ever want the same row.
    OwnCounter,
    /// The dynamic package through the client, `Counters::increment`, on a
    /// pool as an application builds it (pinged on take, reset on return),
    /// one handle per client: against `dynamic`, the same `CALL` on one
    /// connection, it shows what the client's calls cost beyond their SQL.
    /// Runs at hold 0 only: each call is its own transaction.
    Client,
    /// The dynamic package's table through the client's plain mode,
    /// `Counters::plain`, one handle per client: one UPDATE of a slot the
    /// client picks, no routine. Runs at hold 0 only.
    Plain,
    /// `client` with write ids (`Counters::with_write_ids`): each increment
    /// is one `counter_add_once`, recorded once. Runs at hold 0 only.
    ClientIds,
    /// `coalesced` with write ids: each flush is one `counter_add_many_once`
    /// (or `counter_add_once` for one counter). Runs at hold 0 only.
    CoalescedIds,
    /// `client` as a tokio application makes it: `AsyncCounters::increment`,
    /// each client a task on a runtime of the machine's cores, sharing one
    /// sqlx pool per node. Runs at hold 0 only.
    ClientAsync,
    /// `coalesced` for tasks: one `AsyncCoalescing` handle per node that
    /// the client tasks share, on coalesced's counters. Clients are tasks,
    /// not connections: thousands fit in a server's `max_connections`.
    /// Runs at hold 0 only.
    CoalescedAsync,
}

/// What sets a variant's rounds apart, written once per variant in
/// [`Variant::profile`].
#[derive(Debug, Clone, Copy)]
pub(super) struct Profile {
    /// The name `--variant` takes.
    pub(super) name: &'static str,
    /// Measured once per `--slots` value.
    pub(super) has_slots: bool,
    /// One package per slot count, so it needs `--slots`.
    pub(super) needs_slots: bool,
    /// Its rounds can hold a transaction open: the batching and client
    /// variants make their own transactions, at hold 0 only.
    pub(super) holds: bool,
    /// The variant whose counters it increments: its own, unless it is a
    /// client of another's package.
    pub(super) counters_of: Variant,
    /// Its clients share each node's coalescing handle.
    pub(super) coalesces: bool,
    /// Its clients are tokio tasks rather than threads.
    pub(super) is_async: bool,
    /// Each of its calls takes 1 from a stock instead of adding 1.
    pub(super) takes: bool,
}

impl Variant {
    /// What the variant is: its name, its slots, its transactions, whose
    /// counters it increments and how its clients run.
    pub(super) fn profile(self) -> Profile {
        use Variant::*;
        let package = Profile {
            name: "",
            has_slots: true,
            needs_slots: false,
            holds: true,
            counters_of: self,
            coalesces: false,
            is_async: false,
            takes: false,
        };
        let own_transactions = Profile { holds: false, ..package };
        match self {
            SingleRow => Profile { name: "single-row", has_slots: false, ..package },
            SingleRowGuarded => {
                Profile { name: "single-row-guarded", has_slots: false, takes: true, ..package }
            }
            Dynamic => Profile { name: "dynamic", ..package },
            Bounded => Profile { name: "bounded", takes: true, ..package },
            Sale => Profile { name: "sale", takes: true, ..own_transactions },
            Periods => Profile { name: "periods", ..package },
            Fixed => Profile { name: "fixed", needs_slots: true, ..package },
            Lazy => Profile { name: "lazy", needs_slots: true, ..package },
            Connection => Profile { name: "connection", ..package },
            Node => Profile { name: "node", ..package },
            Transaction => Profile { name: "transaction", ..own_transactions },
            AddMany => Profile { name: "add-many", ..own_transactions },
            Coalesced => Profile { name: "coalesced", coalesces: true, ..own_transactions },
            OwnCounter => Profile { name: "own-counter", has_slots: false, ..package },
            Client => Profile { name: "client", counters_of: Dynamic, ..own_transactions },
            Plain => Profile { name: "plain", counters_of: Dynamic, ..own_transactions },
            ClientIds => Profile { name: "client-ids", counters_of: Dynamic, ..own_transactions },
            CoalescedIds => {
                Profile { name: "coalesced-ids", counters_of: Coalesced, coalesces: true, ..own_transactions }
            }
            ClientAsync => {
                Profile { name: "client-async", counters_of: Dynamic, is_async: true, ..own_transactions }
            }
            CoalescedAsync => Profile {
                name: "coalesced-async",
                counters_of: Coalesced,
                coalesces: true,
                is_async: true,
                ..own_transactions
            },
        }
    }

    /// The name `--variant` takes.
    pub fn name(self) -> &'static str {
        self.profile().name
    }
}

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
    pub budget: Budget,
    pub variants: Vec<Variant>,
    /// Hot counters every client increments, each once per iteration.
    pub hot: u32,
    /// Flushes each node's coalescing handle keeps in flight at most, each
    /// on a connection of its own.
    pub flushes: u32,
}

/// No round runs longer than this, whatever its budget.
pub(super) const ROUND_TIME_LIMIT: Duration = Duration::from_secs(600);

/// Hot counters of the classic test.
pub const DEFAULT_HOT: u32 = 4;

/// Counters in the classic layout, as in the 2012 load test.
pub(super) const CLASSIC_COUNTERS: u32 = 1_500;

/// Hot counters a benchmark may ask for: one per counter of the layout.
pub(super) const HOT_LIMIT: u32 = CLASSIC_COUNTERS;

/// Flushes in flight a benchmark may ask for: each holds a connection.
pub(super) const FLUSHES_LIMIT: u32 = 64;

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
        if self.variants.is_empty() {
            self.variants = vec![Variant::SingleRow, Variant::Dynamic, Variant::OwnCounter];
            if !self.slots.is_empty() {
                self.variants.push(Variant::Fixed);
            }
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
                        cases.push(Case { variant, slots, clients, hold_ms });
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
                    .map(|case| u64::from(case.clients) * u64::from(iterations) * u64::from(self.hot))
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
            budget: Budget::Iterations(1),
            variants,
            hot: 3,
            flushes: 2,
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
        assert_eq!(cases[0], Case { variant: Variant::SingleRow, slots: None, clients: 1, hold_ms: 0 });
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
    fn bad_plans_are_refused() {
        let bad = |plan: Plan| plan.validated().unwrap_err().to_string();
        let base = Plan {
            clients: vec![1],
            slots: vec![],
            hold_ms: vec![0],
            budget: Budget::Iterations(1),
            variants: vec![],
            hot: 4,
            flushes: 2,
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
    }
}
