//! The bodies of the fuzz targets (`fuzz_targets/`, cargo-fuzz on nightly),
//! and the unit tests that replay the committed corpus through them on
//! stable (`cargo test --manifest-path fuzz/Cargo.toml --lib`).
//!
//! They reach the library through its public API and C ABI, and through
//! `staunch::__fuzz` (hidden, the `fuzzing` feature) for the few
//! crate-private items they check. Each body takes the raw
//! fuzzer bytes, decodes them with `arbitrary`, and checks invariants (not
//! only "no panic"): a failed call gives a non-empty message with a status of
//! the documented set, a password never shows in any output, an
//! out-parameter is written only on success, and the FFI agrees with the
//! Rust API it wraps.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

use std::ffi::{c_char, c_void, CStr, CString};
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use arbitrary::{Arbitrary, Unstructured};
use staunch::mysql_common::constants::{ColumnFlags, ColumnType};
use staunch::mysql_common::packets::Column;
use staunch::mysql_common::value::Value;

use staunch::__fuzz::{
    bind_bytes_as_binary, column_type, knob_names, param_to_value as to_value,
    params_to_values as to_values, rows_from_values, status_names, view, with_passwords,
    MAX_POOL_SIZE,
};
use staunch::duration::{fmt_duration, parse_duration};
use staunch::ffi::*;
use staunch::{Builder, Config, Error, ErrorKind};

fn redact_url(url: &str) -> String {
    Config::redact_url(url)
}

// ---------------------------------------------------------------------------
// config_url

/// A prefix no message template, knob name or default contains, so that a
/// password built from it can be searched for in any output.
const SECRET_MARK: &str = "Zq9";

/// URL and configuration parsing: `Config::from_url`, `Builder::set` and the
/// typed setters, durations, multi-host URLs and `redact_url`.
pub fn config_url(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let mode = u.int_in_range(0..=4u8).unwrap_or(0);
    match mode {
        0 => raw_url(&String::from_utf8_lossy(u.take_rest())),
        1 => secret_url(&mut u),
        2 => builder_knobs(&mut u),
        3 => durations(&mut u),
        _ => knob_in_url_equals_set(&mut u),
    }
}

/// Arbitrary text as a URL.
fn raw_url(s: &str) {
    let red = redact_url(s);
    assert_eq!(
        redact_url(&red),
        red,
        "redact_url is not idempotent on {s:?}"
    );
    match Config::from_url(s) {
        Ok(cfg) => check_config(&cfg),
        Err(e) => check_config_error(&e, &[]),
    }
    let _ = format!("{:?}", Builder::new().url(s));
}

/// What every configuration that parsed must satisfy.
fn check_config(cfg: &Config) {
    let v = view(cfg);
    assert!((1..=MAX_POOL_SIZE).contains(&v.max_size));
    assert!(v.min_idle <= v.max_size);
    assert!((1..=64).contains(&v.adder_threads));
    assert!(v.port != 0);
    assert!(v.socket.is_some() || !v.host.is_empty());
    assert!(!cfg.connect().endpoint().is_empty());
    // Debug output does not depend on the passwords: they are not in it.
    let shown = format!("{cfg:?}");
    let other = with_passwords(cfg, "\u{1}other");
    assert_eq!(shown, format!("{other:?}"), "Debug shows a password");
}

/// What every configuration error must satisfy; `secrets` must not show.
fn check_config_error(e: &Error, secrets: &[&str]) {
    assert_eq!(e.kind(), ErrorKind::Config, "{e}");
    let msg = e.to_string();
    assert!(!msg.trim().is_empty(), "empty error message");
    let dbg = format!("{e:?}");
    for s in secrets {
        assert!(
            !msg.contains(s),
            "the error shows the password {s:?}: {msg}"
        );
        assert!(
            !dbg.contains(s),
            "the error shows the password {s:?}: {dbg}"
        );
    }
}

/// `%XX` for every byte except ASCII letters and digits.
fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

fn string_without(u: &mut Unstructured, banned: &str) -> String {
    let s: String = u.arbitrary().unwrap_or_default();
    s.chars().filter(|c| !banned.contains(*c)).collect()
}

/// A URL whose password sits where a password may be written (the userinfo,
/// or a `password`/`monitor_password` parameter), correctly escaped, among
/// arbitrary other parts (scheme, user, hosts, database, parameters): the
/// password must not show in the error, the configuration's Debug output or
/// `redact_url`'s result.
fn secret_url(u: &mut Unstructured) {
    const SCHEMES: &[&str] = &[
        "mysql://",
        "mariadb://",
        "mysql:/",
        "mysql:",
        "mysql//",
        "MySQL://",
        "mysql:///",
        "postgres://",
        "",
    ];
    let scheme = match u.choose(SCHEMES) {
        Ok(s) if !u.ratio(1, 8u8).unwrap_or(false) => s.to_string(),
        _ => string_without(u, "/?@"),
    };
    let user = string_without(u, ":/?@");
    let secret = format!("{SECRET_MARK}{}", string_without(u, ""));
    // Characters that need no escape where they go are sometimes left raw.
    let mut enc = String::new();
    for c in secret.chars() {
        let raw = !"%/?&".contains(c) && u.arbitrary().unwrap_or(false);
        if raw {
            enc.push(c);
        } else {
            enc.push_str(&percent_encode(c.encode_utf8(&mut [0; 4])));
        }
    }
    let hosts = string_without(u, "/?@");
    let db = string_without(u, "?");
    let query = string_without(u, "");
    let place = u.int_in_range(0..=2u8).unwrap_or(0);
    let others = format!("{scheme}\n{user}\n{hosts}\n{db}\n{query}");
    if others.contains(SECRET_MARK) {
        return;
    }
    let url = match place {
        0 => format!("{scheme}{user}:{enc}@{hosts}/{db}?{query}"),
        1 => format!("{scheme}{user}@{hosts}/{db}?{query}&password={enc}"),
        _ => format!("{scheme}{user}@{hosts}/{db}?monitor_password={enc}&{query}"),
    };
    // The password must occur once, in its slot, not also across the joins
    // of the other parts.
    if url.replacen(enc.as_str(), "\0", 1).contains(SECRET_MARK) {
        return;
    }
    let secrets = [secret.as_str(), enc.as_str()];
    let red = redact_url(&url);
    for s in secrets {
        assert!(
            !red.contains(s),
            "redact_url({url:?}) shows the password: {red}"
        );
    }
    match Config::from_url(&url) {
        Ok(cfg) => {
            check_config(&cfg);
            let shown = format!("{cfg:?}");
            for s in secrets {
                assert!(!shown.contains(s), "Debug of {url:?} shows the password");
            }
        }
        Err(e) => check_config_error(&e, &secrets),
    }
    let b = format!("{:?}", Builder::new().url(&url));
    for s in secrets {
        assert!(
            !b.contains(s),
            "Builder Debug of {url:?} shows the password"
        );
    }
}

fn arbitrary_duration(u: &mut Unstructured) -> Duration {
    match u.int_in_range(0..=3u8).unwrap_or(0) {
        0 => Duration::from_millis(u.int_in_range(0..=10_000).unwrap_or(0)),
        1 => Duration::from_micros(u.int_in_range(0..=100_000).unwrap_or(0)),
        _ => u.arbitrary().unwrap_or_default(),
    }
}

fn arbitrary_opt_duration(u: &mut Unstructured) -> Option<Duration> {
    if u.arbitrary().unwrap_or(false) {
        None
    } else {
        Some(arbitrary_duration(u))
    }
}

/// Knobs set one by one (by name, typed, or from URLs), then `config()`.
fn builder_knobs(u: &mut Unstructured) {
    let mut b = Builder::new();
    let mut secrets: Vec<String> = Vec::new();
    let mut others = String::new();
    let n = u.int_in_range(0..=10u8).unwrap_or(0);
    for _ in 0..n {
        match u.int_in_range(0..=5u8).unwrap_or(0) {
            0 | 1 => {
                let knob = *u.choose(&knob_names()).unwrap_or(&"max_size");
                let v: String = u.arbitrary().unwrap_or_default();
                // The secrets: `allow_cleartext_password` is a yes or no,
                // which an error may quote.
                if knob == "password" || knob == "monitor_password" {
                    let v = format!("{SECRET_MARK}{v}");
                    b = b.set(knob, &v);
                    secrets.push(v);
                } else {
                    b = b.set(knob, &v);
                    others.push_str(&v);
                }
            }
            2 => {
                let knob: String = u.arbitrary().unwrap_or_default();
                let v: String = u.arbitrary().unwrap_or_default();
                let r = Builder::new().set(&knob, &v).config();
                if !knob_names().contains(&knob.as_str()) {
                    let e = r.expect_err("an unknown knob is an error");
                    assert!(e.to_string().contains(&format!("{knob:?}")), "{e}");
                }
                others.push_str(&knob);
                others.push_str(&v);
                b = b.set(&knob, &v);
            }
            3 => {
                let url: String = u.arbitrary().unwrap_or_default();
                others.push_str(&url);
                b = b.url(&url);
            }
            4 => {
                let pw = format!("{SECRET_MARK}{}", String::arbitrary(u).unwrap_or_default());
                b = b.password(&pw);
                secrets.push(pw);
            }
            _ => {
                b = match u.int_in_range(0..=16u8).unwrap_or(0) {
                    0 => b.max_size(u.arbitrary().unwrap_or(0)),
                    1 => b.min_idle(u.arbitrary().unwrap_or(0)),
                    2 => b.connection_timeout(arbitrary_duration(u)),
                    3 => b.connect_timeout(arbitrary_duration(u)),
                    4 => b.validation_timeout(arbitrary_duration(u)),
                    5 => b.idle_timeout(arbitrary_opt_duration(u)),
                    6 => b.max_lifetime(arbitrary_opt_duration(u)),
                    7 => b.keepalive_interval(arbitrary_opt_duration(u)),
                    8 => b.leak_detection_threshold(arbitrary_opt_duration(u)),
                    9 => b.adder_threads(u.arbitrary().unwrap_or(0)),
                    10 => b.alive_bypass_window(arbitrary_duration(u)),
                    11 => b.initialization_fail_timeout(arbitrary_opt_duration(u)),
                    12 => b.query_timeout(arbitrary_opt_duration(u)),
                    13 => b.port(u.arbitrary().unwrap_or(0)),
                    14 => {
                        let h: String = u.arbitrary().unwrap_or_default();
                        others.push_str(&h);
                        b.host(&h)
                    }
                    15 => {
                        let s: Option<String> = u.arbitrary().unwrap_or_default();
                        others.push_str(s.as_deref().unwrap_or(""));
                        b.socket(s.as_deref())
                    }
                    _ => b.reset_on_return(u.arbitrary().unwrap_or(false)),
                };
            }
        }
    }
    // Only passwords not also written (even in part) elsewhere by the fuzzer
    // are searched.
    let secrets: Vec<&str> = if others.contains(SECRET_MARK) {
        Vec::new()
    } else {
        secrets.iter().map(String::as_str).collect()
    };
    let dbg = format!("{b:?}");
    for s in &secrets {
        assert!(!dbg.contains(s), "Builder Debug shows the password");
    }
    match b.config() {
        Ok(cfg) => check_config(&cfg),
        Err(e) => check_config_error(&e, &secrets),
    }
}

