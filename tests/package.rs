//! The committed packages, installed into a real server and exercised from Rust.
//!
//! Every behaviour runs twice: on `generated/` (slot counts chosen per
//! counter) and on `generated/fixed-slots-64/` (64 slots hard-coded).

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;
use std::time::Instant;

use mysql::prelude::Queryable;
use mysql::{Params, PooledConn};
use slotted_counters::package::errno;
use slotted_counters::script;
use support::Database;

/// One committed package variant.
struct Package {
    dir: &'static str,
    /// The hard-coded slot count, for the fixed-slot package.
    fixed_slots: Option<u32>,
}

const DEFAULT: Package = Package { dir: "generated", fixed_slots: None };
const FIXED_64: Package = Package { dir: "generated/fixed-slots-64", fixed_slots: Some(64) };

impl Package {
    fn setup_sql(&self) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join(self.dir).join("setup.sql")
    }

    /// Installs the package through the library's script runner.
    fn install(&self, db: &Database) {
        let script = std::fs::read_to_string(self.setup_sql()).expect("read setup.sql");
        script::run(&mut db.conn(), &script).expect("install setup.sql");
    }

    /// A fresh database with the package installed.
    fn database(&self) -> Database {
        let db = Database::new();
        self.install(&db);
        db
    }

    /// The slot count a setup asking for `wanted` slots gets: the fixed
    /// package only accepts its own count.
    fn slots(&self, wanted: u32) -> u32 {
        self.fixed_slots.unwrap_or(wanted)
    }
}

