//! The wire layer against a real MariaDB, answer by answer beside the
//! `mysql` crate on the same connection: the crate opens the connection
//! (the layer has no handshake yet), the layer speaks on a duplicate of its
//! socket, and both must see the same columns, cells, counts and errors.
//!
//! The crate's connection set-up fails when it asks for
//! `CLIENT_DEPRECATE_EOF`, so a borrowed socket has the old EOF packets;
//! sessions the layer opens itself (`Framer::connect`) have the new ends,
//! and answer the same statements as the crate on a connection of its own.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mysql::consts::CapabilityFlags;
use mysql::prelude::Queryable;
use staunch::wire::{
    caps, status, Columns, Framer, Greeting, Login, Next, Response, Stream, Tls, WireError,
};
use staunch_testkit::{test_certs, MariaDb, ServerCert, ServerOpts};

/// What one answer of a command was, in terms both clients can give.
#[derive(Debug, PartialEq)]
enum Answer {
    Ok {
        affected_rows: u64,
        last_insert_id: u64,
        warnings: u16,
        info: Vec<u8>,
    },
    Rows {
        columns: Vec<Col>,
        rows: Vec<Vec<Option<Vec<u8>>>>,
    },
    Error(u16, String),
}

/// A column's definition, every field both clients give.
#[derive(Debug, PartialEq)]
struct Col {
    name: Vec<u8>,
    org_name: Vec<u8>,
    table: Vec<u8>,
    org_table: Vec<u8>,
    schema: Vec<u8>,
    column_type: u8,
    flags: u16,
    charset: u16,
    length: u32,
    decimals: u8,
}

/// A connection opened by the crate, and the layer on a duplicate of its
/// socket. `extra` capabilities are asked for at the handshake.
fn pair(s: &MariaDb, extra: u32) -> (mysql::Conn, Framer<TcpStream>) {
    let wanted = caps::SESSION_TRACK | extra;
    let opts = s
        .app_opts()
        .additional_capabilities(CapabilityFlags::from_bits_truncate(wanted));
    let conn = mysql::Conn::new(opts).expect("connect");
    // SAFETY: the fd is the crate's open socket, borrowed only to dup it.
    let fd = unsafe { BorrowedFd::borrow_raw(conn.as_raw_fd()) }
        .try_clone_to_owned()
        .expect("dup");
    let stream = TcpStream::from(fd);
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    (conn, Framer::new(stream, caps::PROTOCOL_41 | wanted))
}

fn by_crate(conn: &mut mysql::Conn, sql: &str) -> Vec<Answer> {
    let mut out = Vec::new();
    let mut result = match conn.query_iter(sql) {
        Ok(r) => r,
        Err(mysql::Error::MySqlError(e)) => return vec![Answer::Error(e.code, e.state)],
        Err(e) => panic!("{sql}: {e}"),
    };
    while let Some(mut set) = result.iter() {
        let columns = set.columns();
        let columns: Vec<_> = columns
            .as_ref()
            .iter()
            .map(|c| Col {
                name: c.name_ref().to_vec(),
                org_name: c.org_name_ref().to_vec(),
                table: c.table_ref().to_vec(),
                org_table: c.org_table_ref().to_vec(),
                schema: c.schema_ref().to_vec(),
                column_type: c.column_type() as u8,
                flags: c.flags().bits(),
                charset: c.character_set(),
                length: c.column_length(),
                decimals: c.decimals(),
            })
            .collect();
        let is_rows = !columns.is_empty();
        // Read before the set is walked: the walk moves the crate's state on
        // to the next result.
        let ok = Answer::Ok {
            affected_rows: set.affected_rows(),
            last_insert_id: set.last_insert_id().unwrap_or(0),
            warnings: set.warnings(),
            info: set.info_ref().to_vec(),
        };
        let mut rows = Vec::new();
        let mut failed = None;
        for row in set.by_ref() {
            match row {
                Ok(row) => rows.push(
                    row.unwrap()
                        .into_iter()
                        .map(|v| match v {
                            mysql::Value::NULL => None,
                            mysql::Value::Bytes(b) => Some(b),
                            other => panic!("a text-protocol cell as {other:?}"),
                        })
                        .collect(),
                ),
                Err(mysql::Error::MySqlError(e)) => failed = Some(Answer::Error(e.code, e.state)),
                Err(e) => panic!("{sql}: {e}"),
            }
        }
        if let Some(f) = failed {
            out.push(f);
            return out;
        }
        out.push(if is_rows {
            // (The crate's `warnings()` says 0 after a result set's
            // old-style end: `a_result_sets_warnings` asks the server.)
            Answer::Rows { columns, rows }
        } else {
            ok
        });
    }
    out
}

