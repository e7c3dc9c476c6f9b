//! The contention benchmark: many clients incrementing a few hot counters,
//! through the slotted package and through the single-row counter it replaces,
//! in the same run.
//!
//! The benchmark works in its own tables and routines (`bench_*`), created at
//! the start and dropped at the end, so it never touches an application's
//! counters. Every total is checked: the change of each measured counter must
//! equal the increments the server acknowledged.

use std::sync::Barrier;
use std::thread;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use mysql::prelude::Queryable;
use mysql::{Pool, PoolConstraints, PoolOpts};
use rand::{RngExt, SeedableRng};
use serde::Serialize;

use crate::error::Error;
use crate::options::{PackageArgs, PackageOptions, SlotChoice};
use crate::package::Routine;
use crate::report::{Latencies, Report, RoundResult, ServerInfo};
use crate::{database, install, render};

/// What is being incremented.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    /// The counter the package replaces: one row per counter, `UPDATE ... SET n = n + 1`.
    SingleRow,
    /// The package with slot counts chosen per counter.
    Dynamic,
    /// The package generated with `--fixed-slots`.
    Fixed,
    /// Lazy counters (`--fixed-slots --auto-create`): rows appear when first
    /// hit, through INSERT ... ON DUPLICATE KEY UPDATE.
    Lazy,
    /// The dynamic package with `--slot-choice connection`.
    Connection,
    /// The ceiling: every client increments a 1-slot counter of its own, so
    /// no two clients ever want the same row.
    OwnCounter,
}

impl Variant {
    /// Whether the variant is measured once per `--slots` value.
    fn has_slots(self) -> bool {
        matches!(self, Variant::Dynamic | Variant::Fixed | Variant::Lazy | Variant::Connection)
    }

    /// Whether the variant has one package per slot count, so needs `--slots`.
    fn needs_slots(self) -> bool {
        matches!(self, Variant::Fixed | Variant::Lazy)
    }

    /// The name `--variant` takes.
    fn name(self) -> &'static str {
        match self {
            Variant::SingleRow => "single-row",
            Variant::Dynamic => "dynamic",
            Variant::Fixed => "fixed",
            Variant::Lazy => "lazy",
            Variant::Connection => "connection",
            Variant::OwnCounter => "own-counter",
        }
    }
}

/// How much work each client does in a round.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Budget {
    /// This many iterations of 4 increments, one on each hot counter.
    Iterations(u32),
    /// Iterations until this much time has passed.
    Seconds(f64),
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

/// Everything a benchmark run measures.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub clients: Vec<u32>,
    /// Slot counts for the hot counters; empty for the classic layout.
    pub slots: Vec<u32>,
    pub hold_ms: Vec<u32>,
    pub budget: Budget,
    pub variants: Vec<Variant>,
}

/// Counters in the classic layout, as in the 2012 load test.
const CLASSIC_COUNTERS: u32 = 1_500;
/// The four counters the classic test hammers.
const HOT: [u32; 4] = [100, 500, 1_000, 1_499];
/// Largest slot count of the classic layout.
const CLASSIC_MAX_SLOTS: u32 = 50;
/// Seed of the classic layout, so every run builds the same one.
const LAYOUT_SEED: u64 = 2012;
/// No round runs longer than this, whatever its budget.
const ROUND_TIME_LIMIT: Duration = Duration::from_secs(600);
/// No client runs more iterations than this in a timed round.
const ITERATION_LIMIT: u32 = 10_000_000;

