//! Adder threads, which make connections, and the watchdog, which bounds them
//! (and borrowed connections' statements, see `Shared::cut_overdue_statements`).
//!
//! Incident A: HikariCP had one adder thread; it blocked forever reading a
//! greeting that never came, and the pool never recovered. Here:
//! - several adders (`adder_threads`) take requests from one channel;
//! - every connect runs under a hard deadline (`connect_timeout`); the
//!   watchdog calls the attempt's canceller when it passes (for MySQL: shut
//!   the in-flight socket down), so the adder's blocking read returns;
//! - if a canceller cannot find its socket, the attempt is abandoned: its
//!   result will be discarded and the thread no longer counts as available;
//! - when every adder has been busy longer than `ADDER_GRACE` while requests
//!   wait, the watchdog starts another adder (up to `max_adders`), so a healthy
//!   path is used at once instead of after the stuck connects' deadlines;
//!   extra adders exit after `EXTRA_ADDER_IDLE` without work;
//! - before each attempt the adder checks the connection is still wanted, so
//!   requests queued during an outage do not all complete when it ends;
//! - failures back off exponentially (50 ms doubling to at most 1 s, ±25 %
//!   jitter) and are reported as events; a permanent error (the connector says
//!   which, e.g. access denied) fails every waiter at once and is not retried.

use std::sync::atomic::Ordering::{Relaxed, SeqCst};
use std::time::{Duration, Instant};

use crossbeam_channel::RecvTimeoutError;

use super::connector::{ConnectAttempt, Connector};
use super::{jitter, Shared};
use crate::duration::fmt_duration;
use crate::error::{Error, ErrorKind};
use crate::events::Event;
use crate::sync::{lock, spawn_resilient, Arc};

/// How long every adder must have been busy, with requests waiting, before
/// another adder starts.
pub(crate) const ADDER_GRACE: Duration = Duration::from_millis(100);
/// Extra adders (beyond `adder_threads`) exit after this long without work.
pub(crate) const EXTRA_ADDER_IDLE: Duration = Duration::from_secs(10);
const BACKOFF_MIN: Duration = Duration::from_millis(50);
const BACKOFF_MAX: Duration = Duration::from_secs(1);

fn max_adders<C: Connector>(s: &Shared<C>) -> usize {
    s.cfg.adder_threads + s.max_size.load(Relaxed).min(16)
}

pub(crate) fn spawn<C: Connector>(s: &Arc<Shared<C>>) -> std::io::Result<()> {
    let n = s.adders_started.fetch_add(1, SeqCst) + 1;
    s.adders.fetch_add(1, SeqCst);
    let (s2, s3) = (s.clone(), s.clone());
    let r = spawn_resilient(
        format!("staunch-adder-{n}"),
        move || run(&s2),
        move || {
            s3.adders.fetch_sub(1, SeqCst);
        },
    );
    match r {
        Ok(handle) => {
            s.keep_thread(handle);
            Ok(())
        }
        Err(e) => {
            s.adders.fetch_sub(1, SeqCst);
            Err(e)
        }
    }
}

fn run<C: Connector>(s: &Arc<Shared<C>>) {
    loop {
        if s.is_closed() {
            return;
        }
        let extra = s.adders.load(SeqCst) > s.cfg.adder_threads;
        let wait = if extra {
            EXTRA_ADDER_IDLE
        } else {
            Duration::from_secs(3600)
        };
        crossbeam_channel::select! {
            recv(s.create_rx) -> msg => {
                if msg.is_err() {
                    return;
                }
                let outcome = work_on_request(s);
                // The request is settled before the connection is handed
                // out: a caller served by it that asks again at once must see
                // no request pending, or it would wait for nothing.
                s.pending.fetch_sub(1, SeqCst);
                match outcome {
                    Outcome::Made(conn, took) => {
                        s.add(conn, took);
                    }
                    // A caller may have started waiting after the request was
                    // found unneeded, and seen it still pending, so asked for
                    // none: now that it is settled, ask again if needed.
                    // (waiting and pending are both SeqCst: either that caller
                    // saw pending drop, or this sees it waiting.)
                    Outcome::NotNeeded => {
                        if s.create_needed() && s.pending.load(SeqCst) < s.bag.waiting() {
                            s.request_create();
                        }
                    }
                    Outcome::Ended => {}
                }
            }
            recv(s.shutdown_rx) -> _ => return,
            default(wait) => {
                if extra && s.adders.load(SeqCst) > s.cfg.adder_threads {
                    return;
                }
            }
        }
    }
}

