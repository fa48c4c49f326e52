//! `staunch_conn`: a borrowed connection, statements and parameters.

use std::ffi::c_char;
use std::sync::{Mutex, TryLockError};

use mysql::prelude::Queryable;
use mysql::{Params, Value};

use super::error::*;
use super::rows::{collect_rows, staunch_rows};
use super::values::{staunch_param, to_values};
use super::{arg, arg_str, guard, guard_value, set_opt, Out};
use crate::client::PooledConn;
use crate::error::Error;
use crate::Pool;

/// A connection borrowed from a pool by `staunch_pool_get`. Give it back with
/// `staunch_conn_release` (the handle stays, unusable) or `staunch_conn_free`
/// (returns it if needed and frees the handle). May move between threads but
/// is used by one thread at a time: a call made while another thread is inside
/// a call on the same connection fails with STAUNCH_CONN_BUSY.
pub struct staunch_conn {
    /// The pool it came from, to report STAUNCH_CLOSED once it is closed.
    pool: Pool,
    /// None once released. Locked (try_lock) for the length of each call.
    slot: Mutex<Option<PooledConn>>,
}

impl std::fmt::Debug for staunch_conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("staunch_conn").finish_non_exhaustive()
    }
}

impl staunch_conn {
    pub(crate) fn new_raw(pool: &Pool, conn: PooledConn) -> *mut staunch_conn {
        Box::into_raw(Box::new(staunch_conn {
            pool: pool.clone(),
            slot: Mutex::new(Some(conn)),
        }))
    }

    /// Runs `f` on the borrowed connection, after the checks every statement
    /// makes: not busy, not released, pool not closed.
    fn with<T>(&self, f: impl FnOnce(&mut PooledConn) -> Result<T, Failure>) -> Result<T, Failure> {
        let mut slot = match self.slot.try_lock() {
            Ok(g) => g,
            // A panic (caught at the boundary) interrupted a statement: the
            // session may be mid-result, so it is closed on release.
            Err(TryLockError::Poisoned(p)) => {
                let mut g = p.into_inner();
                if let Some(c) = g.as_mut() {
                    c.marks().mark_broken();
                }
                g
            }
            Err(TryLockError::WouldBlock) => {
                return Err(Failure::new(
                    STAUNCH_CONN_BUSY,
                    "the connection is in use by another thread (a staunch_conn is used by one thread at a time)",
                ))
            }
        };
        let conn = slot.as_mut().ok_or_else(|| {
            Failure::new(
                STAUNCH_USE_AFTER_RELEASE,
                "the connection was released (staunch_conn_release): only staunch_conn_free may be called on it",
            )
        })?;
        if self.pool.is_closed() {
            return Err(Failure::new(
                STAUNCH_CLOSED,
                "the pool of this connection was closed: free the connection (staunch_conn_free)",
            ));
        }
        f(conn)
    }
}

fn mysql_failure(context: &str, e: &mysql::Error) -> Failure {
    Failure::from(Error::from_mysql(context, e))
}

/// Prepares `sql` and checks its placeholder count.
fn prepare(conn: &mut PooledConn, sql: &str, n: usize) -> Result<mysql::Statement, Failure> {
    let stmt = conn.prep(sql).map_err(|e| mysql_failure("prepare", &e))?;
    let want = usize::from(stmt.num_params());
    if want != n {
        return Err(Failure::new(
            STAUNCH_PARAM_COUNT,
            format!("the statement has {want} placeholder(s) but {n} parameter(s) were given"),
        ));
    }
    Ok(stmt)
}

fn params_of(values: Vec<Value>) -> Params {
    if values.is_empty() {
        Params::Empty
    } else {
        Params::Positional(values)
    }
}

/// Runs every result set of a statement to completion: the affected rows
/// (summed) and the last non-zero insert id.
fn drain<P: mysql::prelude::Protocol>(
    r: &mut mysql::QueryResult<'_, '_, '_, P>,
) -> mysql::Result<(u64, u64)> {
    let (mut affected, mut last_id) = (0u64, 0u64);
    while let Some(mut set) = r.iter() {
        affected = affected.saturating_add(set.affected_rows());
        if let Some(id) = set.last_insert_id().filter(|id| *id != 0) {
            last_id = id;
        }
        for row in set.by_ref() {
            row?;
        }
    }
    Ok((affected, last_id))
}

