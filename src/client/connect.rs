//! Opening a connection: the socket staunch connects itself, the greeting,
//! TLS and the login, all under the one `connect_timeout`, with the
//! watchdog holding a duplicate of the very socket it cuts (incident A: a
//! greeting that never comes is cut at the deadline, whatever the
//! connecting thread is blocked in).
//!
//! What is read from the configuration once per pool (the TLS settings,
//! the server's public key, the connection attributes) is [`Prepared`];
//! each connection is one [`open`].

use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicU8, Ordering::Relaxed};
use std::sync::Arc;

use super::config::ConnectConfig;
use super::TlsMode;
use crate::duration::fmt_duration;
use crate::error::{Error, ErrorKind, Result};
use crate::pool::ConnectAttempt;
use crate::sys;
use crate::wire::{caps, Framer, Greeting, Login, Socket, Stream, Target, Tls, WireError};

/// A session's packet layer on the socket staunch connected.
pub(crate) type Wire = Framer<Stream<Socket>>;

/// The most a server may send in one packet until the session is set up
/// (the greeting and the authentication exchange are small; a hostile or
/// confused peer's 16 MiB "packet" is refused before it is buffered).
pub(crate) const HANDSHAKE_MAX_PACKET: usize = crate::wire::HANDSHAKE_MAX_PACKET;

/// The `_client_name` connection attribute: a DBA reading
/// `performance_schema.session_connect_attrs` sees which library holds the
/// connection.
pub(crate) const CLIENT_NAME: &str = "staunch";

/// What every connection of a pool is opened with, read from its
/// configuration once: files are read and TLS is configured when the
/// first connection is made, and a bad file is an error then, not on
/// every attempt.
pub(crate) struct Prepared {
    tls: Option<Tls>,
    server_public_key: Option<Vec<u8>>,
    attrs: Vec<(String, String)>,
}

impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared")
            .field("tls", &self.tls.is_some())
            .field(
                "server_public_key",
                &self.server_public_key.as_ref().map(Vec::len),
            )
            .field("attrs", &self.attrs)
            .finish()
    }
}

impl Prepared {
    /// Reads what `cfg` names. Errors are permanent: no retry reads a
    /// file differently.
    pub(crate) fn new(cfg: &ConnectConfig) -> Result<Prepared> {
        let permanent = |e: Error| Error::permanent(ErrorKind::Connect, e.message().to_string());
        Ok(Prepared {
            tls: cfg.tls().map_err(permanent)?,
            server_public_key: cfg.server_public_key_pem().map_err(permanent)?,
            attrs: connect_attrs(cfg),
        })
    }
}

/// The attributes sent with every connection: the client's own
/// (`_client_name`, `_client_version`, `_os`, `_platform`, `_pid`, as
/// libmysqlclient sends them), then `program_name`, `staunch_version` and
/// the user's (`ConnectConfig::sent_connect_attrs`).
fn connect_attrs(cfg: &ConnectConfig) -> Vec<(String, String)> {
    let mut v = vec![
        ("_client_name".to_string(), CLIENT_NAME.to_string()),
        (
            "_client_version".to_string(),
            env!("STAUNCH_LIBRARY_VERSION").to_string(),
        ),
        ("_os".to_string(), std::env::consts::OS.to_string()),
        ("_platform".to_string(), std::env::consts::ARCH.to_string()),
        ("_pid".to_string(), std::process::id().to_string()),
    ];
    v.extend(cfg.sent_connect_attrs());
    v
}

/// A connection just opened: logged in, nothing run yet.
pub(crate) struct Opened {
    pub wire: Wire,
    pub greeting: Greeting,
    pub watch: Watch,
}

/// How far a connect got, for the watchdog's report.
#[derive(Debug)]
pub(crate) struct Watch(Arc<AtomicU8>);

impl Watch {
    /// The login is done and the session's set-up statements start: a
    /// watchdog's cut from now on is reported as such.
    pub(crate) fn setting_up(&self) {
        self.0.store(SETTING_UP, Relaxed);
    }
}

const HANDSHAKE: u8 = 0;
const SETTING_UP: u8 = 1;

