//! Crashes, replicas and dumps, each on servers of the test's own: a kill -9
//! under load, a primary with a replica, a dump restored elsewhere.

use std::io::Write;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use mysql::prelude::Queryable;
use mysql::{Conn, Opts};
use slotted_counters::{CounterError, Keep, NewCounter, PackageOptions, Period};
use slotted_counters_cli::{render, script};
use slotted_counters_core::package;

use crate::support::flavor::Program;
use crate::support::server::{Booted, run_each};
use crate::support::{
    self, Flavor, flavor, on_each_server, release, slotted_counters, stderr, stdout, succeeded,
};

on_each_server!(
    a_crash_loses_no_acknowledged_increment_and_applies_none_by_half,
    a_replica_stays_row_for_row_identical_under_statement_and_row_logging,
    a_dump_with_routines_restores_into_a_fresh_server_and_keeps_working,
);

/// Boots a server of the test's own with `config`, after checking that it
/// syncs every commit to disk, its binary log's included: what a crash or a
/// replica tests is what production's durable commits keep.
fn boot(config: &str) -> Booted {
    let server = Booted::start(release(), config)
        .unwrap_or_else(|problem| panic!("cannot boot a {} server: {problem}", flavor()));
    let syncs: Option<(u32, u32)> =
        server.root_conn().query_first("SELECT @@innodb_flush_log_at_trx_commit, @@sync_binlog").unwrap();
    assert_eq!(syncs, Some((1, 1)), "a durability test's server syncs every commit");
    server
}

/// Boots a server of the test's own with `config`, and a database `name`
/// on it holding the default package.
fn booted_with_package(config: &str, name: &str) -> Booted {
    let server = boot(config);
    server.root_conn().query_drop(format!("CREATE DATABASE `{name}`")).unwrap();
    let script = render::setup_sql(&PackageOptions::default()).unwrap();
    script::run(&mut connect(&server, name), &script).unwrap();
    server
}

fn connect(server: &Booted, database: &str) -> Conn {
    Conn::new(Opts::from_url(&server.url(database)).unwrap()).unwrap()
}

/// What one client saw before the server went away.
struct Seen {
    acknowledged: u64,
    /// Calls that got an error: each may or may not have been applied.
    unanswered: u64,
}