/// How a create request ended.
enum Outcome<T> {
    /// A connection, and how long its connect took.
    Made(T, Duration),
    /// Nobody needed it any more (checked before every attempt).
    NotNeeded,
    /// A permanent error (waiters failed), or the pool closed.
    Ended,
}

/// Serves one create request: attempts until a connection is made, it is no
/// longer wanted, the error is permanent, or the pool closes.
fn work_on_request<C: Connector>(s: &Arc<Shared<C>>) -> Outcome<C::Conn> {
    let mut failures = 0u32;
    loop {
        if !s.create_needed() {
            return Outcome::NotNeeded;
        }
        s.connecting.fetch_add(1, SeqCst);
        let attempt = ConnectAttempt::new(s.cfg.connect_timeout);
        lock(&s.attempts).push(attempt.clone());
        let _ = s.wake_watchdog.try_send(());
        let started = Instant::now();
        let result = connect_caught(s, &attempt);
        let in_time = attempt.finish();
        lock(&s.attempts).retain(|a| !a.same(&attempt));
        s.connecting.fetch_sub(1, SeqCst);
        let result = match result {
            Ok(conn) if in_time => Ok(conn),
            Ok(conn) => {
                // Cut off at the deadline but completed anyway: do not trust it.
                drop(conn);
                Err(Error::new(
                    ErrorKind::Connect,
                    format!(
                        "connect to {} overran connect_timeout ({}) and was cut off",
                        s.connector.endpoint(),
                        fmt_duration(s.cfg.connect_timeout)
                    ),
                ))
            }
            Err(e) => Err(e),
        };
        match result {
            Ok(conn) => {
                if let Some((failures, outage)) = s.record_connect_success() {
                    s.emit(Event::Recovered {
                        endpoint: s.connector.endpoint(),
                        failures,
                        outage,
                    });
                }
                return Outcome::Made(conn, started.elapsed());
            }
            Err(e) => {
                if s.is_closed() {
                    return Outcome::Ended;
                }
                let permanent = s.connector.is_permanent(&e);
                let e = if permanent {
                    Error::with_source(
                        ErrorKind::ConnectRejected,
                        format!(
                            "the connection to {} was rejected (retrying will not help)",
                            s.connector.endpoint()
                        ),
                        e,
                    )
                } else {
                    e
                };
                let attempt_no = s.record_connect_failure(&e, permanent, attempt.started());
                s.emit(Event::ConnectFailed {
                    endpoint: s.connector.endpoint(),
                    error: e.clone(),
                    attempt: attempt_no,
                });
                if permanent {
                    s.bag.fail_waiters(&e);
                    return Outcome::Ended;
                }
                failures += 1;
                let base = BACKOFF_MIN
                    .saturating_mul(1 << (failures - 1).min(10))
                    .min(BACKOFF_MAX);
                let b = base.as_nanos() as u64;
                let d = Duration::from_nanos(b - b / 4 + jitter(b / 2));
                if let Err(RecvTimeoutError::Disconnected) = s.shutdown_rx.recv_timeout(d) {
                    return Outcome::Ended;
                }
            }
        }
    }
}

