//! The conformance scenarios of ../shared/CONFORMANCE.md for the Rust face.
//! Every other face (C, Python, Go, JVM) runs the same ids.

use staunch_testkit as support;

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use staunch::prelude::*;
use staunch::{CancelToken, ErrorKind, Event, Pool, Row, TxOpts, Value};
use support::{MariaDb, Mode, Proxy};

#[test]
fn conf_basic() {
    let s = MariaDb::start();
    let pool = Pool::from_url(&s.url()).unwrap();
    let mut c = pool.get().unwrap();
    assert_eq!(c.query_first::<i64, _>("SELECT 1").unwrap(), Some(1));
    drop(c);
    pool.close();
    pool.close();
    assert!(pool.is_closed());
    assert!(
        pool.close_and_join(Duration::from_secs(5)),
        "pool threads left"
    );
}

#[test]
fn conf_types() {
    let s = MariaDb::start();
    s.sql(
        "CREATE TABLE staunch_test.ty (n INT NULL, i BIGINT, u BIGINT UNSIGNED, d DOUBLE, t TEXT, \
         b BLOB, e BLOB, m DECIMAL(20,6), dt DATE, ts DATETIME(6), tm TIME(6)) DEFAULT CHARSET=utf8mb4",
    );
    let pool = Pool::from_url(&s.url()).unwrap();
    let mut c = pool.get().unwrap();
    let text = "naïve café ✓ 日本語";
    let bytes: Vec<u8> = vec![0, 1, 2, 0, 255, b'x'];
    for (i, u) in [(i64::MIN, 0u64), (i64::MAX, u64::MAX)] {
        c.exec_drop(
            "INSERT INTO ty VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                Value::NULL,
                i,
                u,
                -1.5e300f64,
                text,
                bytes.clone(),
                Vec::<u8>::new(),
                "-12345678901234.123456",
                Value::Date(2024, 2, 29, 0, 0, 0, 0),
                Value::Date(1999, 12, 31, 23, 59, 58, 123456),
                Value::Time(true, 1, 2, 3, 4, 5),
            ),
        )
        .unwrap();
    }
    let rows: Vec<Row> = c.exec("SELECT * FROM ty ORDER BY i", ()).unwrap();
    assert_eq!(rows.len(), 2);
    for (row, (i, u)) in rows.iter().zip([(i64::MIN, 0u64), (i64::MAX, u64::MAX)]) {
        assert_eq!(row.get::<Option<i64>, _>("n").unwrap(), None);
        assert_eq!(row.get::<i64, _>("i").unwrap(), i);
        assert_eq!(row.get::<u64, _>("u").unwrap(), u);
        assert_eq!(row.get::<f64, _>("d").unwrap(), -1.5e300);
        assert_eq!(row.get::<String, _>("t").unwrap(), text);
        assert_eq!(row.get::<Vec<u8>, _>("b").unwrap(), bytes);
        assert_eq!(row.get::<Vec<u8>, _>("e").unwrap(), Vec::<u8>::new());
        assert_eq!(row.get::<String, _>("m").unwrap(), "-12345678901234.123456");
        assert_eq!(
            row.get::<Value, _>("dt").unwrap(),
            Value::Date(2024, 2, 29, 0, 0, 0, 0)
        );
        assert_eq!(
            row.get::<Value, _>("ts").unwrap(),
            Value::Date(1999, 12, 31, 23, 59, 58, 123456)
        );
        assert_eq!(
            row.get::<Value, _>("tm").unwrap(),
            Value::Time(true, 1, 2, 3, 4, 5)
        );
    }
}

