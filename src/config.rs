//! Configuration: every knob, its default, its valid range, and the URL form.
//!
//! A pool is described by a URL, `mysql://user:pass@host:port/db?knob=value&…`,
//! or by a [`Builder`]. Every knob can be given both ways (durations are written
//! `250ms`, `2s`, `5m`, `1h`; optional ones also accept `off`). An unknown knob or
//! a bad value is an [`ErrorKind::Config`](crate::ErrorKind::Config) error that
//! names the knob; nothing panics.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{Error, Result};

/// Pool knobs, independent of MySQL. See [`Builder`] for what each one means.
#[derive(Clone, Debug, PartialEq)]
pub struct PoolConfig {
    pub(crate) max_size: usize,
    pub(crate) min_idle: usize,
    pub(crate) connection_timeout: Duration,
    pub(crate) connect_timeout: Duration,
    pub(crate) validation_timeout: Duration,
    pub(crate) idle_timeout: Option<Duration>,
    pub(crate) max_lifetime: Option<Duration>,
    pub(crate) keepalive_interval: Option<Duration>,
    pub(crate) leak_detection_threshold: Option<Duration>,
    pub(crate) adder_threads: usize,
    pub(crate) alive_bypass_window: Duration,
    pub(crate) initialization_fail_timeout: Option<Duration>,
}

impl Default for PoolConfig {
    fn default() -> Self {
        PoolConfig {
            max_size: 10,
            min_idle: 0,
            connection_timeout: Duration::from_secs(10),
            connect_timeout: Duration::from_secs(3),
            validation_timeout: Duration::from_secs(1),
            idle_timeout: Some(Duration::from_secs(600)),
            max_lifetime: Some(Duration::from_secs(1800)),
            keepalive_interval: Some(Duration::from_secs(120)),
            leak_detection_threshold: None,
            adder_threads: 2,
            alive_bypass_window: Duration::from_millis(500),
            initialization_fail_timeout: None,
        }
    }
}

impl PoolConfig {
    /// Most connections the pool holds (idle + in use).
    pub fn max_size(&self) -> usize {
        self.max_size
    }
    /// Fewest idle connections the housekeeper keeps.
    pub fn min_idle(&self) -> usize {
        self.min_idle
    }
    /// Longest `get()` waits.
    pub fn connection_timeout(&self) -> Duration {
        self.connection_timeout
    }
    /// Hard deadline of one whole connect.
    pub fn connect_timeout(&self) -> Duration {
        self.connect_timeout
    }

    /// Checks every range and every relation between knobs.
    pub fn validate(&self) -> Result<()> {
        fn range(knob: &str, v: Duration, min: Duration, max: Duration) -> Result<()> {
            if v < min || v > max {
                return Err(Error::config(format!(
                    "{knob} must be between {} and {}, got {}",
                    fmt_duration(min),
                    fmt_duration(max),
                    fmt_duration(v)
                )));
            }
            Ok(())
        }
        let ms = Duration::from_millis;
        let hour = Duration::from_secs(3600);
        if self.max_size == 0 || self.max_size > MAX_POOL_SIZE {
            return Err(Error::config(format!(
                "max_size must be between 1 and {MAX_POOL_SIZE}, got {}",
                self.max_size
            )));
        }
        if self.min_idle > self.max_size {
            return Err(Error::config(format!(
                "min_idle ({}) must not exceed max_size ({})",
                self.min_idle, self.max_size
            )));
        }
        range("connection_timeout", self.connection_timeout, ms(1), hour)?;
        range("connect_timeout", self.connect_timeout, ms(1), hour)?;
        range("validation_timeout", self.validation_timeout, ms(1), hour)?;
        range("alive_bypass_window", self.alive_bypass_window, ms(0), hour)?;
        for (knob, v) in [
            ("idle_timeout", self.idle_timeout),
            ("max_lifetime", self.max_lifetime),
            ("keepalive_interval", self.keepalive_interval),
            ("leak_detection_threshold", self.leak_detection_threshold),
        ] {
            if let Some(v) = v {
                range(knob, v, ms(10), Duration::from_secs(7 * 24 * 3600))?;
            }
        }
        if let Some(v) = self.initialization_fail_timeout {
            range("initialization_fail_timeout", v, ms(0), hour)?;
        }
        if self.adder_threads == 0 || self.adder_threads > 64 {
            return Err(Error::config(format!(
                "adder_threads must be between 1 and 64, got {}",
                self.adder_threads
            )));
        }
        if let (Some(k), Some(l)) = (self.keepalive_interval, self.max_lifetime) {
            if k >= l {
                return Err(Error::config(format!(
                    "keepalive_interval ({}) must be shorter than max_lifetime ({}), or off",
                    fmt_duration(k),
                    fmt_duration(l)
                )));
            }
        }
        Ok(())
    }
}

/// Largest `max_size` accepted.
pub const MAX_POOL_SIZE: usize = 4096;

/// Where and how to connect: the MySQL side of the configuration.
#[derive(Clone, PartialEq)]
pub struct ConnectConfig {
    pub(crate) host: String,
    pub(crate) port: u16,
    pub(crate) socket: Option<String>,
    pub(crate) user: Option<String>,
    pub(crate) password: Option<String>,
    pub(crate) database: Option<String>,
    pub(crate) query_timeout: Option<Duration>,
    pub(crate) reset_on_return: bool,
    pub(crate) tls_mode: TlsMode,
    pub(crate) tls_ca: Option<PathBuf>,
    pub(crate) tls_cert: Option<PathBuf>,
    pub(crate) tls_key: Option<PathBuf>,
}

/// Whether and how connections are encrypted (knob `tls_mode`).
///
/// The names and meanings follow MySQL's `--ssl-mode`. TLS is rustls (the
/// `mysql` crate's `rustls-tls-ring`); the trust store for verification is
/// `tls_ca` plus the Mozilla root certificates bundled by the `mysql` crate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TlsMode {
    /// Plain TCP, no TLS (the default).
    #[default]
    Disabled,
    /// TLS, without certificate verification, when the server's greeting
    /// offers it (capability flag `CLIENT_SSL`); plaintext when it does not,
    /// and over a unix socket. A TLS handshake that fails is an error, never a
    /// silent fallback.
    Preferred,
    /// TLS or fail; the server certificate is not verified (protects against
    /// eavesdropping, not against an active man in the middle).
    Required,
    /// TLS, and the server certificate must chain to `tls_ca`; the host name
    /// is not checked.
    VerifyCa,
    /// TLS, the certificate must chain to a trusted CA and name the host of
    /// the URL (DNS name or IP address in its subject alternative names).
    VerifyIdentity,
}

