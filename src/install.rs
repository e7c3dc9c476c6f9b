//! Puts the package into a live database and takes it out again, statement
//! by statement through the script runner, each result checked.

use std::fs;
use std::path::Path;

use mysql::prelude::Queryable;

use crate::error::Error;
use crate::render;
use crate::script;
use slotted_counters::PackageOptions;

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

/// The script that removes the routines and, with `drop_data`, the table
/// with every count in it.
pub fn uninstall_script(options: &PackageOptions, drop_data: bool) -> Result<String, Error> {
    let mut script = render::uninstall_sql(options)?;
    if drop_data {
        script.push_str(&format!("DROP TABLE IF EXISTS `{}`;\n", options.table()));
    }
    Ok(script)
}

/// Installs `script` on `conn` and returns how many statements ran.
///
/// The package's DDL is not transactional, and its reinstall drops each
/// routine before creating it again. So before anything runs, a throwaway
/// function is created and dropped: an account that may not create functions
/// (error 1419 with binary logging on and no SUPER) fails here, with the
/// installed package untouched, instead of losing `counter_get` halfway.
pub fn install(conn: &mut impl Queryable, script: &str) -> Result<usize, Error> {
    let statements = script::split(script)?;
    if statements.is_empty() {
        return Err(Error::Script { line: 1, problem: "the script has no statement".to_owned() });
    }
    let probe = format!("slotted_counters_probe_{}", std::process::id());
    conn.query_drop(format!("CREATE FUNCTION `{probe}`() RETURNS INT READS SQL DATA RETURN 1"))
        .map_err(|source| Error::FunctionPrivilege { source })?;
    conn.query_drop(format!("DROP FUNCTION `{probe}`")).map_err(Error::Query)?;
    script::run(conn, script)
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
