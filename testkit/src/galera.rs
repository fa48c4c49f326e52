//! A Galera cluster of N MariaDB nodes on loopback: what the library's Galera
//! tests, the `staunch drill` and `staunch-testkit galera` share.
//!
//! Every node is a [`MariaDb`] of its own (own directory, client port and
//! socket, cleaned up on drop, on panic and at exit as every test server is)
//! with three more free loopback ports: group communication
//! (`gmcast.listen_addr`), incremental state transfer (`ist.recv_addr`) and
//! full state transfer (`wsrep_sst_receive_address`, rsync). Node 0
//! bootstraps the cluster (`--wsrep-new-cluster`, on its first start only);
//! the others join it one after the other, each by a state transfer from a
//! running node. Small memory: a 32 MB buffer pool (as every test server) and
//! a 16 MB gcache.
//!
//! Faults on a node: [`Galera::kill9`] / [`Galera::restart`] (rejoins by IST
//! when the gcache still holds what it missed, else SST), [`Galera::freeze`]
//! (SIGSTOP), [`Galera::isolate`] (`gmcast.isolate=1` through
//! `wsrep_provider_options`: the node drops out of the Primary component and
//! answers 1047 until healed), [`Galera::desync`] (`wsrep_desync`), and
//! [`Galera::rejoin_sst`] (graceful stop, the node forgets its state, a full
//! SST on restart). [`Galera::state`] reads a node's `wsrep_%` status.
//!
//! As root, `mariadbd` runs as the `mysql` user that owns the directories
//! (Debian's rsync SST fails on permissions as root).

use std::thread;
use std::time::{Duration, Instant};

use crate::mariadb::{free_port, APP_PASS, APP_USER, DB_NAME};
use crate::{MariaDb, ServerOpts};

/// Where Debian's `galera-4` puts the provider (override: `STAUNCH_GALERA`).
fn provider() -> String {
    std::env::var("STAUNCH_GALERA").unwrap_or_else(|_| "/usr/lib/galera/libgalera_smm.so".into())
}

/// Bound on a node reaching Synced (start, rejoin, heal).
pub const SYNC_TIMEOUT: Duration = Duration::from_secs(60);

/// Options for [`Galera::start`].
#[derive(Clone, Debug)]
pub struct GaleraOpts {
    /// Number of nodes (default 3).
    pub nodes: usize,
    /// Extra `mariadbd` arguments for every node, last.
    pub args: Vec<String>,
}

impl Default for GaleraOpts {
    fn default() -> Self {
        GaleraOpts {
            nodes: 3,
            args: Vec::new(),
        }
    }
}

/// One node: its server and its Galera ports.
pub struct Node {
    pub server: MariaDb,
    pub gcomm_port: u16,
    pub ist_port: u16,
    pub sst_port: u16,
    /// Length of the error log when the node was last (re)started.
    log_mark: usize,
}

/// A node's `wsrep_%` status, as `SHOW GLOBAL STATUS` tells it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WsrepState {
    /// `wsrep_local_state` (4: Synced, 2: Donor/Desynced, 1: Joining, ...).
    pub local_state: u32,
    /// `wsrep_local_state_comment`.
    pub state_comment: String,
    /// `wsrep_cluster_status` (`Primary`, `non-Primary`, `Disconnected`).
    pub cluster_status: String,
    /// `wsrep_ready`.
    pub ready: bool,
    /// `wsrep_cluster_size`.
    pub cluster_size: u32,
    /// `wsrep_local_index`.
    pub local_index: u32,
    /// `wsrep_local_recv_queue`.
    pub recv_queue: u64,
    /// `wsrep_last_committed`.
    pub last_committed: i64,
}

impl WsrepState {
    /// Synced, ready, in the Primary component.
    pub fn healthy(&self) -> bool {
        self.local_state == 4 && self.ready && self.cluster_status == "Primary"
    }
}

/// A running Galera cluster; see the module docs.
pub struct Galera {
    nodes: Vec<Node>,
}

