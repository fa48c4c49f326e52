//! `staunch-monitor`: the primary health monitor, after MHA's
//! `wait_until_unreachable` (incident D), with hard timeouts.
//!
//! Every `ping_interval` it probes the writer with `ping_type`:
//! - `connect`: a new connection, then `SELECT 1`;
//! - `select`: `SELECT 1` on a connection it keeps;
//! - `insert`: upserts a timestamp into `heartbeat_table` on a kept connection.
//!
//! Each probe runs on a short-lived thread and is cut off at `ping_timeout`
//! (its socket is shut down from the monitor thread), so a frozen server or a
//! black hole cannot stall the monitor. A probe that fails with a server error
//! proving the server alive (`alive_error_codes`, MHA's list by default: too many
//! connections, access denied, ...) is reported and not counted. After
//! `failure_threshold` failures in a row (MHA: 4) the secondary check runs:
//! the replicas are asked (`SHOW SLAVE STATUS`) whether their I/O thread still
//! reaches the primary, and a user check is called if given. If anyone still
//! sees the primary, it is a partition between us and it: reported, no
//! failover. Otherwise the primary is declared dead: writes fail fast with
//! `NoWriter`, the old primary's connections are evicted, and the monitor
//! polls every host for `@@read_only = 0` until exactly one answers so. staunch
//! follows a promotion; it never promotes. Two writable hosts at once is split
//! brain: writes are refused. A writer change to another host waits for
//! `min_failover_interval` after the previous one (anti-flapping).
//!
//! The same loop checks every other host: reachability, `read_only`, and for
//! replicas `Seconds_Behind_Master` (NULL: broken replication), which decide
//! whether reads go there.
//!
//! Note for the replica check: a replica notices a frozen primary only when its
//! I/O thread times out (`slave_net_timeout`, 60 s by default, with
//! `MASTER_HEARTBEAT_PERIOD` half of it); until then it still "sees" the
//! primary and the failover waits. Set those low on the replicas, or pass
//! `secondary_check=none`.

use std::collections::HashMap;
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use mysql::Conn;

use crate::client::Session;

use super::{HostHealth, PingType, Topo};
use crate::client::MysqlConnector;
use crate::duration::fmt_duration;
use crate::error::{Error, ErrorKind, Result};
use crate::events::Event;
use crate::pool::{ConnectAttempt, Connector};
use crate::sync::spawn_resilient;

pub(super) fn spawn(t: &Arc<Topo>) -> std::io::Result<std::thread::JoinHandle<()>> {
    let mut m = Monitor::new(t.clone());
    spawn_resilient("staunch-monitor".into(), move || m.run(), || {})
}

struct Monitor {
    t: Arc<Topo>,
    failures: u32,
    /// The kept connection for select/insert pings, and which host it is to.
    kept: Option<(usize, Session)>,
    last_writer: Option<usize>,
    last_change: Option<Instant>,
    discovered: bool,
    /// Hosts already reported as writable besides the writer.
    split_reported: Vec<bool>,
    /// The writer's @@server_id as last read: (host index, id).
    writer_id: Option<(usize, u64)>,
}

/// What one check of a host found.
#[derive(Debug, Default, Clone)]
struct HostState {
    read_only: bool,
    server_id: u64,
    /// Some(status) when the host is a replica.
    replica: Option<HashMap<String, String>>,
}

impl Monitor {
    fn new(t: Arc<Topo>) -> Self {
        let n = t.hosts.len();
        Monitor {
            t,
            failures: 0,
            kept: None,
            last_writer: Some(0),
            last_change: None,
            discovered: false,
            split_reported: vec![false; n],
            writer_id: None,
        }
    }

