//! The MySQL/MariaDB client side, over the `mysql` crate: [`MysqlConnector`]
//! (bounded connects, validation, the return path) and [`PooledConn`] (what a
//! borrower runs; see `conn.rs`).
//!
//! # Bounding a whole connect
//! `mysql::Conn::new` creates its socket inside and returns only when the
//! handshake is done, so the pool cannot see the socket while it connects.
//! staunch therefore chooses the connection's local port itself (asks the
//! kernel for a free one, then passes it as `bind_address`). At the deadline,
//! the watchdog finds that socket from outside the stuck thread: the row of
//! `/proc/net/tcp{,6}` with that local port and the server's address gives the
//! socket's inode, and `/proc/self/fd` gives the fd holding it. The watchdog
//! dups that fd (so the number cannot be recycled under it), checks the inode
//! again, reads how far the connect got (TCP state, bytes received), and shuts
//! the socket down, which makes the stuck read return at once.
//!
//! Per-read socket timeouts (`connect_timeout` plus a margin) stay as a second
//! bound, and the TCP connect itself is bounded by `tcp_connect_timeout`. A
//! server that drips one byte at a time defeats per-read timeouts, not this.
//!
//! Unix-socket connections have no port to find: they are bounded by the
//! per-read timeout and, past the deadline, abandoned (the pool starts another
//! adder and discards the late result).
//!
//! # Addresses
//! staunch connects to exactly the address it is given: `prefer_socket` is off
//! (the `mysql` crate's default silently reconnects a loopback TCP connection
//! through the server's unix socket, bypassing any proxy or VIP).
//!
//! # TLS
//! `tls_mode` maps onto the `mysql` crate's rustls `SslOpts`: `required` and
//! `preferred` accept any certificate, `verify_ca` checks the chain only,
//! `verify_identity` checks the chain and the name. The crate takes the name
//! to check from the address it connects to, so with `verify_identity` it is
//! given the URL's host name (and resolves it itself, to the same address
//! family as the local port chosen here); otherwise the address resolved here.
//! The TLS handshake runs on the same socket, so the watchdog cuts it off at
//! the deadline like any other stage. `preferred` falls back to plaintext only
//! when the server's greeting lacks `CLIENT_SSL` (the crate's
//! `TlsNotSupported`), by connecting again within the same deadline. A
//! certificate the client rejects, a TLS alert from the server about
//! certificates, or a server without TLS when TLS is required are permanent
//! errors: retrying cannot fix them.
//!
//! # Statement liveness
//! See `liveness.rs` (the check) and the pool's `liveness.rs` (when it runs,
//! and how a statement is cut off).
//!
//! # The return path and statements
//! See `session.rs` (what the server reports after each statement, so a
//! read-only borrow is returned without a round trip) and `conn.rs` (the
//! life of a statement on a borrowed connection: broken sessions refused,
//! time limits, cancellation).

pub(crate) mod answer;
mod cancel;
mod config;
mod conn;
pub(crate) mod connect;
mod error;
pub(crate) mod link;
mod liveness;
mod session;
pub(crate) mod sql;
mod statement;
mod txn;
pub(crate) mod value;

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, ToSocketAddrs};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU8, Ordering::Relaxed};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use mysql::consts::CapabilityFlags;
use mysql::mysql_common::proto::codec::error::PacketCodecError;
use mysql::prelude::Queryable;
use mysql::{ClientIdentity, Conn, OptsBuilder, SslOpts};

pub use self::cancel::CancelHandle;
pub(crate) use self::config::parse_connect_attrs;
pub use self::config::{ConnectConfig, TlsMode, DEFAULT_LIVENESS_THRESHOLD};
pub use self::conn::PooledConn;
pub(crate) use self::conn::{reports_partly, WireRow, WireStart};
pub use self::session::Session;
pub use self::sql::{Lexing, Scan};
pub use self::statement::Way;
pub(crate) use self::statement::{Plan, ReadAnswer, StatementError};
pub use self::txn::Transaction;
pub use self::value::{Decimal, DecimalError, Param};
use crate::duration::fmt_duration;
use crate::error::{Error, ErrorKind, Result};
use crate::pool::{ConnectAttempt, Connector, Recycled};
use crate::sys;

/// How long after a statement's time limit the pool's watchdog waits for
/// the server's own answer (its time-limit error, normally) before it cuts
/// the connection off.
pub(crate) const STATEMENT_GRACE: Duration = Duration::from_secs(1);

/// The per-read socket timeout while a connection is borrowed: a second
/// line behind the watchdog (which cuts at limit + grace), so none without a
/// limit.
fn per_read_bound(limit: Option<Duration>) -> Option<Duration> {
    limit.map(|l| l + STATEMENT_GRACE + Duration::from_secs(1))
}

/// TCP keepalive on every connection (the first line for a dead peer or a
/// path that went dead; a frozen server's kernel still answers it, which is
/// what the liveness check is for): first probe after 15 s idle, then every
/// 5 s, 3 unanswered probes end it; `TCP_USER_TIMEOUT` 30 s.
const KEEPALIVE_IDLE: Duration = Duration::from_secs(15);
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(5);
const KEEPALIVE_COUNT: u32 = 3;
const TCP_USER_TIMEOUT: Duration = Duration::from_secs(30);

