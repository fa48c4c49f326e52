//! `staunch_rows`: a query result, read whole by `staunch_conn_query`, and its
//! typed getters.

use std::ffi::c_char;

use mysql::consts::{ColumnFlags, ColumnType};
use mysql::{Column, Value};

use super::error::*;
use super::values::{staunch_datetime, staunch_time};
use super::{arg, arg_mut, guard, guard_value, Out};

/// The type of a result column, from the server's column metadata. It tells
/// which getter reads the column's values.
pub type staunch_column_type = u32;
/// The column is always NULL (e.g. `SELECT NULL`).
pub const STAUNCH_COLUMN_NULL: staunch_column_type = 0;
/// Signed integers (TINYINT to BIGINT, YEAR): `staunch_rows_get_i64`.
pub const STAUNCH_COLUMN_INT: staunch_column_type = 1;
/// UNSIGNED integers: `staunch_rows_get_u64` (`_get_i64` if it fits).
pub const STAUNCH_COLUMN_UINT: staunch_column_type = 2;
/// FLOAT and DOUBLE: `staunch_rows_get_double` (a FLOAT is widened exactly).
pub const STAUNCH_COLUMN_DOUBLE: staunch_column_type = 3;
/// DECIMAL: exact, as text ("12.50") with `staunch_rows_get_text`.
pub const STAUNCH_COLUMN_DECIMAL: staunch_column_type = 4;
/// Character data (CHAR, VARCHAR, TEXT, ENUM, SET, JSON):
/// `staunch_rows_get_text` (or `_get_bytes`).
pub const STAUNCH_COLUMN_TEXT: staunch_column_type = 5;
/// Binary data (BINARY, VARBINARY, BLOB, BIT, GEOMETRY): `staunch_rows_get_bytes`.
pub const STAUNCH_COLUMN_BYTES: staunch_column_type = 6;
/// DATE: `staunch_rows_get_datetime` (time fields 0).
pub const STAUNCH_COLUMN_DATE: staunch_column_type = 7;
/// DATETIME and TIMESTAMP: `staunch_rows_get_datetime`.
pub const STAUNCH_COLUMN_DATETIME: staunch_column_type = 8;
/// TIME: `staunch_rows_get_time`.
pub const STAUNCH_COLUMN_TIME: staunch_column_type = 9;

/// The binary collation: a string column with it holds bytes, not text.
const BINARY_CHARSET: u16 = 63;

pub(crate) fn column_type(c: &Column) -> staunch_column_type {
    use ColumnType::*;
    let unsigned = c.flags().contains(ColumnFlags::UNSIGNED_FLAG);
    match c.column_type() {
        MYSQL_TYPE_NULL => STAUNCH_COLUMN_NULL,
        MYSQL_TYPE_TINY | MYSQL_TYPE_SHORT | MYSQL_TYPE_LONG | MYSQL_TYPE_LONGLONG
        | MYSQL_TYPE_INT24 | MYSQL_TYPE_YEAR => {
            if unsigned {
                STAUNCH_COLUMN_UINT
            } else {
                STAUNCH_COLUMN_INT
            }
        }
        MYSQL_TYPE_FLOAT | MYSQL_TYPE_DOUBLE => STAUNCH_COLUMN_DOUBLE,
        MYSQL_TYPE_DECIMAL | MYSQL_TYPE_NEWDECIMAL => STAUNCH_COLUMN_DECIMAL,
        MYSQL_TYPE_DATE | MYSQL_TYPE_NEWDATE => STAUNCH_COLUMN_DATE,
        MYSQL_TYPE_DATETIME
        | MYSQL_TYPE_DATETIME2
        | MYSQL_TYPE_TIMESTAMP
        | MYSQL_TYPE_TIMESTAMP2 => STAUNCH_COLUMN_DATETIME,
        MYSQL_TYPE_TIME | MYSQL_TYPE_TIME2 => STAUNCH_COLUMN_TIME,
        MYSQL_TYPE_VARCHAR
        | MYSQL_TYPE_VAR_STRING
        | MYSQL_TYPE_STRING
        | MYSQL_TYPE_TINY_BLOB
        | MYSQL_TYPE_MEDIUM_BLOB
        | MYSQL_TYPE_LONG_BLOB
        | MYSQL_TYPE_BLOB
        | MYSQL_TYPE_ENUM
        | MYSQL_TYPE_SET
        | MYSQL_TYPE_JSON => {
            if c.character_set() == BINARY_CHARSET {
                STAUNCH_COLUMN_BYTES
            } else {
                STAUNCH_COLUMN_TEXT
            }
        }
        _ => STAUNCH_COLUMN_BYTES,
    }
}

