//! The counter calls in plain SQL, for engines that run no stored routine
//! (PlanetScale, Vitess, TiDB) and for sharding engines such as MariaDB
//! Spider. Each statement is written here once: the client's plain mode
//! sends these texts, and the generator renders them, with their
//! parameters, as the reference for applications in other languages.
//!
//! Every statement names one counter by equality on `counter_name`, so a
//! sharding engine whose key is the name routes it to one shard. None uses
//! what those engines refuse or plan badly: no `RAND()` (the client picks
//! the slot), no `INSERT ... AS new` (MariaDB refuses it), no `REPLACE`, no
//! `DELETE ... LIMIT`, no upsert that changes the name, one statement per
//! text. Every column read is cast to a signed BIGINT, the one type the
//! client reads.

use std::time::Duration;

use crate::error::ConfigError;
use crate::features::Features;
use crate::options::PackageOptions;
use crate::periods::Period;

mod bounds;
mod periods;
mod quotas;

pub use periods::EPOCH;

/// How long the plain mode trusts a counter's slot count: a counter that
/// `counter_resize` grew has its new slots used within this time. A shrink
/// is seen at once: an increment of a removed slot changes no row, goes to
/// slot 1, and the count is read again.
pub const SLOT_COUNT_LIFETIME: Duration = Duration::from_secs(10);

/// One statement of the plain mode: its text, and what each `?` is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlainStatement {
    /// What the statement is for, in the words of the reference.
    pub purpose: &'static str,
    pub sql: String,
    /// The parameters, in the order of the placeholders.
    pub params: &'static [&'static str],
}

/// The plain statements of one package's table.
#[derive(Debug, Clone)]
pub struct PlainSql {
    table: String,
    writes_table: String,
    periods_table: String,
    buckets_table: String,
    auto_create: bool,
}

/// Why a package cannot be used without its routines, if it cannot.
fn refusal(options: &PackageOptions) -> Option<String> {
    if let Some(cluster) = options.cluster() {
        return Some(format!(
            "a {} package picks each increment's slot by the node it runs on, which only its routines \
             know: use its routines, or a package generated without --cluster",
            cluster.name()
        ));
    }
    if let Some(limit) = options.max_counters() {
        return Some(format!(
            "a package with --max-counters {limit} counts its counters before creating one, inside a \
             routine; plain statements cannot keep that limit: use its routines, or a package generated \
             without --max-counters"
        ));
    }
    if options.features() != Features::ALL {
        return Some(format!(
            "a package generated with --features {}: the plain mode writes the tables of every \
             feature (it reads a counter's periods and bounds before each write): use its routines, \
             or a package generated with every feature",
            options.features()
        ));
    }
    None
}

impl PlainSql {
    /// The statements for a package generated with `options`; refused for a
    /// package whose rules only its routines can keep.
    pub fn new(options: &PackageOptions) -> Result<Self, ConfigError> {
        match refusal(options) {
            Some(reason) => Err(ConfigError::InvalidOption(format!("the plain mode cannot serve {reason}"))),
            None => Ok(PlainSql {
                table: options.table().to_owned(),
                writes_table: crate::package::writes_table(options),
                periods_table: crate::package::periods_table(options),
                buckets_table: crate::package::buckets_table(options),
                auto_create: options.auto_create(),
            }),
        }
    }

    /// Whether increments create the counters they name.
    pub fn auto_create(&self) -> bool {
        self.auto_create
    }