/// Server errors that retrying will not fix.
const PERMANENT_CODES: &[u16] = &[
    1044, // ER_DBACCESS_DENIED_ERROR
    1045, // ER_ACCESS_DENIED_ERROR
    1049, // ER_BAD_DB_ERROR
    1130, // ER_HOST_NOT_PRIVILEGED
    1251, // ER_NOT_SUPPORTED_AUTH_MODE
    1698, // ER_ACCESS_DENIED_NO_PASSWORD_ERROR
];

/// Makes `mysql::Conn`s for a pool. See the module docs for the guarantees.
#[derive(Debug, Clone)]
pub struct MysqlConnector {
    cfg: ConnectConfig,
    validation_timeout: Duration,
    /// Bounds a cancel's side connection (the pool's `connect_timeout`).
    connect_timeout: Duration,
    /// Told when a statement shows the server cannot serve now.
    alarm: Option<NodeAlarm>,
    /// The connector of a cancel's side connection ([`Self::side_connector`]),
    /// made once rather than on every checkout: building it clones the whole
    /// `ConnectConfig` (host, user, password, database... one allocation
    /// each), which every borrow's `CancelHandle` needs but almost none uses.
    /// Reset by every method that changes what it is derived from.
    side: OnceLock<Arc<MysqlConnector>>,
    /// The pool's tracer, with this connector's server, if one is set.
    traced: Option<crate::trace::Traced>,
}

/// What a topology wants to hear when a statement on one of a connector's
/// connections shows that its server cannot serve statements now
/// ([`error::not_ready`]: Galera's 1047, or 1180 for a commit in flight when
/// its node left the Primary component; a shutdown). Called on the
/// borrower's thread, with no lock held, with what the server said; it must
/// only flag and wake (no I/O, no waiting).
#[derive(Clone)]
pub(crate) struct NodeAlarm(pub(crate) Arc<dyn Fn(&str) + Send + Sync>);

impl std::fmt::Debug for NodeAlarm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NodeAlarm")
    }
}

/// How far a TCP connect got, for the watchdog's report: the handshake
/// (greeting, TLS, authentication), then staunch's own session set-up.
const PHASE_TCP: u8 = 0;
const PHASE_INIT: u8 = 1;

impl MysqlConnector {
    /// A connector for `cfg`. Each connect is bounded by the deadline of the
    /// attempt the pool passes in; the work done on return by
    /// `validation_timeout`.
    pub fn new(cfg: ConnectConfig, validation_timeout: Duration) -> MysqlConnector {
        MysqlConnector {
            cfg,
            validation_timeout,
            connect_timeout: crate::PoolConfig::default().connect_timeout,
            alarm: None,
            side: OnceLock::new(),
            traced: None,
        }
    }

    /// Tells `traced` about the statements on this connector's connections
    /// (its `server` is set to this connector's endpoint).
    pub(crate) fn with_tracer(mut self, mut traced: crate::trace::Traced) -> MysqlConnector {
        traced.server = self.cfg.endpoint().into();
        self.traced = Some(traced);
        self.side = OnceLock::new();
        self
    }

    /// The pool's tracer, if any.
    pub(crate) fn traced(&self) -> Option<&crate::trace::Traced> {
        self.traced.as_ref()
    }

    /// Calls `alarm` whenever a statement on one of this connector's
    /// connections shows that the server cannot serve now (see
    /// [`NodeAlarm`]); the connection is closed on return either way.
    pub(crate) fn with_alarm(mut self, alarm: NodeAlarm) -> MysqlConnector {
        self.alarm = Some(alarm);
        self.side = OnceLock::new();
        self
    }

    /// Raises the alarm, if any (see [`NodeAlarm`]).
    pub(crate) fn not_ready(&self, what: &str) {
        log::warn!(target: "staunch", "{} cannot serve statements now ({what}): that connection will be closed", self.cfg.endpoint());
        if let Some(a) = &self.alarm {
            (a.0)(what);
        }
    }

    /// Bounds a cancel's side connection (`CancelHandle::cancel`): the
    /// pool's `connect_timeout`. Defaults to that knob's default.
    pub fn with_connect_timeout(mut self, connect_timeout: Duration) -> MysqlConnector {
        self.connect_timeout = connect_timeout;
        self.side = OnceLock::new();
        self
    }

    /// The connection settings.
    pub fn config(&self) -> &ConnectConfig {
        &self.cfg
    }

    fn base_opts(&self, per_read: Duration) -> OptsBuilder {
        let c = &self.cfg;
        OptsBuilder::new()
            .user(c.user.clone())
            .pass(c.password.clone())
            .db_name(c.database.clone())
            .prefer_socket(false)
            .connect_attrs(Some(
                c.sent_connect_attrs()
                    .into_iter()
                    .collect::<std::collections::HashMap<_, _>>(),
            ))
            .read_timeout(Some(per_read))
            .write_timeout(Some(per_read))
            .additional_capabilities(if c.found_rows {
                CapabilityFlags::CLIENT_SESSION_TRACK | CapabilityFlags::CLIENT_FOUND_ROWS
            } else {
                CapabilityFlags::CLIENT_SESSION_TRACK
            })
    }

