//! The plain mode on the engines it exists for, which run no stored
//! routine: TiDB and a Vitess keyspace of two shards (`support::engines`),
//! each the real server, built from its Go module. Every call answers as
//! the routines answer it on MariaDB 10.11, call by call; a quota and a
//! bounded stock are never passed under 32 threads; write ids count every
//! increment once through cut connections; a reconcile under writes leaves
//! every counter equal to its source; and `install` refuses, naming the
//! plain mode.

use std::sync::atomic::{AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, SystemTime};

use mysql::Pool;
use mysql::prelude::Queryable;
use slotted_counters::{
    CounterError, Counters, Keep, NewCounter, PackageOptions, Period, Reconcile, RetryBudget,
};

use crate::reconcile::{self, Writes};
use crate::support::call_script::{
    assert_alike, assert_anchors, script_client, script_clock, script_of_calls_at, script_pool_at,
};
use crate::support::engines::{Engine, on_each_engine};
use crate::support::fault_proxy::FaultProxy;
use crate::support::{self, Release, server, slotted_counters, stderr};

on_each_engine!(
    every_call_answers_as_the_routines_answer_on_mariadb,
    a_quota_is_never_passed_by_32_threads,
    a_bounded_stock_is_sold_exactly_by_32_threads,
    with_write_ids_every_increment_counts_once_through_cut_connections,
    a_reconcile_under_writes_leaves_every_counter_equal_to_its_source,
    install_refuses_and_names_the_plain_mode,
);

/// A plain client of the default package on the database at `url`.
fn plain(url: &str, budget: RetryBudget) -> Counters {
    Counters::builder(Pool::new(url).unwrap()).plain_sql().retry(budget).build().unwrap()
}

/// The script of calls, with write ids and without, in the plain mode on
/// `engine` and through the routines on MariaDB 10.11 at the same moment:
/// every answer alike.
fn every_call_answers_as_the_routines_answer_on_mariadb(engine: Engine) {
    let options = PackageOptions::default();
    engine.boot();
    let now = script_moment(engine);
    let (got, minutes): (Vec<_>, Vec<_>) = [false, true]
        .into_iter()
        .map(|write_ids| {
            let pool = script_sessions(engine, &engine.database("script"), now);
            let answers = script_of_calls_at(&script_client(pool.clone(), &options, write_ids, true), now);
            let minute: Option<u64> =
                pool.get_conn().unwrap().query_first("SELECT UNIX_TIMESTAMP() DIV 60").unwrap();
            (answers, minute)
        })
        .unzip();
    assert_eq!(minutes, [Some(minute_of(now)); 2], "{engine:?}: the script outran the minute it started in");
    for (write_ids, got) in [false, true].into_iter().zip(got) {
        let expected = server::as_on(Release::MariaDb, || {
            let with_routines = support::with_package(&options);
            let pool = script_pool_at(&with_routines.url(), now);
            script_of_calls_at(&script_client(pool, &options, write_ids, false), now)
        });
        assert_anchors(&expected, false);
        assert_alike(&expected, &got, &format!("{engine:?}, write ids: {write_ids}"));
    }
}

/// The moment the script of calls runs at on `engine`, a whole second.
/// TiDB's sessions stand still at
/// [`SCRIPT_CLOCK`](crate::support::call_script::SCRIPT_CLOCK). Vitess v24
/// refuses to set a session's clock (`SET TIMESTAMP` is a syntax error,
/// 1105, and `@@timestamp` an unknown variable, VT05006), so there the
/// script runs on the server's clock, from a moment at most 20 s into a
/// minute, which its calls end within.
fn script_moment(engine: Engine) -> SystemTime {
    match engine {
        Engine::Tidb => script_clock(),
        Engine::Vitess => clock_within(60, 0..21),
    }
}

/// A moment more than a minute from either end of its hour: half an hour
/// past [`script_clock`] on TiDB; on Vitess the server's clock, waited for
/// when it is nearer an end.
fn mid_hour(engine: Engine) -> SystemTime {
    match engine {
        Engine::Tidb => script_clock() + Duration::from_secs(1_800),
        Engine::Vitess => clock_within(3_600, 60..3_480),
    }
}

/// Now, a whole second, once it is `span` seconds into a `period` of
/// seconds from 1970 (waiting for the span's start when it is not).
fn clock_within(period: u64, span: std::ops::Range<u64>) -> SystemTime {
    let into = seconds(SystemTime::now()) % period;
    if !span.contains(&into) {
        thread::sleep(Duration::from_secs((period + span.start - into) % period));
    }
    SystemTime::UNIX_EPOCH + Duration::from_secs(seconds(SystemTime::now()))
}

