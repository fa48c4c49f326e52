//! A streaming answer (`STAUNCH_QUERY_STREAM`): the connection, taken
//! from its holder for as long as the first result set is being read, and
//! the state of that reading. When the first set is read (or the stream
//! dropped) the connection goes back to the holder through the `give_back`
//! it was given.
//!
//! A text statement is read through the protocol layer (`src/wire`) where
//! the session allows it (`PooledConn::open_text_wire`): the connection
//! keeps the statement open itself, so the stream only owns it. Otherwise
//! (a prepared statement, a TLS session) the `mysql` crate reads it, and
//! its result borrows the connection: both live in one object that C holds
//! across calls, a self-referential pair. The connection is then kept as a
//! raw pointer from `Box::into_raw` (never moved, never touched while the
//! result lives, so nothing retags it), and `Drop` ends the result before
//! it frees the connection.

use std::collections::VecDeque;

use mysql::prelude::{Protocol, Queryable};
use mysql::{Binary, Params, QueryResult, Statement, Text};

use crate::client::answer::{
    collect_rest, info_of, push_cells, push_wire_cells, Cell, Col, Info, Set,
};
use crate::client::{MysqlConnector, PooledConn, WireRow, WireStart};
use crate::error::Error;
use crate::pool::StatementClock;

/// Where a stream's connection goes when the stream is done with it.
pub(crate) type GiveBack = Box<dyn FnOnce(PooledConn) + Send>;

/// A streaming answer, read by the protocol layer or by the crate.
pub(crate) struct Stream(Inner);

enum Inner {
    Wire(WireStream),
    Crate(CrateStream),
}

impl Stream {
    /// Runs `sql` (text protocol) on `conn`, streaming its answer. On
    /// failure the connection goes back through `home` at once.
    /// `partly`: see `PooledConn::run_text_as`.
    pub(crate) fn text(
        mut conn: PooledConn,
        home: GiveBack,
        sql: &str,
        partly: bool,
    ) -> Result<Stream, Error> {
        match conn.open_text_wire(sql, partly) {
            Ok(Some(start)) => Ok(Stream(Inner::Wire(WireStream::new(conn, home, start)))),
            Ok(None) => CrateStream::start(conn, home, |c| {
                c.query_iter_as(sql, partly).map(Answer::Text)
            })
            .map(|s| Stream(Inner::Crate(s))),
            Err(e) => {
                home(conn);
                Err(Error::from_mysql("query", &e))
            }
        }
    }

    /// Streams the answer to the text statement `conn` sent apart
    /// (`PooledConn::send_text_wire`).
    pub(crate) fn text_sent(mut conn: PooledConn, home: GiveBack) -> Result<Stream, Error> {
        match conn.start_sent_wire() {
            Some(Ok(start)) => Ok(Stream(Inner::Wire(WireStream::new(conn, home, start)))),
            Some(Err(e)) => {
                home(conn);
                Err(Error::from_mysql("query", &e))
            }
            None => {
                home(conn);
                Err(Error::new(
                    crate::error::ErrorKind::Broken,
                    "the sent statement's answer was read elsewhere",
                ))
            }
        }
    }

    /// Executes a prepared statement, streaming its answer.
    pub(crate) fn binary(
        conn: PooledConn,
        home: GiveBack,
        stmt: Statement,
        params: Params,
    ) -> Result<Stream, Error> {
        CrateStream::start(conn, home, |c| {
            c.exec_iter(stmt, params).map(Answer::Binary)
        })
        .map(|s| Stream(Inner::Crate(s)))
    }

    /// The first result set's metadata (and, for a set without columns,
    /// its figures, which are known now); once.
    pub(crate) fn first_set(&mut self) -> Set {
        match &mut self.0 {
            Inner::Wire(s) => s.first.take().unwrap_or_else(Set::empty),
            Inner::Crate(s) => s.first_set(),
        }
    }

