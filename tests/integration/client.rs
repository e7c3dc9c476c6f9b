//! The Rust client API against a live server: every call, typed errors, and
//! retries of real deadlocks.

use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use mysql::{AccessMode, TxOpts};
use slotted_counters::{
    ClientBuilder, CounterError, Counters, ErrorKind, NewCounter, PackageOptions, RetryBudget, StartDate,
};
use slotted_counters_cli::{render, script};
use slotted_counters_core::package::{errno, server_errno};

use crate::support::{self, Database, on_each_server};

on_each_server!(
    client_calls_every_routine,
    client_errors_are_typed,
    client_uses_the_package_prefix,
    calls_inside_the_callers_transaction_commit_with_it,
    deadlocked_call_is_retried_and_succeeds,
    deadlock_inside_the_callers_transaction_is_not_retried,
    retries_stop_after_the_attempts_of_the_budget,
    rollbacks_are_tried_again_after_growing_pauses,
    a_time_budget_retries_lock_wait_timeouts_until_it_is_spent,
    a_kept_connection_holds_no_transaction_after_a_failed_call,
    kept_connections_go_back_to_the_pool_with_the_client,
    a_kept_connection_the_server_closed_is_replaced,
    a_call_the_pool_cannot_serve_in_time_fails_unsent,
    a_client_whose_server_speaks_german_retries_as_in_english,
);

/// A database with the default package installed, and a client for it.
fn installed() -> (Database, Counters) {
    let db = support::with_default_package(&[]);
    let counters = Counters::new(db.pool().clone()).unwrap();
    (db, counters)
}

/// A client on `db`'s pool, built with what `settings` sets.
fn built(
    db: &Database,
    settings: impl FnOnce(ClientBuilder<mysql::Pool>) -> ClientBuilder<mysql::Pool>,
) -> Counters {
    settings(Counters::builder(db.pool().clone())).build().unwrap()
}

fn client_calls_every_routine() {
    let (db, counters) = installed();
    counters.setup("downloads", NewCounter::new("release downloads").slots(16)).unwrap();
    counters.setup("stock", NewCounter::new("units in store").initial_value(10)).unwrap();
    for _ in 0..5 {
        counters.increment("downloads").unwrap();
    }
    counters.add("downloads", 95).unwrap();
    counters.add("stock", -4).unwrap();
    assert_eq!(counters.get("downloads").unwrap(), Some(100));
    assert_eq!(counters.get("Downloads").unwrap(), None, "names compare as written");
    assert_eq!(counters.get_many(["stock", "nope", "downloads"]).unwrap(), [Some(6), None, Some(100)]);
    assert_eq!(counters.get_many(Vec::<&str>::new()).unwrap(), []);
    let unknown = counters.add_many([("downloads", 50), ("stock", 4), ("DOWNLOADS", -50)]).unwrap_err();
    assert!(matches!(unknown, CounterError::NotFound { .. }), "{unknown:?}");
    assert_eq!(counters.get_many(["downloads", "stock"]).unwrap(), [Some(100), Some(6)], "all or nothing");
    counters.add_many([("downloads", 50), ("stock", 4)]).unwrap();
    assert_eq!(counters.get_many(["downloads", "stock"]).unwrap(), [Some(150), Some(10)]);
    counters.add_many(Vec::<(String, i64)>::new()).unwrap();

    let start_date = |name: &str| -> String {
        db.conn()
            .exec_first("SELECT CAST(MIN(start_date) AS CHAR) FROM counters WHERE counter_name = ?", (name,))
            .unwrap()
            .unwrap()
    };
    // As if counting had started an hour ago: a start date set now differs.
    db.conn()
        .query_drop(
            "UPDATE counters SET start_date = start_date - INTERVAL 1 HOUR WHERE counter_name = 'downloads'",
        )
        .unwrap();
    let started = start_date("downloads");
    counters.reset("downloads", 7, StartDate::Keep).unwrap();
    assert_eq!((counters.get("downloads").unwrap(), start_date("downloads")), (Some(7), started.clone()));
    counters.reset("downloads", 8, StartDate::Now).unwrap();
    assert_eq!(counters.get("downloads").unwrap(), Some(8));
    assert!(start_date("downloads") > started, "StartDate::Now moves the start date");
    counters.delete("downloads").unwrap();
    assert_eq!(counters.get("downloads").unwrap(), None);
}

