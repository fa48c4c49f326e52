//! Hosts and roles: one generic pool per physical server, routing of writes to
//! the current primary and reads to healthy replicas, and the primary monitor.
//!
//! Incident B came from a "logical" replication connection whose replica half
//! escaped validation. Here there is no logical connection: every connection
//! handed out is one physical connection of one host's pool, and every pool
//! validates its own connections (keepalive, validation on borrow after the
//! bypass window, idle retirement).
//!
//! With one host the pool is that host's pool and nothing else runs. With
//! several, `staunch-monitor` (`monitor.rs`: the probes) watches them all and
//! applies one of two rule sets (`rules.rs`: pure functions), chosen by the
//! servers' `wsrep_on` at its first look unless `topology=` forces one:
//! replication (the first host is the initial primary unless the first look
//! finds another host with `read_only = 0` and the first read-only; the rest
//! are replicas) or Galera (one writer by the lowest `wsrep_local_index`,
//! kept while Synced; reads over the other Synced nodes).

mod config;
mod monitor;
mod probe;
mod rules;

use std::fmt;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release, SeqCst};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub(crate) use self::config::{Kind, SecondaryCheck};
pub use self::config::{PingType, TopologyConfig, DEFAULT_ALIVE_ERROR_CODES};
pub use self::probe::missing_privileges;
use crate::client::{ConnectConfig, MysqlConnector, NodeAlarm, PooledConn};
use crate::error::{Error, ErrorKind, Result};
use crate::events::{emit, Event, EventListener};
use crate::pool::stats::{Histograms, Stats};
use crate::pool::{CancelToken, CorePool, PendingGet, PoolConfig, Started};
use crate::sync::lock;
use crate::trace::{TraceKind, Traced, Tracer};

/// `writer` value when no host may take writes.
const NO_WRITER: usize = usize::MAX;

/// `Topo::mode` values.
pub(crate) const MODE_UNKNOWN: u8 = 0;
pub(crate) const MODE_REPLICATION: u8 = 1;
pub(crate) const MODE_GALERA: u8 = 2;

/// What the monitor last found about a host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
#[repr(u8)]
pub enum HostHealth {
    /// Not checked yet (reads go there; its pool validates every connection).
    Unknown = 0,
    /// Reachable, and for a replica: replicating within `max_replication_lag`.
    Healthy = 1,
    /// A replica lagging past `max_replication_lag`, or whose replication is
    /// broken: no reads.
    Lagging = 2,
    /// The last check could not reach it.
    Down = 3,
    /// A former primary, superseded by a promotion the pool followed, that
    /// answers with `read_only = 0`: no writes, no reads, until it
    /// replicates again (see `StalePrimaryWritable`).
    Stale = 4,
}

impl HostHealth {
    fn from_u8(v: u8) -> HostHealth {
        match v {
            1 => HostHealth::Healthy,
            2 => HostHealth::Lagging,
            3 => HostHealth::Down,
            4 => HostHealth::Stale,
            _ => HostHealth::Unknown,
        }
    }

    /// Whether reads may go to a replica in this state.
    fn takes_reads(self) -> bool {
        matches!(self, HostHealth::Healthy | HostHealth::Unknown)
    }
}

/// A [`HostHealth`] that the monitor writes and readers load, each on its
/// own (`Relaxed`: a reader acting on a value one check old is fine).
pub(crate) struct AtomicHealth(AtomicU8);

impl AtomicHealth {
    fn new(h: HostHealth) -> Self {
        AtomicHealth(AtomicU8::new(h as u8))
    }
    pub fn load(&self) -> HostHealth {
        HostHealth::from_u8(self.0.load(Relaxed))
    }
    pub fn store(&self, h: HostHealth) {
        self.0.store(h as u8, Relaxed)
    }
    /// Stores `h`, returns what was there.
    pub fn swap(&self, h: HostHealth) -> HostHealth {
        HostHealth::from_u8(self.0.swap(h as u8, Relaxed))
    }
}

/// One server: its own pool, and what the monitor found about it.
pub(crate) struct Host {
    // Set at start, read-only afterwards.
    pub endpoint: String,
    pub connect: ConnectConfig,
    pub pool: CorePool<MysqlConnector>,
    /// Written by the monitor thread only.
    pub health: AtomicHealth,
    /// Last measured replication lag in ms (u64::MAX: unknown or broken).
    /// Written by the monitor thread only (`Relaxed`).
    pub lag_ms: AtomicU64,
    /// Set by a borrower whose statement this server answered "cannot serve
    /// now" (Galera's 1047 or 1180, a shutdown: the connector's alarm), cleared by
    /// the monitor when a probe started after it answers. While set, reads
    /// go elsewhere, and in a Galera cluster writes too (the monitor passes
    /// the node over until its probe answers).
    pub suspect: Arc<AtomicBool>,
}

