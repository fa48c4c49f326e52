//! `staunch_conn`: a borrowed connection, its statements, transactions,
//! cancellation and time limit.

use std::ffi::{c_char, c_int};
use std::sync::{Arc, Mutex, TryLockError};
use std::time::Duration;

use super::error::*;
use super::rows::{staunch_batch, staunch_rows};
use super::values::{staunch_param, to_params};
use super::{arg, arg_str, copy_sized, guard, guard_value, set_opt, Out, STAUNCH_TIMEOUT_DEFAULT};
use crate::client::answer::Sets;
use crate::client::rows::{Answer, SendAs, Summary};
use crate::client::stream::Stream;
use crate::client::{CancelHandle, PooledConn, Report, StatementError, Way};
use crate::error::Error;
use crate::sync::lock;
use crate::wire::WireError;
use crate::Pool;
use crate::{AccessMode, IsolationLevel, TxOpts};

/// A connection borrowed from a pool by `staunch_pool_get`. Give it back with
/// `staunch_conn_release` (the handle stays, unusable) or `staunch_conn_free`
/// (returns it if needed and frees the handle). May move between threads but
/// is used by one thread at a time: a call made while another thread is inside
/// a call on the same connection fails with STAUNCH_CONN_BUSY. The one
/// exception is `staunch_conn_cancel`, made to be called from another thread
/// while a statement runs.
pub struct staunch_conn {
    /// The pool it came from, to report STAUNCH_CLOSED once it is closed.
    pool: Pool,
    /// Where the connection is.
    home: Arc<Home>,
    /// Cancels the statement running on it, from any thread.
    cancel: CancelHandle,
    /// The pool-wide number of the connection (as in events).
    id: u64,
    /// What the last statement did (`staunch_conn_last_result`).
    last: Mutex<Done>,
}

/// What a statement did, as its closing packets said.
#[derive(Debug, Default, Clone)]
pub(crate) struct Done {
    pub(crate) affected_rows: u64,
    pub(crate) last_insert_id: u64,
    pub(crate) warnings: u32,
    /// The server's info string ("Rows matched: 1  Changed: 1 ..."), NUL
    /// terminated; None for none (most statements: no allocation for it).
    pub(crate) info: Option<std::ffi::CString>,
}

/// Where a handle's connection is: locked (`try_lock`) for the length of
/// each call; a streaming row set holds the connection meanwhile and gives
/// it back here.
pub(crate) struct Home {
    slot: Mutex<Held>,
}

enum Held {
    Ready(PooledConn),
    /// A statement was sent by `staunch_conn_query_send` and awaits
    /// `staunch_conn_query_recv`.
    Sent(PooledConn),
    /// A streaming row set has it.
    Streaming,
    Released,
}

impl Home {
    /// A streaming row set is done with the connection: back to the handle,
    /// or to the pool if the handle was released meanwhile (outside the
    /// lock: returning it may do I/O).
    pub(crate) fn give_back(&self, conn: PooledConn) {
        let mut g = lock(&self.slot);
        let surplus = match &*g {
            Held::Streaming => {
                *g = Held::Ready(conn);
                None
            }
            _ => Some(conn),
        };
        drop(g);
        drop(surplus);
    }
}

impl std::fmt::Debug for staunch_conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("staunch_conn")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl staunch_conn {
    pub(crate) fn new_raw(pool: &Pool, conn: PooledConn) -> *mut staunch_conn {
        Box::into_raw(Box::new(staunch_conn {
            pool: pool.clone(),
            cancel: conn.cancel_handle(),
            id: conn.id(),
            last: Mutex::new(Done::default()),
            home: Arc::new(Home {
                slot: Mutex::new(Held::Ready(conn)),
            }),
        }))
    }

    /// Locks the slot for a call (a poisoned one, after a caught panic, is
    /// marked broken: the session may be mid-result).
    fn lock(&self) -> Result<std::sync::MutexGuard<'_, Held>, Failure> {
        match self.home.slot.try_lock() {
            Ok(g) => Ok(g),
            Err(TryLockError::Poisoned(p)) => {
                let mut g = p.into_inner();
                if let Held::Ready(c) | Held::Sent(c) = &mut *g {
                    c.marks().mark_broken();
                }
                Ok(g)
            }
            Err(TryLockError::WouldBlock) => Err(Failure::new(
                STAUNCH_CONN_BUSY,
                "the connection is in use by another thread (a staunch_conn is used by one thread at a time)",
            )),
        }
    }

    /// Runs `f` on the borrowed connection, after the checks every statement
    /// makes: not busy, not streaming, not released, pool not closed.
    fn with<T>(&self, f: impl FnOnce(&mut PooledConn) -> Result<T, Failure>) -> Result<T, Failure> {
        let mut g = self.lock()?;
        match &mut *g {
            Held::Ready(conn) => {
                if self.pool.is_closed() {
                    return Err(closed());
                }
                f(conn)
            }
            Held::Sent(..) => Err(awaiting()),
            Held::Streaming => Err(streaming()),
            Held::Released => Err(released()),
        }
    }

    /// Takes the connection out for a streaming row set.
    fn take_for_stream(&self) -> Result<PooledConn, Failure> {
        let mut g = self.lock()?;
        if let Held::Ready(_) = &*g {
            if self.pool.is_closed() {
                return Err(closed());
            }
            match std::mem::replace(&mut *g, Held::Streaming) {
                Held::Ready(c) => return Ok(c),
                _ => unreachable!("checked above"),
            }
        }
        Err(match &*g {
            Held::Streaming => streaming(),
            Held::Sent(..) => awaiting(),
            _ => released(),
        })
    }
}

fn awaiting() -> Failure {
    Failure::new(
        STAUNCH_CONN_BUSY,
        "a statement sent by staunch_conn_query_send awaits staunch_conn_query_recv",
    )
}

fn closed() -> Failure {
    Failure::new(
        STAUNCH_CLOSED,
        "the pool of this connection was closed: free the connection (staunch_conn_free)",
    )
}

fn streaming() -> Failure {
    Failure::new(
        STAUNCH_CONN_BUSY,
        "the connection is busy with a streaming row set: read it to the end or free it \
         (staunch_rows_free) first",
    )
}

fn released() -> Failure {
    Failure::new(
        STAUNCH_USE_AFTER_RELEASE,
        "the connection was released (staunch_conn_release): only staunch_conn_free may be called on it",
    )
}

