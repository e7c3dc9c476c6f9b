//! The `slotted-counters` command: argument definitions in `args`, one
//! handler module per group of commands. Handlers only parse, call the
//! library and print.

mod args;
mod bench;
mod generate;
mod inspect;
mod install;
mod reconcile;
mod table;

use crate::database;
use crate::error::Error;
pub use args::{Cli, Command};

/// Runs one command line. The binary only parses arguments and reports the error.
pub fn run(cli: Cli) -> Result<(), Error> {
    match cli.command {
        Command::Generate(args) => generate::run(&args),
        Command::Install(args) => install::run_install(&args),
        Command::Uninstall(args) => install::run_uninstall(&args),
        Command::Status(args) => inspect::run_status(&args),
        Command::Show(args) => inspect::run_show(&args),
        Command::Bench(args) => bench::run_bench(&args),
        Command::Advise(args) => bench::run_advise(&args),
        Command::Reconcile(args) => reconcile::run(&args),
    }
}

/// Connects to the database `url` names, and says on stderr when the
/// connection may give the password away to someone on the path.
fn connect(url: &str) -> Result<database::Connected, Error> {
    let connection = database::connect(url)?;
    if let Some(exposure) = &connection.exposure {
        eprintln!("warning: {exposure}");
    }
    Ok(connection)
}
