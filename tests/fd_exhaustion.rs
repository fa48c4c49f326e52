//! The process runs out of file descriptors while a pool is in use, against a
//! real MariaDB started by the test.
//!
//! A binary of its own with a single test: it lowers the process-wide
//! `RLIMIT_NOFILE` and fills every free descriptor, which would break any test
//! running beside it in the same process.

use staunch_testkit as support;

use std::fs::File;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use staunch::prelude::*;
use staunch::{ErrorKind, Event, Pool};
use support::{MariaDb, Mode, Proxy};

/// Every free descriptor of the process, held, under a lowered soft limit.
/// Dropping it closes them and restores the limit, so a failed assertion does
/// not leave the process (and the server clean-up) without descriptors.
struct FdHog {
    files: Vec<File>,
    old: libc::rlimit,
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd")
        .expect("read /proc/self/fd")
        .count()
}

fn getrlimit() -> libc::rlimit {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: r is a valid out-pointer.
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) };
    assert_eq!(rc, 0, "getrlimit: {}", std::io::Error::last_os_error());
    r
}

fn setrlimit(r: &libc::rlimit) {
    // SAFETY: r points to a valid rlimit; lowering or restoring the soft
    // limit within the hard limit is always allowed.
    let rc = unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, r) };
    assert_eq!(rc, 0, "setrlimit: {}", std::io::Error::last_os_error());
}

impl FdHog {
    fn exhaust() -> FdHog {
        let old = getrlimit();
        // A few above what is open now, so filling the rest is quick.
        let low = (open_fds() as libc::rlim_t + 16).min(old.rlim_cur);
        setrlimit(&libc::rlimit {
            rlim_cur: low,
            rlim_max: old.rlim_max,
        });
        let mut files = Vec::new();
        loop {
            match File::open("/dev/null") {
                Ok(f) => files.push(f),
                Err(e) if e.raw_os_error() == Some(libc::EMFILE) => break,
                Err(e) => panic!("opening /dev/null failed other than with EMFILE: {e}"),
            }
            assert!(files.len() < 100_000, "never ran out of descriptors");
        }
        FdHog { files, old }
    }
}

impl Drop for FdHog {
    fn drop(&mut self) {
        self.files.clear();
        setrlimit(&self.old);
    }
}

/// Counts panics on the pool's own threads (`staunch-*`): they are caught and
/// logged inside, so a test would not see them otherwise.
fn count_pool_thread_panics() -> Arc<AtomicUsize> {
    let n = Arc::new(AtomicUsize::new(0));
    let n2 = n.clone();
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if thread::current()
            .name()
            .is_some_and(|t| t.starts_with("staunch-"))
        {
            n2.fetch_add(1, SeqCst);
        }
        prev(info);
    }));
    n
}

/// Threads of this process whose name starts with `prefix` (the kernel keeps
/// 15 bytes of a name).
fn threads_named(prefix: &str) -> usize {
    std::fs::read_dir("/proc/self/task")
        .expect("read /proc/self/task")
        .flatten()
        .filter(|t| {
            std::fs::read_to_string(t.path().join("comm"))
                .map(|c| c.starts_with(prefix))
                .unwrap_or(false)
        })
        .count()
}

fn select1(c: &mut staunch::PooledConn) -> Option<i64> {
    c.query_first("SELECT 1").expect("SELECT 1")
}

