//! How each call is made in plain SQL, with no routine: the second
//! description of the calls beside [`crate::routines`], run by the same
//! runners. The statements are core's [`PlainSql`], which the generator
//! also renders as a reference; the checks the routines make on the server
//! are made here, with the same error numbers and messages.
//!
//! The slot of an increment is picked here and sent as a parameter. A
//! counter's slot count is read once and kept for [`SLOT_COUNT_LIFETIME`].

mod periods;
mod slot_counts;

use std::borrow::Cow;

use slotted_counters_core::package::{DESCRIPTION_LENGTH, server_errno};
use slotted_counters_core::plain::{PlainSql, PlainStatement};
use slotted_counters_core::refusals::{self, ALREADY_EXISTS, BLANK_NAME, FOR_COUNTER, UNKNOWN_COUNTER};
use slotted_counters_core::{ConfigError, PackageOptions, SlotPolicy};

use crate::call::{Answer, Call, Deltas, Moment, NewCounter, StartDate, WriteId};
use crate::driver::{Connection, Owner, Param, Statement};
use crate::error::CounterError;
use crate::transaction::atomically;
use periods::PeriodStatements;
use slot_counts::SlotCounts;

/// A write made now: it counts in the buckets of the server's clock.
const NOW: Moment = Moment::Now;

/// The calls in plain SQL, for a package generated with some options.
#[derive(Debug)]
pub struct Plain {
    sql: PlainSql,
    last_slot: PlainStatement,
    add_to_slot: PlainStatement,
    upsert_slot: PlainStatement,
    reset: PlainStatement,
    lock_counter: PlainStatement,
    delete: PlainStatement,
    record_write: PlainStatement,
    forget_writes: PlainStatement,
    periods: PeriodStatements,
    slots: SlotPolicy,
    max_slots: u32,
    bound: i64,
    slot_counts: SlotCounts,
}

fn statement<'a>(sql: &'a PlainStatement, params: Vec<Param<'a>>) -> Statement<'a> {
    Statement { sql: Cow::Borrowed(&sql.sql), params }
}

fn number(value: impl Into<i64>) -> Param<'static> {
    Param::Number(Some(value.into()))
}

fn unknown(name: &str) -> CounterError {
    CounterError::NotFound(refusals::about(UNKNOWN_COUNTER, name))
}

/// A slot between 1 and `slots`, picked at random.
fn pick(slots: u32) -> u32 {
    let draw = getrandom::u32().unwrap_or(0);
    ((u64::from(draw) * u64::from(slots)) >> 32) as u32 + 1
}

impl Plain {
    /// The plain calls of a package generated with `options`; refused for a
    /// package whose rules only its routines keep (a cluster's node slots,
    /// a counter limit).
    pub(crate) fn new(options: &PackageOptions) -> Result<Self, ConfigError> {
        let sql = PlainSql::new(options)?;
        Ok(Plain {
            last_slot: sql.last_slot(),
            add_to_slot: sql.add_to_slot(),
            upsert_slot: sql.upsert_slot(),
            reset: sql.reset(),
            lock_counter: sql.lock_counter(),
            delete: sql.delete(),
            record_write: sql.record_write(),
            forget_writes: sql.forget_writes(),
            periods: PeriodStatements::new(&sql),
            sql,
            slots: options.slots(),
            max_slots: options.max_slots(),
            bound: options.slot_bound(),
            slot_counts: SlotCounts::default(),
        })
    }

