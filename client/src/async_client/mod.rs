//! The async client, for tokio applications (feature `sqlx`): the calls of
//! [`crate::Counters`] over a [`sqlx::MySqlPool`], with the same meaning,
//! errors and retries, made by the same code. Retries and the reinstall
//! ride-through wait on tokio's timer, never blocking a runtime thread.
//!
//! A call's future may be dropped before it completes, as when a request
//! handler is cancelled. The call then either ran or did not: one `CALL` in
//! autocommit mode is one transaction. Its connection goes back to sqlx's
//! pool, and sqlx's tracker reports that a MySQL connection dropped in the
//! middle of a query may be left unusable (sqlx#563). To make a delta's fate
//! independent of its caller, use [`AsyncCounters::coalescing`], whose
//! flushes run in tasks of their own.

mod bounds;
mod coalescing;
mod connections;
mod periods;
mod statements;

use std::sync::Arc;

use slotted_counters_core::ConfigError;
use sqlx::MySqlPool;
use sqlx::mysql::{MySqlConnection, MySqlSslMode};

use crate::builder::ClientBuilder;
use crate::call::{Drift, Reconcile};
use crate::call::{NewCounter, StartDate};
use crate::engine::Engine;
use crate::error::CounterError;
use crate::kept::KeptConnections;

pub use coalescing::AsyncCoalescing;
pub use connections::{AsyncConnections, AsyncOnConnection, AsyncPooled};

/// Why a pool in `ssl-mode=VERIFY_CA` is refused, and what to use instead.
const VERIFY_CA_REFUSED: &str = "ssl-mode=VERIFY_CA is refused: it does not check the host name, and \
     sqlx trusts every public web certificate authority beside any ssl-ca, so a certificate any of \
     them issued for any name would pass; use ssl-mode=VERIFY_IDENTITY, or ssl-mode=REQUIRED for \
     encryption without verification";

/// Calls the slotted-counter routines from async code, on connections of a
/// [`MySqlPool`].
///
/// Each call runs in a transaction of its own on a pooled connection, and
/// is retried when the server rolls it back (a deadlock, a lock wait
/// timeout, a lost certification on a cluster), as [`crate::Counters`]
/// does. [`AsyncCounters::on`] runs the same calls on a connection of the
/// caller's, inside its transaction, never retried. Cheap to clone: clones
/// share the pool.
///
/// ```no_run
/// use slotted_counters::{AsyncCounters, NewCounter, sqlx};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let pool = sqlx::MySqlPool::connect("mysql://app:secret@127.0.0.1:3306/app").await?;
/// let counters = AsyncCounters::new(pool)?;
/// counters.setup("downloads", NewCounter::new("release downloads").slots(16)).await?;
/// counters.increment("downloads").await?;
/// assert_eq!(counters.get("downloads").await?, Some(1));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct AsyncCounters<C = AsyncPooled> {
    engine: Engine<C>,
}

/// An [`AsyncCounters`] whose calls run on a connection of the caller's,
/// inside its transaction. Made by [`AsyncCounters::on`].
pub type AsyncCountersOn<'c> = AsyncCounters<AsyncOnConnection<'c>>;

impl AsyncCounters {
    /// The settings of a client over `pool`, which
    /// [`ClientBuilder::build`](ClientBuilder<MySqlPool>::build) makes: the
    /// same as [`crate::Counters::builder`]'s.
    ///
    /// ```no_run
    /// # async fn run(pool: sqlx::MySqlPool) -> Result<(), Box<dyn std::error::Error>> {
    /// use slotted_counters::{AsyncCounters, PackageOptions};
    ///
    /// let options = PackageOptions::builder().prefix("hits_").build()?;
    /// let counters = AsyncCounters::builder(pool).package(&options).write_ids().build()?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn builder(pool: MySqlPool) -> ClientBuilder<MySqlPool> {
        ClientBuilder::new(pool)
    }

    /// A client over `pool` with every default setting, as
    /// [`crate::Counters::new`]: `AsyncCounters::builder(pool).build()`.
    pub fn new(pool: MySqlPool) -> Result<Self, ConfigError> {
        Self::builder(pool).build()
    }

    /// The same calls on `conn`, inside a transaction of the caller's
    /// (`&mut tx` for a [`sqlx::Transaction`]); never retried: a deadlock
    /// rolled back the caller's whole transaction.
    ///
    /// ```no_run
    /// # async fn run(pool: sqlx::MySqlPool) -> Result<(), Box<dyn std::error::Error>> {
    /// # let counters = slotted_counters::AsyncCounters::new(pool.clone())?;
    /// let mut tx = pool.begin().await?;
    /// counters.on(&mut tx).increment("orders").await?;
    /// tx.commit().await?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn on<'c>(&self, conn: &'c mut MySqlConnection) -> AsyncCountersOn<'c> {
        AsyncCounters { engine: self.engine.on(AsyncOnConnection::new(conn)) }
    }

    /// Recounts counters from their source of truth while writes go on,
    /// as [`crate::Counters::reconcile`].
    pub async fn reconcile(&self, reconcile: Reconcile<'_>) -> Result<Vec<Drift>, CounterError> {
        self.engine.reconcile(reconcile).await
    }
}

