//! Reads what a database holds: whether the installed package is this
//! version's and works, and the counters themselves. Presentation is the
//! caller's.
//!
//! Existing is not working: a routine whose DEFINER account was dropped
//! fails every call (1449), so each current routine is called once,
//! harmlessly, with NULL arguments, and the view is read. And absent from
//! `information_schema` is not missing: an account sees there only what it
//! has a privilege on, so what it cannot see is reported as such.

use mysql::prelude::Queryable;

use crate::error::Error;
use crate::{render, script};
use slotted_counters_core::package::{self, Routine, errno, server_errno};
use slotted_counters_core::{Feature, PackageOptions};

/// How one object of the package stands in the database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    /// A routine installed by this version with these options, that runs.
    Current,
    /// A table or the view is there and can be read; or a trigger this
    /// version creates is there.
    Present,
    /// Installed, but by another version or with other options.
    Stale { installed: String },
    /// A table that holds counter names in another collation than the
    /// package's.
    OtherCollation { installed: String },
    /// Not installed.
    Missing,
    /// This account cannot tell whether it exists: it lacks `privilege` on it.
    NotVisible { privilege: &'static str },
    /// Installed, but using it fails with the server's `problem`, such as a
    /// DEFINER that no longer exists.
    Broken { problem: String },
}

/// One routine, the view or the table, and how it stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectStatus {
    pub name: String,
    /// `PROCEDURE`, `FUNCTION`, `VIEW`, `TABLE` or `TRIGGER`.
    pub kind: &'static str,
    pub state: State,
}

/// What `status` found: every routine of the package, the view, the
/// tables (counters, write ids, changes, periods, buckets), then the
/// triggers; and which features the database holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub objects: Vec<ObjectStatus>,
    /// The features whose routines the database holds, whatever `options`
    /// asked.
    pub features: Vec<Feature>,
    /// What `counter_package()` answered, when it could be called.
    pub package_line: Option<String>,
}

impl Status {
    /// The objects that need installing: missing or stale.
    pub fn outdated(&self) -> Vec<&ObjectStatus> {
        self.filter(|state| matches!(state, State::Missing | State::Stale { .. }))
    }

    /// The objects that are there but fail when used.
    pub fn broken(&self) -> Vec<&ObjectStatus> {
        self.filter(|state| matches!(state, State::Broken { .. }))
    }

    /// The objects this account could not check.
    pub fn not_visible(&self) -> Vec<&ObjectStatus> {
        self.filter(|state| matches!(state, State::NotVisible { .. }))
    }

    fn filter(&self, keep: impl Fn(&State) -> bool) -> Vec<&ObjectStatus> {
        self.objects.iter().filter(|object| keep(&object.state)).collect()
    }
}

/// What using an object, harmlessly, showed.
enum Probe {
    Works,
    Missing,
    Denied,
    Fails(String),
}

/// Runs `sql`, which uses one object and changes nothing, and says how it went.
/// A package error (unknown counter, invalid argument) means the routine ran.
fn probe(conn: &mut impl Queryable, sql: &str) -> Result<Probe, Error> {
    // Rows are read, not dropped: a function's error arrives in place of its row.
    match conn.query::<mysql::Row, _>(sql) {
        Ok(_) => Ok(Probe::Works),
        Err(mysql::Error::MySqlError(error)) => Ok(match error.code {
            errno::UNKNOWN_COUNTER
            | errno::ALREADY_EXISTS
            | errno::INVALID_ARGUMENT
            | server_errno::READ_ONLY_TRANSACTION => Probe::Works,
            server_errno::NO_SUCH_ROUTINE | server_errno::NO_SUCH_TABLE => Probe::Missing,
            server_errno::ROUTINE_ACCESS_DENIED
            | server_errno::TABLE_ACCESS_DENIED
            | server_errno::COLUMN_ACCESS_DENIED => Probe::Denied,
            _ => Probe::Fails(error.message),
        }),
        Err(other) => Err(Error::Query(other)),
    }
}

