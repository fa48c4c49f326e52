//! `staunch_options`: a pool configuration built knob by knob.

use std::ffi::{c_char, c_void, CString};

use std::sync::{Arc, OnceLock};

use super::error::{staunch_error, staunch_status, Failure};
use super::events::{staunch_event_callback, staunch_finalizer, Callback};
use super::pool::copy_text;
use super::{arg_mut, arg_str, guard, guard_value, Out};
use crate::config::{find_knob, Builder, Config};

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
/// Knobs apply in call order with `staunch_options_set_url` (the later wins);
/// a default (`staunch_options_set_default`) never replaces them.
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

/// Sets a knob's default, by name from its text form: `value` applies
/// unless the user gives that knob, through the URL of
/// `staunch_options_set_url` (its query, or its user, password, host, port
/// or database) or through `staunch_options_set`, whether before or after
/// this call. For a binding's own defaults, e.g. `("interpolate_params",
/// "true")` where the language's drivers interpolate, which a URL saying
/// `interpolate_params=false` overrides. A later default replaces an
/// earlier one.
///
/// An unknown knob, or a value that does not parse, fails at once with
/// STAUNCH_INVALID_CONFIG naming the knob (even when the user's value wins);
/// ranges are checked by `staunch_pool_open_options`. Both strings are
/// copied. Never blocks; one thread at a time per options object. Since 1.8.
#[no_mangle]
pub extern "C" fn staunch_options_set_default(
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
        o.builder.set_default(knob, value).map_err(Failure::from)
    })
}

/// Applies a URL, `mysql://user:pass@host:port/db?knob=value&...`: host,
/// port, user, password, database and any knobs it names. Knobs apply in call
/// order with `staunch_options_set`; a default (`staunch_options_set_default`)
/// never replaces what the URL gives. A malformed URL is reported by
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

/// Declares `name` a URL parameter of the binding, not of staunch (a
/// database/sql or JDBC option, e.g. Go's `parseTime`): a URL applied after
/// this call (`staunch_options_set_url`) neither applies nor refuses a
/// parameter of that name, so a binding hands its user's whole URL to the
/// library and reads its own parameters from `staunch_url_query`. A knob's
/// name (see `staunch_knob_name`), an empty name or one holding `= & ? # /
/// @` is STAUNCH_INVALID_CONFIG. The string is copied. Never blocks; one
/// thread at a time per options object. Since 1.9.
#[no_mangle]
pub extern "C" fn staunch_options_claim_param(
    opts: *mut staunch_options,
    name: *const c_char,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live options object (header contract).
        let o = unsafe { arg_mut(opts, "opts") }?;
        // SAFETY: NULL or a NUL-terminated string (header contract).
        let name = unsafe { arg_str(name, "name") }?;
        o.builder.claim(name).map_err(Failure::from)
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

/// How many knobs there are: `staunch_knob_name` names them, for a binding
/// that tells its own options from staunch's. Never blocks; any thread. Since 1.8.
#[no_mangle]
pub extern "C" fn staunch_knob_count() -> usize {
    guard_value(0, || knob_names().len())
}

/// The name of knob `index` (0 to `staunch_knob_count() - 1`), as
/// `staunch_options_set` and URLs take it: a static string. NULL for an
/// index past the end. Never blocks; any thread. Since 1.8.
#[no_mangle]
pub extern "C" fn staunch_knob_name(index: usize) -> *const c_char {
    guard_value(std::ptr::null(), || {
        knob_names()
            .get(index)
            .map_or(std::ptr::null(), |n| n.as_ptr())
    })
}

/// The knob names as C strings, made once and kept for the process.
fn knob_names() -> &'static [CString] {
    static NAMES: OnceLock<Vec<CString>> = OnceLock::new();
    NAMES.get_or_init(|| {
        Config::knob_names()
            .map(|n| CString::new(n).expect("knob names hold no NUL"))
            .collect()
    })
}

/// Writes `url` with every password replaced by `<redacted>` (the
/// user-info's and any `*password=` parameter), as staunch's own messages
/// quote URLs, into `buf` as `staunch_pool_metrics` writes its text
/// (`snprintf`'s rules, `*len` the redacted URL's length). A malformed URL
/// is redacted too (when its user-info cannot be told apart, all of it is
/// replaced), never an error. Never blocks; any thread. Since 1.8.
#[no_mangle]
pub extern "C" fn staunch_url_redact(
    url: *const c_char,
    buf: *mut c_char,
    cap: usize,
    len: *mut usize,
    err: *mut *mut staunch_error,
) -> staunch_status {
    url_text(url, buf, cap, len, err, Config::redact_url)
}

/// The body of the exports that write a text made from a URL: the checks,
/// then `snprintf`'s rules.
fn url_text(
    url: *const c_char,
    buf: *mut c_char,
    cap: usize,
    len: *mut usize,
    err: *mut *mut staunch_error,
    text: impl FnOnce(&str) -> String,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a NUL-terminated string (header contract).
        let url = unsafe { arg_str(url, "url") }?;
        let len = Out::new(len, "len")?;
        // SAFETY: `buf` holds `cap` bytes (header contract).
        unsafe { copy_text(&text(url), buf, cap, len) }
    })
}

