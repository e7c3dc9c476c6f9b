//! Benchmark results: every figure of every round, the server they were
//! measured on, and the JSON that keeps them. The plot is in `plot`.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use indicatif::ProgressBar;

use mysql::prelude::Queryable;
use serde::Serialize;
use slotted_counters::CounterError;

use super::floor::Floor;
use super::plan::Budget;
use super::population::Population;
use super::variant::Variant;
use crate::error::Error;
use slotted_counters_core::package::{GROUP_MEMBERS_TABLE, server_errno};

/// Server settings that decide what a benchmark measures.
const SETTINGS: [&str; 10] = [
    "version_comment",
    "innodb_flush_log_at_trx_commit",
    "sync_binlog",
    "log_bin",
    "binlog_format",
    "innodb_buffer_pool_size",
    "innodb_lock_wait_timeout",
    "max_connections",
    "transaction_isolation",
    "tx_isolation",
];

/// One table of a population, after the rounds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TableFigures {
    /// The variant whose counters the table holds.
    pub variant: Variant,
    pub table: String,
    /// Its rows, counted.
    pub rows: u64,
    /// Its data and indexes, as the server reports them after `ANALYZE
    /// TABLE`: whole pages, free space included.
    pub bytes: u64,
    pub rows_per_counter: f64,
    pub bytes_per_counter: f64,
    /// The median time, in milliseconds, of reading the totals of
    /// [`GET_MANY`](super::footprint::GET_MANY) counters drawn from the spread: one `get_many` of the
    /// client, or for the single-row counters one `SELECT ... WHERE id IN`.
    pub get_many_ms: f64,
    /// The median time of one counter's total read through the view of
    /// totals by a prepared statement, as a join with an application's
    /// table reads it; `None` for the single-row table, which has no view.
    pub view_one_ms: Option<f64>,
    /// The median time of the ten largest totals, read through the view
    /// (the single-row table: `ORDER BY n DESC LIMIT 10`): a report over
    /// every counter.
    pub top_ten_ms: f64,
}

/// What one client did in a round.
#[derive(Debug)]
pub(super) struct ClientOutcome {
    pub(super) increments: u64,
    pub(super) errors: u64,
    /// Takes refused for a bounded counter's bound (9004): a sale's sold out.
    pub(super) refused: u64,
    pub(super) deadlocks: u64,
    pub(super) latencies: Vec<Duration>,
    /// When its last call returned.
    pub(super) finished: Instant,
}

impl ClientOutcome {
    /// Counts one call that started at `began` and was to apply `increments`.
    pub(super) fn record(
        &mut self,
        result: Result<(), CounterError>,
        increments: usize,
        began: Instant,
        progress: &ProgressBar,
    ) {
        match result {
            Ok(()) => {
                self.increments += increments as u64;
                self.latencies.push(began.elapsed());
                progress.inc(increments as u64);
            }
            Err(CounterError::PastBound { .. }) => self.refused += 1,
            Err(error) => {
                self.errors += 1;
                if error.code() == Some(server_errno::DEADLOCK) {
                    self.deadlocks += 1;
                }
            }
        }
    }
}

impl Default for ClientOutcome {
    fn default() -> Self {
        Self {
            increments: 0,
            errors: 0,
            refused: 0,
            deadlocks: 0,
            latencies: Vec::new(),
            finished: Instant::now(),
        }
    }
}

/// The server a benchmark ran on, and when.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServerInfo {
    pub version: String,
    /// UTC, as the server's clock has it.
    pub date: String,
    pub settings: BTreeMap<String, String>,
    /// The ONLINE members of the Group Replication group the server is in;
    /// `None` when it is in none (or is MariaDB, which has no such group).
    pub group_replication_members: Option<u32>,
}

impl ServerInfo {
    /// Reads the version, the date, and each setting of `SETTINGS` the server has.
    pub fn read(conn: &mut impl Queryable) -> Result<Self, Error> {
        let (version, date): (String, String) = conn
            .query_first("SELECT VERSION(), CAST(UTC_TIMESTAMP() AS CHAR)")
            .map_err(Error::Query)?
            .unwrap_or_default();
        let list = SETTINGS.map(|name| format!("'{name}'")).join(", ");
        let settings: Vec<(String, String)> = conn
            .query(format!("SHOW GLOBAL VARIABLES WHERE Variable_name IN ({list})"))
            .map_err(Error::Query)?;
        let members = conn.query_first::<u32, _>(format!(
            "SELECT COUNT(*) FROM {GROUP_MEMBERS_TABLE} WHERE MEMBER_STATE = 'ONLINE'"
        ));
        let group_replication_members = match members {
            Ok(members) => members.filter(|&members| members > 0),
            Err(mysql::Error::MySqlError(error)) if error.code == server_errno::NO_SUCH_TABLE => None,
            Err(error) => return Err(Error::Query(error)),
        };
        Ok(Self { version, date, settings: settings.into_iter().collect(), group_replication_members })
    }

