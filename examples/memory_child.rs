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

fn large(c: &mut impl Queryable, rows: u64) {
    let sql = format!("SELECT seq, REPEAT('x', 100) FROM seq_1_to_{rows}");
    let mut n = 0u64;
    for row in c.query_iter(sql).expect("large answer") {
        row.expect("row");
        n += 1;
    }
    assert_eq!(n, rows);
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

fn staunch(url: &str, n: usize, rows: u64) {
    let open = |k: usize| {
        let pool = staunch::Pool::from_url(&with_knobs(url, k)).expect("open");
        wait_until("idle connections", || {
            let s = pool.stats();
            s.idle >= k && s.pending_creates == 0
        });
        pool
    };
    let pool = open(1);
    pool.get().expect("get").query_drop("DO 1").expect("DO 1");
    drop(pool);
    std::thread::sleep(Duration::from_millis(200));
    emit("base");
    let pool = open(n);
    std::thread::sleep(Duration::from_millis(500));
    emit("idle");
    if rows > 0 {
        let mut held: Vec<_> = (0..n).map(|_| pool.get().expect("get")).collect();
        for c in &mut held {
            large(c, rows);
        }
        drop(held);
        std::thread::sleep(Duration::from_millis(12_000));
        emit("after_large");
    }
}

fn mysql_pool(url: &str, n: usize, rows: u64) {
    let opts = |k: usize| {
        let popts = mysql::PoolOpts::default()
            .with_constraints(mysql::PoolConstraints::new(k, k).expect("constraints"));
        mysql::OptsBuilder::from_opts(mysql::Opts::from_url(url).expect("url")).pool_opts(popts)
    };
    let pool = mysql::Pool::new(opts(1)).expect("pool");
    pool.get_conn()
        .expect("get")
        .query_drop("DO 1")
        .expect("DO 1");
    drop(pool);
    std::thread::sleep(Duration::from_millis(200));
    emit("base");
    // mysql::Pool::new opens its minimum at once, before it returns.
    let pool = mysql::Pool::new(opts(n)).expect("pool");
    std::thread::sleep(Duration::from_millis(500));
    emit("idle");
    if rows > 0 {
        let mut held: Vec<_> = (0..n).map(|_| pool.get_conn().expect("get")).collect();
        for c in &mut held {
            large(c, rows);
        }
        drop(held);
        std::thread::sleep(Duration::from_millis(12_000));
        emit("after_large");
    }
}

fn r2d2(url: &str, n: usize, rows: u64) {
    let build = |k: u32| {
        let manager = r2d2_mysql::MySqlConnectionManager::new(mysql::OptsBuilder::from_opts(
            mysql::Opts::from_url(url).expect("url"),
        ));
        r2d2::Pool::builder()
            .max_size(k)
            .min_idle(Some(k))
            .build(manager)
            .expect("r2d2")
    };
    let pool = build(1);
    pool.get().expect("get").query_drop("DO 1").expect("DO 1");
    drop(pool);
    std::thread::sleep(Duration::from_millis(200));
    emit("base");
    let k = u32::try_from(n).expect("N fits u32");
    // r2d2's build waits for its first connections; the rest follow.
    let pool = build(k);
    wait_until("idle connections", || pool.state().idle_connections >= k);
    std::thread::sleep(Duration::from_millis(500));
    emit("idle");
    if rows > 0 {
        let mut held: Vec<_> = (0..n).map(|_| pool.get().expect("get")).collect();
        for c in &mut held {
            large(&mut **c, rows);
        }
        drop(held);
        std::thread::sleep(Duration::from_millis(12_000));
        emit("after_large");
    }
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