impl ClientBuilder<MySqlPool> {
    /// The client these settings describe. Refuses a pool whose connections
    /// use `ssl-mode=VERIFY_CA`: sqlx (0.8) puts the public web certificate
    /// authorities in the trust store beside any `ssl-ca`, and that mode
    /// skips the host name, so a certificate any of them issued for any
    /// name would pass. Use `VERIFY_IDENTITY`; it too trusts the public
    /// authorities beside an `ssl-ca`, which the client cannot see from the
    /// pool. Refuses the plain mode of a package only its routines serve.
    pub fn build(self) -> Result<AsyncCounters, ConfigError> {
        if matches!(self.pool.connect_options().get_ssl_mode(), MySqlSslMode::VerifyCa) {
            return Err(ConfigError::Tls(VERIFY_CA_REFUSED.to_owned()));
        }
        let kept = Arc::new(KeptConnections::new(self.kept_connections.unwrap_or(0), self.check_kept_after));
        Ok(AsyncCounters { engine: self.engine(AsyncPooled { pool: self.pool.clone(), kept })? })
    }
}

impl<C: AsyncConnections> AsyncCounters<C> {
    /// Creates a counter as `counter` describes it.
    pub async fn setup(&self, name: &str, counter: NewCounter<'_>) -> Result<(), CounterError> {
        self.engine.setup(name, counter).await
    }

    /// Creates a counter unless one has the name, as
    /// [`crate::Counters::setup_if_missing`].
    pub async fn setup_if_missing(&self, name: &str, counter: NewCounter<'_>) -> Result<(), CounterError> {
        self.engine.setup_if_missing(name, counter).await
    }

    /// Adds 1 to a counter.
    pub async fn increment(&self, name: &str) -> Result<(), CounterError> {
        self.engine.increment(name).await
    }

    /// Adds `delta`, which may be negative, to a counter.
    pub async fn add(&self, name: &str, delta: i64) -> Result<(), CounterError> {
        self.engine.add(name, delta).await
    }

    /// Adds each delta to its counter in one call and one transaction, as
    /// [`crate::Counters::add_many`]; on an [`AsyncCountersOn`], they
    /// commit or roll back with the caller's transaction.
    pub async fn add_many<S: AsRef<str>>(
        &self,
        deltas: impl IntoIterator<Item = (S, i64)>,
    ) -> Result<(), CounterError> {
        self.engine.add_many(deltas).await
    }

    /// Sets a counter to `value`, and its start date as `start_date` says,
    /// in one statement; on an [`AsyncCountersOn`], it commits or rolls
    /// back with the caller's transaction.
    pub async fn reset(&self, name: &str, value: i64, start_date: StartDate) -> Result<(), CounterError> {
        self.engine.reset(name, value, start_date).await
    }

    /// Removes a counter and all its slots.
    pub async fn delete(&self, name: &str) -> Result<(), CounterError> {
        self.engine.delete(name).await
    }

    /// Forgets the write ids recorded more than `window` ago, as
    /// [`crate::Counters::forget_writes`].
    pub async fn forget_writes(&self, window: std::time::Duration) -> Result<(), CounterError> {
        self.engine.forget_writes(window).await
    }

    /// The value of a counter, or `None` when it does not exist.
    pub async fn get(&self, name: &str) -> Result<Option<i64>, CounterError> {
        self.engine.get(name).await
    }

    /// The values of many counters, in the order of `names`, read in one
    /// round trip; `None` for those that do not exist.
    pub async fn get_many<S: AsRef<str>>(
        &self,
        names: impl IntoIterator<Item = S>,
    ) -> Result<Vec<Option<i64>>, CounterError> {
        self.engine.get_many(names).await
    }
}

#[cfg(test)]
mod tests;
