//! The Rust face: [`Queryable`], [`QueryResult`] and [`Statement`], with
//! the `mysql` crate's names over `mysql_common`'s [`Row`], [`FromRow`],
//! [`Value`] and [`Params`], so that code written for `mysql::PooledConn`
//! ports by changing its `use` lines (`use staunch::prelude::*;`).
//!
//! Every statement goes through the connection's own steps
//! (`PooledConn::begin` and `settle`, see `conn.rs`); an answer the
//! borrower reads itself is a [`QueryResult`], which reads off what the
//! borrower left when it is dropped, so no answer is ever left for the
//! next statement. Where the `mysql` crate panics (a row that does not
//! convert to the type asked for), these return an error.

use std::sync::Arc;

use mysql_common::constants::{ColumnFlags, ColumnType};
use mysql_common::named_params::ParsedNamedParams;
use mysql_common::packets::Column;
use mysql_common::row::convert::{from_row_opt, FromRow};
use mysql_common::row::{new_row, Row};
use mysql_common::value::Value;

use super::conn::{PooledConn, Report};
use super::link::Link;
use super::sql::reports_partly;
use super::value::{date_time_fault, time_fault};
use crate::error::{Error, ErrorKind, Result};
use crate::wire::{
    status, types, BinaryColumns, BinaryNext, Cell, ColumnDef, Columns, Date, DateTime, Next,
    OkInfo, Param, Response, Time, WireError,
};

pub use mysql_common::params::Params;

/// A statement prepared on a connection: its text (the connection's
/// statement cache holds the server's handle, and prepares it again when
/// the server forgot it, after a reset), its parameters and its columns.
/// Cheap to clone.
#[derive(Clone, Debug)]
pub struct Statement {
    /// The text sent to the server (named parameters turned into `?`).
    sql: Arc<str>,
    /// The names of its named parameters (`:name`), in order; None when it
    /// uses `?`.
    named: Option<Arc<[Vec<u8>]>>,
    params: u16,
    columns: Arc<[Column]>,
}

impl Statement {
    /// The number of its parameters.
    pub fn num_params(&self) -> u16 {
        self.params
    }

    /// The number of its result's columns (0 for a statement without
    /// rows).
    pub fn num_columns(&self) -> u16 {
        u16::try_from(self.columns.len()).unwrap_or(u16::MAX)
    }

    /// Its result's columns, as the server described them at prepare.
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// The names of its named parameters, in order, if it has any.
    pub fn named_params(&self) -> Option<&[Vec<u8>]> {
        self.named.as_deref()
    }

    /// `params` in the statement's order: named ones placed by their
    /// names, positional ones counted.
    fn positional(&self, params: Params) -> Result<Vec<Value>> {
        let values = params
            .into_values(self.named.as_deref())
            .map_err(|e| invalid(format!("parameters: {e}")))?;
        if values.len() != usize::from(self.params) {
            return Err(invalid(format!(
                "the statement has {} parameter(s) but {} were given",
                self.params,
                values.len()
            )));
        }
        for (i, v) in values.iter().enumerate() {
            let fault = match *v {
                Value::Date(y, mo, d, h, mi, s, us) => date_time_fault(y, mo, d, h, mi, s, us),
                Value::Time(_, d, h, mi, s, us) => time_fault(d, h, mi, s, us),
                _ => None,
            };
            if let Some(why) = fault {
                return Err(invalid(format!(
                    "parameter {}: {why}; nothing was sent",
                    i + 1
                )));
            }
        }
        Ok(values)
    }
}

fn invalid(what: String) -> Error {
    Error::new(ErrorKind::InvalidArgument, what)
}

/// What can be executed: a [`Statement`], or text, prepared (through the
/// connection's statement cache) when executed.
pub trait AsStatement {
    /// The statement, prepared on `conn` if it is text.
    fn as_statement(&self, conn: &mut PooledConn) -> Result<Statement>;
}

impl AsStatement for Statement {
    fn as_statement(&self, _: &mut PooledConn) -> Result<Statement> {
        Ok(self.clone())
    }
}

