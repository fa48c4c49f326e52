//! The `staunch-testkit` command line, driven as the Python, Go and JVM
//! tests drive it: spawn the binary, read its ready line, send commands on
//! stdin, read one JSON answer per command. Every read of the child's stdout
//! is bounded.

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard};
use std::thread;
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use mysql::{Conn, Opts, OptsBuilder};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_staunch-testkit");

/// Every kit these tests start stops the servers of killed kits as it
/// starts: while `a_killed_kits_server_is_stopped_by_the_next_kit` has a
/// killed kit's server running on purpose, no other test of this file may
/// start one (it would stop that server first). That test holds this for
/// writing, the others for reading (they still run side by side).
static KITS: RwLock<()> = RwLock::new(());

fn kits_shared() -> RwLockReadGuard<'static, ()> {
    KITS.read().unwrap_or_else(|e| e.into_inner())
}
/// Bound on the ready line (template datadir + servers on a busy machine).
const READY_TIMEOUT: Duration = Duration::from_secs(90);
/// Bound on one command's answer (restart, promote: a few seconds at most).
const ANSWER_TIMEOUT: Duration = Duration::from_secs(40);
/// Bound on the process ending once asked to.
const EXIT_TIMEOUT: Duration = Duration::from_secs(20);

/// A running `staunch-testkit`.
struct Kit {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Arc<Mutex<String>>,
}

impl Kit {
    fn spawn(args: &[&str]) -> Kit {
        let mut child = Command::new(BIN)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {BIN}: {e}"));
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let (mut err, sink) = (child.stderr.take().unwrap(), stderr.clone());
        thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Kit {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr,
        }
    }

    /// The next stdout line as JSON, within `timeout`.
    fn read(&self, timeout: Duration) -> Value {
        let line = match self.lines.recv_timeout(timeout) {
            Ok(l) => l,
            Err(RecvTimeoutError::Timeout) => panic!(
                "no line from staunch-testkit in {timeout:?}; stderr:\n{}",
                self.stderr()
            ),
            Err(RecvTimeoutError::Disconnected) => panic!(
                "staunch-testkit closed its stdout; stderr:\n{}",
                self.stderr()
            ),
        };
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    fn ready(&self) -> Value {
        let v = self.read(READY_TIMEOUT);
        assert_eq!(v["ready"], true, "{v}");
        v
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{line}")
            .and_then(|()| stdin.flush())
            .unwrap();
    }

    /// Send a command; its one answer.
    fn cmd(&mut self, line: &str) -> Value {
        self.send(line);
        let v = self.read(ANSWER_TIMEOUT);
        assert!(v["ok"].is_boolean(), "`{line}`: no ok field: {v}");
        v
    }

    /// A command that must succeed.
    fn ok(&mut self, line: &str) -> Value {
        let v = self.cmd(line);
        assert_eq!(v["ok"], true, "`{line}` failed: {v}");
        v
    }

    /// A command that must fail (with an error message).
    fn fails(&mut self, line: &str) -> String {
        let v = self.cmd(line);
        assert_eq!(v["ok"], false, "`{line}` should have failed: {v}");
        let e = v["error"].as_str().unwrap_or_default().to_string();
        assert!(!e.is_empty(), "`{line}`: no error message: {v}");
        e
    }

    fn close_stdin(&mut self) {
        self.stdin = None;
    }

    fn wait_exit(&mut self, timeout: Duration) -> ExitStatus {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                return st;
            }
            assert!(
                Instant::now() < deadline,
                "staunch-testkit still running {timeout:?} after being asked to stop; stderr:\n{}",
                self.stderr()
            );
            thread::sleep(Duration::from_millis(20));
        }
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }
}

impl Drop for Kit {
    fn drop(&mut self) {
        if thread::panicking() {
            eprintln!("--- staunch-testkit stderr ---\n{}", self.stderr());
        }
        // Let it clean up (end of stdin), SIGKILL only as a last resort.
        self.stdin = None;
        let deadline = Instant::now() + EXIT_TIMEOUT;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn opts(url: &str, timeout: Duration) -> OptsBuilder {
    let opts = Opts::from_url(url).unwrap_or_else(|e| panic!("bad url {url}: {e}"));
    // Never the unix socket: it would bypass the proxy.
    OptsBuilder::from_opts(opts)
        .prefer_socket(false)
        .tcp_connect_timeout(Some(timeout))
        .read_timeout(Some(timeout))
        .write_timeout(Some(timeout))
}

fn connect(url: &str) -> Conn {
    Conn::new(opts(url, Duration::from_secs(5))).unwrap_or_else(|e| panic!("connect {url}: {e}"))
}

fn select_1(url: &str) -> i64 {
    connect(url)
        .query_first::<i64, _>("SELECT 1")
        .unwrap()
        .unwrap()
}

fn alive(pid: u64) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid as libc::pid_t, 0) == 0 }
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("no string {key} in {v}"))
}

