//! The binary protocol of prepared statements: `COM_STMT_PREPARE`,
//! `COM_STMT_EXECUTE` with its parameters, `COM_STMT_SEND_LONG_DATA`,
//! `COM_STMT_RESET` and `COM_STMT_CLOSE`, the binary rows of an answer, and
//! a small per-connection cache of prepared statements ([`StmtCache`]).
//!
//! Built as the text protocol is (`text.rs`): a statement's column and
//! parameter definitions are kept as the server's bytes ([`Columns`]); an
//! answer's rows are packets of the read buffer, checked whole as each is
//! read, and their cells decoded by column type as they are walked
//! ([`BinaryRow::cells`]): integers and floats as numbers, dates and times
//! as small `Copy` structs, everything else as slices of the packet. The
//! parameters of an execute are written straight into the write buffer.
//! Nothing here allocates per row or per cell.
//!
//! The parameters' types go with an execute only when they differ from the
//! ones the last execute of the same statement sent (the server keeps
//! them): the usual loop of one statement run with values of the same
//! kinds sends two bytes per parameter less each time, and the check is a
//! comparison of a few bytes. After an execute the server refused they are
//! sent again, whatever the server kept.
//!
//! Not here: cursors (`COM_STMT_FETCH`), MariaDB's bulk execute, and its
//! cached metadata (`MARIADB_CLIENT_CACHE_METADATA`, which the session's
//! handshake does not ask for: every execute's result set carries its
//! column definitions, read into the caller's [`BinaryColumns`] without an
//! allocation once it has grown).

use std::collections::HashMap;
use std::io::{Read, Write};

use crate::wire::error::WireError;
use crate::wire::packet::Framer;
use crate::wire::parse::{caps, parse_err, EofInfo, OkInfo, Reader};
use crate::wire::text::{Cached, Columns, Response};

/// `COM_STMT_PREPARE`: prepare the statement text in the payload.
pub const COM_STMT_PREPARE: u8 = 0x16;
/// `COM_STMT_EXECUTE`: run a prepared statement with parameters.
pub const COM_STMT_EXECUTE: u8 = 0x17;
/// `COM_STMT_SEND_LONG_DATA`: a piece of one parameter's value, sent
/// before the execute; no answer.
pub const COM_STMT_SEND_LONG_DATA: u8 = 0x18;
/// `COM_STMT_CLOSE`: forget a prepared statement; no answer.
pub const COM_STMT_CLOSE: u8 = 0x19;
/// `COM_STMT_RESET`: drop the long data sent for a statement and close
/// its cursor.
pub const COM_STMT_RESET: u8 = 0x1a;

/// The server's error number for a statement id it does not know
/// (`ER_UNKNOWN_STMT_HANDLER`): the session was reset since it was
/// prepared.
pub const ER_UNKNOWN_STMT_HANDLER: u16 = 1243;

/// Column and parameter type numbers (`MYSQL_TYPE_*`) this layer reads
/// and writes.
pub mod types {
    /// `DECIMAL` (old form), sent as text.
    pub const DECIMAL: u8 = 0;
    /// `TINYINT`: 1 byte.
    pub const TINY: u8 = 1;
    /// `SMALLINT`: 2 bytes.
    pub const SHORT: u8 = 2;
    /// `INT`: 4 bytes.
    pub const LONG: u8 = 3;
    /// `FLOAT`: 4 bytes, IEEE 754.
    pub const FLOAT: u8 = 4;
    /// `DOUBLE`: 8 bytes, IEEE 754.
    pub const DOUBLE: u8 = 5;
    /// `NULL`: no bytes.
    pub const NULL: u8 = 6;
    /// `TIMESTAMP`: a date and time.
    pub const TIMESTAMP: u8 = 7;
    /// `BIGINT`: 8 bytes.
    pub const LONGLONG: u8 = 8;
    /// `MEDIUMINT`: 4 bytes on the wire.
    pub const INT24: u8 = 9;
    /// `DATE`.
    pub const DATE: u8 = 10;
    /// `TIME`: a signed duration.
    pub const TIME: u8 = 11;
    /// `DATETIME`.
    pub const DATETIME: u8 = 12;
    /// `YEAR`: 2 bytes.
    pub const YEAR: u8 = 13;
    /// `DATE` (internal form).
    pub const NEWDATE: u8 = 14;
    /// `VARCHAR`.
    pub const VARCHAR: u8 = 15;
    /// `BIT`: the bits, big-endian, as bytes.
    pub const BIT: u8 = 16;
    /// `JSON` (MySQL; MariaDB sends JSON as a `LONGTEXT`).
    pub const JSON: u8 = 245;
    /// `DECIMAL`, sent as text.
    pub const NEWDECIMAL: u8 = 246;
    /// `ENUM`.
    pub const ENUM: u8 = 247;
    /// `SET`.
    pub const SET: u8 = 248;
    /// `TINYBLOB` / `TINYTEXT`.
    pub const TINY_BLOB: u8 = 249;
    /// `MEDIUMBLOB` / `MEDIUMTEXT`.
    pub const MEDIUM_BLOB: u8 = 250;
    /// `LONGBLOB` / `LONGTEXT`.
    pub const LONG_BLOB: u8 = 251;
    /// `BLOB` / `TEXT`.
    pub const BLOB: u8 = 252;
    /// `VARCHAR` / `VARBINARY`.
    pub const VAR_STRING: u8 = 253;
    /// `CHAR` / `BINARY`.
    pub const STRING: u8 = 254;
    /// A geometry, in its binary form.
    pub const GEOMETRY: u8 = 255;
}

/// A column flag: the integer is unsigned.
const UNSIGNED_FLAG: u16 = 32;

/// A date (`DATE`); all zero for the zero date.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Date {
    /// The year, 0 to 9999.
    pub year: u16,
    /// The month, 1 to 12 (0 in a zero date).
    pub month: u8,
    /// The day, 1 to 31 (0 in a zero date).
    pub day: u8,
}

/// A date and time (`DATETIME`, `TIMESTAMP`), to the microsecond.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DateTime {
    /// The date.
    pub date: Date,
    /// The hour, 0 to 23.
    pub hour: u8,
    /// The minute, 0 to 59.
    pub minute: u8,
    /// The second, 0 to 59.
    pub second: u8,
    /// The microseconds, 0 to 999,999.
    pub micros: u32,
}

