//! Pool events and the listener that receives them.
//!
//! Events are delivered on the thread that observed them: adder threads for
//! connects, the housekeeper for keepalive, retirement and leaks, the caller of
//! `get` for validation failures on borrow. Never while a pool lock is held. A
//! listener must be quick and must not block; a panic in it is caught and
//! logged. The default listener writes to the `log` crate (target `staunch`).

use std::time::Duration;

use crate::duration::fmt_duration;
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
        /// The borrowing thread's name; then, after a newline, the stack
        /// where it borrowed: the Rust backtrace for a borrow through the
        /// Rust API, the host language's (a Python traceback, a Java or Go
        /// stack) for a binding's, when the binding gives it.
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
    /// The monitor's user may not run one of the probe's statements
    /// (`statement`, which needs `privilege`): told once per statement, at
    /// the monitor's first look (or the first answer that shows it), never
    /// again per probe. The monitor goes on without what the statement
    /// would have told (`costs`). Two ways out: grant `privilege` to
    /// `user`, or give the monitor its own user (`monitor_user` and
    /// `monitor_password` in the URL).
    MonitorPrivilegeMissing {
        endpoint: String,
        /// The account, as `CURRENT_USER()` names it (`'app'@'%'`).
        user: String,
        statement: String,
        privilege: String,
        costs: String,
    },
    /// At the monitor's first look the servers contradict the `topology=`
    /// the URL forces: `topology=replication` over nodes that all answer
    /// `wsrep_on=1` (the replication rules see every node writable, a
    /// split brain, and refuse writes once the writer fails), or
    /// `topology=galera` over a host answering `wsrep_on=0`. The forced
    /// rules still apply; drop `topology=` (staunch finds out) or correct
    /// it.
    TopologyContradicted {
        /// What the URL forces: `replication` or `galera`.
        forced: String,
        /// What the servers answered: `galera` or `replication`.
        found: String,
        /// Every host and its `wsrep_on` (`on`, `off`, `no answer`).
        hosts: Vec<String>,
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
    /// Soft eviction (`soft_evict`, or a topology change), or surplus above a
    /// lowered `max_size` (`set_max_size`).
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
        log::log!(target: "staunch", e.level(), "{e}");
    }
}

impl Event {
    /// How much an operator should care: what [`LogListener`] logs it at,
    /// and the level `staunch monitor` prints.
    pub fn level(&self) -> log::Level {
        use log::Level::{Debug, Error, Info, Warn};
        match self {
            Event::Connected { .. } | Event::Closed { .. } => Debug,
            Event::Recovered { .. }
            | Event::PoolClosed
            | Event::PrimaryAliveError { .. }
            | Event::ReplicaRecovered { .. }
            | Event::WriterChanged { from: None, .. } => Info,
            Event::ConnectFailed { .. }
            | Event::ValidationFailed { .. }
            | Event::LeakSuspected { .. }
            | Event::AcquireTimeout { .. }
            | Event::PrimarySuspected { .. }
            | Event::PartitionSuspected { .. }
            | Event::WriterChanged { .. }
            | Event::FailoverDeferred { .. }
            | Event::ReplicaLagging { .. }
            | Event::MonitorPrivilegeMissing { .. } => Warn,
            Event::TopologyContradicted { .. } => Error,
            Event::PrimaryDead { .. }
            | Event::SplitBrain { .. }
            | Event::StalePrimaryWritable { .. } => Error,
            Event::UnreplicatedWrites { transactions, .. } => {
                if *transactions > 0 {
                    Error
                } else {
                    Info
                }
            }
        }
    }
}

