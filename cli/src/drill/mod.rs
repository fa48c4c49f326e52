//! `staunch drill`: set-up, the fault schedule, and the final check of every
//! acknowledged write. What is measured lives in `workload`, the verdicts and
//! the report in `report`.

use std::collections::{HashMap, HashSet};
use std::net::{SocketAddr, ToSocketAddrs};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{Arc, OnceLock, Weak};
use std::thread;
use std::time::{Duration, Instant};

use mysql::prelude::Queryable as _;
use staunch::prelude::*;
use staunch::{Event, Pool};

use crate::report::{NotRun, Report, Verification};
use crate::soak::{self, Planned, SoakFigures};
use crate::vitals::Vitals;
use crate::workload::{
    self, fmt_d, lock, Acked, Bounds, Kind, PhaseSpec, ProxyFault, Sample, Shared, Sink, Window,
};
use crate::{panic_text, race, signals};
use crate::{EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_SETUP};
use staunch_testkit::mariadb::{APP_PASS, APP_USER, DB_NAME};
use staunch_testkit::{MariaDb, Mode, Proxy, Topology, TopologyOpts};

pub mod galera;

pub struct Options {
    /// The Galera part instead of the fixed sequence (`--galera`).
    pub galera: bool,
    pub url: Option<String>,
    pub json: Option<PathBuf>,
    /// Also write the report as one self-contained HTML page, with a
    /// timeline per fault (`--html`).
    pub html: Option<PathBuf>,
    pub soak: Option<Duration>,
    pub seed: Option<u64>,
    pub threads: u32,
    pub quiet: bool,
}

/// The pool knobs of the drill (a --url may override any of them).
const DRILL_KNOBS: &[(&str, &str)] = &[
    ("max_size", "8"),
    ("min_idle", "2"),
    ("connect_timeout", "1s"),
    ("connection_timeout", "2s"),
    ("validation_timeout", "500ms"),
    ("query_timeout", "2s"),
];

/// Normal load before the first fault.
const BASELINE: Duration = Duration::from_secs(5);
/// Normal load after each fault of the fixed sequence.
const GAP: Duration = Duration::from_secs(8);
/// How long a black hole or a freeze lasts in the fixed sequence.
const HOLD: Duration = Duration::from_secs(3);
/// How long a killed server stays down before it is restarted.
const DOWN: Duration = Duration::from_secs(1);
/// How long the keepalive race runs.
const RACE: Duration = Duration::from_secs(3);
/// Longest wait for a first success after a fault before moving on (the
/// verdict then says "no successful operation").
const RECOVERY_WAIT: Duration = Duration::from_secs(15);

/// Incidents B and D run in a second phase, on a primary and two replicas
/// of their own, through a topology pool with these knobs: the drill's, with
/// shorter connect and get() deadlines; the monitor at its defaults
/// (ping_interval 1s, ping_timeout 2s, failure_threshold 4, secondary_check
/// replicas, min_failover_interval 60s).
const CLUSTER_KNOBS: &[(&str, &str)] = &[
    ("topology", "replication"),
    ("max_size", "8"),
    ("min_idle", "2"),
    ("connect_timeout", "500ms"),
    ("connection_timeout", "1s"),
    ("validation_timeout", "500ms"),
    ("query_timeout", "2s"),
];
/// Replicas: read-only, MariaDB's replication defaults (slave_net_timeout
/// 60 s), and they close sessions idle for 2 s (incident B's fault).
const REPLICA_ARGS: &[&str] = &["--read-only=1", "--wait-timeout=2"];
/// Normal load on the cluster before B.
const CLUSTER_BASELINE: Duration = Duration::from_secs(3);
/// How long B pauses the read load (the replicas' wait_timeout is 2 s).
const IDLE_PAUSE: Duration = Duration::from_secs(3);
/// Normal load after B and after D's recovery.
const CLUSTER_GAP: Duration = Duration::from_secs(4);
/// D: how long after the freeze replica 1 is promoted (as MHA or an
/// orchestrator would, after its own detection), and how long after writes
/// moved the old primary is thawed, still writable.
const PROMOTE_AFTER: Duration = Duration::from_secs(3);
const THAW_AFTER: Duration = Duration::from_secs(2);
/// D: the monitor's documented bound from the promotion to writes moving
/// there (at its defaults), and the drill's slack on it (a loaded machine).
const FOLLOW_BOUND: Duration = Duration::from_secs(1);
const FOLLOW_SLACK: Duration = Duration::from_secs(1);

/// Longest acceptable time from the primary's freeze to writes moving to
/// the promoted replica: the promotion's delay, then the monitor's bound.
fn failover_detection_bound() -> Duration {
    PROMOTE_AFTER + FOLLOW_BOUND + FOLLOW_SLACK
}

/// Where the faults are injected.
enum Env {
    /// Two throwaway servers; the proxy (the VIP) points at `servers[target]`.
    Local {
        servers: Vec<MariaDb>,
        target: usize,
        proxy: Proxy,
    },
    /// An existing server behind a local chaos proxy; `admin` is a pool
    /// straight to the server (not through the proxy).
    Remote {
        server: SocketAddr,
        proxy: Proxy,
        admin: Pool,
    },
    /// A primary and two replicas (incidents B and D); no proxy: the
    /// topology pool connects to each host.
    Cluster {
        primary: MariaDb,
        replicas: Vec<MariaDb>,
    },
}

impl Env {
    /// The chaos proxy in front of the server, if any.
    fn vip(&self) -> Option<&Proxy> {
        match self {
            Env::Local { proxy, .. } | Env::Remote { proxy, .. } => Some(proxy),
            Env::Cluster { .. } => None,
        }
    }

    /// Undoes whatever a fault left in place (a Ctrl-C or a failed injection
    /// may come mid-fault), so that the servers can be read.
    fn release(&self) {
        match self {
            Env::Local { proxy, .. } | Env::Remote { proxy, .. } => proxy.set_mode(Mode::Pass),
            Env::Cluster { primary, .. } => {
                if primary.is_frozen() {
                    primary.thaw();
                }
            }
        }
    }

    /// Faults possible here, in the order of the fixed sequence.
    fn faults(&self) -> Vec<Kind> {
        match self {
            Env::Local { .. } => vec![
                Kind::KillConnections,
                Kind::VipBlackHole,
                Kind::Freeze,
                Kind::FreezeLongStatements,
                Kind::KillRestart,
                Kind::KeepaliveRace,
            ],
            Env::Remote { .. } => vec![
                Kind::KillConnections,
                Kind::VipBlackHole,
                Kind::KeepaliveRace,
            ],
            Env::Cluster { .. } => vec![Kind::IdleReplicas, Kind::PrimaryPromotion],
        }
    }

    /// What the soak draws from: the faults above and, where there is a
    /// proxy, its modes.
    fn soak_plan(&self, duration: Duration, seed: u64) -> Vec<Planned> {
        soak::plan(&self.faults(), self.vip().is_some(), duration, seed)
    }

    fn label(&self, kind: Kind, hold: Duration) -> String {
        let local = matches!(self, Env::Local { .. });
        match kind {
            Kind::Baseline => "baseline (no fault)".into(),
            Kind::KillConnections if local => "server-side KILL of every pooled connection".into(),
            Kind::KillConnections => "server-side KILL of the pool's connections".into(),
            Kind::VipBlackHole if local => {
                format!("A: VIP's server dies ({}), VIP moves", fmt_hold(hold))
            }
            Kind::VipBlackHole => format!("A: black hole ({}), same server back", fmt_hold(hold)),
            Kind::Freeze => format!("frozen server (SIGSTOP {})", fmt_hold(hold)),
            Kind::FreezeLongStatements => "frozen during long statements (no query_timeout)".into(),
            Kind::KillRestart => "server killed (kill -9) and restarted".into(),
            Kind::KeepaliveRace => "C: keepalive racing borrowers".into(),
            Kind::IdleReplicas => format!(
                "B: idle replica connections expire (reads paused {})",
                fmt_hold(hold)
            ),
            Kind::PrimaryPromotion => "D: primary dies (SIGSTOP), replica promoted".into(),
            Kind::Proxy(ProxyFault::Latency(d)) => {
                format!("VIP: latency {} per chunk ({})", fmt_d(d), fmt_hold(hold))
            }
            Kind::Proxy(ProxyFault::Drip(d)) => {
                format!("VIP: drip, {} per byte ({})", fmt_d(d), fmt_hold(hold))
            }
            Kind::Proxy(ProxyFault::Reset) => {
                format!("VIP: accept and reset ({})", fmt_hold(hold))
            }
            Kind::Proxy(ProxyFault::BlackHole) => {
                format!("VIP: black hole ({}), same server back", fmt_hold(hold))
            }
        }
    }

