//! What a refusal says, written once: the generator places these words in
//! the routines' `SIGNAL`s, and the client's name rule and plain mode make
//! their refusals with them, so that a refusal reads the same whoever
//! makes it. A message about a counter ends with `: ` and the name as
//! SQL's `QUOTE()` writes it ([`about`]), cut to [`MESSAGE_LENGTH`]
//! characters as the routines cut theirs.
//!
//! The words go between single quotes in SQL: none holds a quote or a
//! backslash (a test holds that).

use crate::package::MESSAGE_LENGTH;

/// No counter has the name (errno 9001).
pub const UNKNOWN_COUNTER: &str = "unknown counter";
/// How an install refuses a package that lacks features the database has
/// (errno 9005), before it names them.
pub const LACKS_INSTALLED: &str = "this package lacks the installed features";
/// How an `uninstall.sql` refuses to leave behind the features of the
/// installed package that its own package lacks (errno 9005), before it
/// names them.
pub const UNINSTALL_LACKS_INSTALLED: &str = "this uninstall.sql would leave the installed features";
/// How an install refuses a server the package does not run on (errno
/// 9005): the routines use MySQL 8.0.19's row alias and, on MariaDB,
/// read `innodb_snapshot_isolation`, which came in 10.6.18, 10.11.8 and
/// releases of other branches (MDEV-35124).
pub const SERVER_UNSUPPORTED: &str = "the package needs MySQL 8.0.19 or later, or a MariaDB from 10.6.18 or 10.11.8 on (innodb_snapshot_isolation)";
/// How an install on MySQL refuses to replace routines whose grants the
/// installing account may not read, which their DROP would revoke (errno
/// 9005).
pub const GRANTS_UNREAD: &str = "cannot read mysql.procs_priv: replacing the routines may lose their grants";
/// `setup` of a name that a counter has (errno 9002).
pub const ALREADY_EXISTS: &str = "counter already exists";
/// `setup` of a name whose delete was interrupted after its slots went,
/// leaving its periods, buckets or other rows (errno 9002, as a counter
/// that exists: a second `counter_delete` finishes the delete).
pub const DELETE_UNFINISHED: &str =
    "counter already exists in part (its delete was interrupted: call counter_delete)";
/// A name a counter is created for, NULL or only spaces.
pub const BLANK_NAME: &str = "counter name must not be NULL or empty";
/// A name holding one of the characters below, which the message names.
pub const NAME_HAS: &str = "counter name has";
/// A character below U+0020 or from U+007F to U+009F, followed by its code
/// point: `(U+0009)`.
pub const CONTROL_CHARACTER: &str = "a control character";
/// A character whose weight in the collation is empty, followed by its
/// code point.
pub const IGNORED_CHARACTER: &str = "a character the collation ignores";
/// A name ending with a space, or a character the collation takes for one.
pub const TRAILING_SPACE: &str = "a trailing space";
/// What follows the words of a refusal about an argument other than the
/// name, before the name: `value must be an integer, for counter: 'a'`.
pub const FOR_COUNTER: &str = ", for counter";

/// A write's moment that is NULL or later than now: a late write
/// (`counter_add_at`) adds to buckets that have begun.
pub const AT_IN_FUTURE: &str = "the moment must be a UTC time no later than now";

/// A point read's moment later than the server's now by more than
/// [`crate::periods::READ_AHEAD_SECONDS`]: most often a local time passed
/// as UTC, which would read an empty bucket of the future.
pub fn read_too_far_ahead(seconds: i64) -> String {
    format!(
        "the moment must be a UTC time at most {seconds} seconds past now (a local time taken for UTC?), not"
    )
}

/// A UTC offset other than whole minutes from UTC-12:00 to UTC+14:00; what
/// was passed follows.
pub fn utc_offset_out_of_range(west_most: i16, east_most: i16) -> String {
    format!("utc offset must be NULL or a whole number of minutes from {west_most} to {east_most}, not")
}

