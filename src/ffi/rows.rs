//! `staunch_rows`: the answer to a query, read whole (buffered) or as it
//! arrives (streaming), with its result sets, column metadata, typed getters
//! and a bulk getter.
//!
//! The answer itself, its result sets and its cursor are the core's
//! (`client::Answer`); this file checks the C caller's arguments and
//! converts. A buffered row set owns all its data. A streaming one holds
//! the connection while its rows are being read (`client/stream.rs`): the
//! connection refuses other calls until the last result set is read to its
//! end or the row set is freed, which gives it back.

use std::ffi::{c_char, c_int};
use std::ptr::addr_of_mut;

use super::error::*;
use super::values::{staunch_datetime, staunch_time, staunch_value};
use super::{arg, arg_mut, copy_sized, guard, guard_value, Out};
use crate::client::answer::{bytes_with_nul, Cell, Col, DateTime, Kind, Time};
use crate::client::rows::Answer;

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

/// The C column type of server metadata `c`.
#[cfg(feature = "fuzzing")]
pub(crate) fn column_type(c: &mysql_common::packets::Column) -> staunch_column_type {
    Kind::of(c) as staunch_column_type
}

fn getter_for(k: Kind) -> &'static str {
    match k {
        Kind::Int => "staunch_rows_get_i64",
        Kind::UInt => "staunch_rows_get_u64",
        Kind::Double => "staunch_rows_get_double",
        Kind::Decimal | Kind::Text => "staunch_rows_get_text",
        Kind::Bytes => "staunch_rows_get_bytes",
        Kind::Date | Kind::DateTime => "staunch_rows_get_datetime",
        Kind::Time => "staunch_rows_get_time",
        Kind::Null => "staunch_rows_is_null",
    }
}

/// Writes `d` at `p` field by field over zeroed bytes, so that its padding
/// byte is zero too: C callers compare whole structs (`memcmp`), and
/// valgrind checks that every byte they read was written.
///
/// # Safety
/// `p` is valid for writing a `staunch_datetime`.
unsafe fn write_datetime(p: *mut staunch_datetime, d: DateTime) {
    // SAFETY: per this function's contract; each field pointer is in bounds.
    unsafe {
        p.write_bytes(0, 1);
        addr_of_mut!((*p).year).write(d.year);
        addr_of_mut!((*p).month).write(d.month);
        addr_of_mut!((*p).day).write(d.day);
        addr_of_mut!((*p).hour).write(d.hour);
        addr_of_mut!((*p).minute).write(d.minute);
        addr_of_mut!((*p).second).write(d.second);
        addr_of_mut!((*p).microsecond).write(d.microsecond);
    }
}

/// As [`write_datetime`], for a TIME (its padding bytes zero).
///
/// # Safety
/// `p` is valid for writing a `staunch_time`.
unsafe fn write_time(p: *mut staunch_time, t: Time) {
    // SAFETY: per this function's contract; each field pointer is in bounds.
    unsafe {
        p.write_bytes(0, 1);
        addr_of_mut!((*p).negative).write(t.negative);
        addr_of_mut!((*p).days).write(t.days);
        addr_of_mut!((*p).hours).write(t.hours);
        addr_of_mut!((*p).minutes).write(t.minutes);
        addr_of_mut!((*p).seconds).write(t.seconds);
        addr_of_mut!((*p).microseconds).write(t.microseconds);
    }
}

/// What the server says of one result column, for drivers (Python's
/// `cursor.description`, JDBC's `ResultSetMetaData`). Filled by
/// `staunch_rows_column_info`: set `size` to `sizeof(staunch_column_info)`
/// first; fields added in later versions go at the end, so a caller built
/// against an older header gets the fields it knows. The strings are
/// NUL-terminated UTF-8, owned by the row set and valid until it is freed;
/// each `_len` excludes the NUL.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct staunch_column_info {
    /// The caller's `sizeof(staunch_column_info)` (the fields that fit in it
    /// are written).
    pub size: usize,
    /// staunch's type: which getter reads the column (STAUNCH_COLUMN_*).
    pub column_type: staunch_column_type,
    /// The MySQL type code (`enum_field_types`: 1 TINY, 4 FLOAT, 5 DOUBLE,
    /// 7 TIMESTAMP, 10 DATE, 12 DATETIME, 13 YEAR, 16 BIT, 245 JSON, 246
    /// NEWDECIMAL, 252 BLOB/TEXT, 253 VAR_STRING, 254 STRING, ...).
    pub type_code: u32,
    /// The MySQL column flags: 1 NOT NULL, 2 PRIMARY KEY, 4 UNIQUE KEY,
    /// 8 MULTIPLE KEY, 16 BLOB, 32 UNSIGNED, 64 ZEROFILL, 128 BINARY,
    /// 256 ENUM, 512 AUTO_INCREMENT, 1024 TIMESTAMP, 2048 SET.
    pub flags: u32,
    /// The character set (collation) id; 63 is binary.
    pub charset: u32,
    /// The display length (in bytes of the character set); TINYINT(1) has 1.
    pub length: u32,
    /// Digits after the decimal point (DECIMAL, FLOAT, DOUBLE; fractional
    /// seconds of temporal types).
    pub decimals: u32,
    /// The column's name as the result gives it (its alias, if any).
    pub name: *const c_char,
    pub name_len: usize,
    /// The column's name in its table (empty for an expression).
    pub org_name: *const c_char,
    pub org_name_len: usize,
    /// The table as the query names it (its alias, if any).
    pub table: *const c_char,
    pub table_len: usize,
    /// The table's name.
    pub org_table: *const c_char,
    pub org_table_len: usize,
    /// The database of the table.
    pub schema: *const c_char,
    pub schema_len: usize,
}

