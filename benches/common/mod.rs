//! Helpers shared by the bench binaries (included with `#[path]`): clocks,
//! medians, percentiles, command-line knobs and markdown output.
#![allow(dead_code)]

use std::time::Duration;

/// CPU time consumed by the calling thread, in ns (CLOCK_THREAD_CPUTIME_ID).
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CPU time consumed by the whole calling process, in ns.
pub fn process_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CPU time (user + system, all threads) of another process, in ns, from
/// /proc/PID/stat (clock-tick resolution, usually 10 ms).
pub fn other_process_cpu_ns(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the ")" that closes the command name; utime and stime are
    // fields 14 and 15 of the whole line.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = f.get(11).and_then(|x| x.parse().ok()).unwrap_or(0)
        + f.get(12).and_then(|x| x.parse().ok()).unwrap_or(0);
    // SAFETY: sysconf is always safe to call.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    ticks * 1_000_000_000 / hz
}

/// The order to run `n` contenders in during round `round`: rotated each
/// round, so no contender always runs first (after a pause) or last.
pub fn rotation(n: usize, round: usize) -> impl Iterator<Item = usize> {
    (0..n).map(move |i| (i + round) % n)
}

/// Median of a non-empty sample (mean of the two middle values when even).
pub fn median(v: &[f64]) -> f64 {
    let mut s: Vec<f64> = v.to_vec();
    s.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = s.len();
    assert!(n > 0, "median of nothing");
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// Median over rounds of the per-round ratio a[i] / b[i] (the two contenders
/// ran in the same round, so slow swings of background load cancel out).
pub fn paired_ratio(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len(), "paired samples");
    let r: Vec<f64> = a.iter().zip(b).map(|(x, y)| x / y).collect();
    median(&r)
}

/// Nearest-rank percentile of an already sorted sample.
pub fn percentile_sorted<T: Copy>(sorted: &[T], p: f64) -> T {
    assert!(!sorted.is_empty(), "percentile of nothing");
    let rank = ((sorted.len() as f64) * p).ceil().max(1.0) as usize;
    sorted[rank.min(sorted.len()) - 1]
}

/// `--name=value` from the command line, or an environment variable
/// `STAUNCH_BENCH_NAME`, or the default.
pub fn knob<T: std::str::FromStr>(name: &str, default: T) -> T {
    let flag = format!("--{name}=");
    for a in std::env::args() {
        if let Some(v) = a.strip_prefix(&flag) {
            if let Ok(x) = v.parse() {
                return x;
            }
            panic!("bad value for --{name}: {v:?}");
        }
    }
    let env = format!("STAUNCH_BENCH_{}", name.to_uppercase().replace('-', "_"));
    if let Ok(v) = std::env::var(&env) {
        if let Ok(x) = v.parse() {
            return x;
        }
        panic!("bad value for {env}: {v:?}");
    }
    default
}

/// `--quick` on the command line (or STAUNCH_BENCH_QUICK=1): shorter runs.
pub fn quick() -> bool {
    std::env::args().any(|a| a == "--quick")
        || std::env::var("STAUNCH_BENCH_QUICK").is_ok_and(|v| v == "1")
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Formats a latency in µs/ms with a sensible precision.
pub fn fmt_lat_ns(ns: u64) -> String {
    let us = ns as f64 / 1e3;
    if us < 1000.0 {
        format!("{us:.0} µs")
    } else {
        format!("{:.1} ms", us / 1e3)
    }
}

/// The 1-minute load average, for the record.
pub fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

pub fn nproc() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A comma-separated list knob (`--name=a,b,c`), or the default.
pub fn list_knob<T: std::str::FromStr + Clone>(name: &str, default: &[T]) -> Vec<T> {
    let raw: String = knob(name, String::new());
    if raw.is_empty() {
        return default.to_vec();
    }
    raw.split(',')
        .map(|x| {
            x.trim()
                .parse()
                .unwrap_or_else(|_| panic!("bad item {x:?} in --{name}"))
        })
        .collect()
}
