//! The answer to a statement as every face reads it: result sets, each with
//! its columns (metadata and the kind of value each holds), rows of typed
//! cells and what its closing packet said.
//!
//! Values of the text protocol arrive as text and are typed here by their
//! column, so that a face reads the same cell whichever way the statement
//! was sent (see `statement.rs`). Byte strings keep a trailing NUL that
//! their length excludes, so a face can lend text to C as a C string
//! without a copy.

use std::borrow::Cow;
use std::collections::VecDeque;

use mysql_common::constants::{ColumnFlags, ColumnType};
use mysql_common::packets::Column;
use mysql_common::value::Value;

use crate::wire::{
    status, BinaryColumns, BinaryNext, ColumnDef, Columns, Framer, Next, OkInfo, Response, TextRow,
    WireError,
};

/// The kind of value a result column holds, from the server's column
/// metadata. The numbers are the C ABI's `STAUNCH_COLUMN_*`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum Kind {
    /// Always NULL (`SELECT NULL`).
    Null = 0,
    /// Signed integers (TINYINT to BIGINT, YEAR).
    Int = 1,
    /// UNSIGNED integers.
    UInt = 2,
    /// FLOAT and DOUBLE.
    Double = 3,
    /// DECIMAL: exact, as text.
    Decimal = 4,
    /// Character data (CHAR, VARCHAR, TEXT, ENUM, SET, JSON).
    Text = 5,
    /// Binary data (BINARY, VARBINARY, BLOB, BIT, GEOMETRY).
    Bytes = 6,
    /// DATE.
    Date = 7,
    /// DATETIME and TIMESTAMP.
    DateTime = 8,
    /// TIME.
    Time = 9,
}

/// The binary collation: a string column with it holds bytes, not text.
const BINARY_CHARSET: u16 = 63;

impl Kind {
    /// The kind of column `c`.
    #[cfg(feature = "fuzzing")]
    pub(crate) fn of(c: &Column) -> Kind {
        Kind::of_parts(c.column_type(), c.flags(), c.character_set())
    }

    /// The kind of a column of the protocol's type number `t` (an unknown
    /// number holds bytes).
    pub(crate) fn of_def(t: u8, flags: u16, charset: u16) -> Kind {
        match ColumnType::try_from(t) {
            Ok(t) => Kind::of_parts(t, ColumnFlags::from_bits_truncate(flags), charset),
            Err(_) => Kind::Bytes,
        }
    }

    fn of_parts(t: ColumnType, flags: ColumnFlags, charset: u16) -> Kind {
        use ColumnType::*;
        let unsigned = flags.contains(ColumnFlags::UNSIGNED_FLAG);
        match t {
            MYSQL_TYPE_NULL => Kind::Null,
            MYSQL_TYPE_TINY | MYSQL_TYPE_SHORT | MYSQL_TYPE_LONG | MYSQL_TYPE_LONGLONG
            | MYSQL_TYPE_INT24 | MYSQL_TYPE_YEAR => {
                if unsigned {
                    Kind::UInt
                } else {
                    Kind::Int
                }
            }
            MYSQL_TYPE_FLOAT | MYSQL_TYPE_DOUBLE => Kind::Double,
            MYSQL_TYPE_DECIMAL | MYSQL_TYPE_NEWDECIMAL => Kind::Decimal,
            MYSQL_TYPE_DATE | MYSQL_TYPE_NEWDATE => Kind::Date,
            MYSQL_TYPE_DATETIME
            | MYSQL_TYPE_DATETIME2
            | MYSQL_TYPE_TIMESTAMP
            | MYSQL_TYPE_TIMESTAMP2 => Kind::DateTime,
            MYSQL_TYPE_TIME | MYSQL_TYPE_TIME2 => Kind::Time,
            // MySQL's JSON travels with the binary collation, but it is text
            // (UTF-8, utf8mb4).
            MYSQL_TYPE_JSON => Kind::Text,
            MYSQL_TYPE_VARCHAR
            | MYSQL_TYPE_VAR_STRING
            | MYSQL_TYPE_STRING
            | MYSQL_TYPE_TINY_BLOB
            | MYSQL_TYPE_MEDIUM_BLOB
            | MYSQL_TYPE_LONG_BLOB
            | MYSQL_TYPE_BLOB
            | MYSQL_TYPE_ENUM
            | MYSQL_TYPE_SET => {
                if charset == BINARY_CHARSET {
                    Kind::Bytes
                } else {
                    Kind::Text
                }
            }
            _ => Kind::Bytes,
        }
    }

    /// The kind with C ABI number `n`, if there is one.
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn from_number(n: u32) -> Option<Kind> {
        Some(match n {
            0 => Kind::Null,
            1 => Kind::Int,
            2 => Kind::UInt,
            3 => Kind::Double,
            4 => Kind::Decimal,
            5 => Kind::Text,
            6 => Kind::Bytes,
            7 => Kind::Date,
            8 => Kind::DateTime,
            9 => Kind::Time,
            _ => return None,
        })
    }

