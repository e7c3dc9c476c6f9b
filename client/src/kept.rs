//! Connections a client keeps between its calls, for either client.
//!
//! A connection taken from a pool costs round trips beyond the call's own:
//! a `mysql::Pool` pings it when it is taken and resets it
//! (`COM_RESET_CONNECTION`) when it is given back, which also drops the
//! statements prepared on it; sqlx's pool pings it when it is taken
//! (`test_before_acquire`, on by default). A call on a kept connection
//! sends its statement, prepared once per connection, and nothing else.
//! The calls leave no session state (no open transaction: each runs in
//! autocommit mode, and a routine that opens one commits or rolls it back),
//! so keeping a connection between them is safe; a connection goes back to
//! the application's pool when it is not kept, and after a call the server
//! interrupted, which on MySQL may leave a routine's transaction open.

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::error::CounterError;

/// Connections a sync client keeps at most, by default: one per call in
/// flight, up to this many, so that the client never holds much of an
/// application's pool.
pub const DEFAULT_KEPT_CONNECTIONS: usize = 4;

/// A kept connection idle for longer than this is checked (a ping) before
/// a call uses it, by default: the server may have closed it
/// (`wait_timeout`, a restart), and a call sent on a closed connection
/// fails without saying whether it ran. A connection in steady use is not
/// checked.
pub const DEFAULT_CHECK_KEPT_AFTER: Duration = Duration::from_secs(1);

/// The idle kept connections of type `C`, most recently used last.
#[derive(Debug)]
pub(crate) struct KeptConnections<C> {
    idle: Mutex<Vec<Idle<C>>>,
    max: usize,
    /// How long one may be idle before it is checked.
    check_after: Duration,
}

#[derive(Debug)]
struct Idle<C> {
    conn: C,
    since: Instant,
}

/// A kept connection taken for a call.
pub(crate) enum Taken<C> {
    /// Used a moment ago: use it.
    Fresh(C),
    /// Idle for a while: check it first, and drop it when that fails.
    Idle(C),
}

impl<C> KeptConnections<C> {
    pub(crate) fn new(max: usize, check_after: Duration) -> Self {
        KeptConnections { idle: Mutex::new(Vec::new()), max, check_after }
    }

    /// None kept yet, up to `max`, checked as these are: the async
    /// coalescing handle's own.
    #[cfg(feature = "sqlx")]
    pub(crate) fn keeping(&self, max: usize) -> Self {
        Self::new(max, self.check_after)
    }

    /// The most recently used kept connection, if any: the caller checks
    /// an idle one, and takes one from its pool when there is none.
    pub(crate) fn take(&self) -> Option<Taken<C>> {
        let Idle { conn, since } = self.idle.lock().unwrap_or_else(PoisonError::into_inner).pop()?;
        Some(if since.elapsed() < self.check_after { Taken::Fresh(conn) } else { Taken::Idle(conn) })
    }

    /// Keeps `conn` after a call that ended with `outcome`, unless as many
    /// are kept already, the connection failed, or the call may have left a
    /// transaction open on it: it goes back to the pool, which drops it when
    /// it is broken (and `mysql`'s resets it, rolling back what it holds).
    /// Returns the connection when it is not kept.
    pub(crate) fn give_back<T>(&self, conn: C, outcome: &Result<T, CounterError>) -> Option<C> {
        let failed = matches!(outcome, Err(error)
            if matches!(error, CounterError::Connection { .. }) || error.may_leave_a_transaction_open());
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        if failed || idle.len() >= self.max {
            return Some(conn);
        }
        idle.push(Idle { conn, since: Instant::now() });
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_most_recently_used_connection_is_taken_first_and_no_more_than_the_most_are_kept() {
        let kept = KeptConnections::new(2, DEFAULT_CHECK_KEPT_AFTER);
        for conn in [1, 2, 3] {
            let returned = kept.give_back(conn, &Ok(()));
            assert_eq!(returned, (conn == 3).then_some(3), "two kept at most");
        }
        assert!(matches!(kept.take(), Some(Taken::Fresh(2))));
        assert!(matches!(kept.take(), Some(Taken::Fresh(1))));
        assert!(kept.take().is_none());
    }

    #[test]
    fn a_connection_idle_for_the_check_is_checked_before_its_call() {
        let checked_at_once = KeptConnections::new(2, Duration::ZERO);
        assert_eq!(checked_at_once.give_back(1, &Ok(())), None);
        assert!(matches!(checked_at_once.take(), Some(Taken::Idle(1))));
    }

    #[cfg(feature = "sqlx")]
    #[test]
    fn kept_connections_made_from_others_are_checked_as_those() {
        let keeping = KeptConnections::new(2, Duration::ZERO).keeping(1);
        assert_eq!(keeping.give_back(2, &Ok(())), None);
        assert!(matches!(keeping.take(), Some(Taken::Idle(2))));
    }

    #[test]
    fn a_connection_whose_call_failed_on_it_is_not_kept() {
        let kept = KeptConnections::new(2, DEFAULT_CHECK_KEPT_AFTER);
        let lost: Result<(), CounterError> = Err(CounterError::connection("gone", std::fmt::Error));
        assert_eq!(kept.give_back(1, &lost), Some(1));
        assert!(kept.take().is_none());
    }
}