/// One line of text for an event, the same for the log, `staunch monitor`
/// and the C ABI's topology events.
impl std::fmt::Display for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Event::Connected { id, endpoint, took } => {
                write!(f, "connection {id} to {endpoint} ready in {}", fmt_duration(*took))
            }
            Event::ConnectFailed { error, attempt, .. } => {
                write!(f, "connect failed (attempt {attempt}): {error}")
            }
            Event::Recovered {
                endpoint,
                failures,
                outage,
            } => write!(
                f,
                "{endpoint} reachable again after {failures} failed connects ({})",
                fmt_duration(*outage)
            ),
            Event::Closed { id, reason } => {
                write!(f, "connection {id} closed: {}", reason.as_str())
            }
            Event::ValidationFailed { id, error } => {
                write!(f, "connection {id} failed validation: {error}")
            }
            Event::LeakSuspected {
                id,
                thread,
                held_for,
            } => {
                let (name, stack) = match thread.split_once('\n') {
                    Some((n, s)) => (n, Some(s)),
                    None => (thread.as_str(), None),
                };
                write!(
                    f,
                    "connection {id} held by thread {name:?} for {}: possible leak",
                    fmt_duration(*held_for)
                )?;
                match stack {
                    Some(s) => write!(f, "; borrowed at:\n{s}"),
                    None => Ok(()),
                }
            }
            Event::AcquireTimeout { error } => write!(f, "{error}"),
            Event::PoolClosed => f.write_str("pool closed"),
            Event::PrimarySuspected {
                endpoint,
                failures,
                error,
            } => write!(
                f,
                "primary {endpoint}: probe failed ({failures} in a row): {error}"
            ),
            Event::PrimaryAliveError { endpoint, error } => write!(
                f,
                "primary {endpoint} answered with an error that proves it alive (not counted): {error}"
            ),
            Event::PartitionSuspected { endpoint, seen_by } => write!(
                f,
                "primary {endpoint} unreachable from here, but {} still see it: network partition suspected, no failover",
                seen_by.join(", ")
            ),
            Event::PrimaryDead { endpoint, reason } => write!(
                f,
                "primary {endpoint} is dead: {reason}; writes fail fast until a writer is found"
            ),
            Event::WriterChanged { from: Some(from), to } => write!(
                f,
                "writer changed: {from} -> {to} (the one host with read_only=0)"
            ),
            Event::WriterChanged { from: None, to } => write!(f, "writer found: {to}"),
            Event::SplitBrain {
                writable,
                writes_refused,
            } => write!(
                f,
                "split brain: {} all report read_only=0; {}",
                writable.join(", "),
                if *writes_refused {
                    "writes refused"
                } else {
                    "writes stay on the current writer"
                }
            ),
            Event::FailoverDeferred { candidate, wait } => write!(
                f,
                "failover to {candidate} deferred {} more (min_failover_interval)",
                fmt_duration(*wait)
            ),
            Event::ReplicaLagging {
                endpoint,
                lag: Some(lag),
            } => write!(
                f,
                "replica {endpoint} lags {} (over max_replication_lag): no reads",
                fmt_duration(*lag)
            ),
            Event::ReplicaLagging {
                endpoint,
                lag: None,
            } => write!(
                f,
                "replica {endpoint} is unreachable or not replicating: no reads"
            ),
            Event::ReplicaRecovered { endpoint } => {
                write!(f, "replica {endpoint} back in service: gets reads again")
            }
            Event::StalePrimaryWritable { endpoint, writer } => write!(
                f,
                "stale primary {endpoint} is writable (read_only=0) after writes moved to {}: no writes or reads go there; fence it",
                writer.as_deref().unwrap_or("no writer")
            ),
            Event::UnreplicatedWrites {
                former,
                writer,
                missing,
                transactions,
                confirmed,
            } => match (*transactions, *confirmed) {
                (0, true) => write!(
                    f,
                    "every transaction of the former primary {former} is on {writer}"
                ),
                (0, false) => write!(
                    f,
                    "no transaction of the former primary {former} known missing on {writer}; checked again when it answers"
                ),
                (n, true) => write!(
                    f,
                    "{n} transactions of the former primary {former} are missing on {writer}: {missing}"
                ),
                (n, false) => write!(
                    f,
                    "at least {n} transactions of the former primary {former} are missing on {writer}: {missing} \
                     (from its last answer; final count when it answers)"
                ),
            },
            Event::MonitorPrivilegeMissing {
                endpoint,
                user,
                statement,
                privilege,
                costs,
            } => write!(
                f,
                "the monitor's user {user} may not run {statement} on {endpoint} (it needs {privilege}): {costs}. \
                 Either GRANT {privilege} ON *.* TO {user}, or give the monitor a user that has it: \
                 monitor_user=...&monitor_password=... in the URL"
            ),
            Event::TopologyContradicted {
                forced,
                found,
                hosts,
            } => write!(
                f,
                "the URL says topology={forced} but the servers are {} ({}): the {forced} rules \
                 will misjudge them; drop topology= (staunch finds out) or set topology={found}",
                if found == "galera" {
                    "a Galera cluster"
                } else {
                    "not a Galera cluster"
                },
                hosts.join(", ")
            ),
        }
    }
}

impl<F: Fn(&Event) + Send + Sync + 'static> EventListener for F {
    fn on_event(&self, event: &Event) {
        self(event)
    }
}
