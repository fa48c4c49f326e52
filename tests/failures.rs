//! How the pool behaves when the server or the application misbehaves, each
//! against a real MariaDB started by the test.

use staunch_testkit as support;

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use staunch::prelude::*;
use staunch::{ErrorKind, Event, Pool};
use support::{MariaDb, Proxy, ServerOpts};

fn pool(s: &MariaDb, params: &str) -> Pool {
    Pool::from_url(&format!("{}?{params}", s.url())).unwrap()
}

fn select1(p: &Pool) -> staunch::Result<i64> {
    let mut c = p.get()?;
    Ok(c.query_first::<i64, _>("SELECT 1")
        .expect("query")
        .expect("row"))
}

#[test]
fn server_restart_is_survived() {
    let mut s = MariaDb::start();
    let p = pool(&s, "max_size=4&connect_timeout=500ms&connection_timeout=1s");
    assert_eq!(select1(&p).unwrap(), 1);
    s.kill9();
    // Past the bypass window, so the borrow validates the dead connection.
    thread::sleep(Duration::from_millis(600));
    let t = Instant::now();
    let e = select1(&p).unwrap_err();
    assert!(
        t.elapsed() < Duration::from_millis(1500),
        "get() must stay bounded while the server is down"
    );
    assert_eq!(e.kind(), ErrorKind::Unreachable, "{e}");
    s.restart();
    // The first get after the restart may still meet a connection broken by
    // the crash if it was idle for less than the bypass window; after that
    // window every borrow is validated, so this must succeed.
    thread::sleep(Duration::from_millis(600));
    for _ in 0..10 {
        assert_eq!(select1(&p).unwrap(), 1);
    }
}

#[test]
fn server_side_kill_of_idle_connections_reaches_no_caller() {
    let s = MariaDb::start();
    let p = pool(&s, "max_size=4");
    let held: Vec<_> = (0..4).map(|_| p.get().unwrap()).collect();
    drop(held);
    assert_eq!(s.kill_connections("app"), 4);
    thread::sleep(Duration::from_millis(600)); // past alive_bypass_window
    for _ in 0..20 {
        assert_eq!(select1(&p).unwrap(), 1);
    }
    assert!(p.stats().validation_failures >= 1);
}

#[test]
fn wait_timeout_expiry_is_caught_on_borrow() {
    let s = MariaDb::start_with(ServerOpts {
        args: vec!["--wait-timeout=1".into()],
        ..Default::default()
    });
    let p = pool(&s, "max_size=2&keepalive_interval=off");
    let held: Vec<_> = (0..2).map(|_| p.get().unwrap()).collect();
    drop(held);
    thread::sleep(Duration::from_millis(1800));
    for _ in 0..10 {
        assert_eq!(select1(&p).unwrap(), 1);
    }
    assert_eq!(p.stats().validation_failures, 2);
}

#[test]
fn keepalive_replaces_idle_connections_the_server_dropped() {
    let s = MariaDb::start();
    let p = pool(&s, "max_size=2&min_idle=2&keepalive_interval=100ms");
    let t = Instant::now();
    while p.stats().idle < 2 && t.elapsed() < Duration::from_secs(10) {
        thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(s.kill_connections("app"), 2);
    // No borrow at all: keepalive alone must notice and refill.
    let t = Instant::now();
    while p.stats().created < 4 && t.elapsed() < Duration::from_secs(10) {
        thread::sleep(Duration::from_millis(20));
    }
    let st = p.stats();
    assert!(st.created >= 4 && st.validation_failures >= 2, "{st:?}");
    assert_eq!(st.total, 2, "{st:?}");
    assert_eq!(s.connection_count("app"), 2);
}

#[test]
fn max_connections_reached_is_transient() {
    let s = MariaDb::start_with(ServerOpts {
        args: vec!["--max-connections=10".into()],
        ..Default::default()
    });
    // Fill the server with connections of our own, until it refuses with
    // 1040 (max_connections is at least 10; MariaDB may keep one extra slot
    // for privileged users).
    let mut hogs = Vec::new();
    loop {
        match mysql::Conn::new(s.app_opts()) {
            Ok(c) => hogs.push(c),
            Err(mysql::Error::MySqlError(e)) if e.code == 1040 => break,
            Err(e) => panic!("unexpected: {e}"),
        }
        assert!(hogs.len() <= 12, "the server never refused");
    }
    let p = pool(
        &s,
        "max_size=2&connection_timeout=800ms&connect_timeout=500ms",
    );
    let e = p.get().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unreachable, "{e}");
    assert!(
        e.to_string().contains("1040"),
        "the server's reason must show: {e}"
    );
    drop(hogs);
    // Connects retry with backoff (up to 1 s): allow for one round of it.
    let mut c = p.get_timeout(Duration::from_secs(3)).unwrap();
    assert_eq!(c.query_first::<i64, _>("SELECT 1").unwrap(), Some(1));
}