/// The connector's connect, with a panic in it turned into a connect error
/// (see `driver_call`): a panic must cost one failed attempt, not the request
/// and the connecting count it holds, which would leave the pool unable to
/// connect again.
fn connect_caught<C: Connector>(s: &Shared<C>, attempt: &ConnectAttempt) -> Result<C::Conn, Error> {
    super::driver_call(
        ErrorKind::Connect,
        || format!("connect to {}", s.connector.endpoint()),
        || s.connector.connect(attempt),
    )
}

pub(crate) fn spawn_watchdog<C: Connector>(s: &Arc<Shared<C>>) -> std::io::Result<()> {
    let s2 = s.clone();
    let handle = spawn_resilient("staunch-watchdog".into(), move || watchdog(&s2), || {})?;
    s.keep_thread(handle);
    Ok(())
}

fn watchdog<C: Connector>(s: &Arc<Shared<C>>) {
    loop {
        let inflight: Vec<ConnectAttempt> = lock(&s.attempts).clone();
        let now = Instant::now();
        // Sleep until the next deadline or grace check; with nothing in
        // flight, until an adder registers an attempt.
        let statements = s.statement_bounds.load(Relaxed);
        let tick = Duration::from_millis(super::STATEMENT_TICK_MS);
        let wait = if inflight.is_empty() {
            if statements {
                tick
            } else {
                Duration::from_secs(3600)
            }
        } else {
            inflight
                .iter()
                .map(|a| a.deadline().saturating_duration_since(now))
                .min()
                .unwrap_or(ADDER_GRACE)
                .min(ADDER_GRACE / 2)
                .min(if statements { tick } else { ADDER_GRACE })
                .max(Duration::from_millis(1))
        };
        // A liveness check in flight has its deadline too.
        let probes: Vec<ConnectAttempt> = lock(&s.probes).clone();
        let wait = probes
            .iter()
            .map(|a| a.deadline().saturating_duration_since(now))
            .fold(wait, Duration::min)
            .max(Duration::from_millis(1));
        crossbeam_channel::select! {
            recv(s.wake_watchdog_rx) -> _ => {}
            recv(s.shutdown_rx) -> _ => return,
            default(wait) => {}
        }
        if s.is_closed() {
            return;
        }
        let probes: Vec<ConnectAttempt> = lock(&s.probes).clone();
        let now = Instant::now();
        for p in probes
            .iter()
            .filter(|p| now >= p.deadline() && p.is_running())
        {
            let _ = p.cancel();
        }
        if s.statement_bounds.load(Relaxed) {
            s.cut_overdue_statements();
        }
        let inflight: Vec<ConnectAttempt> = lock(&s.attempts).clone();
        let now = Instant::now();
        for a in inflight
            .iter()
            .filter(|a| now >= a.deadline() && a.is_running())
        {
            match a.cancel() {
                Some(true) => {}
                Some(false) => {
                    // Could not reach the socket: the thread may stay stuck.
                    // Its result will be discarded; count it and make sure
                    // other adders can serve meanwhile.
                    s.counters.abandoned_connects.fetch_add(1, Relaxed);
                    log::warn!(
                        target: "staunch",
                        "a connect to {} overran its deadline and could not be cut off; abandoning it",
                        s.connector.endpoint()
                    );
                }
                None => {}
            }
        }
        // Every adder busy past the grace while callers wait for more than
        // is idle or freshly on its way: start another adder and give it a
        // request, so a healthy path is used now rather than after the stuck
        // connects' deadlines.
        let adders = s.adders.load(SeqCst);
        let now = Instant::now();
        let all_stuck = inflight.len() >= adders
            && inflight
                .iter()
                .all(|a| !a.is_running() || now.duration_since(a.started()) >= ADDER_GRACE);
        let waiting = s.bag.waiting();
        if all_stuck
            && waiting > s.bag.idle_count() + s.fresh_connecting()
            && adders < max_adders(s)
        {
            match spawn(s) {
                Ok(()) => {
                    s.request_create();
                }
                Err(e) => log::error!(target: "staunch", "could not start an adder thread: {e}"),
            }
        }
    }
}
