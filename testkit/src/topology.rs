//! A primary and N replicas: the replication topology the library's tests,
//! the `staunch drill` and the `staunch-testkit topology` command line share.
//!
//! The primary has `server_id` 1 and a binary log; replica `i` (0-based) has
//! `server_id` `2 + i`, starts with `--read-only=1` and replicates from the
//! primary (`MariaDb::make_replica_of`, GTID `slave_pos`). All servers start
//! in parallel. The servers stop (and their directories go) when the
//! `Topology` is dropped.
//!
//! Indexes: [`Topology::server`] counts every server (0 is the primary, 1..=N
//! the replicas, the order of [`Topology::hosts`] and of the command line's
//! `N`); [`Topology::replica`] and [`Topology::promote`] count replicas only.

use std::thread;
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;

use crate::mariadb::{APP_PASS, APP_USER, DB_NAME};
use crate::{MariaDb, ServerCert, ServerOpts};

/// Bound on a promoted replica's SQL thread applying what it had received.
const CATCH_UP_TIMEOUT: Duration = Duration::from_secs(20);

/// Options for [`Topology::start`].
#[derive(Clone, Debug)]
pub struct TopologyOpts {
    /// Number of replicas (default 2).
    pub replicas: usize,
    /// Extra `mariadbd` arguments for every server.
    pub args: Vec<String>,
    /// Extra `mariadbd` arguments for the replicas only, after `args` and after
    /// the `--read-only=1` every replica gets. Empty by default: the replicas
    /// run with MariaDB's own defaults (e.g. `slave_net_timeout` 60 s).
    pub replica_args: Vec<String>,
    /// TLS on every server (see [`ServerOpts::tls`]).
    pub tls: Option<ServerCert>,
    /// Whether the `app` user keeps READ_ONLY ADMIN (part of its `ALL`
    /// privileges in 10.11), i.e. may write on a `read_only=1` replica.
    /// `false` (the default): revoked on the primary before replication
    /// starts (the replicas replay the REVOKE), so `read_only` means what it
    /// says for the application. `true`: the template's grants unchanged.
    pub app_read_only_admin: bool,
}

impl Default for TopologyOpts {
    fn default() -> Self {
        TopologyOpts {
            replicas: 2,
            args: Vec::new(),
            replica_args: Vec::new(),
            tls: None,
            app_read_only_admin: false,
        }
    }
}

/// A running primary and its replicas; see the module docs.
pub struct Topology {
    primary: MariaDb,
    replicas: Vec<MariaDb>,
    app_read_only_admin: bool,
}

impl Topology {
    /// Start the primary and the replicas (in parallel) and make the
    /// replicas replicate. Panics (with the failing server's error-log tail)
    /// if a server does not come up or replication does not start; the
    /// servers already started are stopped first.
    pub fn start(opts: TopologyOpts) -> Topology {
        let t = Self::start_unreplicated(opts);
        t.replicate();
        t
    }

    /// The first half of [`Topology::start`]: every server started (in
    /// parallel), no replication yet; then call [`Topology::replicate`].
    /// For callers that check something (e.g. an interrupt) in between.
    pub fn start_unreplicated(opts: TopologyOpts) -> Topology {
        let server = |replication: u32, args: Vec<String>| ServerOpts {
            args,
            replication: Some(replication),
            tls: opts.tls,
        };
        let primary_opts = server(1, opts.args.clone());
        let replica_opts: Vec<ServerOpts> = (0..opts.replicas)
            .map(|i| {
                let mut args = opts.args.clone();
                args.push("--read-only=1".into());
                args.extend(opts.replica_args.iter().cloned());
                server(2 + i as u32, args)
            })
            .collect();
        let (p, rs) = thread::scope(|s| {
            let p = s.spawn(|| MariaDb::start_with(primary_opts));
            let rs: Vec<_> = replica_opts
                .into_iter()
                .map(|o| s.spawn(move || MariaDb::start_with(o)))
                .collect();
            let p = p.join();
            let rs: Vec<_> = rs.into_iter().map(|h| h.join()).collect();
            (p, rs)
        });
        // The primary's failure first, then the first replica's; the servers
        // that did start are dropped (stopped) on the way out.
        let p = p.unwrap_or_else(|e| std::panic::resume_unwind(e));
        let mut replicas = Vec::with_capacity(rs.len());
        for r in rs {
            replicas.push(r.unwrap_or_else(|e| std::panic::resume_unwind(e)));
        }
        Topology {
            primary: p,
            replicas,
            app_read_only_admin: opts.app_read_only_admin,
        }
    }

