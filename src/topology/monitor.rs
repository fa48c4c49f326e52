//! `staunch-monitor`: watches every host and moves writes to the host an
//! operator or orchestrator promoted. It follows promotions; it never makes
//! one. After MHA's `wait_until_unreachable` (incident D), with hard timeouts,
//! and with positive evidence first (issue #12).
//!
//! # What it looks at
//!
//! Each host is probed on its own: one multi-statement on a connection the
//! monitor keeps (`SELECT @@read_only, @@server_id, @@gtid_binlog_pos,
//! @@gtid_current_pos, @@wsrep_on, ...; SHOW SLAVE STATUS`, one round trip;
//! `probe.rs` has each flavour's), every `ping_interval` in the steady
//! state. The one statement that needs a privilege (`SHOW SLAVE STATUS`:
//! `SLAVE MONITOR`) comes last, so that its refusal hides nothing; then
//! `Slave_running`/`Slaves_running`, which any user may read, stand in for
//! it (`rules::Threads`), and the refusal is told once
//! (`Event::MonitorPrivilegeMissing`) after the first discovery.
//!
//! For the writer that probe is the health check of `ping_type`: `select`
//! is the probe as it is; `insert` also upserts a timestamp into
//! `heartbeat_table` when the writer is writable; `connect` opens a new
//! connection for every probe of the writer (MHA's `ping_connect`). Every probe runs on a short-lived thread and is cut off at
//! `ping_timeout` (its socket is shut down from the monitor thread), and a host
//! is never probed twice at once: a frozen host or a black hole costs one
//! stuck thread for at most `ping_timeout` and never delays the other hosts.
//!
//! A host "no longer replicates" when `SHOW SLAVE STATUS` has no row, or both
//! its threads are stopped (`Slave_IO_Running` neither `Yes` nor
//! `Connecting`, `Slave_SQL_Running` not `Yes`); without the privilege, when
//! no SQL thread runs (`Slaves_running=0`) and `Slave_running` is OFF. Not
//! allowed to know (MySQL without `REPLICATION CLIENT`) is never "no": rules
//! 1 and 2 cannot run then, and rule 5 runs without the replicas whenever
//! their status rows cannot be read.
//!
//! # The rules, in order
//!
//! 1. **Planned switchover.** The writer answers with `read_only = 1` and
//!    exactly one other host (not a superseded primary, see 4) answers with
//!    `read_only = 0` and no longer replicates: writes go there at once.
//!    Statements already running on the old writer finish there (a write
//!    gets the server's read-only error). Until such a host appears the
//!    writer stays, checked at the fast cadence.
//! 2. **Positive evidence first.** The writer is failing (its last probe
//!    failed other than with an alive error, or its probe has gone unanswered
//!    for [`LATE`]) and exactly one other host answers with `read_only = 0`
//!    and no longer replicates: someone promoted it. Writes go there at once,
//!    without waiting for `failure_threshold` or the secondary check, and the
//!    sockets of connections still borrowed from the old writer are shut down
//!    (a statement stuck on a frozen server fails now rather than committing
//!    there when it thaws).
//! 3. **Without such evidence, MHA's rules.** After `failure_threshold` failed
//!    probes in a row (at most one counted per `ping_interval`; alive errors,
//!    MHA's `alive_error_codes`, are reported and not counted) the secondary
//!    check runs: the user's check if any, and the replicas (5). If someone
//!    still sees the primary it is a partition: reported, no failover, and
//!    the count starts again. Otherwise the primary is declared dead: writes
//!    fail fast with `NoWriter`, borrowed connections to it are cut off, and
//!    the first host found alone with `read_only = 0` becomes the writer.
//!    Two writable hosts with no promotion seen is split brain: writes
//!    refused until one remains.
//! 4. **Never back to a superseded primary.** Once writes have moved away
//!    from a writer the monitor had seen writable (by 1, 2 or 3), that host is
//!    superseded: never a candidate for writes again, and when it answers with
//!    `read_only = 0` it is a stale primary: `StalePrimaryWritable` is
//!    reported (an operator must fence it) and it gets no reads
//!    ([`HostHealth::Stale`]). It becomes an ordinary host again once it
//!    replicates (both threads running), e.g. after `CHANGE MASTER TO` the
//!    writer. On a move, `UnreplicatedWrites` names the GTIDs the old writer
//!    had committed that the new one lacks: from the old one's last answer
//!    (a lower bound) if it is unreachable, and again, final, when it answers.
//! 5. **A secondary check that does not trust `Slave_IO_Running` alone.** A
//!    frozen primary keeps its TCP connections open, so a replica's I/O thread
//!    says `Yes` until `slave_net_timeout` (60 s by default); and
//!    `Seconds_Behind_Master` stays 0 on an idle primary and on a frozen one
//!    alike. A replica vouches for the primary only if its I/O thread runs,
//!    its `Master_Server_Id` is the primary's, and what it received
//!    (`Master_Log_File`/`Read_Master_Log_Pos`, `Gtid_IO_Pos`) advanced since
//!    the primary's first counted failure (then since the previous secondary
//!    check): proof the primary still sends. An idle primary that the pool
//!    alone cannot reach gives no such proof and is declared dead after
//!    `failure_threshold` failures; no host was promoted, so writes go back
//!    to it as soon as it answers again (it is not superseded).
//! 6. **Fast checks while in doubt.** From the first failed (or late) probe
//!    of the writer, while it answers read-only, or while there is no writer,
//!    every host is checked every [`FAST`] (or `ping_interval` if shorter),
//!    each probe still bounded by `ping_timeout`, until the writer answers
//!    writable again or writes have moved.
//!
//! Rules 1 and 2, and the search for a writer when there is none, act only on
//! answers to probes started after the trouble was first seen (a round of
//! probes starts at once), so a host made writable just before the writer
//! failed is not missed. A writer change to another host waits for
//! `min_failover_interval` after the previous one (anti-flapping); the first
//! discovery is no change.
//!
//! An error on a kept connection (killed, closed by the server's
//! `wait_timeout`) is no verdict: the same probe retries on a new connection
//! within its deadline.
//!
//! For reads, a host other than the writer qualifies when its last probe
//! found it replicating from the current writer (`Master_Server_Id`) within
//! `max_replication_lag` (`Seconds_Behind_Master`; NULL: broken).
//!
//! # Galera
//!
//! When every host answers `wsrep_on = 1` at the first look (or with
//! `topology=galera`), the same probe also reads each node's `wsrep_%`
//! status (`SHOW GLOBAL STATUS`, before `SHOW SLAVE STATUS` in the same
//! round trip; no privilege needed), and the Galera rules of
//! `rules::galera_plan` apply instead of 1-6: one writer by the lowest
//! `wsrep_local_index`, kept while Synced (no fail-back); reads over the
//! other Synced nodes within `max_transactions_behind`; a node that goes
//! out of the Primary component (or unreachable) has its waiters failed and
//! its borrowed connections cut at once; with no Synced node writes fail
//! fast with `NoWriter`. A `topology=` that the first look's `wsrep_on`
//! answers contradict is told by name (`Event::TopologyContradicted`); the
//! forced rules still apply.
//!
//! The decisions themselves (alive errors, failure counting, the secondary
//! check, DeadMaster, read health, the first discovery's sequencing and the
//! rule set it picks, the first look, the rediscovery with no writer, the
//! writer's look and rule 6's doubt, the order of rules 1-3 once the writer
//! is known, the Galera plan, node health and its events, the GTIDs a move
//! may have lost) are pure functions in `rules.rs`, tested by tables; what a
//! probe asks and how its answer is read is in `probe.rs`; this file
//! schedules the probes and applies the rules.
//!
//! Events are emitted from the monitor thread with no lock held.

