//! Pool core tests with a scripted fake connector (no database): the
//! mechanisms in isolation. Real-server behaviour is in tests/.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use super::*;
use super::{ConnectAttempt, Connector, Recycled};

#[derive(Default)]
struct Script {
    /// Fail this many next connects (transient).
    fail_next: AtomicUsize,
    /// Panic in this many next connects (a driver bug).
    panic_next: AtomicUsize,
    /// Fail every connect permanently.
    reject: AtomicBool,
    /// Connects block until cancelled by the watchdog.
    hang: AtomicBool,
    /// A cut-off hanging connect takes this long to return (a thread slow
    /// to wind down).
    hang_exit_ms: AtomicUsize,
    /// Validation fails.
    invalid: AtomicBool,
    /// Validation takes this many milliseconds.
    validate_ms: AtomicUsize,
    /// Validation, once started, waits while this is set (at most 60 s), so
    /// a test can hold a check open for as long as it needs, however slowly
    /// it runs (Miri).
    validate_gate: AtomicBool,
    /// How many checks wait at that gate now.
    at_gate: AtomicUsize,
    /// The next this many calls of validate, recycle or is_broken panic (a
    /// driver bug).
    panic_checks: AtomicUsize,
    connects: AtomicUsize,
    validations: AtomicUsize,
    recycles: AtomicUsize,
}

impl Script {
    fn take_panic(&self) -> bool {
        self.panic_checks
            .fetch_update(SeqCst, SeqCst, |n| n.checked_sub(1))
            .is_ok()
    }
}

struct Fake {
    s: Arc<Script>,
}

struct FakeConn {
    n: usize,
    /// Set while someone (borrower or validator) uses the connection.
    busy: Arc<AtomicBool>,
}

impl Connector for Fake {
    type Conn = FakeConn;
    fn connect(&self, attempt: &ConnectAttempt) -> Result<FakeConn> {
        let n = self.s.connects.fetch_add(1, SeqCst) + 1;
        if self.s.hang.load(SeqCst) {
            let gate = Arc::new((Mutex::new(false), Condvar::new()));
            let g2 = gate.clone();
            attempt.set_canceller(move || {
                *g2.0.lock().unwrap() = true;
                g2.1.notify_all();
                Some("fake: no greeting".into())
            });
            let mut cut = gate.0.lock().unwrap();
            while !*cut {
                cut = gate.1.wait(cut).unwrap();
            }
            drop(cut);
            thread::sleep(Duration::from_millis(
                self.s.hang_exit_ms.load(SeqCst) as u64
            ));
            return Err(Error::new(
                ErrorKind::Connect,
                format!("cut off: {}", attempt.cancelled().unwrap()),
            ));
        }
        if self.s.reject.load(SeqCst) {
            return Err(Error::new(ErrorKind::Connect, "access denied"));
        }
        if self.s.panic_next.load(SeqCst) > 0 {
            self.s.panic_next.fetch_sub(1, SeqCst);
            // As a panic, without the panic hook: printing a backtrace for
            // every attempt can take longer than the test's timeouts.
            std::panic::resume_unwind(Box::new("fake: driver bug"));
        }
        if self.s.fail_next.load(SeqCst) > 0 {
            self.s.fail_next.fetch_sub(1, SeqCst);
            return Err(Error::new(ErrorKind::Connect, "connection refused"));
        }
        Ok(FakeConn {
            n,
            busy: Arc::new(AtomicBool::new(false)),
        })
    }
    fn validate(&self, conn: &mut FakeConn, _t: Duration) -> Result<()> {
        assert!(!conn.busy.swap(true, SeqCst), "validated while in use");
        self.s.validations.fetch_add(1, SeqCst);
        if self.s.take_panic() {
            conn.busy.store(false, SeqCst);
            std::panic::resume_unwind(Box::new("fake: ping parser bug"));
        }
        thread::yield_now();
        thread::sleep(Duration::from_millis(self.s.validate_ms.load(SeqCst) as u64));
        let gate_deadline = Instant::now() + Duration::from_secs(60);
        if self.s.validate_gate.load(SeqCst) {
            self.s.at_gate.fetch_add(1, SeqCst);
            while self.s.validate_gate.load(SeqCst) && Instant::now() < gate_deadline {
                thread::sleep(Duration::from_millis(1));
            }
            self.s.at_gate.fetch_sub(1, SeqCst);
        }
        conn.busy.store(false, SeqCst);
        if self.s.invalid.load(SeqCst) {
            Err(Error::new(ErrorKind::Io, "ping failed"))
        } else {
            Ok(())
        }
    }
    fn recycle(&self, _c: &mut FakeConn, _touched: bool) -> Result<Recycled> {
        self.s.recycles.fetch_add(1, SeqCst);
        if self.s.take_panic() {
            std::panic::resume_unwind(Box::new("fake: rollback bug"));
        }
        Ok(Recycled::AsIs)
    }
    fn is_broken(&self, _c: &FakeConn) -> bool {
        if self.s.take_panic() {
            std::panic::resume_unwind(Box::new("fake: peek bug"));
        }
        false
    }
    fn is_permanent(&self, e: &Error) -> bool {
        e.to_string().contains("access denied")
    }
    fn endpoint(&self) -> String {
        "fake:1".into()
    }
}

