#![doc = include_str!("../README.md")]

mod error;
pub mod names;
pub mod options;
pub mod package;
pub mod periods;
pub mod plain;
pub mod refusals;

pub use error::ConfigError;
pub use options::{Cluster, PackageOptions, PackageOptionsBuilder, SlotChoice, SlotPolicy};
