//! The sync client, over the [`mysql`] crate.
//!
//! [`Counters`] calls the routines on connections from a [`mysql::Pool`].
//! Each such call is its own transaction, so when the server picks it as a
//! deadlock victim (1213), it times out waiting for a lock (1205), MariaDB's
//! snapshot isolation finds a row changed since its snapshot (1020) or it
//! loses Group Replication's certification (3101), nothing of it was applied
//! and it is retried, with jittered exponential backoff, a bounded number of
//! times. Inside a transaction of your own, use [`Counters::on`]: those
//! calls are never retried, because a deadlock rolls back your whole
//! transaction, and only you can run it again.
//!
//! Every call, in either mode, also rides through a reinstall on MySQL, which
//! drops each routine and trigger just before creating it again: a call that
//! finds its routine missing (1305) or not granted again yet (1370), or a
//! write that finds the trigger that applies it missing (the package's CHECK
//! refuses it), changed nothing, so it is sent again for up to
//! [`REINSTALL_WINDOW`](crate::defaults::REINSTALL_WINDOW) before it fails,
//! with [`CounterError::NotInstalled`] or [`CounterError::NotGranted`] for
//! the first two.
//!
//! Many threads that each increment on their own can share a [`Coalescing`]
//! handle ([`Counters::coalescing`]), which applies their deltas in one
//! transaction per flush.

mod bounds;
mod coalescing;
mod connections;
mod periods;
mod statements;

use std::sync::Arc;
use std::time::Duration;

use mysql::Pool;
use mysql::prelude::Queryable;
use slotted_counters_core::ConfigError;

use crate::builder::ClientBuilder;
use crate::call::{Drift, Reconcile};
use crate::call::{NewCounter, StartDate};
use crate::driver::ready;
use crate::engine::Engine;
use crate::error::CounterError;

use crate::kept::{DEFAULT_KEPT_CONNECTIONS, KeptConnections};
pub use coalescing::Coalescing;
pub use connections::{OnConnection, Pooled, SyncConnections};

/// Calls the slotted-counter routines.
///
/// [`Counters::new`] and [`Counters::builder`] make one over a connection
/// pool: each call runs in a transaction of its own on a pooled connection,
/// and is retried when the server rolls it back as a deadlock victim or
/// after a lock wait timeout.
/// [`Counters::on`] makes one over a connection of the caller's
/// ([`CountersOn`]): its calls join the caller's transaction and are never
/// retried. Both have the same counter calls.
///
/// ```no_run
/// use slotted_counters::{Counters, NewCounter, mysql};
///
/// let pool = mysql::Pool::new("mysql://app:secret@127.0.0.1:3306/app")?;
/// let counters = Counters::new(pool)?;
/// counters.setup("downloads", NewCounter::new("release downloads").slots(16))?;
/// counters.increment("downloads")?;
/// assert_eq!(counters.get("downloads")?, Some(1));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Counters<C = Pooled> {
    engine: Engine<C>,
}

/// A [`Counters`] whose calls run on a connection of the caller's, inside
/// its transaction. Made by [`Counters::on`].
pub type CountersOn<'a, Q> = Counters<OnConnection<'a, Q>>;

