//! Where a [`Counters`](crate::Counters) runs its calls: pooled
//! connections, or a connection of the caller's.

use std::cell::RefCell;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use mysql::prelude::Queryable;
use mysql::{Pool, PooledConn};

use super::statements::{Blocking, connect_error};
use crate::driver::Owner;
use crate::engine::sealed::Sealed;
use crate::engine::{Attempt, Driver, Outcome};
use crate::error::CounterError;
use crate::kept::{KeptConnections, Taken};

/// Where a [`Counters`](crate::Counters) runs its calls: [`Pooled`] or
/// [`OnConnection`]. Sealed, as its supertrait [`Driver`] is: no other
/// crate implements it. Its calls block the calling thread.
pub trait SyncConnections: Driver {}

/// Pooled connections, some kept between calls: a
/// [`Counters`](crate::Counters) made by [`Counters::new`](crate::Counters::new).
#[derive(Debug, Clone)]
pub struct Pooled {
    pub(super) pool: Pool,
    /// How long a call waits for the pool to give it a connection.
    pub(super) pool_timeout: Duration,
    /// Shared by the clones of a `Counters`, its coalescing handles included.
    pub(super) kept: Arc<KeptConnections<PooledConn>>,
}

/// A connection of the caller's: a [`CountersOn`](crate::CountersOn), made
/// by [`Counters::on`](crate::Counters::on).
pub struct OnConnection<'a, Q> {
    conn: RefCell<&'a mut Q>,
}

impl<'a, Q> OnConnection<'a, Q> {
    pub(super) fn new(conn: &'a mut Q) -> Self {
        OnConnection { conn: RefCell::new(conn) }
    }
}

impl<Q> std::fmt::Debug for OnConnection<'_, Q> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OnConnection").finish_non_exhaustive()
    }
}

impl SyncConnections for Pooled {}

impl Pooled {
    /// A connection for one call: the most recently used kept one that
    /// still answers, or one from the pool.
    fn take(&self) -> Result<PooledConn, CounterError> {
        loop {
            match self.kept.take() {
                None => return self.pool.try_get_conn(self.pool_timeout).map_err(connect_error),
                Some(Taken::Fresh(conn)) => return Ok(conn),
                Some(Taken::Idle(mut conn)) => {
                    if conn.query_drop("DO 1").is_ok() {
                        return Ok(conn);
                    }
                }
            }
        }
    }
}
impl<Q: Queryable> SyncConnections for OnConnection<'_, Q> {}

impl Sealed for Pooled {}

impl Driver for Pooled {
    async fn attempt(&self, attempt: Attempt<'_>) -> Result<Outcome, CounterError> {
        let mut conn = self.take()?;
        let outcome = attempt.run(&mut Blocking(&mut conn), Owner::Client).await;
        // One not kept goes back to the pool, which resets it.
        drop(self.kept.give_back(conn, &outcome));
        outcome
    }

    async fn pause(&self, time: Duration) {
        thread::sleep(time);
    }
}

impl<Q: Queryable> Sealed for OnConnection<'_, Q> {}

impl<Q: Queryable> Driver for OnConnection<'_, Q> {
    #[allow(
        clippy::await_holding_refcell_ref,
        reason = "a blocking driver's future completes in its first poll"
    )]
    async fn attempt(&self, attempt: Attempt<'_>) -> Result<Outcome, CounterError> {
        let mut conn = self.conn.borrow_mut();
        attempt.run(&mut Blocking(&mut **conn), Owner::Caller).await
    }

    async fn pause(&self, time: Duration) {
        thread::sleep(time);
    }
}
