//! What a prepared `SELECT` of 5 columns by id costs the client: through
//! staunch's C ABI (`staunch_conn_query_ex` with one parameter, prepared on
//! the server, the row read with `staunch_rows_fetch`) and through the
//! `mysql` crate's raw `Conn::exec_first` (its statement cache on), side by
//! side in one process, interleaved in rounds so that the machine's load
//! falls on both alike. For each: statements per second, the client's CPU
//! per statement (user + system time of this process, `getrusage`), and
//! heap allocations per statement (counted by this program's allocator).
//!
//!   cargo run --release --example prepared_cost -- URL [SECONDS_PER_ROUND] [ROUNDS] [staunch|crate]
//!
//! With `staunch` or `crate` last, only that side is measured (for a
//! profiler or `heaptrack` to look at one of them); with `tls`, only the
//! TLS line below.
//!
//! With `PREPARED_COST_ROWS=N` (N > 1), the statement selects N rows
//! (`id <= ?`), read whole on both sides (the crate's `exec`), and the
//! allocations are per row as well.
//!
//! With `PREPARED_COST_TLS` set to URL knobs that turn TLS on (for the test
//! kit's `server --tls-self-signed`: `tls_mode=verify_ca&tls_ca=PATH`), a
//! third line: the same statement through staunch over TLS, and its CPU
//! per statement beside the same over plain TCP.
//!
//! A loopback round trip is most of a statement here: the line "a client
//! costing no CPU" gives the throughput the server and the network alone
//! allow (the statement's wall time less the client's CPU time).

use std::alloc::{GlobalAlloc, Layout, System};
use std::ffi::CString;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use staunch::ffi::*;

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

const SETUP: &str = "CREATE OR REPLACE TABLE prepared_cost (id INT PRIMARY KEY, a INT, s VARCHAR(40), d DECIMAL(12,2), t DATETIME);
    INSERT INTO prepared_cost VALUES (1, 2, 'hello world', 12.50, '2026-12-01 18:00:00')";
const SQL: &str = "SELECT id, a, s, d, t FROM prepared_cost WHERE id = ?";
const SQL_ROWS: &str = "SELECT id, a, s, d, t FROM prepared_cost WHERE id <= ?";

/// User and system CPU time of this process.
fn cpu() -> (Duration, Duration) {
    // SAFETY: a zeroed rusage is a valid out-value for getrusage.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid out-pointer.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    (tv(u.ru_utime), tv(u.ru_stime))
}

