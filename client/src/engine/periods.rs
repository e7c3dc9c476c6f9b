//! The calls of counting per period, checked and run as the engine runs
//! every call. Times are taken as [`SystemTime`]s and sent as whole seconds
//! since 1970-01-01 UTC; a series' bucket starts are computed here, in
//! UTC, and read back as times.

use std::time::SystemTime;

use slotted_counters_core::periods::{Period, SERIES_LIMIT, UtcOffset};
use slotted_counters_core::refusals::{self, FOR_COUNTER, UNTRACKED_PERIOD};

use super::{Driver, Engine};
use crate::call::{Call, Deltas, Keep, Moment, Room, Series, add_delta, new_write_id, seconds, time_of};
use crate::error::CounterError;

impl<D: Driver> Engine<D> {
    /// Starts counting counter `name` per `period`, keeping `keep`
    /// buckets, or changes what it keeps; with `offset`, in buckets that
    /// start there (`None`: where they start already, UTC for a period not
    /// tracked yet).
    pub(crate) async fn track(
        &self,
        name: &str,
        period: Period,
        keep: Keep,
        offset: Option<UtcOffset>,
    ) -> Result<(), CounterError> {
        self.check(name)?;
        let keep = match keep {
            Keep::All => None,
            Keep::Last(0) => {
                return Err(CounterError::invalid_about(
                    &format!("keep must be at least 1 (untrack stops counting per a period){FOR_COUNTER}"),
                    name,
                ));
            }
            Keep::Last(buckets) => Some(buckets),
        };
        self.write(Call::Track { name, period, keep, offset }).await
    }

    /// Limits what each bucket of counter `name`'s `period` may count to
    /// `highest`; `None` removes the limit.
    pub(crate) async fn limit(
        &self,
        name: &str,
        period: Period,
        highest: Option<u64>,
    ) -> Result<(), CounterError> {
        self.check(name)?;
        let past_a_bucket = |highest: u64| {
            let words = format!("{} {highest}{FOR_COUNTER}", refusals::limit_out_of_range(i64::MAX));
            CounterError::invalid_about(&words, name)
        };
        let highest =
            highest.map(|highest| i64::try_from(highest).map_err(|_| past_a_bucket(highest))).transpose()?;
        self.write(Call::Limit { name, period, highest }).await
    }

    /// The room toward each bound and limit of counter `name`.
    pub(crate) async fn room(&self, name: &str) -> Result<Vec<Room>, CounterError> {
        self.check(name)?;
        self.run(Call::Room { name }).await?.room()
    }

    /// Stops counting counter `name` per `period`, and drops its buckets.
    pub(crate) async fn untrack(&self, name: &str, period: Period) -> Result<(), CounterError> {
        self.check(name)?;
        self.write(Call::Track { name, period, keep: Some(0), offset: None }).await
    }

    /// Adds `delta` to counter `name`, counted in the buckets that hold `at`.
    pub(crate) async fn add_at(&self, name: &str, delta: i64, at: SystemTime) -> Result<(), CounterError> {
        self.add_counted_at(name, delta, Moment::At(seconds(at))).await
    }

    /// Adds `delta` to counter `name`, counted in the buckets of moment
    /// `at`; with write ids, under an id of its own.
    pub(crate) async fn add_counted_at(
        &self,
        name: &str,
        delta: i64,
        at: Moment,
    ) -> Result<(), CounterError> {
        self.check(name)?;
        if self.write_ids {
            let id = new_write_id();
            let deltas = Deltas::from([(name.to_owned(), delta)]);
            return self.write(Call::AddManyAt { id: Some(&id), deltas: &deltas, at }).await;
        }
        self.write(Call::AddAt { name, delta, at }).await
    }

    /// A coalesced flush's sum `delta` for counter `name`, counted in the
    /// buckets of moment `at`: as [`Engine::add_counted_at`], but in the
    /// fewest statements the mode allows ([`Call::FlushAdd`]).
    pub(crate) async fn flush_add(&self, name: &str, delta: i64, at: Moment) -> Result<(), CounterError> {
        if self.write_ids {
            return self.add_counted_at(name, delta, at).await;
        }
        self.check(name)?;
        self.write(Call::FlushAdd { name, delta, at }).await
    }

    /// Sums the deltas per name and applies them in one call, counted in
    /// the buckets of `at`: what a coalesced flush sends. No call for no
    /// deltas.
    pub(crate) async fn add_many_at<S: AsRef<str>>(
        &self,
        deltas: impl IntoIterator<Item = (S, i64)>,
        at: Moment,
    ) -> Result<(), CounterError> {
        let mut sums = Deltas::new();
        for (name, delta) in deltas {
            self.check(name.as_ref())?;
            add_delta(&mut sums, name.as_ref(), delta)?;
        }
        if sums.is_empty() {
            return Ok(());
        }
        let id = self.write_ids.then(new_write_id);
        self.write(Call::AddManyAt { id: id.as_ref(), deltas: &sums, at }).await
    }

    /// What counter `name` counted in the bucket of `period` that holds
    /// `at`; `None` when it does not exist or does not track `period`.
    pub(crate) async fn get_period(
        &self,
        name: &str,
        period: Period,
        at: SystemTime,
    ) -> Result<Option<i64>, CounterError> {
        self.check(name)?;
        self.run(Call::GetPeriod { name, period, at: seconds(at) }).await?.value()
    }

    /// What counter `name` counted in the buckets of `period` that start in
    /// `[from, to)`; `None` when it does not exist or does not track `period`.
    pub(crate) async fn get_range(
        &self,
        name: &str,
        period: Period,
        from: SystemTime,
        to: SystemTime,
    ) -> Result<Option<i64>, CounterError> {
        self.check(name)?;
        let call = Call::GetRange { name, period, from: seconds(from), to: seconds(to) };
        self.run(call).await?.value()
    }

    /// Each bucket of `period` that starts in `[from, to)`, in order, with
    /// what counter `name` counted in it.
    pub(crate) async fn series(
        &self,
        name: &str,
        period: Period,
        from: SystemTime,
        to: SystemTime,
    ) -> Result<Vec<(SystemTime, i64)>, CounterError> {
        self.check(name)?;
        let (from, to) = (seconds(from), seconds(to));
        let offset = self.run(Call::UtcOffset { name, period }).await?.value()?;
        let offset = offset.and_then(UtcOffset::minutes).unwrap_or(UtcOffset::UTC);
        let mut bounds = period.starts_at(offset, from, to).ok_or_else(|| {
            CounterError::invalid_about(
                &format!("{}{FOR_COUNTER}", refusals::series_too_long(SERIES_LIMIT)),
                name,
            )
        })?;
        let starts = bounds.len();
        if let Some(&last) = bounds.last() {
            bounds.push(period.next_at(offset, last));
        }
        let series = self.run(Call::Series { name, period, from, to, bounds: &bounds }).await?.series()?;
        match series {
            Series { total: None, .. } => Err(CounterError::unknown(name)),
            Series { range: None, .. } => {
                Err(CounterError::invalid_about(&format!("{UNTRACKED_PERIOD} '{period}'{FOR_COUNTER}"), name))
            }
            Series { buckets, .. } => Ok(bounds[..starts]
                .iter()
                .zip(buckets)
                .map(|(&start, value)| (time_of(start), value.unwrap_or(0)))
                .collect()),
        }
    }

    /// Drops the buckets beyond what each period keeps, for every counter.
    pub(crate) async fn expire_periods(&self) -> Result<(), CounterError> {
        self.write(Call::ExpirePeriods).await
    }
}
