//! What the templates place, computed from validated [`PackageOptions`]:
//! names, types, limits, error numbers and the statements' pieces.

use slotted_counters_core::options::{BUCKET_END, flags};
use slotted_counters_core::package::{self, Routine, errno, server_errno};
use slotted_counters_core::periods::{self, Period};
use slotted_counters_core::{Cluster, Feature, PackageOptions, SlotChoice, SlotPolicy};

/// Width of every text parameter, in characters, whatever its column's.
/// A session with a non-strict `sql_mode` cuts a longer argument to this
/// width with only a warning: kept wider than any name or description may
/// be, a cut argument is still too long and meets the routine's own check,
/// instead of being cut to another counter's name. (A strict session rejects
/// an argument wider than this with error 1406.)
const TEXT_PARAMETER_LENGTH: u32 = 1024;

/// Character set of the table, of every text parameter and of every text
/// variable: a variable without one takes the database's, and a latin1
/// database cannot hold a non-latin1 name in it (error 1366).
const CHARSET: &str = "utf8mb4";

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
    /// Whether it holds each feature whose parts other templates name.
    pub(super) resize: bool,
    pub(super) periods_feature: bool,
    pub(super) bounds: bool,
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
    /// Whether the slower write of a tracked or bounded counter is the
    /// routine `add_featured`, called by the writes, rather than inline.
    pub(super) has_add_featured: bool,
    /// Whether it has the table of write ids and its trigger (batches or
    /// write ids), the table of changes and its trigger
    /// ([`package::has_changes_table`]), and the slot bound's triggers
    /// ([`package::triggers_in_package`]).
    pub(super) has_writes_table: bool,
    pub(super) has_changes_table: bool,
    /// The tables beside the slots that hold rows of a counter and that
    /// `counter_delete` empties of its rows in one statement each: its last
    /// change, its last spread, its periods and its last tracked writes (the
    /// buckets go in batches).
    pub(super) counter_rows_tables: Vec<String>,
    pub(super) slot_bound_triggers: bool,
    pub(super) table: String,
    pub(super) charset: &'static str,
    pub(super) collation: String,
    pub(super) name_length: u32,
    /// Every text parameter is [`TEXT_PARAMETER_LENGTH`] wide, so a
    /// name that is too long reaches the routine's own check instead of
    /// being cut to a valid name by a non-strict session.
    pub(super) name_type: String,
    pub(super) description_length: u32,
    pub(super) description_type: String,
    /// Text variables declare their character set (the database's may be
    /// latin1) and their collation (the server's default for the character
    /// set differs: `utf8mb4_0900_ai_ci` on MySQL 8+, `utf8mb4_general_ci` on
    /// MariaDB, and two of them in one comparison fail with 1267).
    pub(super) message_type: String,
    /// The most characters of a refusal's message.
    pub(super) message_length: u32,
    pub(super) description_variable_type: String,
    /// Every numeric parameter: text, as wide as the others, which the
    /// routine reads as a number itself (`read_number` in `_macros.sql`), so that
    /// neither a non-strict `sql_mode` nor a rounding changes an argument
    /// before the routine's check sees it.
    pub(super) number_type: String,
    /// Every time parameter: text, which the routine reads as a UTC moment
    /// itself (`read_moment` in `routines/_periods.sql`), so that no offset
    /// is moved into the session's time zone on the way in.
    pub(super) moment_type: String,
    pub(super) fixed_slots: Option<u32>,
    /// Which of the three `counter_reset` bodies the package has.
    pub(super) reset_body: ResetBody,
    /// The cluster a certified reset is made for, as its comments name it.
    pub(super) cluster_name: &'static str,
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
    pub(super) default_slots: u32,
    pub(super) max_slots: u32,
    /// How an increment picks its slot.
    pub(super) slot_choice: SlotChoice,
    /// How many slots it picks among: the fixed count, or `v_slots`.
    pub(super) slot_count: String,
    /// Node slots: the node's position among the nodes, from 1, and their
    /// number, as SQL expressions.
    pub(super) node_position: &'static str,
    pub(super) node_count: &'static str,
    /// Group Replication's table of members, where the routines find their
    /// member's position.
    pub(super) group_members: Option<&'static str>,
    pub(super) slot_numbers: SlotNumbers,
    pub(super) batch_limit: u32,
    /// The most bytes a batch's text may have.
    pub(super) batch_bytes: u64,
    /// How many entries a batch's statement gathers before it appends them
    /// to its text.
    pub(super) batch_part: u32,
    /// The most a slot may hold either way, and the slot count it is for.
    pub(super) slot_bound: i64,
    pub(super) bound_slots: u32,
    /// The largest limit per period: what a bucket, a BIGINT, may count.
    pub(super) largest_limit: i64,
    /// The slot number of a limited bucket's end (see [`BUCKET_END`]).
    pub(super) bucket_end: u32,
    /// The triggers that keep slots within the bound: on insert, on update.
    pub(super) insert_trigger: String,
    pub(super) update_trigger: String,
    /// The trigger that applies a write with an id as its id is recorded.
    pub(super) apply_trigger: String,
    /// The trigger that makes a change as it is recorded, and their table.
    pub(super) change_trigger: String,
    pub(super) changes_table: String,
    /// The most counters lazy increments may create.
    pub(super) max_counters: Option<u64>,
    /// A batch of deltas: JSON text, in the package's character set.
    pub(super) deltas_type: String,
    /// The parts of the statement a batch builds: hex literals, numbers
    /// and keywords.
    pub(super) statement_type: &'static str,
    pub(super) auto_create: bool,
    /// The view's slot count: the rows of a counter, or the fixed count when
    /// lazily created counters have only the rows that were hit.
    pub(super) view_slots: String,
    pub(super) totals_view: String,
    /// The view of every counter's room, which a package with periods has.
    pub(super) rooms_view: String,
    pub(super) probe: String,
    /// The procedure that grants again, on MySQL, what accounts held on a
    /// routine the install dropped and created again.
    pub(super) grants_keeper: String,
    /// What the probe refuses to install over: the package's tables and
    /// views, each with the columns that tell it is the package's; its
    /// triggers with their tables; the mark every routine's COMMENT begins
    /// with.
    pub(super) relations: Vec<package::Relation>,
    /// The names of the features the package lacks, which the probe looks
    /// for in the installed package's `counter_package()` line, and of
    /// every feature, which a line without `--features` has.
    pub(super) lacked_features: Vec<&'static str>,
    pub(super) every_feature: String,
    /// The prefix as a LIKE pattern with `!` for its escape character: each
    /// `_` of it a literal.
    pub(super) prefix_pattern: String,
    pub(super) drop_features_variable: &'static str,
    /// The mode the package's routines and triggers are created in, and
    /// the variable keeping the installing session's meanwhile.
    pub(super) routine_sql_mode: &'static str,
    pub(super) installer_sql_mode: &'static str,
    pub(super) trigger_tables: Vec<(String, String)>,
    pub(super) routine_mark: &'static str,
    /// The events the docs suggest for the package's features, which
    /// `uninstall.sql` names.
    pub(super) documented_events: Vec<String>,
    pub(super) install_refused: u16,
    /// The table of write ids, and how many `forget_writes` deletes at a time.
    pub(super) writes_table: String,
    pub(super) forget_batch: u32,
    /// The longest window `forget_writes` takes, in seconds.
    pub(super) forget_limit: u64,
    /// Seconds a write id is kept, and how writes with ids forget older
    /// ones as they go: one call in `forget_chance`, up to
    /// `forget_per_write` ids each.
    pub(super) write_id_window: u32,
    pub(super) forget_chance: u32,
    pub(super) forget_per_write: u32,
    pub(super) routines: Vec<RoutineRef>,
    /// The tables of the periods counters track and of their buckets.
    pub(super) periods_table: String,
    pub(super) buckets_table: String,
    /// The table of the last write to each slot of a counter that tracks
    /// periods, and the trigger that applies it to the slot and its buckets.
    pub(super) tracked_writes_table: String,
    pub(super) tracked_write_trigger: String,
    /// The column that stays TRUE until its trigger applies a row, and that
    /// a CHECK refuses while it is (`_pending.sql`).
    pub(super) pending_column: &'static str,
    pub(super) pending_comment: &'static str,
    /// The table of the last spread of each bounded counter, and the
    /// trigger that makes the spread it records.
    pub(super) spreads_table: String,
    pub(super) spread_trigger: String,
    /// How many slots a bounded counter's total is spread over: the fixed
    /// count (a lazy counter's missing slots are created), or the slots the
    /// spread locked.
    pub(super) spread_slots: String,
    /// The periods a counter can track, their columns' type, and the type
    /// of a routine's period: in the package's collation, as its names'
    /// are, since a parameter of no collation of its own takes the
    /// database's, and comparing it with a column of another (not `_bin`)
    /// fails (1267).
    pub(super) periods: [Period; 4],
    pub(super) period_column_type: String,
    pub(super) period_type: String,
    /// `keep` as the counting triggers read a period that keeps every
    /// bucket: the column's largest value, which no keep check needs.
    pub(super) keep_all: u32,
    /// The offsets from UTC, in minutes, a period's buckets may start at.
    pub(super) west_most: i16,
    pub(super) east_most: i16,
    /// How far past now, in seconds, a point read's moment may be.
    pub(super) read_ahead: i64,
    /// The years a moment passed to the routines may fall in.
    pub(super) first_year: i32,
    pub(super) last_year: i32,
    /// The most buckets a series reads, and the numbers 1 to it.
    pub(super) series_limit: u32,
    pub(super) series_numbers: SlotNumbers,
    /// How many bucket rows a statement that drops buckets deletes at most.
    pub(super) expire_batch: u32,
    pub(super) unknown_counter: u16,
    pub(super) already_exists: u16,
    pub(super) invalid_argument: u16,
    pub(super) past_bound: u16,
    /// The SQLSTATE every refusal is signalled with.
    pub(super) refusal_state: &'static str,
    /// For the routines' names, which [`Context::routine`] gives.
    options: PackageOptions,
}

