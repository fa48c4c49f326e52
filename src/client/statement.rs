//! How a statement with parameters is sent: the one policy every face
//! uses.
//!
//! Two ways ([`Way`]):
//! - **prepared** (`COM_STMT_PREPARE` + `COM_STMT_EXECUTE`): the values
//!   travel apart from the text. A placeholder whose value needs a type the
//!   binary protocol cannot say is cast in the text (`sql::cast_for_prepare`:
//!   bytes, decimals, dates).
//! - **interpolated** (client-side, over the text protocol): staunch writes
//!   each value into the text as a literal escaped for the session's real
//!   state (`sql::write_literal`), as PyMySQL, mysqlclient and Connector/J
//!   do by default.
//!
//! The pool knob `interpolate_params` picks the default; a statement may
//! ask for either. A statement the server refuses to prepare (1295 "not
//! supported in the prepared statement protocol", or 1064, a syntax error at
//! prepare time: window frames with `?`, ...) is sent interpolated instead,
//! whatever was asked.
//!
//! Placeholders are found by the one scanner (`sql::scan`) under the
//! session's own `sql_mode`, and counted before anything is sent: a count
//! that does not match the parameters fails without a round trip (the
//! prepared way checks the server's own count too).

use std::borrow::Cow;

use mysql_common::row::convert::FromRow;
use mysql_common::row::{new_row, Row};
use mysql_common::value::Value;

use super::answer::{Set, Sets};
use super::conn::{PooledConn, Report};
use super::link::Link;
use super::session::ClientCharset;
use super::sql::{self, Lexing, ParamFault, Scan};
use super::value::Param;
use crate::error::{Error, ErrorKind};
use crate::wire::{types, WireError, ER_UNKNOWN_STMT_HANDLER};

/// MySQL's "This command is not supported in the prepared statement
/// protocol yet".
const ER_UNSUPPORTED_PS: u16 = 1295;
/// MySQL's syntax error.
const ER_PARSE_ERROR: u16 = 1064;

/// The two ways to send a statement with parameters (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Way {
    /// A server-side prepared statement (the binary protocol).
    Prepare,
    /// Client-side interpolation over the text protocol.
    Interpolate,
}

/// Why a statement was not run.
#[derive(Debug)]
pub(crate) enum StatementError {
    /// The statement's placeholders and the parameters do not match.
    ParamCount { placeholders: usize, given: usize },
    /// Parameters given to a statement sent as text.
    TextWithParams,
    /// It failed once sent, as the Rust API reports it.
    Failed(Error),
    /// A parameter cannot be written (a double that is NaN, ...).
    Param(ParamFault),
    /// It is more than the server takes in one packet (its
    /// `max_allowed_packet`); nothing was sent.
    TooLarge {
        /// What the one packet (or, sent as long data, the one parameter)
        /// would hold, in bytes.
        size: usize,
        /// The parameter (from 1) sent as long data, if that is what is too
        /// large.
        param: Option<usize>,
        /// The session's `max_allowed_packet`.
        max: usize,
    },
    /// The server refused it, or the connection failed.
    Wire(WireError),
}

impl From<WireError> for StatementError {
    fn from(e: WireError) -> StatementError {
        StatementError::Wire(e)
    }
}

impl StatementError {
    /// As the Rust API reports it.
    pub(crate) fn into_error(self, context: &str) -> Error {
        match self {
            StatementError::Wire(e) => Error::from_wire(context, &e),
            StatementError::Failed(e) => e,
            other => Error::new(ErrorKind::InvalidArgument, other.message()),
        }
    }