fn wire_failure(context: &str, e: &WireError) -> Failure {
    Failure::from(Error::from_wire(context, e))
}

/// A statement refused before or at its sending, as a C status.
pub(super) fn statement_failure(context: &str, e: StatementError) -> Failure {
    match e {
        StatementError::Wire(e) => wire_failure(context, &e),
        StatementError::Failed(e) => Failure::from(e),
        e @ StatementError::ParamCount { .. } => Failure::new(STAUNCH_PARAM_COUNT, e.message()),
        e @ (StatementError::Param(_)
        | StatementError::TooLarge { .. }
        | StatementError::TextWithParams) => Failure::new(STAUNCH_INVALID_ARGUMENT, e.message()),
    }
}

impl Done {
    /// What the sets of a buffered answer did (see `Summary`).
    fn of(sets: &Sets) -> Done {
        let s = Summary::of(sets);
        Done {
            affected_rows: s.affected_rows,
            last_insert_id: s.last_insert_id,
            warnings: s.warnings,
            info: s.info.map(to_cstring_bytes),
        }
    }
}

/// What a statement run by `staunch_conn_execute` did, and the session's
/// state after it: filled by `staunch_conn_last_result` (set `size` to
/// `sizeof(staunch_result)` first; fields added later go at the end).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct staunch_result {
    /// The caller's `sizeof(staunch_result)`.
    pub size: usize,
    /// Rows affected (summed over the result sets of a multi-statement).
    pub affected_rows: u64,
    /// The last AUTO_INCREMENT id generated, or 0.
    pub last_insert_id: u64,
    /// Warnings raised (read them with `SHOW WARNINGS`).
    pub warnings: u32,
    /// A transaction is open in the session, as the server last reported
    /// (explicit, implicit under autocommit=0, or LOCK TABLES).
    pub in_transaction: bool,
    /// `autocommit` is on in the session, as the server last reported.
    pub autocommit: bool,
    /// The server's info string for the statement ("Rows matched: 1
    /// Changed: 1 Warnings: 0", "Records: 3 Duplicates: 0 ..."), "" if none:
    /// NUL-terminated, owned by the connection handle, valid until the next
    /// statement on it or its free.
    pub info: *const c_char,
}

impl Default for staunch_result {
    fn default() -> staunch_result {
        staunch_result {
            size: 0,
            affected_rows: 0,
            last_insert_id: 0,
            warnings: 0,
            in_transaction: false,
            autocommit: true,
            info: std::ptr::null(),
        }
    }
}

/// Runs a statement that returns no rows (INSERT, UPDATE, DDL, SET, ...; rows
/// a statement does return are read and discarded).
///
/// With `n_params` > 0 the values are bound to its `?` placeholders (wrong
/// count: STAUNCH_PARAM_COUNT), the pool's default way: prepared, or
/// interpolated by the library with the `interpolate_params` knob (see
/// STAUNCH_QUERY_INTERPOLATE); a statement the server refuses to prepare is
/// interpolated either way. With none it is sent as text, so any statement
/// works, including several separated by `;`.
/// `params` may be NULL when `n_params` is 0; it is only read during the
/// call. `affected_rows` and `last_insert_id` may be NULL; they are written on
/// success only. `staunch_conn_last_result` gives these and more.
///
/// Errors: STAUNCH_SERVER_ERROR (see staunch_error_server_code / _sqlstate;
/// the connection stays usable), STAUNCH_STATEMENT_TIMEOUT (past its time
/// limit: ended by the server, the connection stays usable; cut off by the
/// client when the server did not answer, the connection is then broken),
/// STAUNCH_CANCELLED (`staunch_conn_cancel`; the connection stays usable),
/// STAUNCH_IO_ERROR and STAUNCH_BROKEN (the connection is out of step:
/// every later call fails with STAUNCH_BROKEN, and it is closed on
/// release), parameter errors (1xx), STAUNCH_USE_AFTER_RELEASE,
/// STAUNCH_CLOSED (the pool was closed), STAUNCH_CONN_BUSY.
///
/// Blocks for the statement: as long as the server takes, or within the
/// connection's time limit (the query_timeout knob, or
/// `staunch_conn_set_timeout`): the server ends a statement at it; the
/// client cuts off one whose server did not answer 1 s later. One thread at
/// a time per connection (another thread gets STAUNCH_CONN_BUSY at once).
#[no_mangle]
pub extern "C" fn staunch_conn_execute(
    conn: *mut staunch_conn,
    sql: *const c_char,
    params: *const staunch_param,
    n_params: usize,
    affected_rows: *mut u64,
    last_insert_id: *mut u64,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live connection (header contract).
        let c = unsafe { arg(conn, "conn") }?;
        // SAFETY: NULL or a NUL-terminated string (header contract).
        let sql = unsafe { arg_str(sql, "sql") }?;
        // SAFETY: header contract on params.
        let params = unsafe { to_params(params, n_params) }?;
        let how = if n_params == 0 {
            SendAs::Text
        } else {
            SendAs::Default
        };
        let done = c.with(|pc| {
            pc.answer_sets(sql, &params, how)
                .map(|sets| Done::of(&sets))
                .map_err(|e| statement_failure("execute", e))
        })?;
        set_opt(affected_rows, done.affected_rows);
        set_opt(last_insert_id, done.last_insert_id);
        *lock(&c.last) = done;
        Ok(())
    })
}

/// What the last `staunch_conn_execute` on this connection did (see
/// `staunch_result`; zeros before the first one): set `out->size =
/// sizeof(staunch_result)` before the call; the fields that fit are written.
/// Never blocks. Same rules as `staunch_conn_execute` otherwise.
#[no_mangle]
pub extern "C" fn staunch_conn_last_result(
    conn: *mut staunch_conn,
    out: *mut staunch_result,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live connection (header contract).
        let c = unsafe { arg(conn, "conn") }?;
        let out = Out::new(out, "out")?;
        let (in_transaction, autocommit) =
            c.with(|pc| Ok((pc.in_transaction(), pc.autocommit())))?;
        let last = lock(&c.last);
        let r = staunch_result {
            size: std::mem::size_of::<staunch_result>(),
            affected_rows: last.affected_rows,
            last_insert_id: last.last_insert_id,
            warnings: last.warnings,
            in_transaction,
            autocommit,
            // Lives in the handle until the next statement replaces it.
            info: last
                .info
                .as_deref()
                .map_or(cstr!("").as_ptr(), std::ffi::CStr::as_ptr),
        };
        // SAFETY: `out` is non-NULL and holds at least its `size` field's
        // bytes (header contract).
        unsafe { copy_sized(out.ptr(), &r, "staunch_result") }
    })
}

