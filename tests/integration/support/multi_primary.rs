//! What the Galera and Group Replication tests share: a cluster's nodes,
//! connections with causal reads, the package installed on the first node,
//! clients and their load from every node, the reset and resize rounds run
//! under load, the slots a node owns, and `bench` and `advise` over every
//! node. Each cluster says how its reads are made causal and how it counts
//! certification conflicts.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use mysql::prelude::Queryable;
use mysql::{Conn, Opts, Pool};
use serde_json::Value;
use slotted_counters::{
    Bound, CounterError, Counters, Keep, NewCounter, PackageOptions, Period, RetryBudget, StartDate,
};
use slotted_counters_cli::{render, script};
use slotted_counters_core::package;

use super::server::Booted;
use super::{BACKGROUND_PAUSE, StopOnDrop, random_write_id_hex, slotted_counters, stderr};

/// A multi-primary cluster the tests boot: Galera's nodes, or Group
/// Replication's members.
pub trait MultiPrimary: Sync {
    /// The statement that makes a session's reads wait for every write the
    /// cluster committed before them.
    const CAUSAL_READS: &'static str;

    /// The nodes, node 1 first.
    fn nodes(&self) -> Vec<&Booted>;

    /// The certification conflicts each node has counted so far.
    fn conflicts(&self) -> Vec<u64>;

    /// The conflicts between two readings of [`MultiPrimary::conflicts`].
    fn conflicts_between(before: &[u64], after: &[u64]) -> u64;
}

/// A scenario's name, and the scenario.
pub type Scenario<C> = (&'static str, fn(&mut C));

/// Names each listed scenario for [`in_turn`]: `scenarios![a, b]` is
/// `[("a", a), ("b", b)]`.
macro_rules! scenarios {
    ($($scenario:ident),* $(,)?) => {
        [$((stringify!($scenario), $scenario as fn(&mut _))),*]
    };
}
pub(crate) use scenarios;

/// Runs every scenario on `cluster`, one after another, each after
/// `prepare`, and fails naming those that failed.
///
/// A cluster takes one scenario at a time (they count its certification
/// conflicts, to which another's load would add, and some stop a node), so
/// its scenarios are one test: as many tests, they parked every test thread
/// that picked one on the cluster's lock while the others waited for cores.
/// Each scenario's outcome and time go to the test's output, its panic
/// message beside it.
pub fn in_turn<C>(cluster: &mut C, prepare: fn(&mut C), scenarios: &[Scenario<C>]) {
    let mut failed = Vec::new();
    for &(name, scenario) in scenarios {
        let started = Instant::now();
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
            prepare(cluster);
            scenario(cluster);
        }));
        let verdict = if outcome.is_ok() { "ok" } else { "FAILED" };
        eprintln!("scenario {name} ... {verdict} in {:.1?}", started.elapsed());
        if outcome.is_err() {
            failed.push(name);
        }
    }
    assert!(failed.is_empty(), "{} of {} scenarios failed: {failed:?}", failed.len(), scenarios.len());
}

pub fn conn(node: &Booted, database: &str) -> Conn {
    Conn::new(Opts::from_url(&node.url(database)).unwrap()).unwrap()
}

/// A connection to `node` whose reads are causal.
pub fn causal_conn<C: MultiPrimary>(node: &Booted, database: &str) -> Conn {
    let mut conn = conn(node, database);
    conn.query_drop(C::CAUSAL_READS).unwrap();
    conn
}

/// Waits until every node of `cluster` has applied what the cluster
/// committed before: a causal read on each. Writers start on other nodes
/// only after it, since a write on a node still applying node 1's setup
/// fails (1146 for a table, 9001 for a counter: met in CI, once the
/// clusters' scenarios ran beside the other tests).
pub fn each_node_has_applied<C: MultiPrimary>(cluster: &C, database: &str) {
    for node in cluster.nodes() {
        let _: Option<i64> =
            causal_conn::<C>(node, database).query_first("SELECT COUNT(*) FROM counters").unwrap();
    }
}