/// Declares each behaviour once per committed package.
macro_rules! for_each_package {
    ($($behaviour:ident),* $(,)?) => {
        mod default_package {
            $(#[test] fn $behaviour() { super::$behaviour(&super::DEFAULT) })*
        }
        mod fixed_slots_64 {
            $(#[test] fn $behaviour() { super::$behaviour(&super::FIXED_64) })*
        }
    };
}

for_each_package!(
    walkthrough_gives_documented_results,
    client_installs_setup_sql_from_another_folder,
    sourcing_setup_twice_keeps_every_count,
    errors_name_the_counter_and_change_nothing,
    get_of_unknown_counter_is_null,
    increment_locks_one_row,
    broken_increment_is_caught,
    slots_are_used_uniformly,
    names_compare_case_insensitively,
    names_that_look_like_sql_stay_data,
    concurrent_increments_and_adds_are_exact,
    increment_never_recreates_a_deleted_counter,
    reset_keeps_later_increments,
);

fn call(conn: &mut PooledConn, sql: &str, params: impl Into<Params>) -> Result<(), (u16, String)> {
    conn.exec_drop(sql, params).map_err(server_error)
}

fn server_error(error: mysql::Error) -> (u16, String) {
    match error {
        mysql::Error::MySqlError(error) => (error.code, error.message),
        other => panic!("expected a server error, got {other}"),
    }
}

fn total(conn: &mut PooledConn, name: &str) -> Option<i64> {
    conn.exec_first("SELECT counter_get(?)", (name,)).expect("counter_get").flatten()
}

/// Slot number to value, for one counter.
fn slots_of(conn: &mut PooledConn, name: &str) -> BTreeMap<u32, i64> {
    conn.exec_map(
        "SELECT counter_id, counter FROM counters WHERE counter_name = ? ORDER BY counter_id",
        (name,),
        |(slot, value): (u32, i64)| (slot, value),
    )
    .expect("read slots")
    .into_iter()
    .collect()
}

/// Every row of the table, to show that a failed call changed nothing.
fn table(conn: &mut PooledConn) -> Vec<(String, u32, Option<String>, String, i64)> {
    conn.query(
        "SELECT counter_name, counter_id, description, CAST(start_date AS CHAR), counter \
         FROM counters ORDER BY counter_name, counter_id",
    )
    .expect("read the table")
}

fn walkthrough_gives_documented_results(package: &Package) {
    let db = package.database();
    let mut conn = db.conn();
    let (test1_slots, test2_slots) = (package.slots(5), package.slots(10));
    let slots_arg =
        |slots: u32| if package.fixed_slots.is_some() { "NULL".to_owned() } else { slots.to_string() };

    conn.query_drop("call counter_setup('test1','test1',NULL,NULL)").unwrap();
    conn.query_drop(format!("call counter_setup('test2','test2',{},1000)", slots_arg(test2_slots))).unwrap();
    conn.query_drop(format!("call counter_setup('test3','test3',{},NULL)", slots_arg(1))).unwrap();

    let test1 = slots_of(&mut conn, "test1");
    assert_eq!(test1.keys().copied().collect::<Vec<_>>(), (1..=test1_slots).collect::<Vec<_>>());
    assert!(test1.values().all(|&value| value == 0), "{test1:?}");
    let test2 = slots_of(&mut conn, "test2");
    assert_eq!(test2.len(), test2_slots as usize);
    assert_eq!(test2[&1], 1000);
    assert!(test2.iter().filter(|(slot, _)| **slot != 1).all(|(_, value)| *value == 0));
    assert_eq!(slots_of(&mut conn, "test3").len(), package.slots(1) as usize);
    let descriptions: Vec<String> =
        conn.query("SELECT DISTINCT description FROM counters ORDER BY 1").unwrap();
    assert_eq!(descriptions, ["test1", "test2", "test3"]);

    for _ in 0..5 {
        conn.query_drop("call counter_increment('test2')").unwrap();
    }
    assert_eq!(total(&mut conn, "test2"), Some(1005));
    assert_eq!(slots_of(&mut conn, "test2").len(), test2_slots as usize, "increments add no rows");

    let start_before: String = conn
        .query_first("SELECT CAST(MIN(start_date) AS CHAR) FROM counters WHERE counter_name = 'test2'")
        .unwrap()
        .unwrap();
    conn.query_drop("DO SLEEP(1.1)").unwrap();
    conn.query_drop("call counter_reset('test2',1000,TRUE)").unwrap();
    assert_eq!(total(&mut conn, "test2"), Some(1000));
    let test2 = slots_of(&mut conn, "test2");
    assert_eq!(test2[&1], 1000);
    assert!(test2.iter().filter(|(slot, _)| **slot != 1).all(|(_, value)| *value == 0), "{test2:?}");
    let start_dates: Vec<String> = conn
        .query("SELECT DISTINCT CAST(start_date AS CHAR) FROM counters WHERE counter_name = 'test2'")
        .unwrap();
    assert_eq!(start_dates.len(), 1, "one start date for all slots: {start_dates:?}");
    assert!(start_dates[0] > start_before, "reset with TRUE moves the start date");

    conn.query_drop("call counter_reset('test2',7,FALSE)").unwrap();
    let start_dates: Vec<String> = conn
        .query("SELECT DISTINCT CAST(start_date AS CHAR) FROM counters WHERE counter_name = 'test2'")
        .unwrap();
    assert_eq!(start_dates, [start_dates[0].clone()]);
    assert_eq!(total(&mut conn, "test2"), Some(7));

    conn.query_drop("call counter_delete('test2')").unwrap();
    assert!(slots_of(&mut conn, "test2").is_empty());
    assert_eq!(total(&mut conn, "test2"), None);
    assert_eq!(total(&mut conn, "test1"), Some(0), "other counters are untouched");
}

/// What a DBA does: the command-line client reads setup.sql from another
/// working directory, by redirection and by SOURCE.
fn client_installs_setup_sql_from_another_folder(package: &Package) {
    let elsewhere = tempfile::tempdir().unwrap();
    let setup_sql = package.setup_sql();
    for how in ["redirect", "source"] {
        let db = Database::new();
        let mut client = db.client();
        client.current_dir(elsewhere.path());
        let output = if how == "redirect" {
            client.stdin(std::fs::File::open(&setup_sql).unwrap()).output()
        } else {
            client.arg("-e").arg(format!("SOURCE {}", setup_sql.display())).output()
        }
        .expect("run the mariadb client");
        assert!(output.status.success(), "{how}: {}", String::from_utf8_lossy(&output.stderr));
        assert!(output.stderr.is_empty(), "{how}: {}", String::from_utf8_lossy(&output.stderr));

        let mut conn = db.conn();
        call(&mut conn, "CALL counter_setup(?, ?, ?, ?)", ("page", "hits", None::<u32>, 41)).unwrap();
        conn.query_drop("CALL counter_increment('page')").unwrap();
        assert_eq!(total(&mut conn, "page"), Some(42), "{how}");
        let routines: Vec<String> = conn
            .query("SELECT ROUTINE_NAME FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE() ORDER BY 1")
            .unwrap();
        assert_eq!(routines, support::routines(package.fixed_slots.is_some()), "{how}");
    }
}

fn sourcing_setup_twice_keeps_every_count(package: &Package) {
    let db = package.database();
    let mut conn = db.conn();
    call(&mut conn, "CALL counter_setup(?, ?, ?, ?)", ("kept", "d", package.slots(8), 5)).unwrap();
    for _ in 0..20 {
        conn.query_drop("CALL counter_increment('kept')").unwrap();
    }
    let before = table(&mut conn);

    package.install(&db);
    let output = db.client().stdin(std::fs::File::open(package.setup_sql()).unwrap()).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));

    assert_eq!(table(&mut conn), before);
    assert_eq!(total(&mut conn, "kept"), Some(25));
    conn.query_drop("CALL counter_increment('kept')").unwrap();
    assert_eq!(total(&mut conn, "kept"), Some(26));
}