fn client_errors_are_typed() {
    // Its own: the end drops a routine.
    let db = support::with_own_package(&PackageOptions::default());
    let counters = Counters::new(db.pool().clone()).unwrap();
    counters.setup("exists", NewCounter::new("d")).unwrap();
    let error = counters.setup("exists", NewCounter::new("d")).unwrap_err();
    assert!(
        matches!(&error, CounterError::AlreadyExists { message, .. } if message == "counter already exists: 'exists'"),
        "{error:?}"
    );
    let error = counters.increment("missing").unwrap_err();
    assert!(
        matches!(&error, CounterError::NotFound { message, .. } if message == "unknown counter: 'missing'"),
        "{error:?}"
    );
    for error in [
        counters.add("missing", 2),
        counters.reset("missing", 0, StartDate::Keep),
        counters.delete("missing"),
    ] {
        assert!(matches!(error, Err(CounterError::NotFound { .. })), "{error:?}");
    }
    let error = counters.add_many([("exists", 1), ("missing", 1)]).unwrap_err();
    assert!(
        matches!(&error, CounterError::NotFound { message, .. } if message == "unknown counter: 'missing'"),
        "{error:?}"
    );
    assert_eq!(counters.get("exists").unwrap(), Some(0), "a batch naming a missing counter applies nothing");
    let error = counters.setup("zero", NewCounter::new("d").slots(0)).unwrap_err();
    assert!(
        matches!(&error, CounterError::InvalidArgument { message, .. } if message.contains("not 0")),
        "{error:?}"
    );
    let error = counters.setup("", NewCounter::new("d")).unwrap_err();
    assert!(matches!(error, CounterError::InvalidArgument { .. }), "{error:?}");

    // The same, without matching variants: number, SQLSTATE, what to do next.
    // The counter's name, whole where the message cut it.
    let long = "x".repeat(129);
    let refusals = [
        (counters.increment("missing"), errno::UNKNOWN_COUNTER, ErrorKind::NotFound, "missing"),
        (
            counters.setup("exists", NewCounter::new("d")),
            errno::ALREADY_EXISTS,
            ErrorKind::AlreadyExists,
            "exists",
        ),
        (counters.increment(&long), errno::INVALID_ARGUMENT, ErrorKind::InvalidArgument, &long),
        (
            counters.add_many([("exists", 1), ("it's", 1)]),
            errno::UNKNOWN_COUNTER,
            ErrorKind::NotFound,
            "it's",
        ),
    ];
    for (outcome, code, kind, name) in refusals {
        let error = outcome.unwrap_err();
        assert_eq!(
            (error.code(), error.sqlstate(), error.is_retryable(), error.may_have_applied()),
            (Some(code), Some("23000"), false, false),
            "{error:?}"
        );
        assert_eq!((error.kind(), error.counter()), (kind, Some(name)), "{error:?}");
    }

    db.conn().query_drop("DROP PROCEDURE counter_increment").unwrap();
    let started = Instant::now();
    let error = counters.increment("exists").unwrap_err();
    let waited = started.elapsed();
    assert!(
        matches!(&error, CounterError::NotInstalled(message) if message.contains("counter_increment does not exist")),
        "a routine missing for good says the package is not installed: {error:?}"
    );
    assert!(error.to_string().contains("slotted-counters install"), "{error}");
    assert!(
        (slotted_counters::defaults::REINSTALL_WINDOW..slotted_counters::defaults::REINSTALL_WINDOW * 2)
            .contains(&waited),
        "waited {waited:?} for the routine to come back"
    );
}

