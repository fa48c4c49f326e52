//! The drill's workload and what it measures.
//!
//! Time is cut into windows: a baseline, then one window per fault that runs
//! from the moment the fault is injected until the next fault (so it includes
//! the normal load after the fault). Every observation (a `get()` wait, an
//! error, a successful operation, an acknowledged write) goes to the window
//! current when it is made.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed, Ordering::SeqCst};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use staunch::prelude::*;
use staunch::{Pool, PoolConfig, Stats};

/// The bounds a fault must stay within to count as survived.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounds {
    pub connection_timeout: Duration,
    pub connect_timeout: Duration,
    /// Longest acceptable `get()` wait: connection_timeout + 500 ms.
    pub wait: Duration,
    /// Longest acceptable time from the fault's end to the first successful
    /// operation: connect_timeout + 2 s (one connect, the retry backoff of
    /// at most 1 s, and scheduling slack).
    pub recovery: Duration,
    /// With a primary monitor (incident D): the longest acceptable time from
    /// the primary's freeze to writes moving to the promoted replica.
    pub failover_detection: Option<Duration>,
}

impl Bounds {
    pub fn of(cfg: &PoolConfig) -> Bounds {
        Bounds {
            connection_timeout: cfg.connection_timeout(),
            connect_timeout: cfg.connect_timeout(),
            wait: cfg.connection_timeout() + Duration::from_millis(500),
            recovery: cfg.connect_timeout() + Duration::from_secs(2),
            failover_detection: None,
        }
    }

    /// Recovery bound of a fault of `kind`. D's recovery runs from the
    /// freeze, so it includes the monitor's detection.
    pub fn recovery_for(&self, kind: Kind) -> Duration {
        match (kind, self.failover_detection) {
            (Kind::PrimaryPromotion, Some(d)) => d + self.recovery,
            _ => self.recovery,
        }
    }
}

/// "Not yet" for the nanosecond offsets below.
pub const NEVER: u64 = u64::MAX;

/// Width of one bucket of the timeline (`--html`).
pub const BUCKET: Duration = Duration::from_millis(100);
const BUCKET_NS: u64 = BUCKET.as_nanos() as u64;
/// Buckets the workers write into, round robin by time (6.4 s): the
/// reporter drains each one a bucket or two after it closed.
const SLOTS: usize = 64;
/// get() wait histogram of a bucket: 4 sub-buckets per power of two of
/// microseconds, up to 2^24 µs (16.8 s; longer waits count in the last).
const HIST: usize = 96;

/// One closed bucket of the timeline: what the workload did in the 100 ms
/// from `bucket * BUCKET` (drill clock).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sample {
    pub bucket: u32,
    /// Successful operations completed.
    pub ops: u32,
    pub errors: u32,
    /// get() (and get_read()) calls that returned, and their wait's
    /// percentiles (upper bounds of the histogram bucket: at most 25 % high).
    pub waits: u32,
    pub p50_us: u32,
    pub p99_us: u32,
}

impl Sample {
    /// When the bucket begins, on the drill's clock.
    pub fn start(&self) -> Duration {
        BUCKET * self.bucket
    }
}

/// The histogram bucket of a wait of `us` microseconds.
fn hist_index(us: u64) -> usize {
    let v = us.max(1);
    let octave = 63 - v.leading_zeros() as usize;
    let sub = if octave >= 2 {
        ((v >> (octave - 2)) & 3) as usize
    } else {
        (v - (1 << octave)) as usize
    };
    (octave * 4 + sub).min(HIST - 1)
}

/// The largest wait (µs) that falls in histogram bucket `i`.
fn hist_upper(i: usize) -> u64 {
    let (octave, sub) = ((i / 4) as u32, (i % 4) as u64);
    if octave >= 2 {
        (1u64 << octave) + ((sub + 1) << (octave - 2)) - 1
    } else {
        (1u64 << octave) + sub
    }
}

/// The value at quantile `q` of a histogram (0 when empty).
fn hist_quantile(h: &[u64; HIST], n: u64, q: f64) -> u64 {
    let rank = ((q * n as f64).ceil() as u64).clamp(1, n.max(1));
    let mut seen = 0;
    for (i, c) in h.iter().enumerate() {
        seen += c;
        if seen >= rank && *c > 0 {
            return hist_upper(i);
        }
    }
    0
}