impl AsStatement for &Statement {
    fn as_statement(&self, _: &mut PooledConn) -> Result<Statement> {
        Ok((*self).clone())
    }
}

impl AsStatement for str {
    fn as_statement(&self, conn: &mut PooledConn) -> Result<Statement> {
        conn.prepare(self)
    }
}

impl AsStatement for &str {
    fn as_statement(&self, conn: &mut PooledConn) -> Result<Statement> {
        conn.prepare(self)
    }
}

impl AsStatement for String {
    fn as_statement(&self, conn: &mut PooledConn) -> Result<Statement> {
        conn.prepare(self)
    }
}

impl AsStatement for &String {
    fn as_statement(&self, conn: &mut PooledConn) -> Result<Statement> {
        conn.prepare(self)
    }
}

/// Statements on a connection, with the `mysql` crate's method names.
/// Implemented by [`PooledConn`] and [`Transaction`](crate::Transaction).
pub trait Queryable {
    /// The connection under it.
    #[doc(hidden)]
    fn conn(&mut self) -> &mut PooledConn;

    /// Runs a text statement (several, separated by `;`, are fine) and
    /// returns its answer, to read as it arrives.
    fn query_iter<Q: AsRef<str>>(&mut self, query: Q) -> Result<QueryResult<'_>> {
        QueryResult::text(self.conn(), query.as_ref())
    }

    /// Prepares a statement (through the connection's statement cache).
    fn prep<Q: AsRef<str>>(&mut self, query: Q) -> Result<Statement> {
        self.conn().prepare(query.as_ref())
    }

    /// Closes a prepared statement on the server (and drops it from the
    /// connection's cache).
    fn close(&mut self, stmt: Statement) -> Result<()> {
        self.conn().close_statement(&stmt)
    }

    /// Executes a prepared statement (text is prepared first) with
    /// `params`, and returns its answer, to read as it arrives.
    fn exec_iter<S: AsStatement, P: Into<Params>>(
        &mut self,
        stmt: S,
        params: P,
    ) -> Result<QueryResult<'_>> {
        let conn = self.conn();
        let stmt = stmt.as_statement(conn)?;
        QueryResult::binary(conn, &stmt, params.into())
    }

    /// The rows of the first result set, each converted to `T`.
    fn query<T: FromRow, Q: AsRef<str>>(&mut self, query: Q) -> Result<Vec<T>> {
        self.query_map(query, |t| t)
    }

    /// The first row of the first result set, converted; the rest of the
    /// answer is read and dropped.
    fn query_first<T: FromRow, Q: AsRef<str>>(&mut self, query: Q) -> Result<Option<T>> {
        let mut r = self.query_iter(query)?;
        let first = r.next().transpose()?;
        r.finish()?;
        first.map(convert).transpose()
    }

    /// The rows of the first result set, converted and mapped by `f`.
    fn query_map<T: FromRow, F: FnMut(T) -> U, Q: AsRef<str>, U>(
        &mut self,
        query: Q,
        mut f: F,
    ) -> Result<Vec<U>> {
        self.query_fold(query, Vec::new(), |mut acc, t| {
            acc.push(f(t));
            acc
        })
    }

    /// The rows of the first result set, converted and folded by `f`.
    fn query_fold<T: FromRow, F: FnMut(U, T) -> U, Q: AsRef<str>, U>(
        &mut self,
        query: Q,
        init: U,
        f: F,
    ) -> Result<U> {
        let r = self.query_iter(query)?;
        fold(r, init, f)
    }

    /// Runs a text statement for its effect; the whole answer is read.
    fn query_drop<Q: AsRef<str>>(&mut self, query: Q) -> Result<()> {
        let q = query.as_ref();
        let conn = self.conn();
        conn.run_text_drop(q).map_err(|e| conn.error("query", &e))
    }

    /// The rows of the first result set of an execute, converted.
    fn exec<T: FromRow, S: AsStatement, P: Into<Params>>(
        &mut self,
        stmt: S,
        params: P,
    ) -> Result<Vec<T>> {
        self.exec_map(stmt, params, |t| t)
    }

    /// The first row of an execute's answer, converted; the rest is read
    /// and dropped.
    fn exec_first<T: FromRow, S: AsStatement, P: Into<Params>>(
        &mut self,
        stmt: S,
        params: P,
    ) -> Result<Option<T>> {
        let mut r = self.exec_iter(stmt, params)?;
        let first = r.next().transpose()?;
        r.finish()?;
        first.map(convert).transpose()
    }

    /// The rows of an execute's first result set, converted and mapped.
    fn exec_map<T: FromRow, S: AsStatement, P: Into<Params>, F: FnMut(T) -> U, U>(
        &mut self,
        stmt: S,
        params: P,
        mut f: F,
    ) -> Result<Vec<U>> {
        self.exec_fold(stmt, params, Vec::new(), |mut acc, t| {
            acc.push(f(t));
            acc
        })
    }

    /// The rows of an execute's first result set, converted and folded.
    fn exec_fold<T: FromRow, S: AsStatement, P: Into<Params>, F: FnMut(U, T) -> U, U>(
        &mut self,
        stmt: S,
        params: P,
        init: U,
        f: F,
    ) -> Result<U> {
        let r = self.exec_iter(stmt, params)?;
        fold(r, init, f)
    }

    /// Executes for the effect; the whole answer is read.
    fn exec_drop<S: AsStatement, P: Into<Params>>(&mut self, stmt: S, params: P) -> Result<()> {
        self.exec_iter(stmt, params)?.finish()
    }

    /// Executes once per set of parameters, each answer read whole; stops
    /// at the first error.
    fn exec_batch<S: AsStatement, P: Into<Params>, I: IntoIterator<Item = P>>(
        &mut self,
        stmt: S,
        params: I,
    ) -> Result<()> {
        let stmt = stmt.as_statement(self.conn())?;
        for p in params {
            self.exec_drop(&stmt, p)?;
        }
        Ok(())
    }
}

