//! The drill's Galera part (`staunch drill --galera`): a throwaway 3-node
//! Galera cluster from the test kit, a staunch pool over its three nodes at
//! the defaults (no knob at all: the pool finds Galera out from `wsrep_on`),
//! as the test kit's least-privilege user `least` (`ALL ON staunch_test.*`,
//! nothing global, as applications' users are created: issue #49; the
//! monitor tells once that it may not run `SHOW SLAVE STATUS`, which a
//! Galera cluster does not need),
//! a continuous load through it, and three faults on the current writer, one
//! after another: desynced (`wsrep_desync=ON`), isolated from the cluster
//! (`gmcast.isolate`: it leaves the Primary component), killed (`kill -9`).
//!
//! Per fault, a timeline: when the survivors could commit again (Galera's own
//! eviction stall, measured in the same run by a direct client inserting
//! into a survivor every 10 ms), when writes moved, the first write the pool
//! acknowledged after that, the failed writes, and the statements served by
//! a node outside the Primary component or not Synced (each write and read
//! asks, inside its transaction, where it runs: `@@port`,
//! `wsrep_local_state`, `wsrep_desync`, `wsrep_cluster_status`). At the end
//! every acknowledged write is read back from the surviving nodes.
//!
//! A fault is survived when: no statement ran on a node outside the Primary
//! component, nor on one not Synced, later than the monitor's detection
//! window (one `ping_interval`, 1 s, plus 1 s of slack) after the first one
//! there; the first write acknowledged elsewhere came within that window of
//! the survivors committing again (for the desync: no write failed at all).
//! The run fails when an acknowledged write is missing.
//!
//! Why a window and not zero for the non-Primary node: an isolated node may
//! see itself out of the Primary component before the survivors evict it.
//! Until the first 1047 (or 1180) a borrower meets there raises the alarm
//! and the monitor's probe finds it out, a few statements still reach it:
//! its table-less `where` answers, every write gets 1047, none is
//! acknowledged. `tests/galera.rs` bounds the same window the same way.

use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use mysql::prelude::Queryable as _;
use staunch::prelude::*;
use staunch::{Event, Pool};
use staunch_testkit::mariadb::{LEAST_PASS, LEAST_USER};
use staunch_testkit::{Galera, GaleraOpts};

use crate::{panic_text, signals};
use crate::{EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_SETUP};

/// The monitor's detection window at the defaults (`ping_interval`).
const DETECT: Duration = Duration::from_secs(1);
/// Scheduling noise on a loaded machine.
const SLACK: Duration = Duration::from_secs(1);
/// Reader threads (beside `--threads` writers).
const READERS: usize = 2;
/// How long to wait for writes to flow again after a fault.
const RESUME_WAIT: Duration = Duration::from_secs(30);

const WHERE: &str = "SELECT @@port, \
     (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_LOCAL_STATE'), \
     @@wsrep_desync, \
     (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_CLUSTER_STATUS')";

/// Where a statement ran, as the node said inside it.
#[derive(Clone, Copy, Debug)]
struct Node {
    port: u16,
    synced: bool,
    primary: bool,
}

fn where_am_i(c: &mut staunch::PooledConn) -> staunch::Result<Node> {
    let (port, state, desync, status): (u16, String, u8, String) =
        c.query_first(WHERE)?.unwrap_or_default();
    Ok(Node {
        port,
        synced: state == "4" && desync == 0,
        primary: status == "Primary",
    })
}

#[derive(Clone, Debug)]
struct Rec {
    worker: usize,
    seq: u64,
    start: Instant,
    end: Instant,
    node: Option<Node>,
    ok: bool,
}

/// A direct insert (no pool): start, end, committed.
type Direct = (Instant, Instant, bool);

/// When the pool's writer changed, and to which node (`host:port`).
type Move = (Instant, Option<String>);