fn by_wire<S: Read + Write>(f: &mut Framer<S>, sql: &str) -> Vec<Answer> {
    f.send_query(sql.as_bytes()).expect("send");
    let mut out = Vec::new();
    let mut columns = Columns::new();
    loop {
        let more = match f.read_response(&mut columns) {
            Ok(Response::Ok(ok)) => {
                out.push(Answer::Ok {
                    affected_rows: ok.affected_rows,
                    last_insert_id: ok.last_insert_id,
                    warnings: ok.warnings,
                    info: ok.info,
                });
                ok.status
            }
            Ok(Response::ResultSet) => {
                let cols = (0..columns.len())
                    .map(|i| {
                        let c = columns.get(i).unwrap().expect("a column definition");
                        Col {
                            name: c.name.to_vec(),
                            org_name: c.org_name.to_vec(),
                            table: c.table.to_vec(),
                            org_table: c.org_table.to_vec(),
                            schema: c.schema.to_vec(),
                            column_type: c.column_type,
                            flags: c.flags,
                            charset: c.charset,
                            length: c.length,
                            decimals: c.decimals,
                        }
                    })
                    .collect();
                let mut rows = Vec::new();
                let end = loop {
                    match f.next_row() {
                        Ok(Next::Row(r)) => {
                            assert_eq!(r.len(), columns.len());
                            rows.push(r.cells().map(|c| c.map(<[u8]>::to_vec)).collect());
                        }
                        Ok(Next::End(end)) => break Ok(end),
                        Err(e) => break Err(e),
                    }
                };
                match end {
                    Ok(end) => {
                        out.push(Answer::Rows {
                            columns: cols,
                            rows,
                        });
                        end.status
                    }
                    Err(WireError::Server(e)) => {
                        out.push(Answer::Error(
                            e.code,
                            String::from_utf8_lossy(&e.state).into(),
                        ));
                        return out;
                    }
                    Err(e) => panic!("{sql}: {e}"),
                }
            }
            Err(WireError::Server(e)) => {
                assert!(!WireError::Server(e.clone()).is_fatal());
                out.push(Answer::Error(
                    e.code,
                    String::from_utf8_lossy(&e.state).into(),
                ));
                return out;
            }
            Err(e) => panic!("{sql}: {e}"),
        };
        if more & status::MORE_RESULTS_EXISTS == 0 {
            return out;
        }
    }
}

/// Statements without side effects: each runs through both, in turn.
const READS: &[&str] = &[
    "SELECT 1",
    "SELECT NULL AS n, '' AS empty, 'héllo ☃' AS s, x'00ff10' AS b, 1.50 AS d, -3 AS i, \
     CAST('2026-12-03 10:00:00.5' AS DATETIME(1)) AS t, 18446744073709551615 AS big, 1e300 AS f",
    "SELECT 1 FROM DUAL WHERE 0",
    "SELECT seq, CONCAT('row ', seq, REPEAT('.', seq % 300)) AS s FROM seq_1_to_5000",
    "SELECT REPEAT('x', 300), REPEAT('y', 70000), REPEAT('z', 250)",
    "SELECT 1/0",
    "SELECT 1; SELECT 2 AS two, 'x'; DO 1; SELECT * FROM seq_1_to_3 WHERE 0",
    "SELECT * FROM no_such_table",
    "SELECT 1; SELECT * FROM no_such_table; SELECT 3",
    "SELECT CAST(seq AS UNSIGNED) FROM seq_1_to_3 WHERE 1 = (SELECT 1 UNION SELECT 2)",
    "SELECT @a, @@sql_mode",
];

/// Statements with side effects, on a table of each client's own (`{t}`):
/// the same answers.
const WRITES: &[&str] = &[
    "CREATE TEMPORARY TABLE {t} (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(20) NOT NULL, \
     u BIGINT UNSIGNED, d DECIMAL(30,2))",
    "INSERT INTO {t} (v, u, d) VALUES ('a', 1, 1.01), ('b', NULL, NULL), ('c', 3, -2.5)",
    "INSERT INTO {t} (v) VALUES ('d')",
    "UPDATE {t} SET v = CONCAT(v, v) WHERE id > 1",
    "INSERT INTO {t} (v, u) VALUES (NULL, -1)",
    "SELECT id AS ident, v, u, d FROM {t} AS alias ORDER BY id; SET @a = 5; DELETE FROM {t} WHERE id = 2",
];

#[test]
fn answers_match_the_mysql_crate() {
    let s = MariaDb::start();
    let (mut conn, mut f) = pair(&s, 0);
    compare_all(&mut conn, &mut f);
}

/// WRITES, then READS, through the layer and through the crate.
fn compare_all<S: Read + Write>(conn: &mut mysql::Conn, f: &mut Framer<S>) {
    for sql in WRITES {
        let wire = by_wire(f, &sql.replace("{t}", "tw"));
        let mut krate = by_crate(conn, &sql.replace("{t}", "tc"));
        // The one difference allowed: the table's name in column definitions.
        for a in &mut krate {
            if let Answer::Rows { columns, .. } = a {
                for c in columns {
                    if c.org_table == b"tc" {
                        c.org_table = b"tw".to_vec();
                    }
                }
            }
        }
        assert_eq!(wire, krate, "{sql}");
    }
    for sql in READS {
        assert_eq!(by_wire(f, sql), by_crate(conn, sql), "{sql}");
        assert!(
            !f.has_buffered_input(),
            "{sql}: bytes left after the answer"
        );
    }
}

