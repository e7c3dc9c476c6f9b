//! `status` and `show`: what a database holds, as tables for the terminal.

use super::args::{ShowArgs, StatusArgs};
use super::table;
use crate::error::Error;
use crate::status::{self, CounterSummary, ObjectStatus, State, Status};

pub(super) fn run_status(args: &StatusArgs) -> Result<(), Error> {
    let mut conn = super::connect(&args.connect.url)?.conn;
    let options = crate::install::options_installed(&mut conn, &args.package)?;
    let status = status::status(&mut conn, &options)?;
    print!("{}", status_report(&status));
    let names = |objects: Vec<&ObjectStatus>| objects.into_iter().map(|object| object.name.clone()).collect();
    // A table of another collation first: installing would not mend it.
    if let Some((table, installed)) = status.objects.iter().find_map(|object| match &object.state {
        State::OtherCollation { installed } => Some((object.name.clone(), installed.clone())),
        _ => None,
    }) {
        return Err(Error::OtherCollation { table, installed, package: options.collation().to_owned() });
    }
    // Then outdated: what is missing can break the rest (a routine whose
    // trigger is gone fails), and installing mends both.
    let outdated = status.outdated();
    if !outdated.is_empty() {
        return Err(Error::Outdated(names(outdated)));
    }
    let broken = status.broken();
    if !broken.is_empty() {
        return Err(Error::Broken(grouped_problems(&broken)));
    }
    let not_visible: Vec<String> = status
        .not_visible()
        .into_iter()
        .filter_map(|object| match object.state {
            State::NotVisible { privilege } => {
                Some(format!("{} {} (needs {privilege})", object.kind.to_lowercase(), object.name))
            }
            _ => None,
        })
        .collect();
    if !not_visible.is_empty() {
        return Err(Error::NotVisible(not_visible));
    }
    Ok(())
}

/// Each distinct problem once, with the objects that have it: a dropped
/// definer breaks every routine with the same message.
fn grouped_problems(broken: &[&ObjectStatus]) -> Vec<String> {
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for object in broken {
        if let State::Broken { problem } = &object.state {
            match groups.iter_mut().find(|(known, _)| known == problem) {
                Some((_, names)) => names.push(&object.name),
                None => groups.push((problem, vec![&object.name])),
            }
        }
    }
    groups.into_iter().map(|(problem, names)| format!("{problem} ({})", names.join(", "))).collect()
}

pub(super) fn run_show(args: &ShowArgs) -> Result<(), Error> {
    let mut conn = super::connect(&args.connect.url)?.conn;
    let counters = status::counters(&mut conn, &args.table, &args.names)?;
    print!("{}", counters_report(&counters));
    let unknown = status::unknown(&mut conn, &args.table, &args.names)?;
    if !unknown.is_empty() {
        return Err(Error::UnknownCounters(unknown));
    }
    Ok(())
}

/// Every object of the package and its state: routines, the view, the tables, the triggers.
fn status_report(status: &Status) -> String {
    let rows: Vec<Vec<String>> = status
        .objects
        .iter()
        .map(|object| vec![object.name.clone(), object.kind.to_lowercase(), state_text(&object.state)])
        .collect();
    format!("{}{}", features_report(status), table::format(&["name", "kind", "state"], &rows))
}

/// The package `counter_package()` names (its version among its words),
/// and each feature the database holds.
fn features_report(status: &Status) -> String {
    let package = match &status.package_line {
        Some(line) => format!("package: {line}\n"),
        None => String::new(),
    };
    let installed: Vec<String> = status.features.iter().map(ToString::to_string).collect();
    let features =
        if installed.is_empty() { "none (the classic package)".to_owned() } else { installed.join(", ") };
    format!("{package}features: {features}\n\n")
}

fn state_text(state: &State) -> String {
    match state {
        State::Current => "current".to_owned(),
        State::Present => "present".to_owned(),
        State::Stale { installed } => format!("stale (installed: {installed})"),
        State::OtherCollation { installed } => format!("names in {installed}, not the package's collation"),
        State::Missing => "missing".to_owned(),
        State::NotVisible { privilege } => format!("not visible to this account (needs {privilege})"),
        State::Broken { problem } => format!("broken: {problem}"),
    }
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
