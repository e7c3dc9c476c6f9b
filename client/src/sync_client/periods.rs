//! The sync client's calls of counting per period.

use std::time::SystemTime;

use slotted_counters_core::periods::{Period, UtcOffset};

use super::{Counters, SyncConnections};
use crate::call::{Keep, Room};
use crate::driver::ready;
use crate::error::CounterError;

impl<C: SyncConnections> Counters<C> {
    /// Counts counter `name` per `period` from now on, in buckets that start
    /// at UTC boundaries, keeping `keep` of them; called again, changes
    /// what it keeps. Every write that changes the counter's total then
    /// adds the same delta to the current bucket, in the write's
    /// transaction. A period that starts being counted starts with no
    /// bucket.
    ///
    /// ```no_run
    /// use slotted_counters::{Keep, Period};
    /// # let counters = slotted_counters::Counters::new(mysql::Pool::new("mysql://a@h/db")?)?;
    /// counters.track("downloads", Period::Day, Keep::Last(400))?;
    /// counters.track("downloads", Period::Hour, Keep::Last(48))?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn track(&self, name: &str, period: Period, keep: Keep) -> Result<(), CounterError> {
        ready(self.engine.track(name, period, keep, None))
    }

    /// [`Counters::track`], in buckets that start at `offset` from UTC: a
    /// day at +08:00 starts at 16:00 UTC, the midnight of Shanghai, and so
    /// does a limit's reset ([`Counters::limit`]). Series read in it. An
    /// offset is fixed: a period tracked at another is refused until
    /// [`Counters::untrack`] drops its buckets, and its limit with them.
    /// Needs the package's
    /// routines: the plain mode counts at UTC only, and refuses.
    ///
    /// ```no_run
    /// use slotted_counters::{Keep, Period, UtcOffset};
    /// # let counters = slotted_counters::Counters::new(mysql::Pool::new("mysql://a@h/db")?)?;
    /// let shanghai = UtcOffset::minutes(8 * 60).expect("within UTC-12:00 to UTC+14:00");
    /// counters.track_at_offset("api:3f2c9a", Period::Day, Keep::Last(31), shanghai)?;
    /// counters.limit("api:3f2c9a", Period::Day, Some(1_000))?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn track_at_offset(
        &self,
        name: &str,
        period: Period,
        keep: Keep,
        offset: UtcOffset,
    ) -> Result<(), CounterError> {
        ready(self.engine.track(name, period, keep, Some(offset)))
    }

    /// Limits what each bucket of counter `name`'s `period` may count to
    /// `highest`, a quota per minute, hour, day or month; `None` removes
    /// the limit. The period is tracked first, keeping every bucket, if it
    /// was not. From then on a write that would take its bucket past the
    /// limit is refused with [`CounterError::PastLimit`], which says the
    /// room left and when the bucket ends, and changes nothing. The plain
    /// mode keeps it too, each of its writes of the period through the
    /// quota's lock.
    ///
    /// A period this tracks starts its buckets at UTC: for a quota at an
    /// offset, call [`Counters::track_at_offset`] first. Moving a tracked
    /// period to another offset takes [`Counters::untrack`], which drops
    /// its limit with its buckets: set the limit again after.
    ///
    /// ```no_run
    /// use slotted_counters::{CounterError, Period};
    /// # let counters = slotted_counters::Counters::new(mysql::Pool::new("mysql://a@h/db")?)?;
    /// counters.limit("api:3f2c9a", Period::Day, Some(1_000))?;
    /// match counters.increment("api:3f2c9a") {
    ///     Err(CounterError::PastLimit { resets, .. }) => println!("over quota until {resets:?}"),
    ///     other => other?,
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn limit(&self, name: &str, period: Period, highest: Option<u64>) -> Result<(), CounterError> {
        ready(self.engine.limit(name, period, highest))
    }

    /// The room toward each bound and limit of counter `name`, one
    /// [`Room`] each, in the order `counter_room` reads them: the floor,
    /// the ceiling, then the limits from the minute's to the month's. A
    /// read: it locks nothing.
    pub fn room(&self, name: &str) -> Result<Vec<Room>, CounterError> {
        ready(self.engine.room(name))
    }

    /// Stops counting counter `name` per `period`, and drops its buckets
    /// and its limit (`counter_track` with `keep` 0).
    pub fn untrack(&self, name: &str, period: Period) -> Result<(), CounterError> {
        ready(self.engine.untrack(name, period))
    }

    /// A late write, as events replayed from a queue: adds `delta` to the
    /// counter and to the bucket that holds `at` of each period it tracks,
    /// unless the period keeps no bucket so old. A time later than the
    /// server's now is refused. With write ids, carries one.
    ///
    /// ```no_run
    /// use std::time::{Duration, SystemTime};
    /// # let counters = slotted_counters::Counters::new(mysql::Pool::new("mysql://a@h/db")?)?;
    /// counters.add_at("downloads", 3, SystemTime::now() - Duration::from_secs(3_600))?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn add_at(&self, name: &str, delta: i64, at: SystemTime) -> Result<(), CounterError> {
        ready(self.engine.add_at(name, delta, at))
    }

    /// What counter `name` counted in the bucket of `period` that holds
    /// `at`: `Some(0)` when nothing was, `None` when the counter does not
    /// exist or does not track `period`.
    ///
    /// ```no_run
    /// use std::time::SystemTime;
    /// use slotted_counters::Period;
    /// # let counters = slotted_counters::Counters::new(mysql::Pool::new("mysql://a@h/db")?)?;
    /// let today = counters.get_period("downloads", Period::Day, SystemTime::now())?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn get_period(
        &self,
        name: &str,
        period: Period,
        at: SystemTime,
    ) -> Result<Option<i64>, CounterError> {
        ready(self.engine.get_period(name, period, at))
    }

    /// What counter `name` counted in the buckets of `period` that start in
    /// `[from, to)`, as [`Counters::get_period`] answers. A day in a time
    /// zone a whole number of hours from UTC is its 24 hours, read from
    /// [`Period::Hour`] buckets.
    pub fn get_range(
        &self,
        name: &str,
        period: Period,
        from: SystemTime,
        to: SystemTime,
    ) -> Result<Option<i64>, CounterError> {
        ready(self.engine.get_range(name, period, from, to))
    }

    /// Each bucket of `period` that starts in `[from, to)`, in order: its
    /// start and what counter `name` counted in it (0 where nothing was),
    /// for charts. At most [`SERIES_LIMIT`](crate::defaults::SERIES_LIMIT)
    /// buckets; refused for a counter that does not exist or does not
    /// track `period`.
    ///
    /// ```no_run
    /// use std::time::{Duration, SystemTime};
    /// use slotted_counters::Period;
    /// # let counters = slotted_counters::Counters::new(mysql::Pool::new("mysql://a@h/db")?)?;
    /// let now = SystemTime::now();
    /// let days = counters.series("downloads", Period::Day, now - Duration::from_secs(30 * 86_400), now)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn series(
        &self,
        name: &str,
        period: Period,
        from: SystemTime,
        to: SystemTime,
    ) -> Result<Vec<(SystemTime, i64)>, CounterError> {
        ready(self.engine.series(name, period, from, to))
    }

    /// Drops every counter's buckets beyond what its periods keep
    /// (`counter_expire_periods`, or in the plain mode one statement per
    /// period). Call it regularly, every hour, from one place.
    pub fn expire_periods(&self) -> Result<(), CounterError> {
        ready(self.engine.expire_periods())
    }
}