    /// Injects `kind` and ends it (`sh.end_fault`) when it is over.
    fn inject(
        &mut self,
        kind: Kind,
        hold: Duration,
        w: &Window,
        sh: &Shared,
        url: &str,
    ) -> Result<(), String> {
        match kind {
            Kind::Baseline => Ok(()),
            Kind::KillConnections => self.kill_connections(w, sh),
            Kind::VipBlackHole => self.black_hole(hold, w, sh),
            Kind::Freeze => self.freeze(hold, w, sh),
            Kind::FreezeLongStatements => self.freeze_long_statements(w, sh, url),
            Kind::KillRestart => self.kill_restart(hold, w, sh),
            Kind::KeepaliveRace => {
                sh.set_phase("C: race");
                sh.event(format!(
                    "a second pool ({} connections, keepalive every 10ms) races {} borrowers for {}",
                    race::CONNECTIONS,
                    race::BORROWERS,
                    fmt_hold(hold)
                ));
                let r = race::run(url, hold)?;
                sh.end_fault(w);
                sh.event(format!(
                    "race over: {} queries, {} validations ({} keepalive checks), {} ownership violations, {} crossed answers",
                    r.queries, r.validations, r.keepalives, r.violations + r.pool_violations, r.crossed
                ));
                *lock(&w.race) = Some(r);
                Ok(())
            }
            Kind::IdleReplicas => self.idle_replicas(hold, w, sh),
            Kind::PrimaryPromotion => self.promote(w, sh),
            Kind::Proxy(f) => self.proxy_mode(f, hold, w, sh),
        }
    }

    /// The path through the VIP degrades: the proxy switches to a mode of
    /// `f` and cuts the connections open now (RST), so that the pool's
    /// reconnects meet it; after `hold` it passes again and cuts the
    /// connections made meanwhile (they would stay slow: the proxy keeps a
    /// connection in the mode it was accepted in). Recovery is measured from
    /// that moment.
    fn proxy_mode(
        &mut self,
        f: ProxyFault,
        hold: Duration,
        w: &Window,
        sh: &Shared,
    ) -> Result<(), String> {
        let Some(proxy) = self.vip() else {
            return Err("a proxy mode needs the VIP".into());
        };
        let (mode, what) = match f {
            ProxyFault::Latency(d) => (
                Mode::Latency(d),
                format!("every chunk delayed {} both ways", fmt_d(d)),
            ),
            ProxyFault::Drip(d) => (
                Mode::Drip(d),
                format!("the server's bytes one at a time, {} apart", fmt_d(d)),
            ),
            ProxyFault::Reset => (Mode::Reset, "connects accepted and reset (RST)".into()),
            ProxyFault::BlackHole => (
                Mode::BlackHole,
                "connects accepted and never answered".into(),
            ),
        };
        sh.set_phase(match f {
            ProxyFault::Latency(_) => "VIP: latency",
            ProxyFault::Drip(_) => "VIP: drip",
            ProxyFault::Reset => "VIP: reset",
            ProxyFault::BlackHole => "VIP: black hole",
        });
        proxy.set_mode(mode);
        let cut = proxy.open_connections();
        proxy.sever_all();
        sh.event(format!("VIP: {what}; its {cut} open connections cut"));
        let t = Instant::now();
        signals::sleep(hold);
        // Back to pass whatever happens, even on Ctrl-C.
        proxy.set_mode(Mode::Pass);
        let made = proxy.open_connections();
        proxy.sever_all();
        sh.end_fault(w);
        let note = format!(
            "VIP: {what} for {}; then passes again, cutting the {made} connections made meanwhile",
            fmt_d(t.elapsed())
        );
        sh.event(&note);
        w.note(note);
        Ok(())
    }

    fn kill_connections(&mut self, w: &Window, sh: &Shared) -> Result<(), String> {
        sh.set_phase("KILL");
        match self {
            Env::Local {
                servers, target, ..
            } => {
                let s = &servers[*target];
                let n = s.kill_connections(APP_USER);
                sh.end_fault(w);
                let what = format!(
                    "KILL CONNECTION of {n} sessions of `{APP_USER}` on {}",
                    s.addr()
                );
                sh.event(&what);
                w.note(what);
            }
            Env::Cluster { .. } => return Err("no KILL fault on the cluster".into()),
            Env::Remote { admin, server, .. } => {
                let ids: Vec<u64> = lock(&sh.conn_ids).drain().map(|(_, t)| t).collect();
                let mut c = admin.get().map_err(|e| format!("admin connection: {e}"))?;
                let mut n = 0;
                for id in ids {
                    match c.query_drop(format!("KILL CONNECTION {id}")) {
                        Ok(()) => n += 1,
                        // 1094: unknown thread id (the pool closed it already).
                        Err(e) if e.server_code() == Some(1094) => {}
                        Err(e) => return Err(format!("KILL CONNECTION {id}: {e}")),
                    }
                }
                sh.end_fault(w);
                let what = format!("KILL CONNECTION of the pool's {n} sessions on {server}");
                sh.event(&what);
                w.note(what);
            }
        }
        Ok(())
    }

    fn black_hole(&mut self, hold: Duration, w: &Window, sh: &Shared) -> Result<(), String> {
        sh.set_phase("A: black hole");
        let Some(proxy) = self.vip() else {
            return Err("a black hole needs the VIP".into());
        };
        proxy.set_mode(Mode::BlackHole);
        proxy.sever_all();
        sh.event(
            "VIP: its server is gone: open connections severed, new connects accepted and never greeted",
        );
        let t = Instant::now();
        let completed = signals::sleep(hold);
        let held = t.elapsed();
        match self {
            Env::Local {
                servers,
                target,
                proxy,
            } => {
                let to = 1 - *target;
                proxy.set_target(servers[to].addr());
                proxy.set_mode(Mode::Pass);
                *target = to;
                sh.end_fault(w);
                let what = format!(
                    "VIP moved to server {} ({}) after {}",
                    to + 1,
                    servers[to].addr(),
                    fmt_d(held)
                );
                sh.event(&what);
                w.note(what);
            }
            Env::Remote { proxy, server, .. } => {
                proxy.set_mode(Mode::Pass);
                sh.end_fault(w);
                let what = format!("VIP passes to {server} again after {}", fmt_d(held));
                sh.event(&what);
                w.note(what);
            }
            Env::Cluster { .. } => unreachable!("the cluster has no VIP"),
        }
        if completed {
            sh.set_phase("A: VIP back");
        }
        Ok(())
    }

    fn freeze(&mut self, hold: Duration, w: &Window, sh: &Shared) -> Result<(), String> {
        let Env::Local {
            servers, target, ..
        } = self
        else {
            return Err("a freeze needs a local server".into());
        };
        let s = &servers[*target];
        sh.set_phase("frozen");
        s.freeze();
        sh.event(format!(
            "SIGSTOP to mariadbd pid {} ({}): TCP still accepted, nothing answered",
            s.pid(),
            s.addr()
        ));
        // Thawed whatever happens, even on Ctrl-C.
        let t = Instant::now();
        signals::sleep(hold);
        s.thaw();
        sh.end_fault(w);
        let what = format!(
            "SIGCONT after {}: {} answers again",
            fmt_d(t.elapsed()),
            s.addr()
        );
        sh.event(&what);
        w.note(what);
        Ok(())
    }

