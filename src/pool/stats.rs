//! Counters and latency histograms, and the [`Stats`] snapshot.
//!
//! Gauges (what the pool holds now) are read from the bag when a snapshot is
//! taken; cumulative counters are atomics bumped on slow paths only. The one
//! count the hot path keeps (borrows) lives in each slot and is updated by the
//! slot's owner alone, with a plain load and store.

use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

/// Why a connection was closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CloseReason {
    /// Idle longer than `idle_timeout` while above `min_idle`.
    IdleTimeout,
    /// Reached `max_lifetime` (minus jitter).
    MaxLifetime,
    /// Failed validation, keepalive, or the reset on return.
    Broken,
    /// Soft eviction (`soft_evict`, or a topology change).
    Evicted,
    /// The pool was closed.
    PoolClosed,
}

impl CloseReason {
    /// A short name, stable across versions.
    pub fn as_str(self) -> &'static str {
        match self {
            CloseReason::IdleTimeout => "idle_timeout",
            CloseReason::MaxLifetime => "max_lifetime",
            CloseReason::Broken => "broken",
            CloseReason::Evicted => "evicted",
            CloseReason::PoolClosed => "pool_closed",
        }
    }
    pub(crate) const ALL: [CloseReason; 5] = [
        CloseReason::IdleTimeout,
        CloseReason::MaxLifetime,
        CloseReason::Broken,
        CloseReason::Evicted,
        CloseReason::PoolClosed,
    ];
}

const BUCKETS: usize = 40;

/// A lock-free histogram with power-of-two microsecond buckets: bucket 0 holds
/// values under 1 µs, bucket k holds [2^(k-1), 2^k) µs.
pub(crate) struct Histogram {
    buckets: [AtomicU64; BUCKETS],
    max_us: AtomicU64,
}

impl Histogram {
    pub fn new() -> Self {
        Histogram {
            buckets: std::array::from_fn(|_| AtomicU64::new(0)),
            max_us: AtomicU64::new(0),
        }
    }
    pub fn record(&self, d: Duration) {
        let us = d.as_micros().min(u64::MAX as u128) as u64;
        let b = (64 - us.leading_zeros() as usize).min(BUCKETS - 1);
        self.buckets[b].fetch_add(1, Relaxed);
        self.max_us.fetch_max(us, Relaxed);
    }
    fn counts(&self) -> [u64; BUCKETS] {
        std::array::from_fn(|i| self.buckets[i].load(Relaxed))
    }
    /// Percentiles over these counts plus `extra_zero` values under 1 µs.
    pub fn snapshot(&self, extra_zero: u64) -> Latency {
        let mut c = self.counts();
        c[0] += extra_zero;
        let total: u64 = c.iter().sum();
        let pct = |p: f64| -> Duration {
            if total == 0 {
                return Duration::ZERO;
            }
            let rank = ((total as f64) * p).ceil().max(1.0) as u64;
            let mut seen = 0;
            for (i, n) in c.iter().enumerate() {
                seen += n;
                if seen >= rank {
                    // Upper edge of the bucket: a conservative figure.
                    return if i == 0 {
                        Duration::from_micros(1)
                    } else {
                        Duration::from_micros(1u64 << i)
                    };
                }
            }
            Duration::from_micros(self.max_us.load(Relaxed))
        };
        Latency {
            count: total,
            p50: pct(0.50),
            p95: pct(0.95),
            p99: pct(0.99),
            max: Duration::from_micros(self.max_us.load(Relaxed)),
        }
    }
}

/// Counters the pool keeps; snapshot with [`crate::Pool::stats`].
pub(crate) struct Counters {
    pub slow_acquires: AtomicU64,
    pub acquire_wait: Histogram,
    pub acquire_timeouts: AtomicU64,
    pub created: AtomicU64,
    pub closed: [AtomicU64; 5],
    pub connect_failures: AtomicU64,
    pub connect_time: Histogram,
    pub abandoned_connects: AtomicU64,
    pub validation_failures: AtomicU64,
    pub keepalives: AtomicU64,
    pub leaks_reported: AtomicU64,
    pub rollbacks_on_return: AtomicU64,
}

