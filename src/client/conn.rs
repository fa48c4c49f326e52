//! [`PooledConn`]: a borrowed MySQL connection, and the life of each
//! statement on it.
//!
//! Every statement run through a `PooledConn` (the Rust face's
//! [`Queryable`](crate::prelude::Queryable) methods, the C ABI) goes
//! through the same steps:
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
//! There is no raw connection to run statements around these steps: the
//! session is staunch's own, from the socket up (`client::link`).

use super::sql::reports_partly;
use std::fmt;
use std::time::{Duration, Instant};

use super::answer::{collect_binary, collect_wire, collect_wire_from, Cols, Sets};
use super::error::{not_ready, Refusal};
use super::link::Link;
use super::session::{Session, State, WireOpen};
use super::{CancelHandle, MysqlConnector, STATEMENT_GRACE};
use crate::pool::{Lease, Marks};
use crate::trace::{Started, TraceKind};
use crate::wire::{
    status, BinaryColumns, BinaryNext, BinaryRow, Next, OkInfo, Response, TextRow, WireError,
};

/// A borrowed MySQL connection: run statements through its
/// [`Queryable`](crate::prelude::Queryable) methods (the `mysql` crate's
/// names); dropping it returns it to the pool.
///
/// A failed statement never leaves its answer for the next one, and a
/// read-only borrow is returned without a round trip (see the module doc).
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
/// server's own error packet, a refused local file, or a request refused
/// before anything was sent (after which the session is still in step).
/// The one place this rule is written; everything that runs statements on a
/// borrowed connection (the Rust face, the C ABI) goes through
/// [`PooledConn::run`] or [`PooledConn::settle`].
pub(crate) fn breaks_session(e: &WireError) -> bool {
    e.is_fatal()
}

