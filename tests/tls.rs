//! TLS against real MariaDB servers started with test certificates (made by
//! the test support with the `openssl` command line), and one fake server
//! that never finishes the TLS handshake.

use staunch_testkit as support;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::thread;
use std::time::{Duration, Instant};

use staunch::prelude::*;
use staunch::{Error, ErrorKind, Pool};
use support::{test_certs, MariaDb, ServerCert, ServerOpts};

fn tls_server(cert: ServerCert) -> MariaDb {
    MariaDb::start_with(ServerOpts {
        tls: Some(cert),
        ..Default::default()
    })
}

/// `url` of the app user to `host` (instead of 127.0.0.1), with `params`.
fn url_to(s: &MariaDb, host: &str, params: &str) -> String {
    format!(
        "{}?{params}",
        s.url().replace("@127.0.0.1:", &format!("@{host}:"))
    )
}

fn pool(url: &str) -> Pool {
    Pool::from_url(url).unwrap_or_else(|e| panic!("{url}: {e}"))
}

/// The session's TLS cipher ("" when not encrypted), seen by the server.
fn cipher(p: &Pool) -> String {
    let mut c = p.get().expect("get");
    let row: Option<(String, String)> = c.query_first("SHOW STATUS LIKE 'Ssl_cipher'").unwrap();
    row.expect("Ssl_cipher row").1
}

/// A `get` that must fail fast, as a permanent connect error, with a
/// message containing every one of `needles`.
fn assert_rejected_fast(p: &Pool, needles: &[&str]) -> Error {
    let t = Instant::now();
    let e = match p.get() {
        Ok(_) => panic!("connected, but expected a rejection with {needles:?}"),
        Err(e) => e,
    };
    let took = t.elapsed();
    assert_eq!(e.kind(), ErrorKind::ConnectRejected, "{e}");
    // connection_timeout is 10 s in these pools: failing fast means not
    // retrying until it runs out.
    assert!(took < Duration::from_secs(3), "took {took:?}: {e}");
    let text = e.to_string();
    eprintln!("rejected as expected: {text}");
    for n in needles {
        assert!(text.contains(n), "{n:?} not in: {text}");
    }
    // Not retried in a loop: one failed connect (two at most, with two
    // adders racing), and the next get reports the same error at once.
    let failures = p.stats().connect_failures;
    assert!(failures <= 2, "{failures} connect failures");
    let t = Instant::now();
    let again = p.get().expect_err("second get must fail too");
    assert_eq!(again.kind(), ErrorKind::ConnectRejected, "{again}");
    assert!(t.elapsed() < Duration::from_secs(1), "{again}");
    e
}

#[test]
fn required_encrypts_and_the_pool_behaves_as_without_tls() {
    let s = tls_server(ServerCert::Localhost);
    let p = pool(&format!(
        "{}?tls_mode=required&max_size=2&alive_bypass_window=0",
        s.url()
    ));
    let c = cipher(&p);
    assert!(
        !c.is_empty(),
        "tls_mode=required gave an unencrypted session"
    );

    // The default stays plaintext even when the server offers TLS.
    let plain = pool(&s.url());
    assert_eq!(cipher(&plain), "", "tls_mode defaults to disabled");

    // Borrow, query, return: validation (alive_bypass_window=0 pings on every
    // borrow) and the rollback on return work over TLS as they do without.
    s.sql("CREATE TABLE staunch_test.t (v INT) ENGINE=InnoDB");
    for i in 0..5 {
        let mut c = p.get().unwrap();
        assert_eq!(c.query_first::<i64, _>("SELECT 40 + 2").unwrap(), Some(42));
        c.query_drop("BEGIN").unwrap();
        c.query_drop(format!("INSERT INTO t VALUES ({i})")).unwrap();
        // returned inside the transaction: rolled back
    }
    let mut c = p.get().unwrap();
    assert_eq!(
        c.query_first::<i64, _>("SELECT COUNT(*) FROM t").unwrap(),
        Some(0)
    );
    drop(c);
    let st = p.stats();
    assert_eq!(st.rollbacks_on_return, 5, "{st:?}");
    assert!(
        st.created <= 2,
        "connections are reused over TLS, not remade: {st:?}"
    );
    assert_eq!(st.closed_broken, 0, "{st:?}");
    assert_eq!(st.validation_failures, 0, "{st:?}");
}

