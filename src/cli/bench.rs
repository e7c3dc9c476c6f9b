//! `bench` and `advise`: run the benchmark, print its figures as tables,
//! and fail when a round's totals were not exact.

use super::args::{AdviseArgs, BenchArgs};
use super::table;
use crate::bench::{
    self, Budget, CoalescedFigures, GET_MANY, Plan, Population, Report, RoundResult, TableFigures, advise,
};
use crate::error::Error;

pub(super) fn run_bench(args: &BenchArgs) -> Result<(), Error> {
    let plan = Plan {
        clients: args.clients.clone(),
        slots: args.slots.clone(),
        hold_ms: args.hold_ms.clone(),
        think_us: args.think_us,
        budget: match args.duration {
            Some(seconds) => Budget::Seconds(seconds),
            None => Budget::Iterations(args.iterations),
        },
        variants: args.variant.clone(),
        hot: args.hot,
        flushes: args.flushes,
        population: args.counters.map(|counters| Population {
            counters,
            spread: args.spread,
            slotted_head: args.slotted_head,
        }),
    }
    .validated()?;
    let report = bench::run(&args.nodes.urls, &plan)?;
    print!("{}", report_table(&report));
    if let Some(path) = &args.json {
        report.write_json(path)?;
    }
    if let Some(path) = &args.plot {
        report.write_plot(path)?;
    }
    let inexact = report.inexact();
    if !inexact.is_empty() {
        return Err(Error::InexactTotals(inexact));
    }
    Ok(())
}

pub(super) fn run_advise(args: &AdviseArgs) -> Result<(), Error> {
    let advice = advise::advise(&args.nodes.urls, args.clients, args.hold_ms, args.max_slots, args.duration)?;
    let best = advice.rounds[advice.best].increments_per_second;
    let on_cluster = advice.rounds.iter().any(|round| round.conflicts().is_some());
    let rows: Vec<Vec<String>> = advice
        .rounds
        .iter()
        .map(|round| {
            let mut row = vec![
                round.slots.unwrap_or_default().to_string(),
                format!("{:.0}", round.increments_per_second),
                format!("{:.0}", 100.0 * round.increments_per_second / best),
                format!("{:.2}", round.latency_ms.p99),
                optional(round.row_lock_waits),
            ];
            if on_cluster {
                row.push(optional(round.conflicts()));
            }
            row
        })
        .collect();
    let mut header = vec!["slots", "incr/s", "% of best", "p99 ms", "lock waits"];
    if on_cluster {
        header.push("conflicts");
    }
    print!("{}", table::format(&header, &rows));
    let recommended = &advice.rounds[advice.recommended];
    println!(
        "recommended: {} slots for {} clients holding locks {} ms ({:.0} increments/s, within 10% of the best)",
        recommended.slots.unwrap_or_default(),
        args.clients,
        args.hold_ms,
        recommended.increments_per_second
    );
    let inexact: Vec<String> =
        advice.rounds.iter().filter(|round| !round.total_exact).map(|round| round.label.clone()).collect();
    if !inexact.is_empty() {
        return Err(Error::InexactTotals(inexact));
    }
    Ok(())
}

fn optional(value: Option<u64>) -> String {
    value.map_or_else(|| "-".to_owned(), |value| value.to_string())
}

