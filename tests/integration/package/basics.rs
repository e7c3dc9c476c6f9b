//! The documented behaviour of each routine: the walkthrough, installing
//! from the client, reinstalls, and every error.

use mysql::prelude::Queryable;
use mysql::{Params, Value};
use slotted_counters_core::Feature;
use slotted_counters_core::package::{self, errno};

use super::{Package, call};
use crate::support::{self, Flavor, flavor, release, slots_of, table, total};

pub(super) fn walkthrough_gives_documented_results(package: &Package) {
    let db = package.database();
    let mut conn = db.conn();
    let (test1_slots, test2_slots) = (package.slots(5), package.slots(10));
    let slots_arg =
        |slots: u32| if package.fixed_slots.is_some() { "NULL".to_owned() } else { slots.to_string() };

    conn.query_drop("call counter_setup('test1','test1',NULL,NULL)").unwrap();
    conn.query_drop(format!("call counter_setup('test2','test2',{},1000)", slots_arg(test2_slots))).unwrap();
    conn.query_drop(format!("call counter_setup('test3','test3',{},NULL)", slots_arg(1))).unwrap();

    let test1 = slots_of(&mut conn, "test1");
    assert_eq!(test1.keys().copied().collect::<Vec<_>>(), (1..=test1_slots).collect::<Vec<_>>());
    assert!(test1.values().all(|&value| value == 0), "{test1:?}");
    let test2 = slots_of(&mut conn, "test2");
    assert_eq!(test2.len(), test2_slots as usize);
    assert_eq!(test2[&1], 1000);
    assert!(test2.iter().filter(|(slot, _)| **slot != 1).all(|(_, value)| *value == 0));
    assert_eq!(slots_of(&mut conn, "test3").len(), package.slots(1) as usize);
    let descriptions: Vec<String> =
        conn.query("SELECT DISTINCT description FROM counters ORDER BY 1").unwrap();
    assert_eq!(descriptions, ["test1", "test2", "test3"]);

    for _ in 0..5 {
        conn.query_drop("call counter_increment('test2')").unwrap();
    }
    assert_eq!(total(&mut conn, "test2"), Some(1005));
    assert_eq!(slots_of(&mut conn, "test2").len(), test2_slots as usize, "increments add no rows");

    let start_before: String = conn
        .query_first("SELECT CAST(MIN(start_date) AS CHAR) FROM counters WHERE counter_name = 'test2'")
        .unwrap()
        .unwrap();
    conn.query_drop("DO SLEEP(1.1)").unwrap();
    conn.query_drop("call counter_reset('test2',1000,TRUE)").unwrap();
    assert_eq!(total(&mut conn, "test2"), Some(1000));
    let test2 = slots_of(&mut conn, "test2");
    assert_eq!(test2[&1], 1000);
    assert!(test2.iter().filter(|(slot, _)| **slot != 1).all(|(_, value)| *value == 0), "{test2:?}");
    let start_dates: Vec<String> = conn
        .query("SELECT DISTINCT CAST(start_date AS CHAR) FROM counters WHERE counter_name = 'test2'")
        .unwrap();
    assert_eq!(start_dates.len(), 1, "one start date for all slots: {start_dates:?}");
    assert!(start_dates[0] > start_before, "reset with TRUE moves the start date");

    conn.query_drop("call counter_reset('test2',7,FALSE)").unwrap();
    let start_dates: Vec<String> = conn
        .query("SELECT DISTINCT CAST(start_date AS CHAR) FROM counters WHERE counter_name = 'test2'")
        .unwrap();
    assert_eq!(start_dates, [start_dates[0].clone()]);
    assert_eq!(total(&mut conn, "test2"), Some(7));

    conn.query_drop("call counter_delete('test2')").unwrap();
    assert!(slots_of(&mut conn, "test2").is_empty());
    assert_eq!(total(&mut conn, "test2"), None);
    assert_eq!(total(&mut conn, "test1"), Some(0), "other counters are untouched");
}

