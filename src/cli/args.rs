//! The command line: argument definitions only. Doc comments here are the
//! `--help` text, written for the DBA who runs the tool.

use std::num::NonZeroU64;
use std::ops::RangeInclusive;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::bench::{DEFAULT_HOT, Spread, Variant};
use slotted_counters::defaults;
use slotted_counters_core::options::{DEFAULT_MAX_SLOTS, DEFAULT_TABLE};
use slotted_counters_core::{Features, PackageOptionsBuilder};

/// Slotted counters for MySQL and MariaDB: spreads each hot counter over
/// several rows so concurrent increments stop queueing on one row lock.
#[derive(Debug, Parser)]
#[command(name = "slotted-counters", bin_name = "slotted-counters", version)]
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

    /// Measure increments per second of hot counters under concurrent
    /// clients, slotted and single-row, in the same run. Works in its own
    /// bench_* tables and routines, dropped at the end. Fails when any total
    /// is not exact.
    Bench(BenchArgs),

    /// Recommend a slot count: short rounds over 1, 2, 4, ... slots, and the
    /// smallest count within 10% of the best throughput.
    Advise(AdviseArgs),

    /// Recount counters from their source of truth while writes go on: the
    /// query's counts and the counters are read in one consistent snapshot,
    /// and each difference is added as an ordinary write with a write id.
    /// Prints every counter that drifted; exits 1 when a correction was
    /// refused (a bound or a limit).
    Reconcile(ReconcileArgs),
}

/// Where the database is.
#[derive(Debug, Args)]
pub struct ConnectArgs {
    /// Database to use, as mysql://user:password@host:port/database
    #[arg(long, env = "DATABASE_URL", hide_env_values = true, value_name = "URL")]
    pub url: String,
}

#[derive(Debug, Args)]
pub struct ReconcileArgs {
    #[command(flatten)]
    pub connect: ConnectArgs,

    /// The query that counts each counter's source: rows of a counter's
    /// name and a whole number, such as "SELECT CONCAT('comments:',
    /// post_id), COUNT(*) FROM comments GROUP BY post_id"
    #[arg(long, value_name = "SQL")]
    pub query: String,

    /// The counters the query counts: every counter whose name begins
    /// with this; one the query returns no row for is corrected to 0.
    /// Without it, such counters are left alone
    #[arg(long, value_name = "PREFIX")]
    pub set: Option<String>,

    /// Reconcile the counters of keys FIRST to LAST, both included, in
    /// ranges of --batch-size keys, each in a snapshot of its own. A key is
    /// what a counter's name is made of (a post's id), so that each counter
    /// falls in one range; the query takes a range's first and last key as
    /// its two parameters ("... WHERE post_id BETWEEN ? AND ? GROUP BY
    /// post_id") and counts every key of it, zeros included (FROM posts
    /// LEFT JOIN comments ...)
    #[arg(long, value_name = "FIRST..LAST", value_parser = parse_keys, conflicts_with = "set")]
    pub keys: Option<RangeInclusive<i64>>,

    /// How many keys each range of --keys holds
    #[arg(long, value_name = "N", default_value = "1000", requires = "keys")]
    pub batch_size: NonZeroU64,

    /// Keep the run's progress in FILE, and resume from it: a run that
    /// stopped starts again at the first range it did not finish. The
    /// file is removed when every range is done
    #[arg(long, value_name = "FILE", requires = "keys")]
    pub resume: Option<PathBuf>,

    /// Read and report every drift, and correct none
    #[arg(long)]
    pub dry_run: bool,

    /// Write through plain SQL, as on engines that run no routine
    #[arg(long)]
    pub plain_sql: bool,

    #[command(flatten)]
    pub package: PackageOptionsBuilder,
}

/// Where the benchmark's clients connect.
#[derive(Debug, Args)]
pub struct NodesArgs {
    /// Database to use, as mysql://user:password@host:port/database. Repeat
    /// it for each node of a multi-primary cluster: clients are spread over
    /// the nodes in turn, and the first prepares and cleans up
    #[arg(long = "url", env = "DATABASE_URL", hide_env_values = true, value_name = "URL", required = true)]
    pub urls: Vec<String>,
}

#[derive(Debug, Args)]
pub struct InstallArgs {
    #[command(flatten)]
    pub connect: ConnectArgs,

    /// Install the setup.sql of an already generated folder instead of
    /// rendering one from the package options
    #[arg(long, value_name = "DIR")]
    pub from: Option<PathBuf>,

    /// Also let this existing account count and read, and nothing more:
    /// EXECUTE on add, increment, add_many, get and estimate, SELECT on the totals
    /// view; no setup, reset, resize, compact, delete, nor the table.
    /// Repeatable; an account without @host means any host ('%')
    #[arg(long = "app-user", value_name = "USER@HOST")]
    pub app_users: Vec<String>,

    /// Let a package with fewer features replace one that has these (a
    /// list, as --features takes it): their routines and triggers are
    /// dropped, their tables and counts kept. Without it, such an install
    /// is refused before anything changes
    #[arg(long, value_name = "LIST")]
    pub drop_features: Option<Features>,

    /// Print the statements that would run, and run none
    #[arg(long)]
    pub dry_run: bool,

