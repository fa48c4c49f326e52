//! Resource limits: a server that accepts and resets, one that hangs up
//! mid-handshake, one that answers with a huge packet, and results larger
//! than a packet may be. Each must give a clear error, no crash, bounded
//! memory, and a pool that recovers on its own. (The server's
//! max_connections is in tests/failures.rs; running out of file descriptors
//! in tests/fd_exhaustion.rs, a binary of its own.)

use staunch_testkit as support;

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use staunch::prelude::*;
use staunch::{ErrorKind, Event, Pool, Way};
use support::{MariaDb, Mode, Proxy, ServerOpts};

/// Tests that allocate or measure tens of MiB take turns, so that one's
/// allocations do not show in another's resident-set measurement.
static HEAVY: Mutex<()> = Mutex::new(());

fn heavy() -> MutexGuard<'static, ()> {
    HEAVY.lock().unwrap_or_else(|e| e.into_inner())
}

/// Tests that count panics on pool threads hold this shared; the one test
/// that makes the driver panic on purpose holds it exclusively.
static PANICS: RwLock<()> = RwLock::new(());

/// A guard under which no test provokes panics, and the panics counted so far.
fn no_panics_expected() -> (RwLockReadGuard<'static, ()>, usize) {
    let g = PANICS.read().unwrap_or_else(|e| e.into_inner());
    (g, pool_thread_panics())
}

/// Counts panics on the pool's own threads (`staunch-*`): they are caught and
/// logged inside, so a test would not see them otherwise. One hook for the
/// whole binary (tests run in parallel threads).
fn pool_thread_panics() -> usize {
    static COUNT: AtomicUsize = AtomicUsize::new(0);
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if thread::current()
                .name()
                .is_some_and(|t| t.starts_with("staunch-"))
            {
                COUNT.fetch_add(1, SeqCst);
            }
            prev(info);
        }));
    });
    COUNT.load(SeqCst)
}

/// Connect failures seen through events, with when they happened.
#[derive(Clone, Default)]
struct Failures(Arc<Mutex<Vec<(Instant, String)>>>);

impl Failures {
    fn all(&self) -> Vec<(Instant, String)> {
        self.0.lock().unwrap().clone()
    }
}

fn pool_at(addr: SocketAddr, params: &str) -> (Pool, Failures) {
    let failures = Failures::default();
    let f2 = failures.clone();
    let url = format!(
        "mysql://app:app-secret@127.0.0.1:{}/staunch_test?{params}",
        addr.port()
    );
    let cfg = staunch::Config::from_url(&url).unwrap();
    let p = Pool::new_with_listener(
        cfg,
        Arc::new(move |e: &Event| {
            if let Event::ConnectFailed { error, .. } = e {
                f2.0.lock()
                    .unwrap()
                    .push((Instant::now(), error.to_string()));
            }
        }),
    )
    .unwrap();
    (p, failures)
}

fn select1(p: &Pool, timeout: Duration) -> staunch::Result<i64> {
    let mut c = p.get_timeout(timeout)?;
    Ok(c.query_first::<i64, _>("SELECT 1")
        .expect("query")
        .expect("row"))
}

/// The length of the server's greeting packet, header included.
fn greeting_len(s: &MariaDb) -> usize {
    let mut raw = TcpStream::connect(s.addr()).expect("connect to the server");
    raw.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let mut head = [0u8; 4];
    raw.read_exact(&mut head).expect("greeting header");
    4 + (head[0] as usize | (head[1] as usize) << 8 | (head[2] as usize) << 16)
}

// ---------------------------------------------------------------------------
// A server that accepts and resets, or hangs up.

