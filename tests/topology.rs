//! Primary/replica routing and the primary monitor (incidents B and D, issue
//! #12), against real MariaDB primaries and replicas from the test kit.
//!
//! Every replica runs with MariaDB's stock settings (`slave_net_timeout` 60 s,
//! heartbeat every 30 s). The failover tests run the pool with every monitor
//! knob at its default (ping_interval 1s, ping_timeout 2s, failure_threshold
//! 4, secondary_check replicas, min_failover_interval 60s), a writer every
//! 20 ms and a reader every 20 ms, and check which server executed every
//! acknowledged write: each write is `BEGIN; SELECT @@server_id; INSERT (seq,
//! @@server_id); COMMIT`, and the rows are read back from the servers.
//! Timelines are printed (`TIMELINE ...` lines on stderr); timing is asserted
//! only as the documented bounds plus CI slack.

use staunch_testkit as support;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use mysql::prelude::Queryable as _;
use staunch::prelude::*;
use staunch::{ErrorKind, Event, HostHealth, Pool};
use support::{MariaDb, Mode, Proxy, Topology, TopologyOpts};

/// Added to every documented bound: the tests share 2 loaded cores.
const SLACK: Duration = Duration::from_millis(1500);
/// The documented bound on the first write after a promotion or a planned
/// switchover, at the defaults.
const FOLLOW_BOUND: Duration = Duration::from_secs(1);

/// Server ids the test kit gives: the primary 1, replica i 2 + i.
const PRIMARY_ID: u64 = 1;
fn replica_id(i: usize) -> u64 {
    2 + i as u64
}

/// A primary and `n` stock replicas (the template's grants: app may write
/// on read-only replicas).
fn cluster(n: usize, replica_args: &[&str]) -> (MariaDb, Vec<MariaDb>) {
    Topology::start(TopologyOpts {
        replicas: n,
        replica_args: replica_args.iter().map(|s| s.to_string()).collect(),
        app_read_only_admin: true,
        ..Default::default()
    })
    .into_parts()
}

/// A primary and `n` stock replicas where `read_only` stops the app's writes,
/// with the workload's table.
fn stock(n: usize) -> Topology {
    let t = Topology::start(TopologyOpts {
        replicas: n,
        ..Default::default()
    });
    t.primary().sql(
        "CREATE TABLE staunch_test.w (seq BIGINT PRIMARY KEY, sid INT UNSIGNED NOT NULL) ENGINE=InnoDB",
    );
    t.catch_up();
    t
}

fn url(hosts: &[u16], params: &str) -> String {
    let hs: Vec<String> = hosts.iter().map(|p| format!("127.0.0.1:{p}")).collect();
    format!(
        "mysql://app:app-secret@{}/staunch_test?topology=replication&{params}",
        hs.join(",")
    )
}

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

fn first(log: &Log, pred: impl Fn(&Event) -> bool) -> Option<Instant> {
    log.lock()
        .unwrap()
        .iter()
        .find(|(_, e)| pred(e))
        .map(|(t, _)| *t)
}

fn count(log: &Log, pred: impl Fn(&Event) -> bool) -> usize {
    log.lock().unwrap().iter().filter(|(_, e)| pred(e)).count()
}

/// No primary was declared dead and the writer never changed.
fn assert_no_failover(log: &Log) {
    let failovers = events(log, |e| {
        matches!(e, Event::PrimaryDead { .. } | Event::WriterChanged { .. })
    });
    assert!(failovers.is_empty(), "no failover expected: {failovers:?}");
}

fn events(log: &Log, pred: impl Fn(&Event) -> bool) -> Vec<(Instant, Event)> {
    log.lock()
        .unwrap()
        .iter()
        .filter(|(_, e)| pred(e))
        .cloned()
        .collect()
}

fn wait_until(what: &str, limit: Duration, f: impl Fn() -> bool) {
    let t = Instant::now();
    while !f() {
        assert!(t.elapsed() < limit, "timed out waiting for: {what}");
        thread::sleep(Duration::from_millis(10));
    }
}

/// As [`wait_until`], showing the monitor's events on a timeout.
fn wait_until_or_show(what: &str, log: &Log, limit: Duration, f: impl Fn() -> bool) {
    let t = Instant::now();
    while !f() {
        if t.elapsed() >= limit {
            let seen: Vec<String> = log
                .lock()
                .unwrap()
                .iter()
                .filter(|(_, e)| {
                    !matches!(
                        e,
                        Event::Connected { .. }
                            | Event::Closed { .. }
                            | Event::ConnectFailed { .. }
                    )
                })
                .map(|(at, e)| format!("{:.3}s {e:?}", (*at - t).as_secs_f64()))
                .collect();
            panic!("timed out waiting for: {what}; monitor events: {seen:#?}");
        }
        thread::sleep(Duration::from_millis(10));
    }
}

fn port_of(c: &mut staunch::PooledConn) -> u16 {
    c.query_first::<u16, _>("SELECT @@port").unwrap().unwrap()
}

fn ep(s: &MariaDb) -> String {
    format!("127.0.0.1:{}", s.port())
}

fn secs(d: Duration) -> String {
    format!("{:.3}s", d.as_secs_f64())
}

/// `a - b` in seconds, signed, for timelines.
fn at(a: Instant, b: Instant) -> String {
    if a >= b {
        format!("+{:.3}s", (a - b).as_secs_f64())
    } else {
        format!("-{:.3}s", (b - a).as_secs_f64())
    }
}

// ---- the workload -------------------------------------------------------

#[derive(Clone, Debug)]
#[allow(dead_code)] // the fields are shown in assertion messages
enum WriteErr {
    /// `get()` failed: no connection.
    Get(ErrorKind, String),
    /// A statement failed (server error code if any).
    Stmt(Option<u16>, String),
}

/// One write: `BEGIN; SELECT @@server_id; INSERT (seq, @@server_id); COMMIT`.
#[derive(Clone, Debug)]
struct WriteRec {
    seq: u64,
    start: Instant,
    end: Instant,
    /// The connection's server, read inside the transaction.
    sid: Option<u64>,
    /// Ok: COMMIT returned Ok (acknowledged).
    result: Result<(), WriteErr>,
}

#[derive(Clone, Debug)]
struct ReadRec {
    start: Instant,
    sid: Option<u64>,
}

/// A writer and a reader, each every 20 ms, through the pool.
struct Load {
    stop: Arc<AtomicBool>,
    writes: Arc<Mutex<Vec<WriteRec>>>,
    reads: Arc<Mutex<Vec<ReadRec>>>,
    threads: Vec<thread::JoinHandle<()>>,
}

impl Load {
    /// Starts the load and waits (up to 10 s) until `n` writes were
    /// acknowledged.
    fn flowing(pool: &Pool, n: usize) -> Load {
        let load = Load::start(pool);
        wait_until("writes flowing", Duration::from_secs(10), || {
            load.acked() >= n
        });
        load
    }

