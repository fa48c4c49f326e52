//! The monitor's probes: what one look at a host asks (one round trip on a
//! connection the monitor keeps), how its answer is read into a [`Sample`],
//! and the bounded side checks. No decisions here: `rules.rs` decides,
//! `monitor.rs` schedules the probes and applies the rules.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::client::link::{Link, TextSet};
use crate::client::{PooledConn, Session};
use crate::wire::WireError;

use super::rules::{self, GaleraObs, Repl, Replica, Threads};
use crate::client::MysqlConnector;
use crate::duration::fmt_duration;
use crate::error::{Error, ErrorKind, Result};
use crate::pool::{ConnectAttempt, Connector};

/// Which server the probe talks to, from `SELECT @@version`: which
/// statements it may send, and what their answers are called.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flavour {
    /// MariaDB: `@@gtid_binlog_pos`/`@@gtid_current_pos`, `SHOW SLAVE
    /// STATUS` (needs `SLAVE MONITOR` or `SUPER`), the `Slave_running` /
    /// `Slaves_running` status variables any user may read, Galera's
    /// `wsrep_%` when built with it.
    MariaDb,
    /// MySQL before 8.0.22: `@@gtid_executed`, `SHOW SLAVE STATUS` (needs
    /// `REPLICATION CLIENT` or `SUPER`); no replication status variables.
    MySqlSlave,
    /// MySQL 8.0.22 and later (8.4 removed `SHOW SLAVE STATUS`): `SHOW
    /// REPLICA STATUS`, whose columns say `Replica_`/`Source_`.
    MySqlReplica,
}

/// The flavour from `@@version` (`10.11.6-MariaDB-0+deb12u1`, `8.0.36`,
/// `8.4.3`, `5.7.44-log`).
pub(crate) fn flavour(version: &str) -> Flavour {
    if version.contains("MariaDB") {
        return Flavour::MariaDb;
    }
    let mut it = version
        .split(|c: char| !c.is_ascii_digit())
        .map(|n| n.parse::<u32>().unwrap_or(0));
    let v = (
        it.next().unwrap_or(0),
        it.next().unwrap_or(0),
        it.next().unwrap_or(0),
    );
    if v >= (8, 0, 22) {
        Flavour::MySqlReplica
    } else {
        Flavour::MySqlSlave
    }
}

/// The probe's statements for a flavour, sent as one multi-statement
/// (one round trip), ordered so that no refusal hides a later statement:
/// the server runs nothing after a failed statement of a multi-statement,
/// so what any user may run comes first (the variables, `SHOW GLOBAL
/// STATUS`) and the one statement that needs a privilege comes last: its
/// refusal costs only its own answer. `wsrep_vars`: ask for `@@wsrep_on`
/// and Galera's variables (a MariaDB built with wsrep); `wsrep_status`:
/// and its `wsrep_%` status (unless the hosts are known to be a
/// replication topology); `threads`: and `Slave_running`/`Slaves_running`
/// (once `SHOW SLAVE STATUS` was refused on the connection). `SHOW GLOBAL
/// STATUS` walks every status variable to filter a few (1.8-2.4 ms of
/// server time with Galera's, against ~70 µs for the rest of the probe),
/// so a probe that needs none of them sends none.
pub(crate) fn statements(
    f: Flavour,
    wsrep_vars: bool,
    wsrep_status: bool,
    threads: bool,
) -> String {
    match f {
        Flavour::MariaDb => {
            let mut select = String::from(
                "SELECT @@global.read_only, @@global.server_id, \
                 @@global.gtid_binlog_pos, @@global.gtid_current_pos",
            );
            let mut status: Vec<&str> = Vec::new();
            if threads {
                status.extend(THREADS_STATUS);
            }
            if wsrep_vars {
                select.push_str(
                    ", @@global.wsrep_on, @@global.wsrep_desync, @@global.wsrep_reject_queries",
                );
                if wsrep_status {
                    status.extend([
                        "'wsrep_local_state'",
                        "'wsrep_cluster_status'",
                        "'wsrep_ready'",
                        "'wsrep_local_index'",
                        "'wsrep_local_recv_queue'",
                        "'wsrep_cluster_conf_id'",
                        "'wsrep_cluster_size'",
                    ]);
                }
            }
            if status.is_empty() {
                format!("{select}; {}", replica_statement(f))
            } else {
                format!(
                    "{select}; SHOW GLOBAL STATUS WHERE Variable_name IN ({}); {}",
                    status.join(", "),
                    replica_statement(f)
                )
            }
        }
        Flavour::MySqlSlave | Flavour::MySqlReplica => format!(
            "SELECT @@global.read_only, @@global.server_id, @@global.gtid_executed, \
             @@global.gtid_executed; {}",
            replica_statement(f)
        ),
    }
}