#[test]
fn require_ssl_user_needs_tls() {
    let s = tls_server(ServerCert::Localhost);
    s.sql("CREATE USER 'tlsonly'@'%' IDENTIFIED BY 'tls-pw' REQUIRE SSL");
    s.sql("GRANT ALL ON staunch_test.* TO 'tlsonly'@'%'");
    let url = s.url().replace("app:app-secret@", "tlsonly:tls-pw@");

    let p = pool(&format!("{url}?tls_mode=required"));
    assert!(!cipher(&p).is_empty());

    let p = pool(&format!("{url}?tls_mode=disabled"));
    let e = assert_rejected_fast(&p, &["Access denied"]);
    assert_eq!(e.server_code(), Some(1045), "{e}");
}

#[test]
fn verify_ca_accepts_the_right_ca_and_rejects_another() {
    let s = tls_server(ServerCert::Localhost);
    let certs = test_certs();
    let p = pool(&format!(
        "{}?tls_mode=verify_ca&tls_ca={}",
        s.url(),
        certs.ca.display()
    ));
    assert!(!cipher(&p).is_empty());

    let p = pool(&format!(
        "{}?tls_mode=verify_ca&tls_ca={}",
        s.url(),
        certs.other_ca.display()
    ));
    let e = assert_rejected_fast(
        &p,
        &[
            "tls_mode=verify_ca",
            "certificate verification failed",
            "not signed by tls_ca",
            &certs.other_ca.display().to_string(),
        ],
    );
    assert_eq!(e.server_code(), None);

    // With a short connection_timeout too, the error is the rejection, not a
    // timeout.
    let p = pool(&format!(
        "{}?tls_mode=verify_identity&tls_ca={}&connection_timeout=500ms",
        s.url(),
        certs.other_ca.display()
    ));
    let e = p.get().expect_err("must fail");
    assert_eq!(e.kind(), ErrorKind::ConnectRejected, "{e}");
}

/// A self-signed server certificate made the usual way (`openssl req
/// -x509`: basicConstraints CA:TRUE) is pinned by giving that very
/// certificate as tls_ca; under another tls_ca the refusal is a sentence
/// naming the cause and the knobs to change, with no Debug text in it.
#[test]
fn a_self_signed_ca_true_server_certificate_is_pinned_by_tls_ca() {
    let s = tls_server(ServerCert::SelfSignedCa);
    let certs = test_certs();
    let p = pool(&format!(
        "{}?tls_mode=verify_ca&tls_ca={}",
        s.url(),
        certs.ca.display()
    ));
    assert!(!cipher(&p).is_empty());

    let p = pool(&format!(
        "{}?tls_mode=verify_ca&tls_ca={}",
        s.url(),
        certs.other_ca.display()
    ));
    let e = assert_rejected_fast(
        &p,
        &["tls_mode=verify_ca", "CA:TRUE", "tls_ca", "tls_fingerprint"],
    );
    let text = format!("{e}");
    for debug in ["Other(", "OtherError", "CaUsedAsEndEntity"] {
        assert!(!text.contains(debug), "Debug text {debug:?} in: {text}");
    }
    // tls_mode=required encrypts without checking.
    let p = pool(&format!("{}?tls_mode=required", s.url()));
    assert!(!cipher(&p).is_empty());
}

