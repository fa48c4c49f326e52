//! The monitor's decision rules, as pure functions over what the probes
//! observed and a clock passed in (no I/O, no threads, no atomics, no
//! `Instant::now()`): `monitor.rs` probes the hosts and applies what these
//! decide. Each rule is tested by a table (below) taken from the anchors'
//! documented cases: MHA (alive errors, the secondary check), orchestrator
//! (DeadMaster), ProxySQL (read_only check timeouts, `mysql_galera_hostgroups`)
//! and MariaDB MaxScale (galeramon).
//!
//! Two rule sets: replication (a primary and replicas, `read_only` tells the
//! roles) and Galera (every node writable; `wsrep_%` status tells health).
//! Which one applies is [`mode_of`]'s answer over the first probes, unless
//! `topology=` forces it.

use std::time::{Duration, Instant};

use super::HostHealth;

// ---------------------------------------------------------------------------
// Which rule set.

/// What the servers are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    Replication,
    Galera,
}

/// The rule set for a multi-host URL without `topology=`: Galera when every
/// host that answered says `wsrep_on=1` (and at least one answered),
/// replication otherwise; `None` while no host has answered.
pub(crate) fn mode_of(wsrep_on: &[Option<bool>]) -> Option<Mode> {
    let answered: Vec<bool> = wsrep_on.iter().filter_map(|w| *w).collect();
    if answered.is_empty() {
        return None;
    }
    Some(if answered.iter().all(|&w| w) {
        Mode::Galera
    } else {
        Mode::Replication
    })
}

/// A `topology=` that the servers contradict at the first look: `Some`
/// with what they are when every host that answered says `wsrep_on=1`
/// under `topology=replication` (the replication rules would see several
/// writable hosts, a split brain, and refuse writes after the first fault),
/// or one says `wsrep_on=0` under `topology=galera` (no Galera status: no
/// node ever Synced). Warned, not refused: the user said so.
pub(crate) fn contradicts(forced: Mode, wsrep_on: &[Option<bool>]) -> Option<Mode> {
    let found = mode_of(wsrep_on)?;
    (found != forced).then_some(found)
}

/// What the first discovery does in a round of the monitor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FirstStep {
    /// Not yet: a host has not answered or failed once, or (mode not known)
    /// no host has answered at all.
    Wait,
    /// Discovery happens now, under this rule set; `detected` when this step
    /// found it out from `wsrep_on` (rather than `topology=` or an earlier
    /// step).
    Discover { mode: Mode, detected: bool },
}

/// The first discovery's sequencing: nothing until every host has been
/// probed once (answered or failed: one unreachable host does not hold the
/// others up beyond its own `ping_timeout`), then the rule set, known
/// (`topology=`) or found out by [`mode_of`] over the hosts that answered.
/// After this step the monitor runs [`first_look`] (replication) or
/// [`galera_plan`] with no current writer (Galera).
pub(crate) fn first_step(
    probed: &[bool],
    known: Option<Mode>,
    wsrep_on: &[Option<bool>],
) -> FirstStep {
    if probed.iter().any(|p| !p) {
        return FirstStep::Wait;
    }
    match known {
        Some(mode) => FirstStep::Discover {
            mode,
            detected: false,
        },
        None => mode_of(wsrep_on).map_or(FirstStep::Wait, |mode| FirstStep::Discover {
            mode,
            detected: true,
        }),
    }
}

// ---------------------------------------------------------------------------
// Probe outcomes (both rule sets).

/// How a probe ended, for the rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// It answered.
    Answered,
    /// It failed with an error that proves the server alive (MHA's
    /// `alive_error_codes`: too many connections, access denied, ...): not a
    /// failure.
    Alive,
    /// It failed (refused, reset, no answer within `ping_timeout`, any
    /// other server error).
    Failed,
}

/// MHA: a failed probe whose server error number is in `alive_codes` proves
/// the server alive.
pub(crate) fn outcome(ok: bool, server_code: Option<u16>, alive_codes: &[u16]) -> Outcome {
    match (ok, server_code) {
        (true, _) => Outcome::Answered,
        (false, Some(c)) if alive_codes.contains(&c) => Outcome::Alive,
        (false, _) => Outcome::Failed,
    }
}

/// Rule 3's counting (ProxySQL's `read_only` check timeouts, MHA's ping
/// loop): at most one failure counts per `ping_interval`, however fast the
/// writer is probed while in doubt (`slack` absorbs the cadence's jitter).
pub(crate) fn failure_counts(
    last_counted: Option<Instant>,
    now: Instant,
    ping_interval: Duration,
    slack: Duration,
) -> bool {
    last_counted.map_or(true, |t| now.duration_since(t) + slack >= ping_interval)
}

// ---------------------------------------------------------------------------
// Replication.

/// `SHOW SLAVE STATUS` as the rules need it.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) enum Repl {
    /// No row.
    #[default]
    None,
    Some(Replica),
    /// The host refused `SHOW SLAVE STATUS` (the monitor's user lacks
    /// `SLAVE MONITOR`), and [`Threads`] is what any user may read in its
    /// place (MariaDB's status variables): weaker, see [`replicates`].
    Threads(Threads),
    /// The host answered but would not show it (no privilege), and nothing
    /// stands in for it (MySQL: the status variables are gone). Not
    /// allowed to know is not "no": such a host is never taken for
    /// promoted.
    Unknown,
}

/// What `SHOW GLOBAL STATUS` tells any user about a MariaDB host's
/// replication threads: whether they run, not from where, how far, or
/// whether what they received advanced.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Threads {
    /// `Slave_running = ON`: the default connection's I/O thread is
    /// connected to its source and its SQL thread runs.
    pub connected: bool,
    /// `Slaves_running`: how many replication connections have their SQL
    /// thread running (a stopped I/O thread alone does not change it).
    pub sql_running: u32,
}

/// Whether a host replicates, as far as the monitor is allowed to know.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Replicates {
    /// A thread replicates (or, from [`Threads`], a SQL thread runs).
    Yes,
    /// No slave status row, or both threads stopped; from [`Threads`]: no
    /// SQL thread runs and the default connection is not connected (its
    /// I/O thread may still run: not visible without the privilege).
    No,
    /// Not allowed to know.
    Unknown,
}