    /// The next row of the first result set (its cells appended to `out`),
    /// or its end. At the end the
    /// rest of the answer is read (whole: a `CALL`'s other sets) and the
    /// connection given back, so that it is free as soon as the rows are
    /// read. An error ends the stream (and breaks the connection when it
    /// may have left part of the answer unread). Unless `wait`: `Waits`
    /// where the next row (or the rest of the answer after the first set)
    /// has not arrived, or where the crate reads the answer (which cannot
    /// tell).
    pub(crate) fn fetch(
        &mut self,
        columns: &[Col],
        wait: bool,
        out: &mut Vec<Cell>,
    ) -> Result<Fetched, Error> {
        match &mut self.0 {
            Inner::Wire(s) => s.fetch(columns, wait, out),
            Inner::Crate(s) if wait => s.next_row(columns, out).map(Fetched::of),
            Inner::Crate(s) if s.first_done => Ok(Fetched::End),
            Inner::Crate(_) => Ok(Fetched::Waits),
        }
    }

    /// The socket to wait on before the next read that may not wait, and
    /// the pool-wide number of its connection (see
    /// `PooledConn::wire_wait_fd`); None when only a read that waits can go
    /// on (the crate reads the answer, or see there).
    pub(crate) fn wait_fd(&mut self) -> Option<(std::os::fd::RawFd, u64)> {
        match &mut self.0 {
            Inner::Wire(s) if !s.first_done => {
                let conn = s.conn.as_mut()?;
                Some((conn.wire_wait_fd()?, conn.id()))
            }
            Inner::Wire(_) | Inner::Crate(_) => None,
        }
    }

    /// What the packet that ended the first set said (warnings, the info
    /// string), once, when known.
    pub(crate) fn take_end(&mut self) -> Option<(u16, Info)> {
        match &mut self.0 {
            Inner::Wire(s) => s.end.take(),
            Inner::Crate(s) => s.end.take(),
        }
    }

    /// Skips the rest of the first result set: the sets after it (and the
    /// connection is given back).
    pub(crate) fn finish(&mut self, columns: &[Col]) -> Result<VecDeque<Set>, Error> {
        match &mut self.0 {
            Inner::Wire(s) => s.finish(),
            Inner::Crate(s) => {
                let mut skipped = Vec::new();
                while s.next_row(columns, &mut skipped)? {
                    skipped.clear();
                }
                Ok(std::mem::take(&mut s.rest))
            }
        }
    }
}

/// What a read of the next row found.
pub(crate) enum Fetched {
    /// A row: its cells were appended to the caller's vector.
    Row,
    /// The end of the first result set.
    End,
    /// The next row has not arrived (a read that may not wait).
    Waits,
}

impl Fetched {
    /// Of a read that found a row or not.
    pub(crate) fn of(row: bool) -> Fetched {
        if row {
            Fetched::Row
        } else {
            Fetched::End
        }
    }
}

/// A text statement's answer read by the protocol layer: the connection
/// holds the statement open (`PooledConn::open_text_wire`).
struct WireStream {
    /// None once given back.
    conn: Option<PooledConn>,
    home: Option<GiveBack>,
    /// The first result set's metadata, until `first_set` takes it.
    first: Option<Set>,
    /// The first result set's rows are read: only the rest remains.
    first_done: bool,
    /// The result sets after the first, read whole when the first ended.
    rest: VecDeque<Set>,
    /// What the packet ending the first set said, once it ended.
    end: Option<(u16, Info)>,
}

impl WireStream {
    fn new(conn: PooledConn, home: GiveBack, start: WireStart) -> WireStream {
        let mut s = WireStream {
            conn: Some(conn),
            home: Some(home),
            first: None,
            first_done: false,
            rest: VecDeque::new(),
            end: None,
        };
        match start {
            WireStart::Rows(columns) => {
                let mut first = Set::empty();
                first.columns = columns;
                s.first = Some(first);
            }
            WireStart::Whole(mut sets) => {
                // Nothing to stream: the statement is over.
                s.first = sets.pop_front();
                s.rest = sets;
                s.first_done = true;
                s.give_back();
            }
        }
        s
    }

