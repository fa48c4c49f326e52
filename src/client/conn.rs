//! [`PooledConn`]: a borrowed MySQL connection, and the life of each
//! statement on it.
//!
//! `PooledConn` implements [`Queryable`] itself (method resolution picks this
//! impl before `Deref`), so it sees every statement run through it. Each one:
//! 1. is refused at once (`Broken`) if an earlier statement left the session
//!    out of step; sets the session's server-side time limit first if this
//!    borrow asked for another one; and enters the session's cancel gate;
//! 2. runs; its answer is read to the end (by staunch, or by the borrower
//!    through `query_iter`/`exec_iter`, then it is finished at the next call
//!    or on return);
//! 3. on a failure that may have left part of an answer unread (anything but
//!    the server's own error packet, see [`breaks_session`]) breaks the
//!    session: the error is returned, every later statement is refused, and
//!    the connection is closed on return. A statement the pool's watchdog cut
//!    off (no answer within the time limit plus grace) reports that;
//! 4. on success, has its OK packet read for what changed in the session
//!    (`Session::observe`), which lets the return path skip every round trip
//!    a read-only borrow does not need.
//!
//! Through `&mut *guard` (the raw `mysql::Conn`) none of this is seen: the
//! pool then treats the session as changed (a reset on return), and still
//! bounds every statement: a borrowed socket that waits past the time limit
//! plus grace for an answer is shut down by the watchdog, so no late answer
//! can be read by the next statement.

use std::collections::VecDeque;
use std::fmt;
use std::ops::{Deref, DerefMut, Range};
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use mysql::prelude::{AsStatement, FromRow, Protocol, Queryable};
use mysql::{
    from_row, from_row_opt, Binary, Conn, FromRowError, Params, QueryResult, Statement, Text,
};

use super::answer::{
    collect_sets, collect_wire, collect_wire_from, wire_columns, with_last_figures, Col, Set,
};
use super::error::{not_ready, Refusal};
use super::session::{Session, State, WireOpen, WireSide};
use super::{CancelHandle, MysqlConnector, STATEMENT_GRACE};
use crate::pool::{Lease, Marks};
use crate::trace::{Started, TraceKind};
use crate::wire::{status, Next, OkInfo, Response, TextRow, WireError};
use mysql::mysql_common::proto::codec::error::PacketCodecError;

/// A borrowed MySQL connection: derefs to [`mysql::Conn`] and implements
/// [`mysql::prelude::Queryable`]; dropping it returns it to the pool.
///
/// Run statements through its own methods (`conn.query_first(...)`, or code
/// generic over `Queryable` given `&mut conn`): then a failed statement can
/// never leave its answer for the next one, and a read-only borrow is
/// returned without a round trip. `&mut *conn` gives the raw `mysql::Conn`
/// for code that needs exactly that type; the session is then reset on
/// return (see the module doc).
pub struct PooledConn {
    lease: Lease<MysqlConnector>,
    /// A statement whose answer the borrower reads itself (`query_iter`,
    /// `exec_iter`) is still to be finished (at the next call or on return).
    open: bool,
    /// This borrow's statement time limit, when it set one.
    limit: Option<Option<Duration>>,
    /// With a tracer: the text of the statement about to begin (set by the
    /// entry points that have one), then the running statement's start.
    /// (Boxed: a connection without a tracer carries one pointer.)
    trace: Option<Box<TraceSlot>>,
}

/// A connection's trace state (see `PooledConn::trace`).
#[derive(Debug, Default)]
struct TraceSlot {
    sql: Option<Box<str>>,
    started: Option<Started>,
}

/// Whether a failed statement may have left part of an answer unread, so
/// that the next command would read it as its own: any error but the
/// server's own error packet (after which the session is still in step).
/// The one place this rule is written; everything that runs statements on a
/// borrowed connection (this module's `Queryable`, the C ABI) goes through
/// [`PooledConn::run`].
pub(crate) fn breaks_session(e: &mysql::Error) -> bool {
    use mysql::DriverError::{
        MismatchedStmtParams, MixedParams, Params, ReadOnlyTransNotSupported,
    };
    !matches!(
        e,
        mysql::Error::MySqlError(_)
            // Refused by the driver before anything was sent.
            | mysql::Error::DriverError(
                MismatchedStmtParams(..) | Params(_) | MixedParams | ReadOnlyTransNotSupported
            )
    )
}

/// Where a statement's report on the session is, for step 4
/// ([`PooledConn::run_reported`]).
enum Report {
    /// In the crate's last OK packet.
    Crate,
    /// In this closing packet, read by the protocol layer.
    Wire(OkInfo),
    /// Nowhere: the command's answer is no OK packet.
    Nothing,
}

/// What a command's answer is, for [`PooledConn::run_as`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Answer {
    /// An OK packet (or a result set ending in one), with the session
    /// tracker's report of this command.
    Ok,
    /// No OK packet: a prepare's answer, or nothing (a close).
    NotOk,
}

/// What [`PooledConn::next_wire_row`] found.
pub(crate) enum WireRow<T> {
    /// The next row.
    Row(T),
    /// The end of the first result set (or no statement open): what is
    /// left is for [`PooledConn::finish_wire`].
    End,
    /// Not arrived yet (only when not waiting).
    Waits,
}

/// A statement sent by [`PooledConn::send_text_wire`], its answer awaited
/// apart.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sent {
    /// The socket that becomes readable when the answer begins to arrive
    /// (or the connection is cut). Only to wait on: never read, written or
    /// changed; open until the answer is read.
    pub(crate) fd: std::os::fd::RawFd,
    /// Bytes of the answer are read in already: do not wait.
    pub(crate) arrived: bool,
}

/// How a text statement read as it arrives begins
/// ([`PooledConn::open_text_wire`]).
pub(crate) enum WireStart {
    /// Its first result is a result set of these columns: its rows come
    /// from [`PooledConn::next_wire_row`], the rest of the answer from
    /// [`PooledConn::finish_wire`].
    Rows(Vec<Col>),
    /// Its first result has no rows: the whole answer, every result set,
    /// read (the statement is over).
    Whole(VecDeque<Set>),
}

/// Whether a statement text may hide other statements or routines whose
/// effects on the session its last OK packet does not report: several
/// statements (a `;` before the end), or a `CALL`; or may change what the
/// server never reports ([`changes_unreported`]). Errs on the side of
/// "yes" (a `;` in a string literal counts).
pub(crate) fn reports_partly(sql: &str) -> bool {
    let body = sql.trim_end().trim_end_matches(';');
    body.contains(';') || hides_changes(sql)
}

/// Whether one statement may change what its OK packet does not report: a
/// `CALL`, or [`changes_unreported`]. (A text known to hold one statement
/// needs only this; [`reports_partly`] adds the `;` check.)
pub(crate) fn hides_changes(sql: &str) -> bool {
    let first = first_word_span(sql);
    sql[first.clone()].eq_ignore_ascii_case("CALL") || changes_unreported(sql, first)
}