fn type_name(t: staunch_column_type) -> &'static str {
    match t {
        STAUNCH_COLUMN_NULL => "NULL",
        STAUNCH_COLUMN_INT => "INT",
        STAUNCH_COLUMN_UINT => "UINT",
        STAUNCH_COLUMN_DOUBLE => "DOUBLE",
        STAUNCH_COLUMN_DECIMAL => "DECIMAL",
        STAUNCH_COLUMN_TEXT => "TEXT",
        STAUNCH_COLUMN_BYTES => "BYTES",
        STAUNCH_COLUMN_DATE => "DATE",
        STAUNCH_COLUMN_DATETIME => "DATETIME",
        STAUNCH_COLUMN_TIME => "TIME",
        _ => "?",
    }
}

fn getter_for(t: staunch_column_type) -> &'static str {
    match t {
        STAUNCH_COLUMN_INT => "staunch_rows_get_i64",
        STAUNCH_COLUMN_UINT => "staunch_rows_get_u64",
        STAUNCH_COLUMN_DOUBLE => "staunch_rows_get_double",
        STAUNCH_COLUMN_DECIMAL | STAUNCH_COLUMN_TEXT => "staunch_rows_get_text",
        STAUNCH_COLUMN_BYTES => "staunch_rows_get_bytes",
        STAUNCH_COLUMN_DATE | STAUNCH_COLUMN_DATETIME => "staunch_rows_get_datetime",
        STAUNCH_COLUMN_TIME => "staunch_rows_get_time",
        _ => "staunch_rows_is_null",
    }
}

/// One column: its name (NUL-terminated; the length excludes the NUL) and type.
struct Col {
    name: Vec<u8>,
    ctype: staunch_column_type,
}

/// One value. Byte strings carry a trailing NUL that their length excludes,
/// so text can be handed to C as a C string too.
enum Cell {
    Null,
    Int(i64),
    UInt(u64),
    Double(f64),
    Bytes(Vec<u8>),
    Date(staunch_datetime),
    Time(staunch_time),
}