/// `flags` of `staunch_conn_query_ex`: read the rows as they arrive instead
/// of whole. The row set then holds the connection (every other call on it
/// fails with STAUNCH_CONN_BUSY) until the first result set is read to its
/// end, the caller moves to the next result set, or the row set is freed.
pub const STAUNCH_QUERY_STREAM: u32 = 1;
/// `flags` of `staunch_conn_query_ex`: send the statement as text (the text
/// protocol), for statements MySQL cannot prepare (error 1295: some SHOW,
/// `CALL` of procedures with OUT parameters, ...); `n_params` must be 0.
/// Values still come typed by their columns.
pub const STAUNCH_QUERY_TEXT: u32 = 2;
/// `flags` of `staunch_conn_query_ex`: send the statement by client-side
/// interpolation whatever the pool's `interpolate_params` knob says: the
/// library writes each parameter into the text as a literal escaped for the
/// session's real state (its `sql_mode`'s NO_BACKSLASH_ESCAPES, as the
/// server's status flags report it; utf8mb4): bytes as `_binary X'..'`,
/// numbers in canonical form (doubles with an exponent, exact), decimals as
/// DECIMAL literals, dates as `DATE'..'`, date-times as `TIMESTAMP'..'`
/// with microseconds, times as `TIME'..'`. One round trip, over the text
/// protocol; values still come typed by their columns. A double that is
/// NaN or infinite fails with STAUNCH_INVALID_ARGUMENT.
pub const STAUNCH_QUERY_INTERPOLATE: u32 = 4;
/// `flags` of `staunch_conn_query_ex`: prepare the statement on the server
/// whatever the pool's `interpolate_params` knob says (a statement the
/// server refuses to prepare, error 1295 or a syntax error at prepare time,
/// is still sent interpolated). Not with STAUNCH_QUERY_INTERPOLATE.
pub const STAUNCH_QUERY_PREPARE: u32 = 8;

/// Runs a query and reads its answer into a row set (`?` placeholders take
/// `params`; the statement is prepared, or interpolated with the pool's
/// `interpolate_params` knob; one without parameters goes as text with the
/// `text_without_params` knob; values come typed either way):
/// `staunch_conn_query_ex` with no flags. Of a statement returning several
/// result sets (CALL), every one is kept: move on with
/// `staunch_rows_next_result`.
///
/// Errors, blocking and threads as for `staunch_conn_execute`; the whole
/// answer is held in memory (see `STAUNCH_QUERY_STREAM` for large ones).
#[no_mangle]
pub extern "C" fn staunch_conn_query(
    conn: *mut staunch_conn,
    sql: *const c_char,
    params: *const staunch_param,
    n_params: usize,
    out: *mut *mut staunch_rows,
    err: *mut *mut staunch_error,
) -> staunch_status {
    staunch_conn_query_ex(conn, sql, params, n_params, 0, out, err)
}

/// Runs a query and gives its answer as a row set: `*out` receives it;
/// iterate with `staunch_rows_next` / `staunch_rows_fetch`, free with
/// `staunch_rows_free`. `flags`: 0, or any of `STAUNCH_QUERY_STREAM`,
/// `STAUNCH_QUERY_TEXT`, and one of `STAUNCH_QUERY_INTERPOLATE` /
/// `STAUNCH_QUERY_PREPARE` (other bits, or both of those:
/// STAUNCH_INVALID_ARGUMENT). A buffered
/// row set owns its data: it stays valid after the connection is released or
/// freed. A streaming one holds the connection (see STAUNCH_QUERY_STREAM);
/// freeing the connection's handle first is fine: the connection goes back
/// to the pool when the row set is done with it.
///
/// Errors, blocking and threads as for `staunch_conn_execute`.
#[no_mangle]
pub extern "C" fn staunch_conn_query_ex(
    conn: *mut staunch_conn,
    sql: *const c_char,
    params: *const staunch_param,
    n_params: usize,
    flags: u32,
    out: *mut *mut staunch_rows,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        let out = Out::new(out, "out")?;
        // SAFETY: header contract on each argument.
        let rows =
            unsafe { run_query(conn, sql, params, n_params, flags, "staunch_conn_query_ex") }?;
        out.set(rows.into_raw());
        Ok(())
    })
}

/// Sends a text statement (no parameters: as `staunch_conn_query_ex` with
/// `STAUNCH_QUERY_TEXT`) without waiting for its answer, for a caller that
/// waits in its own event loop (Go's netpoller, epoll, io_uring) rather than
/// in a blocked thread. `*wait_fd` receives a socket that becomes readable
/// when the answer begins to arrive, or when the statement ends otherwise
/// (its time limit, the liveness check, `staunch_conn_cancel`: each of
/// these cuts or answers on it, so a wait on it is bounded as a statement
/// is); -1 when there is nothing to wait for (the answer is read in
/// already). Over TLS too: the socket under it is what turns readable. The fd is only to wait on: never read,
/// write, close it or change its flags; it stays open until the answer is
/// received. Watch it level- or edge-triggered: no byte is read from it
/// before `staunch_conn_query_recv`. Then call `staunch_conn_query_recv`
/// (it blocks for what has not arrived); meanwhile any other call on the
/// connection fails with STAUNCH_CONN_BUSY, except `staunch_conn_cancel`,
/// `staunch_conn_release` and `staunch_conn_free` (which read the answer
/// off). `flags`: 0 or STAUNCH_QUERY_TEXT. Since 1.5.
#[no_mangle]
pub extern "C" fn staunch_conn_query_send(
    conn: *mut staunch_conn,
    sql: *const c_char,
    flags: u32,
    wait_fd: *mut c_int,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        if flags & !STAUNCH_QUERY_TEXT != 0 {
            return Err(Failure::new(
                STAUNCH_INVALID_ARGUMENT,
                format!(
                    "staunch_conn_query_send: flags {flags:#x}: only STAUNCH_QUERY_TEXT is allowed"
                ),
            ));
        }
        // SAFETY: header contract on each argument; no parameters.
        unsafe {
            send_query(
                conn,
                sql,
                std::ptr::null(),
                0,
                STAUNCH_QUERY_TEXT,
                wait_fd,
                "staunch_conn_query_send",
            )
        }
    })
}

