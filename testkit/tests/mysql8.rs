//! The kit's second server implementation (Vitess's `go/mysql` server) seen
//! by a client nobody here wrote, the `mysql` crate, and, where the crate
//! hides it, byte by byte: the greeting's fields, which `caching_sha2_password`
//! path (fast 0x03 or full 0x04) the server takes, and what it does with a
//! public key request.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::time::Duration;

use mysql::mysql_common::scramble::scramble_sha256;
use mysql::prelude::Queryable;
use mysql::{Conn, Opts};
use staunch_testkit::mysql8::{NATIVE_PASS, NATIVE_USER, SHA2_PASS, SHA2_USER};
use staunch_testkit::{AuthPlugin, Mysql8, Mysql8Opts, ServerCert};

const CLIENT_PROTOCOL_41: u32 = 0x200;
const CLIENT_SSL: u32 = 0x800;
const CLIENT_SECURE_CONNECTION: u32 = 0x8000;
const CLIENT_PLUGIN_AUTH: u32 = 0x8_0000;
const CLIENT_CONNECT_ATTRS: u32 = 0x10_0000;
const CLIENT_PLUGIN_AUTH_LENENC: u32 = 0x20_0000;
const CLIENT_DEPRECATE_EOF: u32 = 0x100_0000;
const SERVER_STATUS_AUTOCOMMIT: u16 = 0x2;

fn tls_server() -> Mysql8 {
    Mysql8::start_with(Mysql8Opts {
        tls: Some(ServerCert::Localhost),
        ..Mysql8Opts::default()
    })
}

fn connect(opts: impl Into<Opts>) -> mysql::Result<Conn> {
    Conn::new(opts)
}

fn current_user(c: &mut Conn) -> String {
    c.query_first::<String, _>("SELECT CURRENT_USER()")
        .expect("SELECT CURRENT_USER()")
        .expect("a row")
}

fn select_one(c: &mut Conn) -> i64 {
    c.query_first::<i64, _>("SELECT 1")
        .expect("SELECT 1")
        .expect("a row")
}

fn server_error_code(e: &mysql::Error) -> Option<u16> {
    match e {
        mysql::Error::MySqlError(m) => Some(m.code),
        _ => None,
    }
}

// ---------------------------------------------------------------------------
// Packets by hand.

fn read_packet(s: &mut impl Read) -> (u8, Vec<u8>) {
    let mut head = [0u8; 4];
    s.read_exact(&mut head).expect("packet header");
    let len = u32::from_le_bytes([head[0], head[1], head[2], 0]) as usize;
    let mut payload = vec![0u8; len];
    s.read_exact(&mut payload).expect("packet payload");
    (head[3], payload)
}

fn write_packet(s: &mut impl Write, seq: u8, payload: &[u8]) {
    let len = (payload.len() as u32).to_le_bytes();
    let mut p = vec![len[0], len[1], len[2], seq];
    p.extend_from_slice(payload);
    s.write_all(&p).expect("write packet");
}

/// The fields of a HandshakeV10 packet that the tests look at.
#[derive(Debug)]
struct Greeting {
    protocol: u8,
    version: String,
    capabilities: u32,
    status: u16,
    salt: Vec<u8>,
    plugin: String,
}

fn parse_greeting(p: &[u8]) -> Greeting {
    let at = |i: usize| {
        *p.get(i)
            .unwrap_or_else(|| panic!("greeting too short at {i}: {p:?}"))
    };
    let nul = |from: usize| {
        from + p[from..]
            .iter()
            .position(|&b| b == 0)
            .unwrap_or_else(|| panic!("no NUL after byte {from} of the greeting"))
    };
    let version_end = nul(1);
    let version = String::from_utf8_lossy(&p[1..version_end]).into_owned();
    let mut i = version_end + 1 + 4; // connection id
    let mut salt = p.get(i..i + 8).expect("salt part 1").to_vec();
    i += 8 + 1; // filler
    let low = u16::from_le_bytes([at(i), at(i + 1)]) as u32;
    i += 2 + 1; // charset
    let status = u16::from_le_bytes([at(i), at(i + 1)]);
    i += 2;
    let high = u16::from_le_bytes([at(i), at(i + 1)]) as u32;
    i += 2;
    let auth_len = at(i) as usize;
    i += 1 + 10;
    let part2 = auth_len.saturating_sub(8).max(13);
    // Part 2 ends with a NUL that is not part of the salt.
    salt.extend_from_slice(p.get(i..i + part2 - 1).expect("salt part 2"));
    i += part2;
    let plugin_end = nul(i);
    Greeting {
        protocol: at(0),
        version,
        capabilities: low | high << 16,
        status,
        salt,
        plugin: String::from_utf8_lossy(&p[i..plugin_end]).into_owned(),
    }
}

