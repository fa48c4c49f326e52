//! The registry of pool entries: who owns which connection, and hand-off to
//! waiters.
//!
//! # Algorithm
//!
//! The pool has a fixed array of `max_size_cap` slots (the live `max_size`,
//! which may move below it, is the pool's business: see `mod.rs`, "Size at
//! run time"; the bag never looks at it). A slot's `state` says who
//! owns it: `EMPTY` (no connection), `IDLE` (in the idle set), `IN_USE` (a
//! borrower holds it), `RESERVED` (a pool thread holds it: the housekeeper for
//! keepalive or retirement, an adder filling it). Every transition is a
//! compare-and-swap from the state the actor expects; whoever loses a race
//! skips the entry. That rule is what prevents incident C (a heartbeat and a
//! business thread on one connection at once).
//!
//! The idle set is a bitmap (one bit per slot, 63 per word). Taking an idle
//! entry is clearing its bit with a CAS on the word, then the slot's own CAS
//! IDLE → IN_USE (or IDLE → RESERVED); the first winner owns the entry, both
//! CASes are checked, and a failed second CAS would be a broken invariant that
//! is counted (`violations`) rather than ignored. A borrower first tries the
//! entry its thread used last (the pool keeps that hint per thread), then
//! takes the lowest set bit, so load concentrates on the first slots and the
//! rest go idle long enough to be retired by `idle_timeout` (the effect
//! HikariCP and `database/sql` get from LIFO order), while a thread that
//! borrows again keeps its connection, its cache lines and its server thread
//! (what HikariCP's thread-local list in `ConcurrentBag` is for).
//!
//! Waiters queue FIFO under `waiters` (the only lock here). The top bit of
//! every bitmap word is a "waiters present" flag. A thread that makes an entry
//! idle sets its bit with one `fetch_or`, whose result also says whether
//! waiters are queued; if so it takes the lock and hands idle entries straight
//! to the queue's head, in order. A waiter, holding the lock, queues itself and
//! sets the flag in every word with `fetch_or` before its last look at the
//! bitmap. Both sides are read-modify-writes on the same word, so one of them
//! comes first in that word's modification order: either the releaser sees the
//! flag or the waiter sees the bit. No lost wake-up, without relying on SeqCst
//! (which loom, rightly, did not let the first version get away with). The
//! flag is cleared, under the lock, when the queue empties.
//!
//! No I/O and no user code runs while `waiters` is held.
//!
//! The loom model in this module's tests checks these transitions, including
//! the `OwnedCell` accesses, for every interleaving of small scenarios.

use std::collections::VecDeque;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release, SeqCst};

/// The "waiters present" flag in each bitmap word.
const WAITERS: u64 = 1 << 63;
/// The slot bits of a word.
const SLOT_BITS: u64 = !WAITERS;
const PER_WORD: usize = 63;

fn bit_of(idx: usize) -> (usize, u64) {
    (idx / PER_WORD, 1u64 << (idx % PER_WORD))
}
use std::time::Instant;

#[cfg(all(test, feature = "loom-model"))]
use super::cancel::CancelToken;
use crate::error::Error;
use crate::sync::model::{
    lock, Arc, AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Condvar, Mutex, OwnedCell,
};
use crate::sys::{coarse_now_ns, EventFd};

pub(crate) const EMPTY: u8 = 0;
pub(crate) const IDLE: u8 = 1;
pub(crate) const IN_USE: u8 = 2;
pub(crate) const RESERVED: u8 = 3;

/// One entry. The connection sits in `conn` while the entry is idle or
/// reserved, and moves into the borrower's guard while it is in use.
///
/// Aligned to 128 bytes (two cache lines, as crossbeam's `CachePadded` on
/// x86-64, whose prefetcher pulls lines in pairs) so that two entries never
/// share a line: borrowers of neighbouring entries on different cores would
/// otherwise take each other's lines away on every checkout and return.
#[repr(align(128))]
pub(crate) struct Slot<T> {
    /// EMPTY / IDLE / IN_USE / RESERVED; changed only by CAS.
    pub state: AtomicU8,
    /// The connection; accessed only by the entry's current owner.
    pub conn: OwnedCell<Option<T>>,
    /// Connection number (unique in the pool), for events and logs.
    pub id: AtomicU64,
    /// Pool generation at creation; older than the pool's means soft-evicted.
    pub generation: AtomicU64,
    /// Coarse-clock ns when the connection must retire (max lifetime minus jitter).
    pub retire_at: AtomicU64,
    /// Coarse-clock ns when it last became idle (for idle_timeout).
    pub returned_at: AtomicU64,
    /// Coarse-clock ns of the last proof it was alive (use, validation).
    pub alive_at: AtomicU64,
    /// This connection's keepalive interval, jitter applied, in ns (0 = off).
    pub keepalive_ns: AtomicU64,
    /// Coarse-clock ns when the current borrower took it (u64::MAX between
    /// borrows).
    pub borrowed_at: AtomicU64,
    /// Whether the current borrow was already reported as a leak.
    pub leak_reported: AtomicBool,
    /// Borrows of this slot since the pool started (updated by the owner only).
    pub borrows: AtomicU64,
    /// Precise-clock ns when the current borrow began, 0 when it is not
    /// timed (timings off); the owner's alone.
    pub used_since_ns: AtomicU64,
    /// The connection's socket: fd << 32 | low 32 bits of its inode, or
    /// u64::MAX when unknown. Lets the pool cut off a borrowed connection.
    pub socket: AtomicU64,
    /// What the borrower and the watchdog tell each other about the current
    /// borrow's statements.
    pub signals: Signals,
    /// The connector's liveness key of the connection (for MySQL its
    /// connection id), u64::MAX when none; set when it is made.
    pub liveness_key: AtomicU64,
    /// Coarse-clock ns when the connection was made.
    pub made_ns: AtomicU64,
    /// Why the liveness check cut the current borrow's statement off (set
    /// before `signals.cut`, by the liveness thread; read by the borrower
    /// once it sees `cut`). Held only to copy the text. A plain std mutex
    /// even under loom: no entry's ownership depends on it.
    pub verdict: std::sync::Mutex<Option<String>>,
    /// Who borrowed, recorded only with leak detection on.
    borrower: Mutex<Option<Borrower>>,
}

