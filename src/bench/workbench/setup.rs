//! The benchmark's objects: created before the rounds, dropped after, and
//! a bounded round's stock set again before it runs.

use mysql::prelude::Queryable;
use rand::{RngExt, SeedableRng};

use super::super::packages::PERIODS_COUNTED;
use super::super::plan::{CLASSIC_COUNTERS, Case};
use super::super::population::{DESCRIPTION, Population, slotted_name};
use super::super::variant::Variant;
use super::{CLASSIC_MAX_SLOTS, Workbench, classic_name, own_name};
use crate::error::Error;
use crate::{install, render, script};
use slotted_counters_core::PackageOptions;
use slotted_counters_core::package::{self, Routine};

/// Seed of the classic layout, so every run builds the same one.
const LAYOUT_SEED: u64 = 2012;
/// The stock of the `bounded` and `single-row-guarded` rounds' items: more
/// than any round takes.
const STOCK: i64 = 1_000_000_000_000_000;
/// What a `sale` round sells, per client.
const SALE_PER_CLIENT: i64 = 100;
impl Workbench {
    /// Every package the prepared rounds call, each once.
    fn packages(&self) -> Result<Vec<PackageOptions>, Error> {
        let mut packages: Vec<PackageOptions> = Vec::new();
        for &(variant, slots) in &self.kinds {
            if let Some(options) = self.package(variant, slots)?
                && !packages.iter().any(|known| known.table() == options.table())
            {
                packages.push(options);
            }
        }
        Ok(packages)
    }

    pub(super) fn drop_objects(&self, conn: &mut impl Queryable) -> Result<(), Error> {
        let mut sql = String::from(
            "DROP TABLE IF EXISTS bench_single_row;\nDROP TABLE IF EXISTS bench_stock;\nDROP TABLE IF EXISTS bench_orders;\n\
             DROP TABLE IF EXISTS bench_sources;\n",
        );
        for options in self.packages()? {
            sql.push_str(&install::uninstall_script(&options, true)?);
        }
        script::run(conn, &sql)?;
        Ok(())
    }

    pub(super) fn create_objects(&self, conn: &mut impl Queryable) -> Result<(), Error> {
        for options in self.packages()? {
            script::run(conn, &render::setup_sql(&options)?)?;
        }
        for table in ["bench_single_row", "bench_stock"] {
            conn.query_drop(format!(
                "CREATE TABLE {table} (id INT NOT NULL PRIMARY KEY, n BIGINT NOT NULL) ENGINE=InnoDB"
            ))
            .map_err(Error::Query)?;
        }
        for table in ["bench_orders", "bench_sources"] {
            conn.query_drop(format!(
                "CREATE TABLE {table} (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, \
                 counter_name VARCHAR(255) NOT NULL) ENGINE=InnoDB"
            ))
            .map_err(Error::Query)?;
        }
        for &id in &self.hot {
            conn.exec_drop("INSERT INTO bench_stock (id, n) VALUES (?, ?)", (id, STOCK))
                .map_err(Error::Query)?;
        }
        if let Some(population) = self.population {
            return self.populate(conn, population);
        }

        // One transaction: thousands of setups, one commit.
        conn.query_drop("START TRANSACTION").map_err(Error::Query)?;
        for (owner, slots) in self.counter_sets() {
            let setup = match self.package(owner, slots)? {
                Some(options) => {
                    format!("CALL `{}`(?, '{DESCRIPTION}', ?, NULL)", Routine::Setup.name(&options))
                }
                None => "INSERT INTO bench_single_row (id, n) VALUES (?, 0)".to_owned(),
            };
            let mut create = |params: mysql::Params| conn.exec_drop(&setup, params).map_err(Error::Query);
            match (owner, slots) {
                (Variant::SingleRow, _) => (1..=CLASSIC_COUNTERS).try_for_each(|id| create((id,).into()))?,
                (Variant::SingleRowGuarded, _) => {}
                (Variant::OwnCounter, _) => {
                    (0..self.max_clients).try_for_each(|client| create((own_name(client), 1).into()))?;
                }
                (Variant::Lazy, _) => {}
                (Variant::Fixed, Some(slots)) => {
                    self.hot
                        .iter()
                        .try_for_each(|&hot| create((slotted_name(hot, slots), None::<u32>).into()))?;
                }
                (_, Some(slots)) => {
                    self.hot.iter().try_for_each(|&hot| create((slotted_name(hot, slots), slots).into()))?
                }
                (_, None) => {
                    let mut layout = rand::rngs::StdRng::seed_from_u64(LAYOUT_SEED);
                    (1..=CLASSIC_COUNTERS).try_for_each(|id| {
                        create((classic_name(id), layout.random_range(1..=CLASSIC_MAX_SLOTS)).into())
                    })?;
                }
            }
        }
        let mut tracking: Vec<Variant> = self.kinds.iter().map(|&(variant, _)| variant).collect();
        tracking.retain(|variant| variant.profile().tracks);
        tracking.sort_unstable();
        tracking.dedup();
        for variant in tracking {
            let options =
                self.package(variant, None)?.expect("a variant that tracks periods calls a package");
            for period in PERIODS_COUNTED {
                conn.exec_drop(
                    format!(
                        "INSERT INTO `{}` (counter_name, period, keep, highest) \
                         SELECT DISTINCT counter_name, ?, NULL, ? FROM `{}`",
                        package::periods_table(&options),
                        options.table()
                    ),
                    (period.name(), variant.profile().limit),
                )
                .map_err(Error::Query)?;
            }
            // As counter_track does after a change: the slots of a counter
            // marked untracked would take their writes past its periods.
            conn.query_drop(format!("UPDATE `{}` SET `untracked` = FALSE", options.table()))
                .map_err(Error::Query)?;
        }
        for &(variant, slots) in &self.kinds {
            if matches!(variant, Variant::Bounded | Variant::Sale | Variant::SaleInTransactions) {
                self.restock(
                    conn,
                    Case { variant, slots, clients: self.max_clients, hold_ms: 0, think_us: 0 },
                )?;
            }
        }
        conn.query_drop("COMMIT").map_err(Error::Query)
    }

