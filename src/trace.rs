//! Hooks on the borrowing thread around each acquire and each statement,
//! for traces: a [`Tracer`] hears a start and an end of each, in order, on
//! the thread that borrows or runs the statement, so that it can open and
//! close a span there (OpenTelemetry's, `tracing`'s) with the database
//! semantic conventions: the pool's name, the server's address and port,
//! the statement's text, the error.
//!
//! Set with [`Builder::tracer`](crate::Builder::tracer) (Rust) or
//! `staunch_options_set_tracer` (C). Without one, nothing is called and
//! nothing is measured. A tracer must be quick and must not use the pool
//! (it is called between the pool's steps, though never under its lock).

use std::fmt;
use std::time::{Duration, Instant};

/// What a [`TraceEvent`] reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TraceKind {
    /// A borrow begins (before any wait).
    AcquireStart,
    /// The borrow ended: a connection (`connection_id`, `server`), or an
    /// error (`error`).
    AcquireEnd,
    /// A statement is about to be sent on a borrowed connection.
    StatementStart,
    /// Its answer was read to its end, or it failed (`error`). A streamed
    /// answer the borrower reads itself (Rust's `query_iter`) ends at the
    /// next statement on its connection, or at the return.
    StatementEnd,
}

/// One start or end, handed to the [`Tracer`] by reference: copy what is
/// kept.
#[derive(Debug)]
#[non_exhaustive]
pub struct TraceEvent<'a> {
    pub kind: TraceKind,
    /// The pool's name (`pool_name`, or `staunch-N`).
    pub pool: &'a str,
    /// The server's `host:port` (or socket path); empty at `AcquireStart`
    /// and at a failed `AcquireEnd`.
    pub server: &'a str,
    /// The connection's number in the pool (0 when there is none).
    pub connection_id: u64,
    /// The statement's text, at `StatementStart` and `StatementEnd`, when
    /// it has one here (a prepared statement's execute does not). It may
    /// hold what the application put in it: record it only where the user
    /// opted in (OpenTelemetry's `db.query.text`).
    pub statement: Option<&'a str>,
    /// At an end: the time since its start.
    pub duration: Duration,
    /// At an end that failed: the error's text (never a password).
    pub error: Option<&'a str>,
    /// At an end that failed with a server error: its number (else 0).
    pub error_code: u16,
}

/// Hears every [`TraceEvent`] of a pool, on the borrowing thread.
pub trait Tracer: Send + Sync + 'static {
    fn trace(&self, event: &TraceEvent<'_>);
}

impl<F: Fn(&TraceEvent<'_>) + Send + Sync + 'static> Tracer for F {
    fn trace(&self, event: &TraceEvent<'_>) {
        self(event)
    }
}

/// A pool's tracer with the pool's name: what the connector and the
/// topology hold.
#[derive(Clone)]
pub(crate) struct Traced {
    pub tracer: std::sync::Arc<dyn Tracer>,
    pub pool: std::sync::Arc<str>,
    /// The connector's server (empty in the topology's own).
    pub server: std::sync::Arc<str>,
}

impl fmt::Debug for Traced {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Traced({})", self.pool)
    }
}

impl Traced {
    /// Tells the tracer; a panic in it is caught and logged (it must not
    /// unwind through the pool or a foreign caller).
    pub fn emit(&self, event: &TraceEvent<'_>) {
        let call = std::panic::AssertUnwindSafe(|| self.tracer.trace(event));
        if let Err(p) = std::panic::catch_unwind(call) {
            log::error!(target: "staunch", "the tracer panicked: {}", crate::sync::panic_message(&*p));
        }
    }

    /// An event of `kind` with nothing else known yet.
    pub fn event(&self, kind: TraceKind) -> TraceEvent<'_> {
        TraceEvent {
            kind,
            pool: &self.pool,
            server: "",
            connection_id: 0,
            statement: None,
            duration: Duration::ZERO,
            error: None,
            error_code: 0,
        }
    }
}

/// A statement's start, kept by its connection until its end.
#[derive(Debug)]
pub(crate) struct Started {
    pub at: Instant,
    pub statement: Option<Box<str>>,
}
