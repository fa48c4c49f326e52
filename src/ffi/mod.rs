//! The C ABI: `include/staunch.h` is generated from this module by cbindgen
//! (`scripts/check-header.sh` checks the committed header is current).
//!
//! Modelled on rustls-ffi (opaque handles, a panic boundary in every export,
//! `typedef uint32_t` status codes in ranges, out-parameters written only on
//! success, `_free(NULL)` as a no-op) and on wasmtime's C API (an owned error
//! object next to the status, callbacks with `user_data` and a finalizer).
//!
//! # Rules every export follows
//! - The body runs inside `guard` (or `guard_value` for functions that
//!   cannot fail), which catches panics: none crosses into C.
//! - Every pointer argument is checked for NULL before anything happens, so a
//!   NULL out-parameter never leaves work half done (a borrowed connection
//!   nobody can return, say).
//! - Out-parameters are written only when the function returns `STAUNCH_OK`;
//!   `*err` only when it fails.
//! - Handles are shared references on the Rust side (`&staunch_pool`), never
//!   `&mut`, when C may use them from several threads at once: the pool is
//!   internally synchronized, a connection serializes its callers with a
//!   mutex (a second thread gets `STAUNCH_CONN_BUSY` instead of a data race).
//!   Row sets and options are single-threaded, as documented in the header.
//!
//! Unsafe code lives here (dereferencing what C passes) and in three fenced
//! places besides, each with its SAFETY argument: `sys.rs` (the libc calls:
//! socket options, `shutdown`, `poll`), `sync::model::OwnedCell` and
//! `pool::bag`'s `take`/`put` (a cell whose access is serialized by entry
//! ownership, proven by the `Entry` token), and the hidden `__fuzz` module.
#![allow(unsafe_code)]
// The exports are called from C, where every pointer is raw: the validity of
// what they point to is the C caller's contract, documented in the header for
// each function, and every dereference sits in an `unsafe` block with a
// SAFETY note. Marking the exports `unsafe fn` would change nothing for C.
#![allow(clippy::not_unsafe_ptr_arg_deref)]
// Types and constants carry their C names (cbindgen copies them verbatim).
#![allow(non_camel_case_types)]

use std::any::Any;
use std::ffi::{c_char, CStr};
use std::panic::{self, AssertUnwindSafe};

/// A `&'static CStr` from a string literal (C string literals need Rust 1.77;
/// the crate supports 1.75).
macro_rules! cstr {
    ($s:expr) => {{
        const BYTES: &[u8] = concat!($s, "\0").as_bytes();
        // SAFETY: a literal with exactly one NUL, the one appended here
        // (checked at compile time below).
        const _: () = assert!(crate::ffi::nul_only_at_end(BYTES));
        #[allow(unused_unsafe)]
        let s: &'static ::std::ffi::CStr =
            unsafe { ::std::ffi::CStr::from_bytes_with_nul_unchecked(BYTES) };
        s
    }};
}

// The order of these modules is the order of the header's sections (cbindgen
// reads them in declaration order); blank lines keep rustfmt from sorting.
// Dependencies point one way: pool -> conn -> rows -> values (-> error), and
// options -> events.
pub(crate) mod error;

pub(crate) mod options;

pub(crate) mod pool;

pub(crate) mod values;

pub(crate) mod cancel;

pub(crate) mod conn;

pub(crate) mod rows;

pub(crate) mod events;

pub(crate) mod trace;

pub(crate) mod layout;

pub use self::cancel::*;
pub use self::conn::*;
pub use self::error::*;
pub use self::events::*;
pub use self::layout::*;
pub use self::options::*;
pub use self::pool::*;
pub use self::rows::*;
pub use self::trace::*;
pub use self::values::*;

