//! The monitor's probes: what one look at a host asks (one round trip on a
//! connection the monitor keeps), how its answer is read into a [`Sample`],
//! and the bounded side checks. No decisions here: `rules.rs` decides,
//! `monitor.rs` schedules the probes and applies the rules.

use std::collections::BTreeMap;
use std::os::fd::AsRawFd;
use std::time::Duration;

use mysql::prelude::Queryable;
use mysql::Conn;

use super::rules::{self, GaleraObs, Repl, Replica};
use crate::client::MysqlConnector;
use crate::duration::fmt_duration;
use crate::error::{Error, ErrorKind, Result};
use crate::pool::{ConnectAttempt, Connector};

const MARIADB_STATE: &str = "SELECT @@global.read_only, @@global.server_id, \
     @@global.gtid_binlog_pos, @@global.gtid_current_pos; SHOW SLAVE STATUS";
/// The same, and Galera's state: answered even by a node outside the
/// Primary component (which refuses other statements with 1047).
const MARIADB_WSREP_STATE: &str = "SELECT @@global.read_only, @@global.server_id, \
     @@global.gtid_binlog_pos, @@global.gtid_current_pos, @@global.wsrep_on, \
     @@global.wsrep_desync, @@global.wsrep_reject_queries; SHOW SLAVE STATUS; \
     SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_local_state', \
     'wsrep_cluster_status', 'wsrep_ready', 'wsrep_local_index', 'wsrep_local_recv_queue', \
     'wsrep_cluster_conf_id', 'wsrep_cluster_size')";
const MYSQL_STATE: &str =
    "SELECT @@global.read_only, @@global.server_id, '', ''; SHOW SLAVE STATUS";

/// What one probe of a host found.
#[derive(Debug, Default, Clone)]
pub(super) struct Sample {
    pub(super) read_only: bool,
    pub(super) server_id: u64,
    /// `@@gtid_binlog_pos` (MariaDB; empty otherwise).
    pub(super) binlog_pos: String,
    /// `@@gtid_current_pos` (MariaDB; empty otherwise).
    pub(super) current_pos: String,
    pub(super) replica: Repl,
    /// `@@wsrep_on` (MariaDB with Galera's variables; false otherwise).
    pub(super) wsrep_on: bool,
    /// The `wsrep_%` state when `wsrep_on`.
    pub(super) galera: Option<GaleraObs>,
}

impl Sample {
    /// No slave status row, or both threads stopped.
    pub(super) fn detached(&self) -> bool {
        rules::detached(&self.replica)
    }
}

/// A monitor connection and the server's flavour.
pub(super) struct MonConn {
    pub(super) conn: Conn,
    pub(super) mariadb: bool,
    /// The server knows Galera's variables (MariaDB built with wsrep).
    pub(super) wsrep_vars: bool,
}

/// One probe, on the probe thread: on the kept connection if there is one,
/// else on a new one; lets the monitor cut the socket at the deadline, reads
/// the host's state and, for the writer with `ping_type=insert`, upserts the
/// heartbeat. An error on a kept connection (killed, closed by the server's
/// `wait_timeout`, reset) is no verdict on the server: a new connection
/// decides, within the same deadline (a probe cut off at the deadline is not
/// retried).
pub(super) fn probe(
    connector: &MysqlConnector,
    kept: Option<MonConn>,
    heartbeat: Option<&str>,
    wsrep: bool,
    a: &ConnectAttempt,
) -> Result<(Sample, MonConn)> {
    if let Some(mc) = kept {
        match probe_on(mc, false, heartbeat, wsrep, a) {
            Err(e) if a.cancelled().is_none() => {
                log::debug!(target: "staunch", "monitor connection to {} broke ({e}); reconnecting", connector.endpoint());
            }
            r => return r,
        }
    }
    let mc = MonConn {
        conn: connector.connect(a)?.into_conn(),
        mariadb: true,
        wsrep_vars: true,
    };
    probe_on(mc, true, heartbeat, wsrep, a)
}