fn capability_names(c: u32) -> Vec<&'static str> {
    const NAMES: [&str; 26] = [
        "LONG_PASSWORD",
        "FOUND_ROWS",
        "LONG_FLAG",
        "CONNECT_WITH_DB",
        "NO_SCHEMA",
        "COMPRESS",
        "ODBC",
        "LOCAL_FILES",
        "IGNORE_SPACE",
        "PROTOCOL_41",
        "INTERACTIVE",
        "SSL",
        "IGNORE_SIGPIPE",
        "TRANSACTIONS",
        "RESERVED",
        "SECURE_CONNECTION",
        "MULTI_STATEMENTS",
        "MULTI_RESULTS",
        "PS_MULTI_RESULTS",
        "PLUGIN_AUTH",
        "CONNECT_ATTRS",
        "PLUGIN_AUTH_LENENC_CLIENT_DATA",
        "CAN_HANDLE_EXPIRED_PASSWORDS",
        "SESSION_TRACK",
        "DEPRECATE_EOF",
        "OPTIONAL_RESULTSET_METADATA",
    ];
    (0..NAMES.len())
        .filter(|b| c & (1 << b) != 0)
        .map(|b| NAMES[b])
        .collect()
}

/// A HandshakeResponse41 for `caching_sha2_password`.
fn sha2_response(user: &str, pass: &str, salt: &[u8]) -> Vec<u8> {
    let caps = CLIENT_PROTOCOL_41
        | CLIENT_SECURE_CONNECTION
        | CLIENT_PLUGIN_AUTH
        | CLIENT_PLUGIN_AUTH_LENENC
        | CLIENT_DEPRECATE_EOF;
    let mut r = caps.to_le_bytes().to_vec();
    r.extend_from_slice(&(16u32 << 20).to_le_bytes());
    r.push(45); // utf8mb4_general_ci
    r.extend_from_slice(&[0; 23]);
    r.extend_from_slice(user.as_bytes());
    r.push(0);
    let scramble = scramble_sha256(salt, pass.as_bytes()).expect("a non-empty password");
    r.push(scramble.len() as u8);
    r.extend_from_slice(&scramble);
    r.extend_from_slice(b"caching_sha2_password\0");
    r
}

/// Logs in as `user` over the unix socket by hand, up to the server's
/// answer to the scramble: `(seq, payload)`.
fn sha2_login(s: &mut UnixStream, user: &str, pass: &str) -> (u8, Vec<u8>) {
    let (_, greeting) = read_packet(s);
    let g = parse_greeting(&greeting);
    assert_eq!(g.plugin, "caching_sha2_password", "{g:?}");
    write_packet(s, 1, &sha2_response(user, pass, &g.salt));
    read_packet(s)
}

fn unix(server: &Mysql8) -> UnixStream {
    let s = UnixStream::connect(server.socket_path()).expect("connect to the unix socket");
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s
}

// ---------------------------------------------------------------------------

