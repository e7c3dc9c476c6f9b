//! What a counter call asks for, apart from how it reaches the server: the
//! calls both clients make, with their arguments already checked.

use std::collections::BTreeMap;
use std::num::NonZeroU64;
use std::ops::RangeInclusive;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use slotted_counters_core::package::Routine;
use slotted_counters_core::periods::{Period, UtcOffset};
use slotted_counters_core::refusals::FOR_COUNTER;

use crate::error::{Bound, CounterError, moment_of};

/// A counter for `setup` to create: its description, and the slot count
/// and starting value unless the package's defaults will do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewCounter<'a> {
    pub(crate) description: &'a str,
    pub(crate) slots: Option<u32>,
    pub(crate) initial_value: Option<i64>,
}

impl<'a> NewCounter<'a> {
    /// A counter described by `description`, with the package's default
    /// slot count (fixed-slot packages take only their own), starting at 0.
    pub fn new(description: &'a str) -> Self {
        NewCounter { description, slots: None, initial_value: None }
    }

    /// With `slots` slot rows.
    pub fn slots(self, slots: u32) -> Self {
        NewCounter { slots: Some(slots), ..self }
    }

    /// Starting at `value`, kept in slot 1.
    pub fn initial_value(self, value: i64) -> Self {
        NewCounter { initial_value: Some(value), ..self }
    }
}

/// What `reset` does to a counter's start date.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartDate {
    /// The start date stays: the reset corrects the value.
    Keep,
    /// The start date becomes now: counting starts over.
    Now,
}

/// How many buckets of a period a counter keeps, the current one included:
/// what `track` takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// Every bucket, ever.
    All,
    /// The last `n` (at least 1); older ones go when the periods are
    /// expired (`expire_periods`).
    Last(u32),
}

/// The moment whose buckets a write counts in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Moment {
    /// The server's clock when it runs the write.
    Now,
    /// The server's clock when it runs the write, less the time since this
    /// instant: a coalesced delta counts at its hand-over, however long its
    /// flush took, retries included, and whatever the client's wall clock
    /// says.
    Since(Instant),
    /// This many seconds since 1970-01-01 UTC: a late write's.
    At(i64),
}

impl Moment {
    /// How long before the server's clock the moment is, in microseconds,
    /// as a statement sent now says it; `None` for a moment given as a time.
    pub(crate) fn age(self) -> Option<i64> {
        match self {
            Moment::Now => Some(0),
            Moment::Since(instant) => Some(i64::try_from(instant.elapsed().as_micros()).unwrap_or(i64::MAX)),
            Moment::At(_) => None,
        }
    }
}

/// Whole seconds since 1970-01-01 UTC, rounded down, of `time`: a bucket is
/// whole seconds long, so no bucket changes.
pub(crate) fn seconds(time: SystemTime) -> i64 {
    match time.duration_since(UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_secs()).unwrap_or(i64::MAX),
        Err(before) => {
            let before = before.duration();
            let whole = i64::try_from(before.as_secs()).unwrap_or(i64::MAX);
            -whole - i64::from(before.subsec_nanos() > 0)
        }
    }
}

/// The time of `seconds` since 1970-01-01 UTC.
pub(crate) fn time_of(seconds: i64) -> SystemTime {
    let offset = std::time::Duration::from_secs(seconds.unsigned_abs());
    if seconds >= 0 { UNIX_EPOCH + offset } else { UNIX_EPOCH - offset }
}

/// Deltas summed per counter, in the order of the names: what one batch
/// applies.
pub(crate) type Deltas = BTreeMap<String, i64>;

/// The id a write carries, chosen at random by the client for each write
/// and kept through its retries, so that the server counts it once.
pub(crate) type WriteId = [u8; 16];

/// A fresh write id: 16 bytes from the operating system's random source.
pub(crate) fn new_write_id() -> WriteId {
    let mut id = WriteId::default();
    getrandom::fill(&mut id).expect("the operating system's random source answers");
    id
}

