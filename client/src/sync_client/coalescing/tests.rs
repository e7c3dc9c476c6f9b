//! The sync handle's queue against a scripted driver, with real threads:
//! who leads each flush, what it carries, and that every caller hears its
//! own outcome. A caller never answered fails its test after a few seconds
//! instead of hanging it.

use std::sync::mpsc::{Receiver, channel};
use std::thread;
use std::time::Duration;

use slotted_counters_core::PackageOptions;
use slotted_counters_core::package::errno;

use super::*;
use crate::batch::SHORTEST_STALL;
use crate::scripted::{Arg, Gate, Reply, ScriptedDriver, seen_while};

/// A flush counts in the buckets of its oldest delta's hand-over: a time
/// before the server's now.
const ADD: &str = "CALL `counter_add_at`(?, ?, UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND)";
const ADD_MANY: &str = "CALL `counter_add_many_at`(?, ?, UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND)";

/// Long enough for any thread to be scheduled, however loaded the machine.
const PATIENCE: Duration = Duration::from_secs(10);

fn group(replies: impl IntoIterator<Item = Reply>) -> (Arc<Group<ScriptedDriver>>, ScriptedDriver) {
    let driver = ScriptedDriver::new(replies);
    (Arc::new(Group::new(Engine::routines_only(driver.clone(), &PackageOptions::default()))), driver)
}

/// A thread's call of `add`, whose outcome arrives on the receiver.
fn add(group: &Arc<Group<ScriptedDriver>>, name: &'static str) -> Receiver<Result<(), CounterError>> {
    let (answer, outcome) = channel();
    let group = Arc::clone(group);
    thread::spawn(move || answer.send(group.add(name, 1)));
    outcome
}

fn answer(outcome: &Receiver<Result<(), CounterError>>) -> Result<(), CounterError> {
    outcome.recv_timeout(PATIENCE).expect("a caller was never answered")
}

/// Waits until `done` holds.
fn until(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !done() {
        assert!(Instant::now() < deadline, "never came: {what}");
        thread::sleep(Duration::from_millis(1));
    }
}

fn waiting(group: &Group<ScriptedDriver>) -> usize {
    group.lock().waiting.len()
}

fn held(gate: &Gate) -> Reply {
    Reply::Held(gate.clone(), Box::new(Reply::Changed(1)))
}

#[test]
fn calls_queued_during_a_flush_are_carried_by_the_next_one_together() {
    let gate = Gate::default();
    let (mut group, driver) = group([held(&gate), Reply::Changed(1)]);
    Arc::get_mut(&mut group).unwrap().max_flushes = 1;
    let first = add(&group, "views");
    until("the first flush is sent", || driver.sent().len() == 1);
    let later: Vec<_> = (0..4).map(|_| add(&group, "views")).collect();
    until("four calls are queued", || waiting(&group) == 4);
    let held = Duration::from_millis(50);
    thread::sleep(held);
    gate.open();

    answer(&first).unwrap();
    for outcome in &later {
        answer(outcome).unwrap();
    }
    let sent = driver.sent();
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert!(sent.iter().all(|sent| sent.sql == ADD));
    assert_eq!(sent[1].params[..2], [Arg::text("views"), Arg::number(4)], "one add for the four");
    // The flush counts them in the buckets of their hand-over: at least as
    // long before the server's clock as the first flush held them.
    let age = u128::try_from(sent[1].params[2].as_number().expect("an age")).expect("a positive age");
    assert!(age >= held.as_micros(), "{age} µs before the server's clock");
    let stats = group.lock().stats;
    assert_eq!((stats.flushes, stats.deltas), (2, 5));
}

/// One flush at a time; the first carries caller A alone while B, C and D
/// queue, and each caller calls again at once when answered (A three
/// times, the others twice): the flush after it carries all four, A's
/// second call too, and so does the next, rather than B, C and D leading
/// off without the callers just answered.
#[test]
fn callers_a_flush_answered_who_call_again_at_once_ride_the_next_flush_together() {
    let gate = Gate::default();
    let (mut group, driver) = group([held(&gate), Reply::Changed(1), Reply::Changed(1)]);
    let settings = Arc::get_mut(&mut group).unwrap();
    settings.max_flushes = 1;
    // However loaded the machine, every answered thread is back in time.
    settings.gather = PATIENCE;
    let calling = |times: usize| {
        let (answer, outcome) = channel();
        let group = Arc::clone(&group);
        thread::spawn(move || answer.send((0..times).try_for_each(|_| group.add("views", 1))));
        outcome
    };
    let first = calling(3);
    until("the first flush is sent", || driver.sent().len() == 1);
    let others: Vec<_> = (0..3).map(|_| calling(2)).collect();
    until("three calls are queued", || waiting(&group) == 3);
    gate.open();

    for outcome in others.iter().chain([&first]) {
        answer(outcome).unwrap();
    }
    let deltas: Vec<_> = driver.sent().into_iter().map(|sent| sent.params[1].clone()).collect();
    assert_eq!(deltas, [1, 4, 4].map(Arg::number), "deltas per flush");
}