fn errors_name_the_counter_and_change_nothing(package: &Package) {
    let db = package.database();
    let mut conn = db.conn();
    call(&mut conn, "CALL counter_setup(?, ?, ?, ?)", ("exists", "d", package.slots(3), 9)).unwrap();
    let before = table(&mut conn);

    let setup = "CALL counter_setup(?, ?, ?, ?)";
    let long_name = "n".repeat(51);
    let mut cases: Vec<(&str, Params, u16, String)> = vec![
        (
            setup,
            (None::<&str>, "d", None::<u32>, None::<i64>).into(),
            errno::INVALID_ARGUMENT,
            "counter name must not be NULL or empty".into(),
        ),
        (
            setup,
            ("", "d", None::<u32>, None::<i64>).into(),
            errno::INVALID_ARGUMENT,
            "counter name must not be NULL or empty".into(),
        ),
        (
            setup,
            ("   ", "d", None::<u32>, None::<i64>).into(),
            errno::INVALID_ARGUMENT,
            "counter name must not be NULL or empty".into(),
        ),
        (
            setup,
            (long_name.as_str(), "d", None::<u32>, None::<i64>).into(),
            errno::INVALID_ARGUMENT,
            format!("counter name is longer than 50 characters: '{long_name}'"),
        ),
        (
            setup,
            ("wordy", "x".repeat(256), None::<u32>, None::<i64>).into(),
            errno::INVALID_ARGUMENT,
            "description is longer than 255 characters, for counter: 'wordy'".into(),
        ),
        (
            setup,
            ("exists", "d", None::<u32>, None::<i64>).into(),
            errno::ALREADY_EXISTS,
            "counter already exists: 'exists'".into(),
        ),
        (
            setup,
            ("EXISTS", "d", None::<u32>, None::<i64>).into(),
            errno::ALREADY_EXISTS,
            "counter already exists: 'EXISTS'".into(),
        ),
        (
            "CALL counter_increment(?)",
            ("missing",).into(),
            errno::UNKNOWN_COUNTER,
            "unknown counter: 'missing'".into(),
        ),
        (
            "CALL counter_increment(?)",
            (None::<&str>,).into(),
            errno::UNKNOWN_COUNTER,
            "unknown counter: NULL".into(),
        ),
        (
            "CALL counter_add(?, ?)",
            ("missing", -3).into(),
            errno::UNKNOWN_COUNTER,
            "unknown counter: 'missing'".into(),
        ),
        (
            "CALL counter_add(?, ?)",
            ("missing", 0).into(),
            errno::UNKNOWN_COUNTER,
            "unknown counter: 'missing'".into(),
        ),
        (
            "CALL counter_add(?, ?)",
            ("exists", None::<i64>).into(),
            errno::INVALID_ARGUMENT,
            "delta must not be NULL, for counter: 'exists'".into(),
        ),
        (
            "CALL counter_reset(?, ?, ?)",
            ("missing", 1, true).into(),
            errno::UNKNOWN_COUNTER,
            "unknown counter: 'missing'".into(),
        ),
        (
            "CALL counter_delete(?)",
            ("missing",).into(),
            errno::UNKNOWN_COUNTER,
            "unknown counter: 'missing'".into(),
        ),
    ];
    match package.fixed_slots {
        Some(fixed) => cases.push((
            setup,
            ("ten", "d", 10, None::<i64>).into(),
            errno::INVALID_ARGUMENT,
            format!(
                "slots must be NULL or {fixed} (this package has fixed slots), not 10, for counter: 'ten'"
            ),
        )),
        None => {
            for slots in [0, -1, 1025] {
                cases.push((
                    setup,
                    ("bad", "d", slots, None::<i64>).into(),
                    errno::INVALID_ARGUMENT,
                    format!("slots must be between 1 and 1024, not {slots}, for counter: 'bad'"),
                ));
            }
        }
    }

    for (sql, params, code, message) in cases {
        let shown = format!("{sql} {params:?}");
        let (got_code, got_message) = call(&mut conn, sql, params).expect_err(&shown);
        assert_eq!((got_code, got_message.as_str()), (code, message.as_str()), "{shown}");
        assert_eq!(table(&mut conn), before, "{shown} changed the table");
    }

    // A delta of 0 on an existing counter is a harmless no-op.
    call(&mut conn, "CALL counter_add(?, ?)", ("exists", 0)).unwrap();
    assert_eq!(table(&mut conn), before);
}