/// Whether a statement may change in its session what the server's
/// session tracker does not report, so that only a reset undoes it for
/// the next borrower. Checked on MariaDB 10.11, statement by statement:
/// - a user-level lock: `GET_LOCK` (held while the session idles in the
///   pool, and by the next borrower);
/// - a user variable assigned inside a statement: `@v := ...`,
///   `... INTO @v` (`SET @v` is reported);
/// - an open `HANDLER`, the next transaction's characteristics (`SET
///   TRANSACTION`), a global read lock (`FLUSH ... WITH READ LOCK`,
///   `BACKUP STAGE`/`LOCK`).
///
/// Not an XA transaction: `XA START` reports a transaction open, and the
/// `ROLLBACK` on return fails in one, so the connection is closed; that is
/// what a prepared one needs (MariaDB 10.11 keeps it for `XA RECOVER`),
/// where a reset would leave the session unusable (error 1031 on the next
/// statement, tried).
///
/// Not counted: what only reports the session's own last action, as every
/// pool leaves it: `LAST_INSERT_ID()` (every `INSERT` sets it, and so does
/// `LAST_INSERT_ID(expr)`) and a sequence's last value (`NEXTVAL`), which
/// would otherwise cost a reset on every borrow that takes an id.
///
/// The words count anywhere (in literals and comments too, so an
/// executable comment is covered): a false "yes" costs one reset. `first`
/// is where the statement's first word is ([`first_word_span`]).
fn changes_unreported(sql: &str, first: Range<usize>) -> bool {
    let b = sql.as_bytes();
    let first_end = first.end;
    let first = &sql[first];
    let keyword = match first.len() {
        3 => "SET",
        5 => "FLUSH",
        6 => "BACKUP",
        7 => "HANDLER",
        _ => "",
    };
    if !keyword.is_empty() && first.eq_ignore_ascii_case(keyword) {
        if keyword != "SET" {
            return true;
        }
        if word_at(b, skip_space(b, first_end), b"transaction") {
            return true;
        }
    }
    unreported_words(b)
}

/// Whether `b` holds a word `get_lock`, a word `into` before `@`, or `:=`.
/// This runs before every statement: each of them holds a byte that is rare
/// in SQL (`_`, `@`, `:`), so only those bytes are looked at, and the rest
/// is checked around them.
fn unreported_words(b: &[u8]) -> bool {
    b.iter().enumerate().any(|(i, &c)| match c {
        b'_' => get_lock_at(b, i),
        b'@' => into_before(b, i),
        b':' => b.get(i + 1) == Some(&b'='),
        _ => false,
    })
}

/// Whether the `_` at `i` is the one of a word `get_lock` (case aside).
fn get_lock_at(b: &[u8], i: usize) -> bool {
    i >= 3 && word_at(b, i - 3, b"get_lock") && (i == 3 || !is_ident(b[i - 4]))
}

/// Whether the `@` at `i` follows a word `into` (case aside), whitespace
/// between.
fn into_before(b: &[u8], i: usize) -> bool {
    let end = i - b[..i]
        .iter()
        .rev()
        .take_while(|c| c.is_ascii_whitespace())
        .count();
    end >= 4 && b[end - 4..end].eq_ignore_ascii_case(b"into") && (end == 4 || !is_ident(b[end - 5]))
}

fn is_ident(c: u8) -> bool {
    BYTE_CLASS[usize::from(c)] & IDENT != 0
}

/// [`BYTE_CLASS`] bit: a byte of an identifier.
const IDENT: u8 = 1;

static BYTE_CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let c = i as u8;
        if c.is_ascii_alphanumeric() || c == b'_' || c == b'$' {
            t[i] = IDENT;
        }
        i += 1;
    }
    t
};

/// Whether `word` (lowercase) is at `i`, case aside, and no identifier
/// character follows it.
fn word_at(b: &[u8], i: usize, word: &[u8]) -> bool {
    b.get(i..i + word.len())
        .is_some_and(|w| w.eq_ignore_ascii_case(word))
        && !b
            .get(i + word.len())
            .is_some_and(|c| BYTE_CLASS[usize::from(*c)] & IDENT != 0)
}

/// The offset of the first byte at or after `i` that is not whitespace.
fn skip_space(b: &[u8], i: usize) -> usize {
    i + b.get(i..).map_or(0, |r| {
        r.iter().take_while(|c| c.is_ascii_whitespace()).count()
    })
}

/// Whether a statement, having succeeded, leaves no transaction open:
/// `COMMIT` or `ROLLBACK` alone (`WORK` allowed), not `ROLLBACK TO
/// SAVEPOINT`, nor anything with `CHAIN` (`AND CHAIN` opens the next one;
/// `AND NO CHAIN` is taken as the same, on the safe side), nor several
/// statements.
fn ends_transaction(sql: &str) -> bool {
    let w = first_word(sql);
    if !(w.eq_ignore_ascii_case("COMMIT") || w.eq_ignore_ascii_case("ROLLBACK"))
        || reports_partly(sql)
    {
        return false;
    }
    let upper = sql.to_ascii_uppercase();
    !upper.contains("CHAIN") && !upper.split_ascii_whitespace().any(|t| t == "TO")
}

/// The first word of a statement, leading comments and whitespace skipped.
pub(super) fn first_word(sql: &str) -> &str {
    &sql[first_word_span(sql)]
}

/// Where [`first_word`] is in `sql` (an empty range when there is none).
fn first_word_span(sql: &str) -> Range<usize> {
    // Bytes, not chars: the server's lexer skips only ASCII whitespace, and
    // this runs before every statement.
    let b = sql.as_bytes();
    let mut i = 0;
    loop {
        while b.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        let rest = &b[i..];
        if rest.starts_with(b"/*") {
            match rest[2..].windows(2).position(|w| w == b"*/") {
                Some(end) => i += end + 4,
                None => return 0..0,
            }
        } else if rest.starts_with(b"--") || rest.first() == Some(&b'#') {
            match rest.iter().position(|c| *c == b'\n') {
                Some(nl) => i += nl + 1,
                None => return 0..0,
            }
        } else {
            let len = rest
                .iter()
                .position(|c| !c.is_ascii_alphabetic())
                .unwrap_or(rest.len());
            // ASCII letters: `i` and `i + len` are char boundaries.
            return i..i + len;
        }
    }
}

impl PooledConn {
    pub(crate) fn new(lease: Lease<MysqlConnector>) -> PooledConn {
        PooledConn {
            lease,
            open: false,
            limit: None,
            trace: None,
        }
    }

    /// With a tracer, keeps `sql` for the next statement's trace events.
    fn note_sql(&mut self, sql: &str) {
        if self.traced().is_some() {
            self.trace.get_or_insert_with(Default::default).sql = Some(sql.into());
        }
    }

    /// The borrower's stack in its host language, for a leak report of this
    /// borrow: kept only while `leak_detection_threshold` is set.
    pub(crate) fn set_borrower_stack(&self, text: String) {
        self.lease.set_borrower_stack(text);
    }

    /// The pool-wide number of this connection (as in events).
    pub fn id(&self) -> u64 {
        self.lease.id()
    }

    /// The server's `host:port` (`[v6]:port`, or `unix:path`), as events,
    /// metrics and traces name it.
    pub(crate) fn server(&self) -> String {
        self.lease.connector().cfg.endpoint()
    }

    /// The pool's tracer, with this connection's server, if one is set.
    pub(crate) fn traced(&self) -> Option<&crate::trace::Traced> {
        self.lease.connector().traced()
    }

    /// Closes the connection instead of returning it to the pool.
    pub fn discard(mut self) {
        self.lease.marks().mark_broken();
    }