/// Who borrowed an entry, for leak reports: the thread, and where it
/// borrowed when that is known.
#[derive(Debug)]
pub(crate) struct Borrower {
    pub thread: String,
    pub stack: Stack,
}

/// Where a borrow was made.
#[derive(Debug)]
pub(crate) enum Stack {
    None,
    /// Captured by the pool at the borrow (the Rust face); resolved into
    /// text only if the borrow is reported.
    Rust(Box<std::backtrace::Backtrace>),
    /// Given by the host language's binding, as text (its own stack).
    Host(String),
}

impl Borrower {
    /// Whether describing it resolves a Rust backtrace (reads debug info:
    /// from milliseconds to a second for a large binary's first time).
    pub fn slow_to_describe(&self) -> bool {
        matches!(self.stack, Stack::Rust(_))
    }

    /// The thread's name, then the stack after a newline when one is known.
    pub fn describe(&self) -> String {
        match &self.stack {
            Stack::None => self.thread.clone(),
            Stack::Rust(b) => format!("{}\n{b}", self.thread),
            Stack::Host(s) => format!("{}\n{s}", self.thread),
        }
    }
}

impl<T> Slot<T> {
    fn new() -> Self {
        Slot {
            state: AtomicU8::new(EMPTY),
            conn: OwnedCell::new(None),
            id: AtomicU64::new(0),
            generation: AtomicU64::new(0),
            retire_at: AtomicU64::new(u64::MAX),
            returned_at: AtomicU64::new(0),
            alive_at: AtomicU64::new(0),
            keepalive_ns: AtomicU64::new(0),
            borrowed_at: AtomicU64::new(u64::MAX),
            leak_reported: AtomicBool::new(false),
            borrows: AtomicU64::new(0),
            used_since_ns: AtomicU64::new(0),
            socket: AtomicU64::new(u64::MAX),
            signals: Signals::default(),
            liveness_key: AtomicU64::new(u64::MAX),
            made_ns: AtomicU64::new(0),
            verdict: std::sync::Mutex::new(None),
            borrower: Mutex::new(None),
        }
    }

    /// Records (or reads) who borrowed, for leak reports: the thread's
    /// name, then its stack after a newline when known.
    pub fn set_borrower(&self, who: Option<Borrower>) {
        *lock(&self.borrower) = who;
    }
    /// Takes who borrowed, for the one report of a borrow (formatted
    /// outside the lock: resolving a Rust backtrace reads debug info).
    pub fn take_borrower(&self) -> Option<Borrower> {
        lock(&self.borrower).take()
    }
    /// The host language's stack of the current borrow, in place of the
    /// pool's own (a binding's borrows).
    pub fn set_borrower_stack(&self, text: String) {
        if let Some(b) = lock(&self.borrower).as_mut() {
            b.stack = Stack::Host(text);
        }
    }
}

/// What the borrower of an entry and the watchdog tell each other. All
/// `Relaxed`: the watchdog acting on values one tick old is fine, and `cut`
/// is decided by one CAS.
#[derive(Debug, Default)]
pub(crate) struct Signals {
    /// The borrow's statement bound in ms (0: none).
    pub bound_ms: AtomicU64,
    /// Coarse-clock ns when the statement running through the borrower's
    /// own methods began (0: none runs).
    pub started_ns: AtomicU64,
    /// Precise-clock ns when the running statement was sent, with timings
    /// on (0: none, or not timed); the borrower's alone.
    pub timed_ns: AtomicU64,
    /// The borrower has the raw connection: the watchdog cannot know when
    /// its statements begin, and looks at the socket instead.
    pub raw: AtomicBool,
    /// Coarse-clock ns of the watchdog's last look for a thread blocked
    /// reading the socket (rate-limits that look).
    pub looked_ns: AtomicU64,
    /// Set once by the watchdog (CAS false -> true, before it shuts the
    /// socket down) when it cut the borrow's statement off.
    pub cut: AtomicBool,
    /// The borrower reads the statement's answer itself, through a result
    /// whose end the pool does not see (the `mysql` crate's): past its
    /// bound the statement is cut only while a thread is blocked reading
    /// the socket, not while the borrower takes its time or holds the
    /// connection after the answer ended.
    pub answer_open: AtomicBool,
}

