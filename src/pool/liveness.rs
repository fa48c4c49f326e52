//! Statement liveness: `staunch-liveness`, one thread per pool (when the
//! connector has a [`liveness_threshold`](Connector::liveness_threshold)),
//! for every borrowed connection at once.
//!
//! No socket timeout can tell a frozen or vanished server from a long
//! statement; the server can. Every tick (a tenth of the threshold, 10 ms to
//! 250 ms) the thread reads, without a lock, each borrowed slot's signals: a
//! statement running through the borrower's own methods since
//! `signals.started_ns`, or, on the raw connection, a thread blocked reading
//! the socket after the last send. A statement becomes a suspect when it has
//! waited longer than the threshold *and* its socket has received nothing for
//! as long (TCP_INFO's `tcpi_last_data_recv`): an answer that is still
//! arriving, however slowly, is not waited for. The suspects of one tick are
//! checked together, with one [`check_liveness`](Connector::check_liveness)
//! call (one side connection, one look at the server) under a
//! [`ConnectAttempt`] whose deadline is `connect_timeout` +
//! `validation_timeout`, enforced by the watchdog from outside this thread.
//!
//! A suspect the check condemns (no answer, or the server no longer runs its
//! connection) is cut off as the statement time limit's watchdog cuts: the
//! verdict is written to the slot, `signals.cut` is set by CAS, then the
//! socket is shut down, and only if the same statement of the same borrow is
//! still the one waiting. The borrower then fails the statement with
//! `ServerUnresponsive` and the connection is closed on return. A suspect the
//! server still runs is left alone and checked again a threshold later,
//! however long it runs.
//!
//! Bound: a statement whose server stops answering at time t returns by t +
//! threshold + `connect_timeout` + `validation_timeout` + one tick (+ the
//! watchdog's 50 ms tick): it becomes a suspect at most a threshold after its
//! last byte, a check starts within a tick, and the check ends by its
//! deadline. Costs nothing for statements shorter than the threshold (the
//! borrower's side is the one store it already makes per statement).

use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use super::bag::IN_USE;
use super::connector::{ConnectAttempt, Connector, Suspect};
use super::Shared;
use crate::duration::fmt_duration;
use crate::sync::{lock, spawn_resilient, Arc};
use crate::sys::coarse_now_ns;

/// How often, at most, a raw borrowed connection is looked up in /proc for a
/// thread blocked reading it.
const RAW_LOOK_EVERY_NS: u64 = 250_000_000;

pub(crate) fn spawn<C: Connector>(s: &Arc<Shared<C>>) -> std::io::Result<()> {
    if s.connector.liveness_threshold().is_none() {
        return Ok(());
    }
    let s2 = s.clone();
    let handle = spawn_resilient("staunch-liveness".into(), move || run(&s2), || {})?;
    s.keep_thread(handle);
    Ok(())
}

/// What this thread remembers of a slot between ticks.
#[derive(Clone, Copy, Default)]
struct Seen {
    /// The statement last checked: its borrow and start (raw: 0).
    borrow: u64,
    started: u64,
    /// When it was last checked (coarse ns).
    checked_ns: u64,
    /// When /proc was last read for it (raw connections).
    looked_ns: u64,
}

/// A suspect and how to recognise its statement again after the check.
struct Found {
    idx: usize,
    borrow: u64,
    started: u64,
    suspect: Suspect,
}

fn run<C: Connector>(s: &Arc<Shared<C>>) {
    let Some(threshold) = s.connector.liveness_threshold() else {
        return;
    };
    let tick = (threshold / 10).clamp(Duration::from_millis(10), Duration::from_millis(250));
    let mut seen = vec![Seen::default(); s.bag.slots.len()];
    loop {
        crossbeam_channel::select! {
            recv(s.shutdown_rx) -> _ => return,
            default(tick) => {}
        }
        if s.is_closed() {
            return;
        }
        let found = suspects(s, threshold, &mut seen);
        if !found.is_empty() {
            check(s, threshold, &found);
        }
    }
}

