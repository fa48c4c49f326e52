//! A Galera cluster at staunch's defaults (issue #26): a multi-host URL with
//! no `topology` knob against a real 3-node cluster from the test kit, under
//! a continuous load of 4 writer threads and 2 reader threads.
//!
//! One cluster, sequential phases (the faults allow it; a cluster costs
//! ~40 s to start here): routing at rest; the writer desynced; the writer
//! isolated (`gmcast.isolate`); the writer killed (`kill -9`) and its rejoin
//! through SST; a rolling restart of every node; quorum lost (two nodes
//! down). Each phase checks where every write ran (the node's port,
//! `wsrep_local_state` and `wsrep_desync` are read inside the transaction),
//! that every acknowledged write is on every surviving node, and that no
//! statement ran on a node outside the Synced set beyond the monitor's
//! detection window. Galera's own eviction stall is measured in the same
//! run by a direct client inserting into a survivor. Timelines are printed
//! (`TIMELINE ...` on stderr); timing is asserted only as documented bounds
//! plus CI slack.

use staunch_testkit as support;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use mysql::prelude::Queryable as _;
use staunch::prelude::*;
use staunch::{ErrorKind, Event, Pool};
use support::{Galera, GaleraOpts};

/// The tests share 2 loaded cores.
const SLACK: Duration = Duration::from_millis(1500);
/// The monitor's detection window at the defaults: one `ping_interval`
/// (1 s) for the next probe, plus its answer.
const DETECT: Duration = Duration::from_secs(1);
const WRITERS: usize = 4;

type Log = Arc<Mutex<Vec<(Instant, Event)>>>;

fn open(url: &str) -> (Pool, Log) {
    let log: Log = Arc::new(Mutex::new(Vec::new()));
    let l2 = log.clone();
    let pool = Pool::builder()
        .url(url)
        .event_listener(Arc::new(move |e: &Event| {
            l2.lock().unwrap().push((Instant::now(), e.clone()))
        }))
        .build()
        .unwrap();
    (pool, log)
}

fn wait_until(what: &str, limit: Duration, f: impl Fn() -> bool) {
    let t = Instant::now();
    while !f() {
        assert!(t.elapsed() < limit, "timed out waiting for: {what}");
        thread::sleep(Duration::from_millis(10));
    }
}

fn secs(d: Duration) -> String {
    format!("{:.3}s", d.as_secs_f64())
}

/// `a - b` in seconds, signed.
fn at(a: Instant, b: Instant) -> String {
    if a >= b {
        format!("+{:.3}s", (a - b).as_secs_f64())
    } else {
        format!("-{:.3}s", (b - a).as_secs_f64())
    }
}

/// Where a statement ran: the node's port, `wsrep_local_state`, `wsrep_desync`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Node {
    port: u16,
    state: u32,
    desync: bool,
}

impl Node {
    fn synced(&self) -> bool {
        self.state == 4 && !self.desync
    }
}

const WHERE: &str = "SELECT @@port, (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS \
     WHERE VARIABLE_NAME = 'WSREP_LOCAL_STATE'), @@wsrep_desync";

fn where_am_i(c: &mut staunch::PooledConn) -> staunch::Result<Node> {
    let (port, state, desync): (u16, String, u8) = c.query_first(WHERE)?.expect("a row");
    Ok(Node {
        port,
        state: state.parse().unwrap_or(0),
        desync: desync != 0,
    })
}

/// A direct insert: when it started, when it ended, whether it committed.
type Direct = (Instant, Instant, bool);

#[derive(Clone, Debug)]
struct Rec {
    thread: usize,
    seq: u64,
    start: Instant,
    end: Instant,
    node: Option<Node>,
    /// Ok: acknowledged (COMMIT returned Ok; for reads: answered).
    result: Result<(), (Option<ErrorKind>, Option<u16>, String)>,
}

/// 4 writers (`BEGIN; where; INSERT; COMMIT`) and 2 readers (`where`), each
/// pausing 10 ms between statements; and a direct client (no pool) writing
/// into one node every 10 ms, for Galera's own stall.
struct Load {
    stop: Arc<AtomicBool>,
    writes: Arc<Mutex<Vec<Rec>>>,
    reads: Arc<Mutex<Vec<Rec>>>,
    direct: Arc<Mutex<Vec<Direct>>>,
    threads: Vec<thread::JoinHandle<()>>,
}

