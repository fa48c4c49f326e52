//! Errors: one [`Error`] type with a [`kind`](Error::kind) that callers match on.
//! Every kind maps one to one to a status code of the C ABI.

use std::fmt;
use std::sync::Arc;

mod category;
pub use category::ErrorCategory;

/// What went wrong, for callers that branch on it. New kinds may be added.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A configuration value (URL, knob, builder call) is invalid. The message
    /// names the knob.
    Config,
    /// `get` timed out while every connection was busy: the pool is exhausted.
    PoolExhausted,
    /// `get` timed out and no connection could be made: the database is
    /// unreachable. The message carries the last connect error and its cause.
    Unreachable,
    /// A connect failed for a reason retrying will not fix (access denied,
    /// unknown database, a server certificate that fails TLS verification, a
    /// server without TLS when `tls_mode` requires it, ...). `get` reports it
    /// at once instead of waiting.
    ConnectRejected,
    /// One connect attempt failed (refused, reset, timed out). Seen in events
    /// and as the cause inside `Unreachable`.
    Connect,
    /// The server answered a statement with an error.
    Server,
    /// An I/O error on an established connection (reset, EOF, a per-read
    /// socket timeout). The connection is closed when returned.
    Io,
    /// The connection broke during an earlier statement (an error that may
    /// have left part of an answer unread): every later statement on it
    /// fails with this, at once, and it is closed when returned. Drop it and
    /// get another.
    Broken,
    /// A statement ran past its time limit (`query_timeout`, or the guard's
    /// own): ended by the server (the connection stays usable) or, when the
    /// server did not answer at all, cut off by the client (the connection is
    /// then broken). The message names the limit.
    StatementTimeout,
    /// The caller cancelled: a `get` waiting with a cancel token, or a
    /// statement stopped with its connection's cancel handle (`KILL QUERY`;
    /// the connection stays usable).
    Cancelled,
    /// The server stopped answering during a statement: the statement waited
    /// past `liveness_threshold` and a check on a side connection found the
    /// server not answering, restarted or replaced, or no longer running the
    /// statement's connection. The statement's socket was shut down; the
    /// connection is broken and closed when returned. The message says what
    /// was checked and what happened. (A statement the server still runs is
    /// never cut: for a hard limit, set `query_timeout`.)
    ServerUnresponsive,
    /// The server rolled the whole transaction back because it lost a
    /// conflict: a deadlock or, in a Galera cluster, a certification failure
    /// (server error 1213, `ER_LOCK_DEADLOCK`, SQLSTATE 40001). The
    /// connection stays usable; running the transaction again from its
    /// start may succeed (see `Pool::retry_on_conflict`).
    Conflict,
    /// The pool is closed (or was closed while the caller waited).
    Closed,
    /// No server may take writes now: the primary was declared dead and no
    /// new one was found yet, or two hosts claim to be primary (split brain).
    NoWriter,
    /// A caller passed something unusable (an API misuse, not a config knob).
    InvalidArgument,
    /// A bug in staunch: a broken internal invariant. Please report it.
    Internal,
}

impl ErrorKind {
    /// A short lowercase name, stable across versions.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Config => "config",
            ErrorKind::PoolExhausted => "pool exhausted",
            ErrorKind::Unreachable => "database unreachable",
            ErrorKind::ConnectRejected => "connect rejected",
            ErrorKind::Connect => "connect failed",
            ErrorKind::Server => "server error",
            ErrorKind::Io => "i/o error",
            ErrorKind::Broken => "broken connection",
            ErrorKind::StatementTimeout => "statement timed out",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::ServerUnresponsive => "server unresponsive",
            ErrorKind::Conflict => "conflict",
            ErrorKind::Closed => "pool closed",
            ErrorKind::NoWriter => "no writer",
            ErrorKind::InvalidArgument => "invalid argument",
            ErrorKind::Internal => "internal error",
        }
    }
}

/// The error type of every fallible staunch call.
///
/// `Display` gives one complete sentence-like line (with the cause appended,
/// each cause once); [`cause`](Error::cause) gives the underlying error where
/// there is one (`source()` does not, so that error reporters do not print
/// the causes twice). Cheap to clone: the
/// same connect error is shared by every waiter it fails.
#[derive(Clone)]
pub struct Error {
    inner: Arc<Inner>,
}

struct Inner {
    kind: ErrorKind,
    message: String,
    server_code: Option<u16>,
    sql_state: Option<String>,
    source: Option<Error>,
    /// Set by a connector for a connect failure retrying cannot fix that
    /// carries no server error number (e.g. a rejected TLS certificate).
    permanent: bool,
}