/// Runs `call` of `routine`, which changes nothing, and says how it went.
fn probe_routine(conn: &mut impl Queryable, routine: Routine, call: &str) -> Result<Probe, Error> {
    if routine != Routine::ExpirePeriods {
        return probe(conn, call);
    }
    conn.query_drop("START TRANSACTION READ ONLY").map_err(Error::Query)?;
    let probed = probe(conn, call);
    conn.query_drop("ROLLBACK").map_err(Error::Query)?;
    probed
}

/// A call of `routine` that changes nothing: NULL for every argument, which
/// every routine refuses (or, for a function, answers NULL) before it
/// touches a row; the batches' plan takes its OUT parameters in user
/// variables. `counter_expire_periods` takes none: [`probe_routine`] runs it
/// in a read-only transaction, where its first DELETE fails.
fn harmless_call(options: &PackageOptions, routine: Routine) -> String {
    let arguments = match routine {
        Routine::PlanBatch => "NULL, @slotted_counters_entries, @slotted_counters_plan".to_owned(),
        _ => vec!["NULL"; routine.arity()].join(", "),
    };
    let name = routine.name(options);
    if routine.is_function() {
        format!("SELECT `{name}`({arguments})")
    } else {
        format!("CALL `{name}`({arguments})")
    }
}

/// Compares the package in the connection's database with the one
/// `options` describe, as this version renders it, and checks that it works.
pub fn status(conn: &mut impl Queryable, options: &PackageOptions) -> Result<Status, Error> {
    let installed: Vec<(String, String, String)> = conn
        .exec(
            "SELECT ROUTINE_NAME, ROUTINE_COMMENT, SQL_MODE FROM information_schema.ROUTINES \
             WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_NAME LIKE CONCAT(?, '%')",
            (options.prefix(),),
        )
        .map_err(Error::Query)?;
    let rendered = script::split(&render::setup_sql(options)?)?;
    let mut objects = Vec::new();
    for routine in Routine::in_package(options) {
        let name = routine.name(options);
        let call = harmless_call(options, routine);
        let expected = rendered_comment(&rendered, routine.kind(), &name);
        let state = match installed.iter().find(|(installed, ..)| installed.eq_ignore_ascii_case(&name)) {
            Some((_, comment, _)) if Some(comment.as_str()) != expected => {
                State::Stale { installed: comment.clone() }
            }
            Some((_, _, mode)) if mode != package::ROUTINE_SQL_MODE => other_sql_mode(mode),
            Some(_) => match probe_routine(conn, routine, &call)? {
                Probe::Fails(problem) => State::Broken { problem },
                _ => State::Current,
            },
            None => unseen(probe_routine(conn, routine, &call)?, "EXECUTE"),
        };
        objects.push(ObjectStatus { name, kind: routine.kind(), state });
    }
    let views_and_tables = package::views_in_package(options)
        .into_iter()
        .map(|view| (view, "VIEW"))
        .chain(package::tables_in_package(options).into_iter().map(|table| (table, "TABLE")));
    for (name, kind) in views_and_tables {
        let listed = is_listed(conn, &name)?;
        let read = probe(conn, &format!("SELECT 1 FROM `{name}` LIMIT 0"))?;
        // A table compares names in its own collation, which the routines'
        // must match (see install's refusal).
        let collation = match kind {
            "TABLE" => names_collation(conn, &name)?,
            _ => None,
        };
        let state = match (read, collation) {
            (_, Some(collation)) if !collation.eq_ignore_ascii_case(options.collation()) => {
                State::OtherCollation { installed: collation }
            }
            (Probe::Fails(problem), _) => State::Broken { problem },
            (Probe::Works, _) => State::Present,
            _ if listed => State::Present,
            (unseen_read, _) => unseen(unseen_read, "SELECT"),
        };
        objects.push(ObjectStatus { name, kind, state });
    }
    for (name, body) in rendered_triggers(&rendered, options)? {
        let installed: Option<(String, String)> = conn
            .exec_first(
                "SELECT ACTION_STATEMENT, SQL_MODE FROM information_schema.TRIGGERS \
                 WHERE TRIGGER_SCHEMA = DATABASE() AND TRIGGER_NAME = ?",
                (&name,),
            )
            .map_err(Error::Query)?;
        let state = match installed {
            Some((installed, _)) if normalized(&installed)? != body => {
                State::Stale { installed: "another version's body".to_owned() }
            }
            Some((_, mode)) if mode != package::ROUTINE_SQL_MODE => other_sql_mode(&mode),
            Some(_) => State::Present,
            None => unseen_trigger(conn, &name)?,
        };
        objects.push(ObjectStatus { name, kind: "TRIGGER", state });
    }
    let features = installed_features(options, &installed);
    let package_line =
        conn.query_first(format!("SELECT `{}`()", Routine::Package.name(options))).ok().flatten();
    Ok(Status { objects, features, package_line })
}

