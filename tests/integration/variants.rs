//! The committed packages other than the default, on a single server:
//! batches in each, lazy counters, per-connection slots, and the Galera
//! package.

use std::collections::BTreeMap;
use std::thread;

use mysql::TxOpts;
use mysql::prelude::Queryable;
use slotted_counters::options::SlotChoice;
use slotted_counters::{Cluster, CounterError, Counters, PackageOptions, RetryBudget, StartDate};
use slotted_counters_core::Feature;
use slotted_counters_core::package::errno;

use crate::package::escaped_batches;
use crate::support::call_script::{assert_alike, script_client, script_of_calls, script_pool};
use crate::support::{self, Flavor, on_each_server, server_error, slots_of, total, with_committed};

on_each_server!(
    every_committed_package_takes_batches,
    lazy_counters_appear_when_first_hit,
    lazy_counters_under_load_are_exact,
    connection_slot_choice_keeps_a_connection_on_one_slot,
    the_galera_package_counts_and_resets_like_the_classic_one_on_a_single_server,
    a_galera_reset_failing_at_its_last_statement_changes_nothing,
    client_errors_from_lazy_packages_stay_typed,
    the_per_connection_and_galera_packages_answer_as_the_default_does,
);

/// Every committed package takes batches: lazy counters are created by
/// them, the others must exist. Each applies exactly the decoded keys of
/// batches written with every JSON escape.
fn every_committed_package_takes_batches() {
    let unicode_ci = PackageOptions::builder().collation("utf8mb4_unicode_ci").build().unwrap();
    escaped_batches::batches_add_exactly_their_decoded_keys(&support::with_package(&unicode_ci), None, true);
    for (dir, flags) in support::committed_with(Feature::Batches) {
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

/// The options `generated/auto-create-64` is made with.
fn lazy_options() -> PackageOptions {
    PackageOptions::builder().fixed_slots(64).auto_create(true).build().unwrap()
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
    let (code, _) =
        server_error(conn.exec_drop("CALL counter_increment(?)", ("n".repeat(129),)).unwrap_err());
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
    let counters = Counters::builder(db.pool().clone())
        .package(&options)
        .retry(RetryBudget::Attempts(20))
        .build()
        .unwrap();
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
    let too_long = format!("CALL counter_reset('{}', 1, FALSE)", "x".repeat(129));
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
    let counters = Counters::builder(db.pool().clone()).package(&options).build().unwrap();
    assert!(matches!(counters.reset("never", 1, StartDate::Keep), Err(CounterError::NotFound { .. })));
    assert!(matches!(counters.increment(""), Err(CounterError::InvalidArgument { .. })));
}

/// The per-connection slot package and the Galera package (on a single
/// server: its resets take their own path) answer the script of calls as
/// the default package does, call by call.
fn the_per_connection_and_galera_packages_answer_as_the_default_does() {
    let default = PackageOptions::default();
    let reference = support::with_package(&default);
    let expected = script_of_calls(&script_client(script_pool(&reference.url()), &default, false, false));
    for options in [
        PackageOptions::builder().slot_choice(SlotChoice::Connection).build().unwrap(),
        PackageOptions::builder().cluster(Cluster::Galera).build().unwrap(),
    ] {
        let db = support::with_package(&options);
        let got = script_of_calls(&script_client(script_pool(&db.url()), &options, false, false));
        assert_alike(&expected, &got, &format!("{:?}, {:?}", options.slot_choice(), options.cluster()));
    }
}
