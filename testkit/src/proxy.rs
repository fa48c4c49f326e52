//! A chaos TCP proxy on 127.0.0.1 (std only, threads per connection).
//!
//! Every accepted connection is handled in the [`Mode`] that was current when
//! it was accepted, towards the target that was current then: changing mode
//! or target only affects later connections (a black-holed connection keeps
//! hanging, a "VIP move" leaves established sessions where they are).
//!
//! Threads are named `chaos-proxy-<port>-*`. Every blocking operation is
//! bounded by a 50 ms timeout so that `sever_all` and `Drop` take effect
//! promptly; severed connections are closed with RST (`SO_LINGER` 0).

use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::unix::io::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// Read/write timeout of proxied sockets: how fast threads notice flags.
const TICK: Duration = Duration::from_millis(50);
/// Bound on connecting to the target.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);
/// How often black-holed sockets are checked for having been closed by the client.
const SWEEP_EVERY: Duration = Duration::from_millis(50);

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mode {
    /// Forward both ways.
    Pass,
    /// Accept, never forward anything, never answer, keep the socket open
    /// (incident A: TCP up, no greeting). Client bytes are read and discarded.
    BlackHole,
    /// Accept and immediately close with RST (`SO_LINGER` 0).
    Reset,
    /// Forward, delaying each chunk (in each direction) by the duration.
    Latency(Duration),
    /// Forward client->server normally, server->client one byte at a time
    /// with this pause before each byte (defeats a per-read socket timeout).
    Drip(Duration),
    /// Forward both ways until this many bytes went server->client, then
    /// close the client side cleanly (FIN, no RST): a server that hangs up
    /// mid-handshake. `CloseAfter(0)` accepts and closes at once; a value
    /// inside the greeting cuts it short; the greeting's exact length lets the
    /// client send its authentication and then meet EOF. The rest of what the
    /// client sends is read and discarded (so closing sends no RST).
    CloseAfter(usize),
}

struct Conn {
    client: TcpStream,
    /// Set once the connection to the target is established.
    upstream: Option<TcpStream>,
    severed: Arc<AtomicBool>,
    black_hole: bool,
}

impl Conn {
    /// Mark severed, arm RST-on-close and wake any thread blocked reading.
    /// The sockets close (RST) when the last handle is dropped.
    fn sever(&self) {
        self.severed.store(true, Ordering::SeqCst);
        for s in std::iter::once(&self.client).chain(self.upstream.as_ref()) {
            set_linger_zero(s);
            // SHUT_RD sends nothing on Linux but makes blocked reads return 0.
            let _ = s.shutdown(Shutdown::Read);
        }
    }
}

