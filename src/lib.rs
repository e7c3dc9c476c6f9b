//! slotted-counters: generates, installs and exercises a MySQL/MariaDB
//! stored-procedure package for slotted counters.
//!
//! A counter kept in one row makes concurrent increments queue on its row
//! lock. The package spreads each counter over several rows ("slots"); an
//! increment adds to one slot picked at random and a read sums the slots.
//!
//! With `default-features = false` the crate is the [`Counters`] client
//! alone. The `generate` feature adds rendering and installing the package,
//! `bench` the contention benchmark, and `cli` (the default) the command.

mod client;
mod error;
mod options;

pub mod database;
pub mod package;
pub mod script;
pub mod status;

#[cfg(feature = "generate")]
pub mod generate;
#[cfg(feature = "generate")]
pub mod grants;
#[cfg(feature = "generate")]
pub mod install;
#[cfg(feature = "generate")]
pub mod render;

#[cfg(feature = "bench")]
pub mod bench;

#[cfg(feature = "cli")]
pub mod cli;

pub use client::{
    Coalescing, Counters, CountersOn, DEFAULT_COUNTERS_PER_FLUSH, DEFAULT_FLUSHES, FlushStats,
    REINSTALL_WINDOW,
};
pub use error::{CounterError, Error};
pub use options::{
    Cluster, DEFAULT_COLLATION, DEFAULT_MAX_SLOTS, DEFAULT_NAME_LENGTH, DEFAULT_PREFIX, DEFAULT_SLOTS,
    DEFAULT_TABLE, IDENTIFIER_LIMIT, NAME_LENGTH_LIMIT, PackageOptions, PackageOptionsBuilder, SLOT_LIMIT,
    SlotChoice, SlotPolicy,
};
