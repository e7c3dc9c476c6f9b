//! Counters kept by triggers: a DBA counts a table's rows with
//! `AFTER INSERT ... FOR EACH ROW CALL counter_increment(...)` and a
//! decrement on DELETE. The trigger runs inside the application's
//! statement, so its counting commits and rolls back with the rows.

use std::thread;

use mysql::PooledConn;
use mysql::prelude::Queryable;
use slotted_counters_core::package::errno;

use crate::support::{self, Database, on_each_server, server_error, total};

on_each_server!(
    a_trigger_counts_every_row_under_concurrent_inserts_and_deletes,
    an_unknown_counter_fails_the_insert_and_inserts_nothing,
    every_routine_runs_in_a_trigger_and_fails_with_the_statement,
);

/// The `downloads` table, whose rows the `downloads` counter counts.
fn counted_table(db: &Database) -> PooledConn {
    let mut conn = db.conn();
    for statement in [
        "CREATE TABLE downloads (id BIGINT AUTO_INCREMENT PRIMARY KEY, file VARCHAR(100) NOT NULL)",
        "CALL counter_setup('downloads', 'rows of the downloads table', 8, NULL)",
        "CREATE TRIGGER downloads_counted AFTER INSERT ON downloads \
         FOR EACH ROW CALL counter_increment('downloads')",
        "CREATE TRIGGER downloads_uncounted AFTER DELETE ON downloads \
         FOR EACH ROW CALL counter_add('downloads', -1)",
    ] {
        conn.query_drop(statement).unwrap_or_else(|error| panic!("{statement}: {error}"));
    }
    conn
}

fn rows(conn: &mut PooledConn) -> i64 {
    conn.query_first("SELECT COUNT(*) FROM downloads").unwrap().unwrap()
}

/// Runs `statement`, again while the server rolls it back whole, its
/// trigger's increment included: as a deadlock victim (1213), or, under
/// MariaDB's snapshot isolation, for a slot changed since the statement's
/// snapshot (1020), which a trigger's increment meets after a lock wait.
fn run(conn: &mut PooledConn, statement: &str) {
    loop {
        match conn.query_drop(statement) {
            Ok(()) => return,
            Err(mysql::Error::MySqlError(error)) if [1020, 1213].contains(&error.code) => continue,
            Err(error) => panic!("{statement}: {error}"),
        }
    }
}

fn a_trigger_counts_every_row_under_concurrent_inserts_and_deletes() {
    let db = Database::new();
    support::install_committed(&db, "generated");
    let mut conn = counted_table(&db);

    thread::scope(|scope| {
        for client in 0..8 {
            let mut conn = db.conn();
            scope.spawn(move || {
                for row in 0..150 {
                    if row % 10 == 0 {
                        run(&mut conn, &format!("INSERT INTO downloads (file) VALUES ('a{client}'), ('b{client}'), ('c{client}')"));
                    } else {
                        run(&mut conn, &format!("INSERT INTO downloads (file) VALUES ('f{client}-{row}')"));
                    }
                    if row % 4 == 0 {
                        run(&mut conn, "DELETE FROM downloads WHERE id = LAST_INSERT_ID()");
                    }
                }
            });
        }
    });

    let rows = rows(&mut conn);
    assert_eq!(rows, 8 * (150 + 15 * 2 - 38), "every insert and delete ran");
    assert_eq!(total(&mut conn, "downloads"), Some(rows), "the counter counts every row");
}

/// Decided: an increment of an unknown counter fails (9001) in a trigger
/// as anywhere else, so the application's INSERT fails whole and inserts
/// nothing. A trigger whose counter is missing (never set up, deleted, a
/// typo) shows at the first insert, instead of losing counts unseen.
/// `--auto-create` packages create the counter instead.
fn an_unknown_counter_fails_the_insert_and_inserts_nothing() {
    let db = Database::new();
    support::install_committed(&db, "generated");
    let mut conn = counted_table(&db);
    conn.query_drop("INSERT INTO downloads (file) VALUES ('kept')").unwrap();
    conn.query_drop("CALL counter_delete('downloads')").unwrap();

    for statement in
        ["INSERT INTO downloads (file) VALUES ('lost')", "INSERT INTO downloads (file) VALUES ('x'), ('y')"]
    {
        let (code, message) = server_error(conn.query_drop(statement).unwrap_err());
        assert_eq!((code, message.as_str()), (errno::UNKNOWN_COUNTER, "unknown counter: 'downloads'"));
    }
    let files: Vec<String> = conn.query("SELECT file FROM downloads").unwrap();
    assert_eq!(files, ["kept"], "the failed inserts inserted nothing");
    assert_eq!(total(&mut conn, "downloads"), None, "and created no counter");
}