/// Writes the `knob=value&...` part of `url` (after its `?`, percent-encoded
/// as written; "" when there is none) into `buf` as `staunch_pool_metrics`
/// writes its text (`snprintf`'s rules, `*len` the query's length), found as
/// `staunch_options_set_url` finds it: after the user-info, whatever the
/// password holds (a `?` or `@` in it included). For a binding that reads
/// its own parameters (`staunch_options_claim_param`) from the URL the
/// library parses. Never blocks; any thread. Since 1.9.
#[no_mangle]
pub extern "C" fn staunch_url_query(
    url: *const c_char,
    buf: *mut c_char,
    cap: usize,
    len: *mut usize,
    err: *mut *mut staunch_error,
) -> staunch_status {
    url_text(url, buf, cap, len, err, |u| {
        Config::url_query(u).unwrap_or("").to_owned()
    })
}

/// Writes to `*at` the byte offset of the `@` that ends `url`'s user-info,
/// found as `staunch_options_set_url` finds it (the first `@` after which the
/// URL reads as hosts, database and parameters, whatever the password holds),
/// or SIZE_MAX when there is no user-info. `url` may lack a scheme: a
/// binding that translates its own URL form (`jdbc:mysql://`) passes what
/// follows its prefix, and sets the password aside before reading the rest.
/// Never blocks; any thread. Since 1.9.
#[no_mangle]
pub extern "C" fn staunch_url_userinfo_end(
    url: *const c_char,
    at: *mut usize,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a NUL-terminated string (header contract).
        let url = unsafe { arg_str(url, "url") }?;
        let at = Out::new(at, "at")?;
        at.set(Config::url_userinfo_end(url).unwrap_or(usize::MAX));
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
    fn a_claimed_param_is_the_bindings_and_its_query_is_found_by_the_parser() {
        let url = CString::new("mysql://u:p?w@h:1/db?parseTime=true&max_size=2").unwrap();
        let mut buf = [0 as c_char; 64];
        let mut len = 0;
        let st = staunch_url_query(
            url.as_ptr(),
            buf.as_mut_ptr(),
            buf.len(),
            &mut len,
            ptr::null_mut(),
        );
        assert_eq!(st, STAUNCH_OK);
        // SAFETY: NUL-terminated by copy_text.
        let q = unsafe { CStr::from_ptr(buf.as_ptr()) };
        assert_eq!(
            (q.to_str().unwrap(), len),
            ("parseTime=true&max_size=2", 25)
        );

        let mut opts = ptr::null_mut();
        assert_eq!(staunch_options_new(&mut opts, ptr::null_mut()), STAUNCH_OK);
        let name = CString::new("parseTime").unwrap();
        assert_eq!(
            staunch_options_claim_param(opts, name.as_ptr(), ptr::null_mut()),
            STAUNCH_OK
        );
        assert_eq!(
            staunch_options_set_url(opts, url.as_ptr(), ptr::null_mut()),
            STAUNCH_OK
        );
        // SAFETY: a live options object.
        let b = unsafe { &*opts }.builder.clone();
        assert_eq!(b.config().unwrap().pool().max_size, 2);
        let knob = CString::new("max_size").unwrap();
        let st = staunch_options_claim_param(opts, knob.as_ptr(), ptr::null_mut());
        assert_eq!(st, STAUNCH_INVALID_CONFIG);
        staunch_options_free(opts);
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

    #[test]
    fn defaults_knob_names_and_redaction() {
        let c = |s: &str| CString::new(s).unwrap();
        let mut opts = ptr::null_mut();
        assert_eq!(staunch_options_new(&mut opts, ptr::null_mut()), STAUNCH_OK);
        let (ip, t) = (c("interpolate_params"), c("true"));
        let url = c("mysql://h/db?interpolate_params=false");
        assert_eq!(
            staunch_options_set_url(opts, url.as_ptr(), ptr::null_mut()),
            STAUNCH_OK
        );
        let st = staunch_options_set_default(opts, ip.as_ptr(), t.as_ptr(), ptr::null_mut());
        assert_eq!(st, STAUNCH_OK);
        // SAFETY: a live options object, used by this thread only.
        let cfg = unsafe { &*opts }.builder.clone().config().unwrap();
        assert!(!cfg.connect().interpolate_params);
        let mut err = ptr::null_mut();
        let bad = c("maybe");
        let st = staunch_options_set_default(opts, ip.as_ptr(), bad.as_ptr(), &mut err);
        assert_eq!(st, STAUNCH_INVALID_CONFIG);
        // SAFETY: a live error object.
        let msg = unsafe { CStr::from_ptr(staunch_error_message(err)) };
        assert!(
            msg.to_str().unwrap().starts_with("interpolate_params"),
            "{msg:?}"
        );
        staunch_error_free(err);
        staunch_options_free(opts);

        let n = staunch_knob_count();
        let names: Vec<&str> = (0..n)
            // SAFETY: static NUL-terminated strings.
            .map(|i| {
                unsafe { CStr::from_ptr(staunch_knob_name(i)) }
                    .to_str()
                    .unwrap()
            })
            .collect();
        assert_eq!(names, Config::knob_names().collect::<Vec<_>>());
        assert!(staunch_knob_name(n).is_null());

        let url = c("mysql://app:hunter2@h/db?monitor_password=x2");
        let (mut buf, mut len) = ([0 as c_char; 16], 0usize);
        let st = staunch_url_redact(
            url.as_ptr(),
            buf.as_mut_ptr(),
            buf.len(),
            &mut len,
            ptr::null_mut(),
        );
        assert_eq!(st, STAUNCH_OK);
        let want = "mysql://app:<redacted>@h/db?monitor_password=<redacted>";
        assert_eq!(len, want.len());
        // SAFETY: NUL-terminated by staunch_url_redact.
        let cut = unsafe { CStr::from_ptr(buf.as_ptr()) };
        assert_eq!(cut.to_str().unwrap(), &want[..15]);
    }
}