    /// Statement liveness: `LONG_STATEMENTS` borrowers of a pool of their
    /// own (the drill's knobs, no query_timeout, liveness at its default)
    /// each run `SELECT SLEEP(60)`; 1 s in, the server is frozen until
    /// every one has returned (at most the bound + 5 s). Invariant: every
    /// call failed with ServerUnresponsive no later than the sum of
    /// liveness_threshold, connect_timeout and validation_timeout (plus 1.5
    /// s of ticks and scheduling) after the freeze; the window fails
    /// otherwise.
    fn freeze_long_statements(&mut self, w: &Window, sh: &Shared, url: &str) -> Result<(), String> {
        const LONG_STATEMENTS: usize = 2;
        let Env::Local {
            servers, target, ..
        } = self
        else {
            return Err("a freeze needs a local server".into());
        };
        let s = &servers[*target];
        let pool = Pool::from_url(&format!(
            "{url}&max_size={LONG_STATEMENTS}&min_idle=0&query_timeout=off"
        ))
        .map_err(|e| format!("the long statements' pool: {e}"))?;
        let c = pool.config();
        let threshold = staunch::DEFAULT_LIVENESS_THRESHOLD;
        let bound = threshold + c.connect_timeout() + c.validation_timeout();
        let slack = Duration::from_millis(1500);
        let (tx, rx) = std::sync::mpsc::channel();
        let mut conns = Vec::new();
        for _ in 0..LONG_STATEMENTS {
            conns.push(
                pool.get()
                    .map_err(|e| format!("the long statements' pool: {e}"))?,
            );
        }
        for mut conn in conns {
            let tx = tx.clone();
            thread::spawn(move || {
                let r = conn.query_drop("SELECT SLEEP(60)");
                let _ = tx.send((Instant::now(), r));
            });
        }
        drop(tx);
        signals::sleep(Duration::from_secs(1));
        sh.set_phase("frozen (long statements)");
        s.freeze();
        let frozen = Instant::now();
        sh.event(format!(
            "SIGSTOP to mariadbd pid {} during {LONG_STATEMENTS} SELECT SLEEP(60) (no query_timeout; liveness_threshold {}, bound {})",
            s.pid(),
            fmt_d(threshold),
            fmt_d(bound)
        ));
        let mut worst = Duration::ZERO;
        let mut bad = Vec::new();
        for _ in 0..LONG_STATEMENTS {
            match rx.recv_timeout((bound + Duration::from_secs(5)).saturating_sub(frozen.elapsed()))
            {
                Ok((at, r)) => {
                    let after = at.duration_since(frozen);
                    worst = worst.max(after);
                    match r {
                        Err(e) if e.kind() == staunch::ErrorKind::ServerUnresponsive => {}
                        Err(e) => bad.push(format!(
                            "a call failed otherwise after {}: {e}",
                            fmt_d(after)
                        )),
                        Ok(()) => bad.push("a call succeeded on a frozen server".into()),
                    }
                }
                Err(_) => {
                    bad.push(format!(
                        "a call still waited {} after the freeze",
                        fmt_d(frozen.elapsed())
                    ));
                    break;
                }
            }
        }
        s.thaw();
        sh.end_fault(w);
        if worst > bound + slack {
            bad.push(format!(
                "a call returned {} after the freeze (bound {} + {} slack)",
                fmt_d(worst),
                fmt_d(bound),
                fmt_d(slack)
            ));
        }
        let what = format!(
            "{LONG_STATEMENTS} long statements cut off at most {} after the freeze (bound: liveness_threshold {} + connect_timeout {} + validation_timeout {}); SIGCONT after {}",
            fmt_d(worst),
            fmt_d(threshold),
            fmt_d(c.connect_timeout()),
            fmt_d(c.validation_timeout()),
            fmt_d(frozen.elapsed())
        );
        sh.event(&what);
        w.note(what);
        if !bad.is_empty() {
            w.fail(bad.join("; "));
        }
        pool.close();
        Ok(())
    }

    fn kill_restart(&mut self, down: Duration, w: &Window, sh: &Shared) -> Result<(), String> {
        let Env::Local {
            servers, target, ..
        } = self
        else {
            return Err("kill -9 needs a local server".into());
        };
        let s = &mut servers[*target];
        sh.set_phase("killed");
        let pid = s.pid();
        s.kill9();
        sh.event(format!(
            "kill -9 of mariadbd pid {pid}: {} refuses connections",
            s.addr()
        ));
        if !signals::sleep(down) {
            return Ok(());
        }
        sh.set_phase("restarting");
        let t = Instant::now();
        s.restart();
        sh.end_fault(w);
        let what = format!(
            "killed, down {}, restarted on the same port in {} (pid {})",
            fmt_hold(down),
            fmt_d(t.elapsed()),
            s.pid()
        );
        sh.event(format!(
            "restarted on {} in {}",
            s.addr(),
            fmt_d(t.elapsed())
        ));
        w.note(what);
        Ok(())
    }

    /// The ids in the drill's table on every server the writes could have
    /// gone to, server by server. On the cluster: the old primary (thawed by
    /// `release`) and the promoted replica.
    fn stored_ids(&self, table: &str) -> Result<Vec<(SocketAddr, HashSet<u64>)>, String> {
        let q = format!("SELECT id FROM {table}");
        let read = |s: &MariaDb| -> Result<(SocketAddr, HashSet<u64>), String> {
            let ids: Vec<u64> = catch_unwind(AssertUnwindSafe(|| s.admin().query(&q)))
                .map_err(|p| panic_text(&*p))?
                .map_err(|e| format!("{}: {e}", s.addr()))?;
            Ok((s.addr(), ids.into_iter().collect()))
        };
        match self {
            Env::Local { servers, .. } => servers.iter().map(read).collect(),
            Env::Cluster { primary, replicas } => Ok(vec![read(primary)?, read(&replicas[0])?]),
            Env::Remote { admin, server, .. } => {
                let mut c = admin.get().map_err(|e| e.to_string())?;
                let ids: Vec<u64> = c.query(&q).map_err(|e| format!("{server}: {e}"))?;
                Ok(vec![(*server, ids.into_iter().collect())])
            }
        }
    }

    /// Incident B: the read load pauses past the replicas' wait_timeout, so
    /// the replicas close the pool's idle connections to them; then reads
    /// resume through `get_read()`. Every one must succeed.
    fn idle_replicas(&mut self, pause: Duration, w: &Window, sh: &Shared) -> Result<(), String> {
        if !matches!(self, Env::Cluster { .. }) {
            return Err("incident B needs the replicas".into());
        }
        // Host 0 is the primary; the others are the replicas.
        let replica_stats = || -> (u64, u64, u64) {
            sh.pool.host_stats()[1..].iter().fold((0, 0, 0), |a, h| {
                (
                    a.0 + h.stats.validation_failures,
                    a.1 + h.stats.closed_broken,
                    a.2 + h.stats.acquired,
                )
            })
        };
        let pooled: usize = sh.pool.host_stats()[1..]
            .iter()
            .map(|h| h.stats.total)
            .sum();
        let before = replica_stats();
        sh.set_phase("B: reads paused");
        sh.reads_paused.store(true, SeqCst);
        sh.event(format!(
            "read load paused for {}: the {pooled} pooled replica connections sit idle past the replicas' wait_timeout (2s); writes go on",
            fmt_hold(pause)
        ));
        let completed = signals::sleep(pause);
        sh.reads_paused.store(false, SeqCst);
        sh.end_fault(w);
        if !completed {
            return Ok(());
        }
        sh.set_phase("B: reads resume");
        sh.event("reads resume through get_read()");
        // Reads for a while, then what the replicas' pools found.
        let t = Instant::now();
        while w.reads.load(SeqCst) < 200 && t.elapsed() < Duration::from_secs(2) {
            if !signals::sleep(Duration::from_millis(10)) {
                return Ok(());
            }
        }
        let after = replica_stats();
        let (invalid, broken, reads) = (after.0 - before.0, after.1 - before.1, after.2 - before.2);
        let what = format!(
            "reads paused {}; in the first {reads} borrows from the replicas after it, {invalid} idle \
             connections failed validation (the replicas had closed them) and were replaced \
             ({broken} closed as broken in all); {} read errors",
            fmt_hold(pause),
            w.read_errors.load(SeqCst)
        );
        sh.event(&what);
        w.note(what);
        if invalid + broken == 0 {
            w.fail("no expired replica connection was met after the pause: the fault was not exercised");
        }
        Ok(())
    }

