//! The pool's figures through the `metrics` facade (feature `metrics`),
//! read back from metrics-util's in-memory recorder.
#![cfg(feature = "metrics")]

use staunch_testkit as support;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use metrics_util::MetricKind;
use staunch::prelude::*;
use staunch::{MetricsPublisher, Pool};
use support::MariaDb;

/// (kind, name, the state label if any) -> value, for this pool's series.
type Seen = HashMap<(MetricKind, String, Option<String>), DebugValue>;

fn seen(snap: &Snapshotter, pool: &str, port: u16) -> Seen {
    let mut out = HashMap::new();
    for (ck, _, _, v) in snap.snapshot().into_vec() {
        let key = ck.key();
        let label = |n: &str| {
            key.labels()
                .find(|l| l.key() == n)
                .map(|l| l.value().to_owned())
        };
        assert_eq!(
            label("db.client.connection.pool.name").as_deref(),
            Some(pool)
        );
        assert_eq!(label("server.address").as_deref(), Some("127.0.0.1"));
        assert_eq!(label("server.port"), Some(port.to_string()));
        out.insert(
            (
                ck.kind(),
                key.name().to_owned(),
                label("db.client.connection.state"),
            ),
            v,
        );
    }
    out
}

fn gauge(s: &Seen, name: &str, state: Option<&str>) -> f64 {
    match s.get(&(MetricKind::Gauge, name.into(), state.map(Into::into))) {
        Some(DebugValue::Gauge(v)) => v.0,
        other => panic!("{name}: {other:?}"),
    }
}

fn values(s: &Seen, name: &str) -> Vec<f64> {
    match s.get(&(MetricKind::Histogram, name.into(), None)) {
        Some(DebugValue::Histogram(v)) => v.iter().map(|x| x.0).collect(),
        None => Vec::new(),
        other => panic!("{name}: {other:?}"),
    }
}

#[test]
fn the_facade_gets_gauges_counters_and_only_new_histogram_counts() {
    let s = MariaDb::start();
    let pool = Pool::from_url(&format!(
        "{}?max_size=3&min_idle=1&pool_name=facade&connection_timeout=200ms",
        s.url()
    ))
    .unwrap();
    let recorder = DebuggingRecorder::new();
    let snap = recorder.snapshotter();
    let mut publisher = metrics::with_local_recorder(&recorder, || MetricsPublisher::new(&pool));

    for i in 0..5 {
        let mut c = pool.get().unwrap();
        assert_eq!(
            c.query_first::<i64, _>(format!("SELECT {i}")).unwrap(),
            Some(i)
        );
    }
    let held: Vec<_> = (0..3).map(|_| pool.get().unwrap()).collect();
    assert!(pool.get().is_err(), "a fourth borrow of three times out");
    publisher.publish();
    let first = seen(&snap, "facade", s.port());
    assert_eq!(
        gauge(&first, "db.client.connection.count", Some("used")),
        3.0
    );
    assert_eq!(
        gauge(&first, "db.client.connection.count", Some("idle")),
        0.0
    );
    assert_eq!(gauge(&first, "db.client.connection.max", None), 3.0);
    assert_eq!(gauge(&first, "db.client.connection.idle.min", None), 1.0);
    assert_eq!(
        gauge(&first, "db.client.connection.pending_requests", None),
        0.0
    );
    assert_eq!(
        first.get(&(
            MetricKind::Counter,
            "db.client.connection.timeouts".into(),
            None
        )),
        Some(&DebugValue::Counter(1))
    );
    // Every borrow that got a connection is counted once (the timed-out
    // one is in `timeouts`), at its bucket's middle: 0 for one handed out
    // at once.
    let waits = values(&first, "db.client.connection.wait_time");
    assert_eq!(waits.len(), 8, "{waits:?}");
    assert!(waits.iter().all(|w| *w < 1.0), "{waits:?}");
    assert_eq!(waits.len() as u64, pool.histograms().acquire_wait.count());
    let h = pool.histograms();
    assert_eq!(
        values(&first, "db.client.operation.duration").len() as u64,
        h.statement_time.count()
    );
    assert!(h.statement_time.count() >= 5);
    assert_eq!(values(&first, "db.client.connection.use_time").len(), 5);
    assert_eq!(
        values(&first, "db.client.connection.create_time").len() as u64,
        h.connect_time.count()
    );

    // Nothing happened since: the histograms get nothing new.
    drop(held);
    publisher.publish();
    let second = seen(&snap, "facade", s.port());
    assert!(values(&second, "db.client.connection.wait_time").is_empty());
    assert_eq!(values(&second, "db.client.connection.use_time").len(), 3);
    assert_eq!(
        gauge(&second, "db.client.connection.count", Some("used")),
        0.0
    );
    pool.close();
}

fn metrics_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter(|t| {
            let comm = t.as_ref().unwrap().path().join("comm");
            std::fs::read_to_string(comm).is_ok_and(|n| n.trim() == "staunch-metrics")
        })
        .count()
}

#[test]
fn the_publishing_thread_pushes_and_ends_with_the_pool() {
    let s = MariaDb::start();
    let pool = Pool::from_url(&format!("{}?pool_name=every", s.url())).unwrap();
    let recorder = DebuggingRecorder::new();
    let snap = recorder.snapshotter();
    metrics::with_local_recorder(&recorder, || {
        pool.publish_metrics_every(Duration::from_millis(100))
            .unwrap()
    });
    drop(pool.get().unwrap());
    let t = Instant::now();
    loop {
        let s2 = seen(&snap, "every", s.port());
        if values(&s2, "db.client.connection.wait_time").len() == 1 {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(5), "nothing pushed");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(metrics_threads(), 1);
    // The thread holds no clone: dropping the last one closes the pool, and
    // the thread ends at its next tick.
    drop(pool);
    let t = Instant::now();
    while metrics_threads() > 0 {
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "the thread outlived the pool"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