    /// The message of a `ParamCount` or `Param` error.
    pub(crate) fn message(&self) -> String {
        match self {
            StatementError::ParamCount {
                placeholders,
                given,
            } => format!(
                "the statement has {placeholders} placeholder(s) but {given} parameter(s) were given"
            ),
            StatementError::Param(f) => f.to_string(),
            StatementError::TextWithParams => {
                "a statement sent as text takes no parameters".to_owned()
            }
            StatementError::Failed(e) => e.to_string(),
            StatementError::TooLarge { size, param, max } => {
                let what = match param {
                    Some(i) => format!("parameter {i} is {size} bytes"),
                    None => format!("the statement is {size} bytes to send"),
                };
                format!(
                    "{what}, more than the server's max_allowed_packet ({max} bytes); nothing was \
                     sent: raise max_allowed_packet on the server, or send less at once"
                )
            }
            StatementError::Wire(e) => e.to_string(),
        }
    }
}

/// Below this many bytes a statement is not checked against the server's
/// `max_allowed_packet` (which is at least 1 KiB but in practice MiBs; its
/// default is 16 MiB): the check costs one round trip per session, the first
/// time.
const CHECK_SIZE_FROM: usize = 64 * 1024;
/// The most one protocol packet carries; a prepared statement's values that
/// need more are sent as long data, each parameter on its own.
const MAX_PAYLOAD_LEN: usize = 0xff_ff_ff;

/// How a statement goes to the server, once planned: its text borrowed
/// from the caller's where it goes as written (no copy per statement).
#[derive(Debug)]
pub(crate) enum Plan<'a> {
    /// As text (interpolated, or written without parameters); `partly`: its
    /// last OK packet may not report all it changed (several statements, a
    /// `CALL`).
    Text { sql: Cow<'a, str>, partly: bool },
    /// A prepared statement (in the connection's statement cache), its
    /// values given to [`PooledConn::run_plan`].
    Binary { sql: Cow<'a, str> },
}

/// The bytes of a parameter sent in an execute (0 for the fixed-size
/// kinds, whose few bytes the per-parameter allowance covers).
fn value_len(p: &Param) -> usize {
    match p {
        Param::Text(t) => t.len(),
        Param::Bytes(b) => b.len(),
        Param::Decimal(d) => d.literal().len(),
        _ => 0,
    }
}

/// Refuses a prepared statement's values that the server would not take
/// (over its `max_allowed_packet`), before anything is sent: `lens` are the
/// values' byte lengths (0 for the fixed-size kinds).
pub(crate) fn check_execute_size(
    conn: &mut PooledConn,
    lens: impl Iterator<Item = usize> + Clone,
) -> Result<(), StatementError> {
    let total: usize = 11 + lens.clone().map(|l| l + 11).sum::<usize>();
    if total < CHECK_SIZE_FROM {
        return Ok(());
    }
    let max = conn.max_allowed_packet_wire()?;
    if total <= max {
        return Ok(());
    }
    let (size, param) = if total <= MAX_PAYLOAD_LEN {
        (total, None)
    } else {
        lens.enumerate()
            .map(|(i, l)| (l, Some(i + 1)))
            .max()
            .unwrap_or((0, None))
    };
    Err(StatementError::TooLarge { size, param, max })
}

impl Plan<'_> {
    /// What the largest packet (or long-data parameter, from 1) it sends
    /// holds, roughly from above: the server refuses a statement whose
    /// packet is over its `max_allowed_packet`, and a parameter whose long
    /// data is.
    fn size(&self, params: &[Param]) -> (usize, Option<usize>) {
        match self {
            Plan::Text { sql, .. } => (sql.len() + 1, None),
            Plan::Binary { .. } => {
                let total: usize = 11 + params.iter().map(|v| value_len(v) + 11).sum::<usize>();
                if total <= MAX_PAYLOAD_LEN {
                    return (total, None);
                }
                params
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (value_len(v), Some(i + 1)))
                    .max()
                    .unwrap_or((0, None))
            }
        }
    }
}

fn unpreparable(e: &WireError) -> bool {
    matches!(e, WireError::Server(se) if se.code == ER_UNSUPPORTED_PS || se.code == ER_PARSE_ERROR)
}