/// The status variables that stand in for a refused `SHOW SLAVE STATUS`.
const THREADS_STATUS: [&str; 2] = ["'Slave_running'", "'Slaves_running'"];

/// The statement that shows a host's replication, and the privilege it
/// needs (besides `SUPER`).
pub(crate) fn replica_statement(f: Flavour) -> &'static str {
    match f {
        Flavour::MariaDb | Flavour::MySqlSlave => "SHOW SLAVE STATUS",
        Flavour::MySqlReplica => "SHOW REPLICA STATUS",
    }
}

/// The privilege [`replica_statement`] needs.
pub(crate) fn replica_privilege(f: Flavour) -> &'static str {
    match f {
        Flavour::MariaDb => "SLAVE MONITOR",
        Flavour::MySqlSlave | Flavour::MySqlReplica => "REPLICATION CLIENT",
    }
}

/// Server errors that refuse a statement for lack of a privilege: 1227
/// (needs SUPER, SLAVE MONITOR, ...), 1142/1143 (table, column), 1044
/// (database), 1045 (access denied).
pub(crate) const REFUSED: &[u16] = &[1227, 1142, 1143, 1044, 1045];

/// A statement of the probe the server refused for lack of a privilege:
/// the probe went on without what it would have told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    /// The account refused, as `CURRENT_USER()` names it (`'app'@'%'`).
    pub(crate) user: String,
    pub(crate) statement: &'static str,
    pub(crate) privilege: &'static str,
    pub(crate) code: u16,
    pub(crate) flavour: Flavour,
    /// Whether something any user may read stood in (MariaDB's status
    /// variables).
    pub(crate) stand_in: bool,
}

impl Refusal {
    /// What the monitor does without the statement, for the event.
    pub(crate) fn costs(&self, galera: bool) -> &'static str {
        if galera {
            "a Galera node's state comes from SHOW GLOBAL STATUS, which any user may read, so \
             nothing is lost while the hosts are a Galera cluster (it matters under the \
             replication rules)"
        } else if self.stand_in {
            "without it the monitor sees only whether a host's replication threads run \
             (Slave_running, Slaves_running): promotions are still followed, but no replica \
             vouches for a primary the pool cannot reach (the secondary check runs without \
             them) and replication lag is unknown, so replicas get no reads while \
             max_replication_lag is set"
        } else {
            "without it the monitor cannot tell whether a host replicates: a promotion is \
             followed only once the primary is declared dead (failure_threshold), no replica \
             vouches for a primary the pool cannot reach, and replicas get no reads"
        }
    }

    /// The event that tells it.
    pub(crate) fn event(&self, endpoint: &str, galera: bool) -> crate::events::Event {
        crate::events::Event::MonitorPrivilegeMissing {
            endpoint: endpoint.to_owned(),
            user: self.user.clone(),
            statement: self.statement.to_owned(),
            privilege: self.privilege.to_owned(),
            costs: self.costs(galera).to_owned(),
        }
    }
}

/// `CURRENT_USER()`'s `app@%` as an account name, `'app'@'%'`.
fn account(current_user: &str) -> String {
    match current_user.rsplit_once('@') {
        Some((u, h)) => format!("'{u}'@'{h}'"),
        None => format!("'{current_user}'"),
    }
}

