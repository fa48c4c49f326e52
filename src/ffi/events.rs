//! Pool events for C: a callback with `user_data` and a finalizer.
//!
//! A [`Callback`] is shared (`Arc`) by the options it was set on and by every
//! pool opened from them; its finalizer runs when the last of those lets go.
//! Each pool reaches it through its own [`FfiListener`], whose gate
//! `staunch_pool_free` shuts: it waits for callbacks in flight, after which no
//! callback of that pool runs again, even from pool threads still winding down
//! or connections freed later.
//!
//! Every pool opened from C gets an `FfiListener`, with or without a callback
//! (without one, events go to the `log` crate as in Rust). `staunch_pool_free`
//! shuts its gate after joining the pool's threads, so their last events
//! still reach the callback (see `super::pool`).

use std::cell::Cell;
use std::ffi::{c_char, c_void, CString};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use super::error::{status_of, staunch_status, to_cstring, STAUNCH_OK};
use crate::events::{Event, EventListener, LogListener};
use crate::sync::lock;

/// What happened, in a `staunch_event`.
pub type staunch_event_kind = u32;

/// An event this version of the header has no name for (`message` says
/// what it is). Ignore it, or log the message.
pub const STAUNCH_EVENT_OTHER: staunch_event_kind = 0;
/// A new connection is ready (`connection_id`, `duration_us` = connect time,
/// `message` = the endpoint).
pub const STAUNCH_EVENT_CONNECTED: staunch_event_kind = 1;
/// One connect attempt failed (`message` = the error, `status`, `count` =
/// consecutive failures so far).
pub const STAUNCH_EVENT_CONNECT_FAILED: staunch_event_kind = 2;
/// A connect succeeded after failures: the database is reachable again
/// (`count` = failures before, `duration_us` = length of the outage).
pub const STAUNCH_EVENT_RECOVERED: staunch_event_kind = 3;
/// A connection was closed (`connection_id`, `message` = the reason:
/// idle_timeout, max_lifetime, broken, evicted, pool_closed).
pub const STAUNCH_EVENT_CLOSED: staunch_event_kind = 4;
/// A validation (on borrow or keepalive) failed and the connection was closed
/// (`connection_id`, `message` = the error, `status`).
pub const STAUNCH_EVENT_VALIDATION_FAILED: staunch_event_kind = 5;
/// A connection has been borrowed longer than `leak_detection_threshold`
/// (`connection_id`, `message` = who borrowed it and for how long, then,
/// after "borrowed at:", the stack `staunch_conn_set_borrower_stack` gave;
/// `duration_us`).
pub const STAUNCH_EVENT_LEAK_SUSPECTED: staunch_event_kind = 6;
/// A `staunch_pool_get` timed out (`message` = the error, `status`).
pub const STAUNCH_EVENT_ACQUIRE_TIMEOUT: staunch_event_kind = 7;
/// The pool was closed.
pub const STAUNCH_EVENT_POOL_CLOSED: staunch_event_kind = 8;
/// Topology pools: a former primary, superseded by a promotion the pool
/// followed, answers with read_only=0 (a stale primary). It gets no writes
/// and no reads; fence it. `message` names it and the current writer.
pub const STAUNCH_EVENT_STALE_PRIMARY_WRITABLE: staunch_event_kind = 9;
/// Topology pools: writes moved to another host, and these transactions the
/// former primary committed are missing there (`count` = how many; `message`
/// names both hosts and the GTID ranges, and says whether the figure is
/// final or a lower bound from the former primary's last answer, in which
/// case a final event follows when it answers again).
pub const STAUNCH_EVENT_UNREPLICATED_WRITES: staunch_event_kind = 10;

/// One pool event, passed to the callback set with
/// `staunch_options_set_event_callback`. The struct and `message` are valid
/// only during the callback: copy what you need.
#[repr(C)]
#[derive(Debug)]
pub struct staunch_event {
    /// One of the STAUNCH_EVENT_* values.
    pub kind: staunch_event_kind,
    /// For failures (connect_failed, validation_failed, acquire_timeout):
    /// the status the error maps to; otherwise STAUNCH_OK.
    pub status: staunch_status,
    /// The pool-wide number of the connection concerned, 0 when the event is
    /// not about one connection.
    pub connection_id: u64,
    /// Consecutive failed connects (connect_failed: including this one;
    /// recovered: before the success); unreplicated_writes: the number of
    /// transactions; otherwise 0.
    pub count: u64,
    /// A duration in microseconds (connected: the connect; recovered: the
    /// outage; leak_suspected: how long it has been borrowed); otherwise 0.
    pub duration_us: u64,
    /// A human-readable description, NUL-terminated UTF-8, never NULL.
    pub message: *const c_char,
    /// The pool the event comes from (`staunch_pool_id`).
    pub pool_id: u64,
}

