//! TLS with staunch's own verifier (`wire::Tls::new`) against real MariaDB
//! servers: MySQL's `ssl-mode` meanings, cell by cell, for three server
//! certificates, four kinds of `tls_ca`, pins by certificate and by
//! fingerprint, and client certificates. Each cell connects and answers
//! `SELECT 1`, or is refused with its exact sentence.
//!
//! `cargo test -p staunch --test wire_tls -- --nocapture` prints the matrix.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use staunch::wire::{
    caps, Columns, Framer, Login, Next, Pem, Response, Tls, TlsSettings, Verify, WireError,
};
use staunch_testkit::mariadb::{LEAST_PASS, LEAST_USER};
use staunch_testkit::{test_certs, MariaDb, ServerCert, ServerOpts};

/// Logs in as `user` over TLS made from `s`, and runs `SELECT 1`: the
/// answer's one cell, or the error. The matrices log in as the test kit's
/// least-privilege user (`ALL ON staunch_test.*` only), as an application
/// would.
fn select_one(server: &MariaDb, user: &str, password: &str, s: &TlsSettings) -> Result<(), String> {
    let tls = Tls::new(s).map_err(|e| e.to_string())?;
    let stream =
        TcpStream::connect_timeout(&server.addr(), Duration::from_secs(10)).expect("TCP connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    stream
        .set_write_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let (mut f, _) = Framer::connect(
        stream,
        &Login {
            user,
            password,
            database: None,
            extra_caps: caps::MULTI_STATEMENTS,
            ..Login::default()
        },
        Some(&tls),
    )
    .map_err(|e| {
        assert!(!format!("{e} {e:?}").contains(password), "{e}");
        assert!(e.is_fatal() || matches!(e, WireError::Server(_)), "{e}");
        e.to_string()
    })?;
    assert!(f.stream().is_tls());
    f.send_query(b"SELECT 1").map_err(|e| e.to_string())?;
    let mut columns = Columns::new();
    match f.read_response(&mut columns).map_err(|e| e.to_string())? {
        Response::ResultSet => {}
        other => panic!("SELECT 1 answered {other:?}"),
    }
    let Next::Row(row) = f.next_row().map_err(|e| e.to_string())? else {
        panic!("SELECT 1 without a row")
    };
    let cell: Vec<Option<Vec<u8>>> = row.cells().map(|c| c.map(<[u8]>::to_vec)).collect();
    assert_eq!(cell, vec![Some(b"1".to_vec())]);
    Ok(())
}

fn pem(knob: &str, path: &Path) -> Pem {
    Pem::read(knob, path).expect("a test certificate")
}

/// SHA-256 of a certificate as openssl prints it (`AB:CD:...`), the form
/// the knob's documentation tells users to paste.
fn openssl_fingerprint(cert: &Path) -> String {
    let out = Command::new("openssl")
        .args(["x509", "-noout", "-fingerprint", "-sha256", "-in"])
        .arg(cert)
        .output()
        .expect("openssl");
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    text.trim()
        .split_once('=')
        .map(|(_, fp)| fp.to_string())
        .unwrap_or_else(|| panic!("openssl said {text:?}"))
}

/// What a cell must give.
#[derive(Clone, Debug, PartialEq)]
enum Want {
    Answers,
    Refused(String),
}

const MODES: [(Verify, &str); 3] = [
    (Verify::None, "required"),
    (Verify::Ca, "verify_ca"),
    (Verify::Identity, "verify_identity"),
];

/// The `tls_ca` columns.
#[derive(Clone, Copy, Debug)]
enum CaColumn {
    Test,
    Unrelated,
    Own,
    Absent,
}

const CAS: [CaColumn; 4] = [
    CaColumn::Test,
    CaColumn::Unrelated,
    CaColumn::Own,
    CaColumn::Absent,
];

fn ca_name(c: CaColumn) -> &'static str {
    match c {
        CaColumn::Test => "test CA",
        CaColumn::Unrelated => "unrelated CA",
        CaColumn::Own => "server's own (pin)",
        CaColumn::Absent => "none",
    }
}

