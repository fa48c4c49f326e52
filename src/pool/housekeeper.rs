//! The housekeeper: one thread (`staunch-housekeeper`) that, every tick,
//! - closes idle connections retired by soft eviction or max lifetime;
//! - closes connections idle longer than `idle_timeout` while above `min_idle`;
//! - validates idle connections whose keepalive is due, each one first
//!   *reserved* (IDLE → RESERVED by CAS) so that no borrower can take it while
//!   it is checked (incident C);
//! - reports connections borrowed longer than `leak_detection_threshold`;
//! - closes idle connections above a lowered `max_size`;
//! - asks the adders to refill the pool up to `min_idle`;
//! - has the library's allocator give back what is due (`src/alloc.rs`).
//!
//! The tick is a quarter of the shortest enabled interval, between 10 ms and
//! 1 s. Every check it runs is bounded by `validation_timeout`.

use std::sync::atomic::Ordering::{Relaxed, SeqCst};
use std::time::Duration;

use super::bag::{Entry, IDLE, IN_USE};
use super::connector::Connector;
use super::Shared;
use crate::events::CloseReason;
use crate::events::{emit, Event};
use crate::sync::{spawn_resilient, Arc};
use crate::sys::coarse_now_ns;

fn tick<C: Connector>(s: &Shared<C>) -> Duration {
    let c = &s.cfg;
    [
        c.idle_timeout,
        c.keepalive_interval,
        c.leak_detection_threshold,
        c.max_lifetime,
    ]
    .into_iter()
    .flatten()
    .map(|d| d / 4)
    .min()
    .unwrap_or(Duration::from_secs(1))
    .clamp(Duration::from_millis(10), Duration::from_secs(1))
}

pub(crate) fn spawn<C: Connector>(s: &Arc<Shared<C>>) -> std::io::Result<()> {
    let s2 = s.clone();
    let handle = spawn_resilient("staunch-housekeeper".into(), move || run(&s2), || {})?;
    s.keep_thread(handle);
    Ok(())
}

/// Waits a tick (or a kick), then does a pass, until the pool closes. After
/// a panic in a pass, `spawn_resilient` starts this again: with a wait.
fn run<C: Connector>(s: &Shared<C>) {
    let period = tick(s);
    loop {
        crossbeam_channel::select! {
            recv(s.wake_housekeeper_rx) -> _ => {}
            recv(s.shutdown_rx) -> _ => return,
            default(period) => {}
        }
        if s.is_closed() {
            return;
        }
        run_once(s);
        // What answers freed goes back to the kernel once due, even when
        // nothing else allocates (src/alloc.rs; nothing under another
        // allocator).
        crate::collect_freed_memory();
    }
}

/// One housekeeping pass.
pub(crate) fn run_once<C: Connector>(s: &Shared<C>) {
    let idle_ns = s.cfg.idle_timeout.map(|d| d.as_nanos() as u64);
    for idx in 0..s.bag.slots.len() {
        if s.is_closed() {
            return;
        }
        let slot = &s.bag.slots[idx];
        match slot.state.load(Relaxed) {
            IDLE => {
                let now = coarse_now_ns();
                let retire = s.retire_reason(idx, now).or_else(|| {
                    let idle_for = now.saturating_sub(slot.returned_at.load(Relaxed));
                    match idle_ns {
                        Some(t)
                            if idle_for >= t && s.total.load(SeqCst) > s.min_idle.load(SeqCst) =>
                        {
                            Some(CloseReason::IdleTimeout)
                        }
                        _ => None,
                    }
                });
                let ka = slot.keepalive_ns.load(Relaxed);
                let keepalive_due =
                    ka != 0 && now.saturating_sub(slot.alive_at.load(Relaxed)) >= ka;
                if retire.is_none() && !keepalive_due {
                    continue;
                }
                // Reserve first: a borrower that got there before us wins and
                // we skip this entry.
                let Some(entry) = s.bag.reserve(idx) else {
                    continue;
                };
                match retire {
                    Some(reason) => s.close_entry(entry, reason),
                    None => keepalive(s, entry),
                }
            }
            IN_USE if s.leak_ns != 0 => {
                let since = slot.borrowed_at.load(Relaxed);
                if since == super::NOT_BORROWED {
                    continue;
                }
                let now = coarse_now_ns();
                let held = now.saturating_sub(since);
                if held >= s.leak_ns && !slot.leak_reported.swap(true, Relaxed) {
                    // Re-check it is still the same borrow (state may have
                    // moved on meanwhile; a stale report is harmless but noisy).
                    if slot.state.load(Relaxed) != IN_USE {
                        continue;
                    }
                    s.counters.leaks_reported.fetch_add(1, Relaxed);
                    let id = slot.id.load(Relaxed);
                    let held_for = Duration::from_nanos(held);
                    let who = slot.take_borrower();
                    match who {
                        // Resolved on a thread of its own, so that the
                        // pool's housekeeping never waits on debug info.
                        Some(who) if who.slow_to_describe() => {
                            let listener = s.listener.clone();
                            let report = move || {
                                emit(
                                    &*listener,
                                    Event::LeakSuspected {
                                        id,
                                        thread: who.describe(),
                                        held_for,
                                    },
                                )
                            };
                            if let Err(e) = std::thread::Builder::new()
                                .name("staunch-leak-report".into())
                                .spawn(report)
                            {
                                log::warn!(target: "staunch", "connection {id} may have leaked (held for {}); no thread to report its stack: {e}", crate::duration::fmt_duration(held_for));
                            }
                        }
                        who => s.emit(Event::LeakSuspected {
                            id,
                            thread: who.map(|w| w.describe()).unwrap_or_default(),
                            held_for,
                        }),
                    }
                }
            }
            _ => {}
        }
    }
    // After a lower max_size: close idle connections above it.
    s.shed_idle_surplus();
    // Refill to min_idle.
    while s.total.load(SeqCst) + s.pending.load(SeqCst) < s.min_idle.load(SeqCst) {
        if !s.request_create() {
            break;
        }
    }
}

/// Validates a RESERVED idle entry; puts it back or closes it.
fn keepalive<C: Connector>(s: &Shared<C>, entry: Entry) {
    let slot = s.bag.slot(&entry);
    s.counters.keepalives.fetch_add(1, Relaxed);
    let Some(mut conn) = s.bag.take(&entry) else {
        s.bag.violations.fetch_add(1, Relaxed);
        s.close_entry(entry, CloseReason::Broken);
        return;
    };
    let r = s.validate(&mut conn, s.cfg.validation_timeout);
    s.bag.put(&entry, conn);
    match r {
        Ok(()) => {
            slot.alive_at.store(coarse_now_ns(), Relaxed);
            s.make_idle(entry);
        }
        Err(error) => {
            s.counters.validation_failures.fetch_add(1, Relaxed);
            let id = slot.id.load(Relaxed);
            s.close_entry(entry, CloseReason::Broken);
            s.emit(Event::ValidationFailed { id, error });
        }
    }
}