impl TlsMode {
    /// The knob's text form (`disabled`, `preferred`, `required`, `verify_ca`,
    /// `verify_identity`).
    pub fn as_str(self) -> &'static str {
        match self {
            TlsMode::Disabled => "disabled",
            TlsMode::Preferred => "preferred",
            TlsMode::Required => "required",
            TlsMode::VerifyCa => "verify_ca",
            TlsMode::VerifyIdentity => "verify_identity",
        }
    }

    /// Parses the knob's text form (case-insensitive).
    pub fn parse(v: &str) -> Result<TlsMode> {
        Ok(match v.trim().to_ascii_lowercase().as_str() {
            "disabled" => TlsMode::Disabled,
            "preferred" => TlsMode::Preferred,
            "required" => TlsMode::Required,
            "verify_ca" => TlsMode::VerifyCa,
            "verify_identity" => TlsMode::VerifyIdentity,
            _ => {
                return Err(Error::config(format!(
                    "tls_mode must be disabled, preferred, required, verify_ca or verify_identity, got {v:?}"
                )))
            }
        })
    }

    /// Whether the server certificate is checked against a CA.
    pub fn verifies(self) -> bool {
        matches!(self, TlsMode::VerifyCa | TlsMode::VerifyIdentity)
    }
}

impl fmt::Display for TlsMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Default for ConnectConfig {
    fn default() -> Self {
        ConnectConfig {
            host: "127.0.0.1".into(),
            port: 3306,
            socket: None,
            user: None,
            password: None,
            database: None,
            query_timeout: None,
            reset_on_return: false,
            tls_mode: TlsMode::Disabled,
            tls_ca: None,
            tls_cert: None,
            tls_key: None,
        }
    }
}

impl ConnectConfig {
    /// `host:port`, or the socket path, for messages.
    pub fn endpoint(&self) -> String {
        match &self.socket {
            Some(s) => format!("unix:{s}"),
            None if self.host.contains(':') => format!("[{}]:{}", self.host, self.port),
            None => format!("{}:{}", self.host, self.port),
        }
    }
    /// The user name, if set.
    pub fn user(&self) -> Option<&str> {
        self.user.as_deref()
    }
    /// Whether and how connections are encrypted.
    pub fn tls_mode(&self) -> TlsMode {
        self.tls_mode
    }
    /// The CA certificate(s) file (PEM) server certificates are verified against.
    pub fn tls_ca(&self) -> Option<&Path> {
        self.tls_ca.as_deref()
    }
    /// The client certificate (chain) file (PEM).
    pub fn tls_cert(&self) -> Option<&Path> {
        self.tls_cert.as_deref()
    }
    /// The client private key file (PEM). Only its path is ever printed.
    pub fn tls_key(&self) -> Option<&Path> {
        self.tls_key.as_deref()
    }

    /// Checks the TLS knobs together, and that each file exists and holds
    /// what it should (PEM). Key material is read but never printed.
    fn validate_tls(&self) -> Result<()> {
        let files = [
            ("tls_ca", &self.tls_ca),
            ("tls_cert", &self.tls_cert),
            ("tls_key", &self.tls_key),
        ];
        if self.tls_mode == TlsMode::Disabled {
            if let Some((knob, _)) = files.iter().find(|(_, v)| v.is_some()) {
                return Err(Error::config(format!(
                    "{knob} is set but tls_mode is disabled (the default): set tls_mode \
                     (e.g. verify_identity) to use TLS"
                )));
            }
            return Ok(());
        }
        match (&self.tls_cert, &self.tls_key) {
            (Some(_), None) => {
                return Err(Error::config(
                    "tls_cert is set without tls_key: a client certificate needs its private key",
                ))
            }
            (None, Some(_)) => {
                return Err(Error::config(
                    "tls_key is set without tls_cert: a client private key needs its certificate",
                ))
            }
            _ => {}
        }
        if self.tls_mode == TlsMode::VerifyCa && self.tls_ca.is_none() {
            return Err(Error::config(
                "tls_mode=verify_ca needs tls_ca (the PEM file of the CA that signed the server's certificate)",
            ));
        }
        if let Some(sock) = &self.socket {
            if self.tls_mode != TlsMode::Preferred {
                return Err(Error::config(format!(
                    "tls_mode={} cannot be used with socket={sock}: connections through a unix \
                     socket are never encrypted (use TCP, or tls_mode=preferred or disabled)",
                    self.tls_mode
                )));
            }
        }
        if let Some(ca) = &self.tls_ca {
            check_pem(ca, "tls_ca", PemWant::Certificates)?;
        }
        if let Some(cert) = &self.tls_cert {
            check_pem(cert, "tls_cert", PemWant::Certificates)?;
        }
        if let Some(key) = &self.tls_key {
            check_pem(key, "tls_key", PemWant::PrivateKey)?;
        }
        Ok(())
    }
}

enum PemWant {
    Certificates,
    PrivateKey,
}

/// The largest TLS file read (a full public CA bundle is about 0.2 MiB).
const MAX_PEM_FILE: u64 = 4 << 20;

/// Reads `path` and checks it holds PEM certificates (at least one) or a PEM
/// private key. The error names the knob and the file, never the contents.
fn check_pem(path: &Path, knob: &str, want: PemWant) -> Result<()> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    use std::io::Read;
    let shown = path.display();
    let cannot = |e: std::io::Error| Error::config(format!("{knob}: cannot read {shown}: {e}"));
    // Checked before opening: opening a FIFO blocks, and reading a device
    // such as /dev/zero never ends.
    if !std::fs::metadata(path).map_err(cannot)?.is_file() {
        return Err(Error::config(format!(
            "{knob}: {shown} is not a regular file"
        )));
    }
    let mut data = Vec::new();
    std::fs::File::open(path)
        .map_err(cannot)?
        .take(MAX_PEM_FILE + 1)
        .read_to_end(&mut data)
        .map_err(cannot)?;
    if data.len() as u64 > MAX_PEM_FILE {
        return Err(Error::config(format!(
            "{knob}: {shown} is larger than {} MiB, too large for a PEM file",
            MAX_PEM_FILE >> 20
        )));
    }
    match want {
        PemWant::Certificates => {
            let mut n = 0;
            for c in CertificateDer::pem_slice_iter(&data) {
                if c.is_err() {
                    return Err(Error::config(format!(
                        "{knob}: {shown} has a malformed PEM certificate"
                    )));
                }
                n += 1;
            }
            if n == 0 {
                return Err(Error::config(format!(
                    "{knob}: {shown} holds no PEM certificate (expected -----BEGIN CERTIFICATE-----)"
                )));
            }
        }
        PemWant::PrivateKey => {
            // Whatever the parser says may quote the file: say only what is wrong.
            if PrivateKeyDer::from_pem_slice(&data).is_err() {
                return Err(Error::config(format!(
                    "{knob}: {shown} holds no PEM private key (expected -----BEGIN PRIVATE KEY-----, \
                     -----BEGIN RSA PRIVATE KEY----- or -----BEGIN EC PRIVATE KEY-----)"
                )));
            }
        }
    }
    Ok(())
}