struct Load {
    stop: Arc<AtomicBool>,
    /// When the pool's writer changed, and to what (polled every 5 ms).
    moves: Arc<Mutex<Vec<Move>>>,
    writes: Arc<Mutex<Vec<Rec>>>,
    reads: Arc<Mutex<Vec<Rec>>>,
    direct: Arc<Mutex<Vec<Direct>>>,
    threads: Vec<thread::JoinHandle<()>>,
}

impl Load {
    /// `writers` threads of `BEGIN; where; INSERT; COMMIT`, [`READERS`] of
    /// `where` through `get_read`, and a direct client inserting into the
    /// node `direct_to`; each pausing 10 ms between operations.
    fn start(pool: &Pool, writers: usize, first_seq: u64, direct_to: mysql::OptsBuilder) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let writes = Arc::new(Mutex::new(Vec::new()));
        let reads = Arc::new(Mutex::new(Vec::new()));
        let direct = Arc::new(Mutex::new(Vec::new()));
        let moves = Arc::new(Mutex::new(Vec::new()));
        let mut threads = Vec::new();
        {
            let (pool, stop, moves) = (pool.clone(), stop.clone(), moves.clone());
            threads.push(thread::spawn(move || {
                let mut last = pool.writer();
                while !stop.load(SeqCst) {
                    let now = pool.writer();
                    if now != last {
                        moves.lock().unwrap().push((Instant::now(), now.clone()));
                        last = now;
                    }
                    thread::sleep(Duration::from_millis(5));
                }
            }));
        }
        for worker in 0..writers {
            let (pool, stop, writes) = (pool.clone(), stop.clone(), writes.clone());
            threads.push(thread::spawn(move || {
                let mut seq = first_seq;
                while !stop.load(SeqCst) {
                    seq += 1;
                    let start = Instant::now();
                    let mut node = None;
                    let ok = pool.get().is_ok_and(|mut c| {
                        (|| -> staunch::Result<()> {
                            c.query_drop("BEGIN")?;
                            let n = where_am_i(&mut c)?;
                            node = Some(n);
                            c.exec_drop(
                                "INSERT INTO galera_drill (worker, seq, port) VALUES (?, ?, ?)",
                                (worker, seq, n.port),
                            )?;
                            c.query_drop("COMMIT")
                        })()
                        .is_ok()
                    });
                    writes.lock().unwrap().push(Rec {
                        worker,
                        seq,
                        start,
                        end: Instant::now(),
                        node,
                        ok,
                    });
                    thread::sleep(Duration::from_millis(10));
                }
            }));
        }
        for worker in 0..READERS {
            let (pool, stop, reads) = (pool.clone(), stop.clone(), reads.clone());
            threads.push(thread::spawn(move || {
                while !stop.load(SeqCst) {
                    let start = Instant::now();
                    let node = pool
                        .get_read()
                        .ok()
                        .and_then(|mut c| where_am_i(&mut c).ok());
                    reads.lock().unwrap().push(Rec {
                        worker,
                        seq: 0,
                        start,
                        end: Instant::now(),
                        node,
                        ok: node.is_some(),
                    });
                    thread::sleep(Duration::from_millis(10));
                }
            }));
        }
        {
            let (stop, direct) = (stop.clone(), direct.clone());
            let opts = direct_to.read_timeout(Some(Duration::from_secs(30)));
            threads.push(thread::spawn(move || {
                let mut c: Option<mysql::Conn> = None;
                while !stop.load(SeqCst) {
                    let start = Instant::now();
                    let ok = (|| -> Result<(), mysql::Error> {
                        if c.is_none() {
                            c = Some(mysql::Conn::new(opts.clone())?);
                        }
                        c.as_mut()
                            .unwrap()
                            .query_drop("INSERT INTO galera_drill_direct (v) VALUES (1)")
                    })()
                    .is_ok();
                    if !ok {
                        c = None;
                    }
                    direct.lock().unwrap().push((start, Instant::now(), ok));
                    thread::sleep(Duration::from_millis(10));
                }
            }));
        }
        Load {
            stop,
            moves,
            writes,
            reads,
            direct,
            threads,
        }
    }

    fn acked_on_other_than(&self, port: u16, after: Instant) -> usize {
        self.writes
            .lock()
            .unwrap()
            .iter()
            .filter(|w| w.ok && w.start >= after && w.node.is_some_and(|n| n.port != port))
            .count()
    }

    fn stop(self) -> Ran {
        self.stop.store(true, SeqCst);
        for t in self.threads {
            let _ = t.join();
        }
        let take = |v: &Mutex<Vec<Rec>>| std::mem::take(&mut *v.lock().unwrap());
        Ran {
            writes: take(&self.writes),
            reads: take(&self.reads),
            direct: std::mem::take(&mut *self.direct.lock().unwrap()),
            moves: std::mem::take(&mut *self.moves.lock().unwrap()),
        }
    }
}

