//! A typed Rust API over the installed package, for applications.
//!
//! [`Counters`] calls the routines on connections from a [`mysql::Pool`].
//! Each such call is its own transaction, so when the server picks it as a
//! deadlock victim (1213), it times out waiting for a lock (1205), MariaDB's
//! snapshot isolation finds a row changed since its snapshot (1020) or it
//! loses Group Replication's certification (3101), nothing of it was applied
//! and it is retried, with jittered exponential backoff, a bounded number of
//! times. Inside a transaction of your own, use
//! [`Counters::on`]: those calls are never retried, because a deadlock rolls
//! back your whole transaction, and only you can run it again.
//!
//! Every call, in either mode, also rides through a reinstall on MySQL, which
//! drops each routine just before creating it again: a call that finds its
//! routine missing (1305) ran nothing, so it is sent again for up to
//! [`REINSTALL_WINDOW`] before it fails with [`CounterError::NotInstalled`].
//!
//! Many threads that each increment on their own can share a [`Coalescing`]
//! handle ([`Counters::coalescing`]), which applies their deltas in one
//! transaction per flush.

mod coalescing;
mod kept;
pub(crate) mod run;

use std::cell::RefCell;
use std::sync::Arc;
use std::time::Duration;

use mysql::Pool;
use mysql::prelude::Queryable;

use crate::error::CounterError;
use crate::names::NameRule;
use crate::options::PackageOptions;

pub use coalescing::{Coalescing, DEFAULT_COUNTERS_PER_FLUSH, DEFAULT_FLUSHES, FlushStats};
pub use kept::DEFAULT_KEPT_CONNECTIONS;
use kept::KeptConnections;
pub use run::{OnConnection, Pooled, REINSTALL_WINDOW, Run};
pub(crate) use run::{RetryBudget, Statements};

/// A counter for [`Counters::setup`] to create: its description, and the
/// slot count and starting value unless the package's defaults will do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewCounter<'a> {
    description: &'a str,
    slots: Option<u32>,
    initial_value: Option<i64>,
}

impl<'a> NewCounter<'a> {
    /// A counter described by `description`, with the package's default
    /// slot count (fixed-slot packages take only their own), starting at 0.
    pub fn new(description: &'a str) -> Self {
        NewCounter { description, slots: None, initial_value: None }
    }

    /// With `slots` slot rows.
    pub fn slots(self, slots: u32) -> Self {
        NewCounter { slots: Some(slots), ..self }
    }

    /// Starting at `value`, kept in slot 1.
    pub fn initial_value(self, value: i64) -> Self {
        NewCounter { initial_value: Some(value), ..self }
    }

    /// The description, slot count and initial value, as `counter_setup`
    /// takes them.
    pub(crate) fn parts(&self) -> (&'a str, Option<u32>, Option<i64>) {
        (self.description, self.slots, self.initial_value)
    }
}

/// What [`Counters::reset`] does to a counter's start date.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartDate {
    /// The start date stays: the reset corrects the value.
    Keep,
    /// The start date becomes now: counting starts over.
    Now,
}

/// Calls the slotted-counter routines.
///
/// [`Counters::new`] makes one over a connection pool: each call runs in a
/// transaction of its own on a pooled connection, and is retried when the
/// server rolls it back as a deadlock victim or after a lock wait timeout.
/// [`Counters::on`] makes one over a connection of the caller's
/// ([`CountersOn`]): its calls join the caller's transaction and are never
/// retried. Both have the same counter calls.
///
/// ```no_run
/// use slotted_counters::{Counters, NewCounter, mysql};
///
/// let pool = mysql::Pool::new("mysql://app:secret@127.0.0.1:3306/app")?;
/// let counters = Counters::new(pool);
/// counters.setup("downloads", NewCounter::new("release downloads").slots(16))?;
/// counters.increment("downloads")?;
/// assert_eq!(counters.get("downloads")?, Some(1));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Counters<C = Pooled> {
    calls: C,
    /// What the routines take as a name, checked before a call is sent.
    names: NameRule,
}

