//! [`Transaction`]: `PooledConn::start_transaction`, on the tracked path.
//!
//! `mysql::Conn::start_transaction` reached through the guard's `Deref`
//! would run on the raw connection, unseen, and cost a session reset on
//! return. This one runs every statement through the guard's own
//! `Queryable`: a committed (or rolled back) transaction leaves nothing to
//! do on return, and one left open is rolled back when the transaction is
//! dropped, as `mysql::Transaction` does.

use std::ops::Deref;

use mysql::prelude::{AsStatement, FromRow, Queryable};
use mysql::{AccessMode, Binary, Conn, FromRowError, Params, QueryResult, Statement, Text, TxOpts};

use super::PooledConn;

/// A transaction on a borrowed connection, from
/// [`PooledConn::start_transaction`]. Implements [`Queryable`] as the guard
/// does; [`commit`](Transaction::commit) or
/// [`rollback`](Transaction::rollback) ends it, dropping it rolls back.
/// Derefs to [`mysql::Conn`] (read-only) for `affected_rows`,
/// `last_insert_id`, `warnings` and `info_str` of the last statement.
pub struct Transaction<'a> {
    conn: &'a mut PooledConn,
    done: bool,
}

impl std::fmt::Debug for Transaction<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transaction")
            .field("conn", &self.conn.id())
            .finish()
    }
}

impl PooledConn {
    /// Starts a transaction, as `mysql::Conn::start_transaction` does, but on
    /// the tracked path: one round trip (`START TRANSACTION` with the access
    /// mode and consistent snapshot folded in), plus one for an isolation
    /// level (`SET TRANSACTION ISOLATION LEVEL ...`, for this transaction
    /// only). Once it is committed or rolled back the connection goes back
    /// to the pool with no round trip.
    pub fn start_transaction(&mut self, opts: TxOpts) -> mysql::Result<Transaction<'_>> {
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
            .map_err(|(_, e)| e)?;
        Ok(Transaction {
            conn: self,
            done: false,
        })
    }

    /// `SET TRANSACTION ISOLATION LEVEL level` (when there is one), then
    /// `start` (a `START TRANSACTION ...`), which takes the level: so the
    /// `SET`, which the server does not report and which would otherwise
    /// count as a change for the next borrower (`changes_unreported`),
    /// leaves nothing behind, unless `start` fails (the session is then
    /// reset on return). On failure, the statement that failed.
    pub(crate) fn begin_transaction(
        &mut self,
        level: Option<&str>,
        start: &str,
    ) -> Result<(), (String, mysql::Error)> {
        if let Some(level) = level {
            let sql = format!("SET TRANSACTION ISOLATION LEVEL {level}");
            if let Err(e) = self.run_text_as(&sql, false, |_| Ok(())) {
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
    pub fn commit(mut self) -> mysql::Result<()> {
        self.done = true;
        self.conn.query_drop("COMMIT")
    }

    /// `ROLLBACK`.
    pub fn rollback(mut self) -> mysql::Result<()> {
        self.done = true;
        self.conn.query_drop("ROLLBACK")
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

impl Deref for Transaction<'_> {
    type Target = Conn;
    fn deref(&self) -> &Conn {
        self.conn
    }
}

impl Queryable for Transaction<'_> {
    fn query_iter<Q: AsRef<str>>(
        &mut self,
        query: Q,
    ) -> mysql::Result<QueryResult<'_, '_, '_, Text>> {
        self.conn.query_iter(query)
    }
    fn prep<Q: AsRef<str>>(&mut self, query: Q) -> mysql::Result<Statement> {
        self.conn.prep(query)
    }
    fn close(&mut self, stmt: Statement) -> mysql::Result<()> {
        self.conn.close(stmt)
    }
    fn exec_iter<S: AsStatement, P: Into<Params>>(
        &mut self,
        stmt: S,
        params: P,
    ) -> mysql::Result<QueryResult<'_, '_, '_, Binary>> {
        self.conn.exec_iter(stmt, params)
    }
    fn exec_batch<S, P, I>(&mut self, stmt: S, params: I) -> mysql::Result<()>
    where
        S: AsStatement,
        P: Into<Params>,
        I: IntoIterator<Item = P>,
    {
        self.conn.exec_batch(stmt, params)
    }
    fn query_first<T: FromRow, Q: AsRef<str>>(&mut self, query: Q) -> mysql::Result<Option<T>> {
        self.conn.query_first(query)
    }
    fn query_first_opt<T: FromRow, Q: AsRef<str>>(
        &mut self,
        query: Q,
    ) -> mysql::Result<Option<Result<T, FromRowError>>> {
        self.conn.query_first_opt(query)
    }
    fn query_fold<T, F, Q, U>(&mut self, query: Q, init: U, f: F) -> mysql::Result<U>
    where
        Q: AsRef<str>,
        T: FromRow,
        F: FnMut(U, T) -> U,
    {
        self.conn.query_fold(query, init, f)
    }
    fn query_fold_opt<T, F, Q, U>(&mut self, query: Q, init: U, f: F) -> mysql::Result<U>
    where
        Q: AsRef<str>,
        T: FromRow,
        F: FnMut(U, Result<T, FromRowError>) -> U,
    {
        self.conn.query_fold_opt(query, init, f)
    }
    fn query_drop<Q: AsRef<str>>(&mut self, query: Q) -> mysql::Result<()> {
        self.conn.query_drop(query)
    }
    fn exec_first<T, S, P>(&mut self, stmt: S, params: P) -> mysql::Result<Option<T>>
    where
        S: AsStatement,
        P: Into<Params>,
        T: FromRow,
    {
        self.conn.exec_first(stmt, params)
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
        self.conn.exec_first_opt(stmt, params)
    }
    fn exec_fold<T, S, P, U, F>(&mut self, stmt: S, params: P, init: U, f: F) -> mysql::Result<U>
    where
        S: AsStatement,
        P: Into<Params>,
        T: FromRow,
        F: FnMut(U, T) -> U,
    {
        self.conn.exec_fold(stmt, params, init, f)
    }
    fn exec_fold_opt<T, S, P, U, F>(
        &mut self,
        stmt: S,
        params: P,
        init: U,
        f: F,
    ) -> mysql::Result<U>
    where
        S: AsStatement,
        P: Into<Params>,
        T: FromRow,
        F: FnMut(U, Result<T, FromRowError>) -> U,
    {
        self.conn.exec_fold_opt(stmt, params, init, f)
    }
    fn exec_drop<S: AsStatement, P: Into<Params>>(
        &mut self,
        stmt: S,
        params: P,
    ) -> mysql::Result<()> {
        self.conn.exec_drop(stmt, params)
    }
}