    /// The `mysql` crate's TLS options for `tls_mode`, or None for plaintext.
    fn ssl_opts(&self) -> Option<SslOpts> {
        let c = &self.cfg;
        let opts = match c.tls_mode {
            TlsMode::Disabled => return None,
            TlsMode::Preferred | TlsMode::Required => {
                SslOpts::default().with_danger_accept_invalid_certs(true)
            }
            TlsMode::VerifyCa => SslOpts::default()
                .with_root_cert_path(c.tls_ca.clone())
                .with_danger_skip_domain_validation(true),
            TlsMode::VerifyIdentity => SslOpts::default().with_root_cert_path(c.tls_ca.clone()),
        };
        let identity = match (&c.tls_cert, &c.tls_key) {
            (Some(cert), Some(key)) => Some(ClientIdentity::new(cert.clone(), key.clone())),
            _ => None,
        };
        // rustls needs a process-wide crypto provider; the `mysql` crate asks
        // for the default one, which is ambiguous when some other crate in the
        // program also enabled aws-lc-rs. Install ring (the one built here)
        // unless the program already chose one.
        if rustls::crypto::CryptoProvider::get_default().is_none() {
            let _ = rustls::crypto::ring::default_provider().install_default();
        }
        Some(opts.with_client_identity(identity))
    }

    fn connect_tcp(&self, attempt: &ConnectAttempt) -> Result<Conn> {
        let ep = self.cfg.endpoint();
        let addr = (self.cfg.host.as_str(), self.cfg.port)
            .to_socket_addrs()
            .map_err(|e| Error::new(ErrorKind::Connect, format!("cannot resolve {ep}: {e}")))?
            .next()
            .ok_or_else(|| {
                Error::new(ErrorKind::Connect, format!("{ep} resolves to no address"))
            })?;
        let phase = Arc::new(AtomicU8::new(PHASE_TCP));
        let mut last_err = None;
        let mut tls = self.ssl_opts();
        // The crate checks the certificate against the name it connects to.
        let target = if self.cfg.tls_mode == TlsMode::VerifyIdentity {
            self.cfg.host.clone()
        } else {
            addr.ip().to_string()
        };
        // A port we picked may be taken by someone else before we bind it:
        // then try another. `preferred` may take one more round, in plaintext.
        for _ in 0..4 {
            let local = pick_local_port(&addr).map_err(|e| {
                Error::new(
                    ErrorKind::Connect,
                    format!("cannot pick a local port to reach {ep}: {}", os_error(&e)),
                )
            })?;
            let p2 = phase.clone();
            attempt.set_canceller(move || cancel_socket(local, addr, &p2));
            let per_read = attempt.remaining() + Duration::from_millis(500);
            let opts = self
                .base_opts(per_read)
                .ssl_opts(tls.clone())
                .ip_or_hostname(Some(target.clone()))
                .tcp_port(addr.port())
                .tcp_connect_timeout(Some(attempt.remaining().max(Duration::from_millis(1))))
                .bind_address(Some(SocketAddr::new(local.ip(), local.port())));
            match Conn::new(opts) {
                Ok(conn) => {
                    // What the watchdog reports if the deadline passes now.
                    phase.store(PHASE_INIT, Relaxed);
                    return Ok(conn);
                }
                Err(mysql::Error::DriverError(mysql::DriverError::CouldNotConnect(Some((
                    _,
                    _,
                    kind,
                )))))
                    if kind == io::ErrorKind::AddrInUse && attempt.cancelled().is_none() =>
                {
                    last_err = Some(Error::new(
                        ErrorKind::Connect,
                        format!("local port {local} in use"),
                    ));
                }
                Err(mysql::Error::DriverError(mysql::DriverError::TlsNotSupported))
                    if self.cfg.tls_mode == TlsMode::Preferred
                        && tls.is_some()
                        && attempt.cancelled().is_none() =>
                {
                    // The greeting offered no TLS: connect again in plaintext.
                    tls = None;
                    last_err = Some(Error::new(
                        ErrorKind::Connect,
                        format!("{ep} offers no TLS and the plaintext retry did not happen"),
                    ));
                }
                Err(e) => return Err(self.connect_error(attempt, &e, "handshake")),
            }
        }
        Err(last_err.expect("loop ran"))
    }