/// Formatting a duration and parsing it back gives about the same duration
/// (the format keeps three significant digits at least).
fn duration_round_trip(d: Duration) {
    let text = fmt_duration(d);
    let back = parse_duration("k", &text)
        .unwrap_or_else(|e| panic!("fmt_duration({d:?}) = {text:?} does not parse back: {e}"));
    let diff = back.abs_diff(d);
    assert!(
        diff <= (d / 20).max(Duration::from_micros(1)),
        "{d:?} -> {text:?} -> {back:?}"
    );
}

fn durations(u: &mut Unstructured) {
    let s: String = u.arbitrary().unwrap_or_default();
    match parse_duration("some_knob", &s) {
        Ok(d) => {
            assert!(d <= Duration::from_secs(1_000_000_000), "{s:?} -> {d:?}");
            duration_round_trip(d);
        }
        Err(e) => {
            assert_eq!(e.kind(), ErrorKind::Config);
            assert!(e.to_string().contains("some_knob"), "{e}");
        }
    }
    let d: Duration = u.arbitrary().unwrap_or_default();
    if d < Duration::from_secs(900_000_000) {
        duration_round_trip(d);
    }
}

/// `?knob=value` in a URL and `Builder::set(knob, value)` agree exactly.
fn knob_in_url_equals_set(u: &mut Unstructured) {
    let knob = *u.choose(&knob_names()).unwrap_or(&"max_size");
    let v: String = u.arbitrary().unwrap_or_default();
    let url = format!("mysql://127.0.0.1/?{knob}={}", percent_encode(&v));
    let a = Config::from_url(&url);
    let b = Builder::new().set(knob, &v).config();
    match (a, b) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a, b, "{url}");
            check_config(&a);
        }
        (Err(a), Err(b)) => {
            assert_eq!(a.to_string(), b.to_string(), "{url}");
            check_config_error(&a, &[]);
        }
        (a, b) => panic!("{url}: url gives {a:?}, set gives {b:?}"),
    }
}

// ---------------------------------------------------------------------------
// Shared checks of C-ABI results

/// A status of the documented set, and not one that means a bug.
fn check_status(s: staunch_status) {
    assert!(
        status_names().iter().any(|(c, _)| *c == s),
        "undocumented status {s}"
    );
    assert!(s != STAUNCH_PANIC && s != STAUNCH_INTERNAL, "status {s}");
}

/// A NUL-terminated UTF-8 string from a getter.
fn c_text<'a>(p: *const c_char, what: &str) -> &'a str {
    assert!(!p.is_null(), "{what} returned NULL");
    // SAFETY: staunch returns NUL-terminated strings that live as documented.
    unsafe { CStr::from_ptr(p) }
        .to_str()
        .unwrap_or_else(|_| panic!("{what} is not UTF-8"))
}

/// Runs a fallible export with or without an error out-parameter (the fuzzer
/// chooses) and checks the status and the error object.
fn call(
    u: &mut Unstructured,
    f: impl FnOnce(*mut *mut staunch_error) -> staunch_status,
) -> staunch_status {
    if u.ratio(1, 4u8).unwrap_or(false) {
        let s = f(ptr::null_mut());
        check_status(s);
        return s;
    }
    let mut err: *mut staunch_error = ptr::null_mut();
    let s = f(&mut err);
    check_status(s);
    if s == STAUNCH_OK {
        assert!(err.is_null(), "*err written on success");
    } else {
        assert!(!err.is_null(), "no error object for status {s}");
        let msg = c_text(staunch_error_message(err), "staunch_error_message");
        assert_eq!(staunch_error_status(err), s, "{msg}");
        assert!(!msg.trim().is_empty(), "empty message for status {s}");
        let state = c_text(staunch_error_sqlstate(err), "staunch_error_sqlstate");
        assert!(state.is_empty() || state.len() == 5, "{state:?}");
        staunch_error_free(err);
    }
    s
}

// ---------------------------------------------------------------------------
// ffi

/// A C string argument: NULL, or the fuzzer's bytes (maybe not UTF-8) cut at
/// their first NUL, NUL-terminated.
fn c_arg(u: &mut Unstructured) -> Option<Vec<u8>> {
    if u.ratio(1, 10u8).unwrap_or(false) {
        return None;
    }
    let b: &[u8] = u.arbitrary().unwrap_or_default();
    let mut v: Vec<u8> = b.iter().copied().take_while(|&c| c != 0).collect();
    v.push(0);
    Some(v)
}

fn c_ptr(a: &Option<Vec<u8>>) -> *const c_char {
    a.as_ref().map_or(ptr::null(), |v| v.as_ptr().cast())
}

/// The status an argument check gives, if any: NULL, then not UTF-8.
fn str_arg_status(a: &Option<Vec<u8>>) -> Option<staunch_status> {
    match a {
        None => Some(STAUNCH_NULL_ARGUMENT),
        Some(v) if std::str::from_utf8(&v[..v.len() - 1]).is_err() => Some(STAUNCH_INVALID_UTF8),
        Some(_) => None,
    }
}

fn arg_text(a: &Option<Vec<u8>>) -> Option<&str> {
    a.as_ref()
        .and_then(|v| std::str::from_utf8(&v[..v.len() - 1]).ok())
}

/// A loopback port nothing listens on: connects fail at once (RST).
fn closed_port() -> u16 {
    static PORT: OnceLock<u16> = OnceLock::new();
    *PORT.get_or_init(|| {
        std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .unwrap_or(9)
    })
}

/// Knobs applied last before a pool opens from options, so that it can only
/// connect to the closed loopback port, and only when asked.
fn safety_knobs() -> Vec<(CString, CString)> {
    let port = closed_port().to_string();
    [
        ("host", "127.0.0.1"),
        ("port", port.as_str()),
        ("socket", ""),
        ("topology", "single"),
        ("monitor", "false"),
        ("min_idle", "0"),
        ("initialization_fail_timeout", "off"),
        ("connect_timeout", "20ms"),
    ]
    .iter()
    .map(|(k, v)| (CString::new(*k).unwrap(), CString::new(*v).unwrap()))
    .collect()
}

/// Whether a pool opened from `cfg` connects only to the closed port, and
/// only when asked.
fn loopback_only(cfg: &Config) -> bool {
    let v = view(cfg);
    v.socket.is_none()
        && v.host == "127.0.0.1"
        && v.port == closed_port()
        && v.more_hosts == 0
        && !cfg.topology().monitor_enabled()
        && v.min_idle == 0
        && v.initialization_fail_timeout.is_none()
}

unsafe extern "C" fn on_event(ev: *const staunch_event, _user_data: *mut c_void) {
    // SAFETY: valid during the callback (header contract).
    let ev = unsafe { ev.as_ref() }.expect("event is NULL");
    let _ = c_text(ev.message, "staunch_event.message");
    check_status(ev.status);
    assert!(
        ev.kind <= STAUNCH_EVENT_POOL_CLOSED,
        "event kind {}",
        ev.kind
    );
}

unsafe extern "C" fn finalize(user_data: *mut c_void) {
    // SAFETY: the counter of `Ffi`, alive until every finalizer ran.
    let n = unsafe { &*user_data.cast::<AtomicUsize>() };
    n.fetch_add(1, Ordering::SeqCst);
}

/// Handles open during one `ffi` run, and what the finalizers must add up to.
struct Ffi {
    opts: Vec<*mut staunch_options>,
    pools: Vec<(*mut staunch_pool, bool)>,
    finalized: std::sync::Arc<AtomicUsize>,
    finalizers: usize,
}

/// The handles of `v`, or NULL (the fuzzer chooses).
fn pick<T: Copy>(u: &mut Unstructured, v: &[T]) -> Option<T> {
    if v.is_empty() || u.ratio(1, 8u8).unwrap_or(false) {
        None
    } else {
        u.choose(v).ok().copied()
    }
}

/// The C ABI with arbitrary arguments: NULL and dangling-free pointers to
/// fuzzer bytes, invalid UTF-8, options and URLs; pools that can only reach a
/// closed loopback port. Every call must return a documented status with a
/// valid error object, and agree with the Rust API where it wraps one.
pub fn ffi(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let mut f = Ffi {
        opts: Vec::new(),
        pools: Vec::new(),
        finalized: std::sync::Arc::new(AtomicUsize::new(0)),
        finalizers: 0,
    };
    let steps = u.int_in_range(0..=32u8).unwrap_or(0);
    for _ in 0..steps {
        if u.is_empty() {
            break;
        }
        f.step(&mut u);
    }
    f.finish();
}

impl Ffi {
    fn step(&mut self, u: &mut Unstructured) {
        match u.int_in_range(0..=15u8).unwrap_or(0) {
            0 => self.options_new(u),
            1 | 2 => self.options_set(u),
            3 => self.options_set_url(u),
            4 => self.options_set_callback(u),
            5 => self.pool_open_options(u),
            6 => self.pool_open_url(u),
            7 => self.pool_get(u),
            8 => self.pool_small_calls(u),
            9 => {
                if !self.pools.is_empty() {
                    let i = u.choose_index(self.pools.len()).unwrap_or(0);
                    staunch_pool_free(self.pools.swap_remove(i).0);
                }
            }
            10 => {
                if !self.opts.is_empty() {
                    let i = u.choose_index(self.opts.len()).unwrap_or(0);
                    staunch_options_free(self.opts.swap_remove(i));
                }
            }
            11 => null_handles(u),
            12 => {
                let s: u32 = u.arbitrary().unwrap_or(0);
                let name = c_text(staunch_status_name(s), "staunch_status_name");
                let known = status_names().iter().any(|(c, _)| *c == s);
                assert_eq!(known, name != "STAUNCH_UNKNOWN_STATUS", "{s}: {name}");
            }
            _ => self.options_set(u),
        }
    }

    fn options_new(&mut self, u: &mut Unstructured) {
        if self.opts.len() >= 3 {
            return;
        }
        if u.ratio(1, 8u8).unwrap_or(false) {
            let s = call(u, |e| staunch_options_new(ptr::null_mut(), e));
            assert_eq!(s, STAUNCH_NULL_ARGUMENT);
            return;
        }
        let mut o = ptr::null_mut();
        let s = call(u, |e| staunch_options_new(&mut o, e));
        assert_eq!(s, STAUNCH_OK);
        assert!(!o.is_null());
        self.opts.push(o);
    }

    fn options_set(&mut self, u: &mut Unstructured) {
        let o = pick(u, &self.opts);
        let knob = if u.arbitrary().unwrap_or(false) {
            u.choose(&knob_names())
                .ok()
                .map(|k| [k.as_bytes(), b"\0"].concat())
        } else {
            c_arg(u)
        };
        let value = c_arg(u);
        let want = if o.is_none() {
            Some(STAUNCH_NULL_ARGUMENT)
        } else {
            str_arg_status(&knob)
                .or_else(|| str_arg_status(&value))
                .or_else(|| match arg_text(&knob) {
                    Some(k) if knob_names().contains(&k) => None,
                    _ => Some(STAUNCH_INVALID_CONFIG),
                })
        };
        let s = call(u, |e| {
            staunch_options_set(o.unwrap_or(ptr::null_mut()), c_ptr(&knob), c_ptr(&value), e)
        });
        assert_eq!(s, want.unwrap_or(STAUNCH_OK));
    }