impl Queryable for PooledConn {
    fn conn(&mut self) -> &mut PooledConn {
        self
    }
}

/// Converts a row, as `mysql::from_row_opt` does, into an error rather
/// than the `mysql` crate's panic.
fn convert<T: FromRow>(row: Row) -> Result<T> {
    from_row_opt(row).map_err(|e| {
        invalid(format!(
            "a row does not convert to the type asked for ({} column(s)): {e}",
            e.0.len()
        ))
    })
}

fn fold<T: FromRow, U>(mut r: QueryResult<'_>, init: U, mut f: impl FnMut(U, T) -> U) -> Result<U> {
    let mut acc = init;
    for row in r.by_ref() {
        acc = f(acc, convert(row?)?);
    }
    r.finish()?;
    Ok(acc)
}

/// Where a [`QueryResult`] is in its answer.
enum At {
    /// Reading the rows of a result set.
    Rows,
    /// A result ended (its closing packet); more may follow.
    Ended(OkInfo),
    /// The answer is read whole (or failed), and settled.
    Done,
}

/// The answer to a statement, read as it arrives: an iterator over the rows
/// of its current result set; [`QueryResult::iter`] steps through the
/// result sets of a multi-statement or a `CALL`. Dropping it reads off
/// what is left (an error there breaks the connection: the pool closes it
/// on return); [`QueryResult::finish`] does the same and returns that
/// error.
pub struct QueryResult<'a> {
    conn: &'a mut PooledConn,
    /// The binary columns of a prepared statement's answer; None for text.
    binary: Option<BinaryColumns>,
    columns: Arc<[Column]>,
    at: At,
    /// The figures of the last result that ended.
    last: OkInfo,
    /// The first row of the current set was handed out (`iter` moves on
    /// only past a set that was started).
    started: bool,
    /// An error met while `iter` moved to the next result set, which it
    /// cannot return: given by the next row read, or by `finish`.
    error: Option<Error>,
}

impl std::fmt::Debug for QueryResult<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueryResult")
            .field("columns", &self.columns.len())
            .field("binary", &self.binary.is_some())
            .finish_non_exhaustive()
    }
}