/// What `staunch_rows_column_info` fills in for `c`.
fn column_info(c: &Col) -> staunch_column_info {
    let s = |v: &[u8]| (v.as_ptr().cast::<c_char>(), v.len() - 1);
    let (name, name_len) = s(c.name());
    let (org_name, org_name_len) = s(c.org_name());
    let (table, table_len) = s(c.table());
    let (org_table, org_table_len) = s(c.org_table());
    let (schema, schema_len) = s(c.schema());
    staunch_column_info {
        size: std::mem::size_of::<staunch_column_info>(),
        column_type: c.kind as staunch_column_type,
        type_code: c.type_code,
        flags: c.flags,
        charset: c.charset,
        length: c.length,
        decimals: c.decimals,
        name,
        name_len,
        org_name,
        org_name_len,
        table,
        table_len,
        org_table,
        org_table_len,
        schema,
        schema_len,
    }
}

/// Writes the cell into `v` as a tagged value for the bulk getter;
/// pointers into the cell. In place: a value built apart and then copied
/// (96 bytes, written field by field, read back whole) stalled on every
/// value (perf: half of the bulk getter's time).
fn tag_into(v: &mut staunch_value, cell: &Cell, kind: Kind, arena: &[u8]) {
    let ctype = kind as staunch_column_type;
    *v = staunch_value::null();
    let cell = &cell.read_as(kind);
    match cell {
        Cell::Null => {}
        Cell::Int(i) => {
            v.r#type = STAUNCH_COLUMN_INT;
            v.i64 = *i;
        }
        Cell::UInt(u) => {
            v.r#type = STAUNCH_COLUMN_UINT;
            v.u64 = *u;
        }
        Cell::Double(d) => {
            v.r#type = STAUNCH_COLUMN_DOUBLE;
            v.f64 = *d;
        }
        Cell::Bytes { .. } => {
            // Text, DECIMAL or bytes: the column says which.
            v.r#type = match ctype {
                STAUNCH_COLUMN_TEXT | STAUNCH_COLUMN_DECIMAL => ctype,
                _ => STAUNCH_COLUMN_BYTES,
            };
            let b = bytes_with_nul(arena, cell);
            v.ptr = b.as_ptr().cast();
            v.len = b.len() - 1;
        }
        Cell::Date(d) => {
            v.r#type = if ctype == STAUNCH_COLUMN_DATE {
                STAUNCH_COLUMN_DATE
            } else {
                STAUNCH_COLUMN_DATETIME
            };
            // SAFETY: a field of a local.
            unsafe { write_datetime(addr_of_mut!(v.datetime), *d) };
        }
        Cell::Time(t) => {
            v.r#type = STAUNCH_COLUMN_TIME;
            // SAFETY: a field of a local.
            unsafe { write_time(addr_of_mut!(v.time), *t) };
        }
    }
}

/// The first of an answer, read by the call that runs the statement
/// (`staunch_conn_query_batch`), so that a caller paying for each foreign
/// call (a Python `ctypes` call costs about as much as a small statement's
/// decoding) reads a small answer in one. The caller gives the room, the
/// call fills it. Set `size` to `sizeof(staunch_batch)` first (fields added
/// later go at the end). Every field is 8 bytes on 64-bit targets, so a
/// binding may read it as an array of 64-bit words.
#[repr(C)]
#[derive(Debug)]
pub struct staunch_batch {
    /// The caller's `sizeof(staunch_batch)`.
    pub size: usize,
    /// In: a row set of the caller's to free before the statement runs
    /// (typically its previous answer), or NULL. The call frees it, as
    /// `staunch_rows_free` would, whatever its outcome, and sets the field
    /// to NULL (unless `size` is wrong: then it is left alone).
    pub recycle: *mut staunch_rows,
    /// In: room for `types_cap` column types, or NULL.
    pub types: *mut staunch_column_type,
    /// In: how many types fit in `types`.
    pub types_cap: usize,
    /// In: room for `values_cap` values, or NULL.
    pub values: *mut staunch_value,
    /// In: how many values fit in `values`.
    pub values_cap: usize,
    /// Out: the first result set's column count; its first `types_cap`
    /// column types are in `types` (as `staunch_rows_column_types` gives
    /// them).
    pub n_columns: usize,
    /// Out: the rows written to `values`, as `staunch_rows_fetch` writes
    /// them (as many whole rows as fit; they point into the row set, valid
    /// until its next fetch, move or free). Always 0 for a streaming answer
    /// (its rows are read by the caller's fetches, which may wait) and when
    /// `values_cap` holds no whole row. Fewer rows than fit: the current set
    /// has no more.
    pub n_rows: usize,
    /// Out: `staunch_rows_affected_rows` of the first result set.
    pub affected_rows: u64,
    /// Out: `staunch_rows_last_insert_id` of the first result set.
    pub last_insert_id: u64,
}