/// The features the database holds: a feature is there when a routine
/// that needs it alone is, whichever options installed it (`installed`
/// lists the routines of the prefix).
fn installed_features(options: &PackageOptions, installed: &[(String, String, String)]) -> Vec<Feature> {
    Feature::ALL
        .into_iter()
        .filter(|&feature| {
            Routine::ALL.into_iter().filter(|routine| routine.needs() == [feature].into_iter().collect()).any(
                |routine| {
                    let name = routine.name(options);
                    installed.iter().any(|(installed, ..)| installed.eq_ignore_ascii_case(&name))
                },
            )
        })
        .collect()
}

/// A routine or trigger of the package's body created in another
/// `sql_mode` than the one the package pins (a DBA's own `CREATE`, say):
/// it runs differently, and `install` creates it again.
fn other_sql_mode(mode: &str) -> State {
    State::Stale { installed: format!("created in sql_mode '{mode}', not '{}'", package::ROUTINE_SQL_MODE) }
}

/// Whether the database lists a table or view named `name`, which this
/// account may see even where it may not read it.
pub fn is_listed(conn: &mut impl Queryable, name: &str) -> Result<bool, Error> {
    let listed: Option<u32> = conn
        .exec_first(
            "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?",
            (name,),
        )
        .map_err(Error::Query)?;
    Ok(listed.unwrap_or(0) > 0)
}

/// The collation `table` holds counter names in; `None` when it has no
/// `counter_name` column this account can see (or does not exist).
pub fn names_collation(conn: &mut impl Queryable, table: &str) -> Result<Option<String>, Error> {
    conn.exec_first(
        "SELECT COLLATION_NAME FROM information_schema.COLUMNS \
         WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND COLUMN_NAME = 'counter_name'",
        (table,),
    )
    .map_err(Error::Query)
}

/// The COMMENT `setup.sql` (split into `statements`) gives routine `name`
/// of `kind`: the mark and the digest of its CREATE statement.
fn rendered_comment<'a>(statements: &'a [script::Statement], kind: &str, name: &str) -> Option<&'a str> {
    let created = format!("{kind} `{name}`(");
    statements
        .iter()
        .filter(|statement| statement.text.starts_with("CREATE") && statement.first_line().contains(&created))
        .find_map(|statement| statement.text.split_once("COMMENT '"))
        .and_then(|(_, rest)| rest.split_once('\''))
        .map(|(comment, _)| comment)
}

/// Each trigger `setup.sql` (split into `statements`) creates for
/// `options`, with its body as [`normalized`] gives it.
fn rendered_triggers(
    statements: &[script::Statement],
    options: &PackageOptions,
) -> Result<Vec<(String, String)>, Error> {
    package::triggers_in_package(options)
        .into_iter()
        .map(|name| {
            let created = format!("TRIGGER `{name}` ");
            let body = statements
                .iter()
                .filter(|statement| {
                    statement.text.starts_with("CREATE") && statement.first_line().contains(&created)
                })
                .find_map(|statement| statement.text.split_once("FOR EACH ROW"))
                .map(|(_, body)| body)
                .expect("setup.sql creates every trigger of the package");
            Ok((name, normalized(body)?))
        })
        .collect()
}

