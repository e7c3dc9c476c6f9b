//! The benchmark's own tables, routines and counters in one database.
//!
//! Everything is named `bench_*`, created at the start and dropped at the
//! end, so a benchmark never touches an application's counters. Each
//! variant has its own table and routine prefix, so no two share rows. On a
//! multi-primary cluster, the first node prepares and every node serves
//! clients.

mod setup;

use std::thread;
use std::time::{Duration, Instant};

use mysql::Pool;
use mysql::prelude::Queryable;

use super::node::Node;
use super::packages::{PERIODS_COUNTED, package};
use super::plan::{CLASSIC_COUNTERS, Case};
use super::population::{Population, Targets, slotted_name};
use super::report::ServerInfo;
use super::tasks::Tasks;
use super::variant::Variant;
use crate::error::Error;
use slotted_counters::Coalescing;
use slotted_counters_core::PackageOptions;
use slotted_counters_core::package::{self, Routine};

/// The four counters the classic test hammers; `--hot` takes the first of
/// them, or adds others.
const HOT: [u32; 4] = [100, 500, 1_000, 1_499];
/// Largest slot count of the classic layout.
const CLASSIC_MAX_SLOTS: u32 = 50;
/// How long the other nodes of a cluster may take to apply what the first
/// one prepared, or a round's increments.
pub(super) const REPLICATION_WAIT: Duration = Duration::from_secs(30);

/// The benchmark's tables and routines in one database, and a pool per node
/// to use them, the preparing node first.
pub struct Workbench {
    pub(super) pools: Vec<Pool>,
    /// Per node, in the order of `pools`, the handle the coalesced
    /// variant's clients share; empty when no round needs one.
    pub(super) coalescing: Vec<Coalescing>,
    /// The same with write ids, for the coalesced-ids variant.
    pub(super) coalescing_ids: Vec<Coalescing>,
    /// The runtime and handles of the async variants, when a round needs them.
    pub(super) tasks: Option<Tasks>,
    /// Each node as `user@host:port/database`, in the order of `pools`.
    nodes: Vec<String>,
    /// Every kind of round to prepare for: a variant and a slot count.
    pub(super) kinds: Vec<(Variant, Option<u32>)>,
    /// The dynamic packages' largest slot count.
    max_slots: u32,
    max_clients: u32,
    /// Flushes in flight of each coalescing handle, each on a connection
    /// of the handle's pool.
    pub(super) flushes: u32,
    /// The ids of the hot counters every client increments, each once per iteration.
    hot: Vec<u32>,
    /// The counters of every table instead, when the tables hold many.
    pub(super) population: Option<Population>,
    server: ServerInfo,
}

/// Every kind of round `variants` over `slots` (empty: the classic layout)
/// run, the single-row baseline included, in order.
fn kinds(variants: &[Variant], slots: &[u32]) -> Vec<(Variant, Option<u32>)> {
    let mut kinds: Vec<(Variant, Option<u32>)> = Vec::new();
    for &variant in variants.iter().chain([Variant::SingleRow].iter()) {
        if variant.profile().has_slots && !slots.is_empty() {
            kinds.extend(slots.iter().map(|&slots| (variant, Some(slots))));
        } else {
            kinds.push((variant, None));
        }
    }
    kinds.sort();
    kinds.dedup();
    kinds
}

impl Workbench {
    /// Connects to every node of `urls`, and creates on the first the
    /// tables, routines and counters that rounds of `variants` over `slots`
    /// (empty: the classic layout) on `hot` hot counters, or on a
    /// `population` of counters, need.
    pub fn prepare(
        urls: &[String],
        variants: &[Variant],
        slots: &[u32],
        hot: u32,
        population: Option<Population>,
        max_clients: u32,
        flushes: u32,
    ) -> Result<Self, Error> {
        if urls.is_empty() {
            return Err(Error::InvalidOption("the benchmark needs at least one --url".to_owned()));
        }
        let clients_per_node = max_clients.div_ceil(urls.len() as u32);
        let max_slots = slots.iter().copied().max().unwrap_or(CLASSIC_MAX_SLOTS);
        let (mut pools, mut targets, mut first) = (Vec::new(), Vec::new(), None);
        let (mut coalescing, mut coalescing_ids) = (Vec::new(), Vec::new());
        for url in urls {
            let node = Node::connect(url, clients_per_node, flushes, variants, max_slots)?;
            pools.push(node.pool);
            coalescing.extend(node.coalescing);
            coalescing_ids.extend(node.coalescing_ids);
            targets.push(node.target);
            first.get_or_insert((node.conn, node.server));
        }
        let (mut conn, server) = first.expect("at least one url");
        let tasks = if variants.iter().any(|variant| variant.profile().is_async) {
            let on_group = server.group_replication_members.is_some();
            let package_of = |variant| {
                package(variant, None, max_slots, on_group).map(|options| options.expect("a package variant"))
            };
            Some(Tasks::connect(
                urls,
                clients_per_node,
                flushes,
                &package_of(Variant::ClientAsync)?,
                &package_of(Variant::CoalescedAsync)?,
            )?)
        } else {
            None
        };
        let bench = Workbench {
            pools,
            coalescing,
            coalescing_ids,
            tasks,
            nodes: targets,
            kinds: kinds(variants, slots),
            max_slots,
            max_clients,
            flushes,
            hot: hot_ids(hot),
            population,
            server,
        };
        bench.drop_objects(&mut conn)?;
        bench.create_objects(&mut conn)?;
        bench.wait_for_every_node()?;
        Ok(bench)
    }