/// Creates `database` on node 1 with the package `options` describe.
pub fn install(cluster: &impl MultiPrimary, database: &str, options: &PackageOptions) {
    let node = cluster.nodes()[0];
    node.root_conn().query_drop(format!("CREATE DATABASE `{database}`")).unwrap();
    script::run(&mut conn(node, database), &render::setup_sql(options).unwrap()).unwrap();
}

/// A client on `node`'s database that retries lost certifications for as
/// long as a busy cluster may need.
pub fn client(node: &Booted, database: &str) -> Counters {
    let pool = Pool::new(Opts::from_url(&node.url(database)).unwrap()).unwrap();
    Counters::builder(pool).retry(RetryBudget::Time(Duration::from_secs(60))).build().unwrap()
}

/// Runs `load(node)` on `clients` threads per node of `cluster`, once
/// every node has applied what `database` holds, and returns the
/// certification conflicts they caused.
pub fn load_on_every_node<C: MultiPrimary>(
    cluster: &C,
    database: &str,
    clients: usize,
    load: impl Fn(&Booted) + Sync,
) -> u64 {
    each_node_has_applied(cluster, database);
    let before = cluster.conflicts();
    thread::scope(|scope| {
        for node in cluster.nodes() {
            for _ in 0..clients {
                let load = &load;
                scope.spawn(move || load(node));
            }
        }
    });
    C::conflicts_between(&before, &cluster.conflicts())
}

/// `per_client` increments of `name` through [`client`]s, `clients` on
/// every node; returns the certification conflicts they caused.
pub fn increment_from_every_node(
    cluster: &impl MultiPrimary,
    database: &str,
    name: &str,
    clients: usize,
    per_client: usize,
) -> u64 {
    load_on_every_node(cluster, database, clients, |node| {
        let counters = client(node, database);
        for _ in 0..per_client {
            counters.increment(name).unwrap();
        }
    })
}

/// Every node's causal read of counter `name`.
pub fn totals_on_every_node<C: MultiPrimary>(cluster: &C, database: &str, name: &str) -> Vec<Option<i64>> {
    cluster
        .nodes()
        .into_iter()
        .map(|node| {
            causal_conn::<C>(node, database).exec_first("SELECT counter_get(?)", (name,)).unwrap().flatten()
        })
        .collect()
}

/// Runs `work` while each of `clients` increments `name`,
/// [`BACKGROUND_PAUSE`] apart; returns the increments they made.
fn under_load(clients: Vec<Counters>, name: &'static str, work: impl FnOnce()) -> i64 {
    let running = AtomicBool::new(true);
    thread::scope(|scope| {
        let stop = StopOnDrop(&running);
        let clients: Vec<_> = clients
            .into_iter()
            .map(|counters| {
                let running = &running;
                scope.spawn(move || {
                    let mut made = 0;
                    while running.load(Ordering::Relaxed) {
                        counters.increment(name).unwrap();
                        made += 1;
                        thread::sleep(BACKGROUND_PAUSE);
                    }
                    made
                })
            })
            .collect();
        work();
        drop(stop);
        clients.into_iter().map(|client| client.join().unwrap()).sum()
    })
}

/// Clients on the second and third nodes (two each) of `database`.
fn clients_on_nodes_2_and_3(cluster: &impl MultiPrimary, database: &str) -> Vec<Counters> {
    each_node_has_applied(cluster, database);
    let nodes = cluster.nodes();
    [1, 1, 2, 2].into_iter().map(|node| client(nodes[node], database)).collect()
}