/// A signed duration (`TIME`), which may exceed a day.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Time {
    /// Whether it is negative.
    pub negative: bool,
    /// Whole days.
    pub days: u32,
    /// Hours past the days, 0 to 23.
    pub hours: u8,
    /// Minutes, 0 to 59.
    pub minutes: u8,
    /// Seconds, 0 to 59.
    pub seconds: u8,
    /// Microseconds, 0 to 999,999.
    pub micros: u32,
}

/// One parameter of an execute, as the wire carries it: the client layer
/// maps its own values onto these.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Param<'a> {
    /// SQL `NULL`.
    Null,
    /// A signed integer (sent as `BIGINT`).
    Int(i64),
    /// An unsigned integer (sent as `BIGINT UNSIGNED`).
    UInt(u64),
    /// A `FLOAT`.
    Float(f32),
    /// A `DOUBLE`.
    Double(f64),
    /// Bytes, with the type they are sent as ([`types::STRING`] for text,
    /// [`types::BLOB`] for binary data, [`types::NEWDECIMAL`] for a
    /// decimal's text).
    Bytes(&'a [u8], u8),
    /// A `DATE`.
    Date(Date),
    /// A `DATETIME`, to the microsecond.
    DateTime(DateTime),
    /// A `TIME`.
    Time(Time),
    /// A value already sent with [`Framer::send_long_data`], with the type
    /// it is sent as (as for [`Param::Bytes`]); nothing more of it goes
    /// with the execute.
    Long(u8),
}

impl Param<'_> {
    /// The two bytes that give its type in an execute: the type, and 0x80
    /// for an unsigned integer.
    fn wire_type(&self) -> [u8; 2] {
        match *self {
            Param::Null => [types::NULL, 0],
            Param::Int(_) => [types::LONGLONG, 0],
            Param::UInt(_) => [types::LONGLONG, 0x80],
            Param::Float(_) => [types::FLOAT, 0],
            Param::Double(_) => [types::DOUBLE, 0],
            Param::Bytes(_, t) | Param::Long(t) => [t, 0],
            Param::Date(_) => [types::DATE, 0],
            Param::DateTime(_) => [types::DATETIME, 0],
            Param::Time(_) => [types::TIME, 0],
        }
    }

    /// Appends its value, as the binary protocol writes it, to `out`.
    fn write(&self, out: &mut Vec<u8>) {
        match *self {
            Param::Null | Param::Long(_) => {}
            Param::Int(v) => out.extend_from_slice(&v.to_le_bytes()),
            Param::UInt(v) => out.extend_from_slice(&v.to_le_bytes()),
            Param::Float(v) => out.extend_from_slice(&v.to_le_bytes()),
            Param::Double(v) => out.extend_from_slice(&v.to_le_bytes()),
            Param::Bytes(b, _) => {
                put_lenenc(out, b.len() as u64);
                out.extend_from_slice(b);
            }
            Param::Date(d) => {
                out.push(4);
                put_date(out, d);
            }
            Param::DateTime(t) => {
                out.push(if t.micros == 0 { 7 } else { 11 });
                put_date(out, t.date);
                out.extend_from_slice(&[t.hour, t.minute, t.second]);
                if t.micros != 0 {
                    out.extend_from_slice(&t.micros.to_le_bytes());
                }
            }
            Param::Time(t) => {
                out.push(if t.micros == 0 { 8 } else { 12 });
                out.push(u8::from(t.negative));
                out.extend_from_slice(&t.days.to_le_bytes());
                out.extend_from_slice(&[t.hours, t.minutes, t.seconds]);
                if t.micros != 0 {
                    out.extend_from_slice(&t.micros.to_le_bytes());
                }
            }
        }
    }
}

fn put_date(out: &mut Vec<u8>, d: Date) {
    out.extend_from_slice(&d.year.to_le_bytes());
    out.extend_from_slice(&[d.month, d.day]);
}

/// Appends `n` as a length-encoded integer.
fn put_lenenc(out: &mut Vec<u8>, n: u64) {
    match n {
        0..=0xfa => out.push(n as u8),
        0xfb..=0xffff => {
            out.push(0xfc);
            out.extend_from_slice(&(n as u16).to_le_bytes());
        }
        0x1_0000..=0xff_ffff => {
            out.push(0xfd);
            out.extend_from_slice(&(n as u32).to_le_bytes()[..3]);
        }
        _ => {
            out.push(0xfe);
            out.extend_from_slice(&n.to_le_bytes());
        }
    }
}

/// A statement the server prepared: its id, and its parameters' and
/// result columns' definitions as the server sent them.
#[derive(Clone, Debug)]
pub struct Prepared {
    id: u32,
    params: Columns,
    /// The result columns the server last sent for it (at prepare, or with
    /// an execute's answer): what an answer that leaves them out has.
    columns: BinaryColumns,
    warnings: u16,
    /// The parameter types the last execute sent; empty when the next one
    /// must send them (never sent, or the last execute failed).
    bound: Vec<[u8; 2]>,
}

impl Prepared {
    /// The server's id of the statement.
    pub fn id(&self) -> u32 {
        self.id
    }

    /// The number of parameters (placeholders) the server counted.
    pub fn param_count(&self) -> usize {
        self.params.len()
    }

    /// The parameters' definitions (MariaDB sends placeholders' as
    /// `VAR_STRING` columns without names).
    pub fn params(&self) -> &Columns {
        &self.params
    }

    /// The result columns' definitions the server last sent for it: at
    /// prepare time (empty for a statement that returns no rows), or with
    /// an execute's answer since.
    pub fn columns(&self) -> &Columns {
        &self.columns.defs
    }

    /// Warnings the prepare raised.
    pub fn warnings(&self) -> u16 {
        self.warnings
    }
}

/// The columns of a binary result set: their definitions as the server
/// sent them, and each one's type and signedness, which walking a row
/// needs for every cell. Pass one to [`Framer::read_binary_response`] and
/// reuse it.
#[derive(Clone, Debug, Default)]
pub struct BinaryColumns {
    defs: Columns,
    kinds: Vec<Kind>,
}