/// A result set's end carries its warning count, as the server counts it.
#[test]
fn a_result_sets_warnings() {
    let s = MariaDb::start();
    let (mut conn, mut f) = pair(&s, 0);
    for (sql, want) in [
        ("SELECT 1/0, 2/0 FROM seq_1_to_1", 2),
        ("SELECT seq FROM seq_1_to_2", 0),
        ("SELECT CAST('x' AS INT) FROM seq_1_to_1", 1),
    ] {
        f.send_query(sql.as_bytes()).unwrap();
        assert_eq!(
            f.read_response(&mut Columns::new()).unwrap(),
            Response::ResultSet
        );
        let end = loop {
            if let Next::End(end) = f.next_row().unwrap() {
                break end;
            }
        };
        let count: u16 = conn.query_first("SHOW COUNT(*) WARNINGS").unwrap().unwrap();
        assert_eq!((end.warnings, count), (want, want), "{sql}");
    }
}

/// A row of more than 16 MiB arrives in chunks and is joined.
#[test]
fn a_row_larger_than_one_packet() {
    let s = MariaDb::start();
    s.set_global("max_allowed_packet", "64 * 1024 * 1024");
    let (mut conn, mut f) = pair(&s, 0);
    let sql = "SELECT REPEAT('a', 17000000) AS big, 'tail'";
    let wire = by_wire(&mut f, sql);
    let Answer::Rows { rows, .. } = &wire[0] else {
        panic!("{wire:?}")
    };
    assert_eq!(rows[0][0].as_ref().map(Vec::len), Some(17_000_000));
    assert_eq!(rows[0][1].as_deref(), Some(&b"tail"[..]));
    assert_eq!(wire, by_crate(&mut conn, sql));
    // The same in a statement: a command of more than 16 MiB is split.
    let long = format!("SELECT LENGTH('{}')", "b".repeat(16 * 1024 * 1024 + 3));
    let Answer::Rows { rows, .. } = &by_wire(&mut f, &long)[0] else {
        panic!()
    };
    assert_eq!(rows[0][0].as_deref(), Some(&b"16777219"[..]));
}

/// The server's status flags arrive: `NO_BACKSLASH_ESCAPES` once set, and
/// an open transaction.
#[test]
fn status_flags_follow_the_session() {
    let s = MariaDb::start();
    let (_conn, mut f) = pair(&s, 0);
    let mut columns = Columns::new();
    let mut ok = |f: &mut Framer<TcpStream>, sql: &str| {
        f.send_query(sql.as_bytes()).unwrap();
        match f.read_response(&mut columns).unwrap() {
            Response::Ok(ok) => ok,
            other => panic!("{other:?}"),
        }
    };
    let st = ok(&mut f, "SET sql_mode = 'NO_BACKSLASH_ESCAPES'").status;
    assert_ne!(st & status::NO_BACKSLASH_ESCAPES, 0);
    let st = ok(&mut f, "BEGIN").status;
    assert_ne!(st & status::IN_TRANS, 0);
    let st = ok(&mut f, "SET sql_mode = DEFAULT").status;
    assert_eq!(st & status::NO_BACKSLASH_ESCAPES, 0);
    assert_ne!(st & status::IN_TRANS, 0);
    let st = ok(&mut f, "COMMIT").status;
    assert_eq!(st & status::IN_TRANS, 0);
}

/// `LOAD DATA LOCAL INFILE` is refused, the server is told, and the
/// connection goes on.
#[test]
fn a_local_file_request_is_refused_and_the_connection_survives() {
    let s = MariaDb::start();
    let (_conn, mut f) = pair(&s, 0);
    by_wire(&mut f, "CREATE TEMPORARY TABLE li (a INT)");
    f.send_query(b"LOAD DATA LOCAL INFILE '/etc/hostname' INTO TABLE li")
        .unwrap();
    let e = f.read_response(&mut Columns::new()).unwrap_err();
    assert!(matches!(e, WireError::LocalInfileRefused), "{e}");
    assert!(!e.is_fatal());
    let rows = only_rows(by_wire(&mut f, "SELECT COUNT(*) FROM li"));
    assert_eq!(rows, [vec![Some(b"0".to_vec())]]);
}

/// A refused local file in a text of several statements: the statements
/// after it run on the server (it cannot be stopped once it has asked), and
/// their answers are read off with the refusal, so the next command gets
/// its own answer, not one of theirs.
#[test]
fn a_local_file_refused_mid_text_leaves_no_answer_behind() {
    let s = MariaDb::start();
    let (_conn, mut f) = pair(&s, 0);
    by_wire(&mut f, "CREATE TEMPORARY TABLE li (a INT)");
    f.send_query(
        b"LOAD DATA LOCAL INFILE '/etc/hostname' INTO TABLE li; SELECT 42; INSERT INTO li VALUES (5)",
    )
    .unwrap();
    let e = f.read_response(&mut Columns::new()).unwrap_err();
    assert!(matches!(e, WireError::LocalInfileRefused), "{e}");
    assert!(!e.is_fatal());
    let rows = only_rows(by_wire(&mut f, "SELECT 7"));
    assert_eq!(
        rows,
        [vec![Some(b"7".to_vec())]],
        "the next command's own answer"
    );
    let rows = only_rows(by_wire(&mut f, "SELECT COUNT(*), SUM(a) FROM li"));
    assert_eq!(
        rows,
        [vec![Some(b"1".to_vec()), Some(b"5".to_vec())]],
        "the INSERT after it ran"
    );

    // After a result set, and two of them in a row (the second refused
    // within the first's refusal).
    let load = "LOAD DATA LOCAL INFILE '/etc/hostname' INTO TABLE li";
    f.send_query(format!("SELECT 1; {load}; {load}; SELECT 9").as_bytes())
        .unwrap();
    let mut columns = Columns::new();
    assert!(matches!(
        f.read_response(&mut columns),
        Ok(Response::ResultSet)
    ));
    while let Next::Row(_) = f.next_row().unwrap() {}
    let e = f.read_response(&mut columns).unwrap_err();
    assert!(matches!(e, WireError::LocalInfileRefused), "{e}");
    let rows = only_rows(by_wire(&mut f, "SELECT 8"));
    assert_eq!(
        rows,
        [vec![Some(b"8".to_vec())]],
        "the next command's own answer"
    );
}