    /// Every statement, named as the reference names it; a setup shown
    /// for 3 slots and a read for 2 names.
    pub fn reference(&self) -> Vec<(&'static str, PlainStatement)> {
        let add = if self.auto_create {
            ("upsert_slot", self.upsert_slot())
        } else {
            ("add_to_slot", self.add_to_slot())
        };
        let fill = self.auto_create.then(|| ("fill_slots (3 slots)", self.fill_slots(3)));
        // A coalesced flush's one statement, for a counter that tracks no
        // period; a lazy package's flushes upsert instead.
        let untracked = (!self.auto_create).then(|| ("add_to_untracked_slot", self.add_to_untracked_slot()));
        let mut reference = vec![
            ("name_width", self.name_width()),
            ("last_slot", self.last_slot()),
            add,
            ("setup (3 slots)", self.setup(3)),
            ("reset", self.reset()),
            ("lock_counter", self.lock_counter()),
            ("spread", self.spread()),
            ("unbound", self.unbound()),
            ("delete", self.delete()),
            ("get_many (2 names)", self.get_many(2)),
            ("record_write", self.record_write()),
            ("forget_writes", self.forget_writes()),
            ("periods", self.periods()),
            ("server_now", self.server_now()),
            ("add_to_buckets (hour and day)", self.add_to_buckets(&[Period::Hour, Period::Day])),
            ("track", self.track()),
            ("mark_tracked", self.mark_tracked()),
            ("untrack", self.untrack()),
            ("untrack_all", self.untrack_all()),
            ("oldest_buckets", self.oldest_buckets()),
            ("drop_buckets", self.drop_buckets()),
            ("get_range", self.get_range()),
            ("series", self.series()),
            ("expire (hour)", self.expire(Period::Hour)),
            ("lock_quota", self.lock_quota()),
            ("read_limit", self.read_limit()),
            ("read_limit_exclusively", self.read_limit_exclusively()),
            ("lock_bucket", self.lock_bucket()),
            ("add_to_limited_bucket", self.add_to_limited_bucket()),
            ("share_limit", self.share_limit()),
            ("set_limit", self.set_limit()),
            ("clear_shares", self.clear_shares()),
            ("bounds", self.bounds()),
        ];
        reference.extend(fill);
        reference.extend(untracked);
        reference
    }

    /// Reads the width of the names the table holds, which may be less than
    /// the package's options say: a table an earlier version made.
    pub fn name_width(&self) -> PlainStatement {
        PlainStatement {
            purpose: "the most characters a name of the table may have, read once before the first write that \
                      may create a counter: a non-strict session would cut a longer name into another counter's; \
                      no row where the engine does not say",
            sql: crate::package::NAME_WIDTH_SQL.to_owned(),
            params: &["the table's name"],
        }
    }

    /// The table the counters' slots are in.
    pub fn table(&self) -> &str {
        &self.table
    }

    /// Reads a counter's last slot: its slot count, and whether it exists.
    pub fn last_slot(&self) -> PlainStatement {
        PlainStatement {
            purpose: "the counter's slot count (its last slot's number); no row when it does not exist",
            sql: format!(
                "SELECT CAST(`counter_id` AS SIGNED) FROM `{}` WHERE `counter_name` = ? \
                 ORDER BY `counter_id` DESC LIMIT 1",
                self.table
            ),
            params: &["name"],
        }
    }

    /// Adds to one slot of a counter made by setup, unless the slot would
    /// pass the package's bound, or could not take the delta alone.
    pub fn add_to_slot(&self) -> PlainStatement {
        PlainStatement {
            purpose: "adds delta to one slot; 0 rows changed when the slot is missing (a shrink removed it, \
                      or the counter does not exist), would pass the bound, or cannot take the delta alone \
                      (a bounded counter's slot short of room, or a restock to spread): then add it through \
                      lock_counter and spread",
            sql: format!(
                "UPDATE `{}` SET `counter` = `counter` + ? \
                 WHERE `counter_name` = ? AND `counter_id` = ? AND `counter` BETWEEN ? AND ? AND {}",
                self.table,
                bounds::FITS
            ),
            params: &[
                "delta (not 0: an UPDATE adding 0 changes no row; last_slot tells whether the counter exists)",
                "name",
                "slot",
                "lowest (for delta < 0: -bound - delta; else the smallest BIGINT)",
                "highest (for delta > 0: bound - delta; else the largest BIGINT)",
                "delta",
                "the slot count - 1 (a write away from a floor by the slot count or more is spread)",
                "delta",
                "1 - the slot count (the same toward a ceiling)",
            ],
        }
    }

