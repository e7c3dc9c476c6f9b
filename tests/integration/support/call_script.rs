//! One script of calls that every client, mode and package must answer
//! alike, call by call: [`script_of_calls`] and
//! [`awaited_script_of_calls`] run it, [`assert_alike`] compares two runs,
//! and [`assert_anchors`] holds one run to answers worked out by hand.

use std::ops::Bound;
use std::time::{Duration, SystemTime};

use mysql::Pool;
use slotted_counters::connections::{AsyncConnections, SyncConnections};
use slotted_counters::{AsyncCounters, Counters, Keep, NewCounter, PackageOptions, Period, StartDate};

/// Answers of [`script_of_calls`] worked out by hand, so that two modes
/// wrong alike cannot agree; `lazy`: of a package that makes a counter of a
/// write's name.
pub fn assert_anchors(expected: &[(String, String)], lazy: bool) {
    let answers = |call: &str| -> Vec<&str> {
        expected.iter().filter(|(made, _)| made == call).map(|(_, answer)| answer.as_str()).collect()
    };
    assert_eq!(answers("c.get_period(\"a\", Period::Hour, now - hour)"), ["Ok(Some(2))"]);
    assert_eq!(answers("c.get_range(\"a\", Period::Day, now - 2 * day, now + day)"), ["Ok(Some(7))"]);
    let first = if lazy { "Ok(Some(13))" } else { "Ok(Some(12))" };
    assert_eq!(answers("c.get(\"a\")"), [first, "Ok(None)", "Ok(Some(9))"], "a batch is all or nothing");
    assert_eq!(answers("c.room(\"a\")")[1], "Ok([])", "a counter set up again meets no old limit");
    let kept = answers("c.get_range(\"a\", Period::Minute, now - 10 * minute, now + minute)");
    assert_eq!(kept, ["Ok(Some(3))", "Ok(Some(2))"], "expired: all but this minute and the last");
    let zz = if lazy { "Some(1)" } else { "None" };
    assert_eq!(answers("c.get_many([\"a\", \"b\", \"zz\"])"), [format!("Ok([Some(0), Some(3), {zz}])")]);
}

/// Fails naming each call of the script whose answers differ.
pub fn assert_alike(expected: &[(String, String)], got: &[(String, String)], case: &str) {
    let apart: Vec<String> = expected
        .iter()
        .zip(got)
        .filter(|(expected, got)| expected != got)
        .map(|((call, expected), (_, got))| format!("{call}\n  expected: {expected}\n  got:      {got}"))
        .collect();
    assert!(apart.is_empty(), "{case}\n{}", apart.join("\n"));
    assert_eq!(got.len(), expected.len());
}

/// The moment the sessions of [`script_of_calls`] stand still at, in
/// seconds since 1970 UTC: 2026-11-25 12:00:00.
pub const SCRIPT_CLOCK: u64 = 1_795_608_000;

/// [`SCRIPT_CLOCK`] as a moment.
pub fn script_clock() -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(SCRIPT_CLOCK)
}

/// The session [`script_of_calls`] runs in: its clock stands still at
/// [`SCRIPT_CLOCK`], in a time zone 5 hours east of UTC, which no answer
/// may show.
pub fn script_session() -> String {
    script_session_at(script_clock())
}

/// The session [`script_of_calls_at`] `now` runs in: its clock stands
/// still half a second past `now`, a whole second.
pub fn script_session_at(now: SystemTime) -> String {
    let seconds = now.duration_since(SystemTime::UNIX_EPOCH).expect("a moment after 1970").as_secs();
    format!("SET time_zone = '+05:00', TIMESTAMP = {seconds}.5")
}

/// A pool of [`script_session`]s of the database at `url`.
pub fn script_pool(url: &str) -> Pool {
    script_pool_at(url, script_clock())
}

/// A pool of [`script_session_at`] `now` of the database at `url`.
pub fn script_pool_at(url: &str, now: SystemTime) -> Pool {
    let opts = mysql::Opts::from_url(url).unwrap();
    Pool::new(mysql::OptsBuilder::from_opts(opts).init(vec![script_session_at(now)])).unwrap()
}

/// A sync client of a package of `options` on `pool`: through the routines
/// or in the plain mode, with write ids or without.
pub fn script_client(pool: Pool, options: &PackageOptions, write_ids: bool, plain: bool) -> Counters {
    let builder = Counters::builder(pool).package(options);
    let builder = if write_ids { builder.write_ids() } else { builder };
    if plain { builder.plain_sql() } else { builder }.build().unwrap()
}