#[test]
fn wrong_password_fails_fast_without_retry_storm() {
    let s = MariaDb::start();
    let url = s.url().replace("app-secret", "wrong-secret");
    let p = Pool::from_url(&format!("{url}?connection_timeout=5s")).unwrap();
    let t = Instant::now();
    let e = p.get().unwrap_err();
    let took = t.elapsed();
    assert_eq!(e.kind(), ErrorKind::ConnectRejected, "{e}");
    assert_eq!(e.server_code(), Some(1045), "{e:?}");
    assert!(e.to_string().contains("Access denied"), "{e}");
    assert!(
        !e.to_string().contains("wrong-secret"),
        "the password must not leak: {e}"
    );
    assert!(
        took < Duration::from_secs(1),
        "must fail fast, took {took:?}"
    );
    for _ in 0..100 {
        assert_eq!(p.get().unwrap_err().kind(), ErrorKind::ConnectRejected);
    }
    let attempts = p.stats().connect_failures;
    assert!(
        attempts <= 3,
        "a retry storm: {attempts} connects for 101 gets"
    );
}

#[test]
fn exhausted_pool_says_exhausted() {
    let s = MariaDb::start();
    let p = pool(&s, "max_size=1");
    let _held = p.get().unwrap();
    let t = Instant::now();
    let e = p.get_timeout(Duration::from_millis(200)).unwrap_err();
    assert!(t.elapsed() < Duration::from_millis(200 + 300));
    assert_eq!(e.kind(), ErrorKind::PoolExhausted, "{e}");
    assert!(
        e.to_string().contains("exhausted") && e.to_string().contains("active=1"),
        "{e}"
    );
}

#[test]
fn leaked_connection_is_reported_with_its_thread() {
    let s = MariaDb::start();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s2 = seen.clone();
    let p = Pool::builder()
        .url(&s.url())
        .leak_detection_threshold(Some(Duration::from_millis(100)))
        .event_listener(Arc::new(move |e: &Event| {
            if let Event::LeakSuspected { thread, .. } = e {
                s2.lock().unwrap().push(thread.clone());
            }
        }))
        .build()
        .unwrap();
    let p2 = p.clone();
    thread::Builder::new()
        .name("report-builder".into())
        .spawn(move || {
            let c = p2.get().unwrap();
            thread::sleep(Duration::from_millis(500));
            drop(c);
        })
        .unwrap()
        .join()
        .unwrap();
    // The report carries the borrower's stack, resolved into text on a
    // thread of its own: it may come a little after the return.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while seen.lock().unwrap().is_empty() && std::time::Instant::now() < deadline {
        thread::sleep(Duration::from_millis(10));
    }
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "{seen:?}");
    let (name, stack) = seen[0]
        .split_once('\n')
        .expect("the thread, then its stack");
    assert_eq!(name, "report-builder");
    assert!(
        stack.contains("leaked_connection_is_reported_with_its_thread"),
        "the stack names the function that borrowed: {stack}"
    );
}

fn count(p: &Pool, table: &str) -> i64 {
    p.get()
        .unwrap()
        .query_first(format!("SELECT COUNT(*) FROM {table}"))
        .unwrap()
        .unwrap()
}

#[test]
fn open_transaction_is_rolled_back_on_return() {
    let s = MariaDb::start();
    s.sql("CREATE TABLE staunch_test.t (v INT) ENGINE=InnoDB");
    let p = pool(&s, "max_size=1");
    {
        let mut c = p.get().unwrap();
        c.query_drop("BEGIN").unwrap();
        c.query_drop("INSERT INTO t VALUES (1)").unwrap();
        c.query_drop("INSERT INTO t VALUES (2)").unwrap();
    }
    assert_eq!(count(&p, "t"), 0);
    assert_eq!(p.stats().rollbacks_on_return, 1);
    // Committed work stays, and a closed transaction costs no rollback.
    {
        let mut c = p.get().unwrap();
        c.query_drop("BEGIN").unwrap();
        c.query_drop("INSERT INTO t VALUES (5)").unwrap();
        c.query_drop("COMMIT").unwrap();
    }
    let before = p.stats().rollbacks_on_return;
    assert_eq!(count(&p, "t"), 1);
    // Plain reads: no round trip on return.
    for _ in 0..5 {
        select1(&p).unwrap();
    }
    assert_eq!(p.stats().rollbacks_on_return, before);
    // autocommit=0 leaves an implicit transaction open: rolled back too.
    {
        let mut c = p.get().unwrap();
        c.query_drop("SET autocommit=0").unwrap();
        c.query_drop("INSERT INTO t VALUES (6)").unwrap();
        c.query_drop("INSERT INTO t VALUES (7)").unwrap();
    }
    assert_eq!(count(&p, "t"), 1);
}

