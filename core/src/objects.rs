//! The package's objects apart from any prefix: its routines, and what
//! the names of its tables, triggers and install helpers add to the
//! prefix. Options check a prefix against these, and [`crate::package`]
//! names the objects of a package from them: this module depends on
//! neither.

use crate::features::{Feature, Features};

/// One routine of the package. Its name is the package prefix plus [`Routine::suffix`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Routine {
    /// `counter_name_problem(name)`: what makes a name no counter may have
    /// unusable (a control character, a character the collation ignores, a
    /// trailing space), or NULL. The routines call it only for a name with
    /// a character outside printable ASCII, a quote or a backslash, or
    /// ending in a space, so the check is written once and a usual name
    /// pays nothing for it.
    NameProblem,
    /// `counter_parse_number(text)`: the number a number parameter's text
    /// writes, or NULL, for every routine that reads one off the hot path
    /// (the parse is written once; `counter_add` reads an integer inline).
    ParseNumber,
    /// `counter_spread(name, slots, value, floor, ceiling)`: a bounded
    /// counter's new total written over its locked slots with their shares
    /// of the bounds, for every routine and trigger that spreads one.
    Spread,
    Setup,
    /// `counter_add_featured(name, slot, slots, delta, at)`: the write of
    /// `add`, `increment` and `add_at` of a counter that tracks a period,
    /// or that its slot could not take alone, written once for the three of
    /// them in a package with periods. They call it with their definer's
    /// rights, and only when their UPDATE of the slot changed no row: the
    /// hot path makes no second CALL.
    AddFeatured,
    Add,
    Increment,
    /// `counter_plan_batch(deltas, OUT entries, OUT plan)`: the batch
    /// routines' checks of every name and delta, and each counter's slot,
    /// written once for the three of them. It writes nothing; they call it
    /// with their definer's rights.
    PlanBatch,
    AddMany,
    Reset,
    Resize,
    Compact,
    Delete,
    Get,
    Estimate,
    AddOnce,
    AddManyOnce,
    ForgetWrites,
    Track,
    /// `counter_track_at_offset(name, period, keep, utc_offset)`: `track`,
    /// with buckets that start at a fixed offset from UTC in minutes, as a
    /// customer's midnight; `counter_track` keeps a period's offset.
    TrackAtOffset,
    /// `counter_add_within_limit(name, period, bucket, slot, delta, limit,
    /// offset)`: a write's delta to its bucket of a limited period under
    /// the quota's lock, or its refusal. The triggers that apply writes
    /// call it with their definer's rights, with the limit they read.
    AddWithinLimit,
    AddAt,
    AddManyAt,
    GetPeriod,
    GetRange,
    /// `counter_utc_offset(name, period)`: where a tracked period's buckets
    /// start, in minutes east of UTC, for a reader that computes them.
    UtcOffset,
    Series,
    ExpirePeriods,
    Bound,
    /// `counter_limit(name, period, highest)`: the most each bucket of a
    /// period may count, a quota per minute, hour, day or month.
    Limit,
    /// `counter_room(name)`: one row per bound and limit of a counter, with
    /// the room left toward it and when that room comes back.
    Room,
    /// `counter_package()`: the package's version and the options it was
    /// generated with, features included ([`crate::package::package_line`]).
    Package,
}

impl Routine {
    /// Every routine any package has, in the order a package creates them.
    /// [`Routine::in_package`] tells which a given package has.
    pub const ALL: [Routine; 32] = [
        Routine::NameProblem,
        Routine::ParseNumber,
        Routine::Spread,
        Routine::Setup,
        Routine::AddFeatured,
        Routine::Add,
        Routine::Increment,
        Routine::PlanBatch,
        Routine::AddMany,
        Routine::Reset,
        Routine::Resize,
        Routine::Compact,
        Routine::Delete,
        Routine::Get,
        Routine::Estimate,
        Routine::AddOnce,
        Routine::AddManyOnce,
        Routine::ForgetWrites,
        Routine::Track,
        Routine::TrackAtOffset,
        Routine::AddWithinLimit,
        Routine::AddAt,
        Routine::AddManyAt,
        Routine::GetPeriod,
        Routine::GetRange,
        Routine::UtcOffset,
        Routine::Series,
        Routine::ExpirePeriods,
        Routine::Bound,
        Routine::Limit,
        Routine::Room,
        Routine::Package,
    ];

