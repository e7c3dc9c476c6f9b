//! The async client, for tokio applications (feature `sqlx`): the calls of
//! [`crate::Counters`] over a [`sqlx::MySqlPool`], with the same meaning,
//! errors and retries. Retries and the reinstall ride-through wait on
//! tokio's timer, never blocking a runtime thread.
//!
//! A call's future may be dropped before it completes, as when a request
//! handler is cancelled. The call then either ran or did not: one `CALL` in
//! autocommit mode is one transaction. Its connection goes back to sqlx's
//! pool, and sqlx's tracker reports that a MySQL connection dropped in the
//! middle of a query may be left unusable (sqlx#563). To make a delta's fate
//! independent of its caller, use [`AsyncCounters::coalescing`], whose
//! flushes run in tasks of their own.

mod coalescing;

use std::borrow::Cow;
use std::time::Instant;

use sqlx::mysql::{MySqlArguments, MySqlConnection, MySqlPool, MySqlRow, MySqlSslMode};
use sqlx::query::Query;
use sqlx::{MySql, Row};

use crate::counters::run::{FIRST_BACKOFF, MAX_BACKOFF, MAX_REINSTALL_PAUSE, jittered};
use crate::counters::{NewCounter, REINSTALL_WINDOW, RetryBudget, StartDate, Statements, batch_json};
use crate::database::VERIFY_CA_REFUSED;
use crate::error::{CounterError, Error};
use crate::names::NameRule;
use crate::options::PackageOptions;
use crate::package::server_errno;

pub use coalescing::AsyncCoalescing;

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
pub struct AsyncCounters {
    pool: MySqlPool,
    statements: Statements,
    /// What the routines take as a name, checked before a call is sent.
    names: NameRule,
    budget: RetryBudget,
}

/// An [`AsyncCounters`]'s calls on a connection of the caller's, inside its
/// transaction: made by [`AsyncCounters::on`].
#[derive(Debug)]
pub struct AsyncCountersOn<'c> {
    conn: &'c mut MySqlConnection,
    statements: &'c Statements,
    names: &'c NameRule,
}

/// One statement a counter call sends, with its arguments.
struct Call<'a> {
    sql: Cow<'a, str>,
    args: Vec<Arg<'a>>,
}

enum Arg<'a> {
    Text(&'a str),
    Number(Option<i64>),
    Slots(Option<u32>),
    Flag(bool),
}

impl AsyncCounters {
    /// Uses the routines of a package generated with the default options.
    ///
    /// Refuses a pool whose connections use `ssl-mode=VERIFY_CA`: sqlx
    /// (0.8) puts the public web certificate authorities in the trust store
    /// beside any `ssl-ca`, and that mode skips the host name, so a
    /// certificate any of them issued for any name would pass. Use
    /// `VERIFY_IDENTITY`; it too trusts the public authorities beside an
    /// `ssl-ca`, which the client cannot see from the pool.
    pub fn new(pool: MySqlPool) -> Result<Self, Error> {
        Self::with_options(pool, &PackageOptions::default())
    }

    /// Uses the routines of a package generated with `options` (its
    /// `--prefix`); refuses a pool as [`AsyncCounters::new`] does.
    pub fn with_options(pool: MySqlPool, options: &PackageOptions) -> Result<Self, Error> {
        if matches!(pool.connect_options().get_ssl_mode(), MySqlSslMode::VerifyCa) {
            return Err(Error::Tls(VERIFY_CA_REFUSED.replace("the mysql driver", "sqlx")));
        }
        Ok(AsyncCounters {
            pool,
            statements: Statements::new(options),
            names: NameRule::new(options),
            budget: RetryBudget::Attempts(5),
        })
    }

    /// How many times a call is tried in all when the server keeps rolling
    /// it back (default 5; at least 1), as [`crate::Counters::max_attempts`].
    pub fn max_attempts(mut self, attempts: u32) -> Self {
        self.budget = RetryBudget::Attempts(attempts.max(1));
        self
    }

    /// Retries for as long as `time` instead of a number of times, as
    /// [`crate::Counters::retry_for`]: on a multi-primary cluster.
    pub fn retry_for(mut self, time: std::time::Duration) -> Self {
        self.budget = RetryBudget::Time(time);
        self
    }

    /// The same calls on `conn`, inside a transaction of the caller's
    /// (`&mut *tx` for a [`sqlx::Transaction`]); never retried: a deadlock
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
    pub fn on<'c>(&'c self, conn: &'c mut MySqlConnection) -> AsyncCountersOn<'c> {
        AsyncCountersOn { conn, statements: &self.statements, names: &self.names }
    }