/// What a cell's column says about its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Kind {
    ty: u8,
    unsigned: bool,
}

impl BinaryColumns {
    /// An empty set.
    pub fn new() -> BinaryColumns {
        BinaryColumns::default()
    }

    /// Each column's type and signedness, from the definitions.
    fn read_kinds(&mut self) -> Result<(), WireError> {
        self.kinds.clear();
        for def in self.defs.iter() {
            let d = def?;
            self.kinds.push(Kind {
                ty: d.column_type,
                unsigned: d.flags & UNSIGNED_FLAG != 0,
            });
        }
        Ok(())
    }

    /// Becomes a copy of `other`, in the room it has.
    fn copy_from(&mut self, other: &BinaryColumns) {
        self.defs.copy_from(&other.defs);
        self.kinds.clone_from(&other.kinds);
    }

    /// The definitions.
    pub fn defs(&self) -> &Columns {
        &self.defs
    }

    /// The number of columns.
    pub fn len(&self) -> usize {
        self.kinds.len()
    }

    /// Whether there are none (the answer was not a result set).
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }
}

/// The next thing in a binary result set.
#[derive(Debug, PartialEq)]
pub enum BinaryNext<'a> {
    /// A row.
    Row(BinaryRow<'a>),
    /// The result set ended; another result of the same command follows
    /// when its status has [`crate::wire::status::MORE_RESULTS_EXISTS`] (read
    /// it with [`Framer::read_binary_response`]).
    End(OkInfo),
}

/// One cell of a binary row.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Cell<'a> {
    /// SQL `NULL`.
    Null,
    /// A signed integer column's value.
    Int(i64),
    /// An unsigned integer column's value.
    UInt(u64),
    /// A `FLOAT`.
    Float(f32),
    /// A `DOUBLE`.
    Double(f64),
    /// Everything sent as bytes: strings, blobs, decimals (their text),
    /// `BIT`, `ENUM`, `SET`, JSON, geometry, and types this layer does not
    /// know.
    Bytes(&'a [u8]),
    /// A `DATE` column's value.
    Date(Date),
    /// A `DATETIME` or `TIMESTAMP` column's value (or a `DATE` column's
    /// that came with a time of day).
    DateTime(DateTime),
    /// A `TIME`.
    Time(Time),
}

/// A row of a binary result set, checked whole when it was read.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BinaryRow<'a> {
    payload: &'a [u8],
    kinds: &'a [Kind],
}

impl<'a> BinaryRow<'a> {
    /// The number of cells.
    pub fn len(&self) -> usize {
        self.kinds.len()
    }

    /// Whether the row has no cells (never, for a result set).
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    /// The cells in column order.
    pub fn cells(&self) -> BinaryCells<'a> {
        BinaryCells {
            payload: self.payload,
            at: 1 + bitmap_len(self.kinds.len()),
            i: 0,
            kinds: self.kinds,
        }
    }

    /// Checks that `payload` is a binary row of cells of `kinds`: the
    /// header, the NULL bitmap, each cell whole, nothing after the last.
    fn check(payload: &[u8], kinds: &[Kind]) -> Result<(), WireError> {
        let mut at = 1 + bitmap_len(kinds.len());
        if payload.len() < at {
            return Err(WireError::protocol(format!(
                "a binary row of {} bytes is shorter than its NULL bitmap",
                payload.len()
            )));
        }
        for (i, &kind) in kinds.iter().enumerate() {
            if is_null(payload, i) {
                continue;
            }
            at = match cell_at(payload, at, kind) {
                Some((_, next)) => next,
                None => return Err(bad_cell(payload, at, kind, i)),
            };
        }
        if at != payload.len() {
            return Err(WireError::protocol(format!(
                "a binary row has {} bytes after its {} cells",
                payload.len() - at,
                kinds.len()
            )));
        }
        Ok(())
    }
}

/// The length of a binary row's NULL bitmap for `n` columns (its first
/// two bits are unused).
fn bitmap_len(n: usize) -> usize {
    (n + 7 + 2) / 8
}

/// Whether cell `i` is NULL in the bitmap after the row's header (the
/// bitmap's length was checked).
#[inline]
fn is_null(payload: &[u8], i: usize) -> bool {
    let bit = i + 2;
    payload
        .get(1 + bit / 8)
        .is_some_and(|b| b & (1 << (bit % 8)) != 0)
}

/// What is wrong with the cell at `at` that [`cell_at`] refused.
fn bad_cell(payload: &[u8], at: usize, kind: Kind, i: usize) -> WireError {
    if let (Some(size), Some(&len)) = (temporal_sizes(kind.ty), payload.get(at)) {
        if !size.contains(&len) {
            return WireError::protocol(format!(
                "a binary row's cell {i} (column type {}) has a temporal length of {len}, not one of {size:?}",
                kind.ty
            ));
        }
    }
    if temporal_sizes(kind.ty).is_none() && fixed_size(kind.ty).is_none() {
        if let Some(h @ (0xfb | 0xff)) = payload.get(at) {
            return WireError::protocol(format!(
                "a binary row's cell {i} (column type {}) starts with 0x{h:02X}, not a length",
                kind.ty
            ));
        }
    }
    WireError::protocol(format!(
        "packet ends inside a binary row's cell {i} (column type {})",
        kind.ty
    ))
}

/// The size of a fixed-width type's cell.
fn fixed_size(ty: u8) -> Option<usize> {
    match ty {
        types::TINY => Some(1),
        types::SHORT | types::YEAR => Some(2),
        types::LONG | types::INT24 | types::FLOAT => Some(4),
        types::LONGLONG | types::DOUBLE => Some(8),
        types::NULL => Some(0),
        _ => None,
    }
}

/// The lengths a temporal type's cell may have.
fn temporal_sizes(ty: u8) -> Option<&'static [u8]> {
    match ty {
        types::DATE | types::NEWDATE | types::DATETIME | types::TIMESTAMP => Some(&[0, 4, 7, 11]),
        types::TIME => Some(&[0, 8, 12]),
        _ => None,
    }
}

