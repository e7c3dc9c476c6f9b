//! The plain mode on a real sharding engine: MariaDB Spider, one head and
//! two data servers, with no routine installed anywhere and an account
//! granted no EXECUTE. Counts stay exact under 64 threads, every slot of a
//! counter lives on one data server, with its periods' buckets, reads span
//! both, and the deadlocks Spider's upserts cause are ridden through. `install` refuses a Spider
//! table, whose head misreads the sums the routines' changes build on.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread;
use std::time::{Duration, SystemTime};

use mysql::Pool;
use mysql::prelude::Queryable;
use slotted_counters::{CounterError, Counters, Keep, NewCounter, PackageOptions, Period, RetryBudget};
use slotted_counters_cli::{render, script};

use crate::support::spider::Spider;
use crate::support::timing::Timed;
use crate::support::{routines_in, slotted_counters, stderr};

/// One sharded MariaDB for every test here; each works in databases of its own.
fn spider() -> &'static Spider {
    static SPIDER: OnceLock<Spider> = OnceLock::new();
    SPIDER.get_or_init(Spider::boot)
}

/// A plain client through the head on a fresh `database`, after checking
/// that no server holds a routine.
fn plain_client(spider: &Spider, database: &str, options: &PackageOptions) -> Counters {
    plain_client_retrying(spider, database, options, RetryBudget::default())
}

/// The same, trying a call the server rolled back again within `budget`.
fn plain_client_retrying(
    spider: &Spider,
    database: &str,
    options: &PackageOptions,
    budget: RetryBudget,
) -> Counters {
    spider.create_database(database, options);
    let mut head = spider.head.root_conn();
    head.query_drop(format!("USE `{database}`")).unwrap();
    assert_eq!(routines_in(&mut head), Vec::<String>::new());
    for index in 0..2 {
        assert_eq!(routines_in(&mut spider.data_conn(index, database)), Vec::<String>::new());
    }
    Counters::builder(spider.plain_pool(database)).package(options).plain_sql().retry(budget).build().unwrap()
}

/// The rows of each counter on data server `index`.
fn rows_per_counter(spider: &Spider, index: usize, database: &str) -> BTreeMap<String, u32> {
    spider
        .data_conn(index, database)
        .query("SELECT counter_name, COUNT(*) FROM counters GROUP BY counter_name")
        .unwrap()
        .into_iter()
        .collect()
}

#[test]
fn plain_counts_exactly_through_a_spider_head() {
    let _timed = Timed::start();
    let spider = spider();
    let database = "spider_plain";
    let counters = plain_client(spider, database, &PackageOptions::default());
    let names: Vec<String> = (0..16).map(|index| format!("page_{index}")).collect();
    for name in &names {
        counters.setup(name, NewCounter::new("d").slots(8)).unwrap();
    }
    let coalescing = Arc::new(counters.coalescing());
    let per_thread = 40;
    thread::scope(|scope| {
        for thread in 0..64 {
            let (counters, coalescing, names) = (&counters, &coalescing, &names);
            scope.spawn(move || {
                for round in 0..per_thread {
                    let name = &names[(thread + round) % 4];
                    if thread % 2 == 0 {
                        counters.increment(name).unwrap();
                    } else {
                        coalescing.increment(name).unwrap();
                    }
                }
            });
        }
    });
    counters.add_many(names.iter().map(|name| (name.as_str(), 1))).unwrap();
    // A flush of one counter alone is one UPDATE with a subquery on the
    // counter's periods, which the head sends on to the data server.
    coalescing.add(&names[0], 5).unwrap();

    let totals = counters.get_many(&names).unwrap();
    let hot = 64 * per_thread as i64 / 4 + 1;
    let mut expected: Vec<Option<i64>> = (0..16).map(|index| Some(if index < 4 { hot } else { 1 })).collect();
    expected[0] = Some(hot + 5);
    assert_eq!(totals, expected, "read through the head, across both data servers");

    let on = [rows_per_counter(spider, 0, database), rows_per_counter(spider, 1, database)];
    for name in &names {
        let rows = [on[0].get(name).copied(), on[1].get(name).copied()];
        assert!(matches!(rows, [Some(8), None] | [None, Some(8)]), "{name}: slots per data server {rows:?}");
    }
    assert!(!on[0].is_empty() && !on[1].is_empty(), "16 counters on one data server: {on:?}");
}

