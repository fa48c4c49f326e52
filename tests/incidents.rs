//! The incidents staunch exists for, each against real MariaDB servers.
//! Figures (longest wait, recovery time) are printed for the record; the
//! assertions are the pool's documented bounds, with slack for a loaded CI box.

use staunch_testkit as support;

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use staunch::prelude::*;
use staunch::{ErrorKind, MysqlConnector, Pool};
use support::ownership::Instrumented;
use support::{MariaDb, Mode, Proxy};

fn url_via(proxy: &Proxy, params: &str) -> String {
    format!(
        "mysql://app:app-secret@127.0.0.1:{}/staunch_test?{params}",
        proxy.port()
    )
}

/// Incident A exactly: the pool's connections die, refill connects reach a
/// VIP whose master is gone (TCP accepted, no greeting ever), then the VIP
/// moves to a healthy server while those connects are still in flight.
#[test]
fn incident_a_vip_moves_during_handshake() {
    let s1 = MariaDb::start();
    let s2 = MariaDb::start();
    let proxy = Proxy::start(s1.addr());
    let connect_timeout = Duration::from_millis(1000);
    let connection_timeout = Duration::from_millis(1500);
    let pool = Pool::from_url(&url_via(
        &proxy,
        "min_idle=2&max_size=4&connect_timeout=1s&connection_timeout=1500ms&validation_timeout=300ms",
    ))
    .unwrap();
    let t = Instant::now();
    while pool.stats().idle < 2 {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "min_idle never filled"
        );
        thread::sleep(Duration::from_millis(10));
    }

    // The master dies behind the VIP: existing connections break, new ones
    // are accepted and never greeted.
    proxy.set_mode(Mode::BlackHole);
    proxy.sever_all();

    let stop = Arc::new(AtomicBool::new(false));
    let longest_wait_us = Arc::new(AtomicU64::new(0));
    let first_ok_after_move_us = Arc::new(AtomicU64::new(u64::MAX));
    let moved_at: Arc<Mutex<Option<Instant>>> = Arc::new(Mutex::new(None));
    let errors = Arc::new(AtomicUsize::new(0));
    let mut workers = Vec::new();
    for _ in 0..4 {
        let (pool, stop, longest, first_ok, moved_at, errors) = (
            pool.clone(),
            stop.clone(),
            longest_wait_us.clone(),
            first_ok_after_move_us.clone(),
            moved_at.clone(),
            errors.clone(),
        );
        workers.push(thread::spawn(move || {
            while !stop.load(SeqCst) {
                let t = Instant::now();
                let r = pool.get();
                longest.fetch_max(t.elapsed().as_micros() as u64, SeqCst);
                match r {
                    Ok(mut c) => {
                        if let Ok(Some(1i64)) = c.query_first::<i64, _>("SELECT 1") {
                            if let Some(m) = *moved_at.lock().unwrap() {
                                first_ok.fetch_min(m.elapsed().as_micros() as u64, SeqCst);
                            }
                        }
                    }
                    Err(e) => {
                        assert!(
                            matches!(e.kind(), ErrorKind::Unreachable | ErrorKind::PoolExhausted),
                            "{e}"
                        );
                        errors.fetch_add(1, SeqCst);
                        thread::sleep(Duration::from_millis(20));
                    }
                }
            }
        }));
    }
    // Let refill connects pile up in the black hole.
    thread::sleep(Duration::from_millis(2500));
    assert!(errors.load(SeqCst) > 0, "the outage must be visible");
    let e = pool.get_timeout(Duration::from_millis(1200)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unreachable, "{e}");
    assert!(
        e.to_string().contains("no greeting"),
        "the error must say why: {e}"
    );

    // The VIP moves while connects are still hanging in the old path.
    proxy.set_target(s2.addr());
    proxy.set_mode(Mode::Pass);
    *moved_at.lock().unwrap() = Some(Instant::now());
    let t = Instant::now();
    while first_ok_after_move_us.load(SeqCst) == u64::MAX && t.elapsed() < Duration::from_secs(10) {
        thread::sleep(Duration::from_millis(5));
    }
    thread::sleep(connect_timeout + Duration::from_millis(300));
    stop.store(true, SeqCst);
    for w in workers {
        w.join().unwrap();
    }
    let recovery = Duration::from_micros(first_ok_after_move_us.load(SeqCst));
    let longest = Duration::from_micros(longest_wait_us.load(SeqCst));
    let st = pool.stats();
    println!(
        "incident A: longest get() wait {longest:?} (connection_timeout {connection_timeout:?}); \
         first successful query {recovery:?} after the VIP move; stats {st:?}"
    );
    assert!(
        longest <= connection_timeout + Duration::from_millis(500),
        "a get() waited {longest:?}"
    );
    assert!(
        recovery <= connect_timeout + Duration::from_millis(1500),
        "recovery took {recovery:?}"
    );
    // No adder is still inside a connect past its deadline.
    assert_eq!(st.connecting, 0, "{st:?}");
    assert_eq!(
        st.abandoned_connects, 0,
        "every stuck connect was cut off: {st:?}"
    );
    let mut c = pool.get().unwrap();
    let server_id: Option<u16> = c.query_first("SELECT @@port").unwrap();
    assert_eq!(
        server_id,
        Some(s2.port()),
        "the pool must now use the new server"
    );
}

