//! `status` and `show`: what a database holds, as tables for the terminal.

use super::args::{ShowArgs, StatusArgs};
use super::error::CliError;
use super::table;
use crate::database;
use crate::status::{self, CounterSummary, RoutineState, Status};

pub(super) fn run_status(args: &StatusArgs) -> Result<(), CliError> {
    let options = args.package.options()?;
    let (mut conn, _) = database::connect(&args.connect.url)?;
    let status = status::status(&mut conn, &options)?;
    print!("{}", status_report(&status));
    let outdated = status.outdated();
    if !outdated.is_empty() {
        return Err(CliError::Outdated(outdated.into_iter().map(str::to_owned).collect()));
    }
    Ok(())
}

pub(super) fn run_show(args: &ShowArgs) -> Result<(), CliError> {
    let (mut conn, _) = database::connect(&args.connect.url)?;
    let counters = status::counters(&mut conn, &args.table, &args.names)?;
    print!("{}", counters_report(&counters));
    // The table's collation ignores case; lowercase comparison is close enough
    // to tell which of the asked names matched no counter.
    let unknown: Vec<String> = args
        .names
        .iter()
        .filter(|name| !counters.iter().any(|counter| counter.name.to_lowercase() == name.to_lowercase()))
        .cloned()
        .collect();
    if !unknown.is_empty() {
        return Err(CliError::UnknownCounters(unknown));
    }
    Ok(())
}

/// Every routine and its state, then the view and the counter table.
fn status_report(status: &Status) -> String {
    let mut rows: Vec<Vec<String>> = status
        .routines
        .iter()
        .map(|routine| {
            let state = match &routine.state {
                RoutineState::Current => "current".to_owned(),
                RoutineState::Stale { installed } => format!("stale (installed: {installed})"),
                RoutineState::Missing => "missing".to_owned(),
            };
            vec![routine.name.clone(), routine.kind.to_lowercase(), state]
        })
        .collect();
    let presence = |present: bool| if present { "present" } else { "missing" }.to_owned();
    rows.push(vec![status.view.clone(), "view".to_owned(), presence(status.view_present)]);
    rows.push(vec![status.table.clone(), "table".to_owned(), presence(status.table_present)]);
    table::format(&["name", "kind", "state"], &rows)
}

fn counters_report(counters: &[CounterSummary]) -> String {
    let rows: Vec<Vec<String>> = counters
        .iter()
        .map(|counter| {
            vec![
                counter.name.clone(),
                counter.slots.to_string(),
                counter.total.to_string(),
                counter.start_date.clone(),
                counter.description.clone().unwrap_or_default(),
            ]
        })
        .collect();
    table::format(&["name", "slots", "total", "start date", "description"], &rows)
}