    /// One setting's value, when the server has it.
    pub fn setting(&self, name: &str) -> Option<&str> {
        self.settings.get(name).map(String::as_str)
    }
}

/// Latency percentiles of the increments of one round, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Latencies {
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
}

impl Latencies {
    /// Percentiles of `sorted` (nearest rank); zeros when it is empty.
    pub fn of(sorted: &[Duration]) -> Self {
        let at = |percent: usize| {
            if sorted.is_empty() {
                return 0.0;
            }
            let rank = (sorted.len() * percent).div_ceil(100).clamp(1, sorted.len());
            sorted[rank - 1].as_secs_f64() * 1_000.0
        };
        Self { p50: at(50), p95: at(95), p99: at(99) }
    }
}

/// Every figure of one round.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RoundResult {
    pub variant: Variant,
    pub label: String,
    pub slots: Option<u32>,
    pub clients: u32,
    pub hold_ms: u32,
    /// Each client's mean pause between iterations, in microseconds; 0: none.
    pub think_us: u32,
    /// Increments the server acknowledged.
    pub increments: u64,
    pub errors: u64,
    /// Takes refused for a bounded counter's bound: what a sale could not sell.
    pub refused: u64,
    /// Errors that were deadlocks (1213), as the clients saw them.
    pub deadlocks_seen: u64,
    pub seconds: f64,
    pub increments_per_second: f64,
    /// Per call: one increment, or for the transaction and add-many
    /// variants, one iteration's.
    pub latency_ms: Latencies,
    /// Deltas of the server's status counters; `None` when it has no such counter.
    pub row_lock_waits: Option<u64>,
    pub row_lock_time_ms: Option<u64>,
    /// Galera's `wsrep_local_cert_failures` and `wsrep_local_bf_aborts`:
    /// transactions that lost to another node's write of the same row.
    pub certification_failures: Option<u64>,
    pub brute_force_aborts: Option<u64>,
    /// Group Replication's `COUNT_CONFLICTS_DETECTED`: transactions that
    /// lost certification to another member's write of the same row (3101).
    pub group_replication_conflicts: Option<u64>,
    pub server_deadlocks: Option<u64>,
    /// How the shared handle flushed, for the coalesced variant.
    pub coalesced: Option<CoalescedFigures>,
    /// The reconciles that ran beside the clients, for
    /// `sourced-reconciling`.
    pub reconciles: Option<ReconcileFigures>,
    /// The benchmark process's own CPU time per acknowledged increment, in
    /// microseconds: what the clients cost beside the server's work, on a
    /// machine both share.
    pub client_cpu_us: CpuTime,
    /// How much the measured counters grew, and whether that is exactly `increments`.
    pub total_change: i64,
    pub total_exact: bool,
}

/// What the reconciles beside a round's clients did.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct ReconcileFigures {
    /// Reconciles run, one after another, while the clients wrote.
    pub runs: u64,
    /// Corrections they added: none, when each increment commits with its row.
    pub corrected: u64,
}

/// What the coalesced variant's handles did in one round.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CoalescedFigures {
    /// Connections each node's handle flushes over, and flushes in flight at most.
    pub pool_size: u32,
    /// Transactions the round's increments took.
    pub flushes: u64,
    /// Increments per flush.
    pub mean_batch: f64,
    /// Flushes per second of the round: with the batch size, where a
    /// flush's time goes.
    pub flushes_per_second: f64,
    /// What one flush took on average, in milliseconds, from taking its
    /// deltas to having their outcomes.
    pub flush_ms: f64,
    /// That time over the run's bare one-row commit ([`Floor::commit_ms`]):
    /// what a flush adds to the commit it carries; `None` where no floor
    /// was measured (`advise`, whose rounds never coalesce).
    pub flush_over_commit: Option<f64>,
}

/// CPU time split as the kernel counts it, in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct CpuTime {
    pub user: f64,
    pub system: f64,
}

