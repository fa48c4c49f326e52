//! Knobs that change what the pool does, each shown against a real server.

use staunch_testkit as support;

use std::thread;
use std::time::{Duration, Instant};

use staunch::prelude::*;
use staunch::{ErrorKind, Pool};
use support::MariaDb;

#[test]
fn query_timeout_bounds_a_query_and_keeps_the_session() {
    let s = MariaDb::start();
    let p = Pool::from_url(&format!("{}?max_size=1&query_timeout=300ms", s.url())).unwrap();
    let mut c = p.get().unwrap();
    let t = Instant::now();
    let e = c.query_drop("SELECT SLEEP(3)").unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(2), "{e}");
    assert_eq!(e.kind(), ErrorKind::StatementTimeout, "{e}");
    // The server ended the statement: the same connection answers at once.
    assert_eq!(c.query_first::<i64, _>("SELECT 7").unwrap(), Some(7));
    drop(c);
    assert_eq!(p.stats().closed_broken, 0);
    assert_eq!(p.stats().created, 1);
}

#[test]
fn reset_on_return_clears_session_state() {
    let s = MariaDb::start();
    let p = Pool::from_url(&format!("{}?max_size=1&reset_on_return=true", s.url())).unwrap();
    p.get().unwrap().query_drop("SET @leftover = 42").unwrap();
    let mut c = p.get().unwrap();
    let v: Option<Option<i64>> = c.query_first("SELECT @leftover").unwrap();
    assert_eq!(v, Some(None));
    // Transaction tracking still works after a reset (it re-runs session set-up).
    s.sql("CREATE TABLE staunch_test.r (v INT) ENGINE=InnoDB");
    c.query_drop("BEGIN").unwrap();
    c.query_drop("INSERT INTO r VALUES (1)").unwrap();
    c.query_drop("INSERT INTO r VALUES (2)").unwrap();
    drop(c);
    let n: Option<i64> = p
        .get()
        .unwrap()
        .query_first("SELECT COUNT(*) FROM r")
        .unwrap();
    assert_eq!(n, Some(0));

    // Without the knob, a changed session is reset too (the default), and
    // one that did not change is not.
    let p = Pool::from_url(&format!("{}?max_size=1", s.url())).unwrap();
    p.get().unwrap().query_drop("SET @gone = 1").unwrap();
    let v: Option<Option<i64>> = p.get().unwrap().query_first("SELECT @gone").unwrap();
    assert_eq!(v, Some(None));
    let resets = p.stats().resets_on_return;
    p.get().unwrap().query_drop("SELECT 1").unwrap();
    assert_eq!(p.stats().resets_on_return, resets);
}

#[test]
fn unix_socket_only_when_asked() {
    let s = MariaDb::start();
    let sock = s.dir().join("s.sock");
    let url = format!(
        "mysql://app:app-secret@localhost/staunch_test?socket={}",
        sock.display()
    );
    let p = Pool::from_url(&url).unwrap();
    let mut c = p.get().unwrap();
    // Over a unix socket the server reports no TCP port for the session.
    let host: Option<String> = c
        .query_first("SELECT host FROM information_schema.processlist WHERE id = CONNECTION_ID()")
        .unwrap();
    assert_eq!(
        host.as_deref(),
        Some("localhost"),
        "expected a socket session"
    );
}

#[test]
fn initialization_fail_timeout_fails_fast_on_a_permanent_error() {
    let s = MariaDb::start();
    let bad = s.url().replace("app-secret", "nope");
    let t = Instant::now();
    let e = Pool::from_url(&format!("{bad}?initialization_fail_timeout=5s")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ConnectRejected, "{e}");
    assert!(t.elapsed() < Duration::from_secs(2));
    let p = Pool::from_url(&format!("{}?initialization_fail_timeout=0", s.url())).unwrap();
    assert_eq!(
        p.stats().total,
        1,
        "the first connection is made before from_url returns"
    );
}

#[test]
fn min_idle_is_kept_and_refilled() {
    let s = MariaDb::start();
    let p = Pool::from_url(&format!(
        "{}?max_size=5&min_idle=3&keepalive_interval=200ms",
        s.url()
    ))
    .unwrap();
    let wait_for = |n: usize| {
        let t = Instant::now();
        while p.stats().idle < n && t.elapsed() < Duration::from_secs(10) {
            thread::sleep(Duration::from_millis(20));
        }
        p.stats().idle
    };
    assert_eq!(wait_for(3), 3);
    assert_eq!(s.connection_count("app"), 3);
    p.soft_evict();
    thread::sleep(Duration::from_millis(300));
    assert_eq!(wait_for(3), 3);
    let st = p.stats();
    assert_eq!(st.closed_evicted, 3, "{st:?}");
    assert_eq!(st.total, 3, "{st:?}");
}

