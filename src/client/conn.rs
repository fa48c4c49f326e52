//! [`PooledConn`]: a borrowed MySQL connection, and what it sees of the
//! statements run on it.
//!
//! `PooledConn` implements [`Queryable`] itself (method resolution picks this
//! impl before `Deref`), so it sees every statement run through it: a failure
//! that may leave part of an answer unread marks it broken (see
//! [`breaks_session`]), and a statement that cannot open a transaction keeps
//! the return free of round trips.

use std::fmt;
use std::ops::{Deref, DerefMut};

use mysql::prelude::{AsStatement, FromRow, Protocol, Queryable};
use mysql::{
    from_row, from_row_opt, Binary, Conn, FromRowError, Params, QueryResult, Statement, Text,
};

use super::MysqlConnector;
use crate::pool::{Lease, Marks};

/// A borrowed MySQL connection: derefs to [`mysql::Conn`] and implements
/// [`mysql::prelude::Queryable`]; dropping it returns it to the pool.
pub struct PooledConn {
    lease: Lease<MysqlConnector>,
}

impl PooledConn {
    pub(crate) fn new(lease: Lease<MysqlConnector>) -> PooledConn {
        PooledConn { lease }
    }

    /// The pool-wide number of this connection (as in events).
    pub fn id(&self) -> u64 {
        self.lease.id()
    }

    /// Closes the connection instead of returning it to the pool.
    pub fn discard(self) {
        self.lease.discard()
    }

    /// What the return path must do.
    pub(crate) fn marks(&mut self) -> Marks<'_> {
        self.lease.marks()
    }
}

impl Deref for PooledConn {
    type Target = Conn;
    fn deref(&self) -> &Conn {
        &self.lease
    }
}

impl DerefMut for PooledConn {
    /// Raw mutable access: the pool can no longer know the session state, so
    /// the return path checks it (a rollback if one may be needed).
    fn deref_mut(&mut self) -> &mut Conn {
        &mut self.lease
    }
}

impl fmt::Debug for PooledConn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PooledConn")
            .field("id", &self.id())
            .finish()
    }
}

/// Whether a statement can open a transaction or change session state that
/// the return path must undo (leading comments and whitespace skipped).
fn may_open_transaction(sql: &str) -> bool {
    let mut s = sql.trim_start();
    loop {
        if let Some(rest) = s.strip_prefix("/*") {
            match rest.find("*/") {
                Some(end) => s = rest[end + 2..].trim_start(),
                None => return true,
            }
        } else if s.starts_with("--") || s.starts_with('#') {
            match s.find('\n') {
                Some(nl) => s = s[nl + 1..].trim_start(),
                None => return false,
            }
        } else {
            break;
        }
    }
    let word: String = s
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .map(|c| c.to_ascii_uppercase())
        .collect();
    match word.as_str() {
        "SELECT" | "INSERT" | "UPDATE" | "DELETE" | "REPLACE" | "SHOW" | "DESCRIBE" | "DESC"
        | "EXPLAIN" | "WITH" | "VALUES" | "TABLE" | "DO" | "CREATE" | "DROP" | "ALTER"
        | "TRUNCATE" | "RENAME" | "GRANT" | "REVOKE" | "KILL" | "USE" | "ANALYZE" | "OPTIMIZE"
        | "CHECK" | "FLUSH" | "COMMIT" | "ROLLBACK" => {
            // These never leave a transaction open on their own, except
            // under autocommit=0, which only SET can turn on; multi-statement
            // text may hide one after a ';'.
            sql.contains(';')
        }
        _ => true,
    }
}

