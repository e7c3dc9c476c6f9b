//! The tool's one error type: generating, installing, inspecting and
//! measuring, with the exit code each failure gives. Messages name the
//! file, statement, option or server at fault and, where there is one, the
//! way out; never a password.

use std::fmt;
use std::path::PathBuf;

use slotted_counters_core::ConfigError;
use slotted_counters_core::package::server_errno;

/// Everything that can make a command fail.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A command's argument is malformed or out of range.
    #[error("{0}")]
    InvalidOption(String),

    /// A package option is malformed or out of range.
    #[error(transparent)]
    Config(#[from] ConfigError),

    /// A database URL could not be used, or asked for TLS settings that are
    /// refused rather than weakened.
    #[error("invalid database URL: {0}")]
    Url(String),

    /// The server could not be reached or refused the login. `hint` is the
    /// way out, or empty.
    #[error("cannot connect to {target}: {}{hint}", Plain(source))]
    Connect { target: String, source: mysql::Error, hint: &'static str },

    /// The servers cannot run what was asked of them: too few connections
    /// allowed, URLs that are not the nodes of one cluster.
    #[error("{0}")]
    Environment(String),

    /// A table holds counter names in another collation than the package
    /// compares them in: its key would fold names the routines tell apart.
    #[error(
        "`{table}` compares counter names in {installed}, this package in {package}; use \
         --collation {installed} to keep the table as it is, or change the table's collation first \
         (docs/operations.md, \"Changing the collation of names\")"
    )]
    OtherCollation { table: String, installed: String, package: String },

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

    /// The package's probe refused to install: the server is too old, or an
    /// object of one of the package's names is another's. Nothing was
    /// changed.
    #[error(
        "install refused, nothing was changed: {message}; install the package under other names \
         (--table for the table, --prefix for the rest), or move that object away (docs/operations.md, \
         \"Installing beside other objects\")"
    )]
    InstallRefused { message: String },

    /// The package's probe refused to install a package that lacks features
    /// the database has, which the DBA did not name. Nothing was changed.
    #[error(
        "install refused, nothing was changed: {message}. Install a package with them (--features), or \
         name each one this install may drop, with their routines and triggers (their tables and \
         counts stay): install --drop-features"
    )]
    FeaturesInstalled { message: String },

    /// The server is not one the package runs on. Nothing was changed.
    #[error("install refused: {message}")]
    ServerUnsupported { message: String },

    /// An uninstall with fewer features than the installed package has
    /// would leave the rest behind. Nothing was changed.
    #[error(
        "uninstall refused, nothing was changed: {message}; uninstall with the features `status` lists \
         (--features LIST, or no --features for every feature)"
    )]
    FeaturesLeft { message: String },

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

    /// A statement of the tool's own, beside a script's, failed.
    #[error("`{statement}` failed: {}", Plain(source))]
    OwnStatement { statement: String, source: mysql::Error },

    /// A query of the tool's own failed.
    #[error("query failed: {}", Plain(.0))]
    Query(#[source] mysql::Error),

    /// A call of the client, as the benchmark makes it, failed.
    #[error("a counter call failed: {0}")]
    Counter(#[source] slotted_counters::CounterError),

    /// The throughput plot could not be drawn.
    #[error("cannot draw {}: {problem}", path.display())]
    Plot { path: PathBuf, problem: String },

    /// `generate --check` found committed files that differ from a fresh render.
    #[error(
        "{} is out of date with this generator; run `slotted-counters generate {}` and commit the result",
        dir.display(),
        args.join(" ")
    )]
    Stale { dir: PathBuf, args: Vec<String> },

    /// `status` found objects that are missing or from another version.
    #[error("the package needs installing (missing or stale): {}; run `slotted-counters install`", .0.join(", "))]
    Outdated(Vec<String>),

    /// `status` found objects that are there but fail when used.
    #[error(
        "the package is installed but fails: {}; reinstall it as an account that exists \
         (`slotted-counters install`): the installing account becomes the DEFINER of every routine and the view",
        .0.join("; ")
    )]
    Broken(Vec<String>),

    /// `status` could not see some objects with the account it ran as.
    #[error(
        "cannot check with this account: {}; run status as the account that installed the package, \
         or grant those privileges",
        .0.join(", ")
    )]
    NotVisible(Vec<String>),

    /// A benchmark round lost or invented increments.
    #[error("totals were not exact, so these figures cannot be trusted: {}", .0.join("; "))]
    InexactTotals(Vec<String>),

    /// `reconcile` could not correct some counters: a bound or a limit
    /// refused the correction, which changed nothing.
    #[error("corrections refused, the counters left as they were: {}", .0.join("; "))]
    Uncorrected(Vec<String>),

    /// `reconcile --keys` stopped in a range: the ranges before it are done.
    #[error("the reconcile stopped in keys {first}..{last}: {source}; {resume}")]
    Stopped { first: i64, last: i64, resume: String, source: Box<slotted_counters::CounterError> },

    /// `reconcile --resume` was given a file it cannot resume from.
    #[error("cannot resume from {}: {problem}", path.display())]
    Resume { path: PathBuf, problem: String },

    /// `show` was asked for counters that do not exist.
    #[error("unknown counter: {}", .0.join(", "))]
    UnknownCounters(Vec<String>),
}

impl Error {
    /// The process exit code: 2 for bad usage, 1 for anything else.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::InvalidOption(_) | Error::Config(_) => 2,
            _ => 1,
        }
    }
}

/// A driver error as a sentence. The `mysql` crate's own `Display` wraps
/// each kind in its type name (`DriverError { Could not connect ... }`),
/// which reads as a debug dump in a one-line error.
pub(crate) struct Plain<'a>(pub(crate) &'a mysql::Error);

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
    }

    #[test]
    fn bad_usage_exits_2_and_a_failing_server_1() {
        assert_eq!(Error::InvalidOption("--hot must be between 1 and 64".to_owned()).exit_code(), 2);
        assert_eq!(Error::Config(ConfigError::InvalidOption("--prefix".to_owned())).exit_code(), 2);
        assert_eq!(Error::Environment("app@db allows 10 connections".to_owned()).exit_code(), 1);
        assert_eq!(Error::Url("ssl-mode=VERIFY_CA is refused".to_owned()).exit_code(), 1);
        assert_eq!(Error::Outdated(vec!["counter_get".to_owned()]).exit_code(), 1);
    }
}
