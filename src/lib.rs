//! slotted-counters: generates, installs and exercises a MySQL/MariaDB
//! stored-procedure package for slotted counters.
//!
//! A counter kept in one row makes concurrent increments queue on its row
//! lock. The package spreads each counter over several rows ("slots"); an
//! increment adds to one slot picked at random and a read sums the slots.

pub mod cli;
pub mod error;
pub mod generate;
pub mod options;
pub mod package;
pub mod render;
pub mod script;

pub use error::Error;
pub use options::{PackageArgs, PackageOptions};

use cli::{Cli, Command, GenerateArgs};

/// Runs one command line. The binary only parses arguments and reports the error.
pub fn run(cli: Cli) -> Result<(), Error> {
    match cli.command {
        Command::Generate(args) => run_generate(&args),
    }
}

fn run_generate(args: &GenerateArgs) -> Result<(), Error> {
    let options = PackageOptions::try_from(&args.package)?;
    let files = render::render(&options)?;
    if args.check {
        if let Some(diff) = generate::diff(&args.out, &files)? {
            print!("{diff}");
            let mut rerun = vec!["--out".to_owned(), args.out.display().to_string()];
            rerun.extend(options.to_args());
            return Err(Error::Stale { dir: args.out.clone(), args: rerun });
        }
        eprintln!("{} is up to date", args.out.display());
    } else {
        generate::write(&args.out, &files)?;
        eprintln!("wrote {} files to {}", files.len(), args.out.display());
    }
    Ok(())
}