/// One counter call. Names are checked against the package's rule before a
/// call is made.
#[derive(Debug, Clone, Copy)]
pub enum Call<'a> {
    Setup {
        name: &'a str,
        counter: NewCounter<'a>,
    },
    Increment {
        name: &'a str,
    },
    Add {
        name: &'a str,
        delta: i64,
    },
    AddMany {
        deltas: &'a Deltas,
    },
    /// An add that carries a write id: counted once however often it runs.
    AddOnce {
        id: &'a WriteId,
        name: &'a str,
        delta: i64,
    },
    /// A batch that carries a write id.
    AddManyOnce {
        id: &'a WriteId,
        deltas: &'a Deltas,
    },
    /// Forgets the write ids recorded more than `seconds` ago.
    ForgetWrites {
        seconds: i64,
    },
    Reset {
        name: &'a str,
        value: i64,
        start_date: StartDate,
    },
    Delete {
        name: &'a str,
    },
    GetMany {
        names: &'a [String],
    },
    /// Starts, changes or stops (`keep` 0) counting per `period`; `keep`
    /// `None` keeps every bucket. `offset` `None` leaves where the buckets
    /// start as it is (UTC for a period not tracked yet).
    Track {
        name: &'a str,
        period: Period,
        keep: Option<u32>,
        offset: Option<UtcOffset>,
    },
    /// Where the buckets of `period` start, in minutes east of UTC.
    UtcOffset {
        name: &'a str,
        period: Period,
    },
    /// An add counted in the buckets of `at`.
    AddAt {
        name: &'a str,
        delta: i64,
        at: Moment,
    },
    /// A coalesced flush's sum for one counter, counted in the buckets of
    /// `at`: an [`Call::AddAt`], which a routine-mode client may send as
    /// one UPDATE ([`crate::mode`]).
    FlushAdd {
        name: &'a str,
        delta: i64,
        at: Moment,
    },
    /// A batch counted in the buckets of `at`, with a write id or without.
    AddManyAt {
        id: Option<&'a WriteId>,
        deltas: &'a Deltas,
        at: Moment,
    },
    /// What the bucket of `period` that holds `at` counted.
    GetPeriod {
        name: &'a str,
        period: Period,
        at: i64,
    },
    /// What the buckets of `period` that start in `[from, to)` counted.
    GetRange {
        name: &'a str,
        period: Period,
        from: i64,
        to: i64,
    },
    /// What each bucket of `period` that starts in `[from, to)` counted:
    /// `bounds` are their starts, then the end of the last. Answers the
    /// counter's total (`None`: no such counter), then what the range
    /// counted (`None`: `period` is not tracked), then one value per bucket.
    Series {
        name: &'a str,
        period: Period,
        from: i64,
        to: i64,
        bounds: &'a [i64],
    },
    /// Drops the buckets beyond what each period keeps.
    ExpirePeriods,
    /// Bounds the counter's total to `floor` and `ceiling` (`None`: no
    /// bound on that side; both: none at all).
    Bound {
        name: &'a str,
        floor: Option<i64>,
        ceiling: Option<i64>,
    },
    /// Reads the room toward each bound and limit of the counter.
    Room {
        name: &'a str,
    },
    /// Limits what each bucket of `period` may count to `highest`
    /// (`None`: no limit).
    Limit {
        name: &'a str,
        period: Period,
        highest: Option<i64>,
    },
    /// Reads which package the database holds (`counter_package()`).
    Package,
}