    /// Its name in messages.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Null => "NULL",
            Kind::Int => "INT",
            Kind::UInt => "UINT",
            Kind::Double => "DOUBLE",
            Kind::Decimal => "DECIMAL",
            Kind::Text => "TEXT",
            Kind::Bytes => "BYTES",
            Kind::Date => "DATE",
            Kind::DateTime => "DATETIME",
            Kind::Time => "TIME",
        }
    }
}

/// `b` with a NUL after it.
pub(crate) fn nul_terminated(b: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(b.len() + 1);
    v.extend_from_slice(b);
    v.push(0);
    v
}

/// A server's info string, NUL-terminated: the empty one (most statements
/// have none) is a static `"\0"`, not an allocation per result set.
pub(crate) type Info = Cow<'static, [u8]>;

/// `b` as an [`Info`].
pub(crate) fn info_of(b: &[u8]) -> Info {
    if b.is_empty() {
        Cow::Borrowed(b"\0")
    } else {
        Cow::Owned(nul_terminated(b))
    }
}

/// One column: its metadata, the strings NUL-terminated. Cheap to clone
/// (the strings are shared).
#[derive(Clone)]
pub(crate) struct Col {
    /// The name, original name, table, original table and schema, each
    /// followed by a NUL, one after the other in one allocation (one per
    /// column, not five), shared by the clones (see [`ColumnMemo`]).
    text: std::sync::Arc<[u8]>,
    /// Where each of the five strings ends in `text` (its NUL included).
    ends: [u32; 5],
    pub(crate) kind: Kind,
    /// The server's own type code, flags, character set, length and
    /// decimals.
    pub(crate) type_code: u32,
    pub(crate) flags: u32,
    pub(crate) charset: u32,
    pub(crate) length: u32,
    pub(crate) decimals: u32,
}

impl Col {
    /// The column as `mysql_common` describes it.
    pub(crate) fn to_column(&self) -> Column {
        // Without the NUL each of them carries here.
        let bare = |b: &[u8]| b.strip_suffix(&[0]).unwrap_or(b).to_vec();
        Column::new(
            ColumnType::try_from(self.type_code as u8).unwrap_or(ColumnType::MYSQL_TYPE_STRING),
        )
        .with_name(&bare(self.name()))
        .with_org_name(&bare(self.org_name()))
        .with_table(&bare(self.table()))
        .with_org_table(&bare(self.org_table()))
        .with_schema(&bare(self.schema()))
        .with_flags(ColumnFlags::from_bits_truncate(self.flags as u16))
        .with_character_set(self.charset as u16)
        .with_column_length(self.length)
        .with_decimals(self.decimals as u8)
    }

    /// A column as the protocol layer read it (`src/wire`).
    pub(crate) fn of_def(d: &ColumnDef<'_>) -> Col {
        let mut col = Col::strings([d.name, d.org_name, d.table, d.org_table, d.schema]);
        col.kind = Kind::of_def(d.column_type, d.flags, d.charset);
        col.type_code = u32::from(d.column_type);
        col.flags = u32::from(d.flags);
        col.charset = u32::from(d.charset);
        col.length = d.length;
        col.decimals = u32::from(d.decimals);
        col
    }

    /// A column of these five strings (name, original name, table, original
    /// table, schema), the rest zero.
    fn strings(parts: [&[u8]; 5]) -> Col {
        let mut text = Vec::with_capacity(parts.iter().map(|p| p.len() + 1).sum());
        let mut ends = [0u32; 5];
        for (end, p) in ends.iter_mut().zip(parts) {
            text.extend_from_slice(p);
            text.push(0);
            // A column definition's strings are length-prefixed inside one
            // packet (< 16 MiB each): their sum fits a u32.
            *end = u32::try_from(text.len()).unwrap_or(u32::MAX);
        }
        Col {
            text: text.into(),
            ends,
            kind: Kind::Bytes,
            type_code: 0,
            flags: 0,
            charset: 0,
            length: 0,
            decimals: 0,
        }
    }

    /// String `i` of `text`, with its NUL.
    fn part(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.text[start..self.ends[i] as usize]
    }

    /// The column's name (its alias), NUL-terminated.
    pub(crate) fn name(&self) -> &[u8] {
        self.part(0)
    }

    /// The column's original name, NUL-terminated.
    pub(crate) fn org_name(&self) -> &[u8] {
        self.part(1)
    }

    /// The table's name (its alias), NUL-terminated.
    pub(crate) fn table(&self) -> &[u8] {
        self.part(2)
    }

    /// The table's original name, NUL-terminated.
    pub(crate) fn org_table(&self) -> &[u8] {
        self.part(3)
    }

    /// The table's database, NUL-terminated.
    pub(crate) fn schema(&self) -> &[u8] {
        self.part(4)
    }

    /// A column known only by name and kind (tests, fuzzing).
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn named(name: &[u8], kind: Kind) -> Col {
        let mut col = Col::strings([name, b"", b"", b"", b""]);
        col.kind = kind;
        col
    }

    /// Its name, for messages.
    pub(crate) fn name_lossy(&self) -> String {
        let n = self.name();
        String::from_utf8_lossy(&n[..n.len() - 1]).into_owned()
    }
}

