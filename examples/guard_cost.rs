//! What a borrow costs the client at one thread: `pool.get()` +
//! `query_first("SELECT 1")` + return through staunch's Rust face, beside
//! the same statement on a raw `mysql::Conn` (no pool), interleaved in
//! rounds in one process. For each: operations per second, the client's
//! CPU per operation (user and system, `getrusage`), and heap allocations
//! per operation.
//!
//!   cargo run --release --example guard_cost -- URL [SECONDS_PER_ROUND] [ROUNDS] [staunch|crate]

use std::alloc::{GlobalAlloc, Layout, System};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use mysql::prelude::Queryable as _;
use staunch::prelude::Queryable as _;

/// The system allocator, counting.
struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards to the system allocator, only counting.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        // SAFETY: the caller's contract, passed on.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static A: Counting = Counting;

/// User and system CPU time of this thread (the pool's own threads are
/// idle here).
fn cpu() -> (Duration, Duration) {
    // SAFETY: a zeroed rusage is a valid out-value for getrusage.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid out-pointer.
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut u) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    (tv(u.ru_utime), tv(u.ru_stime))
}

#[derive(Default)]
struct Tally {
    n: u64,
    wall: Duration,
    user: Duration,
    system: Duration,
    allocs: u64,
}

fn measure(t: &mut Tally, for_: Duration, mut one: impl FnMut()) {
    let (w0, c0, a0) = (Instant::now(), cpu(), ALLOCS.load(Relaxed));
    let mut n = 0;
    while w0.elapsed() < for_ {
        for _ in 0..100 {
            one();
        }
        n += 100;
    }
    let c1 = cpu();
    t.n += n;
    t.wall += w0.elapsed();
    t.user += c1.0 - c0.0;
    t.system += c1.1 - c0.1;
    t.allocs += ALLOCS.load(Relaxed) - a0;
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let Some(url) = args.get(1) else {
        eprintln!("usage: guard_cost URL [SECONDS_PER_ROUND] [ROUNDS] [staunch|crate]");
        return ExitCode::from(2);
    };
    let secs: f64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let rounds: u32 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(5);
    let per = Duration::from_secs_f64(secs);
    let (run_s, run_m) = match args.get(4).map(String::as_str).unwrap_or("both") {
        "both" => (true, true),
        "staunch" => (true, false),
        "crate" => (false, true),
        other => {
            eprintln!("guard_cost: the fourth argument is staunch, crate or both, not {other:?}");
            return ExitCode::from(2);
        }
    };
    let opts = mysql::OptsBuilder::from_opts(mysql::Opts::from_url(url).expect("a mysql:// URL"))
        .prefer_socket(false);
    let mut raw = mysql::Conn::new(opts).expect("connect (mysql crate)");
    let pool = staunch::Pool::from_url(&format!("{url}?max_size=8")).expect("staunch pool");
    let mut via_staunch = || {
        let mut c = pool.get().expect("get");
        let one: Option<i64> = c.query_first("SELECT 1").expect("SELECT 1");
        assert_eq!(one, Some(1));
    };
    let mut via_crate = || {
        let one: Option<i64> = raw.query_first("SELECT 1").expect("SELECT 1");
        assert_eq!(one, Some(1));
    };
    for _ in 0..1000 {
        if run_s {
            via_staunch();
        }
        if run_m {
            via_crate();
        }
    }
    let (mut s, mut m) = (Tally::default(), Tally::default());
    for _ in 0..rounds {
        if run_s {
            measure(&mut s, per, &mut via_staunch);
        }
        if run_m {
            measure(&mut m, per, &mut via_crate);
        }
    }
    let line = |name: &str, t: &Tally| {
        if t.n == 0 {
            return None;
        }
        let n = t.n as f64;
        let us = |d: Duration| d.as_secs_f64() * 1e6 / n;
        let (user, system) = (us(t.user), us(t.system));
        let qps = n / t.wall.as_secs_f64();
        println!(
            "| {name} | {qps:.0} | {:.2} | {user:.2} | {system:.2} | {:.1} |",
            user + system,
            t.allocs as f64 / n
        );
        Some((qps, user + system, user))
    };
    println!("| 1 thread, SELECT 1 | operations/s | client CPU µs/op | of it user | of it system | allocations/op |");
    println!("|---|---:|---:|---:|---:|---:|");
    let s = line("staunch: pool.get() + query_first + return", &s);
    let m = line("mysql crate: raw Conn::query_first (no pool)", &m);
    if let (Some((sq, sc, su)), Some((mq, mc, mu))) = (s, m) {
        println!();
        println!(
            "staunch ÷ raw Conn: throughput {:.2}x, client CPU per op {:.2}x (user time alone {:.2}x)",
            sq / mq,
            sc / mc,
            su / mu
        );
    }
    ExitCode::SUCCESS
}
