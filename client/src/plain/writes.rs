//! How a plain write reaches its counter: one statement when the slot it
//! picks takes the delta alone (or slot 1, when a shrink removed the slot
//! picked); else, in a transaction, through every slot of the counter
//! ([`Plain::add_through_all`]); a batch, every counter's write in one
//! transaction; each counted in the buckets of the periods it tracks.

use std::sync::atomic::Ordering;

use slotted_counters_core::SlotPolicy;
use slotted_counters_core::package::server_errno;

use super::{Plain, answers, check_not_blank, number, statement, unknown};
use crate::call::{Moment, WriteId};
use crate::driver::{Connection, Owner, Param};
use crate::error::CounterError;
use crate::transaction::atomically;

/// What a write's one statement did.
enum Alone {
    /// Its slot took the delta.
    To(u32),
    /// A delta of 0, to a counter that exists: nothing to write.
    Nothing,
    /// No slot took it alone: a bounded counter's slot short of room, a
    /// restock to spread, a slot a shrink removed, or no such counter. The
    /// write goes through all of the counter's slots, in a transaction.
    Missed,
}

/// A slot between 1 and `slots`, picked at random.
fn pick(slots: u32) -> u32 {
    let draw = getrandom::u32().unwrap_or(0);
    ((u64::from(draw) * u64::from(slots)) >> 32) as u32 + 1
}

/// The parameters of the condition under which a slot takes `delta` alone
/// (`bounds::FITS`): a write away from a bound by `spread_from` (the slot
/// count) or more is spread.
fn fits(delta: i64, spread_from: u32) -> [Param<'static>; 4] {
    let spread_from = i64::from(spread_from);
    [number(delta), number(spread_from - 1), number(delta), number(1 - spread_from)]
}

/// `add_to_slot`'s parameters: `delta` to `slot` of counter `name`, within
/// the slot's `room` (its lowest and highest value after the write).
fn slot_params(name: &str, slot: u32, delta: i64, room: (i64, i64), spread_from: u32) -> Vec<Param<'_>> {
    let (lowest, highest) = room;
    let mut params = vec![number(delta), Param::Text(name), number(slot), number(lowest), number(highest)];
    params.extend(fits(delta, spread_from));
    params
}

impl Plain {
    /// Adds `delta` to counter `name` as [`Plain::add_counted`] does, first
    /// in one statement that writes it when it tracks no period and the
    /// slot picked takes the delta alone ([`Plain::add_untracked`]), unless
    /// it was last seen tracking one: such a write is one round trip, as
    /// the classic package's. Not for a late write, whose moment is checked
    /// first.
    pub(super) async fn add(
        &self,
        conn: &mut impl Connection,
        name: &str,
        delta: i64,
        at: Moment,
        owner: Owner,
    ) -> Result<(), CounterError> {
        if !self.tracking.tracks(name) && self.add_untracked(conn, name, delta).await? {
            return Ok(());
        }
        self.add_counted(conn, name, delta, at, owner).await
    }

    /// Adds `delta` to counter `name`, counted in the buckets of `at` of
    /// the periods it tracks: one UPDATE when it tracks none and the slot
    /// picked takes the delta alone, else in one transaction the UPDATE or
    /// the spread over every slot, and the buckets' upsert.
    pub(super) async fn add_counted(
        &self,
        conn: &mut impl Connection,
        name: &str,
        delta: i64,
        at: Moment,
        owner: Owner,
    ) -> Result<(), CounterError> {
        self.room_for(name, delta)?;
        let late = self.late_write(conn, at, Some(name)).await?;
        let counted = self.counted_periods(conn, name, late).await?;
        self.tracking.note(name, !counted.is_empty());
        if counted.is_empty() {
            if let Alone::Missed = self.add_alone(conn, name, delta).await? {
                atomically(conn, owner, async |conn| self.add_through_all(conn, name, delta).await.map(drop))
                    .await?;
            }
            return Ok(());
        }
        atomically(conn, owner, async |conn| {
            if let Some(slot) = self.add_within(&mut *conn, name, delta).await? {
                self.add_to_buckets(conn, name, slot, delta, at, &counted).await?;
            }
            Ok(())
        })
        .await
    }