/// A DATE, DATETIME or TIMESTAMP value (DATE: the time fields are 0; zero
/// dates are zeros).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DateTime {
    pub(crate) year: u16,
    pub(crate) month: u8,
    pub(crate) day: u8,
    pub(crate) hour: u8,
    pub(crate) minute: u8,
    pub(crate) second: u8,
    pub(crate) microsecond: u32,
}

/// A TIME value: a signed duration, `days * 24 + hours` hours.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Time {
    pub(crate) negative: bool,
    pub(crate) days: u32,
    pub(crate) hours: u8,
    pub(crate) minutes: u8,
    pub(crate) seconds: u8,
    pub(crate) microseconds: u32,
}

/// One value. A byte string lives in its set's arena (`Set::bytes`):
/// `len` bytes from `at`, followed by a NUL that the length excludes. One
/// arena per set rather than one allocation per string: a row is read
/// without allocating (the arena and the cells grow by doubling).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Cell {
    Null,
    Int(i64),
    UInt(u64),
    Double(f64),
    Bytes { at: usize, len: usize },
    Date(DateTime),
    Time(Time),
}

/// Appends `b` and a NUL to `arena`: the cell that names them.
#[inline]
pub(crate) fn stash(arena: &mut Vec<u8>, b: &[u8]) -> Cell {
    let at = arena.len();
    if arena.capacity() - at <= b.len() {
        // Doubling, from 64 bytes: the few short strings of a row or two
        // take one allocation, not one per string.
        arena.reserve((b.len() + 1).max(at).max(64));
    }
    arena.extend_from_slice(b);
    arena.push(0);
    Cell::Bytes { at, len: b.len() }
}

/// A byte string cell's bytes in `arena` with the NUL after them (what a
/// pointer handed to C must be taken from, so that the NUL is within what
/// it may read); just a NUL for any other cell.
#[inline]
pub(crate) fn bytes_with_nul<'a>(arena: &'a [u8], cell: &Cell) -> &'a [u8] {
    match *cell {
        Cell::Bytes { at, len } => arena.get(at..at + len + 1).unwrap_or(b"\0"),
        _ => b"\0",
    }
}

/// A byte string cell's bytes in `arena` (without the NUL after them);
/// empty for any other cell.
#[inline]
pub(crate) fn bytes_of<'a>(arena: &'a [u8], cell: &Cell) -> &'a [u8] {
    match *cell {
        Cell::Bytes { at, len } => arena.get(at..at + len).unwrap_or_default(),
        _ => &[],
    }
}

impl Cell {
    /// A value of the binary protocol (typed by the server), as
    /// `mysql_common` holds it.
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn from_value(v: Value, arena: &mut Vec<u8>) -> Cell {
        match v {
            Value::NULL => Cell::Null,
            Value::Int(i) => Cell::Int(i),
            Value::UInt(u) => Cell::UInt(u),
            Value::Float(f) => Cell::Double(f64::from(f)),
            Value::Double(d) => Cell::Double(d),
            Value::Bytes(b) => stash(arena, &b),
            Value::Date(year, month, day, hour, minute, second, microsecond) => {
                Cell::Date(DateTime {
                    year,
                    month,
                    day,
                    hour,
                    minute,
                    second,
                    microsecond,
                })
            }
            Value::Time(negative, days, hours, minutes, seconds, microseconds) => {
                Cell::Time(Time {
                    negative,
                    days,
                    hours,
                    minutes,
                    seconds,
                    microseconds,
                })
            }
        }
    }

    /// A value of the text protocol, where every value is text: typed by
    /// its column, so that it reads as from a prepared statement. Text that
    /// does not parse as the column's kind stays bytes.
    #[cfg(test)]
    pub(crate) fn from_text(v: Value, kind: Kind, arena: &mut Vec<u8>) -> Cell {
        let Value::Bytes(b) = v else {
            return Cell::from_value(v, arena);
        };
        Cell::typed(&b, kind).unwrap_or_else(|| stash(arena, &b))
    }

    /// [`from_text`](Cell::from_text) for a cell the protocol layer lends
    /// (`src/wire`): a string is copied once, with its NUL.
    #[inline]
    pub(crate) fn from_text_slice(b: &[u8], kind: Kind, arena: &mut Vec<u8>) -> Cell {
        Cell::typed(b, kind).unwrap_or_else(|| stash(arena, b))
    }

