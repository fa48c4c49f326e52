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
    /// At an end that failed: the error's text (never a password; a
    /// server's may quote the statement or a value, as 1064 and 1062 do:
    /// record it as the statement's text is recorded, only where opted in).
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

/// A server's `host:port` as OpenTelemetry's `server.address` and
/// `server.port` want it: an IPv6 host without its brackets; a socket path
/// (`unix:/path`) whole, without a port.
pub(crate) fn split_server(server: &str) -> (&str, Option<u16>) {
    match server.rsplit_once(':') {
        Some((host, port)) => match port.parse() {
            Ok(p) => (host.trim_start_matches('[').trim_end_matches(']'), Some(p)),
            Err(_) => (server, None),
        },
        None => (server, None),
    }
}

/// A statement's start, kept by its connection until its end.
#[derive(Debug)]
pub(crate) struct Started {
    pub at: Instant,
    pub connection_id: u64,
    pub statement: Option<Box<str>>,
}

#[cfg(feature = "tracing")]
pub use self::spans::TracingSpans;

#[cfg(feature = "tracing")]
mod spans {
    use std::cell::RefCell;

    use tracing::field::Empty;
    use tracing::span::EnteredSpan;

    use super::{split_server as address, TraceEvent, TraceKind, Tracer};

    thread_local! {
        /// The spans this thread opened and has not closed: a start pushes,
        /// its end pops (starts and ends come in pairs, on one thread).
        static OPEN: RefCell<Vec<EnteredSpan>> = const { RefCell::new(Vec::new()) };
    }

    /// A [`Tracer`] that opens a `tracing` span per acquire
    /// (`staunch.acquire`) and per statement (`staunch.statement`) on the
    /// borrowing thread, entered until its end, with OpenTelemetry's
    /// database attribute names as fields: `db.system.name`,
    /// `db.client.connection.pool.name`, `server.address`, `server.port`,
    /// `db.query.text` (only [`with_statement_text`](Self::with_statement_text)),
    /// `db.response.status_code` and `error.type` on failure (an `error`
    /// event in the span carries the message). `tracing-opentelemetry`
    /// turns them into OpenTelemetry spans. Needs the `tracing` feature.
    #[derive(Clone, Copy, Debug, Default)]
    pub struct TracingSpans {
        statement_text: bool,
    }

    impl TracingSpans {
        /// Spans without the statements' text.
        pub fn new() -> TracingSpans {
            TracingSpans::default()
        }

        /// Records each statement's text as `db.query.text` (off by
        /// default: it may hold what the application put in it).
        pub fn with_statement_text(mut self, on: bool) -> TracingSpans {
            self.statement_text = on;
            self
        }
    }

    impl Tracer for TracingSpans {
        fn trace(&self, e: &TraceEvent<'_>) {
            match e.kind {
                TraceKind::AcquireStart => {
                    let span = tracing::info_span!(
                        "staunch.acquire",
                        db.system.name = "mysql",
                        db.client.connection.pool.name = e.pool,
                        server.address = Empty,
                        server.port = Empty,
                        error.type = Empty,
                    );
                    OPEN.with(|o| o.borrow_mut().push(span.entered()));
                }
                TraceKind::StatementStart => {
                    let (host, port) = address(e.server);
                    let span = tracing::info_span!(
                        "staunch.statement",
                        db.system.name = "mysql",
                        db.client.connection.pool.name = e.pool,
                        server.address = host,
                        server.port = port,
                        db.query.text = Empty,
                        db.response.status_code = Empty,
                        error.type = Empty,
                    );
                    if self.statement_text {
                        if let Some(text) = e.statement {
                            span.record("db.query.text", text);
                        }
                    }
                    OPEN.with(|o| o.borrow_mut().push(span.entered()));
                }
                TraceKind::AcquireEnd | TraceKind::StatementEnd => {
                    let Some(span) = OPEN.with(|o| o.borrow_mut().pop()) else {
                        return;
                    };
                    if e.kind == TraceKind::AcquireEnd && !e.server.is_empty() {
                        let (host, port) = address(e.server);
                        span.record("server.address", host);
                        span.record("server.port", port);
                    }
                    if let Some(error) = e.error {
                        if e.error_code != 0 {
                            span.record("db.response.status_code", e.error_code);
                            span.record("error.type", e.error_code);
                            // A server's message may quote the statement
                            // (1064) or a value (1062): only with the text.
                            if self.statement_text {
                                tracing::error!(error, "failed");
                            } else {
                                let error = format!("MySQL error {}", e.error_code);
                                tracing::error!(error, "failed");
                            }
                        } else {
                            span.record("error.type", "staunch.error");
                            tracing::error!(error, "failed");
                        }
                    }
                    drop(span);
                }
            }
        }
    }
}

