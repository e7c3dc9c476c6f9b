//! The live-test harness and what the test modules share.
//!
//! One real MariaDB and one real MySQL server per `cargo test` run
//! (`server`, `flavor`), each booted by the first test that needs it and
//! stopped when the test binary exits; every live test runs once on each
//! ([`on_each_server!`]), in a database of its own (`database`), dropped
//! when the test ends.

pub mod call_script;
mod database;
pub mod engines;
pub mod fault_proxy;
pub mod flavor;
pub mod galera;
pub mod group_replication;
pub mod multi_primary;
pub mod schema;
pub mod server;
pub mod spider;
pub mod timing;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mysql::PooledConn;
use mysql::prelude::Queryable;
use slotted_counters::PackageOptions;
use slotted_counters_cli::{render, script};
use slotted_counters_core::{Feature, Features};

pub use database::{Account, Database};
pub use flavor::{Flavor, Release};
pub use server::{flavor, release};

/// Declares each listed live test once per server, as `<test>::mariadb`
/// (10.11), `<test>::mariadb_11` (11.8) and `<test>::mysql`: the test's
/// thread knows its server ([`release()`], and what it behaves as:
/// [`flavor()`]), and every [`Database`] it makes is on that server.
macro_rules! on_each_server {
    ($($test:ident),* $(,)?) => {
        $(mod $test {
            #[test]
            fn mariadb() {
                $crate::support::server::on($crate::support::Release::MariaDb, super::$test)
            }
            #[test]
            fn mariadb_11() {
                $crate::support::server::on($crate::support::Release::MariaDb11, super::$test)
            }
            #[test]
            fn mysql() {
                $crate::support::server::on($crate::support::Release::MySql, super::$test)
            }
        })*
    };
}
pub(crate) use on_each_server;

/// Runs a query that reads `information_schema.innodb_trx`.
///
/// The server answers such queries from a cache of its own that it
/// refreshes only when it has not been read for 100 ms: polled faster, it
/// returns stale rows forever. So every read of a server's in this process
/// goes through here, one at a time, at least 150 ms after the one before.
///
/// On MySQL, a read that meets another test's emoji is tried again
/// ([`despite_emoji_elsewhere`]).
pub fn read_innodb_trx<T: mysql::prelude::FromRow>(conn: &mut PooledConn, sql: &str) -> Option<T> {
    /// When a server's cache was last read.
    type LastRead = Arc<Mutex<Option<Instant>>>;
    // Each server's last read, the servers told apart by their versions.
    static LAST_READS: Mutex<BTreeMap<(u16, u16, u16), LastRead>> = Mutex::new(BTreeMap::new());
    let last_read = LAST_READS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .entry(conn.server_version())
        .or_default()
        .clone();
    let mut last_read = last_read.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    despite_emoji_elsewhere(|| {
        if let Some(previous) = *last_read {
            std::thread::sleep(Duration::from_millis(150).saturating_sub(previous.elapsed()));
        }
        let read = conn.query_first(sql);
        *last_read = Some(Instant::now());
        read
    })
    .unwrap_or_else(|error| panic!("{sql}: {error}"))
}

/// Runs `read` of `information_schema`'s lists of sessions or
/// transactions, again while it fails with 3854 for up to 30 s: MySQL 9.7
/// fails such a read ("Cannot convert string ... from utf8mb4 to utf8mb3",
/// their text columns being utf8mb3) while another test's statement holding
/// an emoji runs, which may run for seconds under a load test (400 ms of
/// retries once failed a hand-back in CI).
pub fn despite_emoji_elsewhere<T>(mut read: impl FnMut() -> mysql::Result<T>) -> mysql::Result<T> {
    const CANNOT_CONVERT: u16 = 3854;
    let started = Instant::now();
    loop {
        match read() {
            Err(mysql::Error::MySqlError(error))
                if error.code == CANNOT_CONVERT && started.elapsed() < Duration::from_secs(30) =>
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            read => return read,
        }
    }
}

/// Waits until a transaction on this test's database waits for a lock.
pub fn wait_for_lock_wait(conn: &mut PooledConn) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let waiting: u32 = read_innodb_trx(
            conn,
            "SELECT COUNT(*) FROM information_schema.innodb_trx AS trx \
             JOIN information_schema.PROCESSLIST AS process ON process.ID = trx.trx_mysql_thread_id \
             WHERE trx.trx_state = 'LOCK WAIT' AND process.DB = DATABASE()",
        )
        .unwrap_or_default();
        if waiting > 0 {
            return;
        }
        assert!(Instant::now() < deadline, "the call never waited for the lock");
    }
}