fn probe_on(
    mut mc: MonConn,
    fresh: bool,
    heartbeat: Option<&str>,
    wsrep: bool,
    a: &ConnectAttempt,
) -> Result<(Sample, MonConn)> {
    if let Some(dup) = crate::sys::DupFd::new(mc.conn.as_raw_fd()) {
        a.set_canceller(move || {
            crate::sys::shutdown(dup.fd());
            Some("no answer to the probe".into())
        });
    }
    if fresh {
        let v: Option<String> = mc
            .conn
            .query_first("SELECT @@version")
            .map_err(|e| Error::from_mysql("SELECT @@version", &e))?;
        mc.mariadb = v.is_some_and(|v| v.contains("MariaDB"));
    }
    let sample = read_state(&mut mc, wsrep)?;
    if let (Some(table), false) = (heartbeat, sample.read_only) {
        let q = |c: &mut Conn, sql: &str| c.query_drop(sql).map_err(|e| Error::from_mysql(sql, &e));
        if fresh {
            q(
                &mut mc.conn,
                &format!(
                    "CREATE TABLE IF NOT EXISTS {table} (id INT PRIMARY KEY, ts DATETIME(6) NOT NULL)"
                ),
            )?;
        }
        q(
            &mut mc.conn,
            &format!(
                "INSERT INTO {table} (id, ts) VALUES (1, NOW(6)) ON DUPLICATE KEY UPDATE ts = VALUES(ts)"
            ),
        )?;
    }
    Ok((sample, mc))
}

/// `read_only`, `server_id`, GTID positions, `SHOW SLAVE STATUS` and (on
/// MariaDB with Galera's variables, unless the hosts are known to be a
/// replication topology: `wsrep`) the `wsrep_%` state, in one round trip.
fn read_state(mc: &mut MonConn, wsrep: bool) -> Result<Sample> {
    if mc.mariadb && mc.wsrep_vars && wsrep {
        match read_state_with(mc, MARIADB_WSREP_STATE) {
            // 1193: unknown system variable (a build without wsrep).
            Err(e) if e.server_code() == Some(1193) => mc.wsrep_vars = false,
            r => return r,
        }
    }
    let sql = if mc.mariadb {
        MARIADB_STATE
    } else {
        MYSQL_STATE
    };
    read_state_with(mc, sql)
}

fn read_state_with(mc: &mut MonConn, sql: &str) -> Result<Sample> {
    let err = |e: &mysql::Error| Error::from_mysql("host state", e);
    let mut r = mc.conn.query_iter(sql).map_err(|e| err(&e))?;
    let mut sample = Sample::default();
    let mut wsrep_vars: Option<(bool, String)> = None;
    {
        let mut set = r
            .iter()
            .ok_or_else(|| Error::new(ErrorKind::Io, "host state: no answer"))?;
        let row = set
            .next()
            .ok_or_else(|| Error::new(ErrorKind::Io, "host state: no row"))?
            .map_err(|e| err(&e))?;
        let bad =
            |e: mysql::FromValueError| Error::new(ErrorKind::Io, format!("host state: {e:?}"));
        let text = |v: mysql::Value| -> String {
            match v {
                mysql::Value::Bytes(b) => String::from_utf8_lossy(&b).into_owned(),
                mysql::Value::NULL => String::new(),
                other => other.as_sql(true).trim_matches('\'').to_owned(),
            }
        };
        let vals = row.unwrap();
        let num = |v: &mysql::Value| -> Result<i64> {
            mysql::from_value_opt::<i64>(v.clone()).map_err(bad)
        };
        sample.read_only = num(vals.first().unwrap_or(&mysql::Value::NULL))? != 0;
        sample.server_id = num(vals.get(1).unwrap_or(&mysql::Value::NULL))? as u64;
        sample.binlog_pos = vals.get(2).cloned().map(text).unwrap_or_default();
        sample.current_pos = vals.get(3).cloned().map(text).unwrap_or_default();
        if vals.len() >= 7 {
            sample.wsrep_on = num(&vals[4])? != 0;
            wsrep_vars = Some((num(&vals[5])? != 0, text(vals[6].clone())));
        }
        for row in set {
            row.map_err(|e| err(&e))?;
        }
    }
    sample.replica = match r.iter() {
        None => Repl::Unknown,
        Some(set) => {
            let mut first = None;
            let mut failed = None;
            for row in set {
                match row {
                    Ok(row) if first.is_none() => first = Some(row),
                    Ok(_) => {}
                    Err(e) => failed = Some(e),
                }
            }
            match (failed, first) {
                // The server refused SHOW SLAVE STATUS: it answered.
                (Some(mysql::Error::MySqlError(_)), _) => Repl::Unknown,
                (Some(e), _) => return Err(err(&e)),
                (None, None) => Repl::None,
                (None, Some(row)) => Repl::Some(replica_of(row)),
            }
        }
    };
    if let Some((desync, reject)) = wsrep_vars {
        let mut status = BTreeMap::new();
        if let Some(set) = r.iter() {
            for row in set {
                let row = row.map_err(|e| err(&e))?;
                let (k, v): (String, String) = mysql::from_row_opt(row)
                    .map_err(|e| Error::new(ErrorKind::Io, format!("host state: {e}")))?;
                status.insert(k.to_ascii_lowercase(), v);
            }
        }
        if sample.wsrep_on {
            sample.galera = Some(galera_obs(&status, desync, &reject));
        }
    }
    drop(r);
    Ok(sample)
}

