//! `reconcile`: recounts counters from their source of truth through the
//! client library, and prints what drifted; a large source in ranges of
//! its keys, with progress on stderr and, in a file the DBA names, where to
//! resume.

use std::fs;
use std::io;
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};

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
    let drifts = match &args.keys {
        Some(keys) => in_ranges(&counters, reconcile, keys, args)?,
        None => counters.reconcile(reconcile).map_err(Error::Counter)?,
    };
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

/// Reconciles `keys` range by range from where the resume file says the
/// last run stopped, reporting each range on stderr and keeping in the
/// file the first key of the range after it.
fn in_ranges(
    counters: &Counters,
    reconcile: Reconcile<'_>,
    keys: &RangeInclusive<i64>,
    args: &ReconcileArgs,
) -> Result<Vec<Drift>, Error> {
    let progress = args.resume.as_deref().map(|path| Progress::open(path, &args.query, keys)).transpose()?;
    let start = progress.as_ref().and_then(|progress| progress.next).unwrap_or(*keys.start());
    if start != *keys.start() {
        eprintln!("resuming at key {start}");
    }
    let all_keys = span(keys);
    let mut drifts = Vec::new();
    for range in reconcile.ranges(start..=*keys.end(), args.batch_size) {
        let (first, last) = range.key_range().map(RangeInclusive::into_inner).unwrap_or_default();
        let found = counters.reconcile(range).map_err(|source| Error::Stopped {
            first,
            last,
            resume: match &args.resume {
                Some(_) => "the ranges before it are done: run the same command again to resume".to_owned(),
                None => format!("the ranges before it are done: resume with --keys {first}..{}", keys.end()),
            },
            source: Box::new(source),
        })?;
        let drifted = found.iter().filter(|drift| drift.correction != Correction::NoDrift).count();
        let corrected = found.iter().filter(|drift| drift.correction == Correction::Added).count();
        eprintln!(
            "keys {first}..{last}: {} counters read, {drifted} drifted, {corrected} corrected; {:.1}% of the keys done",
            found.len(),
            100.0 * span(&(*keys.start()..=last)) / all_keys,
        );
        if let Some(progress) = &progress {
            progress.save(last.checked_add(1))?;
        }
        drifts.extend(found);
    }
    if let Some(progress) = progress {
        progress.finish()?;
    }
    Ok(drifts)
}

/// How many keys `keys` holds, as a float for a share of them.
fn span(keys: &RangeInclusive<i64>) -> f64 {
    (i128::from(*keys.end()) - i128::from(*keys.start()) + 1) as f64
}

/// A run's progress in its resume file: the first key of the range it
/// does next, beside the query the keys belong to, so that the file of
/// another reconcile is never taken for this one's.
struct Progress<'a> {
    path: &'a Path,
    query: &'a str,
    next: Option<i64>,
}

impl<'a> Progress<'a> {
    fn open(path: &'a Path, query: &'a str, keys: &RangeInclusive<i64>) -> Result<Self, Error> {
        let problem = |problem: String| Error::Resume { path: path.to_owned(), problem };
        let text = match fs::read_to_string(path) {
            Ok(text) => text,
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                return Ok(Progress { path, query, next: None });
            }
            Err(error) => return Err(problem(error.to_string())),
        };
        let (next, held) = parse(&text).ok_or_else(|| {
            problem("it is not a reconcile's progress (\"next KEY\" then \"query SQL\")".to_owned())
        })?;
        if held != query {
            return Err(problem(format!(
                "it holds the progress of another query, {held:?}: remove it to start this one afresh"
            )));
        }
        // Just past the last key: a run killed after its last range, before
        // it removed the file, which has nothing left to do.
        let done = keys.end().checked_add(1) == Some(next);
        if !keys.contains(&next) && !done {
            return Err(problem(format!(
                "its next key, {next}, is outside --keys {}..{}",
                keys.start(),
                keys.end()
            )));
        }
        Ok(Progress { path, query, next: Some(next) })
    }

    /// Records that the run goes on at `next`; `None`, past the last key
    /// an i64 holds, when nothing is left. Written beside the file and
    /// renamed over it, so that an interrupted write leaves the last
    /// progress whole.
    fn save(&self, next: Option<i64>) -> Result<(), Error> {
        let Some(next) = next else { return Ok(()) };
        let written = temporary(self.path);
        fs::write(&written, format!("next {next}\nquery {}\n", self.query)).map_err(|source| Error::Io {
            action: "write",
            path: written.clone(),
            source,
        })?;
        fs::rename(&written, self.path).map_err(|source| Error::Io {
            action: "replace",
            path: self.path.to_owned(),
            source,
        })
    }

    /// Every range is done: a run with the same file starts afresh.
    fn finish(self) -> Result<(), Error> {
        match fs::remove_file(self.path) {
            Err(error) if error.kind() != io::ErrorKind::NotFound => {
                Err(Error::Io { action: "remove", path: self.path.to_owned(), source: error })
            }
            _ => Ok(()),
        }
    }
}

/// The next key and the query of a resume file's text.
fn parse(text: &str) -> Option<(i64, &str)> {
    let (next, query) = text.split_once('\n')?;
    let next = next.strip_prefix("next ")?.parse().ok()?;
    let query = query.strip_prefix("query ")?.strip_suffix('\n')?;
    Some((next, query))
}

fn temporary(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".new");
    PathBuf::from(name)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resume_file_reads_back_its_next_key_and_its_query_whatever_lines_the_query_has() {
        let query = "SELECT CONCAT('p:', id), COUNT(*)\nFROM posts\nWHERE id BETWEEN ? AND ? GROUP BY id";
        let text = format!("next -42\nquery {query}\n");
        assert_eq!(parse(&text), Some((-42, query)));
        assert_eq!(parse("next x\nquery q\n"), None);
        assert_eq!(parse("next 1\nq\n"), None);
        assert_eq!(parse("next 1\nquery q"), None);
    }
}