/// What a load recorded.
struct Ran {
    writes: Vec<Rec>,
    reads: Vec<Rec>,
    direct: Vec<Direct>,
    moves: Vec<Move>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fault {
    Desync,
    Isolate,
    Kill,
}

impl Fault {
    fn label(self) -> &'static str {
        match self {
            Fault::Desync => "writer desynced (wsrep_desync)",
            Fault::Isolate => "writer isolated (gmcast.isolate)",
            Fault::Kill => "writer killed (kill -9)",
        }
    }
}

/// One fault's timeline, in seconds from the fault.
struct Timeline {
    fault: Fault,
    /// When the survivors could commit again (the end of the direct
    /// client's longest insert across the fault), if it stalled.
    survivors: Option<f64>,
    /// When the pool's writer changed (the `WriterChanged` event).
    moved: Option<f64>,
    /// The first write acknowledged on another node.
    first_ack: Option<f64>,
    failed: usize,
    acked: usize,
    non_primary: usize,
    non_primary_late: usize,
    non_synced: usize,
    non_synced_late: usize,
}

impl Timeline {
    /// The first acknowledged write after the survivors could commit again
    /// (none when they never stalled).
    fn first_after(&self) -> Option<f64> {
        Some(self.first_ack? - self.survivors?)
    }

    fn survived(&self) -> bool {
        let bound = (DETECT + SLACK).as_secs_f64();
        let resumed = match self.fault {
            Fault::Desync => self.failed == 0,
            // Without a stall, from the fault itself.
            _ => self
                .first_after()
                .or(self.first_ack)
                .is_some_and(|d| d <= bound),
        };
        resumed && self.non_primary_late == 0 && self.non_synced_late == 0
    }
}

fn secs(d: Option<f64>) -> String {
    d.map_or("-".into(), |s| format!("{s:+.3}s"))
}

/// Statements that ran on a node where `is_out` holds, and those of them
/// later than the detection window after the first one on that node.
fn outside(recs: &[&Rec], is_out: impl Fn(&Node) -> bool) -> (usize, usize) {
    let mut bad: Vec<&&Rec> = recs
        .iter()
        .filter(|r| r.node.as_ref().is_some_and(&is_out))
        .collect();
    bad.sort_by_key(|r| r.start);
    let mut first: Vec<(u16, Instant)> = Vec::new();
    let mut late = 0;
    for r in &bad {
        let port = r.node.unwrap().port;
        let f = match first.iter().find(|(p, _)| *p == port) {
            Some((_, f)) => *f,
            None => {
                first.push((port, r.start));
                r.start
            }
        };
        if r.start > f + DETECT + SLACK {
            late += 1;
        }
    }
    (bad.len(), late)
}

