//! Counting per period: a counter can track minutes, hours, days and
//! months, each as buckets that start at boundaries of UTC, or of a fixed
//! offset from it ([`UtcOffset`]): a day at +08:00 starts at 16:00 UTC, the
//! midnight of Shanghai. A bucket's start is kept as a UTC time. A write that
//! changes the counter's total adds the same delta to the bucket of each
//! tracked period that holds the write's moment. The routines compute a
//! bucket's start in SQL from the formats here; the client computes it in
//! Rust (for the plain mode's series), from seconds since 1970-01-01 UTC.

/// A period a counter can track.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Period {
    Minute,
    Hour,
    Day,
    Month,
}

/// The most buckets one series reads, so that a call's cost is bounded: a
/// little over 11 years of days, 170 days of hours, or 68 hours of minutes.
pub const SERIES_LIMIT: u32 = 4_096;

/// The most bucket rows `counter_expire_periods` deletes in one statement,
/// so that each of its transactions stays short.
pub const EXPIRE_BATCH: u32 = 1_000;

/// The years a moment passed to the routines may fall in: `DATETIME`'s
/// documented range (from 1000), less its last year, so that the start of
/// the bucket after any moment's is a `DATETIME` too.
pub const FIRST_YEAR: i32 = 1000;
pub const LAST_YEAR: i32 = 9998;

/// The last second a `DATETIME` holds, 9999-12-31 23:59:59 UTC, in seconds
/// since 1970: a time before which every bucket starts.
pub const LAST_SECOND: i64 = 253_402_300_799;

/// How far past the server's clock a point read's moment may be: clients
/// that pass their own now run a little ahead of the server, while a
/// session's time zone mistaken for UTC is an hour off or more, and would
/// read an empty bucket of the future.
pub const READ_AHEAD_SECONDS: i64 = 300;

const SECONDS_PER_DAY: i64 = 86_400;

/// Where a tracked period's buckets start: a fixed offset from UTC, in
/// whole minutes east of it, from UTC-12:00 to UTC+14:00, the offsets time
/// zones use. A zone with daylight saving has two, and no one of them
/// counts its days: the package counts in fixed offsets only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct UtcOffset(i16);

impl UtcOffset {
    /// UTC itself, where every period starts unless told otherwise.
    pub const UTC: UtcOffset = UtcOffset(0);
    /// The furthest offsets west and east, in minutes.
    pub const WEST_MOST: i16 = -720;
    pub const EAST_MOST: i16 = 840;

    /// The offset `minutes` east of UTC (negative: west), or `None` past
    /// [`UtcOffset::WEST_MOST`] and [`UtcOffset::EAST_MOST`].
    pub fn minutes(minutes: i64) -> Option<Self> {
        let minutes = i16::try_from(minutes).ok()?;
        (Self::WEST_MOST..=Self::EAST_MOST).contains(&minutes).then_some(UtcOffset(minutes))
    }

    /// Its minutes east of UTC.
    pub fn as_minutes(self) -> i16 {
        self.0
    }

    fn seconds(self) -> i64 {
        i64::from(self.0) * 60
    }
}

impl std::fmt::Display for UtcOffset {
    /// As ISO 8601 writes it: `+08:00`, `+05:45`, `-03:30`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sign = if self.0 < 0 { '-' } else { '+' };
        let minutes = self.0.unsigned_abs();
        write!(f, "{sign}{:02}:{:02}", minutes / 60, minutes % 60)
    }
}

impl Period {
    /// Every period, from the shortest.
    pub const ALL: [Period; 4] = [Period::Minute, Period::Hour, Period::Day, Period::Month];