/// The topology every `Pool` handle and the monitor share.
pub(crate) struct Topo {
    // Set at start, read-only afterwards.
    pub hosts: Vec<Host>,
    pub cfg: TopologyConfig,
    pub pool_cfg: PoolConfig,
    /// `pool_name`, or `staunch-N`.
    pub name: String,
    /// The tracer, if one is set (for acquires; each host's connector has
    /// it too, for statements).
    pub traced: Option<Traced>,
    pub listener: Arc<dyn EventListener>,
    pub secondary_check: Option<SecondaryCheck>,
    /// Index of the host taking writes, or NO_WRITER. Written by the monitor
    /// (`Release`, after `no_writer` is cleared), read by `get` (`Acquire`).
    pub writer: AtomicUsize,
    /// Why there is no writer (the error `get` returns meanwhile); its mutex
    /// is held only to set, clear or clone it.
    pub no_writer: Mutex<Option<Error>>,
    /// The rule set in force: [`MODE_UNKNOWN`] until the monitor's first
    /// look (without `topology=`), then [`MODE_REPLICATION`] or
    /// [`MODE_GALERA`]. Written by the monitor only (`Relaxed`: routing acting
    /// on a value one check old is fine).
    pub mode: AtomicU8,
    /// Set once by `close` (`SeqCst`).
    pub closed: AtomicBool,
    /// Dropped on close to wake the monitor; the mutex guards only the take.
    pub stop_tx: Mutex<Option<crossbeam_channel::Sender<()>>>,
    pub stop_rx: crossbeam_channel::Receiver<()>,
    /// The index of a host whose `suspect` flag a borrower just set: the
    /// monitor probes it now (sent once per false-to-true change).
    pub wake_rx: crossbeam_channel::Receiver<usize>,
    /// The monitor thread, for `close_and_join` (taken once).
    pub monitor: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// Serializes `set_max_size` and `set_min_idle` over the hosts, so that
    /// every host ends with the same limits (held only for the setters,
    /// which do no I/O).
    pub resize: Mutex<()>,
}

impl Topo {
    pub fn emit(&self, e: Event) {
        emit(&*self.listener, e)
    }

    pub fn writer(&self) -> Option<usize> {
        match self.writer.load(Acquire) {
            NO_WRITER => None,
            w => Some(w),
        }
    }

    /// Stops writes: callers get `err` at once, waiters on the old writer too.
    pub fn refuse_writes(&self, err: Error) {
        *lock(&self.no_writer) = Some(err.clone());
        if let Some(w) = self.writer() {
            self.writer.store(NO_WRITER, Release);
            self.hosts[w].pool.fail_waiters(&err);
        }
    }

    pub fn set_writer(&self, idx: usize) {
        self.writer.store(idx, Release);
        lock(&self.no_writer).take();
    }

    fn no_writer_error(&self) -> Error {
        lock(&self.no_writer)
            .clone()
            .unwrap_or_else(|| Error::new(ErrorKind::NoWriter, "no writer is known yet"))
    }

    /// The writer's pool, or why there is none.
    fn writer_pool(&self) -> Result<&CorePool<MysqlConnector>> {
        match self.writer() {
            Some(w) => Ok(&self.hosts[w].pool),
            None if self.closed.load(Relaxed) => Err(Error::closed()),
            None => Err(self.no_writer_error()),
        }
    }

    /// Where a read goes: a replica (its index), spread over those whose
    /// last check qualifies them (or not checked yet; in a Galera cluster
    /// only nodes the monitor found Synced within max_transactions_behind;
    /// before the monitor knows which, none); None: the writer. Fails when
    /// none qualifies and read_fallback=fail.
    fn read_host(&self) -> Result<Option<usize>> {
        let writer = self.writer();
        let n = self.hosts.len();
        let mode = self.mode.load(Relaxed);
        let eligible: Vec<usize> = (0..n)
            .filter(|&i| Some(i) != writer && self.cfg.multi())
            .filter(|&i| !self.hosts[i].suspect.load(Relaxed))
            .filter(|&i| match (mode, self.hosts[i].health.load()) {
                (MODE_REPLICATION, h) => h.takes_reads(),
                (MODE_GALERA, h) => h == HostHealth::Healthy,
                _ => false,
            })
            .collect();
        if !eligible.is_empty() {
            // Each replica's own pool hands out an idle connection or makes one.
            return Ok(Some(eligible[next_spread() % eligible.len()]));
        }
        if writer.is_some() && n > 1 && !self.cfg.read_fallback {
            return Err(Error::new(
                ErrorKind::Unreachable,
                "no replica qualifies for reads (down, lagging or broken) and read_fallback=fail",
            ));
        }
        Ok(None)
    }
}