impl staunch_batch {
    /// Frees the row set the caller handed back, once `size` is checked.
    ///
    /// # Safety
    /// `b` is NULL or points to a caller's batch, readable and writable for
    /// its `size` bytes (at least a `usize`); `recycle` is NULL or a row set
    /// the caller owns.
    pub(crate) unsafe fn open<'a>(b: *mut staunch_batch) -> Result<&'a mut staunch_batch, Failure> {
        if b.is_null() {
            return Err(Failure::null("batch"));
        }
        // SAFETY: non-NULL, at least a usize (contract).
        let size = unsafe { b.cast::<usize>().read_unaligned() };
        let want = std::mem::size_of::<staunch_batch>();
        if size < want {
            return Err(Failure::new(
                STAUNCH_INVALID_ARGUMENT,
                format!("batch: size {size} is smaller than this library's staunch_batch ({want} bytes)"),
            ));
        }
        // SAFETY: the caller's storage holds a whole staunch_batch (size
        // checked) whose fields are integers and pointers (any bits are
        // valid), aligned as C aligns it (contract).
        let b = unsafe { &mut *b };
        let recycle = std::mem::replace(&mut b.recycle, std::ptr::null_mut());
        if !recycle.is_null() {
            // SAFETY: a row set the caller owns and gives up (contract).
            unsafe { staunch_rows::free_raw(recycle) };
        }
        b.n_columns = 0;
        b.n_rows = 0;
        b.affected_rows = 0;
        b.last_insert_id = 0;
        Ok(b)
    }
}

impl staunch_rows {
    /// Writes the current set's first `cap` column types to `types` (if not
    /// NULL); returns its column count.
    ///
    /// # Safety
    /// `types` is NULL or holds `cap` writable types.
    unsafe fn write_types(&self, types: *mut staunch_column_type, cap: usize) -> usize {
        let cols = &self.answer.set().columns;
        if !types.is_null() {
            for (i, col) in cols.iter().take(cap).enumerate() {
                // SAFETY: room for `cap` types (contract), and i < cap.
                unsafe { types.add(i).write(col.kind as staunch_column_type) };
            }
        }
        cols.len()
    }

    /// Fills `b` from this new row set: the first set's types and figures,
    /// and, when buffered, its first rows.
    ///
    /// # Safety
    /// `b.types` and `b.values` are NULL or hold `types_cap` / `values_cap`
    /// writable elements.
    pub(crate) unsafe fn first_batch(&mut self, b: &mut staunch_batch) -> Result<(), Failure> {
        // SAFETY: room for types_cap types (contract).
        b.n_columns = unsafe { self.write_types(b.types, b.types_cap) };
        b.affected_rows = self.answer.affected_rows();
        b.last_insert_id = self.answer.last_insert_id();
        let fits = b.n_columns > 0 && b.values_cap >= b.n_columns;
        if fits && !b.values.is_null() && !self.answer.is_streaming() {
            // SAFETY: room for values_cap values (contract); a buffered
            // fetch never waits.
            let (n, _) = unsafe {
                fetch(
                    self,
                    b.values,
                    b.values_cap,
                    true,
                    "staunch_conn_query_batch",
                )
            }?;
            b.n_rows = n;
        }
        Ok(())
    }
}

/// The answer to `staunch_conn_query` / `staunch_conn_query_ex`: one or more
/// result sets (a `CALL` gives several), each with column metadata, rows and
/// what its closing packet said; a cursor over the current set's rows.
/// Free with `staunch_rows_free`. Not thread-safe: one thread at a time (it
/// may move between threads).
pub struct staunch_rows {
    /// The core's answer: this file translates it.
    answer: Answer,
}

impl std::fmt::Debug for staunch_rows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.answer.fmt(f)
    }
}

thread_local! {
    /// The memory of the last row set freed on this thread, for the next
    /// one made on it: the usual caller frees an answer and runs the next
    /// statement on the same thread, and then costs no allocation for it.
    static SPARE: std::cell::Cell<Option<Box<std::mem::MaybeUninit<staunch_rows>>>> = const {
        std::cell::Cell::new(None)
    };
}

impl staunch_rows {
    pub(crate) fn new(answer: Answer) -> staunch_rows {
        staunch_rows { answer }
    }

