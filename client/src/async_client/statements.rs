//! The async driver's side of the calls: statements on a sqlx
//! [`MySqlConnection`], and sqlx's errors read as [`CounterError`]s.

use sqlx::mysql::{MySqlArguments, MySqlConnection, MySqlDatabaseError, MySqlRow};
use sqlx::query::Query;
use sqlx::{MySql, Row, TypeInfo, ValueRef};

use crate::driver::{Connection, Param, Statement};
use crate::error::CounterError;

impl Connection for MySqlConnection {
    async fn execute(&mut self, statement: &Statement<'_>) -> Result<u64, CounterError> {
        // MySQL refuses transaction control in a prepared statement (1295):
        // a statement without parameters goes as text.
        let done = if statement.params.is_empty() {
            sqlx::Executor::execute(self, &*statement.sql).await?
        } else {
            bind(statement).execute(self).await?
        };
        Ok(done.rows_affected())
    }

    async fn rows(&mut self, statement: &Statement<'_>) -> Result<Vec<Vec<Option<i64>>>, CounterError> {
        let rows = bind(statement).fetch_all(self).await?;
        let values = |row: &sqlx::mysql::MySqlRow| {
            (0..row.len()).map(|column| row.try_get::<Option<i64>, _>(column)).collect::<Result<Vec<_>, _>>()
        };
        Ok(rows.iter().map(values).collect::<Result<_, _>>()?)
    }

    async fn text(&mut self, statement: &Statement<'_>) -> Result<Option<String>, CounterError> {
        // Read as bytes: sqlx takes a text in a binary collation
        // (utf8mb4_bin, the package's) for VARBINARY, which no String decodes.
        let row = bind(statement).fetch_optional(self).await?;
        let bytes = row.map(|row| row.try_get::<Option<Vec<u8>>, _>(0)).transpose()?.flatten();
        Ok(bytes.map(|bytes| String::from_utf8_lossy(&bytes).into_owned()))
    }

    async fn texts(&mut self, statement: &Statement<'_>) -> Result<Vec<Vec<Option<String>>>, CounterError> {
        let rows = bind(statement).fetch_all(self).await?;
        let texts =
            |row: &MySqlRow| (0..row.len()).map(|column| text(row, column)).collect::<Result<Vec<_>, _>>();
        Ok(rows.iter().map(texts).collect::<Result<_, _>>()?)
    }
}

/// Column `column` of `row` as a nullable text, a number as the sync
/// client writes it: an integer (signed, UNSIGNED or BOOLEAN) as its
/// digits, a DOUBLE or FLOAT as Rust writes an `f64`. Texts and DECIMALs
/// are read as their bytes, unchecked: sqlx takes a text in a binary
/// collation for VARBINARY, which no String decodes. A column of any other
/// type (a date, a time, BIT) is refused by its type's name.
fn text(row: &MySqlRow, column: usize) -> Result<Option<String>, sqlx::Error> {
    let raw = row.try_get_raw(column)?;
    if raw.is_null() {
        return Ok(None);
    }
    Ok(Some(match raw.type_info().name() {
        "BIGINT" | "INT" | "MEDIUMINT" | "SMALLINT" | "TINYINT" | "BOOLEAN" => {
            row.try_get::<i64, _>(column)?.to_string()
        }
        "BIGINT UNSIGNED" | "INT UNSIGNED" | "MEDIUMINT UNSIGNED" | "SMALLINT UNSIGNED"
        | "TINYINT UNSIGNED" => row.try_get::<u64, _>(column)?.to_string(),
        "DOUBLE" => row.try_get::<f64, _>(column)?.to_string(),
        "FLOAT" => f64::from(row.try_get::<f32, _>(column)?).to_string(),
        "DECIMAL" | "CHAR" | "VARCHAR" | "TINYTEXT" | "TEXT" | "MEDIUMTEXT" | "LONGTEXT" | "BINARY"
        | "VARBINARY" | "TINYBLOB" | "BLOB" | "MEDIUMBLOB" | "LONGBLOB" | "ENUM" | "SET" | "JSON" => {
            String::from_utf8_lossy(&row.try_get_unchecked::<Vec<u8>, _>(column)?).into_owned()
        }
        other => {
            return Err(sqlx::Error::ColumnDecode {
                index: column.to_string(),
                source: format!("a {other} value where a text or a number was read").into(),
            });
        }
    }))
}

fn bind<'q>(statement: &'q Statement<'_>) -> Query<'q, MySql, MySqlArguments> {
    statement.params.iter().fold(sqlx::query(&statement.sql), |query, param| match *param {
        Param::Text(text) => query.bind(text),
        Param::Number(number) => query.bind(number),
        Param::Flag(flag) => query.bind(flag),
        Param::Bytes(bytes) => query.bind(bytes),
    })
}

/// An error of sqlx: a server's keeps its number, SQLSTATE and message,
/// and the package's refusals become their variants; an answer not of the
/// shape or type asked for is an unexpected answer; any other is a failed
/// connection.
impl From<sqlx::Error> for CounterError {
    fn from(error: sqlx::Error) -> Self {
        server_error(error).unwrap_or_else(|error| match error {
            sqlx::Error::ColumnDecode { .. }
            | sqlx::Error::Decode(_)
            | sqlx::Error::ColumnIndexOutOfBounds { .. }
            | sqlx::Error::ColumnNotFound(_)
            | sqlx::Error::TypeNotFound { .. }
            | sqlx::Error::RowNotFound => {
                CounterError::unexpected_answer(error.to_string(), Some(Box::new(error)))
            }
            error => CounterError::connection(error.to_string(), error),
        })
    }
}

/// An error of taking a connection from the pool for a call, which was
/// never sent.
pub(super) fn acquire_error(error: sqlx::Error) -> CounterError {
    match server_error(error) {
        Ok(server) => server,
        Err(error @ sqlx::Error::PoolTimedOut) => {
            CounterError::PoolTimedOut { message: error.to_string(), source: std::sync::Arc::new(error) }
        }
        Err(error) => CounterError::connect(error.to_string(), error),
    }
}

/// The server's error `error` carries, or `error` when it is not one.
fn server_error(error: sqlx::Error) -> Result<CounterError, sqlx::Error> {
    let Some(server) =
        error.as_database_error().and_then(|error| error.try_downcast_ref::<MySqlDatabaseError>())
    else {
        return Err(error);
    };
    let (code, sqlstate, message) =
        (server.number(), server.code().unwrap_or("HY000").to_owned(), server.message().to_owned());
    Ok(CounterError::from_server(code, sqlstate, message, error))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pool_timeout_says_it_is_one() {
        let error = acquire_error(sqlx::Error::PoolTimedOut);
        assert!(matches!(error, CounterError::PoolTimedOut { .. }), "{error:?}");
        assert!(!error.may_have_applied(), "the call was never sent");
    }

    #[test]
    fn a_lost_connection_may_have_applied_the_call() {
        let error = CounterError::from(sqlx::Error::Io(std::io::ErrorKind::ConnectionReset.into()));
        assert!(matches!(error, CounterError::Connection { .. }), "{error:?}");
        assert!(error.may_have_applied());
    }

    #[test]
    fn a_value_of_another_type_is_an_unexpected_answer_not_a_lost_connection() {
        let decode = sqlx::Error::ColumnDecode { index: "0".to_owned(), source: "not a BIGINT".into() };
        let error = CounterError::from(decode);
        assert!(matches!(error, CounterError::UnexpectedAnswer { .. }), "{error:?}");
    }
}
