//! Benchmark results and the three ways they are shown: a table for the
//! terminal, JSON with every figure, and an SVG plot of throughput.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use mysql::prelude::Queryable;
use plotters::prelude::*;
use serde::Serialize;

use crate::bench::{Budget, Variant};
use crate::error::Error;
use crate::table;

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

/// The server a benchmark ran on, and when.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServerInfo {
    pub version: String,
    /// UTC, as the server's clock has it.
    pub date: String,
    pub settings: BTreeMap<String, String>,
}

impl ServerInfo {
    /// Reads the version, the date and [`SETTINGS`] that the server knows.
    pub fn read(conn: &mut impl Queryable) -> Result<Self, Error> {
        let (version, date): (String, String) = conn
            .query_first("SELECT VERSION(), CAST(UTC_TIMESTAMP() AS CHAR)")
            .map_err(Error::Query)?
            .unwrap_or_default();
        let list = SETTINGS.map(|name| format!("'{name}'")).join(", ");
        let settings: Vec<(String, String)> = conn
            .query(format!("SHOW GLOBAL VARIABLES WHERE Variable_name IN ({list})"))
            .map_err(Error::Query)?;
        Ok(Self { version, date, settings: settings.into_iter().collect() })
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
    /// Increments the server acknowledged.
    pub increments: u64,
    pub errors: u64,
    /// Errors that were deadlocks (1213), as the clients saw them.
    pub deadlocks_seen: u64,
    pub seconds: f64,
    pub increments_per_second: f64,
    pub latency_ms: Latencies,
    /// Deltas of the server's status counters; `None` when it has no such counter.
    pub row_lock_waits: Option<u64>,
    pub row_lock_time_ms: Option<u64>,
    pub server_deadlocks: Option<u64>,
    /// How much the measured counters grew, and whether that is exactly `increments`.
    pub total_change: i64,
    pub total_exact: bool,
}

/// A whole benchmark run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub tool: String,
    pub server: ServerInfo,
    pub budget: Budget,
    pub results: Vec<RoundResult>,
}

impl Report {
    /// One line per round.
    pub fn table(&self) -> String {
        let optional = |value: Option<u64>| value.map_or_else(|| "-".to_owned(), |value| value.to_string());
        let rows: Vec<Vec<String>> = self
            .results
            .iter()
            .map(|result| {
                vec![
                    result.label.clone(),
                    result.clients.to_string(),
                    result.hold_ms.to_string(),
                    format!("{:.0}", result.increments_per_second),
                    format!("{:.2}", result.latency_ms.p50),
                    format!("{:.2}", result.latency_ms.p95),
                    format!("{:.2}", result.latency_ms.p99),
                    optional(result.row_lock_waits),
                    optional(result.row_lock_time_ms),
                    optional(result.server_deadlocks),
                    result.errors.to_string(),
                    if result.total_exact { "yes" } else { "NO" }.to_owned(),
                ]
            })
            .collect();
        table::format(
            &[
                "variant",
                "clients",
                "hold ms",
                "incr/s",
                "p50 ms",
                "p95 ms",
                "p99 ms",
                "lock waits",
                "lock wait ms",
                "deadlocks",
                "errors",
                "exact",
            ],
            &rows,
        )
    }

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