impl<'a> QueryResult<'a> {
    fn text(conn: &'a mut PooledConn, sql: &str) -> Result<QueryResult<'a>> {
        conn.note_sql(sql);
        conn.begin(reports_partly(sql))
            .map_err(|e| conn.error("query", &e))?;
        let sent = conn.session_mut().link.wire.send_query(sql.as_bytes());
        QueryResult::start(conn, None, sent, "query")
    }

    fn binary(
        conn: &'a mut PooledConn,
        stmt: &Statement,
        params: Params,
    ) -> Result<QueryResult<'a>> {
        let values = stmt.positional(params)?;
        super::statement::check_execute_size(
            conn,
            values.iter().map(|v| match v {
                Value::Bytes(b) => b.len(),
                _ => 0,
            }),
        )
        .map_err(|e| e.into_error("execute"))?;
        let params: smallvec::SmallVec<[Param<'_>; 8]> = values.iter().map(wire_param).collect();
        conn.note_sql(&stmt.sql);
        conn.begin(false).map_err(|e| conn.error("execute", &e))?;
        // The connection's buffer, lent to this answer (given back when
        // it is dropped): no allocation for the columns once it has grown.
        let mut cols = std::mem::take(&mut conn.session_mut().link.bincols);
        let Link {
            wire, stmts, last, ..
        } = &mut *conn.session_mut().link;
        let r = stmts.execute(wire, stmt.sql.as_bytes(), &params, &mut cols);
        let first = r.map(|resp| {
            if let Response::Ok(ok) = &resp {
                *last = ok.clone();
            }
            resp
        });
        let mut q = QueryResult {
            conn,
            binary: Some(cols),
            columns: no_columns(),
            at: At::Done,
            last: OkInfo::default(),
            started: false,
            error: None,
        };
        match first {
            Ok(resp) => {
                q.took(resp);
                q.conn.answer_opened();
                Ok(q)
            }
            Err(e) => {
                let e = q.conn.settle::<()>(Err(e), Report::Ok).unwrap_err();
                let err = q.conn.error("execute", &e);
                q.at = At::Done;
                Err(err)
            }
        }
    }

    /// After the command was sent (`sent`): reads the start of its answer.
    fn start(
        conn: &'a mut PooledConn,
        binary: Option<BinaryColumns>,
        sent: std::result::Result<(), WireError>,
        what: &str,
    ) -> Result<QueryResult<'a>> {
        let mut q = QueryResult {
            conn,
            binary,
            columns: no_columns(),
            at: At::Done,
            last: OkInfo::default(),
            started: false,
            error: None,
        };
        match sent.and_then(|()| q.read_response()) {
            Ok(resp) => {
                q.took(resp);
                q.conn.answer_opened();
                Ok(q)
            }
            Err(e) => {
                let e = q.conn.settle::<()>(Err(e), Report::Ok).unwrap_err();
                Err(q.conn.error(what, &e))
            }
        }
    }

    /// Reads the start of the next result.
    fn read_response(&mut self) -> std::result::Result<Response, WireError> {
        let link = &mut self.conn.session_mut().link;
        let r = match &mut self.binary {
            Some(cols) => link.wire.read_binary_response(cols),
            None => link.wire.read_response(&mut link.columns),
        }?;
        if let Response::Ok(ok) = &r {
            link.last = ok.clone();
        }
        Ok(r)
    }

    /// Takes the start of a result: an OK ends it at once; a result set's
    /// columns become the rows' columns.
    fn took(&mut self, r: Response) {
        self.started = false;
        match r {
            Response::Ok(ok) => {
                self.columns = no_columns();
                self.at = At::Ended(ok);
            }
            Response::ResultSet => {
                let Link {
                    columns, face_memo, ..
                } = &mut *self.conn.session_mut().link;
                let defs = match &self.binary {
                    Some(cols) => cols.defs(),
                    None => columns,
                };
                self.columns = face_memo.columns(defs);
                self.at = At::Rows;
            }
        }
    }