/// Checks that a reset erases every increment acknowledged on another node:
/// 300 rounds of an increment of counter `reset` on node 2, a reset of it
/// on node 1, and a causal read on node 3, while clients on nodes 2 and 3
/// increment another counter. Node 2 applies each reset while
/// it increments: its increment may lose certification and be retried,
/// acknowledged only once it commits.
pub fn check_resets_erase_remote_increments<C: MultiPrimary>(
    cluster: &C,
    database: &str,
    options: &PackageOptions,
) {
    install(cluster, database, options);
    let nodes = cluster.nodes();
    let admin = client(nodes[0], database);
    admin.setup("reset", NewCounter::new("reset after remote increments").slots(8)).unwrap();
    admin.setup("busy", NewCounter::new("background load").slots(16)).unwrap();
    let remote = client(nodes[1], database);
    let mut reader = causal_conn::<C>(nodes[2], database);

    let mut survivors = Vec::new();
    under_load(clients_on_nodes_2_and_3(cluster, database), "busy", || {
        for round in 0..300 {
            remote.increment("reset").unwrap();
            admin.reset("reset", 0, StartDate::Keep).unwrap();
            let value: Option<i64> = reader.query_first("SELECT counter_get('reset')").unwrap().flatten();
            if value != Some(0) {
                survivors.push((round, value));
            }
        }
    });
    assert!(survivors.is_empty(), "increments outlived the reset after them: {survivors:?}");
}

/// Checks that counting per period on every node is exact, with no
/// certification conflict: counter `hot` of 64 slots, counted per hour and
/// per day, written from every node by increments, coalesced increments
/// and late writes into one past hour; every node reads each period's
/// buckets summing to the total, and the past hour holding the late writes.
/// Returns the conflicts the load caused, which the caller expects none of
/// for node slots.
pub fn check_periods_count_exactly_on_every_node<C: MultiPrimary>(
    cluster: &C,
    database: &str,
    options: &PackageOptions,
) -> u64 {
    install(cluster, database, options);
    let admin = client(cluster.nodes()[0], database);
    admin.setup("hot", NewCounter::new("counted per period").slots(64)).unwrap();
    for period in [Period::Hour, Period::Day] {
        admin.track("hot", period, Keep::All).unwrap();
    }
    let late = SystemTime::now() - Duration::from_secs(5 * 3_600);
    let (clients, calls) = (3, 60);
    let conflicts = load_on_every_node(cluster, database, clients, |node| {
        let counters = client(node, database);
        let coalescing = counters.coalescing();
        for call in 0..calls {
            match call % 3 {
                0 => counters.increment("hot").unwrap(),
                1 => coalescing.increment("hot").unwrap(),
                _ => counters.add_at("hot", 2, late).unwrap(),
            }
        }
    });
    let per_node = (clients * calls / 3) as i64;
    let total = 3 * per_node * (1 + 1 + 2);
    for node in cluster.nodes() {
        let mut reader = causal_conn::<C>(node, database);
        let sums: Vec<(String, i64)> = reader
            .query(
                "SELECT CAST(period AS CHAR), CAST(SUM(counter) AS SIGNED) FROM counter_buckets \
                 WHERE counter_name = 'hot' GROUP BY period ORDER BY period",
            )
            .unwrap();
        assert_eq!(sums, [("hour".to_owned(), total), ("day".to_owned(), total)], "node {}", node.port);
        let late_hour: Option<i64> = reader
            .exec_first(
                "SELECT counter_get_period('hot', 'hour', TIMESTAMP'1970-01-01 00:00:00' + INTERVAL ? SECOND)",
                (late.duration_since(UNIX_EPOCH).unwrap().as_secs(),),
            )
            .unwrap()
            .flatten();
        assert_eq!(late_hour, Some(3 * per_node * 2), "node {}: the late writes' hour", node.port);
    }
    conflicts
}