    /// The features a package needs to have the routine: none for the
    /// core's.
    pub fn needs(self) -> Features {
        let features: &[Feature] = match self {
            Routine::NameProblem
            | Routine::ParseNumber
            | Routine::Setup
            | Routine::Add
            | Routine::Increment
            | Routine::Reset
            | Routine::Delete
            | Routine::Get
            | Routine::Estimate
            | Routine::Package => &[],
            Routine::Resize | Routine::Compact => &[Feature::Resize],
            Routine::PlanBatch | Routine::AddMany => &[Feature::Batches],
            Routine::AddOnce | Routine::ForgetWrites => &[Feature::WriteIds],
            Routine::AddManyOnce => &[Feature::Batches, Feature::WriteIds],
            Routine::AddFeatured
            | Routine::Track
            | Routine::TrackAtOffset
            | Routine::UtcOffset
            | Routine::AddAt
            | Routine::GetPeriod
            | Routine::GetRange
            | Routine::Series
            | Routine::ExpirePeriods
            | Routine::AddWithinLimit
            | Routine::Limit
            | Routine::Room => &[Feature::Periods],
            Routine::AddManyAt => &[Feature::Batches, Feature::Periods],
            Routine::Bound | Routine::Spread => &[Feature::Bounds],
        };
        features.iter().copied().collect()
    }

    /// The part of the routine's name after the prefix.
    pub fn suffix(self) -> &'static str {
        match self {
            Routine::NameProblem => "name_problem",
            Routine::ParseNumber => "parse_number",
            Routine::Spread => "spread",
            Routine::Setup => "setup",
            Routine::AddFeatured => "add_featured",
            Routine::Add => "add",
            Routine::Increment => "increment",
            Routine::PlanBatch => "plan_batch",
            Routine::AddMany => "add_many",
            Routine::Reset => "reset",
            Routine::Resize => "resize",
            Routine::Compact => "compact",
            Routine::Delete => "delete",
            Routine::Get => "get",
            Routine::Estimate => "estimate",
            Routine::AddOnce => "add_once",
            Routine::AddManyOnce => "add_many_once",
            Routine::ForgetWrites => "forget_writes",
            Routine::Track => "track",
            Routine::TrackAtOffset => "track_at_offset",
            Routine::UtcOffset => "utc_offset",
            Routine::AddWithinLimit => "add_within_limit",
            Routine::AddAt => "add_at",
            Routine::AddManyAt => "add_many_at",
            Routine::GetPeriod => "get_period",
            Routine::GetRange => "get_range",
            Routine::Series => "series",
            Routine::ExpirePeriods => "expire_periods",
            Routine::Bound => "bound",
            Routine::Limit => "limit",
            Routine::Room => "room",
            Routine::Package => "package",
        }
    }

    /// Whether an application that counts and reads calls it. Setup, reset,
    /// resize, compact, delete, track, bound and limit change or destroy counts, or
    /// what a count may be: they are for administrators, and `install
    /// --app-user` grants none of them. An application forgets its own old
    /// write ids, and expires the buckets beyond what each period keeps.
    /// The name check, the number parse, the spread, the batches' plan,
    /// the featured write and a write's check of a limit are the other
    /// routines' and the triggers' own: they call them with their definer's
    /// rights.
    pub fn for_applications(self) -> bool {
        matches!(
            self,
            Routine::Add
                | Routine::Increment
                | Routine::AddMany
                | Routine::Get
                | Routine::Estimate
                | Routine::AddOnce
                | Routine::AddManyOnce
                | Routine::ForgetWrites
                | Routine::AddAt
                | Routine::AddManyAt
                | Routine::GetPeriod
                | Routine::GetRange
                | Routine::UtcOffset
                | Routine::Series
                | Routine::ExpirePeriods
                | Routine::Room
                | Routine::Package
        )
    }

    /// How many parameters it takes, in every package.
    pub fn arity(self) -> usize {
        match self {
            Routine::AddWithinLimit => 7,
            Routine::AddFeatured | Routine::Spread => 5,
            Routine::Setup | Routine::GetRange | Routine::Series | Routine::TrackAtOffset => 4,
            Routine::PlanBatch
            | Routine::Reset
            | Routine::AddOnce
            | Routine::Track
            | Routine::Bound
            | Routine::Limit
            | Routine::AddAt
            | Routine::AddManyAt
            | Routine::GetPeriod => 3,
            Routine::Add | Routine::Resize | Routine::AddManyOnce | Routine::UtcOffset => 2,
            Routine::ExpirePeriods | Routine::Package => 0,
            Routine::NameProblem
            | Routine::ParseNumber
            | Routine::ForgetWrites
            | Routine::Increment
            | Routine::AddMany
            | Routine::Compact
            | Routine::Delete
            | Routine::Get
            | Routine::Estimate
            | Routine::Room => 1,
        }
    }

    /// Whether it is a function, read with `SELECT`, rather than a
    /// procedure, run with `CALL`.
    pub fn is_function(self) -> bool {
        matches!(
            self,
            Routine::NameProblem
                | Routine::ParseNumber
                | Routine::Get
                | Routine::Estimate
                | Routine::GetPeriod
                | Routine::GetRange
                | Routine::UtcOffset
                | Routine::Package
        )
    }

    /// `FUNCTION` or `PROCEDURE`, as DROP and CREATE statements spell it.
    pub fn kind(self) -> &'static str {
        if self.is_function() { "FUNCTION" } else { "PROCEDURE" }
    }
}

