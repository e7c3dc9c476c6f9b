//! TLS: a server that refuses plain connections, reached by the command and
//! the client through `ssl-mode` in the URL, verified through a private CA
//! in `ssl-ca` by the name its certificate carries, and the settings the
//! drivers cannot honour refused.

use std::fs;
use std::path::Path;

use mysql::prelude::Queryable;
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
use slotted_counters::{AsyncCounters, ConfigError, Counters, NewCounter, sqlx};
use slotted_counters_cli::database;

use crate::support::server::{Booted, Launch};
use crate::support::{self, flavor, on_each_server, release, slotted_counters, stderr, stdout, succeeded};

on_each_server!(install_status_and_the_client_reach_a_tls_only_server,);

/// A certificate authority made for the test, written as `<name>.pem` into `dir`.
fn authority(dir: &Path, name: &str) -> CertifiedIssuer<'static, KeyPair> {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(rcgen::DnType::CommonName, name);
    let authority = CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap();
    fs::write(dir.join(format!("{name}.pem")), authority.pem()).unwrap();
    authority
}

/// Boots a server that has a certificate from `authority` for `localhost`
/// (not for 127.0.0.1, the address the suite's URLs name) and refuses
/// connections without TLS.
fn tls_only_server(dir: &Path, authority: &CertifiedIssuer<'static, KeyPair>) -> Booted {
    let key = KeyPair::generate().unwrap();
    let certificate =
        CertificateParams::new(vec!["localhost".to_owned()]).unwrap().signed_by(&key, authority).unwrap();
    fs::write(dir.join("server-cert.pem"), certificate.pem()).unwrap();
    fs::write(dir.join("server-key.pem"), key.serialize_pem()).unwrap();
    let config = format!(
        "ssl-ca={dir}/test-ca.pem\nssl-cert={dir}/server-cert.pem\nssl-key={dir}/server-key.pem\n\
         require_secure_transport=ON",
        dir = release().inner_path(dir).display()
    );
    let server = Booted::launch(&Launch { config: &config, durable: false, ..Launch::new(release()) })
        .unwrap_or_else(|problem| panic!("cannot boot a TLS {} server: {problem}", flavor()));
    server.root_conn().query_drop("CREATE DATABASE app").unwrap();
    server
}

fn install_status_and_the_client_reach_a_tls_only_server() {
    // The server reads its certificates from here: inside MySQL's chroot.
    let dir = release().visible_tempdir("slotted-counters-tls-").unwrap();
    let test_ca = authority(dir.path(), "test-ca");
    let server = tls_only_server(dir.path(), &test_ca);
    let url = server.url("app");
    let ca = dir.path().join("test-ca.pem");

    // No mode is PREFERRED, as in MySQL's own clients: TLS when offered.
    for url in [url.clone(), format!("{url}?ssl-mode=REQUIRED")] {
        let output = succeeded(slotted_counters(&["install", "--url", &url]));
        assert!(
            !stderr(&output).contains("warning:"),
            "a server on this machine is not exposed: {}",
            stderr(&output)
        );
        let report = stdout(&succeeded(slotted_counters(&["status", "--url", &url])));
        assert_eq!(report.matches("current").count(), support::ROUTINES.len(), "{url}: {report}");

        let mut conn = database::connect(&url).unwrap().conn;
        let cipher: Option<(String, String)> =
            conn.query_first("SHOW SESSION STATUS LIKE 'Ssl_cipher'").unwrap();
        assert!(cipher.is_some_and(|(_, cipher)| !cipher.is_empty()), "{url}: the session is encrypted");
    }

    let pool = mysql::Pool::new(database::parse_url(&format!("{url}?ssl-mode=REQUIRED")).unwrap()).unwrap();
    let counters = Counters::new(pool).unwrap();
    counters.setup("secure", NewCounter::new("d").slots(4)).unwrap();
    counters.increment("secure").unwrap();
    assert_eq!(counters.get("secure").unwrap(), Some(1));

    // A private CA, as a cloud provider's: with ssl-ca and VERIFY_IDENTITY
    // the server is verified by the name its certificate carries, by the
    // command and by a pool made from the same URL, and not exposed.
    let by_name = url.replacen("@127.0.0.1:", "@localhost:", 1);
    let verified = format!("{by_name}?ssl-mode=VERIFY_IDENTITY&ssl-ca={}", ca.display());
    let output = succeeded(slotted_counters(&["status", "--url", &verified]));
    assert!(!stderr(&output).contains("warning:"), "verified: {}", stderr(&output));
    assert_eq!(stdout(&output).matches("current").count(), support::ROUTINES.len());
    let pool = mysql::Pool::new(database::parse_url(&verified).unwrap()).unwrap();
    assert_eq!(Counters::new(pool).unwrap().get("secure").unwrap(), Some(1));

    // The modes the driver cannot honour are refused, saying why, before
    // any connection: it would trust every public authority beside ssl-ca.
    for (parameters, refusal) in [
        (format!("ssl-mode=VERIFY_CA&ssl-ca={}", ca.display()), database::VERIFY_CA_REFUSED),
        ("ssl-mode=VERIFY_CA".to_owned(), database::VERIFY_CA_REFUSED),
        (format!("ssl-ca={}", ca.display()), database::SSL_CA_NEEDS_VERIFY_IDENTITY),
        (format!("ssl-mode=REQUIRED&ssl-ca={}", ca.display()), database::SSL_CA_NEEDS_VERIFY_IDENTITY),
    ] {
        let output = slotted_counters(&["status", "--url", &format!("{url}?{parameters}")]);
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(1), "{parameters}: {message}");
        assert_eq!(message.trim_end(), format!("error: invalid database URL: {refusal}"), "{parameters}");
    }

    for (url, problem) in [
        (
            format!("{by_name}?ssl-mode=VERIFY_IDENTITY"),
            "a certificate from a CA no public authority vouches for",
        ),
        (
            format!("{url}?ssl-mode=VERIFY_IDENTITY&ssl-ca={}", ca.display()),
            "a certificate that does not carry the name in the URL",
        ),
        (format!("{url}?ssl-mode=DISABLED"), "TLS disabled"),
    ] {
        let output = slotted_counters(&["status", "--url", &url]);
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(1), "{problem}: {message}");
        assert_eq!(message.lines().count(), 1, "{problem}: {message}");
        assert!(message.starts_with("error: cannot connect to slotted@"), "{problem}: {message}");
        assert!(!message.contains(" { "), "{problem}: a sentence, not a debug dump: {message}");
        let expected = match problem {
            "TLS disabled" => "add ?ssl-mode=VERIFY_IDENTITY",
            "a certificate that does not carry the name in the URL" => {
                "certificate not valid for name \"127.0.0.1\""
            }
            _ => "invalid peer certificate: UnknownIssuer",
        };
        assert!(message.contains(expected), "{problem}: {message}");
    }

    // The async client refuses a pool in VERIFY_CA for the same reason.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let refused = runtime.block_on(async {
        let pool =
            sqlx::mysql::MySqlPoolOptions::new().connect_lazy(&format!("{url}?ssl-mode=VERIFY_CA")).unwrap();
        AsyncCounters::new(pool).map(drop)
    });
    match refused {
        Err(ConfigError::Tls(message)) => {
            assert!(message.starts_with("ssl-mode=VERIFY_CA is refused"), "{message}")
        }
        other => panic!("{other:?}"),
    }
}