    /// Incident D, as issue #12 saw it: the primary freezes (SIGSTOP); 3 s
    /// later, as MHA or an orchestrator would, replica 1 is promoted
    /// (`STOP SLAVE; RESET SLAVE ALL; SET GLOBAL read_only=0`, once it has
    /// applied what it received); replica 2 stays on the frozen primary. The
    /// monitor (at its defaults) must move writes there within its bound.
    /// Then the old primary thaws, still writable: it must be reported stale
    /// and get no writes (checked at the end, row by row) and no reads.
    fn promote(&mut self, w: &Window, sh: &Shared) -> Result<(), String> {
        let Env::Cluster { primary, replicas } = self else {
            return Err("incident D needs a primary and replicas".into());
        };
        let new = &replicas[0];
        sh.set_phase("D: frozen");
        primary.freeze();
        sh.event(format!(
            "SIGSTOP to the primary, mariadbd pid {} ({}): TCP still accepted, nothing answered",
            primary.pid(),
            primary.addr()
        ));
        if !signals::sleep(PROMOTE_AFTER) {
            return Ok(());
        }
        staunch_testkit::topology::promote(new);
        sh.end_fault(w);
        let promoted_after = Duration::from_nanos(sh.now_ns().saturating_sub(w.start_ns));
        sh.event(format!(
            "replica 1 ({}) promoted, as an operator would: STOP SLAVE; RESET SLAVE ALL; SET GLOBAL \
             read_only=0 ({} after the freeze); replica 2 stays on the frozen primary",
            new.addr(),
            fmt_d(promoted_after)
        ));
        sh.set_phase("D: failover");
        let budget = w.bounds.recovery_for(Kind::PrimaryPromotion) + Duration::from_secs(5);
        while w.recovery().is_none() && w.since_start(sh.now_ns()).unwrap_or_default() < budget {
            if !signals::sleep(Duration::from_millis(10)) {
                return Ok(());
            }
        }
        let at = |ns: u64| {
            w.since_start(ns).map_or("never".to_string(), |d| {
                format!(
                    "{} after the freeze, {} after the promotion",
                    fmt_d(d),
                    fmt_d(d.saturating_sub(promoted_after))
                )
            })
        };
        w.note(format!(
            "primary {} frozen; replica 1 {} promoted {} after; writes moved there {}; first write {}",
            primary.addr(),
            new.addr(),
            fmt_d(promoted_after),
            at(w.writer_changed_ns.load(SeqCst)),
            w.recovery().map_or("never".to_string(), |d| format!(
                "{} after the freeze, {} after the promotion",
                fmt_d(d),
                fmt_d(d.saturating_sub(promoted_after))
            ))
        ));
        let expected = new.addr().to_string();
        match sh.pool.writer() {
            Some(wr) if wr == expected => {}
            other => w.fail(format!(
                "after the failover the writer is {}, not the promoted replica {expected}",
                other.unwrap_or_else(|| "none".into())
            )),
        }
        // The old primary comes back, still writable.
        sh.set_phase("D: stale primary");
        if !signals::sleep(THAW_AFTER) {
            return Ok(());
        }
        primary.thaw();
        let thawed = Instant::now();
        sh.event(format!(
            "the old primary {} thawed, still read_only=0: a stale primary",
            primary.addr()
        ));
        while thawed.elapsed() < Duration::from_secs(5)
            && sh.pool.host_stats()[0].health != staunch::HostHealth::Stale
        {
            if !signals::sleep(Duration::from_millis(10)) {
                return Ok(());
            }
        }
        if sh.pool.host_stats()[0].health == staunch::HostHealth::Stale {
            w.note(format!(
                "the old primary, thawed {} after writes moved, was reported stale {} later: \
                 no writes or reads go there",
                fmt_d(THAW_AFTER),
                fmt_d(thawed.elapsed())
            ));
        } else {
            w.fail("the thawed old primary was not reported stale within 5s");
        }
        match sh.pool.writer() {
            Some(wr) if wr == expected => {}
            other => w.fail(format!(
                "after the old primary thawed the writer is {}, not {expected}",
                other.unwrap_or_else(|| "none".into())
            )),
        }
        Ok(())
    }
}

fn fmt_hold(d: Duration) -> String {
    let s = d.as_secs_f64();
    if (s - s.round()).abs() < 1e-9 {
        format!("{s:.0}s")
    } else {
        format!("{s:.1}s")
    }
}

pub fn run(o: Options) -> u8 {
    if o.galera {
        return galera::run(o.threads, o.quiet, o.html.as_deref());
    }
    // Before any thread: the soak's resident-memory figure should be the
    // pool's, not glibc's per-thread arena retention.
    let arenas_capped = o.soak.is_some() && crate::vitals::cap_malloc_arenas();
    if arenas_capped {
        println!(
            "soak: glibc malloc arenas capped at {} (see docs/drill.md, the chaos soak)",
            crate::vitals::MALLOC_ARENAS
        );
    }
    let env = match &o.url {
        None => setup_local(),
        Some(u) => setup_remote(u),
    };
    let (env, pool_url, table, version) = match env {
        Ok(x) => x,
        Err(e) => {
            eprintln!("staunch drill: cannot set up: {e}");
            return if signals::interrupted() {
                EXIT_INTERRUPTED
            } else {
                EXIT_SETUP
            };
        }
    };
    drive(o, env, pool_url, table, version)
}

type Setup = (Env, String, String, String);

fn create_table_sql(table: &str) -> String {
    format!(
        "CREATE TABLE {table} (id BIGINT UNSIGNED NOT NULL PRIMARY KEY, \
         worker INT UNSIGNED NOT NULL, seq BIGINT UNSIGNED NOT NULL) ENGINE=InnoDB"
    )
}

/// The cluster's table: also which server executed each insert (a trigger
/// sets `sid` to `@@server_id`; replicas apply the row as it is, ROW
/// format) and when, for D's check that nothing was written on the old
/// primary after writes moved.
fn cluster_table_sql(table: &str) -> [String; 2] {
    [
        format!(
            "CREATE TABLE {table} (id BIGINT UNSIGNED NOT NULL PRIMARY KEY, \
             worker INT UNSIGNED NOT NULL, seq BIGINT UNSIGNED NOT NULL, \
             sid INT UNSIGNED NOT NULL DEFAULT 0, \
             at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)) ENGINE=InnoDB"
        ),
        format!(
            "CREATE TRIGGER {table}_sid BEFORE INSERT ON {table} FOR EACH ROW SET NEW.sid = @@server_id"
        ),
    ]
}

fn table_name() -> String {
    format!("staunch_drill_{}", std::process::id())
}

fn setup_local() -> Result<Setup, String> {
    println!("starting two throwaway MariaDB servers ...");
    let t = Instant::now();
    let started = catch_unwind(|| {
        thread::scope(|s| {
            let a = s.spawn(MariaDb::start);
            let b = s.spawn(MariaDb::start);
            (a.join(), b.join())
        })
    });
    let servers = match started {
        Ok((Ok(a), Ok(b))) => vec![a, b],
        Ok((Err(p), _)) | Ok((_, Err(p))) | Err(p) => {
            return Err(format!(
                "{}\n(the drill needs mariadbd and mariadb-install-db: run scripts/drill.sh, \
                 which installs them, or point the drill at a server with --url)",
                panic_text(&*p)
            ))
        }
    };
    if signals::interrupted() {
        return Err("interrupted".into());
    }
    let table = table_name();
    let version = catch_unwind(AssertUnwindSafe(|| {
        for s in &servers {
            s.sql(&create_table_sql(&table));
        }
        servers[0]
            .query_string("SELECT VERSION()")
            .unwrap_or_default()
    }))
    .map_err(|p| panic_text(&*p))?;
    println!(
        "  servers   MariaDB {version}: server 1 on {}, server 2 on {} (ready in {})",
        servers[0].addr(),
        servers[1].addr(),
        fmt_d(t.elapsed())
    );
    let proxy = Proxy::start(servers[0].addr());
    println!("  VIP       chaos proxy on {} -> server 1", proxy.addr());
    let knobs: Vec<String> = DRILL_KNOBS
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let url = format!(
        "mysql://{APP_USER}:{}@{}/{DB_NAME}?{}",
        staunch_testkit::mariadb::APP_PASS,
        proxy.addr(),
        knobs.join("&")
    );
    Ok((
        Env::Local {
            servers,
            target: 0,
            proxy,
        },
        url,
        table,
        version,
    ))
}

fn setup_remote(url: &str) -> Result<Setup, String> {
    let cfg = staunch::Config::from_url(url).map_err(|e| e.to_string())?;
    let ep = cfg.connect().endpoint();
    if ep.starts_with("unix:") {
        return Err(
            "--url must name a TCP address: the drill puts a chaos proxy in front of it".into(),
        );
    }
    let server = ep
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {ep}: {e}"))?
        .next()
        .ok_or_else(|| format!("{ep} resolves to no address"))?;
    let admin = staunch::Builder::new()
        .url(url)
        .max_size(2)
        .min_idle(0)
        .query_timeout(Some(Duration::from_secs(10)))
        .build()
        .map_err(|e| e.to_string())?;
    let budget = admin.config().connect_timeout() + Duration::from_millis(500);
    let table = table_name();
    let version = {
        let mut c = admin
            .get_timeout(budget)
            .map_err(|e| format!("{}: {e}", staunch::Config::redact_url(url)))?;
        let v: Option<String> = c
            .query_first("SELECT VERSION()")
            .map_err(|e| e.to_string())?;
        c.query_drop(create_table_sql(&table))
            .map_err(|e| format!("cannot create the drill's table {table}: {e}"))?;
        v.unwrap_or_default()
    };
    let proxy = Proxy::start(server);
    println!("  server    {version} on {server}");
    println!(
        "  VIP       local chaos proxy on {} -> {server}",
        proxy.addr()
    );
    let pool_url = via_proxy(url, proxy.port())?;
    Ok((
        Env::Remote {
            server,
            proxy,
            admin,
        },
        pool_url,
        table,
        version,
    ))
}