impl Galera {
    /// Starts node 0 (bootstrap), then every other node (joining), and waits
    /// until each is Synced in a cluster of `opts.nodes`. Panics with the
    /// failing node's error-log tail if one does not come up; the nodes
    /// already started are stopped on the way out.
    pub fn start(opts: GaleraOpts) -> Galera {
        assert!(opts.nodes >= 1, "a Galera cluster needs a node");
        let ports: Vec<(u16, u16, u16)> = (0..opts.nodes)
            .map(|_| (free_port(), free_port(), free_port()))
            .collect();
        let address = format!(
            "gcomm://{}",
            ports
                .iter()
                .map(|p| format!("127.0.0.1:{}", p.0))
                .collect::<Vec<_>>()
                .join(",")
        );
        let mut g = Galera { nodes: Vec::new() };
        for (i, &(gcomm, ist, sst)) in ports.iter().enumerate() {
            let args = node_args(i, &address, gcomm, ist, sst, &opts.args);
            let mut first = args.clone();
            if i == 0 {
                first.push("--wsrep-new-cluster".into());
            }
            let mut server = MariaDb::start_with(ServerOpts {
                args: first,
                replication: None,
                tls: None,
            });
            // Restarts join the cluster.
            server.set_args(args);
            g.nodes.push(Node {
                server,
                gcomm_port: gcomm,
                ist_port: ist,
                sst_port: sst,
                log_mark: 0,
            });
            g.wait_synced(i);
        }
        for i in 0..g.len() {
            g.wait_until(i, "the full cluster", |s| {
                s.healthy() && s.cluster_size as usize == opts.nodes
            });
        }
        g
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    pub fn node(&self, i: usize) -> &Node {
        &self.nodes[i]
    }

    /// Node `i`'s server.
    pub fn server(&self, i: usize) -> &MariaDb {
        &self.nodes[i].server
    }

    pub fn server_mut(&mut self, i: usize) -> &mut MariaDb {
        &mut self.nodes[i].server
    }

    pub fn servers(&self) -> impl Iterator<Item = &MariaDb> {
        self.nodes.iter().map(|n| &n.server)
    }

    /// `127.0.0.1:P0,127.0.0.1:P1,...` (client ports), node 0 first.
    pub fn hosts(&self) -> String {
        self.servers()
            .map(|s| s.addr().to_string())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The multi-host URL of the `app` user over every node, with no
    /// `topology` knob (staunch finds Galera out itself), then `?params` if
    /// not empty.
    pub fn url(&self, params: &str) -> String {
        self.url_as(APP_USER, APP_PASS, params)
    }

    /// [`Galera::url`] for another user, e.g. the least-privilege
    /// `least`/`least-secret` (`ALL ON staunch_test.*` only; it exists on
    /// every node: the nodes start from one template).
    pub fn url_as(&self, user: &str, password: &str, params: &str) -> String {
        let mut u = format!("mysql://{user}:{password}@{}/{DB_NAME}", self.hosts());
        let params = params.trim_start_matches(['?', '&']);
        if !params.is_empty() {
            u.push('?');
            u.push_str(params);
        }
        u
    }

    /// Node `i`'s `wsrep_%` status (root helper session). Panics if the node
    /// does not answer.
    pub fn state(&self, i: usize) -> WsrepState {
        let rows = self.nodes[i]
            .server
            .query_rows("SHOW GLOBAL STATUS LIKE 'wsrep_%'");
        let mut s = WsrepState::default();
        for r in rows {
            let (Some(Some(k)), Some(Some(v))) = (r.first(), r.get(1)) else {
                continue;
            };
            match k.as_str() {
                "wsrep_local_state" => s.local_state = v.parse().unwrap_or(0),
                "wsrep_local_state_comment" => s.state_comment = v.clone(),
                "wsrep_cluster_status" => s.cluster_status = v.clone(),
                "wsrep_ready" => s.ready = v == "ON",
                "wsrep_cluster_size" => s.cluster_size = v.parse().unwrap_or(0),
                "wsrep_local_index" => s.local_index = v.parse().unwrap_or(u32::MAX),
                "wsrep_local_recv_queue" => s.recv_queue = v.parse().unwrap_or(0),
                "wsrep_last_committed" => s.last_committed = v.parse().unwrap_or(-1),
                _ => {}
            }
        }
        s
    }

    /// Waits (at most [`SYNC_TIMEOUT`]) until `ok(state of node i)`; panics
    /// naming `what` and the last state otherwise.
    pub fn wait_until(&self, i: usize, what: &str, ok: impl Fn(&WsrepState) -> bool) {
        let t0 = Instant::now();
        loop {
            let s = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.state(i)));
            match &s {
                Ok(s) if ok(s) => return,
                _ if t0.elapsed() > SYNC_TIMEOUT => panic!(
                    "Galera node {i} (port {}): not {what} after {SYNC_TIMEOUT:?}: {s:?}\n{}",
                    self.nodes[i].server.port(),
                    self.nodes[i].server.error_log_tail()
                ),
                _ => thread::sleep(Duration::from_millis(50)),
            }
        }
    }

    /// Waits until node `i` is Synced, ready and Primary.
    pub fn wait_synced(&self, i: usize) {
        self.wait_until(i, "Synced in the Primary component", WsrepState::healthy)
    }