fn client_uses_the_package_prefix() {
    let db = Database::new();
    let options = PackageOptions::builder().table("hits").prefix("hit_").build().unwrap();
    script::run(&mut db.conn(), &render::setup_sql(&options).unwrap()).unwrap();
    let counters = Counters::builder(db.pool().clone()).package(&options).build().unwrap();
    counters.setup("home", NewCounter::new("d").slots(3)).unwrap();
    counters.increment("home").unwrap();
    counters.add_many([("home", 2)]).unwrap();
    assert_eq!(counters.get_many(["home"]).unwrap(), [Some(3)]);
    let rows: u32 = db.conn().query_first("SELECT COUNT(*) FROM hits").unwrap().unwrap();
    assert_eq!(rows, 3);
}

fn calls_inside_the_callers_transaction_commit_with_it() {
    let (db, counters) = installed();
    counters.setup("orders", NewCounter::new("d").slots(4)).unwrap();
    let mut tx = db.pool().start_transaction(TxOpts::default()).unwrap();
    counters.on(&mut tx).increment("orders").unwrap();
    counters.on(&mut tx).add("orders", 4).unwrap();
    counters.on(&mut tx).add_many([("orders", 2)]).unwrap();
    assert_eq!(
        counters.on(&mut tx).get("orders").unwrap(),
        Some(7),
        "the transaction sees its own increments"
    );
    tx.rollback().unwrap();
    assert_eq!(counters.get("orders").unwrap(), Some(0));

    // A transaction the caller made read-only refuses the write (1792).
    let mut tx =
        db.pool().start_transaction(TxOpts::default().set_access_mode(Some(AccessMode::ReadOnly))).unwrap();
    let refused = counters.on(&mut tx).increment("orders").unwrap_err();
    assert_eq!((refused.kind(), refused.code()), (ErrorKind::ReadOnly, Some(1792)), "{refused:?}");
    assert_eq!(counters.on(&mut tx).get("orders").unwrap(), Some(0), "a read is no write");
}

/// [`support::deadlock_against`], with `call` on a thread of its own.
fn deadlock_against<T: Send>(db: &Database, call: impl FnOnce() -> T + Send) -> T {
    thread::scope(|scope| {
        support::deadlock_against(
            db,
            || scope.spawn(call),
            |caller| caller.join().expect("the caller panicked"),
        )
    })
}

fn deadlocked_call_is_retried_and_succeeds() {
    let (db, counters) = installed();
    counters.setup("d", NewCounter::new("d").slots(4)).unwrap();
    let before = support::deadlocks(&mut db.conn());

    let outcome = deadlock_against(&db, || counters.reset("d", 50, StartDate::Keep));

    assert!(outcome.is_ok(), "{outcome:?}");
    assert!(support::deadlocks(&mut db.conn()) > before, "the server saw no deadlock");
    assert_eq!(counters.get("d").unwrap(), Some(50), "the retried reset ran after the other transaction");
}

