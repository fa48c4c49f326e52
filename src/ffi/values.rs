//! `staunch_param` and the date/time structs: values as C passes them in
//! (parameters) and gets them back (row getters), and their conversion.

use std::ffi::{c_char, c_void};

use super::error::*;
use crate::client::{Decimal, Param};

/// The type of a `staunch_param`.
pub type staunch_param_type = u32;
/// SQL NULL (no field is read).
pub const STAUNCH_PARAM_NULL: staunch_param_type = 0;
/// A signed 64-bit integer in `i64`.
pub const STAUNCH_PARAM_INT64: staunch_param_type = 1;
/// An unsigned 64-bit integer in `u64`.
pub const STAUNCH_PARAM_UINT64: staunch_param_type = 2;
/// A double in `f64`.
pub const STAUNCH_PARAM_DOUBLE: staunch_param_type = 3;
/// UTF-8 text: `len` bytes at `ptr` (no NUL needed; `ptr` may be NULL when
/// `len` is 0). Text that is not UTF-8 fails with STAUNCH_INVALID_UTF8.
pub const STAUNCH_PARAM_TEXT: staunch_param_type = 4;
/// Binary data: `len` bytes at `ptr`, NULs allowed (`ptr` may be NULL when
/// `len` is 0).
pub const STAUNCH_PARAM_BYTES: staunch_param_type = 5;
/// A DATE in `datetime` (year, month, day; the time fields must be 0).
pub const STAUNCH_PARAM_DATE: staunch_param_type = 6;
/// A DATETIME or TIMESTAMP in `datetime`.
pub const STAUNCH_PARAM_DATETIME: staunch_param_type = 7;
/// A TIME in `time`.
pub const STAUNCH_PARAM_TIME: staunch_param_type = 8;
/// An exact decimal number as text: `len` bytes at `ptr` in plain digits,
/// `[+-]digits[.digits]` or `[+-].digits` (no exponent, no spaces), at most
/// 65 digits of which at most 38 after the point. Anything else fails with
/// STAUNCH_INVALID_ARGUMENT naming the parameter, and nothing is sent. The
/// server treats it as an exact DECIMAL (in arithmetic, comparison and
/// storage; `SELECT ?` gives a DECIMAL column) on both ways a statement is
/// sent.
pub const STAUNCH_PARAM_DECIMAL: staunch_param_type = 9;

/// A DATE, DATETIME or TIMESTAMP value (DATE: the time fields are 0). Zero
/// dates ('0000-00-00') are represented with zeros.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct staunch_datetime {
    /// 0 to 9999.
    pub year: u16,
    /// 1 to 12 (0 in a zero date).
    pub month: u8,
    /// 1 to 31 (0 in a zero date).
    pub day: u8,
    /// 0 to 23.
    pub hour: u8,
    /// 0 to 59.
    pub minute: u8,
    /// 0 to 59.
    pub second: u8,
    /// 0 to 999999.
    pub microsecond: u32,
}

/// A TIME value: a signed duration of up to 838:59:59.999999, as
/// `days * 24 + hours` hours, minutes, seconds and microseconds.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct staunch_time {
    /// True for a negative duration.
    pub negative: bool,
    /// Whole days.
    pub days: u32,
    /// 0 to 23.
    pub hours: u8,
    /// 0 to 59.
    pub minutes: u8,
    /// 0 to 59.
    pub seconds: u8,
    /// 0 to 999999.
    pub microseconds: u32,
}

/// One statement parameter, bound to a `?` placeholder (values are sent
/// separately from the SQL text, never quoted into it). Set `type` and the
/// field it names; the other fields are not read. The `staunch_param_*`
/// functions build them. Its layout is fixed for every 1.x release (96
/// bytes on 64-bit targets, `_reserved` included; see
/// `staunch_struct_size`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct staunch_param {
    /// One of the STAUNCH_PARAM_* values.
    pub r#type: staunch_param_type,
    /// The value of a STAUNCH_PARAM_INT64.
    pub i64: i64,
    /// The value of a STAUNCH_PARAM_UINT64.
    pub u64: u64,
    /// The value of a STAUNCH_PARAM_DOUBLE.
    pub f64: f64,
    /// The data of a STAUNCH_PARAM_TEXT or STAUNCH_PARAM_BYTES.
    pub ptr: *const c_void,
    /// Its length in bytes.
    pub len: usize,
    /// The value of a STAUNCH_PARAM_DATE or STAUNCH_PARAM_DATETIME.
    pub datetime: staunch_datetime,
    /// The value of a STAUNCH_PARAM_TIME.
    pub time: staunch_time,
    /// Room for later types; set to zero (the helpers do), never read.
    pub _reserved: [u64; 2],
}

