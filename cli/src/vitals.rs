//! The process's vitals for the soak: resident memory, open file
//! descriptors and threads (by who owns them), read from /proc/self.

use std::time::Duration;

use staunch::Pool;

/// Threads of the process, by the prefix of their name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Threads {
    pub total: usize,
    /// The pool's: `staunch-adder-N`, `staunch-housekeeper`, `staunch-watchdog`.
    pub pool: usize,
    /// The chaos proxy's: its acceptor and two per proxied connection.
    pub proxy: usize,
    /// The drill's own: workers, reporter, race borrowers.
    pub drill: usize,
}

impl Threads {
    /// Every thread but the drill's own (the workers are gone at the end).
    pub fn not_drill(&self) -> usize {
        self.total - self.drill
    }
}

/// One sample of the process.
#[derive(Clone, Copy, Debug, Default)]
pub struct Vitals {
    /// On the drill's clock.
    pub at: Duration,
    /// VmRSS, KiB (0 if unreadable).
    pub rss_kib: u64,
    /// Memory malloc has handed out and not got back, KiB (glibc's
    /// mallinfo2: uordblks + hblkhd; 0 elsewhere). RSS also counts what
    /// malloc keeps after a free; this does not.
    pub heap_kib: u64,
    /// Entries of /proc/self/fd (without the one the listing itself opens).
    pub fds: usize,
    pub threads: Threads,
    /// The pool's connections (Stats::total) at that moment.
    pub pool_total: usize,
}

impl Vitals {
    pub fn sample(at: Duration, pool: &Pool) -> Vitals {
        Vitals {
            at,
            rss_kib: rss_kib().unwrap_or(0),
            heap_kib: heap_in_use_kib(),
            fds: open_fds(),
            threads: threads(),
            pool_total: pool.stats().total,
        }
    }
}

/// VmRSS of this process in KiB.
pub fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Bytes malloc has handed out and not got back, in KiB.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn heap_in_use_kib() -> u64 {
    // SAFETY: mallinfo2 only reads the allocator's counters (under its locks).
    let m = unsafe { libc::mallinfo2() };
    ((m.uordblks + m.hblkhd) / 1024) as u64
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn heap_in_use_kib() -> u64 {
    0
}

/// Gives the pages malloc holds free back to the system (glibc's
/// `malloc_trim(0)`, which also releases free pages inside its heaps), so
/// that the RSS read next counts what the process holds rather than what the
/// allocator kept after frees. The soak calls it before its start and end
/// samples only (the workload is not running then). Nothing elsewhere.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn release_free_memory() {
    // SAFETY: malloc_trim only returns free memory to the system (under the
    // allocator's locks); no pointer the program holds is affected.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn release_free_memory() {}

/// Arenas glibc's malloc may use in the soak (see `cap_malloc_arenas`).
pub const MALLOC_ARENAS: i32 = 2;

/// Caps glibc's malloc arenas at `MALLOC_ARENAS` (its default is 8 per core).
/// Each arena keeps some freed memory it cannot trim (about 1 MiB each in the
/// soak), and short-lived threads (the proxy's two per connection, the race's
/// borrowers) spread over new arenas as they contend: over 10 minutes that
/// retention alone grew the resident set by ~17 MiB while the memory in use
/// grew by 1.5 MiB. Capped, the resident figure follows what the pool holds.
/// Must run before the drill starts its threads. False if it could not.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn cap_malloc_arenas() -> bool {
    // SAFETY: sets a malloc tunable; no memory is touched.
    unsafe { libc::mallopt(libc::M_ARENA_MAX, MALLOC_ARENAS) == 1 }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn cap_malloc_arenas() -> bool {
    false
}

/// Open file descriptors of this process.
pub fn open_fds() -> usize {
    match std::fs::read_dir("/proc/self/fd") {
        // The listing's own descriptor is among the entries.
        Ok(d) => d.count().saturating_sub(1),
        Err(_) => 0,
    }
}

/// Threads of this process, grouped by name.
pub fn threads() -> Threads {
    classify(thread_names())
}

/// The names of this process's threads (/proc/self/task/*/comm: cut to 15
/// bytes, the prefixes below survive that).
fn thread_names() -> Vec<String> {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    dir.flatten()
        // A thread may end between the listing and this read: not counted.
        .filter_map(|e| std::fs::read_to_string(e.path().join("comm")).ok())
        .map(|n| n.trim_end().to_string())
        .collect()
}

fn classify(names: Vec<String>) -> Threads {
    let mut t = Threads::default();
    for name in names {
        t.total += 1;
        if name.starts_with("staunch-") {
            t.pool += 1;
        } else if name.starts_with("chaos-proxy-") {
            t.proxy += 1;
        } else if name.starts_with("drill-") {
            t.drill += 1;
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vitals_see_threads_fds_and_memory() {
        let names = [
            "staunch-adder-1",
            "chaos-proxy-123",
            "drill-worker-0",
            "staunch",
            "main",
        ];
        assert_eq!(
            classify(names.iter().map(|n| n.to_string()).collect()),
            Threads {
                total: 5,
                pool: 1,
                proxy: 1,
                drill: 1
            }
        );
        assert!(threads().total >= 1);
        let fds = open_fds();
        let files: Vec<_> = (0..50)
            .map(|_| std::fs::File::open("/proc/self/status").unwrap())
            .collect();
        // Other tests may open or close a few meanwhile.
        assert!(open_fds() >= fds + 45, "{} vs {fds}", open_fds());
        drop(files);
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let (started_tx, started) = std::sync::mpsc::channel::<()>();
        let h = std::thread::Builder::new()
            .name("staunch-adder-9".into())
            .spawn(move || {
                let _ = started_tx.send(());
                let _ = rx.recv_timeout(Duration::from_secs(10));
            })
            .unwrap();
        // The new thread names itself once running.
        started.recv_timeout(Duration::from_secs(10)).unwrap();
        // (Counting by prefix would be racy here: until a test thread names
        // itself, its name is the test binary's, staunch-<hash>.)
        assert!(thread_names().iter().any(|n| n == "staunch-adder-9"));
        tx.send(()).unwrap();
        h.join().unwrap();
        assert!(rss_kib().unwrap() > 0);
        if cfg!(target_env = "gnu") {
            let before = heap_in_use_kib();
            let block = std::hint::black_box(vec![1u8; 8 << 20]);
            assert!(heap_in_use_kib() >= before + 8000, "{}", heap_in_use_kib());
            drop(block);
        }
    }
}
