//! Calls the server interrupts, as applications on a connection of their
//! own meet them: `KILL QUERY` (sent by Connector/J's query timeout,
//! ProxySQL's query timeouts, pt-kill, an operator) and a lock wait
//! timeout. A writing routine leaves no transaction open on the connection,
//! and the next calls on that same connection are counted. MySQL runs no
//! handler of a killed routine: a routine that had opened a transaction of
//! its own left it open there, the next calls joined it, and all of them
//! were lost when the connection closed. The writes an application sends
//! open none; what the routines that still must (a batch, resize,
//! compaction, the resets of lazy and cluster packages) leave open, the
//! next batch ends.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use mysql::{Conn, PooledConn};
use slotted_counters::sqlx::mysql::MySqlPoolOptions;
use slotted_counters::{AsyncCounters, Counters};

use crate::support::{self, Database, StopOnDrop, on_each_server};

on_each_server!(
    a_killed_write_leaves_nothing_open_and_the_next_writes_count,
    a_timed_out_write_leaves_nothing_open_and_the_next_writes_count,
    writes_killed_at_random_count_once_with_ids_and_at_most_once_without,
    a_killed_batch_leaves_no_transaction_to_the_clients_next_call,
    a_killed_change_leaves_nothing_open_and_its_resend_and_the_next_write_count,
);

/// The writing routines an application calls, each tried on a counter named
/// after it.
const ROUTINES: [&str; 4] = ["counter_add_once", "counter_add_many_once", "counter_add", "counter_increment"];

/// Adds 1 to counter `name` through `routine`, with write id `id` where the
/// routine takes one.
fn write(conn: &mut Conn, routine: &str, name: &str, id: [u8; 16]) -> mysql::Result<()> {
    match routine {
        "counter_add_once" => conn.exec_drop("CALL counter_add_once(?, ?, 1)", (id.to_vec(), name)),
        "counter_add_many_once" => {
            conn.exec_drop("CALL counter_add_many_once(?, JSON_OBJECT(?, 1))", (id.to_vec(), name))
        }
        "counter_add" => conn.exec_drop("CALL counter_add(?, 1)", (name,)),
        "counter_increment" => conn.exec_drop("CALL counter_increment(?)", (name,)),
        other => unreachable!("no write through {other}"),
    }
}

/// A write id of 16 printable bytes: MySQL fails a read of
/// `information_schema.innodb_trx` with 3854 while a listed transaction's
/// statement text holds bytes that are not UTF-8, as a prepared call with a
/// random binary id does.
fn readable_id() -> [u8; 16] {
    std::array::from_fn(|_| rand::random_range(b'a'..=b'z'))
}

/// The application's own connection: not a pool's, which would reset it.
fn own_connection(db: &Database) -> Conn {
    Conn::new(mysql::Opts::from_url(&db.url()).unwrap()).unwrap()
}

/// How many transactions connection `id` has open, as InnoDB lists them.
fn open_transactions(conn: &mut PooledConn, id: u32) -> u32 {
    support::read_innodb_trx(
        conn,
        &format!("SELECT COUNT(*) FROM information_schema.innodb_trx WHERE trx_mysql_thread_id = {id}"),
    )
    .unwrap_or_default()
}

/// How a test interrupts a call that waits for a lock.
#[derive(Clone, Copy)]
enum Interruption {
    /// `KILL QUERY` from another connection: 1317.
    Kill,
    /// A one-second `innodb_lock_wait_timeout`: 1205.
    LockWaitTimeout,
}

/// For each writing routine: a call waits for its counter's slot, held by
/// another transaction, and is interrupted there. It leaves no transaction
/// open on its connection; sent again on that connection with the same id,
/// and followed by a second write, both count, as the connection closes.
fn interrupted_writes_leave_nothing_open(interruption: Interruption) {
    let db = support::with_default_package(&ROUTINES);
    for routine in ROUTINES {
        let mut holder = db.conn();
        holder.query_drop("START TRANSACTION").unwrap();
        holder.exec_drop("SELECT * FROM counters WHERE counter_name = ? FOR UPDATE", (routine,)).unwrap();

        let mut conn = own_connection(&db);
        let connection = conn.connection_id();
        if let Interruption::LockWaitTimeout = interruption {
            conn.query_drop("SET SESSION innodb_lock_wait_timeout = 1").unwrap();
        }
        let id = readable_id();
        let error = thread::scope(|scope| {
            let call = scope.spawn(|| write(&mut conn, routine, routine, id));
            if let Interruption::Kill = interruption {
                support::wait_for_lock_wait(&mut db.conn());
                db.conn().query_drop(format!("KILL QUERY {connection}")).unwrap();
            }
            call.join().unwrap().expect_err("the call was interrupted")
        });
        let expected = match interruption {
            Interruption::Kill => 1317,
            Interruption::LockWaitTimeout => 1205,
        };
        assert_eq!(support::server_error(error).0, expected, "{routine}");
        assert_eq!(open_transactions(&mut db.conn(), connection), 0, "{routine} left a transaction open");

        holder.query_drop("ROLLBACK").unwrap();
        write(&mut conn, routine, routine, id)
            .unwrap_or_else(|error| panic!("{routine} sent again: {error}"));
        write(&mut conn, routine, routine, readable_id())
            .unwrap_or_else(|error| panic!("{routine}: {error}"));
        drop(conn);
        assert_eq!(
            support::total(&mut db.conn(), routine),
            Some(2),
            "{routine}: the resend and the next write"
        );
    }
}

