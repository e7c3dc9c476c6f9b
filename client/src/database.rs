//! Connecting to the database a command names. Messages name the user, host,
//! port and database, never the password.
//!
//! URLs take TLS settings as MySQL's own clients and sqlx do:
//! `?ssl-mode=DISABLED|PREFERRED|REQUIRED|VERIFY_CA|VERIFY_IDENTITY` and
//! `ssl-ca=FILE`. The `mysql` crate rejects parameters it does not know, so
//! these two are taken off the URL here and turned into its `SslOpts`.

use std::path::PathBuf;
use std::time::Duration;

use mysql::prelude::Queryable;
use mysql::{Conn, DriverError, Opts, OptsBuilder, SslOpts, UrlError};

use crate::error::Error;

/// How long to wait for a server that does not answer.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How a connection uses TLS, as MySQL's clients name the modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    /// Plain TCP. The default when the URL names neither mode nor CA, as
    /// before TLS support: a server that requires TLS refuses the login.
    Disabled,
    /// TLS when the server offers it, unverified; plain otherwise.
    Preferred,
    /// TLS, encrypted but with the server's certificate not verified.
    Required,
    /// TLS, with a certificate signed by `ssl-ca` (or a public root); the
    /// host name is not checked. The default when only `ssl-ca` is given.
    VerifyCa,
    /// TLS, with a verified certificate issued to the host in the URL.
    VerifyIdentity,
}

impl SslMode {
    const NAMES: [(&'static str, SslMode); 5] = [
        ("DISABLED", SslMode::Disabled),
        ("PREFERRED", SslMode::Preferred),
        ("REQUIRED", SslMode::Required),
        ("VERIFY_CA", SslMode::VerifyCa),
        ("VERIFY_IDENTITY", SslMode::VerifyIdentity),
    ];

    fn parse(value: &str) -> Result<Self, String> {
        Self::NAMES
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(value))
            .map(|&(_, mode)| mode)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::NAMES.iter().map(|(name, _)| *name).collect();
                format!("ssl-mode={value} is not a mode; use one of {}", names.join(", "))
            })
    }

    /// The driver's TLS settings for this mode; `None` for plain TCP.
    fn ssl_opts(self, ca: Option<PathBuf>) -> Option<SslOpts> {
        let verified = SslOpts::default().with_root_cert_path(ca);
        match self {
            SslMode::Disabled => None,
            SslMode::Preferred | SslMode::Required => {
                Some(verified.with_danger_accept_invalid_certs(true).with_danger_skip_domain_validation(true))
            }
            SslMode::VerifyCa => Some(verified.with_danger_skip_domain_validation(true)),
            SslMode::VerifyIdentity => Some(verified),
        }
    }
}

/// A URL's TLS parameters, taken off it, and the rest of the URL.
struct SplitUrl {
    rest: String,
    mode: SslMode,
    ca: Option<PathBuf>,
}

fn split_tls_parameters(url: &str) -> Result<SplitUrl, Error> {
    let invalid =
        |problem: String| Error::Url(format!("{problem}; expected mysql://user:password@host:port/database"));
    let mut parsed = url::Url::parse(url).map_err(|error| invalid(error.to_string()))?;
    let (mut mode, mut ca, mut rest) = (None, None, Vec::new());
    for (key, value) in parsed.query_pairs() {
        match key.as_ref() {
            "ssl-mode" => mode = Some(SslMode::parse(&value).map_err(Error::Url)?),
            "ssl-ca" => ca = Some(PathBuf::from(value.as_ref())),
            _ => rest.push((key.into_owned(), value.into_owned())),
        }
    }
    if rest.is_empty() {
        parsed.set_query(None);
    } else {
        parsed.query_pairs_mut().clear().extend_pairs(rest);
    }
    let mode = match (mode, &ca) {
        (Some(SslMode::Disabled | SslMode::Preferred | SslMode::Required), Some(_)) => {
            return Err(Error::Url(
                "ssl-ca is only used to verify the server: give it with ssl-mode=VERIFY_CA or VERIFY_IDENTITY"
                    .to_owned(),
            ));
        }
        (Some(mode), _) => mode,
        (None, Some(_)) => SslMode::VerifyCa,
        (None, None) => SslMode::Disabled,
    };
    if let Some(ca) = &ca
        && !ca.is_file()
    {
        return Err(Error::Url(format!("ssl-ca={}: no such file", ca.display())));
    }
    Ok(SplitUrl { rest: parsed.into(), mode, ca })
}