    fn start(pool: &Pool) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let writes = Arc::new(Mutex::new(Vec::new()));
        let reads = Arc::new(Mutex::new(Vec::new()));
        let w = {
            let (pool, stop, writes) = (pool.clone(), stop.clone(), writes.clone());
            thread::spawn(move || {
                let mut seq = 0u64;
                while !stop.load(SeqCst) {
                    seq += 1;
                    let start = Instant::now();
                    let mut sid = None;
                    let result = match pool.get() {
                        Err(e) => Err(WriteErr::Get(e.kind(), e.to_string())),
                        Ok(mut c) => (|| -> staunch::Result<()> {
                            c.query_drop("BEGIN")?;
                            sid = c.query_first::<u64, _>("SELECT @@server_id")?;
                            c.exec_drop(
                                "INSERT INTO w (seq, sid) VALUES (?, @@server_id)",
                                (seq,),
                            )?;
                            c.query_drop("COMMIT")
                        })()
                        .map_err(|e| WriteErr::Stmt(e.server_code(), e.to_string())),
                    };
                    writes.lock().unwrap().push(WriteRec {
                        seq,
                        start,
                        end: Instant::now(),
                        sid,
                        result,
                    });
                    thread::sleep(Duration::from_millis(20));
                }
            })
        };
        let r = {
            let (pool, stop, reads) = (pool.clone(), stop.clone(), reads.clone());
            thread::spawn(move || {
                while !stop.load(SeqCst) {
                    let start = Instant::now();
                    let sid = pool.get_read().ok().and_then(|mut c| {
                        c.query_first::<u64, _>("SELECT @@server_id").ok().flatten()
                    });
                    reads.lock().unwrap().push(ReadRec { start, sid });
                    thread::sleep(Duration::from_millis(20));
                }
            })
        };
        Load {
            stop,
            writes,
            reads,
            threads: vec![w, r],
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

    /// The first acknowledged write on server `sid` that started after `t`.
    fn first_ack_on(&self, sid: u64, t: Instant) -> Option<Instant> {
        self.writes
            .lock()
            .unwrap()
            .iter()
            .find(|w| w.result.is_ok() && w.sid == Some(sid) && w.start >= t)
            .map(|w| w.end)
    }

    fn stop(self) -> (Vec<WriteRec>, Vec<ReadRec>) {
        self.stop.store(true, SeqCst);
        for t in self.threads {
            t.join().unwrap();
        }
        let w = self.writes.lock().unwrap().clone();
        let r = self.reads.lock().unwrap().clone();
        (w, r)
    }
}

/// `seq -> sid` of every row of `w` on `server`.
fn rows(server: &MariaDb) -> HashMap<u64, u64> {
    server
        .query_rows("SELECT seq, sid FROM staunch_test.w")
        .into_iter()
        .map(|r| {
            (
                r[0].as_deref().unwrap().parse().unwrap(),
                r[1].as_deref().unwrap().parse().unwrap(),
            )
        })
        .collect()
}

/// Every acknowledged write is on the server that reported executing it,
/// with that server's id in the row. `servers`: (server id, its rows).
fn check_acked_where_executed(writes: &[WriteRec], servers: &[(u64, &HashMap<u64, u64>)]) {
    let mut n = 0;
    for w in writes.iter().filter(|w| w.result.is_ok()) {
        let sid = w.sid.expect("an acknowledged write read its server id");
        let (_, rows) = servers
            .iter()
            .find(|(id, _)| *id == sid)
            .unwrap_or_else(|| panic!("write {} acknowledged by unknown server {sid}", w.seq));
        assert_eq!(
            rows.get(&w.seq),
            Some(&sid),
            "acknowledged write {} (server {sid}) is not on server {sid}",
            w.seq
        );
        n += 1;
    }
    assert!(n > 0, "no acknowledged write at all");
}

/// Acknowledged writes executed by `sid` that started after `t`.
fn acked_on_after(writes: &[WriteRec], sid: u64, t: Instant) -> usize {
    writes
        .iter()
        .filter(|w| w.result.is_ok() && w.sid == Some(sid) && w.end > t)
        .count()
}

fn writer_changed_to(log: &Log, to: &str) -> Option<Instant> {
    first(
        log,
        |e| matches!(e, Event::WriterChanged { to: t, .. } if t == to),
    )
}

/// (when, transactions, missing, confirmed) of every UnreplicatedWrites.
fn loss_reports(log: &Log) -> Vec<(Instant, u64, String, bool)> {
    events(log, |e| matches!(e, Event::UnreplicatedWrites { .. }))
        .into_iter()
        .map(|(t, e)| match e {
            Event::UnreplicatedWrites {
                transactions,
                missing,
                confirmed,
                ..
            } => (t, transactions, missing, confirmed),
            _ => unreachable!(),
        })
        .collect()
}

// ---- routing ------------------------------------------------------------

#[test]
fn writes_go_to_the_primary_and_reads_to_replicas() {
    let (p, rs) = cluster(2, &[]);
    let (pool, log) = open(&url(
        &[p.port(), rs[0].port(), rs[1].port()],
        "ping_interval=200ms",
    ));
    assert_eq!(port_of(&mut pool.get().unwrap()), p.port());
    wait_until("replicas checked", Duration::from_secs(10), || {
        pool.host_stats()
            .iter()
            .filter(|h| h.health == HostHealth::Healthy)
            .count()
            == 3
    });
    let mut seen = std::collections::HashSet::new();
    // Connection number -> the port it was seen on: one number names one
    // connection across every host's pool (the C ABI's `staunch_conn_id`).
    let mut numbers = HashMap::new();
    for _ in 0..40 {
        let mut held = Vec::new();
        for _ in 0..3 {
            let mut c = pool.get_read().unwrap();
            let port = port_of(&mut c);
            seen.insert(port);
            let was = numbers.insert(c.id(), port);
            assert!(
                was.map_or(true, |w| w == port),
                "connection number {} on ports {was:?} and {port}",
                c.id()
            );
            held.push(c);
        }
    }
    let connected: Vec<u64> = events(&log, |e| matches!(e, Event::Connected { .. }))
        .into_iter()
        .filter_map(|(_, e)| match e {
            Event::Connected { id, .. } => Some(id),
            _ => None,
        })
        .collect();
    let distinct: std::collections::HashSet<_> = connected.iter().collect();
    assert!(connected.len() >= 3, "{connected:?}");
    assert_eq!(
        distinct.len(),
        connected.len(),
        "numbers repeat across hosts: {connected:?}"
    );
    assert!(
        seen.contains(&rs[0].port()) && seen.contains(&rs[1].port()),
        "{seen:?}"
    );
    assert!(
        !seen.contains(&p.port()),
        "reads must not go to the primary while replicas qualify"
    );
    let hs = pool.host_stats();
    assert_eq!(hs.len(), 3);
    assert!(hs[0].is_writer && !hs[1].is_writer && !hs[2].is_writer);
    assert_eq!(pool.writer(), Some(ep(&p)));
    // Every host's threads and the monitor exit (the monitor cuts its probes
    // in flight off).
    let started = Instant::now();
    assert!(
        pool.close_and_join(Duration::from_secs(10)),
        "pool threads still running after {:?}",
        started.elapsed()
    );
}

/// Incident B: replica connections left idle past the replica's wait_timeout
/// are validated on their own; no error reaches the caller.
#[test]
fn incident_b_idle_replica_connections_are_validated() {
    let (p, rs) = cluster(2, &["--wait-timeout=2"]);
    let (pool, _log) = open(&url(
        &[p.port(), rs[0].port(), rs[1].port()],
        "max_size=4&keepalive_interval=off&ping_interval=300ms",
    ));
    // Open connections on both replicas and leave them idle.
    let held: Vec<_> = (0..8).map(|_| pool.get_read().unwrap()).collect();
    drop(held);
    thread::sleep(Duration::from_millis(3000));
    let errors = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let ts: Vec<_> = (0..4)
        .map(|_| {
            let (pool, errors) = (pool.clone(), errors.clone());
            thread::spawn(move || {
                for i in 0..50u32 {
                    let r = pool
                        .get_read()
                        .map_err(|e| e.to_string())
                        .and_then(|mut c| {
                            c.exec_first::<u32, _, _>("SELECT ?", (i,))
                                .map_err(|e| e.to_string())
                        });
                    if r != Ok(Some(i)) {
                        errors.fetch_add(1, SeqCst);
                    }
                }
            })
        })
        .collect();
    for t in ts {
        t.join().unwrap();
    }
    let hs = pool.host_stats();
    let replica_validation_failures: u64 =
        hs[1..].iter().map(|h| h.stats.validation_failures).sum();
    println!("incident B: errors seen by callers 0? {}; replica validation failures {replica_validation_failures}", errors.load(SeqCst));
    assert_eq!(errors.load(SeqCst), 0);
    assert!(
        replica_validation_failures >= 2,
        "the expired replica connections were caught: {hs:?}"
    );
}

// ---- following promotions at the defaults (issue #12) --------------------

/// Incident D as the issue saw it: the primary freezes; 3 s later an operator
/// promotes replica 0 (replica 1 stays on the frozen primary, whose I/O
/// thread still says Yes); later the old primary thaws, still writable.
#[test]
fn frozen_primary_promotion_followed_then_thawed_primary_is_stale() {
    let t = stock(2);
    let (p, r0) = (t.primary(), t.replica(0));
    let (pool, log) = open(&t.url(""));
    let load = Load::flowing(&pool, 20);
    let frozen = Instant::now();
    p.freeze();
    thread::sleep(Duration::from_secs(3).saturating_sub(frozen.elapsed()));
    t.promote(0);
    let promoted = Instant::now();
    wait_until(
        "writes on the promoted replica",
        Duration::from_secs(10),
        || load.first_ack_on(replica_id(0), promoted).is_some(),
    );
    thread::sleep(Duration::from_secs(2));
    let thawed = Instant::now();
    p.thaw();
    wait_until("stale primary reported", Duration::from_secs(10), || {
        count(&log, |e| matches!(e, Event::StalePrimaryWritable { .. })) > 0
    });
    wait_until("final loss report", Duration::from_secs(10), || {
        loss_reports(&log).iter().any(|r| r.3)
    });
    // Reads and writes go on while the stale primary is writable.
    thread::sleep(Duration::from_millis(1500));
    let first_write = load.first_ack_on(replica_id(0), promoted).unwrap();
    let (writes, reads) = load.stop();
    pool.close();

    let changed = writer_changed_to(&log, &ep(r0)).expect("WriterChanged to replica 0");
    let stale_at = first(&log, |e| matches!(e, Event::StalePrimaryWritable { endpoint, writer } if *endpoint == ep(p) && writer.as_deref() == Some(&ep(r0)[..]))).expect("StalePrimaryWritable names the old primary and the writer");
    let suspected = first(&log, |e| matches!(e, Event::PrimarySuspected { .. }));
    eprintln!(
        "TIMELINE freeze+promotion+thaw (defaults, stock replicas): freeze 0; first failed probe {}; \
         promotion done {}; writer changed {} ({} after the promotion); first write on the new primary {} \
         ({} after the promotion); thaw {}; stale primary reported {} ({} after the thaw); \
         writes acknowledged {} ({} on the old primary, all before the freeze)",
        suspected.map_or("-".into(), |s| at(s, frozen)),
        at(promoted, frozen),
        at(changed, frozen),
        secs(changed - promoted),
        at(first_write, frozen),
        secs(first_write - promoted),
        at(thawed, frozen),
        at(stale_at, frozen),
        secs(stale_at - thawed),
        writes.iter().filter(|w| w.result.is_ok()).count(),
        writes
            .iter()
            .filter(|w| w.result.is_ok() && w.sid == Some(PRIMARY_ID))
            .count(),
    );
    // Positive evidence: followed, not declared dead; one move.
    assert_eq!(count(&log, |e| matches!(e, Event::PrimaryDead { .. })), 0);
    assert_eq!(count(&log, |e| matches!(e, Event::WriterChanged { .. })), 1);
    assert!(
        first_write - promoted <= FOLLOW_BOUND + SLACK,
        "first write {:?} after the promotion",
        first_write - promoted
    );
    // Nothing acknowledged on the old primary after the freeze, nor after
    // the move (it was frozen, then stale).
    assert_eq!(acked_on_after(&writes, PRIMARY_ID, frozen), 0);
    assert!(writes
        .iter()
        .filter(|w| w.result.is_ok() && w.end > changed)
        .all(|w| w.sid == Some(replica_id(0))));
    let (rp, r0rows) = (rows(p), rows(r0));
    check_acked_where_executed(&writes, &[(PRIMARY_ID, &rp), (replica_id(0), &r0rows)]);
    // Reads: never the stale primary, never replica 1 (it follows the old
    // primary), once writes moved.
    let bad: Vec<_> = reads
        .iter()
        .filter(|r| r.start > changed + Duration::from_millis(50))
        .filter(|r| r.sid == Some(PRIMARY_ID) || r.sid == Some(replica_id(1)))
        .collect();
    assert!(bad.is_empty(), "reads after the move: {bad:?}");
    assert!(reads.iter().any(|r| r.start > stale_at && r.sid.is_some()));
    let hs = pool.host_stats();
    assert_eq!(hs[0].health, HostHealth::Stale, "{:?}", hs[0]);
    assert_ne!(hs[2].health, HostHealth::Healthy, "{:?}", hs[2]);
    // Loss: nothing acknowledged was lost; the final report counts what the
    // old primary committed beyond the promoted replica (at most an
    // unacknowledged statement it ran when it thawed).
    let reports = loss_reports(&log);
    let only_old = rp.keys().filter(|s| !r0rows.contains_key(s)).count() as u64;
    let fin = reports.iter().find(|r| r.3).unwrap();
    assert!(
        fin.1 <= only_old,
        "{reports:?} vs {only_old} rows only on the old primary"
    );
    assert!(
        reports.iter().any(|r| !r.3),
        "a first report at the move: {reports:?}"
    );
}

/// The promotion comes at once after the freeze: the writer's probe is
/// simply late (rule 2's LATE), no probe has failed yet.
#[test]
fn frozen_primary_promoted_at_once() {
    let t = stock(1);
    let (p, r0) = (t.primary(), t.replica(0));
    let (pool, log) = open(&t.url(""));
    let load = Load::flowing(&pool, 20);
    let frozen = Instant::now();
    p.freeze();
    t.promote(0);
    let promoted = Instant::now();
    wait_until(
        "writes on the promoted replica",
        Duration::from_secs(10),
        || load.first_ack_on(replica_id(0), promoted).is_some(),
    );
    let first_write = load.first_ack_on(replica_id(0), promoted).unwrap();
    let (writes, _) = load.stop();
    pool.close();
    p.thaw();
    let changed = writer_changed_to(&log, &ep(r0)).expect("WriterChanged");
    eprintln!(
        "TIMELINE freeze+immediate promotion (defaults): freeze 0; promotion done {}; writer changed {}; \
         first write on the new primary {} ({} after the promotion)",
        at(promoted, frozen),
        at(changed, frozen),
        at(first_write, frozen),
        secs(first_write - promoted)
    );
    assert_eq!(count(&log, |e| matches!(e, Event::PrimaryDead { .. })), 0);
    // Documented: within ping_interval + LATE (250 ms) + a fast check (200 ms)
    // of the freeze.
    let bound = Duration::from_millis(1450);
    assert!(
        changed - frozen <= bound + SLACK,
        "writes moved {:?} after the freeze",
        changed - frozen
    );
    assert_eq!(acked_on_after(&writes, PRIMARY_ID, frozen), 0);
    let (rp, r0rows) = (rows(p), rows(r0));
    check_acked_where_executed(&writes, &[(PRIMARY_ID, &rp), (replica_id(0), &r0rows)]);
}

#[test]
fn killed_primary_promotion_followed_and_restarted_primary_is_stale() {
    let mut t = stock(2);
    let (pool, log) = open(&t.url(""));
    let load = Load::flowing(&pool, 20);
    let killed = Instant::now();
    t.primary_mut().kill9();
    thread::sleep(Duration::from_millis(1500).saturating_sub(killed.elapsed()));
    t.promote(0);
    let promoted = Instant::now();
    wait_until(
        "writes on the promoted replica",
        Duration::from_secs(10),
        || load.first_ack_on(replica_id(0), promoted).is_some(),
    );
    thread::sleep(Duration::from_secs(1));
    let restarted_at = Instant::now();
    t.primary_mut().restart();
    let restarted = Instant::now();
    wait_until("stale primary reported", Duration::from_secs(10), || {
        count(&log, |e| matches!(e, Event::StalePrimaryWritable { .. })) > 0
    });
    thread::sleep(Duration::from_millis(500));
    let first_write = load.first_ack_on(replica_id(0), promoted).unwrap();
    let (writes, reads) = load.stop();
    pool.close();
    let r0 = t.replica(0);
    let changed = writer_changed_to(&log, &ep(r0)).expect("WriterChanged");
    let stale_at = first(&log, |e| matches!(e, Event::StalePrimaryWritable { .. })).unwrap();
    let suspected = first(&log, |e| matches!(e, Event::PrimarySuspected { .. }));
    eprintln!(
        "TIMELINE kill -9 + promotion (defaults): kill 0; first failed probe {}; promotion done {}; \
         writer changed {} ({} after the promotion); first write on the new primary {} ({} after the \
         promotion); restart {} (ready {}); stale primary reported {}",
        suspected.map_or("-".into(), |s| at(s, killed)),
        at(promoted, killed),
        at(changed, killed),
        secs(changed - promoted),
        at(first_write, killed),
        secs(first_write - promoted),
        at(restarted_at, killed),
        at(restarted, killed),
        at(stale_at, killed),
    );
    assert!(
        first_write - promoted <= FOLLOW_BOUND + SLACK,
        "first write {:?} after the promotion",
        first_write - promoted
    );
    assert_eq!(count(&log, |e| matches!(e, Event::WriterChanged { .. })), 1);
    assert_eq!(acked_on_after(&writes, PRIMARY_ID, killed), 0);
    let (rp, r0rows) = (rows(t.primary()), rows(r0));
    check_acked_where_executed(&writes, &[(PRIMARY_ID, &rp), (replica_id(0), &r0rows)]);
    assert!(reads
        .iter()
        .filter(|r| r.start > changed + Duration::from_millis(50))
        .all(|r| r.sid != Some(PRIMARY_ID) && r.sid != Some(replica_id(1))));
    // The first report (the old primary unreachable), then the final one
    // once it answered again.
    let reports = loss_reports(&log);
    assert!(
        reports.iter().any(|r| !r.3) && reports.iter().any(|r| r.3),
        "{reports:?}"
    );
}

/// A planned switchover: the primary turns read-only, replica 0 catches up
/// and turns writable. Then the old primary replicates from the new one and
/// is an ordinary replica again.
#[test]
fn planned_switchover_is_followed_within_an_interval() {
    let t = stock(2);
    let (p, r0, r1) = (t.primary(), t.replica(0), t.replica(1));
    let (pool, log) = open(&t.url(""));
    let load = Load::flowing(&pool, 20);
    let began = Instant::now();
    let promoted = t.switchover(0);
    wait_until(
        "writes on the promoted replica",
        Duration::from_secs(10),
        || load.first_ack_on(replica_id(0), promoted).is_some(),
    );
    let first_write = load.first_ack_on(replica_id(0), promoted).unwrap();
    thread::sleep(Duration::from_millis(500));
    // The old primary (and replica 1) now replicate from the new one.
    p.repoint_to(r0);
    r1.repoint_to(r0);
    let repointed = Instant::now();
    wait_until(
        "old primary back in service",
        Duration::from_secs(10),
        || pool.host_stats()[0].health == HostHealth::Healthy,
    );
    thread::sleep(Duration::from_millis(1000));
    let (writes, reads) = load.stop();
    pool.close();
    let changed = writer_changed_to(&log, &ep(r0)).expect("WriterChanged");
    let failed: Vec<&WriteRec> = writes.iter().filter(|w| w.result.is_err()).collect();
    eprintln!(
        "TIMELINE planned switchover (defaults): read_only=1 on the primary 0; replica writable {}; \
         writer changed {} ({} after); first write on the new primary {} ({} after it turned writable); \
         {} writes refused by the old primary's read_only in between, {} other errors",
        at(promoted, began),
        at(changed, began),
        secs(changed.saturating_duration_since(promoted)),
        at(first_write, began),
        secs(first_write - promoted),
        failed.len(),
        failed
            .iter()
            .filter(|w| !matches!(w.result, Err(WriteErr::Stmt(Some(1290), _))))
            .count()
    );
    assert!(
        first_write - promoted <= FOLLOW_BOUND + SLACK,
        "first write {:?} after the switchover",
        first_write - promoted
    );
    // The only errors: statements on the old writer refused by read_only
    // (1290), none from get(), none after the move.
    for w in &failed {
        assert!(
            matches!(w.result, Err(WriteErr::Stmt(Some(1290), _))) && w.sid == Some(PRIMARY_ID),
            "unexpected error: {w:?}"
        );
        assert!(w.start <= changed, "an error after the move: {w:?}");
    }
    assert_eq!(acked_on_after(&writes, PRIMARY_ID, began), 0);
    assert_eq!(count(&log, |e| matches!(e, Event::PrimaryDead { .. })), 0);
    assert_eq!(
        count(&log, |e| matches!(e, Event::StalePrimaryWritable { .. })),
        0
    );
    assert!(loss_reports(&log).iter().all(|r| r.1 == 0));
    let (rp, r0rows) = (rows(p), rows(r0));
    check_acked_where_executed(&writes, &[(PRIMARY_ID, &rp), (replica_id(0), &r0rows)]);
    // Once it replicates from the writer, the old primary gets reads again.
    assert!(reads
        .iter()
        .any(|r| r.start > repointed && r.sid == Some(PRIMARY_ID)));
}

/// Replica 0 stops replicating; writes go on on the primary; the primary
/// freezes and replica 0 is promoted as it is: the writes it lacks are
/// reported, first from the old primary's last answer, then exactly when it
/// thaws.
#[test]
fn promotion_of_a_replica_that_is_behind_reports_the_missing_gtids() {
    let t = stock(2);
    let (p, r0) = (t.primary(), t.replica(0));
    let (pool, log) = open(&t.url(""));
    let load = Load::flowing(&pool, 10);
    r0.sql("STOP SLAVE");
    let stopped = Instant::now();
    wait_until("writes the replica misses", Duration::from_secs(10), || {
        load.writes
            .lock()
            .unwrap()
            .iter()
            .filter(|w| w.result.is_ok() && w.start > stopped)
            .count()
            >= 50
    });
    let frozen = Instant::now();
    p.freeze();
    // `freeze` returns once every server thread is stopped; a COMMIT
    // answered during the call ran before the server stopped.
    let stopped_all = Instant::now();
    thread::sleep(Duration::from_millis(1000));
    t.promote(0);
    let promoted = Instant::now();
    wait_until(
        "writes on the promoted replica",
        Duration::from_secs(10),
        || load.first_ack_on(replica_id(0), promoted).is_some(),
    );
    thread::sleep(Duration::from_millis(500));
    let thawed = Instant::now();
    p.thaw();
    wait_until("final loss report", Duration::from_secs(10), || {
        loss_reports(&log).iter().any(|r| r.3)
    });
    let first_write = load.first_ack_on(replica_id(0), promoted).unwrap();
    let (writes, _) = load.stop();
    pool.close();
    let changed = writer_changed_to(&log, &ep(r0)).expect("WriterChanged");
    let (rp, r0rows) = (rows(p), rows(r0));
    check_acked_where_executed(&writes, &[(PRIMARY_ID, &rp), (replica_id(0), &r0rows)]);
    let acked_lost = writes
        .iter()
        .filter(|w| w.result.is_ok() && w.sid == Some(PRIMARY_ID))
        .filter(|w| !r0rows.contains_key(&w.seq))
        .count() as u64;
    let only_old = rp.keys().filter(|s| !r0rows.contains_key(s)).count() as u64;
    let reports = loss_reports(&log);
    let early = reports.iter().find(|r| !r.3).expect("a report at the move");
    let fin = reports.iter().find(|r| r.3).expect("a final report");
    eprintln!(
        "TIMELINE promotion of a lagging replica (defaults): replica stopped -{}; freeze 0; promotion \
         done {}; writer changed {}; first write on the new primary {} ({} after the promotion); \
         reported at the move: at least {} ({}); thaw {}; final report {}: {} ({}); writes acknowledged \
         on the old primary and missing on the new one: {acked_lost}",
        secs(frozen - stopped),
        at(promoted, frozen),
        at(changed, frozen),
        at(first_write, frozen),
        secs(first_write - promoted),
        early.1,
        early.2,
        at(thawed, frozen),
        at(fin.0, frozen),
        fin.1,
        fin.2,
    );
    assert!(acked_lost >= 50);
    // The final count covers every acknowledged write the new primary lacks
    // (and at most the unacknowledged one in flight at the freeze).
    assert!(
        fin.1 >= acked_lost && fin.1 <= only_old,
        "final {} vs acknowledged lost {acked_lost}, rows only on the old primary {only_old}",
        fin.1
    );
    assert!(early.1 <= fin.1);
    // The range is the old primary's server id, up to its last GTID.
    let last = p.query_string("SELECT @@gtid_binlog_pos").unwrap();
    assert!(fin.2.ends_with(&last), "{} vs {last}", fin.2);
    assert!(fin.2.starts_with("0-1-"), "{}", fin.2);
    assert_eq!(acked_on_after(&writes, PRIMARY_ID, stopped_all), 0);
}

// ---- no false failovers -------------------------------------------------

#[test]
fn alive_errors_cause_no_failover() {
    let (p, rs) = cluster(1, &[]);
    // The monitor's own user is refused (1045): proof the server is alive.
    let (pool, log) = open(&url(&[p.port(), rs[0].port()], "monitor_password=wrong"));
    wait_until("alive errors reported", Duration::from_secs(15), || {
        count(&log, |e| matches!(e, Event::PrimaryAliveError { .. })) >= 5
    });
    assert_no_failover(&log);
    assert_eq!(port_of(&mut pool.get().unwrap()), p.port());
    drop(pool);
    // Too many connections (1040) is no failure either: the monitor's kept
    // connection is killed, and it cannot get a new one (its user has no
    // CONNECTION ADMIN, so no spare slot).
    let (pool, log) = open(&url(
        &[p.port(), rs[0].port()],
        "max_size=2&monitor_user=monitor&monitor_password=monitor-secret",
    ));
    let _held = pool.get().unwrap();
    p.set_global("max_connections", "10");
    let mut hogs = Vec::new();
    while let Ok(c) = mysql::Conn::new(p.app_opts()) {
        hogs.push(c);
        assert!(hogs.len() < 20, "the server never refused");
    }
    p.kill_connections("monitor");
    wait_until("1040 reported", Duration::from_secs(15), || {
        count(
            &log,
            |e| matches!(e, Event::PrimaryAliveError { error, .. } if error.server_code() == Some(1040)),
        ) >= 5
    });
    drop(hogs);
    p.set_global("max_connections", "200");
    assert_no_failover(&log);
}

/// The merged probe reads SHOW SLAVE STATUS too: a monitor user without the
/// privilege for it still probes the writer fine (no failure counted); the
/// replicas' state is unknown, so they get no reads.
#[test]
fn monitor_user_without_replication_privilege_keeps_the_writer() {
    let (p, rs) = cluster(1, &[]);
    p.sql("CREATE USER 'plain'@'%' IDENTIFIED BY 'plain-secret'");
    p.sql("GRANT SELECT ON *.* TO 'plain'@'%'");
    rs[0].catch_up_with(&p);
    let (pool, log) = open(&url(
        &[p.port(), rs[0].port()],
        "ping_interval=100ms&monitor_user=plain&monitor_password=plain-secret",
    ));
    wait_until("replica checked", Duration::from_secs(10), || {
        pool.host_stats()[1].health != HostHealth::Unknown
    });
    thread::sleep(Duration::from_secs(1));
    assert_eq!(
        count(&log, |e| matches!(
            e,
            Event::PrimarySuspected { .. }
                | Event::PrimaryDead { .. }
                | Event::WriterChanged { .. }
        )),
        0,
        "{:?}",
        log.lock().unwrap()
    );
    assert_eq!(pool.host_stats()[1].health, HostHealth::Lagging);
    assert_eq!(port_of(&mut pool.get_read().unwrap()), p.port());
}

/// The primary is unreachable from the pool only (a black hole in front of
/// it); the rest of the application still writes there, so its replicas keep
/// receiving: a partition, no failover, at the defaults.
#[test]
fn partition_where_replicas_still_receive_causes_no_failover() {
    let (p, rs) = cluster(1, &[]);
    p.sql("CREATE TABLE staunch_test.bg (id INT PRIMARY KEY AUTO_INCREMENT, v INT)");
    let proxy = Proxy::start(p.addr());
    let (pool, log) = open(&url(&[proxy.port(), rs[0].port()], ""));
    pool.get().unwrap();
    wait_until("replica checked", Duration::from_secs(10), || {
        pool.host_stats()[1].health == HostHealth::Healthy
    });
    // Another application server, not partitioned, keeps writing.
    let stop = Arc::new(AtomicBool::new(false));
    let bg = {
        let (stop, opts) = (stop.clone(), p.app_opts());
        thread::spawn(move || {
            let mut c = mysql::Conn::new(opts).unwrap();
            while !stop.load(SeqCst) {
                c.query_drop("INSERT INTO bg (v) VALUES (1)").unwrap();
                thread::sleep(Duration::from_millis(100));
            }
        })
    };
    let cut = Instant::now();
    proxy.set_mode(Mode::BlackHole);
    proxy.sever_all();
    wait_until("partition reported", Duration::from_secs(25), || {
        count(&log, |e| matches!(e, Event::PartitionSuspected { .. })) >= 1
    });
    let reported = first(&log, |e| matches!(e, Event::PartitionSuspected { .. })).unwrap();
    eprintln!(
        "TIMELINE partition (defaults): cut 0; partition reported {} (seen by the replica receiving); failovers 0",
        at(reported, cut)
    );
    assert_no_failover(&log);
    assert_eq!(pool.writer(), Some(format!("127.0.0.1:{}", proxy.port())));
    proxy.set_mode(Mode::Pass);
    stop.store(true, SeqCst);
    bg.join().unwrap();
    wait_until(
        "writes through the pool again",
        Duration::from_secs(15),
        || {
            pool.get_timeout(Duration::from_millis(500))
                .map(|mut c| c.query_drop("INSERT INTO bg (v) VALUES (2)").is_ok())
                .unwrap_or(false)
        },
    );
    assert_no_failover(&log);
}

/// The documented other side of rule 5: an idle primary that the pool alone
/// cannot reach gives no evidence it is alive. It is declared dead (writes
/// fail fast), no host was promoted, so writes go back to it when it answers.
#[test]
fn idle_primary_cut_off_from_the_pool_alone_is_declared_dead_then_taken_back() {
    let (p, rs) = cluster(1, &[]);
    let proxy = Proxy::start(p.addr());
    let (pool, log) = open(&url(&[proxy.port(), rs[0].port()], ""));
    pool.get().unwrap();
    let cut = Instant::now();
    proxy.set_mode(Mode::BlackHole);
    proxy.sever_all();
    wait_until("declared dead", Duration::from_secs(25), || {
        count(&log, |e| matches!(e, Event::PrimaryDead { .. })) >= 1
    });
    let dead = first(&log, |e| matches!(e, Event::PrimaryDead { .. })).unwrap();
    let e = pool.get().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoWriter, "{e}");
    let healed = Instant::now();
    proxy.set_mode(Mode::Pass);
    let back = format!("127.0.0.1:{}", proxy.port());
    wait_until("writer again", Duration::from_secs(10), || {
        pool.writer().as_deref() == Some(&back[..])
    });
    let taken_back = Instant::now();
    eprintln!(
        "TIMELINE idle partition (defaults): cut 0; declared dead {}; healed {}; writer again {}",
        at(dead, cut),
        at(healed, cut),
        at(taken_back, cut)
    );
    assert_eq!(port_of(&mut pool.get().unwrap()), p.port());
    assert_eq!(
        count(&log, |e| matches!(e, Event::StalePrimaryWritable { .. })),
        0
    );
}