#[test]
fn conf_params() {
    let s = MariaDb::start();
    s.sql("CREATE TABLE staunch_test.p (v TEXT)");
    let pool = Pool::from_url(&s.url()).unwrap();
    let mut c = pool.get().unwrap();
    let evil = "'); DROP TABLE p; --";
    c.exec_drop("INSERT INTO p VALUES (?)", (evil,)).unwrap();
    let e = c.exec_drop("INSERT INTO p VALUES (?)", (1, 2)).unwrap_err();
    assert!(e.to_string().to_lowercase().contains("param"), "{e}");
    let e = c.exec_drop("INSERT INTO p VALUES (?)", ()).unwrap_err();
    assert!(e.to_string().to_lowercase().contains("param"), "{e}");
    // Wrong type: a value MariaDB cannot store in the column's type.
    s.sql("CREATE TABLE staunch_test.q (n INT NOT NULL)");
    c.query_drop("SET SESSION sql_mode='STRICT_ALL_TABLES'")
        .unwrap();
    let e = c
        .exec_drop("INSERT INTO q VALUES (?)", ("not a number",))
        .unwrap_err();
    assert!(e.to_string().contains("Incorrect integer value"), "{e}");
    let back: Option<String> = c.query_first("SELECT v FROM p").unwrap();
    assert_eq!(back.as_deref(), Some(evil));
    assert_eq!(
        c.query_first::<i64, _>("SELECT COUNT(*) FROM p").unwrap(),
        Some(1)
    );
}

#[test]
fn conf_txn() {
    let s = MariaDb::start();
    s.sql("CREATE TABLE staunch_test.x (v INT) ENGINE=InnoDB");
    let pool = Pool::from_url(&format!("{}?max_size=1", s.url())).unwrap();
    let mut c = pool.get().unwrap();
    let mut tx = c.start_transaction(TxOpts::default()).unwrap();
    tx.query_drop("INSERT INTO x VALUES (1)").unwrap();
    tx.rollback().unwrap();
    let mut tx = c.start_transaction(TxOpts::default()).unwrap();
    tx.query_drop("INSERT INTO x VALUES (2)").unwrap();
    tx.commit().unwrap();
    c.query_drop("BEGIN").unwrap();
    c.query_drop("INSERT INTO x VALUES (3)").unwrap();
    c.query_drop("INSERT INTO x VALUES (4)").unwrap();
    drop(c); // returned mid-transaction
    let mut c = pool.get().unwrap();
    let vals: Vec<i64> = c.query("SELECT v FROM x ORDER BY v").unwrap();
    assert_eq!(vals, vec![2]);
}

#[test]
fn conf_threads() {
    let s = MariaDb::start();
    let pool = Pool::from_url(&format!("{}?max_size=4", s.url())).unwrap();
    let wrong = Arc::new(AtomicUsize::new(0));
    let ts: Vec<_> = (0..8u64)
        .map(|t| {
            let (pool, wrong) = (pool.clone(), wrong.clone());
            thread::spawn(move || {
                for i in 0..500u64 {
                    let tag = format!("t{t}-{i}");
                    let mut c = pool.get().unwrap();
                    let got: Option<String> = c.exec_first("SELECT ?", (tag.as_str(),)).unwrap();
                    if got.as_deref() != Some(tag.as_str()) {
                        wrong.fetch_add(1, SeqCst);
                    }
                }
            })
        })
        .collect();
    for t in ts {
        t.join().unwrap();
    }
    assert_eq!(wrong.load(SeqCst), 0);
    let st = pool.stats();
    assert_eq!(st.active, 0);
    assert_eq!(st.acquired, 4000);
}

#[test]
fn conf_timeout_exhausted() {
    let s = MariaDb::start();
    let pool = Pool::from_url(&format!("{}?max_size=1", s.url())).unwrap();
    let _held = pool.get().unwrap();
    let t = Instant::now();
    let e = pool.get_timeout(Duration::from_millis(200)).unwrap_err();
    let took = t.elapsed();
    assert_eq!(e.kind(), ErrorKind::PoolExhausted);
    assert!(e.to_string().contains("exhausted"), "{e}");
    assert!(
        took >= Duration::from_millis(200) && took < Duration::from_millis(1000),
        "{took:?}"
    );
}