    fn options_set_url(&mut self, u: &mut Unstructured) {
        let o = pick(u, &self.opts);
        let url = if u.arbitrary().unwrap_or(false) {
            let q = string_without(u, "\0");
            Some(format!("mysql://127.0.0.1:{}/?{q}\0", closed_port()).into_bytes())
        } else {
            c_arg(u)
        };
        let want = if o.is_none() {
            Some(STAUNCH_NULL_ARGUMENT)
        } else {
            str_arg_status(&url)
        };
        let s = call(u, |e| {
            staunch_options_set_url(o.unwrap_or(ptr::null_mut()), c_ptr(&url), e)
        });
        assert_eq!(s, want.unwrap_or(STAUNCH_OK));
    }

    fn options_set_callback(&mut self, u: &mut Unstructured) {
        let o = pick(u, &self.opts);
        let cb: staunch_event_callback = if u.arbitrary().unwrap_or(false) {
            Some(on_event)
        } else {
            None
        };
        let fin: staunch_finalizer = if u.arbitrary().unwrap_or(false) {
            Some(finalize)
        } else {
            None
        };
        // An Arc, not a Box: pool threads write through this pointer while
        // `self` is borrowed, and a Box claims unique access (Miri flags it).
        let user_data = std::sync::Arc::as_ptr(&self.finalized)
            .cast_mut()
            .cast::<c_void>();
        let s = call(u, |e| {
            staunch_options_set_event_callback(o.unwrap_or(ptr::null_mut()), cb, user_data, fin, e)
        });
        if o.is_none() {
            assert_eq!(s, STAUNCH_NULL_ARGUMENT);
        } else {
            assert_eq!(s, STAUNCH_OK);
            if fin.is_some() {
                self.finalizers += 1;
            }
        }
        let n = self.finalized.load(Ordering::SeqCst);
        assert!(
            n <= self.finalizers,
            "{n} finalizer calls for {}",
            self.finalizers
        );
    }

    fn push_pool(&mut self, p: *mut staunch_pool) {
        assert!(!p.is_null());
        self.pools.push((p, false));
        if self.pools.len() > 2 {
            staunch_pool_free(self.pools.remove(0).0);
        }
    }

    fn pool_open_options(&mut self, u: &mut Unstructured) {
        let o = pick(u, &self.opts);
        if let Some(o) = o {
            for (k, v) in safety_knobs() {
                let s = staunch_options_set(o, k.as_ptr(), v.as_ptr(), ptr::null_mut());
                assert_eq!(s, STAUNCH_OK);
            }
        }
        let null_out = u.ratio(1, 8u8).unwrap_or(false);
        let mut p = ptr::null_mut();
        let out = if null_out { ptr::null_mut() } else { &mut p };
        let s = call(u, |e| {
            staunch_pool_open_options(o.map_or(ptr::null(), |o| o.cast_const()), out, e)
        });
        if o.is_none() || null_out {
            assert_eq!(s, STAUNCH_NULL_ARGUMENT);
        } else if s == STAUNCH_OK {
            self.push_pool(p);
        } else {
            assert_eq!(s, STAUNCH_INVALID_CONFIG);
            assert!(p.is_null(), "*out written on failure");
        }
    }

    fn pool_open_url(&mut self, u: &mut Unstructured) {
        let url = if u.arbitrary().unwrap_or(false) {
            let q = string_without(u, "\0");
            Some(format!("mysql://u:pw@127.0.0.1:{}/db?{q}\0", closed_port()).into_bytes())
        } else {
            c_arg(u)
        };
        // What the Rust API says of this URL; never open a pool that could
        // reach beyond the closed loopback port.
        let parsed = arg_text(&url).map(|s| Builder::new().url(s).config());
        if let Some(Ok(cfg)) = &parsed {
            if !loopback_only(cfg) {
                return;
            }
        }
        let mut p = ptr::null_mut();
        let s = call(u, |e| staunch_pool_open(c_ptr(&url), &mut p, e));
        match (str_arg_status(&url), parsed) {
            (Some(want), _) => assert_eq!(s, want),
            (None, Some(Ok(_))) => {
                assert_eq!(s, STAUNCH_OK);
                self.push_pool(p);
            }
            (None, Some(Err(e))) => assert_eq!(s, STAUNCH_INVALID_CONFIG, "{e}"),
            (None, None) => unreachable!(),
        }
        if s != STAUNCH_OK {
            assert!(p.is_null(), "*out written on failure");
        }
    }

    fn pool_get(&mut self, u: &mut Unstructured) {
        let pool = pick(u, &self.pools);
        let timeout = u.int_in_range(0..=3u32).unwrap_or(0);
        let read = u.arbitrary().unwrap_or(false);
        let null_out = u.ratio(1, 8u8).unwrap_or(false);
        let mut c = ptr::null_mut();
        let out = if null_out { ptr::null_mut() } else { &mut c };
        let pp = pool.map_or(ptr::null_mut(), |p| p.0);
        let s = call(u, |e| {
            if read {
                staunch_pool_get_read(pp, timeout, out, e)
            } else {
                staunch_pool_get(pp, timeout, out, e)
            }
        });
        if pool.is_none() || null_out {
            assert_eq!(s, STAUNCH_NULL_ARGUMENT);
        } else if pool.is_some_and(|p| p.1) {
            assert_eq!(s, STAUNCH_CLOSED);
        } else {
            // Nothing listens on the port: no connection can be had.
            assert!(
                [
                    STAUNCH_UNREACHABLE,
                    STAUNCH_POOL_EXHAUSTED,
                    STAUNCH_CONNECT_FAILED
                ]
                .contains(&s),
                "status {s}"
            );
        }
        if s != STAUNCH_OK {
            assert!(c.is_null(), "*out written on failure");
        }
        staunch_conn_free(c);
    }

    fn pool_small_calls(&mut self, u: &mut Unstructured) {
        let pool = pick(u, &self.pools);
        let pp = pool.map_or(ptr::null_mut(), |p| p.0);
        let want_null = pool.is_none();
        match u.int_in_range(0..=4u8).unwrap_or(0) {
            0 => {
                let null_out = u.ratio(1, 8u8).unwrap_or(false);
                let mut c = ptr::null_mut();
                let out = if null_out { ptr::null_mut() } else { &mut c };
                let s = call(u, |e| staunch_pool_try_get(pp, out, e));
                if want_null || null_out {
                    assert_eq!(s, STAUNCH_NULL_ARGUMENT);
                } else if pool.is_some_and(|p| p.1) {
                    assert_eq!(s, STAUNCH_CLOSED);
                } else {
                    assert_eq!(s, STAUNCH_OK);
                    assert!(c.is_null(), "a connection from a closed port");
                }
                staunch_conn_free(c);
            }
            1 => {
                let null_out = u.ratio(1, 8u8).unwrap_or(false);
                // The caller's size: ours, an older (shorter) struct's, or
                // too small to hold the size field.
                let full = std::mem::size_of::<staunch_stats>();
                let size = match u.int_in_range(0..=3u8).unwrap_or(0) {
                    0 => u.int_in_range(0..=7usize).unwrap_or(0),
                    1 => 8 * u.int_in_range(1..=full / 8).unwrap_or(1),
                    _ => full,
                };
                let mut st = staunch_stats {
                    size,
                    violations: 77,
                    ..Default::default()
                };
                // violations sits at byte 23 * 8 (after size and 22 fields).
                let sees_violations = size >= 24 * 8;
                let out = if null_out {
                    ptr::null_mut()
                } else {
                    &mut st as *mut _
                };
                let s = call(u, |e| staunch_pool_stats(pp, out, e));
                if want_null || null_out {
                    assert_eq!(s, STAUNCH_NULL_ARGUMENT);
                } else if size < 8 {
                    assert_eq!(s, STAUNCH_INVALID_ARGUMENT);
                } else {
                    assert_eq!(s, STAUNCH_OK);
                    assert_eq!(st.size, size.min(full));
                    let v = if sees_violations { 0 } else { 77 };
                    assert_eq!((st.total, st.active, st.violations), (0, 0, v), "{st:?}");
                }
            }
            2 => {
                let s = call(u, |e| staunch_pool_soft_evict(pp, e));
                let want = if want_null {
                    STAUNCH_NULL_ARGUMENT
                } else {
                    STAUNCH_OK
                };
                assert_eq!(s, want);
            }
            3 => {
                // Any size, on an open or closed pool: applied, or refused
                // naming the knob; a suspend is always undone (a suspended
                // pool would make the next gets wait out their timeouts).
                let n: u32 = match u.int_in_range(0..=2u8).unwrap_or(0) {
                    0 => u.int_in_range(0..=8u32).unwrap_or(0),
                    1 => u.int_in_range(0..=5000u32).unwrap_or(0),
                    _ => u.arbitrary().unwrap_or(0),
                };
                let (s, knob) = if u.arbitrary().unwrap_or(false) {
                    (call(u, |e| staunch_pool_set_max_size(pp, n, e)), "max_size")
                } else {
                    (call(u, |e| staunch_pool_set_min_idle(pp, n, e)), "min_idle")
                };
                if want_null {
                    assert_eq!(s, STAUNCH_NULL_ARGUMENT);
                } else {
                    assert!(
                        [STAUNCH_OK, STAUNCH_INVALID_CONFIG].contains(&s),
                        "status {s}"
                    );
                    assert!(
                        s == STAUNCH_INVALID_CONFIG || knob == "min_idle" || n > 0,
                        "{knob}={n}"
                    );
                }
                let s1 = call(u, |e| staunch_pool_suspend(pp, e));
                let s2 = call(u, |e| staunch_pool_resume(pp, e));
                let want = if want_null {
                    STAUNCH_NULL_ARGUMENT
                } else {
                    STAUNCH_OK
                };
                assert_eq!((s1, s2), (want, want));
            }
            _ => {
                let s = call(u, |e| staunch_pool_close(pp, e));
                let want = if want_null {
                    STAUNCH_NULL_ARGUMENT
                } else {
                    STAUNCH_OK
                };
                assert_eq!(s, want);
                for p in self.pools.iter_mut().filter(|p| p.0 == pp) {
                    p.1 = true;
                }
            }
        }
    }