/// After the kit exited: every mariadbd it started is gone, its server
/// directories and every `/tmp/stn-<kit pid>-*` (template, certificates)
/// removed.
fn assert_cleaned_up(ready: &Value) {
    let servers = ready["servers"].as_array().unwrap();
    for s in servers {
        let pid = s["pid"].as_u64().unwrap();
        assert!(!alive(pid), "mariadbd pid {pid} still exists: {s}");
        let dir = str_of(s, "dir");
        assert!(!Path::new(dir).exists(), "{dir} still exists");
    }
    let prefix = format!("stn-{}-", ready["pid"].as_u64().unwrap());
    let left: Vec<String> = std::fs::read_dir("/tmp")
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&prefix))
        .collect();
    assert!(left.is_empty(), "left in /tmp: {left:?}");
}

fn wait_until(what: &str, timeout: Duration, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        thread::sleep(Duration::from_millis(20));
    }
}

/// A kit killed outright (SIGKILL: no exit handler runs) leaves its server
/// running; the next kit to start stops it and removes its directory.
#[test]
fn a_killed_kits_server_is_stopped_by_the_next_kit() {
    let _alone = KITS.write().unwrap_or_else(|e| e.into_inner());
    let mut killed = Kit::spawn(&["server"]);
    let ready = killed.ready();
    let server = &ready["servers"][0];
    let (pid, dir) = (
        server["pid"].as_u64().unwrap(),
        str_of(server, "dir").to_string(),
    );
    // Running there: its command line names its directory (a zombie's, or a
    // reused pid's, does not).
    let runs = || {
        std::fs::read(format!("/proc/{pid}/cmdline"))
            .map(|c| String::from_utf8_lossy(&c).contains(&dir))
            .unwrap_or(false)
    };
    killed.child.kill().unwrap();
    killed.child.wait().unwrap();
    thread::sleep(Duration::from_millis(200));
    assert!(
        runs(),
        "the killed kit's mariadbd {pid} should have outlived it"
    );

    let mut next = Kit::spawn(&["server"]);
    next.ready();
    wait_until(
        "the orphaned mariadbd to stop",
        Duration::from_secs(5),
        || !runs(),
    );
    assert!(!Path::new(&dir).exists(), "{dir} still exists");
    next.close_stdin();
    assert!(next.wait_exit(EXIT_TIMEOUT).success());
}