    /// Words for a failed connect: which phase, where, after how long.
    fn connect_error(&self, attempt: &ConnectAttempt, e: &mysql::Error, phase: &str) -> Error {
        let ep = self.cfg.endpoint();
        let after = fmt_duration(attempt.started().elapsed());
        if let Some(found) = attempt.cancelled() {
            return Error::new(
                ErrorKind::Connect,
                format!(
                    "connect to {ep} timed out after {after} (connect_timeout={}): {found}",
                    fmt_duration(self.connect_timeout_hint(attempt))
                ),
            );
        }
        if let Some(tls) = self.tls_error(e) {
            return tls;
        }
        match e {
            // A plugin staunch does not speak: no retry can change that, so
            // the caller hears it at once, by name (conformance
            // `conf_auth_plugins`), not "unreachable" at the acquire timeout.
            mysql::Error::DriverError(mysql::DriverError::UnknownAuthPlugin(name)) => {
                Error::permanent(
                    ErrorKind::Connect,
                    format!(
                        "connect to {ep} failed: the server asks for the authentication plugin {name:?} for user {:?}; staunch speaks mysql_native_password, caching_sha2_password and client_ed25519",
                        self.cfg.user
                    ),
                )
            }
            mysql::Error::DriverError(mysql::DriverError::CleartextPluginDisabled) => {
                Error::permanent(
                    ErrorKind::Connect,
                    format!(
                        "connect to {ep} failed: the server asks for the authentication plugin \"mysql_clear_password\" for user {:?}, which would send the password as it is; staunch does not send it",
                        self.cfg.user
                    ),
                )
            }
            mysql::Error::MySqlError(_) => Error::with_source(
                ErrorKind::Connect,
                format!("connect to {ep} failed"),
                Error::from_mysql(&format!("{ep} answered"), e),
            ),
            mysql::Error::DriverError(mysql::DriverError::ConnectTimeout) => Error::new(
                ErrorKind::Connect,
                format!("TCP connect to {ep} timed out after {after}: no answer to SYN"),
            ),
            mysql::Error::DriverError(mysql::DriverError::CouldNotConnect(Some((
                _,
                desc,
                io::ErrorKind::ConnectionReset,
            )))) => Error::new(
                ErrorKind::Connect,
                format!(
                    "connect to {ep} failed: the connection was reset as soon as it was accepted, before the handshake: {desc}"
                ),
            ),
            mysql::Error::DriverError(mysql::DriverError::CouldNotConnect(Some((_, desc, _)))) => {
                Error::new(
                    ErrorKind::Connect,
                    format!("TCP connect to {ep} failed: {}", os_error_text(desc)),
                )
            }
            mysql::Error::IoError(io) | mysql::Error::CodecError(PacketCodecError::Io(io))
                if hung_up(io) =>
            {
                let how = if io.kind() == io::ErrorKind::ConnectionReset {
                    "the connection was reset"
                } else {
                    "the server closed the connection"
                };
                Error::new(
                    ErrorKind::Connect,
                    format!("connect to {ep} failed: {how} during the {phase} after {after} ({io})"),
                )
            }
            mysql::Error::CodecError(PacketCodecError::PacketTooLarge) => Error::new(
                ErrorKind::Connect,
                format!(
                    "connect to {ep} failed during the {phase} after {after}: the server sent a packet larger than the client accepts (max_allowed_packet; {} MiB until the handshake is done)",
                    HANDSHAKE_MAX_PACKET >> 20
                ),
            ),
            mysql::Error::IoError(io)
                if matches!(io.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) =>
            {
                Error::new(
                    ErrorKind::Connect,
                    format!("connect to {ep} timed out after {after} during the {phase}: a socket read got no data"),
                )
            }
            mysql::Error::IoError(io) | mysql::Error::CodecError(PacketCodecError::Io(io)) => Error::new(
                ErrorKind::Connect,
                format!(
                    "connect to {ep} failed during the {phase} after {after}: {}",
                    os_error(io)
                ),
            ),
            other => Error::new(
                ErrorKind::Connect,
                format!("connect to {ep} failed during the {phase} after {after}: {other}"),
            ),
        }
    }