/// One write with an id in this many forgets expired ids, up to
/// [`FORGET_PER_WRITE`] of them: four per write on average, more than the
/// one each records, so the expired fall behind no faster than they come.
const FORGET_CHANCE: u32 = 16;
const FORGET_PER_WRITE: u32 = 64;

/// Entries a batch's statement gathers before it appends them to its text.
const BATCH_PART: u32 = 64;

impl ResetBody {
    fn of(options: &PackageOptions) -> Self {
        match options.cluster() {
            _ if options.auto_create() => ResetBody::Lazy,
            Some(_) => ResetBody::Certified,
            None => ResetBody::Classic,
        }
    }
}

/// The cluster a certified reset is made for, as its comments name it, and
/// the error a transaction that lost certification fails with there.
fn certification(options: &PackageOptions) -> (&'static str, u16) {
    match options.cluster() {
        Some(Cluster::GroupReplication) => ("Group Replication", server_errno::CERTIFICATION_FAILED),
        _ => ("Galera", server_errno::DEADLOCK),
    }
}

/// The node's position among the nodes, from 1, and their number, as the
/// SQL expressions node slots use: Group Replication's routines compute
/// them from the group's members; elsewhere, Galera's auto-increment
/// settings give them.
fn node_expressions(options: &PackageOptions) -> (&'static str, &'static str) {
    match options.cluster() {
        Some(Cluster::GroupReplication) => ("v_position", "v_members"),
        _ => (
            "(@@GLOBAL.auto_increment_offset - 1) % @@GLOBAL.auto_increment_increment + 1",
            "@@GLOBAL.auto_increment_increment",
        ),
    }
}

