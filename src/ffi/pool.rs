//! `staunch_pool`: open, borrow, stats, close.

use std::ffi::c_char;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use super::cancel::staunch_cancel_token;
use super::conn::{query_flags, statement_failure, staunch_conn, STAUNCH_QUERY_STREAM};
use super::error::{staunch_error, staunch_status, Failure, STAUNCH_INVALID_ARGUMENT};
use super::events::{Callback, FfiListener};
use super::options::staunch_options;
use super::rows::staunch_rows;
use super::values::{staunch_param, to_params};
use super::{arg, arg_str, copy_sized, guard, guard_value, Out, STAUNCH_TIMEOUT_DEFAULT};
use crate::config::Builder;
use crate::pool::host_supplies_stacks;
use crate::pool::stats::Latency;
use crate::{Pool, Stats};

/// A pool of connections. Created by `staunch_pool_open` or
/// `staunch_pool_open_options`, freed by `staunch_pool_free`. Thread-safe:
/// every function taking a pool may be called from any number of threads at
/// once, except `staunch_pool_free`, which must be the last call on it.
pub struct staunch_pool {
    /// Connection handles hold clones (to report STAUNCH_CLOSED).
    pool: Pool,
    /// This pool's number among those the process opened (from 1), as in
    /// its events.
    id: u64,
    /// Installed in the pool (which holds the other reference): the C
    /// callback's gate, which `staunch_pool_free` shuts.
    listener: Arc<FfiListener>,
}

impl std::fmt::Debug for staunch_pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.pool.fmt(f)
    }
}

/// Longest `staunch_pool_free` waits for the pool's threads to exit.
const THREADS_EXIT_WAIT: Duration = Duration::from_secs(1);

/// A snapshot of a pool: gauges (what the pool holds now) and cumulative
/// counters (since the pool opened). Filled by `staunch_pool_stats`. Gauges are
/// read one after the other without stopping the pool, so under load they may
/// not add up exactly; `active + idle + reserved == total` holds when the pool
/// is quiet. Latencies are upper bucket edges (a p50 of 64 means "at most
/// 64 µs") except the maxima, which are exact.
///
/// Set `size` to `sizeof(staunch_stats)` before the call: fields are only
/// ever added at the end, and a library older than the header fills the
/// ones it knows (and sets `size` to how many bytes it wrote).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct staunch_stats {
    /// The caller's `sizeof(staunch_stats)`; on return, the bytes written.
    pub size: usize,
    /// Gauge: connections open (idle, in use, or held by a pool thread).
    pub total: u64,
    /// Gauge: connections borrowed by the application.
    pub active: u64,
    /// Gauge: connections ready to hand out.
    pub idle: u64,
    /// Gauge: connections held by pool threads (keepalive, retirement).
    pub reserved: u64,
    /// Gauge: threads blocked in staunch_pool_get.
    pub waiting: u64,
    /// Gauge: connection requests queued or being connected.
    pub pending_creates: u64,
    /// Gauge: connects running now.
    pub connecting: u64,
    /// Gauge: connect threads alive.
    pub adder_threads: u64,
    /// Counter: successful gets.
    pub acquired: u64,
    /// Counter: gets that timed out.
    pub acquire_timeouts: u64,
    /// Counter: connections created.
    pub created: u64,
    /// Counter: connections closed after idle_timeout.
    pub closed_idle_timeout: u64,
    /// Counter: connections closed at max_lifetime.
    pub closed_max_lifetime: u64,
    /// Counter: connections closed as broken (failed validation, keepalive,
    /// I/O error, failed rollback on return).
    pub closed_broken: u64,
    /// Counter: connections closed by soft eviction, or as surplus above a
    /// lowered max_size (`staunch_pool_set_max_size`).
    pub closed_evicted: u64,
    /// Counter: connections closed because the pool closed.
    pub closed_pool_closed: u64,
    /// Counter: failed connect attempts.
    pub connect_failures: u64,
    /// Counter: connects cut off at connect_timeout.
    pub abandoned_connects: u64,
    /// Counter: failed validations (on borrow or keepalive).
    pub validation_failures: u64,
    /// Counter: keepalive checks run.
    pub keepalives: u64,
    /// Counter: borrowed connections reported as possible leaks.
    pub leaks_reported: u64,
    /// Counter: transactions rolled back because a connection was released
    /// inside one.
    pub rollbacks_on_return: u64,
    /// Counter: broken internal invariants observed (must be 0).
    pub violations: u64,
    /// Number of gets the acquire latency figures cover.
    pub acquire_count: u64,
    /// Time callers waited in get (an immediate hand-out counts as < 1 µs):
    /// median, 99th percentile, maximum, in microseconds.
    pub acquire_p50_us: u64,
    pub acquire_p99_us: u64,
    pub acquire_max_us: u64,
    /// Number of successful connects the connect latency figures cover.
    pub connect_count: u64,
    /// Time one successful connect took: median, 99th percentile, maximum,
    /// in microseconds.
    pub connect_p50_us: u64,
    pub connect_p99_us: u64,
    pub connect_max_us: u64,
    /// Gauge: the most connections the pool opens (max_size in force, see
    /// `staunch_pool_set_max_size`; summed over the hosts of a topology pool).
    pub max_size: u64,
    /// Counter: successful gets that found no idle connection and waited.
    pub acquires_waited: u64,
    /// Counter: the time those gets waited in total, in microseconds.
    pub acquire_wait_us: u64,
    /// Counter: gets cancelled through their cancel token.
    pub acquires_cancelled: u64,
    /// Counter: sessions reset on release because their state changed.
    pub resets_on_return: u64,
    /// Counter: statements cut off by the pool because their server did not
    /// answer within the time limit plus 1 s (the connection was closed).
    pub statements_cut: u64,
}