    /// Makes every counter of `population` in each table the rounds
    /// increment, as `counter_setup` would, in batches of rows with
    /// autocommit (the single-row counters last: other nodes wait for
    /// them); lazy counters get rows only when hit.
    fn populate(&self, conn: &mut impl Queryable, population: Population) -> Result<(), Error> {
        let mut run = |insert: String| conn.query_drop(insert).map_err(Error::Query);
        for (owner, slots) in self.counter_sets() {
            if owner == Variant::Lazy {
                continue;
            }
            if let Some(options) = self.package(owner, slots)? {
                let slots = slots.expect("a population's package rounds have a slot count");
                let population = if owner == Variant::Fixed { population.all_slotted() } else { population };
                population
                    .inserts(options.table(), Some(slots), |id| slotted_name(id, slots))
                    .try_for_each(&mut run)?;
            }
        }
        population.inserts("bench_single_row", None, |id| id.to_string()).try_for_each(run)
    }

    /// Each set of counters the rounds increment, once, as the variant
    /// whose counters they are and their slot count: client, plain and
    /// client-ids increment the dynamic package's, coalesced-ids and
    /// coalesced-async coalesced's.
    pub(in crate::bench) fn counter_sets(&self) -> Vec<(Variant, Option<u32>)> {
        let mut sets = Vec::new();
        for &(variant, slots) in &self.kinds {
            let set = (variant.profile().counters_of, slots);
            if !sets.contains(&set) {
                sets.push(set);
            }
        }
        sets
    }

    /// Sets the hot counters of `case`, a bounded variant's, to their stock
    /// (a sale's for its clients), bounded at 0.
    pub(in crate::bench) fn restock(&self, conn: &mut impl Queryable, case: Case) -> Result<(), Error> {
        let options = self.package(case.variant, case.slots)?.expect("a bounded variant calls a package");
        let stock =
            if case.variant.profile().sells { SALE_PER_CLIENT * i64::from(case.clients) } else { STOCK };
        for name in self.counter_names(case, 0) {
            let reset = format!("CALL `{}`(?, ?, FALSE)", Routine::Reset.name(&options));
            conn.exec_drop(reset, (&name, stock)).map_err(Error::Query)?;
            let bound = format!("CALL `{}`(?, 0, NULL)", Routine::Bound.name(&options));
            conn.exec_drop(bound, (&name,)).map_err(Error::Query)?;
        }
        Ok(())
    }
}