fn cfg() -> PoolConfig {
    PoolConfig {
        max_size: 4,
        connection_timeout: Duration::from_secs(5),
        connect_timeout: Duration::from_millis(300),
        ..PoolConfig::default()
    }
}

fn pool(c: PoolConfig) -> (CorePool<Fake>, Arc<Script>) {
    let s = Arc::new(Script::default());
    (
        CorePool::with_connector(c, Fake { s: s.clone() }).unwrap(),
        s,
    )
}

#[test]
fn returned_connection_is_reused() {
    let (p, s) = pool(cfg());
    let n1 = p.get().unwrap().n;
    let n2 = p.get().unwrap().n;
    assert_eq!(n1, n2);
    assert_eq!(s.connects.load(SeqCst), 1);
    let st = p.stats();
    assert_eq!(
        (st.total, st.idle, st.active, st.acquired, st.created),
        (1, 1, 0, 2, 1)
    );
}

#[test]
fn a_thread_gets_back_the_connection_it_used_last() {
    let (p, _) = pool(cfg());
    let first = p.get().unwrap();
    let second = p.get().unwrap();
    let (n1, n2) = (first.n, second.n);
    assert_ne!(n1, n2);
    drop(first);
    drop(second);
    // Both idle; this thread borrowed the second last, in the higher entry,
    // which it gets again where lowest-first would give it the first.
    for _ in 0..3 {
        assert_eq!(p.get().unwrap().n, n2);
    }
    // A thread with no history takes the lowest idle entry, and then keeps
    // that one while this thread keeps its own.
    thread::scope(|s| {
        s.spawn(|| {
            for _ in 0..3 {
                assert_eq!(p.get().unwrap().n, n1);
            }
        });
    });
    assert_eq!(p.get().unwrap().n, n2);
    // The preference never takes a connection from under its borrower.
    let held = p.get().unwrap();
    assert_eq!(held.n, n2);
    assert_eq!(p.get().unwrap().n, n1);
}

#[test]
fn exhausted_pool_says_so() {
    let (p, _) = pool(PoolConfig {
        max_size: 1,
        ..cfg()
    });
    let _held = p.get().unwrap();
    let e = p.get_timeout(Duration::from_millis(50)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::PoolExhausted, "{e}");
    assert!(e.to_string().contains("exhausted"), "{e}");
    assert!(e.to_string().contains("total=1, active=1, idle=0"), "{e}");
    assert_eq!(p.stats().acquire_timeouts, 1);
}

/// A thread that borrows from `p` with a blocking get, notes `i` in `order`
/// when served and gives the connection back; returns once it waits in the
/// queue, where `i` borrowers now stand (so waiter i queues before i+1).
fn queue_get(
    p: &CorePool<Fake>,
    order: &Arc<Mutex<Vec<usize>>>,
    i: usize,
) -> thread::JoinHandle<()> {
    let (p2, order) = (p.clone(), order.clone());
    let t = thread::spawn(move || {
        let c = p2.get().unwrap();
        order.lock().unwrap().push(i);
        drop(c);
    });
    while p.stats().waiting < i + 1 {
        thread::yield_now();
    }
    t
}

#[test]
fn waiters_are_served_first_come_first_served() {
    let (p, _) = pool(PoolConfig {
        max_size: 1,
        ..cfg()
    });
    let held = p.get().unwrap();
    let order = Arc::new(Mutex::new(Vec::new()));
    let ts: Vec<_> = (0..4).map(|i| queue_get(&p, &order, i)).collect();
    drop(held);
    for t in ts {
        t.join().unwrap();
    }
    assert_eq!(*order.lock().unwrap(), vec![0, 1, 2, 3]);
}