/// A client whose sessions get the server's messages in German retries
/// what it retries in English, by number: a deadlock, lock wait timeouts,
/// and a routine missing while a re-install replaces it; each call
/// succeeds.
fn a_client_whose_server_speaks_german_retries_as_in_english() {
    let db = Database::new();
    script::run(&mut db.conn(), &render::setup_sql(&PackageOptions::default()).unwrap()).unwrap();
    let opts = mysql::OptsBuilder::from_opts(mysql::Opts::from_url(&db.url()).unwrap())
        .init(vec![support::GERMAN, "SET SESSION innodb_lock_wait_timeout = 1"]);
    let pool = mysql::Pool::new(opts).unwrap();
    support::speak_german(&mut pool.get_conn().unwrap());
    let counters = Counters::builder(pool).retry(RetryBudget::Time(Duration::from_secs(20))).build().unwrap();
    counters.setup("d", NewCounter::new("d").slots(4)).unwrap();

    let before = support::deadlocks(&mut db.conn());
    let outcome = deadlock_against(&db, || counters.reset("d", 50, StartDate::Keep));
    assert!(outcome.is_ok(), "{outcome:?}");
    assert!(support::deadlocks(&mut db.conn()) > before, "the server saw no deadlock");

    // Every slot held for 2.5 s: a try gives up its wait after 1 s (1205),
    // so a call that returns after the hold ended was tried again.
    let mut holder = db.conn();
    holder.query_drop("START TRANSACTION").unwrap();
    holder.query_drop("UPDATE counters SET counter = counter + 1 WHERE counter_name = 'd'").unwrap();
    let started = Instant::now();
    let release = thread::spawn(move || {
        thread::sleep(Duration::from_millis(2500));
        holder.query_drop("COMMIT").unwrap();
    });
    let outcome = counters.increment("d");
    let waited = started.elapsed();
    release.join().unwrap();
    assert!(outcome.is_ok(), "{outcome:?}");
    assert!(waited >= Duration::from_millis(2500), "waited past a lock wait timeout: {waited:?}");

    // The routine dropped, as a re-install on MySQL drops it, and created
    // again 300 ms later.
    let mut admin = db.conn();
    let create: String = admin
        .query_first::<mysql::Row, _>("SHOW CREATE PROCEDURE counter_increment")
        .unwrap()
        .and_then(|row| row.get("Create Procedure"))
        .unwrap();
    admin.query_drop("DROP PROCEDURE counter_increment").unwrap();
    let re_create = thread::spawn(move || {
        thread::sleep(Duration::from_millis(300));
        admin.query_drop(create).unwrap();
    });
    let outcome = counters.increment("d");
    re_create.join().unwrap();
    assert!(outcome.is_ok(), "rode through the missing routine: {outcome:?}");
    assert_eq!(counters.get("d").unwrap(), Some(50 + 4 + 2), "the reset, the holder's 4, two increments");
}

fn deadlock_inside_the_callers_transaction_is_not_retried() {
    let (db, counters) = installed();
    counters.setup("d", NewCounter::new("d").slots(4)).unwrap();

    let outcome = deadlock_against(&db, || {
        let mut tx = db.pool().start_transaction(TxOpts::default()).unwrap();
        let outcome = counters.on(&mut tx).reset("d", 50, StartDate::Keep);
        drop(tx);
        outcome
    });

    let error = outcome.unwrap_err();
    assert_eq!(error.code(), Some(server_errno::DEADLOCK), "{error:?}");
    assert!(error.is_retryable(), "the caller may run its transaction again");
    assert_eq!(counters.get("d").unwrap(), Some(2), "only the other transaction's two increments landed");
}

fn retries_stop_after_the_attempts_of_the_budget() {
    let (db, _) = installed();
    let counters = built(&db, |builder| builder.retry(RetryBudget::Attempts(1)));
    counters.setup("d", NewCounter::new("d").slots(4)).unwrap();

    let outcome = deadlock_against(&db, || counters.reset("d", 50, StartDate::Keep));

    let error = outcome.unwrap_err();
    assert_eq!(
        (error.code(), error.is_retryable(), error.may_have_applied()),
        (Some(server_errno::DEADLOCK), true, false)
    );
}

/// A call the server rolls back every time is tried as often as the budget
/// says, no more, and with pauses between the tries: a time budget holds a
/// handful of them.
fn rollbacks_are_tried_again_after_growing_pauses() {
    let db = support::rolling_back_every_increment();

    let four_tries = built(&db, |builder| builder.retry(RetryBudget::Attempts(4)));
    let error = four_tries.increment("a").unwrap_err();
    assert_eq!((error.code(), error.is_retryable()), (Some(server_errno::DEADLOCK), true), "{error:?}");
    assert_eq!(support::tries(&db), 4, "four tries in all");

    let budgeted = built(&db, |builder| builder.retry(RetryBudget::Time(support::ROLLBACK_BUDGET)));
    let error = budgeted.increment("a").unwrap_err();
    assert_eq!(error.code(), Some(server_errno::DEADLOCK), "{error:?}");
    let tries = support::tries(&db) - 4;
    assert!(
        (3..=support::MOST_TRIES_IN_BUDGET).contains(&tries),
        "{tries} tries in {:?}",
        support::ROLLBACK_BUDGET
    );
}