// The password never appears in Debug output (nor anywhere else we print).
impl fmt::Debug for ConnectConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConnectConfig")
            .field("endpoint", &self.endpoint())
            .field("user", &self.user)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .field("database", &self.database)
            .field("query_timeout", &self.query_timeout)
            .field("reset_on_return", &self.reset_on_return)
            .field("tls_mode", &self.tls_mode)
            .field("tls_ca", &self.tls_ca)
            .field("tls_cert", &self.tls_cert)
            .field("tls_key", &self.tls_key)
            .finish()
    }
}

/// The whole configuration of a pool: where to connect and the pool knobs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Config {
    pub(crate) connect: ConnectConfig,
    pub(crate) pool: PoolConfig,
    pub(crate) topology: TopologyConfig,
}

/// How the primary is probed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PingType {
    /// A new connection each time (then `SELECT 1`).
    Connect,
    /// `SELECT 1` on a connection the monitor keeps.
    Select,
    /// Upsert a timestamp into `heartbeat_table` on a kept connection.
    Insert,
}

/// MHA's list of server errors that prove the server is alive.
pub const DEFAULT_ALIVE_ERROR_CODES: &[u16] = &[
    1040, 1042, 1043, 1044, 1045, 1129, 1130, 1203, 1226, 1251, 1275,
];

/// Hosts, roles and the primary monitor (multi-host URLs).
#[derive(Clone, PartialEq)]
pub struct TopologyConfig {
    /// Hosts after the first (the first is in `ConnectConfig`).
    pub(crate) more_hosts: Vec<(String, u16)>,
    pub(crate) replication: bool,
    pub(crate) monitor: Option<bool>,
    pub(crate) ping_type: PingType,
    pub(crate) ping_interval: Duration,
    pub(crate) ping_timeout: Duration,
    pub(crate) failure_threshold: u32,
    pub(crate) alive_error_codes: Vec<u16>,
    pub(crate) secondary_check: bool,
    pub(crate) max_replication_lag: Option<Duration>,
    pub(crate) read_fallback: bool,
    pub(crate) heartbeat_table: String,
    pub(crate) min_failover_interval: Duration,
    pub(crate) monitor_user: Option<String>,
    pub(crate) monitor_password: Option<String>,
}

impl Default for TopologyConfig {
    fn default() -> Self {
        TopologyConfig {
            more_hosts: Vec::new(),
            replication: false,
            monitor: None,
            ping_type: PingType::Select,
            ping_interval: Duration::from_secs(1),
            ping_timeout: Duration::from_secs(2),
            failure_threshold: 4,
            alive_error_codes: DEFAULT_ALIVE_ERROR_CODES.to_vec(),
            secondary_check: true,
            max_replication_lag: Some(Duration::from_secs(30)),
            read_fallback: true,
            heartbeat_table: "staunch_heartbeat".into(),
            min_failover_interval: Duration::from_secs(60),
            monitor_user: None,
            monitor_password: None,
        }
    }
}

impl fmt::Debug for TopologyConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TopologyConfig")
            .field("more_hosts", &self.more_hosts)
            .field("replication", &self.replication)
            .field("monitor", &self.monitor_enabled())
            .field("ping_type", &self.ping_type)
            .field("ping_interval", &self.ping_interval)
            .field("ping_timeout", &self.ping_timeout)
            .field("failure_threshold", &self.failure_threshold)
            .field("alive_error_codes", &self.alive_error_codes)
            .field("secondary_check", &self.secondary_check)
            .field("max_replication_lag", &self.max_replication_lag)
            .field("read_fallback", &self.read_fallback)
            .field("min_failover_interval", &self.min_failover_interval)
            .field("monitor_user", &self.monitor_user)
            .field(
                "monitor_password",
                &self.monitor_password.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

impl TopologyConfig {
    /// Whether the primary monitor runs: by default only with
    /// `topology=replication`.
    pub fn monitor_enabled(&self) -> bool {
        self.monitor.unwrap_or(self.replication)
    }

    fn validate(&self) -> Result<()> {
        if !self.more_hosts.is_empty() && !self.replication {
            return Err(Error::config(
                "the url names several hosts: add topology=replication (the first host is the initial primary)",
            ));
        }
        if self.failure_threshold == 0 || self.failure_threshold > 1000 {
            return Err(Error::config(format!(
                "failure_threshold must be between 1 and 1000, got {}",
                self.failure_threshold
            )));
        }
        for (knob, v) in [
            ("ping_interval", self.ping_interval),
            ("ping_timeout", self.ping_timeout),
        ] {
            if v < Duration::from_millis(10) || v > Duration::from_secs(3600) {
                return Err(Error::config(format!(
                    "{knob} must be between 10ms and 1h, got {}",
                    fmt_duration(v)
                )));
            }
        }
        if self.heartbeat_table.is_empty()
            || !self
                .heartbeat_table
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        {
            return Err(Error::config(format!(
                "heartbeat_table must be a plain table name (letters, digits, _ and .), got {:?}",
                self.heartbeat_table
            )));
        }
        Ok(())
    }
}

impl Config {
    /// Parses a URL: `mysql://user:pass@host:port/db?knob=value&…`.
    ///
    /// User, password and database are percent-decoded. `?socket=/path` connects
    /// through a unix socket instead of TCP (staunch never switches to a socket on
    /// its own). Every knob of [`Builder`] is accepted as a parameter.
    pub fn from_url(url: &str) -> Result<Config> {
        let mut b = Builder::default();
        b.apply_url(url)?;
        b.config()
    }

    /// The pool knobs.
    pub fn pool(&self) -> &PoolConfig {
        &self.pool
    }
    /// The connection settings.
    pub fn connect(&self) -> &ConnectConfig {
        &self.connect
    }
    /// Hosts and the primary monitor.
    pub fn topology(&self) -> &TopologyConfig {
        &self.topology
    }
}

/// Builds a [`Config`] (and through [`crate::Pool::builder`], a pool) knob by knob.
///
/// Setters take values as they are; ranges are checked once, when the
/// configuration is finished, and a bad value is a `Config` error naming the knob.
#[derive(Clone, Default)]
pub struct Builder {
    cfg: Config,
    error: Option<Error>,
    pub(crate) listener: Option<std::sync::Arc<dyn crate::events::EventListener>>,
    pub(crate) secondary: Option<crate::topology::SecondaryCheck>,
}

impl fmt::Debug for Builder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Builder")
            .field("config", &self.cfg)
            .field("error", &self.error)
            .field("listener", &self.listener.is_some())
            .finish()
    }
}