    /// Frees everything and checks every finalizer ran exactly once.
    fn finish(mut self) {
        for (p, _) in self.pools.drain(..) {
            staunch_pool_free(p);
        }
        for o in self.opts.drain(..) {
            staunch_options_free(o);
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while self.finalized.load(Ordering::SeqCst) < self.finalizers && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(
            self.finalized.load(Ordering::SeqCst),
            self.finalizers,
            "finalizer calls"
        );
    }
}

/// Every export that takes a connection or a row set, with NULL for it: all
/// give STAUNCH_NULL_ARGUMENT (or their documented neutral value) whatever
/// the other arguments are.
fn null_handles(u: &mut Unstructured) {
    let sql = c_arg(u);
    let n = u.int_in_range(0..=3usize).unwrap_or(0);
    let c = ptr::null_mut();
    let r = ptr::null_mut();
    let s = match u.int_in_range(0..=16u8).unwrap_or(0) {
        0 => call(u, |e| {
            staunch_conn_execute(
                c,
                c_ptr(&sql),
                ptr::null(),
                n,
                ptr::null_mut(),
                ptr::null_mut(),
                e,
            )
        }),
        1 => {
            let mut out = ptr::null_mut();
            call(u, |e| {
                staunch_conn_query(c, c_ptr(&sql), ptr::null(), n, &mut out, e)
            })
        }
        2 => call(u, |e| staunch_conn_begin(c, e)),
        3 => call(u, |e| staunch_conn_commit(c, e)),
        4 => call(u, |e| staunch_conn_rollback(c, e)),
        5 => call(u, |e| staunch_conn_ping(c, e)),
        6 => {
            let mut id = 0;
            call(u, |e| staunch_conn_server_id(c, &mut id, e))
        }
        7 => call(u, |e| staunch_conn_release(c, e)),
        8 => {
            let mut b = false;
            call(u, |e| staunch_rows_next(r, &mut b, e))
        }
        9 => {
            let mut v = 0i64;
            call(u, |e| staunch_rows_get_i64(r, n, &mut v, e))
        }
        10 => {
            let (mut p, mut len) = (ptr::null(), 0);
            call(u, |e| staunch_rows_get_text(r, n, &mut p, &mut len, e))
        }
        11 => {
            let mut t = 0;
            call(u, |e| staunch_rows_column_type(r, n, &mut t, e))
        }
        12 => {
            assert_eq!(staunch_rows_column_count(r), 0);
            assert_eq!(staunch_rows_affected_rows(r), 0);
            assert_eq!(staunch_rows_last_insert_id(r), 0);
            staunch_rows_free(r);
            staunch_conn_free(c);
            STAUNCH_NULL_ARGUMENT
        }
        13 => {
            assert_eq!(staunch_error_status(ptr::null()), STAUNCH_NULL_ARGUMENT);
            assert_eq!(staunch_error_server_code(ptr::null()), 0);
            assert_eq!(c_text(staunch_error_message(ptr::null()), "message"), "");
            assert_eq!(c_text(staunch_error_sqlstate(ptr::null()), "sqlstate"), "");
            staunch_error_free(ptr::null_mut());
            STAUNCH_NULL_ARGUMENT
        }
        14 => {
            staunch_options_free(ptr::null_mut());
            staunch_pool_free(ptr::null_mut());
            let v = c_text(staunch_version_string(), "staunch_version_string");
            assert_eq!(
                v,
                format!("{STAUNCH_VERSION_MAJOR}.{STAUNCH_VERSION_MINOR}.{STAUNCH_VERSION_PATCH}")
            );
            STAUNCH_NULL_ARGUMENT
        }
        15 => {
            let mut st = staunch_stats::default();
            call(u, |e| staunch_pool_stats(ptr::null(), &mut st, e))
        }
        _ => {
            let (mut p, mut len) = (ptr::null(), 0);
            call(u, |e| staunch_rows_column_name(r, n, &mut p, &mut len, e))
        }
    };
    assert_eq!(s, STAUNCH_NULL_ARGUMENT);
}

// ---------------------------------------------------------------------------
// params_rows

/// An arbitrary `mysql::Value`, every variant (in range or not).
fn arbitrary_value(u: &mut Unstructured) -> Value {
    match u.int_in_range(0..=7u8).unwrap_or(0) {
        0 => Value::NULL,
        1 => Value::Int(u.arbitrary().unwrap_or(0)),
        2 => Value::UInt(u.arbitrary().unwrap_or(0)),
        3 => Value::Float(u.arbitrary().unwrap_or(0.0)),
        4 => Value::Double(u.arbitrary().unwrap_or(0.0)),
        5 => Value::Bytes(u.arbitrary().unwrap_or_default()),
        6 => Value::Date(
            u.arbitrary().unwrap_or(0),
            u.arbitrary().unwrap_or(0),
            u.arbitrary().unwrap_or(0),
            u.arbitrary().unwrap_or(0),
            u.arbitrary().unwrap_or(0),
            u.arbitrary().unwrap_or(0),
            u.arbitrary().unwrap_or(0),
        ),
        _ => Value::Time(
            u.arbitrary().unwrap_or(false),
            u.arbitrary().unwrap_or(0),
            u.arbitrary().unwrap_or(0),
            u.arbitrary().unwrap_or(0),
            u.arbitrary().unwrap_or(0),
            u.arbitrary().unwrap_or(0),
        ),
    }
}

/// A column type as `column_type` derives it from server metadata.
fn arbitrary_column_type(u: &mut Unstructured) -> staunch_column_type {
    let t: u8 = u.arbitrary().unwrap_or(0);
    match ColumnType::try_from(t) {
        Ok(t) => {
            let flags = ColumnFlags::from_bits_truncate(u.arbitrary().unwrap_or(0));
            let charset: u16 = if u.arbitrary().unwrap_or(false) {
                63
            } else {
                u.arbitrary().unwrap_or(0)
            };
            let c = Column::new(t).with_flags(flags).with_character_set(charset);
            let ct = column_type(&c);
            assert!(ct <= STAUNCH_COLUMN_TIME, "column type {ct}");
            ct
        }
        Err(_) => u32::from(t % 10),
    }
}

/// One C parameter, with its text/bytes data (if any) in `bufs`.
fn arbitrary_param(u: &mut Unstructured, bufs: &mut Vec<Vec<u8>>) -> staunch_param {
    let r#type = if u.ratio(1, 16u8).unwrap_or(false) {
        u.arbitrary().unwrap_or(0)
    } else {
        u.int_in_range(0..=9u32).unwrap_or(0)
    };
    let (ptr, len) = if u.ratio(1, 8u8).unwrap_or(false) {
        (ptr::null(), u.int_in_range(0..=3usize).unwrap_or(0))
    } else {
        let data: Vec<u8> = u.arbitrary().unwrap_or_default();
        let p = data.as_ptr().cast::<c_void>();
        let len = data.len();
        bufs.push(data);
        (p, len)
    };
    // Mostly valid calendar fields, sometimes anything.
    let wild = u.ratio(1, 4u8).unwrap_or(false);
    let small = |u: &mut Unstructured, max: u8| -> u8 {
        if wild {
            u.arbitrary().unwrap_or(0)
        } else {
            u.int_in_range(0..=max).unwrap_or(0)
        }
    };
    let datetime = staunch_datetime {
        year: if wild {
            u.arbitrary().unwrap_or(0)
        } else {
            u.int_in_range(0..=9999).unwrap_or(0)
        },
        month: small(u, 12),
        day: small(u, 31),
        hour: small(u, 23),
        minute: small(u, 59),
        second: small(u, 59),
        microsecond: if wild {
            u.arbitrary().unwrap_or(0)
        } else {
            u.int_in_range(0..=999_999).unwrap_or(0)
        },
    };
    let time = staunch_time {
        negative: u.arbitrary().unwrap_or(false),
        days: if wild {
            u.arbitrary().unwrap_or(0)
        } else {
            u.int_in_range(0..=34).unwrap_or(0)
        },
        hours: small(u, 23),
        minutes: small(u, 59),
        seconds: small(u, 59),
        microseconds: if wild {
            u.arbitrary().unwrap_or(0)
        } else {
            u.int_in_range(0..=999_999).unwrap_or(0)
        },
    };
    staunch_param {
        r#type,
        i64: u.arbitrary().unwrap_or(0),
        u64: u.arbitrary().unwrap_or(0),
        f64: u.arbitrary().unwrap_or(0.0),
        ptr,
        len,
        datetime,
        time,
        _reserved: [0; 2],
    }
}

/// The column type a parameter's value is read back from.
fn column_for(p: &staunch_param, v: &Value) -> staunch_column_type {
    match v {
        Value::NULL => STAUNCH_COLUMN_NULL,
        Value::Int(_) => STAUNCH_COLUMN_INT,
        Value::UInt(_) => STAUNCH_COLUMN_UINT,
        Value::Float(_) | Value::Double(_) => STAUNCH_COLUMN_DOUBLE,
        Value::Bytes(_) if p.r#type == STAUNCH_PARAM_TEXT => STAUNCH_COLUMN_TEXT,
        Value::Bytes(_) if p.r#type == STAUNCH_PARAM_DECIMAL => STAUNCH_COLUMN_DECIMAL,
        Value::Bytes(_) => STAUNCH_COLUMN_BYTES,
        Value::Date(..) if p.r#type == STAUNCH_PARAM_DATE => STAUNCH_COLUMN_DATE,
        Value::Date(..) => STAUNCH_COLUMN_DATETIME,
        Value::Time(..) => STAUNCH_COLUMN_TIME,
    }
}

/// Parameter binding (`to_value`/`to_values`, as `staunch_conn_execute` and
/// `_query` do) and row decoding (`Cell::from_value` and every
/// `staunch_rows_*` getter): arbitrary parameters either fail with a
/// parameter status naming their index or read back unchanged; arbitrary
/// values in arbitrary columns give exactly the documented status of each
/// getter, and out-parameters are written only on success.
pub fn params_rows(data: &[u8]) {
    let mut u = Unstructured::new(data);
    params(&mut u);
    rows(&mut u);
    binary_placeholders(&mut u);
}

/// SQL of `?`, quotes, backticks, backslashes, comment starters and words,
/// with arbitrary bytes flags: the rewrite casts exactly the flagged
/// placeholders and changes nothing else (undoing each cast gives the
/// statement back), or declines when the placeholders are not one per
/// parameter.
fn binary_placeholders(u: &mut Unstructured) {
    const PIECES: &[&str] = &[
        "?",
        "'",
        "\"",
        "`",
        "\\",
        "--",
        "-- ",
        "#",
        "/*",
        "*/",
        "\n",
        " ",
        "SELECT ",
        "x",
        "''",
        "CAST(? AS BINARY)",
    ];
    let n = u.int_in_range(0..=24usize).unwrap_or(0);
    let sql: String = (0..n)
        .map(|_| PIECES[u.choose_index(PIECES.len()).unwrap_or(0)])
        .collect();
    let k = u.int_in_range(0..=4usize).unwrap_or(0);
    let bytes: Vec<bool> = (0..k).map(|_| u.arbitrary().unwrap_or(false)).collect();
    let Some(out) = bind_bytes_as_binary(&sql, &bytes) else {
        return;
    };
    assert!(bytes.iter().any(|b| *b), "{sql:?} {bytes:?} -> {out:?}");
    let casts = bytes.iter().filter(|b| **b).count();
    assert_eq!(
        out.len(),
        sql.len() + casts * "CAST( AS BINARY)".len(),
        "{sql:?} -> {out:?}"
    );
    if !sql.contains("CAST(? AS BINARY)") {
        // Undoing each cast gives the statement back.
        assert_eq!(
            out.replace("CAST(? AS BINARY)", "?"),
            sql,
            "{bytes:?} -> {out:?}"
        );
    }
}

