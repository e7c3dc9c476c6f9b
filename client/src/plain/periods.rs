//! Counting per period in plain SQL: what `counter_track`, the counting
//! triggers and the period routines do, where none runs. A write of a
//! counter that tracks periods adds to its slot and to the buckets of its
//! moment in one transaction (the caller's, when one is open); a write that
//! finds no period tracked is its one UPDATE, as before.

use std::borrow::Cow;
use std::collections::HashMap;

use slotted_counters_core::package::server_errno;
use slotted_counters_core::periods::{self, LAST_SECOND, Period, UtcOffset};
use slotted_counters_core::plain::{PlainSql, PlainStatement};
use slotted_counters_core::refusals::{self, AT_IN_FUTURE, FOR_COUNTER};

use super::{Plain, answers, number, statement};
use crate::call::{Answer, Moment, Series};
use crate::driver::{Connection, Param, Statement};
use crate::error::CounterError;

/// The statements of counting per period, made once per client.
#[derive(Debug)]
pub(super) struct PeriodStatements {
    periods: PlainStatement,
    server_now: PlainStatement,
    /// `add_to_buckets` for each set of periods, by the bits of
    /// [`Period::ALL`]'s positions.
    add_to_buckets: Vec<PlainStatement>,
    track: PlainStatement,
    mark_tracked: PlainStatement,
    untrack: PlainStatement,
    untrack_all: PlainStatement,
    oldest_buckets: PlainStatement,
    drop_buckets: PlainStatement,
    get_range: PlainStatement,
    series: PlainStatement,
    expire: Vec<PlainStatement>,
}

impl PeriodStatements {
    pub(super) fn new(sql: &PlainSql) -> Self {
        let sets = 1 << Period::ALL.len();
        PeriodStatements {
            periods: sql.periods(),
            server_now: sql.server_now(),
            add_to_buckets: (0..sets).map(|set| sql.add_to_buckets(&in_set(set))).collect(),
            track: sql.track(),
            mark_tracked: sql.mark_tracked(),
            untrack: sql.untrack(),
            untrack_all: sql.untrack_all(),
            oldest_buckets: sql.oldest_buckets(),
            drop_buckets: sql.drop_buckets(),
            get_range: sql.get_range(),
            series: sql.series(),
            expire: Period::ALL.map(|period| sql.expire(period)).to_vec(),
        }
    }
}

/// The periods whose positions in [`Period::ALL`] are the bits of `set`.
fn in_set(set: usize) -> Vec<Period> {
    Period::ALL
        .into_iter()
        .enumerate()
        .filter(|(position, _)| set & (1 << position) != 0)
        .map(|(_, p)| p)
        .collect()
}

/// A period's name as a parameter.
fn period_param(period: Period) -> Param<'static> {
    Param::Text(period.name())
}

/// The periods a counter tracks, with what each keeps (`None`: all).
pub(super) type Tracked = Vec<(Period, Option<i64>)>;

/// The periods a write counts in, each with whether it has a limit, in the
/// order of the periods.
pub(super) type Counted = Vec<(Period, bool)>;

/// A late write's moment and the server's clock when it was checked, in
/// seconds since 1970 UTC.
#[derive(Debug, Clone, Copy)]
pub(super) struct LateWrite {
    at: i64,
    now: i64,
}

impl Plain {
    /// The periods counter `name` tracks. Refused for a counter with a
    /// period whose buckets start at an offset from UTC, which only the
    /// routines place: the plain mode computes every start at UTC.
    pub(super) async fn tracked(
        &self,
        conn: &mut impl Connection,
        name: &str,
    ) -> Result<Tracked, CounterError> {
        Ok(self
            .tracked_and_limits(conn, name)
            .await?
            .into_iter()
            .map(|(period, keep, _)| (period, keep))
            .collect())
    }

    /// What [`Self::tracked`] reads, and each period's limit (`None`:
    /// none), in the order of the periods: the order in which a write
    /// takes the quotas' locks, as the routines' trigger does.
    async fn tracked_and_limits(
        &self,
        conn: &mut impl Connection,
        name: &str,
    ) -> Result<Vec<(Period, Option<i64>, Option<i64>)>, CounterError> {
        const WHAT: &str = "the periods a counter tracks";
        let rows = conn.rows(&statement(&self.periods.periods, vec![Param::Text(name)])).await?;
        let mut tracked = Vec::new();
        for [position, keep, offset, limit] in answers::rows_of(rows, WHAT)? {
            let position = answers::present(position, WHAT)?;
            let period = usize::try_from(position)
                .ok()
                .and_then(|position| Period::ALL.get(position.checked_sub(1)?))
                .ok_or_else(|| {
                    CounterError::unexpected_answer(format!("{WHAT}: no period is number {position}"), None)
                })?;
            if answers::present(offset, WHAT)? != 0 {
                return Err(CounterError::invalid_about(refusals::PLAIN_COUNTS_AT_UTC, name));
            }
            tracked.push((*period, keep, limit));
        }
        tracked.sort_by_key(|&(period, ..)| period as usize);
        Ok(tracked)
    }