    /// The next row of the first result set, waiting for it or not; at
    /// the set's end the rest of the answer is read and the connection
    /// given back.
    fn fetch(
        &mut self,
        columns: &[Col],
        wait: bool,
        out: &mut Vec<Cell>,
    ) -> Result<Fetched, Error> {
        if self.first_done {
            return Ok(Fetched::End);
        }
        let Some(conn) = self.conn.as_mut() else {
            return Ok(Fetched::End);
        };
        match conn.next_wire_row(wait, |row| push_wire_cells(out, row, columns)) {
            Ok(WireRow::Row(())) => Ok(Fetched::Row),
            Ok(WireRow::Waits) => Ok(Fetched::Waits),
            Ok(WireRow::End) => self.end_first().map(|()| Fetched::End),
            Err(e) => {
                self.first_done = true;
                self.give_back();
                Err(Error::from_mysql("reading a streamed row", &e))
            }
        }
    }

    /// Skips the rest of the first result set (read off, not decoded):
    /// the sets after it.
    fn finish(&mut self) -> Result<VecDeque<Set>, Error> {
        if !self.first_done {
            self.end_first()?;
        }
        Ok(std::mem::take(&mut self.rest))
    }

    /// Ends the first result set (what is left of its rows read off), reads
    /// the sets after it, and gives the connection back.
    fn end_first(&mut self) -> Result<(), Error> {
        self.first_done = true;
        let r = match self.conn.as_mut().map(PooledConn::finish_wire) {
            Some(Ok((end, rest))) => {
                self.end = Some((end.warnings, info_of(&end.info)));
                self.rest = rest;
                Ok(())
            }
            Some(Err(e)) => Err(Error::from_mysql("reading a result set", &e)),
            None => Ok(()),
        };
        self.give_back();
        r
    }

    /// Gives the connection back to its holder, the statement ended first
    /// (what is left of its answer read off: an error there breaks the
    /// session, which the holder then sees).
    fn give_back(&mut self) {
        if let Some(mut conn) = self.conn.take() {
            let _ = conn.finish_wire();
            if let Some(home) = self.home.take() {
                home(conn);
            }
        }
    }
}

impl Drop for WireStream {
    fn drop(&mut self) {
        self.give_back();
    }
}