impl Signals {
    /// A statement (or a wait for its answer) begins (`true`: bounded from
    /// now) or ends. One clock read and a store.
    pub fn note_statement(&self, running: bool) {
        let now = if running { coarse_now_ns().max(1) } else { 0 };
        self.started_ns.store(now, Relaxed);
    }

    /// A new borrow with statement bound `bound_ms`.
    pub fn start_borrow(&self, bound_ms: u64) {
        self.bound_ms.store(bound_ms, Relaxed);
        self.started_ns.store(0, Relaxed);
        self.timed_ns.store(0, Relaxed);
        self.raw.store(false, Relaxed);
        self.cut.store(false, Relaxed);
        self.answer_open.store(false, Relaxed);
    }
}

/// Proof that the holder owns one entry: only the bag makes one, when an
/// ownership-deciding read-modify-write (the bitmap bit, or the slot's CAS)
/// succeeds, and [`release`](Bag::release) and [`remove`](Bag::remove)
/// consume it. Neither `Clone` nor `Copy`, so there is at most one per entry
/// at a time: what makes the unsynchronized [`take`](Bag::take) and
/// [`put`](Bag::put) sound.
#[derive(Debug)]
#[must_use = "an entry that is neither released nor removed stays owned forever"]
pub(crate) struct Entry {
    idx: usize,
    /// IN_USE (a borrower) or RESERVED (a pool thread).
    state: u8,
}

impl Entry {
    /// The slot's index.
    pub fn idx(&self) -> usize {
        self.idx
    }
}

/// What a waiter receives.
pub(crate) enum Handoff {
    /// An entry, already IN_USE and owned by the waiter.
    Entry(Entry),
    /// A failure to report to the waiter (a permanent connect error, close).
    Fail(Error),
}

pub(crate) struct Waiter {
    given: Mutex<Option<Handoff>>,
    cv: Condvar,
    /// Set (then the condvar notified, under `given`) by a cancel token.
    cancelled: AtomicBool,
    /// Threads in `cv.wait` (changed only under `given`): a hand-off or a
    /// cancel notifies the condvar only when one sleeps there. A waiter a
    /// host's event loop finishes never does, and a notify is a system call
    /// each time (std's futex condvar does not count its sleepers): one on
    /// every asyncio, goroutine or virtual-thread borrow that queued.
    sleepers: AtomicUsize,
    /// A waiter without a thread of its own (a borrow started and finished
    /// apart, see `CorePool::get_start`): signalled after each hand-off, so
    /// the host's event loop knows to finish it.
    signal: Option<std::sync::Arc<EventFd>>,
}

/// How a waiter's wait ended.
enum WaitEnd {
    Given(Handoff),
    TimedOut,
    Cancelled,
}

/// Why [`Waiter::block`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Woken {
    /// Something was handed over (not taken yet: `try_take` takes it).
    Given,
    /// The deadline passed.
    TimedOut,
    /// The cancel token fired (and nothing was handed over).
    Cancelled,
}

impl Waiter {
    /// A waiter that blocks its thread (`signal` None), or one a host's
    /// event loop waits for through `signal`.
    pub(crate) fn new(signal: Option<std::sync::Arc<EventFd>>) -> Arc<Waiter> {
        Arc::new(Waiter {
            given: Mutex::new(None),
            cv: Condvar::new(),
            cancelled: AtomicBool::new(false),
            sleepers: AtomicUsize::new(0),
            signal,
        })
    }

    fn give(&self, h: Handoff) {
        let mut g = lock(&self.given);
        *g = Some(h);
        // Under `given`: once a waiter that gives up has taken the hand-off
        // (or waited for it in `leave`), nothing signals its descriptor
        // any more, which may then be closed or reused (a host's own).
        if let Some(s) = &self.signal {
            s.signal();
        }
        // Read under `given`: a waiter counts itself in before it sleeps,
        // under the same lock, so one that is about to sleep is seen.
        let sleeping = self.sleepers.load(Relaxed) != 0;
        drop(g);
        if sleeping {
            self.cv.notify_one();
        }
    }

    /// Wakes the waiter as cancelled (its cancel token fired).
    pub(crate) fn wake(&self) {
        self.cancelled.store(true, SeqCst);
        let _g = lock(&self.given);
        if self.sleepers.load(Relaxed) != 0 {
            self.cv.notify_one();
        }
    }

    /// The descriptor of a waiter made with a signal.
    pub(crate) fn signal_fd(&self) -> Option<std::os::fd::RawFd> {
        self.signal.as_ref().map(|s| s.raw())
    }

    /// Clears the signal (a hand-off taken by `leave`, not `try_take`).
    pub(crate) fn clear_signal(&self) {
        if let Some(s) = &self.signal {
            s.clear();
        }
    }

    /// What was handed over, if anything yet; never blocks. A waiter is
    /// handed one thing, so the signal is cleared only with it (a look
    /// that finds nothing leaves a signal, at worst a spurious wake-up,
    /// and costs no system call).
    pub(crate) fn try_take(&self) -> Option<Handoff> {
        let h = lock(&self.given).take();
        if h.is_some() {
            self.clear_signal();
        }
        h
    }