impl Param {
    /// The value as an execute sends it: text as a string, bytes as a
    /// blob, a decimal as its exact text typed DECIMAL.
    pub(crate) fn to_wire(&self) -> crate::wire::Param<'_> {
        use crate::wire::{Date, DateTime, Param as W, Time};
        match self {
            Param::Null => W::Null,
            Param::Int(v) => W::Int(*v),
            Param::UInt(v) => W::UInt(*v),
            Param::Double(v) => W::Double(*v),
            Param::Text(s) => W::Bytes(s.as_bytes(), types::STRING),
            Param::Bytes(b) => W::Bytes(b, types::BLOB),
            Param::Decimal(d) => W::Bytes(d.literal().as_bytes(), types::NEWDECIMAL),
            &Param::Date(year, month, day) => W::Date(Date { year, month, day }),
            &Param::DateTime(year, month, day, hour, minute, second, micros) => {
                W::DateTime(DateTime {
                    date: Date { year, month, day },
                    hour,
                    minute,
                    second,
                    micros,
                })
            }
            &Param::Time(negative, days, hours, minutes, seconds, micros) => W::Time(Time {
                negative,
                days,
                hours,
                minutes,
                seconds,
                micros,
            }),
        }
    }
}

impl PooledConn {
    /// How this session lexes statements now: the `sql_mode` flags that
    /// change it, as the server last reported them, and the server's kind
    /// and version. One round trip when they are not known (after a
    /// multi-statement or `CALL`, or use of the raw `mysql::Conn`).
    pub fn lexing(&mut self) -> crate::Result<Lexing> {
        self.lexing_wire().map_err(|e| self.error("lexing", &e))
    }

    pub(crate) fn lexing_wire(&mut self) -> Result<Lexing, WireError> {
        let session = self.session_ref();
        if let (Some(l), Some(_)) = (session.lexing(), &session.state.client_charset) {
            return Ok(l);
        }
        // The character set comes along (text parameters need it), and
        // autocommit, which is unknown with them where the server does not
        // report variables (`State::settings_unseen`): this statement asks
        // it, so the statement itself need not be followed by another.
        let unseen = std::mem::take(&mut self.session_mut().state.settings_unseen);
        let asked = self.run(false, Report::Ok, |s| s.ask_settings());
        let session = self.session_mut();
        if let Err(e) = asked {
            session.state.settings_unseen |= unseen;
            return Err(e);
        }
        Ok(session.lexing().unwrap_or_default())
    }

    /// Refuses text that cannot arrive exact in this session (whose
    /// character set is known once `lexing` ran): staunch sends text as
    /// UTF-8, which a session reading another character set takes byte by
    /// byte in its own. Only ASCII is the same in all of them. Interpolated,
    /// such text could even end its own literal: in GBK, Big5 or Shift-JIS a
    /// byte of a UTF-8 character followed by `\` reads as one character,
    /// so the backslash that escaped a quote escapes nothing.
    fn check_text(&self, params: &[Param]) -> Result<(), StatementError> {
        let Some(ClientCharset::Other(name)) = &self.session_ref().state.client_charset else {
            return Ok(());
        };
        for (index, p) in params.iter().enumerate() {
            if let Param::Text(t) = p {
                if !t.is_ascii() {
                    return Err(StatementError::Param(ParamFault {
                        index,
                        message: format!(
                            "text with characters outside ASCII cannot be sent exactly: the \
                             session's character_set_client is {name}, and staunch sends text as \
                             UTF-8; nothing was sent (SET NAMES utf8mb4, or leave the session's \
                             character set as staunch made it)"
                        ),
                    }));
                }
            }
        }
        Ok(())
    }

    /// Where `sql`'s placeholders are in this session (see `sql::scan`); one
    /// round trip the first time a versioned executable comment (`/*!50100
    /// ... */`) needs the server's version, which a MariaDB greeting hides.
    pub fn scan(&mut self, sql: &str) -> crate::Result<Scan> {
        self.scan_wire(sql).map_err(|e| self.error("scan", &e))
    }