/// A blocking get is the borrow a host starts apart (`get_start`) with its
/// thread waiting on it: both kinds stand in one line, served in the order
/// they came, and a cancelled blocking get is counted once.
#[test]
fn blocking_and_apart_borrows_stand_in_one_line() {
    let (p, _) = pool(PoolConfig {
        max_size: 1,
        ..cfg()
    });
    let held = p.get().unwrap();
    let order = Arc::new(Mutex::new(Vec::new()));
    let first = queue_get(&p, &order, 0);
    let Started::Waiting(mut apart) = p.get_start(Duration::from_secs(5)).unwrap() else {
        panic!("the pool's one connection is held: the borrow must wait");
    };
    assert!(apart.fd() >= 0);
    let third = queue_get(&p, &order, 2);
    drop(held);
    let lease = loop {
        match apart.finish() {
            Some(got) => break got.unwrap(),
            None => thread::sleep(Duration::from_millis(1)),
        }
    };
    order.lock().unwrap().push(1);
    drop(lease);
    first.join().unwrap();
    third.join().unwrap();
    assert_eq!(*order.lock().unwrap(), vec![0, 1, 2]);

    let held = p.get().unwrap();
    let token = cancel::CancelToken::new();
    let waiter = {
        let (p, token) = (p.clone(), token.clone());
        thread::spawn(move || p.get_cancellable(Duration::from_secs(5), &token))
    };
    while p.stats().waiting < 1 {
        thread::yield_now();
    }
    token.cancel();
    let e = waiter.join().unwrap().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Cancelled, "{e}");
    let st = p.stats();
    assert_eq!((st.waiting, st.acquires_cancelled), (0, 1));
    drop(held);
}

#[test]
#[cfg_attr(miri, ignore = "real-time bounds: Miri runs the pool ~100x slower")]
fn hanging_connect_is_cut_off_at_its_deadline() {
    let (p, s) = pool(cfg());
    s.hang.store(true, SeqCst);
    let e = p.get_timeout(Duration::from_millis(700)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unreachable, "{e}");
    assert!(e.to_string().contains("fake: no greeting"), "{e}");
    s.hang.store(false, SeqCst);
    // The adders are free again: the next get connects.
    let c = p.get_timeout(Duration::from_secs(3)).unwrap();
    assert!(c.n > 1);
}

#[test]
#[cfg_attr(miri, ignore = "real-time bounds: Miri runs the pool ~100x slower")]
fn extra_adder_serves_while_the_others_are_stuck() {
    // One adder, stuck in a connect with a long deadline; a healthy path
    // appears; a waiter must be served by an extra adder, not after the
    // deadline.
    let (p, s) = pool(PoolConfig {
        adder_threads: 1,
        connect_timeout: Duration::from_secs(30),
        ..cfg()
    });
    s.hang.store(true, SeqCst);
    let p2 = p.clone();
    let first = thread::spawn(move || p2.get_timeout(Duration::from_millis(100)).map(|_| ()));
    assert!(first.join().unwrap().is_err());
    while s.connects.load(SeqCst) == 0 {
        thread::yield_now();
    }
    s.hang.store(false, SeqCst);
    let c = p
        .get_timeout(Duration::from_secs(5))
        .expect("an extra adder should connect");
    assert!(c.n >= 2);
    assert!(p.stats().adder_threads >= 2);
    p.close();
}

#[test]
fn permanent_error_fails_fast_without_retry_storm() {
    let (p, s) = pool(cfg());
    s.reject.store(true, SeqCst);
    let t = Instant::now();
    let e = p.get().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ConnectRejected, "{e}");
    assert!(t.elapsed() < p.config().connection_timeout);
    for _ in 0..50 {
        assert_eq!(p.get().unwrap_err().kind(), ErrorKind::ConnectRejected);
    }
    // Within the hold-off, gets reuse the error rather than connect again.
    assert!(
        s.connects.load(SeqCst) <= 3,
        "connects: {}",
        s.connects.load(SeqCst)
    );
}

#[test]
fn transient_failures_are_retried_within_the_timeout() {
    let (p, s) = pool(cfg());
    s.fail_next.store(3, SeqCst);
    let c = p.get().unwrap();
    assert_eq!(c.n, 4);
    assert_eq!(p.stats().connect_failures, 3);
}

#[test]
#[cfg_attr(miri, ignore = "real-time bounds: Miri runs the pool ~100x slower")]
fn a_connector_panic_is_one_failed_connect() {
    let (p, s) = pool(PoolConfig {
        max_size: 1,
        ..cfg()
    });
    // Before, a panic kept its request pending and its connect counted for
    // good: no waiter asked for a connection again, and the message said a
    // connect was still running.
    s.panic_next.store(usize::MAX / 2, SeqCst);
    let e = p.get_timeout(Duration::from_secs(1)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unreachable, "{e}");
    assert!(
        e.to_string()
            .contains("the driver panicked (fake: driver bug)"),
        "{e}"
    );
    let panics = s.connects.load(SeqCst);
    assert!(panics >= 2, "retried with backoff: {panics} connects");
    s.panic_next.store(0, SeqCst);
    let c = p.get_timeout(Duration::from_secs(3)).unwrap();
    drop(c);
    let st = p.stats();
    assert_eq!(
        (st.total, st.connecting, st.pending_creates),
        (1, 0, 0),
        "{st:?}"
    );
    assert_eq!(st.connect_failures as usize, s.connects.load(SeqCst) - 1);
}

