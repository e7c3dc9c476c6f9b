//! Connecting to the database a command names. Messages name the user, host,
//! port and database, never the password.

use std::time::Duration;

use mysql::prelude::Queryable;
use mysql::{Conn, Opts, OptsBuilder, UrlError};

use crate::error::Error;

/// How long to wait for a server that does not answer.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Parses a `mysql://user:password@host:port/database` URL. A database is required.
pub fn parse_url(url: &str) -> Result<Opts, Error> {
    let opts = Opts::from_url(url).map_err(|error| {
        // The driver wraps a parse failure as `URL ParseError { ... }`.
        let problem = match error {
            UrlError::ParseError(error) => error.to_string(),
            other => other.to_string(),
        };
        Error::Url(format!("{problem}; expected mysql://user:password@host:port/database"))
    })?;
    if opts.get_db_name().is_none_or(str::is_empty) {
        return Err(Error::Url(format!(
            "the URL for {} names no database; add it as the path: mysql://user:password@host:port/database",
            describe(&opts)
        )));
    }
    Ok(OptsBuilder::from_opts(opts).tcp_connect_timeout(Some(CONNECT_TIMEOUT)).into())
}

/// Opens one connection to the database `url` names, and says which, for messages.
pub fn connect(url: &str) -> Result<(Conn, String), Error> {
    let opts = parse_url(url)?;
    let target = describe(&opts);
    match Conn::new(opts) {
        Ok(conn) => Ok((conn, target)),
        Err(source) => Err(Error::Connect { target, source }),
    }
}

/// `user@host:port/database`, for messages.
fn describe(opts: &Opts) -> String {
    format!(
        "{}@{}:{}/{}",
        opts.get_user().unwrap_or_default(),
        opts.get_ip_or_hostname(),
        opts.get_tcp_port(),
        opts.get_db_name().unwrap_or_default()
    )
}

/// Deadlocks the server has counted since it started: `Innodb_deadlocks`
/// where the server has it (MariaDB, Percona), else MySQL's `lock_deadlocks`
/// metric in `information_schema.INNODB_METRICS` (the `lock` module, which
/// counts only while enabled). `None` when the server has neither.
pub fn deadlocks(conn: &mut impl Queryable) -> Result<Option<u64>, Error> {
    let status: Option<(String, u64)> =
        conn.query_first("SHOW GLOBAL STATUS LIKE 'Innodb_deadlocks'").map_err(Error::Query)?;
    if let Some((_, count)) = status {
        return Ok(Some(count));
    }
    conn.query_first("SELECT `COUNT` FROM information_schema.INNODB_METRICS WHERE `NAME` = 'lock_deadlocks'")
        .map_err(Error::Query)
}
