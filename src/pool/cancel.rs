//! [`CancelToken`]: stops a waiting `get` from another thread.
//!
//! A token is cheap to clone and may be shared by any number of threads. A
//! `get` given a token registers its waiter with it while it waits; `cancel`
//! marks the token and wakes that waiter, which leaves the queue exactly as a
//! timed-out waiter does (if an entry was handed to it meanwhile, the entry
//! goes back to the pool): the pool's counts end as if it had never waited.

use std::sync::atomic::Ordering::SeqCst;

use super::bag::Waiter;
// The model's primitives: loom's under the loom model (see `bag.rs`).
use crate::sync::model::{lock, Arc, AtomicBool, Mutex};

/// Cancels a waiting `get` from any thread (the shape of Go's `context`,
/// Python's Ctrl-C, JDBC's `Statement.cancel()`). Once cancelled, a token
/// stays cancelled: every `get` given it fails at once with
/// `ErrorKind::Cancelled`.
#[derive(Clone)]
pub struct CancelToken {
    inner: Arc<Inner>,
}

impl Default for CancelToken {
    fn default() -> Self {
        CancelToken {
            inner: Arc::new(Inner {
                cancelled: AtomicBool::new(false),
                waiters: Mutex::new(Vec::new()),
            }),
        }
    }
}

struct Inner {
    cancelled: AtomicBool,
    /// The waiters of `get`s waiting with this token now (usually one).
    /// Held only to add, remove or wake them.
    waiters: Mutex<Vec<Arc<Waiter>>>,
}

impl CancelToken {
    /// A token not cancelled yet.
    pub fn new() -> CancelToken {
        CancelToken::default()
    }

    /// Cancels: every `get` waiting with this token returns
    /// `ErrorKind::Cancelled` promptly, and later ones at once. Never blocks
    /// (beyond a short lock); idempotent.
    pub fn cancel(&self) {
        self.inner.cancelled.store(true, SeqCst);
        let waiters = lock(&self.inner.waiters).clone();
        for w in waiters {
            w.wake();
        }
    }

    /// Whether [`cancel`](CancelToken::cancel) was called.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(SeqCst)
    }

    /// Registers a waiter; false (not registered) if already cancelled. The
    /// flag is read after the push, under the lock `cancel` takes after
    /// setting it: either `cancel` sees the waiter or this sees the flag.
    pub(crate) fn register(&self, w: &Arc<Waiter>) -> bool {
        let mut ws = lock(&self.inner.waiters);
        if self.is_cancelled() {
            return false;
        }
        ws.push(w.clone());
        true
    }

    pub(crate) fn unregister(&self, w: &Arc<Waiter>) {
        lock(&self.inner.waiters).retain(|x| !Arc::ptr_eq(x, w));
    }
}

impl std::fmt::Debug for CancelToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CancelToken")
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}
