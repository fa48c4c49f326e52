//! The chaos soak (`staunch drill --soak`): its seeded fault schedule, the
//! run-wide invariants it checks at the end, and their part of the report.
//!
//! The invariants, each a figure in the report and each failing the drill:
//! - no `get()` waited longer than connection_timeout + `WAIT_SLACK`;
//! - every acknowledged write is read back, row by row (in `report`);
//! - no query received another query's answer (in `report`);
//! - after the last fault, `FINAL_SETTLE` of normal load and the workload's
//!   end, within `END_CHECK_BOUND`: the pool holds at most max_size
//!   connections, between min_idle and max_size of them idle, none borrowed,
//!   no connect in flight or queued, no caller waiting; its threads (adders,
//!   housekeeper, watchdog) are back to their number after the warm-up (an
//!   extra adder exits after 10 s without work); the other threads and the
//!   open fds are back too, allowing for what each connection the pool holds
//!   beyond its warm-up count costs the drill's set-up;
//! - resident memory does not grow by more than `rss_allowance` (which
//!   allows each connection the driver's read buffer, `READ_BUFFER_KIB`), each sample
//!   taken after `malloc_trim(0)` (`vitals::release_free_memory`), so that it
//!   counts what the process holds, not the free pages glibc keeps after frees
//!   (which grew with the workload's rate, 17–27 MiB a minute at 580k writes).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use staunch::{Pool, Stats};

use crate::json::js;
use crate::vitals::Vitals;
use crate::workload::{fmt_d, Kind, ProxyFault};

/// Slack over connection_timeout for the longest `get()` wait: a get that
/// times out returns at its deadline; this covers waking the thread and the
/// workload's own bookkeeping on a loaded 2-core machine.
pub const WAIT_SLACK: Duration = Duration::from_millis(250);
/// Normal load after the last fault, before the workload stops.
pub const FINAL_SETTLE: Duration = Duration::from_secs(5);
/// How long, after the workload stopped, connections and threads get to go
/// back within their bounds: an extra adder exits after 10 s without work
/// (`EXTRA_ADDER_IDLE`), plus time for the housekeeper to refill min_idle.
pub const END_CHECK_BOUND: Duration = Duration::from_secs(20);
/// What one connection of the pool costs the process in this set-up: its
/// own socket, and in the chaos proxy (in the same process) three handles on
/// each side of the proxied pair.
pub const FDS_PER_CONNECTION: usize = 7;
/// ... and two proxy threads (one per direction).
pub const THREADS_PER_CONNECTION: usize = 2;
/// Transient descriptors (a /proc read, a server's log being reopened).
pub const FD_SLACK: usize = 4;
/// Resident memory may grow by the larger of these over the run. A
/// steady-state pool holds a bounded set of connections and threads, so its
/// memory should not grow; what may is allocator retention (freed memory
/// malloc keeps; bounded by capping its arenas, `vitals::cap_malloc_arenas`),
/// the drill's own small records (acked writes as a bitmap, one sample a
/// second, one window per fault) and a larger peak of connections at the
/// end. A leak of even 1 KiB per operation (~3,500 a second) exceeds 20 MiB
/// within ten seconds.
pub const RSS_GROWTH_MIN_KIB: u64 = 20 * 1024;
pub const RSS_GROWTH_PERCENT: u64 = 50;
/// ... plus, for each connection the pool holds at the end, the driver's
/// read buffer: the `mysql` crate gives every connection a 4 MiB receive
/// buffer (mysql_common's `MySyncFramed`, `DEFAULT_MAX_ALLOWED_PACKET`) that
/// each read fills a little further on before it wraps to the start, so its
/// pages become resident one by one: after about 70,000 `SELECT 1`s a
/// connection holds all 4 MiB, and then no more (measured on one bare
/// `mysql::Conn`: 4.5 MiB -> 8.6 MiB, flat from 75,000 to 200,000). Bounded
/// per connection, so not a leak; a 60 s soak's connections each pass
/// 150,000 statements, and without this the bound failed at +20.1 MiB.
pub const READ_BUFFER_KIB: u64 = 4 * 1024;