fn a_killed_write_leaves_nothing_open_and_the_next_writes_count() {
    interrupted_writes_leave_nothing_open(Interruption::Kill);
}

fn a_timed_out_write_leaves_nothing_open_and_the_next_writes_count() {
    interrupted_writes_leave_nothing_open(Interruption::LockWaitTimeout);
}

/// Writers on connections of their own, two per routine, write to a
/// counter of one slot per routine, which another session holds now and
/// then, while `KILL QUERY` hits, at random moments, calls that wait for a
/// lock there, as a query timeout does, until every routine has had
/// [`KILLS`] calls killed. A writer with ids
/// sends an interrupted write again with its id until it is acknowledged:
/// every write counts once. A writer without ids counts an interrupted
/// write as unknown: the total lies between what was acknowledged and that
/// plus the unknown. Both are read while every writer's connection is
/// still open, so a write acknowledged inside a transaction a killed call
/// left open would be missing.
///
/// The kills aim at lock waits because MariaDB 11.8 breaks under a kill
/// that lands while a statement opens a table with triggers: that table's
/// cached triggers stay broken, and later statements of every connection
/// that gets them fail with 1064 ("Unknown trigger has an error in its
/// body") or 1146 until the table leaves the cache.
fn writes_killed_at_random_count_once_with_ids_and_at_most_once_without() {
    const KILLS: u64 = 5;
    let db = support::with_default_package(&ROUTINES);
    let mut admin = db.conn();
    let writing = AtomicBool::new(true);
    let interrupted = ROUTINES.map(|_| AtomicU64::new(0));
    let acknowledged = ROUTINES.map(|_| AtomicU64::new(0));
    let mut writers: Vec<Conn> =
        ROUTINES.iter().flat_map(|_| [own_connection(&db), own_connection(&db)]).collect();
    let connections: Vec<u32> = writers.iter().map(Conn::connection_id).collect();
    thread::scope(|scope| {
        let _stop = StopOnDrop(&writing);
        let calls: Vec<_> = writers
            .iter_mut()
            .enumerate()
            .map(|(index, conn)| {
                let which = index / 2;
                let (routine, interrupted, acknowledged) =
                    (ROUTINES[which], &interrupted[which], &acknowledged[which]);
                let writing = &writing;
                scope.spawn(move || {
                    let with_id = routine.ends_with("_once");
                    while writing.load(Ordering::SeqCst) {
                        let id = readable_id();
                        loop {
                            match write(conn, routine, routine, id) {
                                Ok(()) => {
                                    acknowledged.fetch_add(1, Ordering::Relaxed);
                                    break;
                                }
                                Err(error) => {
                                    let (code, message) = support::server_error(error);
                                    assert!(
                                        matches!(code, 1317 | 1213 | 1020),
                                        "{routine}: {code} {message}"
                                    );
                                    if code == 1317 {
                                        interrupted.fetch_add(1, Ordering::Relaxed);
                                    }
                                    if !with_id {
                                        break;
                                    }
                                }
                            }
                        }
                    }
                })
            })
            .collect();
        for routine in ROUTINES {
            scope.spawn(|| support::hold_now_and_then(&db, routine, &writing));
        }
        let mut killer = db.conn();
        let deadline = Instant::now() + Duration::from_secs(120);
        while interrupted.iter().any(|count| count.load(Ordering::Relaxed) < KILLS) {
            assert!(Instant::now() < deadline, "too few calls killed: {interrupted:?}");
            thread::sleep(Duration::from_millis(rand::random_range(0..50)));
            let waiting: Option<String> = support::read_innodb_trx(
                &mut killer,
                "SELECT GROUP_CONCAT(trx_mysql_thread_id) FROM information_schema.innodb_trx \
                 WHERE trx_state = 'LOCK WAIT'",
            )
            .flatten();
            let waiting: Vec<u32> =
                waiting.iter().flat_map(|ids| ids.split(',')).filter_map(|id| id.parse().ok()).collect();
            // One waiting call, if any, of each routine short of its kills:
            // each of its two writers' connections in turn.
            for (which, killed) in interrupted.iter().enumerate() {
                let writers = [connections[2 * which], connections[2 * which + 1]];
                let victims: Vec<u32> = writers.into_iter().filter(|id| waiting.contains(id)).collect();
                if killed.load(Ordering::Relaxed) >= KILLS || victims.is_empty() {
                    continue;
                }
                let victim = victims[rand::random_range(0..victims.len())];
                // The call may have ended since: the kill then finds the
                // connection between calls, and its next call, or none, fails.
                killer.query_drop(format!("KILL QUERY {victim}")).unwrap();
            }
        }
        writing.store(false, Ordering::SeqCst);
        for call in calls {
            call.join().unwrap();
        }
    });

    for (which, routine) in ROUTINES.into_iter().enumerate() {
        let total = support::total(&mut admin, routine).unwrap() as u64;
        let acknowledged = acknowledged[which].load(Ordering::Relaxed);
        let interrupted = interrupted[which].load(Ordering::Relaxed);
        println!(
            "{routine} on {:?}: {interrupted} calls killed, {acknowledged} acknowledged, {total} counted",
            support::release()
        );
        if routine.ends_with("_once") {
            assert_eq!(total, acknowledged, "{routine}: each write once");
        } else {
            assert!(
                (acknowledged..=acknowledged + interrupted).contains(&total),
                "{routine}: {total} counted for {acknowledged} acknowledged and {interrupted} killed"
            );
        }
    }
    for connection in connections {
        assert_eq!(open_transactions(&mut admin, connection), 0, "a killed call left a transaction open");
    }
}