    /// Runs `call` once on `conn`, which `owner`'s transaction may hold.
    pub(crate) async fn run(
        &self,
        conn: &mut impl Connection,
        call: Call<'_>,
        owner: Owner,
    ) -> Result<Answer, CounterError> {
        match call {
            Call::Setup { name, counter } => self.setup(conn, name, counter).await?,
            Call::Increment { name } => self.add_counted(conn, name, 1, NOW, owner).await?,
            Call::Add { name, delta } => self.add_counted(conn, name, delta, NOW, owner).await?,
            Call::AddMany { deltas } => self.add_many(conn, entries(deltas), None, NOW, owner).await?,
            Call::Reset { name, value, start_date } => {
                self.reset(conn, name, value, start_date, owner).await?
            }
            Call::Delete { name } => self.delete(conn, name, owner).await?,
            Call::GetMany { names } => return self.get_many(conn, names).await.map(Answer::Values),
            Call::AddOnce { id, name, delta } => {
                self.add_many(conn, std::iter::once((name, delta)), Some(id), NOW, owner).await?
            }
            Call::ForgetWrites { seconds } => {
                conn.execute(&statement(&self.forget_writes, vec![number(seconds)])).await?;
            }
            Call::AddManyOnce { id, deltas } => {
                self.add_many(conn, entries(deltas), Some(id), NOW, owner).await?
            }
            Call::Track { name, period, keep } => self.track(conn, name, period, keep).await?,
            Call::AddAt { name, delta, at } => self.add_counted(conn, name, delta, at, owner).await?,
            Call::AddManyAt { id, deltas, at } => self.add_many(conn, entries(deltas), id, at, owner).await?,
            Call::GetPeriod { name, period, at } => {
                let start = period.start(at);
                let value = self.get_range(conn, name, period, start, period.next(start)).await?;
                return Ok(Answer::Values(vec![value]));
            }
            Call::GetRange { name, period, from, to } => {
                return Ok(Answer::Values(vec![self.get_range(conn, name, period, from, to).await?]));
            }
            Call::Series { name, period, from, to, starts } => {
                return self.series(conn, name, period, from, to, starts).await;
            }
            Call::ExpirePeriods => self.expire(conn).await?,
        }
        Ok(Answer::Done)
    }

    fn past_bound(&self, name: &str) -> CounterError {
        CounterError::InvalidArgument(refusals::about(
            &format!("{}{FOR_COUNTER}", refusals::past_bound(self.bound)),
            name,
        ))
    }

    /// The values a slot may hold before `delta` is added, so that it stays
    /// within the bound. A slot already past it (written before the bound
    /// existed) may still move toward 0.
    fn room_for(&self, name: &str, delta: i64) -> Result<(i64, i64), CounterError> {
        if delta.unsigned_abs() > self.bound.unsigned_abs() {
            return Err(self.past_bound(name));
        }
        Ok(if delta >= 0 { (i64::MIN, self.bound - delta) } else { (-self.bound - delta, i64::MAX) })
    }

    async fn setup(
        &self,
        conn: &mut impl Connection,
        name: &str,
        counter: NewCounter<'_>,
    ) -> Result<(), CounterError> {
        check_not_blank(name)?;
        let invalid = |problem: String| {
            Err(CounterError::InvalidArgument(refusals::about(&format!("{problem}{FOR_COUNTER}"), name)))
        };
        if counter.description.chars().count() > DESCRIPTION_LENGTH as usize {
            return invalid(refusals::long_description(DESCRIPTION_LENGTH));
        }
        let slots = match (self.slots, counter.slots) {
            (SlotPolicy::Fixed(fixed), Some(asked)) if asked != fixed => {
                return invalid(format!("{} {asked}", refusals::slots_not_fixed(fixed)));
            }
            (SlotPolicy::Fixed(fixed), _) => fixed,
            (SlotPolicy::Dynamic { .. }, Some(asked)) if !(1..=self.max_slots).contains(&asked) => {
                return invalid(format!("{} {asked}", refusals::slots_out_of_range(self.max_slots)));
            }
            (SlotPolicy::Dynamic { default }, asked) => asked.unwrap_or(default),
        };
        let initial_value = counter.initial_value.unwrap_or(0);
        if initial_value.unsigned_abs() > self.bound.unsigned_abs() {
            return Err(self.past_bound(name));
        }
        let rows = self.sql.setup(slots);
        let mut params = vec![Param::Text(name), Param::Text(counter.description), number(initial_value)];
        for slot in 2..=slots {
            params.extend([Param::Text(name), number(slot), Param::Text(counter.description)]);
        }
        match conn.execute(&statement(&rows, params)).await {
            Err(error) if error.code() == Some(server_errno::DUPLICATE_KEY) => {
                Err(CounterError::AlreadyExists(refusals::about(ALREADY_EXISTS, name)))
            }
            outcome => {
                self.slot_counts.forget(name);
                outcome.map(drop)
            }
        }
    }

