//! `counter_add_many`: a JSON object of deltas applied by one statement, all
//! or nothing, one slot row locked per counter, and batches that cannot
//! deadlock on each other.

use std::thread;

use mysql::PooledConn;
use mysql::prelude::Queryable;
use serde_json::json;
use slotted_counters_core::package::{BATCH_LIMIT, batch_bytes, errno};

use super::{Package, call};
use crate::support::{self, Flavor, flavor, total};

fn add_many(conn: &mut PooledConn, deltas: &str) -> Result<(), (u16, String)> {
    call(conn, "CALL counter_add_many(?)", (deltas,))
}

fn setup(conn: &mut PooledConn, package: &Package, names: &[&str], slots: u32) {
    for name in names {
        call(conn, "CALL counter_setup(?, 'd', ?, NULL)", (name, package.slots(slots))).unwrap();
    }
}

fn totals(conn: &mut PooledConn, names: &[&str]) -> Vec<Option<i64>> {
    names.iter().map(|name| total(conn, name)).collect()
}

pub(super) fn add_many_adds_each_delta_to_its_counter(package: &Package) {
    let db = package.database();
    let mut conn = db.conn();
    setup(&mut conn, package, &["downloads", "likes", "名前 👍", "quote \" and \\ back"], 4);

    let deltas = json!({"downloads": 5, "likes": -3, "名前 👍": 7, "quote \" and \\ back": 2, "zero": 0});
    let (code, message) = add_many(&mut conn, &deltas.to_string()).unwrap_err();
    assert_eq!((code, message.as_str()), (errno::UNKNOWN_COUNTER, "unknown counter: 'zero'"));
    let deltas = json!({"downloads": 5, "likes": -3, "Downloads": 10});
    let (code, message) = add_many(&mut conn, &deltas.to_string()).unwrap_err();
    assert_eq!(
        (code, message.as_str()),
        (errno::UNKNOWN_COUNTER, "unknown counter: 'Downloads'"),
        "as written"
    );
    let deltas = json!({"downloads": 5, "likes": -3, "名前 👍": 7, "quote \" and \\ back": 2});
    add_many(&mut conn, &deltas.to_string()).unwrap();
    assert_eq!(
        totals(&mut conn, &["downloads", "likes", "名前 👍", "quote \" and \\ back"]),
        [Some(5), Some(-3), Some(7), Some(2)]
    );
    add_many(&mut conn, "{}").unwrap();
    // A delta past the bound: refused, nothing applied.
    add_many(&mut conn, r#"{"likes": 5, "downloads": 9223372036854775807}"#).unwrap_err();
    assert_eq!(total(&mut conn, "likes"), Some(-3), "an overflowing batch applied nothing");
    add_many(&mut conn, r#"{"likes": 0}"#).unwrap();
    assert_eq!(total(&mut conn, "likes"), Some(-3));
}

/// Every refusal names what is wrong, and applies nothing, in autocommit
/// mode and inside the caller's transaction, which stays open.
pub(super) fn add_many_is_all_or_nothing(package: &Package) {
    let db = package.database();
    let mut conn = db.conn();
    setup(&mut conn, package, &["a", "b"], 4);
    let too_many: serde_json::Map<String, serde_json::Value> =
        (0..=BATCH_LIMIT).map(|i| (format!("n{i}"), json!(1))).collect();
    let refused = [
        ("NULL".to_owned(), errno::INVALID_ARGUMENT, "deltas must be a JSON object"),
        ("'[1, 2]'".to_owned(), errno::INVALID_ARGUMENT, "deltas must be a JSON object"),
        ("'not json'".to_owned(), errno::INVALID_ARGUMENT, "deltas must be a JSON object"),
        (
            r#"'{"a": 1, "b": 1.5}'"#.to_owned(),
            errno::INVALID_ARGUMENT,
            "delta must be an integer, for counter: 'b'",
        ),
        (
            r#"'{"a": 1, "b": "5"}'"#.to_owned(),
            errno::INVALID_ARGUMENT,
            "delta must be an integer, for counter: 'b'",
        ),
        (
            r#"'{"a": 1, "b": 1e3}'"#.to_owned(),
            errno::INVALID_ARGUMENT,
            "delta must be an integer, for counter: 'b'",
        ),
        (
            r#"'{"a": 1, "b": 9223372036854775808}'"#.to_owned(),
            errno::INVALID_ARGUMENT,
            "delta must be an integer",
        ),
        (r#"'{"a": 1, "b": null}'"#.to_owned(), errno::INVALID_ARGUMENT, "delta must be an integer"),
        (
            format!("'{{\"a\": 1, \"{}\": 1}}'", "x".repeat(129)),
            errno::INVALID_ARGUMENT,
            "longer than 128 characters",
        ),
        (
            r#"'{"a": 1, "b": 1, "missing": 1}'"#.to_owned(),
            errno::UNKNOWN_COUNTER,
            "unknown counter: 'missing'",
        ),
        (
            format!("'{}'", serde_json::Value::Object(too_many)),
            errno::INVALID_ARGUMENT,
            "more than 4096 counters",
        ),
        (
            format!("'{}'", padded(r#"{"a": 1}"#, batch_bytes(128) + 1)),
            errno::INVALID_ARGUMENT,
            "deltas are longer than",
        ),
    ];
    for in_transaction in [false, true] {
        if in_transaction {
            conn.query_drop("START TRANSACTION").unwrap();
            call(&mut conn, "CALL counter_add('a', 100)", ()).unwrap();
        }
        for (deltas, code, message) in &refused {
            let error = conn.query_drop(format!("CALL counter_add_many({deltas})")).unwrap_err();
            let (got_code, got_message) = support::server_error(error);
            assert_eq!(got_code, *code, "{deltas}: {got_message}");
            assert!(got_message.contains(message), "{deltas}: {got_message}");
        }
        let expected = if in_transaction { Some(100) } else { Some(0) };
        assert_eq!(totals(&mut conn, &["a", "b"]), [expected, Some(0)], "in a transaction: {in_transaction}");
    }
    conn.query_drop("ROLLBACK").unwrap();
    assert_eq!(totals(&mut conn, &["a", "b"]), [Some(0), Some(0)]);
}

/// `object` with spaces before its closing brace, to `bytes` bytes.
fn padded(object: &str, bytes: u64) -> String {
    let (open, close) = object.split_at(object.len() - 1);
    format!("{open}{}{close}", " ".repeat(bytes as usize - object.len()))
}

support::on_each_server!(the_largest_batch_is_taken);

/// The largest batch is taken: as many counters as a batch may name, in as
/// many bytes as it may have; one byte more is refused, applying nothing.
/// (On the default package alone: its counters are made one slot each.)
fn the_largest_batch_is_taken() {
    let db = support::with_committed("generated");
    let mut conn = db.conn();
    let names: Vec<String> = (0..BATCH_LIMIT).map(|i| format!("c{i:05}-{}", "n".repeat(121))).collect();
    for chunk in names.chunks(512) {
        let values = vec!["(?, 'd', ?, 0)"; chunk.len()].join(", ");
        let params: Vec<mysql::Value> =
            chunk.iter().flat_map(|name| [name.as_str().into(), 1.into()]).collect();
        conn.exec_drop(
            format!("INSERT INTO counters (counter_name, description, counter_id, counter) VALUES {values}"),
            params,
        )
        .unwrap();
    }
    let object =
        serde_json::Value::Object(names.iter().map(|name| (name.clone(), json!(1))).collect()).to_string();
    let largest = padded(&object, batch_bytes(128));
    add_many(&mut conn, &largest).unwrap();
    let (code, message) = add_many(&mut conn, &padded(&object, batch_bytes(128) + 1)).unwrap_err();
    assert_eq!(
        (code, message.as_str()),
        (errno::INVALID_ARGUMENT, format!("deltas are longer than {} bytes", batch_bytes(128)).as_str())
    );
    let totals: (u64, i64) = conn
        .query_first("SELECT COUNT(DISTINCT counter_name), CAST(SUM(counter) AS SIGNED) FROM counters")
        .unwrap()
        .unwrap();
    assert_eq!(
        totals,
        (u64::from(BATCH_LIMIT), i64::from(BATCH_LIMIT)),
        "the largest batch once, the larger never"
    );
}

/// One slot row per counter, whatever the batch's size: another session,
/// probing every slot with `FOR UPDATE NOWAIT` while the batch's transaction
/// is open, finds exactly one locked slot per counter.
pub(super) fn add_many_locks_one_slot_per_counter(package: &Package) {
    let db = package.database();
    let mut conn = db.conn();
    let names: Vec<String> = (0..40).map(|i| format!("c{i:02}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    setup(&mut conn, package, &names, 16);
    let batch: serde_json::Map<String, serde_json::Value> =
        names.iter().map(|name| (name.to_string(), json!(3))).collect();
    let slots: Vec<(String, u32)> = conn
        .query("SELECT counter_name, counter_id FROM counters ORDER BY counter_name, counter_id")
        .unwrap();
    support::without_snapshot_isolation(&mut conn);
    let mut probe = db.conn();
    // What NOWAIT meets on a locked row: MariaDB reports a lock wait
    // timeout, MySQL an error of its own (ER_LOCK_NOWAIT).
    let locked_error = match flavor() {
        Flavor::MariaDb => 1205,
        Flavor::MySql => 3572,
    };
    for _ in 0..3 {
        conn.query_drop("START TRANSACTION").unwrap();
        add_many(&mut conn, &serde_json::Value::Object(batch.clone()).to_string()).unwrap();
        let mut locked: Vec<&str> = Vec::new();
        for (name, slot) in &slots {
            let sql = "SELECT 1 FROM counters WHERE counter_name = ? AND counter_id = ? FOR UPDATE NOWAIT";
            match probe.exec_drop(sql, (name, slot)) {
                Ok(()) => {}
                Err(error) => {
                    assert_eq!(support::server_error(error).0, locked_error, "{name} slot {slot}");
                    locked.push(name);
                }
            }
        }
        conn.query_drop("ROLLBACK").unwrap();
        assert_eq!(locked, names, "one locked slot per counter");
    }
}

/// Batches over the same counters, each naming them in another order, run
/// by many clients at once in autocommit mode: no deadlock, exact totals.
pub(super) fn concurrent_batches_do_not_deadlock(package: &Package) {
    const CLIENTS: usize = 16;
    const BATCHES: usize = 30;
    let db = package.database();
    let mut conn = db.conn();
    let names: Vec<String> = (0..12).map(|i| format!("shared{i:02}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    setup(&mut conn, package, &names, 2);

    let sent: Vec<Vec<i64>> = thread::scope(|scope| {
        let clients: Vec<_> = (0..CLIENTS)
            .map(|client| {
                let (db, names) = (&db, &names);
                scope.spawn(move || {
                    let mut conn = db.conn();
                    let mut sums = vec![0i64; names.len()];
                    for batch in 0..BATCHES {
                        // Keys in an order of this client's: reversed for odd
                        // clients, rotated by the batch number.
                        let mut order: Vec<usize> = (0..names.len()).collect();
                        if client % 2 == 1 {
                            order.reverse();
                        }
                        order.rotate_left(batch % names.len());
                        let text = order
                            .iter()
                            .map(|&i| format!("{}: {}", json!(names[i]), i + 1))
                            .collect::<Vec<_>>()
                            .join(", ");
                        add_many(&mut conn, &format!("{{{text}}}"))
                            .unwrap_or_else(|error| panic!("client {client}, batch {batch}: {error:?}"));
                        for &i in &order {
                            sums[i] += i as i64 + 1;
                        }
                    }
                    sums
                })
            })
            .collect();
        clients.into_iter().map(|client| client.join().expect("a client panicked")).collect()
    });

    for (i, name) in names.iter().enumerate() {
        assert_eq!(total(&mut conn, name), Some(sent.iter().map(|sums| sums[i]).sum::<i64>()), "{name}");
    }
}
