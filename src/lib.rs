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
pub mod topology;

// The fuzz targets' bodies (fuzz/), shared with the unit tests that replay the
// committed corpus on stable. Not part of the API.
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod __fuzz;

use std::fmt;
use std::sync::Arc;

pub use crate::config::{
    Builder, Config, ConnectConfig, PingType, PoolConfig, TlsMode, TopologyConfig,
};
pub use crate::connector::{ConnectAttempt, Connector, MysqlConnector};
pub use crate::error::{Error, ErrorKind, Result};
pub use crate::events::{Event, EventListener, LogListener};
pub use crate::pool::stats::{CloseReason, Latency, Stats};
pub use mysql;

/// A pool of MySQL/MariaDB connections: one server, or a primary and its
/// replicas (see [`topology`]).
pub use crate::topology::{HostHealth, HostStats, Pool};

/// A borrowed MySQL connection: derefs to [`mysql::Conn`] and implements
/// [`mysql::prelude::Queryable`]; dropping it returns it to the pool.
pub type PooledConn = pool::PooledConn<MysqlConnector>;

impl Builder {
    /// Sends pool events to `listener` instead of the `log` crate.
    pub fn event_listener(mut self, listener: Arc<dyn EventListener>) -> Self {
        self.listener = Some(listener);
        self
    }

    /// A check the primary monitor runs before declaring the primary dead:
    /// given its `host:port`, return true if it is still alive as seen from
    /// elsewhere (then there is no failover). Runs on the monitor thread;
    /// must return promptly.
    pub fn secondary_check(mut self, check: impl Fn(&str) -> bool + Send + Sync + 'static) -> Self {
        self.secondary = Some(Arc::new(check));
        self
    }

    /// Checks the configuration and opens the pool.
    pub fn build(mut self) -> Result<Pool> {
        let listener = self
            .listener
            .take()
            .unwrap_or_else(|| Arc::new(LogListener));
        let secondary = self.secondary.take();
        Pool::open(self.config()?, listener, secondary)
    }
}

impl fmt::Debug for dyn EventListener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("EventListener")
    }
}