#[test]
fn greeting_looks_like_mysql_8() {
    for tls in [false, true] {
        let server = if tls { tls_server() } else { Mysql8::start() };
        let mut s = TcpStream::connect(server.addr()).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let (seq, payload) = read_packet(&mut s);
        let g = parse_greeting(&payload);
        eprintln!(
            "greeting (tls {tls}): version {:?}, plugin {}, capabilities {:#010x} = {}",
            g.version,
            g.plugin,
            g.capabilities,
            capability_names(g.capabilities).join("|")
        );
        assert_eq!((seq, g.protocol), (0, 10));
        assert_eq!(g.version, server.server_version());
        assert!(g.version.starts_with("8."), "{:?}", g.version);
        assert_eq!(g.plugin, "caching_sha2_password");
        assert_eq!(g.salt.len(), 20);
        let wanted = CLIENT_PROTOCOL_41
            | CLIENT_SECURE_CONNECTION
            | CLIENT_PLUGIN_AUTH
            | CLIENT_PLUGIN_AUTH_LENENC
            | CLIENT_CONNECT_ATTRS
            | CLIENT_DEPRECATE_EOF;
        assert_eq!(g.capabilities & wanted, wanted, "{:#x}", g.capabilities);
        assert_eq!(g.capabilities & CLIENT_SSL != 0, tls);
        assert_eq!(g.status, SERVER_STATUS_AUTOCOMMIT, "status flags");
    }
}

#[test]
fn sha2_user_over_tls() {
    let server = tls_server();
    // The first login takes the full authentication, the second the fast path.
    for _ in 0..2 {
        let mut c = connect(server.opts(SHA2_USER, SHA2_PASS)).expect("sha2 over TLS");
        assert_eq!(select_one(&mut c), 1);
        assert_eq!(current_user(&mut c), "sha2@%");
    }
    let e = connect(server.opts(SHA2_USER, "wrong")).expect_err("a wrong password");
    assert_eq!(server_error_code(&e), Some(1045), "{e}");
}

#[test]
fn sha2_user_over_unix_socket() {
    let server = Mysql8::start();
    for _ in 0..2 {
        let mut c =
            connect(server.socket_opts(SHA2_USER, SHA2_PASS)).expect("sha2 over the socket");
        assert_eq!(select_one(&mut c), 1);
        assert_eq!(current_user(&mut c), "sha2@%");
    }
}

#[test]
fn sha2_user_through_an_auth_switch() {
    // A greeting that names mysql_native_password: the server switches the
    // sha2 account to caching_sha2_password (AuthSwitchRequest), as MySQL
    // does for an account whose plugin differs from the default.
    let server = Mysql8::start_with(Mysql8Opts {
        tls: Some(ServerCert::Localhost),
        greeting_plugin: AuthPlugin::MysqlNativePassword,
        ..Mysql8Opts::default()
    });
    let mut s = TcpStream::connect(server.addr()).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let (_, greeting) = read_packet(&mut s);
    assert_eq!(parse_greeting(&greeting).plugin, "mysql_native_password");
    drop(s);
    for opts in [
        server.opts(SHA2_USER, SHA2_PASS),
        server.socket_opts(SHA2_USER, SHA2_PASS),
    ] {
        let mut c = connect(opts).expect("sha2 after a switch");
        assert_eq!(current_user(&mut c), "sha2@%");
    }
    let mut c = connect(server.opts(NATIVE_USER, NATIVE_PASS)).expect("native");
    assert_eq!(current_user(&mut c), "native@%");
}

#[test]
fn sha2_user_over_plain_tcp_is_refused() {
    // Vitess's caching_sha2_password takes no user over plain TCP, whether
    // or not the password is cached (and has no RSA key to offer).
    for warm_sha2_cache in [false, true] {
        let server = Mysql8::start_with(Mysql8Opts {
            warm_sha2_cache,
            ..Mysql8Opts::default()
        });
        let e = connect(server.opts(SHA2_USER, SHA2_PASS)).expect_err("sha2 over plain TCP");
        eprintln!("sha2 over plain TCP (warm cache {warm_sha2_cache}): {e}");
        assert_eq!(server_error_code(&e), Some(2012), "{e}");
    }
}