fn us(d: Duration) -> u64 {
    d.as_micros().min(u128::from(u64::MAX)) as u64
}

fn latency(l: &Latency) -> (u64, u64, u64, u64) {
    (l.count, us(l.p50), us(l.p99), us(l.max))
}

impl From<&Stats> for staunch_stats {
    fn from(s: &Stats) -> staunch_stats {
        let n = |v: usize| v as u64;
        let (acquire_count, acquire_p50_us, acquire_p99_us, acquire_max_us) =
            latency(&s.acquire_latency);
        let (connect_count, connect_p50_us, connect_p99_us, connect_max_us) =
            latency(&s.connect_latency);
        staunch_stats {
            size: std::mem::size_of::<staunch_stats>(),
            total: n(s.total),
            active: n(s.active),
            idle: n(s.idle),
            reserved: n(s.reserved),
            waiting: n(s.waiting),
            pending_creates: n(s.pending_creates),
            connecting: n(s.connecting),
            adder_threads: n(s.adder_threads),
            acquired: s.acquired,
            acquire_timeouts: s.acquire_timeouts,
            created: s.created,
            closed_idle_timeout: s.closed_idle_timeout,
            closed_max_lifetime: s.closed_max_lifetime,
            closed_broken: s.closed_broken,
            closed_evicted: s.closed_evicted,
            closed_pool_closed: s.closed_pool_closed,
            connect_failures: s.connect_failures,
            abandoned_connects: s.abandoned_connects,
            validation_failures: s.validation_failures,
            keepalives: s.keepalives,
            leaks_reported: s.leaks_reported,
            rollbacks_on_return: s.rollbacks_on_return,
            violations: s.violations,
            acquire_count,
            acquire_p50_us,
            acquire_p99_us,
            acquire_max_us,
            connect_count,
            connect_p50_us,
            connect_p99_us,
            connect_max_us,
            max_size: n(s.max_size),
            acquires_waited: s.acquires_waited,
            acquire_wait_us: s.acquire_wait_us,
            acquires_cancelled: s.acquires_cancelled,
            resets_on_return: s.resets_on_return,
            statements_cut: s.statements_cut,
        }
    }
}

fn open(
    builder: Builder,
    callback: Option<Arc<Callback>>,
    out: Out<*mut staunch_pool>,
) -> Result<(), Failure> {
    static NEXT_ID: AtomicU64 = AtomicU64::new(1);
    let id = NEXT_ID.fetch_add(1, Relaxed);
    let listener = Arc::new(FfiListener::new(callback, id));
    match builder.event_listener(listener.clone()).build() {
        Ok(pool) => {
            out.set(Box::into_raw(Box::new(staunch_pool { pool, id, listener })));
            Ok(())
        }
        Err(e) => {
            listener.shut();
            Err(e.into())
        }
    }
}

/// Opens a pool from a URL, `mysql://user:pass@host:port/db?knob=value&...`
/// (every knob can be given as a parameter, e.g. `?max_size=8&connect_timeout=1s`).
/// Events go to the `log` crate (nowhere, unless a Rust logger is installed);
/// use `staunch_pool_open_options` for an event callback.
///
/// On success `*out` receives the pool; free it with `staunch_pool_free`. A bad
/// URL or knob gives STAUNCH_INVALID_CONFIG naming it. Does not connect and
/// never blocks, unless the knob `initialization_fail_timeout` is set: then it
/// makes one connection first and blocks until it succeeds or that timeout
/// passes (at least connect_timeout + 100 ms). Any thread.
#[no_mangle]
pub extern "C" fn staunch_pool_open(
    url: *const c_char,
    out: *mut *mut staunch_pool,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a NUL-terminated string (header contract).
        let url = unsafe { arg_str(url, "url") }?;
        let out = Out::new(out, "out")?;
        open(Builder::new().url(url), None, out)
    })
}

/// Opens a pool from an options object (which is only read: it may be freed
/// right after, or open more pools). Errors, ownership and blocking as for
/// `staunch_pool_open`; a knob value that is malformed or out of range gives
/// STAUNCH_INVALID_CONFIG naming the knob. Any thread, but not concurrently
/// with calls that modify `opts`.
#[no_mangle]
pub extern "C" fn staunch_pool_open_options(
    opts: *const staunch_options,
    out: *mut *mut staunch_pool,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live options object (header contract).
        let o = unsafe { arg(opts, "opts") }?;
        let out = Out::new(out, "out")?;
        open(o.builder.clone(), o.callback.clone(), out)
    })
}

/// Borrows a connection, waiting at most `timeout_ms` milliseconds
/// (STAUNCH_TIMEOUT_DEFAULT: the pool's connection_timeout; 0: fail at once
/// unless a connection is idle). Blocks at most that long, whatever the
/// network does (validating an idle connection counts within it). On success
/// `*out` receives the connection, owned by the caller: give it back with
/// `staunch_conn_free` (or `staunch_conn_release`, then `staunch_conn_free`).
///
/// Fails with STAUNCH_POOL_EXHAUSTED (every connection in use) or
/// STAUNCH_UNREACHABLE (no connection could be made: the message says why,
/// e.g. which host:port sent no greeting) when the time is up,
/// STAUNCH_CONNECT_REJECTED at once when the server refuses the credentials
/// or database, STAUNCH_CLOSED if the pool is or gets closed. Thread-safe.
#[no_mangle]
pub extern "C" fn staunch_pool_get(
    pool: *mut staunch_pool,
    timeout_ms: u32,
    out: *mut *mut staunch_conn,
    err: *mut *mut staunch_error,
) -> staunch_status {
    get_with(pool, timeout_ms, std::ptr::null(), out, err, false)
}