/// "Does this host replicate?" from what its probe could read. Rules 1 and
/// 2 (a promotion is a writable host that no longer replicates) run on
/// [`Replicates::No`] whether it came from `SHOW SLAVE STATUS` or from the
/// status variables; they cannot run on [`Replicates::Unknown`].
pub(crate) fn replicates(r: &Repl) -> Replicates {
    match r {
        Repl::None => Replicates::No,
        Repl::Some(r) if r.replicating() => Replicates::Yes,
        Repl::Some(_) => Replicates::No,
        Repl::Threads(t) if t.connected || t.sql_running > 0 => Replicates::Yes,
        Repl::Threads(_) => Replicates::No,
        Repl::Unknown => Replicates::Unknown,
    }
}

/// One `SHOW SLAVE STATUS` row.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Replica {
    /// `Slave_IO_Running`: `Yes`, `Connecting` or `No`.
    pub io: String,
    /// `Slave_SQL_Running = Yes`.
    pub sql: bool,
    pub master_id: Option<u64>,
    /// `Seconds_Behind_Master` (None: NULL).
    pub behind: Option<u64>,
    /// What it has received (log file, position, GTID position) as one
    /// string, for "did it advance".
    pub received: String,
}

impl Replica {
    pub fn replicating(&self) -> bool {
        self.io == "Yes" || self.io == "Connecting" || self.sql
    }
    pub fn fully_running(&self) -> bool {
        self.io == "Yes" && self.sql
    }
}

/// A host "no longer replicates" ([`replicates`] says No). Not allowed to
/// know: not known to be detached.
pub(crate) fn detached(r: &Repl) -> bool {
    replicates(r) == Replicates::No
}

/// Rule 5, MHA's secondary check made stricter: a replica vouches for the
/// primary (`primary_id`, if known) only if its I/O thread runs, it
/// replicates from that primary, and what it received advanced since `base`
/// (its position when the primary's trouble began): proof the primary still
/// sends. `Slave_IO_Running = Yes` alone is no proof (a frozen primary keeps
/// its sockets open until `slave_net_timeout`).
pub(crate) fn vouches(r: &Replica, primary_id: Option<u64>, base: Option<&str>) -> bool {
    let advanced = base.is_some_and(|b| b != r.received);
    let from_primary = primary_id.map_or(true, |id| r.master_id == Some(id));
    r.io == "Yes" && from_primary && advanced
}

/// Rule 3, orchestrator's DeadMaster: the primary is dead when
/// `failure_threshold` probes in a row failed and nobody (no replica, no
/// user check) still sees it; a primary that someone still sees is a
/// partition (no failover).
pub(crate) fn dead_primary(failures: u32, threshold: u32, seen_by: usize) -> Option<bool> {
    (failures >= threshold).then_some(seen_by == 0)
}

/// Read routing for a replica: its health and lag from its last probe.
/// `answered`: None if its last probe failed. `superseded`: a former writer
/// (rule 4).
pub(crate) fn replica_health(
    answered: Option<(bool, &Repl)>,
    superseded: bool,
    writer_id: Option<u64>,
    max_lag: Option<Duration>,
) -> (HostHealth, Option<Duration>) {
    let Some((read_only, repl)) = answered else {
        return (HostHealth::Down, None);
    };
    if superseded && !read_only {
        return (HostHealth::Stale, None);
    }
    match repl {
        Repl::Some(r) if writer_id.map_or(true, |id| r.master_id == Some(id)) => match r.behind {
            None => (HostHealth::Lagging, None),
            Some(secs) => {
                let lag = Duration::from_secs(secs);
                let ok = max_lag.map_or(true, |m| lag <= m);
                let h = if ok {
                    HostHealth::Healthy
                } else {
                    HostHealth::Lagging
                };
                (h, Some(lag))
            }
        },
        // Not allowed to read the source or the lag: it takes reads only
        // when no lag bound is asked for, and its I/O thread is connected
        // and its SQL thread runs.
        Repl::Threads(t) if t.connected && max_lag.is_none() => (HostHealth::Healthy, None),
        _ => (HostHealth::Lagging, None),
    }
}

/// What the first look (every host answered or failed once) decides.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum FirstLook {
    /// The first host stays the writer; `verified` if it answered writable.
    Keep { verified: bool },
    /// Another host, alone writable, takes the writes.
    Follow(usize),
    /// Several writable hosts, the first among them: writes stay there,
    /// split brain reported.
    SplitKeep,
    /// Several writable hosts, not the first: writes refused.
    SplitRefuse,
}

/// The first look: the first host stays the writer unless it is read-only
/// (or unreachable while the only writable host no longer replicates).
pub(crate) fn first_look(
    writable: &[usize],
    h0_failed: bool,
    h0_read_only: bool,
    detached: impl Fn(usize) -> bool,
) -> FirstLook {
    match writable {
        [] => FirstLook::Keep { verified: false },
        [0] => FirstLook::Keep { verified: true },
        [c] if h0_read_only || (h0_failed && detached(*c)) => FirstLook::Follow(*c),
        [_] => FirstLook::Keep { verified: false },
        many if many.contains(&0) => FirstLook::SplitKeep,
        _ => FirstLook::SplitRefuse,
    }
}

/// With no writer (replication, after the writer was declared dead or a
/// split refused), once every host answered a probe started since: what
/// the hosts' `read_only` answers decide.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Rediscovery {
    /// No writable host (not superseded): writes stay refused.
    Nothing,
    /// Exactly one: writes go there.
    Follow(usize),
    /// Several: split brain, writes refused.
    Split(Vec<usize>),
}

/// [`Rediscovery`] over the writable hosts that are not superseded (a
/// former writer is never a candidate again, rule 4).
pub(crate) fn rediscover(writable_not_superseded: &[usize]) -> Rediscovery {
    match writable_not_superseded {
        [] => Rediscovery::Nothing,
        [c] => Rediscovery::Follow(*c),
        many => Rediscovery::Split(many.to_vec()),
    }
}

/// What the writer's last look says, for [`replication_step`], in the
/// order the rules look at it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WriterSeen {
    /// It answered with `read_only = 1` (rule 1 watches for a promotion).
    ReadOnly,
    /// Its last probe failed, not with an alive error (rules 2 and 3).
    Failed,
    /// Its probe in flight is late (rule 2 only).
    Late,
    /// It answered writable.
    Writable,
    /// Nothing to act on (not probed yet, an alive error).
    Other,
}

/// [`WriterSeen`] from the writer's last probe, in the rules' order: an
/// answer with `read_only=1` first, then a failure (not an alive error),
/// then a probe in flight past LATE, then an answer `read_only=0`.
pub(crate) fn writer_seen(answered: Option<bool>, failed: bool, late: bool) -> WriterSeen {
    match answered {
        Some(true) => WriterSeen::ReadOnly,
        _ if failed => WriterSeen::Failed,
        _ if late => WriterSeen::Late,
        Some(false) => WriterSeen::Writable,
        None => WriterSeen::Other,
    }
}

