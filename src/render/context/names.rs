//! The names of the package's objects, as its options make them.

use slotted_counters_core::PackageOptions;
use slotted_counters_core::package;

/// The tables, views, triggers and columns the templates name.
pub(in crate::render) struct Names {
    pub(in crate::render) table: String,
    pub(in crate::render) totals_view: String,
    /// The view of every counter's room, which a package with periods has.
    pub(in crate::render) rooms_view: String,
    /// The table of write ids.
    pub(in crate::render) writes_table: String,
    /// The table of changes, which its trigger makes.
    pub(in crate::render) changes_table: String,
    /// The tables of the periods counters track and of their buckets.
    pub(in crate::render) periods_table: String,
    pub(in crate::render) buckets_table: String,
    /// The table of the last write to each slot of a counter that tracks
    /// periods.
    pub(in crate::render) tracked_writes_table: String,
    /// The table of the last spread of each bounded counter.
    pub(in crate::render) spreads_table: String,
    /// The triggers that keep slots within the bound: on insert, on update.
    pub(in crate::render) insert_trigger: String,
    pub(in crate::render) update_trigger: String,
    /// The trigger that applies a write with an id as its id is recorded.
    pub(in crate::render) apply_trigger: String,
    /// The trigger that makes a change as it is recorded.
    pub(in crate::render) change_trigger: String,
    /// The trigger that applies a tracked write to its slot and buckets.
    pub(in crate::render) tracked_write_trigger: String,
    /// The trigger that makes the spread a bounded counter records.
    pub(in crate::render) spread_trigger: String,
    /// The package's triggers, each with its table.
    pub(in crate::render) trigger_tables: Vec<(String, String)>,
    /// The tables beside the slots that hold rows of a counter and that
    /// `counter_delete` empties of its rows in one statement each: its last
    /// change, its last spread, its periods and its last tracked writes (the
    /// buckets go in batches).
    pub(in crate::render) counter_rows_tables: Vec<String>,
    /// The column that stays TRUE until its trigger applies a row, and that
    /// a CHECK refuses while it is (`_pending.sql`), and its comment.
    pub(in crate::render) pending_column: &'static str,
    pub(in crate::render) pending_comment: &'static str,
}

impl Names {
    pub(super) fn new(options: &PackageOptions) -> Self {
        let [
            insert_trigger,
            update_trigger,
            apply_trigger,
            change_trigger,
            tracked_write_trigger,
            spread_trigger,
        ] = package::trigger_names(options);
        let tables = package::tables_in_package(options);
        let triggers = package::triggers_in_package(options);
        Names {
            table: options.table().to_owned(),
            totals_view: package::totals_view(options),
            rooms_view: package::rooms_view(options),
            writes_table: package::writes_table(options),
            changes_table: package::changes_table(options),
            periods_table: package::periods_table(options),
            buckets_table: package::buckets_table(options),
            tracked_writes_table: package::tracked_writes_table(options),
            spreads_table: package::spreads_table(options),
            insert_trigger,
            update_trigger,
            apply_trigger,
            change_trigger,
            tracked_write_trigger,
            spread_trigger,
            trigger_tables: package::triggers_with_tables(options)
                .into_iter()
                .filter(|(trigger, _)| triggers.contains(trigger))
                .collect(),
            counter_rows_tables: [
                package::changes_table(options),
                package::spreads_table(options),
                package::periods_table(options),
                package::tracked_writes_table(options),
            ]
            .into_iter()
            .filter(|table| tables.contains(table))
            .collect(),
            pending_column: package::PENDING_COLUMN,
            pending_comment: "TRUE until its trigger applies the row: a CHECK refuses the row while it is",
        }
    }
}