    /// Adds `delta` to counter `name` inside a transaction: to one slot when
    /// it takes it alone, else through all of them. Returns the slot whose
    /// buckets count it; none for a delta of 0, which writes none.
    async fn add_within(
        &self,
        conn: &mut impl Connection,
        name: &str,
        delta: i64,
    ) -> Result<Option<u32>, CounterError> {
        match self.add_alone(conn, name, delta).await? {
            Alone::To(slot) => Ok(Some(slot)),
            Alone::Nothing => Ok(None),
            Alone::Missed => self.add_through_all(conn, name, delta).await.map(Some),
        }
    }

    /// Adds `delta` to one slot of counter `name`, picked here, when that
    /// slot takes it alone: one UPDATE, or for a lazy package one upsert.
    async fn add_alone(
        &self,
        conn: &mut impl Connection,
        name: &str,
        delta: i64,
    ) -> Result<Alone, CounterError> {
        if self.sql.auto_create() {
            check_not_blank(name)?;
            let slot = pick(self.slot_count(conn, name).await?);
            // An upsert of 0 changes no row, and creates the slot row.
            return Ok(match self.add_to(conn, name, slot, delta).await? {
                0 if delta != 0 => Alone::Missed,
                _ => Alone::To(slot),
            });
        }
        if delta == 0 {
            // An UPDATE that adds 0 changes no row: only a look tells
            // whether the counter exists.
            return self.read_slot_count(conn, name).await.map(|_| Alone::Nothing);
        }
        let slot = pick(self.slot_count(conn, name).await?);
        if self.add_to(conn, name, slot, delta).await? == 1 {
            return Ok(Alone::To(slot));
        }
        // The slot may be gone (a shrink removed it): slot 1 exists as long
        // as the counter does, as the routines' fallback has it.
        self.slot_counts.forget(name);
        if self.add_to(conn, name, 1, delta).await? == 1 {
            return Ok(Alone::To(1));
        }
        Ok(Alone::Missed)
    }

    /// Adds `delta` to slot `slot` of counter `name`, if the slot takes it
    /// alone (creating the row in a lazy package): the rows changed.
    pub(super) async fn add_to(
        &self,
        conn: &mut impl Connection,
        name: &str,
        slot: u32,
        delta: i64,
    ) -> Result<u64, CounterError> {
        let (lowest, highest) = self.room_for(name, delta)?;
        let slots = self.slot_counts.get(name).or(match self.slots {
            SlotPolicy::Fixed(slots) => Some(slots),
            SlotPolicy::Dynamic { .. } => None,
        });
        let spread_from = slots.unwrap_or(self.max_slots);
        if self.sql.auto_create() {
            // The upsert may create the counter.
            self.check_width(conn, name).await?;
            let kick = if delta >= 0 { i64::MAX } else { i64::MIN };
            let mut params = vec![Param::Text(name), number(slot), number(delta)];
            params.extend(fits(delta, spread_from));
            params.extend([number(delta), number(lowest), number(highest), number(kick)]);
            return match conn.execute(&statement(&self.upsert_slot, params)).await {
                Err(error) if error.code() == Some(server_errno::OUT_OF_RANGE) => Err(self.past_bound(name)),
                outcome => outcome,
            };
        }
        let params = slot_params(name, slot, delta, (lowest, highest), spread_from);
        conn.execute(&statement(&self.add_to_slot, params)).await
    }

    /// Adds `delta` to one slot of counter `name` in one statement, when
    /// the counter tracks no period and the slot picked takes the delta
    /// alone ([`PlainSql::add_to_untracked_slot`]): whether it did. When it
    /// did not, nothing is written, and the write is to be made another way;
    /// so also for a counter unknown, a delta of 0 or one past the bound,
    /// which that way is refused, and on an engine that refused the
    /// statement once (1235, as Vitess refuses a subquery in an UPDATE it
    /// cannot route to one shard), from then on.
    ///
    /// [`PlainSql::add_to_untracked_slot`]: slotted_counters_core::plain::PlainSql::add_to_untracked_slot
    pub(crate) async fn add_untracked(
        &self,
        conn: &mut impl Connection,
        name: &str,
        delta: i64,
    ) -> Result<bool, CounterError> {
        let Ok((lowest, highest)) = self.room_for(name, delta) else { return Ok(false) };
        if delta == 0 || self.sql.auto_create() || self.untracked_refused.load(Ordering::Relaxed) {
            return Ok(false);
        }
        let slots = match self.slot_count(conn, name).await {
            Err(CounterError::NotFound { .. }) => return Ok(false),
            slots => slots?,
        };
        let mut params = slot_params(name, pick(slots), delta, (lowest, highest), slots);
        params.push(Param::Text(name));
        let changed = match conn.execute(&statement(&self.add_to_untracked_slot, params)).await {
            Err(error) if error.code() == Some(server_errno::NOT_SUPPORTED_YET) => {
                log::info!(error:%; "the engine refuses the one-statement add ({error}): writes read the periods first");
                self.untracked_refused.store(true, Ordering::Relaxed);
                return Ok(false);
            }
            changed => changed?,
        };
        if changed == 0 {
            // The slot may be gone: a shrink removed it.
            self.slot_counts.forget(name);
        }
        Ok(changed == 1)
    }

