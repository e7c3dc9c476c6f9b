//! `install` and `uninstall`: run the package's scripts on a database, or
//! print them with `--dry-run`.

use std::path::Path;

use clap::Parser;

use super::args::{InstallArgs, UninstallArgs};
use crate::database;
use crate::error::Error;
use crate::grants::{self, Account};
use crate::{install, script};
use slotted_counters_core::package;
use slotted_counters_core::{PackageOptions, PackageOptionsBuilder};

pub(super) fn run_install(args: &InstallArgs) -> Result<(), Error> {
    let accounts =
        args.app_users.iter().map(|account| Account::parse(account)).collect::<Result<Vec<_>, _>>()?;
    // Before rendering: the package takes the width of names the tables hold.
    let mut connected = if args.dry_run { None } else { Some(super::connect(&args.connect.url)?) };
    let (script, options) = match &args.from {
        Some(_) if args.package != PackageOptionsBuilder::default() => {
            return Err(Error::InvalidOption(
                "--from installs a generated folder as it is: leave out the package options".to_owned(),
            ));
        }
        Some(dir) => {
            let script = install::setup_script(install::Source::Folder(dir))?;
            // The grants and the drops of lacked features name the routines.
            let needs_options = !accounts.is_empty() || args.drop_features.is_some();
            let options = if needs_options { Some(folder_options(&script, dir)?) } else { None };
            (script, options)
        }
        None => {
            let options = match connected.as_mut() {
                Some(connected) => install::options_held(&mut connected.conn, &args.package)?,
                None => args.package.build()?,
            };
            (install::setup_script(install::Source::Options(&options))?, Some(options))
        }
    };
    let grants: String = options
        .iter()
        .flat_map(|options| accounts.iter().flat_map(|account| grants::application_grants(options, account)))
        .map(|grant| format!("{grant};\n"))
        .collect();
    // Each name, as the probe looks for it: `all` is no feature's.
    let drop_features = args.drop_features.map_or_else(String::new, |features| {
        let names: Vec<&str> = features.iter().map(|feature| feature.name()).collect();
        format!("SET {} = '{}';\n", package::DROP_FEATURES_VARIABLE, names.join(","))
    });
    let Some(database::Connected { mut conn, target, .. }) = connected else {
        let [drop_features, script, grants] =
            [&drop_features, &script, &grants].map(|sql| install::describe(sql));
        print!("{}{}{}", drop_features?, script?, grants?);
        if let (Some(_), Some(options)) = (args.drop_features, &options) {
            println!(
                "-- then, of these, each that the database holds and that is the package's (install checks):"
            );
            for object in install::lacked_objects(options) {
                println!("{};", object.drop_statement());
            }
        }
        return Ok(());
    };
    grants::check_accounts_exist(&mut conn, &accounts)?;
    if !drop_features.is_empty() {
        script::run(&mut conn, &drop_features)?;
    }
    let statements = install::install(&mut conn, &script)?;
    eprintln!("installed: {statements} statements ran on {target}");
    if let (Some(_), Some(options)) = (args.drop_features, &options) {
        for dropped in install::drop_lacked_objects(&mut conn, options)? {
            eprintln!("dropped: {dropped}");
        }
    }
    if !accounts.is_empty() {
        script::run(&mut conn, &grants)?;
        let accounts: Vec<String> = accounts.iter().map(Account::to_string).collect();
        eprintln!("granted counting and reading to {}", accounts.join(", "));
    }
    Ok(())
}

pub(super) fn run_uninstall(args: &UninstallArgs) -> Result<(), Error> {
    let options = args.package.build()?;
    let script = install::uninstall_script(&options, args.drop_data)?;
    if args.dry_run {
        print!("{}", install::describe(&script)?);
        return Ok(());
    }
    let database::Connected { mut conn, target, .. } = super::connect(&args.connect.url)?;
    let revokes = grants::grants_on_package(&mut conn, &options)?;
    let statements = install::uninstall(&mut conn, &script, revokes.as_deref().unwrap_or_default())?;
    eprintln!("uninstalled: {statements} statements ran on {target}");
    match revokes {
        Some(revokes) => revokes.iter().for_each(|revoke| eprintln!("revoked: {revoke}")),
        None => eprintln!(
            "left: any grants on the package's routines and view (this account may not read mysql.procs_priv \
             and mysql.tables_priv; uninstall.sql lists the REVOKEs to run)"
        ),
    }
    let kept = if args.drop_data { Vec::new() } else { install::tables_held(&mut conn, &options)? };
    if !kept.is_empty() {
        let tables: Vec<String> = kept.iter().map(|table| format!("`{table}`")).collect();
        eprintln!("kept, with every count: {} (--drop-data drops them)", tables.join(", "));
    }
    for event in grants::events_calling_package(&mut conn, &options)? {
        eprintln!("left: event `{event}` calls the package's routines and will fail; DROP EVENT `{event}`");
    }
    Ok(())
}

/// The package options a generated folder was made with, read back from
/// the header line of its `setup.sql`: the grants name its routines.
fn folder_options(script: &str, dir: &Path) -> Result<PackageOptions, Error> {
    /// The header's flags, parsed as the command line parses them.
    #[derive(Parser)]
    struct Header {
        #[command(flatten)]
        package: PackageOptionsBuilder,
    }
    let flags = script
        .lines()
        .find_map(|line| line.strip_prefix("-- Generated by slotted-counters ")?.split_once("with: "))
        .map(|(_, flags)| flags.split_whitespace());
    let header = flags.and_then(|flags| Header::try_parse_from(std::iter::once("header").chain(flags)).ok());
    match header {
        Some(header) => Ok(header.package.build()?),
        None => Err(Error::InvalidOption(format!(
            "{}: setup.sql has no readable 'Generated by slotted-counters with:' line, \
             so --app-user and --drop-features cannot name its routines",
            dir.display()
        ))),
    }
}