#[test]
fn split_brain_is_refused() {
    let (mut p, rs) = cluster(2, &[]);
    let (pool, log) = open(&url(
        &[p.port(), rs[0].port(), rs[1].port()],
        "ping_interval=100ms&ping_timeout=300ms&failure_threshold=2&secondary_check=none",
    ));
    pool.get().unwrap();
    for r in &rs {
        r.sql("STOP SLAVE");
        r.set_global("read_only", "0");
    }
    p.kill9();
    wait_until_or_show("split brain", &log, Duration::from_secs(10), || {
        count(&log, |e| {
            matches!(
                e,
                Event::SplitBrain {
                    writes_refused: true,
                    ..
                }
            )
        }) > 0
    });
    let e = pool.get().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoWriter, "{e}");
    assert!(e.to_string().contains("split brain"), "{e}");
    rs[1].set_global("read_only", "1");
    wait_until("a writer", Duration::from_secs(10), || {
        pool.writer().is_some()
    });
    assert_eq!(port_of(&mut pool.get().unwrap()), rs[0].port());
}

#[test]
fn lagging_replica_is_skipped_then_used_again() {
    let (p, rs) = cluster(2, &[]);
    let (pool, log) = open(&url(
        &[p.port(), rs[0].port(), rs[1].port()],
        "ping_interval=100ms",
    ));
    rs[0].sql("STOP SLAVE");
    let ep0 = ep(&rs[0]);
    wait_until("lagging reported", Duration::from_secs(10), || {
        count(
            &log,
            |e| matches!(e, Event::ReplicaLagging { endpoint, .. } if *endpoint == ep0),
        ) > 0
    });
    for _ in 0..30 {
        assert_ne!(port_of(&mut pool.get_read().unwrap()), rs[0].port());
    }
    rs[0].sql("START SLAVE");
    wait_until("recovered", Duration::from_secs(10), || {
        count(
            &log,
            |e| matches!(e, Event::ReplicaRecovered { endpoint } if *endpoint == ep0),
        ) > 0
    });
    let mut seen = false;
    for _ in 0..60 {
        let mut held: Vec<_> = (0..2).map(|_| pool.get_read().unwrap()).collect();
        seen |= held.iter_mut().any(|c| port_of(c) == rs[0].port());
    }
    assert!(seen, "the recovered replica gets reads again");
    drop(p);
}

