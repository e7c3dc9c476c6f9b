//! What a database holds beside its rows, read from `information_schema`:
//! every table, column, index, check, view, routine, parameter, trigger,
//! event and grant of it, a line each. Two reads of one database compare
//! equal when nothing was created, dropped, altered or re-created
//! differently between them, so a shared database handed back with its
//! package changed is caught ([`super::database`]).

use std::collections::BTreeSet;

use mysql::prelude::Queryable;
use mysql::{Row, Value};

/// Each kind of object, and the query that lists its definitions in the
/// database given as the one parameter. Long texts (bodies, definitions)
/// are compared by their SHA-256 digest (MySQL 9 has no MD5), to keep a difference readable.
const OBJECTS: [(&str, &str); 14] = [
    (
        "database",
        "SELECT DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME \
         FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?",
    ),
    (
        "table",
        "SELECT TABLE_NAME, TABLE_TYPE, ENGINE, TABLE_COLLATION, CREATE_OPTIONS, TABLE_COMMENT \
         FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?",
    ),
    (
        "column",
        "SELECT TABLE_NAME, COLUMN_NAME, ORDINAL_POSITION, COLUMN_DEFAULT, IS_NULLABLE, COLUMN_TYPE, \
         CHARACTER_SET_NAME, COLLATION_NAME, EXTRA, COLUMN_COMMENT, GENERATION_EXPRESSION \
         FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ?",
    ),
    (
        "index",
        "SELECT TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX, COLUMN_NAME, NON_UNIQUE, SUB_PART \
         FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ?",
    ),
    (
        "constraint",
        "SELECT TABLE_NAME, CONSTRAINT_NAME, CONSTRAINT_TYPE FROM information_schema.TABLE_CONSTRAINTS \
         WHERE CONSTRAINT_SCHEMA = ?",
    ),
    (
        "check",
        "SELECT CONSTRAINT_NAME, CHECK_CLAUSE FROM information_schema.CHECK_CONSTRAINTS \
         WHERE CONSTRAINT_SCHEMA = ?",
    ),
    (
        "view",
        "SELECT TABLE_NAME, SHA2(VIEW_DEFINITION, 256), DEFINER, SECURITY_TYPE, CHECK_OPTION, \
         CHARACTER_SET_CLIENT, COLLATION_CONNECTION FROM information_schema.VIEWS WHERE TABLE_SCHEMA = ?",
    ),
    (
        "routine",
        "SELECT ROUTINE_TYPE, ROUTINE_NAME, SHA2(ROUTINE_DEFINITION, 256), DTD_IDENTIFIER, IS_DETERMINISTIC, \
         SQL_DATA_ACCESS, SECURITY_TYPE, SQL_MODE, ROUTINE_COMMENT, DEFINER, CHARACTER_SET_CLIENT, \
         COLLATION_CONNECTION, DATABASE_COLLATION FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = ?",
    ),
    (
        "parameter",
        "SELECT SPECIFIC_NAME, ORDINAL_POSITION, PARAMETER_MODE, PARAMETER_NAME, DTD_IDENTIFIER, \
         CHARACTER_SET_NAME, COLLATION_NAME FROM information_schema.PARAMETERS WHERE SPECIFIC_SCHEMA = ?",
    ),
    (
        "trigger",
        "SELECT TRIGGER_NAME, EVENT_MANIPULATION, EVENT_OBJECT_TABLE, ACTION_ORDER, ACTION_TIMING, \
         SHA2(ACTION_STATEMENT, 256), SQL_MODE, DEFINER, CHARACTER_SET_CLIENT, COLLATION_CONNECTION, \
         DATABASE_COLLATION FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = ?",
    ),
    (
        "event",
        "SELECT EVENT_NAME, SHA2(EVENT_DEFINITION, 256), DEFINER, STATUS FROM information_schema.EVENTS \
         WHERE EVENT_SCHEMA = ?",
    ),
    (
        "database grant",
        "SELECT GRANTEE, PRIVILEGE_TYPE, IS_GRANTABLE FROM information_schema.SCHEMA_PRIVILEGES \
         WHERE TABLE_SCHEMA = ?",
    ),
    (
        "table grant",
        "SELECT GRANTEE, TABLE_NAME, PRIVILEGE_TYPE, IS_GRANTABLE FROM information_schema.TABLE_PRIVILEGES \
         WHERE TABLE_SCHEMA = ?",
    ),
    (
        "routine grant",
        "SELECT User, Host, Routine_name, Routine_type, Proc_priv FROM mysql.procs_priv WHERE Db = ?",
    ),
];

/// A database's objects, one line each (`kind: field | field ...`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schema {
    lines: BTreeSet<String>,
    tables: Vec<String>,
}

impl Schema {
    /// Reads the objects of `database`.
    pub fn read(conn: &mut impl Queryable, database: &str) -> mysql::Result<Schema> {
        let mut lines = BTreeSet::new();
        for (kind, query) in OBJECTS {
            for row in conn.exec::<Row, _, _>(query, (database,))? {
                let fields: Vec<String> = row.unwrap().iter().map(field).collect();
                lines.insert(format!("{kind}: {}", fields.join(" | ")));
            }
        }
        let tables = conn.exec(
            "SELECT TABLE_NAME FROM information_schema.TABLES \
             WHERE TABLE_SCHEMA = ? AND TABLE_TYPE = 'BASE TABLE' ORDER BY 1",
            (database,),
        )?;
        Ok(Schema { lines, tables })
    }

    /// The base tables, whose rows a test writes.
    pub fn tables(&self) -> &[String] {
        &self.tables
    }

    /// What `now` holds that `self` does not (`+`) and what it lost (`-`),
    /// a line each; empty when the two are alike.
    pub fn changes_to(&self, now: &Schema) -> Vec<String> {
        let lost = self.lines.difference(&now.lines).map(|line| format!("- {line}"));
        let added = now.lines.difference(&self.lines).map(|line| format!("+ {line}"));
        lost.chain(added).collect()
    }
}

/// A field as text: NULL, a number, or the text itself.
fn field(value: &Value) -> String {
    match value {
        Value::NULL => "NULL".to_owned(),
        Value::Bytes(bytes) => String::from_utf8_lossy(bytes).into_owned(),
        other => other.as_sql(false),
    }
}
