//! Counter names: compared case-insensitively, and data, never SQL.

use mysql::prelude::Queryable;

use super::{Package, call};
use crate::support::total;

pub(super) fn names_compare_case_insensitively(package: &Package) {
    let db = package.database();
    let mut conn = db.conn();
    conn.query_drop("CALL counter_setup('countername100', 'd', NULL, NULL)").unwrap();
    conn.query_drop("CALL counter_increment('countername100')").unwrap();
    conn.query_drop("CALL counter_increment('counterName100')").unwrap();
    conn.query_drop("CALL counter_add('COUNTERNAME100', 40)").unwrap();
    assert_eq!(total(&mut conn, "counterName100"), Some(42));
    conn.query_drop("CALL counter_reset('CounterName100', 5, FALSE)").unwrap();
    assert_eq!(total(&mut conn, "countername100"), Some(5));
    conn.query_drop("CALL counter_delete('COUNTERNAME100')").unwrap();
    assert_eq!(total(&mut conn, "countername100"), None);
}

pub(super) fn names_that_look_like_sql_stay_data(package: &Package) {
    let db = package.database();
    let mut conn = db.conn();
    let names = [
        "x'); DROP TABLE counters; --",
        "a' OR '1'='1",
        "`counters`",
        "back\\slash",
        "%",
        "_",
        "name\"quote",
        "ünïcödé ✓",
    ];
    for (i, name) in names.iter().enumerate() {
        call(&mut conn, "CALL counter_setup(?, ?, ?, ?)", (*name, *name, None::<u32>, i as i64)).unwrap();
    }
    for name in names {
        call(&mut conn, "CALL counter_increment(?)", (name,)).unwrap();
    }
    for (i, name) in names.iter().enumerate() {
        assert_eq!(total(&mut conn, name), Some(i as i64 + 1), "{name}");
        let description: String = conn
            .exec_first("SELECT DISTINCT description FROM counters WHERE counter_name = ?", (*name,))
            .unwrap()
            .unwrap();
        assert_eq!(description, *name);
    }
    let counters: usize =
        conn.query_first("SELECT COUNT(DISTINCT counter_name) FROM counters").unwrap().unwrap();
    assert_eq!(counters, names.len(), "no name matched another as a pattern");
    call(&mut conn, "CALL counter_delete(?)", ("%",)).unwrap();
    assert_eq!(total(&mut conn, "_"), Some(6), "deleting '%' deleted only '%'");
}