#[test]
fn fd_exhaustion_fails_new_connects_clearly_serves_idle_ones_and_recovers() {
    let panics = count_pool_thread_panics();
    let s = MariaDb::start();
    let p = Pool::from_url(&format!(
        "{}?max_size=3&connect_timeout=1s&connection_timeout=1500ms",
        s.url()
    ))
    .unwrap();
    {
        let mut a = p.get().unwrap();
        let mut b = p.get().unwrap();
        assert_eq!((select1(&mut a), select1(&mut b)), (Some(1), Some(1)));
    }
    assert_eq!(p.stats().idle, 2);

    // A second pool with a connect stuck in the handshake (no greeting) when
    // the descriptors run out: at its deadline the watchdog must still cut it
    // off, with no descriptor to spare (it shuts the duplicate of the socket
    // made when the connect began). Its deadline (3 s) comes after the first
    // pool's refused get() below, which its freed socket would otherwise
    // serve.
    let proxy = Proxy::start(s.addr());
    proxy.set_mode(Mode::BlackHole);
    let failures = Arc::new(Mutex::new(Vec::new()));
    let f2 = failures.clone();
    let stuck = Pool::new_with_listener(
        staunch::Config::from_url(&format!(
            "mysql://app:app-secret@127.0.0.1:{}/staunch_test?max_size=1&connect_timeout=3s&connection_timeout=3500ms",
            proxy.port()
        ))
        .unwrap(),
        Arc::new(move |e: &Event| {
            if let Event::ConnectFailed { error, .. } = e {
                f2.lock().unwrap().push(error.to_string());
            }
        }),
    )
    .unwrap();
    let stuck2 = stuck.clone();
    let stuck_get = thread::spawn(move || {
        let t = Instant::now();
        let r = stuck2.get().map(drop);
        (r, t.elapsed())
    });
    let t = Instant::now();
    while proxy.accepted() == 0 {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "no connect reached the proxy"
        );
        thread::sleep(Duration::from_millis(5));
    }
    // A connect duplicates its socket for the watchdog as soon as the TCP
    // connect returns: let the stuck one do so before the descriptors run
    // out. (And a finished connect's duplicate lives until the watchdog
    // next wakes, within 50 ms: let the first pool's go, or the third get()
    // below would be served with it.)
    thread::sleep(Duration::from_millis(300));

    let hog = FdHog::exhaust();
    let held = hog.files.len();
    // Idle connections need no descriptor: both are served.
    let mut a = p
        .get()
        .expect("an idle connection while out of descriptors");
    let mut b = p
        .get()
        .expect("an idle connection while out of descriptors");
    assert_eq!((select1(&mut a), select1(&mut b)), (Some(1), Some(1)));
    // A third one needs a new connection, which needs a descriptor. (Done
    // before the stuck connect is cut and frees its socket's descriptors.)
    let t = Instant::now();
    let e = p.get().expect_err("no descriptor for a new connection");
    let took = t.elapsed();
    // Idle past the bypass window: borrowed again, they are validated (a
    // ping, no descriptor needed).
    drop((a, b));
    thread::sleep(Duration::from_millis(600));
    let mut a = p
        .get()
        .expect("an idle connection while out of descriptors");
    let mut b = p
        .get()
        .expect("an idle connection while out of descriptors");
    assert_eq!((select1(&mut a), select1(&mut b)), (Some(1), Some(1)));
    let stuck_result = stuck_get.join().unwrap();
    let stuck_stats = stuck.stats();
    drop(hog);
    let failed_before_recovery = failures.lock().unwrap().len();

    eprintln!("held {held} descriptors; get() failed after {took:?}: {e}");
    assert_eq!(e.kind(), ErrorKind::Unreachable, "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("no file descriptor available") && msg.contains("Too many open files"),
        "the cause must show: {msg}"
    );
    assert!(
        took >= Duration::from_millis(1400) && took < Duration::from_millis(1500 + 1500),
        "get() must wait connection_timeout (1.5s), no more: {took:?}"
    );
    let (r, stuck_took) = stuck_result;
    let stuck_err = r.expect_err("the black-holed connect cannot succeed");
    eprintln!(
        "black-holed get() failed after {stuck_took:?}: {stuck_err}; {} connect(s) abandoned",
        stuck_stats.abandoned_connects
    );
    assert!(
        stuck_took < Duration::from_millis(3500 + 1500),
        "{stuck_took:?}"
    );
    let f = failures.lock().unwrap().clone();
    assert!(
        f.iter().any(|e| e.contains("no greeting came")),
        "the stuck connect is cut off at its deadline and says why: {f:?}"
    );
    assert_eq!(
        stuck_stats.abandoned_connects, 0,
        "the watchdog needs no new descriptor to cut a connect off: {stuck_stats:?}"
    );

    // Descriptors back: the pool makes the connection it could not make,
    // without anyone intervening.
    let t = Instant::now();
    let mut c = p
        .get_timeout(Duration::from_secs(5))
        .expect("a new connection once descriptors are free again");
    assert_eq!(select1(&mut c), Some(1));
    eprintln!("recovered a new connection in {:?}", t.elapsed());
    drop((a, b, c));
    assert_eq!(p.stats().total, 3);
    for _ in 0..20 {
        let mut c = p.get().unwrap();
        assert_eq!(select1(&mut c), Some(1));
    }

    // The watchdog of the stuck pool survived: it cuts the next black-holed
    // connects off at their deadline too. The stuck pool kept trying all
    // along: the attempt under way when the descriptors came back may have
    // begun without one for its socket's duplicate, and then be cut without
    // knowing how far it got ("cut off at its deadline"); every attempt
    // after it began with them, and says why it was cut.
    let t = Instant::now();
    let e = stuck.get().expect_err("still black-holed");
    eprintln!("black-holed get() after recovery: {:?}: {e}", t.elapsed());
    let msg = e.to_string();
    assert!(
        msg.contains("no greeting came") || msg.contains("cut off at its deadline"),
        "{msg}"
    );
    let waited = Instant::now();
    loop {
        let f = failures.lock().unwrap().clone();
        if f.len() >= failed_before_recovery + 2 {
            assert!(
                f[failed_before_recovery + 1..]
                    .iter()
                    .all(|e| e.contains("no greeting came")),
                "connects begun after the recovery say why they were cut: {f:?}"
            );
            break;
        }
        assert!(
            waited.elapsed() < Duration::from_secs(15),
            "no second connect of the stuck pool was cut off after the recovery: {f:?}"
        );
        thread::sleep(Duration::from_millis(50));
    }
    proxy.set_mode(Mode::Pass);
    let mut c = stuck.get_timeout(Duration::from_secs(5)).unwrap();
    assert_eq!(select1(&mut c), Some(1));
    drop(c);

    assert_eq!(panics.load(SeqCst), 0, "a pool thread panicked");
    // Two pools: each still has its watchdog and housekeeper.
    assert_eq!(threads_named("staunch-watchdo"), 2);
    assert_eq!(threads_named("staunch-houseke"), 2);
}
