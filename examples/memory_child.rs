//! The Rust contenders of the memory benchmark (benches/memory/mem_bench.py,
//! `scripts/mem-bench.sh`): resident memory of a process holding N idle
//! pooled connections, then after each has carried one large answer and gone
//! back. One process per contender and size; one JSON line per phase on
//! stdout (`{"phase":"base"|"idle"|"after_large","rss_kb":N,"threads":T}`).
//!
//!   memory_child staunch|mysql-pool|r2d2 URL N ROWS
//!
//! Each pool at its defaults but for its size (N, all of them opened at the
//! start); the large answer through each one's usual call (`query_iter`
//! rows dropped one by one: nothing of the answer is kept).

use std::time::{Duration, Instant};

use mysql::prelude::Queryable;

/// A field of /proc/self/status: kB for `VmRSS:`, a count for `Threads:`.
fn status_field(name: &str) -> i64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(name))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(-1)
}

fn emit(phase: &str) {
    println!(
        "{{\"phase\":\"{phase}\",\"rss_kb\":{},\"threads\":{}}}",
        status_field("VmRSS:"),
        status_field("Threads:")
    );
}

/// Runs `sql` through the connection's usual call (`query_iter`), every row
/// read and dropped: nothing of the answer is kept. The number of rows.
fn rows_of(c: &mut impl Queryable, sql: &str) -> u64 {
    let mut n = 0u64;
    for row in c.query_iter(sql).expect(sql) {
        row.expect("row");
        n += 1;
    }
    n
}

/// [`rows_of`] through staunch's own `Queryable` (the same method names).
fn rows_of_staunch(c: &mut staunch::PooledConn, sql: &str) -> u64 {
    use staunch::prelude::Queryable as _;
    let mut n = 0u64;
    for row in c.query_iter(sql).expect(sql) {
        row.expect("row");
        n += 1;
    }
    n
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !done() {
        assert!(Instant::now() < deadline, "{what}: not within 120 s");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn with_knobs(url: &str, n: usize) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}max_size={n}&min_idle={n}")
}

/// The phases, for any pool: `open(k)` returns a pool with its `k`
/// connections open and idle, `get` borrows one, `run` runs a statement on
/// it ([`rows_of`], through whatever the borrow derefs to).
fn phases<P, C>(
    n: usize,
    rows: u64,
    open: impl Fn(usize) -> P,
    get: impl Fn(&P) -> C,
    run: impl Fn(&mut C, &str) -> u64,
) {
    let pool = open(1);
    run(&mut get(&pool), "DO 1");
    drop(pool);
    std::thread::sleep(Duration::from_millis(200));
    emit("base");
    let pool = open(n);
    std::thread::sleep(Duration::from_millis(500));
    emit("idle");
    if rows > 0 {
        let mut held: Vec<C> = (0..n).map(|_| get(&pool)).collect();
        let sql = format!("SELECT seq, REPEAT('x', 100) FROM seq_1_to_{rows}");
        for c in &mut held {
            assert_eq!(run(c, &sql), rows);
        }
        drop(held);
        std::thread::sleep(Duration::from_millis(12_000));
        emit("after_large");
    }
}

fn staunch(url: &str, n: usize, rows: u64) {
    let open = |k: usize| {
        let pool = staunch::Pool::from_url(&with_knobs(url, k)).expect("open");
        wait_until("idle connections", || {
            let s = pool.stats();
            s.idle >= k && s.pending_creates == 0
        });
        pool
    };
    let get = |p: &staunch::Pool| p.get().expect("get");
    phases(n, rows, open, get, rows_of_staunch);
}

fn mysql_pool(url: &str, n: usize, rows: u64) {
    // mysql::Pool::new opens its minimum at once, before it returns.
    let open = |k: usize| {
        let popts = mysql::PoolOpts::default()
            .with_constraints(mysql::PoolConstraints::new(k, k).expect("constraints"));
        let opts = mysql::OptsBuilder::from_opts(mysql::Opts::from_url(url).expect("url"));
        mysql::Pool::new(opts.pool_opts(popts)).expect("pool")
    };
    let get = |p: &mysql::Pool| p.get_conn().expect("get");
    phases(n, rows, open, get, rows_of);
}

fn r2d2(url: &str, n: usize, rows: u64) {
    // r2d2's build waits for its first connections; the rest follow.
    let open = |k: usize| {
        let k = u32::try_from(k).expect("N fits u32");
        let manager = r2d2_mysql::MySqlConnectionManager::new(mysql::OptsBuilder::from_opts(
            mysql::Opts::from_url(url).expect("url"),
        ));
        let pool = r2d2::Pool::builder()
            .max_size(k)
            .min_idle(Some(k))
            .build(manager)
            .expect("r2d2");
        wait_until("idle connections", || pool.state().idle_connections >= k);
        pool
    };
    let get = |p: &r2d2::Pool<r2d2_mysql::MySqlConnectionManager>| p.get().expect("get");
    phases(n, rows, open, get, |c, sql| rows_of(&mut **c, sql));
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 5 {
        eprintln!("usage: memory_child staunch|mysql-pool|r2d2 URL N ROWS");
        std::process::exit(2);
    }
    let (url, n, rows) = (
        args[2].as_str(),
        args[3].parse::<usize>().expect("N"),
        args[4].parse::<u64>().expect("ROWS"),
    );
    match args[1].as_str() {
        "staunch" => staunch(url, n, rows),
        "mysql-pool" => mysql_pool(url, n, rows),
        "r2d2" => r2d2(url, n, rows),
        other => {
            eprintln!("memory_child: unknown contender {other}");
            std::process::exit(2);
        }
    }
}