/// conf_a1 then conf_a2: a black hole, then the endpoint forwards again.
#[test]
fn conf_a1_black_hole_then_conf_a2_recovery() {
    let s = MariaDb::start();
    let proxy = Proxy::start(s.addr());
    proxy.set_mode(Mode::BlackHole);
    let pool = Pool::from_url(&format!(
        "mysql://app:app-secret@127.0.0.1:{}/staunch_test?connect_timeout=500ms&connection_timeout=1s",
        proxy.port()
    ))
    .unwrap();
    // conf_a1
    let t = Instant::now();
    let e = pool.get().unwrap_err();
    let took = t.elapsed();
    assert_eq!(e.kind(), ErrorKind::Unreachable, "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("unreachable") && msg.contains("no greeting"),
        "{msg}"
    );
    assert!(
        msg.contains(&format!("127.0.0.1:{}", proxy.port())),
        "{msg}"
    );
    assert!(took < Duration::from_millis(1300), "{took:?}");
    // No thread stays stuck: every connect in flight ends within its deadline.
    thread::sleep(Duration::from_millis(600));
    assert_eq!(pool.stats().connecting, 0);
    // conf_a2
    proxy.set_mode(Mode::Pass);
    let t = Instant::now();
    let mut c = pool.get().unwrap();
    assert_eq!(c.query_first::<i64, _>("SELECT 1").unwrap(), Some(1));
    println!(
        "conf_a1 error after {took:?}: {msg}\nconf_a2 served after {:?}",
        t.elapsed()
    );
}

#[test]
fn conf_server_kill() {
    let s = MariaDb::start();
    let pool = Pool::from_url(&format!("{}?max_size=4", s.url())).unwrap();
    let held: Vec<_> = (0..4).map(|_| pool.get().unwrap()).collect();
    drop(held);
    assert_eq!(s.kill_connections("app"), 4);
    thread::sleep(Duration::from_millis(600));
    for _ in 0..8 {
        let mut c = pool.get().unwrap();
        assert_eq!(c.query_first::<i64, _>("SELECT 1").unwrap(), Some(1));
    }
}

#[test]
fn conf_bad_input() {
    for (url, needle) in [
        ("not a url", "must start with mysql://"),
        ("mysql://h/db?bogus_knob=1", "unknown knob \"bogus_knob\""),
        ("mysql://h/db?connect_timeout=-1s", "must not be negative"),
        (
            "mysql://h/db?max_size=abc",
            "max_size must be a whole number",
        ),
    ] {
        let e = Pool::from_url(url).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Config, "{url}");
        assert!(e.to_string().contains(needle), "{url}: {e}");
    }
    // Use after close: a clear error, not a hang.
    let s = MariaDb::start();
    let pool = Pool::from_url(&s.url()).unwrap();
    pool.close();
    assert_eq!(pool.get().unwrap_err().kind(), ErrorKind::Closed);
    assert!(pool.try_get().is_err());
    // (NULL arguments and use-after-release cannot be written in safe Rust:
    // the C, Python, Go and JVM faces test those.)
}

#[test]
fn conf_stats() {
    let s = MariaDb::start();
    let pool = Pool::from_url(&format!("{}?max_size=2", s.url())).unwrap();
    let a = pool.get().unwrap();
    let b = pool.get().unwrap();
    let st = pool.stats();
    assert_eq!(
        (st.total, st.active, st.idle, st.created, st.acquired),
        (2, 2, 0, 2, 2)
    );
    drop(a);
    let _ = pool.get_timeout(Duration::from_millis(50)).unwrap(); // reuses a
    drop(b);
    assert!(pool.try_get().unwrap().is_some());
    let _t = pool.get().unwrap();
    let _u = pool.get().unwrap();
    assert_eq!(
        pool.get_timeout(Duration::from_millis(50))
            .unwrap_err()
            .kind(),
        ErrorKind::PoolExhausted
    );
    let st = pool.stats();
    assert_eq!((st.total, st.active, st.idle, st.created), (2, 2, 0, 2));
    assert_eq!((st.acquired, st.acquire_timeouts), (6, 1));
    assert_eq!(
        (
            st.connect_failures,
            st.validation_failures,
            st.closed_broken
        ),
        (0, 0, 0)
    );
}