/// Borrows a connection for reading: from a healthy replica when the pool has
/// several hosts (`topology=replication`), else (or when none qualifies and
/// `read_fallback=writer`) from the writer. Same timeout, ownership, blocking
/// and thread-safety rules as `staunch_pool_get`.
#[no_mangle]
pub extern "C" fn staunch_pool_get_read(
    pool: *mut staunch_pool,
    timeout_ms: u32,
    out: *mut *mut staunch_conn,
    err: *mut *mut staunch_error,
) -> staunch_status {
    get_with(pool, timeout_ms, std::ptr::null(), out, err, true)
}

/// `staunch_pool_get` that `staunch_cancel_token_cancel`, called from any
/// thread, ends promptly with STAUNCH_CANCELLED (the waiter leaves the
/// queue; a connection handed over as the cancel came goes back to the
/// pool). A token already cancelled fails at once. `token` may be NULL (then
/// this is `staunch_pool_get`); it is only used during the call. Same
/// timeout, ownership, blocking and thread-safety rules as
/// `staunch_pool_get` otherwise.
#[no_mangle]
pub extern "C" fn staunch_pool_get_cancellable(
    pool: *mut staunch_pool,
    timeout_ms: u32,
    token: *const staunch_cancel_token,
    out: *mut *mut staunch_conn,
    err: *mut *mut staunch_error,
) -> staunch_status {
    get_with(pool, timeout_ms, token, out, err, false)
}

/// `staunch_pool_get_read`, cancellable as `staunch_pool_get_cancellable`.
#[no_mangle]
pub extern "C" fn staunch_pool_get_read_cancellable(
    pool: *mut staunch_pool,
    timeout_ms: u32,
    token: *const staunch_cancel_token,
    out: *mut *mut staunch_conn,
    err: *mut *mut staunch_error,
) -> staunch_status {
    get_with(pool, timeout_ms, token, out, err, true)
}

/// A borrow's `timeout_ms` as a duration: STAUNCH_TIMEOUT_DEFAULT is the
/// pool's connection_timeout.
fn borrow_timeout(pool: &Pool, timeout_ms: u32) -> Duration {
    match timeout_ms {
        STAUNCH_TIMEOUT_DEFAULT => pool.config().connection_timeout(),
        ms => Duration::from_millis(u64::from(ms)),
    }
}

/// `staunch_pool_get` and `staunch_pool_get_read`: the same checks and
/// ownership, a different routing.
fn get_with(
    pool: *mut staunch_pool,
    timeout_ms: u32,
    token: *const staunch_cancel_token,
    out: *mut *mut staunch_conn,
    err: *mut *mut staunch_error,
    read: bool,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live pool (header contract).
        let p = unsafe { arg(pool, "pool") }?;
        let out = Out::new(out, "out")?;
        // SAFETY: NULL or a live token (header contract).
        let token = unsafe { token.as_ref() }.map(staunch_cancel_token::token);
        let pool = &p.pool;
        let timeout = borrow_timeout(pool, timeout_ms);
        let conn = host_supplies_stacks(|| match (read, token) {
            (false, None) => pool.get_timeout(timeout),
            (true, None) => pool.get_read_timeout(timeout),
            (false, Some(t)) => pool.get_cancellable(timeout, t),
            (true, Some(t)) => pool.get_read_cancellable(timeout, t),
        })?;
        out.set(staunch_conn::new_raw(&p.pool, conn));
        Ok(())
    })
}

/// A borrow under way that waits without a thread of its own
/// (`staunch_pool_get_start`), for a host whose threads must not block in
/// the library: Go's netpoller, Python's asyncio, a JVM's virtual threads.
/// It waits in the pool's queue, in turn with the callers blocked in
/// `staunch_pool_get`. One thread at a time per handle; free it with
/// `staunch_pending_get_free`, before the pool.
pub struct staunch_pending_get {
    pool: Pool,
    pending: crate::PendingConn,
}

impl std::fmt::Debug for staunch_pending_get {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.pending.fmt(f)
    }
}

/// Starts a borrow that never waits in this call (since 1.11.0): when a
/// connection is idle, `*out` receives it as `staunch_pool_get` gives one
/// and `*pending` NULL; otherwise `*out` is NULL and `*pending` receives a
/// borrow waiting in the pool's queue (owned by the caller). Wait until
/// `staunch_pending_get_fd` is readable (poll, epoll, an event loop) or
/// `staunch_pending_get_remaining_ms` has passed, then call
/// `staunch_pending_get_finish`.
///
/// `signal_fd` -1: the borrow makes an eventfd of its own. Otherwise an
/// eventfd of the caller's (non-blocking), which a host keeps registered in
/// its event loop and reuses from borrow to borrow: the library writes to
/// it (an 8-byte 1) when the borrow has something and reads it to clear it,
/// never closes it, and stops using it once the borrow finished or was
/// freed; a signal left over from an earlier borrow only makes a finish
/// find nothing yet. `read` routes as `staunch_pool_get_read`
/// (a replica; the writer after a replica's failure when read_fallback
/// allows). `timeout_ms` bounds the whole borrow as in `staunch_pool_get`
/// (STAUNCH_TIMEOUT_DEFAULT: the pool's connection_timeout). Errors: those
/// of `staunch_pool_get`, at once. To give up (a cancelled task), free the
/// pending borrow: the pool is left as if it had never waited.
///
/// Waits in the call only while the pool is suspended (as
/// `staunch_pool_get`, within the bound), and for the validation of an idle
/// connection unused past validation_interval (a ping, bounded by what is
/// left of the bound), as `staunch_pool_get` does. Thread-safe.
#[no_mangle]
pub extern "C" fn staunch_pool_get_start(
    pool: *mut staunch_pool,
    timeout_ms: u32,
    read: bool,
    signal_fd: i32,
    out: *mut *mut staunch_conn,
    pending: *mut *mut staunch_pending_get,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live pool (header contract).
        let p = unsafe { arg(pool, "pool") }?;
        let out = Out::new(out, "out")?;
        let pending = Out::new(pending, "pending")?;
        let timeout = borrow_timeout(&p.pool, timeout_ms);
        let fd = match signal_fd {
            -1 => None,
            fd if fd >= 0 => Some(fd),
            fd => {
                return Err(Failure::new(
                    STAUNCH_INVALID_ARGUMENT,
                    format!(
                    "signal_fd is {fd}: an eventfd's descriptor, or -1 for one of the borrow's own"
                ),
                ))
            }
        };
        let got = host_supplies_stacks(|| p.pool.get_start_signalling(timeout, read, fd))?;
        let (conn, waiting) = match got {
            crate::StartedGet::Ready(c) => {
                (staunch_conn::new_raw(&p.pool, c), std::ptr::null_mut())
            }
            crate::StartedGet::Waiting(w) => (
                std::ptr::null_mut(),
                Box::into_raw(Box::new(staunch_pending_get {
                    pool: p.pool.clone(),
                    pending: w,
                })),
            ),
        };
        out.set(conn);
        pending.set(waiting);
        Ok(())
    })
}

