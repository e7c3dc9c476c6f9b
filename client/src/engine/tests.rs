//! The engine's logic against a scripted driver: what each call sends,
//! when it sends it again, and how long it waits in between.

use std::time::Duration;

use slotted_counters_core::package::{errno, server_errno};
use slotted_counters_core::periods::Period;
use slotted_counters_core::plain::PlainSql;

use super::*;
use crate::driver::ready;
use crate::error::Bound;
use crate::scripted::{Arg, Reply, ScriptedDriver, answer, seen_while};

const INCREMENT: &str = "CALL `counter_increment`(?)";
const ADD_ONCE: &str = "CALL `counter_add_once`(?, ?, ?)";
const PACKAGE: &str = "SELECT `counter_package`()";

/// What `counter_package()` answers for a package with `features`.
fn package_line(features: &str) -> Reply {
    let options = PackageOptions::builder().features(features.parse().unwrap()).build().unwrap();
    Reply::Text(Some(package::package_line(&options)))
}

fn routines(driver: ScriptedDriver) -> Engine<ScriptedDriver> {
    Engine::new(driver, &PackageOptions::default())
}

fn plain(driver: ScriptedDriver) -> Engine<ScriptedDriver> {
    Engine::plain(driver, &PackageOptions::default()).expect("the default package has a plain mode")
}

fn statements() -> PlainSql {
    PlainSql::new(&PackageOptions::default()).expect("the default package has a plain mode")
}

fn within(pause: Duration, backoff_ms: u64) -> bool {
    let backoff = Duration::from_millis(backoff_ms);
    (backoff / 2..=backoff).contains(&pause)
}

#[test]
fn a_rolled_back_call_runs_again_after_a_pause_that_doubles() {
    use Reply::{Changed, Error};
    let deadlock = Error(server_errno::DEADLOCK);
    let client =
        routines(ScriptedDriver::new([deadlock.clone(), Changed(0), deadlock, Changed(0), Changed(1)]));
    ready(client.increment("likes")).unwrap();
    // Each rollback is followed by a statement of another kind (Galera).
    assert_eq!(client.driver.sql(), [INCREMENT, "DO 0", INCREMENT, "DO 0", INCREMENT]);
    let pauses = client.driver.pauses();
    assert_eq!(pauses.len(), 2, "{pauses:?}");
    assert!(
        within(pauses[0], 5) && within(pauses[1], 10),
        "a jittered backoff from 5 ms, doubling: {pauses:?}"
    );
}

#[test]
fn a_call_that_keeps_being_rolled_back_fails_after_its_attempts() {
    let rollbacks = (0..3).flat_map(|_| [Reply::Error(server_errno::LOCK_WAIT_TIMEOUT)]);
    let client = routines(ScriptedDriver::new(rollbacks)).with_retry(RetryBudget::Attempts(3));
    let error = ready(client.increment("likes")).unwrap_err();
    assert_eq!(error.code(), Some(server_errno::LOCK_WAIT_TIMEOUT));
    assert_eq!(client.driver.sql(), [INCREMENT; 3]);
    assert!(client.driver.script_done());
}

#[test]
fn a_refusal_is_never_sent_again() {
    for code in [errno::UNKNOWN_COUNTER, errno::INVALID_ARGUMENT, server_errno::DUPLICATE_KEY] {
        let client = routines(ScriptedDriver::new([Reply::Error(code)]));
        assert_eq!(ready(client.increment("likes")).unwrap_err().code(), Some(code));
        assert_eq!(client.driver.sql(), [INCREMENT], "after {code}");
        assert!(client.driver.pauses().is_empty());
    }
}

#[test]
fn a_missing_routine_is_tried_again_through_a_reinstall_even_on_the_callers_connection() {
    use Reply::{Changed, Error};
    let missing = Error(server_errno::NO_SUCH_ROUTINE);
    let caller = routines(ScriptedDriver::default());
    let client = caller.on(ScriptedDriver::new([missing.clone(), package_line("all"), missing, Changed(1)]));
    ready(client.increment("likes")).unwrap();
    assert_eq!(client.driver.sql(), [INCREMENT, PACKAGE, INCREMENT, INCREMENT], "the package asked once");
    assert_eq!(client.driver.pauses(), [Duration::from_millis(5), Duration::from_millis(10)]);
}

#[test]
fn a_call_needing_a_feature_the_package_lacks_fails_at_once_naming_it() {
    let missing = Reply::Error(server_errno::NO_SUCH_ROUTINE);
    let client = routines(ScriptedDriver::new([missing, package_line("batches,bounds")]));
    let error = ready(client.track("likes", Period::Day, crate::call::Keep::Last(7), None)).unwrap_err();
    let CounterError::FeatureMissing { feature, call, ref with_it, .. } = error else {
        panic!("{error:?}");
    };
    assert_eq!((feature, call, with_it.as_str()), ("periods", "track", "batches,periods,bounds"));
    assert!(error.to_string().contains("install --features batches,periods,bounds"), "{error}");
    assert_eq!(error.code(), Some(server_errno::NO_SUCH_ROUTINE));
    assert_eq!(client.driver.sql(), ["CALL `counter_track`(?, ?, ?)", PACKAGE]);
    assert!(client.driver.pauses().is_empty(), "no wait for a re-install");
}