    /// Blocks the calling thread until something is given (left for
    /// [`try_take`](Waiter::try_take)), `deadline` passes (None: no bound)
    /// or, with `cancellable`, it is cancelled: the wait of a borrow that
    /// has a thread to block (`CorePool::get`); a borrow without one waits
    /// for the signal in its host's event loop instead. A hand-off wins
    /// over a cancel that came with it.
    pub(crate) fn block(&self, deadline: Option<Instant>, cancellable: bool) -> Woken {
        let mut g = lock(&self.given);
        loop {
            if g.is_some() {
                return Woken::Given;
            }
            if cancellable && self.cancelled.load(SeqCst) {
                return Woken::Cancelled;
            }
            let timeout = match deadline {
                None => None,
                Some(d) => {
                    let now = Instant::now();
                    if now >= d {
                        return Woken::TimedOut;
                    }
                    Some(d - now)
                }
            };
            // Counted in and out under `given` (see `give`).
            self.sleepers.fetch_add(1, Relaxed);
            g = match timeout {
                None => self.cv.wait(g).unwrap_or_else(|p| p.into_inner()),
                Some(t) => self
                    .cv
                    .wait_timeout(g, t)
                    .map(|(g, _)| g)
                    .unwrap_or_else(|p| p.into_inner().0),
            };
            self.sleepers.fetch_sub(1, Relaxed);
        }
    }

    /// [`block`](Waiter::block), then takes what was given.
    fn wait(&self, deadline: Option<Instant>, cancellable: bool) -> WaitEnd {
        match self.block(deadline, cancellable) {
            Woken::Given => match self.try_take() {
                Some(h) => WaitEnd::Given(h),
                None => unreachable!("only its own waiter takes a hand-off"),
            },
            Woken::TimedOut => WaitEnd::TimedOut,
            Woken::Cancelled => WaitEnd::Cancelled,
        }
    }
}

fn deliver(out: Vec<(Arc<Waiter>, Handoff)>) {
    for (w, h) in out {
        w.give(h);
    }
}

/// How [`Bag::wait`] ended (the loom models' borrow).
#[cfg(all(test, feature = "loom-model"))]
pub(crate) enum WaitOutcome {
    Got(Entry),
    Failed,
    TimedOut,
    /// The cancel token fired. If an entry was handed over meanwhile, it is
    /// here, IN_USE: the caller gives it back (as if it had never waited).
    Cancelled(Option<Entry>),
}

pub(crate) struct Bag<T> {
    pub slots: Box<[Slot<T>]>,
    /// Bit i%63 of word i/63 set ⇔ slot i is in the idle set; bit 63 of
    /// every word ⇔ waiters are queued.
    idle_bits: Box<[AtomicU64]>,
    /// FIFO of blocked `get` callers. Protects nothing else.
    waiters: Mutex<VecDeque<Arc<Waiter>>>,
    /// Length of `waiters`, readable without the lock.
    waiting: AtomicUsize,
    /// Broken invariants seen (a CAS that cannot fail did). Must stay 0.
    pub violations: AtomicUsize,
    /// Set once, under `waiters`, by [`close`](Bag::close): nobody queues
    /// after it.
    closed: AtomicBool,
}

impl<T> Bag<T> {
    pub fn new(size: usize) -> Self {
        Bag {
            slots: (0..size).map(|_| Slot::new()).collect(),
            idle_bits: (0..size.div_ceil(PER_WORD))
                .map(|_| AtomicU64::new(0))
                .collect(),
            waiters: Mutex::new(VecDeque::new()),
            waiting: AtomicUsize::new(0),
            violations: AtomicUsize::new(0),
            closed: AtomicBool::new(false),
        }
    }

    pub fn waiting(&self) -> usize {
        self.waiting.load(SeqCst)
    }

    /// Number of idle entries (a snapshot).
    pub fn idle_count(&self) -> usize {
        self.idle_bits
            .iter()
            .map(|w| (w.load(Relaxed) & SLOT_BITS).count_ones() as usize)
            .sum()
    }

    #[cfg(all(test, feature = "loom-model"))]
    pub fn is_idle(&self, idx: usize) -> bool {
        let (w, mask) = bit_of(idx);
        self.idle_bits[w].load(Relaxed) & mask != 0
    }

    /// The slot of an entry the caller owns.
    pub fn slot(&self, e: &Entry) -> &Slot<T> {
        &self.slots[e.idx]
    }

    /// Moves the connection out of an entry the caller owns.
    pub fn take(&self, e: &Entry) -> Option<T> {
        // SAFETY: `e` proves the caller owns the entry (see `Entry`), so no
        // other thread touches the cell meanwhile.
        #[allow(unsafe_code)]
        unsafe {
            self.slots[e.idx].conn.with_mut(|c| c.take())
        }
    }

    /// Moves a connection into an entry the caller owns.
    pub fn put(&self, e: &Entry, conn: T) {
        // SAFETY: as in `take`.
        #[allow(unsafe_code)]
        unsafe {
            self.slots[e.idx].conn.with_mut(|c| *c = Some(conn))
        }
    }

