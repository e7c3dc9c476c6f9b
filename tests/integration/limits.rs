//! Limits that guard the server and the counts from an application account,
//! which may add any value to any counter: a bound on every slot, so that
//! no counter's total can pass what `counter_get` returns, and an optional
//! most counters for lazy packages, whose increments create counters.

use mysql::PooledConn;
use mysql::prelude::Queryable;
use slotted_counters::{Counters, PackageOptions};
use slotted_counters_core::package::errno;

use crate::support::{self, Database, on_each_server, server_error, total};

on_each_server!(
    every_slot_stays_within_the_bound_so_every_total_reads,
    a_lazy_package_creates_at_most_its_counters,
);

/// The code and message of a refused statement.
fn refused(conn: &mut PooledConn, sql: &str) -> (u16, String) {
    server_error(conn.query_drop(sql).expect_err(sql))
}

/// A slot holds at most the largest BIGINT over the most slots a counter
/// may have, whatever writes it: setup, reset, add, a batch, the table
/// itself. So a counter whose every slot is at the bound still reads, where
/// two slots at the ends of BIGINT made `counter_get` fail (1916), and a
/// compact that would fold it into one slot is refused.
fn every_slot_stays_within_the_bound_so_every_total_reads() {
    for dir in ["generated", "generated/fixed-slots-64"] {
        let options = if dir.contains("fixed") {
            PackageOptions::builder().fixed_slots(64).build().unwrap()
        } else {
            PackageOptions::default()
        };
        let bound = options.slot_bound();
        let most_slots = i64::MAX / bound;
        assert_eq!(most_slots, if dir.contains("fixed") { 64 } else { 1024 });
        let db = support::with_committed(dir);
        let mut conn = db.conn();
        let slots = if dir.contains("fixed") { "NULL".to_owned() } else { most_slots.to_string() };
        let past = format!("a slot would pass {bound} either way, for counter: ");

        conn.query_drop(format!("CALL counter_setup('full', 'd', {slots}, {bound})")).unwrap();
        for sql in [
            format!("CALL counter_setup('over', 'd', {slots}, {})", bound + 1),
            format!("CALL counter_reset('full', {}, FALSE)", -bound - 1),
            format!("CALL counter_add('full', {})", bound + 1),
            format!("CALL counter_add_many('{{\"full\": {}}}')", bound + 1),
            format!("UPDATE counters SET counter = {} WHERE counter_name = 'full'", bound + 1),
        ] {
            let (code, message) = refused(&mut conn, &sql);
            assert_eq!(code, errno::INVALID_ARGUMENT, "{dir}: {sql}: {message}");
            assert!(message.starts_with(&past), "{dir}: {sql}: {message}");
        }

        conn.query_drop(format!("UPDATE counters SET counter = {bound} WHERE counter_name = 'full'"))
            .unwrap();
        assert_eq!(
            total(&mut conn, "full"),
            Some(most_slots * bound),
            "{dir}: every slot at the bound reads"
        );
        let (code, message) = refused(&mut conn, "CALL counter_compact('full')");
        assert_eq!(code, errno::INVALID_ARGUMENT, "{dir}: {message}");
        assert_eq!(
            total(&mut conn, "full"),
            Some(most_slots * bound),
            "{dir}: a refused compact changed nothing"
        );
        conn.query_drop(format!("UPDATE counters SET counter = {} WHERE counter_name = 'full'", -bound))
            .unwrap();
        assert_eq!(total(&mut conn, "full"), Some(-most_slots * bound), "{dir}: and at the other end");
        conn.query_drop(format!("CALL counter_add('full', {bound})")).unwrap();
        assert_eq!(total(&mut conn, "full"), Some((1 - most_slots) * bound), "{dir}: back toward 0 is taken");
    }
}

/// A lazy package made with `--max-counters 3` creates three counters,
/// then refuses a fourth however it would be made (an increment, a batch,
/// a setup), while the three go on counting; a delete makes room again.
fn a_lazy_package_creates_at_most_its_counters() {
    let options = PackageOptions::builder().fixed_slots(4).auto_create(true).max_counters(3).build().unwrap();
    let db = Database::new();
    let mut conn = db.conn();
    let script = slotted_counters_cli::render::setup_sql(&options).unwrap();
    slotted_counters_cli::install::install(&mut conn, &script).unwrap();
    let counters = Counters::builder(db.pool().clone()).package(&options).build().unwrap();
    for name in ["a", "b", "c"] {
        counters.increment(name).unwrap();
    }
    let limit = "the package holds its most counters (3), so none can be created: 'd'";
    for sql in [
        "CALL counter_add('d', 1)",
        r#"CALL counter_add_many('{"a": 1, "d": 1}')"#,
        "CALL counter_setup('d', 'x', NULL, NULL)",
    ] {
        assert_eq!(refused(&mut conn, sql), (errno::INVALID_ARGUMENT, limit.to_owned()), "{sql}");
    }
    counters.add_many([("a", 2), ("b", 2)]).unwrap();
    assert_eq!(counters.get_many(["a", "b", "c", "d"]).unwrap(), [Some(3), Some(3), Some(1), None]);
    counters.delete("c").unwrap();
    counters.increment("d").unwrap();
    assert_eq!(counters.get("d").unwrap(), Some(1));
    let (code, message) = refused(&mut conn, "CALL counter_add('e', 1)");
    assert_eq!((code, message.as_str()), (errno::INVALID_ARGUMENT, limit.replace("'d'", "'e'").as_str()));
}