    /// The limits of counter `name`, by period, in the order of the periods.
    pub(super) async fn limits(
        &self,
        conn: &mut impl Connection,
        name: &str,
    ) -> Result<Vec<(Period, i64)>, CounterError> {
        Ok(self
            .tracked_and_limits(conn, name)
            .await?
            .into_iter()
            .filter_map(|(period, _, limit)| Some((period, limit?)))
            .collect())
    }

    /// Where counter `name`'s buckets of `period` start: UTC when it
    /// tracks `period`, the only offset the plain mode counts at.
    pub(super) async fn utc_offset(
        &self,
        conn: &mut impl Connection,
        name: &str,
        period: Period,
    ) -> Result<Option<i64>, CounterError> {
        let tracked = self.tracked(conn, name).await?;
        Ok(tracked.iter().any(|(tracked, _)| *tracked == period).then_some(0))
    }

    /// The server's clock, in seconds since 1970 UTC.
    pub(super) async fn server_now(&self, conn: &mut impl Connection, age: i64) -> Result<i64, CounterError> {
        let rows = conn.rows(&statement(&self.periods.server_now, vec![number(age)])).await?;
        answers::one_value(rows, "the server's clock")
    }

    /// A late write's moment (`Moment::At`) and the server's clock, read
    /// once per call; `None` for a write made now. A moment later than the
    /// server's now is refused, naming counter `name` when given: a batch's
    /// moment is the whole batch's, and `counter_add_many_at` names no
    /// counter in it.
    pub(super) async fn late_write(
        &self,
        conn: &mut impl Connection,
        at: Moment,
        name: Option<&str>,
    ) -> Result<Option<LateWrite>, CounterError> {
        let Moment::At(at) = at else { return Ok(None) };
        let now = self.server_now(conn, 0).await?;
        if at <= now {
            return Ok(Some(LateWrite { at, now }));
        }
        let refusal = format!("{AT_IN_FUTURE}, not {}", periods::utc_text(at));
        Err(CounterError::invalid_argument(match name {
            Some(name) => refusals::about(&format!("{refusal}{FOR_COUNTER}"), name),
            None => refusal,
        }))
    }

    /// Of the periods counter `name` tracks, those a write counts in, each
    /// with whether it has a limit: all for a write made now; for a `late`
    /// one, those that keep its bucket.
    pub(super) async fn counted_periods(
        &self,
        conn: &mut impl Connection,
        name: &str,
        late: Option<LateWrite>,
    ) -> Result<Counted, CounterError> {
        let counted = |(period, _, limit): (Period, Option<i64>, Option<i64>)| (period, limit.is_some());
        let tracked = self.tracked_and_limits(conn, name).await?;
        let Some(LateWrite { at, now }) = late else {
            return Ok(tracked.into_iter().map(counted).collect());
        };
        let kept = |period: Period, keep: Option<i64>| match keep.and_then(|keep| u32::try_from(keep).ok()) {
            Some(keep) => period.start(at) >= period.back(period.start(now), keep.saturating_sub(1)),
            None => true,
        };
        Ok(tracked.into_iter().filter(|&(p, keep, _)| kept(p, keep)).map(counted).collect())
    }