fn params(u: &mut Unstructured) {
    let mut bufs = Vec::new();
    let n = u.int_in_range(0..=6usize).unwrap_or(0);
    let ps: Vec<staunch_param> = (0..n).map(|_| arbitrary_param(u, &mut bufs)).collect();
    let mut each = Vec::new();
    for (i, p) in ps.iter().enumerate() {
        // SAFETY: ptr is NULL or points to `len` bytes of `bufs`.
        let r = unsafe { to_value(i, p) };
        match &r {
            Ok(v) => {
                // The type of value matches the type of parameter.
                let ok = match (p.r#type, v) {
                    (STAUNCH_PARAM_NULL, Value::NULL) => true,
                    (STAUNCH_PARAM_INT64, Value::Int(x)) => *x == p.i64,
                    (STAUNCH_PARAM_UINT64, Value::UInt(x)) => *x == p.u64,
                    (STAUNCH_PARAM_DOUBLE, Value::Double(x)) => x.to_bits() == p.f64.to_bits(),
                    (STAUNCH_PARAM_TEXT, Value::Bytes(b)) => std::str::from_utf8(b).is_ok(),
                    (STAUNCH_PARAM_BYTES, Value::Bytes(_)) => true,
                    // A decimal, in its canonical form.
                    (STAUNCH_PARAM_DECIMAL, Value::Bytes(b)) => {
                        let s = std::str::from_utf8(b).unwrap();
                        s.parse::<staunch::Decimal>().unwrap().literal() == s
                    }
                    (STAUNCH_PARAM_DATE | STAUNCH_PARAM_DATETIME, Value::Date(..)) => true,
                    (STAUNCH_PARAM_TIME, Value::Time(..)) => true,
                    _ => false,
                };
                assert!(ok, "{p:?} -> {v:?}");
            }
            Err(f) => {
                check_status(f.status);
                assert!(
                    [
                        STAUNCH_NULL_ARGUMENT,
                        STAUNCH_INVALID_UTF8,
                        STAUNCH_OUT_OF_RANGE,
                        STAUNCH_BAD_PARAM_TYPE,
                        STAUNCH_INVALID_ARGUMENT
                    ]
                    .contains(&f.status),
                    "{f:?}"
                );
                // Only a decimal that is not one is an invalid argument.
                assert!(
                    f.status != STAUNCH_INVALID_ARGUMENT || p.r#type == STAUNCH_PARAM_DECIMAL,
                    "{f:?}"
                );
                assert!(f.message.starts_with(&format!("params[{i}]")), "{f:?}");
            }
        }
        each.push(r);
    }
    // The array converts exactly when each parameter does; else the first
    // failure is reported.
    let null_array = n > 0 && u.ratio(1, 8u8).unwrap_or(false);
    // SAFETY: `ps` holds `n` parameters (or the array is NULL).
    let all = unsafe { to_values(if null_array { ptr::null() } else { ps.as_ptr() }, n) };
    match (&all, each.iter().find_map(|r| r.as_ref().err())) {
        _ if null_array => assert_eq!(all.unwrap_err().status, STAUNCH_NULL_ARGUMENT),
        (Ok(vs), None) => {
            let vs2: Vec<&Value> = each.iter().map(|r| r.as_ref().unwrap()).collect();
            // (Debug, not ==: a NaN double is the same value here.)
            assert_eq!(format!("{vs:?}"), format!("{vs2:?}"));
            read_back(u, &ps, vs);
        }
        (Err(a), Some(b)) => assert_eq!((a.status, &a.message), (b.status, &b.message)),
        (a, b) => panic!("to_values gives {a:?}, its parameters {b:?}"),
    }
}

/// The values of the parameters, as a row the server sent back, read with
/// the getter of their type: the same values as the C caller bound.
fn read_back(u: &mut Unstructured, ps: &[staunch_param], vs: &[Value]) {
    let columns = ps
        .iter()
        .zip(vs)
        .map(|(p, v)| (b"c".to_vec(), column_for(p, v)))
        .collect();
    let rows = rows_from_values(columns, vec![vs.to_vec()]);
    let mut has = false;
    assert_eq!(
        call(u, |e| staunch_rows_next(rows, &mut has, e)),
        STAUNCH_OK
    );
    assert!(has);
    for (i, p) in ps.iter().enumerate() {
        let s = match p.r#type {
            STAUNCH_PARAM_NULL => {
                let mut null = false;
                let s = call(u, |e| staunch_rows_is_null(rows, i, &mut null, e));
                assert!(null);
                s
            }
            STAUNCH_PARAM_INT64 => {
                let mut v = 0;
                let s = call(u, |e| staunch_rows_get_i64(rows, i, &mut v, e));
                assert_eq!(v, p.i64);
                s
            }
            STAUNCH_PARAM_UINT64 => {
                let mut v = 0;
                let s = call(u, |e| staunch_rows_get_u64(rows, i, &mut v, e));
                assert_eq!(v, p.u64);
                s
            }
            STAUNCH_PARAM_DOUBLE => {
                let mut v = 0.0;
                let s = call(u, |e| staunch_rows_get_double(rows, i, &mut v, e));
                assert_eq!(v.to_bits(), p.f64.to_bits());
                s
            }
            STAUNCH_PARAM_DECIMAL => {
                let (mut ptr, mut len) = (ptr::null(), 0);
                let s = call(u, |e| staunch_rows_get_text(rows, i, &mut ptr, &mut len, e));
                // SAFETY: `len` bytes, valid until staunch_rows_next.
                let got = unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) };
                // SAFETY: the caller's data, `p.len` bytes.
                let given = unsafe { std::slice::from_raw_parts(p.ptr.cast::<u8>(), p.len) };
                let want: staunch::Decimal = std::str::from_utf8(given).unwrap().parse().unwrap();
                assert_eq!(got, want.literal().as_bytes());
                s
            }
            STAUNCH_PARAM_TEXT | STAUNCH_PARAM_BYTES => {
                let (mut ptr, mut len) = (ptr::null(), 0);
                let s = call(u, |e| {
                    staunch_rows_get_bytes(rows, i, &mut ptr, &mut len, e)
                });
                assert_eq!(len, p.len);
                // SAFETY: `len` bytes and a NUL, valid until staunch_rows_next.
                let got = unsafe { std::slice::from_raw_parts(ptr, len + 1) };
                assert_eq!(got[len], 0);
                if len > 0 {
                    // SAFETY: the caller's data, `len` bytes.
                    let want = unsafe { std::slice::from_raw_parts(p.ptr.cast::<u8>(), len) };
                    assert_eq!(&got[..len], want);
                }
                s
            }
            STAUNCH_PARAM_DATE | STAUNCH_PARAM_DATETIME => {
                let mut v = staunch_datetime::default();
                let s = call(u, |e| staunch_rows_get_datetime(rows, i, &mut v, e));
                assert_eq!(v, p.datetime);
                s
            }
            _ => {
                let mut v = staunch_time::default();
                let s = call(u, |e| staunch_rows_get_time(rows, i, &mut v, e));
                assert_eq!(v, p.time);
                s
            }
        };
        assert_eq!(s, STAUNCH_OK, "{p:?}");
    }
    staunch_rows_free(rows);
}

/// What each getter must give for a cell (the model the getters are checked
/// against): Ok(value) or the status.
fn expect_i64(v: &Value) -> Result<i64, staunch_status> {
    match v {
        Value::NULL => Err(STAUNCH_NULL_VALUE),
        Value::Int(i) => Ok(*i),
        Value::UInt(u) => i64::try_from(*u).map_err(|_| STAUNCH_OUT_OF_RANGE),
        _ => Err(STAUNCH_WRONG_TYPE),
    }
}

fn expect_u64(v: &Value) -> Result<u64, staunch_status> {
    match v {
        Value::NULL => Err(STAUNCH_NULL_VALUE),
        Value::UInt(u) => Ok(*u),
        Value::Int(i) => u64::try_from(*i).map_err(|_| STAUNCH_OUT_OF_RANGE),
        _ => Err(STAUNCH_WRONG_TYPE),
    }
}

fn expect_double(v: &Value) -> Result<f64, staunch_status> {
    match v {
        Value::NULL => Err(STAUNCH_NULL_VALUE),
        Value::Float(f) => Ok(f64::from(*f)),
        Value::Double(d) => Ok(*d),
        _ => Err(STAUNCH_WRONG_TYPE),
    }
}