/// One server behind the proxy, through every kind of command; then the end
/// of stdin stops and removes everything.
#[test]
fn server_with_proxy_then_end_of_stdin_cleans_up() {
    let _kits = kits_shared();
    let t0 = Instant::now();
    let mut kit = Kit::spawn(&["server", "--proxy", "--arg", "--max-connections=50"]);
    let ready = kit.ready();
    eprintln!("ready in {:?}", t0.elapsed());
    assert_eq!(ready["kind"], "server");
    let servers = ready["servers"].as_array().unwrap();
    assert_eq!(servers.len(), 1);
    let server = &servers[0];
    let (port, proxy_port) = (
        server["port"].as_u64().unwrap(),
        ready["proxy"]["port"].as_u64().unwrap(),
    );
    assert!(alive(server["pid"].as_u64().unwrap()));
    assert_eq!(
        str_of(&ready, "url"),
        format!("mysql://app:app-secret@127.0.0.1:{proxy_port}/staunch_test")
    );
    assert_eq!(
        str_of(&ready["proxy"], "target"),
        format!("127.0.0.1:{port}")
    );
    assert_eq!(ready["users"]["app"]["password"], "app-secret");
    let url = str_of(&ready, "url").to_string();
    let direct = str_of(server, "url").to_string();

    // The URLs answer, through the proxy and directly; --arg was applied.
    assert_eq!(select_1(&url), 1);
    assert_eq!(select_1(&direct), 1);
    assert_eq!(
        select_1(str_of(server, "root_url")),
        1,
        "root over TCP, empty password"
    );
    let v = kit.ok("query 0 SELECT @@max_connections, NULL, 'a  b'");
    assert_eq!(v["rows"], serde_json::json!([["50", null, "a  b"]]));

    // sql and query; a bad statement is an error, not a crash.
    kit.ok("sql 0 CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))");
    kit.ok("sql 0 INSERT INTO t VALUES (1, 'one'), (2, NULL)");
    let v = kit.ok("query 0 SELECT id, v FROM t ORDER BY id");
    assert_eq!(v["rows"], serde_json::json!([["1", "one"], ["2", null]]));
    let e = kit.fails("sql 0 SELECT * FROM no_such_table");
    assert!(e.contains("no_such_table"), "{e}");

    // Bad commands: answered, and the process keeps working.
    for bad in [
        "frobnicate",
        "freeze 9",
        "freeze x",
        "promote 1",
        "mode",
        "mode latency",
        "mode warp",
        "sql",
        "sql 0",
        "kill-connections",
        "target nowhere",
    ] {
        kit.fails(bad);
    }
    let st = kit.ok("status");
    assert_eq!(st["servers"][0]["running"], true);
    assert_eq!(st["proxy"]["mode"], "pass");

    // freeze: a query times out; thaw: answered again.
    let mut c = Conn::new(opts(&direct, Duration::from_millis(800))).unwrap();
    kit.ok("freeze");
    assert_eq!(kit.ok("status")["servers"][0]["frozen"], true);
    let t = Instant::now();
    let r = c.query_first::<i64, _>("SELECT 1");
    assert!(r.is_err(), "a frozen server answered: {r:?}");
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    kit.fails("query 0 SELECT 1"); // frozen: said, not hung
    kit.ok("thaw 0");
    assert_eq!(select_1(&direct), 1);

    // Proxy black hole: TCP accepted, no greeting; pass: greeted again.
    kit.ok("mode blackhole");
    let mut s = TcpStream::connect(("127.0.0.1", proxy_port as u16)).unwrap();
    s.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let mut buf = [0u8; 64];
    match s.read(&mut buf) {
        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
        other => panic!("black hole answered: {other:?}"),
    }
    assert_eq!(kit.ok("mode pass")["mode"], "pass");
    let mut s = TcpStream::connect(("127.0.0.1", proxy_port as u16)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    assert!(s.read(&mut buf).unwrap() > 0, "no greeting after mode pass");
    drop(s);
    assert_eq!(select_1(&url), 1);
    kit.ok("mode latency 20");
    kit.ok("mode close-after 0");
    kit.ok("mode pass");

    // sever: an open proxied session is cut.
    let mut through = connect(&url);
    through.query_drop("SELECT 1").unwrap();
    let v = kit.ok("sever");
    assert!(v["severed"].as_u64().unwrap() >= 1, "{v}");
    assert!(through.query_drop("SELECT 1").is_err(), "survived sever");

    // kill-connections / connection-count (the monitor user: nothing else
    // uses it here).
    let monitor = direct.replace("app:app-secret", "monitor:monitor-secret");
    let mut m: Vec<Conn> = (0..2).map(|_| connect(&monitor)).collect();
    assert_eq!(kit.ok("connection-count monitor")["count"], 2);
    assert_eq!(kit.ok("kill-connections monitor 0")["killed"], 2);
    assert_eq!(kit.ok("connection-count monitor")["count"], 0);
    for c in &mut m {
        assert!(c.query_drop("SELECT 1").is_err(), "killed session answered");
    }

    // kill -9, start, restart, stop, start: same port, new pid.
    kit.ok("kill");
    assert_eq!(kit.ok("status")["servers"][0]["running"], false);
    kit.fails("kill");
    let pid = kit.ok("start")["pid"].as_u64().unwrap();
    assert_eq!(select_1(&direct), 1);
    let pid2 = kit.ok("restart")["pid"].as_u64().unwrap();
    assert_ne!(pid, pid2);
    kit.ok("stop");
    kit.fails("stop");
    kit.ok("start");
    assert_eq!(select_1(&url), 1);

    // The end of stdin stops and removes everything.
    let last = kit.ok("status")["servers"][0]["pid"].as_u64().unwrap();
    let mut ready = ready;
    ready["servers"][0]["pid"] = last.into();
    kit.close_stdin();
    let st = kit.wait_exit(EXIT_TIMEOUT);
    assert!(st.success(), "{st}");
    assert_cleaned_up(&ready);
    eprintln!("whole session {:?}", t0.elapsed());
}

/// A primary and two replicas: replication, promote; SIGTERM stops and
/// removes everything.
#[test]
fn topology_replicates_promotes_then_sigterm_cleans_up() {
    let _kits = kits_shared();
    let t0 = Instant::now();
    let mut kit = Kit::spawn(&["topology", "--replicas", "2"]);
    let ready = kit.ready();
    eprintln!("ready in {:?}", t0.elapsed());
    assert_eq!(ready["kind"], "topology");
    assert!(ready["proxy"].is_null());
    let servers = ready["servers"].as_array().unwrap().clone();
    let roles: Vec<&str> = servers.iter().map(|s| str_of(s, "role")).collect();
    assert_eq!(roles, ["primary", "replica", "replica"]);
    let ports: Vec<String> = servers
        .iter()
        .map(|s| format!("127.0.0.1:{}", s["port"]))
        .collect();
    assert_eq!(
        str_of(&ready, "url"),
        format!(
            "mysql://app:app-secret@{}/staunch_test?topology=replication",
            ports.join(",")
        )
    );
    assert_eq!(ready["url"], ready["topology_url"]);
    for (i, s) in servers.iter().enumerate() {
        let v = kit.ok(&format!("query {i} SELECT @@server_id, @@read_only"));
        let ro = if i == 0 { "0" } else { "1" };
        assert_eq!(
            v["rows"],
            serde_json::json!([[(i + 1).to_string(), ro]]),
            "{s}"
        );
    }

    // Replicas replicate.
    kit.ok("sql 0 CREATE TABLE r (id INT PRIMARY KEY)");
    kit.ok("sql 0 INSERT INTO r VALUES (7)");
    for i in 1..=2 {
        wait_until("the row on the replica", Duration::from_secs(15), || {
            kit.ok(&format!(
                "query {i} SELECT COUNT(*) FROM information_schema.tables WHERE table_name = 'r'"
            ))["rows"][0][0]
                == "1"
                && kit.ok(&format!("query {i} SELECT COUNT(*) FROM r"))["rows"][0][0] == "1"
        });
        let v = kit.ok(&format!("query {i} SHOW SLAVE STATUS"));
        assert_eq!(v["rows"].as_array().unwrap().len(), 1);
    }

    // The app user cannot write on a read_only replica (no READ_ONLY ADMIN)...
    let replica1 = str_of(&servers[1], "url").to_string();
    let e = connect(&replica1)
        .query_drop("INSERT INTO r VALUES (8)")
        .expect_err("a write on a read_only replica");
    assert!(e.to_string().contains("read-only"), "{e}");
    kit.fails("promote 0");
    kit.fails("promote 3");
    // ... until it is promoted.
    kit.ok("promote 1");
    assert_eq!(kit.ok("query 1 SELECT @@read_only")["rows"][0][0], "0");
    assert_eq!(
        kit.ok("query 1 SHOW SLAVE STATUS")["rows"],
        serde_json::json!([])
    );
    connect(&replica1)
        .query_drop("INSERT INTO r VALUES (8)")
        .expect("a write on the promoted replica");
    let st = kit.ok("status");
    assert_eq!(st["servers"][1]["role"], "promoted");
    assert_eq!(st["servers"][2]["role"], "replica");
    kit.fails("promote 1");

    // SIGTERM: everything stops and is removed.
    // SAFETY: signalling our own child, not yet reaped.
    unsafe {
        libc::kill(kit.child.id() as libc::pid_t, libc::SIGTERM);
    }
    let st = kit.wait_exit(EXIT_TIMEOUT);
    assert_eq!(st.code(), Some(128 + libc::SIGTERM), "{st}");
    assert_cleaned_up(&ready);
    eprintln!("whole session {:?}", t0.elapsed());
}

/// `galera --nodes 1`: a one-node cluster (bootstrap only, so this stays
/// cheap; the library's Galera tests use three nodes), its wsrep status,
/// desync and the galera-only commands, then `quit` cleans up.
#[test]
fn galera_one_node_desync_then_quit() {
    let _kits = kits_shared();
    let t0 = Instant::now();
    let mut kit = Kit::spawn(&["galera", "--nodes", "1"]);
    let ready = kit.ready();
    eprintln!("ready in {:?}", t0.elapsed());
    assert_eq!(ready["kind"], "galera");
    let servers = ready["servers"].as_array().unwrap().clone();
    assert_eq!(servers.len(), 1);
    assert_eq!(str_of(&servers[0], "role"), "node");
    // No topology knob: staunch finds Galera out from the servers.
    assert_eq!(
        str_of(&ready, "url"),
        format!(
            "mysql://app:app-secret@127.0.0.1:{}/staunch_test",
            servers[0]["port"]
        )
    );
    let st = kit.ok("wsrep 0");
    assert_eq!(
        (
            &st["state"],
            &st["cluster_status"],
            &st["ready"],
            &st["size"]
        ),
        (
            &serde_json::json!(4),
            &serde_json::json!("Primary"),
            &serde_json::json!(true),
            &serde_json::json!(1)
        ),
        "{st}"
    );
    assert_eq!(kit.ok("query 0 SELECT @@wsrep_on")["rows"][0][0], "1");
    kit.ok("desync 0");
    assert_eq!(kit.ok("wsrep 0")["state"], 2);
    kit.ok("resync 0");
    kit.ok("wait-synced 0");
    assert_eq!(kit.ok("wsrep 0")["state"], 4);
    assert!(kit.fails("isolate 1").contains("no server 1"));
    assert!(kit.fails("wsrep").contains("usage"));
    assert_eq!(select_1(str_of(&servers[0], "url")), 1);
    kit.send("quit");
    assert_eq!(kit.read(EXIT_TIMEOUT)["ok"], true);
    let st = kit.wait_exit(EXIT_TIMEOUT);
    assert!(st.success(), "{st}");
    assert_cleaned_up(&ready);
    eprintln!("whole session {:?}", t0.elapsed());
}

/// A fake server: greets every connection with `hello` and keeps it open.
fn greeter() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    thread::spawn(move || {
        let mut held = Vec::new();
        for mut s in l.incoming().flatten() {
            let _ = s.write_all(b"hello");
            held.push(s);
        }
    });
    addr
}