#[test]
fn accept_and_reset_fails_clearly_retries_with_backoff_and_recovers() {
    let (_no_panics, before) = no_panics_expected();
    let s = MariaDb::start();
    let proxy = Proxy::start(s.addr());
    proxy.set_mode(Mode::Reset);
    let (p, failures) = pool_at(
        proxy.addr(),
        "max_size=4&connect_timeout=500ms&connection_timeout=1500ms",
    );
    let t = Instant::now();
    let e = p.get().expect_err("every connect is reset");
    let took = t.elapsed();
    let connects = proxy.accepted();
    let f = failures.all();
    eprintln!("get() failed after {took:?} with {connects} connects: {e}");
    assert_eq!(e.kind(), ErrorKind::Unreachable, "{e}");
    let msg = e.to_string();
    let ep = format!("127.0.0.1:{}", proxy.port());
    // The reset may reach the client while its TCP connect returns (the
    // socket's pending error) or at its first read of the handshake.
    assert!(
        msg.contains(&ep)
            && (msg.contains("handshake") || msg.contains("TCP connect"))
            && msg.contains("reset"),
        "must say the connection to {ep} was reset: {msg}"
    );
    assert!(
        took >= Duration::from_millis(1400) && took < Duration::from_millis(1500 + 1500),
        "{took:?}"
    );
    // Each connect fails at once: the first failure is reported long before
    // connect_timeout.
    let first = f.first().expect("a ConnectFailed event").0;
    assert!(first - t < Duration::from_millis(400), "{:?}", first - t);
    // Retried with backoff (50 ms doubling, ±25 %): about 5 connects in
    // 1.5 s, never a storm.
    assert!(
        (3..=10).contains(&connects),
        "{connects} connects in {took:?}"
    );
    // Nobody waits any more: the adders stop connecting.
    thread::sleep(Duration::from_millis(1500));
    let later = proxy.accepted();
    assert!(
        later <= connects + 1,
        "connects went on with nobody waiting: {connects} -> {later}"
    );

    proxy.set_mode(Mode::Pass);
    let t = Instant::now();
    assert_eq!(select1(&p, Duration::from_secs(5)).unwrap(), 1);
    eprintln!("recovered in {:?}", t.elapsed());
    assert_eq!(pool_thread_panics(), before, "a pool thread panicked");
}

#[test]
fn server_hanging_up_mid_handshake_fails_clearly_and_recovers() {
    let (_no_panics, before) = no_panics_expected();
    let s = MariaDb::start();
    let greeting = greeting_len(&s);
    let proxy = Proxy::start(s.addr());
    let params = "max_size=2&connect_timeout=500ms&connection_timeout=700ms";
    let ep = format!("127.0.0.1:{}", proxy.port());
    // Right after accepting; in the middle of the greeting; after the whole
    // greeting, when the client has sent its authentication. A pool for
    // each, so that no backoff carries over from one to the next.
    for n in [0, 20, greeting] {
        proxy.set_mode(Mode::CloseAfter(n));
        let (p, failures) = pool_at(proxy.addr(), params);
        let t = Instant::now();
        let e = p.get().expect_err("the server hangs up");
        let took = t.elapsed();
        let f = failures.all();
        eprintln!("CloseAfter({n}): get() failed after {took:?}: {e}");
        assert_eq!(e.kind(), ErrorKind::Unreachable, "{e}");
        let (at, first) = f.first().expect("a ConnectFailed event");
        assert!(
            first.contains(&ep)
                && first.contains("the server closed the connection during the handshake"),
            "CloseAfter({n}): must say {ep} closed the connection during the handshake: {first}"
        );
        assert!(
            e.to_string()
                .contains("the server closed the connection during the handshake"),
            "get() must carry the cause: {e}"
        );
        assert!(*at - t < Duration::from_millis(400), "{:?}", *at - t);
        assert!(took < Duration::from_millis(700 + 1500), "{took:?}");
    }
    let (p, _) = pool_at(proxy.addr(), params);
    proxy.set_mode(Mode::Pass);
    assert_eq!(select1(&p, Duration::from_secs(5)).unwrap(), 1);
    assert_eq!(pool_thread_panics(), before, "a pool thread panicked");
}

// ---------------------------------------------------------------------------
// A hostile peer answering with huge packets (not a stand-in for MariaDB:
// a test thread that speaks just enough to misbehave).

/// Accepts connections on 127.0.0.1 and runs `behave` on each in a thread of
/// its own, until dropped. `behave` must return once `stop` is set.
struct Hostile {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    accepted: Arc<AtomicUsize>,
    acceptor: Option<JoinHandle<()>>,
}

