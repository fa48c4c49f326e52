//! [`Answer`]: the answer to a statement as every face reads it, read whole
//! (buffered) or as it arrives (streamed), with its result sets, a cursor
//! over the current set's rows and what each set's closing packet said. The
//! C ABI's `staunch_rows` is this and a translation; the Rust API reads it
//! through [`PooledConn::answer`] and [`PooledConn::answer_streamed`].
//!
//! A buffered answer owns all its data. A streamed one holds the connection
//! while its first result set is being read (`stream.rs`), and gives it to
//! the caller's `give_back` once that set is read to its end, the caller
//! moves to the next set, or the answer is dropped.

use mysql_common::packets::Column;
use mysql_common::value::Value;

use super::answer::{Cell, Col, Set, Sets};
use super::conn::PooledConn;
use super::sql::reports_partly;
use super::statement::{Plan, StatementError, Way};
use super::stream::{Fetched, GiveBack, Stream};
use super::value::Param;
use crate::error::Result;

/// How a statement is sent (see `client::statement`'s module doc).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SendAs {
    /// With parameters, the pool's way (`interpolate_params`); without, as
    /// prepared (so its values come typed).
    #[default]
    Default,
    /// As text, as written: any statement, several separated by `;`
    /// included; it takes no parameters.
    Text,
    /// With its parameters the given way.
    Way(Way),
}

/// Where an answer's rows come from.
enum Source {
    /// Read whole: the result sets after the current one.
    Buffered(Sets),
    /// The first result set read as its rows arrive, on the connection the
    /// stream holds; the sets after it (a `CALL`'s) are read whole when the
    /// caller moves to them, which gives the connection back.
    Streaming(Box<Stream>),
}

/// The answer to a statement: one or more result sets (a `CALL` gives
/// several), each with its columns, rows and what its closing packet said,
/// and a cursor over the current set's rows ([`Answer::next_row`], then
/// [`Answer::get`]).
///
/// ```no_run
/// # fn f(pool: &staunch::Pool) -> staunch::Result<()> {
/// use staunch::{Param, SendAs};
/// let conn = pool.get()?;
/// // Streamed: rows are read as they arrive; the connection goes back to
/// // the pool (here: dropped) once they are read.
/// let mut a = conn.answer_streamed("SELECT id FROM t WHERE id > ?", &[Param::Int(7)],
///     SendAs::Default, drop)?;
/// while a.next_row()? {
///     let id: Option<staunch::Value> = a.get(0);
/// }
/// # Ok(()) }
/// ```
pub struct Answer {
    /// The current result set: its columns, and its rows' cells
    /// (`set.cells`, one row after another): buffered, all of them, kept
    /// until the set is left; streamed, the rows the last read brought.
    set: Set,
    source: Source,
    /// Where the next unread row begins in `set.cells` (buffered).
    next: usize,
    /// How many of the current set's rows were handed out (buffered;
    /// counted apart from `next`, which a set without columns never moves).
    taken: u64,
    /// Where the current row begins in `set.cells`.
    current: Option<usize>,
}

/// What a read of the next row found.
pub(crate) enum Read {
    /// A row, its first cell at this index of the set's cells.
    Row(usize),
    /// The end of the set.
    End,
    /// The next row has not arrived (a read that may not wait).
    Waits,
}

impl std::fmt::Debug for Answer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Answer")
            .field("columns", &self.set.columns.len())
            .field("streaming", &self.is_streaming())
            .finish()
    }
}

impl Answer {
    /// Result sets read whole (the first one current).
    pub(crate) fn buffered(mut sets: Sets) -> Answer {
        let set = sets.pop_front().unwrap_or_else(Set::empty);
        Answer {
            set,
            source: Source::Buffered(sets),
            next: 0,
            taken: 0,
            current: None,
        }
    }