    /// The second half of [`Topology::start`]: (unless
    /// `app_read_only_admin`) revoke READ_ONLY ADMIN from `app` on the
    /// primary, then `make_replica_of` the primary on every replica, in
    /// parallel; with the REVOKE, also wait until every replica applied it.
    pub fn replicate(&self) {
        if !self.app_read_only_admin {
            let accounts: Vec<String> = ["%", "localhost", "127.0.0.1"]
                .iter()
                .map(|h| format!("'{APP_USER}'@'{h}'"))
                .collect();
            self.primary.sql(&format!(
                "REVOKE READ_ONLY ADMIN ON *.* FROM {}",
                accounts.join(", ")
            ));
        }
        thread::scope(|s| {
            let hs: Vec<_> = self
                .replicas
                .iter()
                .map(|r| s.spawn(|| r.make_replica_of(&self.primary)))
                .collect();
            for h in hs {
                if let Err(p) = h.join() {
                    std::panic::resume_unwind(p);
                }
            }
        });
        if !self.app_read_only_admin {
            self.catch_up();
        }
    }

    /// Wait (bounded) until every replica applied the primary's binary log
    /// so far (`MariaDb::catch_up_with`).
    pub fn catch_up(&self) {
        for r in &self.replicas {
            r.catch_up_with(&self.primary);
        }
    }

    pub fn primary(&self) -> &MariaDb {
        &self.primary
    }

    pub fn primary_mut(&mut self) -> &mut MariaDb {
        &mut self.primary
    }

    pub fn replicas(&self) -> &[MariaDb] {
        &self.replicas
    }

    /// Replica `i` (0-based among the replicas; server `i + 1`).
    pub fn replica(&self, i: usize) -> &MariaDb {
        &self.replicas[i]
    }

    pub fn replica_mut(&mut self, i: usize) -> &mut MariaDb {
        &mut self.replicas[i]
    }

    /// Number of servers (primary included).
    pub fn len(&self) -> usize {
        1 + self.replicas.len()
    }

    /// Always false: there is always a primary.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Server `n`: 0 is the primary, `1..=N` the replicas.
    pub fn server(&self, n: usize) -> Option<&MariaDb> {
        match n {
            0 => Some(&self.primary),
            _ => self.replicas.get(n - 1),
        }
    }

    pub fn server_mut(&mut self, n: usize) -> Option<&mut MariaDb> {
        match n {
            0 => Some(&mut self.primary),
            _ => self.replicas.get_mut(n - 1),
        }
    }

    /// Every server, the primary first.
    pub fn servers(&self) -> impl Iterator<Item = &MariaDb> {
        std::iter::once(&self.primary).chain(&self.replicas)
    }

