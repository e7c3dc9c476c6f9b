//! Counter names: compared as written, data, never SQL, and
//! refused where a character would make two names one counter.

use mysql::prelude::Queryable;
use mysql::{Params, PooledConn};
use slotted_counters::{CounterError, Counters, NewCounter, PackageOptions, StartDate};
use slotted_counters_core::names;
use slotted_counters_core::package::errno;

use super::{Package, call};
use crate::support::{self, Database, total};

pub(super) fn names_compare_as_written(package: &Package) {
    let db = package.database();
    let mut conn = db.conn();
    conn.query_drop("CALL counter_setup('countername100', 'd', NULL, NULL)").unwrap();
    conn.query_drop("CALL counter_increment('countername100')").unwrap();
    let (code, _) = call(&mut conn, "CALL counter_increment(?)", ("counterName100",)).unwrap_err();
    assert_eq!(code, errno::UNKNOWN_COUNTER, "another case is another name");
    conn.query_drop("CALL counter_setup('counterName100', 'd', NULL, 40)").unwrap();
    assert_eq!((total(&mut conn, "countername100"), total(&mut conn, "counterName100")), (Some(1), Some(40)));
    conn.query_drop("CALL counter_delete('counterName100')").unwrap();
    assert_eq!((total(&mut conn, "countername100"), total(&mut conn, "counterName100")), (Some(1), None));
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

support::on_each_server!(
    the_client_knows_what_each_collation_ignores,
    names_with_unusable_characters_are_refused_by_every_routine_and_the_client,
    a_usual_name_never_runs_the_name_check_in_any_collation,
);

/// The routines ask `counter_name_problem` only of a name outside printable
/// ASCII (or with a quote, a backslash or a trailing space), so a usual
/// name pays nothing for the check: with the function dropped, a usual
/// name's writes still work, and an unusual one's meet 1305. In
/// a collation that ignores DEL (MySQL's `utf8mb4_unicode_ci` and
/// `utf8mb4_0900_ai_ci`), a search for DEL matches any name unless it
/// compares code points.
fn a_usual_name_never_runs_the_name_check_in_any_collation() {
    let mut collations = vec!["utf8mb4_bin", "utf8mb4_general_ci", "utf8mb4_unicode_ci"];
    if support::flavor() == support::Flavor::MySql {
        collations.push("utf8mb4_0900_ai_ci");
    }
    for collation in collations {
        let options = PackageOptions::builder().collation(collation).build().unwrap();
        let db = Database::new();
        support::install_package(&db, &options);
        let mut conn = db.conn();
        conn.query_drop("DROP FUNCTION counter_name_problem").unwrap();
        let usual = "page:42/a-b_c.d~e";
        for sql in ["CALL counter_setup(?, 'd', 4, 1)", "CALL counter_increment(?)", "CALL counter_add(?, 5)"]
        {
            call(&mut conn, sql, (usual,)).unwrap_or_else(|error| panic!("{collation}: {sql}: {error:?}"));
        }
        // Read from the table: a function's call loads every routine it
        // names, so counter_get fails without the check, whatever the name.
        let counted: Option<i64> = conn
            .exec_first("SELECT CAST(SUM(counter) AS SIGNED) FROM counters WHERE counter_name = ?", (usual,))
            .unwrap()
            .flatten();
        assert_eq!(counted, Some(7), "{collation}");
        for unusual in ["quote\"d", "caf\u{e9}", "del\u{7f}"] {
            let (code, message) = call(&mut conn, "CALL counter_increment(?)", (unusual,)).unwrap_err();
            assert_eq!(code, 1305, "{collation}: {unusual:?} runs the check: {message}");
        }
    }
}

/// The code points `collation` ignores on the test's server: those whose
/// weight is empty, from all of Unicode but the surrogates.
fn ignored_by_server(conn: &mut PooledConn, collation: &str) -> Vec<u32> {
    code_points_where(
        conn,
        &format!("WEIGHT_STRING(CONVERT(CHAR(n USING utf32) USING utf8mb4) COLLATE {collation}) = ''"),
    )
}

/// The code points `n`, from all of Unicode but the surrogates, for which
/// `condition` holds on the test's server, in order.
fn code_points_where(conn: &mut PooledConn, condition: &str) -> Vec<u32> {
    conn.query(format!(
        "WITH digit (d) AS (SELECT 0 UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 \
           UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 \
           UNION ALL SELECT 9 UNION ALL SELECT 10 UNION ALL SELECT 11 UNION ALL SELECT 12 UNION ALL SELECT 13 \
           UNION ALL SELECT 14 UNION ALL SELECT 15), \
         code (n) AS (SELECT d0.d + 16 * d1.d + 256 * d2.d + 4096 * d3.d + 65536 * d4.d + 1048576 * d5.d \
           FROM digit AS d0, digit AS d1, digit AS d2, digit AS d3, digit AS d4, \
                (SELECT 0 AS d UNION ALL SELECT 1) AS d5) \
         SELECT n FROM code WHERE n <= 1114111 AND n NOT BETWEEN 55296 AND 57343 AND {condition} ORDER BY n"
    ))
    .unwrap_or_else(|error| panic!("{condition}: {error}"))
}

/// The code points other than U+0020 that `collation` takes for a space on
/// the test's server, among those it does not ignore.
fn spaces_on_server(conn: &mut PooledConn, collation: &str) -> Vec<u32> {
    code_points_where(
        conn,
        &format!(
            "CONVERT(CHAR(n USING utf32) USING utf8mb4) COLLATE {collation} = _utf8mb4' ' AND n <> 32 \
             AND WEIGHT_STRING(CONVERT(CHAR(n USING utf32) USING utf8mb4) COLLATE {collation}) <> ''"
        ),
    )
}

/// The client's tables of what a collation ignores and takes for a space
/// hold exactly what the server reports, code point by code point.
fn the_client_knows_what_each_collation_ignores() {
    let db = Database::new();
    let mut conn = db.conn();
    let flat = |ranges: &[(u32, u32)]| -> Vec<u32> {
        ranges.iter().flat_map(|&(first, last)| first..=last).collect()
    };
    for collation in ["utf8mb4_unicode_ci", "utf8mb4_general_ci", "utf8mb4_bin"] {
        let ignored = names::ignored_by(collation).expect("a collation the client knows");
        assert_eq!(flat(ignored), ignored_by_server(&mut conn, collation), "ignored by {collation}");
        let spaces = names::spaces_in(collation).expect("a collation the client knows");
        assert_eq!(flat(spaces), spaces_on_server(&mut conn, collation), "spaces in {collation}");
    }
}

/// The parameters of a call for a name.
type ParamsOf = fn(&str) -> Params;

/// A name with a control character, a character the collation ignores or
/// a trailing space (or what the collation takes for one) would be another name for the counter without it (or
/// hide a character): every procedure refuses it with 9003, naming the
/// character, both functions read it as no counter, and the client refuses
/// it before sending anything. Tried with every character
/// `utf8mb4_unicode_ci` ignores and every control character, in the default
/// package and in the lazy one (whose calls would otherwise create
/// counters), both made with that collation.
fn names_with_unusable_characters_are_refused_by_every_routine_and_the_client() {
    let unicode_ci = || PackageOptions::builder().collation("utf8mb4_unicode_ci");
    let packages = [
        ("the default package in utf8mb4_unicode_ci", unicode_ci().build().unwrap()),
        (
            "the lazy package in utf8mb4_unicode_ci",
            unicode_ci().fixed_slots(64).auto_create(true).build().unwrap(),
        ),
    ];
    for (dir, options) in packages {
        let db = support::with_package(&options);
        let mut conn = db.conn();
        conn.query_drop("CALL counter_setup('xy', 'd', NULL, 7)").unwrap();
        let before = support::table(&mut conn);
        let ignored = ignored_by_server(&mut conn, "utf8mb4_unicode_ci");
        let controls = (0..0x20).chain(0x7f..0xa0);
        let mut unusable: Vec<(String, String)> = controls
            .map(|code| (code, "a control character"))
            .chain(
                ignored
                    .into_iter()
                    .filter(|code| !(0..0xa0).contains(code))
                    .map(|code| (code, "a character the collation ignores")),
            )
            .map(|(code, problem)| {
                let character = char::from_u32(code).expect("not a surrogate");
                (format!("x{character}y"), format!("counter name has {problem} (U+{code:04X})"))
            })
            .collect();
        for space in std::iter::once(32).chain(spaces_on_server(&mut conn, "utf8mb4_unicode_ci")) {
            let space = char::from_u32(space).expect("not a surrogate");
            unusable.push((format!("xy{space}"), "counter name has a trailing space".to_owned()));
        }
        let procedures: [(&str, ParamsOf); 8] = [
            ("CALL counter_setup(?, 'd', NULL, NULL)", |name| (name,).into()),
            ("CALL counter_increment(?)", |name| (name,).into()),
            ("CALL counter_add(?, 5)", |name| (name,).into()),
            ("CALL counter_add_many(?)", |name| (serde_json::json!({ name: 5 }).to_string(),).into()),
            ("CALL counter_reset(?, 0, TRUE)", |name| (name,).into()),
            ("CALL counter_resize(?, 2)", |name| (name,).into()),
            ("CALL counter_compact(?)", |name| (name,).into()),
            ("CALL counter_delete(?)", |name| (name,).into()),
        ];
        let lazy = options.auto_create();
        let mut routines_say = std::collections::HashMap::new();
        for (name, problem) in &unusable {
            for (sql, params) in &procedures {
                if lazy && sql.contains("resize") {
                    continue;
                }
                let (code, message) = call(&mut conn, sql, params(name)).expect_err(sql);
                assert_eq!(code, errno::INVALID_ARGUMENT, "{dir}: {sql} {name:?}: {message}");
                assert!(message.starts_with(problem.as_str()), "{dir}: {sql} {name:?}: {message}");
                routines_say.insert(name, message);
            }
            let reads: (Option<i64>, Option<i64>) =
                conn.exec_first("SELECT counter_get(?), counter_estimate(?)", (name, name)).unwrap().unwrap();
            assert_eq!(reads, (None, None), "{dir}: {name:?} reads as no counter");
        }
        assert_eq!(support::table(&mut conn), before, "{dir}: no refused call changed anything");

        let counters = Counters::builder(db.pool().clone()).package(&options).build().unwrap();
        let calls_sent = |conn: &mut PooledConn| -> u64 {
            let (_, count): (String, u64) =
                conn.query_first("SHOW SESSION STATUS LIKE 'Com_call_procedure'").unwrap().unwrap();
            count
        };
        let sent_before = calls_sent(&mut conn);
        for (name, problem) in &unusable {
            let coalesced = counters.coalescing().add(name, 1);
            let on = counters.on(&mut conn);
            for outcome in [
                on.increment(name),
                on.add_many([(name.as_str(), 1)]),
                on.setup(name, NewCounter::new("d")),
                on.reset(name, 0, StartDate::Keep),
                coalesced,
            ] {
                match outcome {
                    Err(CounterError::InvalidArgument { message, .. }) => {
                        assert!(message.starts_with(problem.as_str()), "{dir}: {name:?}: {message}");
                        // MariaDB writes a control character of an error's
                        // message as `\0001`, MySQL as it is.
                        if !name.contains(char::is_control) {
                            assert_eq!(
                                message, routines_say[name],
                                "{dir}: the client's refusal reads as the routines'"
                            );
                        }
                    }
                    other => panic!("{dir}: {name:?}: {other:?}"),
                }
            }
        }
        assert_eq!(calls_sent(&mut conn), sent_before, "{dir}: the client refused before sending a call");
        assert_eq!(support::table(&mut conn), before, "{dir}: the client sent nothing");
    }
}