/// A period tracked at one UTC offset asked to count at another, between
/// the period's offset and the one asked: its buckets, kept as they
/// started, cannot move.
pub const STARTS_AT_OFFSET: &str = "starts at UTC offset";
pub const OFFSET_STAYS: &str = "(minutes): untrack it (keep 0) before moving it to";

/// A write through the client's plain mode to a counter whose buckets
/// start at an offset from UTC, which only the routines place; the name
/// follows.
pub const PLAIN_COUNTS_AT_UTC: &str = "the plain mode counts periods at UTC only, and a period of this counter starts at another offset \
     (write it through the routines), for counter";

/// A time argument that is no moment the routines read: a date and time
/// of UTC without an offset, between the years [`crate::periods::FIRST_YEAR`]
/// and [`crate::periods::LAST_YEAR`] (which follow it); what was passed
/// follows.
pub const MOMENT_FORM: &str = "must be a UTC time YYYY-MM-DD[ hh:mm[:ss[.ffffff]]] without offset";

/// A write that would take a bucket of a period (which counts every write
/// of it, resets aside) past a BIGINT.
pub const BUCKET_FULL: &str = "the write would take a bucket of its period past a BIGINT";

/// A call of `counter_add_within_limit`, the triggers' own, with a NULL
/// argument, as `status` probes every routine (errno 9003).
pub const NULL_LIMITED_WRITE: &str = "a write to a limited bucket takes no NULL argument";

/// A read of a period the counter does not count in; the period follows.
pub const UNTRACKED_PERIOD: &str = "untracked period";

/// A write that would take a bounded counter's total past a bound (errno
/// 9004): `the write would pass the floor 0 (room left: 3), for counter:
/// 'stock'`, the bound named by [`FLOOR`] or [`CEILING`], its value, and
/// how far the total may still move toward it ([`ROOM_LEFT`]).
pub const WOULD_PASS_THE: &str = "the write would pass the";
/// The lower bound, as a refusal names it.
pub const FLOOR: &str = "floor";
/// The upper bound, as a refusal names it.
pub const CEILING: &str = "ceiling";
/// What precedes the room left in a refusal of errno 9004.
pub const ROOM_LEFT: &str = "room left";
/// A limit per period (`counter_limit`), as a refusal of errno 9004 names
/// it after the period: `the write would pass the day limit 1000 (room
/// left: 3, resets 2026-11-28 00:00:00), for counter: 'api'`.
pub const LIMIT: &str = "limit";
/// What precedes, in a refusal of a limit per period, the UTC moment its
/// bucket ends.
pub const RESETS: &str = "resets";

/// The bound a refusal of errno 9004 names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    Floor,
    Ceiling,
}

impl Limit {
    /// The bound's word in a refusal: [`FLOOR`] or [`CEILING`].
    pub fn word(self) -> &'static str {
        match self {
            Limit::Floor => FLOOR,
            Limit::Ceiling => CEILING,
        }
    }
}

/// The words of a refusal of errno 9004, before the name: the write would
/// pass `bound`, whose value is `value`, with `room` left toward it.
pub fn past_limit(bound: Limit, value: i64, room: u64) -> String {
    format!("{WOULD_PASS_THE} {} {value} ({ROOM_LEFT}: {room}){FOR_COUNTER}", bound.word())
}

/// Which bound a refusal of errno 9004 names, and the room it says was
/// left toward it, read back from its message by the grammar
/// [`past_limit`] writes (and the routines' SIGNALs, from the same words).
pub fn read_past_limit(message: &str) -> Option<(Limit, u64)> {
    let words = message.strip_prefix(WOULD_PASS_THE)?.trim_start();
    let bound = [Limit::Floor, Limit::Ceiling].into_iter().find(|bound| words.starts_with(bound.word()))?;
    let room = words.split_once(&format!("({ROOM_LEFT}: "))?.1;
    let digits = room.split_once(')')?.0;
    Some((bound, digits.parse().ok()?))
}