    #[command(flatten)]
    pub package: PackageOptionsBuilder,
}

#[derive(Debug, Args)]
pub struct UninstallArgs {
    #[command(flatten)]
    pub connect: ConnectArgs,

    /// Also drop every table of the package (the slots, write ids, changes, periods, buckets,
    /// tracked writes and spreads), with every count in them
    #[arg(long)]
    pub drop_data: bool,

    /// Print the statements that would run, and run none
    #[arg(long)]
    pub dry_run: bool,

    #[command(flatten)]
    pub package: PackageOptionsBuilder,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    #[command(flatten)]
    pub connect: ConnectArgs,

    #[command(flatten)]
    pub package: PackageOptionsBuilder,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    #[command(flatten)]
    pub connect: ConnectArgs,

    /// Name of the counter table
    #[arg(long, value_name = "NAME", default_value = DEFAULT_TABLE)]
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
    pub package: PackageOptionsBuilder,
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    #[command(flatten)]
    pub nodes: NodesArgs,

    /// Concurrent clients, one thread and connection each (a tokio task each for
    /// the async variants, and the coalescing variants' clients share their
    /// handle's connections); a list runs each count
    #[arg(long, value_name = "N,...", value_delimiter = ',', default_value = "250")]
    pub clients: Vec<u32>,

    /// Slot counts of the hot counters [default: the classic layout, 1 to 50 slots at random]
    #[arg(long, value_name = "N,...", value_delimiter = ',')]
    pub slots: Vec<u32>,

    /// Milliseconds of application work between the increment and COMMIT;
    /// 0 runs each increment alone with autocommit
    #[arg(long, value_name = "MS,...", value_delimiter = ',', default_value = "0,2")]
    pub hold_ms: Vec<u32>,

    /// Microseconds each client pauses, on average, between its iterations,
    /// each pause drawn at random (exponentially), as calls from users who
    /// arrive at random; 0 calls again at once. The async variants' pauses
    /// round up to whole milliseconds (tokio's timer)
    #[arg(long, value_name = "US", default_value_t = 0)]
    pub think_us: u32,

    /// Hot counters: each client increments every one once per iteration.
    /// 4 is the classic test; 1 is the worst case for the single-row counter
    #[arg(long, value_name = "N", default_value_t = DEFAULT_HOT)]
    pub hot: u32,

    /// Counters each table holds instead of the hot ones (with one --slots
    /// value, each counter's slots): each client increments one per
    /// iteration, drawn by --spread, and the report adds each table's rows,
    /// bytes and read costs
    #[arg(long, value_name = "N", conflicts_with = "hot")]
    pub counters: Option<u32>,

    /// How increments spread over --counters
    #[arg(long, value_name = "SPREAD", value_enum, default_value = "zipf", requires = "counters")]
    pub spread: Spread,

    /// Only the N hottest of --counters (the first N, which Zipf draws
    /// most) get --slots slots in the tables of dynamic slot counts; the
    /// others get one each
    #[arg(long, value_name = "N", requires = "counters")]
    pub slotted_head: Option<u32>,

    /// Flushes each coalescing handle may keep in flight, each on a connection
    /// of its own; beyond the first, one starts only when those in flight have stalled
    #[arg(long, value_name = "N", default_value_t = defaults::FLUSHES as u32)]
    pub flushes: u32,

    /// Iterations per client, each incrementing every hot counter once
    #[arg(long, value_name = "N", default_value_t = 100, conflicts_with = "duration")]
    pub iterations: u32,

    /// Run each round for this many seconds instead of a number of iterations
    #[arg(long, value_name = "SECONDS")]
    pub duration: Option<f64>,

    /// Variants to measure [default: single-row, dynamic, own-counter, and fixed when --slots is given]
    #[arg(long, value_name = "VARIANT,...", value_delimiter = ',', value_enum)]
    pub variant: Vec<Variant>,

    /// Also write every figure, with the server's version and settings, as JSON
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Also plot throughput against clients, one line per variant, as SVG
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct AdviseArgs {
    #[command(flatten)]
    pub nodes: NodesArgs,

    /// Concurrent clients to plan for
    #[arg(long, value_name = "N")]
    pub clients: u32,

    /// Milliseconds of application work between the increment and COMMIT
    #[arg(long, value_name = "MS", default_value_t = 0)]
    pub hold_ms: u32,

    /// Largest slot count to try
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_SLOTS)]
    pub max_slots: u32,

    /// Seconds each round runs
    #[arg(long, value_name = "SECONDS", default_value_t = 3.0)]
    pub duration: f64,
}

/// A range of keys, `FIRST..LAST` or `FIRST..=LAST`, both included.
fn parse_keys(text: &str) -> Result<RangeInclusive<i64>, String> {
    let (first, last) = text.split_once("..").ok_or("expected FIRST..LAST, such as 1..100000")?;
    let last = last.strip_prefix('=').unwrap_or(last);
    let key = |key: &str| key.trim().parse::<i64>().map_err(|error| format!("{key:?} is not a key: {error}"));
    let (first, last) = (key(first)?, key(last)?);
    if first > last {
        return Err(format!("the first key, {first}, is past the last, {last}"));
    }
    Ok(first..=last)
}