/// Samples of operations recorded after the fact (the Galera part keeps
/// every operation): each is (when it ended, drill clock ns; whether it
/// succeeded; how long it took, µs). Every bucket from the first to the
/// last is there, empty ones too.
pub fn samples_of(ops: impl IntoIterator<Item = (u64, bool, u64)>) -> Vec<Sample> {
    let mut by: BTreeMap<u64, (u32, u32, [u64; HIST])> = BTreeMap::new();
    for (end_ns, ok, us) in ops {
        let b = by.entry(end_ns / BUCKET_NS).or_insert((0, 0, [0; HIST]));
        if ok {
            b.0 += 1;
        } else {
            b.1 += 1;
        }
        b.2[hist_index(us)] += 1;
    }
    let (Some(&first), Some(&last)) = (by.keys().next(), by.keys().next_back()) else {
        return Vec::new();
    };
    (first..=last)
        .map(|i| match by.get(&i) {
            None => Sample {
                bucket: i as u32,
                ..Sample::default()
            },
            Some((ops, errors, h)) => {
                let n: u64 = h.iter().sum();
                Sample {
                    bucket: i as u32,
                    ops: *ops,
                    errors: *errors,
                    waits: n as u32,
                    p50_us: hist_quantile(h, n, 0.50) as u32,
                    p99_us: hist_quantile(h, n, 0.99) as u32,
                }
            }
        })
        .collect()
}

struct Slot {
    ops: AtomicU64,
    errors: AtomicU64,
    hist: [AtomicU64; HIST],
}

/// The timeline's sampler: the workers add to the slot of the current
/// 100 ms (atomics only, no lock); the reporter thread drains closed slots
/// into samples every 50 ms. A worker delayed past the next bucket's close
/// between reading the clock and adding lands its count 6.4 s later: one
/// operation misplaced, not lost.
pub struct Sampler {
    slots: Box<[Slot]>,
    /// The next bucket to drain, and the samples so far (the reporter's).
    drained: Mutex<(u64, Vec<Sample>)>,
}

impl Sampler {
    /// A sampler whose first bucket holds the drill-clock offset `from_ns`.
    pub fn new(from_ns: u64) -> Sampler {
        Sampler {
            slots: (0..SLOTS)
                .map(|_| Slot {
                    ops: AtomicU64::new(0),
                    errors: AtomicU64::new(0),
                    hist: std::array::from_fn(|_| AtomicU64::new(0)),
                })
                .collect(),
            drained: Mutex::new((from_ns / BUCKET_NS, Vec::new())),
        }
    }
    fn slot(&self, now_ns: u64) -> &Slot {
        &self.slots[(now_ns / BUCKET_NS) as usize % SLOTS]
    }
    pub fn op(&self, now_ns: u64) {
        self.slot(now_ns).ops.fetch_add(1, Relaxed);
    }
    pub fn error(&self, now_ns: u64) {
        self.slot(now_ns).errors.fetch_add(1, Relaxed);
    }
    pub fn wait(&self, now_ns: u64, us: u64) {
        self.slot(now_ns).hist[hist_index(us)].fetch_add(1, Relaxed);
    }
    /// Turns the buckets closed at `now_ns` (all of them up to `now_ns`'s
    /// own with `all`) into samples.
    pub fn drain(&self, now_ns: u64, all: bool) {
        let cur = now_ns / BUCKET_NS;
        // A bucket is drained once the next one has closed too.
        let limit = if all { cur + 1 } else { cur.saturating_sub(1) };
        let mut d = lock(&self.drained);
        while d.0 < limit {
            let s = &self.slots[d.0 as usize % SLOTS];
            let mut h = [0u64; HIST];
            for (c, a) in h.iter_mut().zip(&s.hist) {
                *c = a.swap(0, Relaxed);
            }
            let n: u64 = h.iter().sum();
            let sample = Sample {
                bucket: d.0 as u32,
                ops: s.ops.swap(0, Relaxed) as u32,
                errors: s.errors.swap(0, Relaxed) as u32,
                waits: n as u32,
                p50_us: hist_quantile(&h, n, 0.50) as u32,
                p99_us: hist_quantile(&h, n, 0.99) as u32,
            };
            d.1.push(sample);
            d.0 += 1;
        }
    }
    /// Every sample so far, taken out.
    pub fn take(&self) -> Vec<Sample> {
        std::mem::take(&mut lock(&self.drained).1)
    }
}

pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Lines to print, queued by any thread (workers, pool event listeners) and
/// printed by the reporter, so that no one blocks on stdout.
pub struct Sink {
    /// The drill's clock starts here.
    pub t0: Instant,
    lines: Mutex<Vec<String>>,
}

impl Sink {
    pub fn new() -> Sink {
        Sink {
            t0: Instant::now(),
            lines: Mutex::new(Vec::new()),
        }
    }
    /// Queues a line, stamped with the drill's clock.
    pub fn push(&self, s: impl AsRef<str>) {
        let line = format!("[{}]   {}", stamp(self.t0.elapsed()), s.as_ref());
        lock(&self.lines).push(line);
    }
    /// Prints the queued lines.
    pub fn flush(&self) {
        let lines = std::mem::take(&mut *lock(&self.lines));
        for l in lines {
            println!("{l}");
        }
    }
    /// Prints a line now, after any queued ones.
    pub fn say(&self, s: impl AsRef<str>) {
        self.flush();
        println!("[{}] {}", stamp(self.t0.elapsed()), s.as_ref());
    }
}