    /// Adds `delta`, written to `slot` of counter `name`, to the bucket of
    /// each of `counted` that holds moment `at`: inside the write's
    /// transaction. The periods without a limit in one statement; then
    /// each limited one in turn, in the order of the periods, as the
    /// routines' trigger does, through its quota ([`Plain::add_within_limit`]).
    pub(super) async fn add_to_buckets(
        &self,
        conn: &mut impl Connection,
        name: &str,
        slot: u32,
        delta: i64,
        at: Moment,
        counted: &[(Period, bool)],
    ) -> Result<(), CounterError> {
        if counted.is_empty() || delta == 0 {
            return Ok(());
        }
        let limited: Vec<Period> =
            counted.iter().filter(|(_, limited)| *limited).map(|&(period, _)| period).collect();
        // A limit reads its bucket by the moment's seconds: the free periods
        // count at the same moment, or a write at a period's end could count
        // in one hour's bucket and the next day's.
        let at = match at {
            Moment::At(_) => at,
            _ if limited.is_empty() => at,
            moment => Moment::At(self.server_now(conn, moment.age().unwrap_or(0)).await?),
        };
        let free: Vec<Period> =
            counted.iter().filter(|(_, limited)| !limited).map(|&(period, _)| period).collect();
        if !free.is_empty() {
            let set: usize = free.iter().map(|period| 1 << (*period as usize)).sum();
            let (seconds, ago) = match at {
                Moment::At(seconds) => (Some(seconds), 0),
                moment => (None, moment.age().unwrap_or(0)),
            };
            let mut params = Vec::with_capacity(5 * free.len() + 1);
            for _ in &free {
                params.extend([
                    Param::Text(name),
                    Param::Number(seconds),
                    number(ago),
                    number(slot),
                    number(delta),
                ]);
            }
            params.push(number(delta));
            conn.execute(&statement(&self.periods.add_to_buckets[set], params)).await?;
        }
        let Moment::At(at) = at else { return Ok(()) };
        for period in limited {
            self.add_within_limit(conn, name, period, period.start(at), slot, delta).await?;
        }
        Ok(())
    }

    /// Starts, changes (`keep` not 0) or stops counting counter `name` per
    /// `period`; `keep` `None` keeps every bucket. A period that starts
    /// being counted starts with no bucket, as the routine's does.
    pub(super) async fn track(
        &self,
        conn: &mut impl Connection,
        name: &str,
        period: Period,
        keep: Option<u32>,
        offset: Option<UtcOffset>,
    ) -> Result<(), CounterError> {
        if offset.is_some_and(|offset| offset != UtcOffset::UTC) {
            return Err(CounterError::invalid_about(refusals::PLAIN_COUNTS_AT_UTC, name));
        }
        if !self.sql.auto_create() {
            self.read_slot_count(conn, name).await?;
        }
        if keep == Some(0) {
            let stop = statement(&self.periods.untrack, vec![Param::Text(name), period_param(period)]);
            conn.execute(&stop).await?;
            return self.drop_buckets(conn, name, period, LAST_SECOND).await;
        }
        if !self.tracked(conn, name).await?.iter().any(|(tracked, _)| *tracked == period) {
            self.drop_buckets(conn, name, period, LAST_SECOND).await?;
        }
        let keep = Param::Number(keep.map(i64::from));
        let start = statement(&self.periods.track, vec![Param::Text(name), period_param(period), keep, keep]);
        conn.execute(&start).await?;
        self.tracking.note(name, true);
        // After the period is in, so that no routine's write skips it. A
        // table made before the column (by an older plain_tables.sql) has
        // no routine that reads it.
        match conn.execute(&statement(&self.periods.mark_tracked, vec![Param::Text(name)])).await {
            Err(error) if error.code() == Some(server_errno::NO_SUCH_COLUMN) => Ok(()),
            marked => marked.map(drop),
        }
    }

    /// Stops every period counter `name` tracks: in [`Plain::delete`]'s
    /// transaction, so that no counter set up again under the name finds
    /// them, and its bucket drops follow ([`Self::drop_all_buckets`]).
    pub(super) async fn untrack_all(
        &self,
        conn: &mut impl Connection,
        name: &str,
    ) -> Result<(), CounterError> {
        conn.execute(&statement(&self.periods.untrack_all, vec![Param::Text(name)])).await?;
        self.tracking.note(name, false);
        Ok(())
    }

    /// Drops every bucket of counter `name`, of each period, a short
    /// statement at a time, as `counter_delete` does after the counter is
    /// gone.
    pub(super) async fn drop_all_buckets(
        &self,
        conn: &mut impl Connection,
        name: &str,
    ) -> Result<(), CounterError> {
        for period in Period::ALL {
            self.drop_buckets(conn, name, period, LAST_SECOND).await?;
        }
        Ok(())
    }

