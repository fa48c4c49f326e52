//! `staunch_options`: a pool configuration built knob by knob.

use std::ffi::{c_char, c_void};

use std::sync::Arc;

use super::error::{staunch_error, staunch_status, Failure};
use super::events::{staunch_event_callback, staunch_finalizer, Callback};
use super::{arg_mut, arg_str, guard, guard_value, Out};
use crate::config::{find_knob, Builder};

/// A pool configuration: a URL and/or knobs, and an optional event callback.
/// Created by `staunch_options_new`, freed by `staunch_options_free`; one
/// options object can open any number of pools. Not thread-safe: use it from
/// one thread at a time (`staunch_pool_open_options` only reads it).
pub struct staunch_options {
    pub(crate) builder: Builder,
    pub(crate) callback: Option<Arc<Callback>>,
}

impl std::fmt::Debug for staunch_options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("staunch_options")
            .field("builder", &self.builder)
            .field("callback", &self.callback.is_some())
            .finish()
    }
}

/// Creates an options object with every knob at its default (connect to
/// 127.0.0.1:3306, max_size 10, connection_timeout 10s, connect_timeout 3s,
/// ...; see docs/knobs.md for the list). On success `*out` receives it; free it
/// with `staunch_options_free`. Never blocks; any thread.
#[no_mangle]
pub extern "C" fn staunch_options_new(
    out: *mut *mut staunch_options,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        let out = Out::new(out, "out")?;
        out.set(Box::into_raw(Box::new(staunch_options {
            builder: Builder::new(),
            callback: None,
        })));
        Ok(())
    })
}

/// Sets one knob by name from its text form, as in a URL parameter: e.g.
/// ("max_size", "8"), ("connect_timeout", "250ms"), ("idle_timeout", "off").
/// Knobs apply in call order with `staunch_options_set_url` (the later wins).
///
/// An unknown knob fails at once with STAUNCH_INVALID_CONFIG naming it. A
/// value that does not parse or is out of range is reported, naming the knob,
/// by `staunch_pool_open_options` (ranges are checked when the whole
/// configuration is known). Both strings are copied. Never blocks; one thread
/// at a time per options object.
#[no_mangle]
pub extern "C" fn staunch_options_set(
    opts: *mut staunch_options,
    knob: *const c_char,
    value: *const c_char,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live options object (header contract).
        let o = unsafe { arg_mut(opts, "opts") }?;
        // SAFETY: NULL or NUL-terminated strings (header contract).
        let knob = unsafe { arg_str(knob, "knob") }?;
        // SAFETY: as above.
        let value = unsafe { arg_str(value, "value") }?;
        find_knob(knob).map_err(Failure::from)?;
        o.builder = std::mem::take(&mut o.builder).set(knob, value);
        Ok(())
    })
}

/// Applies a URL, `mysql://user:pass@host:port/db?knob=value&...`: host,
/// port, user, password, database and any knobs it names. Knobs apply in call
/// order with `staunch_options_set`. A malformed URL is reported by
/// `staunch_pool_open_options`. The string is copied. Never blocks; one thread
/// at a time per options object.
#[no_mangle]
pub extern "C" fn staunch_options_set_url(
    opts: *mut staunch_options,
    url: *const c_char,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live options object (header contract).
        let o = unsafe { arg_mut(opts, "opts") }?;
        // SAFETY: NULL or a NUL-terminated string (header contract).
        let url = unsafe { arg_str(url, "url") }?;
        o.builder = std::mem::take(&mut o.builder).url(url);
        Ok(())
    })
}

