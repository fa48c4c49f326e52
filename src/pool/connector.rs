//! How a physical connection is made, checked and reset.
//!
//! The pool core is generic over [`Connector`]: the MySQL one is
//! [`MysqlConnector`](crate::MysqlConnector); tests, the loom model and
//! benchmarks plug in fakes.

use std::sync::atomic::AtomicU8;
use std::sync::atomic::Ordering::{AcqRel, Acquire};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::error::Error;

/// Makes, checks and resets connections for a pool.
///
/// All methods are called without any pool lock held, from pool threads or
/// from the thread calling `get` / returning a connection. Each must respect
/// the bound it is given.
pub trait Connector: Send + Sync + 'static {
    /// The connection type handed out (through `PooledConn`'s `Deref`).
    type Conn: Send + 'static;

    /// Opens one connection. Must give up by `attempt.deadline()`; to let the
    /// pool enforce that from outside (a read that never returns), register a
    /// canceller with [`ConnectAttempt::set_canceller`].
    fn connect(&self, attempt: &ConnectAttempt) -> Result<Self::Conn, Error>;

    /// Checks that the connection works, within `timeout`.
    fn validate(&self, conn: &mut Self::Conn, timeout: Duration) -> Result<(), Error>;

    /// Prepares a returned connection for the next borrower: roll back an
    /// open transaction, reset changed session state. `touched` is true when
    /// the borrower had unrestricted mutable access to the raw connection, so
    /// its state is unknown. An error discards the connection. Must be
    /// bounded.
    fn recycle(&self, conn: &mut Self::Conn, touched: bool) -> Result<Recycled, Error> {
        let _ = (conn, touched);
        Ok(Recycled::AsIs)
    }

    /// The longest a borrowed connection may wait for (or keep receiving)
    /// the answer to what was last sent on it, by default: past it, the
    /// pool's watchdog shuts the socket down (a statement whose server does
    /// not answer at all cannot block its caller forever, nor leave its late
    /// answer for the next statement). None (the default): no bound. A
    /// borrower can change it for its borrow
    /// ([`Lease::set_statement_bound`](crate::pool::Lease::set_statement_bound)).
    /// Needs `socket_fd` (TCP only: the watchdog reads TCP_INFO).
    fn statement_bound(&self) -> Option<Duration> {
        None
    }

    /// Statement liveness: a statement that has waited longer than this for
    /// its answer (and received nothing meanwhile) has its server checked
    /// by the pool's `staunch-liveness` thread with
    /// [`check_liveness`](Connector::check_liveness), then again every
    /// threshold while it waits. None (the default): never checked. Needs
    /// [`liveness_key`](Connector::liveness_key) and `socket_fd`.
    fn liveness_threshold(&self) -> Option<Duration> {
        None
    }

    /// What identifies a connection to its server for
    /// [`check_liveness`](Connector::check_liveness) (for MySQL: the
    /// connection id), read once when it is made. None: never checked.
    fn liveness_key(&self, conn: &Self::Conn) -> Option<u64> {
        let _ = conn;
        None
    }

    /// Whether the server behind each suspect still serves it: one check for
    /// all of them, over a side connection, within `attempt`'s deadline (the
    /// pool's watchdog calls the attempt's canceller at the deadline, as for
    /// a connect). `Ok(v)`: one verdict per suspect, in order, `None` when
    /// the server answered and still runs that connection, `Some(what was
    /// seen)` when it does not (the statement is then cut off). `Err(what
    /// happened)`: the server did not answer at all (every suspect is cut
    /// off). A server that answered but could not be asked (an error of
    /// its own) is alive: `Ok` with `None`s.
    fn check_liveness(
        &self,
        attempt: &ConnectAttempt,
        suspects: &[Suspect],
    ) -> Result<Vec<Option<String>>, String> {
        let _ = attempt;
        Ok(vec![None; suspects.len()])
    }

    /// Whether a connection is unusable although the pool saw no error on
    /// it. Asked on return only when the borrower had the raw connection or
    /// read an answer itself (the pool cannot know how far); must not block.
    fn is_broken(&self, conn: &Self::Conn) -> bool {
        let _ = conn;
        false
    }

    /// Whether `err` from `connect` will recur on retry (wrong password,
    /// unknown database): the pool then fails waiters at once instead of
    /// retrying.
    fn is_permanent(&self, err: &Error) -> bool {
        let _ = err;
        false
    }

    /// The connection's socket, if it has one: lets the pool cut off a
    /// borrowed connection to a server confirmed dead.
    fn socket_fd(&self, conn: &Self::Conn) -> Option<std::os::fd::RawFd> {
        let _ = conn;
        None
    }

    /// Where connections go, for messages (`host:port`).
    fn endpoint(&self) -> String;
}

/// A borrowed connection whose statement has waited past the liveness
/// threshold, for [`Connector::check_liveness`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Suspect {
    /// Its [`Connector::liveness_key`].
    pub key: u64,
    /// How long ago the connection was made.
    pub age: Duration,
    /// How long its statement has waited for (the rest of) its answer.
    pub waiting: Duration,
}