#[test]
fn a_missing_routine_of_a_package_that_cannot_say_what_it_holds_is_waited_for() {
    use Reply::{Changed, Error};
    let missing = Error(server_errno::NO_SUCH_ROUTINE);
    // A package from before counter_package(), or one whose function a
    // re-install is replacing too.
    let client = routines(ScriptedDriver::new([missing.clone(), missing, Changed(1)]));
    ready(client.track("likes", Period::Day, crate::call::Keep::Last(7), None)).unwrap();
    assert_eq!(
        client.driver.sql(),
        ["CALL `counter_track`(?, ?, ?)", PACKAGE, "CALL `counter_track`(?, ?, ?)"]
    );
    assert_eq!(client.driver.pauses().len(), 1);
}

#[test]
fn a_lost_answer_is_sent_again_under_the_same_write_id() {
    let client =
        routines(ScriptedDriver::new([Reply::Lost, Reply::Changed(1), Reply::Changed(1)])).with_write_ids();
    ready(client.add("likes", 3)).unwrap();
    ready(client.add("likes", 3)).unwrap();
    let sent = client.driver.sent();
    assert!(sent.iter().all(|sent| sent.sql == ADD_ONCE), "{sent:?}");
    let ids: Vec<&Arg> = sent.iter().map(|sent| &sent.params[0]).collect();
    assert_eq!(ids[0], ids[1], "the resend carries the write's id");
    assert_ne!(ids[1], ids[2], "the next write has an id of its own");
}

#[test]
fn an_undecodable_answer_under_a_write_id_is_an_error_not_a_resend() {
    let client = routines(ScriptedDriver::new([Reply::Undecodable])).with_write_ids();
    let error = ready(client.add("likes", 3)).unwrap_err();
    assert!(matches!(error, CounterError::UnexpectedAnswer { .. }), "{error:?}");
    assert!(error.may_have_applied(), "the call ran");
    assert_eq!(client.driver.sql(), [ADD_ONCE]);
}

#[test]
fn an_empty_answer_to_a_read_is_an_error_not_a_panic() {
    let client = routines(ScriptedDriver::new([Reply::Rows(Vec::new())]));
    let error = ready(client.get("likes")).unwrap_err();
    assert!(matches!(error, CounterError::UnexpectedAnswer { .. }), "{error:?}");
    assert_eq!(client.driver.sql().len(), 1, "not sent again");
}

#[test]
fn a_read_answered_with_too_few_or_too_many_values_is_an_error() {
    for row in [vec![Some(1)], vec![Some(1), Some(2), Some(3)]] {
        let client = routines(ScriptedDriver::new([Reply::Rows(vec![row])]));
        let error = ready(client.get_many(["a", "b"])).unwrap_err();
        assert!(matches!(error, CounterError::UnexpectedAnswer { .. }), "{error:?}");
    }
    let two_rows = vec![vec![Some(1), Some(2)], vec![Some(1), Some(2)]];
    let client = routines(ScriptedDriver::new([Reply::Rows(two_rows)]));
    let error = ready(client.get_many(["a", "b"])).unwrap_err();
    assert!(matches!(error, CounterError::UnexpectedAnswer { .. }), "{error:?}");
}

#[test]
fn without_write_ids_a_lost_answer_is_not_sent_again() {
    let client = routines(ScriptedDriver::new([Reply::Lost]));
    let error = ready(client.add("likes", 3)).unwrap_err();
    assert!(matches!(error, CounterError::Connection { .. }), "{error:?}");
    assert_eq!(client.driver.sql(), ["CALL `counter_add`(?, ?)"]);
}

