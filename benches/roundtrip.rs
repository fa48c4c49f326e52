//! B2 (issue 5): a real round trip. Against a throwaway MariaDB started here:
//! checkout + `SELECT 1` + return, per contender:
//!
//! - `raw`: one `mysql::Conn` per thread (prefer_socket(false): TCP), no pool
//!   (so at 64 threads it has 64 connections, whatever the pool size column);
//! - `staunch`: `staunch::Pool::from_url(url + "?max_size=N")`, all defaults,
//!   the statement through the guard's own `Queryable`;
//! - `staunch, liveness off`: the same with `liveness_threshold=0` (no
//!   `staunch-liveness` thread): the before/after of statement liveness,
//!   which must cost nothing for statements shorter than its threshold;
//! - `staunch, timings on`: the same with `timings=on` (borrows and
//!   statements timed, as once an exporter is registered) and a scrape
//!   (`metrics_text`) every second: what metrics cost (issue 47);
//! - `staunch &mut *guard`: the same pool, the statement through the raw
//!   `mysql::Conn` (`&mut *guard`, how code taking `&mut mysql::Conn` uses
//!   it): the pool cannot see what ran, so it resets the session on return;
//! - `mysql::Pool`: the `mysql` crate's pool with its defaults (`check_health`:
//!   a COM_PING on every checkout; `reset_connection`: a COM_RESET_CONNECTION
//!   on every return), constraints (N, N), and prefer_socket(false) like
//!   everyone else (its default, prefer_socket(true), would move it to the
//!   server's unix socket);
//! - `r2d2_mysql`: r2d2 defaults (`test_on_check_out`: `is_valid` = COM_PING
//!   on checkout; r2d2_mysql's `has_broken` is another COM_PING on return),
//!   max_size N, same TCP opts;
//! - `fifo`: a strictly fair FIFO hand-off pool written here over raw
//!   `mysql::Conn`s (no ping, no reset): the tail-latency yardstick, and
//!   the throughput yardstick where the threads outnumber the N
//!   connections (no pool of N can pass it there; raw has a connection
//!   per thread).
//!
//! Issue 21's transaction per checkout (START TRANSACTION, one UPDATE of
//! the thread's own row, COMMIT) runs on raw connections, on staunch
//! (`start_transaction` on the guard), on `mysql::Pool` and on the FIFO.
//!
//! Each (threads, contender, pool size) cell: a warm-up, then `reps` rounds of
//! `dur_ms` with all contenders interleaved; every operation's latency is
//! recorded. Reported: medians over rounds of queries/s, p50, p99.
//!
//! Then, per contender, the server's commands per checkout (performance_schema:
//! rollbacks, resets, pings, selects) over 1,000 checkouts at one thread, and
//! the issue-11 targets at pool size 8, 1 and 4 threads: both staunch paths
//! ≥ 0.9× raw and ≥ 1.5× `mysql::Pool`.
//!
//! Run: `cargo bench --bench roundtrip [-- --reps=7 --dur-ms=250 --quick
//! --threads=1,4 --sizes=8]`.

#[path = "common/mod.rs"]
mod common;
use staunch_testkit as support;

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Barrier, Condvar, Mutex};
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use mysql::{Conn, Opts, OptsBuilder, PoolConstraints, PoolOpts};
use r2d2_mysql::MySqlConnectionManager;

use common::{fmt_lat_ns, median, percentile_sorted};

// ---------------------------------------------------------------------------
// A fair FIFO pool: a return hands the connection straight to the oldest
// waiter; nobody can overtake a waiter.

struct Handoff<T> {
    v: Mutex<Option<T>>,
    cv: Condvar,
}

/// Idle connections, and the waiters in arrival order.
type FifoState<T> = (Vec<T>, VecDeque<Arc<Handoff<T>>>);

struct FifoPool<T> {
    st: Mutex<FifoState<T>>,
}

struct FifoConn<'a, T> {
    pool: &'a FifoPool<T>,
    conn: Option<T>,
}