/// Tells the tracer (if any) how a borrow that started at `at` ended.
fn trace_acquire_end(t: &Topo, at: std::time::Instant, got: Result<&PooledConn, &Error>) {
    let Some(tr) = &t.traced else {
        return;
    };
    let mut e = tr.event(TraceKind::AcquireEnd);
    e.duration = at.elapsed();
    let text;
    match got {
        Ok(c) => {
            e.server = c.traced().map_or("", |t| &t.server);
            e.connection_id = c.id();
        }
        Err(err) => {
            text = err.to_string();
            e.error = Some(&text);
            e.error_code = err.server_code().unwrap_or(0);
        }
    }
    tr.emit(&e);
}

/// A borrow's start on one host (`read`: routed as `get_read`), bounded by
/// `timeout`; `at` is when the whole borrow started, `signal` the
/// descriptor a borrow that already waited keeps.
fn start_get(
    t: &Arc<Topo>,
    timeout: Duration,
    read: bool,
    at: std::time::Instant,
    signal: Option<Arc<crate::sys::EventFd>>,
) -> Result<StartedGet> {
    if t.closed.load(Relaxed) {
        return Err(Error::closed());
    }
    let (pool, fallback) = match read.then(|| t.read_host()).transpose()?.flatten() {
        Some(i) => (&t.hosts[i].pool, t.cfg.read_fallback),
        None => (t.writer_pool()?, false),
    };
    let signal = match signal {
        Some(s) => s,
        None => Arc::new(crate::sys::EventFd::new()?),
    };
    match pool.get_start_signalling(timeout, Some(signal.clone())) {
        Ok(Started::Ready(l)) => Ok(StartedGet::Ready(PooledConn::new(l))),
        Ok(Started::Waiting(inner)) => Ok(StartedGet::Waiting(PendingConn {
            inner,
            t: t.clone(),
            signal,
            fallback,
            at,
            timeout,
            done: false,
        })),
        Err(e) if fallback && e.kind() != ErrorKind::Cancelled => {
            fall_back(t, &e, timeout, at, signal)
        }
        Err(e) => Err(e),
    }
}

/// A read whose replica failed it, with read_fallback: the writer, with
/// what is left of the bound.
fn fall_back(
    t: &Arc<Topo>,
    e: &Error,
    timeout: Duration,
    at: std::time::Instant,
    signal: Arc<crate::sys::EventFd>,
) -> Result<StartedGet> {
    let left = timeout.saturating_sub(at.elapsed());
    if left.is_zero() {
        return Err(e.clone());
    }
    log::warn!(target: "staunch", "read from a replica failed, using the writer: {e}");
    start_get(t, left, false, at, Some(signal))
}

/// What [`Pool::get_start`] gives: a connection now, or a borrow waiting.
// `Ready` is the common answer (a connection idle), returned by value as
// `get` returns its connection: boxing it would cost every borrow an
// allocation to save a move on the rarer path.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum StartedGet {
    /// A connection was idle: the borrow is done.
    Ready(PooledConn),
    /// In the queue: wait until [`PendingConn::fd`] is readable (or
    /// [`PendingConn::remaining`] has passed), then
    /// [`finish`](PendingConn::finish).
    Waiting(PendingConn),
}

/// A borrow waiting without a thread of its own (see [`Pool::get_start`]).
///
/// Its descriptor turns readable when a connection, or a failure (the pool
/// closed, a permanent connect error), was handed to it; the host waits for
/// that or for [`remaining`](PendingConn::remaining) to pass (no descriptor
/// turns readable at the bound), then calls
/// [`finish`](PendingConn::finish), which reports the timeout as the
/// blocking borrow does. The descriptor stays the same for the borrow's
/// life (a read falling back to the writer included). Dropping it before it
/// finished is the host giving up: it leaves the queue as a cancelled `get`
/// does, and a connection handed over meanwhile goes back to the pool.
pub struct PendingConn {
    inner: PendingGet<MysqlConnector>,
    t: Arc<Topo>,
    signal: Arc<crate::sys::EventFd>,
    /// A read waiting on a replica, with read_fallback: a failure starts
    /// again on the writer.
    fallback: bool,
    at: std::time::Instant,
    timeout: Duration,
    done: bool,
}

impl PendingConn {
    /// The descriptor to wait on, readable when [`finish`](PendingConn::finish)
    /// has something; valid while `self` lives.
    pub fn fd(&self) -> std::os::fd::RawFd {
        self.signal.raw()
    }

