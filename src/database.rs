//! Connecting to the database a command names. Messages name the user, host,
//! port and database, never the password.
//!
//! URLs take TLS settings as MySQL's own clients and sqlx do:
//! `?ssl-mode=DISABLED|PREFERRED|REQUIRED|VERIFY_IDENTITY` and
//! `ssl-ca=PATH`. The `mysql` crate rejects parameters it does not know, so
//! they are taken off the URL here and turned into its `SslOpts`.
//!
//! The `mysql` crate (28.0.4) puts the public web certificate authorities
//! in the trust store of every verified connection, beside any CA it is
//! given, and offers no way to leave them out. So `ssl-ca` (a cloud
//! provider's CA: Amazon RDS, Azure, Cloud SQL) is taken only with
//! `VERIFY_IDENTITY`, where the host name keeps the public authorities'
//! certificates out (none issues one for a provider's database host
//! names), and `VERIFY_CA`, which skips the host name, is refused: a
//! certificate any public authority issued for any name would pass.

use std::fs;
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use mysql::prelude::Queryable;
use mysql::{Conn, DriverError, Opts, OptsBuilder, SslOpts, UrlError};

use crate::error::Error;
use slotted_counters_core::package::server_errno;

/// How long to wait for a server that does not answer.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Why `ssl-ca` without `ssl-mode=VERIFY_IDENTITY` is refused.
pub const SSL_CA_NEEDS_VERIFY_IDENTITY: &str = "ssl-ca is taken only with ssl-mode=VERIFY_IDENTITY: the \
     mysql driver trusts the public web certificate authorities beside the CA it is given, and only the \
     host name check keeps their certificates out; add ssl-mode=VERIFY_IDENTITY";

/// Why `ssl-mode=VERIFY_CA` is refused, and what to use instead.
pub const VERIFY_CA_REFUSED: &str = "ssl-mode=VERIFY_CA is refused: it does not check the host name, and \
     the mysql driver trusts every public web certificate authority, so a certificate any of them \
     issued for any name would pass; use ssl-mode=VERIFY_IDENTITY, or ssl-mode=REQUIRED for \
     encryption without verification";

/// How a connection uses TLS, as MySQL's clients name the modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SslMode {
    /// Plain TCP.
    Disabled,
    /// TLS when the server offers it, unverified; plain otherwise. The
    /// default, as in MySQL's own clients.
    Preferred,
    /// TLS, encrypted but with the server's certificate not verified.
    Required,
    /// TLS, with a certificate a public authority, or the URL's `ssl-ca`,
    /// issued to the host in the URL.
    VerifyIdentity,
}

impl SslMode {
    const NAMES: [(&'static str, SslMode); 4] = [
        ("DISABLED", SslMode::Disabled),
        ("PREFERRED", SslMode::Preferred),
        ("REQUIRED", SslMode::Required),
        ("VERIFY_IDENTITY", SslMode::VerifyIdentity),
    ];

    fn parse(value: &str) -> Result<Self, String> {
        if value.eq_ignore_ascii_case("VERIFY_CA") {
            return Err(VERIFY_CA_REFUSED.to_owned());
        }
        Self::NAMES
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(value))
            .map(|&(_, mode)| mode)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::NAMES.iter().map(|(name, _)| *name).collect();
                format!("ssl-mode={value} is not a mode; use one of {}", names.join(", "))
            })
    }

    /// The driver's TLS settings for this mode, trusting `ca` too; `None`
    /// for plain TCP.
    fn ssl_opts(self, ca: Option<PathBuf>) -> Option<SslOpts> {
        match self {
            SslMode::Disabled => None,
            SslMode::Preferred | SslMode::Required => Some(
                SslOpts::default()
                    .with_danger_accept_invalid_certs(true)
                    .with_danger_skip_domain_validation(true),
            ),
            SslMode::VerifyIdentity => Some(SslOpts::default().with_root_cert_path(ca)),
        }
    }
}

/// A URL's TLS mode and CA, taken off it, and the rest of the URL.
struct SplitUrl {
    rest: String,
    mode: SslMode,
    ca: Option<PathBuf>,
}

fn split_tls_parameters(url: &str) -> Result<SplitUrl, Error> {
    let invalid =
        |problem: String| Error::Url(format!("{problem}; expected mysql://user:password@host:port/database"));
    let mut parsed = url::Url::parse(url).map_err(|error| invalid(error.to_string()))?;
    let (mut mode, mut ca, mut rest) = (SslMode::Preferred, None, Vec::new());
    for (key, value) in parsed.query_pairs() {
        match key.as_ref() {
            "ssl-mode" => mode = SslMode::parse(&value).map_err(Error::Url)?,
            "ssl-ca" => ca = Some(PathBuf::from(value.as_ref())),
            _ => rest.push((key.into_owned(), value.into_owned())),
        }
    }
    if let Some(ca) = &ca {
        if mode != SslMode::VerifyIdentity {
            return Err(Error::Url(SSL_CA_NEEDS_VERIFY_IDENTITY.to_owned()));
        }
        // Read at connect time, by the driver: a path that cannot be read
        // is named now, before any connection.
        fs::File::open(ca)
            .map_err(|error| Error::Url(format!("ssl-ca={} cannot be read: {error}", ca.display())))?;
    }
    if rest.is_empty() {
        parsed.set_query(None);
    } else {
        parsed.query_pairs_mut().clear().extend_pairs(rest);
    }
    Ok(SplitUrl { rest: parsed.into(), mode, ca })
}