    /// When the pool's liveness check cut this borrow's statement off (the
    /// server stopped answering during it: `ErrorKind::ServerUnresponsive`
    /// through this guard's own methods): what it checked and saw. For
    /// statements run on the raw `mysql::Conn` (`&mut *guard`), which fail
    /// with the `mysql` crate's own I/O error, this says why; the
    /// connection is closed on return either way.
    pub fn unresponsive(&self) -> Option<String> {
        self.lease
            .unresponsive()
            .map(|what| format!("the server stopped answering during this statement: {what}"))
    }

    /// The staunch error for an error met on the raw `mysql::Conn`
    /// (`&mut *guard`): `ServerUnresponsive` when the liveness check cut
    /// the statement off, else as [`Error::from_mysql`](crate::Error::from_mysql).
    pub fn error_of(&self, context: &str, e: &mysql::Error) -> crate::Error {
        match self.lease.unresponsive() {
            Some(what) => {
                crate::Error::from_mysql(context, &Refusal::Unresponsive(what).into_mysql())
            }
            None => crate::Error::from_mysql(context, e),
        }
    }

    /// Why this connection is broken, if an earlier statement broke it: it
    /// then refuses every statement and is closed on return.
    pub fn broken(&self) -> Option<&str> {
        self.session().state.broken.as_deref()
    }

    /// Sets this borrow's statement time limit (until it is returned),
    /// instead of the pool's `query_timeout`; `None`: no limit. The server
    /// enforces it (the session's `max_statement_time` / `max_execution_time`
    /// changes before the next statement, one round trip when it differs);
    /// the pool's watchdog cuts off a statement whose server has not answered
    /// the limit plus a grace of 1 s after it was sent.
    pub fn set_statement_timeout(&mut self, limit: Option<Duration>) {
        self.limit = Some(limit);
        self.lease
            .set_statement_bound(limit.map(|l| l + STATEMENT_GRACE));
        let fd = std::os::fd::AsRawFd::as_raw_fd(&self.session().conn);
        // The per-read bound behind the watchdog, for this borrow.
        let _ = crate::sys::set_socket_timeouts(fd, super::per_read_bound(limit));
    }

    /// Goes back to the pool's `query_timeout` after
    /// [`set_statement_timeout`](PooledConn::set_statement_timeout).
    pub fn use_pool_statement_timeout(&mut self) {
        let limit = self.lease.connector().config().query_timeout;
        self.set_statement_timeout(limit);
        self.limit = None;
    }

    /// Whether a transaction is open in the session, as the server last
    /// reported (explicit, implicit under autocommit=0, or LOCK TABLES).
    pub fn in_transaction(&self) -> bool {
        self.session().state.txn_open
    }

    /// Whether `autocommit` is on in the session, as the server last
    /// reported (on unless a statement or `init_sql` turned it off).
    pub fn autocommit(&self) -> bool {
        !self.session().state.autocommit_off
    }

    /// Records a failure met while the borrower read an answer itself
    /// (breaks the session when it may have left part of it unread), and
    /// returns it as step 3 tells it (a statement the watchdog cut off, or
    /// whose server stopped answering, says so).
    pub(crate) fn note_failure(&mut self, e: mysql::Error) -> mysql::Error {
        let (session, mut marks, connector) = self.lease.parts();
        fail(&mut session.state, &mut marks, connector, e)
    }

    /// The statement time limit in force for this borrow.
    pub fn statement_timeout(&self) -> Option<Duration> {
        match self.limit {
            Some(l) => l,
            None => self.lease.connector().config().query_timeout,
        }
    }

    /// A handle that cancels, from any thread, the statement running on this
    /// connection through its own methods (not one run on the raw
    /// `mysql::Conn`). See [`CancelHandle`].
    pub fn cancel_handle(&self) -> CancelHandle {
        let s = self.session();
        CancelHandle::new(
            s.gate.clone(),
            s.gate.borrow(),
            s.connection_id(),
            self.lease.connector(),
        )
    }