/// The descriptor a pending borrow's host waits on: readable when
/// `staunch_pending_get_finish` has something (a connection, or a failure
/// such as the pool's close). The same for the borrow's whole life: the
/// caller's `signal_fd`, or one the borrow owns (do not close it; reading it
/// is harmless). -1 for NULL. Never blocks.
#[no_mangle]
pub extern "C" fn staunch_pending_get_fd(pending: *const staunch_pending_get) -> i32 {
    guard_value(-1, || {
        // SAFETY: NULL or a live pending borrow (header contract).
        unsafe { pending.as_ref() }.map_or(-1, |p| p.pending.fd())
    })
}

/// Milliseconds left until the borrow's bound, rounded up (0 once it
/// passed, and for NULL): no descriptor turns readable at the bound, so the
/// host's wait ends then too, and `staunch_pending_get_finish` reports the
/// timeout. Never blocks.
#[no_mangle]
pub extern "C" fn staunch_pending_get_remaining_ms(pending: *const staunch_pending_get) -> u32 {
    guard_value(0, || {
        // SAFETY: NULL or a live pending borrow (header contract).
        let Some(p) = (unsafe { pending.as_ref() }) else {
            return 0;
        };
        let left = p.pending.remaining();
        let ms = left.as_micros().div_ceil(1000);
        u32::try_from(ms).unwrap_or(u32::MAX)
    })
}

/// Finishes a pending borrow if it can be now, without waiting: STAUNCH_OK
/// with `*out` the connection (as `staunch_pool_get` gives it), STAUNCH_OK
/// with `*out` NULL when not yet (a wake-up with nothing for it, or a
/// connection that failed its validation and was replaced: wait for the
/// descriptor again), or the error that ended it (STAUNCH_POOL_EXHAUSTED or
/// STAUNCH_UNREACHABLE once the bound passed, STAUNCH_CLOSED...). After a
/// connection or an error the borrow is over: finishing it again fails with
/// STAUNCH_INVALID_ARGUMENT; free it. Blocks only for the validation of a
/// connection idle past validation_interval (bounded by what is left of the
/// bound). One thread at a time per pending borrow.
#[no_mangle]
pub extern "C" fn staunch_pending_get_finish(
    pending: *mut staunch_pending_get,
    out: *mut *mut staunch_conn,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live pending borrow, used by one thread (header
        // contract).
        let p = unsafe { super::arg_mut(pending, "pending") }?;
        let out = Out::new(out, "out")?;
        // A second finish fails in the core (STAUNCH_INVALID_ARGUMENT).
        let conn = match host_supplies_stacks(|| p.pending.finish()) {
            Some(got) => staunch_conn::new_raw(&p.pool, got?),
            None => std::ptr::null_mut(),
        };
        out.set(conn);
        Ok(())
    })
}

/// Frees a pending borrow. One that has not finished is given up: it leaves
/// the pool's queue as a cancelled `staunch_pool_get_cancellable` does (a
/// connection handed to it meanwhile goes back to the pool). NULL is a
/// no-op. Never blocks (beyond a short lock).
#[no_mangle]
pub extern "C" fn staunch_pending_get_free(pending: *mut staunch_pending_get) {
    guard_value((), || {
        if !pending.is_null() {
            // SAFETY: created by staunch_pool_get_start, freed once.
            drop(unsafe { Box::from_raw(pending) });
        }
    })
}

