//! [`Link`]: one connection run by staunch's own protocol layer, from the
//! socket it connects to the commands a session's upkeep needs (text
//! statements read to their end, a first row, ping, reset, the database,
//! prepared statements through a bounded cache). What the server said of
//! the session after each command (its status flags, the last OK packet
//! with its session-state block) is kept for the session above to read.
//!
//! It knows nothing of pools, time limits or what a session's state means:
//! that is `Session`'s. Every error is a [`WireError`], which says whether
//! the connection survived it.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

use super::answer::ColumnMemo;
use super::config::ConnectConfig;
use super::connect::{self, Opened, Prepared, Watch, Wire};
use crate::error::Result;
use crate::pool::ConnectAttempt;
use crate::wire::{
    status, BinaryColumns, Columns, Greeting, Next, OkInfo, Response, ServerError, StmtCache,
    WireError,
};

/// How many prepared statements a connection keeps (the least recently
/// used is closed on the server when one more is prepared): MySQL's
/// `max_prepared_stmt_count` is 16,382 for the whole server, so a pool of
/// 100 connections at this size uses at most 1/6 of it.
pub(crate) const STMT_CACHE: usize = 256;

/// One result of [`Link::sets`].
#[derive(Debug, Default)]
pub(crate) struct TextSet {
    pub(crate) names: Vec<String>,
    pub(crate) rows: Vec<Vec<Option<Vec<u8>>>>,
}

/// One connection, opened and run by staunch.
pub(crate) struct Link {
    pub(crate) wire: Wire,
    pub(crate) greeting: Greeting,
    /// The column definitions of the answer being read (kept between
    /// statements: after the first few answers none allocates for them).
    pub(crate) columns: Columns,
    /// The packet that closed the last command (its OK, or the end of its
    /// last result set): affected rows, insert id, warnings, info, the
    /// session-state block.
    pub(crate) last: OkInfo,
    pub(crate) stmts: StmtCache,
    /// The binary columns of the prepared statement's answer being read
    /// whole (kept, as `columns` is).
    pub(crate) bincols: BinaryColumns,
    /// The last answer's columns, for the next answer of the same shape
    /// (see `answer::ColumnMemo`).
    pub(crate) memo: ColumnMemo,
    /// The same for the Rust face's rows (`query::FaceMemo`).
    pub(crate) face_memo: super::query::FaceMemo,
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Link")
            .field("connection_id", &self.greeting.connection_id)
            .field("server", &self.greeting.version)
            .field("tls", &self.wire.stream().is_tls())
            .finish_non_exhaustive()
    }
}

impl Link {
    /// Opens a connection (see [`connect::open`]); nothing is run on it
    /// yet.
    pub(crate) fn open(
        cfg: &ConnectConfig,
        p: &Prepared,
        attempt: &ConnectAttempt,
    ) -> Result<(Link, Watch)> {
        let Opened {
            wire,
            greeting,
            watch,
        } = connect::open(cfg, p, attempt)?;
        Ok((
            Link {
                wire,
                greeting,
                columns: Columns::new(),
                last: OkInfo::default(),
                stmts: StmtCache::new(STMT_CACHE),
                bincols: BinaryColumns::new(),
                memo: ColumnMemo::default(),
                face_memo: Default::default(),
            },
            watch,
        ))
    }

    /// The server's id of this connection (what `KILL` takes).
    pub(crate) fn connection_id(&self) -> u32 {
        self.greeting.connection_id
    }

    /// The server's status flags, from the packet that closed the last
    /// command.
    pub(crate) fn status(&self) -> u16 {
        self.wire.status()
    }

    /// A transaction is open (`SERVER_STATUS_IN_TRANS`), as the last
    /// command's closing packet says.
    pub(crate) fn in_transaction(&self) -> bool {
        self.wire.in_transaction()
    }

    /// `autocommit` is on (`SERVER_STATUS_AUTOCOMMIT`), as the last
    /// command's closing packet says.
    pub(crate) fn autocommit(&self) -> bool {
        self.status() & status::AUTOCOMMIT != 0
    }

    /// The socket's descriptor (for `SO_RCVTIMEO`, keepalive, a peek).
    pub(crate) fn raw_fd(&self) -> RawFd {
        self.wire.stream().socket().as_raw_fd()
    }

    /// Bounds every read and write on the socket (None: unbounded).
    pub(crate) fn set_timeouts(&self, d: Option<Duration>) -> io::Result<()> {
        self.wire.stream().socket().set_timeouts(d)
    }

    /// Runs `sql` and reads its whole answer, every result of it, rows
    /// dropped; [`Link::last`] is its last closing packet. An error the
    /// server sent for one result ends the answer there (the server sends
    /// nothing after it).
    pub(crate) fn run(&mut self, sql: &[u8]) -> std::result::Result<(), WireError> {
        self.wire.send_query(sql)?;
        self.read_to_end()
    }

