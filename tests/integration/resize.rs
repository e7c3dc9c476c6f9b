//! Changing a counter's slot count on a live server: growing and
//! shrinking under load and beside busy neighbours, batches racing it, and
//! the rows a multi-row change of a big counter locks.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;

use mysql::prelude::Queryable;
use slotted_counters_core::package::errno;

use crate::support::{self, on_each_server, server_error, slots_of, total, with_committed};

on_each_server!(
    resize_grows_and_shrinks_keeping_the_total,
    resize_under_load_loses_no_increment,
    resizes_beside_a_busy_neighbour_all_succeed_and_stay_exact,
    routines_over_a_counter_holding_most_of_the_table_lock_its_rows_alone,
    batches_racing_resizes_lose_no_delta,
    fixed_slot_packages_cannot_resize,
);

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

/// A counter shrunk and grown 100 times, each resize a plain `CALL` that
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
        for round in 0..100 {
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
        for round in 0..12 {
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

fn fixed_slot_packages_cannot_resize() {
    let db = with_committed("generated/fixed-slots-64");
    let routines: Vec<String> = db
        .conn()
        .query("SELECT ROUTINE_NAME FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_NAME = 'counter_resize'")
        .unwrap();
    assert!(routines.is_empty());
}