impl Error {
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            inner: Arc::new(Inner {
                kind,
                message: message.into(),
                server_code: None,
                sql_state: None,
                source: None,
                permanent: false,
            }),
        }
    }

    /// An error the server sent (its number and SQLSTATE kept), of `kind`.
    pub(crate) fn from_server(
        kind: ErrorKind,
        message: impl Into<String>,
        code: u16,
        sql_state: &str,
    ) -> Error {
        Error {
            inner: Arc::new(Inner {
                kind,
                message: message.into(),
                server_code: Some(code),
                sql_state: Some(sql_state.to_owned()),
                source: None,
                permanent: false,
            }),
        }
    }

    /// An error that retrying will not fix, though the server sent no error
    /// number (see [`Error::is_marked_permanent`]).
    pub(crate) fn permanent(kind: ErrorKind, message: impl Into<String>) -> Error {
        let mut e = Error::new(kind, message);
        Arc::get_mut(&mut e.inner).expect("new error").permanent = true;
        e
    }

    pub(crate) fn with_source(kind: ErrorKind, message: impl Into<String>, source: Error) -> Error {
        Error {
            inner: Arc::new(Inner {
                kind,
                message: message.into(),
                server_code: source.server_code(),
                sql_state: source.sql_state().map(str::to_owned),
                source: Some(source),
                permanent: false,
            }),
        }
    }

    pub(crate) fn config(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Config, message)
    }

    pub(crate) fn closed() -> Error {
        Error::new(ErrorKind::Closed, "the pool is closed")
    }

    /// What kind of error this is.
    pub fn kind(&self) -> ErrorKind {
        self.inner.kind
    }

    /// The message without the chained cause.
    pub fn message(&self) -> &str {
        &self.inner.message
    }

    /// The MySQL/MariaDB error number, when the server sent one (here or in the
    /// cause), e.g. 1045 for access denied.
    pub fn server_code(&self) -> Option<u16> {
        self.inner.server_code
    }

    /// The SQLSTATE the server sent with its error, if any.
    pub fn sql_state(&self) -> Option<&str> {
        self.inner.sql_state.as_deref()
    }

    /// What kind of failure the server's error is, for a face choosing its
    /// exception class (see [`ErrorCategory`]); `None` when the server sent
    /// no error (here or in the cause).
    pub fn category(&self) -> Option<ErrorCategory> {
        let code = self.server_code()?;
        Some(ErrorCategory::of_server(
            code,
            self.sql_state().unwrap_or(""),
        ))
    }

    /// The error this one wraps (e.g. the last connect error of a timeout).
    pub fn cause(&self) -> Option<&Error> {
        self.inner.source.as_ref()
    }

    /// Whether this error or one it wraps was marked as one that retrying
    /// will not fix, without a server error number (a TLS certificate the
    /// client rejected, a server without TLS when TLS is required).
    pub(crate) fn is_marked_permanent(&self) -> bool {
        let mut e = Some(self);
        while let Some(x) = e {
            if x.inner.permanent {
                return true;
            }
            e = x.cause();
        }
        false
    }

    /// A deadlock or, in a Galera cluster, a certification conflict: server
    /// error 1213 (`ER_LOCK_DEADLOCK`, kind [`ErrorKind::Conflict`]). The
    /// server rolled the whole transaction back; running it again from its
    /// start may succeed (see `Pool::retry_on_conflict`).
    pub fn is_conflict(&self) -> bool {
        self.server_code() == Some(1213)
    }

    /// Whether this error or one it wraps carries one of these server error
    /// numbers.
    pub fn has_server_code(&self, codes: &[u16]) -> bool {
        let mut e = Some(self);
        while let Some(x) = e {
            if x.server_code().is_some_and(|c| codes.contains(&c)) {
                return true;
            }
            e = x.cause();
        }
        false
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.inner.message)?;
        if let Some(s) = &self.inner.source {
            write!(f, ": {s}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Error");
        d.field("kind", &self.inner.kind)
            .field("message", &self.inner.message);
        if let Some(c) = self.inner.server_code {
            d.field("server_code", &c);
        }
        if let Some(s) = &self.inner.source {
            d.field("cause", s);
        }
        d.finish()
    }
}

/// `source()` is `None`: `Display` already says the whole chain, each cause
/// once, so a reporter that walks `source()` (anyhow's `{:#}` and `{:?}`,
/// eyre) would say every cause again. [`Error::cause`] gives the wrapped
/// error.
impl std::error::Error for Error {}

/// `Result` with staunch's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
