//! What a population's tables cost once its rounds have run: their rows
//! and bytes per counter, and the reads an application makes of them.

use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use slotted_counters::Counters;
use slotted_counters_core::package;

use super::population::{Population, slotted_name};
use super::report::TableFigures;
use super::variant::Variant;
use super::workbench::Workbench;
use crate::error::Error;

/// Counters one `get_many` reads, as a page listing a hundred items does.
pub const GET_MANY: u32 = 100;

/// Times each cheap read is made; the median is reported.
const READS: u32 = 21;

/// Times each read that may scan a whole table is made: the view's, which
/// MariaDB materializes whole for a prepared statement's parameter.
const SCANS: u32 = 3;

impl Workbench {
    /// Each table of the population's rounds: its size and the cost of its
    /// reads, measured on the first node.
    pub(super) fn footprints(&self, population: Population) -> Result<Vec<TableFigures>, Error> {
        self.counter_sets()
            .into_iter()
            .map(|(owner, slots)| self.footprint(owner, slots, population))
            .collect()
    }

    fn footprint(
        &self,
        variant: Variant,
        slots: Option<u32>,
        population: Population,
    ) -> Result<TableFigures, Error> {
        let mut conn = self.pools[0].get_conn().map_err(Error::Query)?;
        let package = self.package(variant, slots)?;
        let table =
            package.as_ref().map_or("bench_single_row".to_owned(), |options| options.table().to_owned());
        let (rows, bytes) = table_size(&mut conn, &table)?;
        let mut draw = population.draw();
        let mut drawn = || -> Vec<u32> { (0..GET_MANY).map(|_| draw.next_id()).collect() };
        let (get_many_ms, view_one_ms, top_ten_ms) = match &package {
            Some(options) => {
                let slots = slots.expect("a population's package rounds have a slot count");
                let counters = Counters::builder(self.pools[0].clone()).package(options).build()?;
                let get_many = median_ms(READS, || {
                    let names: Vec<String> = drawn().into_iter().map(|id| slotted_name(id, slots)).collect();
                    counters.get_many(&names).map(drop).map_err(Error::Counter)
                })?;
                let view = package::totals_view(options);
                let one = format!("SELECT total FROM `{view}` WHERE counter_name = ?");
                let view_one = median_ms(SCANS, || {
                    let name = slotted_name(drawn()[0], slots);
                    conn.exec_drop(&one, (name,)).map_err(Error::Query)
                })?;
                let top = format!("SELECT counter_name, total FROM `{view}` ORDER BY total DESC LIMIT 10");
                let top_ten = median_ms(SCANS, || conn.query_drop(&top).map_err(Error::Query))?;
                (get_many, Some(view_one), top_ten)
            }
            None => {
                let placeholders = vec!["?"; GET_MANY as usize].join(", ");
                let some = format!("SELECT id, n FROM bench_single_row WHERE id IN ({placeholders})");
                let get_many = median_ms(READS, || conn.exec_drop(&some, drawn()).map_err(Error::Query))?;
                let top = "SELECT id, n FROM bench_single_row ORDER BY n DESC LIMIT 10";
                let top_ten = median_ms(SCANS, || conn.query_drop(top).map_err(Error::Query))?;
                (get_many, None, top_ten)
            }
        };
        let per_counter = |value: u64| value as f64 / f64::from(population.counters);
        Ok(TableFigures {
            variant,
            rows_per_counter: per_counter(rows),
            bytes_per_counter: per_counter(bytes),
            table,
            rows,
            bytes,
            get_many_ms,
            view_one_ms,
            top_ten_ms,
        })
    }
}

/// `table`'s rows, counted, and its bytes of data and indexes as the
/// server has them once `ANALYZE TABLE` has refreshed its statistics (which
/// MySQL caches for a day otherwise).
fn table_size(conn: &mut impl Queryable, table: &str) -> Result<(u64, u64), Error> {
    let rows: Option<u64> =
        conn.query_first(format!("SELECT COUNT(*) FROM `{table}`")).map_err(Error::Query)?;
    conn.query_drop(format!("ANALYZE TABLE `{table}`")).map_err(Error::Query)?;
    let bytes: Option<u64> = conn
        .exec_first(
            "SELECT DATA_LENGTH + INDEX_LENGTH FROM information_schema.TABLES \
             WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?",
            (table,),
        )
        .map_err(Error::Query)?;
    Ok((rows.unwrap_or_default(), bytes.unwrap_or_default()))
}

/// The median of `times` runs of `read`, in milliseconds.
fn median_ms(times: u32, mut read: impl FnMut() -> Result<(), Error>) -> Result<f64, Error> {
    let mut took: Vec<Duration> = Vec::new();
    for _ in 0..times {
        let started = Instant::now();
        read()?;
        took.push(started.elapsed());
    }
    took.sort_unstable();
    Ok(took[took.len() / 2].as_secs_f64() * 1_000.0)
}