fn le<const N: usize>(p: &[u8], at: usize) -> Option<[u8; N]> {
    p.get(at..at.checked_add(N)?)?.try_into().ok()
}

/// The cell of column kind `kind` at `at` in `payload` (not NULL), and
/// where the next starts; `None` when the bytes are not one. Both the
/// check of a row and the walk of its cells go through here.
#[inline]
fn cell_at(payload: &[u8], at: usize, kind: Kind) -> Option<(Cell<'_>, usize)> {
    let u = kind.unsigned;
    Some(match kind.ty {
        types::TINY => {
            let [b] = le::<1>(payload, at)?;
            let v = if u {
                Cell::UInt(u64::from(b))
            } else {
                Cell::Int(i64::from(b as i8))
            };
            (v, at + 1)
        }
        types::SHORT | types::YEAR => {
            let b = le::<2>(payload, at)?;
            let v = if u {
                Cell::UInt(u64::from(u16::from_le_bytes(b)))
            } else {
                Cell::Int(i64::from(i16::from_le_bytes(b)))
            };
            (v, at + 2)
        }
        types::LONG | types::INT24 => {
            let b = le::<4>(payload, at)?;
            let v = if u {
                Cell::UInt(u64::from(u32::from_le_bytes(b)))
            } else {
                Cell::Int(i64::from(i32::from_le_bytes(b)))
            };
            (v, at + 4)
        }
        types::LONGLONG => {
            let b = le::<8>(payload, at)?;
            let v = if u {
                Cell::UInt(u64::from_le_bytes(b))
            } else {
                Cell::Int(i64::from_le_bytes(b))
            };
            (v, at + 8)
        }
        types::FLOAT => (Cell::Float(f32::from_le_bytes(le(payload, at)?)), at + 4),
        types::DOUBLE => (Cell::Double(f64::from_le_bytes(le(payload, at)?)), at + 8),
        types::NULL => (Cell::Null, at),
        types::DATE | types::NEWDATE | types::DATETIME | types::TIMESTAMP => {
            let len = usize::from(*payload.get(at)?);
            let b = payload.get(at + 1..at + 1 + len)?;
            let mut t = DateTime::default();
            match len {
                0 => {}
                4 | 7 | 11 => {
                    t.date = Date {
                        year: u16::from_le_bytes([b[0], b[1]]),
                        month: b[2],
                        day: b[3],
                    };
                    if len >= 7 {
                        (t.hour, t.minute, t.second) = (b[4], b[5], b[6]);
                    }
                    if len == 11 {
                        t.micros = u32::from_le_bytes([b[7], b[8], b[9], b[10]]);
                    }
                }
                _ => return None,
            }
            let date_only = matches!(kind.ty, types::DATE | types::NEWDATE) && len <= 4;
            let v = if date_only {
                Cell::Date(t.date)
            } else {
                Cell::DateTime(t)
            };
            (v, at + 1 + len)
        }
        types::TIME => {
            let len = usize::from(*payload.get(at)?);
            let b = payload.get(at + 1..at + 1 + len)?;
            let mut t = Time::default();
            match len {
                0 => {}
                8 | 12 => {
                    t.negative = b[0] != 0;
                    t.days = u32::from_le_bytes([b[1], b[2], b[3], b[4]]);
                    (t.hours, t.minutes, t.seconds) = (b[5], b[6], b[7]);
                    if len == 12 {
                        t.micros = u32::from_le_bytes([b[8], b[9], b[10], b[11]]);
                    }
                }
                _ => return None,
            }
            (Cell::Time(t), at + 1 + len)
        }
        // Strings, blobs, decimals, BIT, ENUM, SET, JSON, geometry, and
        // any type this layer does not know: length-encoded bytes.
        _ => {
            let mut r = Reader::new(payload.get(at..)?);
            let b = r.lenenc_str("").ok()??;
            (Cell::Bytes(b), payload.len() - r.rest.len())
        }
    })
}

/// The cells of a [`BinaryRow`].
#[derive(Debug)]
pub struct BinaryCells<'a> {
    payload: &'a [u8],
    at: usize,
    i: usize,
    kinds: &'a [Kind],
}

impl<'a> Iterator for BinaryCells<'a> {
    type Item = Cell<'a>;

    #[inline]
    fn next(&mut self) -> Option<Cell<'a>> {
        let &kind = self.kinds.get(self.i)?;
        let i = self.i;
        self.i += 1;
        if is_null(self.payload, i) {
            return Some(Cell::Null);
        }
        // Checked when the row was read: cannot fail (were it to, the cells
        // would end early, never read out of bounds).
        let (cell, next) = cell_at(self.payload, self.at, kind)?;
        self.at = next;
        Some(cell)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.kinds.len() - self.i;
        (left, Some(left))
    }
}

impl<S: Read + Write> Framer<S> {
    /// Prepares `sql` (`COM_STMT_PREPARE`) and reads the server's answer:
    /// the statement, or the server's error (a statement it cannot
    /// prepare: 1064 for a syntax error, 1295 for one the binary protocol
    /// does not run), after which the session is ready for the next
    /// command.
    pub fn prepare(&mut self, sql: &[u8]) -> Result<Prepared, WireError> {
        self.send_command(COM_STMT_PREPARE, sql)?;
        let caps = self.caps();
        let (id, ncols, nparams, warnings) = loop {
            self.advance()?;
            let p = self.last_packet();
            match p.first() {
                Some(0xff) => match parse_err(p, caps)? {
                    Some(e) => return Err(WireError::Server(e)),
                    None => continue,
                },
                Some(0x00) => {
                    let mut r = Reader::new(p);
                    r.u8("a prepare answer")?;
                    let id = r.u32("a prepared statement's id")?;
                    let ncols = r.u16("a prepared statement's column count")?;
                    let nparams = r.u16("a prepared statement's parameter count")?;
                    let warnings = if r.rest.len() >= 3 {
                        r.u8("a prepare answer's filler")?;
                        r.u16("a prepare answer's warnings")?
                    } else {
                        0
                    };
                    break (id, ncols, nparams, warnings);
                }
                Some(&h) => {
                    return Err(WireError::protocol(format!(
                        "expected a prepare answer, got header 0x{h:02X}"
                    )))
                }
                None => {
                    return Err(WireError::protocol(
                        "an empty packet where a prepare answer belongs",
                    ))
                }
            }
        };
        let mut stmt = Prepared {
            id,
            params: Columns::new(),
            columns: BinaryColumns::new(),
            warnings,
            bound: Vec::new(),
        };
        self.read_definitions(u64::from(nparams), &mut stmt.params)?;
        self.read_definitions(u64::from(ncols), &mut stmt.columns.defs)?;
        stmt.columns.read_kinds()?;
        Ok(stmt)
    }