/// Parses a `mysql://user:password@host:port/database` URL, with its TLS
/// mode. A database is required. With `ssl-mode=PREFERRED`, the default,
/// the options ask for TLS; [`connect`] falls back to plain TCP when the
/// server has none.
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
pub struct Connected {
    pub conn: Conn,
    /// With TLS settled: a pool made from them connects as this connection did.
    pub opts: Opts,
    /// `user@host:port/database`.
    pub target: String,
    /// Why the password and the data may reach someone on the path, when
    /// they may: the server is not on this machine and its certificate was
    /// not verified.
    pub exposure: Option<String>,
}

/// Opens one connection to the database `url` names.
pub fn connect(url: &str) -> Result<Connected, Error> {
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
        Ok((conn, opts)) => {
            let encrypted = opts.get_ssl_opts().is_some();
            let exposure = exposure(&opts.get_ip_or_hostname(), mode, encrypted);
            Ok(Connected { conn, opts, target, exposure })
        }
        Err(source) => {
            let hint = if mode == SslMode::Disabled { plain_refused_hint(&source) } else { "" };
            Err(Error::Connect { target, source, hint })
        }
    }
}

/// What an attacker on the path between here and `host` may take from a
/// connection in `mode`, `encrypted` or not; `None` for a server on this
/// machine or a verified one. Without TLS, MySQL's `caching_sha2_password`
/// fetches the server's RSA key unauthenticated, so a man in the middle
/// gets the password; with unverified TLS he can pose as the server.
fn exposure(host: &str, mode: SslMode, encrypted: bool) -> Option<String> {
    let loopback = host.eq_ignore_ascii_case("localhost")
        || host.trim_matches(['[', ']']).parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback());
    match (loopback, mode, encrypted) {
        (true, _, _) | (_, SslMode::VerifyIdentity, _) => None,
        (false, _, false) => Some(format!(
            "the connection to {host} is not encrypted: someone on the path can read the data and, \
             through the unauthenticated RSA key exchange, the password; use ssl-mode=VERIFY_IDENTITY"
        )),
        (false, _, true) => Some(format!(
            "the server certificate of {host} is not verified: someone on the path can pose as the \
             server and take the password; use ssl-mode=VERIFY_IDENTITY"
        )),
    }
}

/// The way out when a plain connection was refused by a server that may
/// require TLS: MySQL says so (3159), MariaDB answers 1045, access denied.
fn plain_refused_hint(error: &mysql::Error) -> &'static str {
    match error {
        mysql::Error::MySqlError(error)
            if [server_errno::ACCESS_DENIED, server_errno::SECURE_TRANSPORT_REQUIRED]
                .contains(&error.code) =>
        {
            " (if the server requires TLS, add ?ssl-mode=VERIFY_IDENTITY, or ?ssl-mode=REQUIRED, to the URL)"
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
    fn the_tls_mode_leaves_the_url_and_defaults_to_preferred() {
        let mode = |url: &str| split_tls_parameters(url).map(|split| (split.rest, split.mode));
        assert_eq!(
            mode("mysql://a:b@h:3306/db?ssl-mode=required").unwrap(),
            ("mysql://a:b@h:3306/db".to_owned(), SslMode::Required)
        );
        assert_eq!(
            mode("mysql://a@h/db?ssl-mode=VERIFY_IDENTITY&prefer_socket=false").unwrap(),
            ("mysql://a@h/db?prefer_socket=false".to_owned(), SslMode::VerifyIdentity)
        );
        assert_eq!(mode("mysql://a@h/db").unwrap().1, SslMode::Preferred, "as MySQL's own clients");
        for (url, problem) in [
            ("mysql://a@h/db?ssl-mode=ON", "ssl-mode=ON is not a mode; use one of DISABLED, PREFERRED"),
            (
                "mysql://a@h/db?ssl-mode=VERIFY_CA",
                "ssl-mode=VERIFY_CA is refused: it does not check the host",
            ),
            ("mysql://a@h/db?ssl-mode=verify_ca&ssl-ca=/x", "ssl-mode=VERIFY_CA is refused"),
            ("mysql://a@h/db?ssl-ca=/x", "ssl-ca is taken only with ssl-mode=VERIFY_IDENTITY"),
            ("mysql://a@h/db?ssl-mode=REQUIRED&ssl-ca=/x", "ssl-ca is taken only with"),
            (
                "mysql://a@h/db?ssl-mode=VERIFY_IDENTITY&ssl-ca=/no/such/ca.pem",
                "ssl-ca=/no/such/ca.pem cannot be read: No such file",
            ),
        ] {
            let error = mode(url).unwrap_err().to_string();
            assert!(error.contains(problem), "{url}: {error}");
        }
    }

    #[test]
    fn only_a_verified_or_local_connection_is_not_exposed() {
        for host in ["127.0.0.1", "127.8.0.1", "::1", "[::1]", "localhost", "LOCALHOST"] {
            for mode in [SslMode::Disabled, SslMode::Preferred, SslMode::Required] {
                assert_eq!(exposure(host, mode, false), None, "{host}");
            }
        }
        assert_eq!(exposure("db.example.com", SslMode::VerifyIdentity, true), None);
        let plain = exposure("db.example.com", SslMode::Preferred, false).unwrap();
        assert!(plain.starts_with("the connection to db.example.com is not encrypted"), "{plain}");
        let unverified = exposure("10.0.0.5", SslMode::Required, true).unwrap();
        assert!(unverified.starts_with("the server certificate of 10.0.0.5 is not verified"), "{unverified}");
    }
}
