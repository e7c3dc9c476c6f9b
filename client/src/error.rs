//! The client's error types: [`CounterError`] for counter calls, [`Error`]
//! for package options, database URLs and connections. Messages name the
//! counter, option or server at fault and, where there is one, the way out.

use std::fmt;

use crate::package::{errno, server_errno};

/// What can go wrong outside a counter call: package options, database
/// URLs, connections.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A package option is malformed or out of range.
    #[error("{0}")]
    InvalidOption(String),

    /// A database URL could not be used; the message never shows the password.
    #[error("invalid database URL: {0}")]
    Url(String),

    /// TLS settings the driver cannot honour, refused rather than weakened.
    #[error("{0}")]
    Tls(String),

    /// The server could not be reached or refused the login. `hint` is the
    /// way out, or empty.
    #[error("cannot connect to {target}: {}{hint}", Plain(source))]
    Connect { target: String, source: mysql::Error, hint: &'static str },

    /// A query failed.
    #[error("query failed: {}", Plain(.0))]
    Query(#[source] mysql::Error),
}

/// A driver error as a sentence. The `mysql` crate's own `Display` wraps
/// each kind in its type name (`DriverError { Could not connect ... }`),
/// which reads as a debug dump in a one-line error.
pub struct Plain<'a>(pub &'a mysql::Error);

impl fmt::Display for Plain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            mysql::Error::MySqlError(error) => error.fmt(f),
            mysql::Error::DriverError(error) => error.fmt(f),
            mysql::Error::IoError(error) => error.fmt(f),
            mysql::Error::UrlError(error) => error.fmt(f),
            mysql::Error::CodecError(error) => error.fmt(f),
            mysql::Error::TlsError(error) => error.fmt(f),
            other => other.fmt(f),
        }
    }
}

/// An error of a counter call made through [`crate::Counters`].
///
/// Match the package's refusals by variant, or ask [`CounterError::kind`];
/// [`CounterError::code`] gives the server's error number and
/// [`CounterError::is_retryable`] says whether the call may simply run
/// again, without matching the driver's types.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CounterError {
    /// The counter does not exist (package errno 9001).
    #[error("{0}")]
    NotFound(String),
    /// `setup` of a counter that exists (package errno 9002).
    #[error("{0}")]
    AlreadyExists(String),
    /// An argument was NULL, empty, too long or out of range (package errno 9003).
    #[error("{0}")]
    InvalidArgument(String),
    /// A routine of the package stayed missing (1305) for all of
    /// [`crate::REINSTALL_WINDOW`]: the package is not installed,
    /// or was installed with another prefix.
    #[error(
        "the counter package is not installed: {0}; install it with `slotted-counters install` (with the prefix this client uses)"
    )]
    NotInstalled(String),
    /// Any other failure: connection, privileges, a deadlock that outlasted
    /// the retries.
    #[error("database error: {}", Plain(.0))]
    Database(#[source] mysql::Error),
    /// The thread flushing this call's delta for a [`crate::Coalescing`]
    /// handle panicked: whether the delta was applied is unknown.
    #[error("the flush carrying this delta panicked; whether it was applied is unknown")]
    FlushPanicked,
}

/// Why the package refused a call: the error numbers its routines raise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PackageErrorKind {
    /// The counter does not exist (9001).
    UnknownCounter,
    /// `setup` of a counter that exists (9002).
    AlreadyExists,
    /// An argument was NULL, empty, too long or out of range (9003).
    InvalidArgument,
}

impl CounterError {
    /// The package's reason, when the package refused the call.
    pub fn kind(&self) -> Option<PackageErrorKind> {
        match self {
            CounterError::NotFound(_) => Some(PackageErrorKind::UnknownCounter),
            CounterError::AlreadyExists(_) => Some(PackageErrorKind::AlreadyExists),
            CounterError::InvalidArgument(_) => Some(PackageErrorKind::InvalidArgument),
            _ => None,
        }
    }

    /// The server's error number: the package's own (9001-9003) for its
    /// refusals, the server's for a server error, `None` for a failure that
    /// never reached the server's answer (a lost connection, say).
    pub fn code(&self) -> Option<u16> {
        match self {
            CounterError::NotFound(_) => Some(errno::UNKNOWN_COUNTER),
            CounterError::AlreadyExists(_) => Some(errno::ALREADY_EXISTS),
            CounterError::InvalidArgument(_) => Some(errno::INVALID_ARGUMENT),
            CounterError::NotInstalled(_) => Some(server_errno::NO_SUCH_ROUTINE),
            CounterError::Database(mysql::Error::MySqlError(error)) => Some(error.code),
            _ => None,
        }
    }