#[test]
fn conf_events() {
    let s = MariaDb::start();
    let proxy = Proxy::start(s.addr());
    proxy.set_mode(Mode::Reset);
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let s2 = seen.clone();
    let pool = Pool::builder()
        .url(&format!(
            "mysql://app:app-secret@127.0.0.1:{}/staunch_test",
            proxy.port()
        ))
        .connection_timeout(Duration::from_millis(400))
        .event_listener(Arc::new(move |e: &Event| {
            let name = match e {
                Event::ConnectFailed { .. } => "connect_failed",
                Event::Recovered { .. } => "recovered",
                Event::Connected { .. } => "connected",
                _ => return,
            };
            let thread = thread::current().name().unwrap_or("").to_string();
            s2.lock().unwrap().push(format!("{name}@{thread}"));
        }))
        .build()
        .unwrap();
    assert!(pool.get().is_err());
    proxy.set_mode(Mode::Pass);
    // A retry may be sleeping in its backoff (at most 1 s) when the path heals.
    pool.get_timeout(Duration::from_secs(3)).unwrap();
    let seen = seen.lock().unwrap().clone();
    // Delivered on the adder threads, as the docs say.
    assert!(
        seen.iter()
            .any(|e| e.starts_with("connect_failed@staunch-adder-")),
        "{seen:?}"
    );
    assert!(
        seen.iter()
            .any(|e| e.starts_with("recovered@staunch-adder-")),
        "{seen:?}"
    );
}

/// Statements whose text contains `marker`, running on the server now.
fn running(s: &MariaDb, marker: &str) -> i64 {
    s.query_i64(&format!(
        "SELECT COUNT(*) FROM information_schema.PROCESSLIST \
         WHERE INFO LIKE '%{marker}%' AND INFO NOT LIKE '%PROCESSLIST%'"
    ))
    .unwrap_or(0)
}

/// pool as if it had never waited.
#[test]
fn conf_cancel_get() {
    let s = MariaDb::start();
    let pool = Pool::from_url(&format!("{}?max_size=1", s.url())).unwrap();
    let mut held = pool.get().unwrap();
    let token = CancelToken::new();
    let (p2, t2) = (pool.clone(), token.clone());
    let waiter = thread::spawn(move || {
        let t = Instant::now();
        let r = p2.get_cancellable(Duration::from_secs(10), &t2);
        (r.map(|_| ()), Instant::now(), t)
    });
    thread::sleep(Duration::from_millis(300));
    assert_eq!(pool.stats().waiting, 1);
    let fired = Instant::now();
    token.cancel();
    let (r, back, _) = waiter.join().unwrap();
    let e = r.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Cancelled, "{e}");
    assert!(back.duration_since(fired) < Duration::from_millis(100));
    let st = pool.stats();
    assert_eq!(
        (st.waiting, st.active, st.acquires_cancelled),
        (0, 1, 1),
        "{st:?}"
    );
    assert_eq!(st.acquire_timeouts, 0);
    assert_eq!(held.query_first::<i64, _>("SELECT 1").unwrap(), Some(1));
    // A cancelled token fails at once; a fresh one waits as usual.
    assert_eq!(
        pool.get_cancellable(Duration::from_secs(5), &token)
            .unwrap_err()
            .kind(),
        ErrorKind::Cancelled
    );
    drop(held);
    let mut c = pool
        .get_cancellable(Duration::from_secs(5), &CancelToken::new())
        .unwrap();
    assert_eq!(c.query_first::<i64, _>("SELECT 2").unwrap(), Some(2));
}