/// Borrows a connection, runs one query on it and gives the connection back,
/// all in one call: `staunch_pool_get`, `staunch_conn_query_ex` and
/// `staunch_conn_free` without the connection handle, for a statement that
/// needs nothing else of its connection (a binding's pool-level `query`
/// makes one call into the library instead of three). `*out` receives the
/// answer, buffered (it owns its data; free it with `staunch_rows_free`);
/// for a statement that returns no rows, `staunch_rows_affected_rows` and
/// `staunch_rows_last_insert_id` give what it did. With
/// STAUNCH_QUERY_STREAM (since 1.3.0) the answer is streamed instead: the
/// row set holds the connection, which goes back to the pool when the first
/// result set has been read to its end (the sets after it are read whole
/// then) or the row set is freed, whichever comes first; its reads wait as
/// a streamed answer's of `staunch_conn_query_ex` do.
///
/// `timeout_ms` bounds the wait for a connection as in `staunch_pool_get`.
/// `sql`, `params`, `n_params` and `flags` as in `staunch_conn_query_ex`.
/// Errors: those of
/// `staunch_pool_get`, then those of `staunch_conn_query_ex`; after a
/// failed statement the connection goes back to the pool (or is closed, if
/// the failure broke it), as `staunch_conn_free` does. Not cancellable
/// from another thread: for a statement that must be, borrow a connection
/// (`staunch_pool_get_cancellable`, `staunch_conn_cancel`). Blocks for the
/// wait, the statement (within the pool's query_timeout) and the return
/// (nothing after a statement that only read). Thread-safe.
#[no_mangle]
pub extern "C" fn staunch_pool_query(
    pool: *mut staunch_pool,
    timeout_ms: u32,
    sql: *const c_char,
    params: *const staunch_param,
    n_params: usize,
    flags: u32,
    out: *mut *mut staunch_rows,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live pool (header contract).
        let p = unsafe { arg(pool, "pool") }?;
        // SAFETY: NULL or a NUL-terminated string (header contract).
        let sql = unsafe { arg_str(sql, "sql") }?;
        let out = Out::new(out, "out")?;
        let how = query_flags(flags, n_params, "staunch_pool_query")?;
        // SAFETY: header contract on params.
        let params = unsafe { to_params(params, n_params) }?;
        let timeout = borrow_timeout(&p.pool, timeout_ms);
        let mut conn = host_supplies_stacks(|| p.pool.get_timeout(timeout))?;
        if flags & STAUNCH_QUERY_STREAM != 0 {
            // The row set holds the connection; it goes back to the pool
            // when the stream is done with it (the first set read, or the
            // row set freed).
            let answer = conn
                .answer_stream(sql, &params, how, Box::new(drop))
                .map_err(|e| statement_failure("query", e))?;
            out.set(staunch_rows::new(answer).into_raw());
            return Ok(());
        }
        let sets = conn
            .answer_sets(sql, &params, how)
            .map_err(|e| statement_failure("query", e));
        // Back to the pool (after a reset if the statement changed the
        // session) before the answer is handed over.
        drop(conn);
        let answer = crate::client::rows::Answer::buffered(sets?);
        out.set(staunch_rows::new(answer).into_raw());
        Ok(())
    })
}

/// Borrows a connection if one is idle right now; never waits and never
/// connects. On STAUNCH_OK, `*out` receives the connection (owned by the
/// caller, as from `staunch_pool_get`), or NULL when none is idle. Fails with STAUNCH_CLOSED if the pool is closed. Blocks at most
/// validation_timeout (a connection idle for longer than alive_bypass_window
/// is validated first). Thread-safe.
#[no_mangle]
pub extern "C" fn staunch_pool_try_get(
    pool: *mut staunch_pool,
    out: *mut *mut staunch_conn,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live pool (header contract).
        let p = unsafe { arg(pool, "pool") }?;
        let out = Out::new(out, "out")?;
        match host_supplies_stacks(|| p.pool.try_get())? {
            Some(conn) => out.set(staunch_conn::new_raw(&p.pool, conn)),
            None => out.set(std::ptr::null_mut()),
        }
        Ok(())
    })
}

/// Fills `*out` with a snapshot of the pool's gauges and counters: set
/// `out->size = sizeof(staunch_stats)` first (a smaller size gives the
/// fields that fit; less than a `size_t`, STAUNCH_INVALID_ARGUMENT). Works
/// on a closed pool too. Never blocks (reads atomics). Thread-safe.
#[no_mangle]
pub extern "C" fn staunch_pool_stats(
    pool: *const staunch_pool,
    out: *mut staunch_stats,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live pool (header contract).
        let p = unsafe { arg(pool, "pool") }?;
        let out = Out::new(out, "out")?;
        let stats = staunch_stats::from(&p.pool.stats());
        // SAFETY: non-NULL, and holds the caller's `size` bytes (contract).
        unsafe { copy_sized(out.ptr(), &stats, "staunch_stats") }
    })
}

/// Copies `text` into the caller's buffer as `snprintf` does: at most
/// `cap - 1` bytes and a NUL (nothing when `cap` is 0), and `*len` = the
/// whole text's length without the NUL, so that `*len >= cap` says "call
/// again with `*len + 1` bytes".
///
/// # Safety
/// `buf` is NULL (then `cap` must be 0) or holds `cap` writable bytes.
pub(super) unsafe fn copy_text(
    text: &str,
    buf: *mut c_char,
    cap: usize,
    len: Out<usize>,
) -> Result<(), Failure> {
    if buf.is_null() && cap != 0 {
        return Err(Failure::null("buf (with cap > 0)"));
    }
    if cap > 0 {
        let n = text.len().min(cap - 1);
        // SAFETY: `buf` holds `cap` bytes (contract); `n + 1 <= cap`; the
        // text is ours, so they do not overlap.
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr(), buf.cast::<u8>(), n);
            buf.add(n).write(0);
        }
    }
    len.set(text.len());
    Ok(())
}

/// Writes the pool's figures as Prometheus text (exposition format 0.0.4,
/// which OpenMetrics parsers read too) into `buf`, as `snprintf` does: at
/// most `cap - 1` bytes and a NUL, and `*len` = the text's whole length
/// (without the NUL); when `*len >= cap` the text was cut: call again with
/// `*len + 1` bytes (a little more: the figures move). `buf` may be NULL
/// with `cap` 0 to ask for the length.
///
/// The names follow OpenTelemetry's semantic conventions for database client
/// connections as its Prometheus exporter writes them
/// (`db_client_connection_count{db_client_connection_state="idle"}`,
/// `db_client_connection_wait_time_seconds`, `..._create_time_seconds`,
/// `..._use_time_seconds`, `db_client_operation_duration_seconds`,
/// `db_client_connection_timeouts_total`, ...), with staunch's own figures
/// as `staunch_*`; every series is labelled with the pool's name
/// (`pool_name`) and the host (`server_address`, `server_port`). The first
/// call turns timings on: from then on borrows and statements are timed for
/// the `use_time` and operation histograms (`timings=on` in the URL does
/// so from the start). Works on a closed pool. Never blocks. Thread-safe.
#[no_mangle]
pub extern "C" fn staunch_pool_metrics(
    pool: *const staunch_pool,
    buf: *mut c_char,
    cap: usize,
    len: *mut usize,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live pool (header contract).
        let p = unsafe { arg(pool, "pool") }?;
        let len = Out::new(len, "len")?;
        // SAFETY: `buf` holds `cap` bytes (header contract).
        unsafe { copy_text(&p.pool.metrics_text(), buf, cap, len) }
    })
}