    /// The row set, boxed for the C caller (in the memory of the last row
    /// set freed on this thread, if any). Free with `free_raw`.
    pub(crate) fn into_raw(self) -> *mut staunch_rows {
        match SPARE.try_with(std::cell::Cell::take).ok().flatten() {
            Some(spare) => {
                let p = Box::into_raw(spare).cast::<staunch_rows>();
                // SAFETY: `p` is a live, aligned, unused allocation for one
                // staunch_rows (a MaybeUninit of it).
                unsafe { p.write(self) };
                p
            }
            None => Box::into_raw(Box::new(self)),
        }
    }

    /// Frees a row set made by `into_raw`: its answer dropped (a stream's
    /// connection given back), its memory kept for the next one.
    ///
    /// # Safety
    /// `p` came from `into_raw` and is not used after this.
    pub(crate) unsafe fn free_raw(p: *mut staunch_rows) {
        // SAFETY: a live row set, dropped once (contract).
        unsafe { std::ptr::drop_in_place(p) };
        // SAFETY: its allocation, as a Box of the same layout, now unused.
        let spare = unsafe { Box::from_raw(p.cast::<std::mem::MaybeUninit<staunch_rows>>()) };
        let _ = SPARE.try_with(|s| {
            let kept = s.take().unwrap_or(spare);
            s.set(Some(kept));
        });
    }

    /// A row set built from columns `(name, type)` and values as the server
    /// would send them (each row as long as the column list), for the fuzz
    /// targets and tests.
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn from_values(
        columns: Vec<(Vec<u8>, staunch_column_type)>,
        rows: Vec<Vec<mysql_common::value::Value>>,
    ) -> staunch_rows {
        let mut set = crate::client::answer::Set::empty();
        set.columns = columns
            .iter()
            .map(|(name, ctype)| Col::named(name, Kind::from_number(*ctype).unwrap_or(Kind::Bytes)))
            .collect();
        set.count = rows.len() as u64;
        let arena = &mut set.bytes;
        set.cells = rows
            .into_iter()
            .flatten()
            .map(|v| Cell::from_value(v, arena))
            .collect();
        staunch_rows::new(Answer::buffered(set.into()))
    }

    fn col(&self, idx: usize) -> Result<&Col, Failure> {
        let cols = &self.answer.set().columns;
        cols.get(idx).ok_or_else(|| {
            Failure::new(
                STAUNCH_BAD_INDEX,
                format!(
                    "column index {idx} is out of range: the result has {} column(s)",
                    cols.len()
                ),
            )
        })
    }

    /// The cell of the current row in column `idx`.
    fn cell(&self, idx: usize) -> Result<(&Col, &Cell), Failure> {
        let col = self.col(idx)?;
        let at = self.answer.current().ok_or_else(|| {
            Failure::new(
                STAUNCH_NO_ROW,
                "no current row: call staunch_rows_next first (and only read while it reports a row)",
            )
        })?;
        let cell = self.answer.set().cells.get(at + idx).ok_or_else(|| {
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
                    col.name_lossy()
                ),
            ));
        }
        Ok((col, cell))
    }

    /// The current set's bytes (text and bytes cells point into them).
    fn bytes(&self) -> &[u8] {
        &self.answer.set().bytes
    }
}

fn wrong_type(getter: &str, idx: usize, col: &Col, cell: &Cell) -> Failure {
    Failure::new(
        STAUNCH_WRONG_TYPE,
        format!(
            "{getter}: column {idx} ({}) is {} and holds {}; read it with {}",
            col.name_lossy(),
            col.kind.name(),
            cell.what(),
            getter_for(col.kind)
        ),
    )
}

/// The number of columns of the current result set (0 for a statement
/// without a result set, or a NULL `rows`). Never blocks. One thread at a
/// time per row set (as for every staunch_rows function).
#[no_mangle]
pub extern "C" fn staunch_rows_column_count(rows: *const staunch_rows) -> usize {
    guard_value(0, || {
        // SAFETY: NULL or a live row set (header contract).
        unsafe { rows.as_ref() }.map_or(0, |r| r.answer.column_count())
    })
}

/// The name of column `idx` (its alias if the query gave one): `*name`
/// receives a NUL-terminated UTF-8 string owned by `rows`, valid until the
/// next `staunch_rows_next_result` or `staunch_rows_free`; `*len` (may be
/// NULL) its length without the NUL. STAUNCH_BAD_INDEX if `idx` is not below
/// the column count. Never blocks; one thread at a time per row set.
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
        name.set(col.name().as_ptr().cast());
        super::set_opt(len, col.name().len() - 1);
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
        out.set(r.col(idx)?.kind as staunch_column_type);
        Ok(())
    })
}