use std::sync::atomic::Ordering::{Relaxed, SeqCst};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};

use super::probe::{bounded, probe, MonConn, Refusal, Sample};
use super::rules::{
    self, Candidate, GaleraObs, HealthNews, Mode, NodeClass, Rediscovery, Repl, ReplStep,
    WriterDoubt, WriterSeen,
};
use super::{HostHealth, PingType, Topo, MODE_GALERA, MODE_REPLICATION};
use crate::client::MysqlConnector;
use crate::duration::fmt_duration;
use crate::error::{Error, ErrorKind, Result};
use crate::events::Event;
use crate::pool::ConnectAttempt;
use crate::sync::spawn_resilient;

/// The cadence of checks while in doubt (rule 6), capped by `ping_interval`.
pub(crate) const FAST: Duration = Duration::from_millis(200);

/// A probe of the writer unanswered this long counts as failing for rule 2
/// (only when a promotion is seen elsewhere), and starts the fast checks. A
/// healthy server answers the probe in well under a millisecond on a LAN.
pub(crate) const LATE: Duration = Duration::from_millis(250);

pub(super) fn spawn(t: &Arc<Topo>) -> std::io::Result<std::thread::JoinHandle<()>> {
    let mut m = Monitor::new(t.clone());
    spawn_resilient("staunch-monitor".into(), move || m.run(), || {})
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    /// Not probed yet.
    Unknown,
    /// The last probe answered: `sample` is its answer.
    Ok,
    /// The last probe failed with an error that proves the server alive.
    Alive,
    /// The last probe failed or timed out.
    Failed,
}

struct Inflight {
    gen: u64,
    attempt: ConnectAttempt,
    started: Instant,
}

/// What the monitor knows about one host.
struct HostMon {
    kept: Option<MonConn>,
    inflight: Option<Inflight>,
    status: Status,
    /// The last successful probe's answer (kept when later probes fail).
    sample: Option<Sample>,
    /// The last probe's error, if it failed.
    error: Option<Error>,
    /// When the last completed probe (answered or failed) started.
    done_started: Option<Instant>,
    /// A writer the pool moved away from (rule 4).
    superseded: bool,
    stale_reported: bool,
    split_reported: bool,
    /// Rule 5: what this replica had received at the start of the current
    /// evidence window.
    evidence_base: Option<String>,
    /// Galera: the node was out (not Primary, not ready, unreachable) at the
    /// last decision; its borrowed connections were cut then.
    galera_out: bool,
    /// When a borrower raised the host's alarm (a statement answered
    /// "cannot serve now"): until a probe started since answers, the host
    /// gets no reads, and in a Galera cluster no writes.
    suspect_since: Option<Instant>,
}

impl HostMon {
    fn new() -> Self {
        HostMon {
            kept: None,
            inflight: None,
            status: Status::Unknown,
            sample: None,
            error: None,
            done_started: None,
            superseded: false,
            stale_reported: false,
            split_reported: false,
            evidence_base: None,
            galera_out: false,
            suspect_since: None,
        }
    }

    /// Answered its last probe with `read_only = 0`.
    fn writable(&self) -> bool {
        self.status == Status::Ok && self.sample.as_ref().is_some_and(|s| !s.read_only)
    }

    fn answered(&self) -> Option<&Sample> {
        match self.status {
            Status::Ok => self.sample.as_ref(),
            _ => None,
        }
    }
}

/// A probe's result, sent by its thread.
struct Done {
    host: usize,
    gen: u64,
    started: Instant,
    result: Result<(Sample, MonConn)>,
}

/// How writes moved (for what happens to the old writer).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Move {
    /// Rule 1: the old writer turned read-only; its statements run on.
    Switchover,
    /// Rule 2: the old writer is failing; its borrowed connections are cut.
    Promotion,
    /// After the writer was declared dead (or at the first discovery).
    Discovery,
}

/// A followed promotion whose old writer was unreachable: its final GTID
/// position is compared when it answers again.
struct PendingLoss {
    former: usize,
    writer: usize,
    /// The new writer's `gtid_current_pos` when writes moved there.
    writer_pos: String,
}