impl Cell {
    fn from_value(v: Value) -> Cell {
        match v {
            Value::NULL => Cell::Null,
            Value::Int(i) => Cell::Int(i),
            Value::UInt(u) => Cell::UInt(u),
            Value::Float(f) => Cell::Double(f64::from(f)),
            Value::Double(d) => Cell::Double(d),
            Value::Bytes(mut b) => {
                b.push(0);
                Cell::Bytes(b)
            }
            Value::Date(year, month, day, hour, minute, second, microsecond) => {
                Cell::Date(staunch_datetime {
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
                Cell::Time(staunch_time {
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

    fn what(&self) -> &'static str {
        match self {
            Cell::Null => "NULL",
            Cell::Int(_) => "a signed integer",
            Cell::UInt(_) => "an unsigned integer",
            Cell::Double(_) => "a double",
            Cell::Bytes(_) => "a string",
            Cell::Date(_) => "a date/datetime",
            Cell::Time(_) => "a time",
        }
    }
}

/// The result of `staunch_conn_query`, read whole: column metadata, the rows,
/// and a cursor. Owns all its data (it does not borrow the connection). Free
/// with `staunch_rows_free`. Not thread-safe: use it from one thread at a time
/// (it may move between threads).
pub struct staunch_rows {
    columns: Vec<Col>,
    rows: std::vec::IntoIter<Vec<Cell>>,
    current: Option<Vec<Cell>>,
    affected_rows: u64,
    last_insert_id: u64,
}

impl std::fmt::Debug for staunch_rows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("staunch_rows")
            .field("columns", &self.columns.len())
            .field("rows_left", &self.rows.len())
            .finish()
    }
}

/// Reads every result set of `r`: keeps the first one with columns.
pub(crate) fn collect_rows<P: mysql::prelude::Protocol>(
    r: &mut mysql::QueryResult<'_, '_, '_, P>,
) -> mysql::Result<staunch_rows> {
    let mut columns: Option<Vec<Col>> = None;
    let mut rows = Vec::new();
    let (mut affected, mut last_id) = (0u64, 0u64);
    while let Some(mut set) = r.iter() {
        affected = affected.saturating_add(set.affected_rows());
        if let Some(id) = set.last_insert_id().filter(|id| *id != 0) {
            last_id = id;
        }
        let keep = columns.is_none() && !set.columns().as_ref().is_empty();
        if keep {
            columns = Some(
                set.columns()
                    .as_ref()
                    .iter()
                    .map(|c| {
                        let mut name = c.name_ref().to_vec();
                        name.push(0);
                        Col {
                            name,
                            ctype: column_type(c),
                        }
                    })
                    .collect(),
            );
        }
        for row in set.by_ref() {
            let row = row?;
            if keep {
                rows.push(row.unwrap().into_iter().map(Cell::from_value).collect());
            }
        }
    }
    Ok(staunch_rows {
        columns: columns.unwrap_or_default(),
        rows: rows.into_iter(),
        current: None,
        affected_rows: affected,
        last_insert_id: last_id,
    })
}

impl staunch_rows {
    /// A row set built from columns `(name, type)` and values as the server
    /// would send them (each row as long as the column list), for the fuzz
    /// targets and tests.
    #[cfg(feature = "fuzzing")]
    pub(crate) fn from_values(
        columns: Vec<(Vec<u8>, staunch_column_type)>,
        rows: Vec<Vec<Value>>,
    ) -> staunch_rows {
        staunch_rows {
            columns: columns
                .into_iter()
                .map(|(mut name, ctype)| {
                    name.push(0);
                    Col { name, ctype }
                })
                .collect(),
            rows: rows
                .into_iter()
                .map(|r| r.into_iter().map(Cell::from_value).collect())
                .collect::<Vec<_>>()
                .into_iter(),
            current: None,
            affected_rows: 0,
            last_insert_id: 0,
        }
    }

    fn col(&self, idx: usize) -> Result<&Col, Failure> {
        self.columns.get(idx).ok_or_else(|| {
            Failure::new(
                STAUNCH_BAD_INDEX,
                format!(
                    "column index {idx} is out of range: the result has {} column(s)",
                    self.columns.len()
                ),
            )
        })
    }

    /// The cell of the current row in column `idx`.
    fn cell(&self, idx: usize) -> Result<(&Col, &Cell), Failure> {
        let col = self.col(idx)?;
        let row = self.current.as_ref().ok_or_else(|| {
            Failure::new(
                STAUNCH_NO_ROW,
                "no current row: call staunch_rows_next first (and only read while it reports a row)",
            )
        })?;
        let cell = row.get(idx).ok_or_else(|| {
            Failure::new(STAUNCH_INTERNAL, format!("row shorter than column {idx}"))
        })?;
        Ok((col, cell))
    }

    /// The cell, failing with STAUNCH_NULL_VALUE on NULL.
    fn value(&self, idx: usize, getter: &str) -> Result<(&Col, &Cell), Failure> {
        let (col, cell) = self.cell(idx)?;
        if let Cell::Null = cell {
            return Err(Failure::new(
                STAUNCH_NULL_VALUE,
                format!(
                    "{getter}: column {idx} ({}) is NULL in this row; test with staunch_rows_is_null",
                    col_name(col)
                ),
            ));
        }
        Ok((col, cell))
    }
}

fn col_name(c: &Col) -> String {
    String::from_utf8_lossy(&c.name[..c.name.len() - 1]).into_owned()
}

fn wrong_type(getter: &str, idx: usize, col: &Col, cell: &Cell) -> Failure {
    Failure::new(
        STAUNCH_WRONG_TYPE,
        format!(
            "{getter}: column {idx} ({}) is {} and holds {}; read it with {}",
            col_name(col),
            type_name(col.ctype),
            cell.what(),
            getter_for(col.ctype)
        ),
    )
}

/// The number of columns (0 for a statement without a result set, or a NULL
/// `rows`). Never blocks. One thread at a time per row set (as for every
/// staunch_rows function).
#[no_mangle]
pub extern "C" fn staunch_rows_column_count(rows: *const staunch_rows) -> usize {
    guard_value(0, || {
        // SAFETY: NULL or a live row set (header contract).
        unsafe { rows.as_ref() }.map_or(0, |r| r.columns.len())
    })
}

/// The name of column `idx` (its alias if the query gave one): `*name`
/// receives a NUL-terminated UTF-8 string owned by `rows`, valid until
/// `staunch_rows_free`; `*len` (may be NULL) its length without the NUL.
/// STAUNCH_BAD_INDEX if `idx` is not below the column count. Never blocks;
/// one thread at a time per row set.
#[no_mangle]
pub extern "C" fn staunch_rows_column_name(
    rows: *const staunch_rows,
    idx: usize,
    name: *mut *const c_char,
    len: *mut usize,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live row set (header contract).
        let r = unsafe { arg(rows, "rows") }?;
        let name = Out::new(name, "name")?;
        let col = r.col(idx)?;
        name.set(col.name.as_ptr().cast());
        super::set_opt(len, col.name.len() - 1);
        Ok(())
    })
}

/// The type of column `idx` (a STAUNCH_COLUMN_* value) in `*out`.
/// STAUNCH_BAD_INDEX if `idx` is not below the column count. Never blocks;
/// one thread at a time per row set.
#[no_mangle]
pub extern "C" fn staunch_rows_column_type(
    rows: *const staunch_rows,
    idx: usize,
    out: *mut staunch_column_type,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live row set (header contract).
        let r = unsafe { arg(rows, "rows") }?;
        let out = Out::new(out, "out")?;
        out.set(r.col(idx)?.ctype);
        Ok(())
    })
}