    /// A text-protocol value as its column's kind, or None where it stays
    /// bytes (text, DECIMAL, bytes, or text that does not parse as the
    /// kind).
    fn typed(b: &[u8], kind: Kind) -> Option<Cell> {
        // The server's own forms of dates and times, read byte by byte: the
        // general parser below gives the same answer for them, at several
        // times the cost (it splits strings).
        let fast = match kind {
            Kind::Date | Kind::DateTime => server_datetime(b).map(Cell::Date),
            Kind::Time => server_time(b).map(Cell::Time),
            // Integers as the server writes them (a `-` and at most 18 digits,
            // or 19 digits unsigned: no overflow possible), without the UTF-8
            // check and the general parser; anything else goes below.
            Kind::Int => match b.split_first() {
                Some((b'-', rest)) if rest.len() <= 18 => {
                    all_digits(rest).map(|n| Cell::Int(-(n as i64)))
                }
                _ if b.len() <= 18 => all_digits(b).map(|n| Cell::Int(n as i64)),
                _ => None,
            },
            Kind::UInt if b.len() <= 19 => all_digits(b).map(Cell::UInt),
            Kind::UInt | Kind::Double => None,
            // Text, DECIMAL and bytes stay as they came: no UTF-8 check here
            // (the text getters check when asked).
            _ => return None,
        };
        if fast.is_some() {
            return fast;
        }
        let s = std::str::from_utf8(b).ok()?;
        match kind {
            Kind::Int => s.parse().ok().map(Cell::Int),
            Kind::UInt => s.parse().ok().map(Cell::UInt),
            Kind::Double => s.parse().ok().map(Cell::Double),
            Kind::Date | Kind::DateTime => parse_datetime(s).map(Cell::Date),
            Kind::Time => parse_time(s).map(Cell::Time),
            _ => None,
        }
    }

    /// The cell as a column of `kind` reads it: an integer tagged by its
    /// column where the value fits (a decoder may give a small BIGINT
    /// UNSIGNED as signed, or an unsigned value in a signed column).
    #[inline]
    pub(crate) fn read_as(self, kind: Kind) -> Cell {
        match (self, kind) {
            (Cell::Int(i), Kind::UInt) if i >= 0 => Cell::UInt(i as u64),
            (Cell::UInt(u), Kind::Int) if u <= i64::MAX as u64 => Cell::Int(u as i64),
            (c, _) => c,
        }
    }

    /// What it holds, for messages.
    pub(crate) fn what(&self) -> &'static str {
        match self {
            Cell::Null => "NULL",
            Cell::Int(_) => "a signed integer",
            Cell::UInt(_) => "an unsigned integer",
            Cell::Double(_) => "a double",
            Cell::Bytes { .. } => "a string",
            Cell::Date(_) => "a date/datetime",
            Cell::Time(_) => "a time",
        }
    }
}

/// The decimal number of `b`, all ASCII digits (at most 9 of them).
#[inline]
fn digits(b: &[u8]) -> Option<u32> {
    if b.is_empty() || b.len() > 9 {
        return None;
    }
    b.iter().try_fold(0u32, |n, &c| {
        let d = c.wrapping_sub(b'0');
        (d <= 9).then(|| n * 10 + u32::from(d))
    })
}

/// The decimal number of `b`, 1 to 19 ASCII digits (so it fits a u64).
#[inline]
fn all_digits(b: &[u8]) -> Option<u64> {
    if b.is_empty() || b.len() > 19 {
        return None;
    }
    b.iter().try_fold(0u64, |n, &c| {
        let d = c.wrapping_sub(b'0');
        (d <= 9).then(|| n * 10 + u64::from(d))
    })
}

/// Microseconds from the digits after a `.` (1 to 6 of them).
#[inline]
fn fraction(f: &[u8]) -> Option<u32> {
    if f.is_empty() || f.len() > 6 {
        return None;
    }
    Some(digits(f)? * 10u32.pow(6 - f.len() as u32))
}

/// `YYYY-MM-DD` or `YYYY-MM-DD HH:MM:SS[.f{1,6}]` exactly, as the server
/// writes DATE, DATETIME and TIMESTAMP; None for anything else (then
/// `parse_datetime` decides).
fn server_datetime(b: &[u8]) -> Option<DateTime> {
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let mut dt = DateTime {
        year: digits(&b[..4])? as u16,
        month: digits(&b[5..7])? as u8,
        day: digits(&b[8..10])? as u8,
        ..DateTime::default()
    };
    if b.len() == 10 {
        return Some(dt);
    }
    if b.len() < 19 || b[10] != b' ' || b[13] != b':' || b[16] != b':' {
        return None;
    }
    dt.hour = digits(&b[11..13])? as u8;
    dt.minute = digits(&b[14..16])? as u8;
    dt.second = digits(&b[17..19])? as u8;
    dt.microsecond = match &b[19..] {
        [] => 0,
        [b'.', f @ ..] => fraction(f)?,
        _ => return None,
    };
    Some(dt)
}

/// `[-]H{2,3}:MM:SS[.f{1,6}]` exactly, as the server writes TIME; None for
/// anything else (then `parse_time` decides).
fn server_time(b: &[u8]) -> Option<Time> {
    let (negative, t) = match b {
        [b'-', t @ ..] => (true, t),
        t => (false, t),
    };
    let h_len = t.iter().position(|&c| c == b':')?;
    if !(2..=3).contains(&h_len) || t.len() < h_len + 6 || t[h_len + 3] != b':' {
        return None;
    }
    let h = digits(&t[..h_len])?;
    let minutes = digits(&t[h_len + 1..h_len + 3])? as u8;
    let seconds = digits(&t[h_len + 4..h_len + 6])? as u8;
    let microseconds = match &t[h_len + 6..] {
        [] => 0,
        [b'.', f @ ..] => fraction(f)?,
        _ => return None,
    };
    Some(Time {
        negative,
        days: h / 24,
        hours: (h % 24) as u8,
        minutes,
        seconds,
        microseconds,
    })
}