    /// What the return path must do.
    pub(crate) fn marks(&mut self) -> Marks<'_> {
        self.lease.marks()
    }

    fn session(&self) -> &Session {
        &self.lease
    }

    pub(super) fn session_ref(&self) -> &Session {
        &self.lease
    }

    /// The session, seen by staunch (unlike `DerefMut`, which hands the raw
    /// connection to the borrower).
    pub(super) fn session_mut(&mut self) -> &mut Session {
        self.lease.split().0
    }

    /// This borrow's statement clock, for a streamed answer the `mysql`
    /// crate reads (it borrows the connection meanwhile), to run it while a
    /// read waits: see `Lease::statement_clock`.
    pub(crate) fn statement_clock(&self) -> crate::pool::StatementClock<MysqlConnector> {
        self.lease.statement_clock()
    }

    /// The pool's connection settings.
    pub(super) fn config(&self) -> &super::ConnectConfig {
        self.lease.connector().config()
    }

    /// Finishes a statement whose answer the borrower read itself: its last
    /// OK packet is read now.
    fn finish_open(&mut self) {
        if let Some(open) = self.wire_open() {
            // Its error, if any, is the session's now (broken or not).
            if open.sent_only {
                let _ = self.recv_text_wire();
            } else {
                let _ = self.finish_wire();
            }
        }
        if std::mem::take(&mut self.open) {
            let (session, mut marks, connector) = self.lease.parts();
            session.gate.end();
            marks.statement_ends();
            marks.note_answer_open(false);
            session.observe();
            trace_end(&mut self.trace, connector, None);
        }
    }

    /// Steps 1 and 2 of a statement whose answer the borrower reads itself:
    /// it is finished at the next call or on return.
    fn start<'a, P: Protocol>(
        &'a mut self,
        partly: bool,
        exec: impl FnOnce(&'a mut Conn) -> mysql::Result<QueryResult<'a, 'a, 'a, P>>,
    ) -> mysql::Result<QueryResult<'a, 'a, 'a, P>> {
        self.begin(partly)?;
        let (session, mut marks, connector) = self.lease.parts();
        marks.note_settled(false);
        let Session {
            conn,
            state,
            gate,
            local_file_asked,
            ..
        } = session;
        match exec(conn) {
            Ok(r) if local_file_asked.load(Relaxed) => {
                // The answer began with a request for a local file: refused
                // as `run_reported` refuses. Dropping the answer reads the
                // rest of it off (the crate's `QueryResult` does); what that
                // rest changed is not seen, so the session is reset on
                // return. (A request later in a text the borrower reads
                // itself meets the crate's way: an empty file.)
                drop(r);
                gate.end();
                marks.statement_ends();
                state.dirty = true;
                let e = wire_error(WireError::LocalInfileRefused);
                trace_end(&mut self.trace, connector, Some(&e));
                Err(e)
            }
            Ok(r) => {
                // The borrower reads the rows through the crate's result,
                // whose end is not seen here: past the bound the watchdog
                // cuts the statement only while a thread waits reading its
                // socket (a frozen or dripping server), not while the
                // borrower takes its time or holds the connection after the
                // answer ended (until the next statement or the return,
                // `finish_open`).
                marks.note_answer_open(true);
                self.open = true;
                Ok(r)
            }
            Err(e) => {
                gate.end();
                marks.statement_ends();
                trace_end(&mut self.trace, connector, Some(&e));
                Err(fail(state, &mut marks, connector, e))
            }
        }
    }

    /// Step 1 of a statement (see the module doc). `partly` says that its
    /// OK packet may not report all it changed.
    fn begin(&mut self, partly: bool) -> mysql::Result<()> {
        self.finish_open();
        let statement = self.trace.as_mut().and_then(|t| t.sql.take());
        let id = self.lease.id();
        let wanted = self.statement_timeout();
        let (session, mut marks, connector) = self.lease.parts();
        if let Some(why) = &session.state.broken {
            return Err(Refusal::Broken(why.clone()).into_mysql());
        }
        if !session.state.tracked {
            if let Err(e) = session.init(connector.config()) {
                return Err(fail(&mut session.state, &mut marks, connector, e));
            }
        }
        if let Err(e) = session.set_limit(wanted) {
            return Err(fail(&mut session.state, &mut marks, connector, e));
        }
        if partly {
            session.state.dirty = true;
            // Its last OK packet may not report an `sql_mode` (or character
            // set) it changed.
            session.state.sql_mode = None;
            session.state.client_charset = None;
        }
        if session.state.autocommit_off || session.state.settings_unseen {
            // Under autocommit=0 any statement may open a transaction, and
            // one that only reads says so only in the status flags of its
            // last packet, which the `mysql` crate keeps private: where the
            // crate reads the answer (TLS sessions, prepared statements),
            // one is open until the server reports otherwise (COMMIT's,
            // ROLLBACK's OK packet). Where the protocol layer reads it
            // (`Session::observe_wire`), its flags replace this assumption;
            // once every statement runs on the layer, the assumption goes.
            // Where autocommit may have changed unseen, it is taken as off.
            session.state.txn_open = true;
        }
        // Each statement starts unmarked: a request for a local file met
        // before (an earlier statement's, or one later in an answer the
        // borrower read) is not this statement's.
        session.local_file_asked.store(false, Relaxed);
        session.gate.begin();
        marks.statement_begins();
        if let Some(tr) = connector.traced() {
            let mut e = tr.event(TraceKind::StatementStart);
            e.server = &tr.server;
            e.connection_id = id;
            e.statement = statement.as_deref();
            tr.emit(&e);
            self.trace.get_or_insert_with(Default::default).started = Some(Started {
                at: Instant::now(),
                connection_id: id,
                statement,
            });
        }
        Ok(())
    }

    /// Steps 1 to 4 for a statement run by `exec` and read to its end by it.
    pub(crate) fn run<T>(
        &mut self,
        partly: bool,
        exec: impl FnOnce(&mut Conn) -> mysql::Result<T>,
    ) -> mysql::Result<T> {
        self.run_as(partly, Answer::Ok, exec)
    }

    /// [`run`](PooledConn::run), for a command whose answer is an OK
    /// packet (`Answer::Ok`: the session tracker's report is read from it)
    /// or is not one (`Answer::NotOk`: a prepare's answer, a statement's
    /// close, which has none; the last OK packet is then an earlier
    /// command's, whose report must not be read again as this one's).
    fn run_as<T>(
        &mut self,
        partly: bool,
        answer: Answer,
        exec: impl FnOnce(&mut Conn) -> mysql::Result<T>,
    ) -> mysql::Result<T> {
        self.run_reported(partly, |session| {
            let report = match answer {
                Answer::Ok => Report::Crate,
                Answer::NotOk => Report::Nothing,
            };
            exec(&mut session.conn).map(|v| (v, report))
        })
    }

    /// Steps 1 to 4 for a statement run by `exec` on the session and read
    /// to its end by it, which says where the answer's report on the
    /// session is (see [`Report`]).
    fn run_reported<T>(
        &mut self,
        partly: bool,
        exec: impl FnOnce(&mut Session) -> mysql::Result<(T, Report)>,
    ) -> mysql::Result<T> {
        self.begin(partly)?;
        let r = exec(self.lease.split().0);
        self.settle_reported(r)
    }

    /// Steps 3 and 4 for a statement begun (`begin`) and read to its end:
    /// `r` is what reading it gave, and where its report is.
    fn settle_reported<T>(&mut self, r: mysql::Result<(T, Report)>) -> mysql::Result<T> {
        let (session, mut marks, connector) = self.lease.parts();
        session.gate.end();
        marks.statement_ends();
        trace_end(&mut self.trace, connector, r.as_ref().err());
        match r {
            Ok((v, report)) => {
                match report {
                    Report::Crate => session.observe(),
                    Report::Wire(end) => session.observe_wire(&end),
                    Report::Nothing => {
                        marks.note_settled(true);
                        return Ok(v);
                    }
                }
                if session.state.settings_unseen {
                    // The statement changed the session, and the server
                    // does not say how: ask now, so that what it reports
                    // of the statement (autocommit) is true.
                    if let Err(e) = session.ask_settings() {
                        return Err(fail(&mut session.state, &mut marks, connector, e));
                    }
                }
                marks.note_settled(true);
                if session.asked_for_local_file() {
                    // Read to its end, in step: refused as the protocol
                    // layer refuses (see `Session::refuse_local_files`).
                    return Err(wire_error(WireError::LocalInfileRefused));
                }
                Ok(v)
            }
            Err(e) => Err(fail(&mut session.state, &mut marks, connector, e)),
        }
    }

    /// A text statement, whose answer `read` takes what it wants of; the
    /// rest (every result set) is read off after it. A failure in that rest
    /// does not take back what `read` got (as with `mysql::Conn`'s
    /// `query_first`), but breaks the session.
    pub(crate) fn run_text<T>(
        &mut self,
        sql: &str,
        read: impl FnOnce(&mut QueryResult<'_, '_, '_, Text>) -> mysql::Result<T>,
    ) -> mysql::Result<T> {
        self.run_text_as(sql, reports_partly(sql), read)
    }

    /// Counts the session as changed: it is reset on return.
    pub(crate) fn mark_changed(&mut self) {
        self.lease.split().0.state.dirty = true;
    }

    /// [`run_text`](PooledConn::run_text) where the caller knows whether the
    /// text may hide changes its last OK packet does not report (`partly`,
    /// see `reports_partly`): interpolated text, whose values may hold `;`.
    pub(crate) fn run_text_as<T>(
        &mut self,
        sql: &str,
        partly: bool,
        read: impl FnOnce(&mut QueryResult<'_, '_, '_, Text>) -> mysql::Result<T>,
    ) -> mysql::Result<T> {
        self.note_sql(sql);
        let (v, rest) = self.run(partly, |c| {
            let mut r = c.query_iter(sql)?;
            let v = read(&mut r)?;
            Ok((v, settle(&mut r).err()))
        })?;
        if rest.is_none() && ends_transaction(sql) {
            // Under autocommit=0 the server may report nothing (there was
            // no transaction to end), and `begin` assumed one open. Locked
            // tables stay locked.
            let state = &mut self.lease.split().0.state;
            state.txn_open = state.tables_locked;
        }
        self.break_if(rest);
        Ok(v)
    }

    /// A text statement's whole answer, every result set, as `run_text_as`
    /// with [`collect_sets`] would read it, each set's figures filled in:
    /// through the protocol layer (`src/wire`) where the session allows it
    /// (see `Session::wire`), else through the crate.
    pub(crate) fn collect_text(&mut self, sql: &str, partly: bool) -> mysql::Result<VecDeque<Set>> {
        self.note_sql(sql);
        let sets = self.run_reported(partly, |session| match session.wire() {
            Some(w) => {
                let (f, defs) = (&mut w.framer, &mut w.columns);
                let (sets, end) = f
                    .send_query(sql.as_bytes())
                    .and_then(|()| collect_wire(f, defs))
                    .map_err(wire_error)?;
                Ok((sets, Report::Wire(end)))
            }
            None => {
                let conn = &mut session.conn;
                let sets = conn
                    .query_iter(sql)
                    .and_then(|mut r| collect_sets(&mut r, true))?;
                Ok((with_last_figures(sets, conn), Report::Crate))
            }
        })?;
        if ends_transaction(sql) {
            self.transaction_ended();
        }
        Ok(sets)
    }

    /// After a text statement that ends a transaction succeeded: as in
    /// `run_text_as`.
    fn transaction_ended(&mut self) {
        let state = &mut self.lease.split().0.state;
        state.txn_open = state.tables_locked;
    }

    /// Steps 1 and 2 of a text statement whose answer is read as it
    /// arrives, through the protocol layer: sends it and reads the start of
    /// its answer. Where the session cannot use the layer (see
    /// `Session::wire`): `None`, nothing sent (the crate's `query_iter_as`
    /// is the way). After `WireStart::Rows` the statement stays open: its
    /// rows come from [`next_wire_row`](PooledConn::next_wire_row), and
    /// [`finish_wire`](PooledConn::finish_wire) ends it (as does the next
    /// statement, or the return, reading what is left off).
    pub(crate) fn open_text_wire(
        &mut self,
        sql: &str,
        partly: bool,
    ) -> mysql::Result<Option<WireStart>> {
        if self.send_text_wire(sql, partly)?.is_none() {
            return Ok(None);
        }
        match self.start_sent_wire() {
            Some(start) => start.map(Some),
            None => Err(mysql::Error::IoError(std::io::Error::other(
                "the statement just sent has no answer open",
            ))),
        }
    }

    /// Steps 1 and 2 of a text statement whose answer is awaited apart
    /// (Go's netpoller, an event loop): sends it, through the protocol
    /// layer, and returns what to wait on ([`Sent`]). The statement's clock
    /// runs from here as for any statement: the watchdog's bound and the
    /// liveness check cut the socket (which makes it readable), and a
    /// cancel's `KILL QUERY` makes the server answer. The answer is then
    /// read by [`recv_text_wire`](PooledConn::recv_text_wire) or
    /// [`start_sent_wire`](PooledConn::start_sent_wire), or read off by the
    /// next statement or the return. `None` where the session cannot use
    /// the layer (see `Session::wire`): nothing sent.
    pub(crate) fn send_text_wire(
        &mut self,
        sql: &str,
        partly: bool,
    ) -> mysql::Result<Option<Sent>> {
        if !self.session_ref().may_use_wire() {
            return Ok(None);
        }
        self.note_sql(sql);
        self.begin(partly)?;
        let (session, mut marks, connector) = self.lease.parts();
        let Some(w) = session.wire() else {
            session.gate.end();
            marks.statement_ends();
            trace_end(&mut self.trace, connector, None);
            return Ok(None);
        };
        match w.framer.send_query(sql.as_bytes()) {
            Ok(()) => {
                marks.note_settled(false);
                w.open = Some(WireOpen {
                    first_end: None,
                    ends_txn: ends_transaction(sql),
                    sent_only: true,
                });
                Ok(Some(Sent {
                    fd: std::os::fd::AsRawFd::as_raw_fd(w.framer.stream()),
                    arrived: w.framer.has_buffered_input(),
                }))
            }
            Err(e) => {
                let r: mysql::Result<((), Report)> = Err(wire_error(e));
                self.settle_reported(r).map(|()| None)
            }
        }
    }

    /// The whole answer (every result set) to the statement
    /// [`send_text_wire`](PooledConn::send_text_wire) sent, as
    /// [`collect_text`](PooledConn::collect_text) gives it; waits for it if
    /// it has not arrived. `None`: no statement was sent and awaits.
    pub(crate) fn recv_text_wire(&mut self) -> Option<mysql::Result<VecDeque<Set>>> {
        let w = self.lease.split().0.wire.as_deref_mut()?;
        if !w.open.as_ref().is_some_and(|o| o.sent_only) {
            return None;
        }
        let open = w.open.take()?;
        let read = collect_wire(&mut w.framer, &mut w.columns);
        let r = read.map(|(sets, end)| (sets, Report::Wire(end)));
        let sets = match self.settle_reported(r.map_err(wire_error)) {
            Ok(sets) => sets,
            Err(e) => return Some(Err(e)),
        };
        if open.ends_txn {
            self.transaction_ended();
        }
        Some(Ok(sets))
    }

    /// [`open_text_wire`](PooledConn::open_text_wire)'s read of the start of
    /// the answer, for a statement
    /// [`send_text_wire`](PooledConn::send_text_wire) sent. `None`: no
    /// statement was sent and awaits.
    pub(crate) fn start_sent_wire(&mut self) -> Option<mysql::Result<WireStart>> {
        let (session, mut marks, _) = self.lease.parts();
        let w = session.wire.as_deref_mut()?;
        if !w.open.as_ref().is_some_and(|o| o.sent_only) {
            return None;
        }
        let open = w.open.take()?;
        let (f, defs) = (&mut w.framer, &mut w.columns);
        let whole = match f.read_response(defs) {
            Ok(Response::ResultSet) => match wire_columns(defs) {
                Ok(columns) => {
                    // The server has answered: from here the statement's
                    // clock runs only while a read waits for the server
                    // (`next_wire_row`), not while the caller takes its
                    // time between rows.
                    marks.note_statement(false);
                    w.open = Some(WireOpen {
                        sent_only: false,
                        ..open
                    });
                    return Some(Ok(WireStart::Rows(columns)));
                }
                Err(e) => Err(e),
            },
            Ok(first @ Response::Ok(_)) => collect_wire_from(f, defs, first),
            Err(e) => Err(e),
        };
        let r = whole.map(|(sets, end)| (sets, Report::Wire(end)));
        let sets = match self.settle_reported(r.map_err(wire_error)) {
            Ok(sets) => sets,
            Err(e) => return Some(Err(e)),
        };
        if open.ends_txn {
            self.transaction_ended();
        }
        Some(Ok(WireStart::Whole(sets)))
    }

    /// The next row of the first result set of the statement
    /// [`open_text_wire`](PooledConn::open_text_wire) opened, as `make`
    /// makes it of the row's cells; `End` at the set's end (or with no
    /// statement open). Unless `wait`, a row that has not arrived whole is
    /// not waited for (`Waits`). A failure ends the statement (see `run`,
    /// step 3).
    pub(crate) fn next_wire_row<T>(
        &mut self,
        wait: bool,
        make: impl FnOnce(TextRow<'_>) -> T,
    ) -> mysql::Result<WireRow<T>> {
        let (session, mut marks, _) = self.lease.parts();
        let Some(w) = session.wire.as_deref_mut() else {
            return Ok(WireRow::End);
        };
        let Some(open) = &mut w.open else {
            return Ok(WireRow::End);
        };
        if let Some(end) = &open.first_end {
            return Ok(after_first(end, wait));
        }
        let next = if w.framer.next_packet_buffered() {
            w.framer.next_row()
        } else if !wait {
            // What has reached the socket is read in without waiting.
            match w.framer.read_arrived() {
                Ok(_) if w.framer.next_packet_buffered() => w.framer.next_row(),
                Ok(_) => return Ok(WireRow::Waits),
                Err(e) => Err(e),
            }
        } else {
            // A wait for the server is bounded as a statement is (the
            // watchdog, the liveness check), from its start.
            marks.note_statement(true);
            let next = w.framer.next_row();
            marks.note_statement(false);
            next
        };
        let failed = match next {
            Ok(Next::Row(row)) => return Ok(WireRow::Row(make(row))),
            Ok(Next::End(end)) => {
                let then = after_first(&end, wait);
                open.first_end = Some(end);
                return Ok(then);
            }
            Err(e) => {
                w.open = None;
                e
            }
        };
        self.settle_reported::<()>(Err(wire_error(failed)))
            .map(|()| WireRow::End)
    }

    /// The socket to wait on (poll, epoll) before reading the next row of
    /// the text statement open on the protocol layer without waiting
    /// ([`next_wire_row`](PooledConn::next_wire_row)): while its first
    /// result set is read and the next row's bytes have not all arrived.
    /// None otherwise (no statement open, the first set ended and the rest
    /// of the answer still to be read, or a packet of several chunks, whose
    /// reading may wait though its first chunk is here): then only a read
    /// that waits can go on.
    pub(crate) fn wire_wait_fd(&mut self) -> Option<std::os::fd::RawFd> {
        let w = self.lease.split().0.wire.as_deref_mut()?;
        let open = w.open.as_ref()?;
        if open.first_end.is_some() || !w.framer.needs_input() {
            return None;
        }
        Some(std::os::fd::AsRawFd::as_raw_fd(w.framer.stream()))
    }

    /// The text statement open on the protocol layer, if any.
    fn wire_open(&mut self) -> Option<&mut WireOpen> {
        let w = self.lease.split().0.wire.as_deref_mut()?;
        w.open.as_mut()
    }

    /// Ends the statement [`open_text_wire`](PooledConn::open_text_wire)
    /// opened: reads off what is left of its first result set, then reads
    /// the result sets after it whole (a `CALL`'s, a multi-statement's).
    /// Returns the packet that closed the first set and those sets (none
    /// with no statement open).
    pub(crate) fn finish_wire(&mut self) -> mysql::Result<(OkInfo, VecDeque<Set>)> {
        let (session, mut marks, _) = self.lease.parts();
        let Some(w) = session.wire.as_deref_mut() else {
            return Ok((OkInfo::default(), VecDeque::new()));
        };
        let Some(open) = w.open.take() else {
            return Ok((OkInfo::default(), VecDeque::new()));
        };
        // What is left may wait for the server (see `next_wire_row`);
        // `settle_reported` stops the clock.
        marks.note_statement(true);
        let read = read_after_first(w, open.first_end);
        let r = read.map(|(first, rest, last)| ((first, rest), Report::Wire(last)));
        let v = self.settle_reported(r.map_err(wire_error))?;
        if open.ends_txn {
            self.transaction_ended();
        }
        Ok(v)
    }

    /// A prepared statement executed, read as in
    /// [`run_text`](PooledConn::run_text).
    pub(crate) fn run_binary<T>(
        &mut self,
        stmt: &Statement,
        params: Params,
        read: impl FnOnce(&mut QueryResult<'_, '_, '_, Binary>) -> mysql::Result<T>,
    ) -> mysql::Result<T> {
        let (v, rest) = self.run(false, |c| {
            let mut r = c.exec_iter(stmt, params)?;
            let v = read(&mut r)?;
            Ok((v, settle(&mut r).err()))
        })?;
        self.break_if(rest);
        Ok(v)
    }

    /// Step 3 for an error met after the statement gave its caller what it
    /// asked for.
    fn break_if(&mut self, e: Option<mysql::Error>) {
        if let Some(e) = e {
            drop(self.note_failure(e));
        }
    }

    /// Prepares `sql` (through the statement cache), as every statement
    /// runs (refused when broken, bounded, cancellable).
    pub(crate) fn prep_checked(&mut self, sql: &str) -> mysql::Result<Statement> {
        self.prepare(sql)
    }

    /// Prepares `sql` (through the statement cache).
    fn prepare(&mut self, sql: &str) -> mysql::Result<Statement> {
        self.note_sql(sql);
        self.run_as(reports_partly(sql), Answer::NotOk, |c| c.prep(sql))
    }
}

/// Tells the tracer, if any, that the statement begun (`started`) ended,
/// with `error` if it failed.
fn trace_end(
    slot: &mut Option<Box<TraceSlot>>,
    connector: &MysqlConnector,
    error: Option<&mysql::Error>,
) {
    let started = slot.as_mut().and_then(|t| t.started.take());
    let (Some(tr), Some(s)) = (connector.traced(), started) else {
        return;
    };
    let mut e = tr.event(TraceKind::StatementEnd);
    e.server = &tr.server;
    e.connection_id = s.connection_id;
    e.statement = s.statement.as_deref();
    e.duration = s.at.elapsed();
    let text = error.map(ToString::to_string);
    e.error = text.as_deref();
    if let Some(mysql::Error::MySqlError(m)) = error {
        e.error_code = m.code;
    }
    tr.emit(&e);
}

/// Step 3: a failed statement. Breaks the session when the failure
/// [`breaks_session`]; says so when the watchdog cut it off. When it says
/// the server cannot serve now ([`not_ready`]: Galera's 1047, or 1180 for a
/// commit in flight when its node left the Primary component; a shutdown),
/// the connection is closed on return and the connector's alarm raised (the
/// topology re-probes that server now and routes new borrows away from it
/// meanwhile); the session stays in step, so the borrower may still roll
/// back or read what it needs.
fn fail(
    state: &mut State,
    marks: &mut Marks<'_>,
    connector: &MysqlConnector,
    e: mysql::Error,
) -> mysql::Error {
    if let Some(what) = not_ready(&e) {
        marks.mark_broken();
        connector.not_ready(&what);
    }
    if !breaks_session(&e) || Refusal::of(&e).is_some() {
        return e;
    }
    marks.mark_broken();
    if let Some(what) = marks.unresponsive() {
        let r = Refusal::Unresponsive(what);
        state.broken = Some(r.to_string());
        return r.into_mysql();
    }
    if marks.was_cut() {
        let r = Refusal::Cut {
            limit: state.limit.unwrap_or_default(),
            grace: STATEMENT_GRACE,
        };
        state.broken = Some(r.to_string());
        return r.into_mysql();
    }
    state.broken = Some(e.to_string());
    e
}

/// What [`PooledConn::next_wire_row`] reports once the first result set
/// ended (`end` closed it): the sets after it are read whole by
/// `finish_wire`, so a read that may not wait stops before them.
fn after_first<T>(end: &OkInfo, wait: bool) -> WireRow<T> {
    if !wait && end.status & status::MORE_RESULTS_EXISTS != 0 {
        WireRow::Waits
    } else {
        WireRow::End
    }
}

/// What is left of a text answer whose first result set was being read:
/// the rest of its rows, unread (unless `first_end`, the packet that
/// closed it, was read already), then the sets after it, whole. Returns
/// that first closing packet, those sets, and the answer's last closing
/// packet.
fn read_after_first(
    w: &mut WireSide,
    first_end: Option<OkInfo>,
) -> Result<(OkInfo, VecDeque<Set>, OkInfo), WireError> {
    let first = match first_end {
        Some(end) => end,
        None => loop {
            if let Next::End(end) = w.framer.next_row()? {
                break end;
            }
        },
    };
    if first.status & status::MORE_RESULTS_EXISTS == 0 {
        let last = first.clone();
        return Ok((first, VecDeque::new(), last));
    }
    let (rest, last) = collect_wire(&mut w.framer, &mut w.columns)?;
    Ok((first, rest, last))
}

/// A protocol-layer error as the crate would have reported it, so that the
/// session's rules (`breaks_session`, `fail`) read it the same way: the
/// server's errors as the server's, everything else as a broken connection.
fn wire_error(e: WireError) -> mysql::Error {
    let server = |code, state: &[u8], message| {
        mysql::Error::MySqlError(mysql::MySqlError {
            state: String::from_utf8_lossy(state).into_owned(),
            message,
            code,
        })
    };
    match e {
        WireError::Server(s) => server(s.code, &s.state, s.message),
        // The client's own refusal, the connection still in step
        // (CR_LOAD_DATA_LOCAL_INFILE_REJECTED).
        WireError::LocalInfileRefused => server(2068, b"HY000", e.to_string()),
        WireError::Io(io) => mysql::Error::IoError(io),
        WireError::PacketTooLarge { .. } => {
            mysql::Error::CodecError(PacketCodecError::PacketTooLarge)
        }
        other => mysql::Error::IoError(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            other.to_string(),
        )),
    }
}

/// Reads what is left of an answer, every result set to its end.
fn settle<P: Protocol>(r: &mut QueryResult<'_, '_, '_, P>) -> mysql::Result<()> {
    while let Some(set) = r.iter() {
        for row in set {
            row?;
        }
    }
    Ok(())
}

/// The first row of the current result set.
fn first<P: Protocol>(r: &mut QueryResult<'_, '_, '_, P>) -> mysql::Result<Option<mysql::Row>> {
    r.next().transpose()
}

/// Folds the rows of the current result set.
fn fold_set<P: Protocol, U>(
    r: &mut QueryResult<'_, '_, '_, P>,
    init: U,
    mut f: impl FnMut(U, mysql::Row) -> U,
) -> mysql::Result<U> {
    let mut acc = init;
    for row in r.by_ref() {
        acc = f(acc, row?);
    }
    Ok(acc)
}

impl Deref for PooledConn {
    type Target = Conn;
    fn deref(&self) -> &Conn {
        self.session()
    }
}

impl DerefMut for PooledConn {
    /// Raw mutable access: the pool no longer sees the statements, so the
    /// session is reset on return (see the module doc).
    fn deref_mut(&mut self) -> &mut Conn {
        self.finish_open();
        // What runs there is not seen: its `sql_mode` and character set are
        // asked again.
        let state = &mut self.lease.split().0.state;
        state.sql_mode = None;
        state.client_charset = None;
        &mut self.lease
    }
}

impl Drop for PooledConn {
    fn drop(&mut self) {
        self.finish_open();
        // Cancel handles taken during this borrow no longer act (waits for a
        // cancel on its way, bounded by its own bound).
        self.session().gate.next_borrow();
    }
}

impl fmt::Debug for PooledConn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PooledConn")
            .field("id", &self.id())
            .finish()
    }
}