/// The C callback type.
pub type staunch_event_callback =
    Option<unsafe extern "C" fn(event: *const staunch_event, user_data: *mut c_void)>;
/// Called once with `user_data` when no pool or options need it any more.
pub type staunch_finalizer = Option<unsafe extern "C" fn(user_data: *mut c_void)>;

/// A registered C callback; runs the finalizer when dropped.
pub(crate) struct Callback {
    cb: unsafe extern "C" fn(*const staunch_event, *mut c_void),
    user_data: *mut c_void,
    finalizer: staunch_finalizer,
}

// SAFETY: the header requires the callback (and finalizer) to be callable from
// any thread with this user_data; staunch never dereferences user_data.
unsafe impl Send for Callback {}
// SAFETY: as above; calls may happen concurrently, which the header states.
unsafe impl Sync for Callback {}

impl Callback {
    pub fn new(
        cb: unsafe extern "C" fn(*const staunch_event, *mut c_void),
        user_data: *mut c_void,
        finalizer: staunch_finalizer,
    ) -> Callback {
        Callback {
            cb,
            user_data,
            finalizer,
        }
    }
}

impl Drop for Callback {
    fn drop(&mut self) {
        if let Some(f) = self.finalizer {
            // SAFETY: the C caller's function, called once, as documented.
            unsafe { f(self.user_data) };
        }
    }
}

impl std::fmt::Debug for Callback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Callback")
    }
}

/// The listener a pool opened from C gets.
#[derive(Debug)]
pub(crate) struct FfiListener {
    gate: Mutex<Gate>,
    /// Signalled when the last callback in flight returns.
    idle: Condvar,
    /// No C callback: events go to the `log` crate.
    log: bool,
    /// The pool's number, put in its events.
    pool_id: u64,
}

/// The callback, until the gate is shut, and how many calls of it are in
/// flight. Held only to read or change these, never across a callback.
#[derive(Debug)]
struct Gate {
    cb: Option<Arc<Callback>>,
    in_flight: usize,
}

thread_local! {
    /// The listener whose callback this thread is inside, if any (so that
    /// a callback that frees its own pool does not wait for itself).
    static INSIDE: Cell<usize> = const { Cell::new(0) };
}

impl FfiListener {
    /// A listener calling `cb`, or logging when there is none.
    pub fn new(cb: Option<Arc<Callback>>, pool_id: u64) -> FfiListener {
        FfiListener {
            log: cb.is_none(),
            gate: Mutex::new(Gate { cb, in_flight: 0 }),
            idle: Condvar::new(),
            pool_id,
        }
    }

    fn addr(&self) -> usize {
        self as *const FfiListener as usize
    }

    /// No callback starts after this; it returns once the calls in flight
    /// have (except one on this very thread: a callback freeing its own
    /// pool). Drops this pool's reference to the callback, running its
    /// finalizer if it was the last (or leaving that to the last call in
    /// flight).
    pub fn shut(&self) {
        let mut g = lock(&self.gate);
        let cb = g.cb.take();
        let me = INSIDE.with(Cell::get) == self.addr();
        while g.in_flight > usize::from(me) {
            g = self.idle.wait(g).unwrap_or_else(|p| p.into_inner());
        }
        drop(g);
        drop(cb);
    }
}

impl EventListener for FfiListener {
    fn on_event(&self, event: &Event) {
        if self.log {
            LogListener.on_event(event);
            return;
        }
        let cb = {
            let mut g = lock(&self.gate);
            let Some(cb) = g.cb.clone() else { return };
            g.in_flight += 1;
            cb
        };
        let call = InFlight {
            listener: self,
            outer: INSIDE.with(|c| c.replace(self.addr())),
            cb,
        };
        let (ev, message) = describe(event);
        let ev = staunch_event {
            message: message.as_ptr(),
            pool_id: self.pool_id,
            ..ev
        };
        // SAFETY: the C caller's callback with its user_data; `ev` and the
        // message outlive the call.
        unsafe { (call.cb.cb)(&ev, call.cb.user_data) };
    }
}