fn get_of_unknown_counter_is_null(package: &Package) {
    let db = package.database();
    let mut conn = db.conn();
    call(&mut conn, "CALL counter_setup(?, ?, ?, ?)", ("known", "d", None::<u32>, 3)).unwrap();
    let row: (Option<i64>, Option<i64>, Option<i64>) = conn
        .query_first("SELECT counter_get('known'), counter_get('unknown'), counter_get(NULL)")
        .unwrap()
        .unwrap();
    assert_eq!(row, (Some(3), None, None));
}

/// Runs `sql` inside a transaction and tells how it went and how many rows
/// it held locked before the rollback.
fn rows_locked_by(conn: &mut PooledConn, sql: &str) -> (Result<(), (u16, String)>, u64) {
    conn.query_drop("START TRANSACTION").unwrap();
    let outcome = conn.query_drop(sql).map_err(server_error);
    let locked: u64 = support::read_innodb_trx(
        conn,
        "SELECT trx_rows_locked FROM information_schema.innodb_trx WHERE trx_mysql_thread_id = CONNECTION_ID()",
    )
    .expect("the transaction is listed");
    conn.query_drop("ROLLBACK").unwrap();
    (outcome, locked)
}

fn increment_locks_one_row(package: &Package) {
    let db = package.database();
    let mut conn = db.conn();
    call(&mut conn, "CALL counter_setup(?, ?, ?, ?)", ("hot", "d", package.slots(64), None::<i64>)).unwrap();
    for _ in 0..5 {
        assert_eq!(rows_locked_by(&mut conn, "CALL counter_increment('hot')"), (Ok(()), 1));
        assert_eq!(rows_locked_by(&mut conn, "CALL counter_add('hot', -7)"), (Ok(()), 1));
    }
}