/// What a window stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Baseline,
    KillConnections,
    /// Incident A: black hole, then the VIP moves (or, with --url, comes back).
    VipBlackHole,
    Freeze,
    /// A freeze during long statements at the defaults (no query_timeout):
    /// each must end within liveness_threshold + connect_timeout +
    /// validation_timeout of the freeze, with ServerUnresponsive.
    FreezeLongStatements,
    KillRestart,
    /// Incident C.
    KeepaliveRace,
    /// Incident B: replica connections left idle past the replicas'
    /// wait_timeout (the read load pauses), then reads resume.
    IdleReplicas,
    /// Incident D: the primary freezes and a replica is promoted.
    PrimaryPromotion,
    /// The soak's chaos-proxy modes: the path through the VIP degrades for a
    /// while, then passes again.
    Proxy(ProxyFault),
}

/// A mode of the chaos proxy that the soak switches the VIP to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProxyFault {
    /// Every chunk, both ways, is delayed by this much.
    Latency(Duration),
    /// The server's bytes come one at a time, with this pause before each.
    Drip(Duration),
    /// Connects are accepted and reset at once (RST).
    Reset,
    /// Connects are accepted and never answered; the same server comes back.
    BlackHole,
}

impl Kind {
    /// Whether "recovery" (fault end → first success) means something here.
    pub fn has_recovery(self) -> bool {
        !matches!(self, Kind::Baseline | Kind::KeepaliveRace)
    }
    pub fn key(self) -> &'static str {
        match self {
            Kind::Baseline => "baseline",
            Kind::KillConnections => "kill_connections",
            Kind::VipBlackHole => "incident_a_vip_black_hole",
            Kind::Freeze => "frozen_server",
            Kind::FreezeLongStatements => "frozen_during_long_statements",
            Kind::KillRestart => "server_killed_restarted",
            Kind::KeepaliveRace => "incident_c_keepalive_race",
            Kind::IdleReplicas => "incident_b_idle_replicas",
            Kind::PrimaryPromotion => "incident_d_primary_promotion",
            Kind::Proxy(ProxyFault::Latency(_)) => "proxy_latency",
            Kind::Proxy(ProxyFault::Drip(_)) => "proxy_drip",
            Kind::Proxy(ProxyFault::Reset) => "proxy_reset",
            Kind::Proxy(ProxyFault::BlackHole) => "proxy_black_hole",
        }
    }
    /// Which successful operations count as the recovery: B's is the first
    /// read after the pause (writes never stopped), D's the first write
    /// (reads on the replicas never stopped).
    fn recovered_by(self, read: bool) -> bool {
        match self {
            Kind::IdleReplicas => read,
            Kind::PrimaryPromotion => !read,
            _ => true,
        }
    }
    /// Whether only operations begun after the fault's end count for the
    /// recovery (so that an answer sent just before a freeze does not count).
    fn gated(self) -> bool {
        matches!(self, Kind::IdleReplicas | Kind::PrimaryPromotion)
    }
}

/// What incident C's race found.
#[derive(Clone, Debug, Default)]
pub struct RaceResult {
    pub queries: u64,
    pub validations: u64,
    pub keepalives: u64,
    pub violations: u64,
    pub pool_violations: u64,
    pub crossed: u64,
    pub errors: u64,
    pub longest_wait: Duration,
    pub first_error: Option<String>,
}

/// One window of the drill: a fault (or the baseline) and what the workload saw.
pub struct Window {
    pub index: usize,
    pub kind: Kind,
    pub label: String,
    /// The bounds this window's fault must stay within (those of its pool).
    pub bounds: Bounds,
    /// Offset (ns from the drill's start) of the fault, i.e. of the window.
    pub start_ns: u64,
    /// When the fault ended (NEVER until then).
    pub fault_end_ns: AtomicU64,
    /// When the window ended (the next one began).
    pub end_ns: AtomicU64,
    pub first_error_ns: AtomicU64,
    pub first_error: Mutex<Option<String>>,
    pub first_ok_after_end_ns: AtomicU64,
    pub longest_wait_us: AtomicU64,
    pub errors: AtomicU64,
    /// Errors of reads (included in `errors`).
    pub read_errors: AtomicU64,
    pub ops: AtomicU64,
    /// Successful reads (included in `ops`).
    pub reads: AtomicU64,
    pub crossed: AtomicU64,
    /// D: when the monitor moved writes to the promoted replica, its
    /// detection (NEVER until then).
    pub detected_ns: AtomicU64,
    /// D: when the monitor moved writes to another host (NEVER until then).
    pub writer_changed_ns: AtomicU64,
    /// What the injection did, in words (shown under the table).
    pub notes: Mutex<Vec<String>>,
    /// Why the fault could not be injected, or an extra check failed.
    pub failure: Mutex<Option<String>>,
    pub race: Mutex<Option<RaceResult>>,
    /// Ctrl-C came before the fault and its recovery were fully observed.
    pub interrupted: AtomicBool,
    pub stats_at_start: Stats,
    pub stats_at_end: Mutex<Option<Stats>>,
}