/// One callback in flight: counted out when dropped, even by a panic.
struct InFlight<'a> {
    listener: &'a FfiListener,
    outer: usize,
    cb: Arc<Callback>,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        INSIDE.with(|c| c.set(self.outer));
        let mut g = lock(&self.listener.gate);
        g.in_flight -= 1;
        if g.in_flight == 0 {
            self.listener.idle.notify_all();
        }
        // `self.cb` is dropped after this, outside the lock: the last
        // reference once the gate is shut, whose finalizer runs then.
    }
}

fn us(d: Duration) -> u64 {
    d.as_micros().min(u128::from(u64::MAX)) as u64
}

/// The C form of an event, and the message it points to.
fn describe(e: &Event) -> (staunch_event, CString) {
    let mut ev = staunch_event {
        kind: 0,
        status: STAUNCH_OK,
        connection_id: 0,
        count: 0,
        duration_us: 0,
        message: std::ptr::null(),
        pool_id: 0,
    };
    let message = match e {
        Event::Connected { id, endpoint, took } => {
            ev.kind = STAUNCH_EVENT_CONNECTED;
            ev.connection_id = *id;
            ev.duration_us = us(*took);
            endpoint.clone()
        }
        Event::ConnectFailed { error, attempt, .. } => {
            ev.kind = STAUNCH_EVENT_CONNECT_FAILED;
            ev.status = status_of(error.kind());
            ev.count = u64::from(*attempt);
            error.to_string()
        }
        Event::Recovered {
            endpoint,
            failures,
            outage,
        } => {
            ev.kind = STAUNCH_EVENT_RECOVERED;
            ev.count = u64::from(*failures);
            ev.duration_us = us(*outage);
            format!("{endpoint} is reachable again after {failures} failed connects")
        }
        Event::Closed { id, reason } => {
            ev.kind = STAUNCH_EVENT_CLOSED;
            ev.connection_id = *id;
            reason.as_str().to_owned()
        }
        Event::ValidationFailed { id, error } => {
            ev.kind = STAUNCH_EVENT_VALIDATION_FAILED;
            ev.connection_id = *id;
            ev.status = status_of(error.kind());
            error.to_string()
        }
        Event::LeakSuspected { id, held_for, .. } => {
            ev.kind = STAUNCH_EVENT_LEAK_SUSPECTED;
            ev.connection_id = *id;
            ev.duration_us = us(*held_for);
            // The thread's name, then where it borrowed (see the event).
            e.to_string()
        }
        Event::AcquireTimeout { error } => {
            ev.kind = STAUNCH_EVENT_ACQUIRE_TIMEOUT;
            ev.status = status_of(error.kind());
            error.to_string()
        }
        Event::PoolClosed => {
            ev.kind = STAUNCH_EVENT_POOL_CLOSED;
            "pool closed".to_owned()
        }
        Event::StalePrimaryWritable { .. } => {
            ev.kind = STAUNCH_EVENT_STALE_PRIMARY_WRITABLE;
            e.to_string()
        }
        Event::UnreplicatedWrites { transactions, .. } => {
            ev.kind = STAUNCH_EVENT_UNREPLICATED_WRITES;
            ev.count = *transactions;
            e.to_string()
        }
        // A kind added to the crate before it gets its own number here:
        // its text says what it is.
        #[allow(unreachable_patterns)]
        other => {
            ev.kind = STAUNCH_EVENT_OTHER;
            other.to_string()
        }
    };
    (ev, to_cstring(message))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    fn text(e: &Event) -> (staunch_event, String) {
        let (ev, msg) = describe(e);
        (
            ev,
            unsafe { CStr::from_ptr(msg.as_ptr()) }
                .to_string_lossy()
                .into_owned(),
        )
    }

    #[test]
    fn topology_events_of_issue_12_have_their_codes() {
        let (ev, m) = text(&Event::StalePrimaryWritable {
            endpoint: "h1:3306".into(),
            writer: Some("h2:3306".into()),
        });
        assert_eq!(ev.kind, STAUNCH_EVENT_STALE_PRIMARY_WRITABLE);
        assert!(m.contains("h1:3306") && m.contains("h2:3306"), "{m}");
        let (ev, m) = text(&Event::UnreplicatedWrites {
            former: "h1:3306".into(),
            writer: "h2:3306".into(),
            missing: "0-1-121..0-1-150".into(),
            transactions: 30,
            confirmed: false,
        });
        assert_eq!(ev.kind, STAUNCH_EVENT_UNREPLICATED_WRITES);
        assert_eq!(ev.count, 30);
        assert!(
            m.contains("0-1-121..0-1-150") && m.contains("at least"),
            "{m}"
        );
    }
}