impl Context {
    pub(super) fn new(options: &PackageOptions) -> Self {
        // A routine's text in the package's collation: one declared without
        // takes the database's.
        let in_collation = |ty: &str| format!("{ty} CHARACTER SET {CHARSET} COLLATE {}", options.collation());
        let text_type = |length: u32| in_collation(&format!("VARCHAR({length})"));
        let (fixed_slots, default_slots) = match options.slots() {
            SlotPolicy::Fixed(slots) => (Some(slots), slots),
            SlotPolicy::Dynamic { default } => (None, default),
        };
        let (cluster_name, certification_error) = certification(options);
        let (node_position, node_count) = node_expressions(options);
        let [
            insert_trigger,
            update_trigger,
            apply_trigger,
            change_trigger,
            tracked_write_trigger,
            spread_trigger,
        ] = package::trigger_names(options);
        let period_names: Vec<String> = Period::ALL.iter().map(|period| format!("'{period}'")).collect();
        let period_column_type = format!("ENUM({})", period_names.join(", "));
        let tables = package::tables_in_package(options);
        // Lazily created counters have only the rows that were hit.
        let features = options.features();
        let triggers = package::triggers_in_package(options);
        let view_slots = match fixed_slots {
            Some(slots) if options.auto_create() => slots.to_string(),
            _ => "COUNT(*)".to_owned(),
        };
        Self {
            args: flags(options).join(" "),
            comment: super::comments::UNSEALED,
            package_line: package::package_line(options),
            resize: features.has(Feature::Resize),
            periods_feature: features.has(Feature::Periods),
            bounds: features.has(Feature::Bounds),
            classic_flag: (features.has(Feature::Periods) || features.has(Feature::Bounds))
                && !options.auto_create()
                && fixed_slots.is_none(),
            defers_name_check: options.collation().ends_with("_bin") && !options.auto_create(),
            has_add_featured: Routine::in_package(options).contains(&Routine::AddFeatured),
            has_writes_table: package::has_writes_table(options),
            has_changes_table: package::has_changes_table(options),
            counter_rows_tables: {
                let present = package::tables_in_package(options);
                [
                    package::changes_table(options),
                    package::spreads_table(options),
                    package::periods_table(options),
                    package::tracked_writes_table(options),
                ]
                .into_iter()
                .filter(|table| present.contains(table))
                .collect()
            },
            slot_bound_triggers: triggers.contains(&insert_trigger),
            table: options.table().to_owned(),
            charset: CHARSET,
            collation: options.collation().to_owned(),
            name_length: options.name_length(),
            name_type: text_type(TEXT_PARAMETER_LENGTH),
            description_length: package::DESCRIPTION_LENGTH,
            description_type: text_type(TEXT_PARAMETER_LENGTH),
            message_type: text_type(package::MESSAGE_LENGTH),
            message_length: package::MESSAGE_LENGTH,
            description_variable_type: text_type(package::DESCRIPTION_LENGTH),
            number_type: text_type(TEXT_PARAMETER_LENGTH),
            moment_type: text_type(TEXT_PARAMETER_LENGTH),
            fixed_slots,
            reset_body: ResetBody::of(options),
            cluster_name,
            certification_error,
            changes_in_own_transaction: options.cluster() == Some(Cluster::Galera),
            default_slots,
            max_slots: options.max_slots(),
            slot_choice: options.slot_choice(),
            slot_count: fixed_slots.map_or_else(|| "v_slots".to_owned(), |slots| slots.to_string()),
            node_position,
            node_count,
            group_members: (options.cluster() == Some(Cluster::GroupReplication))
                .then_some(package::GROUP_MEMBERS_TABLE),
            slot_numbers: SlotNumbers::up_to(fixed_slots.unwrap_or(options.max_slots())),
            batch_limit: package::BATCH_LIMIT,
            batch_bytes: package::batch_bytes(options.name_length()),
            batch_part: BATCH_PART,
            slot_bound: options.slot_bound(),
            largest_limit: i64::MAX,
            bucket_end: BUCKET_END,
            bound_slots: fixed_slots.unwrap_or(options.max_slots()),
            insert_trigger,
            update_trigger,
            apply_trigger,
            change_trigger,
            changes_table: package::changes_table(options),
            max_counters: options.max_counters(),
            deltas_type: format!("LONGTEXT CHARACTER SET {CHARSET} COLLATE {}", options.collation()),
            statement_type: "LONGTEXT CHARACTER SET ascii COLLATE ascii_bin",
            auto_create: options.auto_create(),
            view_slots,
            totals_view: package::totals_view(options),
            rooms_view: package::rooms_view(options),
            probe: package::probe_name(options),
            grants_keeper: package::grants_keeper_name(options),
            relations: {
                let views = package::views_in_package(options);
                package::relations(options)
                    .into_iter()
                    .filter(|relation| tables.contains(&relation.name) || views.contains(&relation.name))
                    .collect()
            },
            lacked_features: Feature::ALL
                .into_iter()
                .filter(|&feature| !features.has(feature))
                .map(Feature::name)
                .collect(),
            every_feature: Feature::ALL.map(Feature::name).join(","),
            prefix_pattern: options.prefix().replace('_', "!_"),
            drop_features_variable: package::DROP_FEATURES_VARIABLE,
            routine_sql_mode: package::ROUTINE_SQL_MODE,
            installer_sql_mode: package::INSTALLER_SQL_MODE_VARIABLE,
            trigger_tables: package::triggers_with_tables(options)
                .into_iter()
                .filter(|(trigger, _)| triggers.contains(trigger))
                .collect(),
            routine_mark: package::ROUTINE_MARK,
            documented_events: package::documented_events(options),
            install_refused: errno::INSTALL_REFUSED,
            writes_table: package::writes_table(options),
            forget_batch: package::FORGET_BATCH,
            forget_limit: package::FORGET_LIMIT.as_secs(),
            write_id_window: options.write_id_window(),
            forget_chance: FORGET_CHANCE,
            forget_per_write: FORGET_PER_WRITE,
            routines: Routine::in_package(options)
                .into_iter()
                .map(|routine| RoutineRef { routine, kind: routine.kind(), name: routine.name(options) })
                .collect(),
            periods_table: package::periods_table(options),
            buckets_table: package::buckets_table(options),
            tracked_writes_table: package::tracked_writes_table(options),
            tracked_write_trigger,
            pending_column: package::PENDING_COLUMN,
            pending_comment: "TRUE until its trigger applies the row: a CHECK refuses the row while it is",
            spreads_table: package::spreads_table(options),
            spread_trigger,
            spread_slots: fixed_slots.map_or_else(|| "v_bounded_slots".to_owned(), |slots| slots.to_string()),
            periods: Period::ALL,
            period_type: in_collation(&period_column_type),
            period_column_type,
            keep_all: u32::MAX,
            west_most: periods::UtcOffset::WEST_MOST,
            east_most: periods::UtcOffset::EAST_MOST,
            read_ahead: periods::READ_AHEAD_SECONDS,
            first_year: periods::FIRST_YEAR,
            last_year: periods::LAST_YEAR,
            series_limit: periods::SERIES_LIMIT,
            series_numbers: SlotNumbers::up_to(periods::SERIES_LIMIT),
            expire_batch: periods::EXPIRE_BATCH,
            unknown_counter: errno::UNKNOWN_COUNTER,
            already_exists: errno::ALREADY_EXISTS,
            invalid_argument: errno::INVALID_ARGUMENT,
            past_bound: errno::PAST_BOUND,
            refusal_state: package::REFUSAL_SQLSTATE,
            options: options.clone(),
        }
    }