/// `PooledConn` runs statements itself (method resolution picks this impl
/// before `Deref`), so it sees every statement and keeps the return path free
/// of round trips when nothing can be left open.
impl Queryable for PooledConn {
    fn query_iter<Q: AsRef<str>>(
        &mut self,
        query: Q,
    ) -> mysql::Result<QueryResult<'_, '_, '_, Text>> {
        let q = query.as_ref();
        if may_open_transaction(q) {
            self.lease.marks().note_touched();
        }
        // The borrower reads the answer: whether it reads all of it, and
        // whether that fails, happens out of our sight.
        self.lease.marks().note_settled(false);
        self.track(|c| c.query_iter(q))
    }

    fn prep<Q: AsRef<str>>(&mut self, query: Q) -> mysql::Result<Statement> {
        let q = query.as_ref();
        if may_open_transaction(q) {
            self.lease.marks().note_touched();
        }
        self.track(|c| c.prep(q))
    }

    fn close(&mut self, stmt: Statement) -> mysql::Result<()> {
        self.track(|c| c.close(stmt))
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
        // Text is prepared through our `prep`, which checks it.
        let stmt = stmt.as_statement(self)?.into_owned();
        self.lease.marks().note_settled(false);
        self.track(move |c| c.exec_iter(stmt, params))
    }

    fn exec_batch<S, P, I>(&mut self, stmt: S, params: I) -> mysql::Result<()>
    where
        Self: Sized,
        S: AsStatement,
        P: Into<Params>,
        I: IntoIterator<Item = P>,
    {
        let stmt = stmt.as_statement(self)?.into_owned();
        self.track(move |c| c.exec_batch(stmt, params))
    }

    // The methods below give what `mysql::Conn`'s give, and also read the
    // rest of the answer themselves: the trait's own versions leave it to
    // `QueryResult`'s drop, which drops any error met there (a row over
    // max_allowed_packet, a timeout), so the pool would take back a
    // connection with half an answer still to come.

    fn query_first<T: FromRow, Q: AsRef<str>>(&mut self, query: Q) -> mysql::Result<Option<T>> {
        let (conn, mut flags) = self.text(query.as_ref());
        let r = watch(&mut flags, conn.query_iter(query))?;
        first_row(&mut flags, r).map(|row| row.map(from_row))
    }

    fn query_first_opt<T: FromRow, Q: AsRef<str>>(
        &mut self,
        query: Q,
    ) -> mysql::Result<Option<Result<T, FromRowError>>> {
        let (conn, mut flags) = self.text(query.as_ref());
        let r = watch(&mut flags, conn.query_iter(query))?;
        first_row(&mut flags, r).map(|row| row.map(from_row_opt))
    }

    fn query_fold<T, F, Q, U>(&mut self, query: Q, init: U, mut f: F) -> mysql::Result<U>
    where
        Q: AsRef<str>,
        T: FromRow,
        F: FnMut(U, T) -> U,
    {
        let (conn, mut flags) = self.text(query.as_ref());
        let mut r = watch(&mut flags, conn.query_iter(query))?;
        let out = watch(
            &mut flags,
            fold_set(&mut r, init, |acc, row| f(acc, from_row(row))),
        );
        settle(&mut flags, &mut r);
        out
    }

    fn query_fold_opt<T, F, Q, U>(&mut self, query: Q, init: U, mut f: F) -> mysql::Result<U>
    where
        Q: AsRef<str>,
        T: FromRow,
        F: FnMut(U, Result<T, FromRowError>) -> U,
    {
        let (conn, mut flags) = self.text(query.as_ref());
        let mut r = watch(&mut flags, conn.query_iter(query))?;
        let out = watch(
            &mut flags,
            fold_set(&mut r, init, |acc, row| f(acc, from_row_opt(row))),
        );
        settle(&mut flags, &mut r);
        out
    }

    fn query_drop<Q: AsRef<str>>(&mut self, query: Q) -> mysql::Result<()> {
        let (conn, mut flags) = self.text(query.as_ref());
        let mut r = watch(&mut flags, conn.query_iter(query))?;
        settle(&mut flags, &mut r);
        Ok(())
    }

    fn exec_first<T, S, P>(&mut self, stmt: S, params: P) -> mysql::Result<Option<T>>
    where
        S: AsStatement,
        P: Into<Params>,
        T: FromRow,
    {
        let stmt = stmt.as_statement(self)?.into_owned();
        let (conn, mut flags) = self.lease.split();
        let r = watch(&mut flags, conn.exec_iter(stmt, params))?;
        first_row(&mut flags, r).map(|row| row.map(from_row))
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
        let (conn, mut flags) = self.lease.split();
        let r = watch(&mut flags, conn.exec_iter(stmt, params))?;
        first_row(&mut flags, r).map(|row| row.map(from_row_opt))
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
        let (conn, mut flags) = self.lease.split();
        let mut r = watch(&mut flags, conn.exec_iter(stmt, params))?;
        let out = watch(
            &mut flags,
            fold_set(&mut r, init, |acc, row| f(acc, from_row(row))),
        );
        settle(&mut flags, &mut r);
        out
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
        let (conn, mut flags) = self.lease.split();
        let mut r = watch(&mut flags, conn.exec_iter(stmt, params))?;
        let out = watch(
            &mut flags,
            fold_set(&mut r, init, |acc, row| f(acc, from_row_opt(row))),
        );
        settle(&mut flags, &mut r);
        out
    }

    fn exec_drop<S, P>(&mut self, stmt: S, params: P) -> mysql::Result<()>
    where
        S: AsStatement,
        P: Into<Params>,
    {
        let stmt = stmt.as_statement(self)?.into_owned();
        let (conn, mut flags) = self.lease.split();
        let mut r = watch(&mut flags, conn.exec_iter(stmt, params))?;
        settle(&mut flags, &mut r);
        Ok(())
    }
}