/// `YYYY-MM-DD[ HH:MM:SS[.ffffff]]`.
fn parse_datetime(s: &str) -> Option<DateTime> {
    let (date, time) = match s.split_once(' ') {
        Some((d, t)) => (d, Some(t)),
        None => (s, None),
    };
    let mut d = date.splitn(3, '-');
    let year = d.next()?.parse().ok()?;
    let month = d.next()?.parse().ok()?;
    let day = d.next()?.parse().ok()?;
    let (hour, minute, second, microsecond) = match time {
        Some(t) => {
            let (h, m, s, us) = parse_hms(t)?;
            (u8::try_from(h).ok()?, m, s, us)
        }
        None => (0, 0, 0, 0),
    };
    Some(DateTime {
        year,
        month,
        day,
        hour,
        minute,
        second,
        microsecond,
    })
}

/// `[-]H+:MM:SS[.ffffff]`.
fn parse_time(s: &str) -> Option<Time> {
    let (negative, t) = match s.strip_prefix('-') {
        Some(t) => (true, t),
        None => (false, s),
    };
    let (h, minutes, seconds, microseconds) = parse_hms(t)?;
    Some(Time {
        negative,
        days: h / 24,
        hours: (h % 24) as u8,
        minutes,
        seconds,
        microseconds,
    })
}

fn parse_hms(t: &str) -> Option<(u32, u8, u8, u32)> {
    let (hms, frac) = match t.split_once('.') {
        Some((a, f)) => (a, Some(f)),
        None => (t, None),
    };
    let mut p = hms.splitn(3, ':');
    let h = p.next()?.parse().ok()?;
    let m = p.next()?.parse().ok()?;
    let s = p.next()?.parse().ok()?;
    let us = match frac {
        Some(f) if !f.is_empty() && f.len() <= 6 && f.bytes().all(|b| b.is_ascii_digit()) => {
            f.parse::<u32>().ok()? * 10u32.pow(6 - f.len() as u32)
        }
        Some(_) => return None,
        None => 0,
    };
    Some((h, m, s, us))
}

/// A result set's columns, shared: the answers of a statement run again
/// (a prepared one in a loop, the same query by every borrower) share the
/// one reading of them ([`ColumnMemo`]).
pub(crate) type Cols = std::sync::Arc<[Col]>;

/// No columns (a set that is not a result set), shared: an `Arc` of none
/// still takes an allocation for its counts.
fn no_columns() -> Cols {
    static NONE: std::sync::OnceLock<Cols> = std::sync::OnceLock::new();
    NONE.get_or_init(|| Cols::from([])).clone()
}

/// One result set: its columns and what its closing packet said.
pub(crate) struct Set {
    pub(crate) columns: Cols,
    pub(crate) affected_rows: u64,
    pub(crate) last_insert_id: u64,
    pub(crate) warnings: u16,
    /// The server's info string ("Rows matched: 1 Changed: 1 ..."),
    /// NUL-terminated.
    pub(crate) info: Info,
    /// The rows (sets read whole only), one after another in one vector:
    /// `columns.len()` cells each. One allocation for them all, not one
    /// per row, and read in order from contiguous memory.
    pub(crate) cells: Vec<Cell>,
    /// The byte strings of `cells`, one after another, each followed by a
    /// NUL (see [`Cell::Bytes`]).
    pub(crate) bytes: Vec<u8>,
    /// The number of rows the set had (sets read whole only).
    pub(crate) count: u64,
}

impl Set {
    /// A set with no columns and no rows. Its buffers are the last ones a
    /// set dropped on this thread left (see `SPARE`), so that an answer
    /// read after an answer freed costs no allocation for its rows.
    pub(crate) fn empty() -> Set {
        let (cells, bytes) = SPARE
            .try_with(std::cell::Cell::take)
            .ok()
            .flatten()
            .unwrap_or_default();
        Set {
            columns: no_columns(),
            affected_rows: 0,
            last_insert_id: 0,
            warnings: 0,
            info: info_of(b""),
            cells,
            bytes,
            count: 0,
        }
    }
}

/// The most cells and bytes a set's buffers may hold to be kept for the
/// next set (`SPARE`): a few small answers' worth, at most about 40 KiB a
/// thread.
const SPARE_CELLS: usize = 1024;
const SPARE_BYTES: usize = 16 * 1024;

thread_local! {
    /// One dropped set's buffers (cleared), for the next set this thread
    /// makes: the usual caller reads an answer, frees it and runs the next
    /// statement on the same thread.
    static SPARE: std::cell::Cell<Option<(Vec<Cell>, Vec<u8>)>> = const {
        std::cell::Cell::new(None)
    };
}

impl Drop for Set {
    fn drop(&mut self) {
        let (c, b) = (self.cells.capacity(), self.bytes.capacity());
        if c == 0 || c > SPARE_CELLS || b > SPARE_BYTES {
            return;
        }
        let mut cells = std::mem::take(&mut self.cells);
        let mut bytes = std::mem::take(&mut self.bytes);
        cells.clear();
        bytes.clear();
        // A thread ending drops its own; one spare is kept, the first.
        let _ = SPARE.try_with(|spare| {
            let kept = spare.take().unwrap_or((cells, bytes));
            spare.set(Some(kept));
        });
    }
}