/// `staunch_conn_query_send` for a statement with parameters: sent as
/// `staunch_conn_query_ex` would send it (prepared, or interpolated into
/// text, as the pool's defaults and `flags` say: 0, STAUNCH_QUERY_TEXT,
/// STAUNCH_QUERY_INTERPOLATE or STAUNCH_QUERY_PREPARE), its answer then
/// received by `staunch_conn_query_recv`. A statement sent prepared that
/// the connection's statement cache does not hold yet is prepared first,
/// and that round trip is waited for here (once per connection and
/// statement); the execute's answer is what `*wait_fd` announces. The
/// parameters are read during this call only. Same rules as
/// `staunch_conn_query_send` otherwise. Since 1.10.
#[no_mangle]
pub extern "C" fn staunch_conn_query_send_ex(
    conn: *mut staunch_conn,
    sql: *const c_char,
    params: *const staunch_param,
    n_params: usize,
    flags: u32,
    wait_fd: *mut c_int,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        if flags & STAUNCH_QUERY_STREAM != 0 {
            return Err(Failure::new(
                STAUNCH_INVALID_ARGUMENT,
                "staunch_conn_query_send_ex: STAUNCH_QUERY_STREAM is staunch_conn_query_recv's flag",
            ));
        }
        // SAFETY: header contract on each argument.
        unsafe {
            send_query(
                conn,
                sql,
                params,
                n_params,
                flags,
                wait_fd,
                "staunch_conn_query_send_ex",
            )
        }
    })
}

/// The body of `staunch_conn_query_send` and `_ex`.
///
/// # Safety
/// The arguments as `staunch_conn_query_send_ex`'s header contract says.
unsafe fn send_query(
    conn: *mut staunch_conn,
    sql: *const c_char,
    params: *const staunch_param,
    n_params: usize,
    flags: u32,
    wait_fd: *mut c_int,
    func: &str,
) -> Result<(), Failure> {
    // SAFETY: NULL or a live connection (header contract).
    let c = unsafe { arg(conn, "conn") }?;
    // SAFETY: NULL or a NUL-terminated string (header contract).
    let sql = unsafe { arg_str(sql, "sql") }?;
    let wait_fd = Out::new(wait_fd, "wait_fd")?;
    let how = query_flags(flags, n_params, func)?;
    // SAFETY: header contract on params.
    let params = unsafe { to_params(params, n_params) }?;
    let mut g = c.lock()?;
    let mut pc = match std::mem::replace(&mut *g, Held::Released) {
        Held::Ready(pc) => pc,
        other => {
            let e = match &other {
                Held::Sent(..) => awaiting(),
                Held::Streaming => streaming(),
                Held::Released => released(),
                Held::Ready(_) => unreachable!("matched above"),
            };
            *g = other;
            return Err(e);
        }
    };
    if c.pool.is_closed() {
        *g = Held::Ready(pc);
        return Err(closed());
    }
    match pc.send_statement(sql, &params, how) {
        Ok(sent) => {
            *g = Held::Sent(pc);
            wait_fd.set(if sent.arrived { -1 } else { sent.fd });
            Ok(())
        }
        Err(e) => {
            *g = Held::Ready(pc);
            Err(statement_failure("query", e))
        }
    }
}

/// Receives the answer to the statement `staunch_conn_query_send` sent,
/// waiting for what has not arrived (bounded as any statement is), and
/// gives it as `staunch_conn_query_ex` does: `*out` receives the row set,
/// buffered, or streaming with `flags` STAUNCH_QUERY_STREAM (0 or that
/// flag). The statement's failure (its server error, a cancel, a cut) is
/// this call's. With no statement sent: STAUNCH_INVALID_ARGUMENT. Since
/// 1.5.
#[no_mangle]
pub extern "C" fn staunch_conn_query_recv(
    conn: *mut staunch_conn,
    flags: u32,
    out: *mut *mut staunch_rows,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live connection (header contract).
        let c = unsafe { arg(conn, "conn") }?;
        let out = Out::new(out, "out")?;
        if flags & !STAUNCH_QUERY_STREAM != 0 {
            return Err(Failure::new(
                STAUNCH_INVALID_ARGUMENT,
                format!("staunch_conn_query_recv: flags {flags:#x}: only STAUNCH_QUERY_STREAM is allowed"),
            ));
        }
        let mut g = c.lock()?;
        let mut pc = match std::mem::replace(&mut *g, Held::Released) {
            Held::Sent(pc) => pc,
            other => {
                let e = match &other {
                    Held::Streaming => streaming(),
                    Held::Released => released(),
                    _ => Failure::new(
                        STAUNCH_INVALID_ARGUMENT,
                        "staunch_conn_query_recv: no statement was sent (staunch_conn_query_send)",
                    ),
                };
                *g = other;
                return Err(e);
            }
        };
        let stream = flags & STAUNCH_QUERY_STREAM != 0;
        if stream {
            *g = Held::Streaming;
            drop(g);
            let home = c.home.clone();
            let stream = Stream::text_sent(pc, Box::new(move |conn| home.give_back(conn)))
                .map_err(Failure::from)?;
            out.set(staunch_rows::new(Answer::streaming(stream)).into_raw());
            return Ok(());
        }
        let r = pc.recv_text_wire();
        *g = Held::Ready(pc);
        let sets = match r {
            Some(r) => r.map_err(|e| wire_failure("query", &e))?,
            None => {
                return Err(Failure::new(
                    STAUNCH_BROKEN,
                    "staunch_conn_query_recv: the sent statement's answer was read elsewhere",
                ))
            }
        };
        *lock(&c.last) = Done::of(&sets);
        out.set(staunch_rows::new(Answer::buffered(sets)).into_raw());
        Ok(())
    })
}