#[test]
fn verify_identity_checks_the_host_name() {
    let certs = test_certs();
    let ca = format!("tls_ca={}", certs.ca.display());
    let s = tls_server(ServerCert::Localhost);
    // The certificate lists IP:127.0.0.1 and DNS:localhost.
    for host in ["127.0.0.1", "localhost"] {
        let p = pool(&url_to(&s, host, &format!("tls_mode=verify_identity&{ca}")));
        assert!(!cipher(&p).is_empty(), "via {host}");
    }

    // This one only names db.staunch.test.
    let other = tls_server(ServerCert::OtherName);
    let p = pool(&url_to(
        &other,
        "127.0.0.1",
        &format!("tls_mode=verify_identity&{ca}"),
    ));
    assert_rejected_fast(
        &p,
        &[
            "tls_mode=verify_identity",
            "names db.staunch.test, not 127.0.0.1",
        ],
    );
    let p = pool(&url_to(
        &other,
        "localhost",
        &format!("tls_mode=verify_identity&{ca}"),
    ));
    assert_rejected_fast(&p, &["names db.staunch.test, not localhost"]);
    // verify_ca checks the chain only: the same server passes.
    let p = pool(&url_to(
        &other,
        "127.0.0.1",
        &format!("tls_mode=verify_ca&{ca}"),
    ));
    assert!(!cipher(&p).is_empty());
}

#[test]
fn client_certificate_for_a_require_x509_user() {
    let s = tls_server(ServerCert::Localhost);
    s.sql("CREATE USER 'x509'@'%' IDENTIFIED BY 'x509-pw' REQUIRE X509");
    s.sql("GRANT ALL ON staunch_test.* TO 'x509'@'%'");
    let certs = test_certs();
    let url = s.url().replace("app:app-secret@", "x509:x509-pw@");
    let ca = format!("tls_ca={}", certs.ca.display());

    let p = pool(&format!(
        "{url}?tls_mode=verify_identity&{ca}&tls_cert={}&tls_key={}",
        certs.client_cert.display(),
        certs.client_key.display()
    ));
    let mut c = p.get().unwrap();
    let row: Option<(String, String)> = c.query_first("SHOW STATUS LIKE 'Ssl_cipher'").unwrap();
    assert!(!row.unwrap().1.is_empty());
    drop(c);

    // Through the builder, the same.
    let p = Pool::builder()
        .url(&url)
        .tls_mode(staunch::TlsMode::Required)
        .tls_cert(Some(certs.client_cert.to_str().unwrap()))
        .tls_key(Some(certs.client_key.to_str().unwrap()))
        .build()
        .unwrap();
    drop(p.get().unwrap());

    // Encrypted, but no client certificate: the server refuses.
    let p = pool(&format!("{url}?tls_mode=verify_identity&{ca}"));
    let e = assert_rejected_fast(&p, &["Access denied"]);
    assert_eq!(e.server_code(), Some(1045), "{e}");
}

#[test]
fn server_without_tls() {
    let s = MariaDb::start();
    let p = pool(&format!("{}?tls_mode=required", s.url()));
    assert_rejected_fast(&p, &["tls_mode=required", "the server does not offer TLS"]);
    let p = pool(&format!(
        "{}?tls_mode=verify_identity&tls_ca={}",
        s.url(),
        test_certs().ca.display()
    ));
    assert_rejected_fast(&p, &["does not offer TLS"]);

    // preferred: plaintext here, TLS where offered.
    let p = pool(&format!("{}?tls_mode=preferred&max_size=1", s.url()));
    assert_eq!(cipher(&p), "");
    assert_eq!(p.stats().connect_failures, 0);
    let t = tls_server(ServerCert::Localhost);
    let p = pool(&format!("{}?tls_mode=preferred", t.url()));
    assert!(!cipher(&p).is_empty());
}