/// What rule 6 (fast checks) looks at: the writer, if there is one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WriterDoubt {
    /// No writer (refused, declared dead, not yet found).
    NoWriter,
    /// Replication: the writer as [`writer_seen`] saw it.
    Replication(WriterSeen),
    /// Galera: the writer's class, whether its probe is late, and whether a
    /// borrower found it not ready since its last answer.
    Galera {
        class: NodeClass,
        late: bool,
        suspect: bool,
    },
}

/// Rule 6: every host is checked at the fast cadence while in doubt: no
/// writer; a replication writer read-only, failing or late (the cases rules
/// 1 and 2 act on); a Galera writer not Synced, late, or suspect.
pub(crate) fn in_doubt(w: WriterDoubt) -> bool {
    match w {
        WriterDoubt::NoWriter => true,
        WriterDoubt::Replication(seen) => matches!(
            seen,
            WriterSeen::ReadOnly | WriterSeen::Failed | WriterSeen::Late
        ),
        WriterDoubt::Galera {
            class,
            late,
            suspect,
        } => class != NodeClass::Synced || late || suspect,
    }
}

/// A host other than the writer that answered writable and is not
/// superseded (rule 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Candidate {
    pub idx: usize,
    /// It no longer replicates ([`detached`]): someone promoted it.
    pub detached: bool,
}

/// What the replication rules do next, once the writer is known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ReplStep {
    Wait,
    /// Rule 1: a planned switchover to this host.
    Switchover(usize),
    /// Rule 1 with several writable hosts: writes refused (split brain).
    RefuseSplit(Vec<usize>),
    /// Rule 2: positive evidence, writes go to `to`; if the move is
    /// deferred (`min_failover_interval`), rule 3's secondary check runs
    /// when `else_secondary_check`.
    Promotion {
        to: usize,
        else_secondary_check: bool,
    },
    /// Rule 3: `failure_threshold` was reached; the secondary check runs.
    SecondaryCheck,
    /// The writer answers writable and so do these: split brain reported,
    /// writes stay.
    ReportSplit(Vec<usize>),
}

/// The order of rules 1-3 (the monitor's module doc) once the writer is
/// known: `others` are the writable, not superseded other hosts; `fresh`
/// says every other host answered a probe started since the trouble was
/// seen (rules 1 and 2 wait for that); `secondary_due` that the writer's
/// counted failures reached `failure_threshold`.
pub(crate) fn replication_step(
    writer: WriterSeen,
    others: &[Candidate],
    fresh: bool,
    secondary_due: bool,
) -> ReplStep {
    let troubled = matches!(
        writer,
        WriterSeen::ReadOnly | WriterSeen::Failed | WriterSeen::Late
    );
    if troubled && !fresh {
        return ReplStep::Wait;
    }
    let rule3 = secondary_due && writer == WriterSeen::Failed;
    match writer {
        WriterSeen::ReadOnly => match others {
            [] => ReplStep::Wait,
            [c] if c.detached => ReplStep::Switchover(c.idx),
            [_] => ReplStep::Wait,
            many => ReplStep::RefuseSplit(many.iter().map(|c| c.idx).collect()),
        },
        WriterSeen::Failed | WriterSeen::Late => match others {
            [c] if c.detached => ReplStep::Promotion {
                to: c.idx,
                else_secondary_check: rule3,
            },
            _ if rule3 => ReplStep::SecondaryCheck,
            _ => ReplStep::Wait,
        },
        WriterSeen::Writable if !others.is_empty() => {
            ReplStep::ReportSplit(others.iter().map(|c| c.idx).collect())
        }
        WriterSeen::Writable | WriterSeen::Other => ReplStep::Wait,
    }
}

// ---------------------------------------------------------------------------
// Galera.

/// A node's `wsrep_%` state, from its last answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct GaleraObs {
    /// `wsrep_local_state`: 4 Synced, 2 Donor/Desynced, 1 Joining, 3 Joined.
    pub local_state: u32,
    /// `wsrep_cluster_status = Primary`.
    pub primary: bool,
    /// `wsrep_ready = ON`.
    pub ready: bool,
    /// `@@wsrep_desync`.
    pub desync: bool,
    /// `@@wsrep_reject_queries` is not `NONE`.
    pub rejects: bool,
    /// `wsrep_local_index`: the node's place in the cluster view.
    pub local_index: u32,
    /// `wsrep_local_recv_queue`: write-sets received, not yet applied.
    pub recv_queue: u64,
    /// `wsrep_cluster_conf_id`: the number of the cluster view the node is
    /// in; the same on every member of the current Primary component.
    pub conf_id: u64,
    /// `wsrep_cluster_size`.
    pub size: u32,
}

impl Default for GaleraObs {
    /// A healthy node (for tests and as a base).
    fn default() -> Self {
        GaleraObs {
            local_state: 4,
            primary: true,
            ready: true,
            desync: false,
            rejects: false,
            local_index: 0,
            recv_queue: 0,
            conf_id: 1,
            size: 3,
        }
    }
}

/// What a Galera node may do now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NodeClass {
    /// Synced, ready, Primary component, not desynced, accepts queries:
    /// may take writes and reads.
    Synced,
    /// In the Primary component and serving, but Donor/Desynced (state 2,
    /// or `wsrep_desync=ON`): no writes; reads only as a last resort (see
    /// [`galera_plan`]).
    Donor,
    /// Not ready, not Primary, joining, rejecting queries, or unreachable:
    /// no statement at all.
    Out,
}

/// The anchors' judgment of one node (ProxySQL's galera checks, MaxScale's
/// galeramon): `None` is a node whose last probe failed.
pub(crate) fn galera_class(o: Option<&GaleraObs>) -> NodeClass {
    let Some(o) = o else {
        return NodeClass::Out;
    };
    if !o.primary || !o.ready || o.rejects {
        return NodeClass::Out;
    }
    match o.local_state {
        4 if !o.desync => NodeClass::Synced,
        4 | 2 => NodeClass::Donor,
        _ => NodeClass::Out,
    }
}

/// Where statements go in a Galera cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct GaleraPlan {
    /// The one node taking writes, if any.
    pub writer: Option<usize>,
    /// Nodes that may take writes if the writer fails (ProxySQL's backup
    /// writers): the other Synced nodes.
    pub backup: Vec<usize>,
    /// Nodes taking reads (`get_read`), the writer excluded: routing falls
    /// back to the writer when this is empty.
    pub readers: Vec<usize>,
}