/// The rows of an answer that is one result set and nothing more.
fn only_rows(answer: Vec<Answer>) -> Vec<Vec<Option<Vec<u8>>>> {
    match <[Answer; 1]>::try_from(answer) {
        Ok([Answer::Rows { rows, .. }]) => rows,
        other => panic!("one result set expected: {other:?}"),
    }
}

/// A server that stops answering: the read ends at the socket's time
/// limit, as a fatal error.
#[test]
fn a_frozen_server_ends_at_the_sockets_time_limit() {
    let s = MariaDb::start();
    let (_conn, mut f) = pair(&s, 0);
    f.stream()
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    s.freeze();
    let t = Instant::now();
    f.send_query(b"SELECT 1").unwrap();
    let e = f.read_response(&mut Columns::new()).unwrap_err();
    let took = t.elapsed();
    s.thaw();
    assert!(
        matches!(&e, WireError::Io(io) if matches!(io.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut)),
        "{e}"
    );
    assert!(e.is_fatal());
    assert!(took < Duration::from_secs(5), "{took:?}");
}

/// A connection the server kills mid-answer: an error, never a hang or a
/// wrong row.
#[test]
fn a_killed_connection_is_an_error() {
    let s = MariaDb::start();
    let (mut conn, mut f) = pair(&s, 0);
    let id: u64 = conn.query_first("SELECT CONNECTION_ID()").unwrap().unwrap();
    f.send_query(b"SELECT SLEEP(10)").unwrap();
    std::thread::sleep(Duration::from_millis(200));
    s.sql(&format!("KILL {id}"));
    let mut columns = Columns::new();
    let e = match f.read_response(&mut columns) {
        Err(e) => e,
        // The server may send the result set's head, then the end.
        Ok(Response::ResultSet) => loop {
            match f.next_row() {
                Err(e) => break e,
                Ok(Next::End(_)) => panic!("a killed statement ended normally"),
                Ok(Next::Row(_)) => {}
            }
        },
        Ok(other) => panic!("{other:?}"),
    };
    assert!(matches!(e, WireError::Server(_) | WireError::Io(_)), "{e}");
}

/// A session the layer opens itself: `mysql_native_password`, the flags it
/// asks for (the new result-set ends among them), and the same answers as
/// the crate's on a connection of its own.
fn own(
    s: &MariaDb,
    user: &str,
    password: &str,
) -> Result<(Framer<Stream<TcpStream>>, Greeting), WireError> {
    own_tls(s, user, password, None)
}