/// The result sets of one answer, in order. Most answers have one: it is
/// held in place, and only the sets after it (a `CALL`'s, a multi-statement
/// text's) take an allocation.
#[derive(Default)]
pub(crate) struct Sets {
    /// The first set; `None` only when there are none.
    head: Option<Set>,
    tail: VecDeque<Set>,
}

impl Sets {
    pub(crate) fn new() -> Sets {
        Sets::default()
    }

    pub(crate) fn push_back(&mut self, set: Set) {
        if self.head.is_none() {
            self.head = Some(set);
        } else {
            self.tail.push_back(set);
        }
    }

    pub(crate) fn pop_front(&mut self) -> Option<Set> {
        let first = self.head.take()?;
        self.head = self.tail.pop_front();
        Some(first)
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &Set> {
        self.head.iter().chain(self.tail.iter())
    }
}

impl From<Set> for Sets {
    fn from(set: Set) -> Sets {
        Sets {
            head: Some(set),
            tail: VecDeque::new(),
        }
    }
}

impl IntoIterator for Sets {
    type Item = Set;
    type IntoIter =
        std::iter::Chain<std::option::IntoIter<Set>, std::collections::vec_deque::IntoIter<Set>>;

    fn into_iter(self) -> Self::IntoIter {
        self.head.into_iter().chain(self.tail)
    }
}

impl<'a> IntoIterator for &'a Sets {
    type Item = &'a Set;
    type IntoIter =
        std::iter::Chain<std::option::Iter<'a, Set>, std::collections::vec_deque::Iter<'a, Set>>;

    fn into_iter(self) -> Self::IntoIter {
        self.head.iter().chain(self.tail.iter())
    }
}

/// Reads the whole answer to the text statement just sent on `f` (every
/// result set, at least one), with each set's figures from its own
/// closing packet. Also returns the last closing
/// packet, whose status and session-state report the session observes.
pub(crate) fn collect_wire<S: std::io::Read + std::io::Write>(
    f: &mut Framer<S>,
    defs: &mut Columns,
    memo: &mut ColumnMemo,
) -> Result<(Sets, OkInfo), WireError> {
    let first = f.read_response(defs)?;
    collect_wire_from(f, defs, memo, first)
}

/// [`collect_wire`] where the start of the answer, `first`, was read
/// already (its columns, if a result set, in `defs`).
pub(crate) fn collect_wire_from<S: std::io::Read + std::io::Write>(
    f: &mut Framer<S>,
    defs: &mut Columns,
    memo: &mut ColumnMemo,
    first: Response,
) -> Result<(Sets, OkInfo), WireError> {
    let mut sets = Sets::new();
    let mut response = first;
    loop {
        let mut set = Set::empty();
        let end = match response {
            Response::Ok(ok) => ok,
            Response::ResultSet => {
                set.columns = memo.columns(defs)?;
                loop {
                    match f.next_row()? {
                        Next::Row(row) => {
                            push_wire_cells(&mut set.cells, &mut set.bytes, row, &set.columns);
                            set.count += 1;
                        }
                        Next::End(end) => break end,
                    }
                }
            }
        };
        set.ended_by(&end);
        sets.push_back(set);
        if end.status & status::MORE_RESULTS_EXISTS == 0 {
            return Ok((sets, end));
        }
        response = f.read_response(defs)?;
    }
}

/// A result set's columns as the protocol layer read their definitions.
pub(crate) fn wire_columns(defs: &Columns) -> Result<Vec<Col>, WireError> {
    let mut columns = Vec::with_capacity(defs.len());
    for def in defs.iter() {
        columns.push(Col::of_def(&def?));
    }
    Ok(columns)
}

/// The last answer's columns, kept with the definitions they were read
/// from: a statement run again (a prepared one in a loop, the same query
/// by every borrower) is answered with the very same definitions, and then
/// its columns are the kept ones, shared (no allocation), rather than
/// parsed and copied anew (one allocation per column, and the parsing).
#[derive(Default)]
pub(crate) struct ColumnMemo {
    raw: Vec<u8>,
    columns: Option<Cols>,
}

impl ColumnMemo {
    /// `defs`' columns, from the memo when they are the last ones.
    pub(crate) fn columns(&mut self, defs: &Columns) -> Result<Cols, WireError> {
        let raw = defs.raw_all();
        if let Some(kept) = &self.columns {
            if self.raw == raw {
                return Ok(kept.clone());
            }
        }
        let columns: Cols = wire_columns(defs)?.into();
        // Bounded: a result set of a huge number of columns is not kept.
        if raw.len() <= 64 * 1024 {
            self.raw.clear();
            self.raw.extend_from_slice(raw);
            self.columns = Some(columns.clone());
        }
        Ok(columns)
    }
}

/// Appends the cells of a row the protocol layer read to `out`, typed by
/// `columns`.
pub(crate) fn push_wire_cells(
    out: &mut Vec<Cell>,
    arena: &mut Vec<u8>,
    row: TextRow<'_>,
    columns: &[Col],
) {
    out.extend(row.cells().zip(columns).map(|(cell, col)| match cell {
        None => Cell::Null,
        Some(b) => Cell::from_text_slice(b, col.kind, arena),
    }));
}

impl Set {
    /// Takes the figures of the packet that closed this set.
    pub(crate) fn ended_by(&mut self, end: &OkInfo) {
        self.affected_rows = end.affected_rows;
        self.last_insert_id = end.last_insert_id;
        self.warnings = end.warnings;
        self.info = info_of(&end.info);
    }
}

/// Reads the whole answer to the execute just sent on `f` (every result
/// set: a `CALL`'s several), each cell straight from the binary row into
/// the answer model. Also returns the last closing packet.
pub(crate) fn collect_binary<S: std::io::Read + std::io::Write>(
    f: &mut Framer<S>,
    cols: &mut BinaryColumns,
    memo: &mut ColumnMemo,
    first: Response,
) -> Result<(Sets, OkInfo), WireError> {
    let mut sets = Sets::new();
    let mut response = first;
    loop {
        let mut set = Set::empty();
        let end = match response {
            Response::Ok(ok) => ok,
            Response::ResultSet => {
                set.columns = memo.columns(cols.defs())?;
                loop {
                    match f.next_binary_row(cols)? {
                        BinaryNext::Row(row) => {
                            let arena = &mut set.bytes;
                            set.cells
                                .extend(row.cells().map(|c| Cell::from_binary(c, arena)));
                            set.count += 1;
                        }
                        BinaryNext::End(end) => break end,
                    }
                }
            }
        };
        set.ended_by(&end);
        sets.push_back(set);
        if end.status & status::MORE_RESULTS_EXISTS == 0 {
            return Ok((sets, end));
        }
        response = f.read_binary_response(cols)?;
    }
}

impl Cell {
    /// The value as `mysql_common` holds it (the Rust face's rows).
    pub(crate) fn into_value(self, arena: &[u8]) -> Value {
        match self {
            Cell::Null => Value::NULL,
            Cell::Int(i) => Value::Int(i),
            Cell::UInt(u) => Value::UInt(u),
            Cell::Double(d) => Value::Double(d),
            c @ Cell::Bytes { .. } => Value::Bytes(bytes_of(arena, &c).to_vec()),
            Cell::Date(d) => Value::Date(
                d.year,
                d.month,
                d.day,
                d.hour,
                d.minute,
                d.second,
                d.microsecond,
            ),
            Cell::Time(t) => Value::Time(
                t.negative,
                t.days,
                t.hours,
                t.minutes,
                t.seconds,
                t.microseconds,
            ),
        }
    }

