//! Configuration: every knob, its default, its valid range, and the URL form.
//!
//! A pool is described by a URL, `mysql://user:pass@host:port/db?knob=value&…`,
//! or by a [`Builder`]. Every knob can be given both ways (durations are written
//! `250ms`, `2s`, `5m`, `1h`; optional ones also accept `off`). An unknown knob or
//! a bad value is an [`ErrorKind::Config`](crate::ErrorKind::Config) error that
//! names the knob; nothing panics.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::client::{parse_connect_attrs, ConnectConfig, TlsMode};
use crate::duration::{parse_duration, parse_opt_duration};
use crate::error::{Error, Result};
use crate::events::EventListener;
use crate::pool::PoolConfig;
use crate::topology::{Kind, PingType, SecondaryCheck, TopologyConfig};

// What each knob means, for docs/knobs.md (generated and checked by a test).
#[cfg(test)]
mod knob_docs;

/// The whole configuration of a pool: where to connect and the pool knobs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Config {
    pub(crate) connect: ConnectConfig,
    pub(crate) pool: PoolConfig,
    pub(crate) topology: TopologyConfig,
}

impl Config {
    /// `url` with every password replaced (the userinfo's and any
    /// `*password=` parameter), for messages: see the crate's own use in
    /// its errors. Malformed URLs are redacted too.
    pub fn redact_url(url: &str) -> String {
        redact_url(url)
    }

    /// The `knob=value&…` part of `url` (percent-encoded as written), found
    /// as [`Config::from_url`] finds it: after the user-info, whatever the
    /// password holds.
    pub fn url_query(url: &str) -> Option<&str> {
        split_url(url).rest.split_once('?').map(|(_, q)| q)
    }

    /// The byte offset of the `@` that ends `url`'s user-info, found as
    /// [`Config::from_url`] finds it (whatever the password holds), or
    /// `None` when there is no user-info: for a binding that reads a URL of
    /// its own form (JDBC's `jdbc:mysql://user:pass@host/db?prop=value`) and
    /// must set the password aside before anything else.
    pub fn url_userinfo_end(url: &str) -> Option<usize> {
        let parts = split_url(url);
        parts.userinfo.map(|_| url.len() - parts.rest.len() - 1)
    }

    /// The `host:port,…` part of `url`, found as [`Config::from_url`] finds it.
    pub fn url_hosts(url: &str) -> &str {
        let rest = split_url(url).rest;
        &rest[..rest.find(['/', '?']).unwrap_or(rest.len())]
    }

    /// The name of every knob [`Builder::set`] and URLs accept, in the
    /// order of docs/knobs.md's source: for a binding that tells its own
    /// options from staunch's.
    pub fn knob_names() -> impl ExactSizeIterator<Item = &'static str> {
        KNOBS.iter().map(|k| k.name)
    }

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

/// `mysql://user@host:port[,host:port…]/db`: where the pool connects, as
/// whom; never the password (nor `monitor_password`), whether one is set or
/// not. `{:?}` gives every knob, the passwords as `<redacted>`.
impl fmt::Display for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.connect;
        f.write_str("mysql://")?;
        if let Some(u) = &c.user {
            write!(f, "{u}@")?;
        }
        f.write_str(&c.endpoint())?;
        for (h, p) in &self.topology.more_hosts {
            write!(f, ",{h}:{p}")?;
        }
        if let Some(db) = &c.database {
            write!(f, "/{db}")?;
        }
        Ok(())
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
    /// The knobs the user gave (in a URL, by name or by their setter): a
    /// default ([`Builder::default_knob`]) no longer applies to them.
    user_set: Vec<&'static str>,
    /// URL parameters that belong to the binding, not to staunch
    /// ([`Builder::binding_param`]): a URL applied later skips them.
    binding_params: Vec<String>,
    pub(crate) listener: Option<Arc<dyn EventListener>>,
    pub(crate) secondary: Option<SecondaryCheck>,
    pub(crate) tracer: Option<Arc<dyn crate::trace::Tracer>>,
}

impl fmt::Debug for Builder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Builder")
            .field("config", &self.cfg)
            .field("error", &self.error)
            .field("user_set", &self.user_set)
            .field("binding_params", &self.binding_params)
            .field("listener", &self.listener.is_some())
            .field("tracer", &self.tracer.is_some())
            .finish()
    }
}

