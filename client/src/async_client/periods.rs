//! The async client's calls of counting per period.

use std::time::SystemTime;

use slotted_counters_core::periods::{Period, UtcOffset};

use super::{AsyncConnections, AsyncCounters};
use crate::call::{Keep, Room};
use crate::error::CounterError;

impl<C: AsyncConnections> AsyncCounters<C> {
    /// Counts counter `name` per `period`, as [`crate::Counters::track`].
    pub async fn track(&self, name: &str, period: Period, keep: Keep) -> Result<(), CounterError> {
        self.engine.track(name, period, keep, None).await
    }

    /// Counts counter `name` per `period` in buckets that start at
    /// `offset` from UTC, as [`crate::Counters::track_at_offset`].
    pub async fn track_at_offset(
        &self,
        name: &str,
        period: Period,
        keep: Keep,
        offset: UtcOffset,
    ) -> Result<(), CounterError> {
        self.engine.track(name, period, keep, Some(offset)).await
    }

    /// Limits each bucket of counter `name`'s `period`, as
    /// [`crate::Counters::limit`].
    pub async fn limit(&self, name: &str, period: Period, highest: Option<u64>) -> Result<(), CounterError> {
        self.engine.limit(name, period, highest).await
    }

    /// The room toward each bound and limit of counter `name`, as
    /// [`crate::Counters::room`].
    pub async fn room(&self, name: &str) -> Result<Vec<Room>, CounterError> {
        self.engine.room(name).await
    }

    /// Stops counting counter `name` per `period`, and drops its buckets
    /// and its limit.
    pub async fn untrack(&self, name: &str, period: Period) -> Result<(), CounterError> {
        self.engine.untrack(name, period).await
    }

    /// A late write, as [`crate::Counters::add_at`].
    pub async fn add_at(&self, name: &str, delta: i64, at: SystemTime) -> Result<(), CounterError> {
        self.engine.add_at(name, delta, at).await
    }

    /// What counter `name` counted in the bucket of `period` that holds
    /// `at`, as [`crate::Counters::get_period`].
    pub async fn get_period(
        &self,
        name: &str,
        period: Period,
        at: SystemTime,
    ) -> Result<Option<i64>, CounterError> {
        self.engine.get_period(name, period, at).await
    }

    /// What counter `name` counted in the buckets of `period` that start in
    /// `[from, to)`, as [`crate::Counters::get_range`].
    pub async fn get_range(
        &self,
        name: &str,
        period: Period,
        from: SystemTime,
        to: SystemTime,
    ) -> Result<Option<i64>, CounterError> {
        self.engine.get_range(name, period, from, to).await
    }

    /// Each bucket of `period` that starts in `[from, to)` with what counter
    /// `name` counted in it, as [`crate::Counters::series`].
    pub async fn series(
        &self,
        name: &str,
        period: Period,
        from: SystemTime,
        to: SystemTime,
    ) -> Result<Vec<(SystemTime, i64)>, CounterError> {
        self.engine.series(name, period, from, to).await
    }

    /// Drops every counter's buckets beyond what its periods keep, as
    /// [`crate::Counters::expire_periods`].
    pub async fn expire_periods(&self) -> Result<(), CounterError> {
        self.engine.expire_periods().await
    }
}
