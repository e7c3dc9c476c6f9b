//! The plain statements of limits per period: what `counter_limit`,
//! `counter_add_within_limit` and `counter_room` do, where no routine
//! runs. A write of a limited period takes the routines' slow way every
//! time, in the write's transaction and in their lock order (the slot,
//! then the bucket's end, the quota's lock, then every row of the bucket),
//! so that plain writers and the routines' keep one limit together. Starts
//! are whole seconds since [`EPOCH`], at UTC: the plain mode counts at UTC
//! only.

use super::{EPOCH, PlainSql, PlainStatement};
use crate::options::BUCKET_END;

impl PlainSql {
    /// Takes the quota's lock of a limited bucket: its end row, a row of
    /// no slot that counts 0.
    pub fn lock_quota(&self) -> PlainStatement {
        PlainStatement {
            purpose: "in the write's transaction, after its slot's UPDATE, for each limited period in the order \
                      minute, hour, day, month: takes the quota's lock, the bucket's end row (a row of no slot \
                      that counts 0)",
            sql: format!(
                "INSERT INTO `{}` (`counter_name`, `period`, `bucket_start`, `counter_id`, `counter`, `highest`) \
                 VALUES (?, ?, {EPOCH} + INTERVAL ? SECOND, {BUCKET_END}, 0, NULL) \
                 ON DUPLICATE KEY UPDATE `counter` = `counter`",
                self.buckets_table
            ),
            params: &["name", "period", "the bucket's start, in seconds since 1970 UTC"],
        }
    }

    /// Reads a period's limit as it is now: a change of it waits for the
    /// write's locks, or this read for the change.
    pub fn read_limit(&self) -> PlainStatement {
        PlainStatement {
            purpose: "after lock_quota: the period's limit as it is now (NULL: removed meanwhile, and the write \
                      counts without one)",
            sql: format!(
                "SELECT CAST(`highest` AS SIGNED) FROM `{}` WHERE `counter_name` = ? AND `period` = ? \
                 LOCK IN SHARE MODE",
                self.periods_table
            ),
            params: &["name", "period"],
        }
    }

    /// [`Self::read_limit`] on an engine without share locks (TiDB refuses
    /// them with 1235): the row locked exclusively. Such an engine runs no
    /// routine, whose triggers read the limit share-locked, so no writer
    /// waits for it but another of the same period.
    pub fn read_limit_exclusively(&self) -> PlainStatement {
        PlainStatement {
            purpose: "read_limit where the engine refuses LOCK IN SHARE MODE with 1235 (TiDB): the same read, \
                      locked exclusively",
            sql: format!(
                "SELECT CAST(`highest` AS SIGNED) FROM `{}` WHERE `counter_name` = ? AND `period` = ? FOR UPDATE",
                self.periods_table
            ),
            params: &["name", "period"],
        }
    }

    /// Locks every row of a limited bucket, and reads what they counted.
    pub fn lock_bucket(&self) -> PlainStatement {
        PlainStatement {
            purpose: "after read_limit: locks every slot's row of the bucket; what they counted, how many there \
                      are, whether the slot written has one (1) or not (0), and whether that row has room for \
                      delta in its share of the limit (1) or not (0). A write with a positive delta that would \
                      take what they counted past the limit is refused, and the transaction rolled back",
            sql: format!(
                "SELECT CAST(COALESCE(SUM(`counter`), 0) AS SIGNED), COUNT(*), \
                 CAST(COALESCE(SUM(`counter_id` = ?), 0) AS SIGNED), \
                 CAST(COALESCE(SUM(`counter_id` = ? AND CAST(`counter` AS DECIMAL(20, 0)) + ? <= `highest`), 0) AS SIGNED) \
                 FROM `{}` \
                 WHERE `counter_name` = ? AND `period` = ? AND `bucket_start` = {EPOCH} + INTERVAL ? SECOND \
                 AND `counter_id` < {BUCKET_END} FOR UPDATE",
                self.buckets_table
            ),
            params: &[
                "the slot written",
                "the slot written",
                "delta",
                "name",
                "period",
                "the bucket's start",
            ],
        }
    }

    /// Adds a write's delta to its slot's row of a limited bucket.
    pub fn add_to_limited_bucket(&self) -> PlainStatement {
        PlainStatement {
            purpose: "after lock_bucket found room: adds delta to the slot's row of the bucket",
            sql: format!(
                "INSERT INTO `{}` (`counter_name`, `period`, `bucket_start`, `counter_id`, `counter`, `highest`) \
                 VALUES (?, ?, {EPOCH} + INTERVAL ? SECOND, ?, ?, NULL) \
                 ON DUPLICATE KEY UPDATE `counter` = `counter` + ?",
                self.buckets_table
            ),
            params: &["name", "period", "the bucket's start", "the slot written", "delta", "delta"],
        }
    }

    /// Shares the room left in a limited bucket among its rows again.
    pub fn share_limit(&self) -> PlainStatement {
        PlainStatement {
            purpose: "last, unless lock_bucket found room in the slot's row (then the other rows keep their \
                      shares, and the routines' writes the room they saw in theirs): shares the room left (the \
                      limit less what the rows counted, delta included, at least 0) evenly among the bucket's \
                      rows again, the remainder to the slot written; a NULL share (no limit) clears the shares",
            sql: format!(
                "UPDATE `{}` SET `highest` = `counter` + ? + IF(`counter_id` = ?, ?, 0) \
                 WHERE `counter_name` = ? AND `period` = ? AND `bucket_start` = {EPOCH} + INTERVAL ? SECOND \
                 AND `counter_id` < {BUCKET_END}",
                self.buckets_table
            ),
            params: &[
                "each row's share (the room left divided by the rows, the slot written's included)",
                "the slot written",
                "the remainder",
                "name",
                "period",
                "the bucket's start",
            ],
        }
    }

    /// Sets or removes a period's limit.
    pub fn set_limit(&self) -> PlainStatement {
        PlainStatement {
            purpose: "in one transaction with clear_shares, after track when the period was not tracked: sets \
                      the period's limit (NULL: none)",
            sql: format!(
                "UPDATE `{}` SET `highest` = ? WHERE `counter_name` = ? AND `period` = ?",
                self.periods_table
            ),
            params: &["limit", "name", "period"],
        }
    }

    /// Clears the shares of a period's old limit, so that the next write
    /// of each bucket shares the new one.
    pub fn clear_shares(&self) -> PlainStatement {
        PlainStatement {
            purpose: "after set_limit: clears the shares of the old limit, so that the next write of each \
                      bucket shares the new one",
            sql: format!(
                "UPDATE `{}` SET `highest` = NULL WHERE `counter_name` = ? AND `period` = ? AND `highest` IS NOT NULL",
                self.buckets_table
            ),
            params: &["name", "period"],
        }
    }

    /// A counter's total and bounds, for its room.
    pub fn bounds(&self) -> PlainStatement {
        PlainStatement {
            purpose: "the room of a counter's bounds: its total, floor and ceiling (NULL: none), then for each \
                      limit the periods statement reads, get_range of its current bucket; no row: no counter",
            sql: format!(
                "SELECT CAST(SUM(`counter`) AS SIGNED), \
                 CAST(IF(COUNT(`lowest`) = COUNT(*), SUM(`lowest`), NULL) AS SIGNED), \
                 CAST(IF(COUNT(`highest`) = COUNT(*), SUM(`highest`), NULL) AS SIGNED) \
                 FROM `{}` WHERE `counter_name` = ? HAVING COUNT(*) > 0",
                self.table
            ),
            params: &["name"],
        }
    }
}