/// What the monitor's probe would be refused on the server `conn` is
/// connected to, as the events the monitor reports at its first look
/// (`staunch check` prints them). Bounded by the connection's own time
/// limits.
pub fn missing_privileges(
    conn: &mut PooledConn,
    endpoint: &str,
) -> Result<Vec<crate::events::Event>> {
    missing_on(&mut conn.session_mut().link, endpoint)
}

/// The first cell of `sql`'s first row as text ("" for none or NULL).
fn first_text(link: &mut Link, sql: &str) -> std::result::Result<Vec<String>, WireError> {
    Ok(link
        .first_row(sql.as_bytes())?
        .unwrap_or_default()
        .into_iter()
        .map(|c| {
            c.map(|v| String::from_utf8_lossy(&v).into_owned())
                .unwrap_or_default()
        })
        .collect())
}

fn missing_on(link: &mut Link, endpoint: &str) -> Result<Vec<crate::events::Event>> {
    let row = first_text(link, "SELECT @@version, CURRENT_USER()")
        .map_err(|e| Error::from_wire("SELECT @@version", &e))?;
    let version = row.first().cloned().unwrap_or_default();
    let user = row.get(1).cloned().unwrap_or_default();
    let f = flavour(&version);
    let statement = replica_statement(f);
    match link.run(statement.as_bytes()) {
        Err(WireError::Server(e)) if REFUSED.contains(&e.code) => {
            let stand_in = f == Flavour::MariaDb
                && link
                    .run(b"SHOW GLOBAL STATUS LIKE 'Slaves_running'")
                    .is_ok();
            let r = Refusal {
                user: account(&user),
                statement,
                privilege: replica_privilege(f),
                code: e.code,
                flavour: f,
                stand_in,
            };
            let galera = f == Flavour::MariaDb
                && first_text(link, "SELECT @@global.wsrep_on")
                    .ok()
                    .and_then(|r| r.first().cloned())
                    .as_deref()
                    == Some("1");
            Ok(vec![r.event(endpoint, galera)])
        }
        Err(e) => Err(Error::from_wire(statement, &e)),
        Ok(()) => Ok(Vec::new()),
    }
}

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
    /// Statements the server refused (no privilege).
    pub(super) refused: Vec<Refusal>,
}

impl Sample {
    /// No longer replicates ([`rules::replicates`] says No: no slave
    /// status row, both threads stopped, or, without the privilege, no SQL
    /// thread running and the default connection not connected).
    pub(super) fn detached(&self) -> bool {
        rules::detached(&self.replica)
    }
}

/// A monitor connection and the server's flavour.
pub(super) struct MonConn {
    pub(super) conn: Session,
    pub(super) flavour: Flavour,
    /// `CURRENT_USER()`, as an account name.
    pub(super) account: String,
    /// The server refused [`replica_statement`] on this connection: every
    /// probe reads the status variables that stand in for it.
    pub(super) refused_replica: bool,
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
        conn: connector.connect(a)?,
        flavour: Flavour::MariaDb,
        account: String::new(),
        refused_replica: false,
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
    if let Some(dup) = crate::sys::DupFd::new(mc.conn.link.raw_fd()) {
        a.set_canceller(move || {
            crate::sys::shutdown(dup.fd());
            Some("no answer to the probe".into())
        });
    }
    if fresh {
        let row = first_text(&mut mc.conn.link, "SELECT @@version, CURRENT_USER()")
            .map_err(|e| Error::from_wire("SELECT @@version", &e))?;
        mc.flavour = flavour(row.first().map_or("", String::as_str));
        mc.account = account(row.get(1).map_or("", String::as_str));
    }
    let sample = read_state(&mut mc, wsrep)?;
    if let (Some(table), false) = (heartbeat, sample.read_only) {
        let q =
            |c: &mut Link, sql: &str| c.run(sql.as_bytes()).map_err(|e| Error::from_wire(sql, &e));
        if fresh {
            q(
                &mut mc.conn.link,
                &format!(
                    "CREATE TABLE IF NOT EXISTS {table} (id INT PRIMARY KEY, ts DATETIME(6) NOT NULL)"
                ),
            )?;
        }
        q(
            &mut mc.conn.link,
            &format!(
                "INSERT INTO {table} (id, ts) VALUES (1, NOW(6)) ON DUPLICATE KEY UPDATE ts = VALUES(ts)"
            ),
        )?;
    }
    Ok((sample, mc))
}