struct Inner {
    port: u16,
    mode: Mutex<Mode>,
    target: Mutex<SocketAddr>,
    shutdown: AtomicBool,
    accepted: AtomicUsize,
    next_id: AtomicU64,
    conns: Mutex<HashMap<u64, Conn>>,
    live_threads: AtomicUsize,
    /// Proxied connections with an id below this forward nothing, either
    /// way, and keep both sockets open (0: none): `stall_existing`.
    stall_below: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A running chaos proxy; see the module docs.
pub struct Proxy {
    addr: SocketAddr,
    inner: Arc<Inner>,
    acceptor: Option<JoinHandle<()>>,
}

impl Proxy {
    /// Listen on 127.0.0.1:<free port> and forward to `target` (mode `Pass`).
    pub fn start(target: SocketAddr) -> Proxy {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .unwrap_or_else(|e| panic!("chaos proxy: cannot bind 127.0.0.1:0: {e}"));
        listener
            .set_nonblocking(true)
            .unwrap_or_else(|e| panic!("chaos proxy: set_nonblocking on listener: {e}"));
        let addr = listener
            .local_addr()
            .unwrap_or_else(|e| panic!("chaos proxy: local_addr: {e}"));
        let inner = Arc::new(Inner {
            port: addr.port(),
            mode: Mutex::new(Mode::Pass),
            target: Mutex::new(target),
            shutdown: AtomicBool::new(false),
            accepted: AtomicUsize::new(0),
            next_id: AtomicU64::new(1),
            conns: Mutex::new(HashMap::new()),
            live_threads: AtomicUsize::new(0),
            stall_below: AtomicU64::new(0),
        });
        let acceptor = {
            let inner2 = inner.clone();
            spawn_tracked(
                &inner,
                format!("chaos-proxy-{}-accept", addr.port()),
                move || accept_loop(listener, inner2),
            )
            .unwrap_or_else(|e| panic!("chaos proxy: cannot spawn the accept thread: {e}"))
        };
        Proxy {
            addr,
            inner,
            acceptor: Some(acceptor),
        }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Mode for connections accepted from now on.
    pub fn set_mode(&self, mode: Mode) {
        *lock(&self.inner.mode) = mode;
    }

    pub fn mode(&self) -> Mode {
        *lock(&self.inner.mode)
    }

    /// Target for connections accepted from now on ("VIP move").
    pub fn set_target(&self, target: SocketAddr) {
        *lock(&self.inner.target) = target;
    }

    pub fn target(&self) -> SocketAddr {
        *lock(&self.inner.target)
    }

    /// Every connection open now stops forwarding, both ways, and keeps both
    /// of its sockets open (a path that went dead without a FIN or RST: the
    /// client waits, and sees neither what the server sends nor that it
    /// closed). Connections accepted afterwards get the current mode.
    /// Undone by `resume_existing`. Returns once every pipe has seen it
    /// (a read in progress ends within one tick).
    pub fn stall_existing(&self) {
        let next = self.inner.next_id.load(Ordering::SeqCst);
        self.inner.stall_below.store(next, Ordering::SeqCst);
        thread::sleep(TICK * 3);
    }

    /// Stalled connections forward again.
    pub fn resume_existing(&self) {
        self.inner.stall_below.store(0, Ordering::SeqCst);
    }

    /// Close every currently open proxied connection, both sides, with RST.
    /// Returns once they are closed (bounded wait, ~1 s at most).
    pub fn sever_all(&self) {
        let piped: Vec<u64> = {
            let mut conns = lock(&self.inner.conns);
            for c in conns.values() {
                c.sever();
            }
            // Black holes have no thread: dropping our handle closes them.
            conns.retain(|_, c| !c.black_hole);
            conns.keys().copied().collect()
        };
        let deadline = Instant::now() + CONNECT_TIMEOUT + Duration::from_millis(200);
        while Instant::now() < deadline {
            let left = {
                let conns = lock(&self.inner.conns);
                piped.iter().any(|id| conns.contains_key(id))
            };
            if !left {
                return;
            }
            thread::sleep(Duration::from_millis(2));
        }
        log::warn!(
            "chaos proxy {}: sever_all: some connections still closing",
            self.port()
        );
    }

    /// Connections currently open (proxied or black-holed).
    pub fn open_connections(&self) -> usize {
        lock(&self.inner.conns).len()
    }

    /// Total connections accepted so far.
    pub fn accepted(&self) -> usize {
        self.inner.accepted.load(Ordering::SeqCst)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.inner.shutdown.store(true, Ordering::SeqCst);
        if let Some(h) = self.acceptor.take() {
            let _ = h.join(); // polls the flag every 10 ms; closes the listener
        }
        {
            let mut conns = lock(&self.inner.conns);
            for c in conns.values() {
                c.sever();
            }
            conns.clear();
        }
        // Threads notice within one TICK; don't wait for stragglers beyond that
        // (they hold no listener and exit on their own).
        let deadline = Instant::now() + Duration::from_millis(150);
        while self.inner.live_threads.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(2));
        }
    }
}

impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Proxy")
            .field("addr", &self.addr)
            .field("target", &self.target())
            .field("mode", &self.mode())
            .field("open", &self.open_connections())
            .field("accepted", &self.accepted())
            .finish()
    }
}

struct ThreadGuard(Arc<Inner>);

impl Drop for ThreadGuard {
    fn drop(&mut self) {
        self.0.live_threads.fetch_sub(1, Ordering::SeqCst);
    }
}

fn spawn_tracked<F>(inner: &Arc<Inner>, name: String, f: F) -> std::io::Result<JoinHandle<()>>
where
    F: FnOnce() + Send + 'static,
{
    inner.live_threads.fetch_add(1, Ordering::SeqCst);
    let guard = ThreadGuard(inner.clone());
    thread::Builder::new().name(name).spawn(move || {
        let _guard = guard;
        f()
    })
    // On spawn failure the closure (and the guard) is dropped: count restored.
}

fn set_linger_zero(s: &TcpStream) {
    let l = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: valid fd owned by `s`, pointer and length of a live `linger`.
    unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&l as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
}