    /// Words for a TLS failure (None when `e` is not one). Failures that a
    /// retry cannot fix are marked permanent.
    fn tls_error(&self, e: &mysql::Error) -> Option<Error> {
        let mode = self.cfg.tls_mode;
        if mode == TlsMode::Disabled {
            return None;
        }
        let ep = self.cfg.endpoint();
        let files = || {
            let mut v = Vec::new();
            for (knob, p) in [
                ("tls_ca", &self.cfg.tls_ca),
                ("tls_cert", &self.cfg.tls_cert),
                ("tls_key", &self.cfg.tls_key),
            ] {
                if let Some(p) = p {
                    v.push(format!("{knob}={}", p.display()));
                }
            }
            v.join(", ")
        };
        let rejected = |what: String| {
            Some(Error::permanent(
                ErrorKind::Connect,
                format!("TLS connect to {ep} failed (tls_mode={mode}): {what}"),
            ))
        };
        let tls_err = match e {
            mysql::Error::DriverError(mysql::DriverError::TlsNotSupported) => {
                return rejected(
                    "the server does not offer TLS (its greeting lacks CLIENT_SSL; \
                     is it started with ssl_cert/ssl_key?)"
                        .into(),
                );
            }
            mysql::Error::TlsError(t) => {
                return rejected(format!(
                    "cannot set up TLS with {}: {t}",
                    match files() {
                        f if f.is_empty() => "these settings".to_string(),
                        f => f,
                    }
                ));
            }
            mysql::Error::IoError(io) if io.kind() == io::ErrorKind::NotFound => {
                return rejected(format!("cannot read a TLS file ({}): {io}", files()));
            }
            mysql::Error::IoError(io)
            | mysql::Error::CodecError(
                mysql::mysql_common::proto::codec::error::PacketCodecError::Io(io),
            ) => io.get_ref()?.downcast_ref::<rustls::Error>()?,
            _ => return None,
        };
        use rustls::{AlertDescription as A, CertificateError as C};
        match tls_err {
            rustls::Error::InvalidCertificate(ce) => {
                let why = match ce {
                    C::UnknownIssuer => format!(
                        "it is not signed by a trusted CA ({})",
                        match &self.cfg.tls_ca {
                            Some(ca) => format!("tls_ca={}", ca.display()),
                            None => "no tls_ca given, only the bundled public roots".into(),
                        }
                    ),
                    C::NotValidForName | C::NotValidForNameContext { .. } => format!(
                        "it is not valid for the host name {:?}: {ce}",
                        self.cfg.host
                    ),
                    C::Expired | C::ExpiredContext { .. } => format!("it has expired: {ce}"),
                    C::NotValidYet | C::NotValidYetContext { .. } => {
                        format!("it is not valid yet: {ce}")
                    }
                    C::Other(o) => match o.0.downcast_ref::<webpki::Error>() {
                        Some(webpki::Error::CaUsedAsEndEntity) => format!(
                            "it is a CA certificate (basicConstraints CA:TRUE, as `openssl req -x509` \
                             makes by default) used as the server's own certificate, which the TLS \
                             library refuses even when it is the very certificate in tls_ca{}; give \
                             the server (its ssl_cert) a certificate made with `-addext \
                             basicConstraints=critical,CA:FALSE`, or one signed by a CA you put in \
                             tls_ca, or set tls_mode=required (encrypted, certificate not checked)",
                            match &self.cfg.tls_ca {
                                Some(ca) => format!(" ({})", ca.display()),
                                None => String::new(),
                            }
                        ),
                        Some(webpki::Error::EndEntityUsedAsCa) => "a certificate that is not a \
                             CA (basicConstraints CA:FALSE) signed another one in the server's chain; \
                             fix the chain in the server's ssl_cert"
                            .to_string(),
                        Some(w) => format!(
                            "the certificate check failed ({}); check the server's ssl_cert and \
                             tls_ca, or set tls_mode=required (encrypted, certificate not checked)",
                            words(&format!("{w:?}"))
                        ),
                        None => format!(
                            "{o}; check the server's ssl_cert and tls_ca, or set \
                             tls_mode=required (encrypted, certificate not checked)"
                        ),
                    },
                    other => format!(
                        "{other}; check the server's ssl_cert and tls_ca, or set \
                         tls_mode=required (encrypted, certificate not checked)"
                    ),
                };
                rejected(format!(
                    "certificate verification failed: the server's certificate was rejected: {why}"
                ))
            }
            rustls::Error::AlertReceived(
                a @ (A::BadCertificate
                | A::UnsupportedCertificate
                | A::CertificateRevoked
                | A::CertificateExpired
                | A::CertificateUnknown
                | A::UnknownCA
                | A::AccessDenied
                | A::CertificateRequired
                | A::HandshakeFailure
                | A::ProtocolVersion
                | A::InsufficientSecurity),
            ) => rejected(format!(
                "the server refused the TLS handshake (TLS alert: {}): {}",
                words(&format!("{a:?}")),
                match files() {
                    f if f.is_empty() =>
                        "if its user requires X509, set tls_cert and tls_key".to_string(),
                    f => format!("check the client settings {f} against what the server expects"),
                }
            )),
            rustls::Error::PeerIncompatible(p) => rejected(format!(
                "the server's TLS is incompatible with this client ({}): it needs TLS 1.2 or \
                 1.3 with a modern cipher; upgrade the server's TLS settings, or set \
                 tls_mode=disabled",
                words(&format!("{p:?}"))
            )),
            other => Some(Error::new(
                ErrorKind::Connect,
                format!("TLS connect to {ep} failed (tls_mode={mode}): {other}"),
            )),
        }
    }

    fn connect_timeout_hint(&self, attempt: &ConnectAttempt) -> Duration {
        attempt
            .deadline()
            .saturating_duration_since(attempt.started())
    }

    fn set_timeouts(&self, conn: &Conn, d: Option<Duration>) -> Result<()> {
        sys::set_socket_timeouts(conn.as_raw_fd(), d)
            .map_err(|e| Error::new(ErrorKind::Io, format!("cannot set socket timeouts: {e}")))
    }

    /// Runs `f` with the socket bounded by `bound`, then restores the
    /// borrowed connections' per-read bound.
    fn bounded<T>(
        &self,
        s: &mut Session,
        bound: Duration,
        f: impl FnOnce(&mut Session) -> mysql::Result<T>,
        what: &str,
    ) -> Result<T> {
        self.set_timeouts(s, Some(bound))?;
        let r =
            f(s).map_err(|e| Error::from_mysql(&format!("{what} on {}", self.cfg.endpoint()), &e));
        if r.is_ok() {
            self.set_timeouts(s, per_read_bound(self.cfg.query_timeout))?;
        }
        r
    }

    /// A connector to the same server for a side connection (a cancel's
    /// `KILL QUERY`): no statement time limit, no `init_sql`.
    pub(crate) fn for_side_connection(&self) -> MysqlConnector {
        let mut c = self.clone();
        c.cfg.query_timeout = None;
        c.cfg.init_sql = None;
        c.cfg.liveness_threshold = None;
        c.side = OnceLock::new();
        c
    }

    /// [`Self::for_side_connection`], made on the first call and shared
    /// after (each borrow's `CancelHandle` holds one).
    pub(crate) fn side_connector(&self) -> Arc<MysqlConnector> {
        self.side
            .get_or_init(|| Arc::new(self.for_side_connection()))
            .clone()
    }

    /// The bound of a cancel's side connection.
    pub(crate) fn connect_timeout(&self) -> Duration {
        self.connect_timeout
    }
}

