//! Counting per period: through the routines as any client calls them,
//! through both Rust clients in both modes, and coalesced deltas counted
//! at their hand-over. The tests set the server's clock of a session
//! (`SET TIMESTAMP`) in a time zone five hours from UTC, so that a write
//! counted in local time would land five hours off.

mod clients;
mod keeping;
mod offsets;
mod quotas;
mod routines;

use std::collections::BTreeMap;

use mysql::PooledConn;
use mysql::prelude::Queryable;

use crate::support::{self, Database};

/// A connection whose clock reads `at` (UTC, `YYYY-MM-DD hh:mm:ss[.ffffff]`)
/// until set again, in a time zone five hours east of UTC: a routine that
/// took local time for UTC would put every write five hours off.
fn at(conn: &mut impl Queryable, at: &str) {
    // A DECIMAL of the seconds: a division would round to its 4 digits
    // (div_precision_increment), and a DOUBLE lose the last microseconds.
    conn.exec_drop(
        "SET time_zone = '+05:00', TIMESTAMP = CAST(CONCAT(TIMESTAMPDIFF(SECOND, TIMESTAMP'1970-01-01 00:00:00', ?), \
         '.', LPAD(MICROSECOND(?), 6, '0')) AS DECIMAL(20, 6))",
        (at, at),
    )
    .unwrap();
}

/// Every bucket row of counter `name`: (period, start, slot) to value.
fn bucket_rows(conn: &mut PooledConn, name: &str) -> BTreeMap<(String, String, u32), i64> {
    conn.exec_map(
        "SELECT CAST(period AS CHAR), CAST(bucket_start AS CHAR), counter_id, counter \
         FROM counter_buckets WHERE counter_name = ?",
        (name,),
        |(period, start, slot, value): (String, String, u32, i64)| ((period, start, slot), value),
    )
    .unwrap()
    .into_iter()
    .collect()
}

/// Each bucket of counter `name`: (period, start) to value, summed over its
/// slots.
fn buckets(conn: &mut PooledConn, name: &str) -> BTreeMap<(String, String), i64> {
    let mut buckets = BTreeMap::new();
    for ((period, start, _), value) in bucket_rows(conn, name) {
        *buckets.entry((period, start)).or_insert(0) += value;
    }
    buckets
}

fn bucket(period: &str, start: &str, value: i64) -> ((String, String), i64) {
    ((period.to_owned(), start.to_owned()), value)
}

/// A counter `name` of `slots` slots, tracking `periods` (period, keep).
fn tracked(conn: &mut PooledConn, name: &str, slots: u32, periods: &[(&str, Option<u32>)]) {
    conn.exec_drop("CALL counter_setup(?, 'd', ?, NULL)", (name, slots)).unwrap();
    for (period, keep) in periods {
        conn.exec_drop("CALL counter_track(?, ?, ?)", (name, period, keep)).unwrap();
    }
}

/// What counter `name`'s bucket of `period` that holds `at` counted.
fn period(conn: &mut PooledConn, name: &str, period: &str, at: &str) -> Option<i64> {
    conn.exec_first("SELECT counter_get_period(?, ?, ?)", (name, period, at)).unwrap().flatten()
}

fn with_package() -> Database {
    support::with_package(&slotted_counters::PackageOptions::default())
}