/// A fake server that greets with `CLIENT_SSL`, then reads the client's
/// TLS request and ClientHello and never answers the first connection.
/// Returns the listener (later connects stay in its backlog, unanswered, while
/// it lives) and a handle yielding (bytes received, how long the first
/// connection stayed open).
fn tls_black_hole() -> (TcpListener, thread::JoinHandle<(Vec<u8>, Duration)>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let l = listener.try_clone().unwrap();
    let h = thread::spawn(move || {
        let (mut sock, _) = l.accept().unwrap();
        let t = Instant::now();
        // Protocol 10 greeting.
        let caps: u32 = 0x0000_0001 // LONG_PASSWORD
            | 0x0000_0004 // LONG_FLAG
            | 0x0000_0008 // CONNECT_WITH_DB
            | 0x0000_0200 // PROTOCOL_41
            | 0x0000_0800 // SSL
            | 0x0000_2000 // TRANSACTIONS
            | 0x0000_8000 // SECURE_CONNECTION
            | 0x0001_0000 // MULTI_STATEMENTS
            | 0x0002_0000 // MULTI_RESULTS
            | 0x0008_0000 // PLUGIN_AUTH
            | 0x0080_0000; // SESSION_TRACK
        let mut p = vec![10u8];
        p.extend_from_slice(b"5.5.5-10.11.0-MariaDB\0");
        p.extend_from_slice(&7u32.to_le_bytes());
        p.extend_from_slice(b"abcdefgh\0");
        p.extend_from_slice(&(caps as u16).to_le_bytes());
        p.push(45); // utf8mb4_general_ci
        p.extend_from_slice(&2u16.to_le_bytes()); // autocommit
        p.extend_from_slice(&((caps >> 16) as u16).to_le_bytes());
        p.push(21);
        p.extend_from_slice(&[0u8; 10]);
        p.extend_from_slice(b"ijklmnopqrst\0");
        p.extend_from_slice(b"mysql_native_password\0");
        let mut pkt = (p.len() as u32).to_le_bytes()[..3].to_vec();
        pkt.push(0);
        pkt.extend_from_slice(&p);
        sock.write_all(&pkt).unwrap();
        let mut got = Vec::new();
        let _ = sock.set_read_timeout(Some(Duration::from_secs(10)));
        let mut buf = [0u8; 4096];
        while let Ok(n) = sock.read(&mut buf) {
            if n == 0 {
                break;
            }
            got.extend_from_slice(&buf[..n]);
        }
        (got, t.elapsed())
    });
    (listener, h)
}

#[test]
fn a_tls_handshake_that_never_completes_is_cut_off_at_connect_timeout() {
    let (listener, server) = tls_black_hole();
    let port = listener.local_addr().unwrap().port();
    let p = pool(&format!(
        "mysql://app:pw@127.0.0.1:{port}/db?tls_mode=required&connect_timeout=500ms\
         &connection_timeout=800ms&max_size=1&adder_threads=1"
    ));
    let t = Instant::now();
    let e = p.get().expect_err("nothing can connect");
    let took = t.elapsed();
    let (got, open) = server.join().unwrap();
    drop(p);
    drop(listener);
    assert_eq!(e.kind(), ErrorKind::Unreachable, "{e}");
    assert!(took < Duration::from_millis(1300), "get took {took:?}: {e}");
    let text = e.to_string();
    assert!(
        text.contains("timed out after") && text.contains("connect_timeout=500ms"),
        "{text}"
    );
    // The client sent its 36-byte TLS request, then a TLS handshake record:
    // the connect was stuck inside the TLS handshake when it was cut off.
    assert!(got.len() > 36, "received only {} bytes", got.len());
    assert_eq!(
        &got[36..38],
        &[0x16, 0x03],
        "a TLS handshake record follows the TLS request"
    );
    assert!(
        // (The per-read timeout, connect_timeout + 500ms, would end it at
        // about 1s: the watchdog must have shut it down well before that.)
        open >= Duration::from_millis(400) && open < Duration::from_millis(850),
        "the socket was shut down after {open:?}, not at connect_timeout (500ms)"
    );
}