/// Opens a connection to what `cfg` names, within `attempt`'s deadline:
/// the socket (TCP or unix), the greeting, TLS as `tls_mode` says, the
/// login. The watchdog cuts a stalled one by shutting down a duplicate of
/// its socket. Every error is a sentence naming the endpoint, the phase
/// and what went wrong; those no retry can fix (TLS refused, a plugin
/// staunch does not speak) are permanent.
pub(crate) fn open(cfg: &ConnectConfig, p: &Prepared, attempt: &ConnectAttempt) -> Result<Opened> {
    let ep = cfg.endpoint();
    let (socket, peer) = match &cfg.socket {
        Some(path) => (connect_unix(cfg, Path::new(path), attempt)?, ep.clone()),
        None => {
            let addr = resolve(cfg)?;
            (connect_tcp(cfg, addr, attempt)?, addr.to_string())
        }
    };
    let unix = socket.is_unix();
    let phase = Arc::new(AtomicU8::new(HANDSHAKE));
    match socket.try_clone() {
        Ok(dup) => {
            let phase = phase.clone();
            attempt.set_canceller(move || {
                let what = match (phase.load(Relaxed), sys::tcp_bytes_received(dup.as_raw_fd())) {
                    (SETTING_UP, _) => format!("{peer} stopped answering during session set-up"),
                    (_, Some(0)) => {
                        format!("TCP connected to {peer}, but no greeting came from the server")
                    }
                    (_, Some(n)) => format!(
                        "{peer} sent only {n} bytes of the handshake (greeting or authentication incomplete)"
                    ),
                    (_, None) => format!("connected to {peer}, handshake not completed"),
                };
                dup.shutdown();
                Some(what)
            });
        }
        // No descriptor for the duplicate: the socket's own time limits
        // (the connect's remaining time) still end a stalled handshake.
        Err(e) => log::debug!(target: "staunch", "no duplicate socket for the watchdog: {e}"),
    }
    let attrs: Vec<(&str, &str)> = p
        .attrs
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let login = Login {
        user: cfg.user.as_deref().unwrap_or(""),
        password: cfg.password.as_deref().unwrap_or(""),
        database: cfg.database.as_deref(),
        // Several statements in one text (`init_sql`, a user's script), as
        // the `mysql` crate and libmysqlclient's users have them.
        extra_caps: caps::MULTI_STATEMENTS | if cfg.found_rows { caps::FOUND_ROWS } else { 0 },
        unix_socket: unix,
        server_public_key: p.server_public_key.as_deref(),
        get_server_public_key: cfg.get_server_public_key,
        allow_cleartext: cfg.allow_cleartext_password,
        connect_attrs: &attrs,
        tls_optional: cfg.tls_mode == TlsMode::Preferred,
    };
    // Over a unix socket, `preferred` means plaintext (what MySQL's client
    // does): no one is between the two ends.
    let tls = if unix { None } else { p.tls.as_ref() };
    match Framer::connect(socket, &login, tls) {
        Ok((mut wire, greeting)) => {
            wire.set_max_packet(HANDSHAKE_MAX_PACKET);
            Ok(Opened {
                wire,
                greeting,
                watch: Watch(phase),
            })
        }
        Err(e) => Err(failure(cfg, attempt, &e, "handshake")),
    }
}

/// Resolves the host (blocking, as every client library does: the
/// resolver has its own time limits).
fn resolve(cfg: &ConnectConfig) -> Result<SocketAddr> {
    let ep = cfg.endpoint();
    (cfg.host.as_str(), cfg.port)
        .to_socket_addrs()
        .map_err(|e| Error::new(ErrorKind::Connect, format!("cannot resolve {ep}: {e}")))?
        .next()
        .ok_or_else(|| Error::new(ErrorKind::Connect, format!("{ep} resolves to no address")))
}

