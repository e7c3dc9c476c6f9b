//! The plain statements of counting per period: what `counter_track`, the
//! counting triggers and the period reads do, where no routine or trigger
//! runs. Times go in and out as whole seconds since 1970-01-01 UTC
//! ([`EPOCH`] plus an interval), whatever the session's time zone; a
//! write's moment is the server's clock less its age, or a time given.

use super::{PlainSql, PlainStatement};
use crate::periods::{EXPIRE_BATCH, Period};

/// The start of the seconds the statements count from, as a DATETIME
/// literal: `TIMESTAMP'...'` is a DATETIME in MySQL and MariaDB, which no
/// session time zone shifts.
pub const EPOCH: &str = "TIMESTAMP'1970-01-01 00:00:00'";

impl PlainSql {
    /// The periods a counter tracks, what each keeps and where its buckets
    /// start.
    pub fn periods(&self) -> PlainStatement {
        PlainStatement {
            purpose: "the periods the counter tracks, one row each: the period's number (1 minute, 2 hour, \
                      3 day, 4 month), how many buckets it keeps (NULL: all), where its buckets start in \
                      minutes east of UTC (the plain mode writes a counter only while every offset is 0), and \
                      its limit per bucket (NULL: none; a write counts in a limited period through lock_quota); \
                      no row: none",
            sql: format!(
                "SELECT CAST(`period` + 0 AS SIGNED), CAST(`keep` AS SIGNED), CAST(`utc_offset` AS SIGNED), \
                 CAST(`highest` AS SIGNED) FROM `{}` WHERE `counter_name` = ?",
                self.periods_table
            ),
            params: &["name"],
        }
    }

    /// The server's clock, which decides which bucket is current, less an
    /// age in microseconds (a coalesced delta's since its hand-over).
    pub fn server_now(&self) -> PlainStatement {
        PlainStatement {
            purpose: "the server's clock less an age, in seconds since 1970-01-01 UTC: for a late write, to \
                      refuse a moment later than now and to skip the periods that keep no bucket so old; for a \
                      write with a limit, its one moment",
            sql: format!("SELECT TIMESTAMPDIFF(SECOND, {EPOCH}, UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND)"),
            params: &["age"],
        }
    }

    /// Adds a write's delta to the bucket of each of `periods` that holds
    /// its moment, on the slot it went to: in the write's transaction,
    /// after its slot's UPDATE.
    ///
    /// Every column is named, `highest` (a limited row's share, which the
    /// plain mode leaves alone) as NULL: a Spider head (MariaDB 10.11) sent
    /// this multi-row INSERT to its data servers as one whose values did
    /// not match its columns (1136) when a column went unnamed.
    pub fn add_to_buckets(&self, periods: &[Period]) -> PlainStatement {
        let moment =
            format!("COALESCE({EPOCH} + INTERVAL ? SECOND, UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND)");
        let rows: Vec<String> = periods
            .iter()
            .map(|period| {
                format!("(?, '{period}', DATE_FORMAT({moment}, '{}'), ?, ?, NULL)", period.sql_start_format())
            })
            .collect();
        PlainStatement {
            purpose: "after the slot's UPDATE, in the same transaction: adds delta to the bucket of each tracked \
                      period without a limit (one row each) that holds the write's moment, on the slot written",
            sql: format!(
                "INSERT INTO `{}` (`counter_name`, `period`, `bucket_start`, `counter_id`, `counter`, `highest`) VALUES {} \
                 ON DUPLICATE KEY UPDATE `counter` = `counter` + ?",
                self.buckets_table,
                rows.join(", ")
            ),
            params: &[
                "for each period: name, the moment in seconds since 1970 UTC (NULL: the server's now), how \
                 long before the server's now, in microseconds, when the moment is NULL (0 for a write made \
                 now), the slot written, delta",
                "then delta",
            ],
        }
    }

    /// Starts counting a counter per a period, or changes what it keeps.
    pub fn track(&self) -> PlainStatement {
        PlainStatement {
            purpose: "starts counting per a period (after drop_buckets of any left), or changes what it keeps",
            sql: format!(
                "INSERT INTO `{}` (`counter_name`, `period`, `keep`) VALUES (?, ?, ?) \
                 ON DUPLICATE KEY UPDATE `keep` = ?",
                self.periods_table
            ),
            params: &["name", "period ('minute', 'hour', 'day' or 'month')", "keep (NULL: all)", "keep"],
        }
    }

    /// Sends the routines' writes of a counter that now tracks a period the
    /// way that looks at its periods: `counter_setup` marks the slots of a
    /// counter that tracks none `untracked`, and its writes then skip the
    /// periods' table.
    pub fn mark_tracked(&self) -> PlainStatement {
        PlainStatement {
            purpose: "after track: the routines' writes of the counter look at its periods (they skip them while \
                      its slots are marked untracked, as counter_setup marks a counter that tracks none)",
            sql: format!(
                "UPDATE `{}` SET `untracked` = FALSE WHERE `counter_name` = ? AND `untracked`",
                self.table
            ),
            params: &["name"],
        }
    }

    /// Stops counting a deleted counter per any period, as `counter_delete`
    /// does, so that a counter set up again under its name tracks none.
    pub fn untrack_all(&self) -> PlainStatement {
        PlainStatement {
            purpose: "with delete, in its transaction: stops counting per every period (then drop_buckets of \
                      all its buckets of each)",
            sql: format!("DELETE FROM `{}` WHERE `counter_name` = ?", self.periods_table),
            params: &["name"],
        }
    }

