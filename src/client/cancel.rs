//! [`CancelHandle`]: stops the statement running on a borrowed connection,
//! from any thread, with `KILL QUERY` over a connection of its own.

use std::sync::Arc;
use std::time::Duration;

use super::session::Gate;
use super::MysqlConnector;
use crate::duration::fmt_duration;
use crate::error::{Error, ErrorKind, Result};
use crate::pool::{ConnectAttempt, Connector};

/// Cancels the statement running on the connection it was taken from
/// ([`PooledConn::cancel_handle`](crate::PooledConn::cancel_handle)), from
/// any thread: `Send + Sync + Clone`.
///
/// [`cancel`](CancelHandle::cancel) opens a connection of its own to the same
/// server (with the pool's credentials, bounded by `connect_timeout`) and
/// sends `KILL QUERY <connection id>`: the statement ends with
/// `ErrorKind::Cancelled` and the connection stays usable. It acts only on a
/// statement run through the connection's own methods (or the C ABI) that is
/// running when it is called, in the borrow it was taken in: a statement
/// that already ended, a later statement, a later borrower of the same
/// connection are never touched (see `session.rs`'s `Gate`).
#[derive(Clone)]
pub struct CancelHandle {
    gate: Arc<Gate>,
    borrow: u32,
    connection_id: u32,
    connector: Arc<MysqlConnector>,
}

impl std::fmt::Debug for CancelHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CancelHandle")
            .field("endpoint", &self.connector.endpoint())
            .field("connection_id", &self.connection_id)
            .finish()
    }
}

impl CancelHandle {
    pub(crate) fn new(
        gate: Arc<Gate>,
        borrow: u32,
        connection_id: u32,
        connector: &MysqlConnector,
    ) -> CancelHandle {
        CancelHandle {
            gate,
            borrow,
            connection_id,
            // The kill's own connection needs none of the borrowers' session
            // settings, and must not be cut by their time limit.
            connector: connector.side_connector(),
        }
    }

    /// Cancels the statement running now, if one is. Ok(true): `KILL QUERY`
    /// was sent and acknowledged; Ok(false): no statement of this borrow was
    /// running (nothing was sent). Blocks for the side connection and the
    /// kill, at most the pool's `connect_timeout` plus one second; meanwhile
    /// the connection starts no new statement. An error says why the kill
    /// could not be sent (the statement then runs on).
    pub fn cancel(&self) -> Result<bool> {
        if !self.gate.start_cancel(self.borrow) {
            return Ok(false);
        }
        struct Finish<'a>(&'a Gate);
        impl Drop for Finish<'_> {
            fn drop(&mut self) {
                self.0.finish_cancel();
            }
        }
        let _finish = Finish(&self.gate);
        kill_query(&self.connector, self.connection_id).map(|()| true)
    }
}

/// `KILL QUERY id` over a new connection, on a thread of its own cut off at
/// `connect_timeout` + 1 s (its socket shut down then, so the thread ends
/// too).
fn kill_query(connector: &MysqlConnector, id: u32) -> Result<()> {
    let timeout = connector.connect_timeout() + Duration::from_secs(1);
    let attempt = ConnectAttempt::new(connector.connect_timeout());
    let (a2, c2) = (attempt.clone(), connector.clone());
    let (tx, rx) = crossbeam_channel::bounded(1);
    let spawned = std::thread::Builder::new()
        .name("staunch-cancel".into())
        .spawn(move || {
            let r = c2.connect(&a2).and_then(|mut s| {
                s.link
                    .run(format!("KILL QUERY {id}").as_bytes())
                    .map_err(|e| Error::from_wire("KILL QUERY", &e))?;
                s.link.quit();
                Ok(())
            });
            let _ = tx.send(r);
        });
    if let Err(e) = spawned {
        return Err(Error::new(
            ErrorKind::Internal,
            format!("cannot start a thread to cancel the statement: {e}"),
        ));
    }
    match rx.recv_timeout(timeout) {
        Ok(r) => {
            attempt.finish();
            r.map_err(|e| {
                Error::with_source(
                    e.kind(),
                    format!("could not cancel the statement (KILL QUERY {id})"),
                    e,
                )
            })
        }
        Err(_) => {
            attempt.cancel();
            Err(Error::new(
                ErrorKind::Connect,
                format!(
                    "could not cancel the statement: no answer from {} within {} to KILL QUERY {id}",
                    connector.endpoint(),
                    fmt_duration(timeout)
                ),
            ))
        }
    }
}
