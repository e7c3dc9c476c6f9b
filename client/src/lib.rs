#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]
// No type in a public signature that an application cannot name.
#![warn(unnameable_types)]

#[cfg(not(any(feature = "mysql", feature = "sqlx")))]
compile_error!(
    "slotted-counters needs a client: the feature `mysql` (Counters, a default) or `sqlx` (AsyncCounters)"
);

#[cfg(feature = "sqlx")]
mod async_client;
mod batch;
mod builder;
mod call;
mod driver;
mod engine;
mod error;
mod flushing;
mod kept;
mod mode;
mod plain;
mod reconcile;
mod retry;
mod routines;
#[cfg(test)]
mod scripted;
#[cfg(feature = "mysql")]
mod sync_client;
mod transaction;

#[cfg(feature = "sqlx")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqlx")))]
pub use async_client::{AsyncCoalescing, AsyncCounters, AsyncCountersOn};
pub use batch::FlushStats;
pub use builder::ClientBuilder;
pub use call::{Correction, Drift, Keep, NewCounter, Reconcile, Room, RoomOf, StartDate};
pub use error::{Bound, CounterError, ErrorKind};
#[cfg(feature = "mysql")]
#[cfg_attr(docsrs, doc(cfg(feature = "mysql")))]
pub use mysql;
pub use retry::RetryBudget;
pub use slotted_counters_core::periods::{Period, UtcOffset};
pub use slotted_counters_core::{Cluster, ConfigError, PackageOptions};
#[cfg(feature = "sqlx")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqlx")))]
pub use sqlx;
#[cfg(feature = "mysql")]
#[cfg_attr(docsrs, doc(cfg(feature = "mysql")))]
pub use sync_client::{Coalescing, Counters, CountersOn};

/// Where the clients run their calls: the types that fill the connection
/// parameter of [`Counters`] and `AsyncCounters`.
/// An application rarely names them: [`Counters`] means pooled
/// connections, and [`CountersOn`] the caller's.
pub mod connections {
    #[cfg(feature = "sqlx")]
    #[cfg_attr(docsrs, doc(cfg(feature = "sqlx")))]
    pub use crate::async_client::{AsyncConnections, AsyncOnConnection, AsyncPooled};
    /// What the connection traits extend: public so that no private type
    /// is in their signatures, hidden since no application calls it.
    #[doc(hidden)]
    pub use crate::engine::{Attempt, Driver, Outcome};
    #[cfg(feature = "mysql")]
    #[cfg_attr(docsrs, doc(cfg(feature = "mysql")))]
    pub use crate::sync_client::{OnConnection, Pooled, SyncConnections};
}

/// How a package was generated, beyond what the root names: what
/// [`PackageOptions::builder`] returns, and what [`PackageOptions`] reads
/// back. An application matches its package with the builder's methods
/// and names these types rarely.
pub mod options {
    pub use slotted_counters_core::{PackageOptionsBuilder, SlotChoice, SlotPolicy};
}

/// The figures the clients start from and the windows they work within,
/// for tools and tests that need them: an application changes each through
/// the method that documents it.
pub mod defaults {
    #[cfg(feature = "mysql")]
    pub use crate::builder::DEFAULT_POOL_TIMEOUT as POOL_TIMEOUT;
    pub use crate::flushing::{DEFAULT_COUNTERS_PER_FLUSH as COUNTERS_PER_FLUSH, DEFAULT_FLUSHES as FLUSHES};
    pub use crate::kept::{
        DEFAULT_CHECK_KEPT_AFTER as CHECK_KEPT_AFTER, DEFAULT_KEPT_CONNECTIONS as KEPT_CONNECTIONS,
    };
    pub use crate::reconcile::RECONCILE_WAIT;
    pub use crate::retry::REINSTALL_WINDOW;
    pub use slotted_counters_core::options::WRITE_ID_WINDOW;
    pub use slotted_counters_core::periods::SERIES_LIMIT;
    pub use slotted_counters_core::plain::SLOT_COUNT_LIFETIME;
}