/// server no longer runs it, the connection goes on.
#[test]
fn conf_cancel_statement() {
    let s = MariaDb::start();
    let pool = Pool::from_url(&s.url()).unwrap();
    let mut c = pool.get().unwrap();
    let h = c.cancel_handle();
    assert!(!h.cancel().unwrap(), "nothing runs yet");
    let canceller = thread::spawn(move || {
        thread::sleep(Duration::from_millis(500));
        let t = Instant::now();
        (h.cancel(), t)
    });
    let t = Instant::now();
    let e = c
        .query_first::<i64, _>("SELECT SLEEP(10) /* cancel-me */")
        .unwrap_err();
    let ended = Instant::now();
    let (cancelled, asked) = canceller.join().unwrap();
    assert!(cancelled.unwrap(), "the cancel found the statement running");
    assert_eq!(e.kind(), ErrorKind::Cancelled, "{e}");
    assert!(
        ended.duration_since(asked) < Duration::from_secs(1),
        "{:?}",
        t.elapsed()
    );
    assert_eq!(running(&s, "cancel-me"), 0);
    assert_eq!(c.query_first::<i64, _>("SELECT 1").unwrap(), Some(1));
}

/// the watchdog cuts it off at limit + grace: the handle is broken from
/// then on, and the late answer is never read.
#[test]
fn conf_no_crossed_answer() {
    let s = MariaDb::start();
    let pool = Pool::from_url(&format!("{}?query_timeout=300ms&max_size=1", s.url())).unwrap();
    let mut c = pool.get().unwrap();
    let t = Instant::now();
    let e = c
        .query_first::<i64, _>("SET STATEMENT max_statement_time=0 FOR SELECT 111 + SLEEP(3)")
        .unwrap_err();
    let took = t.elapsed();
    assert_eq!(e.kind(), ErrorKind::StatementTimeout, "{e}");
    assert!(
        took >= Duration::from_millis(1250) && took < Duration::from_millis(2500),
        "cut after {took:?} (limit 300ms + 1s grace)"
    );
    assert!(c.broken().is_some());
    thread::sleep(Duration::from_secs(2)); // the server's answer would be there by now
    let e = c.query_first::<i64, _>("SELECT 222").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Broken, "{e}");
    assert!(e.to_string().contains("drop it and get another"), "{e}");
    drop(c);
    let mut c = pool.get().unwrap();
    assert_eq!(c.query_first::<i64, _>("SELECT 222").unwrap(), Some(222));
    let st = pool.stats();
    assert_eq!((st.closed_broken, st.statements_cut), (1, 1), "{st:?}");
}

/// A per-statement limit of 300 ms on `SELECT SLEEP(5)`: "timed out", not
/// a bare I/O error, and the connection answers next.
#[test]
fn conf_statement_timeout() {
    let s = MariaDb::start();
    let pool = Pool::from_url(&s.url()).unwrap();
    let mut c = pool.get().unwrap();
    c.set_statement_timeout(Some(Duration::from_millis(300)));
    let t = Instant::now();
    let e = c.query_drop("SELECT SLEEP(5)").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::StatementTimeout, "{e}");
    assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
    assert_eq!(c.query_first::<i64, _>("SELECT 1").unwrap(), Some(1));
}

/// When the server does not end the statement (here it was told not to),
/// A borrower sets a user variable and the time zone; the next borrower of
/// the same connection sees neither.
#[test]
fn conf_session_reset() {
    let s = MariaDb::start();
    let pool = Pool::from_url(&format!("{}?max_size=1", s.url())).unwrap();
    let zone: Option<String> = pool
        .get()
        .unwrap()
        .query_first("SELECT @@time_zone")
        .unwrap();
    {
        let mut c = pool.get().unwrap();
        c.query_drop("SET @x = 42").unwrap();
        c.query_drop("SET time_zone = '+05:17'").unwrap();
    }
    let mut c = pool.get().unwrap();
    let (x, tz): (Option<i64>, String) = c.query_first("SELECT @x, @@time_zone").unwrap().unwrap();
    assert_eq!((x, Some(tz)), (None, zone));
    // What the server's tracker does not report is undone too: a
    // user-level lock, a variable set inside a SELECT.
    c.query_drop("SELECT GET_LOCK('conf', 0), @y := 7").unwrap();
    drop(c);
    let mut c = pool.get().unwrap();
    let (free, y): (i64, Option<i64>) = c
        .query_first("SELECT IS_USED_LOCK('conf') IS NULL, @y")
        .unwrap()
        .unwrap();
    assert_eq!((free, y), (1, None));
    assert_eq!(pool.stats().created, 1);
}

