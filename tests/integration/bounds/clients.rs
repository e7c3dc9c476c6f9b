//! Bounded counters through both Rust clients and their coalescing
//! handles, over the routines and in the plain mode on a database with no
//! routine: a flash sale sells exactly its stock, a quota is never
//! exceeded, and a restock during a sale is sold once, with each refusal
//! a [`CounterError::PastBound`] that says the room left.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use mysql::Pool;
use slotted_counters::sqlx::mysql::MySqlPoolOptions;
use slotted_counters::{
    AsyncCounters, Bound, CounterError, Counters, Keep, NewCounter, PackageOptions, Period,
};

use super::{assert_within, sale, shares};
use crate::support::{self, Database, on_each_server};

on_each_server!(
    a_flash_sale_through_every_client_sells_exactly_the_stock,
    a_quota_through_every_client_is_never_exceeded,
    a_restock_during_a_coalesced_sale_is_sold_once,
    a_bounded_counter_counts_per_period_and_a_refusal_counts_nowhere,
);

/// Adds to one counter, as one of the clients does.
type Adds = Arc<dyn Fn(i64) -> Result<(), CounterError> + Send + Sync>;

/// Each client, in each mode, on a database of its own with counter `name`
/// set up with `initial` over 64 slots and bounded by `bounds` (through the
/// client): the sync and the async client, each making calls and through
/// its coalescing handle, over the routines and in the plain mode.
fn clients(
    name: &'static str,
    initial: i64,
    bounds: (Option<i64>, Option<i64>),
) -> Vec<(String, Database, Adds)> {
    let options = PackageOptions::default();
    let runtime =
        Arc::new(tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap());
    let mut clients = Vec::new();
    for plain in [false, true] {
        let mode = if plain { "plain" } else { "routines" };
        for coalesced in [false, true] {
            let way = if coalesced { "coalescing handle" } else { "calls" };
            let (db, url) = database(plain, &options);
            let counters = if plain {
                Counters::builder(Pool::new(url.as_str()).unwrap())
                    .package(&options)
                    .plain_sql()
                    .build()
                    .unwrap()
            } else {
                Counters::new(Pool::new(url.as_str()).unwrap()).unwrap()
            };
            counters.setup(name, NewCounter::new("d").slots(64).initial_value(initial)).unwrap();
            counters.bound(name, range(bounds)).unwrap();
            let adds: Adds = if coalesced {
                let handle = counters.coalescing();
                Arc::new(move |delta| handle.add(name, delta))
            } else {
                Arc::new(move |delta| counters.add(name, delta))
            };
            clients.push((format!("sync {way}, {mode}"), db, adds));

            let (db, url) = database(plain, &options);
            let counters = runtime.block_on(async {
                // 64 takers share 32 connections, and near the bound their
                // takes queue: on a loaded CI machine a wait for a connection
                // passed sqlx's 30 s default, which is not what is tested.
                let pool = MySqlPoolOptions::new()
                    .max_connections(32)
                    .acquire_timeout(std::time::Duration::from_secs(300))
                    .connect(&url)
                    .await
                    .unwrap();
                if plain {
                    AsyncCounters::builder(pool).package(&options).plain_sql().build()
                } else {
                    AsyncCounters::new(pool)
                }
                .unwrap()
            });
            runtime
                .block_on(counters.setup(name, NewCounter::new("d").slots(64).initial_value(initial)))
                .unwrap();
            runtime.block_on(counters.bound(name, range(bounds))).unwrap();
            let runtime = Arc::clone(&runtime);
            let adds: Adds = if coalesced {
                let handle = counters.coalescing();
                Arc::new(move |delta| runtime.block_on(handle.add(name, delta)))
            } else {
                Arc::new(move |delta| runtime.block_on(counters.add(name, delta)))
            };
            clients.push((format!("async {way}, {mode}"), db, adds));
        }
    }
    clients
}

/// A database with the default package, or with only the plain mode's
/// tables and an account that may run no routine; the URL to count with.
fn database(plain: bool, options: &PackageOptions) -> (Database, String) {
    if plain {
        support::plain_database(options)
    } else {
        let db = support::with_package(options);
        let url = db.url();
        (db, url)
    }
}

/// What a sale sells and a quota allows, over 64 slots: about 8 units a
/// slot, so that most takes near the end find their slot short.
const STOCK: i64 = 500;

fn range((floor, ceiling): (Option<i64>, Option<i64>)) -> (std::ops::Bound<i64>, std::ops::Bound<i64>) {
    let side = |limit: Option<i64>| limit.map_or(std::ops::Bound::Unbounded, std::ops::Bound::Included);
    (side(floor), side(ceiling))
}