macro_rules! setter {
    ($(#[$doc:meta])* $name:ident, $field:ident . $sub:ident, $t:ty) => {
        $(#[$doc])*
        pub fn $name(mut self, v: $t) -> Self {
            self.cfg.$field.$sub = v.into();
            self.mark(stringify!($name));
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

    /// Sets a knob's default, by name from its text form: `value` applies
    /// unless the user gives that knob (in a URL, by [`Builder::set`] or by
    /// its setter), before or after this call. For a binding's own
    /// defaults, e.g. Python's `interpolate_params=true` (PyMySQL's way),
    /// which a URL saying `interpolate_params=false` overrides. A later
    /// default replaces an earlier one. An unknown knob or a value that does
    /// not parse is reported by `build()`, naming the knob, even when the
    /// user's value wins; ranges are checked with the whole configuration.
    pub fn default_knob(mut self, knob: &str, value: &str) -> Self {
        if let Err(e) = self.set_default(knob, value) {
            self.error.get_or_insert(e);
        }
        self
    }

    /// [`Builder::default_knob`], reporting an unknown knob or a value
    /// that does not parse at once (for `staunch_options_set_default`).
    pub(crate) fn set_default(&mut self, knob: &str, value: &str) -> Result<()> {
        let k = find_knob(knob)?;
        // Parsed whether or not it applies, so a bad default is never hidden
        // by a URL that happens to name the knob.
        (k.set)(&mut Config::default(), knob, value)?;
        if !self.user_set.contains(&k.name) {
            (k.set)(&mut self.cfg, knob, value)?;
        }
        Ok(())
    }

    /// Declares `name` a URL parameter of the binding (a database/sql or
    /// JDBC option such as Go's `parseTime`), so that the binding can hand
    /// its user's whole URL to [`Builder::url`] and read its own parameters
    /// from [`Config::url_query`]: a URL applied after this call neither
    /// applies nor refuses a parameter of that name. A knob's name cannot be
    /// a binding's (a URL that names it means the knob): that, or a name
    /// that could not be a parameter's, is reported by `build()`.
    pub fn binding_param(mut self, name: &str) -> Self {
        if let Err(e) = self.claim(name) {
            self.error.get_or_insert(e);
        }
        self
    }

    /// [`Builder::binding_param`], reporting a bad name at once (for
    /// `staunch_options_claim_param`).
    pub(crate) fn claim(&mut self, name: &str) -> Result<()> {
        if find_knob(name).is_ok() {
            return Err(Error::config(format!(
                "{name:?} is one of staunch's knobs: a binding cannot claim it as its own URL parameter"
            )));
        }
        if name.is_empty() || name.contains(['=', '&', '?', '#', '/', '@']) {
            return Err(Error::config(format!(
                "{name:?} cannot be a URL parameter's name"
            )));
        }
        if !self.binding_params.iter().any(|n| n == name) {
            self.binding_params.push(name.to_owned());
        }
        Ok(())
    }

    /// Records that the user gave `knob`: defaults no longer touch it.
    fn mark(&mut self, knob: &'static str) {
        debug_assert!(find_knob(knob).is_ok(), "{knob} is not a knob");
        if !self.user_set.contains(&knob) {
            self.user_set.push(knob);
        }
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
        self.mark("socket");
        self
    }
    /// User name. Defaults to none (the server's anonymous user).
    pub fn user(mut self, user: &str) -> Self {
        self.cfg.connect.user = Some(user.to_owned());
        self.mark("user");
        self
    }
    /// Password. Defaults to none. Never printed by staunch.
    pub fn password(mut self, password: &str) -> Self {
        self.cfg.connect.password = Some(password.to_owned());
        self.mark("password");
        self
    }
    /// Default database. Defaults to none.
    pub fn database(mut self, db: &str) -> Self {
        self.cfg.connect.database = Some(db.to_owned());
        self.mark("database");
        self
    }
    setter!(
        /// The time limit of one statement, from the moment it is sent to the
        /// end of its answer. The server enforces it (MariaDB's
        /// `max_statement_time`, MySQL's `max_execution_time`, which covers
        /// read-only `SELECT`s only), so a statement past it ends with
        /// `StatementTimeout` and the connection goes on serving. When the
        /// server does not answer at all, the pool's watchdog cuts the
        /// connection off 1 s after the limit (`StatementTimeout`, and the
        /// connection is broken). A borrow may set its own limit
        /// (`PooledConn::set_statement_timeout`). Defaults to none (a
        /// statement may run as long as it needs). Range ≥ 1 ms.
        query_timeout, connect.query_timeout, Option<Duration>);
    setter!(
        /// Statement liveness, at any `query_timeout` (none included): a
        /// statement that has waited this long for its answer, with nothing
        /// received meanwhile, has its server checked on a side connection
        /// (bounded by `connect_timeout` + `validation_timeout`): does it
        /// answer, is it the same server (not restarted or replaced), does
        /// it still run this statement's connection? If not, the statement's
        /// socket is shut down and it fails with `ServerUnresponsive` (the
        /// connection is closed on return). If so, nothing happens, and the
        /// check is repeated every threshold for as long as it runs. So a
        /// statement whose server stops answering returns within threshold +
        /// `connect_timeout` + `validation_timeout`; a long statement on a
        /// live server is never cut. Turn it off (`None`; URL `0` or `off`)
        /// behind a proxy that gives clients connection ids of its own
        /// (ProxySQL, MaxScale). Defaults to 5 s. Range 100 ms to 1 h, or off.
        liveness_threshold, connect.liveness_threshold, Option<Duration>);
    setter!(
        /// Reset every returned session (`COM_RESET_CONNECTION`, then the
        /// pool's settings and `init_sql`). By default (false) a session is
        /// reset only when its state may have changed: the server reported a
        /// change (a variable, the schema, a temporary table, a prepared
        /// statement...), or the borrower used the raw `mysql::Conn`. An open
        /// transaction is rolled back on return whatever this says.
        reset_on_return, connect.reset_on_return, bool);
    /// SQL run on every new connection and after every reset, after the
    /// pool's own settings (e.g. `SET time_zone = '+00:00'`; several
    /// statements separated by `;` are fine). What it sets is the session's
    /// baseline: a borrower's changes are undone, these are not. Defaults to
    /// none.
    pub fn init_sql(mut self, sql: Option<&str>) -> Self {
        self.cfg.connect.init_sql = sql.map(str::to_owned);
        self.mark("init_sql");
        self
    }
    setter!(
        /// Report, for UPDATE, the rows a statement matched rather than the
        /// rows it changed (the `CLIENT_FOUND_ROWS` capability, as JDBC and
        /// SQLAlchemy expect). Defaults to false.
        found_rows, connect.found_rows, bool);
    setter!(
        /// Every session's `autocommit` (set with the pool's settings
        /// statement, on a new session and after each reset, so a borrower
        /// that changed it is put back). false: each borrow's first
        /// statement opens a transaction, which the borrower ends (PEP 249's
        /// default). Defaults to true.
        autocommit, connect.autocommit, bool);
    setter!(
        /// Send statements with parameters by client-side interpolation: the
        /// values written into the text as literals escaped for the
        /// session's real state (its `sql_mode`, utf8mb4), over the text
        /// protocol, as PyMySQL, mysqlclient and Connector/J do, instead of
        /// server-side prepared statements (one round trip instead of two
        /// for a statement not yet prepared on the connection). A statement
        /// may ask for either way; one the server cannot prepare is
        /// interpolated whatever this says. Defaults to false (prepared).
        interpolate_params, connect.interpolate_params, bool);
    setter!(
        /// Send a statement without parameters as text, as written (the
        /// text protocol: one round trip, never prepared, several
        /// statements separated by `;` allowed), as PyMySQL, mysqlclient,
        /// go-sql-driver and Connector/J do. The Python, Go and JDBC faces
        /// default it to true; the C ABI and the Rust API to false (such a
        /// statement is prepared, in the connection's statement cache, or
        /// interpolated with `interpolate_params`). A statement may still
        /// ask for a way (`SendAs`, the C ABI's `STAUNCH_QUERY_*` flags).
        text_without_params, connect.text_without_params, bool);
    /// Whether and how connections are encrypted: `disabled` (the default),
    /// `preferred`, `required`, `verify_ca` or `verify_identity`. See
    /// [`TlsMode`].
    pub fn tls_mode(mut self, mode: TlsMode) -> Self {
        self.cfg.connect.tls_mode = mode;
        self.mark("tls_mode");
        self
    }
    /// PEM file of the CA certificate(s) that server certificates must chain
    /// to (`verify_ca`, `verify_identity`). Checked when the configuration is
    /// built. Off by default.
    pub fn tls_ca(mut self, path: Option<&str>) -> Self {
        self.cfg.connect.tls_ca = path.map(PathBuf::from);
        self.mark("tls_ca");
        self
    }
    /// PEM file of the client certificate (chain), for servers that require
    /// one (`REQUIRE X509`). Needs `tls_key`. Off by default.
    pub fn tls_cert(mut self, path: Option<&str>) -> Self {
        self.cfg.connect.tls_cert = path.map(PathBuf::from);
        self.mark("tls_cert");
        self
    }
    /// PEM file of the client certificate's private key. Needs `tls_cert`.
    /// Only the path is ever printed. Off by default.
    pub fn tls_key(mut self, path: Option<&str>) -> Self {
        self.cfg.connect.tls_key = path.map(PathBuf::from);
        self.mark("tls_key");
        self
    }
    /// SHA-256 fingerprints of the server's certificate (64 hex digits,
    /// colons between bytes allowed; several separated by commas, any one
    /// matching), as Connector/C's `tls-peer-fingerprint`: the certificate
    /// is pinned, whoever signed it. With `verify_ca` it may stand instead
    /// of `tls_ca`. Off by default.
    pub fn tls_fingerprint(mut self, fingerprints: Option<&str>) -> Self {
        self.cfg.connect.tls_fingerprint = fingerprints.map(str::to_owned);
        self.mark("tls_fingerprint");
        self
    }
    /// PEM file of the server's RSA public key, for a
    /// `caching_sha2_password` user's full authentication over plain TCP
    /// (the password leaves encrypted with it), as MySQL's
    /// `server-public-key-path`. Off by default.
    pub fn server_public_key(mut self, path: Option<&str>) -> Self {
        self.cfg.connect.server_public_key = path.map(PathBuf::from);
        self.mark("server_public_key");
        self
    }
    setter!(
        /// Over plain TCP without `server_public_key`, ask the server for
        /// its RSA public key when a `caching_sha2_password` user needs a
        /// full authentication, as MySQL's `get-server-public-key`. The key
        /// comes over the same unprotected connection, where a man in the
        /// middle can swap it and read the password: TLS, a unix socket or
        /// `server_public_key` are better. Defaults to false.
        get_server_public_key, connect.get_server_public_key, bool);
    setter!(
        /// Let a user of `mysql_clear_password` (PAM, LDAP) log in: the
        /// password is sent as it is, so only over TLS or a unix socket,
        /// never plain TCP, as MySQL's `enable-cleartext-plugin`. Defaults
        /// to false.
        allow_cleartext_password, connect.allow_cleartext_password, bool);
    /// Connection attributes sent with every connection, for the server's
    /// `performance_schema.session_connect_attrs` (URL: `connect_attrs=
    /// name:value,name:value`, as go-sql-driver's and Connector/J's
    /// `connectionAttributes`). Replaces those set before. staunch adds
    /// `program_name` (the program's file name; a `program_name` given
    /// here wins) and `staunch_version`, after the client's own
    /// `_client_name` (`staunch`), `_client_version`, `_os`, `_platform`
    /// and `_pid`. Names must not start with `_` (reserved for
    /// the client library) nor hold `,` or `:`, values must not hold `,`
    /// nor a password of the configuration, and everything together must
    /// fit in the 64 KiB a server accepts; checked when the configuration
    /// is built. The server keeps of a session's attributes only what
    /// `performance_schema_session_connect_attrs_size` allows (a few hundred
    /// bytes when left to size itself), and only with `performance_schema`
    /// on. Defaults to none.
    pub fn connect_attrs<K: Into<String>, V: Into<String>>(
        mut self,
        attrs: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        self.cfg.connect.connect_attrs = attrs
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        self.mark("connect_attrs");
        self
    }
    /// The connection attribute `program_name` (as PyMySQL's argument and
    /// libmysqlclient's option name it). Defaults to the program's file
    /// name (the last part of `argv[0]`). Must not hold a password.
    pub fn program_name(mut self, name: &str) -> Self {
        self.cfg.connect.program_name = Some(name.to_owned());
        self.mark("program_name");
        self
    }
    setter!(
        /// Most connections the pool holds, idle and in use together.
        /// Defaults to 10. Range 1 to 4096.
        max_size, pool.max_size, usize);
    /// Most connections the pool can ever hold: the largest `max_size` it
    /// can be raised to while it runs ([`Pool::set_max_size`](crate::Pool::set_max_size)).
    /// The pool's slot array is this long (256 bytes a slot, per host).
    /// Defaults to twice `max_size`, at least 64 (at most 4096). Range
    /// `max_size` to 4096.
    pub fn max_size_cap(mut self, cap: usize) -> Self {
        self.cfg.pool.max_size_cap = Some(cap);
        self.mark("max_size_cap");
        self
    }
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
    /// The pool's name in metrics (the `db_client_connection_pool_name`
    /// label) and logs. Defaults to `staunch-N`, N counting the unnamed pools of the
    /// process. 1 to 128 bytes, no control characters.
    pub fn pool_name(mut self, name: &str) -> Self {
        self.cfg.pool.name = Some(name.to_owned());
        self.mark("pool_name");
        self
    }
    setter!(
        /// Times every borrow and every statement from the start, for the
        /// `use_time` and `statement_time` histograms (two precise clock reads
        /// each, ~40 ns). Off by default: they are timed from the first export
        /// (`Pool::metrics_text`, a binding's collector) on.
        timings, pool.timings, bool);
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
        if let Some(t) = self.cfg.connect.liveness_threshold {
            if t < Duration::from_millis(100) || t > Duration::from_secs(3600) {
                return Err(Error::config(format!(
                    "liveness_threshold must be between 100ms and 1h, or 0/off, got {}",
                    crate::duration::fmt_duration(t)
                )));
            }
        }
        if self.cfg.connect.socket.is_none() && self.cfg.connect.host.is_empty() {
            return Err(Error::config("host must not be empty"));
        }
        if self.cfg.connect.port == 0 {
            return Err(Error::config("port must be between 1 and 65535, got 0"));
        }
        self.cfg.connect.validate_tls()?;
        let passwords = [
            self.cfg.connect.password.as_deref().unwrap_or(""),
            self.cfg.topology.monitor_password.as_deref().unwrap_or(""),
        ];
        self.cfg.connect.validate_connect_attrs(&passwords)?;
        Ok(self.cfg)
    }

    fn apply_url(&mut self, url: &str) -> Result<()> {
        // The user-info is found (and set aside) before anything else is
        // looked at, so no error below can quote a piece of the password.
        let parts = split_url(url);
        match parts.scheme {
            Some("mysql") | Some("mariadb") => {}
            Some(s) => {
                return Err(Error::config(format!(
                    "url must start with mysql:// or mariadb://, got {s}://"
                )))
            }
            None => {
                return Err(Error::config(
                    "url must start with mysql:// or mariadb:// (e.g. mysql://user:password@host:3306/db)",
                ))
            }
        }
        let userinfo = parts.userinfo;
        let (main, query) = match parts.rest.split_once('?') {
            Some((m, q)) => (m, Some(q)),
            None => (parts.rest, None),
        };
        let (hostport, path) = match main.split_once('/') {
            Some((a, p)) => (a, p),
            None => (main, ""),
        };
        let c = &mut self.cfg.connect;
        if let Some(ui) = userinfo {
            let (u, p) = match ui.split_once(':') {
                Some((u, p)) => (u, Some(p)),
                None => (ui, None),
            };
            if let Some(ch) = u.chars().find(|ch| "/?#&=@ ".contains(*ch)) {
                // A user-info that ends elsewhere than intended (a missing
                // scheme slash, an unencoded character): the user name may be
                // the password's neighbour, so neither is quoted.
                return Err(Error::config(format!(
                    "the url's user name contains {ch:?}: write user:password@ right after mysql:// \
                     and percent-encode that character in the user name"
                )));
            }
            if !u.is_empty() {
                c.user = Some(percent_decode(u, "user")?);
                self.mark("user");
            }
            if let Some(p) = p {
                self.cfg.connect.password = Some(percent_decode(p, "password")?);
                self.mark("password");
            }
        }
        let c = &mut self.cfg.connect;
        if !hostport.is_empty() {
            let mut hosts = Vec::new();
            let mut any_port = false;
            for hp in hostport.split(',') {
                if hp.is_empty() {
                    return Err(Error::config(format!(
                        "the host list {hostport:?} has an empty entry"
                    )));
                }
                let (host, port) = split_host_port(hp)?;
                any_port |= port.is_some();
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
            self.mark("host");
            if any_port {
                self.mark("port");
            }
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
            self.cfg.connect.database = Some(percent_decode(path, "database")?);
            self.mark("database");
        }
        if let Some(q) = query {
            for pair in q.split('&').filter(|p| !p.is_empty()) {
                let name = pair.split_once('=').map_or(pair, |(k, _)| k);
                if self.binding_params.iter().any(|n| n == name) {
                    continue; // the binding reads it (Config::url_query)
                }
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
        let k = find_knob(knob)?;
        self.mark(k.name);
        (k.set)(&mut self.cfg, knob, v)
    }
}

/// One knob: its name (in URLs, `Builder::set` and `staunch_options_set`) and
/// how its text form is applied. [`KNOBS`] is the only list of them.
pub(crate) struct Knob {
    pub name: &'static str,
    set: fn(&mut Config, &str, &str) -> Result<()>,
}

macro_rules! knobs {
    ($($name:literal => |$c:ident, $k:ident, $v:ident| $body:expr,)*) => {
        /// Every knob. What each means is in `knob_docs.rs` (docs/knobs.md).
        pub(crate) const KNOBS: &[Knob] = &[$(Knob {
            name: $name,
            set: |$c: &mut Config, $k: &str, $v: &str| {
                let _ = $k;
                $body;
                Ok(())
            },
        },)*];
    };
}

knobs! {
    "max_size" => |c, k, v| c.pool.max_size = parse_usize(k, v)?,
    "max_size_cap" => |c, k, v| c.pool.max_size_cap = Some(parse_usize(k, v)?),
    "min_idle" => |c, k, v| c.pool.min_idle = parse_usize(k, v)?,
    "connection_timeout" => |c, k, v| c.pool.connection_timeout = parse_duration(k, v)?,
    "connect_timeout" => |c, k, v| c.pool.connect_timeout = parse_duration(k, v)?,
    "validation_timeout" => |c, k, v| c.pool.validation_timeout = parse_duration(k, v)?,
    "idle_timeout" => |c, k, v| c.pool.idle_timeout = parse_opt_duration(k, v)?,
    "max_lifetime" => |c, k, v| c.pool.max_lifetime = parse_opt_duration(k, v)?,
    "keepalive_interval" => |c, k, v| c.pool.keepalive_interval = parse_opt_duration(k, v)?,
    "leak_detection_threshold" => |c, k, v| {
        c.pool.leak_detection_threshold = parse_opt_duration(k, v)?
    },
    "adder_threads" => |c, k, v| c.pool.adder_threads = parse_usize(k, v)?,
    "pool_name" => |c, _k, v| c.pool.name = Some(v.to_owned()),
    "timings" => |c, k, v| c.pool.timings = parse_bool(k, v)?,
    "alive_bypass_window" => |c, k, v| c.pool.alive_bypass_window = parse_duration(k, v)?,
    // Here 0 means "one attempt", so only `off` turns it off.
    "initialization_fail_timeout" => |c, k, v| {
        c.pool.initialization_fail_timeout = match v.trim() {
            "off" | "none" => None,
            _ => Some(parse_duration(k, v)?),
        }
    },
    "query_timeout" => |c, k, v| c.connect.query_timeout = parse_opt_duration(k, v)?,
    "liveness_threshold" => |c, k, v| {
        c.connect.liveness_threshold = parse_opt_duration(k, v)?.filter(|d| !d.is_zero())
    },
    "reset_on_return" => |c, k, v| c.connect.reset_on_return = parse_bool(k, v)?,
    "init_sql" => |c, _k, v| c.connect.init_sql = (!v.trim().is_empty()).then(|| v.to_owned()),
    "found_rows" => |c, k, v| c.connect.found_rows = parse_bool(k, v)?,
    "autocommit" => |c, k, v| c.connect.autocommit = parse_bool(k, v)?,
    "interpolate_params" => |c, k, v| c.connect.interpolate_params = parse_bool(k, v)?,
    "text_without_params" => |c, k, v| c.connect.text_without_params = parse_bool(k, v)?,
    "socket" => |c, _k, v| c.connect.socket = (!v.is_empty()).then(|| v.to_owned()),
    "tls_mode" => |c, _k, v| c.connect.tls_mode = TlsMode::parse(v)?,
    "tls_ca" => |c, _k, v| c.connect.tls_ca = opt_path(v),
    "tls_cert" => |c, _k, v| c.connect.tls_cert = opt_path(v),
    "tls_key" => |c, _k, v| c.connect.tls_key = opt_path(v),
    "tls_fingerprint" => |c, _k, v| {
        c.connect.tls_fingerprint = (!v.trim().is_empty()).then(|| v.trim().to_owned())
    },
    "server_public_key" => |c, _k, v| c.connect.server_public_key = opt_path(v),
    "get_server_public_key" => |c, k, v| c.connect.get_server_public_key = parse_bool(k, v)?,
    "allow_cleartext_password" => |c, k, v| c.connect.allow_cleartext_password = parse_bool(k, v)?,
    "connect_attrs" => |c, _k, v| c.connect.connect_attrs = parse_connect_attrs(v)?,
    "program_name" => |c, _k, v| c.connect.program_name = Some(v.to_owned()),
    "host" => |c, _k, v| c.connect.host = v.to_owned(),
    "port" => |c, _k, v| {
        c.connect.port = v.parse().map_err(|_| {
            Error::config(format!("port must be a number from 1 to 65535, got {v:?}"))
        })?
    },
    "user" => |c, _k, v| c.connect.user = Some(v.to_owned()),
    "password" => |c, _k, v| c.connect.password = Some(v.to_owned()),
    "database" => |c, _k, v| c.connect.database = Some(v.to_owned()),
    "topology" => |c, _k, v| {
        c.topology.kind = match v.trim() {
            "" | "auto" => Kind::Auto,
            "single" => Kind::Single,
            "replication" => Kind::Replication,
            "galera" => Kind::Galera,
            _ => {
                return Err(Error::config(format!(
                    "topology must be auto, single, replication or galera, got {v:?}"
                )))
            }
        }
    },
    "max_transactions_behind" => |c, _k, v| {
        c.topology.max_transactions_behind = v.trim().parse().map_err(|_| {
            Error::config(format!(
                "max_transactions_behind must be a whole number of write-sets, got {v:?}"
            ))
        })?
    },
    "monitor" => |c, k, v| c.topology.monitor = Some(parse_bool(k, v)?),
    "ping_type" => |c, _k, v| {
        c.topology.ping_type = match v.trim() {
            "connect" => PingType::Connect,
            "select" => PingType::Select,
            "insert" => PingType::Insert,
            _ => {
                return Err(Error::config(format!(
                    "ping_type must be connect, select or insert, got {v:?}"
                )))
            }
        }
    },
    "ping_interval" => |c, k, v| c.topology.ping_interval = parse_duration(k, v)?,
    "ping_timeout" => |c, k, v| c.topology.ping_timeout = parse_duration(k, v)?,
    "failure_threshold" => |c, _k, v| {
        c.topology.failure_threshold = v.trim().parse().map_err(|_| {
            Error::config(format!(
                "failure_threshold must be a whole number, got {v:?}"
            ))
        })?
    },
    "alive_error_codes" => |c, _k, v| {
        c.topology.alive_error_codes = v
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
    },
    "secondary_check" => |c, _k, v| {
        c.topology.secondary_check = match v.trim() {
            "replicas" => true,
            "none" | "off" => false,
            _ => {
                return Err(Error::config(format!(
                    "secondary_check must be replicas or none, got {v:?}"
                )))
            }
        }
    },
    "max_replication_lag" => |c, k, v| {
        c.topology.max_replication_lag = parse_opt_duration(k, v)?
    },
    "read_fallback" => |c, _k, v| {
        c.topology.read_fallback = match v.trim() {
            "writer" => true,
            "fail" => false,
            _ => {
                return Err(Error::config(format!(
                    "read_fallback must be writer or fail, got {v:?}"
                )))
            }
        }
    },
    "heartbeat_table" => |c, _k, v| c.topology.heartbeat_table = v.trim().to_owned(),
    "min_failover_interval" => |c, k, v| {
        c.topology.min_failover_interval = parse_duration(k, v)?
    },
    "monitor_user" => |c, _k, v| c.topology.monitor_user = Some(v.to_owned()),
    "monitor_password" => |c, _k, v| c.topology.monitor_password = Some(v.to_owned()),
}

/// A URL cut into its scheme, user-info and the rest (hosts, database,
/// query), the user-info found first so that nothing else is ever read out
/// of it.
///
/// A password may hold any of `/ ? # @ : % +` unencoded, so the `@` that ends
/// the user-info is chosen by what follows it: the first `@` (or none at all,
/// when nothing before the first `?` has one) after which the URL reads as
/// `hosts[/db][?knob=value&…]` with known knobs; failing that, with any
/// knob-like names; failing that, the last `@`, which may hide more than the
/// password but never less.
pub(crate) struct UrlParts<'a> {
    /// The scheme before `://`, when there is one of a scheme's letters.
    pub scheme: Option<&'a str>,
    /// Between `scheme://` (or the start) and the `@`: never to be printed.
    pub userinfo: Option<&'a str>,
    /// Hosts, database and query.
    pub rest: &'a str,
}

pub(crate) fn split_url(url: &str) -> UrlParts<'_> {
    let (scheme, body) = match url.find("://") {
        Some(i)
            if i > 0
                && url.as_bytes()[0].is_ascii_alphabetic()
                && url[..i]
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b)) =>
        {
            (Some(&url[..i]), &url[i + 3..])
        }
        _ => (None, url),
    };
    let ats: Vec<usize> = body.match_indices('@').map(|(i, _)| i).collect();
    let none_first = !body.split('?').next().unwrap_or("").contains('@');
    let mut choices: Vec<Option<usize>> = Vec::with_capacity(ats.len() + 1);
    if none_first {
        choices.push(None);
    }
    choices.extend(ats.iter().map(|&i| Some(i)));
    if !none_first {
        choices.push(None);
    }
    let pick = [true, false]
        .into_iter()
        .find_map(|strict| {
            choices.iter().copied().find(|c| {
                let rest = match c {
                    Some(i) => &body[i + 1..],
                    None => body,
                };
                plausible_rest(rest, strict)
            })
        })
        .unwrap_or_else(|| ats.last().copied());
    match pick {
        Some(i) => UrlParts {
            scheme,
            userinfo: Some(&body[..i]),
            rest: &body[i + 1..],
        },
        None => UrlParts {
            scheme,
            userinfo: None,
            rest: body,
        },
    }
}

/// Whether `rest` reads as `hosts[/db][?knob=value&…]`: host names (or
/// `[v6]`) with numeric ports, a database without `@`, and parameters whose
/// names are known knobs (`strict`) or at least look like names.
fn plausible_rest(rest: &str, strict: bool) -> bool {
    let (main, query) = match rest.split_once('?') {
        Some((m, q)) => (m, Some(q)),
        None => (rest, None),
    };
    let (hosts, path) = main.split_once('/').unwrap_or((main, ""));
    let host_ok = |hp: &str| {
        let (h, port) = match hp.strip_prefix('[') {
            Some(r) => match r.split_once(']') {
                Some((_, after)) => (
                    "x",
                    after.strip_prefix(':').or(after.is_empty().then_some("")),
                ),
                None => return false,
            },
            None => match hp.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (hp, Some("")),
            },
        };
        let port_ok = match port {
            Some(p) => p.bytes().all(|b| b.is_ascii_digit()),
            None => false,
        };
        port_ok
            && !h.is_empty()
            && h.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b) || (!strict && b >= 0x80))
    };
    if !hosts.is_empty() && !hosts.split(',').all(host_ok) {
        return false;
    }
    if path.contains('@') {
        return false;
    }
    query.map_or(true, |q| {
        q.split('&')
            .filter(|p| !p.is_empty())
            .all(|p| match p.split_once('=') {
                Some((k, _)) if strict => KNOBS.iter().any(|kn| kn.name == k),
                Some((k, _)) => {
                    !k.is_empty() && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                }
                None => false,
            })
    })
}