/// Counting per period through the head: under 32 threads, each hour's
/// and day's buckets sum to the total, a late write lands in its hour, a
/// series reads it, and the buckets of a counter live on its data server.
#[test]
fn plain_counts_per_period_through_a_spider_head() {
    let _timed = Timed::start();
    let spider = spider();
    let database = "spider_periods";
    let budget = RetryBudget::Time(Duration::from_secs(60));
    let counters = plain_client_retrying(spider, database, &PackageOptions::default(), budget);
    let names = ["views", "likes"];
    for name in names {
        counters.setup(name, NewCounter::new("d").slots(8)).unwrap();
        counters.track(name, Period::Hour, Keep::Last(48)).unwrap();
        counters.track(name, Period::Day, Keep::All).unwrap();
    }
    let late = SystemTime::now() - Duration::from_secs(5 * 3_600);
    let coalescing = counters.coalescing();
    thread::scope(|scope| {
        for thread in 0..32 {
            let (counters, coalescing) = (&counters, &coalescing);
            scope.spawn(move || {
                for round in 0..20 {
                    let name = names[(thread + round) % 2];
                    match round % 4 {
                        0 => counters.add_many([(name, 1), (names[0], 1)]).unwrap(),
                        1 => coalescing.increment(name).unwrap(),
                        2 => counters.add_at(name, 3, late).unwrap(),
                        _ => counters.increment(name).unwrap(),
                    }
                }
            });
        }
    });
    for name in names {
        let total = counters.get(name).unwrap().unwrap();
        let far = (late - Duration::from_secs(86_400), SystemTime::now() + Duration::from_secs(3_600));
        assert_eq!(counters.get_range(name, Period::Hour, far.0, far.1).unwrap(), Some(total), "{name}");
        assert_eq!(counters.get_range(name, Period::Day, far.0, far.1).unwrap(), Some(total), "{name}");
        let hours = counters
            .series(name, Period::Hour, late - Duration::from_secs(3_600), late + Duration::from_secs(3_600))
            .unwrap();
        assert_eq!(
            hours.iter().map(|(_, value)| value).sum::<i64>(),
            3 * 32 * 5 / 2,
            "{name}: the late writes' hour"
        );
    }
    for index in 0..2 {
        let buckets: Vec<(String, u32)> = spider
            .data_conn(index, database)
            .query("SELECT counter_name, COUNT(*) FROM counter_buckets GROUP BY counter_name")
            .unwrap();
        let counters = rows_per_counter(spider, index, database);
        for (name, _) in buckets {
            assert!(
                counters.contains_key(&name),
                "{name}'s buckets on data server {index}, its slots elsewhere"
            );
        }
    }
}

/// Spider runs an upsert as an insert, a locking read and an update on the
/// data server, which deadlock under contention; the client retries them.
#[test]
fn lazy_upserts_ride_through_spider_deadlocks() {
    let _timed = Timed::start();
    let spider = spider();
    let options = PackageOptions::builder().fixed_slots(4).auto_create(true).build().unwrap();
    let budget = RetryBudget::Time(std::time::Duration::from_secs(60));
    let counters = plain_client_retrying(spider, "spider_lazy", &options, budget);
    let before = spider.deadlocks();
    let (threads, per_thread) = (16, 100);
    thread::scope(|scope| {
        for _ in 0..threads {
            let counters = &counters;
            scope.spawn(move || {
                for _ in 0..per_thread {
                    counters.increment("hot").unwrap();
                }
            });
        }
    });
    assert_eq!(counters.get("hot").unwrap(), Some(threads * per_thread));
    let deadlocks = spider.deadlocks() - before;
    assert!(deadlocks > 0, "no deadlock to ride through: the test proves nothing");
    println!("{deadlocks} deadlocks on the data servers, each retried");
}

/// A batch is one transaction through the head: one it refuses applies
/// nothing on either data server.
#[test]
fn a_refused_batch_applies_nothing_on_any_data_server() {
    let _timed = Timed::start();
    let spider = spider();
    let database = "spider_batch";
    let counters = plain_client(spider, database, &PackageOptions::default());
    let names: Vec<String> = (0..16).map(|index| format!("batch_{index}")).collect();
    for name in &names {
        counters.setup(name, NewCounter::new("d")).unwrap();
    }
    let on = [rows_per_counter(spider, 0, database), rows_per_counter(spider, 1, database)];
    assert!(!on[0].is_empty() && !on[1].is_empty(), "the batch must span both data servers: {on:?}");

    let refused = names.iter().map(|name| (name.as_str(), 1)).chain([("missing", 1)]);
    let error = counters.add_many(refused).unwrap_err();
    assert_eq!(error.to_string(), "unknown counter: 'missing'");
    assert_eq!(counters.get_many(&names).unwrap(), vec![Some(0); 16]);
    counters.add_many(names.iter().map(|name| (name.as_str(), 1))).unwrap();
    assert_eq!(counters.get_many(&names).unwrap(), vec![Some(1); 16]);
}

