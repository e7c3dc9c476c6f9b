//! One way to build either client. [`Counters::builder`](crate::Counters::builder)
//! and `AsyncCounters::builder` take the pool; a [`ClientBuilder`]'s
//! methods take every setting, and its `build` makes the client with them
//! fixed, so that the client's clones, the clients it makes on a caller's
//! connection and its coalescing handles all share them.

use std::time::Duration;

use slotted_counters_core::package::BATCH_LIMIT;
use slotted_counters_core::{ConfigError, PackageOptions};

use crate::engine::Engine;
use crate::flushing::FlushSettings;
use crate::kept::DEFAULT_CHECK_KEPT_AFTER;
use crate::retry::RetryBudget;

/// How long a sync client's call waits for the pool to give it a
/// connection, by default: sqlx's pool waits as long (its
/// `acquire_timeout`).
#[cfg(feature = "mysql")]
pub const DEFAULT_POOL_TIMEOUT: Duration = Duration::from_secs(30);

/// The settings of a client over a pool of type `P`, until `build` makes
/// it: `Counters::builder(pool)` for a [`mysql::Pool`], and
/// `AsyncCounters::builder(pool)` for a `sqlx::MySqlPool`, take the same
/// methods.
///
/// ```no_run
/// use std::time::Duration;
/// use slotted_counters::{Counters, PackageOptions, RetryBudget};
///
/// # let pool = mysql::Pool::new("mysql://app:secret@127.0.0.1:3306/app")?;
/// let options = PackageOptions::builder().prefix("hits_").build()?;
/// let counters = Counters::builder(pool)
///     .package(&options)
///     .write_ids()
///     .retry(RetryBudget::Time(Duration::from_secs(30)))
///     .build()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until `build` makes the client"]
pub struct ClientBuilder<P> {
    pub(crate) pool: P,
    package: PackageOptions,
    plain: bool,
    write_ids: bool,
    retry: RetryBudget,
    pub(crate) kept_connections: Option<usize>,
    pub(crate) check_kept_after: Duration,
    /// How long a sync client's call waits for its pool: sqlx's pool has
    /// its own (`acquire_timeout`).
    #[cfg(feature = "mysql")]
    pub(crate) pool_timeout: Duration,
    flushes: FlushSettings,
}

impl<P> ClientBuilder<P> {
    pub(crate) fn new(pool: P) -> Self {
        ClientBuilder {
            pool,
            package: PackageOptions::default(),
            plain: false,
            write_ids: false,
            retry: RetryBudget::default(),
            kept_connections: None,
            check_kept_after: DEFAULT_CHECK_KEPT_AFTER,
            #[cfg(feature = "mysql")]
            pool_timeout: DEFAULT_POOL_TIMEOUT,
            flushes: FlushSettings::default(),
        }
    }

    /// Calls the package generated with `options` (its `--prefix`,
    /// `--name-length`, `--collation`, features...); by default, the one
    /// generated with the default options.
    pub fn package(mut self, options: &PackageOptions) -> Self {
        self.package = options.clone();
        self
    }

    /// Makes the calls in plain SQL, calling no routine: for engines that
    /// run none (PlanetScale, Vitess, TiDB) and sharding engines (MariaDB
    /// Spider), or a table whose routines are not installed. The table must
    /// exist, made by the package's `plain_tables.sql`. The calls mean what
    /// they mean with routines, refuse the same arguments with the same
    /// errors, and may run beside clients that call the routines on the
    /// same table. `build` refuses a package whose rules only its routines
    /// keep: a cluster's node slots (`--cluster`), a counter limit
    /// (`--max-counters`).
    ///
    /// An increment is one UPDATE of a slot picked here (one upsert in a
    /// lazy package); a counter's slot count is read once and kept for
    /// [`SLOT_COUNT_LIFETIME`](crate::defaults::SLOT_COUNT_LIFETIME). A
    /// batch of several counters, a lazy reset and a delete are
    /// transactions of a few statements. docs/plain-sql.md has every
    /// statement.
    pub fn plain_sql(mut self) -> Self {
        self.plain = true;
        self
    }