macro_rules! setter {
    ($(#[$doc:meta])* $name:ident, $field:ident . $sub:ident, $t:ty) => {
        $(#[$doc])*
        pub fn $name(mut self, v: $t) -> Self {
            self.cfg.$field.$sub = v.into();
            self
        }
    };
}

impl Builder {
    /// A builder with every knob at its default.
    pub fn new() -> Builder {
        Builder::default()
    }

    /// Starts from a URL (see [`Config::from_url`]); later setters override it.
    /// A bad URL is reported by `build()`.
    pub fn url(mut self, url: &str) -> Self {
        if let Err(e) = self.apply_url(url) {
            self.error.get_or_insert(e);
        }
        self
    }

    /// Sets one knob by name from its text form, as in a URL parameter.
    pub fn set(mut self, knob: &str, value: &str) -> Self {
        if let Err(e) = self.set_knob(knob, value) {
            self.error.get_or_insert(e);
        }
        self
    }

    setter!(
        /// Server host name or IP address. Defaults to `127.0.0.1`.
        host, connect.host, &str);
    setter!(
        /// Server TCP port. Defaults to 3306.
        port, connect.port, u16);
    /// Connect through this unix socket instead of TCP. Off by default.
    pub fn socket(mut self, path: Option<&str>) -> Self {
        self.cfg.connect.socket = path.map(str::to_owned);
        self
    }
    /// User name. Defaults to none (the server's anonymous user).
    pub fn user(mut self, user: &str) -> Self {
        self.cfg.connect.user = Some(user.to_owned());
        self
    }
    /// Password. Defaults to none. Never printed by staunch.
    pub fn password(mut self, password: &str) -> Self {
        self.cfg.connect.password = Some(password.to_owned());
        self
    }
    /// Default database. Defaults to none.
    pub fn database(mut self, db: &str) -> Self {
        self.cfg.connect.database = Some(db.to_owned());
        self
    }
    setter!(
        /// Socket read/write timeout while the application owns a connection.
        /// Defaults to none (a query may run as long as it needs). Range ≥ 1 ms.
        query_timeout, connect.query_timeout, Option<Duration>);
    setter!(
        /// Send `COM_RESET_CONNECTION` on every return (clears session variables,
        /// temporary tables, prepared statements). An open transaction is rolled
        /// back on return whatever this says. Defaults to false.
        reset_on_return, connect.reset_on_return, bool);
    /// Whether and how connections are encrypted: `disabled` (the default),
    /// `preferred`, `required`, `verify_ca` or `verify_identity`. See
    /// [`TlsMode`].
    pub fn tls_mode(mut self, mode: TlsMode) -> Self {
        self.cfg.connect.tls_mode = mode;
        self
    }
    /// PEM file of the CA certificate(s) that server certificates must chain
    /// to (`verify_ca`, `verify_identity`). Checked when the configuration is
    /// built. Off by default.
    pub fn tls_ca(mut self, path: Option<&str>) -> Self {
        self.cfg.connect.tls_ca = path.map(PathBuf::from);
        self
    }
    /// PEM file of the client certificate (chain), for servers that require
    /// one (`REQUIRE X509`). Needs `tls_key`. Off by default.
    pub fn tls_cert(mut self, path: Option<&str>) -> Self {
        self.cfg.connect.tls_cert = path.map(PathBuf::from);
        self
    }
    /// PEM file of the client certificate's private key. Needs `tls_cert`.
    /// Only the path is ever printed. Off by default.
    pub fn tls_key(mut self, path: Option<&str>) -> Self {
        self.cfg.connect.tls_key = path.map(PathBuf::from);
        self
    }
    setter!(
        /// Most connections the pool holds, idle and in use together.
        /// Defaults to 10. Range 1 to 4096.
        max_size, pool.max_size, usize);
    setter!(
        /// Fewest idle connections the housekeeper keeps open (refilled in the
        /// background). Defaults to 0. Range 0 to `max_size`.
        min_idle, pool.min_idle, usize);
    setter!(
        /// Longest time `get()` waits for a connection before it fails with
        /// `PoolExhausted` or `Unreachable`. Defaults to 10 s. Range 1 ms to 1 h.
        connection_timeout, pool.connection_timeout, Duration);
    setter!(
        /// Hard deadline for one whole connect: TCP connect, server greeting,
        /// authentication and session set-up. A connect still running at the
        /// deadline has its socket shut down from outside. Defaults to 3 s.
        /// Range 1 ms to 1 h.
        connect_timeout, pool.connect_timeout, Duration);
    setter!(
        /// Bound on one validation (`COM_PING`). Defaults to 1 s. Range 1 ms to 1 h.
        validation_timeout, pool.validation_timeout, Duration);
    setter!(
        /// Idle connections above `min_idle` are closed after this long unused.
        /// Defaults to 10 min; `None` (URL: `off`) keeps them. Range ≥ 10 ms.
        idle_timeout, pool.idle_timeout, Option<Duration>);
    setter!(
        /// Every connection is retired after this long, minus a random jitter of
        /// up to 2.5 % so that they do not all retire at once. Set it below the
        /// server's `wait_timeout`. Defaults to 30 min; `None` keeps them forever.
        max_lifetime, pool.max_lifetime, Option<Duration>);
    setter!(
        /// Idle connections are validated this often (minus up to 10 % jitter).
        /// An idle connection is reserved before it is checked, so it is never
        /// handed out meanwhile. Defaults to 2 min; `None` turns it off. Must be
        /// shorter than `max_lifetime`.
        keepalive_interval, pool.keepalive_interval, Option<Duration>);
    setter!(
        /// A connection borrowed for longer than this is reported (event and
        /// log) with the borrowing thread. Defaults to off. Range ≥ 10 ms.
        leak_detection_threshold, pool.leak_detection_threshold, Option<Duration>);
    setter!(
        /// Connect threads kept ready. More start when all of them are stuck in
        /// slow connects while requests wait. Defaults to 2. Range 1 to 64.
        adder_threads, pool.adder_threads, usize);
    setter!(
        /// A connection idle for less than this is handed out without
        /// validation. Defaults to 500 ms; 0 validates on every borrow.
        alive_bypass_window, pool.alive_bypass_window, Duration);
    setter!(
        /// When set, building the pool makes one connection first and fails if
        /// that does not succeed within this time (0: one attempt, bounded by
        /// `connect_timeout`; a permanent error such as access denied fails at
        /// once). Defaults to off (URL: `off`): the pool starts without
        /// connecting and `get()` reports problems.
        initialization_fail_timeout, pool.initialization_fail_timeout, Option<Duration>);

    /// Finishes the configuration, checking every knob.
    pub fn config(self) -> Result<Config> {
        if let Some(e) = self.error {
            return Err(e);
        }
        self.cfg.pool.validate()?;
        self.cfg.topology.validate()?;
        if let Some(q) = self.cfg.connect.query_timeout {
            if q < Duration::from_millis(1) {
                return Err(Error::config("query_timeout must be at least 1ms, or off"));
            }
        }
        if self.cfg.connect.socket.is_none() && self.cfg.connect.host.is_empty() {
            return Err(Error::config("host must not be empty"));
        }
        if self.cfg.connect.port == 0 {
            return Err(Error::config("port must be between 1 and 65535, got 0"));
        }
        self.cfg.connect.validate_tls()?;
        Ok(self.cfg)
    }

    fn apply_url(&mut self, url: &str) -> Result<()> {
        let rest = url
            .strip_prefix("mysql://")
            .or_else(|| url.strip_prefix("mariadb://"))
            .ok_or_else(|| {
                Error::config(format!(
                    "url must start with mysql:// or mariadb://, got {:?}",
                    redact_url(url)
                ))
            })?;
        let (main, query) = match rest.split_once('?') {
            Some((m, q)) => (m, Some(q)),
            None => (rest, None),
        };
        let (authority, path) = match main.split_once('/') {
            Some((a, p)) => (a, p),
            None => (main, ""),
        };
        let (userinfo, hostport) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, authority),
        };
        let c = &mut self.cfg.connect;
        if let Some(ui) = userinfo {
            let (u, p) = match ui.split_once(':') {
                Some((u, p)) => (u, Some(p)),
                None => (ui, None),
            };
            if !u.is_empty() {
                c.user = Some(percent_decode(u, "user")?);
            }
            if let Some(p) = p {
                c.password = Some(percent_decode(p, "password")?);
            }
        }
        if !hostport.is_empty() {
            let mut hosts = Vec::new();
            for hp in hostport.split(',') {
                if hp.is_empty() {
                    return Err(Error::config(format!(
                        "the host list {hostport:?} has an empty entry"
                    )));
                }
                let (host, port) = split_host_port(hp)?;
                hosts.push((host, port.unwrap_or(c.port)));
            }
            for (i, h) in hosts.iter().enumerate() {
                if hosts[..i].contains(h) {
                    return Err(Error::config(format!(
                        "host {}:{} is listed twice",
                        h.0, h.1
                    )));
                }
            }
            let (host, port) = hosts.remove(0);
            c.host = host;
            c.port = port;
            self.cfg.topology.more_hosts = hosts;
        }
        if path.contains('@') {
            // Most likely a misplaced user:password@ (mysql:///u:pw@h/db):
            // taken as a database name it would be printed and sent to the
            // server. The path is not quoted, for the same reason.
            return Err(Error::config(
                "the url's database name contains '@': user:password@ goes right after mysql:// \
                 (write an '@' that belongs to the database name as %40)",
            ));
        }
        if !path.is_empty() {
            c.database = Some(percent_decode(path, "database")?);
        }
        if let Some(q) = query {
            for pair in q.split('&').filter(|p| !p.is_empty()) {
                let (k, v) = pair.split_once('=').ok_or_else(|| {
                    Error::config(format!(
                        "url parameter {pair:?} has no value (write {pair}=VALUE)"
                    ))
                })?;
                let v = percent_decode(v, k)?;
                self.set_knob(k, &v)?;
            }
        }
        Ok(())
    }

    fn set_knob(&mut self, knob: &str, v: &str) -> Result<()> {
        let p = &mut self.cfg.pool;
        let c = &mut self.cfg.connect;
        match knob {
            "max_size" => p.max_size = parse_usize(knob, v)?,
            "min_idle" => p.min_idle = parse_usize(knob, v)?,
            "connection_timeout" => p.connection_timeout = parse_duration(knob, v)?,
            "connect_timeout" => p.connect_timeout = parse_duration(knob, v)?,
            "validation_timeout" => p.validation_timeout = parse_duration(knob, v)?,
            "idle_timeout" => p.idle_timeout = parse_opt_duration(knob, v)?,
            "max_lifetime" => p.max_lifetime = parse_opt_duration(knob, v)?,
            "keepalive_interval" => p.keepalive_interval = parse_opt_duration(knob, v)?,
            "leak_detection_threshold" => p.leak_detection_threshold = parse_opt_duration(knob, v)?,
            "adder_threads" => p.adder_threads = parse_usize(knob, v)?,
            "alive_bypass_window" => p.alive_bypass_window = parse_duration(knob, v)?,
            // Here 0 means "one attempt", so only `off` turns it off.
            "initialization_fail_timeout" => {
                p.initialization_fail_timeout = match v.trim() {
                    "off" | "none" => None,
                    _ => Some(parse_duration(knob, v)?),
                }
            }
            "query_timeout" => c.query_timeout = parse_opt_duration(knob, v)?,
            "reset_on_return" => c.reset_on_return = parse_bool(knob, v)?,
            "socket" => {
                c.socket = if v.is_empty() {
                    None
                } else {
                    Some(v.to_owned())
                }
            }
            "tls_mode" => c.tls_mode = TlsMode::parse(v)?,
            "tls_ca" => c.tls_ca = opt_path(v),
            "tls_cert" => c.tls_cert = opt_path(v),
            "tls_key" => c.tls_key = opt_path(v),
            "host" => c.host = v.to_owned(),
            "port" => {
                c.port = v.parse().map_err(|_| {
                    Error::config(format!("port must be a number from 1 to 65535, got {v:?}"))
                })?
            }
            "user" => c.user = Some(v.to_owned()),
            "topology" => {
                self.cfg.topology.replication = match v.trim() {
                    "single" => false,
                    "replication" => true,
                    _ => {
                        return Err(Error::config(format!(
                            "topology must be single or replication, got {v:?}"
                        )))
                    }
                }
            }
            "monitor" => self.cfg.topology.monitor = Some(parse_bool(knob, v)?),
            "ping_type" => {
                self.cfg.topology.ping_type = match v.trim() {
                    "connect" => PingType::Connect,
                    "select" => PingType::Select,
                    "insert" => PingType::Insert,
                    _ => {
                        return Err(Error::config(format!(
                            "ping_type must be connect, select or insert, got {v:?}"
                        )))
                    }
                }
            }
            "ping_interval" => self.cfg.topology.ping_interval = parse_duration(knob, v)?,
            "ping_timeout" => self.cfg.topology.ping_timeout = parse_duration(knob, v)?,
            "failure_threshold" => {
                self.cfg.topology.failure_threshold = v.trim().parse().map_err(|_| {
                    Error::config(format!(
                        "failure_threshold must be a whole number, got {v:?}"
                    ))
                })?
            }
            "alive_error_codes" => {
                self.cfg.topology.alive_error_codes = v
                    .split(',')
                    .filter(|x| !x.trim().is_empty())
                    .map(|x| {
                        x.trim().parse::<u16>().map_err(|_| {
                            Error::config(format!(
                                "alive_error_codes must be comma-separated error numbers, got {x:?}"
                            ))
                        })
                    })
                    .collect::<Result<_>>()?
            }
            "secondary_check" => {
                self.cfg.topology.secondary_check = match v.trim() {
                    "replicas" => true,
                    "none" | "off" => false,
                    _ => {
                        return Err(Error::config(format!(
                            "secondary_check must be replicas or none, got {v:?}"
                        )))
                    }
                }
            }
            "max_replication_lag" => {
                self.cfg.topology.max_replication_lag = parse_opt_duration(knob, v)?
            }
            "read_fallback" => {
                self.cfg.topology.read_fallback = match v.trim() {
                    "writer" => true,
                    "fail" => false,
                    _ => {
                        return Err(Error::config(format!(
                            "read_fallback must be writer or fail, got {v:?}"
                        )))
                    }
                }
            }
            "heartbeat_table" => self.cfg.topology.heartbeat_table = v.trim().to_owned(),
            "min_failover_interval" => {
                self.cfg.topology.min_failover_interval = parse_duration(knob, v)?
            }
            "monitor_user" => self.cfg.topology.monitor_user = Some(v.to_owned()),
            "monitor_password" => self.cfg.topology.monitor_password = Some(v.to_owned()),
            "password" => c.password = Some(v.to_owned()),
            "database" => c.database = Some(v.to_owned()),
            _ => {
                return Err(Error::config(format!(
                    "unknown knob {knob:?} (known: {})",
                    KNOBS.join(", ")
                )))
            }
        }
        Ok(())
    }
}