fn own_cert(cert: ServerCert) -> PathBuf {
    let c = test_certs();
    match cert {
        ServerCert::Localhost => c.server_cert.clone(),
        ServerCert::OtherName => c.other_name_cert.clone(),
        ServerCert::SelfSignedCa => c.ca.clone(),
    }
}

fn ca_path(cert: ServerCert, ca: CaColumn) -> Option<PathBuf> {
    let c = test_certs();
    match ca {
        CaColumn::Test => Some(c.ca.clone()),
        CaColumn::Unrelated => Some(c.other_ca.clone()),
        CaColumn::Own => Some(own_cert(cert)),
        CaColumn::Absent => None,
    }
}

/// The expected outcome of each cell, written out per server (not derived
/// from the verifier's own rules).
fn expected(cert: ServerCert, mode: Verify, ca: CaColumn) -> Want {
    let c = test_certs();
    let other = format!(
        "tls_ca={}: CN=staunch unrelated CA, self-signed",
        c.other_ca.display()
    );
    let needs_ca = Want::Refused(
        "tls_mode=verify_ca needs tls_ca (the CA that signed the server's certificate, or that \
         certificate itself) or tls_fingerprint"
            .into(),
    );
    let not_signed = |who: &str, mode: &str| {
        Want::Refused(format!(
            "the server's certificate ({who}) is not signed by {other}; tls_mode={mode} trusts \
             tls_ca only"
        ))
    };
    let not_public = |who: &str| {
        Want::Refused(format!(
            "the server's certificate ({who}) is not signed by a public CA (tls_mode=verify_identity \
             without tls_ca trusts only the bundled Mozilla roots): set tls_ca to the CA that \
             signed it"
        ))
    };
    let names = |who: &str, names: &str| {
        Want::Refused(format!(
            "the server's certificate ({who}) names {names}, not 127.0.0.1 \
             (tls_mode=verify_identity checks the URL's host)"
        ))
    };
    let ca_leaf = |who: &str, trusted: &str| {
        Want::Refused(format!(
            "the server's certificate ({who}) is a CA certificate (CA:TRUE) and not one of \
             {trusted}: to pin it, put that very certificate in tls_ca, or its SHA-256 in \
             tls_fingerprint"
        ))
    };
    use CaColumn::*;
    use Want::Answers;
    match (cert, mode) {
        (_, Verify::None) => Answers,
        (ServerCert::Localhost, m) => {
            let who = "CN=localhost, issued by CN=staunch test CA";
            match (m, ca) {
                (_, Test | Own) => Answers,
                (Verify::Ca, Unrelated) => not_signed(who, "verify_ca"),
                (_, Unrelated) => not_signed(who, "verify_identity"),
                (Verify::Ca, Absent) => needs_ca,
                (_, Absent) => not_public(who),
            }
        }
        (ServerCert::OtherName, m) => {
            let who = "CN=db.staunch.test, issued by CN=staunch test CA";
            match (m, ca) {
                (Verify::Ca, Test | Own) => Answers,
                (Verify::Ca, Unrelated) => not_signed(who, "verify_ca"),
                (Verify::Ca, Absent) => needs_ca,
                (_, Test | Own) => names(who, "db.staunch.test"),
                (_, Unrelated) => not_signed(who, "verify_identity"),
                (_, Absent) => not_public(who),
            }
        }
        (ServerCert::SelfSignedCa, m) => {
            // The server's own certificate is the test CA: both columns pin.
            let who = "CN=staunch test CA, self-signed";
            match (m, ca) {
                (Verify::Ca, Test | Own) => Answers,
                (Verify::Ca, Absent) => needs_ca,
                (_, Test | Own) => names(who, "no host (it has no subjectAltName)"),
                (_, Unrelated) => ca_leaf(who, &other),
                (_, Absent) => ca_leaf(who, "the bundled Mozilla roots"),
            }
        }
    }
}

