//! A text-protocol command (`COM_QUERY`) and its answer: an OK packet, an
//! error, or a result set (column count, column definitions, rows, end),
//! possibly several of them for one command.
//!
//! A result set's column definitions are kept as the server sent them, in
//! one buffer the caller reuses ([`Columns`]); one is parsed only when asked
//! for. A row is handed out as the packet itself ([`TextRow`]), its cells
//! as slices of it: the text the server sent, or `None` for NULL.

use std::io::{Read, Write};

use crate::wire::error::WireError;
use crate::wire::packet::{Framer, MAX_CHUNK};
use crate::wire::parse::{caps, mariadb, parse_err, status, EofInfo, OkInfo, Reader};
use crate::wire::COM_QUERY;

/// The start of an answer.
#[derive(Debug, PartialEq, Eq)]
pub enum Response {
    /// The statement ran and returned no rows.
    Ok(OkInfo),
    /// A result set: its columns are in the [`Columns`] passed to
    /// [`Framer::read_response`]; read its rows with [`Framer::next_row`]
    /// until [`Next::End`].
    ResultSet,
}

/// The next thing in a result set.
#[derive(Debug, PartialEq, Eq)]
pub enum Next<'a> {
    /// A row.
    Row(TextRow<'a>),
    /// The result set ended; the status says whether another result of the
    /// same command follows ([`crate::wire::status::MORE_RESULTS_EXISTS`]: read
    /// it with [`Framer::read_response`]).
    End(OkInfo),
}

/// A result set's column definitions, as the server sent them.
#[derive(Clone, Debug, Default)]
pub struct Columns {
    raw: Vec<u8>,
    /// Where each definition ends in `raw`.
    ends: Vec<usize>,
}

impl Columns {
    /// An empty set, to pass to [`Framer::read_response`] (and reuse).
    pub fn new() -> Columns {
        Columns::default()
    }

    /// The number of columns.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there are none (the answer was not a result set).
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Every definition packet, one after another, unparsed: equal for two
    /// answers exactly when their columns are (what a caller may key a
    /// cache of its own reading of them on).
    pub fn raw_all(&self) -> &[u8] {
        &self.raw
    }

    /// Column `i`'s definition packet, unparsed.
    pub fn raw(&self, i: usize) -> Option<&[u8]> {
        let end = *self.ends.get(i)?;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        Some(&self.raw[start..end])
    }

    /// Column `i`'s definition, parsed now; `None` past the last column.
    pub fn get(&self, i: usize) -> Option<Result<ColumnDef<'_>, WireError>> {
        self.raw(i).map(ColumnDef::parse)
    }

    /// Every column's definition in order, each parsed as it is reached.
    pub fn iter(&self) -> impl Iterator<Item = Result<ColumnDef<'_>, WireError>> {
        (0..self.len()).filter_map(|i| self.get(i))
    }

    pub(crate) fn clear(&mut self) {
        self.raw.clear();
        self.ends.clear();
    }

    pub(crate) fn push(&mut self, def: &[u8]) {
        self.raw.extend_from_slice(def);
        self.ends.push(self.raw.len());
    }

    /// Becomes a copy of `other`, in the room it has (no allocation once
    /// it has grown to the size).
    pub(crate) fn copy_from(&mut self, other: &Columns) {
        self.raw.clear();
        self.raw.extend_from_slice(&other.raw);
        self.ends.clear();
        self.ends.extend_from_slice(&other.ends);
    }
}

/// Where the definitions of a result set come from when the server leaves
/// them out (MariaDB's `MARIADB_CLIENT_CACHE_METADATA`: an execute of a
/// prepared statement whose columns did not change since the server last
/// sent them for it).
#[derive(Clone, Copy)]
pub(crate) enum Cached<'a, C = Columns> {
    /// Nowhere: the answer is refused (a text statement's answer always
    /// carries them).
    Nothing,
    /// The ones the buffer holds: the previous result set's of the same
    /// answer.
    Kept,
    /// These: the ones the statement's prepare or its last execute
    /// brought.
    From(&'a C),
}

