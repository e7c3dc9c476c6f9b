//! The tool's error type: generating, installing and measuring. Messages
//! name the file, statement or option at fault and, where there is one, the
//! way out. Counter calls fail with the client's
//! [`slotted_counters::CounterError`].

use std::path::PathBuf;

use slotted_counters::Plain;
use slotted_counters::package::server_errno;

/// Everything that can go wrong in the tool outside a counter call.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Package options, a database URL or a connection, as the client reports them.
    #[error(transparent)]
    Client(#[from] slotted_counters::Error),

    /// A generator option or a command's argument is malformed or out of range.
    #[error("{0}")]
    InvalidOption(String),

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
    #[error("statement {number} (line {line}) failed: `{first_line}`: {}{}", Plain(source), hint(source))]
    Statement { number: usize, line: usize, first_line: String, source: mysql::Error },

    /// The account may not create stored functions; nothing was installed.
    #[error(
        "this account cannot run the package's CREATE FUNCTION, so nothing was installed: {}{}",
        Plain(source),
        hint(source)
    )]
    FunctionPrivilege { source: mysql::Error },

    /// A Group Replication package's routines could not read the group's
    /// members on this server; nothing was installed.
    #[error(
        "this package is made for MySQL Group Replication and its routines read {table}, \
         which {}, so nothing was installed: {}",
        group_members_problem(source),
        Plain(source)
    )]
    GroupMembers { table: &'static str, source: mysql::Error },

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

    /// A query of the tool's own failed.
    #[error("query failed: {}", Plain(.0))]
    Query(#[source] mysql::Error),

    /// The throughput plot could not be drawn.
    #[error("cannot draw {}: {problem}", path.display())]
    Plot { path: PathBuf, problem: String },
}

/// The way out of a server error an install commonly meets.
fn hint(error: &mysql::Error) -> &'static str {
    match error {
        mysql::Error::MySqlError(error) if error.code == server_errno::CREATE_ROUTINE_NEEDS_SUPER => {
            " (the account lacks SUPER and binary logging is on: set the global \
             log_bin_trust_function_creators=1, or install with a privileged account)"
        }
        mysql::Error::MySqlError(error)
            if [
                server_errno::DATABASE_ACCESS_DENIED,
                server_errno::TABLE_ACCESS_DENIED,
                server_errno::ROUTINE_ACCESS_DENIED,
            ]
            .contains(&error.code) =>
        {
            " (the account needs CREATE, ALTER ROUTINE and CREATE ROUTINE on the database)"
        }
        _ => "",
    }
}

/// Why the group's members cannot be read, and the way out.
fn group_members_problem(error: &mysql::Error) -> &'static str {
    match error {
        mysql::Error::MySqlError(error) if error.code == server_errno::NO_SUCH_TABLE => {
            "this server lacks (MariaDB has no Group Replication: generate the package \
             with --cluster galera for a Galera cluster)"
        }
        mysql::Error::MySqlError(error)
            if [server_errno::TABLE_ACCESS_DENIED, server_errno::DATABASE_ACCESS_DENIED]
                .contains(&error.code) =>
        {
            "this account may not read (grant it SELECT on that table, or install with an \
             administrator account)"
        }
        _ => "failed to read",
    }
}

/// The way out when the accounts cannot be read.
fn account_hint(error: &mysql::Error) -> &'static str {
    match error {
        mysql::Error::MySqlError(error)
            if [server_errno::TABLE_ACCESS_DENIED, server_errno::DATABASE_ACCESS_DENIED]
                .contains(&error.code) =>
        {
            " (reading mysql.user needs SELECT on it: install with an administrator account)"
        }
        _ => "",
    }
}