    fn run(&mut self) {
        loop {
            if self.t.closed.load(Relaxed) {
                return;
            }
            // Probes start every ping_interval (a probe that times out uses
            // part of the interval, as MHA's sleep_until does).
            let tick = Instant::now();
            if !self.discovered {
                self.discover();
                self.discovered = true;
            } else {
                match self.t.writer() {
                    Some(w) => self.probe_writer(w),
                    None => self.discover(),
                }
            }
            self.check_others();
            let rest = self.t.cfg.ping_interval.saturating_sub(tick.elapsed());
            match self
                .t
                .stop_rx
                .recv_timeout(rest.max(Duration::from_millis(1)))
            {
                Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
                _ => return,
            }
        }
    }

    fn connector(&self, i: usize) -> MysqlConnector {
        let mut c = self.t.hosts[i].connect.clone();
        if let Some(u) = &self.t.cfg.monitor_user {
            c.user = Some(u.clone());
        }
        if let Some(p) = &self.t.cfg.monitor_password {
            c.password = Some(p.clone());
        }
        c.query_timeout = Some(self.t.cfg.ping_timeout);
        c.reset_on_return = false;
        MysqlConnector::new(c, self.t.cfg.ping_timeout)
    }

    fn is_alive_error(&self, e: &Error) -> bool {
        e.has_server_code(&self.t.cfg.alive_error_codes)
    }

    fn probe_writer(&mut self, w: usize) {
        let r = self.ping(w);
        let ep = self.t.hosts[w].endpoint.clone();
        match r {
            Ok(()) => {
                self.failures = 0;
                self.t.hosts[w].health.store(HostHealth::Healthy);
            }
            Err(e) if self.is_alive_error(&e) => {
                self.t.emit(Event::PrimaryAliveError {
                    endpoint: ep,
                    error: e,
                });
            }
            Err(e) => {
                self.failures += 1;
                self.t.hosts[w].health.store(HostHealth::Down);
                self.t.emit(Event::PrimarySuspected {
                    endpoint: ep.clone(),
                    failures: self.failures,
                    error: e.clone(),
                });
                if self.failures < self.t.cfg.failure_threshold {
                    return;
                }
                self.failures = 0;
                let seen_by = self.secondary_check(w);
                if !seen_by.is_empty() {
                    self.t.emit(Event::PartitionSuspected {
                        endpoint: ep,
                        seen_by,
                    });
                    return;
                }
                self.declare_dead(w, &e);
            }
        }
    }

    fn declare_dead(&mut self, w: usize, last: &Error) {
        let ep = self.t.hosts[w].endpoint.clone();
        let reason = format!(
            "{} probes in a row failed (last: {last}) and no replica still sees it",
            self.t.cfg.failure_threshold
        );
        self.t.hosts[w].health.store(HostHealth::Down);
        self.t.emit(Event::PrimaryDead {
            endpoint: ep.clone(),
            reason: reason.clone(),
        });
        self.t.refuse_writes(Error::new(
            ErrorKind::NoWriter,
            format!("no writer: the primary {ep} was declared dead ({reason}); waiting for a host with read_only=0"),
        ));
        self.t.hosts[w].pool.soft_evict();
        // Queries in flight on a dead server would wait forever without a
        // query_timeout: cut them off.
        let cut = self.t.hosts[w].pool.abort_borrowed();
        if cut > 0 {
            log::warn!(target: "staunch", "cut off {cut} borrowed connections to the dead primary {ep}");
        }
        self.kept = None;
        self.last_writer = Some(w);
        // Look for the new writer at once, without waiting for the dead
        // host's probe to time out (later rounds include it again).
        self.discover_skipping(Some(w));
    }