/// The URL with every password replaced (the user-info's and any
/// `*password=` parameter), for messages.
///
/// The user-info is found as [`split_url`] finds it for parsing, so what the
/// parser may quote and what this shows are the same. A user name is shown
/// only when the URL has a scheme and the user-info a `:`; otherwise the
/// whole user-info is replaced.
pub(crate) fn redact_url(url: &str) -> String {
    let parts = split_url(url);
    let mut out = String::new();
    if let Some(s) = parts.scheme {
        out.push_str(s);
        out.push_str("://");
    }
    match (parts.scheme, parts.userinfo) {
        (_, None) => {}
        (Some(_), Some(ui)) => match ui.split_once(':') {
            Some((u, _)) if plain_user(u) => {
                out.push_str(u);
                out.push_str(":<redacted>@");
            }
            Some(_) => out.push_str("<redacted>@"),
            None if plain_user(ui) => {
                out.push_str(ui);
                out.push('@');
            }
            None => out.push_str("<redacted>@"),
        },
        (None, Some(_)) => out.push_str("<redacted>@"),
    }
    let (main, query) = match parts.rest.split_once('?') {
        Some((m, q)) => (m, Some(q)),
        None => (parts.rest, None),
    };
    out.push_str(main);
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
    redact_password_values(&out)
}

