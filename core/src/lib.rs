#![doc = include_str!("../README.md")]

pub mod bounds;
mod error;
pub mod names;
pub mod options;
pub mod package;
pub mod periods;
pub mod plain;
pub mod refusals;

pub use error::ConfigError;
pub use options::{Cluster, PackageOptions, PackageOptionsBuilder, SlotChoice, SlotPolicy};
