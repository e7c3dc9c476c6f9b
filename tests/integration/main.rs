//! Every test of the library, the command and the package, in one binary so
//! that the live ones share one booted server (see `support`).

mod support;

mod async_client;
mod bad_input;
mod bench;
mod bounds;
mod classic;
mod client;
mod coalescing;
mod collations;
mod engines;
mod environments;
mod faults;
mod galera;
mod generate;
mod group_replication;
mod install;
mod interruptions;
mod languages;
mod limits;
mod names;
mod operations;
mod package;
mod periods;
mod plain;
mod reconcile;
mod resize;
mod snapshot_isolation;
mod spider;
mod totals;
mod triggers;
mod variants;
mod write_ids;