    pub(crate) fn scan_wire(&mut self, sql: &str) -> Result<Scan, WireError> {
        let lex = self.lexing_wire()?;
        let s = sql::scan(sql, &lex);
        if !s.needs_version {
            return Ok(s);
        }
        // The greeting's version is known since staunch reads it itself;
        // a server whose text it cannot read is taken as the oldest.
        let version = 0;
        self.session_mut().version = Some(version);
        Ok(sql::scan(
            sql,
            &Lexing {
                version: Some(version),
                ..lex
            },
        ))
    }

    /// The number of `?` placeholders in `sql` as this session's server
    /// lexes it (see [`scan`](PooledConn::scan)).
    pub fn count_params(&mut self, sql: &str) -> crate::Result<usize> {
        Ok(self.scan(sql)?.placeholders.len())
    }

    /// Prepares `sql` as a driver's `Prepare` wants it (into the statement
    /// cache, so that a statement the server refuses fails now) and
    /// returns its count of placeholders. With `text_ok`, a statement the
    /// binary protocol cannot carry (1295) is not an error: it runs as text
    /// whenever it runs (the module doc), so its count is the scanner's.
    pub fn prepare_count(&mut self, sql: &str, text_ok: bool) -> crate::Result<usize> {
        match crate::client::query::Queryable::prep(self, sql) {
            Ok(stmt) => Ok(usize::from(stmt.num_params())),
            Err(e) if text_ok && e.server_code() == Some(ER_UNSUPPORTED_PS) => {
                self.count_params(sql)
            }
            Err(e) => Err(e),
        }
    }

    /// The way a statement goes when none is asked for: the pool's
    /// `interpolate_params` knob.
    pub fn default_way(&self) -> Way {
        if self.config().interpolate_params {
            Way::Interpolate
        } else {
            Way::Prepare
        }
    }