/// Major version of the library (the `X` of `X.Y.Z`).
pub const STAUNCH_VERSION_MAJOR: u32 = 1;
/// Minor version of the library.
pub const STAUNCH_VERSION_MINOR: u32 = 13;
/// Patch version of the library.
pub const STAUNCH_VERSION_PATCH: u32 = 0;
/// The version as one number, `major * 10000 + minor * 100 + patch`, for
/// `#if STAUNCH_VERSION >= 10203`. Compare with `staunch_version()` at run
/// time to detect a header/library mismatch. (Literal numbers, so that
/// cffi's `cdef` takes them; a test checks them against Cargo.toml's
/// `library-version`.)
pub const STAUNCH_VERSION: u32 = 11300;

/// Pass as `timeout_ms` to `staunch_pool_get` to wait the pool's
/// `connection_timeout` (10 s unless configured), or to
/// `staunch_conn_set_timeout` for the pool's `query_timeout`. (UINT32_MAX.)
pub const STAUNCH_TIMEOUT_DEFAULT: u32 = 4294967295;

/// The version of the library that is loaded, as `STAUNCH_VERSION` encodes it
/// (`major * 10000 + minor * 100 + patch`). Never blocks; any thread.
#[no_mangle]
pub extern "C" fn staunch_version() -> u32 {
    STAUNCH_VERSION
}

/// The version of the library that is loaded, e.g. "0.1.0". Static string.
/// Never blocks; any thread.
#[no_mangle]
pub extern "C" fn staunch_version_string() -> *const c_char {
    cstr!(env!("STAUNCH_LIBRARY_VERSION")).as_ptr()
}

pub(crate) const fn nul_only_at_end(b: &[u8]) -> bool {
    if b.is_empty() || b[b.len() - 1] != 0 {
        return false;
    }
    let mut i = 0;
    while i + 1 < b.len() {
        if b[i] == 0 {
            return false;
        }
        i += 1;
    }
    true
}

/// Runs the body of a fallible export: catches a panic (STAUNCH_PANIC), and on
/// failure hands an error object to the caller if `err` is not NULL.
pub(crate) fn guard(
    err: *mut *mut staunch_error,
    f: impl FnOnce() -> Result<(), Failure>,
) -> staunch_status {
    let failure = match panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => return STAUNCH_OK,
        Ok(Err(failure)) => failure,
        Err(payload) => panic_failure(payload),
    };
    let status = failure.status;
    if !err.is_null() {
        let boxed = panic::catch_unwind(AssertUnwindSafe(|| {
            Box::into_raw(Box::new(failure.into_error()))
        }));
        if let Ok(p) = boxed {
            // SAFETY: `err` is non-NULL and, per the contract of every
            // export, points to writable storage for one pointer.
            unsafe { err.write(p) };
        }
    }
    status
}

/// Runs the body of an export that cannot fail: a panic gives `fallback`.
pub(crate) fn guard_value<T>(fallback: T, f: impl FnOnce() -> T) -> T {
    match panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(payload) => {
            // Dropping a payload can itself panic: keep that inside too.
            let _ = panic::catch_unwind(AssertUnwindSafe(|| drop(payload)));
            fallback
        }
    }
}

fn panic_failure(payload: Box<dyn Any + Send>) -> Failure {
    // Reading or dropping a payload can itself panic: both stay inside.
    let r = panic::catch_unwind(AssertUnwindSafe(|| {
        let what = crate::sync::panic_message(&*payload);
        drop(payload);
        what
    }));
    let what = r.unwrap_or_else(|p| {
        std::mem::forget(p);
        "a panic whose payload panicked".to_string()
    });
    Failure::new(
        STAUNCH_PANIC,
        format!("staunch panicked inside the call (a bug, please report it): {what}"),
    )
}

/// `&T` from a pointer C passed, or a NULL_ARGUMENT failure naming it.
///
/// # Safety
/// `p` is NULL or points to a live `T` for `'a`.
pub(crate) unsafe fn arg<'a, T>(p: *const T, what: &str) -> Result<&'a T, Failure> {
    // SAFETY: per this function's contract.
    unsafe { p.as_ref() }.ok_or_else(|| Failure::null(what))
}

/// `&mut T` from a pointer C passed (single-threaded handles only).
///
/// # Safety
/// `p` is NULL or points to a live `T` nobody else uses for `'a`.
pub(crate) unsafe fn arg_mut<'a, T>(p: *mut T, what: &str) -> Result<&'a mut T, Failure> {
    // SAFETY: per this function's contract.
    unsafe { p.as_mut() }.ok_or_else(|| Failure::null(what))
}

