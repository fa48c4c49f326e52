//! Authentication in the wire layer's own handshake (`Framer::connect`)
//! against a real MariaDB, over TCP and over the server's unix socket:
//! `mysql_native_password` with and without a password, `client_ed25519`
//! (reached by the server's auth switch: MariaDB greets with
//! `mysql_native_password`), PAM's `mysql_clear_password` and `dialog`,
//! and a plugin staunch does not speak.
//!
//! Every stream is recorded: the password must never leave in the clear
//! over TCP, and where the client refuses, nothing may leave after the
//! handshake response. `caching_sha2_password`, which MariaDB does not
//! speak, is tested against the byte sequences of MySQL's documentation
//! (src/wire/handshake.rs, `exchanges`).

use std::cell::RefCell;
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::rc::Rc;
use std::time::Duration;

use staunch::wire::{AuthPlugin, Columns, Framer, Login, Next, Response, Stream, Tls, WireError};
use staunch_testkit::{test_certs, MariaDb, ServerCert, ServerOpts};

/// A stream that keeps a copy of every byte the client writes.
#[derive(Debug)]
struct Recorded<S> {
    inner: S,
    written: Rc<RefCell<Vec<u8>>>,
}

impl<S: Read> Read for Recorded<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.read(buf)
    }
}

impl<S: Write> Write for Recorded<S> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.written.borrow_mut().extend_from_slice(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Via {
    Tcp,
    Unix,
}

/// A session opened by the layer, or its error, and the bytes the client
/// sent. The error's text and Debug output never hold the password.
type Outcome<S> = (
    Result<(Framer<Stream<Recorded<S>>>, AuthPlugin), WireError>,
    Vec<u8>,
);

fn log_in_on<S: Read + Write>(stream: S, login: &Login<'_>) -> Outcome<S> {
    log_in_tls(stream, login, None)
}

fn log_in_tls<S: Read + Write>(stream: S, login: &Login<'_>, tls: Option<&Tls>) -> Outcome<S> {
    let written = Rc::new(RefCell::new(Vec::new()));
    let rec = Recorded {
        inner: stream,
        written: written.clone(),
    };
    let got = Framer::connect(rec, login, tls).map(|(f, g)| (f, g.auth_plugin));
    if let Err(e) = &got {
        let text = format!("{e} {e:?}");
        assert!(!text.trim().is_empty());
        if !login.password.is_empty() {
            assert!(!text.contains(login.password), "{text}");
        }
    }
    let sent = written.borrow().clone();
    (got, sent)
}

fn tcp(s: &MariaDb) -> TcpStream {
    let t = TcpStream::connect_timeout(&s.addr(), Duration::from_secs(10)).expect("TCP connect");
    t.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    t.set_write_timeout(Some(Duration::from_secs(30))).unwrap();
    t
}

fn unix(s: &MariaDb) -> UnixStream {
    let u = UnixStream::connect(s.socket_path()).expect("unix connect");
    u.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    u.set_write_timeout(Some(Duration::from_secs(30))).unwrap();
    u
}

/// Logs `user` in over `via`; `allow_cleartext` as given. Returns the
/// outcome as the session's `CURRENT_USER()` and plugin, and what was sent.
fn log_in(
    s: &MariaDb,
    via: Via,
    user: &str,
    password: &str,
    allow_cleartext: bool,
) -> (Result<(String, AuthPlugin), WireError>, Vec<u8>) {
    let login = Login {
        user,
        password,
        unix_socket: via == Via::Unix,
        allow_cleartext,
        ..Login::default()
    };
    match via {
        Via::Tcp => {
            let (got, sent) = log_in_on(tcp(s), &login);
            (got.map(|(mut f, p)| (current_user(&mut f), p)), sent)
        }
        Via::Unix => {
            let (got, sent) = log_in_on(unix(s), &login);
            (got.map(|(mut f, p)| (current_user(&mut f), p)), sent)
        }
    }
}

/// `SELECT CURRENT_USER()` on the session.
fn current_user<S: Read + Write>(f: &mut Framer<S>) -> String {
    f.send_query(b"SELECT CURRENT_USER()").unwrap();
    let mut cols = Columns::new();
    assert_eq!(f.read_response(&mut cols).unwrap(), Response::ResultSet);
    let mut user = None;
    while let Next::Row(r) = f.next_row().unwrap() {
        let cell = r.cells().next().flatten().unwrap();
        user = Some(String::from_utf8(cell.to_vec()).unwrap());
    }
    user.expect("a row")
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[test]
fn native_users_with_and_without_a_password() {
    let s = MariaDb::start();
    s.sql("CREATE USER nat@'%' IDENTIFIED BY 'nat-hunter2'");
    s.sql("CREATE USER nopw@'%'");
    for via in [Via::Tcp, Via::Unix] {
        let (got, sent) = log_in(&s, via, "nat", "nat-hunter2", false);
        let (user, plugin) = got.unwrap_or_else(|e| panic!("{via:?}: {e}"));
        assert_eq!(
            (user.as_str(), plugin),
            ("nat@%", AuthPlugin::NativePassword)
        );
        assert!(!contains(&sent, "nat-hunter2"), "{via:?}");

        let (got, _) = log_in(&s, via, "nopw", "", false);
        let (user, plugin) = got.unwrap_or_else(|e| panic!("{via:?}: {e}"));
        assert_eq!(
            (user.as_str(), plugin),
            ("nopw@%", AuthPlugin::NativePassword)
        );

        let (got, _) = log_in(&s, via, "nat", "not-nat-hunter2", false);
        match got {
            Err(WireError::Server(e)) => assert_eq!(e.code, 1045, "{e}"),
            other => panic!("{via:?}: {other:?}"),
        }
    }
}

#[test]
fn an_ed25519_user_by_the_servers_switch() {
    let s = MariaDb::start();
    s.sql("INSTALL SONAME 'auth_ed25519'");
    s.sql("CREATE USER ed@'%' IDENTIFIED VIA ed25519 USING PASSWORD('ed-hunter2')");
    s.sql("CREATE USER ednopw@'%' IDENTIFIED VIA ed25519 USING PASSWORD('')");
    for via in [Via::Tcp, Via::Unix] {
        let (got, sent) = log_in(&s, via, "ed", "ed-hunter2", false);
        let (user, plugin) = got.unwrap_or_else(|e| panic!("{via:?}: {e}"));
        assert_eq!((user.as_str(), plugin), ("ed@%", AuthPlugin::ClientEd25519));
        assert!(!contains(&sent, "ed-hunter2"), "{via:?}");

        // An empty password leaves the server's ed25519 without a key
        // (an empty authentication_string), and it refuses any
        // signature: MariaDB's own client gets 1045 too.
        let (got, _) = log_in(&s, via, "ednopw", "", false);
        match got {
            Err(WireError::Server(e)) => assert_eq!(e.code, 1045, "{e}"),
            other => panic!("{via:?}: {other:?}"),
        }

        let (got, sent) = log_in(&s, via, "ed", "not-ed-hunter2", false);
        match got {
            Err(WireError::Server(e)) => assert_eq!(e.code, 1045, "{e}"),
            other => panic!("{via:?}: {other:?}"),
        }
        assert!(!contains(&sent, "not-ed-hunter2"), "{via:?}");
    }
}

/// MariaDB with PAM, asking for `mysql_clear_password` when `cleartext`,
/// with TLS when `tls`.
fn pam_server(cleartext: bool, tls: bool) -> MariaDb {
    let mut args = vec!["--plugin-load-add=auth_pam".to_string()];
    if cleartext {
        args.push("--pam-use-cleartext-plugin".into());
    }
    let s = MariaDb::start_with(ServerOpts {
        args,
        tls: tls.then_some(ServerCert::Localhost),
        ..Default::default()
    });
    s.sql("CREATE USER pam@'%' IDENTIFIED VIA pam USING 'staunch-no-such-service'");
    s
}

#[test]
fn pams_cleartext_only_over_a_unix_socket_and_only_when_allowed() {
    let s = pam_server(true, false);
    const PW: &str = "pam-hunter2";
    // Plain TCP: refused by name, allowed or not, before the password.
    for allow in [false, true] {
        let (got, sent) = log_in(&s, Via::Tcp, "pam", PW, allow);
        let e = got.unwrap_err().to_string();
        assert!(e.contains("mysql_clear_password"), "{e}");
        assert!(e.contains("allow_cleartext_password"), "{e}");
        assert!(!contains(&sent, PW), "the password left over TCP");
    }
    // A unix socket, not allowed: refused, nothing sent.
    let (got, sent) = log_in(&s, Via::Unix, "pam", PW, false);
    let e = got.unwrap_err().to_string();
    assert!(
        e.contains("not allowed: set allow_cleartext_password=true"),
        "{e}"
    );
    assert!(!contains(&sent, PW));
    // Allowed, over the unix socket: sent, and the verdict is the
    // server's (PAM has no such service, so no such user).
    let (got, sent) = log_in(&s, Via::Unix, "pam", PW, true);
    assert!(contains(&sent, PW), "the password was sent");
    match got {
        Err(WireError::Server(e)) => assert_eq!(e.code, 1045, "{e}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn pams_dialog_and_an_old_plugin_are_refused_by_name() {
    let s = pam_server(false, false);
    const PW: &str = "pam-hunter2";
    for via in [Via::Tcp, Via::Unix] {
        let (got, sent) = log_in(&s, via, "pam", PW, true);
        let e = got.unwrap_err().to_string();
        assert!(
            e.contains("the server asks for the authentication plugin \"dialog\" (MariaDB's PAM)"),
            "{e}"
        );
        assert!(!contains(&sent, PW));
    }
    // A plugin staunch does not speak, for a user of this server: named
    // as soon as the server asks for it.
    s.sql("SET GLOBAL secure_auth = OFF");
    s.sql(
        "CREATE USER old@'%' IDENTIFIED VIA mysql_old_password \
         USING '5d2e19393cc5ef67'",
    );
    let (got, _) = log_in(&s, Via::Tcp, "old", "old-hunter2", false);
    let e = got.unwrap_err().to_string();
    assert!(e.contains("\"mysql_old_password\""), "{e}");
}

/// TLS trusting the test kit's CA, for the server name 127.0.0.1.
fn tls() -> Tls {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::CertificateDer;
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(&test_certs().ca).expect("the CA file") {
        roots.add(cert.expect("a certificate")).unwrap();
    }
    let config = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    Tls {
        config: std::sync::Arc::new(config),
        server_name: "127.0.0.1".try_into().unwrap(),
    }
}

#[test]
fn pams_cleartext_over_tls_when_allowed() {
    let s = pam_server(true, true);
    const PW: &str = "pam-hunter2";
    let tls = tls();
    let login = |allow_cleartext| Login {
        user: "pam",
        password: PW,
        allow_cleartext,
        ..Login::default()
    };
    // Not allowed: refused by name, over TLS too.
    let (got, _) = log_in_tls(tcp(&s), &login(false), Some(&tls));
    let e = got.unwrap_err().to_string();
    assert!(
        e.contains("not allowed: set allow_cleartext_password=true"),
        "{e}"
    );
    // Allowed: sent inside TLS (the bytes on the socket never hold it),
    // and the verdict is the server's.
    let (got, sent) = log_in_tls(tcp(&s), &login(true), Some(&tls));
    assert!(!contains(&sent, PW), "the password left outside TLS");
    match got {
        Err(WireError::Server(e)) => assert_eq!(e.code, 1045, "{e}"),
        other => panic!("{other:?}"),
    }
    // The same server's native user over TLS, for the contrast: it logs
    // in, with the plugin named.
    let (got, _) = log_in_tls(
        tcp(&s),
        &Login {
            user: "app",
            password: "app-secret",
            ..Login::default()
        },
        Some(&tls),
    );
    let (mut f, plugin) = got.unwrap();
    assert!(f.stream().is_tls());
    assert_eq!(plugin, AuthPlugin::NativePassword);
    assert!(current_user(&mut f).starts_with("app@"));
}

/// `caching_sha2_password` against a server no one here wrote: the test
/// kit's Vitess server, which greets as MySQL 8 does and serves the plugin
/// as MySQL 8 does (full authentication at a user's first login, the fast
/// path once it is cached; no login at all over plain TCP). Over the unix
/// socket the recorded bytes show which path ran: the password crosses only
/// in the full one.
#[test]
fn caching_sha2_against_the_second_server() {
    use staunch::wire::{Pem, TlsSettings, Verify};
    use staunch_testkit::{Mysql8, Mysql8Opts};

    let m = Mysql8::start_with(Mysql8Opts {
        tls: Some(ServerCert::Localhost),
        ..Mysql8Opts::default()
    });
    let (user, password) = ("sha2", "sha2-secret");
    let login = Login {
        user,
        password,
        unix_socket: true,
        ..Login::default()
    };
    let pw = password.as_bytes();
    let holds_password = |sent: &[u8]| sent.windows(pw.len()).any(|w| w == pw);
    for (round, full) in [("first", true), ("second", false)] {
        let sock = UnixStream::connect(m.socket_path()).unwrap();
        sock.set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let (got, sent) = log_in_on(sock, &login);
        let (mut f, plugin) = got.unwrap_or_else(|e| panic!("{round} login: {e}"));
        assert_eq!(plugin, AuthPlugin::CachingSha2Password);
        assert_eq!(current_user(&mut f), "sha2@%");
        assert_eq!(
            holds_password(&sent),
            full,
            "{round} login: full authentication?"
        );
    }

    // Over TLS, verified against the test CA: the full exchange (after a
    // FLUSH PRIVILEGES the cache is empty again) and then the fast path.
    let sock = UnixStream::connect(m.socket_path()).unwrap();
    let (mut f, _) = log_in_on(sock, &login).0.unwrap();
    f.send_query(b"FLUSH PRIVILEGES").unwrap();
    assert!(matches!(
        f.read_response(&mut Columns::new()).unwrap(),
        Response::Ok(_)
    ));
    let ca = std::fs::read(&test_certs().ca).unwrap();
    let tls = Tls::new(&TlsSettings {
        ca: Some(Pem::new(ca, test_certs().ca.display().to_string())),
        ..TlsSettings::new(Verify::Identity, "127.0.0.1")
    })
    .unwrap();
    for round in ["first", "second"] {
        let tcp = TcpStream::connect(m.addr()).unwrap();
        tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let tcp_login = Login {
            unix_socket: false,
            ..login.clone()
        };
        let (got, sent) = log_in_tls(tcp, &tcp_login, Some(&tls));
        let (mut f, plugin) = got.unwrap_or_else(|e| panic!("{round} TLS login: {e}"));
        assert_eq!(plugin, AuthPlugin::CachingSha2Password);
        assert_eq!(current_user(&mut f), "sha2@%");
        assert!(
            !holds_password(&sent),
            "the password crossed TCP in the clear"
        );
    }

    // Plain TCP: the server lets no caching_sha2_password user in; the
    // refusal is the server's, and the password never left.
    let tcp = TcpStream::connect(m.addr()).unwrap();
    let (got, sent) = log_in_on(
        tcp,
        &Login {
            unix_socket: false,
            get_server_public_key: true,
            ..login.clone()
        },
    );
    match got {
        Err(WireError::Server(e)) => assert!(e.code > 0, "{e}"),
        Err(e) => panic!("not the server's refusal: {e}"),
        Ok(_) => panic!("Vitess logged a sha2 user in over plain TCP"),
    }
    assert!(!holds_password(&sent));

    // A mysql_native_password user over plain TCP: the greeting names
    // caching_sha2_password, the server switches to the user's plugin.
    let tcp = TcpStream::connect(m.addr()).unwrap();
    let (got, _) = log_in_on(
        tcp,
        &Login {
            user: "native",
            password: "native-secret",
            ..Login::default()
        },
    );
    let (mut f, plugin) = got.unwrap_or_else(|e| panic!("native login: {e}"));
    assert_eq!(plugin, AuthPlugin::NativePassword);
    assert_eq!(current_user(&mut f), "native@%");
}