    /// Rows read from a stream as they arrive.
    pub(crate) fn streaming(stream: Stream) -> Answer {
        let mut stream = Box::new(stream);
        let set = stream.first_set();
        Answer {
            set,
            source: Source::Streaming(stream),
            next: 0,
            taken: 0,
            current: None,
        }
    }

    /// The current result set (its columns, cells and figures).
    pub(crate) fn set(&self) -> &Set {
        &self.set
    }

    /// Where the current row begins in the set's cells, if there is one.
    pub(crate) fn current(&self) -> Option<usize> {
        self.current
    }

    /// Whether the current set's rows are read as they arrive.
    pub fn is_streaming(&self) -> bool {
        matches!(self.source, Source::Streaming(_))
    }

    /// The number of columns of the current result set (0 for a statement
    /// that returns none).
    pub fn column_count(&self) -> usize {
        self.set.columns.len()
    }

    /// The current set's columns, as the `mysql` crate describes them.
    pub fn columns(&self) -> Vec<Column> {
        self.set.columns.iter().map(Col::to_column).collect()
    }

    /// Moves to the next row of the current set: true if there is one (it
    /// is then what [`Answer::get`] reads), false at the set's end. A
    /// streamed answer waits for the row, as long as a statement may (its
    /// time limit and liveness check count while it waits), and reports an
    /// error met on the way (the connection is then broken).
    pub fn next_row(&mut self) -> Result<bool> {
        self.start_read();
        self.current = match self.read_row(true)? {
            Read::Row(at) => Some(at),
            Read::End | Read::Waits => None,
        };
        Ok(self.current.is_some())
    }

    /// Column `idx` of the current row: None when there is no current row
    /// or no such column.
    pub fn get(&self, idx: usize) -> Option<Value> {
        let (col, cell) = self.cell(idx)?;
        Some(cell.read_as(col.kind).into_value(&self.set.bytes))
    }

    /// Whether column `idx` of the current row is NULL (None: no current
    /// row or no such column).
    pub fn is_null(&self, idx: usize) -> Option<bool> {
        let (_, cell) = self.cell(idx)?;
        Some(matches!(cell, Cell::Null))
    }

    /// Column `idx` of the current row, with its column.
    fn cell(&self, idx: usize) -> Option<(&Col, &Cell)> {
        let col = self.set.columns.get(idx)?;
        Some((col, self.set.cells.get(self.current? + idx)?))
    }

    /// Moves to the next result set: true if there is one (its columns,
    /// rows and figures are then current), false after the last. The
    /// current set's unread rows are skipped (a streamed one's read off,
    /// and its connection given back).
    pub fn next_set(&mut self) -> Result<bool> {
        self.current = None;
        self.next = 0;
        self.taken = 0;
        let next = match &mut self.source {
            Source::Buffered(rest) => rest.pop_front(),
            Source::Streaming(s) => {
                let mut rest = s.finish()?;
                let next = rest.pop_front();
                self.source = Source::Buffered(rest);
                next
            }
        };
        Ok(match next {
            Some(set) => {
                self.set = set;
                true
            }
            None => false,
        })
    }

    /// The number of rows of the current set (read ones included); None
    /// while streamed (not known until they are read).
    pub fn row_count(&self) -> Option<u64> {
        match self.source {
            Source::Buffered(_) => Some(self.set.count),
            Source::Streaming(_) => None,
        }
    }

    /// The rows the current set's statement changed.
    pub fn affected_rows(&self) -> u64 {
        self.set.affected_rows
    }

    /// The AUTO_INCREMENT id the current set's statement made (0: none).
    pub fn last_insert_id(&self) -> u64 {
        self.set.last_insert_id
    }

    /// The current set's warning count (a streamed set's once it is read).
    pub fn warnings(&self) -> u16 {
        self.set.warnings
    }

    /// The server's info string of the current set ("Rows matched: 1
    /// Changed: 1 ..."), empty for none.
    pub fn info(&self) -> &[u8] {
        let info: &[u8] = &self.set.info;
        info.strip_suffix(b"\0").unwrap_or(info)
    }