impl<T> FifoPool<T> {
    fn new(conns: Vec<T>) -> Self {
        FifoPool {
            st: Mutex::new((conns, VecDeque::new())),
        }
    }
    fn get(&self) -> FifoConn<'_, T> {
        let mut g = self.st.lock().unwrap();
        if let Some(c) = g.0.pop() {
            return FifoConn {
                pool: self,
                conn: Some(c),
            };
        }
        let me = Arc::new(Handoff {
            v: Mutex::new(None),
            cv: Condvar::new(),
        });
        g.1.push_back(me.clone());
        drop(g);
        let mut v = me.v.lock().unwrap();
        loop {
            if let Some(c) = v.take() {
                return FifoConn {
                    pool: self,
                    conn: Some(c),
                };
            }
            v = me.cv.wait(v).unwrap();
        }
    }
}

impl<T> Drop for FifoConn<'_, T> {
    fn drop(&mut self) {
        let c = self.conn.take().unwrap();
        let mut g = self.pool.st.lock().unwrap();
        match g.1.pop_front() {
            Some(w) => {
                drop(g);
                *w.v.lock().unwrap() = Some(c);
                w.cv.notify_one();
            }
            None => g.0.push(c),
        }
    }
}

// ---------------------------------------------------------------------------

#[derive(Clone, Debug)]
struct Run {
    ops: u64,
    wall: Duration,
    p50_ns: u64,
    p99_ns: u64,
    /// CPU time of this process and of the server during the run.
    client_cpu_ns: u64,
    server_cpu_ns: u64,
}

impl Run {
    fn qps(&self) -> f64 {
        self.ops as f64 / self.wall.as_secs_f64()
    }
    /// Client + server CPU µs per query.
    fn cpu_us_per_query(&self) -> f64 {
        (self.client_cpu_ns + self.server_cpu_ns) as f64 / 1e3 / self.ops as f64
    }
}

/// Runs `op(thread_index)` on `threads` threads for `dur`, timing each call.
fn run<F: Fn(usize) + Sync>(threads: usize, dur: Duration, server_pid: u32, op: &F) -> Run {
    let stop = AtomicBool::new(false);
    let barrier = Barrier::new(threads + 1);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|i| {
                let (stop, barrier) = (&stop, &barrier);
                std::thread::Builder::new()
                    .name(format!("bench-{i}"))
                    .spawn_scoped(s, move || {
                        let mut lat: Vec<u32> = Vec::with_capacity(1 << 16);
                        barrier.wait();
                        while !stop.load(Relaxed) {
                            let t0 = Instant::now();
                            op(i);
                            lat.push(t0.elapsed().as_nanos().min(u32::MAX as u128) as u32);
                        }
                        lat
                    })
                    .expect("spawn")
            })
            .collect();
        barrier.wait();
        let t0 = Instant::now();
        let (c0, s0) = (
            common::process_cpu_ns(),
            common::other_process_cpu_ns(server_pid),
        );
        std::thread::sleep(dur);
        stop.store(true, Relaxed);
        let mut all: Vec<u32> = Vec::new();
        for h in handles {
            all.extend(h.join().expect("bench thread"));
        }
        let wall = t0.elapsed();
        let (c1, s1) = (
            common::process_cpu_ns(),
            common::other_process_cpu_ns(server_pid),
        );
        all.sort_unstable();
        Run {
            ops: all.len() as u64,
            wall,
            p50_ns: percentile_sorted(&all, 0.50) as u64,
            p99_ns: percentile_sorted(&all, 0.99) as u64,
            client_cpu_ns: c1 - c0,
            server_cpu_ns: s1.saturating_sub(s0),
        }
    })
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Who {
    Raw,
    Staunch,
    StaunchNoLiveness,
    /// `staunch` with `timings=on` (what an exporter turns on) and a
    /// scrape (`metrics_text`) every second.
    StaunchTimed,
    MysqlPool,
    R2d2,
    Fifo,
    /// A transaction per checkout (START TRANSACTION, one UPDATE, COMMIT):
    /// `start_transaction` on the guard.
    StaunchTxn,
    /// The same on each thread's own `mysql::Conn`.
    RawTxn,
    /// The same on `mysql::Pool` (defaults).
    MysqlPoolTxn,
    /// The same on the fair FIFO pool (N raw connections, no ping, no
    /// reset): what any pool of N connections can reach when the threads
    /// outnumber them, so the yardstick for staunch's own cost there.
    FifoTxn,
}