/// One column's definition (`Protocol::ColumnDefinition41`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColumnDef<'a> {
    /// The schema (database) of the column's table.
    pub schema: &'a [u8],
    /// The table as the statement named it (its alias).
    pub table: &'a [u8],
    /// The table's real name.
    pub org_table: &'a [u8],
    /// The column as the statement named it (its alias).
    pub name: &'a [u8],
    /// The column's real name.
    pub org_name: &'a [u8],
    /// The character set and collation number of its text (63: binary).
    pub charset: u16,
    /// The column's maximum display length.
    pub length: u32,
    /// The `MYSQL_TYPE_*` number.
    pub column_type: u8,
    /// Column flags (`NOT_NULL_FLAG` 1, `UNSIGNED_FLAG` 32, ...).
    pub flags: u16,
    /// Digits after the decimal point.
    pub decimals: u8,
}

impl<'a> ColumnDef<'a> {
    /// Every column of every result set is parsed (the answer model needs
    /// its type), so the usual form takes the short way (`parse_fast`);
    /// anything else, and every error, the reader's (`parse_worded`).
    fn parse(p: &'a [u8]) -> Result<ColumnDef<'a>, WireError> {
        match ColumnDef::parse_fast(p) {
            Some(def) => Ok(def),
            None => ColumnDef::parse_worded(p),
        }
    }

    /// The definition in its usual form: six length-encoded strings (each
    /// walked by `cell_at`, NULL read as empty, as `parse_worded` reads
    /// it), a one-byte length of the fixed fields (at least 10), and those
    /// fields. `None` for anything else, which `parse_worded` then reads or
    /// refuses: this never accepts what that refuses, and where both read
    /// a definition they read the same (tested).
    #[inline]
    fn parse_fast(p: &'a [u8]) -> Option<ColumnDef<'a>> {
        let mut strings: [&'a [u8]; 6] = [&[]; 6];
        let mut at = 0;
        for s in &mut strings {
            let (span, next) = cell_at(p, at)?;
            if let Some((start, end)) = span {
                *s = p.get(start..end)?;
            }
            at = next;
        }
        let fixed = *p.get(at)?;
        if !(10..0xfb).contains(&fixed) {
            return None;
        }
        let f = p.get(at + 1..at + 11)?;
        let [_catalog, schema, table, org_table, name, org_name] = strings;
        Some(ColumnDef {
            schema,
            table,
            org_table,
            name,
            org_name,
            charset: u16::from_le_bytes([f[0], f[1]]),
            length: u32::from_le_bytes([f[2], f[3], f[4], f[5]]),
            column_type: f[6],
            flags: u16::from_le_bytes([f[7], f[8]]),
            decimals: f[9],
        })
    }

    fn parse_worded(p: &'a [u8]) -> Result<ColumnDef<'a>, WireError> {
        let mut r = Reader::new(p);
        let mut s =
            |what| -> Result<&'a [u8], WireError> { Ok(r.lenenc_str(what)?.unwrap_or_default()) };
        let _catalog = s("a column's catalog")?;
        let schema = s("a column's schema")?;
        let table = s("a column's table")?;
        let org_table = s("a column's original table")?;
        let name = s("a column's name")?;
        let org_name = s("a column's original name")?;
        let fixed = r.lenenc_int("a column's fixed fields")?;
        if fixed < 10 {
            return Err(WireError::protocol(format!(
                "a column's fixed fields are {fixed} bytes, fewer than 10"
            )));
        }
        Ok(ColumnDef {
            schema,
            table,
            org_table,
            name,
            org_name,
            charset: r.u16("a column's character set")?,
            length: r.u32("a column's length")?,
            column_type: r.u8("a column's type")?,
            flags: r.u16("a column's flags")?,
            decimals: r.u8("a column's decimals")?,
        })
    }
}

/// A row of a text-protocol result set: its cells, checked when the row was
/// read, as slices of the packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextRow<'a> {
    payload: &'a [u8],
    cells: usize,
}

impl<'a> TextRow<'a> {
    /// The number of cells (the result set's column count).
    pub fn len(&self) -> usize {
        self.cells
    }

    /// Whether the row has no cells (never, for a result set).
    pub fn is_empty(&self) -> bool {
        self.cells == 0
    }

    /// The cells in column order: the server's text of each value, `None`
    /// for NULL.
    pub fn cells(&self) -> Cells<'a> {
        Cells {
            payload: self.payload,
            at: 0,
            left: self.cells,
        }
    }

    /// Checks that `payload` is exactly `cells` length-encoded cells.
    fn check(payload: &[u8], cells: usize) -> Result<(), WireError> {
        let mut at = 0;
        for _ in 0..cells {
            at = match cell_at(payload, at) {
                Some((_, next)) => next,
                // As the reader words it.
                None => {
                    return Err(Reader::new(payload.get(at..).unwrap_or_default())
                        .lenenc_str("a row's cell")
                        .err()
                        .unwrap_or_else(|| WireError::protocol("a row's cell")))
                }
            };
        }
        if at != payload.len() {
            return Err(WireError::protocol(format!(
                "a row has {} bytes after its {cells} cells",
                payload.len() - at
            )));
        }
        Ok(())
    }
}

/// The row cell that starts at `at` in `payload` (a length-encoded string,
/// as `Reader::lenenc_str` reads one): its text's span, `None` for NULL,
/// and where the next cell starts; `None` when it is not one or runs past
/// the payload. Every row's cells are walked twice (checked as the row is
/// read, then taken), so this is the whole of the work, without the
/// reader's error texts.
#[inline(always)]
fn cell_at(payload: &[u8], at: usize) -> Option<(Option<(usize, usize)>, usize)> {
    let (start, len) = match *payload.get(at)? {
        n @ 0..=0xfa => (at + 1, usize::from(n)),
        0xfb => return Some((None, at + 1)),
        0xfc => {
            let b = payload.get(at + 1..at + 3)?;
            (at + 3, usize::from(u16::from_le_bytes([b[0], b[1]])))
        }
        0xfd => {
            let b = payload.get(at + 1..at + 4)?;
            (
                at + 4,
                usize::from(b[0]) | usize::from(b[1]) << 8 | usize::from(b[2]) << 16,
            )
        }
        0xfe => {
            let b = payload.get(at + 1..at + 9)?;
            let n = u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
            (at + 9, usize::try_from(n).ok()?)
        }
        0xff => return None,
    };
    let end = start.checked_add(len)?;
    (end <= payload.len()).then_some((Some((start, end)), end))
}

/// The cells of a [`TextRow`].
#[derive(Debug)]
pub struct Cells<'a> {
    payload: &'a [u8],
    at: usize,
    left: usize,
}

impl<'a> Iterator for Cells<'a> {
    type Item = Option<&'a [u8]>;