/// One column of the report: its header, and how a round's cell reads.
type Column = (&'static str, fn(&RoundResult) -> String);

/// The floor measured before the rounds, then one line per round; the
/// conflicts column on a cluster, the batch figures when a round coalesced
/// (a flush's time beside the floor's bare commit among them).
fn report_table(report: &Report) -> String {
    let on_cluster = report.results.iter().any(|result| result.conflicts().is_some());
    let coalesced = report.results.iter().any(|result| result.coalesced.is_some());
    let sales = report.results.iter().any(|result| result.variant.sells());
    let mut columns: Vec<Column> = vec![
        ("variant", |result| result.label.clone()),
        ("clients", |result| result.clients.to_string()),
        ("hold ms", |result| result.hold_ms.to_string()),
        ("incr/s", |result| format!("{:.0}", result.increments_per_second)),
        ("p50 ms", |result| format!("{:.2}", result.latency_ms.p50)),
        ("p95 ms", |result| format!("{:.2}", result.latency_ms.p95)),
        ("p99 ms", |result| format!("{:.2}", result.latency_ms.p99)),
        ("lock waits", |result| optional(result.row_lock_waits)),
        ("lock wait ms", |result| optional(result.row_lock_time_ms)),
        ("deadlocks", |result| optional(result.server_deadlocks)),
    ];
    if report.results.iter().any(|result| result.think_us > 0) {
        columns.insert(3, ("think us", |result| result.think_us.to_string()));
    }
    if on_cluster {
        columns.push(("conflicts", |result| optional(result.conflicts())));
    }
    columns.push(("client cpu us", |result| {
        format!("{:.1}", result.client_cpu_us.user + result.client_cpu_us.system)
    }));
    columns.push(("errors", |result| result.errors.to_string()));
    if sales {
        // A sale's takes: sold (the increments), refused once sold out, in
        // its seconds.
        columns.push(("sold", |result| result.increments.to_string()));
        columns.push(("refused", |result| result.refused.to_string()));
        columns.push(("seconds", |result| format!("{:.2}", result.seconds)));
        // Per 1,000 takes, sold or refused: each a transaction of its own.
        columns.push(("deadlocks/1k", |result| {
            let takes = result.increments + result.refused;
            format!("{:.1}", 1_000.0 * result.deadlocks_seen as f64 / takes.max(1) as f64)
        }));
    }
    if report.results.iter().any(|result| result.reconciles.is_some()) {
        // Reconciles that ran beside the round's writers.
        columns.push(("reconciles", |result| optional(result.reconciles.map(|figures| figures.runs))));
    }
    columns.push(("exact", |result| if result.total_exact { "yes" } else { "NO" }.to_owned()));
    if coalesced {
        columns.push(("batch", |result| {
            coalesced_figure(result, |figures| format!("{:.1}", figures.mean_batch))
        }));
        columns.push(("flushes/s", |result| {
            coalesced_figure(result, |figures| format!("{:.0}", figures.flushes_per_second))
        }));
        columns.push(("flush ms", |result| {
            coalesced_figure(result, |figures| format!("{:.3}", figures.flush_ms))
        }));
        columns.push(("x commit", |result| {
            coalesced_figure(result, |figures| {
                figures.flush_over_commit.map_or_else(|| "-".to_owned(), |over| format!("{over:.2}"))
            })
        }));
    }
    let header: Vec<&str> = columns.iter().map(|(header, _)| *header).collect();
    let rows: Vec<Vec<String>> =
        report.results.iter().map(|result| columns.iter().map(|(_, cell)| cell(result)).collect()).collect();
    let mut text = format!("{}\n{}", report.floor.describe(), table::format(&header, &rows));
    if let Some(population) = &report.population {
        text.push_str(&tables_table(population, &report.tables));
    }
    text
}

/// A population's tables after the rounds: a line each, headed by what the
/// population was.
fn tables_table(population: &Population, tables: &[TableFigures]) -> String {
    let header = [
        "table of",
        "rows",
        "MB",
        "rows/counter",
        "bytes/counter",
        "get_many ms",
        "view, one ms",
        "top 10 ms",
    ];
    let rows: Vec<Vec<String>> = tables
        .iter()
        .map(|table| {
            vec![
                table.variant.name().to_owned(),
                table.rows.to_string(),
                format!("{:.1}", table.bytes as f64 / 1_048_576.0),
                format!("{:.2}", table.rows_per_counter),
                format!("{:.0}", table.bytes_per_counter),
                format!("{:.2}", table.get_many_ms),
                table.view_one_ms.map_or_else(|| "-".to_owned(), |ms| format!("{ms:.2}")),
                format!("{:.1}", table.top_ten_ms),
            ]
        })
        .collect();
    let head = population
        .slotted_head
        .map_or_else(String::new, |head| format!(", only the {head} hottest slotted in dynamic tables"));
    format!(
        "\n{} counters, increments spread {}{head}; reads: get_many of {GET_MANY} (median of 21), one \
         total through the view of totals, prepared, and the 10 largest totals (medians of 3)\n{}",
        population.counters,
        population.spread.name(),
        table::format(&header, &rows)
    )
}

/// A coalesced round's figure, as `show` writes it; `-` for another round.
fn coalesced_figure(result: &RoundResult, show: fn(&CoalescedFigures) -> String) -> String {
    result.coalesced.as_ref().map_or_else(|| "-".to_owned(), show)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::{RoundResult, Variant};

    #[test]
    fn inexact_rounds_say_no_in_the_table() {
        let report =
            Report::sample(vec![RoundResult::sample(4, 100.0, 100), RoundResult::sample(4, 100.0, 99)]);
        let table = report_table(&report);
        let lines: Vec<&str> = table.lines().skip(1).collect();
        assert!(lines[0].ends_with("exact"), "{lines:?}");
        assert!(lines[1].ends_with("yes") && lines[2].ends_with("NO"), "{lines:?}");
    }

    #[test]
    fn a_populations_tables_follow_its_rounds() {
        let mut report = Report::sample(vec![RoundResult::sample(4, 100.0, 100)]);
        assert!(!report_table(&report).contains("table of"));
        report.population =
            Some(Population { counters: 1_000, spread: crate::bench::Spread::Uniform, slotted_head: None });
        let dynamic = TableFigures {
            variant: Variant::Dynamic,
            table: "bench_counters".into(),
            rows: 4_000,
            bytes: 3 * 1_048_576,
            rows_per_counter: 4.0,
            bytes_per_counter: 3_145.728,
            get_many_ms: 2.5,
            view_one_ms: Some(0.25),
            top_ten_ms: 40.0,
        };
        let single_row = TableFigures {
            variant: Variant::SingleRow,
            table: "bench_single_row".into(),
            rows: 1_000,
            bytes: 65_536,
            rows_per_counter: 1.0,
            bytes_per_counter: 65.536,
            view_one_ms: None,
            ..dynamic.clone()
        };
        report.tables = vec![single_row, dynamic];
        let table = report_table(&report);
        let lines: Vec<&str> = table.lines().skip_while(|line| !line.is_empty()).skip(1).collect();
        let [heading, header, single_row, dynamic] = lines[..] else { panic!("{table}") };
        assert!(
            heading.starts_with(
                "1000 counters, increments spread uniform; reads: get_many of 100 (median of 21)"
            ),
            "{table}"
        );
        assert!(header.starts_with("table of"), "{table}");
        let cells = |row: &str| row.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
        assert_eq!(cells(single_row), ["single-row", "1000", "0.1", "1.00", "66", "2.50", "-", "40.0"]);
        assert_eq!(cells(dynamic), ["dynamic", "4000", "3.0", "4.00", "3146", "2.50", "0.25", "40.0"]);
    }

    #[test]
    fn the_floor_heads_the_table() {
        let table = report_table(&Report::sample(vec![RoundResult::sample(4, 100.0, 100)]));
        assert_eq!(
            table.lines().next(),
            Some("floor: fsync 0.250 ms (in /data), a bare one-row commit 0.500 ms (medians of 400)")
        );
    }

    #[test]
    fn conflicts_get_a_column_only_from_a_cluster() {
        let plain = Report::sample(vec![RoundResult::sample(4, 100.0, 100)]);
        assert!(!report_table(&plain).contains("conflicts"));
        let mut galera = RoundResult::sample(4, 100.0, 100);
        galera.certification_failures = Some(3);
        galera.brute_force_aborts = Some(4);
        let mut group_replication = RoundResult::sample(4, 100.0, 100);
        group_replication.group_replication_conflicts = Some(9);
        for (round, conflicts) in [(galera, "7"), (group_replication, "9")] {
            let table = report_table(&Report::sample(vec![round]));
            let [_floor, header, row] = table.lines().collect::<Vec<_>>()[..] else { panic!("{table}") };
            // Numbers align right: the figure ends where its header does.
            let end = header.find("conflicts").expect("a conflicts column") + "conflicts".len();
            assert_eq!(row[..end].split_whitespace().last(), Some(conflicts), "{table}");
        }
    }

    #[test]
    fn coalesced_rounds_show_their_mean_batch_and_flush_rate() {
        let plain = Report::sample(vec![RoundResult::sample(4, 100.0, 100)]);
        assert!(!report_table(&plain).contains("batch"));
        let mut coalesced = RoundResult::sample(4, 100.0, 100);
        coalesced.coalesced = Some(CoalescedFigures {
            pool_size: 4,
            flushes: 8,
            mean_batch: 12.5,
            flushes_per_second: 80.0,
            flush_ms: 0.75,
            flush_over_commit: Some(1.5),
        });
        let table = report_table(&Report::sample(vec![RoundResult::sample(4, 100.0, 100), coalesced]));
        let [_floor, header, other, coalesced] = table.lines().collect::<Vec<_>>()[..] else {
            panic!("{table}")
        };
        assert!(other.split_whitespace().rev().take(4).all(|cell| cell == "-"), "{table}");
        // Numbers align right: each figure ends where its header does.
        let cell = |column: &str| {
            let end = header.find(column).expect("the column") + column.len();
            coalesced[..end].split_whitespace().last()
        };
        let figures = ["batch", "flushes/s", "flush ms", "x commit"].map(cell);
        assert_eq!(figures, ["12.5", "80", "0.750", "1.50"].map(Some), "{table}");
    }
}
