//! Counters and latency histograms, and the [`Stats`] snapshot.
//!
//! Gauges (what the pool holds now) are read from the bag when a snapshot is
//! taken; cumulative counters are atomics bumped on slow paths only. The one
//! count the hot path keeps (borrows) lives in each slot and is updated by the
//! slot's owner alone, with a plain load and store.

use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use crate::events::CloseReason;

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
    /// A percentile is its bucket's upper edge, but never above the
    /// maximum: with every value in one bucket (say 2 to 3 µs), the edge
    /// (4 µs) would say more than anything recorded.
    pub fn snapshot(&self, extra_zero: u64) -> Latency {
        let mut c = self.counts();
        c[0] += extra_zero;
        let total: u64 = c.iter().sum();
        // Read after the counts: a value recorded meanwhile only raises it.
        let max_us = self.max_us.load(Relaxed);
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
                    let edge = if i == 0 { 1 } else { 1u64 << i };
                    return Duration::from_micros(edge.min(max_us));
                }
            }
            Duration::from_micros(max_us)
        };
        Latency {
            count: total,
            p50: pct(0.50),
            p95: pct(0.95),
            p99: pct(0.99),
            max: Duration::from_micros(max_us),
        }
    }
}

/// Defines [`Stats`] from one list of fields, so that the snapshot, the
/// per-host sum and the pool's atomic counters cannot drift apart:
/// - `gauges`: what the pool holds now, read from the bag by the snapshot;
/// - `derived`: cumulative figures the snapshot computes (from slots, from
///   the close reasons);
/// - `counters`: cumulative figures with one `AtomicU64` each in
///   [`Counters`], copied by [`Counters::fill`].
///
/// Every field of the three groups is summed by `absorb`.
macro_rules! stats {
    (
        gauges { $($(#[$gd:meta])* $g:ident,)* }
        derived { $($(#[$dd:meta])* $d:ident,)* }
        counters { $($(#[$cd:meta])* $c:ident,)* }
    ) => {
        /// A snapshot of the pool: gauges (now) and cumulative counters (since start).
        ///
        /// Gauges are read one after the other without stopping the pool, so under
        /// load they may not add up exactly (`active + idle + reserved == total` holds
        /// when the pool is quiet).
        #[derive(Clone, Debug, Default, PartialEq)]
        #[non_exhaustive]
        pub struct Stats {
            $($(#[$gd])* pub $g: usize,)*
            $($(#[$dd])* pub $d: u64,)*
            $($(#[$cd])* pub $c: u64,)*
            /// Time callers waited in `get` (an immediate hand-out counts as < 1 µs).
            pub acquire_latency: Latency,
            /// Time one successful connect took.
            pub connect_latency: Latency,
        }

        impl Stats {
            /// Adds another pool's gauges and counters to these (latency untouched).
            pub(crate) fn absorb(&mut self, o: &Stats) {
                $(self.$g += o.$g;)*
                $(self.$d += o.$d;)*
                $(self.$c += o.$c;)*
            }
        }

        /// The cumulative counters a pool bumps (on slow paths only), besides
        /// the close reasons and the two histograms. Each is independent:
        /// `Relaxed` is enough, a snapshot reads them one by one.
        pub(crate) struct Counters {
            $(pub $c: AtomicU64,)*
            /// Connections closed, indexed by `CloseReason as usize`.
            closed: [AtomicU64; CloseReason::ALL.len()],
            pub acquire_wait: Histogram,
            pub connect_time: Histogram,
        }

        impl Counters {
            pub fn new() -> Self {
                Counters {
                    $($c: AtomicU64::new(0),)*
                    closed: std::array::from_fn(|_| AtomicU64::new(0)),
                    acquire_wait: Histogram::new(),
                    connect_time: Histogram::new(),
                }
            }

            /// Copies the counters and the close reasons into `s`.
            pub fn fill(&self, s: &mut Stats) {
                $(s.$c = self.$c.load(Relaxed);)*
                for r in CloseReason::ALL {
                    *s.closed_mut(r) = self.closed[r as usize].load(Relaxed);
                }
            }
        }
    };
}

stats! {
    gauges {
        /// Connections open (idle, in use, or held by a pool thread).
        total,
        /// Connections borrowed by the application.
        active,
        /// Connections ready to hand out.
        idle,
        /// Connections held by pool threads (keepalive, retirement) right now.
        reserved,
        /// Threads blocked in `get`.
        waiting,
        /// Connection requests queued or being connected.
        pending_creates,
        /// Connects running right now.
        connecting,
        /// Connect threads alive.
        adder_threads,
        /// The most connections the pool opens (`max_size`; summed over the
        /// hosts of a topology pool).
        max_size,
    }
    derived {
        /// Successful `get`s.
        acquired,
        /// Connections closed, by reason (see [`CloseReason`]): idle longer
        /// than `idle_timeout`.
        closed_idle_timeout,
        /// ... past `max_lifetime`.
        closed_max_lifetime,
        /// ... broken (failed validation, keepalive, the reset on return, or
        /// an error that left the session out of step).
        closed_broken,
        /// ... soft-evicted, or surplus above a lowered `max_size`.
        closed_evicted,
        /// ... because the pool closed.
        closed_pool_closed,
        /// Broken internal invariants observed (must be 0; report a bug if not).
        violations,
    }
    counters {
        /// `get`s that timed out.
        acquire_timeouts,
        /// Connections created.
        created,
        /// Connect attempts that failed.
        connect_failures,
        /// Connect attempts that overran the hard deadline and were cut off.
        abandoned_connects,
        /// Validations (on borrow or keepalive) that failed.
        validation_failures,
        /// Keepalive checks run.
        keepalives,
        /// Borrowed connections reported as possible leaks.
        leaks_reported,
        /// Transactions rolled back because a connection was returned inside one.
        rollbacks_on_return,
        /// Sessions reset on return because their state had changed (or the
        /// borrower used the raw connection, so it was unknown).
        resets_on_return,
        /// `get`s cancelled through their cancel token while they waited.
        acquires_cancelled,
        /// Statements cut off by the watchdog: their connection waited past
        /// its statement bound for an answer (the socket was shut down).
        statements_cut,
        /// Successful `get`s that found no idle connection and waited (Go's
        /// `DBStats.WaitCount`, pgxpool's `EmptyAcquireCount`).
        acquires_waited,
        /// Total time those `get`s waited, in microseconds (Go's
        /// `DBStats.WaitDuration`, pgxpool's `EmptyAcquireWaitTime`).
        acquire_wait_us,
    }
}

impl Counters {
    /// Counts a close, by its reason.
    pub fn closed(&self, r: CloseReason) {
        self.closed[r as usize].fetch_add(1, Relaxed);
    }
}

impl Stats {
    fn closed_mut(&mut self, reason: CloseReason) -> &mut u64 {
        match reason {
            CloseReason::IdleTimeout => &mut self.closed_idle_timeout,
            CloseReason::MaxLifetime => &mut self.closed_max_lifetime,
            CloseReason::Broken => &mut self.closed_broken,
            CloseReason::Evicted => &mut self.closed_evicted,
            CloseReason::PoolClosed => &mut self.closed_pool_closed,
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_bucket_edges_never_above_the_maximum() {
        let h = Histogram::new();
        for us in [2, 3, 3] {
            h.record(Duration::from_micros(us));
        }
        let l = h.snapshot(0);
        // Every value is in the bucket [2, 4): its edge would be 4 µs.
        assert_eq!(
            (l.p50, l.p99, l.max),
            (
                Duration::from_micros(3),
                Duration::from_micros(3),
                Duration::from_micros(3)
            )
        );
        h.record(Duration::from_micros(1000));
        let l = h.snapshot(5);
        // Five values under 1 µs, three of 2-3 µs, one of 1 ms.
        assert_eq!(l.count, 9);
        assert_eq!(l.p50, Duration::from_micros(1));
        assert_eq!(l.p95, Duration::from_micros(1000));
        assert_eq!(l.max, Duration::from_micros(1000));
        assert_eq!(Histogram::new().snapshot(0), Latency::default());
    }
}