/// Connect requests queued during an outage do not all complete when it
/// ends: afterwards the pool holds what min_idle and real demand need.
#[test]
fn no_refill_storm_after_outage() {
    let s = MariaDb::start();
    let proxy = Proxy::start(s.addr());
    let pool = Pool::from_url(&url_via(
        &proxy,
        "max_size=10&min_idle=1&connect_timeout=300ms",
    ))
    .unwrap();
    proxy.set_mode(Mode::Reset);
    let mut ts = Vec::new();
    for _ in 0..10 {
        let p = pool.clone();
        ts.push(thread::spawn(move || {
            p.get_timeout(Duration::from_millis(400)).is_err()
        }));
    }
    for t in ts {
        assert!(t.join().unwrap());
    }
    proxy.set_mode(Mode::Pass);
    thread::sleep(Duration::from_secs(2));
    let st = pool.stats();
    println!("after the outage: {st:?}");
    assert_eq!(st.total, 1, "only min_idle is wanted now: {st:?}");
    assert_eq!(st.pending_creates, 0, "{st:?}");
}

/// A frozen server (SIGSTOP): the kernel still accepts TCP, nothing answers.
/// Borrow-time validation and connects are bounded; after the thaw the pool
/// serves again.
#[test]
fn incident_a_frozen_server() {
    let s = MariaDb::start();
    let pool = Pool::from_url(&format!(
        "{}?max_size=3&connect_timeout=500ms&validation_timeout=300ms&alive_bypass_window=0&connection_timeout=1200ms",
        s.url()
    ))
    .unwrap();
    drop(pool.get().unwrap());
    s.freeze();
    let t = Instant::now();
    let e = pool.get().unwrap_err();
    let waited = t.elapsed();
    s.thaw();
    println!("frozen server: get() failed after {waited:?}: {e}");
    assert_eq!(e.kind(), ErrorKind::Unreachable, "{e}");
    assert!(
        waited < Duration::from_millis(1200 + 500),
        "waited {waited:?}"
    );
    let mut c = pool.get().expect("the pool must recover after the thaw");
    assert_eq!(c.query_first::<i64, _>("SELECT 1").unwrap(), Some(1));
    assert!(pool.stats().validation_failures >= 1);
}