    /// Probes host `i` with the configured ping type, under a hard timeout.
    fn ping(&mut self, i: usize) -> Result<()> {
        let connector = self.connector(i);
        let timeout = self.t.cfg.ping_timeout;
        let ep = self.t.hosts[i].endpoint.clone();
        match self.t.cfg.ping_type {
            PingType::Connect => bounded(timeout, &ep, move |a| {
                let mut c = connector.connect(&a)?;
                c.query_drop("SELECT 1")
                    .map_err(|e| Error::from_mysql("SELECT 1", &e))
            }),
            ty => {
                let kept = match self.kept.take() {
                    Some((h, c)) if h == i => Some(c),
                    _ => None,
                };
                let table = self.t.cfg.heartbeat_table.clone();
                let r = bounded(timeout, &ep, move |a| {
                    let fresh = kept.is_none();
                    let mut c = match kept {
                        Some(c) => c,
                        None => connector.connect(&a)?,
                    };
                    // Let the monitor cut this connection off at the deadline.
                    if let Some(dup) = crate::sys::DupFd::new(c.as_raw_fd()) {
                        a.set_canceller(move || {
                            crate::sys::shutdown(dup.fd());
                            Some("no answer to the probe".into())
                        });
                    }
                    let q = |c: &mut Conn, sql: &str| {
                        c.query_drop(sql).map_err(|e| Error::from_mysql(sql, &e))
                    };
                    if ty == PingType::Insert {
                        if fresh {
                            q(
                                &mut c,
                                &format!(
                                    "CREATE TABLE IF NOT EXISTS {table} (id INT PRIMARY KEY, ts DATETIME(6) NOT NULL)"
                                ),
                            )?;
                        }
                        q(
                            &mut c,
                            &format!(
                                "INSERT INTO {table} (id, ts) VALUES (1, NOW(6)) ON DUPLICATE KEY UPDATE ts = VALUES(ts)"
                            ),
                        )?;
                    } else {
                        q(&mut c, "SELECT 1")?;
                    }
                    Ok(c)
                });
                r.map(|c| self.kept = Some((i, c)))
            }
        }
    }

    /// Asks the others whether they still see the primary. Returns who does.
    fn secondary_check(&self, w: usize) -> Vec<String> {
        let ep = &self.t.hosts[w].endpoint;
        if let Some(check) = &self.t.secondary_check {
            if check(ep) {
                return vec!["secondary check".to_string()];
            }
        }
        if !self.t.cfg.secondary_check {
            return Vec::new();
        }
        let states = self.check_hosts(|i| i != w);
        states
            .into_iter()
            .filter_map(|(i, s)| {
                let st = s.ok()?.replica?;
                (st.get("Slave_IO_Running").map(String::as_str) == Some("Yes"))
                    .then(|| self.t.hosts[i].endpoint.clone())
            })
            .collect()
    }

    /// Reads `read_only` and replication status of the chosen hosts, in
    /// parallel, each under `ping_timeout`.
    fn check_hosts(&self, pick: impl Fn(usize) -> bool) -> Vec<(usize, Result<HostState>)> {
        let idx: Vec<usize> = (0..self.t.hosts.len()).filter(|&i| pick(i)).collect();
        let timeout = self.t.cfg.ping_timeout;
        std::thread::scope(|s| {
            let handles: Vec<_> = idx
                .iter()
                .map(|&i| {
                    let connector = self.connector(i);
                    let ep = self.t.hosts[i].endpoint.clone();
                    s.spawn(move || {
                        (
                            i,
                            bounded(timeout, &ep, move |a| host_state(&connector, &a)),
                        )
                    })
                })
                .collect();
            handles.into_iter().filter_map(|h| h.join().ok()).collect()
        })
    }

    /// Finds the writer: the one host with `read_only = 0`.
    fn discover(&mut self) {
        self.discover_skipping(None)
    }