#[test]
#[cfg_attr(miri, ignore = "real-time bounds: Miri runs the pool ~100x slower")]
fn no_refill_storm_after_outage() {
    let (p, s) = pool(PoolConfig {
        max_size: 8,
        ..cfg()
    });
    s.fail_next.store(usize::MAX / 2, SeqCst);
    let mut ts = Vec::new();
    for _ in 0..8 {
        let p = p.clone();
        ts.push(thread::spawn(move || {
            p.get_timeout(Duration::from_millis(200)).is_err()
        }));
    }
    for t in ts {
        assert!(t.join().unwrap());
    }
    // The outage ends after everyone gave up: nobody needs connections now.
    s.fail_next.store(0, SeqCst);
    thread::sleep(Duration::from_millis(1500));
    let st = p.stats();
    assert_eq!(
        st.total, 0,
        "requests from the outage completed anyway: {st:?}"
    );
    assert_eq!(st.pending_creates, 0);
}

#[test]
fn stale_connection_is_validated_and_replaced() {
    let (p, s) = pool(PoolConfig {
        alive_bypass_window: Duration::ZERO,
        keepalive_interval: None,
        ..cfg()
    });
    let n1 = p.get().unwrap().n;
    thread::sleep(Duration::from_millis(10));
    s.invalid.store(true, SeqCst);
    let p2 = p.clone();
    let s2 = s.clone();
    let t = thread::spawn(move || {
        thread::sleep(Duration::from_millis(50));
        s2.invalid.store(false, SeqCst);
        drop(p2);
    });
    let c = p.get().unwrap();
    t.join().unwrap();
    assert_ne!(c.n, n1);
    assert!(p.stats().validation_failures >= 1);
}

#[test]
fn incident_c_keepalive_never_shares_a_connection() {
    // A keepalive every 10 ms and 8 borrowers (4 under Miri) hammering 2 connections. The fake
    // panics (a test failure) if validation touches a connection in use, and
    // borrowers check nobody else holds theirs.
    let (p, s) = pool(PoolConfig {
        max_size: 2,
        keepalive_interval: Some(Duration::from_millis(10)),
        max_lifetime: Some(Duration::from_secs(60)),
        alive_bypass_window: Duration::from_millis(5),
        ..cfg()
    });
    // Each check takes 1 ms: borrowers coming back find it running.
    s.validate_ms.store(1, SeqCst);
    // Busy for two thirds of each cycle, then everyone idle for a third:
    // keepalives (due after 10 ms idle) run in the idle spells, and the
    // borrowers come back while they do. Under Miri (~100x slower, one host
    // thread) a borrow takes the better part of a second with 8 borrowers,
    // so an idle spell of 20 ms would never find both connections idle: it
    // uses 4 borrowers and 10x longer cycles.
    let (borrowers, cycle_ms): (usize, u64) = if cfg!(miri) { (4, 600) } else { (8, 60) };
    let busy_ms = cycle_ms * 2 / 3;
    let violations = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let start = Instant::now();
    let mut ts = Vec::new();
    for _ in 0..borrowers {
        let p = p.clone();
        let v = violations.clone();
        let done = done.clone();
        ts.push(thread::spawn(move || {
            while !done.load(SeqCst) {
                let phase = (start.elapsed().as_millis() % u128::from(cycle_ms)) as u64;
                if phase >= busy_ms {
                    thread::sleep(Duration::from_millis(cycle_ms - phase));
                    continue;
                }
                // What is asserted is that nobody shares, not how long a
                // borrow waits: under Miri, interpreting every test's threads
                // on one host thread, 5 s ran out once (CI, 2 cores).
                let c = p.get_timeout(patient(Duration::from_secs(5))).unwrap();
                if c.busy.swap(true, SeqCst) {
                    v.fetch_add(1, SeqCst);
                }
                thread::yield_now();
                c.busy.store(false, SeqCst);
                drop(c);
            }
        }));
    }
    // At least 1.5 s and 10 keepalives (on a loaded machine the idle spells
    // may come late; under Miri, 3), at most 15 s ([`patient`]).
    let keepalives = if cfg!(miri) { 3 } else { 10 };
    while start.elapsed() < Duration::from_millis(1500)
        || (p.stats().keepalives < keepalives && start.elapsed() < patient(Duration::from_secs(15)))
    {
        thread::sleep(Duration::from_millis(10));
    }
    done.store(true, SeqCst);
    for t in ts {
        t.join().unwrap();
    }
    let st = p.stats();
    assert_eq!(violations.load(SeqCst), 0);
    assert_eq!(st.violations, 0);
    assert!(
        st.keepalives >= keepalives,
        "keepalive must have run: {st:?}"
    );
}