/// The lock check above must notice the classic mistake: RAND() in the
/// UPDATE's WHERE clause, evaluated for every slot row scanned.
fn broken_increment_is_caught(package: &Package) {
    let script = std::fs::read_to_string(package.setup_sql()).unwrap();
    let random_slot = match package.fixed_slots {
        Some(slots) => format!("FLOOR(RAND() * {slots}) + 1"),
        None => "FLOOR(RAND() * v_slots) + 1".to_owned(),
    };
    let correct =
        "SET `counter` = `counter` + p_delta\n     WHERE `counter_name` = p_name AND `counter_id` = v_slot;";
    assert_eq!(script.matches(correct).count(), 1, "the UPDATE this test breaks is where it expects");
    let broken = script.replace(
        correct,
        &format!("SET `counter` = `counter` + p_delta\n     WHERE `counter_name` = p_name AND `counter_id` = {random_slot};"),
    );

    let db = Database::new();
    script::run(&mut db.conn(), &broken).unwrap();
    let mut conn = db.conn();
    call(&mut conn, "CALL counter_setup(?, ?, ?, ?)", ("hot", "d", package.slots(64), None::<i64>)).unwrap();
    let most = (0..5).map(|_| rows_locked_by(&mut conn, "CALL counter_increment('hot')").1).max().unwrap();
    assert!(most > 1, "the broken increment locked only {most} row");
}

fn slots_are_used_uniformly(package: &Package) {
    const INCREMENTS: u32 = 20_000;
    let slots = package.slots(100);
    let db = package.database();
    let mut conn = db.conn();
    call(&mut conn, "CALL counter_setup(?, ?, ?, ?)", ("spread", "d", slots, None::<i64>)).unwrap();
    // One transaction: the point is where increments land, not commit speed.
    conn.query_drop("START TRANSACTION").unwrap();
    for _ in 0..INCREMENTS {
        conn.query_drop("CALL counter_increment('spread')").unwrap();
    }
    conn.query_drop("COMMIT").unwrap();

    let counts = slots_of(&mut conn, "spread");
    assert_eq!(counts.keys().copied().collect::<Vec<_>>(), (1..=slots).collect::<Vec<_>>());
    assert_eq!(counts.values().sum::<i64>(), i64::from(INCREMENTS));
    // Each slot's count is Binomial(n, 1/slots). Six standard deviations
    // either side: a correct package falls outside with probability about
    // 2e-9 per slot (2e-7 for all 100), while a slot that gets half or no
    // traffic (rounding instead of FLOOR, an off-by-one) lands far outside.
    let p = 1.0 / f64::from(slots);
    let expected = f64::from(INCREMENTS) * p;
    let bound = 6.0 * (f64::from(INCREMENTS) * p * (1.0 - p)).sqrt();
    for (slot, &count) in &counts {
        assert!(
            (count as f64 - expected).abs() <= bound,
            "slot {slot} got {count} increments, expected {expected:.0} ± {bound:.0}: {counts:?}"
        );
    }
}

fn names_compare_case_insensitively(package: &Package) {
    let db = package.database();
    let mut conn = db.conn();
    conn.query_drop("CALL counter_setup('countername100', 'd', NULL, NULL)").unwrap();
    conn.query_drop("CALL counter_increment('countername100')").unwrap();
    conn.query_drop("CALL counter_increment('counterName100')").unwrap();
    conn.query_drop("CALL counter_add('COUNTERNAME100', 40)").unwrap();
    assert_eq!(total(&mut conn, "counterName100"), Some(42));
    conn.query_drop("CALL counter_reset('CounterName100', 5, FALSE)").unwrap();
    assert_eq!(total(&mut conn, "countername100"), Some(5));
    conn.query_drop("CALL counter_delete('COUNTERNAME100')").unwrap();
    assert_eq!(total(&mut conn, "countername100"), None);
}

