//! Limits per period in plain SQL: what `counter_limit`,
//! `counter_add_within_limit` and `counter_room` do, where no routine
//! runs. Every plain write of a limited period takes the quota's lock and
//! every row of its bucket (the routines' slow way) and checks the limit
//! against their sum; it adds to its row alone when the row's share has
//! room, and else shares the room left among the rows again. Exact, and
//! one bucket's plain writes wait for each other.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use slotted_counters_core::package::server_errno;
use slotted_counters_core::periods::{self, Period};
use slotted_counters_core::plain::{PlainSql, PlainStatement};
use slotted_counters_core::refusals;

use super::{Plain, answers, number, statement, unknown};
use crate::call::{Room, RoomOf};
use crate::driver::{Connection, Owner, Param};
use crate::error::{Bound, CounterError};
use crate::transaction::atomically;

/// The statements of limits per period, made once per client.
#[derive(Debug)]
pub(super) struct QuotaStatements {
    lock_quota: PlainStatement,
    read_limit: PlainStatement,
    read_limit_exclusively: PlainStatement,
    /// Whether the engine refused `read_limit`'s share lock (TiDB): the
    /// limit is read with `read_limit_exclusively` from then on.
    no_share_locks: AtomicBool,
    lock_bucket: PlainStatement,
    add_to_limited_bucket: PlainStatement,
    share_limit: PlainStatement,
    set_limit: PlainStatement,
    clear_shares: PlainStatement,
    bounds: PlainStatement,
}

impl QuotaStatements {
    pub(super) fn new(sql: &PlainSql) -> Self {
        QuotaStatements {
            lock_quota: sql.lock_quota(),
            read_limit: sql.read_limit(),
            read_limit_exclusively: sql.read_limit_exclusively(),
            no_share_locks: AtomicBool::new(false),
            lock_bucket: sql.lock_bucket(),
            add_to_limited_bucket: sql.add_to_limited_bucket(),
            share_limit: sql.share_limit(),
            set_limit: sql.set_limit(),
            clear_shares: sql.clear_shares(),
            bounds: sql.bounds(),
        }
    }
}

/// A moment as the server's `DATETIME` shows it, which a refusal writes.
fn seconds_text(seconds: i64) -> String {
    let mut text = periods::utc_text(seconds);
    text.truncate("YYYY-MM-DD hh:mm:ss".len());
    text
}

fn moment(seconds: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(u64::try_from(seconds).unwrap_or(0))
}

impl QuotaStatements {
    /// The rows of `read_limit` for `period` of counter `name`, share-locked
    /// where the engine takes share locks, else locked exclusively: TiDB
    /// refuses a share lock with 1235, and its transaction goes on.
    async fn read_limit(
        &self,
        conn: &mut impl Connection,
        name: &str,
        period: Period,
    ) -> Result<Vec<Vec<Option<i64>>>, CounterError> {
        let params = || vec![Param::Text(name), Param::Text(period.name())];
        if !self.no_share_locks.load(Ordering::Relaxed) {
            match conn.rows(&statement(&self.read_limit, params())).await {
                Err(error) if error.code() == Some(server_errno::NOT_SUPPORTED_YET) => {
                    log::info!(error:%; "the engine takes no share lock: limits are read locked exclusively");
                    self.no_share_locks.store(true, Ordering::Relaxed);
                }
                read => return read,
            }
        }
        conn.rows(&statement(&self.read_limit_exclusively, params())).await
    }
}