/// Moves to the next row: `*has_row` receives true if there is one, false
/// at the end (then getters fail with STAUNCH_NO_ROW). Pointers obtained from
/// getters for the previous row become invalid. Never blocks (the rows are
/// already in memory); one thread at a time per row set.
#[no_mangle]
pub extern "C" fn staunch_rows_next(
    rows: *mut staunch_rows,
    has_row: *mut bool,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live row set used by one thread (contract).
        let r = unsafe { arg_mut(rows, "rows") }?;
        let has_row = Out::new(has_row, "has_row")?;
        r.current = r.rows.next();
        has_row.set(r.current.is_some());
        Ok(())
    })
}

/// `*out` receives whether column `idx` of the current row is SQL NULL.
/// STAUNCH_BAD_INDEX, STAUNCH_NO_ROW as for the getters. Never blocks; one
/// thread at a time per row set.
#[no_mangle]
pub extern "C" fn staunch_rows_is_null(
    rows: *const staunch_rows,
    idx: usize,
    out: *mut bool,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live row set (header contract).
        let r = unsafe { arg(rows, "rows") }?;
        let out = Out::new(out, "out")?;
        let (_, cell) = r.cell(idx)?;
        out.set(matches!(cell, Cell::Null));
        Ok(())
    })
}

/// Reads an integer column of the current row into `*out`: INT columns, and
/// UINT ones when the value fits (else STAUNCH_OUT_OF_RANGE). Fails with
/// STAUNCH_NULL_VALUE on NULL, STAUNCH_WRONG_TYPE for other columns (the
/// message names the right getter), STAUNCH_BAD_INDEX, STAUNCH_NO_ROW. The
/// getters never block; one thread at a time per row set.
#[no_mangle]
pub extern "C" fn staunch_rows_get_i64(
    rows: *const staunch_rows,
    idx: usize,
    out: *mut i64,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        const G: &str = "staunch_rows_get_i64";
        // SAFETY: NULL or a live row set (header contract).
        let r = unsafe { arg(rows, "rows") }?;
        let out = Out::new(out, "out")?;
        let (col, cell) = r.value(idx, G)?;
        let v = match cell {
            Cell::Int(i) => *i,
            Cell::UInt(u) => i64::try_from(*u).map_err(|_| {
                Failure::new(
                    STAUNCH_OUT_OF_RANGE,
                    format!(
                        "{G}: column {idx} holds {u}, above INT64_MAX; use staunch_rows_get_u64"
                    ),
                )
            })?,
            _ => return Err(wrong_type(G, idx, col, cell)),
        };
        out.set(v);
        Ok(())
    })
}