    /// Moves an entry the caller owns (it won the bitmap bit, or holds it
    /// IN_USE / RESERVED) from `from` to `to`. Ownership was already decided
    /// by an atomic read-modify-write, so this is a checked store, not a CAS:
    /// finding another state than `from` is a broken invariant, counted.
    #[inline]
    fn transition(&self, idx: usize, from: u8, to: u8) -> bool {
        let state = &self.slots[idx].state;
        let now = state.load(Acquire);
        if now != from {
            self.violations.fetch_add(1, Relaxed);
            debug_assert_eq!(now, from, "slot {idx}: expected state {from}, found {now}");
            return false;
        }
        state.store(to, Release);
        true
    }

    /// Takes the lowest idle entry for a borrower: IDLE → IN_USE. With
    /// `barge` false it takes nothing while callers are queued, so a running
    /// thread never overtakes a waiting one (FIFO fairness).
    #[inline]
    pub fn claim_idle(&self, barge: bool) -> Option<Entry> {
        for (w, word) in self.idle_bits.iter().enumerate() {
            let mut cur = word.load(Acquire);
            if !barge && cur & WAITERS != 0 {
                return None;
            }
            while cur & SLOT_BITS != 0 {
                let bit = (cur & SLOT_BITS).trailing_zeros() as usize;
                match word.compare_exchange_weak(cur, cur & !(1u64 << bit), AcqRel, Acquire) {
                    Ok(_) => {
                        let idx = w * PER_WORD + bit;
                        if self.transition(idx, IDLE, IN_USE) {
                            return Some(Entry { idx, state: IN_USE });
                        }
                        break;
                    }
                    Err(now) => {
                        if !barge && now & WAITERS != 0 {
                            return None;
                        }
                        cur = now
                    }
                }
            }
        }
        None
    }

    /// As [`claim_idle`](Bag::claim_idle), trying entry `hint` first (the
    /// one this thread used last). A thread that keeps its connection keeps
    /// talking to the same server thread, which the kernel's wake-up
    /// placement rewards (HikariCP's `ConcurrentBag` keeps a thread-local
    /// list for the same reason). The hint is only a preference: any index
    /// is accepted, and one out of range is simply not idle.
    #[inline]
    pub fn claim_idle_near(&self, hint: usize, barge: bool) -> Option<Entry> {
        let (w, mask) = bit_of(hint);
        if let Some(word) = self.idle_bits.get(w) {
            let mut cur = word.load(Acquire);
            loop {
                if !barge && cur & WAITERS != 0 {
                    return None;
                }
                if cur & mask == 0 {
                    break;
                }
                match word.compare_exchange_weak(cur, cur & !mask, AcqRel, Acquire) {
                    Ok(_) => {
                        if self.transition(hint, IDLE, IN_USE) {
                            return Some(Entry {
                                idx: hint,
                                state: IN_USE,
                            });
                        }
                        break;
                    }
                    Err(now) => cur = now,
                }
            }
        }
        self.claim_idle(barge)
    }

    /// Takes one particular idle entry for a pool thread: IDLE → RESERVED.
    /// None if it is not idle (a borrower or someone else got it first).
    pub fn reserve(&self, idx: usize) -> Option<Entry> {
        let (w, mask) = bit_of(idx);
        let prev = self.idle_bits[w].fetch_and(!mask, AcqRel);
        (prev & mask != 0 && self.transition(idx, IDLE, RESERVED)).then_some(Entry {
            idx,
            state: RESERVED,
        })
    }

    /// Finds an empty slot for a new connection: EMPTY → RESERVED.
    pub fn reserve_empty(&self) -> Option<Entry> {
        (0..self.slots.len())
            .find(|&i| {
                self.slots[i]
                    .state
                    .compare_exchange(EMPTY, RESERVED, AcqRel, Acquire)
                    .is_ok()
            })
            .map(|idx| Entry {
                idx,
                state: RESERVED,
            })
    }

    /// The owner gives the entry back: it becomes idle, or goes straight to
    /// the longest waiter. The connection must be in the slot. Returns the
    /// slot's index (no longer owned).
    pub fn release(&self, e: Entry) -> usize {
        let idx = e.idx;
        if !self.transition(idx, e.state, IDLE) {
            return idx;
        }
        let (w, mask) = bit_of(idx);
        if self.idle_bits[w].fetch_or(mask, AcqRel) & WAITERS != 0 {
            self.serve_waiters();
        }
        idx
    }

    /// The owner removes the entry: its connection is taken out, the slot
    /// becomes EMPTY.
    pub fn remove(&self, e: Entry) -> Option<T> {
        let conn = self.take(&e);
        self.transition(e.idx, e.state, EMPTY);
        conn
    }

    /// Hands idle entries to waiters, oldest waiter first.
    pub fn serve_waiters(&self) {
        let mut q = lock(&self.waiters);
        let out = self.serve_locked(&mut q);
        drop(q);
        deliver(out);
    }