/// The Galera rules: one writer (ProxySQL `max_writers=1`), chosen by a
/// stable rule (MaxScale: the lowest `wsrep_local_index` among Synced
/// nodes, the host order breaking ties) and kept while it stays Synced:
/// moved only when it fails or leaves the Primary component, never back
/// when a node with a lower index returns (MaxScale's
/// `disable_master_failback=true`), so no flapping. Readers: the other
/// Synced nodes whose `wsrep_local_recv_queue` is within `max_behind`
/// (ProxySQL `max_transactions_behind`); the writer alone takes reads when
/// none qualifies. A Donor/Desynced node (MaxScale `available_when_donor`
/// off) gets reads only when no node is Synced at all, and still within
/// `max_behind`. A node not Primary, not ready or unreachable gets nothing;
/// nor does a node that still reports a Primary view older than another
/// node's (`wsrep_cluster_conf_id`): the others have evicted it.
pub(crate) fn galera_plan(
    current: Option<usize>,
    nodes: &[Option<GaleraObs>],
    max_behind: u64,
) -> GaleraPlan {
    // A node cut off from the others still reports the old Primary view
    // until its own timeouts expire (~1 s after the others evicted it, at
    // the default evs timeouts), and its commits hang meanwhile: a node in
    // the Primary component whose view is older than another's is passed
    // over (it is not out: nothing is cut).
    // Only a newer view that is smaller counts (the others shrank without
    // it): a node probed just before a join's view change is not stale.
    let evicted = |o: &GaleraObs| {
        nodes
            .iter()
            .flatten()
            .any(|n| n.primary && o.primary && n.conf_id > o.conf_id && n.size < o.size)
    };
    let class: Vec<NodeClass> = nodes
        .iter()
        .map(|o| match o {
            Some(o) if evicted(o) => NodeClass::Out,
            o => galera_class(o.as_ref()),
        })
        .collect();
    let synced: Vec<usize> = (0..nodes.len())
        .filter(|&i| class[i] == NodeClass::Synced)
        .collect();
    let writer = match current {
        Some(c) if synced.contains(&c) => Some(c),
        _ => synced
            .iter()
            .copied()
            .min_by_key(|&i| (nodes[i].as_ref().map_or(u32::MAX, |o| o.local_index), i)),
    };
    let within = |i: usize| {
        nodes[i]
            .as_ref()
            .is_some_and(|o| o.recv_queue <= max_behind)
    };
    let backup: Vec<usize> = synced
        .iter()
        .copied()
        .filter(|&i| Some(i) != writer)
        .collect();
    let mut readers: Vec<usize> = backup.iter().copied().filter(|&i| within(i)).collect();
    if writer.is_none() && readers.is_empty() {
        readers = (0..nodes.len())
            .filter(|&i| class[i] == NodeClass::Donor && within(i))
            .collect();
    }
    GaleraPlan {
        writer,
        backup,
        readers,
    }
}

/// How a node's [`GaleraPlan`] role and last probe show in its
/// `HostHealth`: Healthy when it takes writes or reads; Down when its last
/// probe failed (or proved it alive but not serving); Lagging when it
/// answered but is not routed to (Donor, not Synced, behind, passed over);
/// Unknown before its first probe.
pub(crate) fn galera_health(routed: bool, failed: bool, probed: bool) -> HostHealth {
    if routed {
        HostHealth::Healthy
    } else if failed {
        HostHealth::Down
    } else if probed {
        HostHealth::Lagging
    } else {
        HostHealth::Unknown
    }
}

/// What a Galera node's health change tells the application.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HealthNews {
    /// `Event::ReplicaRecovered`: it takes reads again.
    Recovered,
    /// `Event::ReplicaLagging`: it no longer takes reads.
    Lagging,
}

/// Whether a node's health change is reported: not for the writer (its
/// changes are `WriterChanged`), not before its first probe, and only a
/// change into Healthy, or out of Healthy (or of Unknown, the first look)
/// into anything else (Down after Lagging is the same news again).
pub(crate) fn galera_health_news(
    before: HostHealth,
    after: HostHealth,
    is_writer: bool,
    probed: bool,
) -> Option<HealthNews> {
    if before == after || is_writer || !probed {
        return None;
    }
    if after == HostHealth::Healthy {
        Some(HealthNews::Recovered)
    } else if before == HostHealth::Healthy || before == HostHealth::Unknown {
        Some(HealthNews::Lagging)
    } else {
        None
    }
}

/// Whether a node has just gone out (probed, judged [`NodeClass::Out`],
/// and not out at the previous decision): its waiters fail, its idle
/// connections go, its borrowed ones are cut, once per episode.
pub(crate) fn galera_went_out(class: NodeClass, probed: bool, was_out: bool) -> bool {
    probed && class == NodeClass::Out && !was_out
}

// ---------------------------------------------------------------------------
// What a move may have lost (replication).

