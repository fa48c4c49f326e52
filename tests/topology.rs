//! Primary/replica routing and the primary monitor (incidents B and D),
//! against a real MariaDB primary and replicas set up by the test support.

use staunch_testkit as support;

use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use staunch::{ErrorKind, Event, Pool};
use support::{MariaDb, Mode, Proxy, Topology, TopologyOpts};

/// A primary and `n` replicas; replicas are read_only and notice a dead
/// primary within ~2 s (slave_net_timeout=2, heartbeat every second).
fn cluster(n: usize, replica_args: &[&str]) -> (MariaDb, Vec<MariaDb>) {
    let mut args = vec!["--slave-net-timeout=2".to_string()];
    args.extend(replica_args.iter().map(|s| s.to_string()));
    Topology::start(TopologyOpts {
        replicas: n,
        replica_args: args,
        // These tests were written with the template's grants.
        app_read_only_admin: true,
        ..Default::default()
    })
    .into_parts()
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

fn wait_until(what: &str, limit: Duration, f: impl Fn() -> bool) {
    let t = Instant::now();
    while !f() {
        assert!(t.elapsed() < limit, "timed out waiting for: {what}");
        thread::sleep(Duration::from_millis(20));
    }
}

fn port_of(c: &mut staunch::PooledConn) -> u16 {
    c.query_first::<u16, _>("SELECT @@port").unwrap().unwrap()
}

#[test]
fn writes_go_to_the_primary_and_reads_to_replicas() {
    let (p, rs) = cluster(2, &[]);
    let (pool, _log) = open(&url(
        &[p.port(), rs[0].port(), rs[1].port()],
        "ping_interval=200ms",
    ));
    assert_eq!(port_of(&mut pool.get().unwrap()), p.port());
    wait_until("replicas checked", Duration::from_secs(10), || {
        pool.host_stats()
            .iter()
            .filter(|h| h.health == staunch::HostHealth::Healthy)
            .count()
            == 3
    });
    let mut seen = std::collections::HashSet::new();
    for _ in 0..40 {
        let mut held = Vec::new();
        for _ in 0..3 {
            let mut c = pool.get_read().unwrap();
            seen.insert(port_of(&mut c));
            held.push(c);
        }
    }
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
    assert_eq!(pool.writer(), Some(format!("127.0.0.1:{}", p.port())));
    // Every host's threads and the monitor exit (the monitor may be in a
    // check, bounded by ping_timeout).
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
                        errors.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
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
    println!("incident B: errors seen by callers 0? {}; replica validation failures {replica_validation_failures}", errors.load(std::sync::atomic::Ordering::SeqCst));
    assert_eq!(errors.load(std::sync::atomic::Ordering::SeqCst), 0);
    assert!(
        replica_validation_failures >= 2,
        "the expired replica connections were caught: {hs:?}"
    );
}

/// Incident D: the primary freezes; the test promotes a replica; the pool
/// detects the death, finds the new writer and writes there.
#[test]
fn incident_d_primary_frozen_failover() {
    let (p, rs) = cluster(2, &[]);
    p.sql("CREATE TABLE staunch_test.w (id INT PRIMARY KEY AUTO_INCREMENT, v INT) ENGINE=InnoDB");
    wait_until("table replicated", Duration::from_secs(10), || {
        rs.iter().all(|r| {
            r.query_i64("SELECT COUNT(*) FROM information_schema.tables WHERE table_name='w'")
                == Some(1)
        })
    });
    // The monitor's knobs at their defaults (ping every 1 s, 2 s probe
    // timeout, 4 failures in a row, replicas asked); the replicas notice the
    // frozen primary after slave_net_timeout=2.
    let (pool, log) = open(&url(
        &[p.port(), rs[0].port(), rs[1].port()],
        "connect_timeout=500ms&connection_timeout=1s",
    ));
    pool.get()
        .unwrap()
        .query_drop("INSERT INTO w (v) VALUES (0)")
        .unwrap();
    let frozen_at = Instant::now();
    p.freeze();
    // An operator (or MHA) promotes replica 0.
    rs[0].sql("STOP SLAVE");
    rs[0].set_global("read_only", "0");
    let mut first_write = None;
    while frozen_at.elapsed() < Duration::from_secs(60) {
        if let Ok(mut c) = pool.get_timeout(Duration::from_millis(500)) {
            if c.query_drop("INSERT INTO w (v) VALUES (1)").is_ok() {
                first_write = Some(frozen_at.elapsed());
                assert_eq!(port_of(&mut c), rs[0].port());
                break;
            }
        }
        thread::sleep(Duration::from_millis(50));
    }
    let failover = first_write.expect("no write succeeded after the failover");
    let detected =
        first(&log, |e| matches!(e, Event::PrimaryDead { .. })).expect("PrimaryDead") - frozen_at;
    println!("incident D: primary declared dead {detected:?} after the freeze; first successful write {failover:?} after it");
    assert_eq!(pool.writer(), Some(format!("127.0.0.1:{}", rs[0].port())));
    assert_eq!(count(&log, |e| matches!(e, Event::WriterChanged { .. })), 1);
    // The old primary comes back, still writable: reported, not used.
    p.thaw();
    wait_until("split brain reported", Duration::from_secs(10), || {
        count(&log, |e| {
            matches!(
                e,
                Event::SplitBrain {
                    writes_refused: false,
                    ..
                }
            )
        }) > 0
    });
    let mut c = pool.get().unwrap();
    assert_eq!(port_of(&mut c), rs[0].port());
    drop(c);
    // Replica 1 still follows the old primary (now thawed): it must get no
    // reads, which all go to the new writer (fallback).
    wait_until(
        "replica 1 replicating from the old primary",
        Duration::from_secs(15),
        || {
            rs[1]
                .slave_status()
                .get("Slave_IO_Running")
                .map(String::as_str)
                == Some("Yes")
        },
    );
    thread::sleep(Duration::from_millis(2500));
    let h1 = &pool.host_stats()[2];
    assert_ne!(h1.health, staunch::HostHealth::Healthy, "{h1:?}");
    for _ in 0..20 {
        assert_eq!(port_of(&mut pool.get_read().unwrap()), rs[0].port());
    }
}

#[test]
fn alive_errors_cause_no_failover() {
    let (p, rs) = cluster(1, &[]);
    // The monitor's own user is refused (1045): proof the server is alive.
    let (pool, log) = open(&url(
        &[p.port(), rs[0].port()],
        "ping_type=connect&ping_interval=100ms&failure_threshold=2&monitor_password=wrong",
    ));
    wait_until("alive errors reported", Duration::from_secs(10), || {
        count(&log, |e| matches!(e, Event::PrimaryAliveError { .. })) >= 5
    });
    assert_eq!(
        count(&log, |e| matches!(
            e,
            Event::PrimaryDead { .. } | Event::WriterChanged { .. }
        )),
        0
    );
    assert_eq!(port_of(&mut pool.get().unwrap()), p.port());
    drop(pool);
    // Too many connections (1040) is no failure either.
    // (The monitor user has no CONNECTION ADMIN, so it gets no spare slot.)
    let (pool, log) = open(&url(
        &[p.port(), rs[0].port()],
        "ping_type=connect&ping_interval=100ms&failure_threshold=2&max_size=2&monitor_user=monitor&monitor_password=monitor-secret",
    ));
    let _held = pool.get().unwrap();
    p.set_global("max_connections", "10");
    let mut hogs = Vec::new();
    while let Ok(c) = mysql::Conn::new(p.app_opts()) {
        hogs.push(c);
        assert!(hogs.len() < 20, "the server never refused");
    }
    let before = count(
        &log,
        |e| matches!(e, Event::PrimaryAliveError { error, .. } if error.server_code() == Some(1040)),
    );
    wait_until("1040 reported", Duration::from_secs(10), || {
        count(
            &log,
            |e| matches!(e, Event::PrimaryAliveError { error, .. } if error.server_code() == Some(1040)),
        ) >= before + 5
    });
    drop(hogs);
    p.set_global("max_connections", "200");
    assert_eq!(
        count(&log, |e| matches!(
            e,
            Event::PrimaryDead { .. } | Event::WriterChanged { .. }
        )),
        0
    );
}

#[test]
fn partition_where_replicas_still_see_the_primary_causes_no_failover() {
    let (p, rs) = cluster(1, &[]);
    let proxy = Proxy::start(p.addr());
    let (pool, log) = open(&url(
        &[proxy.port(), rs[0].port()],
        "ping_interval=100ms&ping_timeout=200ms&failure_threshold=3",
    ));
    pool.get().unwrap();
    proxy.set_mode(Mode::BlackHole);
    proxy.sever_all();
    wait_until("partition reported", Duration::from_secs(10), || {
        count(&log, |e| matches!(e, Event::PartitionSuspected { .. })) >= 2
    });
    assert_eq!(
        count(&log, |e| matches!(
            e,
            Event::PrimaryDead { .. } | Event::WriterChanged { .. }
        )),
        0
    );
    assert_eq!(pool.writer(), Some(format!("127.0.0.1:{}", proxy.port())));
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
    wait_until("split brain", Duration::from_secs(10), || {
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
    let ep0 = format!("127.0.0.1:{}", rs[0].port());
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
        pool.writer() == Some(format!("127.0.0.1:{}", rs[0].port()))
    });
    let first_change = Instant::now();
    // The new primary dies at once; replica 1 is promoted.
    rs[1].set_global("read_only", "0");
    rs[0].kill9();
    wait_until("second failover", Duration::from_secs(20), || {
        pool.writer() == Some(format!("127.0.0.1:{}", rs[1].port()))
    });
    let gap = first_change.elapsed();
    assert!(count(&log, |e| matches!(e, Event::FailoverDeferred { .. })) > 0);
    assert!(
        gap >= Duration::from_millis(3500),
        "second failover after only {gap:?}"
    );
    assert_eq!(port_of(&mut pool.get().unwrap()), rs[1].port());
}
