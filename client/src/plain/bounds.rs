//! Bounded counters in plain SQL: what `counter_bound` and the spreads'
//! trigger do, where none runs. A write whose slot cannot take it alone
//! (see [`slotted_counters_core::bounds`]) locks every slot of its counter
//! in the write's transaction, is checked against the bounds on the whole
//! total, and spreads the new total over the slots; so do a reset of a
//! bounded counter and new bounds.

use slotted_counters_core::SlotPolicy;
use slotted_counters_core::bounds::Spread;
use slotted_counters_core::refusals::{
    FLOOR_ABOVE_CEILING, FOR_COUNTER, TOTAL_OUTSIDE_BOUNDS, bound_out_of_range,
};

use super::{Plain, answers, number, statement, unknown};
use crate::driver::{Connection, Owner, Param};
use crate::error::{Bound, CounterError};
use crate::transaction::atomically;

/// A counter's slots as `lock_counter` read them, every one locked.
#[derive(Debug, Clone, Copy)]
pub(super) struct Locked {
    slots: i64,
    pub(super) lowest_slot: i64,
    total: i64,
    pub(super) floor: Option<i64>,
    pub(super) ceiling: Option<i64>,
}

impl Locked {
    pub(super) fn is_bounded(&self) -> bool {
        self.floor.is_some() || self.ceiling.is_some()
    }

    /// Refuses `value` as counter `name`'s total past one of its bounds,
    /// with the room its total leaves toward it.
    pub(super) fn check(&self, name: &str, value: i64) -> Result<(), CounterError> {
        let room = |from: i64, to: i64| u64::try_from(to.saturating_sub(from)).unwrap_or(0);
        if let Some(floor) = self.floor.filter(|&floor| value < floor) {
            return Err(Bound::Floor.refusal(name, floor, room(floor, self.total)));
        }
        if let Some(ceiling) = self.ceiling.filter(|&ceiling| value > ceiling) {
            return Err(Bound::Ceiling.refusal(name, ceiling, room(self.total, ceiling)));
        }
        Ok(())
    }
}

impl Plain {
    /// Locks counter `name`'s slots, inside a transaction; what they hold.
    pub(super) async fn lock(&self, conn: &mut impl Connection, name: &str) -> Result<Locked, CounterError> {
        const WHAT: &str = "a counter's locked slots";
        let rows = conn.rows(&statement(&self.lock_counter, vec![Param::Text(name)])).await?;
        let [slots, lowest_slot, total, floor, ceiling] = answers::one_row(rows, WHAT)?;
        if answers::present(slots, WHAT)? == 0 {
            return Err(unknown(name));
        }
        Ok(Locked {
            slots: answers::present(slots, WHAT)?,
            lowest_slot: answers::present(lowest_slot, WHAT)?,
            total: answers::present(total, WHAT)?,
            floor,
            ceiling,
        })
    }

    /// Adds `delta` to counter `name` through all of its slots, inside a
    /// transaction: the way of a write its slot could not take alone. A
    /// bounded counter's new total is checked and spread; an unbounded
    /// counter's slot picked is gone (a shrink removed it), and its first
    /// slot takes the delta. Returns the slot whose buckets count it.
    pub(super) async fn add_through_all(
        &self,
        conn: &mut impl Connection,
        name: &str,
        delta: i64,
    ) -> Result<u32, CounterError> {
        let locked = self.lock(conn, name).await?;
        let first = u32::try_from(locked.lowest_slot).unwrap_or(1);
        if locked.is_bounded() {
            let value = locked.total.checked_add(delta).ok_or_else(|| self.past_bound(name))?;
            locked.check(name, value)?;
            self.spread(conn, name, &locked, value, (locked.floor, locked.ceiling), false).await?;
        } else if self.add_to(conn, name, first, delta).await? == 0 {
            return Err(self.past_bound(name));
        }
        Ok(first)
    }

    /// Writes `value` over counter `name`'s slots (as `locked` found them),
    /// each with its share of the bounds `floor` and `ceiling`, and its
    /// start date as now when `reset_start_date`.
    pub(super) async fn spread(
        &self,
        conn: &mut impl Connection,
        name: &str,
        locked: &Locked,
        value: i64,
        (floor, ceiling): (Option<i64>, Option<i64>),
        reset_start_date: bool,
    ) -> Result<(), CounterError> {
        let slots = match self.slots {
            SlotPolicy::Fixed(slots) => slots,
            SlotPolicy::Dynamic { .. } => u32::try_from(locked.slots).unwrap_or(1),
        };
        if let Some(fill) = &self.fill_slots {
            // A lazy counter keeps only the slots that were hit: a bounded
            // one has them all.
            let rows = (1..=slots).flat_map(|slot| [Param::Text(name), number(slot)]).collect();
            conn.execute(&statement(fill, rows)).await?;
        }
        let spread = Spread::new(value, slots, floor, ceiling);
        let share = [number(spread.share), number(spread.share_left)];
        let room = |room: Option<(i64, i64)>| {
            let (quotient, left) = room.unzip();
            [Param::Number(quotient), Param::Number(left)]
        };
        let params = share
            .into_iter()
            .chain(share)
            .chain(room(spread.floor_room))
            .chain(share)
            .chain(room(spread.ceiling_room))
            .chain([Param::Flag(reset_start_date), Param::Text(name)])
            .collect();
        conn.execute(&statement(&self.spread, params)).await.map(drop)
    }

    /// Bounds counter `name`'s total to `floor` and `ceiling` (`None`: no
    /// bound on that side), refused as the routine refuses them.
    pub(super) async fn bound(
        &self,
        conn: &mut impl Connection,
        name: &str,
        floor: Option<i64>,
        ceiling: Option<i64>,
        owner: Owner,
    ) -> Result<(), CounterError> {
        let invalid = |words: String| Err(CounterError::invalid_about(&words, name));
        for limit in [floor, ceiling].into_iter().flatten() {
            if limit.unsigned_abs() > self.bound.unsigned_abs() {
                return invalid(format!("{} {limit}{FOR_COUNTER}", bound_out_of_range(self.bound)));
            }
        }
        if let (Some(floor), Some(ceiling)) = (floor, ceiling)
            && floor > ceiling
        {
            return invalid(format!("{FLOOR_ABOVE_CEILING} ({floor} > {ceiling}){FOR_COUNTER}"));
        }
        atomically(conn, owner, async |conn| {
            let locked = self.lock(&mut *conn, name).await?;
            let total = locked.total;
            if floor.is_some_and(|floor| total < floor) || ceiling.is_some_and(|ceiling| total > ceiling) {
                let text = |limit: Option<i64>| limit.map_or("NULL".to_owned(), |limit| limit.to_string());
                return invalid(format!(
                    "{TOTAL_OUTSIDE_BOUNDS} (total {total}, floor {}, ceiling {}){FOR_COUNTER}",
                    text(floor),
                    text(ceiling)
                ));
            }
            if floor.is_none() && ceiling.is_none() {
                return Connection::execute(conn, &statement(&self.unbound, vec![Param::Text(name)]))
                    .await
                    .map(drop);
            }
            self.spread(conn, name, &locked, total, (floor, ceiling), false).await
        })
        .await
    }
}