    /// Plans `sql` with `params` (see the module doc): the prepared
    /// statement, or the interpolated text. With no parameters the prepared
    /// way prepares the statement too (its values then come typed).
    /// A statement larger than the server takes, or a parameter out of its
    /// kind's range (`Param::fault`), fails here, with nothing sent and the
    /// connection intact.
    pub(crate) fn plan<'a>(
        &mut self,
        sql: &'a str,
        params: &[Param],
        way: Option<Way>,
    ) -> Result<Plan<'a>, StatementError> {
        if let Some((index, message)) = params
            .iter()
            .enumerate()
            .find_map(|(i, p)| p.fault().map(|m| (i, m)))
        {
            return Err(StatementError::Param(ParamFault { index, message }));
        }
        let plan = self.plan_unchecked(sql, params, way)?;
        let (size, param) = plan.size(params);
        if size >= CHECK_SIZE_FROM {
            let max = self.max_allowed_packet_wire()?;
            if size > max {
                return Err(StatementError::TooLarge { size, param, max });
            }
        }
        Ok(plan)
    }

    /// The session's `max_allowed_packet`: one round trip the first time
    /// after a reset.
    pub(crate) fn max_allowed_packet_wire(&mut self) -> Result<usize, WireError> {
        if let Some(m) = self.session_ref().state.max_allowed_packet {
            return Ok(m);
        }
        self.run(false, Report::Ok, |s| s.max_allowed_packet())
    }

    fn plan_unchecked<'a>(
        &mut self,
        sql: &'a str,
        params: &[Param],
        way: Option<Way>,
    ) -> Result<Plan<'a>, StatementError> {
        let way = way.unwrap_or_else(|| self.default_way());
        if way == Way::Prepare && !params.iter().any(sql::needs_cast) {
            // Prepared as written: the server counts the placeholders (for
            // a statement in the connection's cache, with no round trip),
            // so the text need not be scanned; only a statement it cannot
            // prepare is scanned, to be interpolated.
            self.lexing_wire()?;
            self.check_text(params)?;
            match self.prepare_counted(sql) {
                Ok(want) if want == params.len() => return Ok(Plan::Binary { sql: sql.into() }),
                Ok(want) => {
                    return Err(StatementError::ParamCount {
                        placeholders: want,
                        given: params.len(),
                    })
                }
                Err(e) if unpreparable(&e) => {
                    let scan = self.scan_wire(sql)?;
                    if scan.placeholders.len() != params.len() {
                        return Err(StatementError::ParamCount {
                            placeholders: scan.placeholders.len(),
                            given: params.len(),
                        });
                    }
                    return self.interpolated(sql, &scan, params);
                }
                Err(e) => return Err(e.into()),
            }
        }
        let scan = self.scan_wire(sql)?;
        self.check_text(params)?;
        let n = params.len();
        if scan.placeholders.len() != n {
            return Err(StatementError::ParamCount {
                placeholders: scan.placeholders.len(),
                given: n,
            });
        }
        if way == Way::Interpolate {
            return self.interpolated(sql, &scan, params);
        }
        if let Some(cast) = sql::cast_for_prepare(sql, &scan.placeholders, params) {
            match self.prepare_counted(&cast) {
                Ok(count) if count == n => return Ok(Plan::Binary { sql: cast.into() }),
                // Not preparable with the casts (a place where only a `?`
                // may stand): exact values need the literals.
                Err(e) if unpreparable(&e) => return self.interpolated(sql, &scan, params),
                Err(e) => return Err(e.into()),
                // The server counted otherwise: as written, its count rules.
                Ok(_) => {}
            }
        }
        match self.prepare_counted(sql) {
            Ok(want) => {
                if want != n {
                    return Err(StatementError::ParamCount {
                        placeholders: want,
                        given: n,
                    });
                }
                Ok(Plan::Binary { sql: sql.into() })
            }
            Err(e) if unpreparable(&e) => self.interpolated(sql, &scan, params),
            Err(e) => Err(e.into()),
        }
    }

    fn interpolated<'a>(
        &mut self,
        sql: &'a str,
        scan: &Scan,
        params: &[Param],
    ) -> Result<Plan<'a>, StatementError> {
        let lex = self.lexing_wire()?;
        let text = if params.is_empty() {
            Cow::Borrowed(sql)
        } else {
            sql::interpolate(sql, &scan.placeholders, params, &lex)
                .map_err(StatementError::Param)?
                .into()
        };
        Ok(Plan::Text {
            partly: scan.several || sql::hides_changes(sql),
            sql: text,
        })
    }

    /// Prepares `sql` through the connection's statement cache, as every
    /// statement runs; its parameter count.
    fn prepare_counted(&mut self, sql: &str) -> Result<usize, WireError> {
        if let Some(n) = self.session_ref().link.stmts.param_count(sql.as_bytes()) {
            // In the cache: nothing to send, no statement to run.
            return Ok(n);
        }
        // A step of the statement, not one of its own for a tracer: the
        // execute that follows is; a prepare the server refuses is the
        // statement's end, and told as such.
        let started = std::time::Instant::now();
        let r = self.run_untraced(sql::reports_partly(sql), Report::Nothing, |s| {
            let Link { wire, stmts, .. } = &mut *s.link;
            Ok(stmts.prepare(wire, sql.as_bytes())?.param_count())
        });
        if let Err(e) = &r {
            if !unpreparable(e) {
                self.trace_failed_step(sql, started.elapsed(), e);
            }
        }
        r
    }

    /// Runs a planned statement and reads its whole answer (every result
    /// set) into the answer model, each set's figures filled in: the
    /// statement sent as for a caller that waits apart
    /// ([`send_binary_wire`](PooledConn::send_binary_wire)), then its
    /// answer received in this thread. A cached statement the server no
    /// longer knows (1243: the session was reset) is prepared and sent once
    /// more, which only a caller still holding the values can do (and not
    /// for long data, which went to the forgotten statement).
    pub(crate) fn run_plan(&mut self, plan: Plan<'_>, params: &[Param]) -> Result<Sets, WireError> {
        let sql = match plan {
            Plan::Text { sql, partly } => return self.collect_text(&sql, partly),
            Plan::Binary { sql } => sql,
        };
        let long = Plan::Binary { sql: "".into() }.size(params).0 > MAX_PAYLOAD_LEN;
        let mut retried = false;
        loop {
            self.send_binary_wire(&sql, params)?;
            match self.recv_text_wire() {
                Some(Err(WireError::Server(e)))
                    if e.code == ER_UNKNOWN_STMT_HANDLER && !retried && !long =>
                {
                    retried = true;
                }
                Some(r) => return r,
                None => return Err(super::conn::nothing_sent()),
            }
        }
    }

    /// Runs `sql` with `params` the pool's default way (the knob
    /// `interpolate_params`; see [`Way`]) and returns the rows of its first
    /// result set. A statement the server cannot prepare is sent
    /// interpolated. Errors: `InvalidArgument` when the placeholders and
    /// parameters do not match or a value has no SQL form, else as for any
    /// statement.
    ///
    /// ```no_run
    /// # fn f(pool: &staunch::Pool) -> staunch::Result<()> {
    /// use staunch::{Decimal, Param};
    /// let mut c = pool.get()?;
    /// let d: Decimal = "0.01".parse().unwrap();
    /// c.exec_params("UPDATE acct SET bal = bal + ? WHERE id = ?", &[d.into(), 7.into()])?;
    /// let rows: Vec<(String,)> = c.query_params("SELECT name FROM acct WHERE id = ?", &[7.into()])?;
    /// # Ok(()) }
    /// ```
    pub fn query_params<T: FromRow>(
        &mut self,
        sql: &str,
        params: &[Param],
    ) -> crate::Result<Vec<T>> {
        self.query_params_way(sql, params, None)
    }

    /// [`query_params`](PooledConn::query_params), sent the way given.
    pub fn query_params_with<T: FromRow>(
        &mut self,
        sql: &str,
        params: &[Param],
        way: Way,
    ) -> crate::Result<Vec<T>> {
        self.query_params_way(sql, params, Some(way))
    }

    fn query_params_way<T: FromRow>(
        &mut self,
        sql: &str,
        params: &[Param],
        way: Option<Way>,
    ) -> crate::Result<Vec<T>> {
        let plan = self
            .plan(sql, params, way)
            .map_err(|e| e.into_error("query"))?;
        let sets = self
            .run_plan(plan, params)
            .map_err(|e| self.error("query", &e))?;
        let Some(first) = sets.into_iter().next() else {
            return Ok(Vec::new());
        };
        rows_of(first)
            .into_iter()
            .map(|row| {
                mysql_common::row::convert::from_row_opt(row).map_err(|e| {
                    Error::new(
                        ErrorKind::InvalidArgument,
                        format!("query: a row does not convert to the type asked for: {e}"),
                    )
                })
            })
            .collect()
    }

    /// Runs a statement that returns no rows with `params`, the pool's
    /// default way (see [`query_params`](PooledConn::query_params)), and
    /// returns the rows it affected (summed over its result sets).
    pub fn exec_params(&mut self, sql: &str, params: &[Param]) -> crate::Result<u64> {
        self.exec_params_way(sql, params, None)
    }

    /// [`exec_params`](PooledConn::exec_params), sent the way given.
    pub fn exec_params_with(
        &mut self,
        sql: &str,
        params: &[Param],
        way: Way,
    ) -> crate::Result<u64> {
        self.exec_params_way(sql, params, Some(way))
    }

    fn exec_params_way(
        &mut self,
        sql: &str,
        params: &[Param],
        way: Option<Way>,
    ) -> crate::Result<u64> {
        let plan = self
            .plan(sql, params, way)
            .map_err(|e| e.into_error("execute"))?;
        let sets = self
            .run_plan(plan, params)
            .map_err(|e| self.error("execute", &e))?;
        Ok(sets
            .iter()
            .fold(0u64, |n, s| n.saturating_add(s.affected_rows)))
    }
}

