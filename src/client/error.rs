//! How the `mysql` crate's errors become staunch's, and the two errors of
//! staunch's own that travel inside `mysql::Error` (through `Queryable`,
//! whose methods must return the crate's error type).

use std::fmt;
use std::io;
use std::time::Duration;

use mysql::mysql_common::proto::codec::error::PacketCodecError;

use crate::duration::fmt_duration;
use crate::error::{Error, ErrorKind};

/// MariaDB's ER_STATEMENT_TIMEOUT: `max_statement_time` exceeded.
pub(crate) const ER_STATEMENT_TIMEOUT: u16 = 1969;
/// MySQL's ER_QUERY_TIMEOUT: `max_execution_time` exceeded.
pub(crate) const ER_QUERY_TIMEOUT: u16 = 3024;
/// ER_QUERY_INTERRUPTED: `KILL QUERY` (staunch's cancel, or anyone's).
pub(crate) const ER_QUERY_INTERRUPTED: u16 = 1317;
/// ER_LOCK_DEADLOCK: a deadlock, or a Galera certification failure; the
/// server rolled the transaction back.
pub(crate) const ER_LOCK_DEADLOCK: u16 = 1213;
/// ER_UNKNOWN_COM_ERROR: what a Galera node answers every statement while it
/// is outside the Primary component, not yet ready, or rejecting queries
/// (`WSREP has not yet prepared node for application use`, SQLSTATE 08S01).
pub(crate) const ER_UNKNOWN_COM_ERROR: u16 = 1047;
/// ER_SERVER_SHUTDOWN: the server is shutting down.
pub(crate) const ER_SERVER_SHUTDOWN: u16 = 1053;

/// Whether a failed statement says that its *server* cannot serve
/// statements now (rather than that this statement was wrong): Galera's
/// 1047 `WSREP has not yet prepared node for application use` (a node
/// outside the Primary component, not ready, or with `wsrep_reject_queries`;
/// MaxScale's readwritesplit takes the same code, SQLSTATE and words as its
/// "WSREP error", ProxySQL 1047 with any words) and 1053 `Server shutdown in
/// progress` (ProxySQL treats both alike: the connection is destroyed and the
/// server marked as failing). Returns what the server said. A plain 1047
/// (`Unknown command`: a command the server does not know) is no such sign.
pub(crate) fn not_ready(e: &mysql::Error) -> Option<String> {
    let mysql::Error::MySqlError(me) = e else {
        return None;
    };
    let wsrep = me.code == ER_UNKNOWN_COM_ERROR && me.message.contains("WSREP");
    (wsrep || me.code == ER_SERVER_SHUTDOWN)
        .then(|| format!("server error {}: {}", me.code, me.message))
}

/// An error of staunch's own, carried in a `mysql::Error::IoError` so that
/// `Queryable` methods can return it; [`Error::from_mysql`] gives it back its
/// kind.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// The connection broke during an earlier statement (why).
    Broken(String),
    /// The statement got no answer within its bound, and its socket was shut
    /// down (the statement time limit and the grace after it).
    Cut { limit: Duration, grace: Duration },
    /// The statement waited past the liveness threshold and the check found
    /// its server gone (what was checked, what happened); its socket was
    /// shut down.
    Unresponsive(String),
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Broken(why) => write!(
                f,
                "this connection broke during an earlier statement ({why}); drop it and get another"
            ),
            Refusal::Cut { limit, grace } => write!(
                f,
                "the statement got no answer within its time limit of {} (plus {} of grace): \
                 the server did not end it, so the connection was cut off (it is broken now)",
                fmt_duration(*limit),
                fmt_duration(*grace)
            ),
            Refusal::Unresponsive(what) => write!(
                f,
                "the server stopped answering during this statement: {what}; \
                 the connection was cut off (it is broken now)"
            ),
        }
    }
}

impl std::error::Error for Refusal {}

impl Refusal {
    pub(crate) fn into_mysql(self) -> mysql::Error {
        let kind = match self {
            Refusal::Broken(_) => io::ErrorKind::NotConnected,
            Refusal::Cut { .. } | Refusal::Unresponsive(_) => io::ErrorKind::TimedOut,
        };
        mysql::Error::IoError(io::Error::new(kind, self))
    }

    /// The refusal inside `e`, if it carries one.
    pub(crate) fn of(e: &mysql::Error) -> Option<&Refusal> {
        match e {
            mysql::Error::IoError(io) => io.get_ref()?.downcast_ref::<Refusal>(),
            _ => None,
        }
    }
}

impl Error {
    /// Wraps an error of the `mysql` crate. `context` says what was being
    /// done. A statement time limit the server enforced is `StatementTimeout`,
    /// a `KILL QUERY` is `Cancelled`, a deadlock or certification failure
    /// (1213) is `Conflict`, staunch's own refusals keep their kind
    /// (`Broken`, `StatementTimeout`, `ServerUnresponsive`), other server errors are `Server`, the
    /// rest `Io`.
    pub fn from_mysql(context: &str, e: &mysql::Error) -> Error {
        match e {
            mysql::Error::MySqlError(me) => {
                let (kind, what) = match me.code {
                    ER_STATEMENT_TIMEOUT | ER_QUERY_TIMEOUT => (
                        ErrorKind::StatementTimeout,
                        "the statement ran past its time limit and the server ended it \
                         (the connection is still usable): ",
                    ),
                    ER_QUERY_INTERRUPTED => (
                        ErrorKind::Cancelled,
                        "the statement was cancelled (KILL QUERY; the connection is still usable): ",
                    ),
                    ER_LOCK_DEADLOCK => (
                        ErrorKind::Conflict,
                        "the transaction lost a conflict and the server rolled it back \
                         (run it again from its start; the connection is still usable): ",
                    ),
                    _ => (ErrorKind::Server, ""),
                };
                Error::from_server(
                    kind,
                    format!(
                        "{context}: {what}server error {} ({}): {}",
                        me.code, me.state, me.message
                    ),
                    me.code,
                    &me.state,
                )
            }
            mysql::Error::IoError(io) => {
                if let Some(r) = Refusal::of(e) {
                    let kind = match r {
                        Refusal::Broken(_) => ErrorKind::Broken,
                        Refusal::Cut { .. } => ErrorKind::StatementTimeout,
                        Refusal::Unresponsive(_) => ErrorKind::ServerUnresponsive,
                    };
                    return Error::new(kind, format!("{context}: {r}"));
                }
                let what = match io.kind() {
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
                        "timed out waiting for the server".to_string()
                    }
                    _ => io.to_string(),
                };
                Error::new(ErrorKind::Io, format!("{context}: {what}"))
            }
            mysql::Error::CodecError(PacketCodecError::PacketTooLarge) => Error::new(
                ErrorKind::Io,
                format!(
                    "{context}: the server sent a packet larger than the client takes \
                     (max_allowed_packet, the server's value when the connection was made)"
                ),
            ),
            other => Error::new(ErrorKind::Io, format!("{context}: {other}")),
        }
    }
}
