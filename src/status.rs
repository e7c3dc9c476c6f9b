//! Reads what a database holds: whether the installed routines are this
//! version's, and the counters themselves. Presentation is the caller's.

use mysql::prelude::Queryable;

use crate::error::Error;
use crate::options::PackageOptions;

/// How one routine of the package stands in the database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RoutineState {
    /// Installed by this version with these options.
    Current,
    /// Installed, but by another version or with other options.
    Stale { installed: String },
    /// Not installed.
    Missing,
}

/// One routine and how it stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoutineStatus {
    pub name: String,
    pub kind: &'static str,
    pub state: RoutineState,
}

/// What `status` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub table: String,
    pub table_present: bool,
    pub view: String,
    pub view_present: bool,
    pub routines: Vec<RoutineStatus>,
}

impl Status {
    /// The routines, and the view, that need installing: missing or stale.
    pub fn outdated(&self) -> Vec<&str> {
        let mut outdated: Vec<&str> = self
            .routines
            .iter()
            .filter(|routine| routine.state != RoutineState::Current)
            .map(|routine| routine.name.as_str())
            .collect();
        if !self.view_present {
            outdated.push(&self.view);
        }
        outdated
    }
}

/// Compares the routines in the connection's database with the package
/// `options` describe, as this version renders it.
pub fn status(conn: &mut impl Queryable, options: &PackageOptions) -> Result<Status, Error> {
    let installed: Vec<(String, String)> = conn
        .exec(
            "SELECT ROUTINE_NAME, ROUTINE_COMMENT FROM information_schema.ROUTINES \
             WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_NAME LIKE CONCAT(?, '%')",
            (options.prefix(),),
        )
        .map_err(Error::Query)?;
    let expected = options.routine_comment();
    let routines = options
        .routines()
        .into_iter()
        .map(|routine| {
            let name = options.routine_name(routine);
            let state = match installed.iter().find(|(installed, _)| installed.eq_ignore_ascii_case(&name)) {
                None => RoutineState::Missing,
                Some((_, comment)) if *comment == expected => RoutineState::Current,
                Some((_, comment)) => RoutineState::Stale { installed: comment.clone() },
            };
            RoutineStatus { name, kind: routine.kind(), state }
        })
        .collect();
    let mut present = |name: String| -> Result<bool, Error> {
        let count: Option<u32> = conn
            .exec_first(
                "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?",
                (name,),
            )
            .map_err(Error::Query)?;
        Ok(count.unwrap_or(0) > 0)
    };
    Ok(Status {
        table: options.table().to_owned(),
        table_present: present(options.table().to_owned())?,
        view: options.totals_view(),
        view_present: present(options.totals_view())?,
        routines,
    })
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
    crate::options::check_identifier("--table", table, table)?;
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
