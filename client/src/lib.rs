#![doc = include_str!("../README.md")]

#[cfg(feature = "sqlx")]
mod asynchronous;
mod batch;
mod counters;
mod error;
pub mod names;
mod options;

pub mod database;
pub mod package;

#[cfg(feature = "sqlx")]
pub use asynchronous::{AsyncCoalescing, AsyncCounters, AsyncCountersOn};
pub use counters::{
    Coalescing, Counters, CountersOn, DEFAULT_COUNTERS_PER_FLUSH, DEFAULT_FLUSHES, DEFAULT_KEPT_CONNECTIONS,
    FlushStats, NewCounter, OnConnection, Pooled, REINSTALL_WINDOW, Run, StartDate,
};
pub use error::{CounterError, Error, PackageErrorKind, Plain};
pub use mysql;
pub use options::{
    Cluster, DEFAULT_COLLATION, DEFAULT_MAX_SLOTS, DEFAULT_NAME_LENGTH, DEFAULT_PREFIX, DEFAULT_SLOTS,
    DEFAULT_TABLE, IDENTIFIER_LIMIT, NAME_LENGTH_LIMIT, PackageOptions, PackageOptionsBuilder, SLOT_LIMIT,
    SlotChoice, SlotPolicy,
};
#[cfg(feature = "sqlx")]
pub use sqlx;
