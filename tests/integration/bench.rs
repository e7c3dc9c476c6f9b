//! `bench` and `advise` on short configurations against a live server:
//! exact totals, the JSON and SVG outputs, and a clean database afterwards.

use mysql::prelude::Queryable;
use serde_json::Value;

use crate::support::{self, Database, on_each_server, slotted_counters, stderr, stdout};
use slotted_counters_cli::bench::{Population, Spread};
use slotted_counters_core::PackageOptions;

on_each_server!(
    bench_reports_exact_totals_as_table_json_and_plot,
    bench_classic_layout_leaves_application_counters_alone,
    bench_hot_sets_how_many_counters_each_iteration_increments,
    bench_coalesced_reports_its_pool_and_batches,
    bench_async_coalesced_clients_are_tasks_not_connections,
    bench_think_pauses_each_client_between_its_iterations,
    bench_client_and_plain_count_in_the_dynamic_counters,
    bench_periods_counts_every_increment_in_every_bucket,
    bench_bounded_takes_exactly_and_a_sale_sells_exactly_its_stock,
    bench_batching_variants_apply_every_hot_counter_of_an_iteration,
    bench_sourced_writers_meet_reconciles_that_find_nothing_to_correct,
    bench_counters_fills_each_table_and_reports_its_rows_and_reads,
    bench_counters_are_the_rows_counter_setup_makes,
    advise_recommends_a_slot_count_from_its_table,
    bench_refuses_bad_plans,
);

/// What the benchmark leaves in the database: only what was there before.
fn bench_objects(db: &Database) -> Vec<String> {
    db.conn()
        .query(
            "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'bench%' \
             UNION ALL SELECT ROUTINE_NAME FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE()",
        )
        .unwrap()
}

/// Runs a successful `bench` on `db` with `args` (split at spaces) and
/// `--json`: its table and its report.
fn bench_report(db: &Database, args: &str) -> (String, Value) {
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("bench.json");
    let url = db.url();
    let mut full = vec!["bench", "--url", &url, "--json", json.to_str().unwrap()];
    full.extend(args.split_whitespace());
    let output = slotted_counters(&full);
    assert!(output.status.success(), "{}", stderr(&output));
    let report = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    (stdout(&output), report)
}

fn bench_reports_exact_totals_as_table_json_and_plot() {
    let db = Database::new();
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("bench.json");
    let plot = out.path().join("bench.svg");
    let output = slotted_counters(&[
        "bench",
        "--url",
        &db.url(),
        "--clients",
        "2,4",
        "--slots",
        "4",
        "--hold-ms",
        "0,1",
        "--iterations",
        "5",
        "--json",
        json.to_str().unwrap(),
        "--plot",
        plot.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));

    let table = String::from_utf8_lossy(&output.stdout);
    assert!(table.starts_with("floor: fsync "), "the floor heads the table: {table}");
    let header: Vec<&str> = table.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(header[..4], ["variant", "clients", "hold", "ms"]);
    assert_eq!(table.lines().count(), 2 + 16, "{table}");

    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(report["server"]["version"].as_str().unwrap().contains('.'), "{report}");
    let floor = &report["floor"];
    let (fsync, commit) = (floor["fsync_ms"].as_f64().unwrap(), floor["commit_ms"].as_f64().unwrap());
    assert!(fsync > 0.0 && commit > 0.0, "{floor}");
    assert!(commit < 1_000.0, "a one-row commit takes well under a second: {floor}");
    assert_eq!(report["server"]["settings"]["log_bin"], "ON");
    assert_eq!(report["budget"]["iterations"], 5);
    let results = report["results"].as_array().unwrap();
    assert_eq!(results.len(), 2 * 2 * 4, "2 holds x 2 client counts x 4 variants");
    for result in results {
        let clients = result["clients"].as_u64().unwrap();
        support::check_bench_round(result, clients * 5 * 4);
        assert!(result["increments_per_second"].as_f64().unwrap() > 0.0, "{result}");
        let latency = &result["latency_ms"];
        assert!(latency["p50"].as_f64().unwrap() <= latency["p99"].as_f64().unwrap(), "{result}");
        for field in
            ["row_lock_waits", "row_lock_time_ms", "server_deadlocks", "deadlocks_seen", "seconds", "hold_ms"]
        {
            assert!(result[field].is_number(), "{field} in {result}");
        }
    }
    let variants: std::collections::BTreeSet<&str> =
        results.iter().map(|r| r["variant"].as_str().unwrap()).collect();
    assert_eq!(variants.into_iter().collect::<Vec<_>>(), ["dynamic", "fixed", "own-counter", "single-row"]);

    let svg = std::fs::read_to_string(&plot).unwrap();
    assert!(
        svg.starts_with("<svg") && svg.contains("increments per second"),
        "{}",
        &svg[..svg.len().min(200)]
    );
    for text in ["0 ms held before COMMIT", "1 ms held before COMMIT", "fixed, 4 slots", "own-counter"] {
        assert!(svg.contains(text), "one panel per hold, one line per variant: no {text:?}");
    }

    assert!(bench_objects(&db).is_empty(), "the benchmark left {:?}", bench_objects(&db));
}