    /// Creates a counter as `counter` describes it.
    pub async fn setup(&self, name: &str, counter: NewCounter<'_>) -> Result<(), CounterError> {
        self.names.check(name)?;
        self.run(&setup(&self.statements, name, counter)).await.map(drop)
    }

    /// Adds 1 to a counter.
    pub async fn increment(&self, name: &str) -> Result<(), CounterError> {
        self.names.check(name)?;
        self.run(&call(&self.statements.increment, vec![Arg::Text(name)])).await.map(drop)
    }

    /// Adds `delta`, which may be negative, to a counter.
    pub async fn add(&self, name: &str, delta: i64) -> Result<(), CounterError> {
        self.names.check(name)?;
        self.run(&add(&self.statements, name, delta)).await.map(drop)
    }

    /// Adds each delta to its counter in one call and one transaction, as
    /// [`crate::Counters::add_many`].
    pub async fn add_many<S: AsRef<str>>(
        &self,
        deltas: impl IntoIterator<Item = (S, i64)>,
    ) -> Result<(), CounterError> {
        let Some(batch) = batch_json(deltas, &self.names)? else { return Ok(()) };
        self.run(&call(&self.statements.add_many, vec![Arg::Text(&batch)])).await.map(drop)
    }

    /// Sets a counter to `value`, and its start date as `start_date` says.
    pub async fn reset(&self, name: &str, value: i64, start_date: StartDate) -> Result<(), CounterError> {
        self.names.check(name)?;
        self.run(&reset(&self.statements, name, value, start_date)).await.map(drop)
    }

    /// Removes a counter and all its slots.
    pub async fn delete(&self, name: &str) -> Result<(), CounterError> {
        self.names.check(name)?;
        self.run(&call(&self.statements.delete, vec![Arg::Text(name)])).await.map(drop)
    }

    /// The value of a counter, or `None` when it does not exist.
    pub async fn get(&self, name: &str) -> Result<Option<i64>, CounterError> {
        Ok(self.get_many([name]).await?.pop().flatten())
    }

    /// The values of many counters, in the order of `names`, read in one
    /// round trip; `None` for those that do not exist.
    pub async fn get_many<S: AsRef<str>>(
        &self,
        names: impl IntoIterator<Item = S>,
    ) -> Result<Vec<Option<i64>>, CounterError> {
        let names: Vec<String> = names.into_iter().map(|name| name.as_ref().to_owned()).collect();
        if names.is_empty() {
            return Ok(Vec::new());
        }
        values(self.run(&get_many(&self.statements, &names)).await?, names.len())
    }

    /// Runs `call` on a pooled connection, again after a rollback it may
    /// outlive, within the retry budget.
    async fn run(&self, call: &Call<'_>) -> Result<Option<MySqlRow>, CounterError> {
        let started = Instant::now();
        let mut backoff = FIRST_BACKOFF;
        let mut attempt = 1;
        loop {
            let mut conn = self.pool.acquire().await?;
            match execute(&mut conn, call).await {
                Err(error) if error.is_retryable() && self.budget.allows_retry(attempt, started) => {
                    tokio::time::sleep(jittered(backoff)).await;
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    attempt += 1;
                }
                outcome => return outcome,
            }
        }
    }
}

