//! Bounded counters through the routines, as any client calls them:
//! `counter_bound`, every kind of write refused past a bound with nothing
//! changed, every change keeping each slot within its shares, and sales
//! under 64 clients on every committed package.

use std::collections::BTreeMap;

use mysql::PooledConn;
use mysql::prelude::Queryable;
use slotted_counters::Bound;
use slotted_counters_core::Feature;
use slotted_counters_core::package::errno;

use super::{Slot, assert_within, raw_take, sale, shares};
use crate::support::{self, Database, on_each_server, server_error, total, with_committed};

on_each_server!(
    bounds_are_refused_when_the_total_is_outside_them,
    every_write_past_a_bound_is_refused_with_the_room_left_and_changes_nothing,
    every_change_keeps_each_slot_within_its_shares,
    a_take_its_slot_holds_changes_one_slot_and_one_short_spreads_the_rest,
    a_flash_sale_sells_exactly_the_stock_and_never_below_0,
    a_quota_is_never_exceeded,
    restocking_during_a_sale_sells_every_unit_once,
    takes_in_transactions_at_each_isolation_level_sell_exactly_the_stock,
    every_committed_package_bounds_its_counters,
);

fn with_package() -> Database {
    support::with_package(&slotted_counters::PackageOptions::default())
}

/// The error of `sql`: its number and message.
fn refused(conn: &mut PooledConn, sql: &str) -> (u16, String) {
    server_error(conn.query_drop(sql).expect_err(sql))
}

/// Every slot row of every counter: what a refused call must leave as it was.
fn table(conn: &mut PooledConn) -> BTreeMap<(String, u32), Slot> {
    conn.query_map(
        "SELECT counter_name, counter_id, counter, lowest, highest FROM counters",
        |(name, slot, value, lowest, highest)| ((name, slot), (value, lowest, highest)),
    )
    .unwrap()
    .into_iter()
    .collect()
}

/// `counter_bound` takes NULL or whole numbers within the slot bound, a
/// floor at most the ceiling, and a total within them; both NULL take
/// the bounds away.
fn bounds_are_refused_when_the_total_is_outside_them() {
    let db = with_package();
    let mut conn = db.conn();
    conn.query_drop("CALL counter_setup('stock', 'd', 4, 10)").unwrap();
    for (sql, code, message) in [
        (
            "CALL counter_bound('stock', 11, NULL)",
            errno::INVALID_ARGUMENT,
            "the total is outside the bounds (total 10, floor 11, ceiling NULL), for counter: 'stock'",
        ),
        (
            "CALL counter_bound('stock', NULL, 9)",
            errno::INVALID_ARGUMENT,
            "the total is outside the bounds (total 10, floor NULL, ceiling 9), for counter: 'stock'",
        ),
        (
            "CALL counter_bound('stock', 5, 3)",
            errno::INVALID_ARGUMENT,
            "the floor must not be above the ceiling (5 > 3), for counter: 'stock'",
        ),
        (
            "CALL counter_bound('stock', 0.5, NULL)",
            errno::INVALID_ARGUMENT,
            "a bound must be NULL or a whole number within 9007199254740991 either way, not 0.5, for counter: 'stock'",
        ),
        (
            "CALL counter_bound('stock', NULL, 9007199254740992)",
            errno::INVALID_ARGUMENT,
            "a bound must be NULL or a whole number within 9007199254740991 either way, not 9007199254740992, for counter: 'stock'",
        ),
        ("CALL counter_bound('missing', 0, NULL)", errno::UNKNOWN_COUNTER, "unknown counter: 'missing'"),
    ] {
        assert_eq!(refused(&mut conn, sql), (code, message.to_owned()), "{sql}");
        assert!(shares(&mut conn, "stock").iter().all(|slot| slot.1.is_none() && slot.2.is_none()));
    }
    conn.query_drop("CALL counter_bound('stock', 10, 10)").unwrap();
    assert_eq!(assert_within(&shares(&mut conn, "stock"), Some(10), Some(10)), 10);
    conn.query_drop("CALL counter_bound('stock', -5, NULL)").unwrap();
    assert_eq!(assert_within(&shares(&mut conn, "stock"), Some(-5), None), 10);
    conn.query_drop("CALL counter_bound('stock', NULL, NULL)").unwrap();
    assert_eq!(assert_within(&shares(&mut conn, "stock"), None, None), 10);
    conn.query_drop("CALL counter_add('stock', -100)").unwrap();
    assert_eq!(total(&mut conn, "stock"), Some(-90), "unbounded again");
}