    /// Time left until the borrow's bound (zero once it passed).
    pub fn remaining(&self) -> Duration {
        self.inner.remaining()
    }

    /// Completes the borrow if it can be now; never waits (but for the
    /// validation of a connection idle past `validation_interval`, bounded
    /// by what is left). None: not yet (nothing handed over, the bound not
    /// passed; a spurious wake-up or a connection that failed validation):
    /// wait again. Some: done, either way; calling it again then fails.
    pub fn finish(&mut self) -> Option<Result<PooledConn>> {
        let got = match self.inner.finish()? {
            Ok(l) => Ok(PooledConn::new(l)),
            Err(e) if self.fallback && !self.done && e.kind() != ErrorKind::Cancelled => {
                match fall_back(&self.t, &e, self.timeout, self.at, self.signal.clone()) {
                    Ok(StartedGet::Ready(c)) => Ok(c),
                    Ok(StartedGet::Waiting(mut p)) => {
                        // The writer's borrow goes on in this one; `p` ends
                        // with the replica's finished one (a no-op) and
                        // tells the tracer nothing.
                        std::mem::swap(&mut self.inner, &mut p.inner);
                        p.done = true;
                        self.fallback = false;
                        return None;
                    }
                    Err(e) => Err(e),
                }
            }
            Err(e) => Err(e),
        };
        if !self.done {
            self.done = true;
            trace_acquire_end(&self.t, self.at, got.as_ref());
        }
        Some(got)
    }
}

impl Drop for PendingConn {
    fn drop(&mut self) {
        if !self.done {
            let e = Error::new(
                ErrorKind::Cancelled,
                "the borrow was given up before it finished",
            );
            trace_acquire_end(&self.t, self.at, Err(&e));
        }
    }
}

impl fmt::Debug for PendingConn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PendingConn")
            .field("fd", &self.fd())
            .field("remaining", &self.remaining())
            .finish()
    }
}

/// A pool of MySQL/MariaDB connections: one server, or a primary and replicas.
///
/// Cheap to clone (an `Arc` inside); all clones share the pool, which closes
/// when [`close`](Pool::close) is called or the last clone is dropped.
#[derive(Clone)]
pub struct Pool {
    t: Arc<Topo>,
    _owner: Arc<Owner>,
}

struct Owner(Arc<Topo>);

/// A pool that does not keep it open: for a thread of the pool's own that
/// must end when the user's last clone is dropped.
#[cfg_attr(not(feature = "metrics"), allow(dead_code))]
pub(crate) struct WeakPool {
    t: Arc<Topo>,
    owner: std::sync::Weak<Owner>,
}

#[cfg_attr(not(feature = "metrics"), allow(dead_code))]
impl WeakPool {
    /// The pool, while some clone of it is alive and it is not closed.
    pub(crate) fn upgrade(&self) -> Option<Pool> {
        let owner = self.owner.upgrade()?;
        let p = Pool {
            t: self.t.clone(),
            _owner: owner,
        };
        (!p.is_closed()).then_some(p)
    }
}

impl Drop for Owner {
    fn drop(&mut self) {
        close(&self.0);
    }
}

fn close(t: &Topo) {
    if t.closed.swap(true, SeqCst) {
        return;
    }
    lock(&t.stop_tx).take();
    for h in &t.hosts {
        h.pool.close();
    }
}

/// One host's view, from [`Pool::host_stats`].
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct HostStats {
    /// `host:port`.
    pub endpoint: String,
    /// Whether writes go here now.
    pub is_writer: bool,
    /// What the monitor last found.
    pub health: HostHealth,
    /// Replication lag last measured (replicas only).
    pub lag: Option<Duration>,
    /// This host's pool.
    pub stats: Stats,
    /// This host's pool's histograms.
    pub histograms: Histograms,
}