/// The pool's `leak_detection_threshold` in milliseconds, 0 when leak
/// detection is off (or for NULL): a binding gives the borrower's stack
/// (`staunch_conn_set_borrower_stack`) only when it is set. Never blocks;
/// any thread.
#[no_mangle]
pub extern "C" fn staunch_pool_leak_threshold_ms(pool: *const staunch_pool) -> u64 {
    guard_value(0, || {
        // SAFETY: NULL or a live pool (header contract).
        unsafe { pool.as_ref() }.map_or(0, |p| {
            p.pool
                .config()
                .leak_detection_threshold()
                .map_or(0, |d| d.as_millis().max(1) as u64)
        })
    })
}

/// How many servers the pool has a pool for: 1, or the hosts of a
/// topology pool (the writer and the replicas, or the Galera nodes), in
/// the URL's order. 0 for NULL. Never blocks; any thread.
#[no_mangle]
pub extern "C" fn staunch_pool_host_count(pool: *const staunch_pool) -> usize {
    guard_value(0, || {
        // SAFETY: NULL or a live pool (header contract).
        unsafe { pool.as_ref() }.map_or(0, |p| p.pool.host_stats().len())
    })
}

/// Fills `*out` with host `index`'s figures (as `staunch_pool_stats` does
/// for the whole pool: set `out->size` first), and writes its `host:port`
/// into `endpoint` by `snprintf`'s rules (`*endpoint_len` its whole
/// length; `endpoint` may be NULL with `endpoint_cap` 0). `index` from 0
/// to `staunch_pool_host_count() - 1`, else STAUNCH_INVALID_ARGUMENT.
/// `*is_writer` (may be NULL) receives whether writes go there now. Works
/// on a closed pool. Never blocks. Thread-safe.
#[no_mangle]
pub extern "C" fn staunch_pool_host_stats(
    pool: *const staunch_pool,
    index: usize,
    out: *mut staunch_stats,
    endpoint: *mut c_char,
    endpoint_cap: usize,
    endpoint_len: *mut usize,
    is_writer: *mut bool,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live pool (header contract).
        let p = unsafe { arg(pool, "pool") }?;
        let out = Out::new(out, "out")?;
        let len = Out::new(endpoint_len, "endpoint_len")?;
        let hosts = p.pool.host_stats();
        let Some(h) = hosts.get(index) else {
            return Err(Failure::new(
                STAUNCH_INVALID_ARGUMENT,
                format!("index {index} is past the pool's {} hosts", hosts.len()),
            ));
        };
        let stats = staunch_stats::from(&h.stats);
        // SAFETY: non-NULL, and holds the caller's `size` bytes (contract).
        unsafe { copy_sized(out.ptr(), &stats, "staunch_stats") }?;
        if !is_writer.is_null() {
            // SAFETY: non-NULL, writable (contract).
            unsafe { is_writer.write(h.is_writer) };
        }
        // SAFETY: `endpoint` holds `endpoint_cap` bytes (header contract).
        unsafe { copy_text(&h.endpoint, endpoint, endpoint_cap, len) }
    })
}

/// Writes the pool's name (`pool_name`, or `staunch-N`) into `buf` as
/// `staunch_pool_metrics` writes its text (`snprintf`'s rules, `*len` the
/// name's length). Never blocks. Thread-safe.
#[no_mangle]
pub extern "C" fn staunch_pool_name(
    pool: *const staunch_pool,
    buf: *mut c_char,
    cap: usize,
    len: *mut usize,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live pool (header contract).
        let p = unsafe { arg(pool, "pool") }?;
        let len = Out::new(len, "len")?;
        // SAFETY: `buf` holds `cap` bytes (header contract).
        unsafe { copy_text(p.pool.name(), buf, cap, len) }
    })
}

/// Retires every current connection: idle ones now (in the background),
/// borrowed ones when they are released. New connections replace them on
/// demand. Use after a failover or a credentials change. Never blocks.
/// Thread-safe.
#[no_mangle]
pub extern "C" fn staunch_pool_soft_evict(
    pool: *mut staunch_pool,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live pool (header contract).
        let p = unsafe { arg(pool, "pool") }?;
        p.pool.soft_evict();
        Ok(())
    })
}

/// Changes the pool's max_size while it runs (per host, as the knob), e.g.
/// for HikariCP's `setMaximumPoolSize` or Go's `SetMaxOpenConns`. `size`
/// must be between 1 and the pool's max_size_cap (a knob fixed at open;
/// by default twice max_size, at least 64) and not below the current
/// min_idle; otherwise STAUNCH_INVALID_CONFIG naming the knob, and nothing
/// changes. Lowering it takes no borrowed connection away: connections above
/// the new size are closed as they are released (idle ones at once, in the
/// background), counted in `closed_evicted`; threads waiting in
/// staunch_pool_get get the connections released after that. Raising it has
/// connections made for threads waiting now. `staunch_stats.max_size` shows
/// the size in force (summed over the hosts of a topology pool). Never
/// blocks. Thread-safe.
#[no_mangle]
pub extern "C" fn staunch_pool_set_max_size(
    pool: *mut staunch_pool,
    size: u32,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live pool (header contract).
        let p = unsafe { arg(pool, "pool") }?;
        p.pool.set_max_size(size as usize)?;
        Ok(())
    })
}