/// Every knob name accepted by [`Builder::set`] and as a URL parameter.
pub const KNOBS: &[&str] = &[
    "max_size",
    "min_idle",
    "connection_timeout",
    "connect_timeout",
    "validation_timeout",
    "idle_timeout",
    "max_lifetime",
    "keepalive_interval",
    "leak_detection_threshold",
    "adder_threads",
    "alive_bypass_window",
    "initialization_fail_timeout",
    "query_timeout",
    "reset_on_return",
    "socket",
    "tls_mode",
    "tls_ca",
    "tls_cert",
    "tls_key",
    "host",
    "port",
    "user",
    "password",
    "database",
    "topology",
    "monitor",
    "ping_type",
    "ping_interval",
    "ping_timeout",
    "failure_threshold",
    "alive_error_codes",
    "secondary_check",
    "max_replication_lag",
    "read_fallback",
    "heartbeat_table",
    "min_failover_interval",
    "monitor_user",
    "monitor_password",
];

fn split_host_port(hp: &str) -> Result<(String, Option<u16>)> {
    let bad_port =
        |p: &str| Error::config(format!("port must be a number from 1 to 65535, got {p:?}"));
    if let Some(rest) = hp.strip_prefix('[') {
        let (h, after) = rest
            .split_once(']')
            .ok_or_else(|| Error::config(format!("host {hp:?} has an unclosed '['")))?;
        let port = match after.strip_prefix(':') {
            Some(p) => Some(
                p.parse::<u16>()
                    .ok()
                    .filter(|p| *p != 0)
                    .ok_or_else(|| bad_port(p))?,
            ),
            None if after.is_empty() => None,
            None => {
                return Err(Error::config(format!(
                    "unexpected {after:?} after host [{h}]"
                )))
            }
        };
        return Ok((h.to_owned(), port));
    }
    match hp.rsplit_once(':') {
        Some((h, p)) => {
            if h.is_empty() {
                return Err(Error::config(format!("host is empty in {hp:?}")));
            }
            let port = p
                .parse::<u16>()
                .ok()
                .filter(|p| *p != 0)
                .ok_or_else(|| bad_port(p))?;
            Ok((h.to_owned(), Some(port)))
        }
        None => Ok((hp.to_owned(), None)),
    }
}