fn connect_tcp(cfg: &ConnectConfig, addr: SocketAddr, attempt: &ConnectAttempt) -> Result<Socket> {
    let ep = cfg.endpoint();
    Socket::connect(Target::Tcp(addr), attempt.remaining()).map_err(|e| {
        let after = fmt_duration(attempt.started().elapsed());
        match e.kind() {
            io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock | io::ErrorKind::InvalidInput => {
                Error::new(
                    ErrorKind::Connect,
                    format!("TCP connect to {ep} timed out after {after}: no answer to SYN"),
                )
            }
            _ => Error::new(
                ErrorKind::Connect,
                format!("TCP connect to {ep} failed: {}", super::os_error(&e)),
            ),
        }
    })
}

fn connect_unix(cfg: &ConnectConfig, path: &Path, attempt: &ConnectAttempt) -> Result<Socket> {
    Socket::connect(Target::Unix(path), attempt.remaining()).map_err(|e| {
        Error::new(
            ErrorKind::Connect,
            format!(
                "connect to {} (unix socket) failed: {}",
                cfg.endpoint(),
                super::os_error(&e)
            ),
        )
    })
}

/// Words for a connect that failed in `phase` ("handshake", "session
/// set-up"): which phase, where, after how long, and why.
pub(crate) fn failure(
    cfg: &ConnectConfig,
    attempt: &ConnectAttempt,
    e: &WireError,
    phase: &str,
) -> Error {
    let ep = cfg.endpoint();
    let after = fmt_duration(attempt.started().elapsed());
    if let Some(found) = attempt.cancelled() {
        return Error::new(
            ErrorKind::Connect,
            format!(
                "connect to {ep} timed out after {after} (connect_timeout={}): {found}",
                fmt_duration(
                    attempt
                        .deadline()
                        .saturating_duration_since(attempt.started())
                )
            ),
        );
    }
    match e {
        WireError::Tls(what) => Error::permanent(
            ErrorKind::Connect,
            format!(
                "TLS connect to {ep} failed (tls_mode={}): {}{what}",
                cfg.tls_mode,
                // The words every face's callers match on for a refused
                // certificate (as the `mysql` crate's rustls error said).
                if what.starts_with("the server's certificate") {
                    "certificate verification failed: "
                } else {
                    ""
                }
            ),
        ),
        // A plugin staunch does not speak, or a password it will not
        // send: no retry can change that, so the caller hears it at once,
        // by name (conformance `conf_auth_plugins`), not "unreachable" at
        // the acquire timeout.
        WireError::AuthRefused(what) => Error::permanent(
            ErrorKind::Connect,
            format!(
                "connect to {ep} failed for user {:?}: {what}",
                cfg.user.as_deref().unwrap_or("")
            ),
        ),
        WireError::Server(se) => Error::with_source(
            ErrorKind::Connect,
            format!("connect to {ep} failed"),
            Error::from_server_error(&format!("{ep} answered"), se),
        ),
        WireError::Io(io) if super::hung_up(io) => {
            let how = if io.kind() == io::ErrorKind::ConnectionReset {
                "the connection was reset"
            } else {
                "the server closed the connection"
            };
            let io = io.to_string();
            let detail = if io == how {
                String::new()
            } else {
                format!(" ({io})")
            };
            Error::new(
                ErrorKind::Connect,
                format!("connect to {ep} failed: {how} during the {phase} after {after}{detail}"),
            )
        }
        WireError::Io(io) if matches!(io.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {
            Error::new(
                ErrorKind::Connect,
                format!("connect to {ep} timed out after {after} during the {phase}: a socket read got no data"),
            )
        }
        WireError::Io(io) => Error::new(
            ErrorKind::Connect,
            format!(
                "connect to {ep} failed during the {phase} after {after}: {}",
                super::os_error(io)
            ),
        ),
        WireError::PacketTooLarge { .. } => Error::new(
            ErrorKind::Connect,
            format!(
                "connect to {ep} failed during the {phase} after {after}: the server sent a packet larger than the client accepts (max_allowed_packet; {} MiB until the handshake is done)",
                HANDSHAKE_MAX_PACKET >> 20
            ),
        ),
        other => Error::new(
            ErrorKind::Connect,
            format!("connect to {ep} failed during the {phase} after {after}: {other}"),
        ),
    }
}
