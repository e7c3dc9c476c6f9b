#![doc = include_str!("../README.md")]

pub mod bounds;
mod error;
pub mod features;
pub mod names;
mod objects;
pub mod options;
pub mod package;
pub mod periods;
pub mod plain;
pub mod refusals;

pub use error::ConfigError;
pub use features::{Feature, Features};
pub use options::{Cluster, PackageOptions, PackageOptionsBuilder, SlotChoice, SlotPolicy};