    /// SIGKILL node `i`; returns once it is reaped and its port closed.
    pub fn kill9(&mut self, i: usize) {
        self.nodes[i].server.kill9();
    }

    /// Graceful stop of node `i`.
    pub fn stop(&mut self, i: usize) {
        self.nodes[i].server.stop();
    }

    /// Starts node `i` again (stopping it first if it runs): it rejoins the
    /// cluster, by IST after a graceful stop (its saved position is in
    /// `grastate.dat` and the donor's gcache covers the gap), by SST after a
    /// `kill9` (no saved position: measured here). Returns once it is Synced.
    pub fn restart(&mut self, i: usize) {
        self.nodes[i].log_mark = self.nodes[i].server.error_log().len();
        self.nodes[i].server.restart();
        self.wait_synced(i);
    }

    /// Stops node `i`, makes it forget its state (`grastate.dat`,
    /// `galera.cache`), restarts it and waits until it is Synced: the rejoin
    /// is a full state transfer (rsync SST), whatever the donor's gcache
    /// holds. Returns how long the rejoin took from the restart.
    pub fn rejoin_sst(&mut self, i: usize) -> Duration {
        self.stop(i);
        let data = self.nodes[i].server.datadir();
        for f in ["grastate.dat", "galera.cache", "gvwstate.dat"] {
            let _ = std::fs::remove_file(data.join(f));
        }
        let t0 = Instant::now();
        self.restart(i);
        t0.elapsed()
    }

    /// How node `i` last joined, from its error log since its last
    /// (re)start (the rsync script's "rsync SST|IST completed on joiner"): `"SST"` (a full copy; IST then brings what came
    /// meanwhile), `"IST"` alone, `"IST"`, or
    /// `None` if the log says neither.
    pub fn last_transfer(&self, i: usize) -> Option<&'static str> {
        let log = self.nodes[i].server.error_log();
        let since = log.get(self.nodes[i].log_mark..).unwrap_or(&log);
        if since.contains("SST completed on joiner") {
            Some("SST")
        } else if since.contains("IST completed on joiner") || since.contains("IST received") {
            Some("IST")
        } else {
            None
        }
    }

    /// The servers themselves, node 0 first.
    pub fn into_servers(self) -> Vec<MariaDb> {
        self.nodes.into_iter().map(|n| n.server).collect()
    }

    /// SIGSTOP node `i` (see [`MariaDb::freeze`]).
    pub fn freeze(&self, i: usize) {
        self.nodes[i].server.freeze();
    }

    /// SIGCONT node `i`.
    pub fn thaw(&self, i: usize) {
        self.nodes[i].server.thaw();
    }

    /// `gmcast.isolate=1` on node `i` (`on`), or `=0`: isolated, the node
    /// leaves the Primary component (its clients get 1047); healed, it
    /// rejoins. Returns at once; see [`Galera::wait_until`].
    pub fn isolate(&self, i: usize, on: bool) {
        self.nodes[i].server.set_global(
            "wsrep_provider_options",
            &format!("'gmcast.isolate={}'", u8::from(on)),
        );
    }

    /// `wsrep_desync` on node `i`.
    pub fn desync(&self, i: usize, on: bool) {
        self.nodes[i]
            .server
            .set_global("wsrep_desync", if on { "ON" } else { "OFF" });
    }
}

impl std::fmt::Debug for Galera {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.nodes.iter().map(|n| &n.server))
            .finish()
    }
}

fn node_args(
    i: usize,
    address: &str,
    gcomm: u16,
    ist: u16,
    sst: u16,
    extra: &[String],
) -> Vec<String> {
    let mut a = vec![
        "--wsrep-on=ON".to_string(),
        format!("--wsrep-provider={}", provider()),
        format!("--wsrep-cluster-address={address}"),
        "--wsrep-cluster-name=staunch".into(),
        format!("--wsrep-node-name=node{i}"),
        "--wsrep-node-address=127.0.0.1".into(),
        "--wsrep-sst-method=rsync".into(),
        format!("--wsrep-sst-receive-address=127.0.0.1:{sst}"),
        format!(
            "--wsrep-provider-options=gmcast.listen_addr=tcp://127.0.0.1:{gcomm};ist.recv_addr=127.0.0.1:{ist};gcache.size=16M"
        ),
        "--binlog-format=ROW".into(),
        "--innodb-autoinc-lock-mode=2".into(),
        "--default-storage-engine=InnoDB".into(),
    ];
    a.extend(extra.iter().cloned());
    a
}
