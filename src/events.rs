//! Pool events and the listener that receives them.
//!
//! Events are delivered on the thread that observed them: adder threads for
//! connects, the housekeeper for keepalive, retirement and leaks, the caller of
//! `get` for validation failures on borrow. Never while a pool lock is held. A
//! listener must be quick and must not block; a panic in it is caught and
//! logged. The default listener writes to the `log` crate (target `staunch`).

use std::time::Duration;

use crate::error::Error;

/// Something that happened in a pool.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Event {
    /// A new connection is ready.
    Connected {
        id: u64,
        endpoint: String,
        took: Duration,
    },
    /// One connect attempt failed (`attempt` counts consecutive failures).
    ConnectFailed {
        endpoint: String,
        error: Error,
        attempt: u32,
    },
    /// A connect succeeded after failures: the database is reachable again.
    Recovered {
        endpoint: String,
        failures: u32,
        outage: Duration,
    },
    /// A connection was closed.
    Closed { id: u64, reason: CloseReason },
    /// A validation (on borrow or keepalive) failed; the connection is closed.
    ValidationFailed { id: u64, error: Error },
    /// A connection has been borrowed longer than `leak_detection_threshold`.
    LeakSuspected {
        id: u64,
        thread: String,
        held_for: Duration,
    },
    /// A `get` timed out.
    AcquireTimeout { error: Error },
    /// The pool was closed.
    PoolClosed,
    /// A probe of the primary failed (`failures` in a row).
    PrimarySuspected {
        endpoint: String,
        failures: u32,
        error: Error,
    },
    /// A probe of the primary got an error that proves the server is alive
    /// (too many connections, access denied, ...): not counted as a failure.
    PrimaryAliveError { endpoint: String, error: Error },
    /// The primary failed `failure_threshold` probes, but replicas still see
    /// it: a network partition between this process and the primary, not a
    /// dead primary. No failover.
    PartitionSuspected {
        endpoint: String,
        seen_by: Vec<String>,
    },
    /// The primary is confirmed dead; writes fail fast until a writer is found.
    PrimaryDead { endpoint: String, reason: String },
    /// Writes now go to `to` (`from` is None at the first discovery).
    WriterChanged { from: Option<String>, to: String },
    /// More than one host reports `read_only = 0`.
    SplitBrain {
        writable: Vec<String>,
        writes_refused: bool,
    },
    /// A writer change was held back by `min_failover_interval`.
    FailoverDeferred { candidate: String, wait: Duration },
    /// A replica lags more than `max_replication_lag`, or its replication is
    /// broken (`lag` None): it gets no reads.
    ReplicaLagging {
        endpoint: String,
        lag: Option<Duration>,
    },
    /// A replica is back within bounds and gets reads again.
    ReplicaRecovered { endpoint: String },
    /// A former primary, superseded by a promotion the pool followed (or a
    /// switchover), answers with `read_only = 0`: a stale primary. It gets no
    /// writes and no reads; an operator must fence it (or make it replicate
    /// from the writer, after which it is an ordinary host again). `writer`
    /// is where writes go now.
    StalePrimaryWritable {
        endpoint: String,
        writer: Option<String>,
    },
    /// Writes moved from `former` to `writer`: transactions `former` had
    /// committed that `writer` lacks (`missing`: MariaDB GTID ranges such as
    /// `0-1-121..0-1-150`, empty if none; `transactions`: how many). With
    /// `confirmed` false, `former` was unreachable and the figures come from
    /// its last answer before it stopped answering (a lower bound: writes
    /// acknowledged after it are unknown); a second event, `confirmed` true,
    /// follows when it answers again.
    UnreplicatedWrites {
        former: String,
        writer: String,
        missing: String,
        transactions: u64,
        confirmed: bool,
    },
}

/// Why a connection was closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
#[repr(u8)]
pub enum CloseReason {
    /// Idle longer than `idle_timeout` while above `min_idle`.
    IdleTimeout = 0,
    /// Reached `max_lifetime` (minus jitter).
    MaxLifetime = 1,
    /// Failed validation, keepalive, or the reset on return, or broke during
    /// a statement.
    Broken = 2,
    /// Soft eviction (`soft_evict`, or a topology change).
    Evicted = 3,
    /// The pool was closed.
    PoolClosed = 4,
}

impl CloseReason {
    /// A short name, stable across versions.
    pub fn as_str(self) -> &'static str {
        match self {
            CloseReason::IdleTimeout => "idle_timeout",
            CloseReason::MaxLifetime => "max_lifetime",
            CloseReason::Broken => "broken",
            CloseReason::Evicted => "evicted",
            CloseReason::PoolClosed => "pool_closed",
        }
    }
    /// Every reason, in discriminant order (`ALL[r as usize] == r`).
    pub(crate) const ALL: [CloseReason; 5] = [
        CloseReason::IdleTimeout,
        CloseReason::MaxLifetime,
        CloseReason::Broken,
        CloseReason::Evicted,
        CloseReason::PoolClosed,
    ];
}

