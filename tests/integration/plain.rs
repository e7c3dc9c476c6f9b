//! The client's plain mode on each server: a database holding only the
//! table of `plain_tables.sql`, no routine, and an account granted no
//! EXECUTE. Its calls mean what the routines' calls mean, refuse what they
//! refuse with the same errors, share a table with routine clients
//! exactly, and count exactly under load through every handle.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use mysql::prelude::Queryable;
use mysql::{Pool, TxOpts};
use slotted_counters::defaults::SLOT_COUNT_LIFETIME;
use slotted_counters::sqlx::Executor;
use slotted_counters::sqlx::mysql::MySqlPoolOptions;
use slotted_counters::{
    AsyncCounters, Cluster, ConfigError, CounterError, Counters, Keep, NewCounter, PackageOptions, Period,
    Reconcile, StartDate,
};
use slotted_counters_cli::{render, script};

use crate::support::call_script::{
    assert_alike, assert_anchors, awaited_script_of_calls, script_client, script_of_calls, script_pool,
    script_session,
};
use crate::support::{self, Database, on_each_server};

on_each_server!(
    plain_calls_mean_what_routine_calls_mean,
    plain_refusals_match_the_routines,
    increments_spread_over_every_slot_and_no_other,
    a_shrink_loses_no_delta_and_a_growth_is_used_within_the_lifetime,
    plain_and_routine_clients_share_a_table_exactly,
    a_period_the_plain_mode_tracks_counts_the_routines_writes,
    threads_count_exactly_through_calls_and_coalescing,
    tasks_count_exactly_through_the_async_client,
    calls_on_the_callers_connection_commit_or_roll_back_with_it,
    a_deadlocked_plain_call_is_retried,
    a_lazy_package_creates_counters_and_keeps_its_bound,
    a_name_longer_than_an_older_table_holds_is_refused_in_a_non_strict_session,
    a_package_of_its_own_names_serves_every_plain_call_from_its_own_tables,
    a_deleted_counter_leaves_no_period_behind_in_either_mode,
    every_call_answers_in_the_plain_mode_as_the_routines_answer,
    every_call_answers_alike_inside_a_callers_transaction_too,
    the_async_client_answers_as_the_sync_one_in_either_mode,
    every_call_answers_alike_in_sessions_of_other_sql_modes,
);

/// [`support::plain_database`], with a pool of its account.
fn plain_database(options: &PackageOptions) -> (Database, Pool) {
    let (db, url) = support::plain_database(options);
    (db, Pool::new(url.as_str()).unwrap())
}

fn plain(options: &PackageOptions) -> (Database, Counters) {
    let (db, pool) = plain_database(options);
    (db, Counters::builder(pool).package(options).plain_sql().build().unwrap())
}

fn fixed(slots: u32) -> PackageOptions {
    PackageOptions::builder().fixed_slots(slots).build().unwrap()
}

fn lazy(slots: u32) -> PackageOptions {
    PackageOptions::builder().fixed_slots(slots).auto_create(true).build().unwrap()
}

