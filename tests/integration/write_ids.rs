//! Writes that carry an id, as any client calls them: `counter_add_once`
//! and `counter_add_many_once` count a write once however often it is sent,
//! record the id in the write's own transaction (never in a transaction of
//! their own inside the caller's), make a second send wait for the first,
//! and `counter_forget_writes` forgets only ids older than its window.

use std::thread;
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use mysql::{PooledConn, TxOpts};
use slotted_counters::defaults::WRITE_ID_WINDOW;
use slotted_counters::{CounterError, Counters, PackageOptions};

use crate::support::{self, Database, on_each_server};

on_each_server!(
    a_write_id_counts_once_however_often_it_is_sent,
    a_write_id_commits_with_its_write_or_not_at_all,
    a_second_send_waits_for_the_first_and_counts_nothing,
    forgetting_writes_keeps_every_id_inside_the_window,
    both_modes_of_the_client_forget_only_ids_older_than_the_window,
    writes_with_ids_forget_expired_ids_as_they_go,
);

const ID: [u8; 16] = *b"write-id-0000001";
const OTHER_ID: [u8; 16] = *b"write-id-0000002";

fn total(conn: &mut PooledConn) -> Option<i64> {
    support::total(conn, "c")
}

fn recorded(conn: &mut PooledConn, id: [u8; 16]) -> bool {
    let count: Option<u32> =
        conn.exec_first("SELECT COUNT(*) FROM counter_writes WHERE write_id = ?", (id.to_vec(),)).unwrap();
    count == Some(1)
}