/// `url` with its host and port replaced by the proxy's, and the drill's
/// knobs added where the url does not set them.
fn via_proxy(url: &str, port: u16) -> Result<String, String> {
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| "the url must start with mysql://".to_string())?;
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let userinfo = authority
        .rsplit_once('@')
        .map(|(u, _)| format!("{u}@"))
        .unwrap_or_default();
    let mut out = format!("{scheme}://{userinfo}127.0.0.1:{port}{tail}");
    let present: HashSet<&str> = tail
        .split_once('?')
        .map(|(_, q)| q.split('&').filter_map(|p| p.split('=').next()).collect())
        .unwrap_or_default();
    for (k, v) in DRILL_KNOBS {
        if !present.contains(k) {
            let sep = if !out.contains('?') {
                "?"
            } else if out.ends_with('?') || out.ends_with('&') {
                ""
            } else {
                "&"
            };
            out.push_str(&format!("{sep}{k}={v}"));
        }
    }
    Ok(out)
}

/// Where a pool's event listener finds the phase's `Shared` (set once the
/// phase starts; weak, so that the pool does not keep it alive).
type SharedCell = Arc<OnceLock<Weak<Shared>>>;

/// The drill's pool over `url`, whose events go to the drill's output. On a
/// topology pool (`cluster`), the monitor's events are printed too, and the
/// moments it declares the primary dead and changes the writer are marked
/// on the current window (incident D), through `cell` once the phase's
/// `Shared` exists.
fn open_pool(url: &str, sink: &Arc<Sink>, cluster: bool) -> Result<(Pool, SharedCell), String> {
    let cell: SharedCell = Arc::default();
    let listener = {
        let (sink, cell) = (sink.clone(), cell.clone());
        move |e: &Event| match e {
            Event::ConnectFailed {
                error,
                attempt,
                endpoint,
            } if *attempt == 1 => {
                if cluster {
                    sink.push(format!("pool: a connect to {endpoint} failed: {error}"));
                } else {
                    sink.push(format!("pool: a connect failed: {error}"));
                }
            }
            Event::Recovered {
                failures,
                outage,
                endpoint,
            } => sink.push(format!(
                "pool: connects{} work again after {} ({} outage)",
                if cluster {
                    format!(" to {endpoint}")
                } else {
                    String::new()
                },
                if *failures == 1 {
                    "1 failed attempt".to_string()
                } else {
                    format!("{failures} failed attempts")
                },
                fmt_d(*outage)
            )),
            _ => {
                if let Some((level, text)) = crate::monitor::describe(e) {
                    sink.push(format!("monitor [{level}]: {text}"));
                }
                // D's detection is writes moving to the promoted replica
                // (following the promotion needs no PrimaryDead).
                let moved = match e {
                    Event::PrimaryDead { .. } => false,
                    Event::WriterChanged { .. } => true,
                    _ => return,
                };
                if let Some(sh) = cell.get().and_then(Weak::upgrade) {
                    let w = sh.current();
                    if w.kind == Kind::PrimaryPromotion && moved {
                        let now = sh.now_ns();
                        w.detected_ns.fetch_min(now, SeqCst);
                        w.writer_changed_ns.fetch_min(now, SeqCst);
                    }
                }
            }
        }
    };
    let pool = staunch::Builder::new()
        .url(url)
        .event_listener(Arc::new(listener))
        .build()
        .map_err(|e| format!("cannot open the pool: {e}"))?;
    Ok((pool, cell))
}

/// What fault schedule a phase runs.
#[derive(Clone, Copy)]
enum Schedule<'a> {
    /// Every fault of the environment once, numbered from `first` of `total`.
    Fixed { first: usize, total: usize },
    Soak {
        duration: Duration,
        plan: &'a [Planned],
    },
}

/// What a phase of the drill saw.
struct PhaseOut {
    windows: Vec<Arc<Window>>,
    acked: Vec<Acked>,
    violations: u64,
    /// The soak's run-wide measurements (with a soak schedule).
    soak: Option<SoakRaw>,
    /// The workload per 100 ms (with --html).
    timeline: Vec<Sample>,
}

/// What a soak phase measured beyond the windows.
struct SoakRaw {
    start: Vitals,
    samples: Vec<Vitals>,
    end: soak::EndState,
    errors_by_kind: std::collections::BTreeMap<String, u64>,
}

/// One phase: the workload on `pool`, a baseline, the faults of `schedule`,
/// then the workload stops and the pool closes.
#[allow(clippy::too_many_arguments)]
fn run_phase(
    o: &Options,
    sink: &Arc<Sink>,
    env: &mut Env,
    (pool, cell): (Pool, SharedCell),
    url: &str,
    table: &str,
    spec: PhaseSpec,
    (baseline, baseline_text): (Duration, &str),
    schedule: Schedule,
) -> PhaseOut {
    let sh = Shared::new(pool.clone(), table.to_string(), spec, sink.clone());
    let _ = cell.set(Arc::downgrade(&sh));
    let mut workers = Vec::new();
    for n in 0..o.threads {
        let sh2 = sh.clone();
        match thread::Builder::new()
            .name(format!("drill-worker-{n}"))
            .spawn(move || workload::worker(sh2, n))
        {
            Ok(h) => workers.push(h),
            Err(e) => {
                eprintln!("staunch drill: cannot start a worker thread: {e}");
                sh.stop.store(true, SeqCst);
                break;
            }
        }
    }
    let reporter_done = Arc::new(AtomicBool::new(false));
    let reporter = {
        let (sh2, done) = (sh.clone(), reporter_done.clone());
        let quiet = o.quiet;
        thread::Builder::new()
            .name("drill-reporter".into())
            .spawn(move || workload::reporter(sh2, quiet, done))
            .ok()
    };

    sh.say(baseline_text);
    signals::sleep(baseline);

    // The soak's reference point: the process after the warm-up.
    let soaking = matches!(schedule, Schedule::Soak { .. });
    let start_vitals = soaking.then(|| {
        crate::vitals::release_free_memory();
        let v = Vitals::sample(sh.elapsed(), &pool);
        sh.event(format!(
            "after the warm-up: {} KiB resident, {} open fds, {} threads ({} the pool's), {} connections",
            v.rss_kib, v.fds, v.threads.total, v.threads.pool, v.pool_total
        ));
        sh.sampling.store(true, SeqCst);
        v
    });

    match schedule {
        Schedule::Soak { duration, plan } => soak(env, &sh, url, duration, plan),
        Schedule::Fixed { first, total } => fixed(env, &sh, url, first, total),
    }
    sh.say(if signals::interrupted() {
        "interrupted: stopping the workload"
    } else {
        "stopping the workload"
    });
    sh.stop.store(true, SeqCst);
    let mut logs = Vec::new();
    for h in workers {
        match h.join() {
            Ok(a) => logs.push(a),
            Err(_) => eprintln!("staunch drill: a worker thread panicked"),
        }
    }
    sh.finish();
    // The soak: wait (bounded) for the pool and the process to go back
    // within their bounds, while the reporter still samples.
    let end = start_vitals.as_ref().map(|v| {
        sh.say(format!(
            "workload stopped: waiting at most {} for connections and threads to return to their bounds",
            fmt_hold(soak::END_CHECK_BOUND)
        ));
        let e = soak::await_end(&pool, v, sh.t0);
        if !e.at_first.is_empty() {
            sh.say(format!("at the workload's end: {}", e.at_first.join("; ")));
        }
        sh.say(if e.problems.is_empty() {
            format!("within bounds after {}", fmt_d(e.waited))
        } else {
            format!(
                "still out of bounds after {}: {}",
                fmt_d(e.waited),
                e.problems.join("; ")
            )
        });
        e
    });
    sh.sampling.store(false, SeqCst);
    reporter_done.store(true, SeqCst);
    if let Some(r) = reporter {
        let _ = r.join();
    }
    let timeline = sh.timeline.as_ref().map_or(Vec::new(), |t| t.take());
    let soak = match (start_vitals, end) {
        (Some(start), Some(end)) => Some(SoakRaw {
            start,
            samples: std::mem::take(&mut *lock(&sh.samples)),
            end,
            errors_by_kind: lock(&sh.errors_by_kind).clone(),
        }),
        _ => None,
    };
    // Unpacked after the soak's last sample.
    let acked: Vec<Acked> = logs.into_iter().flat_map(|l| l.into_acked()).collect();
    let violations = pool.stats().violations;
    pool.close();
    // Make sure the servers can be read (a Ctrl-C may have come mid-fault).
    env.release();
    PhaseOut {
        windows: sh.windows(),
        acked,
        violations,
        soak,
        timeline,
    }
}