/// `staunch_conn_query_ex`, with the first of the answer read in the same
/// call into `batch` (see `staunch_batch`): the first result set's column
/// count and types, its affected rows and AUTO_INCREMENT id, and, for a
/// buffered answer, as many of its rows as fit. `batch->recycle`, a row set
/// of the caller's (its previous answer, say), is freed first. `*out`
/// receives the row set as `staunch_conn_query_ex` gives it, positioned
/// after the rows in the batch: read on with `staunch_rows_fetch` (when the
/// batch was full) and `staunch_rows_next_result`, free it with
/// `staunch_rows_free` (or hand it to the next call as `recycle`). For a
/// caller whose every foreign call costs (Python's `ctypes`), a small
/// answer costs one call instead of four. Since 1.4.
///
/// Errors, blocking and threads as for `staunch_conn_execute`; a NULL
/// `batch`: STAUNCH_NULL_ARGUMENT; one whose `size` is smaller than this
/// library's `staunch_batch`: STAUNCH_INVALID_ARGUMENT (and `recycle` is
/// not freed).
#[no_mangle]
pub extern "C" fn staunch_conn_query_batch(
    conn: *mut staunch_conn,
    sql: *const c_char,
    params: *const staunch_param,
    n_params: usize,
    flags: u32,
    batch: *mut staunch_batch,
    out: *mut *mut staunch_rows,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a caller's batch (header contract).
        let b = unsafe { staunch_batch::open(batch) }?;
        let out = Out::new(out, "out")?;
        // SAFETY: header contract on each argument.
        let mut rows = unsafe {
            run_query(
                conn,
                sql,
                params,
                n_params,
                flags,
                "staunch_conn_query_batch",
            )
        }?;
        // SAFETY: the batch's buffers hold their capacities (contract).
        unsafe { rows.first_batch(b) }?;
        out.set(rows.into_raw());
        Ok(())
    })
}

/// The body of `staunch_conn_query_ex` and `_batch`: the statement run, its
/// answer as a row set.
///
/// # Safety
/// The arguments as `staunch_conn_query_ex`'s header contract says.
unsafe fn run_query(
    conn: *mut staunch_conn,
    sql: *const c_char,
    params: *const staunch_param,
    n_params: usize,
    flags: u32,
    func: &str,
) -> Result<staunch_rows, Failure> {
    // SAFETY: NULL or a live connection (header contract).
    let c = unsafe { arg(conn, "conn") }?;
    // SAFETY: NULL or a NUL-terminated string (header contract).
    let sql = unsafe { arg_str(sql, "sql") }?;
    let how = query_flags(flags, n_params, func)?;
    // SAFETY: header contract on params.
    let params = unsafe { to_params(params, n_params) }?;
    if flags & STAUNCH_QUERY_STREAM != 0 {
        // The row set holds the connection until the stream gives it back
        // to this handle (at once if the statement fails).
        let pc = c.take_for_stream()?;
        let home = c.home.clone();
        let give_back = Box::new(move |conn| home.give_back(conn));
        let answer = pc
            .answer_stream(sql, &params, how, give_back)
            .map_err(|e| statement_failure("query", e))?;
        Ok(staunch_rows::new(answer))
    } else {
        let sets = c.with(|pc| {
            pc.answer_sets(sql, &params, how)
                .map_err(|e| statement_failure("query", e))
        })?;
        *lock(&c.last) = Done::of(&sets);
        Ok(staunch_rows::new(Answer::buffered(sets)))
    }
}

/// The flags of `staunch_conn_query_ex` and `staunch_pool_query` other than
/// STAUNCH_QUERY_STREAM, checked: how the statement is sent.
pub(super) fn query_flags(flags: u32, n_params: usize, func: &str) -> Result<SendAs, Failure> {
    let known = STAUNCH_QUERY_STREAM
        | STAUNCH_QUERY_TEXT
        | STAUNCH_QUERY_INTERPOLATE
        | STAUNCH_QUERY_PREPARE;
    if flags & !known != 0 {
        return Err(Failure::new(
            STAUNCH_INVALID_ARGUMENT,
            format!("{func}: unknown flags {flags:#x} (see STAUNCH_QUERY_*)"),
        ));
    }
    let how = match (
        flags & STAUNCH_QUERY_INTERPOLATE != 0,
        flags & STAUNCH_QUERY_PREPARE != 0,
    ) {
        (true, true) => {
            return Err(Failure::new(
                STAUNCH_INVALID_ARGUMENT,
                format!(
                    "{func}: STAUNCH_QUERY_INTERPOLATE and STAUNCH_QUERY_PREPARE are each \
                     other's opposite: give one"
                ),
            ))
        }
        (true, false) => SendAs::Way(Way::Interpolate),
        (false, true) => SendAs::Way(Way::Prepare),
        (false, false) => SendAs::Default,
    };
    if flags & STAUNCH_QUERY_TEXT == 0 {
        return Ok(how);
    }
    if n_params > 0 {
        return Err(Failure::new(
            STAUNCH_INVALID_ARGUMENT,
            "STAUNCH_QUERY_TEXT sends the statement as text: it takes no parameters (n_params must be 0)",
        ));
    }
    Ok(SendAs::Text)
}

/// Writes to `*out` the number of `?` placeholders in `sql` as this
/// connection's server reads them, under the session's current `sql_mode`
/// (the library's one SQL scanner, the one both ways of sending use): a `?`
/// counts unless it is inside '...', "..." (an identifier under
/// ANSI_QUOTES), backticks, a `#` or `-- ` comment, or a C-style comment
/// other than the executable ones the server runs (a slash and star followed by `!`,
/// `!NNNNN` up to the server's version, or `M!` on MariaDB); a
/// backslash escapes nothing under NO_BACKSLASH_ESCAPES. Sends nothing,
/// except one round trip when the session's `sql_mode` is not known (after
/// a multi-statement or a CALL) and once per connection when
/// a versioned executable comment needs the server's version. Same rules
/// as `staunch_conn_execute` otherwise.
#[no_mangle]
pub extern "C" fn staunch_conn_count_params(
    conn: *mut staunch_conn,
    sql: *const c_char,
    out: *mut usize,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live connection (header contract).
        let c = unsafe { arg(conn, "conn") }?;
        // SAFETY: NULL or a NUL-terminated string (header contract).
        let sql = unsafe { arg_str(sql, "sql") }?;
        let out = Out::new(out, "out")?;
        let n = c.with(|pc| pc.count_params(sql).map_err(Failure::from))?;
        out.set(n);
        Ok(())
    })
}