/// The words of a refusal of errno 9004 of a limit per period, before the
/// name, as the routines' SIGNAL writes them: the write would pass
/// `period`'s `limit`, with `room` left in the bucket, which ends at
/// `resets` (UTC, `YYYY-MM-DD hh:mm:ss`).
pub fn past_period_limit(period: &str, limit: i64, room: u64, resets: &str) -> String {
    format!("{WOULD_PASS_THE} {period} {LIMIT} {limit} ({ROOM_LEFT}: {room}, {RESETS} {resets}){FOR_COUNTER}")
}

/// A refusal of errno 9004 of a limit per period read back, by the
/// grammar the routines' SIGNAL writes: `the write would pass the day limit
/// 1000 (room left: 3, resets 2026-11-28 00:00:00), for counter: 'api'`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PastPeriodLimit<'a> {
    /// The period's name, as `counter_limit` takes it.
    pub period: &'a str,
    pub limit: i64,
    pub room: u64,
    /// The end of the bucket, UTC, as the server writes a `DATETIME`.
    pub resets: &'a str,
}

/// The limit per period a refusal of errno 9004 names, or `None` for a
/// refusal of a bound of the total, or any other text.
pub fn read_past_period_limit(message: &str) -> Option<PastPeriodLimit<'_>> {
    let words = message.strip_prefix(WOULD_PASS_THE)?.trim_start();
    let (period, words) = words.split_once(' ')?;
    let (limit, words) = words.strip_prefix(LIMIT)?.trim_start().split_once(" (")?;
    let (room, words) = words.strip_prefix(ROOM_LEFT)?.strip_prefix(": ")?.split_once(", ")?;
    let (resets, _) = words.strip_prefix(RESETS)?.trim_start().split_once(')')?;
    Some(PastPeriodLimit { period, limit: limit.parse().ok()?, room: room.parse().ok()?, resets })
}

/// New bounds that the counter's total is already outside of (errno
/// 9003); the total and the bounds follow.
pub const TOTAL_OUTSIDE_BOUNDS: &str = "the total is outside the bounds";

/// A floor above the ceiling (errno 9003).
pub const FLOOR_ABOVE_CEILING: &str = "the floor must not be above the ceiling";

/// A bound that is not a whole number within `limit` either way (errno
/// 9003); the bound follows.
pub fn bound_out_of_range(limit: i64) -> String {
    format!("a bound must be NULL or a whole number within {limit} either way, not")
}

/// A limit per period that is not a whole number from 0 to `largest`
/// (errno 9003); the limit follows.
pub fn limit_out_of_range(largest: i64) -> String {
    format!("a limit must be NULL or a whole number from 0 to {largest}, not")
}

/// A series of more buckets than a call reads.
pub fn series_too_long(limit: u32) -> String {
    format!("a series reads at most {limit} buckets")
}

/// A name longer than the package's `length` characters.
pub fn long_name(length: u32) -> String {
    format!("counter name is longer than {length} characters")
}

/// A description longer than `length` characters.
pub fn long_description(length: u32) -> String {
    format!("description is longer than {length} characters")
}

/// A slot count other than a fixed-slot package's `fixed`; the count asked
/// for follows.
pub fn slots_not_fixed(fixed: u32) -> String {
    format!("slots must be NULL or {fixed} (this package has fixed slots), not")
}

/// A slot count outside 1 to `max`; the count asked for follows.
pub fn slots_out_of_range(max: u32) -> String {
    format!("slots must be a whole number between 1 and {max}, not")
}

/// A write that would take a slot past `bound` or below its negative.
pub fn past_bound(bound: i64) -> String {
    format!("a slot would pass {bound} either way")
}

