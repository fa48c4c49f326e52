//! The MySQL side of statement liveness (the pool's `liveness.rs` decides
//! when; this says how): is the server behind a waiting statement still
//! there, the same one, and still running that statement's connection?
//!
//! One check, for every suspect of the pool at once: a side connection (the
//! pool's credentials, none of its session settings), then
//! `SHOW GLOBAL STATUS LIKE 'Uptime'` and one `SELECT ID, COMMAND, TIME FROM
//! information_schema.PROCESSLIST WHERE ID IN (...)` (a user without the
//! PROCESS privilege sees its own connections, which is all it needs). The
//! whole check is bounded by the attempt's deadline (`connect_timeout` +
//! `validation_timeout`): the pool's watchdog shuts the side connection's
//! socket down when it passes, during the connect or the queries.
//!
//! Verdicts:
//! - no answer (the connect or a query gets no answer, or the connection is
//!   refused or reset): every suspect is cut off;
//! - the server has been up for less time than the suspect's connection has
//!   existed (`Uptime` + 1.5 s < its age: `Uptime` is whole seconds, and the
//!   age is measured from after the connect): it was restarted or replaced
//!   since, so the statement's connection is not on it (this holds whatever
//!   the two clocks say: both are durations);
//! - the connection id is not in the process list: killed, or a different
//!   server answers at this address;
//! - the connection id is there but idle (`Sleep` for a second or more): the
//!   server runs no statement for it, so no answer is coming (a server
//!   restarted within a second or two of the connect, whose `Uptime` cannot
//!   tell, reusing the id for another connection; or an answer lost on the
//!   way). A statement that is running is never `Sleep`, and an answer that
//!   is still arriving keeps a connection from being a suspect at all;
//! - otherwise alive: nothing is done.
//!
//! A server that answers with an error of its own (too many connections,
//! access denied since a password change, ...) is alive: nothing is cut.
//! What this cannot see: a different server, up longer than the connection,
//! that happens to run a connection of the same user with the same id.

use std::collections::HashMap;

use super::MysqlConnector;
use crate::duration::fmt_duration;
use crate::pool::{ConnectAttempt, Connector, Suspect};
use crate::sys;
use crate::wire::WireError;

/// Slack on `Uptime` (whole seconds) against a connection's age.
const UPTIME_SLACK_SECS: f64 = 1.5;

pub(crate) fn check(
    connector: &MysqlConnector,
    attempt: &ConnectAttempt,
    suspects: &[Suspect],
) -> Result<Vec<Option<String>>, String> {
    let side = connector.side_connector();
    let ep = connector.endpoint();
    let alive = || Ok(vec![None; suspects.len()]);
    let mut s = match side.connect(attempt) {
        Ok(s) => s,
        Err(e)
            if e.server_code().is_some()
                || e.cause().is_some_and(|c| c.server_code().is_some()) =>
        {
            log::info!(
                target: "staunch",
                "liveness check of {ep}: the server answered, but with an error, so it is taken as alive: {e}"
            );
            return alive();
        }
        Err(e) => {
            return Err(format!(
                "a check on a new connection to {ep} got no answer: {e}"
            ))
        }
    };
    // From here the watchdog cuts the side connection's socket at the
    // deadline. The dup keeps the socket (and its number) until the attempt
    // is dropped, so the shutdown can only reach this socket.
    if let Some(dup) = sys::DupFd::new(s.link.raw_fd()) {
        attempt.set_canceller(move || {
            sys::shutdown(dup.fd());
            Some("the server accepted the check's connection, then did not answer its query".into())
        });
    }
    let left = attempt.remaining();
    if left.is_zero() || sys::set_socket_timeouts(s.link.raw_fd(), Some(left)).is_err() {
        return Err(format!("a check of {ep} ran out of time after connecting"));
    }
    let no_answer = |q: &str, e: &WireError| -> Result<Vec<Option<String>>, String> {
        if let WireError::Server(me) = e {
            log::info!(
                target: "staunch",
                "liveness check of {ep}: {q} failed with a server error, so the server is taken as alive: {me}"
            );
            return Ok(vec![None; suspects.len()]);
        }
        Err(format!(
            "a check on a new connection to {ep} connected, then got no answer to {q}: {e}"
        ))
    };
    let uptime = match s.link.first_row(b"SHOW GLOBAL STATUS LIKE 'Uptime'") {
        Ok(v) => v,
        Err(e) => return no_answer("SHOW GLOBAL STATUS", &e),
    };
    let uptime = uptime
        .and_then(|r| r.get(1).cloned().flatten())
        .and_then(|v| String::from_utf8_lossy(&v).trim().parse::<u64>().ok());
    let ids: Vec<String> = suspects.iter().map(|x| x.key.to_string()).collect();
    let sql = format!(
        "SELECT ID, COMMAND, TIME FROM information_schema.PROCESSLIST WHERE ID IN ({})",
        ids.join(",")
    );
    let present: HashMap<u64, bool> = match s.link.rows(sql.as_bytes(), usize::MAX) {
        Ok(v) => v
            .into_iter()
            .filter_map(|r| {
                let text = |i: usize| -> Option<String> {
                    Some(String::from_utf8_lossy(r.get(i)?.as_deref()?).into_owned())
                };
                let id = text(0)?.parse::<u64>().ok()?;
                let command = text(1).unwrap_or_default();
                let secs = text(2).and_then(|t| t.parse::<i64>().ok()).unwrap_or(0);
                Some((id, command.eq_ignore_ascii_case("Sleep") && secs >= 1))
            })
            .collect(),
        Err(e) => return no_answer("the process list query", &e),
    };
    drop(s);
    Ok(suspects
        .iter()
        .map(|x| verdict(&ep, x, uptime, &present))
        .collect())
}

