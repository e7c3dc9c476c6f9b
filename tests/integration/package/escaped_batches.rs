//! `counter_add_many` reads the batches other languages' JSON encoders
//! write: Python's `json.dumps` escapes every non-ASCII character, Go's
//! `encoding/json` escapes `& < >`, PHP's `json_encode` escapes `/`. A
//! property test sends batches whose keys are drawn from a wide space of
//! characters, each written in a form chosen at random (raw, `\uXXXX` in
//! either case, a surrogate pair, a short escape), with whitespace between
//! the tokens. Each batch must add exactly its decoded keys' deltas, or, when
//! one of its deltas or names is invalid, be refused with 9003 and apply
//! nothing. MariaDB used to skip an escaped key in silence.

use std::fmt::Write;

use mysql::PooledConn;
use mysql::prelude::Queryable;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use slotted_counters_core::package::errno;

use super::Package;
use crate::support::{self, Database, Flavor, flavor, total};

/// What key names are made of: ASCII, what encoders escape (quotes,
/// backslash, slash, `& < >`, JavaScript's line separators), and characters
/// of two, three and four UTF-8 bytes (four: outside the Basic Multilingual
/// Plane, a surrogate pair when escaped).
const CHARACTERS: &[char] = &[
    'a',
    'Z',
    '7',
    '-',
    '_',
    ' ',
    '.',
    '"',
    '\\',
    '/',
    '&',
    '<',
    '>',
    '\'',
    'é',
    'ß',
    'Ω',
    '中',
    '€',
    '\u{2028}',
    '\u{2029}',
    '\u{a0}',
    '😀',
    '𝄞',
    '\u{10ffff}',
];

/// Characters no name may hold, each refusing its batch: control
/// characters (among them those with a short escape: `\b \f \n \r \t`).
const UNUSABLE: &[char] = &['\u{0}', '\u{1}', '\u{8}', '\t', '\n', '\u{c}', '\r', '\u{1f}', '\u{7f}'];

/// Characters `utf8mb4_unicode_ci` ignores, which a package of that
/// collation refuses in names too.
const IGNORED_BY_UNICODE_CI: &[char] = &['\u{200b}', '\u{feff}'];

/// Deltas no routine may take: each refuses its whole batch.
const INVALID_DELTAS: &[&str] = &[
    "1.5",
    "-0.25",
    "1.0",
    "1e3",
    "1E0",
    "\"5\"",
    "null",
    "true",
    "[1]",
    "{}",
    "9223372036854775808",
    "-9223372036854775809",
    "18446744073709551615",
];

/// How many counters the test makes, and how many batches it sends.
const COUNTERS: usize = 48;
const BATCHES: usize = 40;

/// One key of a batch.
struct Entry {
    /// The key, before it is encoded.
    key: String,
    /// The delta as JSON text.
    delta: String,
    /// The counter it adds to, and how much; `None` where the batch must be
    /// refused.
    adds: Option<(usize, i64)>,
}