/// Whether a failed statement may have left part of an answer unread, so
/// that the next command would read it as its own: any error but the
/// server's own error packet (after which the session is still in step).
/// The one place this rule is written; everything that runs statements on a
/// borrowed connection (this module's `Queryable`, the C ABI) goes through
/// [`watch`].
pub(crate) fn breaks_session(e: &mysql::Error) -> bool {
    !matches!(e, mysql::Error::MySqlError(_))
}

/// Marks the connection broken when `r` failed in a way that
/// [`breaks_session`].
pub(crate) fn watch<T>(marks: &mut Marks<'_>, r: mysql::Result<T>) -> mysql::Result<T> {
    if let Err(e) = &r {
        if breaks_session(e) {
            marks.mark_broken();
        }
    }
    r
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

/// The first row of an answer; the rest is read off (see `settle`).
fn first_row<P: Protocol>(
    flags: &mut Marks<'_>,
    mut r: QueryResult<'_, '_, '_, P>,
) -> mysql::Result<Option<mysql::Row>> {
    let first = watch(flags, r.next().transpose());
    settle(flags, &mut r);
    first
}

/// Reads what is left of an answer, every result set to its end; an error
/// there (the caller already has what it asked for) marks the connection
/// broken.
fn settle<P: Protocol>(flags: &mut Marks<'_>, r: &mut QueryResult<'_, '_, '_, P>) {
    let rest = (|| {
        while let Some(set) = r.iter() {
            for row in set {
                row?;
            }
        }
        Ok(())
    })();
    let _ = watch(flags, rest);
}

impl PooledConn {
    /// Notes a text statement (see `may_open_transaction`) and splits.
    fn text(&mut self, sql: &str) -> (&mut Conn, Marks<'_>) {
        if may_open_transaction(sql) {
            self.lease.marks().note_touched();
        }
        self.lease.split()
    }

    /// Runs `f` on the raw connection; a failure that [`breaks_session`]
    /// marks the connection broken (it is closed instead of returned).
    pub(crate) fn track<'a, T>(
        &'a mut self,
        f: impl FnOnce(&'a mut Conn) -> mysql::Result<T>,
    ) -> mysql::Result<T> {
        let (conn, mut marks) = self.lease.split();
        watch(&mut marks, f(conn))
    }
}

#[cfg(test)]
mod tests {
    use super::may_open_transaction as m;

    #[test]
    fn statement_classifier() {
        assert!(!m("SELECT 1"));
        assert!(!m("  /* hint */ select * from t"));
        assert!(!m("INSERT INTO t VALUES (1)"));
        assert!(m("BEGIN"));
        assert!(m("start transaction"));
        assert!(m("/* x */ START TRANSACTION READ ONLY"));
        assert!(m("SET autocommit=0"));
        assert!(m("XA START 'x'"));
        assert!(m("CALL proc()"));
        assert!(m("LOCK TABLES t WRITE"));
        assert!(m("SELECT 1; BEGIN"));
        assert!(m("/* unterminated"));
        assert!(!m("-- c\nSELECT 1"));
    }
}