    /// The next row of the current result set; None at its end.
    fn next_row(&mut self) -> std::result::Result<Option<Row>, WireError> {
        if !matches!(self.at, At::Rows) {
            return Ok(None);
        }
        self.started = true;
        let link = &mut self.conn.session_mut().link;
        let end = match &self.binary {
            Some(cols) => match link.wire.next_binary_row(cols)? {
                BinaryNext::Row(row) => {
                    let values = row.cells().map(binary_value).collect();
                    return Ok(Some(new_row(values, self.columns.clone())));
                }
                BinaryNext::End(end) => end,
            },
            None => match link.wire.next_row()? {
                Next::Row(row) => {
                    let values = row
                        .cells()
                        .map(|c| c.map_or(Value::NULL, |b| Value::Bytes(b.to_vec())))
                        .collect();
                    return Ok(Some(new_row(values, self.columns.clone())));
                }
                Next::End(end) => end,
            },
        };
        link.last = end.clone();
        self.at = At::Ended(end);
        Ok(None)
    }

    /// Moves past an ended result: to the next one when the server says
    /// one follows, else the answer is done (and settled).
    fn advance(&mut self) -> std::result::Result<bool, WireError> {
        let At::Ended(end) = &self.at else {
            return Ok(false);
        };
        self.last = end.clone();
        if end.status & status::MORE_RESULTS_EXISTS == 0 {
            self.at = At::Done;
            self.conn.answer_closed(Ok(()), Report::Ok)?;
            return Ok(false);
        }
        let r = self.read_response()?;
        self.took(r);
        Ok(true)
    }

    /// A failure while reading: the answer ends (step 3).
    fn failed(&mut self, e: WireError, what: &str) -> Error {
        self.at = At::Done;
        let e = self
            .conn
            .answer_closed::<()>(Err(e), Report::Ok)
            .unwrap_err();
        self.conn.error(what, &e)
    }

    /// The current result set, to iterate over its rows; the next call
    /// gives the next result set (a multi-statement's, a `CALL`'s), None
    /// after the last.
    pub fn iter(&mut self) -> Option<ResultSet<'_, 'a>> {
        if self.started {
            // The set handed out before: read off its rest, then move on.
            loop {
                match self.next_row() {
                    Ok(Some(_)) => {}
                    Ok(None) => break,
                    Err(e) => {
                        self.error = Some(self.failed(e, "reading the answer"));
                        return None;
                    }
                }
            }
            match self.advance() {
                Ok(true) => {}
                Ok(false) => return None,
                Err(e) => {
                    self.error = Some(self.failed(e, "reading the answer"));
                    return None;
                }
            }
        }
        match self.at {
            At::Done => None,
            _ => {
                self.started = true;
                Some(ResultSet { r: self })
            }
        }
    }

    /// The columns of the current result set.
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// Rows the statement (its last result so far) affected.
    pub fn affected_rows(&self) -> u64 {
        self.current().affected_rows
    }

    /// The `AUTO_INCREMENT` id it generated, if any.
    pub fn last_insert_id(&self) -> Option<u64> {
        Some(self.current().last_insert_id).filter(|id| *id != 0)
    }

    /// Warnings it raised.
    pub fn warnings(&self) -> u16 {
        self.current().warnings
    }

    /// The server's info text ("Rows matched: 1  Changed: 1 ...").
    pub fn info_str(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(&self.current().info)
    }

    fn current(&self) -> &OkInfo {
        match &self.at {
            At::Ended(ok) => ok,
            _ => &self.last,
        }
    }

    /// Reads off what is left of the answer (every result set) and returns
    /// the first error met there.
    pub fn finish(mut self) -> Result<()> {
        self.drain()
    }

    fn drain(&mut self) -> Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        loop {
            match self.at {
                At::Done => return Ok(()),
                At::Rows => match self.next_row() {
                    Ok(_) => {}
                    Err(e) => return Err(self.failed(e, "reading the answer")),
                },
                At::Ended(_) => {
                    if let Err(e) = self.advance() {
                        return Err(self.failed(e, "reading the answer"));
                    }
                }
            }
        }
    }
}

