//! The sync driver's side of the calls: statements on any connection of the
//! [`mysql`] crate, and its errors read as [`CounterError`]s.

use mysql::prelude::Queryable;
use mysql::{Params, Value};

use crate::driver::{Connection, Param, Statement};
use crate::error::CounterError;

/// A connection of the `mysql` crate, as the calls use it: every statement
/// blocks until it is answered.
pub(super) struct Blocking<'a, Q>(pub(super) &'a mut Q);

impl<Q: Queryable> Connection for Blocking<'_, Q> {
    async fn execute(&mut self, statement: &Statement<'_>) -> Result<u64, CounterError> {
        // MySQL refuses transaction control in a prepared statement (1295):
        // a statement without parameters goes as text.
        if statement.params.is_empty() {
            changed(self.0.query_iter(&*statement.sql)?)
        } else {
            changed(self.0.exec_iter(&*statement.sql, params(statement))?)
        }
    }

    async fn rows(&mut self, statement: &Statement<'_>) -> Result<Vec<Vec<Option<i64>>>, CounterError> {
        let rows: Vec<mysql::Row> = self.0.exec(&*statement.sql, params(statement))?;
        rows.into_iter().map(values).collect()
    }

    async fn text(&mut self, statement: &Statement<'_>) -> Result<Option<String>, CounterError> {
        let text: Option<Option<String>> = self.0.exec_first(&*statement.sql, params(statement))?;
        Ok(text.flatten())
    }

    async fn texts(&mut self, statement: &Statement<'_>) -> Result<Vec<Vec<Option<String>>>, CounterError> {
        let rows: Vec<mysql::Row> = self.0.exec(&*statement.sql, params(statement))?;
        rows.into_iter().map(|row| row.unwrap().into_iter().map(text).collect()).collect()
    }
}

/// A column of a row as a nullable text, a number as the async client
/// writes it: an integer (signed, UNSIGNED or BOOLEAN) as its digits, a
/// DOUBLE or FLOAT as Rust writes an `f64`. A date or a time is refused.
fn text(value: Value) -> Result<Option<String>, CounterError> {
    match value {
        Value::NULL => Ok(None),
        Value::Bytes(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
        Value::Int(number) => Ok(Some(number.to_string())),
        Value::UInt(number) => Ok(Some(number.to_string())),
        Value::Double(number) => Ok(Some(number.to_string())),
        Value::Float(number) => Ok(Some(f64::from(number).to_string())),
        other => {
            Err(CounterError::unexpected_answer(format!("{other:?} where a text or a number was read"), None))
        }
    }
}

/// The rows a statement's results say it changed, once every row of them
/// is read: an error may come after the first result set.
fn changed<P: mysql::prelude::Protocol>(
    mut result: mysql::QueryResult<'_, '_, '_, P>,
) -> Result<u64, CounterError> {
    let mut changed = 0;
    while let Some(set) = result.iter() {
        changed += set.affected_rows();
        for row in set {
            row?;
        }
    }
    Ok(changed)
}

/// A row's columns, each read as a nullable BIGINT.
fn values(row: mysql::Row) -> Result<Vec<Option<i64>>, CounterError> {
    (0..row.len())
        .map(|column| match row.get_opt::<Option<i64>, _>(column) {
            Some(value) => value.map_err(|error| CounterError::from(mysql::Error::from(error))),
            None => Ok(None),
        })
        .collect()
}

fn params(statement: &Statement<'_>) -> Params {
    let value = |param: &Param<'_>| match *param {
        Param::Text(text) => Value::from(text),
        Param::Number(number) => Value::from(number),
        Param::Flag(flag) => Value::from(flag),
        Param::Bytes(bytes) => Value::from(bytes),
    };
    Params::Positional(statement.params.iter().map(value).collect())
}

/// An error of the `mysql` crate: a server's keeps its number, SQLSTATE
/// and message, and the package's refusals become their variants; a value
/// that is not the type asked for is an unexpected answer; parameters a
/// caller's statement does not take are an invalid argument, refused
/// before it was sent; any other is a failed connection.
impl From<mysql::Error> for CounterError {
    fn from(error: mysql::Error) -> Self {
        match error {
            mysql::Error::MySqlError(server) => server_error(server),
            error @ mysql::Error::DriverError(mysql::DriverError::MismatchedStmtParams(..)) => {
                CounterError::invalid_argument(sentence(&error))
            }
            error @ (mysql::Error::FromValueError(_) | mysql::Error::FromRowError(_)) => {
                CounterError::unexpected_answer(sentence(&error), Some(Box::new(error)))
            }
            error => CounterError::connection(sentence(&error), error),
        }
    }
}

/// An error of opening a connection for a call, which was never sent.
pub(super) fn connect_error(error: mysql::Error) -> CounterError {
    match error {
        mysql::Error::MySqlError(server) => server_error(server),
        error @ mysql::Error::DriverError(mysql::DriverError::Timeout) => {
            CounterError::PoolTimedOut { message: sentence(&error), source: std::sync::Arc::new(error) }
        }
        error => CounterError::connect(sentence(&error), error),
    }
}

fn server_error(server: mysql::MySqlError) -> CounterError {
    CounterError::from_server(server.code, server.state.clone(), server.message.clone(), server)
}

/// The driver's error as a sentence: its own `Display` wraps each kind in
/// its type name (`DriverError { Could not connect ... }`).
fn sentence(error: &mysql::Error) -> String {
    match error {
        mysql::Error::MySqlError(error) => error.to_string(),
        mysql::Error::DriverError(error) => error.to_string(),
        mysql::Error::IoError(error) => error.to_string(),
        mysql::Error::UrlError(error) => error.to_string(),
        mysql::Error::CodecError(error) => error.to_string(),
        // Only with a TLS backend; one the application's own mysql
        // dependency line enables reads as the driver writes it.
        #[cfg(any(feature = "rustls", feature = "native-tls"))]
        mysql::Error::TlsError(error) => error.to_string(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn driver_errors_read_as_sentences() {
        let reset = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "connection reset by peer");
        let lost = CounterError::from(mysql::Error::IoError(reset));
        assert_eq!(lost.to_string(), "the connection failed: connection reset by peer");
        assert!(lost.may_have_applied());
        let timeout = connect_error(mysql::Error::DriverError(mysql::DriverError::ConnectTimeout));
        assert_eq!(timeout.to_string(), "cannot connect: Could not connect: connection timeout");
        assert!(!timeout.may_have_applied());
    }

    #[test]
    fn a_pool_that_gave_no_connection_in_time_timed_out() {
        let error = connect_error(mysql::Error::DriverError(mysql::DriverError::Timeout));
        assert!(matches!(error, CounterError::PoolTimedOut { .. }), "{error:?}");
        assert!(!error.is_retryable() && !error.may_have_applied(), "{error:?}");
    }

    #[test]
    fn a_value_of_another_type_is_an_unexpected_answer_not_a_lost_connection() {
        let error = CounterError::from(mysql::Error::FromValueError(mysql::Value::Bytes(b"many".to_vec())));
        assert!(matches!(error, CounterError::UnexpectedAnswer { .. }), "{error:?}");
    }

    #[test]
    fn a_server_error_keeps_its_number_and_sqlstate() {
        let error = CounterError::from(mysql::Error::MySqlError(mysql::MySqlError {
            state: "40001".to_owned(),
            message: "Deadlock found when trying to get lock".to_owned(),
            code: 1213,
        }));
        assert_eq!((error.code(), error.sqlstate(), error.is_retryable()), (Some(1213), Some("40001"), true));
    }
}
