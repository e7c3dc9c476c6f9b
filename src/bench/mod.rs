//! The contention benchmark: many clients incrementing a few hot counters,
//! through the slotted package and through the single-row counter it
//! replaces, in the same run, and the slot-count advisor built on it.
//!
//! `plan` says what to measure, `population` what many counters a table
//! may hold and how increments spread over them, `workbench` prepares the
//! tables and counters, `floor` measures what one durable commit costs,
//! `round` runs the clients (`tasks` those that are tokio tasks),
//! `footprint` measures a population's tables after the rounds, `report`
//! keeps the figures, `plot` draws them, and `advise` recommends a slot
//! count.

pub mod advise;
mod floor;
mod footprint;
mod node;
mod packages;
mod plan;
mod plot;
mod population;
pub mod report;
mod round;
mod tasks;
mod variant;
mod workbench;

use indicatif::{ProgressBar, ProgressStyle};

pub use floor::Floor;
pub use footprint::GET_MANY;
pub use plan::{Budget, Case, DEFAULT_HOT, Plan};
pub use population::{Population, Spread};
pub use report::{CoalescedFigures, Report, RoundResult, ServerInfo, TableFigures};
pub use variant::Variant;
pub use workbench::Workbench;

use crate::error::Error;

/// Runs `plan` against the database `urls` name (the nodes of one cluster
/// when there are several) and reports every round. The caller checks
/// [`Report::inexact`]: figures of a round whose totals were off cannot be
/// trusted.
pub fn run(urls: &[String], plan: &Plan) -> Result<Report, Error> {
    let max_clients = plan.clients.iter().copied().max().unwrap_or(1);
    let bench = Workbench::prepare(
        urls,
        &plan.variants,
        &plan.slots,
        plan.hot,
        plan.population,
        max_clients,
        plan.flushes,
    )?;
    let floor = Floor::measure(&mut bench.pools[0].get_conn().map_err(Error::Query)?)?;
    let progress = progress_bar(plan.planned_increments());
    let mut results = Vec::new();
    let outcome = plan.cases().into_iter().try_for_each(|case| -> Result<(), Error> {
        progress.set_message(case.label());
        results.push(bench.round(case, plan.budget, &progress, Some(&floor))?);
        Ok(())
    });
    progress.finish_and_clear();
    let tables = match (&outcome, plan.population) {
        (Ok(()), Some(population)) => bench.footprints(population),
        _ => Ok(Vec::new()),
    };
    let server = bench.server().clone();
    let nodes = bench.nodes().to_vec();
    bench.clean_up()?;
    outcome?;
    Ok(Report {
        population: plan.population,
        tables: tables?,
        tool: format!("slotted-counters {}", env!("CARGO_PKG_VERSION")),
        server,
        floor,
        nodes,
        budget: plan.budget,
        hot_counters: plan.hot,
        results,
    })
}

/// A bar over the planned increments, or a running count for timed rounds.
/// It draws only on a terminal.
fn progress_bar(total: Option<u64>) -> ProgressBar {
    let (progress, template) = match total {
        Some(total) => {
            (ProgressBar::new(total), "{msg:40} [{bar:30}] {pos}/{len} increments, {per_sec}, ETA {eta}")
        }
        None => (ProgressBar::no_length(), "{msg:40} {pos} increments, {per_sec}, {elapsed}"),
    };
    progress
        .set_style(ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()));
    progress
}