/// What a DBA does: the server's command-line client reads setup.sql from
/// another working directory, by redirection and by SOURCE.
pub(super) fn client_installs_setup_sql_from_another_folder(package: &Package) {
    let elsewhere = tempfile::tempdir().unwrap();
    // Where the client can read it: inside the chroot, for MySQL's.
    let readable = release().visible_tempdir("slotted-counters-source-").unwrap();
    let setup_sql = readable.path().join("setup.sql");
    std::fs::copy(package.setup_sql(), &setup_sql).unwrap();
    for how in ["redirect", "source"] {
        let db = package.empty_database();
        let mut client = db.client();
        client.current_dir(elsewhere.path());
        let output = if how == "redirect" {
            client.stdin(std::fs::File::open(&setup_sql).unwrap()).output()
        } else {
            // MySQL 9's client runs its own commands, SOURCE among them,
            // only in interactive sessions unless given --commands; without
            // it, SOURCE goes to the server (1064).
            if flavor() == Flavor::MySql {
                client.arg("--commands");
            }
            client.arg("-e").arg(format!("SOURCE {}", release().inner_path(&setup_sql).display())).output()
        }
        .expect("run the client");
        assert!(output.status.success(), "{how}: {}", String::from_utf8_lossy(&output.stderr));
        // Nothing but the warnings newer clients add about their own
        // settings: MariaDB 11.8's says it does not verify the server's
        // certificate for a password given in MYSQL_PWD.
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.lines().all(|line| line.starts_with("WARNING: ") || line.is_empty()),
            "{how}: {stderr}"
        );

        let mut conn = db.conn();
        call(&mut conn, "CALL counter_setup(?, ?, ?, ?)", ("page", "hits", None::<u32>, 41)).unwrap();
        conn.query_drop("CALL counter_increment('page')").unwrap();
        assert_eq!(total(&mut conn, "page"), Some(42), "{how}");
        assert_eq!(support::routines_in(&mut conn), package.routines(), "{how}");
    }
}

pub(super) fn sourcing_setup_twice_keeps_every_count(package: &Package) {
    let db = package.own_database();
    let mut conn = db.conn();
    call(&mut conn, "CALL counter_setup(?, ?, ?, ?)", ("kept", "d", package.slots(8), 5)).unwrap();
    for _ in 0..20 {
        conn.query_drop("CALL counter_increment('kept')").unwrap();
    }
    let before = table(&mut conn);

    package.install(&db);
    let output = db.client().stdin(std::fs::File::open(package.setup_sql()).unwrap()).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));

    assert_eq!(table(&mut conn), before);
    assert_eq!(total(&mut conn, "kept"), Some(25));
    conn.query_drop("CALL counter_increment('kept')").unwrap();
    assert_eq!(total(&mut conn, "kept"), Some(26));
}

