//! A streaming answer (`STAUNCH_QUERY_STREAM`): the connection, taken
//! from its holder for as long as the first result set is being read, and
//! the state of that reading. When the first set is read (or the stream
//! dropped) the connection goes back to the holder through the `give_back`
//! it was given.
//!
//! The connection keeps the statement open itself (`PooledConn::
//! open_text_wire`, `open_binary_wire`), text or prepared, over TCP, TLS
//! or a unix socket: the stream only owns the connection meanwhile.

use super::answer::{info_of, push_wire_cells, Cell, Col, Info, Set, Sets};
use super::{AnyRow, PooledConn, WireRow, WireStart};
use crate::error::Error;

/// Where a stream's connection goes when the stream is done with it.
pub(crate) type GiveBack = Box<dyn FnOnce(PooledConn) + Send>;

/// A streaming answer: the connection, which holds the statement open
/// (`PooledConn::open_text_wire`, `open_binary_wire`), and where its
/// reading is.
pub(crate) struct Stream {
    /// None once given back.
    conn: Option<PooledConn>,
    home: Option<GiveBack>,
    /// The first result set's metadata, until `first_set` takes it.
    first: Option<Set>,
    /// The first result set's rows are read: only the rest remains.
    first_done: bool,
    /// The result sets after the first, read whole when the first ended.
    rest: Sets,
    /// What the packet ending the first set said, once it ended.
    end: Option<(u16, Info)>,
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

impl Stream {
    /// Runs `sql` (text protocol) on `conn`, streaming its answer. On
    /// failure the connection goes back through `home` at once.
    /// `partly`: see `sql::reports_partly`.
    pub(crate) fn text(
        mut conn: PooledConn,
        home: GiveBack,
        sql: &str,
        partly: bool,
    ) -> Result<Stream, Error> {
        match conn.open_text_wire(sql, partly) {
            Ok(start) => Ok(Stream::new(conn, home, start)),
            Err(e) => {
                let e = conn.error("query", &e);
                home(conn);
                Err(e)
            }
        }
    }

    /// Streams the answer to the text statement `conn` sent apart
    /// (`PooledConn::send_text_wire`).
    pub(crate) fn text_sent(mut conn: PooledConn, home: GiveBack) -> Result<Stream, Error> {
        match conn.start_sent_wire() {
            Some(Ok(start)) => Ok(Stream::new(conn, home, start)),
            Some(Err(e)) => {
                let e = conn.error("query", &e);
                home(conn);
                Err(e)
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

    /// Executes a prepared statement (`sql`, planned: in the statement
    /// cache), streaming its answer.
    pub(crate) fn binary(
        mut conn: PooledConn,
        home: GiveBack,
        sql: &str,
        params: &[super::Param],
    ) -> Result<Stream, Error> {
        let values: Vec<crate::wire::Param<'_>> = params.iter().map(|p| p.to_wire()).collect();
        match conn.open_binary_wire(sql, &values) {
            Ok(start) => Ok(Stream::new(conn, home, start)),
            Err(e) => {
                let e = conn.error("execute", &e);
                home(conn);
                Err(e)
            }
        }
    }

    /// The first result set's metadata (and, for a set without columns,
    /// its figures, which are known now); once.
    pub(crate) fn first_set(&mut self) -> Set {
        self.first.take().unwrap_or_else(Set::empty)
    }

    /// The socket to wait on before the next read that may not wait, and
    /// the pool-wide number of its connection (see
    /// `PooledConn::wire_wait_fd`); None when only a read that waits can go
    /// on.
    pub(crate) fn wait_fd(&mut self) -> Option<(std::os::fd::RawFd, u64)> {
        if self.first_done {
            return None;
        }
        let conn = self.conn.as_mut()?;
        Some((conn.wire_wait_fd()?, conn.id()))
    }

    /// What the packet that ended the first set said (warnings, the info
    /// string), once, when known.
    pub(crate) fn take_end(&mut self) -> Option<(u16, Info)> {
        self.end.take()
    }

    fn new(conn: PooledConn, home: GiveBack, start: WireStart) -> Stream {
        let mut s = Stream {
            conn: Some(conn),
            home: Some(home),
            first: None,
            first_done: false,
            rest: Sets::new(),
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

    /// The next row of the first result set (its cells appended to `out`),
    /// or its end. At the end the rest of the answer is read (whole: a
    /// `CALL`'s other sets) and the connection given back, so that it is
    /// free as soon as the rows are read. An error ends the stream (and
    /// breaks the connection when it may have left part of the answer
    /// unread). Unless `wait`: `Waits` where the next row (or the rest of
    /// the answer after the first set) has not arrived.
    pub(crate) fn fetch(
        &mut self,
        columns: &[Col],
        wait: bool,
        out: &mut Vec<Cell>,
        arena: &mut Vec<u8>,
    ) -> Result<Fetched, Error> {
        if self.first_done {
            return Ok(Fetched::End);
        }
        let Some(conn) = self.conn.as_mut() else {
            return Ok(Fetched::End);
        };
        let pushed = conn.next_wire_row(wait, |row| match row {
            AnyRow::Text(row) => push_wire_cells(out, arena, row, columns),
            AnyRow::Binary(row) => out.extend(row.cells().map(|c| Cell::from_binary(c, arena))),
        });
        match pushed {
            Ok(WireRow::Row(())) => Ok(Fetched::Row),
            Ok(WireRow::Waits) => Ok(Fetched::Waits),
            Ok(WireRow::End) => self.end_first().map(|()| Fetched::End),
            Err(e) => {
                let e = conn.error("reading a streamed row", &e);
                self.first_done = true;
                self.give_back();
                Err(e)
            }
        }
    }

    /// Skips the rest of the first result set (read off, not decoded):
    /// the sets after it (and the connection is given back).
    pub(crate) fn finish(&mut self) -> Result<Sets, Error> {
        if !self.first_done {
            self.end_first()?;
        }
        Ok(std::mem::take(&mut self.rest))
    }

    /// Ends the first result set (what is left of its rows read off), reads
    /// the sets after it, and gives the connection back.
    fn end_first(&mut self) -> Result<(), Error> {
        self.first_done = true;
        let r = match self.conn.as_mut() {
            Some(conn) => match conn.finish_wire() {
                Ok((end, rest)) => {
                    self.end = Some((end.warnings, info_of(&end.info)));
                    self.rest = rest;
                    Ok(())
                }
                Err(e) => Err(conn.error("reading a result set", &e)),
            },
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

impl Drop for Stream {
    fn drop(&mut self) {
        self.give_back();
    }
}