/// Checks a sale of a bounded counter from every node: 600 units over 64
/// slots, 2 clients per node taking 1 at a time until refused at the floor,
/// one making calls and one through a coalescing handle. Exactly 600 are
/// sold, every node reads 0, and every slot is within its shares. Returns
/// the certification conflicts the sale met: what a bound costs on a
/// cluster, since a take whose slot runs short locks, and may rewrite,
/// every slot, other nodes' too (the clients retry them).
pub fn check_bounded_sale_sells_exactly_from_every_node<C: MultiPrimary>(
    cluster: &C,
    database: &str,
    options: &PackageOptions,
) -> u64 {
    install(cluster, database, options);
    let admin = client(cluster.nodes()[0], database);
    admin.setup("stock", NewCounter::new("units in store").slots(64).initial_value(600)).unwrap();
    admin.bound("stock", 0..).unwrap();
    let sold = AtomicU64::new(0);
    let handle = AtomicBool::new(false);
    let conflicts = load_on_every_node(cluster, database, 2, |node| {
        let counters = client(node, database);
        let coalesced = handle.fetch_xor(true, Ordering::SeqCst);
        let coalescing = counters.coalescing();
        loop {
            let taken = if coalesced { coalescing.add("stock", -1) } else { counters.add("stock", -1) };
            match taken {
                Ok(()) => drop(sold.fetch_add(1, Ordering::SeqCst)),
                Err(CounterError::PastBound { bound: Bound::Floor, .. }) => break,
                Err(error) => panic!("node {}: a take failed otherwise: {error}", node.port),
            }
        }
    });
    assert_eq!(sold.into_inner(), 600);
    assert_eq!(totals_on_every_node(cluster, database, "stock"), [Some(0); 3]);
    for node in cluster.nodes() {
        let slots: Vec<(i64, Option<i64>)> = causal_conn::<C>(node, database)
            .query("SELECT counter, lowest FROM counters WHERE counter_name = 'stock'")
            .unwrap();
        assert!(
            slots.iter().all(|&(value, lowest)| lowest.is_some_and(|lowest| lowest <= value)),
            "{slots:?}"
        );
        assert_eq!(slots.iter().map(|slot| slot.1.unwrap_or_default()).sum::<i64>(), 0, "the floor's shares");
    }
    conflicts
}

/// Checks that a quota of 600 a month, taken by increments from every
/// node (half of the clients through a coalescing handle) until each is
/// refused for the month, lets exactly 600 through: the month's bucket and
/// the total read 600 on every node. The quota's lock, its bucket's end
/// row, is written from every node, so its certification conflicts are
/// the quota's cost, each retried by the client: returns how many.
pub fn check_quota_lets_exactly_its_limit_through_from_every_node<C: MultiPrimary>(
    cluster: &C,
    database: &str,
    options: &PackageOptions,
) -> u64 {
    install(cluster, database, options);
    let admin = client(cluster.nodes()[0], database);
    admin.setup("api", NewCounter::new("calls this month").slots(64)).unwrap();
    admin.limit("api", Period::Month, Some(600)).unwrap();
    let taken = AtomicU64::new(0);
    let handle = AtomicBool::new(false);
    let conflicts = load_on_every_node(cluster, database, 2, |node| {
        let counters = client(node, database);
        let coalesced = handle.fetch_xor(true, Ordering::SeqCst);
        let coalescing = counters.coalescing();
        loop {
            let called = if coalesced { coalescing.increment("api") } else { counters.increment("api") };
            match called {
                Ok(()) => drop(taken.fetch_add(1, Ordering::SeqCst)),
                Err(CounterError::PastLimit { period: Period::Month, limit: 600, .. }) => break,
                Err(error) => panic!("node {}: a call failed otherwise: {error}", node.port),
            }
        }
    });
    assert_eq!(taken.into_inner(), 600);
    assert_eq!(totals_on_every_node(cluster, database, "api"), [Some(600); 3]);
    for node in cluster.nodes() {
        let month: Option<i64> = causal_conn::<C>(node, database)
            .query_first("SELECT counter_get_period('api', 'month', UTC_TIMESTAMP())")
            .unwrap()
            .flatten();
        assert_eq!(month, Some(600), "node {}", node.port);
    }
    conflicts
}