/// The report's case: a key with `&` written as Go's `encoding/json`
/// writes it. MariaDB skipped it without a word.
pub(super) fn an_escaped_key_counts(package: &Package) {
    let db = package.database();
    let mut conn = db.conn();
    conn.exec_drop("CALL counter_setup(?, NULL, ?, NULL)", ("dbg&x", package.fixed_slots)).unwrap();
    conn.exec_drop("CALL counter_add_many(?)", (r#"{"dbg\u0026x": 5}"#,)).unwrap();
    assert_eq!(total(&mut conn, "dbg&x"), Some(5));
}

pub(super) fn add_many_adds_exactly_the_decoded_keys(package: &Package) {
    batches_add_exactly_their_decoded_keys(&package.database(), package.fixed_slots, false);
}

/// The property test, on a database with a package installed, whose
/// counters it creates with `counter_setup`: with `fixed_slots` where the
/// package has them, else with 2 slots, so that two keys of one counter
/// that the routine failed to sum would often aim at one slot, where one
/// update hides the other. Where the package is in `utf8mb4_unicode_ci`
/// (`unicode_ci`), a batch may name a counter twice, in two cases, which
/// the routine sums, and a name with a character it ignores is refused.
pub(crate) fn batches_add_exactly_their_decoded_keys(
    db: &Database,
    fixed_slots: Option<u32>,
    unicode_ci: bool,
) {
    let seed: u64 = rand::random();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut conn = db.conn();
    let names: Vec<String> = (0..COUNTERS).map(|i| name(&mut rng, i)).collect();
    for name in &names {
        conn.exec_drop("CALL counter_setup(?, 'escaped', ?, NULL)", (name, fixed_slots.unwrap_or(2)))
            .unwrap_or_else(|error| panic!("seed {seed}: setup of {name:?}: {error}"));
    }
    let mut expected = vec![0i64; COUNTERS];

    for batch in 0..BATCHES {
        let size = rng.random_range(1..=12);
        let mut entries: Vec<Entry> = rand::seq::index::sample(&mut rng, COUNTERS, size)
            .iter()
            .map(|counter| {
                let delta = rng.random_range(-1_000_000_000_000i64..=1_000_000_000_000);
                Entry { key: names[counter].clone(), delta: delta.to_string(), adds: Some((counter, delta)) }
            })
            .collect();
        // The same counter under another key that the collation makes equal:
        // the routine sums the two.
        if unicode_ci && rng.random_bool(0.3) {
            let counter = entries[0].adds.expect("a valid entry").0;
            let key = names[counter].to_ascii_uppercase();
            let delta = rng.random_range(-1_000i64..=1_000);
            entries.push(Entry { key, delta: delta.to_string(), adds: Some((counter, delta)) });
        }
        // One batch in three carries one thing no routine may take.
        let refusal = match rng.random_range(0..9) {
            0 => {
                let entry = &mut entries[rng.random_range(0..size)];
                entry.delta = INVALID_DELTAS[rng.random_range(0..INVALID_DELTAS.len())].to_owned();
                entry.adds = None;
                Some("delta must be an integer")
            }
            1 => {
                let key = names[0].chars().chain(std::iter::repeat('y')).take(129).collect();
                entries.push(Entry { key, delta: "1".to_owned(), adds: None });
                Some("counter name is longer than 128 characters")
            }
            2 => {
                let unusable =
                    if unicode_ci { [UNUSABLE, IGNORED_BY_UNICODE_CI].concat() } else { UNUSABLE.to_vec() };
                let key = format!("k{}", unusable[rng.random_range(0..unusable.len())]);
                entries.push(Entry { key, delta: "1".to_owned(), adds: None });
                Some("counter name has ")
            }
            _ => None,
        };
        let text = encode(&mut rng, &entries);
        let outcome = conn.exec_drop("CALL counter_add_many(?)", (&text,)).map_err(support::server_error);
        match (refusal, outcome) {
            (None, Ok(())) => {
                for (counter, delta) in entries.iter().filter_map(|entry| entry.adds) {
                    expected[counter] += delta;
                }
            }
            (Some(reason), Err((code, message))) => {
                assert_eq!(code, errno::INVALID_ARGUMENT, "seed {seed}, batch {batch}: {message}\n{text}");
                assert!(message.starts_with(reason), "seed {seed}, batch {batch}: {message}\n{text}");
            }
            (refusal, outcome) => {
                panic!(
                    "seed {seed}, batch {batch}: expected a refusal for {refusal:?}, got {outcome:?}\n{text}"
                )
            }
        }
        let totals = totals(&mut conn, &names);
        for (counter, name) in names.iter().enumerate() {
            assert_eq!(
                totals[counter],
                Some(expected[counter]),
                "seed {seed}, batch {batch}: {name:?}\n{text}"
            );
        }
    }
}

/// Every counter's `counter_get`, in one round trip.
fn totals(conn: &mut PooledConn, names: &[String]) -> Vec<Option<i64>> {
    let sql = format!("SELECT {}", vec!["counter_get(?)"; names.len()].join(", "));
    let row: mysql::Row = conn.exec_first(sql, names.to_vec()).expect("counter_get").expect("one row");
    row.unwrap().into_iter().map(mysql::from_value).collect()
}

/// A name of counter `index`: a prefix of its own, which no collation
/// can confuse with another's (digits in the same places), then characters
/// drawn from [`CHARACTERS`], one name in four exactly 128 characters long,
/// and none ending with a space.
fn name(rng: &mut StdRng, index: usize) -> String {
    let length = if rng.random_bool(0.25) { 128 } else { rng.random_range(6..128) };
    let mut name = format!("k{index:04}x");
    while name.chars().count() < length {
        name.push(CHARACTERS[rng.random_range(0..CHARACTERS.len())]);
    }
    // The collation ignores a trailing space, and takes U+00A0 for one.
    if name.ends_with([' ', '\u{a0}']) {
        name.pop();
        name.push('.');
    }
    name
}

/// A JSON object of `entries`, each character of each key written in a form chosen at random, with whitespace between
/// tokens.
fn encode(rng: &mut StdRng, entries: &[Entry]) -> String {
    let mut text = String::new();
    let space = |rng: &mut StdRng, text: &mut String| {
        for _ in 0..rng.random_range(0..3) {
            text.push([' ', '\t', '\n', '\r'][rng.random_range(0..4)]);
        }
    };
    text.push('{');
    for (i, entry) in entries.iter().enumerate() {
        if i > 0 {
            text.push(',');
        }
        space(rng, &mut text);
        text.push('"');
        for character in entry.key.chars() {
            write_character(rng, &mut text, character);
        }
        text.push('"');
        space(rng, &mut text);
        text.push(':');
        space(rng, &mut text);
        text.push_str(&entry.delta);
        space(rng, &mut text);
    }
    text.push('}');
    text
}

/// One character of a JSON string: raw where JSON allows it, or `\uXXXX`
/// (upper or lower case hex; a surrogate pair outside the BMP), or its
/// short escape where it has one.
fn write_character(rng: &mut StdRng, text: &mut String, character: char) {
    let short = match character {
        '"' => Some("\\\""),
        '\\' => Some("\\\\"),
        '/' => Some("\\/"),
        '\u{8}' => Some("\\b"),
        '\u{c}' => Some("\\f"),
        '\n' => Some("\\n"),
        '\r' => Some("\\r"),
        '\t' => Some("\\t"),
        _ => None,
    };
    let raw_allowed = !matches!(character, '"' | '\\') && u32::from(character) >= 0x20;
    match rng.random_range(0..3) {
        0 if raw_allowed => text.push(character),
        1 if short.is_some() => text.push_str(short.expect("checked")),
        _ => {
            let upper = rng.random_bool(0.5);
            let mut units = [0u16; 2];
            for unit in character.encode_utf16(&mut units) {
                if upper {
                    write!(text, "\\u{unit:04X}").expect("write to a String");
                } else {
                    write!(text, "\\u{unit:04x}").expect("write to a String");
                }
            }
        }
    }
}

/// A name written twice in one object. MySQL's JSON parser keeps the last
/// (as RFC 8259 lets a parser do); MariaDB's JSON functions keep both, and
/// the routine refuses the batch. Either way no delta is applied twice, and
/// the other keys are applied or refused with it.
pub(super) fn a_name_written_twice_never_counts_twice(package: &Package) {
    let db = package.database();
    let conn = &mut db.conn();
    conn.query_drop("CALL counter_setup('twice', 'd', NULL, NULL)").unwrap();
    conn.query_drop("CALL counter_setup('other', 'd', NULL, NULL)").unwrap();
    for batch in [r#"{"twice": 1, "other": 10, "twice": 2}"#, r#"{"twice": 1, "other": 10, "\u0074wice": 2}"#]
    {
        let before = (total(conn, "twice").unwrap(), total(conn, "other").unwrap());
        let outcome = conn.exec_drop("CALL counter_add_many(?)", (batch,)).map_err(support::server_error);
        let after = (total(conn, "twice").unwrap(), total(conn, "other").unwrap());
        match flavor() {
            Flavor::MySql => {
                outcome.unwrap();
                assert_eq!(after, (before.0 + 2, before.1 + 10), "{batch}: the last one counts");
            }
            Flavor::MariaDb => {
                let (code, message) = outcome.unwrap_err();
                assert_eq!(code, errno::INVALID_ARGUMENT, "{batch}");
                assert!(message.starts_with("deltas name a counter twice"), "{batch}: {message}");
                assert_eq!(after, before, "{batch}: nothing applied");
            }
        }
    }
}
