//! The tracer callback: a start and an end of each acquire and statement,
//! on the thread that borrows or runs it (see `staunch_options_set_tracer`),
//! during the call, or kept on that thread until it flushes them
//! (`STAUNCH_TRACE_DEFERRED`).

use std::cell::RefCell;
use std::ffi::{c_char, c_void};
use std::ops::Range;
use std::sync::Arc;
use std::time::Instant;

use super::error::{staunch_error, staunch_status, Failure, STAUNCH_INVALID_ARGUMENT};
use super::events::staunch_finalizer;
use super::options::staunch_options;
use super::{arg_mut, guard};
use crate::trace::{TraceEvent, TraceKind, Tracer};

/// What a `staunch_trace_event` reports: one of the STAUNCH_TRACE_* values.
pub type staunch_trace_kind = u32;
/// A borrow begins (before any wait).
pub const STAUNCH_TRACE_ACQUIRE_START: staunch_trace_kind = 1;
/// The borrow ended: with a connection (`connection_id`, `server`), or
/// failed (`error`).
pub const STAUNCH_TRACE_ACQUIRE_END: staunch_trace_kind = 2;
/// A statement is about to be sent on a borrowed connection.
pub const STAUNCH_TRACE_STATEMENT_START: staunch_trace_kind = 3;
/// Its answer was read to its end, or it failed (`error`). A streamed
/// answer ends when it is read to its end or its row set freed.
pub const STAUNCH_TRACE_STATEMENT_END: staunch_trace_kind = 4;

/// One start or end (see `staunch_options_set_tracer`). The library owns
/// it and its strings, valid only during the callback: copy what you keep.
/// Strings are UTF-8 given as pointer and length, without a NUL.
#[repr(C)]
#[derive(Debug)]
pub struct staunch_trace_event {
    /// One of the STAUNCH_TRACE_* values.
    pub kind: staunch_trace_kind,
    /// At an end that failed with a server error: its number; else 0.
    pub error_code: u32,
    /// The pool's name (`pool_name`, or `staunch-N`).
    pub pool: *const c_char,
    pub pool_len: usize,
    /// The server's `host:port` (or socket path); empty at ACQUIRE_START
    /// and at a failed ACQUIRE_END.
    pub server: *const c_char,
    pub server_len: usize,
    /// The connection's number in the pool (`staunch_conn_id`), 0 if none.
    pub connection_id: u64,
    /// The statement's text at STATEMENT_START and STATEMENT_END, NULL when
    /// it has none here (a prepared statement's execute). It may hold what
    /// the application put in it: record it only where the user opted in.
    pub statement: *const c_char,
    pub statement_len: usize,
    /// At an end: microseconds since its start; else 0.
    pub duration_us: u64,
    /// At an end that failed: the error's text; else NULL. A server's may
    /// quote the statement or a value (1064, 1062): record it only where the
    /// statement's text is.
    pub error: *const c_char,
    pub error_len: usize,
    /// Microseconds between the event and this callback (since 1.12.0): 0
    /// unless the tracer is deferred (`STAUNCH_TRACE_DEFERRED`), whose
    /// events wait for `staunch_trace_flush`. The event happened this long
    /// before the callback, on the same thread.
    pub held_us: u64,
}

/// A flag of `staunch_options_set_tracer_ex`: events are kept on the thread
/// that raises them, not delivered during the call, until that thread calls
/// `staunch_trace_flush` (each with `held_us`). For hosts that must take a
/// lock of their own to run a callback (Python's GIL): they run the
/// callbacks where they hold it anyway, after the call.
pub const STAUNCH_TRACE_DEFERRED: u32 = 1;

/// The tracer callback type.
pub type staunch_trace_callback =
    Option<unsafe extern "C" fn(event: *const staunch_trace_event, user_data: *mut c_void)>;

/// A C tracer's callback; runs its finalizer when the last pool, connection
/// or kept event using it is gone.
struct Callback {
    cb: unsafe extern "C" fn(*const staunch_trace_event, *mut c_void),
    user_data: *mut c_void,
    finalizer: staunch_finalizer,
}

// SAFETY: the header requires the callback (and finalizer) to be callable
// from any thread with this user_data; staunch never dereferences it.
unsafe impl Send for Callback {}
// SAFETY: as above; calls may happen concurrently, which the header states.
unsafe impl Sync for Callback {}

impl Drop for Callback {
    fn drop(&mut self) {
        if let Some(f) = self.finalizer {
            // SAFETY: the C caller's function, called once, as documented.
            unsafe { f(self.user_data) };
        }
    }
}

impl Callback {
    fn call(&self, ev: &staunch_trace_event) {
        // SAFETY: the caller's callback with its user_data; `ev` and the
        // strings it points into outlive the call.
        unsafe { (self.cb)(ev, self.user_data) };
    }
}

/// A C tracer: its callback, called during the call or kept for a flush.
pub(crate) struct FfiTracer {
    callback: Arc<Callback>,
    deferred: bool,
}