#[cfg(all(test, feature = "tracing"))]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::{Arc, Mutex};

    use tracing::field::{Field, Visit};
    use tracing::span::{Attributes, Id, Record};
    use tracing::{Event, Metadata, Subscriber};

    use super::*;

    /// A span: its name, its fields as text, whether it is open, and the
    /// error events inside it.
    type Span = (String, BTreeMap<String, String>, bool, Vec<String>);

    #[derive(Debug, Default)]
    struct Seen {
        spans: Vec<Span>,
        current: Vec<usize>,
    }

    #[derive(Clone, Default)]
    struct Recorder(Arc<Mutex<Seen>>);

    struct Fields<'a>(&'a mut BTreeMap<String, String>);

    impl Visit for Fields<'_> {
        fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
            self.0.insert(field.name().to_owned(), format!("{value:?}"));
        }
        fn record_str(&mut self, field: &Field, value: &str) {
            self.0.insert(field.name().to_owned(), value.to_owned());
        }
    }

    impl Subscriber for Recorder {
        fn enabled(&self, _: &Metadata<'_>) -> bool {
            true
        }
        fn new_span(&self, a: &Attributes<'_>) -> Id {
            let mut s = self.0.lock().unwrap();
            let mut fields = BTreeMap::new();
            a.record(&mut Fields(&mut fields));
            s.spans
                .push((a.metadata().name().to_owned(), fields, true, Vec::new()));
            Id::from_u64(s.spans.len() as u64)
        }
        fn record(&self, id: &Id, r: &Record<'_>) {
            let mut s = self.0.lock().unwrap();
            r.record(&mut Fields(&mut s.spans[id.into_u64() as usize - 1].1));
        }
        fn record_follows_from(&self, _: &Id, _: &Id) {}
        fn event(&self, e: &Event<'_>) {
            let mut s = self.0.lock().unwrap();
            let mut fields = BTreeMap::new();
            e.record(&mut Fields(&mut fields));
            if let Some(&i) = s.current.last() {
                s.spans[i]
                    .3
                    .push(fields.get("error").cloned().unwrap_or_default());
            }
        }
        fn enter(&self, id: &Id) {
            self.0
                .lock()
                .unwrap()
                .current
                .push(id.into_u64() as usize - 1);
        }
        fn exit(&self, _: &Id) {
            self.0.lock().unwrap().current.pop();
        }
        fn try_close(&self, id: Id) -> bool {
            self.0.lock().unwrap().spans[id.into_u64() as usize - 1].2 = false;
            true
        }
    }

    fn event<'a>(
        kind: TraceKind,
        statement: Option<&'a str>,
        error: Option<&'a str>,
    ) -> TraceEvent<'a> {
        TraceEvent {
            kind,
            pool: "orders",
            server: "10.0.0.7:3307",
            connection_id: 4,
            statement,
            duration: Duration::from_millis(2),
            error,
            error_code: if error.is_some() { 1146 } else { 0 },
        }
    }

    #[test]
    fn spans_carry_opentelemetry_database_names_and_close_at_their_end() {
        let rec = Recorder::default();
        let sql = "SELECT * FROM t WHERE secret = 'x'";
        tracing::subscriber::with_default(rec.clone(), || {
            for t in [
                TracingSpans::new(),
                TracingSpans::new().with_statement_text(true),
            ] {
                t.trace(&TraceEvent {
                    server: "",
                    ..event(TraceKind::AcquireStart, None, None)
                });
                t.trace(&event(TraceKind::AcquireEnd, None, None));
                t.trace(&event(TraceKind::StatementStart, Some(sql), None));
                t.trace(&event(
                    TraceKind::StatementEnd,
                    Some(sql),
                    Some("Table 'db.t' doesn't exist"),
                ));
            }
        });
        let seen = rec.0.lock().unwrap();
        assert_eq!(seen.spans.len(), 4);
        for (i, (name, fields, open, errors)) in seen.spans.iter().enumerate() {
            assert!(!open, "span {i} ({name}) was not closed");
            assert_eq!(fields["db.system.name"], "mysql");
            assert_eq!(fields["db.client.connection.pool.name"], "orders");
            assert_eq!(fields["server.address"], "10.0.0.7", "{name}");
            assert_eq!(fields["server.port"], "3307", "{name}");
            if name == "staunch.statement" {
                assert_eq!(fields["error.type"], "1146");
                // The server's message only with the statement's text.
                let message = if i == 1 {
                    "MySQL error 1146"
                } else {
                    "Table 'db.t' doesn't exist"
                };
                assert_eq!(errors, &[message.to_owned()]);
            } else {
                assert_eq!(name, "staunch.acquire");
                assert!(!fields.contains_key("error.type") && errors.is_empty());
            }
        }
        // The statement's text only where asked for.
        assert!(!seen.spans[1].1.contains_key("db.query.text"));
        assert_eq!(seen.spans[3].1["db.query.text"], sql);
    }
}
