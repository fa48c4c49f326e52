//! The connection staunch's engine opens and runs (`client::link`), for
//! `tests/link.rs` while the pools still use the `mysql` crate's. Not part
//! of the API: it goes when the sessions run on the engine and their tests
//! reach it through the pools.

use std::time::Duration;

use crate::client::connect::Prepared;
use crate::error::Result;
use crate::pool::ConnectAttempt;
use crate::wire::WireError;
use crate::Config;

/// A connection opened and run by staunch's engine.
#[derive(Debug)]
pub struct Link(crate::client::link::Link);

/// A row's cells as the text protocol sent them (None for NULL).
pub type Row = Vec<Option<Vec<u8>>>;

impl Link {
    /// Opens what `url` names within `timeout`.
    pub fn open(url: &str, timeout: Duration) -> Result<Link> {
        Link::open_in(url, &ConnectAttempt::new(timeout))
    }

    /// Opens what `url` names within `attempt`.
    pub fn open_in(url: &str, attempt: &ConnectAttempt) -> Result<Link> {
        let cfg = Config::from_url(url)?.connect;
        let p = Prepared::new(&cfg)?;
        crate::client::link::Link::open(&cfg, &p, attempt).map(|(l, _)| Link(l))
    }

    pub fn connection_id(&self) -> u32 {
        self.0.connection_id()
    }
    pub fn in_transaction(&self) -> bool {
        self.0.in_transaction()
    }
    pub fn autocommit(&self) -> bool {
        self.0.autocommit()
    }
    pub fn affected_rows(&self) -> u64 {
        self.0.last.affected_rows
    }
    pub fn run(&mut self, sql: &str) -> std::result::Result<(), WireError> {
        self.0.run(sql.as_bytes())
    }
    pub fn first_row(&mut self, sql: &str) -> std::result::Result<Option<Row>, WireError> {
        self.0.first_row(sql.as_bytes())
    }
    pub fn ping(&mut self) -> std::result::Result<(), WireError> {
        self.0.ping()
    }
    pub fn reset(&mut self) -> std::result::Result<(), WireError> {
        self.0.reset()
    }
    pub fn select_db(&mut self, db: &str) -> std::result::Result<(), WireError> {
        self.0.select_db(db)
    }
    pub fn quit(self) {
        self.0.quit()
    }
}

/// What the pool's watchdog does at a connect's deadline.
pub fn cancel(attempt: &ConnectAttempt) -> Option<bool> {
    attempt.cancel()
}
