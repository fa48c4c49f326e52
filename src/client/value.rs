//! Statement parameters as staunch sends them: [`Param`], with the kinds
//! the `mysql` crate's `Value` cannot tell apart (text from bytes, a decimal
//! from text, a date from a date-time), and [`Decimal`], an exact decimal
//! number in text form.

use std::fmt;
use std::str::FromStr;

#[cfg(any(test, feature = "fuzzing"))]
use mysql_common::value::Value;

/// One statement parameter, bound to a `?` placeholder.
///
/// Each kind keeps its SQL type on both ways a statement can be sent
/// (prepared, or interpolated by staunch as a literal): a `Decimal` is an
/// exact DECIMAL, `Bytes` a binary string, `Date` a DATE, `DateTime` a
/// DATETIME with microseconds, `Time` a TIME.
#[derive(Clone, Debug, PartialEq)]
pub enum Param {
    /// SQL NULL.
    Null,
    /// A signed integer.
    Int(i64),
    /// An unsigned integer.
    UInt(u64),
    /// A DOUBLE (NaN and infinities cannot be interpolated).
    Double(f64),
    /// Text (in the connection's character set, utf8mb4).
    Text(String),
    /// Binary data, never checked or converted as text.
    Bytes(Vec<u8>),
    /// An exact DECIMAL.
    Decimal(Decimal),
    /// A DATE: year, month, day.
    Date(u16, u8, u8),
    /// A DATETIME: year, month, day, hour, minute, second, microsecond.
    DateTime(u16, u8, u8, u8, u8, u8, u32),
    /// A TIME: negative, days, hours, minutes, seconds, microseconds.
    Time(bool, u32, u8, u8, u8, u32),
}

impl Param {
    /// The value the binary protocol sends for it (a prepared statement's
    /// placeholders are cast where the type needs it: see
    /// `sql::cast_for_prepare`).
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn to_value(&self) -> Value {
        match self {
            Param::Null => Value::NULL,
            Param::Int(v) => Value::Int(*v),
            Param::UInt(v) => Value::UInt(*v),
            Param::Double(v) => Value::Double(*v),
            Param::Text(s) => Value::Bytes(s.as_bytes().to_vec()),
            Param::Bytes(b) => Value::Bytes(b.clone()),
            Param::Decimal(d) => Value::Bytes(d.literal().as_bytes().to_vec()),
            &Param::Date(y, m, d) => Value::Date(y, m, d, 0, 0, 0, 0),
            &Param::DateTime(y, mo, d, h, mi, s, us) => Value::Date(y, mo, d, h, mi, s, us),
            &Param::Time(n, d, h, m, s, us) => Value::Time(n, d, h, m, s, us),
        }
    }

    /// About how long its literal is, to size the interpolated statement.
    pub(crate) fn literal_len_hint(&self) -> usize {
        match self {
            Param::Text(s) => s.len() + 2,
            Param::Bytes(b) => 2 * b.len() + 11,
            Param::Decimal(d) => d.literal().len(),
            _ => 32,
        }
    }
}

impl Param {
    /// Why this value cannot be sent as the kind it is, if it cannot: a
    /// date, date-time or time outside what MySQL and MariaDB store (each field
    /// at most its calendar maximum; a TIME within ±838:59:59.999999). Every way a statement is
    /// sent checks its parameters with this before anything is sent.
    pub fn fault(&self) -> Option<String> {
        match *self {
            Param::Date(y, mo, d) => date_time_fault(y, mo, d, 0, 0, 0, 0),
            Param::DateTime(y, mo, d, h, mi, s, us) => date_time_fault(y, mo, d, h, mi, s, us),
            Param::Time(_, days, h, mi, s, us) => time_fault(days, h, mi, s, us),
            _ => None,
        }
    }
}

/// Why a date-time is outside what a DATETIME stores, naming the field:
/// each field at most its calendar maximum (year 9999, month 12, day 31,
/// hour 23, minute and second 59, microsecond 999,999). Zeros pass (the
/// zero date is the server's to accept or refuse under its `sql_mode`),
/// and so does a day past its month's end (the same).
#[allow(clippy::too_many_arguments)]
pub(crate) fn date_time_fault(
    year: u16,
    month: u8,
    day: u8,
    hour: u8,
    minute: u8,
    second: u8,
    micros: u32,
) -> Option<String> {
    let checks = [
        (u32::from(year), 9999, "year"),
        (u32::from(month), 12, "month"),
        (u32::from(day), 31, "day"),
        (u32::from(hour), 23, "hour"),
        (u32::from(minute), 59, "minute"),
        (u32::from(second), 59, "second"),
        (micros, 999_999, "microsecond"),
    ];
    checks
        .into_iter()
        .find(|&(v, max, _)| v > max)
        .map(|(v, max, name)| format!("{name} {v} is above {max}"))
}