    /// Sends an execute of `stmt` with `params` (`COM_STMT_EXECUTE`, no
    /// cursor); the answer is read with [`Framer::read_binary_response`].
    /// A parameter count other than the statement's is refused before
    /// anything is sent ([`WireError::Refused`]). The parameters' types
    /// go only when they differ from the last execute's; after an execute
    /// the server refused, call [`Prepared::rebind`] so that the next one
    /// sends them whatever the server kept ([`StmtCache::execute`] does).
    pub fn send_execute(
        &mut self,
        stmt: &mut Prepared,
        params: &[Param<'_>],
    ) -> Result<(), WireError> {
        if params.len() != stmt.param_count() {
            return Err(WireError::Refused(format!(
                "the statement has {} parameters, {} were given",
                stmt.param_count(),
                params.len()
            )));
        }
        let same = stmt.bound.len() == params.len()
            && params
                .iter()
                .zip(&stmt.bound)
                .all(|(p, b)| p.wire_type() == *b);
        if !same {
            stmt.bound.clear();
            stmt.bound.extend(params.iter().map(Param::wire_type));
        }
        let id = stmt.id;
        self.send_command_with(COM_STMT_EXECUTE, |out| {
            out.extend_from_slice(&id.to_le_bytes());
            // No cursor; one iteration.
            out.push(0);
            out.extend_from_slice(&1u32.to_le_bytes());
            if params.is_empty() {
                return;
            }
            let bitmap = out.len();
            out.resize(bitmap + params.len().div_ceil(8), 0);
            for (i, p) in params.iter().enumerate() {
                if matches!(p, Param::Null) {
                    out[bitmap + i / 8] |= 1 << (i % 8);
                }
            }
            out.push(u8::from(!same));
            if !same {
                for p in params {
                    out.extend_from_slice(&p.wire_type());
                }
            }
            for p in params {
                p.write(out);
            }
        })
    }

    /// Reads the start of the answer to an execute: an OK, an error
    /// ([`WireError::Server`]), or a binary result set, whose columns land
    /// in `columns`; read its rows with [`Framer::next_binary_row`] to its
    /// end. While the last status carries
    /// [`crate::wire::status::MORE_RESULTS_EXISTS`] (a `CALL`), another
    /// answer follows: read it with this again.
    ///
    /// The first answer to an execute is read with
    /// [`Framer::read_execute_response`] instead, which knows the
    /// statement's columns: MariaDB leaves them out when they are the ones
    /// it last sent for the statement. Here, a result set that leaves them
    /// out has the previous one's (those in `columns`).
    pub fn read_binary_response(
        &mut self,
        columns: &mut BinaryColumns,
    ) -> Result<Response, WireError> {
        self.read_binary_answer(columns, Cached::Kept)
            .map(|(r, _)| r)
    }

    /// Reads the start of the answer to the execute of `stmt` just sent,
    /// as [`Framer::read_binary_response`] does; columns the server leaves
    /// out are the statement's, and columns it sends become the
    /// statement's.
    pub fn read_execute_response(
        &mut self,
        stmt: &mut Prepared,
        columns: &mut BinaryColumns,
    ) -> Result<Response, WireError> {
        let (r, sent) = self.read_binary_answer(columns, Cached::From(&stmt.columns))?;
        if sent && r == Response::ResultSet {
            stmt.columns.copy_from(columns);
        }
        Ok(r)
    }

    fn read_binary_answer(
        &mut self,
        columns: &mut BinaryColumns,
        cached: Cached<'_, BinaryColumns>,
    ) -> Result<(Response, bool), WireError> {
        let defs = match cached {
            Cached::Nothing => Cached::Nothing,
            Cached::Kept => Cached::Kept,
            Cached::From(c) => Cached::From(&c.defs),
        };
        let (r, sent) = match self.read_answer(&mut columns.defs, defs) {
            Ok(read) => read,
            Err(e) => {
                columns.kinds.clear();
                return Err(e);
            }
        };
        match (&r, sent, cached) {
            (Response::Ok(_), ..) => columns.kinds.clear(),
            (Response::ResultSet, true, _) => {
                if let Err(e) = columns.read_kinds() {
                    self.open_cells = None;
                    return Err(e);
                }
            }
            (Response::ResultSet, false, Cached::From(c)) => columns.kinds.clone_from(&c.kinds),
            // Kept: the kinds are those of the definitions kept.
            (Response::ResultSet, false, _) => {}
        }
        Ok((r, sent))
    }

    /// The next row of the open binary result set (whose columns
    /// [`Framer::read_binary_response`] put in `columns`), or its end.
    pub fn next_binary_row<'a>(
        &'a mut self,
        columns: &'a BinaryColumns,
    ) -> Result<BinaryNext<'a>, WireError> {
        let Some(cells) = self.open_cells else {
            return Err(WireError::protocol("no result set is open"));
        };
        if cells != columns.kinds.len() {
            return Err(WireError::protocol(format!(
                "the result set has {cells} columns, the columns given {}",
                columns.kinds.len()
            )));
        }
        let caps = self.caps();
        loop {
            self.advance()?;
            let p = self.last_packet();
            let end = match p.first() {
                Some(0x00) => break,
                Some(0xff) => match parse_err(p, caps) {
                    Ok(None) => continue,
                    Ok(Some(e)) => Err(WireError::Server(e)),
                    Err(e) => Err(e),
                },
                Some(0xfe) if caps & caps::DEPRECATE_EOF != 0 => OkInfo::parse(p, caps),
                Some(0xfe) => EofInfo::parse(p, caps).map(|eof| OkInfo {
                    status: eof.status,
                    warnings: eof.warnings,
                    ..OkInfo::default()
                }),
                Some(&h) => Err(WireError::protocol(format!(
                    "a binary row starts with 0x{h:02X}, not 0x00"
                ))),
                None => Err(WireError::protocol(
                    "an empty packet where a binary row belongs",
                )),
            };
            self.open_cells = None;
            if let Ok(ok) = &end {
                self.status = ok.status;
            }
            return end.map(BinaryNext::End);
        }
        if let Err(e) = BinaryRow::check(self.last_packet(), &columns.kinds) {
            self.open_cells = None;
            return Err(e);
        }
        Ok(BinaryNext::Row(BinaryRow {
            payload: self.last_packet(),
            kinds: &columns.kinds,
        }))
    }

    /// Sends `data` as (more of) parameter `param`'s value of statement
    /// `stmt` (`COM_STMT_SEND_LONG_DATA`), to be given as [`Param::Long`]
    /// in the next execute. The server does not answer; it reports a
    /// problem (a value over its `max_allowed_packet`) at the execute. Each
    /// call is one packet: a value larger than 16 MiB may go in one call
    /// (split into chunks) or in several.
    pub fn send_long_data(&mut self, stmt: u32, param: u16, data: &[u8]) -> Result<(), WireError> {
        self.send_command_with(COM_STMT_SEND_LONG_DATA, |out| {
            out.extend_from_slice(&stmt.to_le_bytes());
            out.extend_from_slice(&param.to_le_bytes());
            out.extend_from_slice(data);
        })
    }

    /// Drops the long data sent for `stmt` (`COM_STMT_RESET`) and reads the
    /// server's OK.
    pub fn reset_statement(&mut self, stmt: &Prepared) -> Result<OkInfo, WireError> {
        self.send_command(COM_STMT_RESET, &stmt.id.to_le_bytes())?;
        let caps = self.caps();
        loop {
            self.advance()?;
            let p = self.last_packet();
            return match p.first() {
                Some(0x00) => OkInfo::parse(p, caps),
                Some(0xff) => match parse_err(p, caps)? {
                    Some(e) => Err(WireError::Server(e)),
                    None => continue,
                },
                _ => Err(WireError::protocol(
                    "expected an OK packet after a statement reset",
                )),
            };
        }
    }

    /// Tells the server to forget statement `id` (`COM_STMT_CLOSE`). The
    /// server does not answer.
    pub fn close_statement(&mut self, id: u32) -> Result<(), WireError> {
        self.send_command(COM_STMT_CLOSE, &id.to_le_bytes())
    }
}