/// Arbitrary values in arbitrary columns, read by arbitrary getters.
fn rows(u: &mut Unstructured) {
    let ncols = u.int_in_range(0..=5usize).unwrap_or(0);
    let columns: Vec<(Vec<u8>, staunch_column_type)> = (0..ncols)
        .map(|_| {
            let name: Vec<u8> = u.arbitrary().unwrap_or_default();
            (name, arbitrary_column_type(u))
        })
        .collect();
    let nrows = u.int_in_range(0..=4usize).unwrap_or(0);
    let data: Vec<Vec<Value>> = (0..nrows)
        .map(|_| (0..ncols).map(|_| arbitrary_value(u)).collect())
        .collect();
    let rows = rows_from_values(columns.clone(), data.clone());
    assert_eq!(staunch_rows_column_count(rows), ncols);
    let mut cursor = data.into_iter();
    let mut current: Option<Vec<Value>> = None;
    let steps = u.int_in_range(0..=40u8).unwrap_or(0);
    for _ in 0..steps {
        if u.is_empty() {
            break;
        }
        let idx = if u.ratio(1, 16u8).unwrap_or(false) {
            u.arbitrary().unwrap_or(usize::MAX)
        } else {
            u.int_in_range(0..=ncols).unwrap_or(0)
        };
        let null_out = u.ratio(1, 16u8).unwrap_or(false);
        // The status every getter gives before looking at the value.
        let pre = if null_out {
            Some(STAUNCH_NULL_ARGUMENT)
        } else if idx >= ncols {
            Some(STAUNCH_BAD_INDEX)
        } else if current.is_none() {
            Some(STAUNCH_NO_ROW)
        } else {
            None
        };
        let cell = current.as_ref().and_then(|r| r.get(idx));
        let ctype = columns.get(idx).map(|c| c.1);
        macro_rules! out {
            ($v:expr) => {
                if null_out {
                    ptr::null_mut()
                } else {
                    $v as *mut _
                }
            };
        }
        match u.int_in_range(0..=12u8).unwrap_or(0) {
            0 | 1 => {
                let mut has = false;
                let s = call(u, |e| staunch_rows_next(rows, out!(&mut has), e));
                if null_out {
                    assert_eq!(s, STAUNCH_NULL_ARGUMENT);
                } else {
                    assert_eq!(s, STAUNCH_OK);
                    current = cursor.next();
                    assert_eq!(has, current.is_some());
                }
            }
            2 => {
                let mut null = false;
                let s = call(u, |e| staunch_rows_is_null(rows, idx, out!(&mut null), e));
                match pre {
                    Some(want) => assert_eq!(s, want),
                    None => {
                        assert_eq!(s, STAUNCH_OK);
                        assert_eq!(null, matches!(cell, Some(Value::NULL)));
                    }
                }
            }
            3 => {
                let mut v = 0x5a5a_i64;
                let s = call(u, |e| staunch_rows_get_i64(rows, idx, out!(&mut v), e));
                let want = pre.map_or_else(|| expect_i64(cell.unwrap()), Err);
                check_getter(s, want.map(|w| (w, v)), v == 0x5a5a);
            }
            4 => {
                let mut v = 0x5a5a_u64;
                let s = call(u, |e| staunch_rows_get_u64(rows, idx, out!(&mut v), e));
                let want = pre.map_or_else(|| expect_u64(cell.unwrap()), Err);
                check_getter(s, want.map(|w| (w, v)), v == 0x5a5a);
            }
            5 => {
                let mut v = 0.25f64;
                let s = call(u, |e| staunch_rows_get_double(rows, idx, out!(&mut v), e));
                let want = pre.map_or_else(|| expect_double(cell.unwrap()), Err);
                check_getter(
                    s,
                    want.map(|w| (w.to_bits(), v.to_bits())),
                    v.to_bits() == 0.25f64.to_bits(),
                );
            }
            6 => {
                let (mut p, mut len) = (ptr::null::<c_char>(), usize::MAX);
                let s = call(u, |e| {
                    staunch_rows_get_text(rows, idx, out!(&mut p), &mut len, e)
                });
                let want = pre.map_or_else(
                    || match cell.unwrap() {
                        Value::NULL => Err(STAUNCH_NULL_VALUE),
                        Value::Bytes(_) if ctype == Some(STAUNCH_COLUMN_BYTES) => {
                            Err(STAUNCH_WRONG_TYPE)
                        }
                        Value::Bytes(b) => std::str::from_utf8(b)
                            .map(|_| b.clone())
                            .map_err(|_| STAUNCH_INVALID_UTF8),
                        _ => Err(STAUNCH_WRONG_TYPE),
                    },
                    Err,
                );
                let got = (s == STAUNCH_OK).then(|| {
                    // SAFETY: `len` bytes and a NUL, valid until next.
                    let b = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len + 1) };
                    assert_eq!(b[len], 0, "text not NUL-terminated");
                    assert!(std::str::from_utf8(&b[..len]).is_ok());
                    b[..len].to_vec()
                });
                check_getter(
                    s,
                    want.map(|w| (w, got.unwrap_or_default())),
                    p.is_null() && len == usize::MAX,
                );
            }
            7 => {
                let (mut p, mut len) = (ptr::null::<u8>(), usize::MAX);
                let s = call(u, |e| {
                    staunch_rows_get_bytes(rows, idx, out!(&mut p), &mut len, e)
                });
                let want = pre.map_or_else(
                    || match cell.unwrap() {
                        Value::NULL => Err(STAUNCH_NULL_VALUE),
                        Value::Bytes(b) => Ok(b.clone()),
                        _ => Err(STAUNCH_WRONG_TYPE),
                    },
                    Err,
                );
                let got = (s == STAUNCH_OK).then(|| {
                    assert!(!p.is_null());
                    // SAFETY: as above.
                    let b = unsafe { std::slice::from_raw_parts(p, len + 1) };
                    assert_eq!(b[len], 0, "bytes not NUL-terminated");
                    b[..len].to_vec()
                });
                check_getter(
                    s,
                    want.map(|w| (w, got.unwrap_or_default())),
                    p.is_null() && len == usize::MAX,
                );
            }
            8 => {
                let sentinel = staunch_datetime {
                    year: 7,
                    ..Default::default()
                };
                let mut v = sentinel;
                let s = call(u, |e| staunch_rows_get_datetime(rows, idx, out!(&mut v), e));
                let want = pre.map_or_else(
                    || match cell.unwrap() {
                        Value::NULL => Err(STAUNCH_NULL_VALUE),
                        &Value::Date(year, month, day, hour, minute, second, microsecond) => {
                            Ok(staunch_datetime {
                                year,
                                month,
                                day,
                                hour,
                                minute,
                                second,
                                microsecond,
                            })
                        }
                        _ => Err(STAUNCH_WRONG_TYPE),
                    },
                    Err,
                );
                check_getter(s, want.map(|w| (w, v)), v == sentinel);
            }
            9 => {
                let sentinel = staunch_time {
                    days: 7,
                    ..Default::default()
                };
                let mut v = sentinel;
                let s = call(u, |e| staunch_rows_get_time(rows, idx, out!(&mut v), e));
                let want = pre.map_or_else(
                    || match cell.unwrap() {
                        Value::NULL => Err(STAUNCH_NULL_VALUE),
                        &Value::Time(negative, days, hours, minutes, seconds, microseconds) => {
                            Ok(staunch_time {
                                negative,
                                days,
                                hours,
                                minutes,
                                seconds,
                                microseconds,
                            })
                        }
                        _ => Err(STAUNCH_WRONG_TYPE),
                    },
                    Err,
                );
                check_getter(s, want.map(|w| (w, v)), v == sentinel);
            }
            12 => {
                // The bulk getter: whole rows that fit, each value tagged
                // NULL exactly where the model has NULL, the same integers;
                // no current row after it.
                let cap = u.int_in_range(0..=3 * ncols + 1).unwrap_or(0);
                let mut vals = vec![staunch_value_sentinel(); cap.max(1)];
                let mut n = usize::MAX;
                let vp = if null_out {
                    ptr::null_mut()
                } else {
                    vals.as_mut_ptr()
                };
                let s = call(u, |e| staunch_rows_fetch(rows, vp, cap, &mut n, e));
                if ncols == 0 {
                    assert_eq!((s, n), (STAUNCH_OK, 0));
                } else if null_out {
                    assert_eq!((s, n), (STAUNCH_NULL_ARGUMENT, usize::MAX));
                } else if cap < ncols {
                    assert_eq!((s, n), (STAUNCH_INVALID_ARGUMENT, usize::MAX));
                } else {
                    assert_eq!(s, STAUNCH_OK);
                    let mut got = 0;
                    while got < cap / ncols {
                        let Some(row) = cursor.next() else { break };
                        for (j, v) in row.iter().enumerate() {
                            let out = &vals[got * ncols + j];
                            assert_eq!(out.r#type == STAUNCH_COLUMN_NULL, *v == Value::NULL);
                            if let (Value::Int(i), STAUNCH_COLUMN_INT) = (v, out.r#type) {
                                assert_eq!(out.i64, *i);
                            }
                        }
                        got += 1;
                    }
                    assert_eq!(n, got);
                    current = None;
                }
            }
            10 => {
                let (mut p, mut len) = (ptr::null::<c_char>(), usize::MAX);
                let s = call(u, |e| {
                    staunch_rows_column_name(rows, idx, out!(&mut p), &mut len, e)
                });
                if null_out {
                    assert_eq!(s, STAUNCH_NULL_ARGUMENT);
                } else if idx >= ncols {
                    assert_eq!(s, STAUNCH_BAD_INDEX);
                } else {
                    assert_eq!(s, STAUNCH_OK);
                    // SAFETY: `len` bytes and a NUL, owned by the rows.
                    let b = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len + 1) };
                    assert_eq!(&b[..len], &columns[idx].0[..]);
                    assert_eq!(b[len], 0);
                }
            }
            _ => {
                let mut t = 99;
                let s = call(u, |e| staunch_rows_column_type(rows, idx, out!(&mut t), e));
                if null_out {
                    assert_eq!(s, STAUNCH_NULL_ARGUMENT);
                } else if idx >= ncols {
                    assert_eq!(s, STAUNCH_BAD_INDEX);
                } else {
                    assert_eq!((s, t), (STAUNCH_OK, columns[idx].1));
                }
            }
        }
    }
    staunch_rows_free(rows);
}

/// A value no fetch writes (a type tag out of range).
fn staunch_value_sentinel() -> staunch_value {
    staunch_value {
        r#type: 0x5a5a,
        ..Default::default()
    }
}

/// A getter's status and result against the model: on success the value
/// read is the expected one, on failure the status is the expected one and
/// the out-parameter was not written (`untouched`).
fn check_getter<T: PartialEq + std::fmt::Debug>(
    s: staunch_status,
    want: Result<(T, T), staunch_status>,
    untouched: bool,
) {
    match want {
        Ok((want, got)) => {
            assert_eq!(s, STAUNCH_OK);
            assert_eq!(got, want);
        }
        Err(want) => {
            assert_eq!(s, want);
            assert!(untouched, "out-parameter written on failure");
        }
    }
}

// ---------------------------------------------------------------------------
// sql_scanner

/// Pieces of SQL the generator strings together: every quote, escape and
/// comment form the scanner knows, placeholders inside and outside them.
const SQL_PIECES: &[&str] = &[
    "?",
    "?",
    "1",
    "'",
    "\"",
    "`",
    "\\",
    "''",
    "\"\"",
    "``",
    "\\'",
    "\\\"",
    "#",
    "-- ",
    "--",
    "-",
    "--\t",
    "/*",
    "*/",
    "/*!",
    "/*!50000",
    "/*!50700",
    "/*!100000",
    "/*!999999",
    "/*M!",
    "/*M!100000",
    "/*M!999999",
    "\n",
    " ",
    ", ",
    "+",
    "(",
    ")",
    "x",
    "AS ",
    ";",
    "é",
    "\0",
];

/// One generated statement: `SELECT` and items, each a placeholder, a
/// literal or alias with pieces inside, or comments around them; or raw
/// pieces (mostly not SQL).
fn generated_sql(u: &mut Unstructured) -> String {
    let mut sql = String::from("SELECT ");
    if u.ratio(1, 4u8).unwrap_or(false) {
        let n = u.int_in_range(0..=40usize).unwrap_or(0);
        for _ in 0..n {
            sql.push_str(SQL_PIECES[u.choose_index(SQL_PIECES.len()).unwrap_or(0)]);
        }
        return sql;
    }
    let items = u.int_in_range(1..=8usize).unwrap_or(1);
    for k in 0..items {
        if k > 0 {
            sql.push_str(", ");
        }
        let inner = |u: &mut Unstructured| -> String {
            let n = u.int_in_range(0..=6usize).unwrap_or(0);
            (0..n)
                .map(|_| SQL_PIECES[u.choose_index(SQL_PIECES.len()).unwrap_or(0)])
                .collect()
        };
        match u.int_in_range(0..=9u8).unwrap_or(0) {
            0 | 1 => sql.push('?'),
            2 => sql.push_str(&format!("'{}'", inner(u))),
            3 => sql.push_str(&format!("? AS \"{}\"", inner(u))),
            4 => sql.push_str(&format!("? AS `{}`", inner(u))),
            5 => sql.push_str(&format!("1 /*{}*/ + ?", inner(u))),
            6 => sql.push_str(&format!("1 # {}\n+ ?", inner(u))),
            7 => sql.push_str(&format!("1 -- {}\n+ ?", inner(u))),
            8 => {
                let v = [
                    "!", "!50000", "!50700", "!100000", "!999999", "M!", "M!100000", "M!999999",
                ][u.choose_index(8).unwrap_or(0)];
                sql.push_str(&format!("1 /*{v} + ? {} */", inner(u)))
            }
            _ => sql.push_str(&format!("\"{}\", 1--?", inner(u))),
        }
    }
    sql
}