/// Whether a statement's closing packet reports on the session (step 4,
/// [`PooledConn::settle`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Report {
    /// An OK packet, or a result set's end: its status flags and the
    /// session tracker's report are read.
    Ok,
    /// No OK packet: a prepare's answer, or nothing (a close); the last OK
    /// packet is an earlier command's, whose report must not be read again
    /// as this one's.
    Nothing,
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
    Rows(Cols),
    /// Its first result has no rows: the whole answer, every result set,
    /// read (the statement is over).
    Whole(Sets),
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
    pub(crate) fn note_sql(&mut self, sql: &str) {
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

    /// The server's id of this session (`CONNECTION_ID()`, what `KILL`
    /// takes).
    pub fn connection_id(&self) -> u32 {
        self.session().connection_id()
    }

    /// The server's version text, as its greeting gave it.
    pub fn server_version(&self) -> &str {
        self.session().server_version()
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
    /// server stopped answering during it: `ErrorKind::ServerUnresponsive`):
    /// what it checked and saw.
    pub fn unresponsive(&self) -> Option<String> {
        self.lease
            .unresponsive()
            .map(|what| format!("the server stopped answering during this statement: {what}"))
    }

    /// The staunch error for a statement's failure: `ServerUnresponsive`
    /// when the liveness check cut the statement off, else as
    /// `Error::from_wire`.
    pub(crate) fn error(&self, context: &str, e: &WireError) -> crate::Error {
        match self.lease.unresponsive() {
            Some(what) if Refusal::of(e).is_none() => {
                crate::Error::from_wire(context, &Refusal::Unresponsive(what).into_wire())
            }
            _ => crate::Error::from_wire(context, e),
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
        // The per-read bound behind the watchdog, for this borrow.
        let _ = self
            .session()
            .link
            .set_timeouts(super::per_read_bound(limit));
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

    /// The statement time limit in force for this borrow.
    pub fn statement_timeout(&self) -> Option<Duration> {
        match self.limit {
            Some(l) => l,
            None => self.lease.connector().config().query_timeout,
        }
    }

    /// A handle that cancels, from any thread, the statement running on this
    /// connection. See [`CancelHandle`].
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

    pub(crate) fn session_ref(&self) -> &Session {
        &self.lease
    }

    /// The session, seen by staunch.
    pub(crate) fn session_mut(&mut self) -> &mut Session {
        self.lease.split().0
    }

    /// The pool's connection settings.
    pub(super) fn config(&self) -> &super::ConnectConfig {
        self.lease.connector().config()
    }

    /// Finishes a statement whose answer was left open: a text answer read
    /// as it arrives (the C ABI's streamed rows) is read to its end; an
    /// answer the borrower was reading itself and dropped without finishing
    /// (only a `mem::forget` does that: a `QueryResult` reads off the rest
    /// when dropped) leaves the session out of step, so it is broken.
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
            let e = WireError::Io(std::io::Error::other(
                "an answer was left unread (its QueryResult was forgotten)",
            ));
            let _ = self.settle::<()>(Err(e), Report::Nothing);
        }
    }

    /// Step 1 of a statement (see the module doc). `partly` says that its
    /// OK packet may not report all it changed.
    pub(crate) fn begin(&mut self, partly: bool) -> Result<(), WireError> {
        self.begin_as(partly, true)
    }

    /// [`begin`](PooledConn::begin); `traced`: whether a tracer hears of it
    /// as a statement of its own (not the prepare a statement with
    /// parameters makes on its way: the execute after it is the statement).
    pub(crate) fn begin_as(&mut self, partly: bool, traced: bool) -> Result<(), WireError> {
        self.finish_open();
        let statement = if traced {
            self.trace.as_mut().and_then(|t| t.sql.take())
        } else {
            None
        };
        let id = self.lease.id();
        let wanted = self.statement_timeout();
        let (session, mut marks, connector) = self.lease.parts();
        if let Some(why) = &session.state.broken {
            return Err(Refusal::Broken(why.clone()).into_wire());
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
        session.gate.begin();
        marks.statement_begins();
        marks.note_settled(false);
        if let Some(tr) = connector.traced().filter(|_| traced) {
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

    /// Steps 1 to 4 for a statement run by `exec` on the session and read
    /// to its end by it; `report` says whether its last packet reports on
    /// the session (see [`Report`]).
    pub(crate) fn run<T>(
        &mut self,
        partly: bool,
        report: Report,
        exec: impl FnOnce(&mut Session) -> Result<T, WireError>,
    ) -> Result<T, WireError> {
        self.begin(partly)?;
        let r = exec(self.lease.split().0);
        self.settle(r, report)
    }

    /// Tells the tracer, if any, of a statement that failed in a step it
    /// does not hear of on its own (a prepare the server refused, see
    /// [`run_untraced`](PooledConn::run_untraced)): one start and one end,
    /// with the statement's text and the error, as for any statement.
    pub(crate) fn trace_failed_step(&mut self, sql: &str, took: Duration, e: &WireError) {
        let id = self.lease.id();
        let Some(tr) = self.traced() else {
            return;
        };
        let mut start = tr.event(TraceKind::StatementStart);
        start.server = &tr.server;
        start.connection_id = id;
        start.statement = Some(sql);
        tr.emit(&start);
        let text = e.to_string();
        let mut end = tr.event(TraceKind::StatementEnd);
        end.server = &tr.server;
        end.connection_id = id;
        end.statement = Some(sql);
        end.duration = took;
        end.error = Some(&text);
        if let WireError::Server(m) = e {
            end.error_code = m.code;
        }
        tr.emit(&end);
    }

    /// [`run`](PooledConn::run) for a step no tracer hears of as a
    /// statement (see [`begin_as`](PooledConn::begin_as)).
    pub(crate) fn run_untraced<T>(
        &mut self,
        partly: bool,
        report: Report,
        exec: impl FnOnce(&mut Session) -> Result<T, WireError>,
    ) -> Result<T, WireError> {
        self.begin_as(partly, false)?;
        let r = exec(self.lease.split().0);
        self.settle(r, report)
    }

    /// A text statement run for its effect, its answer read to the end and
    /// dropped (every result set).
    pub(crate) fn run_text_drop(&mut self, sql: &str) -> Result<(), WireError> {
        self.note_sql(sql);
        self.run(reports_partly(sql), Report::Ok, |s| {
            s.link.run(sql.as_bytes())
        })
    }

    /// Steps 3 and 4 for a statement begun (`begin`) and read to its end:
    /// `r` is what reading it gave.
    pub(crate) fn settle<T>(
        &mut self,
        r: Result<T, WireError>,
        report: Report,
    ) -> Result<T, WireError> {
        let (session, mut marks, connector) = self.lease.parts();
        session.gate.end();
        marks.statement_ends();
        marks.note_answer_open(false);
        trace_end(&mut self.trace, connector, r.as_ref().err());
        match r {
            Ok(v) => {
                if report == Report::Nothing {
                    marks.note_settled(true);
                    return Ok(v);
                }
                session.observe();
                if session.state.settings_unseen {
                    // The statement changed the session, and the server
                    // does not say how: ask now, so that what it reports
                    // of the statement (autocommit) is true.
                    if let Err(e) = session.ask_settings() {
                        return Err(fail(&mut session.state, &mut marks, connector, e));
                    }
                }
                marks.note_settled(true);
                Ok(v)
            }
            Err(e) => {
                if !e.is_fatal() && (session.state.autocommit_off || session.state.settings_unseen)
                {
                    // Under autocommit=0 a statement that failed may have
                    // opened a transaction, and its error packet says
                    // nothing of it: one is taken as open (rolled back on
                    // return, or ended by the borrower). Where autocommit
                    // may have changed unseen, it is taken as off.
                    session.state.txn_open = true;
                }
                Err(fail(&mut session.state, &mut marks, connector, e))
            }
        }
    }

    /// Counts the session as changed: it is reset on return.
    pub(crate) fn mark_changed(&mut self) {
        self.lease.split().0.state.dirty = true;
    }

    /// A statement whose answer the borrower reads itself (a
    /// `QueryResult`) begins reading: past the bound the watchdog cuts the
    /// statement only while a thread waits reading its socket, not while
    /// the borrower takes its time between rows. Ended by
    /// [`PooledConn::settle`].
    pub(crate) fn answer_opened(&mut self) {
        let (_, mut marks, _) = self.lease.parts();
        marks.note_answer_open(true);
        self.open = true;
    }

    /// The borrower's answer was read to its end (or failed): steps 3 and
    /// 4, as [`PooledConn::settle`].
    pub(crate) fn answer_closed<T>(
        &mut self,
        r: Result<T, WireError>,
        report: Report,
    ) -> Result<T, WireError> {
        self.open = false;
        self.settle(r, report)
    }

    /// A text statement's whole answer, every result set, each set's
    /// figures filled in.
    pub(crate) fn collect_text(&mut self, sql: &str, partly: bool) -> Result<Sets, WireError> {
        // Sent as for a caller that waits apart, then received here.
        self.send_text_wire(sql, partly)?;
        self.recv_text_wire().unwrap_or_else(|| Err(nothing_sent()))
    }

    /// Steps 1 and 2 of a text statement whose answer is read as it
    /// arrives: sends it and reads the start of its answer. After
    /// `WireStart::Rows` the statement stays open: its rows come from
    /// [`next_wire_row`](PooledConn::next_wire_row), and
    /// [`finish_wire`](PooledConn::finish_wire) ends it (as does the next
    /// statement, or the return, reading what is left off).
    pub(crate) fn open_text_wire(
        &mut self,
        sql: &str,
        partly: bool,
    ) -> Result<WireStart, WireError> {
        self.send_text_wire(sql, partly)?;
        self.start_sent_wire()
            .unwrap_or_else(|| Err(nothing_sent()))
    }

    /// Steps 1 and 2 of a text statement whose answer is awaited apart
    /// (Go's netpoller, an event loop): sends it and returns what to wait
    /// on ([`Sent`]). The statement's clock runs from here as for any
    /// statement: the watchdog's bound and the liveness check cut the
    /// socket (which makes it readable), and a cancel's `KILL QUERY` makes
    /// the server answer. The answer is then read by
    /// [`recv_text_wire`](PooledConn::recv_text_wire) or
    /// [`start_sent_wire`](PooledConn::start_sent_wire), or read off by the
    /// next statement or the return.
    pub(crate) fn send_text_wire(&mut self, sql: &str, partly: bool) -> Result<Sent, WireError> {
        self.note_sql(sql);
        self.begin(partly)?;
        let session = self.lease.split().0;
        match session.link.wire.send_query(sql.as_bytes()) {
            Ok(()) => {
                session.open = Some(WireOpen {
                    first_end: None,
                    sent_only: true,
                    binary: None,
                    prepared: None,
                });
                Ok(Sent {
                    fd: session.link.raw_fd(),
                    arrived: session.link.wire.has_buffered_input(),
                })
            }
            Err(e) => self.settle(Err(e), Report::Ok),
        }
    }

    /// The whole answer (every result set) to the statement
    /// [`send_text_wire`](PooledConn::send_text_wire) sent, as
    /// [`collect_text`](PooledConn::collect_text) gives it; waits for it if
    /// it has not arrived. `None`: no statement was sent and awaits.
    pub(crate) fn recv_text_wire(&mut self) -> Option<Result<Sets, WireError>> {
        let session = self.lease.split().0;
        if !session.open.as_ref().is_some_and(|o| o.sent_only) {
            return None;
        }
        let prepared = session.open.take().and_then(|o| o.prepared);
        let Link {
            wire,
            stmts,
            columns,
            bincols,
            memo,
            last,
            ..
        } = &mut *session.link;
        let read = match prepared {
            None => collect_wire(wire, columns, memo),
            // A prepared statement's execute (`send_binary_wire`).
            Some(sql) => stmts
                .read_execute_answer(wire, &sql, bincols)
                .and_then(|first| collect_binary(wire, bincols, memo, first)),
        };
        let read = read.map(|(sets, end)| {
            *last = end;
            sets
        });
        Some(self.settle(read, Report::Ok))
    }

    /// [`open_text_wire`](PooledConn::open_text_wire)'s read of the start of
    /// the answer, for a statement
    /// [`send_text_wire`](PooledConn::send_text_wire) sent. `None`: no
    /// statement was sent and awaits.
    pub(crate) fn start_sent_wire(&mut self) -> Option<Result<WireStart, WireError>> {
        let (session, mut marks, _) = self.lease.parts();
        if !session.open.as_ref().is_some_and(|o| o.sent_only) {
            return None;
        }
        if let Some(sql) = session.open.take().and_then(|o| o.prepared) {
            return Some(self.start_sent_binary(&sql));
        }
        let link = &mut session.link;
        let (f, defs, memo) = (&mut link.wire, &mut link.columns, &mut link.memo);
        let whole = match f.read_response(defs) {
            Ok(Response::ResultSet) => match memo.columns(defs) {
                Ok(columns) => {
                    // The server has answered: from here the statement's
                    // clock runs only while a read waits for the server
                    // (`next_wire_row`), not while the caller takes its
                    // time between rows.
                    marks.note_statement(false);
                    session.open = Some(WireOpen {
                        first_end: None,
                        sent_only: false,
                        binary: None,
                        prepared: None,
                    });
                    return Some(Ok(WireStart::Rows(columns)));
                }
                Err(e) => Err(e),
            },
            Ok(first @ Response::Ok(_)) => collect_wire_from(f, defs, memo, first),
            Err(e) => Err(e),
        };
        let whole = whole.map(|(sets, end)| {
            link.last = end;
            sets
        });
        Some(self.settle(whole, Report::Ok).map(WireStart::Whole))
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
        make: impl FnOnce(AnyRow<'_>) -> T,
    ) -> Result<WireRow<T>, WireError> {
        let (session, mut marks, _) = self.lease.parts();
        let Some(open) = &mut session.open else {
            return Ok(WireRow::End);
        };
        if let Some(end) = &open.first_end {
            return Ok(after_first(end, wait));
        }
        let w = &mut session.link.wire;
        let ready = if w.next_packet_buffered() {
            Ok(())
        } else if !wait {
            // What has reached the socket is read in without waiting.
            match w.read_arrived() {
                Ok(_) if w.next_packet_buffered() => Ok(()),
                Ok(_) => return Ok(WireRow::Waits),
                Err(e) => Err(e),
            }
        } else {
            Ok(())
        };
        // A wait for the server is bounded as a statement is (the
        // watchdog, the liveness check), from its start.
        if wait {
            marks.note_statement(true);
        }
        let next = ready.and_then(|()| match &open.binary {
            Some(cols) => w.next_binary_row(cols).map(|n| match n {
                BinaryNext::Row(row) => Ok(AnyRow::Binary(row)),
                BinaryNext::End(end) => Err(end),
            }),
            None => w.next_row().map(|n| match n {
                Next::Row(row) => Ok(AnyRow::Text(row)),
                Next::End(end) => Err(end),
            }),
        });
        if wait {
            marks.note_statement(false);
        }
        let failed = match next {
            Ok(Ok(row)) => return Ok(WireRow::Row(make(row))),
            Ok(Err(end)) => {
                let then = after_first(&end, wait);
                open.first_end = Some(end);
                return Ok(then);
            }
            Err(e) => {
                session.open = None;
                e
            }
        };
        self.settle::<()>(Err(failed), Report::Ok)
            .map(|()| WireRow::End)
    }

    /// The socket to wait on (poll, epoll) before reading the next row of
    /// the text statement open without waiting
    /// ([`next_wire_row`](PooledConn::next_wire_row)): while its first
    /// result set is read and the next row's bytes have not all arrived.
    /// None otherwise (no statement open, the first set ended and the rest
    /// of the answer still to be read, or a packet of several chunks, whose
    /// reading may wait though its first chunk is here): then only a read
    /// that waits can go on.
    pub(crate) fn wire_wait_fd(&mut self) -> Option<std::os::fd::RawFd> {
        let session = self.lease.split().0;
        let open = session.open.as_ref()?;
        if open.first_end.is_some()
            || !session.link.wire.needs_input()
            || session.link.wire.stream_mut().holds_plaintext()
        {
            return None;
        }
        Some(session.link.raw_fd())
    }

    /// The text statement open on the session, if any.
    fn wire_open(&mut self) -> Option<&mut WireOpen> {
        self.lease.split().0.open.as_mut()
    }

    /// Ends the statement [`open_text_wire`](PooledConn::open_text_wire)
    /// opened: reads off what is left of its first result set, then reads
    /// the result sets after it whole (a `CALL`'s, a multi-statement's).
    /// Returns the packet that closed the first set and those sets (none
    /// with no statement open).
    pub(crate) fn finish_wire(&mut self) -> Result<(OkInfo, Sets), WireError> {
        let (session, mut marks, _) = self.lease.parts();
        let Some(open) = session.open.take() else {
            return Ok((OkInfo::default(), Sets::new()));
        };
        // What is left may wait for the server (see `next_wire_row`);
        // `settle` stops the clock.
        marks.note_statement(true);
        let link = &mut session.link;
        let read = read_after_first(link, open).map(|(first, rest, last)| {
            link.last = last;
            (first, rest)
        });
        self.settle(read, Report::Ok)
    }

    /// Steps 1 and 2 of a prepared statement whose answer is read as it
    /// arrives (`sql` was planned: it is in the statement cache): executes
    /// it and reads the start of its answer, as
    /// [`open_text_wire`](PooledConn::open_text_wire) does for text.
    pub(crate) fn open_binary_wire(
        &mut self,
        sql: &str,
        params: &[crate::wire::Param<'_>],
    ) -> Result<WireStart, WireError> {
        self.note_sql(sql);
        self.begin(false)?;
        self.binary_start(|stmts, wire, cols| stmts.execute(wire, sql.as_bytes(), params, cols))
    }

    /// [`start_sent_wire`](PooledConn::start_sent_wire) for the execute
    /// of `sql` that [`send_binary_wire`](PooledConn::send_binary_wire)
    /// sent: the start of its answer, as
    /// [`open_binary_wire`](PooledConn::open_binary_wire) reads it.
    fn start_sent_binary(&mut self, sql: &[u8]) -> Result<WireStart, WireError> {
        self.binary_start(|stmts, wire, cols| stmts.read_execute_answer(wire, sql, cols))
    }

    /// The start of a prepared statement's answer, which `first` reads: a
    /// result set is left open to be read row by row; anything else is
    /// read whole (the statement is over).
    fn binary_start(
        &mut self,
        first: impl FnOnce(
            &mut crate::wire::StmtCache,
            &mut super::connect::Wire,
            &mut BinaryColumns,
        ) -> Result<Response, WireError>,
    ) -> Result<WireStart, WireError> {
        let (session, mut marks, _) = self.lease.parts();
        let Link {
            wire,
            stmts,
            last,
            memo,
            ..
        } = &mut *session.link;
        let mut cols = Box::new(BinaryColumns::new());
        let whole = match first(stmts, wire, &mut cols) {
            Ok(Response::ResultSet) => match memo.columns(cols.defs()) {
                Ok(columns) => {
                    marks.note_statement(false);
                    session.open = Some(WireOpen {
                        first_end: None,
                        sent_only: false,
                        binary: Some(cols),
                        prepared: None,
                    });
                    return Ok(WireStart::Rows(columns));
                }
                Err(e) => Err(e),
            },
            Ok(first) => collect_binary(wire, &mut cols, memo, first),
            Err(e) => Err(e),
        };
        let whole = whole.map(|(sets, end)| {
            *last = end;
            sets
        });
        self.settle(whole, Report::Ok).map(WireStart::Whole)
    }
}

/// A row of a streamed answer: text or binary.
pub(crate) enum AnyRow<'a> {
    Text(TextRow<'a>),
    Binary(BinaryRow<'a>),
}

/// Tells the tracer, if any, that the statement begun (`started`) ended,
/// with `error` if it failed.
fn trace_end(
    slot: &mut Option<Box<TraceSlot>>,
    connector: &MysqlConnector,
    error: Option<&WireError>,
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
    if let Some(WireError::Server(m)) = error {
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
    e: WireError,
) -> WireError {
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
        return r.into_wire();
    }
    if marks.was_cut() {
        let r = Refusal::Cut {
            limit: state.limit.unwrap_or_default(),
            grace: STATEMENT_GRACE,
        };
        state.broken = Some(r.to_string());
        return r.into_wire();
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
fn read_after_first(link: &mut Link, open: WireOpen) -> Result<(OkInfo, Sets, OkInfo), WireError> {
    let first = match (open.first_end, &open.binary) {
        (Some(end), _) => end,
        (None, Some(cols)) => loop {
            if let BinaryNext::End(end) = link.wire.next_binary_row(cols)? {
                break end;
            }
        },
        (None, None) => loop {
            if let Next::End(end) = link.wire.next_row()? {
                break end;
            }
        },
    };
    if first.status & status::MORE_RESULTS_EXISTS == 0 {
        let last = first.clone();
        return Ok((first, Sets::new(), last));
    }
    let (rest, last) = match open.binary {
        Some(mut cols) => {
            let next = link.wire.read_binary_response(&mut cols)?;
            collect_binary(&mut link.wire, &mut cols, &mut link.memo, next)?
        }
        None => collect_wire(&mut link.wire, &mut link.columns, &mut link.memo)?,
    };
    Ok((first, rest, last))
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

/// The answer of a statement just sent was not open to read (it cannot
/// be: the send opens it).
pub(crate) fn nothing_sent() -> WireError {
    WireError::Io(std::io::Error::other(
        "the statement just sent has no answer open",
    ))
}