    fn discover_skipping(&mut self, skip: Option<usize>) {
        let states = self.check_hosts(|i| Some(i) != skip);
        let writable: Vec<usize> = states
            .iter()
            .filter(|(_, s)| matches!(s, Ok(st) if !st.read_only))
            .map(|(i, _)| *i)
            .collect();
        let eps = |v: &[usize]| {
            v.iter()
                .map(|&i| self.t.hosts[i].endpoint.clone())
                .collect::<Vec<_>>()
        };
        let current = self.t.writer();
        match writable.as_slice() {
            [] => {}
            [c] => {
                let c = *c;
                if current == Some(c) {
                    return;
                }
                if current.is_some() {
                    // Initial discovery with the first host writable is the
                    // common case; any other writer while one is in use is
                    // handled by check_others.
                    return;
                }
                let from = self.last_writer;
                if let (Some(last), true) = (self.last_change, from != Some(c)) {
                    let min = self.t.cfg.min_failover_interval;
                    if last.elapsed() < min {
                        self.t.emit(Event::FailoverDeferred {
                            candidate: self.t.hosts[c].endpoint.clone(),
                            wait: min - last.elapsed(),
                        });
                        return;
                    }
                }
                self.t.set_writer(c);
                self.t.hosts[c].health.store(HostHealth::Healthy);
                self.failures = 0;
                if from != Some(c) {
                    self.last_change = Some(Instant::now());
                }
                self.last_writer = Some(c);
                self.split_reported = vec![false; self.t.hosts.len()];
                self.t.emit(Event::WriterChanged {
                    from: from.map(|f| self.t.hosts[f].endpoint.clone()),
                    to: self.t.hosts[c].endpoint.clone(),
                });
            }
            many => {
                let writable = eps(many);
                if !self.discovered {
                    // At start: the first host stays writer only if it is one
                    // of them; refuse otherwise.
                    if many.contains(&0) {
                        self.t.emit(Event::SplitBrain {
                            writable,
                            writes_refused: false,
                        });
                        return;
                    }
                }
                if current.is_none() || !self.discovered {
                    self.t.refuse_writes(Error::new(
                        ErrorKind::NoWriter,
                        format!("no writer: split brain, {writable:?} all report read_only=0; writes refused"),
                    ));
                    self.t.emit(Event::SplitBrain {
                        writable,
                        writes_refused: true,
                    });
                }
            }
        }
    }

    /// Health of every host but the writer: reachability, replication lag,
    /// and a second writable host (split brain while we have a writer: the
    /// other one is not used).
    fn check_others(&mut self) {
        let w = self.t.writer();
        if w.is_none() {
            return;
        }
        // The writer is read too, for its server_id: a replica counts only if
        // it replicates from the current writer (after a failover, a replica
        // may still follow, or go back to, the old primary).
        // Only while the writer answers its probes: a failing writer would
        // hold every tick up for ping_timeout (its last id is kept).
        let with_writer = self.failures == 0;
        let states = self.check_hosts(|i| with_writer || Some(i) != w);
        if let Some(id) = states
            .iter()
            .find(|(i, _)| Some(*i) == w)
            .and_then(|(_, s)| s.as_ref().ok().map(|st| st.server_id))
        {
            self.writer_id = Some((w.unwrap_or(0), id));
        }
        let writer_id = self
            .writer_id
            .filter(|(h, _)| Some(*h) == w)
            .map(|(_, id)| id);
        for (i, s) in states {
            if Some(i) == w {
                continue;
            }
            let h = &self.t.hosts[i];
            let before = h.health.load();
            let (now, lag) = match &s {
                Err(_) => (HostHealth::Down, None),
                Ok(st) => {
                    // Another writable host while the writer answers its
                    // probes is split brain; while the writer is failing it
                    // is most likely a promotion in progress (discovery
                    // decides once the writer is declared dead).
                    if !st.read_only && !self.split_reported[i] && self.failures == 0 {
                        self.split_reported[i] = true;
                        self.t.emit(Event::SplitBrain {
                            writable: vec![
                                self.t.hosts[w.unwrap_or(0)].endpoint.clone(),
                                h.endpoint.clone(),
                            ],
                            writes_refused: false,
                        });
                    }
                    let follows_writer = |r: &HashMap<String, String>| match writer_id {
                        Some(id) => {
                            r.get("Master_Server_Id")
                                .and_then(|v| v.parse::<u64>().ok())
                                == Some(id)
                        }
                        None => true,
                    };
                    match &st.replica {
                        None => (HostHealth::Lagging, None),
                        Some(r) if !follows_writer(r) => (HostHealth::Lagging, None),
                        Some(r) => match r
                            .get("Seconds_Behind_Master")
                            .and_then(|v| v.parse::<u64>().ok())
                        {
                            None => (HostHealth::Lagging, None),
                            Some(secs) => {
                                let lag = Duration::from_secs(secs);
                                let ok = self.t.cfg.max_replication_lag.map_or(true, |m| lag <= m);
                                (
                                    if ok {
                                        HostHealth::Healthy
                                    } else {
                                        HostHealth::Lagging
                                    },
                                    Some(lag),
                                )
                            }
                        },
                    }
                }
            };
            h.lag_ms
                .store(lag.map_or(u64::MAX, |l| l.as_millis() as u64), Relaxed);
            h.health.store(now);
            let was_ok = before.takes_reads();
            if was_ok && now != HostHealth::Healthy {
                self.t.emit(Event::ReplicaLagging {
                    endpoint: h.endpoint.clone(),
                    lag,
                });
            } else if !was_ok && now == HostHealth::Healthy {
                self.t.emit(Event::ReplicaRecovered {
                    endpoint: h.endpoint.clone(),
                });
            }
        }
    }
}