/// A [`Counters`] whose calls run on a connection of the caller's, inside
/// its transaction. Made by [`Counters::on`].
pub type CountersOn<'a, Q> = Counters<OnConnection<'a, Q>>;

impl Counters {
    /// Uses the routines of a package generated with the default options.
    ///
    /// ```no_run
    /// # let pool = mysql::Pool::new("mysql://app:secret@127.0.0.1:3306/app")?;
    /// let counters = slotted_counters::Counters::new(pool);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(pool: Pool) -> Self {
        Self::with_options(pool, &PackageOptions::default())
    }

    /// Uses the routines of a package generated with `options` (its `--prefix`).
    ///
    /// ```no_run
    /// use slotted_counters::{Counters, PackageOptions};
    ///
    /// # let pool = mysql::Pool::new("mysql://app:secret@127.0.0.1:3306/app")?;
    /// let options = PackageOptions::builder().prefix("hits_").build()?;
    /// let counters = Counters::with_options(pool, &options);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_options(pool: Pool, options: &PackageOptions) -> Self {
        Counters {
            calls: Pooled {
                pool,
                statements: Statements::new(options),
                budget: RetryBudget::Attempts(5),
                kept: Arc::new(KeptConnections::new(DEFAULT_KEPT_CONNECTIONS)),
            },
            names: NameRule::new(options),
        }
    }

    /// How many times a call is tried in all when it keeps hitting deadlocks
    /// or lock wait timeouts (default 5; at least 1).
    ///
    /// ```no_run
    /// # let pool = mysql::Pool::new("mysql://app:secret@127.0.0.1:3306/app")?;
    /// let counters = slotted_counters::Counters::new(pool).max_attempts(10);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn max_attempts(mut self, attempts: u32) -> Self {
        self.calls.budget = RetryBudget::Attempts(attempts.max(1));
        self
    }

    /// Retries for as long as `time` instead of a number of times. On a
    /// multi-primary cluster (Galera), a write that loses certification to
    /// another node's comes back as a deadlock, and a routine that touches
    /// every slot of a counter under load may need hundreds of tries: a time
    /// bounds the wait however busy the cluster is.
    ///
    /// ```no_run
    /// # let pool = mysql::Pool::new("mysql://app:secret@127.0.0.1:3306/app")?;
    /// use std::time::Duration;
    /// let counters = slotted_counters::Counters::new(pool).retry_for(Duration::from_secs(30));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn retry_for(mut self, time: Duration) -> Self {
        self.calls.budget = RetryBudget::Time(time);
        self
    }

    /// How many of the pool's connections the client keeps between calls
    /// (default [`DEFAULT_KEPT_CONNECTIONS`]; 0 keeps none). A call on a
    /// kept connection costs one round trip; one on a connection taken from
    /// the pool also pays the pool's ping and reset, and prepares its
    /// statement again. Kept connections are not in the pool: keep fewer
    /// than its size. They go back to it when every clone of this
    /// `Counters` is dropped.
    ///
    /// ```no_run
    /// # let pool = mysql::Pool::new("mysql://app:secret@127.0.0.1:3306/app")?;
    /// let counters = slotted_counters::Counters::new(pool).keep_connections(8);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn keep_connections(mut self, connections: usize) -> Self {
        self.calls.kept = Arc::new(KeptConnections::new(connections));
        self
    }

    /// The same calls on `conn`, inside a transaction of the caller's; never retried.
    ///
    /// ```no_run
    /// use mysql::TxOpts;
    ///
    /// # let pool = mysql::Pool::new("mysql://app:secret@127.0.0.1:3306/app")?;
    /// # let counters = slotted_counters::Counters::new(pool.clone());
    /// let mut tx = pool.start_transaction(TxOpts::default())?;
    /// counters.on(&mut tx).increment("orders")?;
    /// tx.commit()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn on<'a, Q: Queryable>(&'a self, conn: &'a mut Q) -> CountersOn<'a, Q> {
        Counters {
            calls: OnConnection { conn: RefCell::new(conn), statements: &self.calls.statements },
            names: self.names.clone(),
        }
    }
}

