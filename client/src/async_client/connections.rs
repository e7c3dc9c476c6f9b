//! Where an [`AsyncCounters`](crate::AsyncCounters) runs its calls: pooled
//! connections, or a connection of the caller's.

use std::time::Duration;

use sqlx::MySqlPool;
use sqlx::mysql::MySqlConnection;
use tokio::sync::Mutex;

use super::statements::acquire_error;
use crate::driver::Owner;
use crate::engine::{Attempt, Driver, Outcome};
use crate::error::CounterError;

/// Where an [`AsyncCounters`](crate::AsyncCounters) runs its calls:
/// [`AsyncPooled`] or [`AsyncOnConnection`]. Sealed; its calls wait on
/// tokio.
pub trait AsyncConnections: Driver {}

/// Connections of a [`MySqlPool`]: an
/// [`AsyncCounters`](crate::AsyncCounters) made by
/// [`AsyncCounters::new`](crate::AsyncCounters::new).
#[derive(Debug, Clone)]
pub struct AsyncPooled {
    pub(super) pool: MySqlPool,
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

impl Driver for AsyncPooled {
    async fn attempt(&self, attempt: Attempt<'_>) -> Result<Outcome, CounterError> {
        let mut conn = self.pool.acquire().await.map_err(acquire_error)?;
        let outcome = attempt.run(&mut *conn, Owner::Client).await;
        if let Err(error) = &outcome
            && error.may_leave_a_transaction_open()
        {
            // sqlx gives a connection back as it is: this one may hold a
            // transaction a killed routine left open, which the next call
            // taking it would join.
            conn.close_on_drop();
        }
        outcome
    }

    async fn pause(&self, time: Duration) {
        tokio::time::sleep(time).await;
    }
}

impl Driver for AsyncOnConnection<'_> {
    async fn attempt(&self, attempt: Attempt<'_>) -> Result<Outcome, CounterError> {
        let mut conn = self.conn.lock().await;
        attempt.run(&mut **conn, Owner::Caller).await
    }

    async fn pause(&self, time: Duration) {
        tokio::time::sleep(time).await;
    }
}
