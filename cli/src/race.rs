//! Incident C: a keepalive racing borrowers.
//!
//! A second pool (3 connections, keepalive every 10 ms, validation on borrow
//! after 5 ms idle) over an instrumented connector: every connection carries a
//! "busy" flag that the validation (keepalive or on borrow) and the borrowers
//! set while they use it. Finding it already set means two owners at once, the
//! Mycat bug. Each borrower also checks that it gets its own answer.

use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use staunch::MysqlConnector;

use crate::signals;
use crate::workload::{lock, RaceResult};
use staunch_testkit::ownership::Instrumented;

pub const BORROWERS: u64 = 8;
pub const CONNECTIONS: usize = 3;

/// The borrowers' rhythm: of every `CYCLE`, they all pause for the first
/// `pause(n)` of cycle `n` (12 to 36 ms, changing from cycle to cycle), so
/// every connection sits idle past its keepalive interval (10 ms) and the
/// housekeeper (a tick every 10 ms) checks it, then all 8 rush back, at
/// varying points of that check. Pauses each borrower took on its own (one
/// in eight iterations) left a connection idle for 10 ms only by luck: on a
/// slow machine a 1.5 s race saw no keepalive at all.
const CYCLE_MS: u64 = 60;

/// The pause that opens cycle `n`, in ms.
fn pause_ms(n: u64) -> u64 {
    12 + n * 7 % 25
}

/// Sleeps out the pause of the cycle `started` is in, if it is in one.
fn breathe(started: Instant) {
    let at = started.elapsed().as_millis() as u64;
    let (n, into) = (at / CYCLE_MS, at % CYCLE_MS);
    let pause = pause_ms(n);
    if into < pause {
        thread::sleep(Duration::from_millis(pause - into));
    }
}

/// Runs the race for `duration` against `url` (through the VIP).
pub fn run(url: &str, duration: Duration) -> Result<RaceResult, String> {
    let cfg = staunch::Builder::new()
        .url(url)
        .max_size(CONNECTIONS)
        .min_idle(0)
        .keepalive_interval(Some(Duration::from_millis(10)))
        .alive_bypass_window(Duration::from_millis(5))
        .config()
        .map_err(|e| e.to_string())?;
    let connector = Instrumented::new(MysqlConnector::new(
        cfg.connect().clone(),
        Duration::from_millis(500),
    ));
    let (violations, validations) = (connector.violations.clone(), connector.validations.clone());
    let pool = staunch::pool::CorePool::with_connector(cfg.pool().clone(), connector)
        .map_err(|e| e.to_string())?;
    let crossed = Arc::new(AtomicU64::new(0));
    let queries = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(AtomicU64::new(0));
    let longest_us = Arc::new(AtomicU64::new(0));
    let first_error: Arc<Mutex<Option<String>>> = Arc::new(Mutex::new(None));
    let started = Instant::now();
    let stop_at = started + duration;
    let mut threads = Vec::new();
    for b in 0..BORROWERS {
        let (pool, violations, crossed, queries, errors, longest_us, first_error) = (
            pool.clone(),
            violations.clone(),
            crossed.clone(),
            queries.clone(),
            errors.clone(),
            longest_us.clone(),
            first_error.clone(),
        );
        let spawned = thread::Builder::new()
            .name(format!("drill-race-{b}"))
            .spawn(move || {
                let mut i = 0u64;
                while Instant::now() < stop_at && !signals::interrupted() {
                    i += 1;
                    let t = Instant::now();
                    let got = pool.get();
                    longest_us.fetch_max(t.elapsed().as_micros() as u64, SeqCst);
                    let mut c = match got {
                        Ok(c) => c,
                        Err(e) => {
                            errors.fetch_add(1, SeqCst);
                            lock(&first_error).get_or_insert_with(|| e.to_string());
                            thread::sleep(Duration::from_millis(20));
                            continue;
                        }
                    };
                    if !c.enter() {
                        violations.fetch_add(1, SeqCst);
                    }
                    let tag = (b + 1) * 1_000_000_000 + i;
                    let got = c.conn.query_first_text(&format!("SELECT {tag}"));
                    match got.map(|r| {
                        r.and_then(|r| r.into_iter().next().flatten()?.parse::<u64>().ok())
                    }) {
                        Ok(got) => {
                            if got != Some(tag) {
                                crossed.fetch_add(1, SeqCst);
                            }
                            queries.fetch_add(1, SeqCst);
                        }
                        Err(e) => {
                            errors.fetch_add(1, SeqCst);
                            lock(&first_error).get_or_insert_with(|| format!("query: {e}"));
                        }
                    }
                    c.leave();
                    drop(c);
                    breathe(started);
                }
            });
        match spawned {
            Ok(h) => threads.push(h),
            Err(e) => return Err(format!("cannot start a borrower thread: {e}")),
        }
    }
    for t in threads {
        if t.join().is_err() {
            errors.fetch_add(1, SeqCst);
        }
    }
    let st = pool.stats();
    pool.close();
    let first_error = lock(&first_error).clone();
    Ok(RaceResult {
        queries: queries.load(SeqCst),
        validations: validations.load(SeqCst),
        keepalives: st.keepalives,
        violations: violations.load(SeqCst),
        pool_violations: st.violations,
        crossed: crossed.load(SeqCst),
        errors: errors.load(SeqCst),
        longest_wait: Duration::from_micros(longest_us.load(SeqCst)),
        first_error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use staunch_testkit::MariaDb;

    #[test]
    fn pauses_outlast_the_keepalive_in_most_cycles() {
        let pauses: Vec<u64> = (0..20).map(pause_ms).collect();
        // The borrowers run for at least 20 ms of every cycle.
        assert!(pauses.iter().all(|&p| p + 20 <= CYCLE_MS), "{pauses:?}");
        // Keepalive interval 10 ms + a housekeeper tick of 10 ms.
        let long = pauses.iter().filter(|&&p| p >= 20).count();
        assert!(long >= 10, "{long} of 20 pauses reach 20 ms: {pauses:?}");
    }

    /// The race exercises what it is for: keepalive checks happen while the
    /// borrowers run, and nobody ever shares a connection.
    #[test]
    fn the_race_runs_keepalive_checks_and_never_shares_a_connection() {
        let s = MariaDb::start();
        let r = run(&s.url(), Duration::from_secs(1)).expect("race");
        assert!(r.queries > 100, "{} queries", r.queries);
        assert!(
            r.keepalives >= 3,
            "{} keepalive checks in 1 s",
            r.keepalives
        );
        assert_eq!(r.violations + r.pool_violations, 0);
        assert_eq!(r.crossed, 0);
    }
}
