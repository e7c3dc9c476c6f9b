//! slotted-counters: generates, installs and exercises a MySQL/MariaDB
//! stored-procedure package for slotted counters.
//!
//! A counter kept in one row makes concurrent increments queue on its row
//! lock. The package spreads each counter over several rows ("slots"); an
//! increment adds to one slot picked at random and a read sums the slots.

pub mod advise;
pub mod bench;
pub mod cli;
pub mod client;
pub mod database;
pub mod error;
pub mod generate;
pub mod install;
pub mod options;
pub mod package;
pub mod render;
pub mod report;
pub mod script;
pub mod status;
mod table;

pub use client::Counters;
pub use error::{CounterError, Error};
pub use options::{PackageArgs, PackageOptions};

use cli::{
    AdviseArgs, BenchArgs, Cli, Command, GenerateArgs, InstallArgs, ShowArgs, StatusArgs, UninstallArgs,
};

/// Runs one command line. The binary only parses arguments and reports the error.
pub fn run(cli: Cli) -> Result<(), Error> {
    match cli.command {
        Command::Generate(args) => run_generate(&args),
        Command::Install(args) => run_install(&args),
        Command::Uninstall(args) => run_uninstall(&args),
        Command::Status(args) => run_status(&args),
        Command::Show(args) => run_show(&args),
        Command::Bench(args) => run_bench(&args),
        Command::Advise(args) => run_advise(&args),
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

fn run_install(args: &InstallArgs) -> Result<(), Error> {
    let options;
    let source = match &args.from {
        Some(_) if args.package != PackageArgs::default() => {
            return Err(Error::InvalidOption(
                "--from installs a generated folder as it is: leave out the package options".to_owned(),
            ));
        }
        Some(dir) => install::Source::Folder(dir),
        None => {
            options = PackageOptions::try_from(&args.package)?;
            install::Source::Options(&options)
        }
    };
    let script = install::setup_script(source)?;
    if args.dry_run {
        print!("{}", install::describe(&script)?);
        return Ok(());
    }
    let (mut conn, target) = database::connect(&args.connect.url)?;
    let statements = install::install(&mut conn, &script)?;
    eprintln!("installed: {statements} statements ran on {target}");
    Ok(())
}

fn run_uninstall(args: &UninstallArgs) -> Result<(), Error> {
    let options = PackageOptions::try_from(&args.package)?;
    let script = install::uninstall_script(&options, args.drop_data)?;
    if args.dry_run {
        print!("{}", install::describe(&script)?);
        return Ok(());
    }
    let (mut conn, target) = database::connect(&args.connect.url)?;
    let statements = script::run(&mut conn, &script)?;
    eprintln!("uninstalled: {statements} statements ran on {target}");
    Ok(())
}

fn run_status(args: &StatusArgs) -> Result<(), Error> {
    let options = PackageOptions::try_from(&args.package)?;
    let (mut conn, _) = database::connect(&args.connect.url)?;
    let status = status::status(&mut conn, &options)?;
    print!("{}", status.report());
    let outdated = status.outdated();
    if !outdated.is_empty() {
        return Err(Error::Outdated(outdated.into_iter().map(str::to_owned).collect()));
    }
    Ok(())
}

fn run_show(args: &ShowArgs) -> Result<(), Error> {
    options::check_identifier("--table", &args.table, &args.table)?;
    let (mut conn, _) = database::connect(&args.connect.url)?;
    let counters = status::counters(&mut conn, &args.table, &args.names)?;
    print!("{}", status::counters_report(&counters));
    let unknown: Vec<String> = args
        .names
        .iter()
        .filter(|name| !counters.iter().any(|counter| counter.name.to_lowercase() == name.to_lowercase()))
        .cloned()
        .collect();
    if !unknown.is_empty() {
        return Err(Error::UnknownCounters(unknown));
    }
    Ok(())
}

fn run_bench(args: &BenchArgs) -> Result<(), Error> {
    let plan = bench::Plan {
        clients: args.clients.clone(),
        slots: args.slots.clone(),
        hold_ms: args.hold_ms.clone(),
        budget: match args.duration {
            Some(seconds) => bench::Budget::Seconds(seconds),
            None => bench::Budget::Iterations(args.iterations),
        },
        variants: args.variant.clone(),
    }
    .validated()?;
    let report = bench::run(&args.connect.url, &plan)?;
    print!("{}", report.table());
    if let Some(path) = &args.json {
        report.write_json(path)?;
    }
    if let Some(path) = &args.plot {
        report.write_plot(path)?;
    }
    let inexact = report.inexact();
    if !inexact.is_empty() {
        return Err(Error::InexactTotals(inexact));
    }
    Ok(())
}

fn run_advise(args: &AdviseArgs) -> Result<(), Error> {
    let advice =
        advise::advise(&args.connect.url, args.clients, args.hold_ms, args.max_slots, args.duration)?;
    let best = advice.rounds[advice.best].increments_per_second;
    let rows: Vec<Vec<String>> = advice
        .rounds
        .iter()
        .map(|round| {
            vec![
                round.slots.unwrap_or_default().to_string(),
                format!("{:.0}", round.increments_per_second),
                format!("{:.0}", 100.0 * round.increments_per_second / best),
                format!("{:.2}", round.latency_ms.p99),
                round.row_lock_waits.map_or_else(|| "-".to_owned(), |waits| waits.to_string()),
            ]
        })
        .collect();
    print!("{}", table::format(&["slots", "incr/s", "% of best", "p99 ms", "lock waits"], &rows));
    let recommended = &advice.rounds[advice.recommended];
    println!(
        "recommended: {} slots for {} clients holding locks {} ms ({:.0} increments/s, within 10% of the best)",
        recommended.slots.unwrap_or_default(),
        args.clients,
        args.hold_ms,
        recommended.increments_per_second
    );
    let inexact: Vec<String> =
        advice.rounds.iter().filter(|round| !round.total_exact).map(|round| round.label.clone()).collect();
    if !inexact.is_empty() {
        return Err(Error::InexactTotals(inexact));
    }
    Ok(())
}