impl Hostile {
    fn start(behave: fn(&mut TcpStream, &AtomicBool)) -> Hostile {
        let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        l.set_nonblocking(true).unwrap();
        let addr = l.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let accepted = Arc::new(AtomicUsize::new(0));
        let (stop2, accepted2) = (stop.clone(), accepted.clone());
        let acceptor = thread::spawn(move || {
            let mut peers = Vec::new();
            while !stop2.load(SeqCst) {
                match l.accept() {
                    Ok((mut sock, _)) => {
                        accepted2.fetch_add(1, SeqCst);
                        let _ = sock.set_nonblocking(false);
                        let _ = sock.set_write_timeout(Some(Duration::from_millis(50)));
                        let stop3 = stop2.clone();
                        peers.push(thread::spawn(move || behave(&mut sock, &stop3)));
                    }
                    Err(_) => thread::sleep(Duration::from_millis(5)),
                }
            }
            for t in peers {
                let _ = t.join();
            }
        });
        Hostile {
            addr,
            stop,
            accepted,
            acceptor: Some(acceptor),
        }
    }
}

impl Drop for Hostile {
    fn drop(&mut self) {
        self.stop.store(true, SeqCst);
        if let Some(t) = self.acceptor.take() {
            let _ = t.join();
        }
    }
}

/// Writes `data` until done, the peer goes, or `stop`; false if it stopped.
fn send(sock: &mut TcpStream, mut data: &[u8], stop: &AtomicBool) -> bool {
    while !data.is_empty() {
        if stop.load(SeqCst) {
            return false;
        }
        match sock.write(data) {
            Ok(0) => return false,
            Ok(n) => data = &data[n..],
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => return false,
        }
    }
    true
}

/// A packet header: 3-byte little-endian payload length, sequence number.
fn header(len: usize, seq: u8) -> [u8; 4] {
    [len as u8, (len >> 8) as u8, (len >> 16) as u8, seq]
}

/// Largest payload one packet can announce, then garbage, quickly and for
/// as long as the peer reads (at most 256 MiB).
fn max_packets_forever(sock: &mut TcpStream, stop: &AtomicBool) {
    let chunk = vec![0x5a_u8; 64 * 1024];
    for seq in 0..16u8 {
        if !send(sock, &header(0xFF_FFFF, seq), stop) {
            return;
        }
        for _ in 0..256 {
            if !send(sock, &chunk, stop) {
                return;
            }
        }
    }
}

/// A greeting of 4 MiB - 1 bytes (the most the client takes before it knows
/// the server's max_allowed_packet) of garbage, then more such packets.
fn huge_garbage_greetings(sock: &mut TcpStream, stop: &AtomicBool) {
    let len = 4 * 1024 * 1024 - 1;
    let body = vec![0xa5_u8; len];
    for seq in 0..8u8 {
        if !send(sock, &header(len, seq), stop) || !send(sock, &body, stop) {
            return;
        }
    }
}

/// A greeting announcing 4 MiB - 1 bytes that arrive 16 KiB per 20 ms
/// (about 5 s in all: longer than any connect_timeout here).
fn slow_huge_greeting(sock: &mut TcpStream, stop: &AtomicBool) {
    let len = 4 * 1024 * 1024 - 1;
    if !send(sock, &header(len, 0), stop) {
        return;
    }
    let chunk = vec![0x0a_u8; 16 * 1024];
    for _ in 0..len / chunk.len() {
        thread::sleep(Duration::from_millis(20));
        if !send(sock, &chunk, stop) {
            return;
        }
    }
}

fn vm_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/self/status")
}

