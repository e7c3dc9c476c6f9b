#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]
// No type in a public signature that an application cannot name.
#![warn(unnameable_types)]

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
mod transaction;

#[cfg(feature = "sqlx")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqlx")))]
pub use asynchronous::{AsyncCoalescing, AsyncCounters, AsyncCountersOn};
pub use call::{NewCounter, StartDate};
pub use counters::{Coalescing, Counters, CountersOn, FlushStats};
pub use error::CounterError;
pub use mysql;
pub use slotted_counters_core::{
    Cluster, ConfigError, PackageOptions, PackageOptionsBuilder, SlotChoice, SlotPolicy,
};
#[cfg(feature = "sqlx")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqlx")))]
pub use sqlx;

/// Where the clients run their calls: the types that fill the connection
/// parameter of [`Counters`] and `AsyncCounters`.
/// An application rarely names them: [`Counters`] means pooled
/// connections, and [`CountersOn`] the caller's.
pub mod connections {
    #[cfg(feature = "sqlx")]
    #[cfg_attr(docsrs, doc(cfg(feature = "sqlx")))]
    pub use crate::asynchronous::{AsyncConnections, AsyncOnConnection, AsyncPooled};
    pub use crate::counters::{OnConnection, Pooled, SyncConnections};
    /// What the connection traits extend: public so that no private type
    /// is in their signatures, hidden since no application calls it.
    #[doc(hidden)]
    pub use crate::engine::{Attempt, Driver, Outcome};
}

/// The figures the clients start from and the windows they work within,
/// for tools and tests that need them: an application changes each through
/// the method that documents it.
pub mod defaults {
    pub use crate::batch::{DEFAULT_COUNTERS_PER_FLUSH as COUNTERS_PER_FLUSH, DEFAULT_FLUSHES as FLUSHES};
    pub use crate::counters::DEFAULT_KEPT_CONNECTIONS as KEPT_CONNECTIONS;
    pub use crate::retry::REINSTALL_WINDOW;
    pub use slotted_counters_core::package::WRITE_ID_WINDOW;
    pub use slotted_counters_core::plain::SLOT_COUNT_LIFETIME;
}