#[test]
fn flapping_guard_spaces_failovers() {
    let (mut p, mut rs) = cluster(2, &[]);
    let (pool, log) = open(&url(
        &[p.port(), rs[0].port(), rs[1].port()],
        "ping_interval=100ms&ping_timeout=300ms&failure_threshold=2&secondary_check=none&min_failover_interval=4s",
    ));
    pool.get().unwrap();
    rs[0].sql("STOP SLAVE");
    rs[1].sql("STOP SLAVE");
    rs[0].set_global("read_only", "0");
    p.kill9();
    wait_until("first failover", Duration::from_secs(10), || {
        pool.writer() == Some(ep(&rs[0]))
    });
    let first_change = Instant::now();
    // The new primary dies at once; replica 1 is promoted.
    rs[1].set_global("read_only", "0");
    rs[0].kill9();
    wait_until("second failover", Duration::from_secs(20), || {
        pool.writer() == Some(ep(&rs[1]))
    });
    let gap = first_change.elapsed();
    assert!(count(&log, |e| matches!(e, Event::FailoverDeferred { .. })) > 0);
    assert!(
        gap >= Duration::from_millis(3500),
        "second failover after only {gap:?}"
    );
    assert_eq!(port_of(&mut pool.get().unwrap()), rs[1].port());
}