impl Pool {
    /// Opens a pool: one host's pool per server, and the monitor if
    /// configured. (The public constructors are in the crate root, over the
    /// whole configuration.)
    pub(crate) fn open(
        connect: &ConnectConfig,
        pool_cfg: &PoolConfig,
        topology: &TopologyConfig,
        listener: Arc<dyn EventListener>,
        secondary_check: Option<SecondaryCheck>,
        tracer: Option<Arc<dyn Tracer>>,
    ) -> Result<Pool> {
        let name: String = pool_cfg.name.clone().unwrap_or_else(|| {
            static OPENED: AtomicU64 = AtomicU64::new(0);
            format!("staunch-{}", OPENED.fetch_add(1, Relaxed) + 1)
        });
        let traced = tracer.map(|tracer| Traced {
            tracer,
            pool: name.as_str().into(),
            server: "".into(),
        });
        let mut targets = vec![connect.clone()];
        for (host, port) in &topology.more_hosts {
            let mut c = connect.clone();
            c.host = host.clone();
            c.port = *port;
            targets.push(c);
        }
        let mut hosts: Vec<Host> = Vec::with_capacity(targets.len());
        // One numbering for every host's connections: a number names one
        // connection pool-wide, as the C ABI says.
        let ids = Arc::new(AtomicU64::new(0));
        let (wake_tx, wake_rx) = crossbeam_channel::unbounded();
        for c in targets {
            let suspect = Arc::new(AtomicBool::new(false));
            let mut connector = MysqlConnector::new(c.clone(), pool_cfg.validation_timeout)
                .with_connect_timeout(pool_cfg.connect_timeout);
            if let Some(t) = &traced {
                connector = connector.with_tracer(t.clone());
            }
            if topology.monitor_enabled() {
                // A borrower's statement got "cannot serve now": flag the
                // host and wake the monitor (no I/O, no lock, no waiting).
                let (flag, tx, i) = (suspect.clone(), wake_tx.clone(), hosts.len());
                connector = connector.with_alarm(NodeAlarm(Arc::new(move |_what: &str| {
                    if !flag.swap(true, SeqCst) {
                        let _ = tx.send(i);
                    }
                })));
            }
            // Replicas never need initialization_fail_timeout: the writer does.
            let mut pc = pool_cfg.clone();
            if !hosts.is_empty() {
                pc.initialization_fail_timeout = None;
            }
            let pool = match CorePool::with_ids(pc, connector, listener.clone(), ids.clone()) {
                Ok(p) => p,
                Err(e) => {
                    for h in &hosts {
                        h.pool.close();
                    }
                    return Err(e);
                }
            };
            hosts.push(Host {
                endpoint: c.endpoint(),
                connect: c,
                pool,
                health: AtomicHealth::new(HostHealth::Unknown),
                lag_ms: AtomicU64::new(u64::MAX),
                suspect,
            });
        }
        let (stop_tx, stop_rx) = crossbeam_channel::bounded(0);
        let t = Arc::new(Topo {
            hosts,
            writer: AtomicUsize::new(0),
            no_writer: Mutex::new(None),
            mode: AtomicU8::new(match topology.kind {
                Kind::Replication => MODE_REPLICATION,
                Kind::Galera => MODE_GALERA,
                Kind::Auto | Kind::Single => MODE_UNKNOWN,
            }),
            pool_cfg: pool_cfg.clone(),
            name,
            traced,
            cfg: topology.clone(),
            listener,
            closed: AtomicBool::new(false),
            stop_tx: Mutex::new(Some(stop_tx)),
            stop_rx,
            wake_rx,
            secondary_check,
            monitor: Mutex::new(None),
            resize: Mutex::new(()),
        });
        if t.cfg.monitor_enabled() {
            match monitor::spawn(&t) {
                Ok(handle) => *lock(&t.monitor) = Some(handle),
                Err(e) => {
                    close(&t);
                    return Err(Error::new(
                        ErrorKind::Internal,
                        format!("cannot start the monitor thread: {e}"),
                    ));
                }
            }
        }
        Ok(Pool {
            _owner: Arc::new(Owner(t.clone())),
            t,
        })
    }

    fn writer_pool(&self) -> Result<&CorePool<MysqlConnector>> {
        self.t.writer_pool()
    }

    /// Borrows a connection to the current writer (the primary), waiting at
    /// most `connection_timeout`.
    pub fn get(&self) -> Result<PooledConn> {
        self.traced(|| self.writer_pool()?.get().map(PooledConn::new))
    }

    /// Runs the borrow `get`, told to the tracer (if any) as an acquire.
    fn traced(&self, get: impl FnOnce() -> Result<PooledConn>) -> Result<PooledConn> {
        let Some(tr) = &self.t.traced else {
            return get();
        };
        tr.emit(&tr.event(TraceKind::AcquireStart));
        let at = std::time::Instant::now();
        let got = get();
        trace_acquire_end(&self.t, at, got.as_ref());
        got
    }

    /// Starts a borrow that waits without a thread of its own, for a host
    /// whose threads must not block: Go's netpoller, asyncio, a JVM's
    /// virtual threads. `Ready` when a connection was idle; else `Waiting`:
    /// a [`PendingConn`] in the queue, in turn with the blocked callers,
    /// whose descriptor turns readable when it can [`finish`]. `read`
    /// routes as [`get_read`](Pool::get_read) (a replica, falling back to the
    /// writer as it does). Fails at once as the blocking borrows do;
    /// `timeout` bounds the whole borrow as theirs does. See
    /// `CorePool::get_start` for what may still wait in the calling thread
    /// (a suspended pool; the validation of a connection idle past
    /// `validation_interval`).
    ///
    /// [`finish`]: PendingConn::finish
    pub fn get_start(&self, timeout: Duration, read: bool) -> Result<StartedGet> {
        self.get_start_signalling(timeout, read, None)
    }

