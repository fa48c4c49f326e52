//! The generic pool: knows nothing of MySQL, only the [`Connector`] trait.
//!
//! # Threads
//! - callers of `get` take idle connections themselves (the hot path: a CAS,
//!   one coarse clock read, no lock, no syscall) and wait in the bag's FIFO
//!   otherwise;
//! - `staunch-adder-N` threads take connection requests from a channel and
//!   connect, each connect under a hard deadline;
//! - `staunch-watchdog` cuts off connects that overrun their deadline and
//!   starts extra adders when all of them are stuck while requests wait;
//! - `staunch-housekeeper` retires idle and old connections, runs keepalive on
//!   reserved idle entries, refills `min_idle`, and reports leaks;
//! - `staunch-liveness` (when the connector has a liveness threshold) checks
//!   the server of every statement that has waited past it (`liveness.rs`).
//!
//! # Locks
//! The only pool-wide lock is the bag's waiter queue; besides it there are
//! small mutexes for the in-flight connect list, the health record, the
//! suspend flag and the size limits. None is held across I/O or a listener
//! call.
//!
//! # Size at run time
//! The bag has `max_size_cap` slots, fixed at open; `max_size` and
//! `min_idle` are atomics below it that [`CorePool::set_max_size`] and
//! [`CorePool::set_min_idle`] move. Creating is gated by the live
//! `max_size` (`request_create`, `create_needed`, `add`). Lowering it takes
//! no borrowed connection away: it raises `over_limit`, and while that is
//! set a connection coming back (or made, or found idle by the
//! housekeeper) is closed instead of kept, as `Evicted`, as long as the
//! pool holds more than `max_size`. Whether one is surplus is decided
//! under `resize_lock` (count, then close outside it), so concurrent
//! returns never close more than the surplus, and a waiter gets the next
//! connection back once the pool is within the limit. The hot paths pay one
//! `Relaxed` load of `over_limit` on return, nothing on borrow. Raising
//! `max_size` asks the adders for one connection per waiter.

mod adder;
pub(crate) mod bag;
pub(crate) mod cancel;
pub(crate) mod config;
mod connector;
mod housekeeper;
mod liveness;
pub(crate) mod stats;

use std::cell::Cell;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::Ordering::{Relaxed, SeqCst};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};

use self::bag::{Bag, Entry, IDLE, IN_USE, RESERVED};
pub(crate) use self::cancel::CancelToken;
pub use self::config::PoolConfig;
pub use self::connector::{ConnectAttempt, Connector, Recycled, Suspect};
use self::stats::{Counters, Histograms, Stats};
use crate::duration::fmt_duration;
use crate::error::{Error, ErrorKind, Result};
use crate::events::{emit, CloseReason, Event, EventListener, LogListener};
use crate::sync::{lock, panic_message, Arc, AtomicBool, AtomicU64, AtomicUsize, Condvar, Mutex};
use crate::sys::{coarse_now_ns, precise_now_ns};

/// The generic pool core: a pool of connections made by `C`. The crate's
/// [`Pool`](crate::Pool) is one such core per MySQL host, with routing on
/// top; use this directly with a [`Connector`] of your own.
///
/// Cheap to clone (an `Arc` inside); all clones share one pool. The pool
/// closes when [`close`](CorePool::close) is called or the last clone is
/// dropped.
pub struct CorePool<C: Connector> {
    shared: Arc<Shared<C>>,
    _owner: Arc<Owner<C>>,
}

impl<C: Connector> Clone for CorePool<C> {
    fn clone(&self) -> Self {
        CorePool {
            shared: self.shared.clone(),
            _owner: self._owner.clone(),
        }
    }
}

/// Closes the pool when the last `Pool` handle goes (threads and borrowed
/// connections hold `Shared`, not this).
struct Owner<C: Connector>(Arc<Shared<C>>);

