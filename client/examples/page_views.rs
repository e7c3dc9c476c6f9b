//! Counting page views from many threads with the slotted-counter package.
//!
//! Install the package first, then run against your database:
//!
//! ```sh
//! slotted-counters install --url mysql://app:secret@127.0.0.1:3306/app
//! DATABASE_URL=mysql://app:secret@127.0.0.1:3306/app cargo run -p slotted-counters --example page_views
//! ```

use std::thread;

use slotted_counters::{CounterError, Counters, NewCounter, mysql};

const PAGES: [&str; 3] = ["page:home", "page:pricing", "page:docs"];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::var("DATABASE_URL")
        .map_err(|_| "set DATABASE_URL=mysql://user:password@host:port/database")?;
    let counters = Counters::new(mysql::Pool::new(url.as_str())?)?;

    for page in PAGES {
        // A hot page gets 16 slots; an existing counter is fine too.
        match counters.setup(page, NewCounter::new("page views").slots(16)) {
            Ok(()) | Err(CounterError::AlreadyExists { .. }) => {}
            Err(error) => return Err(error.into()),
        }
    }

    // Eight request handlers counting views at the same time.
    thread::scope(|scope| {
        for worker in 0..8 {
            let counters = &counters;
            scope.spawn(move || {
                for view in 0..100 {
                    let page = PAGES[(worker + view) % PAGES.len()];
                    if let Err(error) = counters.increment(page) {
                        eprintln!("worker {worker}: {error}");
                    }
                }
            });
        }
    });

    // Every total in one round trip.
    for (page, views) in PAGES.iter().zip(counters.get_many(PAGES)?) {
        println!("{page}: {} views", views.unwrap_or(0));
    }
    Ok(())
}