/// A whole benchmark run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub tool: String,
    /// The server the first node is.
    pub server: ServerInfo,
    /// What one durable commit costs on it, measured before the rounds.
    pub floor: Floor,
    /// Every node clients connected to, as `user@host:port/database`.
    pub nodes: Vec<String>,
    /// Hot counters each client incremented, each once per iteration,
    /// when there was no population.
    pub hot_counters: u32,
    /// The counters of every table, when each client incremented one of
    /// many per iteration instead.
    pub population: Option<Population>,
    pub budget: Budget,
    pub results: Vec<RoundResult>,
    /// A population's tables after the rounds: their size and reads.
    pub tables: Vec<TableFigures>,
}

impl RoundResult {
    /// Transactions of the round that lost to another node's write of the
    /// same row: Galera's certification failures and brute-force aborts, or
    /// Group Replication's conflicts. `None` off a multi-primary cluster.
    pub fn conflicts(&self) -> Option<u64> {
        let galera = self
            .certification_failures
            .zip(self.brute_force_aborts)
            .map(|(failed, aborted)| failed + aborted);
        galera.or(self.group_replication_conflicts)
    }
}

impl Report {
    /// The rounds whose totals were off, described for an error message.
    pub fn inexact(&self) -> Vec<String> {
        self.results
            .iter()
            .filter(|result| !result.total_exact)
            .map(|result| {
                format!(
                    "{} with {} clients, hold {} ms: counters grew by {} for {} acknowledged increments",
                    result.label, result.clients, result.hold_ms, result.total_change, result.increments
                )
            })
            .collect()
    }

    /// Writes every figure as JSON.
    pub fn write_json(&self, path: &Path) -> Result<(), Error> {
        let json = serde_json::to_string_pretty(self).expect("a report always serializes");
        std::fs::write(path, json + "\n").map_err(|source| Error::Io {
            action: "write",
            path: path.to_owned(),
            source,
        })
    }
}

#[cfg(test)]
impl RoundResult {
    /// A round of 8 clients on 4 dynamic slots that acknowledged 100
    /// increments, for unit tests of what is built from results.
    pub(crate) fn sample(slots: u32, increments_per_second: f64, total_change: i64) -> Self {
        RoundResult {
            variant: Variant::Dynamic,
            label: format!("dynamic, {slots} slots"),
            slots: Some(slots),
            clients: 8,
            hold_ms: 2,
            think_us: 0,
            increments: 100,
            errors: 0,
            refused: 0,
            deadlocks_seen: 0,
            seconds: 1.0,
            increments_per_second,
            latency_ms: Latencies::default(),
            row_lock_waits: None,
            row_lock_time_ms: None,
            certification_failures: None,
            brute_force_aborts: None,
            group_replication_conflicts: None,
            server_deadlocks: None,
            coalesced: None,
            reconciles: None,
            client_cpu_us: CpuTime::default(),
            total_change,
            total_exact: total_change == 100,
        }
    }
}

#[cfg(test)]
impl Report {
    /// A report of `results`, for unit tests.
    pub(crate) fn sample(results: Vec<RoundResult>) -> Self {
        let server = ServerInfo {
            version: "x".into(),
            date: "d".into(),
            settings: BTreeMap::new(),
            group_replication_members: None,
        };
        Report {
            tool: "t".into(),
            server,
            floor: Floor { fsync_ms: 0.25, fsync_dir: "/data".into(), commit_ms: 0.5 },
            nodes: vec!["u@h:3306/db".into()],
            hot_counters: 4,
            population: None,
            budget: Budget::Iterations(1),
            results,
            tables: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inexact_rounds_are_named() {
        let report =
            Report::sample(vec![RoundResult::sample(4, 100.0, 100), RoundResult::sample(4, 100.0, 99)]);
        assert_eq!(
            report.inexact(),
            [
                "dynamic, 4 slots with 8 clients, hold 2 ms: counters grew by 99 for 100 acknowledged increments"
            ]
        );
    }

    #[test]
    fn percentiles_use_the_nearest_rank() {
        let sorted: Vec<Duration> = (1..=200).map(Duration::from_millis).collect();
        assert_eq!(Latencies::of(&sorted), Latencies { p50: 100.0, p95: 190.0, p99: 198.0 });
        assert_eq!(Latencies::of(&[Duration::from_millis(7)]), Latencies { p50: 7.0, p95: 7.0, p99: 7.0 });
        assert_eq!(Latencies::of(&[]), Latencies::default());
    }
}