/// At the defaults (no statement limit): the server frozen (SIGSTOP) 1 s
/// into `SELECT SLEEP(3)` fails within the liveness bound (threshold 5 s +
/// connect_timeout 3 s + validation_timeout 1 s) saying the server stopped
/// answering, and the pool serves after the thaw; meanwhile `SELECT
/// SLEEP(25)` on a healthy server returns its answer.
#[test]
fn conf_frozen_statement() {
    let healthy = MariaDb::start();
    let healthy_pool = Pool::from_url(&healthy.url()).unwrap();
    let long = thread::spawn(move || {
        let t = Instant::now();
        let v: Option<i64> = healthy_pool
            .get()
            .unwrap()
            .query_first("SELECT 25 + SLEEP(25)")
            .unwrap();
        (v, t.elapsed())
    });
    let s = Arc::new(MariaDb::start());
    let pool = Pool::from_url(&s.url()).unwrap();
    let mut c = pool.get().unwrap();
    let s2 = s.clone();
    let freezer = thread::spawn(move || {
        thread::sleep(Duration::from_secs(1));
        s2.freeze();
        Instant::now()
    });
    let e = c.query_drop("SELECT SLEEP(3)").unwrap_err();
    let after = freezer.join().unwrap().elapsed();
    assert_eq!(e.kind(), ErrorKind::ServerUnresponsive, "{e}");
    assert!(
        e.to_string()
            .contains("the server stopped answering during this statement"),
        "{e}"
    );
    assert!(after < Duration::from_millis(10_500), "{after:?}");
    drop(c);
    s.thaw();
    assert_eq!(
        pool.get()
            .unwrap()
            .query_first::<i64, _>("SELECT 1")
            .unwrap(),
        Some(1)
    );
    let (v, took) = long.join().unwrap();
    assert_eq!(v, Some(25), "after {took:?}");
}

/// conf_auth_plugins (MariaDB part): a `mysql_native_password` user and an
/// `ed25519` user (MariaDB's recommended plugin) each connect; a user whose
/// plugin staunch does not speak (PAM, which asks for `dialog`) gets an
/// error naming the plugin at once, not "unreachable" at the acquire
/// timeout, and no thread panics.
#[test]
fn conf_auth_plugins() {
    let s = MariaDb::start();
    s.sql("INSTALL PLUGIN IF NOT EXISTS ed25519 SONAME 'auth_ed25519'");
    s.sql("INSTALL PLUGIN IF NOT EXISTS pam SONAME 'auth_pam'");
    s.sql("CREATE USER native@'%' IDENTIFIED VIA mysql_native_password USING PASSWORD('n-secret')");
    s.sql("CREATE USER ed@'%' IDENTIFIED VIA ed25519 USING PASSWORD('e-secret')");
    s.sql("CREATE USER pamuser@'%' IDENTIFIED VIA pam");
    s.sql("GRANT ALL ON staunch_test.* TO native@'%', ed@'%', pamuser@'%'");
    let port = s.port();
    for (user, pass) in [("native", "n-secret"), ("ed", "e-secret")] {
        let pool = Pool::from_url(&format!(
            "mysql://{user}:{pass}@127.0.0.1:{port}/staunch_test?min_idle=0"
        ))
        .unwrap();
        let mut c = pool.get().unwrap_or_else(|e| panic!("{user}: {e}"));
        let who: String = c.query_first("SELECT CURRENT_USER()").unwrap().unwrap();
        assert_eq!(who, format!("{user}@%"));
        drop(c);
        pool.close();
    }
    let pool = Pool::from_url(&format!(
        "mysql://pamuser:p-secret@127.0.0.1:{port}/staunch_test?min_idle=0&connection_timeout=20s"
    ))
    .unwrap();
    let t = Instant::now();
    let e = pool.get().unwrap_err();
    let waited = t.elapsed();
    let text = e.to_string();
    assert_eq!(e.kind(), ErrorKind::ConnectRejected, "{text}");
    assert!(text.contains("\"dialog\""), "{text}");
    assert!(!text.contains("p-secret"), "{text}");
    assert!(
        waited < Duration::from_secs(5),
        "the refusal took {waited:?}: {text}"
    );
    pool.close();
}