#[test]
fn native_user_over_tcp_tls_and_socket() {
    let plain = Mysql8::start();
    let tls = tls_server();
    for opts in [
        plain.opts(NATIVE_USER, NATIVE_PASS),
        tls.opts(NATIVE_USER, NATIVE_PASS),
        plain.socket_opts(NATIVE_USER, NATIVE_PASS),
    ] {
        let mut c = connect(opts).expect("native");
        assert_eq!(select_one(&mut c), 1);
        assert_eq!(current_user(&mut c), "native@%");
    }
    let e = connect(plain.opts(NATIVE_USER, "wrong")).expect_err("a wrong password");
    assert_eq!(server_error_code(&e), Some(1045), "{e}");
}

#[test]
fn statements_ping_and_errors() {
    let server = Mysql8::start();
    let mut c = connect(server.opts(NATIVE_USER, NATIVE_PASS)).expect("native");
    let version: String = c.query_first("SELECT @@version").unwrap().unwrap();
    assert_eq!(version, server.server_version());
    let id: u64 = c.query_first("SELECT CONNECTION_ID()").unwrap().unwrap();
    assert_eq!(id, c.connection_id() as u64);
    c.query_drop("SET NAMES utf8mb4").expect("SET");
    c.ping().expect("COM_PING");
    let e = c
        .query_drop("SELECT NOW()")
        .expect_err("not a statement it knows");
    assert_eq!(server_error_code(&e), Some(1235), "{e}");
    let e = c
        .query_drop("SELECT @@no_such_thing")
        .expect_err("unknown variable");
    assert_eq!(server_error_code(&e), Some(1193), "{e}");
    // The connection survives its errors.
    assert_eq!(select_one(&mut c), 1);
}

#[test]
fn sha2_full_then_fast_path_then_full_after_flush() {
    let server = Mysql8::start();
    let full = |server: &Mysql8| {
        let mut s = unix(server);
        let (seq, answer) = sha2_login(&mut s, SHA2_USER, SHA2_PASS);
        assert_eq!(
            (seq, answer.as_slice()),
            (2, &[0x01, 0x04][..]),
            "full auth asked"
        );
        // Over the socket the clear password is what it wants.
        let mut pass = SHA2_PASS.as_bytes().to_vec();
        pass.push(0);
        write_packet(&mut s, 3, &pass);
        let (_, ok) = read_packet(&mut s);
        assert_eq!(ok.first(), Some(&0x00), "OK after the full auth: {ok:?}");
    };
    let fast = |server: &Mysql8| {
        let mut s = unix(server);
        let (seq, answer) = sha2_login(&mut s, SHA2_USER, SHA2_PASS);
        assert_eq!(
            (seq, answer.as_slice()),
            (2, &[0x01, 0x03][..]),
            "fast path"
        );
        let (_, ok) = read_packet(&mut s);
        assert_eq!(ok.first(), Some(&0x00), "OK after the fast path: {ok:?}");
        // 0x00, affected rows 0, insert id 0, then the status flags.
        let status = ok.get(3..5).map(|b| u16::from_le_bytes([b[0], b[1]]));
        assert_eq!(status, Some(SERVER_STATUS_AUTOCOMMIT), "{ok:?}");
    };
    full(&server);
    fast(&server);
    fast(&server);
    let mut admin = connect(server.socket_opts(NATIVE_USER, NATIVE_PASS)).unwrap();
    admin.query_drop("FLUSH PRIVILEGES").unwrap();
    full(&server);

    // A wrong scramble against the cache is refused at once.
    let mut s = unix(&server);
    let (_, answer) = sha2_login(&mut s, SHA2_USER, "wrong");
    assert_eq!(answer.first(), Some(&0xff), "ERR: {answer:?}");

    // A warm cache takes the fast path from the first login.
    let warm = Mysql8::start_with(Mysql8Opts {
        warm_sha2_cache: true,
        ..Mysql8Opts::default()
    });
    fast(&warm);
}