/// `s` with the value of every `…password=` in it replaced, up to the next
/// `&`: in a URL so malformed that its query is not where the parser
/// looks (an `@` or a `?` too many, no scheme), `&password=…` lands in
/// what it takes for the host or the database; it is shown redacted all
/// the same.
fn redact_password_values(s: &str) -> String {
    const KEY: &str = "password=";
    // ASCII lowering keeps every byte offset.
    let lower = s.to_ascii_lowercase();
    let mut out = String::with_capacity(s.len());
    let mut at = 0;
    while let Some(found) = lower[at..].find(KEY) {
        let value = at + found + KEY.len();
        out.push_str(&s[at..value]);
        out.push_str("<redacted>");
        at = s[value..].find('&').map_or(s.len(), |e| value + e);
    }
    out.push_str(&s[at..]);
    out
}

/// A user name that can be shown: nothing in it could be a stray piece of
/// a password or of another part of the URL.
fn plain_user(u: &str) -> bool {
    u.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"._-%+$!*'(),;~".contains(&b) || b >= 0x80)
}

/// The knob called `name`, or the error every caller reports for an unknown
/// one (it lists the known ones).
pub(crate) fn find_knob(name: &str) -> Result<&'static Knob> {
    KNOBS.iter().find(|k| k.name == name).ok_or_else(|| {
        let known: Vec<&str> = KNOBS.iter().map(|k| k.name).collect();
        Error::config(format!(
            "unknown knob {name:?} (known: {})",
            known.join(", ")
        ))
    })
}

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
                .ok_or_else(|| {
                    Error::config(format!(
                        "{what} has a bad percent escape (a % must be followed by two hex \
                         digits: write % itself as %25)"
                    ))
                })?;
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
            (
                "mysql://a,b/db?topology=single",
                "topology=single but the url names several hosts",
            ),
            ("mysql://a:1,a:1/db?topology=replication", "listed twice"),
            ("mysql://a,,b/db?topology=replication", "empty entry"),
            (
                "mysql://a,b/db?topology=ring",
                "topology must be auto, single, replication or galera",
            ),
            (
                "mysql://a,b/db?topology=replication&ping_type=ssh",
                "ping_type",
            ),
            (
                "mysql://a,b/db?topology=replication&alive_error_codes=1040,x",
                "alive_error_codes",
            ),
            (
                "mysql://a,b/db?max_transactions_behind=-1",
                "max_transactions_behind must be a whole number",
            ),
        ] {
            let e = Config::from_url(url).expect_err(url);
            assert_eq!(e.kind(), crate::ErrorKind::Config, "{url}");
            assert!(e.to_string().contains(needle), "{url}: {e}");
        }
    }

    #[test]
    fn topology_kinds() {
        use crate::topology::Kind;
        // (url, kind, monitor runs)
        for (url, kind, monitor) in [
            ("mysql://h/db", Kind::Auto, false),
            ("mysql://a,b/db", Kind::Auto, true),
            ("mysql://a,b/db?topology=auto", Kind::Auto, true),
            ("mysql://a,b/db?topology=galera", Kind::Galera, true),
            ("mysql://h/db?topology=galera", Kind::Galera, true),
            (
                "mysql://a,b/db?topology=replication",
                Kind::Replication,
                true,
            ),
            ("mysql://h/db?topology=single", Kind::Single, false),
            ("mysql://a,b/db?monitor=false", Kind::Auto, false),
        ] {
            let c = Config::from_url(url).unwrap();
            assert_eq!(c.topology().kind, kind, "{url}");
            assert_eq!(c.topology().monitor_enabled(), monitor, "{url}");
        }
        let c = Config::from_url("mysql://a,b/db?max_transactions_behind=7").unwrap();
        assert_eq!(c.topology().max_transactions_behind, 7);
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
            // The fuzzer again (2026-12-06): '@' and '?' too many put
            // `&password=` where the parser sees a host or a database.
            "y@x?a@ ~&password=hunter2secret",
            "mysql://u#b@/?x:y@'z&password=hunter2secret",
            "mysql://u@h/db?q@'&monitor_password=hunter2secret&max_size=2",
        ] {
            let red = redact_url(url);
            assert!(!red.contains("hunter2secret"), "{url} -> {red}");
            assert_eq!(redact_url(&red), red, "{url}");
            if let Err(e) = Config::from_url(url) {
                assert!(!e.to_string().contains("hunter2secret"), "{url}: {e}");
            }
        }
        assert_eq!(redact_url("u:hunter2secret@h/db"), "<redacted>@h/db");
        // A userinfo after the slash is not taken as a database name (which
        // Debug prints and the server quotes back); %40 still gives an '@'.
        let e = Config::from_url("mysql:///u:hunter2secret@h/db").unwrap_err();
        assert!(e.to_string().contains("user name contains '/'"), "{e}");
        let c = Config::from_url("mysql://h/a%40b").unwrap();
        assert_eq!(c.connect.database.as_deref(), Some("a@b"));
        assert_eq!(redact_url("mysql:/u:hunter2secret@h/db"), "<redacted>@h/db");
    }

    /// The `@` that ends the user-info is the one after which the URL reads
    /// as hosts, database and knobs: an unencoded `/ ? @ #` in the password
    /// does not move it, nor does an `@` in a knob's value.
    #[test]
    fn userinfo_is_found_before_anything_else() {
        for (url, user, pw, host, db) in [
            ("mysql://app:S3/cr@h:1/db", "app", "S3/cr", "h:1", "db"),
            (
                "mysql://app:S3?cr@h:1/db?max_size=2",
                "app",
                "S3?cr",
                "h:1",
                "db",
            ),
            ("mysql://app:S3@cr@h:1/db", "app", "S3@cr", "h:1", "db"),
            ("mysql://app:S3#c r+@h/db", "app", "S3#c r+", "h:3306", "db"),
            ("mysql://app:a@b/c?d@h/db", "app", "a@b/c?d", "h:3306", "db"),
        ] {
            let c = Config::from_url(url).unwrap();
            assert_eq!(c.connect.user.as_deref(), Some(user), "{url}");
            assert_eq!(c.connect.password.as_deref(), Some(pw), "{url}");
            assert_eq!(c.connect.endpoint(), host, "{url}");
            assert_eq!(c.connect.database.as_deref(), Some(db), "{url}");
            assert_eq!(redact_url(url).matches("<redacted>").count(), 1, "{url}");
        }
        // '@' in a knob's value belongs to the knob.
        let c = Config::from_url("mysql://h/db?init_sql=SET @a=1").unwrap();
        assert_eq!(c.connect.user, None);
        assert_eq!(c.connect.init_sql.as_deref(), Some("SET @a=1"));
        let c = Config::from_url("mysql://u:p@h/db?socket=/run/a@b").unwrap();
        assert_eq!(c.connect.user.as_deref(), Some("u"));
        assert_eq!(c.connect.socket.as_deref(), Some("/run/a@b"));
        let c = Config::from_url("mysql://u:p/q@h/db?init_sql=SET @@session.x=1").unwrap();
        assert_eq!(c.connect.password.as_deref(), Some("p/q"));
        assert_eq!(c.connect.init_sql.as_deref(), Some("SET @@session.x=1"));
        // A broken scheme quotes the scheme only, and only when it is one.
        let e = Config::from_url("mysq://u:p/w@h/db").unwrap_err();
        assert!(e.to_string().ends_with("got mysq://"), "{e}");
        let e = Config::from_url("u:pw://x@h/db").unwrap_err();
        assert!(!e.to_string().contains("pw"), "{e}");
    }

    #[test]
    fn connect_attrs_parse_and_check() {
        let c = Config::from_url(
            "mysql://app:pw@h/db?connect_attrs=service:billing%2Capi,url:http://x:1,program_name:bill",
        );
        // A ',' percent-encoded in the URL still separates attributes.
        let e = c.unwrap_err().to_string();
        assert!(e.contains("connect_attrs") && e.contains("no ':'"), "{e}");
        let c = Config::from_url(
            "mysql://app:pw@h/db?connect_attrs=service:billing%20api,url:http://x:1,program_name:bill",
        )
        .unwrap();
        let want = [
            ("service", "billing api"),
            ("url", "http://x:1"),
            ("program_name", "bill"),
        ];
        let got: Vec<(&str, &str)> = c
            .connect
            .connect_attrs()
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(got, want);
        let sent = c.connect.sent_connect_attrs();
        assert_eq!(sent[0], ("program_name".into(), "bill".into()));
        assert_eq!(
            sent[1],
            (
                "staunch_version".into(),
                env!("STAUNCH_LIBRARY_VERSION").into()
            )
        );
        assert_eq!(sent.len(), 4);
        // The default program name: this test binary's file name, no path
        // (under Miri, argv[0] is the crate's name).
        let d = Config::from_url("mysql://h/db").unwrap();
        let name = &d.connect.sent_connect_attrs()[0];
        assert_eq!(name.0, "program_name");
        let binary = if cfg!(miri) { "lib" } else { "staunch-" };
        assert!(
            name.1.starts_with(binary) && !name.1.contains('/'),
            "{name:?}"
        );
        // The knob program_name; a program_name among connect_attrs wins.
        let k = Config::from_url("mysql://h/db?program_name=billing&connect_attrs=a:1").unwrap();
        assert_eq!(k.connect.sent_connect_attrs()[0].1, "billing");
        let k = Config::from_url("mysql://h/db?program_name=billing&connect_attrs=program_name:x")
            .unwrap();
        assert_eq!(k.connect.sent_connect_attrs()[0].1, "x");
        let e = Config::from_url("mysql://u:s3cr3t@h/db?program_name=s3cr3t").unwrap_err();
        assert!(e.to_string().starts_with("program_name") && !e.to_string().contains("s3cr3t"));
        assert!(Config::from_url("mysql://h/db?connect_attrs=")
            .unwrap()
            .connect
            .connect_attrs()
            .is_empty());
        for (url, what) in [
            ("mysql://h/db?connect_attrs=a:1,,b:2", "empty entry"),
            ("mysql://h/db?connect_attrs=:1", "empty name"),
            (
                "mysql://h/db?connect_attrs=_client_name:x",
                "starts with '_'",
            ),
            (
                "mysql://h/db?connect_attrs=staunch_version:9",
                "staunch's own",
            ),
            ("mysql://h/db?connect_attrs=a:1,a:2", "given twice"),
            (
                "mysql://h/db?connect_attrs=db_Password:x",
                "names a password",
            ),
        ] {
            let e = Config::from_url(url).unwrap_err().to_string();
            assert!(
                e.starts_with("connect_attrs") && e.contains(what),
                "{url}: {e}"
            );
        }
        // The password is refused as a value, and not quoted.
        for url in [
            "mysql://app:s3cr3t-pw@h/db?connect_attrs=note:s3cr3t-pw",
            "mysql://app@h/db?monitor_password=s3cr3t-pw&connect_attrs=note:xs3cr3t-pwx",
            "mysql://app:s3cr3t-pw@h/db?connect_attrs=s3cr3t-pw:x",
        ] {
            let e = Config::from_url(url).unwrap_err().to_string();
            assert!(e.contains("holds a password"), "{e}");
            assert!(!e.contains("s3cr3t"), "{e}");
        }
        // 64 KiB in all: one long value is refused, by the builder too.
        let long = "x".repeat(65_300);
        let e = Builder::new()
            .connect_attrs([("blob", long.as_str())])
            .config()
            .unwrap_err()
            .to_string();
        assert!(e.contains("connect_attrs") && e.contains("65535"), "{e}");
        let e = Builder::new()
            .connect_attrs([("a,b", "1")])
            .config()
            .unwrap_err()
            .to_string();
        assert!(e.contains("contains ',' or ':'"), "{e}");
        let ok = Builder::new()
            .connect_attrs([("blob", "x".repeat(60_000))])
            .config()
            .unwrap();
        assert_eq!(ok.connect.connect_attrs().len(), 1);
    }

    /// A binding's default (Python's `interpolate_params=true`) applies
    /// unless the user names the knob, whatever the order of the calls.
    #[test]
    fn a_default_yields_to_the_users_knob_in_any_order() {
        let ip = |b: Builder| b.config().unwrap().connect.interpolate_params;
        let d = |b: Builder| b.default_knob("interpolate_params", "true");
        assert!(ip(d(Builder::new())));
        assert!(ip(d(Builder::new().url("mysql://h/db"))));
        assert!(ip(d(Builder::new()).url("mysql://h/db?max_size=2")));
        // The user's URL wins, before or after the default.
        assert!(!ip(d(
            Builder::new().url("mysql://h/db?interpolate_params=false")
        )));
        assert!(!ip(
            d(Builder::new()).url("mysql://h/db?interpolate_params=false")
        ));
        // So does `set`, and the typed setter.
        assert!(!ip(d(Builder::new().set("interpolate_params", "false"))));
        assert!(!ip(d(Builder::new()).set("interpolate_params", "false")));
        assert!(!ip(d(Builder::new().interpolate_params(false))));
        assert!(!ip(d(Builder::new()).interpolate_params(false)));
        // A later default replaces an earlier one.
        let b = d(Builder::new()).default_knob("interpolate_params", "false");
        assert!(!ip(b));
        // The URL's user, host, port and database are the user's too.
        let c = Builder::new()
            .url("mysql://app@h:3307/shop")
            .default_knob("user", "nobody")
            .default_knob("host", "elsewhere")
            .default_knob("port", "1")
            .default_knob("database", "other")
            .default_knob("max_size", "3")
            .config()
            .unwrap();
        assert_eq!(c.connect.user.as_deref(), Some("app"));
        assert_eq!(c.connect.endpoint(), "h:3307");
        assert_eq!(c.connect.database.as_deref(), Some("shop"));
        assert_eq!(c.pool.max_size, 3);
    }

    #[test]
    fn a_bad_default_names_the_knob_even_when_the_user_wins() {
        let mut b = Builder::new().url("mysql://h/db?interpolate_params=false");
        let e = b.set_default("interpolate_params", "maybe").unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Config);
        assert!(
            e.to_string()
                .contains("interpolate_params must be true or false"),
            "{e}"
        );
        let e = b.set_default("interpolate_parms", "true").unwrap_err();
        assert!(
            e.to_string().contains("unknown knob \"interpolate_parms\""),
            "{e}"
        );
        // The builder form reports it when the configuration is finished.
        let e = Builder::new()
            .default_knob("connect_timeout", "5")
            .config()
            .unwrap_err();
        assert!(
            e.to_string().contains("connect_timeout must be a duration"),
            "{e}"
        );
        // A default out of range is found with the whole configuration.
        let e = Builder::new()
            .default_knob("max_size", "0")
            .config()
            .unwrap_err();
        assert!(e.to_string().contains("max_size must be between"), "{e}");
    }

    #[test]
    fn knob_names_are_the_knobs() {
        let names: Vec<&str> = Config::knob_names().collect();
        assert_eq!(names.len(), KNOBS.len());
        assert!(names.contains(&"interpolate_params") && names.contains(&"max_size"));
        for n in names {
            find_knob(n).unwrap();
        }
    }

    #[test]
    fn a_bindings_params_are_skipped_and_found_where_the_parser_finds_them() {
        // A password holding '?' and '@': the query is where the parser
        // finds it, not after the first '?'.
        let url =
            "mysql://app:p?w@d@h:3306/db?parseTime=true&max_size=3&loc=Local&columnsWithAlias";
        assert_eq!(
            Config::url_query(url),
            Some("parseTime=true&max_size=3&loc=Local&columnsWithAlias")
        );
        let c = Builder::new()
            .binding_param("parseTime")
            .binding_param("loc")
            .binding_param("columnsWithAlias")
            .url(url)
            .config()
            .unwrap();
        assert_eq!(c.pool().max_size, 3);
        assert_eq!(c.connect().password.as_deref(), Some("p?w@d"));
        assert_eq!(
            Config::url_userinfo_end(url),
            Some("mysql://app:p?w@d".len())
        );
        assert_eq!(Config::url_userinfo_end("mysql://h/db?max_size=2"), None);
        // Without a scheme (a binding's own form, after its prefix), and
        // with parameters that are no knobs.
        assert_eq!(
            Config::url_userinfo_end("u:p/@?@h:1/db?connectTimeout=5"),
            Some(6)
        );
        // Unclaimed, the same names are unknown knobs.
        let e = Config::from_url(url).unwrap_err();
        assert!(e.to_string().contains("unknown knob \"parseTime\""), "{e}");
        // A knob stays a knob; a name that cannot be a parameter's is refused.
        for name in ["max_size", "", "a=b", "a&b"] {
            let e = Builder::new().binding_param(name).config().unwrap_err();
            assert_eq!(e.kind(), crate::ErrorKind::Config, "{name:?}");
        }
    }
}