/// Stock 500 over 64 slots, 64 threads each taking 1 until refused:
/// exactly 500 succeed, through each client in each mode, every refusal
/// is at the floor with no room left, and no read of the slots during the
/// sale sees the total below 0.
fn a_flash_sale_through_every_client_sells_exactly_the_stock() {
    for (client, db, adds) in clients("stock", STOCK, (Some(0), None)) {
        let sale = sale(&db, "stock", (Some(0), None), 64, || {
            let adds = Arc::clone(&adds);
            move || adds(-1)
        });
        assert_eq!(sale.sold, STOCK.unsigned_abs(), "{client}");
        assert!(
            sale.refused.iter().all(|&refusal| refusal == (Bound::Floor, 0)),
            "{client}: {:?}",
            sale.refused
        );
        assert_eq!(assert_within(&shares(&mut db.conn(), "stock"), Some(0), None), 0, "{client}");
    }
}

/// A quota of 500 from 0, 64 threads each drawing 1 until refused at the
/// ceiling: exactly 500 succeed.
fn a_quota_through_every_client_is_never_exceeded() {
    for (client, db, adds) in clients("quota", 0, (None, Some(STOCK))) {
        let sale = sale(&db, "quota", (None, Some(STOCK)), 64, || {
            let adds = Arc::clone(&adds);
            move || adds(1)
        });
        assert_eq!(sale.sold, STOCK.unsigned_abs(), "{client}");
        assert!(
            sale.refused.iter().all(|&refusal| refusal == (Bound::Ceiling, 0)),
            "{client}: {:?}",
            sale.refused
        );
        assert_eq!(assert_within(&shares(&mut db.conn(), "quota"), None, Some(STOCK)), STOCK, "{client}");
    }
}

/// 100 units, and 9 restocks of 100 through the same handle while 32
/// threads take through it, over the routines and in the plain mode on a
/// database with no routine: every unit added is sold, none twice.
fn a_restock_during_a_coalesced_sale_is_sold_once() {
    let options = PackageOptions::default();
    for plain in [false, true] {
        let (db, url) = database(plain, &options);
        let pool = Pool::new(url.as_str()).unwrap();
        let counters = if plain {
            Counters::builder(pool).package(&options).plain_sql().build().unwrap()
        } else {
            Counters::new(pool).unwrap()
        };
        counters.setup("stock", NewCounter::new("d").slots(64).initial_value(100)).unwrap();
        counters.bound("stock", 0..).unwrap();
        let handle = counters.coalescing();
        let restocked = std::sync::atomic::AtomicBool::new(false);
        let sale = std::thread::scope(|scope| {
            scope.spawn(|| {
                for _ in 0..9 {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    handle.add("stock", 100).unwrap();
                }
                restocked.store(true, std::sync::atomic::Ordering::SeqCst);
            });
            sale(&db, "stock", (Some(0), None), 32, || {
                let (handle, restocked) = (&handle, &restocked);
                move || loop {
                    let done = restocked.load(std::sync::atomic::Ordering::SeqCst);
                    match handle.add("stock", -1) {
                        Err(CounterError::PastBound { .. }) if !done => std::thread::yield_now(),
                        outcome => return outcome,
                    }
                }
            })
        });
        assert_eq!(sale.sold, 1000, "plain: {plain}");
        assert_eq!(counters.get("stock").unwrap(), Some(0), "plain: {plain}");
    }
}

/// A bounded counter that counts per hour, through the sync client in both
/// modes: takes that spread count in the hour as takes that fit a slot
/// do, and a refused take counts nowhere.
fn a_bounded_counter_counts_per_period_and_a_refusal_counts_nowhere() {
    let options = PackageOptions::default();
    for plain in [false, true] {
        let (_db, url) = database(plain, &options);
        let pool = Pool::new(url.as_str()).unwrap();
        let counters = if plain {
            Counters::builder(pool).package(&options).plain_sql().build().unwrap()
        } else {
            Counters::new(pool).unwrap()
        };
        counters.setup("stock", NewCounter::new("d").slots(8).initial_value(20)).unwrap();
        counters.track("stock", Period::Hour, Keep::All).unwrap();
        counters.bound("stock", 0..).unwrap();
        for _ in 0..20 {
            counters.add("stock", -1).unwrap();
        }
        let refused = counters.add("stock", -1).unwrap_err();
        assert!(matches!(refused, CounterError::PastBound { room: 0, .. }), "plain: {plain}: {refused:?}");
        counters.add("stock", 16).unwrap();
        counters.add("stock", -3).unwrap();
        // The last hour and the next: a write at the turn of an hour counts
        // in the one it was made in.
        let now = SystemTime::now();
        let hour = Duration::from_secs(3_600);
        let counted = counters.get_range("stock", Period::Hour, now - 2 * hour, now + hour).unwrap();
        assert_eq!(counted, Some(-20 + 16 - 3), "plain: {plain}");
        assert_eq!(counters.get("stock").unwrap(), Some(13), "plain: {plain}");
    }
}
