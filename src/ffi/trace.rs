//! The tracer callback: a start and an end of each acquire and statement,
//! on the thread that borrows or runs it (see `staunch_options_set_tracer`).

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use super::error::{staunch_error, staunch_status};
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
    /// At an end that failed: the error's text; else NULL.
    pub error: *const c_char,
    pub error_len: usize,
}

/// The tracer callback type.
pub type staunch_trace_callback =
    Option<unsafe extern "C" fn(event: *const staunch_trace_event, user_data: *mut c_void)>;

/// A C tracer; runs its finalizer when the last pool or connection using it
/// is gone.
pub(crate) struct FfiTracer {
    cb: unsafe extern "C" fn(*const staunch_trace_event, *mut c_void),
    user_data: *mut c_void,
    finalizer: staunch_finalizer,
}

// SAFETY: the header requires the callback (and finalizer) to be callable
// from any thread with this user_data; staunch never dereferences it.
unsafe impl Send for FfiTracer {}
// SAFETY: as above; calls may happen concurrently, which the header states.
unsafe impl Sync for FfiTracer {}

impl Drop for FfiTracer {
    fn drop(&mut self) {
        if let Some(f) = self.finalizer {
            // SAFETY: the C caller's function, called once, as documented.
            unsafe { f(self.user_data) };
        }
    }
}

fn text(s: Option<&str>) -> (*const c_char, usize) {
    s.map_or((std::ptr::null(), 0), |s| (s.as_ptr().cast(), s.len()))
}

impl Tracer for FfiTracer {
    fn trace(&self, e: &TraceEvent<'_>) {
        let (statement, statement_len) = text(e.statement);
        let (error, error_len) = text(e.error);
        let ev = staunch_trace_event {
            kind: match e.kind {
                TraceKind::AcquireStart => STAUNCH_TRACE_ACQUIRE_START,
                TraceKind::AcquireEnd => STAUNCH_TRACE_ACQUIRE_END,
                TraceKind::StatementStart => STAUNCH_TRACE_STATEMENT_START,
                TraceKind::StatementEnd => STAUNCH_TRACE_STATEMENT_END,
            },
            error_code: u32::from(e.error_code),
            pool: e.pool.as_ptr().cast(),
            pool_len: e.pool.len(),
            server: e.server.as_ptr().cast(),
            server_len: e.server.len(),
            connection_id: e.connection_id,
            statement,
            statement_len,
            duration_us: e.duration.as_micros().min(u128::from(u64::MAX)) as u64,
            error,
            error_len,
        };
        // SAFETY: the caller's callback with its user_data; `ev` and the
        // strings it points into outlive the call.
        unsafe { (self.cb)(&ev, self.user_data) };
    }
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
    guard(err, || {
        // SAFETY: NULL or a live options object (header contract).
        let o = unsafe { arg_mut(opts, "opts") }?;
        let new: Option<Arc<dyn Tracer>> = match callback {
            Some(cb) => Some(Arc::new(FfiTracer {
                cb,
                user_data,
                finalizer,
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