/// A connection's prepared statements, by statement text, at most
/// `capacity` of them: the one used longest ago is closed on the wire
/// (`COM_STMT_CLOSE`) to make room for a new one, so the server's count of
/// the session's statements (`Prepared_stmt_count`) stays bounded.
///
/// It belongs to one connection, beside its [`Framer`]. After a
/// `COM_RESET_CONNECTION` or a change of user the server has forgotten
/// every statement; [`StmtCache::clear`] forgets them here too, and an
/// execute of one the server reports as unknown (1243) prepares it again
/// once in any case.
#[derive(Debug)]
pub struct StmtCache {
    capacity: usize,
    /// Keyed by the statement's text, shared (`StmtCache::key`).
    entries: HashMap<std::sync::Arc<[u8]>, Entry>,
    /// Counts uses: each entry holds the count of its last use.
    clock: u64,
}

#[derive(Debug)]
struct Entry {
    stmt: Prepared,
    used: u64,
}

impl StmtCache {
    /// A cache of at most `capacity` statements (at least 1: the statement
    /// being run is always kept).
    pub fn new(capacity: usize) -> StmtCache {
        StmtCache {
            capacity: capacity.max(1),
            entries: HashMap::new(),
            clock: 0,
        }
    }

    /// The most statements it keeps.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The statements it holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Forgets every statement without telling the server (which has
    /// forgotten them: after `COM_RESET_CONNECTION`, `COM_CHANGE_USER`, or
    /// on a new connection).
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// The cache's own key for `sql`, if it holds a statement for it: a
    /// shared handle to the text, to find the statement again without a
    /// copy of the text (an execute sent now, its answer read later).
    pub fn key(&self, sql: &[u8]) -> Option<std::sync::Arc<[u8]>> {
        self.entries.get_key_value(sql).map(|(k, _)| k.clone())
    }

    /// The parameter count of the statement prepared for `sql`, if the
    /// cache holds one (nothing is sent, and its place in the cache does
    /// not change).
    pub fn param_count(&self, sql: &[u8]) -> Option<usize> {
        self.entries.get(sql).map(|e| e.stmt.param_count())
    }

    /// Closes the statement prepared for `sql`, if the cache holds one,
    /// on the wire, and forgets it.
    pub fn close<S: Read + Write>(
        &mut self,
        f: &mut Framer<S>,
        sql: &[u8],
    ) -> Result<(), WireError> {
        match self.entries.remove(sql) {
            Some(e) => f.close_statement(e.stmt.id),
            None => Ok(()),
        }
    }

    /// Closes every statement on the wire and forgets them.
    pub fn close_all<S: Read + Write>(&mut self, f: &mut Framer<S>) -> Result<(), WireError> {
        for (_, e) in self.entries.drain() {
            f.close_statement(e.stmt.id)?;
        }
        Ok(())
    }

    /// The statement prepared for `sql`: the cached one, or one prepared
    /// now (after closing the one used longest ago when the cache is
    /// full). A statement the server refuses is not cached, and the
    /// session is ready for the next command.
    pub fn prepare<S: Read + Write>(
        &mut self,
        f: &mut Framer<S>,
        sql: &[u8],
    ) -> Result<&mut Prepared, WireError> {
        self.clock += 1;
        let now = self.clock;
        if !self.entries.contains_key(sql) {
            // Room first: the server never holds more than `capacity` of
            // this session's statements, even for a moment (its
            // `max_prepared_stmt_count` is for all sessions together).
            if self.entries.len() >= self.capacity {
                let oldest = self
                    .entries
                    .iter()
                    .min_by_key(|(_, e)| e.used)
                    .map(|(k, _)| k.clone());
                if let Some(e) = oldest.and_then(|k| self.entries.remove(&k)) {
                    f.close_statement(e.stmt.id)?;
                }
            }
            let stmt = f.prepare(sql)?;
            self.entries.insert(sql.into(), Entry { stmt, used: now });
        }
        let e = self
            .entries
            .get_mut(sql)
            .ok_or_else(|| WireError::protocol("a cached statement vanished"))?;
        e.used = now;
        Ok(&mut e.stmt)
    }