/// conf_auth_plugins (the second server): a `caching_sha2_password` user of
/// the test kit's Vitess server (MySQL 8's greeting) connects over TLS and
/// over the unix socket (the two transports on which that server lets it
/// log in), and a `mysql_native_password` user over plain TCP.
#[test]
fn conf_auth_plugins_caching_sha2() {
    use support::{Mysql8, Mysql8Opts, ServerCert};
    let tls = Mysql8::start_with(Mysql8Opts {
        tls: Some(ServerCert::Localhost),
        ..Mysql8Opts::default()
    });
    let plain = Mysql8::start();
    let socket = plain.socket_path();
    for (what, url, user) in [
        ("sha2 over TLS", tls.url(), "sha2"),
        (
            "sha2 over the unix socket",
            format!("{}?socket={}", plain.url(), socket.display()),
            "sha2",
        ),
        (
            "native over TCP",
            plain.url_for("native", "native-secret"),
            "native",
        ),
    ] {
        let pool = Pool::from_url(&format!(
            "{url}{}min_idle=0",
            if url.contains('?') { "&" } else { "?" }
        ))
        .unwrap();
        let mut c = pool.get().unwrap_or_else(|e| panic!("{what}: {e}"));
        let who: String = c.query_first("SELECT CURRENT_USER()").unwrap().unwrap();
        assert_eq!(who, format!("{user}@%"), "{what}");
        drop(c);
        pool.close();
    }
}

/// `Com_commit` and `Com_rollback` of the whole server (`SHOW GLOBAL
/// STATUS`, which counts every session's, so the asking session's own
/// statements do not hide it).
fn commits_and_rollbacks(s: &MariaDb) -> (i64, i64) {
    let rows =
        s.query_rows("SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_commit', 'Com_rollback')");
    let count = |name: &str| -> i64 {
        let row = rows
            .iter()
            .find(|r| r.first().and_then(|v| v.as_deref()) == Some(name))
            .unwrap_or_else(|| panic!("no {name} in {rows:?}"));
        row[1].as_deref().unwrap().parse().unwrap()
    };
    (count("Com_commit"), count("Com_rollback"))
}

/// The Rust face's usual block (borrow, read, drop) sends no `COMMIT` and
/// no `ROLLBACK` for a read, of `SELECT 1` or of an InnoDB table.
#[test]
fn conf_readonly_return() {
    let s = MariaDb::start();
    s.sql("CREATE TABLE staunch_test.r (v INT) ENGINE=InnoDB");
    s.sql("INSERT INTO staunch_test.r VALUES (1)");
    let pool = Pool::from_url(&format!("{}?max_size=2", s.url())).unwrap();
    for sql in ["SELECT 1", "SELECT v FROM r"] {
        let before = commits_and_rollbacks(&s);
        for _ in 0..200 {
            let mut c = pool.get().unwrap();
            assert_eq!(c.query_first::<i64, _>(sql).unwrap(), Some(1));
        }
        assert_eq!(
            commits_and_rollbacks(&s),
            before,
            "{sql}: COMMIT, ROLLBACK sent"
        );
    }
}