impl Load {
    fn start(pool: &Pool, direct_to: Option<mysql::OptsBuilder>, first_seq: u64) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let writes = Arc::new(Mutex::new(Vec::new()));
        let reads = Arc::new(Mutex::new(Vec::new()));
        let direct = Arc::new(Mutex::new(Vec::new()));
        let mut threads = Vec::new();
        for t in 0..WRITERS {
            let (pool, stop, writes) = (pool.clone(), stop.clone(), writes.clone());
            threads.push(thread::spawn(move || {
                let mut seq = first_seq;
                while !stop.load(SeqCst) {
                    seq += 1;
                    let start = Instant::now();
                    let mut node = None;
                    let result = match pool.get() {
                        Err(e) => Err((Some(e.kind()), None, e.to_string())),
                        Ok(mut c) => (|| -> staunch::Result<()> {
                            c.query_drop("BEGIN")?;
                            let n = where_am_i(&mut c)?;
                            node = Some(n);
                            c.exec_drop(
                                "INSERT INTO w (t, seq, port) VALUES (?, ?, ?)",
                                (t, seq, n.port),
                            )?;
                            c.query_drop("COMMIT")
                        })()
                        .map_err(|e| (None, e.server_code(), e.to_string())),
                    };
                    writes.lock().unwrap().push(Rec {
                        thread: t,
                        seq,
                        start,
                        end: Instant::now(),
                        node,
                        result,
                    });
                    thread::sleep(Duration::from_millis(10));
                }
            }));
        }
        for t in 0..2 {
            let (pool, stop, reads) = (pool.clone(), stop.clone(), reads.clone());
            threads.push(thread::spawn(move || {
                while !stop.load(SeqCst) {
                    let start = Instant::now();
                    let r = pool
                        .get_read()
                        .map_err(|e| (Some(e.kind()), None, e.to_string()))
                        .and_then(|mut c| {
                            where_am_i(&mut c).map_err(|e| (None, None, e.to_string()))
                        });
                    reads.lock().unwrap().push(Rec {
                        thread: t,
                        seq: 0,
                        start,
                        end: Instant::now(),
                        node: r.as_ref().ok().copied(),
                        result: r.map(|_| ()),
                    });
                    thread::sleep(Duration::from_millis(10));
                }
            }));
        }
        if let Some(opts) = direct_to {
            let (stop, direct) = (stop.clone(), direct.clone());
            threads.push(thread::spawn(move || {
                let opts = opts.read_timeout(Some(Duration::from_secs(30)));
                let mut c: Option<mysql::Conn> = None;
                while !stop.load(SeqCst) {
                    let start = Instant::now();
                    let ok = (|| -> Result<(), mysql::Error> {
                        if c.is_none() {
                            c = Some(mysql::Conn::new(opts.clone())?);
                        }
                        c.as_mut()
                            .unwrap()
                            .query_drop("INSERT INTO d (v) VALUES (1)")
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
            writes,
            reads,
            direct,
            threads,
        }
    }

    fn acked(&self) -> usize {
        self.writes
            .lock()
            .unwrap()
            .iter()
            .filter(|w| w.result.is_ok())
            .count()
    }

    fn acked_on_other_than(&self, port: u16, after: Instant) -> usize {
        self.writes
            .lock()
            .unwrap()
            .iter()
            .filter(|w| w.result.is_ok() && w.start >= after)
            .filter(|w| w.node.is_some_and(|n| n.port != port))
            .count()
    }

    fn stop(self) -> (Vec<Rec>, Vec<Rec>, Vec<Direct>) {
        self.stop.store(true, SeqCst);
        for t in self.threads {
            t.join().unwrap();
        }
        let w = self.writes.lock().unwrap().clone();
        let r = self.reads.lock().unwrap().clone();
        let d = self.direct.lock().unwrap().clone();
        (w, r, d)
    }
}

fn setup(g: &Galera) {
    g.server(0).sql(
        "CREATE TABLE staunch_test.w (t INT NOT NULL, seq BIGINT NOT NULL, port INT NOT NULL, \
         PRIMARY KEY (t, seq)) ENGINE=InnoDB",
    );
    g.server(0).sql(
        "CREATE TABLE staunch_test.d (id BIGINT AUTO_INCREMENT PRIMARY KEY, v INT) ENGINE=InnoDB",
    );
}

/// Every acknowledged write is on each of `nodes`, with the port it
/// reported running on. Read with `wsrep_sync_wait=1`: a commit returns
/// once the cluster certified it, and the other nodes apply it
/// asynchronously (a donor just out of an SST may still be applying its
/// backlog), so a plain read there may not see it yet; the causality check
/// waits until the node has applied everything committed before the read.
fn check_acked(g: &Galera, writes: &[Rec], nodes: &[usize]) {
    for &i in nodes {
        let mut c = mysql::Conn::new(g.server(i).app_opts()).unwrap();
        c.query_drop("SET SESSION wsrep_sync_wait = 1").unwrap();
        let rows: HashMap<(usize, u64), u16> = c
            .query_map(
                "SELECT t, seq, port FROM staunch_test.w",
                |(t, seq, port): (u64, u64, u16)| ((t as usize, seq), port),
            )
            .unwrap()
            .into_iter()
            .collect();
        let mut n = 0;
        for w in writes.iter().filter(|w| w.result.is_ok()) {
            let port = w.node.unwrap().port;
            assert_eq!(
                rows.get(&(w.thread, w.seq)),
                Some(&port),
                "acknowledged write {}/{} (on port {port}) missing or elsewhere on node {i}",
                w.thread,
                w.seq
            );
            n += 1;
        }
        assert!(n > 0, "no acknowledged write to check");
    }
}

/// Statements (writes and reads) that ran on a node not Synced or desynced
/// (the node answered inside the statement), started after `after`.
fn bad_served(recs: &[Rec], after: Instant) -> Vec<Rec> {
    recs.iter()
        .filter(|r| r.start >= after)
        .filter(|r| r.node.is_some_and(|n| !n.synced()))
        .cloned()
        .collect()
}

/// No statement ran on a non-Synced node later than the monitor's
/// detection window after the first one there: per node, every such
/// statement started within `DETECT + SLACK` of the first.
fn assert_bad_within_window(what: &str, recs: &[Rec]) -> usize {
    // Per node, an episode starts with a statement there while it was not
    // Synced after none for 2 s; every statement of an episode started
    // within the detection window of its first.
    let mut episode: HashMap<u16, (Instant, Instant)> = HashMap::new();
    let mut bad = bad_served(recs, Instant::now() - Duration::from_secs(3600));
    bad.sort_by_key(|r| r.start);
    for r in &bad {
        let port = r.node.unwrap().port;
        let e = episode.entry(port).or_insert((r.start, r.start));
        if r.start > e.1 + Duration::from_secs(2) {
            *e = (r.start, r.start);
        }
        e.1 = r.start;
        assert!(
            r.start <= e.0 + DETECT + SLACK,
            "{what}: a statement ran on non-Synced port {port} {} after the first one there: {r:?}",
            secs(r.start - e.0)
        );
    }
    bad.len()
}

/// Galera's stall seen by the direct client: the longest insert that was
/// running at `t` or started after it, and when it ended.
fn direct_stall(direct: &[Direct], t: Instant) -> Option<(Duration, Instant)> {
    direct
        .iter()
        .filter(|(s, e, _)| *e >= t && *s <= t + Duration::from_secs(20))
        .map(|(s, e, _)| (*e - *s, *e))
        .max_by_key(|(d, _)| *d)
}

/// The first acknowledged pool write that started after `t` on a node
/// other than `port`.
fn first_ack_elsewhere(writes: &[Rec], port: u16, t: Instant) -> Option<Instant> {
    writes
        .iter()
        .filter(|w| w.result.is_ok() && w.start >= t)
        .filter(|w| w.node.is_some_and(|n| n.port != port))
        .map(|w| w.end)
        .min()
}

fn writer_index(g: &Galera, pool: &Pool) -> usize {
    let w = pool.writer().expect("a writer");
    (0..g.len())
        .find(|&i| g.server(i).addr().to_string() == w)
        .unwrap_or_else(|| panic!("writer {w} is no node"))
}

fn failed(recs: &[Rec]) -> usize {
    recs.iter().filter(|r| r.result.is_err()).count()
}

fn summary(recs: &[Rec]) -> String {
    let mut by: HashMap<String, usize> = HashMap::new();
    for r in recs.iter().filter(|r| r.result.is_err()) {
        let (k, c, m) = r.result.as_ref().unwrap_err();
        let key = format!("{k:?}/{c:?}/{}", m.chars().take(70).collect::<String>());
        *by.entry(key).or_default() += 1;
    }
    format!("{by:?}")
}

/// This process's CPU time (user + system, every thread, ended ones too).
fn process_cpu() -> Duration {
    // SAFETY: getrusage writes the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(u.ru_utime) + tv(u.ru_stime)
}

/// Steady state at the defaults, before any other pool: per node and per
/// `ping_interval`, what the monitor costs each node (MariaDB's per-user
/// statistics of the monitor's own user, over 5 s, the pool otherwise idle)
/// and the client (this process's CPU time over the same 5 s, per probe: an
/// upper bound, the test kit's threads idle beside it). Printed as `COST`.
fn monitor_cost_per_node(g: &Galera) {
    let pool =
        Pool::from_url(&g.url("monitor_user=monitor&monitor_password=monitor-secret")).unwrap();
    // Let the first discovery and connections settle.
    thread::sleep(Duration::from_millis(2500));
    const Q: &str = "SELECT TOTAL_CONNECTIONS, SELECT_COMMANDS, OTHER_COMMANDS, BYTES_RECEIVED, \
                     BYTES_SENT, BUSY_TIME FROM information_schema.USER_STATISTICS WHERE USER = 'monitor'";
    let read = |i: usize| -> Vec<f64> {
        g.server(i)
            .query_rows(Q)
            .into_iter()
            .next()
            .map(|r| {
                r.into_iter()
                    .map(|v| v.unwrap_or_default().parse().unwrap_or(0.0))
                    .collect()
            })
            .unwrap_or_else(|| vec![0.0; 6])
    };
    let before: Vec<Vec<f64>> = (0..g.len()).map(read).collect();
    let cpu0 = process_cpu();
    let window = Duration::from_secs(5);
    thread::sleep(window);
    let cpu = process_cpu() - cpu0;
    let after: Vec<Vec<f64>> = (0..g.len()).map(read).collect();
    // ping_interval is 1 s.
    let n = window.as_secs_f64();
    for i in 0..g.len() {
        let d: Vec<f64> = (0..6).map(|k| (after[i][k] - before[i][k]) / n).collect();
        eprintln!(
            "COST node {i} ({}): per ping_interval {:.2} new connections, {:.2} SELECT + {:.2} other \
             statements, {:.0} bytes received and {:.0} bytes sent by the server, {:.1} us server busy time",
            g.server(i).addr(),
            d[0],
            d[1],
            d[2],
            d[3],
            d[4],
            d[5] * 1e6
        );
        assert!(d[0] < 0.5, "the monitor connects each tick: {d:?}");
        assert!(d[1] + d[2] <= 4.0, "statements per interval: {d:?}");
    }
    let probes = g.len() as f64 * n;
    eprintln!(
        "COST client: {:.1} ms of CPU over {} s for {probes:.0} probes: {:.0} us per probe (upper bound)",
        cpu.as_secs_f64() * 1e3,
        window.as_secs(),
        cpu.as_secs_f64() * 1e6 / probes
    );
    pool.close();
}

#[test]
fn galera_at_the_defaults() {
    let t_all = Instant::now();
    let mut g = Galera::start(GaleraOpts {
        // MariaDB's per-user statistics, for what the monitor costs.
        args: vec!["--userstat=1".into()],
        ..GaleraOpts::default()
    });
    setup(&g);
    eprintln!("TIMELINE cluster up in {}", secs(t_all.elapsed()));
    monitor_cost_per_node(&g);
    let (pool, log) = open(&g.url(""));
    let ports: Vec<u16> = g.servers().map(|s| s.port()).collect();

    // ---- at rest: Galera detected, one writer by the lowest
    // wsrep_local_index, reads spread over the two others.
    wait_until("a writer", Duration::from_secs(10), || {
        pool.writer().is_some()
    });
    wait_until("readers", Duration::from_secs(10), || {
        pool.host_stats()
            .iter()
            .filter(|h| !h.is_writer && h.health == staunch::HostHealth::Healthy)
            .count()
            == 2
    });
    let w0 = writer_index(&g, &pool);
    let lowest = (0..3).min_by_key(|&i| g.state(i).local_index).unwrap();
    assert_eq!(
        w0, lowest,
        "the writer is the node with the lowest wsrep_local_index"
    );
    let load = Load::start(&pool, None, 0);
    thread::sleep(Duration::from_secs(3));
    let (writes, reads, _) = load.stop();
    assert_eq!(failed(&writes), 0, "{}", summary(&writes));
    assert!(
        writes.iter().all(|w| w.node.unwrap().port == ports[w0]),
        "every write on the writer"
    );
    let mut per: HashMap<u16, usize> = HashMap::new();
    for r in reads.iter().filter(|r| r.result.is_ok()) {
        *per.entry(r.node.unwrap().port).or_default() += 1;
    }
    assert!(
        !per.contains_key(&ports[w0]),
        "no reads on the writer while two readers qualify: {per:?}"
    );
    let counts: Vec<usize> = per.values().copied().collect();
    assert_eq!(counts.len(), 2, "{per:?}");
    let (lo, hi) = (*counts.iter().min().unwrap(), *counts.iter().max().unwrap());
    assert!(
        (hi - lo) as f64 <= 0.2 * hi as f64,
        "reads spread within 20%: {per:?}"
    );
    assert_eq!(
        log.lock()
            .unwrap()
            .iter()
            .filter(|(_, e)| matches!(e, Event::SplitBrain { .. }))
            .count(),
        0,
        "every node writable is normal in Galera"
    );
    // A certification conflict: the writer's transaction loses to a commit
    // on another node. Plain, it surfaces as server error 1213; through
    // the opt-in helper, it runs again and succeeds.
    g.server(0)
        .sql("CREATE TABLE staunch_test.c (id INT PRIMARY KEY, v INT NOT NULL) ENGINE=InnoDB");
    g.server(0).sql("INSERT INTO staunch_test.c VALUES (1, 0)");
    let other = (0..3).find(|&i| i != w0).unwrap();
    let mut direct = mysql::Conn::new(g.server(other).app_opts()).unwrap();
    direct
        .query_drop("SET SESSION wsrep_sync_wait = 15")
        .unwrap();
    let conflict = |c: &mut staunch::PooledConn,
                    direct: &mut mysql::Conn,
                    clash: bool|
     -> staunch::Result<()> {
        c.query_drop("BEGIN")?;
        c.query_drop("UPDATE c SET v = v + 1 WHERE id = 1")?;
        if clash {
            direct
                .query_drop("UPDATE c SET v = v + 10 WHERE id = 1")
                .expect("the clashing write on another node");
        }
        c.query_drop("COMMIT")
    };
    let mut c = pool.get().unwrap();
    let e = conflict(&mut c, &mut direct, true).expect_err("a certification conflict");
    drop(c);
    assert!(e.is_conflict(), "{e}");
    assert_eq!(e.kind(), ErrorKind::Conflict);
    let mut runs = 0;
    pool.retry_on_conflict(3, |c| {
        runs += 1;
        conflict(c, &mut direct, runs == 1)
    })
    .unwrap();
    assert_eq!(runs, 2, "one conflict, then a clean run");
    // 10 (the first clash) + 10 (the second) + 1 (the run that committed).
    assert_eq!(
        g.server(w0)
            .query_i64("SELECT v FROM staunch_test.c WHERE id = 1"),
        Some(21)
    );
    // A non-conflict error is not retried.
    let mut runs = 0;
    let e = pool
        .retry_on_conflict(3, |c| {
            runs += 1;
            c.query_drop("SELECT * FROM no_such_table")
        })
        .unwrap_err();
    assert_eq!((runs, e.server_code()), (1, Some(1146)));
    eprintln!(
        "TIMELINE rest: writer node {w0}, {} writes, reads {per:?}",
        writes.len()
    );
    let mut seq = 1_000_000u64;

    // ---- the writer desynced: writes move without a failure.
    let w = writer_index(&g, &pool);
    let load = Load::start(&pool, None, seq);
    wait_until("writes flowing", Duration::from_secs(10), || {
        load.acked() >= 20
    });
    let t = Instant::now();
    g.desync(w, true);
    wait_until(
        "the writer moved",
        DETECT + SLACK + Duration::from_secs(2),
        || {
            pool.writer()
                .is_some_and(|x| x != g.server(w).addr().to_string())
        },
    );
    let moved = Instant::now();
    thread::sleep(Duration::from_secs(2));
    let (writes, reads, _) = load.stop();
    let late_bad = bad_served(&writes, t + DETECT + SLACK);
    let bad = assert_bad_within_window("desync writes", &writes)
        + assert_bad_within_window("desync reads", &reads);
    eprintln!(
        "TIMELINE writer desync: node {w} desynced at 0; writes moved {}; failed writes {}; statements on the desynced node {bad} (all within the detection window)",
        at(moved, t),
        failed(&writes)
    );
    assert_eq!(failed(&writes), 0, "no interruption: {}", summary(&writes));
    assert!(
        late_bad.is_empty(),
        "after detection nothing on the desynced node: {late_bad:?}"
    );
    assert!(bad_served(&reads, t + DETECT + SLACK).is_empty());
    g.desync(w, false);
    g.wait_synced(w);
    check_acked(&g, &writes, &[0, 1, 2]);
    thread::sleep(Duration::from_secs(2));
    assert_ne!(
        writer_index(&g, &pool),
        w,
        "no fail-back to the resynced node"
    );
    seq += 1_000_000;

    // ---- the writer isolated (non-Primary).
    let w = writer_index(&g, &pool);
    let survivor = (0..3).find(|&i| i != w).unwrap();
    let load = Load::start(&pool, Some(g.server(survivor).app_opts()), seq);
    wait_until("writes flowing", Duration::from_secs(10), || {
        load.acked() >= 20
    });
    thread::sleep(Duration::from_millis(500));
    let t = Instant::now();
    g.isolate(w, true);
    wait_until("writes resume elsewhere", Duration::from_secs(30), || {
        load.acked_on_other_than(ports[w], t) >= 10
    });
    thread::sleep(Duration::from_secs(1));
    let (writes, reads, direct) = load.stop();
    let moved = log
        .lock()
        .unwrap()
        .iter()
        .find(|(at, e)| *at >= t && matches!(e, Event::WriterChanged { .. }))
        .map(|(at, _)| *at);
    let (stall, stall_end) = direct_stall(&direct, t).expect("direct inserts");
    let first = first_ack_elsewhere(&writes, ports[w], t).unwrap();
    eprintln!(
        "TIMELINE writer isolated: node {w} isolated at 0; writes moved {}; Galera's stall (direct client on node {survivor}) {} ending {}; first pool write acked {} ({} after the survivors could commit); failed writes {} {}",
        moved.map_or("never".into(), |m| at(m, t)),
        secs(stall),
        at(stall_end, t),
        at(first, t),
        at(first, stall_end),
        failed(&writes),
        summary(&writes)
    );
    assert!(
        first <= stall_end + DETECT + SLACK,
        "first write within 1 s (+slack) of the survivors committing again"
    );
    assert_bad_within_window("isolate writes", &writes);
    assert_bad_within_window("isolate reads", &reads);
    // The node answers 1047 once it is out of the Primary component (after
    // Galera's own eviction timeouts); from the first such answer, the
    // monitor's detection window bounds how long statements can get it.
    let e1047: Vec<Instant> = writes
        .iter()
        .chain(&reads)
        .filter(|w| {
            matches!(&w.result, Err((_, Some(1047), _)))
                || matches!(&w.result, Err((_, _, m)) if m.contains("1047"))
        })
        .map(|w| w.start)
        .collect();
    if let Some(f) = e1047.iter().min() {
        let last = e1047.iter().max().unwrap();
        eprintln!(
            "TIMELINE writer isolated: 1047 answers from {} to {} ({} statements, {} before the first pool write acked elsewhere)",
            at(*f, t),
            at(*last, t),
            e1047.len(),
            e1047.iter().filter(|&&s| s < first).count()
        );
        assert!(
            *last <= *f + DETECT + SLACK,
            "no 1047 per statement once the monitor saw the node out"
        );
    }
    // The first 1047 a borrower meets closes that connection, routes new
    // borrows away from the node and wakes the monitor, whose probe finds it
    // out and cuts the node's other borrowed connections: each load thread
    // can meet 1047 on the statement it was running and, while the monitor
    // thread has not yet run (2 loaded cores), on one or two more borrows.
    // (Before this hook: 254 answers in 0.74 s, one per statement until the
    // monitor's next probe.)
    assert!(
        e1047.len() <= 3 * (WRITERS + 2),
        "{} statements answered 1047: a borrower's 1047 should have moved the others away",
        e1047.len()
    );
    // The commits in flight when the node left the Primary component (each
    // writer waits in COMMIT from the isolation on) are answered 1180 with
    // wsrep's "Not connected to Primary Component": the words the
    // "cannot serve now" rule takes as the node's fault (client/error.rs),
    // so the first of them closes its connection and raises the alarm
    // before any statement starts there and gets 1047.
    let e1180: Vec<&Rec> = writes
        .iter()
        .filter(|w| matches!(&w.result, Err((_, Some(1180), _))))
        .collect();
    eprintln!(
        "TIMELINE writer isolated: {} commits answered 1180 from {} ({:?})",
        e1180.len(),
        e1180
            .iter()
            .map(|w| w.end)
            .min()
            .map_or("-".into(), |f| at(f, t)),
        e1180
            .first()
            .map(|w| w.result.as_ref().unwrap_err().2.clone())
    );
    assert!(
        !e1180.is_empty(),
        "no commit was in flight on the isolated writer"
    );
    for w in &e1180 {
        let msg = &w.result.as_ref().unwrap_err().2;
        assert!(
            msg.contains("Not connected to Primary Component"),
            "a 1180 in words the rule does not take for a node fault: {msg}"
        );
    }
    g.isolate(w, false);
    g.wait_synced(w);
    check_acked(&g, &writes, &[0, 1, 2]);
    seq += 1_000_000;

    // ---- the writer killed (kill -9), then its rejoin through SST.
    let w = writer_index(&g, &pool);
    let survivor = (0..3).find(|&i| i != w).unwrap();
    let load = Load::start(&pool, Some(g.server(survivor).app_opts()), seq);
    wait_until("writes flowing", Duration::from_secs(10), || {
        load.acked() >= 20
    });
    thread::sleep(Duration::from_millis(500));
    let t = Instant::now();
    g.kill9(w);
    wait_until("writes resume elsewhere", Duration::from_secs(30), || {
        load.acked_on_other_than(ports[w], t) >= 10
    });
    let (stall_so_far, _) = {
        let d = load.direct.lock().unwrap().clone();
        direct_stall(&d, t).unwrap()
    };
    let t_rejoin = Instant::now();
    g.restart(w);
    let rejoined = Instant::now();
    let transfer = g.last_transfer(w);
    thread::sleep(Duration::from_secs(2));
    let (writes, reads, direct) = load.stop();
    let moved = log
        .lock()
        .unwrap()
        .iter()
        .find(|(at, e)| *at >= t && matches!(e, Event::WriterChanged { .. }))
        .map(|(at, _)| *at);
    let (stall, stall_end) = direct_stall(&direct, t).unwrap();
    let first = first_ack_elsewhere(&writes, ports[w], t).unwrap();
    eprintln!(
        "TIMELINE writer kill -9: node {w} killed at 0; writes moved {}; Galera's stall (direct client on node {survivor}) {} ending {} ({} before the rejoin); first pool write acked {} ({} after the survivors could commit); failed writes {} {}; rejoin by {transfer:?} {} -> {}",
        moved.map_or("never".into(), |m| at(m, t)),
        secs(stall),
        at(stall_end, t),
        secs(stall_so_far),
        at(first, t),
        at(first, stall_end),
        failed(&writes),
        summary(&writes),
        at(t_rejoin, t),
        at(rejoined, t),
    );
    assert_eq!(
        transfer,
        Some("SST"),
        "a node killed with -9 rejoins by SST"
    );
    assert!(first <= stall_end + DETECT + SLACK);
    let bad = assert_bad_within_window("kill/SST writes", &writes)
        + assert_bad_within_window("kill/SST reads (donor, joiner)", &reads);
    eprintln!("TIMELINE writer kill -9: statements on a non-Synced node (donor) within the detection window: {bad}");
    check_acked(&g, &writes, &[0, 1, 2]);
    seq += 1_000_000;

    // ---- a rolling restart (graceful, IST) of every node under load.
    let load = Load::start(&pool, None, seq);
    wait_until("writes flowing", Duration::from_secs(10), || {
        load.acked() >= 20
    });
    let t = Instant::now();
    let mut steps = Vec::new();
    for i in 0..3 {
        let s = Instant::now();
        g.restart(i);
        steps.push(format!(
            "node {i} {} -> {} ({:?})",
            at(s, t),
            at(Instant::now(), t),
            g.last_transfer(i)
        ));
        thread::sleep(Duration::from_secs(1));
    }
    thread::sleep(Duration::from_secs(1));
    let (writes, reads, _) = load.stop();
    let moves = log
        .lock()
        .unwrap()
        .iter()
        .filter(|(at, e)| *at >= t && matches!(e, Event::WriterChanged { .. }))
        .count();
    eprintln!(
        "TIMELINE rolling restart: {}; writer moves {moves}; {} writes acked, {} failed {}",
        steps.join(", "),
        writes.iter().filter(|w| w.result.is_ok()).count(),
        failed(&writes),
        summary(&writes)
    );
    let bad = assert_bad_within_window("rolling writes", &writes)
        + assert_bad_within_window("rolling reads", &reads);
    eprintln!("TIMELINE rolling restart: statements on a non-Synced node within the detection window: {bad}");
    // Each restart moves the writer at most twice: off the node being
    // stopped, and off the node chosen as its donor (rsync IST desyncs
    // the donor); never back to a node for returning (no fail-back).
    assert!(moves <= 6, "writer moves: {moves}");
    check_acked(&g, &writes, &[0, 1, 2]);
    seq += 1_000_000;

    // ---- quorum lost: two nodes down. Writes fail fast, none hangs.
    let w = writer_index(&g, &pool);
    let others: Vec<usize> = (0..3).filter(|&i| i != w).collect();
    let load = Load::start(&pool, None, seq);
    wait_until("writes flowing", Duration::from_secs(10), || {
        load.acked() >= 20
    });
    let t = Instant::now();
    g.kill9(others[0]);
    g.kill9(w);
    let survivor = others[1];
    // Quorum is lost when the survivor leaves the Primary component (its
    // own timeouts, ~6 s); a moment without a writer before that (a late
    // probe on a loaded machine) is not it: the survivor still commits
    // then, and writes may go back to it.
    wait_until(
        "no writer, the survivor out of the Primary component",
        Duration::from_secs(30),
        || pool.writer().is_none() && g.state(survivor).cluster_status != "Primary",
    );
    let refused = Instant::now();
    thread::sleep(Duration::from_secs(3));
    let (writes, reads, _) = load.stop();
    let after: Vec<&Rec> = writes.iter().filter(|w| w.start >= refused).collect();
    let slowest = after
        .iter()
        .map(|w| w.end - w.start)
        .max()
        .unwrap_or_default();
    eprintln!(
        "TIMELINE quorum lost: nodes {} and {w} killed at 0; no writer {}; then {} writes, all failed in at most {} ({}); survivor state {:?}",
        others[0],
        at(refused, t),
        after.len(),
        secs(slowest),
        summary(&writes),
        g.state(survivor)
    );
    assert!(!after.is_empty());
    for w in &after {
        let (kind, _, msg) = w
            .result
            .as_ref()
            .expect_err("no write succeeds without quorum");
        assert_eq!(*kind, Some(ErrorKind::NoWriter), "{msg}");
        assert!(msg.contains("Primary component"), "a clear error: {msg}");
    }
    assert!(
        slowest < Duration::from_millis(100),
        "writes fail fast: {}",
        secs(slowest)
    );
    // The survivor answers information_schema reads once non-Primary,
    // until the monitor sees it out.
    assert_bad_within_window("quorum reads", &reads);
    let all_acked: HashSet<(usize, u64)> = writes
        .iter()
        .filter(|w| w.result.is_ok())
        .map(|w| (w.thread, w.seq))
        .collect();
    eprintln!(
        "TIMELINE quorum lost: {} writes acknowledged before",
        all_acked.len()
    );
    pool.close();
    eprintln!("TIMELINE whole run {}", secs(t_all.elapsed()));
}

/// Issue #49, conformance `conf_least_privilege`: the application's user
/// with `ALL ON staunch_test.*` only (`least`, no SLAVE MONITOR), at the
/// defaults. Before, the probe's refused `SHOW SLAVE STATUS` hid Galera's
/// status and no write ever succeeded. Two pools side by side on one
/// cluster (a cluster costs ~40 s to start here): `least` alone, and
/// `least` with the test kit's `monitor` user as `monitor_user`. Writes and
/// reads flow through both; the first tells the missing privilege exactly
/// once, the second never; the writer desynced, isolated, then killed is
/// followed by both (within the detection window of Galera's own stall). A
/// third pool forcing `topology=replication` on these nodes is told the
/// contradiction by name at its first look.
#[test]
fn conf_least_privilege_galera() {
    let t_all = Instant::now();
    let mut g = Galera::start(GaleraOpts::default());
    setup(&g);
    eprintln!("TIMELINE cluster up in {}", secs(t_all.elapsed()));
    let ports: Vec<u16> = g.servers().map(|s| s.port()).collect();
    let missing = |e: &Event| matches!(e, Event::MonitorPrivilegeMissing { .. });

    let (forced, forced_log) = open(&g.url_as("least", "least-secret", "topology=replication"));
    let contradicted = |log: &Log| {
        log.lock()
            .unwrap()
            .iter()
            .filter(|(_, e)| matches!(e, Event::TopologyContradicted { .. }))
            .map(|(_, e)| e.to_string())
            .collect::<Vec<_>>()
    };
    wait_until("the contradiction told", Duration::from_secs(10), || {
        !contradicted(&forced_log).is_empty()
    });
    thread::sleep(Duration::from_millis(300));
    let told = contradicted(&forced_log);
    forced.close();
    eprintln!("EVENT {}", told[0]);
    assert_eq!(told.len(), 1, "{told:?}");
    assert!(
        told[0].contains("topology=replication") && told[0].contains("a Galera cluster"),
        "{told:?}"
    );

    let (least, least_log) = open(&g.url_as("least", "least-secret", ""));
    let (mon, mon_log) = open(&g.url_as(
        "least",
        "least-secret",
        "monitor_user=monitor&monitor_password=monitor-secret",
    ));
    for p in [&least, &mon] {
        wait_until("a writer", Duration::from_secs(10), || p.writer().is_some());
    }
    // Loads through both pools, and a direct client on a node other than
    // the writer (Galera's own stall); phase `k` numbers its writes apart.
    let start = |k: u64| {
        // Each pool keeps its writer while it stays Synced (no failback),
        // and after a fault each chose anew from the view its probe saw:
        // two pools may hold different writers, each by the rule. The
        // fault goes to the least-privilege pool's writer; the other pool
        // is then checked to keep writing (its own writer's faults are
        // the earlier phases').
        let agreed = (0..50).any(|_| {
            let same = writer_index(&g, &least) == writer_index(&g, &mon);
            if !same {
                thread::sleep(Duration::from_millis(100));
            }
            same
        });
        let w = writer_index(&g, &least);
        if !agreed {
            eprintln!(
                "phase {k}: the pools hold different writers (least alone: node {w}, with \
                 monitor_user: node {}); the fault goes to node {w}",
                writer_index(&g, &mon)
            );
        }
        let survivor = (0..3).find(|&i| i != w).unwrap();
        let a = Load::start(&least, Some(g.server(survivor).app_opts()), k << 32);
        let b = Load::start(&mon, None, (1 << 40) + (k << 32));
        for l in [&a, &b] {
            wait_until("writes flowing", Duration::from_secs(10), || {
                l.acked() >= 20
            });
            wait_until("reads flowing", Duration::from_secs(10), || {
                l.reads
                    .lock()
                    .unwrap()
                    .iter()
                    .filter(|r| r.result.is_ok())
                    .count()
                    >= 10
            });
        }
        (w, a, b)
    };
    let mut all: Vec<Rec> = Vec::new();

    // The writer desynced: both pools move writes off it, none fails.
    let (w, a, b) = start(0);
    let t = Instant::now();
    g.desync(w, true);
    for p in [&least, &mon] {
        wait_until("writes moved off the desynced node", DETECT + SLACK, || {
            writer_index(&g, p) != w
        });
    }
    let moved = t.elapsed();
    thread::sleep(Duration::from_millis(300));
    let (wa, _, _) = a.stop();
    let (wb, _, _) = b.stop();
    g.desync(w, false);
    g.wait_synced(w);
    eprintln!(
        "TIMELINE least privilege, Galera writer desynced: both pools moved within {}; failed \
         writes: least alone {}, least + monitor_user {}",
        secs(moved),
        failed(&wa),
        failed(&wb)
    );
    assert_eq!((failed(&wa), failed(&wb)), (0, 0));
    all.extend(wa);
    all.extend(wb);

    // After a fault on the writer `w` at `t`: both pools' writes resume on
    // a survivor, the one without a monitor user as the one with, each
    // within Galera's own stall (a direct client's) + one probe + slack.
    let followed = |what: &str, w: usize, t: Instant, a: Load, b: Load| {
        for l in [&a, &b] {
            wait_until("writes resume elsewhere", Duration::from_secs(30), || {
                l.acked_on_other_than(ports[w], t) >= 10
            });
        }
        let (wa, _, direct) = a.stop();
        let (wb, _, _) = b.stop();
        let (stall, stall_end) = direct_stall(&direct, t).unwrap();
        let (fa, fb) = (
            first_ack_elsewhere(&wa, ports[w], t).unwrap(),
            first_ack_elsewhere(&wb, ports[w], t).unwrap(),
        );
        eprintln!(
            "TIMELINE least privilege, Galera writer {what} at 0: Galera's stall {} ending {}; \
             first write elsewhere: least alone {} ({} after the stall), least + monitor_user {} \
             ({} after)",
            secs(stall),
            at(stall_end, t),
            at(fa, t),
            at(fa, stall_end),
            at(fb, t),
            at(fb, stall_end),
        );
        assert!(fa <= stall_end + DETECT + SLACK, "{what}: least alone");
        assert!(
            fb <= stall_end + DETECT + SLACK,
            "{what}: least + monitor_user"
        );
        [wa, wb]
    };

    // The writer isolated (gmcast.isolate).
    let (w, a, b) = start(1);
    let t = Instant::now();
    g.isolate(w, true);
    let recs = followed("isolated", w, t, a, b);
    g.isolate(w, false);
    g.wait_synced(w);
    all.extend(recs.into_iter().flatten());

    // The writer killed (kill -9).
    let (w, a, b) = start(2);
    let t = Instant::now();
    g.kill9(w);
    let recs = followed("kill -9", w, t, a, b);
    least.close();
    mon.close();
    all.extend(recs.into_iter().flatten());
    let told: Vec<String> = least_log
        .lock()
        .unwrap()
        .iter()
        .filter(|(_, e)| missing(e))
        .map(|(_, e)| e.to_string())
        .collect();
    eprintln!("EVENT {}", told.first().map_or("none", |s| s.as_str()));
    assert_eq!(told.len(), 1, "{told:?}");
    assert!(
        told[0].contains("SHOW SLAVE STATUS")
            && told[0].contains("SLAVE MONITOR")
            && told[0].contains("monitor_user")
            && !told[0].contains("least-secret"),
        "{told:?}"
    );
    let mon_told = mon_log
        .lock()
        .unwrap()
        .iter()
        .filter(|(_, e)| missing(e))
        .count();
    assert_eq!(mon_told, 0);
    let survivors: Vec<usize> = (0..3).filter(|&i| i != w).collect();
    check_acked(&g, &all, &survivors);
}