fn plain_calls_mean_what_routine_calls_mean() {
    let (db, counters) = plain(&PackageOptions::default());
    counters.setup("downloads", NewCounter::new("release downloads").slots(16)).unwrap();
    counters.setup("stock", NewCounter::new("units in store").initial_value(10)).unwrap();
    for _ in 0..5 {
        counters.increment("downloads").unwrap();
    }
    counters.add("downloads", 95).unwrap();
    counters.add("stock", -4).unwrap();
    counters.add("stock", 0).unwrap();
    assert_eq!(counters.get("downloads").unwrap(), Some(100));
    assert_eq!(counters.get("Downloads").unwrap(), None, "names compare as written");
    assert_eq!(counters.get_many(["stock", "nope", "downloads"]).unwrap(), [Some(6), None, Some(100)]);
    let unknown = counters.add_many([("downloads", 50), ("stock", 4), ("DOWNLOADS", -50)]).unwrap_err();
    assert!(matches!(unknown, CounterError::NotFound { .. }), "{unknown:?}");
    assert_eq!(counters.get_many(["downloads", "stock"]).unwrap(), [Some(100), Some(6)], "all or nothing");
    counters.add_many([("downloads", 50), ("stock", 4)]).unwrap();
    assert_eq!(counters.get_many(["downloads", "stock"]).unwrap(), [Some(150), Some(10)]);

    let slots: u32 = db
        .conn()
        .query_first("SELECT COUNT(*) FROM counters WHERE counter_name = 'downloads'")
        .unwrap()
        .unwrap();
    assert_eq!(slots, 16);
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
    counters.reset("downloads", 7, StartDate::Keep).unwrap();
    counters.reset("downloads", 8, StartDate::Now).unwrap();
    assert_eq!(counters.get("downloads").unwrap(), Some(8));
    assert!(start_date("downloads") > started, "StartDate::Now moves the start date");
    counters.delete("downloads").unwrap();
    assert_eq!(counters.get("downloads").unwrap(), None);
    assert!(matches!(counters.delete("downloads"), Err(CounterError::NotFound { .. })));

    let galera = PackageOptions::builder().cluster(Cluster::Galera).build().unwrap();
    let Err(ConfigError::InvalidOption(message)) =
        Counters::builder(db.pool().clone()).package(&galera).plain_sql().build()
    else {
        panic!("a Galera package served in plain SQL")
    };
    assert!(message.contains("without --cluster"), "{message}");
}

/// Fills every slot of counter `name` to the bound, as no call can.
fn fill_to_bound(db: &Database, name: &str, bound: i64) {
    db.conn().exec_drop("UPDATE counters SET counter = ? WHERE counter_name = ?", (bound, name)).unwrap();
}

/// A call of the client, as a test makes it on a `Counters`.
type CallOn<'a> = dyn Fn(&Counters) -> Result<(), CounterError> + 'a;

/// Each bad call, made once through the routines and once in plain SQL,
/// fails with the same variant and the same message.
fn plain_refusals_match_the_routines() {
    for options in [PackageOptions::default(), fixed(8)] {
        let with_routines = Database::new();
        script::run(&mut with_routines.conn(), &render::setup_sql(&options).unwrap()).unwrap();
        let routines = Counters::builder(with_routines.pool().clone()).package(&options).build().unwrap();
        let (plain_db, plain) = plain(&options);
        let bound = options.slot_bound();
        for (db, counters) in [(&with_routines, &routines), (&plain_db, &plain)] {
            counters.setup("exists", NewCounter::new("d")).unwrap();
            counters.setup("at_bound", NewCounter::new("d")).unwrap();
            fill_to_bound(db, "at_bound", bound);
        }
        let long_description = "d".repeat(256);
        let calls: Vec<(&str, Box<CallOn<'_>>)> = vec![
            ("setup twice", Box::new(|c| c.setup("exists", NewCounter::new("d")))),
            ("setup with no slot", Box::new(|c| c.setup("s0", NewCounter::new("d").slots(0)))),
            ("setup with too many slots", Box::new(|c| c.setup("s", NewCounter::new("d").slots(1025)))),
            ("setup with a long description", Box::new(|c| c.setup("s", NewCounter::new(&long_description)))),
            (
                "setup past the bound",
                Box::new(move |c| c.setup("s", NewCounter::new("d").initial_value(bound + 1))),
            ),
            ("setup of a blank name", Box::new(|c| c.setup("  ", NewCounter::new("d")))),
            ("increment of a missing counter", Box::new(|c| c.increment("missing"))),
            ("add 0 to a missing counter", Box::new(|c| c.add("missing", 0))),
            ("add past the bound", Box::new(|c| c.add("at_bound", 1))),
            ("add more than the bound", Box::new(move |c| c.add("exists", bound + 1))),
            ("batch with a missing counter", Box::new(|c| c.add_many([("exists", 1), ("missing", 1)]))),
            ("reset of a missing counter", Box::new(|c| c.reset("missing", 0, StartDate::Keep))),
            ("reset past the bound", Box::new(move |c| c.reset("exists", -bound - 1, StartDate::Keep))),
            ("delete of a missing counter", Box::new(|c| c.delete("missing"))),
        ];
        for (call, make) in &calls {
            let expected = make(&routines).unwrap_err();
            let got = make(&plain).unwrap_err();
            assert_eq!(
                (got.code(), got.to_string()),
                (expected.code(), expected.to_string()),
                "{call}, fixed slots: {:?}",
                options.slots()
            );
        }
        let totals = routines.get_many(["exists", "at_bound"]).unwrap();
        assert_eq!(totals[0], Some(0), "nothing applied");
        assert_eq!(plain.get_many(["exists", "at_bound"]).unwrap(), totals, "nothing applied");
    }
}

