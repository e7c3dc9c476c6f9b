//! Reading and folding a counter's slots: compaction, the view of totals,
//! and estimates.

use mysql::prelude::Queryable;
use slotted_counters_core::package::errno;

use crate::support::{on_each_server, server_error, slots_of, with_committed};

on_each_server!(
    compact_folds_every_slot_into_slot_one,
    totals_view_has_one_row_per_counter_and_joins,
    estimate_reads_one_slot_times_the_slot_count,
);

fn compact_folds_every_slot_into_slot_one() {
    for dir in ["generated", "generated/fixed-slots-64"] {
        let db = with_committed(dir);
        let mut conn = db.conn();
        conn.query_drop("CALL counter_setup('c', 'd', NULL, 5)").unwrap();
        for _ in 0..50 {
            conn.query_drop("CALL counter_increment('c')").unwrap();
        }
        conn.query_drop("CALL counter_add('c', -7)").unwrap();
        let slot_count = slots_of(&mut conn, "c").len();

        conn.query_drop("CALL counter_compact('c')").unwrap();
        let slots = slots_of(&mut conn, "c");
        assert_eq!(slots.len(), slot_count, "{dir}: compact keeps the slots");
        assert_eq!(slots[&1], 48, "{dir}");
        assert!(slots.values().skip(1).all(|&value| value == 0), "{dir}: {slots:?}");
        assert_eq!(
            server_error(conn.query_drop("CALL counter_compact('missing')").unwrap_err()),
            (errno::UNKNOWN_COUNTER, "unknown counter: 'missing'".to_owned()),
            "{dir}"
        );
    }
}

fn totals_view_has_one_row_per_counter_and_joins() {
    let db = with_committed("generated");
    let mut conn = db.conn();
    conn.query_drop("CALL counter_setup('page:1', 'home', 8, 40)").unwrap();
    conn.query_drop("CALL counter_setup('page:2', 'pricing', 2, NULL)").unwrap();
    conn.query_drop("CALL counter_add('page:1', 2)").unwrap();
    let rows: Vec<(String, Option<String>, u32, i64)> = conn
        .query("SELECT counter_name, description, slots, total FROM counter_totals ORDER BY counter_name")
        .unwrap();
    assert_eq!(
        rows,
        [("page:1".into(), Some("home".into()), 8, 42), ("page:2".into(), Some("pricing".into()), 2, 0)]
    );

    conn.query_drop("CREATE TABLE pages (id INT PRIMARY KEY, title VARCHAR(20))").unwrap();
    conn.query_drop("INSERT INTO pages VALUES (1, 'Home'), (2, 'Pricing'), (3, 'Never viewed')").unwrap();
    let joined: Vec<(String, Option<i64>)> = conn
        .query(
            "SELECT p.title, t.total FROM pages p \
             LEFT JOIN counter_totals t ON t.counter_name = CONCAT('page:', p.id) ORDER BY p.id",
        )
        .unwrap();
    assert_eq!(
        joined,
        [("Home".into(), Some(42)), ("Pricing".into(), Some(0)), ("Never viewed".into(), None)]
    );
    let started: Option<String> = conn
        .query_first("SELECT CAST(start_date AS CHAR) FROM counter_totals WHERE counter_name = 'page:1'")
        .unwrap();
    assert!(started.is_some());
}

fn estimate_reads_one_slot_times_the_slot_count() {
    for (dir, slots) in [("generated", 10u32), ("generated/fixed-slots-64", 64)] {
        let db = with_committed(dir);
        let mut conn = db.conn();
        conn.exec_drop("CALL counter_setup('even', 'd', ?, NULL)", (slots,)).unwrap();
        conn.query_drop("UPDATE counters SET counter = 7 WHERE counter_name = 'even'").unwrap();
        conn.exec_drop("CALL counter_setup('skewed', 'd', ?, 100)", (slots,)).unwrap();
        for _ in 0..20 {
            let (even, skewed, missing): (Option<i64>, Option<i64>, Option<i64>) = conn
                .query_first("SELECT counter_estimate('even'), counter_estimate('skewed'), counter_estimate('missing')")
                .unwrap()
                .unwrap();
            assert_eq!(even, Some(7 * i64::from(slots)), "{dir}: equal slots give the exact total");
            assert!(
                [Some(0), Some(100 * i64::from(slots))].contains(&skewed),
                "{dir}: one slot read, {skewed:?}"
            );
            assert_eq!(missing, None, "{dir}");
        }
    }
}