/// What the check saw of one suspect: None when its server still runs it.
/// `present` maps each suspect id the process list shows to whether it is
/// idle there (`Sleep` for a second or more).
fn verdict(
    ep: &str,
    x: &Suspect,
    uptime: Option<u64>,
    present: &HashMap<u64, bool>,
) -> Option<String> {
    if let Some(up) = uptime {
        if up as f64 + UPTIME_SLACK_SECS < x.age.as_secs_f64() {
            return Some(format!(
                "a check on a new connection found the server at {ep} restarted or replaced: \
                 it has been up {up}s, and this statement's connection (id {}) was made {} ago",
                x.key,
                fmt_duration(x.age)
            ));
        }
    }
    match present.get(&x.key) {
        None => Some(format!(
            "a check on a new connection found the server at {ep} answering, but connection id {} \
             no longer in its process list (killed, or another server answers at this address)",
            x.key
        )),
        Some(true) => Some(format!(
            "a check on a new connection found the server at {ep} answering, but connection id {} \
             idle there, running no statement: the server was restarted or replaced and reuses \
             the id, or the answer was lost",
            x.key
        )),
        Some(false) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn suspect(key: u64, age_s: u64) -> Suspect {
        Suspect {
            key,
            age: Duration::from_secs(age_s),
            waiting: Duration::from_secs(5),
        }
    }

    #[test]
    fn verdicts() {
        let present: HashMap<u64, bool> =
            [(7, false), (9, false), (11, true)].into_iter().collect();
        assert_eq!(verdict("h:1", &suspect(7, 60), Some(3600), &present), None);
        let gone = verdict("h:1", &suspect(8, 60), Some(3600), &present).unwrap();
        assert!(
            gone.contains("connection id 8 no longer in its process list"),
            "{gone}"
        );
        // Restarted: the same id runs on the new server, which is younger
        // than the connection.
        let restarted = verdict("h:1", &suspect(7, 60), Some(3), &present).unwrap();
        assert!(restarted.contains("restarted or replaced"), "{restarted}");
        // Whole seconds of Uptime: a connection made just after the start
        // is not mistaken for older than the server.
        assert_eq!(verdict("h:1", &suspect(9, 11), Some(10), &present), None);
        // No uptime read: the process list alone decides.
        assert_eq!(verdict("h:1", &suspect(9, 11), None, &present), None);
        // The id is there but idle: a server restarted too soon after the
        // connect for Uptime to tell, now running another connection under
        // that id (or the answer was lost).
        let idle = verdict("h:1", &suspect(11, 11), Some(10), &present).unwrap();
        assert!(idle.contains("idle there, running no statement"), "{idle}");
    }
}