/// The whole seconds from 1970 to `at`.
fn seconds(at: SystemTime) -> u64 {
    at.duration_since(SystemTime::UNIX_EPOCH).unwrap().as_secs()
}

/// A pool of sessions of the database at `url` on `engine` at
/// [`script_moment`] `now`: standing still there on TiDB, on the server's
/// clock on Vitess; in a time zone 5 hours east of UTC on both.
fn script_sessions(engine: Engine, url: &str, now: SystemTime) -> Pool {
    match engine {
        Engine::Tidb => script_pool_at(url, now),
        Engine::Vitess => {
            let opts = mysql::OptsBuilder::from_opts(mysql::Opts::from_url(url).unwrap())
                .init(vec!["SET time_zone = '+05:00'"]);
            Pool::new(opts).unwrap()
        }
    }
}

/// The minutes from 1970 to `at`.
fn minute_of(at: SystemTime) -> u64 {
    seconds(at) / 60
}

/// 300 calls an hour, counted over 16 slots: 32 threads, half of them
/// through a coalescing handle, call until refused. Exactly 300 pass, and
/// the hour holds 300. The race runs in the middle of an hour: a coalesced
/// write counts at its hand-over, before its flush.
fn a_quota_is_never_passed_by_32_threads(engine: Engine) {
    const QUOTA: u64 = 300;
    engine.boot();
    let now = mid_hour(engine);
    let pool = script_sessions(engine, &engine.database("quota"), now);
    let counters = Counters::builder(pool.clone()).plain_sql().build().unwrap();
    counters.setup("calls", NewCounter::new("API calls").slots(16)).unwrap();
    counters.track("calls", Period::Hour, Keep::All).unwrap();
    counters.limit("calls", Period::Hour, Some(QUOTA)).unwrap();
    let passed = race(&counters, "calls", 1, |error| matches!(error, CounterError::PastLimit { .. }));
    let hour: Option<u64> = pool.get_conn().unwrap().query_first("SELECT UNIX_TIMESTAMP() DIV 3600").unwrap();
    assert_eq!(hour, Some(seconds(now) / 3_600), "{engine:?}: the race outran its hour");
    assert_eq!(passed, QUOTA, "{engine:?}");
    let counted = Some(QUOTA as i64);
    assert_eq!(counters.get_period("calls", Period::Hour, now).unwrap(), counted, "{engine:?}");
    assert_eq!(counters.get("calls").unwrap(), counted, "{engine:?}");
}

/// 300 units over 16 slots with a floor of 0: 32 threads, half of them
/// through a coalescing handle, take 1 until refused. Exactly 300 are
/// sold, and the stock reads 0.
fn a_bounded_stock_is_sold_exactly_by_32_threads(engine: Engine) {
    let counters = plain(&engine.database("sale"), RetryBudget::default());
    counters.setup("stock", NewCounter::new("units").slots(16).initial_value(300)).unwrap();
    counters.bound("stock", 0..).unwrap();
    let sold = race(&counters, "stock", -1, |error| matches!(error, CounterError::PastBound { .. }));
    assert_eq!(sold, 300, "{engine:?}");
    assert_eq!(counters.get("stock").unwrap(), Some(0), "{engine:?}");
}

/// 32 threads add `delta` to `name` until `refused` says a call was
/// refused, the even ones by single calls and the odd ones through one
/// coalescing handle; the calls that passed.
fn race(counters: &Counters, name: &str, delta: i64, refused: impl Fn(&CounterError) -> bool + Sync) -> u64 {
    let coalescing = counters.coalescing();
    let passed = AtomicU64::new(0);
    thread::scope(|scope| {
        for thread in 0..32 {
            let (coalescing, passed, refused) = (&coalescing, &passed, &refused);
            scope.spawn(move || {
                loop {
                    let outcome =
                        if thread % 2 == 0 { counters.add(name, delta) } else { coalescing.add(name, delta) };
                    match outcome {
                        Ok(()) => drop(passed.fetch_add(1, Ordering::SeqCst)),
                        Err(error) if refused(&error) => break,
                        Err(error) => panic!("a call failed otherwise: {error}"),
                    }
                }
            });
        }
    });
    passed.into_inner()
}

