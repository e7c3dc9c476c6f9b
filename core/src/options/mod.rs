//! Generator options: what a user may ask for ([`PackageOptionsBuilder`])
//! and the validated form every template relies on ([`PackageOptions`]).
//!
//! Validation happens here, once, so templates only place values that are
//! known to be safe SQL identifiers and sane numbers.

mod builder;

pub use builder::PackageOptionsBuilder;

use crate::features::Features;

/// Counter table created when `--table` is not given.
pub const DEFAULT_TABLE: &str = "counters";
/// Routine name prefix used when `--prefix` is not given.
pub const DEFAULT_PREFIX: &str = "counter_";
/// Slots given to a counter whose setup passes NULL slots.
pub const DEFAULT_SLOTS: u32 = 5;
/// Largest slot count `counter_setup` accepts unless `--max-slots` says otherwise.
pub const DEFAULT_MAX_SLOTS: u32 = 1024;
/// Collation of the table and of every text parameter unless `--collation`
/// says otherwise: binary, so that two names are one counter only when they
/// are the same characters (a `_ci` collation folds case and accents, and
/// `utf8mb4_unicode_ci` every emoji into one). Known to MySQL 8 and MariaDB
/// alike, PAD SPACE on both; trailing spaces are refused anyway.
pub const DEFAULT_COLLATION: &str = "utf8mb4_bin";
/// Width of the `counter_name` column unless `--name-length` says otherwise:
/// a customer's UUID (36), a period and a prefix fit (`api:`, `:day`), as
/// quota keys need. Tables made at another width keep it: `install` renders
/// the package at the width they hold.
pub const DEFAULT_NAME_LENGTH: u32 = 128;
/// How long a write id is kept unless `--write-id-window` says otherwise: a
/// write whose answer was lost may be sent again, and counted once, for
/// this long. The retry budget of a client must end well within it.
pub const WRITE_ID_WINDOW: std::time::Duration = std::time::Duration::from_secs(600);
/// Slot numbers are stored as SMALLINT UNSIGNED, whose largest value is a
/// limited bucket's end ([`BUCKET_END`]).
pub const SLOT_LIMIT: u32 = 65_534;
/// The slot number of a limited bucket's end: a row of no slot, counting
/// 0, at which the check of a limit per period stops its locks, so that
/// they hold no row or gap of another bucket or counter.
pub const BUCKET_END: u32 = 65_535;
/// Longest counter name we allow: the name is the primary key's first part,
/// and 255 utf8mb4 characters stay well inside InnoDB's 3072-byte key limit.
pub const NAME_LENGTH_LIMIT: u32 = 255;
/// MySQL and MariaDB reject table and routine names longer than this.
pub const IDENTIFIER_LIMIT: usize = 64;

/// How an increment picks the slot it adds to (`--slot-choice`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum SlotChoice {
    /// Uniformly at random, per increment: every client spreads over all
    /// slots.
    #[default]
    Random,
    /// `CONNECTION_ID() % slots + 1`: one slot per connection.
    Connection,
    /// At random among the slots this node owns on a multi-primary cluster:
    /// slot numbers congruent to the node's position modulo the number of
    /// nodes, so two nodes never write the same row. The position is
    /// auto_increment_offset modulo auto_increment_increment, which Galera
    /// keeps at the node's position and the cluster size (plain random on a
    /// single server, where both are 1); with --cluster group-replication,
    /// the member's rank among the group's members.
    Node,
}

impl SlotChoice {
    /// The flag value that selects this choice.
    pub fn name(self) -> &'static str {
        match self {
            SlotChoice::Random => "random",
            SlotChoice::Connection => "connection",
            SlotChoice::Node => "node",
        }
    }
}

/// A multi-primary cluster the package is made for (`--cluster`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Cluster {
    /// MariaDB Galera: node-owned slots, and a reset that changes every
    /// slot before it sets them, so that it cannot miss, without a conflict,
    /// an increment another node acknowledged and this one has not applied
    /// yet. Plain SQL: the package also runs on a single server.
    Galera,
    /// MySQL Group Replication, multi-primary: node-owned slots by the
    /// member's rank among the group's members (by server UUID), whatever
    /// the server ids, and the reset Galera has, which loses certification
    /// (3101) rather than miss an increment acknowledged on another member.
    /// MySQL only: the routines read
    /// performance_schema.replication_group_members.
    GroupReplication,
}

impl Cluster {
    /// The flag value that selects this cluster.
    pub fn name(self) -> &'static str {
        match self {
            Cluster::Galera => "galera",
            Cluster::GroupReplication => "group-replication",
        }
    }
}

/// How many slots a counter gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotPolicy {
    /// Each setup chooses; NULL means `default`. Increments look the count up.
    Dynamic { default: u32 },
    /// Every counter has exactly this many slots, hard-coded in the routines.
    Fixed(u32),
}