    /// The pool `client` connects through: clients take the nodes in turn.
    pub(super) fn pool_of(&self, client: u32) -> &Pool {
        &self.pools[client as usize % self.pools.len()]
    }

    /// The coalescing handles of `variant` (coalesced or coalesced-ids), one per node.
    pub(super) fn coalescing_for(&self, variant: Variant) -> &[Coalescing] {
        if variant == Variant::CoalescedIds { &self.coalescing_ids } else { &self.coalescing }
    }

    /// The coalescing handle of `variant` that `client` shares with the
    /// other clients of its node.
    pub(super) fn coalescing_of(&self, variant: Variant, client: u32) -> &Coalescing {
        let handles = self.coalescing_for(variant);
        &handles[client as usize % handles.len()]
    }

    /// Waits until every node has the single-row counters the first one
    /// created, the last it creates, or gives up after [`REPLICATION_WAIT`].
    fn wait_for_every_node(&self) -> Result<(), Error> {
        let deadline = Instant::now() + REPLICATION_WAIT;
        let expected = self.population.map_or(CLASSIC_COUNTERS, |population| population.counters);
        for (pool, node) in self.pools.iter().zip(&self.nodes).skip(1) {
            let mut conn = pool.get_conn().map_err(Error::Query)?;
            loop {
                let rows: Result<Option<u32>, _> = conn.query_first("SELECT COUNT(*) FROM bench_single_row");
                if matches!(rows, Ok(Some(rows)) if rows == expected) {
                    break;
                }
                if Instant::now() >= deadline {
                    let seen = match rows {
                        Ok(rows) => format!("{} rows", rows.unwrap_or(0)),
                        Err(error) => error.to_string(),
                    };
                    return Err(Error::Environment(format!(
                        "{node} did not show the {expected} benchmark rows {} made within {} s ({seen}): \
                         every --url must be a node of one multi-primary cluster",
                        self.nodes[0],
                        REPLICATION_WAIT.as_secs()
                    )));
                }
                thread::sleep(Duration::from_millis(100));
            }
        }
        Ok(())
    }

    /// The package `variant`'s rounds on `slots` call here.
    pub(super) fn package(
        &self,
        variant: Variant,
        slots: Option<u32>,
    ) -> Result<Option<PackageOptions>, Error> {
        package(variant, slots, self.max_slots, self.server.group_replication_members.is_some())
    }

    /// Every node, as `user@host:port/database`, the preparing one first.
    pub fn nodes(&self) -> &[String] {
        &self.nodes
    }

    /// The server the rounds run on.
    pub fn server(&self) -> &ServerInfo {
        &self.server
    }

    /// Drops everything the benchmark created.
    pub fn clean_up(self) -> Result<(), Error> {
        let mut conn = self.pools[0].get_conn().map_err(Error::Query)?;
        self.drop_objects(&mut conn)
    }

    /// The summed value of the counters `case` increments.
    pub(super) fn total(&self, conn: &mut impl Queryable, case: Case) -> Result<i64, Error> {
        let names: Vec<mysql::Value> = match case.variant {
            Variant::SingleRow | Variant::SingleRowGuarded => self.hot.iter().map(|&id| id.into()).collect(),
            Variant::OwnCounter => (0..case.clients).map(|client| own_name(client).into()).collect(),
            _ => self.counter_names(case, 0).into_iter().map(Into::into).collect(),
        };
        let placeholders = vec!["?"; names.len()].join(", ");
        // A population's table holds its counters only: all of them count.
        let (names, whole_table) = match self.population {
            Some(_) => (Vec::new(), true),
            None => (names, false),
        };
        let sum = |value: &str, table: &str, key: &str| {
            let sum = format!("SELECT CAST(COALESCE(SUM({value}), 0) AS SIGNED) FROM {table}");
            if whole_table { sum } else { format!("{sum} WHERE {key} IN ({placeholders})") }
        };
        let sql = match self.package(case.variant, case.slots)? {
            Some(options) => sum("counter", &format!("`{}`", options.table()), "counter_name"),
            None => sum("n", single_row_table(case.variant), "id"),
        };
        let total = conn.exec_first::<Option<i64>, _, _>(sql, names.clone()).map_err(Error::Query)?.flatten();
        let total = total.unwrap_or_default();
        if let (true, Some(options)) =
            (case.variant.profile().tracks, self.package(case.variant, case.slots)?)
        {
            // Each period's buckets must sum to the total: the first that
            // does not is what the round reads, so it counts as inexact.
            for period in PERIODS_COUNTED {
                let counted: Option<i64> = conn
                    .exec_first(
                        format!(
                            "SELECT CAST(COALESCE(SUM(counter), 0) AS SIGNED) FROM `{}` \
                             WHERE period = ? AND counter_name IN ({placeholders})",
                            package::buckets_table(&options)
                        ),
                        std::iter::once(mysql::Value::from(period.name()))
                            .chain(names.clone())
                            .collect::<Vec<_>>(),
                    )
                    .map_err(Error::Query)?;
                if counted != Some(total) {
                    return Ok(counted.unwrap_or_default());
                }
            }
        }
        Ok(total)
    }