    /// [`get_start`](Pool::get_start) whose waiting borrow signals `fd`, a
    /// host's own eventfd (the C ABI's `signal_fd`: one a host keeps
    /// registered in its event loop and reuses), instead of one of its own.
    pub(crate) fn get_start_signalling(
        &self,
        timeout: Duration,
        read: bool,
        fd: Option<std::os::fd::RawFd>,
    ) -> Result<StartedGet> {
        let t = &self.t;
        if let Some(tr) = &t.traced {
            tr.emit(&tr.event(TraceKind::AcquireStart));
        }
        let at = std::time::Instant::now();
        let signal = fd.map(|fd| Arc::new(crate::sys::EventFd::borrowed(fd)));
        match start_get(t, timeout, read, at, signal) {
            Ok(StartedGet::Waiting(p)) => Ok(StartedGet::Waiting(p)),
            Ok(StartedGet::Ready(c)) => {
                trace_acquire_end(t, at, Ok(&c));
                Ok(StartedGet::Ready(c))
            }
            Err(e) => {
                trace_acquire_end(t, at, Err(&e));
                Err(e)
            }
        }
    }

    /// As [`get`](Pool::get), waiting at most `timeout`. Fails with
    /// `PoolExhausted` or `Unreachable` (the message says which and why),
    /// `ConnectRejected` at once on a permanent connect error, `NoWriter` at
    /// once while no primary is known, or `Closed`.
    pub fn get_timeout(&self, timeout: Duration) -> Result<PooledConn> {
        self.get_inner(timeout, None)
    }

    /// As [`get_timeout`](Pool::get_timeout), and `cancel`, fired from any
    /// thread, makes a waiting call return `Cancelled` promptly, leaving the
    /// pool as if it had never waited (an already cancelled token fails at
    /// once).
    pub fn get_cancellable(&self, timeout: Duration, cancel: &CancelToken) -> Result<PooledConn> {
        self.get_inner(timeout, Some(cancel))
    }

    fn get_inner(&self, timeout: Duration, cancel: Option<&CancelToken>) -> Result<PooledConn> {
        self.traced(|| {
            let pool = self.writer_pool()?;
            match cancel {
                Some(c) => pool.get_cancellable(timeout, c),
                None => pool.get_timeout(timeout),
            }
            .map(PooledConn::new)
        })
    }

    /// Runs `work` on a connection to the writer and, when it fails with a
    /// conflict ([`Error::is_conflict`]: a deadlock, or a Galera
    /// certification failure; the server rolled the transaction back), runs
    /// it again on a freshly borrowed connection, up to `attempts` runs in
    /// all (clamped to 1..=10), pausing 4, 8, 16... ms (plus jitter) between
    /// runs. Opt-in, and for idempotent work only: `work` must be safe to
    /// run again from its start, so it should open and commit its own
    /// transaction. Any other error, and the last conflict, is returned as
    /// it is (a conflict is `ErrorKind::Conflict`, `server_code() ==
    /// Some(1213)`); each borrow waits at most `connection_timeout`.
    pub fn retry_on_conflict<T>(
        &self,
        attempts: u32,
        mut work: impl FnMut(&mut PooledConn) -> Result<T>,
    ) -> Result<T> {
        let attempts = attempts.clamp(1, 10);
        let mut run = 0;
        loop {
            run += 1;
            let mut c = self.get()?;
            let e = match work(&mut c) {
                Ok(v) => return Ok(v),
                Err(e) => e,
            };
            drop(c);
            if !e.is_conflict() || run >= attempts {
                return Err(e);
            }
            log::debug!(target: "staunch", "conflict on run {run} of {attempts}, running again: {e}");
            let pause = Duration::from_millis(2 << run.min(6));
            std::thread::sleep(pause + Duration::from_millis(crate::pool::jitter(4)));
        }
    }

    /// A connection to the writer if one is idle now; never waits.
    pub fn try_get(&self) -> Result<Option<PooledConn>> {
        Ok(self.writer_pool()?.try_get()?.map(PooledConn::new))
    }

    /// Borrows a connection for reading: from a healthy replica (spread over
    /// them), or from the writer when none qualifies and `read_fallback=writer`
    /// (the default). A replica qualifies when its last check found it
    /// reachable and replicating within `max_replication_lag`. With a single
    /// host this is [`get`](Pool::get).
    pub fn get_read(&self) -> Result<PooledConn> {
        self.get_read_timeout(self.t.pool_cfg.connection_timeout)
    }