/// What [`Connector::recycle`] did to a returned connection (counted in the
/// pool's stats).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recycled {
    /// Nothing was needed.
    AsIs,
    /// An open transaction was rolled back.
    RolledBack,
    /// The session was reset (its state had changed, or was unknown).
    Reset,
    /// The connection is sound but worn: the pool closes it instead of
    /// keeping it (counted as `max_lifetime`) and makes a new one when one
    /// is needed. The MySQL connector says so, in the library as shipped,
    /// when the `mysql` crate's read buffer has grown resident past a
    /// bound (`client::CRATE_WALK_MAX`).
    Retire,
}

const RUNNING: u8 = 0;
const FINISHED: u8 = 1;
const CANCELLING: u8 = 2;
const CANCELLED: u8 = 3;

type Canceller = Box<dyn Fn() -> Option<String> + Send + Sync>;

/// One connect in flight, with its hard deadline. The pool's watchdog calls the
/// registered canceller when the deadline passes and the connect is still
/// running.
#[derive(Clone)]
pub struct ConnectAttempt {
    inner: Arc<AttemptInner>,
}

struct AttemptInner {
    started: Instant,
    deadline: Instant,
    state: AtomicU8,
    canceller: Mutex<Option<Canceller>>,
    /// What the canceller found (e.g. "no greeting received"), once it ran.
    cancelled_because: Mutex<Option<String>>,
}

impl std::fmt::Debug for ConnectAttempt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectAttempt")
            .field("started", &self.inner.started)
            .field("deadline", &self.inner.deadline)
            .field("state", &self.inner.state.load(Acquire))
            .finish()
    }
}

impl ConnectAttempt {
    /// A new attempt that must finish within `timeout` from now (its
    /// [`deadline`](ConnectAttempt::deadline)).
    pub fn new(timeout: Duration) -> ConnectAttempt {
        let now = Instant::now();
        ConnectAttempt {
            inner: Arc::new(AttemptInner {
                started: now,
                deadline: now + timeout,
                state: AtomicU8::new(RUNNING),
                canceller: Mutex::new(None),
                cancelled_because: Mutex::new(None),
            }),
        }
    }

    /// When the attempt must be over.
    pub fn deadline(&self) -> Instant {
        self.inner.deadline
    }

    /// When it started.
    pub fn started(&self) -> Instant {
        self.inner.started
    }

    /// Time left before the deadline (zero once past).
    pub fn remaining(&self) -> Duration {
        self.inner
            .deadline
            .saturating_duration_since(Instant::now())
    }

    /// Registers how to abort this attempt from another thread: the function
    /// must make the connecting thread's blocking call return (e.g. shut its
    /// socket down) and may return a description of how far the connect got.
    pub fn set_canceller(&self, f: impl Fn() -> Option<String> + Send + Sync + 'static) {
        *crate::sync::lock(&self.inner.canceller) = Some(Box::new(f));
    }

    /// Whether the watchdog cut this attempt off, and what it found then.
    pub fn cancelled(&self) -> Option<String> {
        if !matches!(self.inner.state.load(Acquire), CANCELLING | CANCELLED) {
            return None;
        }
        // The watchdog holds the canceller lock until it has recorded what it
        // found: wait for that (the stuck read returns as soon as the socket
        // is shut, before the watchdog is done).
        drop(crate::sync::lock(&self.inner.canceller));
        Some(
            crate::sync::lock(&self.inner.cancelled_because)
                .clone()
                .unwrap_or_else(|| "cut off at its deadline".to_string()),
        )
    }

    /// The connecting thread is done with the attempt. Returns false if the
    /// watchdog cancelled it (the result must then be discarded); waits for a
    /// running canceller to finish, so that it never touches a socket the
    /// connecting thread has since closed.
    pub(crate) fn finish(&self) -> bool {
        match self
            .inner
            .state
            .compare_exchange(RUNNING, FINISHED, AcqRel, Acquire)
        {
            Ok(_) => {
                // The canceller holds a duplicate of the connection's
                // socket (see `client::connect`): let it go now, not when
                // the last clone of the attempt is dropped, so a finished
                // connect holds no second descriptor.
                drop(crate::sync::lock(&self.inner.canceller).take());
                true
            }
            Err(_) => {
                // The canceller holds this lock while it runs.
                drop(crate::sync::lock(&self.inner.canceller));
                false
            }
        }
    }

    /// Called by the watchdog at the deadline. Returns Some(found) if it
    /// cancelled a running attempt, with `found` true when a canceller was
    /// registered and reported success.
    pub(crate) fn cancel(&self) -> Option<bool> {
        let guard = crate::sync::lock(&self.inner.canceller);
        if self
            .inner
            .state
            .compare_exchange(RUNNING, CANCELLING, AcqRel, Acquire)
            .is_err()
        {
            return None;
        }
        let found = guard.as_ref().and_then(|f| f());
        let ok = found.is_some();
        *crate::sync::lock(&self.inner.cancelled_because) = match (found, guard.is_some()) {
            (Some(found), _) => Some(found),
            // Not "cut off": the connecting thread goes on until its own
            // socket timeouts end it.
            (None, true) => Some(
                "past its deadline, but the watchdog could not find its socket to cut it off \
                 (e.g. no file descriptor left to read /proc with); it ran until its socket timeout"
                    .to_string(),
            ),
            (None, false) => None,
        };
        self.inner
            .state
            .store(CANCELLED, std::sync::atomic::Ordering::Release);
        Some(ok)
    }

    pub(crate) fn is_running(&self) -> bool {
        self.inner.state.load(Acquire) == RUNNING
    }

    pub(crate) fn same(&self, other: &ConnectAttempt) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}