/// 32 threads of 40 increments each, with write ids, through a proxy that
/// cuts about one chunk in 50: every increment is acknowledged, and the
/// counter and its hours count each once.
fn with_write_ids_every_increment_counts_once_through_cut_connections(engine: Engine) {
    let url = engine.database("cuts");
    let reader = plain(&url, RetryBudget::default());
    reader.setup("hot", NewCounter::new("cut").slots(16)).unwrap();
    reader.track("hot", Period::Hour, Keep::All).unwrap();
    let address = mysql::Opts::from_url(&url).unwrap();
    let proxy =
        FaultProxy::start((address.get_ip_or_hostname().to_string(), address.get_tcp_port()), 1.0 / 50.0);
    let counters = Counters::builder(proxy.pool(&url))
        .plain_sql()
        .write_ids()
        .retry(RetryBudget::Time(Duration::from_secs(30)))
        .build()
        .unwrap();
    thread::scope(|scope| {
        for _ in 0..32 {
            scope.spawn(|| {
                for _ in 0..40 {
                    counters.increment("hot").unwrap_or_else(|error| panic!("{engine:?}: {error}"));
                }
            });
        }
    });
    proxy.stop_cutting();
    assert!(proxy.cuts.answers_lost.load(Ordering::Relaxed) > 0, "{engine:?}: {}", proxy.summary());
    assert_eq!(reader.get("hot").unwrap(), Some(32 * 40), "{engine:?}: {}", proxy.summary());
    let hours: i64 = Pool::new(url.as_str())
        .unwrap()
        .get_conn()
        .unwrap()
        .query_first("SELECT CAST(SUM(counter) AS SIGNED) FROM counter_buckets WHERE counter_name = 'hot'")
        .unwrap()
        .unwrap();
    assert_eq!(hours, 32 * 40, "{engine:?}: the hours count each increment once");
    println!("{engine:?}, write ids through cuts: {}; 1280 acknowledged and counted", proxy.summary());
}

/// 16 writers comment and uncomment, each comment and its counter's
/// increment in one transaction (across shards on Vitess), while drifts are
/// injected; reconciles through the plain mode meanwhile leave every post's
/// counter equal to its comments ([`reconcile::under_writes`]). Then a
/// counter of the set without a comment is found and set to 0.
fn a_reconcile_under_writes_leaves_every_counter_equal_to_its_source(engine: Engine) {
    let pool = Pool::new(engine.database("reconcile").as_str()).unwrap();
    let plain = Counters::builder(pool.clone()).plain_sql().build().unwrap();
    reconcile::add_posts(&mut pool.get_conn().unwrap(), &plain);
    reconcile::under_writes(&pool, Writes::Plain(&plain), || {
        plain.reconcile(Reconcile::query(reconcile::SOURCE).set("comments:")).unwrap()
    });

    // A member of the set that the source has no row for, found among the
    // counters by a scatter read of their names (on Vitess, a DISTINCT
    // there answered one name of eleven in about one read in six): every
    // dry run lists it, and the reconcile sets it to 0.
    plain.setup("comments:none", NewCounter::new("comments").slots(8).initial_value(3)).unwrap();
    let mut expected: Vec<String> = (0..reconcile::POSTS).map(|post| format!("comments:{post}")).collect();
    expected.push("comments:none".to_owned());
    for dry_run in (0..20).map(|_| true).chain([false]) {
        let reconcile = Reconcile::query(reconcile::SOURCE).set("comments:");
        let drifts = plain.reconcile(if dry_run { reconcile.dry_run() } else { reconcile }).unwrap();
        let mut names: Vec<&str> = drifts.iter().map(|drift| drift.name.as_str()).collect();
        names.sort_unstable();
        assert_eq!(names, expected, "{engine:?}: every counter of the set");
    }
    assert_eq!(plain.get("comments:none").unwrap(), Some(0), "{engine:?}");
}

/// `install` on an engine without stored routines fails, changes nothing,
/// and names the plain mode.
fn install_refuses_and_names_the_plain_mode(engine: Engine) {
    let url = engine.database("install");
    let output = slotted_counters(&["install", "--url", &url]);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{engine:?}: {message}");
    assert!(message.contains("plain mode"), "{engine:?}: {message}");
    let tables: Vec<String> =
        Pool::new(url.as_str()).unwrap().get_conn().unwrap().query("SHOW TABLES").unwrap();
    assert_eq!(tables.len(), 6, "{engine:?}: the plain tables, posts and comments alone: {tables:?}");
}