/// An increment picks among exactly the counter's slots: every one of
/// them is hit, none past them is created or aimed at.
fn increments_spread_over_every_slot_and_no_other() {
    for options in [PackageOptions::default(), fixed(4)] {
        let (db, counters) = plain(&options);
        counters.setup("spread", NewCounter::new("d").slots(4)).unwrap();
        for _ in 0..400 {
            counters.increment("spread").unwrap();
        }
        let slots = support::slots_of(&mut db.conn(), "spread");
        assert_eq!(slots.keys().copied().collect::<Vec<_>>(), [1, 2, 3, 4]);
        assert!(slots.values().all(|&count| count > 40), "every slot takes its share: {slots:?}");
        assert_eq!(slots.values().sum::<i64>(), 400);
    }
}

/// A shrink removes slots the client may still aim at: their increments
/// go to slot 1 and the count is read again. A growth is seen within
/// `SLOT_COUNT_LIFETIME`.
fn a_shrink_loses_no_delta_and_a_growth_is_used_within_the_lifetime() {
    let db = support::with_default_package(&[]);
    let counters = Counters::builder(db.pool().clone()).plain_sql().build().unwrap();
    counters.setup("resized", NewCounter::new("d").slots(16)).unwrap();
    counters.increment("resized").unwrap();
    db.conn().query_drop("CALL counter_resize('resized', 2)").unwrap();
    for _ in 0..200 {
        counters.increment("resized").unwrap();
    }
    let slots = support::slots_of(&mut db.conn(), "resized");
    assert_eq!(slots.keys().copied().collect::<Vec<_>>(), [1, 2]);
    assert_eq!(slots.values().sum::<i64>(), 201);
    // Still aiming at 16 slots, the client would send 7 in 8 increments to
    // slot 1 through the fallback: read again, it shares them evenly.
    assert!(slots[&2] > 60, "the count was read again after the shrink: {slots:?}");

    db.conn().query_drop("CALL counter_resize('resized', 8)").unwrap();
    let deadline = Instant::now() + SLOT_COUNT_LIFETIME + Duration::from_secs(2);
    let mut made = 201;
    while support::slots_of(&mut db.conn(), "resized")
        .into_iter()
        .all(|(slot, count)| slot <= 2 || count == 0)
    {
        assert!(Instant::now() < deadline, "no slot above 2 used within the lifetime");
        counters.increment("resized").unwrap();
        made += 1;
        thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(counters.get("resized").unwrap(), Some(made));
}

/// A team moving to an engine without routines runs both clients on one
/// table for a while: their counts add up exactly.
fn plain_and_routine_clients_share_a_table_exactly() {
    let db = support::with_default_package(&[]);
    let routines = Counters::new(db.pool().clone()).unwrap();
    let plain = Counters::builder(db.pool().clone()).plain_sql().build().unwrap();
    routines.setup("hot", NewCounter::new("d").slots(4)).unwrap();
    plain.setup("other", NewCounter::new("d").slots(4)).unwrap();
    let per_thread = 200;
    thread::scope(|scope| {
        for client in [&routines, &plain, &routines, &plain, &routines, &plain, &routines, &plain] {
            scope.spawn(move || {
                for round in 0..per_thread {
                    if round % 10 == 0 {
                        client.add_many([("hot", 1), ("other", 2)]).unwrap();
                    } else {
                        client.increment("hot").unwrap();
                    }
                }
            });
        }
    });
    let batches = 8 * per_thread / 10;
    assert_eq!(routines.get_many(["hot", "other"]).unwrap(), [Some(8 * per_thread), Some(2 * batches)]);
}

/// A counter made by `counter_setup` tracks no period, and its slots say
/// so for the routines' writes to skip the periods: once the plain mode
/// tracks one for it, the routines' writes count in it too.
fn a_period_the_plain_mode_tracks_counts_the_routines_writes() {
    let db = support::with_default_package(&[]);
    let routines = Counters::new(db.pool().clone()).unwrap();
    let plain = Counters::builder(db.pool().clone()).plain_sql().build().unwrap();
    routines.setup("views", NewCounter::new("d").slots(4)).unwrap();
    routines.increment("views").unwrap();
    plain.track("views", Period::Hour, Keep::All).unwrap();
    for _ in 0..5 {
        routines.increment("views").unwrap();
    }
    plain.add("views", 2).unwrap();
    let now = SystemTime::now();
    let hours = (now - Duration::from_secs(3_600), now + Duration::from_secs(3_600));
    assert_eq!(routines.get("views").unwrap(), Some(8));
    assert_eq!(
        routines.get_range("views", Period::Hour, hours.0, hours.1).unwrap(),
        Some(7),
        "every write made once the period was tracked"
    );
}

/// A delete takes the counter's periods and buckets with it, in the plain
/// mode as `counter_delete` does: a counter set up again under its name
/// tracks no period, counts from 0, and meets no limit of the one deleted.
fn a_deleted_counter_leaves_no_period_behind_in_either_mode() {
    let (plain_db, plain) = plain(&PackageOptions::default());
    let routines_db = support::with_default_package(&[]);
    let routines = Counters::new(routines_db.pool().clone()).unwrap();
    for (db, counters, mode) in [(&plain_db, &plain, "plain"), (&routines_db, &routines, "routines")] {
        counters.setup("views", NewCounter::new("d").slots(4)).unwrap();
        counters.track("views", Period::Hour, Keep::All).unwrap();
        counters.track("views", Period::Day, Keep::Last(7)).unwrap();
        counters.limit("views", Period::Hour, Some(10)).unwrap();
        counters.add("views", 9).unwrap();
        counters.delete("views").unwrap();
        let left = |table: &str| -> u64 {
            db.conn()
                .query_first(format!("SELECT COUNT(*) FROM {table} WHERE counter_name = 'views'"))
                .unwrap()
                .unwrap()
        };
        assert_eq!((left("counter_periods"), left("counter_buckets")), (0, 0), "{mode}: left behind");

        counters.setup("views", NewCounter::new("d").slots(4)).unwrap();
        assert_eq!(counters.room("views").unwrap(), [], "{mode}: the old limit");
        counters.add("views", 8).unwrap();
        assert_eq!(counters.get("views").unwrap(), Some(8), "{mode}");
        let no_hour =
            counters.series("views", Period::Hour, SystemTime::now(), SystemTime::now()).unwrap_err();
        assert!(matches!(no_hour, CounterError::InvalidArgument { .. }), "{mode}: {no_hour:?}");
    }
}

/// 64 threads on two hot counters: single calls and a coalescing handle,
/// every increment counted once.
fn threads_count_exactly_through_calls_and_coalescing() {
    let (_db, counters) = plain(&PackageOptions::default());
    counters.setup("calls", NewCounter::new("d").slots(64)).unwrap();
    counters.setup("coalesced", NewCounter::new("d").slots(64)).unwrap();
    let coalescing = Arc::new(counters.coalescing());
    let per_thread = 50;
    thread::scope(|scope| {
        for thread in 0..64 {
            let (counters, coalescing) = (&counters, &coalescing);
            scope.spawn(move || {
                for _ in 0..per_thread {
                    if thread % 2 == 0 {
                        counters.increment("calls").unwrap();
                    } else {
                        coalescing.increment("coalesced").unwrap();
                    }
                }
            });
        }
    });
    assert_eq!(counters.get_many(["calls", "coalesced"]).unwrap(), [Some(32 * per_thread); 2]);
}

fn tasks_count_exactly_through_the_async_client() {
    let options = PackageOptions::default();
    let (db, _) = plain_database(&options);
    let url = db.account("tasks", &["SELECT, INSERT, UPDATE, DELETE ON {db}.*"]).url;
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(4).enable_all().build().unwrap();
    runtime.block_on(async {
        let pool = MySqlPoolOptions::new().max_connections(16).connect(&url).await.unwrap();
        let counters = AsyncCounters::builder(pool).package(&options).plain_sql().build().unwrap();
        counters.setup("hot", NewCounter::new("d").slots(64)).await.unwrap();
        let coalescing = counters.coalescing();
        let tasks: Vec<_> = (0..64)
            .map(|task| {
                let (counters, coalescing) = (counters.clone(), coalescing.clone());
                tokio::spawn(async move {
                    for _ in 0..50 {
                        if task % 2 == 0 {
                            counters.increment("hot").await.unwrap();
                        } else {
                            coalescing.increment("hot").await.unwrap();
                        }
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
        assert_eq!(counters.get("hot").await.unwrap(), Some(64 * 50));
        let error = counters.delete("missing").await.unwrap_err();
        assert!(matches!(error, CounterError::NotFound { .. }), "{error:?}");
    });
}

/// On the caller's connection, a plain call joins the caller's transaction;
/// a batch or a delete of several statements runs in a savepoint there,
/// and in a transaction of its own in autocommit mode.
fn calls_on_the_callers_connection_commit_or_roll_back_with_it() {
    let (db, counters) = plain(&PackageOptions::default());
    counters.setup("a", NewCounter::new("d")).unwrap();
    counters.setup("b", NewCounter::new("d")).unwrap();
    let pool = db.pool();

    let mut tx = pool.start_transaction(TxOpts::default()).unwrap();
    counters.on(&mut tx).add_many([("a", 1), ("b", 1)]).unwrap();
    counters.on(&mut tx).delete("b").unwrap();
    tx.rollback().unwrap();
    assert_eq!(counters.get_many(["a", "b"]).unwrap(), [Some(0), Some(0)], "rolled back with the caller");

    let mut tx = pool.start_transaction(TxOpts::default()).unwrap();
    counters.on(&mut tx).increment("a").unwrap();
    let error = counters.on(&mut tx).add_many([("a", 1), ("missing", 1)]).unwrap_err();
    assert!(matches!(error, CounterError::NotFound { .. }), "{error:?}");
    tx.commit().unwrap();
    assert_eq!(counters.get("a").unwrap(), Some(1), "the failed batch rolled back to its savepoint only");

    let mut conn = pool.get_conn().unwrap();
    let error = counters.on(&mut conn).add_many([("a", 1), ("missing", 1)]).unwrap_err();
    assert!(matches!(error, CounterError::NotFound { .. }), "{error:?}");
    counters.on(&mut conn).add_many([("a", 1), ("b", 1)]).unwrap();
    assert_eq!(
        counters.get_many(["a", "b"]).unwrap(),
        [Some(2), Some(1)],
        "autocommit: another connection sees the batch its own transaction committed"
    );
}

fn a_deadlocked_plain_call_is_retried() {
    let (db, counters) = plain(&PackageOptions::default());
    counters.setup("d", NewCounter::new("d").slots(4)).unwrap();
    let before = support::deadlocks(&mut db.conn());
    let outcome = thread::scope(|scope| {
        support::deadlock_against(
            &db,
            || scope.spawn(|| counters.reset("d", 50, StartDate::Keep)),
            |caller| caller.join().expect("the caller panicked"),
        )
    });
    assert!(outcome.is_ok(), "{outcome:?}");
    assert!(support::deadlocks(&mut db.conn()) > before, "the server saw no deadlock");
    assert_eq!(counters.get("d").unwrap(), Some(50));
}

fn a_lazy_package_creates_counters_and_keeps_its_bound() {
    let options = lazy(8);
    let (db, counters) = plain(&options);
    for _ in 0..100 {
        counters.increment("lazy").unwrap();
    }
    counters.add("lazy", -30).unwrap();
    assert_eq!(counters.get("lazy").unwrap(), Some(70));
    let slots: BTreeSet<u32> = support::slots_of(&mut db.conn(), "lazy").into_keys().collect();
    assert!(slots.iter().all(|slot| (1..=8).contains(slot)) && slots.len() > 4, "{slots:?}");

    let bound = options.slot_bound();
    counters.setup("full", NewCounter::new("d")).unwrap();
    fill_to_bound(&db, "full", bound);
    let error = counters.add("full", 1).unwrap_err();
    assert_eq!(error.to_string(), format!("a slot would pass {bound} either way, for counter: 'full'"));
    counters.reset("lazy", 5, StartDate::Keep).unwrap();
    assert_eq!(counters.get("lazy").unwrap(), Some(5));
    counters.delete("lazy").unwrap();
    assert!(matches!(counters.reset("lazy", 0, StartDate::Keep), Err(CounterError::NotFound { .. })));
    assert!(matches!(counters.delete("lazy"), Err(CounterError::NotFound { .. })));
}

/// Tables made at 50 characters (an earlier default), written by plain
/// clients built with the default options (128) in non-strict sessions,
/// which cut a name too long for its column with only a warning: a setup,
/// and a lazy package's first add, of a name longer than the table holds
/// are refused, and nothing is cut into the 50-character counter.
fn a_name_longer_than_an_older_table_holds_is_refused_in_a_non_strict_session() {
    for auto_create in [false, true] {
        let narrow = PackageOptions::builder()
            .name_length(50)
            .auto_create(auto_create)
            .fixed_slots(4)
            .build()
            .unwrap();
        let (db, url) = support::plain_database(&narrow);
        let non_strict = mysql::OptsBuilder::from_opts(mysql::Opts::from_url(&url).unwrap())
            .init(vec!["SET SESSION sql_mode = ''"]);
        let options = PackageOptions::builder().auto_create(auto_create).fixed_slots(4).build().unwrap();
        let counters =
            Counters::builder(Pool::new(non_strict).unwrap()).package(&options).plain_sql().build().unwrap();
        let short = "k".repeat(50);
        counters.setup(&short, NewCounter::new("d").initial_value(7)).unwrap();
        let long = format!("{short}-and-more");
        let mut refusals = vec![counters.setup(&long, NewCounter::new("d")).unwrap_err()];
        match counters.add(&long, 5).unwrap_err() {
            // Without auto-create an add creates nothing: no such counter.
            CounterError::NotFound { .. } if !auto_create => {}
            refused => refusals.push(refused),
        }
        for refused in refusals {
            assert!(
                matches!(&refused, CounterError::InvalidArgument { message, .. }
                    if message.starts_with("counter name is longer than 50 characters")),
                "auto_create {auto_create}: {refused:?}"
            );
        }
        assert_eq!(counters.get(&short).unwrap(), Some(7), "auto_create {auto_create}: nothing cut into it");
        let names: u64 =
            db.conn().query_first("SELECT COUNT(DISTINCT counter_name) FROM counters").unwrap().unwrap();
        assert_eq!(names, 1, "auto_create {auto_create}");
    }
}

/// A package of its own names (`--table hits --prefix hit_`) on a database
/// holding only its plain tables: writes with ids, batches, a period, a
/// quota, a bound and a reconcile of a set all go to its tables, and refuse
/// and count as they do under the default names. The sessions' clock
/// stands still, so that no hour ends between the writes.
fn a_package_of_its_own_names_serves_every_plain_call_from_its_own_tables() {
    let options = PackageOptions::builder().table("hits").prefix("hit_").build().unwrap();
    let (db, url) = support::plain_database(&options);
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_795_608_000);
    let clocked = mysql::OptsBuilder::from_opts(mysql::Opts::from_url(&url).unwrap())
        .init(vec!["SET TIMESTAMP = 1795608000.5"]);
    let pool = Pool::new(clocked).unwrap();
    let mut tables: Vec<String> = db.conn().query("SHOW TABLES").unwrap();
    tables.sort();
    assert_eq!(tables, ["hit_buckets", "hit_periods", "hit_writes", "hits"], "its tables alone");
    let counters = Counters::builder(pool).package(&options).plain_sql().write_ids().build().unwrap();
    counters.setup("home", NewCounter::new("page hits").slots(4)).unwrap();
    counters.setup("stock", NewCounter::new("units in store").initial_value(5)).unwrap();
    counters.bound("stock", 0..=5).unwrap();
    counters.track("home", Period::Day, Keep::All).unwrap();
    counters.limit("home", Period::Hour, Some(10)).unwrap();
    counters.increment("home").unwrap();
    counters.add_many([("home", 2), ("stock", -5)]).unwrap();
    let past_bound = counters.add("stock", -1).unwrap_err();
    assert!(matches!(past_bound, CounterError::PastBound { .. }), "{past_bound:?}");
    let past_limit = counters.add("home", 8).unwrap_err();
    assert!(
        matches!(past_limit, CounterError::PastLimit { period: Period::Hour, limit: 10, room: 7, .. }),
        "{past_limit:?}"
    );
    assert_eq!(counters.get_many(["home", "stock"]).unwrap(), [Some(3), Some(0)]);
    assert_eq!(counters.get_period("home", Period::Hour, now).unwrap(), Some(3));

    let drifts = counters.reconcile(Reconcile::query("SELECT 'home', 5").set("ho")).unwrap();
    let corrections: Vec<(String, Option<i64>)> =
        drifts.iter().map(|drift| (drift.name.clone(), drift.drift())).collect();
    assert_eq!(corrections, [("home".to_owned(), Some(2))]);
    assert_eq!(counters.get("home").unwrap(), Some(5));
    let written: i64 = db.conn().query_first("SELECT COUNT(*) FROM hit_writes").unwrap().unwrap();
    assert!(written > 0, "the writes with ids are recorded in hit_writes");
    let slots: i64 = db
        .conn()
        .query_first("SELECT CAST(SUM(counter) AS SIGNED) FROM hits WHERE counter_name = 'home'")
        .unwrap()
        .unwrap();
    assert_eq!(slots, 5);
}

/// The same script of calls, through the routines and through the plain
/// mode on a database of plain tables alone, in sessions of
/// [`script_session`]: every call answers alike, call by call, in the default,
/// a fixed-slot and a lazy package, with write ids and without. The script
/// meets each feature with the others: bounds, periods, limits, late
/// writes, a delete and a counter set up again under its name, bad numbers
/// and names.
fn every_call_answers_in_the_plain_mode_as_the_routines_answer() {
    for (options, write_ids) in [
        (PackageOptions::default(), false),
        (PackageOptions::default(), true),
        (fixed(8), false),
        (lazy(8), false),
        (lazy(8), true),
    ] {
        let with_routines = support::with_package(&options);
        let (_plain_db, plain_url) = support::plain_database(&options);
        let routines = script_client(script_pool(&with_routines.url()), &options, write_ids, false);
        let plain = script_client(script_pool(&plain_url), &options, write_ids, true);

        let expected = script_of_calls(&routines);
        assert_anchors(&expected, options.auto_create());
        let got = script_of_calls(&plain);
        assert_alike(&expected, &got, &format!("{:?}, write ids: {write_ids}", options.slots()));
    }
}

/// [`script_of_calls`] on a connection of the caller's, in one transaction
/// left open to the end: in both modes alike, with write ids and without.
fn every_call_answers_alike_inside_a_callers_transaction_too() {
    let options = PackageOptions::default();
    for write_ids in [false, true] {
        let with_routines = support::with_package(&options);
        let (_plain_db, plain_url) = support::plain_database(&options);
        let transcript = |url: &str, plain: bool| {
            let pool = script_pool(url);
            let counters = script_client(pool.clone(), &options, write_ids, plain);
            let mut conn = pool.get_conn().unwrap();
            let mut tx = conn.start_transaction(TxOpts::default()).unwrap();
            let answers = script_of_calls(&counters.on(&mut tx));
            tx.commit().unwrap();
            answers
        };
        let expected = transcript(&with_routines.url(), false);
        assert_anchors(&expected, false);
        let got = transcript(&plain_url, true);
        assert_alike(&expected, &got, &format!("in a transaction, write ids: {write_ids}"));
    }
}

/// The script of calls through the async client (sqlx), with the routines and
/// in the plain mode, on its pool and in a caller's transaction, with write
/// ids and without: every answer is the sync client's through the routines.
fn the_async_client_answers_as_the_sync_one_in_either_mode() {
    let options = PackageOptions::default();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    for write_ids in [false, true] {
        let with_routines = support::with_package(&options);
        let routines = script_client(script_pool(&with_routines.url()), &options, write_ids, false);
        let expected = script_of_calls(&routines);
        assert_anchors(&expected, false);
        for (plain, in_transaction) in [(false, false), (true, false), (false, true), (true, true)] {
            let (_db, url) = if plain {
                support::plain_database(&options)
            } else {
                let db = support::with_package(&options);
                let url = db.url();
                (db, url)
            };
            let got = runtime.block_on(async {
                let pool = MySqlPoolOptions::new()
                    .after_connect(|conn, _| {
                        Box::pin(async move { conn.execute(script_session().as_str()).await.map(drop) })
                    })
                    .connect(&url)
                    .await
                    .unwrap();
                let builder = AsyncCounters::builder(pool.clone()).package(&options);
                let builder = if write_ids { builder.write_ids() } else { builder };
                let counters = if plain { builder.plain_sql() } else { builder }.build().unwrap();
                if !in_transaction {
                    return awaited_script_of_calls(&counters).await;
                }
                let mut tx = pool.begin().await.unwrap();
                let answers = awaited_script_of_calls(&counters.on(&mut tx)).await;
                tx.commit().await.unwrap();
                answers
            });
            let case =
                format!("async, plain: {plain}, in a transaction: {in_transaction}, write ids: {write_ids}");
            assert_alike(&expected, &got, &case);
        }
    }
}

/// The script of calls in sessions of other SQL modes than the server's
/// default, the routines' and the plain mode's: every answer is the one of
/// a session of the default mode. The plain mode's statements run in the
/// application's mode (the routines keep the installer's): `ANSI` reads a
/// double-quoted text as a name, `''` is not strict, and the others change
/// escapes, grouping, padding and dates.
fn every_call_answers_alike_in_sessions_of_other_sql_modes() {
    let options = PackageOptions::default();
    let reference = support::with_package(&options);
    let expected = script_of_calls(&script_client(script_pool(&reference.url()), &options, false, false));
    for mode in ["ANSI", "TRADITIONAL", "", "NO_BACKSLASH_ESCAPES,ONLY_FULL_GROUP_BY,PAD_CHAR_TO_FULL_LENGTH"]
    {
        for plain in [false, true] {
            let (_db, url) = if plain {
                support::plain_database(&options)
            } else {
                let db = support::with_package(&options);
                let url = db.url();
                (db, url)
            };
            let session = [script_session(), format!("SET sql_mode = '{mode}'")];
            let opts =
                mysql::OptsBuilder::from_opts(mysql::Opts::from_url(&url).unwrap()).init(session.to_vec());
            let got = script_of_calls(&script_client(Pool::new(opts).unwrap(), &options, false, plain));
            assert_alike(&expected, &got, &format!("sql_mode '{mode}', plain: {plain}"));
        }
    }
}