/// `read_only`, `server_id`, GTID positions, the replication status any
/// user may read, (on MariaDB with Galera's variables) `@@wsrep_on` and,
/// unless the hosts are known to be a replication topology (`wsrep`), the
/// `wsrep_%` state, then `SHOW SLAVE STATUS`, in one round trip.
fn read_state(mc: &mut MonConn, wsrep: bool) -> Result<Sample> {
    if mc.flavour == Flavour::MariaDb && mc.wsrep_vars {
        let sql = statements(mc.flavour, true, wsrep, mc.refused_replica);
        match read_state_with(mc, &sql) {
            // 1193: unknown system variable (a build without wsrep).
            Err(e) if e.server_code() == Some(1193) => mc.wsrep_vars = false,
            r => return r,
        }
    }
    let sql = statements(mc.flavour, false, false, mc.refused_replica);
    read_state_with(mc, &sql)
}

fn read_state_with(mc: &mut MonConn, sql: &str) -> Result<Sample> {
    let flavour = mc.flavour;
    let mc_refused = mc.refused_replica;
    let mut first_refusal = false;
    let err = |e: &WireError| Error::from_wire("host state", e);
    let (sets, refused) = mc.conn.link.sets(sql.as_bytes()).map_err(|e| err(&e))?;
    // A server error other than a refusal fails the probe.
    let refused = match refused {
        Some(e) if REFUSED.contains(&e.code) => Some(e.code),
        Some(e) => return Err(err(&WireError::Server(e))),
        None => None,
    };
    let mut sets = sets.into_iter();
    let mut sample = Sample::default();
    // 1: the variables (no privilege needed).
    let vals: Vec<Option<String>> = match sets.next() {
        Some(TextSet { rows, .. }) => rows
            .into_iter()
            .next()
            .ok_or_else(|| Error::new(ErrorKind::Io, "host state: no row"))?
            .into_iter()
            .map(|c| c.map(|v| String::from_utf8_lossy(&v).into_owned()))
            .collect(),
        None => {
            return Err(match refused {
                Some(code) => Error::new(
                    ErrorKind::Io,
                    format!("host state: the server refused to show its variables (error {code})"),
                ),
                None => Error::new(ErrorKind::Io, "host state: no answer"),
            })
        }
    };
    let num = |v: Option<&Option<String>>| -> Result<i64> {
        match v {
            None | Some(None) => Ok(0),
            Some(Some(t)) => t.trim().parse::<i64>().map_err(|_| {
                Error::new(ErrorKind::Io, format!("host state: {t:?} is not a number"))
            }),
        }
    };
    let text = |v: Option<&Option<String>>| v.cloned().flatten().unwrap_or_default();
    sample.read_only = num(vals.first())? != 0;
    sample.server_id = num(vals.get(1))? as u64;
    sample.binlog_pos = text(vals.get(2));
    sample.current_pos = text(vals.get(3));
    let mut wsrep_vars: Option<(bool, String)> = None;
    if vals.len() >= 7 {
        sample.wsrep_on = num(vals.get(4))? != 0;
        wsrep_vars = Some((num(vals.get(5))? != 0, text(vals.get(6))));
    }
    // 2 (MariaDB, if asked): the status variables (no privilege needed).
    let mut status = BTreeMap::new();
    if sql.contains("SHOW GLOBAL STATUS") {
        if let Some(set) = sets.next() {
            status = name_values(&set.rows);
        }
    }
    // Last: the one statement that needs a privilege.
    let statement = replica_statement(flavour);
    sample.replica = match (sets.next(), refused) {
        (Some(set), _) => match set.rows.first() {
            None => Repl::None,
            Some(row) => Repl::Some(replica_of(&columns_of(&set.names, row))),
        },
        // Nothing after a refused status statement (never seen): unknown.
        (None, None) => Repl::Unknown,
        (None, Some(code)) => {
            if !mc_refused && flavour == Flavour::MariaDb {
                // The first refusal on this connection: the stand-in was
                // not asked for; it is read below, then with every probe.
                first_refusal = true;
            }
            let threads = threads_of(&status);
            sample.refused.push(Refusal {
                user: mc.account.clone(),
                statement,
                privilege: replica_privilege(flavour),
                code,
                flavour,
                stand_in: threads.is_some(),
            });
            threads.map_or(Repl::Unknown, Repl::Threads)
        }
    };
    if let Some((desync, reject)) = wsrep_vars {
        if sample.wsrep_on && status.contains_key("wsrep_cluster_status") {
            sample.galera = Some(galera_obs(&status, desync, &reject));
        }
    }
    if first_refusal {
        mc.refused_replica = true;
        let q = format!(
            "SHOW GLOBAL STATUS WHERE Variable_name IN ({})",
            THREADS_STATUS.join(", ")
        );
        let rows = mc
            .conn
            .link
            .rows(q.as_bytes(), usize::MAX)
            .map_err(|e| err(&e))?;
        if let Some(t) = threads_of(&name_values(&rows)) {
            sample.replica = Repl::Threads(t);
            for r in &mut sample.refused {
                r.stand_in = true;
            }
        }
    }
    Ok(sample)
}