/// The `wsrep_%` status rows and variables as the rules see them.
fn galera_obs(status: &BTreeMap<String, String>, desync: bool, reject: &str) -> GaleraObs {
    let get = |k: &str| status.get(k).map(String::as_str).unwrap_or("");
    GaleraObs {
        local_state: get("wsrep_local_state").parse().unwrap_or(0),
        primary: get("wsrep_cluster_status").eq_ignore_ascii_case("Primary"),
        ready: get("wsrep_ready").eq_ignore_ascii_case("ON"),
        desync,
        rejects: !reject.is_empty() && !reject.eq_ignore_ascii_case("NONE"),
        local_index: get("wsrep_local_index").parse().unwrap_or(u32::MAX),
        recv_queue: get("wsrep_local_recv_queue").parse().unwrap_or(u64::MAX),
        conf_id: get("wsrep_cluster_conf_id").parse().unwrap_or(0),
        size: get("wsrep_cluster_size").parse().unwrap_or(0),
    }
}

fn replica_of(row: mysql::Row) -> Replica {
    let cols: Vec<String> = row
        .columns_ref()
        .iter()
        .map(|c| c.name_str().into_owned())
        .collect();
    let vals = row.unwrap();
    let m: BTreeMap<String, String> = cols
        .into_iter()
        .zip(vals)
        .map(|(k, v)| {
            let v = match v {
                mysql::Value::NULL => String::new(),
                mysql::Value::Bytes(b) => String::from_utf8_lossy(&b).into_owned(),
                other => other.as_sql(true),
            };
            (k, v)
        })
        .collect();
    let get = |k: &str| m.get(k).cloned().unwrap_or_default();
    Replica {
        io: get("Slave_IO_Running"),
        sql: get("Slave_SQL_Running") == "Yes",
        master_id: get("Master_Server_Id").parse().ok(),
        behind: get("Seconds_Behind_Master").parse().ok(),
        received: format!(
            "{}:{}:{}{}",
            get("Master_Log_File"),
            get("Read_Master_Log_Pos"),
            get("Gtid_IO_Pos"),
            get("Retrieved_Gtid_Set")
        ),
    }
}

/// Runs `f` on its own thread and gives up at `timeout` (the thread ends
/// when `f` returns).
pub(super) fn bounded<T: Send + 'static>(
    timeout: Duration,
    what: &str,
    f: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    let (tx, rx) = crossbeam_channel::bounded(1);
    let spawned = std::thread::Builder::new()
        .name("staunch-check".into())
        .spawn(move || {
            let _ = tx.send(f());
        });
    if let Err(e) = spawned {
        return Err(Error::new(
            ErrorKind::Internal,
            format!("cannot start a thread for {what}: {e}"),
        ));
    }
    rx.recv_timeout(timeout).unwrap_or_else(|_| {
        Err(Error::new(
            ErrorKind::Io,
            format!("{what} gave no answer within {}", fmt_duration(timeout)),
        ))
    })
}