impl Who {
    fn name(self) -> &'static str {
        match self {
            Who::Raw => "raw mysql::Conn",
            Who::Staunch => "staunch",
            Who::StaunchNoLiveness => "staunch, liveness off",
            Who::StaunchTimed => "staunch, timings on",
            Who::MysqlPool => "mysql::Pool",
            Who::R2d2 => "r2d2_mysql",
            Who::Fifo => "fair FIFO",
            Who::StaunchTxn => "staunch txn",
            Who::RawTxn => "raw txn",
            Who::MysqlPoolTxn => "mysql::Pool txn",
            Who::FifoTxn => "fair FIFO txn",
        }
    }
}

struct Contenders {
    server_pid: u32,
    raw: Vec<Mutex<Conn>>,
    staunch: BTreeMap<usize, staunch::Pool>,
    staunch_off: BTreeMap<usize, staunch::Pool>,
    staunch_timed: BTreeMap<usize, staunch::Pool>,
    mysql: BTreeMap<usize, mysql::Pool>,
    r2d2: BTreeMap<usize, r2d2::Pool<MySqlConnectionManager>>,
    fifo: BTreeMap<usize, FifoPool<Conn>>,
}

/// One transaction: START TRANSACTION, an UPDATE of this thread's row, COMMIT.
const TXN_UPDATE: &str = "UPDATE bench_tx SET n = n + 1 WHERE id = ?";

/// That transaction on a `mysql::Conn` (raw, the FIFO's).
fn txn(c: &mut Conn, i: usize) {
    let mut tx = c
        .start_transaction(mysql::TxOpts::default())
        .expect("start");
    tx.exec_drop(TXN_UPDATE, (i,)).expect("update");
    tx.commit().expect("commit");
}

fn select1<Q: Queryable>(c: &mut Q) {
    let one: Option<i64> = c.query_first("SELECT 1").expect("SELECT 1");
    assert_eq!(one, Some(1));
}

/// The same through staunch's own `Queryable` (the `mysql` crate's method
/// names, its own trait).
fn select1_staunch(c: &mut staunch::PooledConn) {
    use staunch::prelude::Queryable as _;
    let one: Option<i64> = c.query_first("SELECT 1").expect("SELECT 1");
    assert_eq!(one, Some(1));
}

impl Contenders {
    fn run(&self, who: Who, size: usize, threads: usize, dur: Duration) -> Run {
        let pid = self.server_pid;
        match who {
            Who::Raw => run(threads, dur, pid, &|i| {
                // Each thread has its own connection: the lock is never contended.
                select1(&mut *self.raw[i].lock().unwrap());
            }),
            Who::Staunch => {
                let p = &self.staunch[&size];
                run(threads, dur, pid, &|_| {
                    let mut c = p.get().expect("staunch get");
                    select1_staunch(&mut c);
                })
            }
            Who::StaunchNoLiveness => {
                let p = &self.staunch_off[&size];
                run(threads, dur, pid, &|_| {
                    let mut c = p.get().expect("staunch get");
                    select1_staunch(&mut c);
                })
            }
            Who::StaunchTimed => {
                let p = &self.staunch_timed[&size];
                run(threads, dur, pid, &|_| {
                    let mut c = p.get().expect("staunch get");
                    select1_staunch(&mut c);
                })
            }
            Who::MysqlPool => {
                let p = &self.mysql[&size];
                run(threads, dur, pid, &|_| {
                    let mut c = p.get_conn().expect("mysql::Pool get_conn");
                    select1(&mut c);
                })
            }
            Who::R2d2 => {
                let p = &self.r2d2[&size];
                run(threads, dur, pid, &|_| {
                    let mut c = p.get().expect("r2d2 get");
                    select1(&mut *c);
                })
            }
            Who::Fifo => {
                let p = &self.fifo[&size];
                run(threads, dur, pid, &|_| {
                    let mut c = p.get();
                    select1(c.conn.as_mut().unwrap());
                })
            }
            Who::StaunchTxn => {
                let p = &self.staunch[&size];
                run(threads, dur, pid, &|i| {
                    let mut c = p.get().expect("staunch get");
                    let mut tx = c
                        .start_transaction(staunch::TxOpts::default())
                        .expect("start");
                    staunch::prelude::Queryable::exec_drop(&mut tx, TXN_UPDATE, (i,))
                        .expect("update");
                    tx.commit().expect("commit");
                })
            }
            Who::RawTxn => run(threads, dur, pid, &|i| {
                txn(&mut self.raw[i].lock().unwrap(), i);
            }),
            Who::MysqlPoolTxn => {
                let p = &self.mysql[&size];
                run(threads, dur, pid, &|i| {
                    let mut c = p.get_conn().expect("mysql::Pool get_conn");
                    // `mysql::PooledConn` has its own `start_transaction` (no `DerefMut`).
                    let mut tx = c
                        .start_transaction(mysql::TxOpts::default())
                        .expect("start");
                    tx.exec_drop(TXN_UPDATE, (i,)).expect("update");
                    tx.commit().expect("commit");
                })
            }
            Who::FifoTxn => {
                let p = &self.fifo[&size];
                run(threads, dur, pid, &|i| {
                    txn(p.get().conn.as_mut().unwrap(), i);
                })
            }
        }
    }
}