    /// As [`get_read`](Pool::get_read), waiting at most `timeout`.
    pub fn get_read_timeout(&self, timeout: Duration) -> Result<PooledConn> {
        self.get_read_inner(timeout, None)
    }

    /// As [`get_read_timeout`](Pool::get_read_timeout), cancellable as
    /// [`get_cancellable`](Pool::get_cancellable) is.
    pub fn get_read_cancellable(
        &self,
        timeout: Duration,
        cancel: &CancelToken,
    ) -> Result<PooledConn> {
        self.get_read_inner(timeout, Some(cancel))
    }

    fn get_read_inner(
        &self,
        timeout: Duration,
        cancel: Option<&CancelToken>,
    ) -> Result<PooledConn> {
        self.traced(|| self.get_read_untraced(timeout, cancel))
    }

    fn get_read_untraced(
        &self,
        timeout: Duration,
        cancel: Option<&CancelToken>,
    ) -> Result<PooledConn> {
        let t = &self.t;
        if t.closed.load(Relaxed) {
            return Err(Error::closed());
        }
        let start = std::time::Instant::now();
        if let Some(i) = t.read_host()? {
            let h = &t.hosts[i];
            let got = match cancel {
                Some(c) => h.pool.get_cancellable(timeout, c),
                None => h.pool.get_timeout(timeout),
            };
            match got {
                Ok(c) => return Ok(PooledConn::new(c)),
                Err(e) if !t.cfg.read_fallback || e.kind() == ErrorKind::Cancelled => {
                    return Err(e)
                }
                Err(e) => {
                    log::warn!(target: "staunch", "read from replica {} failed, using the writer: {e}", h.endpoint);
                    // The fallback gets what is left of the caller's bound.
                    let left = timeout.saturating_sub(start.elapsed());
                    if left.is_zero() {
                        return Err(e);
                    }
                    return self.get_inner(left, cancel);
                }
            }
        }
        self.get_inner(timeout, cancel)
    }

    /// A snapshot of gauges and counters, summed over every host (latency
    /// figures are the writer's).
    pub fn stats(&self) -> Stats {
        let mut s = Stats::default();
        for h in &self.t.hosts {
            s.absorb(&h.pool.stats());
        }
        if let Some(w) = self.t.writer() {
            let ws = self.t.hosts[w].pool.stats();
            s.acquire_latency = ws.acquire_latency;
            s.connect_latency = ws.connect_latency;
        }
        s
    }

    /// Per-host figures and roles.
    pub fn host_stats(&self) -> Vec<HostStats> {
        let w = self.t.writer();
        self.t
            .hosts
            .iter()
            .enumerate()
            .map(|(i, h)| HostStats {
                endpoint: h.endpoint.clone(),
                is_writer: Some(i) == w,
                health: h.health.load(),
                lag: match h.lag_ms.load(Relaxed) {
                    u64::MAX => None,
                    ms => Some(Duration::from_millis(ms)),
                },
                stats: h.pool.stats(),
                histograms: h.pool.histograms(),
            })
            .collect()
    }

    /// The pool's histograms, summed over every host.
    pub fn histograms(&self) -> Histograms {
        let mut all = Histograms::default();
        for h in &self.t.hosts {
            all.absorb(&h.pool.histograms());
        }
        all
    }

    /// The pool's name: `pool_name`, or `staunch-N` (N counting the unnamed pools
    /// the process opened).
    pub fn name(&self) -> &str {
        &self.t.name
    }

    /// Times every borrow and statement from now on (`true`), for the
    /// `use_time` and `statement_time` histograms, or no longer. The
    /// exporters turn it on; `timings=on` in the URL from the start. Each
    /// costs two precise clock reads (~40 ns).
    pub fn keep_timings(&self, on: bool) {
        for h in &self.t.hosts {
            h.pool.keep_timings(on);
        }
    }

    /// A handle that does not keep the pool open (see [`WeakPool`]).
    #[cfg_attr(not(feature = "metrics"), allow(dead_code))]
    pub(crate) fn downgrade(&self) -> WeakPool {
        WeakPool {
            t: self.t.clone(),
            owner: Arc::downgrade(&self._owner),
        }
    }

    /// `host:port` of the current writer, if any.
    pub fn writer(&self) -> Option<String> {
        self.t.writer().map(|w| self.t.hosts[w].endpoint.clone())
    }

    /// The last connect error of the writer's pool, if connects are failing.
    pub fn last_connect_error(&self) -> Option<Error> {
        self.writer_pool().ok()?.last_connect_error()
    }

    /// Retires every current connection on every host (idle ones now,
    /// borrowed ones when returned).
    pub fn soft_evict(&self) {
        for h in &self.t.hosts {
            h.pool.soft_evict();
        }
    }