fn text(s: Option<&str>) -> (*const c_char, usize) {
    s.map_or((std::ptr::null(), 0), |s| (s.as_ptr().cast(), s.len()))
}

fn kind_of(kind: TraceKind) -> staunch_trace_kind {
    match kind {
        TraceKind::AcquireStart => STAUNCH_TRACE_ACQUIRE_START,
        TraceKind::AcquireEnd => STAUNCH_TRACE_ACQUIRE_END,
        TraceKind::StatementStart => STAUNCH_TRACE_STATEMENT_START,
        TraceKind::StatementEnd => STAUNCH_TRACE_STATEMENT_END,
    }
}

fn micros(d: std::time::Duration) -> u64 {
    d.as_micros().min(u128::from(u64::MAX)) as u64
}

impl Tracer for FfiTracer {
    fn trace(&self, e: &TraceEvent<'_>) {
        if self.deferred && keep(&self.callback, e) {
            return;
        }
        let (statement, statement_len) = text(e.statement);
        let (error, error_len) = text(e.error);
        self.callback.call(&staunch_trace_event {
            kind: kind_of(e.kind),
            error_code: u32::from(e.error_code),
            pool: e.pool.as_ptr().cast(),
            pool_len: e.pool.len(),
            server: e.server.as_ptr().cast(),
            server_len: e.server.len(),
            connection_id: e.connection_id,
            statement,
            statement_len,
            duration_us: micros(e.duration),
            error,
            error_len,
            held_us: 0,
        });
    }
}

// --- deferred events -----------------------------------------------------------------

/// A deferred event as kept until its thread flushes: its strings are
/// ranges of the thread's one text buffer, so keeping one allocates
/// nothing once the buffers have grown.
struct Kept {
    callback: Arc<Callback>,
    kind: staunch_trace_kind,
    error_code: u32,
    connection_id: u64,
    duration_us: u64,
    at: Instant,
    pool: Range<usize>,
    server: Range<usize>,
    statement: Option<Range<usize>>,
    error: Option<Range<usize>>,
}

#[derive(Default)]
struct KeptQueue {
    events: Vec<Kept>,
    text: Vec<u8>,
}

/// How many events, and bytes of their text, a thread keeps: past either,
/// the event is kept and the whole queue delivered at once (in the call:
/// late, but in order, and nothing lost to a host that forgets to flush).
const KEPT_EVENTS: usize = 1024;
const KEPT_TEXT: usize = 1 << 20;

thread_local! {
    static KEPT: RefCell<KeptQueue> = RefCell::new(KeptQueue::default());
}

/// Keeps `e` on this thread for `staunch_trace_flush`; false when it cannot
/// (the thread is ending, or a callback raised an event while its queue was
/// being delivered): the caller delivers it at once.
fn keep(callback: &Arc<Callback>, e: &TraceEvent<'_>) -> bool {
    let full = KEPT.try_with(|q| {
        let Ok(mut q) = q.try_borrow_mut() else {
            return None;
        };
        let q = &mut *q;
        let mut put = |s: &str| {
            let at = q.text.len();
            q.text.extend_from_slice(s.as_bytes());
            at..q.text.len()
        };
        let pool = put(e.pool);
        let server = put(e.server);
        let statement = e.statement.map(&mut put);
        let error = e.error.map(&mut put);
        q.events.push(Kept {
            callback: Arc::clone(callback),
            kind: kind_of(e.kind),
            error_code: u32::from(e.error_code),
            connection_id: e.connection_id,
            duration_us: micros(e.duration),
            at: Instant::now(),
            pool,
            server,
            statement,
            error,
        });
        Some(q.events.len() >= KEPT_EVENTS || q.text.len() >= KEPT_TEXT)
    });
    match full {
        Ok(Some(full)) => {
            if full {
                flush();
            }
            true
        }
        _ => false,
    }
}

/// Delivers this thread's kept events, in order; returns how many.
fn flush() -> usize {
    let taken = KEPT.try_with(|q| q.try_borrow_mut().ok().map(|mut q| std::mem::take(&mut *q)));
    let Ok(Some(mut q)) = taken else {
        return 0;
    };
    let n = q.events.len();
    let now = Instant::now();
    let at = |r: &Range<usize>| -> (*const c_char, usize) {
        (q.text[r.clone()].as_ptr().cast(), r.len())
    };
    for k in &q.events {
        let (pool, pool_len) = at(&k.pool);
        let (server, server_len) = at(&k.server);
        let (statement, statement_len) = k.statement.as_ref().map_or((std::ptr::null(), 0), at);
        let (error, error_len) = k.error.as_ref().map_or((std::ptr::null(), 0), at);
        k.callback.call(&staunch_trace_event {
            kind: k.kind,
            error_code: k.error_code,
            pool,
            pool_len,
            server,
            server_len,
            connection_id: k.connection_id,
            statement,
            statement_len,
            duration_us: k.duration_us,
            error,
            error_len,
            held_us: micros(now.saturating_duration_since(k.at)),
        });
    }
    // The callbacks may be released here (a finalizer runs): after the
    // deliveries, outside the queue's borrow.
    q.events.clear();
    q.text.clear();
    // Keep the grown buffers for the next events, unless some came meanwhile.
    let _ = KEPT.try_with(|cur| {
        if let Ok(mut cur) = cur.try_borrow_mut() {
            if cur.events.is_empty() && cur.events.capacity() == 0 {
                *cur = q;
            }
        }
    });
    n
}