    /// The period's name, as the routines take it and the tables hold it.
    pub fn name(self) -> &'static str {
        match self {
            Period::Minute => "minute",
            Period::Hour => "hour",
            Period::Day => "day",
            Period::Month => "month",
        }
    }

    /// The period named `name`, spelled as [`Period::name`] spells it.
    pub fn from_name(name: &str) -> Option<Self> {
        Period::ALL.into_iter().find(|period| period.name() == name)
    }

    /// Its unit in SQL's `INTERVAL n UNIT`.
    pub fn sql_unit(self) -> &'static str {
        match self {
            Period::Minute => "MINUTE",
            Period::Hour => "HOUR",
            Period::Day => "DAY",
            Period::Month => "MONTH",
        }
    }

    /// The `DATE_FORMAT` pattern that turns a time into the start of its
    /// bucket.
    pub fn sql_start_format(self) -> &'static str {
        match self {
            Period::Minute => "%Y-%m-%d %H:%i:00",
            Period::Hour => "%Y-%m-%d %H:00:00",
            Period::Day => "%Y-%m-%d 00:00:00",
            Period::Month => "%Y-%m-01 00:00:00",
        }
    }

    /// The start of the bucket that holds `seconds` since 1970-01-01 UTC.
    pub fn start(self, seconds: i64) -> i64 {
        let floor = |unit: i64| seconds.div_euclid(unit) * unit;
        match self {
            Period::Minute => floor(60),
            Period::Hour => floor(3_600),
            Period::Day => floor(SECONDS_PER_DAY),
            Period::Month => {
                let (year, month, _) = civil_from_days(seconds.div_euclid(SECONDS_PER_DAY));
                days_from_civil(year, month, 1) * SECONDS_PER_DAY
            }
        }
    }

    /// The start of the bucket after the one that starts at `start`.
    pub fn next(self, start: i64) -> i64 {
        match self {
            Period::Minute => start + 60,
            Period::Hour => start + 3_600,
            Period::Day => start + SECONDS_PER_DAY,
            Period::Month => {
                let (year, month, _) = civil_from_days(start.div_euclid(SECONDS_PER_DAY));
                let (year, month) = if month == 12 { (year + 1, 1) } else { (year, month + 1) };
                days_from_civil(year, month, 1) * SECONDS_PER_DAY
            }
        }
    }

    /// The start of the bucket `buckets` before the one that starts at
    /// `start`.
    pub fn back(self, start: i64, buckets: u32) -> i64 {
        let buckets = i64::from(buckets);
        match self {
            Period::Minute => start - 60 * buckets,
            Period::Hour => start - 3_600 * buckets,
            Period::Day => start - SECONDS_PER_DAY * buckets,
            Period::Month => {
                let (year, month, _) = civil_from_days(start.div_euclid(SECONDS_PER_DAY));
                let months = year * 12 + i64::from(month) - 1 - buckets;
                days_from_civil(months.div_euclid(12), (months.rem_euclid(12) + 1) as u32, 1)
                    * SECONDS_PER_DAY
            }
        }
    }

    /// The starts of the buckets that start in `[from, to)`, in order; `None`
    /// when there are more than [`SERIES_LIMIT`].
    pub fn starts(self, from: i64, to: i64) -> Option<Vec<i64>> {
        self.starts_at(UtcOffset::UTC, from, to)
    }

    /// The starts of the buckets that start in `[from, to)`, for buckets
    /// that start at `offset`, as [`Period::starts`].
    pub fn starts_at(self, offset: UtcOffset, from: i64, to: i64) -> Option<Vec<i64>> {
        let mut start = self.start_at(offset, from);
        if start < from {
            start = self.next_at(offset, start);
        }
        let mut starts = Vec::new();
        while start < to {
            if starts.len() == SERIES_LIMIT as usize {
                return None;
            }
            starts.push(start);
            start = self.next_at(offset, start);
        }
        Some(starts)
    }

    /// The start of the bucket that holds `seconds`, for buckets that start
    /// at `offset`.
    pub fn start_at(self, offset: UtcOffset, seconds: i64) -> i64 {
        self.start(seconds + offset.seconds()) - offset.seconds()
    }

    /// The start of the bucket after the one that starts at `start`, for
    /// buckets that start at `offset`.
    pub fn next_at(self, offset: UtcOffset, start: i64) -> i64 {
        self.next(start + offset.seconds()) - offset.seconds()
    }
}

impl std::fmt::Display for Period {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// `seconds` since 1970-01-01 UTC as the servers write a `DATETIME(6)`:
/// `2026-11-25 12:00:00.000000`.
pub fn utc_text(seconds: i64) -> String {
    let (year, month, day) = civil_from_days(seconds.div_euclid(SECONDS_PER_DAY));
    let second = seconds.rem_euclid(SECONDS_PER_DAY);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}.000000",
        second / 3_600,
        second / 60 % 60,
        second % 60
    )
}