impl<'a> Call<'a> {
    /// The call's name, as its events show it.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Call::Setup { .. } => "setup",
            Call::Increment { .. } => "increment",
            Call::Add { .. } => "add",
            Call::AddMany { .. } => "add_many",
            Call::AddOnce { .. } => "add_once",
            Call::AddManyOnce { .. } => "add_many_once",
            Call::ForgetWrites { .. } => "forget_writes",
            Call::Reset { .. } => "reset",
            Call::Delete { .. } => "delete",
            Call::GetMany { .. } => "get_many",
            Call::Track { .. } => "track",
            Call::UtcOffset { .. } => "utc_offset",
            Call::AddAt { .. } => "add_at",
            Call::FlushAdd { .. } => "flush_add",
            Call::AddManyAt { .. } => "add_many_at",
            Call::GetPeriod { .. } => "get_period",
            Call::GetRange { .. } => "get_range",
            Call::Series { .. } => "series",
            Call::ExpirePeriods => "expire_periods",
            Call::Bound { .. } => "bound",
            Call::Limit { .. } => "limit",
            Call::Room { .. } => "room",
            Call::Package => "package",
        }
    }

    /// The one counter the call is about, if it names one.
    pub(crate) fn counter(&self) -> Option<&'a str> {
        match *self {
            Call::Setup { name, .. }
            | Call::Increment { name }
            | Call::Add { name, .. }
            | Call::AddOnce { name, .. }
            | Call::Reset { name, .. }
            | Call::Delete { name }
            | Call::Track { name, .. }
            | Call::UtcOffset { name, .. }
            | Call::AddAt { name, .. }
            | Call::FlushAdd { name, .. }
            | Call::GetPeriod { name, .. }
            | Call::GetRange { name, .. }
            | Call::Series { name, .. }
            | Call::Bound { name, .. }
            | Call::Room { name }
            | Call::Limit { name, .. } => Some(name),
            Call::AddMany { .. }
            | Call::AddManyOnce { .. }
            | Call::AddManyAt { .. }
            | Call::ForgetWrites { .. }
            | Call::GetMany { .. }
            | Call::ExpirePeriods
            | Call::Package => None,
        }
    }

    /// The routine the call runs in routine mode, whose features it needs.
    pub(crate) fn routine(&self) -> Routine {
        match self {
            Call::Setup { .. } => Routine::Setup,
            Call::Increment { .. } => Routine::Increment,
            Call::Add { .. } => Routine::Add,
            Call::AddMany { .. } => Routine::AddMany,
            Call::AddOnce { .. } => Routine::AddOnce,
            Call::AddManyOnce { .. } => Routine::AddManyOnce,
            Call::ForgetWrites { .. } => Routine::ForgetWrites,
            Call::Reset { .. } => Routine::Reset,
            Call::Delete { .. } => Routine::Delete,
            Call::GetMany { .. } => Routine::Get,
            Call::Track { offset: None, .. } => Routine::Track,
            Call::Track { offset: Some(_), .. } => Routine::TrackAtOffset,
            Call::UtcOffset { .. } => Routine::UtcOffset,
            Call::AddAt { .. } | Call::FlushAdd { .. } => Routine::AddAt,
            Call::AddManyAt { .. } => Routine::AddManyAt,
            Call::GetPeriod { .. } => Routine::GetPeriod,
            Call::GetRange { .. } | Call::Series { .. } => Routine::GetRange,
            Call::ExpirePeriods => Routine::ExpirePeriods,
            Call::Bound { .. } => Routine::Bound,
            Call::Limit { .. } => Routine::Limit,
            Call::Room { .. } => Routine::Room,
            Call::Package => Routine::Package,
        }
    }

    /// The deltas of a batch, which its statement sends as one JSON object.
    pub(crate) fn batch(&self) -> Option<&'a Deltas> {
        match *self {
            Call::AddMany { deltas } | Call::AddManyOnce { deltas, .. } | Call::AddManyAt { deltas, .. } => {
                Some(deltas)
            }
            _ => None,
        }
    }

    /// Whether running the call again after a lost answer cannot count it
    /// twice: it carries a write id.
    pub(crate) fn carries_id(&self) -> bool {
        matches!(self, Call::AddOnce { .. } | Call::AddManyOnce { .. } | Call::AddManyAt { id: Some(_), .. })
    }
}

/// What a call answers, by the kind of call: nothing for a write, one
/// value per name for [`Call::GetMany`], one value for a read of a period,
/// a [`Series`] for [`Call::Series`], the package's line for
/// [`Call::Package`]. A caller takes the kind it asked for, and any other
/// is an [`CounterError::UnexpectedAnswer`], never an empty read.
#[derive(Debug)]
pub enum Answer {
    Done,
    Values(Vec<Option<i64>>),
    Value(Option<i64>),
    Series(Series),
    Room(Vec<Room>),
    Package(Option<String>),
    Drifts(Vec<Drift>),
}

/// One bound or limit of a counter and the room toward it, as
/// [`crate::Counters::room`] reads it (a row of `counter_room`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Room {
    /// What the room is toward.
    pub of: RoomOf,
    /// The bound's or the limit's value.
    pub bound: i64,
    /// The total, or what the period's current bucket counted.
    pub value: i64,
    /// How far a write may still move the value toward the bound: a write
    /// of at most this much fits.
    pub room: u64,
    /// When the current bucket ends and its whole limit comes back; `None`
    /// for a bound of the total.
    pub resets: Option<SystemTime>,
}

