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