/// Why a time is outside a TIME's range, -838:59:59.999999 to
/// 838:59:59.999999: `days * 24 + hours` at most 838 (so days at most 34),
/// hours at most 23, minutes and seconds 59, microseconds 999,999.
pub(crate) fn time_fault(
    days: u32,
    hours: u8,
    minutes: u8,
    seconds: u8,
    micros: u32,
) -> Option<String> {
    let checks = [
        (u32::from(hours), 23, "hours"),
        (u32::from(minutes), 59, "minutes"),
        (u32::from(seconds), 59, "seconds"),
        (micros, 999_999, "microseconds"),
        (days, 34, "days"),
    ];
    if let Some((v, max, name)) = checks.into_iter().find(|&(v, max, _)| v > max) {
        return Some(format!("time {name} {v} is above {max}"));
    }
    let total = days * 24 + u32::from(hours);
    (total > 838).then(|| {
        format!("time {total}:{minutes:02}:{seconds:02} is above 838:59:59, the most a TIME holds")
    })
}

macro_rules! from_int {
    ($($t:ty => $v:ident),*) => {$(
        impl From<$t> for Param {
            fn from(v: $t) -> Param {
                Param::$v(v.into())
            }
        }
    )*};
}
from_int!(i8 => Int, i16 => Int, i32 => Int, i64 => Int, u8 => UInt, u16 => UInt, u32 => UInt, u64 => UInt);

impl From<f64> for Param {
    fn from(v: f64) -> Param {
        Param::Double(v)
    }
}

impl From<&str> for Param {
    fn from(v: &str) -> Param {
        Param::Text(v.to_owned())
    }
}

impl From<String> for Param {
    fn from(v: String) -> Param {
        Param::Text(v)
    }
}

impl From<&[u8]> for Param {
    fn from(v: &[u8]) -> Param {
        Param::Bytes(v.to_vec())
    }
}

impl From<Vec<u8>> for Param {
    fn from(v: Vec<u8>) -> Param {
        Param::Bytes(v)
    }
}

impl From<Decimal> for Param {
    fn from(v: Decimal) -> Param {
        Param::Decimal(v)
    }
}

impl<T: Into<Param>> From<Option<T>> for Param {
    fn from(v: Option<T>) -> Param {
        v.map_or(Param::Null, Into::into)
    }
}

/// The most digits a DECIMAL holds (MariaDB and MySQL).
const DECIMAL_MAX_DIGITS: usize = 65;
/// The most digits after the point a DECIMAL holds (MariaDB; MySQL holds
/// 30 and refuses more with its own error).
const DECIMAL_MAX_SCALE: usize = 38;

/// An exact decimal number, as text: an optional sign, digits, and an
/// optional point with digits after it (`-12.50`, `+7`, `.5`, `3.`), no
/// exponent, at most 65 digits (leading zeros not counted) of which at most
/// 38 after the point. Bound as a parameter it is a DECIMAL on the server,
/// exact in arithmetic, comparison and storage.
///
/// ```
/// let d: staunch::Decimal = "1234567890123456789.01".parse().unwrap();
/// assert_eq!((d.precision(), d.scale()), (21, 2));
/// assert!("1e5".parse::<staunch::Decimal>().is_err());
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Decimal {
    /// The canonical literal: `-` if negative, the digits (at least one
    /// before the point), `.` and the fraction digits if any.
    literal: String,
    precision: u8,
    scale: u8,
}

/// Why a text is not a [`Decimal`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecimalError(String);

impl fmt::Display for DecimalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DecimalError {}

impl Decimal {
    /// Checks `s` (see the type's doc). The error says what is wrong
    /// without repeating more than the first 40 characters of `s`.
    pub fn parse(s: &str) -> Result<Decimal, DecimalError> {
        let shown: String = s.chars().take(40).collect();
        let more = if s.chars().count() > 40 { "..." } else { "" };
        let bad = |why: &str| {
            DecimalError(format!(
                "{shown:?}{more} is not a decimal number ({why}; expected [+-]digits[.digits])"
            ))
        };
        let (negative, body) = match s.as_bytes().first() {
            Some(b'-') => (true, &s[1..]),
            Some(b'+') => (false, &s[1..]),
            Some(_) => (false, s),
            None => return Err(bad("empty")),
        };
        let (int, frac) = match body.split_once('.') {
            Some((i, f)) => (i, Some(f)),
            None => (body, None),
        };
        let frac_digits = frac.unwrap_or("");
        if int.is_empty() && frac_digits.is_empty() {
            return Err(bad("no digits"));
        }
        if let Some(c) = int
            .chars()
            .chain(frac_digits.chars())
            .find(|c| !c.is_ascii_digit())
        {
            return Err(bad(&format!("{c:?} is not a digit")));
        }
        let int = int.trim_start_matches('0');
        let scale = frac_digits.len();
        let precision = (int.len() + scale).max(1);
        if scale > DECIMAL_MAX_SCALE {
            return Err(bad(&format!(
                "{scale} digits after the point; a DECIMAL keeps at most {DECIMAL_MAX_SCALE}"
            )));
        }
        if precision > DECIMAL_MAX_DIGITS {
            return Err(bad(&format!(
                "{precision} digits; a DECIMAL holds at most {DECIMAL_MAX_DIGITS}"
            )));
        }
        let mut literal = String::with_capacity(precision + 3);
        if negative {
            literal.push('-');
        }
        literal.push_str(if int.is_empty() { "0" } else { int });
        if scale > 0 {
            literal.push('.');
            literal.push_str(frac_digits);
        }
        Ok(Decimal {
            literal,
            // Both at most 65.
            precision: precision as u8,
            scale: scale as u8,
        })
    }

