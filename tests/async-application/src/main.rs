//! Counts page views in the database `DATABASE_URL` names from a tokio
//! application, with the async client alone: every call an application
//! makes, written against the client's public API only.

use std::time::{Duration, SystemTime};

use slotted_counters::{AsyncCounters, CounterError, Keep, NewCounter, Period, RetryBudget, StartDate, sqlx};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::var("DATABASE_URL")?;
    tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
        let pool = sqlx::MySqlPool::connect(&url).await?;
        let counters = AsyncCounters::builder(pool.clone()).retry(RetryBudget::Attempts(10)).build()?;
        match counters.setup("page:async", NewCounter::new("views from tokio")).await {
            Ok(()) | Err(CounterError::AlreadyExists { .. }) => {}
            Err(error) => return Err(error.into()),
        }
        counters.add_many([("page:async", 2)]).await?;

        // Request handlers run as tasks: every call's future is Send.
        let handler = {
            let (counters, pool) = (counters.clone(), pool.clone());
            tokio::spawn(async move {
                counters.increment("page:async").await?;
                let mut tx = pool.begin().await?;
                counters.on(&mut tx).add("page:async", 3).await?;
                tx.commit().await?;
                Ok::<(), Box<dyn std::error::Error + Send + Sync>>(())
            })
        };
        handler.await?.map_err(|error| error.to_string())?;

        let views = counters.coalescing();
        let tasks: Vec<_> = (0..4)
            .map(|_| {
                let views = views.clone();
                tokio::spawn(async move { views.increment("page:async").await })
            })
            .collect();
        for task in tasks {
            task.await??;
        }
        println!("{:?}", counters.get("page:async").await?);
        counters.track("page:async", Period::Month, Keep::All).await?;
        let now = SystemTime::now();
        counters.add_at("page:async", 1, now - Duration::from_secs(60)).await?;
        println!("{:?}", counters.get_period("page:async", Period::Month, now).await?);
        println!("{:?}", counters.get_range("page:async", Period::Month, now, now).await?);
        println!("{:?}", counters.series("page:async", Period::Month, now, now).await?);
        counters.untrack("page:async", Period::Month).await?;
        counters.expire_periods().await?;
        counters.reset("page:async", 0, StartDate::Keep).await?;
        Ok(())
    })
}