impl staunch_param {
    fn of(t: staunch_param_type) -> staunch_param {
        staunch_param {
            r#type: t,
            i64: 0,
            u64: 0,
            f64: 0.0,
            ptr: std::ptr::null(),
            len: 0,
            datetime: staunch_datetime::default(),
            time: staunch_time::default(),
            _reserved: [0; 2],
        }
    }
}

/// A SQL NULL parameter. The `staunch_param_*` builders never fail, never
/// block, and may be called from any thread; text and bytes parameters
/// point at the caller's data, which must stay valid until the statement
/// call returns.
#[no_mangle]
pub extern "C" fn staunch_param_null() -> staunch_param {
    staunch_param::of(STAUNCH_PARAM_NULL)
}

/// A signed 64-bit integer parameter.
#[no_mangle]
pub extern "C" fn staunch_param_i64(v: i64) -> staunch_param {
    staunch_param {
        i64: v,
        ..staunch_param::of(STAUNCH_PARAM_INT64)
    }
}

/// An unsigned 64-bit integer parameter.
#[no_mangle]
pub extern "C" fn staunch_param_u64(v: u64) -> staunch_param {
    staunch_param {
        u64: v,
        ..staunch_param::of(STAUNCH_PARAM_UINT64)
    }
}

/// A double parameter.
#[no_mangle]
pub extern "C" fn staunch_param_double(v: f64) -> staunch_param {
    staunch_param {
        f64: v,
        ..staunch_param::of(STAUNCH_PARAM_DOUBLE)
    }
}

/// A UTF-8 text parameter of `len` bytes at `s` (no NUL needed; checked
/// when the statement runs).
#[no_mangle]
pub extern "C" fn staunch_param_text_len(s: *const c_char, len: usize) -> staunch_param {
    staunch_param {
        ptr: s.cast(),
        len,
        ..staunch_param::of(STAUNCH_PARAM_TEXT)
    }
}

/// A NUL-terminated UTF-8 text parameter (NULL gives SQL NULL).
#[no_mangle]
pub extern "C" fn staunch_param_text(s: *const c_char) -> staunch_param {
    super::guard_value(staunch_param_null(), || {
        if s.is_null() {
            return staunch_param_null();
        }
        // SAFETY: a NUL-terminated string (header contract).
        let len = unsafe { std::ffi::CStr::from_ptr(s) }.to_bytes().len();
        staunch_param_text_len(s, len)
    })
}

/// A decimal parameter of `len` bytes of text at `s` (see
/// STAUNCH_PARAM_DECIMAL; checked when the statement runs).
#[no_mangle]
pub extern "C" fn staunch_param_decimal(s: *const c_char, len: usize) -> staunch_param {
    staunch_param {
        ptr: s.cast(),
        len,
        ..staunch_param::of(STAUNCH_PARAM_DECIMAL)
    }
}

/// A binary parameter of `len` bytes at `data` (NULs allowed), sent as
/// binary data (never checked or converted as text).
#[no_mangle]
pub extern "C" fn staunch_param_bytes(data: *const c_void, len: usize) -> staunch_param {
    staunch_param {
        ptr: data,
        len,
        ..staunch_param::of(STAUNCH_PARAM_BYTES)
    }
}

/// A DATE parameter (checked when the statement runs).
#[no_mangle]
pub extern "C" fn staunch_param_date(year: u16, month: u8, day: u8) -> staunch_param {
    staunch_param {
        datetime: staunch_datetime {
            year,
            month,
            day,
            ..staunch_datetime::default()
        },
        ..staunch_param::of(STAUNCH_PARAM_DATE)
    }
}

/// A DATETIME or TIMESTAMP parameter.
#[no_mangle]
pub extern "C" fn staunch_param_datetime(v: staunch_datetime) -> staunch_param {
    staunch_param {
        datetime: v,
        ..staunch_param::of(STAUNCH_PARAM_DATETIME)
    }
}

/// A TIME parameter.
#[no_mangle]
pub extern "C" fn staunch_param_time(v: staunch_time) -> staunch_param {
    staunch_param {
        time: v,
        ..staunch_param::of(STAUNCH_PARAM_TIME)
    }
}