    /// `add_to_slot`, for a counter that tracks no period: one statement
    /// that does all a write of such a counter does. A coalescing flush
    /// sends it: in routine mode in place of a `CALL`, which took 1.1-1.4
    /// times as long (docs/benchmarks.md); in plain mode in place of the
    /// read of the counter's periods and `add_to_slot`. Not used by other
    /// writes: Vitess plans a subquery in an UPDATE only
    /// with its Gen4 planner, and only when the subquery routes to the
    /// UPDATE's shard (vitessio/vitess#9640); it refuses others with 1235,
    /// after which the client flushes as other writes write.
    pub fn add_to_untracked_slot(&self) -> PlainStatement {
        let add = self.add_to_slot();
        PlainStatement {
            purpose: "adds delta to one slot, as add_to_slot does, when the counter tracks no period; 0 rows \
                      changed also when it tracks one",
            sql: format!(
                "{} AND NOT EXISTS (SELECT 1 FROM `{}` WHERE `counter_name` = ?)",
                add.sql, self.periods_table
            ),
            params: &[
                "delta (as for add_to_slot, and each up to the last)",
                "name",
                "slot",
                "lowest",
                "highest",
                "delta",
                "the slot count - 1",
                "delta",
                "1 - the slot count",
                "name",
            ],
        }
    }

    /// Adds to one slot of a lazy package's counter, creating the slot row.
    pub fn upsert_slot(&self) -> PlainStatement {
        PlainStatement {
            purpose: "adds delta to one slot, creating the slot row (and so the counter); a slot that would \
                      pass the bound fails with 1690 (out of range): kick takes it past a BIGINT; 0 rows changed \
                      when a bounded counter's slot cannot take the delta alone (as for add_to_slot)",
            sql: format!(
                "INSERT INTO `{}` (`counter_name`, `counter_id`, `description`, `start_date`, `counter`) \
                 VALUES (?, ?, NULL, NOW(), ?) \
                 ON DUPLICATE KEY UPDATE `counter` = `counter` + IF({}, ? + IF(`counter` BETWEEN ? AND ?, 0, ?), 0)",
                self.table,
                bounds::FITS
            ),
            params: &[
                "name",
                "slot",
                "delta",
                "delta, the slot count - 1, delta, 1 - the slot count (as for add_to_slot)",
                "delta",
                "lowest (as for add_to_slot)",
                "highest (as for add_to_slot)",
                "kick (the largest BIGINT for delta >= 0, the smallest for delta < 0)",
            ],
        }
    }

    /// Creates a counter's `slots` slot rows in one statement: it fails
    /// with 1062 when the counter exists.
    pub fn setup(&self, slots: u32) -> PlainStatement {
        let rest = ", (?, ?, ?, NOW(), 0)".repeat(slots.saturating_sub(1) as usize);
        PlainStatement {
            purpose: "creates the counter's slot rows, the initial value in slot 1; 1062 when it exists",
            sql: format!(
                "INSERT INTO `{}` (`counter_name`, `counter_id`, `description`, `start_date`, `counter`) \
                 VALUES (?, 1, ?, NOW(), ?){rest}",
                self.table
            ),
            params: &[
                "name",
                "description",
                "initial value",
                "then for each slot k from 2: name, k, description",
            ],
        }
    }

    /// Sets an unbounded counter to a value kept in one slot, every other
    /// slot to 0.
    pub fn reset(&self) -> PlainStatement {
        PlainStatement {
            purpose: "puts value in slot `slot` and 0 in every other; 0 rows changed when the counter does \
                      not exist, already reads so, or is bounded (reset it with lock_counter and spread)",
            sql: format!(
                "UPDATE `{}` SET `counter` = IF(`counter_id` = ?, ?, 0), \
                 `start_date` = IF(?, NOW(), `start_date`) \
                 WHERE `counter_name` = ? AND `lowest` IS NULL AND `highest` IS NULL",
                self.table
            ),
            params: &["slot (1; a lazy counter's lowest)", "value", "reset start date (boolean)", "name"],
        }
    }

    /// Locks every slot of a counter inside a transaction, and reads what a
    /// change of them all needs.
    pub fn lock_counter(&self) -> PlainStatement {
        PlainStatement {
            purpose: "inside a transaction: locks the counter's slots; its slot count and lowest slot \
                      (0 and NULL when it does not exist), its total, floor and ceiling (NULL: none)",
            sql: format!(
                "SELECT COUNT(*), CAST(MIN(`counter_id`) AS SIGNED), CAST(COALESCE(SUM(`counter`), 0) AS SIGNED), \
                 CAST(SUM(`lowest`) AS SIGNED), CAST(SUM(`highest`) AS SIGNED) \
                 FROM `{}` WHERE `counter_name` = ? FOR UPDATE",
                self.table
            ),
            params: &["name"],
        }
    }