fn names_that_look_like_sql_stay_data(package: &Package) {
    let db = package.database();
    let mut conn = db.conn();
    let names = [
        "x'); DROP TABLE counters; --",
        "a' OR '1'='1",
        "`counters`",
        "back\\slash",
        "%",
        "_",
        "name\"quote",
        "ünïcödé ✓",
    ];
    for (i, name) in names.iter().enumerate() {
        call(&mut conn, "CALL counter_setup(?, ?, ?, ?)", (*name, *name, None::<u32>, i as i64)).unwrap();
    }
    for name in names {
        call(&mut conn, "CALL counter_increment(?)", (name,)).unwrap();
    }
    for (i, name) in names.iter().enumerate() {
        assert_eq!(total(&mut conn, name), Some(i as i64 + 1), "{name}");
        let description: String = conn
            .exec_first("SELECT DISTINCT description FROM counters WHERE counter_name = ?", (*name,))
            .unwrap()
            .unwrap();
        assert_eq!(description, *name);
    }
    let counters: usize =
        conn.query_first("SELECT COUNT(DISTINCT counter_name) FROM counters").unwrap().unwrap();
    assert_eq!(counters, names.len(), "no name matched another as a pattern");
    call(&mut conn, "CALL counter_delete(?)", ("%",)).unwrap();
    assert_eq!(total(&mut conn, "_"), Some(6), "deleting '%' deleted only '%'");
}

/// 64 clients × 500 calls mixing increments and signed adds on 4 counters.
fn concurrent_increments_and_adds_are_exact(package: &Package) {
    const CLIENTS: usize = 64;
    const CALLS: usize = 500;
    const COUNTERS: [&str; 4] = ["hits", "likes", "views", "stock"];
    let db = package.database();
    let mut conn = db.conn();
    for name in COUNTERS {
        call(&mut conn, "CALL counter_setup(?, ?, ?, ?)", (name, "d", package.slots(16), None::<i64>))
            .unwrap();
    }

    let expected: Vec<[i64; 4]> = thread::scope(|scope| {
        let clients: Vec<_> = (0..CLIENTS)
            .map(|_| {
                scope.spawn(|| {
                    let mut conn = db.conn();
                    let mut sums = [0i64; 4];
                    for _ in 0..CALLS {
                        let which = rand::random_range(0..COUNTERS.len());
                        let delta = if rand::random_bool(0.5) {
                            call(&mut conn, "CALL counter_increment(?)", (COUNTERS[which],)).map(|()| 1)
                        } else {
                            let delta = rand::random_range(-1_000i64..=1_000);
                            call(&mut conn, "CALL counter_add(?, ?)", (COUNTERS[which], delta))
                                .map(|()| delta)
                        };
                        sums[which] += delta.unwrap_or_else(|error| panic!("a call failed: {error:?}"));
                    }
                    sums
                })
            })
            .collect();
        clients.into_iter().map(|client| client.join().expect("a client panicked")).collect()
    });

    for (i, name) in COUNTERS.iter().enumerate() {
        let sent: i64 = expected.iter().map(|sums| sums[i]).sum();
        assert_eq!(total(&mut conn, name), Some(sent), "{name}");
    }
}