/// Reads every acknowledged write of a phase back. Also returns what each
/// server holds.
fn verify(
    env: &Env,
    table: &str,
    acked: &[Acked],
) -> (Verification, Vec<(SocketAddr, HashSet<u64>)>) {
    match env.stored_ids(table) {
        Ok(per_server) => {
            let stored: HashSet<u64> = per_server.iter().flat_map(|(_, s)| s).copied().collect();
            let mut missing_by_window: HashMap<usize, u64> = HashMap::new();
            let mut missing = Vec::new();
            for (id, w) in acked {
                if !stored.contains(id) {
                    *missing_by_window.entry(*w).or_default() += 1;
                    missing.push(*id);
                }
            }
            (
                Verification::Done {
                    acked: acked.len() as u64,
                    found: acked.len() as u64 - missing.len() as u64,
                    missing_by_window,
                    missing_sample: missing.into_iter().take(10).collect(),
                },
                per_server,
            )
        }
        Err(e) => (
            Verification::Skipped(format!("could not read the table back: {e}")),
            Vec::new(),
        ),
    }
}

/// Incidents B and D, as NotRun entries with `reason`.
fn b_and_d_not_run(reason: &str, failed: bool) -> Vec<NotRun> {
    [
        (
            "B: idle replica connections expire",
            Kind::IdleReplicas.key(),
        ),
        (
            "D: primary dies, replica promoted",
            Kind::PrimaryPromotion.key(),
        ),
    ]
    .into_iter()
    .map(|(label, key)| NotRun {
        label: label.into(),
        key: key.into(),
        reason: reason.into(),
        failed,
    })
    .collect()
}

fn drive(o: Options, mut env: Env, pool_url: String, table: String, version: String) -> u8 {
    let sink = Arc::new(Sink::new());
    let (pool, cell) = match open_pool(&pool_url, &sink, false) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("staunch drill: {e}");
            return EXIT_SETUP;
        }
    };
    let (max_size, min_idle) = (pool.config().max_size(), pool.config().min_idle());
    let mut bounds = Bounds::of(pool.config());
    if o.soak.is_some() {
        // The soak holds every get() to its own, tighter slack.
        bounds.wait = bounds.connection_timeout + soak::WAIT_SLACK;
    }
    println!("  pool      {}", staunch::Config::redact_url(&pool_url));
    println!(
        "  workload  {} threads: reads (SELECT ? of a tag of their own) and writes \
         (BEGIN; INSERT a unique id; COMMIT) into {table}",
        o.threads
    );
    println!(
        "  survived  every get() within {} (connection_timeout + {}), a first success within {} \
         of the fault's end (connect_timeout + 2s), no acknowledged write lost, no crossed answer",
        fmt_d(bounds.wait),
        fmt_d(bounds.wait - bounds.connection_timeout),
        fmt_d(bounds.recovery)
    );
    let seed = o.soak.map(|_| {
        o.seed.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64 % 1_000_000)
                .unwrap_or(1)
        })
    });
    let plan: Vec<Planned> = match (o.soak, seed) {
        (Some(d), Some(seed)) => env.soak_plan(d, seed),
        _ => Vec::new(),
    };
    if let (Some(d), Some(seed)) = (o.soak, seed) {
        println!(
            "  soak      {} of faults picked at random, seed {seed} (repeat with --soak {} --seed {seed}); \
             the schedule (the run stops at {}, then {} of load and the end checks):",
            fmt_hold(d),
            staunch::duration::fmt_duration(d),
            fmt_hold(d),
            fmt_hold(soak::FINAL_SETTLE)
        );
        soak::print_schedule(&plan);
        println!(
            "  at the end every get() within {}, every acknowledged write read back, no crossed answer; \
             connections, threads and fds back within bounds within {}; resident memory growth within \
             max({} MiB, {} %) + {} MiB (the driver's read buffer) per connection",
            fmt_d(bounds.wait),
            fmt_hold(soak::END_CHECK_BOUND),
            soak::RSS_GROWTH_MIN_KIB / 1024,
            soak::RSS_GROWTH_PERCENT,
            soak::READ_BUFFER_KIB / 1024
        );
    }
    println!();

    let remote = matches!(env, Env::Remote { .. });
    // The fixed sequence on local servers goes on with B and D on a cluster.
    let with_cluster = !remote && o.soak.is_none();
    let single_faults = env.faults().len();
    let schedule = match (o.soak, seed) {
        (Some(duration), Some(_)) => Schedule::Soak {
            duration,
            plan: &plan,
        },
        _ => Schedule::Fixed {
            first: 1,
            total: single_faults + if with_cluster { 2 } else { 0 },
        },
    };
    let spec = PhaseSpec {
        first_index: 0,
        baseline_label: "baseline (no fault)".into(),
        bounds,
        split_reads: false,
        track_ids: remote,
        timeline: o.html.is_some(),
    };
    let p1 = run_phase(
        &o,
        &sink,
        &mut env,
        (pool, cell),
        &pool_url,
        &table,
        spec,
        (
            if o.soak.is_some() {
                Duration::from_secs(3)
            } else {
                BASELINE
            },
            "baseline: normal load, no fault",
        ),
        schedule,
    );
    let mut interrupted = signals::interrupted();

    let mut verification = if interrupted {
        Verification::Skipped("interrupted".into())
    } else {
        sink.say(if remote {
            "reading every acknowledged write back from the server"
        } else {
            "reading every acknowledged write back from both servers"
        });
        verify(&env, &table, &p1.acked).0
    };

    if let Env::Remote { admin, .. } = &env {
        match admin.get().map_err(|e| e.to_string()).and_then(|mut c| {
            c.query_drop(format!("DROP TABLE IF EXISTS {table}"))
                .map_err(|e| e.to_string())
        }) {
            Ok(()) => println!(
                "[{}] dropped table {table}",
                workload::stamp(sink.t0.elapsed())
            ),
            Err(e) => eprintln!("staunch drill: could not drop {table} ({e}): drop it by hand"),
        }
        admin.close();
    }
    drop(env); // stops the proxy and the servers of the first phase

    let soak_figures = match (p1.soak, seed) {
        (Some(raw), Some(seed)) => Some(soak_figures(
            raw,
            seed,
            plan,
            &p1.windows,
            p1.acked.len() as u64,
            bounds.connection_timeout,
            (max_size, min_idle),
        )),
        _ => None,
    };
    let mut windows = p1.windows;
    let mut timeline = p1.timeline;
    let mut violations = p1.violations;
    let mut cluster_bounds = None;
    let mut not_run = Vec::new();
    if remote {
        for (label, key) in [
            ("frozen server (SIGSTOP)", "frozen_server"),
            (
                "server killed (kill -9) and restarted",
                "server_killed_restarted",
            ),
        ] {
            not_run.push(NotRun {
                label: label.into(),
                key: key.into(),
                reason: "not run (needs a local server: run without --url)".into(),
                failed: false,
            });
        }
        not_run.extend(b_and_d_not_run("not run (needs a local cluster)", false));
    } else if o.soak.is_some() {
        not_run.extend(b_and_d_not_run(
            "not run (--soak draws from the single-server faults only)",
            false,
        ));
    } else if interrupted {
        not_run.extend(b_and_d_not_run("not run (interrupted)", false));
    } else {
        match cluster_phase(&o, &sink, &table, windows.len(), single_faults + 1) {
            Ok(p2) => {
                windows.extend(p2.windows);
                timeline.extend(p2.timeline);
                violations += p2.violations;
                verification = verification.merge(p2.verification);
                cluster_bounds = Some(p2.bounds);
            }
            Err(_) if signals::interrupted() => {
                not_run.extend(b_and_d_not_run("not run (interrupted)", false));
            }
            Err(e) => {
                eprintln!("staunch drill: cannot set up the cluster for B and D: {e}");
                not_run.extend(b_and_d_not_run(
                    &format!("FAILED: the cluster could not be set up: {e}"),
                    true,
                ));
            }
        }
        interrupted = signals::interrupted();
        if interrupted {
            verification = Verification::Skipped("interrupted".into());
        }
    }

    let report = Report {
        mode: if remote { "url" } else { "local" },
        url: staunch::Config::redact_url(&pool_url),
        server_version: version,
        threads: o.threads,
        soak: o.soak,
        seed,
        bounds,
        cluster_bounds,
        windows,
        not_run,
        verification,
        violations,
        interrupted,
        duration: sink.t0.elapsed(),
        soak_figures,
        timeline,
    };
    println!();
    report.print();
    if let Some(path) = &o.json {
        match std::fs::write(path, report.to_json()) {
            Ok(()) => println!("report written to {}", path.display()),
            Err(e) => eprintln!("staunch drill: cannot write {}: {e}", path.display()),
        }
    }
    if let Some(path) = &o.html {
        match std::fs::write(path, crate::html::page(&report)) {
            Ok(()) => println!("timelines written to {}", path.display()),
            Err(e) => eprintln!("staunch drill: cannot write {}: {e}", path.display()),
        }
    }
    if interrupted {
        EXIT_INTERRUPTED
    } else if report.passed() {
        EXIT_OK
    } else {
        EXIT_FAILED
    }
}