impl PooledConn {
    /// `query_iter` where the caller knows whether the text may hide
    /// changes its last OK packet does not report (see `run_text_as`).
    pub(crate) fn query_iter_as(
        &mut self,
        sql: &str,
        partly: bool,
    ) -> mysql::Result<QueryResult<'_, '_, '_, Text>> {
        self.note_sql(sql);
        self.start(partly, |c| c.query_iter(sql))
    }
}

impl Queryable for PooledConn {
    fn query_iter<Q: AsRef<str>>(
        &mut self,
        query: Q,
    ) -> mysql::Result<QueryResult<'_, '_, '_, Text>> {
        let q = query.as_ref();
        self.note_sql(q);
        self.start(reports_partly(q), |c| c.query_iter(q))
    }

    fn prep<Q: AsRef<str>>(&mut self, query: Q) -> mysql::Result<Statement> {
        self.prepare(query.as_ref())
    }

    fn close(&mut self, stmt: Statement) -> mysql::Result<()> {
        self.run_as(false, Answer::NotOk, |c| c.close(stmt))
    }

    fn exec_iter<S, P>(
        &mut self,
        stmt: S,
        params: P,
    ) -> mysql::Result<QueryResult<'_, '_, '_, Binary>>
    where
        S: AsStatement,
        P: Into<Params>,
    {
        // Text is prepared through our `prep`.
        let stmt = stmt.as_statement(self)?.into_owned();
        self.start(false, move |c| c.exec_iter(stmt, params))
    }

    fn exec_batch<S, P, I>(&mut self, stmt: S, params: I) -> mysql::Result<()>
    where
        Self: Sized,
        S: AsStatement,
        P: Into<Params>,
        I: IntoIterator<Item = P>,
    {
        let stmt = stmt.as_statement(self)?.into_owned();
        self.run(false, move |c| c.exec_batch(stmt, params))
    }

    // The methods below give what `mysql::Conn`'s give, and read the rest of
    // the answer themselves: the trait's own versions leave it to
    // `QueryResult`'s drop, which drops any error met there (a row over
    // max_allowed_packet, a timeout), so the pool would take back a
    // connection with half an answer still to come.

    fn query_first<T: FromRow, Q: AsRef<str>>(&mut self, query: Q) -> mysql::Result<Option<T>> {
        self.run_text(query.as_ref(), first)
            .map(|row| row.map(from_row))
    }

    fn query_first_opt<T: FromRow, Q: AsRef<str>>(
        &mut self,
        query: Q,
    ) -> mysql::Result<Option<Result<T, FromRowError>>> {
        self.run_text(query.as_ref(), first)
            .map(|row| row.map(from_row_opt))
    }

    fn query_fold<T, F, Q, U>(&mut self, query: Q, init: U, mut f: F) -> mysql::Result<U>
    where
        Q: AsRef<str>,
        T: FromRow,
        F: FnMut(U, T) -> U,
    {
        self.run_text(query.as_ref(), |r| {
            fold_set(r, init, |acc, row| f(acc, from_row(row)))
        })
    }

    fn query_fold_opt<T, F, Q, U>(&mut self, query: Q, init: U, mut f: F) -> mysql::Result<U>
    where
        Q: AsRef<str>,
        T: FromRow,
        F: FnMut(U, Result<T, FromRowError>) -> U,
    {
        self.run_text(query.as_ref(), |r| {
            fold_set(r, init, |acc, row| f(acc, from_row_opt(row)))
        })
    }

    fn query_drop<Q: AsRef<str>>(&mut self, query: Q) -> mysql::Result<()> {
        // The whole answer is the statement's: its errors are returned.
        self.run_text(query.as_ref(), settle)
    }

    fn exec_first<T, S, P>(&mut self, stmt: S, params: P) -> mysql::Result<Option<T>>
    where
        S: AsStatement,
        P: Into<Params>,
        T: FromRow,
    {
        let stmt = stmt.as_statement(self)?.into_owned();
        self.run_binary(&stmt, params.into(), first)
            .map(|row| row.map(from_row))
    }

    fn exec_first_opt<T, S, P>(
        &mut self,
        stmt: S,
        params: P,
    ) -> mysql::Result<Option<Result<T, FromRowError>>>
    where
        S: AsStatement,
        P: Into<Params>,
        T: FromRow,
    {
        let stmt = stmt.as_statement(self)?.into_owned();
        self.run_binary(&stmt, params.into(), first)
            .map(|row| row.map(from_row_opt))
    }

    fn exec_fold<T, S, P, U, F>(
        &mut self,
        stmt: S,
        params: P,
        init: U,
        mut f: F,
    ) -> mysql::Result<U>
    where
        S: AsStatement,
        P: Into<Params>,
        T: FromRow,
        F: FnMut(U, T) -> U,
    {
        let stmt = stmt.as_statement(self)?.into_owned();
        self.run_binary(&stmt, params.into(), |r| {
            fold_set(r, init, |acc, row| f(acc, from_row(row)))
        })
    }

    fn exec_fold_opt<T, S, P, U, F>(
        &mut self,
        stmt: S,
        params: P,
        init: U,
        mut f: F,
    ) -> mysql::Result<U>
    where
        S: AsStatement,
        P: Into<Params>,
        T: FromRow,
        F: FnMut(U, Result<T, FromRowError>) -> U,
    {
        let stmt = stmt.as_statement(self)?.into_owned();
        self.run_binary(&stmt, params.into(), |r| {
            fold_set(r, init, |acc, row| f(acc, from_row_opt(row)))
        })
    }

    fn exec_drop<S, P>(&mut self, stmt: S, params: P) -> mysql::Result<()>
    where
        S: AsStatement,
        P: Into<Params>,
    {
        let stmt = stmt.as_statement(self)?.into_owned();
        self.run_binary(&stmt, params.into(), settle)
    }
}