#[test]
fn huge_packets_from_a_hostile_server_fail_clearly_with_bounded_memory() {
    let _heavy = heavy();
    let (_no_panics, before) = no_panics_expected();
    let rss0 = vm_rss_kib();
    type Case = (&'static str, fn(&mut TcpStream, &AtomicBool), &'static str);
    let cases: [Case; 3] = [
        (
            "16 MiB packets, quickly",
            max_packets_forever,
            "larger than the client accepts",
        ),
        (
            "4 MiB garbage greetings",
            huge_garbage_greetings,
            "handshake",
        ),
        (
            "4 MiB greeting, slowly",
            slow_huge_greeting,
            "bytes of the handshake",
        ),
    ];
    for (what, behave, words) in cases {
        let peer = Hostile::start(behave);
        let (p, failures) = pool_at(
            peer.addr,
            "max_size=4&connect_timeout=800ms&connection_timeout=2s",
        );
        let ep = format!("127.0.0.1:{}", peer.addr.port());
        let t = Instant::now();
        let e = p.get().expect_err("no connection from a hostile server");
        let took = t.elapsed();
        let f = failures.all();
        let (first_at, first) = f.first().expect("a ConnectFailed event").clone();
        let rss = vm_rss_kib();
        eprintln!(
            "{what}: {} connects, first failed after {:?}: {first}; get() failed after {took:?}; VmRSS {} MiB -> {} MiB",
            peer.accepted.load(SeqCst),
            first_at - t,
            rss0 / 1024,
            rss / 1024,
        );
        assert_eq!(e.kind(), ErrorKind::Unreachable, "{what}: {e}");
        assert!(
            first.contains(&ep) && first.contains(words),
            "{what}: the error must name {ep} and say '{words}': {first}"
        );
        // Each connect ends by its deadline (connect_timeout 800 ms, plus
        // slack for a loaded machine), and get() by connection_timeout.
        assert!(first_at - t < Duration::from_millis(800 + 700), "{what}");
        assert!(
            took < Duration::from_millis(2000 + 1500),
            "{what}: {took:?}"
        );
        assert!(
            rss < rss0 + 96 * 1024,
            "{what}: memory grew from {} to {} MiB",
            rss0 / 1024,
            rss / 1024
        );
        drop(p);
    }
    assert_eq!(pool_thread_panics(), before, "a pool thread panicked");
}

// ---------------------------------------------------------------------------
// Results larger than a packet may be, from a real MariaDB.

#[test]
fn a_64_mib_row_with_a_large_max_allowed_packet_is_received() {
    let _heavy = heavy();
    let s = MariaDb::start_with(ServerOpts {
        args: vec!["--max-allowed-packet=128M".into()],
        ..Default::default()
    });
    let p = Pool::from_url(&format!("{}?max_size=1", s.url())).unwrap();
    let t = Instant::now();
    {
        let mut c = p.get().unwrap();
        let len: Option<i64> = c
            .query_first::<Vec<u8>, _>("SELECT REPEAT('x', 64*1024*1024)")
            .unwrap()
            .map(|v| v.len() as i64);
        assert_eq!(len, Some(64 * 1024 * 1024));
    }
    eprintln!("64 MiB row received in {:?}", t.elapsed());
    assert_eq!(select1(&p, Duration::from_secs(5)).unwrap(), 1);
    assert_eq!(p.stats().closed_broken, 0);
}

#[test]
fn a_result_over_the_servers_max_allowed_packet_is_null_and_the_pool_stays_healthy() {
    let s = MariaDb::start_with(ServerOpts {
        args: vec!["--max-allowed-packet=1M".into()],
        ..Default::default()
    });
    let p = Pool::from_url(&format!("{}?max_size=1", s.url())).unwrap();
    let id = {
        let mut c = p.get().unwrap();
        let v: Option<Option<Vec<u8>>> = c.query_first("SELECT REPEAT('x', 2*1024*1024)").unwrap();
        assert_eq!(v, Some(None), "the server answers NULL");
        let warning: Option<(String, u16)> = c
            .query_first("SHOW WARNINGS")
            .unwrap()
            .map(|(_, code, _): (String, u16, String)| ("w".to_string(), code));
        assert_eq!(warning.map(|w| w.1), Some(1301));
        c.id()
    };
    let c = p.get().unwrap();
    assert_eq!(c.id(), id, "the connection was fine and is reused");
    drop(c);
    assert_eq!(select1(&p, Duration::from_secs(5)).unwrap(), 1);
}