    /// The name of the CHECK that refuses a row of `table` its trigger did
    /// not apply: `p.applied_check(p.writes_table)`.
    pub(super) fn applied_check(&self, table: &str) -> String {
        package::applied_check(table)
    }

    /// The name of `routine` in this package: `p.routine(Routine::Add)`.
    pub(super) fn routine(&self, routine: Routine) -> String {
        routine.name(&self.options)
    }
}

/// Base of the digits that number slot rows.
const DIGIT_BASE: u32 = 16;

/// The numbers 1 to the largest slot count, for the one `INSERT ... SELECT`
/// that creates a counter's slots: a cross join of a constant table of
/// digits, one copy per digit. Neither `JSON_TABLE` (unsafe for
/// statement-based logging: warning 1592) nor a recursive CTE (stopped at
/// 1000 rows by `max_recursive_iterations` and `cte_max_recursion_depth`)
/// does this on both servers.
pub(super) struct SlotNumbers {
    /// The digit table's rows: `SELECT 0 UNION ALL SELECT 1 ...`.
    pub(super) digits: String,
    /// The copies of the digit table: `digit AS d0, digit AS d1`.
    pub(super) tables: String,
    /// The number the digits make, from 1: `d0.d + 16 * d1.d + 1`.
    pub(super) number: String,
}