impl Window {
    pub fn note(&self, s: impl Into<String>) {
        lock(&self.notes).push(s.into());
    }
    pub fn fail(&self, s: impl Into<String>) {
        lock(&self.failure).get_or_insert(s.into());
    }
    pub fn fault_end(&self) -> Option<u64> {
        let v = self.fault_end_ns.load(SeqCst);
        (v != NEVER).then_some(v)
    }
    /// Fault start to the first error the workload saw; for D, to writes
    /// moving to the promoted replica.
    pub fn detection(&self) -> Option<Duration> {
        let v = if self.kind == Kind::PrimaryPromotion {
            self.detected_ns.load(SeqCst)
        } else {
            self.first_error_ns.load(SeqCst)
        };
        self.since_start(v)
    }
    /// Fault end to the first successful operation; for D, the freeze (the
    /// fault's start) to the first successful write.
    pub fn recovery(&self) -> Option<Duration> {
        let end = self.fault_end()?;
        let ok = self.first_ok_after_end_ns.load(SeqCst);
        let from = if self.kind == Kind::PrimaryPromotion {
            self.start_ns
        } else {
            end
        };
        (ok != NEVER).then(|| Duration::from_nanos(ok.saturating_sub(from)))
    }
    /// Time from the fault's start to the drill-clock offset `ns`, if set.
    pub fn since_start(&self, ns: u64) -> Option<Duration> {
        (ns != NEVER).then(|| Duration::from_nanos(ns.saturating_sub(self.start_ns)))
    }
    pub fn longest_wait(&self) -> Duration {
        let main = Duration::from_micros(self.longest_wait_us.load(SeqCst));
        let race = lock(&self.race)
            .as_ref()
            .map_or(Duration::ZERO, |r| r.longest_wait);
        main.max(race)
    }
    /// Errors of the main workload plus those of the race's borrowers.
    pub fn errors(&self) -> u64 {
        self.errors.load(SeqCst) + lock(&self.race).as_ref().map_or(0, |r| r.errors)
    }
    pub fn crossed(&self) -> u64 {
        self.crossed.load(SeqCst) + lock(&self.race).as_ref().map_or(0, |r| r.crossed)
    }
}

/// How one phase of the drill runs its workload.
pub struct PhaseSpec {
    /// Index of the phase's baseline window (windows are numbered across
    /// phases, so that missing writes can be told apart).
    pub first_index: usize,
    pub baseline_label: String,
    pub bounds: Bounds,
    /// Reads through `get_read()` (replicas) instead of `get()`.
    pub split_reads: bool,
    /// Remember each connection's server thread id (the --url KILL fault).
    pub track_ids: bool,
    /// Sample a timeline, per 100 ms (`--html`).
    pub timeline: bool,
}

/// State shared by the drill, its workers and its reporter.
pub struct Shared {
    pub t0: Instant,
    pub pool: Pool,
    pub table: String,
    first_index: usize,
    bounds: Bounds,
    /// Reads go through `get_read()` (to the replicas).
    pub split_reads: bool,
    /// While set, workers only write (incident B leaves replica connections idle).
    pub reads_paused: AtomicBool,
    windows: Mutex<Vec<Arc<Window>>>,
    current: Mutex<Arc<Window>>,
    /// Shown in the live line: what is happening now.
    pub phase: Mutex<String>,
    pub stop: AtomicBool,
    /// Per-second figures for the live line (swapped to 0 by the reporter).
    pub sec_ops: AtomicU64,
    pub sec_errors: AtomicU64,
    pub sec_wait_us: AtomicU64,
    /// Lines to print (from workers and pool events), drained by the reporter.
    pub events: Arc<Sink>,
    /// With --url: the server's thread id of every pool connection a worker
    /// used, so that the KILL fault kills exactly the pool's own sessions.
    pub track_ids: bool,
    pub conn_ids: Mutex<HashMap<u64, u64>>,
    /// Errors of the workload over the whole phase, by kind (what failed and
    /// how: `get(): database unreachable`, `write: i/o ConnectionReset`, ...).
    pub errors_by_kind: Mutex<BTreeMap<String, u64>>,
    /// The process's vitals, once per second, while set (the soak, after
    /// its warm-up).
    pub sampling: AtomicBool,
    pub samples: Mutex<Vec<crate::vitals::Vitals>>,
    /// The workload's timeline, per 100 ms (with `--html`).
    pub timeline: Option<Sampler>,
}