/// A server that drips one byte at a time defeats a per-read socket timeout
/// (each read gets a byte in time), but not staunch's hard deadline.
#[test]
fn drip_server_defeats_per_read_timeout_not_the_deadline() {
    let s = MariaDb::start();
    let proxy = Proxy::start(s.addr());
    proxy.set_mode(Mode::Drip(Duration::from_millis(100)));

    // The mysql crate alone, with a 500 ms per-read timeout: still
    // connecting after 2 s (the greeting alone takes ~10 s at this pace).
    let done = Arc::new(AtomicBool::new(false));
    let d2 = done.clone();
    let addr = proxy.addr();
    let raw = thread::spawn(move || {
        let opts = mysql::OptsBuilder::new()
            .ip_or_hostname(Some(addr.ip().to_string()))
            .tcp_port(addr.port())
            .user(Some("app"))
            .pass(Some("app-secret"))
            .prefer_socket(false)
            .read_timeout(Some(Duration::from_millis(500)));
        let r = mysql::Conn::new(opts).map(|_| ());
        d2.store(true, SeqCst);
        r
    });

    let pool = Pool::from_url(&url_via(
        &proxy,
        "connect_timeout=1s&connection_timeout=1500ms",
    ))
    .unwrap();
    let t = Instant::now();
    let e = pool.get().unwrap_err();
    let waited = t.elapsed();
    println!("drip: get() failed after {waited:?}: {e}");
    assert_eq!(e.kind(), ErrorKind::Unreachable, "{e}");
    assert!(e.to_string().contains("bytes of the handshake"), "{e}");
    assert!(waited < Duration::from_millis(1500 + 500));
    thread::sleep(Duration::from_millis(
        2000u64.saturating_sub(t.elapsed().as_millis() as u64),
    ));
    assert!(
        !done.load(SeqCst),
        "the per-read timeout alone should not have ended the drip"
    );
    // A retry may have started while the caller still waited; it too is cut
    // off at its deadline, never abandoned.
    let t = Instant::now();
    while pool.stats().connecting > 0 && t.elapsed() < Duration::from_secs(3) {
        thread::sleep(Duration::from_millis(20));
    }
    let st = pool.stats();
    assert_eq!((st.connecting, st.abandoned_connects), (0, 0), "{st:?}");
    drop(proxy); // ends the raw connect
    let _ = raw.join();
}

/// Incident C: a keepalive every 10 ms races 8 borrowing threads over 3
/// connections; nobody may ever hold a connection another is using, and
/// every query gets its own answer.
#[test]
fn incident_c_keepalive_never_shares_a_connection() {
    let s = MariaDb::start();
    let cfg = staunch::Builder::new()
        .url(&s.url())
        .max_size(3)
        .keepalive_interval(Some(Duration::from_millis(10)))
        .alive_bypass_window(Duration::from_millis(5))
        .config()
        .unwrap();
    let conn = Instrumented::new(MysqlConnector::new(
        cfg.connect().clone(),
        Duration::from_secs(1),
    ));
    let (violations, validations) = (conn.violations.clone(), conn.validations.clone());
    let pool = staunch::pool::CorePool::with_connector(cfg.pool().clone(), conn).unwrap();
    let crossed = Arc::new(AtomicUsize::new(0));
    let queries = Arc::new(AtomicUsize::new(0));
    let stop = Instant::now() + Duration::from_millis(2000);
    let mut ts = Vec::new();
    for w in 0..8u64 {
        let (pool, violations, crossed, queries) = (
            pool.clone(),
            violations.clone(),
            crossed.clone(),
            queries.clone(),
        );
        ts.push(thread::spawn(move || {
            let mut i = 0u64;
            while Instant::now() < stop {
                let mut c = pool.get().unwrap();
                if !c.enter() {
                    violations.fetch_add(1, SeqCst);
                }
                let tag = w * 1_000_000 + i;
                let got = c.conn.query_first_text(&format!("SELECT {tag}")).unwrap();
                if got != Some(vec![Some(tag.to_string())]) {
                    crossed.fetch_add(1, SeqCst);
                }
                queries.fetch_add(1, SeqCst);
                c.leave();
                drop(c);
                i += 1;
                if i % 8 == 0 {
                    thread::sleep(Duration::from_millis(15));
                }
            }
        }));
    }
    for t in ts {
        t.join().unwrap();
    }
    let st = pool.stats();
    println!(
        "incident C: {} queries, {} keepalive/borrow validations, {} violations, {} crossed answers",
        queries.load(SeqCst),
        validations.load(SeqCst),
        violations.load(SeqCst),
        crossed.load(SeqCst)
    );
    assert_eq!(violations.load(SeqCst), 0);
    assert_eq!(crossed.load(SeqCst), 0);
    assert_eq!(st.violations, 0);
    assert!(st.keepalives > 0, "keepalive must have run: {st:?}");
}