/// Reads an unsigned integer column of the current row into `*out`: UINT
/// columns, and INT ones when the value is not negative (else
/// STAUNCH_OUT_OF_RANGE). Other errors as for `staunch_rows_get_i64`.
#[no_mangle]
pub extern "C" fn staunch_rows_get_u64(
    rows: *const staunch_rows,
    idx: usize,
    out: *mut u64,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        const G: &str = "staunch_rows_get_u64";
        // SAFETY: NULL or a live row set (header contract).
        let r = unsafe { arg(rows, "rows") }?;
        let out = Out::new(out, "out")?;
        let (col, cell) = r.value(idx, G)?;
        let v = match cell {
            Cell::UInt(u) => *u,
            Cell::Int(i) => u64::try_from(*i).map_err(|_| {
                Failure::new(
                    STAUNCH_OUT_OF_RANGE,
                    format!(
                        "{G}: column {idx} holds {i}, which is negative; use staunch_rows_get_i64"
                    ),
                )
            })?,
            _ => return Err(wrong_type(G, idx, col, cell)),
        };
        out.set(v);
        Ok(())
    })
}

/// Reads a DOUBLE (or FLOAT, widened exactly) column of the current row into
/// `*out`. Integers and DECIMAL are not converted (STAUNCH_WRONG_TYPE): read
/// DECIMAL as text. Other errors as for `staunch_rows_get_i64`.
#[no_mangle]
pub extern "C" fn staunch_rows_get_double(
    rows: *const staunch_rows,
    idx: usize,
    out: *mut f64,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        const G: &str = "staunch_rows_get_double";
        // SAFETY: NULL or a live row set (header contract).
        let r = unsafe { arg(rows, "rows") }?;
        let out = Out::new(out, "out")?;
        let (col, cell) = r.value(idx, G)?;
        match cell {
            Cell::Double(d) => out.set(*d),
            _ => return Err(wrong_type(G, idx, col, cell)),
        }
        Ok(())
    })
}

/// Reads a TEXT or DECIMAL column of the current row: `*ptr` receives UTF-8
/// text, NUL-terminated (but it may contain NULs: use `*len`), owned by
/// `rows` and valid until the next `staunch_rows_next` or `staunch_rows_free`;
/// `*len` (may be NULL) its length in bytes without the NUL. BYTES columns
/// fail with STAUNCH_WRONG_TYPE (use `staunch_rows_get_bytes`); text that is
/// not UTF-8 with STAUNCH_INVALID_UTF8. Other errors as for
/// `staunch_rows_get_i64`.
#[no_mangle]
pub extern "C" fn staunch_rows_get_text(
    rows: *const staunch_rows,
    idx: usize,
    ptr: *mut *const c_char,
    len: *mut usize,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        const G: &str = "staunch_rows_get_text";
        // SAFETY: NULL or a live row set (header contract).
        let r = unsafe { arg(rows, "rows") }?;
        let ptr = Out::new(ptr, "ptr")?;
        let (col, cell) = r.value(idx, G)?;
        match cell {
            Cell::Bytes(b) if col.ctype != STAUNCH_COLUMN_BYTES => {
                let text = &b[..b.len() - 1];
                if let Err(e) = std::str::from_utf8(text) {
                    return Err(Failure::new(
                        STAUNCH_INVALID_UTF8,
                        format!(
                            "{G}: column {idx} ({}) is not valid UTF-8 (bad byte at offset {}); use staunch_rows_get_bytes",
                            col_name(col),
                            e.valid_up_to()
                        ),
                    ));
                }
                ptr.set(b.as_ptr().cast());
                super::set_opt(len, text.len());
            }
            _ => return Err(wrong_type(G, idx, col, cell)),
        }
        Ok(())
    })
}