impl Shared {
    pub fn new(pool: Pool, table: String, spec: PhaseSpec, events: Arc<Sink>) -> Arc<Shared> {
        let t0 = events.t0;
        let baseline = Arc::new(Window::new(
            spec.first_index,
            Kind::Baseline,
            &spec.baseline_label,
            t0.elapsed().as_nanos() as u64,
            pool.stats(),
            spec.bounds,
        ));
        Arc::new(Shared {
            t0,
            table,
            first_index: spec.first_index,
            bounds: spec.bounds,
            split_reads: spec.split_reads,
            reads_paused: AtomicBool::new(false),
            windows: Mutex::new(vec![baseline.clone()]),
            current: Mutex::new(baseline),
            phase: Mutex::new("baseline".into()),
            stop: AtomicBool::new(false),
            sec_ops: AtomicU64::new(0),
            sec_errors: AtomicU64::new(0),
            sec_wait_us: AtomicU64::new(0),
            events,
            track_ids: spec.track_ids,
            conn_ids: Mutex::new(HashMap::new()),
            errors_by_kind: Mutex::new(BTreeMap::new()),
            sampling: AtomicBool::new(false),
            samples: Mutex::new(Vec::new()),
            timeline: spec
                .timeline
                .then(|| Sampler::new(t0.elapsed().as_nanos() as u64)),
            pool,
        })
    }

    pub fn now_ns(&self) -> u64 {
        self.t0.elapsed().as_nanos() as u64
    }

    pub fn elapsed(&self) -> Duration {
        self.t0.elapsed()
    }

    pub fn current(&self) -> Arc<Window> {
        lock(&self.current).clone()
    }

    pub fn windows(&self) -> Vec<Arc<Window>> {
        lock(&self.windows).clone()
    }

    /// Starts the window of a fault that is injected now.
    pub fn begin(&self, kind: Kind, label: &str) -> Arc<Window> {
        let mut ws = lock(&self.windows);
        let now = self.now_ns();
        if let Some(prev) = ws.last() {
            prev.end_ns.store(now, SeqCst);
            *lock(&prev.stats_at_end) = Some(self.pool.stats());
        }
        let w = Arc::new(Window::new(
            self.first_index + ws.len(),
            kind,
            label,
            now,
            self.pool.stats(),
            self.bounds,
        ));
        ws.push(w.clone());
        *lock(&self.current) = w.clone();
        w
    }

    /// Closes the last window (the workload has stopped).
    pub fn finish(&self) {
        let ws = lock(&self.windows);
        if let Some(last) = ws.last() {
            if last.end_ns.load(SeqCst) == NEVER {
                last.end_ns.store(self.now_ns(), SeqCst);
                *lock(&last.stats_at_end) = Some(self.pool.stats());
            }
        }
    }

    /// Marks the fault of `w` as over: recovery is measured from now.
    pub fn end_fault(&self, w: &Window) {
        w.fault_end_ns.store(self.now_ns(), SeqCst);
    }

    pub fn set_phase(&self, p: &str) {
        *lock(&self.phase) = p.to_string();
    }

    /// A line for the output, stamped with the drill's clock.
    pub fn event(&self, s: impl AsRef<str>) {
        self.events.push(s);
    }

    /// Prints a line now (main thread), after any queued event lines.
    pub fn say(&self, s: impl AsRef<str>) {
        self.events.say(s);
    }

    pub fn flush_events(&self) {
        self.events.flush();
    }

    fn record_wait(&self, w: &Window, d: Duration) {
        let us = d.as_micros() as u64;
        if let Some(t) = &self.timeline {
            t.wait(self.now_ns(), us);
        }
        w.longest_wait_us.fetch_max(us, SeqCst);
        self.sec_wait_us.fetch_max(us, SeqCst);
    }

    fn record_error(&self, w: &Window, what: String, class: String, read: bool) {
        *lock(&self.errors_by_kind).entry(class).or_default() += 1;
        let now = self.now_ns();
        if let Some(t) = &self.timeline {
            t.error(now);
        }
        w.errors.fetch_add(1, SeqCst);
        if read {
            w.read_errors.fetch_add(1, SeqCst);
        }
        self.sec_errors.fetch_add(1, SeqCst);
        if w.kind == Kind::Baseline {
            let mut first = lock(&w.first_error);
            if first.is_none() {
                *first = Some(what.clone());
                self.event(format!("workload: error without a fault: {what}"));
            }
            return;
        }
        if w.first_error_ns.fetch_min(now, SeqCst) == NEVER {
            *lock(&w.first_error) = Some(what.clone());
            let after = Duration::from_nanos(now.saturating_sub(w.start_ns));
            self.event(format!(
                "workload: first error, {} after the fault began: {what}",
                fmt_d(after)
            ));
        }
    }