fn own_tls(
    s: &MariaDb,
    user: &str,
    password: &str,
    tls: Option<&Tls>,
) -> Result<(Framer<Stream<TcpStream>>, Greeting), WireError> {
    let stream =
        TcpStream::connect_timeout(&s.addr(), Duration::from_secs(10)).expect("TCP connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    stream
        .set_write_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    Framer::connect(
        stream,
        &Login {
            user,
            password,
            database: Some("staunch_test"),
            extra_caps: caps::MULTI_STATEMENTS,
            ..Login::default()
        },
        tls,
    )
}

#[test]
fn a_session_of_its_own_answers_like_the_crate() {
    let s = MariaDb::start();
    // The test kit's application user.
    let (mut f, greeting) = own(&s, "app", "app-secret").expect("log in");
    assert_ne!(
        f.caps() & caps::DEPRECATE_EOF,
        0,
        "the server agreed to the new ends"
    );
    assert!(greeting.version.contains("MariaDB"), "{greeting:?}");
    let Answer::Rows { rows, .. } =
        &by_wire(&mut f, "SELECT CONNECTION_ID(), DATABASE(), CURRENT_USER()")[0]
    else {
        panic!()
    };
    let id = greeting.connection_id.to_string().into_bytes();
    assert_eq!(rows[0][0].as_ref(), Some(&id));
    assert_eq!(rows[0][1].as_deref(), Some(&b"staunch_test"[..]));
    assert!(rows[0][2].as_ref().unwrap().starts_with(b"app@"));

    let mut conn = mysql::Conn::new(s.app_opts()).expect("connect");
    compare_all(&mut conn, &mut f);
}

#[test]
fn a_wrong_password_is_the_servers_refusal_and_is_not_repeated() {
    let s = MariaDb::start();
    let e = own(&s, "app", "not-the-hunter2-password").unwrap_err();
    let WireError::Server(se) = &e else {
        panic!("{e}")
    };
    assert_eq!(se.code, 1045, "{e}");
    assert!(!format!("{e} {e:?}").contains("hunter2"), "{e}");
}

/// Incident A's shape: the TCP connection is accepted (by the kernel) and
/// the greeting never comes. The login ends at the socket's time limit.
#[test]
fn a_greeting_that_never_comes_ends_at_the_time_limit() {
    let s = MariaDb::start();
    s.freeze();
    let stream =
        TcpStream::connect_timeout(&s.addr(), Duration::from_secs(5)).expect("the kernel accepts");
    stream
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let t = Instant::now();
    let e = Framer::connect(
        stream,
        &Login {
            user: "app",
            password: "app-secret",
            ..Login::default()
        },
        None,
    )
    .unwrap_err();
    let took = t.elapsed();
    s.thaw();
    assert!(
        matches!(&e, WireError::Io(io) if matches!(io.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut)),
        "{e}"
    );
    assert!(took < Duration::from_secs(5), "{took:?}");
}

/// TLS trusting `ca` (a PEM file), for the server name 127.0.0.1.
fn tls_trusting(ca: &std::path::Path) -> Tls {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::CertificateDer;
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(ca).expect("the CA file") {
        roots.add(cert.expect("a certificate")).unwrap();
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    Tls {
        config: Arc::new(config),
        server_name: "127.0.0.1".try_into().unwrap(),
    }
}

#[test]
fn a_session_over_tls() {
    let s = MariaDb::start_with(ServerOpts {
        tls: Some(ServerCert::Localhost),
        ..Default::default()
    });
    let (mut f, _) = own_tls(
        &s,
        "app",
        "app-secret",
        Some(&tls_trusting(&test_certs().ca)),
    )
    .expect("log in over TLS");
    assert!(f.stream().is_tls());
    let Answer::Rows { rows, .. } = &by_wire(&mut f, "SHOW SESSION STATUS LIKE 'Ssl_version'")[0]
    else {
        panic!()
    };
    let version = String::from_utf8(rows[0][1].clone().unwrap()).unwrap();
    assert!(version.starts_with("TLSv1."), "{version}");
    // A large answer crosses TLS records whole.
    let mut conn = mysql::Conn::new(s.app_opts()).expect("connect");
    compare_all(&mut conn, &mut f);
}

#[test]
fn tls_with_an_unknown_ca_or_no_tls_on_the_server_is_refused() {
    let s = MariaDb::start_with(ServerOpts {
        tls: Some(ServerCert::Localhost),
        ..Default::default()
    });
    let e = own_tls(
        &s,
        "app",
        "app-secret",
        Some(&tls_trusting(&test_certs().other_ca)),
    )
    .unwrap_err();
    assert!(e.to_string().contains("UnknownIssuer"), "{e}");
    assert!(!e.to_string().contains("app-secret"), "{e}");

    let plain = MariaDb::start();
    let e = own_tls(
        &plain,
        "app",
        "app-secret",
        Some(&tls_trusting(&test_certs().ca)),
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("the server does not offer TLS"),
        "{e}"
    );
}

/// The sockets this process holds open (fds of /proc/self/fd that are
/// sockets).
fn open_sockets() -> usize {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter(|l| l.to_string_lossy().starts_with("socket:"))
        .count()
}

/// The library's buffered text statements (the C ABI's `query`, under
/// every binding) read on plain and TLS sessions alike, on the session's
/// own socket (no duplicate fd taken); the same answers, and the session's
/// bookkeeping the same (a transaction opened through the C ABI is rolled
/// back on return).
#[test]
fn the_c_abi_reads_text_answers_on_plain_and_tls_sessions_alike() {
    use staunch::ffi::*;
    use std::ffi::CString;
    use std::ptr::null_mut;

    let plain = MariaDb::start();
    plain.sql("CREATE TABLE staunch_test.t (v INT)");
    let tls = MariaDb::start_with(ServerOpts {
        tls: Some(ServerCert::Localhost),
        ..Default::default()
    });
    tls.sql("CREATE TABLE staunch_test.t (v INT)");
    for (server, params) in [(&plain, ""), (&tls, "&tls_mode=required")] {
        let url = CString::new(format!("{}?max_size=1{params}", server.url())).unwrap();
        let mut pool = null_mut();
        assert_eq!(
            staunch_pool_open(url.as_ptr(), &mut pool, null_mut()),
            STAUNCH_OK
        );
        let get = || {
            let mut conn = null_mut();
            assert_eq!(
                staunch_pool_get(pool, 5000, &mut conn, null_mut()),
                STAUNCH_OK
            );
            conn
        };
        // Every value of the first row of each result set of `sql`.
        let query = |conn, sql: &str| -> Vec<Vec<i64>> {
            let (st, rows, _) = c_query(conn, sql);
            assert_eq!(st, STAUNCH_OK);
            c_sets(rows, |rows| {
                let mut set = Vec::new();
                let mut has = false;
                assert_eq!(staunch_rows_next(rows, &mut has, null_mut()), STAUNCH_OK);
                if has {
                    for i in 0..staunch_rows_column_count(rows) {
                        let mut v = 0i64;
                        assert_eq!(
                            staunch_rows_get_i64(rows, i, &mut v, null_mut()),
                            STAUNCH_OK
                        );
                        set.push(v);
                    }
                }
                set
            })
        };
        let conn = get();
        let before = open_sockets();
        assert_eq!(
            query(conn, "SELECT 1, 2; SELECT 3"),
            vec![vec![1, 2], vec![3]]
        );
        assert_eq!(open_sockets(), before, "{params}: sockets taken");
        query(conn, "BEGIN");
        query(conn, "INSERT INTO t VALUES (7)");
        staunch_conn_free(conn);
        let conn = get();
        assert_eq!(
            query(conn, "SELECT COUNT(*) FROM t"),
            vec![vec![0]],
            "rolled back on return"
        );
        staunch_conn_free(conn);
        staunch_pool_free(pool);
    }
}

/// staunch reads no local files, on any path: it does not offer the
/// capability (`CLIENT_LOCAL_FILES`), so the server refuses `LOAD DATA LOCAL
/// INFILE` itself (MariaDB's error 4166), never "done" with an empty file,
/// through the C ABI and the Rust API, on a plain and a TLS session; in a
/// text of several statements the server stops there, as at any error,
/// and the session stays in step. (A server that asks for a file anyway is refused with 2068,
/// CR_LOAD_DATA_LOCAL_INFILE_REJECTED: no server here does.)
#[test]
fn a_local_file_request_is_refused_on_every_path() {
    use staunch::ffi::*;
    use staunch::prelude::*;
    use std::ffi::CStr;
    use std::ptr::null_mut;

    let load = "LOAD DATA LOCAL INFILE '/etc/hostname' INTO TABLE t";
    let text = format!("{load}; INSERT INTO t VALUES (5)");
    let plain = MariaDb::start();
    let tls = MariaDb::start_with(ServerOpts {
        tls: Some(ServerCert::Localhost),
        ..Default::default()
    });
    for (server, params) in [(&plain, ""), (&tls, "&tls_mode=required")] {
        server.sql("CREATE TABLE staunch_test.t (v INT)");
        let url = format!("{}?max_size=1{params}", server.url());

        // The C ABI.
        let (pool, conn) = c_pool_conn(&url);
        // (status, the server code of the error, the first value of the
        // first row)
        let query = |conn, sql: &str| -> (staunch_status, u32, Option<i64>) {
            let (st, rows, err) = c_query(conn, sql);
            if st != STAUNCH_OK {
                let code = staunch_error_server_code(err);
                let msg = unsafe { CStr::from_ptr(staunch_error_message(err)) };
                assert!(msg.to_string_lossy().contains("local infile"), "{msg:?}");
                staunch_error_free(err);
                return (st, code, None);
            }
            let mut has = false;
            assert_eq!(staunch_rows_next(rows, &mut has, null_mut()), STAUNCH_OK);
            let mut v = None;
            if has {
                let mut x = 0i64;
                assert_eq!(
                    staunch_rows_get_i64(rows, 0, &mut x, null_mut()),
                    STAUNCH_OK
                );
                v = Some(x);
            }
            staunch_rows_free(rows);
            (st, 0, v)
        };
        for sql in [load, &text] {
            let (st, code, _) = query(conn, sql);
            assert_ne!(st, STAUNCH_OK, "{url}: {sql}");
            assert_eq!(code, 4166, "{url}: {sql}");
            assert_eq!(query(conn, "SELECT 7"), (STAUNCH_OK, 0, Some(7)), "{url}");
        }
        assert_eq!(
            query(conn, "SELECT COUNT(*) FROM t"),
            (STAUNCH_OK, 0, Some(0)),
            "{url}: nothing loaded; the INSERT after the refusal did not run"
        );
        staunch_conn_free(conn);
        staunch_pool_free(pool);

        // The Rust API.
        let pool = staunch::Pool::from_url(&url).unwrap();
        let mut c = pool.get().unwrap();
        for sql in [load, &text] {
            let e = c.query_drop(sql).expect_err(sql);
            assert_eq!(e.server_code(), Some(4166), "{url}: {e}");
            assert!(e.message().contains("local infile"), "{e}");
            let v: Option<i64> = c.query_first("SELECT 7").unwrap();
            assert_eq!(v, Some(7), "{url}");
        }
        let n: Option<i64> = c.query_first("SELECT COUNT(*) FROM t").unwrap();
        assert_eq!(
            n,
            Some(0),
            "{url}: nothing loaded; the INSERTs after the refusals did not run"
        );
    }
}

/// A streamed answer read slowly is not a statement whose server stopped
/// answering: with a statement time limit of 1 s, a reader that stops for
/// 3 s after its first rows is never cut off by the client (which would
/// break the session). An answer the server has finished sending (it waits
/// in the socket meanwhile) is read whole; a longer one, whose server was
/// still sending when the limit passed, is ended by the server's own limit
/// (error 1969, the session in step). The client's bound applies to each
/// wait for the server instead (a frozen server: cbuild's test_fetch_ready).
/// The same for a text answer (the protocol layer) and a prepared one (the
/// crate's stream), and for the connection held idle after either ended.
#[test]
fn a_streamed_answer_read_slowly_is_not_cut() {
    use staunch::ffi::*;
    use std::ptr::null_mut;

    let server = MariaDb::start();
    let (pool, conn) = c_pool_conn(&format!("{}?max_size=1&query_timeout=1s", server.url()));
    let cases = [(5_000u64, false), (200_000, true)];
    // Text (the protocol layer) and prepared (the crate's stream).
    for ((rows_asked, may_end_early), way) in cases
        .iter()
        .flat_map(|c| [(*c, STAUNCH_QUERY_INTERPOLATE), (*c, STAUNCH_QUERY_PREPARE)])
    {
        let sql = format!("SELECT seq, REPEAT('x', 10) FROM seq_1_to_{rows_asked}");
        let (st, rows, _) = c_query_with(conn, &sql, STAUNCH_QUERY_STREAM | way);
        assert_eq!(st, STAUNCH_OK);
        let mut n = 0u64;
        let ended = loop {
            let (mut has, mut err) = (false, null_mut());
            if staunch_rows_next(rows, &mut has, &mut err) != STAUNCH_OK {
                break Some(c_error_code(err));
            }
            if !has {
                break None;
            }
            let mut v = 0u64;
            assert_eq!(
                staunch_rows_get_u64(rows, 0, &mut v, null_mut()),
                STAUNCH_OK
            );
            n += 1;
            assert_eq!(v, n, "{sql} ({way:#x})");
            if n == 10 {
                std::thread::sleep(Duration::from_secs(3));
            }
        };
        staunch_rows_free(rows);
        match ended {
            None => assert_eq!(n, rows_asked, "{sql} ({way:#x})"),
            Some(code) => {
                assert!(
                    may_end_early,
                    "{sql} ({way:#x}): error {code} after {n} rows"
                );
                assert_eq!(code, 1969, "{sql} ({way:#x}): the server's own limit");
            }
        }
        // Nor is the connection, held idle after the answer past the limit.
        std::thread::sleep(Duration::from_millis(1_500));
        assert!(!staunch_conn_is_broken(conn), "{sql} ({way:#x})");
        let (st, rows, _) = c_query(conn, "SELECT 7");
        assert_eq!(st, STAUNCH_OK, "{sql} ({way:#x})");
        staunch_rows_free(rows);
    }
    staunch_conn_free(conn);
    staunch_pool_free(pool);
}

/// `sql` through the C ABI's `staunch_conn_query_ex` (interpolated, no
/// parameters): its status, the row set (NULL on failure) and the error
/// (NULL on success).
fn c_query(
    conn: *mut staunch::ffi::staunch_conn,
    sql: &str,
) -> (
    staunch::ffi::staunch_status,
    *mut staunch::ffi::staunch_rows,
    *mut staunch::ffi::staunch_error,
) {
    c_query_with(conn, sql, staunch::ffi::STAUNCH_QUERY_INTERPOLATE)
}

/// [`c_query`] with these flags.
fn c_query_with(
    conn: *mut staunch::ffi::staunch_conn,
    sql: &str,
    flags: u32,
) -> (
    staunch::ffi::staunch_status,
    *mut staunch::ffi::staunch_rows,
    *mut staunch::ffi::staunch_error,
) {
    use staunch::ffi::*;
    let sql = std::ffi::CString::new(sql).unwrap();
    let (mut rows, mut err) = (std::ptr::null_mut(), std::ptr::null_mut());
    let st = staunch_conn_query_ex(
        conn,
        sql.as_ptr(),
        std::ptr::null(),
        0,
        flags,
        &mut rows,
        &mut err,
    );
    (st, rows, err)
}

/// A pool opened through the C ABI on `url`, and a connection of it.
fn c_pool_conn(
    url: &str,
) -> (
    *mut staunch::ffi::staunch_pool,
    *mut staunch::ffi::staunch_conn,
) {
    use staunch::ffi::*;
    use std::ptr::null_mut;
    let url = std::ffi::CString::new(url).unwrap();
    let mut pool = null_mut();
    assert_eq!(
        staunch_pool_open(url.as_ptr(), &mut pool, null_mut()),
        STAUNCH_OK
    );
    let mut conn = null_mut();
    assert_eq!(
        staunch_pool_get(pool, 5000, &mut conn, null_mut()),
        STAUNCH_OK
    );
    (pool, conn)
}

/// `read` of each result set of `rows` in turn (moving on with
/// `staunch_rows_next_result`); the row set is freed after the last.
fn c_sets<T>(
    rows: *mut staunch::ffi::staunch_rows,
    mut read: impl FnMut(*mut staunch::ffi::staunch_rows) -> T,
) -> Vec<T> {
    use staunch::ffi::*;
    let mut sets = Vec::new();
    loop {
        sets.push(read(rows));
        let mut more = false;
        assert_eq!(
            staunch_rows_next_result(rows, &mut more, std::ptr::null_mut()),
            STAUNCH_OK
        );
        if !more {
            break;
        }
    }
    staunch_rows_free(rows);
    sets
}

/// The server's error code of a failed call (freeing the error).
fn c_error_code(err: *mut staunch::ffi::staunch_error) -> u32 {
    use staunch::ffi::*;
    assert!(!err.is_null());
    let code = staunch_error_server_code(err);
    staunch_error_free(err);
    code
}

/// A streamed text answer (`STAUNCH_QUERY_STREAM`, the way every binding's
/// streaming queries go: database/sql's `Query`, Python's `SSCursor`,
/// JDBC's streaming result sets) is read on plain and TLS sessions alike,
/// on the session's own socket, with the same rows,
/// result sets and errors: the connection is busy while the first set is
/// read and free once it ends; a row set freed half read leaves nothing of
/// its answer behind; an error packet mid-answer (in the middle of the
/// rows, or a later statement's) ends the statement and not the session.
#[test]
fn streamed_text_answers_on_plain_and_tls_sessions_alike() {
    use staunch::ffi::*;
    use std::ptr::null_mut;

    let plain = MariaDb::start();
    let tls = MariaDb::start_with(ServerOpts {
        tls: Some(ServerCert::Localhost),
        ..Default::default()
    });
    const STREAM: u32 = STAUNCH_QUERY_STREAM | STAUNCH_QUERY_INTERPOLATE;
    for (server, params) in [(&plain, ""), (&tls, "&tls_mode=required")] {
        let url = format!("{}?max_size=1{params}", server.url());
        let (pool, conn) = c_pool_conn(&url);
        // The next row's first column (None at the end), or the error's
        // server code.
        let next = |rows| -> Result<Option<i64>, u32> {
            let (mut has, mut err) = (false, null_mut());
            if staunch_rows_next(rows, &mut has, &mut err) != STAUNCH_OK {
                return Err(c_error_code(err));
            }
            if !has {
                return Ok(None);
            }
            let mut v = 0i64;
            assert_eq!(
                staunch_rows_get_i64(rows, 0, &mut v, null_mut()),
                STAUNCH_OK
            );
            Ok(Some(v))
        };
        let select7 = |conn| {
            let (st, rows, _) = c_query(conn, "SELECT 7");
            assert_eq!(st, STAUNCH_OK);
            assert_eq!(next(rows), Ok(Some(7)), "{url:?}: the session in step");
            staunch_rows_free(rows);
        };
        let open = |conn, sql: &str| {
            let (st, rows, _) = c_query_with(conn, sql, STREAM);
            assert_eq!(st, STAUNCH_OK, "{sql}");
            rows
        };

        // Rows as they arrive, the connection busy meanwhile.
        let before = open_sockets();
        let rows = open(conn, "SELECT seq, CONCAT('r', seq) FROM seq_1_to_100000");
        assert_eq!(open_sockets(), before, "{url:?}: sockets taken");
        let (mut n, mut sum) = (0, 0);
        while let Some(v) = next(rows).unwrap() {
            n += 1;
            sum += v;
            if n == 1 {
                let (st, _, err) = c_query(conn, "SELECT 1");
                assert_eq!(st, STAUNCH_CONN_BUSY, "{url:?}");
                staunch_error_free(err);
            }
        }
        assert_eq!((n, sum), (100_000, 100_000 * 100_001 / 2), "{url:?}");
        // Free once the rows are read, the row set still alive.
        select7(conn);
        staunch_rows_free(rows);

        // Freed half read: the rest is read off, not left for the next.
        let rows = open(conn, "SELECT seq FROM seq_1_to_100000");
        for want in 1..=10 {
            assert_eq!(next(rows), Ok(Some(want)));
        }
        staunch_rows_free(rows);
        select7(conn);

        // Several results: the first streamed, the others after it; a
        // first result without rows.
        for (sql, want) in [
            ("SELECT 1, 2; SELECT 3", vec![vec![1], vec![3]]),
            ("SET @a = 5; SELECT @a", vec![vec![], vec![5]]),
            ("DO 1", vec![vec![]]),
        ] {
            let sets = c_sets(open(conn, sql), |rows| {
                std::iter::from_fn(|| next(rows).unwrap()).collect::<Vec<_>>()
            });
            assert_eq!(sets, want, "{url:?}: {sql}");
        }

        // An error after the first set: at its end; one in its rows (a
        // subquery of two rows where one belongs, met at row 50,000): where
        // it comes. Neither breaks the session.
        let rows = open(
            conn,
            "SELECT seq FROM seq_1_to_3; SELECT * FROM no_such_table",
        );
        assert_eq!(
            (next(rows), next(rows), next(rows)),
            (Ok(Some(1)), Ok(Some(2)), Ok(Some(3)))
        );
        assert_eq!(next(rows), Err(1146), "{url:?}");
        staunch_rows_free(rows);
        select7(conn);
        let rows = open(
            conn,
            "SELECT seq, IF(seq = 50000, (SELECT 1 UNION SELECT 2), 0) FROM seq_1_to_100000",
        );
        let mut seen = 0;
        let failed = loop {
            match next(rows) {
                Ok(Some(_)) => seen += 1,
                Ok(None) => break None,
                Err(code) => break Some(code),
            }
        };
        assert_eq!(failed, Some(1242), "{url:?}");
        assert!(seen < 50_000, "{url:?}: {seen} rows before the error");
        staunch_rows_free(rows);
        assert!(!staunch_conn_is_broken(conn), "{url:?}");
        select7(conn);

        staunch_conn_free(conn);
        staunch_pool_free(pool);
    }
}