    /// Runs `sql` with `params` through the cache: prepares it if needed,
    /// sends the execute and reads the start of its answer into `columns`
    /// (read the rest as after [`Framer::read_binary_response`]). When the
    /// server no longer knows the cached statement (1243: the session was
    /// reset), it is prepared again and the execute sent once more, unless
    /// a parameter is [`Param::Long`] (its data went to the forgotten
    /// statement: the error is returned).
    pub fn execute<S: Read + Write>(
        &mut self,
        f: &mut Framer<S>,
        sql: &[u8],
        params: &[Param<'_>],
        columns: &mut BinaryColumns,
    ) -> Result<Response, WireError> {
        let mut retried = false;
        loop {
            let stmt = self.prepare(f, sql)?;
            f.send_execute(stmt, params)?;
            match f.read_execute_response(stmt, columns) {
                Err(WireError::Server(e))
                    if e.code == ER_UNKNOWN_STMT_HANDLER
                        && !retried
                        && !params.iter().any(|p| matches!(p, Param::Long(_))) =>
                {
                    self.entries.remove(sql);
                    retried = true;
                }
                Err(e) => {
                    if let (WireError::Server(_), Some(e)) = (&e, self.entries.get_mut(sql)) {
                        // Whatever the server kept of the types, send them again.
                        e.stmt.bound.clear();
                    }
                    return Err(e);
                }
                Ok(r) => return Ok(r),
            }
        }
    }
}

impl StmtCache {
    /// The first half of [`StmtCache::execute`], for a caller that waits
    /// for the answer in its own event loop: prepares `sql` if the cache
    /// does not hold it (that round trip is waited for here) and sends the
    /// execute. Read the answer with [`StmtCache::read_execute_answer`]
    /// and the same `sql`, before any other command.
    pub fn send_execute<S: Read + Write>(
        &mut self,
        f: &mut Framer<S>,
        sql: &[u8],
        params: &[Param<'_>],
    ) -> Result<(), WireError> {
        let stmt = self.prepare(f, sql)?;
        f.send_execute(stmt, params)
    }

    /// The second half: the start of the answer to the execute of `sql`
    /// [`StmtCache::send_execute`] sent, as [`StmtCache::execute`] reads
    /// it. A statement the server no longer knows (1243) is not sent again
    /// here (its values are gone): the error is the caller's, and the next
    /// run prepares it anew.
    pub fn read_execute_answer<S: Read + Write>(
        &mut self,
        f: &mut Framer<S>,
        sql: &[u8],
        columns: &mut BinaryColumns,
    ) -> Result<Response, WireError> {
        let Some(e) = self.entries.get_mut(sql) else {
            return f.read_binary_response(columns);
        };
        match f.read_execute_response(&mut e.stmt, columns) {
            Err(WireError::Server(m)) => {
                if m.code == ER_UNKNOWN_STMT_HANDLER {
                    self.entries.remove(sql);
                } else {
                    e.stmt.bound.clear();
                }
                Err(WireError::Server(m))
            }
            other => other,
        }
    }
}

impl Prepared {
    /// Makes the next execute send the parameter types again (after one
    /// the server refused, whatever it kept).
    pub fn rebind(&mut self) {
        self.bound.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::packet::testing::{framer, packet};

    fn def(ty: u8, flags: u16) -> Vec<u8> {
        let mut p = Vec::new();
        for s in [&b"def"[..], b"db", b"t", b"t", b"c", b"c"] {
            p.push(s.len() as u8);
            p.extend_from_slice(s);
        }
        p.extend_from_slice(&[0x0c, 63, 0, 10, 0, 0, 0, ty]);
        p.extend_from_slice(&flags.to_le_bytes());
        p.extend_from_slice(&[0, 0, 0]);
        p
    }

    /// An answer read on a fresh framer (packets numbered from 0).
    fn answer(payloads: &[Vec<u8>]) -> Vec<u8> {
        answer_from(0, payloads)
    }

    /// The answer to a command this side sends (numbered from 1).
    fn answer_from(first: u8, payloads: &[Vec<u8>]) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, p) in payloads.iter().enumerate() {
            out.extend(packet(first + i as u8, p));
        }
        out
    }

    #[test]
    fn a_row_of_every_encoding_is_walked_by_type() {
        let caps = caps::PROTOCOL_41 | caps::DEPRECATE_EOF;
        let cols = [
            def(types::TINY, 0),
            def(types::TINY, UNSIGNED_FLAG),
            def(types::SHORT, 0),
            def(types::LONG, 0),
            def(types::LONGLONG, UNSIGNED_FLAG),
            def(types::FLOAT, 0),
            def(types::DOUBLE, 0),
            def(types::VAR_STRING, 0),
            def(types::DATE, 0),
            def(types::DATETIME, 0),
            def(types::TIME, 0),
            def(types::TIMESTAMP, 0),
        ];
        // 12 columns: a bitmap of 2 bytes; column 7 (the string) is NULL:
        // bit 9, byte 1 bit 1.
        let mut row = vec![0x00, 0, 0b10];
        row.push(0xff);
        row.push(200);
        row.extend_from_slice(&(-2i16).to_le_bytes());
        row.extend_from_slice(&(-3i32).to_le_bytes());
        row.extend_from_slice(&u64::MAX.to_le_bytes());
        row.extend_from_slice(&1.5f32.to_le_bytes());
        row.extend_from_slice(&(-2.25f64).to_le_bytes());
        row.extend_from_slice(&[4, 0xe8, 0x07, 12, 31]);
        row.extend_from_slice(&[11, 0xe8, 0x07, 1, 2, 3, 4, 5, 0x40, 0xe2, 0x01, 0]);
        row.extend_from_slice(&[12, 1, 2, 0, 0, 0, 3, 4, 5, 1, 0, 0, 0]);
        row.push(0);
        let mut payloads = vec![vec![12]];
        payloads.extend(cols.iter().cloned());
        payloads.push(row);
        payloads.push(vec![0xfe, 0, 0, 2, 0, 0, 0]);
        let mut f = framer(answer(&payloads), 5);
        f.caps = caps;
        let mut columns = BinaryColumns::new();
        assert_eq!(
            f.read_binary_response(&mut columns).unwrap(),
            Response::ResultSet
        );
        let BinaryNext::Row(r) = f.next_binary_row(&columns).unwrap() else {
            panic!("a row")
        };
        let got: Vec<Cell> = r.cells().collect();
        let dt = DateTime {
            date: Date {
                year: 2024,
                month: 1,
                day: 2,
            },
            hour: 3,
            minute: 4,
            second: 5,
            micros: 123_456,
        };
        assert_eq!(
            got,
            vec![
                Cell::Int(-1),
                Cell::UInt(200),
                Cell::Int(-2),
                Cell::Int(-3),
                Cell::UInt(u64::MAX),
                Cell::Float(1.5),
                Cell::Double(-2.25),
                Cell::Null,
                Cell::Date(Date {
                    year: 2024,
                    month: 12,
                    day: 31
                }),
                Cell::DateTime(dt),
                Cell::Time(Time {
                    negative: true,
                    days: 2,
                    hours: 3,
                    minutes: 4,
                    seconds: 5,
                    micros: 1
                }),
                Cell::DateTime(DateTime::default()),
            ]
        );
        assert!(matches!(
            f.next_binary_row(&columns).unwrap(),
            BinaryNext::End(_)
        ));
    }