    /// Adds `delta` to counter `name`, counted in the buckets of `at` of
    /// the periods it tracks: one UPDATE when it tracks none, else the
    /// UPDATE and the buckets' upsert in one transaction.
    async fn add_counted(
        &self,
        conn: &mut impl Connection,
        name: &str,
        delta: i64,
        at: Moment,
        owner: Owner,
    ) -> Result<(), CounterError> {
        self.room_for(name, delta)?;
        let counted = self.counted_periods(conn, name, at).await?;
        if counted.is_empty() {
            return self.add(conn, name, delta).await.map(drop);
        }
        atomically(conn, owner, async |conn| {
            if let Some(slot) = self.add(&mut *conn, name, delta).await? {
                self.add_to_buckets(conn, name, slot, delta, at, &counted).await?;
            }
            Ok(())
        })
        .await
    }

    /// Adds `delta` to one slot of counter `name`: one UPDATE of a slot
    /// picked here, or for a lazy package one upsert. A slot that is gone
    /// (a shrink removed it) sends the delta to slot 1, as the routines do.
    /// Returns the slot written; none for a delta of 0, which writes none.
    async fn add(
        &self,
        conn: &mut impl Connection,
        name: &str,
        delta: i64,
    ) -> Result<Option<u32>, CounterError> {
        let (lowest, highest) = self.room_for(name, delta)?;
        if let (true, SlotPolicy::Fixed(slots)) = (self.sql.auto_create(), self.slots) {
            check_not_blank(name)?;
            let kick = if delta >= 0 { i64::MAX } else { i64::MIN };
            let slot = pick(slots);
            let params = vec![
                Param::Text(name),
                number(slot),
                number(delta),
                number(delta),
                number(lowest),
                number(highest),
                number(kick),
            ];
            return match conn.execute(&statement(&self.upsert_slot, params)).await {
                Err(error) if error.code() == Some(server_errno::OUT_OF_RANGE) => Err(self.past_bound(name)),
                outcome => outcome.map(|_| Some(slot)),
            };
        }
        if delta == 0 {
            // An UPDATE that adds 0 changes no row: only a look tells
            // whether the counter exists.
            return self.read_slot_count(conn, name).await.map(|_| None);
        }
        let slots = match (self.slots, self.slot_counts.get(name)) {
            (SlotPolicy::Fixed(slots), _) | (_, Some(slots)) => slots,
            _ => self.read_slot_count(conn, name).await?,
        };
        let add_to = async |conn: &mut _, slot: u32| {
            let params =
                vec![number(delta), Param::Text(name), number(slot), number(lowest), number(highest)];
            Connection::execute(conn, &statement(&self.add_to_slot, params)).await
        };
        let slot = pick(slots);
        if add_to(&mut *conn, slot).await? == 1 {
            return Ok(Some(slot));
        }
        self.slot_counts.forget(name);
        if add_to(&mut *conn, 1).await? == 1 {
            return Ok(Some(1));
        }
        // No slot 1: no counter. Else slot 1 would pass the bound.
        self.read_slot_count(conn, name).await?;
        Err(self.past_bound(name))
    }