#[test]
fn suspend_and_resume() {
    let s = MariaDb::start();
    let p = Pool::from_url(&s.url()).unwrap();
    drop(p.get().unwrap());
    p.suspend();
    let e = p.get_timeout(Duration::from_millis(100)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::PoolExhausted, "{e}");
    let p2 = p.clone();
    let t = thread::spawn(move || p2.get_timeout(Duration::from_secs(5)).map(|_| ()));
    thread::sleep(Duration::from_millis(100));
    assert!(!t.is_finished(), "served while suspended");
    p.resume();
    t.join().unwrap().unwrap();

    // Resized while running (the same server: one start for both).
    p.close();
    let p = Pool::from_url(&format!("{}?max_size=4&max_size_cap=8", s.url())).unwrap();
    assert_eq!((p.max_size(), p.max_size_cap()), (4, 8));
    let e = p.set_max_size(9).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Config, "{e}");
    assert!(e.to_string().contains("max_size_cap (8)"), "{e}");
    // Shrink with all four borrowed: each still works; the server sees the
    // surplus go as it comes back.
    let mut held: Vec<_> = (0..4).map(|_| p.get().unwrap()).collect();
    p.set_max_size(2).unwrap();
    for (i, c) in held.iter_mut().enumerate() {
        let n: Option<i64> = c.query_first(format!("SELECT {i}")).unwrap();
        assert_eq!(n, Some(i as i64));
    }
    drop(held);
    let st = p.stats();
    assert_eq!((st.total, st.closed_evicted), (2, 2), "{st:?}");
    let until = Instant::now() + Duration::from_secs(5);
    while s.connection_count("app") > 2 && Instant::now() < until {
        thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(s.connection_count("app"), 2);
    // Grow with two callers waiting behind one borrowed connection.
    p.set_max_size(1).unwrap();
    while p.stats().total > 1 && Instant::now() < until {
        thread::sleep(Duration::from_millis(5));
    }
    let blocker = p.get().unwrap();
    let waiters: Vec<_> = (0..2)
        .map(|_| {
            let p2 = p.clone();
            thread::spawn(move || p2.get_timeout(Duration::from_secs(5)).map(|_| ()))
        })
        .collect();
    while p.stats().waiting < 2 && Instant::now() < until {
        thread::sleep(Duration::from_millis(5));
    }
    p.set_max_size(3).unwrap();
    for w in waiters {
        w.join().unwrap().unwrap();
    }
    // Served while the blocker is still held: the pool grew (to 2 or 3: a
    // waiter done at once may hand its connection to the other before the
    // second connect is needed).
    let total = p.stats().total;
    assert!((2..=3).contains(&total), "total={total}");
    drop(blocker);
}

#[test]
fn autocommit_off_holds_on_every_session_and_after_init_sql() {
    let s = MariaDb::start();
    s.sql("CREATE TABLE staunch_test.ac (v INT) ENGINE=InnoDB");
    let p = Pool::from_url(&format!(
        "{}?max_size=1&autocommit=false&init_sql=SET autocommit=1, time_zone='%2B03:00'",
        s.url()
    ))
    .unwrap();
    let mut c = p.get().unwrap();
    // The knob wins over what init_sql set; the rest of init_sql holds.
    let (auto, tz): (i64, String) = c
        .query_first("SELECT @@session.autocommit, @@session.time_zone")
        .unwrap()
        .unwrap();
    assert_eq!((auto, tz.as_str()), (0, "+03:00"));
    assert!(!c.autocommit());
    // A write is not committed until the borrower commits: returned
    // without, it is rolled back.
    c.query_drop("INSERT INTO ac VALUES (1)").unwrap();
    assert!(c.in_transaction());
    drop(c);
    let mut c = p.get().unwrap();
    assert_eq!(
        c.query_first::<i64, _>("SELECT COUNT(*) FROM ac").unwrap(),
        Some(0)
    );
    // The borrower turns autocommit on; the return puts it back.
    c.query_drop("SET autocommit=1").unwrap();
    assert!(c.autocommit());
    drop(c);
    let mut c = p.get().unwrap();
    assert_eq!(
        c.query_first::<i64, _>("SELECT @@session.autocommit")
            .unwrap(),
        Some(0)
    );
    drop(c);
    assert_eq!(p.stats().created, 1);
}