/// A name as the routines' messages show it: as SQL's `QUOTE()` writes it,
/// in single quotes, with a backslash before each backslash, single quote,
/// NUL (`\0`) and Control+Z (`\Z`).
pub fn quoted(name: &str) -> String {
    let mut quoted = String::with_capacity(name.len() + 2);
    quoted.push('\'');
    for character in name.chars() {
        match character {
            '\\' | '\'' => quoted.extend(['\\', character]),
            '\0' => quoted.push_str("\\0"),
            '\u{1a}' => quoted.push_str("\\Z"),
            character => quoted.push(character),
        }
    }
    quoted.push('\'');
    quoted
}

/// The counter a refusal's message names, read back by the grammar
/// [`about`] writes: the message ends with `: ` and a single-quoted string
/// whose quotes and backslashes are escaped ([`quoted`]). `None` for a
/// message about no counter, or one cut at [`MESSAGE_LENGTH`] characters
/// before the name's closing quote.
pub fn read_counter_name(message: &str) -> Option<String> {
    // A value quoted before the name (`untracked period 'hour'`) follows
    // no `: `, and the name's own quotes are escaped: the name is the one
    // `: '...'` that reaches the end of the message.
    message.match_indices(": '").find_map(|(start, opening)| unquoted(&message[start + opening.len()..]))
}

/// The text of a quoted string's body, `rest` being what follows its
/// opening quote: `None` unless its closing quote ends `rest`.
fn unquoted(rest: &str) -> Option<String> {
    let mut name = String::with_capacity(rest.len());
    let mut characters = rest.chars();
    while let Some(character) = characters.next() {
        match character {
            '\\' => name.push(match characters.next()? {
                '0' => '\0',
                'Z' => '\u{1a}',
                escaped => escaped,
            }),
            '\'' => return characters.next().is_none().then_some(name),
            character => name.push(character),
        }
    }
    None
}