/// Delivers `e` to `listener`, outside any lock; a panic in the listener is
/// caught and logged (it must not take down a pool thread or a `get`).
pub(crate) fn emit(listener: &dyn EventListener, e: Event) {
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| listener.on_event(&e))).is_err() {
        log::error!(target: "staunch", "event listener panicked on {e:?}");
    }
}

/// Receives pool events. See the module docs for threading rules.
pub trait EventListener: Send + Sync + 'static {
    fn on_event(&self, event: &Event);
}

/// Writes every event to the `log` crate.
#[derive(Debug, Default)]
pub struct LogListener;

impl EventListener for LogListener {
    fn on_event(&self, e: &Event) {
        use log::{debug, info, warn};
        match e {
            Event::Connected { id, endpoint, took } => {
                debug!(target: "staunch", "connection {id} to {endpoint} ready in {took:?}")
            }
            Event::ConnectFailed { error, attempt, .. } => {
                warn!(target: "staunch", "connect failed (attempt {attempt}): {error}")
            }
            Event::Recovered {
                endpoint,
                failures,
                outage,
            } => info!(
                target: "staunch",
                "{endpoint} reachable again after {failures} failed connects ({outage:?})"
            ),
            Event::Closed { id, reason } => {
                debug!(target: "staunch", "connection {id} closed: {}", reason.as_str())
            }
            Event::ValidationFailed { id, error } => {
                warn!(target: "staunch", "connection {id} failed validation: {error}")
            }
            Event::LeakSuspected {
                id,
                thread,
                held_for,
            } => warn!(
                target: "staunch",
                "connection {id} held by thread {thread:?} for {held_for:?}: possible leak"
            ),
            Event::AcquireTimeout { error } => warn!(target: "staunch", "{error}"),
            Event::PoolClosed => info!(target: "staunch", "pool closed"),
            Event::PrimarySuspected {
                endpoint,
                failures,
                error,
            } => {
                warn!(target: "staunch", "primary {endpoint}: probe failed ({failures} in a row): {error}")
            }
            Event::PrimaryAliveError { endpoint, error } => info!(
                target: "staunch",
                "primary {endpoint} answered with an error that proves it alive: {error}"
            ),
            Event::PartitionSuspected { endpoint, seen_by } => warn!(
                target: "staunch",
                "primary {endpoint} unreachable from here but seen by {seen_by:?}: partition, no failover"
            ),
            Event::PrimaryDead { endpoint, reason } => {
                log::error!(target: "staunch", "primary {endpoint} declared dead: {reason}")
            }
            Event::WriterChanged { from, to } => {
                warn!(target: "staunch", "writer changed from {from:?} to {to}")
            }
            Event::SplitBrain {
                writable,
                writes_refused,
            } => log::error!(
                target: "staunch",
                "split brain: {writable:?} all report read_only=0 (writes refused: {writes_refused})"
            ),
            Event::FailoverDeferred { candidate, wait } => warn!(
                target: "staunch",
                "failover to {candidate} deferred {wait:?} by min_failover_interval"
            ),
            Event::ReplicaLagging { endpoint, lag } => {
                warn!(target: "staunch", "replica {endpoint} lagging ({lag:?}): no reads")
            }
            Event::ReplicaRecovered { endpoint } => {
                info!(target: "staunch", "replica {endpoint} back in service")
            }
            Event::StalePrimaryWritable { endpoint, writer } => log::error!(
                target: "staunch",
                "stale primary {endpoint} is writable (read_only=0) after writes moved to {}: no writes or reads go there; fence it",
                writer.as_deref().unwrap_or("no writer")
            ),
            Event::UnreplicatedWrites {
                former,
                writer,
                missing,
                transactions,
                confirmed,
            } => {
                let what = match (transactions, confirmed) {
                    (0, true) => "none".to_string(),
                    (0, false) => "none known yet".to_string(),
                    (n, true) => format!("{n} ({missing})"),
                    (n, false) => format!("at least {n} ({missing})"),
                };
                let level = if *transactions > 0 {
                    log::Level::Error
                } else {
                    log::Level::Info
                };
                log::log!(
                    target: "staunch",
                    level,
                    "transactions committed on the former primary {former} that {writer} lacks: {what}{}",
                    if *confirmed { "" } else { "; checked again when it answers" }
                )
            }
        }
    }
}

impl<F: Fn(&Event) + Send + Sync + 'static> EventListener for F {
    fn on_event(&self, event: &Event) {
        self(event)
    }
}
