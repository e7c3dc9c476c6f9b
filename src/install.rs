//! Puts the package into a live database and takes it out again, statement
//! by statement through the script runner, each result checked.

use std::fs;
use std::path::Path;

use mysql::prelude::Queryable;

use crate::error::Error;
use crate::render;
use crate::script;
use crate::status;
use slotted_counters_core::package::{
    self, GROUP_MEMBERS_TABLE, INSTALLER_SQL_MODE_VARIABLE, PROBE_SUFFIX, Routine, errno,
};
use slotted_counters_core::{PackageOptions, PackageOptionsBuilder, refusals};

/// Where the package to install comes from.
#[derive(Debug, Clone, Copy)]
pub enum Source<'a> {
    /// Rendered now from these options.
    Options(&'a PackageOptions),
    /// An already generated folder: its `setup.sql` is installed as it is.
    Folder(&'a Path),
}

/// The install script of `source`.
pub fn setup_script(source: Source<'_>) -> Result<String, Error> {
    match source {
        Source::Options(options) => render::setup_sql(options),
        Source::Folder(dir) => {
            let path = dir.join(render::SETUP_SQL);
            fs::read_to_string(&path).map_err(|source| Error::Io { action: "read", path, source })
        }
    }
}

/// The options `package` gives, at the width of names the slots' table
/// holds when it exists and `--name-length` was not given: a re-install
/// keeps the width an earlier install made its tables at (a package for
/// longer names than they hold is refused by its probe).
pub fn options_held(
    conn: &mut impl Queryable,
    package: &PackageOptionsBuilder,
) -> Result<PackageOptions, Error> {
    let options = package.build()?;
    let held: Option<u32> =
        conn.exec_first(package::NAME_WIDTH_SQL, (options.table(),)).map_err(Error::Query)?;
    match held {
        Some(held) => Ok(package.clone().name_length_unless_given(held).build()?),
        None => Ok(options),
    }
}

/// The options of the package the database holds, as [`options_held`]
/// reads them, with the features its `counter_package()` names unless
/// `--features` was given: what `status` compares the database with, so
/// that a package installed with fewer features (the classic one) is
/// current, not missing the rest.
pub fn options_installed(
    conn: &mut impl Queryable,
    package: &PackageOptionsBuilder,
) -> Result<PackageOptions, Error> {
    let options = options_held(conn, package)?;
    let line: Option<String> =
        match conn.query_first(format!("SELECT `{}`()", Routine::Package.name(&options))) {
            Ok(line) => line.flatten(),
            // A package line the server does not give (no such function,
            // its definer gone, no EXECUTE) names no features: `status`
            // then reports what it finds. A lost connection is an error.
            Err(mysql::Error::MySqlError(_)) => None,
            Err(error) => return Err(Error::Query(error)),
        };
    match line.as_deref().and_then(package::features_in_line) {
        Some(features) => {
            Ok(package.clone().name_length(options.name_length()).features_unless_given(features).build()?)
        }
        None => Ok(options),
    }
}

/// The script that removes the routines and, with `drop_data`, the table
/// with every count in it.
pub fn uninstall_script(options: &PackageOptions, drop_data: bool) -> Result<String, Error> {
    let mut script = render::uninstall_sql(options)?;
    if drop_data {
        for table in package::tables(options) {
            script.push_str(&format!("DROP TABLE IF EXISTS `{table}`;\n"));
        }
    }
    Ok(script)
}

/// Of every table a package with `options`' names may have made, those the
/// database holds: what an uninstall without `--drop-data` leaves, with
/// every count in them.
pub fn tables_held(conn: &mut impl Queryable, options: &PackageOptions) -> Result<Vec<String>, Error> {
    let mut held = Vec::new();
    for table in package::tables(options) {
        if status::is_listed(conn, &table)? {
            held.push(table);
        }
    }
    Ok(held)
}

/// Installs `script` on `conn` and returns how many statements ran.
///
/// The package's DDL is not transactional, and its reinstall drops each
/// routine before creating it again. So before anything changes, a throwaway
/// function is created and dropped: an account that may not create functions
/// (error 1419 with binary logging on and no SUPER) fails there, with the
/// installed package untouched, instead of losing `counter_get` halfway.
/// `setup.sql` opens with that probe; a script that does not (one given with
/// `--from`) gets one here first. A Group Replication package's `setup.sql`
/// then reads the group's members, as its routines will.
pub fn install(conn: &mut impl Queryable, script: &str) -> Result<usize, Error> {
    let statements = script::split(script)?;
    if statements.is_empty() {
        return Err(Error::Script { line: 1, problem: "the script has no statement".to_owned() });
    }
    let members_check = statements
        .iter()
        .find(|statement| statement.text.starts_with("DO ") && statement.text.contains(GROUP_MEMBERS_TABLE))
        .map(|statement| statement.number);
    refuse_servers_without_routines(conn)?;
    refuse_spider_tables(conn, &statements)?;
    refuse_other_collations(conn, &statements)?;
    if opening_probe(&statements).is_none() {
        let probe = format!("slotted_counters_probe_{}", std::process::id());
        conn.query_drop(format!("CREATE FUNCTION `{probe}`() RETURNS INT READS SQL DATA RETURN 1"))
            .map_err(|source| Error::FunctionPrivilege { source })?;
        conn.query_drop(format!("DROP FUNCTION `{probe}`")).map_err(Error::Query)?;
    }
    run_after_probe(conn, &statements, &[]).map_err(|error| match error {
        Error::Statement { number, source, .. } if Some(number) == members_check => {
            Error::GroupMembers { table: GROUP_MEMBERS_TABLE, source }
        }
        other => other,
    })
}

/// An object a package with more features than this one made, which this
/// one lacks: `install --drop-features` drops it after the install, where
/// it is the package's and not another application's of the same name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LackedObject {
    /// A routine: the package's when its COMMENT opens with the package's
    /// mark and it is of this kind.
    Routine { kind: &'static str, name: String },
    /// A trigger: the package's on this table.
    Trigger { name: String, table: String },
    /// The view of rooms: the package's with a column `room`.
    View { name: String },
}

impl LackedObject {
    pub fn name(&self) -> &str {
        match self {
            LackedObject::Routine { name, .. }
            | LackedObject::Trigger { name, .. }
            | LackedObject::View { name } => name,
        }
    }

    /// The statement that drops it, once it was found to be the package's.
    pub fn drop_statement(&self) -> String {
        let kind = match self {
            LackedObject::Routine { kind, .. } => kind,
            LackedObject::Trigger { .. } => "TRIGGER",
            LackedObject::View { .. } => "VIEW",
        };
        format!("DROP {kind} IF EXISTS `{}`", self.name())
    }

    /// Whether the database `conn` is on holds it as the package's.
    fn is_the_packages(&self, conn: &mut impl Queryable) -> Result<bool, Error> {
        let found: Option<u32> = match self {
            LackedObject::Routine { kind, name } => conn.exec_first(
                "SELECT COUNT(*) FROM information_schema.ROUTINES \
                 WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_NAME = ? AND ROUTINE_COMMENT LIKE CONCAT(?, '%') \
                   AND ROUTINE_TYPE = ?",
                (name, package::ROUTINE_MARK, kind),
            ),
            LackedObject::Trigger { name, table } => conn.exec_first(
                "SELECT COUNT(*) FROM information_schema.TRIGGERS \
                 WHERE TRIGGER_SCHEMA = DATABASE() AND TRIGGER_NAME = ? AND EVENT_OBJECT_TABLE = ?",
                (name, table),
            ),
            LackedObject::View { name } => conn.exec_first(
                "SELECT COUNT(*) FROM information_schema.COLUMNS JOIN information_schema.VIEWS \
                 USING (TABLE_SCHEMA, TABLE_NAME) \
                 WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND COLUMN_NAME = 'room'",
                (name,),
            ),
        }
        .map_err(Error::Query)?;
        Ok(found.unwrap_or(0) > 0)
    }
}

/// The routines, triggers and views of the features `options` lacks. The
/// package's `setup.sql` names none of them: it learns what the database
/// holds from the installed `counter_package()`.
pub fn lacked_objects(options: &PackageOptions) -> Vec<LackedObject> {
    let routines = package::lacked_features(options).into_iter().flat_map(|lacked| lacked.routines);
    let routines =
        routines.map(|routine| LackedObject::Routine { kind: routine.kind(), name: routine.name(options) });
    let kept = package::triggers_in_package(options);
    let triggers = package::triggers_with_tables(options)
        .into_iter()
        .filter(|(trigger, _)| !kept.contains(trigger))
        .map(|(name, table)| LackedObject::Trigger { name, table });
    let rooms = package::rooms_view(options);
    let views =
        (!package::views_in_package(options).contains(&rooms)).then_some(LackedObject::View { name: rooms });
    routines.chain(triggers).chain(views).collect()
}

/// Drops each of [`lacked_objects`] the database holds as the package's
/// (another application's object of such a name stays), and returns the
/// statements that ran. Run after an install with fewer features, once its
/// probe let it go on.
pub fn drop_lacked_objects(
    conn: &mut impl Queryable,
    options: &PackageOptions,
) -> Result<Vec<String>, Error> {
    let mut dropped = Vec::new();
    for object in lacked_objects(options) {
        if object.is_the_packages(conn)? {
            let statement = object.drop_statement();
            conn.query_drop(&statement)
                .map_err(|source| Error::OwnStatement { statement: statement.clone(), source })?;
            dropped.push(statement);
        }
    }
    Ok(dropped)
}

/// Takes the package out of the database `conn` is on with `script`
/// (`uninstall.sql`, perhaps with the tables' drops), once its probe found
/// every object of the package's names the package's, and revokes first
/// every privilege granted on its routines and view (`revokes`): the
/// servers keep grants on a dropped view, and MariaDB on a dropped
/// routine. Returns how many statements ran.
pub fn uninstall(conn: &mut impl Queryable, script: &str, revokes: &[String]) -> Result<usize, Error> {
    run_after_probe(conn, &script::split(script)?, revokes)
}

/// Runs `statements`, with `then` after the package's probe when they open
/// with it (first else): a refusal of the probe's is
/// [`Error::InstallRefused`], with the function it leaves dropped, so that
/// nothing changed; an account that may not create it is
/// [`Error::FunctionPrivilege`].
fn run_after_probe(
    conn: &mut impl Queryable,
    statements: &[script::Statement],
    then: &[String],
) -> Result<usize, Error> {
    let probe = opening_probe(statements);
    // The statements up to the probe's drop, which the 1-based numbers count.
    let (checks, rest) = statements.split_at(probe.map_or(0, |probe| probe.dropped));
    match script::run_statements(conn, checks) {
        Err(Error::Statement { number, source, .. }) if Some(number) == probe.map(|probe| probe.created) => {
            give_back_sql_mode(conn, probe)?;
            return Err(Error::FunctionPrivilege { source });
        }
        Err(Error::Statement { number, source: mysql::Error::MySqlError(refusal), .. })
            if Some(number) == probe.map(|probe| probe.called) && refusal.code == errno::INSTALL_REFUSED =>
        {
            let drop_probe = checks.last().expect("the checks end with the probe's drop");
            conn.query_drop(&drop_probe.text).map_err(Error::Query)?;
            give_back_sql_mode(conn, probe)?;
            return Err(if refusal.message.starts_with(refusals::LACKS_INSTALLED) {
                Error::FeaturesInstalled { message: refusal.message }
            } else if refusal.message.starts_with(refusals::UNINSTALL_LACKS_INSTALLED) {
                Error::FeaturesLeft { message: refusal.message }
            } else if refusal.message.starts_with(refusals::SERVER_UNSUPPORTED) {
                Error::ServerUnsupported { message: refusal.message }
            } else {
                Error::InstallRefused { message: refusal.message }
            });
        }
        ran => ran?,
    };
    for statement in then {
        conn.query_drop(statement)
            .map_err(|source| Error::OwnStatement { statement: statement.clone(), source })?;
    }
    Ok(checks.len() + then.len() + script::run_statements(conn, rest)?)
}

/// Refuses a server that runs no stored routine, as its version names it:
/// TiDB (`8.0.11-TiDB-v8.5.6`) and Vitess's vtgate (`8.4.6-Vitess`), which
/// PlanetScale runs, refuse `CREATE FUNCTION` as a syntax error.
fn refuse_servers_without_routines(conn: &mut impl Queryable) -> Result<(), Error> {
    let version: String = conn.query_first("SELECT VERSION()").map_err(Error::Query)?.unwrap_or_default();
    let lowercase = version.to_ascii_lowercase();
    match ["TiDB", "Vitess", "PlanetScale"]
        .into_iter()
        .find(|engine| lowercase.contains(&engine.to_ascii_lowercase()))
    {
        Some(engine) => Err(Error::Environment(format!(
            "the server is {engine} ({version}), which runs no stored routine: nothing was installed. Count \
             through the client's plain mode (`plain_sql()`, docs/plain-sql.md) on the tables of \
             plain_tables.sql"
        ))),
        None => Ok(()),
    }
}

/// Refuses to install routines over a table the script creates that is a
/// Spider table already: through a Spider head (MariaDB 10.11's), a
/// routine's locking read of `SUM` over one primary key answers 0, and the
/// routines' changes build on such reads (`counter_resize`'s shrink lost the
/// counts of the slots it removed). The plain mode, whose changes read no
/// such sum in a routine, serves such a table.
fn refuse_spider_tables(conn: &mut impl Queryable, statements: &[script::Statement]) -> Result<(), Error> {
    for (table, _) in created_tables(statements) {
        let engine: Option<String> = conn
            .exec_first(
                "SELECT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?",
                (table,),
            )
            .map_err(Error::Query)?;
        if engine.is_some_and(|engine| engine.eq_ignore_ascii_case("SPIDER")) {
            return Err(Error::Environment(format!(
                "`{table}` is a Spider table: through a Spider head the routines misread their counts (the \
                 head sums one slot as 0 inside a routine); nothing was installed. Count through the client's plain mode \
                 (`plain_sql()`, docs/plain-sql.md), which needs no routine"
            )));
        }
    }
    Ok(())
}

/// Refuses to install routines that compare names in one collation over a
/// table the script creates that holds them in another already (a table
/// made by an earlier version, whose default was `utf8mb4_unicode_ci`):
/// the servers compare a `_bin` name with another collation's in the
/// binary one, so the routines would tell apart names the table's key
/// folds (a setup failing with 1062), and a plain client would check names
/// by the wrong rule. Nothing is installed.
fn refuse_other_collations(conn: &mut impl Queryable, statements: &[script::Statement]) -> Result<(), Error> {
    for (table, statement) in created_tables(statements) {
        let Some(package) =
            statement.text.split("COLLATE=").nth(1).and_then(|rest| rest.split([';', ' ', '\n']).next())
        else {
            continue;
        };
        let installed = status::names_collation(conn, table)?;
        if let Some(installed) = installed.filter(|installed| !installed.eq_ignore_ascii_case(package)) {
            return Err(Error::OtherCollation {
                table: table.to_owned(),
                installed,
                package: package.to_owned(),
            });
        }
    }
    Ok(())
}

/// The tables the script creates, each with the statement that does.
fn created_tables(statements: &[script::Statement]) -> impl Iterator<Item = (&str, &script::Statement)> {
    statements.iter().filter_map(|statement| {
        let table = statement.text.strip_prefix("CREATE TABLE IF NOT EXISTS `")?.split_once('`')?.0;
        Some((table, statement))
    })
}

/// Gives the session its own `sql_mode` back after the probe refused, where
/// the script pinned it before the probe, as the script's end would have.
fn give_back_sql_mode(conn: &mut impl Queryable, probe: Option<Probe>) -> Result<(), Error> {
    if probe.is_some_and(|probe| probe.pins_sql_mode) {
        conn.query_drop(format!("SET SESSION sql_mode = {INSTALLER_SQL_MODE_VARIABLE}"))
            .map_err(Error::Query)?;
    }
    Ok(())
}

/// The numbers of the statements of the package's probe function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Probe {
    /// The one that creates it: an account that may not create functions
    /// fails there.
    created: usize,
    /// The one that calls it: a refusal to install fails there.
    called: usize,
    /// The one that drops it.
    dropped: usize,
    /// Whether the script pins the session's `sql_mode` before it (the
    /// package's `setup.sql`), which a refusal gives back.
    pins_sql_mode: bool,
}