/// The answers of the next borrowers are their own: a connection left with
/// unread bytes of a failed result would answer with those instead.
fn next_borrowers_get_their_own_answers(p: &Pool) {
    for tag in 1..=5u64 {
        let mut c = p.get_timeout(Duration::from_secs(5)).unwrap();
        let got: Option<u64> = c.exec_first("SELECT ?", (tag,)).unwrap();
        assert_eq!(got, Some(tag));
    }
}

#[test]
fn a_row_larger_than_the_client_takes_fails_clearly_and_is_not_returned_broken() {
    let _heavy = heavy();
    // The client takes packets up to the server's max_allowed_packet; two
    // columns under it each make a row over it, which the server sends.
    let s = MariaDb::start_with(ServerOpts {
        args: vec!["--max-allowed-packet=4M".into()],
        ..Default::default()
    });
    let p = Pool::from_url(&format!("{}?max_size=1", s.url())).unwrap();
    let big = "SELECT REPEAT('a', 3*1024*1024), REPEAT('b', 3*1024*1024)";
    // The first row is small, the second too large.
    let second = "SELECT IF(k = 1, 'a', REPEAT('a', 3*1024*1024)), \
                  IF(k = 1, 'b', REPEAT('b', 3*1024*1024)) \
                  FROM (SELECT 1 AS k UNION ALL SELECT 2) AS t ORDER BY k";
    type Pair = (Vec<u8>, Vec<u8>);
    let mut broken = 0;
    let mut check = |what: &str, p: &Pool| {
        broken += 1;
        let st = p.stats();
        assert_eq!(
            st.closed_broken, broken,
            "{what}: the connection must be closed: {st:?}"
        );
        next_borrowers_get_their_own_answers(p);
    };

    {
        let mut c = p.get().unwrap();
        let e = c.query_first::<Pair, _>(big).expect_err("a 6 MiB row");
        eprintln!("query_first of a 6 MiB row: {e}");
        assert!(e.to_string().contains("max_allowed_packet"), "{e}");
    }
    check("query_first", &p);
    {
        // The rest of the answer is read after the first row, and its
        // failure is the call's (the `mysql` crate returned the first row and
        // said nothing of the rest).
        let mut c = p.get().unwrap();
        let e = c
            .query_first::<Pair, _>(second)
            .expect_err("the second row is too large");
        assert!(e.to_string().contains("max_allowed_packet"), "{e}");
    }
    check("query_first, second row too large", &p);
    {
        let mut c = p.get().unwrap();
        let _ = c.query_drop(big);
    }
    check("query_drop", &p);
    {
        let mut c = p.get().unwrap();
        let e = c
            .exec_first::<Pair, _, _>(big, ())
            .expect_err("a 6 MiB row");
        assert!(e.to_string().contains("max_allowed_packet"), "{e}");
    }
    check("exec_first", &p);
}

