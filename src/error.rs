//! The library's error types: [`Error`] for generating, installing and
//! measuring, [`CounterError`] for counter calls. Messages name the file,
//! statement or option at fault and, where there is one, the way out.

use std::fmt;
use std::path::PathBuf;

use crate::package::errno;

/// Everything that can go wrong in `slotted-counters` outside a counter call.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A generator option or a command's argument is malformed or out of range.
    #[error("{0}")]
    InvalidOption(String),

    /// A template failed to render; this is a bug in the generator.
    #[cfg(feature = "generate")]
    #[error("cannot render {file}: {source}")]
    Render { file: &'static str, source: askama::Error },

    /// Reading or writing a file failed.
    #[error("cannot {action} {}: {source}", path.display())]
    Io { action: &'static str, path: PathBuf, source: std::io::Error },

    /// A SQL script could not be split into statements.
    #[error("cannot split the script at line {line}: {problem}")]
    Script { line: usize, problem: String },

    /// A statement of a script failed on the server; nothing after it ran.
    #[error("statement {number} (line {line}) failed: `{first_line}`: {}{}", Plain(source), hint(source))]
    Statement { number: usize, line: usize, first_line: String, source: mysql::Error },

    /// The account may not create stored functions; nothing was installed.
    #[error(
        "this account cannot run the package's CREATE FUNCTION, so nothing was installed: {}{}",
        Plain(source),
        hint(source)
    )]
    FunctionPrivilege { source: mysql::Error },

    /// Whether an account exists could not be read; nothing was installed.
    #[error(
        "cannot check that the account {account} exists, so nothing was installed: {}{}",
        Plain(source),
        account_hint(source)
    )]
    AccountCheck { account: String, source: mysql::Error },

    /// `--app-user` named accounts that do not exist; nothing was installed.
    #[error("no such account: {}; create it first (CREATE USER), nothing was installed", .0.join(", "))]
    UnknownAccounts(Vec<String>),

    /// A database URL could not be used; the message never shows the password.
    #[error("invalid database URL: {0}")]
    Url(String),

    /// The server could not be reached or refused the login. `hint` is the
    /// way out, or empty.
    #[error("cannot connect to {target}: {}{hint}", Plain(source))]
    Connect { target: String, source: mysql::Error, hint: &'static str },

    /// A query of the tool's own failed.
    #[error("query failed: {}", Plain(.0))]
    Query(#[source] mysql::Error),

    /// The throughput plot could not be drawn.
    #[cfg(feature = "bench")]
    #[error("cannot draw {}: {problem}", path.display())]
    Plot { path: PathBuf, problem: String },
}

/// The way out of a server error an install commonly meets.
fn hint(error: &mysql::Error) -> &'static str {
    match error {
        mysql::Error::MySqlError(error) if error.code == 1419 => {
            " (the account lacks SUPER and binary logging is on: set the global \
             log_bin_trust_function_creators=1, or install with a privileged account)"
        }
        mysql::Error::MySqlError(error) if [1044, 1142, 1370].contains(&error.code) => {
            " (the account needs CREATE, ALTER ROUTINE and CREATE ROUTINE on the database)"
        }
        _ => "",
    }
}

/// The way out when the accounts cannot be read.
fn account_hint(error: &mysql::Error) -> &'static str {
    match error {
        mysql::Error::MySqlError(error) if [1142, 1044].contains(&error.code) => {
            " (reading mysql.user needs SELECT on it: install with an administrator account)"
        }
        _ => "",
    }
}

/// A driver error as a sentence. The `mysql` crate's own `Display` wraps
/// each kind in its type name (`DriverError { Could not connect ... }`),
/// which reads as a debug dump in a one-line error.
struct Plain<'a>(&'a mysql::Error);

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
#[derive(Debug, thiserror::Error)]
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

impl CounterError {
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
}