    /// Stops handing out connections until [`resume`](Pool::resume).
    pub fn suspend(&self) {
        for h in &self.t.hosts {
            h.pool.suspend();
        }
    }

    /// Ends a [`suspend`](Pool::suspend).
    pub fn resume(&self) {
        for h in &self.t.hosts {
            h.pool.resume();
        }
    }

    /// Changes `max_size` (per host, as the knob) while the pool runs:
    /// between 1 and [`max_size_cap`](Pool::max_size_cap), not below the
    /// current `min_idle`; a bad value is a `Config` error naming the knob,
    /// and changes nothing. Lowering it takes no borrowed connection away:
    /// connections above the new limit are closed as they come back (idle
    /// ones at once, by the housekeeper), counted as evicted. Raising it has
    /// connections made for callers waiting now. HikariCP's
    /// `setMaximumPoolSize`. Never blocks on I/O.
    pub fn set_max_size(&self, n: usize) -> Result<()> {
        let _g = lock(&self.t.resize);
        for h in &self.t.hosts {
            h.pool.set_max_size(n)?;
        }
        Ok(())
    }

    /// Changes `min_idle` (per host) while the pool runs: between 0 and the
    /// current `max_size`, else a `Config` error naming the knob. The
    /// housekeeper fills up to a raised one at once. HikariCP's
    /// `setMinimumIdle`. Never blocks on I/O.
    pub fn set_min_idle(&self, n: usize) -> Result<()> {
        let _g = lock(&self.t.resize);
        for h in &self.t.hosts {
            h.pool.set_min_idle(n)?;
        }
        Ok(())
    }

    /// `max_size` now (per host): as opened, or as last set.
    pub fn max_size(&self) -> usize {
        self.t.hosts[0].pool.max_size()
    }

    /// `min_idle` now (per host): as opened, or as last set.
    pub fn min_idle(&self) -> usize {
        self.t.hosts[0].pool.min_idle()
    }

    /// The largest `max_size` can be set to (the `max_size_cap` knob).
    pub fn max_size_cap(&self) -> usize {
        self.t.hosts[0].pool.max_size_cap()
    }

    /// Whether [`suspend`](Pool::suspend) is in force.
    pub fn is_suspended(&self) -> bool {
        self.t.hosts[0].pool.is_suspended()
    }

    /// Closes the pool (every host, the monitor). Idempotent.
    pub fn close(&self) {
        close(&self.t);
    }

    /// [`close`](Pool::close), then waits until the pool's threads (each
    /// host's adders, housekeeper and watchdog, and the monitor) have exited,
    /// at most until `timeout` has passed since the call; gives up on the
    /// rest, which exit on their own. Returns whether every thread exited in
    /// time. A monitor probe stuck past `ping_timeout` was already abandoned
    /// by the monitor and is not waited for. Called from a pool thread (an
    /// event listener), it cannot join that thread.
    pub fn close_and_join(&self, timeout: Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        close(&self.t);
        let mut all = true;
        if let Some(m) = lock(&self.t.monitor).take() {
            all &= crate::sync::join_until(m, deadline);
        }
        for h in &self.t.hosts {
            all &= h.pool.join_threads(deadline);
        }
        all
    }

    /// Whether [`close`](Pool::close) was called.
    pub fn is_closed(&self) -> bool {
        self.t.closed.load(Relaxed)
    }

    /// The pool knobs as opened (per host); `max_size` and `min_idle` may
    /// have changed since (see [`max_size`](Pool::max_size)).
    pub fn config(&self) -> &PoolConfig {
        &self.t.pool_cfg
    }
}

/// `staunch pool host:port[,host:port…] (writer host:port)`: never a
/// password.
impl fmt::Display for Pool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("staunch pool ")?;
        for (i, h) in self.t.hosts.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            f.write_str(&h.endpoint)?;
        }
        if self.is_closed() {
            f.write_str(" (closed)")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Pool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pool")
            .field(
                "hosts",
                &self.t.hosts.iter().map(|h| &h.endpoint).collect::<Vec<_>>(),
            )
            .field("writer", &self.writer())
            .field("closed", &self.is_closed())
            .finish()
    }
}

/// A per-thread rotating number, to spread reads without a shared counter.
fn next_spread() -> usize {
    use std::cell::Cell;
    thread_local!(static N: Cell<usize> = const { Cell::new(0) });
    N.with(|n| {
        if n.get() == 0 {
            // Threads start at different places.
            n.set(crate::pool::jitter(1 << 16) as usize + 1);
        }
        let v = n.get().wrapping_add(1);
        n.set(v);
        v
    })
}
