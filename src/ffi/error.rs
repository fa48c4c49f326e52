//! Status codes, the owned error object, and the conversion from crate errors.
//!
//! Codes are stable: a number, once published, keeps its meaning and is never
//! reused. Ranges: 0 success; 1xx the caller passed something unusable; 2xx
//! the pool could not hand out a connection; 3xx the database failed a
//! statement (or the caller ended one: a timeout, a cancel); 9xx a bug in
//! staunch.

use std::ffi::{c_char, CStr, CString};

use crate::error::{Error, ErrorCategory, ErrorKind};

/// A status code returned by every fallible function. 0 (`STAUNCH_OK`) is
/// success; see the `STAUNCH_*` constants for the others. Codes are stable and
/// never reused; new ones may be added within the ranges.
pub type staunch_status = u32;

/// Success.
pub const STAUNCH_OK: staunch_status = 0;

/// A pointer argument that must not be NULL was NULL.
pub const STAUNCH_NULL_ARGUMENT: staunch_status = 100;
/// A string argument (SQL, URL, knob, text parameter) is not valid UTF-8, or
/// a text column holds bytes that are not UTF-8.
pub const STAUNCH_INVALID_UTF8: staunch_status = 101;
/// A column index is not below `staunch_rows_column_count`.
pub const STAUNCH_BAD_INDEX: staunch_status = 102;
/// The getter does not match the column's type (e.g. `staunch_rows_get_i64`
/// on a text column). The message names the getter to use.
pub const STAUNCH_WRONG_TYPE: staunch_status = 103;
/// A value does not fit where it goes (an unsigned value above INT64_MAX read
/// with `staunch_rows_get_i64`, a DATETIME parameter with month 13, ...).
pub const STAUNCH_OUT_OF_RANGE: staunch_status = 104;
/// The connection handle was released (`staunch_conn_release`): only
/// `staunch_conn_free` may be called on it now.
pub const STAUNCH_USE_AFTER_RELEASE: staunch_status = 105;
/// Invalid configuration: a bad URL, an unknown knob, a value out of its
/// range. The message names the knob.
pub const STAUNCH_INVALID_CONFIG: staunch_status = 106;
/// The value is SQL NULL: test with `staunch_rows_is_null` first.
pub const STAUNCH_NULL_VALUE: staunch_status = 107;
/// No current row: `staunch_rows_next` was not called yet or returned no row.
pub const STAUNCH_NO_ROW: staunch_status = 108;
/// The number of parameters differs from the number of `?` placeholders.
pub const STAUNCH_PARAM_COUNT: staunch_status = 109;
/// A parameter has an unknown `type`.
pub const STAUNCH_BAD_PARAM_TYPE: staunch_status = 110;
/// The connection handle is in use by another thread right now. A
/// `staunch_conn` must be used by one thread at a time.
pub const STAUNCH_CONN_BUSY: staunch_status = 111;
/// Another misuse of the API.
pub const STAUNCH_INVALID_ARGUMENT: staunch_status = 112;

/// `staunch_pool_get` timed out while every connection was in use.
pub const STAUNCH_POOL_EXHAUSTED: staunch_status = 200;
/// `staunch_pool_get` timed out and no connection could be made: the message
/// says why (e.g. no greeting from host:port within connect_timeout).
pub const STAUNCH_UNREACHABLE: staunch_status = 201;
/// The server refused connections for a reason retrying will not fix (wrong
/// password, unknown database): reported at once, without waiting.
pub const STAUNCH_CONNECT_REJECTED: staunch_status = 202;
/// One connect attempt failed.
pub const STAUNCH_CONNECT_FAILED: staunch_status = 203;
/// The pool is closed (`staunch_pool_close` / `staunch_pool_free`), also
/// reported by connections borrowed from it before.
pub const STAUNCH_CLOSED: staunch_status = 204;
/// No server may take writes now: the primary was declared dead and no new
/// one (a host with read_only=0) is known yet, or two hosts claim to be
/// primary (split brain). Reported at once; the message says which.
pub const STAUNCH_NO_WRITER: staunch_status = 205;