/// One server, the twelve cells of its part of the matrix; returns the
/// table's rows.
fn matrix_for(cert: ServerCert) -> Vec<String> {
    let server = MariaDb::start_with(ServerOpts {
        tls: Some(cert),
        ..Default::default()
    });
    let mut rows = Vec::new();
    for (mode, mode_name) in MODES {
        for ca in CAS {
            let s = TlsSettings {
                ca: ca_path(cert, ca).map(|p| pem("tls_ca", &p)),
                ..TlsSettings::new(mode, "127.0.0.1")
            };
            let got = match select_one(&server, LEAST_USER, LEAST_PASS, &s) {
                Ok(()) => Want::Answers,
                Err(e) => Want::Refused(e),
            };
            let want = expected(cert, mode, ca);
            assert_eq!(
                got,
                want,
                "server {cert:?}, tls_mode={mode_name}, tls_ca={}",
                ca_name(ca)
            );
            rows.push(format!(
                "| {cert:?} | {mode_name} | {} | {} |",
                ca_name(ca),
                match &got {
                    Want::Answers => "SELECT 1 = 1".to_string(),
                    Want::Refused(e) => e.replace(&test_certs().dir.display().to_string(), "…"),
                }
            ));
        }
    }
    rows
}

fn print(rows: &[String]) {
    println!("| server certificate | tls_mode | tls_ca | result |\n|---|---|---|---|");
    for r in rows {
        println!("{r}");
    }
}

#[test]
fn matrix_localhost_certificate() {
    print(&matrix_for(ServerCert::Localhost));
}

#[test]
fn matrix_other_name_certificate() {
    print(&matrix_for(ServerCert::OtherName));
}

/// conf_tls_exact: a self-signed `CA:TRUE` server certificate pinned as
/// `tls_ca` under `verify_ca` connects; an unrelated CA is refused naming
/// tls_ca; no public root is trusted (the matrix's verify_ca cells).
#[test]
fn matrix_self_signed_ca_certificate() {
    print(&matrix_for(ServerCert::SelfSignedCa));
}