impl<C: Connector> Drop for Owner<C> {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// What the pool knows about reaching the database.
#[derive(Default)]
pub(crate) struct Health {
    pub last_error: Option<(Instant, Error)>,
    pub last_success: Option<Instant>,
    pub consecutive_failures: u32,
    pub outage_since: Option<Instant>,
    /// A permanent connect error and when it was seen: `get` reports it at once
    /// for `PERMANENT_HOLDOFF` instead of connecting again (no retry storm).
    pub permanent: Option<(Instant, Error)>,
}

pub(crate) const PERMANENT_HOLDOFF: Duration = Duration::from_secs(1);

/// How long past `validation_timeout` `close` waits for connections pool
/// threads hold (closing a connection sends a goodbye packet, bounded by the
/// socket's write timeout).
pub(crate) const CLOSE_WAIT_SLACK: Duration = Duration::from_secs(1);

/// How often a `get` waiting on a suspended pool looks at its cancel token.
const SUSPEND_CANCEL_POLL: Duration = Duration::from_millis(20);

thread_local! {
    /// The pool (its [`Shared::key`]) and the entry this thread borrowed
    /// last, which its next borrow from that pool tries first. One pair per
    /// thread: a thread alternating between pools loses only the preference.
    /// A dropped pool's address may be reused by a new one; the hint is then
    /// wrong, which costs nothing (the bag checks every claim).
    static LAST_ENTRY: Cell<(usize, usize)> = const { Cell::new((0, usize::MAX)) };
    /// Set while a binding borrows (see [`host_supplies_stacks`]).
    static HOST_STACKS: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` (a borrow made for a host language's binding, through the C
/// ABI) without capturing the Rust stack for leak reports: the binding gives
/// its own language's stack (`Lease::set_borrower_stack`), and the Rust one
/// would only show the foreign-call frames.
pub(crate) fn host_supplies_stacks<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            HOST_STACKS.with(|h| h.set(self.0));
        }
    }
    let _restore = Restore(HOST_STACKS.with(|h| h.replace(true)));
    f()
}

/// The state every handle, borrowed connection and pool thread shares.
///
/// No field is behind one pool-wide lock. Each says what guards it: an
/// atomic's ordering, or the small mutex it sits in (held only to read or
/// update the value, never across I/O or a listener call).
pub(crate) struct Shared<C: Connector> {
    // Set at start, read-only afterwards.
    pub cfg: PoolConfig,
    pub connector: C,
    pub listener: Arc<dyn EventListener>,
    /// `alive_bypass_window` and `leak_detection_threshold` in ns (0: off),
    /// for the hot path's integer compare.
    pub bypass_ns: u64,
    pub leak_ns: u64,
    /// The connector's statement bound in ms (0: none), each borrow's default.
    pub default_bound_ms: u64,
    /// Whether any borrow may have a statement bound (the default one, or a
    /// borrower's own): the watchdog then checks borrowed sockets every
    /// `STATEMENT_TICK`. Set, never cleared (`Relaxed`).
    pub statement_bounds: AtomicBool,
    /// Whether borrows and statements are timed (`use_time`,
    /// `statement_time`): two precise clock reads each, so only once an
    /// exporter asks (`CorePool::keep_timings`). `Relaxed`.
    pub timings: AtomicBool,

    /// The entries and the waiter queue: each slot's state is a CAS, the
    /// queue has its own lock (see `bag.rs`).
    pub bag: Bag<C::Conn>,
    /// Cumulative counters: independent `Relaxed` atomics.
    pub counters: Counters,

    // Gauges, `SeqCst`: `request_create` and `create_needed` read several of
    // them together to decide whether to connect, and must not see them out
    // of order with `closed`.
    /// Connections open (slots not EMPTY).
    pub total: AtomicUsize,
    /// Create requests outstanding (queued or being worked on).
    pub pending: AtomicUsize,
    /// Connects running right now.
    pub connecting: AtomicUsize,
    /// Adder threads alive, and the number ever started (for names).
    pub adders: AtomicUsize,
    pub adders_started: AtomicUsize,
    /// Soft-eviction generation: entries created before the current one retire.
    pub generation: AtomicU64,
    /// Connection numbers handed out (`Relaxed`: only uniqueness matters);
    /// shared by the host pools of one topology (`CorePool::with_ids`).
    pub next_id: Arc<AtomicU64>,

    // Lifecycle.
    /// Set once by `close` (`SeqCst`); the bag has its own flag, set under
    /// its waiter lock, for callers about to wait.
    pub closed: AtomicBool,
    /// `suspend`/`resume`: the flag is read without the lock on the hot path
    /// (`Relaxed`); it is written, and slow-path callers wait on
    /// `suspend_cv`, under `suspend_lock`.
    pub suspended: AtomicBool,
    suspend_lock: Mutex<()>,
    suspend_cv: Condvar,

    // Size limits, movable while the pool runs (`SeqCst`, read with the
    // gauges they are compared with; written under `resize_lock`).
    /// Most connections the pool holds now (at most `bag.slots.len()`).
    pub max_size: AtomicUsize,
    /// Fewest connections the housekeeper keeps (at most `max_size`).
    pub min_idle: AtomicUsize,
    /// Set when the pool may hold more than `max_size` (it was lowered, or
    /// a connect finished as it was): the return path then checks for
    /// surplus. Read `Relaxed` on the hot path; set and cleared under
    /// `resize_lock`, cleared only once `total <= max_size`.
    pub over_limit: AtomicBool,
    /// Serializes the setters and each surplus decision (the count and the
    /// decrement of `total`; never I/O).
    resize_lock: Mutex<()>,

    // Channels (internally synchronized).
    /// Create requests to the adders; `pending` counts what is in it.
    pub create_tx: Sender<()>,
    pub create_rx: Receiver<()>,
    /// Dropped on close: every pool thread sleeps on the receiver, so close
    /// wakes them all. The mutex only guards the take.
    shutdown_tx: Mutex<Option<Sender<()>>>,
    pub shutdown_rx: Receiver<()>,
    pub wake_watchdog: Sender<()>,
    pub wake_watchdog_rx: Receiver<()>,
    pub wake_housekeeper: Sender<()>,
    pub wake_housekeeper_rx: Receiver<()>,

    // Small mutexes, each held only to push, remove or copy.
    /// Connects in flight, for the watchdog.
    pub attempts: Mutex<Vec<ConnectAttempt>>,
    /// Liveness checks in flight (at most one), for the watchdog, which
    /// cancels them at their deadline as it does connects.
    pub probes: Mutex<Vec<ConnectAttempt>>,
    /// What is known about reaching the database (last error, outage).
    pub health: Mutex<Health>,
    /// The pool's threads (adders, housekeeper, watchdog), for
    /// `close_and_join`; finished ones are dropped as new ones start.
    threads: Mutex<Vec<std::thread::JoinHandle<()>>>,
}

impl<C: Connector> Shared<C> {
    /// Keeps a pool thread's handle for `join_threads`.
    pub(crate) fn keep_thread(&self, handle: std::thread::JoinHandle<()>) {
        let mut threads = lock(&self.threads);
        threads.retain(|h| !h.is_finished());
        threads.push(handle);
    }

    /// Joins the pool's threads (after close, they are on their way out),
    /// giving up on those still running at `deadline` (left detached; they
    /// exit on their own). True when every one was joined. The calling
    /// thread, if it is one of them, is skipped (and counts as not joined).
    pub(crate) fn join_threads(&self, deadline: Instant) -> bool {
        let mut all = true;
        // Taken in rounds: a thread started while the pool closed (an extra
        // adder) adds its handle after the first take.
        loop {
            let handles = std::mem::take(&mut *lock(&self.threads));
            if handles.is_empty() {
                return all;
            }
            for h in handles {
                all &= crate::sync::join_until(h, deadline);
            }
        }
    }

    pub fn emit(&self, e: Event) {
        emit(&*self.listener, e)
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(SeqCst)
    }

    /// Asks an adder for one more connection, if that stays within max_size.
    pub fn request_create(&self) -> bool {
        let total = self.total.load(SeqCst);
        let pending = self.pending.load(SeqCst);
        if total + pending >= self.max_size.load(SeqCst) || self.is_closed() {
            return false;
        }
        self.pending.fetch_add(1, SeqCst);
        if self.create_tx.try_send(()).is_err() {
            self.pending.fetch_sub(1, SeqCst);
            return false;
        }
        true
    }

    /// Whether a connect is still wanted: someone waits for it, or the pool is
    /// below min_idle. Checked before every attempt, so requests queued during
    /// an outage do not all complete when it ends (no refill storm).
    pub fn create_needed(&self) -> bool {
        if self.is_closed() || self.suspended.load(SeqCst) {
            return false;
        }
        let total = self.total.load(SeqCst);
        if total + self.connecting.load(SeqCst) >= self.max_size.load(SeqCst) {
            return false;
        }
        // Connects stuck past the grace do not count as on their way.
        let coming = self.fresh_connecting();
        let waiting = self.bag.waiting();
        let idle = self.bag.idle_count();
        waiting > idle + coming || total + coming < self.min_idle.load(SeqCst)
    }

    /// Raises `over_limit` if the pool holds more than `max_size` now.
    fn note_over_limit(&self) {
        let _g = lock(&self.resize_lock);
        if self.total.load(SeqCst) > self.max_size.load(SeqCst) {
            self.over_limit.store(true, SeqCst);
        }
    }

    /// Closes an entry the caller owns if the pool holds more than
    /// `max_size` (counted as `Evicted`); else hands it back (and clears
    /// `over_limit` once the pool is within the limit). The decision and
    /// the decrement of `total` are made under `resize_lock`, so that
    /// concurrent callers close no more than the surplus; the connection is
    /// dropped after the lock.
    fn close_if_surplus(&self, entry: Entry) -> Option<Entry> {
        let g = lock(&self.resize_lock);
        let max = self.max_size.load(SeqCst);
        if self.total.load(SeqCst) <= max {
            self.over_limit.store(false, SeqCst);
            return Some(entry);
        }
        let id = self.bag.slot(&entry).id.load(Relaxed);
        let conn = self.bag.remove(entry);
        self.counters.closed(CloseReason::Evicted);
        if self.total.fetch_sub(1, SeqCst) - 1 <= max {
            self.over_limit.store(false, SeqCst);
        }
        drop(g);
        drop(conn);
        self.emit(Event::Closed {
            id,
            reason: CloseReason::Evicted,
        });
        None
    }

    /// The housekeeper's part of a shrink: closes idle connections, highest
    /// slots first (borrowers prefer the lowest), while the pool holds more
    /// than `max_size`.
    pub(crate) fn shed_idle_surplus(&self) {
        if self.total.load(SeqCst) > self.max_size.load(SeqCst) {
            self.note_over_limit();
        }
        for idx in (0..self.bag.slots.len()).rev() {
            if !self.over_limit.load(SeqCst) || self.is_closed() {
                return;
            }
            if self.bag.slots[idx].state.load(Relaxed) != IDLE {
                continue;
            }
            if let Some(entry) = self.bag.reserve(idx) {
                if let Some(entry) = self.close_if_surplus(entry) {
                    self.make_idle(entry);
                    return;
                }
            }
        }
    }

    /// Connects running that started less than `ADDER_GRACE` ago.
    pub fn fresh_connecting(&self) -> usize {
        lock(&self.attempts)
            .iter()
            .filter(|a| a.is_running() && a.started().elapsed() < adder::ADDER_GRACE)
            .count()
    }

    /// Puts a new connection into the pool (to a waiter first).
    pub fn add(&self, conn: C::Conn, took: Duration) -> bool {
        let Some(entry) = self.bag.reserve_empty() else {
            // Every slot full (can only happen through races on the
            // counters): the connection is surplus.
            drop(conn);
            return false;
        };
        let now = coarse_now_ns();
        let slot = self.bag.slot(&entry);
        let id = self.next_id.fetch_add(1, Relaxed) + 1;
        slot.id.store(id, Relaxed);
        slot.generation.store(self.generation.load(SeqCst), Relaxed);
        let retire = match self.cfg.max_lifetime {
            // Up to 2.5 % earlier, so connections made together retire apart.
            Some(l) => {
                let l = l.as_nanos() as u64;
                now + l - jitter(l / 40)
            }
            None => u64::MAX,
        };
        slot.retire_at.store(retire, Relaxed);
        let ka = self
            .cfg
            .keepalive_interval
            .map(|k| {
                let k = k.as_nanos() as u64;
                k - jitter(k / 10)
            })
            .unwrap_or(0);
        slot.keepalive_ns.store(ka, Relaxed);
        slot.returned_at.store(now, Relaxed);
        slot.alive_at.store(now, Relaxed);
        let sock = self.connector.socket_fd(&conn).and_then(|fd| {
            let inode = crate::sys::DupFd::new(fd)?.inode()?;
            Some((fd as u64) << 32 | (inode & 0xffff_ffff))
        });
        slot.socket.store(sock.unwrap_or(u64::MAX), Relaxed);
        let key = self.connector.liveness_key(&conn);
        slot.liveness_key.store(key.unwrap_or(u64::MAX), Relaxed);
        slot.made_ns.store(now, Relaxed);
        *lock(&slot.verdict) = None;
        self.bag.put(&entry, conn);
        self.total.fetch_add(1, SeqCst);
        // `max_size` may have been lowered while this connected.
        self.note_over_limit();
        self.counters.created.fetch_add(1, Relaxed);
        self.counters.connect_time.record(took);
        self.emit(Event::Connected {
            id,
            endpoint: self.connector.endpoint(),
            took,
        });
        if self.is_closed() {
            self.close_entry(entry, CloseReason::PoolClosed);
        } else if self.over_limit.load(SeqCst) {
            if let Some(entry) = self.close_if_surplus(entry) {
                self.make_idle(entry);
            }
        } else {
            self.make_idle(entry);
        }
        true
    }

    /// The owner (a borrower or a pool thread) makes an entry idle, or hands
    /// it to a waiter. If the pool closed meanwhile, close's sweep of idle
    /// entries may have passed this one already: take it back and close it.
    /// Exactly one of the two gets it (see `Bag::is_closed`, and the
    /// `close_races_return` loom model).
    pub(crate) fn make_idle(&self, entry: Entry) {
        let idx = self.bag.release(entry);
        if self.bag.is_closed() {
            if let Some(e) = self.bag.reserve(idx) {
                self.close_entry(e, CloseReason::PoolClosed);
            }
        }
    }

    /// Closes the connection of an owned entry and frees the slot.
    pub fn close_entry(&self, entry: Entry, reason: CloseReason) {
        let id = self.bag.slot(&entry).id.load(Relaxed);
        let conn = self.bag.remove(entry);
        // Counted before `total` drops, so that whoever sees the lower total
        // also sees why (stats never show a connection gone for no reason).
        self.counters.closed(reason);
        self.total.fetch_sub(1, SeqCst);
        // Dropping a connection may write a goodbye packet: bounded by the
        // connection's own socket timeouts, and outside any lock.
        drop(conn);
        self.emit(Event::Closed { id, reason });
        if !self.is_closed() && self.create_needed() {
            self.request_create();
        }
    }

    /// Why an entry should retire now, if it should (checked on borrow, return
    /// and by the housekeeper).
    fn retire_reason(&self, idx: usize, now: u64) -> Option<CloseReason> {
        let slot = &self.bag.slots[idx];
        if slot.generation.load(Relaxed) < self.generation.load(Relaxed) {
            Some(CloseReason::Evicted)
        } else if now >= slot.retire_at.load(Relaxed) {
            Some(CloseReason::MaxLifetime)
        } else {
            None
        }
    }

    /// Turns an entry the caller now owns as IN_USE into a guard, validating
    /// it first if it was idle past the bypass window. None: it was retired or
    /// broken (and is gone).
    ///
    /// `now` is the caller's coarse clock reading; `budget` bounds validation
    /// (the time the caller has left).
    #[inline]
    fn checkout(self: &Arc<Self>, entry: Entry, now: u64, budget: Duration) -> Option<Lease<C>> {
        if let Some(reason) = self.retire_reason(entry.idx(), now) {
            self.close_entry(entry, reason);
            return None;
        }
        let slot = self.bag.slot(&entry);
        let Some(mut conn) = self.bag.take(&entry) else {
            self.bag.violations.fetch_add(1, Relaxed);
            self.close_entry(entry, CloseReason::Broken);
            return None;
        };
        // `>=`: with a zero window every borrow validates, even within one
        // tick of the coarse clock.
        if now.saturating_sub(slot.alive_at.load(Relaxed)) >= self.bypass_ns {
            let bound = self
                .cfg
                .validation_timeout
                .min(budget)
                .max(Duration::from_millis(1));
            if let Err(error) = self.validate(&mut conn, bound) {
                self.counters.validation_failures.fetch_add(1, Relaxed);
                let id = slot.id.load(Relaxed);
                self.bag.put(&entry, conn);
                self.close_entry(entry, CloseReason::Broken);
                self.emit(Event::ValidationFailed { id, error });
                return None;
            }
            slot.alive_at.store(now, Relaxed);
        }
        slot.borrowed_at.store(now, Relaxed);
        // Owner-only, as `borrows`; 0 when timings are off, so that a return
        // never times a borrow it did not see begin.
        let timed = if self.timings.load(Relaxed) {
            precise_now_ns()
        } else {
            0
        };
        slot.used_since_ns.store(timed, Relaxed);
        slot.signals.start_borrow(self.default_bound_ms);
        // Owner-only counter: a plain load and store, no locked instruction.
        slot.borrows.store(slot.borrows.load(Relaxed) + 1, Relaxed);
        if self.leak_ns != 0 {
            slot.leak_reported.store(false, Relaxed);
            let t = std::thread::current();
            // The stack is captured now, resolved into text only if the
            // borrow is reported (HikariCP's way: an exception at borrow).
            // A binding gives its host language's stack instead.
            let stack = if HOST_STACKS.with(Cell::get) || cfg!(miri) {
                bag::Stack::None
            } else {
                bag::Stack::Rust(Box::new(std::backtrace::Backtrace::force_capture()))
            };
            slot.set_borrower(Some(bag::Borrower {
                thread: t
                    .name()
                    .map(str::to_owned)
                    .or_else(crate::sys::os_thread_name)
                    .unwrap_or_else(|| format!("{:?}", t.id())),
                stack,
            }));
        }
        LAST_ENTRY.with(|l| l.set((self.key(), entry.idx())));
        Some(Lease {
            held: Some((entry, conn)),
            flags: 0,
            shared: self.clone(),
        })
    }

    /// This pool's identity for [`LAST_ENTRY`]: its shared state's address.
    #[inline]
    fn key(&self) -> usize {
        self as *const Self as *const () as usize
    }

    /// The entry this thread borrowed last from this pool (`usize::MAX`, no
    /// entry, if none or if its last borrow was from another pool).
    #[inline]
    fn last_entry(&self) -> usize {
        let (key, idx) = LAST_ENTRY.with(Cell::get);
        if key == self.key() {
            idx
        } else {
            usize::MAX
        }
    }

    /// A borrower gives its connection back.
    fn give_back(&self, entry: Entry, mut conn: C::Conn, flags: u8) {
        let since = self.bag.slot(&entry).used_since_ns.load(Relaxed);
        if since != 0 {
            let used = precise_now_ns().saturating_sub(since);
            self.counters.use_time.record_us(used / 1000);
        }
        let keep = if self.is_closed() {
            Err(CloseReason::PoolClosed)
        } else if flags & FLAG_BROKEN != 0
            || self.bag.slot(&entry).signals.cut.load(Relaxed)
            || (flags & (FLAG_TOUCHED | FLAG_UNSETTLED) != 0 && self.is_broken(&conn))
        {
            Err(CloseReason::Broken)
        } else {
            let touched = flags & FLAG_TOUCHED != 0;
            match driver_call(
                ErrorKind::Io,
                || format!("recycling a connection to {}", self.connector.endpoint()),
                || self.connector.recycle(&mut conn, touched),
            ) {
                Ok(done) => match done {
                    Recycled::AsIs => Ok(()),
                    Recycled::RolledBack => {
                        self.counters.rollbacks_on_return.fetch_add(1, Relaxed);
                        Ok(())
                    }
                    Recycled::Reset => {
                        self.counters.resets_on_return.fetch_add(1, Relaxed);
                        Ok(())
                    }
                    Recycled::Retire => Err(CloseReason::MaxLifetime),
                },
                Err(e) => {
                    log::warn!(target: "staunch", "discarding a returned connection: {e}");
                    Err(CloseReason::Broken)
                }
            }
        };
        self.bag.put(&entry, conn);
        let slot = self.bag.slot(&entry);
        let now = coarse_now_ns();
        let keep = keep.and_then(|()| match self.retire_reason(entry.idx(), now) {
            Some(r) => Err(r),
            None => Ok(()),
        });
        match keep {
            Ok(()) => {
                slot.returned_at.store(now, Relaxed);
                slot.alive_at.store(now, Relaxed);
                slot.borrowed_at.store(NOT_BORROWED, Relaxed);
                // The hot path's one look at the size limit.
                if self.over_limit.load(Relaxed) {
                    if let Some(entry) = self.close_if_surplus(entry) {
                        self.make_idle(entry);
                    }
                } else {
                    self.make_idle(entry);
                }
            }
            Err(reason) => self.close_entry(entry, reason),
        }
    }

    /// The connector's validate, a panic in it counting as a failure.
    pub(crate) fn validate(&self, conn: &mut C::Conn, bound: Duration) -> Result<()> {
        driver_call(
            ErrorKind::Io,
            || format!("validating a connection to {}", self.connector.endpoint()),
            || self.connector.validate(conn, bound),
        )
    }

    /// The connector's is_broken, a panic in it meaning broken.
    fn is_broken(&self, conn: &C::Conn) -> bool {
        driver_call(ErrorKind::Io, String::new, || {
            Ok(self.connector.is_broken(conn))
        })
        .unwrap_or(true)
    }

    /// Records a failed connect that started at `started`. A connect that
    /// started before the last success (cut off at its deadline after the
    /// database came back) is counted but does not reopen an outage.
    pub fn record_connect_failure(&self, err: &Error, permanent: bool, started: Instant) -> u32 {
        self.counters.connect_failures.fetch_add(1, Relaxed);
        let mut h = lock(&self.health);
        if h.last_success.is_some_and(|ok| ok > started) {
            return h.consecutive_failures;
        }
        let now = Instant::now();
        h.last_error = Some((now, err.clone()));
        h.consecutive_failures += 1;
        h.outage_since.get_or_insert(now);
        if permanent {
            h.permanent = Some((now, err.clone()));
        }
        h.consecutive_failures
    }

    pub fn record_connect_success(&self) -> Option<(u32, Duration)> {
        let mut h = lock(&self.health);
        h.last_success = Some(Instant::now());
        h.permanent = None;
        let failures = std::mem::take(&mut h.consecutive_failures);
        h.outage_since
            .take()
            .map(|since| (failures, since.elapsed()))
    }

    fn timeout_error(&self, waited: Duration) -> Error {
        let s = self.snapshot_gauges();
        let state = format!(
            "total={}, active={}, idle={}, waiting={}, pending creates={}",
            s.total, s.active, s.idle, s.waiting, s.pending_creates
        );
        let h = lock(&self.health);
        let failing = match (&h.last_error, h.last_success) {
            (Some((at, _)), Some(ok)) => *at > ok,
            (Some(_), None) => true,
            _ => false,
        };
        let last = h.last_error.as_ref().map(|(_, e)| e.clone());
        drop(h);
        let waited = fmt_duration(waited);
        let max_size = self.max_size.load(SeqCst);
        if self.suspended.load(SeqCst) {
            Error::new(
                ErrorKind::PoolExhausted,
                format!(
                    "timed out after {waited} waiting for a connection: the pool is suspended until resumed ({state})"
                ),
            )
        } else if failing && s.total < max_size {
            let msg = format!(
                "timed out after {waited} waiting for a connection: the database is unreachable ({state}); last connect error"
            );
            Error::with_source(ErrorKind::Unreachable, msg, last.expect("failing"))
        } else if s.total == 0 && self.connecting.load(SeqCst) > 0 {
            let inflight = self.describe_inflight();
            Error::new(
                ErrorKind::Unreachable,
                format!(
                    "timed out after {waited} waiting for a connection: the database is unreachable ({state}): {inflight}"
                ),
            )
        } else {
            Error::new(
                ErrorKind::PoolExhausted,
                format!(
                    "timed out after {waited} waiting for a connection: the pool is exhausted, every connection is in use ({state}, max_size={max_size})"
                ),
            )
        }
    }

    fn describe_inflight(&self) -> String {
        let oldest = lock(&self.attempts).iter().map(|a| a.started()).min();
        match oldest {
            Some(t) => format!(
                "a connect to {} has been running for {} without completing (connect_timeout={})",
                self.connector.endpoint(),
                fmt_duration(t.elapsed()),
                fmt_duration(self.cfg.connect_timeout)
            ),
            None => "no connect has completed yet".to_string(),
        }
    }

    fn snapshot_gauges(&self) -> Stats {
        let mut s = Stats::default();
        for slot in self.bag.slots.iter() {
            match slot.state.load(Relaxed) {
                IN_USE => s.active += 1,
                RESERVED => s.reserved += 1,
                IDLE => s.idle += 1,
                _ => {}
            }
        }
        s.total = self.total.load(SeqCst);
        s.waiting = self.bag.waiting();
        s.pending_creates = self.pending.load(SeqCst);
        s.connecting = self.connecting.load(SeqCst);
        s.adder_threads = self.adders.load(SeqCst);
        s.max_size = self.max_size.load(SeqCst);
        s
    }

    pub fn close(&self) {
        if self.closed.swap(true, SeqCst) {
            return;
        }
        {
            let _g = lock(&self.suspend_lock);
            self.suspended.store(false, SeqCst);
            self.suspend_cv.notify_all();
        }
        self.bag.close(&Error::closed());
        lock(&self.shutdown_tx).take();
        // Cut off connects in flight so adder threads exit now.
        let inflight: Vec<ConnectAttempt> = lock(&self.attempts).clone();
        for a in inflight {
            a.cancel();
        }
        self.close_unborrowed();
        self.emit(Event::PoolClosed);
    }

    /// Closes every connection not borrowed: the idle ones here, and those a
    /// pool thread holds (a keepalive check, a new connection being added, a
    /// hand-back re-checking `closed`) by that thread, which sees the pool
    /// closed when it lets go; this waits for those, at most
    /// `CLOSE_WAIT_SLACK` past `validation_timeout` (the longest a pool thread
    /// holds an entry). So when `close` returns, only borrowed connections
    /// are still open, and the events of the others have been emitted.
    fn close_unborrowed(&self) {
        let deadline = Instant::now() + self.cfg.validation_timeout + CLOSE_WAIT_SLACK;
        crate::sync::poll_until(deadline, || {
            let mut held = false;
            for idx in 0..self.bag.slots.len() {
                match self.bag.slots[idx].state.load(SeqCst) {
                    IDLE => match self.bag.reserve(idx) {
                        Some(e) => self.close_entry(e, CloseReason::PoolClosed),
                        None => held = true,
                    },
                    RESERVED => held = true,
                    _ => {}
                }
            }
            !held
        });
    }
}

/// Runs a connector call with a panic in it turned into an error of `kind`
/// about `what`. A driver bug that what a server sends can trigger (the
/// `mysql` crate's greeting parser overflows on some auth data lengths) must
/// cost one connect attempt or one connection: never a slot left owned by
/// nobody, a request left pending, or a panic out of `get()` or across the C
/// boundary. No-op cost when nothing panics.
pub(crate) fn driver_call<T>(
    kind: ErrorKind,
    what: impl FnOnce() -> String,
    f: impl FnOnce() -> Result<T>,
) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|panic| {
        let msg = panic_message(&*panic);
        Err(Error::new(
            kind,
            format!(
                "{} failed: the driver panicked ({msg}), most likely on something the server sent",
                what()
            ),
        ))
    })
}

/// `borrowed_at` between borrows: the leak check skips the entry (it may be
/// IN_USE already, handed to a waiter that has not stamped it yet).
pub(crate) const NOT_BORROWED: u64 = u64::MAX;

/// A `Lease`'s flags (see its methods).
const FLAG_TOUCHED: u8 = 1;
const FLAG_BROKEN: u8 = 2;
/// The borrower read an answer itself (the connector cannot tell whether it
/// read all of it): the return path asks the connector's `is_broken`.
const FLAG_UNSETTLED: u8 = 4;

/// A small random amount in [0, max], for jitter (xorshift; not for secrets).
pub(crate) fn jitter(max: u64) -> u64 {
    use std::cell::Cell;
    thread_local!(static STATE: Cell<u64> = const { Cell::new(0) });
    if max == 0 {
        return 0;
    }
    STATE.with(|s| {
        let mut x = s.get();
        if x == 0 {
            x = crate::sys::precise_now_ns() ^ (s as *const _ as u64) | 1;
        }
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s.set(x);
        x % (max + 1)
    })
}

impl<C: Connector> CorePool<C> {
    /// Starts a pool over any connector, with the default listener (the
    /// `log` crate). Spawns the adder, watchdog and housekeeper threads. With
    /// `initialization_fail_timeout` set, makes the first connection before
    /// returning, and fails if that does not succeed.
    pub fn with_connector(cfg: PoolConfig, connector: C) -> Result<CorePool<C>> {
        Self::with_listener(cfg, connector, Arc::new(LogListener))
    }

    /// As [`with_connector`](CorePool::with_connector), with an event listener.
    pub fn with_listener(
        cfg: PoolConfig,
        connector: C,
        listener: Arc<dyn EventListener>,
    ) -> Result<CorePool<C>> {
        Self::with_ids(cfg, connector, listener, Arc::default())
    }

    /// As [`with_listener`](CorePool::with_listener), numbering its
    /// connections from `ids`, which other pools may share: the host pools
    /// of one topology share one, so that a number names one connection
    /// across all hosts (events' `connection_id`, `staunch_conn_id`).
    pub(crate) fn with_ids(
        cfg: PoolConfig,
        connector: C,
        listener: Arc<dyn EventListener>,
        ids: Arc<AtomicU64>,
    ) -> Result<CorePool<C>> {
        cfg.validate()?;
        let cap = cfg.max_size_cap();
        let (create_tx, create_rx) = crossbeam_channel::bounded(cap * 2 + 16);
        let (shutdown_tx, shutdown_rx) = crossbeam_channel::bounded(0);
        let (wake_watchdog, wake_watchdog_rx) = crossbeam_channel::bounded(1);
        let (wake_housekeeper, wake_housekeeper_rx) = crossbeam_channel::bounded(1);
        let shared = Arc::new(Shared {
            bag: Bag::new(cap),
            max_size: AtomicUsize::new(cfg.max_size),
            min_idle: AtomicUsize::new(cfg.min_idle),
            over_limit: AtomicBool::new(false),
            resize_lock: Mutex::new(()),
            bypass_ns: cfg.alive_bypass_window.as_nanos() as u64,
            default_bound_ms: connector
                .statement_bound()
                .map_or(0, |d| (d.as_millis() as u64).max(1)),
            statement_bounds: AtomicBool::new(connector.statement_bound().is_some()),
            timings: AtomicBool::new(cfg.timings),
            leak_ns: cfg
                .leak_detection_threshold
                .map_or(0, |d| d.as_nanos() as u64),
            cfg,
            connector,
            listener,
            counters: Counters::new(),
            total: AtomicUsize::new(0),
            pending: AtomicUsize::new(0),
            connecting: AtomicUsize::new(0),
            adders: AtomicUsize::new(0),
            adders_started: AtomicUsize::new(0),
            generation: AtomicU64::new(0),
            closed: AtomicBool::new(false),
            suspended: AtomicBool::new(false),
            suspend_lock: Mutex::new(()),
            suspend_cv: Condvar::new(),
            next_id: ids,
            create_tx,
            create_rx,
            shutdown_tx: Mutex::new(Some(shutdown_tx)),
            shutdown_rx,
            attempts: Mutex::new(Vec::new()),
            probes: Mutex::new(Vec::new()),
            wake_watchdog,
            wake_watchdog_rx,
            wake_housekeeper,
            wake_housekeeper_rx,
            health: Mutex::new(Health::default()),
            threads: Mutex::new(Vec::new()),
        });
        let started = (0..shared.cfg.adder_threads)
            .try_for_each(|_| adder::spawn(&shared))
            .and_then(|()| housekeeper::spawn(&shared))
            .and_then(|()| adder::spawn_watchdog(&shared))
            .and_then(|()| liveness::spawn(&shared));
        if let Err(e) = started {
            shared.close();
            return Err(Error::new(
                ErrorKind::Internal,
                format!("cannot start a pool thread: {e}"),
            ));
        }
        let pool = CorePool {
            _owner: Arc::new(Owner(shared.clone())),
            shared,
        };
        if let Some(t) = pool.shared.cfg.initialization_fail_timeout {
            // A zero timeout still allows one whole connect.
            let t = t.max(pool.shared.cfg.connect_timeout + Duration::from_millis(100));
            match pool.get_timeout(t) {
                Ok(c) => drop(c),
                Err(e) => {
                    pool.close();
                    return Err(Error::with_source(
                        e.kind(),
                        "the pool could not make its first connection (initialization_fail_timeout)",
                        e,
                    ));
                }
            }
        }
        pool.shared.housekeeper_kick();
        Ok(pool)
    }

    /// Borrows a connection, waiting at most `connection_timeout`.
    pub fn get(&self) -> Result<Lease<C>> {
        self.get_timeout(self.shared.cfg.connection_timeout)
    }

    /// Borrows a connection if one is idle now; never waits and never connects.
    pub fn try_get(&self) -> Result<Option<Lease<C>>> {
        let s = &self.shared;
        if s.is_closed() {
            return Err(Error::closed());
        }
        if s.suspended.load(Relaxed) {
            return Ok(None);
        }
        while let Some(e) = s.bag.claim_idle_near(s.last_entry(), false) {
            if let Some(c) = s.checkout(e, coarse_now_ns(), s.cfg.validation_timeout) {
                return Ok(Some(c));
            }
        }
        Ok(None)
    }

    /// Borrows a connection, waiting at most `timeout`. Fails with
    /// `PoolExhausted` or `Unreachable` (the message says which and why),
    /// `ConnectRejected` at once on a permanent connect error, or `Closed`.
    pub fn get_timeout(&self, timeout: Duration) -> Result<Lease<C>> {
        self.get_inner(timeout, None)
    }

    /// As [`get_timeout`](CorePool::get_timeout), and `cancel` (fired from
    /// any thread) makes a waiting call return `Cancelled` promptly, leaving
    /// the waiter queue and the pool's counts as if it had never waited. An
    /// already cancelled token fails at once.
    pub fn get_cancellable(&self, timeout: Duration, cancel: &CancelToken) -> Result<Lease<C>> {
        self.get_inner(timeout, Some(cancel))
    }

    #[inline]
    fn get_inner(&self, timeout: Duration, cancel: Option<&CancelToken>) -> Result<Lease<C>> {
        let s = &self.shared;
        if s.is_closed() {
            return Err(Error::closed());
        }
        if cancel.is_some_and(CancelToken::is_cancelled) {
            return Err(self.cancelled(Duration::ZERO));
        }
        // The one clock read of the hot path; the whole get is bounded from it.
        let start = coarse_now_ns();
        if !s.suspended.load(Relaxed) {
            if let Some(c) = self.get_idle(start, timeout) {
                return Ok(c);
            }
        }
        self.get_slow(start, timeout, cancel)
    }

    /// The hot path of every borrow: an idle connection (validated when it
    /// sat idle long), unless callers are queued; a broken or retired one
    /// is closed and the next tried, the time it took charged to the bound.
    #[inline]
    fn get_idle(&self, start: u64, timeout: Duration) -> Option<Lease<C>> {
        let s = &self.shared;
        let mut budget = timeout;
        while let Some(e) = s.bag.claim_idle_near(s.last_entry(), false) {
            if let Some(c) = s.checkout(e, start, budget) {
                return Some(c);
            }
            let spent = Duration::from_nanos(coarse_now_ns().saturating_sub(start));
            budget = timeout.saturating_sub(spent);
            if budget.is_zero() {
                break;
            }
        }
        None
    }

    #[cold]
    fn get_slow(
        &self,
        start_coarse: u64,
        timeout: Duration,
        cancel: Option<&CancelToken>,
    ) -> Result<Lease<C>> {
        let s = &self.shared;
        // Time already spent on the fast path (validations that failed).
        let spent = Duration::from_nanos(coarse_now_ns().saturating_sub(start_coarse));
        let start = Instant::now() - spent.min(timeout);
        let deadline = start + timeout;
        if s.suspended.load(SeqCst) {
            let mut g = lock(&s.suspend_lock);
            while s.suspended.load(SeqCst) {
                let now = Instant::now();
                if now >= deadline {
                    drop(g);
                    return Err(self.shared.timed_out(start));
                }
                if cancel.is_some_and(CancelToken::is_cancelled) {
                    drop(g);
                    return Err(self.cancelled(start.elapsed()));
                }
                // A cancel token cannot wake this condvar: look again
                // every SUSPEND_CANCEL_POLL (suspending is rare).
                let pause = (deadline - now).min(SUSPEND_CANCEL_POLL);
                g = s
                    .suspend_cv
                    .wait_timeout(g, pause)
                    .map(|(g, _)| g)
                    .unwrap_or_else(|p| p.into_inner().0);
            }
        }
        if s.is_closed() {
            return Err(Error::closed());
        }
        if let Some(e) = self.shared.recent_permanent_failure() {
            return Err(e);
        }
        // The borrow a host's event loop waits for (`get_start`), with this
        // thread blocked on it in place of the loop: one queue turn,
        // hand-off, validation, bound and count for both.
        let mut p = PendingGet {
            shared: self.shared.clone(),
            waiter: bag::Waiter::new(None),
            start,
            deadline,
            queued: false,
        };
        if let Some(t) = cancel {
            if !t.register(&p.waiter) {
                return Err(self.cancelled(start.elapsed()));
            }
        }
        let got = p.wait_here(cancel.is_some());
        if let Some(t) = cancel {
            t.unregister(&p.waiter);
        }
        match got {
            Some(r) => r,
            None => {
                // Given up: the drop leaves the queue (a connection handed
                // over as the cancel came goes back) and counts it.
                drop(p);
                Err(self.cancelled_error(start.elapsed()))
            }
        }
    }

    /// Starts a borrow that waits without a thread of its own, for a host
    /// whose threads must not block (Go's netpoller, asyncio, a JVM's
    /// virtual threads): `Ready` when a connection was idle (the fast path
    /// of [`get_timeout`](CorePool::get_timeout), validation included), or
    /// `Waiting`: a [`PendingGet`] in the queue, in turn with the blocked
    /// callers, whose descriptor turns readable when something was handed to
    /// it; then [`PendingGet::finish`]. Fails as `get_timeout` does. While the
    /// pool is suspended it waits here, in this thread, as `get_timeout` does
    /// (suspending is an operator's rare act).
    pub fn get_start(&self, timeout: Duration) -> Result<Started<C>> {
        self.get_start_signalling(timeout, None)
    }

    /// [`get_start`](CorePool::get_start) whose waiting borrow signals
    /// `signal` (a new eventfd when None): a caller that may start again
    /// elsewhere (a read falling back to the writer) keeps one descriptor.
    pub(crate) fn get_start_signalling(
        &self,
        timeout: Duration,
        signal: Option<std::sync::Arc<crate::sys::EventFd>>,
    ) -> Result<Started<C>> {
        let s = &self.shared;
        if s.is_closed() {
            return Err(Error::closed());
        }
        let start_coarse = coarse_now_ns();
        if s.suspended.load(Relaxed) {
            return self
                .get_slow(start_coarse, timeout, None)
                .map(Started::Ready);
        }
        if let Some(c) = self.get_idle(start_coarse, timeout) {
            return Ok(Started::Ready(c));
        }
        let spent = Duration::from_nanos(coarse_now_ns().saturating_sub(start_coarse));
        let start = Instant::now() - spent.min(timeout);
        if let Some(e) = self.shared.recent_permanent_failure() {
            return Err(e);
        }
        let signal = match signal {
            Some(s) => s,
            None => std::sync::Arc::new(crate::sys::EventFd::new()?),
        };
        let mut p = PendingGet {
            shared: self.shared.clone(),
            waiter: bag::Waiter::new(Some(signal)),
            start,
            deadline: start + timeout,
            queued: false,
        };
        p.enqueue()?;
        // Served as it queued (a connection came back meanwhile): no wait.
        match p.finish() {
            Some(got) => got.map(Started::Ready),
            None => Ok(Started::Waiting(p)),
        }
    }

    fn cancelled(&self, waited: Duration) -> Error {
        self.shared
            .counters
            .acquires_cancelled
            .fetch_add(1, Relaxed);
        self.cancelled_error(waited)
    }

    /// The error of a cancelled wait (counted by whoever gave it up).
    fn cancelled_error(&self, waited: Duration) -> Error {
        Error::new(
            ErrorKind::Cancelled,
            format!(
                "the wait for a connection to {} was cancelled after {}",
                self.shared.connector.endpoint(),
                fmt_duration(waited)
            ),
        )
    }

    /// Times borrows (`Histograms::use_time`) and statements
    /// (`statement_time`) from now on (`true`), or no longer. Off at start:
    /// each costs two precise clock reads (about 40 ns here).
    pub fn keep_timings(&self, on: bool) {
        self.shared.timings.store(on, Relaxed);
    }

    /// The pool's histograms (cumulative since start).
    pub fn histograms(&self) -> Histograms {
        let s = &self.shared;
        let c = &s.counters;
        let acquired: u64 = s.bag.slots.iter().map(|x| x.borrows.load(Relaxed)).sum();
        let waited = c.acquires_waited.load(Relaxed);
        Histograms {
            // A hand-out that did not wait is not recorded (the hot path
            // keeps no shared counter): it counts as under 1 µs.
            acquire_wait: c.acquire_wait.buckets(acquired.saturating_sub(waited), 0),
            connect_time: c.connect_time.buckets(0, 0),
            use_time: c.use_time.buckets(0, 0),
            statement_time: c.statement_time.buckets(0, 0),
        }
    }

    /// A snapshot of gauges and counters.
    pub fn stats(&self) -> Stats {
        let s = &self.shared;
        let mut st = s.snapshot_gauges();
        let c = &s.counters;
        st.acquired = s.bag.slots.iter().map(|x| x.borrows.load(Relaxed)).sum();
        c.fill(&mut st);
        let fast = st.acquired.saturating_sub(st.acquires_waited);
        st.acquire_latency = c.acquire_wait.snapshot(fast);
        st.connect_latency = c.connect_time.snapshot(0);
        st.violations = s.bag.violations.load(Relaxed) as u64;
        st
    }

    /// The last connect error, if connects are failing now.
    pub fn last_connect_error(&self) -> Option<Error> {
        let h = lock(&self.shared.health);
        match (&h.last_error, h.last_success) {
            (Some((at, e)), Some(ok)) if *at > ok => Some(e.clone()),
            (Some((_, e)), None) => Some(e.clone()),
            _ => None,
        }
    }

    /// Retires every current connection: idle ones now (by the housekeeper),
    /// borrowed ones when they are returned. New connections replace them on
    /// demand.
    pub fn soft_evict(&self) {
        self.shared.generation.fetch_add(1, SeqCst);
        self.shared.housekeeper_kick();
    }

    /// Stops handing out connections: `get` waits (up to its timeout) until
    /// [`resume`](CorePool::resume). Borrowed connections are unaffected.
    pub fn suspend(&self) {
        let _g = lock(&self.shared.suspend_lock);
        self.shared.suspended.store(true, SeqCst);
    }

    /// Most connections the pool holds now: `max_size` as opened, or as
    /// last set by [`set_max_size`](CorePool::set_max_size).
    pub fn max_size(&self) -> usize {
        self.shared.max_size.load(SeqCst)
    }

    /// Fewest connections the housekeeper keeps now (`min_idle`, or as last
    /// set by [`set_min_idle`](CorePool::set_min_idle)).
    pub fn min_idle(&self) -> usize {
        self.shared.min_idle.load(SeqCst)
    }

    /// The largest `max_size` this pool can be given (`max_size_cap`, fixed
    /// at open).
    pub fn max_size_cap(&self) -> usize {
        self.shared.bag.slots.len()
    }

    /// Changes `max_size` while the pool runs, between 1 and
    /// [`max_size_cap`](CorePool::max_size_cap), and not below the current
    /// `min_idle` (else a `Config` error naming the knob, and nothing
    /// changes). Lowering it takes no borrowed connection away: connections
    /// above the new limit are closed (counted as evicted) as they come back,
    /// idle ones by the housekeeper now. Raising it lets callers waiting for
    /// a connection have new ones made at once. Never blocks on I/O.
    pub fn set_max_size(&self, n: usize) -> Result<()> {
        let s = &self.shared;
        let g = lock(&s.resize_lock);
        let cap = s.bag.slots.len();
        if n == 0 || n > cap {
            return Err(Error::config(format!(
                "max_size must be between 1 and max_size_cap ({cap}), got {n}"
            )));
        }
        let min_idle = s.min_idle.load(SeqCst);
        if n < min_idle {
            return Err(Error::config(format!(
                "max_size ({n}) must not be below min_idle ({min_idle}); lower min_idle first"
            )));
        }
        let old = s.max_size.swap(n, SeqCst);
        if n < old && s.total.load(SeqCst) > n {
            s.over_limit.store(true, SeqCst);
        }
        drop(g);
        if n > old {
            // Room for more: one create per waiter not yet provided for.
            let want = s.bag.waiting().saturating_sub(s.pending.load(SeqCst));
            for _ in 0..want {
                if !s.request_create() {
                    break;
                }
            }
        }
        s.housekeeper_kick();
        Ok(())
    }

    /// Changes `min_idle` while the pool runs, between 0 and the current
    /// `max_size` (else a `Config` error naming the knob, and nothing
    /// changes). The housekeeper fills up to it at once; connections above a
    /// lowered one retire after `idle_timeout` as usual. Never blocks on I/O.
    pub fn set_min_idle(&self, n: usize) -> Result<()> {
        let s = &self.shared;
        let g = lock(&s.resize_lock);
        let max = s.max_size.load(SeqCst);
        if n > max {
            return Err(Error::config(format!(
                "min_idle ({n}) must not exceed max_size ({max})"
            )));
        }
        s.min_idle.store(n, SeqCst);
        drop(g);
        s.housekeeper_kick();
        Ok(())
    }

    /// Whether [`suspend`](CorePool::suspend) is in force.
    pub fn is_suspended(&self) -> bool {
        self.shared.suspended.load(SeqCst)
    }

    /// Ends a [`suspend`](CorePool::suspend).
    pub fn resume(&self) {
        let s = &self.shared;
        {
            let _g = lock(&s.suspend_lock);
            s.suspended.store(false, SeqCst);
            s.suspend_cv.notify_all();
        }
        if s.bag.waiting() > 0 {
            s.bag.serve_waiters();
        }
    }

    /// Closes the pool: waiters fail with `Closed`, connects in flight are cut
    /// off, idle connections are closed now, borrowed ones when returned.
    /// A connection a pool thread holds at that moment (a keepalive check, a
    /// new connection being added) is closed by that thread, and `close`
    /// waits for it, at most `validation_timeout` + 1 s; so when it returns,
    /// only borrowed connections are open. Idempotent; does not wait for the
    /// background threads to exit, which they do promptly on their own.
    pub fn close(&self) {
        self.shared.close();
    }

    /// [`close`](CorePool::close), then waits until the pool's threads have
    /// exited, at most until `timeout` has passed since the call (then gives
    /// up on the rest, which exit on their own). Returns whether every
    /// thread exited in time. For a caller that must know nothing of the
    /// pool runs any more (before unloading the library, say); called from a
    /// pool thread (an event listener), it cannot join that thread.
    pub fn close_and_join(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        self.close();
        self.join_threads(deadline)
    }

    pub(crate) fn join_threads(&self, deadline: Instant) -> bool {
        self.shared.join_threads(deadline)
    }

    /// Whether [`close`](CorePool::close) was called.
    pub fn is_closed(&self) -> bool {
        self.shared.is_closed()
    }

    /// Fails every caller waiting in `get` with `err` (the topology layer
    /// uses it when this host stops being the writer).
    pub(crate) fn fail_waiters(&self, err: &Error) {
        self.shared.bag.fail_waiters(err);
    }

    /// Shuts down the sockets of every borrowed connection, so that a query
    /// blocked on a server confirmed dead returns an error now instead of
    /// waiting forever (the borrower still owns the connection object; it is
    /// closed when returned). Returns how many were cut.
    pub(crate) fn abort_borrowed(&self) -> usize {
        let s = &self.shared;
        (0..s.bag.slots.len())
            .filter(|&idx| {
                s.with_borrowed_socket(idx, |sock| {
                    crate::sys::shutdown(sock.fd());
                })
                .is_some()
            })
            .count()
    }

    /// The pool knobs as opened (`max_size` and `min_idle` may have been
    /// changed since: see [`max_size`](CorePool::max_size) and
    /// [`min_idle`](CorePool::min_idle)).
    pub fn config(&self) -> &PoolConfig {
        &self.shared.cfg
    }

    /// The connector.
    pub fn connector(&self) -> &C {
        &self.shared.connector
    }
}

impl<C: Connector> fmt::Debug for CorePool<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.shared.snapshot_gauges();
        f.debug_struct("CorePool")
            .field("endpoint", &self.shared.connector.endpoint())
            .field("total", &s.total)
            .field("active", &s.active)
            .field("idle", &s.idle)
            .field("waiting", &s.waiting)
            .field("closed", &self.is_closed())
            .finish()
    }
}

impl<C: Connector> Shared<C> {
    /// A borrow's bound passed: counted, told to the listener.
    fn timed_out(&self, start: Instant) -> Error {
        if self.is_closed() {
            return Error::closed();
        }
        self.counters.acquire_timeouts.fetch_add(1, Relaxed);
        let e = self.timeout_error(start.elapsed());
        self.emit(Event::AcquireTimeout { error: e.clone() });
        e
    }

    /// A permanent connect error seen in the last second, while the pool has
    /// no connection: reported at once instead of connecting again.
    fn recent_permanent_failure(&self) -> Option<Error> {
        if self.total.load(SeqCst) > 0 {
            return None;
        }
        let h = lock(&self.health);
        let (at, e) = h.permanent.as_ref()?;
        (at.elapsed() < PERMANENT_HOLDOFF).then(|| e.clone())
    }

    pub fn housekeeper_kick(&self) {
        let _ = self.wake_housekeeper.try_send(());
    }

    /// Runs `f` on the socket of slot `idx` if the slot is borrowed and its
    /// socket is known. The dup keeps the socket from being closed and its
    /// number reused while `f` runs; the inode says it is still the same one.
    fn with_borrowed_socket<T>(
        &self,
        idx: usize,
        f: impl FnOnce(&crate::sys::DupFd) -> T,
    ) -> Option<T> {
        let slot = &self.bag.slots[idx];
        if slot.state.load(Relaxed) != IN_USE {
            return None;
        }
        let sock = slot.socket.load(Relaxed);
        if sock == u64::MAX {
            return None;
        }
        let (fd, inode) = ((sock >> 32) as i32, sock & 0xffff_ffff);
        let dup = crate::sys::DupFd::new(fd)?;
        (dup.inode().map(|i| i & 0xffff_ffff) == Some(inode) && slot.state.load(Relaxed) == IN_USE)
            .then(|| f(&dup))
    }

    /// Whether a thread is blocked reading the socket of borrowed slot
    /// `idx` now, where `first` (given the socket) says to look: looked up
    /// in /proc at most every 250 ms per slot.
    fn blocked_reading(
        &self,
        idx: usize,
        now: u64,
        first: impl FnOnce(&crate::sys::DupFd) -> bool,
    ) -> bool {
        let sig = &self.bag.slots[idx].signals;
        if now.saturating_sub(sig.looked_ns.load(Relaxed)) < RAW_LOOK_EVERY_NS {
            return false;
        }
        self.with_borrowed_socket(idx, |sock| {
            first(sock) && {
                sig.looked_ns.store(now, Relaxed);
                // The borrower reads the socket's own fd, not our dup.
                let fd = (self.bag.slots[idx].socket.load(Relaxed) >> 32) as i32;
                crate::sys::thread_reading(fd)
            }
        })
        .unwrap_or(false)
    }

    /// The watchdog's statement check: shuts down the socket of a borrowed
    /// connection whose statement has run past the borrow's bound, so that
    /// its caller gets an error now and no later statement can read its
    /// late answer.
    /// - A statement run through the borrower's own methods is bounded from
    ///   the moment it began (the borrower says so, `Marks::note_statement`);
    ///   one whose answer the borrower reads itself, through a result whose
    ///   end the pool does not see (`Marks::note_answer_open`), is cut past
    ///   its bound only while a thread is blocked reading the socket.
    /// - On the raw connection the pool does not see statements begin; it
    ///   sees the socket: what was last sent (the statement) is older than
    ///   the bound, and a thread is blocked reading the socket now (looked
    ///   up in /proc at most every 250 ms). A borrower thinking between
    ///   statements reads nothing, and is never cut.
    pub(crate) fn cut_overdue_statements(&self) {
        let now = coarse_now_ns();
        for idx in 0..self.bag.slots.len() {
            let sig = &self.bag.slots[idx].signals;
            let bound = sig.bound_ms.load(Relaxed);
            if bound == 0 || sig.cut.load(Relaxed) {
                continue;
            }
            let started = sig.started_ns.load(Relaxed);
            let overdue = if started != 0 {
                now.saturating_sub(started) > bound * 1_000_000
                    && (!sig.answer_open.load(Relaxed) || self.blocked_reading(idx, now, |_| true))
            } else if sig.raw.load(Relaxed) {
                self.blocked_reading(idx, now, |sock| {
                    sock.tcp_quiet_ms()
                        .is_some_and(|q| u64::from(q.since_sent_ms) > bound)
                })
            } else {
                false
            };
            if !overdue
                || sig
                    .cut
                    .compare_exchange(false, true, Relaxed, Relaxed)
                    .is_err()
            {
                continue;
            }
            self.with_borrowed_socket(idx, |sock| crate::sys::shutdown(sock.fd()));
            self.counters.statements_cut.fetch_add(1, Relaxed);
            log::warn!(
                target: "staunch",
                "connection {} to {}: a statement ran past its bound ({}); its socket was shut down",
                self.bag.slots[idx].id.load(Relaxed),
                self.connector.endpoint(),
                fmt_duration(Duration::from_millis(bound))
            );
        }
    }
}

/// How often, at most, the watchdog looks in /proc for a thread blocked
/// reading a raw borrowed connection's socket.
const RAW_LOOK_EVERY_NS: u64 = 250_000_000;

/// How often the watchdog checks borrowed sockets against their statement
/// bounds (when any may have one).
pub(crate) const STATEMENT_TICK_MS: u64 = 50;

/// A borrowed connection of a [`CorePool`]. Derefs to the connector's
/// connection type; dropping it returns the connection to the pool, through
/// the connector's [`recycle`](Connector::recycle).
///
/// The flags say what the pool must do on return; only the methods below set
/// them, so the rules of the return path stay in this module.
/// What [`CorePool::get_start`] gives: a connection now, or a borrow
/// waiting in the queue.
pub enum Started<C: Connector> {
    /// A connection was idle: the borrow is done.
    Ready(Lease<C>),
    /// In the queue: wait for [`PendingGet::fd`], then
    /// [`finish`](PendingGet::finish).
    Waiting(PendingGet<C>),
}

/// A borrow waiting in the pool's queue, in turn with the callers blocked
/// in `get`, without a thread of its own. Its descriptor ([`fd`]) turns
/// readable when a connection (or a failure: the pool closed, a permanent
/// connect error) was handed to it; [`finish`] then completes it. The host
/// bounds its own wait by [`remaining`] (no descriptor turns readable at the
/// deadline), and `finish` after it reports the timeout exactly as `get`
/// does. Dropping it before it finished leaves the queue as a cancelled
/// `get` does: a connection handed over meanwhile goes back to the pool.
///
/// [`fd`]: PendingGet::fd
/// [`finish`]: PendingGet::finish
/// [`remaining`]: PendingGet::remaining
pub struct PendingGet<C: Connector> {
    /// Not the pool itself: a borrow under way does not keep it open (its
    /// close fails the borrow, as it fails a blocked `get`).
    shared: Arc<Shared<C>>,
    waiter: crate::sync::model::Arc<bag::Waiter>,
    start: Instant,
    deadline: Instant,
    /// In the queue, or given something not taken yet.
    queued: bool,
}

impl<C: Connector> PendingGet<C> {
    fn enqueue(&mut self) -> Result<()> {
        let s = &self.shared;
        let served = s.bag.enqueue(&self.waiter)?;
        self.queued = true;
        if !served && s.pending.load(SeqCst) < s.bag.waiting() {
            s.request_create();
        }
        Ok(())
    }

    /// The thread's wait of a blocking `get`: queues, then blocks on the
    /// waiter until [`finish`](PendingGet::finish) completes the borrow
    /// (a connection, or the error that ended it, the timeout included).
    /// None: the cancel token fired first (the caller drops `self`, which
    /// gives the borrow up).
    fn wait_here(&mut self, cancellable: bool) -> Option<Result<Lease<C>>> {
        if let Err(e) = self.enqueue() {
            return Some(Err(e));
        }
        loop {
            if let Some(done) = self.finish() {
                return Some(done);
            }
            if self.waiter.block(Some(self.deadline), cancellable) == bag::Woken::Cancelled {
                return None;
            }
        }
    }

    /// The descriptor to wait on (readable when [`finish`](PendingGet::finish)
    /// has something); valid while `self` lives. -1 for the borrow of a
    /// blocking `get`, which has none (and is never given out).
    pub fn fd(&self) -> std::os::fd::RawFd {
        self.waiter.signal_fd().unwrap_or(-1)
    }

    /// Time left until the borrow's bound (zero once it passed).
    pub fn remaining(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// Completes the borrow if it can be now; never waits (beyond a
    /// returning connection's validation, bounded by what is left of the
    /// bound, as in `get`). None: not yet (nothing handed over and the bound
    /// not passed): wait for the descriptor again. Some: done, either way;
    /// calling it again then fails.
    pub fn finish(&mut self) -> Option<Result<Lease<C>>> {
        if !self.queued {
            return Some(Err(Error::new(
                ErrorKind::InvalidArgument,
                "this borrow already finished (its connection or its error was given)",
            )));
        }
        let s = &self.shared;
        let handoff = match self.waiter.try_take() {
            Some(h) => h,
            None if Instant::now() < self.deadline => return None,
            None => match s.bag.leave(&self.waiter) {
                Some(h) => {
                    self.waiter.clear_signal();
                    h
                }
                None => {
                    self.queued = false;
                    return Some(Err(s.timed_out(self.start)));
                }
            },
        };
        self.queued = false;
        let e = match handoff {
            bag::Handoff::Fail(e) => return Some(Err(e)),
            bag::Handoff::Entry(e) => e,
        };
        let left = self.deadline.saturating_duration_since(Instant::now());
        if let Some(c) = s.checkout(e, coarse_now_ns(), left) {
            let waited = self.start.elapsed();
            s.counters.acquires_waited.fetch_add(1, Relaxed);
            s.counters
                .acquire_wait_us
                .fetch_add(waited.as_micros() as u64, Relaxed);
            s.counters.acquire_wait.record(waited);
            return Some(Ok(c));
        }
        // It failed its validation (closed, and a new one asked for): back
        // in the queue, as `get` goes round its loop.
        if s.is_closed() {
            return Some(Err(Error::closed()));
        }
        if let Some(e) = s.recent_permanent_failure() {
            return Some(Err(e));
        }
        if Instant::now() >= self.deadline {
            return Some(Err(s.timed_out(self.start)));
        }
        match self.enqueue() {
            Ok(()) => None,
            Err(e) => Some(Err(e)),
        }
    }
}

impl<C: Connector> Drop for PendingGet<C> {
    fn drop(&mut self) {
        if !self.queued {
            return;
        }
        let s = &self.shared;
        let given = match self.waiter.try_take() {
            Some(h) => Some(h),
            None => s.bag.leave(&self.waiter),
        };
        // No signal outlives the borrow on a host's descriptor it reuses.
        self.waiter.clear_signal();
        if let Some(bag::Handoff::Entry(e)) = given {
            // Handed over as the host gave up: back it goes.
            s.make_idle(e);
        }
        s.counters.acquires_cancelled.fetch_add(1, Relaxed);
    }
}

impl<C: Connector> fmt::Debug for Started<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Started::Ready(_) => f.write_str("Started::Ready"),
            Started::Waiting(p) => f.debug_tuple("Started::Waiting").field(p).finish(),
        }
    }
}

impl<C: Connector> fmt::Debug for PendingGet<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PendingGet")
            .field("fd", &self.fd())
            .field("remaining", &self.remaining())
            .field("queued", &self.queued)
            .finish()
    }
}

pub struct Lease<C: Connector> {
    /// The entry this lease owns and its connection; taken on drop.
    held: Option<(Entry, C::Conn)>,
    flags: u8,
    shared: Arc<Shared<C>>,
}

impl<C: Connector> Lease<C> {
    /// The pool-wide number of this connection (as in events).
    pub fn id(&self) -> u64 {
        self.shared.bag.slot(&self.held().0).id.load(Relaxed)
    }

    /// Marks the connection as unusable: it is closed instead of returned.
    pub fn discard(mut self) {
        self.marks().mark_broken();
    }

    /// The connection and its marks, borrowed apart, without noting raw
    /// access (for layers above the pool that track what they run).
    pub(crate) fn split(&mut self) -> (&mut C::Conn, Marks<'_>) {
        let (conn, marks, _) = self.parts();
        (conn, marks)
    }

    /// As [`split`](Lease::split), with the pool's connector too.
    pub(crate) fn parts(&mut self) -> (&mut C::Conn, Marks<'_>, &C) {
        let (entry, conn) = self.held.as_mut().expect("held until drop");
        let slot = &self.shared.bag.slots[entry.idx()];
        (
            conn,
            Marks {
                flags: &mut self.flags,
                signals: &slot.signals,
                verdict: &slot.verdict,
                timings: &self.shared.timings,
                statement_time: &self.shared.counters.statement_time,
            },
            &self.shared.connector,
        )
    }

    /// The pool's connector.
    pub fn connector(&self) -> &C {
        &self.shared.connector
    }

    fn held(&self) -> &(Entry, C::Conn) {
        self.held.as_ref().expect("held until drop")
    }

    /// What the return path must do, as [`Marks`].
    pub(crate) fn marks(&mut self) -> Marks<'_> {
        self.split().1
    }

    /// Sets this borrow's statement bound (see
    /// [`Connector::statement_bound`], the default): the longest the
    /// connection may wait for the answer to what was last sent on it before
    /// the pool's watchdog shuts its socket down. None: no bound.
    pub fn set_statement_bound(&mut self, bound: Option<Duration>) {
        let ms = bound.map_or(0, |d| (d.as_millis() as u64).max(1));
        let signals = &self.shared.bag.slot(&self.held().0).signals;
        signals.bound_ms.store(ms, Relaxed);
        if ms != 0 && !self.shared.statement_bounds.swap(true, Relaxed) {
            let _ = self.shared.wake_watchdog.try_send(());
        }
    }

    /// When the liveness check cut this borrow's statement off (its server
    /// stopped answering): what it saw. None otherwise.
    pub fn unresponsive(&self) -> Option<String> {
        let slot = self.shared.bag.slot(&self.held().0);
        if !slot.signals.cut.load(Relaxed) {
            return None;
        }
        lock(&slot.verdict).clone()
    }

    /// Whether leak reports want the borrower's stack
    /// (`leak_detection_threshold` is set).
    pub fn wants_borrower_stack(&self) -> bool {
        self.shared.leak_ns != 0
    }

    /// The borrower's stack in its host language, for a leak report of
    /// this borrow (kept only while `leak_detection_threshold` is set).
    pub(crate) fn set_borrower_stack(&self, text: String) {
        if self.shared.leak_ns != 0 {
            self.shared
                .bag
                .slot(&self.held().0)
                .set_borrower_stack(text);
        }
    }

    /// Whether the watchdog cut this borrow's connection off (a statement
    /// waited past its bound): the socket is shut down, the connection is
    /// closed on return.
    pub fn was_cut(&self) -> bool {
        self.shared
            .bag
            .slot(&self.held().0)
            .signals
            .cut
            .load(Relaxed)
    }
}

/// What a borrower tells the return path about a [`Lease`]'s connection.
/// Only these methods set a lease's flags, so the rules of the return path
/// stay in this module.
#[derive(Debug)]
pub(crate) struct Marks<'a> {
    flags: &'a mut u8,
    /// What the borrower and the watchdog tell each other.
    signals: &'a bag::Signals,
    /// Why the liveness check cut the statement off, if it did.
    verdict: &'a Mutex<Option<String>>,
    /// Whether statements are timed, and where their times go.
    timings: &'a AtomicBool,
    statement_time: &'a stats::Histogram,
}

impl Marks<'_> {
    /// The connection is out of step or unusable: close it on return.
    pub fn mark_broken(&mut self) {
        *self.flags |= FLAG_BROKEN;
    }

    /// Whether the watchdog cut this borrow's connection off.
    pub fn was_cut(&self) -> bool {
        self.signals.cut.load(Relaxed)
    }

    /// When the liveness check cut this borrow's statement off (the server
    /// stopped answering): what it saw. None otherwise.
    pub fn unresponsive(&self) -> Option<String> {
        if !self.was_cut() {
            return None;
        }
        lock(self.verdict).clone()
    }

    /// A statement begins (`true`) or ends: the watchdog bounds it from its
    /// beginning. One clock read and a store.
    pub fn note_statement(&mut self, running: bool) {
        self.signals.note_statement(running);
    }

    /// A statement is sent: the watchdog bounds it from now (as
    /// `note_statement(true)`), and with timings on its time runs until
    /// [`statement_ends`](Marks::statement_ends).
    pub fn statement_begins(&mut self) {
        self.signals.note_statement(true);
        let t = if self.timings.load(Relaxed) {
            precise_now_ns()
        } else {
            0
        };
        self.signals.timed_ns.store(t, Relaxed);
    }

    /// The statement's answer was read to its end (or the statement
    /// failed): no longer bounded, and its time is counted.
    pub fn statement_ends(&mut self) {
        self.signals.note_statement(false);
        let since = self.signals.timed_ns.load(Relaxed);
        if since != 0 {
            self.signals.timed_ns.store(0, Relaxed);
            let took = precise_now_ns().saturating_sub(since);
            self.statement_time.record_us(took / 1000);
        }
    }

    /// The borrower reads the running statement's answer itself (`true`),
    /// through a result whose end the pool does not see, or no longer does:
    /// see `Signals::answer_open`.
    pub fn note_answer_open(&mut self, open: bool) {
        self.signals.answer_open.store(open, Relaxed);
    }

    /// The borrower did something whose effect on the session the pool
    /// cannot see: `recycle` is told (`touched`).
    pub fn note_touched(&mut self) {
        *self.flags |= FLAG_TOUCHED;
        self.signals.raw.store(true, Relaxed);
    }

    /// The borrower reads an answer itself (`settled` false), or a layer
    /// above read one to its end (`settled` true). An unsettled connection
    /// is checked with the connector's `is_broken` on return.
    pub fn note_settled(&mut self, settled: bool) {
        if settled {
            *self.flags &= !FLAG_UNSETTLED;
        } else {
            *self.flags |= FLAG_UNSETTLED;
        }
    }
}

impl<C: Connector> Deref for Lease<C> {
    type Target = C::Conn;
    fn deref(&self) -> &C::Conn {
        &self.held().1
    }
}

impl<C: Connector> DerefMut for Lease<C> {
    /// Raw mutable access: the pool can no longer know the session state, so
    /// the return path checks it (for MySQL: a rollback if one may be needed).
    fn deref_mut(&mut self) -> &mut C::Conn {
        let (conn, mut marks) = self.split();
        marks.note_touched();
        conn
    }
}

impl<C: Connector> Drop for Lease<C> {
    fn drop(&mut self) {
        if let Some((entry, conn)) = self.held.take() {
            self.shared.give_back(entry, conn, self.flags);
        }
    }
}

impl<C: Connector> fmt::Debug for Lease<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Lease").field("id", &self.id()).finish()
    }
}

#[cfg(all(test, not(feature = "loom-model")))]
mod tests;