impl Counters {
    /// The settings of a client over `pool`, which
    /// [`ClientBuilder::build`](ClientBuilder<Pool>::build) makes.
    ///
    /// ```no_run
    /// use slotted_counters::{Counters, PackageOptions};
    ///
    /// # let pool = mysql::Pool::new("mysql://app:secret@127.0.0.1:3306/app")?;
    /// let options = PackageOptions::builder().prefix("hits_").build()?;
    /// let counters = Counters::builder(pool).package(&options).write_ids().build()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn builder(pool: Pool) -> ClientBuilder<Pool> {
        ClientBuilder::new(pool)
    }

    /// A client over `pool` with every default setting: the routines of a
    /// package generated with the default options, five tries, no write
    /// ids. `Counters::builder(pool).build()`.
    pub fn new(pool: Pool) -> Result<Self, ConfigError> {
        Self::builder(pool).build()
    }

    /// The same calls on `conn`, inside a transaction of the caller's; never retried.
    ///
    /// ```no_run
    /// use mysql::TxOpts;
    ///
    /// # let pool = mysql::Pool::new("mysql://app:secret@127.0.0.1:3306/app")?;
    /// # let counters = slotted_counters::Counters::new(pool.clone())?;
    /// let mut tx = pool.start_transaction(TxOpts::default())?;
    /// counters.on(&mut tx).increment("orders")?;
    /// tx.commit()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn on<'a, Q: Queryable>(&self, conn: &'a mut Q) -> CountersOn<'a, Q> {
        Counters { engine: self.engine.on(OnConnection::new(conn)) }
    }

    /// Recounts counters from their source of truth while writes go on:
    /// reads what the query of `reconcile` counts and each counter's value
    /// in one consistent snapshot, then adds each counter's difference as
    /// an ordinary write with a write id, in a transaction of its own, so
    /// that writes committed meanwhile count on top. Exact when the
    /// application changes its source rows and the counter in one
    /// transaction. Reconciles of one package wait for each other (up to
    /// [`RECONCILE_WAIT`](crate::defaults::RECONCILE_WAIT)). Needs the
    /// write-ids feature; not on a caller's connection, whose transaction
    /// its snapshot would end.
    ///
    /// ```no_run
    /// use slotted_counters::{Correction, Reconcile};
    /// # let counters = slotted_counters::Counters::new(mysql::Pool::new("mysql://a@h/db")?)?;
    /// let query = "SELECT CONCAT('comments:', post_id), COUNT(*) FROM comments GROUP BY post_id";
    /// for drift in counters.reconcile(Reconcile::query(query).set("comments:"))? {
    ///     if drift.correction != Correction::NoDrift {
    ///         println!("{}: {:?} ({:?})", drift.name, drift.drift(), drift.correction);
    ///     }
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn reconcile(&self, reconcile: Reconcile<'_>) -> Result<Vec<Drift>, CounterError> {
        ready(self.engine.reconcile(reconcile))
    }
}

impl ClientBuilder<Pool> {
    /// How long a call waits for the pool to give it a connection when all
    /// of them are in use (by default
    /// [`POOL_TIMEOUT`](crate::defaults::POOL_TIMEOUT)); past it, the call
    /// fails with [`CounterError::PoolTimedOut`], never sent. The `mysql`
    /// crate's pool may wait up to twice as long when another caller takes
    /// the connection it was woken for.
    pub fn pool_timeout(mut self, timeout: Duration) -> Self {
        self.pool_timeout = timeout;
        self
    }

    /// The client these settings describe; refused for the plain mode of a
    /// package only its routines serve.
    pub fn build(self) -> Result<Counters, ConfigError> {
        let kept = Arc::new(KeptConnections::new(
            self.kept_connections.unwrap_or(DEFAULT_KEPT_CONNECTIONS),
            self.check_kept_after,
        ));
        let pooled = Pooled { pool: self.pool.clone(), pool_timeout: self.pool_timeout, kept };
        Ok(Counters { engine: self.engine(pooled)? })
    }
}