    /// Deletes a counter's slots. Spider reports 0 affected rows for a
    /// delete that removed rows: [`PlainSql::lock_counter`] tells first.
    pub fn delete(&self) -> PlainStatement {
        PlainStatement {
            purpose: "after lock_counter in the same transaction: removes the counter's slots",
            sql: format!("DELETE FROM `{}` WHERE `counter_name` = ?", self.table),
            params: &["name"],
        }
    }

    /// Records a write's id for one counter, in the write's transaction:
    /// 1062 when the id is recorded, and the write counted already.
    pub fn record_write(&self) -> PlainStatement {
        PlainStatement {
            purpose: "with write ids, first in the write's transaction, once per counter it writes: 1062 when \
                      that counter's part of the write committed before (skip it; the transaction goes on)",
            sql: format!(
                "INSERT INTO `{}` (`counter_name`, `write_id`, `written_at`) VALUES (?, ?, UTC_TIMESTAMP(6))",
                self.writes_table
            ),
            params: &["name", "write id (16 random bytes, the same for every counter of one write)"],
        }
    }

    /// Forgets the write ids recorded before a time: what
    /// `counter_forget_writes` does where no routine runs. One statement
    /// over every shard: called every minute, it deletes a minute of ids.
    pub fn forget_writes(&self) -> PlainStatement {
        PlainStatement {
            purpose: "forgets the write ids older than the window; call it regularly (every minute) in \
                      autocommit mode, so that each run deletes little",
            sql: format!(
                "DELETE FROM `{}` WHERE `written_at` < UTC_TIMESTAMP(6) - INTERVAL ? SECOND",
                self.writes_table
            ),
            params: &["window, in seconds (600; far above any writer's retry budget)"],
        }
    }

    /// Reads the values of `names` counters in one statement: one row per
    /// name, tagged with its position, since a union's rows come in any
    /// order.
    pub fn get_many(&self, names: usize) -> PlainStatement {
        let one = format!(
            "SELECT CAST(? AS SIGNED) AS `position`, CAST(SUM(`counter`) AS SIGNED) AS `total` \
             FROM `{}` WHERE `counter_name` = ?",
            self.table
        );
        PlainStatement {
            purpose: "one row per name: its position and its value (NULL when it does not exist)",
            sql: vec![one; names.max(1)].join(" UNION ALL "),
            params: &["for each name: its position from 0, the name"],
        }
    }
}

/// The Vitess vindex that keeps every slot of a counter on one shard: one
/// that hashes the name as the table's collation compares it. A `_bin`
/// collation compares bytes; any other folds case at least, which
/// `unicode_loose_xxhash` folds too (it also folds accents, which may put
/// two different names on one shard, never one name on two).
pub fn name_vindex(options: &PackageOptions) -> &'static str {
    if options.collation().ends_with("_bin") { "xxhash" } else { "unicode_loose_xxhash" }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::Cluster;

    #[test]
    fn cluster_and_limited_packages_are_refused_with_the_way_out() {
        for (options, says) in [
            (PackageOptions::builder().cluster(Cluster::Galera).build().unwrap(), "without --cluster"),
            (
                PackageOptions::builder().fixed_slots(8).auto_create(true).max_counters(10).build().unwrap(),
                "without --max-counters",
            ),
        ] {
            let ConfigError::InvalidOption(message) = PlainSql::new(&options).unwrap_err() else {
                panic!("not an invalid option")
            };
            assert!(
                message.starts_with("the plain mode cannot serve") && message.contains(says),
                "{message}"
            );
        }
    }

    #[test]
    fn every_placeholder_of_a_setup_is_a_slot_row_value() {
        let sql = PlainSql::new(&PackageOptions::default()).unwrap().setup(3).sql;
        assert_eq!(sql.matches('?').count(), 3 + 2 * 3);
        assert!(
            sql.ends_with("VALUES (?, 1, ?, NOW(), ?), (?, ?, ?, NOW(), 0), (?, ?, ?, NOW(), 0)"),
            "{sql}"
        );
    }

    #[test]
    fn a_read_of_many_names_has_one_select_per_name() {
        let sql = PlainSql::new(&PackageOptions::default()).unwrap().get_many(3).sql;
        assert_eq!(sql.matches(" UNION ALL ").count(), 2);
        assert_eq!(sql.matches('?').count(), 6);
    }
}
