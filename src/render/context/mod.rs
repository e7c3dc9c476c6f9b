//! What the templates place, computed from validated [`PackageOptions`],
//! grouped by what it describes: the features the package has, its
//! objects' names, the SQL types, the slots, batches, write ids, periods,
//! the cluster, the errors and the install's checks.

mod install;
mod limits;
mod names;
mod periods;
mod slots;
mod types;

use slotted_counters_core::options::flags;
use slotted_counters_core::package::{self, Routine, server_errno};
use slotted_counters_core::{Cluster, Feature, PackageOptions, SlotPolicy};

use install::Install;
use limits::{Batches, Errors, WriteIds};
use names::Names;
use periods::Periods;
use slots::Slots;
use types::Types;

/// How `counter_reset` resets a counter.
pub(super) enum ResetBody {
    /// One UPDATE of every slot.
    Classic,
    /// Lazy counters may lack slot 1: the counter is rewritten as one row.
    Lazy,
    /// Every slot changed before it is set, so that a multi-primary cluster
    /// certifies the reset against increments this node has not applied yet.
    Certified,
}

impl ResetBody {
    fn of(options: &PackageOptions) -> Self {
        match options.cluster() {
            _ if options.auto_create() => ResetBody::Lazy,
            Some(_) => ResetBody::Certified,
            None => ResetBody::Classic,
        }
    }
}

/// A routine of the package: `_routines.sql` creates it, `uninstall.sql`
/// drops it.
pub(super) struct RoutineRef {
    pub(super) routine: Routine,
    pub(super) kind: &'static str,
    pub(super) name: String,
}

/// The values the templates place.
pub(super) struct Context {
    pub(super) args: String,
    /// Every routine's COMMENT until [`super::comments::seal`] puts each
    /// routine's digest in it.
    pub(super) comment: &'static str,
    /// What `counter_package()` answers.
    pub(super) package_line: String,
    pub(super) routines: Vec<RoutineRef>,
    /// Which of the three `counter_reset` bodies the package has.
    pub(super) reset_body: ResetBody,
    /// Whether a write reads, with the slot count, whether the counter
    /// tracks no period (`v_untracked`) and is bounded (`v_bounded`): a
    /// package with periods or bounds whose slots are counted by a read.
    /// An untracked counter's write is then one UPDATE of its slot, bounded
    /// or not; a bounded one looks at its slot's room first, as an UPDATE
    /// that found none would leave the slot locked (see
    /// `look_before_locking` in `routines/_bounds.sql`).
    pub(super) classic_flag: bool,
    /// Whether `counter_add` and `counter_increment` check the name only
    /// once their write found no row: in a binary collation no name a
    /// counter may not have matches a counter's rows but one ending in a
    /// space, which their reads and UPDATE skip. Not with `--auto-create`,
    /// whose write creates the counter.
    pub(super) defers_name_check: bool,
    pub(super) has: Has,
    pub(super) names: Names,
    pub(super) types: Types,
    pub(super) slots: Slots,
    pub(super) batches: Batches,
    pub(super) write_ids: WriteIds,
    pub(super) periods: Periods,
    pub(super) cluster: ClusterParts,
    pub(super) errors: Errors,
    pub(super) install: Install,
    /// For the routines' names, which [`Context::routine`] gives.
    options: PackageOptions,
}

/// What the package holds, which other templates' parts depend on.
pub(super) struct Has {
    pub(super) resize: bool,
    pub(super) periods: bool,
    pub(super) bounds: bool,
    pub(super) auto_create: bool,
    /// The most counters lazy increments may create.
    pub(super) max_counters: Option<u64>,
    /// Whether the slower write of a tracked or bounded counter is the
    /// routine `add_featured`, called by the writes, rather than inline.
    pub(super) add_featured: bool,
    /// Whether it has the table of write ids and its trigger (batches or
    /// write ids), the table of changes and its trigger
    /// ([`package::has_changes_table`]), and the slot bound's triggers
    /// ([`package::triggers_in_package`]).
    pub(super) writes_table: bool,
    pub(super) changes_table: bool,
    pub(super) slot_bound_triggers: bool,
}

/// What a multi-primary cluster asks of the package.
pub(super) struct ClusterParts {
    /// The cluster a certified reset is made for, as its comments name it.
    pub(super) name: &'static str,
    /// The error a transaction that lost certification fails with there.
    pub(super) certification_error: u16,
    /// Galera's multi-row changes are made by the routines themselves on
    /// MariaDB in autocommit mode, in a transaction of their own: a CALL
    /// whose change, made by the trigger, lost certification (1213) left the
    /// session failing every later CALL with 1213 at once, until it sent a
    /// statement of another kind (MariaDB 10.11.19, galera-4 26.4.23).
    /// MariaDB runs the routine's handler when a call is killed, so the
    /// transaction is not left open; on MySQL and in a caller's transaction
    /// the routines record the change for the trigger, as elsewhere.
    pub(super) changes_in_own_transaction: bool,
}

impl ClusterParts {
    fn new(options: &PackageOptions) -> Self {
        let (name, certification_error) = match options.cluster() {
            Some(Cluster::GroupReplication) => ("Group Replication", server_errno::CERTIFICATION_FAILED),
            _ => ("Galera", server_errno::DEADLOCK),
        };
        ClusterParts {
            name,
            certification_error,
            changes_in_own_transaction: options.cluster() == Some(Cluster::Galera),
        }
    }
}

impl Context {
    pub(super) fn new(options: &PackageOptions) -> Self {
        let features = options.features();
        let fixed_slots = matches!(options.slots(), SlotPolicy::Fixed(_));
        let [insert_trigger, ..] = package::trigger_names(options);
        Self {
            args: flags(options).join(" "),
            comment: super::comments::UNSEALED,
            package_line: package::package_line(options),
            routines: Routine::in_package(options)
                .into_iter()
                .map(|routine| RoutineRef { routine, kind: routine.kind(), name: routine.name(options) })
                .collect(),
            reset_body: ResetBody::of(options),
            classic_flag: (features.has(Feature::Periods) || features.has(Feature::Bounds))
                && !options.auto_create()
                && !fixed_slots,
            defers_name_check: options.collation().ends_with("_bin") && !options.auto_create(),
            has: Has {
                resize: features.has(Feature::Resize),
                periods: features.has(Feature::Periods),
                bounds: features.has(Feature::Bounds),
                auto_create: options.auto_create(),
                max_counters: options.max_counters(),
                add_featured: Routine::in_package(options).contains(&Routine::AddFeatured),
                writes_table: package::has_writes_table(options),
                changes_table: package::has_changes_table(options),
                slot_bound_triggers: package::triggers_in_package(options).contains(&insert_trigger),
            },
            names: Names::new(options),
            types: Types::new(options),
            slots: Slots::new(options),
            batches: Batches::new(options),
            write_ids: WriteIds::new(options),
            periods: Periods::new(),
            cluster: ClusterParts::new(options),
            errors: Errors::new(),
            install: Install::new(options),
            options: options.clone(),
        }
    }

    /// The name of the CHECK that refuses a row of `table` its trigger did
    /// not apply: `p.applied_check(p.names.writes_table)`.
    pub(super) fn applied_check(&self, table: &str) -> String {
        package::applied_check(table)
    }

    /// The name of `routine` in this package: `p.routine(Routine::Add)`.
    pub(super) fn routine(&self, routine: Routine) -> String {
        routine.name(&self.options)
    }
}