/// How long a resize may take to win under load. A shrink moves
/// one slot per transaction, two rows each, so it rarely meets another
/// node's increment, and on Group Replication each of those transactions
/// first waits until the member has applied what the group certified
/// before it; when one loses certification all the same, calling it again
/// goes on from the slots it left. Started on a member behind the group,
/// without that wait, a shrink to 8 slots lost all of 9,969 calls in 30 s
/// during a full suite run.
const RESIZE_WITHIN: Duration = Duration::from_secs(15);

/// Checks that resizes on node 1 under increments from nodes 2 and 3 keep
/// the total exact and leave the slots the last resize asked for. Resizes
/// counter `resized` to 32, 8, 24, 3 and then 12 slots while the other
/// nodes increment it; a resize that loses certification
/// (Galera 1213, Group Replication 3101) is called again, and each wins
/// within [`RESIZE_WITHIN`].
pub fn check_resizes_under_remote_load_stay_exact<C: MultiPrimary>(
    cluster: &C,
    database: &str,
    options: &PackageOptions,
) {
    install(cluster, database, options);
    let nodes = cluster.nodes();
    client(nodes[0], database)
        .setup("resized", NewCounter::new("resized under load").slots(16).initial_value(1000))
        .unwrap();
    let mut admin = conn(nodes[0], database);

    let mut took = Vec::new();
    let made = under_load(clients_on_nodes_2_and_3(cluster, database), "resized", || {
        for slots in [32, 8, 24, 3, 12] {
            let started = Instant::now();
            let mut tries = 1;
            while let Err(error) = admin.exec_drop("CALL counter_resize('resized', ?)", (slots,)) {
                assert!(
                    started.elapsed() < RESIZE_WITHIN,
                    "resize to {slots} kept failing, {tries} tries in {:?}: {error}",
                    started.elapsed()
                );
                after_a_lost_call(&mut admin);
                tries += 1;
            }
            took.push((slots, tries, started.elapsed()));
            thread::sleep(Duration::from_millis(100));
        }
    });
    println!("resizes (slots, tries, time) under increments: {took:?}");

    assert_eq!(totals_on_every_node(cluster, database, "resized"), [Some(1000 + made); 3]);
    let slots: Vec<u32> = causal_conn::<C>(nodes[1], database)
        .query("SELECT counter_id FROM counters WHERE counter_name = 'resized' ORDER BY counter_id")
        .unwrap();
    assert_eq!(slots, (1..=12).collect::<Vec<_>>());
}

/// What docs/clusters.md tells every application to send after a `CALL`
/// that failed: a statement that is not a `CALL`. On Galera a session
/// whose `CALL` was rolled back for a remote write can answer every later
/// `CALL` at once with 1213, for a minute and more, until it runs one.
fn after_a_lost_call(conn: &mut Conn) {
    conn.query_drop("DO 0").unwrap();
}

/// Runs `bench` of dynamic and node slots with 6 clients spread over every
/// url in `urls`, then `advise` over them, and checks that both succeed and
/// that their tables name conflicts (and `advise` a recommendation); the
/// bench's JSON report, whose conflict fields differ by cluster, is left to
/// the caller.
pub fn bench_and_advise_over(urls: &[String]) -> Value {
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("bench.json");
    let mut args = vec!["bench", "--variant", "dynamic,node", "--slots", "8", "--clients", "6"];
    args.extend(["--hold-ms", "0", "--iterations", "40", "--json", json.to_str().unwrap()]);
    for url in urls {
        args.extend(["--url", url]);
    }
    let output = slotted_counters(&args);
    assert!(output.status.success(), "{}", stderr(&output));
    let table = String::from_utf8_lossy(&output.stdout);
    eprintln!("{table}");
    assert!(table.lines().nth(1).unwrap().contains("conflicts"), "after the floor: {table}");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();

    let mut args = vec!["advise", "--clients", "6", "--max-slots", "6", "--duration", "0.5"];
    for url in urls {
        args.extend(["--url", url]);
    }
    let output = slotted_counters(&args);
    assert!(output.status.success(), "{}", stderr(&output));
    let table = String::from_utf8_lossy(&output.stdout);
    assert!(
        table.lines().next().unwrap().ends_with("conflicts") && table.contains("recommended:"),
        "{table}"
    );
    report
}