    /// Pairs idle entries with waiters in queue order (caller holds the
    /// lock); the hand-offs are delivered after the lock is released, so a
    /// woken waiter does not immediately block on it.
    fn serve_locked(&self, q: &mut VecDeque<Arc<Waiter>>) -> Vec<(Arc<Waiter>, Handoff)> {
        let mut out = Vec::new();
        while !q.is_empty() {
            let Some(e) = self.claim_idle(true) else {
                break;
            };
            let w = q.pop_front().expect("queue is not empty");
            self.waiting.fetch_sub(1, SeqCst);
            out.push((w, Handoff::Entry(e)));
        }
        self.clear_flag_if_empty(q);
        out
    }

    /// Sets the waiters flag in every word (caller holds the queue lock).
    fn raise_flag(&self) {
        for w in self.idle_bits.iter() {
            w.fetch_or(WAITERS, AcqRel);
        }
    }

    /// Clears the flag once nobody waits (caller holds the queue lock, so no
    /// waiter can be registering meanwhile).
    fn clear_flag_if_empty(&self, q: &VecDeque<Arc<Waiter>>) {
        if q.is_empty() {
            for w in self.idle_bits.iter() {
                w.fetch_and(!WAITERS, AcqRel);
            }
        }
    }

    /// Fails every queued waiter with `err`. Returns how many.
    pub fn fail_waiters(&self, err: &Error) -> usize {
        let mut q = lock(&self.waiters);
        let n = q.len();
        let mut out = Vec::with_capacity(n);
        for w in q.drain(..) {
            self.waiting.fetch_sub(1, SeqCst);
            out.push((w, Handoff::Fail(err.clone())));
        }
        self.clear_flag_if_empty(&q);
        drop(q);
        deliver(out);
        n
    }

    /// Closes the bag: every queued waiter fails with `err`, and so does any
    /// later [`wait`](Bag::wait) at once (the flag is set under the queue
    /// lock, so a caller that was about to queue cannot slip past it and wait
    /// out its whole deadline). Idle entries stay where they are: the owner
    /// of the pool removes them with `reserve` + `remove`, and a borrower
    /// returning after that checks [`is_closed`](Bag::is_closed) after its
    /// `release` (see the `close_races_return` and `close_races_waiter` models).
    pub fn close(&self, err: &Error) -> usize {
        let mut q = lock(&self.waiters);
        self.closed.store(true, SeqCst);
        let out: Vec<_> = q
            .drain(..)
            .map(|w| (w, Handoff::Fail(err.clone())))
            .collect();
        self.waiting.fetch_sub(out.len(), SeqCst);
        self.clear_flag_if_empty(&q);
        drop(q);
        let n = out.len();
        deliver(out);
        n
    }

    /// Whether [`close`](Bag::close) was called. A returning borrower reads it
    /// after its `release`: the `fetch_or` there and close's `reserve` are
    /// read-modify-writes on the same word, so either close's sweep saw the
    /// entry idle or the borrower sees the flag.
    pub fn is_closed(&self) -> bool {
        self.closed.load(SeqCst)
    }

    /// Queues `me` (true: it was served at once, its hand-off already
    /// given). Fails when the bag is closed.
    pub(crate) fn enqueue(&self, me: &Arc<Waiter>) -> Result<bool, Error> {
        let mut q = lock(&self.waiters);
        if self.closed.load(SeqCst) {
            return Err(Error::closed());
        }
        q.push_back(me.clone());
        self.waiting.fetch_add(1, SeqCst);
        self.raise_flag();
        // Last look, now that releasers can see us: anything idle goes
        // to the queue in order (older waiters first, maybe us).
        let out = self.serve_locked(&mut q);
        drop(q);
        let mine = out.iter().any(|(w, _)| Arc::ptr_eq(w, me));
        deliver(out);
        Ok(mine)
    }

    /// Takes `me` off the queue (a wait that timed out or was cancelled or
    /// abandoned): None, as if it had never queued; or, when it was served
    /// meanwhile, what it was given (the server took it off the queue and
    /// delivers right after its lock, so this waits that long at most).
    pub(crate) fn leave(&self, me: &Arc<Waiter>) -> Option<Handoff> {
        let mut q = lock(&self.waiters);
        match q.iter().position(|w| Arc::ptr_eq(w, me)) {
            Some(pos) => {
                q.remove(pos);
                self.waiting.fetch_sub(1, SeqCst);
                self.clear_flag_if_empty(&q);
                None
            }
            None => {
                drop(q);
                match me.wait(None, false) {
                    WaitEnd::Given(h) => Some(h),
                    _ => unreachable!("an unbounded, uncancellable wait ends given"),
                }
            }
        }
    }

    /// Waits for an entry until `deadline`, or until `cancel` fires: a
    /// borrow as the pool makes one (`CorePool::get` through its
    /// `PendingGet`: queue, block, take or leave), for the loom models.
    /// `registered` runs once the caller is in the queue and found nothing
    /// idle (outside the lock). A cancelled or timed-out waiter leaves the
    /// queue as if it had never queued.
    #[cfg(all(test, feature = "loom-model"))]
    pub fn wait(
        &self,
        deadline: Option<Instant>,
        cancel: Option<&CancelToken>,
        registered: impl FnOnce(),
    ) -> WaitOutcome {
        let me = Waiter::new(None);
        if let Some(t) = cancel {
            if !t.register(&me) {
                return WaitOutcome::Cancelled(None);
            }
        }
        let outcome = self.wait_registered(&me, deadline, cancel.is_some(), registered);
        if let Some(t) = cancel {
            t.unregister(&me);
        }
        outcome
    }

