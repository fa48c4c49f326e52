//! Synchronization primitives, behind one shim.
//!
//! The pool uses std's types. The entry registry (`pool/bag.rs`) uses the ones
//! in [`model`], which are loom's with the `loom-model` feature, so that
//! `cargo test -p staunch --lib --features loom-model loom_model` checks that
//! code under the loom model checker (the crossbeam pattern).

pub(crate) use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
pub(crate) use std::sync::{Arc, Condvar, Mutex};

/// Locks a mutex, ignoring poisoning: every critical section in the pool keeps
/// its data consistent before any call that could panic, so a poisoned lock
/// carries no broken invariant.
pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

/// Calls `done` until it returns true or `deadline` passes, sleeping in
/// between (20 µs, doubling up to 5 ms: short waits end quickly, long ones
/// cost little). Returns `done`'s last answer.
pub(crate) fn poll_until(deadline: std::time::Instant, mut done: impl FnMut() -> bool) -> bool {
    use std::time::{Duration, Instant};
    let mut pause = Duration::from_micros(20);
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(5));
    }
}

/// Joins a thread if it exits by `deadline`; else leaves it running
/// (detached) and returns false. False at once for the calling thread itself.
pub(crate) fn join_until(h: std::thread::JoinHandle<()>, deadline: std::time::Instant) -> bool {
    if h.thread().id() == std::thread::current().id() {
        return false;
    }
    // Finished: its closure returned (pool threads catch their panics), and
    // join waits for the rest of its exit (thread-local destructors).
    poll_until(deadline, || h.is_finished()) && h.join().is_ok()
}

/// The message of a caught panic (`panic!("...")` payloads are `&str` or
/// `String`).
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|m| m.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_string())
}

/// Starts a pool thread named `name` that runs `body` until it returns, then
/// `on_exit`. A panic in `body` (a connector or listener bug) is logged and
/// `body` runs again: it must not take the pool's ability to connect, check
/// or monitor with it.
pub(crate) fn spawn_resilient(
    name: String,
    mut body: impl FnMut() + Send + 'static,
    on_exit: impl FnOnce() + Send + 'static,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new().name(name).spawn(move || {
        while let Err(p) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(&mut body)) {
            let name = std::thread::current().name().unwrap_or("?").to_owned();
            log::error!(
                target: "staunch",
                "{name} panicked ({}); continuing",
                panic_message(&*p)
            );
        }
        on_exit();
    })
}

/// The primitives of the model-checked code: loom's with `loom-model`.
pub(crate) mod model {
    #[cfg(feature = "loom-model")]
    pub(crate) use loom::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize};
    #[cfg(feature = "loom-model")]
    pub(crate) use loom::sync::{Arc, Condvar, Mutex, MutexGuard};

    #[cfg(not(feature = "loom-model"))]
    pub(crate) use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize};
    #[cfg(not(feature = "loom-model"))]
    pub(crate) use std::sync::{Arc, Condvar, Mutex, MutexGuard};

    /// Locks a mutex, ignoring poisoning: every critical section in the pool keeps
    /// its data consistent before any call that could panic, so a poisoned lock
    /// carries no broken invariant.
    pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
        match m.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// A cell whose contents belong to whoever owns the entry it sits in.
    ///
    /// Access is unsynchronized: the caller must hold the entry's ownership (won by
    /// the CAS on the entry state in `bag.rs`). Under loom the accesses are tracked,
    /// so a model run fails if two threads ever touch one cell at once, which is
    /// incident C exactly.
    #[derive(Debug)]
    pub(crate) struct OwnedCell<T> {
        inner: OwnedCellInner<T>,
    }

    impl<T> OwnedCell<T> {
        pub(crate) fn new(v: T) -> Self {
            Self {
                inner: OwnedCellInner::new(v),
            }
        }

        /// Runs `f` on the contents.
        ///
        /// # Safety
        /// The caller owns the entry holding this cell (its state CAS succeeded and
        /// has not been released), so no other thread can access it meanwhile.
        #[allow(unsafe_code)]
        pub(crate) unsafe fn with_mut<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
            #[cfg(feature = "loom-model")]
            {
                self.inner.with_mut(|p| f(unsafe { &mut *p }))
            }
            #[cfg(not(feature = "loom-model"))]
            {
                f(unsafe { &mut *self.inner.get() })
            }
        }
    }

    #[cfg(feature = "loom-model")]
    type OwnedCellInner<T> = loom::cell::UnsafeCell<T>;
    #[cfg(not(feature = "loom-model"))]
    type OwnedCellInner<T> = std::cell::UnsafeCell<T>;

    // SAFETY: access to the contents is serialized by entry ownership (see
    // `with_mut`), so sharing the cell between threads is sound when T may move
    // between threads.
    #[allow(unsafe_code)]
    unsafe impl<T: Send> Sync for OwnedCell<T> {}
}
