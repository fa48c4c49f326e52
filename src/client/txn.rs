//! [`Transaction`]: `PooledConn::start_transaction`, with the `mysql`
//! crate's options ([`TxOpts`]) and methods. Every statement runs through
//! the connection's own steps: a committed (or rolled back) transaction
//! leaves nothing to do on return, and one left open is rolled back when
//! the transaction is dropped, as `mysql::Transaction` does.

use std::fmt;

use super::query::Queryable;
use super::PooledConn;
use crate::error::Result;

/// A transaction's isolation level (`SET TRANSACTION ISOLATION LEVEL`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IsolationLevel {
    /// `READ UNCOMMITTED`.
    ReadUncommitted,
    /// `READ COMMITTED`.
    ReadCommitted,
    /// `REPEATABLE READ` (InnoDB's default).
    RepeatableRead,
    /// `SERIALIZABLE`.
    Serializable,
}

impl fmt::Display for IsolationLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            IsolationLevel::ReadUncommitted => "READ UNCOMMITTED",
            IsolationLevel::ReadCommitted => "READ COMMITTED",
            IsolationLevel::RepeatableRead => "REPEATABLE READ",
            IsolationLevel::Serializable => "SERIALIZABLE",
        })
    }
}

/// A transaction's access mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AccessMode {
    /// `READ ONLY`.
    ReadOnly,
    /// `READ WRITE`.
    ReadWrite,
}

/// How a transaction starts, as `mysql::TxOpts`: the server's defaults
/// unless set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TxOpts {
    with_consistent_snapshot: bool,
    isolation_level: Option<IsolationLevel>,
    access_mode: Option<AccessMode>,
}

impl TxOpts {
    /// `WITH CONSISTENT SNAPSHOT`.
    pub fn with_consistent_snapshot(&self) -> bool {
        self.with_consistent_snapshot
    }

    /// The isolation level, if set.
    pub fn isolation_level(&self) -> Option<IsolationLevel> {
        self.isolation_level
    }

    /// The access mode, if set.
    pub fn access_mode(&self) -> Option<AccessMode> {
        self.access_mode
    }

    /// Sets `WITH CONSISTENT SNAPSHOT`.
    pub fn set_with_consistent_snapshot(mut self, v: bool) -> TxOpts {
        self.with_consistent_snapshot = v;
        self
    }

    /// Sets the isolation level (None: the session's).
    pub fn set_isolation_level(mut self, level: Option<IsolationLevel>) -> TxOpts {
        self.isolation_level = level;
        self
    }

    /// Sets the access mode (None: the session's).
    pub fn set_access_mode(mut self, mode: Option<AccessMode>) -> TxOpts {
        self.access_mode = mode;
        self
    }
}

/// A transaction on a borrowed connection, from
/// [`PooledConn::start_transaction`]. Implements
/// [`Queryable`] as the connection does; [`commit`](Transaction::commit)
/// or [`rollback`](Transaction::rollback) ends it, dropping it rolls back.
pub struct Transaction<'a> {
    conn: &'a mut PooledConn,
    done: bool,
}

impl fmt::Debug for Transaction<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Transaction")
            .field("conn", &self.conn.id())
            .finish()
    }
}

impl PooledConn {
    /// Starts a transaction, as `mysql::Conn::start_transaction` does: one
    /// round trip (`START TRANSACTION` with the access mode and consistent
    /// snapshot folded in), plus one for an isolation level (`SET
    /// TRANSACTION ISOLATION LEVEL ...`, for this transaction only). Once it
    /// is committed or rolled back the connection goes back to the pool with
    /// no round trip.
    pub fn start_transaction(&mut self, opts: TxOpts) -> Result<Transaction<'_>> {
        self.begin_with(opts)?;
        Ok(Transaction {
            conn: self,
            done: false,
        })
    }

    /// Starts a transaction as [`PooledConn::start_transaction`] does,
    /// without a guard: the statements after it run in it until a `COMMIT`
    /// or `ROLLBACK` (the C ABI's `staunch_conn_begin_ex`, and every face's
    /// `begin`). One left open when the connection is returned is rolled
    /// back by the return's reset.
    pub fn begin_with(&mut self, opts: TxOpts) -> Result<()> {
        let level = opts.isolation_level().map(|l| l.to_string());
        let mut sql = String::from("START TRANSACTION");
        let mut props = Vec::new();
        match opts.access_mode() {
            Some(AccessMode::ReadOnly) => props.push("READ ONLY"),
            Some(AccessMode::ReadWrite) => props.push("READ WRITE"),
            None => {}
        }
        if opts.with_consistent_snapshot() {
            props.push("WITH CONSISTENT SNAPSHOT");
        }
        if !props.is_empty() {
            sql.push(' ');
            sql.push_str(&props.join(", "));
        }
        self.begin_transaction(level.as_deref(), &sql)
            .map_err(|(_, e)| e)
    }

    /// `SET TRANSACTION ISOLATION LEVEL level` (when there is one), then
    /// `start` (a `START TRANSACTION ...`), which takes the level: so the
    /// `SET`, which the server does not report and which would otherwise
    /// count as a change for the next borrower (`changes_unreported`),
    /// leaves nothing behind, unless `start` fails (the session is then
    /// reset on return). On failure, the statement that failed.
    fn begin_transaction(
        &mut self,
        level: Option<&str>,
        start: &str,
    ) -> std::result::Result<(), (String, crate::Error)> {
        if let Some(level) = level {
            let sql = format!("SET TRANSACTION ISOLATION LEVEL {level}");
            self.note_sql(&sql);
            let r = self.run(false, super::conn::Report::Ok, |s| {
                s.link.run(sql.as_bytes())
            });
            if let Err(e) = r {
                let e = self.error("query", &e);
                return Err((sql, e));
            }
        }
        self.query_drop(start).map_err(|e| {
            if level.is_some() {
                self.mark_changed();
            }
            (start.to_owned(), e)
        })
    }
}

impl Transaction<'_> {
    /// `COMMIT`.
    pub fn commit(mut self) -> Result<()> {
        self.done = true;
        self.conn.query_drop("COMMIT")
    }

    /// `ROLLBACK`.
    pub fn rollback(mut self) -> Result<()> {
        self.done = true;
        self.conn.query_drop("ROLLBACK")
    }

    /// The rows the last statement affected.
    pub fn affected_rows(&self) -> u64 {
        self.conn.affected_rows()
    }

    /// The `AUTO_INCREMENT` id the last statement generated, or 0.
    pub fn last_insert_id(&self) -> u64 {
        self.conn.last_insert_id()
    }

    /// Warnings the last statement raised.
    pub fn warnings(&self) -> u16 {
        self.conn.warnings()
    }

    /// The server's info text for the last statement.
    pub fn info_str(&self) -> std::borrow::Cow<'_, str> {
        self.conn.info_str()
    }
}

impl Queryable for Transaction<'_> {
    fn conn(&mut self) -> &mut PooledConn {
        self.conn
    }
}

impl Drop for Transaction<'_> {
    fn drop(&mut self) {
        if !self.done && self.conn.broken().is_none() {
            // As mysql::Transaction: an error here cannot be returned; a
            // transaction still open is rolled back on return anyway.
            let _ = self.conn.query_drop("ROLLBACK");
        }
    }
}