#[cfg(test)]
mod tests {
    use super::reports_partly as p;

    #[test]
    fn statements_that_may_hide_changes() {
        assert!(!p("SELECT 1"));
        assert!(!p("SELECT 1;"));
        assert!(!p("  /* hint */ select * from t ;  "));
        assert!(p("SET @x = 1; SELECT 1"));
        assert!(p("CALL proc()"));
        assert!(p("/* x */ call proc()"));
        assert!(p("SELECT 'a;b'"), "errs on the side of yes");
        assert!(!p("-- c\nSELECT 1"));
    }

    #[test]
    fn statements_that_change_what_the_server_does_not_report() {
        let u = |sql: &str| super::changes_unreported(sql, super::first_word_span(sql));
        for yes in [
            "SELECT GET_LOCK('x', 1)",
            "do get_lock ('x', 1)",
            "SELECT @b := 2",
            "SELECT a FROM t INTO @v",
            "select 1 into  @`v`",
            "UPDATE t SET n = n + 1 WHERE id = 1 AND (@old := n) IS NOT NULL",
            "HANDLER t OPEN",
            "FLUSH TABLES WITH READ LOCK",
            "BACKUP STAGE START",
            "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE",
            "set  transaction read only",
            "SELECT /*!100000 GET_LOCK('x', 1) */",
        ] {
            assert!(u(yes), "{yes}");
        }
        for no in [
            "SELECT 1",
            "SELECT LAST_INSERT_ID(), LAST_INSERT_ID(42)",
            "SELECT NEXTVAL(s), NEXT VALUE FOR s",
            "INSERT INTO t (mail) VALUES ('a@b.com')",
            "SELECT @x",
            "SET @x = 1",
            "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
            "SELECT widget_lock, budget_lock(1), nextvalue, intox FROM t",
            "SELECT * FROM t WHERE next = 1",
            "COMMIT",
            "XA START 'a'",
        ] {
            assert!(!u(no), "{no}");
        }
    }

