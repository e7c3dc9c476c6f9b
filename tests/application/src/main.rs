//! Counts page views in the database `DATABASE_URL` names, through the
//! driver the client re-exports: every call an application makes, written
//! against the client's public API only.

use std::time::{Duration, SystemTime};

use slotted_counters::{
    CounterError, Counters, FlushStats, Keep, NewCounter, PackageOptions, Period, RetryBudget, StartDate,
    mysql,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::var("DATABASE_URL")?;
    let pool = mysql::Pool::new(url.as_str())?;
    let options = PackageOptions::builder().prefix("counter_").build()?;
    let counters = Counters::builder(pool.clone())
        .package(&options)
        .retry(RetryBudget::Time(Duration::from_secs(5)))
        .keep_connections(2)
        .max_flushes(2)
        .max_counters_per_flush(64)
        .build()?;

    match counters.setup("page:home", NewCounter::new("home page views").slots(8).initial_value(0)) {
        Ok(()) | Err(CounterError::AlreadyExists { .. }) => {}
        Err(error) => return Err(error.into()),
    }
    counters.increment("page:home")?;
    counters.add("page:home", 2)?;
    if let Err(error) = counters.add_many([("page:home", 1), ("page:missing", 1)]) {
        eprintln!(
            "refused ({:?}, {:?}), retry: {}, may have applied: {}: {error}",
            error.code(),
            error.sqlstate(),
            error.is_retryable(),
            error.may_have_applied()
        );
    }

    let mut tx = pool.start_transaction(mysql::TxOpts::default())?;
    counters.on(&mut tx).increment("page:home")?;
    tx.commit()?;

    let views = counters.coalescing();
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| views.increment("page:home"));
        }
    });
    let stats: FlushStats = views.stats();
    println!("{} flushes of {:.1} deltas", stats.flushes, stats.mean_batch());

    println!("{:?}", counters.get_many(["page:home", "page:missing"])?);

    counters.track("page:home", Period::Day, Keep::Last(30))?;
    counters.track("page:home", Period::Hour, Keep::All)?;
    let now = SystemTime::now();
    counters.add_at("page:home", 4, now - Duration::from_secs(600))?;
    println!("today: {:?}", counters.get_period("page:home", Period::Day, now)?);
    let day = Duration::from_secs(86_400);
    println!("this month: {:?}", counters.get_range("page:home", Period::Day, now - 30 * day, now + day)?);
    for (start, views) in counters.series("page:home", Period::Day, now - 7 * day, now + day)? {
        println!("{start:?}: {views}");
    }
    counters.untrack("page:home", Period::Hour)?;
    counters.expire_periods()?;
    counters.reset("page:home", 0, StartDate::Now)?;
    counters.delete("page:home")?;
    Ok(())
}
