//! slotted-counters-cli: generates, installs and benchmarks the MySQL/MariaDB
//! stored-procedure package for slotted counters; the `slotted-counters`
//! command is a thin layer over it.
//!
//! Applications that only count depend on the client crate,
//! [`slotted_counters`], which this crate builds on.

mod error;

pub mod bench;
pub mod cli;
pub mod database;
pub mod folder;
pub mod grants;
pub mod install;
pub mod render;
pub mod script;
pub mod status;

pub use error::Error;
