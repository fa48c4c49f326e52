//! B1 (issue 5): pool overhead. One checkout + return cycle of a no-op
//! connection, across pools:
//!
//! - `floor`: a crossbeam `ArrayQueue` pop + push (the least a pool can do);
//! - `staunch`: the generic `staunch::pool::CorePool` over a no-op `Connector`
//!   (housekeeping timers off, default `alive_bypass_window`);
//! - `r2d2`: the same no-op connection behind `r2d2::ManageConnection`, with
//!   r2d2's default config (`test_on_check_out = true`: `is_valid` on every
//!   checkout) and with `test_on_check_out(false)`;
//! - `mutex`: a `Mutex<Vec>` + `Condvar` pool written here (~30 lines).
//!
//! Every cell (pool size × threads) is measured as: a warm-up run of each
//! contender, then `reps` rounds, each round running every contender once for
//! `dur_ms` (contenders interleaved, so background load hits all alike). A run
//! counts cycles done by all threads and the CPU time those threads used.
//! Reported: the median over rounds of
//!   - CPU ns per cycle = Σ thread CPU time / Σ cycles (robust to a shared
//!     machine and to more threads than cores), and
//!   - wall ns per cycle = run time / Σ cycles (the inverse of throughput).
//!
//! Run: `cargo bench --bench pool_overhead [-- --reps=7 --dur-ms=150 --threads=1,2 --sizes=8 --only=staunch,floor --quick]`.

#[path = "common/mod.rs"]
mod common;

use std::collections::BTreeMap;
use std::hint::black_box;
use std::ops::Deref;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Barrier, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crossbeam_queue::ArrayQueue;
use staunch::pool::{ConnectAttempt, Connector};

use common::{median, thread_cpu_ns};

// ---------------------------------------------------------------------------
// The no-op connection and its adapters.

#[derive(Debug)]
pub struct NoopConn {
    #[allow(dead_code)]
    n: u64,
}

#[derive(Debug)]
struct NoopConnector;

impl Connector for NoopConnector {
    type Conn = NoopConn;
    fn connect(&self, _: &ConnectAttempt) -> Result<NoopConn, staunch::Error> {
        Ok(NoopConn { n: 0 })
    }
    fn validate(&self, _: &mut NoopConn, _: Duration) -> Result<(), staunch::Error> {
        Ok(())
    }
    fn endpoint(&self) -> String {
        "noop".into()
    }
}

#[derive(Debug)]
struct NoopManager;

impl r2d2::ManageConnection for NoopManager {
    type Connection = NoopConn;
    type Error = std::io::Error;
    fn connect(&self) -> Result<NoopConn, std::io::Error> {
        Ok(NoopConn { n: 0 })
    }
    fn is_valid(&self, _: &mut NoopConn) -> Result<(), std::io::Error> {
        Ok(())
    }
    fn has_broken(&self, _: &mut NoopConn) -> bool {
        false
    }
}

// ---------------------------------------------------------------------------
// The Mutex + Condvar baseline: a Vec of idle connections under one lock; a
// return wakes one waiter, and only when someone waits.

struct MutexPool {
    state: Mutex<(Vec<NoopConn>, usize)>, // (idle, waiters)
    cv: Condvar,
}

struct MutexGuardConn<'a> {
    pool: &'a MutexPool,
    conn: Option<NoopConn>,
}

impl MutexPool {
    fn new(n: usize) -> Self {
        let idle = (0..n).map(|_| NoopConn { n: 0 }).collect();
        MutexPool {
            state: Mutex::new((idle, 0)),
            cv: Condvar::new(),
        }
    }
    fn lock(&self) -> MutexGuard<'_, (Vec<NoopConn>, usize)> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
    fn get(&self) -> MutexGuardConn<'_> {
        let mut g = self.lock();
        loop {
            if let Some(c) = g.0.pop() {
                return MutexGuardConn {
                    pool: self,
                    conn: Some(c),
                };
            }
            g.1 += 1;
            g = self.cv.wait(g).unwrap_or_else(|p| p.into_inner());
            g.1 -= 1;
        }
    }
}