/// The same through the C ABI, whose query and execute read the answers
/// themselves.
#[test]
fn a_row_larger_than_the_client_takes_through_the_c_abi_is_not_returned_broken() {
    use staunch::ffi::*;
    use std::ffi::CString;
    use std::ptr::null_mut;

    let _heavy = heavy();
    let s = MariaDb::start_with(ServerOpts {
        args: vec!["--max-allowed-packet=4M".into()],
        ..Default::default()
    });
    let url = CString::new(format!("{}?max_size=1", s.url())).unwrap();
    let mut pool = null_mut();
    assert_eq!(
        staunch_pool_open(url.as_ptr(), &mut pool, null_mut()),
        STAUNCH_OK
    );
    let big = CString::new("SELECT REPEAT('a', 3*1024*1024), REPEAT('b', 3*1024*1024)").unwrap();
    let one = CString::new("SELECT 1").unwrap();
    let get = |pool| {
        let mut conn = null_mut();
        assert_eq!(
            staunch_pool_get(pool, 5000, &mut conn, null_mut()),
            STAUNCH_OK
        );
        conn
    };
    let closed_broken = |pool| {
        let mut st = staunch_stats {
            size: std::mem::size_of::<staunch_stats>(),
            ..Default::default()
        };
        assert_eq!(staunch_pool_stats(pool, &mut st, null_mut()), STAUNCH_OK);
        st.closed_broken
    };
    for (n, what) in [(1, "staunch_conn_query"), (2, "staunch_conn_execute")] {
        let conn = get(pool);
        let mut err = null_mut();
        let status = if n == 1 {
            let mut rows = null_mut();
            staunch_conn_query(conn, big.as_ptr(), std::ptr::null(), 0, &mut rows, &mut err)
        } else {
            staunch_conn_execute(
                conn,
                big.as_ptr(),
                std::ptr::null(),
                0,
                null_mut(),
                null_mut(),
                &mut err,
            )
        };
        assert_ne!(status, STAUNCH_OK, "{what}: a 6 MiB row cannot be read");
        // SAFETY: err was set with the failure; the message lives until freed.
        let msg = unsafe { std::ffi::CStr::from_ptr(staunch_error_message(err)) }
            .to_string_lossy()
            .into_owned();
        eprintln!("{what}: {msg}");
        assert!(msg.contains("max_allowed_packet"), "{what}: {msg}");
        staunch_error_free(err);
        staunch_conn_free(conn);
        assert_eq!(
            closed_broken(pool),
            n,
            "{what}: the connection must be closed"
        );
        for _ in 0..3 {
            let conn = get(pool);
            let status = staunch_conn_execute(
                conn,
                one.as_ptr(),
                std::ptr::null(),
                0,
                null_mut(),
                null_mut(),
                null_mut(),
            );
            assert_eq!(status, STAUNCH_OK, "{what}: the next borrower's statement");
            staunch_conn_free(conn);
        }
    }
    staunch_pool_free(pool);
}

/// A greeting the `mysql` crate cannot take: an auth-plugin-data length of
/// 128 (its parser subtracts 8 from it as an i8, which overflows and panics
/// in a build with overflow checks, such as this test's).
fn greeting_with_auth_data_len_128(sock: &mut TcpStream, stop: &AtomicBool) {
    let mut p = vec![10u8];
    p.extend_from_slice(b"5.5.5-10.11.6-MariaDB\0");
    p.extend_from_slice(&7u32.to_le_bytes()); // connection id
    p.extend_from_slice(b"12345678"); // scramble, first part
    p.push(0); // filler
    p.extend_from_slice(&0xF7FF_u16.to_le_bytes()); // capabilities, lower half
    p.push(8); // collation
    p.extend_from_slice(&2u16.to_le_bytes()); // status
    p.extend_from_slice(&0u16.to_le_bytes()); // capabilities, upper half
    p.push(128); // auth plugin data length
    p.extend_from_slice(&[0; 6]); // reserved
    p.extend_from_slice(&[0; 4]); // MariaDB capabilities
    p.extend_from_slice(b"9012345678901\0");
    let mut packet = header(p.len(), 0).to_vec();
    packet.extend_from_slice(&p);
    if send(sock, &packet, stop) {
        // Hold the connection until the client goes.
        let _ = sock.set_read_timeout(Some(Duration::from_millis(50)));
        let mut b = [0u8; 256];
        while !stop.load(SeqCst) {
            match sock.read(&mut b) {
                Ok(0) => return,
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
                Err(_) => return,
            }
        }
    }
}

