//! What counting per period takes: the periods, their limits and ranges.

use slotted_counters_core::options::BUCKET_END;
use slotted_counters_core::periods::{self, Period};

use super::slots::SlotNumbers;

/// The periods a counter can track and the ranges their arguments take.
pub(in crate::render) struct Periods {
    pub(in crate::render) all: [Period; 4],
    /// `keep` as the counting triggers read a period that keeps every
    /// bucket: the column's largest value, which no keep check needs.
    pub(in crate::render) keep_all: u32,
    /// The offsets from UTC, in minutes, a period's buckets may start at.
    pub(in crate::render) west_most: i16,
    pub(in crate::render) east_most: i16,
    /// How far past now, in seconds, a point read's moment may be.
    pub(in crate::render) read_ahead: i64,
    /// The years a moment passed to the routines may fall in.
    pub(in crate::render) first_year: i32,
    pub(in crate::render) last_year: i32,
    /// The most buckets a series reads, and the numbers 1 to it.
    pub(in crate::render) series_limit: u32,
    pub(in crate::render) series_numbers: SlotNumbers,
    /// How many bucket rows a statement that drops buckets deletes at most.
    pub(in crate::render) expire_batch: u32,
    /// The largest limit per period: what a bucket, a BIGINT, may count.
    pub(in crate::render) largest_limit: i64,
    /// The slot number of a limited bucket's end (see [`BUCKET_END`]).
    pub(in crate::render) bucket_end: u32,
}

impl Periods {
    pub(super) fn new() -> Self {
        Periods {
            all: Period::ALL,
            keep_all: u32::MAX,
            west_most: periods::UtcOffset::WEST_MOST,
            east_most: periods::UtcOffset::EAST_MOST,
            read_ahead: periods::READ_AHEAD_SECONDS,
            first_year: periods::FIRST_YEAR,
            last_year: periods::LAST_YEAR,
            series_limit: periods::SERIES_LIMIT,
            series_numbers: SlotNumbers::up_to(periods::SERIES_LIMIT),
            expire_batch: periods::EXPIRE_BATCH,
            largest_limit: i64::MAX,
            bucket_end: BUCKET_END,
        }
    }
}