impl AsyncCountersOn<'_> {
    /// Creates a counter as `counter` describes it.
    pub async fn setup(&mut self, name: &str, counter: NewCounter<'_>) -> Result<(), CounterError> {
        self.names.check(name)?;
        execute(&mut *self.conn, &setup(self.statements, name, counter)).await.map(drop)
    }

    /// Adds 1 to a counter.
    pub async fn increment(&mut self, name: &str) -> Result<(), CounterError> {
        self.names.check(name)?;
        execute(&mut *self.conn, &call(&self.statements.increment, vec![Arg::Text(name)])).await.map(drop)
    }

    /// Adds `delta`, which may be negative, to a counter.
    pub async fn add(&mut self, name: &str, delta: i64) -> Result<(), CounterError> {
        self.names.check(name)?;
        execute(&mut *self.conn, &add(self.statements, name, delta)).await.map(drop)
    }

    /// Adds each delta to its counter; they commit or roll back with the
    /// caller's transaction.
    pub async fn add_many<S: AsRef<str>>(
        &mut self,
        deltas: impl IntoIterator<Item = (S, i64)>,
    ) -> Result<(), CounterError> {
        let Some(batch) = batch_json(deltas, &self.names)? else { return Ok(()) };
        execute(&mut *self.conn, &call(&self.statements.add_many, vec![Arg::Text(&batch)])).await.map(drop)
    }

    /// Sets a counter to `value`. The lazy and the cluster packages reset
    /// in a transaction of their own, which commits the caller's.
    pub async fn reset(&mut self, name: &str, value: i64, start_date: StartDate) -> Result<(), CounterError> {
        self.names.check(name)?;
        execute(&mut *self.conn, &reset(self.statements, name, value, start_date)).await.map(drop)
    }

    /// Removes a counter and all its slots.
    pub async fn delete(&mut self, name: &str) -> Result<(), CounterError> {
        self.names.check(name)?;
        execute(&mut *self.conn, &call(&self.statements.delete, vec![Arg::Text(name)])).await.map(drop)
    }

    /// The value of a counter as the caller's transaction sees it, or `None`.
    pub async fn get(&mut self, name: &str) -> Result<Option<i64>, CounterError> {
        Ok(self.get_many([name]).await?.pop().flatten())
    }

    /// The values of many counters as the caller's transaction sees them.
    pub async fn get_many<S: AsRef<str>>(
        &mut self,
        names: impl IntoIterator<Item = S>,
    ) -> Result<Vec<Option<i64>>, CounterError> {
        let names: Vec<String> = names.into_iter().map(|name| name.as_ref().to_owned()).collect();
        if names.is_empty() {
            return Ok(Vec::new());
        }
        values(execute(&mut *self.conn, &get_many(self.statements, &names)).await?, names.len())
    }
}

/// One of the [`Statements`]' `CALL`s with `args`.
fn call<'a>(statement: &'a str, args: Vec<Arg<'a>>) -> Call<'a> {
    Call { sql: Cow::Borrowed(statement), args }
}

fn setup<'a>(statements: &'a Statements, name: &'a str, counter: NewCounter<'a>) -> Call<'a> {
    let (description, slots, initial_value) = counter.parts();
    call(
        &statements.setup,
        vec![Arg::Text(name), Arg::Text(description), Arg::Slots(slots), Arg::Number(initial_value)],
    )
}

fn add<'a>(statements: &'a Statements, name: &'a str, delta: i64) -> Call<'a> {
    call(&statements.add, vec![Arg::Text(name), Arg::Number(Some(delta))])
}

fn reset<'a>(statements: &'a Statements, name: &'a str, value: i64, start_date: StartDate) -> Call<'a> {
    let now = Arg::Flag(start_date == StartDate::Now);
    call(&statements.reset, vec![Arg::Text(name), Arg::Number(Some(value)), now])
}

fn get_many<'a>(statements: &Statements, counters: &'a [String]) -> Call<'a> {
    Call {
        sql: Cow::Owned(statements.get_many(counters.len())),
        args: counters.iter().map(|name| Arg::Text(name.as_str())).collect(),
    }
}

/// The `count` values of a `get_many` row.
fn values(row: Option<MySqlRow>, count: usize) -> Result<Vec<Option<i64>>, CounterError> {
    let row = row.expect("a SELECT without FROM returns one row");
    (0..count).map(|column| Ok(row.try_get::<Option<i64>, _>(column)?)).collect()
}

/// Runs `call` on `conn`, and again while the routine it calls is missing,
/// for up to [`REINSTALL_WINDOW`], as the sync client does: a call of a
/// missing routine ran nothing. Returns the first row, if any.
async fn execute(conn: &mut MySqlConnection, call: &Call<'_>) -> Result<Option<MySqlRow>, CounterError> {
    let deadline = Instant::now() + REINSTALL_WINDOW;
    let mut pause = FIRST_BACKOFF;
    loop {
        match bind(call).fetch_optional(&mut *conn).await.map_err(CounterError::from) {
            Err(CounterError::Database(mysql::Error::MySqlError(error)))
                if error.code == server_errno::NO_SUCH_ROUTINE =>
            {
                if Instant::now() >= deadline {
                    return Err(CounterError::NotInstalled(error.message));
                }
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(MAX_REINSTALL_PAUSE);
            }
            outcome => return outcome,
        }
    }
}

fn bind<'q>(call: &'q Call<'_>) -> Query<'q, MySql, MySqlArguments> {
    call.args.iter().fold(sqlx::query(&call.sql), |query, arg| match *arg {
        Arg::Text(text) => query.bind(text),
        Arg::Number(number) => query.bind(number),
        Arg::Slots(slots) => query.bind(slots),
        Arg::Flag(flag) => query.bind(flag),
    })
}