/// The connection of the transaction on this test's database that waits
/// for a lock, such as a flush held back by a test's gate.
pub fn lock_waiting_connection(conn: &mut PooledConn) -> u64 {
    read_innodb_trx(
        conn,
        "SELECT trx.trx_mysql_thread_id FROM information_schema.innodb_trx AS trx \
         JOIN information_schema.PROCESSLIST AS process ON process.ID = trx.trx_mysql_thread_id \
         WHERE trx.trx_state = 'LOCK WAIT' AND process.DB = DATABASE()",
    )
    .expect("a transaction waits for a lock")
}

/// Turns MariaDB's snapshot isolation off for this session, where the server
/// has it (`innodb_snapshot_isolation`, on by default from 11.6). Inside a
/// transaction under it, an increment of a package with a slot count per
/// counter also share-locks slot 2 and the counter's last slot
/// (`read_slot_count` in the templates); the lock-footprint tests count the locks of every other
/// server, and `snapshot_isolation` tests the lock itself.
pub fn without_snapshot_isolation(conn: &mut impl Queryable) {
    let variable: Option<(String, String)> =
        conn.query_first("SHOW VARIABLES LIKE 'innodb_snapshot_isolation'").expect("read the variables");
    if variable.is_some() {
        conn.query_drop("SET SESSION innodb_snapshot_isolation = OFF").expect("turn snapshot isolation off");
    }
}

/// Whether the test's server refuses a write to a row changed since the
/// transaction's snapshot (MariaDB's `innodb_snapshot_isolation`).
pub fn snapshot_isolation(conn: &mut impl Queryable) -> bool {
    let variable: Option<(String, String)> =
        conn.query_first("SHOW VARIABLES LIKE 'innodb_snapshot_isolation'").expect("read the variables");
    variable.is_some_and(|(_, value)| value == "ON")
}

/// Checks a benchmark round that was to apply `expected` increments: its
/// total is exact, and every increment landed, with no error (no deadlock
/// either: under MariaDB's snapshot isolation, increments inside
/// transactions leave share-locked no slot they write).
pub fn check_bench_round(round: &serde_json::Value, expected: u64) {
    assert_eq!(round["total_exact"], true, "{round}");
    assert_eq!(round["errors"], 0, "{round}");
    let cpu = &round["client_cpu_us"];
    let cpu_per_increment = cpu["user"].as_f64().unwrap() + cpu["system"].as_f64().unwrap();
    assert!(cpu_per_increment > 0.0, "the benchmark's clients took CPU time: {round}");
    assert_eq!(round["increments"], expected, "{round}");
}

/// A transaction that has written 200 rows of a table of its own, so that
/// InnoDB rolls back any lighter transaction that deadlocks with it. Its
/// weight is in rows no statement on the counters reaches, whatever plan the
/// server picks: MariaDB 11's cost model turned an UPDATE of one counter's
/// 200 slots into a scan of the whole index, and the deadlock never formed.
pub fn heavy_transaction(db: &Database) -> PooledConn {
    static BALLASTS: AtomicUsize = AtomicUsize::new(0);
    let ballast = format!("ballast_{}", BALLASTS.fetch_add(1, Ordering::Relaxed));
    let mut heavy = db.conn();
    heavy.query_drop(format!("CREATE TABLE {ballast} (id INT PRIMARY KEY)")).unwrap();
    heavy.query_drop("START TRANSACTION").unwrap();
    heavy
        .query_drop(format!(
            "INSERT INTO {ballast} WITH RECURSIVE n (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200) \
             SELECT i FROM n"
        ))
        .unwrap();
    heavy
}

/// A database of the test's own with the default package whose
/// `counter_increment` records each call in the table `tries` and then
/// fails as a deadlock victim does (1213, SQLSTATE 40001): a call the
/// server keeps rolling back, whose tries a test can count. Each statement
/// of a routine called in autocommit mode commits on its own, so the record
/// stays.
pub fn rolling_back_every_increment() -> Database {
    let db = with_own_package(&PackageOptions::default());
    let mut conn = db.conn();
    conn.query_drop("CREATE TABLE tries (try INT AUTO_INCREMENT PRIMARY KEY)").unwrap();
    conn.query_drop("DROP PROCEDURE counter_increment").unwrap();
    conn.query_drop(
        "CREATE PROCEDURE counter_increment(IN p_name VARCHAR(50)) BEGIN \
         INSERT INTO tries () VALUES (); \
         SIGNAL SQLSTATE '40001' SET MYSQL_ERRNO = 1213, \
         MESSAGE_TEXT = 'Deadlock found when trying to get lock; try restarting transaction'; END",
    )
    .unwrap();
    drop(conn);
    db
}

