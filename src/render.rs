//! Renders the package's SQL files from the askama templates in `templates/`.
//!
//! Everything a template places is computed from validated
//! [`PackageOptions`], in `render/context.rs`; the templates themselves stay
//! SQL-shaped. Here: which template makes which file.

mod comments;
mod context;
mod routines;

use askama::Template;
use slotted_counters_core::PackageOptions;
use slotted_counters_core::names;
use slotted_counters_core::package::{self, Routine};
use slotted_counters_core::plain::{self, PlainSql};
use slotted_counters_core::refusals;

use crate::error::Error;
use context::Context;

/// One file of the rendered package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeneratedFile {
    /// File name inside the output folder, such as `setup.sql`.
    pub name: &'static str,
    /// The file's full text.
    pub contents: String,
}

/// The self-contained install script.
pub const SETUP_SQL: &str = "setup.sql";
/// The script that drops the routines.
pub const UNINSTALL_SQL: &str = "uninstall.sql";

/// The table alone, for the client's plain mode.
pub const PLAIN_TABLES_SQL: &str = "plain_tables.sql";

/// Renders every file of the package, in a fixed order: the routines'
/// files, then, for a package the plain mode can serve, its table, its
/// statements and a Vitess VSchema.
pub fn render(options: &PackageOptions) -> Result<Vec<GeneratedFile>, Error> {
    let p = Context::new(options);
    let routines = routines(&p)?;
    let mut files = vec![
        file("create_tables.sql", CreateTables { p: &p }.render())?,
        file("create_procedures.sql", CreateProcedures { p: &p, routines: &routines }.render())?,
        file(SETUP_SQL, Setup { p: &p, routines: &routines }.render())?,
        file(UNINSTALL_SQL, Uninstall { p: &p }.render())?,
    ];
    if let Ok(plain) = PlainSql::new(options) {
        let statements = plain
            .reference()
            .into_iter()
            .map(|(name, statement)| ReferenceEntry {
                name,
                purpose: statement.purpose,
                params: statement.params.join(", "),
                sql: statement.sql,
            })
            .collect();
        files.extend([
            file(PLAIN_TABLES_SQL, PlainTables { p: &p }.render())?,
            file(
                "plain_statements.sql",
                PlainStatements {
                    p: &p,
                    statements,
                    slot_count_lifetime: plain::SLOT_COUNT_LIFETIME.as_secs(),
                    ignored: code_points(names::ignored_by(options.collation())),
                    folded: names::folded_by(options.collation()),
                    spaces: code_points(names::spaces_in(options.collation())),
                }
                .render(),
            )?,
            GeneratedFile { name: "vschema.json", contents: vschema(options) },
        ]);
    }
    Ok(files)
}

/// Renders `plain_tables.sql` alone; `None` for a package the plain mode
/// cannot serve.
pub fn plain_tables_sql(options: &PackageOptions) -> Result<Option<String>, Error> {
    if PlainSql::new(options).is_err() {
        return Ok(None);
    }
    Ok(Some(file(PLAIN_TABLES_SQL, PlainTables { p: &Context::new(options) }.render())?.contents))
}

/// A Vitess VSchema for a sharded keyspace that holds the table and its
/// write ids: both with their primary vindex on the name, so that every
/// slot of a counter, and the id of every write to it, is on the shard of
/// its name.
fn vschema(options: &PackageOptions) -> String {
    let vschema = serde_json::json!({
        "sharded": true,
        "vindexes": { "counter_name": { "type": plain::name_vindex(options) } },
        "tables": {
            options.table(): {
                "column_vindexes": [{ "column": "counter_name", "name": "counter_name" }]
            },
            package::writes_table(options): {
                "column_vindexes": [{ "column": "counter_name", "name": "counter_name" }]
            },
            package::periods_table(options): {
                "column_vindexes": [{ "column": "counter_name", "name": "counter_name" }]
            },
            package::buckets_table(options): {
                "column_vindexes": [{ "column": "counter_name", "name": "counter_name" }]
            }
        }
    });
    format!("{}\n", serde_json::to_string_pretty(&vschema).expect("a JSON value writes"))
}