    /// The socket to wait on before the next read that may not wait, and
    /// the pool-wide number of its connection; None when only a read that
    /// waits can go on (a buffered answer, a streamed one past its first
    /// set, a row in 16 MiB packets).
    pub fn wait_fd(&mut self) -> Option<(std::os::fd::RawFd, u64)> {
        match &mut self.source {
            Source::Streaming(s) => s.wait_fd(),
            Source::Buffered(_) => None,
        }
    }

    /// Before a read: no current row; a streamed set drops the rows the
    /// last read brought (pointers into them end here).
    fn start_read(&mut self) {
        self.current = None;
        if let Source::Streaming(_) = self.source {
            self.set.cells.clear();
            self.set.bytes.clear();
            self.next = 0;
        }
    }

    /// The next row of the current set, waiting for it or not (`Waits`: a
    /// streamed row that has not arrived).
    fn read_row(&mut self, wait: bool) -> Result<Read> {
        let width = self.set.columns.len();
        match &mut self.source {
            Source::Buffered(_) => {
                if self.taken >= self.set.count || self.next + width > self.set.cells.len() {
                    return Ok(Read::End);
                }
                let at = self.next;
                self.next += width;
                self.taken += 1;
                Ok(Read::Row(at))
            }
            Source::Streaming(s) => {
                let at = self.set.cells.len();
                let got = s.fetch(
                    &self.set.columns,
                    wait,
                    &mut self.set.cells,
                    &mut self.set.bytes,
                )?;
                if let Some((warnings, info)) = s.take_end() {
                    self.set.warnings = warnings;
                    self.set.info = info;
                }
                Ok(match got {
                    Fetched::Row => {
                        self.next = self.set.cells.len();
                        Read::Row(at)
                    }
                    Fetched::End => Read::End,
                    Fetched::Waits => Read::Waits,
                })
            }
        }
    }

    /// Reads up to `max` rows of the current set for a bulk getter, waiting
    /// for them or not: where the first one's cells begin in the set's
    /// cells (the rest follow), how many were read, and whether it stopped
    /// at a row that has not arrived. No current row after it.
    pub(crate) fn read_rows(&mut self, max: usize, wait: bool) -> Result<(usize, usize, bool)> {
        let width = self.set.columns.len();
        self.start_read();
        let first = self.next;
        if width == 0 {
            return Ok((first, 0, false));
        }
        if let Source::Buffered(_) = self.source {
            let n = max.min((self.set.cells.len() - first) / width);
            self.next += n * width;
            self.taken += n as u64;
            return Ok((first, n, false));
        }
        let mut n = 0;
        while n < max {
            match self.read_row(wait)? {
                Read::Row(_) => n += 1,
                Read::End => break,
                Read::Waits => return Ok((first, n, true)),
            }
        }
        Ok((first, n, false))
    }
}

/// What an answer's result sets did, summed up: affected rows and warnings
/// added, the last non-zero insert id and the last non-empty info string
/// kept (the C ABI's `staunch_conn_last_result`).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Summary {
    pub(crate) affected_rows: u64,
    pub(crate) last_insert_id: u64,
    pub(crate) warnings: u32,
    /// Without its NUL; None for none (most statements).
    pub(crate) info: Option<Vec<u8>>,
}

impl Summary {
    pub(crate) fn of(sets: &Sets) -> Summary {
        let mut out = Summary::default();
        for set in sets.iter() {
            out.affected_rows = out.affected_rows.saturating_add(set.affected_rows);
            if set.last_insert_id != 0 {
                out.last_insert_id = set.last_insert_id;
            }
            out.warnings = out.warnings.saturating_add(u32::from(set.warnings));
            let info: &[u8] = &set.info;
            let info = info.strip_suffix(b"\0").unwrap_or(info);
            if !info.is_empty() {
                out.info = Some(info.to_vec());
            }
        }
        out
    }
}