impl Deref for MutexGuardConn<'_> {
    type Target = NoopConn;
    fn deref(&self) -> &NoopConn {
        self.conn.as_ref().unwrap()
    }
}

impl Drop for MutexGuardConn<'_> {
    fn drop(&mut self) {
        let mut g = self.pool.lock();
        g.0.push(self.conn.take().unwrap());
        let wake = g.1 > 0;
        drop(g);
        if wake {
            self.pool.cv.notify_one();
        }
    }
}

// ---------------------------------------------------------------------------
// The measurement.

#[derive(Clone, Copy, Debug)]
struct Run {
    cycles: u64,
    cpu_ns: u64,
    wall_ns: u64,
}

impl Run {
    fn cpu_per_cycle(&self) -> f64 {
        self.cpu_ns as f64 / self.cycles as f64
    }
    fn wall_per_cycle(&self) -> f64 {
        self.wall_ns as f64 / self.cycles as f64
    }
}

/// Runs `cycle` on `threads` threads for `dur`.
fn run<F: Fn() + Sync>(threads: usize, dur: Duration, cycle: &F) -> Run {
    let stop = AtomicBool::new(false);
    let barrier = Barrier::new(threads + 1);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let (stop, barrier) = (&stop, &barrier);
                s.spawn(move || {
                    barrier.wait();
                    let c0 = thread_cpu_ns();
                    let mut n = 0u64;
                    while !stop.load(Relaxed) {
                        for _ in 0..64 {
                            cycle();
                        }
                        n += 64;
                    }
                    (n, thread_cpu_ns() - c0)
                })
            })
            .collect();
        barrier.wait();
        let t0 = Instant::now();
        std::thread::sleep(dur);
        stop.store(true, Relaxed);
        let mut r = Run {
            cycles: 0,
            cpu_ns: 0,
            wall_ns: 0,
        };
        for h in handles {
            let (n, cpu) = h.join().expect("bench thread");
            r.cycles += n;
            r.cpu_ns += cpu;
        }
        r.wall_ns = t0.elapsed().as_nanos() as u64;
        r
    })
}

const CONTENDERS: [&str; 5] = ["floor", "staunch", "r2d2", "r2d2-notest", "mutex"];

struct Pools {
    floor: ArrayQueue<NoopConn>,
    staunch: staunch::pool::CorePool<NoopConnector>,
    r2d2: r2d2::Pool<NoopManager>,
    r2d2_notest: r2d2::Pool<NoopManager>,
    mutex: MutexPool,
}