/// Parses a `mysql://user:password@host:port/database` URL, with its TLS
/// parameters. A database is required. With `ssl-mode=PREFERRED` the
/// options ask for TLS; [`connect`] falls back to plain TCP when the server
/// has none.
pub fn parse_url(url: &str) -> Result<Opts, Error> {
    parse(url).map(|(opts, _)| opts)
}

fn parse(url: &str) -> Result<(Opts, SslMode), Error> {
    let split = split_tls_parameters(url)?;
    let opts = Opts::from_url(&split.rest).map_err(|error| {
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
    let opts = OptsBuilder::from_opts(opts)
        .tcp_connect_timeout(Some(CONNECT_TIMEOUT))
        .ssl_opts(split.mode.ssl_opts(split.ca));
    Ok((opts.into(), split.mode))
}

/// An open connection, the options that opened it, and its name for messages.
pub struct Connection {
    pub conn: Conn,
    /// With TLS settled: a pool made from them connects as this connection did.
    pub opts: Opts,
    /// `user@host:port/database`.
    pub target: String,
}

/// Opens one connection to the database `url` names.
pub fn connect(url: &str) -> Result<Connection, Error> {
    let (opts, mode) = parse(url)?;
    let target = describe(&opts);
    let opened = match Conn::new(opts.clone()) {
        Err(mysql::Error::DriverError(DriverError::TlsNotSupported)) if mode == SslMode::Preferred => {
            let plain: Opts = OptsBuilder::from_opts(opts).ssl_opts(None::<SslOpts>).into();
            Conn::new(plain.clone()).map(|conn| (conn, plain))
        }
        opened => opened.map(|conn| (conn, opts)),
    };
    match opened {
        Ok((conn, opts)) => Ok(Connection { conn, opts, target }),
        Err(source) => {
            let hint = if mode == SslMode::Disabled { plain_refused_hint(&source) } else { "" };
            Err(Error::Connect { target, source, hint })
        }
    }
}

/// The way out when a plain connection was refused by a server that may
/// require TLS: MySQL says so (3159), MariaDB answers 1045, access denied.
fn plain_refused_hint(error: &mysql::Error) -> &'static str {
    match error {
        mysql::Error::MySqlError(error) if [1045, 3159].contains(&error.code) => {
            " (if the server requires TLS, add ?ssl-mode=REQUIRED, or ?ssl-mode=VERIFY_CA&ssl-ca=FILE, to the URL)"
        }
        _ => "",
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tls_parameters_leave_the_url_and_set_the_mode() {
        let ca = std::env::current_exe().unwrap();
        let ca = ca.display();
        let mode = |url: &str| split_tls_parameters(url).map(|split| (split.rest, split.mode));
        assert_eq!(
            mode("mysql://a:b@h:3306/db?ssl-mode=required").unwrap(),
            ("mysql://a:b@h:3306/db".to_owned(), SslMode::Required)
        );
        assert_eq!(
            mode(&format!("mysql://a@h/db?ssl-ca={ca}&prefer_socket=false")).unwrap(),
            ("mysql://a@h/db?prefer_socket=false".to_owned(), SslMode::VerifyCa),
            "a CA alone means VERIFY_CA, as in MySQL's clients"
        );
        assert_eq!(mode("mysql://a@h/db").unwrap().1, SslMode::Disabled);
        for (url, problem) in [
            ("mysql://a@h/db?ssl-mode=ON", "ssl-mode=ON is not a mode; use one of DISABLED, PREFERRED"),
            ("mysql://a@h/db?ssl-mode=REQUIRED&ssl-ca=/x", "ssl-ca is only used to verify the server"),
            ("mysql://a@h/db?ssl-ca=/no/such/ca.pem", "ssl-ca=/no/such/ca.pem: no such file"),
        ] {
            let error = mode(url).unwrap_err().to_string();
            assert!(error.contains(problem), "{url}: {error}");
        }
    }
}
