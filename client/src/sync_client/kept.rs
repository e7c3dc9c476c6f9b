//! Connections a [`Counters`](crate::Counters) keeps between its calls.
//!
//! A connection taken from a `mysql::Pool` costs round trips beyond the
//! call's own: the pool pings it when it is taken, and resets it
//! (`COM_RESET_CONNECTION`) when it is given back, which also drops the
//! statements prepared on it, so the next call prepares its statement
//! again. A call on a kept connection sends its statement, prepared once
//! per connection, and nothing else. The calls leave no session state (no
//! open transaction: each runs in autocommit mode, and a routine that opens
//! one commits or rolls it back), so keeping a connection between them is
//! safe; a connection goes back to the application's pool, reset there,
//! when it is not kept, and after a call the server interrupted, which on
//! MySQL may leave a routine's transaction open.

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use mysql::{Pool, PooledConn};

use crate::error::CounterError;

/// Connections kept at most, by default: one per call in flight, up to
/// this many, so that the client never holds much of an application's pool.
pub const DEFAULT_KEPT_CONNECTIONS: usize = 4;

/// A kept connection idle for longer than this is checked (`DO 1`) before a
/// call uses it: the server may have closed it (`wait_timeout`, a restart),
/// and a call sent on a closed connection fails without saying whether it
/// ran. A connection in steady use is not checked.
const CHECK_AFTER_IDLE: Duration = Duration::from_secs(1);

/// The idle kept connections, most recently used last.
#[derive(Debug)]
pub(crate) struct KeptConnections {
    idle: Mutex<Vec<Idle>>,
    max: usize,
}

#[derive(Debug)]
struct Idle {
    conn: PooledConn,
    since: Instant,
}

impl KeptConnections {
    pub(crate) fn new(max: usize) -> Self {
        KeptConnections { idle: Mutex::new(Vec::new()), max }
    }

    /// A connection for one call: the most recently used kept one that
    /// still answers, or one from `pool`.
    pub(crate) fn take(&self, pool: &Pool) -> Result<PooledConn, CounterError> {
        loop {
            let idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner).pop();
            let Some(Idle { mut conn, since }) = idle else {
                return pool.get_conn().map_err(super::statements::connect_error);
            };
            if since.elapsed() < CHECK_AFTER_IDLE || conn.query_drop("DO 1").is_ok() {
                return Ok(conn);
            }
        }
    }

    /// Keeps `conn` after a call that ended with `outcome`, unless as many
    /// are kept already, the connection failed, or the call may have left a
    /// transaction open on it: it goes back to the pool, which drops it when
    /// it is broken and resets it (rolling back what it holds) otherwise.
    pub(crate) fn give_back<T>(&self, conn: PooledConn, outcome: &Result<T, CounterError>) {
        let failed = matches!(outcome, Err(error)
            if matches!(error, CounterError::Connection { .. }) || error.may_leave_a_transaction_open());
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        if !failed && idle.len() < self.max {
            idle.push(Idle { conn, since: Instant::now() });
        }
    }
}
