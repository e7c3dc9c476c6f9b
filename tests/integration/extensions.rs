//! What the classic package lacked: resize, compact, the view of totals,
//! estimates, lazy counters and per-connection slots, on the committed
//! packages in a live server.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;

use mysql::TxOpts;
use mysql::prelude::Queryable;
use slotted_counters::{CounterError, Counters, PackageOptions, StartDate};
use slotted_counters_core::package::errno;

use crate::package::escaped_batches;
use crate::support::{self, Flavor, on_each_server, server_error, slots_of, total, with_committed};

on_each_server!(
    resize_grows_and_shrinks_keeping_the_total,
    resize_under_load_loses_no_increment,
    resizes_beside_a_busy_neighbour_all_succeed_and_stay_exact,
    routines_over_a_counter_holding_most_of_the_table_lock_its_rows_alone,
    batches_racing_resizes_lose_no_delta,
    every_committed_package_takes_batches,
    fixed_slot_packages_cannot_resize,
    compact_folds_every_slot_into_slot_one,
    totals_view_has_one_row_per_counter_and_joins,
    estimate_reads_one_slot_times_the_slot_count,
    lazy_counters_appear_when_first_hit,
    lazy_counters_under_load_are_exact,
    connection_slot_choice_keeps_a_connection_on_one_slot,
    the_galera_package_counts_and_resets_like_the_classic_one_on_a_single_server,
    a_galera_reset_failing_at_its_last_statement_changes_nothing,
    client_errors_from_lazy_packages_stay_typed,
);

/// The options `generated/auto-create-64` is made with.
fn lazy_options() -> PackageOptions {
    PackageOptions::builder().fixed_slots(64).auto_create(true).build().unwrap()
}

fn resize_grows_and_shrinks_keeping_the_total() {
    let db = with_committed("generated");
    let mut conn = db.conn();
    conn.query_drop("CALL counter_setup('r', 'resized', 4, 10)").unwrap();
    conn.exec_drop("UPDATE counters SET counter = counter + counter_id WHERE counter_name = 'r'", ())
        .unwrap();
    assert_eq!(total(&mut conn, "r"), Some(20));

    conn.query_drop("CALL counter_resize('r', 9)").unwrap();
    let slots = slots_of(&mut conn, "r");
    assert_eq!(slots.keys().copied().collect::<Vec<_>>(), (1..=9).collect::<Vec<_>>());
    assert_eq!(total(&mut conn, "r"), Some(20));
    let descriptions: Vec<String> =
        conn.query("SELECT DISTINCT description FROM counters WHERE counter_name = 'r'").unwrap();
    assert_eq!(descriptions, ["resized"], "new slots keep the description");

    conn.query_drop("CALL counter_resize('r', 2)").unwrap();
    let slots = slots_of(&mut conn, "r");
    assert_eq!(slots, BTreeMap::from([(1, 11 + 3 + 4), (2, 2)]), "slots 3 and 4 moved into slot 1");
    conn.query_drop("CALL counter_resize('r', 2)").unwrap();
    assert_eq!(total(&mut conn, "r"), Some(20));

    assert_eq!(
        server_error(conn.query_drop("CALL counter_resize('r', 0)").unwrap_err()),
        (
            errno::INVALID_ARGUMENT,
            "slots must be a whole number between 1 and 1024, not 0, for counter: 'r'".to_owned()
        )
    );
    assert_eq!(
        server_error(conn.query_drop("CALL counter_resize('missing', 3)").unwrap_err()),
        (errno::UNKNOWN_COUNTER, "unknown counter: 'missing'".to_owned())
    );
    assert_eq!(slots_of(&mut conn, "r").len(), 2, "failed resizes changed nothing");
}