    /// The slot count an increment of counter `name` picks among: the fixed
    /// count, or the counter's, kept or read.
    async fn slot_count(&self, conn: &mut impl Connection, name: &str) -> Result<u32, CounterError> {
        match (self.slots, self.slot_counts.get(name)) {
            (SlotPolicy::Fixed(slots), _) | (_, Some(slots)) => Ok(slots),
            _ => self.read_slot_count(conn, name).await,
        }
    }

    /// Counter `name`'s slot count, read and kept; [`CounterError::NotFound`]
    /// when it does not exist.
    pub(super) async fn read_slot_count(
        &self,
        conn: &mut impl Connection,
        name: &str,
    ) -> Result<u32, CounterError> {
        const WHAT: &str = "a counter's last slot";
        let rows = conn.rows(&statement(&self.last_slot, vec![Param::Text(name)])).await?;
        let [last] = answers::row_of(rows, WHAT)?.ok_or_else(|| unknown(name))?;
        let last = answers::present(last, WHAT)?;
        let slots = u32::try_from(last).ok().filter(|&slots| slots > 0).ok_or_else(|| {
            CounterError::unexpected_answer(format!("{WHAT}: a slot number, not {last}"), None)
        })?;
        self.slot_counts.keep(name, slots);
        Ok(slots)
    }

    /// Every delta of a batch, or none: one transaction, counters in the
    /// order of their names, so that two batches cannot deadlock on each
    /// other, each counted in the buckets of `at`; a batch of one counter
    /// without an id is an add. With
    /// write id `id`, each counter's id row goes first, and a counter whose
    /// row is there already (1062) was counted by an earlier send of this
    /// write, so its delta is skipped: on one server that is all or none of
    /// the counters; where a batch committed shard by shard, it is each
    /// shard's part once.
    pub(super) async fn add_many<'a>(
        &self,
        conn: &mut impl Connection,
        entries: impl Iterator<Item = (&'a str, i64)> + Clone,
        id: Option<&WriteId>,
        at: Moment,
        owner: Owner,
    ) -> Result<(), CounterError> {
        let mut single = entries.clone();
        if let (None, Some((name, delta)), None) = (id, single.next(), single.next()) {
            return self.add_counted(conn, name, delta, at, owner).await;
        }
        // The periods are read before the transaction: a plain read inside
        // it would open a read view, and under MariaDB's snapshot isolation
        // each slot another writer changed since would fail the batch (1020).
        let late = self.late_write(conn, at, None).await?;
        let mut counted = Vec::new();
        for (name, delta) in entries.clone() {
            self.room_for(name, delta)?;
            counted.push(self.counted_periods(conn, name, late).await?);
        }
        atomically(conn, owner, async |conn| {
            for ((name, delta), counted) in entries.zip(counted) {
                if let Some(id) = id {
                    let record = statement(&self.record_write, vec![Param::Text(name), Param::Bytes(id)]);
                    match Connection::execute(&mut *conn, &record).await {
                        Err(error) if error.code() == Some(server_errno::DUPLICATE_KEY) => continue,
                        outcome => outcome?,
                    };
                }
                if let Some(slot) = self.add_within(&mut *conn, name, delta).await? {
                    self.add_to_buckets(&mut *conn, name, slot, delta, at, &counted).await?;
                }
            }
            Ok(())
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picked_slots_stay_within_the_count() {
        for slots in [1, 2, 5, 64] {
            let picked: std::collections::BTreeSet<u32> = (0..2_000).map(|_| pick(slots)).collect();
            assert_eq!(picked, (1..=slots).collect(), "{slots} slots");
        }
    }
}