fn a_crash_loses_no_acknowledged_increment_and_applies_none_by_half() {
    let mut server = booted_with_package("", "app");
    let mut conn = connect(&server, "app");
    conn.query_drop("CALL counter_setup('hot', 'd', 16, NULL)").unwrap();
    conn.query_drop("CALL counter_setup('resized', 'd', 8, 1000)").unwrap();

    let running = Arc::new(AtomicBool::new(true));
    let acknowledged_so_far = Arc::new(AtomicU64::new(0));
    let resizes_so_far = Arc::new(AtomicU32::new(0));
    let incrementing: Vec<thread::JoinHandle<Seen>> = (0..32)
        .map(|_| {
            let mut conn = connect(&server, "app");
            let running = running.clone();
            let acknowledged_so_far = acknowledged_so_far.clone();
            thread::spawn(move || {
                let mut seen = Seen { acknowledged: 0, unanswered: 0 };
                while running.load(Ordering::Relaxed) {
                    match conn.query_drop("CALL counter_add('hot', 1)") {
                        Ok(()) => {
                            seen.acknowledged += 1;
                            acknowledged_so_far.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(_) => {
                            seen.unanswered += 1;
                            break;
                        }
                    }
                }
                seen
            })
        })
        .collect();
    let resizing = {
        let mut conn = connect(&server, "app");
        let running = running.clone();
        let resizes_so_far = resizes_so_far.clone();
        thread::spawn(move || {
            let mut resizes = 0_u32;
            while running.load(Ordering::Relaxed) {
                let slots = if resizes.is_multiple_of(2) { 16 } else { 8 };
                if conn.exec_drop("CALL counter_resize('resized', ?)", (slots,)).is_err() {
                    break;
                }
                resizes += 1;
                resizes_so_far.fetch_add(1, Ordering::Relaxed);
            }
            resizes
        })
    };

    // The crash comes once the load is under way, however slow the machine:
    // a fixed sleep met only 499 increments on a loaded CI runner.
    let deadline = Instant::now() + Duration::from_secs(60);
    while (acknowledged_so_far.load(Ordering::Relaxed) <= 1000 || resizes_so_far.load(Ordering::Relaxed) <= 2)
        && Instant::now() < deadline
    {
        thread::sleep(Duration::from_millis(20));
    }
    server.kill9();
    running.store(false, Ordering::Relaxed);
    let seen: Vec<Seen> = incrementing.into_iter().map(|client| client.join().unwrap()).collect();
    let resizes = resizing.join().unwrap();
    server.restart();

    let acknowledged: u64 = seen.iter().map(|seen| seen.acknowledged).sum();
    let unanswered: u64 = seen.iter().map(|seen| seen.unanswered).sum();
    assert!(
        acknowledged > 1000 && resizes > 2,
        "the crash met load: {acknowledged} increments, {resizes} resizes"
    );
    let mut conn = connect(&server, "app");
    let total: i64 = conn.query_first("SELECT counter_get('hot')").unwrap().flatten().unwrap();
    assert!(
        (acknowledged..=acknowledged + unanswered).contains(&(total as u64)),
        "{total} counted for {acknowledged} acknowledged increments and {unanswered} unanswered"
    );
    let slots: Vec<u32> = conn
        .query("SELECT counter_id FROM counters WHERE counter_name = 'resized' ORDER BY counter_id")
        .unwrap();
    // A growth is one transaction; a shrink moves one slot per transaction,
    // so a crash may leave it between 16 and 8 slots, each step whole.
    let count = slots.len() as u32;
    assert!(
        (8..=16).contains(&count) && slots == (1..=count).collect::<Vec<_>>(),
        "a step of a resize was applied by half: slots {slots:?}"
    );
    let resized: Option<i64> = conn.query_first("SELECT counter_get('resized')").unwrap().flatten();
    assert_eq!(resized, Some(1000), "resizes keep the total through a crash");
}

/// Every row of a database's `counters` table.
fn rows(conn: &mut Conn, database: &str) -> Vec<(String, u32, Option<String>, String, i64)> {
    conn.query(format!(
        "SELECT counter_name, counter_id, description, CAST(start_date AS CHAR), counter \
         FROM `{database}`.counters ORDER BY counter_name, counter_id"
    ))
    .unwrap()
}

/// Increments, negative adds, resets, resizes both ways under load, and
/// deletes, through the Rust client on a pool whose sessions log in `format`.
fn mixed_workload(server: &Booted, database: &str, format: &str) {
    let opts = mysql::OptsBuilder::from_opts(Opts::from_url(&server.url(database)).unwrap())
        .init(vec![format!("SET SESSION binlog_format = '{format}'")]);
    let counters = slotted_counters::Counters::builder(mysql::Pool::new(opts).unwrap())
        .retry(slotted_counters::RetryBudget::Attempts(50))
        .build()
        .unwrap();
    counters.setup("views", NewCounter::new("page views").slots(8)).unwrap();
    counters.setup("stock", NewCounter::new("units in store").slots(4).initial_value(10_000)).unwrap();
    counters.setup("daily", NewCounter::new("reset every day").slots(2)).unwrap();
    counters.setup("gone", NewCounter::new("deleted under load").slots(3)).unwrap();
    let clients: Vec<thread::JoinHandle<()>> = (0..8)
        .map(|client| {
            let counters = counters.clone();
            thread::spawn(move || {
                for call in 0..300 {
                    match (client + call) % 4 {
                        0 | 1 => counters.increment("views").unwrap(),
                        2 => counters.add("stock", -3).unwrap(),
                        _ => counters.increment("daily").unwrap(),
                    }
                }
            })
        })
        .collect();
    let mut admin = connect(server, database);
    admin.query_drop(format!("SET SESSION binlog_format = '{format}'")).unwrap();
    for slots in [32, 4, 16, 2, 8] {
        admin.exec_drop("CALL counter_resize(?, ?)", ("views", slots)).unwrap();
        admin.exec_drop("CALL counter_resize(?, ?)", ("stock", slots)).unwrap();
        admin.query_drop("CALL counter_reset('daily', 0, TRUE)").unwrap();
        thread::sleep(Duration::from_millis(20));
    }
    admin.query_drop("CALL counter_delete('gone')").unwrap();
    for client in clients {
        client.join().unwrap();
    }
    assert_eq!(counters.get("views").unwrap(), Some(1200), "{format}: the primary is exact");
}

/// Every trigger path of the features, through the Rust client on pools
/// whose sessions log in `format`: batches, write ids (and their
/// forgetting), tracked and limited periods with a late write and expiry,
/// a bounded counter taken to its floor and restocked, and resizes of a
/// tracked, bounded counter.
fn feature_workload(server: &Booted, database: &str, format: &str) {
    let pool = |write_ids: bool| {
        let opts = mysql::OptsBuilder::from_opts(Opts::from_url(&server.url(database)).unwrap())
            .init(vec![format!("SET SESSION binlog_format = '{format}'")]);
        let builder = slotted_counters::Counters::builder(mysql::Pool::new(opts).unwrap())
            .retry(slotted_counters::RetryBudget::Attempts(50));
        let builder = if write_ids { builder.write_ids() } else { builder };
        builder.build().unwrap()
    };
    let counters = pool(false);
    let once = pool(true);
    for (name, slots, initial) in [("tracked", 8, 0), ("scarce", 4, 50), ("batched", 4, 0), ("ids", 4, 0)] {
        counters.setup(name, NewCounter::new("features").slots(slots).initial_value(initial)).unwrap();
    }
    counters.track("tracked", Period::Hour, Keep::All).unwrap();
    counters.track("tracked", Period::Day, Keep::Last(2)).unwrap();
    counters.limit("tracked", Period::Day, Some(1_000_000)).unwrap();
    counters.track("scarce", Period::Minute, Keep::Last(3)).unwrap();
    counters.bound("scarce", 0..).unwrap();
    // 80 takes of a stock of 50: some are refused at the floor.
    let (taken, refused) = (AtomicU64::new(0), AtomicU64::new(0));
    thread::scope(|scope| {
        for client in 0..8_u64 {
            let (counters, once, taken, refused) = (&counters, &once, &taken, &refused);
            scope.spawn(move || {
                for call in 0..40 {
                    match (client + call) % 4 {
                        0 => counters.increment("tracked").unwrap(),
                        1 => match counters.add("scarce", -1) {
                            Ok(()) => {
                                taken.fetch_add(1, Ordering::Relaxed);
                            }
                            Err(CounterError::PastBound { .. }) => {
                                refused.fetch_add(1, Ordering::Relaxed);
                            }
                            Err(error) => panic!("{format}: {error}"),
                        },
                        2 => counters.add_many([("batched", 2), ("tracked", 1)]).unwrap(),
                        _ => {
                            once.increment("ids").unwrap();
                            once.add_many([("ids", 1), ("batched", 1)]).unwrap();
                        }
                    }
                }
            });
        }
        let mut admin = connect(server, database);
        admin.query_drop(format!("SET SESSION binlog_format = '{format}'")).unwrap();
        // A resize beside takes at the floor, which lock every slot, may
        // deadlock: sent again, as the docs tell callers to.
        let mut call = |sql: String| {
            for attempt in 1.. {
                match admin.query_drop(&sql) {
                    Err(mysql::Error::MySqlError(error)) if error.code == 1213 && attempt < 50 => continue,
                    done => return done.unwrap(),
                }
            }
        };
        for slots in [16, 3, 8] {
            call(format!("CALL counter_resize('tracked', {slots})"));
            call(format!("CALL counter_resize('scarce', {slots})"));
            call("CALL counter_compact('batched')".to_owned());
            thread::sleep(Duration::from_millis(20));
        }
    });
    counters.add("scarce", 40).unwrap();
    counters.add_at("tracked", 5, SystemTime::now() - Duration::from_secs(3 * 86_400)).unwrap();
    counters.expire_periods().unwrap();
    once.forget_writes(Duration::from_secs(3_600)).unwrap();
    counters.reset("batched", 7, slotted_counters::StartDate::Keep).unwrap();
    assert!(refused.into_inner() > 0, "{format}: the stock ran out");
    assert_eq!(counters.get("scarce").unwrap(), Some(50 + 40 - i64::try_from(taken.into_inner()).unwrap()));
    assert_eq!(counters.get("ids").unwrap(), Some(160), "{format}: every write id counted once");
}

/// Every row of every table of the package in `database`, table by table,
/// each row as the hex of its columns (write ids are bytes): what a
/// replica must hold as the primary does.
fn package_rows(conn: &mut Conn, database: &str) -> Vec<(String, Vec<String>)> {
    package::tables_in_package(&PackageOptions::default())
        .into_iter()
        .map(|table| {
            let columns: Vec<String> = conn
                .exec(
                    "SELECT CONCAT('COALESCE(HEX(`', COLUMN_NAME, '`), ''NULL'')') \
                     FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? \
                     ORDER BY ORDINAL_POSITION",
                    (database, &table),
                )
                .unwrap();
            let rows: Vec<String> = conn
                .query(format!(
                    "SELECT CONCAT_WS('|', {}) AS `row` FROM `{database}`.`{table}` ORDER BY `row`",
                    columns.join(", ")
                ))
                .unwrap();
            (table, rows)
        })
        .collect()
}

/// How a server is made a GTID replica, and waits for its primary.
struct Replication {
    /// Settings of both servers.
    gtid_config: &'static str,
    /// Settings of the replica beyond those.
    replica_config: &'static str,
    /// Points the replica at the primary's port, `{port}`.
    follow: &'static str,
    /// The primary's GTID position.
    position: &'static str,
    /// Waits on the replica up to 120 s for the position `?`; 0 when reached.
    wait: &'static str,
}

fn replication(flavor: Flavor) -> Replication {
    match flavor {
        Flavor::MariaDb => Replication {
            gtid_config: "",
            replica_config: "server-id=2\nslave_parallel_threads=4\nread_only=ON",
            follow: "CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = {port}, \
                     MASTER_USER = 'replicator', MASTER_PASSWORD = 'replicator-password', \
                     MASTER_USE_GTID = slave_pos",
            position: "SELECT @@GLOBAL.gtid_binlog_pos",
            wait: "SELECT MASTER_GTID_WAIT(?, 120)",
        },
        // GTIDs are off by default; the replication account authenticates
        // with caching_sha2_password, which needs the server's key or TLS.
        Flavor::MySql => Replication {
            gtid_config: "gtid_mode=ON\nenforce_gtid_consistency=ON",
            replica_config: "server-id=2\nreplica_parallel_workers=4\nread_only=ON",
            follow: "CHANGE REPLICATION SOURCE TO SOURCE_HOST = '127.0.0.1', SOURCE_PORT = {port}, \
                     SOURCE_USER = 'replicator', SOURCE_PASSWORD = 'replicator-password', \
                     SOURCE_AUTO_POSITION = 1, GET_SOURCE_PUBLIC_KEY = 1",
            position: "SELECT @@GLOBAL.gtid_executed",
            wait: "SELECT WAIT_FOR_EXECUTED_GTID_SET(?, 120)",
        },
    }
}

fn a_replica_stays_row_for_row_identical_under_statement_and_row_logging() {
    let replication = replication(flavor());
    let primary = booted_with_package(replication.gtid_config, "statement_logged");
    let replica = boot(&format!("{}\n{}", replication.gtid_config, replication.replica_config));
    run_each(
        &mut primary.root_conn(),
        &[
            "SET SESSION sql_log_bin = 0",
            "CREATE USER 'replicator'@'127.0.0.1' IDENTIFIED BY 'replicator-password'",
            "GRANT REPLICATION SLAVE ON *.* TO 'replicator'@'127.0.0.1'",
        ],
    )
    .unwrap();
    let mut replica_root = replica.root_conn();
    let follow = replication.follow.replace("{port}", &primary.port.to_string());
    run_each(&mut replica_root, &[&follow, "START REPLICA"]).unwrap();

    primary.root_conn().query_drop("CREATE DATABASE row_logged").unwrap();
    let script = render::setup_sql(&PackageOptions::default()).unwrap();
    script::run(&mut connect(&primary, "row_logged"), &script).unwrap();
    mixed_workload(&primary, "statement_logged", "STATEMENT");
    mixed_workload(&primary, "row_logged", "ROW");
    feature_workload(&primary, "statement_logged", "STATEMENT");
    feature_workload(&primary, "row_logged", "ROW");

    let mut primary_root = primary.root_conn();
    let position: String = primary_root.query_first(replication.position).unwrap().unwrap();
    let waited: Option<i32> = replica_root.exec_first(replication.wait, (&position,)).unwrap().flatten();
    let status: Option<mysql::Row> = replica_root.query_first("SHOW REPLICA STATUS").unwrap();
    let last_error: String = status.and_then(|row| row.get("Last_SQL_Error")).unwrap_or_default();
    assert_eq!(waited, Some(0), "the replica did not reach {position}: {last_error}");
    for database in ["statement_logged", "row_logged"] {
        let on_primary = package_rows(&mut primary_root, database);
        for (table, rows) in &on_primary {
            assert!(!rows.is_empty(), "{database}: the workload wrote no row of {table}");
        }
        for ((table, on_primary), (_, on_replica)) in
            on_primary.iter().zip(package_rows(&mut replica_root, database))
        {
            assert_eq!(&on_replica, on_primary, "{database}: the replica's {table} differs");
        }
    }

    // A reconcile pointed at the replica, from an account that could write
    // there despite read_only, refuses to correct, and a dry run reads.
    let url = replica.url("row_logged");
    let source = "SELECT counter_name, total + 1 FROM counter_totals";
    let refused = slotted_counters(&["reconcile", "--url", &url, "--query", source]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(stderr(&refused).contains("this server is read-only (a replica?)"), "{}", stderr(&refused));
    let dry = succeeded(slotted_counters(&["reconcile", "--url", &url, "--query", source, "--dry-run"]));
    assert!(stdout(&dry).contains("not added (dry run)"), "{}", stdout(&dry));
    assert_eq!(rows(&mut replica_root, "row_logged"), rows(&mut primary_root, "row_logged"));
}

/// Each counter's total through the view, by name.
fn totals(conn: &mut Conn) -> Vec<(String, i64)> {
    conn.query("SELECT counter_name, total FROM counter_totals ORDER BY counter_name").unwrap()
}

fn a_dump_with_routines_restores_into_a_fresh_server_and_keeps_working() {
    let source = boot("");
    source.root_conn().query_drop("CREATE DATABASE app").unwrap();
    succeeded(slotted_counters(&["install", "--url", &source.url("app")]));
    let mut conn = connect(&source, "app");
    conn.query_drop("CALL counter_setup('downloads', 'release downloads', 8, 1000)").unwrap();
    conn.query_drop("CALL counter_setup('likes', 'café ☕', 3, NULL)").unwrap();
    for _ in 0..50 {
        conn.query_drop("CALL counter_increment('downloads')").unwrap();
        conn.query_drop("CALL counter_add('likes', -2)").unwrap();
    }
    let dump =
        source.client(Program::Dump).args(["--routines", "--single-transaction", "app"]).output().unwrap();
    assert!(dump.status.success(), "the dump failed: {}", String::from_utf8_lossy(&dump.stderr));

    let fresh = boot("");
    fresh.root_conn().query_drop("CREATE DATABASE restored").unwrap();
    let mut restore =
        fresh.client(Program::Client).arg("--database=restored").stdin(Stdio::piped()).spawn().unwrap();
    restore.stdin.take().unwrap().write_all(&dump.stdout).unwrap();
    assert!(restore.wait().unwrap().success(), "the restore failed");

    let mut restored = connect(&fresh, "restored");
    assert_eq!(totals(&mut restored), totals(&mut conn));
    assert_eq!(totals(&mut restored), [("downloads".to_owned(), 1050), ("likes".to_owned(), -100)]);
    let routines = "SELECT ROUTINE_NAME, ROUTINE_COMMENT FROM information_schema.ROUTINES \
                    WHERE ROUTINE_SCHEMA = DATABASE() ORDER BY 1";
    let listed: Vec<(String, String)> = restored.query(routines).unwrap();
    assert_eq!(listed, conn.query::<(String, String), _>(routines).unwrap());
    let report = stdout(&succeeded(slotted_counters(&["status", "--url", &fresh.url("restored")])));
    assert_eq!(report.matches("current").count(), support::ROUTINES.len(), "{report}");
    restored.query_drop("CALL counter_increment('downloads')").unwrap();
    assert_eq!(totals(&mut restored)[0].1, 1051, "the restored routines count");
}
