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
//! use staunch::prelude::*;
//!
//! let pool = staunch::Pool::from_url("mysql://app:secret@127.0.0.1:3306/shop?max_size=8")?;
//! let mut conn = pool.get()?;
//! let one: Option<i64> = conn.query_first("SELECT 1")?;
//! assert_eq!(one, Some(1));
//! drop(conn); // back to the pool
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Layers
//! Each folder is one layer, and every dependency points down:
//! - `pool/`: the generic pool core ([`pool::CorePool`] over a
//!   [`pool::Connector`]); knows nothing of MySQL;
//! - `client/`: the MySQL side ([`MysqlConnector`], [`PooledConn`]);
//! - `wire/`: the client protocol on a socket staunch owns (packets,
//!   text and binary answers as borrowed slices, the handshake and
//!   authentication, TLS): what runs every connection; knows nothing of
//!   pools or sessions. Not part of the Rust API;
//! - `topology/`: one core per host, routing, the monitor and its rules ([`Pool`]);
//! - `config.rs`: the URL and [`Builder`] over the three layers' knobs;
//! - `ffi/`: the C ABI (`include/staunch.h`), not part of the Rust API.
//!
//! Below them all: errors, events, durations, and the `sync`/`sys` shims.
#![deny(unsafe_code)]
#![warn(missing_debug_implementations)]

// The C library's allocator (the `mimalloc` feature, see Cargo.toml and
// src/alloc.rs).
#[cfg(all(feature = "mimalloc", not(miri)))]
mod alloc;
#[cfg(all(feature = "mimalloc", not(miri)))]
#[global_allocator]
static ALLOCATOR: alloc::MiMalloc = alloc::MiMalloc;

/// Gives what the library's allocator freed back to the kernel once its
/// purge delay has passed (`alloc::collect`); nothing under another
/// allocator. The pool's housekeeper calls it every tick.
#[inline]
pub(crate) fn collect_freed_memory() {
    #[cfg(all(feature = "mimalloc", not(miri)))]
    alloc::collect();
}

mod client;
mod config;
pub mod duration;
mod error;
mod events;
#[doc(hidden)]
pub mod ffi;
mod metrics;
#[cfg(feature = "metrics")]
mod metrics_facade;
pub mod pool;
mod sync;
mod sys;
#[cfg(test)]
mod test_input;
mod topology;
mod trace;
// The protocol layer (its module doc says what it has and lacks). Public only
// for its own tests and benchmark (tests/wire.rs, examples/): not part of
// the API, no semver promise, and not part of the C ABI: cbindgen skips it
// (its protocol constants are no C names). That marker is an outer doc
// comment, and with one rustdoc resolves the module doc's links from here,
// so src/wire/mod.rs spells its link targets out in full.
/// cbindgen:ignore
#[doc(hidden)]
pub mod wire;

/// cbindgen:ignore
#[doc(hidden)]
pub mod __link;

// The crate-private items the fuzz targets (fuzz/) check. Not part of the API.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod __fuzz;

use std::fmt;
use std::sync::Arc;

pub use crate::client::query::{AsStatement, QueryResult, Queryable, ResultSet, Statement};
pub use crate::client::txn::{AccessMode, IsolationLevel, TxOpts};
pub use crate::client::{
    Answer, CancelHandle, ConnectConfig, Decimal, DecimalError, Lexing, MysqlConnector, Param,
    PooledConn, Scan, SendAs, Session, TlsMode, Transaction, Way, DEFAULT_LIVENESS_THRESHOLD,
};
pub use crate::config::{Builder, Config};
pub use crate::error::{Error, ErrorCategory, ErrorKind, Result};
pub use crate::events::{CloseReason, Event, EventListener, LogListener};
#[cfg(feature = "metrics")]
pub use crate::metrics_facade::MetricsPublisher;
pub use crate::pool::cancel::CancelToken;
pub use crate::pool::config::PoolConfig;
pub use crate::pool::stats::{Buckets, Histograms, Latency, Stats, BUCKETS};
pub use crate::topology::{
    missing_privileges, HostHealth, HostStats, PendingConn, PingType, Pool, StartedGet,
    TopologyConfig, DEFAULT_ALIVE_ERROR_CODES,
};
#[cfg(feature = "tracing")]
pub use crate::trace::TracingSpans;
pub use crate::trace::{TraceEvent, TraceKind, Tracer};
/// `mysql_common`, the protocol library staunch builds on, whose values and
/// row conversions the Rust face speaks (`Value`, `Row`, `FromRow`, ...),
/// so that its version always matches.
pub use ::mysql_common;
pub use mysql_common::params;
pub use mysql_common::params::Params;
pub use mysql_common::row::convert::{from_row, from_row_opt, FromRowError};
pub use mysql_common::row::Row;
pub use mysql_common::value::convert::{from_value, from_value_opt, FromValueError};
pub use mysql_common::value::Value;

/// What code written for `mysql::PooledConn` imports: `use
/// staunch::prelude::*;` where it had `use mysql::prelude::*;`.
pub mod prelude {
    pub use crate::client::query::{AsStatement, Queryable};
    pub use mysql_common::prelude::{ColumnIndex, FromRow, FromValue, ToValue};
}

/// The README's Rust snippets, compiled as doctests (`cargo test --doc`), so
/// that what a new user copies compiles.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// The Rust snippets of docs/ (scripts/check-docs.sh checks that every page
/// with one is here), compiled as doctests like the README's.
#[cfg(doctest)]
pub mod docs_doctests {
    #[doc = include_str!("../docs/rust.md")]
    pub struct Rust;
    #[doc = include_str!("../docs/tls.md")]
    pub struct Tls;
    #[doc = include_str!("../docs/topology.md")]
    pub struct Topology;
    #[doc = include_str!("../docs/galera.md")]
    pub struct Galera;
}

impl Pool {
    /// Opens a pool from a URL: `mysql://user:pass@host:port/db?knob=value&…`,
    /// or with several hosts `mysql://user:pass@h1,h2,h3/db` (a primary and
    /// replicas, or a Galera cluster: the servers tell which; `topology=`
    /// forces it). See [`Builder`] for the knobs and their defaults.
    pub fn from_url(url: &str) -> Result<Pool> {
        Builder::new().url(url).build()
    }

    /// A builder for a pool, with every knob at its default.
    pub fn builder() -> Builder {
        Builder::new()
    }

    /// Opens a pool from a finished configuration, logging events.
    pub fn new(config: Config) -> Result<Pool> {
        Self::new_with_listener(config, Arc::new(LogListener))
    }

    /// Opens a pool whose events go to `listener`.
    pub fn new_with_listener(config: Config, listener: Arc<dyn EventListener>) -> Result<Pool> {
        Pool::open(
            config.connect(),
            config.pool(),
            config.topology(),
            listener,
            None,
            None,
        )
    }
}

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
        let tracer = self.tracer.take();
        let cfg = self.config()?;
        Pool::open(
            cfg.connect(),
            cfg.pool(),
            cfg.topology(),
            listener,
            secondary,
            tracer,
        )
    }

    /// Tells `tracer` the start and the end of every acquire and every
    /// statement, on the borrowing thread (see [`Tracer`]): for spans.
    /// Without one nothing is called or measured.
    pub fn tracer(mut self, tracer: Arc<dyn Tracer>) -> Self {
        self.tracer = Some(tracer);
        self
    }
}

impl fmt::Debug for dyn EventListener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventListener").finish_non_exhaustive()
    }
}