    /// Whether the server rolled the call back for a reason that may be gone
    /// at once: a deadlock (1213, also Galera's lost certification), a lock
    /// wait timeout (1205), a row changed since the transaction's snapshot
    /// under MariaDB's snapshot isolation (1020), Group Replication's lost
    /// certification (3101),
    /// or its rollback of a local transaction for a remote one that needed
    /// its locks (1180 with error 149, "Lock deadlock; Retry transaction").
    /// The call changed nothing and may run again; [`crate::Counters`] does
    /// that itself for calls outside the caller's transaction. A call made in
    /// the caller's transaction ([`crate::Counters::on`]) must run again with
    /// the whole transaction: the server rolled all of it back.
    pub fn is_retryable(&self) -> bool {
        match self {
            CounterError::Database(mysql::Error::MySqlError(error)) => match error.code {
                server_errno::DEADLOCK
                | server_errno::LOCK_WAIT_TIMEOUT
                | server_errno::RECORD_CHANGED
                | server_errno::CERTIFICATION_FAILED => true,
                server_errno::ERROR_DURING_COMMIT => error.message.starts_with("Got error 149 "),
                _ => false,
            },
            _ => false,
        }
    }

    /// The same error for another caller of a shared flush. Server, driver
    /// and URL errors are copied whole; any other kind, which the driver
    /// does not let be copied, becomes an I/O error with the same message.
    pub(crate) fn duplicate(&self) -> CounterError {
        match self {
            CounterError::NotFound(message) => CounterError::NotFound(message.clone()),
            CounterError::AlreadyExists(message) => CounterError::AlreadyExists(message.clone()),
            CounterError::InvalidArgument(message) => CounterError::InvalidArgument(message.clone()),
            CounterError::NotInstalled(message) => CounterError::NotInstalled(message.clone()),
            CounterError::FlushPanicked => CounterError::FlushPanicked,
            CounterError::Database(error) => CounterError::Database(match error {
                mysql::Error::MySqlError(error) => mysql::Error::MySqlError(error.clone()),
                mysql::Error::DriverError(error) => mysql::Error::DriverError(error.clone()),
                mysql::Error::UrlError(error) => mysql::Error::UrlError(error.clone()),
                mysql::Error::IoError(io) => {
                    mysql::Error::IoError(std::io::Error::new(io.kind(), io.to_string()))
                }
                other => mysql::Error::IoError(std::io::Error::other(Plain(other).to_string())),
            }),
        }
    }
}

impl From<mysql::Error> for CounterError {
    fn from(error: mysql::Error) -> Self {
        match error {
            mysql::Error::MySqlError(ref server) => match server.code {
                errno::UNKNOWN_COUNTER => CounterError::NotFound(server.message.clone()),
                errno::ALREADY_EXISTS => CounterError::AlreadyExists(server.message.clone()),
                errno::INVALID_ARGUMENT => CounterError::InvalidArgument(server.message.clone()),
                _ => CounterError::Database(error),
            },
            _ => CounterError::Database(error),
        }
    }
}

/// An error of sqlx's MySQL driver, in the sync client's terms: a server
/// error keeps its number, SQLSTATE and message (so the package's refusals
/// become their variants, and [`CounterError::code`] and
/// [`CounterError::is_retryable`] read the same), any other error becomes an
/// I/O error that keeps sqlx's as its source.
#[cfg(feature = "sqlx")]
impl From<sqlx::Error> for CounterError {
    fn from(error: sqlx::Error) -> Self {
        let server = error.as_database_error().and_then(|error| {
            let mysql = error.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>()?;
            Some(mysql::MySqlError {
                state: mysql.code().unwrap_or("HY000").to_owned(),
                message: mysql.message().to_owned(),
                code: mysql.number(),
            })
        });
        match server {
            Some(server) => mysql::Error::MySqlError(server).into(),
            None => CounterError::Database(mysql::Error::IoError(std::io::Error::other(error))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn driver_errors_read_as_sentences() {
        let refused = mysql::Error::DriverError(mysql::DriverError::CouldNotConnect(Some((
            "127.0.0.1:1".to_owned(),
            "Connection refused (os error 111)".to_owned(),
            std::io::ErrorKind::ConnectionRefused,
        ))));
        let error = Error::Connect { target: "app@127.0.0.1:1/app".to_owned(), source: refused, hint: "" };
        assert_eq!(
            error.to_string(),
            "cannot connect to app@127.0.0.1:1/app: \
             Could not connect to address `127.0.0.1:1': Connection refused (os error 111)"
        );
        let timeout = CounterError::Database(mysql::Error::DriverError(mysql::DriverError::ConnectTimeout));
        assert_eq!(timeout.to_string(), "database error: Could not connect: connection timeout");
    }

    #[test]
    fn what_rolled_back_a_call_that_may_simply_run_again_is_retryable() {
        let server = |code: u16, message: &str| {
            CounterError::Database(mysql::Error::MySqlError(mysql::MySqlError {
                state: "HY000".to_owned(),
                message: message.to_owned(),
                code,
            }))
        };
        for code in [1020, 1205, 1213, 3101] {
            assert!(server(code, "").is_retryable(), "{code}");
        }
        let group_rollback = "Got error 149 - 'Lock deadlock; Retry transaction' during COMMIT";
        assert!(server(1180, group_rollback).is_retryable());
        assert!(!server(1180, "Got error 28 - 'No space left on device' during COMMIT").is_retryable());
        for code in [1062, 1142, 1305, 9001] {
            assert!(!server(code, "").is_retryable(), "{code}");
        }
        assert!(!CounterError::NotFound("unknown counter: 'a'".to_owned()).is_retryable());
    }
}