impl Connector for MysqlConnector {
    type Conn = Session;

    fn connect(&self, attempt: &ConnectAttempt) -> Result<Session> {
        let conn = match &self.cfg.socket {
            Some(path) => {
                let per_read = attempt.remaining() + Duration::from_millis(500);
                let opts = self.base_opts(per_read).socket(Some(path.clone()));
                Conn::new(opts).map_err(|e| self.connect_error(attempt, &e, "handshake"))?
            }
            None => self.connect_tcp(attempt)?,
        };
        // Session set-up, still within the connect's deadline.
        let left = attempt.remaining();
        if left.is_zero() {
            return Err(Error::new(
                ErrorKind::Connect,
                format!(
                    "connect to {} used up connect_timeout before session set-up",
                    self.cfg.endpoint()
                ),
            ));
        }
        self.set_timeouts(&conn, Some(left))?;
        let session = match Session::start(conn, &self.cfg) {
            Ok(s) => s,
            Err(e) => return Err(self.connect_error(attempt, &e, "session set-up")),
        };
        if attempt.cancelled().is_some() {
            return Err(Error::new(
                ErrorKind::Connect,
                "connect cut off at its deadline",
            ));
        }
        self.set_timeouts(&session, per_read_bound(self.cfg.query_timeout))?;
        if self.cfg.socket.is_none() {
            // The kernel's watch for a dead peer, behind the liveness check.
            if let Err(e) = sys::set_tcp_keepalive(
                session.as_raw_fd(),
                KEEPALIVE_IDLE,
                KEEPALIVE_INTERVAL,
                KEEPALIVE_COUNT,
                TCP_USER_TIMEOUT,
            ) {
                log::debug!(target: "staunch", "cannot set TCP keepalive: {e}");
            }
        }
        Ok(session)
    }

    fn validate(&self, conn: &mut Session, timeout: Duration) -> Result<()> {
        // A COM_PING only reads one packet and takes anything but an error
        // packet as its answer: on a connection with a stale answer waiting
        // it would pass. Look first.
        if let Some(why) = sys::unexpected_input(conn.as_raw_fd()) {
            return Err(Error::new(
                ErrorKind::Io,
                format!(
                    "validation on {}: the connection is out of step with the server: {why}",
                    self.cfg.endpoint()
                ),
            ));
        }
        self.bounded(conn, timeout, |c| c.ping(), "validation (COM_PING)")
    }

    /// A returned connection on which the server has sent something is out
    /// of step: an error while reading a result (a packet over
    /// max_allowed_packet, a timeout) leaves the rest of that result unread,
    /// and the `mysql` crate does not mark the connection for it. The next
    /// command would read that rest as its own answer. `PooledConn`'s
    /// `Queryable` and the C ABI see such errors themselves; this is the net
    /// for what they cannot see (a borrower iterating `query_iter` itself,
    /// or using the raw `mysql::Conn`: the pool asks only then), and it
    /// catches the rest only once it has arrived. One non-blocking peek, no
    /// round trip.
    fn is_broken(&self, conn: &Session) -> bool {
        match sys::unexpected_input(conn.as_raw_fd()) {
            Some(why) => {
                log::warn!(
                    target: "staunch",
                    "discarding a returned connection to {}: {why}",
                    self.cfg.endpoint()
                );
                true
            }
            None => false,
        }
    }

    /// What a read-only borrow costs here: nothing. The session's state is
    /// known from what the server reported after each statement (see
    /// `session.rs`): a transaction left open is rolled back (one round
    /// trip); a changed session (a variable, the schema, a temporary table,
    /// ...) is reset (`COM_RESET_CONNECTION`: one; the database selected
    /// again if it changed: one more; the pool's settings put back before
    /// the next statement, or at once, one more, when there is an `init_sql`
    /// or a `query_timeout`); so is one whose state is unknown because the
    /// borrower used the raw `mysql::Conn` (its database, which the reset
    /// keeps, is selected again with the pool's settings, before the next
    /// statement through the guard), and every one with `reset_on_return`.
    /// A borrow that set its own statement time limit has the pool's put
    /// back (one).
    fn recycle(&self, s: &mut Session, touched: bool) -> Result<Recycled> {
        if let Some(why) = &s.state.broken {
            return Err(Error::new(
                ErrorKind::Broken,
                format!("the connection broke during a statement: {why}"),
            ));
        }
        if !s.state.tracked && !touched {
            // Reset at the last return, and nothing ran since.
            return Ok(Recycled::AsIs);
        }
        s.give_back_buffers();
        if RETIRE_WORN && s.worn(CRATE_WALK_MAX, WEAR_CHECK_EVERY_NS) {
            // Replaced rather than kept: see CRATE_WALK_MAX. The server
            // rolls back whatever it had open when the connection closes.
            return Ok(Recycled::Retire);
        }
        if touched || s.state.dirty || self.cfg.reset_on_return {
            self.bounded(
                s,
                self.validation_timeout,
                |s| s.reset(&self.cfg, touched),
                "reset on return",
            )?;
            return Ok(Recycled::Reset);
        }
        if s.state.limit != self.cfg.query_timeout {
            let limit = self.cfg.query_timeout;
            self.bounded(
                s,
                self.validation_timeout,
                |s| s.set_limit(limit),
                "statement time limit on return",
            )?;
        }
        if s.state.txn_open {
            self.bounded(
                s,
                self.validation_timeout,
                |s| {
                    s.query_drop("ROLLBACK")?;
                    // A ROLLBACK ends any transaction; the server reports
                    // that only when it had reported one open, so a report
                    // now can only say one is (still) open.
                    s.state.txn_open = false;
                    s.observe();
                    Ok(())
                },
                "rollback on return",
            )?;
            if s.state.txn_open {
                return Err(Error::new(
                    ErrorKind::Internal,
                    "after ROLLBACK the server still reports a transaction open",
                ));
            }
            return Ok(Recycled::RolledBack);
        }
        Ok(Recycled::AsIs)
    }