    /// Counter `name`'s slot count, read and kept; [`CounterError::NotFound`]
    /// when it does not exist.
    async fn read_slot_count(&self, conn: &mut impl Connection, name: &str) -> Result<u32, CounterError> {
        let rows = conn.rows(&statement(&self.last_slot, vec![Param::Text(name)])).await?;
        let last =
            rows.first().and_then(|row| row.first().copied().flatten()).ok_or_else(|| unknown(name))?;
        let slots = u32::try_from(last).unwrap_or(1).max(1);
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
    async fn add_many<'a>(
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
        let mut counted = Vec::new();
        for (name, delta) in entries.clone() {
            self.room_for(name, delta)?;
            counted.push(self.counted_periods(conn, name, at).await?);
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
                if let Some(slot) = self.add(&mut *conn, name, delta).await? {
                    self.add_to_buckets(&mut *conn, name, slot, delta, at, &counted).await?;
                }
            }
            Ok(())
        })
        .await
    }

    async fn reset(
        &self,
        conn: &mut impl Connection,
        name: &str,
        value: i64,
        start_date: StartDate,
        owner: Owner,
    ) -> Result<(), CounterError> {
        if value.unsigned_abs() > self.bound.unsigned_abs() {
            return Err(self.past_bound(name));
        }
        let reset = |slot: i64| {
            statement(
                &self.reset,
                vec![
                    number(slot),
                    number(value),
                    Param::Flag(start_date == StartDate::Now),
                    Param::Text(name),
                ],
            )
        };
        if !self.sql.auto_create() {
            // Slot 1 exists as long as the counter does. A reset to what
            // the counter reads changes no row: a look tells whether it exists.
            if conn.execute(&reset(1)).await? == 0 {
                self.read_slot_count(conn, name).await?;
            }
            return Ok(());
        }
        // A lazy counter keeps only the slots that were hit: the value goes
        // to its lowest, found under lock.
        atomically(conn, owner, async |conn| {
            let (_, lowest) = self.lock(&mut *conn, name).await?;
            Connection::execute(conn, &reset(lowest)).await.map(drop)
        })
        .await
    }

    /// Deletes counter `name`. Not by the rows a DELETE reports (Spider
    /// reports none for a delete that removed rows): by a locking read first.
    async fn delete(&self, conn: &mut impl Connection, name: &str, owner: Owner) -> Result<(), CounterError> {
        atomically(conn, owner, async |conn| {
            self.lock(&mut *conn, name).await?;
            Connection::execute(conn, &statement(&self.delete, vec![Param::Text(name)])).await?;
            self.slot_counts.forget(name);
            Ok(())
        })
        .await
    }

    /// Locks counter `name`'s slots; its slot count and lowest slot.
    async fn lock(&self, conn: &mut impl Connection, name: &str) -> Result<(i64, i64), CounterError> {
        let rows = conn.rows(&statement(&self.lock_counter, vec![Param::Text(name)])).await?;
        match rows.first().map(|row| (row.first().copied().flatten(), row.get(1).copied().flatten())) {
            Some((Some(count), Some(lowest))) if count > 0 => Ok((count, lowest)),
            _ => Err(unknown(name)),
        }
    }

    /// The values of `names`, in their order: one statement.
    async fn get_many(
        &self,
        conn: &mut impl Connection,
        names: &[String],
    ) -> Result<Vec<Option<i64>>, CounterError> {
        let read = self.sql.get_many(names.len());
        let params = names
            .iter()
            .enumerate()
            .flat_map(|(position, name)| [number(position as i64), Param::Text(name)]);
        let mut values = vec![None; names.len()];
        for row in conn.rows(&statement(&read, params.collect())).await? {
            if let [Some(position), total] = row[..]
                && let Some(value) =
                    usize::try_from(position).ok().and_then(|position| values.get_mut(position))
            {
                *value = total;
            }
        }
        Ok(values)
    }
}

/// A batch's deltas as the pairs [`Plain::add_many`] takes.
fn entries(deltas: &Deltas) -> impl Iterator<Item = (&str, i64)> + Clone {
    deltas.iter().map(|(name, delta)| (name.as_str(), *delta))
}

/// Refuses a blank name for a call that creates a counter, as the routines do.
fn check_not_blank(name: &str) -> Result<(), CounterError> {
    if name.trim_matches(' ').is_empty() {
        return Err(CounterError::InvalidArgument(BLANK_NAME.to_owned()));
    }
    Ok(())
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