/// Suffix of the view of totals: `counter_totals` with the default prefix.
pub const TOTALS_VIEW_SUFFIX: &str = "totals";

/// Suffix of the view of every counter's bounds, limits and room:
/// `counter_rooms` with the default prefix.
pub const ROOMS_VIEW_SUFFIX: &str = "rooms";

/// Suffix of the table of write ids: `counter_writes` with the default prefix.
pub const WRITES_TABLE_SUFFIX: &str = "writes";

/// Suffix of the table of changes that rewrite more than one slot:
/// `counter_changes` with the default prefix.
pub const CHANGES_TABLE_SUFFIX: &str = "changes";

/// Suffix of the table of the periods each counter tracks:
/// `counter_periods` with the default prefix.
pub const PERIODS_TABLE_SUFFIX: &str = "periods";

/// Suffix of the table of the periods' buckets: `counter_buckets` with the
/// default prefix.
pub const BUCKETS_TABLE_SUFFIX: &str = "buckets";

/// Suffix of the table of the last write to each slot of a counter that
/// tracks periods: `counter_tracked_writes` with the default prefix.
pub const TRACKED_WRITES_TABLE_SUFFIX: &str = "tracked_writes";

/// Suffix of the table of the last spread of each bounded counter:
/// `counter_spreads` with the default prefix.
pub const SPREADS_TABLE_SUFFIX: &str = "spreads";

/// What the name of a table's CHECK on [`crate::package::PENDING_COLUMN`] adds to the
/// table's: `counter_writes_applied` with the default prefix.
pub const APPLIED_CHECK_SUFFIX: &str = "_applied";

/// The package's triggers, by the suffix of their names: the two that keep
/// every slot within [`crate::PackageOptions::slot_bound`] (one for
/// inserted rows, one for updated), the one that applies a write with an
/// id in the statement that records the id, the one that makes a change in
/// the statement that records it, and the one that applies a write of a
/// counter that tracks periods to its slot and buckets in the statement
/// that records it, and the one that spreads a bounded counter's new total
/// over its slots in the statement that records the spread.
pub const TRIGGER_SUFFIXES: [&str; 6] = [
    "slot_bound_insert",
    "slot_bound_update",
    "apply_write",
    "apply_change",
    "apply_tracked_write",
    "apply_spread",
];

/// The function `setup.sql` creates and drops before it changes anything,
/// prefix included: an account that may not create functions fails there.
pub const PROBE_SUFFIX: &str = "install_probe";

/// The procedure `setup.sql` creates for MySQL, which revokes an account's
/// grants on a routine as it drops the routine: called right after each
/// routine is created again, it grants again what accounts held on it
/// before the install, and the install drops it at its end.
pub const GRANTS_KEEPER_SUFFIX: &str = "install_grants";