    fn statement_bound(&self) -> Option<Duration> {
        self.cfg.query_timeout.map(|l| l + STATEMENT_GRACE)
    }

    fn liveness_threshold(&self) -> Option<Duration> {
        self.cfg.liveness_threshold
    }

    fn liveness_key(&self, conn: &Session) -> Option<u64> {
        Some(u64::from(conn.connection_id()))
    }

    fn check_liveness(
        &self,
        attempt: &ConnectAttempt,
        suspects: &[crate::pool::Suspect],
    ) -> std::result::Result<Vec<Option<String>>, String> {
        liveness::check(self, attempt, suspects)
    }

    fn is_permanent(&self, err: &Error) -> bool {
        err.has_server_code(PERMANENT_CODES) || err.is_marked_permanent()
    }

    fn socket_fd(&self, conn: &Session) -> Option<std::os::fd::RawFd> {
        Some(conn.as_raw_fd())
    }

    fn endpoint(&self) -> String {
        self.cfg.endpoint()
    }
}

/// How far the `mysql` crate's reads may have walked through its 4 MiB read
/// buffer (mysql_common's `MySyncFramed`, allocated at connect) before the
/// connection is replaced at its return. Each read fills the buffer a
/// little further on and only wraps to its start at the end, so the pages
/// behind it turn resident one by one: without this bound every connection
/// that carries 4 MiB through the crate (prepared statements, TLS, the
/// Rust API) keeps 4 MiB resident for good, and one large answer keeps its
/// size. With it, a returned connection holds at most this much of the
/// buffer plus what its borrows read since its last check (at most one a
/// 100 ms: [`WEAR_CHECK_EVERY_NS`]). The cost: one new connection
/// (~0.25 ms here) per MiB the crate reads, about every 5,000 prepared
/// statements of one short row. Over a unix socket the kernel counts no
/// bytes and nothing is replaced. src/wire's own buffers shrink back
/// instead (wire/packet.rs). Goes with the crate (issue 45).
const CRATE_WALK_MAX: u64 = 1024 * 1024;

/// How often a connection's return may ask the kernel how far the crate
/// has read (`Session::worn`): a connection that returns more often is
/// checked at the first return 100 ms after the last check.
const WEAR_CHECK_EVERY_NS: u64 = 100_000_000;

/// Whether worn connections are replaced (see [`CRATE_WALK_MAX`]): only
/// with the library's own allocator (the `mimalloc` feature: the C library
/// and every package), which gives a freed 4 MiB block back to the kernel
/// at once, so the replacement's buffers start with nothing resident. Under
/// glibc's malloc (a Rust program's default) the first freed one raises
/// its mmap threshold, the next come from a heap that keeps freed pages
/// resident, and a replacement would cost a connect and save nothing.
const RETIRE_WORN: bool = cfg!(all(feature = "mimalloc", not(miri)));

/// The most the `mysql` crate accepts in one packet before it has asked the
/// server for its max_allowed_packet (its DEFAULT_MAX_ALLOWED_PACKET).
const HANDSHAKE_MAX_PACKET: usize = 4 * 1024 * 1024;

/// Whether an I/O error means the peer hung up (EOF, reset, broken pipe);
/// the `mysql` crate reports EOF as BrokenPipe "server disconnected", and a
/// stream that ends inside a packet as "bytes remaining on stream".
fn hung_up(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::UnexpectedEof
            | io::ErrorKind::BrokenPipe
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
    ) || e.to_string() == "bytes remaining on stream"
}

/// An OS error in words; running out of file descriptors is named as such
/// (the bare "Too many open files" does not say that it is this process's
/// limit, nor that it passes on its own).
fn os_error(e: &io::Error) -> String {
    os_error_text(&e.to_string())
}

/// As [`os_error`], for an error the `mysql` crate has already turned into
/// text (std's form: "... (os error N)").
fn os_error_text(text: &str) -> String {
    if text.contains(&format!("(os error {})", libc::EMFILE)) {
        format!("no file descriptor available: this process has reached its open-file limit (RLIMIT_NOFILE): {text}")
    } else if text.contains(&format!("(os error {})", libc::ENFILE)) {
        format!("no file descriptor available: the system-wide open-file limit is reached: {text}")
    } else {
        text.to_string()
    }
}

/// Asks the kernel for a free local port for a connection to `peer`.
fn pick_local_port(peer: &SocketAddr) -> io::Result<SocketAddr> {
    let any: IpAddr = match peer {
        SocketAddr::V4(_) => Ipv4Addr::UNSPECIFIED.into(),
        SocketAddr::V6(_) => Ipv6Addr::UNSPECIFIED.into(),
    };
    let l = TcpListener::bind(SocketAddr::new(any, 0))?;
    l.local_addr()
}