/// The clients keep or pool their connections between calls. A batch the
/// server kills while it waits for a slot (on MySQL, with the transaction
/// the routine opened left open) must not pass its connection on as it is:
/// an increment right after it, on the same client, is committed, read
/// from another connection while the client still lives. Through the sync
/// client, which keeps its connections, and the async one on a pool of one
/// connection.
fn a_killed_batch_leaves_no_transaction_to_the_clients_next_call() {
    let db = support::with_default_package(&["held", "sync", "async"]);
    let mut holder = db.conn();
    holder.query_drop("START TRANSACTION").unwrap();
    holder.query_drop("SELECT * FROM counters WHERE counter_name = 'held' FOR UPDATE").unwrap();
    let kill_the_waiting_call = || {
        support::wait_for_lock_wait(&mut db.conn());
        let waiting = support::lock_waiting_connection(&mut db.conn());
        db.conn().query_drop(format!("KILL QUERY {waiting}")).unwrap();
    };

    let counters = Counters::new(db.pool().clone()).unwrap();
    counters.increment("sync").unwrap();
    let error = thread::scope(|scope| {
        let batch = scope.spawn(|| counters.add_many([("held", 1), ("sync", 1)]));
        kill_the_waiting_call();
        batch.join().unwrap().expect_err("the batch was killed")
    });
    assert!(error.may_have_applied(), "{error:?}");
    counters.increment("sync").unwrap();
    assert_eq!(
        support::total(&mut db.conn(), "sync"),
        Some(2),
        "the sync client's increments after the kill"
    );

    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let counters = runtime.block_on(async {
        let pool = MySqlPoolOptions::new().max_connections(1).connect(&db.url()).await.unwrap();
        AsyncCounters::new(pool).unwrap()
    });
    let batch = {
        let counters = counters.clone();
        runtime.spawn(async move { counters.add_many([("held", 1), ("async", 1)]).await })
    };
    kill_the_waiting_call();
    let error = runtime.block_on(batch).unwrap().expect_err("the batch was killed");
    assert!(error.may_have_applied(), "{error:?}");
    runtime.block_on(counters.increment("async")).unwrap();
    assert_eq!(
        support::total(&mut db.conn(), "async"),
        Some(1),
        "the async client's increment after the kill"
    );
    holder.query_drop("ROLLBACK").unwrap();
}