// ---- what the monitor costs ---------------------------------------------

/// Steady state at the defaults: per host and per ping_interval, what the
/// monitor costs the servers (MariaDB's per-user statistics of the monitor's
/// own user, over 5 s, the pool otherwise idle).
#[test]
fn monitor_steady_state_cost_per_host() {
    let t = Topology::start(TopologyOpts {
        replicas: 2,
        args: vec!["--userstat=1".into()],
        ..Default::default()
    });
    // A privileged monitor user, then (issue #49) the least-privilege
    // application user as the monitor's (its refused SHOW SLAVE STATUS
    // costs the SHOW GLOBAL STATUS that stands in for it).
    for (user, params) in [
        (
            "monitor",
            "monitor_user=monitor&monitor_password=monitor-secret",
        ),
        ("least", ""),
    ] {
        let url = if user == "least" {
            t.url_as("least", "least-secret", params)
        } else {
            t.url(params)
        };
        let (pool, _log) = open(&url);
        monitor_cost(&t, user);
        drop(pool);
    }
}

/// The monitor's cost per host per `ping_interval`, from MariaDB's user
/// statistics of `user` over 5 s (nothing else runs as that user).
fn monitor_cost(t: &Topology, user: &str) {
    // Let the first discovery and connections settle.
    thread::sleep(Duration::from_millis(2500));
    let q = format!(
        "SELECT TOTAL_CONNECTIONS, SELECT_COMMANDS, OTHER_COMMANDS, BYTES_RECEIVED, \
         BYTES_SENT, BUSY_TIME FROM information_schema.USER_STATISTICS WHERE USER = '{user}'"
    );
    let read = |s: &MariaDb| -> Vec<f64> {
        s.query_rows(&q)
            .into_iter()
            .next()
            .map(|r| {
                r.into_iter()
                    .map(|v| v.unwrap_or_default().parse().unwrap_or(0.0))
                    .collect()
            })
            .unwrap_or_else(|| vec![0.0; 6])
    };
    let before: Vec<Vec<f64>> = t.servers().map(read).collect();
    let window = Duration::from_secs(5);
    thread::sleep(window);
    let after: Vec<Vec<f64>> = t.servers().map(read).collect();
    // ping_interval is 1 s.
    let n = window.as_secs_f64();
    for (i, s) in t.servers().enumerate() {
        let d: Vec<f64> = (0..6).map(|k| (after[i][k] - before[i][k]) / n).collect();
        eprintln!(
            "COST ({user}) host {i} ({}): per ping_interval {:.2} new connections, {:.2} SELECT + {:.2} other \
             statements, {:.0} bytes received and {:.0} bytes sent by the server, {:.1} us server busy time",
            s.addr(),
            d[0],
            d[1],
            d[2],
            d[3],
            d[4],
            d[5] * 1e6
        );
        assert!(d[0] < 0.5, "the monitor connects each tick: {d:?}");
        assert!(d[1] + d[2] <= 3.0, "statements per interval: {d:?}");
    }
}