/// The watchdog's canceller: finds the socket bound to `local` towards `peer`
/// in this process, reports how far the connect got, and shuts it down.
fn cancel_socket(local: SocketAddr, peer: SocketAddr, phase: &AtomicU8) -> Option<String> {
    let (inode, state) = find_tcp_inode(local.port(), &peer)?;
    let fd = find_fd_by_inode(inode)?;
    let dup = sys::DupFd::new(fd)?;
    if dup.inode() != Some(inode) {
        return None;
    }
    let received = dup.tcp_bytes_received();
    let what = if state == 0x02 {
        format!("TCP connect to {peer} not answered (SYN sent, no SYN-ACK)")
    } else if phase.load(Relaxed) == PHASE_INIT {
        format!("{peer} stopped answering during session set-up")
    } else {
        match received {
            Some(0) => format!("TCP connected to {peer}, but no greeting came from the server"),
            Some(n) => format!("{peer} sent only {n} bytes of the handshake (greeting or authentication incomplete)"),
            None => format!("TCP connected to {peer}, handshake not completed"),
        }
    };
    sys::shutdown(dup.fd());
    Some(what)
}

/// Finds (inode, tcp state) of the socket with local port `port` and remote
/// address `peer` in /proc/net/tcp or tcp6.
fn find_tcp_inode(port: u16, peer: &SocketAddr) -> Option<(u64, u8)> {
    let file = match peer {
        SocketAddr::V4(_) => "/proc/net/tcp",
        SocketAddr::V6(_) => "/proc/net/tcp6",
    };
    let text = std::fs::read_to_string(file).ok()?;
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 10 {
            continue;
        }
        let (Some(lp), Some(rp)) = (hex_port(f[1]), hex_port(f[2])) else {
            continue;
        };
        if lp != port || rp != peer.port() {
            continue;
        }
        let state = u8::from_str_radix(f[3], 16).ok()?;
        let inode: u64 = f[9].parse().ok()?;
        if inode != 0 {
            return Some((inode, state));
        }
    }
    None
}

fn hex_port(addr: &str) -> Option<u16> {
    let (_, p) = addr.rsplit_once(':')?;
    u16::from_str_radix(p, 16).ok()
}

fn find_fd_by_inode(inode: u64) -> Option<i32> {
    let want = format!("socket:[{inode}]");
    for entry in std::fs::read_dir("/proc/self/fd").ok()? {
        let entry = entry.ok()?;
        if let Ok(target) = std::fs::read_link(entry.path()) {
            if target.as_os_str() == want.as_str() {
                return entry.file_name().to_str()?.parse().ok();
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    #[test]
    fn descriptor_exhaustion_is_named() {
        let s = super::os_error(&std::io::Error::from_raw_os_error(libc::EMFILE));
        assert!(
            s.starts_with("no file descriptor available") && s.contains("Too many open files"),
            "{s}"
        );
        let refused = "Connection refused (os error 111)";
        assert_eq!(super::os_error_text(refused), refused);
    }
}

#[cfg(test)]
mod socket_finder_tests {
    use super::*;
    use std::io::Read;

    /// The watchdog's finder locates a socket by its local port and peer,
    /// reports that no greeting came, and shuts it down, which unblocks a
    /// read in another thread. (The bind-before-connect itself is the
    /// `mysql` crate's `bind_address`, exercised by every real connect.)
    #[test]
    #[cfg_attr(miri, ignore = "real sockets: Miri does not emulate connect")]
    fn finds_and_shuts_down_a_blocked_socket() {
        let server = TcpListener::bind("127.0.0.1:0").unwrap();
        let peer = server.local_addr().unwrap();
        let sock = std::net::TcpStream::connect(peer).unwrap();
        let local = sock.local_addr().unwrap();
        let mut s2 = sock.try_clone().unwrap();
        let reader = std::thread::spawn(move || {
            let mut b = [0u8; 1];
            s2.read(&mut b)
        });
        std::thread::sleep(Duration::from_millis(50));
        let phase = AtomicU8::new(PHASE_TCP);
        let found = cancel_socket(local, peer, &phase).expect("socket must be found");
        assert!(found.contains("no greeting"), "{found}");
        // Once the handshake is done, a cut-off is reported as set-up.
        let sock2 = std::net::TcpStream::connect(peer).unwrap();
        let phase = AtomicU8::new(PHASE_INIT);
        let found = cancel_socket(sock2.local_addr().unwrap(), peer, &phase)
            .expect("second socket must be found");
        assert!(found.contains("during session set-up"), "{found}");
        assert_eq!(
            reader.join().unwrap().unwrap(),
            0,
            "read returns EOF after shutdown"
        );
        drop(server);
    }
}

/// A Debug name (`UnsupportedCertVersion`, `BadCertificate`...) as words.
fn words(debug: &str) -> String {
    let name = debug.split(['(', ' ', '{']).next().unwrap_or("");
    let mut out = String::new();
    for (i, ch) in name.chars().enumerate() {
        if ch.is_ascii_uppercase() && i > 0 {
            out.push(' ');
        }
        out.push(ch.to_ascii_lowercase());
    }
    out
}