/// `SHOW ... STATUS` rows (name, value) as lowercase name -> value.
fn name_values(rows: &[Vec<Option<Vec<u8>>>]) -> BTreeMap<String, String> {
    rows.iter()
        .filter_map(|r| {
            let k = String::from_utf8_lossy(r.first()?.as_deref()?).to_ascii_lowercase();
            let v = r
                .get(1)
                .and_then(|v| v.as_deref())
                .map(|v| String::from_utf8_lossy(v).into_owned())
                .unwrap_or_default();
            Some((k, v))
        })
        .collect()
}

/// MariaDB's `Slave_running`/`Slaves_running`, readable by any user: what
/// stands in for a refused `SHOW SLAVE STATUS` (`None` if absent: MySQL).
fn threads_of(status: &BTreeMap<String, String>) -> Option<Threads> {
    let running = status.get("slave_running")?;
    Some(Threads {
        connected: running.eq_ignore_ascii_case("ON"),
        sql_running: status
            .get("slaves_running")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0),
    })
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

/// A row as column name -> text (NULL as empty).
fn columns_of(names: &[String], row: &[Option<Vec<u8>>]) -> BTreeMap<String, String> {
    names
        .iter()
        .zip(row)
        .map(|(k, v)| {
            let v = v
                .as_deref()
                .map(|v| String::from_utf8_lossy(v).into_owned())
                .unwrap_or_default();
            (k.clone(), v)
        })
        .collect()
}