/// A client whose sessions give up a lock wait after one second, and try
/// again for as long as `budget`.
fn impatient(db: &Database, budget: Duration) -> Counters {
    let opts = mysql::OptsBuilder::from_opts(mysql::Opts::from_url(&db.url()).unwrap())
        .init(vec!["SET SESSION innodb_lock_wait_timeout = 1"]);
    Counters::builder(mysql::Pool::new(opts).unwrap()).retry(RetryBudget::Time(budget)).build().unwrap()
}

fn a_time_budget_retries_lock_wait_timeouts_until_it_is_spent() {
    let (db, counters) = installed();
    counters.setup("one", NewCounter::new("one slot").slots(1)).unwrap();
    // Holds the counter's only slot for `seconds`, or until the returned
    // sender says, then commits.
    let hold = |seconds: u64| {
        let mut holder = db.conn();
        holder.query_drop("START TRANSACTION").unwrap();
        holder.query_drop("UPDATE counters SET counter = counter + 100 WHERE counter_name = 'one'").unwrap();
        let (release, released) = mpsc::channel::<()>();
        let holder = thread::spawn(move || {
            let _ = released.recv_timeout(Duration::from_secs(seconds));
            holder.query_drop("COMMIT").unwrap();
        });
        (release, holder)
    };

    let (_release, holder) = hold(3);
    let outcome = impatient(&db, Duration::from_secs(20)).increment("one");
    holder.join().unwrap();
    assert!(outcome.is_ok(), "tries after 1205 until the lock was free: {outcome:?}");

    // The lock outlasts any number of tries: it is held until the client
    // gives up. Within a 1.5 s budget the last try starts before 1.5 s and
    // waits 1 s; a client that ignored the budget for its five default
    // tries would wait over 5 s.
    let (release, holder) = hold(60);
    let started = Instant::now();
    let outcome = impatient(&db, Duration::from_millis(1500)).increment("one");
    let waited = started.elapsed();
    release.send(()).unwrap();
    holder.join().unwrap();
    let error = outcome.unwrap_err();
    assert_eq!((error.code(), error.is_retryable()), (Some(server_errno::LOCK_WAIT_TIMEOUT), true));
    assert!(waited < Duration::from_millis(4200), "gave up when its time was spent, after {waited:?}");
    assert_eq!(counters.get("one").unwrap(), Some(201));
}

/// The next call after one the package refused runs on the same kept
/// connection, and commits on its own: the refused call left no
/// transaction open there.
fn a_kept_connection_holds_no_transaction_after_a_failed_call() {
    let (db, _) = installed();
    let counters = built(&db, |builder| builder.keep_connections(1));
    counters.setup("a", NewCounter::new("d").slots(1)).unwrap();
    for _ in 0..3 {
        let refused = counters.add_many([("a", 1), ("missing", 1)]).unwrap_err();
        assert!(matches!(refused, CounterError::NotFound { .. }), "{refused:?}");
        let refused = counters.reset("missing", 0, StartDate::Keep).unwrap_err();
        assert!(matches!(refused, CounterError::NotFound { .. }), "{refused:?}");
        counters.increment("a").unwrap();
    }
    assert_eq!(support::total(&mut db.conn(), "a"), Some(3), "every increment committed, seen elsewhere");
}