impl Iterator for QueryResult<'_> {
    type Item = Result<Row>;

    /// The next row of the current result set; None at its end (then
    /// [`QueryResult::iter`] moves to the next set).
    fn next(&mut self) -> Option<Result<Row>> {
        if let Some(e) = self.error.take() {
            return Some(Err(e));
        }
        self.started = true;
        match self.next_row() {
            Ok(Some(row)) => Some(Ok(row)),
            Ok(None) => None,
            Err(e) => Some(Err(self.failed(e, "reading the answer"))),
        }
    }
}

impl Drop for QueryResult<'_> {
    fn drop(&mut self) {
        // An error here has broken the session already (see `failed`).
        let _ = self.drain();
        if let Some(cols) = self.binary.take() {
            self.conn.session_mut().link.bincols = cols;
        }
    }
}

/// One result set of a [`QueryResult`]: an iterator over its rows.
#[derive(Debug)]
pub struct ResultSet<'r, 'a> {
    r: &'r mut QueryResult<'a>,
}

impl ResultSet<'_, '_> {
    /// Its columns.
    pub fn columns(&self) -> &[Column] {
        self.r.columns()
    }

    /// Rows it affected (known once it ended: read its rows first).
    pub fn affected_rows(&self) -> u64 {
        self.r.affected_rows()
    }

    /// The `AUTO_INCREMENT` id it generated, if any.
    pub fn last_insert_id(&self) -> Option<u64> {
        self.r.last_insert_id()
    }

    /// Warnings it raised.
    pub fn warnings(&self) -> u16 {
        self.r.warnings()
    }

    /// The server's info text.
    pub fn info_str(&self) -> std::borrow::Cow<'_, str> {
        self.r.info_str()
    }
}

impl Iterator for ResultSet<'_, '_> {
    type Item = Result<Row>;

    fn next(&mut self) -> Option<Result<Row>> {
        match self.r.next_row() {
            Ok(Some(row)) => Some(Ok(row)),
            Ok(None) => None,
            Err(e) => Some(Err(self.r.failed(e, "reading the answer"))),
        }
    }
}

impl PooledConn {
    /// Prepares `sql` through the connection's statement cache, as every
    /// statement runs (refused when broken, bounded, cancellable).
    pub(crate) fn prepare(&mut self, sql: &str) -> Result<Statement> {
        // Named parameters (`:name`) become `?`, their names kept.
        let parsed = ParsedNamedParams::parse(sql.as_bytes())
            .map_err(|e| invalid(format!("prepare: {e:?}")))?;
        let named: Option<Arc<[Vec<u8>]>> = if parsed.params().is_empty() {
            None
        } else {
            Some(parsed.params().iter().map(|p| p.to_vec()).collect())
        };
        let text: Arc<str> = String::from_utf8_lossy(parsed.query()).into();
        self.note_sql(sql);
        let partly = reports_partly(sql);
        let r = self.run(partly, Report::Nothing, |s| {
            let Link { wire, stmts, .. } = &mut *s.link;
            let p = stmts.prepare(wire, text.as_bytes())?;
            Ok((p.param_count(), columns_of(p.columns())))
        });
        let (params, columns) = r.map_err(|e| self.error("prepare", &e))?;
        Ok(Statement {
            sql: text,
            named,
            params: u16::try_from(params).unwrap_or(u16::MAX),
            columns,
        })
    }

    /// Closes `stmt` on the server and drops it from the cache.
    pub(crate) fn close_statement(&mut self, stmt: &Statement) -> Result<()> {
        let r = self.run(false, Report::Nothing, |s| {
            let Link { wire, stmts, .. } = &mut *s.link;
            stmts.close(wire, stmt.sql.as_bytes())
        });
        r.map_err(|e| self.error("close", &e))
    }

    /// The rows the last statement affected.
    pub fn affected_rows(&self) -> u64 {
        self.session_ref().link.last.affected_rows
    }

    /// The `AUTO_INCREMENT` id the last statement generated, or 0.
    pub fn last_insert_id(&self) -> u64 {
        self.session_ref().link.last.last_insert_id
    }

    /// Warnings the last statement raised.
    pub fn warnings(&self) -> u16 {
        self.session_ref().link.last.warnings
    }

    /// The server's info text for the last statement.
    pub fn info_str(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(&self.session_ref().link.last.info)
    }
}

