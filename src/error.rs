//! The one error type of the library. Messages name the file, statement or
//! option at fault and, where there is one, the way out.

use std::path::PathBuf;

use crate::package::errno;

/// Everything that can go wrong in `slotted-counters`.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A generator option is malformed or out of range.
    #[error("{0}")]
    InvalidOption(String),

    /// `generate --check` found committed files that differ from a fresh render.
    #[error(
        "{} is out of date with this generator; run `slotted-counters generate {}` and commit the result",
        dir.display(),
        args.join(" ")
    )]
    Stale { dir: PathBuf, args: Vec<String> },

    /// A template failed to render; this is a bug in the generator.
    #[error("cannot render {file}: {source}")]
    Render { file: &'static str, source: askama::Error },

    /// Reading or writing a file failed.
    #[error("cannot {action} {}: {source}", path.display())]
    Io { action: &'static str, path: PathBuf, source: std::io::Error },

    /// A SQL script could not be split into statements.
    #[error("cannot split the script at line {line}: {problem}")]
    Script { line: usize, problem: String },

    /// A statement of a script failed on the server; nothing after it ran.
    #[error("statement {number} (line {line}) failed: `{first_line}`: {source}{}", hint(source))]
    Statement { number: usize, line: usize, first_line: String, source: mysql::Error },

    /// The account may not create stored functions; nothing was installed.
    #[error(
        "this account cannot run the package's CREATE FUNCTION, so nothing was installed: {source}{}",
        hint(source)
    )]
    FunctionPrivilege { source: mysql::Error },

    /// A database URL could not be used; the message never shows the password.
    #[error("invalid database URL: {0}")]
    Url(String),

    /// The server could not be reached or refused the login.
    #[error("cannot connect to {target}: {source}")]
    Connect { target: String, source: mysql::Error },

    /// A query of the tool's own failed.
    #[error("query failed: {0}")]
    Query(mysql::Error),

    /// `status` found routines that are missing or from another version.
    #[error("routines need installing (missing or stale): {}; run `slotted-counters install`", .0.join(", "))]
    Outdated(Vec<String>),

    /// A benchmark round lost or invented increments.
    #[error("totals were not exact, so these figures cannot be trusted: {}", .0.join("; "))]
    InexactTotals(Vec<String>),

    /// The throughput plot could not be drawn.
    #[error("cannot draw {}: {problem}", path.display())]
    Plot { path: PathBuf, problem: String },

    /// `show` was asked for counters that do not exist.
    #[error("unknown counter: {}", .0.join(", "))]
    UnknownCounters(Vec<String>),
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

impl Error {
    /// The process exit code for this error: 2 for bad usage, 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::InvalidOption(_) => 2,
            _ => 1,
        }
    }
}

/// An error of a counter call made through [`crate::Counters`].
#[derive(Debug, thiserror::Error)]
pub enum CounterError {
    /// The counter does not exist (package errno 61001).
    #[error("{0}")]
    NotFound(String),
    /// `setup` of a counter that exists (package errno 61002).
    #[error("{0}")]
    AlreadyExists(String),
    /// An argument was NULL, empty, too long or out of range (package errno 61003).
    #[error("{0}")]
    InvalidArgument(String),
    /// Any other failure: connection, privileges, a deadlock that outlasted
    /// the retries, a missing routine.
    #[error("database error: {0}")]
    Database(mysql::Error),
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