/// The package's probe function, when the script opens with it: nothing
/// but the probe's own statements, and the pin of the session's
/// `sql_mode` that makes the probe parse in any session, comes before its
/// call.
fn opening_probe(statements: &[script::Statement]) -> Option<Probe> {
    let probe_name = format!("{PROBE_SUFFIX}`");
    let position = |prefix: &str| {
        statements.iter().position(|statement| {
            statement.text.starts_with(prefix) && statement.first_line().contains(&probe_name)
        })
    };
    let (created, called, dropped) =
        (position("CREATE FUNCTION")?, position("SET @")?, position("DROP FUNCTION `")?);
    let pin = format!("SET {INSTALLER_SQL_MODE_VARIABLE} ");
    let pins = |statement: &script::Statement| statement.text.starts_with(&pin);
    let opens = statements[..called]
        .iter()
        .all(|statement| statement.first_line().contains(&probe_name) || pins(statement));
    (opens && created < called && called < dropped).then(|| Probe {
        created: statements[created].number,
        called: statements[called].number,
        dropped: statements[dropped].number,
        pins_sql_mode: statements[..created].iter().any(pins),
    })
}

/// What `script` would run, statement by statement, for `--dry-run`.
pub fn describe(script: &str) -> Result<String, Error> {
    let mut listing = String::new();
    for statement in script::split(script)? {
        listing.push_str(&format!(
            "-- statement {} (line {})\n{};\n\n",
            statement.number, statement.line, statement.text
        ));
    }
    Ok(listing)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_script_that_opens_with_the_probe_skips_the_tools_own() {
        let probe_at = |script: &str| opening_probe(&script::split(script).unwrap());
        let setup_sql = render::setup_sql(&PackageOptions::default()).unwrap();
        assert_eq!(
            probe_at(&setup_sql),
            Some(Probe { created: 3, called: 4, dropped: 5, pins_sql_mode: true }),
            "setup.sql pins the sql_mode, drops a stale probe, creates it, calls it and drops it"
        );
        let uninstall_sql = render::uninstall_sql(&PackageOptions::default()).unwrap();
        assert_eq!(
            probe_at(&uninstall_sql),
            Some(Probe { created: 2, called: 3, dropped: 4, pins_sql_mode: false }),
            "uninstall.sql creates no routine to keep, and leaves the session's sql_mode alone"
        );
        assert_eq!(probe_at("CREATE TABLE t (x INT);"), None, "no probe");
        assert_eq!(
            probe_at(
                "DROP PROCEDURE IF EXISTS `counter_add`;\n\
                 CREATE FUNCTION `counter_install_probe`() RETURNS INT NO SQL RETURN 1;\n\
                 SET @slotted_counters_probe = `counter_install_probe`();\n\
                 DROP FUNCTION `counter_install_probe`;"
            ),
            None,
            "a probe after a DROP protects nothing"
        );
    }
}
