//! Which package each variant's rounds call: a table and prefix of its
//! own, so that no two variants share rows, and the options it is
//! generated with.

use slotted_counters_core::options::DEFAULT_MAX_SLOTS;
use slotted_counters_core::periods::Period;
use slotted_counters_core::{Cluster, PackageOptions, SlotChoice};

use super::variant::Variant;
use crate::error::Error;

/// The periods the `periods` variant's counters are counted per.
pub(super) const PERIODS_COUNTED: [Period; 2] = [Period::Hour, Period::Day];

/// The package a variant's rounds call, with its own table and prefix so
/// that no two variants share rows; `None` for the single-row table. On a
/// Group Replication group, node slots come from the group's members.
pub(super) fn package(
    variant: Variant,
    slots: Option<u32>,
    max_slots: u32,
    group_replication: bool,
) -> Result<Option<PackageOptions>, Error> {
    let fixed = slots.unwrap_or(1);
    let options = match variant {
        Variant::SingleRow | Variant::SingleRowGuarded => return Ok(None),
        Variant::Bounded => {
            PackageOptions::builder().table("bench_bounded_counters").prefix("bench_bounded_")
        }
        Variant::Sale => PackageOptions::builder().table("bench_sale_counters").prefix("bench_sale_"),
        Variant::Dynamic
        | Variant::OwnCounter
        | Variant::Client
        | Variant::Plain
        | Variant::ClientIds
        | Variant::ClientAsync => PackageOptions::builder().table("bench_counters").prefix("bench_"),
        Variant::CoalescedIds | Variant::CoalescedAsync => {
            return package(Variant::Coalesced, slots, max_slots, group_replication);
        }
        Variant::SaleInTransactions => return package(Variant::Sale, slots, max_slots, group_replication),
        Variant::Periods => {
            PackageOptions::builder().table("bench_periods_counters").prefix("bench_periods_")
        }
        Variant::Quota => PackageOptions::builder().table("bench_quota_counters").prefix("bench_quota_"),
        Variant::Sourced => {
            PackageOptions::builder().table("bench_sourced_counters").prefix("bench_sourced_")
        }
        Variant::SourcedReconciling => return package(Variant::Sourced, slots, max_slots, group_replication),
        Variant::Transaction => PackageOptions::builder().table("bench_tx_counters").prefix("bench_tx_"),
        Variant::AddMany => PackageOptions::builder().table("bench_many_counters").prefix("bench_many_"),
        Variant::Coalesced => {
            PackageOptions::builder().table("bench_coalesced_counters").prefix("bench_coalesced_")
        }
        Variant::Connection => PackageOptions::builder()
            .table("bench_conn_counters")
            .prefix("bench_conn_")
            .slot_choice(SlotChoice::Connection),
        Variant::Node if group_replication => PackageOptions::builder()
            .table("bench_node_counters")
            .prefix("bench_node_")
            .cluster(Cluster::GroupReplication),
        Variant::Node => PackageOptions::builder()
            .table("bench_node_counters")
            .prefix("bench_node_")
            .slot_choice(SlotChoice::Node),
        Variant::Fixed => PackageOptions::builder()
            .table(format!("bench_fixed_{fixed}"))
            .prefix(format!("bench_fixed{fixed}_"))
            .fixed_slots(fixed),
        Variant::Lazy => PackageOptions::builder()
            .table(format!("bench_lazy_{fixed}"))
            .prefix(format!("bench_lazy{fixed}_"))
            .fixed_slots(fixed)
            .auto_create(true),
    };
    Ok(Some(options.max_slots(max_slots.max(fixed).max(DEFAULT_MAX_SLOTS)).build()?))
}
