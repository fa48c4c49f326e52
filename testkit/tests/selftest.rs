//! Self-tests of the integration-test support code (real MariaDB servers and
//! the chaos proxy). Run with `cargo test -p staunch-testkit`.

use staunch_testkit as support;

use std::io::{ErrorKind, Read};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use mysql::{Conn, Opts, OptsBuilder};
use support::mariadb::{client_opts, APP_PASS, APP_USER, MONITOR_PASS, MONITOR_USER};
use support::{MariaDb, Mode, Proxy, ServerOpts, Topology, TopologyOpts};

fn app_conn(addr: SocketAddr, timeout: Duration) -> Result<Conn, mysql::Error> {
    Conn::new(client_opts(addr, APP_USER, APP_PASS, timeout))
}

fn server_port(c: &mut Conn) -> i64 {
    c.query_first::<i64, _>("SELECT @@port")
        .expect("SELECT @@port")
        .expect("a row")
}

fn wait_until(what: &str, timeout: Duration, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !cond() {
        assert!(
            Instant::now() < deadline,
            "timed out after {timeout:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn url_opts(url: &str) -> OptsBuilder {
    let opts = Opts::from_url(url).unwrap_or_else(|e| panic!("bad url {url}: {e}"));
    OptsBuilder::from_opts(opts)
        .prefer_socket(false)
        .tcp_connect_timeout(Some(Duration::from_secs(5)))
        .read_timeout(Some(Duration::from_secs(5)))
}

#[test]
fn server_starts_and_answers() {
    let t0 = Instant::now();
    let s = MariaDb::start();
    eprintln!("start took {:?}", t0.elapsed());
    assert!(s.is_running());
    assert!(s.pid() > 0);
    assert_eq!(s.addr().port(), s.port());
    assert_eq!(s.query_i64("SELECT 1"), Some(1));
    assert_eq!(s.query_i64("SELECT NULL"), None);
    assert_eq!(s.query_i64("SELECT 1 FROM DUAL WHERE 1 = 0"), None);
    assert_eq!(s.query_i64("SELECT @@max_connections"), Some(200));
    assert_eq!(s.query_i64("SELECT @@log_bin"), Some(0));
    assert_eq!(s.query_i64("SELECT @@port"), Some(i64::from(s.port())));

    let mut app = Conn::new(url_opts(&s.url())).expect("app connects with url()");
    let (user, db): (String, String) = app
        .query_first("SELECT CURRENT_USER(), DATABASE()")
        .expect("query")
        .expect("row");
    assert!(user.starts_with("app@"), "{user}");
    assert_eq!(db, "staunch_test");
    app.query_drop("CREATE TABLE app_t (id INT PRIMARY KEY) ENGINE=InnoDB")
        .expect("app can create tables");

    let mut root = Conn::new(url_opts(&s.root_url())).expect("root connects with root_url()");
    assert_eq!(
        root.query_first::<i64, _>("SELECT COUNT(*) FROM app_t")
            .expect("q"),
        Some(0)
    );

    let mut monitor = Conn::new(s.opts(MONITOR_USER, MONITOR_PASS)).expect("monitor connects");
    monitor
        .query_drop("SHOW SLAVE STATUS")
        .expect("monitor may SHOW SLAVE STATUS");
    monitor
        .query_drop("SELECT * FROM information_schema.PROCESSLIST")
        .expect("monitor may read the processlist");
    assert!(monitor.query_drop("CREATE TABLE nope (i INT)").is_err());

    Conn::new(s.opts("repl", "repl-secret").db_name(None::<String>)).expect("repl connects");
    assert!(s.error_log_tail().contains("ready for connections"));
}

#[test]
fn start_with_args_and_set_global() {
    let s = MariaDb::start_with(ServerOpts {
        args: vec!["--max-connections=12".into(), "--wait-timeout=2".into()],
        ..Default::default()
    });
    assert_eq!(s.query_i64("SELECT @@max_connections"), Some(12));
    assert_eq!(s.query_i64("SELECT @@global.wait_timeout"), Some(2));
    s.set_global("max_connections", "15");
    assert_eq!(s.query_i64("SELECT @@max_connections"), Some(15));
    s.sql("CREATE TABLE g (v VARCHAR(10))");
    s.sql("INSERT INTO g VALUES ('x')");
    assert_eq!(s.query_string("SELECT v FROM g").as_deref(), Some("x"));
}

#[test]
fn freeze_blocks_then_thaw_answers() {
    let s = MariaDb::start();
    let timeout = Duration::from_millis(500);
    // Short read timeout (to observe the freeze quickly); retried so that a
    // loaded machine cannot fail the setup itself.
    let mut before = (0..5)
        .find_map(|_| app_conn(s.addr(), timeout).ok())
        .expect("connect before freeze");
    let t0 = Instant::now();
    s.freeze();
    eprintln!("freeze took {:?}", t0.elapsed());
    assert!(s.is_running(), "a frozen server is still running");
    assert!(s.is_frozen());

    let t0 = Instant::now();
    assert!(
        before.query_drop("SELECT 1").is_err(),
        "query on a frozen server"
    );
    let waited = t0.elapsed();
    assert!(
        waited >= Duration::from_millis(400) && waited < Duration::from_secs(3),
        "{waited:?}"
    );

    let t0 = Instant::now();
    let err = app_conn(s.addr(), timeout).expect_err("connect to a frozen server");
    let waited = t0.elapsed();
    eprintln!("connect to frozen server failed after {waited:?}: {err}");
    assert!(
        waited >= Duration::from_millis(400) && waited < Duration::from_secs(3),
        "{waited:?}"
    );

    let t0 = Instant::now();
    s.thaw();
    eprintln!("thaw took {:?}", t0.elapsed());
    assert!(!s.is_frozen());
    assert_eq!(s.query_i64("SELECT 1"), Some(1));
    let mut after = app_conn(s.addr(), Duration::from_secs(5)).expect("connect after thaw");
    after.query_drop("SELECT 1").expect("query after thaw");
}

#[test]
fn kill9_then_restart_same_port() {
    let mut s = MariaDb::start();
    s.sql("CREATE TABLE k (id INT PRIMARY KEY) ENGINE=InnoDB");
    s.sql("INSERT INTO k VALUES (1), (2)");
    let (port, pid) = (s.port(), s.pid());
    let mut c = app_conn(s.addr(), Duration::from_secs(2)).expect("connect");

    let t0 = Instant::now();
    s.kill9();
    eprintln!("kill9 (reaped + port closed) took {:?}", t0.elapsed());
    assert!(!s.is_running());
    let e = TcpStream::connect(s.addr()).expect_err("port must refuse after kill9");
    assert_eq!(e.kind(), ErrorKind::ConnectionRefused);
    assert!(c.query_drop("SELECT 1").is_err());
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "old pid reaped"
    );

    let t0 = Instant::now();
    s.restart();
    eprintln!("restart after kill -9 took {:?}", t0.elapsed());
    assert!(s.is_running());
    assert_eq!(s.port(), port);
    assert_ne!(s.pid(), pid);
    assert_eq!(s.query_i64("SELECT @@port"), Some(i64::from(port)));
    assert_eq!(s.query_i64("SELECT COUNT(*) FROM k"), Some(2));
}

#[test]
fn stop_then_restart() {
    let mut s = MariaDb::start();
    s.sql("CREATE TABLE st (id INT PRIMARY KEY) ENGINE=InnoDB");
    s.sql("INSERT INTO st VALUES (7)");
    let t0 = Instant::now();
    s.stop();
    eprintln!("graceful stop took {:?}", t0.elapsed());
    assert!(!s.is_running());
    assert!(TcpStream::connect(s.addr()).is_err());
    let t0 = Instant::now();
    s.restart();
    eprintln!("restart after stop took {:?}", t0.elapsed());
    assert_eq!(s.query_i64("SELECT id FROM st"), Some(7));
    // restart() on a running server stops it first.
    let pid = s.pid();
    s.restart();
    assert_ne!(s.pid(), pid);
    assert_eq!(s.query_i64("SELECT id FROM st"), Some(7));
    // A frozen server can be stopped (SIGTERM, then SIGCONT) and restarted.
    s.freeze();
    let t0 = Instant::now();
    s.stop();
    eprintln!("graceful stop of a frozen server took {:?}", t0.elapsed());
    assert!(!s.is_running() && !s.is_frozen());
    s.restart();
    assert_eq!(s.query_i64("SELECT id FROM st"), Some(7));
}

#[test]
#[should_panic(expected = "unknown option '--no-such-option'")]
fn bad_args_panic_with_log_tail() {
    let _ = MariaDb::start_with(ServerOpts {
        args: vec!["--no-such-option".into()],
        ..Default::default()
    });
}

#[test]
fn kill_connections_drops_idle_sessions() {
    let s = MariaDb::start();
    let mut conns: Vec<Conn> = (0..3)
        .map(|_| app_conn(s.addr(), Duration::from_secs(2)).expect("connect"))
        .collect();
    for c in &mut conns {
        c.query_drop("SELECT 1").expect("select");
    }
    let _extra_root = s.admin();
    assert_eq!(s.connection_count("app"), 3);
    assert_eq!(
        s.connection_count("root"),
        1,
        "the other root session, not our own"
    );

    assert_eq!(s.kill_connections("app"), 3);
    assert_eq!(s.connection_count("app"), 0);
    for c in &mut conns {
        assert!(
            c.query_drop("SELECT 1").is_err(),
            "killed session must fail"
        );
    }
    assert_eq!(s.kill_connections("app"), 0);
    assert_eq!(
        s.kill_connections("root"),
        1,
        "kills the other root session only"
    );
    assert_eq!(s.connection_count("root"), 0);
}

#[test]
fn drop_kills_and_cleans_up_even_on_panic() {
    let (tx, rx) = std::sync::mpsc::channel();
    let r = std::thread::spawn(move || {
        let s = MariaDb::start();
        s.freeze();
        tx.send((s.pid(), s.dir().to_path_buf())).expect("send");
        panic!("deliberate panic with a frozen server in scope");
    })
    .join();
    assert!(r.is_err());
    let (pid, dir) = rx.recv().expect("server info");
    assert!(!Path::new(&format!("/proc/{pid}")).exists(), "process gone");
    assert!(!dir.exists(), "{} removed", dir.display());

    let s = MariaDb::start();
    let (pid, dir) = (s.pid(), s.dir().to_path_buf());
    let t0 = Instant::now();
    drop(s);
    eprintln!("drop took {:?}", t0.elapsed());
    assert!(!Path::new(&format!("/proc/{pid}")).exists());
    assert!(!dir.exists());
}

#[test]
fn proxy_pass_forwards() {
    let s = MariaDb::start();
    let p = Proxy::start(s.addr());
    assert_eq!(p.addr().port(), p.port());
    let mut c = app_conn(p.addr(), Duration::from_secs(2)).expect("connect via proxy");
    assert_eq!(server_port(&mut c), i64::from(s.port()));
    let big: Option<i64> = c
        .query_first("SELECT LENGTH(REPEAT('x', 3000000))")
        .expect("q");
    assert_eq!(big, Some(3_000_000));
    let blob: Option<Vec<u8>> = c.query_first("SELECT REPEAT('y', 2000000)").expect("q");
    assert_eq!(blob.map(|b| b.len()), Some(2_000_000));
    assert_eq!(p.accepted(), 1);
    assert_eq!(p.open_connections(), 1);
    assert_eq!(s.connection_count("app"), 1);
    drop(c);
    wait_until(
        "the proxied connection to close",
        Duration::from_secs(2),
        || p.open_connections() == 0,
    );
    wait_until("the server session to end", Duration::from_secs(2), || {
        s.connection_count("app") == 0
    });
}

#[test]
fn proxy_black_hole_never_greets() {
    let s = MariaDb::start();
    let p = Proxy::start(s.addr());
    let mut before = app_conn(p.addr(), Duration::from_secs(2)).expect("pass connection");
    p.set_mode(Mode::BlackHole);
    assert_eq!(p.mode(), Mode::BlackHole);

    let t0 = Instant::now();
    let err = app_conn(p.addr(), Duration::from_millis(300)).expect_err("black hole");
    let waited = t0.elapsed();
    eprintln!("black-holed connect failed after {waited:?}: {err}");
    assert!(
        waited >= Duration::from_millis(250) && waited < Duration::from_secs(3),
        "{waited:?}"
    );

    let mut raw = TcpStream::connect(p.addr()).expect("TCP connect succeeds");
    raw.set_read_timeout(Some(Duration::from_millis(200)))
        .expect("timeout");
    let mut buf = [0u8; 16];
    let e = raw.read(&mut buf).expect_err("no greeting");
    assert!(
        matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
        "{e}"
    );
    wait_until(
        "open = pass + raw black hole",
        Duration::from_secs(2),
        || p.open_connections() == 2,
    );
    assert_eq!(p.accepted(), 3);

    // The connection accepted in Pass mode keeps working.
    assert_eq!(server_port(&mut before), i64::from(s.port()));

    p.sever_all();
    assert_eq!(p.open_connections(), 0);
    raw.set_read_timeout(Some(Duration::from_secs(2)))
        .expect("timeout");
    match raw.read(&mut buf) {
        Err(e) => assert_eq!(e.kind(), ErrorKind::ConnectionReset, "{e}"),
        Ok(n) => panic!("expected a reset, read {n} bytes"),
    }
    assert!(
        before.query_drop("SELECT 1").is_err(),
        "severed pass connection"
    );
}

#[test]
fn proxy_reset_closes() {
    let s = MariaDb::start();
    let p = Proxy::start(s.addr());
    p.set_mode(Mode::Reset);
    let mut raw = TcpStream::connect(p.addr()).expect("TCP connect succeeds");
    raw.set_read_timeout(Some(Duration::from_secs(2)))
        .expect("timeout");
    let mut buf = [0u8; 16];
    match raw.read(&mut buf) {
        Err(e) => assert_eq!(e.kind(), ErrorKind::ConnectionReset, "{e}"),
        Ok(n) => panic!("expected a reset, read {n} bytes"),
    }
    let t0 = Instant::now();
    let err = app_conn(p.addr(), Duration::from_secs(2)).expect_err("reset");
    eprintln!(
        "connect through Reset failed after {:?}: {err}",
        t0.elapsed()
    );
    assert!(t0.elapsed() < Duration::from_secs(3));
    assert_eq!(p.accepted(), 2);
    assert_eq!(p.open_connections(), 0);

    p.set_mode(Mode::Pass);
    let mut c = app_conn(p.addr(), Duration::from_secs(2)).expect("pass again");
    assert_eq!(server_port(&mut c), i64::from(s.port()));
}

#[test]
fn proxy_close_after_hangs_up_cleanly() {
    let s = MariaDb::start();
    // The greeting's length, from the server itself: a 3-byte length and a
    // sequence number, then the payload.
    let greeting_len = {
        let mut raw = TcpStream::connect(s.addr()).expect("connect to the server");
        raw.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let mut head = [0u8; 4];
        raw.read_exact(&mut head).expect("greeting header");
        4 + (head[0] as usize | (head[1] as usize) << 8 | (head[2] as usize) << 16)
    };
    let p = Proxy::start(s.addr());
    let read_all = |n: usize| {
        p.set_mode(Mode::CloseAfter(n));
        let mut raw = TcpStream::connect(p.addr()).expect("TCP connect succeeds");
        raw.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let mut got = Vec::new();
        // EOF (a FIN), not a reset and not a timeout.
        raw.read_to_end(&mut got)
            .unwrap_or_else(|e| panic!("CloseAfter({n}): expected EOF, got {e}"));
        got.len()
    };
    assert_eq!(read_all(0), 0);
    assert_eq!(read_all(10), 10);
    assert_eq!(read_all(greeting_len), greeting_len);
    // The whole greeting, then EOF when the client answers it.
    p.set_mode(Mode::CloseAfter(greeting_len));
    let t0 = Instant::now();
    let err = app_conn(p.addr(), Duration::from_secs(2)).expect_err("hung up");
    eprintln!(
        "connect through CloseAfter({greeting_len}) failed after {:?}: {err}",
        t0.elapsed()
    );
    assert!(t0.elapsed() < Duration::from_secs(1), "{:?}", t0.elapsed());
    assert!(
        !err.to_string().contains("reset"),
        "a clean close, not a reset: {err}"
    );
    wait_until(
        "the proxy to forget closed connections",
        Duration::from_secs(2),
        || p.open_connections() == 0,
    );
    assert_eq!(p.accepted(), 4);

    p.set_mode(Mode::Pass);
    let mut c = app_conn(p.addr(), Duration::from_secs(2)).expect("pass again");
    assert_eq!(server_port(&mut c), i64::from(s.port()));
}

#[test]
fn proxy_drip_is_slow() {
    let s = MariaDb::start();
    let p = Proxy::start(s.addr());
    let pause = Duration::from_millis(6);
    let read_timeout = Duration::from_millis(800);
    p.set_mode(Mode::Drip(pause));
    // Each read waits only ~6 ms, so the 800 ms per-read timeout never fires,
    // yet the handshake plus one query (~400 bytes server->client) takes
    // seconds.
    let t0 = Instant::now();
    let mut c = app_conn(p.addr(), read_timeout).expect("drip connect");
    let s_: Option<String> = c.query_first("SELECT REPEAT('z', 100)").expect("q");
    let took = t0.elapsed();
    eprintln!("connect + 100-byte select through Drip({pause:?}) took {took:?}");
    assert_eq!(s_.map(|v| v.len()), Some(100));
    assert!(took >= read_timeout * 2, "{took:?}");
    assert!(took < Duration::from_secs(20), "{took:?}");
}

#[test]
fn proxy_latency_delays() {
    let s = MariaDb::start();
    let p = Proxy::start(s.addr());
    p.set_mode(Mode::Latency(Duration::from_millis(100)));
    let t0 = Instant::now();
    let mut c = app_conn(p.addr(), Duration::from_secs(2)).expect("connect");
    let connect = t0.elapsed();
    let t1 = Instant::now();
    c.query_drop("SELECT 1").expect("select");
    let query = t1.elapsed();
    eprintln!("Latency(100ms): connect {connect:?}, SELECT 1 {query:?}");
    // greeting, auth, OK: at least 3 delayed chunks; a query round trip: 2.
    assert!(connect >= Duration::from_millis(300), "{connect:?}");
    assert!(query >= Duration::from_millis(200), "{query:?}");
}

#[test]
fn proxy_switch_target_moves_new_connections() {
    let a = MariaDb::start();
    let b = MariaDb::start();
    let p = Proxy::start(a.addr());
    let mut c1 = app_conn(p.addr(), Duration::from_secs(2)).expect("c1");
    assert_eq!(server_port(&mut c1), i64::from(a.port()));

    p.set_target(b.addr());
    assert_eq!(p.target(), b.addr());
    let mut c2 = app_conn(p.addr(), Duration::from_secs(2)).expect("c2");
    assert_eq!(server_port(&mut c2), i64::from(b.port()));
    assert_eq!(
        server_port(&mut c1),
        i64::from(a.port()),
        "old session stays"
    );

    // A black-holed connect stays hanging after the VIP moves back.
    p.set_mode(Mode::BlackHole);
    let mut hanging = TcpStream::connect(p.addr()).expect("connect");
    wait_until("black hole accepted", Duration::from_secs(2), || {
        p.accepted() == 3
    });
    p.set_mode(Mode::Pass);
    p.set_target(a.addr());
    let mut c3 = app_conn(p.addr(), Duration::from_secs(2)).expect("c3");
    assert_eq!(server_port(&mut c3), i64::from(a.port()));
    hanging
        .set_read_timeout(Some(Duration::from_millis(100)))
        .expect("timeout");
    let mut buf = [0u8; 8];
    assert!(hanging.read(&mut buf).is_err(), "still no greeting");
    assert_eq!(p.open_connections(), 4);
}

#[test]
fn proxy_sever_all_closes_open() {
    let s = MariaDb::start();
    let p = Proxy::start(s.addr());
    let mut c1 = app_conn(p.addr(), Duration::from_secs(2)).expect("c1");
    let mut c2 = app_conn(p.addr(), Duration::from_secs(2)).expect("c2");
    c1.query_drop("SELECT 1").expect("q");
    assert_eq!(p.open_connections(), 2);
    let t0 = Instant::now();
    p.sever_all();
    eprintln!("sever_all took {:?}", t0.elapsed());
    assert_eq!(p.open_connections(), 0);
    assert!(c1.query_drop("SELECT 1").is_err());
    assert!(c2.query_drop("SELECT 1").is_err());
    wait_until("server sessions to end", Duration::from_secs(2), || {
        s.connection_count("app") == 0
    });
    let mut c3 = app_conn(p.addr(), Duration::from_secs(2)).expect("c3");
    c3.query_drop("SELECT 1")
        .expect("new connections still work");
}

#[test]
fn proxy_drop_is_prompt() {
    let s = MariaDb::start();
    let p = Proxy::start(s.addr());
    let addr = p.addr();
    let mut pass = app_conn(addr, Duration::from_secs(2)).expect("pass");
    p.set_mode(Mode::BlackHole);
    let _hole = TcpStream::connect(addr).expect("hole");
    p.set_mode(Mode::Drip(Duration::from_millis(20)));
    let dripping = std::thread::spawn(move || app_conn(addr, Duration::from_secs(1)));
    wait_until("3 connections", Duration::from_secs(2), || {
        p.open_connections() == 3
    });
    std::thread::sleep(Duration::from_millis(100));

    let t0 = Instant::now();
    drop(p);
    let took = t0.elapsed();
    eprintln!("Proxy drop took {took:?}");
    // ~10-60 ms normally; generous bound for a loaded CI box.
    assert!(took < Duration::from_secs(1), "{took:?}");
    assert!(pass.query_drop("SELECT 1").is_err());
    assert!(
        dripping.join().expect("thread").is_err(),
        "drip connect cut off"
    );
    assert!(TcpStream::connect(addr).is_err(), "listener closed");
}

#[test]
fn replica_follows_primary() {
    let t0 = Instant::now();
    let primary = MariaDb::start_with(ServerOpts {
        replication: Some(1),
        ..ServerOpts::default()
    });
    let replica = MariaDb::start_with(ServerOpts {
        replication: Some(2),
        ..ServerOpts::default()
    });
    eprintln!("two replication nodes started in {:?}", t0.elapsed());
    assert_eq!(primary.query_i64("SELECT @@log_bin"), Some(1));
    assert_eq!(replica.query_i64("SELECT @@server_id"), Some(2));

    let t0 = Instant::now();
    replica.make_replica_of(&primary);
    eprintln!("make_replica_of took {:?}", t0.elapsed());
    let st = replica.slave_status();
    assert_eq!(st.get("Slave_IO_Running").map(String::as_str), Some("Yes"));
    assert_eq!(st.get("Using_Gtid").map(String::as_str), Some("Slave_Pos"));

    primary.sql("CREATE TABLE r (id INT PRIMARY KEY) ENGINE=InnoDB");
    primary.sql("INSERT INTO r VALUES (1), (2), (3)");
    let t0 = Instant::now();
    replica.catch_up_with(&primary);
    eprintln!("catch_up_with took {:?}", t0.elapsed());
    assert_eq!(replica.query_i64("SELECT COUNT(*) FROM r"), Some(3));
    assert!(
        replica.connection_count("system user") >= 2,
        "IO + SQL threads"
    );
}

#[test]
fn topology_starts_and_promotes_while_the_primary_is_frozen() {
    let t0 = Instant::now();
    let t = Topology::start(TopologyOpts {
        replicas: 1,
        ..TopologyOpts::default()
    });
    eprintln!("primary + 1 replica replicating in {:?}", t0.elapsed());
    let (p, r) = (t.primary(), t.replica(0));
    assert_eq!(t.len(), 2);
    assert_eq!(t.server(1).map(MariaDb::port), Some(r.port()));
    assert_eq!(
        t.url("ping_interval=200ms"),
        format!(
            "mysql://app:app-secret@127.0.0.1:{},127.0.0.1:{}/staunch_test?topology=replication&ping_interval=200ms",
            p.port(),
            r.port()
        )
    );
    assert_eq!(r.query_i64("SELECT @@read_only"), Some(1));
    // Stock replica: MariaDB's default slave_net_timeout.
    assert_eq!(r.query_i64("SELECT @@slave_net_timeout"), Some(60));
    p.sql("CREATE TABLE w (id INT PRIMARY KEY) ENGINE=InnoDB");
    p.sql("INSERT INTO w VALUES (1), (2)");
    t.catch_up();
    // read_only holds for the application user (no READ_ONLY ADMIN).
    let mut app = Conn::new(r.app_opts()).unwrap();
    let e = app.query_drop("INSERT INTO w VALUES (3)").unwrap_err();
    assert!(e.to_string().contains("read-only"), "{e}");

    p.freeze();
    let t0 = Instant::now();
    t.promote(0);
    eprintln!("promote with the primary frozen took {:?}", t0.elapsed());
    assert!(t0.elapsed() < Duration::from_secs(10));
    p.thaw();
    assert_eq!(r.query_i64("SELECT @@read_only"), Some(0));
    assert!(r.slave_status().is_empty(), "RESET SLAVE ALL");
    app.query_drop("INSERT INTO w VALUES (3)").unwrap();
    assert_eq!(r.query_i64("SELECT COUNT(*) FROM w"), Some(3));
}
