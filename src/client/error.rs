//! How the protocol layer's errors become staunch's, and the errors of
//! staunch's own that travel inside a `WireError` through a statement's
//! life (`PooledConn::run` and the answer readers).

use std::fmt;
use std::io;
use std::time::Duration;

use crate::duration::fmt_duration;
use crate::error::{Error, ErrorKind};
use crate::wire::{ServerError, WireError};

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

/// ER_ERROR_DURING_COMMIT: `Got error %M during COMMIT`, the server's word
/// for any commit that failed below SQL; Galera uses it for a commit whose
/// write set could not be replicated (see [`cannot_serve`]).
pub(crate) const ER_ERROR_DURING_COMMIT: u16 = 1180;

/// Whether a failed statement says that its *server* cannot serve
/// statements now (rather than that this statement was wrong); see
/// [`cannot_serve`] for the rule. Returns what the server said.
pub(crate) fn not_ready(e: &WireError) -> Option<String> {
    let WireError::Server(me) = e else {
        return None;
    };
    cannot_serve(me.code, &me.message).then(|| format!("server error {}: {}", me.code, me.message))
}

/// The wsrep provider statuses a failed commit can carry that mean the node
/// itself cannot commit now (wsrep-lib's `provider::status`, its number and
/// its `to_string`): 6 `error_connection_failed` ("connectivity to cluster
/// lost": the node left the Primary component while the commit was in
/// flight), 7 `error_provider_failed` (the provider must be reinitialized),
/// 8 `error_fatal` (the server must abort). The others (certification
/// failed, BF abort, size exceeded, ...) are about the transaction, and the
/// first two reach the client as 1213 anyway.
const WSREP_NODE_STATUSES: [(u8, &str); 3] = [
    (6, "Not connected to Primary Component"),
    (7, "Provider in bad state, needs to be reinitialized"),
    (8, "Fatal error, must abort"),
];

/// The rule: whether a server error (code, words) says that the server
/// cannot serve statements now.
///
/// - 1047 `WSREP has not yet prepared node for application use` (a Galera
///   node outside the Primary component, not ready, or with
///   `wsrep_reject_queries`; MaxScale's readwritesplit takes the same code,
///   SQLSTATE and words as its "WSREP error", ProxySQL 1047 with any words).
///   A plain 1047 (`Unknown command`: a command the server does not know) is
///   no such sign.
/// - 1053 `Server shutdown in progress` (ProxySQL treats 1047 and 1053
///   alike: the connection is destroyed and the server marked as failing).
/// - 1180 when it carries one of [`WSREP_NODE_STATUSES`]: a commit in
///   flight when its node left the Primary component gets 1180, not 1047
///   (the 1047 check runs when a statement starts). MariaDB's wsrep code
///   (`wsrep_override_error` for `e_error_during_commit`) words it as the
///   provider status's text, `Error while appending streaming replication
///   fragment(provider status: Not connected to Primary Component)` on
///   10.11 (seen on the test kit's cluster, `tests/galera.rs`), or as its
///   number through `%M`, `Got error 6 "No such device or address" during
///   COMMIT` on earlier 10.4-10.6 builds (the errno text is meaningless
///   there). Any other 1180 (an engine's or the binary log's commit failure,
///   e.g. `Got error 1 ...`, or 28 for a full disk) is about that commit, not
///   the node, and stays a plain server error. Neither ProxySQL nor MaxScale
///   nor Connector/J looks at 1180: with them the in-flight commits fail and
///   the node is found out only by its next 1047 or the monitor.
pub(crate) fn cannot_serve(code: u16, message: &str) -> bool {
    match code {
        ER_UNKNOWN_COM_ERROR => message.contains("WSREP"),
        ER_SERVER_SHUTDOWN => true,
        ER_ERROR_DURING_COMMIT => WSREP_NODE_STATUSES.iter().any(|(n, words)| {
            message.contains(words)
                || message
                    .strip_prefix("Got error ")
                    .and_then(|rest| rest.strip_prefix(&*n.to_string()))
                    .is_some_and(|rest| rest.starts_with(' ') && message.ends_with("during COMMIT"))
        }),
        _ => false,
    }
}

/// An error of staunch's own, carried in a `WireError::Io` through a
/// statement's life; [`Error::from_wire`] gives it back its kind.
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
    pub(crate) fn into_wire(self) -> WireError {
        let kind = match self {
            Refusal::Broken(_) => io::ErrorKind::NotConnected,
            Refusal::Cut { .. } | Refusal::Unresponsive(_) => io::ErrorKind::TimedOut,
        };
        WireError::Io(io::Error::new(kind, self))
    }

    /// The refusal inside `e`, if it carries one.
    pub(crate) fn of(e: &WireError) -> Option<&Refusal> {
        match e {
            WireError::Io(io) => io.get_ref()?.downcast_ref::<Refusal>(),
            _ => None,
        }
    }
}