/// A write that would take the total past a bound is refused with 9004,
/// SQLSTATE 23000, naming the counter, the bound and the room left, and
/// changes nothing, whichever routine makes it: an increment, an add, a
/// late write, a batch (nothing of it), a write with an id (which may be
/// sent again), a reset.
fn every_write_past_a_bound_is_refused_with_the_room_left_and_changes_nothing() {
    let db = with_package();
    let mut conn = db.conn();
    conn.query_drop("CALL counter_setup('stock', 'd', 8, 5)").unwrap();
    conn.query_drop("CALL counter_setup('quota', 'd', 8, 7)").unwrap();
    conn.query_drop("CALL counter_setup('other', 'd', 8, 0)").unwrap();
    conn.query_drop("CALL counter_bound('stock', 0, NULL)").unwrap();
    conn.query_drop("CALL counter_bound('quota', NULL, 10)").unwrap();
    let floor = "the write would pass the floor 0 (room left: 5), for counter: 'stock'";
    let ceiling = "the write would pass the ceiling 10 (room left: 3), for counter: 'quota'";
    let before = table(&mut conn);
    for (sql, message) in [
        ("CALL counter_add('stock', -6)", floor),
        ("CALL counter_add_at('stock', -6, UTC_TIMESTAMP())", floor),
        (r#"CALL counter_add_many('{"other": 1, "stock": -6}')"#, floor),
        (r#"CALL counter_add_many_once(UNHEX(REPEAT('AB', 16)), '{"stock": -9, "other": 4}')"#, floor),
        ("CALL counter_add_once(UNHEX(REPEAT('CD', 16)), 'stock', -6)", floor),
        ("CALL counter_reset('stock', -1, FALSE)", floor),
        ("CALL counter_add('quota', 4)", ceiling),
        (r#"CALL counter_add_many('{"quota": 4, "other": -1}')"#, ceiling),
        ("CALL counter_reset('quota', 11, TRUE)", ceiling),
    ] {
        let Err(mysql::Error::MySqlError(error)) = conn.query_drop(sql) else {
            panic!("{sql} was not refused")
        };
        assert_eq!(
            (error.code, error.state.as_str(), error.message.as_str()),
            (errno::PAST_BOUND, "23000", message),
            "{sql}"
        );
        assert_eq!(table(&mut conn), before, "{sql} changed something");
    }
    // The refused write with an id recorded nothing: sent again once there
    // is room, it counts.
    conn.query_drop("CALL counter_add('stock', 10)").unwrap();
    conn.query_drop("CALL counter_add_once(UNHEX(REPEAT('CD', 16)), 'stock', -6)").unwrap();
    conn.query_drop("CALL counter_add_once(UNHEX(REPEAT('CD', 16)), 'stock', -6)").unwrap();
    assert_eq!(total(&mut conn, "stock"), Some(9));
    for name in ["stock", "quota"] {
        let bounds = if name == "stock" { (Some(0), None) } else { (None, Some(10)) };
        assert_within(&shares(&mut conn, name), bounds.0, bounds.1);
    }
}

/// Resizes both ways, a compaction, resets and a delete of a bounded
/// counter keep its total and each slot within its shares, with the
/// shares adding up to the bounds; a counter set up again under its name
/// is unbounded.
fn every_change_keeps_each_slot_within_its_shares() {
    let db = with_package();
    let mut conn = db.conn();
    conn.query_drop("CALL counter_setup('c', 'd', 4, 100)").unwrap();
    conn.query_drop("CALL counter_bound('c', -20, 200)").unwrap();
    let within = |conn: &mut PooledConn| assert_within(&shares(conn, "c"), Some(-20), Some(200));
    assert_eq!(within(&mut conn), 100);
    for (sql, slots, value) in [
        ("CALL counter_resize('c', 9)", 9, 100),
        ("CALL counter_add('c', -119)", 9, -19),
        ("CALL counter_resize('c', 3)", 3, -19),
        ("CALL counter_compact('c')", 3, -19),
        ("CALL counter_reset('c', 200, TRUE)", 3, 200),
        ("CALL counter_resize('c', 1)", 1, 200),
        ("CALL counter_add('c', -220)", 1, -20),
        ("CALL counter_resize('c', 64)", 64, -20),
        ("CALL counter_reset('c', 0, FALSE)", 64, 0),
    ] {
        conn.query_drop(sql).unwrap();
        assert_eq!(shares(&mut conn, "c").len(), slots, "{sql}");
        assert_eq!(within(&mut conn), value, "{sql}");
    }
    conn.query_drop("CALL counter_delete('c')").unwrap();
    conn.query_drop("CALL counter_setup('c', 'd', 4, 0)").unwrap();
    conn.query_drop("CALL counter_add('c', -1000)").unwrap();
    assert_eq!(assert_within(&shares(&mut conn, "c"), None, None), -1000, "a new counter has no bound");
}

/// While the slot picked has room, a take changes that slot alone, under
/// one row lock; one whose slot is short takes from the others and spreads
/// what is left evenly; a restock of at least one unit per slot is spread
/// at once, and a smaller return stays in its slot.
fn a_take_its_slot_holds_changes_one_slot_and_one_short_spreads_the_rest() {
    let db = with_package();
    let mut conn = db.conn();
    conn.query_drop("CALL counter_setup('stock', 'd', 4, 100)").unwrap();
    conn.query_drop("CALL counter_bound('stock', 0, NULL)").unwrap();
    let values =
        |conn: &mut PooledConn| shares(conn, "stock").into_iter().map(|slot| slot.0).collect::<Vec<_>>();
    assert_eq!(values(&mut conn), [25, 25, 25, 25]);
    support::without_snapshot_isolation(&mut conn);
    conn.query_drop("START TRANSACTION").unwrap();
    conn.query_drop("CALL counter_add('stock', -3)").unwrap();
    let locked: u64 = support::read_innodb_trx(
        &mut conn,
        "SELECT trx_rows_locked FROM information_schema.innodb_trx WHERE trx_mysql_thread_id = CONNECTION_ID()",
    )
    .unwrap();
    conn.query_drop("COMMIT").unwrap();
    assert_eq!(locked, 1, "a take that fits its slot locks that slot alone");
    let after = values(&mut conn);
    assert_eq!(after.iter().filter(|&&value| value == 22).count(), 1, "{after:?}");
    assert_eq!(after.iter().filter(|&&value| value == 25).count(), 3, "{after:?}");

    conn.query_drop("CALL counter_add('stock', -26)").unwrap();
    assert_eq!(values(&mut conn), [18, 18, 18, 17], "no slot held 26: the 71 left, spread");
    let before = values(&mut conn);
    conn.query_drop("CALL counter_add('stock', 2)").unwrap();
    let changes: Vec<i64> =
        values(&mut conn).iter().zip(&before).map(|(after, before)| after - before).collect();
    assert_eq!(
        changes.iter().filter(|&&change| change != 0).collect::<Vec<_>>(),
        [&2],
        "a return of 2 stays in its slot: {changes:?}"
    );
    conn.query_drop("CALL counter_add('stock', 27)").unwrap();
    assert_eq!(values(&mut conn), [25, 25, 25, 25], "a restock of 27 over 4 slots is spread");
    assert_within(&shares(&mut conn, "stock"), Some(0), None);
}

/// Stock 1,000, 64 clients each taking 1 until refused: exactly 1,000
/// succeed, every refusal is 9004 at the floor with no room, and the total,
/// watched from the slots while the sale runs, is never below 0.
fn a_flash_sale_sells_exactly_the_stock_and_never_below_0() {
    let db = with_package();
    let mut conn = db.conn();
    conn.query_drop("CALL counter_setup('stock', 'd', 64, 1000)").unwrap();
    conn.query_drop("CALL counter_bound('stock', 0, NULL)").unwrap();
    let sale = sale(&db, "stock", (Some(0), None), 64, || raw_take(&db, "stock", -1));
    assert_eq!(sale.sold, 1000);
    assert!(sale.refused.iter().all(|&refusal| refusal == (Bound::Floor, 0)), "{:?}", sale.refused);
    assert!(sale.watched > 0);
    assert_eq!(assert_within(&shares(&mut conn, "stock"), Some(0), None), 0);
}

/// The same from the other side: a quota of 1,000 from 0, 64 clients each
/// drawing 1 until refused at the ceiling.
fn a_quota_is_never_exceeded() {
    let db = with_package();
    let mut conn = db.conn();
    conn.query_drop("CALL counter_setup('quota', 'd', 64, 0)").unwrap();
    conn.query_drop("CALL counter_bound('quota', NULL, 1000)").unwrap();
    let sale = sale(&db, "quota", (None, Some(1000)), 64, || raw_take(&db, "quota", 1));
    assert_eq!(sale.sold, 1000);
    assert!(sale.refused.iter().all(|&refusal| refusal == (Bound::Ceiling, 0)), "{:?}", sale.refused);
    assert_eq!(assert_within(&shares(&mut conn, "quota"), None, Some(1000)), 1000);
}

/// 200 units, then 8 restocks of 100 while 32 clients take: every unit
/// added is sold, none twice. Takers go on after a refusal until the last
/// restock is in.
fn restocking_during_a_sale_sells_every_unit_once() {
    let db = with_package();
    let mut conn = db.conn();
    conn.query_drop("CALL counter_setup('stock', 'd', 16, 200)").unwrap();
    conn.query_drop("CALL counter_bound('stock', 0, NULL)").unwrap();
    let restocked = std::sync::atomic::AtomicBool::new(false);
    let sale = std::thread::scope(|scope| {
        scope.spawn(|| {
            let mut conn = db.conn();
            for _ in 0..8 {
                std::thread::sleep(std::time::Duration::from_millis(20));
                conn.query_drop("CALL counter_add('stock', 100)").unwrap();
            }
            restocked.store(true, std::sync::atomic::Ordering::SeqCst);
        });
        sale(&db, "stock", (Some(0), None), 32, || {
            let mut take = raw_take(&db, "stock", -1);
            let restocked = &restocked;
            move || loop {
                let done = restocked.load(std::sync::atomic::Ordering::SeqCst);
                match take() {
                    Err(_) if !done => std::thread::yield_now(),
                    outcome => return outcome,
                }
            }
        })
    });
    assert_eq!(sale.sold, 1000);
    assert_eq!(assert_within(&shares(&mut conn, "stock"), Some(0), None), 0);
}

/// Takes inside the caller's transactions, at READ COMMITTED, REPEATABLE
/// READ (on MariaDB 11.8 with snapshot isolation) and SERIALIZABLE: each
/// check reads the slots under lock, so the sale is exact at every level.
fn takes_in_transactions_at_each_isolation_level_sell_exactly_the_stock() {
    for level in ["READ COMMITTED", "REPEATABLE READ", "SERIALIZABLE"] {
        let db = with_package();
        let mut conn = db.conn();
        conn.query_drop("CALL counter_setup('stock', 'd', 16, 300)").unwrap();
        conn.query_drop("CALL counter_bound('stock', 0, NULL)").unwrap();
        let sale = sale(&db, "stock", (Some(0), None), 16, || {
            let mut conn = db.conn();
            conn.query_drop(format!("SET SESSION TRANSACTION ISOLATION LEVEL {level}")).unwrap();
            move || loop {
                conn.query_drop("START TRANSACTION").unwrap();
                let outcome =
                    conn.query_drop("CALL counter_add('stock', -1)").and_then(|()| conn.query_drop("COMMIT"));
                match outcome {
                    Ok(()) => return Ok(()),
                    Err(mysql::Error::MySqlError(error)) if [1213, 1020, 1205].contains(&error.code) => {
                        conn.query_drop("ROLLBACK").unwrap();
                    }
                    Err(mysql::Error::MySqlError(error)) if error.code == errno::PAST_BOUND => {
                        conn.query_drop("ROLLBACK").unwrap();
                        let (bound, room) = super::read_refusal(&error.message);
                        return Err(slotted_counters::CounterError::PastBound {
                            message: error.message,
                            name: None,
                            bound,
                            room,
                        });
                    }
                    Err(error) => panic!("{level}: {error}"),
                }
            }
        });
        assert_eq!(sale.sold, 300, "{level}");
        assert_eq!(assert_within(&shares(&mut conn, "stock"), Some(0), None), 0, "{level}");
    }
}

/// Every committed package bounds its counters: a sale of 300 under 16
/// clients on each (a lazy counter gets every slot row when bounded).
fn every_committed_package_bounds_its_counters() {
    for (dir, _) in support::committed_with(Feature::Bounds) {
        let db = with_committed(dir);
        let mut conn = db.conn();
        conn.query_drop("CALL counter_setup('stock', 'd', NULL, 300)").unwrap();
        conn.query_drop("CALL counter_bound('stock', 0, NULL)").unwrap();
        let sale = sale(&db, "stock", (Some(0), None), 16, || raw_take(&db, "stock", -1));
        assert_eq!(sale.sold, 300, "{dir}");
        assert_eq!(assert_within(&shares(&mut conn, "stock"), Some(0), None), 0, "{dir}");
        let (code, _) = refused(&mut conn, r#"CALL counter_add_many('{"stock": -1}')"#);
        assert_eq!(code, errno::PAST_BOUND, "{dir}");
    }
}
