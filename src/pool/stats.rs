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

/// Buckets of the pool's histograms (see [`Buckets`]): the last one, from
/// 2^38 µs (3.2 days) up, has no upper edge.
pub const BUCKETS: usize = 40;

/// A lock-free histogram with power-of-two microsecond buckets: bucket 0 holds
/// values under 1 µs, bucket k holds [2^(k-1), 2^k) µs.
#[derive(Debug)]
pub(crate) struct Histogram {
    buckets: [AtomicU64; BUCKETS],
    max_us: AtomicU64,
    /// The sum of the values recorded, in µs (each truncated to whole µs,
    /// as its bucket is chosen).
    sum_us: AtomicU64,
}

impl Histogram {
    pub fn new() -> Self {
        Histogram {
            buckets: std::array::from_fn(|_| AtomicU64::new(0)),
            max_us: AtomicU64::new(0),
            sum_us: AtomicU64::new(0),
        }
    }
    pub fn record(&self, d: Duration) {
        self.record_us(d.as_micros().min(u64::MAX as u128) as u64);
    }
    pub fn record_us(&self, us: u64) {
        let b = (64 - us.leading_zeros() as usize).min(BUCKETS - 1);
        self.buckets[b].fetch_add(1, Relaxed);
        self.max_us.fetch_max(us, Relaxed);
        self.sum_us.fetch_add(us, Relaxed);
    }
    /// The counts per bucket and their sum, for exporters: `extra_zero`
    /// values under 1 µs are added to bucket 0, and `extra_sum_us` to the
    /// sum (for a histogram whose fastest values are counted elsewhere).
    pub fn buckets(&self, extra_zero: u64, extra_sum_us: u64) -> Buckets {
        let mut counts = self.counts().to_vec();
        counts[0] += extra_zero;
        Buckets {
            counts,
            sum: Duration::from_micros(self.sum_us.load(Relaxed).saturating_add(extra_sum_us)),
        }
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
            /// Kept only while timings are on.
            pub use_time: Histogram,
            pub statement_time: Histogram,
        }

        impl Counters {
            pub fn new() -> Self {
                Counters {
                    $($c: AtomicU64::new(0),)*
                    closed: std::array::from_fn(|_| AtomicU64::new(0)),
                    acquire_wait: Histogram::new(),
                    connect_time: Histogram::new(),
                    use_time: Histogram::new(),
                    statement_time: Histogram::new(),
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

/// A histogram's bucket counts, not cumulative: `counts[0]` holds values
/// under 1 µs, `counts[k]` values in [2^(k-1), 2^k) µs, the last bucket
/// everything from 2^(BUCKETS-2) µs up. Counts of several pools (the hosts
/// of a topology pool, several processes) add up bucket by bucket.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Buckets {
    /// One count per bucket ([`BUCKETS`] of them; empty when nothing was
    /// kept).
    pub counts: Vec<u64>,
    /// The sum of the values counted.
    pub sum: Duration,
}

impl Buckets {
    /// How many values were counted.
    pub fn count(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Each bucket's upper edge (exclusive: a value counted under `edge` is
    /// less than it) with the number of values below it, cumulative, as
    /// Prometheus' `le` buckets want them; the last bucket, which has no
    /// edge, is left out (it is the `+Inf` bucket: [`count`](Buckets::count)).
    pub fn cumulative(&self) -> impl Iterator<Item = (Duration, u64)> + '_ {
        let last = self.counts.len().saturating_sub(1);
        self.counts[..last]
            .iter()
            .enumerate()
            .scan(0u64, |seen, (k, n)| {
                *seen += n;
                Some((Duration::from_micros(1u64 << k), *seen))
            })
    }

    /// Adds another histogram's counts to these.
    pub fn absorb(&mut self, o: &Buckets) {
        if self.counts.len() < o.counts.len() {
            self.counts.resize(o.counts.len(), 0);
        }
        for (a, b) in self.counts.iter_mut().zip(&o.counts) {
            *a += b;
        }
        self.sum += o.sum;
    }
}

/// The pool's histograms (see [`Buckets`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Histograms {
    /// Time callers waited in `get` (an immediate hand-out counts as < 1 µs).
    pub acquire_wait: Buckets,
    /// Time a successful connect took (TCP, greeting, authentication,
    /// session set-up).
    pub connect_time: Buckets,
    /// Time a connection stayed borrowed, from `get` to its return: kept
    /// only while timings are on (see `Pool::keep_timings`).
    pub use_time: Buckets,
    /// Time a statement took, from its sending to the end of its answer
    /// (a streamed answer ends when it is read to its end or dropped): kept
    /// only while timings are on.
    pub statement_time: Buckets,
}

impl Histograms {
    /// Adds another pool's histograms to these.
    pub fn absorb(&mut self, o: &Histograms) {
        self.acquire_wait.absorb(&o.acquire_wait);
        self.connect_time.absorb(&o.connect_time);
        self.use_time.absorb(&o.use_time);
        self.statement_time.absorb(&o.statement_time);
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

    #[test]
    fn buckets_are_cumulative_below_exclusive_edges_and_add_up() {
        let h = Histogram::new();
        for us in [0, 1, 3, 4, 1000] {
            h.record(Duration::from_micros(us));
        }
        let b = h.buckets(2, 0);
        assert_eq!(b.count(), 7);
        assert_eq!(b.sum, Duration::from_micros(1008));
        let c: Vec<_> = b.cumulative().take(5).collect();
        let us = |n| Duration::from_micros(n);
        // Below 1 µs: the two extra and the 0; below 2: the 1; below 4: the 3;
        // below 8: the 4.
        assert_eq!(
            c,
            [(us(1), 3), (us(2), 4), (us(4), 5), (us(8), 6), (us(16), 6)]
        );
        assert_eq!(b.cumulative().count(), BUCKETS - 1);
        assert_eq!(b.cumulative().last(), Some((us(1 << (BUCKETS - 2)), 7)));
        let mut sum = b.clone();
        sum.absorb(&b);
        assert_eq!((sum.count(), sum.sum), (14, us(2016)));
        let mut empty = Buckets::default();
        empty.absorb(&b);
        assert_eq!(empty, b);
        assert_eq!(Buckets::default().cumulative().count(), 0);
    }
}
