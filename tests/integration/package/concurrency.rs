//! Increments under contention: one locked row each, uniform slots, exact
//! totals under 64 clients, and increments racing deletes and resets.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;
use std::time::Instant;

use mysql::PooledConn;
use mysql::prelude::Queryable;
use slotted_counters_cli::script;
use slotted_counters_core::Feature;
use slotted_counters_core::package::errno;

use super::{Package, call};

use crate::support::{self, server_error, slots_of, total};

/// Runs `sql` inside a transaction and tells how it went and how many rows
/// it held locked before the rollback.
fn rows_locked_by(conn: &mut PooledConn, sql: &str) -> (Result<(), (u16, String)>, u64) {
    support::without_snapshot_isolation(conn);
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

pub(super) fn increment_locks_one_row(package: &Package) {
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
pub(super) fn broken_increment_is_caught(package: &Package) {
    let script = std::fs::read_to_string(package.setup_sql()).unwrap();
    let random_slot = match package.fixed_slots {
        Some(slots) => format!("FLOOR(RAND() * {slots}) + 1"),
        None => "FLOOR(RAND() * v_slots) + 1".to_owned(),
    };
    // The first UPDATE of counter_add and counter_increment, and of
    // counter_add_at, which shares it: the one an increment of a counter
    // that tracks no period and has no bound makes.
    let updates = if package.has(Feature::Periods) { 3 } else { 2 };
    // At the routine's top level, or inside the IF of a package whose
    // slot count's read says whether a counter takes it.
    let forms = ["     ", "         "].map(|indent| {
        let at = |slot: &str| {
            format!("SET `counter` = `counter` + v_delta\n{indent}WHERE `counter_name` = p_name AND `counter_id` = {slot}\n")
        };
        (at("v_slot"), at(&random_slot))
    });
    let found: usize = forms.iter().map(|(correct, _)| script.matches(correct.as_str()).count()).sum();
    assert_eq!(found, updates, "the UPDATE this test breaks is where it expects");
    let broken = forms
        .iter()
        .fold(script.clone(), |script, (correct, broken)| script.replace(correct.as_str(), broken));

    let db = package.empty_database();
    script::run(&mut db.conn(), &broken).unwrap();
    let mut conn = db.conn();
    call(&mut conn, "CALL counter_setup(?, ?, ?, ?)", ("hot", "d", package.slots(64), None::<i64>)).unwrap();
    let most = (0..5).map(|_| rows_locked_by(&mut conn, "CALL counter_increment('hot')").1).max().unwrap();
    assert!(most > 1, "the broken increment locked only {most} row");
}

/// The rows and the lock structures InnoDB holds for one transaction of
/// `increments` increments of `name`, before it rolls back.
fn locks_of_increments(conn: &mut PooledConn, name: &str, increments: usize) -> (u64, u64) {
    support::without_snapshot_isolation(conn);
    conn.query_drop("START TRANSACTION").unwrap();
    for _ in 0..increments {
        conn.exec_drop("CALL counter_increment(?)", (name,)).unwrap();
    }
    let locks = support::read_innodb_trx(
        conn,
        "SELECT trx_rows_locked, trx_lock_structs FROM information_schema.innodb_trx \
         WHERE trx_mysql_thread_id = CONNECTION_ID()",
    )
    .expect("the transaction is listed");
    conn.query_drop("ROLLBACK").unwrap();
    locks
}

/// Increments enough to meet a slot expression that can pick a slot outside
/// 1..n. With 2 slots, `ROUND(RAND() * n) + 1` picks slot 3 once in 4
/// increments; with the fixed package's 64 slots, slot 65 once in 128.
fn increments_to_catch_a_missing_slot(package: &Package) -> usize {
    if package.fixed_slots.is_some() { 2_000 } else { 300 }
}

/// A counter `pair` with the package's slot count for 2, followed in the
/// index by another counter, and what many increments of it lock.
fn pair_locks(package: &Package, conn: &mut PooledConn) -> (u64, u64) {
    for name in ["pair", "pairz"] {
        call(conn, "CALL counter_setup(?, ?, ?, ?)", (name, "d", package.slots(2), None::<i64>)).unwrap();
    }
    locks_of_increments(conn, "pair", increments_to_catch_a_missing_slot(package))
}

/// Every increment updates one existing slot and never looks elsewhere: a
/// transaction of many increments locks exactly the counter's slot rows,
/// with one table intention lock and one structure of record locks. A slot
/// outside 1..n would send the increment to the fallback UPDATE of slot 1,
/// which keeps totals right (so totals cannot show it), and its failed
/// UPDATE leaves a gap lock: another structure, and on slot n + 1 another
/// row, the next counter's.
pub(super) fn every_increment_updates_one_existing_slot(package: &Package) {
    let db = package.database();
    let mut conn = db.conn();
    let (rows, structures) = pair_locks(package, &mut conn);
    assert_eq!((rows, structures), (u64::from(package.slots(2)), 2), "rows locked and lock structures");
}

/// The check above must notice a slot expression that picks a slot outside
/// 1..n: `ROUND` instead of `FLOOR` (1 to n + 1), or a missing `+ 1` (0 to n - 1).
pub(super) fn off_by_one_slot_is_caught(package: &Package) {
    let script = std::fs::read_to_string(package.setup_sql()).unwrap();
    let count = package.fixed_slots.map_or_else(|| "v_slots".to_owned(), |slots| slots.to_string());
    let correct = format!("SET v_slot = FLOOR(RAND() * {count}) + 1;");
    assert!(script.contains(&correct), "the slot expression this test breaks is where it expects");
    for broken in [format!("ROUND(RAND() * {count}) + 1"), format!("FLOOR(RAND() * {count})")] {
        let db = package.empty_database();
        script::run(&mut db.conn(), &script.replace(&correct, &format!("SET v_slot = {broken};"))).unwrap();
        if !package.has(Feature::Resize) {
            // No slot goes missing without a resize, and no UPDATE of slot
            // 1 follows one that changed nothing: the increment is refused.
            let mut conn = db.conn();
            call(&mut conn, "CALL counter_setup(?, ?, ?, ?)", ("pair", "d", package.slots(2), None::<i64>))
                .unwrap();
            let refused = (0..50).any(|_| call(&mut conn, "CALL counter_increment('pair')", ()).is_err());
            assert!(refused, "{broken}: every increment passed");
            continue;
        }
        let locks = pair_locks(package, &mut db.conn());
        assert_ne!(locks, (u64::from(package.slots(2)), 2), "{broken} locked what a correct increment does");
    }
}

pub(super) fn slots_are_used_uniformly(package: &Package) {
    let slots = package.slots(20);
    // 200 a slot: enough for a slot with half the traffic to fall outside
    // the bounds below.
    let increments = 200 * slots;
    let db = package.database();
    let mut conn = db.conn();
    call(&mut conn, "CALL counter_setup(?, ?, ?, ?)", ("spread", "d", slots, None::<i64>)).unwrap();
    // One transaction: the point is where increments land, not commit speed.
    conn.query_drop("START TRANSACTION").unwrap();
    for _ in 0..increments {
        conn.query_drop("CALL counter_increment('spread')").unwrap();
    }
    conn.query_drop("COMMIT").unwrap();

    let mut counts = slots_of(&mut conn, "spread");
    assert_eq!(counts.keys().copied().collect::<Vec<_>>(), (1..=slots).collect::<Vec<_>>());
    assert_eq!(counts.values().sum::<i64>(), i64::from(increments));
    // Under snapshot isolation an increment in a transaction share-locks
    // slot 2 and the counter's last slot to read the slot count, and leaves
    // them alone.
    let used = if package.fixed_slots.is_none() && support::snapshot_isolation(&mut conn) {
        for locked in [2, slots] {
            assert_eq!(counts.remove(&locked), Some(0), "slot {locked}, share-locked in a transaction");
        }
        slots - 2
    } else {
        slots
    };
    // Each slot's count is Binomial(n, 1/slots). Six standard deviations
    // either side: a correct package falls outside with probability about
    // 2e-9 per slot (4e-8 for all 20), while a slot that gets half or no
    // traffic (rounding instead of FLOOR, an off-by-one) lands far outside.
    let p = 1.0 / f64::from(used);
    let expected = f64::from(increments) * p;
    let bound = 6.0 * (f64::from(increments) * p * (1.0 - p)).sqrt();
    for (slot, &count) in &counts {
        assert!(
            (count as f64 - expected).abs() <= bound,
            "slot {slot} got {count} increments, expected {expected:.0} ± {bound:.0}: {counts:?}"
        );
    }
}

/// 64 clients × 150 calls mixing increments and signed adds on 4 counters.
pub(super) fn concurrent_increments_and_adds_are_exact(package: &Package) {
    const CLIENTS: usize = 64;
    const CALLS: usize = 75;
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

pub(super) fn increment_never_recreates_a_deleted_counter(package: &Package) {
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

pub(super) fn reset_keeps_later_increments(package: &Package) {
    const CLIENTS: usize = 8;
    const CALLS: usize = 300;
    const RESET_TO: i64 = 1_000;
    let db = package.database();
    let mut conn = db.conn();
    call(&mut conn, "CALL counter_setup(?, ?, ?, ?)", ("busy", "d", package.slots(8), None::<i64>)).unwrap();
    let done = AtomicUsize::new(0);

    let (reset_sent, reset_returned, calls): (Instant, Instant, Vec<(Instant, Instant)>) =
        thread::scope(|scope| {
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
            let mut reset = db.conn();
            let reset_sent = Instant::now();
            reset.exec_drop("CALL counter_reset('busy', ?, TRUE)", (RESET_TO,)).unwrap();
            let reset_returned = Instant::now();
            let calls =
                clients.into_iter().flat_map(|client| client.join().expect("a client panicked")).collect();
            (reset_sent, reset_returned, calls)
        });

    // An increment that started after the reset returned must count. One
    // acknowledged after the reset was sent may have landed on either side:
    // it may have waited for the reset's locks and been acknowledged before
    // this thread saw the reset return.
    let started_after = calls.iter().filter(|(started, _)| *started > reset_returned).count() as i64;
    let acked_after = calls.iter().filter(|(_, acked)| *acked > reset_sent).count() as i64;
    assert!(started_after > 0, "the reset came too late to test anything");
    let value = total(&mut conn, "busy").unwrap();
    assert!(
        (RESET_TO + started_after..=RESET_TO + acked_after).contains(&value),
        "total {value}, expected {RESET_TO} + between {started_after} and {acked_after}"
    );
}