/// The server answered a statement with an error: see
/// `staunch_error_server_code` and `staunch_error_sqlstate`.
pub const STAUNCH_SERVER_ERROR: staunch_status = 300;
/// An I/O error on the connection (reset, timeout, lost). The connection is
/// discarded when released.
pub const STAUNCH_IO_ERROR: staunch_status = 301;
/// The connection broke during an earlier statement (a failure that may have
/// left part of an answer unread): every later statement on it fails with
/// this at once, never with another statement's answer. Release or free it
/// (it is closed, not returned) and get another.
pub const STAUNCH_BROKEN: staunch_status = 302;
/// A statement ran past its time limit (the `query_timeout` knob, or the
/// connection's own). Ended by the server, the connection stays usable; cut
/// off by the client because the server did not answer, the connection is
/// broken (STAUNCH_BROKEN afterwards). The message names the limit.
pub const STAUNCH_STATEMENT_TIMEOUT: staunch_status = 303;
/// The caller cancelled: a get waiting with a cancel token, or a statement
/// stopped through its connection's cancel (the connection stays usable).
pub const STAUNCH_CANCELLED: staunch_status = 304;
/// The server stopped answering during the statement: it waited past the
/// pool's `liveness_threshold`, and a check on a side connection found the
/// server not answering, restarted or replaced, or no longer running the
/// statement's connection. Its socket was shut down; the connection is
/// broken (STAUNCH_BROKEN afterwards) and closed when released. The message
/// says what was checked and what happened.
pub const STAUNCH_SERVER_UNRESPONSIVE: staunch_status = 305;
/// The server rolled the whole transaction back because it lost a conflict:
/// a deadlock or, in a Galera cluster, a certification failure (server error
/// 1213, SQLSTATE 40001, both in the error object). The connection stays
/// usable; running the transaction again from its start may succeed.
pub const STAUNCH_CONFLICT: staunch_status = 306;

/// A broken internal invariant in staunch. Please report it.
pub const STAUNCH_INTERNAL: staunch_status = 900;
/// staunch panicked inside the call; the panic was caught at the boundary.
/// Please report it.
pub const STAUNCH_PANIC: staunch_status = 901;

/// Every status with its name, for `staunch_status_name` and the tests.
pub(crate) const STATUS_NAMES: &[(staunch_status, &CStr)] = &[
    (STAUNCH_OK, cstr!("STAUNCH_OK")),
    (STAUNCH_NULL_ARGUMENT, cstr!("STAUNCH_NULL_ARGUMENT")),
    (STAUNCH_INVALID_UTF8, cstr!("STAUNCH_INVALID_UTF8")),
    (STAUNCH_BAD_INDEX, cstr!("STAUNCH_BAD_INDEX")),
    (STAUNCH_WRONG_TYPE, cstr!("STAUNCH_WRONG_TYPE")),
    (STAUNCH_OUT_OF_RANGE, cstr!("STAUNCH_OUT_OF_RANGE")),
    (
        STAUNCH_USE_AFTER_RELEASE,
        cstr!("STAUNCH_USE_AFTER_RELEASE"),
    ),
    (STAUNCH_INVALID_CONFIG, cstr!("STAUNCH_INVALID_CONFIG")),
    (STAUNCH_NULL_VALUE, cstr!("STAUNCH_NULL_VALUE")),
    (STAUNCH_NO_ROW, cstr!("STAUNCH_NO_ROW")),
    (STAUNCH_PARAM_COUNT, cstr!("STAUNCH_PARAM_COUNT")),
    (STAUNCH_BAD_PARAM_TYPE, cstr!("STAUNCH_BAD_PARAM_TYPE")),
    (STAUNCH_CONN_BUSY, cstr!("STAUNCH_CONN_BUSY")),
    (STAUNCH_INVALID_ARGUMENT, cstr!("STAUNCH_INVALID_ARGUMENT")),
    (STAUNCH_POOL_EXHAUSTED, cstr!("STAUNCH_POOL_EXHAUSTED")),
    (STAUNCH_UNREACHABLE, cstr!("STAUNCH_UNREACHABLE")),
    (STAUNCH_CONNECT_REJECTED, cstr!("STAUNCH_CONNECT_REJECTED")),
    (STAUNCH_CONNECT_FAILED, cstr!("STAUNCH_CONNECT_FAILED")),
    (STAUNCH_CLOSED, cstr!("STAUNCH_CLOSED")),
    (STAUNCH_NO_WRITER, cstr!("STAUNCH_NO_WRITER")),
    (STAUNCH_SERVER_ERROR, cstr!("STAUNCH_SERVER_ERROR")),
    (STAUNCH_IO_ERROR, cstr!("STAUNCH_IO_ERROR")),
    (STAUNCH_BROKEN, cstr!("STAUNCH_BROKEN")),
    (
        STAUNCH_STATEMENT_TIMEOUT,
        cstr!("STAUNCH_STATEMENT_TIMEOUT"),
    ),
    (STAUNCH_CANCELLED, cstr!("STAUNCH_CANCELLED")),
    (
        STAUNCH_SERVER_UNRESPONSIVE,
        cstr!("STAUNCH_SERVER_UNRESPONSIVE"),
    ),
    (STAUNCH_CONFLICT, cstr!("STAUNCH_CONFLICT")),
    (STAUNCH_INTERNAL, cstr!("STAUNCH_INTERNAL")),
    (STAUNCH_PANIC, cstr!("STAUNCH_PANIC")),
];