/// One value of a row, as `staunch_rows_fetch` gives it: `type` says which
/// field holds it (a STAUNCH_COLUMN_* value: STAUNCH_COLUMN_NULL for SQL
/// NULL, INT in `i64`, UINT in `u64`, DOUBLE in `f64` (FLOAT columns too),
/// DECIMAL, TEXT and BYTES as `len` bytes at `ptr` (not NUL-terminated
/// for BYTES; TEXT and DECIMAL are followed by a NUL), DATE and DATETIME in
/// `datetime`, TIME in `time`). `ptr` points into the row set: valid until
/// its next fetch, `staunch_rows_next`, `staunch_rows_next_result` or
/// `staunch_rows_free`. Its layout is fixed for every 1.x release (96
/// bytes on 64-bit targets).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct staunch_value {
    /// A STAUNCH_COLUMN_* value.
    pub r#type: u32,
    pub i64: i64,
    pub u64: u64,
    pub f64: f64,
    pub ptr: *const c_char,
    pub len: usize,
    pub datetime: staunch_datetime,
    pub time: staunch_time,
    /// Zero; room for later types.
    pub _reserved: [u64; 2],
}

impl Default for staunch_value {
    fn default() -> staunch_value {
        staunch_value::null()
    }
}

impl staunch_value {
    /// SQL NULL (STAUNCH_COLUMN_NULL is 0).
    pub(crate) fn null() -> staunch_value {
        staunch_value {
            r#type: 0,
            i64: 0,
            u64: 0,
            f64: 0.0,
            ptr: std::ptr::null(),
            len: 0,
            datetime: staunch_datetime::default(),
            time: staunch_time::default(),
            _reserved: [0; 2],
        }
    }
}

fn out_of_range(i: usize, what: &str) -> Failure {
    Failure::new(STAUNCH_OUT_OF_RANGE, format!("params[{i}]: {what}"))
}

/// The `len` bytes at `ptr` of a text or bytes parameter.
///
/// # Safety
/// `ptr` is NULL or points to `len` readable bytes (header contract).
unsafe fn param_bytes<'a>(i: usize, p: &staunch_param) -> Result<&'a [u8], Failure> {
    if p.len == 0 {
        return Ok(&[]);
    }
    if p.ptr.is_null() {
        return Err(Failure::null(&format!(
            "params[{i}].ptr (with len {})",
            p.len
        )));
    }
    if p.len > isize::MAX as usize {
        return Err(out_of_range(i, "len is too large"));
    }
    // SAFETY: per this function's contract.
    Ok(unsafe { std::slice::from_raw_parts(p.ptr.cast::<u8>(), p.len) })
}

/// Converts one C parameter.
///
/// # Safety
/// As for `param_bytes`.
pub(crate) unsafe fn to_param(i: usize, p: &staunch_param) -> Result<Param, Failure> {
    Ok(match p.r#type {
        STAUNCH_PARAM_NULL => Param::Null,
        STAUNCH_PARAM_INT64 => Param::Int(p.i64),
        STAUNCH_PARAM_UINT64 => Param::UInt(p.u64),
        STAUNCH_PARAM_DOUBLE => Param::Double(p.f64),
        STAUNCH_PARAM_TEXT => {
            // SAFETY: per this function's contract.
            let b = unsafe { param_bytes(i, p) }?;
            match std::str::from_utf8(b) {
                Ok(s) => Param::Text(s.to_owned()),
                Err(e) => return Err(Failure::new(
                    STAUNCH_INVALID_UTF8,
                    format!(
                        "params[{i}] (STAUNCH_PARAM_TEXT) is not valid UTF-8 (bad byte at offset {}); use STAUNCH_PARAM_BYTES for binary data",
                        e.valid_up_to()
                    ),
                )),
            }
        }
        // SAFETY: per this function's contract.
        STAUNCH_PARAM_BYTES => Param::Bytes(unsafe { param_bytes(i, p) }?.to_vec()),
        STAUNCH_PARAM_DECIMAL => {
            // SAFETY: per this function's contract.
            let b = unsafe { param_bytes(i, p) }?;
            let bad = |why: String| {
                Failure::new(
                    STAUNCH_INVALID_ARGUMENT,
                    format!("params[{i}] (STAUNCH_PARAM_DECIMAL): {why}"),
                )
            };
            let s = std::str::from_utf8(b).map_err(|_| {
                bad(
                    "not a decimal number (not even UTF-8 text; expected [+-]digits[.digits])"
                        .into(),
                )
            })?;
            Param::Decimal(Decimal::parse(s).map_err(|e| bad(e.to_string()))?)
        }
        STAUNCH_PARAM_DATE | STAUNCH_PARAM_DATETIME => {
            let d = p.datetime;
            let v = Param::DateTime(
                d.year,
                d.month,
                d.day,
                d.hour,
                d.minute,
                d.second,
                d.microsecond,
            );
            if let Some(why) = v.fault() {
                return Err(out_of_range(i, &why));
            }
            if p.r#type == STAUNCH_PARAM_DATETIME {
                v
            } else if (d.hour, d.minute, d.second, d.microsecond) == (0, 0, 0, 0) {
                Param::Date(d.year, d.month, d.day)
            } else {
                return Err(out_of_range(
                    i,
                    "a STAUNCH_PARAM_DATE has no time of day (use STAUNCH_PARAM_DATETIME)",
                ));
            }
        }
        STAUNCH_PARAM_TIME => {
            let t = &p.time;
            // Read the flag as a byte: C may have stored any value there.
            // SAFETY: `negative` is one initialized byte of a live struct.
            let negative = unsafe { std::ptr::addr_of!(t.negative).cast::<u8>().read() } != 0;
            let v = Param::Time(
                negative,
                t.days,
                t.hours,
                t.minutes,
                t.seconds,
                t.microseconds,
            );
            if let Some(why) = v.fault() {
                return Err(out_of_range(i, &why));
            }
            v
        }
        other => {
            return Err(Failure::new(
                STAUNCH_BAD_PARAM_TYPE,
                format!("params[{i}] has unknown type {other} (see STAUNCH_PARAM_*)"),
            ))
        }
    })
}