/// What a [`Room`] is toward.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoomOf {
    /// A bound of the total (`bound`).
    Total(Bound),
    /// The limit of each bucket of a period (`limit`).
    Limit(Period),
}

impl Room {
    /// The room of `row`, one of `counter_room`'s: `kind`, `period`,
    /// `bound`, `value`, `room`, `resets_at`; `None` for any other row.
    pub(crate) fn read(row: &[Option<String>]) -> Option<Room> {
        let [kind, period, bound, value, room, resets] = row else { return None };
        let of = match (kind.as_deref()?, period.as_deref()) {
            ("floor", None) => RoomOf::Total(Bound::Floor),
            ("ceiling", None) => RoomOf::Total(Bound::Ceiling),
            ("limit", Some(period)) => RoomOf::Limit(Period::from_name(period)?),
            _ => return None,
        };
        let resets = match resets.as_deref() {
            None => None,
            Some(moment) => Some(moment_of(moment)?),
        };
        Some(Room {
            of,
            bound: bound.as_deref()?.parse().ok()?,
            value: value.as_deref()?.parse().ok()?,
            room: room.as_deref()?.parse().ok()?,
            resets,
        })
    }
}

/// What a series read: the counter's total (`None`: no such counter), what
/// the range counted (`None`: the counter does not track the period), and
/// each bucket's count, in the order of the starts asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Series {
    pub(crate) total: Option<i64>,
    pub(crate) range: Option<i64>,
    pub(crate) buckets: Vec<Option<i64>>,
}

impl Answer {
    /// The values of a read of many counters.
    pub(crate) fn values(self) -> Result<Vec<Option<i64>>, CounterError> {
        match self {
            Answer::Values(values) => Ok(values),
            other => Err(other.unexpected("values")),
        }
    }

    /// The value of a read of one period's count.
    pub(crate) fn value(self) -> Result<Option<i64>, CounterError> {
        match self {
            Answer::Value(value) => Ok(value),
            other => Err(other.unexpected("a value")),
        }
    }

    /// The answer of a series.
    pub(crate) fn series(self) -> Result<Series, CounterError> {
        match self {
            Answer::Series(series) => Ok(series),
            other => Err(other.unexpected("a series")),
        }
    }

    /// The rows of a read of the room.
    pub(crate) fn room(self) -> Result<Vec<Room>, CounterError> {
        match self {
            Answer::Room(room) => Ok(room),
            other => Err(other.unexpected("the room")),
        }
    }

    fn unexpected(&self, wanted: &str) -> CounterError {
        CounterError::unexpected_answer(format!("{self:?} where the call reads {wanted}"), None)
    }
}

/// Adds `delta` to the sum `deltas` holds for `name`, refusing a sum past
/// BIGINT.
pub(crate) fn add_delta(deltas: &mut Deltas, name: &str, delta: i64) -> Result<(), CounterError> {
    match deltas.get_mut(name) {
        Some(sum) => {
            *sum = sum.checked_add(delta).ok_or_else(|| {
                CounterError::invalid_about(&format!("the deltas add up past a BIGINT{FOR_COUNTER}"), name)
            })?;
        }
        None => {
            deltas.insert(name.to_owned(), delta);
        }
    }
    Ok(())
}

/// What to reconcile: the query that counts each counter's source, and
/// what else to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reconcile<'a> {
    pub(crate) source: &'a str,
    pub(crate) set: Option<&'a str>,
    pub(crate) dry_run: bool,
    /// The first and last key of the source's range the query counts.
    pub(crate) keys: Option<(i64, i64)>,
}

impl<'a> Reconcile<'a> {
    /// Reconciles the counters `source` returns a row for: a query of no
    /// parameter whose rows are a counter's name and its source's count,
    /// a whole number (`SELECT CONCAT('post:', post_id), COUNT(*) FROM
    /// comments GROUP BY post_id`). Counters it returns no row for are
    /// left alone.
    pub fn query(source: &'a str) -> Self {
        Reconcile { source, set: None, dry_run: false, keys: None }
    }

    /// Names the set of counters the query counts, every counter whose
    /// name begins with `prefix`: one the query returns no row for counts
    /// 0 at its source, and is corrected to 0.
    pub fn set(self, prefix: &'a str) -> Self {
        Reconcile { set: Some(prefix), ..self }
    }