fn a_write_id_counts_once_however_often_it_is_sent() {
    let db = support::with_default_package(&["c"]);
    let mut conn = db.conn();
    for _ in 0..3 {
        conn.exec_drop("CALL counter_add_once(?, 'c', 5)", (ID.to_vec(),)).unwrap();
        conn.exec_drop("CALL counter_add_many_once(?, ?)", (OTHER_ID.to_vec(), r#"{"c": 2}"#)).unwrap();
    }
    assert_eq!(total(&mut conn), Some(7));
    let error = conn.exec_drop("CALL counter_add_once(?, 'c', 1)", (vec![1u8; 15],)).unwrap_err();
    assert_eq!(support::server_error(error).0, 9003, "an id of 15 bytes");
}

/// The id is recorded by the write's transaction: the caller's, when it
/// has one open, which it may still roll back; a refused write records
/// nothing.
fn a_write_id_commits_with_its_write_or_not_at_all() {
    let db = support::with_default_package(&["c"]);
    let mut conn = db.conn();

    let mut tx = db.pool().start_transaction(TxOpts::default()).unwrap();
    tx.exec_drop("CALL counter_add_once(?, 'c', 5)", (ID.to_vec(),)).unwrap();
    tx.rollback().unwrap();
    assert!(!recorded(&mut conn, ID), "rolled back with the caller's transaction");
    assert_eq!(total(&mut conn), Some(0));

    let error = conn.exec_drop("CALL counter_add_once(?, 'missing', 5)", (ID.to_vec(),)).unwrap_err();
    assert_eq!(support::server_error(error).0, 9001);
    assert!(!recorded(&mut conn, ID), "a refused write records no id");

    let mut tx = db.pool().start_transaction(TxOpts::default()).unwrap();
    tx.exec_drop("CALL counter_add_once(?, 'c', 5)", (ID.to_vec(),)).unwrap();
    tx.exec_drop("CALL counter_add_once(?, 'c', 5)", (ID.to_vec(),)).unwrap();
    assert_eq!(
        tx.query_first::<i64, _>("SELECT counter_get('c')").unwrap(),
        Some(5),
        "once in the transaction"
    );
    tx.commit().unwrap();
    assert!(recorded(&mut conn, ID));
    conn.exec_drop("CALL counter_add_once(?, 'c', 5)", (ID.to_vec(),)).unwrap();
    assert_eq!(total(&mut conn), Some(5));
}

/// A write sent again while its first send is still open waits for it, and
/// then finds its id: the answer of a slow first send may be lost while it
/// still runs.
fn a_second_send_waits_for_the_first_and_counts_nothing() {
    let db = support::with_default_package(&["c"]);
    let mut first = db.pool().start_transaction(TxOpts::default()).unwrap();
    first.exec_drop("CALL counter_add_once(?, 'c', 5)", (ID.to_vec(),)).unwrap();
    thread::scope(|scope| {
        let second = scope.spawn(|| db.conn().exec_drop("CALL counter_add_once(?, 'c', 5)", (ID.to_vec(),)));
        support::wait_for_lock_wait(&mut db.conn());
        first.commit().unwrap();
        second.join().unwrap().unwrap();
    });
    assert_eq!(total(&mut db.conn()), Some(5));
}

fn forgetting_writes_keeps_every_id_inside_the_window() {
    let db: Database = support::with_default_package(&["c"]);
    let mut conn = db.conn();
    conn.exec_drop("CALL counter_add_once(?, 'c', 5)", (ID.to_vec(),)).unwrap();
    conn.exec_drop("CALL counter_add_once(?, 'c', 5)", (OTHER_ID.to_vec(),)).unwrap();
    conn.exec_drop(
        "UPDATE counter_writes SET written_at = NOW(6) - INTERVAL 700 SECOND WHERE write_id = ?",
        (OTHER_ID.to_vec(),),
    )
    .unwrap();
    conn.query_drop("CALL counter_forget_writes(600)").unwrap();
    assert!(recorded(&mut conn, ID), "an id inside the window is kept");
    assert!(!recorded(&mut conn, OTHER_ID), "an id older than the window is forgotten");
    conn.exec_drop("CALL counter_add_once(?, 'c', 5)", (ID.to_vec(),)).unwrap();
    assert_eq!(total(&mut conn), Some(10), "the kept id still counts its write once");
    let error = conn.query_drop("CALL counter_forget_writes(0)").unwrap_err();
    assert_eq!(support::server_error(error).0, 9003);
}

/// `Counters::forget_writes`, through the routines and in plain SQL: the
/// ids older than the window go, the others stay; a window that is not a
/// whole number of seconds from 1 is refused.
fn both_modes_of_the_client_forget_only_ids_older_than_the_window() {
    let db = support::with_default_package(&["c"]);
    let pool = db.pool().clone();
    let modes = [
        ("routines", Counters::builder(pool.clone()).write_ids().build().unwrap()),
        ("plain", Counters::builder(pool).plain_sql().write_ids().build().unwrap()),
    ];
    let mut conn = db.conn();
    let ids = |conn: &mut PooledConn| -> u32 {
        conn.query_first("SELECT COUNT(*) FROM counter_writes").unwrap().unwrap()
    };
    for (mode, counters) in modes {
        conn.query_drop("DELETE FROM counter_writes").unwrap();
        for _ in 0..3 {
            counters.increment("c").unwrap();
        }
        assert_eq!(ids(&mut conn), 3, "{mode}: each increment recorded its id");
        conn.query_drop(
            "UPDATE counter_writes SET written_at = NOW(6) - INTERVAL 700 SECOND ORDER BY written_at LIMIT 1",
        )
        .unwrap();
        counters.forget_writes(WRITE_ID_WINDOW).unwrap();
        assert_eq!(ids(&mut conn), 2, "{mode}: only the id older than the window is forgotten");
        let error = counters.forget_writes(std::time::Duration::from_millis(1500)).unwrap_err();
        assert!(matches!(error, CounterError::InvalidArgument { .. }), "{mode}: {error:?}");
    }
    assert_eq!(total(&mut conn), Some(6));
}

/// With a window of 2 s, a writer with ids writes for 6 s, and the package
/// forgets the expired ids as the writes go, with no call of
/// `counter_forget_writes`: at the end no id is more than 2 s past the
/// window (one write in 16 forgets up to 64, so that would take a second
/// without a forgetting write), and every id of the last second is kept.
fn writes_with_ids_forget_expired_ids_as_they_go() {
    const WINDOW: u32 = 2;
    let options = PackageOptions::builder().write_id_window(WINDOW).build().unwrap();
    let db = Database::new();
    let mut conn = db.conn();
    slotted_counters_cli::script::run(&mut conn, &slotted_counters_cli::render::setup_sql(&options).unwrap())
        .unwrap();
    conn.query_drop("CALL counter_setup('c', 'd', 8, NULL)").unwrap();
    let start = Instant::now();
    let mut writes = 0;
    let mut last_second = Vec::new();
    while start.elapsed() < Duration::from_secs(3 * u64::from(WINDOW)) {
        let id: [u8; 16] = rand::random();
        conn.exec_drop("CALL counter_add_once(?, 'c', 1)", (id.to_vec(),)).unwrap();
        writes += 1;
        if start.elapsed() > Duration::from_secs(3 * u64::from(WINDOW) - 1) {
            last_second.push(id);
        }
    }
    let (kept, stale): (u64, u64) = conn
        .exec_first(
            "SELECT COUNT(*), COALESCE(SUM(written_at < NOW(6) - INTERVAL ? SECOND), 0) FROM counter_writes",
            (WINDOW + 2,),
        )
        .unwrap()
        .unwrap();
    println!(
        "{writes} writes in {:?}: {kept} ids kept, {stale} more than 2 s past the window",
        start.elapsed()
    );
    assert_eq!(stale, 0, "ids long past the window are forgotten");
    assert!(kept < writes, "{kept} of {writes} ids kept");
    for id in last_second {
        assert!(recorded(&mut conn, id), "an id of the last second is kept");
    }
    assert_eq!(total(&mut conn), Some(writes as i64));
}