/// Raises this process's open-files limit to `want` (within the hard limit):
/// a scaling run holds a socket per connection, past the usual 1,024.
fn raise_fd_limit(want: usize) {
    let mut l = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: l is a valid out-pointer for getrlimit, and a valid input to
    // setrlimit.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut l) == 0 && (l.rlim_cur as usize) < want {
            l.rlim_cur = (want as libc::rlim_t).min(l.rlim_max);
            libc::setrlimit(libc::RLIMIT_NOFILE, &l);
        }
    }
}

fn main() {
    let quick = common::quick();
    let reps: usize = common::knob("reps", if quick { 3 } else { 7 });
    let dur = Duration::from_millis(common::knob("dur-ms", if quick { 200 } else { 250 }));
    let warm = Duration::from_millis(common::knob("warm-ms", if quick { 100 } else { 200 }));
    let threads_list = common::list_knob("threads", &[1usize, 4, 16, 64]);
    let sizes = common::list_knob("sizes", &[8usize, 32]);
    let started = Instant::now();

    // Every contender's connections at once: a raw one per thread, and six
    // pools (three staunch, mysql::Pool, r2d2, FIFO) of each size; a scaling
    // run (`--threads=1,8,64,256,1024 --sizes=8,32,128,256`) holds ~3,200.
    let needed = threads_list.iter().max().unwrap() + 6 * sizes.iter().sum::<usize>() + 50;
    raise_fd_limit(needed + 256);
    let db = support::MariaDb::start_with(support::ServerOpts {
        // performance_schema counts the commands each contender sends.
        args: vec![
            format!("--max-connections={}", needed.max(500)),
            format!("--open-files-limit={}", 2 * needed + 1024),
            "--performance-schema=ON".into(),
        ],
        ..Default::default()
    });
    let url = db.url();
    let tcp = || OptsBuilder::from_opts(Opts::from_url(&url).expect("url")).prefer_socket(false);
    eprintln!(
        "B2 round trip: MariaDB {} at {}; {reps} rounds × {} ms per cell, warm-up {} ms; nproc {}, load {}",
        db.query_string("SELECT VERSION()").unwrap_or_default(),
        db.addr(),
        dur.as_millis(),
        warm.as_millis(),
        common::nproc(),
        common::loadavg()
    );

    let max_threads = *threads_list.iter().max().unwrap();
    // One row per thread for the transaction contenders: no lock waits.
    db.sql("CREATE TABLE staunch_test.bench_tx (id INT PRIMARY KEY, n INT NOT NULL) ENGINE=InnoDB");
    for i in 0..max_threads {
        db.sql(&format!(
            "INSERT INTO staunch_test.bench_tx VALUES ({i}, 0)"
        ));
    }
    let mut c = Contenders {
        server_pid: db.pid(),
        raw: (0..max_threads)
            .map(|_| Mutex::new(Conn::new(tcp()).expect("raw connect")))
            .collect(),
        staunch: BTreeMap::new(),
        staunch_off: BTreeMap::new(),
        staunch_timed: BTreeMap::new(),
        mysql: BTreeMap::new(),
        r2d2: BTreeMap::new(),
        fifo: BTreeMap::new(),
    };
    for &n in &sizes {
        c.staunch.insert(
            n,
            staunch::Pool::from_url(&format!("{url}?max_size={n}")).expect("staunch"),
        );
        c.staunch_off.insert(
            n,
            staunch::Pool::from_url(&format!("{url}?max_size={n}&liveness_threshold=0"))
                .expect("staunch, liveness off"),
        );
        c.staunch_timed.insert(
            n,
            staunch::Pool::from_url(&format!("{url}?max_size={n}&timings=on"))
                .expect("staunch, timings on"),
        );
        let popts = PoolOpts::default().with_constraints(PoolConstraints::new(n, n).unwrap());
        c.mysql.insert(
            n,
            mysql::Pool::new(tcp().pool_opts(popts)).expect("mysql::Pool"),
        );
        c.r2d2.insert(
            n,
            r2d2::Pool::builder()
                .max_size(n as u32)
                .build(MySqlConnectionManager::new(tcp()))
                .expect("r2d2_mysql"),
        );
        c.fifo.insert(
            n,
            FifoPool::new(
                (0..n)
                    .map(|_| Conn::new(tcp()).expect("fifo connect"))
                    .collect(),
            ),
        );
    }
    // The exporter of the timed pools: a scrape every second, as Prometheus
    // would (the thread ends with the process).
    let scraped: Vec<staunch::Pool> = c.staunch_timed.values().cloned().collect();
    std::thread::spawn(move || loop {
        for p in &scraped {
            std::hint::black_box(p.metrics_text());
        }
        std::thread::sleep(Duration::from_secs(1));
    });
    // Sanity: mysql::Pool defaults as documented above.
    {
        let o = Opts::from(tcp());
        assert!(o.get_pool_opts().check_health() && o.get_pool_opts().reset_connection());
        assert!(
            Opts::from_url(&url).unwrap().get_prefer_socket(),
            "mysql's default is prefer_socket(true)"
        );
    }

    // (threads, who, size) -> runs; raw is keyed with size 0.
    let mut results: BTreeMap<(usize, Who, usize), Vec<Run>> = BTreeMap::new();
    let mut cells: Vec<(Who, usize)> = vec![(Who::Raw, 0), (Who::RawTxn, 0)];
    for &n in &sizes {
        for w in [
            Who::Staunch,
            Who::StaunchNoLiveness,
            Who::StaunchTimed,
            Who::MysqlPool,
            Who::R2d2,
            Who::Fifo,
            Who::StaunchTxn,
            Who::MysqlPoolTxn,
            Who::FifoTxn,
        ] {
            cells.push((w, n));
        }
    }
    for &t in &threads_list {
        for &(w, n) in &cells {
            c.run(w, n, t, warm);
        }
        for round in 0..reps {
            for i in common::rotation(cells.len(), round) {
                let (w, n) = cells[i];
                let r = c.run(w, n, t, dur);
                results.entry((t, w, n)).or_default().push(r);
            }
        }
        let line = cells
            .iter()
            .map(|&(w, n)| {
                let q: Vec<f64> = results[&(t, w, n)].iter().map(Run::qps).collect();
                format!(
                    "{}{} {:.0}",
                    w.name(),
                    if n > 0 {
                        format!("/{n}")
                    } else {
                        String::new()
                    },
                    median(&q)
                )
            })
            .collect::<Vec<_>>()
            .join(", ");
        eprintln!("  {t:>2} threads: {line} q/s");
    }

    let q = |t: usize, w: Who, n: usize| {
        median(&results[&(t, w, n)].iter().map(Run::qps).collect::<Vec<_>>())
    };
    // Median over rounds of the per-round ratio staunch ÷ other.
    let pr = |t: usize, n: usize, w: Who, wn: usize, f: fn(&Run) -> f64| -> f64 {
        let a: Vec<f64> = results[&(t, Who::Staunch, n)].iter().map(f).collect();
        let b: Vec<f64> = results[&(t, w, wn)].iter().map(f).collect();
        common::paired_ratio(&a, &b)
    };
    let cpu = |t: usize, w: Who, n: usize| {
        median(
            &results[&(t, w, n)]
                .iter()
                .map(Run::cpu_us_per_query)
                .collect::<Vec<_>>(),
        )
    };
    let p50 = |t: usize, w: Who, n: usize| {
        median(
            &results[&(t, w, n)]
                .iter()
                .map(|r| r.p50_ns as f64)
                .collect::<Vec<_>>(),
        ) as u64
    };
    let p99 = |t: usize, w: Who, n: usize| {
        median(
            &results[&(t, w, n)]
                .iter()
                .map(|r| r.p99_ns as f64)
                .collect::<Vec<_>>(),
        ) as u64
    };

    println!("### B2: real round trip (checkout + `SELECT 1` + return)\n");
    println!(
        "MariaDB on 127.0.0.1 over TCP (every contender prefer_socket(false)), server and clients on the same {} cores. \
         Median of {reps} runs of {} ms per cell (contenders interleaved, order rotated each round, warm-up {} ms each). \
         Ratios are medians of per-round ratios (paired: same round). Load average at start: {}.\n",
        common::nproc(),
        dur.as_millis(),
        warm.as_millis(),
        common::loadavg()
    );
    for &n in &sizes {
        println!("**Pool size {n}** — queries/s (median) and ratios\n");
        println!("| threads | raw Conn/thread | staunch (min–max over runs) | mysql::Pool (defaults) | r2d2_mysql (defaults) | fair FIFO | staunch ÷ raw | staunch ÷ mysql::Pool | staunch ÷ r2d2_mysql |");
        println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        for &t in &threads_list {
            let (raw, s, m, r, f) = (
                q(t, Who::Raw, 0),
                q(t, Who::Staunch, n),
                q(t, Who::MysqlPool, n),
                q(t, Who::R2d2, n),
                q(t, Who::Fifo, n),
            );
            let sv: Vec<f64> = results[&(t, Who::Staunch, n)]
                .iter()
                .map(Run::qps)
                .collect();
            let (lo, hi) = (
                sv.iter().cloned().fold(f64::INFINITY, f64::min),
                sv.iter().cloned().fold(0.0, f64::max),
            );
            println!(
                "| {t} | {raw:.0} | {s:.0} ({lo:.0}–{hi:.0}) | {m:.0} | {r:.0} | {f:.0} | {:.2}× | {:.2}× | {:.2}× |",
                pr(t, n, Who::Raw, 0, Run::qps),
                pr(t, n, Who::MysqlPool, n, Run::qps),
                pr(t, n, Who::R2d2, n, Run::qps)
            );
        }
        println!();
        println!("**Pool size {n}** — latency p50 / p99 (median over runs)\n");
        println!("| threads | raw Conn/thread | staunch | mysql::Pool | r2d2_mysql | fair FIFO | Little's-law mean for staunch (threads ÷ q/s) | staunch p99 ÷ FIFO p99 |");
        println!("|---:|---:|---:|---:|---:|---:|---:|---:|");
        for &t in &threads_list {
            let cell = |w: Who, nn: usize| {
                format!(
                    "{} / {}",
                    fmt_lat_ns(p50(t, w, nn)),
                    fmt_lat_ns(p99(t, w, nn))
                )
            };
            let mean = t as f64 / q(t, Who::Staunch, n) * 1e9;
            println!(
                "| {t} | {} | {} | {} | {} | {} | {} | {:.2}× |",
                cell(Who::Raw, 0),
                cell(Who::Staunch, n),
                cell(Who::MysqlPool, n),
                cell(Who::R2d2, n),
                cell(Who::Fifo, n),
                fmt_lat_ns(mean as u64),
                pr(t, n, Who::Fifo, n, |r| r.p99_ns as f64)
            );
        }
        println!();
        println!("**Pool size {n}** — CPU per query, client + server (µs, median): robust to the shared machine\n");
        println!("| threads | raw Conn/thread | staunch | mysql::Pool | r2d2_mysql | fair FIFO | staunch ÷ raw | staunch ÷ mysql::Pool | staunch ÷ r2d2_mysql |");
        println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        for &t in &threads_list {
            let (raw, s, m, r, f) = (
                cpu(t, Who::Raw, 0),
                cpu(t, Who::Staunch, n),
                cpu(t, Who::MysqlPool, n),
                cpu(t, Who::R2d2, n),
                cpu(t, Who::Fifo, n),
            );
            println!(
                "| {t} | {raw:.1} | {s:.1} | {m:.1} | {r:.1} | {f:.1} | {:.2}× | {:.2}× | {:.2}× |",
                pr(t, n, Who::Raw, 0, Run::cpu_us_per_query),
                pr(t, n, Who::MysqlPool, n, Run::cpu_us_per_query),
                pr(t, n, Who::R2d2, n, Run::cpu_us_per_query)
            );
        }
        println!();
    }
    // Issue 21: a transaction per checkout, and checkout + SELECT 1 through
    // `&mut *guard` beside r2d2_mysql and mysql::Pool, at every thread count.
    let ratio = |t: usize, a: (Who, usize), b: (Who, usize)| -> f64 {
        let x: Vec<f64> = results[&(t, a.0, a.1)].iter().map(Run::qps).collect();
        let y: Vec<f64> = results[&(t, b.0, b.1)].iter().map(Run::qps).collect();
        common::paired_ratio(&x, &y)
    };
    for &n in &sizes {
        println!("\n**Transaction per checkout** (START TRANSACTION, one UPDATE, COMMIT; pool size {n}; targets: ≥ 0.95× raw, ≥ 1.5× mysql::Pool; where the threads outnumber the {n} connections, the fair FIFO over {n} raw connections is the most any pool of {n} can reach)\n");
        println!("| threads | raw txn/thread (q/s) | staunch start_transaction (q/s) | mysql::Pool txn (q/s) | fair FIFO txn (q/s) | staunch ÷ raw | staunch ÷ mysql::Pool | staunch ÷ fair FIFO |");
        println!("|---|---|---|---|---|---|---|---|");
        for &t in &threads_list {
            println!(
                "| {t} | {:.0} | {:.0} | {:.0} | {:.0} | {:.2} | {:.2} | {:.2} |",
                q(t, Who::RawTxn, 0),
                q(t, Who::StaunchTxn, n),
                q(t, Who::MysqlPoolTxn, n),
                q(t, Who::FifoTxn, n),
                ratio(t, (Who::StaunchTxn, n), (Who::RawTxn, 0)),
                ratio(t, (Who::StaunchTxn, n), (Who::MysqlPoolTxn, n)),
                ratio(t, (Who::StaunchTxn, n), (Who::FifoTxn, n)),
            );
        }
        println!("\n**Guard's own methods ÷ raw and ÷ fair FIFO** (pool size {n})\n");
        println!("| threads | staunch (q/s) | raw (q/s) | fair FIFO (q/s) | ÷ raw | ÷ fair FIFO |");
        println!("|---|---|---|---|---|---|");
        for &t in &threads_list {
            println!(
                "| {t} | {:.0} | {:.0} | {:.0} | {:.2} | {:.2} |",
                q(t, Who::Staunch, n),
                q(t, Who::Raw, 0),
                q(t, Who::Fifo, n),
                ratio(t, (Who::Staunch, n), (Who::Raw, 0)),
                ratio(t, (Who::Staunch, n), (Who::Fifo, n)),
            );
        }
    }

    // The issue-11 targets, at the smallest pool size, 1 and 4 threads.
    let n = sizes[0];
    println!("**Targets** (pool size {n}; per-round ratios, median): staunch ≥ 0.9× raw, ≥ 1.5× mysql::Pool\n");
    println!("| threads | staunch ÷ raw | staunch ÷ mysql::Pool |");
    println!("|---:|---:|---:|");
    let ratio = |t: usize, a: Who, an: usize, w: Who, wn: usize| -> f64 {
        let x: Vec<f64> = results[&(t, a, an)].iter().map(Run::qps).collect();
        let y: Vec<f64> = results[&(t, w, wn)].iter().map(Run::qps).collect();
        common::paired_ratio(&x, &y)
    };
    for &t in threads_list.iter().filter(|t| [1, 4].contains(*t)) {
        println!(
            "| {t} | {:.2}× | {:.2}× |",
            ratio(t, Who::Staunch, n, Who::Raw, 0),
            ratio(t, Who::Staunch, n, Who::MysqlPool, n),
        );
    }
    println!();
    println!("**Statement liveness** (per-round ratios, median): staunch at the defaults (liveness_threshold 5s) ÷ the same with liveness off; SELECT 1 is far below the threshold, so it must cost nothing (~1.00×)\n");
    println!("| threads | pool size | defaults ÷ liveness off |");
    println!("|---:|---:|---:|");
    for &t in &threads_list {
        for &sn in &sizes {
            println!(
                "| {t} | {sn} | {:.3}× |",
                ratio(t, Who::Staunch, sn, Who::StaunchNoLiveness, sn)
            );
        }
    }
    println!();
    println!("**Timings** (issue 47; per-round ratios, median): staunch with `timings=on` and a scrape every second (what a registered exporter costs) ÷ staunch at the defaults (timings off); target ≥ 0.97×\n");
    println!("| threads | pool size | timings on ÷ defaults |");
    println!("|---:|---:|---:|");
    for &t in &threads_list {
        for &sn in &sizes {
            println!(
                "| {t} | {sn} | {:.3}× |",
                ratio(t, Who::StaunchTimed, sn, Who::Staunch, sn)
            );
        }
    }
    println!();
    // What each contender makes the server do per checkout.
    let events = [
        "statement/sql/select",
        "statement/sql/rollback",
        "statement/com/Reset connection",
        "statement/com/Ping",
    ];
    let count = |e: &str| -> i64 {
        db.query_i64(&format!(
            "SELECT COUNT_STAR FROM performance_schema.events_statements_summary_global_by_event_name \
             WHERE EVENT_NAME = '{e}'"
        ))
        .unwrap_or(0)
    };
    println!("**Server commands per checkout** (1,000 checkouts + SELECT 1 at 1 thread, pool size {n}; performance_schema)\n");
    println!("| contender | SELECT | ROLLBACK | COM_RESET_CONNECTION | COM_PING |");
    println!("|---|---:|---:|---:|---:|");
    // The counts' own SELECTs, measured with nothing in between.
    let snapshot = || -> Vec<i64> { events.iter().map(|e| count(e)).collect() };
    let delta = |f: &dyn Fn()| -> Vec<i64> {
        let before = snapshot();
        f();
        snapshot().iter().zip(&before).map(|(a, b)| a - b).collect()
    };
    let idle = delta(&|| {});
    for (w, wn) in [
        (Who::Raw, 0),
        (Who::Staunch, n),
        (Who::MysqlPool, n),
        (Who::R2d2, n),
    ] {
        let d = delta(&|| {
            for _ in 0..1000 {
                match w {
                    Who::Raw => select1(&mut *c.raw[0].lock().unwrap()),
                    Who::Staunch => select1_staunch(&mut c.staunch[&wn].get().unwrap()),
                    Who::MysqlPool => select1(&mut c.mysql[&wn].get_conn().unwrap()),
                    Who::R2d2 => select1(&mut *c.r2d2[&wn].get().unwrap()),
                    _ => unreachable!(),
                }
            }
        });
        let per: Vec<String> = d
            .iter()
            .zip(&idle)
            .map(|(d, i)| format!("{:.2}", (d - i) as f64 / 1000.0))
            .collect();
        println!("| {} | {} |", w.name(), per.join(" | "));
    }
    println!();
    for &n in &sizes {
        let st = c.staunch[&n].stats();
        println!(
            "staunch pool size {n}: created {}, acquired {}, validation failures {}, rollbacks on return {}, resets on return {}, violations {}.",
            st.created, st.acquired, st.validation_failures, st.rollbacks_on_return, st.resets_on_return, st.violations
        );
    }
    println!();
    drop(c);
    drop(db);
    eprintln!("B2 done in {:.0} s", started.elapsed().as_secs_f64());
}