/// A routine that changes more than one row, in the committed package that
/// has it, run on counter `own` of 3 in `slots` slots (`None` where the
/// package fixes them): what `own` reads after it ran.
struct Change {
    package: &'static str,
    slots: Option<u32>,
    call: &'static str,
    total_after: Option<i64>,
    slots_after: usize,
}

/// Every writing routine that changes more than one row, one of each body.
const CHANGES: [Change; 10] = [
    Change {
        package: "generated",
        slots: Some(3),
        call: "CALL counter_add_many(JSON_OBJECT(?, 1))",
        total_after: Some(4),
        slots_after: 3,
    },
    Change {
        package: "generated",
        slots: Some(3),
        call: "CALL counter_resize(?, 6)",
        total_after: Some(3),
        slots_after: 6,
    },
    Change {
        package: "generated",
        slots: Some(3),
        call: "CALL counter_resize(?, 1)",
        total_after: Some(3),
        slots_after: 1,
    },
    Change {
        package: "generated",
        slots: Some(3),
        call: "CALL counter_compact(?)",
        total_after: Some(3),
        slots_after: 3,
    },
    Change {
        package: "generated",
        slots: Some(3),
        call: "CALL counter_reset(?, 5, FALSE)",
        total_after: Some(5),
        slots_after: 3,
    },
    Change {
        package: "generated",
        slots: Some(3),
        call: "CALL counter_delete(?)",
        total_after: None,
        slots_after: 0,
    },
    Change {
        package: "generated/auto-create-64",
        slots: None,
        call: "CALL counter_compact(?)",
        total_after: Some(3),
        slots_after: 1,
    },
    Change {
        package: "generated/auto-create-64",
        slots: None,
        call: "CALL counter_reset(?, 5, FALSE)",
        total_after: Some(5),
        slots_after: 1,
    },
    Change {
        package: "generated/galera",
        slots: Some(3),
        call: "CALL counter_reset(?, 5, FALSE)",
        total_after: Some(5),
        slots_after: 3,
    },
    Change {
        package: "generated/galera",
        slots: Some(3),
        call: "CALL counter_resize(?, 1)",
        total_after: Some(3),
        slots_after: 1,
    },
];

/// Each routine that changes more than one row is killed while it waits for
/// its counter's slots, on the application's own connection, in autocommit
/// mode. It leaves no transaction open there (on MySQL, which runs no
/// handler of a killed routine, the transactions these routines opened
/// stayed open) and has changed nothing. Sent again on that connection, it
/// does its work, and the increment of another counter after it is
/// committed: both read from another connection while the first is still
/// open.
fn a_killed_change_leaves_nothing_open_and_its_resend_and_the_next_write_count() {
    for change in CHANGES {
        let db = support::with_committed(change.package);
        let context = format!("{} in {}", change.call, change.package);
        let mut admin = db.conn();
        admin.exec_drop("CALL counter_setup('own', 'd', ?, 3)", (change.slots,)).unwrap();
        admin.query_drop("CALL counter_setup('next', 'd', NULL, 0)").unwrap();
        let before = support::slots_of(&mut admin, "own");
        let mut holder = db.conn();
        holder.query_drop("START TRANSACTION").unwrap();
        holder.query_drop("SELECT * FROM counters WHERE counter_name = 'own' FOR UPDATE").unwrap();

        let mut conn = own_connection(&db);
        let connection = conn.connection_id();
        let error = thread::scope(|scope| {
            let call = scope.spawn(|| conn.exec_drop(change.call, ("own",)));
            support::wait_for_lock_wait(&mut db.conn());
            db.conn().query_drop(format!("KILL QUERY {connection}")).unwrap();
            call.join().unwrap().expect_err("the call was killed")
        });
        assert_eq!(support::server_error(error).0, 1317, "{context}");
        assert_eq!(open_transactions(&mut admin, connection), 0, "{context} left a transaction open");
        holder.query_drop("ROLLBACK").unwrap();
        assert_eq!(support::slots_of(&mut admin, "own"), before, "{context}: killed, it changed the slots");

        conn.exec_drop(change.call, ("own",)).unwrap_or_else(|error| panic!("{context} sent again: {error}"));
        conn.query_drop("CALL counter_increment('next')").unwrap();
        assert_eq!(
            open_transactions(&mut admin, connection),
            0,
            "{context}: a transaction open after its resend"
        );
        assert_eq!(support::total(&mut admin, "own"), change.total_after, "{context}: sent again");
        assert_eq!(support::slots_of(&mut admin, "own").len(), change.slots_after, "{context}: slots");
        assert_eq!(support::total(&mut admin, "next"), Some(1), "{context}: the increment after it");
    }
}