// ---- least privilege (issue #49, conformance conf_least_privilege) -------

/// What is done to the primary before the replica is promoted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fault {
    /// `kill -9`, the promotion 1.5 s later.
    Kill,
    /// SIGSTOP, the promotion 3 s later (issue #49's incident D).
    Freeze,
    /// A planned switchover: the primary turns read-only, the replica
    /// catches up and turns writable (rule 1).
    Switchover,
}

/// The pool over a primary and one replica as `least` (`ALL ON
/// staunch_test.*`, nothing global: no SLAVE MONITOR), with the test kit's
/// `monitor` user as `monitor_user` when `monitor`: writes and reads flow;
/// without a monitor user exactly one event names the missing privilege
/// (with one, none); the promotion after `fault` is followed within the
/// bound a privileged monitor keeps (the monitor reads `Slaves_running`,
/// which any user may, in place of `SHOW SLAVE STATUS`); after a kill, the
/// restarted primary, writable, is reported stale.
fn least_privilege_promotion(fault: Fault, monitor: bool) {
    let mut t = stock(1);
    let params = if monitor {
        "monitor_user=monitor&monitor_password=monitor-secret"
    } else {
        ""
    };
    let (pool, log) = open(&t.url_as("least", "least-secret", params));
    let load = Load::flowing(&pool, 20);
    wait_until("reads flowing", Duration::from_secs(10), || {
        load.reads
            .lock()
            .unwrap()
            .iter()
            .filter(|r| r.sid.is_some())
            .count()
            >= 10
    });
    let missing = |e: &Event| matches!(e, Event::MonitorPrivilegeMissing { .. });
    let told = events(&log, missing);
    if monitor {
        assert!(told.is_empty(), "{told:?}");
    } else {
        assert_eq!(told.len(), 1, "{told:?}");
        let text = told[0].1.to_string();
        eprintln!("EVENT {text}");
        // The account CURRENT_USER() names ('least'@'127.0.0.1' here).
        for word in [
            "user 'least'@'",
            "SHOW SLAVE STATUS",
            "SLAVE MONITOR",
            "GRANT SLAVE MONITOR ON *.* TO 'least'@'",
            "monitor_user=",
        ] {
            assert!(text.contains(word), "{word:?} not in {text:?}");
        }
        assert!(!text.contains("least-secret"), "{text}");
    }
    let faulted = Instant::now();
    match fault {
        Fault::Kill => {
            t.primary_mut().kill9();
            thread::sleep(Duration::from_millis(1500).saturating_sub(faulted.elapsed()));
        }
        Fault::Freeze => {
            t.primary().freeze();
            thread::sleep(Duration::from_secs(3));
        }
        Fault::Switchover => {}
    }
    let promoted = if fault == Fault::Switchover {
        t.switchover(0)
    } else {
        t.promote(0);
        Instant::now()
    };
    wait_until_or_show(
        "writes on the promoted replica",
        &log,
        Duration::from_secs(15),
        || load.first_ack_on(replica_id(0), promoted).is_some(),
    );
    let first_write = load.first_ack_on(replica_id(0), promoted).unwrap();
    if fault == Fault::Kill {
        t.primary_mut().restart();
        wait_until_or_show(
            "stale primary reported",
            &log,
            Duration::from_secs(10),
            || count(&log, |e| matches!(e, Event::StalePrimaryWritable { .. })) > 0,
        );
    }
    // Still told once, however many probes ran since.
    thread::sleep(Duration::from_millis(500));
    let (writes, _) = load.stop();
    pool.close();
    if fault == Fault::Freeze {
        t.primary().thaw();
    }
    eprintln!(
        "TIMELINE least privilege, {fault:?} + promotion {}, monitor_user {}: first write on the \
         new primary {} after the promotion",
        at(promoted, faulted),
        if monitor { "set" } else { "not set" },
        secs(first_write - promoted)
    );
    assert_eq!(count(&log, missing), usize::from(!monitor));
    assert!(
        first_write - promoted <= FOLLOW_BOUND + SLACK,
        "first write {:?} after the promotion",
        first_write - promoted
    );
    assert_eq!(count(&log, |e| matches!(e, Event::PrimaryDead { .. })), 0);
    assert_eq!(acked_on_after(&writes, PRIMARY_ID, faulted), 0);
    let (rp, r0rows) = (rows(t.primary()), rows(t.replica(0)));
    check_acked_where_executed(&writes, &[(PRIMARY_ID, &rp), (replica_id(0), &r0rows)]);
}

