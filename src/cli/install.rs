//! `install` and `uninstall`: run the package's scripts on a database, or
//! print them with `--dry-run`.

use super::args::{InstallArgs, PackageArgs, UninstallArgs};
use super::error::CliError;
use crate::error::Error;
use crate::{database, install, script};

pub(super) fn run_install(args: &InstallArgs) -> Result<(), CliError> {
    let options;
    let source = match &args.from {
        Some(_) if args.package != PackageArgs::default() => {
            return Err(Error::InvalidOption(
                "--from installs a generated folder as it is: leave out the package options".to_owned(),
            )
            .into());
        }
        Some(dir) => install::Source::Folder(dir),
        None => {
            options = args.package.options()?;
            install::Source::Options(&options)
        }
    };
    let script = install::setup_script(source)?;
    if dry_run(args.dry_run, &script)? {
        return Ok(());
    }
    let (mut conn, target) = database::connect(&args.connect.url)?;
    let statements = install::install(&mut conn, &script)?;
    eprintln!("installed: {statements} statements ran on {target}");
    Ok(())
}

pub(super) fn run_uninstall(args: &UninstallArgs) -> Result<(), CliError> {
    let script = install::uninstall_script(&args.package.options()?, args.drop_data)?;
    if dry_run(args.dry_run, &script)? {
        return Ok(());
    }
    let (mut conn, target) = database::connect(&args.connect.url)?;
    let statements = script::run(&mut conn, &script)?;
    eprintln!("uninstalled: {statements} statements ran on {target}");
    Ok(())
}

/// With `--dry-run`, prints the statements `script` would run and says so.
fn dry_run(dry_run: bool, script: &str) -> Result<bool, Error> {
    if dry_run {
        print!("{}", install::describe(script)?);
    }
    Ok(dry_run)
}