struct Monitor {
    t: Arc<Topo>,
    hosts: Vec<HostMon>,
    tx: Sender<Done>,
    rx: Receiver<Done>,
    gen: u64,
    next_round: Instant,
    /// Whether the last loop was in doubt (rule 6).
    doubt: bool,
    /// When the current trouble (writer failing, late or read-only, or no
    /// writer) was first seen: rules 1 and 2 and discovery use answers to
    /// probes started since.
    doubt_since: Option<Instant>,
    /// Counted failed probes of the writer in a row, and when the last one
    /// was counted.
    failures: u32,
    last_counted: Option<Instant>,
    /// The threshold was reached: the secondary check is due.
    secondary_due: bool,
    /// Rule 5: samples of probes started after this instant may be an
    /// evidence base.
    evidence_since: Option<Instant>,
    discovered: bool,
    /// Whether the monitor has seen the current writer (or, with no writer,
    /// the last one) answer with `read_only = 0`.
    writer_verified: bool,
    last_writer: Option<usize>,
    last_change: Option<Instant>,
    deferred_reported: Option<(usize, Instant)>,
    split_refused: Option<Vec<usize>>,
    pending_loss: Option<PendingLoss>,
    /// Galera: no decision made yet (the first picks by the stable rule,
    /// whatever host the pool started with).
    galera_first: bool,
    /// Galera: writes are refused now (reported once).
    galera_refused: bool,
    /// The probe's statements a host refused that were already told
    /// (`MonitorPrivilegeMissing`): once each, never per probe.
    told: Vec<&'static str>,
}

impl Monitor {
    fn new(t: Arc<Topo>) -> Self {
        let n = t.hosts.len();
        let (tx, rx) = crossbeam_channel::unbounded();
        Monitor {
            t,
            hosts: (0..n).map(|_| HostMon::new()).collect(),
            tx,
            rx,
            gen: 0,
            next_round: Instant::now(),
            doubt: false,
            doubt_since: None,
            failures: 0,
            last_counted: None,
            secondary_due: false,
            evidence_since: None,
            discovered: false,
            writer_verified: false,
            last_writer: Some(0),
            last_change: None,
            deferred_reported: None,
            split_refused: None,
            pending_loss: None,
            galera_first: true,
            galera_refused: false,
            told: Vec::new(),
        }
    }

    fn fast(&self) -> Duration {
        self.t.cfg.ping_interval.min(FAST)
    }

    fn late(&self) -> Duration {
        self.t.cfg.ping_timeout.min(LATE)
    }

    fn ep(&self, i: usize) -> String {
        self.t.hosts[i].endpoint.clone()
    }

    fn run(&mut self) {
        loop {
            if self.t.closed.load(Relaxed) {
                return self.cancel_all();
            }
            while let Ok(d) = self.rx.try_recv() {
                self.on_done(d);
            }
            let now = Instant::now();
            self.cut_overdue(now);
            self.note_late(now);
            let doubt = self.in_doubt(now);
            if doubt && !self.doubt {
                // The first failed or late probe: look at every host now.
                self.next_round = now;
            }
            self.doubt = doubt;
            if now >= self.next_round {
                for i in 0..self.hosts.len() {
                    self.start_probe(i);
                }
                let every = if doubt {
                    self.fast()
                } else {
                    self.t.cfg.ping_interval
                };
                self.next_round = now + every;
            }
            let wait = self
                .next_wake(now)
                .saturating_duration_since(Instant::now())
                .max(Duration::from_millis(1));
            crossbeam_channel::select! {
                recv(self.rx) -> d => {
                    if let Ok(d) = d {
                        self.on_done(d);
                    }
                }
                recv(self.t.wake_rx) -> i => {
                    if let Ok(i) = i {
                        self.on_alarm(i);
                    }
                }
                recv(self.t.stop_rx) -> _ => return self.cancel_all(),
                default(wait) => {}
            }
        }
    }

    /// A borrower's statement on host `i` was answered "cannot serve now"
    /// (the connector's alarm set `suspect`): probe it now (if a probe is in
    /// flight, the next one starts when it ends) and, in a Galera cluster,
    /// pass it over for writes until a probe started from now answers.
    fn on_alarm(&mut self, i: usize) {
        let now = Instant::now();
        self.hosts[i].suspect_since = Some(now);
        log::info!(target: "staunch", "{} answered a statement with \"cannot serve now\": probing it at once", self.ep(i));
        self.start_probe(i);
        if self.discovered && self.galera() {
            self.decide(now);
        }
    }

    /// On close: cut off the probes in flight so their threads end now.
    fn cancel_all(&mut self) {
        for h in &mut self.hosts {
            if let Some(f) = h.inflight.take() {
                f.attempt.cancel();
            }
        }
    }

    /// The next instant something is due: a round, a probe's deadline, or
    /// a probe becoming late (rules 2 and 6).
    fn next_wake(&self, now: Instant) -> Instant {
        let mut wake = self.next_round;
        for f in self.hosts.iter().filter_map(|h| h.inflight.as_ref()) {
            wake = wake.min(f.attempt.deadline());
            let late_at = f.started + self.late();
            if late_at > now {
                wake = wake.min(late_at);
            }
        }
        wake
    }

    /// Whether the fast cadence applies (rule 6).
    fn in_doubt(&self, now: Instant) -> bool {
        rules::in_doubt(match self.t.writer() {
            None => WriterDoubt::NoWriter,
            Some(w) if self.galera() => WriterDoubt::Galera {
                class: rules::galera_class(
                    self.hosts[w].answered().and_then(|s| s.galera.as_ref()),
                ),
                late: self.writer_late(w, now),
                suspect: self.hosts[w].suspect_since.is_some(),
            },
            Some(w) => WriterDoubt::Replication(self.writer_seen(w, now)),
        })
    }