/// The crate's result, of either protocol. `'static` stands for "as long as
/// the `Stream`'s connection": see the module doc.
enum Answer {
    Text(QueryResult<'static, 'static, 'static, Text>),
    Binary(QueryResult<'static, 'static, 'static, Binary>),
}

struct CrateStream {
    /// Borrows `*conn`: taken (ended) before `conn` is freed.
    answer: Option<Answer>,
    /// The statement's clock, which runs only while a read waits for the
    /// server (as `PooledConn::next_wire_row` runs it), not while the
    /// reader takes its time between rows; dropped when the connection
    /// goes back. Reached apart from `*conn`, which the answer borrows.
    clock: Option<StatementClock<MysqlConnector>>,
    /// The connection (from `Box::into_raw`); null once given back.
    conn: *mut PooledConn,
    /// Takes the connection back (once).
    home: Option<GiveBack>,
    /// The first result set's rows are read: only the rest remains.
    first_done: bool,
    /// The result sets after the first, read whole when the first ended
    /// (which gave the connection back).
    rest: VecDeque<Set>,
    /// What the packet ending the first set said (warnings, info), once it
    /// ended, for the row set to pick up.
    end: Option<(u16, Info)>,
}

// SAFETY: a row set (and its stream) is used by one thread at a time and may
// move between threads (header contract); the connection and the result are
// `Send`.
unsafe impl Send for CrateStream {}

impl CrateStream {
    fn start(
        conn: PooledConn,
        home: GiveBack,
        run: impl FnOnce(&'static mut PooledConn) -> mysql::Result<Answer>,
    ) -> Result<CrateStream, Error> {
        let clock = conn.statement_clock();
        let ptr = Box::into_raw(Box::new(conn));
        // SAFETY: `ptr` is a live, unaliased allocation; the reference lives
        // as long as the answer, which `Drop` ends before freeing `ptr`, and
        // nothing else touches `*ptr` meanwhile (the `'static` is that
        // promise, see the module doc).
        let r = run(unsafe { &mut *ptr });
        let mut s = CrateStream {
            answer: None,
            clock: None,
            conn: ptr,
            home: Some(home),
            first_done: false,
            rest: VecDeque::new(),
            end: None,
        };
        match r {
            Ok(a) => {
                // The server has answered: from here the clock runs while a
                // read waits (`next_row`).
                clock.note_statement(false);
                s.answer = Some(a);
                s.clock = Some(clock);
                Ok(s)
            }
            Err(e) => Err(Error::from_mysql("query", &e)),
        }
    }

    fn columns(&self) -> Vec<Col> {
        match &self.answer {
            Some(Answer::Text(r)) => r.columns().as_ref().iter().map(Col::of).collect(),
            Some(Answer::Binary(r)) => r.columns().as_ref().iter().map(Col::of).collect(),
            None => Vec::new(),
        }
    }

    /// The first result set's metadata (and, for a set without columns,
    /// its figures, which are known now).
    fn first_set(&self) -> Set {
        let mut set = Set::empty();
        set.columns = self.columns();
        let figures = |set: &mut Set, a: u64, id: Option<u64>, w: u16, info: &[u8]| {
            set.affected_rows = a;
            set.last_insert_id = id.unwrap_or(0);
            set.warnings = w;
            set.info = info_of(info);
        };
        match &self.answer {
            Some(Answer::Text(r)) => figures(
                &mut set,
                r.affected_rows(),
                r.last_insert_id(),
                r.warnings(),
                r.info_ref(),
            ),
            Some(Answer::Binary(r)) => figures(
                &mut set,
                r.affected_rows(),
                r.last_insert_id(),
                r.warnings(),
                r.info_ref(),
            ),
            None => {}
        }
        set
    }

    /// The next row of the first result set, its cells appended to `out`
    /// (true), or false at its end. At the
    /// end the rest of the answer is read (whole: a `CALL`'s other sets)
    /// and the connection given back, so that it is free as soon as the
    /// rows are read. An error ends the stream (and breaks the connection
    /// when it may have left part of the answer unread).
    fn next_row(&mut self, columns: &[Col], out: &mut Vec<Cell>) -> Result<bool, Error> {
        if self.first_done {
            return Ok(false);
        }
        // The crate cannot tell whether a read will wait: each read is
        // timed, as a wait for the server would be.
        self.time(true);
        let (row, text) = match self.answer.as_mut() {
            Some(_) if columns.is_empty() => (None, false),
            Some(Answer::Text(r)) => (r.next(), true),
            Some(Answer::Binary(r)) => (r.next(), false),
            None => (None, false),
        };
        self.time(false);
        match row {
            Some(Ok(row)) => {
                push_cells(out, row.unwrap(), columns, text);
                Ok(true)
            }
            Some(Err(e)) => {
                self.first_done = true;
                let e = self.give_back_failed(e);
                Err(Error::from_mysql("reading a streamed row", &e))
            }
            None => {
                self.first_done = true;
                if columns.is_empty() {
                    // A first set without rows: step past it.
                    match self.answer.as_mut() {
                        Some(Answer::Text(r)) => drop(r.next()),
                        Some(Answer::Binary(r)) => drop(r.next()),
                        None => {}
                    }
                }
                self.time(true);
                let rest = match self.answer.as_mut() {
                    Some(Answer::Text(r)) => collect_rest(r, true),
                    Some(Answer::Binary(r)) => collect_rest(r, false),
                    None => Ok(VecDeque::new()),
                };
                self.time(false);
                match rest {
                    Ok(sets) => {
                        self.rest = sets;
                        self.give_back();
                        Ok(false)
                    }
                    Err(e) => {
                        let e = self.give_back_failed(e);
                        Err(Error::from_mysql("reading a result set", &e))
                    }
                }
            }
        }
    }

    /// A read begins (`true`) or ends: the statement's clock runs meanwhile.
    fn time(&self, reading: bool) {
        if let Some(clock) = &self.clock {
            clock.note_statement(reading);
        }
    }

    /// Ends the answer (what is left of it is read off), then gives the
    /// connection back to its holder (broken first if reading off failed:
    /// the answer may be left half read).
    fn give_back(&mut self) {
        let Some((mut conn, leftover)) = self.take_conn(true) else {
            return;
        };
        match leftover {
            Some(e) => drop(conn.note_failure(e)),
            None => {
                if self.first_done && self.rest.is_empty() {
                    // The first set was the last: the connection's last
                    // packet is the one that ended it.
                    self.end = Some((conn.warnings(), info_of(conn.info_ref())));
                }
                // Read to its end, every result set, with each error seen:
                // nothing of it is left on the socket, so the return path
                // needs no peek for leftovers (one system call each answer).
                conn.marks().note_settled(true);
            }
        }
        self.home(conn);
    }

    /// Gives the connection back after `e` ended the answer (broken first
    /// if `e` may have left part of it unread). Returns `e` as the
    /// connection tells it: a statement the watchdog cut off says so, where
    /// the crate saw only its socket shut down.
    fn give_back_failed(&mut self, e: mysql::Error) -> mysql::Error {
        match self.take_conn(false) {
            Some((mut conn, _)) => {
                let told = conn.note_failure(e);
                self.home(conn);
                told
            }
            None => e,
        }
    }

    /// Ends the answer (what is left of it read off first if `rest`: the
    /// error met there, if any) and stops the statement's clock (the
    /// connection, held idle after it, runs no statement); the connection
    /// (None if it went back already).
    fn take_conn(&mut self, rest: bool) -> Option<(PooledConn, Option<mysql::Error>)> {
        if self.conn.is_null() {
            return None;
        }
        // What is left of the answer is read off here, where its error can
        // be seen (the crate's own drop would swallow one).
        let mut leftover = None;
        if rest {
            self.time(true);
            leftover = match self.answer.as_mut() {
                Some(Answer::Text(r)) => read_off(r),
                Some(Answer::Binary(r)) => read_off(r),
                None => None,
            };
        }
        drop(self.answer.take());
        self.time(false);
        self.clock = None;
        // SAFETY: from `Box::into_raw` in `start`, not freed yet (set to null
        // below), and the answer that borrowed it is gone.
        let conn = *unsafe { Box::from_raw(self.conn) };
        self.conn = std::ptr::null_mut();
        Some((conn, leftover))
    }

    /// Hands the connection to its holder (once).
    fn home(&mut self, conn: PooledConn) {
        if let Some(give_back) = self.home.take() {
            give_back(conn);
        }
    }
}

/// Reads every remaining row and result set: the first error met.
fn read_off<P: Protocol>(r: &mut QueryResult<'_, '_, '_, P>) -> Option<mysql::Error> {
    while let Some(set) = r.iter() {
        for row in set {
            if let Err(e) = row {
                return Some(e);
            }
        }
    }
    None
}

impl Drop for CrateStream {
    fn drop(&mut self) {
        self.give_back();
    }
}

// It lives in `ffi/`, the crate's one home of unsafe code, for its
// self-referential pair; it knows the connection's holder only as the
// `GiveBack` it was handed, so nothing here imports `conn.rs`.