/// Kept connections are out of the application's pool while the client
/// lives, and back in it, reset, once every clone of the client is dropped.
fn kept_connections_go_back_to_the_pool_with_the_client() {
    let db = Database::new();
    script::run(&mut db.conn(), &render::setup_sql(&PackageOptions::default()).unwrap()).unwrap();
    let opts = mysql::OptsBuilder::from_opts(mysql::Opts::from_url(&db.url()).unwrap())
        .pool_opts(mysql::PoolOpts::default().with_constraints(mysql::PoolConstraints::new(0, 1).unwrap()));
    let pool = mysql::Pool::new(opts).unwrap();
    let counters = Counters::builder(pool.clone()).keep_connections(1).build().unwrap();
    counters.setup("a", NewCounter::new("d")).unwrap();
    let clone = counters.clone();
    clone.increment("a").unwrap();

    let wait = Duration::from_millis(300);
    assert!(pool.try_get_conn(wait).is_err(), "the client keeps the pool's only connection");
    drop(counters);
    assert!(pool.try_get_conn(wait).is_err(), "a clone still keeps it");
    drop(clone);
    let mut conn = pool.try_get_conn(wait).expect("the dropped client gave its connection back");
    let total: Option<i64> = conn.query_first("SELECT counter_get('a')").unwrap().flatten();
    assert_eq!(total, Some(1));
}

/// A call waits for a busy pool for as long as the client's pool timeout,
/// then fails with `PoolTimedOut`, never sent; once a connection is free
/// again, the next call runs.
fn a_call_the_pool_cannot_serve_in_time_fails_unsent() {
    let db = support::with_default_package(&[]);
    let opts = mysql::OptsBuilder::from_opts(mysql::Opts::from_url(&db.url()).unwrap())
        .pool_opts(mysql::PoolOpts::default().with_constraints(mysql::PoolConstraints::new(0, 1).unwrap()));
    let pool = mysql::Pool::new(opts).unwrap();
    let timeout = Duration::from_millis(400);
    let counters = Counters::builder(pool.clone()).keep_connections(0).pool_timeout(timeout).build().unwrap();
    counters.setup("a", NewCounter::new("d")).unwrap();

    let held = pool.get_conn().unwrap();
    let (answered, answer) = mpsc::channel();
    let caller = counters.clone();
    let started = Instant::now();
    let call = thread::spawn(move || answered.send(caller.increment("a")));
    let outcome = answer.recv_timeout(Duration::from_secs(5));
    let waited = started.elapsed();
    drop(held);
    call.join().unwrap().ok();
    let error = outcome.expect("the call gave up within 5 s").unwrap_err();
    assert!(matches!(error, CounterError::PoolTimedOut { .. }), "{error:?}");
    assert!(!error.may_have_applied() && !error.is_retryable(), "{error:?}");
    // The `mysql` pool may wait its timeout twice when woken for nothing.
    assert!(waited >= timeout && waited < 2 * timeout + Duration::from_millis(500), "waited {waited:?}");

    counters.increment("a").unwrap();
    assert_eq!(support::total(&mut db.conn(), "a"), Some(1), "the timed-out call was never sent");
}

/// A kept connection idle for a while is checked before a call uses it: one
/// the server closed meanwhile (KILL, `wait_timeout`) is replaced, and the
/// call succeeds. The client checks one idle for any time here, not the
/// default second.
fn a_kept_connection_the_server_closed_is_replaced() {
    let (db, _) = installed();
    let counters =
        built(&db, |builder| builder.keep_connections(1).check_kept_connections_after(Duration::ZERO));
    counters.setup("a", NewCounter::new("d")).unwrap();
    counters.increment("a").unwrap();
    let mut conn = db.conn();
    let kept: Vec<u64> = support::despite_emoji_elsewhere(|| {
        conn.query(
            "SELECT ID FROM information_schema.PROCESSLIST WHERE DB = DATABASE() AND ID <> CONNECTION_ID()",
        )
    })
    .unwrap();
    for id in kept {
        let _ = db.conn().query_drop(format!("KILL {id}"));
    }
    counters.increment("a").unwrap();
    assert_eq!(counters.get("a").unwrap(), Some(2));
}
