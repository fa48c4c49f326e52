//! A connector around the real one that records who holds each connection,
//! for the incident C checks (the test and the drill share it): validation
//! (keepalive) and borrowers both mark a connection busy while they use it,
//! and finding it busy already is an ownership violation.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

use staunch::pool::{ConnectAttempt, Connector, Recycled};
use staunch::{MysqlConnector, Session};

pub struct Instrumented {
    pub inner: MysqlConnector,
    /// Times a connection was found in use by someone else.
    pub violations: Arc<AtomicU64>,
    /// Validations run (keepalive and on borrow).
    pub validations: Arc<AtomicU64>,
}

impl Instrumented {
    pub fn new(inner: MysqlConnector) -> Instrumented {
        Instrumented {
            inner,
            violations: Arc::new(AtomicU64::new(0)),
            validations: Arc::new(AtomicU64::new(0)),
        }
    }
}

/// A connection and its "someone is using me" flag.
pub struct Owned {
    pub conn: Session,
    pub busy: Arc<AtomicBool>,
}

impl Owned {
    /// Marks the connection busy; false (and a violation counted by the
    /// caller) if someone else already had it.
    pub fn enter(&self) -> bool {
        !self.busy.swap(true, SeqCst)
    }
    pub fn leave(&self) {
        self.busy.store(false, SeqCst);
    }
}

impl Connector for Instrumented {
    type Conn = Owned;
    fn connect(&self, a: &ConnectAttempt) -> staunch::Result<Owned> {
        Ok(Owned {
            conn: self.inner.connect(a)?,
            busy: Arc::new(AtomicBool::new(false)),
        })
    }
    fn validate(&self, c: &mut Owned, t: Duration) -> staunch::Result<()> {
        if !c.enter() {
            self.violations.fetch_add(1, SeqCst);
        }
        self.validations.fetch_add(1, SeqCst);
        let r = self.inner.validate(&mut c.conn, t);
        c.leave();
        r
    }
    fn recycle(&self, c: &mut Owned, touched: bool) -> staunch::Result<Recycled> {
        self.inner.recycle(&mut c.conn, touched)
    }
    fn is_permanent(&self, e: &staunch::Error) -> bool {
        self.inner.is_permanent(e)
    }
    fn endpoint(&self) -> String {
        self.inner.endpoint()
    }
}