/// Reads the bytes of a string-valued column of the current row (BYTES, but
/// also TEXT and DECIMAL, as their UTF-8 bytes): `*ptr` receives the data
/// (followed by a NUL not counted in the length; never NULL, even for empty
/// data), owned by `rows`, valid until the next `staunch_rows_next` or
/// `staunch_rows_free`; `*len` (may be NULL) its length. Other errors as for
/// `staunch_rows_get_i64`.
#[no_mangle]
pub extern "C" fn staunch_rows_get_bytes(
    rows: *const staunch_rows,
    idx: usize,
    ptr: *mut *const u8,
    len: *mut usize,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        const G: &str = "staunch_rows_get_bytes";
        // SAFETY: NULL or a live row set (header contract).
        let r = unsafe { arg(rows, "rows") }?;
        let ptr = Out::new(ptr, "ptr")?;
        let (col, cell) = r.value(idx, G)?;
        match cell {
            Cell::Bytes(b) => {
                ptr.set(b.as_ptr());
                super::set_opt(len, b.len() - 1);
            }
            _ => return Err(wrong_type(G, idx, col, cell)),
        }
        Ok(())
    })
}

/// Reads a DATE, DATETIME or TIMESTAMP column of the current row into `*out`
/// (DATE: time fields 0). Other errors as for `staunch_rows_get_i64`.
#[no_mangle]
pub extern "C" fn staunch_rows_get_datetime(
    rows: *const staunch_rows,
    idx: usize,
    out: *mut staunch_datetime,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        const G: &str = "staunch_rows_get_datetime";
        // SAFETY: NULL or a live row set (header contract).
        let r = unsafe { arg(rows, "rows") }?;
        let out = Out::new(out, "out")?;
        let (col, cell) = r.value(idx, G)?;
        match cell {
            Cell::Date(d) => out.set(*d),
            _ => return Err(wrong_type(G, idx, col, cell)),
        }
        Ok(())
    })
}

/// Reads a TIME column of the current row into `*out`. Other errors as for
/// `staunch_rows_get_i64`.
#[no_mangle]
pub extern "C" fn staunch_rows_get_time(
    rows: *const staunch_rows,
    idx: usize,
    out: *mut staunch_time,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        const G: &str = "staunch_rows_get_time";
        // SAFETY: NULL or a live row set (header contract).
        let r = unsafe { arg(rows, "rows") }?;
        let out = Out::new(out, "out")?;
        let (col, cell) = r.value(idx, G)?;
        match cell {
            Cell::Time(t) => out.set(*t),
            _ => return Err(wrong_type(G, idx, col, cell)),
        }
        Ok(())
    })
}

/// The number of rows the statement affected, as the server reported it (0
/// for a plain SELECT, or a NULL `rows`). Never blocks; one thread at a time
/// per row set.
#[no_mangle]
pub extern "C" fn staunch_rows_affected_rows(rows: *const staunch_rows) -> u64 {
    guard_value(0, || {
        // SAFETY: NULL or a live row set (header contract).
        unsafe { rows.as_ref() }.map_or(0, |r| r.affected_rows)
    })
}

/// The AUTO_INCREMENT id the statement generated, or 0 (also for a NULL
/// `rows`). Never blocks; one thread at a time per row set.
#[no_mangle]
pub extern "C" fn staunch_rows_last_insert_id(rows: *const staunch_rows) -> u64 {
    guard_value(0, || {
        // SAFETY: NULL or a live row set (header contract).
        unsafe { rows.as_ref() }.map_or(0, |r| r.last_insert_id)
    })
}