#[test]
fn sha2_public_key_request_is_not_served() {
    let server = Mysql8::start();
    let mut s = unix(&server);
    let (_, answer) = sha2_login(&mut s, SHA2_USER, SHA2_PASS);
    assert_eq!(answer, [0x01, 0x04]);
    // What a client on an insecure line sends: "give me your RSA key".
    write_packet(&mut s, 3, &[0x02]);
    let (_, reply) = read_packet(&mut s);
    let text = String::from_utf8_lossy(&reply);
    eprintln!("answer to the public key request: {text:?}");
    assert_eq!(reply.first(), Some(&0xff), "an ERR, not a key: {text:?}");
    // ER_UNKNOWN_ERROR: Vitess read the 0x02 as a password without its NUL.
    assert_eq!(
        reply.get(1..3),
        Some(&1105u16.to_le_bytes()[..]),
        "{text:?}"
    );
}

#[test]
fn gone_with_its_directory_on_drop() {
    let server = Mysql8::start();
    let (pid, dir) = (server.pid(), server.dir().to_path_buf());
    assert!(server.is_running());
    assert!(server.socket_path().exists());
    drop(server);
    assert!(!dir.exists(), "{} left behind", dir.display());
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists(),
        "server pid {pid} still there"
    );
}

/// Whether `pid` has exited (gone, or a zombie nobody reaped yet).
fn exited(pid: u64) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        // "pid (comm) S ...": the state follows the last ')'.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])),
    }
}

#[test]
fn command_line_serves_and_dies_with_a_killed_parent() {
    use std::io::BufRead;
    use std::process::{Command, Stdio};

    let mut kit = Command::new(env!("CARGO_BIN_EXE_staunch-testkit"))
        .args(["mysql8", "--tls"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("run staunch-testkit");
    let stdout = kit.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    // Long enough for a cold `go build` on two busy cores.
    let line = rx
        .recv_timeout(Duration::from_secs(300))
        .expect("a ready line within 300 s");
    let ready: serde_json::Value = serde_json::from_str(&line).expect("JSON");
    assert_eq!(ready["ready"], true, "{line}");
    assert_eq!(ready["kind"], "mysql8", "{line}");
    let url = ready["url"].as_str().expect("url");
    assert!(url.starts_with("mysql://sha2:"), "{url}");
    assert!(url.contains("tls_mode=verify_identity&tls_ca="), "{url}");
    let port = ready["port"].as_u64().expect("port") as u16;
    let ca = ready["tls"]["ca"].as_str().expect("tls.ca").to_string();
    let sha2 = &ready["users"]["sha2"];
    assert_eq!(sha2["plugin"], "caching_sha2_password");
    let opts = mysql::OptsBuilder::new()
        .ip_or_hostname(Some("127.0.0.1"))
        .tcp_port(port)
        .prefer_socket(false)
        .user(sha2["user"].as_str())
        .pass(sha2["password"].as_str())
        .ssl_opts(Some(
            mysql::SslOpts::default().with_root_cert_path(Some(std::path::PathBuf::from(ca))),
        ));
    let mut c = connect(opts).expect("sha2 over TLS through the command line's server");
    assert_eq!(current_user(&mut c), "sha2@%");
    drop(c);

    let server_pid = ready["server_pid"].as_u64().expect("server_pid");
    assert!(!exited(server_pid));
    let stdin = kit.stdin.as_mut().unwrap();
    stdin.write_all(b"status\nfreeze\n").unwrap();
    let status: serde_json::Value =
        serde_json::from_str(&rx.recv_timeout(Duration::from_secs(10)).unwrap()).unwrap();
    assert_eq!(status["mysql8"]["pid"], server_pid, "{status}");
    assert_eq!(status["mysql8"]["running"], true, "{status}");
    let freeze: serde_json::Value =
        serde_json::from_str(&rx.recv_timeout(Duration::from_secs(10)).unwrap()).unwrap();
    assert_eq!(freeze["ok"], false, "{freeze}");
    kit.kill().expect("SIGKILL the command line");
    kit.wait().expect("reap it");
    let t0 = std::time::Instant::now();
    while !exited(server_pid) {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "server pid {server_pid} outlived its killed parent by 10 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let refused = TcpStream::connect(("127.0.0.1", port)).is_err();
    assert!(refused, "port {port} still open after the server exited");
}