#[derive(Default, Clone, Copy)]
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
    t.n += n;
    t.wall += w0.elapsed();
    let c1 = cpu();
    t.user += c1.0 - c0.0;
    t.system += c1.1 - c0.1;
    t.allocs += ALLOCS.load(Relaxed) - a0;
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let Some(url) = args.get(1) else {
        eprintln!("usage: prepared_cost URL [SECONDS_PER_ROUND] [ROUNDS]");
        return ExitCode::from(2);
    };
    let secs: f64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let rounds: u32 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(5);
    let per = Duration::from_secs_f64(secs);
    let only = args.get(4).map(String::as_str).unwrap_or("both");
    let (run_c, run_m) = match only {
        "both" => (true, true),
        "staunch" => (true, false),
        "crate" => (false, true),
        // Over TLS alone (with PREPARED_COST_TLS).
        "tls" => (false, false),
        other => {
            eprintln!(
                "prepared_cost: the fourth argument is staunch, crate, tls or both, not {other:?}"
            );
            return ExitCode::from(2);
        }
    };

    let opts = mysql::OptsBuilder::from_opts(mysql::Opts::from_url(url).expect("a mysql:// URL"))
        .prefer_socket(false);
    let mut raw = mysql::Conn::new(opts).expect("connect (mysql crate)");
    raw.query_drop(SETUP).expect("set-up");
    let nrows: usize = std::env::var("PREPARED_COST_ROWS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1)
        .max(1);
    let sql = if nrows > 1 {
        raw.query_drop(format!(
            "INSERT INTO prepared_cost SELECT seq, 2, 'hello world', 12.50, '2026-12-01 18:00:00' FROM seq_2_to_{nrows}"
        ))
        .expect("more rows");
        SQL_ROWS
    } else {
        SQL
    };
    let stmt = raw.prep(sql).expect("prepare");

    let csql = CString::new(sql).unwrap();
    let (pool, conn) = open(&format!("{url}?max_size=1&min_idle=1"));
    let tls_knobs = std::env::var("PREPARED_COST_TLS").ok();
    let tls = tls_knobs
        .as_ref()
        .map(|k| open(&format!("{url}?max_size=1&min_idle=1&{k}")));
    let mut via_c = || statement(conn, &csql, nrows);
    let mut via_tls = || {
        if let Some((_, conn)) = tls {
            statement(conn, &csql, nrows)
        }
    };
    type Five = (i32, i32, String, String, mysql::Value);
    let mut via_crate = || {
        if nrows == 1 {
            let row: Option<Five> = raw.exec_first(&stmt, (1,)).expect("exec_first");
            assert!(row.is_some());
        } else {
            let rows: Vec<Five> = raw.exec(&stmt, (nrows as i64,)).expect("exec");
            assert_eq!(rows.len(), nrows);
        }
    };
    // Warm-up.
    for _ in 0..1000 {
        if run_c {
            via_c();
        }
        if run_c || only == "tls" {
            via_tls();
        }
        if run_m {
            via_crate();
        }
    }
    let (mut c, mut m, mut t) = (Tally::default(), Tally::default(), Tally::default());
    for _ in 0..rounds {
        if run_c {
            measure(&mut c, per, &mut via_c);
        }
        if (run_c || only == "tls") && tls.is_some() {
            measure(&mut t, per, &mut via_tls);
        }
        if run_m {
            measure(&mut m, per, &mut via_crate);
        }
    }
    // Per statement, in µs; `None` for a side not measured.
    let line = |name: &str, t: &Tally| {
        if t.n == 0 {
            return None;
        }
        let n = t.n as f64;
        let us = |d: Duration| d.as_secs_f64() * 1e6 / n;
        let (user, system) = (us(t.user), us(t.system));
        let cpu_us = user + system;
        let qps = n / t.wall.as_secs_f64();
        let free_qps = 1e6 / (us(t.wall) - cpu_us).max(1e-3);
        println!(
            "| {name} | {qps:.0} | {cpu_us:.2} | {user:.2} | {system:.2} | {:.2} | {:.3} | {free_qps:.0} |",
            t.allocs as f64 / n,
            t.allocs as f64 / n / nrows as f64
        );
        Some((qps, cpu_us, user))
    };
    println!("| prepared SELECT of 5 columns, {nrows} row(s) | statements/s | client CPU µs/statement | of it user | of it system | allocations/statement | allocations/row | a client costing no CPU: statements/s |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    let s = line(
        "staunch C ABI (staunch_conn_query_ex + staunch_rows_fetch)",
        &c,
    );
    let m = line(
        if nrows == 1 {
            "mysql crate, raw Conn::exec_first"
        } else {
            "mysql crate, raw Conn::exec"
        },
        &m,
    );
    let t = line("staunch C ABI over TLS (the same, PREPARED_COST_TLS)", &t);
    if let (Some((cq, cc, cu)), Some((mq, mc, mu))) = (s, m) {
        println!();
        println!(
            "staunch ÷ mysql crate: throughput {:.2}x, client CPU per statement {:.2}x (user time alone {:.2}x)",
            cq / mq,
            cc / mc,
            cu / mu
        );
    }
    if let (Some((_, plain, _)), Some((_, over_tls, _))) = (s, t) {
        println!(
            "staunch over TLS ÷ over plain TCP: client CPU per statement {:.2}x",
            over_tls / plain
        );
    }
    for (pool, conn) in std::iter::once((pool, conn)).chain(tls) {
        staunch_conn_free(conn);
        staunch_pool_free(pool);
    }
    ExitCode::SUCCESS
}

/// A pool of one connection on `url`, and that connection, borrowed.
fn open(url: &str) -> (*mut staunch_pool, *mut staunch_conn) {
    let curl = CString::new(url).unwrap();
    let mut pool = std::ptr::null_mut();
    let mut conn = std::ptr::null_mut();
    let mut err = std::ptr::null_mut();
    let st = staunch_pool_open(curl.as_ptr(), &mut pool, &mut err);
    assert_eq!(st, STAUNCH_OK, "staunch_pool_open");
    let st = staunch_pool_get(pool, STAUNCH_TIMEOUT_DEFAULT, &mut conn, &mut err);
    assert_eq!(st, STAUNCH_OK, "staunch_pool_get");
    (pool, conn)
}

/// The statement through the C ABI, its `nrows` rows read.
fn statement(conn: *mut staunch_conn, sql: &CString, nrows: usize) {
    let param = [staunch_param_i64(nrows as i64)];
    // SAFETY: staunch_value is a plain C struct; zeroes are a valid value.
    let mut values: [staunch_value; 5] = unsafe { std::mem::zeroed() };
    let mut err = std::ptr::null_mut();
    let mut rows = std::ptr::null_mut();
    let st = staunch_conn_query_ex(
        conn,
        sql.as_ptr(),
        param.as_ptr(),
        1,
        0,
        &mut rows,
        &mut err,
    );
    assert_eq!(st, STAUNCH_OK);
    for _ in 0..nrows {
        let mut got = 0usize;
        let st = staunch_rows_fetch(rows, values.as_mut_ptr(), 5, &mut got, &mut err);
        assert_eq!((st, got), (STAUNCH_OK, 1));
    }
    staunch_rows_free(rows);
}