    /// Plots throughput against clients: one panel per hold time, one line
    /// per variant, each variant in the same colour in every panel.
    pub fn write_plot(&self, path: &Path) -> Result<(), Error> {
        let plot_error =
            |error: &dyn std::fmt::Display| Error::Plot { path: path.to_owned(), problem: error.to_string() };
        let mut holds: Vec<u32> = self.results.iter().map(|result| result.hold_ms).collect();
        holds.sort_unstable();
        holds.dedup();
        let mut labels: Vec<&str> = self.results.iter().map(|result| result.label.as_str()).collect();
        labels.sort_unstable();
        labels.dedup();
        let fewest = self.results.iter().map(|result| result.clients).min().unwrap_or(1);
        let most = self.results.iter().map(|result| result.clients).max().unwrap_or(1);
        let top = self.results.iter().map(|result| result.increments_per_second).fold(1.0, f64::max);

        let root = SVGBackend::new(path, (560 * holds.len().max(1) as u32, 620)).into_drawing_area();
        root.fill(&WHITE).map_err(|error| plot_error(&error))?;
        let root = root
            .titled(&format!("Increments per second, {}", self.server.version), ("sans-serif", 20))
            .map_err(|error| plot_error(&error))?;
        for (panel, &hold_ms) in root.split_evenly((1, holds.len().max(1))).iter().zip(&holds) {
            let mut chart = ChartBuilder::on(panel)
                .caption(format!("{hold_ms} ms held before COMMIT"), ("sans-serif", 16))
                .margin(14)
                .x_label_area_size(44)
                .y_label_area_size(64)
                .build_cartesian_2d(
                    (f64::from(fewest) * 0.8..f64::from(most) * 1.25).log_scale(),
                    0.0..top * 1.1,
                )
                .map_err(|error| plot_error(&error))?;
            chart
                .configure_mesh()
                .x_desc("concurrent clients")
                .y_desc("increments per second")
                .x_label_formatter(&|clients| format!("{clients:.0}"))
                .y_label_formatter(&|rate| format!("{rate:.0}"))
                .draw()
                .map_err(|error| plot_error(&error))?;
            for (index, label) in labels.iter().enumerate() {
                let mut points: Vec<(f64, f64)> = self
                    .results
                    .iter()
                    .filter(|result| result.hold_ms == hold_ms && result.label == *label)
                    .map(|result| (f64::from(result.clients), result.increments_per_second))
                    .collect();
                if points.is_empty() {
                    continue;
                }
                points.sort_by(|a, b| a.0.total_cmp(&b.0));
                let color = Palette99::pick(index).to_rgba();
                chart
                    .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))
                    .map_err(|error| plot_error(&error))?
                    .label(label.to_string())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
                chart
                    .draw_series(points.into_iter().map(|point| Circle::new(point, 3, color.filled())))
                    .map_err(|error| plot_error(&error))?;
            }
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperLeft)
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .draw()
                .map_err(|error| plot_error(&error))?;
        }
        root.present().map_err(|error| plot_error(&error))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inexact_rounds_are_named() {
        let round = |total_change: i64| RoundResult {
            variant: Variant::Dynamic,
            label: "dynamic, 4 slots".into(),
            slots: Some(4),
            clients: 8,
            hold_ms: 2,
            increments: 100,
            errors: 0,
            deadlocks_seen: 0,
            seconds: 1.0,
            increments_per_second: 100.0,
            latency_ms: Latencies::default(),
            row_lock_waits: None,
            row_lock_time_ms: None,
            server_deadlocks: None,
            total_change,
            total_exact: total_change == 100,
        };
        let server = ServerInfo { version: "x".into(), date: "d".into(), settings: BTreeMap::new() };
        let report = Report {
            tool: "t".into(),
            server,
            budget: Budget::Iterations(1),
            results: vec![round(100), round(99)],
        };
        assert_eq!(
            report.inexact(),
            [
                "dynamic, 4 slots with 8 clients, hold 2 ms: counters grew by 99 for 100 acknowledged increments"
            ]
        );
        assert!(report.table().lines().nth(2).unwrap().ends_with("NO"));
    }

    #[test]
    fn percentiles_use_the_nearest_rank() {
        let sorted: Vec<Duration> = (1..=200).map(Duration::from_millis).collect();
        assert_eq!(Latencies::of(&sorted), Latencies { p50: 100.0, p95: 190.0, p99: 198.0 });
        assert_eq!(Latencies::of(&[Duration::from_millis(7)]), Latencies { p50: 7.0, p95: 7.0, p99: 7.0 });
        assert_eq!(Latencies::of(&[]), Latencies::default());
    }
}