/// Callers who pause between their calls: the one the first flush answers
/// never calls again, so the second flush waits for it in vain, the whole
/// wait; the third, seeing that waiting did not pay, starts at once.
#[test]
fn a_flush_waits_no_more_for_answered_callers_who_did_not_come_back_in_time() {
    let (first_gate, second_gate) = (Gate::default(), Gate::default());
    let (mut group, driver) = group([held(&first_gate), held(&second_gate), Reply::Changed(1)]);
    let settings = Arc::get_mut(&mut group).unwrap();
    let gather = Duration::from_secs(1);
    (settings.max_flushes, settings.gather) = (1, gather);
    let first = add(&group, "views");
    until("the first flush is sent", || driver.sent().len() == 1);
    let second = add(&group, "likes");
    until("the second call is queued", || waiting(&group) == 1);
    let answered = Instant::now();
    first_gate.open();
    answer(&first).unwrap();
    until("the second flush is sent", || driver.sent().len() == 2);
    assert!(answered.elapsed() >= gather, "the second flush waited for the first caller");

    let third = add(&group, "shares");
    until("the third call is queued", || waiting(&group) == 1);
    let answered = Instant::now();
    second_gate.open();
    answer(&second).unwrap();
    answer(&third).unwrap();
    assert!(answered.elapsed() < gather / 2, "the third flush did not wait: {:?}", answered.elapsed());
}

#[test]
fn a_stalled_flush_lets_a_second_start_beside_it_and_says_so() {
    let gate = Gate::default();
    let (group, driver) = group([held(&gate), Reply::Changed(1)]);
    let first = add(&group, "views");
    until("the first flush is sent", || driver.sent().len() == 1);
    let (answer_events, seen) = channel();
    {
        let group = Arc::clone(&group);
        thread::spawn(move || {
            let mut outcome = None;
            let events = seen_while(|| outcome = Some(group.add("likes", 1)));
            answer_events.send((outcome, events))
        });
    }
    let (second, events) = seen.recv_timeout(PATIENCE).expect("the second caller was never answered");
    second.unwrap().expect("answered while the first flush still waits");
    assert_eq!(events.len(), 1, "{events:?}");
    assert!(events[0].starts_with("DEBUG") && events[0].contains("a flush stalled"), "{}", events[0]);
    assert!(events[0].contains("in_flight=1"), "{}", events[0]);
    gate.open();
    answer(&first).unwrap();
    let stats = group.lock().stats;
    assert_eq!((stats.flushes, stats.deltas), (2, 2));
}

#[test]
fn callers_of_two_flushes_in_flight_each_hear_their_own_flushs_outcome() {
    // The first flush stalls, the second starts beside it and commits, then
    // the first's connection breaks: only its caller fails.
    let gate = Gate::default();
    let (group, driver) = group([Reply::Held(gate.clone(), Box::new(Reply::Lost)), Reply::Changed(1)]);
    let first = add(&group, "views");
    until("the first flush is sent", || driver.sent().len() == 1);
    answer(&add(&group, "likes")).expect("the second flush commits while the first is in flight");
    gate.open();
    let lost = answer(&first).expect_err("the first flush's connection broke");
    assert_eq!(lost.code(), None, "no server answered: {lost}");
    let sent = driver.sent();
    assert_eq!(sent[0].params[0], Arg::text("views"));
    assert_eq!(sent[1].params[0], Arg::text("likes"), "each flush carried its own caller");
}

#[test]
fn one_flush_at_a_time_waits_out_a_stall() {
    let gate = Gate::default();
    let (mut group, driver) = group([held(&gate), Reply::Changed(1)]);
    Arc::get_mut(&mut group).unwrap().max_flushes = 1;
    let first = add(&group, "views");
    until("the first flush is sent", || driver.sent().len() == 1);
    let second = add(&group, "likes");
    until("the second call is queued", || waiting(&group) == 1);
    // Long past the stall after which a second flush would start.
    thread::sleep(SHORTEST_STALL * 4);
    assert_eq!(driver.sent().len(), 1, "no second flush beside the first");
    assert_eq!(waiting(&group), 1, "the second call still waits");
    gate.open();
    answer(&first).unwrap();
    answer(&second).unwrap();
}