/// A bounded counter in the plain mode through the head: 300 units over 16
/// slots and 2 restocks of 100 while 32 threads take 1 at a time until
/// refused at the floor once both are in, half through a coalescing
/// handle. Exactly 500 are sold, and every slot, on the data server of its
/// counter, is within its shares.
#[test]
fn a_bounded_sale_through_a_spider_head_sells_exactly_its_stock() {
    let _timed = Timed::start();
    let spider = spider();
    let database = "spider_bounds";
    let counters = plain_client(spider, database, &PackageOptions::default());
    counters.setup("stock", NewCounter::new("units in store").slots(16).initial_value(300)).unwrap();
    counters.bound("stock", 0..).unwrap();
    let coalescing = counters.coalescing();
    let (sold, restocked) = (AtomicU64::new(0), AtomicBool::new(false));
    thread::scope(|scope| {
        scope.spawn(|| {
            for _ in 0..2 {
                thread::sleep(Duration::from_millis(30));
                counters.add("stock", 100).unwrap();
            }
            restocked.store(true, Ordering::SeqCst);
        });
        for thread in 0..32 {
            let (counters, coalescing, sold, restocked) = (&counters, &coalescing, &sold, &restocked);
            scope.spawn(move || {
                loop {
                    let done = restocked.load(Ordering::SeqCst);
                    let taken =
                        if thread % 2 == 0 { counters.add("stock", -1) } else { coalescing.add("stock", -1) };
                    match taken {
                        Ok(()) => drop(sold.fetch_add(1, Ordering::SeqCst)),
                        Err(CounterError::PastBound { .. }) if done => break,
                        Err(CounterError::PastBound { .. }) => thread::yield_now(),
                        Err(error) => panic!("a take failed otherwise: {error}"),
                    }
                }
            });
        }
    });
    assert_eq!(sold.into_inner(), 500);
    assert_eq!(counters.get("stock").unwrap(), Some(0));
    let slots: Vec<(i64, Option<i64>)> = (0..2)
        .flat_map(|index| {
            spider
                .data_conn(index, database)
                .query("SELECT counter, lowest FROM counters WHERE counter_name = 'stock'")
                .unwrap()
        })
        .collect();
    assert_eq!(slots.len(), 16, "one data server holds the counter's slots");
    assert!(slots.iter().all(|&(value, lowest)| lowest.is_some_and(|lowest| lowest <= value)), "{slots:?}");
}

/// The routine package does not serve through a head: there a routine's
/// locking read of one slot's `SUM` answers 0 (MariaDB 10.11.19), and the
/// routines' changes build on such reads (a shrink of this shape lost the
/// counts of the slots it removed), so `install` refuses a Spider table,
/// installing nothing, and says what to use instead.
#[test]
fn install_refuses_a_spider_table_whose_head_misreads_a_routines_sums() {
    let _timed = Timed::start();
    let spider = spider();
    let options = PackageOptions::default();

    let sourced = "spider_sourced";
    spider.create_database(sourced, &options);
    let mut head = spider.head.root_conn();
    head.query_drop(format!("USE `{sourced}`")).unwrap();
    script::run(&mut head, &render::setup_sql(&options).unwrap()).unwrap();
    let counters = Counters::new(Pool::new(spider.head.url(sourced).as_str()).unwrap()).unwrap();
    counters.setup("one", NewCounter::new("d").slots(1).initial_value(30)).unwrap();
    head.query_drop(
        "CREATE PROCEDURE slot_sum() BEGIN DECLARE v_found INT; DECLARE v_sum BIGINT; \
         SELECT COUNT(*), CAST(COALESCE(SUM(`counter`), 0) AS SIGNED) INTO v_found, v_sum \
         FROM counters WHERE counter_name = 'one' AND counter_id = 1 FOR UPDATE; \
         SELECT v_found, v_sum; END",
    )
    .unwrap();
    let read: Vec<(u32, i64)> = head.query("CALL slot_sum()").unwrap();
    assert_eq!(read, [(1, 0)], "the head found the slot and summed it as 0");
    assert_eq!(counters.get("one").unwrap(), Some(30), "a plain read sees its 30");

    let refused = "spider_refused";
    spider.create_database(refused, &options);
    let output = slotted_counters(&["install", "--url", &spider.head.url(refused)]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(message.contains("`counters` is a Spider table") && message.contains("plain mode"), "{message}");
    head.query_drop(format!("USE `{refused}`")).unwrap();
    assert_eq!(routines_in(&mut head), Vec::<String>::new(), "nothing installed");
}
