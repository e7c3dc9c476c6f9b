//! What the calls need of a database driver, so that each call is written
//! once for both clients: a connection that runs a statement. The bottom
//! layer: it names nothing else of the crate but its error. Where a try of
//! a call runs, [`Driver`](crate::engine::Driver), is the engine's.
//!
//! It is written as `async fn`. The sync client's implementations block
//! and never wait, so its futures are ready when first polled, and
//! [`ready`] runs them on the calling thread; the async client's wait on
//! tokio.

use std::borrow::Cow;

use crate::error::CounterError;

/// One statement with its parameters, for a driver to bind and send.
#[derive(Debug)]
pub struct Statement<'a> {
    pub(crate) sql: Cow<'a, str>,
    pub(crate) params: Vec<Param<'a>>,
}

/// A statement's parameter, in the types the calls use.
#[derive(Debug, Clone, Copy)]
pub enum Param<'a> {
    Text(&'a str),
    Number(Option<i64>),
    Flag(bool),
    Bytes(&'a [u8]),
}

/// Whose transaction a connection's statements run in: a call that takes
/// several statements must not commit a transaction the caller has open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Owner {
    /// A pooled connection: nothing of the caller's is open on it.
    #[default]
    Client,
    /// The caller's connection, which may be inside the caller's transaction.
    Caller,
}

/// A connection the calls run statements on.
// The futures stay private to the crate: no caller outside needs to bound them.
#[allow(async_fn_in_trait)]
pub trait Connection {
    /// Runs `statement`, whose rows, if any, are dropped; returns the rows
    /// it changed (MySQL counts a row an UPDATE leaves as it was as
    /// unchanged).
    async fn execute(&mut self, statement: &Statement<'_>) -> Result<u64, CounterError>;

    /// Runs `statement` and reads its rows, each column as a nullable
    /// BIGINT.
    async fn rows(&mut self, statement: &Statement<'_>) -> Result<Vec<Vec<Option<i64>>>, CounterError>;

    /// Runs `statement`, a `SELECT` of one text, and reads it.
    async fn text(&mut self, statement: &Statement<'_>) -> Result<Option<String>, CounterError>;

    /// Runs `statement`, a `CALL` that answers rows of texts and numbers,
    /// and reads them, each column as a nullable text (a number as its
    /// digits).
    async fn texts(&mut self, statement: &Statement<'_>) -> Result<Vec<Vec<Option<String>>>, CounterError>;
}

/// The output of `future`, which must be ready when first polled: a call
/// made through a driver that blocks instead of waiting.
#[cfg(any(feature = "mysql", test))]
pub(crate) fn ready<F: Future>(future: F) -> F::Output {
    use std::pin::pin;
    use std::task::{Context, Poll, Waker};
    match pin!(future).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(output) => output,
        Poll::Pending => unreachable!("a blocking driver's future waited"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_future_that_never_waits_is_run_at_once() {
        assert_eq!(ready(async { 6 * 7 }), 42);
    }

    #[test]
    #[should_panic(expected = "a blocking driver's future waited")]
    fn a_future_that_waits_is_a_bug() {
        ready(std::future::pending::<()>());
    }
}
