//! `reconcile`: recounts counters from their source of truth through the
//! client library, and prints what drifted.

use slotted_counters::{Correction, Counters, Drift, Reconcile};

use super::args::ReconcileArgs;
use super::table;
use crate::error::Error;

pub(super) fn run(args: &ReconcileArgs) -> Result<(), Error> {
    let connected = super::connect(&args.connect.url)?;
    let mut conn = connected.conn;
    let options = crate::install::options_held(&mut conn, &args.package)?;
    drop(conn);
    let pool = mysql::Pool::new(connected.opts).map_err(Error::Query)?;
    let builder = Counters::builder(pool).package(&options);
    let counters = if args.plain_sql { builder.plain_sql() } else { builder }.build()?;
    let mut reconcile = Reconcile::query(&args.query);
    if let Some(prefix) = &args.set {
        reconcile = reconcile.set(prefix);
    }
    if args.dry_run {
        reconcile = reconcile.dry_run();
    }
    let drifts = counters.reconcile(reconcile).map_err(Error::Counter)?;
    print!("{}", report(&drifts));
    let refused: Vec<String> = drifts
        .iter()
        .filter_map(|drift| match &drift.correction {
            Correction::Refused(why) => Some(why.clone()),
            _ => None,
        })
        .collect();
    if refused.is_empty() { Ok(()) } else { Err(Error::Uncorrected(refused)) }
}

/// Each counter that drifted or does not exist, then a count of all.
fn report(drifts: &[Drift]) -> String {
    let rows: Vec<Vec<String>> = drifts
        .iter()
        .filter(|drift| drift.correction != Correction::NoDrift)
        .map(|drift| {
            let number = |value: Option<i64>| value.map_or("-".to_owned(), |value| value.to_string());
            vec![
                drift.name.clone(),
                drift.source.to_string(),
                number(drift.counted),
                number(drift.drift()),
                correction_text(&drift.correction).to_owned(),
            ]
        })
        .collect();
    let drifted = rows.len();
    let corrected = drifts.iter().filter(|drift| drift.correction == Correction::Added).count();
    let listing = if rows.is_empty() {
        String::new()
    } else {
        table::format(&["name", "source", "counted", "drift", "correction"], &rows)
    };
    format!("{listing}{} counters read, {drifted} drifted, {corrected} corrected\n", drifts.len())
}

fn correction_text(correction: &Correction) -> &'static str {
    match correction {
        Correction::NoDrift => "none needed",
        Correction::Added => "added",
        Correction::DryRun => "not added (dry run)",
        Correction::Refused(_) => "refused",
        Correction::NoCounter => "no such counter",
    }
}
