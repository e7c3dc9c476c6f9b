//! How a [`Counters`](crate::Counters) runs a call: on a pooled connection,
//! retried after a deadlock or lock wait timeout, or on the caller's
//! connection as it is; either way again while a reinstall has the routine
//! missing.

use std::cell::RefCell;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use mysql::{Params, Pool};

use super::kept::KeptConnections;
use crate::error::CounterError;
use crate::options::PackageOptions;
use crate::package::{Routine, server_errno};

/// The first backoff; each retry doubles it, up to [`MAX_BACKOFF`].
pub(crate) const FIRST_BACKOFF: Duration = Duration::from_millis(5);
pub(crate) const MAX_BACKOFF: Duration = Duration::from_millis(500);

/// How long a call waits for a missing routine to come back. A reinstall
/// replaces each routine within milliseconds; a package that is not
/// installed at all fails after this.
pub const REINSTALL_WINDOW: Duration = Duration::from_secs(2);

/// The longest pause between two tries of a missing routine.
pub(crate) const MAX_REINSTALL_PAUSE: Duration = Duration::from_millis(100);

/// Where a [`Counters`](crate::Counters) runs its calls: pooled
/// connections, retried.
#[derive(Debug, Clone)]
pub struct Pooled {
    pub(super) pool: Pool,
    pub(super) statements: Statements,
    pub(super) budget: RetryBudget,
    /// Shared by the clones of a `Counters`, its coalescing handles included.
    pub(super) kept: Arc<KeptConnections>,
}

/// Where a [`CountersOn`](crate::CountersOn) runs its calls: the caller's
/// connection.
pub struct OnConnection<'a, Q> {
    pub(super) conn: RefCell<&'a mut Q>,
    pub(super) statements: &'a Statements,
}

/// How long a call keeps retrying deadlocks and lock wait timeouts.
#[derive(Debug, Clone, Copy)]
pub(crate) enum RetryBudget {
    /// This many tries in all.
    Attempts(u32),
    /// As many tries as fit in this time since the first.
    Time(Duration),
}

impl RetryBudget {
    /// Whether a call that failed on its `attempt`th try, the first sent at
    /// `started`, may be tried again.
    pub(crate) fn allows_retry(self, attempt: u32, started: Instant) -> bool {
        match self {
            RetryBudget::Attempts(attempts) => attempt < attempts,
            RetryBudget::Time(time) => started.elapsed() < time,
        }
    }
}

/// The statements the calls send, with the package's prefix: written once
/// per client, shared by the sync and the async one.
#[derive(Debug, Clone)]
pub(crate) struct Statements {
    pub(crate) setup: String,
    pub(crate) increment: String,
    pub(crate) add: String,
    pub(crate) add_many: String,
    pub(crate) reset: String,
    pub(crate) delete: String,
    /// `counter_get`'s name: a read of n counters calls it n times.
    get: String,
}

impl Statements {
    pub(crate) fn new(options: &PackageOptions) -> Self {
        let call = |routine: Routine| {
            let placeholders = vec!["?"; routine.arity()].join(", ");
            format!("CALL `{}`({placeholders})", options.routine_name(routine))
        };
        Self {
            setup: call(Routine::Setup),
            increment: call(Routine::Increment),
            add: call(Routine::Add),
            add_many: call(Routine::AddMany),
            reset: call(Routine::Reset),
            delete: call(Routine::Delete),
            get: options.routine_name(Routine::Get),
        }
    }

    /// One `SELECT` of `count` counters' values.
    pub(crate) fn get_many(&self, count: usize) -> String {
        format!("SELECT {}", vec![format!("`{}`(?)", self.get); count].join(", "))
    }
}