    /// A successful operation begun at `began` (drill clock).
    fn record_ok(&self, w: &Window, began: u64, read: bool) {
        w.ops.fetch_add(1, SeqCst);
        if read {
            w.reads.fetch_add(1, SeqCst);
        }
        if let Some(t) = &self.timeline {
            t.op(self.now_ns());
        }
        self.sec_ops.fetch_add(1, SeqCst);
        if let Some(end) = w.fault_end() {
            let now = self.now_ns();
            if now >= end
                && w.kind.has_recovery()
                && w.kind.recovered_by(read)
                && (!w.kind.gated() || began >= end)
                && w.first_ok_after_end_ns
                    .compare_exchange(NEVER, now, SeqCst, SeqCst)
                    .is_ok()
            {
                let after = fmt_d(Duration::from_nanos(now - end));
                self.event(match w.kind {
                    Kind::IdleReplicas => {
                        format!("workload: first successful read {after} after the reads resumed")
                    }
                    Kind::PrimaryPromotion => format!(
                        "workload: first successful write {} after the freeze ({after} after the promotion)",
                        fmt_d(Duration::from_nanos(now.saturating_sub(w.start_ns)))
                    ),
                    _ => format!("workload: first successful operation {after} after the fault ended"),
                });
            }
        }
    }
}

impl Window {
    pub(crate) fn new(
        index: usize,
        kind: Kind,
        label: &str,
        start_ns: u64,
        stats_at_start: Stats,
        bounds: Bounds,
    ) -> Window {
        Window {
            index,
            kind,
            label: label.to_string(),
            bounds,
            start_ns,
            fault_end_ns: AtomicU64::new(NEVER),
            end_ns: AtomicU64::new(NEVER),
            first_error_ns: AtomicU64::new(NEVER),
            first_error: Mutex::new(None),
            first_ok_after_end_ns: AtomicU64::new(NEVER),
            longest_wait_us: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            read_errors: AtomicU64::new(0),
            ops: AtomicU64::new(0),
            reads: AtomicU64::new(0),
            crossed: AtomicU64::new(0),
            detected_ns: AtomicU64::new(NEVER),
            writer_changed_ns: AtomicU64::new(NEVER),
            notes: Mutex::new(Vec::new()),
            failure: Mutex::new(None),
            race: Mutex::new(None),
            interrupted: AtomicBool::new(false),
            stats_at_start,
            stats_at_end: Mutex::new(None),
        }
    }
}

/// A write the pool acknowledged: its id and the window it was made in.
pub type Acked = (u64, usize);

/// The writes one worker had acknowledged, kept compactly while the
/// workload runs (one bit per sequence number, and the window at each change)
/// so that the soak's resident-memory figure is the pool's, not this record's
/// (a `Vec<Acked>` grows 16 bytes per write, tens of MiB over 10 minutes).
#[derive(Default)]
pub struct AckLog {
    worker: u32,
    bits: Vec<u64>,
    /// (first sequence number, window index), in order.
    windows: Vec<(u64, usize)>,
}

impl AckLog {
    pub fn new(worker: u32) -> AckLog {
        AckLog {
            worker,
            ..AckLog::default()
        }
    }
    /// Records the write of sequence number `seq`, acknowledged in `window`
    /// (windows and sequence numbers only grow).
    pub fn push(&mut self, seq: u64, window: usize) {
        if self.windows.last().map(|w| w.1) != Some(window) {
            self.windows.push((seq, window));
        }
        let i = (seq / 64) as usize;
        if self.bits.len() <= i {
            self.bits.resize(i + 1, 0);
        }
        self.bits[i] |= 1 << (seq % 64);
    }
    /// Every write recorded, as (id, window).
    pub fn into_acked(self) -> Vec<Acked> {
        let mut out = Vec::new();
        let mut w = 0;
        for (i, word) in self.bits.iter().enumerate() {
            let mut word = *word;
            while word != 0 {
                let seq = i as u64 * 64 + u64::from(word.trailing_zeros());
                word &= word - 1;
                while w + 1 < self.windows.len() && self.windows[w + 1].0 <= seq {
                    w += 1;
                }
                out.push((tag(self.worker, seq), self.windows[w].1));
            }
        }
        out
    }
}

/// Ids and tags: worker number in the high bits, a sequence below.
pub fn tag(worker: u32, seq: u64) -> u64 {
    (u64::from(worker) + 1) << 40 | seq
}