fn increment_never_recreates_a_deleted_counter(package: &Package) {
    const CLIENTS: usize = 8;
    const MAX_CALLS: usize = 2_000;
    let db = package.database();
    let mut conn = db.conn();
    call(&mut conn, "CALL counter_setup(?, ?, ?, ?)", ("doomed", "d", package.slots(4), None::<i64>))
        .unwrap();
    let succeeded = AtomicUsize::new(0);
    let deleted = AtomicBool::new(false);

    let late_successes: usize = thread::scope(|scope| {
        let clients: Vec<_> = (0..CLIENTS)
            .map(|_| {
                scope.spawn(|| {
                    let mut conn = db.conn();
                    let mut late = 0;
                    for _ in 0..MAX_CALLS {
                        let started_after_delete = deleted.load(Ordering::SeqCst);
                        match call(&mut conn, "CALL counter_increment('doomed')", ()) {
                            Ok(()) => {
                                succeeded.fetch_add(1, Ordering::SeqCst);
                                late += usize::from(started_after_delete);
                            }
                            Err((code, message)) => {
                                assert_eq!(
                                    (code, message.as_str()),
                                    (errno::UNKNOWN_COUNTER, "unknown counter: 'doomed'")
                                );
                                if started_after_delete {
                                    break;
                                }
                            }
                        }
                    }
                    late
                })
            })
            .collect();
        while succeeded.load(Ordering::SeqCst) < 200 && !clients.iter().all(|client| client.is_finished()) {
            thread::yield_now();
        }
        let mut conn = db.conn();
        conn.query_drop("CALL counter_delete('doomed')").unwrap();
        deleted.store(true, Ordering::SeqCst);
        clients.into_iter().map(|client| client.join().expect("a client panicked")).sum()
    });

    assert_eq!(late_successes, 0, "increments that started after the delete returned succeeded");
    assert!(slots_of(&mut conn, "doomed").is_empty(), "the counter came back");
    assert_eq!(total(&mut conn, "doomed"), None);
}

fn reset_keeps_later_increments(package: &Package) {
    const CLIENTS: usize = 8;
    const CALLS: usize = 300;
    const RESET_TO: i64 = 1_000;
    let db = package.database();
    let mut conn = db.conn();
    call(&mut conn, "CALL counter_setup(?, ?, ?, ?)", ("busy", "d", package.slots(8), None::<i64>)).unwrap();
    let done = AtomicUsize::new(0);

    let (reset_returned, calls): (Instant, Vec<(Instant, Instant)>) = thread::scope(|scope| {
        let clients: Vec<_> = (0..CLIENTS)
            .map(|_| {
                scope.spawn(|| {
                    let mut conn = db.conn();
                    (0..CALLS)
                        .map(|_| {
                            let started = Instant::now();
                            conn.query_drop("CALL counter_increment('busy')").expect("increment");
                            done.fetch_add(1, Ordering::SeqCst);
                            (started, Instant::now())
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        while done.load(Ordering::SeqCst) < CLIENTS * CALLS / 3
            && !clients.iter().all(|client| client.is_finished())
        {
            thread::yield_now();
        }
        db.conn().exec_drop("CALL counter_reset('busy', ?, TRUE)", (RESET_TO,)).unwrap();
        let reset_returned = Instant::now();
        let calls =
            clients.into_iter().flat_map(|client| client.join().expect("a client panicked")).collect();
        (reset_returned, calls)
    });

    // An increment that started after the reset returned must count; one
    // acknowledged after it may have landed just before the reset.
    let started_after = calls.iter().filter(|(started, _)| *started > reset_returned).count() as i64;
    let acked_after = calls.iter().filter(|(_, acked)| *acked > reset_returned).count() as i64;
    assert!(started_after > 0, "the reset came too late to test anything");
    let value = total(&mut conn, "busy").unwrap();
    assert!(
        (RESET_TO + started_after..=RESET_TO + acked_after).contains(&value),
        "total {value}, expected {RESET_TO} + between {started_after} and {acked_after}"
    );
}

#[test]
fn runner_reports_the_failing_statement() {
    let db = Database::new();
    let script = "CREATE TABLE first (x INT);\n-- a comment\nINSERT INTO first\n  VALUES ('not a number', 2);\nCREATE TABLE never (x INT);\n";
    let error = script::run(&mut db.conn(), script).unwrap_err();
    let message = error.to_string();
    assert!(message.starts_with("statement 2 (line 3) failed: `INSERT INTO first`: "), "{message}");
    assert!(message.contains("1136"), "the server's error is included: {message}");
    let tables: Vec<String> = db.conn().query("SHOW TABLES").unwrap();
    assert_eq!(tables, ["first"], "nothing after the failure ran");
}