impl Error {
    /// Wraps an error of staunch's protocol layer. `context` says what was
    /// being done. A statement time limit the server enforced is
    /// `StatementTimeout`, a `KILL QUERY` is `Cancelled`, a deadlock or
    /// certification failure (1213) is `Conflict`, staunch's own refusals
    /// keep their kind (`Broken`, `StatementTimeout`,
    /// `ServerUnresponsive`), other server errors are `Server`, the rest
    /// `Io`.
    pub(crate) fn from_wire(context: &str, e: &WireError) -> Error {
        if let Some(r) = Refusal::of(e) {
            let kind = match r {
                Refusal::Broken(_) => ErrorKind::Broken,
                Refusal::Cut { .. } => ErrorKind::StatementTimeout,
                Refusal::Unresponsive(_) => ErrorKind::ServerUnresponsive,
            };
            return Error::new(kind, format!("{context}: {r}"));
        }
        match e {
            WireError::Server(se) => Error::from_server_error(context, se),
            WireError::LocalInfileRefused => {
                Error::from_server(ErrorKind::Server, format!("{context}: {e}"), 2068, "HY000")
            }
            WireError::Io(io) => {
                let what = match io.kind() {
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
                        "timed out waiting for the server".to_string()
                    }
                    _ => io.to_string(),
                };
                Error::new(ErrorKind::Io, format!("{context}: {what}"))
            }
            WireError::PacketTooLarge { .. } => Error::new(
                ErrorKind::Io,
                format!(
                    "{context}: the server sent a packet larger than the client takes \
                     (max_allowed_packet, the server's value when the connection was made)"
                ),
            ),
            WireError::Refused(_) => {
                Error::new(ErrorKind::InvalidArgument, format!("{context}: {e}"))
            }
            other => Error::new(ErrorKind::Io, format!("{context}: {other}")),
        }
    }

    /// A server's ERR packet, with the kind its code gives (see
    /// [`Error::from_wire`]).
    pub(crate) fn from_server_error(context: &str, se: &ServerError) -> Error {
        let (kind, what) = server_kind(se.code);
        let state = String::from_utf8_lossy(&se.state);
        Error::from_server(
            kind,
            format!(
                "{context}: {what}server error {} ({state}): {}",
                se.code, se.message
            ),
            se.code,
            &state,
        )
    }
}

/// The kind of a server error's code, and the words that explain it.
fn server_kind(code: u16) -> (ErrorKind, &'static str) {
    match code {
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The "cannot serve now" rule over server answers: the ones seen from
    /// real servers, the anchors' cases, and their look-alikes.
    #[test]
    fn cannot_serve_table() {
        let table: &[(u16, &str, bool)] = &[
            // Galera's 1047 (MariaDB 10.11; MaxScale's "WSREP error").
            (
                1047,
                "WSREP has not yet prepared node for application use",
                true,
            ),
            // A plain 1047: a command the server does not know.
            (1047, "Unknown command", false),
            (1053, "Server shutdown in progress", true),
            // A commit in flight when its node left the Primary component,
            // as MariaDB 10.11 words it (seen in tests/galera.rs).
            (
                1180,
                "Error while appending streaming replication fragment(provider status: \
                 Not connected to Primary Component)",
                true,
            ),
            // The same on 10.4-10.6 builds (status 6 through %M).
            (
                1180,
                "Got error 6 \"No such device or address\" during COMMIT",
                true,
            ),
            (
                1180,
                "Error while appending streaming replication fragment(provider status: \
                 Provider in bad state, needs to be reinitialized.)",
                true,
            ),
            (
                1180,
                "Got error 8 \"Exec format error\" during COMMIT",
                true,
            ),
            // Other commit failures are about the transaction.
            (
                1180,
                "Got error 1 \"Operation not permitted\" during COMMIT",
                false,
            ),
            (
                1180,
                "Got error 28 \"No space left on device\" during COMMIT",
                false,
            ),
            (1180, "Got error 60 during COMMIT", false),
            (
                1180,
                "Got error 4 \"Interrupted system call\" during COMMIT",
                false,
            ),
            (
                1180,
                "Error while appending streaming replication fragment(provider status: \
                 Transaction size exceeded)",
                false,
            ),
            (1180, "Got error 6", false),
            // A certification failure is a conflict, not a node fault.
            (
                1213,
                "Deadlock found when trying to get lock; try restarting transaction",
                false,
            ),
            (
                1290,
                "The MariaDB server is running with the --read-only option",
                false,
            ),
            (1146, "Table 'staunch_test.x' doesn't exist", false),
        ];
        for &(code, words, want) in table {
            assert_eq!(cannot_serve(code, words), want, "{code} {words:?}");
        }
    }
}
