//! Several statements as one transaction, on a connection that may be the
//! caller's: the plain mode's batches, deletes and lazy resets.

use std::borrow::Cow;

use slotted_counters_core::package::server_errno;

use crate::driver::{Connection, Owner, Statement};
use crate::error::CounterError;

/// The name of the savepoint that tells whether the caller's connection is
/// inside a transaction, and bounds a call's statements inside one.
const SAVEPOINT: &str = "slotted_counters_call";

/// Runs `body` as one transaction: the caller's when one is open on its
/// connection (inside a savepoint, which an error rolls back), else one of
/// its own. `START TRANSACTION` would commit a transaction the caller has
/// open; a savepoint that does not outlive its statement (1305) tells that
/// none is.
pub(crate) async fn atomically<C: Connection, T>(
    conn: &mut C,
    owner: Owner,
    body: impl AsyncFnOnce(&mut C) -> Result<T, CounterError>,
) -> Result<T, CounterError> {
    let inside_callers = owner == Owner::Caller && inside_transaction(conn).await?;
    let (begin, rollback, commit) = if inside_callers {
        (format!("SAVEPOINT {SAVEPOINT}"), format!("ROLLBACK TO SAVEPOINT {SAVEPOINT}"), None)
    } else {
        ("START TRANSACTION".to_owned(), "ROLLBACK".to_owned(), Some("COMMIT"))
    };
    conn.execute(&text(&begin)).await?;
    let outcome = match body(conn).await {
        Ok(value) => match commit {
            Some(commit) => conn.execute(&text(commit)).await.map(|_| value),
            None => Ok(value),
        },
        error => error,
    };
    if outcome.is_err() {
        // A deadlock has rolled the transaction back already, the
        // savepoint with it; a broken connection takes it with it.
        let _ = conn.execute(&text(&rollback)).await;
    }
    outcome
}

/// Whether a transaction is open on `conn`.
async fn inside_transaction(conn: &mut impl Connection) -> Result<bool, CounterError> {
    conn.execute(&text(&format!("SAVEPOINT {SAVEPOINT}"))).await?;
    match conn.execute(&text(&format!("ROLLBACK TO SAVEPOINT {SAVEPOINT}"))).await {
        Ok(_) => Ok(true),
        Err(error) if error.code() == Some(server_errno::NO_SUCH_SAVEPOINT) => Ok(false),
        Err(error) => Err(error),
    }
}

fn text(sql: &str) -> Statement<'_> {
    Statement { sql: Cow::Borrowed(sql), params: Vec::new() }
}