/// The C ABI's block (get, query as text, as the bindings send a statement
/// without parameters, free) under `autocommit=false` (as PEP 249's faces
/// run it): the return ends a transaction only where the
/// server's status flags say one is open. `SELECT 1` opens none: nothing
/// is sent. A read of an InnoDB table opens one: the return rolls it back,
/// once per checkout.
#[test]
fn conf_readonly_return_c_abi() {
    use staunch::ffi::*;
    use std::ffi::CString;
    use std::ptr::null_mut;

    let s = MariaDb::start();
    s.sql("CREATE TABLE staunch_test.r (v INT) ENGINE=InnoDB");
    s.sql("INSERT INTO staunch_test.r VALUES (1)");
    let url = CString::new(format!("{}?max_size=2&autocommit=false", s.url())).unwrap();
    let mut pool = null_mut();
    assert_eq!(
        staunch_pool_open(url.as_ptr(), &mut pool, null_mut()),
        STAUNCH_OK
    );
    for (sql, opens) in [("SELECT 1", false), ("SELECT v FROM r", true)] {
        let text = CString::new(sql).unwrap();
        let before = commits_and_rollbacks(&s);
        for _ in 0..200 {
            let mut conn = null_mut();
            assert_eq!(
                staunch_pool_get(pool, 5000, &mut conn, null_mut()),
                STAUNCH_OK
            );
            let mut rows = null_mut();
            assert_eq!(
                staunch_conn_query_ex(
                    conn,
                    text.as_ptr(),
                    std::ptr::null(),
                    0,
                    STAUNCH_QUERY_TEXT,
                    &mut rows,
                    null_mut()
                ),
                STAUNCH_OK
            );
            staunch_rows_free(rows);
            let mut r = staunch_result {
                size: std::mem::size_of::<staunch_result>(),
                ..Default::default()
            };
            assert_eq!(
                staunch_conn_last_result(conn, &mut r, null_mut()),
                STAUNCH_OK
            );
            assert!(!r.autocommit, "{sql}: autocommit on");
            assert_eq!(r.in_transaction, opens, "{sql}: in a transaction");
            staunch_conn_free(conn);
        }
        let (commits, rollbacks) = commits_and_rollbacks(&s);
        assert_eq!(commits - before.0, 0, "{sql}: COMMITs");
        let want = if opens { 200 } else { 0 };
        assert_eq!(rollbacks - before.1, want, "{sql}: ROLLBACKs");
    }
    staunch_pool_free(pool);
}

/// conf_tls_exact: a server presenting a self-signed `CA:TRUE` certificate
/// is pinned by `tls_mode=verify_ca&tls_ca=<that certificate>`: it connects
/// and the session is encrypted; with `tls_ca` naming an unrelated CA the
/// borrow is refused at once (well within `connection_timeout`), with a
/// sentence naming `tls_ca` and no password in it. Under `verify_ca` only
/// the given CA is trusted (no public root: the verifier's unit tests and
/// tests/wire_tls.rs's matrix check that).
#[test]
fn conf_tls_exact() {
    use support::{test_certs, ServerCert, ServerOpts};
    let s = MariaDb::start_with(ServerOpts {
        tls: Some(ServerCert::SelfSignedCa),
        ..Default::default()
    });
    let certs = test_certs();
    let pinned = Pool::from_url(&format!(
        "{}?tls_mode=verify_ca&tls_ca={}&max_size=1",
        s.url(),
        certs.ca.display()
    ))
    .unwrap();
    let mut c = pinned.get().unwrap();
    let one: Option<i64> = c.query_first("SELECT 1").unwrap();
    assert_eq!(one, Some(1));
    let cipher: Option<(String, String)> = c.query_first("SHOW STATUS LIKE 'Ssl_cipher'").unwrap();
    assert!(
        cipher.is_some_and(|(_, v)| !v.is_empty()),
        "the session is not encrypted"
    );
    drop(c);

    let other = Pool::from_url(&format!(
        "{}?tls_mode=verify_ca&tls_ca={}&max_size=1&connection_timeout=5s",
        s.url(),
        certs.other_ca.display()
    ))
    .unwrap();
    let t = Instant::now();
    let e = other.get().unwrap_err();
    let took = t.elapsed();
    let text = e.to_string();
    assert_eq!(e.kind(), ErrorKind::ConnectRejected, "{text}");
    assert!(text.contains("tls_ca"), "{text}");
    assert!(!text.contains("app-secret"), "{text}");
    assert!(
        took < Duration::from_secs(3),
        "refused after {took:?}: {text}"
    );
}