impl<C: SyncConnections> Counters<C> {
    /// Creates a counter as `counter` describes it.
    ///
    /// ```no_run
    /// use slotted_counters::NewCounter;
    /// # let counters = slotted_counters::Counters::new(mysql::Pool::new("mysql://a@h/db")?)?;
    /// counters.setup("likes", NewCounter::new("likes of the front page").slots(8).initial_value(100))?;
    /// counters.setup("views", NewCounter::new("page views"))?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn setup(&self, name: &str, counter: NewCounter<'_>) -> Result<(), CounterError> {
        ready(self.engine.setup(name, counter))
    }

    /// Creates a counter as `counter` describes it unless one has the name
    /// already, which it leaves as it is: one call, after which the counter
    /// exists. With [`Counters::on`], a counter is set up with its bound,
    /// limits and periods in one transaction of the caller's:
    ///
    /// ```no_run
    /// use mysql::TxOpts;
    /// use slotted_counters::{Keep, NewCounter, Period, UtcOffset};
    /// # let pool = mysql::Pool::new("mysql://a@h/db")?;
    /// # let counters = slotted_counters::Counters::new(pool.clone())?;
    /// let shanghai = UtcOffset::minutes(480).expect("an offset of a time zone");
    /// let mut tx = pool.start_transaction(TxOpts::default())?;
    /// let customer = counters.on(&mut tx);
    /// customer.setup_if_missing("api:3f2c9a", NewCounter::new("API calls").slots(8))?;
    /// customer.track_at_offset("api:3f2c9a", Period::Day, Keep::Last(31), shanghai)?;
    /// customer.limit("api:3f2c9a", Period::Day, Some(1_000))?;
    /// customer.limit("api:3f2c9a", Period::Minute, Some(100))?;
    /// tx.commit()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn setup_if_missing(&self, name: &str, counter: NewCounter<'_>) -> Result<(), CounterError> {
        ready(self.engine.setup_if_missing(name, counter))
    }

    /// Adds 1 to a counter.
    ///
    /// ```no_run
    /// # let counters = slotted_counters::Counters::new(mysql::Pool::new("mysql://a@h/db")?)?;
    /// counters.increment("likes")?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn increment(&self, name: &str) -> Result<(), CounterError> {
        ready(self.engine.increment(name))
    }

    /// Adds `delta`, which may be negative, to a counter.
    ///
    /// ```no_run
    /// # let counters = slotted_counters::Counters::new(mysql::Pool::new("mysql://a@h/db")?)?;
    /// counters.add("stock", -3)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn add(&self, name: &str, delta: i64) -> Result<(), CounterError> {
        ready(self.engine.add(name, delta))
    }

    /// Adds each delta to its counter, all in one call and one transaction:
    /// all are applied or, when a counter does not exist or an argument is
    /// wrong, none. Deltas for the same name are summed first. Up to 4,096
    /// counters per call. On a [`CountersOn`], the deltas commit or roll
    /// back with the caller's transaction.
    ///
    /// ```no_run
    /// # let counters = slotted_counters::Counters::new(mysql::Pool::new("mysql://a@h/db")?)?;
    /// counters.add_many([("views", 12), ("likes", 3), ("stock", -1)])?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn add_many<S: AsRef<str>>(
        &self,
        deltas: impl IntoIterator<Item = (S, i64)>,
    ) -> Result<(), CounterError> {
        ready(self.engine.add_many(deltas))
    }

    /// Sets a counter to `value`, and its start date as `start_date` says,
    /// in one statement; through [`Counters::on`], on the caller's connection, it
    /// commits or rolls back with the caller's transaction.
    ///
    /// ```no_run
    /// use slotted_counters::StartDate;
    /// # let counters = slotted_counters::Counters::new(mysql::Pool::new("mysql://a@h/db")?)?;
    /// counters.reset("likes", 0, StartDate::Now)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn reset(&self, name: &str, value: i64, start_date: StartDate) -> Result<(), CounterError> {
        ready(self.engine.reset(name, value, start_date))
    }

    /// Removes a counter and all its slots.
    ///
    /// ```no_run
    /// # let counters = slotted_counters::Counters::new(mysql::Pool::new("mysql://a@h/db")?)?;
    /// counters.delete("likes")?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn delete(&self, name: &str) -> Result<(), CounterError> {
        ready(self.engine.delete(name))
    }

    /// Forgets the write ids recorded more than `window` ago (a whole
    /// number of seconds; [`WRITE_ID_WINDOW`](crate::defaults::WRITE_ID_WINDOW) by
    /// convention), in short transactions: `counter_forget_writes`, or in
    /// the plain mode one `DELETE`. Call it regularly, every minute, from
    /// one place; a write sent again after its id is forgotten counts again.
    pub fn forget_writes(&self, window: std::time::Duration) -> Result<(), CounterError> {
        ready(self.engine.forget_writes(window))
    }

    /// The value of a counter, or `None` when it does not exist.
    ///
    /// ```no_run
    /// # let counters = slotted_counters::Counters::new(mysql::Pool::new("mysql://a@h/db")?)?;
    /// let likes: Option<i64> = counters.get("likes")?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn get(&self, name: &str) -> Result<Option<i64>, CounterError> {
        ready(self.engine.get(name))
    }

    /// The values of many counters, in the order of `names`, read in one
    /// round trip; `None` for those that do not exist. Takes names as
    /// [`Counters::add_many`] takes pairs: any iterator.
    ///
    /// ```no_run
    /// # let counters = slotted_counters::Counters::new(mysql::Pool::new("mysql://a@h/db")?)?;
    /// let [likes, views] = counters.get_many(["likes", "views"])?[..] else { unreachable!() };
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn get_many<S: AsRef<str>>(
        &self,
        names: impl IntoIterator<Item = S>,
    ) -> Result<Vec<Option<i64>>, CounterError> {
        ready(self.engine.get_many(names))
    }
}

#[cfg(test)]
mod tests;