/// The slots a node at `position` of a `size`-node cluster owns among
/// `slots`: those congruent to its position, or when it has none, one that
/// it shares with as few nodes as the count allows.
pub fn owned_slots(position: u32, size: u32, slots: u32) -> Vec<u32> {
    if position <= slots {
        (position..=slots).step_by(size as usize).collect()
    } else {
        vec![(position - 1) % slots + 1]
    }
}

/// The slots whose count changed between two reads of a counter's
/// `(slot, count)` rows.
pub fn slots_hit(before: &[(u32, i64)], after: &[(u32, i64)]) -> Vec<u32> {
    before.iter().zip(after).filter(|(old, new)| old != new).map(|(_, (slot, _))| *slot).collect()
}

/// The errors a write from another node met during the re-installs, each
/// sent again: the re-install's own (a routine or a trigger missing, not
/// granted again yet, a statement to prepare again), lost certifications
/// (Galera 1213, Group Replication 3101, or 1180 with error 149 where the
/// tracked counter's quota row is written from two members), which roll
/// the write back, and on
/// Galera the 1317 of a write that the re-install's DDL, applied on the
/// writer's node in total order, aborted (rolled back too: were it not,
/// its resend would count twice and the totals would show it), and the
/// 1064 of a trigger the node was replacing as the write loaded it.
#[derive(Default)]
pub struct ReInstallGaps {
    /// What the writers whose sessions speak English met, and those that
    /// speak German.
    pub english: Gaps,
    pub german: Gaps,
}

/// How often writers met each kind of error they send a write again after.
#[derive(Default, Debug)]
pub struct Gaps {
    pub missing_trigger: AtomicU64,
    pub interrupted: AtomicU64,
    pub trigger_being_replaced: AtomicU64,
    /// Group Replication's 1180 with error 149.
    pub commit_deadlock: AtomicU64,
    pub other: AtomicU64,
}

impl ReInstallGaps {
    /// Counts `error`, met by a writer that speaks German or not, when it
    /// is one to send the write again after, as the client decides it: by
    /// its numbers alone.
    fn met(&self, error: &mysql::Error, german: bool) -> bool {
        let mysql::Error::MySqlError(error) = error else { return false };
        let gaps = if german { &self.german } else { &self.english };
        let kind = match error.code {
            code if package::is_missing_trigger(code, &error.message) => &gaps.missing_trigger,
            code if package::is_trigger_being_replaced(code) => &gaps.trigger_being_replaced,
            code if package::is_commit_deadlock(code, &error.message) => &gaps.commit_deadlock,
            1317 => &gaps.interrupted,
            1213 | 1305 | 1370 | 1615 | 3101 => &gaps.other,
            _ => return false,
        };
        kind.fetch_add(1, Ordering::Relaxed);
        true
    }
}