fn percent_decode(s: &str, what: &str) -> Result<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = b
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| Error::config(format!("{what} has a bad percent escape")))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out)
        .map_err(|_| Error::config(format!("{what} is not valid UTF-8 after percent-decoding")))
}

/// A path knob: empty means unset.
fn opt_path(v: &str) -> Option<PathBuf> {
    if v.is_empty() {
        None
    } else {
        Some(PathBuf::from(v))
    }
}

fn parse_usize(knob: &str, v: &str) -> Result<usize> {
    v.trim()
        .parse()
        .map_err(|_| Error::config(format!("{knob} must be a whole number, got {v:?}")))
}

fn parse_bool(knob: &str, v: &str) -> Result<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Ok(true),
        "false" | "0" | "no" | "off" => Ok(false),
        _ => Err(Error::config(format!(
            "{knob} must be true or false, got {v:?}"
        ))),
    }
}

/// Parses `250ms`, `2s`, `1.5s`, `5m`, `1h`, `100us`. A bare number is rejected
/// (the unit would be a guess), except `0`.
pub fn parse_duration(knob: &str, v: &str) -> Result<Duration> {
    let t = v.trim();
    let bad = || {
        Error::config(format!(
            "{knob} must be a duration such as 250ms, 2s, 5m or 1h, got {v:?}"
        ))
    };
    if t == "0" {
        return Ok(Duration::ZERO);
    }
    if t.starts_with('-') {
        return Err(Error::config(format!(
            "{knob} must not be negative, got {v:?}"
        )));
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(bad)?;
    let (num, unit) = t.split_at(split);
    let n: f64 = num.parse().map_err(|_| bad())?;
    let secs = match unit {
        "us" | "µs" => n / 1e6,
        "ms" => n / 1e3,
        "s" => n,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        "d" => n * 86400.0,
        _ => return Err(bad()),
    };
    if !secs.is_finite() || secs > 1e9 {
        return Err(bad());
    }
    Ok(Duration::from_secs_f64(secs))
}

fn parse_opt_duration(knob: &str, v: &str) -> Result<Option<Duration>> {
    match v.trim() {
        "off" | "none" | "0" => Ok(None),
        _ => parse_duration(knob, v).map(Some),
    }
}

/// Formats a duration the way URLs write it (`250ms`, `2s`, `1.5s`).
pub fn fmt_duration(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1e3;
    if d.is_zero() {
        "0".into()
    } else if ms < 1.0 {
        format!("{}us", d.as_micros())
    } else if ms < 1000.0 {
        format!("{}ms", (ms * 10.0).round() / 10.0)
    } else {
        format!("{}s", (ms / 100.0).round() / 10.0)
    }
}

/// The URL with every password replaced (the userinfo's and any
/// `*password=` parameter), for messages.
///
/// Malformed URLs are messages too (the parse error quotes them), so a
/// `user:password@` part is found even where it does not belong: without
/// `scheme://` (`mysql:/u:pw@h`, `u:pw@h`) or after a slash
/// (`mysql:///u:pw@h`). Then everything before the last `@` is replaced,
/// which may hide more than the password but never less.
pub fn redact_url(url: &str) -> String {
    let (main, query) = match url.split_once('?') {
        Some((m, q)) => (m, Some(q)),
        None => (url, None),
    };
    // A scheme is letters, digits, '+', '-' and '.': a "://" after anything
    // else (an '@', say) is not the scheme's.
    let (scheme, rest) = match main.find("://") {
        Some(scheme_end)
            if main[..scheme_end]
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b)) =>
        {
            main.split_at(scheme_end + 3)
        }
        _ => ("", main),
    };
    let end = rest.find('/').unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let mut out = match authority.rsplit_once('@') {
        Some((ui, hp)) => match ui.split_once(':') {
            Some((u, _)) => format!("{scheme}{u}:<redacted>@{hp}{tail}"),
            None => main.to_owned(),
        },
        None => match rest.rsplit_once('@') {
            Some((_, after)) => format!("{scheme}<redacted>@{after}"),
            None => main.to_owned(),
        },
    };
    if let Some(q) = query {
        let params: Vec<String> = q
            .split('&')
            .map(|p| match p.split_once('=') {
                Some((k, _)) if k.to_ascii_lowercase().contains("password") => {
                    format!("{k}=<redacted>")
                }
                _ => p.to_owned(),
            })
            .collect();
        out.push('?');
        out.push_str(&params.join("&"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_parses_every_part() {
        let c = Config::from_url(
            "mysql://app:p%40ss@db.example:3307/shop?max_size=4&connect_timeout=250ms&idle_timeout=off",
        )
        .unwrap();
        assert_eq!(c.connect.user.as_deref(), Some("app"));
        assert_eq!(c.connect.password.as_deref(), Some("p@ss"));
        assert_eq!(c.connect.host, "db.example");
        assert_eq!(c.connect.port, 3307);
        assert_eq!(c.connect.database.as_deref(), Some("shop"));
        assert_eq!(c.pool.max_size, 4);
        assert_eq!(c.pool.connect_timeout, Duration::from_millis(250));
        assert_eq!(c.pool.idle_timeout, None);
    }

    #[test]
    fn bad_input_names_the_knob() {
        for (url, needle) in [
            ("mysql://h/db?max_sise=3", "unknown knob \"max_sise\""),
            ("mysql://h/db?max_size=-1", "max_size"),
            (
                "mysql://h/db?connect_timeout=-5s",
                "connect_timeout must not be negative",
            ),
            (
                "mysql://h/db?connect_timeout=5",
                "connect_timeout must be a duration",
            ),
            ("mysql://h/db?max_size=0", "max_size must be between"),
            (
                "mysql://h/db?min_idle=20",
                "min_idle (20) must not exceed max_size",
            ),
            ("mysql://h:99999/db", "port"),
            ("postgres://h/db", "must start with mysql://"),
            ("mysql://h/db?max_size", "has no value"),
            (
                "mysql://h/db?keepalive_interval=2h&max_lifetime=1h",
                "keepalive_interval",
            ),
            ("mysql://a,b/db", "several hosts: add topology=replication"),
            ("mysql://a:1,a:1/db?topology=replication", "listed twice"),
            ("mysql://a,,b/db?topology=replication", "empty entry"),
            (
                "mysql://a,b/db?topology=ring",
                "topology must be single or replication",
            ),
            (
                "mysql://a,b/db?topology=replication&ping_type=ssh",
                "ping_type",
            ),
            (
                "mysql://a,b/db?topology=replication&alive_error_codes=1040,x",
                "alive_error_codes",
            ),
        ] {
            let e = Config::from_url(url).expect_err(url);
            assert_eq!(e.kind(), crate::ErrorKind::Config, "{url}");
            assert!(e.to_string().contains(needle), "{url}: {e}");
        }
    }

    #[test]
    fn password_never_printed() {
        let c = Config::from_url("mysql://u:hunter2secret@h/db").unwrap();
        assert!(!format!("{c:?}").contains("hunter2secret"));
        let e = Config::from_url("mysql://u:hunter2secret@h/db?bogus=1").unwrap_err();
        assert!(!e.to_string().contains("hunter2secret"));
        assert_eq!(
            redact_url("mysql://u:hunter2secret@h/db"),
            "mysql://u:<redacted>@h/db"
        );
        let e = Config::from_url("pg://u:hunter2secret@h/db").unwrap_err();
        assert!(!e.to_string().contains("hunter2secret"), "{e}");
    }

    /// A file under the temp dir holding `text`, removed on drop.
    struct TempFile(std::path::PathBuf);
    impl TempFile {
        fn new(name: &str, text: &str) -> TempFile {
            let p = std::env::temp_dir().join(format!("staunch-{}-{name}", std::process::id()));
            std::fs::write(&p, text).unwrap();
            TempFile(p)
        }
        fn s(&self) -> String {
            self.0.display().to_string()
        }
    }
    impl Drop for TempFile {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    // Not a real certificate or key: only the PEM framing is checked here
    // (and the contents of the key must never be echoed).
    const FAKE_CERT: &str =
        "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUb2s=\n-----END CERTIFICATE-----\n";
    const FAKE_KEY: &str =
        "-----BEGIN PRIVATE KEY-----\nS3cr3tK3yMaterialDoNotPrint\n-----END PRIVATE KEY-----\n";

    #[test]
    fn tls_knobs_parse_and_default() {
        let c = Config::from_url("mysql://h/db").unwrap();
        assert_eq!(c.connect.tls_mode(), TlsMode::Disabled);
        for (v, m) in [
            ("disabled", TlsMode::Disabled),
            ("preferred", TlsMode::Preferred),
            ("required", TlsMode::Required),
            ("REQUIRED", TlsMode::Required),
            ("verify_identity", TlsMode::VerifyIdentity),
        ] {
            let c = Config::from_url(&format!("mysql://h/db?tls_mode={v}")).unwrap();
            assert_eq!(c.connect.tls_mode(), m, "{v}");
            assert_eq!(TlsMode::parse(m.as_str()).unwrap(), m);
        }
        let ca = TempFile::new("ca.pem", FAKE_CERT);
        let cert = TempFile::new("cert.pem", FAKE_CERT);
        let key = TempFile::new("key.pem", FAKE_KEY);
        let c = Config::from_url(&format!(
            "mysql://h/db?tls_mode=verify_ca&tls_ca={}&tls_cert={}&tls_key={}",
            ca.s(),
            cert.s(),
            key.s()
        ))
        .unwrap();
        assert_eq!(c.connect.tls_mode(), TlsMode::VerifyCa);
        assert_eq!(c.connect.tls_ca(), Some(ca.0.as_path()));
        assert_eq!(c.connect.tls_cert(), Some(cert.0.as_path()));
        assert_eq!(c.connect.tls_key(), Some(key.0.as_path()));
        let b = Builder::new()
            .tls_mode(TlsMode::VerifyCa)
            .tls_ca(Some(&ca.s()))
            .config()
            .unwrap();
        assert_eq!(b.connect.tls_ca(), Some(ca.0.as_path()));
        // Paths are shown (they are not secrets), the key is not.
        let dbg = format!("{c:?}");
        assert!(dbg.contains(&key.s()), "{dbg}");
        assert!(!dbg.contains("S3cr3t"), "{dbg}");
        // verify_identity may rely on the bundled public roots alone.
        Config::from_url("mysql://h/db?tls_mode=verify_identity").unwrap();
    }

    #[test]
    fn bad_tls_settings_say_what_is_wrong() {
        let ca = TempFile::new("ca2.pem", FAKE_CERT);
        let key = TempFile::new("key2.pem", FAKE_KEY);
        let not_pem = TempFile::new("notpem.pem", "hello, I am not a certificate\n");
        let broken = TempFile::new(
            "broken.pem",
            "-----BEGIN CERTIFICATE-----\nMIIB\n", // no END line
        );
        let huge = TempFile::new("huge.pem", &"x".repeat((4 << 20) + 1));
        let ca = ca.s();
        let key_s = key.s();
        for (url, needle) in [
            ("mysql://h/db?tls_mode=on".to_string(), "tls_mode must be disabled, preferred, required, verify_ca or verify_identity, got \"on\""),
            (format!("mysql://h/db?tls_mode=required&tls_cert={ca}"), "tls_cert is set without tls_key"),
            (format!("mysql://h/db?tls_mode=required&tls_key={key_s}"), "tls_key is set without tls_cert"),
            ("mysql://h/db?tls_mode=verify_ca".to_string(), "tls_mode=verify_ca needs tls_ca"),
            (format!("mysql://h/db?tls_ca={ca}"), "tls_ca is set but tls_mode is disabled"),
            (
                "mysql://h/db?tls_mode=verify_ca&tls_ca=/nonexistent/staunch-ca.pem".to_string(),
                "tls_ca: cannot read /nonexistent/staunch-ca.pem",
            ),
            (format!("mysql://h/db?tls_mode=verify_ca&tls_ca={}", not_pem.s()), "holds no PEM certificate"),
            (format!("mysql://h/db?tls_mode=verify_ca&tls_ca={}", broken.s()), "malformed PEM certificate"),
            (
                format!("mysql://h/db?tls_mode=required&tls_cert={ca}&tls_key={ca}"),
                "tls_key: ",
            ),
            (
                "mysql://h/db?tls_mode=required&socket=/tmp/x.sock".to_string(),
                "tls_mode=required cannot be used with socket",
            ),
            // A device would be read forever, a FIFO would block the open.
            (
                "mysql://h/db?tls_mode=verify_ca&tls_ca=/dev/zero".to_string(),
                "tls_ca: /dev/zero is not a regular file",
            ),
            (
                format!("mysql://h/db?tls_mode=verify_ca&tls_ca={}", huge.s()),
                "is larger than 4 MiB, too large for a PEM file",
            ),
        ] {
            let e = Config::from_url(&url).expect_err(&url);
            assert_eq!(e.kind(), crate::ErrorKind::Config, "{url}");
            assert!(e.to_string().contains(needle), "{url}: {e}");
        }
        // A key file that is not a key: the error names the file, not its contents.
        let e = Config::from_url(&format!(
            "mysql://h/db?tls_mode=required&tls_cert={ca}&tls_key={}",
            not_pem.s()
        ))
        .unwrap_err();
        assert!(e.to_string().contains(&not_pem.s()), "{e}");
        assert!(!e.to_string().contains("hello"), "{e}");
        // preferred over a socket is plaintext, and allowed.
        Config::from_url("mysql://h/db?tls_mode=preferred&socket=/tmp/x.sock").unwrap();
    }

    /// Found by the config_url fuzz target: a URL without `scheme://` (a
    /// typo, or a forgotten scheme) had its password quoted in the error.
    #[test]
    fn password_never_printed_from_a_malformed_url() {
        for url in [
            "u:hunter2secret@h/db",
            ":hunter2secret@/?",
            "mysql:/u:hunter2secret@h/db",
            "mysql:u:hunter2secret@h/db",
            "mysql//u:hunter2secret@h/db?max_size=2",
            "mysql:///u:hunter2secret@h/db",
            // A "://" after the userinfo is not a scheme.
            "=:hunter2secret=@ysql:///db?=",
            "u:hunter2secret@h/x://y",
        ] {
            let red = redact_url(url);
            assert!(!red.contains("hunter2secret"), "{url} -> {red}");
            assert_eq!(redact_url(&red), red, "{url}");
            if let Err(e) = Config::from_url(url) {
                assert!(!e.to_string().contains("hunter2secret"), "{url}: {e}");
            }
        }
        assert_eq!(redact_url("u:hunter2secret@h/db"), "u:<redacted>@h/db");
        // A userinfo after the slash is not taken as a database name (which
        // Debug prints and the server quotes back); %40 still gives an '@'.
        let e = Config::from_url("mysql:///u:hunter2secret@h/db").unwrap_err();
        assert!(e.to_string().contains("database name contains '@'"), "{e}");
        let c = Config::from_url("mysql://h/a%40b").unwrap();
        assert_eq!(c.connect.database.as_deref(), Some("a@b"));
        assert_eq!(redact_url("mysql:/u:hunter2secret@h/db"), "<redacted>@h/db");
    }

    #[test]
    fn durations() {
        assert_eq!(
            parse_duration("k", "1.5s").unwrap(),
            Duration::from_millis(1500)
        );
        assert_eq!(parse_duration("k", "5m").unwrap(), Duration::from_secs(300));
        assert_eq!(
            parse_duration("k", "100us").unwrap(),
            Duration::from_micros(100)
        );
        assert!(parse_duration("k", "5x").is_err());
        assert!(parse_duration("k", "").is_err());
        assert_eq!(fmt_duration(Duration::from_millis(250)), "250ms");
        assert_eq!(fmt_duration(Duration::from_millis(2500)), "2.5s");
    }
}