impl Pools {
    fn new(size: usize) -> Pools {
        let floor = ArrayQueue::new(size);
        for _ in 0..size {
            floor.push(NoopConn { n: 0 }).unwrap();
        }
        let cfg = staunch::Builder::new()
            .max_size(size)
            .min_idle(size)
            .keepalive_interval(None)
            .idle_timeout(None)
            .max_lifetime(None)
            .config()
            .expect("staunch config")
            .pool()
            .clone();
        let staunch =
            staunch::pool::CorePool::with_connector(cfg, NoopConnector).expect("staunch pool");
        let t0 = Instant::now();
        while staunch.stats().idle < size {
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "staunch pool never filled: {:?}",
                staunch.stats()
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        let r2d2 = r2d2::Pool::builder()
            .max_size(size as u32)
            .build(NoopManager)
            .expect("r2d2");
        let r2d2_notest = r2d2::Pool::builder()
            .max_size(size as u32)
            .test_on_check_out(false)
            .build(NoopManager)
            .expect("r2d2");
        Pools {
            floor,
            staunch,
            r2d2,
            r2d2_notest,
            mutex: MutexPool::new(size),
        }
    }

    fn run(&self, which: &str, threads: usize, dur: Duration) -> Run {
        match which {
            "floor" => run(threads, dur, &|| {
                let c = loop {
                    match self.floor.pop() {
                        Some(c) => break c,
                        None => std::thread::yield_now(),
                    }
                };
                black_box(&c);
                let _ = self.floor.push(c);
            }),
            "staunch" => run(threads, dur, &|| {
                let c = self.staunch.get().expect("staunch get");
                black_box(c.deref());
            }),
            "r2d2" => run(threads, dur, &|| {
                let c = self.r2d2.get().expect("r2d2 get");
                black_box(c.deref());
            }),
            "r2d2-notest" => run(threads, dur, &|| {
                let c = self.r2d2_notest.get().expect("r2d2 get");
                black_box(c.deref());
            }),
            "mutex" => run(threads, dur, &|| {
                let c = self.mutex.get();
                black_box(c.deref());
            }),
            _ => unreachable!(),
        }
    }
}

fn main() {
    let quick = common::quick();
    let reps: usize = common::knob("reps", if quick { 3 } else { 7 });
    let dur = Duration::from_millis(common::knob("dur-ms", if quick { 100 } else { 150 }));
    let warm = Duration::from_millis(common::knob("warm-ms", if quick { 50 } else { 100 }));
    let threads_list: Vec<usize> = common::list_knob("threads", &[1, 2, 4, 8, 16]);
    let sizes: Vec<usize> = common::list_knob("sizes", &[8, 32]);
    // --only=staunch,floor runs a subset (for profiling); tables need all.
    let only: Vec<String> = common::list_knob("only", &[]);
    let contenders: Vec<&str> = CONTENDERS
        .iter()
        .copied()
        .filter(|c| only.is_empty() || only.iter().any(|o| o == c))
        .collect();
    let started = Instant::now();
    eprintln!(
        "B1 pool overhead: {reps} rounds × {} ms per cell and contender, warm-up {} ms; nproc {}, load {}",
        dur.as_millis(),
        warm.as_millis(),
        common::nproc(),
        common::loadavg()
    );

    // (size, threads, contender) -> runs
    let mut results: BTreeMap<(usize, usize, &str), Vec<Run>> = BTreeMap::new();
    let mut staunch_stats = Vec::new();
    for &size in &sizes {
        let pools = Pools::new(size);
        for &t in &threads_list {
            for &c in &contenders {
                pools.run(c, t, warm);
            }
            for round in 0..reps {
                for i in common::rotation(contenders.len(), round) {
                    let c = contenders[i];
                    let r = pools.run(c, t, dur);
                    results.entry((size, t, c)).or_default().push(r);
                }
            }
            let line = contenders
                .iter()
                .map(|c| {
                    let v: Vec<f64> = results[&(size, t, *c)]
                        .iter()
                        .map(Run::cpu_per_cycle)
                        .collect();
                    format!("{c} {:.1}", median(&v))
                })
                .collect::<Vec<_>>()
                .join(", ");
            eprintln!("  size {size:>2}, {t:>2} threads: {line} (CPU ns/cycle)");
        }
        let st = pools.staunch.stats();
        staunch_stats.push((
            size,
            st.acquired,
            st.acquire_latency.count,
            st.violations,
            st.validation_failures,
        ));
        assert_eq!(st.violations, 0, "staunch reported broken invariants");
    }

    if contenders.len() < CONTENDERS.len() {
        eprintln!(
            "B1 (subset) done in {:.0} s",
            started.elapsed().as_secs_f64()
        );
        return;
    }

    // Markdown.
    let med = |size: usize, t: usize, c: &str, f: fn(&Run) -> f64| -> f64 {
        let v: Vec<f64> = results[&(size, t, c)].iter().map(f).collect();
        median(&v)
    };
    let ratio = |size: usize, t: usize, a: &str, b: &str, f: fn(&Run) -> f64| -> f64 {
        let x: Vec<f64> = results[&(size, t, a)].iter().map(f).collect();
        let y: Vec<f64> = results[&(size, t, b)].iter().map(f).collect();
        common::paired_ratio(&x, &y)
    };
    let spread = |size: usize, t: usize, c: &str| -> String {
        let v: Vec<f64> = results[&(size, t, c)]
            .iter()
            .map(Run::cpu_per_cycle)
            .collect();
        let lo = v.iter().cloned().fold(f64::INFINITY, f64::min);
        let hi = v.iter().cloned().fold(0.0, f64::max);
        format!("{lo:.1}–{hi:.1}")
    };
    println!("### B1: pool overhead (checkout + return of a no-op connection)\n");
    println!(
        "Median of {reps} runs of {} ms per cell (contenders interleaved, order rotated each round, warm-up {} ms each). \
         **CPU ns/cycle** = CPU time of the bench threads ÷ cycles; **wall ns/cycle** = \
         run time ÷ cycles of all threads (inverse throughput; on {} cores). \
         Ratios are medians of the per-round ratios (paired: both contenders ran in the same round). \
         Load average at start: {}.\n",
        dur.as_millis(),
        warm.as_millis(),
        common::nproc(),
        common::loadavg()
    );
    for &size in &sizes {
        println!("**Pool size {size}** — CPU ns per cycle (median; staunch min–max over runs)\n");
        println!("| threads | waiting? | floor (ArrayQueue) | staunch | r2d2 default (test_on_check_out) | r2d2 test_on_check_out(false) | Mutex+Condvar | staunch ÷ floor | staunch ÷ r2d2 default | staunch ÷ r2d2 no-test | staunch ÷ Mutex |");
        println!("|---:|:---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        for &t in &threads_list {
            let f = med(size, t, "floor", Run::cpu_per_cycle);
            let s = med(size, t, "staunch", Run::cpu_per_cycle);
            let r = med(size, t, "r2d2", Run::cpu_per_cycle);
            let rn = med(size, t, "r2d2-notest", Run::cpu_per_cycle);
            let m = med(size, t, "mutex", Run::cpu_per_cycle);
            let waiting = if t > size {
                format!("yes ({t} threads > {size})")
            } else {
                "no".into()
            };
            println!(
                "| {t} | {waiting} | {f:.1} | {s:.1} ({}) | {r:.1} | {rn:.1} | {m:.1} | {:.2}× | {:.2}× | {:.2}× | {:.2}× |",
                spread(size, t, "staunch"),
                ratio(size, t, "staunch", "floor", Run::cpu_per_cycle),
                ratio(size, t, "staunch", "r2d2", Run::cpu_per_cycle),
                ratio(size, t, "staunch", "r2d2-notest", Run::cpu_per_cycle),
                ratio(size, t, "staunch", "mutex", Run::cpu_per_cycle)
            );
        }
        println!();
        println!(
            "**Pool size {size}** — wall ns per cycle (median; inverse of total throughput)\n"
        );
        println!("| threads | floor | staunch | r2d2 default | r2d2 no-test | Mutex+Condvar | staunch ÷ floor | staunch ÷ r2d2 default |");
        println!("|---:|---:|---:|---:|---:|---:|---:|---:|");
        for &t in &threads_list {
            let f = med(size, t, "floor", Run::wall_per_cycle);
            let s = med(size, t, "staunch", Run::wall_per_cycle);
            let r = med(size, t, "r2d2", Run::wall_per_cycle);
            let rn = med(size, t, "r2d2-notest", Run::wall_per_cycle);
            let m = med(size, t, "mutex", Run::wall_per_cycle);
            println!(
                "| {t} | {f:.1} | {s:.1} | {r:.1} | {rn:.1} | {m:.1} | {:.2}× | {:.2}× |",
                ratio(size, t, "staunch", "floor", Run::wall_per_cycle),
                ratio(size, t, "staunch", "r2d2", Run::wall_per_cycle)
            );
        }
        println!();
    }
    for (size, acquired, _, violations, vf) in staunch_stats {
        println!(
            "staunch pool size {size}: {acquired} acquisitions, violations {violations}, validation failures {vf}."
        );
    }
    println!();
    eprintln!("B1 done in {:.0} s", started.elapsed().as_secs_f64());
}