/// A server to compare with: `STAUNCH_FUZZ_SERVER_URL` (a throwaway server
/// of the test kit: `staunch-testkit server`), or none.
fn compare_server() -> Option<&'static std::sync::Mutex<(mysql::Conn, u32)>> {
    static SERVER: OnceLock<Option<std::sync::Mutex<(mysql::Conn, u32)>>> =
        OnceLock::new();
    SERVER
        .get_or_init(|| {
            use mysql::prelude::Queryable;
            let url = std::env::var("STAUNCH_FUZZ_SERVER_URL").ok()?;
            let opts = mysql::OptsBuilder::from_opts(
                mysql::Opts::from_url(&url).expect("STAUNCH_FUZZ_SERVER_URL"),
            )
            .prefer_socket(false)
            .stmt_cache_size(0);
            let mut c =
                mysql::Conn::new(opts).expect("connect to STAUNCH_FUZZ_SERVER_URL");
            let v: String = c.query_first("SELECT VERSION()").unwrap().unwrap();
            let version = staunch::__fuzz::version_number(&v).unwrap();
            Some(std::sync::Mutex::new((c, version)))
        })
        .as_ref()
}

static COMPARED: AtomicUsize = AtomicUsize::new(0);
static REFUSED: AtomicUsize = AtomicUsize::new(0);

/// The SQL scanner (`staunch::__fuzz::count_placeholders`, the one both
/// ways of sending and `staunch_conn_count_params` use) on generated SQL
/// under each lexing mode. Always: placeholders are `?` bytes in order, and
/// interpolating any values leaves no placeholder and no open quote (a
/// value can never end its literal). With `STAUNCH_FUZZ_SERVER_URL` set:
/// the server prepares the statement under the same `sql_mode`
/// (`COM_STMT_PREPARE`) and, when it accepts it, its parameter count must
/// equal the scanner's.
pub fn sql_scanner(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let nbe = u.arbitrary().unwrap_or(false);
    let ansi = u.arbitrary().unwrap_or(false);
    let sql = generated_sql(&mut u);
    let server = compare_server();
    let lex = staunch::Lexing {
        no_backslash_escapes: nbe,
        ansi_quotes: ansi,
        mariadb: true,
        version: Some(server.map_or(101100, |s| s.lock().unwrap().1)),
    };
    let scan = staunch::__fuzz::scan(&sql, &lex);
    let mut last = None;
    for &p in &scan.placeholders {
        assert_eq!(sql.as_bytes()[p], b'?', "{sql:?}");
        assert!(last < Some(p));
        last = Some(p);
    }
    assert_eq!(
        staunch::__fuzz::count_placeholders(&sql, &lex),
        scan.placeholders.len()
    );
    // Values written as literals end where the scanner thinks: the text
    // after them lexes as before, so no placeholder is left.
    let values: Vec<staunch::Param> = (0..scan.placeholders.len())
        .map(|i| match i % 4 {
            0 => staunch::Param::Text(
                String::from_utf8_lossy(u.bytes(8).unwrap_or(&b"'\\?"[..])).into(),
            ),
            1 => staunch::Param::Bytes(vec![b'\'', b'\\', 0]),
            2 => staunch::Param::Double(-1.5),
            _ => staunch::Param::Text("\\'?\"`".into()),
        })
        .collect();
    let text = staunch::__fuzz::interpolate(&sql, &values, &lex).unwrap();
    let again = staunch::__fuzz::scan(&text, &lex);
    let rest = &sql[scan.placeholders.last().map_or(0, |p| p + 1)..];
    assert_eq!(
        again.placeholders.len(),
        0,
        "{sql:?} interpolated as {text:?}"
    );
    assert!(text.ends_with(rest));
    let Some(server) = server else {
        return;
    };
    use mysql::prelude::Queryable;
    let mut g = server.lock().unwrap();
    let c = &mut g.0;
    let mode = match (nbe, ansi) {
        (true, true) => "NO_BACKSLASH_ESCAPES,ANSI_QUOTES",
        (true, false) => "NO_BACKSLASH_ESCAPES",
        (false, true) => "ANSI_QUOTES",
        (false, false) => "",
    };
    c.query_drop(format!("SET SESSION sql_mode = '{mode}'"))
        .unwrap();
    match c.prep(&sql) {
        Ok(stmt) => {
            let n = COMPARED.fetch_add(1, Ordering::Relaxed) + 1;
            assert_eq!(
                usize::from(stmt.num_params()),
                scan.placeholders.len(),
                "the server counts otherwise ({mode:?}): {sql:?}"
            );
            c.close(stmt).unwrap();
            if n % 10_000 == 0 {
                eprintln!(
                    "sql_scanner: {n} statements compared with the server, {} refused by it, 0 mismatches",
                    REFUSED.load(Ordering::Relaxed)
                );
            }
        }
        Err(mysql::Error::MySqlError(_)) => {
            REFUSED.fetch_add(1, Ordering::Relaxed);
        }
        Err(e) => panic!("server connection failed: {e}"),
    }
}

// ---------------------------------------------------------------------------
// auth_exchange

/// The password of every `auth_exchange` login: long enough that no
/// scramble, signature or RSA block holds it by chance.
const AUTH_PASSWORD: &str = "Zq9-auth-exchange-hunter2";

/// A 2048-bit RSA public key (test only; its private half was thrown
/// away): `Login::server_public_key` when the flags ask for one.
const AUTH_TEST_KEY: &[u8] = include_bytes!("auth_test_key.pem");

/// A server's side of a login, made of the fuzzer's packets, each framed
/// when the client reads it with the sequence id the client expects (one
/// more than the last packet either side sent), so that the exchange gets
/// past the framing; or, in raw mode, the bytes as they are. Keeps what the
/// client writes. The stream ends when the packets do: the client's next
/// read is an end of file, never a wait.
struct AuthScript {
    packets: std::collections::VecDeque<Vec<u8>>,
    raw: Option<std::io::Cursor<Vec<u8>>>,
    pending: Vec<u8>,
    at: usize,
    /// The last sequence id sent by either side.
    last_seq: Option<u8>,
    written: std::rc::Rc<std::cell::RefCell<Vec<u8>>>,
}

