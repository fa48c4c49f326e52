//! Pool events and the listener that receives them.
//!
//! Events are delivered on the thread that observed them: adder threads for
//! connects, the housekeeper for keepalive, retirement and leaks, the caller of
//! `get` for validation failures on borrow. Never while a pool lock is held. A
//! listener must be quick and must not block; a panic in it is caught and
//! logged. The default listener writes to the `log` crate (target `staunch`).

use std::time::Duration;

use crate::error::Error;
use crate::pool::stats::CloseReason;

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
        }
    }
}

impl<F: Fn(&Event) + Send + Sync + 'static> EventListener for F {
    fn on_event(&self, event: &Event) {
        self(event)
    }
}