/// Runs the Galera part; prints as it goes and a table at the end (and,
/// with `html`, writes the page of [`crate::html::plain_page`]).
pub fn run(writers: u32, quiet: bool, html: Option<&std::path::Path>) -> u8 {
    let t_all = Instant::now();
    println!("galera: starting a 3-node Galera cluster (test kit; ~25-60 s)");
    let g = match catch_unwind(|| Galera::start(GaleraOpts::default())) {
        Ok(g) => g,
        Err(p) => {
            eprintln!(
                "staunch drill --galera: cannot start the cluster: {}",
                panic_text(&p)
            );
            return EXIT_SETUP;
        }
    };
    println!(
        "galera: cluster up in {:.1}s: {}",
        t_all.elapsed().as_secs_f64(),
        g.hosts()
    );
    if signals::interrupted() {
        return EXIT_INTERRUPTED;
    }
    let mut g = g;
    match catch_unwind(AssertUnwindSafe(|| {
        drive(&mut g, writers as usize, quiet, html)
    })) {
        Ok(code) => {
            println!("galera: ran in {:.1}s", t_all.elapsed().as_secs_f64());
            code
        }
        Err(p) => {
            eprintln!("staunch drill --galera: {}", panic_text(&p));
            if signals::interrupted() {
                EXIT_INTERRUPTED
            } else {
                EXIT_FAILED
            }
        }
    }
}

/// A fault's chart: the operations of its load per 100 ms (their whole
/// latency: get() and the statements; the part keeps no get() wait of its
/// own), and markers at the fault, the survivors committing again, the
/// writer's move and the first write acknowledged elsewhere.
fn chart(line: &Timeline, t0: Instant, t: Instant, writes: &[Rec], reads: &[Rec]) -> String {
    let ns = |i: Instant| i.saturating_duration_since(t0).as_nanos() as u64;
    let mut samples = crate::workload::samples_of(writes.iter().chain(reads).map(|r| {
        (
            ns(r.end),
            r.ok,
            r.end.saturating_duration_since(r.start).as_micros() as u64,
        )
    }));
    // The last bucket is cut short by the load's stop.
    if samples.len() > 1 {
        samples.pop();
    }
    let at = |s: f64| ns(t) + (s * 1e9) as u64;
    let mut marks = vec![("fault", ns(t), "fault".to_string())];
    if let Some(s) = line.survivors {
        marks.push(("end", at(s), "survivors ok".into()));
    }
    if let Some(s) = line.moved {
        marks.push(("moved", at(s), "moved".into()));
    }
    if let Some(s) = line.first_ack {
        marks.push(("recovery", at(s), "first write".into()));
    }
    crate::html::draw(
        &crate::html::Spec {
            label: line.fault.label().into(),
            start_ns: ns(t),
            end_ns: crate::workload::NEVER,
            wait_name: "latency",
            wait_bound: None,
            marks,
        },
        &samples,
    )
}