#[test]
fn a_retried_call_tells_the_logger_why_it_runs_again() {
    use Reply::{Changed, Error, Lost};
    let missing = Error(server_errno::NO_SUCH_ROUTINE);
    let script = [missing.clone(), missing, Error(server_errno::DEADLOCK), Changed(0), Lost, Changed(1)];
    let client = routines(ScriptedDriver::new(script)).with_write_ids();
    let events = seen_while(|| ready(client.increment("likes")).unwrap());
    assert_eq!(events.len(), 3, "{events:#?}");
    let expected = [
        ("INFO", "a routine is missing, as during a reinstall"),
        ("DEBUG", "the server rolled the call add_once back"),
        ("WARN", "it runs again under its write id"),
    ];
    for (event, (level, message)) in events.iter().zip(expected) {
        assert!(event.starts_with(level) && event.contains(message), "{level} {message:?} in {event}");
        assert!(event.contains(r#"call="add_once""#) && event.contains("pause="), "{event}");
    }
    assert!(events[1].contains("code=1213"), "{}", events[1]);
}

#[test]
fn a_call_that_fails_after_retries_says_so_once_and_a_first_refusal_says_nothing() {
    let rollbacks = [Reply::Error(server_errno::DEADLOCK), Reply::Changed(0)];
    let client = routines(ScriptedDriver::new(rollbacks.clone().into_iter().chain(rollbacks)))
        .with_retry(RetryBudget::Attempts(2));
    let events = seen_while(|| drop(ready(client.increment("likes")).unwrap_err()));
    assert_eq!(events.len(), 2, "{events:#?}");
    assert!(events[1].starts_with("WARN") && events[1].contains("attempts=2"), "{}", events[1]);

    let client = routines(ScriptedDriver::new([Reply::Error(errno::UNKNOWN_COUNTER)]));
    assert_eq!(seen_while(|| drop(ready(client.increment("likes")).unwrap_err())), Vec::<String>::new());
}

#[test]
fn a_plain_increment_whose_slot_is_gone_goes_to_slot_1() {
    use Reply::{Changed, Rows};
    let sql = statements();
    let four = || Rows(vec![vec![Some(4)]]);
    let client = plain(ScriptedDriver::new([
        answer(&sql.last_slot().sql, four()),
        answer(&sql.add_to_untracked_slot().sql, Changed(0)),
        answer(&sql.periods().sql, NO_PERIODS),
        // Read again after the one statement missed: the slot may be gone.
        answer(&sql.last_slot().sql, four()),
        answer(&sql.add_to_slot().sql, Changed(0)),
        answer(&sql.add_to_slot().sql, Changed(1)),
    ]));
    ready(client.increment("likes")).unwrap();
    assert!(client.driver.script_done());
    let sent = client.driver.sent();
    // add_to_slot's parameters: delta, name, slot, lowest, highest, ...
    assert_eq!(sent[5].params[2], Arg::number(1), "the fallback names slot 1: {sent:?}");
}

#[test]
fn a_plain_increment_of_a_counter_without_periods_is_one_update_of_a_slot() {
    use Reply::{Changed, Rows};
    let sql = statements();
    let update = sql.add_to_untracked_slot().sql;
    // The slot count read once, then one statement a write.
    let client = plain(ScriptedDriver::new([
        answer(&sql.last_slot().sql, Rows(vec![vec![Some(8)]])),
        answer(&update, Changed(1)),
        answer(&update, Changed(1)),
        answer(&update, Changed(1)),
    ]));
    ready(client.increment("views")).unwrap();
    ready(client.increment("views")).unwrap();
    ready(client.add("views", 5)).unwrap();
    assert!(client.driver.script_done());
}

#[test]
fn a_plain_flush_to_a_counter_without_periods_is_one_update_of_a_slot() {
    use Reply::{Changed, Rows};
    let sql = statements();
    let update = sql.add_to_untracked_slot().sql;
    let client = plain(ScriptedDriver::new([
        answer(&sql.last_slot().sql, Rows(vec![vec![Some(8)]])),
        answer(&update, Changed(1)),
        answer(&update, Changed(1)),
    ]));
    let at = crate::call::Moment::Since(std::time::Instant::now());
    ready(client.flush_add("views", 32, at)).unwrap();
    ready(client.flush_add("views", 32, at)).unwrap();
    assert!(client.driver.script_done());
}

#[test]
fn a_plain_flush_the_update_does_not_take_is_counted_as_an_add_is() {
    use Reply::{Changed, Rows};
    let sql = statements();
    // Tracked periods, a slot short of room or removed: no row changed.
    let client = plain(ScriptedDriver::new([
        answer(&sql.last_slot().sql, Rows(vec![vec![Some(8)]])),
        answer(&sql.add_to_untracked_slot().sql, Changed(0)),
        answer(&sql.periods().sql, NO_PERIODS),
        // Read again: the slot may be gone.
        answer(&sql.last_slot().sql, Rows(vec![vec![Some(8)]])),
        answer(&sql.add_to_slot().sql, Changed(1)),
    ]));
    ready(client.flush_add("views", 32, crate::call::Moment::Since(std::time::Instant::now()))).unwrap();
    assert!(client.driver.script_done());
}

#[test]
fn a_plain_flush_an_engine_refuses_reads_the_periods_first_from_then_on() {
    use Reply::{Changed, Error, Rows};
    let sql = statements();
    let (periods, add) = (sql.periods().sql, sql.add_to_slot().sql);
    let client = plain(ScriptedDriver::new([
        answer(&sql.last_slot().sql, Rows(vec![vec![Some(8)]])),
        // Vitess refuses a subquery in an UPDATE that may go to another shard.
        answer(&sql.add_to_untracked_slot().sql, Error(server_errno::NOT_SUPPORTED_YET)),
        answer(&periods, NO_PERIODS),
        answer(&add, Changed(1)),
        answer(&periods, NO_PERIODS),
        answer(&add, Changed(1)),
    ]));
    let at = crate::call::Moment::Since(std::time::Instant::now());
    ready(client.flush_add("views", 32, at)).unwrap();
    ready(client.flush_add("views", 32, at)).unwrap();
    assert!(client.driver.script_done());
}

/// The steps of a plain add whose untracked slot and whose slot take no
/// row, up to the lock of every slot of the counter: the slot count
/// (`slots`), the one-statement add, the periods (none), the slot count
/// again, the add to the slot, then to slot 1, and the transaction.
fn add_up_to_the_lock(slots: i64) -> Vec<Reply> {
    use Reply::{Changed, Rows};
    let sql = statements();
    vec![
        answer(&sql.last_slot().sql, Rows(vec![vec![Some(slots)]])),
        answer(&sql.add_to_untracked_slot().sql, Changed(0)),
        answer(&sql.periods().sql, NO_PERIODS),
        answer(&sql.last_slot().sql, Rows(vec![vec![Some(slots)]])),
        answer(&sql.add_to_slot().sql, Changed(0)),
        answer(&sql.add_to_slot().sql, Changed(0)),
        answer("START TRANSACTION", Changed(0)),
    ]
}

#[test]
fn a_plain_add_that_finds_neither_its_slot_nor_any_slot_is_an_unknown_counter() {
    use Reply::{Changed, Rows};
    let sql = statements();
    let mut script = add_up_to_the_lock(2);
    script.extend([
        answer(&sql.lock_counter().sql, Rows(vec![vec![Some(0), None, Some(0), None, None]])),
        answer("ROLLBACK", Changed(0)),
    ]);
    let client = plain(ScriptedDriver::new(script));
    let error = ready(client.add("gone", 5)).unwrap_err();
    assert_eq!(error.code(), Some(errno::UNKNOWN_COUNTER), "{error:?}");
    assert!(client.driver.script_done());
}

#[test]
fn a_plain_take_its_slot_cannot_hold_spreads_the_new_total_under_lock() {
    use Reply::{Changed, Rows};
    // 4 slots, 10 in all, a floor of 0: a take of 1 leaves 9.
    let sql = statements();
    let mut script = add_up_to_the_lock(4);
    script.extend([
        answer(&sql.lock_counter().sql, Rows(vec![vec![Some(4), Some(1), Some(10), Some(0), None]])),
        answer(&sql.spread().sql, Changed(4)),
        answer("COMMIT", Changed(0)),
    ]);
    let client = plain(ScriptedDriver::new(script));
    ready(client.add("stock", -1)).unwrap();
    assert!(client.driver.script_done());
    // 9 over 4 slots: 2 each and 1 more in the first; the room above the
    // floor the same; no ceiling.
    let spread = &client.driver.sent()[8];
    assert_eq!(
        spread.params[..10],
        [
            Arg::number(2),
            Arg::number(1),
            Arg::number(2),
            Arg::number(1),
            Arg::number(2),
            Arg::number(1),
            Arg::number(2),
            Arg::number(1),
            Arg::Number(None),
            Arg::Number(None)
        ]
    );
}

#[test]
fn a_plain_take_past_the_floor_is_refused_with_the_room_left_and_changes_nothing() {
    use Reply::{Changed, Rows};
    let sql = statements();
    let mut script = add_up_to_the_lock(4);
    script.extend([
        answer(&sql.lock_counter().sql, Rows(vec![vec![Some(4), Some(1), Some(2), Some(0), None]])),
        answer("ROLLBACK", Changed(0)),
    ]);
    let client = plain(ScriptedDriver::new(script));
    let error = ready(client.add("stock", -3)).unwrap_err();
    assert!(matches!(error, CounterError::PastBound { bound: Bound::Floor, room: 2, .. }), "{error:?}");
    assert_eq!(error.to_string(), "the write would pass the floor 0 (room left: 2), for counter: 'stock'");
    assert!(client.driver.script_done());
}

/// The periods a counter tracks, read before a plain write: none.
const NO_PERIODS: Reply = Reply::Rows(Vec::new());

/// The steps of a batch of two counters in `transaction`: each counter's
/// periods (none), read before the transaction, then `transaction`'s
/// steps, then each counter found with one slot and added to.
fn two_adds(transaction: impl IntoIterator<Item = Reply>) -> Vec<Reply> {
    use Reply::{Changed, Rows};
    let sql = statements();
    let (periods, last_slot, add) = (sql.periods().sql, sql.last_slot().sql, sql.add_to_slot().sql);
    let mut script = vec![answer(&periods, NO_PERIODS), answer(&periods, NO_PERIODS)];
    script.extend(transaction);
    for _ in 0..2 {
        script.extend([answer(&last_slot, Rows(vec![vec![Some(1)]])), answer(&add, Changed(1))]);
    }
    script
}

/// The steps of the probe of the caller's connection, where `open` says
/// whether a transaction is open there: its savepoint outlives the
/// statement only in one.
fn probe(open: bool) -> [Reply; 2] {
    use Reply::{Changed, Error};
    let undone = if open { Changed(0) } else { Error(server_errno::NO_SUCH_SAVEPOINT) };
    [
        answer("SAVEPOINT slotted_counters_call", Changed(0)),
        answer("ROLLBACK TO SAVEPOINT slotted_counters_call", undone),
    ]
}

#[test]
fn a_plain_batch_on_the_callers_connection_never_ends_the_callers_transaction() {
    let mut transaction = probe(true).to_vec();
    transaction.push(answer("SAVEPOINT slotted_counters_call", Reply::Changed(0)));
    let client = plain(ScriptedDriver::callers(two_adds(transaction)));
    ready(client.add_many([("a", 1), ("b", 2)])).unwrap();
    assert!(client.driver.script_done(), "no COMMIT, ROLLBACK or START TRANSACTION after the adds");
}

#[test]
fn a_plain_batch_that_fails_inside_the_callers_transaction_undoes_only_its_own_statements() {
    use Reply::{Changed, Rows};
    let sql = statements();
    let (periods, last_slot) = (sql.periods().sql, sql.last_slot().sql);
    let mut script = vec![answer(&periods, NO_PERIODS), answer(&periods, NO_PERIODS)];
    script.extend(probe(true));
    script.extend([
        answer("SAVEPOINT slotted_counters_call", Changed(0)),
        answer(&last_slot, Rows(vec![vec![Some(1)]])),
        answer(&sql.add_to_slot().sql, Changed(1)),
        answer(&last_slot, Rows(vec![])),
        answer("ROLLBACK TO SAVEPOINT slotted_counters_call", Changed(0)),
    ]);
    let client = plain(ScriptedDriver::callers(script));
    let error = ready(client.add_many([("a", 1), ("missing", 2)])).unwrap_err();
    assert_eq!(error.code(), Some(errno::UNKNOWN_COUNTER));
    assert!(client.driver.script_done());
}

#[test]
fn a_plain_batch_in_autocommit_mode_is_a_transaction_of_its_own() {
    // The periods are read before the transaction: a plain read in it would
    // open a read view, which fails each write of a slot changed since
    // under snapshot isolation (1020).
    let mut script =
        two_adds(probe(false).into_iter().chain([answer("START TRANSACTION", Reply::Changed(0))]));
    script.push(answer("COMMIT", Reply::Changed(0)));
    let client = plain(ScriptedDriver::callers(script));
    ready(client.add_many([("a", 1), ("b", 2)])).unwrap();
    assert!(client.driver.script_done());
}

#[test]
fn a_plain_write_with_an_id_skips_the_counters_an_earlier_send_counted() {
    use Reply::{Changed, Error, Rows};
    let sql = statements();
    let (periods, record) = (sql.periods().sql, sql.record_write().sql);
    let client = plain(ScriptedDriver::new([
        answer(&periods, NO_PERIODS),
        answer(&periods, NO_PERIODS),
        answer("START TRANSACTION", Changed(0)),
        // a's id was there: only b is added.
        answer(&record, Error(server_errno::DUPLICATE_KEY)),
        answer(&record, Changed(1)),
        answer(&sql.last_slot().sql, Rows(vec![vec![Some(1)]])),
        answer(&sql.add_to_slot().sql, Changed(1)),
        answer("COMMIT", Changed(0)),
    ]))
    .with_write_ids();
    ready(client.add_many([("a", 1), ("b", 2)])).unwrap();
    assert!(client.driver.script_done());
    let sent = client.driver.sent();
    assert_eq!(sent[3].params[1], sent[4].params[1], "one id for the write's counters");
}

#[test]
fn a_plain_write_of_a_tracked_counter_adds_to_its_slot_and_buckets_in_one_transaction() {
    use Reply::{Changed, Rows};
    let sql = statements();
    // Hours (2) kept for 48, days (3) all.
    let periods = || {
        answer(
            &sql.periods().sql,
            Rows(vec![vec![Some(2), Some(48), Some(0), None], vec![Some(3), None, Some(0), None]]),
        )
    };
    let four = || answer(&sql.last_slot().sql, Rows(vec![vec![Some(4)]]));
    let buckets = sql.add_to_buckets(&[Period::Hour, Period::Day]).sql;
    let in_transaction = || {
        [
            answer(&sql.add_to_slot().sql, Changed(1)),
            answer(&buckets, Changed(2)),
            answer("COMMIT", Changed(0)),
        ]
    };
    let mut script = vec![
        // First the one statement a counter tracking no period takes.
        four(),
        answer(&sql.add_to_untracked_slot().sql, Changed(0)),
        periods(),
        answer("START TRANSACTION", Changed(0)),
        // Read again: the slot may be gone.
        four(),
    ];
    script.extend(in_transaction());
    // A counter seen tracking a period is not tried in one statement.
    script.extend([periods(), answer("START TRANSACTION", Changed(0))]);
    script.extend(in_transaction());
    let client = plain(ScriptedDriver::new(script));
    ready(client.add("views", 5)).unwrap();
    ready(client.add("views", 5)).unwrap();
    assert!(client.driver.script_done());
    let sent = &client.driver.sent()[2..];
    // Each bucket row: name, moment (NULL: now), age, slot, delta; then delta.
    let slot = &sent[3].params[2];
    assert_eq!(sent[4].params[3], *slot, "the bucket rows of the slot written");
    assert_eq!(
        sent[4].params[..5],
        [Arg::text("views"), Arg::Number(None), Arg::number(0), slot.clone(), Arg::number(5)]
    );
    assert_eq!(sent[4].params[8], *slot);
}

#[test]
fn a_plain_late_write_after_the_servers_now_is_refused_before_it_writes() {
    use Reply::Rows;
    let client = plain(ScriptedDriver::new([Rows(vec![vec![Some(1_000)]])]));
    let at = std::time::UNIX_EPOCH + Duration::from_secs(1_001);
    let error = ready(client.add_at("views", 1, at)).unwrap_err();
    assert_eq!(error.code(), Some(errno::INVALID_ARGUMENT));
    assert_eq!(
        error.to_string(),
        "the moment must be a UTC time no later than now, not 1970-01-01 00:16:41.000000, for counter: 'views'",
        "as the routine says it"
    );
    assert_eq!(client.driver.sql(), [&*statements().server_now().sql]);
}

#[test]
fn a_series_tells_an_unknown_counter_from_an_untracked_period_and_reads_each_bucket() {
    use Reply::Rows;
    let day = Duration::from_secs(86_400);
    let (from, to) = (std::time::UNIX_EPOCH, std::time::UNIX_EPOCH + 3 * day);
    for (row, outcome) in [
        (vec![None; 5], Err(errno::UNKNOWN_COUNTER)),
        (vec![Some(9), None, None, None, None], Err(errno::INVALID_ARGUMENT)),
        (
            vec![Some(9), Some(7), Some(2), Some(0), Some(5)],
            Ok(vec![(from, 2), (from + day, 0), (from + 2 * day, 5)]),
        ),
    ] {
        let client = routines(ScriptedDriver::new([Rows(vec![vec![None]]), Rows(vec![row])]));
        let series = ready(client.series("views", Period::Day, from, to));
        assert_eq!(series.map_err(|error| error.code().unwrap_or(0)), outcome);
        let sent = client.driver.sent();
        // The offset; then the total, the range, and the range of each day.
        assert_eq!(sent[0].sql, "SELECT `counter_utc_offset`(?, ?)", "{sent:?}");
        assert_eq!(sent[1].params.len(), 5 + 3 * 4, "{sent:?}");
    }
}

#[test]
fn a_series_of_a_period_at_an_offset_reads_the_buckets_that_start_there() {
    use Reply::Rows;
    let day = Duration::from_secs(86_400);
    let (from, to) = (std::time::UNIX_EPOCH, std::time::UNIX_EPOCH + 3 * day);
    let buckets = vec![Some(9), Some(7), Some(2), Some(0), Some(5)];
    let client = routines(ScriptedDriver::new([Rows(vec![vec![Some(480)]]), Rows(vec![buckets])]));
    let sixteen = from + Duration::from_secs(16 * 3_600);
    assert_eq!(
        ready(client.series("views", Period::Day, from, to)).unwrap(),
        [(sixteen, 2), (sixteen + day, 0), (sixteen + 2 * day, 5)]
    );
    let sent = client.driver.sent();
    let last_bucket = &sent[1].params[sent[1].params.len() - 2..];
    assert_eq!(last_bucket, [Arg::number(230_400), Arg::number(316_800)], "{sent:?}");
}

#[test]
fn a_plain_series_whose_buckets_pass_bigint_together_reads_each_bucket() {
    use Reply::Rows;
    let day = Duration::from_secs(86_400);
    let (from, to) = (std::time::UNIX_EPOCH, std::time::UNIX_EPOCH + 2 * day);
    let sql = statements();
    let script = [
        answer(&sql.periods().sql, Rows(vec![vec![Some(3), None, Some(0), None]])),
        answer(&sql.get_many(1).sql, Rows(vec![vec![Some(0), Some(7)]])),
        answer(&sql.periods().sql, Rows(vec![vec![Some(3), None, Some(0), None]])),
        answer(&sql.series().sql, Rows(vec![vec![Some(0), Some(i64::MAX)], vec![Some(86_400), Some(5)]])),
    ];
    let client = plain(ScriptedDriver::new(script));
    let series = ready(client.series("views", Period::Day, from, to)).unwrap();
    assert_eq!(series, [(from, i64::MAX), (from + day, 5)]);
}

#[test]
fn a_batch_sends_its_deltas_as_one_json_object_with_a_write_id_or_without() {
    let json = Arg::text(r#"{"a":1,"b":5}"#);
    let client = routines(ScriptedDriver::new([Reply::Changed(1)]));
    ready(client.add_many([("b", 2), ("a", 1), ("b", 3)])).unwrap();
    assert_eq!(client.driver.sent()[0].params, std::slice::from_ref(&json));

    let client = routines(ScriptedDriver::new([Reply::Changed(1)])).with_write_ids();
    ready(client.add_many([("b", 2), ("a", 1), ("b", 3)])).unwrap();
    let sent = client.driver.sent();
    assert_eq!(sent[0].sql, "CALL `counter_add_many_once`(?, ?)");
    assert_eq!(sent[0].params[1], json, "{sent:?}");
}

/// A coalesced delta handed over half a second before its flush, to a
/// counter counted per hour freely and per day under a limit: both periods
/// count at one moment, the server's clock less the delta's age, read
/// once. Read apart, the hour at the server's now less the age and the day
/// by a second count, a flush just after midnight put the delta in the
/// hour before midnight and the day after it.
#[test]
fn a_plain_write_with_a_limit_counts_every_period_at_one_moment() {
    use Reply::{Changed, Rows};
    let sql = statements();
    // Midnight's second: the flush's own, and its moment's after the age.
    let midnight = 86_400;
    let script = vec![
        answer(&sql.last_slot().sql, Rows(vec![vec![Some(4)]])),
        answer(&sql.add_to_untracked_slot().sql, Changed(0)),
        // Hours (2) free, days (3) limited to 100.
        answer(
            &sql.periods().sql,
            Rows(vec![vec![Some(2), None, Some(0), None], vec![Some(3), None, Some(0), Some(100)]]),
        ),
        answer("START TRANSACTION", Changed(0)),
        answer(&sql.last_slot().sql, Rows(vec![vec![Some(4)]])),
        answer(&sql.add_to_slot().sql, Changed(1)),
        answer(&sql.server_now().sql, Rows(vec![vec![Some(midnight - 1)]])),
        answer(&sql.add_to_buckets(&[Period::Hour]).sql, Changed(1)),
        answer(&sql.lock_quota().sql, Changed(0)),
        answer(&sql.read_limit().sql, Rows(vec![vec![Some(100)]])),
        answer(&sql.lock_bucket().sql, Rows(vec![vec![Some(0), Some(4), Some(1), Some(1)]])),
        answer(&sql.add_to_limited_bucket().sql, Changed(1)),
        answer("COMMIT", Changed(0)),
    ];
    let client = plain(ScriptedDriver::new(script));
    let handed_over = std::time::Instant::now() - Duration::from_millis(500);
    ready(client.flush_add("views", 5, crate::call::Moment::Since(handed_over))).unwrap();
    assert!(client.driver.script_done());
    let sent = client.driver.sent();
    let age = match sent[6].params[..] {
        [Arg::Number(Some(age))] => age,
        ref other => panic!("{other:?}"),
    };
    assert!((500_000..60_000_000).contains(&age), "the delta's age in microseconds: {age}");
    // The hour's bucket row: name, moment, age, slot, delta.
    assert_eq!(
        sent[7].params[1..3],
        [Arg::number(midnight - 1), Arg::number(0)],
        "the hour at the moment read"
    );
    // The day's lock: name, period, the day's start, that of the moment.
    assert_eq!(sent[8].params[2], Arg::number(0), "the day before midnight, as the hour");
}

#[test]
fn a_plain_read_of_a_period_takes_no_default_for_a_missing_or_empty_answer() {
    use Reply::Rows;
    let now = 1_000_000;
    let day_tracked = Rows(vec![vec![Some(3), None, Some(0), None]]);
    let no_clock = [Rows(vec![]), Rows(vec![vec![None]]), Rows(vec![vec![Some(now), Some(now)]])];
    let no_count = [Rows(vec![]), Rows(vec![vec![None]]), Rows(vec![vec![Some(1)], vec![Some(2)]])];
    let at = std::time::UNIX_EPOCH + Duration::from_secs(now as u64);
    for clock in no_clock {
        let client = plain(ScriptedDriver::new([clock.clone()]));
        let error = ready(client.get_period("views", Period::Day, at)).unwrap_err();
        assert!(matches!(error, CounterError::UnexpectedAnswer { .. }), "{clock:?}: {error:?}");
    }
    for count in no_count {
        let client =
            plain(ScriptedDriver::new([Rows(vec![vec![Some(now)]]), day_tracked.clone(), count.clone()]));
        let error = ready(client.get_period("views", Period::Day, at)).unwrap_err();
        assert!(matches!(error, CounterError::UnexpectedAnswer { .. }), "{count:?}: {error:?}");
        assert!(client.driver.script_done());
    }
    let client =
        plain(ScriptedDriver::new([Rows(vec![vec![Some(now)]]), day_tracked, Rows(vec![vec![Some(0)]])]));
    assert_eq!(ready(client.get_period("views", Period::Day, at)).unwrap(), Some(0), "a real zero");
}

/// Every read of the plain mode, fed an answer no server of the package
/// sends (a row too short or too long, a NULL where none can be, no row
/// where one always comes, two where one does, a number that names
/// nothing), fails as an unexpected answer: no default stands in for it.
#[test]
fn every_plain_read_refuses_an_answer_that_is_not_the_servers() {
    use Reply::{Changed, Rows};
    let sql = statements();
    let slots = |count| answer(&sql.last_slot().sql, Rows(vec![vec![Some(count)]]));
    let day_tracked = Rows(vec![vec![Some(3), None, Some(0), None]]);
    let up_to_the_limit = vec![
        slots(4),
        answer(&sql.add_to_untracked_slot().sql, Changed(0)),
        answer(&sql.periods().sql, Rows(vec![vec![Some(3), None, Some(0), Some(100)]])),
        answer("START TRANSACTION", Changed(0)),
        slots(4),
        answer(&sql.add_to_slot().sql, Changed(1)),
        answer(&sql.server_now().sql, Rows(vec![vec![Some(86_400)]])),
        answer(&sql.lock_quota().sql, Changed(0)),
    ];
    let mut up_to_the_bucket = up_to_the_limit.clone();
    up_to_the_bucket.push(answer(&sql.read_limit().sql, Rows(vec![vec![Some(100)]])));
    type Call = fn(&Engine<ScriptedDriver>) -> Result<(), CounterError>;
    /// Rows of nullable BIGINTs, as a statement answers.
    type Answer = Vec<Vec<Option<i64>>>;
    /// A read: its name, the steps before it, its statement, the answers
    /// it must refuse, and the call that makes it.
    type Read = (&'static str, Vec<Reply>, String, Vec<Answer>, Call);
    let add: Call = |client| ready(client.add("views", 5));
    let cases: Vec<Read> = vec![
        (
            "get_many",
            Vec::new(),
            sql.get_many(1).sql,
            vec![vec![vec![Some(0)]], vec![vec![None, Some(1)]], vec![vec![Some(7), Some(1)]]],
            |client| ready(client.get("views")).map(drop),
        ),
        (
            "last_slot",
            Vec::new(),
            sql.last_slot().sql,
            vec![
                vec![vec![None]],
                vec![vec![Some(0)]],
                vec![vec![Some(1), Some(2)]],
                vec![vec![Some(1)], vec![Some(2)]],
            ],
            add,
        ),
        (
            "periods",
            vec![slots(4), answer(&sql.add_to_untracked_slot().sql, Changed(0))],
            sql.periods().sql,
            vec![
                vec![vec![Some(3), None, Some(0)]],
                vec![vec![None, None, Some(0), None]],
                vec![vec![Some(9), None, Some(0), None]],
                vec![vec![Some(3), None, None, None]],
            ],
            add,
        ),
        (
            "lock_counter",
            add_up_to_the_lock(4),
            sql.lock_counter().sql,
            vec![
                Vec::new(),
                vec![vec![Some(4), None, Some(10), None, None]],
                vec![vec![Some(4), Some(1), Some(10), None]],
            ],
            |client| ready(client.add("stock", -1)),
        ),
        (
            "read_limit",
            up_to_the_limit,
            sql.read_limit().sql,
            vec![vec![vec![Some(1), Some(2)]], vec![vec![Some(1)], vec![Some(2)]]],
            add,
        ),
        (
            "lock_bucket",
            up_to_the_bucket,
            sql.lock_bucket().sql,
            vec![
                Vec::new(),
                vec![vec![Some(0), Some(4), Some(1)]],
                vec![vec![None, Some(4), Some(1), Some(1)]],
            ],
            add,
        ),
        (
            "bounds",
            Vec::new(),
            sql.bounds().sql,
            vec![vec![vec![None, None, None]], vec![vec![Some(1), None]], vec![vec![Some(1), None, None]; 2]],
            |client| ready(client.room("views")).map(drop),
        ),
        (
            "oldest_buckets",
            vec![slots(4), answer(&sql.untrack().sql, Changed(1))],
            sql.oldest_buckets().sql,
            vec![vec![vec![None]], vec![vec![Some(0), Some(1)]]],
            |client| ready(client.untrack("views", Period::Day)),
        ),
        (
            "series",
            vec![
                answer(&sql.periods().sql, day_tracked.clone()),
                answer(&sql.get_many(1).sql, Rows(vec![vec![Some(0), Some(7)]])),
                answer(&sql.periods().sql, day_tracked),
            ],
            sql.series().sql,
            vec![vec![vec![Some(0)]], vec![vec![None, Some(5)]], vec![vec![Some(0), None]]],
            |client| {
                let day = std::time::UNIX_EPOCH + Duration::from_secs(86_400);
                ready(client.series("views", Period::Day, std::time::UNIX_EPOCH, day)).map(drop)
            },
        ),
        (
            "name_width",
            Vec::new(),
            sql.name_width().sql,
            vec![vec![vec![Some(128), Some(1)]], vec![vec![Some(128)], vec![Some(64)]]],
            |client| ready(client.setup("views", crate::NewCounter::new("d"))),
        ),
    ];
    for (read, prefix, sql, answers, call) in cases {
        for rows in answers {
            let mut script = prefix.clone();
            script.push(answer(&sql, Rows(rows.clone())));
            // A transaction the read failed in is rolled back.
            script.push(Changed(0));
            let client = plain(ScriptedDriver::new(script));
            let error = call(&client).unwrap_err();
            assert!(
                matches!(error, CounterError::UnexpectedAnswer { .. }),
                "{read} answering {rows:?}: {error:?}"
            );
        }
    }
}

/// TiDB refuses a share lock (1235) and its transaction goes on: the plain
/// mode reads the limit locked exclusively then, and from then on.
#[test]
fn a_plain_limited_write_reads_the_limit_exclusively_where_share_locks_are_refused() {
    use Reply::{Changed, Error, Rows};
    let sql = statements();
    // A counter seen tracking a period reads its periods first.
    let limited_write = |seen_tracking: bool, read_limit: Vec<Reply>| {
        let mut steps = Vec::new();
        if !seen_tracking {
            steps.extend([
                answer(&sql.last_slot().sql, Rows(vec![vec![Some(4)]])),
                answer(&sql.add_to_untracked_slot().sql, Changed(0)),
            ]);
        }
        steps.extend([
            answer(&sql.periods().sql, Rows(vec![vec![Some(3), None, Some(0), Some(100)]])),
            answer("START TRANSACTION", Changed(0)),
        ]);
        // The slot count, read again in the transaction, is kept after.
        if !seen_tracking {
            steps.push(answer(&sql.last_slot().sql, Rows(vec![vec![Some(4)]])));
        }
        steps.extend([
            answer(&sql.add_to_slot().sql, Changed(1)),
            answer(&sql.server_now().sql, Rows(vec![vec![Some(86_400)]])),
            answer(&sql.lock_quota().sql, Changed(0)),
        ]);
        steps.extend(read_limit);
        steps.extend([
            answer(&sql.lock_bucket().sql, Rows(vec![vec![Some(0), Some(4), Some(1), Some(1)]])),
            answer(&sql.add_to_limited_bucket().sql, Changed(1)),
            answer("COMMIT", Changed(0)),
        ]);
        steps
    };
    let exclusively = || answer(&sql.read_limit_exclusively().sql, Rows(vec![vec![Some(100)]]));
    let mut script = limited_write(
        false,
        vec![answer(&sql.read_limit().sql, Error(server_errno::NOT_SUPPORTED_YET)), exclusively()],
    );
    script.extend(limited_write(true, vec![exclusively()]));
    let client = plain(ScriptedDriver::new(script));
    ready(client.add("views", 5)).unwrap();
    ready(client.add("views", 5)).unwrap();
    assert!(client.driver.script_done());
}