/// Every routine of the default package runs in a trigger: none commits,
/// and none runs dynamic SQL, which a trigger may not (1336): the
/// `--auto-create` package's batch too. The Galera package's multi-row
/// changes hold a COMMIT (1422). What a routine changes there is part of
/// the application's statement: kept when it succeeds, undone when it
/// fails.
fn every_routine_runs_in_a_trigger_and_fails_with_the_statement() {
    let db = Database::new();
    support::install_committed(&db, "generated");
    let mut conn = db.conn();
    conn.query_drop("CALL counter_setup('c', 'd', 4, 10)").unwrap();
    conn.query_drop("CALL counter_setup('gone', 'd', 2, NULL)").unwrap();
    conn.query_drop("CREATE TABLE events (id INT AUTO_INCREMENT PRIMARY KEY)").unwrap();
    conn.query_drop("INSERT INTO events (id) VALUES (1000)").unwrap();
    // (trigger body, total of `c` and its slot count once the insert ran)
    let cases = [
        ("CALL counter_increment('c')", 11, 4),
        ("CALL counter_add('c', 2)", 13, 4),
        ("CALL counter_add_many('{\"c\": 3}')", 16, 4),
        ("CALL counter_resize('c', 8)", 16, 8),
        ("CALL counter_resize('c', 3)", 16, 3),
        ("CALL counter_compact('c')", 16, 3),
        ("CALL counter_reset('c', 10, FALSE)", 10, 3),
        ("CALL counter_setup(CONCAT('new', NEW.id), 'd', 2, NULL)", 10, 3),
        ("SET @read = counter_get('c') + counter_estimate('c')", 10, 3),
        ("CALL counter_bound('c', 0, 100)", 10, 3),
        ("CALL counter_add('c', -4)", 6, 3),
        ("CALL counter_delete('gone')", 6, 3),
    ];
    for (body, total_after, slots_after) in cases {
        conn.query_drop("DROP TRIGGER IF EXISTS events_counted").unwrap();
        conn.query_drop(format!("CREATE TRIGGER events_counted AFTER INSERT ON events FOR EACH ROW {body}"))
            .unwrap_or_else(|error| panic!("{body}: {error}"));

        let before = support::table(&mut conn);
        let (code, _) =
            server_error(conn.query_drop("INSERT INTO events (id) VALUES (NULL), (1000)").unwrap_err());
        assert_eq!(code, 1062, "{body}: the second row is a duplicate");
        assert_eq!(support::table(&mut conn), before, "{body}: the failed insert undid the trigger's change");

        conn.query_drop("INSERT INTO events () VALUES ()").unwrap_or_else(|error| panic!("{body}: {error}"));
        assert_eq!(total(&mut conn, "c"), Some(total_after), "{body}");
        assert_eq!(support::slots_of(&mut conn, "c").len(), slots_after, "{body}");
    }
    assert_eq!(total(&mut conn, "gone"), None, "the delete ran");
    let (code, _) = server_error(conn.query_drop("CALL counter_add('c', -7)").unwrap_err());
    assert_eq!(code, errno::PAST_BOUND, "the bound a trigger set holds");
    let created: Vec<String> =
        conn.query("SELECT DISTINCT counter_name FROM counters WHERE counter_name LIKE 'new%'").unwrap();
    assert_eq!(created.len(), 1, "the setup ran once: {created:?}");

    let lazy = Database::new();
    support::install_committed(&lazy, "generated/auto-create-64");
    let mut conn = lazy.conn();
    conn.query_drop("CREATE TABLE events (id INT AUTO_INCREMENT PRIMARY KEY)").unwrap();
    conn.query_drop("CREATE TRIGGER events_counted AFTER INSERT ON events FOR EACH ROW CALL counter_add_many('{\"c\": 1}')")
        .unwrap();
    conn.query_drop("INSERT INTO events () VALUES ()").unwrap();
    assert_eq!(total(&mut conn, "c"), Some(1), "a lazy batch creates its counter in a trigger");

    // The Galera package's reset commits a transaction of its own on
    // MariaDB; the server refuses a routine that holds a COMMIT anywhere
    // (1422), so on MySQL too, where it records the change instead.
    let galera = Database::new();
    support::install_committed(&galera, "generated/galera");
    let mut conn = galera.conn();
    conn.query_drop("CALL counter_setup('c', 'd', 3, 7)").unwrap();
    conn.query_drop("CREATE TABLE events (id INT AUTO_INCREMENT PRIMARY KEY)").unwrap();
    conn.query_drop(
        "CREATE TRIGGER events_counted AFTER INSERT ON events FOR EACH ROW CALL counter_reset('c', 2, FALSE)",
    )
    .unwrap();
    let (code, _) = server_error(conn.query_drop("INSERT INTO events () VALUES ()").unwrap_err());
    assert_eq!(code, 1422, "the Galera reset holds a COMMIT");
    assert_eq!(total(&mut conn, "c"), Some(7), "and changed nothing");
}
