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

use mysql::prelude::{FromRow, Protocol, Queryable};
use mysql::{from_row, Binary, Params, QueryResult, Statement, Text};

use super::conn::PooledConn;
use super::session::{ClientCharset, Settings, SETTINGS_SQL};
use super::sql::{self, Lexing, ParamFault, Scan};
use super::value::Param;
use crate::error::{Error, ErrorKind};

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
    /// The driver or the server refused it.
    Mysql(mysql::Error),
}

impl From<mysql::Error> for StatementError {
    fn from(e: mysql::Error) -> StatementError {
        StatementError::Mysql(e)
    }
}

impl StatementError {
    /// As the Rust API reports it.
    pub(crate) fn into_error(self, context: &str) -> Error {
        match self {
            StatementError::Mysql(e) => Error::from_mysql(context, &e),
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
            StatementError::Mysql(e) => e.to_string(),
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

/// How a statement goes to the server, once planned.
#[derive(Debug)]
pub(crate) enum Plan {
    /// As text (interpolated, or written without parameters); `partly`: its
    /// last OK packet may not report all it changed (several statements, a
    /// `CALL`).
    Text { sql: String, partly: bool },
    /// A prepared statement and its values.
    Binary { stmt: Statement, params: Params },
}

impl Plan {
    /// What the largest packet (or long-data parameter, from 1) it sends
    /// holds, roughly from above: the server refuses a statement whose
    /// packet is over its `max_allowed_packet`, and a parameter whose long
    /// data is.
    fn size(&self) -> (usize, Option<usize>) {
        match self {
            Plan::Text { sql, .. } => (sql.len() + 1, None),
            Plan::Binary { params, .. } => {
                let Params::Positional(values) = params else {
                    return (0, None);
                };
                let len = |v: &mysql::Value| match v {
                    mysql::Value::Bytes(b) => b.len(),
                    _ => 0,
                };
                let total: usize = 11 + values.iter().map(|v| len(v) + 11).sum::<usize>();
                if total <= MAX_PAYLOAD_LEN {
                    return (total, None);
                }
                values
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (len(v), Some(i + 1)))
                    .max()
                    .unwrap_or((0, None))
            }
        }
    }
}

fn unpreparable(e: &mysql::Error) -> bool {
    matches!(e, mysql::Error::MySqlError(me) if me.code == ER_UNSUPPORTED_PS || me.code == ER_PARSE_ERROR)
}

impl PooledConn {
    /// How this session lexes statements now: the `sql_mode` flags that
    /// change it, as the server last reported them, and the server's kind
    /// and version. One round trip when they are not known (after a
    /// multi-statement or `CALL`, or use of the raw `mysql::Conn`).
    pub fn lexing(&mut self) -> mysql::Result<Lexing> {
        let session = self.session_ref();
        if let (Some(l), Some(_)) = (session.lexing(), &session.state.client_charset) {
            return Ok(l);
        }
        // The character set comes along (text parameters need it), and
        // autocommit, which is unknown with them where the server does not
        // report variables (`State::settings_unseen`): this statement asks
        // it, so the statement itself need not be followed by another.
        let unseen = std::mem::take(&mut self.session_mut().state.settings_unseen);
        let asked = self.run(false, |c| c.query_first::<Settings, _>(SETTINGS_SQL));
        let session = self.session_mut();
        match asked {
            Ok(settings) => session.take_settings(settings.unwrap_or_default()),
            Err(e) => {
                session.state.settings_unseen |= unseen;
                return Err(e);
            }
        }
        session.observe();
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
    pub fn scan(&mut self, sql: &str) -> mysql::Result<Scan> {
        let lex = self.lexing()?;
        let s = sql::scan(sql, &lex);
        if !s.needs_version {
            return Ok(s);
        }
        let v: Option<String> = self.run_text_as("SELECT VERSION()", false, |r| {
            Ok(r.next()
                .transpose()?
                .and_then(|row| row.get::<Option<String>, _>(0).flatten()))
        })?;
        let version = v.as_deref().and_then(sql::version_number).unwrap_or(0);
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
    pub fn count_params(&mut self, sql: &str) -> mysql::Result<usize> {
        Ok(self.scan(sql)?.placeholders.len())
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
    /// A statement larger than the server takes fails here, with nothing
    /// sent and the connection intact.
    pub(crate) fn plan(
        &mut self,
        sql: &str,
        params: &[Param],
        way: Option<Way>,
    ) -> Result<Plan, StatementError> {
        let plan = self.plan_unchecked(sql, params, way)?;
        let (size, param) = plan.size();
        if size >= CHECK_SIZE_FROM {
            let max = self.max_allowed_packet()?;
            if size > max {
                return Err(StatementError::TooLarge { size, param, max });
            }
        }
        Ok(plan)
    }

    /// The session's `max_allowed_packet`: one round trip the first time.
    fn max_allowed_packet(&mut self) -> mysql::Result<usize> {
        if let Some(m) = self.session_ref().state.max_allowed_packet {
            return Ok(m);
        }
        let m: Option<u64> =
            self.run_text_as("SELECT @@SESSION.max_allowed_packet", false, |r| {
                Ok(r.next()
                    .transpose()?
                    .and_then(|row| row.get::<Option<u64>, _>(0).flatten()))
            })?;
        let m = m.map_or(usize::MAX, |m| usize::try_from(m).unwrap_or(usize::MAX));
        self.session_mut().state.max_allowed_packet = Some(m);
        Ok(m)
    }

    fn plan_unchecked(
        &mut self,
        sql: &str,
        params: &[Param],
        way: Option<Way>,
    ) -> Result<Plan, StatementError> {
        let way = way.unwrap_or_else(|| self.default_way());
        let scan = self.scan(sql)?;
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
        let values = || Params::from(params.iter().map(Param::to_value).collect::<Vec<_>>());
        let values = move || {
            if n == 0 {
                Params::Empty
            } else {
                values()
            }
        };
        if let Some(cast) = sql::cast_for_prepare(sql, &scan.placeholders, params) {
            match self.prep_checked(&cast) {
                Ok(stmt) if usize::from(stmt.num_params()) == n => {
                    return Ok(Plan::Binary {
                        stmt,
                        params: values(),
                    })
                }
                // Not preparable with the casts (a place where only a `?`
                // may stand): exact values need the literals.
                Err(e) if unpreparable(&e) => return self.interpolated(sql, &scan, params),
                Err(e) => return Err(e.into()),
                // The server counted otherwise: as written, its count rules.
                Ok(_) => {}
            }
        }
        match self.prep_checked(sql) {
            Ok(stmt) => {
                let want = usize::from(stmt.num_params());
                if want != n {
                    return Err(StatementError::ParamCount {
                        placeholders: want,
                        given: n,
                    });
                }
                Ok(Plan::Binary {
                    stmt,
                    params: values(),
                })
            }
            Err(e) if unpreparable(&e) => self.interpolated(sql, &scan, params),
            Err(e) => Err(e.into()),
        }
    }

    fn interpolated(
        &mut self,
        sql: &str,
        scan: &Scan,
        params: &[Param],
    ) -> Result<Plan, StatementError> {
        let lex = self.lexing()?;
        let text = if params.is_empty() {
            sql.to_owned()
        } else {
            sql::interpolate(sql, &scan.placeholders, params, &lex)
                .map_err(StatementError::Param)?
        };
        Ok(Plan::Text {
            partly: scan.several || super::conn::hides_changes(sql),
            sql: text,
        })
    }

    /// Runs a planned statement, `read` taking what it wants of the answer
    /// (the rest is read off after it, as in `run_text`).
    pub(crate) fn run_plan<T>(
        &mut self,
        plan: Plan,
        read: impl ReadAnswer<Out = T>,
    ) -> mysql::Result<T> {
        match plan {
            Plan::Text { sql, partly } => self.run_text_as(&sql, partly, |r| read.text(r)),
            Plan::Binary { stmt, params } => self.run_binary(&stmt, params, |r| read.binary(r)),
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
        let rows = self
            .run_plan(plan, Rows)
            .map_err(|e| Error::from_mysql("query", &e))?;
        Ok(rows.into_iter().map(from_row).collect())
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
        self.run_plan(plan, Affected)
            .map_err(|e| Error::from_mysql("execute", &e))
    }
}

/// What a statement's reader takes from its answer, of either protocol.
pub(crate) trait ReadAnswer {
    type Out;
    /// The answer of an interpolated (or unparameterized) text statement.
    fn text(self, r: &mut QueryResult<'_, '_, '_, Text>) -> mysql::Result<Self::Out>;
    /// The answer of a prepared statement.
    fn binary(self, r: &mut QueryResult<'_, '_, '_, Binary>) -> mysql::Result<Self::Out>;
}

/// The rows of the first result set.
struct Rows;

fn rows<P: Protocol>(r: &mut QueryResult<'_, '_, '_, P>) -> mysql::Result<Vec<mysql::Row>> {
    r.by_ref().collect()
}

impl ReadAnswer for Rows {
    type Out = Vec<mysql::Row>;
    fn text(self, r: &mut QueryResult<'_, '_, '_, Text>) -> mysql::Result<Self::Out> {
        rows(r)
    }
    fn binary(self, r: &mut QueryResult<'_, '_, '_, Binary>) -> mysql::Result<Self::Out> {
        rows(r)
    }
}

/// The rows affected, summed over every result set.
struct Affected;

fn affected<P: Protocol>(r: &mut QueryResult<'_, '_, '_, P>) -> mysql::Result<u64> {
    let mut n = 0u64;
    while let Some(mut set) = r.iter() {
        // Before the rows: stepping past the set lets its OK packet go.
        n = n.saturating_add(set.affected_rows());
        for row in set.by_ref() {
            row?;
        }
    }
    Ok(n)
}

impl ReadAnswer for Affected {
    type Out = u64;
    fn text(self, r: &mut QueryResult<'_, '_, '_, Text>) -> mysql::Result<u64> {
        affected(r)
    }
    fn binary(self, r: &mut QueryResult<'_, '_, '_, Binary>) -> mysql::Result<u64> {
        affected(r)
    }
}