/// Renders `setup.sql` alone.
pub fn setup_sql(options: &PackageOptions) -> Result<String, Error> {
    let p = Context::new(options);
    let routines = routines(&p)?;
    Ok(file(SETUP_SQL, Setup { p: &p, routines: &routines }.render())?.contents)
}

/// The routines and triggers, as `setup.sql` and `create_procedures.sql`
/// both place them: rendered once, each routine by its own template, so
/// that each is compiled once and in a function of its own
/// (`render/routines.rs`).
fn routines(p: &Context) -> Result<String, Error> {
    let failed = |source| Error::Render { file: "_routines.sql", source };
    let bodies = p
        .routines
        .iter()
        .map(|routine| Ok((routine, routines::routine(p, routine.routine).map_err(failed)?)))
        .collect::<Result<Vec<_>, Error>>()?;
    let triggers = routines::triggers(p).map_err(failed)?;
    Routines { p, bodies, triggers }.render().map_err(failed)
}

/// Renders `uninstall.sql` alone.
pub fn uninstall_sql(options: &PackageOptions) -> Result<String, Error> {
    Ok(file(UNINSTALL_SQL, Uninstall { p: &Context::new(options) }.render())?.contents)
}

/// Names a rendered file and seals its routines' COMMENTs
/// ([`comments::seal`]); askama drops a template's trailing newlines, so
/// every file gets exactly one back here.
fn file(name: &'static str, rendered: askama::Result<String>) -> Result<GeneratedFile, Error> {
    let rendered = rendered.map_err(|source| Error::Render { file: name, source })?;
    Ok(GeneratedFile { name, contents: format!("{}\n", comments::seal(rendered.trim_end())) })
}

#[derive(Template)]
#[template(path = "create_tables.sql", escape = "none")]
struct CreateTables<'a> {
    p: &'a Context,
}

#[derive(Template)]
#[template(path = "_routines.sql", escape = "none")]
struct Routines<'a> {
    p: &'a Context,
    /// Each routine, with the statements that create it.
    bodies: Vec<(&'a context::RoutineRef, String)>,
    triggers: String,
}

#[derive(Template)]
#[template(path = "create_procedures.sql", escape = "none")]
struct CreateProcedures<'a> {
    p: &'a Context,
    routines: &'a str,
}

#[derive(Template)]
#[template(path = "setup.sql", escape = "none")]
struct Setup<'a> {
    p: &'a Context,
    routines: &'a str,
}

#[derive(Template)]
#[template(path = "uninstall.sql", escape = "none")]
struct Uninstall<'a> {
    p: &'a Context,
}

/// One statement of `plain_statements.sql`.
struct ReferenceEntry {
    name: &'static str,
    purpose: &'static str,
    params: String,
    sql: String,
}

#[derive(Template)]
#[template(path = "plain_tables.sql", escape = "none")]
struct PlainTables<'a> {
    p: &'a Context,
}

#[derive(Template)]
#[template(path = "plain_statements.sql", escape = "none")]
struct PlainStatements<'a> {
    p: &'a Context,
    statements: Vec<ReferenceEntry>,
    /// How long the Rust client keeps a slot count, in seconds.
    slot_count_lifetime: u64,
    /// The code points the collation ignores, as the header lists them;
    /// `None` where the client does not know them.
    ignored: Option<String>,
    /// The code points other than U+0020 the collation takes for a space.
    spaces: Option<String>,
    /// What the collation folds together; `None` for a binary one.
    folded: Option<&'static str>,
}

/// `ranges` as a reader writes code points (`U+0300-U+0357, U+200B`),
/// `none` for no range, in lines that fit the header's comments.
fn code_points(ranges: Option<&[(u32, u32)]>) -> Option<String> {
    let ranges = ranges?;
    if ranges.is_empty() {
        return Some("none".to_owned());
    }
    let mut lines = vec![String::new()];
    for &(first, last) in ranges {
        let range =
            if first == last { format!("U+{first:04X}") } else { format!("U+{first:04X}-U+{last:04X}") };
        let line = lines.last_mut().expect("one line at least");
        if line.len() + range.len() > 72 {
            lines.push(range);
        } else {
            if !line.is_empty() {
                line.push_str(", ");
            }
            line.push_str(&range);
        }
    }
    Some(lines.join(",\n-- "))
}

#[cfg(test)]
mod tests;