impl<C: Run> Counters<C> {
    /// Creates a counter as `counter` describes it.
    ///
    /// ```no_run
    /// use slotted_counters::NewCounter;
    /// # let counters = slotted_counters::Counters::new(mysql::Pool::new("mysql://a@h/db")?);
    /// counters.setup("likes", NewCounter::new("likes of the front page").slots(8).initial_value(100))?;
    /// counters.setup("views", NewCounter::new("page views"))?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn setup(&self, name: &str, counter: NewCounter<'_>) -> Result<(), CounterError> {
        self.names.check(name)?;
        self.calls.run(&|calls| {
            let setup = &calls.statements.setup;
            let (description, slots, initial_value) = counter.parts();
            calls.call(setup, (name, description, slots, initial_value))
        })
    }

    /// Adds 1 to a counter.
    ///
    /// ```no_run
    /// # let counters = slotted_counters::Counters::new(mysql::Pool::new("mysql://a@h/db")?);
    /// counters.increment("likes")?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn increment(&self, name: &str) -> Result<(), CounterError> {
        self.names.check(name)?;
        self.calls.run(&|calls| calls.call(&calls.statements.increment, (name,)))
    }

    /// Adds `delta`, which may be negative, to a counter.
    ///
    /// ```no_run
    /// # let counters = slotted_counters::Counters::new(mysql::Pool::new("mysql://a@h/db")?);
    /// counters.add("stock", -3)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn add(&self, name: &str, delta: i64) -> Result<(), CounterError> {
        self.names.check(name)?;
        self.calls.run(&|calls| calls.call(&calls.statements.add, (name, delta)))
    }

    /// Adds each delta to its counter, all in one call and one transaction:
    /// all are applied or, when a counter does not exist or an argument is
    /// wrong, none. Deltas for the same name are summed first. Up to
    /// [`crate::package::BATCH_LIMIT`] counters per call. On a
    /// [`CountersOn`], the deltas commit or roll back with the caller's
    /// transaction.
    ///
    /// ```no_run
    /// # let counters = slotted_counters::Counters::new(mysql::Pool::new("mysql://a@h/db")?);
    /// counters.add_many([("views", 12), ("likes", 3), ("stock", -1)])?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn add_many<S: AsRef<str>>(
        &self,
        deltas: impl IntoIterator<Item = (S, i64)>,
    ) -> Result<(), CounterError> {
        let Some(batch) = batch_json(deltas, &self.names)? else { return Ok(()) };
        self.calls.run(&|calls| calls.call(&calls.statements.add_many, (batch.as_str(),)))
    }

    /// Sets a counter to `value`, and its start date as `start_date` says.
    /// The lazy and the Galera packages reset in a transaction of their own,
    /// whose `START TRANSACTION` commits a transaction the caller has open.
    ///
    /// ```no_run
    /// use slotted_counters::StartDate;
    /// # let counters = slotted_counters::Counters::new(mysql::Pool::new("mysql://a@h/db")?);
    /// counters.reset("likes", 0, StartDate::Now)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn reset(&self, name: &str, value: i64, start_date: StartDate) -> Result<(), CounterError> {
        self.names.check(name)?;
        self.calls
            .run(&|calls| calls.call(&calls.statements.reset, (name, value, start_date == StartDate::Now)))
    }

    /// Removes a counter and all its slots.
    ///
    /// ```no_run
    /// # let counters = slotted_counters::Counters::new(mysql::Pool::new("mysql://a@h/db")?);
    /// counters.delete("likes")?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn delete(&self, name: &str) -> Result<(), CounterError> {
        self.names.check(name)?;
        self.calls.run(&|calls| calls.call(&calls.statements.delete, (name,)))
    }

    /// The value of a counter, or `None` when it does not exist.
    ///
    /// ```no_run
    /// # let counters = slotted_counters::Counters::new(mysql::Pool::new("mysql://a@h/db")?);
    /// let likes: Option<i64> = counters.get("likes")?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn get(&self, name: &str) -> Result<Option<i64>, CounterError> {
        Ok(self.get_many([name])?.pop().flatten())
    }

    /// The values of many counters, in the order of `names`, read in one
    /// round trip; `None` for those that do not exist. Takes names as
    /// [`Counters::add_many`] takes pairs: any iterator.
    ///
    /// ```no_run
    /// # let counters = slotted_counters::Counters::new(mysql::Pool::new("mysql://a@h/db")?);
    /// let [likes, views] = counters.get_many(["likes", "views"])?[..] else { unreachable!() };
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn get_many<S: AsRef<str>>(
        &self,
        names: impl IntoIterator<Item = S>,
    ) -> Result<Vec<Option<i64>>, CounterError> {
        let names: Vec<String> = names.into_iter().map(|name| name.as_ref().to_owned()).collect();
        if names.is_empty() {
            return Ok(Vec::new());
        }
        self.calls.run(&|calls| calls.get_many(&names))
    }
}