/// Longest acceptable RSS growth (KiB) over a start of `start_kib`, with
/// `connections` in the pool at the end.
pub fn rss_allowance(start_kib: u64, connections: usize) -> u64 {
    RSS_GROWTH_MIN_KIB.max(start_kib * RSS_GROWTH_PERCENT / 100)
        + READ_BUFFER_KIB * connections as u64
}

/// A small xorshift generator for the soak's schedule (not for secrets).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        // splitmix64 of the seed, so that small seeds differ at once.
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Rng((z ^ (z >> 31)) | 1)
    }
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// A duration in [lo, hi] ms, in 100 ms steps.
    pub fn millis(&mut self, lo: u64, hi: u64) -> Duration {
        self.stepped(lo, hi, 100)
    }
    /// A duration in [lo, hi] ms, in `step` ms steps.
    pub fn stepped(&mut self, lo: u64, hi: u64, step: u64) -> Duration {
        Duration::from_millis(lo + self.below((hi - lo) / step + 1) * step)
    }
}

/// One fault of the schedule: held this long, then this much normal load.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Planned {
    pub kind: Kind,
    pub hold: Duration,
    pub gap: Duration,
}

/// The chaos proxy's modes the soak draws from (with their magnitudes drawn
/// too).
pub const PROXY_KINDS: usize = 4;

/// The schedule for `duration` with `seed`: faults drawn from `faults` plus,
/// with a proxy, its modes (latency 50-300 ms per chunk, drip 1-15 ms per
/// byte, accept-and-RST, black hole), each held 0.5-4 s (a killed server
/// stays down 0.3-2.5 s, the race runs 1-3 s) and followed by 2-5 s of normal
/// load. Planned until the holds and gaps alone fill `duration`: the run
/// takes at least that long, so it never runs out.
pub fn plan(faults: &[Kind], proxy: bool, duration: Duration, seed: u64) -> Vec<Planned> {
    let mut rng = Rng::new(seed);
    let choices = faults.len() as u64 + if proxy { PROXY_KINDS as u64 } else { 0 };
    let mut out = Vec::new();
    let mut planned = Duration::ZERO;
    while planned < duration && choices > 0 {
        let i = rng.below(choices) as usize;
        let kind = match faults.get(i) {
            Some(k) => *k,
            None => Kind::Proxy(match i - faults.len() {
                0 => ProxyFault::Latency(rng.stepped(50, 300, 10)),
                1 => ProxyFault::Drip(rng.stepped(1, 15, 1)),
                2 => ProxyFault::Reset,
                _ => ProxyFault::BlackHole,
            }),
        };
        let hold = match kind {
            Kind::KillRestart => rng.millis(300, 2500),
            // The statements' bound, so the freeze outlasts their check.
            Kind::FreezeLongStatements => Duration::ZERO,
            Kind::KeepaliveRace => rng.millis(1000, 3000),
            _ => rng.millis(500, 4000),
        };
        let gap = rng.millis(2000, 5000);
        planned += hold + gap;
        out.push(Planned { kind, hold, gap });
    }
    out
}

/// Where the pool, its threads and the process stood once the workload had
/// stopped.
#[derive(Clone, Debug)]
pub struct EndState {
    /// From the workload's end until everything was within bounds (or the
    /// bound ran out).
    pub waited: Duration,
    pub stats: Stats,
    pub vitals: Vitals,
    /// What was still out of bounds when `END_CHECK_BOUND` ran out.
    pub problems: Vec<String>,
    /// What was out of bounds when the workload had just stopped.
    pub at_first: Vec<String>,
}

