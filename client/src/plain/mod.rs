//! How each call is made in plain SQL, with no routine: the second
//! description of the calls beside [`crate::routines`], run by the same
//! runners. The statements are core's [`PlainSql`], which the generator
//! also renders as a reference; the checks the routines make on the server
//! are made here, with the same error numbers and messages.
//!
//! The slot of an increment is picked here and sent as a parameter. A
//! counter's slot count is read once and kept for [`SLOT_COUNT_LIFETIME`].

mod answers;
mod bounds;
mod periods;
mod quotas;
mod slot_counts;
mod tracking;
mod writes;

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use slotted_counters_core::package::{DESCRIPTION_LENGTH, server_errno};
use slotted_counters_core::plain::{PlainSql, PlainStatement};
use slotted_counters_core::refusals::{self, ALREADY_EXISTS, BLANK_NAME, FOR_COUNTER};
use slotted_counters_core::{ConfigError, PackageOptions, SlotPolicy};

use crate::call::{Answer, Call, Deltas, Moment, NewCounter, StartDate};
use crate::driver::{Connection, Owner, Param, Statement};
use crate::error::CounterError;
use crate::transaction::atomically;
use periods::PeriodStatements;
use quotas::QuotaStatements;
use slot_counts::SlotCounts;
use tracking::Tracking;

/// A write made now: it counts in the buckets of the server's clock.
const NOW: Moment = Moment::Now;

/// The calls in plain SQL, for a package generated with some options.
#[derive(Debug)]
pub struct Plain {
    sql: PlainSql,
    name_width: PlainStatement,
    /// The width of names the table holds, read at the first write that may
    /// create a counter; 0 until then.
    table_width: AtomicU32,
    /// The width the options say, which a table made for it holds.
    options_width: u32,
    last_slot: PlainStatement,
    add_to_slot: PlainStatement,
    add_to_untracked_slot: PlainStatement,
    upsert_slot: PlainStatement,
    reset: PlainStatement,
    lock_counter: PlainStatement,
    spread: PlainStatement,
    unbound: PlainStatement,
    /// A lazy package's: creates a bounded counter's missing slot rows.
    fill_slots: Option<PlainStatement>,
    delete: PlainStatement,
    record_write: PlainStatement,
    forget_writes: PlainStatement,
    periods: PeriodStatements,
    quotas: QuotaStatements,
    slots: SlotPolicy,
    max_slots: u32,
    bound: i64,
    slot_counts: SlotCounts,
    tracking: Tracking,
    /// Whether the engine refused `add_to_untracked_slot` (Vitess plans no
    /// subquery in an UPDATE that may route to another shard): flushes
    /// then write as other writes do, reading the counter's periods first.
    untracked_refused: AtomicBool,
}

fn statement<'a>(sql: &'a PlainStatement, params: Vec<Param<'a>>) -> Statement<'a> {
    Statement { sql: Cow::Borrowed(&sql.sql), params }
}

fn number(value: impl Into<i64>) -> Param<'static> {
    Param::Number(Some(value.into()))
}

fn unknown(name: &str) -> CounterError {
    CounterError::unknown(name)
}