/// The JSON object `counter_add_many` takes, deltas for one name summed;
/// `None` for no deltas at all, which need no call. Every name is checked
/// against `names`. For callers that send the `CALL` themselves;
/// [`Counters::add_many`] uses it.
pub(crate) fn batch_json<S: AsRef<str>>(
    deltas: impl IntoIterator<Item = (S, i64)>,
    names: &NameRule,
) -> Result<Option<String>, CounterError> {
    let mut batch = serde_json::Map::new();
    for (name, delta) in deltas {
        let name = name.as_ref();
        names.check(name)?;
        let sum = match batch.get(name).and_then(serde_json::Value::as_i64) {
            Some(earlier) => earlier.checked_add(delta).ok_or_else(|| {
                CounterError::InvalidArgument(format!("the deltas for counter {name:?} add up past a BIGINT"))
            })?,
            None => delta,
        };
        batch.insert(name.to_owned(), sum.into());
    }
    Ok((!batch.is_empty()).then(|| serde_json::Value::Object(batch).to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch_json_of(
        deltas: impl IntoIterator<Item = (&'static str, i64)>,
    ) -> Result<Option<String>, CounterError> {
        batch_json(deltas, &NameRule::new(&PackageOptions::default()))
    }

    #[test]
    fn a_batch_sums_the_deltas_of_one_name() {
        let batch = batch_json_of([("views", 2), ("likes", 1), ("views", -5)]).unwrap().unwrap();
        let batch: serde_json::Value = serde_json::from_str(&batch).unwrap();
        assert_eq!(batch, serde_json::json!({"views": -3, "likes": 1}));
    }

    #[test]
    fn an_empty_batch_needs_no_call() {
        assert_eq!(batch_json_of(Vec::<(&str, i64)>::new()).unwrap(), None);
    }

    #[test]
    fn a_batch_keeps_names_that_need_escaping_whole() {
        let name = "quote \" back\\slash 漢字 🎉";
        let batch = batch_json_of([(name, 1)]).unwrap().unwrap();
        let batch: serde_json::Value = serde_json::from_str(&batch).unwrap();
        assert_eq!(batch[name], 1);
    }

    #[test]
    fn deltas_that_add_up_past_a_bigint_are_refused() {
        let error = batch_json_of([("n", i64::MAX), ("n", 1)]).unwrap_err();
        assert!(
            matches!(&error, CounterError::InvalidArgument(message) if message.contains("\"n\"")),
            "{error:?}"
        );
    }
}
