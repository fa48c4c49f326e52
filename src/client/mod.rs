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
pub(crate) mod query;
pub(crate) mod rows;
mod session;
pub(crate) mod sql;
mod statement;
pub(crate) mod stream;
pub(crate) mod txn;
pub(crate) mod value;

use std::io;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use self::connect::Prepared;
use self::link::Link;

pub use self::cancel::CancelHandle;
pub(crate) use self::config::parse_connect_attrs;
pub use self::config::{ConnectConfig, TlsMode, DEFAULT_LIVENESS_THRESHOLD};
pub use self::conn::PooledConn;
pub(crate) use self::conn::{AnyRow, Report, WireRow, WireStart};
pub use self::rows::{Answer, SendAs};
pub use self::session::Session;
pub use self::sql::{Lexing, Scan};
pub(crate) use self::statement::StatementError;
pub use self::statement::Way;
pub use self::txn::Transaction;
pub use self::value::{Decimal, DecimalError, Param};
use crate::error::{Error, ErrorKind, Result};
use crate::pool::{ConnectAttempt, Connector, Recycled};
use crate::sys;
use crate::wire::WireError;

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
    /// What every connection is opened with (TLS, the server's key, the
    /// attributes), read at the first connect and kept.
    prepared: Arc<OnceLock<std::result::Result<Arc<Prepared>, Error>>>,
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
            prepared: Arc::default(),
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

    /// What every connection is opened with, read once (see
    /// [`connect::Prepared`]); an error (a TLS file that cannot be read) is
    /// kept and returned by every connect.
    fn prepared(&self) -> Result<Arc<Prepared>> {
        self.prepared
            .get_or_init(|| Prepared::new(&self.cfg).map(Arc::new))
            .clone()
    }

    fn set_timeouts(&self, s: &Session, d: Option<Duration>) -> Result<()> {
        s.link
            .set_timeouts(d)
            .map_err(|e| Error::new(ErrorKind::Io, format!("cannot set socket timeouts: {e}")))
    }

    /// Runs `f` with the socket bounded by `bound`, then restores the
    /// borrowed connections' per-read bound.
    fn bounded<T>(
        &self,
        s: &mut Session,
        bound: Duration,
        f: impl FnOnce(&mut Session) -> std::result::Result<T, WireError>,
        what: &str,
    ) -> Result<T> {
        self.set_timeouts(s, Some(bound))?;
        let r =
            f(s).map_err(|e| Error::from_wire(&format!("{what} on {}", self.cfg.endpoint()), &e));
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
        let prepared = self.prepared()?;
        let (link, watch) = Link::open(&self.cfg, &prepared, attempt)?;
        // Session set-up, still within the connect's deadline (the socket's
        // time limits are what is left of it; the watchdog cuts the rest).
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
        link.set_timeouts(Some(left))
            .map_err(|e| Error::new(ErrorKind::Io, format!("cannot set socket timeouts: {e}")))?;
        watch.setting_up();
        let mut session = match Session::start(link, &self.cfg) {
            Ok(s) => s,
            Err(e) => return Err(connect::failure(&self.cfg, attempt, &e, "session set-up")),
        };
        if attempt.cancelled().is_some() {
            return Err(Error::new(
                ErrorKind::Connect,
                "connect cut off at its deadline",
            ));
        }
        // The most one packet may hold from now on: the server's
        // max_allowed_packet, asked with the session's first statements.
        let max = session
            .max_allowed_packet()
            .map_err(|e| connect::failure(&self.cfg, attempt, &e, "session set-up"))?;
        session.link.wire.set_max_packet(max);
        self.set_timeouts(&session, per_read_bound(self.cfg.query_timeout))?;
        if self.cfg.socket.is_none() {
            // The kernel's watch for a dead peer, behind the liveness check.
            if let Err(e) = sys::set_tcp_keepalive(
                session.link.raw_fd(),
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
        if let Some(why) = unexpected_input(conn) {
            return Err(Error::new(
                ErrorKind::Io,
                format!(
                    "validation on {}: the connection is out of step with the server: {why}",
                    self.cfg.endpoint()
                ),
            ));
        }
        self.bounded(conn, timeout, |c| c.link.ping(), "validation (COM_PING)")
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
        match unexpected_input(conn) {
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
        if touched || s.state.dirty || self.cfg.reset_on_return {
            self.bounded(
                s,
                self.validation_timeout,
                |s| s.reset(&self.cfg),
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
                    s.link.run(b"ROLLBACK")?;
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
        Some(conn.link.raw_fd())
    }

    fn endpoint(&self) -> String {
        self.cfg.endpoint()
    }
}

/// Whether a session idle between statements has input waiting: a byte in
/// the packet layer's buffer or on the socket. Nothing is sent between
/// commands, so either means the session is out of step (the rest of an
/// answer left unread), or the server closed it.
fn unexpected_input(s: &Session) -> Option<&'static str> {
    if s.link.wire.has_buffered_input() {
        return Some("part of an earlier answer is still unread");
    }
    sys::unexpected_input(s.link.raw_fd())
}

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