#[test]
fn close_while_connections_are_borrowed() {
    let s = MariaDb::start();
    let p = pool(&s, "max_size=4");
    let mut a = p.get().unwrap();
    let b = p.get().unwrap();
    drop(b);
    let p2 = p.clone();
    p.close();
    assert_eq!(p2.get().unwrap_err().kind(), ErrorKind::Closed);
    // The borrowed one still works until returned, then is closed.
    assert_eq!(a.query_first::<i64, _>("SELECT 1").unwrap(), Some(1));
    drop(a);
    assert_eq!(p.stats().total, 0);
    let t = Instant::now();
    while s.connection_count("app") > 0 && t.elapsed() < Duration::from_secs(5) {
        thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        s.connection_count("app"),
        0,
        "the server still sees our connections"
    );
}

#[test]
fn connects_go_exactly_where_the_url_says() {
    // The mysql crate's prefer_socket would move a loopback connection to the
    // server's unix socket, bypassing this proxy.
    let s = MariaDb::start();
    let proxy = Proxy::start(s.addr());
    let p = Pool::from_url(&format!(
        "mysql://app:app-secret@127.0.0.1:{}/staunch_test?max_size=3",
        proxy.port()
    ))
    .unwrap();
    let held: Vec<_> = (0..3).map(|_| p.get().unwrap()).collect();
    assert_eq!(proxy.accepted(), 3);
    assert_eq!(proxy.open_connections(), 3);
    drop(held);
}

#[test]
fn broken_connection_is_not_handed_out_again() {
    let s = MariaDb::start();
    let p = pool(&s, "max_size=1");
    let id1 = {
        let mut c = p.get().unwrap();
        let id: Option<u64> = c.query_first("SELECT CONNECTION_ID()").unwrap();
        // Kill our own session from another connection mid-borrow.
        s.sql(&format!("KILL {}", id.unwrap()));
        assert!(c.query_drop("SELECT 1").is_err());
        id.unwrap()
    };
    let mut c = p.get().unwrap();
    let id2: Option<u64> = c.query_first("SELECT CONNECTION_ID()").unwrap();
    assert_ne!(Some(id1), id2);
    assert_eq!(p.stats().closed_broken, 1);
}

#[test]
fn many_threads_many_checkouts_each_get_their_own_answer() {
    let s = MariaDb::start();
    let p = pool(&s, "max_size=4");
    let crossed = Arc::new(AtomicUsize::new(0));
    let mut ts = Vec::new();
    for t in 0..8u64 {
        let (p, crossed) = (p.clone(), crossed.clone());
        ts.push(thread::spawn(move || {
            for i in 0..300u64 {
                let tag = t * 100_000 + i;
                let mut c = p.get().unwrap();
                let got: Option<u64> = c.exec_first("SELECT ?", (tag,)).unwrap();
                if got != Some(tag) {
                    crossed.fetch_add(1, SeqCst);
                }
            }
        }));
    }
    for t in ts {
        t.join().unwrap();
    }
    assert_eq!(crossed.load(SeqCst), 0);
    let st = p.stats();
    assert_eq!((st.active, st.violations), (0, 0));
    assert!(st.total <= 4);
}

/// One cause per error in the chain: `Display` says each cause once and
/// `source()` does not hand out what `Display` already said, so anyhow's
/// `{:#}` (every error of the chain, joined by ": ") says "Access denied"
/// once. Also for the 64 MiB parameter, below.
#[test]
fn an_error_chain_says_each_cause_once() {
    let s = staunch_testkit::MariaDb::start();
    let url = s.url().replacen(":app-secret@", ":not-the-password@", 1);
    assert_ne!(url, s.url(), "the test server's password changed");
    let pool = staunch::Pool::from_url(&format!("{url}?connection_timeout=2s")).unwrap();
    let e = pool.get().unwrap_err();
    let mut chain = vec![e.to_string()];
    let mut cur: Option<&dyn std::error::Error> = std::error::Error::source(&e);
    while let Some(c) = cur {
        chain.push(c.to_string());
        cur = c.source();
    }
    let alternate = chain.join(": ");
    eprintln!("{alternate}");
    assert_eq!(alternate.matches("Access denied").count(), 1, "{alternate}");
    assert_eq!(e.to_string().matches("Access denied").count(), 1, "{e}");
}
