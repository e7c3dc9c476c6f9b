//! Bounded counters: stock that is never oversold and quotas that are
//! never exceeded. Through the routines as any client calls them, and
//! through both Rust clients, their coalescing handles and the plain mode.
//! Every sale is watched while it runs: a reader reads the counter's slots
//! in one consistent read, again and again, and each read must have every
//! slot within its shares and the total within the bounds.

mod clients;
mod routines;
mod storms;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;

use mysql::PooledConn;
use mysql::prelude::Queryable;
use slotted_counters::{Bound, CounterError};

use crate::support::{Database, StopOnDrop};

/// A slot: its value, and the least and most it may hold.
type Slot = (i64, Option<i64>, Option<i64>);

/// Each slot of counter `name`.
fn shares(conn: &mut PooledConn, name: &str) -> Vec<Slot> {
    conn.exec(
        "SELECT counter, lowest, highest FROM counters WHERE counter_name = ? ORDER BY counter_id",
        (name,),
    )
    .unwrap()
}

/// Asserts what the slots of a counter bounded by `floor` and `ceiling`
/// always hold: each slot within its shares, and the shares adding up to
/// the bounds, so that the total is within them. The total.
fn assert_within(slots: &[Slot], floor: Option<i64>, ceiling: Option<i64>) -> i64 {
    for &(value, lowest, highest) in slots {
        assert!(
            lowest.is_none_or(|lowest| lowest <= value) && highest.is_none_or(|highest| value <= highest),
            "a slot outside its shares: {slots:?}"
        );
    }
    let sum = |side: fn(&Slot) -> Option<i64>| slots.iter().map(side).sum::<Option<i64>>();
    assert_eq!(sum(|slot| slot.1), floor, "the floor's shares: {slots:?}");
    assert_eq!(sum(|slot| slot.2), ceiling, "the ceiling's shares: {slots:?}");
    let total = slots.iter().map(|slot| slot.0).sum();
    assert!(floor.is_none_or(|floor| floor <= total) && ceiling.is_none_or(|ceiling| total <= ceiling));
    total
}

/// What a sale came to.
#[derive(Debug)]
struct Sale {
    /// Takes that succeeded.
    sold: u64,
    /// Takes refused for the bound: each with 9004, and the room it said.
    refused: Vec<(Bound, u64)>,
    /// Consistent reads of the slots the watcher made while it ran.
    watched: u64,
}

/// Runs `clients` threads, each taking with the taker `taker` makes it
/// until a take is refused for the counter's bound, while a watcher reads
/// counter `name`'s slots (bounded by `floor` and `ceiling`) and checks each
/// read. Any other error fails the test.
fn sale<T: FnMut() -> Result<(), CounterError>>(
    db: &Database,
    name: &str,
    (floor, ceiling): (Option<i64>, Option<i64>),
    clients: usize,
    taker: impl Fn() -> T + Sync,
) -> Sale {
    let running = AtomicBool::new(true);
    let sold = AtomicU64::new(0);
    let (refused, watched) = thread::scope(|scope| {
        let stop = StopOnDrop(&running);
        let watcher = scope.spawn(|| {
            let mut conn = db.conn();
            let mut watched = 0;
            while running.load(Ordering::SeqCst) {
                assert_within(&shares(&mut conn, name), floor, ceiling);
                watched += 1;
            }
            watched
        });
        let takers: Vec<_> = (0..clients)
            .map(|_| {
                scope.spawn(|| {
                    let mut take = taker();
                    loop {
                        match take() {
                            Ok(()) => drop(sold.fetch_add(1, Ordering::SeqCst)),
                            Err(CounterError::PastBound { bound, room, .. }) => break (bound, room),
                            Err(error) => panic!("a take failed otherwise: {error}"),
                        }
                    }
                })
            })
            .collect();
        let refused = takers.into_iter().map(|taker| taker.join().unwrap()).collect();
        drop(stop);
        (refused, watcher.join().unwrap())
    });
    Sale { sold: sold.into_inner(), refused, watched }
}

/// A take of `delta` from counter `name` through the routines, on a
/// connection of its own: `counter_add`, again after a deadlock or a
/// transaction the server rolled back (1213, 1020).
fn raw_take(db: &Database, name: &str, delta: i64) -> impl FnMut() -> Result<(), CounterError> {
    let mut conn = db.conn();
    let name = name.to_owned();
    move || loop {
        match conn.exec_drop("CALL counter_add(?, ?)", (&name, delta)) {
            Ok(()) => return Ok(()),
            Err(mysql::Error::MySqlError(error)) if [1213, 1020].contains(&error.code) => continue,
            Err(mysql::Error::MySqlError(error)) if error.code == 9004 => {
                let (bound, room) = read_refusal(&error.message);
                return Err(CounterError::PastBound {
                    message: error.message,
                    name: Some(name.clone()),
                    bound,
                    room,
                });
            }
            Err(error) => panic!("counter_add failed: {error}"),
        }
    }
}

/// The bound and room of a refusal's message, as the documentation tells
/// applications in other languages to read them.
fn read_refusal(message: &str) -> (Bound, u64) {
    let bound = if message.contains("would pass the floor") { Bound::Floor } else { Bound::Ceiling };
    let room = message.split("(room left: ").nth(1).and_then(|rest| rest.split(')').next());
    (bound, room.and_then(|room| room.parse().ok()).unwrap_or_else(|| panic!("no room in {message:?}")))
}