/// The current result set's column count (as `staunch_rows_column_count`),
/// with the types of its first `cap` columns (STAUNCH_COLUMN_* values, as
/// `staunch_rows_column_type` gives them) written to
/// `types[0 .. min(count, cap)]`: one call for what took one per column.
/// Nothing is written when `types` is NULL. 0 for a NULL `rows`. Never
/// blocks; one thread at a time per row set. Since 1.1.
#[no_mangle]
pub extern "C" fn staunch_rows_column_types(
    rows: *const staunch_rows,
    types: *mut staunch_column_type,
    cap: usize,
) -> usize {
    guard_value(0, || {
        // SAFETY: NULL or a live row set (header contract).
        let Some(r) = (unsafe { rows.as_ref() }) else {
            return 0;
        };
        // SAFETY: the caller gives room for `cap` types (header contract).
        unsafe { r.write_types(types, cap) }
    })
}

/// What the server says of column `idx` (see `staunch_column_info`): set
/// `out->size = sizeof(staunch_column_info)` before the call; the fields
/// that fit in it are written (STAUNCH_INVALID_ARGUMENT if it is smaller
/// than the `size` field). Strings valid until the next
/// `staunch_rows_next_result` or `staunch_rows_free`. STAUNCH_BAD_INDEX if
/// `idx` is not below the column count. Never blocks; one thread at a time
/// per row set.
#[no_mangle]
pub extern "C" fn staunch_rows_column_info(
    rows: *const staunch_rows,
    idx: usize,
    out: *mut staunch_column_info,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live row set (header contract).
        let r = unsafe { arg(rows, "rows") }?;
        let out = Out::new(out, "out")?;
        let info = column_info(r.col(idx)?);
        // SAFETY: `out` is non-NULL and points to a struct of at least its
        // `size` field's bytes (header contract).
        unsafe { copy_sized(out.ptr(), &info, "staunch_column_info") }
    })
}

/// Every column's `staunch_column_info` in one call (a driver's
/// `cursor.description` / `ResultSetMetaData` of a whole result): `out`
/// points to `cap` structs of `out[0].size` bytes each; set `out[0].size =
/// sizeof(staunch_column_info)` (the other elements' `size` is written, not
/// read). The first `cap` columns (all of them, if fewer) are filled as
/// `staunch_rows_column_info` fills one; read the count with
/// `staunch_rows_column_count`. Strings valid until the next
/// `staunch_rows_next_result` or `staunch_rows_free`. Never blocks; one
/// thread at a time per row set. Since 1.4.
#[no_mangle]
pub extern "C" fn staunch_rows_column_infos(
    rows: *const staunch_rows,
    out: *mut staunch_column_info,
    cap: usize,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live row set (header contract).
        let r = unsafe { arg(rows, "rows") }?;
        let out = Out::new(out, "out")?;
        if cap == 0 {
            return Ok(()); // room for none: nothing to read `size` from
        }
        let first = out.ptr();
        // SAFETY: non-NULL, its first struct's `size` readable (contract).
        let stride = unsafe { first.cast::<usize>().read_unaligned() };
        for (i, c) in r.answer.set().columns.iter().take(cap).enumerate() {
            // SAFETY: `cap` structs of `stride` bytes (contract), i < cap;
            // the size written first is the one copy_sized reads.
            unsafe {
                let at = first
                    .cast::<u8>()
                    .add(i * stride)
                    .cast::<staunch_column_info>();
                at.cast::<usize>().write_unaligned(stride);
                copy_sized(at, &column_info(c), "staunch_column_info")?;
            }
        }
        Ok(())
    })
}

/// Moves to the next row of the current result set: `*has_row` receives
/// true if there is one, false at the set's end (then getters fail with
/// STAUNCH_NO_ROW). Pointers obtained from getters for the previous row
/// become invalid. A buffered row set never blocks; a streaming one
/// (`STAUNCH_QUERY_STREAM`) blocks for the row's arrival, a wait bounded as
/// a statement is (`query_timeout` / `staunch_conn_set_timeout`: the limit
/// plus 1 s of grace, counted while the read waits, not while the caller
/// takes its time between rows), and reports an error met on the way (the
/// connection is then broken). One thread at a time per row set.
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
        has_row.set(r.answer.next_row()?);
        Ok(())
    })
}

/// The bulk getter: reads the next rows of the current result set into
/// `values`, row after row, `staunch_rows_column_count` values each, as many
/// whole rows as fit in `capacity` values; `*n_rows` receives how many (0 at
/// the set's end). Each value is tagged (see `staunch_value`); text and
/// bytes point into the row set, valid until the next fetch, `_next`,
/// `_next_result` or `_free`. `capacity` must hold at least one row
/// (STAUNCH_INVALID_ARGUMENT otherwise, unless the set has no columns). The
/// one-value getters have no current row after a fetch. Blocking as for
/// `staunch_rows_next`. One thread at a time per row set.
#[no_mangle]
pub extern "C" fn staunch_rows_fetch(
    rows: *mut staunch_rows,
    values: *mut staunch_value,
    capacity: usize,
    n_rows: *mut usize,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live row set used by one thread (contract).
        let r = unsafe { arg_mut(rows, "rows") }?;
        let n_out = Out::new(n_rows, "n_rows")?;
        // SAFETY: `values` points to `capacity` writable values (contract).
        let (n, _) = unsafe { fetch(r, values, capacity, true, "staunch_rows_fetch") }?;
        n_out.set(n);
        Ok(())
    })
}