    /// The replication writer's last look, for the rules.
    fn writer_seen(&self, w: usize, now: Instant) -> WriterSeen {
        let h = &self.hosts[w];
        rules::writer_seen(
            h.answered().map(|s| s.read_only),
            h.status == Status::Failed,
            self.writer_late(w, now),
        )
    }

    fn writer_late(&self, w: usize, now: Instant) -> bool {
        self.hosts[w]
            .inflight
            .as_ref()
            .is_some_and(|f| now.duration_since(f.started) >= self.late())
    }

    /// In doubt, time alone changes things (a late probe of the writer, or
    /// of a host whose answer rule 2 waits for): decide again.
    fn note_late(&mut self, now: Instant) {
        if self.discovered && self.in_doubt(now) {
            self.decide(now);
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

    /// Starts a bounded probe of host `i` unless one is in flight.
    fn start_probe(&mut self, i: usize) {
        if self.hosts[i].inflight.is_some() {
            return;
        }
        self.gen += 1;
        let gen = self.gen;
        let started = Instant::now();
        let attempt = ConnectAttempt::new(self.t.cfg.ping_timeout);
        let a2 = attempt.clone();
        let connector = self.connector(i);
        let heartbeat = (self.t.cfg.ping_type == PingType::Insert && self.t.writer() == Some(i))
            .then(|| self.t.cfg.heartbeat_table.clone());
        let kept = self.hosts[i].kept.take();
        // Galera's status only while it may matter: not once the hosts are
        // known to be a replication topology (two statements, as before).
        let wsrep = self.t.mode.load(Relaxed) != MODE_REPLICATION;
        let tx = self.tx.clone();
        let spawned = std::thread::Builder::new()
            .name("staunch-probe".into())
            .spawn(move || {
                let result = probe(&connector, kept, heartbeat.as_deref(), wsrep, &a2);
                // Cut off at the deadline: the monitor has moved on.
                if a2.finish() {
                    let _ = tx.send(Done {
                        host: i,
                        gen,
                        started,
                        result,
                    });
                }
            });
        match spawned {
            Ok(_) => {
                self.hosts[i].inflight = Some(Inflight {
                    gen,
                    attempt,
                    started,
                })
            }
            // Says nothing about the host: no probe this round.
            Err(e) => {
                log::warn!(target: "staunch", "cannot start a probe thread for {}: {e}", self.ep(i))
            }
        }
    }

    /// Cuts off probes past their deadline and records them as failed.
    fn cut_overdue(&mut self, now: Instant) {
        for i in 0..self.hosts.len() {
            let Some(f) = &self.hosts[i].inflight else {
                continue;
            };
            if now < f.attempt.deadline() {
                continue;
            }
            // None: the probe finished just now; its result is on its way.
            if f.attempt.cancel().is_none() {
                continue;
            }
            let found = f.attempt.cancelled().unwrap_or_default();
            let (gen, started) = (f.gen, f.started);
            let err = Error::new(
                ErrorKind::Io,
                format!(
                    "probe of {} got no answer within {}: {found}",
                    self.t.hosts[i].endpoint,
                    fmt_duration(self.t.cfg.ping_timeout)
                ),
            );
            self.on_done(Done {
                host: i,
                gen,
                started,
                result: Err(err),
            });
        }
    }

    fn on_done(&mut self, d: Done) {
        let i = d.host;
        if !matches!(&self.hosts[i].inflight, Some(f) if f.gen == d.gen) {
            // A probe already given up on.
            return;
        }
        let now = Instant::now();
        let is_writer = self.t.writer() == Some(i);
        let keep = !(is_writer && self.t.cfg.ping_type == PingType::Connect);
        let evidence_since = self.evidence_since;
        let alive = match &d.result {
            Ok(_) => false,
            Err(e) => {
                rules::outcome(false, e.server_code(), &self.t.cfg.alive_error_codes)
                    == rules::Outcome::Alive
            }
        };
        let h = &mut self.hosts[i];
        h.inflight = None;
        h.done_started = Some(d.started);
        // The alarm ends with the answer to a probe started after it; an
        // older probe's answer says nothing about it: probe again.
        let (cleared, again) = match h.suspect_since {
            Some(since) if d.started >= since => {
                h.suspect_since = None;
                (true, false)
            }
            Some(_) => (false, true),
            None => (false, false),
        };
        let error = match d.result {
            Ok((sample, conn)) => {
                if keep {
                    h.kept = Some(conn);
                }
                if let (Some(since), None, Repl::Some(r)) =
                    (evidence_since, &h.evidence_base, &sample.replica)
                {
                    if d.started >= since {
                        h.evidence_base = Some(r.received.clone());
                    }
                }
                h.status = Status::Ok;
                h.sample = Some(sample);
                h.error = None;
                None
            }
            Err(e) => {
                h.kept = None;
                h.status = if alive { Status::Alive } else { Status::Failed };
                h.error = Some(e.clone());
                Some(e)
            }
        };
        if self.galera() {
            self.decide(now);
        } else {
            if is_writer {
                self.writer_outcome(i, error, now);
            }
            self.decide(now);
            if !self.galera() {
                self.after_answer(i);
                self.refresh_health();
            }
        }
        // Once the rule set is known (what a refusal costs depends on it).
        if self.discovered {
            self.tell_refusals();
        }
        // After the decision, so that routing goes from "suspect" straight
        // to what this answer says.
        if cleared {
            self.t.hosts[i].suspect.store(false, SeqCst);
        }
        if again {
            self.start_probe(i);
        }
    }

    fn galera(&self) -> bool {
        self.t.mode.load(Relaxed) == MODE_GALERA
    }

    /// A statement of the probe refused for lack of a privilege: one event
    /// (which the default listener logs) naming the privilege, the
    /// statement and the two ways out, the first time only.
    fn tell_refusals(&mut self) {
        let galera = self.galera();
        let mut news: Vec<(usize, Refusal)> = Vec::new();
        for (i, h) in self.hosts.iter().enumerate() {
            for r in h.answered().map_or(&[][..], |s| &s.refused[..]) {
                if !self.told.contains(&r.statement) {
                    self.told.push(r.statement);
                    news.push((i, r.clone()));
                }
            }
        }
        for (i, r) in news {
            self.t.emit(r.event(&self.ep(i), galera));
        }
    }

    /// Counts the writer's failures (rule 3) and reports its probes.
    fn writer_outcome(&mut self, w: usize, error: Option<Error>, now: Instant) {
        match (self.hosts[w].status, error) {
            (Status::Ok, _) => {
                self.failures = 0;
                self.last_counted = None;
                self.secondary_due = false;
                self.end_evidence_window();
                if self.hosts[w].writable() {
                    self.writer_verified = true;
                }
                self.t.hosts[w].health.store(HostHealth::Healthy);
            }
            (Status::Alive, Some(error)) => {
                self.t.emit(Event::PrimaryAliveError {
                    endpoint: self.ep(w),
                    error,
                });
            }
            (_, Some(error)) => {
                self.t.hosts[w].health.store(HostHealth::Down);
                // At most one failure per ping_interval counts, however fast
                // the writer is probed while in doubt.
                let counts = rules::failure_counts(
                    self.last_counted,
                    now,
                    self.t.cfg.ping_interval,
                    self.fast() / 2,
                );
                if !counts {
                    return;
                }
                self.failures += 1;
                self.last_counted = Some(now);
                if self.evidence_since.is_none() {
                    self.start_evidence_window(now);
                }
                self.t.emit(Event::PrimarySuspected {
                    endpoint: self.ep(w),
                    failures: self.failures,
                    error,
                });
                if self.failures >= self.t.cfg.failure_threshold {
                    self.secondary_due = true;
                }
            }
            _ => {}
        }
    }

    fn start_evidence_window(&mut self, now: Instant) {
        self.evidence_since = Some(now);
        for h in &mut self.hosts {
            h.evidence_base = None;
        }
    }

    fn end_evidence_window(&mut self) {
        self.evidence_since = None;
        for h in &mut self.hosts {
            h.evidence_base = None;
        }
    }

    /// Applies the rules to what is known now.
    fn decide(&mut self, now: Instant) {
        if !self.discovered {
            let probed: Vec<bool> = self
                .hosts
                .iter()
                .map(|h| h.status != Status::Unknown)
                .collect();
            let on: Vec<Option<bool>> = self
                .hosts
                .iter()
                .map(|h| h.answered().map(|s| s.wsrep_on))
                .collect();
            let known = match self.t.mode.load(Relaxed) {
                MODE_GALERA => Some(Mode::Galera),
                MODE_REPLICATION => Some(Mode::Replication),
                _ => None,
            };
            let rules::FirstStep::Discover { mode, detected } =
                rules::first_step(&probed, known, &on)
            else {
                return;
            };
            if let Some(found) = known.and_then(|forced| rules::contradicts(forced, &on)) {
                let name = |m: Mode| match m {
                    Mode::Galera => "galera",
                    Mode::Replication => "replication",
                };
                let hosts = on
                    .iter()
                    .enumerate()
                    .map(|(i, w)| {
                        let w = match w {
                            Some(true) => "on",
                            Some(false) => "off",
                            None => "no answer",
                        };
                        format!("{} wsrep_on={w}", self.ep(i))
                    })
                    .collect();
                self.t.emit(Event::TopologyContradicted {
                    forced: name(mode).into(),
                    found: name(found).into(),
                    hosts,
                });
            }
            if detected {
                log::info!(target: "staunch", "the hosts are {}", match mode { Mode::Galera => "a Galera cluster", Mode::Replication => "a replication topology" });
                self.t.mode.store(
                    match mode {
                        Mode::Galera => MODE_GALERA,
                        Mode::Replication => MODE_REPLICATION,
                    },
                    Relaxed,
                );
            }
            self.discovered = true;
            return match mode {
                Mode::Galera => self.decide_galera(now),
                Mode::Replication => self.first_discovery(),
            };
        }
        if self.galera() {
            return self.decide_galera(now);
        }
        let Some(w) = self.t.writer() else {
            self.discover();
            return;
        };
        let others: Vec<Candidate> = (0..self.hosts.len())
            .filter(|&i| i != w && self.hosts[i].writable() && !self.hosts[i].superseded)
            .map(|i| Candidate {
                idx: i,
                detached: self.hosts[i].sample.as_ref().is_some_and(Sample::detached),
            })
            .collect();
        let seen = self.writer_seen(w, now);
        // Rules 1 and 2 act on what every other host says since the writer's
        // trouble was seen (a round starts at once), not on older answers.
        let fresh = if rules::in_doubt(WriterDoubt::Replication(seen)) {
            let since = *self.doubt_since.get_or_insert_with(|| {
                self.next_round = now;
                now
            });
            self.all_fresh(w, since, now)
        } else {
            self.doubt_since = None;
            true
        };
        match rules::replication_step(seen, &others, fresh, self.secondary_due) {
            ReplStep::Wait => {}
            ReplStep::Switchover(c) => {
                self.follow(Some(w), c, Move::Switchover);
            }
            ReplStep::RefuseSplit(many) => self.refuse_split(&many),
            ReplStep::Promotion {
                to,
                else_secondary_check,
            } => {
                if !self.follow(Some(w), to, Move::Promotion) && else_secondary_check {
                    self.secondary_check_and_verdict(w, now);
                }
            }
            ReplStep::SecondaryCheck => self.secondary_check_and_verdict(w, now),
            ReplStep::ReportSplit(cs) => {
                // Reported once per host; writes stay on the writer.
                for c in cs {
                    if !self.hosts[c].split_reported {
                        self.hosts[c].split_reported = true;
                        self.t.emit(Event::SplitBrain {
                            writable: vec![self.ep(w), self.ep(c)],
                            writes_refused: false,
                        });
                    }
                }
            }
        }
    }

    /// Rule 3: the secondary check, then DeadMaster's verdict: the writer
    /// declared dead, or a partition reported (and fresh evidence needed
    /// next time).
    fn secondary_check_and_verdict(&mut self, w: usize, now: Instant) {
        self.secondary_due = false;
        self.failures = 0;
        let seen_by = self.secondary_check(w);
        let threshold = self.t.cfg.failure_threshold;
        if rules::dead_primary(threshold, threshold, seen_by.len()) == Some(true) {
            self.declare_dead(w);
        } else {
            self.t.emit(Event::PartitionSuspected {
                endpoint: self.ep(w),
                seen_by,
            });
            self.start_evidence_window(now);
        }
    }

    /// Whether every host but `w` has answered (or failed) a probe started
    /// at or after `since`, or has a probe in flight for LATE already.
    fn all_fresh(&self, w: usize, since: Instant, now: Instant) -> bool {
        self.hosts.iter().enumerate().all(|(i, h)| {
            i == w
                || h.done_started.is_some_and(|t| t >= since)
                || h.inflight
                    .as_ref()
                    .is_some_and(|f| now.duration_since(f.started) >= self.late())
        })
    }

    /// The Galera rules (`rules::galera_plan`) applied: the writer moved if
    /// it failed or left the Primary component, reads routed to the Synced
    /// nodes, and the borrowed connections of a node that just went out cut
    /// off (their statements would get 1047 one by one, or hang on a dead
    /// node). A writer whose probe is late ([`LATE`]) is passed over for
    /// writes: moving writes within a synchronous cluster loses nothing.
    fn decide_galera(&mut self, now: Instant) {
        let current = if self.galera_first {
            None
        } else {
            self.t.writer()
        };
        let nodes: Vec<Option<GaleraObs>> = (0..self.hosts.len())
            .map(|i| self.hosts[i].answered().and_then(|s| s.galera.clone()))
            .collect();
        // A writer whose probe is late is passed over for writes, but only
        // a node found out has its borrowed connections cut.
        let mut for_plan = nodes.clone();
        if let Some(w) = self.t.writer().filter(|&w| self.writer_late(w, now)) {
            for_plan[w] = None;
        }
        // So is a node a borrower found not ready, until its probe answers.
        for (i, h) in self.hosts.iter().enumerate() {
            if h.suspect_since.is_some() {
                for_plan[i] = None;
            }
        }
        let plan = rules::galera_plan(current, &for_plan, self.t.cfg.max_transactions_behind);
        for (i, obs) in nodes.iter().enumerate() {
            let class = rules::galera_class(obs.as_ref());
            let probed = self.hosts[i].status != Status::Unknown;
            let h = &self.t.hosts[i];
            if rules::galera_went_out(class, probed, self.hosts[i].galera_out) {
                h.pool.fail_waiters(&Error::new(
                    ErrorKind::NoWriter,
                    format!(
                        "Galera node {} left the Synced nodes ({}); retry",
                        h.endpoint,
                        describe(obs.as_ref(), self.hosts[i].error.as_ref())
                    ),
                ));
                h.pool.soft_evict();
                let cut = h.pool.abort_borrowed();
                log::warn!(target: "staunch", "Galera node {} is out ({}): no statements; cut off {cut} borrowed connections", h.endpoint, describe(obs.as_ref(), self.hosts[i].error.as_ref()));
            }
            self.hosts[i].galera_out = probed && class == NodeClass::Out;
            let health = rules::galera_health(
                plan.writer == Some(i) || plan.readers.contains(&i),
                matches!(self.hosts[i].status, Status::Failed | Status::Alive),
                probed,
            );
            let before = h.health.swap(health);
            match rules::galera_health_news(before, health, plan.writer == Some(i), probed) {
                Some(HealthNews::Recovered) => self.t.emit(Event::ReplicaRecovered {
                    endpoint: h.endpoint.clone(),
                }),
                Some(HealthNews::Lagging) => self.t.emit(Event::ReplicaLagging {
                    endpoint: h.endpoint.clone(),
                    lag: None,
                }),
                None => {}
            }
        }
        let before = self.t.writer();
        match plan.writer {
            Some(w) if before != Some(w) || self.galera_refused || self.galera_first => {
                self.t.set_writer(w);
                self.galera_refused = false;
                if let Some(f) = before.filter(|&f| f != w) {
                    let old = &self.t.hosts[f].pool;
                    // A node still serving (desynced, donor, passed over)
                    // runs what it was given; a node out fails it now.
                    if self.hosts[f].galera_out {
                        old.fail_waiters(&Error::new(
                            ErrorKind::NoWriter,
                            format!(
                                "the writer moved from {} to {} (it left the Synced nodes); retry",
                                self.ep(f),
                                self.ep(w)
                            ),
                        ));
                    }
                    old.soft_evict();
                }
                log::info!(target: "staunch", "Galera: writes go to {}", self.ep(w));
                let from = if self.galera_first { None } else { before };
                self.t.emit(Event::WriterChanged {
                    from: from.map(|f| self.ep(f)),
                    to: self.ep(w),
                });
            }
            Some(_) => {}
            None => {
                let states: Vec<String> = (0..self.hosts.len())
                    .map(|i| {
                        format!(
                            "{}: {}",
                            self.ep(i),
                            describe(nodes[i].as_ref(), self.hosts[i].error.as_ref())
                        )
                    })
                    .collect();
                self.t.refuse_writes(Error::new(
                    ErrorKind::NoWriter,
                    format!(
                        "no writer: no Galera node is Synced in the Primary component ({})",
                        states.join("; ")
                    ),
                ));
                if !self.galera_refused {
                    self.galera_refused = true;
                    log::warn!(target: "staunch", "Galera: no node may take writes ({})", states.join("; "));
                }
            }
        }
        self.galera_first = false;
    }

    /// The first look, once every host answered or failed once: the first
    /// host stays the writer unless it is read-only (or unreachable) and
    /// exactly one other host is writable.
    fn first_discovery(&mut self) {
        let writable: Vec<usize> = (0..self.hosts.len())
            .filter(|&i| self.hosts[i].writable())
            .collect();
        let h0 = &self.hosts[0];
        let h0_failed = h0.status == Status::Failed;
        let h0_read_only = h0.answered().is_some_and(|s| s.read_only);
        let look = rules::first_look(&writable, h0_failed, h0_read_only, |c| {
            self.hosts[c].sample.as_ref().is_some_and(Sample::detached)
        });
        match look {
            rules::FirstLook::Keep { verified } => self.writer_verified |= verified,
            rules::FirstLook::Follow(c) => {
                self.last_writer = None;
                self.follow(None, c, Move::Discovery);
            }
            rules::FirstLook::SplitKeep => {
                self.writer_verified = true;
                for &c in writable.iter().filter(|&&c| c != 0) {
                    self.hosts[c].split_reported = true;
                }
                self.t.emit(Event::SplitBrain {
                    writable: writable.iter().map(|&i| self.ep(i)).collect(),
                    writes_refused: false,
                });
            }
            rules::FirstLook::SplitRefuse => self.refuse_split(&writable),
        }
    }

    /// With no writer: the one writable host that is not superseded.
    fn discover(&mut self) {
        let now = Instant::now();
        let since = *self.doubt_since.get_or_insert(now);
        if !self.all_fresh(usize::MAX, since, now) {
            return;
        }
        let writable: Vec<usize> = (0..self.hosts.len())
            .filter(|&i| self.hosts[i].writable() && !self.hosts[i].superseded)
            .collect();
        match rules::rediscover(&writable) {
            Rediscovery::Nothing => {}
            Rediscovery::Follow(c) => {
                self.follow(self.last_writer, c, Move::Discovery);
            }
            Rediscovery::Split(many) => self.refuse_split(&many),
        }
    }

    /// Several writable hosts and no way to tell which: writes refused.
    fn refuse_split(&mut self, many: &[usize]) {
        if let Some(w) = self.t.writer() {
            self.last_writer = Some(w);
        }
        let writable: Vec<String> = many.iter().map(|&i| self.ep(i)).collect();
        self.t.refuse_writes(Error::new(
            ErrorKind::NoWriter,
            format!("no writer: split brain, {writable:?} all report read_only=0; writes refused"),
        ));
        if self.split_refused.as_deref() != Some(many) {
            self.split_refused = Some(many.to_vec());
            self.t.emit(Event::SplitBrain {
                writable,
                writes_refused: true,
            });
        }
    }

    /// Moves writes from `from` to `to`. Returns false if held back by
    /// `min_failover_interval`.
    fn follow(&mut self, from: Option<usize>, to: usize, how: Move) -> bool {
        let change = from.is_some_and(|f| f != to);
        if change {
            if let Some(last) = self.last_change {
                let min = self.t.cfg.min_failover_interval;
                if last.elapsed() < min {
                    let again = match self.deferred_reported {
                        Some((c, at)) => c != to || at.elapsed() >= self.t.cfg.ping_interval,
                        None => true,
                    };
                    if again {
                        self.deferred_reported = Some((to, Instant::now()));
                        self.t.emit(Event::FailoverDeferred {
                            candidate: self.ep(to),
                            wait: min - last.elapsed(),
                        });
                    }
                    return false;
                }
            }
        }
        let from_verified = self.writer_verified;
        self.t.set_writer(to);
        self.t.hosts[to].health.store(HostHealth::Healthy);
        if let (Some(f), true) = (from, change) {
            let old = &self.t.hosts[f].pool;
            match how {
                Move::Switchover => old.soft_evict(),
                Move::Promotion => {
                    old.fail_waiters(&Error::new(
                        ErrorKind::NoWriter,
                        format!(
                            "the writer moved from {} to {} (promoted while {} was not answering); retry",
                            self.ep(f),
                            self.ep(to),
                            self.ep(f)
                        ),
                    ));
                    old.soft_evict();
                    // Statements stuck on a frozen server fail now instead of
                    // committing there when it thaws.
                    let cut = old.abort_borrowed();
                    if cut > 0 {
                        log::warn!(target: "staunch", "cut off {cut} borrowed connections to the former writer {}", self.ep(f));
                    }
                }
                // Done when it was declared dead.
                Move::Discovery => {}
            }
            self.last_change = Some(Instant::now());
            if from_verified {
                self.hosts[f].superseded = true;
                self.hosts[f].stale_reported = false;
            }
        }
        log::info!(target: "staunch", "writes move to {} ({how:?})", self.ep(to));
        self.failures = 0;
        self.last_counted = None;
        self.secondary_due = false;
        self.doubt_since = None;
        self.end_evidence_window();
        self.writer_verified = true;
        self.last_writer = Some(to);
        self.split_refused = None;
        self.deferred_reported = None;
        for h in &mut self.hosts {
            h.split_reported = false;
        }
        self.t.emit(Event::WriterChanged {
            from: from.map(|f| self.ep(f)),
            to: self.ep(to),
        });
        if let (Some(f), true, true) = (from, change, from_verified) {
            self.report_loss(f, to, how);
        }
        self.refresh_health();
        true
    }

    /// Rule 4: which GTIDs the former writer had that the new one lacks.
    fn report_loss(&mut self, f: usize, to: usize, how: Move) {
        let writer_pos = self.hosts[to]
            .sample
            .as_ref()
            .map(|s| s.current_pos.clone())
            .unwrap_or_default();
        let former = &self.hosts[f];
        // Only a writer that answered read-only has its final position in
        // its last answer; a failing one may have committed more since.
        let confirmed = how == Move::Switchover && former.status == Status::Ok;
        let former_pos = former
            .sample
            .as_ref()
            .map(|s| s.binlog_pos.clone())
            .unwrap_or_default();
        let (missing, transactions) = rules::missing_gtids(&former_pos, &writer_pos);
        self.pending_loss = (!confirmed).then_some(PendingLoss {
            former: f,
            writer: to,
            writer_pos,
        });
        if transactions > 0 || !confirmed {
            self.t.emit(Event::UnreplicatedWrites {
                former: self.ep(f),
                writer: self.ep(to),
                missing,
                transactions,
                confirmed,
            });
        }
    }

    fn declare_dead(&mut self, w: usize) {
        let ep = self.ep(w);
        let last = self.hosts[w]
            .error
            .as_ref()
            .map_or_else(|| "no answer".to_string(), |e| e.to_string());
        let reason = format!(
            "{} probes in a row failed (last: {last}), no host was promoted, and no replica shows it still sending",
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
        let pool = &self.t.hosts[w].pool;
        pool.soft_evict();
        // Queries in flight on a dead server would wait forever without a
        // query_timeout: cut them off.
        let cut = pool.abort_borrowed();
        if cut > 0 {
            log::warn!(target: "staunch", "cut off {cut} borrowed connections to the dead primary {ep}");
        }
        self.last_writer = Some(w);
        self.end_evidence_window();
        // A host already known writable takes over at once.
        self.discover();
    }

    /// Rule 5: who still sees the primary. The user's check runs on a
    /// thread of its own, bounded by `ping_timeout`.
    fn secondary_check(&self, w: usize) -> Vec<String> {
        let ep = self.ep(w);
        if let Some(check) = self.t.secondary_check.clone() {
            let e2 = ep.clone();
            match bounded(self.t.cfg.ping_timeout, "the secondary check", move || {
                Ok(check(&e2))
            }) {
                Ok(true) => return vec!["secondary check".to_string()],
                Ok(false) => {}
                Err(e) => log::warn!(target: "staunch", "secondary check for {ep}: {e}"),
            }
        }
        if !self.t.cfg.secondary_check {
            return Vec::new();
        }
        let primary_id = self.hosts[w].sample.as_ref().map(|s| s.server_id);
        self.hosts
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != w)
            .filter_map(|(i, h)| {
                let Repl::Some(r) = &h.answered()?.replica else {
                    return None;
                };
                rules::vouches(r, primary_id, h.evidence_base.as_deref()).then(|| self.ep(i))
            })
            .collect()
    }

    /// After host `i` answered: rule 4's stale primary and loss report.
    fn after_answer(&mut self, i: usize) {
        if self.t.writer() == Some(i) || self.hosts[i].status != Status::Ok {
            return;
        }
        let Some(s) = self.hosts[i].sample.clone() else {
            return;
        };
        if self.pending_loss.as_ref().is_some_and(|p| p.former == i) {
            let p = self.pending_loss.take().expect("checked");
            let (missing, transactions) = rules::missing_gtids(&s.binlog_pos, &p.writer_pos);
            self.t.emit(Event::UnreplicatedWrites {
                former: self.ep(i),
                writer: self.ep(p.writer),
                missing,
                transactions,
                confirmed: true,
            });
        }
        let h = &mut self.hosts[i];
        if s.read_only {
            // Reported again if it turns writable again.
            h.split_reported = false;
        }
        if !h.superseded {
            return;
        }
        let again = match &s.replica {
            Repl::Some(r) => r.fully_running(),
            // Without SLAVE MONITOR: connected and applying.
            Repl::Threads(t) => t.connected,
            Repl::None | Repl::Unknown => false,
        };
        if again {
            // Replicates again: an ordinary host.
            h.superseded = false;
            h.stale_reported = false;
            return;
        }
        if s.read_only {
            h.stale_reported = false;
        } else if !h.stale_reported {
            h.stale_reported = true;
            let writer = self.t.writer().map(|w| self.ep(w));
            self.t.emit(Event::StalePrimaryWritable {
                endpoint: self.ep(i),
                writer,
            });
        }
    }

    /// Read routing: every host but the writer, from its last probe.
    fn refresh_health(&mut self) {
        let w = self.t.writer();
        let writer_id = w
            .and_then(|w| self.hosts[w].sample.as_ref())
            .map(|s| s.server_id);
        for i in 0..self.hosts.len() {
            if Some(i) == w {
                continue;
            }
            let hm = &self.hosts[i];
            if hm.status == Status::Unknown {
                continue;
            }
            let answered = hm.answered().map(|s| (s.read_only, &s.replica));
            let (now, lag) = rules::replica_health(
                answered,
                hm.superseded,
                writer_id,
                self.t.cfg.max_replication_lag,
            );
            let h = &self.t.hosts[i];
            let before = h.health.load();
            h.lag_ms
                .store(lag.map_or(u64::MAX, |l| l.as_millis() as u64), Relaxed);
            h.health.store(now);
            if before == now {
                continue;
            }
            if before.takes_reads() && !now.takes_reads() && now != HostHealth::Stale {
                self.t.emit(Event::ReplicaLagging {
                    endpoint: h.endpoint.clone(),
                    lag,
                });
            } else if !before.takes_reads() && now == HostHealth::Healthy {
                self.t.emit(Event::ReplicaRecovered {
                    endpoint: h.endpoint.clone(),
                });
            }
        }
    }
}

/// A Galera node's state in a few words, for messages.
fn describe(o: Option<&GaleraObs>, error: Option<&Error>) -> String {
    match (o, error) {
        (Some(o), _) => format!(
            "wsrep_local_state={} cluster_status={} ready={} desync={} recv_queue={}",
            o.local_state,
            if o.primary { "Primary" } else { "non-Primary" },
            if o.ready { "ON" } else { "OFF" },
            if o.desync { "ON" } else { "OFF" },
            o.recv_queue
        ),
        (None, Some(e)) => format!("unreachable: {e}"),
        (None, None) => "no Galera state (wsrep_on=0?)".into(),
    }
}