    #[cfg(all(test, feature = "loom-model"))]
    fn wait_registered(
        &self,
        me: &Arc<Waiter>,
        deadline: Option<Instant>,
        cancellable: bool,
        registered: impl FnOnce(),
    ) -> WaitOutcome {
        match self.enqueue(me) {
            Err(_) => return WaitOutcome::Failed,
            Ok(false) => registered(),
            Ok(true) => {}
        }
        let (got, cancelled) = match me.wait(deadline, cancellable) {
            WaitEnd::Given(h) => (Some(h), false),
            end => (self.leave(me), matches!(end, WaitEnd::Cancelled)),
        };
        match (got, cancelled) {
            (Some(Handoff::Entry(e)), false) => WaitOutcome::Got(e),
            (Some(Handoff::Entry(e)), true) => WaitOutcome::Cancelled(Some(e)),
            (Some(Handoff::Fail(_)), _) => WaitOutcome::Failed,
            (None, false) => WaitOutcome::TimedOut,
            (None, true) => WaitOutcome::Cancelled(None),
        }
    }
}

#[cfg(all(test, feature = "loom-model"))]
mod loom_model {
    //! `cargo test -p staunch --lib --features loom-model loom_model`
    use super::*;
    use loom::thread;

    /// Two borrowers and the keepalive reserver race for one idle entry;
    /// every owner touches the cell (loom flags concurrent access), and the
    /// entry always ends idle with no violation. A borrower with `near`
    /// set tries the entry first (`claim_idle_near`, the pool's fast path).
    fn borrowers_and_keepalive_race(near: [bool; 2]) {
        loom::model(move || {
            let bag = one_idle(7);
            let borrowers: Vec<_> = near
                .into_iter()
                .map(|near| {
                    let bag = bag.clone();
                    thread::spawn(move || {
                        let e = if near {
                            bag.claim_idle_near(0, true)
                        } else {
                            bag.claim_idle(true)
                        };
                        if let Some(e) = e {
                            let c = bag.take(&e).unwrap();
                            bag.put(&e, c + 1);
                            bag.release(e);
                        }
                    })
                })
                .collect();
            if let Some(e) = bag.reserve(0) {
                let c = bag.take(&e).unwrap();
                bag.put(&e, c);
                bag.release(e);
            }
            for b in borrowers {
                b.join().unwrap();
            }
            assert_eq!(bag.violations.load(Relaxed), 0);
            assert!(bag.is_idle(0));
            assert_eq!(bag.slots[0].state.load(Relaxed), IDLE);
        });
    }

    #[test]
    fn borrow_and_keepalive_never_share() {
        borrowers_and_keepalive_race([false, false]);
    }

    #[test]
    fn preferred_entry_is_never_shared() {
        borrowers_and_keepalive_race([true, false]);
    }

    /// A waiter and a returning borrower: the waiter is always served (no lost
    /// wake-up), whichever goes first.
    #[test]
    fn return_hands_off_to_waiter() {
        loom::model(|| {
            let (bag, e, c) = borrowed();
            let b2 = bag.clone();
            let waiter = thread::spawn(move || match b2.wait(None, None, || {}) {
                WaitOutcome::Got(e) => {
                    let c = b2.take(&e).unwrap();
                    b2.put(&e, c);
                    b2.release(e);
                }
                _ => panic!("waiter not served"),
            });
            bag.put(&e, c);
            bag.release(e);
            waiter.join().unwrap();
            assert_eq!(bag.violations.load(Relaxed), 0);
            assert!(bag.is_idle(0));
        });
    }

    /// A borrow waiting apart (queued, no thread of its own: the
    /// host's event loop waits for it) given up while a returning borrower
    /// hands it the entry: whichever goes first, the entry ends idle (given
    /// back by the one giving up when it was handed over) and the queue
    /// empty.
    #[test]
    fn give_up_races_hand_off() {
        loom::model(|| {
            let (bag, e, c) = borrowed();
            let me = Waiter::new(None);
            assert!(!bag.enqueue(&me).unwrap());
            let b2 = bag.clone();
            let returner = thread::spawn(move || {
                b2.put(&e, c);
                b2.release(e);
            });
            // PendingGet's drop: what was given, else off the queue (or
            // what was given meanwhile).
            let given = me.try_take().or_else(|| bag.leave(&me));
            if let Some(Handoff::Entry(e)) = given {
                let c = bag.take(&e).unwrap();
                bag.put(&e, c);
                bag.release(e);
            }
            returner.join().unwrap();
            assert_eq!(bag.violations.load(Relaxed), 0);
            assert!(bag.is_idle(0));
            assert_eq!(bag.waiting(), 0);
        });
    }