    /// Makes every increment, add, batch and coalesced flush carry a write
    /// id, recorded by the server in the write's own transaction
    /// (`counter_add_once`, `counter_add_many_once`, or in the plain mode
    /// the `record_write` statement). A call whose answer is lost with its
    /// connection is then sent again, under the same id, within the retry
    /// budget: the server counts it once, whether the lost try committed or
    /// not. Without write ids such a call fails with an error whose
    /// [`CounterError::may_have_applied`](crate::CounterError::may_have_applied)
    /// is true. Needs the package's `write-ids` feature, and a retry budget
    /// that ends well within the window the ids are kept
    /// (docs/exactly-once.md).
    pub fn write_ids(mut self) -> Self {
        self.write_ids = true;
        self
    }

    /// How long a call the server rolled back is tried again (by default
    /// [`RetryBudget::default`], five tries in all). Calls on a caller's
    /// connection are never tried again: a rollback ended the caller's
    /// transaction.
    pub fn retry(mut self, budget: RetryBudget) -> Self {
        self.retry = budget;
        self
    }

    /// How many of the pool's connections the client keeps between its
    /// calls (0 keeps none; by default
    /// [`KEPT_CONNECTIONS`](crate::defaults::KEPT_CONNECTIONS) for
    /// `Counters`, whose pool pings and resets a connection at each take,
    /// and 0 for `AsyncCounters`, whose calls take a connection from the
    /// pool each, as an application's code would). A call on a kept
    /// connection costs one round trip. Kept connections are not in the
    /// pool: keep fewer than its size. They go back to it when the client
    /// and every clone of it are dropped.
    pub fn keep_connections(mut self, connections: usize) -> Self {
        self.kept_connections = Some(connections);
        self
    }

    /// How long a kept connection may sit idle before a call checks it
    /// with a ping (by default
    /// [`CHECK_KEPT_AFTER`](crate::defaults::CHECK_KEPT_AFTER)): one the
    /// server or a proxy closed meanwhile (`wait_timeout`, a restart, an
    /// idle timeout) is replaced before the call is sent on it, where the
    /// call would fail without saying whether it ran. `Duration::ZERO`
    /// checks one before every call; a connection in steady use within the
    /// time is not checked.
    pub fn check_kept_connections_after(mut self, idle: Duration) -> Self {
        self.check_kept_after = idle;
        self
    }

    /// How many flushes of a coalescing handle may be in flight at once (at
    /// least 1; by default [`FLUSHES`](crate::defaults::FLUSHES)); beyond the
    /// first, one starts only when those in flight have stalled. Each holds
    /// a pooled connection while it runs: keep it within the pool's size.
    pub fn max_flushes(mut self, flushes: usize) -> Self {
        self.flushes.max_flushes = flushes.max(1);
        self
    }

    /// How many counters one flush of a coalescing handle may carry, 1 to
    /// 4,096 (by default
    /// [`COUNTERS_PER_FLUSH`](crate::defaults::COUNTERS_PER_FLUSH)); deltas
    /// for more wait for the next flush.
    pub fn max_counters_per_flush(mut self, counters: usize) -> Self {
        self.flushes.max_counters = counters.clamp(1, BATCH_LIMIT as usize);
        self
    }

    /// The calls these settings make, through `driver`; refused for the
    /// plain mode of a package only its routines serve.
    pub(crate) fn engine<D>(&self, driver: D) -> Result<Engine<D>, ConfigError> {
        let engine = if self.plain {
            Engine::plain(driver, &self.package)?
        } else {
            Engine::new(driver, &self.package)
        };
        let engine = engine.with_retry(self.retry).with_flushes(self.flushes);
        Ok(if self.write_ids { engine.with_write_ids() } else { engine })
    }
}