/// Sends the values too large for one execute packet ahead as long data
/// (`COM_STMT_SEND_LONG_DATA`, each in chunks the server takes: `max` is
/// its `max_allowed_packet`), after preparing `sql` if the cache does not
/// hold it; each becomes `Long` in `values`, as the execute then says.
fn send_long_values(
    wire: &mut crate::client::connect::Wire,
    stmts: &mut crate::wire::StmtCache,
    sql: &str,
    values: &mut [crate::wire::Param<'_>],
    max: usize,
) -> Result<(), WireError> {
    let stmt = stmts.prepare(wire, sql.as_bytes())?;
    let id = stmt.id();
    let chunk = max.saturating_sub(64).clamp(1024, MAX_PAYLOAD_LEN - 16);
    for (i, v) in values.iter_mut().enumerate() {
        let (data, ty) = match v {
            crate::wire::Param::Bytes(b, ty) if b.len() > 8192 => (*b, *ty),
            _ => continue,
        };
        let index = u16::try_from(i).unwrap_or(u16::MAX);
        for part in data.chunks(chunk) {
            wire.send_long_data(id, index, part)?;
        }
        *v = crate::wire::Param::Long(ty);
    }
    Ok(())
}

impl PooledConn {
    /// [`send_text_wire`](PooledConn::send_text_wire) for a statement
    /// planned to go prepared (`Plan::Binary`): prepares it if the
    /// connection's cache does not hold it (that round trip is waited for
    /// here, once per connection and statement), sends large values ahead
    /// as long data and the execute, and returns what to wait on. The
    /// answer is read by [`recv_text_wire`](PooledConn::recv_text_wire) or
    /// [`start_sent_wire`](PooledConn::start_sent_wire), or read off by the
    /// next statement or the return.
    pub(crate) fn send_binary_wire(
        &mut self,
        sql: &str,
        params: &[Param],
    ) -> Result<super::conn::Sent, WireError> {
        self.note_sql(sql);
        let mut values: smallvec::SmallVec<[crate::wire::Param<'_>; 8]> =
            params.iter().map(Param::to_wire).collect();
        let (total, _) = Plan::Binary { sql: "".into() }.size(params);
        self.begin(false)?;
        let session = self.session_mut();
        let max = session.state.max_allowed_packet.unwrap_or(MAX_PAYLOAD_LEN);
        let Link { wire, stmts, .. } = &mut *session.link;
        let sent = if total > MAX_PAYLOAD_LEN {
            send_long_values(wire, stmts, sql, &mut values, max)
        } else {
            Ok(())
        }
        .and_then(|()| stmts.send_execute(wire, sql.as_bytes(), &values));
        match sent {
            Ok(()) => {
                session.open = Some(super::session::WireOpen {
                    first_end: None,
                    sent_only: true,
                    binary: None,
                    // The cache's key: the text without a copy (the
                    // statement was just prepared or found there).
                    prepared: Some(
                        stmts
                            .key(sql.as_bytes())
                            .unwrap_or_else(|| sql.as_bytes().into()),
                    ),
                });
                Ok(super::conn::Sent {
                    fd: session.link.raw_fd(),
                    arrived: session.link.wire.has_buffered_input(),
                })
            }
            Err(e) => self.settle(Err(e), Report::Ok),
        }
    }
}

/// A set of the answer model as `mysql_common` rows.
fn rows_of(set: Set) -> Vec<Row> {
    let n = set.columns.len().max(1);
    let columns: std::sync::Arc<[mysql_common::packets::Column]> = set
        .columns
        .iter()
        .map(|c| c.to_column())
        .collect::<Vec<_>>()
        .into();
    let mut rows = Vec::with_capacity(set.cells.len() / n);
    let mut cells = set.cells.iter().copied();
    let arena = &set.bytes;
    for _ in 0..set.count {
        let values: Vec<Value> = cells
            .by_ref()
            .take(set.columns.len())
            .map(|c| c.into_value(arena))
            .collect();
        rows.push(new_row(values, columns.clone()));
    }
    rows
}