impl PooledConn {
    /// Runs `sql` with `params` (sent as `how` says), its answer read whole.
    /// Errors as for [`PooledConn::query_params_with`].
    pub fn answer(&mut self, sql: &str, params: &[Param], how: SendAs) -> Result<Answer> {
        self.answer_sets(sql, params, how)
            .map(Answer::buffered)
            .map_err(|e| e.into_error("query"))
    }

    /// Runs `sql` with `params`, its answer read as it arrives: the answer
    /// holds the connection until its first result set is read to its end,
    /// the caller moves to the next set, or it is dropped, and then hands
    /// the connection to `give_back` (`drop` returns it to its pool). On
    /// failure the connection goes to `give_back` at once.
    pub fn answer_streamed(
        self,
        sql: &str,
        params: &[Param],
        how: SendAs,
        give_back: impl FnOnce(PooledConn) + Send + 'static,
    ) -> Result<Answer> {
        self.answer_stream(sql, params, how, Box::new(give_back))
            .map_err(|e| e.into_error("query"))
    }

    /// The body of [`PooledConn::answer`], its error as a statement's (the
    /// C ABI tells a placeholder count from other refusals).
    pub(crate) fn answer_sets(
        &mut self,
        sql: &str,
        params: &[Param],
        how: SendAs,
    ) -> std::result::Result<Sets, StatementError> {
        let sets = match self.plan_as(sql, params, how)? {
            Plan::Text { sql, partly } => self.collect_text(&sql, partly),
            binary => self.run_plan(binary, params),
        };
        Ok(sets?)
    }

    /// The body of [`PooledConn::answer_streamed`].
    pub(crate) fn answer_stream(
        mut self,
        sql: &str,
        params: &[Param],
        how: SendAs,
        give_back: GiveBack,
    ) -> std::result::Result<Answer, StatementError> {
        let stream = match self.plan_as(sql, params, how) {
            Ok(Plan::Text { sql, partly }) => Stream::text(self, give_back, &sql, partly),
            Ok(Plan::Binary { sql }) => Stream::binary(self, give_back, &sql, params),
            Err(e) => {
                give_back(self);
                return Err(e);
            }
        };
        stream
            .map(Answer::streaming)
            .map_err(StatementError::Failed)
    }

    /// Sends `sql` with `params` as `how` says, without waiting for its
    /// answer: the apart half of [`PooledConn::answer_sets`] for a caller
    /// that waits in its own event loop (`Sent` says on what). Read the
    /// answer with `recv_text_wire` (whole) or `Stream::text_sent`
    /// (streamed), before any other statement.
    pub(crate) fn send_statement(
        &mut self,
        sql: &str,
        params: &[Param],
        how: SendAs,
    ) -> std::result::Result<super::conn::Sent, StatementError> {
        let sent = match self.plan_as(sql, params, how)? {
            Plan::Text { sql, partly } => self.send_text_wire(&sql, partly),
            Plan::Binary { sql } => self.send_binary_wire(&sql, params),
        };
        Ok(sent?)
    }

    /// Whether a statement with `params` sent as `how` says goes as text, as
    /// written: asked for, or without parameters by default under the
    /// `text_without_params` knob.
    fn as_text(&self, params: &[Param], how: SendAs) -> bool {
        params.is_empty()
            && match how {
                SendAs::Text => true,
                SendAs::Default => self.config().text_without_params,
                SendAs::Way(_) => false,
            }
    }

    /// The plan of `sql` sent as `how` says.
    pub(crate) fn plan_as<'a>(
        &mut self,
        sql: &'a str,
        params: &[Param],
        how: SendAs,
    ) -> std::result::Result<Plan<'a>, StatementError> {
        if self.as_text(params, how) {
            return Ok(Plan::Text {
                sql: sql.into(),
                partly: reports_partly(sql),
            });
        }
        match how {
            SendAs::Text => Err(StatementError::TextWithParams),
            SendAs::Default => self.plan(sql, params, None),
            SendAs::Way(way) => self.plan(sql, params, Some(way)),
        }
    }
}