/// Changes the pool's min_idle while it runs (per host), e.g. for HikariCP's
/// `setMinimumIdle`: between 0 and the current max_size, otherwise
/// STAUNCH_INVALID_CONFIG naming the knob, and nothing changes. Connections
/// up to a raised min_idle are made in the background; those above a lowered
/// one retire after idle_timeout. Never blocks. Thread-safe.
#[no_mangle]
pub extern "C" fn staunch_pool_set_min_idle(
    pool: *mut staunch_pool,
    min_idle: u32,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live pool (header contract).
        let p = unsafe { arg(pool, "pool") }?;
        p.pool.set_min_idle(min_idle as usize)?;
        Ok(())
    })
}

/// Suspends the pool (HikariCP's `suspendPool`): staunch_pool_get and the
/// calls that borrow wait, each within its own timeout (and cancellable as
/// it is), until `staunch_pool_resume`; staunch_pool_try_get finds nothing.
/// Borrowed connections are unaffected, and no connection is made
/// meanwhile. Idempotent. Never blocks. Thread-safe.
#[no_mangle]
pub extern "C" fn staunch_pool_suspend(
    pool: *mut staunch_pool,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live pool (header contract).
        let p = unsafe { arg(pool, "pool") }?;
        p.pool.suspend();
        Ok(())
    })
}

/// Ends a `staunch_pool_suspend`: waiting borrowers proceed. Idempotent (a
/// pool not suspended is left as it is). Never blocks. Thread-safe.
#[no_mangle]
pub extern "C" fn staunch_pool_resume(
    pool: *mut staunch_pool,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live pool (header contract).
        let p = unsafe { arg(pool, "pool") }?;
        p.pool.resume();
        Ok(())
    })
}

/// Closes the pool: threads waiting in staunch_pool_get fail with
/// STAUNCH_CLOSED, connects in flight are cut off, idle connections are closed
/// now, borrowed ones when released (using them meanwhile gives
/// STAUNCH_CLOSED). A connection a pool thread holds at that moment (a
/// keepalive check, a new connection being added) is closed by that thread,
/// and this waits for it, at most `validation_timeout` + 1 s: when it
/// returns, only borrowed connections are open. Idempotent; the handle stays
/// valid (for stats) until `staunch_pool_free`. Does not wait for the pool's
/// threads to exit, which they do promptly on their own; closing idle
/// connections sends each a goodbye packet, bounded by the socket timeouts.
/// Thread-safe.
#[no_mangle]
pub extern "C" fn staunch_pool_close(
    pool: *mut staunch_pool,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live pool (header contract).
        let p = unsafe { arg(pool, "pool") }?;
        p.pool.close();
        Ok(())
    })
}

/// This pool's number among the pools the process opened (from 1; the
/// `pool_id` of its events), 0 for NULL. Never blocks; any thread.
#[no_mangle]
pub extern "C" fn staunch_pool_id(pool: *const staunch_pool) -> u64 {
    guard_value(0, || {
        // SAFETY: NULL or a live pool (header contract).
        unsafe { pool.as_ref() }.map_or(0, |p| p.id)
    })
}

/// Closes the pool (as `staunch_pool_close`) and frees the handle. NULL is a
/// no-op. Connections still borrowed stay valid handles: they report
/// STAUNCH_CLOSED on use and must still be freed with `staunch_conn_free`.
/// A row set streaming from `staunch_pool_query` holds its connection the
/// same way: its rows still read, and it must still be freed.
///
/// It first waits until the pool's threads have exited (joined), normally
/// well under a millisecond, at most 1 s (a connect stuck where it cannot be
/// cut off, such as a host name lookup, is left to finish on its own); their
/// events until then reach the callback. Once this returns, the event
/// callback is not called again for this pool (it waits for callbacks
/// running on other threads to return), and, unless connection handles of
/// the pool (or such row sets) are left, nothing of the pool runs any
/// more. Must be the last call on this pool handle, and must not run
/// concurrently with other calls on it.
#[no_mangle]
pub extern "C" fn staunch_pool_free(pool: *mut staunch_pool) {
    guard_value((), || {
        if pool.is_null() {
            return;
        }
        // SAFETY: created by staunch_pool_open*, freed once (contract).
        let core = unsafe { Box::from_raw(pool) };
        // The pool's threads exit once it is closed, borrowed connections or
        // not; the callback gate stays open until they have, so that the
        // events of their last moments (a connect completing as it closed)
        // still reach the callback. Connection handles still out keep the
        // rest of the pool (and the listener) alive until they are freed.
        free(*core);
    })
}

fn free(core: staunch_pool) {
    core.pool.close_and_join(THREADS_EXIT_WAIT);
    core.listener.shut();
}