impl Plain {
    /// Adds `delta`, written to `slot` of counter `name`, to its bucket of
    /// `period` that starts at `start`, a period with a limit: inside the
    /// write's transaction, after its slot's UPDATE. Refused, and the
    /// transaction rolled back by the caller, when a positive delta would
    /// take the bucket past the limit.
    pub(super) async fn add_within_limit(
        &self,
        conn: &mut impl Connection,
        name: &str,
        period: Period,
        start: i64,
        slot: u32,
        delta: i64,
    ) -> Result<(), CounterError> {
        let q = &self.quotas;
        let bucket = || [Param::Text(name), Param::Text(period.name()), number(start)];
        conn.execute(&statement(&q.lock_quota, bucket().to_vec())).await?;
        let limit = answers::row_of(q.read_limit(conn, name, period).await?, "a period's limit")?
            .and_then(|[limit]| limit);
        let mut params = vec![number(slot), number(slot), number(delta)];
        params.extend(bucket());
        let rows = conn.rows(&statement(&q.lock_bucket, params)).await?;
        const WHAT: &str = "the rows of a limited bucket";
        let [used, found, own, fits] =
            answers::one_row(rows, WHAT)?.map(|value| answers::present(value, WHAT));
        let (used, found, own, fits) = (used?, found?, own?, fits?);
        let (used, delta_wide) = (i128::from(used), i128::from(delta));
        if let Some(limit) = limit
            && delta > 0
            && used + delta_wide > i128::from(limit)
        {
            let room = u64::try_from((i128::from(limit) - used).max(0)).unwrap_or(u64::MAX);
            let resets = period.next(start);
            let words = refusals::past_period_limit(period.name(), limit, room, &seconds_text(resets));
            return Err(CounterError::PastLimit {
                message: refusals::about(&words, name),
                name: Some(name.to_owned()),
                period,
                limit,
                room,
                resets: moment(resets),
            });
        }
        let mut params = bucket().to_vec();
        params.extend([number(slot), number(delta), number(delta)]);
        conn.execute(&statement(&q.add_to_limited_bucket, params)).await?;
        // A write its row's share has room for leaves the other rows' shares
        // alone: a routine's write that saw room in its own row finds it
        // still there, and never waits for the quota's lock holding its row.
        if limit.is_some() && fits == 1 {
            return Ok(());
        }
        // The room left, shared again among the rows, the slot's included.
        let rows = i128::from(found + 1 - own);
        let room = limit.map(|limit| (i128::from(limit) - used - delta_wide).max(0));
        let share = room.map(|room| i64::try_from(room / rows).unwrap_or(i64::MAX));
        let extra = room.map(|room| i64::try_from(room % rows).unwrap_or(0));
        let mut params = vec![Param::Number(share), number(slot), Param::Number(extra)];
        params.extend(bucket());
        conn.execute(&statement(&q.share_limit, params)).await.map(drop)
    }

    /// Limits what each bucket of `period` of counter `name` may count to
    /// `highest` (`None`: no limit), tracking the period first if it was
    /// not; the shares of the old limit go, so that the next write of each
    /// bucket shares the new one.
    pub(super) async fn limit(
        &self,
        conn: &mut impl Connection,
        name: &str,
        period: Period,
        highest: Option<i64>,
        owner: Owner,
    ) -> Result<(), CounterError> {
        if let Some(highest) = highest.filter(|&highest| highest < 0) {
            let words =
                format!("{} {highest}{}", refusals::limit_out_of_range(i64::MAX), refusals::FOR_COUNTER);
            return Err(CounterError::invalid_about(&words, name));
        }
        self.read_slot_count(conn, name).await?;
        if highest.is_some() && !self.tracked(conn, name).await?.iter().any(|(tracked, _)| *tracked == period)
        {
            self.track(conn, name, period, None, None).await?;
        }
        let q = &self.quotas;
        atomically(conn, owner, async |conn| {
            let set = vec![Param::Number(highest), Param::Text(name), Param::Text(period.name())];
            conn.execute(&statement(&q.set_limit, set)).await?;
            let clear = vec![Param::Text(name), Param::Text(period.name())];
            conn.execute(&statement(&q.clear_shares, clear)).await.map(drop)
        })
        .await
    }

    /// The room of counter `name` toward each bound and limit, as
    /// `counter_room` reads it: its bounds, then each limit in the order of
    /// the periods, with what the current bucket (at the server's clock)
    /// counted.
    pub(super) async fn room(
        &self,
        conn: &mut impl Connection,
        name: &str,
    ) -> Result<Vec<Room>, CounterError> {
        const WHAT: &str = "a counter's total and bounds";
        let rows = conn.rows(&statement(&self.quotas.bounds, vec![Param::Text(name)])).await?;
        let Some([total, floor, ceiling]) = answers::row_of(rows, WHAT)? else {
            return Err(unknown(name));
        };
        let total = answers::present(total, WHAT)?;
        let toward = |from: i64, to: i64| u64::try_from(i128::from(to) - i128::from(from)).unwrap_or(0);
        let mut room: Vec<Room> = [
            floor.map(|floor| (Bound::Floor, floor, toward(floor, total))),
            ceiling.map(|ceiling| (Bound::Ceiling, ceiling, toward(total, ceiling))),
        ]
        .into_iter()
        .flatten()
        .map(|(bound, value, left)| Room {
            of: RoomOf::Total(bound),
            bound: value,
            value: total,
            room: left,
            resets: None,
        })
        .collect();
        let limits = self.limits(conn, name).await?;
        if limits.is_empty() {
            return Ok(room);
        }
        let now = self.server_now(conn, 0).await?;
        for (period, limit) in limits {
            let start = period.start(now);
            let next = period.next(start);
            // The periods were read once, above: a limited one is tracked.
            let value = self.counted_in(conn, name, period, start, next).await?;
            room.push(Room {
                of: RoomOf::Limit(period),
                bound: limit,
                value,
                room: toward(value, limit),
                resets: Some(moment(next)),
            });
        }
        Ok(room)
    }
}