    /// The number as a SQL literal (`-0.01`, `15.7563`, `7`).
    pub fn literal(&self) -> &str {
        &self.literal
    }

    /// Its digits, leading zeros not counted (at least 1): the `p` of
    /// `DECIMAL(p,s)`.
    pub fn precision(&self) -> u8 {
        self.precision.max(self.scale).max(1)
    }

    /// Its digits after the point: the `s` of `DECIMAL(p,s)`.
    pub fn scale(&self) -> u8 {
        self.scale
    }
}

impl FromStr for Decimal {
    type Err = DecimalError;
    fn from_str(s: &str) -> Result<Decimal, DecimalError> {
        Decimal::parse(s)
    }
}

impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.literal)
    }
}

impl fmt::Debug for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Decimal({})", self.literal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_times_are_checked_to_their_kinds_edges() {
        let ok = [
            Param::Date(0, 0, 0),
            Param::Date(9999, 12, 31),
            Param::DateTime(9999, 12, 31, 23, 59, 59, 999_999),
            Param::Time(true, 34, 22, 59, 59, 999_999),
            Param::Time(false, 0, 23, 0, 0, 0),
            Param::Int(i64::MAX),
        ];
        for p in ok {
            assert_eq!(p.fault(), None, "{p:?}");
        }
        let bad = [
            (Param::Date(10_000, 1, 1), "year 10000 is above 9999"),
            (Param::Date(2020, 1, 32), "day 32 is above 31"),
            (
                Param::DateTime(2020, 1, 1, 0, 60, 0, 0),
                "minute 60 is above 59",
            ),
            (
                Param::DateTime(2020, 1, 1, 0, 0, 0, 1_000_000),
                "microsecond 1000000",
            ),
            (
                Param::Time(false, 34, 23, 0, 0, 0),
                "time 839:00:00 is above 838:59:59",
            ),
            (
                Param::Time(true, 0, 24, 0, 0, 0),
                "time hours 24 is above 23",
            ),
            (
                Param::Time(true, 0, 0, 0, 60, 0),
                "time seconds 60 is above 59",
            ),
        ];
        for (p, why) in bad {
            let got = p.fault().unwrap_or_default();
            assert!(got.contains(why), "{p:?}: {got}");
        }
    }

    fn d(s: &str) -> (String, u8, u8) {
        let d = Decimal::parse(s).unwrap();
        (d.literal().to_owned(), d.precision(), d.scale())
    }

    #[test]
    fn decimals_are_validated_and_sized() {
        assert_eq!(d("15.7563"), ("15.7563".into(), 6, 4));
        assert_eq!(d("-0.01"), ("-0.01".into(), 2, 2));
        assert_eq!(d("+007"), ("7".into(), 1, 0));
        assert_eq!(d(".5"), ("0.5".into(), 1, 1));
        assert_eq!(d("3."), ("3".into(), 1, 0));
        assert_eq!(d("0"), ("0".into(), 1, 0));
        assert_eq!(d("-0.000"), ("-0.000".into(), 3, 3));
        assert_eq!(
            d("1234567890123456789.01"),
            ("1234567890123456789.01".into(), 21, 2)
        );
        let max = "9".repeat(27) + "." + &"9".repeat(38);
        assert_eq!(d(&max).1, 65);
        for bad in [
            "", "-", "+", ".", "1e5", "1.2.3", " 1", "1 ", "0x10", "NaN", "inf", "١", "--1", "1,5",
        ] {
            let e = Decimal::parse(bad).unwrap_err().to_string();
            assert!(e.contains("is not a decimal number"), "{bad:?}: {e}");
        }
        let e = Decimal::parse(&("1".repeat(66))).unwrap_err().to_string();
        assert!(e.contains("66 digits") && e.contains("..."), "{e}");
        let e = Decimal::parse(&format!("0.{}", "1".repeat(39))).unwrap_err();
        assert!(e.to_string().contains("39 digits after the point"), "{e}");
    }

    #[test]
    fn params_convert_for_the_binary_protocol() {
        assert_eq!(Param::from(Some(3i32)).to_value(), Value::Int(3));
        assert_eq!(Param::from(None::<i64>).to_value(), Value::NULL);
        assert_eq!(
            Param::Date(2012, 10, 15).to_value(),
            Value::Date(2012, 10, 15, 0, 0, 0, 0)
        );
        assert_eq!(
            Param::Decimal("-.5".parse().unwrap()).to_value(),
            Value::Bytes(b"-0.5".to_vec())
        );
    }
}
