//! `staunch_struct_size` / `staunch_field_offset`: the layout of every
//! struct the header defines, as this library was built with it, so that a
//! binding declaring the structs by hand (Panama's `MemoryLayout`, ctypes'
//! `Structure`, cgo) can check its declarations at load or in a test.

use std::ffi::c_char;

use super::conn::{staunch_result, staunch_txn_options};
use super::events::staunch_event;
use super::pool::staunch_stats;
use super::rows::{staunch_batch, staunch_column_info};
use super::trace::staunch_trace_event;
use super::values::{staunch_datetime, staunch_param, staunch_time, staunch_value};
use super::{arg_str, guard_value};

/// The offset of a field, without `offset_of!` (Rust 1.77; the crate
/// supports 1.75).
macro_rules! offset {
    ($t:ty, $f:ident) => {{
        let u = std::mem::MaybeUninit::<$t>::uninit();
        let base = u.as_ptr();
        // SAFETY: only the address of the field is taken (`addr_of!` makes
        // no reference to uninitialized memory).
        let f = unsafe { std::ptr::addr_of!((*base).$f) };
        f as usize - base as usize
    }};
}

/// The table: each struct's C name, size, and its fields' C names and
/// offsets.
macro_rules! layouts {
    ($($t:ident { $($f:ident $(as $c:literal)?),* $(,)? })*) => {
        fn size_of_struct(name: &str) -> Option<usize> {
            match name {
                $(stringify!($t) => Some(std::mem::size_of::<$t>()),)*
                _ => None,
            }
        }

        fn offset_of_field(name: &str, field: &str) -> Option<usize> {
            match name {
                $(stringify!($t) => {
                    $(if field == layouts!(@name $f $($c)?) {
                        return Some(offset!($t, $f));
                    })*
                    None
                })*
                _ => None,
            }
        }

        #[cfg(test)]
        pub(crate) const STRUCTS: &[(&str, &[&str])] = &[
            $((stringify!($t), &[$(layouts!(@name $f $($c)?)),*]),)*
        ];
    };
    (@name $f:ident) => { stringify!($f) };
    (@name $f:ident $c:literal) => { $c };
}

layouts! {
    staunch_datetime { year, month, day, hour, minute, second, microsecond }
    staunch_time { negative, days, hours, minutes, seconds, microseconds }
    staunch_param { r#type as "type", i64, u64, f64, ptr, len, datetime, time, _reserved }
    staunch_value { r#type as "type", i64, u64, f64, ptr, len, datetime, time, _reserved }
    staunch_column_info {
        size, column_type, type_code, flags, charset, length, decimals, name, name_len,
        org_name, org_name_len, table, table_len, org_table, org_table_len, schema, schema_len,
    }
    staunch_result {
        size, affected_rows, last_insert_id, warnings, in_transaction, autocommit, info,
    }
    staunch_txn_options { size, isolation, read_only }
    staunch_batch {
        size, recycle, types, types_cap, values, values_cap, n_columns, n_rows, affected_rows,
        last_insert_id,
    }
    staunch_event { kind, status, connection_id, count, duration_us, message, pool_id }
    staunch_trace_event {
        kind, error_code, pool, pool_len, server, server_len, connection_id, statement,
        statement_len, duration_us, error, error_len, held_us,
    }
    staunch_stats {
        size, total, active, idle, reserved, waiting, pending_creates, connecting,
        adder_threads, acquired, acquire_timeouts, created, closed_idle_timeout,
        closed_max_lifetime, closed_broken, closed_evicted, closed_pool_closed,
        connect_failures, abandoned_connects, validation_failures, keepalives,
        leaks_reported, rollbacks_on_return, violations, acquire_count, acquire_p50_us,
        acquire_p99_us, acquire_max_us, connect_count, connect_p50_us, connect_p99_us,
        connect_max_us, max_size, acquires_waited, acquire_wait_us, acquires_cancelled,
        resets_on_return, statements_cut,
    }
}

/// `sizeof` the struct named `name` ("staunch_param", "staunch_stats", ...)
/// in this library, 0 for a name it does not define (or NULL). For
/// bindings that declare the structs themselves, to check them at load.
/// Never blocks; any thread.
#[no_mangle]
pub extern "C" fn staunch_struct_size(name: *const c_char) -> usize {
    guard_value(0, || {
        // SAFETY: NULL or a NUL-terminated string (header contract).
        let Ok(name) = (unsafe { arg_str(name, "name") }) else {
            return 0;
        };
        size_of_struct(name).unwrap_or(0)
    })
}

/// `offsetof` the field `field` of the struct `name` in this library
/// (`staunch_field_offset("staunch_param", "len")`), or SIZE_MAX for a
/// struct or field it does not define (or NULL). Never blocks; any thread.
#[no_mangle]
pub extern "C" fn staunch_field_offset(name: *const c_char, field: *const c_char) -> usize {
    guard_value(usize::MAX, || {
        // SAFETY: NULL or NUL-terminated strings (header contract).
        let (Ok(name), Ok(field)) = (unsafe { arg_str(name, "name") }, unsafe {
            arg_str(field, "field")
        }) else {
            return usize::MAX;
        };
        offset_of_field(name, field).unwrap_or(usize::MAX)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CString;

    #[test]
    fn every_struct_and_field_is_known_and_fields_are_in_order() {
        for (name, fields) in STRUCTS {
            let n = CString::new(*name).unwrap();
            let size = staunch_struct_size(n.as_ptr());
            assert!(size > 0, "{name}");
            let mut last = None;
            for f in *fields {
                let c = CString::new(*f).unwrap();
                let off = staunch_field_offset(n.as_ptr(), c.as_ptr());
                assert!(off < size, "{name}.{f}");
                assert!(last.map_or(true, |l| off > l), "{name}.{f} out of order");
                last = Some(off);
            }
        }
        let p = CString::new("staunch_param").unwrap();
        let nope = CString::new("nope").unwrap();
        assert_eq!(staunch_struct_size(nope.as_ptr()), 0);
        assert_eq!(staunch_struct_size(std::ptr::null()), 0);
        assert_eq!(staunch_field_offset(p.as_ptr(), nope.as_ptr()), usize::MAX);
        assert_eq!(
            staunch_field_offset(p.as_ptr(), CString::new("type").unwrap().as_ptr()),
            0
        );
    }

    /// The 1.x promise for the two arrays C fills and reads element by
    /// element: their layout never changes (64-bit targets).
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn param_and_value_layouts_are_frozen() {
        for t in ["staunch_param", "staunch_value"] {
            let n = CString::new(t).unwrap();
            assert_eq!(staunch_struct_size(n.as_ptr()), 96, "{t}");
            let want = [
                ("type", 0),
                ("i64", 8),
                ("u64", 16),
                ("f64", 24),
                ("ptr", 32),
                ("len", 40),
                ("datetime", 48),
                ("time", 60),
                ("_reserved", 80),
            ];
            for (f, off) in want {
                let c = CString::new(f).unwrap();
                assert_eq!(staunch_field_offset(n.as_ptr(), c.as_ptr()), off, "{t}.{f}");
            }
        }
    }
}