/// `staunch_rows_fetch` that never waits: it reads the rows that have
/// arrived whole and stops at one that has not; `*waits` receives true
/// when it stopped for that (`*n_rows` may then be 0 before the set's end:
/// wait for more with `staunch_rows_fetch`, or try again later), false when
/// it stopped for `capacity` or at the set's end (so `*n_rows` below
/// what `capacity` holds, without `*waits`, is the end). A buffered row
/// set never waits. A streaming one, text or prepared, plain or TLS, reads
/// what has arrived: its buffer, and what the socket holds, read without
/// waiting; at the end of the first result set, the rest of a multi-result
/// answer is waited for, not read (`*waits`). Lets a caller that must stay
/// responsive (a Go goroutine under a context that can end, an event loop)
/// hand only real waits to another thread, or wait for the socket itself
/// (`staunch_rows_wait_fd`). Same rules as `staunch_rows_fetch` otherwise.
#[no_mangle]
pub extern "C" fn staunch_rows_fetch_ready(
    rows: *mut staunch_rows,
    values: *mut staunch_value,
    capacity: usize,
    n_rows: *mut usize,
    waits: *mut bool,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live row set used by one thread (contract).
        let r = unsafe { arg_mut(rows, "rows") }?;
        let n_out = Out::new(n_rows, "n_rows")?;
        let waits_out = Out::new(waits, "waits")?;
        // SAFETY: `values` points to `capacity` writable values (contract).
        let (n, w) = unsafe { fetch(r, values, capacity, false, "staunch_rows_fetch_ready") }?;
        n_out.set(n);
        waits_out.set(w);
        Ok(())
    })
}

/// The socket to wait on when `staunch_rows_fetch_ready` said `*waits`:
/// `*fd` receives it while the rest of the row set's first result set
/// arrives on it and the next row's bytes have not all arrived (wait until
/// it is readable with poll or epoll, then call `staunch_rows_fetch_ready`
/// again), -1 when a socket would not do (a buffered row set, its first
/// set read, a stream the protocol layer does not read, or a row that
/// arrives in packets of 16 MiB: then wait with `staunch_rows_fetch`);
/// `*conn_id` the pool-wide number of its connection (`staunch_conn_id`),
/// a key for what a caller keeps per socket (the fd's number may be reused
/// after the connection closes; the connection's number never is), 0 with
/// -1. Ask again before each wait: the answer changes as rows are read.
/// The fd is only to wait on: never read, written, closed or changed. A
/// wait on it is not a statement's wait: the statement's time limit and
/// liveness check count only while a staunch call waits, so bound it (a
/// timeout, then `staunch_rows_fetch`). Never blocks; one thread at a
/// time per row set. Since 1.6.
#[no_mangle]
pub extern "C" fn staunch_rows_wait_fd(
    rows: *mut staunch_rows,
    fd: *mut c_int,
    conn_id: *mut u64,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live row set used by one thread (contract).
        let r = unsafe { arg_mut(rows, "rows") }?;
        let fd = Out::new(fd, "fd")?;
        let conn_id = Out::new(conn_id, "conn_id")?;
        let (f, id) = r.answer.wait_fd().unwrap_or((-1, 0));
        fd.set(f);
        conn_id.set(id);
        Ok(())
    })
}

/// The rows of a fetch into `values` (and whether it stopped at a row that
/// has not arrived, unless `wait`).
///
/// # Safety
/// `values` is NULL or points to `capacity` writable values.
unsafe fn fetch(
    r: &mut staunch_rows,
    values: *mut staunch_value,
    capacity: usize,
    wait: bool,
    func: &str,
) -> Result<(usize, bool), Failure> {
    let ncols = r.answer.column_count();
    if ncols == 0 {
        return Ok((0, false));
    }
    if values.is_null() {
        return Err(Failure::null("values"));
    }
    let max = capacity / ncols;
    if max == 0 {
        return Err(Failure::new(
            STAUNCH_INVALID_ARGUMENT,
            format!("{func}: capacity {capacity} holds no whole row of {ncols} values"),
        ));
    }
    let (first, n, waits) = r.answer.read_rows(max, wait)?;
    // SAFETY: `values` points to `capacity` writable values (contract),
    // and at most `max * ncols <= capacity` are written.
    let out = unsafe { std::slice::from_raw_parts_mut(values, max * ncols) };
    let set = r.answer.set();
    let cells = &set.cells[first..first + n * ncols];
    for (row_out, row) in out.chunks_exact_mut(ncols).zip(cells.chunks_exact(ncols)) {
        for ((v, cell), col) in row_out.iter_mut().zip(row).zip(set.columns.iter()) {
            tag_into(v, cell, col.kind, &set.bytes);
        }
    }
    Ok((n, waits))
}