    /// Reads and reports every drift, and corrects none.
    pub fn dry_run(self) -> Self {
        Reconcile { dry_run: true, ..self }
    }

    /// Reconciles the counters of the source's keys `keys` alone, in a
    /// snapshot of their own: the query takes the range's first and last
    /// key as its two parameters, in that order (`... WHERE post_id
    /// BETWEEN ? AND ? GROUP BY post_id`). A range cannot name a set, whose
    /// members have no key: a query that counts every key of the range,
    /// zeros included, reads them from the parent table (`FROM posts LEFT
    /// JOIN comments ...`).
    pub fn keys(self, keys: RangeInclusive<i64>) -> Self {
        Reconcile { keys: Some((*keys.start(), *keys.end())), ..self }
    }

    /// The range of the source's keys this reconcile counts, if one.
    pub fn key_range(&self) -> Option<RangeInclusive<i64>> {
        self.keys.map(|(first, last)| first..=last)
    }

    /// This reconcile split into ranges of at most `batch` keys each, in
    /// the order of the keys, which together cover `keys`: each is run as
    /// a reconcile of its own, so that no snapshot spans a large source,
    /// and a run that stopped resumes at the range after the last it
    /// finished.
    pub fn ranges(self, keys: RangeInclusive<i64>, batch: NonZeroU64) -> impl Iterator<Item = Reconcile<'a>> {
        let (first, last) = (i128::from(*keys.start()), i128::from(*keys.end()));
        let batch = i128::from(batch.get());
        let count = if first > last { 0 } else { (last - first) / batch + 1 };
        (0..count).map(move |range| {
            let start = first + range * batch;
            let end = (start + batch - 1).min(last);
            // Both lie within the i64 range `keys` came from.
            let key = |key: i128| i64::try_from(key).unwrap_or(i64::MAX);
            self.keys(key(start)..=key(end))
        })
    }
}

/// What a reconcile found of one counter, and did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drift {
    pub name: String,
    /// What its source counted.
    pub source: i64,
    /// Its value in the same snapshot; `None`: no such counter.
    pub counted: Option<i64>,
    pub correction: Correction,
}

impl Drift {
    /// How far the counter was from its source: what the correction adds.
    pub fn drift(&self) -> Option<i64> {
        self.counted.and_then(|counted| self.source.checked_sub(counted))
    }
}

/// What a reconcile did to one counter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Correction {
    /// It agreed with its source: nothing to add.
    NoDrift,
    /// The drift was added.
    Added,
    /// A dry run: the drift was not added.
    DryRun,
    /// The correction was refused, and changed nothing: the counter's
    /// bound or a limit of its periods (a [`CounterError::PastBound`] or
    /// [`CounterError::PastLimit`], whose message this is). Never forced.
    Refused(String),
    /// No counter has the name: a reconcile creates none.
    NoCounter,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_is_its_whole_seconds_rounded_down() {
        use std::time::Duration;
        assert_eq!(seconds(UNIX_EPOCH + Duration::from_millis(1_500)), 1);
        assert_eq!(seconds(UNIX_EPOCH - Duration::from_millis(1_500)), -2);
        assert_eq!(seconds(UNIX_EPOCH - Duration::from_secs(2)), -2);
        for whole in [-86_400, -1, 0, 1, 1_764_000_000] {
            assert_eq!(seconds(time_of(whole)), whole);
        }
    }

    #[test]
    fn deltas_for_one_name_are_summed() {
        let mut deltas = Deltas::new();
        for (name, delta) in [("views", 2), ("likes", 1), ("views", -5)] {
            add_delta(&mut deltas, name, delta).unwrap();
        }
        assert_eq!(deltas, Deltas::from([("likes".to_owned(), 1), ("views".to_owned(), -3)]));
    }

    #[test]
    fn deltas_that_add_up_past_a_bigint_are_refused() {
        let mut deltas = Deltas::from([("n".to_owned(), i64::MAX)]);
        let error = add_delta(&mut deltas, "n", 1).unwrap_err();
        assert!(
            matches!(&error, CounterError::InvalidArgument { message, .. } if message.ends_with("for counter: 'n'")),
            "{error:?}"
        );
    }
}