    #[test]
    fn malformed_binary_rows_are_errors_not_panics() {
        let caps = caps::PROTOCOL_41 | caps::DEPRECATE_EOF;
        for (ty, row, what) in [
            (
                types::LONG,
                vec![0, 0, 1, 2],
                "packet ends inside a binary row's cell 0",
            ),
            (
                types::DATE,
                vec![0, 0, 5, 1, 2, 3, 4, 5],
                "temporal length of 5",
            ),
            (
                types::TIME,
                vec![0, 0, 4, 1, 2, 3, 4],
                "temporal length of 4",
            ),
            (types::BLOB, vec![0, 0, 3, b'a'], "packet ends inside"),
            (
                types::BLOB,
                vec![0, 0, 0xfb],
                "starts with 0xFB, not a length",
            ),
            (types::TINY, vec![0, 0, 1, 9], "1 bytes after its 1 cells"),
            (types::TINY, vec![0], "shorter than its NULL bitmap"),
            (types::TINY, vec![3, 0, 1], "starts with 0x03"),
        ] {
            let mut f = framer(answer(&[vec![1], def(ty, 0), row]), 64);
            f.caps = caps;
            let mut columns = BinaryColumns::new();
            f.read_binary_response(&mut columns).unwrap();
            let e = f.next_binary_row(&columns).unwrap_err();
            assert!(e.to_string().contains(what), "{ty}: {e}");
            assert!(e.is_fatal());
        }
    }

    #[test]
    fn a_prepare_answer_with_and_without_eof_packets() {
        let ok = vec![0, 9, 0, 0, 0, 2, 0, 1, 0, 0, 3, 0];
        let eof = vec![0xfe, 0, 0, 2, 0];
        for (caps, answer_) in [
            (
                caps::PROTOCOL_41,
                answer_from(
                    1,
                    &[
                        ok.clone(),
                        def(types::VAR_STRING, 0),
                        eof.clone(),
                        def(types::LONG, 0),
                        def(types::BLOB, 0),
                        eof,
                    ],
                ),
            ),
            (
                caps::PROTOCOL_41 | caps::DEPRECATE_EOF,
                answer_from(
                    1,
                    &[
                        ok,
                        def(types::VAR_STRING, 0),
                        def(types::LONG, 0),
                        def(types::BLOB, 0),
                    ],
                ),
            ),
        ] {
            let mut f = framer(answer_, 3);
            f.caps = caps;
            let stmt = f.prepare(b"SELECT ?, b FROM t").unwrap();
            assert_eq!(
                (stmt.id(), stmt.param_count(), stmt.columns().len()),
                (9, 1, 2)
            );
            assert_eq!(stmt.warnings(), 3);
            assert_eq!(
                stmt.columns().get(1).unwrap().unwrap().column_type,
                types::BLOB
            );
            assert!(!f.has_buffered_input());
        }
        // Refused: the server's error, nothing after it.
        let mut err = vec![0xff, 0x28, 0x04, b'#'];
        err.extend_from_slice(b"42000bad");
        let mut f = framer(answer_from(1, &[err]), 64);
        f.caps = caps::PROTOCOL_41;
        match f.prepare(b"SELEC") {
            Err(WireError::Server(e)) => assert_eq!(e.code, 1064),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_execute_sends_types_only_when_they_change() {
        let mut stmt = Prepared {
            id: 7,
            params: Columns::new(),
            columns: BinaryColumns::new(),
            warnings: 0,
            bound: Vec::new(),
        };
        stmt.params.push(&def(types::VAR_STRING, 0));
        stmt.params.push(&def(types::VAR_STRING, 0));
        let mut f = framer(Vec::new(), 1);
        let e = f.send_execute(&mut stmt, &[Param::Null]).unwrap_err();
        assert!(matches!(e, WireError::Refused(_)) && !e.is_fatal(), "{e}");
        let params = [Param::Null, Param::Bytes(b"hi", types::STRING)];
        f.send_execute(&mut stmt, &params).unwrap();
        f.send_execute(&mut stmt, &params).unwrap();
        let w = std::mem::take(&mut f.stream_mut().written);
        let head = [0x17, 7, 0, 0, 0, 0, 1, 0, 0, 0, 0b01];
        let mut first = head.to_vec();
        first.extend_from_slice(&[1, types::NULL, 0, types::STRING, 0, 2, b'h', b'i']);
        let mut second = head.to_vec();
        second.extend_from_slice(&[0, 2, b'h', b'i']);
        let mut want = packet(0, &first);
        want.extend(packet(0, &second));
        assert_eq!(w, want);
    }
}