/// Checks that re-installing the package on node 1, ten times, loses and
/// doubles nothing that nodes 2 and 3 write meanwhile, half in sessions
/// that speak German, through the paths a trigger applies (writes with ids, batches, a tracked counter's writes, a
/// bounded counter's spreads). The tracked counter has a quota, and its
/// writes are late (two minutes ago): so its trigger counts each through
/// `counter_add_within_limit`, which a re-install replaces meanwhile (on
/// Galera such writes failed with 1146 for `counter_periods` while only
/// that routine named the table). A node applies the DDL it receives one
/// statement at a time, as the first node ran it: on Group Replication a
/// write on another member may run between a trigger's DROP and its CREATE,
/// and is refused by the package's check and sent again. Returns what the
/// writers met.
pub fn check_re_installs_under_remote_writes_lose_nothing<C: MultiPrimary>(
    cluster: &C,
    database: &str,
    options: &PackageOptions,
) -> ReInstallGaps {
    install(cluster, database, options);
    let nodes = cluster.nodes();
    let mut admin = conn(nodes[0], database);
    for name in ["ids", "batch", "tracked", "bounded"] {
        admin.exec_drop("CALL counter_setup(?, 'd', 8, NULL)", (name,)).unwrap();
    }
    admin.query_drop("CALL counter_track('tracked', 'hour', NULL)").unwrap();
    admin.query_drop("CALL counter_limit('tracked', 'hour', 1000000000000)").unwrap();
    admin.query_drop("CALL counter_add('bounded', 100000)").unwrap();
    admin.query_drop("CALL counter_bound('bounded', 0, NULL)").unwrap();
    each_node_has_applied(cluster, database);

    let writes: [(&str, [i64; 4]); 4] = [
        ("CALL counter_add_once(UNHEX(?), 'ids', 1)", [1, 0, 0, 0]),
        (r#"CALL counter_add_many('{"batch": 2, "tracked": 1}')"#, [0, 2, 1, 0]),
        ("CALL counter_add_at('tracked', 3, UTC_TIMESTAMP(6) - INTERVAL 2 MINUTE)", [0, 0, 3, 0]),
        ("CALL counter_add('bounded', -1)", [0, 0, 0, -1]),
    ];
    let running = AtomicBool::new(true);
    let gaps = ReInstallGaps::default();
    let setup_sql = render::setup_sql(options).unwrap();
    let acknowledged = thread::scope(|scope| {
        let stop = StopOnDrop(&running);
        let writers: Vec<_> = [1, 1, 2, 2]
            .into_iter()
            .enumerate()
            .map(|(writer, node)| {
                let (running, gaps, writes, node) = (&running, &gaps, &writes, nodes[node]);
                scope.spawn(move || {
                    let mut conn = conn(node, database);
                    // Half the writers read German messages: their
                    // retries are decided by numbers alike.
                    let german = writer % 2 == 1;
                    if german {
                        super::speak_german(&mut conn);
                    }
                    let mut counted = [0_i64; 4];
                    let mut n = writer;
                    while running.load(Ordering::Relaxed) {
                        let (sql, deltas) = writes[n % writes.len()];
                        let params: mysql::Params = if sql.contains('?') {
                            (random_write_id_hex(),).into()
                        } else {
                            mysql::Params::Empty
                        };
                        let deadline = Instant::now() + Duration::from_secs(60);
                        while let Err(error) = conn.exec_drop(sql, params.clone()) {
                            assert!(gaps.met(&error, german) && Instant::now() < deadline, "{sql}: {error}");
                            after_a_lost_call(&mut conn);
                            thread::sleep(Duration::from_millis(2));
                        }
                        counted.iter_mut().zip(deltas).for_each(|(counted, delta)| *counted += delta);
                        n += 1;
                        thread::sleep(BACKGROUND_PAUSE);
                    }
                    counted
                })
            })
            .collect();
        for _ in 0..10 {
            script::run(&mut admin, &setup_sql).unwrap();
        }
        drop(stop);
        writers.into_iter().fold([0_i64; 4], |mut sum, writer| {
            sum.iter_mut().zip(writer.join().unwrap()).for_each(|(sum, counted)| *sum += counted);
            sum
        })
    });

    let starts = [0, 0, 0, 100_000];
    for ((name, start), counted) in
        ["ids", "batch", "tracked", "bounded"].into_iter().zip(starts).zip(acknowledged)
    {
        assert_eq!(totals_on_every_node(cluster, database, name), [Some(start + counted); 3], "{name}");
    }
    let buckets: Option<i64> = causal_conn::<C>(nodes[2], database)
        .query_first(
            "SELECT CAST(SUM(counter) AS SIGNED) FROM counter_buckets WHERE counter_name = 'tracked'",
        )
        .unwrap()
        .flatten();
    assert_eq!(buckets, Some(acknowledged[2]), "the hour buckets of 'tracked'");
    gaps
}