/// A real-time bound for a test that Miri (~100x slower) also runs: `d`,
/// or 6 times `d` under Miri.
fn patient(d: Duration) -> Duration {
    if cfg!(miri) {
        d * 6
    } else {
        d
    }
}

/// Waits until `f` holds, at most 5 s ([`patient`]).
fn eventually(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + patient(Duration::from_secs(5));
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for: {what}");
        thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn a_panic_in_validate_or_recycle_costs_the_connection_not_the_slot() {
    // Before, a panic in validate on borrow went out of get() with the entry
    // still IN_USE and its connection gone; in keepalive it left the entry
    // RESERVED for good; in recycle it went out of the borrower's drop. Each
    // lost a slot for the life of the pool.
    let (p, s) = pool(PoolConfig {
        max_size: 1,
        alive_bypass_window: Duration::ZERO,
        ..cfg()
    });
    drop(p.get().unwrap());

    // On borrow: the connection is closed, get() connects a new one.
    s.panic_checks.store(1, SeqCst);
    let c = p.get().expect("get() after a panicking validation");
    assert_eq!(c.n, 2, "a new connection");
    let st = p.stats();
    assert_eq!((st.closed_broken, st.validation_failures), (1, 1), "{st:?}");

    // On return: recycle panics, the connection is closed.
    s.panic_checks.store(1, SeqCst);
    drop(c);
    let st = p.stats();
    assert_eq!((st.total, st.closed_broken), (0, 2), "{st:?}");

    // On return of a connection used raw: is_broken panics, same outcome.
    let mut c = p.get().unwrap();
    let _ = &mut *c; // touched: the return path asks is_broken
    s.panic_checks.store(1, SeqCst);
    drop(c);
    let st = p.stats();
    assert_eq!((st.total, st.closed_broken), (0, 3), "{st:?}");
    let c = p.get().unwrap();
    assert_eq!(c.n, 4);
    drop(c);
}

/// A pool of one with a keepalive every 20 ms, its connection idle.
fn one_idle_with_keepalive() -> (CorePool<Fake>, Arc<Script>) {
    let (p, s) = pool(PoolConfig {
        max_size: 1,
        keepalive_interval: Some(Duration::from_millis(20)),
        alive_bypass_window: Duration::from_secs(60),
        ..cfg()
    });
    drop(p.get().unwrap());
    (p, s)
}

#[test]
#[cfg_attr(miri, ignore = "real-time bounds: Miri runs the pool ~100x slower")]
fn a_panic_in_keepalive_costs_the_connection_not_the_slot() {
    let (p, s) = one_idle_with_keepalive();
    s.panic_checks.store(1, SeqCst);
    eventually("the keepalive panicked", || p.stats().closed_broken == 1);
    let st = p.stats();
    assert_eq!((st.total, st.reserved), (0, 0), "{st:?}");
    let c = p.get_timeout(Duration::from_secs(3)).unwrap();
    assert_eq!(c.n, 2);
}

/// A pool of one whose adder is stuck in a connect that, once cut off,
/// takes `exit_ms` to return (a thread slow to wind down).
fn stuck_in_connect(exit_ms: usize) -> CorePool<Fake> {
    let (p, s) = pool(PoolConfig {
        max_size: 1,
        connect_timeout: Duration::from_secs(30),
        ..cfg()
    });
    s.hang.store(true, SeqCst);
    s.hang_exit_ms.store(exit_ms, SeqCst);
    assert!(p.get_timeout(Duration::from_millis(20)).is_err());
    eventually("a connect is running", || p.stats().connecting == 1);
    p
}

#[test]
#[cfg_attr(miri, ignore = "real-time bounds: Miri runs the pool ~100x slower")]
fn close_and_join_returns_once_the_threads_have_exited() {
    // close alone returns before the adder has.
    let p = stuck_in_connect(300);
    assert!(p.close_and_join(Duration::from_secs(5)));
    // Only this handle and its owner hold the pool now: no thread does.
    assert_eq!(Arc::strong_count(&p.shared), 2);
    assert!(lock(&p.shared.threads).is_empty());

    // A thread that cannot exit in time is reported, not waited past.
    let p = stuck_in_connect(2000);
    let started = Instant::now();
    assert!(!p.close_and_join(Duration::from_millis(200)));
    let took = started.elapsed();
    assert!(took < Duration::from_millis(1000), "gave up after {took:?}");
}

#[test]
fn close_waits_for_a_connection_a_pool_thread_holds() {
    // A keepalive check is running (the housekeeper holds the entry
    // RESERVED) when close is called: close cannot take the entry, and must
    // not return until the housekeeper, letting go, has closed it. The check
    // is held open by a gate, not a sleep: under Miri a 1.8 s check once
    // ended before the stats below were read (CI, stop 41).
    let (p, s) = one_idle_with_keepalive();
    s.validate_gate.store(true, SeqCst);
    // Opened however this test ends, so the housekeeper is never left waiting.
    struct Open(Arc<Script>);
    impl Drop for Open {
        fn drop(&mut self) {
            self.0.validate_gate.store(false, SeqCst);
        }
    }
    let _open = Open(s.clone());
    // Waited for at the gate: a check that began before the gate was set
    // may have passed it and ended already (CI under Miri, stop 60).
    eventually("a keepalive waits at the gate", || {
        s.at_gate.load(SeqCst) > 0
    });
    assert_eq!(p.stats().reserved, 1, "the keepalive holds the entry");
    let opened = Arc::new(AtomicBool::new(false));
    let opener = {
        let (s, opened) = (s.clone(), opened.clone());
        thread::spawn(move || {
            thread::sleep(patient(Duration::from_millis(100)));
            opened.store(true, SeqCst);
            s.validate_gate.store(false, SeqCst);
        })
    };
    let started = Instant::now();
    p.close();
    assert!(
        opened.load(SeqCst),
        "close returned after {:?}, while the keepalive still held the entry",
        started.elapsed()
    );
    let st = p.stats();
    assert_eq!(
        (st.total, st.idle, st.reserved, st.closed_pool_closed),
        (0, 0, 0, 1),
        "close returned after {:?} with a connection still open: {st:?}",
        started.elapsed()
    );
    opener.join().unwrap();
}

#[test]
fn close_fails_waiters_and_later_gets() {
    let (p, _) = pool(PoolConfig {
        max_size: 1,
        ..cfg()
    });
    let held = p.get().unwrap();
    let p2 = p.clone();
    let w = thread::spawn(move || p2.get().unwrap_err().kind());
    while p.stats().waiting == 0 {
        thread::yield_now();
    }
    p.close();
    p.close();
    assert_eq!(w.join().unwrap(), ErrorKind::Closed);
    assert_eq!(p.get().unwrap_err().kind(), ErrorKind::Closed);
    drop(held);
    let st = p.stats();
    assert_eq!(st.total, 0);
    assert_eq!(st.closed_pool_closed, 1);
}

#[test]
fn soft_evict_retires_idle_and_returned() {
    let (p, _) = pool(cfg());
    let a = p.get().unwrap();
    let b = p.get().unwrap();
    let (na, nb) = (a.n, b.n);
    drop(b);
    p.soft_evict();
    drop(a);
    let c = p.get().unwrap();
    assert!(c.n != na && c.n != nb);
    assert!(p.stats().closed_evicted >= 1);
}

#[test]
fn suspend_blocks_until_resume() {
    let (p, _) = pool(cfg());
    drop(p.get().unwrap());
    p.suspend();
    assert!(p.try_get().unwrap().is_none());
    let e = p.get_timeout(Duration::from_millis(30)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::PoolExhausted);
    assert!(e.to_string().contains("the pool is suspended"), "{e}");
    let p2 = p.clone();
    let t = thread::spawn(move || p2.get_timeout(Duration::from_secs(5)).map(|c| c.n));
    thread::sleep(Duration::from_millis(30));
    p.resume();
    assert!(t.join().unwrap().is_ok());
}

#[test]
fn min_idle_is_filled_and_idle_timeout_retires_extra() {
    let (p, _) = pool(PoolConfig {
        min_idle: 2,
        idle_timeout: Some(Duration::from_millis(100)),
        ..cfg()
    });
    let held: Vec<_> = (0..4).map(|_| p.get().unwrap()).collect();
    drop(held);
    let t = Instant::now();
    // Under Miri this took 4.7 s of the 5 (2026-12-03): patient().
    while p.stats().total > 2 && t.elapsed() < patient(Duration::from_secs(5)) {
        thread::sleep(Duration::from_millis(20));
    }
    let st = p.stats();
    assert_eq!(st.total, 2, "{st:?}");
    // Every connection made and not kept was retired by the idle timeout:
    // 2 of the 4, or 3 of 5 when, under Miri, a connect overran its hard
    // deadline and was cut off (`abandoned_connects`), so a fifth was made
    // (seen on 2026-12-03).
    assert!(st.closed_idle_timeout >= 2, "{st:?}");
    assert_eq!(
        st.closed_idle_timeout,
        st.created - st.total as u64,
        "{st:?}"
    );
}

#[test]
fn leak_is_reported_with_the_thread_name() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s2 = seen.clone();
    let p = CorePool::with_listener(
        PoolConfig {
            leak_detection_threshold: Some(Duration::from_millis(50)),
            ..cfg()
        },
        Fake {
            s: Arc::new(Script::default()),
        },
        Arc::new(move |e: &Event| {
            if let Event::LeakSuspected { thread, .. } = e {
                s2.lock().unwrap().push(thread.clone());
            }
        }),
    )
    .unwrap();
    let p2 = p.clone();
    thread::Builder::new()
        .name("leaky-worker".into())
        .spawn(move || {
            let c = p2.get().unwrap();
            // Held 6 thresholds: the housekeeper's check comes within that.
            thread::sleep(patient(Duration::from_millis(300)));
            drop(c);
        })
        .unwrap()
        .join()
        .unwrap();
    // A Rust stack is resolved into text on a thread of its own: its
    // report may come a little after the return.
    let deadline = std::time::Instant::now() + patient(Duration::from_secs(10));
    while seen.lock().unwrap().is_empty() && std::time::Instant::now() < deadline {
        thread::sleep(Duration::from_millis(10));
    }
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1, "{seen:?}");
    let (name, stack) = seen[0].split_once('\n').unwrap_or((&seen[0], ""));
    assert_eq!(name, "leaky-worker");
    // The borrower's stack, captured at the borrow (not under Miri), names
    // the function that borrowed.
    if !cfg!(miri) {
        assert!(
            stack.contains("leak_is_reported_with_the_thread_name"),
            "{stack}"
        );
    }
    assert_eq!(p.stats().leaks_reported, 1);
}

