//! The plain statements of bounded counters (see [`crate::bounds`]): the
//! condition under which a slot takes a write alone, and what a write, a
//! reset or new bounds that it cannot take do with every slot locked
//! (after [`PlainSql::lock_counter`], in one transaction).

use super::{PlainSql, PlainStatement};

/// The condition of `add_to_slot` and `upsert_slot` under which a slot
/// takes a delta alone: it stays within its shares of the counter's bounds
/// (NULL: none), and moves away from a bound by less than the slot count (a
/// restock is spread). Its parameters: the delta, the slot count - 1, the
/// delta, 1 - the slot count. Written as the delta against the room, so that
/// no sum leaves BIGINT.
pub(super) const FITS: &str = "(`lowest` IS NULL OR ? BETWEEN `lowest` - `counter` AND ?) \
     AND (`highest` IS NULL OR ? BETWEEN ? AND `highest` - `counter`)";

impl PlainSql {
    /// Writes a bounded counter's new total over its slots with their
    /// shares of the bounds ([`crate::bounds::Spread`]).
    pub fn spread(&self) -> PlainStatement {
        PlainStatement {
            purpose: "after lock_counter in the same transaction: writes a bounded counter's new total over its \
                      slots 1 to n, evenly, each with an even share of the room toward each bound (NULL: none); \
                      refuse first a total past a bound (9004, with the room lock_counter's total leaves)",
            sql: format!(
                "UPDATE `{}` SET `counter` = ? + (`counter_id` <= ?), \
                 `lowest` = ? + (`counter_id` <= ?) - ? - (`counter_id` <= ?), \
                 `highest` = ? + (`counter_id` <= ?) + ? + (`counter_id` <= ?), \
                 `start_date` = IF(?, NOW(), `start_date`) WHERE `counter_name` = ?",
                self.table
            ),
            params: &[
                "share, share left (the total's floor division by n, and its remainder)",
                "share, share left, floor room, floor room left (the same of the total - the floor; NULL: none)",
                "share, share left, ceiling room, ceiling room left (of the ceiling - the total; NULL: none)",
                "reset start date (boolean)",
                "name",
            ],
        }
    }

    /// Takes a counter's bounds away.
    pub fn unbound(&self) -> PlainStatement {
        PlainStatement {
            purpose: "after lock_counter in the same transaction: the counter has no bound any more",
            sql: format!(
                "UPDATE `{}` SET `lowest` = NULL, `highest` = NULL WHERE `counter_name` = ?",
                self.table
            ),
            params: &["name"],
        }
    }

    /// Creates the missing slot rows of a lazy package's counter, so that a
    /// bounded one has them all: `slots` rows, each there already left as
    /// it is.
    pub fn fill_slots(&self, slots: u32) -> PlainStatement {
        let rows = vec!["(?, ?, NULL, NOW(), 0)"; slots.max(1) as usize].join(", ");
        PlainStatement {
            purpose: "a lazy package, after lock_counter in the same transaction, before a spread: creates the \
                      counter's missing slot rows",
            sql: format!(
                "INSERT INTO `{}` (`counter_name`, `counter_id`, `description`, `start_date`, `counter`) \
                 VALUES {rows} ON DUPLICATE KEY UPDATE `counter_id` = `counter_id`",
                self.table
            ),
            params: &["for each slot k from 1: name, k"],
        }
    }
}
