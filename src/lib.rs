//! # staunch: a MySQL/MariaDB connection pool that never hangs
//!
//! Every blocking call the pool makes has a bound: the TCP connect, the wait
//! for the server's greeting, authentication, session set-up (together: the
//! hard `connect_timeout`, enforced from outside the connecting thread),
//! validation, the rollback on return, and `get` itself. The pool was designed
//! against four real incidents (see the README): a single connect thread stuck
//! forever on a greeting that never came (A), validation that skipped half of a
//! connection (B), a heartbeat and a business thread sharing one connection
//! (C), and how a good master monitor decides a server is dead (D).
//!
//! ```no_run
//! use mysql::prelude::Queryable;
//!
//! let pool = staunch::Pool::from_url("mysql://app:secret@127.0.0.1:3306/shop?max_size=8")?;
//! let mut conn = pool.get()?;
//! let one: Option<i64> = conn.query_first("SELECT 1")?;
//! assert_eq!(one, Some(1));
//! drop(conn); // back to the pool
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The pool core ([`pool::Pool`]) is generic over a [`Connector`]; the
//! [`Pool`] and [`PooledConn`] names of the crate root are its MySQL form, and
//! a `PooledConn` derefs to [`mysql::Conn`].
#![deny(unsafe_code)]
#![warn(missing_debug_implementations)]

pub mod config;
pub mod connector;
pub mod error;
pub mod events;
pub mod ffi;
pub mod pool;
mod sync;
mod sys;

use std::fmt;
use std::sync::Arc;

pub use crate::config::{Builder, Config, ConnectConfig, PoolConfig};
pub use crate::connector::{ConnectAttempt, Connector, MysqlConnector};
pub use crate::error::{Error, ErrorKind, Result};
pub use crate::events::{Event, EventListener, LogListener};
pub use crate::pool::stats::{CloseReason, Latency, Stats};
pub use mysql;

/// A pool of MySQL/MariaDB connections. Cheap to clone; see [`pool::Pool`] for
/// every method.
pub type Pool = pool::Pool<MysqlConnector>;

/// A borrowed MySQL connection: derefs to [`mysql::Conn`] and implements
/// [`mysql::prelude::Queryable`]; dropping it returns it to the pool.
pub type PooledConn = pool::PooledConn<MysqlConnector>;

impl pool::Pool<MysqlConnector> {
    /// Opens a pool from a URL: `mysql://user:pass@host:port/db?knob=value&…`.
    /// See [`Builder`] for the knobs and their defaults.
    pub fn from_url(url: &str) -> Result<Pool> {
        Builder::new().url(url).build()
    }

    /// A builder for a pool, with every knob at its default.
    pub fn builder() -> Builder {
        Builder::new()
    }

    /// Opens a pool from a finished configuration.
    pub fn new(config: Config) -> Result<Pool> {
        Self::new_with_listener(config, Arc::new(LogListener))
    }

    /// Opens a pool whose events go to `listener`.
    pub fn new_with_listener(config: Config, listener: Arc<dyn EventListener>) -> Result<Pool> {
        let connector = MysqlConnector::new(config.connect.clone(), config.pool.validation_timeout);
        pool::Pool::with_listener(config.pool, connector, listener)
    }
}

impl Builder {
    /// Sends pool events to `listener` instead of the `log` crate.
    pub fn event_listener(mut self, listener: Arc<dyn EventListener>) -> Self {
        self.listener = Some(listener);
        self
    }

    /// Checks the configuration and opens the pool.
    pub fn build(mut self) -> Result<Pool> {
        let listener = self
            .listener
            .take()
            .unwrap_or_else(|| Arc::new(LogListener));
        Pool::new_with_listener(self.config()?, listener)
    }
}

impl fmt::Debug for dyn EventListener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("EventListener")
    }
}