/// One worker thread: alternates reads and writes until told to stop (only
/// writes while reads are paused). Reads go through `get_read()` when the
/// phase splits them. Returns the writes the pool acknowledged.
pub fn worker(sh: Arc<Shared>, worker_no: u32) -> AckLog {
    let mut acked = AckLog::new(worker_no);
    let insert = format!(
        "INSERT INTO {} (id, worker, seq) VALUES (?, ?, ?)",
        sh.table
    );
    let mut seq = 0u64;
    while !sh.stop.load(SeqCst) {
        seq += 1;
        let read = seq % 2 == 0 && !sh.reads_paused.load(SeqCst);
        let began = sh.now_ns();
        let t = Instant::now();
        let got = if read && sh.split_reads {
            sh.pool.get_read()
        } else {
            sh.pool.get()
        };
        let waited = t.elapsed();
        let w = sh.current();
        sh.record_wait(&w, waited);
        let mut conn = match got {
            Ok(c) => c,
            Err(e) => {
                let what = if sh.split_reads {
                    format!("{}: {e}", if read { "get_read()" } else { "get()" })
                } else {
                    e.to_string()
                };
                let class = format!("get(): {}", e.kind().as_str());
                sh.record_error(&w, what, class, read);
                thread::sleep(Duration::from_millis(20));
                continue;
            }
        };
        if sh.track_ids {
            let id = conn.id();
            // Not held across the query.
            let known = lock(&sh.conn_ids).contains_key(&id);
            if !known {
                if let Ok(Some(tid)) = conn.query_first::<u64, _>("SELECT CONNECTION_ID()") {
                    lock(&sh.conn_ids).insert(id, tid);
                }
            }
        }
        let tag = tag(worker_no, seq);
        let result = if read {
            match conn.exec_first::<u64, _, _>("SELECT ?", (tag,)) {
                Ok(answer) => {
                    if answer != Some(tag) {
                        let w = sh.current();
                        w.crossed.fetch_add(1, SeqCst);
                        sh.event(format!(
                            "workload: CROSSED ANSWER: asked for {tag}, got {answer:?}"
                        ));
                    }
                    Ok(false)
                }
                Err(e) => Err((format!("read: {e}"), format!("read: {}", error_class(&e)))),
            }
        } else {
            let r = conn
                .query_drop("BEGIN")
                .and_then(|()| conn.exec_drop(&insert, (tag, worker_no, seq)))
                .and_then(|()| conn.query_drop("COMMIT"));
            match r {
                Ok(()) => Ok(true),
                Err(e) => Err((format!("write: {e}"), format!("write: {}", error_class(&e)))),
            }
        };
        // Back to the pool before the bookkeeping.
        drop(conn);
        let w = sh.current();
        match result {
            Ok(wrote) => {
                if wrote {
                    acked.push(seq, w.index);
                }
                sh.record_ok(&w, began, read);
            }
            Err((e, class)) => {
                sh.record_error(&w, e, class, read);
                thread::sleep(Duration::from_millis(10));
            }
        }
    }
    acked
}

/// A short class of a query error, for counting errors by kind.
fn error_class(e: &staunch::Error) -> String {
    match e.server_code() {
        Some(code) => format!("server error {code}"),
        None => e.kind().as_str().to_string(),
    }
}

/// Prints queued event lines as they come and, unless quiet, one status line
/// per second. Stops when `sh.stop` is set.
pub fn reporter(sh: Arc<Shared>, quiet: bool, done: Arc<AtomicBool>) {
    let mut next = Instant::now() + Duration::from_secs(1);
    while !done.load(SeqCst) {
        sh.flush_events();
        if let Some(t) = &sh.timeline {
            t.drain(sh.now_ns(), false);
        }
        if Instant::now() >= next {
            next += Duration::from_secs(1);
            if sh.sampling.load(SeqCst) {
                let v = crate::vitals::Vitals::sample(sh.elapsed(), &sh.pool);
                lock(&sh.samples).push(v);
            }
            let ops = sh.sec_ops.swap(0, SeqCst);
            let errors = sh.sec_errors.swap(0, SeqCst);
            let wait = Duration::from_micros(sh.sec_wait_us.swap(0, SeqCst));
            if !quiet {
                let st = sh.pool.stats();
                let phase = lock(&sh.phase).clone();
                let writer = if sh.split_reads {
                    format!(
                        "  writer {}",
                        sh.pool.writer().unwrap_or_else(|| "none".into())
                    )
                } else {
                    String::new()
                };
                println!(
                    "[{}] {:<16} {:>6} ops/s  {:>4} errors  longest get() {:>7}  pool {} total, {} active, {} idle, {} waiting{writer}",
                    stamp(sh.elapsed()),
                    phase,
                    ops,
                    errors,
                    fmt_d(wait),
                    st.total,
                    st.active,
                    st.idle,
                    st.waiting
                );
            }
        }
        thread::sleep(Duration::from_millis(50));
    }
    sh.flush_events();
    if let Some(t) = &sh.timeline {
        t.drain(sh.now_ns(), true);
    }
}