/// What is out of bounds in `st` and `v`, compared with the warm-up `start`.
pub fn end_problems(
    st: &Stats,
    v: &Vitals,
    start: &Vitals,
    max_size: usize,
    min_idle: usize,
) -> Vec<String> {
    let mut p = Vec::new();
    if st.total > max_size {
        p.push(format!("{} connections, max_size {max_size}", st.total));
    }
    if st.idle < min_idle || st.idle > max_size {
        p.push(format!(
            "{} idle connections, outside [min_idle {min_idle}, max_size {max_size}]",
            st.idle
        ));
    }
    if st.active > 0 {
        p.push(format!(
            "{} connections still borrowed with no borrower left",
            st.active
        ));
    }
    if st.connecting > 0 || st.pending_creates > 0 {
        p.push(format!(
            "connects in flight {}, requests queued {}",
            st.connecting, st.pending_creates
        ));
    }
    if st.waiting > 0 {
        p.push(format!("{} callers still waiting in get()", st.waiting));
    }
    if v.threads.pool > start.threads.pool {
        p.push(format!(
            "{} pool threads, {} after the warm-up",
            v.threads.pool, start.threads.pool
        ));
    }
    let more_conns = v.pool_total.saturating_sub(start.pool_total);
    let thread_bound = start.threads.not_drill() + THREADS_PER_CONNECTION * more_conns;
    if v.threads.not_drill() > thread_bound {
        p.push(format!(
            "{} threads besides the drill's, bound {thread_bound}",
            v.threads.not_drill()
        ));
    }
    let fd_bound = fd_bound(start, v);
    if v.fds > fd_bound {
        p.push(format!("{} open fds, bound {fd_bound}", v.fds));
    }
    p
}

/// Most fds acceptable at `end`: those after the warm-up, plus what each
/// connection the pool holds beyond its warm-up count costs, plus a slack.
pub fn fd_bound(start: &Vitals, end: &Vitals) -> usize {
    start.fds + FDS_PER_CONNECTION * end.pool_total.saturating_sub(start.pool_total) + FD_SLACK
}