/// An out-parameter, checked for NULL up front and written on success.
pub(crate) struct Out<T>(*mut T);

impl<T> Out<T> {
    pub fn new(p: *mut T, what: &str) -> Result<Out<T>, Failure> {
        if p.is_null() {
            Err(Failure::null(what))
        } else {
            Ok(Out(p))
        }
    }

    /// The pointer, for `copy_sized`.
    pub fn ptr(&self) -> *mut T {
        self.0
    }

    /// Writes the value (without reading or dropping the old one).
    pub fn set(self, v: T) {
        // SAFETY: non-NULL (checked in `new`) and, per the contract of every
        // export, points to writable storage for a `T`.
        unsafe { self.0.write(v) }
    }
}

/// The `size` a size-prefixed struct's caller set: at least the field
/// itself.
///
/// # Safety
/// `p` is non-NULL and points to a readable `usize`.
unsafe fn caller_size(p: *const usize, name: &str) -> Result<usize, Failure> {
    // SAFETY: per this function's contract (read unaligned: C's struct is
    // aligned, but nothing is lost by not relying on it).
    let size = unsafe { p.read_unaligned() };
    if size < std::mem::size_of::<usize>() {
        return Err(Failure::new(
            STAUNCH_INVALID_ARGUMENT,
            format!("{name}.size is {size}: set it to sizeof({name}) before the call"),
        ));
    }
    Ok(size)
}

/// Writes `val` to a size-prefixed struct (`T` leads with `size: usize`):
/// the bytes that fit in the caller's `size`, then `size` = the bytes
/// written (less than the caller's when this library's struct is older and
/// shorter). Fields the caller's struct has and this library's does not are
/// left as they were.
///
/// # Safety
/// `out` is non-NULL and points to writable storage of the caller's `size`
/// bytes (at least a `usize`); `T` is `repr(C)`, leading with `size: usize`.
pub(crate) unsafe fn copy_sized<T: Copy>(out: *mut T, val: &T, name: &str) -> Result<(), Failure> {
    // SAFETY: per this function's contract.
    let theirs = unsafe { caller_size(out.cast::<usize>(), name) }?;
    let n = theirs.min(std::mem::size_of::<T>());
    // SAFETY: `n` bytes fit in both; they do not overlap (`val` is ours).
    unsafe {
        std::ptr::copy_nonoverlapping((val as *const T).cast::<u8>(), out.cast::<u8>(), n);
        out.cast::<usize>().write_unaligned(n);
    }
    Ok(())
}

/// Reads a size-prefixed struct C passed (NULL: None): the bytes of the
/// caller's `size` that this library knows, zeros for fields the caller's
/// (older) struct does not have. Read its fields through raw pointers when a
/// C `bool` may hold any byte.
///
/// # Safety
/// `p` is NULL or points to readable storage of the caller's `size` bytes
/// (at least a `usize`); `T` is `repr(C)`, leading with `size: usize`, and
/// valid when all zeros.
pub(crate) unsafe fn read_sized<T>(
    p: *const T,
    name: &str,
) -> Result<Option<std::mem::MaybeUninit<T>>, Failure> {
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: per this function's contract.
    let theirs = unsafe { caller_size(p.cast::<usize>(), name) }?;
    let n = theirs.min(std::mem::size_of::<T>());
    let mut v = std::mem::MaybeUninit::<T>::zeroed();
    // SAFETY: `n` bytes fit in both and do not overlap.
    unsafe { std::ptr::copy_nonoverlapping(p.cast::<u8>(), v.as_mut_ptr().cast::<u8>(), n) };
    Ok(Some(v))
}

/// An optional out-parameter (NULL: the caller does not want the value).
pub(crate) fn set_opt<T>(p: *mut T, v: T) {
    if !p.is_null() {
        // SAFETY: as in `Out::set`.
        unsafe { p.write(v) }
    }
}

