//! TLS: a server that refuses plain connections, reached by the command and
//! the client through `ssl-mode` and `ssl-ca` in the URL.

use std::fs;
use std::path::Path;

use mysql::prelude::Queryable;
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
use slotted_counters::{Counters, NewCounter, database};

use crate::support::server::Booted;
use crate::support::{self, flavor, on_each_server, slotted_counters, stderr, stdout, succeeded};

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

/// Boots a server that has a certificate from `authority` for 127.0.0.1
/// and refuses connections without TLS.
fn tls_only_server(dir: &Path, authority: &CertifiedIssuer<'static, KeyPair>) -> Booted {
    let key = KeyPair::generate().unwrap();
    let certificate = CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
        .unwrap()
        .signed_by(&key, authority)
        .unwrap();
    fs::write(dir.join("server-cert.pem"), certificate.pem()).unwrap();
    fs::write(dir.join("server-key.pem"), key.serialize_pem()).unwrap();
    let config = format!(
        "ssl-ca={dir}/test-ca.pem\nssl-cert={dir}/server-cert.pem\nssl-key={dir}/server-key.pem\n\
         require_secure_transport=ON",
        dir = flavor().inner_path(dir).display()
    );
    let server = Booted::start(flavor(), &config)
        .unwrap_or_else(|problem| panic!("cannot boot a TLS {} server: {problem}", flavor()));
    server.root_conn().query_drop("CREATE DATABASE app").unwrap();
    server
}

fn install_status_and_the_client_reach_a_tls_only_server() {
    // The server reads its certificates from here: inside MySQL's chroot.
    let dir = flavor().visible_tempdir("slotted-counters-tls-").unwrap();
    let test_ca = authority(dir.path(), "test-ca");
    authority(dir.path(), "other-ca");
    let server = tls_only_server(dir.path(), &test_ca);
    let url = server.url("app");
    let ca = dir.path().join("test-ca.pem");
    let other_ca = dir.path().join("other-ca.pem");

    for parameters in [
        "ssl-mode=REQUIRED".to_owned(),
        format!("ssl-mode=VERIFY_CA&ssl-ca={}", ca.display()),
        format!("ssl-ca={}", ca.display()),
        format!("ssl-mode=VERIFY_IDENTITY&ssl-ca={}", ca.display()),
    ] {
        let url = format!("{url}?{parameters}");
        succeeded(slotted_counters(&["install", "--url", &url]));
        let report = stdout(&succeeded(slotted_counters(&["status", "--url", &url])));
        assert_eq!(report.matches("current").count(), support::ROUTINES.len(), "{parameters}: {report}");

        let mut conn = database::connect(&url).unwrap().conn;
        let cipher: Option<(String, String)> =
            conn.query_first("SHOW SESSION STATUS LIKE 'Ssl_cipher'").unwrap();
        assert!(
            cipher.is_some_and(|(_, cipher)| !cipher.is_empty()),
            "{parameters}: the session is encrypted"
        );
    }

    let pool = mysql::Pool::new(
        database::parse_url(&format!("{url}?ssl-mode=VERIFY_CA&ssl-ca={}", ca.display())).unwrap(),
    )
    .unwrap();
    let counters = Counters::new(pool);
    counters.setup("secure", NewCounter::new("d").slots(4)).unwrap();
    counters.increment("secure").unwrap();
    assert_eq!(counters.get("secure").unwrap(), Some(1));

    for (url, problem) in [
        (url.clone(), "without TLS"),
        (format!("{url}?ssl-mode=VERIFY_CA&ssl-ca={}", other_ca.display()), "a certificate from another CA"),
        (format!("{url}?ssl-mode=DISABLED"), "TLS disabled"),
    ] {
        let output = slotted_counters(&["status", "--url", &url]);
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(1), "{problem}: {message}");
        assert_eq!(message.lines().count(), 1, "{problem}: {message}");
        assert!(message.starts_with("error: cannot connect to slotted@127.0.0.1:"), "{problem}: {message}");
        assert!(!message.contains(" { "), "{problem}: a sentence, not a debug dump: {message}");
        if problem == "a certificate from another CA" {
            assert!(message.contains("invalid peer certificate: UnknownIssuer"), "{message}");
        } else {
            assert!(message.contains("add ?ssl-mode=REQUIRED"), "{problem}: says how to use TLS: {message}");
        }
    }
}