#[test]
fn conf_least_privilege_replication_kill_followed() {
    least_privilege_promotion(Fault::Kill, false);
}

#[test]
fn conf_least_privilege_replication_kill_with_monitor_user() {
    least_privilege_promotion(Fault::Kill, true);
}

#[test]
fn least_privilege_frozen_primary_promotion_followed() {
    least_privilege_promotion(Fault::Freeze, false);
}

#[test]
fn least_privilege_planned_switchover_followed() {
    least_privilege_promotion(Fault::Switchover, false);
}

/// `topology=replication` over servers that answer `wsrep_on=0`: no
/// contradiction, nothing told; `topology=galera` over them: told once, by
/// name, at the first look (`topology=replication` over a Galera cluster
/// is in tests/galera.rs).
#[test]
fn forced_topology_contradicted_by_the_servers() {
    let t = stock(1);
    let (pool, log) = open(&t.url(""));
    let load = Load::flowing(&pool, 5);
    load.stop();
    pool.close();
    assert_eq!(
        count(&log, |e| matches!(
            e,
            Event::TopologyContradicted { .. } | Event::MonitorPrivilegeMissing { .. }
        )),
        0
    );
    let contradicted = |e: &Event| matches!(e, Event::TopologyContradicted { .. });
    let (pool, log) = open(&t.url("").replace("topology=replication", "topology=galera"));
    wait_until_or_show(
        "the contradiction told",
        &log,
        Duration::from_secs(10),
        || count(&log, contradicted) > 0,
    );
    thread::sleep(Duration::from_millis(500));
    pool.close();
    let told = events(&log, contradicted);
    assert_eq!(told.len(), 1, "{told:?}");
    let text = told[0].1.to_string();
    eprintln!("EVENT {text}");
    assert!(
        text.contains("topology=galera")
            && text.contains("not a Galera cluster")
            && text.contains(&format!("{} wsrep_on=off", ep(t.primary()))),
        "{text}"
    );
}

