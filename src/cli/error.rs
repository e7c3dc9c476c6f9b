//! The command line's error: a library failure, or an outcome that only a
//! command has (a stale folder, routines to reinstall, inexact benchmark
//! totals, unknown counters), with the exit code each gives.

use std::path::PathBuf;

use crate::error::Error;

/// Why a command exits non-zero.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The library failed; its message says why.
    #[error(transparent)]
    Library(#[from] Error),

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

    /// `show` was asked for counters that do not exist.
    #[error("unknown counter: {}", .0.join(", "))]
    UnknownCounters(Vec<String>),
}

impl From<slotted_counters::Error> for CliError {
    fn from(error: slotted_counters::Error) -> Self {
        CliError::Library(error.into())
    }
}

impl CliError {
    /// The process exit code: 2 for bad usage, 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Library(
                Error::InvalidOption(_) | Error::Client(slotted_counters::Error::InvalidOption(_)),
            ) => 2,
            _ => 1,
        }
    }
}
