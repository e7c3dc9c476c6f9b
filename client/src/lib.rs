#![doc = include_str!("../README.md")]

#[cfg(feature = "sqlx")]
mod asynchronous;
mod batch;
mod call;
mod counters;
mod driver;
mod engine;
mod error;
mod mode;
mod plain;
mod retry;
mod routines;
#[cfg(test)]
mod scripted;

#[cfg(feature = "sqlx")]
pub use asynchronous::{
    AsyncCoalescing, AsyncConnections, AsyncCounters, AsyncCountersOn, AsyncOnConnection, AsyncPooled,
};
pub use call::{NewCounter, StartDate};
pub use counters::{
    Coalescing, Counters, CountersOn, DEFAULT_COUNTERS_PER_FLUSH, DEFAULT_FLUSHES, DEFAULT_KEPT_CONNECTIONS,
    FlushStats, OnConnection, Pooled, SyncConnections,
};
pub use error::CounterError;
pub use mysql;
pub use retry::REINSTALL_WINDOW;
pub use slotted_counters_core::package::WRITE_ID_WINDOW;
pub use slotted_counters_core::plain::SLOT_COUNT_LIFETIME;
pub use slotted_counters_core::{
    Cluster, ConfigError, PackageOptions, PackageOptionsBuilder, SlotChoice, SlotPolicy,
};
#[cfg(feature = "sqlx")]
pub use sqlx;