fn bench_classic_layout_leaves_application_counters_alone() {
    let db = Database::new();
    let setup = std::fs::read_to_string(support::committed_setup_sql("generated")).unwrap();
    slotted_counters_cli::script::run(&mut db.conn(), &setup).unwrap();
    db.conn().query_drop("CALL counter_setup('mine', 'd', 3, 41)").unwrap();

    let output = slotted_counters(&[
        "bench",
        "--url",
        &db.url(),
        "--clients",
        "3",
        "--hold-ms",
        "0",
        "--duration",
        "0.3",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let table = String::from_utf8_lossy(&output.stdout);
    assert!(table.contains("dynamic, 1-50 slots"), "the classic layout: {table}");
    assert!(!table.contains("fixed"), "no fixed variant without --slots: {table}");

    let mine: i64 = db.conn().query_first("SELECT counter_get('mine')").unwrap().unwrap();
    assert_eq!(mine, 41);
    let leftovers = bench_objects(&db);
    assert_eq!(
        leftovers.len(),
        support::ROUTINES.len(),
        "only the application's routines remain: {leftovers:?}"
    );
    assert!(leftovers.iter().all(|name| name.starts_with("counter_")), "{leftovers:?}");
}

/// `--hot N`: every client increments N counters per iteration, each once;
/// 1 puts every client of the single-row variant on one row.
fn bench_hot_sets_how_many_counters_each_iteration_increments() {
    let db = Database::new();
    for hot in ["1", "7"] {
        let (_, report) = bench_report(
            &db,
            &format!(
                "--hot {hot} --clients 3 --slots 4 --hold-ms 0 --iterations 5 --variant single-row,dynamic,own-counter"
            ),
        );
        let hot: u64 = hot.parse().unwrap();
        assert_eq!(report["hot_counters"], hot);
        for result in report["results"].as_array().unwrap() {
            support::check_bench_round(result, 3 * 5 * hot);
        }
    }
    assert!(bench_objects(&db).is_empty());
}

/// `--variant client` calls the dynamic package's counters through
/// `Counters::increment`, and `--variant plain` increments them through
/// the plain mode (`plain_sql`), `--variant client-ids` through a client with write
/// ids, and `--variant client-async` through `AsyncCounters` from tokio
/// tasks, beside `dynamic`'s `CALL` on one connection, so one run compares
/// them; they run at hold 0 only.
fn bench_client_and_plain_count_in_the_dynamic_counters() {
    let db = Database::new();
    let (table, report) = bench_report(
        &db,
        "--variant dynamic,client,plain,client-ids,client-async --hot 1 --clients 1,4 --slots 8 \
         --hold-ms 0,2 --iterations 30",
    );
    let results = report["results"].as_array().unwrap();
    let rounds = |variant: &str| -> Vec<&Value> {
        results.iter().filter(|result| result["variant"] == variant).collect()
    };
    for variant in ["client", "plain", "client-ids", "client-async"] {
        assert_eq!(rounds(variant).len(), 2, "one {variant} round per client count, at hold 0: {table}");
        assert!(table.contains(&format!("{variant}, 8 slots")), "{table}");
    }
    for round in ["client", "plain", "client-ids", "client-async", "dynamic"].into_iter().flat_map(rounds) {
        let clients = round["clients"].as_u64().unwrap();
        support::check_bench_round(round, clients * 30);
    }
    assert_eq!(bench_objects(&db), Vec::<String>::new(), "the benchmark cleans up");
}

/// `--variant periods` increments counters counted per hour and per day,
/// beside `dynamic`'s uncounted ones, at every hold: a round counts as
/// exact only when each period's buckets sum to its total.
fn bench_periods_counts_every_increment_in_every_bucket() {
    let db = Database::new();
    let (table, report) = bench_report(
        &db,
        "--variant dynamic,periods --hot 1 --clients 1,4 --slots 8 --hold-ms 0,2 --iterations 20",
    );
    let rounds: Vec<&Value> = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|result| result["variant"] == "periods")
        .collect();
    assert_eq!(rounds.len(), 4, "2 holds x 2 client counts: {table}");
    for round in rounds {
        support::check_bench_round(round, round["clients"].as_u64().unwrap() * 20);
    }
    assert_eq!(bench_objects(&db), Vec::<String>::new(), "the benchmark cleans up");
}

/// `--variant bounded,single-row-guarded,sale,sale-in-transactions`: takes
/// from a bounded counter and from a guarded single row each lower their
/// stock by exactly the takes, at every hold; a sale sells exactly its 100
/// units per client and refuses each client's last take, in autocommit
/// with no error, and with each take in a transaction beside its order
/// with no error but a rare deadlock.
/// `sourced` writes each increment with its row; `sourced-reconciling`
/// does the same while reconciles run beside it, each finding the counters
/// equal to their rows: none corrects anything, and every total is exact.
fn bench_sourced_writers_meet_reconciles_that_find_nothing_to_correct() {
    let db = Database::new();
    let (table, report) = bench_report(
        &db,
        "--variant sourced,sourced-reconciling --hot 2 --clients 1,4 --slots 4 --iterations 100",
    );
    assert!(table.lines().nth(1).unwrap().contains("reconciles"), "{table}");
    let results = report["results"].as_array().unwrap();
    for variant in ["sourced", "sourced-reconciling"] {
        let rounds: Vec<&Value> = results.iter().filter(|result| result["variant"] == variant).collect();
        assert_eq!(rounds.len(), 2, "{variant}: 2 client counts: {table}");
        for round in rounds {
            support::check_bench_round(round, round["clients"].as_u64().unwrap() * 100 * 2);
            if variant == "sourced" {
                assert_eq!(round["reconciles"], Value::Null, "{round}");
            } else {
                assert!(round["reconciles"]["runs"].as_u64().unwrap() > 0, "{round}");
                assert_eq!(round["reconciles"]["corrected"], 0, "{round}");
            }
        }
    }
    assert_eq!(bench_objects(&db), Vec::<String>::new(), "the benchmark cleans up");
}

fn bench_bounded_takes_exactly_and_a_sale_sells_exactly_its_stock() {
    let db = Database::new();
    let (table, report) = bench_report(
        &db,
        "--variant bounded,single-row-guarded --hot 1 --clients 1,4 --slots 8 --hold-ms 0,2 --iterations 20",
    );
    let results = report["results"].as_array().unwrap();
    for variant in ["bounded", "single-row-guarded"] {
        let rounds: Vec<&Value> = results.iter().filter(|result| result["variant"] == variant).collect();
        assert_eq!(rounds.len(), 4, "{variant}: 2 holds x 2 client counts: {table}");
        for round in rounds {
            support::check_bench_round(round, round["clients"].as_u64().unwrap() * 20);
            assert_eq!(round["total_change"], -(round["increments"].as_i64().unwrap()), "{round}");
        }
    }
    let (table, report) = bench_report(
        &db,
        "--variant sale,sale-in-transactions --hot 1 --clients 1,8 --slots 8 --iterations 1",
    );
    assert!(["sold", "refused", "deadlocks/1k"].iter().all(|column| table.contains(column)), "{table}");
    for variant in ["sale", "sale-in-transactions"] {
        let sales: Vec<&Value> = report["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|result| result["variant"] == variant)
            .collect();
        assert_eq!(sales.len(), 2, "{variant}: {table}");
        for sale in sales {
            let clients = sale["clients"].as_u64().unwrap();
            assert_eq!(sale["refused"], clients, "each client's last take: {sale}");
            if variant == "sale" {
                support::check_bench_round(sale, 100 * clients);
                continue;
            }
            // Takes in transactions may deadlock, rarely: the only errors,
            // retried by the next take, and at most 50 per 1,000.
            assert_eq!(sale["total_exact"], true, "{sale}");
            assert_eq!(sale["increments"], 100 * clients, "{sale}");
            let deadlocks = sale["deadlocks_seen"].as_u64().unwrap();
            assert_eq!(sale["errors"], deadlocks, "{sale}");
            assert!(deadlocks * 1_000 <= 50 * (100 + 1) * clients, "{sale}");
        }
    }
    assert_eq!(bench_objects(&db), Vec::<String>::new(), "the benchmark cleans up");
}

/// `--variant coalesced`: the clients share a coalescing handle; its
/// rounds say how many flushes carried the increments, and run at hold 0
/// only. `coalesced-ids` does the same with write ids, and
/// `coalesced-async` with the async handle from tokio tasks, on the same
/// counters.
fn bench_coalesced_reports_its_pool_and_batches() {
    let db = Database::new();
    let (table, report) = bench_report(
        &db,
        "--variant coalesced,coalesced-ids,coalesced-async,dynamic --hot 1 --clients 16 --slots 8 \
         --hold-ms 0,2 --iterations 20",
    );
    assert!(table.lines().nth(1).unwrap().ends_with("batch  flushes/s  flush ms  x commit"), "{table}");
    let commit_ms = report["floor"]["commit_ms"].as_f64().unwrap();

    let results = report["results"].as_array().unwrap();
    for variant in ["coalesced", "coalesced-ids", "coalesced-async"] {
        let rounds: Vec<&Value> = results.iter().filter(|result| result["variant"] == variant).collect();
        assert_eq!(rounds.len(), 1, "one {variant} round, at hold 0: {results:?}");
        let round = rounds[0];
        assert_eq!(
            (round["hold_ms"].as_u64(), round["total_exact"].as_bool()),
            (Some(0), Some(true)),
            "{round}"
        );
        assert_eq!(round["increments"], 16 * 20);
        let figures = &round["coalesced"];
        assert!(figures["pool_size"].as_u64().unwrap() >= 1, "{figures}");
        let flushes = figures["flushes"].as_u64().unwrap();
        assert!((1..16 * 20).contains(&flushes), "16 clients shared flushes: {figures}");
        let mean_batch = figures["mean_batch"].as_f64().unwrap();
        assert!((mean_batch - 320.0 / flushes as f64).abs() < 1e-9, "{figures}");
        let flush_ms = figures["flush_ms"].as_f64().unwrap();
        let busy_s = flush_ms * flushes as f64 / 1_000.0;
        assert!(flush_ms > 0.0 && busy_s <= round["seconds"].as_f64().unwrap() * 2.0, "{figures} in {round}");
        let over_commit = figures["flush_over_commit"].as_f64().unwrap();
        assert!((over_commit - flush_ms / commit_ms).abs() < 1e-9, "{figures}");
    }
    for result in results.iter().filter(|result| result["variant"] == "dynamic") {
        assert!(result["coalesced"].is_null(), "{result}");
    }
    assert!(bench_objects(&db).is_empty());
}

/// The async coalesced variant's clients are tasks sharing the handle's
/// two connections: more of them than the server allows connections run,
/// where as many clients of a connection each are refused.
fn bench_async_coalesced_clients_are_tasks_not_connections() {
    let db = Database::new();
    let max_connections: u32 = db.conn().query_first("SELECT @@max_connections").unwrap().unwrap();
    let clients = (max_connections + 50).to_string();
    let (table, report) = bench_report(
        &db,
        &format!(
            "--variant coalesced-async --hot 1 --clients {clients} --slots 8 --hold-ms 0 --iterations 2"
        ),
    );
    let round = &report["results"][0];
    assert_eq!(round["variant"], "coalesced-async", "{table}");
    assert_eq!(round["clients"].as_u64(), Some(u64::from(max_connections) + 50), "{table}");
    support::check_bench_round(round, (u64::from(max_connections) + 50) * 2);

    let url = db.url();
    let refused = slotted_counters(&[
        "bench",
        "--url",
        &url,
        "--variant",
        "dynamic",
        "--clients",
        &clients,
        "--slots",
        "8",
        "--hold-ms",
        "0",
    ]);
    assert_eq!(refused.status.code(), Some(1), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("raise max_connections"), "{}", stderr(&refused));
    assert!(bench_objects(&db).is_empty());
}

/// `--think-us` pauses each client between its iterations, threads and
/// tasks alike: 20 iterations with pauses of 20 ms on average last about
/// 400 ms (under 200 ms about once in 80,000 rounds), where 20 calls of a
/// closed loop take tens. The report and the table say so.
fn bench_think_pauses_each_client_between_its_iterations() {
    let db = Database::new();
    let (table, report) = bench_report(
        &db,
        "--variant coalesced,coalesced-async --hot 1 --clients 2 --slots 8 --hold-ms 0 --iterations 20 \
         --think-us 20000",
    );
    let header: Vec<&str> = table.lines().nth(1).unwrap().split_whitespace().take(6).collect();
    assert_eq!(header, ["variant", "clients", "hold", "ms", "think", "us"], "{table}");
    for round in report["results"].as_array().unwrap() {
        support::check_bench_round(round, 2 * 20);
        assert_eq!(round["think_us"], 20_000, "{round}");
        assert!(round["seconds"].as_f64().unwrap() >= 0.2, "the clients paused: {round}");
    }
    assert!(bench_objects(&db).is_empty());
}

/// `--variant transaction` and `add-many` apply an iteration's increments,
/// one per hot counter, in one transaction and in one call.
fn bench_batching_variants_apply_every_hot_counter_of_an_iteration() {
    let db = Database::new();
    let (_, report) = bench_report(
        &db,
        "--variant transaction,add-many --hot 5 --clients 3 --slots 4 --hold-ms 0 --iterations 4",
    );
    let results = report["results"].as_array().unwrap();
    let variants: Vec<&str> = results.iter().map(|result| result["variant"].as_str().unwrap()).collect();
    assert_eq!(variants, ["transaction", "add-many"]);
    for result in results {
        support::check_bench_round(result, 3 * 4 * 5);
    }
    assert!(bench_objects(&db).is_empty());
}

fn advise_recommends_a_slot_count_from_its_table() {
    let db = Database::new();
    let output = slotted_counters(&[
        "advise",
        "--url",
        &db.url(),
        "--clients",
        "4",
        "--hold-ms",
        "1",
        "--max-slots",
        "4",
        "--duration",
        "0.3",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5, "{text}");
    let slots: Vec<&str> = lines[1..4].iter().map(|line| line.split_whitespace().next().unwrap()).collect();
    assert_eq!(slots, ["1", "2", "4"]);
    let shares: Vec<f64> =
        lines[1..4].iter().map(|line| line.split_whitespace().nth(2).unwrap().parse().unwrap()).collect();
    assert!(shares.contains(&100.0), "{text}");
    let recommended: &str =
        lines[4].strip_prefix("recommended: ").unwrap().split_whitespace().next().unwrap();
    let row =
        slots.iter().position(|slots| *slots == recommended).expect("the recommendation is a measured count");
    // Shares are printed rounded to whole percents.
    assert!(shares[row] >= 89.5, "{text}");
    assert!(shares[..row].iter().all(|&share| share <= 90.5), "the smallest good count: {text}");
    assert!(bench_objects(&db).is_empty());
}

/// `--counters N --slots S`: each table holds N counters of S slots made in
/// bulk (the lazy one only the slots its increments hit), each client
/// increments one counter per iteration drawn from `--spread`, and the
/// report adds each table's rows, bytes and reads. A Zipf spread hits
/// fewer counters than a uniform one, so its lazy table has fewer rows.
fn bench_counters_fills_each_table_and_reports_its_rows_and_reads() {
    let db = Database::new();
    let mut lazy_rows = Vec::new();
    // Zipf's run slots only its 20 hottest counters in the dynamic tables.
    for (spread, head, dynamic_rows) in [("uniform", "", 600), ("zipf", "--slotted-head 20", 20 * 3 + 180)] {
        let (table, report) = bench_report(
            &db,
            &format!(
                "--counters 200 --spread {spread} {head} --slots 3 --clients 4 --iterations 50 --hold-ms 0 \
                 --variant single-row,dynamic,fixed,lazy,coalesced,coalesced-async"
            ),
        );
        let mut population = serde_json::json!({ "counters": 200, "spread": spread });
        if !head.is_empty() {
            population["slotted_head"] = 20.into();
        }
        assert_eq!(report["population"], population);
        let results = report["results"].as_array().unwrap();
        assert_eq!(results.len(), 6, "{table}");
        for round in results {
            support::check_bench_round(round, 4 * 50);
        }
        let tables = report["tables"].as_array().unwrap();
        let of = |variant: &str| -> &Value {
            tables.iter().find(|figures| figures["variant"] == variant).unwrap_or_else(|| panic!("{table}"))
        };
        assert_eq!(tables.len(), 5, "coalesced-async counts in coalesced's table: {table}");
        assert_eq!(of("single-row")["rows"], 200, "{table}");
        assert_eq!(of("dynamic")["rows"], dynamic_rows, "the slots of every counter: {table}");
        assert_eq!(of("coalesced")["rows"], dynamic_rows, "{table}");
        assert_eq!(of("fixed")["rows"], 600, "a fixed package's counters have all its slots: {table}");
        let lazy = of("lazy")["rows"].as_u64().unwrap();
        assert!((1..=200).contains(&lazy), "a lazy row per slot hit, at most one per increment: {table}");
        lazy_rows.push(lazy);
        for figures in tables {
            let rows = figures["rows"].as_f64().unwrap();
            assert_eq!(figures["rows_per_counter"].as_f64(), Some(rows / 200.0), "{figures}");
            let bytes = figures["bytes"].as_f64().unwrap();
            assert!(bytes >= rows * 8.0, "a row takes bytes: {figures}");
            assert_eq!(figures["bytes_per_counter"].as_f64(), Some(bytes / 200.0), "{figures}");
            for read in ["get_many_ms", "top_ten_ms"] {
                assert!(figures[read].as_f64().unwrap() > 0.0, "{read}: {figures}");
            }
            let has_view = figures["variant"] != "single-row";
            assert_eq!(figures["view_one_ms"].as_f64().is_some_and(|ms| ms > 0.0), has_view, "{figures}");
        }
        assert!(table.contains(&format!("200 counters, increments spread {spread}")), "{table}");
        assert!(bench_objects(&db).is_empty());
    }
    let [uniform, zipf] = lazy_rows[..] else { unreachable!() };
    assert!(zipf < uniform, "Zipf's head takes most increments: {zipf} rows against uniform's {uniform}");
}

/// The rows `--counters` makes in bulk are those `counter_setup` makes, in
/// a dynamic package and a fixed one: a counter made either way reads the
/// same, so the rounds measure the package as applications use it.
fn bench_counters_are_the_rows_counter_setup_makes() {
    let population = Population { counters: 2, spread: Spread::Uniform, slotted_head: None };
    for (options, slots) in [
        (PackageOptions::default(), Some(4)),
        (PackageOptions::builder().fixed_slots(4).build().unwrap(), None),
    ] {
        let db = support::with_package(&options);
        let mut conn = db.conn();
        conn.exec_drop("CALL counter_setup('made', 'benchmark counter', ?, NULL)", (slots,)).unwrap();
        for insert in population.inserts("counters", Some(4), |id| format!("bulk{id}")) {
            conn.query_drop(insert).unwrap();
        }
        type Row = (u32, Option<String>, i64, Option<i64>, Option<i64>);
        let mut rows = |name: &str| -> Vec<Row> {
            conn.exec(
                "SELECT counter_id, description, counter, lowest, highest FROM counters \
                 WHERE counter_name = ? ORDER BY counter_id",
                (name,),
            )
            .unwrap()
        };
        let made = rows("made");
        assert_eq!(made.len(), 4);
        assert_eq!(rows("bulk1"), made);
        assert_eq!(rows("bulk2"), made);
    }
}

/// A malformed plan is bad usage (exit 2); a plan the server cannot run
/// is the server's limit (exit 1). Neither leaves anything behind.
fn bench_refuses_bad_plans() {
    let db = Database::new();
    for (args, expected, code) in [
        (&["--variant", "fixed"][..], "needs --slots", 2),
        (&["--clients", "0"][..], "--clients", 2),
        (&["--hot", "0"][..], "--hot must be between 1 and 1500", 2),
        (&["--variant", "coalesced", "--hold-ms", "2"][..], "--variant coalesced runs at hold 0 only", 2),
        (&["--clients", "5000"][..], "raise max_connections", 1),
        (&["--counters", "10"][..], "--counters needs one --slots value", 2),
        (&["--counters", "0", "--slots", "2"][..], "--counters must be between 1 and 10000000", 2),
        (
            &["--counters", "10", "--slots", "2", "--variant", "periods"][..],
            "--variant periods does not run with --counters",
            2,
        ),
        (&["--counters", "10", "--slots", "2", "--hot", "2"][..], "cannot be used with", 2),
        (&["--spread", "uniform"][..], "--counters", 2),
        (&["--think-us", "10000001"][..], "--think-us must be at most 10000000", 2),
        (&["--think-us", "-1"][..], "unexpected argument '-1'", 2),
    ] {
        let url = db.url();
        let mut full = vec!["bench", "--url", &url];
        full.extend_from_slice(args);
        let output = slotted_counters(&full);
        assert_eq!(output.status.code(), Some(code), "{args:?}: {}", stderr(&output));
        assert!(stderr(&output).contains(expected), "{args:?}: {}", stderr(&output));
    }
    assert!(bench_objects(&db).is_empty());
}
