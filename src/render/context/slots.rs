//! How many slots a counter has and how a write picks one.

use slotted_counters_core::package;
use slotted_counters_core::{Cluster, PackageOptions, SlotChoice, SlotPolicy};

/// The slot counts, the slot bound and the slot a write picks.
pub(in crate::render) struct Slots {
    /// The one slot count of a `--fixed-slots` package.
    pub(in crate::render) fixed: Option<u32>,
    pub(in crate::render) default: u32,
    pub(in crate::render) max: u32,
    /// How an increment picks its slot.
    pub(in crate::render) choice: SlotChoice,
    /// How many slots it picks among: the fixed count, or `v_slots`.
    pub(in crate::render) count: String,
    /// Node slots: the node's position among the nodes, from 1, and their
    /// number, as SQL expressions.
    pub(in crate::render) node_position: &'static str,
    pub(in crate::render) node_count: &'static str,
    /// Group Replication's table of members, where the routines find their
    /// member's position.
    pub(in crate::render) group_members: Option<&'static str>,
    /// The numbers 1 to the largest slot count.
    pub(in crate::render) numbers: SlotNumbers,
    /// The most a slot may hold either way, and the slot count it is for.
    pub(in crate::render) bound: i64,
    pub(in crate::render) bound_slots: u32,
    /// How many slots a bounded counter's total is spread over: the fixed
    /// count (a lazy counter's missing slots are created), or the slots the
    /// spread locked.
    pub(in crate::render) spread: String,
    /// The view's slot count: the rows of a counter, or the fixed count when
    /// lazily created counters have only the rows that were hit.
    pub(in crate::render) in_view: String,
}

impl Slots {
    pub(super) fn new(options: &PackageOptions) -> Self {
        let (fixed, default) = match options.slots() {
            SlotPolicy::Fixed(slots) => (Some(slots), slots),
            SlotPolicy::Dynamic { default } => (None, default),
        };
        let (node_position, node_count) = node_expressions(options);
        Slots {
            fixed,
            default,
            max: options.max_slots(),
            choice: options.slot_choice(),
            count: fixed.map_or_else(|| "v_slots".to_owned(), |slots| slots.to_string()),
            node_position,
            node_count,
            group_members: (options.cluster() == Some(Cluster::GroupReplication))
                .then_some(package::GROUP_MEMBERS_TABLE),
            numbers: SlotNumbers::up_to(fixed.unwrap_or(options.max_slots())),
            bound: options.slot_bound(),
            bound_slots: fixed.unwrap_or(options.max_slots()),
            spread: fixed.map_or_else(|| "v_bounded_slots".to_owned(), |slots| slots.to_string()),
            in_view: match fixed {
                Some(slots) if options.auto_create() => slots.to_string(),
                _ => "COUNT(*)".to_owned(),
            },
        }
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

/// Base of the digits that number slot rows.
const DIGIT_BASE: u32 = 16;

/// The numbers 1 to the largest slot count, for the one `INSERT ... SELECT`
/// that creates a counter's slots: a cross join of a constant table of
/// digits, one copy per digit. Neither `JSON_TABLE` (unsafe for
/// statement-based logging: warning 1592) nor a recursive CTE (stopped at
/// 1000 rows by `max_recursive_iterations` and `cte_max_recursion_depth`)
/// does this on both servers.
pub(in crate::render) struct SlotNumbers {
    /// The digit table's rows: `SELECT 0 UNION ALL SELECT 1 ...`.
    pub(in crate::render) digits: String,
    /// The copies of the digit table: `digit AS d0, digit AS d1`.
    pub(in crate::render) tables: String,
    /// The number the digits make, from 1: `d0.d + 16 * d1.d + 1`.
    pub(in crate::render) number: String,
}

impl SlotNumbers {
    pub(super) fn up_to(largest: u32) -> Self {
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