/// Polls the pool and the process until everything is within bounds, at
/// most `END_CHECK_BOUND`.
pub fn await_end(pool: &Pool, start: &Vitals, t0: Instant) -> EndState {
    let cfg = pool.config();
    let (max_size, min_idle) = (cfg.max_size(), cfg.min_idle());
    let began = Instant::now();
    let mut at_first = None;
    loop {
        let stats = pool.stats();
        crate::vitals::release_free_memory();
        let vitals = Vitals::sample(t0.elapsed(), pool);
        let problems = end_problems(&stats, &vitals, start, max_size, min_idle);
        let at_first = at_first.get_or_insert_with(|| problems.clone());
        if problems.is_empty()
            || began.elapsed() >= END_CHECK_BOUND
            || crate::signals::interrupted()
        {
            return EndState {
                waited: began.elapsed(),
                stats,
                vitals,
                problems,
                at_first: std::mem::take(at_first),
            };
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Everything the soak measured, for the report.
pub struct SoakFigures {
    pub seed: u64,
    pub schedule: Vec<Planned>,
    pub faults_run: usize,
    pub ops: u64,
    pub reads: u64,
    pub faults_by_kind: BTreeMap<&'static str, u64>,
    pub errors_by_kind: BTreeMap<String, u64>,
    pub longest_wait: Duration,
    pub connection_timeout: Duration,
    pub max_size: usize,
    pub min_idle: usize,
    /// After the warm-up.
    pub start: Vitals,
    /// Writes acknowledged over the whole phase.
    pub acked: u64,
    pub samples: Vec<Vitals>,
    pub end: EndState,
}

/// One invariant: its name, the measured figure, the bound, whether it held.
pub struct Invariant {
    pub key: &'static str,
    pub name: &'static str,
    pub figure: String,
    pub bound: String,
    pub ok: bool,
}

impl SoakFigures {
    pub fn wait_bound(&self) -> Duration {
        self.connection_timeout + WAIT_SLACK
    }

    fn all_samples(&self) -> impl Iterator<Item = &Vitals> {
        std::iter::once(&self.start)
            .chain(&self.samples)
            .chain(std::iter::once(&self.end.vitals))
    }
    pub fn peak_rss_kib(&self) -> u64 {
        self.all_samples().map(|v| v.rss_kib).max().unwrap_or(0)
    }
    pub fn peak_fds(&self) -> usize {
        self.all_samples().map(|v| v.fds).max().unwrap_or(0)
    }
    pub fn peak_threads(&self) -> usize {
        self.all_samples()
            .map(|v| v.threads.total)
            .max()
            .unwrap_or(0)
    }
    /// RSS growth from the warm-up to the end (KiB; may be negative).
    pub fn rss_growth_kib(&self) -> i64 {
        self.end.vitals.rss_kib as i64 - self.start.rss_kib as i64
    }

    /// The growth of resident memory this run may have: `rss_allowance` at
    /// its start's memory and its end's connections.
    pub fn rss_allowed_kib(&self) -> u64 {
        rss_allowance(self.start.rss_kib, self.end.vitals.pool_total)
    }

    /// The invariants of `soak.rs`'s header. `writes` is (acknowledged,
    /// found) when they were read back; `crossed` the crossed answers.
    pub fn invariants(&self, writes: Option<(u64, u64)>, crossed: u64) -> Vec<Invariant> {
        let st = &self.end.stats;
        let (s, e) = (&self.start, &self.end.vitals);
        let mut v = vec![Invariant {
            key: "longest_get_wait",
            name: "longest get() wait",
            figure: fmt_d(self.longest_wait),
            bound: format!(
                "connection_timeout {} + {}",
                fmt_d(self.connection_timeout),
                fmt_d(WAIT_SLACK)
            ),
            ok: self.longest_wait <= self.wait_bound(),
        }];
        v.push(match writes {
            Some((acked, found)) => Invariant {
                key: "acknowledged_writes",
                name: "acknowledged writes read back",
                figure: format!("{acked} acked, {found} found, {} missing", acked - found),
                bound: "0 missing".into(),
                ok: acked == found,
            },
            None => Invariant {
                key: "acknowledged_writes",
                name: "acknowledged writes read back",
                figure: "not verified".into(),
                bound: "0 missing".into(),
                ok: false,
            },
        });
        v.push(Invariant {
            key: "crossed_answers",
            name: "crossed answers",
            figure: crossed.to_string(),
            bound: "0".into(),
            ok: crossed == 0,
        });
        v.push(Invariant {
            key: "connections_at_end",
            name: "connections at the end",
            figure: format!(
                "{} total, {} idle, {} borrowed, {} connecting, {} queued, {} waiting",
                st.total, st.idle, st.active, st.connecting, st.pending_creates, st.waiting
            ),
            bound: format!(
                "total <= {}, idle in [{}, {}], 0 borrowed/connecting/queued/waiting",
                self.max_size, self.min_idle, self.max_size
            ),
            ok: st.total <= self.max_size
                && (self.min_idle..=self.max_size).contains(&st.idle)
                && st.active == 0
                && st.connecting == 0
                && st.pending_creates == 0
                && st.waiting == 0,
        });
        let more_conns = e.pool_total.saturating_sub(s.pool_total);
        let thread_bound = s.threads.not_drill() + THREADS_PER_CONNECTION * more_conns;
        v.push(Invariant {
            key: "threads_at_end",
            name: "threads at the end",
            figure: format!(
                "pool {} (after warm-up {}), besides the drill's {} (after warm-up {}), process {}",
                e.threads.pool,
                s.threads.pool,
                e.threads.not_drill(),
                s.threads.not_drill(),
                e.threads.total
            ),
            bound: format!(
                "pool <= {}, besides the drill's <= {thread_bound} ({} per connection beyond the warm-up's {})",
                s.threads.pool, THREADS_PER_CONNECTION, s.pool_total
            ),
            ok: e.threads.pool <= s.threads.pool && e.threads.not_drill() <= thread_bound,
        });
        v.push(Invariant {
            key: "settled_within",
            name: "back within bounds after the workload",
            figure: if self.end.problems.is_empty() {
                format!("in {}", fmt_d(self.end.waited))
            } else {
                format!(
                    "not after {}: {}",
                    fmt_d(self.end.waited),
                    self.end.problems.join("; ")
                )
            },
            bound: fmt_d(END_CHECK_BOUND),
            ok: self.end.problems.is_empty(),
        });
        let fd_bound = fd_bound(s, e);
        v.push(Invariant {
            key: "open_fds",
            name: "open fds",
            figure: format!("start {}, end {}, peak {}", s.fds, e.fds, self.peak_fds()),
            bound: format!(
                "end <= {fd_bound} (start + {FDS_PER_CONNECTION} per connection beyond the warm-up's {} + {FD_SLACK})",
                s.pool_total
            ),
            ok: e.fds <= fd_bound,
        });
        let growth = self.rss_growth_kib();
        let allowed = self.rss_allowed_kib();
        v.push(Invariant {
            key: "resident_memory",
            name: "resident memory",
            figure: format!(
                "start {}, end {}, peak {}; growth {} (malloc'd in use: start {}, end {}, with {} and {} connections)",
                mib(s.rss_kib),
                mib(e.rss_kib),
                mib(self.peak_rss_kib()),
                mib_signed(growth),
                mib(s.heap_kib),
                mib(e.heap_kib),
                s.pool_total,
                e.pool_total
            ),
            bound: format!(
                "growth <= {} (max of {} and {} % of the start, + {} read buffer for each of {} connections)",
                mib(allowed),
                mib(RSS_GROWTH_MIN_KIB),
                RSS_GROWTH_PERCENT,
                mib(READ_BUFFER_KIB),
                e.pool_total
            ),
            ok: s.rss_kib > 0 && growth <= allowed as i64,
        });
        v
    }

    /// About ten samples spread over the run, for the trend.
    fn trend(&self) -> Vec<&Vitals> {
        let all: Vec<&Vitals> = self.all_samples().collect();
        let step = (all.len() / 10).max(1);
        let mut t: Vec<&Vitals> = all.iter().step_by(step).copied().collect();
        if let Some(last) = all.last() {
            if t.last().map(|v| v.at) != Some(last.at) {
                t.push(last);
            }
        }
        t
    }

    pub fn print(&self, invariants: &[Invariant]) {
        println!(
            "soak: seed {}, {} faults run of {} planned, {} operations ({} reads, {} acked writes)",
            self.seed,
            self.faults_run,
            self.schedule.len(),
            self.ops,
            self.reads,
            self.acked
        );
        let faults: Vec<String> = self
            .faults_by_kind
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        println!("    faults by kind: {}", faults.join(", "));
        let errors: Vec<String> = self
            .errors_by_kind
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        println!(
            "    errors by kind: {}",
            if errors.is_empty() {
                "none".to_string()
            } else {
                errors.join(", ")
            }
        );
        println!("    trend (time: rss, malloc'd in use, fds, threads, pool connections):");
        let trend: Vec<String> = self
            .trend()
            .iter()
            .map(|v| {
                format!(
                    "{:.0}s: {}, {}, {}, {}, {}",
                    v.at.as_secs_f64(),
                    mib(v.rss_kib),
                    mib(v.heap_kib),
                    v.fds,
                    v.threads.total,
                    v.pool_total
                )
            })
            .collect();
        for chunk in trend.chunks(3) {
            println!("      {}", chunk.join(" | "));
        }
        println!("soak invariants:");
        for i in invariants {
            println!(
                "    {:<4} {}: {} (bound: {})",
                if i.ok { "ok" } else { "FAIL" },
                i.name,
                i.figure,
                i.bound
            );
        }
    }

    pub fn to_json(&self, invariants: &[Invariant]) -> String {
        let mut o = String::from("{");
        let _ = write!(
            o,
            "\"seed\": {}, \"faults_planned\": {}, \"faults_run\": {}, \"operations\": {}, \"reads\": {}, \"acked_writes\": {}",
            self.seed,
            self.schedule.len(),
            self.faults_run,
            self.ops,
            self.reads,
            self.acked
        );
        let map = |m: Vec<(String, u64)>| {
            m.iter()
                .map(|(k, n)| format!("{}: {n}", js(k)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let _ = write!(
            o,
            ", \"faults_by_kind\": {{{}}}",
            map(self
                .faults_by_kind
                .iter()
                .map(|(k, n)| (k.to_string(), *n))
                .collect())
        );
        let _ = write!(
            o,
            ", \"errors_by_kind\": {{{}}}",
            map(self
                .errors_by_kind
                .iter()
                .map(|(k, n)| (k.clone(), *n))
                .collect())
        );
        let _ = write!(
            o,
            ", \"longest_get_wait_ms\": {}, \"get_wait_bound_ms\": {}",
            self.longest_wait.as_millis(),
            self.wait_bound().as_millis()
        );
        let st = &self.end.stats;
        let _ = write!(
            o,
            ", \"end\": {{\"waited_ms\": {}, \"total\": {}, \"idle\": {}, \"borrowed\": {}, \"connecting\": {}, \"queued\": {}, \"waiting\": {}, \"adder_threads\": {}, \"max_size\": {}, \"min_idle\": {}}}",
            self.end.waited.as_millis(),
            st.total,
            st.idle,
            st.active,
            st.connecting,
            st.pending_creates,
            st.waiting,
            st.adder_threads,
            self.max_size,
            self.min_idle
        );
        let _ = write!(
            o,
            ", \"vitals\": {{\"start\": {}, \"end\": {}, \"peak_rss_kib\": {}, \"peak_fds\": {}, \"peak_threads\": {}, \"rss_growth_kib\": {}, \"rss_allowance_kib\": {}, \"fd_bound\": {}}}",
            vitals_json(&self.start),
            vitals_json(&self.end.vitals),
            self.peak_rss_kib(),
            self.peak_fds(),
            self.peak_threads(),
            self.rss_growth_kib(),
            self.rss_allowed_kib(),
            fd_bound(&self.start, &self.end.vitals)
        );
        let samples: Vec<String> = self.samples.iter().map(vitals_json).collect();
        let _ = write!(o, ", \"samples\": [{}]", samples.join(", "));
        let sched: Vec<String> = self
            .schedule
            .iter()
            .map(|p| {
                format!(
                    "{{\"kind\": {}, \"what\": {}, \"hold_ms\": {}, \"gap_ms\": {}}}",
                    js(p.kind.key()),
                    js(&describe(p.kind)),
                    p.hold.as_millis(),
                    p.gap.as_millis()
                )
            })
            .collect();
        let _ = write!(o, ", \"schedule\": [{}]", sched.join(", "));
        let inv: Vec<String> = invariants
            .iter()
            .map(|i| {
                format!(
                    "{{\"key\": {}, \"figure\": {}, \"bound\": {}, \"ok\": {}}}",
                    js(i.key),
                    js(&i.figure),
                    js(&i.bound),
                    i.ok
                )
            })
            .collect();
        let _ = write!(o, ", \"invariants\": [{}]}}", inv.join(", "));
        o
    }
}

fn vitals_json(v: &Vitals) -> String {
    format!(
        "{{\"at_ms\": {}, \"rss_kib\": {}, \"heap_in_use_kib\": {}, \"fds\": {}, \"threads\": {}, \"pool_threads\": {}, \"proxy_threads\": {}, \"drill_threads\": {}, \"pool_connections\": {}}}",
        v.at.as_millis(),
        v.rss_kib,
        v.heap_kib,
        v.fds,
        v.threads.total,
        v.threads.pool,
        v.threads.proxy,
        v.threads.drill,
        v.pool_total
    )
}

/// What a planned fault does, in a few words (for the printed schedule).
pub fn describe(kind: Kind) -> String {
    match kind {
        Kind::Proxy(ProxyFault::Latency(d)) => format!("VIP latency {} per chunk", fmt_d(d)),
        Kind::Proxy(ProxyFault::Drip(d)) => format!("VIP drip, {} per byte", fmt_d(d)),
        Kind::Proxy(ProxyFault::Reset) => "VIP accepts and resets".into(),
        Kind::Proxy(ProxyFault::BlackHole) => "VIP black hole, same server back".into(),
        Kind::KillConnections => "KILL every pooled connection".into(),
        Kind::VipBlackHole => "A: black hole, VIP moves".into(),
        Kind::Freeze => "freeze (SIGSTOP)".into(),
        Kind::FreezeLongStatements => "freeze during long statements".into(),
        Kind::KillRestart => "kill -9 and restart".into(),
        Kind::KeepaliveRace => "C: keepalive race".into(),
        other => other.key().into(),
    }
}

/// The schedule, one line per fault, as planned (the run ends at the soak's
/// duration, so the last ones may not run).
pub fn print_schedule(schedule: &[Planned]) {
    let mut at = Duration::ZERO;
    for (i, p) in schedule.iter().enumerate() {
        let held = match p.kind {
            // Instant: the hold is not used.
            Kind::KillConnections => String::new(),
            Kind::KillRestart => format!(", down {}", fmt_d(p.hold)),
            // Held until the long statements are cut off.
            Kind::FreezeLongStatements => String::new(),
            _ => format!(" for {}", fmt_d(p.hold)),
        };
        println!(
            "            #{:<3} +{:>5.1}s  {}{held}, then {} of load",
            i + 1,
            at.as_secs_f64(),
            describe(p.kind),
            fmt_d(p.gap)
        );
        at += p.hold + p.gap;
    }
}

fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

fn mib_signed(kib: i64) -> String {
    format!("{:+.1} MiB", kib as f64 / 1024.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SINGLE: [Kind; 5] = [
        Kind::KillConnections,
        Kind::VipBlackHole,
        Kind::Freeze,
        Kind::KillRestart,
        Kind::KeepaliveRace,
    ];

    #[test]
    fn rng_is_repeatable() {
        let a: Vec<u64> = {
            let mut r = Rng::new(7);
            (0..5).map(|_| r.below(100)).collect()
        };
        let mut r = Rng::new(7);
        let b: Vec<u64> = (0..5).map(|_| r.below(100)).collect();
        assert_eq!(a, b);
    }

    #[test]
    fn same_seed_same_schedule_other_seed_other_schedule() {
        let d = Duration::from_secs(600);
        let a = plan(&SINGLE, true, d, 7);
        assert_eq!(a, plan(&SINGLE, true, d, 7));
        assert_ne!(a, plan(&SINGLE, true, d, 8));
        let total: Duration = a.iter().map(|p| p.hold + p.gap).sum();
        assert!(total >= d);
    }

    #[test]
    fn schedule_draws_every_proxy_mode_within_its_ranges() {
        let s = plan(&SINGLE, true, Duration::from_secs(3600), 1);
        let mut seen = std::collections::HashSet::new();
        for p in &s {
            seen.insert(p.kind.key());
            match p.kind {
                Kind::Proxy(ProxyFault::Latency(d)) => {
                    assert!((50..=300).contains(&d.as_millis()), "{d:?}")
                }
                Kind::Proxy(ProxyFault::Drip(d)) => {
                    assert!((1..=15).contains(&d.as_millis()), "{d:?}")
                }
                _ => {}
            }
            assert!(p.hold >= Duration::from_millis(300) && p.hold <= Duration::from_secs(4));
            assert!(p.gap >= Duration::from_secs(2) && p.gap <= Duration::from_secs(5));
        }
        for k in [
            "proxy_latency",
            "proxy_drip",
            "proxy_reset",
            "proxy_black_hole",
            "kill_connections",
            "frozen_server",
            "server_killed_restarted",
            "incident_c_keepalive_race",
            "incident_a_vip_black_hole",
        ] {
            assert!(seen.contains(k), "{k} never drawn");
        }
        // Without a proxy, no proxy mode.
        let s = plan(&SINGLE, false, Duration::from_secs(600), 1);
        assert!(s.iter().all(|p| !matches!(p.kind, Kind::Proxy(_))));
    }

    fn figures() -> SoakFigures {
        let v = |rss_kib, fds, pool_total| Vitals {
            at: Duration::ZERO,
            rss_kib,
            heap_kib: 0,
            fds,
            threads: crate::vitals::Threads {
                total: 20,
                pool: 4,
                proxy: 9,
                drill: 5,
            },
            pool_total,
        };
        SoakFigures {
            seed: 1,
            schedule: Vec::new(),
            faults_run: 0,
            ops: 0,
            reads: 0,
            faults_by_kind: BTreeMap::new(),
            errors_by_kind: BTreeMap::new(),
            longest_wait: Duration::from_millis(2100),
            connection_timeout: Duration::from_secs(2),
            max_size: 8,
            min_idle: 2,
            start: v(30_000, 40, 4),
            acked: 0,
            samples: Vec::new(),
            end: EndState {
                waited: Duration::ZERO,
                stats: Stats::default(),
                vitals: v(30_000, 40, 4),
                problems: Vec::new(),
                at_first: Vec::new(),
            },
        }
    }

    fn failed(f: &SoakFigures) -> Vec<&'static str> {
        f.invariants(Some((10, 10)), 0)
            .into_iter()
            .filter(|i| !i.ok)
            .map(|i| i.key)
            .collect()
    }

    #[test]
    fn each_invariant_can_fail() {
        let mut f = figures();
        f.end.stats.total = 4;
        f.end.stats.idle = 4;
        assert!(failed(&f).is_empty(), "{:?}", failed(&f));
        assert_eq!(
            f.invariants(Some((10, 9)), 1)
                .iter()
                .filter(|i| !i.ok)
                .map(|i| i.key)
                .collect::<Vec<_>>(),
            ["acknowledged_writes", "crossed_answers"]
        );
        f.longest_wait = Duration::from_millis(2300);
        assert_eq!(failed(&f), ["longest_get_wait"]);
        f.longest_wait = Duration::ZERO;
        f.end.stats.active = 1;
        assert_eq!(failed(&f), ["connections_at_end"]);
        f.end.stats.active = 0;
        f.end.stats.idle = 1;
        assert_eq!(failed(&f), ["connections_at_end"]);
        f.end.stats.idle = 4;
        f.end.vitals.threads.pool = 5;
        f.end.vitals.threads.total = 21;
        assert_eq!(failed(&f), ["threads_at_end"]);
        f.end.vitals.threads = f.start.threads;
        f.end.vitals.fds = 40 + FD_SLACK + 1;
        assert_eq!(failed(&f), ["open_fds"]);
        // Two more connections than after the warm-up: their fds are allowed.
        f.end.vitals.pool_total = 6;
        assert!(failed(&f).is_empty());
        let read_buffers = 6 * READ_BUFFER_KIB;
        f.end.vitals.rss_kib = 30_000 + RSS_GROWTH_MIN_KIB + read_buffers + 1;
        assert_eq!(failed(&f), ["resident_memory"]);
        f.end.vitals.rss_kib = 30_000 + RSS_GROWTH_MIN_KIB + read_buffers;
        assert!(failed(&f).is_empty());
        f.end.problems.push("x".into());
        assert_eq!(failed(&f), ["settled_within"]);
    }

    #[test]
    fn rss_allowance_is_the_larger_bound() {
        assert_eq!(rss_allowance(10 * 1024, 0), RSS_GROWTH_MIN_KIB);
        assert_eq!(rss_allowance(100 * 1024, 0), 50 * 1024);
        assert_eq!(
            rss_allowance(10 * 1024, 4),
            RSS_GROWTH_MIN_KIB + 4 * READ_BUFFER_KIB
        );
    }
}