/// Moves to the next result set of a statement that returned several (a
/// `CALL`, multi-statement text): `*has_result` receives true if there is
/// one (its columns, rows and figures are then current), false after the
/// last. The current set's unread rows are skipped. Blocking as for
/// `staunch_rows_next`. One thread at a time per row set.
#[no_mangle]
pub extern "C" fn staunch_rows_next_result(
    rows: *mut staunch_rows,
    has_result: *mut bool,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live row set used by one thread (contract).
        let r = unsafe { arg_mut(rows, "rows") }?;
        let out = Out::new(has_result, "has_result")?;
        out.set(r.answer.next_set()?);
        Ok(())
    })
}

/// The number of rows of the current result set of a buffered row set, in
/// `*out` (read ones included). STAUNCH_INVALID_ARGUMENT for a streaming
/// row set (the count is not known until the rows are read). Never blocks;
/// one thread at a time per row set.
#[no_mangle]
pub extern "C" fn staunch_rows_row_count(
    rows: *const staunch_rows,
    out: *mut u64,
    err: *mut *mut staunch_error,
) -> staunch_status {
    guard(err, || {
        // SAFETY: NULL or a live row set (header contract).
        let r = unsafe { arg(rows, "rows") }?;
        let out = Out::new(out, "out")?;
        let n = r.answer.row_count().ok_or_else(|| {
            Failure::new(
                STAUNCH_INVALID_ARGUMENT,
                "staunch_rows_row_count: a streaming row set does not know its row count until its rows are read",
            )
        })?;
        out.set(n);
        Ok(())
    })
}

/// Reads a column of the current row into `*out` (see the getters below for
/// each type). The getters fail with STAUNCH_NULL_VALUE on NULL,
/// STAUNCH_WRONG_TYPE for a column of another type (the message names the
/// right getter), STAUNCH_BAD_INDEX, STAUNCH_NO_ROW; `*out` is written only
/// on success. They never block; one thread at a time per row set.
///
/// `*out` receives whether column `idx` of the current row is SQL NULL.
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
            Cell::Bytes { .. } if col.kind != Kind::Bytes => {
                let with_nul = bytes_with_nul(r.bytes(), cell);
                let text = &with_nul[..with_nul.len() - 1];
                if let Err(e) = std::str::from_utf8(text) {
                    return Err(Failure::new(
                        STAUNCH_INVALID_UTF8,
                        format!(
                            "{G}: column {idx} ({}) is not valid UTF-8 (bad byte at offset {}); use staunch_rows_get_bytes",
                            col.name_lossy(),
                            e.valid_up_to()
                        ),
                    ));
                }
                ptr.set(with_nul.as_ptr().cast());
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
            Cell::Bytes { .. } => {
                let b = bytes_with_nul(r.bytes(), cell);
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
            // SAFETY: `out` is non-NULL and writable (header contract).
            Cell::Date(d) => unsafe { write_datetime(out.ptr(), *d) },
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
            // SAFETY: `out` is non-NULL and writable (header contract).
            Cell::Time(t) => unsafe { write_time(out.ptr(), *t) },
            _ => return Err(wrong_type(G, idx, col, cell)),
        }
        Ok(())
    })
}

/// The number of rows the current result set's statement affected, as the
/// server reported it (0 for a plain SELECT, or a NULL `rows`; for a
/// streaming set, known once its rows are read). Never blocks; one thread at
/// a time per row set.
#[no_mangle]
pub extern "C" fn staunch_rows_affected_rows(rows: *const staunch_rows) -> u64 {
    guard_value(0, || {
        // SAFETY: NULL or a live row set (header contract).
        unsafe { rows.as_ref() }.map_or(0, |r| r.answer.affected_rows())
    })
}

/// The AUTO_INCREMENT id the current result set's statement generated, or 0
/// (also for a NULL `rows`). Never blocks; one thread at a time per row set.
#[no_mangle]
pub extern "C" fn staunch_rows_last_insert_id(rows: *const staunch_rows) -> u64 {
    guard_value(0, || {
        // SAFETY: NULL or a live row set (header contract).
        unsafe { rows.as_ref() }.map_or(0, |r| r.answer.last_insert_id())
    })
}

/// The number of warnings the current result set's statement raised (read
/// them with `SHOW WARNINGS`), or 0 (also for a NULL `rows`; for a streaming
/// set, known once its rows are read). Never blocks; one thread at a time per
/// row set.
#[no_mangle]
pub extern "C" fn staunch_rows_warnings(rows: *const staunch_rows) -> u32 {
    guard_value(0, || {
        // SAFETY: NULL or a live row set (header contract).
        unsafe { rows.as_ref() }.map_or(0, |r| u32::from(r.answer.warnings()))
    })
}