/// A refusal's message about counter `name` as the routines write it:
/// `words`, `: ` and the name [`quoted`], cut to [`MESSAGE_LENGTH`]
/// characters.
pub fn about(words: &str, name: &str) -> String {
    format!("{words}: {}", quoted(name)).chars().take(MESSAGE_LENGTH as usize).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_period_limits_refusal_reads_back_as_written() {
        let message = about(&past_period_limit("day", 1000, 3, "2026-11-28 00:00:00"), "api");
        assert_eq!(
            message,
            "the write would pass the day limit 1000 (room left: 3, resets 2026-11-28 00:00:00), for counter: 'api'"
        );
        let read = read_past_period_limit(&message).unwrap();
        assert_eq!(
            read,
            PastPeriodLimit { period: "day", limit: 1000, room: 3, resets: "2026-11-28 00:00:00" }
        );
    }

    #[test]
    fn the_counter_a_refusal_names_reads_back_unless_the_message_was_cut() {
        for name in ["a", r"it's: 'x' \ y", "nul\0 sub\u{1a}", "名前 😀", ": ''", ""] {
            for words in
                [UNKNOWN_COUNTER, &past_limit(Limit::Floor, 0, 3), "untracked period 'hour', for counter"]
            {
                let message = about(words, name);
                assert_eq!(read_counter_name(&message).as_deref(), Some(name), "{message}");
            }
        }
        let cut = about(UNKNOWN_COUNTER, &"n".repeat(200));
        assert_eq!(read_counter_name(&cut), None, "a name cut at the message's length");
        let cut_after_an_escape = about(UNKNOWN_COUNTER, &format!("{}'", "n".repeat(108)));
        assert!(cut_after_an_escape.ends_with(r"\'"));
        assert_eq!(read_counter_name(&cut_after_an_escape), None, "an escaped quote closes nothing");
        assert_eq!(read_counter_name("deltas name more than 4096 counters"), None);
        assert_eq!(read_counter_name("at must be ..., not '2026-13-01'"), None, "a value, not a name");
    }

    #[test]
    fn names_are_quoted_as_sql_quotes_them() {
        assert_eq!(quoted(r"it's a \ name"), r"'it\'s a \\ name'");
        assert_eq!(quoted("nul\0 and sub\u{1a}"), r"'nul\0 and sub\Z'");
        assert_eq!(quoted("名前 😀"), "'名前 😀'");
    }

    #[test]
    fn a_refusal_is_cut_to_the_routines_message_length_in_characters() {
        let message = about(&long_name(50), &"é".repeat(200));
        assert_eq!(message.chars().count(), MESSAGE_LENGTH as usize);
        assert!(message.starts_with("counter name is longer than 50 characters: 'éé"));
        assert_eq!(about(UNKNOWN_COUNTER, "a"), "unknown counter: 'a'");
    }

    #[test]
    fn a_refusal_of_a_bound_reads_back_its_bound_and_room() {
        let message = about(&past_limit(Limit::Floor, -5, 12), "stock (room left: 99)");
        assert_eq!(
            message,
            "the write would pass the floor -5 (room left: 12), for counter: 'stock (room left: 99)'"
        );
        assert_eq!(read_past_limit(&message), Some((Limit::Floor, 12)));
        let ceiling = about(&past_limit(Limit::Ceiling, i64::MAX, u64::MAX), "quota");
        assert_eq!(read_past_limit(&ceiling), Some((Limit::Ceiling, u64::MAX)));
        assert_eq!(read_past_limit("unknown counter: 'a'"), None);
    }

    #[test]
    fn a_limit_per_period_reads_back_from_its_refusal_and_no_bound_does() {
        let message = "the write would pass the day limit 1000 (room left: 3, resets 2026-11-28 00:00:00), for counter: 'a'";
        assert_eq!(
            read_past_period_limit(message),
            Some(PastPeriodLimit { period: "day", limit: 1000, room: 3, resets: "2026-11-28 00:00:00" })
        );
        let bound = about(&past_limit(Limit::Floor, 0, 3), "a");
        assert_eq!(read_past_period_limit(&bound), None);
        assert_eq!(read_past_limit(message), None, "a limit is no bound of the total");
    }

    /// The probe signals it whole: MySQL refuses a MESSAGE_TEXT longer than
    /// the message length.
    #[test]
    fn the_unsupported_server_refusal_fits_a_message() {
        assert!(SERVER_UNSUPPORTED.chars().count() + ": nothing changed".len() <= MESSAGE_LENGTH as usize);
    }

    #[test]
    fn no_words_would_end_the_sql_string_they_are_placed_in() {
        let words = [
            UNKNOWN_COUNTER,
            ALREADY_EXISTS,
            BLANK_NAME,
            NAME_HAS,
            CONTROL_CHARACTER,
            IGNORED_CHARACTER,
            TRAILING_SPACE,
            FOR_COUNTER,
            AT_IN_FUTURE,
            MOMENT_FORM,
            BUCKET_FULL,
            UNTRACKED_PERIOD,
            WOULD_PASS_THE,
            FLOOR,
            CEILING,
            ROOM_LEFT,
            TOTAL_OUTSIDE_BOUNDS,
            FLOOR_ABOVE_CEILING,
            &bound_out_of_range(1),
            &past_limit(Limit::Floor, -1, 1),
            &long_name(1),
            &long_description(1),
            &slots_not_fixed(1),
            &slots_out_of_range(1),
            &past_bound(1),
            &series_too_long(1),
            &read_too_far_ahead(1),
            &utc_offset_out_of_range(-1, 1),
            STARTS_AT_OFFSET,
            OFFSET_STAYS,
            PLAIN_COUNTS_AT_UTC,
            LACKS_INSTALLED,
            UNINSTALL_LACKS_INSTALLED,
            GRANTS_UNREAD,
            SERVER_UNSUPPORTED,
            DELETE_UNFINISHED,
        ];
        for words in words {
            assert!(!words.contains(['\'', '\\']), "{words}");
        }
    }
}