#[test]
fn each_caller_of_a_flush_refused_for_one_counter_hears_its_own_outcome() {
    use Reply::{Changed, Error};
    let gate = Gate::default();
    let refused = Error(errno::UNKNOWN_COUNTER);
    let (mut group, driver) = group([held(&gate), refused.clone(), refused, Changed(1)]);
    Arc::get_mut(&mut group).unwrap().max_flushes = 1;
    let first = add(&group, "views");
    until("the first flush is sent", || driver.sent().len() == 1);
    let views = add(&group, "views");
    let missing = add(&group, "missing");
    until("two calls are queued", || waiting(&group) == 2);
    gate.open();

    answer(&first).unwrap();
    answer(&views).unwrap();
    let error = answer(&missing).unwrap_err();
    assert_eq!(error.code(), Some(errno::UNKNOWN_COUNTER));
    assert_eq!(driver.sql(), [ADD, ADD_MANY, ADD_MANY, ADD_MANY], "the batch, then each counter alone");
}

#[test]
fn the_callers_of_a_flush_that_panicked_hear_it_and_the_queue_goes_on() {
    let gate = Gate::default();
    let (mut group, driver) = group([held(&gate), Reply::Panic, Reply::Changed(1)]);
    Arc::get_mut(&mut group).unwrap().max_flushes = 1;
    let first = add(&group, "views");
    until("the first flush is sent", || driver.sent().len() == 1);
    // The oldest waiting call leads the next flush: queued one after the other.
    let leader = add(&group, "views");
    until("the leader is queued", || waiting(&group) == 1);
    let carried = add(&group, "likes");
    until("two calls are queued", || waiting(&group) == 2);
    gate.open();

    answer(&first).unwrap();
    assert!(leader.recv_timeout(PATIENCE).is_err(), "the leading thread panicked");
    assert!(matches!(answer(&carried), Err(CounterError::FlushPanicked)));
    answer(&add(&group, "views")).expect("a later call has a flush of its own");
    assert_eq!(driver.sent().len(), 3);
}

#[test]
fn a_leader_whose_own_delta_waits_for_a_later_flush_panics_and_the_queue_goes_on() {
    // One counter a flush. `early` waits for the answered caller to call
    // again; `leader` comes instead, leads at once, carries `early` and
    // leaves its own delta queued; its flush panics while `late` waits
    // behind that delta.
    let (first_gate, panic_gate) = (Gate::default(), Gate::default());
    let panicking = Reply::Held(panic_gate.clone(), Box::new(Reply::Panic));
    let (mut group, driver) = group([held(&first_gate), panicking, Reply::Changed(1)]);
    let settings = Arc::get_mut(&mut group).unwrap();
    (settings.max_flushes, settings.max_counters, settings.gather) = (1, 1, Duration::from_secs(1));
    let first = add(&group, "views");
    until("the first flush is sent", || driver.sent().len() == 1);
    let early = add(&group, "early");
    until("the early call is queued", || waiting(&group) == 1);
    first_gate.open();
    answer(&first).unwrap();
    let leader = add(&group, "leader");
    until("the leader's flush is sent", || driver.sent().len() == 2);
    assert_eq!(driver.sent()[1].params[0], Arg::text("early"), "the leader carried the oldest call");
    let late = add(&group, "late");
    until("the late call waits behind the leader's delta", || waiting(&group) == 2);
    panic_gate.open();

    assert!(matches!(answer(&early), Err(CounterError::FlushPanicked)));
    assert!(leader.recv_timeout(PATIENCE).is_err(), "the leading thread panicked");
    answer(&late).expect("the late call leads a flush of its own, with no new call to start it");
    let sent = driver.sent();
    assert_eq!(sent.len(), 3);
    assert_eq!(sent[2].params[0], Arg::text("late"), "the leader's own delta left with its thread");
}