/// Sets the event callback of the pools opened from these options (replacing
/// any previous one, whose finalizer then runs if nothing else uses it).
///
/// `callback` is called for every event (see staunch_event) on the thread
/// that observed it: pool threads (staunch-adder-N, staunch-housekeeper,
/// staunch-watchdog) for connects, keepalive, retirement and leaks; the
/// calling thread for validation failures on borrow, timeouts of
/// staunch_pool_get, connections closed on release and staunch_pool_close
/// (one a pool thread holds as the pool closes is closed on that thread).
/// Several threads may call it at once. It must be quick, must not block, and
/// must not call staunch functions (other than reading the event); no pool
/// lock is held while it runs. It may run before staunch_pool_open_options
/// returns (connect events of the first connections).
///
/// On success, ownership of `user_data` passes to staunch: `finalizer` (may
/// be NULL) is called exactly once with it, when neither these options nor
/// any pool opened from them can call `callback` again, that is after
/// staunch_options_free and staunch_pool_free of every such pool, on the
/// thread of the last of those calls. A NULL `callback` removes the callback;
/// `finalizer` is then called at once. On failure (NULL `opts`) the finalizer
/// is not called. Never blocks; one thread at a time per options object.
#[no_mangle]
pub extern "C" fn staunch_options_set_event_callback(
    opts: *mut staunch_options,
    callback: staunch_event_callback,
    user_data: *mut c_void,
    finalizer: staunch_finalizer,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live options object (header contract).
        let o = unsafe { arg_mut(opts, "opts") }?;
        let new = match callback {
            Some(cb) => Some(Arc::new(Callback::new(cb, user_data, finalizer))),
            None => {
                if let Some(f) = finalizer {
                    // SAFETY: the caller's finalizer with its user_data, once.
                    unsafe { f(user_data) };
                }
                None
            }
        };
        // Dropping the old one may run its finalizer.
        drop(std::mem::replace(&mut o.callback, new));
        Ok(())
    })
}

/// Frees an options object. NULL is a no-op. Pools opened from it are not
/// affected. Runs the event callback's finalizer if no pool uses it. Never
/// blocks (beyond the finalizer). Must be the last call on the options.
#[no_mangle]
pub extern "C" fn staunch_options_free(opts: *mut staunch_options) {
    guard_value((), || {
        if !opts.is_null() {
            // SAFETY: created by staunch_options_new, freed once (contract).
            drop(unsafe { Box::from_raw(opts) });
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ffi::{
        staunch_error_free, staunch_error_message, STAUNCH_INVALID_CONFIG, STAUNCH_OK,
    };
    use std::ffi::{CStr, CString};
    use std::ptr;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static FINALIZED: AtomicUsize = AtomicUsize::new(0);

    unsafe extern "C" fn cb(_: *const super::super::events::staunch_event, _: *mut c_void) {}
    unsafe extern "C" fn fin(_: *mut c_void) {
        FINALIZED.fetch_add(1, Ordering::SeqCst);
    }

    #[test]
    fn unknown_knob_fails_at_once_and_finalizers_run_once() {
        let mut opts = ptr::null_mut();
        assert_eq!(staunch_options_new(&mut opts, ptr::null_mut()), STAUNCH_OK);
        let (knob, one) = (
            CString::new("max_sise").unwrap(),
            CString::new("1").unwrap(),
        );
        let mut err = ptr::null_mut();
        let st = staunch_options_set(opts, knob.as_ptr(), one.as_ptr(), &mut err);
        assert_eq!(st, STAUNCH_INVALID_CONFIG);
        // SAFETY: a live error object.
        let msg = unsafe { CStr::from_ptr(staunch_error_message(err)) };
        assert!(msg.to_str().unwrap().contains("unknown knob \"max_sise\""));
        staunch_error_free(err);

        let before = FINALIZED.load(Ordering::SeqCst);
        let set = |f| {
            staunch_options_set_event_callback(opts, Some(cb), ptr::null_mut(), f, ptr::null_mut())
        };
        assert_eq!(set(Some(fin)), STAUNCH_OK);
        assert_eq!(set(Some(fin)), STAUNCH_OK); // replaces: the first finalizer runs
        assert_eq!(FINALIZED.load(Ordering::SeqCst), before + 1);
        staunch_options_free(opts);
        assert_eq!(FINALIZED.load(Ordering::SeqCst), before + 2);
        staunch_options_free(ptr::null_mut());
    }
}