impl Plan {
    /// Checks the plan and fills in the variants when none were chosen.
    pub fn validated(mut self) -> Result<Self, Error> {
        let invalid = |message: &str| Err(Error::InvalidOption(message.to_owned()));
        if self.clients.is_empty() || self.clients.contains(&0) {
            return invalid("--clients needs at least one count, each at least 1");
        }
        if self.slots.contains(&0) || self.slots.iter().any(|&slots| slots > crate::options::SLOT_LIMIT) {
            return invalid("--slots must be between 1 and 65535");
        }
        if self.hold_ms.is_empty() {
            return invalid("--hold-ms needs at least one value");
        }
        match self.budget {
            Budget::Iterations(0) => return invalid("--iterations must be at least 1"),
            Budget::Seconds(seconds) if !(seconds > 0.0 && seconds <= ROUND_TIME_LIMIT.as_secs_f64()) => {
                return invalid("--duration must be more than 0 and at most 600 seconds");
            }
            _ => {}
        }
        if self.variants.is_empty() {
            self.variants = vec![Variant::SingleRow, Variant::Dynamic, Variant::OwnCounter];
            if !self.slots.is_empty() {
                self.variants.insert(2, Variant::Fixed);
            }
        }
        self.variants.sort();
        self.variants.dedup();
        if let Some(variant) = self.variants.iter().find(|variant| variant.needs_slots())
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
    /// clients, then variant and slots, so compared rounds run close together.
    pub fn cases(&self) -> Vec<Case> {
        let mut cases = Vec::new();
        for &hold_ms in &self.hold_ms {
            for &clients in &self.clients {
                for &variant in &self.variants {
                    let slot_counts: Vec<Option<u32>> = if variant.has_slots() && !self.slots.is_empty() {
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
    fn planned_increments(&self) -> Option<u64> {
        match self.budget {
            Budget::Iterations(iterations) => Some(
                self.cases().iter().map(|case| u64::from(case.clients) * u64::from(iterations) * 4).sum(),
            ),
            Budget::Seconds(_) => None,
        }
    }
}

/// Runs `plan` against the database `url` names and reports every round.
/// Fails after reporting when any total was not exact.
pub fn run(url: &str, plan: &Plan) -> Result<Report, Error> {
    let max_clients = plan.clients.iter().copied().max().unwrap_or(1);
    let bench = Workbench::prepare(url, &plan.variants, &plan.slots, max_clients)?;
    let progress = progress_bar(plan.planned_increments());
    let mut results = Vec::new();
    let outcome = plan.cases().into_iter().try_for_each(|case| {
        progress.set_message(case.label());
        results.push(bench.round(case, plan.budget, &progress)?);
        Ok(())
    });
    progress.finish_and_clear();
    let server = bench.server().clone();
    bench.clean_up()?;
    outcome?;
    Ok(Report {
        tool: format!("slotted-counters {}", env!("CARGO_PKG_VERSION")),
        server,
        budget: plan.budget,
        results,
    })
}

fn progress_bar(total: Option<u64>) -> ProgressBar {
    let progress = match total {
        Some(total) => ProgressBar::new(total),
        None => ProgressBar::no_length(),
    };
    let template = match total {
        Some(_) => "{msg:40} [{bar:30}] {pos}/{len} increments, {per_sec}, ETA {eta}",
        None => "{msg:40} {pos} increments, {per_sec}, {elapsed}",
    };
    progress
        .set_style(ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()));
    progress
}

impl Case {
    /// A short name for tables and plots: `dynamic, 64 slots`.
    pub fn label(&self) -> String {
        let name = self.variant.name();
        match (self.variant, self.slots) {
            (Variant::Dynamic | Variant::Connection, None) => format!("{name}, 1-50 slots"),
            (_, Some(slots)) => format!("{name}, {slots} slots"),
            _ => name.to_owned(),
        }
    }
}

/// The benchmark's tables and routines in one database, and a pool to use them.
pub struct Workbench {
    pool: Pool,
    /// Every kind of round to prepare for: a variant and a slot count.
    kinds: Vec<(Variant, Option<u32>)>,
    /// The dynamic packages' largest slot count.
    max_slots: u32,
    max_clients: u32,
    server: ServerInfo,
}

/// The package a variant's rounds call, with its own table and prefix so
/// that no two variants share rows; `None` for the single-row table.
fn package(variant: Variant, slots: Option<u32>, max_slots: u32) -> Result<Option<PackageOptions>, Error> {
    let fixed = slots.unwrap_or(1);
    let args = match variant {
        Variant::SingleRow => return Ok(None),
        Variant::Dynamic | Variant::OwnCounter => PackageArgs {
            table: Some("bench_counters".into()),
            prefix: Some("bench_".into()),
            ..Default::default()
        },
        Variant::Connection => PackageArgs {
            table: Some("bench_conn_counters".into()),
            prefix: Some("bench_conn_".into()),
            slot_choice: Some(SlotChoice::Connection),
            ..Default::default()
        },
        Variant::Fixed => PackageArgs {
            table: Some(format!("bench_fixed_{fixed}")),
            prefix: Some(format!("bench_fixed{fixed}_")),
            fixed_slots: Some(fixed),
            ..Default::default()
        },
        Variant::Lazy => PackageArgs {
            table: Some(format!("bench_lazy_{fixed}")),
            prefix: Some(format!("bench_lazy{fixed}_")),
            fixed_slots: Some(fixed),
            auto_create: true,
            ..Default::default()
        },
    };
    let max_slots = max_slots.max(fixed).max(crate::options::DEFAULT_MAX_SLOTS);
    PackageOptions::try_from(&PackageArgs { max_slots: Some(max_slots), ..args }).map(Some)
}

impl Workbench {
    /// Connects, and creates the tables, routines and counters that rounds
    /// of `variants` over `slots` (empty: the classic layout) need.
    pub fn prepare(url: &str, variants: &[Variant], slots: &[u32], max_clients: u32) -> Result<Self, Error> {
        let opts = database::parse_url(url)?;
        let (mut conn, target) = database::connect(url)?;
        let server = ServerInfo::read(&mut conn)?;
        let max_connections: u32 =
            server.setting("max_connections").and_then(|value| value.parse().ok()).unwrap_or(0);
        if max_connections <= max_clients {
            return Err(Error::InvalidOption(format!(
                "{target} allows {max_connections} connections, and {max_clients} clients need more: \
                 raise max_connections or use fewer --clients"
            )));
        }
        let pool_opts = PoolOpts::default()
            .with_constraints(PoolConstraints::new(0, max_clients as usize + 1).expect("min <= max"));
        let pool = Pool::new(mysql::OptsBuilder::from_opts(opts).pool_opts(pool_opts))
            .map_err(|source| Error::Connect { target: target.clone(), source })?;
        let mut kinds: Vec<(Variant, Option<u32>)> = Vec::new();
        for &variant in variants.iter().chain([Variant::SingleRow].iter()) {
            if variant.has_slots() && !slots.is_empty() {
                kinds.extend(slots.iter().map(|&slots| (variant, Some(slots))));
            } else {
                kinds.push((variant, None));
            }
        }
        kinds.sort();
        kinds.dedup();
        let max_slots = slots.iter().copied().max().unwrap_or(CLASSIC_MAX_SLOTS);
        let bench = Workbench { pool, kinds, max_slots, max_clients, server };
        bench.drop_objects(&mut conn)?;
        bench.create_objects(&mut conn)?;
        Ok(bench)
    }

    /// The server the rounds run on.
    pub fn server(&self) -> &ServerInfo {
        &self.server
    }

    /// Drops everything the benchmark created.
    pub fn clean_up(self) -> Result<(), Error> {
        let mut conn = self.pool.get_conn().map_err(Error::Query)?;
        self.drop_objects(&mut conn)
    }

    /// Every package the prepared rounds call, each once.
    fn packages(&self) -> Result<Vec<PackageOptions>, Error> {
        let mut packages: Vec<PackageOptions> = Vec::new();
        for &(variant, slots) in &self.kinds {
            if let Some(options) = package(variant, slots, self.max_slots)?
                && !packages.iter().any(|known| known.table() == options.table())
            {
                packages.push(options);
            }
        }
        Ok(packages)
    }

    fn drop_objects(&self, conn: &mut impl Queryable) -> Result<(), Error> {
        let mut script = String::from("DROP TABLE IF EXISTS bench_single_row;\n");
        for options in self.packages()? {
            script.push_str(&install::uninstall_script(&options, true)?);
        }
        crate::script::run(conn, &script)?;
        Ok(())
    }

    fn create_objects(&self, conn: &mut impl Queryable) -> Result<(), Error> {
        for options in self.packages()? {
            crate::script::run(conn, &render::setup_sql(&options)?)?;
        }
        conn.query_drop(
            "CREATE TABLE bench_single_row (id INT NOT NULL PRIMARY KEY, n BIGINT NOT NULL) ENGINE=InnoDB",
        )
        .map_err(Error::Query)?;

        // One transaction: thousands of setups, one commit.
        conn.query_drop("START TRANSACTION").map_err(Error::Query)?;
        for &(variant, slots) in &self.kinds {
            let setup = match package(variant, slots, self.max_slots)? {
                Some(options) => format!(
                    "CALL `{}`(?, 'benchmark counter', ?, NULL)",
                    options.routine_name(Routine::Setup)
                ),
                None => "INSERT INTO bench_single_row (id, n) VALUES (?, 0)".to_owned(),
            };
            let mut create = |params: mysql::Params| conn.exec_drop(&setup, params).map_err(Error::Query);
            match (variant, slots) {
                (Variant::SingleRow, _) => (1..=CLASSIC_COUNTERS).try_for_each(|id| create((id,).into()))?,
                (Variant::OwnCounter, _) => {
                    (0..self.max_clients).try_for_each(|client| create((own_name(client), 1).into()))?;
                }
                (Variant::Lazy, _) => {}
                (Variant::Fixed, Some(slots)) => {
                    HOT.iter().try_for_each(|&hot| create((hot_name(hot, slots), None::<u32>).into()))?;
                }
                (_, Some(slots)) => {
                    HOT.iter().try_for_each(|&hot| create((hot_name(hot, slots), slots).into()))?
                }
                (_, None) => {
                    let mut layout = rand::rngs::StdRng::seed_from_u64(LAYOUT_SEED);
                    (1..=CLASSIC_COUNTERS).try_for_each(|id| {
                        create((classic_name(id), layout.random_range(1..=CLASSIC_MAX_SLOTS)).into())
                    })?;
                }
            }
        }
        conn.query_drop("COMMIT").map_err(Error::Query)
    }

    /// Runs one round and checks its totals.
    pub fn round(&self, case: Case, budget: Budget, progress: &ProgressBar) -> Result<RoundResult, Error> {
        let mut conn = self.pool.get_conn().map_err(Error::Query)?;
        let before_status = status_counters(&mut conn)?;
        let before_total = self.total(&mut conn, case)?;

        let barrier = Barrier::new(case.clients as usize + 1);
        let (started, outcomes) = thread::scope(|scope| {
            let clients: Vec<_> = (0..case.clients)
                .map(|client| {
                    let barrier = &barrier;
                    scope.spawn(move || self.client(case, client, budget, barrier, progress))
                })
                .collect();
            barrier.wait();
            let started = Instant::now();
            let outcomes: Vec<Result<ClientOutcome, Error>> = clients
                .into_iter()
                .map(|client| client.join().expect("a benchmark client panicked"))
                .collect();
            (started, outcomes)
        });
        let outcomes = outcomes.into_iter().collect::<Result<Vec<_>, _>>()?;
        let finished = outcomes.iter().map(|outcome| outcome.finished).max().unwrap_or(started);
        let seconds = finished.saturating_duration_since(started).as_secs_f64();

        let after_status = status_counters(&mut conn)?;
        let after_total = self.total(&mut conn, case)?;
        let increments: u64 = outcomes.iter().map(|outcome| outcome.increments).sum();
        let mut latencies: Vec<Duration> =
            outcomes.iter().flat_map(|outcome| outcome.latencies.iter().copied()).collect();
        latencies.sort_unstable();
        let delta = |name: &str| Some(after_status.get(name)?.saturating_sub(*before_status.get(name)?));
        Ok(RoundResult {
            variant: case.variant,
            label: case.label(),
            slots: case.slots,
            clients: case.clients,
            hold_ms: case.hold_ms,
            increments,
            errors: outcomes.iter().map(|outcome| outcome.errors).sum(),
            deadlocks_seen: outcomes.iter().map(|outcome| outcome.deadlocks).sum(),
            seconds,
            increments_per_second: if seconds > 0.0 { increments as f64 / seconds } else { 0.0 },
            latency_ms: Latencies::of(&latencies),
            row_lock_waits: delta("Innodb_row_lock_waits"),
            row_lock_time_ms: delta("Innodb_row_lock_time"),
            server_deadlocks: delta("Innodb_deadlocks"),
            total_change: after_total - before_total,
            total_exact: after_total - before_total == increments as i64,
        })
    }

    /// One client's loop: prepared statement, barrier, bounded iterations.
    fn client(
        &self,
        case: Case,
        client: u32,
        budget: Budget,
        barrier: &Barrier,
        progress: &ProgressBar,
    ) -> Result<ClientOutcome, Error> {
        let prepared = self.increment_sql(case).and_then(|sql| {
            let mut conn = self.pool.get_conn().map_err(Error::Query)?;
            let statement = conn.prep(sql).map_err(Error::Query)?;
            Ok((conn, statement))
        });
        // Wait at the barrier even after a failure, or the others wait forever.
        barrier.wait();
        let (mut conn, statement) = prepared?;
        let started = Instant::now();
        let (iterations, deadline) = match budget {
            Budget::Iterations(iterations) => (iterations, started + ROUND_TIME_LIMIT),
            Budget::Seconds(seconds) => (ITERATION_LIMIT, started + Duration::from_secs_f64(seconds)),
        };
        let hold = Duration::from_millis(u64::from(case.hold_ms));
        let names = counter_names(case, client);
        let mut outcome = ClientOutcome::default();
        for _ in 0..iterations {
            if Instant::now() >= deadline {
                break;
            }
            for name in &names {
                let began = Instant::now();
                let result = if hold.is_zero() {
                    conn.exec_drop(&statement, (name,))
                } else {
                    conn.query_drop("START TRANSACTION")
                        .and_then(|()| conn.exec_drop(&statement, (name,)))
                        .and_then(|()| {
                            thread::sleep(hold);
                            conn.query_drop("COMMIT")
                        })
                };
                match result {
                    Ok(()) => {
                        outcome.increments += 1;
                        outcome.latencies.push(began.elapsed());
                        progress.inc(1);
                    }
                    Err(error) => {
                        outcome.errors += 1;
                        if matches!(&error, mysql::Error::MySqlError(error) if error.code == 1213) {
                            outcome.deadlocks += 1;
                        }
                        if !hold.is_zero() {
                            conn.query_drop("ROLLBACK").map_err(Error::Query)?;
                        }
                    }
                }
            }
        }
        outcome.finished = Instant::now();
        Ok(outcome)
    }

    /// The summed value of the counters `case` increments.
    fn total(&self, conn: &mut impl Queryable, case: Case) -> Result<i64, Error> {
        let names: Vec<mysql::Value> = match case.variant {
            Variant::SingleRow => HOT.iter().map(|&id| id.into()).collect(),
            Variant::OwnCounter => (0..case.clients).map(|client| own_name(client).into()).collect(),
            _ => counter_names(case, 0).into_iter().map(Into::into).collect(),
        };
        let placeholders = vec!["?"; names.len()].join(", ");
        let sql = match package(case.variant, case.slots, self.max_slots)? {
            Some(options) => format!(
                "SELECT CAST(COALESCE(SUM(counter), 0) AS SIGNED) FROM `{}` WHERE counter_name IN ({placeholders})",
                options.table()
            ),
            None => format!(
                "SELECT CAST(COALESCE(SUM(n), 0) AS SIGNED) FROM bench_single_row WHERE id IN ({placeholders})"
            ),
        };
        let total: Option<i64> = conn.exec_first(sql, names).map_err(Error::Query)?;
        Ok(total.unwrap_or_default())
    }

    /// The statement one increment of `case` runs.
    fn increment_sql(&self, case: Case) -> Result<String, Error> {
        Ok(match package(case.variant, case.slots, self.max_slots)? {
            Some(options) => format!("CALL `{}`(?)", options.routine_name(Routine::Increment)),
            None => "UPDATE bench_single_row SET n = n + 1 WHERE id = ?".to_owned(),
        })
    }
}

#[derive(Debug)]
struct ClientOutcome {
    increments: u64,
    errors: u64,
    deadlocks: u64,
    latencies: Vec<Duration>,
    finished: Instant,
}

impl Default for ClientOutcome {
    fn default() -> Self {
        Self { increments: 0, errors: 0, deadlocks: 0, latencies: Vec::new(), finished: Instant::now() }
    }
}

/// The four names (or ids) one iteration of `client` increments.
fn counter_names(case: Case, client: u32) -> Vec<String> {
    match (case.variant, case.slots) {
        (Variant::SingleRow, _) => HOT.iter().map(u32::to_string).collect(),
        (Variant::OwnCounter, _) => vec![own_name(client); HOT.len()],
        (_, Some(slots)) => HOT.iter().map(|&hot| hot_name(hot, slots)).collect(),
        (_, None) => HOT.iter().map(|&hot| classic_name(hot)).collect(),
    }
}

fn classic_name(id: u32) -> String {
    format!("countername{id}")
}

fn hot_name(id: u32, slots: u32) -> String {
    format!("countername{id}_{slots}slots")
}

fn own_name(client: u32) -> String {
    format!("client{client}")
}

/// `Innodb_row_lock_waits`, `Innodb_row_lock_time` and `Innodb_deadlocks`
/// as the server reports them; a server without one of them leaves it out.
fn status_counters(conn: &mut impl Queryable) -> Result<std::collections::HashMap<String, u64>, Error> {
    let rows: Vec<(String, String)> = conn
        .query(
            "SHOW GLOBAL STATUS WHERE Variable_name IN \
             ('Innodb_row_lock_waits', 'Innodb_row_lock_time', 'Innodb_deadlocks')",
        )
        .map_err(Error::Query)?;
    Ok(rows.into_iter().filter_map(|(name, value)| Some((name, value.parse().ok()?))).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(slots: Vec<u32>, variants: Vec<Variant>) -> Result<Plan, Error> {
        Plan { clients: vec![1, 4], slots, hold_ms: vec![0, 2], budget: Budget::Iterations(1), variants }
            .validated()
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
        assert_eq!(plan.planned_increments(), Some(2 * 6 * (1 + 4) * 4));
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
        };
        assert!(bad(Plan { clients: vec![0], ..base.clone() }).contains("--clients"));
        assert!(bad(Plan { slots: vec![0], ..base.clone() }).contains("--slots"));
        assert!(bad(Plan { budget: Budget::Iterations(0), ..base.clone() }).contains("--iterations"));
        assert!(bad(Plan { budget: Budget::Seconds(0.0), ..base.clone() }).contains("--duration"));
    }
}
