//! `staunch_cancel_token`: stops a waiting `staunch_pool_get_cancellable`
//! from another thread (Go's `context`, Python's Ctrl-C, a JDBC timeout).

use super::error::{staunch_error, staunch_status};
use super::{arg, guard, guard_value, Out};
use crate::CancelToken;

/// A cancel token: `staunch_cancel_token_cancel` makes every
/// `staunch_pool_get_cancellable` / `_get_read_cancellable` waiting with it
/// return STAUNCH_CANCELLED promptly, and every later one at once (a token
/// stays cancelled; make a new one per request). Thread-safe: any thread may
/// cancel it while others wait with it. Free with
/// `staunch_cancel_token_free` once no call uses it.
pub struct staunch_cancel_token {
    token: CancelToken,
}

impl std::fmt::Debug for staunch_cancel_token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.token.fmt(f)
    }
}

impl staunch_cancel_token {
    pub(crate) fn token(&self) -> &CancelToken {
        &self.token
    }
}

/// Creates a cancel token, not cancelled. `*out` receives it, owned by the
/// caller. Never blocks; any thread.
#[no_mangle]
pub extern "C" fn staunch_cancel_token_new(
    out: *mut *mut staunch_cancel_token,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        let out = Out::new(out, "out")?;
        out.set(Box::into_raw(Box::new(staunch_cancel_token {
            token: CancelToken::new(),
        })));
        Ok(())
    })
}

/// Cancels the token: gets waiting with it return STAUNCH_CANCELLED (the
/// pool is left as if they had never waited), later ones fail at once.
/// Idempotent. Never blocks (beyond a short lock); any thread, at any time
/// before `staunch_cancel_token_free`. Safe to call from a signal-free
/// context only (it takes a lock): not from a signal handler.
#[no_mangle]
pub extern "C" fn staunch_cancel_token_cancel(
    token: *const staunch_cancel_token,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live token (header contract).
        let t = unsafe { arg(token, "token") }?;
        t.token.cancel();
        Ok(())
    })
}

/// Whether the token was cancelled (false for NULL). Never blocks; any
/// thread.
#[no_mangle]
pub extern "C" fn staunch_cancel_token_is_cancelled(token: *const staunch_cancel_token) -> bool {
    guard_value(false, || {
        // SAFETY: NULL or a live token (header contract).
        unsafe { token.as_ref() }.is_some_and(|t| t.token.is_cancelled())
    })
}

/// Frees a token. NULL is a no-op. Must not run while a call uses the token
/// (wait for the get it was given to return first).
#[no_mangle]
pub extern "C" fn staunch_cancel_token_free(token: *mut staunch_cancel_token) {
    guard_value((), || {
        if !token.is_null() {
            // SAFETY: created by staunch_cancel_token_new, freed once.
            drop(unsafe { Box::from_raw(token) });
        }
    })
}