/// Where the `?` placeholders of `sql` are: the byte offset in `sql` of each,
/// in order, by the same scanner and rules as `staunch_conn_count_params`,
/// so that a binding that rewrites placeholders (JDBC's named and `{call}`
/// parameters) needs one call instead of counting every prefix. Writes the
/// first `min(*count, cap)` offsets into `offsets` (NULL is fine when `cap`
/// is 0) and the number of placeholders into `*count`; when `*count` is
/// above `cap`, call again with room for `*count`. Round trips, blocking and
/// threads as for `staunch_conn_count_params`.
#[no_mangle]
pub extern "C" fn staunch_conn_param_offsets(
    conn: *mut staunch_conn,
    sql: *const c_char,
    offsets: *mut usize,
    cap: usize,
    count: *mut usize,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live connection (header contract).
        let c = unsafe { arg(conn, "conn") }?;
        // SAFETY: NULL or a NUL-terminated string (header contract).
        let sql = unsafe { arg_str(sql, "sql") }?;
        let count = Out::new(count, "count")?;
        if offsets.is_null() && cap > 0 {
            return Err(Failure::null("offsets (with cap > 0)"));
        }
        let at = c.with(|pc| pc.scan(sql).map(|s| s.placeholders).map_err(Failure::from))?;
        let n = at.len().min(cap);
        if n > 0 {
            // SAFETY: non-NULL (checked) and holds `cap` >= n elements
            // (header contract); `at` is our own vector, no overlap.
            unsafe { std::ptr::copy_nonoverlapping(at.as_ptr(), offsets, n) };
        }
        count.set(at.len());
        Ok(())
    })
}

fn simple(conn: *mut staunch_conn, err: *mut *mut staunch_error, sql: &str) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live connection (header contract).
        let c = unsafe { arg(conn, "conn") }?;
        c.with(|pc| pc.run_text_drop(sql).map_err(|e| wire_failure(sql, &e)))
    })
}

/// Starts a transaction (`START TRANSACTION`). Errors, blocking and threads
/// as for `staunch_conn_execute`.
#[no_mangle]
pub extern "C" fn staunch_conn_begin(
    conn: *mut staunch_conn,
    err: *mut *mut staunch_error,
) -> staunch_status {
    staunch_conn_begin_ex(conn, std::ptr::null(), err)
}

/// The isolation level of a transaction started by `staunch_conn_begin_ex`.
pub type staunch_isolation = u32;
/// The session's own level (the server's default unless changed).
pub const STAUNCH_ISOLATION_DEFAULT: staunch_isolation = 0;
pub const STAUNCH_ISOLATION_READ_UNCOMMITTED: staunch_isolation = 1;
pub const STAUNCH_ISOLATION_READ_COMMITTED: staunch_isolation = 2;
pub const STAUNCH_ISOLATION_REPEATABLE_READ: staunch_isolation = 3;
pub const STAUNCH_ISOLATION_SERIALIZABLE: staunch_isolation = 4;

/// How `staunch_conn_begin_ex` starts a transaction. Set `size` to
/// `sizeof(staunch_txn_options)` (fields added later go at the end, default
/// 0).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct staunch_txn_options {
    /// The caller's `sizeof(staunch_txn_options)`.
    pub size: usize,
    /// One of the STAUNCH_ISOLATION_* values.
    pub isolation: staunch_isolation,
    /// `START TRANSACTION READ ONLY`.
    pub read_only: bool,
}

/// Starts a transaction with an isolation level and/or read only. The level
/// applies to this transaction only (`SET TRANSACTION ISOLATION LEVEL ...`,
/// without SESSION), so nothing of it stays in the session for the next
/// borrower. `opts` NULL is `staunch_conn_begin`. Errors, blocking (one round
/// trip, two with a level) and threads as for `staunch_conn_execute`.
#[no_mangle]
pub extern "C" fn staunch_conn_begin_ex(
    conn: *mut staunch_conn,
    opts: *const staunch_txn_options,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live connection (header contract).
        let c = unsafe { arg(conn, "conn") }?;
        // SAFETY: NULL, or a struct of at least its `size` field's bytes
        // (header contract).
        let o = unsafe { super::read_sized::<staunch_txn_options>(opts, "opts") }?;
        let (isolation, read_only) = match &o {
            // SAFETY: `read_sized` gives an initialized (zeroed, then copied)
            // struct; the flag is read as the byte C may have stored any
            // value in.
            Some(o) => unsafe {
                let p = o.as_ptr();
                (
                    std::ptr::addr_of!((*p).isolation).read(),
                    std::ptr::addr_of!((*p).read_only).cast::<u8>().read() != 0,
                )
            },
            None => (STAUNCH_ISOLATION_DEFAULT, false),
        };
        let level = match isolation {
            STAUNCH_ISOLATION_DEFAULT => None,
            STAUNCH_ISOLATION_READ_UNCOMMITTED => Some(IsolationLevel::ReadUncommitted),
            STAUNCH_ISOLATION_READ_COMMITTED => Some(IsolationLevel::ReadCommitted),
            STAUNCH_ISOLATION_REPEATABLE_READ => Some(IsolationLevel::RepeatableRead),
            STAUNCH_ISOLATION_SERIALIZABLE => Some(IsolationLevel::Serializable),
            other => {
                return Err(Failure::new(
                    STAUNCH_INVALID_ARGUMENT,
                    format!("opts->isolation {other} is not a STAUNCH_ISOLATION_* value"),
                ))
            }
        };
        let opts = TxOpts::default()
            .set_isolation_level(level)
            .set_access_mode(read_only.then_some(AccessMode::ReadOnly));
        c.with(|pc| pc.begin_with(opts).map_err(Failure::from))
    })
}

/// Commits the current transaction (`COMMIT`). Errors, blocking and threads
/// as for `staunch_conn_execute`.
#[no_mangle]
pub extern "C" fn staunch_conn_commit(
    conn: *mut staunch_conn,
    err: *mut *mut staunch_error,
) -> staunch_status {
    simple(conn, err, "COMMIT")
}

/// Rolls the current transaction back (`ROLLBACK`). Errors, blocking and
/// threads as for `staunch_conn_execute`.
#[no_mangle]
pub extern "C" fn staunch_conn_rollback(
    conn: *mut staunch_conn,
    err: *mut *mut staunch_error,
) -> staunch_status {
    simple(conn, err, "ROLLBACK")
}