#[test]
fn max_lifetime_retires_connections() {
    // Under Miri a create and hand-over take longer than 100 ms, so a new
    // connection could pass its lifetime before anyone gets it (a CI run
    // timed out so); the bounds are stretched there, not the assertions.
    let scale = if cfg!(miri) { 20 } else { 1 };
    let (p, _) = pool(PoolConfig {
        max_lifetime: Some(Duration::from_millis(100) * scale),
        keepalive_interval: None,
        connection_timeout: Duration::from_secs(5) * scale,
        connect_timeout: Duration::from_millis(300) * scale,
        ..cfg()
    });
    let n1 = p.get().unwrap().n;
    thread::sleep(Duration::from_millis(300) * scale);
    let n2 = p.get().unwrap().n;
    assert_ne!(n1, n2);
    assert!(p.stats().closed_max_lifetime >= 1);
}

#[test]
fn dropping_the_last_handle_closes_the_pool() {
    let (p, _) = pool(cfg());
    let c = p.get().unwrap();
    drop(p);
    // The borrowed connection keeps the internals alive and is closed on return.
    let shared = c.shared.clone();
    drop(c);
    assert!(shared.is_closed());
    assert_eq!(shared.total.load(SeqCst), 0);
}

#[test]
fn a_slot_costs_what_max_size_cap_says() {
    // The docs of max_size_cap price a slot at 256 bytes.
    assert!(std::mem::size_of::<bag::Slot<FakeConn>>() <= 256);
}