#[test]
fn fingerprints_pin_the_servers_certificate() {
    let c = test_certs();
    let localhost = MariaDb::start_with(ServerOpts {
        tls: Some(ServerCert::Localhost),
        ..Default::default()
    });
    let other_name = MariaDb::start_with(ServerOpts {
        tls: Some(ServerCert::OtherName),
        ..Default::default()
    });
    let self_signed = MariaDb::start_with(ServerOpts {
        tls: Some(ServerCert::SelfSignedCa),
        ..Default::default()
    });
    let right = openssl_fingerprint(&c.server_cert);
    let wrong = openssl_fingerprint(&c.other_name_cert);
    let plain_hex = right.replace(':', "").to_lowercase();
    let several = format!("{wrong}, {}", plain_hex);
    let refused_wrong = format!(
        "the server's certificate (CN=localhost, issued by CN=staunch test CA, SHA-256 {right}) \
         matches no tls_fingerprint"
    );
    let with = |mode: Verify, fp: &str, ca: Option<&Path>| TlsSettings {
        fingerprints: Some(fp.to_string()),
        ca: ca.map(|p| pem("tls_ca", p)),
        ..TlsSettings::new(mode, "127.0.0.1")
    };
    let cases: Vec<(&str, &MariaDb, TlsSettings, Want)> = vec![
        (
            "Localhost, required, right",
            &localhost,
            with(Verify::None, &right, None),
            Want::Answers,
        ),
        (
            "Localhost, required, wrong",
            &localhost,
            with(Verify::None, &wrong, None),
            Want::Refused(refused_wrong.clone()),
        ),
        (
            "Localhost, verify_ca, one of several (hex without colons)",
            &localhost,
            with(Verify::Ca, &several, None),
            Want::Answers,
        ),
        (
            "Localhost, verify_ca, right, tls_ca unrelated (the pin replaces the chain)",
            &localhost,
            with(Verify::Ca, &right, Some(&c.other_ca)),
            Want::Answers,
        ),
        (
            "Localhost, verify_identity, wrong, tls_ca the test CA",
            &localhost,
            with(Verify::Identity, &wrong, Some(&c.ca)),
            Want::Refused(refused_wrong),
        ),
        (
            "Localhost, verify_identity, right",
            &localhost,
            with(Verify::Identity, &right, None),
            Want::Answers,
        ),
        (
            "OtherName, verify_identity, right (the name is still checked)",
            &other_name,
            with(
                Verify::Identity,
                &openssl_fingerprint(&c.other_name_cert),
                None,
            ),
            Want::Refused(
                "the server's certificate (CN=db.staunch.test, issued by CN=staunch test CA) \
                 names db.staunch.test, not 127.0.0.1 (tls_mode=verify_identity checks the URL's \
                 host)"
                    .into(),
            ),
        ),
        (
            "SelfSignedCa, verify_ca, right, no tls_ca",
            &self_signed,
            with(Verify::Ca, &openssl_fingerprint(&c.ca), None),
            Want::Answers,
        ),
    ];
    println!("| case | tls_fingerprint | result |\n|---|---|---|");
    for (name, server, s, want) in cases {
        let got = match select_one(server, LEAST_USER, LEAST_PASS, &s) {
            Ok(()) => Want::Answers,
            Err(e) => Want::Refused(e),
        };
        assert_eq!(got, want, "{name}");
        println!(
            "| {name} | {} | {} |",
            s.fingerprints.as_deref().unwrap_or(""),
            match got {
                Want::Answers => "SELECT 1 = 1".to_string(),
                Want::Refused(e) => e,
            }
        );
    }
}

/// A user who must show a certificate (`REQUIRE X509`): ours, signed by
/// the server's CA, logs in; none is the server's refusal of the login; one
/// the server does not trust is its TLS refusal, in a sentence naming
/// tls_cert.
#[test]
fn a_client_certificate_for_a_user_that_requires_one() {
    let c = test_certs();
    let server = MariaDb::start_with(ServerOpts {
        tls: Some(ServerCert::Localhost),
        ..Default::default()
    });
    server.sql("CREATE USER x509@'%' IDENTIFIED BY 'x509-hunter2' REQUIRE X509");
    let base = || TlsSettings {
        ca: Some(pem("tls_ca", &c.ca)),
        ..TlsSettings::new(Verify::Identity, "127.0.0.1")
    };
    let ours = TlsSettings {
        cert: Some(pem("tls_cert", &c.client_cert)),
        key: Some(pem("tls_key", &c.client_key)),
        ..base()
    };
    select_one(&server, "x509", "x509-hunter2", &ours).expect("with our certificate");
    // The application user needs none, and may show one.
    select_one(&server, "app", "app-secret", &ours).expect("app with a certificate");

    let e = select_one(&server, "x509", "x509-hunter2", &base()).unwrap_err();
    assert!(
        e.starts_with("server error 1045 (28000): Access denied for user 'x509'"),
        "{e}"
    );

    let untrusted = TlsSettings {
        cert: Some(pem("tls_cert", &c.other_ca)),
        key: Some(pem("tls_key", &c.dir.join("other-ca.key"))),
        ..base()
    };
    let e = select_one(&server, "x509", "x509-hunter2", &untrusted).unwrap_err();
    assert!(
        e.starts_with("the server refused our client certificate (TLS alert ")
            && e.contains("check that tls_cert is signed by a CA in the server's ssl_ca"),
        "{e}"
    );
    println!("| client certificate | result |\n|---|---|");
    println!("| signed by the server's ssl_ca | SELECT 1 = 1 |");
    println!("| none (REQUIRE X509) | server error 1045 |");
    println!("| unrelated self-signed | {e} |");
}