/// A statement's converted parameters: a few held inline, so that a
/// statement with up to 4 costs no allocation for them.
pub(crate) type Params = smallvec::SmallVec<[Param; 4]>;

/// Reads and converts the C parameter array.
///
/// # Safety
/// `params` is NULL or points to `n` initialized `staunch_param`s whose
/// text/bytes pointers are valid for their lengths (header contract).
pub(crate) unsafe fn to_params(params: *const staunch_param, n: usize) -> Result<Params, Failure> {
    if n == 0 {
        return Ok(Params::new());
    }
    if params.is_null() {
        return Err(Failure::null(&format!("params (with n_params {n})")));
    }
    // SAFETY: per this function's contract.
    let ps = unsafe { std::slice::from_raw_parts(params, n) };
    ps.iter()
        .enumerate()
        // SAFETY: per this function's contract.
        .map(|(i, p)| unsafe { to_param(i, p) })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use mysql_common::value::Value;

    fn param(t: staunch_param_type) -> staunch_param {
        staunch_param::of(t)
    }

    fn conv(p: &staunch_param) -> Result<Value, Failure> {
        // SAFETY: test params point to live data.
        unsafe { to_param(0, p) }.map(|p| p.to_value())
    }

    #[test]
    fn every_param_type_converts() {
        assert_eq!(conv(&param(STAUNCH_PARAM_NULL)).unwrap(), Value::NULL);
        let mut p = param(STAUNCH_PARAM_INT64);
        p.i64 = i64::MIN;
        assert_eq!(conv(&p).unwrap(), Value::Int(i64::MIN));
        let mut p = param(STAUNCH_PARAM_UINT64);
        p.u64 = u64::MAX;
        assert_eq!(conv(&p).unwrap(), Value::UInt(u64::MAX));
        let mut p = param(STAUNCH_PARAM_DOUBLE);
        p.f64 = -0.5;
        assert_eq!(conv(&p).unwrap(), Value::Double(-0.5));
        let text = "h\u{e9}llo";
        let mut p = param(STAUNCH_PARAM_TEXT);
        p.ptr = text.as_ptr().cast();
        p.len = text.len();
        assert_eq!(conv(&p).unwrap(), Value::Bytes(text.as_bytes().to_vec()));
        let bin = [0u8, 0xff, 0];
        let mut p = param(STAUNCH_PARAM_BYTES);
        p.ptr = bin.as_ptr().cast();
        p.len = bin.len();
        assert_eq!(conv(&p).unwrap(), Value::Bytes(bin.to_vec()));
        // Empty data may come with a NULL pointer.
        assert_eq!(
            conv(&param(STAUNCH_PARAM_BYTES)).unwrap(),
            Value::Bytes(Vec::new())
        );
        let mut p = param(STAUNCH_PARAM_DATETIME);
        p.datetime = staunch_datetime {
            year: 2024,
            month: 2,
            day: 29,
            hour: 23,
            minute: 59,
            second: 58,
            microsecond: 123_456,
        };
        assert_eq!(
            conv(&p).unwrap(),
            Value::Date(2024, 2, 29, 23, 59, 58, 123_456)
        );
        let mut p = param(STAUNCH_PARAM_TIME);
        p.time = staunch_time {
            negative: true,
            days: 34,
            hours: 22,
            minutes: 59,
            seconds: 59,
            microseconds: 0,
        };
        assert_eq!(conv(&p).unwrap(), Value::Time(true, 34, 22, 59, 59, 0));
    }

    #[test]
    fn bad_params_fail_with_their_status() {
        let bad = [b'a', 0xff];
        let mut p = param(STAUNCH_PARAM_TEXT);
        p.ptr = bad.as_ptr().cast();
        p.len = bad.len();
        assert_eq!(conv(&p).unwrap_err().status, STAUNCH_INVALID_UTF8);
        let mut p = param(STAUNCH_PARAM_BYTES);
        p.len = 3;
        assert_eq!(conv(&p).unwrap_err().status, STAUNCH_NULL_ARGUMENT);
        assert_eq!(conv(&param(77)).unwrap_err().status, STAUNCH_BAD_PARAM_TYPE);
        let mut p = param(STAUNCH_PARAM_DATETIME);
        p.datetime.month = 13;
        let e = conv(&p).unwrap_err();
        assert_eq!(e.status, STAUNCH_OUT_OF_RANGE);
        assert!(e.message.contains("month 13"), "{}", e.message);
        let mut p = param(STAUNCH_PARAM_DATE);
        p.datetime.hour = 1;
        assert_eq!(conv(&p).unwrap_err().status, STAUNCH_OUT_OF_RANGE);
        let mut p = param(STAUNCH_PARAM_TIME);
        p.time.minutes = 60;
        assert_eq!(conv(&p).unwrap_err().status, STAUNCH_OUT_OF_RANGE);
        // 34 days and 23 hours is 839 hours: past a TIME's 838:59:59.
        let mut p = param(STAUNCH_PARAM_TIME);
        (p.time.days, p.time.hours) = (34, 23);
        let e = conv(&p).unwrap_err();
        assert_eq!(e.status, STAUNCH_OUT_OF_RANGE);
        assert!(e.message.contains("839:00:00"), "{}", e.message);
        // SAFETY: NULL with a count is exactly what is being rejected.
        let e = unsafe { to_params(std::ptr::null(), 2) }.unwrap_err();
        assert_eq!(e.status, STAUNCH_NULL_ARGUMENT);
    }

    #[test]
    fn decimals_are_checked_and_name_their_parameter() {
        let ok = "-1234567890123456789.01";
        let p = staunch_param_decimal(ok.as_ptr().cast(), ok.len());
        // SAFETY: points to live data.
        let got = unsafe { to_param(0, &p) }.unwrap();
        assert_eq!(got, Param::Decimal(ok.parse().unwrap()));
        for bad in ["1e5", "", "12a", " 1", "0x1", "1.2.3"] {
            let p = staunch_param_decimal(bad.as_ptr().cast(), bad.len());
            // SAFETY: points to live data.
            let e = unsafe { to_param(4, &p) }.unwrap_err();
            assert_eq!(e.status, STAUNCH_INVALID_ARGUMENT, "{bad:?}");
            assert!(
                e.message.starts_with("params[4] (STAUNCH_PARAM_DECIMAL)"),
                "{}",
                e.message
            );
        }
        let bad = [0xffu8, b'1'];
        let p = staunch_param_decimal(bad.as_ptr().cast(), 2);
        // SAFETY: points to live data.
        assert_eq!(
            unsafe { to_param(0, &p) }.unwrap_err().status,
            STAUNCH_INVALID_ARGUMENT
        );
    }

    #[test]
    fn builders_match_the_fields_and_the_layout_is_fixed() {
        assert_eq!(staunch_param_i64(-3).i64, -3);
        assert_eq!(staunch_param_u64(7).r#type, STAUNCH_PARAM_UINT64);
        let t = std::ffi::CString::new("h\u{e9}").unwrap();
        let p = staunch_param_text(t.as_ptr());
        assert_eq!((p.r#type, p.len), (STAUNCH_PARAM_TEXT, 3));
        assert_eq!(
            staunch_param_text(std::ptr::null()).r#type,
            STAUNCH_PARAM_NULL
        );
        let d = staunch_param_date(2024, 2, 29);
        assert_eq!(conv(&d).unwrap(), Value::Date(2024, 2, 29, 0, 0, 0, 0));
        if cfg!(target_pointer_width = "64") {
            assert_eq!(std::mem::size_of::<staunch_param>(), 96);
            assert_eq!(std::mem::size_of::<staunch_value>(), 96);
        }
        assert_eq!(std::mem::align_of::<staunch_param>(), 8);
    }
}