/// `  12.3s`: the drill's clock.
pub fn stamp(d: Duration) -> String {
    format!("{:>6.1}s", d.as_secs_f64())
}

/// A duration for people: `0.31ms`, `12ms`, `1.52s`.
pub fn fmt_d(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1e3;
    if ms < 1.0 {
        format!("{ms:.2}ms")
    } else if ms < 100.0 {
        format!("{ms:.1}ms")
    } else if ms < 1000.0 {
        format!("{ms:.0}ms")
    } else {
        format!("{:.2}s", ms / 1e3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ack_log_gives_back_every_write_with_its_window() {
        let mut log = AckLog::new(3);
        let writes = [
            (1, 0),
            (3, 0),
            (63, 1),
            (64, 1),
            (65, 2),
            (200, 2),
            (1001, 5),
        ];
        for (seq, w) in writes {
            log.push(seq, w);
        }
        let want: Vec<Acked> = writes.iter().map(|&(s, w)| (tag(3, s), w)).collect();
        assert_eq!(log.into_acked(), want);
        assert!(AckLog::new(0).into_acked().is_empty());
    }

    #[test]
    fn wait_histogram_buckets_bound_their_values() {
        let mut last = 0;
        for us in (0u64..70_000).chain([1 << 20, 2_000_000, 16_000_000]) {
            let i = hist_index(us);
            assert!(i >= last, "{us}: bucket {i} after {last}");
            last = i;
            // The bucket's bound is the value or at most 25 % (and 1 µs) above.
            let up = hist_upper(i);
            assert!(
                up >= us.max(1) && up as f64 <= us.max(1) as f64 * 1.25 + 1.0,
                "{us}: {up}"
            );
            assert_eq!(hist_index(up), i, "{us}");
        }
        assert_eq!(hist_index(u64::MAX), HIST - 1);
    }

    #[test]
    fn sampler_counts_per_bucket_and_takes_percentiles() {
        let ms = |m: u64| m * 1_000_000;
        let s = Sampler::new(ms(1000));
        // Bucket 10 (1.0-1.1 s): 100 waits, 98 of 100 µs, 2 of 50 ms; 7 ops.
        for i in 0..100 {
            s.wait(ms(1010), if i < 98 { 100 } else { 50_000 });
        }
        for _ in 0..7 {
            s.op(ms(1050));
        }
        // Bucket 12: 3 errors; bucket 11: nothing.
        for _ in 0..3 {
            s.error(ms(1299));
        }
        // At 1.25 s only bucket 10 is closed and past the next one's close.
        s.drain(ms(1250), false);
        assert_eq!(s.take().len(), 1);
        let s = Sampler::new(ms(1000));
        for i in 0..100 {
            s.wait(ms(1010), if i < 98 { 100 } else { 50_000 });
        }
        s.op(ms(1050));
        s.error(ms(1299));
        s.drain(ms(1300), true);
        let got = s.take();
        assert_eq!(
            got.iter().map(|x| x.bucket).collect::<Vec<_>>(),
            [10, 11, 12, 13]
        );
        assert_eq!((got[0].ops, got[0].errors, got[0].waits), (1, 0, 100));
        assert!((100..=125).contains(&got[0].p50_us), "{:?}", got[0]);
        assert!((50_000..=62_500).contains(&got[0].p99_us), "{:?}", got[0]);
        assert_eq!(
            got[1],
            Sample {
                bucket: 11,
                ..Sample::default()
            }
        );
        assert_eq!((got[2].errors, got[2].waits, got[2].p99_us), (1, 0, 0));
        assert_eq!(got[0].start(), Duration::from_millis(1000));
    }

    #[test]
    fn samples_after_the_fact_fill_the_gaps() {
        let ms = |m: u64| m * 1_000_000;
        let got = samples_of([
            (ms(1020), true, 300),
            (ms(1090), false, 2_000_000),
            (ms(1350), true, 40),
        ]);
        assert_eq!(
            got.iter().map(|x| x.bucket).collect::<Vec<_>>(),
            [10, 11, 12, 13]
        );
        assert_eq!((got[0].ops, got[0].errors, got[0].waits), (1, 1, 2));
        assert!(
            (2_000_000..=2_500_000).contains(&got[0].p99_us),
            "{:?}",
            got[0]
        );
        assert!((300..=375).contains(&got[0].p50_us), "{:?}", got[0]);
        assert_eq!(
            got[1],
            Sample {
                bucket: 11,
                ..Sample::default()
            }
        );
        assert_eq!((got[3].ops, got[3].p50_us), (1, 47));
        assert!(samples_of([]).is_empty());
    }
}