    /// The byte-by-byte search `unreported_words` replaced (every byte
    /// classified, a word start tried at each `g`/`i`), kept to check that
    /// the two agree.
    fn byte_by_byte(b: &[u8]) -> bool {
        let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$';
        let word_at = |i: usize, w: &[u8]| {
            b.get(i..i + w.len())
                .is_some_and(|x| x.eq_ignore_ascii_case(w))
                && !b.get(i + w.len()).is_some_and(|c| ident(*c))
        };
        let mut after_ident = false;
        for (i, &c) in b.iter().enumerate() {
            if !after_ident {
                let hit = match c | 0x20 {
                    b'g' => word_at(i, b"get_lock"),
                    b'i' => {
                        let rest = b.get(i + 4..).unwrap_or_default();
                        let sp = rest.iter().take_while(|c| c.is_ascii_whitespace()).count();
                        word_at(i, b"into") && rest.get(sp) == Some(&b'@')
                    }
                    _ => false,
                };
                if hit {
                    return true;
                }
            }
            if c == b':' && b.get(i + 1) == Some(&b'=') {
                return true;
            }
            after_ident = ident(c);
        }
        false
    }

    /// `unreported_words` agrees with the byte-by-byte search on texts made
    /// of the pieces that matter (a fixed xorshift sequence, so a failure
    /// repeats).
    #[test]
    fn the_rare_byte_search_agrees_with_the_byte_by_byte_one() {
        const PIECES: [&str; 26] = [
            "get_lock", "GET_LOCK", "Get_Lock", "get", "_lock", "_", "into", "INTO", "Into", "@",
            "@v", " ", "\n", "\t", ":", "=", ":=", "x", "$", "\u{e9}", "widget", "(", "'", "1",
            "intox", "lock",
        ];
        let mut next = crate::test_input::xorshift(0x9e37_79b9_7f4a_7c15u64);
        let cases = crate::test_input::cases(200_000);
        let mut yes = 0;
        for _ in 0..cases {
            let n = 1 + next() % 6;
            let sql: String = (0..n)
                .map(|_| PIECES[(next() % PIECES.len() as u64) as usize])
                .collect();
            let want = byte_by_byte(sql.as_bytes());
            assert_eq!(super::unreported_words(sql.as_bytes()), want, "{sql:?}");
            yes += usize::from(want);
        }
        assert!(yes > cases / 20, "too few texts that hold one: {yes}");
    }

    #[test]
    fn first_words() {
        use super::first_word as w;
        assert_eq!(w("SELECT 1"), "SELECT");
        assert_eq!(w(" \t\n commit;"), "commit");
        assert_eq!(w("/* a */ /* b */ROLLBACK"), "ROLLBACK");
        assert_eq!(w("# c\n-- d\n  Call p()"), "Call");
        assert_eq!(w("/*!50000 SELECT */ 1"), "");
        assert_eq!(w("SELECT1"), "SELECT");
        assert_eq!(w("/* open"), "");
        assert_eq!(w("-- no end"), "");
        assert_eq!(w("é"), "");
        assert_eq!(w(""), "");
    }

    #[test]
    fn statements_that_end_a_transaction() {
        use super::ends_transaction as e;
        assert!(e("COMMIT"));
        assert!(e("commit work;"));
        assert!(e("/* x */ ROLLBACK"));
        assert!(!e("ROLLBACK TO SAVEPOINT s"));
        assert!(!e("ROLLBACK TO s"));
        assert!(!e("COMMIT AND CHAIN"));
        assert!(!e("COMMIT; BEGIN"));
        assert!(!e("SELECT 'COMMIT'"));
        assert!(!e("BEGIN"));
    }
}