/// `read_only` and `SHOW SLAVE STATUS` of one host.
fn host_state(connector: &MysqlConnector, a: &ConnectAttempt) -> Result<HostState> {
    let mut c = connector.connect(a)?;
    let (ro, server_id): (i64, u64) = c
        .query_first("SELECT @@global.read_only, @@global.server_id")
        .map_err(|e| Error::from_mysql("SELECT @@read_only", &e))?
        .unwrap_or((0, 0));
    let rows: Vec<mysql::Row> = c
        .query("SHOW SLAVE STATUS")
        .map_err(|e| Error::from_mysql("SHOW SLAVE STATUS", &e))?;
    let replica = rows.into_iter().next().map(|row| {
        let cols: Vec<String> = row
            .columns_ref()
            .iter()
            .map(|c| c.name_str().into_owned())
            .collect();
        let vals = row.unwrap();
        cols.into_iter()
            .zip(vals)
            .map(|(k, v)| {
                let v = match v {
                    mysql::Value::NULL => String::new(),
                    mysql::Value::Bytes(b) => String::from_utf8_lossy(&b).into_owned(),
                    other => other.as_sql(true),
                };
                (k, v)
            })
            .collect()
    });
    Ok(HostState {
        read_only: ro != 0,
        server_id,
        replica,
    })
}

/// Runs `f` on its own thread and gives up at `timeout`, cancelling the
/// attempt (which shuts the probe's socket down) so the thread ends too.
fn bounded<T: Send + 'static>(
    timeout: Duration,
    endpoint: &str,
    f: impl FnOnce(ConnectAttempt) -> Result<T> + Send + 'static,
) -> Result<T> {
    let attempt = ConnectAttempt::new(timeout);
    let a2 = attempt.clone();
    let (tx, rx) = crossbeam_channel::bounded(1);
    let spawned = std::thread::Builder::new()
        .name("staunch-probe".into())
        .spawn(move || {
            let _ = tx.send(f(a2));
        });
    if let Err(e) = spawned {
        return Err(Error::new(
            ErrorKind::Internal,
            format!("cannot start a probe thread: {e}"),
        ));
    }
    match rx.recv_timeout(timeout) {
        Ok(r) => {
            attempt.finish();
            r
        }
        Err(_) => {
            attempt.cancel();
            let found = attempt.cancelled().unwrap_or_default();
            Err(Error::new(
                ErrorKind::Io,
                format!(
                    "probe of {endpoint} got no answer within {}: {found}",
                    fmt_duration(timeout)
                ),
            ))
        }
    }
}