/// The script of calls that both modes answer alike: each call made
/// through `$c` and answered by `$run` ([`answered`] or [`awaited`]), in
/// order, as written, with its answer. The moments are `$now` and steps of
/// `$minute`, `$hour` and `$day` from it.
macro_rules! the_script {
    ($run:ident, $c:ident, $now:ident, $minute:ident, $hour:ident, $day:ident) => {
        $run! {
            $c.setup("a", NewCounter::new("d"));
            $c.setup("b", NewCounter::new("d").initial_value(5));
            $c.setup("a", NewCounter::new("d"));
            $c.increment("a");
            $c.add("a", 10);
            $c.add("b", -2);
            $c.add_many([("a", 1), ("b", 1)]);
            $c.add_many([("a", 1), ("zz", 1)]);
            $c.get("a");
            $c.bound("b", 0..=10);
            $c.add("b", 20);
            $c.add("b", -10);
            $c.reset("b", 3, StartDate::Keep);
            $c.reset("b", 30, StartDate::Keep);
            $c.room("b");
            $c.track("a", Period::Hour, Keep::All);
            $c.track("a", Period::Day, Keep::Last(2));
            $c.limit("a", Period::Hour, Some(20));
            $c.add("a", 5);
            $c.add("a", 100);
            $c.add_at("a", 2, $now - $hour);
            $c.add_at("a", 2, $now - 3 * $day);
            $c.add_at("a", 2, $now + 3 * $day);
            $c.get_period("a", Period::Hour, $now);
            $c.get_period("a", Period::Hour, $now - $hour);
            $c.get_period("a", Period::Minute, $now);
            $c.get_period("zz", Period::Hour, $now);
            $c.get_range("a", Period::Day, $now - 2 * $day, $now + $day);
            $c.get_range("a", Period::Day, SystemTime::UNIX_EPOCH, $now + $day);
            $c.series("a", Period::Hour, $now - 2 * $hour, $now + $hour);
            $c.series("a", Period::Minute, $now - 2 * $hour, $now + $hour);
            $c.limit("a", Period::Minute, Some(5));
            $c.add("a", 6);
            $c.untrack("a", Period::Hour);
            $c.get_period("a", Period::Hour, $now);
            $c.limit("a", Period::Hour, Some(3));
            $c.room("a");
            $c.reset("a", 7, StartDate::Keep);
            $c.track("a", Period::Month, Keep::Last(0));
            $c.track("zz", Period::Month, Keep::All);
            $c.bound("a", ..=5);
            $c.bound("a", (Bound::Included(10), Bound::Included(5)));
            $c.bound("a", ..);
            $c.delete("a");
            $c.get("a");
            $c.get_period("a", Period::Day, $now);
            $c.setup("a", NewCounter::new("d"));
            $c.room("a");
            $c.get_period("a", Period::Day, $now);
            $c.get_many(["a", "b", "zz"]);
            $c.add("a", 0);
            $c.add("zz", 1);
            $c.increment("zz");
            $c.add("a", i64::MAX);
            $c.add("a", i64::MIN);
            $c.setup("", NewCounter::new("d"));
            $c.setup(&"x".repeat(200), NewCounter::new("d"));
            $c.add_many([("a", 1), ("a", 2)]);
            $c.add_many([("b", 100), ("a", 1)]);
            $c.reset("zz", 1, StartDate::Keep);
            $c.limit("zz", Period::Hour, Some(1));
            $c.track("a", Period::Hour, Keep::All);
            $c.limit("a", Period::Hour, Some(4));
            $c.add("a", 5);
            $c.limit("a", Period::Hour, None);
            $c.add("a", 5);
            $c.add_at("a", 1, SystemTime::UNIX_EPOCH);
            $c.get_range("a", Period::Hour, $now + $day, $now);
            $c.get_range("a", Period::Hour, SystemTime::UNIX_EPOCH, $now + $day);
            $c.series("a", Period::Hour, $now - 365 * $day, $now);
            $c.get_period("a", Period::Day, $now + 2 * $day);
            $c.untrack("a", Period::Minute);
            $c.untrack("zz", Period::Minute);
            $c.delete("zz");
            $c.get("a");
            $c.track("a", Period::Minute, Keep::Last(5));
            $c.add_at("a", 1, $now - 3 * $minute);
            $c.add_at("a", 1, $now - $minute);
            $c.add("a", 1);
            $c.track("a", Period::Minute, Keep::Last(2));
            $c.get_range("a", Period::Minute, $now - 10 * $minute, $now + $minute);
            $c.expire_periods();
            $c.get_range("a", Period::Minute, $now - 10 * $minute, $now + $minute);
            $c.forget_writes(Duration::from_secs(60));
        }
    };
}

/// A call of [`the_script`] as written: passed on from macro to macro, its
/// paths print as `Period :: Hour`.
macro_rules! written {
    ($call:expr) => {
        stringify!($call).replace(" :: ", "::")
    };
}

/// The calls of [`the_script`], each with its answer as it comes.
macro_rules! answered {
    ($($call:expr;)*) => { vec![$((written!($call), format!("{:?}", $call))),*] };
}

/// The calls of [`the_script`], each with its answer awaited.
macro_rules! awaited {
    ($($call:expr;)*) => { vec![$((written!($call), format!("{:?}", $call.await))),*] };
}

/// [`the_script`] through a sync client, at [`SCRIPT_CLOCK`].
pub fn script_of_calls<C: SyncConnections>(c: &Counters<C>) -> Vec<(String, String)> {
    script_of_calls_at(c, script_clock())
}

/// [`the_script`] through a sync client, its moments taken from `now`, a
/// whole second, which its sessions' clock must not leave by a minute.
pub fn script_of_calls_at<C: SyncConnections>(c: &Counters<C>, now: SystemTime) -> Vec<(String, String)> {
    let (minute, hour, day) =
        (Duration::from_secs(60), Duration::from_secs(3_600), Duration::from_secs(86_400));
    the_script!(answered, c, now, minute, hour, day)
}

/// [`the_script`] through the async client, at [`SCRIPT_CLOCK`].
pub async fn awaited_script_of_calls<C: AsyncConnections>(c: &AsyncCounters<C>) -> Vec<(String, String)> {
    let now = script_clock();
    let (minute, hour, day) =
        (Duration::from_secs(60), Duration::from_secs(3_600), Duration::from_secs(86_400));
    the_script!(awaited, c, now, minute, hour, day)
}