/// Whether `fd` turns readable within `ms`.
fn readable(fd: i32, ms: i32) -> bool {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    let n = unsafe { libc::poll(&mut p, 1, ms) };
    n == 1 && p.revents & libc::POLLIN != 0
}

/// A read started apart (`get_start`, for hosts whose threads must not
/// block) waits in the replica's queue and is handed the replica's
/// connection when it comes back, its descriptor turning readable; when
/// the replica cannot serve it within the bound, it fails as `get_read`
/// does (the bound spent, nothing is left for the writer). As the test
/// kit's `app` user, and as `least` (`ALL ON staunch_test.*` only).
fn reads_started_apart(url: &str, primary: u16, replica: u16) {
    let (pool, _log) = open(url);
    assert_eq!(port_of(&mut pool.get().unwrap()), primary);
    wait_until("reads go to the replica", Duration::from_secs(10), || {
        port_of(&mut pool.get_read().unwrap()) == replica
    });
    let waiting = |timeout| match pool.get_start(timeout, true).unwrap() {
        staunch::StartedGet::Waiting(w) => w,
        staunch::StartedGet::Ready(_) => panic!("the replica's only connection is held"),
    };
    let mut held = pool.get_read().unwrap();
    assert_eq!(port_of(&mut held), replica);

    // Handed the replica's connection when it comes back.
    let mut pending = waiting(Duration::from_secs(10));
    assert!(!readable(pending.fd(), 100));
    assert!(pending.finish().is_none(), "nothing was handed over yet");
    drop(held);
    assert!(readable(pending.fd(), 2000));
    let mut c = pending.finish().expect("handed over").unwrap();
    assert_eq!(port_of(&mut c), replica);
    let again = pending.finish().expect("over").unwrap_err();
    assert_eq!(again.kind(), staunch::ErrorKind::InvalidArgument, "{again}");
    drop(pending);

    // The replica stays full past the bound: the error is get_read's.
    let mut pending = waiting(Duration::from_millis(300));
    let fd = pending.fd();
    let t0 = Instant::now();
    let got = loop {
        readable(fd, pending.remaining().as_millis() as i32 + 1);
        if let Some(got) = pending.finish() {
            break got;
        }
        assert_eq!(pending.fd(), fd, "the descriptor changed");
        assert!(t0.elapsed() < Duration::from_secs(5), "no end");
    };
    let e = got.unwrap_err();
    assert_eq!(e.kind(), staunch::ErrorKind::PoolExhausted, "{e}");
    assert!(e.to_string().contains("timed out"), "{e}");
    assert!(
        t0.elapsed() >= Duration::from_millis(250),
        "{:?}",
        t0.elapsed()
    );
    let blocking = pool.get_read_timeout(Duration::ZERO).unwrap_err();
    assert_eq!(blocking.kind(), e.kind(), "{blocking}");
    drop(c);
    assert!(pool.close_and_join(Duration::from_secs(10)));
}

#[test]
fn reads_started_apart_wait_on_a_replica() {
    let (p, rs) = cluster(1, &[]);
    let params = "ping_interval=200ms&max_size=1";
    reads_started_apart(
        &url(&[p.port(), rs[0].port()], params),
        p.port(),
        rs[0].port(),
    );
}

/// The same as `least`: without SLAVE MONITOR the monitor cannot read a
/// replica's lag, so the replica takes reads only with
/// max_replication_lag=off (docs/knobs.md; otherwise they go to the writer).
#[test]
fn least_privilege_reads_started_apart_wait_on_a_replica() {
    let t = stock(1);
    let params = "ping_interval=200ms&max_size=1&max_replication_lag=off";
    let url = t.url_as("least", "least-secret", params);
    reads_started_apart(&url, t.primary().port(), t.replica(0).port());
}