impl Counters {
    pub fn new() -> Self {
        Counters {
            slow_acquires: AtomicU64::new(0),
            acquire_wait: Histogram::new(),
            acquire_timeouts: AtomicU64::new(0),
            created: AtomicU64::new(0),
            closed: std::array::from_fn(|_| AtomicU64::new(0)),
            connect_failures: AtomicU64::new(0),
            connect_time: Histogram::new(),
            abandoned_connects: AtomicU64::new(0),
            validation_failures: AtomicU64::new(0),
            keepalives: AtomicU64::new(0),
            leaks_reported: AtomicU64::new(0),
            rollbacks_on_return: AtomicU64::new(0),
        }
    }
    pub fn closed(&self, r: CloseReason) {
        let i = CloseReason::ALL
            .iter()
            .position(|x| *x == r)
            .expect("listed");
        self.closed[i].fetch_add(1, Relaxed);
    }
}

/// Latency percentiles (upper bucket edges: a figure of 64 µs means "at most
/// 64 µs"), and the exact maximum.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Latency {
    pub count: u64,
    pub p50: Duration,
    pub p95: Duration,
    pub p99: Duration,
    pub max: Duration,
}

impl Stats {
    /// Adds another pool's gauges and counters to these (latency untouched).
    pub(crate) fn absorb(&mut self, o: &Stats) {
        self.total += o.total;
        self.active += o.active;
        self.idle += o.idle;
        self.reserved += o.reserved;
        self.waiting += o.waiting;
        self.pending_creates += o.pending_creates;
        self.connecting += o.connecting;
        self.adder_threads += o.adder_threads;
        self.acquired += o.acquired;
        self.acquire_timeouts += o.acquire_timeouts;
        self.created += o.created;
        self.closed_idle_timeout += o.closed_idle_timeout;
        self.closed_max_lifetime += o.closed_max_lifetime;
        self.closed_broken += o.closed_broken;
        self.closed_evicted += o.closed_evicted;
        self.closed_pool_closed += o.closed_pool_closed;
        self.connect_failures += o.connect_failures;
        self.abandoned_connects += o.abandoned_connects;
        self.validation_failures += o.validation_failures;
        self.keepalives += o.keepalives;
        self.leaks_reported += o.leaks_reported;
        self.rollbacks_on_return += o.rollbacks_on_return;
        self.violations += o.violations;
    }
}

/// A snapshot of the pool: gauges (now) and cumulative counters (since start).
///
/// Gauges are read one after the other without stopping the pool, so under
/// load they may not add up exactly (`active + idle + reserved == total` holds
/// when the pool is quiet).
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Stats {
    /// Connections open (idle, in use, or held by a pool thread).
    pub total: usize,
    /// Connections borrowed by the application.
    pub active: usize,
    /// Connections ready to hand out.
    pub idle: usize,
    /// Connections held by pool threads (keepalive, retirement) right now.
    pub reserved: usize,
    /// Threads blocked in `get`.
    pub waiting: usize,
    /// Connection requests queued or being connected.
    pub pending_creates: usize,
    /// Connects running right now.
    pub connecting: usize,
    /// Connect threads alive.
    pub adder_threads: usize,
    /// Successful `get`s.
    pub acquired: u64,
    /// `get`s that timed out.
    pub acquire_timeouts: u64,
    /// Connections created.
    pub created: u64,
    /// Connections closed, by reason: idle_timeout, max_lifetime, broken,
    /// evicted, pool_closed (see [`CloseReason`]).
    pub closed_idle_timeout: u64,
    pub closed_max_lifetime: u64,
    pub closed_broken: u64,
    pub closed_evicted: u64,
    pub closed_pool_closed: u64,
    /// Connect attempts that failed.
    pub connect_failures: u64,
    /// Connect attempts that overran the hard deadline and were cut off.
    pub abandoned_connects: u64,
    /// Validations (on borrow or keepalive) that failed.
    pub validation_failures: u64,
    /// Keepalive checks run.
    pub keepalives: u64,
    /// Borrowed connections reported as possible leaks.
    pub leaks_reported: u64,
    /// Transactions rolled back because a connection was returned inside one.
    pub rollbacks_on_return: u64,
    /// Time callers waited in `get` (an immediate hand-out counts as < 1 µs).
    pub acquire_latency: Latency,
    /// Time one successful connect took.
    pub connect_latency: Latency,
    /// Broken internal invariants observed (must be 0; report a bug if not).
    pub violations: u64,
}