/// A counter shrunk and grown 300 times, each resize a plain `CALL` that
/// must succeed, while two clients increment the counter that sorts right
/// after it. On MariaDB 11.8, whose snapshot isolation is on, a shrink whose
/// plain `SELECT SUM` had opened a read view failed with 1020 as soon as the
/// neighbour's first slot changed: 149 of 150 shrinks.
fn resizes_beside_a_busy_neighbour_all_succeed_and_stay_exact() {
    let db = with_committed("generated");
    let mut conn = db.conn();
    conn.query_drop("CALL counter_setup('resized', 'd', 64, 1000)").unwrap();
    conn.query_drop("CALL counter_setup('resized2', 'd', 4, NULL)").unwrap();
    let acknowledged = AtomicU64::new(0);
    let resizing = AtomicBool::new(true);
    thread::scope(|scope| {
        let _stop = support::StopOnDrop(&resizing);
        for _ in 0..2 {
            scope.spawn(|| {
                let mut conn = db.conn();
                while resizing.load(Ordering::SeqCst) {
                    conn.query_drop("CALL counter_increment('resized2')")
                        .expect("an increment of the neighbour");
                    acknowledged.fetch_add(1, Ordering::SeqCst);
                }
            });
        }
        for round in 0..300 {
            let slots = if round % 2 == 0 { 8 } else { 64 };
            conn.exec_drop("CALL counter_resize('resized', ?)", (slots,))
                .unwrap_or_else(|error| panic!("resize {round} to {slots} slots: {error}"));
        }
    });
    assert_eq!(slots_of(&mut conn, "resized").len(), 64);
    assert_eq!(total(&mut conn, "resized"), Some(1000));
    assert_eq!(total(&mut conn, "resized2"), Some(acknowledged.load(Ordering::SeqCst) as i64));
}

/// Reset, delete, resize and compact of a counter that holds almost all of
/// the table's rows touch its rows alone, whatever the optimizer thinks of
/// reading them through the primary key: another transaction holds every
/// slot of the counters before and after it, and none of the four waits
/// for it (a one-second lock wait timeout would fail it); and a reset or
/// delete still open in the caller's transaction leaves the others'
/// increments free. MariaDB 11's cost model scanned the whole index there
/// without FORCE INDEX (PRIMARY), and locked the other counters' slots.
fn routines_over_a_counter_holding_most_of_the_table_lock_its_rows_alone() {
    let db = with_committed("generated");
    let mut conn = db.conn();
    for (name, slots) in [("a", 4), ("big", 1024), ("z", 4)] {
        conn.exec_drop("CALL counter_setup(?, 'd', ?, 1)", (name, slots)).unwrap();
    }
    conn.query_drop("SET SESSION innodb_lock_wait_timeout = 1").unwrap();
    let mut other = db.conn();
    other.query_drop("SET SESSION innodb_lock_wait_timeout = 1").unwrap();
    let lock_the_neighbours = |other: &mut mysql::PooledConn| {
        other.query_drop("START TRANSACTION").unwrap();
        for name in ["a", "z"] {
            for slot in 1..=4 {
                other
                    .exec_drop(
                        "UPDATE counters SET counter = counter + 1 WHERE counter_name = ? AND counter_id = ?",
                        (name, slot),
                    )
                    .unwrap();
            }
        }
    };
    for call in [
        "CALL counter_reset('big', 5, FALSE)",
        "CALL counter_resize('big', 512)",
        "CALL counter_resize('big', 1024)",
        "CALL counter_compact('big')",
        "CALL counter_delete('big')",
    ] {
        lock_the_neighbours(&mut other);
        conn.query_drop(call)
            .unwrap_or_else(|error| panic!("{call} waited for another counter's slots: {error}"));
        other.query_drop("ROLLBACK").unwrap();
        if call.contains("delete") {
            conn.query_drop("CALL counter_setup('big', 'd', 1024, 1)").unwrap();
        }
    }
    for call in ["CALL counter_reset('big', 5, FALSE)", "CALL counter_delete('big')"] {
        conn.query_drop("START TRANSACTION").unwrap();
        conn.query_drop(call).unwrap();
        for name in ["a", "z"] {
            other
                .exec_drop("CALL counter_add(?, 1)", (name,))
                .unwrap_or_else(|error| panic!("{call} held a slot of {name}: {error}"));
        }
        conn.query_drop("ROLLBACK").unwrap();
    }
}