#[test]
fn bad_sizes_are_refused_naming_the_knob_and_change_nothing() {
    let (p, _) = pool(PoolConfig {
        max_size_cap: Some(8),
        min_idle: 1,
        ..cfg()
    });
    assert_eq!((p.max_size(), p.max_size_cap(), p.min_idle()), (4, 8, 1));
    for (r, knob) in [
        (
            p.set_max_size(0),
            "max_size must be between 1 and max_size_cap (8), got 0",
        ),
        (
            p.set_max_size(9),
            "max_size must be between 1 and max_size_cap (8), got 9",
        ),
        (
            p.set_min_idle(5),
            "min_idle (5) must not exceed max_size (4)",
        ),
    ] {
        let e = r.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Config, "{e}");
        assert!(e.to_string().contains(knob), "{e}");
    }
    p.set_min_idle(3).unwrap();
    let e = p.set_max_size(2).unwrap_err();
    assert!(
        e.to_string()
            .contains("max_size (2) must not be below min_idle (3)"),
        "{e}"
    );
    assert_eq!((p.max_size(), p.min_idle()), (4, 3));
    // The cap itself is checked at open.
    let e = CorePool::with_connector(
        PoolConfig {
            max_size_cap: Some(3),
            ..cfg()
        },
        Fake {
            s: Arc::new(Script::default()),
        },
    )
    .err()
    .unwrap();
    assert!(
        e.to_string()
            .contains("max_size_cap must be between max_size (4)"),
        "{e}"
    );
    // The default cap: twice max_size, at least 64.
    assert_eq!(cfg().max_size_cap(), 64);
    assert_eq!(
        PoolConfig {
            max_size: 100,
            ..cfg()
        }
        .max_size_cap(),
        200
    );
}

