//! A pool's figures through the [`metrics`] facade (the `metrics` feature):
//! the same figures, names and units as [`Pool::metrics_text`], for a
//! program that exports through whatever recorder it installed
//! (`metrics-exporter-prometheus`, an OpenTelemetry bridge, statsd, ...).
//!
//! The facade is push-based and the pool keeps its figures itself (atomics
//! read when asked, nothing recorded on the borrow path for this), so a
//! [`MetricsPublisher`] pushes them: gauges set, counters set to their
//! running totals ([`Counter::absolute`]), and each histogram's new counts
//! since the last push recorded per bucket
//! ([`Histogram::record_many`](metrics::Histogram::record_many)). A bucket's
//! values are recorded at its geometric middle (the pool keeps
//! power-of-two buckets, not the values): a recorder's own buckets or
//! quantiles are then right to within a factor of √2, and its sum is an
//! estimate (the exact sum is in [`Pool::histograms`]).
//!
//! Names are OpenTelemetry's semantic conventions, dotted, as the facade's
//! exporters expect (`metrics-exporter-prometheus` writes
//! `db.client.connection.count` as `db_client_connection_count`):
//! `db.client.connection.count` (label `db.client.connection.state`: idle
//! or used), `.max`, `.idle.max`, `.idle.min`, `.pending_requests`,
//! `.timeouts` (counter), and the histograms `.wait_time`, `.create_time`,
//! `.use_time` and `db.client.operation.duration`, in seconds. Every series
//! carries `db.client.connection.pool.name`, `server.address` and
//! `server.port` (a topology pool: one series per host).
//!
//! Handles are registered with the recorder installed when the publisher
//! is made, as the facade wants: install the recorder first.

use std::collections::HashMap;
use std::thread;
use std::time::Duration;

use metrics::{Counter, Gauge, Histogram, Key, Label, Level, Metadata, Unit};

use crate::pool::stats::Buckets;
use crate::topology::{HostStats, Pool};
use crate::trace::split_server;

const TARGET: &str = "staunch";

/// Each figure's name, kind, unit and description, described to the
/// recorder once (see [`MetricsPublisher::new`]).
const FIGURES: &[(&str, Kind, Unit, &str)] = &[
    (
        "db.client.connection.count",
        Kind::Gauge,
        Unit::Count,
        "Connections open now, by state: idle (ready to hand out) or used (borrowed, or held by a pool thread)",
    ),
    ("db.client.connection.max", Kind::Gauge, Unit::Count, "The most connections the pool opens (max_size)"),
    ("db.client.connection.idle.max", Kind::Gauge, Unit::Count, "The most idle connections the pool keeps (max_size)"),
    ("db.client.connection.idle.min", Kind::Gauge, Unit::Count, "The fewest idle connections the pool keeps (min_idle)"),
    ("db.client.connection.pending_requests", Kind::Gauge, Unit::Count, "Callers waiting for a connection now"),
    ("db.client.connection.timeouts", Kind::Counter, Unit::Count, "Borrows that timed out waiting for a connection"),
    (
        "db.client.connection.wait_time",
        Kind::Histogram,
        Unit::Seconds,
        "Time a borrow waited for a connection (one handed out at once counts under 1 µs)",
    ),
    (
        "db.client.connection.create_time",
        Kind::Histogram,
        Unit::Seconds,
        "Time a successful connect took: TCP, greeting, authentication, TLS, session set-up",
    ),
    (
        "db.client.connection.use_time",
        Kind::Histogram,
        Unit::Seconds,
        "Time a connection stayed borrowed, from the borrow to its return",
    ),
    (
        "db.client.operation.duration",
        Kind::Histogram,
        Unit::Seconds,
        "Time a statement took, from its sending to the end of its answer",
    ),
];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Gauge,
    Counter,
    Histogram,
}

/// One host's handles, and its histograms as last pushed.
struct Host {
    idle: Gauge,
    used: Gauge,
    max: Gauge,
    idle_max: Gauge,
    idle_min: Gauge,
    pending: Gauge,
    timeouts: Counter,
    histograms: [(Histogram, Buckets); 4],
}

/// Pushes a pool's figures to the `metrics` facade's recorder (see the
/// module doc of `metrics_facade`): [`publish`](MetricsPublisher::publish)
/// when you like, or [`Pool::publish_metrics_every`] on a thread of its own.
pub struct MetricsPublisher {
    pool: Pool,
    pushed: Pushed,
}

/// What was registered and pushed, per host (`host:port`).
struct Pushed {
    hosts: HashMap<String, Host>,
}

impl std::fmt::Debug for MetricsPublisher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetricsPublisher")
            .field("pool", &self.pool.name())
            .field("hosts", &self.pushed.hosts.len())
            .finish()
    }
}

impl MetricsPublisher {
    /// A publisher for `pool`, registered with the recorder installed now
    /// (describing each figure to it). Turns the pool's timings on (see
    /// [`Pool::keep_timings`]), so that the use-time and statement-time
    /// histograms count from now.
    pub fn new(pool: &Pool) -> MetricsPublisher {
        MetricsPublisher {
            pool: pool.clone(),
            pushed: Pushed::new(pool),
        }
    }

    /// Pushes the figures now. Reads atomics only (never blocks on the
    /// pool); the recorder's own cost is the recorder's.
    pub fn publish(&mut self) {
        self.pushed.push(&self.pool);
    }
}