impl Plain {
    /// The plain calls of a package generated with `options`; refused for a
    /// package whose rules only its routines keep (a cluster's node slots,
    /// a counter limit).
    pub(crate) fn new(options: &PackageOptions) -> Result<Self, ConfigError> {
        let sql = PlainSql::new(options)?;
        Ok(Plain {
            name_width: sql.name_width(),
            table_width: AtomicU32::new(0),
            options_width: options.name_length(),
            last_slot: sql.last_slot(),
            add_to_slot: sql.add_to_slot(),
            add_to_untracked_slot: sql.add_to_untracked_slot(),
            upsert_slot: sql.upsert_slot(),
            reset: sql.reset(),
            lock_counter: sql.lock_counter(),
            spread: sql.spread(),
            unbound: sql.unbound(),
            fill_slots: match options.slots() {
                SlotPolicy::Fixed(slots) if options.auto_create() => Some(sql.fill_slots(slots)),
                _ => None,
            },
            delete: sql.delete(),
            record_write: sql.record_write(),
            forget_writes: sql.forget_writes(),
            periods: PeriodStatements::new(&sql),
            quotas: QuotaStatements::new(&sql),
            sql,
            slots: options.slots(),
            max_slots: options.max_slots(),
            bound: options.slot_bound(),
            slot_counts: SlotCounts::default(),
            tracking: Tracking::default(),
            untracked_refused: AtomicBool::new(false),
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
            Call::Increment { name } => self.add(conn, name, 1, NOW, owner).await?,
            Call::Add { name, delta } => self.add(conn, name, delta, NOW, owner).await?,
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
            Call::Track { name, period, keep, offset } => {
                self.track(conn, name, period, keep, offset).await?
            }
            Call::UtcOffset { name, period } => {
                return Ok(Answer::Value(self.utc_offset(conn, name, period).await?));
            }
            Call::AddAt { name, delta, at } => self.add_counted(conn, name, delta, at, owner).await?,
            Call::FlushAdd { name, delta, at } => self.add(conn, name, delta, at, owner).await?,
            Call::AddManyAt { id, deltas, at } => self.add_many(conn, entries(deltas), id, at, owner).await?,
            Call::GetPeriod { name, period, at } => {
                return Ok(Answer::Value(self.get_period(conn, name, period, at).await?));
            }
            Call::GetRange { name, period, from, to } => {
                return Ok(Answer::Value(self.get_range(conn, name, period, from, to).await?));
            }
            Call::Series { name, period, from, to, bounds } => {
                let starts = bounds.split_last().map_or(&[][..], |(_, starts)| starts);
                return self.series(conn, name, period, from, to, starts).await;
            }
            Call::ExpirePeriods => self.expire(conn).await?,
            Call::Bound { name, floor, ceiling } => self.bound(conn, name, floor, ceiling, owner).await?,
            Call::Room { name } => return Ok(Answer::Room(self.room(conn, name).await?)),
            Call::Limit { name, period, highest } => self.limit(conn, name, period, highest, owner).await?,
            // The plain mode runs no routine, and needs every feature's tables.
            Call::Package => return Ok(Answer::Package(None)),
        }
        Ok(Answer::Done)
    }

    /// Refuses a name longer than the table holds, which a non-strict
    /// session would cut into another counter's name as it creates it: a
    /// table an earlier version made keeps its width (50), below the
    /// options' default. Read once; the options' width where the engine
    /// does not say.
    pub(super) async fn check_width(
        &self,
        conn: &mut impl Connection,
        name: &str,
    ) -> Result<(), CounterError> {
        let mut width = self.table_width.load(Ordering::Relaxed);
        if width == 0 {
            let read = statement(&self.name_width, vec![Param::Text(self.sql.table())]);
            let held = answers::row_of(conn.rows(&read).await?, "the width of the names' column")?;
            width = held.and_then(|[held]| u32::try_from(held?).ok()).unwrap_or(self.options_width);
            self.table_width.store(width, Ordering::Relaxed);
        }
        if name.chars().count() > width as usize {
            return Err(CounterError::invalid_about(&refusals::long_name(width), name));
        }
        Ok(())
    }

    fn past_bound(&self, name: &str) -> CounterError {
        CounterError::invalid_about(&format!("{}{FOR_COUNTER}", refusals::past_bound(self.bound)), name)
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
        self.check_width(conn, name).await?;
        let invalid =
            |problem: String| Err(CounterError::invalid_about(&format!("{problem}{FOR_COUNTER}"), name));
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
                Err(CounterError::already_exists(refusals::about(ALREADY_EXISTS, name)).about(name))
            }
            outcome => {
                self.slot_counts.forget(name);
                outcome.map(drop)
            }
        }
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
        // Slot 1 exists as long as the counter does; an unbounded counter's
        // value goes there in one statement.
        if !self.sql.auto_create() && conn.execute(&reset(1)).await? > 0 {
            return Ok(());
        }
        // No row changed: the counter is bounded, does not exist, or reads so
        // already; or a lazy counter keeps only the slots that were hit, and
        // the value goes to its lowest. Each told under lock.
        atomically(conn, owner, async |conn| {
            let locked = self.lock(&mut *conn, name).await?;
            if locked.is_bounded() {
                locked.check(name, value)?;
                let bounds = (locked.floor, locked.ceiling);
                return self.spread(conn, name, &locked, value, bounds, start_date == StartDate::Now).await;
            }
            let slot = if self.sql.auto_create() { locked.lowest_slot } else { 1 };
            Connection::execute(conn, &reset(slot)).await.map(drop)
        })
        .await
    }

    /// Deletes counter `name` with its periods, then its buckets, as
    /// `counter_delete` does. Not by the rows a DELETE reports (Spider
    /// reports none for a delete that removed rows): by a locking read first.
    async fn delete(&self, conn: &mut impl Connection, name: &str, owner: Owner) -> Result<(), CounterError> {
        atomically(conn, owner, async |conn| {
            self.lock(&mut *conn, name).await?;
            Connection::execute(&mut *conn, &statement(&self.delete, vec![Param::Text(name)])).await?;
            self.untrack_all(conn, name).await?;
            self.slot_counts.forget(name);
            Ok(())
        })
        .await?;
        self.drop_all_buckets(conn, name).await
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
        const WHAT: &str = "the totals of counters";
        let mut values = vec![None; names.len()];
        for [position, total] in
            answers::rows_of(conn.rows(&statement(&read, params.collect())).await?, WHAT)?
        {
            let position = answers::present(position, WHAT)?;
            let value = usize::try_from(position)
                .ok()
                .and_then(|position| values.get_mut(position))
                .ok_or_else(|| {
                    CounterError::unexpected_answer(
                        format!("{WHAT}: no counter was asked for at {position}"),
                        None,
                    )
                })?;
            *value = total;
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
        return Err(CounterError::invalid_argument(BLANK_NAME.to_owned()));
    }
    Ok(())
}
