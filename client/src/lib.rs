//! slotted-counters: counters that thousands of clients increment at once,
//! kept in MySQL or MariaDB by the slotted-counter package.
//!
//! A counter kept in one row makes concurrent increments queue on its row
//! lock. The package spreads each counter over several rows ("slots"); an
//! increment adds to one slot picked at random and a read sums the slots.
//! This crate calls the package's stored routines: [`Counters`] for plain
//! calls and [`Coalescing`] to apply many threads' increments in few
//! transactions. The `slotted-counters-cli` crate generates and installs
//! the package.
//!
//! It is built on the [`mysql`] crate, re-exported here: name the pool and
//! the errors through `slotted_counters::mysql`, and the application uses
//! the same version as the client.
//!
//! ```no_run
//! use slotted_counters::{Counters, mysql};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let pool = mysql::Pool::new("mysql://app:secret@127.0.0.1:3306/app")?;
//! let counters = Counters::new(pool);
//! counters.increment("downloads")?;
//! # Ok(())
//! # }
//! ```

mod counters;
mod error;
mod options;

pub mod database;
pub mod package;

pub use counters::{
    Coalescing, Counters, CountersOn, DEFAULT_COUNTERS_PER_FLUSH, DEFAULT_FLUSHES, FlushStats, NewCounter,
    OnConnection, Pooled, REINSTALL_WINDOW, Run, StartDate, batch_json,
};
pub use error::{CounterError, Error, PackageErrorKind, Plain};
pub use mysql;
pub use options::{
    Cluster, DEFAULT_COLLATION, DEFAULT_MAX_SLOTS, DEFAULT_NAME_LENGTH, DEFAULT_PREFIX, DEFAULT_SLOTS,
    DEFAULT_TABLE, IDENTIFIER_LIMIT, NAME_LENGTH_LIMIT, PackageOptions, PackageOptionsBuilder, SLOT_LIMIT,
    SlotChoice, SlotPolicy,
};