/// Seconds since 1970-01-01 UTC of a time the servers wrote as
/// `YYYY-MM-DD hh:mm:ss` (a `DATETIME`), or `None` for any other text.
pub fn utc_seconds(text: &str) -> Option<i64> {
    let (date, time) = text.split_once(' ')?;
    let mut date = date.splitn(3, '-').map(str::parse::<u32>);
    let (year, month, day) = (date.next()?.ok()?, date.next()?.ok()?, date.next()?.ok()?);
    let mut time = time.splitn(3, ':').map(str::parse::<i64>);
    let (hour, minute, second) = (time.next()?.ok()?, time.next()?.ok()?, time.next()?.ok()?);
    let valid =
        (1..=12).contains(&month) && (1..=31).contains(&day) && hour < 24 && minute < 60 && second < 60;
    valid.then(|| {
        days_from_civil(i64::from(year), month, day) * SECONDS_PER_DAY + hour * 3_600 + minute * 60 + second
    })
}

/// Days since 1970-01-01 of a date of the proleptic Gregorian calendar
/// (Howard Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_from_march = (i64::from(month) + 9) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The date of `days` since 1970-01-01: year, month from 1, day from 1
/// (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let days = days + 719_468;
    let era = days.div_euclid(146_097);
    let day_of_era = days - era * 146_097;
    let year_of_era = (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * month_from_march + 2) / 5 + 1) as u32;
    let month = if month_from_march < 10 { month_from_march + 3 } else { month_from_march - 9 } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seconds since 1970 of a UTC time, as the servers' `TIMESTAMPDIFF`
    /// from 1970-01-01 gives it.
    fn at(year: i64, month: u32, day: u32, hour: i64, minute: i64, second: i64) -> i64 {
        days_from_civil(year, month, day) * SECONDS_PER_DAY + hour * 3_600 + minute * 60 + second
    }

    #[test]
    fn a_servers_datetime_reads_back_as_the_seconds_it_was_written_from() {
        for seconds in [0, 951_782_400, 1_772_236_800, at(2026, 2, 28, 23, 59, 59)] {
            let text = utc_text(seconds);
            assert_eq!(utc_seconds(&text[..19]), Some(seconds), "{text}");
        }
        for text in
            ["2026-13-01 00:00:00", "2026-01-01 24:00:00", "2026-01-01", "2026-01-01 00:00:00.5", "soon"]
        {
            assert_eq!(utc_seconds(text), None, "{text}");
        }
    }

    #[test]
    fn dates_convert_both_ways_across_four_centuries() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(days_from_civil(1969, 12, 31), -1);
        for days in -146_097..146_097 {
            let (year, month, day) = civil_from_days(days);
            assert_eq!(days_from_civil(year, month, day), days, "{year}-{month}-{day}");
        }
    }

    #[test]
    fn a_bucket_starts_at_the_utc_boundary_before_its_moment() {
        let moment = at(2024, 2, 29, 23, 59, 59);
        assert_eq!(Period::Minute.start(moment), at(2024, 2, 29, 23, 59, 0));
        assert_eq!(Period::Hour.start(moment), at(2024, 2, 29, 23, 0, 0));
        assert_eq!(Period::Day.start(moment), at(2024, 2, 29, 0, 0, 0));
        assert_eq!(Period::Month.start(moment), at(2024, 2, 1, 0, 0, 0));
        assert_eq!(Period::Month.start(at(2024, 3, 1, 0, 0, 0)), at(2024, 3, 1, 0, 0, 0));
        assert_eq!(Period::Day.start(-1), -SECONDS_PER_DAY, "before 1970 too");
    }

    #[test]
    fn the_next_month_follows_the_calendar() {
        assert_eq!(Period::Month.next(at(2024, 1, 1, 0, 0, 0)), at(2024, 2, 1, 0, 0, 0));
        assert_eq!(Period::Month.next(at(2024, 2, 1, 0, 0, 0)), at(2024, 3, 1, 0, 0, 0));
        assert_eq!(Period::Month.next(at(2024, 12, 1, 0, 0, 0)), at(2025, 1, 1, 0, 0, 0));
    }

    #[test]
    fn a_bucket_some_buckets_back_follows_the_calendar() {
        assert_eq!(Period::Month.back(at(2026, 3, 1, 0, 0, 0), 3), at(2025, 12, 1, 0, 0, 0));
        assert_eq!(Period::Month.back(at(2026, 3, 1, 0, 0, 0), 0), at(2026, 3, 1, 0, 0, 0));
        assert_eq!(Period::Day.back(at(2026, 3, 1, 0, 0, 0), 1), at(2026, 2, 28, 0, 0, 0));
        assert_eq!(Period::Hour.back(at(2026, 3, 1, 0, 0, 0), 25), at(2026, 2, 27, 23, 0, 0));
    }

    #[test]
    fn a_time_reads_as_the_servers_write_it() {
        assert_eq!(utc_text(at(2026, 11, 25, 13, 16, 28)), "2026-11-25 13:16:28.000000");
        assert_eq!(utc_text(-1), "1969-12-31 23:59:59.000000");
        assert_eq!(utc_text(LAST_SECOND), "9999-12-31 23:59:59.000000");
    }

    #[test]
    fn a_series_holds_the_buckets_that_start_in_its_range() {
        let from = at(2026, 11, 24, 10, 30, 0);
        let to = at(2026, 11, 24, 13, 0, 0);
        assert_eq!(
            Period::Hour.starts(from, to),
            Some(vec![at(2026, 11, 24, 11, 0, 0), at(2026, 11, 24, 12, 0, 0)])
        );
        assert_eq!(Period::Day.starts(to, to), Some(vec![]));
        let year = Period::Month.starts(at(2026, 1, 1, 0, 0, 0), at(2027, 1, 1, 0, 0, 0)).unwrap();
        assert_eq!(year.len(), 12);
        let limit = i64::from(SERIES_LIMIT);
        assert_eq!(
            Period::Minute.starts(0, limit * 60).map(|starts| starts.len()),
            Some(SERIES_LIMIT as usize)
        );
        assert_eq!(Period::Minute.starts(0, limit * 60 + 1), None);
    }

    #[test]
    fn buckets_at_an_offset_start_at_its_midnight_in_utc() {
        let shanghai = UtcOffset::minutes(480).unwrap();
        let kathmandu = UtcOffset::minutes(345).unwrap();
        let moment = at(2026, 11, 27, 15, 59, 59);
        assert_eq!(Period::Day.start_at(shanghai, moment), at(2026, 11, 26, 16, 0, 0));
        assert_eq!(Period::Day.start_at(shanghai, moment + 1), at(2026, 11, 27, 16, 0, 0));
        assert_eq!(Period::Hour.start_at(kathmandu, moment), at(2026, 11, 27, 15, 15, 0));
        assert_eq!(Period::Day.next_at(shanghai, at(2026, 11, 26, 16, 0, 0)), at(2026, 11, 27, 16, 0, 0));
        assert_eq!(
            Period::Month.next_at(shanghai, at(2026, 1, 31, 16, 0, 0)),
            at(2026, 2, 28, 16, 0, 0),
            "February at +08:00 ends at March's midnight there"
        );
        assert_eq!(
            Period::Month.starts_at(shanghai, at(2026, 2, 1, 0, 0, 0), at(2026, 4, 1, 0, 0, 0)),
            Some(vec![at(2026, 2, 28, 16, 0, 0), at(2026, 3, 31, 16, 0, 0)])
        );
        let west = UtcOffset::minutes(-300).unwrap();
        assert_eq!(Period::Day.start_at(west, at(2026, 11, 27, 4, 0, 0)), at(2026, 11, 26, 5, 0, 0));
        assert_eq!(Period::Day.start_at(UtcOffset::UTC, moment), Period::Day.start(moment));
    }

    #[test]
    fn an_offset_is_whole_minutes_a_time_zone_may_be_from_utc() {
        assert_eq!(UtcOffset::minutes(480).map(|offset| offset.to_string()), Some("+08:00".to_owned()));
        assert_eq!(UtcOffset::minutes(345).map(|offset| offset.to_string()), Some("+05:45".to_owned()));
        assert_eq!(UtcOffset::minutes(-210).map(|offset| offset.to_string()), Some("-03:30".to_owned()));
        assert_eq!(UtcOffset::minutes(-720).map(UtcOffset::as_minutes), Some(-720));
        assert_eq!(UtcOffset::minutes(840).map(UtcOffset::as_minutes), Some(840));
        for minutes in [-721, 841, 1_440, i64::from(i16::MAX) + 1] {
            assert_eq!(UtcOffset::minutes(minutes), None, "{minutes}");
        }
    }

    #[test]
    fn periods_are_named_as_sql_takes_them() {
        for period in Period::ALL {
            assert_eq!(Period::from_name(period.name()), Some(period));
        }
        assert_eq!(Period::from_name("Hour"), None);
    }
}