    /// Stops counting a counter per a period.
    pub fn untrack(&self) -> PlainStatement {
        PlainStatement {
            purpose: "stops counting per a period (then drop_buckets of all its buckets)",
            sql: format!("DELETE FROM `{}` WHERE `counter_name` = ? AND `period` = ?", self.periods_table),
            params: &["name", "period"],
        }
    }

    /// The starts of a counter's oldest bucket rows of a period before a
    /// time, to drop them a short statement at a time.
    pub fn oldest_buckets(&self) -> PlainStatement {
        PlainStatement {
            purpose: "the starts of the oldest bucket rows of a period before a time, oldest first: \
                      drop_buckets up to the last start, or up to the first when they are all one bucket's",
            sql: format!(
                "SELECT TIMESTAMPDIFF(SECOND, {EPOCH}, `bucket_start`) FROM `{}` \
                 WHERE `counter_name` = ? AND `period` = ? AND `bucket_start` < {EPOCH} + INTERVAL ? SECOND \
                 ORDER BY `bucket_start`, `counter_id` LIMIT {EXPIRE_BATCH}",
                self.buckets_table
            ),
            params: &["name", "period", "before, in seconds since 1970 UTC"],
        }
    }

    /// Drops a counter's buckets of a period up to a start.
    pub fn drop_buckets(&self) -> PlainStatement {
        PlainStatement {
            purpose: "drops the buckets of a period that start at or before a time read by oldest_buckets",
            sql: format!(
                "DELETE FROM `{}` WHERE `counter_name` = ? AND `period` = ? \
                 AND `bucket_start` <= {EPOCH} + INTERVAL ? SECOND",
                self.buckets_table
            ),
            params: &["name", "period", "the last start, in seconds since 1970 UTC"],
        }
    }

    /// What a counter counted in the buckets of a period that start in a range.
    pub fn get_range(&self) -> PlainStatement {
        PlainStatement {
            purpose: "what the buckets of a tracked period that start in [from, to) counted; a bucket is the \
                      range of its start to the next",
            sql: format!(
                "SELECT CAST(COALESCE(SUM(`counter`), 0) AS SIGNED) FROM `{}` \
                 WHERE `counter_name` = ? AND `period` = ? \
                 AND `bucket_start` >= {EPOCH} + INTERVAL ? SECOND AND `bucket_start` < {EPOCH} + INTERVAL ? SECOND",
                self.buckets_table
            ),
            params: &["name", "period", "from, in seconds since 1970 UTC", "to"],
        }
    }

    /// What each bucket of a period that starts in a range counted.
    pub fn series(&self) -> PlainStatement {
        PlainStatement {
            purpose: "each bucket of a tracked period that starts in [from, to) and counted something: its \
                      start in seconds since 1970 UTC and its value; the others counted 0",
            sql: format!(
                "SELECT TIMESTAMPDIFF(SECOND, {EPOCH}, `bucket_start`), CAST(SUM(`counter`) AS SIGNED) FROM `{}` \
                 WHERE `counter_name` = ? AND `period` = ? \
                 AND `bucket_start` >= {EPOCH} + INTERVAL ? SECOND AND `bucket_start` < {EPOCH} + INTERVAL ? SECOND \
                 GROUP BY `bucket_start`",
                self.buckets_table
            ),
            params: &["name", "period", "from, in seconds since 1970 UTC", "to"],
        }
    }

    /// Drops every counter's buckets of `period` beyond what it keeps. The
    /// interval is written `- keep + 1`, not `- (keep - 1)`: TiDB parses
    /// `INTERVAL (` as its INTERVAL() function (1582).
    pub fn expire(&self, period: Period) -> PlainStatement {
        PlainStatement {
            purpose: "for each period in turn: drops every counter's buckets beyond the last `keep` (the current \
                      one included); call it regularly, so that each run deletes little",
            sql: format!(
                "DELETE `bucket` FROM `{}` AS `bucket` JOIN `{}` AS `tracked` \
                 ON `tracked`.`counter_name` = `bucket`.`counter_name` AND `tracked`.`period` = `bucket`.`period` \
                 WHERE `bucket`.`period` = '{period}' AND `tracked`.`keep` IS NOT NULL \
                 AND `bucket`.`bucket_start` < DATE_FORMAT(UTC_TIMESTAMP(), '{}') - INTERVAL `tracked`.`keep` {unit} \
                 + INTERVAL 1 {unit}",
                self.buckets_table,
                self.periods_table,
                period.sql_start_format(),
                unit = period.sql_unit()
            ),
            params: &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::PackageOptions;

    #[test]
    fn a_bucket_row_per_period_each_of_five_placeholders() {
        let sql = PlainSql::new(&PackageOptions::default())
            .unwrap()
            .add_to_buckets(&[Period::Hour, Period::Day])
            .sql;
        assert_eq!(sql.matches('?').count(), 2 * 5 + 1);
        assert!(
            sql.contains("'hour', DATE_FORMAT(") && sql.contains("'%Y-%m-%d 00:00:00'), ?, ?, NULL)"),
            "{sql}"
        );
    }
}