/// The soak's figures from what its phase measured.
fn soak_figures(
    raw: SoakRaw,
    seed: u64,
    schedule: Vec<Planned>,
    windows: &[Arc<Window>],
    acked: u64,
    connection_timeout: Duration,
    (max_size, min_idle): (usize, usize),
) -> SoakFigures {
    let mut faults_by_kind = std::collections::BTreeMap::new();
    for w in windows.iter().filter(|w| w.kind != Kind::Baseline) {
        *faults_by_kind.entry(w.kind.key()).or_insert(0) += 1;
    }
    let mut errors_by_kind = raw.errors_by_kind;
    let race_errors: u64 = windows
        .iter()
        .filter_map(|w| lock(&w.race).as_ref().map(|r| r.errors))
        .sum();
    if race_errors > 0 {
        errors_by_kind.insert("race borrowers (C)".into(), race_errors);
    }
    SoakFigures {
        seed,
        schedule,
        faults_run: faults_by_kind.values().sum::<u64>() as usize,
        ops: windows.iter().map(|w| w.ops.load(SeqCst)).sum(),
        reads: windows.iter().map(|w| w.reads.load(SeqCst)).sum(),
        faults_by_kind,
        errors_by_kind,
        longest_wait: windows
            .iter()
            .map(|w| w.longest_wait())
            .max()
            .unwrap_or_default(),
        connection_timeout,
        max_size,
        min_idle,
        start: raw.start,
        acked,
        samples: raw.samples,
        end: raw.end,
    }
}

/// What the cluster phase saw (B and D).
struct ClusterOut {
    windows: Vec<Arc<Window>>,
    timeline: Vec<Sample>,
    verification: Verification,
    violations: u64,
    bounds: Bounds,
}

/// A primary and two replicas (`REPLICA_ARGS`) replicating from it, with
/// the drill's table; started in parallel. The servers stop when dropped.
pub fn start_cluster(table: Option<&str>) -> Result<(MariaDb, Vec<MariaDb>), String> {
    let opts = TopologyOpts {
        replicas: 2,
        // The test kit gives every replica --read-only=1 itself.
        replica_args: REPLICA_ARGS
            .iter()
            .filter(|a| **a != "--read-only=1")
            .map(|a| a.to_string())
            .collect(),
        // The drill's workload was written with the template's grants.
        app_read_only_admin: true,
        ..Default::default()
    };
    let cluster = catch_unwind(AssertUnwindSafe(|| Topology::start_unreplicated(opts)))
        .map_err(|p| panic_text(&*p))?;
    if signals::interrupted() {
        return Err("interrupted".into());
    }
    catch_unwind(AssertUnwindSafe(|| {
        cluster.replicate();
        if let Some(t) = table {
            for q in cluster_table_sql(t) {
                cluster.primary().sql(&q);
            }
            cluster.catch_up();
        }
    }))
    .map_err(|p| panic_text(&*p))?;
    Ok(cluster.into_parts())
}

/// The topology pool's URL over a cluster.
fn cluster_url(primary: &MariaDb, replicas: &[MariaDb], knobs: &[(&str, &str)]) -> String {
    let hosts: Vec<String> = std::iter::once(primary)
        .chain(replicas)
        .map(|s| s.addr().to_string())
        .collect();
    let knobs: Vec<String> = knobs.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!(
        "mysql://{APP_USER}:{APP_PASS}@{}/{DB_NAME}?{}",
        hosts.join(","),
        knobs.join("&")
    )
}

/// D: acknowledged writes the old primary executed (its server id in the
/// row) at or after the first insert the promoted replica executed.
fn writes_on_old_after_move(env: &Env, table: &str, acked: &[Acked]) -> Result<usize, String> {
    let Env::Cluster { primary, replicas } = env else {
        return Ok(0);
    };
    catch_unwind(AssertUnwindSafe(|| {
        let (old_id, new_id) = (
            primary.query_i64("SELECT @@server_id").unwrap_or(0),
            replicas[0].query_i64("SELECT @@server_id").unwrap_or(0),
        );
        let Some(moved) = replicas[0].query_string(&format!(
            "SELECT CAST(MIN(at) AS CHAR) FROM {table} WHERE sid = {new_id}"
        )) else {
            return Err("no write was executed on the promoted replica".to_string());
        };
        let late: HashSet<u64> = primary
            .query_rows(&format!(
                "SELECT id FROM {table} WHERE sid = {old_id} AND at >= '{moved}'"
            ))
            .into_iter()
            .filter_map(|r| r[0].as_deref()?.parse().ok())
            .collect();
        Ok(acked.iter().filter(|(id, _)| late.contains(id)).count())
    }))
    .map_err(|p| panic_text(&*p))?
}

/// The second phase: incidents B and D on a primary and two replicas of
/// their own, with the same workload (reads through `get_read()`).
fn cluster_phase(
    o: &Options,
    sink: &Arc<Sink>,
    table: &str,
    first_index: usize,
    first_fault: usize,
) -> Result<ClusterOut, String> {
    println!();
    sink.say("incidents B and D: starting a primary and two replicas ...");
    let t = Instant::now();
    let (primary, replicas) = start_cluster(Some(table))?;
    println!(
        "  cluster   primary on {}, replicas on {} and {} ({}; ready in {})",
        primary.addr(),
        replicas[0].addr(),
        replicas[1].addr(),
        REPLICA_ARGS.join(" "),
        fmt_d(t.elapsed())
    );
    let url = cluster_url(&primary, &replicas, CLUSTER_KNOBS);
    let mut env = Env::Cluster { primary, replicas };
    let (pool, cell) = open_pool(&url, sink, true)?;
    let mut bounds = Bounds::of(pool.config());
    bounds.failover_detection = Some(failover_detection_bound());
    println!("  pool      {}", staunch::Config::redact_url(&url));
    println!(
        "  workload  the same, writes through get() (the writer), reads through get_read() (the replicas)"
    );
    println!(
        "  survived  every get() within {}; B: no error at all, a first read within {} of the pause's end; \
         D (promotion {} after the freeze): writes moved to the promoted replica within {} of the freeze \
         ({} of the promotion + {} slack), a first write within {} of it, the thawed old primary \
         reported stale and no write acknowledged there after writes moved; \
         no acknowledged write lost (read back from the old primary and the promoted replica)",
        fmt_d(bounds.wait),
        fmt_d(bounds.recovery),
        fmt_d(PROMOTE_AFTER),
        fmt_d(failover_detection_bound()),
        fmt_d(FOLLOW_BOUND),
        fmt_d(FOLLOW_SLACK),
        fmt_d(bounds.recovery_for(Kind::PrimaryPromotion))
    );
    println!();
    let spec = PhaseSpec {
        first_index,
        baseline_label: "baseline (primary + 2 replicas, no fault)".into(),
        bounds,
        split_reads: true,
        track_ids: false,
        timeline: o.html.is_some(),
    };
    let p = run_phase(
        o,
        sink,
        &mut env,
        (pool, cell),
        &url,
        table,
        spec,
        (
            CLUSTER_BASELINE,
            "baseline: normal load on the cluster, no fault",
        ),
        Schedule::Fixed {
            first: first_fault,
            total: first_fault + 1,
        },
    );
    let verification = if signals::interrupted() {
        Verification::Skipped("interrupted".into())
    } else {
        sink.say(
            "reading every acknowledged write back from the old primary and the promoted replica",
        );
        let (v, per_server) = verify(&env, table, &p.acked);
        if let ([(_, old), (_, new)], Some(d)) = (
            per_server.as_slice(),
            p.windows.iter().find(|w| w.kind == Kind::PrimaryPromotion),
        ) {
            let only_old = p
                .acked
                .iter()
                .filter(|(id, _)| old.contains(id) && !new.contains(id))
                .count();
            d.note(if only_old == 0 {
                "every write acknowledged before the freeze had reached replica 1 before its promotion".to_string()
            } else {
                format!(
                    "{only_old} acknowledged writes are on the old primary only (found there, counted as \
                     kept): they had not reached replica 1 before its promotion"
                )
            });
            match writes_on_old_after_move(&env, table, &p.acked) {
                Ok(0) => d.note(
                    "no write was acknowledged on the old primary after writes moved (checked row by row: \
                     the server that executed each insert, and when)",
                ),
                Ok(n) => d.fail(format!(
                    "{n} writes were acknowledged on the old primary after writes had moved to replica 1"
                )),
                Err(e) => d.fail(format!("could not check where the writes went: {e}")),
            }
        }
        v
    };
    Ok(ClusterOut {
        windows: p.windows,
        timeline: p.timeline,
        verification,
        violations: p.violations,
        bounds,
    })
}