/// Frees a row set. NULL is a no-op. Pointers obtained from it become
/// invalid. Never blocks. Must be the last call on the row set.
#[no_mangle]
pub extern "C" fn staunch_rows_free(rows: *mut staunch_rows) {
    guard_value((), || {
        if !rows.is_null() {
            // SAFETY: created by staunch_conn_query, freed once (contract).
            drop(unsafe { Box::from_raw(rows) });
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ptr;

    /// One row: an INT, an UNSIGNED above INT64_MAX, a TEXT, a NULL, BYTES.
    fn sample() -> staunch_rows {
        let col = |name: &str, ctype| Col {
            name: [name.as_bytes(), b"\0"].concat(),
            ctype,
        };
        staunch_rows {
            columns: vec![
                col("i", STAUNCH_COLUMN_INT),
                col("u", STAUNCH_COLUMN_UINT),
                col("t", STAUNCH_COLUMN_TEXT),
                col("n", STAUNCH_COLUMN_INT),
                col("b", STAUNCH_COLUMN_BYTES),
            ],
            rows: vec![vec![
                Cell::from_value(Value::Int(-5)),
                Cell::from_value(Value::UInt(u64::MAX)),
                Cell::from_value(Value::Bytes(b"caf\xc3\xa9".to_vec())),
                Cell::from_value(Value::NULL),
                Cell::from_value(Value::Bytes(vec![0, 1, 0])),
            ]]
            .into_iter(),
            current: None,
            affected_rows: 0,
            last_insert_id: 0,
        }
    }

    fn status_of(f: impl FnOnce(*mut *mut staunch_error) -> staunch_status) -> staunch_status {
        let mut err = ptr::null_mut();
        let st = f(&mut err);
        assert_eq!(st == STAUNCH_OK, err.is_null());
        staunch_error_free(err);
        st
    }

    #[test]
    fn getters_check_row_index_type_and_null() {
        let rows = Box::into_raw(Box::new(sample()));
        let mut i = 7i64;
        assert_eq!(
            status_of(|e| staunch_rows_get_i64(rows, 0, &mut i, e)),
            STAUNCH_NO_ROW
        );
        let mut has = false;
        assert_eq!(
            status_of(|e| staunch_rows_next(rows, &mut has, e)),
            STAUNCH_OK
        );
        assert!(has);
        assert_eq!(
            status_of(|e| staunch_rows_get_i64(rows, 0, &mut i, e)),
            STAUNCH_OK
        );
        assert_eq!(i, -5);
        assert_eq!(
            status_of(|e| staunch_rows_get_i64(rows, 1, &mut i, e)),
            STAUNCH_OUT_OF_RANGE
        );
        assert_eq!(
            status_of(|e| staunch_rows_get_i64(rows, 5, &mut i, e)),
            STAUNCH_BAD_INDEX
        );
        assert_eq!(
            status_of(|e| staunch_rows_get_i64(rows, 2, &mut i, e)),
            STAUNCH_WRONG_TYPE
        );
        assert_eq!(
            status_of(|e| staunch_rows_get_i64(rows, 3, &mut i, e)),
            STAUNCH_NULL_VALUE
        );
        assert_eq!(i, -5, "out-parameter untouched on failure");
        let mut u = 0u64;
        assert_eq!(
            status_of(|e| staunch_rows_get_u64(rows, 0, &mut u, e)),
            STAUNCH_OUT_OF_RANGE
        );
        let (mut p, mut len) = (ptr::null(), 0usize);
        assert_eq!(
            status_of(|e| staunch_rows_get_text(rows, 2, &mut p, &mut len, e)),
            STAUNCH_OK
        );
        // SAFETY: valid until the next staunch_rows_next.
        let text = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len + 1) };
        assert_eq!(text, b"caf\xc3\xa9\0");
        assert_eq!(
            status_of(|e| staunch_rows_get_text(rows, 4, &mut p, &mut len, e)),
            STAUNCH_WRONG_TYPE
        );
        let mut b = ptr::null();
        assert_eq!(
            status_of(|e| staunch_rows_get_bytes(rows, 4, &mut b, &mut len, e)),
            STAUNCH_OK
        );
        // SAFETY: as above.
        assert_eq!(unsafe { std::slice::from_raw_parts(b, len) }, &[0, 1, 0]);
        assert_eq!(
            status_of(|e| staunch_rows_next(rows, &mut has, e)),
            STAUNCH_OK
        );
        assert!(!has);
        assert_eq!(
            status_of(|e| staunch_rows_get_i64(rows, 0, &mut i, e)),
            STAUNCH_NO_ROW
        );
        staunch_rows_free(rows);
        staunch_rows_free(ptr::null_mut());
    }
}