/// How many calls [`rolling_back_every_increment`]'s routine has seen.
pub fn tries(db: &Database) -> u32 {
    db.conn().query_first("SELECT COUNT(*) FROM tries").unwrap().unwrap()
}

/// The most tries a call the server keeps rolling back gets within a retry
/// budget of [`ROLLBACK_BUDGET`]: after each try the pause doubles from
/// 5 ms, each drawn between half of it and all of it, so even the shortest
/// pauses (2.5, 5, 10, 20, 40, 80 and 160 ms, 317.5 ms in all) have spent
/// the budget by the end of the eighth try. A client that retried without
/// pausing would make hundreds.
pub const MOST_TRIES_IN_BUDGET: u32 = 8;

/// The retry budget [`MOST_TRIES_IN_BUDGET`] is computed for.
pub const ROLLBACK_BUDGET: Duration = Duration::from_millis(300);

/// A write id no call has used: 16 random bytes, as hex. Sent as text
/// (`UNHEX(?)`) or as a literal (`X'...'`), it keeps each statement's text
/// UTF-8, which MySQL's list of sessions needs (it fails to list one that
/// is not, 3854).
pub fn random_write_id_hex() -> String {
    rand::random::<[u8; 16]>().iter().map(|byte| format!("{byte:02x}")).collect()
}

/// A shared database with the default package, and counters `names` of
/// one slot each, so that a test can hold a counter's only row.
pub fn with_default_package(names: &[&str]) -> Database {
    let db = with_package(&PackageOptions::default());
    let mut conn = db.conn();
    for name in names {
        conn.exec_drop("CALL counter_setup(?, 'd', 1, NULL)", (name,)).unwrap();
    }
    db
}

/// A shared database with the package `options` describe, rendered now.
pub fn with_package(options: &PackageOptions) -> Database {
    Database::shared(&render::setup_sql(options).unwrap(), "utf8mb4")
}

/// A database of the test's own with the package `options` describe, for a
/// test that changes it: re-installs, uninstalls, alters or drops a part.
pub fn with_own_package(options: &PackageOptions) -> Database {
    let db = Database::new();
    install_package(&db, options);
    db
}

/// Installs the package made with `options` in `db`, again or not.
pub fn install_package(db: &Database, options: &PackageOptions) {
    script::run(&mut db.conn(), &render::setup_sql(options).unwrap()).unwrap();
}

/// A shared database holding only the tables of `plain_tables.sql` for a
/// package made with `options`, no routine, and the URL of an account that
/// may read and write them and run nothing (checked: no EXECUTE among its
/// grants).
pub fn plain_database(options: &PackageOptions) -> (Database, String) {
    let tables = render::plain_tables_sql(options).unwrap().expect("a package the plain mode serves");
    let db = Database::shared(&tables, "utf8mb4");
    let url = db.account("plain", &["SELECT, INSERT, UPDATE, DELETE ON {db}.*"]).url;
    assert_eq!(routines_in(&mut db.conn()), Vec::<String>::new(), "no routine installed");
    let grants: Vec<String> =
        mysql::Conn::new(mysql::Opts::from_url(&url).unwrap()).unwrap().query("SHOW GRANTS").unwrap();
    assert!(!grants.iter().any(|grant| grant.contains("EXECUTE")), "{grants:?}");
    (db, url)
}

/// Holds the only slot of counter `gate` in an open transaction, so that a
/// call or flush carrying `gate` waits while the test queues what it wants
/// next. COMMIT on the returned connection opens the gate.
pub fn close_gate(db: &Database) -> PooledConn {
    let mut holder = db.conn();
    holder.query_drop("START TRANSACTION").unwrap();
    holder.query_drop("UPDATE counters SET counter = counter + 1 WHERE counter_name = 'gate'").unwrap();
    holder
}

