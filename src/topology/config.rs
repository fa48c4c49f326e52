//! Hosts, roles and the primary monitor's knobs (multi-host URLs).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::duration::fmt_duration;
use crate::error::{Error, Result};

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

/// What a pool faces (`topology=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// No `topology=`: one host is `single`; several hosts are a
    /// replication topology or a Galera cluster, as the servers say
    /// (`wsrep_on`).
    Auto,
    /// One server.
    Single,
    /// A primary and replicas (`read_only` tells the roles).
    Replication,
    /// A Galera cluster (`wsrep_%` status tells health; one writer at a time).
    Galera,
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
    pub(crate) kind: Kind,
    /// Galera: a reader whose `wsrep_local_recv_queue` passes this gets no
    /// reads (ProxySQL's `max_transactions_behind`).
    pub(crate) max_transactions_behind: u64,
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
            kind: Kind::Auto,
            max_transactions_behind: 100,
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
            .field("kind", &self.kind)
            .field("max_transactions_behind", &self.max_transactions_behind)
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
    /// Whether the monitor runs: by default whenever there are several
    /// hosts, or `topology=replication|galera` says so.
    pub fn monitor_enabled(&self) -> bool {
        self.monitor.unwrap_or(self.multi())
    }

    /// The monitor's own user (`monitor_user`), if the URL gives one; else
    /// the monitor connects as the application's user.
    pub fn monitor_user(&self) -> Option<&str> {
        self.monitor_user.as_deref()
    }

    /// Several hosts (or one host forced into a topology): routing by role.
    pub(crate) fn multi(&self) -> bool {
        match self.kind {
            Kind::Auto => !self.more_hosts.is_empty(),
            Kind::Single => false,
            Kind::Replication | Kind::Galera => true,
        }
    }

    pub(crate) fn validate(&self) -> Result<()> {
        if !self.more_hosts.is_empty() && self.kind == Kind::Single {
            return Err(Error::config(
                "topology=single but the url names several hosts: drop topology= (staunch finds replication or Galera out) or say topology=replication|galera",
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

/// A user-supplied secondary check: given the suspected primary's
/// `host:port`, return true if it is still alive as seen from elsewhere (then
/// there is no failover).
pub(crate) type SecondaryCheck = Arc<dyn Fn(&str) -> bool + Send + Sync>;