/// The status a crate error maps to.
pub(crate) fn status_of(kind: ErrorKind) -> staunch_status {
    match kind {
        ErrorKind::Config => STAUNCH_INVALID_CONFIG,
        ErrorKind::PoolExhausted => STAUNCH_POOL_EXHAUSTED,
        ErrorKind::Unreachable => STAUNCH_UNREACHABLE,
        ErrorKind::ConnectRejected => STAUNCH_CONNECT_REJECTED,
        ErrorKind::Connect => STAUNCH_CONNECT_FAILED,
        ErrorKind::Server => STAUNCH_SERVER_ERROR,
        ErrorKind::Io => STAUNCH_IO_ERROR,
        ErrorKind::Broken => STAUNCH_BROKEN,
        ErrorKind::StatementTimeout => STAUNCH_STATEMENT_TIMEOUT,
        ErrorKind::Cancelled => STAUNCH_CANCELLED,
        ErrorKind::ServerUnresponsive => STAUNCH_SERVER_UNRESPONSIVE,
        ErrorKind::Conflict => STAUNCH_CONFLICT,
        ErrorKind::Closed => STAUNCH_CLOSED,
        ErrorKind::NoWriter => STAUNCH_NO_WRITER,
        ErrorKind::InvalidArgument => STAUNCH_INVALID_ARGUMENT,
        ErrorKind::Internal => STAUNCH_INTERNAL,
        // No wildcard: ErrorKind is non_exhaustive for other crates only, so
        // here the compiler makes every new kind get its own status.
    }
}

/// A failure on its way to the C caller: the status and what goes into the
/// error object if the caller asked for one.
#[derive(Debug)]
pub(crate) struct Failure {
    pub status: staunch_status,
    pub message: String,
    pub server_code: u32,
    pub sqlstate: String,
}

impl Failure {
    pub fn new(status: staunch_status, message: impl Into<String>) -> Failure {
        Failure {
            status,
            message: message.into(),
            server_code: 0,
            sqlstate: String::new(),
        }
    }

    pub fn null(what: &str) -> Failure {
        Failure::new(STAUNCH_NULL_ARGUMENT, format!("{what} must not be NULL"))
    }

    pub fn into_error(self) -> staunch_error {
        staunch_error {
            status: self.status,
            message: to_cstring(self.message),
            server_code: self.server_code,
            sqlstate: to_cstring(self.sqlstate),
        }
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        Failure::from(&e)
    }
}

impl From<&Error> for Failure {
    fn from(e: &Error) -> Failure {
        Failure {
            status: status_of(e.kind()),
            message: e.to_string(),
            server_code: e.server_code().map_or(0, u32::from),
            sqlstate: e.sql_state().unwrap_or_default().to_owned(),
        }
    }
}

/// A C string from any Rust string: an interior NUL (which a server message
/// could carry) becomes U+FFFD instead of truncating or failing.
pub(crate) fn to_cstring(s: String) -> CString {
    match CString::new(s) {
        Ok(c) => c,
        Err(e) => {
            let s = String::from_utf8_lossy(&e.into_vec()).replace('\0', "\u{FFFD}");
            CString::new(s).unwrap_or_default()
        }
    }
}

/// A C string from bytes the server sent (info strings): as `to_cstring`,
/// with bytes that are not UTF-8 replaced too.
pub(crate) fn to_cstring_bytes(b: Vec<u8>) -> CString {
    match String::from_utf8(b) {
        Ok(s) => to_cstring(s),
        Err(e) => to_cstring(String::from_utf8_lossy(e.as_bytes()).into_owned()),
    }
}

/// An error object: what went wrong, in detail. Created by staunch when a
/// call fails and the caller passed a non-NULL `staunch_error **err`; owned by
/// the caller, who frees it with `staunch_error_free`. Immutable: may be read
/// from any thread.
#[derive(Debug)]
pub struct staunch_error {
    status: staunch_status,
    message: CString,
    server_code: u32,
    sqlstate: CString,
}