/// Delivers the trace events this thread raised for deferred tracers
/// (`STAUNCH_TRACE_DEFERRED`) and has not delivered yet, in the order they
/// happened, each to its tracer's callback on this thread, with `held_us`
/// saying how long ago it happened; returns how many (0 when there were
/// none: cheap enough to call after every call into the library).
///
/// A host calls it after each call that may raise one (a borrow, a
/// statement, a fetch, a commit or rollback, a return), where it can run
/// its callbacks. A thread keeps at most 1,024 events (or 1 MiB of their
/// text); past that they are delivered during the call that raises the
/// next one. Events a thread never flushes are dropped when it ends.
/// Never blocks (besides the callbacks); any thread, but only its own
/// events.
#[no_mangle]
pub extern "C" fn staunch_trace_flush() -> usize {
    // Nothing may unwind into C: a panic here (none is expected) loses the
    // events rather than the process.
    std::panic::catch_unwind(flush).unwrap_or(0)
}

/// Sets the tracer of the pools opened from these options (replacing any
/// previous one): `callback` hears the start and the end of every borrow
/// (`staunch_pool_get` and its variants, `staunch_pool_query`) and of every
/// statement on a borrowed connection, in order, **on the thread that
/// borrows or runs it**, during that call: a start and its end come in
/// pairs, so a host can open a span at the start and close it at the end
/// (OpenTelemetry's database conventions: the pool's name, `server`, the
/// statement's text behind the user's opt-in, the error). Without a tracer
/// nothing is called or measured.
///
/// It must be quick and must not call staunch functions on the pool or the
/// connection concerned (it runs between the library's steps, never under
/// its lock). Several threads may call it at once.
///
/// On success, ownership of `user_data` passes to staunch: `finalizer` (may
/// be NULL) is called exactly once with it when nothing can call `callback`
/// again: after staunch_options_free, and staunch_pool_free of every pool
/// opened from these options, and `staunch_conn_free` of every connection
/// borrowed from them. A NULL `callback` removes the tracer; `finalizer` is
/// then called at once. On failure (NULL `opts`) the finalizer is not
/// called. Never blocks; one thread at a time per options object.
#[no_mangle]
pub extern "C" fn staunch_options_set_tracer(
    opts: *mut staunch_options,
    callback: staunch_trace_callback,
    user_data: *mut c_void,
    finalizer: staunch_finalizer,
    err: *mut *mut staunch_error,
) -> staunch_status {
    staunch_options_set_tracer_ex(opts, callback, user_data, finalizer, 0, err)
}

/// `staunch_options_set_tracer` with `flags` (since 1.12.0): 0, or
/// `STAUNCH_TRACE_DEFERRED`: the events are not delivered during the call
/// that raises them but kept on its thread until it calls
/// `staunch_trace_flush` (their `held_us` says how long they waited). An
/// unknown flag is refused (STAUNCH_INVALID_ARGUMENT; the finalizer is not
/// called). Never blocks; one thread at a time per options object.
#[no_mangle]
pub extern "C" fn staunch_options_set_tracer_ex(
    opts: *mut staunch_options,
    callback: staunch_trace_callback,
    user_data: *mut c_void,
    finalizer: staunch_finalizer,
    flags: u32,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live options object (header contract).
        let o = unsafe { arg_mut(opts, "opts") }?;
        if flags & !STAUNCH_TRACE_DEFERRED != 0 {
            return Err(Failure::new(
                STAUNCH_INVALID_ARGUMENT,
                format!(
                    "staunch_options_set_tracer_ex: unknown flags {flags:#x} (see STAUNCH_TRACE_*)"
                ),
            ));
        }
        let new: Option<Arc<dyn Tracer>> = match callback {
            Some(cb) => Some(Arc::new(FfiTracer {
                callback: Arc::new(Callback {
                    cb,
                    user_data,
                    finalizer,
                }),
                deferred: flags & STAUNCH_TRACE_DEFERRED != 0,
            })),
            None => {
                if let Some(f) = finalizer {
                    // SAFETY: the caller's finalizer with its user_data, once.
                    unsafe { f(user_data) };
                }
                None
            }
        };
        // Dropping the old one may run its finalizer.
        drop(std::mem::replace(&mut o.builder.tracer, new));
        Ok(())
    })
}