/// The server's info string for the current result set's statement (e.g.
/// "Rows matched: 1  Changed: 1  Warnings: 0"), NUL-terminated UTF-8, owned
/// by `rows` and valid until the next `staunch_rows_next_result` or
/// `staunch_rows_free`; "" when there is none (or `rows` is NULL). Never
/// blocks; one thread at a time per row set.
#[no_mangle]
pub extern "C" fn staunch_rows_info(rows: *const staunch_rows) -> *const c_char {
    guard_value(cstr!("").as_ptr(), || {
        // SAFETY: NULL or a live row set (header contract).
        unsafe { rows.as_ref() }.map_or(cstr!("").as_ptr(), |r| r.answer.set().info.as_ptr().cast())
    })
}

/// Frees a row set. NULL is a no-op. Pointers obtained from it become
/// invalid. A streaming row set first reads off the rest of the answer and
/// gives its connection back (blocking as a statement does, bounded as it
/// is). Must be the last call on the row set.
#[no_mangle]
pub extern "C" fn staunch_rows_free(rows: *mut staunch_rows) {
    guard_value((), || {
        if !rows.is_null() {
            // SAFETY: created by staunch_conn_query*, freed once (contract).
            unsafe { staunch_rows::free_raw(rows) };
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use mysql_common::value::Value;
    use std::ptr;

    /// One row: an INT, an UNSIGNED above INT64_MAX, a TEXT, a NULL, BYTES.
    fn sample() -> staunch_rows {
        staunch_rows::from_values(
            vec![
                (b"i".to_vec(), STAUNCH_COLUMN_INT),
                (b"u".to_vec(), STAUNCH_COLUMN_UINT),
                (b"t".to_vec(), STAUNCH_COLUMN_TEXT),
                (b"n".to_vec(), STAUNCH_COLUMN_INT),
                (b"b".to_vec(), STAUNCH_COLUMN_BYTES),
            ],
            vec![vec![
                Value::Int(-5),
                Value::UInt(u64::MAX),
                Value::Bytes(b"caf\xc3\xa9".to_vec()),
                Value::NULL,
                Value::Bytes(vec![0, 1, 0]),
            ]],
        )
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

    #[test]
    fn the_bulk_getter_fills_whole_rows_of_tagged_values() {
        let rows = Box::into_raw(Box::new(staunch_rows::from_values(
            vec![
                (b"i".to_vec(), STAUNCH_COLUMN_INT),
                (b"t".to_vec(), STAUNCH_COLUMN_TEXT),
            ],
            (0..5)
                .map(|k| vec![Value::Int(k), Value::Bytes(format!("r{k}").into_bytes())])
                .collect(),
        )));
        let mut vals = [staunch_value::null(); 5];
        let mut n = 99usize;
        assert_eq!(
            status_of(|e| staunch_rows_fetch(rows, vals.as_mut_ptr(), 1, &mut n, e)),
            STAUNCH_INVALID_ARGUMENT,
            "no whole row fits"
        );
        assert_eq!(n, 99);
        let mut seen = Vec::new();
        loop {
            assert_eq!(
                status_of(|e| staunch_rows_fetch(rows, vals.as_mut_ptr(), 5, &mut n, e)),
                STAUNCH_OK
            );
            if n == 0 {
                break;
            }
            assert!(n <= 2, "5 values hold 2 rows of 2");
            for row in vals[..n * 2].chunks(2) {
                assert_eq!(row[0].r#type, STAUNCH_COLUMN_INT);
                assert_eq!(row[1].r#type, STAUNCH_COLUMN_TEXT);
                // SAFETY: valid until the next fetch.
                let t = unsafe { std::slice::from_raw_parts(row[1].ptr.cast::<u8>(), row[1].len) };
                seen.push((row[0].i64, String::from_utf8(t.to_vec()).unwrap()));
            }
        }
        let want: Vec<(i64, String)> = (0..5).map(|k| (k, format!("r{k}"))).collect();
        assert_eq!(seen, want);
        staunch_rows_free(rows);
    }

    #[test]
    fn kinds_are_the_c_column_types() {
        for (k, t) in [
            (Kind::Null, STAUNCH_COLUMN_NULL),
            (Kind::Int, STAUNCH_COLUMN_INT),
            (Kind::UInt, STAUNCH_COLUMN_UINT),
            (Kind::Double, STAUNCH_COLUMN_DOUBLE),
            (Kind::Decimal, STAUNCH_COLUMN_DECIMAL),
            (Kind::Text, STAUNCH_COLUMN_TEXT),
            (Kind::Bytes, STAUNCH_COLUMN_BYTES),
            (Kind::Date, STAUNCH_COLUMN_DATE),
            (Kind::DateTime, STAUNCH_COLUMN_DATETIME),
            (Kind::Time, STAUNCH_COLUMN_TIME),
        ] {
            assert_eq!(k as staunch_column_type, t, "{k:?}");
            assert_eq!(Kind::from_number(t), Some(k));
        }
        assert_eq!(Kind::from_number(10), None);
    }
}