/// No columns (an answer without a result set), shared: an `Arc` of none
/// still takes an allocation for its counts.
fn no_columns() -> Arc<[Column]> {
    static NONE: std::sync::OnceLock<Arc<[Column]>> = std::sync::OnceLock::new();
    NONE.get_or_init(|| Arc::from([])).clone()
}

/// The last answer's columns as the Rust face's rows carry them, kept with
/// the definitions they were read from: the same statement run again gets
/// the very same `Arc` (as `answer::ColumnMemo` does for the C ABI's).
#[derive(Default)]
pub(crate) struct FaceMemo {
    raw: Vec<u8>,
    columns: Option<Arc<[Column]>>,
}

impl FaceMemo {
    /// `defs`' columns, from the memo when they are the last ones.
    pub(crate) fn columns(&mut self, defs: &Columns) -> Arc<[Column]> {
        let raw = defs.raw_all();
        if let Some(kept) = &self.columns {
            if self.raw == raw {
                return kept.clone();
            }
        }
        let columns = columns_of(defs);
        // Bounded: a result set of a huge number of columns is not kept.
        if raw.len() <= 64 * 1024 {
            self.raw.clear();
            self.raw.extend_from_slice(raw);
            self.columns = Some(columns.clone());
        }
        columns
    }
}

/// A result's columns as `mysql_common` describes them.
pub(crate) fn columns_of(defs: &Columns) -> Arc<[Column]> {
    let mut v = Vec::with_capacity(defs.len());
    for d in defs.iter() {
        v.push(match d {
            Ok(d) => column_of(&d),
            // Checked when the definitions were read; a broken one is
            // named so.
            Err(_) => Column::new(ColumnType::MYSQL_TYPE_NULL).with_name(b"?"),
        });
    }
    v.into()
}

fn column_of(d: &ColumnDef<'_>) -> Column {
    Column::new(ColumnType::try_from(d.column_type).unwrap_or(ColumnType::MYSQL_TYPE_STRING))
        .with_schema(d.schema)
        .with_table(d.table)
        .with_org_table(d.org_table)
        .with_name(d.name)
        .with_org_name(d.org_name)
        .with_character_set(d.charset)
        .with_column_length(d.length)
        .with_flags(ColumnFlags::from_bits_truncate(d.flags))
        .with_decimals(d.decimals)
}

/// A binary cell as a `mysql_common` value.
fn binary_value(c: Cell<'_>) -> Value {
    match c {
        Cell::Null => Value::NULL,
        Cell::Int(i) => Value::Int(i),
        Cell::UInt(u) => Value::UInt(u),
        Cell::Float(f) => Value::Float(f),
        Cell::Double(d) => Value::Double(d),
        Cell::Bytes(b) => Value::Bytes(b.to_vec()),
        Cell::Date(d) => Value::Date(d.year, d.month, d.day, 0, 0, 0, 0),
        Cell::DateTime(t) => Value::Date(
            t.date.year,
            t.date.month,
            t.date.day,
            t.hour,
            t.minute,
            t.second,
            t.micros,
        ),
        Cell::Time(t) => Value::Time(t.negative, t.days, t.hours, t.minutes, t.seconds, t.micros),
    }
}

/// A `mysql_common` value as an execute's parameter.
fn wire_param(v: &Value) -> Param<'_> {
    match v {
        Value::NULL => Param::Null,
        Value::Int(i) => Param::Int(*i),
        Value::UInt(u) => Param::UInt(*u),
        Value::Float(f) => Param::Float(*f),
        Value::Double(d) => Param::Double(*d),
        Value::Bytes(b) => Param::Bytes(b, types::STRING),
        Value::Date(y, mo, d, h, mi, s, us) => Param::DateTime(DateTime {
            date: Date {
                year: *y,
                month: *mo,
                day: *d,
            },
            hour: *h,
            minute: *mi,
            second: *s,
            micros: *us,
        }),
        Value::Time(neg, d, h, m, s, us) => Param::Time(Time {
            negative: *neg,
            days: *d,
            hours: *h,
            minutes: *m,
            seconds: *s,
            micros: *us,
        }),
    }
}