pub(super) fn errors_name_the_counter_and_change_nothing(package: &Package) {
    let db = package.database();
    let mut conn = db.conn();
    call(&mut conn, "CALL counter_setup(?, ?, ?, ?)", ("exists", "d", package.slots(3), 9)).unwrap();
    let before = table(&mut conn);

    let setup = "CALL counter_setup(?, ?, ?, ?)";
    let long_name = "n".repeat(129);
    let mut cases: Vec<(&str, Params, u16, String)> = vec![
        (
            setup,
            (None::<&str>, "d", None::<u32>, None::<i64>).into(),
            errno::INVALID_ARGUMENT,
            "counter name must not be NULL or empty".into(),
        ),
        (
            setup,
            ("", "d", None::<u32>, None::<i64>).into(),
            errno::INVALID_ARGUMENT,
            "counter name must not be NULL or empty".into(),
        ),
        (
            setup,
            ("   ", "d", None::<u32>, None::<i64>).into(),
            errno::INVALID_ARGUMENT,
            "counter name must not be NULL or empty".into(),
        ),
        (
            setup,
            (long_name.as_str(), "d", None::<u32>, None::<i64>).into(),
            errno::INVALID_ARGUMENT,
            format!("counter name is longer than 128 characters: '{}", &long_name[..83]),
        ),
        // A refusal is cut to 128 characters, counted as characters: the
        // 45 of its words and quote, and 83 of the name.
        (
            "CALL counter_add(?, ?)",
            ("é".repeat(200), 1).into(),
            errno::INVALID_ARGUMENT,
            format!("counter name is longer than 128 characters: '{}", "é".repeat(83)),
        ),
        (
            setup,
            ("wordy", "x".repeat(256), None::<u32>, None::<i64>).into(),
            errno::INVALID_ARGUMENT,
            "description is longer than 255 characters, for counter: 'wordy'".into(),
        ),
        (
            setup,
            ("exists", "d", None::<u32>, None::<i64>).into(),
            errno::ALREADY_EXISTS,
            "counter already exists: 'exists'".into(),
        ),
        (
            "CALL counter_increment(?)",
            ("missing",).into(),
            errno::UNKNOWN_COUNTER,
            "unknown counter: 'missing'".into(),
        ),
        (
            "CALL counter_increment(?)",
            (None::<&str>,).into(),
            errno::UNKNOWN_COUNTER,
            "unknown counter: NULL".into(),
        ),
        (
            "CALL counter_add(?, ?)",
            ("missing", -3).into(),
            errno::UNKNOWN_COUNTER,
            "unknown counter: 'missing'".into(),
        ),
        (
            "CALL counter_add(?, ?)",
            ("missing", 0).into(),
            errno::UNKNOWN_COUNTER,
            "unknown counter: 'missing'".into(),
        ),
        (
            "CALL counter_add(?, ?)",
            ("exists", None::<i64>).into(),
            errno::INVALID_ARGUMENT,
            "delta must not be NULL, for counter: 'exists'".into(),
        ),
        (
            "CALL counter_reset(?, ?, ?)",
            ("missing", 1, true).into(),
            errno::UNKNOWN_COUNTER,
            "unknown counter: 'missing'".into(),
        ),
        (
            "CALL counter_delete(?)",
            ("missing",).into(),
            errno::UNKNOWN_COUNTER,
            "unknown counter: 'missing'".into(),
        ),
    ];
    match package.fixed_slots {
        Some(fixed) => cases.push((
            setup,
            ("ten", "d", 10, None::<i64>).into(),
            errno::INVALID_ARGUMENT,
            format!(
                "slots must be NULL or {fixed} (this package has fixed slots), not 10, for counter: 'ten'"
            ),
        )),
        None => {
            for slots in [0, -1, 1025] {
                cases.push((
                    setup,
                    ("bad", "d", slots, None::<i64>).into(),
                    errno::INVALID_ARGUMENT,
                    format!(
                        "slots must be a whole number between 1 and 1024, not {slots}, for counter: 'bad'"
                    ),
                ));
            }
        }
    }

    for (sql, params, code, message) in cases {
        let shown = format!("{sql} {params:?}");
        match conn.exec_drop(sql, params).expect_err(&shown) {
            mysql::Error::MySqlError(error) => {
                assert_eq!((error.code, error.message.as_str()), (code, message.as_str()), "{shown}");
                // What JDBC drivers read as a permanent data error (see the
                // `languages` tests), not 45000.
                assert_eq!(error.state, package::REFUSAL_SQLSTATE, "{shown}");
            }
            other => panic!("{shown}: {other}"),
        }
        assert_eq!(table(&mut conn), before, "{shown} changed the table");
    }

    // A delta of 0 on an existing counter is a harmless no-op.
    call(&mut conn, "CALL counter_add(?, ?)", ("exists", 0)).unwrap();
    assert_eq!(table(&mut conn), before);
}

pub(super) fn get_of_unknown_counter_is_null(package: &Package) {
    let db = package.database();
    let mut conn = db.conn();
    call(&mut conn, "CALL counter_setup(?, ?, ?, ?)", ("known", "d", None::<u32>, 3)).unwrap();
    let row: (Option<i64>, Option<i64>, Option<i64>) = conn
        .query_first("SELECT counter_get('known'), counter_get('unknown'), counter_get(NULL)")
        .unwrap()
        .unwrap();
    assert_eq!(row, (Some(3), None, None));
}