/// Options that passed validation: identifiers match `[A-Za-z_][A-Za-z0-9_]*`
/// and fit in 64 characters, and every slot count is within `1..=max_slots`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageOptions {
    table: String,
    prefix: String,
    slots: SlotPolicy,
    max_slots: u32,
    name_length: u32,
    slot_choice: SlotChoice,
    auto_create: bool,
    max_counters: Option<u64>,
    /// Seconds a write id is kept, when not [`WRITE_ID_WINDOW`]'s.
    write_id_window: Option<u32>,
    collation: String,
    cluster: Option<Cluster>,
    features: Features,
}

impl Default for PackageOptions {
    fn default() -> Self {
        Self {
            table: DEFAULT_TABLE.to_owned(),
            prefix: DEFAULT_PREFIX.to_owned(),
            slots: SlotPolicy::Dynamic { default: DEFAULT_SLOTS },
            max_slots: DEFAULT_MAX_SLOTS,
            name_length: DEFAULT_NAME_LENGTH,
            slot_choice: SlotChoice::Random,
            auto_create: false,
            max_counters: None,
            write_id_window: None,
            collation: DEFAULT_COLLATION.to_owned(),
            cluster: None,
            features: Features::ALL,
        }
    }
}

impl PackageOptions {
    /// Options to set and validate; [`PackageOptions::default`] is the classic package.
    pub fn builder() -> PackageOptionsBuilder {
        PackageOptionsBuilder::default()
    }

    /// The counter table's name.
    pub fn table(&self) -> &str {
        &self.table
    }

    /// The prefix every routine name starts with.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// How increments pick their slot.
    pub fn slot_choice(&self) -> SlotChoice {
        self.slot_choice
    }

    /// Whether increments create unknown counters.
    pub fn auto_create(&self) -> bool {
        self.auto_create
    }

    /// The most counters increments may create, if limited.
    pub fn max_counters(&self) -> Option<u64> {
        self.max_counters
    }

    /// How many seconds the package keeps a write id: writes with ids
    /// forget the ids older than that as they go.
    pub fn write_id_window(&self) -> u32 {
        self.write_id_window.unwrap_or(WRITE_ID_WINDOW.as_secs() as u32)
    }

    /// The most a slot may hold, either way from 0: the largest BIGINT over
    /// the most slots a counter may have, so that a counter's total always
    /// fits the BIGINT `counter_get` returns.
    pub fn slot_bound(&self) -> i64 {
        let slots = match self.slots {
            SlotPolicy::Fixed(slots) => slots,
            SlotPolicy::Dynamic { .. } => self.max_slots,
        };
        i64::MAX / i64::from(slots)
    }

    /// The multi-primary cluster the package is made for, if any.
    pub fn cluster(&self) -> Option<Cluster> {
        self.cluster
    }

    /// What the package holds beside the classic core.
    pub fn features(&self) -> Features {
        self.features
    }

    /// Whether slot counts are chosen per counter or hard-coded.
    pub fn slots(&self) -> SlotPolicy {
        self.slots
    }

    /// The largest slot count a setup may ask for.
    pub fn max_slots(&self) -> u32 {
        self.max_slots
    }

    /// The collation of the table, of every text parameter and variable.
    pub fn collation(&self) -> &str {
        &self.collation
    }

    /// The width of the counter name column, in characters.
    pub fn name_length(&self) -> u32 {
        self.name_length
    }
}

/// The command-line flags that reproduce `options`, in a fixed order,
/// defaults included, so a generated file says exactly how it was made.
pub fn flags(options: &PackageOptions) -> Vec<String> {
    let mut args =
        vec!["--table".to_owned(), options.table.clone(), "--prefix".to_owned(), options.prefix.clone()];
    match options.slots {
        SlotPolicy::Dynamic { default } => {
            args.extend(["--default-slots".to_owned(), default.to_string()]);
        }
        SlotPolicy::Fixed(slots) => args.extend(["--fixed-slots".to_owned(), slots.to_string()]),
    }
    args.extend([
        "--max-slots".to_owned(),
        options.max_slots.to_string(),
        "--name-length".to_owned(),
        options.name_length.to_string(),
        "--slot-choice".to_owned(),
        options.slot_choice.name().to_owned(),
        "--collation".to_owned(),
        options.collation.clone(),
    ]);
    if options.auto_create {
        args.push("--auto-create".to_owned());
    }
    if let Some(counters) = options.max_counters {
        args.extend(["--max-counters".to_owned(), counters.to_string()]);
    }
    if let Some(seconds) = options.write_id_window {
        args.extend(["--write-id-window".to_owned(), seconds.to_string()]);
    }
    if let Some(cluster) = options.cluster {
        args.extend(["--cluster".to_owned(), cluster.name().to_owned()]);
    }
    if options.features != Features::ALL {
        args.extend(["--features".to_owned(), options.features.to_string()]);
    }
    args
}

#[cfg(all(test, feature = "clap"))]
mod tests {
    use clap::ValueEnum;

    use super::*;

    #[test]
    fn the_flags_values_are_the_names_the_generated_files_record() {
        for choice in SlotChoice::value_variants() {
            assert_eq!(choice.to_possible_value().unwrap().get_name(), choice.name());
        }
        for cluster in Cluster::value_variants() {
            assert_eq!(cluster.to_possible_value().unwrap().get_name(), cluster.name());
        }
    }
}