/// Runs a statement that returns no rows (INSERT, UPDATE, DDL, SET, ...; rows
/// a statement does return are read and discarded).
///
/// With `n_params` > 0 the statement is prepared and the values bound to its
/// `?` placeholders (wrong count: STAUNCH_PARAM_COUNT); with none it is sent
/// as text, so any statement works, including several separated by `;`.
/// `params` may be NULL when `n_params` is 0; it is only read during the
/// call. `affected_rows` and `last_insert_id` may be NULL; they are written on
/// success only.
///
/// Errors: STAUNCH_SERVER_ERROR (see staunch_error_server_code / _sqlstate;
/// the connection stays usable), STAUNCH_IO_ERROR (the connection is then
/// discarded on release), parameter errors (1xx), STAUNCH_USE_AFTER_RELEASE,
/// STAUNCH_CLOSED (the pool was closed), STAUNCH_CONN_BUSY.
///
/// Blocks for the statement: without a query_timeout knob, as long as the
/// server takes; with it, at most that long per socket read. One thread at a
/// time per connection (another thread gets STAUNCH_CONN_BUSY at once).
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
        let values = unsafe { to_values(params, n_params) }?;
        let (affected, last_id) = c.with(|pc| {
            if n_params == 0 {
                pc.run_text(sql, drain)
            } else {
                let stmt = prepare(pc, sql, n_params)?;
                pc.run_binary(&stmt, params_of(values), drain)
            }
            .map_err(|e| mysql_failure("execute", &e))
        })?;
        set_opt(affected_rows, affected);
        set_opt(last_insert_id, last_id);
        Ok(())
    })
}

/// Runs a query and reads its whole result into a row set (the statement is
/// always prepared, so values come typed; `?` placeholders take `params`).
/// On success `*out` receives the rows: iterate with `staunch_rows_next`,
/// free with `staunch_rows_free`. The row set owns its data: it stays valid
/// after the connection is released or freed. Of a statement returning
/// several result sets (CALL), the first one with columns is kept.
///
/// Errors, blocking and threads as for `staunch_conn_execute`; the whole
/// result is held in memory, so page large results with LIMIT.
#[no_mangle]
pub extern "C" fn staunch_conn_query(
    conn: *mut staunch_conn,
    sql: *const c_char,
    params: *const staunch_param,
    n_params: usize,
    out: *mut *mut staunch_rows,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live connection (header contract).
        let c = unsafe { arg(conn, "conn") }?;
        // SAFETY: NULL or a NUL-terminated string (header contract).
        let sql = unsafe { arg_str(sql, "sql") }?;
        let out = Out::new(out, "out")?;
        // SAFETY: header contract on params.
        let values = unsafe { to_values(params, n_params) }?;
        let rows = c.with(|pc| {
            let stmt = prepare(pc, sql, n_params)?;
            pc.run_binary(&stmt, params_of(values), collect_rows)
                .map_err(|e| mysql_failure("query", &e))
        })?;
        out.set(Box::into_raw(Box::new(rows)));
        Ok(())
    })
}

fn simple(conn: *mut staunch_conn, err: *mut *mut staunch_error, sql: &str) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live connection (header contract).
        let c = unsafe { arg(conn, "conn") }?;
        c.with(|pc| pc.query_drop(sql).map_err(|e| mysql_failure(sql, &e)))
    })
}

/// Starts a transaction (`START TRANSACTION`). A connection released or
/// freed inside a transaction is rolled back before anyone else gets it.
/// Errors, blocking and threads as for `staunch_conn_execute`.
#[no_mangle]
pub extern "C" fn staunch_conn_begin(
    conn: *mut staunch_conn,
    err: *mut *mut staunch_error,
) -> staunch_status {
    simple(conn, err, "START TRANSACTION")
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

/// Checks the connection is alive (`COM_PING`). On failure (STAUNCH_IO_ERROR)
/// the connection is discarded when released. Blocks for one round trip
/// (bounded by the query_timeout knob if set). Same rules as
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
            pc.run(false, |c| c.ping())
                .map_err(|e| mysql_failure("ping", &e))
        })
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

/// Returns the connection to its pool but keeps the handle: any further call
/// on it except this one and `staunch_conn_free` fails with
/// STAUNCH_USE_AFTER_RELEASE; the handle is still freed with
/// `staunch_conn_free`. Idempotent. Works after the pool was closed (the
/// connection is then closed). Fails only for NULL or STAUNCH_CONN_BUSY.
///
/// Blocks while a transaction left open is rolled back (bounded by
/// validation_timeout; twice that with reset_on_return). One thread at a time
/// per connection.
#[no_mangle]
pub extern "C" fn staunch_conn_release(
    conn: *mut staunch_conn,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live connection (header contract).
        let c = unsafe { arg(conn, "conn") }?;
        let taken = match c.slot.try_lock() {
            Ok(mut g) => g.take(),
            Err(TryLockError::Poisoned(p)) => p.into_inner().take(),
            Err(TryLockError::WouldBlock) => {
                return Err(Failure::new(
                    STAUNCH_CONN_BUSY,
                    "the connection is in use by another thread",
                ))
            }
        };
        drop(taken);
        Ok(())
    })
}

/// Releases the connection if it was not (as `staunch_conn_release`, which
/// may block up to validation_timeout, twice that with reset_on_return) and
/// frees the handle. NULL is a no-op. Must be the last call on the handle, not
/// concurrent with another call on it. Works after the pool was freed.
#[no_mangle]
pub extern "C" fn staunch_conn_free(conn: *mut staunch_conn) {
    guard_value((), || {
        if !conn.is_null() {
            // SAFETY: created by staunch_pool_get/try_get, freed once.
            drop(unsafe { Box::from_raw(conn) });
        }
    })
}