/// Until `running` is cleared, holds counter `name`'s slots for 50 ms at a
/// time, so that its writers wait for them now and then.
pub fn hold_now_and_then(db: &Database, name: &str, running: &AtomicBool) {
    let mut holder = db.conn();
    while running.load(Ordering::SeqCst) {
        holder.query_drop("START TRANSACTION").unwrap();
        holder.exec_drop("SELECT * FROM counters WHERE counter_name = ? FOR UPDATE", (name,)).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        holder.query_drop("ROLLBACK").unwrap();
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Sets up the classic deadlock around counter `d` (of 4 slots or more): a
/// heavy transaction holds slot 3 of `d` and has written 200 other rows;
/// `start` starts the call under test in the background, which locks slot
/// 1 and waits for slot 3; then the heavy transaction asks for slot 1.
/// InnoDB rolls back the transaction that did less work: the call's.
/// `finish` waits for the call started.
pub fn deadlock_against<Call, T>(
    db: &Database,
    start: impl FnOnce() -> Call,
    finish: impl FnOnce(Call) -> T,
) -> T {
    let mut heavy = heavy_transaction(db);
    heavy
        .query_drop("UPDATE counters SET counter = counter + 1 WHERE counter_name = 'd' AND counter_id = 3")
        .unwrap();
    let call = start();
    wait_for_lock_wait(&mut db.conn());
    heavy
        .query_drop("UPDATE counters SET counter = counter + 1 WHERE counter_name = 'd' AND counter_id = 1")
        .unwrap();
    heavy.query_drop("COMMIT").unwrap();
    finish(call)
}

/// What a session that speaks German (`lc_messages`) must set: its
/// servers' messages come back in German, which an application must not
/// read its decisions from.
pub const GERMAN: &str = "SET SESSION lc_messages = 'de_DE'";

/// Makes `conn`'s session speak German, and checks that it does: a server
/// without its German messages answers in English, silently.
pub fn speak_german(conn: &mut impl Queryable) {
    conn.query_drop(GERMAN).unwrap();
    let error = conn.query_drop("SELECT 1 FROM no_such_table").unwrap_err();
    assert!(error.to_string().contains("existiert nicht"), "a German message: {error}");
}

/// The server's deadlock count, from `Innodb_deadlocks` or, on MySQL, `INNODB_METRICS`.
pub fn deadlocks(conn: &mut PooledConn) -> u64 {
    slotted_counters_cli::database::deadlocks(conn).unwrap().expect("the server counts deadlocks")
}

/// What a writer in a test's background waits between its writes, where
/// the test's subject is the change they run beside (a re-install, a
/// resize, a reset): each gap the change opens still meets many writes,
/// and the writers leave the change, and the tests beside it, most of the
/// machine's cores, where writes back to back took them all.
pub const BACKGROUND_PAUSE: Duration = Duration::from_millis(5);

/// Clears a "keep running" flag when dropped, so that background clients
/// stop however the work they run beside ends, a failed assertion included.
pub struct StopOnDrop<'a>(pub &'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

/// Every package committed under generated/, with the flags it is made with
/// (the README's regeneration commands).
pub const COMMITTED: [(&str, &[&str]); 7] = [
    ("generated", &[]),
    ("generated/classic", &["--features", "none"]),
    ("generated/fixed-slots-64", &["--fixed-slots", "64"]),
    ("generated/auto-create-64", &["--fixed-slots", "64", "--auto-create"]),
    ("generated/connection-slots", &["--slot-choice", "connection"]),
    ("generated/galera", &["--cluster", "galera"]),
    ("generated/group-replication", &["--cluster", "group-replication"]),
];

/// The committed packages the live test's server runs: all of them on
/// MySQL; on MariaDB all but Group Replication's, whose routines read a
/// table MariaDB lacks (its install refuses to start there).
pub fn committed_here() -> impl Iterator<Item = (&'static str, &'static [&'static str])> {
    let on_mariadb = flavor() == Flavor::MariaDb;
    COMMITTED.into_iter().filter(move |(_, flags)| !(on_mariadb && flags.contains(&"group-replication")))
}

/// The features of the committed package made with `flags`.
pub fn features_of(flags: &[&str]) -> Features {
    flags
        .iter()
        .position(|flag| *flag == "--features")
        .map_or(Features::ALL, |at| flags[at + 1].parse().expect("a committed package's features parse"))
}

/// The committed packages the live test's server runs that have `feature`.
pub fn committed_with(feature: Feature) -> impl Iterator<Item = (&'static str, &'static [&'static str])> {
    committed_here().filter(move |(_, flags)| features_of(flags).has(feature))
}

/// The routines of the classic package (`--features none`), by name.
pub const CLASSIC_ROUTINES: [&str; 10] = [
    "counter_add",
    "counter_delete",
    "counter_estimate",
    "counter_get",
    "counter_increment",
    "counter_name_problem",
    "counter_package",
    "counter_parse_number",
    "counter_reset",
    "counter_setup",
];

/// Every routine of a package with a slot count per counter, by name.
pub const ROUTINES: [&str; 32] = [
    "counter_add",
    "counter_add_at",
    "counter_add_featured",
    "counter_add_many",
    "counter_add_many_at",
    "counter_add_many_once",
    "counter_add_once",
    "counter_add_within_limit",
    "counter_bound",
    "counter_compact",
    "counter_delete",
    "counter_estimate",
    "counter_expire_periods",
    "counter_forget_writes",
    "counter_get",
    "counter_get_period",
    "counter_get_range",
    "counter_increment",
    "counter_limit",
    "counter_name_problem",
    "counter_package",
    "counter_parse_number",
    "counter_plan_batch",
    "counter_reset",
    "counter_resize",
    "counter_room",
    "counter_series",
    "counter_setup",
    "counter_spread",
    "counter_track",
    "counter_track_at_offset",
    "counter_utc_offset",
];

/// The routines of a package, by name: a fixed-slot package has no resize.
pub fn routines(fixed_slots: bool) -> Vec<&'static str> {
    ROUTINES.into_iter().filter(|&routine| !(fixed_slots && routine == "counter_resize")).collect()
}

/// Runs the `slotted-counters` binary as an operator would, with no
/// `DATABASE_URL` from the test's own environment.
pub fn slotted_counters(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_slotted-counters-under-test"))
        .args(args)
        .env_remove("DATABASE_URL")
        .output()
        .expect("run slotted-counters")
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// `output`, after checking that its command exited 0.
pub fn succeeded(output: Output) -> Output {
    assert!(output.status.success(), "exit {:?}: {}", output.status.code(), stderr(&output));
    output
}

/// `relative` in the project, whose root holds this crate's folder.
pub fn in_project(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ is in the project").join(relative)
}

/// The `setup.sql` of a committed package: `generated` or a folder in it.
pub fn committed_setup_sql(dir: &str) -> PathBuf {
    in_project(dir).join("setup.sql")
}

/// Installs the committed package in `dir` through the library's script runner.
pub fn install_committed(db: &Database, dir: &str) {
    let script = std::fs::read_to_string(committed_setup_sql(dir)).expect("read setup.sql");
    slotted_counters_cli::script::run(&mut db.conn(), &script).expect("install setup.sql");
}

/// A shared database with the committed package in `dir`.
pub fn with_committed(dir: &str) -> Database {
    let script = std::fs::read_to_string(committed_setup_sql(dir)).expect("read setup.sql");
    Database::shared(&script, "utf8mb4")
}

/// The code and message of a server error; any other error fails the test.
pub fn server_error(error: mysql::Error) -> (u16, String) {
    match error {
        mysql::Error::MySqlError(error) => (error.code, error.message),
        other => panic!("expected a server error, got {other}"),
    }
}

/// A client's error as [`server_error`] gives a server's: its number (0
/// when no server answered) and its message.
pub fn client_error(error: slotted_counters::CounterError) -> (u16, String) {
    (error.code().unwrap_or(0), error.to_string())
}

/// A counter's value through `counter_get`: `None` for an unknown counter.
pub fn total(conn: &mut PooledConn, name: &str) -> Option<i64> {
    conn.exec_first("SELECT counter_get(?)", (name,)).expect("counter_get").flatten()
}

/// Slot number to value, for one counter of the `counters` table.
pub fn slots_of(conn: &mut PooledConn, name: &str) -> BTreeMap<u32, i64> {
    conn.exec_map(
        "SELECT counter_id, counter FROM counters WHERE counter_name = ? ORDER BY counter_id",
        (name,),
        |(slot, value): (u32, i64)| (slot, value),
    )
    .expect("read slots")
    .into_iter()
    .collect()
}

/// Every row of the `counters` table, to show that a failed call changed nothing.
pub fn table(conn: &mut PooledConn) -> Vec<(String, u32, Option<String>, String, i64)> {
    conn.query(
        "SELECT counter_name, counter_id, description, CAST(start_date AS CHAR), counter \
         FROM counters ORDER BY counter_name, counter_id",
    )
    .expect("read the table")
}

/// The names of the tables and views in the connection's database, sorted.
pub fn tables_in(conn: &mut impl Queryable) -> Vec<String> {
    conn.query("SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() ORDER BY 1")
        .expect("list tables")
}

/// The routines of the test's database, by name, in order.
pub fn routines_in(conn: &mut impl Queryable) -> Vec<String> {
    conn.query(
        "SELECT ROUTINE_NAME FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE() ORDER BY 1",
    )
    .expect("list routines")
}

/// The triggers of the test's database, by name, in order.
pub fn triggers_in(conn: &mut impl Queryable) -> Vec<String> {
    conn.query(
        "SELECT TRIGGER_NAME FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() ORDER BY 1",
    )
    .expect("list triggers")
}