fn accept_loop(listener: TcpListener, inner: Arc<Inner>) {
    let mut last_sweep = Instant::now();
    while !inner.shutdown.load(Ordering::SeqCst) {
        let mut pfd = libc::pollfd {
            fd: listener.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd; bounded 10 ms wait.
        unsafe {
            libc::poll(&mut pfd, 1, 10);
        }
        loop {
            if inner.shutdown.load(Ordering::SeqCst) {
                return;
            }
            match listener.accept() {
                Ok((s, _)) => handle_accepted(&inner, s),
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => {
                    log::warn!("chaos proxy {}: accept: {e}", inner.port);
                    thread::sleep(Duration::from_millis(10));
                    break;
                }
            }
        }
        if last_sweep.elapsed() >= SWEEP_EVERY {
            sweep_black_holes(&inner);
            last_sweep = Instant::now();
        }
    }
}

fn handle_accepted(inner: &Arc<Inner>, s: TcpStream) {
    inner.accepted.fetch_add(1, Ordering::SeqCst);
    let mode = *lock(&inner.mode);
    let target = *lock(&inner.target);
    let _ = s.set_nodelay(true);
    let id = inner.next_id.fetch_add(1, Ordering::SeqCst);
    match mode {
        Mode::Reset => {
            set_linger_zero(&s);
            drop(s);
        }
        Mode::BlackHole => {
            let _ = s.set_nonblocking(true);
            lock(&inner.conns).insert(
                id,
                Conn {
                    client: s,
                    upstream: None,
                    severed: Arc::new(AtomicBool::new(false)),
                    black_hole: true,
                },
            );
        }
        Mode::Pass | Mode::Latency(_) | Mode::Drip(_) | Mode::CloseAfter(_) => {
            let _ = s.set_nonblocking(false);
            let client_handle = match s.try_clone() {
                Ok(c) => c,
                Err(e) => {
                    log::warn!("chaos proxy {}: try_clone: {e}", inner.port);
                    set_linger_zero(&s);
                    return;
                }
            };
            let severed = Arc::new(AtomicBool::new(false));
            lock(&inner.conns).insert(
                id,
                Conn {
                    client: client_handle,
                    upstream: None,
                    severed: severed.clone(),
                    black_hole: false,
                },
            );
            let inner2 = inner.clone();
            let spawned = spawn_tracked(inner, format!("chaos-proxy-{}-{id}", inner.port), {
                move || run_pipe(inner2, id, s, target, mode, severed)
            });
            if let Err(e) = spawned {
                log::warn!("chaos proxy {}: spawn: {e}", inner.port);
                if let Some(c) = lock(&inner.conns).remove(&id) {
                    c.sever();
                }
            }
        }
    }
}

/// Read and discard whatever black-holed clients send; forget the ones that
/// closed their end.
fn sweep_black_holes(inner: &Inner) {
    let mut conns = lock(&inner.conns);
    let mut gone = Vec::new();
    let mut buf = [0u8; 4096];
    for (id, c) in conns.iter().filter(|(_, c)| c.black_hole) {
        loop {
            match (&c.client).read(&mut buf) {
                Ok(0) => {
                    gone.push(*id);
                    break;
                }
                Ok(_) => continue,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => {
                    gone.push(*id);
                    break;
                }
            }
        }
    }
    for id in gone {
        conns.remove(&id);
    }
}

#[derive(Clone, Copy)]
enum Style {
    Plain,
    Delay(Duration),
    Drip(Duration),
    /// Forward this many bytes, then FIN the destination and stop.
    CloseAfter(usize),
}

fn run_pipe(
    inner: Arc<Inner>,
    id: u64,
    client: TcpStream,
    target: SocketAddr,
    mode: Mode,
    severed: Arc<AtomicBool>,
) {
    let abort = |upstream: Option<&TcpStream>| {
        set_linger_zero(&client);
        if let Some(u) = upstream {
            set_linger_zero(u);
        }
        lock(&inner.conns).remove(&id);
    };
    let upstream = match TcpStream::connect_timeout(&target, CONNECT_TIMEOUT) {
        Ok(u) => u,
        Err(e) => {
            log::debug!("chaos proxy {}: connect {target}: {e}", inner.port);
            return abort(None);
        }
    };
    let _ = upstream.set_nodelay(true);
    let handles = (
        upstream.try_clone(),
        client.try_clone(),
        upstream.try_clone(),
    );
    let (Ok(registered), Ok(client2), Ok(upstream2)) = handles else {
        return abort(Some(&upstream));
    };
    {
        let mut conns = lock(&inner.conns);
        match conns.get_mut(&id) {
            Some(c)
                if !severed.load(Ordering::SeqCst) && !inner.shutdown.load(Ordering::SeqCst) =>
            {
                c.upstream = Some(registered)
            }
            _ => {
                drop(conns);
                return abort(Some(&upstream));
            }
        }
    }
    for s in [&client, &upstream] {
        let _ = s.set_read_timeout(Some(TICK));
        let _ = s.set_write_timeout(Some(TICK));
    }
    let (c2s, s2c) = match mode {
        Mode::Latency(d) => (Style::Delay(d), Style::Delay(d)),
        Mode::Drip(d) => (Style::Plain, Style::Drip(d)),
        Mode::CloseAfter(n) => (Style::Plain, Style::CloseAfter(n)),
        _ => (Style::Plain, Style::Plain),
    };
    // Set when the server->client side was cut (CloseAfter): from then on
    // the client's bytes are discarded instead of forwarded.
    let cut = Arc::new(AtomicBool::new(false));
    let pending = Arc::new(AtomicUsize::new(2));
    let finish = move |inner: &Inner, pending: &AtomicUsize| {
        if pending.fetch_sub(1, Ordering::SeqCst) == 1 {
            lock(&inner.conns).remove(&id);
        }
    };
    let spawned = {
        let (inner2, severed2, pending2) = (inner.clone(), severed.clone(), pending.clone());
        let cut2 = cut.clone();
        spawn_tracked(
            &inner,
            format!("chaos-proxy-{}-{id}-s2c", inner.port),
            move || {
                pump(id, &upstream2, &client2, s2c, &inner2, &severed2, &cut2);
                finish(&inner2, &pending2);
            },
        )
    };
    if let Err(e) = spawned {
        log::warn!("chaos proxy {}: spawn: {e}", inner.port);
        return abort(Some(&upstream));
    }
    pump(id, &client, &upstream, c2s, &inner, &severed, &cut);
    finish(&inner, &pending);
}

/// Copy `src` to `dst` until EOF, error, sever or shutdown (or, for
/// `Style::CloseAfter`, until its budget is spent: then `cut` is set).
fn pump(
    id: u64,
    src: &TcpStream,
    dst: &TcpStream,
    style: Style,
    inner: &Inner,
    severed: &AtomicBool,
    cut: &AtomicBool,
) {
    let stop = || severed.load(Ordering::SeqCst) || inner.shutdown.load(Ordering::SeqCst);
    // Hang up on `dst` cleanly: FIN to it, and the other side is dropped.
    let hang_up = || {
        cut.store(true, Ordering::SeqCst);
        let _ = dst.shutdown(Shutdown::Write);
        let _ = src.shutdown(Shutdown::Both);
    };
    if let Style::CloseAfter(0) = style {
        return hang_up();
    }
    let mut budget = match style {
        Style::CloseAfter(n) => n,
        _ => usize::MAX,
    };
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        if stop() {
            return;
        }
        if id < inner.stall_below.load(Ordering::SeqCst) {
            thread::sleep(TICK);
            continue;
        }
        let n = match (&*src).read(&mut buf) {
            Ok(0) => {
                if !stop() && !cut.load(Ordering::SeqCst) {
                    // Orderly close: pass the half-close on.
                    let _ = dst.shutdown(Shutdown::Write);
                }
                return;
            }
            // The other direction hung up: swallow what this side still
            // sends, so that closing it later sends FIN, not RST.
            Ok(_) if cut.load(Ordering::SeqCst) => continue,
            Ok(n) => n,
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) =>
            {
                continue
            }
            Err(_) => return reset_both(src, dst, severed),
        };
        let chunk = &buf[..n.min(budget)];
        budget -= chunk.len();
        let ok = match style {
            Style::Plain | Style::CloseAfter(_) => write_all(dst, chunk, &stop),
            Style::Delay(d) => nap(d, &stop) && write_all(dst, chunk, &stop),
            Style::Drip(d) => chunk
                .iter()
                .all(|b| nap(d, &stop) && write_all(dst, std::slice::from_ref(b), &stop)),
        };
        if !ok {
            if cut.load(Ordering::SeqCst) {
                continue; // raced with the hang-up: the rest is discarded
            }
            if !stop() {
                reset_both(src, dst, severed);
            }
            return;
        }
        if budget == 0 {
            return hang_up();
        }
    }
}

/// A peer reset (or a write failed): reset the other side too.
fn reset_both(a: &TcpStream, b: &TcpStream, severed: &AtomicBool) {
    severed.store(true, Ordering::SeqCst);
    for s in [a, b] {
        set_linger_zero(s);
        let _ = s.shutdown(Shutdown::Read);
    }
}

fn write_all(dst: &TcpStream, mut data: &[u8], stop: &dyn Fn() -> bool) -> bool {
    while !data.is_empty() {
        match (&*dst).write(data) {
            Ok(0) => return false,
            Ok(n) => data = &data[n..],
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) =>
            {
                if stop() {
                    return false;
                }
            }
            Err(_) => return false,
        }
    }
    true
}

/// Sleep `d` in small slices; false if asked to stop meanwhile.
fn nap(d: Duration, stop: &dyn Fn() -> bool) -> bool {
    let deadline = Instant::now() + d;
    loop {
        if stop() {
            return false;
        }
        let now = Instant::now();
        if now >= deadline {
            return true;
        }
        thread::sleep((deadline - now).min(Duration::from_millis(10)));
    }
}
