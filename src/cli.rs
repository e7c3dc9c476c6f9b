//! The command line: argument definitions only. Doc comments here are the
//! `--help` text, written for the DBA who runs the tool.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::options::PackageArgs;

/// Slotted counters for MySQL and MariaDB: spreads each hot counter over
/// several rows so concurrent increments stop queueing on one row lock.
#[derive(Debug, Parser)]
#[command(name = "slotted-counters", version)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Render the stored-procedure package (create_tables.sql,
    /// create_procedures.sql, setup.sql, uninstall.sql) into a folder.
    Generate(GenerateArgs),

    /// Install the package into a live database, statement by statement.
    /// Running it again replaces the routines and keeps every count.
    Install(InstallArgs),

    /// Drop the package's routines. The counter table and its counts stay
    /// unless --drop-data is given.
    Uninstall(UninstallArgs),

    /// List the package's routines in a database and whether each matches
    /// this version and these options. Exits 1 when any is missing or stale.
    Status(StatusArgs),

    /// Print a table of counters: name, slots, total, start date, description.
    Show(ShowArgs),
}

/// Where the database is.
#[derive(Debug, Args)]
pub struct ConnectArgs {
    /// Database to use, as mysql://user:password@host:port/database
    #[arg(long, env = "DATABASE_URL", hide_env_values = true, value_name = "URL")]
    pub url: String,
}

#[derive(Debug, Args)]
pub struct InstallArgs {
    #[command(flatten)]
    pub connect: ConnectArgs,

    /// Install the setup.sql of an already generated folder instead of
    /// rendering one from the package options
    #[arg(long, value_name = "DIR")]
    pub from: Option<PathBuf>,

    /// Print the statements that would run, and run none
    #[arg(long)]
    pub dry_run: bool,

    #[command(flatten)]
    pub package: PackageArgs,
}

#[derive(Debug, Args)]
pub struct UninstallArgs {
    #[command(flatten)]
    pub connect: ConnectArgs,

    /// Also drop the counter table, with every count in it
    #[arg(long)]
    pub drop_data: bool,

    /// Print the statements that would run, and run none
    #[arg(long)]
    pub dry_run: bool,

    #[command(flatten)]
    pub package: PackageArgs,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    #[command(flatten)]
    pub connect: ConnectArgs,

    #[command(flatten)]
    pub package: PackageArgs,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    #[command(flatten)]
    pub connect: ConnectArgs,

    /// Name of the counter table
    #[arg(long, value_name = "NAME", default_value = crate::options::DEFAULT_TABLE)]
    pub table: String,

    /// Counters to show (default: all)
    #[arg(value_name = "NAME")]
    pub names: Vec<String>,
}

#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// Folder to write the package into
    #[arg(long, value_name = "DIR", default_value = "generated")]
    pub out: PathBuf,

    /// Write nothing; compare the folder with a fresh render, print a diff
    /// and exit 1 when they differ
    #[arg(long)]
    pub check: bool,

    #[command(flatten)]
    pub package: PackageArgs,
}