/// The borrowed connections whose statement has waited past `threshold`
/// with nothing received, not checked in the last `threshold`.
fn suspects<C: Connector>(s: &Shared<C>, threshold: Duration, seen: &mut [Seen]) -> Vec<Found> {
    let now = coarse_now_ns();
    let limit = threshold.as_nanos() as u64;
    let mut found = Vec::new();
    for (idx, slot) in s.bag.slots.iter().enumerate() {
        if slot.state.load(Relaxed) != IN_USE || slot.signals.cut.load(Relaxed) {
            continue;
        }
        let key = slot.liveness_key.load(Relaxed);
        if key == u64::MAX {
            continue;
        }
        let borrow = slot.borrows.load(Relaxed);
        let started = slot.signals.started_ns.load(Relaxed);
        let raw = started == 0 && slot.signals.raw.load(Relaxed);
        if started == 0 && !raw {
            continue;
        }
        let quiet = s.with_borrowed_socket(idx, |d| d.tcp_quiet_ms()).flatten();
        let waiting = if started != 0 {
            let since_start = now.saturating_sub(started);
            match quiet {
                Some(q) => since_start.min(u64::from(q.since_recv_ms) * 1_000_000),
                None => since_start,
            }
        } else {
            // The raw connection: only the socket says what it waits for.
            let Some(q) = quiet else { continue };
            u64::from(q.since_sent_ms.min(q.since_recv_ms)) * 1_000_000
        };
        if waiting <= limit {
            continue;
        }
        let last = seen[idx];
        let same = last.borrow == borrow && last.started == started;
        if same && now.saturating_sub(last.checked_ns) < limit {
            continue;
        }
        if raw {
            // A borrower thinking between statements reads nothing.
            if now.saturating_sub(seen[idx].looked_ns) < RAW_LOOK_EVERY_NS {
                continue;
            }
            seen[idx].looked_ns = now;
            let fd = (slot.socket.load(Relaxed) >> 32) as i32;
            if !crate::sys::thread_reading(fd) {
                continue;
            }
        }
        seen[idx] = Seen {
            borrow,
            started,
            checked_ns: now,
            looked_ns: seen[idx].looked_ns,
        };
        found.push(Found {
            idx,
            borrow,
            started,
            suspect: Suspect {
                key,
                age: Duration::from_nanos(now.saturating_sub(slot.made_ns.load(Relaxed))),
                waiting: Duration::from_nanos(waiting),
            },
        });
    }
    found
}

/// One check for all of `found`, bounded by `connect_timeout` +
/// `validation_timeout` (the watchdog cancels it at its deadline); then the
/// condemned are cut off.
fn check<C: Connector>(s: &Shared<C>, threshold: Duration, found: &[Found]) {
    let bound = s.cfg.connect_timeout + s.cfg.validation_timeout;
    let attempt = ConnectAttempt::new(bound);
    lock(&s.probes).push(attempt.clone());
    let _ = s.wake_watchdog.try_send(());
    let list: Vec<Suspect> = found.iter().map(|f| f.suspect).collect();
    let began = std::time::Instant::now();
    let result = super::driver_call(
        crate::error::ErrorKind::Internal,
        || format!("liveness check of {}", s.connector.endpoint()),
        || Ok(s.connector.check_liveness(&attempt, &list)),
    );
    let cut_off = !attempt.finish();
    let took = began.elapsed();
    lock(&s.probes).retain(|a| !a.same(&attempt));
    let ep = s.connector.endpoint();
    let verdicts: Vec<Option<String>> = match result {
        _ if cut_off => {
            let what = attempt.cancelled().unwrap_or_default();
            vec![
                Some(format!(
                    "no answer from {ep} within {} ({what})",
                    fmt_duration(bound)
                ));
                found.len()
            ]
        }
        Ok(Ok(v)) if v.len() == found.len() => v,
        Ok(Ok(_)) => {
            log::error!(target: "staunch", "liveness check of {ep}: wrong number of verdicts");
            return;
        }
        Ok(Err(what)) => vec![Some(what); found.len()],
        Err(e) => {
            log::error!(target: "staunch", "{e}");
            return;
        }
    };
    for (f, verdict) in found.iter().zip(verdicts) {
        let Some(verdict) = verdict else { continue };
        let slot = &s.bag.slots[f.idx];
        let sig = &slot.signals;
        // Only the statement that was checked, still waiting.
        let same = slot.state.load(Relaxed) == IN_USE
            && slot.borrows.load(Relaxed) == f.borrow
            && sig.started_ns.load(Relaxed) == f.started;
        if !same {
            continue;
        }
        let why = format!(
            "after {} without an answer (liveness_threshold={}), {verdict} (the check took {})",
            fmt_duration(f.suspect.waiting),
            fmt_duration(threshold),
            fmt_duration(took)
        );
        *lock(&slot.verdict) = Some(why.clone());
        if sig
            .cut
            .compare_exchange(false, true, Relaxed, Relaxed)
            .is_err()
        {
            // The statement time limit's cut came first: its words stand.
            *lock(&slot.verdict) = None;
            continue;
        }
        s.with_borrowed_socket(f.idx, |sock| crate::sys::shutdown(sock.fd()));
        s.counters.statements_cut.fetch_add(1, Relaxed);
        log::warn!(
            target: "staunch",
            "connection {} to {ep}: the server stopped answering during a statement: {why}; its socket was shut down",
            slot.id.load(Relaxed),
        );
    }
}
