//! Counting page views from 64 tokio tasks with the slotted-counter package:
//! half of them call the package once per view, half share a coalescing
//! handle that commits many views per transaction.
//!
//! Install the package first, then run against your database:
//!
//! ```sh
//! slotted-counters install --url mysql://app:secret@127.0.0.1:3306/app
//! DATABASE_URL=mysql://app:secret@127.0.0.1:3306/app \
//!     cargo run -p slotted-counters --example async_page_views --features sqlx
//! ```

use slotted_counters::{AsyncCounters, CounterError, NewCounter, sqlx};

const PAGES: [&str; 3] = ["page:home", "page:pricing", "page:docs"];
const TASKS: usize = 64;
const VIEWS_PER_TASK: usize = 50;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::var("DATABASE_URL")
        .map_err(|_| "set DATABASE_URL=mysql://user:password@host:port/database")?;
    let pool = sqlx::mysql::MySqlPoolOptions::new().max_connections(16).connect(&url).await?;
    let counters = AsyncCounters::new(pool)?;

    for page in PAGES {
        // A hot page gets 16 slots; an existing counter is fine too.
        match counters.setup(page, NewCounter::new("page views").slots(16)).await {
            Ok(()) | Err(CounterError::AlreadyExists { .. }) => {}
            Err(error) => return Err(error.into()),
        }
    }
    let before = counters.get_many(PAGES).await?;

    // 64 request handlers counting views at once: the even ones one CALL per
    // view, the odd ones through the shared coalescing handle.
    let coalescing = counters.coalescing();
    let handlers: Vec<_> = (0..TASKS)
        .map(|task| {
            let (counters, coalescing) = (counters.clone(), coalescing.clone());
            tokio::spawn(async move {
                for view in 0..VIEWS_PER_TASK {
                    let page = PAGES[(task + view) % PAGES.len()];
                    let counted = if task % 2 == 0 {
                        counters.increment(page).await
                    } else {
                        coalescing.increment(page).await
                    };
                    counted?;
                }
                Ok::<(), CounterError>(())
            })
        })
        .collect();
    for handler in handlers {
        handler.await??;
    }

    let after = counters.get_many(PAGES).await?;
    for ((page, before), after) in PAGES.iter().zip(before).zip(after) {
        let views = after.unwrap_or(0) - before.unwrap_or(0);
        println!("{page}: {views} views counted now, {} in all", after.unwrap_or(0));
    }
    let flushed = coalescing.stats();
    println!(
        "coalesced: {} views in {} transactions ({:.1} per transaction)",
        flushed.deltas,
        flushed.flushes,
        flushed.mean_batch()
    );
    Ok(())
}
