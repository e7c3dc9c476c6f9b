//! Counts one page view in the database `DATABASE_URL` names, through the
//! driver the client re-exports.

use slotted_counters::{Counters, mysql};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::var("DATABASE_URL")?;
    let counters = Counters::new(mysql::Pool::new(url.as_str())?);
    counters.increment("page:home")?;
    Ok(())
}
