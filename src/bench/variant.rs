//! The variants a benchmark measures, and what sets each apart: its name,
//! its slots, its transactions, whose counters it increments, and how its
//! clients run.

use serde::Serialize;

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
    /// `sale` as applications make it: each take in a transaction of the
    /// application's, beside an insert of its order (`START TRANSACTION;
    /// CALL counter_add(sku, -1); INSERT INTO bench_orders ...; COMMIT`),
    /// on `sale`'s counters. Near the bound, these are the takes that
    /// deadlock when slots are locked out of order: the round reports the
    /// deadlocks its clients met beside the units sold. Runs at hold 0 only.
    SaleInTransactions,
    /// `dynamic` with each counter counted per hour and per day
    /// (`counter_track`): every increment also adds to a bucket of each,
    /// in its statement. Its totals count as exact only when every
    /// period's buckets sum to them.
    Periods,
    /// `periods` with a quota on each period (`counter_limit`), far above
    /// what a round counts: what a limit costs while room is plentiful.
    /// Its totals count as exact as `periods`' do.
    Quota,
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
    /// The dynamic package's table through the client's plain mode
    /// (`plain_sql`), one handle per client: one UPDATE of a slot the
    /// client picks, no routine. Runs at hold 0 only.
    Plain,
    /// `client` with write ids (the builder's `write_ids`): each increment
    /// is one `counter_add_once`, recorded once. Runs at hold 0 only.
    ClientIds,
    /// `coalesced` with write ids: each flush is one `counter_add_many_once`
    /// (or `counter_add_once` for one counter). Runs at hold 0 only.
    CoalescedIds,
    /// `client` as a tokio application makes it: `AsyncCounters::increment`,
    /// each client a task on a runtime of the machine's cores, sharing one
    /// sqlx pool per node. Runs at hold 0 only.
    ClientAsync,
    /// A counter kept with its source, as the reconcile expects it: each
    /// increment in a transaction of the application's beside the insert
    /// of the row it counts (`START TRANSACTION; CALL counter_increment(name);
    /// INSERT INTO bench_sources ...; COMMIT`), on counters of its own.
    /// Runs at hold 0 only.
    Sourced,
    /// `sourced` while a reconcile of its counters against `bench_sources`
    /// runs every second beside the clients (`Counters::reconcile`), on the
    /// same counters: set against `sourced`, what the reconciles cost the
    /// writers. Its totals are exact only if no reconcile
    /// corrected anything, as none should. Runs at hold 0 only.
    SourcedReconciling,
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
    /// A round sells its stock, restocked before it, until a take is
    /// refused, rather than running for the budget.
    pub(super) sells: bool,
    /// Its counters count per hour and per day.
    pub(super) tracks: bool,
    /// What each bucket of its periods may count, if it is limited.
    pub(super) limit: Option<i64>,
    /// A reconcile of its counters runs beside its clients.
    pub(super) reconciles: bool,
}

/// The quota per bucket of `quota`'s periods: a round never comes near it.
const QUOTA_LIMIT: i64 = 1_000_000_000_000;

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
            sells: false,
            tracks: false,
            limit: None,
            reconciles: false,
        };
        let own_transactions = Profile { holds: false, ..package };
        match self {
            SingleRow => Profile { name: "single-row", has_slots: false, ..package },
            SingleRowGuarded => {
                Profile { name: "single-row-guarded", has_slots: false, takes: true, ..package }
            }
            Dynamic => Profile { name: "dynamic", ..package },
            Bounded => Profile { name: "bounded", takes: true, ..package },
            Sale => Profile { name: "sale", takes: true, sells: true, ..own_transactions },
            SaleInTransactions => Profile {
                name: "sale-in-transactions",
                counters_of: Sale,
                takes: true,
                sells: true,
                ..own_transactions
            },
            Periods => Profile { name: "periods", tracks: true, ..package },
            Quota => Profile { name: "quota", tracks: true, limit: Some(QUOTA_LIMIT), ..package },
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
            Sourced => Profile { name: "sourced", ..own_transactions },
            SourcedReconciling => Profile {
                name: "sourced-reconciling",
                counters_of: Sourced,
                reconciles: true,
                ..own_transactions
            },
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

    /// Whether its rounds sell a stock until it runs out, and report what
    /// they sold and refused.
    pub fn sells(self) -> bool {
        self.profile().sells
    }
}