    #[inline]
    fn next(&mut self) -> Option<Option<&'a [u8]>> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        // Checked when the row was read: cannot fail (were it to, the
        // cells would end early, never read out of bounds).
        let (span, next) = cell_at(self.payload, self.at)?;
        self.at = next;
        match span {
            None => Some(None),
            Some((start, end)) => Some(Some(self.payload.get(start..end)?)),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for Cells<'_> {}

/// What the last packet of an answer was.
enum Kind {
    Progress,
    Ok(OkInfo),
    Err(WireError),
    LocalInfile,
    /// A result set of this many columns, and whether their definitions
    /// follow.
    ResultSet(u64, bool),
}

impl<S: Read + Write> Framer<S> {
    /// Sends `sql` as a text-protocol statement (`COM_QUERY`); the answer
    /// is read with [`Framer::read_response`].
    pub fn send_query(&mut self, sql: &[u8]) -> Result<(), WireError> {
        self.send_command(COM_QUERY, sql)
    }

    /// Reads the start of the next answer to the command sent: an OK, an
    /// error ([`WireError::Server`]), or a result set, whose column
    /// definitions land in `columns` (its earlier contents are dropped).
    /// After a result set, read its rows with [`Framer::next_row`] to its
    /// end. While the last status carries
    /// [`crate::wire::status::MORE_RESULTS_EXISTS`], another answer follows.
    pub fn read_response(&mut self, columns: &mut Columns) -> Result<Response, WireError> {
        self.read_answer(columns, Cached::Nothing).map(|(r, _)| r)
    }

    /// [`Framer::read_response`], taking a result set's definitions from
    /// `cached` when the server leaves them out; also says whether they
    /// came from the server (`true`) or from `cached`.
    pub(crate) fn read_answer(
        &mut self,
        columns: &mut Columns,
        cached: Cached<'_>,
    ) -> Result<(Response, bool), WireError> {
        // Is the byte "definitions follow" after the column count there?
        let flagged = self.mariadb_caps & mariadb::CACHE_METADATA != 0;
        loop {
            self.advance()?;
            let caps = self.caps();
            let p = self.last_packet();
            let kind = match p.first() {
                None => Kind::Err(WireError::protocol(
                    "an empty packet where an answer belongs",
                )),
                Some(0x00) => match OkInfo::parse(p, caps) {
                    Ok(ok) => Kind::Ok(ok),
                    Err(e) => Kind::Err(e),
                },
                Some(0xff) => match parse_err(p, caps) {
                    Ok(Some(e)) => Kind::Err(WireError::Server(e)),
                    Ok(None) => Kind::Progress,
                    Err(e) => Kind::Err(e),
                },
                Some(0xfb) => Kind::LocalInfile,
                Some(_) => {
                    let mut r = Reader::new(p);
                    match r.lenenc_int("a result set's column count") {
                        Ok(n) if flagged => {
                            match r.u8("a result set's \"definitions follow\" flag") {
                                Ok(follow) => Kind::ResultSet(n, follow != 0),
                                Err(e) => Kind::Err(e),
                            }
                        }
                        Ok(n) => Kind::ResultSet(n, true),
                        Err(e) => Kind::Err(e),
                    }
                }
            };
            match kind {
                Kind::Progress => continue,
                Kind::Ok(ok) => {
                    columns.clear();
                    self.status = ok.status;
                    return Ok((Response::Ok(ok), true));
                }
                Kind::Err(e) => {
                    columns.clear();
                    return Err(e);
                }
                Kind::LocalInfile => {
                    columns.clear();
                    return self.refuse_local_infile(columns).map(|r| (r, true));
                }
                Kind::ResultSet(n, true) => {
                    columns.clear();
                    self.read_definitions(n, columns)?;
                    self.open_cells = Some(columns.len());
                    return Ok((Response::ResultSet, true));
                }
                Kind::ResultSet(n, false) => {
                    match cached {
                        Cached::From(c) => columns.copy_from(c),
                        Cached::Kept => {}
                        Cached::Nothing => columns.clear(),
                    }
                    if columns.len() as u64 != n || n == 0 {
                        return Err(WireError::protocol(format!(
                            "the server left out the definitions of a result set of {n} columns, and the client keeps {} for it",
                            columns.len()
                        )));
                    }
                    // Without CLIENT_DEPRECATE_EOF the EOF after them
                    // comes all the same.
                    if caps & caps::DEPRECATE_EOF == 0 {
                        self.advance()?;
                        self.status = EofInfo::parse(self.last_packet(), caps)?.status;
                    }
                    self.open_cells = Some(columns.len());
                    return Ok((Response::ResultSet, false));
                }
            }
        }
    }

    /// Reads `n` column (or parameter) definitions into `into`, then,
    /// without `CLIENT_DEPRECATE_EOF`, the EOF packet that ends them: a
    /// result set's and a prepared statement's alike.
    pub(crate) fn read_definitions(&mut self, n: u64, into: &mut Columns) -> Result<(), WireError> {
        for _ in 0..n {
            self.advance()?;
            let def = self.last_packet();
            if def.first() == Some(&0xff) {
                return Err(WireError::protocol(
                    "an error packet among column definitions",
                ));
            }
            into.push(def);
        }
        if n > 0 && self.caps() & caps::DEPRECATE_EOF == 0 {
            self.advance()?;
            self.status = EofInfo::parse(self.last_packet(), self.caps())?.status;
        }
        Ok(())
    }

    /// The server asked for a local file: send none (an empty packet, which
    /// the server takes as an empty file), read its answer, and report the
    /// refusal. In a text of several statements the server goes on with the
    /// ones after it (nothing the client sends can stop it now): their
    /// answers are read off here, so that none is left for the next
    /// command to take as its own.
    fn refuse_local_infile(&mut self, columns: &mut Columns) -> Result<Response, WireError> {
        self.send_packet(&[])?;
        let mut more = match self.read_response(columns) {
            Ok(Response::Ok(ok)) => ok.status & status::MORE_RESULTS_EXISTS != 0,
            // An error ends the text: the server runs nothing after it.
            Err(WireError::Server(_)) => false,
            Ok(Response::ResultSet) => {
                return Err(WireError::protocol("a result set after a local file"))
            }
            Err(e) => return Err(e),
        };
        while more {
            more = match self.read_response(columns) {
                Ok(Response::Ok(ok)) => ok.status & status::MORE_RESULTS_EXISTS != 0,
                Ok(Response::ResultSet) => loop {
                    match self.next_row() {
                        Ok(Next::Row(_)) => {}
                        Ok(Next::End(ok)) => break ok.status & status::MORE_RESULTS_EXISTS != 0,
                        Err(WireError::Server(_)) => break false,
                        Err(e) => return Err(e),
                    }
                },
                // A later local file: refused, and the rest read off, by
                // the same call.
                Err(WireError::Server(_) | WireError::LocalInfileRefused) => false,
                Err(e) => return Err(e),
            };
        }
        columns.clear();
        Err(WireError::LocalInfileRefused)
    }

    /// The next row of the open result set, or its end. Calling it with no
    /// result set open is an error.
    pub fn next_row(&mut self) -> Result<Next<'_>, WireError> {
        let Some(cells) = self.open_cells else {
            return Err(WireError::protocol("no result set is open"));
        };
        let caps = self.caps();
        loop {
            self.advance()?;
            let p = self.last_packet();
            let end = match p.first() {
                Some(0xff) => match parse_err(p, caps) {
                    Ok(None) => continue,
                    Ok(Some(e)) => Err(WireError::Server(e)),
                    Err(e) => Err(e),
                },
                Some(0xfe) if caps & caps::DEPRECATE_EOF != 0 && p.len() < MAX_CHUNK => {
                    OkInfo::parse(p, caps)
                }
                Some(0xfe) if caps & caps::DEPRECATE_EOF == 0 && EofInfo::is_eof(p) => {
                    EofInfo::parse(p, caps).map(|eof| OkInfo {
                        status: eof.status,
                        warnings: eof.warnings,
                        ..OkInfo::default()
                    })
                }
                _ => break,
            };
            self.open_cells = None;
            if let Ok(ok) = &end {
                self.status = ok.status;
            }
            return end.map(Next::End);
        }
        if let Err(e) = TextRow::check(self.last_packet(), cells) {
            self.open_cells = None;
            return Err(e);
        }
        Ok(Next::Row(TextRow {
            payload: self.last_packet(),
            cells,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::packet::testing::{framer, packet};

    /// `ColumnDef::parse_fast` reads a definition as `parse_worded` does
    /// wherever it reads one, and never one that `parse_worded` refuses:
    /// generated definitions with every header form, NULL strings, fixed
    /// lengths around 10 and their forms, and truncations.
    #[test]
    fn column_def_fast_parse_agrees_with_the_worded_one() {
        let mut next = crate::test_input::xorshift(0x9e37_79b9_7f4a_7c15u64);
        let cases = crate::test_input::cases(50_000);
        let mut fast_read = 0;
        for _ in 0..cases {
            let mut p = Vec::new();
            for _ in 0..6 {
                let len = (next() % 40) as usize;
                match next() % 8 {
                    0 => p.push(0xfb),
                    1 => {
                        p.push(0xfc);
                        p.extend_from_slice(&(len as u16).to_le_bytes());
                        p.extend((0..len).map(|i| b'a' + (i % 26) as u8));
                    }
                    2 if next() % 4 == 0 => p.push(0xff),
                    _ => {
                        p.push(len as u8);
                        p.extend((0..len).map(|i| b'a' + (i % 26) as u8));
                    }
                }
            }
            match next() % 6 {
                0 => p.extend_from_slice(&[0xfc, 12, 0]),
                1 => p.push(0xfb),
                2 => p.push((next() % 14) as u8),
                _ => p.push(12),
            }
            p.extend((0..12).map(|_| next() as u8));
            p.truncate(
                p.len() - (next() % 3 == 0) as usize * (next() % 16) as usize % (p.len() + 1),
            );
            let worded = ColumnDef::parse_worded(&p).ok();
            if let Some(fast) = ColumnDef::parse_fast(&p) {
                fast_read += 1;
                assert_eq!(Some(fast), worded, "{p:?}");
            }
            assert_eq!(ColumnDef::parse(&p).ok(), worded, "{p:?}");
        }
        assert!(fast_read > cases / 5, "the short way read only {fast_read}");
    }

    /// `cell_at` reads what `Reader::lenenc_str` reads, cell after cell,
    /// and stops where it fails, on every header form, NULL, 0xFF and
    /// truncations (a fixed xorshift sequence, so a failure repeats).
    #[test]
    fn cell_at_agrees_with_the_reader() {
        let mut next = crate::test_input::xorshift(0x2545_f491_4f6c_dd1du64);
        let cases = crate::test_input::cases(20_000);
        for _ in 0..cases {
            let mut p = Vec::new();
            for _ in 0..next() % 5 {
                let len = (next() % 300) as usize;
                match next() % 6 {
                    0 => p.push(0xfb),
                    1 => p.push(0xff),
                    2 => {
                        p.push(0xfc);
                        p.extend_from_slice(&(len as u16).to_le_bytes());
                    }
                    3 => {
                        p.push(0xfd);
                        p.extend_from_slice(&(len as u32).to_le_bytes()[..3]);
                    }
                    4 => {
                        p.push(0xfe);
                        p.extend_from_slice(&(len as u64).to_le_bytes());
                    }
                    _ => p.push((len % 0xfb) as u8),
                }
                let body = if p.last().is_some_and(|&h| h < 0xfb) {
                    usize::from(*p.last().unwrap())
                } else {
                    len
                };
                p.extend((0..body).map(|i| i as u8));
            }
            p.truncate(p.len() - (next() % 4) as usize % (p.len() + 1));
            let mut r = Reader::new(&p);
            let mut at = 0;
            loop {
                let want = r.lenenc_str("a cell").ok();
                let got = cell_at(&p, at);
                match (want, got) {
                    (None, None) => break,
                    (Some(w), Some((span, next))) => {
                        assert_eq!(w, span.map(|(s, e)| &p[s..e]), "{p:?} at {at}");
                        assert_eq!(p.len() - next, r.rest.len(), "{p:?} at {at}");
                        at = next;
                        if at == p.len() {
                            break;
                        }
                    }
                    (w, g) => panic!("{p:?} at {at}: reader {w:?}, cell_at {g:?}"),
                }
            }
        }
    }

    /// A column definition packet for a column named `name`.
    fn def(name: &[u8]) -> Vec<u8> {
        let mut p = Vec::new();
        for s in [&b"def"[..], b"db", b"t", b"t", name, name] {
            p.push(s.len() as u8);
            p.extend_from_slice(s);
        }
        p.extend_from_slice(&[0x0c, 33, 0, 10, 0, 0, 0, 253, 0, 0, 0, 0, 0]);
        p
    }

    /// The answer to a command (on a fresh framer: packets numbered from 0).
    fn answer(payloads: &[Vec<u8>]) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, p) in payloads.iter().enumerate() {
            out.extend(packet(i as u8, p));
        }
        out
    }

    fn rows(
        f: &mut Framer<crate::wire::packet::testing::Trickle>,
    ) -> (Vec<Vec<Option<Vec<u8>>>>, OkInfo) {
        let mut got = Vec::new();
        loop {
            match f.next_row().unwrap() {
                Next::Row(r) => got.push(r.cells().map(|c| c.map(<[u8]>::to_vec)).collect()),
                Next::End(end) => return (got, end),
            }
        }
    }

    #[test]
    fn a_result_set_ends_with_an_ok_packet_under_deprecate_eof() {
        let caps = caps::PROTOCOL_41 | caps::SESSION_TRACK | caps::DEPRECATE_EOF;
        // Two columns, no EOF after the definitions; a row; a row whose
        // first cell is long enough to start with 0xFC; a NULL; then the
        // terminator: an OK packet with header 0xFE and more results.
        let long = vec![b'x'; 300];
        let mut big_row = vec![0xfc, 0x2c, 0x01];
        big_row.extend_from_slice(&long);
        big_row.push(0xfb);
        let input = answer(&[
            vec![2],
            def(b"a"),
            def(b"b"),
            vec![1, b'1', 0],
            big_row,
            vec![0xfe, 0, 0, 0x0a, 0x00, 1, 0, 0],
        ]);
        let mut f = framer(input, 7);
        f.caps = caps;
        let mut columns = Columns::new();
        assert_eq!(f.read_response(&mut columns).unwrap(), Response::ResultSet);
        assert_eq!(columns.len(), 2);
        assert_eq!(columns.get(1).unwrap().unwrap().name, b"b");
        let (got, end) = rows(&mut f);
        assert_eq!(
            got,
            vec![
                vec![Some(b"1".to_vec()), Some(vec![])],
                vec![Some(long), None]
            ]
        );
        assert_eq!(
            (end.status, end.warnings),
            (status::AUTOCOMMIT | status::MORE_RESULTS_EXISTS, 1)
        );
        assert!(
            matches!(f.next_row(), Err(WireError::Protocol(_))),
            "no result set is open"
        );
    }

    #[test]
    fn without_deprecate_eof_eof_packets_frame_the_rows() {
        let caps = caps::PROTOCOL_41;
        let eof = vec![0xfe, 0, 0, 0x02, 0x00];
        let input = answer(&[
            vec![1],
            def(b"a"),
            eof.clone(),
            vec![0xfb],
            vec![1, b'z'],
            eof,
        ]);
        let mut f = framer(input, 3);
        f.caps = caps;
        let mut columns = Columns::new();
        assert_eq!(f.read_response(&mut columns).unwrap(), Response::ResultSet);
        let (got, end) = rows(&mut f);
        assert_eq!(got, vec![vec![None], vec![Some(b"z".to_vec())]]);
        assert_eq!(end.status, status::AUTOCOMMIT);
    }

    #[test]
    fn malformed_rows_and_definitions_are_errors_not_panics() {
        let caps = caps::PROTOCOL_41 | caps::DEPRECATE_EOF;
        for (row, what) in [
            (vec![5, b'a'], "packet ends inside a row's cell"),
            (vec![1, b'a', 1, b'b', 9], "bytes after its 2 cells"),
            (vec![1, b'a'], "packet ends inside a row's cell"),
        ] {
            let input = answer(&[vec![2], def(b"a"), def(b"b"), row]);
            let mut f = framer(input, 64);
            f.caps = caps;
            f.read_response(&mut Columns::new()).unwrap();
            let e = f.next_row().unwrap_err();
            assert!(e.to_string().contains(what), "{e}");
            assert!(e.is_fatal());
        }
        let mut columns = Columns::new();
        let mut f = framer(answer(&[vec![1], vec![3, b'd', b'e']]), 64);
        f.caps = caps;
        f.read_response(&mut columns).unwrap();
        let e = columns.get(0).unwrap().unwrap_err();
        assert!(e.to_string().contains("a column's catalog"), "{e}");
    }
}