/// `staunch_pool_free` for a caller that must not block (a garbage
/// collector's finalizer, a thread holding its runtime's lock that an event
/// callback may need): frees the handle and returns at once; a thread of
/// its own closes the pool, waits for its threads and shuts the event
/// callback as `staunch_pool_free` does. Until then events may still reach
/// the callback: the callback's finalizer, which runs after its last call,
/// is the sign it is over. NULL is a no-op. Must be the last call on the
/// pool handle. (If the system cannot start a thread, it does the work
/// itself, as `staunch_pool_free`.)
#[no_mangle]
pub extern "C" fn staunch_pool_free_nowait(pool: *mut staunch_pool) {
    guard_value((), || {
        if pool.is_null() {
            return;
        }
        // SAFETY: created by staunch_pool_open*, freed once (contract).
        let core = unsafe { Box::from_raw(pool) };
        let slot = Arc::new(std::sync::Mutex::new(Some(*core)));
        let theirs = slot.clone();
        let spawned = std::thread::Builder::new()
            .name("staunch-free".into())
            .spawn(move || {
                if let Some(core) = crate::sync::lock(&theirs).take() {
                    free(core);
                }
            });
        if spawned.is_err() {
            if let Some(core) = crate::sync::lock(&slot).take() {
                free(core);
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ffi::events::{staunch_event, STAUNCH_EVENT_CONNECT_FAILED};
    use crate::ffi::options::*;
    use crate::ffi::*;
    use std::ffi::{c_void, CStr, CString};
    use std::ptr;
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    use std::time::Instant;

    static FAILED: AtomicUsize = AtomicUsize::new(0);
    static FINALIZED: AtomicUsize = AtomicUsize::new(0);

    unsafe extern "C" fn on_event(ev: *const staunch_event, _: *mut c_void) {
        // SAFETY: valid during the callback.
        let ev = unsafe { &*ev };
        if ev.kind == STAUNCH_EVENT_CONNECT_FAILED {
            FAILED.fetch_add(1, SeqCst);
        }
    }
    unsafe extern "C" fn fin(_: *mut c_void) {
        FINALIZED.fetch_add(1, SeqCst);
    }

    /// A refused port: get fails UNREACHABLE in bounded time, the callback
    /// sees the failures, and the finalizer runs once, at staunch_pool_free.
    #[test]
    #[cfg_attr(miri, ignore = "real sockets: Miri does not emulate connect")]
    fn refused_port_is_unreachable_and_callback_lifecycle() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let url = CString::new(format!(
            "mysql://u@127.0.0.1:{port}/db?connect_timeout=200ms&max_size=1"
        ))
        .unwrap();
        let mut opts = ptr::null_mut();
        assert_eq!(staunch_options_new(&mut opts, ptr::null_mut()), STAUNCH_OK);
        assert_eq!(
            staunch_options_set_url(opts, url.as_ptr(), ptr::null_mut()),
            STAUNCH_OK
        );
        let st = staunch_options_set_event_callback(
            opts,
            Some(on_event),
            ptr::null_mut(),
            Some(fin),
            ptr::null_mut(),
        );
        assert_eq!(st, STAUNCH_OK);
        let mut pool = ptr::null_mut();
        assert_eq!(
            staunch_pool_open_options(opts, &mut pool, ptr::null_mut()),
            STAUNCH_OK
        );
        staunch_options_free(opts);
        assert_eq!(
            FINALIZED.load(SeqCst),
            0,
            "the pool still uses the callback"
        );

        let mut conn = ptr::null_mut();
        let mut err = ptr::null_mut();
        let t0 = Instant::now();
        assert_eq!(
            staunch_pool_get(pool, 300, &mut conn, &mut err),
            STAUNCH_UNREACHABLE
        );
        assert!(t0.elapsed() < Duration::from_secs(2));
        assert!(conn.is_null());
        // SAFETY: a live error object.
        let msg = unsafe { CStr::from_ptr(staunch_error_message(err)) };
        assert!(
            msg.to_str().unwrap().contains(&format!("127.0.0.1:{port}")),
            "{msg:?}"
        );
        staunch_error_free(err);
        assert!(FAILED.load(SeqCst) >= 1);

        let mut stats = staunch_stats {
            size: std::mem::size_of::<staunch_stats>(),
            ..staunch_stats::default()
        };
        assert_eq!(
            staunch_pool_stats(pool, &mut stats, ptr::null_mut()),
            STAUNCH_OK
        );
        assert_eq!((stats.total, stats.acquire_timeouts), (0, 1));
        staunch_pool_free(pool);
        assert_eq!(FINALIZED.load(SeqCst), 1);
        staunch_pool_free(ptr::null_mut());
    }

    #[test]
    fn null_and_bad_arguments() {
        let mut pool = ptr::null_mut();
        assert_eq!(
            staunch_pool_open(ptr::null(), &mut pool, ptr::null_mut()),
            STAUNCH_NULL_ARGUMENT
        );
        let url = CString::new("postgres://h/db").unwrap();
        assert_eq!(
            staunch_pool_open(url.as_ptr(), &mut pool, ptr::null_mut()),
            STAUNCH_INVALID_CONFIG
        );
        assert!(pool.is_null());
        let mut conn = ptr::null_mut();
        assert_eq!(
            staunch_pool_get(ptr::null_mut(), 10, &mut conn, ptr::null_mut()),
            STAUNCH_NULL_ARGUMENT
        );
        let url = CString::new("mysql://u@127.0.0.1:1/db").unwrap();
        assert_eq!(
            staunch_pool_open(url.as_ptr(), &mut pool, ptr::null_mut()),
            STAUNCH_OK
        );
        // A NULL out-parameter is caught before anything is borrowed.
        assert_eq!(
            staunch_pool_get(pool, 10, ptr::null_mut(), ptr::null_mut()),
            STAUNCH_NULL_ARGUMENT
        );
        assert_eq!(
            staunch_pool_stats(pool, ptr::null_mut(), ptr::null_mut()),
            STAUNCH_NULL_ARGUMENT
        );
        assert_eq!(staunch_pool_close(pool, ptr::null_mut()), STAUNCH_OK);
        assert_eq!(staunch_pool_close(pool, ptr::null_mut()), STAUNCH_OK);
        assert_eq!(
            staunch_pool_try_get(pool, &mut conn, ptr::null_mut()),
            STAUNCH_CLOSED
        );
        staunch_pool_free(pool);
        assert_eq!(
            staunch_conn_ping(ptr::null_mut(), ptr::null_mut()),
            STAUNCH_NULL_ARGUMENT
        );
        staunch_conn_free(ptr::null_mut());
    }
}