/// The message of an error: one line saying what failed and why (for a
/// timeout: the pool state and the last connect error). NUL-terminated UTF-8,
/// owned by `err`, valid until `staunch_error_free(err)`. Returns "" when
/// `err` is NULL. Never blocks; may be called from any thread.
#[no_mangle]
pub extern "C" fn staunch_error_message(err: *const staunch_error) -> *const c_char {
    super::guard_value(cstr!("").as_ptr(), || {
        // SAFETY: the caller passes NULL or an error from staunch, not freed.
        match unsafe { err.as_ref() } {
            Some(e) => e.message.as_ptr(),
            None => cstr!("").as_ptr(),
        }
    })
}

/// The status code of an error (the same value the failing call returned).
/// Returns STAUNCH_NULL_ARGUMENT when `err` is NULL. Never blocks; any thread.
#[no_mangle]
pub extern "C" fn staunch_error_status(err: *const staunch_error) -> staunch_status {
    super::guard_value(STAUNCH_NULL_ARGUMENT, || {
        // SAFETY: as in staunch_error_message.
        unsafe { err.as_ref() }.map_or(STAUNCH_NULL_ARGUMENT, |e| e.status)
    })
}

/// The MySQL/MariaDB error number the server sent (e.g. 1146 for an unknown
/// table, 1045 for access denied), or 0 when the error did not come from the
/// server or `err` is NULL. Never blocks; any thread.
#[no_mangle]
pub extern "C" fn staunch_error_server_code(err: *const staunch_error) -> u32 {
    super::guard_value(0, || {
        // SAFETY: as in staunch_error_message.
        unsafe { err.as_ref() }.map_or(0, |e| e.server_code)
    })
}

/// The five-character SQLSTATE the server sent with its error (e.g. "42S02"),
/// or "" when there is none or `err` is NULL. Owned by `err`, valid until
/// `staunch_error_free(err)`. Never blocks; any thread.
#[no_mangle]
pub extern "C" fn staunch_error_sqlstate(err: *const staunch_error) -> *const c_char {
    super::guard_value(cstr!("").as_ptr(), || {
        // SAFETY: as in staunch_error_message.
        match unsafe { err.as_ref() } {
            Some(e) => e.sqlstate.as_ptr(),
            None => cstr!("").as_ptr(),
        }
    })
}

/// What kind of failure a server error is (`STAUNCH_CATEGORY_*`): one table
/// in the library, keyed by the server's error number with the SQLSTATE's
/// class for numbers it does not name, so that every binding raises the same
/// exception class for the same error. Numbers are stable and never reused;
/// new categories may be added, and a binding should treat one it does not
/// know as `STAUNCH_CATEGORY_OPERATIONAL`.
pub type staunch_category = u32;

/// The error did not come from the server (see its status instead).
pub const STAUNCH_CATEGORY_NONE: staunch_category = 0;
/// A constraint refused the change: duplicate key, foreign key, NOT NULL,
/// CHECK (PEP 249 IntegrityError, SQLSTATE class 23).
pub const STAUNCH_CATEGORY_INTEGRITY: staunch_category = 1;
/// The statement is wrong: syntax, unknown table or column (PEP 249
/// ProgrammingError, class 42).
pub const STAUNCH_CATEGORY_PROGRAMMING: staunch_category = 2;
/// A value does not fit: too long, out of range (PEP 249 DataError, class 22).
pub const STAUNCH_CATEGORY_DATA: staunch_category = 3;
/// The server does not support what was asked (PEP 249 NotSupportedError,
/// class 0A).
pub const STAUNCH_CATEGORY_NOT_SUPPORTED: staunch_category = 4;
/// The database failed for a reason outside the statement's text (PEP 249
/// OperationalError): every error nothing else names.
pub const STAUNCH_CATEGORY_OPERATIONAL: staunch_category = 5;
/// The server's own internal failure, an error number below 1000 (PEP 249
/// InternalError).
pub const STAUNCH_CATEGORY_INTERNAL: staunch_category = 6;
/// A missing privilege or wrong credentials (operational in PEP 249; JDBC
/// SQLInvalidAuthorizationSpecException, class 28).
pub const STAUNCH_CATEGORY_ACCESS: staunch_category = 7;
/// The connection was refused or lost (operational; JDBC
/// SQLNonTransientConnectionException, class 08).
pub const STAUNCH_CATEGORY_CONNECTION: staunch_category = 8;
/// The server rolled the transaction back: deadlock, certification failure
/// (operational; JDBC SQLTransactionRollbackException, class 40).
pub const STAUNCH_CATEGORY_ROLLBACK: staunch_category = 9;
/// The server ended the statement at its time limit (operational; JDBC
/// SQLTimeoutException).
pub const STAUNCH_CATEGORY_TIMEOUT: staunch_category = 10;
/// A lock wait timed out; the statement may succeed when tried again
/// (operational; JDBC SQLTransientException).
pub const STAUNCH_CATEGORY_TRANSIENT: staunch_category = 11;