    /// A binary-protocol cell, as the server typed it.
    #[inline]
    pub(crate) fn from_binary(c: crate::wire::Cell<'_>, arena: &mut Vec<u8>) -> Cell {
        use crate::wire::Cell as W;
        match c {
            W::Null => Cell::Null,
            W::Int(i) => Cell::Int(i),
            W::UInt(u) => Cell::UInt(u),
            W::Float(f) => Cell::Double(f64::from(f)),
            W::Double(d) => Cell::Double(d),
            W::Bytes(b) => stash(arena, b),
            W::Date(d) => Cell::Date(DateTime {
                year: d.year,
                month: d.month,
                day: d.day,
                ..DateTime::default()
            }),
            W::DateTime(t) => Cell::Date(DateTime {
                year: t.date.year,
                month: t.date.month,
                day: t.date.day,
                hour: t.hour,
                minute: t.minute,
                second: t.second,
                microsecond: t.micros,
            }),
            W::Time(t) => Cell::Time(Time {
                negative: t.negative,
                days: t.days,
                hours: t.hours,
                minutes: t.minutes,
                seconds: t.seconds,
                microseconds: t.micros,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `odd` is not a form the server writes: no fast answer, and
    /// `from_text` still gives what the general parser gives.
    fn falls_through(odd: &str, kind: Kind) {
        let (fast, general) = if kind == Kind::Time {
            (
                server_time(odd.as_bytes()).map(Cell::Time),
                parse_time(odd).map(Cell::Time),
            )
        } else {
            (
                server_datetime(odd.as_bytes()).map(Cell::Date),
                parse_datetime(odd).map(Cell::Date),
            )
        };
        assert!(fast.is_none(), "{odd}: a fast answer");
        match (
            Cell::from_text(Value::Bytes(odd.as_bytes().to_vec()), kind, &mut Vec::new()),
            general,
        ) {
            (Cell::Date(a), Some(Cell::Date(b))) => assert_eq!(a, b, "{odd}"),
            (Cell::Time(a), Some(Cell::Time(b))) => assert_eq!(a, b, "{odd}"),
            (Cell::Bytes { .. }, None) => {}
            _ => panic!("{odd}: from_text and the general parser disagree"),
        }
    }

    /// The byte-level reading of the server's forms agrees with the general
    /// parser wherever it answers, and answers for every form the server
    /// writes; anything else is left to the general parser.
    #[test]
    fn server_forms_read_as_the_general_parser_reads_them() {
        let mut server = Vec::new();
        for date in ["2024-02-29", "0000-00-00", "9999-12-31", "1970-01-01"] {
            server.push(date.to_owned());
            for time in ["00:00:00", "23:59:58", "12:34:56"] {
                server.push(format!("{date} {time}"));
                for frac in ["0", "5", "12", "123", "1234", "00012", "999999"] {
                    server.push(format!("{date} {time}.{frac}"));
                }
            }
        }
        for dt in &server {
            let fast = server_datetime(dt.as_bytes());
            assert!(fast.is_some(), "{dt}");
            assert_eq!(fast, parse_datetime(dt), "{dt}");
        }
        let mut times = Vec::new();
        for sign in ["", "-"] {
            for hms in [
                "00:00:00",
                "23:59:59",
                "24:00:00",
                "99:59:59",
                "100:00:01",
                "838:59:59",
            ] {
                times.push(format!("{sign}{hms}"));
                for frac in ["5", "000001", "123456", "50"] {
                    times.push(format!("{sign}{hms}.{frac}"));
                }
            }
        }
        for t in &times {
            let fast = server_time(t.as_bytes());
            assert!(fast.is_some(), "{t}");
            assert_eq!(fast, parse_time(t), "{t}");
        }
        // Not the server's forms: no fast answer, and from_text still
        // answers as the general parser does.
        for odd in [
            "2024-2-29",
            "2024-02-29T10:00:00",
            "+024-02-29",
            "2024-02-29 1:00:00",
            "2024-02-29 23:59:58.",
            "2024-02-29 23:59:58.1234567",
            " 2024-02-29",
            "2024-02-29 23:59:58 ",
            "2024-02-2x",
            "20240229",
            "",
        ] {
            falls_through(odd, Kind::DateTime);
        }
        for odd in [
            "1:00:00",
            "12:00",
            "12:00:00.",
            "12:00:00.1234567",
            "-",
            "1234:00:00",
            "12:0:00",
            "12:00:00 ",
            "+12:00:00",
            "",
        ] {
            falls_through(odd, Kind::Time);
        }
    }

    #[test]
    fn text_protocol_values_are_typed_by_their_columns() {
        let c =
            |v: &str, t| Cell::from_text(Value::Bytes(v.as_bytes().to_vec()), t, &mut Vec::new());
        assert!(matches!(c("-42", Kind::Int), Cell::Int(-42)));
        assert!(matches!(
            c("18446744073709551615", Kind::UInt),
            Cell::UInt(u64::MAX)
        ));
        assert!(matches!(c("2.5", Kind::Double), Cell::Double(d) if d == 2.5));
        assert!(matches!(c("12.50", Kind::Decimal), Cell::Bytes { .. }));
        match c("2024-02-29 23:59:58.000123", Kind::DateTime) {
            Cell::Date(d) => assert_eq!(
                (
                    d.year,
                    d.month,
                    d.day,
                    d.hour,
                    d.minute,
                    d.second,
                    d.microsecond
                ),
                (2024, 2, 29, 23, 59, 58, 123)
            ),
            _ => panic!(),
        }
        match c("-838:59:59.5", Kind::Time) {
            Cell::Time(t) => assert_eq!(
                (
                    t.negative,
                    t.days,
                    t.hours,
                    t.minutes,
                    t.seconds,
                    t.microseconds
                ),
                (true, 34, 22, 59, 59, 500_000)
            ),
            _ => panic!(),
        }
        assert!(matches!(c("not a number", Kind::Int), Cell::Bytes { .. }));
    }

    #[test]
    fn integers_read_the_same_on_the_fast_path_and_the_general_one() {
        // Each reads as str::parse reads it: the fast path's limits (18
        // digits and a sign, 19 unsigned) and what lies past them.
        fn agree<T: std::str::FromStr + PartialEq + std::fmt::Debug>(
            kind: Kind,
            values: &[&str],
            read: fn(Cell) -> Option<T>,
        ) {
            for v in values {
                let got = Cell::typed(v.as_bytes(), kind).map(|c| read(c).expect(v));
                assert_eq!(got, v.parse::<T>().ok(), "{v:?}");
            }
        }
        let ints = [
            "0",
            "-0",
            "7",
            "+7",
            "007",
            "-",
            "",
            "1-",
            "12a",
            " 1",
            "999999999999999999",
            "-999999999999999999",
            "1000000000000000000",
            "9223372036854775807",
            "-9223372036854775808",
            "9223372036854775808",
            "-9223372036854775809",
            "99999999999999999999",
        ];
        agree(Kind::Int, &ints, |c| match c {
            Cell::Int(n) => Some(n),
            _ => None,
        });
        let uints = [
            "0",
            "7",
            "+7",
            "-1",
            "",
            "9999999999999999999",
            "18446744073709551615",
            "18446744073709551616",
            "1x",
        ];
        agree(Kind::UInt, &uints, |c| match c {
            Cell::UInt(n) => Some(n),
            _ => None,
        });
    }
}