#[test]
fn shrinking_takes_nothing_borrowed_and_closes_the_surplus_as_it_returns() {
    let (p, _) = pool(cfg());
    let mut held: Vec<_> = (0..4).map(|_| p.get().unwrap()).collect();
    // A waiter queued before the shrink is served once the pool is within
    // the new limit, by a connection coming back.
    let p2 = p.clone();
    let waiter =
        thread::spawn(move || p2.get_timeout(patient(Duration::from_secs(5))).map(|c| c.n));
    eventually("the waiter queues", || p.stats().waiting == 1);
    p.set_max_size(2).unwrap();
    assert_eq!(p.stats().max_size, 2);
    // Every borrowed connection still works, and stays the borrower's.
    assert_eq!(p.stats().active, 4);
    // The first two returns are surplus: closed, not handed to the waiter.
    drop(held.pop());
    drop(held.pop());
    let st = p.stats();
    assert_eq!(
        (st.total, st.closed_evicted, st.waiting),
        (2, 2, 1),
        "{st:?}"
    );
    // The third goes to the waiter.
    let n = held.pop().unwrap().n;
    assert_eq!(waiter.join().unwrap().unwrap(), n);
    drop(held);
    let st = p.stats();
    assert_eq!((st.total, st.closed_evicted), (2, 2), "{st:?}");
    // Nothing is made above the new limit.
    let a = p.get().unwrap();
    let b = p.get().unwrap();
    let e = p.get_timeout(Duration::from_millis(50)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::PoolExhausted, "{e}");
    assert!(e.to_string().contains("max_size=2"), "{e}");
    drop((a, b));
    assert_eq!(p.stats().violations, 0);
}

#[test]
fn shrinking_closes_idle_surplus_at_once() {
    let (p, _) = pool(cfg());
    let held: Vec<_> = (0..4).map(|_| p.get().unwrap()).collect();
    drop(held);
    assert_eq!(p.stats().idle, 4);
    p.set_max_size(1).unwrap();
    eventually("the housekeeper closes 3 idle", || p.stats().total == 1);
    assert_eq!(p.stats().closed_evicted, 3);
    drop(p.get().unwrap());
}

#[test]
fn growing_serves_the_callers_waiting_now() {
    let (p, _) = pool(PoolConfig {
        max_size: 1,
        ..cfg()
    });
    let _held = p.get().unwrap();
    let served = Arc::new(AtomicUsize::new(0));
    let waiters: Vec<_> = (0..3)
        .map(|_| {
            let (p2, served) = (p.clone(), served.clone());
            thread::spawn(move || {
                let c = p2.get_timeout(patient(Duration::from_secs(5)))?;
                // Held until all three are served, so that each needs a
                // connection of its own (one returned at once could serve
                // the next waiter before its connect is needed).
                served.fetch_add(1, SeqCst);
                eventually("every waiter is served", || served.load(SeqCst) == 3);
                Ok::<_, Error>(c.n)
            })
        })
        .collect();
    eventually("3 waiters queue", || p.stats().waiting == 3);
    p.set_max_size(4).unwrap();
    let mut got: Vec<usize> = waiters
        .into_iter()
        .map(|w| w.join().unwrap().unwrap())
        .collect();
    got.sort();
    got.dedup();
    assert_eq!(got.len(), 3, "each waiter got a connection of its own");
    // Made and kept: 4 (attempts may be more under Miri, where a connect
    // can overrun connect_timeout and be cut off).
    let st = p.stats();
    assert_eq!((st.created, st.total, st.max_size), (4, 4, 4), "{st:?}");
}

#[test]
fn min_idle_follows_changes() {
    let (p, _) = pool(PoolConfig {
        idle_timeout: Some(Duration::from_millis(100)),
        ..cfg()
    });
    p.set_min_idle(3).unwrap();
    eventually("filled to 3", || p.stats().total == 3);
    p.set_min_idle(1).unwrap();
    eventually("retired down to 1", || p.stats().total == 1);
    assert_eq!(p.stats().closed_idle_timeout, 2);
}