fn read_some(addr: SocketAddr) -> std::io::Result<Vec<u8>> {
    let mut s = TcpStream::connect(addr)?;
    s.set_read_timeout(Some(Duration::from_secs(2)))?;
    let mut buf = [0u8; 16];
    let n = s.read(&mut buf)?;
    Ok(buf[..n].to_vec())
}

/// The proxy alone, towards a fake server; `quit` answers once everything
/// is stopped.
#[test]
fn proxy_alone_then_quit() {
    let _kits = kits_shared();
    let (a, b) = (greeter(), greeter());
    let mut kit = Kit::spawn(&["proxy", "--target", &a.to_string()]);
    let ready = kit.ready();
    assert_eq!(ready["kind"], "proxy");
    assert_eq!(ready["servers"], serde_json::json!([]));
    let proxy: SocketAddr = format!("127.0.0.1:{}", ready["proxy"]["port"])
        .parse()
        .unwrap();
    assert_eq!(read_some(proxy).unwrap(), b"hello");
    kit.ok("mode reset");
    assert!(
        read_some(proxy).map_or(true, |v| v.is_empty()),
        "reset mode greeted"
    );
    kit.ok("mode pass");
    assert_eq!(
        kit.ok(&format!("target {b}"))["target"],
        b.to_string().as_str()
    );
    assert_eq!(read_some(proxy).unwrap(), b"hello");
    assert!(kit.fails("freeze").contains("no servers"));
    assert!(kit.fails("target 0").contains("no servers"));
    kit.fails("promote 1");
    assert_eq!(kit.ok("status")["proxy"]["target"], b.to_string().as_str());
    assert!(kit.ok("help")["commands"].as_array().unwrap().len() > 10);
    kit.send("quit");
    assert_eq!(kit.read(ANSWER_TIMEOUT)["ok"], true);
    assert!(kit.wait_exit(EXIT_TIMEOUT).success());
    assert!(TcpStream::connect(proxy).is_err(), "proxy still listening");
}

#[test]
fn bad_arguments_and_help() {
    let _kits = kits_shared();
    for args in [
        &[][..],
        &["serve"],
        &["server", "--replicas", "2"],
        &["server", "--arg"],
        &["topology", "--replicas", "two"],
        &["proxy"],
        &["proxy", "--target", "nowhere"],
        &["proxy", "--target", "127.0.0.1:1", "--performance-schema"],
        &["mysql8", "--proxy"],
        &["server", "--warm-sha2-cache"],
    ] {
        let out = Command::new(BIN)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?}: {}", out.status);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let lines: Vec<&str> = stdout.lines().collect();
        assert_eq!(lines.len(), 1, "{args:?}: {stdout}");
        let v: Value = serde_json::from_str(lines[0]).unwrap();
        assert_eq!(v["ready"], false, "{args:?}: {v}");
        assert!(v["error"].as_str().is_some_and(|e| !e.is_empty()), "{v}");
    }
    let out = Command::new(BIN).arg("--help").output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("staunch-testkit topology"), "{help}");
    assert!(help.contains("kill-connections"), "{help}");
    assert!(help.contains("--performance-schema"), "{help}");
    assert!(help.contains("staunch-testkit mysql8"), "{help}");
}