fn drive(g: &mut Galera, writers: usize, quiet: bool, html: Option<&std::path::Path>) -> u8 {
    // The charts' clock.
    let clock = Instant::now();
    g.server(0).sql(
        "CREATE TABLE staunch_test.galera_drill (worker INT NOT NULL, seq BIGINT NOT NULL, \
         port INT NOT NULL, PRIMARY KEY (worker, seq)) ENGINE=InnoDB",
    );
    g.server(0).sql(
        "CREATE TABLE staunch_test.galera_drill_direct (id BIGINT AUTO_INCREMENT PRIMARY KEY, \
         v INT) ENGINE=InnoDB",
    );
    let pool = Pool::builder()
        .url(&g.url_as(LEAST_USER, LEAST_PASS, ""))
        .event_listener(Arc::new(move |e: &Event| {
            if !quiet {
                println!("  event: {e}");
            }
        }))
        .build()
        .expect("a pool over the cluster");
    let t0 = Instant::now();
    while pool.writer().is_none() {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "no writer 10 s after the pool opened"
        );
        thread::sleep(Duration::from_millis(10));
    }
    let ports: Vec<u16> = g.servers().map(|s| s.port()).collect();
    let addrs: Vec<String> = g.servers().map(|s| s.addr().to_string()).collect();
    let writer = |pool: &Pool| -> usize {
        let w = pool.writer().expect("a writer");
        addrs
            .iter()
            .position(|a| *a == w)
            .expect("the writer is a node")
    };
    let mut acked: Vec<Rec> = Vec::new();
    let mut lines: Vec<Timeline> = Vec::new();
    let mut charts: Vec<String> = Vec::new();
    let mut killed: HashSet<usize> = HashSet::new();
    for (k, fault) in [Fault::Desync, Fault::Isolate, Fault::Kill]
        .into_iter()
        .enumerate()
    {
        if signals::interrupted() {
            return EXIT_INTERRUPTED;
        }
        let w = writer(&pool);
        let survivor = (0..ports.len()).find(|&i| i != w).unwrap();
        println!(
            "galera: {} on node {w} (port {}); direct client on node {survivor}",
            fault.label(),
            ports[w]
        );
        let load = Load::start(
            &pool,
            writers,
            (k as u64 + 1) * 1_000_000_000,
            g.server(survivor).app_opts(),
        );
        let flowing = Instant::now();
        while load.writes.lock().unwrap().iter().filter(|w| w.ok).count() < 20 {
            assert!(
                flowing.elapsed() < Duration::from_secs(10),
                "writes did not flow before the fault"
            );
            thread::sleep(Duration::from_millis(10));
        }
        signals::sleep(Duration::from_millis(500));
        let t = Instant::now();
        match fault {
            Fault::Desync => g.desync(w, true),
            Fault::Isolate => g.isolate(w, true),
            Fault::Kill => {
                g.kill9(w);
                killed.insert(w);
            }
        }
        let resumed = Instant::now();
        while load.acked_on_other_than(ports[w], t) < 10 {
            if resumed.elapsed() > RESUME_WAIT || signals::interrupted() {
                break;
            }
            thread::sleep(Duration::from_millis(10));
        }
        signals::sleep(Duration::from_secs(1));
        let Ran {
            writes,
            reads,
            direct,
            moves,
        } = load.stop();
        let since = |i: Instant| i.saturating_duration_since(t).as_secs_f64();
        // Galera's stall: the longest direct insert running at the fault or
        // started after it; it ends when the survivors commit again. A
        // desync stalls nothing (a slow insert then is the machine's load).
        let stall = direct
            .iter()
            .filter(|_| fault != Fault::Desync)
            .filter(|(s, e, _)| *e >= t && *s <= t + Duration::from_secs(20))
            .map(|(s, e, _)| (*e - *s, *e))
            .max_by_key(|(d, _)| *d)
            .filter(|(d, _)| *d > Duration::from_millis(500));
        let after: Vec<&Rec> = writes
            .iter()
            .chain(&reads)
            .filter(|r| r.start >= t)
            .collect();
        let (non_primary, non_primary_late) = outside(&after, |n| !n.primary);
        let (non_synced, non_synced_late) = outside(&after, |n| !n.synced);
        let line = Timeline {
            fault,
            survivors: stall.map(|(_, e)| since(e)),
            moved: moves
                .iter()
                .find(|(m, to)| *m >= t && to.as_deref() != Some(addrs[w].as_str()))
                .map(|(m, _)| since(*m)),
            first_ack: writes
                .iter()
                .filter(|r| r.ok && r.start >= t && r.node.is_some_and(|n| n.port != ports[w]))
                .map(|r| since(r.end))
                .reduce(f64::min),
            failed: writes.iter().filter(|r| !r.ok).count(),
            acked: writes.iter().filter(|r| r.ok).count(),
            non_primary,
            non_primary_late,
            non_synced,
            non_synced_late,
        };
        println!(
            "  survivors commit again {}; writes moved {}; first write acked elsewhere {} \
             ({} after the survivors could); {} acked, {} failed; statements on a non-Primary \
             node {} ({} past the detection window), on a non-Synced node {} ({} past it)",
            secs(line.survivors),
            secs(line.moved),
            secs(line.first_ack),
            secs(line.first_after()),
            line.acked,
            line.failed,
            line.non_primary,
            line.non_primary_late,
            line.non_synced,
            line.non_synced_late,
        );
        if html.is_some() {
            charts.push(chart(&line, clock, t, &writes, &reads));
        }
        acked.extend(writes.into_iter().filter(|r| r.ok));
        lines.push(line);
        match fault {
            Fault::Desync => {
                g.desync(w, false);
                g.wait_synced(w);
            }
            Fault::Isolate => {
                g.isolate(w, false);
                g.wait_synced(w);
            }
            Fault::Kill => {}
        }
    }
    // Every acknowledged write, on every surviving node. With
    // wsrep_sync_wait=1: the other nodes apply a certified commit
    // asynchronously, and the read waits until the node has applied
    // everything committed before it.
    let mut lost = 0;
    for i in (0..ports.len()).filter(|i| !killed.contains(i)) {
        let mut c = mysql::Conn::new(g.server(i).app_opts()).expect("a survivor answers");
        c.query_drop("SET SESSION wsrep_sync_wait = 1")
            .expect("wsrep_sync_wait");
        let rows: HashSet<(usize, u64)> = c
            .query_map(
                "SELECT worker, seq FROM staunch_test.galera_drill",
                |(w, seq): (u64, u64)| (w as usize, seq),
            )
            .expect("the drill's rows")
            .into_iter()
            .collect();
        lost += acked
            .iter()
            .filter(|w| !rows.contains(&(w.worker, w.seq)))
            .count();
    }
    pool.close();
    println!();
    println!(
        "{:<34} {:>12} {:>9} {:>16} {:>7} {:>19} {:>18}  verdict",
        "galera fault",
        "survivors ok",
        "moved",
        "first write",
        "failed",
        "non-Primary (late)",
        "non-Synced (late)"
    );
    for l in &lines {
        println!(
            "{:<34} {:>12} {:>9} {:>16} {:>7} {:>19} {:>18}  {}",
            l.fault.label(),
            secs(l.survivors),
            secs(l.moved),
            format!("{} ({})", secs(l.first_ack), secs(l.first_after())),
            l.failed,
            format!("{} ({})", l.non_primary, l.non_primary_late),
            format!("{} ({})", l.non_synced, l.non_synced_late),
            if l.survived() { "survived" } else { "FAILED" }
        );
    }
    println!(
        "acknowledged writes: {}, lost: {lost} (read back from every surviving node)",
        acked.len()
    );
    let ok = lost == 0 && lines.iter().all(Timeline::survived);
    if let Some(path) = html {
        let page = page(
            &lines,
            charts,
            acked.len(),
            lost,
            ok,
            &g.hosts(),
            clock.elapsed(),
        );
        match std::fs::write(path, page) {
            Ok(()) => println!("timelines written to {}", path.display()),
            Err(e) => eprintln!("staunch drill: cannot write {}: {e}", path.display()),
        }
    }
    println!(
        "result: {}",
        if ok {
            "PASSED: every Galera fault was survived, no acknowledged write lost"
        } else {
            "FAILED"
        }
    );
    if signals::interrupted() {
        EXIT_INTERRUPTED
    } else if ok {
        EXIT_OK
    } else {
        EXIT_FAILED
    }
}