/// Prepares `sql` on the connection without running it (through the
/// connection's statement cache, so running it with parameters later costs
/// no second prepare), so that a statement the server refuses is reported
/// now: what a driver's `Prepare` needs. `n_params` (may be NULL) receives
/// the number of `?` placeholders, on success only.
///
/// Errors: STAUNCH_SERVER_ERROR (a syntax error, an unknown table, 1295 for
/// a statement the server cannot prepare: it can still run as text), and as
/// for `staunch_conn_execute`. Blocks for one round trip, bounded as a
/// statement. Same rules as `staunch_conn_execute` otherwise.
#[no_mangle]
pub extern "C" fn staunch_conn_prepare(
    conn: *mut staunch_conn,
    sql: *const c_char,
    n_params: *mut u32,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live connection (header contract).
        let c = unsafe { arg(conn, "conn") }?;
        // SAFETY: NULL or a NUL-terminated string (header contract).
        let sql = unsafe { arg_str(sql, "sql") }?;
        let n = c.with(|pc| pc.prepare_count(sql, false).map_err(Failure::from))?;
        set_opt(n_params, u32::try_from(n).unwrap_or(u32::MAX));
        Ok(())
    })
}

/// A flag of `staunch_conn_prepare_ex`: a statement the server cannot
/// prepare (1295, "not supported in the prepared statement protocol") is
/// not an error; it runs as text whenever it runs, as every statement the
/// server refuses to prepare does.
pub const STAUNCH_PREPARE_TEXT_OK: u32 = 1;

/// `staunch_conn_prepare` with `flags` (since 1.12.0): 0, or
/// `STAUNCH_PREPARE_TEXT_OK`, with which a statement the server cannot
/// prepare (1295) succeeds, `n_params` receiving its placeholders as the
/// library's scanner counts them (`staunch_conn_count_params`): what a
/// driver whose `Prepare` must accept `SHOW ... LIKE ?` wants (the
/// reference drivers send such a statement interpolated). An unknown flag
/// is refused (STAUNCH_INVALID_ARGUMENT). Otherwise as
/// `staunch_conn_prepare`.
#[no_mangle]
pub extern "C" fn staunch_conn_prepare_ex(
    conn: *mut staunch_conn,
    sql: *const c_char,
    flags: u32,
    n_params: *mut u32,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        if flags & !STAUNCH_PREPARE_TEXT_OK != 0 {
            return Err(Failure::new(
                STAUNCH_INVALID_ARGUMENT,
                format!(
                    "staunch_conn_prepare_ex: unknown flags {flags:#x} (see STAUNCH_PREPARE_*)"
                ),
            ));
        }
        // SAFETY: NULL or a live connection (header contract).
        let c = unsafe { arg(conn, "conn") }?;
        // SAFETY: NULL or a NUL-terminated string (header contract).
        let sql = unsafe { arg_str(sql, "sql") }?;
        let text_ok = flags & STAUNCH_PREPARE_TEXT_OK != 0;
        let n = c.with(|pc| pc.prepare_count(sql, text_ok).map_err(Failure::from))?;
        set_opt(n_params, u32::try_from(n).unwrap_or(u32::MAX));
        Ok(())
    })
}

/// Checks the connection is alive (`COM_PING`). On failure (STAUNCH_IO_ERROR)
/// the connection is broken: discarded when released. Blocks for one round
/// trip (bounded by the connection's time limit, if any). Same rules as
/// `staunch_conn_execute` otherwise.
#[no_mangle]
pub extern "C" fn staunch_conn_ping(
    conn: *mut staunch_conn,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live connection (header contract).
        let c = unsafe { arg(conn, "conn") }?;
        c.with(|pc| {
            pc.run(false, Report::Nothing, |s| s.link.ping())
                .map_err(|e| wire_failure("ping", &e))
        })
    })
}

/// Sets this connection's statement time limit, until it is released:
/// `timeout_ms` milliseconds, 0 for none, or STAUNCH_TIMEOUT_DEFAULT for the
/// pool's `query_timeout`. The server ends a statement past it
/// (STAUNCH_STATEMENT_TIMEOUT, the connection stays usable; it changes the
/// session's `max_statement_time` before the next statement, one round trip
/// when the limit differs); a statement whose server has not answered 1 s
/// after the limit is cut off (STAUNCH_STATEMENT_TIMEOUT, the connection is
/// then broken). Never blocks. Same rules as `staunch_conn_execute`
/// otherwise.
#[no_mangle]
pub extern "C" fn staunch_conn_set_timeout(
    conn: *mut staunch_conn,
    timeout_ms: u32,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live connection (header contract).
        let c = unsafe { arg(conn, "conn") }?;
        c.with(|pc| {
            match timeout_ms {
                STAUNCH_TIMEOUT_DEFAULT => pc.use_pool_statement_timeout(),
                0 => pc.set_statement_timeout(None),
                ms => pc.set_statement_timeout(Some(Duration::from_millis(u64::from(ms)))),
            }
            Ok(())
        })
    })
}

/// Gives the stack where the host program borrowed this connection (its
/// language's own: a Python traceback, a Java or Go stack trace), `len`
/// bytes of UTF-8 text (invalid sequences are replaced), for the leak report
/// should the connection stay borrowed past `leak_detection_threshold`. Does
/// nothing when leak detection is off
/// (`staunch_pool_leak_threshold_ms` says 0): call it only then, right after
/// the borrow. Kept up to 64 KiB. Never blocks. Same rules as the other
/// calls on a connection (one thread at a time).
#[no_mangle]
pub extern "C" fn staunch_conn_set_borrower_stack(
    conn: *mut staunch_conn,
    text: *const c_char,
    len: usize,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live connection (header contract).
        let c = unsafe { arg(conn, "conn") }?;
        if text.is_null() {
            return Err(Failure::null("text"));
        }
        // SAFETY: `text` holds `len` readable bytes (header contract).
        let bytes = unsafe { std::slice::from_raw_parts(text.cast::<u8>(), len) };
        let mut s = String::from_utf8_lossy(&bytes[..len.min(64 * 1024)]).into_owned();
        if len > 64 * 1024 {
            s.push_str("\n...");
        }
        c.with(|pc| {
            pc.set_borrower_stack(s);
            Ok(())
        })
    })
}