impl std::io::Read for AuthScript {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if let Some(raw) = &mut self.raw {
            return raw.read(buf);
        }
        if self.at == self.pending.len() {
            let Some(p) = self.packets.pop_front() else {
                return Ok(0);
            };
            let seq = self.last_seq.map_or(0, |s| s.wrapping_add(1));
            self.last_seq = Some(seq);
            let n = p.len();
            self.pending = vec![n as u8, (n >> 8) as u8, (n >> 16) as u8, seq];
            self.pending.extend_from_slice(&p);
            self.at = 0;
        }
        let n = buf.len().min(self.pending.len() - self.at);
        buf[..n].copy_from_slice(&self.pending[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

impl std::io::Write for AuthScript {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // The client's packets: the last one's sequence id counts.
        let mut w = self.written.borrow_mut();
        let from = w.len();
        w.extend_from_slice(buf);
        let mut rest = &w[from..];
        while rest.len() >= 4 {
            let n = rest[0] as usize | (rest[1] as usize) << 8 | (rest[2] as usize) << 16;
            self.last_seq = Some(rest[3]);
            rest = rest.get(4 + n..).unwrap_or_default();
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `Framer::connect` against a server made of the fuzzer's bytes. The
/// first byte holds the login's flags: bit 0 the stream is a unix socket,
/// 1 `get_server_public_key`, 2 `allow_cleartext`, 3 a configured
/// `server_public_key` (the committed test key), 4 an empty password, 5
/// raw mode (the rest is the server's byte stream as it is), 6 a default
/// database. Otherwise the rest is packets, each a 16-bit little-endian
/// length and that many bytes (the greeting first).
///
/// Checks: no panic and no hang (the stream ends: an error); every failure
/// a `WireError` with a non-empty message that never holds the password
/// (unless the server's own bytes did);
/// the password never sent as it is unless the stream is a unix socket;
/// a session authenticated by `mysql_clear_password` only when allowed,
/// on a unix socket.
pub fn auth_exchange(data: &[u8]) {
    use staunch::wire::{AuthPlugin, Framer, Login};
    let (&flags, rest) = data.split_first().unwrap_or((&0, &[]));
    let bit = |b: u8| flags & (1 << b) != 0;
    let written = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let mut script = AuthScript {
        packets: Default::default(),
        raw: None,
        pending: Vec::new(),
        at: 0,
        last_seq: None,
        written: written.clone(),
    };
    if bit(5) {
        script.raw = Some(std::io::Cursor::new(rest.to_vec()));
    } else {
        let mut rest = rest;
        while rest.len() >= 2 {
            let n = usize::from(u16::from_le_bytes([rest[0], rest[1]]));
            let end = (2 + n).min(rest.len());
            script.packets.push_back(rest[2..end].to_vec());
            rest = &rest[end..];
        }
    }
    let password = if bit(4) { "" } else { AUTH_PASSWORD };
    let login = Login {
        user: "fuzz",
        password,
        database: bit(6).then_some("staunch_test"),
        unix_socket: bit(0),
        get_server_public_key: bit(1),
        allow_cleartext: bit(2),
        server_public_key: bit(3).then_some(AUTH_TEST_KEY),
        ..Login::default()
    };
    let got = Framer::connect(script, &login, None);
    let sent = written.borrow();
    let leaked = !password.is_empty()
        && sent
            .windows(password.len())
            .any(|w| w == password.as_bytes());
    match got {
        Ok((_, greeting)) => {
            if greeting.auth_plugin == AuthPlugin::ClearPassword {
                assert!(login.unix_socket && login.allow_cleartext, "{login:?}");
            }
        }
        Err(e) => {
            let msg = e.to_string();
            assert!(!msg.trim().is_empty(), "an empty error: {e:?}");
            // A server's ERR message is passed on as sent: one that quotes
            // the password (the fuzzer learns it from the comparisons
            // below) is the server's text, not a leak.
            let quoted = !password.is_empty()
                && data
                    .windows(password.len())
                    .any(|w| w == password.as_bytes());
            if !password.is_empty() && !quoted {
                assert!(
                    !msg.contains(password),
                    "the error shows the password: {msg}"
                );
                let dbg = format!("{e:?}");
                assert!(
                    !dbg.contains(password),
                    "the error shows the password: {dbg}"
                );
            }
        }
    }
    assert!(
        !leaked || login.unix_socket,
        "the password left as it is over a stream that is not a unix socket"
    );
}

// ---------------------------------------------------------------------------
// framer: the packet layer fed a server's byte stream

/// A server's bytes, handed out a few at a time; what the client writes is
/// dropped.
struct ServerBytes {
    input: std::io::Cursor<Vec<u8>>,
    per_read: usize,
}

impl std::io::Read for ServerBytes {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.per_read);
        self.input.read(&mut buf[..n])
    }
}

impl std::io::Write for ServerBytes {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The first byte picks how many bytes each read returns (1 to 256), the
/// second the packet size limit; the rest is what the server sent. Checks:
/// the framer reads packets until the bytes end and then fails with a
/// `WireError` that has words (never a panic, never a loop: each packet
/// takes at least its 4-byte header), no packet is longer than what arrived
/// or than the limit, and a stream that ended is reported as such, with
/// `is_fatal`.
pub fn framer(data: &[u8]) {
    use staunch::wire::Framer;
    let [per_read, limit, input @ ..] = data else {
        return;
    };
    let max = 1usize << (*limit % 25);
    let mut f = Framer::new(
        ServerBytes {
            input: std::io::Cursor::new(input.to_vec()),
            per_read: usize::from(*per_read) + 1,
        },
        0,
    );
    f.set_max_packet(max);
    let mut packets = 0usize;
    let err = loop {
        match f.read_packet() {
            Ok(p) => {
                assert!(p.len() <= input.len(), "a packet longer than the input");
                assert!(p.len() <= max.max(0xFF_FFFF), "a packet over the limit");
                packets += 1;
                assert!(packets <= input.len() / 4 + 1, "more packets than headers");
            }
            Err(e) => break e,
        }
    };
    let text = err.to_string();
    assert!(!text.is_empty());
    assert!(
        err.is_fatal(),
        "{text}: a broken stream must end the connection"
    );
}

// ---------------------------------------------------------------------------
// binary_answer, text_answer

/// The fuzzer's bytes as a server's answer on a fresh session: a first
/// byte of choices (bit 0: `CLIENT_DEPRECATE_EOF`; bit 1: the rest is the
/// stream's bytes as they are, headers included; bit 2:
/// `CLIENT_SESSION_TRACK`; bits 3-5: bytes per read, 1 to 128; bit 6: the
/// answers to commands this side sends, see `binary_answer`; bit 7:
/// MariaDB's `MARIADB_CLIENT_CACHE_METADATA`, under which a result set may
/// leave its definitions out), then
/// packets, each a 2-byte little-endian length and its payload, numbered
/// from 0 as an answer is (from 1 with bit 6, and again from 1 after a
/// length of 0xFFFF, which ends one command's answer).
fn answer_framer(data: &[u8]) -> staunch::wire::Framer<ServerBytes> {
    use staunch::wire::caps;
    let (&choice, rest) = data.split_first().unwrap_or((&0, &[]));
    let mut c = caps::PROTOCOL_41;
    if choice & 1 != 0 {
        c |= caps::DEPRECATE_EOF;
    }
    if choice & 4 != 0 {
        c |= caps::SESSION_TRACK;
    }
    let input = if choice & 2 != 0 {
        rest.to_vec()
    } else {
        let mut out = Vec::new();
        let mut rest = rest;
        let first = u8::from(choice & 0x40 != 0);
        let mut seq = first;
        while rest.len() >= 2 {
            let len = u16::from_le_bytes([rest[0], rest[1]]);
            if len == 0xffff {
                seq = first;
                rest = &rest[2..];
                continue;
            }
            let len = usize::from(len).min(rest.len() - 2);
            out.extend_from_slice(&[len as u8, (len >> 8) as u8, 0, seq]);
            out.extend_from_slice(&rest[2..2 + len]);
            rest = &rest[2 + len..];
            seq = seq.wrapping_add(1);
        }
        out
    };
    let mut f = staunch::wire::Framer::new(
        ServerBytes {
            input: std::io::Cursor::new(input),
            per_read: 1 << ((choice >> 3) & 7),
        },
        c,
    );
    // Far below the default: a length the fuzzer wrote never makes the
    // framer wait for (or allocate) more than the input holds.
    f.set_max_packet(1 << 20);
    if choice & 0x80 != 0 {
        staunch::__fuzz::set_mariadb_caps(&mut f, staunch::wire::mariadb::CACHE_METADATA);
    }
    f
}

/// A failure of the wire layer: a `WireError` (the type says so) with a
/// message.
fn check_wire_error(e: &staunch::wire::WireError) {
    assert!(!e.to_string().trim().is_empty(), "an empty message: {e:?}");
}

/// The binary protocol's answer to an execute (`Framer::read_binary_response`,
/// `Framer::next_binary_row`) on the fuzzer's bytes: every result, every
/// column definition, every row and every cell walked. Checks: no panic,
/// no hang (each step consumes input, which ends), every row has one cell
/// per column, every failure a `WireError` with a message.
///
/// With bit 6 of the first byte, the bytes are the answers to a prepare
/// (`Framer::prepare`: the statement, its definitions) and to an execute
/// of it with parameters of every kind (written, then dropped), whose
/// answer is then read as above.
pub fn binary_answer(data: &[u8]) {
    use staunch::wire::{
        status, types, BinaryColumns, BinaryNext, Cell, Date, DateTime, Param, Response, Time,
    };
    let mut f = answer_framer(data);
    let mut columns = BinaryColumns::new();
    let mut stmt = None;
    if data.first().is_some_and(|c| c & 0x40 != 0) {
        let mut prepared = match f.prepare(b"SELECT ?") {
            Ok(stmt) => stmt,
            Err(e) => return check_wire_error(&e),
        };
        for def in prepared.params().iter().chain(prepared.columns().iter()) {
            if let Err(e) = def {
                check_wire_error(&e);
            }
        }
        let kinds = [
            Param::Null,
            Param::Int(-1),
            Param::UInt(u64::MAX),
            Param::Float(0.5),
            Param::Double(-0.5),
            Param::Bytes(&data[..data.len().min(300)], types::BLOB),
            Param::Date(Date::default()),
            Param::DateTime(DateTime {
                micros: 1,
                ..DateTime::default()
            }),
            Param::Time(Time::default()),
            Param::Long(types::STRING),
        ];
        let n = prepared.param_count().min(1000);
        let params: Vec<Param> = (0..n).map(|i| kinds[i % kinds.len()]).collect();
        if let Err(e) = f.send_execute(&mut prepared, &params) {
            return check_wire_error(&e);
        }
        if n != prepared.param_count() {
            return;
        }
        stmt = Some(prepared);
    }
    loop {
        // The first answer to the execute with the statement's columns
        // (those the server may leave out), the next ones without.
        let response = match stmt.as_mut() {
            Some(stmt) => f.read_execute_response(stmt, &mut columns),
            None => f.read_binary_response(&mut columns),
        };
        stmt = None;
        let more = match response {
            Ok(Response::Ok(ok)) => ok.status,
            Ok(Response::ResultSet) => {
                for def in columns.defs().iter() {
                    if let Err(e) = def {
                        check_wire_error(&e);
                    }
                }
                let n = columns.len();
                loop {
                    match f.next_binary_row(&columns) {
                        Ok(BinaryNext::Row(r)) => {
                            assert_eq!(r.len(), n);
                            let mut cells = 0;
                            for c in r.cells() {
                                if let Cell::Bytes(b) = c {
                                    std::hint::black_box(b.len());
                                }
                                cells += 1;
                            }
                            assert_eq!(cells, n, "a row checked whole gave fewer cells");
                        }
                        Ok(BinaryNext::End(ok)) => break ok.status,
                        Err(e) => return check_wire_error(&e),
                    }
                }
            }
            Err(e) => return check_wire_error(&e),
        };
        if more & status::MORE_RESULTS_EXISTS == 0 {
            return;
        }
    }
}

/// The same for the text protocol's reader (`Framer::read_response`,
/// `Framer::next_row`).
pub fn text_answer(data: &[u8]) {
    use staunch::wire::{status, Columns, Next, Response};
    let mut f = answer_framer(data);
    let mut columns = Columns::new();
    loop {
        let more = match f.read_response(&mut columns) {
            Ok(Response::Ok(ok)) => ok.status,
            Ok(Response::ResultSet) => {
                for def in columns.iter() {
                    if let Err(e) = def {
                        check_wire_error(&e);
                    }
                }
                let n = columns.len();
                loop {
                    match f.next_row() {
                        Ok(Next::Row(r)) => {
                            assert_eq!(r.len(), n);
                            assert_eq!(
                                r.cells().count(),
                                n,
                                "a row checked whole gave fewer cells"
                            );
                        }
                        Ok(Next::End(ok)) => break ok.status,
                        Err(e) => return check_wire_error(&e),
                    }
                }
            }
            Err(e) => return check_wire_error(&e),
        };
        if more & status::MORE_RESULTS_EXISTS == 0 {
            return;
        }
    }
}

// ---------------------------------------------------------------------------
// Replay of the committed corpus on stable

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// Runs every file of `corpus/<target>` through the target's body.
    fn replay(target: &str, body: fn(&[u8])) {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("corpus")
            .join(target);
        let mut n = 0;
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        for f in files {
            let data = std::fs::read(&f).unwrap();
            eprintln!("{}", f.display());
            body(&data);
            n += 1;
        }
        assert!(n > 0, "{} is empty", dir.display());
    }

    #[test]
    fn corpus_config_url() {
        replay("config_url", super::config_url);
    }

    #[test]
    fn corpus_ffi() {
        replay("ffi", super::ffi);
    }

    /// Not in the replay: `sql_scanner` on pseudo-random inputs for
    /// `STAUNCH_FUZZ_SECS` (default 10) seconds, without cargo-fuzz (a
    /// stable run against a server: set `STAUNCH_FUZZ_SERVER_URL`). Prints
    /// the executions and the statements compared with the server.
    #[test]
    #[ignore = "a timed random run, by hand"]
    fn random_sql_scanner() {
        let secs: u64 = std::env::var("STAUNCH_FUZZ_SECS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(10);
        let t = std::time::Instant::now();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut n = 0u64;
        while t.elapsed().as_secs() < secs {
            let data: Vec<u8> = (0..256)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            super::sql_scanner(&data);
            n += 1;
        }
        eprintln!(
            "random_sql_scanner: {n} executions in {secs} s; {} statements compared with the server, {} refused by it, 0 mismatches",
            super::COMPARED.load(std::sync::atomic::Ordering::Relaxed),
            super::REFUSED.load(std::sync::atomic::Ordering::Relaxed)
        );
    }

    #[test]
    fn corpus_sql_scanner() {
        replay("sql_scanner", super::sql_scanner);
    }

    #[test]
    fn corpus_auth_exchange() {
        replay("auth_exchange", super::auth_exchange);
    }

    #[test]
    fn corpus_framer() {
        replay("framer", super::framer);
    }

    #[test]
    fn corpus_binary_answer() {
        replay("binary_answer", super::binary_answer);
    }

    #[test]
    fn corpus_text_answer() {
        replay("text_answer", super::text_answer);
    }

    #[test]
    fn corpus_params_rows() {
        replay("params_rows", super::params_rows);
    }
}