/// A NUL-terminated UTF-8 string argument.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string that lives for `'a`.
pub(crate) unsafe fn arg_str<'a>(p: *const c_char, what: &str) -> Result<&'a str, Failure> {
    if p.is_null() {
        return Err(Failure::null(what));
    }
    // SAFETY: per this function's contract.
    let c = unsafe { CStr::from_ptr(p) };
    c.to_str().map_err(|e| {
        Failure::new(
            STAUNCH_INVALID_UTF8,
            format!(
                "{what} is not valid UTF-8 (bad byte at offset {})",
                e.valid_up_to()
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ptr;

    #[test]
    fn version_macros_match_cargo() {
        let v: Vec<u32> = env!("STAUNCH_LIBRARY_VERSION")
            .split('.')
            .map(|n| n.parse().unwrap())
            .collect();
        let (major, minor, patch) = (v[0], v[1], v[2]);
        assert_eq!(STAUNCH_VERSION_MAJOR, major);
        assert_eq!(STAUNCH_VERSION_MINOR, minor);
        assert_eq!(STAUNCH_VERSION_PATCH, patch);
        assert_eq!(staunch_version(), major * 10000 + minor * 100 + patch);
        assert_eq!(STAUNCH_VERSION, major * 10000 + minor * 100 + patch);
        assert_eq!(STAUNCH_TIMEOUT_DEFAULT, u32::MAX);
        // SAFETY: a static NUL-terminated string.
        let s = unsafe { CStr::from_ptr(staunch_version_string()) };
        assert_eq!(s.to_str().unwrap(), env!("STAUNCH_LIBRARY_VERSION"));
    }

    #[test]
    fn status_names_are_unique_and_in_their_ranges() {
        let mut seen = std::collections::HashSet::new();
        for (code, name) in STATUS_NAMES {
            assert!(seen.insert(*code), "duplicate code {code}");
            let n = name.to_str().unwrap();
            assert!(n.starts_with("STAUNCH_"), "{n}");
            assert!(
                matches!(code, 0 | 100..=199 | 200..=299 | 300..=399 | 900..=999),
                "{n}={code}"
            );
            // SAFETY: static strings.
            let got = unsafe { CStr::from_ptr(staunch_status_name(*code)) };
            assert_eq!(got, *name);
        }
        // SAFETY: static string.
        let unknown = unsafe { CStr::from_ptr(staunch_status_name(12345)) };
        assert_eq!(unknown.to_str().unwrap(), "STAUNCH_UNKNOWN_STATUS");
    }

    #[test]
    fn a_panic_becomes_a_status_and_an_error() {
        let mut err: *mut staunch_error = ptr::null_mut();
        let st = guard(&mut err, || panic!("boom"));
        assert_eq!(st, STAUNCH_PANIC);
        assert!(!err.is_null());
        assert_eq!(staunch_error_status(err), STAUNCH_PANIC);
        // SAFETY: a live error object.
        let msg = unsafe { CStr::from_ptr(staunch_error_message(err)) };
        assert!(msg.to_str().unwrap().contains("boom"));
        staunch_error_free(err);
        assert_eq!(guard(ptr::null_mut(), || panic!("boom")), STAUNCH_PANIC);
        assert_eq!(guard_value(7, || panic!("boom")), 7);
    }

    #[test]
    fn error_accessors_accept_null() {
        assert_eq!(staunch_error_status(ptr::null()), STAUNCH_NULL_ARGUMENT);
        assert_eq!(staunch_error_server_code(ptr::null()), 0);
        // SAFETY: static strings.
        unsafe {
            assert_eq!(
                CStr::from_ptr(staunch_error_message(ptr::null())).to_bytes(),
                b""
            );
            assert_eq!(
                CStr::from_ptr(staunch_error_sqlstate(ptr::null())).to_bytes(),
                b""
            );
        }
        staunch_error_free(ptr::null_mut());
    }

    #[test]
    fn interior_nul_in_a_message_is_replaced() {
        let c = to_cstring("a\0b".to_string());
        assert_eq!(c.to_str().unwrap(), "a\u{FFFD}b");
    }
}