    /// Reads the rest of the answer to a text statement already sent.
    pub(crate) fn read_to_end(&mut self) -> std::result::Result<(), WireError> {
        loop {
            match self.wire.read_response(&mut self.columns)? {
                Response::Ok(ok) => self.last = ok,
                Response::ResultSet => loop {
                    if let Next::End(ok) = self.wire.next_row()? {
                        self.last = ok;
                        break;
                    }
                },
            }
            if self.last.status & status::MORE_RESULTS_EXISTS == 0 {
                return Ok(());
            }
        }
    }

    /// Runs `sql` and returns the first row of its first result set, each
    /// cell as the server sent it in the text protocol (None for NULL);
    /// None when it has no row. The rest of the answer is read and
    /// dropped. For the session's own small questions (`@@sql_mode`, the
    /// topology probe's), not for a borrower's rows.
    pub(crate) fn first_row(
        &mut self,
        sql: &[u8],
    ) -> std::result::Result<Option<Vec<Option<Vec<u8>>>>, WireError> {
        Ok(self.rows(sql, 1)?.pop())
    }

    /// Runs `sql` and returns up to `max` rows of its first result set
    /// (see [`Link::first_row`]); the rest of the answer is read and
    /// dropped.
    pub(crate) fn rows(
        &mut self,
        sql: &[u8],
        max: usize,
    ) -> std::result::Result<Vec<Vec<Option<Vec<u8>>>>, WireError> {
        self.wire.send_query(sql)?;
        self.read_rows(max)
    }

    /// Reads up to `max` rows of the first result set of the answer to a
    /// text statement already sent (see [`Link::rows`]), and the rest of
    /// the answer.
    pub(crate) fn read_rows(
        &mut self,
        max: usize,
    ) -> std::result::Result<Vec<Vec<Option<Vec<u8>>>>, WireError> {
        let mut out = Vec::new();
        match self.wire.read_response(&mut self.columns)? {
            Response::Ok(ok) => self.last = ok,
            Response::ResultSet => loop {
                match self.wire.next_row()? {
                    Next::Row(r) if out.len() < max => {
                        out.push(r.cells().map(|c| c.map(<[u8]>::to_vec)).collect())
                    }
                    Next::Row(_) => {}
                    Next::End(ok) => {
                        self.last = ok;
                        break;
                    }
                }
            },
        }
        if self.last.status & status::MORE_RESULTS_EXISTS != 0 {
            self.read_to_end()?;
        }
        Ok(out)
    }

    /// Runs `sql` (several statements, as the monitor's probe sends them)
    /// and reads every result: each result set's column names and rows
    /// (cells as in [`Link::first_row`]; an OK's result is an empty set).
    /// An error the server sent ends the answer there: it comes back with
    /// the sets before it, the session still in step. For the session's
    /// and the monitor's own questions, not for a borrower's rows.
    pub(crate) fn sets(
        &mut self,
        sql: &[u8],
    ) -> std::result::Result<(Vec<TextSet>, Option<ServerError>), WireError> {
        self.wire.send_query(sql)?;
        let mut sets = Vec::new();
        loop {
            let mut set = TextSet::default();
            match self.wire.read_response(&mut self.columns) {
                Ok(Response::Ok(ok)) => self.last = ok,
                Ok(Response::ResultSet) => {
                    for c in self.columns.iter() {
                        set.names
                            .push(String::from_utf8_lossy(c?.name).into_owned());
                    }
                    loop {
                        match self.wire.next_row() {
                            Ok(Next::Row(r)) => set
                                .rows
                                .push(r.cells().map(|c| c.map(<[u8]>::to_vec)).collect()),
                            Ok(Next::End(ok)) => {
                                self.last = ok;
                                break;
                            }
                            Err(WireError::Server(e)) => return Ok((sets, Some(e))),
                            Err(e) => return Err(e),
                        }
                    }
                }
                Err(WireError::Server(e)) => return Ok((sets, Some(e))),
                Err(e) => return Err(e),
            }
            sets.push(set);
            if self.last.status & status::MORE_RESULTS_EXISTS == 0 {
                return Ok((sets, None));
            }
        }
    }

    /// `COM_PING`.
    pub(crate) fn ping(&mut self) -> std::result::Result<(), WireError> {
        self.last = self.wire.ping()?;
        Ok(())
    }

    /// `COM_RESET_CONNECTION`: the server drops the session's prepared
    /// statements too, so the cache forgets them (none is closed).
    pub(crate) fn reset(&mut self) -> std::result::Result<(), WireError> {
        self.stmts.clear();
        self.last = self.wire.reset_connection()?;
        Ok(())
    }

    /// `COM_INIT_DB`: `database` becomes the current one.
    pub(crate) fn select_db(&mut self, database: &str) -> std::result::Result<(), WireError> {
        self.last = self.wire.init_db(database)?;
        Ok(())
    }

    /// `COM_QUIT`, then the socket closes (best effort: a connection being
    /// closed has nothing to report).
    pub(crate) fn quit(mut self) {
        let _ = self.wire.quit();
    }
}