#[test]
fn a_greeting_that_makes_the_driver_panic_is_a_connect_error_and_the_pool_recovers() {
    let _panics = PANICS.write().unwrap_or_else(|e| e.into_inner());
    let s = MariaDb::start();
    let peer = Hostile::start(greeting_with_auth_data_len_128);
    let proxy = Proxy::start(peer.addr);
    let (p, failures) = pool_at(
        proxy.addr(),
        "max_size=2&connect_timeout=500ms&connection_timeout=1500ms",
    );
    // More failed connects than max_size: none may use up a slot for good.
    // (Each panic prints a backtrace, which can take a while: hence the
    // generous timeout.)
    for i in 0..3 {
        let e = p.get().expect_err("the greeting cannot be parsed");
        eprintln!("get() {i}: {e}");
        assert_eq!(e.kind(), ErrorKind::Unreachable, "{e}");
    }
    let f = failures.all();
    eprintln!(
        "{} connects, first error: {:?}",
        peer.accepted.load(SeqCst),
        f.first()
    );
    assert!(peer.accepted.load(SeqCst) >= 3);
    let (_, first) = f.first().expect("a ConnectFailed event");
    // Where, and that it is an error, not a stuck connect. (With overflow
    // checks off the parser fails without panicking: the message differs.)
    assert!(
        first.contains(&format!("127.0.0.1:{}", proxy.port())),
        "{first}"
    );
    // The server behind the address is a real one again.
    proxy.set_target(s.addr());
    let t = Instant::now();
    assert_eq!(select1(&p, Duration::from_secs(5)).unwrap(), 1);
    eprintln!("recovered in {:?}", t.elapsed());
    let st = p.stats();
    assert_eq!(
        (st.total, st.connecting, st.pending_creates),
        (1, 0, 0),
        "{st:?}"
    );
}

/// A statement larger than the server takes in one packet fails before
/// anything is sent, naming `max_allowed_packet` and its value, and the
/// connection stays good, through `exec_params_with` and `Queryable` alike.
#[test]
fn a_statement_over_the_servers_max_allowed_packet_names_it_and_its_value() {
    let _heavy = heavy();
    let s = MariaDb::start_with(ServerOpts {
        args: vec!["--max-allowed-packet=1M".into()],
        ..Default::default()
    });
    let p = Pool::from_url(&format!("{}?max_size=1", s.url())).unwrap();
    let big = vec![b'x'; 2 * 1024 * 1024];
    // Over 16 MiB, a prepared statement's value goes as long data.
    let huge = vec![b'y'; 17 * 1024 * 1024];
    let id = p.get().unwrap().id();
    let cases = [
        ("interpolated", Way::Interpolate, &big, "the statement is"),
        ("prepared", Way::Prepare, &big, "the statement is"),
        ("prepared, long data", Way::Prepare, &huge, "parameter 1 is"),
    ];
    for (what, way, value, says) in cases {
        let mut c = p.get().unwrap();
        let e = c
            .exec_params_with("SELECT LENGTH(?)", &[value.clone().into()], way)
            .unwrap_err();
        eprintln!("{what}: {e}");
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{what}: {e}");
        let m = e.to_string();
        assert!(m.contains(says), "{what}: {m}");
        assert!(
            m.contains("max_allowed_packet (1048576 bytes)"),
            "{what}: {m}"
        );
        // Nothing was sent: the same connection answers the next statement.
        let n: Vec<(i64,)> = c
            .query_params_with("SELECT LENGTH(?)", &[b"abc".to_vec().into()], way)
            .unwrap();
        assert_eq!(n, [(3,)], "{what}");
        assert_eq!(c.id(), id, "{what}");
    }
    // A value just under the limit is sent.
    {
        let mut c = p.get().unwrap();
        let v = vec![b'z'; 1024 * 1024 - 100];
        let n: Vec<(i64,)> = c
            .query_params_with("SELECT LENGTH(?)", &[v.into()], Way::Prepare)
            .unwrap();
        assert_eq!(n, [(1024 * 1024 - 100,)]);
    }
    {
        let mut c = p.get().unwrap();
        let e = c.exec_drop("SELECT LENGTH(?)", (big.clone(),)).unwrap_err();
        eprintln!("Queryable::exec_drop: {e}");
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
        assert!(e.to_string().contains("max_allowed_packet"), "{e}");
        let n: Option<i64> = c
            .exec_first("SELECT LENGTH(?)", (b"abc".to_vec(),))
            .unwrap();
        assert_eq!(n, Some(3));
        assert_eq!(c.id(), id);
    }
    next_borrowers_get_their_own_answers(&p);
    assert_eq!(p.stats().closed_broken, 0);
}