/// Every number a routine takes is a whole number. A fraction is refused
/// with 9003, and changes nothing, however the client sends it: as a DOUBLE
/// (JavaScript's drivers send every number so), as a decimal literal, as a
/// string. The server would otherwise round it into the old BIGINT and INT
/// parameters: `counter_add('x', 1.5)` added 2. Whole numbers count however
/// they are sent; one past the ends of BIGINT is refused as no integer.
pub(super) fn fractional_numbers_are_refused(package: &Package) {
    let db = package.database();
    let mut conn = db.conn();
    call(&mut conn, "CALL counter_setup('n', 'd', ?, 7)", (package.slots(4),)).unwrap();
    let before = table(&mut conn);

    let slots_refusal = match package.fixed_slots {
        Some(fixed) => format!("slots must be NULL or {fixed} (this package has fixed slots), not "),
        None => "slots must be a whole number between 1 and 1024, not ".to_owned(),
    };
    // Each call, with `?` for the number, and how its refusal begins and ends.
    let mut calls = vec![
        ("CALL counter_add('n', ?)", "delta must be an integer, for counter: 'n'".to_owned(), "'n'"),
        ("CALL counter_reset('n', ?, FALSE)", "value must be an integer, for counter: 'n'".to_owned(), "'n'"),
        (
            "CALL counter_setup('m', 'd', NULL, ?)",
            "initial value must be an integer, for counter: 'm'".to_owned(),
            "'m'",
        ),
        ("CALL counter_setup('m', 'd', ?, NULL)", slots_refusal, "for counter: 'm'"),
    ];
    if package.fixed_slots.is_none() && package.has(Feature::Resize) {
        calls.push((
            "CALL counter_resize('n', ?)",
            "slots must be a whole number between 1 and 1024, not ".to_owned(),
            "for counter: 'n'",
        ));
    }
    for (sql, begins, ends) in &calls {
        for fraction in ["1.5", "-0.25", "0.00000000000000000001", "64.5"] {
            let double = Value::Double(fraction.parse().unwrap());
            let sent: [(&str, ServerOutcome); 3] = [
                ("DOUBLE", call(&mut conn, sql, (double,))),
                ("string", call(&mut conn, sql, (fraction,))),
                ("literal", conn.query_drop(sql.replace('?', fraction)).map_err(support::server_error)),
            ];
            for (form, outcome) in sent {
                let shown = format!("{sql} with {fraction} as {form}");
                let (code, message) = outcome.expect_err(&shown);
                assert_eq!(code, errno::INVALID_ARGUMENT, "{shown}: {message}");
                assert!(
                    message.starts_with(begins.as_str()) && message.ends_with(ends),
                    "{shown}: {message}"
                );
            }
        }
    }
    for out_of_range in ["9223372036854775808", "-9223372036854775809"] {
        let (code, message) =
            call(&mut conn, &format!("CALL counter_add('n', {out_of_range})"), ()).expect_err(out_of_range);
        assert_eq!(
            (code, message.as_str()),
            (errno::INVALID_ARGUMENT, "delta must be an integer, for counter: 'n'")
        );
    }
    assert_eq!(table(&mut conn), before, "no refused call changed anything");

    /// A call's outcome: the server's error number and message when refused.
    type ServerOutcome = Result<(), (u16, String)>;

    call(&mut conn, "CALL counter_add('n', ?)", (Value::Double(2.0),)).unwrap();
    call(&mut conn, "CALL counter_add('n', 3.0)", ()).unwrap();
    call(&mut conn, "CALL counter_add('n', ?)", ("4",)).unwrap();
    assert_eq!(total(&mut conn, "n"), Some(7 + 2 + 3 + 4), "whole numbers count however they are sent");
    let slots = Value::Double(f64::from(package.slots(3)));
    call(&mut conn, "CALL counter_setup('m', 'd', ?, ?)", (slots, Value::Double(-5.0))).unwrap();
    assert_eq!(
        (total(&mut conn, "m"), slots_of(&mut conn, "m").len()),
        (Some(-5), package.slots(3) as usize)
    );
    // The ends of BIGINT are whole numbers: what refuses them is the bound
    // on a slot (see `limits`), or the slot's sum leaving BIGINT (1690), not
    // the check of the number.
    for end in [i64::MAX, i64::MIN] {
        let (code, message) = call(&mut conn, "CALL counter_add('n', ?)", (end,)).unwrap_err();
        let bound = code == errno::INVALID_ARGUMENT && message.starts_with("a slot would pass ");
        assert!(bound || code == 1690, "{end}: {code} {message}");
    }
}