impl SlotNumbers {
    fn up_to(largest: u32) -> Self {
        // One digit per power of the base below the largest count.
        let mut weights = vec![1u32];
        while u64::from(DIGIT_BASE).pow(weights.len() as u32) < u64::from(largest) {
            weights.push(DIGIT_BASE.pow(weights.len() as u32));
        }
        let digits =
            (0..DIGIT_BASE).map(|digit| format!("SELECT {digit}")).collect::<Vec<_>>().join(" UNION ALL ");
        let tables = (0..weights.len()).map(|i| format!("digit AS d{i}")).collect::<Vec<_>>().join(", ");
        let terms: Vec<String> = weights
            .iter()
            .enumerate()
            .map(|(i, weight)| if *weight == 1 { format!("d{i}.d") } else { format!("{weight} * d{i}.d") })
            .collect();
        SlotNumbers { digits, tables, number: format!("{} + 1", terms.join(" + ")) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_numbers_have_one_digit_per_power_of_sixteen() {
        let tables = |largest: u32| SlotNumbers::up_to(largest).tables.matches("digit AS").count();
        assert_eq!([1, 16, 17, 256, 1024, 4096, 4097, 65535].map(tables), [1, 1, 2, 2, 3, 3, 4, 4]);
        assert_eq!(SlotNumbers::up_to(1024).number, "d0.d + 16 * d1.d + 256 * d2.d + 1");
        assert!(SlotNumbers::up_to(5).digits.ends_with("UNION ALL SELECT 15"));
    }
}