/// A call made by a thread already unwinding from a panic of its own (from
/// a drop guard, say) is served as any other, and leaves the handle usable.
#[test]
fn a_call_from_a_thread_unwinding_from_its_own_panic_is_served() {
    struct CountsOnDrop(Arc<Group<ScriptedDriver>>, std::sync::mpsc::Sender<Result<(), CounterError>>);
    impl Drop for CountsOnDrop {
        fn drop(&mut self) {
            let _ = self.1.send(self.0.add("panics", 1));
        }
    }
    let (group, _driver) = group([Reply::Changed(1), Reply::Changed(1)]);
    let (answer_to, outcome) = channel();
    let counting = Arc::clone(&group);
    thread::spawn(move || {
        let _counts = CountsOnDrop(counting, answer_to);
        panic!("the application's own panic");
    });
    answer(&outcome).expect("the call made while unwinding commits");
    answer(&add(&group, "views")).expect("the handle goes on");
}

/// Two flushes at once, one counter a flush. The leader of the second
/// leaves its own delta queued; a third flush, started beside the stalled
/// second, carries it; the second panics. The third's answer to the dead
/// leader is dropped, not kept for a caller who is gone.
#[test]
fn a_dead_leaders_delta_carried_by_a_flush_beside_its_own_leaves_no_answer_behind() {
    let (first_gate, panic_gate, third_gate) = (Gate::default(), Gate::default(), Gate::default());
    let panicking = Reply::Held(panic_gate.clone(), Box::new(Reply::Panic));
    let (mut group, driver) =
        group([held(&first_gate), Reply::Changed(1), panicking, held(&third_gate), Reply::Changed(1)]);
    let settings = Arc::get_mut(&mut group).unwrap();
    (settings.max_flushes, settings.max_counters, settings.gather) = (2, 1, Duration::from_secs(1));
    let first = add(&group, "first");
    until("the first flush is sent", || driver.sent().len() == 1);
    // A flush beside the stalled first one, whose callers are answered.
    let (views, more_views) = (add(&group, "views"), add(&group, "views"));
    until("the second flush is sent", || driver.sent().len() == 2);
    answer(&views).unwrap();
    answer(&more_views).unwrap();
    let carried = add(&group, "carried");
    until("a call is queued", || waiting(&group) == 1);
    thread::sleep(Duration::from_millis(20));
    let leader = add(&group, "leader");
    until("the panicking flush is sent", || driver.sent().len() == 3);
    assert_eq!(driver.sent()[2].params[0], Arg::text("carried"), "the leader left its own delta queued");
    first_gate.open();
    answer(&first).unwrap();
    // Long enough for the panicking flush to count as stalled.
    thread::sleep(Duration::from_millis(300));
    let beside = add(&group, "beside");
    until("a flush beside it is sent", || driver.sent().len() == 4);
    assert_eq!(driver.sent()[3].params[0], Arg::text("leader"), "it carries the leader's delta");
    panic_gate.open();
    assert!(matches!(answer(&carried), Err(CounterError::FlushPanicked)));
    assert!(leader.recv_timeout(PATIENCE).is_err(), "the leading thread panicked");
    third_gate.open();
    answer(&beside).unwrap();
    let queue = group.lock();
    assert!(queue.outcomes.is_empty(), "answers nobody will collect: {:?}", queue.outcomes);
    assert!(queue.abandoned.is_empty(), "{:?}", queue.abandoned);
}

/// Once a flush stops waiting for callers who did not come back, calls
/// arriving within the wait after a flush make the next one wait again.
#[test]
fn a_flush_waits_again_once_calls_come_back_in_time() {
    let gates = [Gate::default(), Gate::default(), Gate::default()];
    let (mut group, driver) = group([held(&gates[0]), held(&gates[1]), held(&gates[2]), Reply::Changed(1)]);
    let settings = Arc::get_mut(&mut group).unwrap();
    let gather = Duration::from_secs(1);
    (settings.max_flushes, settings.gather) = (1, gather);
    // As in the test above: the first caller never comes back, the second
    // flush waits for it in vain, and the third, led by `third`, at once.
    let first = add(&group, "views");
    until("the first flush is sent", || driver.sent().len() == 1);
    let second = add(&group, "likes");
    until("the second call is queued", || waiting(&group) == 1);
    gates[0].open();
    answer(&first).unwrap();
    until("the second flush is sent", || driver.sent().len() == 2);
    let third = add(&group, "shares");
    until("the third call is queued", || waiting(&group) == 1);
    gates[1].open();
    answer(&second).unwrap();
    until("the third flush is sent", || driver.sent().len() == 3);
    // A call comes within the wait after the second flush's answer.
    let fourth = add(&group, "views");
    until("the fourth call is queued", || waiting(&group) == 1);
    let answered = Instant::now();
    gates[2].open();
    answer(&third).unwrap();
    answer(&fourth).unwrap();
    assert!(answered.elapsed() >= gather, "the fourth flush waited for the third caller again");
}