/// A server whose certificate (signed by the test CA) has expired (valid
/// for the one second it was made in):
/// refused with its end date under verify_ca, when pinned and when
/// fingerprinted (Connector/C checks the dates of a fingerprinted
/// certificate too); not checked under required.
#[test]
fn an_expired_server_certificate_is_refused_with_its_date() {
    let c = test_certs();
    let dir = c.dir.join("expired");
    std::fs::create_dir_all(&dir).unwrap();
    let (key, csr, cert) = (
        dir.join("expired.key"),
        dir.join("expired.csr"),
        dir.join("expired.pem"),
    );
    let openssl = |args: &[&str]| {
        let out = Command::new("openssl")
            .args(args)
            .output()
            .expect("openssl");
        assert!(out.status.success(), "openssl {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let p = |p: &Path| p.to_str().unwrap().to_string();
    openssl(&[
        "req",
        "-new",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-keyout",
        &p(&key),
        "-out",
        &p(&csr),
        "-subj",
        "/CN=expired",
    ]);
    std::fs::write(dir.join("ext"), "subjectAltName=IP:127.0.0.1\n").unwrap();
    openssl(&[
        "x509",
        "-req",
        "-in",
        &p(&csr),
        "-CA",
        &p(&c.ca),
        "-CAkey",
        &p(&c.ca_key),
        "-set_serial",
        "77",
        "-days",
        "0",
        "-extfile",
        &p(&dir.join("ext")),
        "-out",
        &p(&cert),
    ]);
    // The server reads its key as the mysql user.
    std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    // "notAfter=2026-12-05 11:14:17Z" -> "2026-12-05 11:14:17 UTC".
    let end = openssl(&[
        "x509",
        "-noout",
        "-enddate",
        "-dateopt",
        "iso_8601",
        "-in",
        &p(&cert),
    ]);
    let end = end
        .trim()
        .trim_start_matches("notAfter=")
        .replace('Z', " UTC");

    // notAfter is the second it was made in: past it, the certificate has
    // expired (webpki compares whole seconds).
    std::thread::sleep(Duration::from_millis(2100));
    let server = MariaDb::start_with(ServerOpts {
        tls: Some(ServerCert::Localhost),
        args: vec![
            format!("--ssl-cert={}", p(&cert)),
            format!("--ssl-key={}", p(&key)),
        ],
        ..Default::default()
    });
    let expired = format!(
        "the server's certificate (CN=expired, issued by CN=staunch test CA) expired on {end}"
    );
    let cases = [
        (
            "required",
            TlsSettings::new(Verify::None, "127.0.0.1"),
            Want::Answers,
        ),
        (
            "verify_ca, tls_ca the test CA",
            TlsSettings {
                ca: Some(pem("tls_ca", &c.ca)),
                ..TlsSettings::new(Verify::Ca, "127.0.0.1")
            },
            Want::Refused(expired.clone()),
        ),
        (
            "verify_ca, pinned",
            TlsSettings {
                ca: Some(pem("tls_ca", &cert)),
                ..TlsSettings::new(Verify::Ca, "127.0.0.1")
            },
            Want::Refused(expired.clone()),
        ),
        (
            "required, fingerprint",
            TlsSettings {
                fingerprints: Some(openssl_fingerprint(&cert)),
                ..TlsSettings::new(Verify::None, "127.0.0.1")
            },
            Want::Refused(expired.clone()),
        ),
    ];
    println!("| expired certificate | result |\n|---|---|");
    for (name, s, want) in cases {
        let got = match select_one(&server, LEAST_USER, LEAST_PASS, &s) {
            Ok(()) => Want::Answers,
            Err(e) => Want::Refused(e),
        };
        assert_eq!(got, want, "{name}");
        println!("| {name} | {got:?} |");
    }
}