/// The fixed sequence: every fault possible here once, numbered from
/// `first` of `total`.
fn fixed(env: &mut Env, sh: &Arc<Shared>, url: &str, first: usize, total: usize) {
    for (i, kind) in env.faults().into_iter().enumerate() {
        if signals::interrupted() {
            return;
        }
        let hold = match kind {
            Kind::KillRestart => DOWN,
            Kind::KeepaliveRace => RACE,
            Kind::IdleReplicas => IDLE_PAUSE,
            _ => HOLD,
        };
        let no = first + i;
        let label = format!("{no} {}", env.label(kind, hold));
        sh.say(format!("fault {no} of {total}: {}", env.label(kind, hold)));
        run_fault(env, sh, url, kind, hold, &label);
        let gap = match kind {
            Kind::KeepaliveRace => Duration::from_secs(3),
            Kind::IdleReplicas | Kind::PrimaryPromotion => CLUSTER_GAP,
            _ => GAP,
        };
        settle(sh, kind, gap);
    }
}

/// The soak: the planned faults, one after another, until `duration` has
/// passed; then `soak::FINAL_SETTLE` of normal load.
fn soak(env: &mut Env, sh: &Arc<Shared>, url: &str, duration: Duration, plan: &[Planned]) {
    let start = Instant::now();
    for (i, p) in plan.iter().enumerate() {
        if start.elapsed() >= duration || signals::interrupted() {
            break;
        }
        let n = i + 1;
        let label = format!("#{n} {}", env.label(p.kind, p.hold));
        sh.say(format!("fault #{n}: {}", env.label(p.kind, p.hold)));
        run_fault(env, sh, url, p.kind, p.hold, &label);
        let left = duration.saturating_sub(start.elapsed());
        settle(sh, p.kind, p.gap.min(left));
    }
    if !signals::interrupted() {
        sh.say(format!(
            "last fault over: {} of normal load before the workload stops",
            fmt_hold(soak::FINAL_SETTLE)
        ));
        signals::sleep(soak::FINAL_SETTLE);
    }
}

fn run_fault(env: &mut Env, sh: &Arc<Shared>, url: &str, kind: Kind, hold: Duration, label: &str) {
    let w = sh.begin(kind, label);
    let r = catch_unwind(AssertUnwindSafe(|| env.inject(kind, hold, &w, sh, url)));
    let failed = match r {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(e),
        Err(p) => Some(panic_text(&*p)),
    };
    if let Some(e) = failed {
        sh.event(format!("could not inject the fault: {e}"));
        w.fail(format!("could not inject the fault: {e}"));
        // Whatever state the proxy or the servers were left in, undo it.
        env.release();
    }
    if signals::interrupted() {
        w.interrupted.store(true, SeqCst);
    } else if w.fault_end().is_none() {
        sh.end_fault(&w);
    }
}

/// Normal load after a fault: first until the workload succeeds again (or
/// RECOVERY_WAIT passes), then for the rest of `gap`.
fn settle(sh: &Shared, kind: Kind, gap: Duration) {
    let start = Instant::now();
    let w = sh.current();
    if kind.has_recovery() {
        sh.set_phase("recovering");
        while w.recovery().is_none() && start.elapsed() < RECOVERY_WAIT {
            if !signals::sleep(Duration::from_millis(10)) {
                w.interrupted.store(true, SeqCst);
                return;
            }
        }
    }
    sh.set_phase("normal load");
    signals::sleep(gap.saturating_sub(start.elapsed()));
}

/// `staunch cluster` (hidden): a primary and two replicas to try `staunch
/// monitor` on, driven from stdin. Ctrl-C, `quit` or the end of stdin stop
/// them.
pub fn cluster_shell() -> u8 {
    println!("starting a primary and two replicas ...");
    let (primary, replicas) = match start_cluster(None) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("staunch cluster: {e}");
            return if signals::interrupted() {
                EXIT_INTERRUPTED
            } else {
                EXIT_SETUP
            };
        }
    };
    let servers: Vec<&MariaDb> = std::iter::once(&primary).chain(&replicas).collect();
    for (i, s) in servers.iter().enumerate() {
        println!(
            "  host {}  {} pid {} ({})",
            i + 1,
            s.addr(),
            s.pid(),
            if i == 0 {
                "primary".to_string()
            } else {
                format!("replica: {}", REPLICA_ARGS.join(" "))
            }
        );
    }
    println!(
        "  monitor   staunch monitor '{}'",
        cluster_url(
            &primary,
            &replicas,
            &[("ping_interval", "250ms"), ("ping_timeout", "300ms")]
        )
    );
    println!("commands: freeze N, thaw N, promote N (STOP SLAVE; read_only=0), status, quit (N: host number, default 1 for freeze/thaw, 2 for promote)");
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let _ = thread::Builder::new()
        .name("cluster-stdin".into())
        .spawn(move || {
            for line in std::io::stdin().lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
    let code = loop {
        if signals::interrupted() {
            break EXIT_OK;
        }
        let line = match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(l) => l,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => continue,
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break EXIT_OK,
        };
        let mut words = line.split_whitespace();
        let cmd = words.next().unwrap_or("");
        let n: Option<usize> = words.next().and_then(|w| w.parse().ok());
        let pick = |default: usize| servers.get(n.unwrap_or(default).wrapping_sub(1)).copied();
        let r = catch_unwind(AssertUnwindSafe(|| match cmd {
            "" => {}
            "freeze" => match pick(1) {
                Some(s) => {
                    s.freeze();
                    println!("froze {} (pid {})", s.addr(), s.pid());
                }
                None => println!("no such host"),
            },
            "thaw" => match pick(1) {
                Some(s) => {
                    s.thaw();
                    println!("thawed {}", s.addr());
                }
                None => println!("no such host"),
            },
            "promote" => match pick(2) {
                Some(s) => {
                    s.sql("STOP SLAVE");
                    s.set_global("read_only", "0");
                    println!("promoted {}: STOP SLAVE; read_only=0", s.addr());
                }
                None => println!("no such host"),
            },
            "status" => {
                for s in &servers {
                    if s.is_frozen() {
                        println!("  {} frozen", s.addr());
                        continue;
                    }
                    let ro = s.query_i64("SELECT @@global.read_only");
                    let st = s.slave_status();
                    let get = |k: &str| st.get(k).cloned().unwrap_or_default();
                    println!(
                        "  {} read_only={} {}",
                        s.addr(),
                        ro.unwrap_or(-1),
                        if st.is_empty() {
                            "not a replica".to_string()
                        } else {
                            format!(
                                "IO {} SQL {} behind {}",
                                get("Slave_IO_Running"),
                                get("Slave_SQL_Running"),
                                get("Seconds_Behind_Master")
                            )
                        }
                    );
                }
            }
            "quit" | "exit" => signals::request_stop(),
            other => println!("unknown command {other:?}"),
        }));
        if let Err(p) = r {
            println!("failed: {}", panic_text(&*p));
        }
    };
    println!("stopping the servers");
    for s in &servers {
        if s.is_frozen() {
            s.thaw();
        }
    }
    code
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxy_url_keeps_user_db_and_knobs() {
        let u = via_proxy("mysql://u:p@db.example:3307/shop?max_size=3", 4000).unwrap();
        assert!(
            u.starts_with("mysql://u:p@127.0.0.1:4000/shop?max_size=3&min_idle=2"),
            "{u}"
        );
        assert!(!u.contains("max_size=8"), "{u}");
        let u = via_proxy("mysql://db.example", 4000).unwrap();
        assert!(u.starts_with("mysql://127.0.0.1:4000?max_size=8&"), "{u}");
    }
}