/// How a [`Counters`](crate::Counters) runs a call: on a pooled connection,
/// retried ([`Pooled`]), or on the caller's ([`OnConnection`]).
pub trait Run: sealed::Sealed {
    /// Runs `call` on a connection of this handle's.
    #[doc(hidden)]
    fn run<T>(&self, call: &dyn Fn(&mut Calls<'_>) -> Result<T, CounterError>) -> Result<T, CounterError>;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Pooled {}
    impl<Q: mysql::prelude::Queryable> Sealed for super::OnConnection<'_, Q> {}
}

impl Run for Pooled {
    /// Runs `call` on a pooled connection, again after a deadlock or lock
    /// wait timeout, within the retry budget.
    fn run<T>(&self, call: &dyn Fn(&mut Calls<'_>) -> Result<T, CounterError>) -> Result<T, CounterError> {
        let started = Instant::now();
        let mut backoff = FIRST_BACKOFF;
        let mut attempt = 1;
        loop {
            let mut conn = self.kept.take(&self.pool)?;
            let outcome = call(&mut Calls { conn: &mut conn, statements: &self.statements });
            self.kept.give_back(conn, &outcome);
            let may_retry = self.budget.allows_retry(attempt, started);
            match outcome {
                Err(error) if may_retry && error.is_retryable() => {
                    thread::sleep(jittered(backoff));
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    attempt += 1;
                }
                outcome => return outcome,
            }
        }
    }
}

impl<Q: Queryable> Run for OnConnection<'_, Q> {
    fn run<T>(&self, call: &dyn Fn(&mut Calls<'_>) -> Result<T, CounterError>) -> Result<T, CounterError> {
        let mut conn = self.conn.borrow_mut();
        call(&mut Calls { conn: &mut **conn, statements: self.statements })
    }
}

/// A uniformly random pause between half of `backoff` and all of it, so
/// clients that collided do not collide again in step. Without the
/// operating system's randomness, the whole `backoff`.
pub(crate) fn jittered(backoff: Duration) -> Duration {
    let draw = getrandom::u32().unwrap_or(u32::MAX);
    backoff.mul_f64(0.5 + 0.5 * f64::from(draw) / f64::from(u32::MAX))
}

/// The routines called on one connection.
#[doc(hidden)]
pub struct Calls<'a> {
    conn: &'a mut dyn Connection,
    pub(super) statements: &'a Statements,
}

/// What the calls need of a connection: a statement run with parameters,
/// and its first row.
trait Connection {
    fn exec_drop(&mut self, sql: &str, params: Params) -> Result<(), mysql::Error>;
    fn exec_row(&mut self, sql: &str, params: Params) -> Result<Option<mysql::Row>, mysql::Error>;
}

impl<Q: Queryable> Connection for Q {
    fn exec_drop(&mut self, sql: &str, params: Params) -> Result<(), mysql::Error> {
        Queryable::exec_drop(self, sql, params)
    }

    fn exec_row(&mut self, sql: &str, params: Params) -> Result<Option<mysql::Row>, mysql::Error> {
        Queryable::exec_first(self, sql, params)
    }
}

impl Calls<'_> {
    pub(super) fn get_many(&mut self, names: &[String]) -> Result<Vec<Option<i64>>, CounterError> {
        let (sql, params) = (self.statements.get_many(names.len()), Params::from(names.to_vec()));
        let row = self.through_reinstall(|conn| conn.exec_row(&sql, params.clone()))?;
        let row = row.expect("a SELECT without FROM returns one row");
        (0..names.len())
            .map(|column| match row.get_opt::<Option<i64>, _>(column) {
                Some(value) => value.map_err(|error| CounterError::Database(error.into())),
                None => Ok(None),
            })
            .collect()
    }

    /// Runs one of the [`Statements`]' `CALL`s with `params`.
    pub(super) fn call(&mut self, statement: &str, params: impl Into<Params>) -> Result<(), CounterError> {
        let params = params.into();
        self.through_reinstall(|conn| conn.exec_drop(statement, params.clone()))
    }

    /// Runs `statement` again while the routine it calls is missing, for up
    /// to [`REINSTALL_WINDOW`]. A call of a missing routine runs nothing, so
    /// sending it again is safe, inside the caller's transaction too.
    fn through_reinstall<T>(
        &mut self,
        mut statement: impl FnMut(&mut dyn Connection) -> Result<T, mysql::Error>,
    ) -> Result<T, CounterError> {
        let deadline = Instant::now() + REINSTALL_WINDOW;
        let mut pause = FIRST_BACKOFF;
        loop {
            match statement(self.conn) {
                Err(mysql::Error::MySqlError(error)) if error.code == server_errno::NO_SUCH_ROUTINE => {
                    if Instant::now() >= deadline {
                        return Err(CounterError::NotInstalled(error.message));
                    }
                    thread::sleep(pause);
                    pause = (pause * 2).min(MAX_REINSTALL_PAUSE);
                }
                outcome => return Ok(outcome?),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jitter_stays_within_half_and_all_of_the_backoff() {
        for _ in 0..1000 {
            let pause = jittered(Duration::from_millis(100));
            assert!((Duration::from_millis(50)..=Duration::from_millis(100)).contains(&pause), "{pause:?}");
        }
    }
}