/// Cancels the statement running on this connection, from any thread (the
/// one exception to "one thread at a time"): `KILL QUERY` over a connection
/// of its own to the same server. The statement then fails with
/// STAUNCH_CANCELLED and the connection stays usable. `*cancelled` (may be
/// NULL) receives whether a statement was running (false: nothing was sent).
/// Only the statement running at the call is affected, never a later one.
/// Blocks for the kill: at most the pool's `connect_timeout` + 1 s; an error
/// (STAUNCH_CONNECT_FAILED, ...) says the kill could not be sent. Safe to
/// call on a released handle (it does nothing then).
#[no_mangle]
pub extern "C" fn staunch_conn_cancel(
    conn: *const staunch_conn,
    cancelled: *mut bool,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live connection; this call may run concurrently
        // with another on the same handle, which only touches `home`
        // (header contract).
        let c = unsafe { arg(conn, "conn") }?;
        let done = c.cancel.cancel()?;
        set_opt(cancelled, done);
        Ok(())
    })
}

/// Whether an earlier statement broke this connection (it then refuses
/// every statement with STAUNCH_BROKEN and is closed on release). False for
/// NULL or a released handle. Never blocks; any thread (a busy connection
/// reads as not broken).
#[no_mangle]
pub extern "C" fn staunch_conn_is_broken(conn: *const staunch_conn) -> bool {
    guard_value(false, || {
        // SAFETY: NULL or a live connection (header contract).
        let Some(c) = (unsafe { conn.as_ref() }) else {
            return false;
        };
        match c.home.slot.try_lock() {
            Ok(g) => matches!(&*g, Held::Ready(pc) | Held::Sent(pc) if pc.broken().is_some()),
            Err(_) => false,
        }
    })
}

/// The pool-wide number of this connection, as in events (a leak report's
/// `connection_id`); 0 for NULL. Never blocks; any thread.
#[no_mangle]
pub extern "C" fn staunch_conn_id(conn: *const staunch_conn) -> u64 {
    guard_value(0, || {
        // SAFETY: NULL or a live connection (header contract).
        unsafe { conn.as_ref() }.map_or(0, |c| c.id)
    })
}

/// Writes the server's id of this session (`CONNECTION_ID()`, the number
/// `KILL` and the process list use) to `*out`. Never blocks. Same rules as
/// `staunch_conn_execute` otherwise.
#[no_mangle]
pub extern "C" fn staunch_conn_server_id(
    conn: *mut staunch_conn,
    out: *mut u64,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live connection (header contract).
        let c = unsafe { arg(conn, "conn") }?;
        let out = Out::new(out, "out")?;
        let id = c.with(|pc| Ok(u64::from(pc.connection_id())))?;
        out.set(id);
        Ok(())
    })
}

/// Writes the server this connection is to, as `host:port` (`[v6]:port`,
/// or `unix:path`: the `server` of trace events, the `server_address` and
/// `server_port` of metrics), into `buf` by `snprintf`'s rules (at most
/// `cap - 1` bytes and a NUL; `*len` its whole length; `buf` may be NULL
/// with `cap` 0). In a topology pool, the host the connection was borrowed
/// from. Never blocks. Same rules as `staunch_conn_execute` otherwise.
#[no_mangle]
pub extern "C" fn staunch_conn_server(
    conn: *mut staunch_conn,
    buf: *mut c_char,
    cap: usize,
    len: *mut usize,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live connection (header contract).
        let c = unsafe { arg(conn, "conn") }?;
        let len = Out::new(len, "len")?;
        let server = c.with(|pc| Ok(pc.server()))?;
        // SAFETY: `buf` holds `cap` bytes (header contract).
        unsafe { super::pool::copy_text(&server, buf, cap, len) }
    })
}

/// Takes the connection out of the handle (for release or discard).
fn take(c: &staunch_conn) -> Result<Option<PooledConn>, Failure> {
    let mut g = match c.home.slot.try_lock() {
        Ok(g) => g,
        Err(TryLockError::Poisoned(p)) => p.into_inner(),
        Err(TryLockError::WouldBlock) => {
            return Err(Failure::new(
                STAUNCH_CONN_BUSY,
                "the connection is in use by another thread",
            ))
        }
    };
    // A streaming row set keeps it: it goes to the pool when the row set
    // is done with it.
    Ok(match std::mem::replace(&mut *g, Held::Released) {
        Held::Ready(pc) | Held::Sent(pc) => Some(pc),
        _ => None,
    })
}

/// Returns the connection to its pool but keeps the handle: any further call
/// on it except this one and `staunch_conn_free` fails with
/// STAUNCH_USE_AFTER_RELEASE; the handle is still freed with
/// `staunch_conn_free`. Idempotent. Works after the pool was closed (the
/// connection is then closed). Fails only for NULL or STAUNCH_CONN_BUSY.
///
/// Blocks while the session is made ready for the next borrower: nothing for
/// a borrow that only read; a transaction left open is rolled back, a
/// changed session reset (at most a few round trips, each bounded by
/// validation_timeout). One thread at a time per connection.
#[no_mangle]
pub extern "C" fn staunch_conn_release(
    conn: *mut staunch_conn,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live connection (header contract).
        let c = unsafe { arg(conn, "conn") }?;
        drop(take(c)?);
        Ok(())
    })
}

/// Closes the connection instead of returning it to the pool (JDBC's
/// `abort`), and keeps the handle as `staunch_conn_release` does. Closing
/// writes a goodbye packet and never waits for an answer. Idempotent; fails
/// only for NULL or STAUNCH_CONN_BUSY.
#[no_mangle]
pub extern "C" fn staunch_conn_discard(
    conn: *mut staunch_conn,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live connection (header contract).
        let c = unsafe { arg(conn, "conn") }?;
        if let Some(pc) = take(c)? {
            pc.discard();
        }
        Ok(())
    })
}

/// Releases the connection if it was not (as `staunch_conn_release`, which
/// may block for the round trips that make the session ready for the next
/// borrower, each bounded by validation_timeout: nothing after a read-only
/// borrow) and frees the handle. NULL is a no-op. Must be the last call on
/// the handle, not concurrent with another call on it. Works after the pool
/// was freed. From a finalizer that must not block, call
/// `staunch_conn_discard` first.
#[no_mangle]
pub extern "C" fn staunch_conn_free(conn: *mut staunch_conn) {
    guard_value((), || {
        if !conn.is_null() {
            // SAFETY: created by staunch_pool_get/try_get, freed once.
            drop(unsafe { Box::from_raw(conn) });
        }
    })
}