/// GTIDs in `former` (a MariaDB GTID position, `domain-server-seq,...`)
/// beyond what `writer` has in the same domain: `(ranges, count)`, e.g.
/// `("0-1-121..0-1-150", 30)`. Sequence numbers count transactions within a
/// domain. Empty when nothing is known to be missing.
pub(crate) fn missing_gtids(former: &str, writer: &str) -> (String, u64) {
    let parse = |s: &str| -> Vec<(u32, u32, u64)> {
        s.split(',')
            .filter_map(|g| {
                let mut it = g.trim().splitn(3, '-');
                Some((
                    it.next()?.parse().ok()?,
                    it.next()?.parse().ok()?,
                    it.next()?.parse().ok()?,
                ))
            })
            .collect()
    };
    let have = parse(writer);
    let mut ranges = Vec::new();
    let mut count = 0;
    for (domain, server, seq) in parse(former) {
        let had = have
            .iter()
            .filter(|(d, _, _)| *d == domain)
            .map(|(_, _, s)| *s)
            .max()
            .unwrap_or(0);
        if seq > had {
            count += seq - had;
            ranges.push(if seq == had + 1 {
                format!("{domain}-{server}-{seq}")
            } else {
                format!("{domain}-{server}-{}..{domain}-{server}-{seq}", had + 1)
            });
        }
    }
    (ranges.join(","), count)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MHA: &[u16] = crate::topology::DEFAULT_ALIVE_ERROR_CODES;

    #[test]
    fn mha_alive_errors() {
        // (probe ok, server error number, outcome): MHA's
        // MasterMonitor alive list: 1040 too many connections, 1045 access
        // denied, 1129 host blocked, ...; 2003/2013 (client side) and a
        // server error outside the list are failures.
        let table: &[(bool, Option<u16>, Outcome)] = &[
            (true, None, Outcome::Answered),
            (false, Some(1040), Outcome::Alive),
            (false, Some(1045), Outcome::Alive),
            (false, Some(1129), Outcome::Alive),
            (false, Some(1226), Outcome::Alive),
            (false, None, Outcome::Failed),
            (false, Some(1047), Outcome::Failed),
            (false, Some(1053), Outcome::Failed),
            (false, Some(2003), Outcome::Failed),
        ];
        for &(ok, code, want) in table {
            assert_eq!(outcome(ok, code, MHA), want, "{ok} {code:?}");
        }
        // A user list replaces MHA's.
        assert_eq!(outcome(false, Some(1040), &[1045]), Outcome::Failed);
    }

    #[test]
    fn proxysql_read_only_timeouts_count_once_per_interval() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let (every, slack) = (ms(1000), ms(100));
        // (last counted, now, counts)
        let table: &[(Option<u64>, u64, bool)] = &[
            (None, 0, true),
            (Some(0), 200, false), // fast checks in doubt: not again
            (Some(0), 899, false),
            (Some(0), 900, true), // within the slack of one interval
            (Some(0), 1500, true),
        ];
        for &(last, now, want) in table {
            let got = failure_counts(last.map(|l| t0 + ms(l)), t0 + ms(now), every, slack);
            assert_eq!(got, want, "{last:?} {now}");
        }
    }

    #[test]
    fn orchestrator_dead_master() {
        // (failures, threshold, hosts still seeing it, verdict): below the
        // threshold nothing; at it, dead only if nobody sees it.
        let table: &[(u32, u32, usize, Option<bool>)] = &[
            (3, 4, 0, None),
            (4, 4, 0, Some(true)),
            (4, 4, 1, Some(false)),
            (9, 4, 2, Some(false)),
            (1, 1, 0, Some(true)),
        ];
        for &(f, t, seen, want) in table {
            assert_eq!(dead_primary(f, t, seen), want, "{f} {t} {seen}");
        }
    }

    fn replica(io: &str, sql: bool, master: u64, received: &str) -> Replica {
        Replica {
            io: io.into(),
            sql,
            master_id: Some(master),
            behind: Some(0),
            received: received.into(),
        }
    }

    #[test]
    fn mha_secondary_check_needs_progress() {
        // (replica, primary id, base, vouches)
        let table: &[(Replica, Option<u64>, Option<&str>, bool)] = &[
            // Received more since the trouble began: the primary sends.
            (
                replica("Yes", true, 1, "b:200"),
                Some(1),
                Some("b:100"),
                true,
            ),
            // I/O thread "Yes" but nothing new: a frozen primary looks so.
            (
                replica("Yes", true, 1, "b:100"),
                Some(1),
                Some("b:100"),
                false,
            ),
            // No base yet (no answer since the trouble began).
            (replica("Yes", true, 1, "b:200"), Some(1), None, false),
            // Replicates from someone else.
            (
                replica("Yes", true, 7, "b:200"),
                Some(1),
                Some("b:100"),
                false,
            ),
            // I/O thread reconnecting: it does not reach the primary.
            (
                replica("Connecting", true, 1, "b:200"),
                Some(1),
                Some("b:100"),
                false,
            ),
            // Primary id unknown: any source counts.
            (replica("Yes", false, 7, "b:200"), None, Some("b:100"), true),
        ];
        for (r, id, base, want) in table {
            assert_eq!(vouches(r, *id, *base), *want, "{r:?} {id:?} {base:?}");
        }
    }

    #[test]
    fn replica_read_health() {
        let lag = |s| Some(Duration::from_secs(s));
        let r = |io: &str, sql, master, behind| {
            Repl::Some(Replica {
                io: String::from(io),
                sql,
                master_id: Some(master),
                behind,
                received: String::new(),
            })
        };
        let max = Some(Duration::from_secs(30));
        use HostHealth::*;
        // (answered: read_only + slave status, superseded, writer id, want)
        type Row = (
            Option<(bool, Repl)>,
            bool,
            Option<u64>,
            (HostHealth, Option<Duration>),
        );
        let table: Vec<Row> = vec![
            (None, false, Some(1), (Down, None)),
            (
                Some((true, r("Yes", true, 1, Some(3)))),
                false,
                Some(1),
                (Healthy, lag(3)),
            ),
            (
                Some((true, r("Yes", true, 1, Some(31)))),
                false,
                Some(1),
                (Lagging, lag(31)),
            ),
            // NULL Seconds_Behind_Master: broken.
            (
                Some((true, r("No", false, 1, None))),
                false,
                Some(1),
                (Lagging, None),
            ),
            // Replicates from a former primary.
            (
                Some((true, r("Yes", true, 9, Some(0)))),
                false,
                Some(1),
                (Lagging, None),
            ),
            (Some((true, Repl::None)), false, Some(1), (Lagging, None)),
            // A superseded writer still writable: stale.
            (Some((false, Repl::None)), true, Some(1), (Stale, None)),
        ];
        for (ans, sup, wid, want) in table {
            let got = replica_health(ans.as_ref().map(|(ro, r)| (*ro, r)), sup, wid, max);
            assert_eq!(got, want, "{ans:?} {sup}");
        }
    }

    /// "Does it replicate?" from `SHOW SLAVE STATUS`, or, refused, from
    /// `Slave_running`/`Slaves_running` as a user with `ALL ON app_db.*`
    /// reads them on MariaDB 10.11 (measured: replicating ON/1; source
    /// killed, I/O thread Connecting: OFF/1; `STOP SLAVE IO_THREAD`: OFF/1;
    /// `STOP SLAVE SQL_THREAD`: OFF/0; `STOP SLAVE; RESET SLAVE ALL`:
    /// OFF/0), or nothing (MySQL): not allowed to know is not "no".
    #[test]
    fn replicates_without_the_privilege() {
        use Replicates::*;
        let th = |connected, sql_running| {
            Repl::Threads(Threads {
                connected,
                sql_running,
            })
        };
        let row = |io: &str, sql| Repl::Some(replica(io, sql, 1, ""));
        let table: Vec<(Repl, Replicates)> = vec![
            (Repl::None, No),
            (row("Yes", true), Yes),
            (row("Connecting", true), Yes),
            (row("No", true), Yes),
            (row("Yes", false), Yes),
            (row("No", false), No),
            (th(true, 1), Yes),  // replicating
            (th(false, 1), Yes), // source gone, reconnecting; or I/O stopped
            (th(false, 2), Yes), // multi-source, default connection down
            (th(false, 0), No),  // promoted (or its SQL thread stopped)
            (Repl::Unknown, Unknown),
        ];
        for (r, want) in table {
            assert_eq!(replicates(&r), want, "{r:?}");
            assert_eq!(detached(&r), want == No, "{r:?}");
        }
        // Rule 2 runs on the weaker observation as on the row, and not at
        // all on Unknown (the 5.9 s of issue #49: no promotion seen).
        let cand = |r: &Repl| Candidate {
            idx: 1,
            detached: detached(r),
        };
        let step = |r: &Repl| replication_step(WriterSeen::Failed, &[cand(r)], true, false);
        let promoted = ReplStep::Promotion {
            to: 1,
            else_secondary_check: false,
        };
        assert_eq!(step(&Repl::None), promoted);
        assert_eq!(step(&th(false, 0)), promoted);
        assert_eq!(step(&th(false, 1)), ReplStep::Wait);
        assert_eq!(step(&Repl::Unknown), ReplStep::Wait);
    }

    #[test]
    fn replica_read_health_without_the_privilege() {
        let th = |connected, sql_running| {
            Repl::Threads(Threads {
                connected,
                sql_running,
            })
        };
        let bound = Some(Duration::from_secs(30));
        use HostHealth::*;
        // (slave status, max_replication_lag, want): the lag cannot be
        // read, so a bound cannot be kept: no reads while one is set.
        let table: Vec<(Repl, Option<Duration>, HostHealth)> = vec![
            (th(true, 1), None, Healthy),
            (th(true, 1), bound, Lagging),
            (th(false, 1), None, Lagging),
            (th(false, 0), None, Lagging),
            (Repl::Unknown, None, Lagging),
        ];
        for (r, max, want) in table {
            assert_eq!(
                replica_health(Some((true, &r)), false, Some(1), max),
                (want, None),
                "{r:?} {max:?}"
            );
        }
    }

    #[test]
    fn first_look_table() {
        let det = |_| true;
        let attached = |_| false;
        assert_eq!(
            first_look(&[], false, false, det),
            FirstLook::Keep { verified: false }
        );
        assert_eq!(
            first_look(&[0], false, false, det),
            FirstLook::Keep { verified: true }
        );
        // The first host read-only, another writable: follow it.
        assert_eq!(
            first_look(&[2], false, true, attached),
            FirstLook::Follow(2)
        );
        // The first host down and another writable that no longer replicates.
        assert_eq!(first_look(&[1], true, false, det), FirstLook::Follow(1));
        assert_eq!(
            first_look(&[1], true, false, attached),
            FirstLook::Keep { verified: false }
        );
        assert_eq!(first_look(&[0, 2], false, false, det), FirstLook::SplitKeep);
        assert_eq!(
            first_look(&[1, 2], true, false, det),
            FirstLook::SplitRefuse
        );
    }

    /// Rules 1-3 in order, each row a case from the anchors: MHA's online
    /// switchover (the old master read-only, the new one writable and no
    /// longer a slave), orchestrator's DeadMaster with a promotion seen
    /// (positive evidence, no waiting for failure_threshold), MHA's
    /// secondary check after failure_threshold, and split brain.
    #[test]
    fn replication_step_table() {
        use ReplStep::*;
        use WriterSeen::*;
        let det = |idx| Candidate {
            idx,
            detached: true,
        };
        let att = |idx| Candidate {
            idx,
            detached: false,
        };
        #[rustfmt::skip]
        let rows: &[(WriterSeen, &[Candidate], bool, bool, ReplStep)] = &[
            // (writer, others writable, fresh, secondary_due) => step
            (Writable, &[], true, false, Wait),
            (Other, &[], true, true, Wait),
            (Other, &[det(1)], true, true, Wait),
            // Rule 1: a planned switchover, only to a host that no longer
            // replicates, only on fresh answers.
            (ReadOnly, &[det(2)], true, false, Switchover(2)),
            (ReadOnly, &[det(2)], false, false, Wait),
            (ReadOnly, &[att(2)], true, false, Wait),
            (ReadOnly, &[], true, true, Wait),
            (ReadOnly, &[det(1), det(2)], true, false, RefuseSplit(vec![1, 2])),
            // Rule 1 first: a read-only writer is no failure for rule 3.
            (ReadOnly, &[], true, true, Wait),
            // Rule 2: positive evidence, failed or late, before the threshold.
            (Failed, &[det(1)], true, false, Promotion { to: 1, else_secondary_check: false }),
            (Late, &[det(1)], true, false, Promotion { to: 1, else_secondary_check: false }),
            (Failed, &[det(1)], true, true, Promotion { to: 1, else_secondary_check: true }),
            (Late, &[det(1)], true, true, Promotion { to: 1, else_secondary_check: false }),
            (Failed, &[det(1)], false, true, Wait),
            // Still replicating: no promotion was seen.
            (Failed, &[att(1)], true, false, Wait),
            // Rule 3: the threshold reached, a failed (not late) probe.
            (Failed, &[att(1)], true, true, SecondaryCheck),
            (Failed, &[], true, true, SecondaryCheck),
            (Late, &[], true, true, Wait),
            // Two promoted hosts: no rule 2; rule 3 still may run.
            (Failed, &[det(1), det(2)], true, false, Wait),
            (Failed, &[det(1), det(2)], true, true, SecondaryCheck),
            // The writer writable and another one too: reported, writes stay.
            (Writable, &[det(1), att(2)], true, false, ReportSplit(vec![1, 2])),
        ];
        for (i, (seen, others, fresh, due, want)) in rows.iter().enumerate() {
            assert_eq!(
                &replication_step(*seen, others, *fresh, *due),
                want,
                "row {i}: {seen:?} {others:?} fresh={fresh} due={due}"
            );
        }
    }

    #[test]
    fn forced_topology_contradicted() {
        use Mode::*;
        type Row<'a> = (Mode, &'a [Option<bool>], Option<Mode>);
        let table: &[Row] = &[
            (
                Replication,
                &[Some(true), Some(true), Some(true)],
                Some(Galera),
            ),
            // A node down at the first look: the others decide.
            (Replication, &[Some(true), None, Some(true)], Some(Galera)),
            (Replication, &[Some(false), Some(false)], None),
            (Replication, &[Some(true), Some(false)], None),
            (Replication, &[None, None], None),
            (Galera, &[Some(true), Some(false)], Some(Replication)),
            (Galera, &[Some(false), Some(false)], Some(Replication)),
            (Galera, &[Some(true), None], None),
        ];
        for &(forced, on, want) in table {
            assert_eq!(contradicts(forced, on), want, "{forced:?} {on:?}");
        }
    }

    #[test]
    fn mode_from_wsrep_on() {
        assert_eq!(mode_of(&[None, None]), None);
        assert_eq!(mode_of(&[Some(true), None, Some(true)]), Some(Mode::Galera));
        assert_eq!(mode_of(&[Some(true), Some(false)]), Some(Mode::Replication));
        assert_eq!(mode_of(&[Some(false)]), Some(Mode::Replication));
    }

    fn node(index: u32) -> Option<GaleraObs> {
        Some(GaleraObs {
            local_index: index,
            ..GaleraObs::default()
        })
    }

    fn with(index: u32, f: impl FnOnce(&mut GaleraObs)) -> Option<GaleraObs> {
        let mut o = node(index).unwrap();
        f(&mut o);
        Some(o)
    }

    #[test]
    fn galera_node_classes() {
        use NodeClass::*;
        // ProxySQL's and galeramon's checks, one field at a time.
        let table: Vec<(Option<GaleraObs>, NodeClass)> = vec![
            (node(0), Synced),
            (None, Out),
            (with(0, |o| o.primary = false), Out), // non-Primary: 1047
            (with(0, |o| o.ready = false), Out),
            (with(0, |o| o.rejects = true), Out), // wsrep_reject_queries
            (with(0, |o| o.local_state = 1), Out), // Joining
            (with(0, |o| o.local_state = 3), Out), // Joined, catching up
            (with(0, |o| o.local_state = 2), Donor),
            (with(0, |o| o.desync = true), Donor),
            (
                with(0, |o| {
                    o.local_state = 2;
                    o.primary = false
                }),
                Out,
            ),
        ];
        for (o, want) in table {
            assert_eq!(galera_class(o.as_ref()), want, "{o:?}");
        }
    }

    #[test]
    fn galera_hostgroups_and_galeramon() {
        let plan = |current, nodes: Vec<Option<GaleraObs>>| galera_plan(current, &nodes, 100);
        let p = |writer: Option<usize>, backup: &[usize], readers: &[usize]| GaleraPlan {
            writer,
            backup: backup.to_vec(),
            readers: readers.to_vec(),
        };
        // galeramon: the lowest wsrep_local_index is the first writer, not
        // the first host.
        assert_eq!(
            plan(None, vec![node(2), node(0), node(1)]),
            p(Some(1), &[0, 2], &[0, 2])
        );
        // Kept while Synced, even when a lower index is there (no fail-back).
        assert_eq!(
            plan(Some(2), vec![node(0), node(1), node(2)]),
            p(Some(2), &[0, 1], &[0, 1])
        );
        // The writer killed (no answer): the lowest index among the rest.
        assert_eq!(
            plan(Some(0), vec![None, node(1), node(0)]),
            p(Some(2), &[1], &[1])
        );
        // The writer isolated: non-Primary, out; it answers, but gets nothing.
        assert_eq!(
            plan(
                Some(0),
                vec![with(2, |o| o.primary = false), node(0), node(1)]
            ),
            p(Some(1), &[2], &[2])
        );
        // The writer desynced: writes move, no reads for it.
        assert_eq!(
            plan(
                Some(0),
                vec![with(0, |o| o.desync = true), node(1), node(2)]
            ),
            p(Some(1), &[2], &[2])
        );
        // A donor is neither writer nor reader while a node is Synced.
        assert_eq!(
            plan(
                Some(0),
                vec![node(0), with(1, |o| o.local_state = 2), node(2)]
            ),
            p(Some(0), &[2], &[2])
        );
        // max_transactions_behind: a reader past the bound is shunned (it
        // stays a backup writer).
        assert_eq!(
            plan(
                Some(0),
                vec![node(0), with(1, |o| o.recv_queue = 101), node(2)]
            ),
            p(Some(0), &[1, 2], &[2])
        );
        // The writer alone: no reader (routing reads the writer).
        assert_eq!(
            plan(Some(0), vec![node(0), None, None]),
            p(Some(0), &[], &[])
        );
        // Quorum lost: the survivor is non-Primary; no writer, no reader.
        assert_eq!(
            plan(Some(0), vec![None, None, with(0, |o| o.primary = false)]),
            p(None, &[], &[])
        );
        // Only donors left: reads there within the bound, never writes.
        assert_eq!(
            plan(
                Some(0),
                vec![
                    None,
                    with(0, |o| o.local_state = 2),
                    with(1, |o| {
                        o.local_state = 2;
                        o.recv_queue = 500
                    })
                ]
            ),
            p(None, &[], &[1])
        );
        // The writer cut off, before its own timeouts expire: the two
        // others evicted it (a newer view); it still says Primary.
        let conf = |i: u32, c: u64, n: u32| {
            with(i, |o| {
                o.conf_id = c;
                o.size = n
            })
        };
        assert_eq!(
            plan(Some(0), vec![conf(0, 5, 3), conf(0, 6, 2), conf(1, 6, 2)]),
            p(Some(1), &[2], &[2])
        );
        // A newer, larger view (a node joined) makes no one stale.
        assert_eq!(
            plan(Some(0), vec![conf(0, 5, 2), conf(1, 6, 3), conf(2, 6, 3)]),
            p(Some(0), &[1, 2], &[1, 2])
        );
        // Ties on local_index (two views at once): the host order decides.
        assert_eq!(
            plan(None, vec![node(1), node(0), node(0)]),
            p(Some(1), &[0, 2], &[0, 2])
        );
        // A returning writer does not take writes back (rolling restart).
        let mut cur = plan(None, vec![node(0), node(1), node(2)]).writer;
        assert_eq!(cur, Some(0));
        for nodes in [
            vec![None, node(0), node(1)],
            vec![node(2), node(0), node(1)],
            vec![node(1), None, node(0)],
            vec![node(1), node(2), node(0)],
        ] {
            cur = plan(cur, nodes).writer;
        }
        assert_eq!(cur, Some(2), "each move only when the writer left");
    }

    #[test]
    fn first_discovery_sequencing() {
        use FirstStep::*;
        let (g, r) = (Mode::Galera, Mode::Replication);
        // (probed once, topology=, wsrep_on answers, step)
        type Row<'a> = (&'a [bool], Option<Mode>, &'a [Option<bool>], FirstStep);
        let table: &[Row] = &[
            // A host not yet probed holds the first look back, whatever
            // the others said (one ping_timeout at most).
            (
                &[true, false, true],
                None,
                &[Some(true), None, Some(true)],
                Wait,
            ),
            (&[false, true], Some(r), &[None, Some(false)], Wait),
            // Every host probed, nobody answered (all failed): no rule set
            // yet, unless forced.
            (&[true, true], None, &[None, None], Wait),
            (
                &[true, true],
                Some(g),
                &[None, None],
                Discover {
                    mode: g,
                    detected: false,
                },
            ),
            // Found out: Galera when every host that answered says wsrep_on.
            (
                &[true, true, true],
                None,
                &[Some(true), None, Some(true)],
                Discover {
                    mode: g,
                    detected: true,
                },
            ),
            (
                &[true, true, true],
                None,
                &[Some(true), Some(false), Some(true)],
                Discover {
                    mode: r,
                    detected: true,
                },
            ),
            (
                &[true, true],
                None,
                &[Some(false), Some(false)],
                Discover {
                    mode: r,
                    detected: true,
                },
            ),
            // Forced: the servers' word does not override topology=.
            (
                &[true, true],
                Some(r),
                &[Some(true), Some(true)],
                Discover {
                    mode: r,
                    detected: false,
                },
            ),
        ];
        for (probed, known, on, want) in table {
            assert_eq!(
                first_step(probed, *known, on),
                *want,
                "{probed:?} {known:?} {on:?}"
            );
        }
    }

    #[test]
    fn rediscovery_needs_exactly_one_writable() {
        assert_eq!(rediscover(&[]), Rediscovery::Nothing);
        assert_eq!(rediscover(&[2]), Rediscovery::Follow(2));
        assert_eq!(rediscover(&[0, 2]), Rediscovery::Split(vec![0, 2]));
    }

    #[test]
    fn galera_health_and_its_news() {
        use HostHealth::*;
        // (routed, failed, probed, health)
        let table: &[(bool, bool, bool, HostHealth)] = &[
            (true, false, true, Healthy),
            (false, true, true, Down),
            (false, false, true, Lagging),
            (false, false, false, Unknown),
        ];
        for &(routed, failed, probed, want) in table {
            assert_eq!(galera_health(routed, failed, probed), want);
        }
        // (before, after, is writer, probed, news)
        let news: &[(HostHealth, HostHealth, bool, bool, Option<HealthNews>)] = &[
            (Unknown, Healthy, false, true, Some(HealthNews::Recovered)),
            (Lagging, Healthy, false, true, Some(HealthNews::Recovered)),
            (Healthy, Lagging, false, true, Some(HealthNews::Lagging)),
            (Healthy, Down, false, true, Some(HealthNews::Lagging)),
            // The first look finding a node Donor or down.
            (Unknown, Lagging, false, true, Some(HealthNews::Lagging)),
            // Lagging then down: no second report.
            (Lagging, Down, false, true, None),
            (Healthy, Healthy, false, true, None),
            // The writer's moves are WriterChanged, not replica news.
            (Lagging, Healthy, true, true, None),
            (Healthy, Unknown, false, false, None),
        ];
        for &(b, a, w, p, want) in news {
            assert_eq!(
                galera_health_news(b, a, w, p),
                want,
                "{b:?} -> {a:?} writer={w}"
            );
        }
        // Going out is news once per episode, and only after a probe.
        assert!(galera_went_out(NodeClass::Out, true, false));
        assert!(!galera_went_out(NodeClass::Out, true, true));
        assert!(!galera_went_out(NodeClass::Out, false, false));
        assert!(!galera_went_out(NodeClass::Donor, true, false));
    }

    #[test]
    fn writer_seen_and_rule_6() {
        use WriterSeen::*;
        // (answered: Some(read_only), failed, late, seen, in doubt)
        let table: &[(Option<bool>, bool, bool, WriterSeen, bool)] = &[
            (Some(true), false, false, ReadOnly, true),
            // A read-only answer outranks lateness of the next probe.
            (Some(true), false, true, ReadOnly, true),
            (None, true, false, Failed, true),
            (None, true, true, Failed, true),
            (Some(false), false, true, Late, true),
            (None, false, true, Late, true), // an alive error, then late
            (Some(false), false, false, Writable, false),
            (None, false, false, Other, false), // an alive error, or not probed
        ];
        for &(answered, failed, late, seen, doubt) in table {
            assert_eq!(
                writer_seen(answered, failed, late),
                seen,
                "{answered:?} {failed} {late}"
            );
            assert_eq!(in_doubt(WriterDoubt::Replication(seen)), doubt, "{seen:?}");
        }
        assert!(in_doubt(WriterDoubt::NoWriter));
        // (class, late, suspect, in doubt): ProxySQL/galeramon's healthy
        // writer is Synced; anything else, a late probe or a borrower's
        // 1047/1180 puts the monitor on the fast cadence.
        let galera: &[(NodeClass, bool, bool, bool)] = &[
            (NodeClass::Synced, false, false, false),
            (NodeClass::Synced, true, false, true),
            (NodeClass::Synced, false, true, true),
            (NodeClass::Donor, false, false, true),
            (NodeClass::Out, false, false, true),
        ];
        for &(class, late, suspect, doubt) in galera {
            assert_eq!(
                in_doubt(WriterDoubt::Galera {
                    class,
                    late,
                    suspect
                }),
                doubt,
                "{class:?} {late} {suspect}"
            );
        }
    }

    #[test]
    fn missing_gtid_ranges() {
        assert_eq!(
            missing_gtids("0-1-150", "0-1-120"),
            ("0-1-121..0-1-150".into(), 30)
        );
        assert_eq!(missing_gtids("0-1-121", "0-1-120"), ("0-1-121".into(), 1));
        assert_eq!(missing_gtids("0-1-120", "0-1-120"), (String::new(), 0));
        // The new writer wrote on: nothing the former had is missing.
        assert_eq!(missing_gtids("0-1-120", "0-3-125"), (String::new(), 0));
        assert_eq!(
            missing_gtids("0-1-10,1-1-5", "0-1-10"),
            ("1-1-1..1-1-5".into(), 5)
        );
        assert_eq!(missing_gtids("", "0-1-3"), (String::new(), 0));
    }
}