    /// Removal (soft evict / retirement) racing a borrower: exactly one wins.
    #[test]
    fn evict_races_borrow() {
        loom::model(|| {
            let bag = one_idle(1);
            let b2 = bag.clone();
            let t = thread::spawn(move || {
                if let Some(e) = b2.claim_idle(true) {
                    let c = b2.take(&e).unwrap();
                    b2.put(&e, c);
                    b2.release(e);
                    true
                } else {
                    false
                }
            });
            let evicted = bag.reserve(0).is_some_and(|e| bag.remove(e).is_some());
            let borrowed = t.join().unwrap();
            assert!(evicted || borrowed);
            assert_eq!(bag.violations.load(Relaxed), 0);
            let st = bag.slots[0].state.load(Relaxed);
            assert!(if evicted { st == EMPTY } else { st == IDLE });
        });
    }

    /// What the pool's `make_idle` does when a borrower returns an entry.
    fn give_back(bag: &Bag<u32>, e: Entry) {
        let i = bag.release(e);
        if bag.is_closed() {
            if let Some(e) = bag.reserve(i) {
                bag.remove(e);
            }
        }
    }

    /// The pool's close, on the bag: the flag and the waiters, then a sweep
    /// of the idle entries.
    fn close(bag: &Bag<u32>) {
        bag.close(&Error::closed());
        if let Some(e) = bag.reserve(0) {
            bag.remove(e);
        }
    }

    /// A bag of one entry, idle, holding `v`.
    fn one_idle(v: u32) -> Arc<Bag<u32>> {
        let bag = Arc::new(Bag::<u32>::new(1));
        let e = bag.reserve_empty().unwrap();
        bag.put(&e, v);
        bag.release(e);
        bag
    }

    /// One entry, borrowed.
    fn borrowed() -> (Arc<Bag<u32>>, Entry, u32) {
        let bag = one_idle(1);
        let e = bag.claim_idle(true).unwrap();
        let c = bag.take(&e).unwrap();
        (bag, e, c)
    }

    /// Close racing a borrower's return: the entry always ends removed,
    /// whichever of the two saw it idle last (a connection left idle in a
    /// closed pool would stay open until the last handle is dropped).
    #[test]
    fn close_races_return() {
        loom::model(|| {
            let (bag, e, c) = borrowed();
            let b2 = bag.clone();
            let returner = thread::spawn(move || {
                b2.put(&e, c);
                give_back(&b2, e);
            });
            close(&bag);
            returner.join().unwrap();
            assert_eq!(bag.violations.load(Relaxed), 0);
            assert_eq!(bag.slots[0].state.load(Relaxed), EMPTY);
        });
    }

    /// A cancel and the hand-off of a returned entry racing a waiting get
    /// (in `cancel_first` order or the other; two threads each, so that
    /// loom explores every interleaving in a second): the waiter ends
    /// served or cancelled (an entry handed over as it was cancelled comes
    /// back with the outcome, and goes back to the bag), and either way the
    /// entry ends idle, the queue empty, no violation.
    fn cancel_races_hand_off(cancel_first: bool) {
        loom::model(move || {
            let (bag, e, c) = borrowed();
            let token = CancelToken::new();
            let (b2, t2) = (bag.clone(), token.clone());
            let waiter = thread::spawn(move || match b2.wait(None, Some(&t2), || {}) {
                WaitOutcome::Got(e) | WaitOutcome::Cancelled(Some(e)) => {
                    let c = b2.take(&e).unwrap();
                    b2.put(&e, c);
                    b2.release(e);
                }
                WaitOutcome::Cancelled(None) => {}
                WaitOutcome::TimedOut | WaitOutcome::Failed => {
                    panic!("no deadline was given, nor a close")
                }
            });
            if cancel_first {
                token.cancel();
            }
            bag.put(&e, c);
            bag.release(e);
            if !cancel_first {
                token.cancel();
            }
            waiter.join().unwrap();
            assert_eq!(bag.violations.load(Relaxed), 0);
            assert!(bag.is_idle(0));
            assert_eq!(bag.waiting(), 0);
        });
    }

    #[test]
    fn cancel_then_hand_off() {
        cancel_races_hand_off(true);
    }

    #[test]
    fn hand_off_then_cancel() {
        cancel_races_hand_off(false);
    }

    /// Close racing a caller about to wait: it is failed or served, never
    /// left queued after close (loom reports the deadlock if it is: the wait
    /// has no deadline here), and a served waiter's return still ends with
    /// the entry removed.
    #[test]
    fn close_races_waiter() {
        loom::model(|| {
            let (bag, e, c) = borrowed();
            let b2 = bag.clone();
            let waiter = thread::spawn(move || match b2.wait(None, None, || {}) {
                WaitOutcome::Got(e) => {
                    let c = b2.take(&e).unwrap();
                    b2.put(&e, c);
                    give_back(&b2, e);
                }
                WaitOutcome::Failed => {}
                WaitOutcome::TimedOut | WaitOutcome::Cancelled(_) => {
                    panic!("no deadline and no cancel token were given")
                }
            });
            close(&bag);
            bag.put(&e, c);
            give_back(&bag, e);
            waiter.join().unwrap();
            assert_eq!(bag.violations.load(Relaxed), 0);
            assert_eq!(bag.slots[0].state.load(Relaxed), EMPTY);
            assert_eq!(bag.waiting(), 0);
        });
    }
}