/// A trigger's body with its comments left out and its whitespace made
/// single spaces: the server keeps the body as it was sent, without
/// comments by this installer, perhaps with them by a `mysql` client.
fn normalized(body: &str) -> Result<String, Error> {
    let statements = script::split(body)?;
    Ok(statements
        .iter()
        .flat_map(|statement| statement.text.split_whitespace())
        .collect::<Vec<_>>()
        .join(" "))
}

/// The state of a trigger `information_schema` did not list: it lists only
/// the triggers of tables the account holds TRIGGER on, and `SHOW CREATE
/// TRIGGER` tells a missing trigger (1360) from one it may not see.
fn unseen_trigger(conn: &mut impl Queryable, name: &str) -> Result<State, Error> {
    match conn.query_drop(format!("SHOW CREATE TRIGGER `{name}`")) {
        Ok(()) => Ok(State::Present),
        Err(mysql::Error::MySqlError(error)) if error.code == server_errno::NO_SUCH_TRIGGER => {
            Ok(State::Missing)
        }
        Err(mysql::Error::MySqlError(error))
            if [server_errno::TABLE_ACCESS_DENIED, server_errno::SPECIFIC_ACCESS_DENIED]
                .contains(&error.code) =>
        {
            Ok(State::NotVisible { privilege: "TRIGGER" })
        }
        Err(mysql::Error::MySqlError(error)) => Ok(State::Broken { problem: error.message }),
        Err(other) => Err(Error::Query(other)),
    }
}

/// The state of an object `information_schema` did not list, from a probe.
/// A server denies an account the use of an object it has no privilege on
/// whether or not the object exists; and an object the account may use is
/// listed, so a probe that works here means a listing that lagged.
fn unseen(probe: Probe, privilege: &'static str) -> State {
    match probe {
        Probe::Denied => State::NotVisible { privilege },
        Probe::Fails(problem) => State::Broken { problem },
        Probe::Missing | Probe::Works => State::Missing,
    }
}

/// The names among `names` that no counter of `table` has, compared in the
/// table's collation (by the server: a `_ci` table finds `PAGE` as `page`).
pub fn unknown(conn: &mut impl Queryable, table: &str, names: &[String]) -> Result<Vec<String>, Error> {
    PackageOptions::builder().table(table).build()?;
    let mut unknown = Vec::new();
    for name in names {
        let found: Option<u32> = conn
            .exec_first(format!("SELECT COUNT(*) FROM `{table}` WHERE counter_name = ?"), (name,))
            .map_err(Error::Query)?;
        if found.unwrap_or(0) == 0 {
            unknown.push(name.clone());
        }
    }
    Ok(unknown)
}

/// One counter as `show` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CounterSummary {
    pub name: String,
    pub slots: u32,
    pub total: i64,
    pub start_date: String,
    pub description: Option<String>,
}

/// Every counter in `table`, or only those `names` asks for, by name.
/// `table` must be a plain identifier, as `--table` takes it.
pub fn counters(
    conn: &mut impl Queryable,
    table: &str,
    names: &[String],
) -> Result<Vec<CounterSummary>, Error> {
    PackageOptions::builder().table(table).build()?;
    let filter = if names.is_empty() {
        String::new()
    } else {
        format!("WHERE counter_name IN ({})", vec!["?"; names.len()].join(", "))
    };
    let sql = format!(
        "SELECT counter_name, COUNT(*), CAST(SUM(counter) AS SIGNED), CAST(MIN(start_date) AS CHAR), \
         MAX(description) FROM `{table}` {filter} GROUP BY counter_name ORDER BY counter_name"
    );
    conn.exec_map(sql, names.to_vec(), |(name, slots, total, start_date, description)| CounterSummary {
        name,
        slots,
        total,
        start_date,
        description,
    })
    .map_err(Error::Query)
}