/// A `SHOW SLAVE STATUS` row (MariaDB, MySQL before 8.0.22) or a `SHOW
/// REPLICA STATUS` row (MySQL 8.0.22+: `Replica_`/`Source_` columns) as
/// the rules see it.
fn replica_of(m: &BTreeMap<String, String>) -> Replica {
    let get = |names: &[&str]| {
        names
            .iter()
            .find_map(|n| m.get(*n))
            .cloned()
            .unwrap_or_default()
    };
    Replica {
        io: get(&["Slave_IO_Running", "Replica_IO_Running"]),
        sql: get(&["Slave_SQL_Running", "Replica_SQL_Running"]) == "Yes",
        master_id: get(&["Master_Server_Id", "Source_Server_Id"]).parse().ok(),
        behind: get(&["Seconds_Behind_Master", "Seconds_Behind_Source"])
            .parse()
            .ok(),
        received: format!(
            "{}:{}:{}{}",
            get(&["Master_Log_File", "Source_Log_File"]),
            get(&["Read_Master_Log_Pos", "Read_Source_Log_Pos"]),
            get(&["Gtid_IO_Pos"]),
            get(&["Retrieved_Gtid_Set"])
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

#[cfg(test)]
mod tests {
    //! The readers fed answers shaped as the servers give them. No MySQL
    //! server can be installed on the machines these tests run on (only
    //! MariaDB 10.11 is packaged here), so the MySQL rows are those of
    //! MySQL's reference manual (`SHOW REPLICA STATUS` in 8.0/8.4, `SHOW
    //! SLAVE STATUS` in 5.7); the MariaDB ones were read from 10.11.
    use super::*;

    #[test]
    fn flavour_from_version() {
        let table = [
            ("10.11.6-MariaDB-0+deb12u1-log", Flavour::MariaDb),
            ("5.5.5-10.11.6-MariaDB", Flavour::MariaDb),
            ("5.7.44-log", Flavour::MySqlSlave),
            ("8.0.21", Flavour::MySqlSlave),
            ("8.0.22", Flavour::MySqlReplica),
            ("8.0.36-0ubuntu0.22.04.1", Flavour::MySqlReplica),
            ("8.4.3", Flavour::MySqlReplica),
            ("9.1.0-commercial", Flavour::MySqlReplica),
            ("", Flavour::MySqlSlave),
        ];
        for (v, want) in table {
            assert_eq!(flavour(v), want, "{v}");
        }
    }

    /// What needs no privilege first, the one statement that does last, so
    /// that its refusal (which stops a multi-statement) hides nothing; and
    /// no MariaDB-only variable or removed statement sent to MySQL.
    #[test]
    fn refusable_statement_last() {
        for f in [Flavour::MariaDb, Flavour::MySqlSlave, Flavour::MySqlReplica] {
            for (vars, status, threads) in [
                (false, false, false),
                (false, false, true),
                (true, false, false),
                (true, false, true),
                (true, true, false),
                (true, true, true),
            ] {
                let sql = statements(f, vars, status, threads);
                let parts: Vec<&str> = sql.split("; ").collect();
                assert_eq!(parts.last(), Some(&replica_statement(f)), "{sql}");
                assert!(parts[0].starts_with("SELECT @@global.read_only"), "{sql}");
                assert_eq!(
                    sql.matches("SHOW SLAVE STATUS").count()
                        + sql.matches("SHOW REPLICA STATUS").count(),
                    1
                );
                if f == Flavour::MariaDb {
                    assert_eq!(sql.contains("'Slaves_running'"), threads, "{sql}");
                    assert_eq!(
                        sql.contains("wsrep_cluster_status"),
                        vars && status,
                        "{sql}"
                    );
                    assert_eq!(parts[0].contains("wsrep_on"), vars, "{sql}");
                    // SHOW GLOBAL STATUS only when something is read from it.
                    let asked = threads || (vars && status);
                    assert_eq!(parts.len(), if asked { 3 } else { 2 }, "{sql}");
                } else {
                    assert!(
                        !sql.contains("gtid_binlog_pos") && !sql.contains("wsrep"),
                        "{sql}"
                    );
                    assert!(sql.contains("@@global.gtid_executed"), "{sql}");
                }
            }
        }
        assert_eq!(
            replica_statement(Flavour::MySqlReplica),
            "SHOW REPLICA STATUS"
        );
        assert_eq!(replica_privilege(Flavour::MariaDb), "SLAVE MONITOR");
        assert_eq!(
            replica_privilege(Flavour::MySqlReplica),
            "REPLICATION CLIENT"
        );
    }

    fn row(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn replica_rows_of_each_flavour() {
        // MySQL 8.0/8.4 reference manual, SHOW REPLICA STATUS (abridged).
        let mysql8 = row(&[
            ("Replica_IO_State", "Waiting for source to send event"),
            ("Source_Host", "127.0.0.1"),
            ("Source_Port", "13000"),
            ("Source_Log_File", "source-bin.000001"),
            ("Read_Source_Log_Pos", "927"),
            ("Replica_IO_Running", "Yes"),
            ("Replica_SQL_Running", "Yes"),
            ("Seconds_Behind_Source", "0"),
            ("Source_Server_Id", "1"),
            (
                "Retrieved_Gtid_Set",
                "73f86016-978b-11ee-ade5-8d2a2a562feb:1-3",
            ),
            (
                "Executed_Gtid_Set",
                "73f86016-978b-11ee-ade5-8d2a2a562feb:1-3",
            ),
        ]);
        let r = replica_of(&mysql8);
        assert_eq!(r.io, "Yes");
        assert!(r.sql && r.fully_running());
        assert_eq!((r.master_id, r.behind), (Some(1), Some(0)));
        assert_eq!(
            r.received,
            "source-bin.000001:927:73f86016-978b-11ee-ade5-8d2a2a562feb:1-3"
        );
        // MySQL 5.7 reference manual, SHOW SLAVE STATUS, the SQL thread
        // stopped (Seconds_Behind_Master NULL, read as empty).
        let mysql57 = row(&[
            ("Master_Log_File", "mysql-bin.000002"),
            ("Read_Master_Log_Pos", "1307"),
            ("Slave_IO_Running", "Yes"),
            ("Slave_SQL_Running", "No"),
            ("Seconds_Behind_Master", ""),
            ("Master_Server_Id", "1"),
            (
                "Retrieved_Gtid_Set",
                "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5",
            ),
        ]);
        let r = replica_of(&mysql57);
        assert!(r.replicating() && !r.sql);
        assert_eq!((r.master_id, r.behind), (Some(1), None));
        // MariaDB 10.11, the I/O thread reconnecting to a killed source.
        let mariadb = row(&[
            ("Master_Log_File", "mb.000001"),
            ("Read_Master_Log_Pos", "1234"),
            ("Slave_IO_Running", "Connecting"),
            ("Slave_SQL_Running", "Yes"),
            ("Seconds_Behind_Master", ""),
            ("Master_Server_Id", "1"),
            ("Gtid_IO_Pos", "0-1-7"),
        ]);
        let r = replica_of(&mariadb);
        assert!(r.replicating() && !r.fully_running());
        assert_eq!(r.received, "mb.000001:1234:0-1-7");
    }

    /// The event names the account, the statement, the privilege, what
    /// the monitor loses (by flavour and rule set) and the two ways out.
    #[test]
    fn refusal_told_by_name() {
        let refusal = |f: Flavour, stand_in: bool| Refusal {
            user: account("app@%"),
            statement: replica_statement(f),
            privilege: replica_privilege(f),
            code: 1227,
            flavour: f,
            stand_in,
        };
        let text = |r: &Refusal, galera: bool| r.event("db1:3306", galera).to_string();
        let mariadb = text(&refusal(Flavour::MariaDb, true), false);
        assert!(
            mariadb.starts_with(
                "the monitor's user 'app'@'%' may not run SHOW SLAVE STATUS on db1:3306 \
                 (it needs SLAVE MONITOR): without it the monitor sees only"
            ),
            "{mariadb}"
        );
        assert!(
            mariadb.ends_with(
                "Either GRANT SLAVE MONITOR ON *.* TO 'app'@'%', or give the monitor a user \
                 that has it: monitor_user=...&monitor_password=... in the URL"
            ),
            "{mariadb}"
        );
        let galera = text(&refusal(Flavour::MariaDb, true), true);
        assert!(galera.contains("nothing is lost"), "{galera}");
        let mysql = text(&refusal(Flavour::MySqlReplica, false), false);
        assert!(
            mysql.contains("may not run SHOW REPLICA STATUS")
                && mysql.contains("(it needs REPLICATION CLIENT)")
                && mysql.contains("cannot tell whether a host replicates")
                && mysql.contains("GRANT REPLICATION CLIENT ON *.* TO 'app'@'%'"),
            "{mysql}"
        );
        assert_eq!(account("least@127.0.0.1"), "'least'@'127.0.0.1'");
    }

    #[test]
    fn status_variables_stand_in() {
        let st = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(k, v)| (k.to_ascii_lowercase(), v.to_string()))
                .collect::<BTreeMap<_, _>>()
        };
        let th = |connected, sql_running| {
            Some(Threads {
                connected,
                sql_running,
            })
        };
        assert_eq!(
            threads_of(&st(&[("Slave_running", "ON"), ("Slaves_running", "1")])),
            th(true, 1)
        );
        assert_eq!(
            threads_of(&st(&[("Slave_running", "OFF"), ("Slaves_running", "0")])),
            th(false, 0)
        );
        // MySQL has neither: nothing stands in.
        assert_eq!(threads_of(&st(&[])), None);
    }
}