/// The Galera part's page: its table, and each fault's chart.
fn page(
    lines: &[Timeline],
    charts: Vec<String>,
    acked: usize,
    lost: usize,
    ok: bool,
    hosts: &str,
    took: Duration,
) -> String {
    let cells = |l: &Timeline| {
        vec![
            l.fault.label().to_string(),
            secs(l.survivors),
            secs(l.moved),
            format!("{} ({})", secs(l.first_ack), secs(l.first_after())),
            l.failed.to_string(),
            format!("{} ({})", l.non_primary, l.non_primary_late),
            format!("{} ({})", l.non_synced, l.non_synced_late),
            if l.survived() { "survived" } else { "FAILED" }.to_string(),
        ]
    };
    let rows: Vec<(Vec<String>, bool)> = lines.iter().map(|l| (cells(l), l.survived())).collect();
    let head = [
        "galera fault",
        "survivors ok",
        "moved",
        "first write",
        "failed",
        "non-Primary (late)",
        "non-Synced (late)",
        "verdict",
    ];
    let sections: Vec<crate::html::Section> = lines
        .iter()
        .zip(charts)
        .map(|(l, svg)| {
            let c = cells(l);
            crate::html::Section {
                title: l.fault.label().into(),
                verdict: c[7].clone(),
                ok: l.survived(),
                svg,
                facts: head[1..7]
                    .iter()
                    .zip(&c[1..7])
                    .map(|(h, v)| (h.to_string(), v.clone()))
                    .chain([("acknowledged".to_string(), l.acked.to_string())])
                    .collect(),
            }
        })
        .collect();
    crate::html::plain_page(
        "staunch drill --galera",
        ok,
        &format!(
            "3-node Galera cluster {hosts}; a pool over it at the defaults; the faults took {:.1}s (after \
             the cluster's start). Times from the fault. \
             The charts show the pool's operations (writes and reads) per 100 ms; latency is the whole \
             operation's (get() and its statements).",
            took.as_secs_f64()
        ),
        &head,
        &rows,
        &[format!(
            "acknowledged writes: {acked}, lost: {lost} (read back from every surviving node)"
        )],
        (
            "latency",
            &[
                "survivors commit again",
                "writes moved",
                "first write acknowledged elsewhere",
            ],
        ),
        &sections,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(port: u16, synced: bool, primary: bool, at_ms: u64, t: Instant) -> Rec {
        Rec {
            worker: 0,
            seq: 0,
            start: t + Duration::from_millis(at_ms),
            end: t + Duration::from_millis(at_ms + 1),
            node: Some(Node {
                port,
                synced,
                primary,
            }),
            ok: true,
        }
    }

    #[test]
    fn only_statements_past_the_window_count_as_late() {
        let t = Instant::now();
        let recs = [
            rec(1, true, true, 0, t),
            rec(2, false, true, 100, t),
            rec(2, false, false, 1900, t),
            rec(2, false, false, 2200, t),
            rec(3, false, false, 5000, t),
            rec(3, false, false, 7001, t),
        ];
        let refs: Vec<&Rec> = recs.iter().collect();
        // Not Synced on 2 from 100 ms: 2200 is late; on 3 from 5000 ms: 7001.
        assert_eq!(outside(&refs, |n| !n.synced), (5, 2));
        // Non-Primary on 2 from 1900 ms: 2200 is within the window.
        assert_eq!(outside(&refs, |n| !n.primary), (4, 1));
        assert_eq!(outside(&refs[..1], |n| !n.primary), (0, 0));
    }

    #[test]
    fn verdicts() {
        let l = |fault, survivors, first_ack, failed, primary_late, synced_late| Timeline {
            fault,
            survivors,
            moved: None,
            first_ack,
            failed,
            acked: 1,
            non_primary: 15 + primary_late,
            non_primary_late: primary_late,
            non_synced: 15 + synced_late,
            non_synced_late: synced_late,
        };
        assert!(l(Fault::Desync, None, Some(0.5), 0, 0, 0).survived());
        assert!(!l(Fault::Desync, None, Some(0.5), 1, 0, 0).survived());
        assert!(l(Fault::Kill, Some(6.0), Some(6.1), 8, 0, 0).survived());
        assert!(l(Fault::Kill, None, Some(1.5), 8, 0, 0).survived());
        assert!(!l(Fault::Kill, None, Some(2.5), 8, 0, 0).survived());
        assert!(!l(Fault::Kill, Some(6.0), Some(8.5), 8, 0, 0).survived());
        assert!(!l(Fault::Kill, Some(6.0), None, 8, 0, 0).survived());
        // Statements on the node within the window (15 each) are survived.
        assert!(l(Fault::Isolate, Some(6.0), Some(6.1), 8, 0, 0).survived());
        assert!(!l(Fault::Isolate, Some(6.0), Some(6.1), 8, 1, 0).survived());
        assert!(!l(Fault::Isolate, Some(6.0), Some(6.1), 8, 0, 1).survived());
    }
}