fn describe(pool: &Pool) {
    metrics::with_recorder(|r| {
        for &(name, kind, unit, help) in FIGURES {
            let (name, help) = (name.into(), help.into());
            match kind {
                Kind::Gauge => r.describe_gauge(name, Some(unit), help),
                Kind::Counter => r.describe_counter(name, Some(unit), help),
                Kind::Histogram => r.describe_histogram(name, Some(unit), help),
            }
        }
    });
    pool.keep_timings(true);
}

impl Pushed {
    /// Describes the figures to the recorder installed now and registers
    /// every host's handles with it; turns the pool's timings on.
    fn new(pool: &Pool) -> Pushed {
        describe(pool);
        let hosts = pool
            .host_stats()
            .into_iter()
            .map(|h| (h.endpoint.clone(), Host::register(pool.name(), &h.endpoint)))
            .collect();
        Pushed { hosts }
    }

    fn push(&mut self, pool: &Pool) {
        let name = pool.name();
        let min_idle = pool.min_idle() as f64;
        for h in pool.host_stats() {
            let host = self
                .hosts
                .entry(h.endpoint.clone())
                .or_insert_with(|| Host::register(name, &h.endpoint));
            host.push(&h, min_idle);
        }
    }
}

impl Host {
    fn register(pool: &str, endpoint: &str) -> Host {
        let (addr, port) = split_server(endpoint);
        let mut labels = vec![
            Label::new("db.client.connection.pool.name", pool.to_owned()),
            Label::new("server.address", addr.to_owned()),
        ];
        if let Some(p) = port {
            labels.push(Label::new("server.port", p.to_string()));
        }
        let meta = Metadata::new(TARGET, Level::INFO, Some(module_path!()));
        let key = |name: &'static str, extra: Option<(&'static str, &'static str)>| {
            let mut l = labels.clone();
            if let Some((k, v)) = extra {
                l.push(Label::new(k, v));
            }
            Key::from_parts(name, l)
        };
        metrics::with_recorder(|r| {
            let gauge = |name| r.register_gauge(&key(name, None), &meta);
            let state = |s| {
                r.register_gauge(
                    &key(
                        "db.client.connection.count",
                        Some(("db.client.connection.state", s)),
                    ),
                    &meta,
                )
            };
            let hist = |name| {
                (
                    r.register_histogram(&key(name, None), &meta),
                    Buckets::default(),
                )
            };
            Host {
                idle: state("idle"),
                used: state("used"),
                max: gauge("db.client.connection.max"),
                idle_max: gauge("db.client.connection.idle.max"),
                idle_min: gauge("db.client.connection.idle.min"),
                pending: gauge("db.client.connection.pending_requests"),
                timeouts: r.register_counter(&key("db.client.connection.timeouts", None), &meta),
                histograms: [
                    hist("db.client.connection.wait_time"),
                    hist("db.client.connection.create_time"),
                    hist("db.client.connection.use_time"),
                    hist("db.client.operation.duration"),
                ],
            }
        })
    }

    fn push(&mut self, h: &HostStats, min_idle: f64) {
        let s = &h.stats;
        self.idle.set(s.idle as f64);
        self.used.set((s.active + s.reserved) as f64);
        self.max.set(s.max_size as f64);
        self.idle_max.set(s.max_size as f64);
        self.idle_min.set(min_idle);
        self.pending.set(s.waiting as f64);
        self.timeouts.absolute(s.acquire_timeouts);
        let now = [
            &h.histograms.acquire_wait,
            &h.histograms.connect_time,
            &h.histograms.use_time,
            &h.histograms.statement_time,
        ];
        for ((handle, last), now) in self.histograms.iter_mut().zip(now) {
            for (k, (&n, &was)) in now
                .counts
                .iter()
                .zip(last.counts.iter().chain(std::iter::repeat(&0)))
                .enumerate()
            {
                // Counts only grow; a host's pool that was replaced starts
                // again from zero.
                let new = if n >= was { n - was } else { n };
                if new > 0 {
                    handle.record_many(middle_seconds(k, now.counts.len()), new as usize);
                }
            }
            last.clone_from(now);
        }
    }
}

/// The value recorded for bucket `k` of `len`: 0 for bucket 0 (under
/// 1 µs), the geometric middle of [2^(k-1), 2^k) µs, and the lower edge of
/// the last bucket, which has no upper one.
fn middle_seconds(k: usize, len: usize) -> f64 {
    match k {
        0 => 0.0,
        _ if k + 1 == len => (1u64 << (k - 1)) as f64 * 1e-6,
        _ => (1u64 << (k - 1)) as f64 * std::f64::consts::SQRT_2 * 1e-6,
    }
}

impl Pool {
    /// Pushes this pool's figures to the `metrics` facade every `interval`
    /// (at least 100 ms), on a thread of its own (`staunch-metrics`) that
    /// ends when the pool is closed or its last clone dropped (it does not
    /// keep the pool open). Install the recorder first (see
    /// [`MetricsPublisher::new`]). An error only if the thread cannot be
    /// started.
    pub fn publish_metrics_every(&self, interval: Duration) -> std::io::Result<()> {
        let interval = interval.max(Duration::from_millis(100));
        let mut pushed = Pushed::new(self);
        // Not a clone: that would keep the pool open.
        let weak = self.downgrade();
        thread::Builder::new()
            .name("staunch-metrics".into())
            .spawn(move || loop {
                thread::sleep(interval);
                let Some(pool) = weak.upgrade() else { return };
                pushed.push(&pool);
            })
            .map(drop)
    }
}