/// The C number of a category.
pub(crate) fn category_number(c: ErrorCategory) -> staunch_category {
    match c {
        ErrorCategory::Integrity => STAUNCH_CATEGORY_INTEGRITY,
        ErrorCategory::Programming => STAUNCH_CATEGORY_PROGRAMMING,
        ErrorCategory::Data => STAUNCH_CATEGORY_DATA,
        ErrorCategory::NotSupported => STAUNCH_CATEGORY_NOT_SUPPORTED,
        ErrorCategory::Operational => STAUNCH_CATEGORY_OPERATIONAL,
        ErrorCategory::Internal => STAUNCH_CATEGORY_INTERNAL,
        ErrorCategory::Access => STAUNCH_CATEGORY_ACCESS,
        ErrorCategory::Connection => STAUNCH_CATEGORY_CONNECTION,
        ErrorCategory::Rollback => STAUNCH_CATEGORY_ROLLBACK,
        ErrorCategory::Timeout => STAUNCH_CATEGORY_TIMEOUT,
        ErrorCategory::Transient => STAUNCH_CATEGORY_TRANSIENT,
    }
}

/// The category of the server error in `err` (`STAUNCH_CATEGORY_*`), from
/// its error number and SQLSTATE; STAUNCH_CATEGORY_NONE when the error did
/// not come from the server or `err` is NULL. Never blocks; any thread.
#[no_mangle]
pub extern "C" fn staunch_error_category(err: *const staunch_error) -> staunch_category {
    super::guard_value(STAUNCH_CATEGORY_NONE, || {
        // SAFETY: as in staunch_error_message.
        let Some(e) = (unsafe { err.as_ref() }) else {
            return STAUNCH_CATEGORY_NONE;
        };
        // server_code came from a u16; 0 means the server sent none.
        match u16::try_from(e.server_code) {
            Ok(code) if code != 0 => category_number(ErrorCategory::of_server(
                code,
                e.sqlstate.to_str().unwrap_or(""),
            )),
            _ => STAUNCH_CATEGORY_NONE,
        }
    })
}

/// Frees an error object. NULL is a no-op. Strings obtained from it become
/// invalid. Must not be called twice on the same error, nor while another
/// thread reads it. Never blocks; any thread.
#[no_mangle]
pub extern "C" fn staunch_error_free(err: *mut staunch_error) {
    super::guard_value((), || {
        if !err.is_null() {
            // SAFETY: created by Box::into_raw in `guard`, freed once (caller's
            // contract).
            drop(unsafe { Box::from_raw(err) });
        }
    })
}

/// The name of a status code, e.g. "STAUNCH_POOL_EXHAUSTED", or
/// "STAUNCH_UNKNOWN_STATUS" for a number staunch does not know. The string is
/// static. Never blocks; any thread.
#[no_mangle]
pub extern "C" fn staunch_status_name(status: staunch_status) -> *const c_char {
    super::guard_value(cstr!("STAUNCH_UNKNOWN_STATUS").as_ptr(), || {
        STATUS_NAMES
            .iter()
            .find(|(s, _)| *s == status)
            .map_or(cstr!("STAUNCH_UNKNOWN_STATUS").as_ptr(), |(_, n)| {
                n.as_ptr()
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(code: u32, state: &str) -> staunch_error {
        let mut f = Failure::new(STAUNCH_SERVER_ERROR, "x");
        f.server_code = code;
        f.sqlstate = state.to_owned();
        f.into_error()
    }

    #[test]
    fn the_category_comes_from_the_cores_table() {
        let e = server(1062, "23000");
        assert_eq!(staunch_error_category(&e), STAUNCH_CATEGORY_INTEGRITY);
        let e = server(30001, "0A000");
        assert_eq!(staunch_error_category(&e), STAUNCH_CATEGORY_NOT_SUPPORTED);
        // No server error: no category, whatever the status.
        let e = Failure::new(STAUNCH_IO_ERROR, "reset").into_error();
        assert_eq!(staunch_error_category(&e), STAUNCH_CATEGORY_NONE);
        assert_eq!(
            staunch_error_category(std::ptr::null()),
            STAUNCH_CATEGORY_NONE
        );
        // A number no u16 holds never came from a server.
        let e = server(70000, "23000");
        assert_eq!(staunch_error_category(&e), STAUNCH_CATEGORY_NONE);
    }
}