/// 32 clients increment while the counter goes 64 -> 4 -> 128 -> 1 slots.
fn resize_under_load_loses_no_increment() {
    const CLIENTS: usize = 32;
    const MAX_CALLS: usize = 5_000;
    let db = with_committed("generated");
    db.conn().query_drop("CALL counter_setup('busy', 'd', 64, 1000)").unwrap();
    let acknowledged = AtomicU64::new(0);
    let resizing = AtomicBool::new(true);

    thread::scope(|scope| {
        let clients: Vec<_> = (0..CLIENTS)
            .map(|_| {
                scope.spawn(|| {
                    let mut conn = db.conn();
                    for _ in 0..MAX_CALLS {
                        if !resizing.load(Ordering::SeqCst) {
                            break;
                        }
                        conn.query_drop("CALL counter_increment('busy')")
                            .expect("an increment failed during a resize");
                        acknowledged.fetch_add(1, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        // Lets 300 more increments land, unless the clients have stopped.
        let let_increments_land = || {
            let target = acknowledged.load(Ordering::SeqCst) + 300;
            while acknowledged.load(Ordering::SeqCst) < target
                && !clients.iter().all(|client| client.is_finished())
            {
                thread::yield_now();
            }
        };
        let mut conn = db.conn();
        for slots in [4, 128, 1] {
            let_increments_land();
            conn.exec_drop("CALL counter_resize('busy', ?)", (slots,)).unwrap();
        }
        let_increments_land();
        resizing.store(false, Ordering::SeqCst);
    });

    let mut conn = db.conn();
    assert_eq!(slots_of(&mut conn, "busy").len(), 1);
    assert_eq!(total(&mut conn, "busy"), Some(1000 + acknowledged.load(Ordering::SeqCst) as i64));
}

/// Batches of 3 counters, from 16 clients, while each counter shrinks and
/// grows many times: a batch that picked a slot a resize then removed puts
/// that delta on slot 1, so none is lost.
fn batches_racing_resizes_lose_no_delta() {
    const CLIENTS: usize = 16;
    const NAMES: [&str; 3] = ["r1", "r2", "r3"];
    let db = with_committed("generated");
    for name in NAMES {
        db.conn().exec_drop("CALL counter_setup(?, 'd', 32, 0)", (name,)).unwrap();
    }
    let acknowledged = AtomicU64::new(0);
    let resizing = AtomicBool::new(true);

    thread::scope(|scope| {
        for _ in 0..CLIENTS {
            scope.spawn(|| {
                let mut conn = db.conn();
                while resizing.load(Ordering::SeqCst) {
                    match conn.query_drop(r#"CALL counter_add_many('{"r1": 1, "r2": 1, "r3": 1}')"#) {
                        Ok(()) => {
                            acknowledged.fetch_add(1, Ordering::SeqCst);
                        }
                        // A deadlock with a resize rolled the whole batch back.
                        Err(error) => {
                            assert_eq!(server_error(error).0, 1213, "a batch failed during a resize")
                        }
                    }
                }
            });
        }
        let _stop = support::StopOnDrop(&resizing);
        let mut conn = db.conn();
        for round in 0..30 {
            for name in NAMES {
                let slots = if round % 2 == 0 { 2 } else { 32 };
                // A resize and a batch may deadlock: the server rolls one
                // back whole, and it runs again.
                while let Err(error) = conn.exec_drop("CALL counter_resize(?, ?)", (name, slots)) {
                    assert_eq!(server_error(error).0, 1213, "resize of {name} to {slots}");
                }
            }
        }
    });

    let mut conn = db.conn();
    let sent = acknowledged.load(Ordering::SeqCst) as i64;
    assert!(sent > 0);
    for name in NAMES {
        assert_eq!(total(&mut conn, name), Some(sent), "{name}");
    }
}

/// Every committed package takes batches: lazy counters are created by
/// them, the others must exist. Each applies exactly the decoded keys of
/// batches written with every JSON escape.
fn every_committed_package_takes_batches() {
    let unicode_ci = PackageOptions::builder().collation("utf8mb4_unicode_ci").build().unwrap();
    escaped_batches::batches_add_exactly_their_decoded_keys(&support::with_package(&unicode_ci), None, true);
    for (dir, flags) in support::committed_here() {
        let fixed_slots =
            flags.iter().position(|flag| *flag == "--fixed-slots").map(|at| flags[at + 1].parse().unwrap());
        escaped_batches::batches_add_exactly_their_decoded_keys(&with_committed(dir), fixed_slots, false);
        let db = with_committed(dir);
        let mut conn = db.conn();
        let lazy = dir.contains("auto-create");
        if !lazy {
            conn.query_drop("CALL counter_setup('a', 'd', NULL, NULL)").unwrap();
            conn.query_drop("CALL counter_setup('b', 'd', NULL, 10)").unwrap();
        }
        conn.query_drop(r#"CALL counter_add_many('{"a": 2, "b": -3}')"#)
            .unwrap_or_else(|error| panic!("{dir}: {error}"));
        let expected_b = if lazy { -3 } else { 7 };
        assert_eq!((total(&mut conn, "a"), total(&mut conn, "b")), (Some(2), Some(expected_b)), "{dir}");
        let outcome = conn.query_drop(r#"CALL counter_add_many('{"a": 1, "new": 5}')"#);
        if lazy {
            outcome.unwrap();
            assert_eq!((total(&mut conn, "a"), total(&mut conn, "new")), (Some(3), Some(5)), "{dir}");
            let (code, _) =
                server_error(conn.query_drop(r#"CALL counter_add_many('{"a": 1, " ": 5}')"#).unwrap_err());
            assert_eq!(code, errno::INVALID_ARGUMENT, "{dir}: a blank name");
        } else {
            assert_eq!(server_error(outcome.unwrap_err()).0, errno::UNKNOWN_COUNTER, "{dir}");
            assert_eq!(total(&mut conn, "a"), Some(2), "{dir}: nothing applied");
        }
    }
}

fn fixed_slot_packages_cannot_resize() {
    let db = with_committed("generated/fixed-slots-64");
    let routines: Vec<String> = db
        .conn()
        .query("SELECT ROUTINE_NAME FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_NAME = 'counter_resize'")
        .unwrap();
    assert!(routines.is_empty());
}

fn compact_folds_every_slot_into_slot_one() {
    for dir in ["generated", "generated/fixed-slots-64"] {
        let db = with_committed(dir);
        let mut conn = db.conn();
        conn.query_drop("CALL counter_setup('c', 'd', NULL, 5)").unwrap();
        for _ in 0..50 {
            conn.query_drop("CALL counter_increment('c')").unwrap();
        }
        conn.query_drop("CALL counter_add('c', -7)").unwrap();
        let slot_count = slots_of(&mut conn, "c").len();

        conn.query_drop("CALL counter_compact('c')").unwrap();
        let slots = slots_of(&mut conn, "c");
        assert_eq!(slots.len(), slot_count, "{dir}: compact keeps the slots");
        assert_eq!(slots[&1], 48, "{dir}");
        assert!(slots.values().skip(1).all(|&value| value == 0), "{dir}: {slots:?}");
        assert_eq!(
            server_error(conn.query_drop("CALL counter_compact('missing')").unwrap_err()),
            (errno::UNKNOWN_COUNTER, "unknown counter: 'missing'".to_owned()),
            "{dir}"
        );
    }
}

fn totals_view_has_one_row_per_counter_and_joins() {
    let db = with_committed("generated");
    let mut conn = db.conn();
    conn.query_drop("CALL counter_setup('page:1', 'home', 8, 40)").unwrap();
    conn.query_drop("CALL counter_setup('page:2', 'pricing', 2, NULL)").unwrap();
    conn.query_drop("CALL counter_add('page:1', 2)").unwrap();
    let rows: Vec<(String, Option<String>, u32, i64)> = conn
        .query("SELECT counter_name, description, slots, total FROM counter_totals ORDER BY counter_name")
        .unwrap();
    assert_eq!(
        rows,
        [("page:1".into(), Some("home".into()), 8, 42), ("page:2".into(), Some("pricing".into()), 2, 0)]
    );

    conn.query_drop("CREATE TABLE pages (id INT PRIMARY KEY, title VARCHAR(20))").unwrap();
    conn.query_drop("INSERT INTO pages VALUES (1, 'Home'), (2, 'Pricing'), (3, 'Never viewed')").unwrap();
    let joined: Vec<(String, Option<i64>)> = conn
        .query(
            "SELECT p.title, t.total FROM pages p \
             LEFT JOIN counter_totals t ON t.counter_name = CONCAT('page:', p.id) ORDER BY p.id",
        )
        .unwrap();
    assert_eq!(
        joined,
        [("Home".into(), Some(42)), ("Pricing".into(), Some(0)), ("Never viewed".into(), None)]
    );
    let started: Option<String> = conn
        .query_first("SELECT CAST(start_date AS CHAR) FROM counter_totals WHERE counter_name = 'page:1'")
        .unwrap();
    assert!(started.is_some());
}

fn estimate_reads_one_slot_times_the_slot_count() {
    for (dir, slots) in [("generated", 10u32), ("generated/fixed-slots-64", 64)] {
        let db = with_committed(dir);
        let mut conn = db.conn();
        conn.exec_drop("CALL counter_setup('even', 'd', ?, NULL)", (slots,)).unwrap();
        conn.query_drop("UPDATE counters SET counter = 7 WHERE counter_name = 'even'").unwrap();
        conn.exec_drop("CALL counter_setup('skewed', 'd', ?, 100)", (slots,)).unwrap();
        for _ in 0..20 {
            let (even, skewed, missing): (Option<i64>, Option<i64>, Option<i64>) = conn
                .query_first("SELECT counter_estimate('even'), counter_estimate('skewed'), counter_estimate('missing')")
                .unwrap()
                .unwrap();
            assert_eq!(even, Some(7 * i64::from(slots)), "{dir}: equal slots give the exact total");
            assert!(
                [Some(0), Some(100 * i64::from(slots))].contains(&skewed),
                "{dir}: one slot read, {skewed:?}"
            );
            assert_eq!(missing, None, "{dir}");
        }
    }
}

fn lazy_counters_appear_when_first_hit() {
    let db = with_committed("generated/auto-create-64");
    let mut conn = db.conn();
    conn.query_drop("CALL counter_increment('new')").unwrap();
    assert_eq!(slots_of(&mut conn, "new").len(), 1, "one slot row, the one that was hit");
    conn.query_drop("CALL counter_add('new', 41)").unwrap();
    assert_eq!(total(&mut conn, "new"), Some(42));
    assert!(slots_of(&mut conn, "new").len() <= 2);
    let slots: u32 =
        conn.query_first("SELECT slots FROM counter_totals WHERE counter_name = 'new'").unwrap().unwrap();
    assert_eq!(slots, 64, "the view shows the package's slot count, not the rows hit");

    conn.query_drop("CALL counter_reset('new', 5, TRUE)").unwrap();
    assert_eq!(slots_of(&mut conn, "new"), BTreeMap::from([(1, 5)]));
    for _ in 0..10 {
        conn.query_drop("CALL counter_increment('new')").unwrap();
    }
    conn.query_drop("CALL counter_compact('new')").unwrap();
    assert_eq!(slots_of(&mut conn, "new"), BTreeMap::from([(1, 15)]));
    conn.query_drop("CALL counter_delete('new')").unwrap();
    assert_eq!(total(&mut conn, "new"), None);

    let (code, message) = server_error(conn.query_drop("CALL counter_increment(NULL)").unwrap_err());
    assert_eq!((code, message.as_str()), (errno::INVALID_ARGUMENT, "counter name must not be NULL or empty"));
    let (code, _) = server_error(conn.exec_drop("CALL counter_increment(?)", ("n".repeat(51),)).unwrap_err());
    assert_eq!(code, errno::INVALID_ARGUMENT);
    let rows: u32 = conn.query_first("SELECT COUNT(*) FROM counters").unwrap().unwrap();
    assert_eq!(rows, 0, "bad names created nothing");
}

/// 64 clients add to 4 counters that do not exist yet, through the client
/// library, which retries the deadlocks INSERT ... ON DUPLICATE KEY UPDATE
/// can meet.
fn lazy_counters_under_load_are_exact() {
    const CLIENTS: usize = 64;
    const CALLS: usize = 200;
    let db = with_committed("generated/auto-create-64");
    let options = lazy_options();
    let counters = Counters::with_options(db.pool().clone(), &options).max_attempts(20);
    let names = ["a", "b", "c", "d"];

    let sums: Vec<[i64; 4]> = thread::scope(|scope| {
        let clients: Vec<_> = (0..CLIENTS)
            .map(|client| {
                let counters = &counters;
                scope.spawn(move || {
                    let mut sums = [0i64; 4];
                    for call in 0..CALLS {
                        let which = (client + call) % names.len();
                        let delta = (call % 7) as i64 - 3;
                        counters.add(names[which], delta).unwrap_or_else(|error| panic!("{error}"));
                        sums[which] += delta;
                    }
                    sums
                })
            })
            .collect();
        clients.into_iter().map(|client| client.join().unwrap()).collect()
    });

    for (i, name) in names.iter().enumerate() {
        let sent: i64 = sums.iter().map(|sums| sums[i]).sum();
        assert_eq!(counters.get(name).unwrap(), Some(sent), "{name}");
    }
}

fn connection_slot_choice_keeps_a_connection_on_one_slot() {
    let db = with_committed("generated/connection-slots");
    let mut conn = db.conn();
    conn.query_drop("CALL counter_setup('mine', 'd', 16, NULL)").unwrap();
    for _ in 0..30 {
        conn.query_drop("CALL counter_increment('mine')").unwrap();
    }
    let id: u64 = conn.query_first("SELECT CONNECTION_ID()").unwrap().unwrap();
    let slots = slots_of(&mut conn, "mine");
    let used: Vec<u32> = slots.iter().filter(|(_, value)| **value != 0).map(|(slot, _)| *slot).collect();
    assert_eq!(used, [(id % 16) as u32 + 1]);
    assert_eq!(slots[&used[0]], 30);

    // A transaction that increments the same counter twice locks one row.
    let mut tx_conn = db.conn();
    support::without_snapshot_isolation(&mut tx_conn);
    let mut tx = tx_conn.start_transaction(TxOpts::default()).unwrap();
    tx.query_drop("CALL counter_increment('mine')").unwrap();
    tx.query_drop("CALL counter_increment('mine')").unwrap();
    let mut reader = db.conn();
    let locked: u64 = support::read_innodb_trx(
        &mut reader,
        "SELECT MAX(trx_rows_locked) FROM information_schema.innodb_trx AS trx \
         JOIN information_schema.PROCESSLIST AS process ON process.ID = trx.trx_mysql_thread_id \
         WHERE process.DB = DATABASE()",
    )
    .unwrap();
    tx.rollback().unwrap();
    assert_eq!(locked, 1);
}

/// On one server (node position 1 of 1) the Galera package spreads
/// increments over every slot, and its reset, which rewrites every slot in a
/// transaction of its own, keeps the classic reset's answers.
fn the_galera_package_counts_and_resets_like_the_classic_one_on_a_single_server() {
    let db = with_committed("generated/galera");
    let mut conn = db.conn();
    conn.query_drop("CALL counter_setup('hits', 'd', 4, NULL)").unwrap();
    for _ in 0..200 {
        conn.query_drop("CALL counter_increment('hits')").unwrap();
    }
    let slots = slots_of(&mut conn, "hits");
    assert_eq!(slots.values().sum::<i64>(), 200);
    assert!(slots.values().all(|&hits| hits > 0), "every slot is used: {slots:?}");

    for value in [7, 7, 0] {
        conn.query_drop(format!("CALL counter_reset('hits', {value}, FALSE)")).unwrap();
        assert_eq!(slots_of(&mut conn, "hits"), BTreeMap::from([(1, value), (2, 0), (3, 0), (4, 0)]));
    }

    let (code, message) =
        server_error(conn.query_drop("CALL counter_reset('missing', 1, FALSE)").unwrap_err());
    assert_eq!((code, message.as_str()), (errno::UNKNOWN_COUNTER, "unknown counter: 'missing'"));
    assert_eq!(slots_of(&mut conn, "missing"), BTreeMap::new());

    conn.query_drop("START TRANSACTION").unwrap();
    conn.query_drop("CALL counter_add('hits', 5)").unwrap();
    let too_long = format!("CALL counter_reset('{}', 1, FALSE)", "x".repeat(51));
    assert_eq!(server_error(conn.query_drop(&too_long).unwrap_err()).0, errno::INVALID_ARGUMENT);
    conn.query_drop("ROLLBACK").unwrap();
    assert_eq!(total(&mut conn, "hits"), Some(0), "a refused reset leaves the caller's transaction open");
}

/// The Galera reset changes every slot in two statements: on MariaDB in a
/// transaction of the routine's own, on MySQL in the trigger of one
/// statement, which it takes inside a caller's transaction too. An error
/// at the second (here a trigger of the test's, refusing the value the
/// reset writes) undoes the first, in autocommit mode and in the caller's
/// transaction, which stays open.
fn a_galera_reset_failing_at_its_last_statement_changes_nothing() {
    let db = with_committed("generated/galera");
    let mut conn = db.conn();
    conn.query_drop("CALL counter_setup('hits', 'd', 3, NULL)").unwrap();
    conn.query_drop("CALL counter_add('hits', 10)").unwrap();
    conn.query_drop(
        "CREATE TRIGGER refuse_seven BEFORE UPDATE ON counters FOR EACH ROW \
         IF NEW.counter = 7 THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'seven refused'; END IF",
    )
    .unwrap();
    let before = slots_of(&mut conn, "hits");

    let (_, message) = server_error(conn.query_drop("CALL counter_reset('hits', 7, FALSE)").unwrap_err());
    assert_eq!(message, "seven refused");
    assert_eq!(slots_of(&mut db.conn(), "hits"), before, "in autocommit mode");

    conn.query_drop("START TRANSACTION").unwrap();
    conn.query_drop("CALL counter_add('hits', 5)").unwrap();
    let (_, message) = server_error(conn.query_drop("CALL counter_reset('hits', 7, FALSE)").unwrap_err());
    assert_eq!(message, "seven refused");
    assert_eq!(total(&mut conn, "hits"), Some(15), "in the caller's transaction, which keeps its own add");
    conn.query_drop("ROLLBACK").unwrap();
    assert_eq!(slots_of(&mut conn, "hits"), before);

    // Which way each server took: MariaDB records no change it made itself.
    conn.query_drop("DROP TRIGGER refuse_seven").unwrap();
    conn.query_drop("CALL counter_reset('hits', 7, FALSE)").unwrap();
    assert_eq!(total(&mut conn, "hits"), Some(7));
    let recorded: Option<u32> =
        conn.query_first("SELECT COUNT(*) FROM counter_changes WHERE counter_name = 'hits'").unwrap();
    let expected = match support::flavor() {
        Flavor::MariaDb => 0,
        Flavor::MySql => 1,
    };
    assert_eq!(recorded, Some(expected), "changes recorded for the trigger");
}

fn client_errors_from_lazy_packages_stay_typed() {
    let db = with_committed("generated/auto-create-64");
    let options = lazy_options();
    let counters = Counters::with_options(db.pool().clone(), &options);
    assert!(matches!(counters.reset("never", 1, StartDate::Keep), Err(CounterError::NotFound(_))));
    assert!(matches!(counters.increment(""), Err(CounterError::InvalidArgument(_))));
}