    /// What `client` increments each iteration: every hot counter, or one
    /// counter drawn from the population.
    pub(super) fn targets(&self, case: Case, client: u32) -> Targets {
        match self.population {
            Some(population) => Targets::drawn(population.draw(), case.slots),
            None => Targets::Hot(self.counter_names(case, client)),
        }
    }

    /// The names (or ids) one iteration of `client` increments, one per hot counter.
    pub(super) fn counter_names(&self, case: Case, client: u32) -> Vec<String> {
        match (case.variant, case.slots) {
            (Variant::SingleRow | Variant::SingleRowGuarded, _) => {
                self.hot.iter().map(u32::to_string).collect()
            }
            (Variant::OwnCounter, _) => vec![own_name(client); self.hot.len()],
            (_, Some(slots)) => self.hot.iter().map(|&hot| slotted_name(hot, slots)).collect(),
            (_, None) => self.hot.iter().map(|&hot| classic_name(hot)).collect(),
        }
    }

    /// The statement a client of `case` runs: one increment, given a
    /// counter, or for add-many, every hot counter's, given their deltas.
    pub(super) fn increment_sql(&self, case: Case) -> Result<String, Error> {
        Ok(match self.package(case.variant, case.slots)? {
            Some(options) => match case.variant {
                Variant::Transaction => format!("CALL `{}`(?, 1)", Routine::Add.name(&options)),
                Variant::AddMany => format!("CALL `{}`(?)", Routine::AddMany.name(&options)),
                Variant::Bounded | Variant::Sale | Variant::SaleInTransactions => {
                    format!("CALL `{}`(?, -1)", Routine::Add.name(&options))
                }
                _ => format!("CALL `{}`(?)", Routine::Increment.name(&options)),
            },
            None if case.variant == Variant::SingleRowGuarded => {
                "UPDATE bench_stock SET n = n - 1 WHERE id = ? AND n >= 1".to_owned()
            }
            None => "UPDATE bench_single_row SET n = n + 1 WHERE id = ?".to_owned(),
        })
    }
}

/// The order a `sale-in-transactions` take inserts in its transaction,
/// given the counter it took from.
pub(super) const ORDER_SQL: &str = "INSERT INTO bench_orders (counter_name) VALUES (?)";

/// The row a `sourced` increment inserts in its transaction, given the
/// counter it incremented.
pub(super) const SOURCE_SQL: &str = "INSERT INTO bench_sources (counter_name) VALUES (?)";

/// What `sourced-reconciling`'s reconcile counts: each counter's rows.
pub(super) const RECONCILE_SQL: &str =
    "SELECT counter_name, COUNT(*) FROM bench_sources GROUP BY counter_name";

/// The table of a variant without a package: the single-row counters, or
/// the guarded stock.
fn single_row_table(variant: Variant) -> &'static str {
    if variant == Variant::SingleRowGuarded { "bench_stock" } else { "bench_single_row" }
}

/// The ids of `hot` hot counters: the classic four first, then the others
/// in order.
fn hot_ids(hot: u32) -> Vec<u32> {
    HOT.into_iter().chain((1..=CLASSIC_COUNTERS).filter(|id| !HOT.contains(id))).take(hot as usize).collect()
}

fn classic_name(id: u32) -> String {
    format!("countername{id}")
}

fn own_name(client: u32) -> String {
    format!("client{client}")
}

#[cfg(test)]
mod tests {
    use super::super::plan::HOT_LIMIT;
    use super::*;

    #[test]
    fn hot_counters_start_with_the_classic_four() {
        assert_eq!(hot_ids(4), HOT);
        assert_eq!(hot_ids(1), [100]);
        let many = hot_ids(HOT_LIMIT);
        assert_eq!(many[..6], [100, 500, 1_000, 1_499, 1, 2]);
        let mut distinct = many.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct, (1..=CLASSIC_COUNTERS).collect::<Vec<_>>(), "every counter once");
    }
}
