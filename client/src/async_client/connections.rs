//! Where an [`AsyncCounters`](crate::AsyncCounters) runs its calls: pooled
//! connections, or a connection of the caller's.

use std::sync::Arc;
use std::time::Duration;

use sqlx::mysql::MySqlConnection;
use sqlx::pool::PoolConnection;
use sqlx::{Connection, MySql, MySqlPool};
use tokio::runtime::Handle;
use tokio::sync::Mutex;

use super::statements::acquire_error;
use crate::driver::Owner;
use crate::engine::sealed::Sealed;
use crate::engine::{Attempt, Driver, Outcome};
use crate::error::CounterError;
use crate::kept::{KeptConnections, Taken};

/// Where an [`AsyncCounters`](crate::AsyncCounters) runs its calls:
/// [`AsyncPooled`] or [`AsyncOnConnection`]. Sealed, as its supertrait
/// [`Driver`] is: no other crate implements it. Its calls wait on tokio.
pub trait AsyncConnections: Driver {}

/// Connections of a [`MySqlPool`]: an
/// [`AsyncCounters`](crate::AsyncCounters) made by
/// [`AsyncCounters::new`](crate::AsyncCounters::new).
#[derive(Debug, Clone)]
pub struct AsyncPooled {
    pub(super) pool: MySqlPool,
    /// None for an [`AsyncCounters`](crate::AsyncCounters)'s own calls,
    /// which take a connection from the pool each, as an application's
    /// code would; a coalescing handle keeps one per flush in flight, so
    /// that its flushes skip the pool's ping.
    pub(super) kept: Arc<KeptConnections<OnRuntime>>,
}

/// A pooled connection that goes back to its pool through the runtime it
/// was taken on, wherever it is dropped: sqlx gives a connection back in a
/// task, which needs a tokio context, and a kept one is dropped with the
/// last handle that keeps it, which may be outside any runtime.
#[derive(Debug)]
pub(crate) struct OnRuntime {
    /// `None` only while it is dropped.
    conn: Option<PoolConnection<MySql>>,
    runtime: Handle,
}

impl OnRuntime {
    fn conn(&mut self) -> &mut PoolConnection<MySql> {
        self.conn.as_mut().expect("a connection is taken only when dropped")
    }
}

impl Drop for OnRuntime {
    fn drop(&mut self) {
        let _context = self.runtime.enter();
        drop(self.conn.take());
    }
}

impl AsyncPooled {
    /// The same pool, keeping up to `connections` of its connections
    /// between calls, shared by the clones of the result.
    pub(super) fn keeping(&self, connections: usize) -> Self {
        AsyncPooled { pool: self.pool.clone(), kept: Arc::new(self.kept.keeping(connections)) }
    }

    /// A connection for one call: the most recently used kept one that
    /// still answers, or one from the pool.
    async fn take(&self) -> Result<OnRuntime, CounterError> {
        loop {
            match self.kept.take() {
                None => {
                    let conn = self.pool.acquire().await.map_err(acquire_error)?;
                    return Ok(OnRuntime { conn: Some(conn), runtime: Handle::current() });
                }
                Some(Taken::Fresh(conn)) => return Ok(conn),
                Some(Taken::Idle(mut conn)) => {
                    if conn.conn().ping().await.is_ok() {
                        return Ok(conn);
                    }
                }
            }
        }
    }
}

/// A connection of the caller's: an
/// [`AsyncCountersOn`](crate::AsyncCountersOn), made by
/// [`AsyncCounters::on`](crate::AsyncCounters::on).
#[derive(Debug)]
pub struct AsyncOnConnection<'c> {
    /// Locked by one call at a time, so that the calls take `&self` on
    /// either kind of connection.
    conn: Mutex<&'c mut MySqlConnection>,
}

impl<'c> AsyncOnConnection<'c> {
    pub(super) fn new(conn: &'c mut MySqlConnection) -> Self {
        AsyncOnConnection { conn: Mutex::new(conn) }
    }
}

impl AsyncConnections for AsyncPooled {}
impl AsyncConnections for AsyncOnConnection<'_> {}

impl Sealed for AsyncPooled {}

impl Driver for AsyncPooled {
    async fn attempt(&self, attempt: Attempt<'_>) -> Result<Outcome, CounterError> {
        let mut conn = self.take().await?;
        let outcome = attempt.run(&mut **conn.conn(), Owner::Client).await;
        if let Some(mut conn) = self.kept.give_back(conn, &outcome)
            && let Err(error) = &outcome
            && error.may_leave_a_transaction_open()
        {
            // sqlx gives a connection back as it is: this one may hold a
            // transaction a killed routine left open, which the next call
            // taking it would join.
            conn.conn().close_on_drop();
        }
        outcome
    }

    async fn pause(&self, time: Duration) {
        tokio::time::sleep(time).await;
    }
}

impl Sealed for AsyncOnConnection<'_> {}

impl Driver for AsyncOnConnection<'_> {
    async fn attempt(&self, attempt: Attempt<'_>) -> Result<Outcome, CounterError> {
        let mut conn = self.conn.lock().await;
        attempt.run(&mut **conn, Owner::Caller).await
    }

    async fn pause(&self, time: Duration) {
        tokio::time::sleep(time).await;
    }
}