    /// Drops counter `name`'s buckets of `period` that start before
    /// `before`, a short statement at a time: up to the last start of the
    /// oldest rows, or the whole first bucket when they are all its own.
    async fn drop_buckets(
        &self,
        conn: &mut impl Connection,
        name: &str,
        period: Period,
        before: i64,
    ) -> Result<(), CounterError> {
        loop {
            let oldest = statement(
                &self.periods.oldest_buckets,
                vec![Param::Text(name), period_param(period), number(before)],
            );
            const WHAT: &str = "the oldest buckets of a period";
            let starts = answers::rows_of(conn.rows(&oldest).await?, WHAT)?
                .into_iter()
                .map(|[start]| answers::present(start, WHAT))
                .collect::<Result<Vec<i64>, _>>()?;
            let (Some(&first), Some(&last)) = (starts.first(), starts.last()) else {
                return Ok(());
            };
            let through = if first == last { last } else { last - 1 };
            let drop = statement(
                &self.periods.drop_buckets,
                vec![Param::Text(name), period_param(period), number(through)],
            );
            conn.execute(&drop).await?;
        }
    }

    /// What counter `name` counted in the bucket of `period` that holds
    /// moment `at`, as `counter_get_period` answers: a moment more than
    /// [`periods::READ_AHEAD_SECONDS`] past the server's now is refused,
    /// most often a local time taken for UTC. The server's clock is read
    /// first, as the function reads it: one round trip more than a range.
    pub(super) async fn get_period(
        &self,
        conn: &mut impl Connection,
        name: &str,
        period: Period,
        at: i64,
    ) -> Result<Option<i64>, CounterError> {
        if at > self.server_now(conn, 0).await?.saturating_add(periods::READ_AHEAD_SECONDS) {
            let refusal = refusals::read_too_far_ahead(periods::READ_AHEAD_SECONDS);
            return Err(CounterError::invalid_argument(format!("{refusal} {}", periods::utc_text(at))));
        }
        let start = period.start(at);
        self.get_range(conn, name, period, start, period.next(start)).await
    }

    /// What counter `name` counted in the buckets of `period` that start in
    /// `[from, to)`: `None` when it does not track `period` (or does not
    /// exist).
    pub(super) async fn get_range(
        &self,
        conn: &mut impl Connection,
        name: &str,
        period: Period,
        from: i64,
        to: i64,
    ) -> Result<Option<i64>, CounterError> {
        if !self.tracked(conn, name).await?.iter().any(|(tracked, _)| *tracked == period) {
            return Ok(None);
        }
        self.counted_in(conn, name, period, from, to).await.map(Some)
    }

    /// What the buckets of `period` of counter `name` that start in
    /// `[from, to)` counted, for a period the caller knows it tracks.
    pub(super) async fn counted_in(
        &self,
        conn: &mut impl Connection,
        name: &str,
        period: Period,
        from: i64,
        to: i64,
    ) -> Result<i64, CounterError> {
        let read = statement(
            &self.periods.get_range,
            vec![Param::Text(name), period_param(period), number(from), number(to)],
        );
        answers::one_value(conn.rows(&read).await?, "what a period's buckets counted")
    }

    /// The answer of a series (see [`crate::call::Call::Series`]): the
    /// counter's total, what the range counted, and each bucket's value.
    pub(super) async fn series(
        &self,
        conn: &mut impl Connection,
        name: &str,
        period: Period,
        from: i64,
        to: i64,
        starts: &[i64],
    ) -> Result<Answer, CounterError> {
        let total = self.get_many(conn, &[name.to_owned()]).await?.pop().flatten();
        if total.is_none() || !self.tracked(conn, name).await?.iter().any(|(tracked, _)| *tracked == period) {
            return Ok(Answer::Series(Series { total, range: None, buckets: Vec::new() }));
        }
        let read = statement(
            &self.periods.series,
            vec![Param::Text(name), period_param(period), number(from), number(to)],
        );
        const WHAT: &str = "what each bucket of a series counted";
        let counted = answers::rows_of(conn.rows(&read).await?, WHAT)?
            .into_iter()
            .map(|[start, count]| Ok((answers::present(start, WHAT)?, answers::present(count, WHAT)?)))
            .collect::<Result<HashMap<i64, i64>, CounterError>>()?;
        let buckets = starts.iter().map(|start| Some(counted.get(start).copied().unwrap_or(0))).collect();
        // Buckets count every write of their period, unbounded by the
        // total: a range of them may pass BIGINT, and its figure stops there.
        let range = counted.values().fold(0_i64, |range, &bucket| range.saturating_add(bucket));
        Ok(Answer::Series(Series { total, range: Some(range), buckets }))
    }

    /// Drops every counter's buckets beyond what each period keeps: one
    /// statement per period.
    pub(super) async fn expire(&self, conn: &mut impl Connection) -> Result<(), CounterError> {
        for expire in &self.periods.expire {
            conn.execute(&Statement { sql: Cow::Borrowed(&expire.sql), params: Vec::new() }).await?;
        }
        Ok(())
    }
}