    /// `127.0.0.1:P0,127.0.0.1:P1,...`, the primary first.
    pub fn hosts(&self) -> String {
        self.servers()
            .map(|s| s.addr().to_string())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The multi-host URL of the `app` user over every server, the primary
    /// first: `mysql://app:app-secret@127.0.0.1:P0,.../staunch_test?topology=replication`,
    /// then `&params` if `params` is not empty (e.g. `"ping_interval=200ms"`).
    pub fn url(&self, params: &str) -> String {
        self.url_as(APP_USER, APP_PASS, params)
    }

    /// [`Topology::url`] for another user, e.g. the least-privilege
    /// `least`/`least-secret` (`ALL ON staunch_test.*` only).
    pub fn url_as(&self, user: &str, password: &str, params: &str) -> String {
        let mut u = format!(
            "mysql://{user}:{password}@{}/{DB_NAME}?topology=replication",
            self.hosts()
        );
        let params = params.trim_start_matches(['?', '&']);
        if !params.is_empty() {
            u.push('&');
            u.push_str(params);
        }
        u
    }

    /// Promote replica `i` (0-based among the replicas) as an operator
    /// would; see [`promote`]. The other replicas keep following the old
    /// primary.
    pub fn promote(&self, i: usize) {
        promote(&self.replicas[i]);
    }

    /// A planned switchover to replica `i`, as an operator does it: the
    /// primary turns `read_only=1` (the application's writes there fail from
    /// now on), replica `i` applies everything the primary committed, then is
    /// promoted ([`promote`]). Returns the instant replica `i` turned
    /// writable. Nothing is re-pointed (see [`MariaDb::repoint_to`]).
    pub fn switchover(&self, i: usize) -> Instant {
        self.primary.set_global("read_only", "1");
        self.replicas[i].catch_up_with(&self.primary);
        promote(&self.replicas[i]);
        Instant::now()
    }

    /// The servers themselves: `(primary, replicas)`.
    pub fn into_parts(self) -> (MariaDb, Vec<MariaDb>) {
        (self.primary, self.replicas)
    }
}

impl std::fmt::Debug for Topology {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Topology")
            .field("primary", &self.primary)
            .field("replicas", &self.replicas)
            .finish()
    }
}

/// Make `replica` a writable primary, as an operator does: stop receiving
/// (`STOP SLAVE IO_THREAD`), let the SQL thread apply everything already
/// received (bounded wait on `Gtid_IO_Pos`, since `RESET SLAVE ALL` drops
/// relay logs not yet applied), then `STOP SLAVE; RESET SLAVE ALL; SET GLOBAL
/// read_only=0`. Works while the old primary is frozen or dead (nothing here
/// talks to it). Panics if the replica's SQL thread does not catch up within
/// 20 s; if that thread is not running (stopped, or by an error), nothing more
/// can be applied and the replica is promoted as it is.
pub fn promote(replica: &MariaDb) {
    replica.sql("STOP SLAVE IO_THREAD");
    let st = replica.slave_status();
    let received = st.get("Gtid_IO_Pos").cloned().unwrap_or_default();
    let sql_running = st.get("Slave_SQL_Running").map(String::as_str) == Some("Yes");
    if sql_running && !received.is_empty() {
        let t0 = Instant::now();
        let q = format!(
            "SELECT MASTER_GTID_WAIT('{received}', {})",
            CATCH_UP_TIMEOUT.as_secs()
        );
        match wait_gtid(replica, &q) {
            Ok(Some(0)) => {}
            other => panic!(
                "promote: replica on port {} did not apply its relay log (up to GTID {received}) \
                 in {:?} ({other:?}); slave status: {:?}",
                replica.port(),
                t0.elapsed(),
                replica.slave_status()
            ),
        }
    }
    replica.sql("STOP SLAVE");
    replica.sql("RESET SLAVE ALL");
    replica.set_global("read_only", "0");
}

/// Run `q` (a `MASTER_GTID_WAIT`) on a root session of its own, whose read
/// timeout outlasts the wait (the helper session's is 5 s).
fn wait_gtid(replica: &MariaDb, q: &str) -> Result<Option<i64>, mysql::Error> {
    let opts = replica
        .opts("root", "")
        .read_timeout(Some(CATCH_UP_TIMEOUT + Duration::from_secs(5)));
    let mut c = mysql::Conn::new(opts)?;
    c.query_first(q)
}
