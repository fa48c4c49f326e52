//! `staunch-testkit`: the test kit's servers and chaos proxy for tests
//! written in other languages (Python, Go, JVM), driven over stdin/stdout
//! (the same code the Rust tests use, not a second harness).
//!
//! ```text
//! staunch-testkit server [--proxy] [--tls | --tls-self-signed] [--performance-schema] [--arg MARIADBD_ARG]...
//! staunch-testkit topology [--replicas N] [--proxy] [--tls] [--performance-schema] [--arg ARG]... [--replica-arg ARG]...
//! staunch-testkit galera [--nodes N] [--performance-schema] [--arg ARG]...
//! staunch-testkit proxy --target HOST:PORT
//! staunch-testkit mysql8 [--tls] [--warm-sha2-cache]
//! staunch-testkit --help
//! ```
//!
//! # Protocol
//!
//! Stdout carries only JSON lines; logs and panic messages go to stderr.
//!
//! Once everything is up the program prints exactly one line,
//! `{"ready":true,...}`, with:
//! - `kind`: `"server"`, `"topology"`, `"galera"` or `"proxy"`; `pid`: this process;
//! - `url`: the URL to give a pool (user `app`): through the proxy for
//!   `server --proxy` and `proxy`, the multi-host URL (`topology_url`) for
//!   `topology`, the multi-host URL with no `topology` knob for `galera`
//!   (staunch finds Galera out), the server's own otherwise; with `--tls` it ends in
//!   `?tls_mode=verify_identity&tls_ca=PATH`, with `--tls-self-signed` in
//!   `?tls_mode=verify_ca&tls_ca=PATH` (the test CA's certificate, which is
//!   the server's own);
//! - `servers`: `[{"index","role","host","port","pid","socket","dir",
//!   "server_id","url","root_url"}]`, index 0 first (the primary);
//! - `proxy`: `{"host","port","url","target"}` or `null` (the proxy starts
//!   in front of server 0, mode `pass`);
//! - `topology_url` (or `null`), `database`, `users` (`app`, `root`,
//!   `monitor`, `repl`, each `{"user","password"}`), `tls` (`{"ca",
//!   "client_cert","client_key","other_ca"}` or `null`).
//!
//! `mysql8` starts no MariaDB but the kit's second server implementation
//! (`staunch_testkit::Mysql8`: Vitess's `go/mysql` server, built with `go` on
//! first use), which greets like MySQL 8 and speaks `caching_sha2_password`;
//! its ready line has `kind` `"mysql8"`, `pid`, `url` (the `sha2` user; with
//! `--tls` verifying the test CA), `host`, `port`, `socket`, `server_pid`,
//! `server_version`, `users` (`native`: mysql_native_password, `sha2`:
//! caching_sha2_password, each `{"user","password","plugin"}`) and `tls`
//! (as above). It answers `status`, `help` and `quit` only. Its server
//! exits with this process, even a killed one (its stdin is a pipe from
//! here).
//!
//! If it cannot start, it prints `{"ready":false,"error":"..."}` instead and
//! exits non-zero (2 for bad arguments).
//!
//! Then it reads one command per line on stdin and answers each with exactly
//! one line: `{"ok":true,...}` or `{"ok":false,"error":"..."}`; a bad command
//! is answered, never fatal. `N` is a server index (default 0):
//!
//! | command | does | answer |
//! |---|---|---|
//! | `freeze [N]` / `thaw [N]` | SIGSTOP / SIGCONT the server | `ok` |
//! | `kill [N]` | SIGKILL, wait until reaped and the port is closed | `ok` |
//! | `stop [N]` | graceful shutdown | `ok` |
//! | `start [N]` | start a stopped or killed server (same port and data) | `ok` |
//! | `restart [N]` | stop if running, then start | `ok`, `pid` |
//! | `kill-connections USER [N]` | `KILL CONNECTION` each session of USER | `killed` |
//! | `connection-count USER [N]` | sessions of USER | `count` |
//! | `sql N STATEMENT...` | run it as root, no result | `ok` |
//! | `query N STATEMENT...` | run it as root | `rows`: `[["v",null,...],...]` (text, NULL as null) |
//! | `promote N` | topology: replica N becomes a writable primary | `ok` |
//! | `isolate N` / `heal N` | galera: `gmcast.isolate=1` / `=0` (returns at once) | `ok` |
//! | `desync N` / `resync N` | galera: `wsrep_desync=ON` / `OFF` | `ok` |
//! | `rejoin-sst N` | galera: stop, forget the state, rejoin by a full SST, wait Synced | `ok`, `transfer`, `ms` |
//! | `wsrep N` | galera: the node's `wsrep_%` status | `state`, `comment`, `cluster_status`, `ready`, `size`, `index`, `recv_queue` |
//! | `wait-synced N` | galera: wait (60 s max) until Synced in the Primary component | `ok` |
//! | `mode pass\|blackhole\|reset\|latency MS\|drip MS\|close-after BYTES` | proxy mode for new connections | `mode` |
//! | `target N` / `target HOST:PORT` | proxy target for new connections | `target` |
//! | `sever` | cut every proxied connection (RST) | `severed` |
//! | `status` | | `servers` (`index, role, port, pid, running, frozen`), `proxy` |
//! | `help` | | `commands` |
//! | `quit` | stop everything, then answer, then exit 0 | `ok` |
//!
//! In a Galera cluster `start`/`restart` also wait until the node is Synced
//! (a rejoin after `kill` goes through SST, after `stop` through IST), and
//! the answer carries `transfer` (`"SST"`, `"IST"` or null).
//!
//! `sql` and `query` share one root session per server (database
//! `staunch_test`), so session state carries over between them. `promote`
//! does what an operator does: `STOP SLAVE IO_THREAD`, wait until the SQL
//! thread applied what it received, `STOP SLAVE; RESET SLAVE ALL; SET GLOBAL
//! read_only=0`; the server's role becomes `"promoted"`. In a topology the
//! `app` user has no READ_ONLY ADMIN, so `read_only=1` stops its writes.
//!
//! Everything (servers, proxy, temporary directories) is stopped and removed
//! on `quit`, at the end of stdin, on SIGTERM, SIGINT or SIGHUP (exit code
//! 128 + signal) and on a panic. See also `testkit/README.md`.

use std::any::Any;
use std::fs::File;
use std::io::{Read, Write};
use std::mem::ManuallyDrop;
use std::net::{SocketAddr, ToSocketAddrs};
use std::os::unix::io::FromRawFd;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::process::ExitCode;
use std::sync::atomic::{AtomicI32, Ordering::SeqCst};
use std::time::Duration;

use serde_json::{json, Value};
use staunch_testkit::mariadb::{
    APP_PASS, APP_USER, DB_NAME, LEAST_PASS, LEAST_USER, MONITOR_PASS, MONITOR_USER, REPL_PASS,
    REPL_USER,
};
use staunch_testkit::mysql8::{NATIVE_PASS, NATIVE_USER, SHA2_PASS, SHA2_USER};
use staunch_testkit::{
    test_certs, MariaDb, Mode, Proxy, ServerCert, ServerOpts, PERFORMANCE_SCHEMA_ARGS,
};
use staunch_testkit::{AuthPlugin, Mysql8, Mysql8Opts};
use staunch_testkit::{Galera, GaleraOpts, Topology, TopologyOpts};

const USAGE: &str = "\
staunch-testkit: throwaway MariaDB servers and a chaos proxy, driven over stdin/stdout

usage:
  staunch-testkit server [--proxy] [--tls | --tls-self-signed] [--performance-schema] [--arg MARIADBD_ARG]...
  staunch-testkit topology [--replicas N] [--proxy] [--tls] [--performance-schema] [--arg ARG]... [--replica-arg ARG]...
  staunch-testkit galera [--nodes N] [--performance-schema] [--arg ARG]...
  staunch-testkit proxy --target HOST:PORT
  staunch-testkit mysql8 [--tls] [--warm-sha2-cache]
  staunch-testkit --help

  server     one server (and with --proxy a chaos proxy in front of it)
  topology   a primary (index 0) and N read_only replicas (default 2) replicating from it
             (--proxy: a chaos proxy in front of the primary)
  galera     a Galera cluster of N nodes (default 3) on loopback, node 0 bootstrapping
  proxy      a chaos proxy alone, towards HOST:PORT
  mysql8     not MariaDB: Vitess's go/mysql server (built with `go` on first use), which
             greets like MySQL 8 and speaks caching_sha2_password; users native and sha2
             (--warm-sha2-cache: sha2's first login takes the fast path)
  --arg A    extra mariadbd argument, every server (e.g. --arg --max-connections=5)
  --replica-arg A   extra mariadbd argument, replicas only (default: MariaDB's defaults)
  --tls      servers with TLS (test certificates; the URLs verify them)
  --tls-self-signed  the server presents the test CA's own certificate
             (self-signed, CA:TRUE); the URL pins it (tls_mode=verify_ca)
  --performance-schema   servers with performance_schema=ON, sized small (connection
             attributes and threads only; MariaDB's default is OFF)

When ready it prints one JSON line {\"ready\":true,\"url\":...,\"servers\":[...],\"proxy\":...}
on stdout, then answers each command on stdin with one JSON line {\"ok\":true,...} or
{\"ok\":false,\"error\":...}. N is a server index (default 0):
  freeze [N] | thaw [N] | kill [N] | stop [N] | start [N] | restart [N]
  kill-connections USER [N] | connection-count USER [N]
  sql N STATEMENT... | query N STATEMENT...
  promote N                          (topology)
  isolate N | heal N | desync N | resync N | rejoin-sst N | wsrep N | wait-synced N  (galera)
  mode pass|blackhole|reset|latency MS|drip MS|close-after BYTES
  target N | target HOST:PORT | sever  (proxy)
  status | help | quit
Everything stops and is removed on quit, at the end of stdin, on SIGTERM/SIGINT/SIGHUP.
";

const COMMANDS: &[&str] = &[
    "freeze [N]",
    "thaw [N]",
    "kill [N]",
    "stop [N]",
    "start [N]",
    "restart [N]",
    "kill-connections USER [N]",
    "connection-count USER [N]",
    "sql N STATEMENT...",
    "query N STATEMENT...",
    "promote N",
    "isolate N",
    "heal N",
    "desync N",
    "resync N",
    "rejoin-sst N",
    "wsrep N",
    "wait-synced N",
    "mode pass|blackhole|reset|latency MS|drip MS|close-after BYTES",
    "target N|HOST:PORT",
    "sever",
    "status",
    "help",
    "quit",
];

/// How often the stdin reader looks at the signal flag.
const POLL_MS: libc::c_int = 100;

// ---------------------------------------------------------------------------
// Signals.

/// The signal that asked us to stop (0: none yet).
static STOP_SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    STOP_SIGNAL.store(sig, SeqCst);
}

fn install_signal_handlers() {
    for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
        // SAFETY: a zeroed sigaction is valid; the handler only stores to an
        // atomic. No SA_RESTART, so a blocking poll returns EINTR.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            libc::sigemptyset(&mut sa.sa_mask);
            sa.sa_flags = 0;
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

fn stop_signal() -> i32 {
    STOP_SIGNAL.load(SeqCst)
}

// ---------------------------------------------------------------------------
// Arguments.

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Server,
    Topology,
    Galera,
    Proxy,
    Mysql8,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Server => "server",
            Kind::Topology => "topology",
            Kind::Galera => "galera",
            Kind::Proxy => "proxy",
            Kind::Mysql8 => "mysql8",
        }
    }
}

#[derive(Debug)]
struct Args {
    kind: Kind,
    proxy: bool,
    tls: bool,
    /// `--tls-self-signed`: the server presents the test CA's own
    /// certificate (self-signed, `CA:TRUE`), for conformance
    /// `conf_tls_exact`.
    self_signed: bool,
    replicas: usize,
    nodes: usize,
    args: Vec<String>,
    replica_args: Vec<String>,
    target: Option<String>,
    warm_sha2_cache: bool,
}

enum Parsed {
    Run(Args),
    Help,
}

fn parse_args(argv: &[String]) -> Result<Parsed, String> {
    let Some(first) = argv.first() else {
        return Err("no command given (server, topology, galera, proxy or mysql8)".into());
    };
    let kind = match first.as_str() {
        "-h" | "--help" | "help" => return Ok(Parsed::Help),
        "server" => Kind::Server,
        "topology" => Kind::Topology,
        "galera" => Kind::Galera,
        "proxy" => Kind::Proxy,
        "mysql8" => Kind::Mysql8,
        other => {
            return Err(format!(
                "unknown command {other:?} (server, topology, galera, proxy or mysql8)"
            ))
        }
    };
    let mut a = Args {
        kind,
        proxy: kind == Kind::Proxy,
        tls: false,
        replicas: 2,
        nodes: 3,
        args: Vec::new(),
        replica_args: Vec::new(),
        target: None,
        warm_sha2_cache: false,
        self_signed: false,
    };
    let mut it = argv[1..].iter();
    while let Some(arg) = it.next() {
        // `--opt=value` or `--opt value` (the value may start with `--`).
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
            _ => (arg.as_str(), None),
        };
        let mut value = |what: &str| -> Result<String, String> {
            match inline.clone() {
                Some(v) => Ok(v),
                None => it
                    .next()
                    .cloned()
                    .ok_or_else(|| format!("{name} needs {what}")),
            }
        };
        let only = |kinds: &[Kind]| -> Result<(), String> {
            if kinds.contains(&kind) {
                Ok(())
            } else {
                Err(format!("{name} is not an option of `{}`", kind.name()))
            }
        };
        match name {
            "-h" | "--help" => return Ok(Parsed::Help),
            "--proxy" => {
                only(&[Kind::Server, Kind::Topology])?;
                a.proxy = true;
            }
            "--tls" => {
                only(&[Kind::Server, Kind::Topology, Kind::Mysql8])?;
                a.tls = true;
            }
            "--tls-self-signed" => {
                only(&[Kind::Server])?;
                a.tls = true;
                a.self_signed = true;
            }
            "--warm-sha2-cache" => {
                only(&[Kind::Mysql8])?;
                a.warm_sha2_cache = true;
            }
            "--performance-schema" => {
                only(&[Kind::Server, Kind::Topology, Kind::Galera])?;
                a.args
                    .extend(PERFORMANCE_SCHEMA_ARGS.iter().map(|s| s.to_string()));
            }
            "--arg" => {
                only(&[Kind::Server, Kind::Topology, Kind::Galera])?;
                a.args.push(value("a mariadbd argument")?);
            }
            "--replica-arg" => {
                only(&[Kind::Topology])?;
                a.replica_args.push(value("a mariadbd argument")?);
            }
            "--replicas" => {
                only(&[Kind::Topology])?;
                let v = value("a number")?;
                a.replicas = v
                    .parse()
                    .map_err(|_| format!("--replicas needs a number, got {v:?}"))?;
            }
            "--nodes" => {
                only(&[Kind::Galera])?;
                let v = value("a number")?;
                a.nodes = v
                    .parse()
                    .ok()
                    .filter(|&n| (1..=9).contains(&n))
                    .ok_or_else(|| format!("--nodes needs a number from 1 to 9, got {v:?}"))?;
            }
            "--target" => {
                only(&[Kind::Proxy])?;
                a.target = Some(value("HOST:PORT")?);
            }
            other => return Err(format!("unknown option {other:?}")),
        }
    }
    if kind == Kind::Proxy && a.target.is_none() {
        return Err("proxy needs --target HOST:PORT".into());
    }
    Ok(Parsed::Run(a))
}

fn resolve(hostport: &str) -> Result<SocketAddr, String> {
    let addrs: Vec<SocketAddr> = hostport
        .to_socket_addrs()
        .map_err(|e| format!("bad address {hostport:?} (HOST:PORT): {e}"))?
        .collect();
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or(addrs.first())
        .copied()
        .ok_or_else(|| format!("{hostport:?} resolves to no address"))
}

// ---------------------------------------------------------------------------
// What runs.

enum Servers {
    None,
    One(MariaDb),
    Cluster(Topology),
    Galera(Galera),
}

impl Servers {
    fn len(&self) -> usize {
        match self {
            Servers::None => 0,
            Servers::One(_) => 1,
            Servers::Cluster(t) => t.len(),
            Servers::Galera(g) => g.len(),
        }
    }

    fn get(&self, n: usize) -> Option<&MariaDb> {
        match self {
            Servers::None => None,
            Servers::One(s) => (n == 0).then_some(s),
            Servers::Cluster(t) => t.server(n),
            Servers::Galera(g) => (n < g.len()).then(|| g.server(n)),
        }
    }

    fn get_mut(&mut self, n: usize) -> Option<&mut MariaDb> {
        match self {
            Servers::None => None,
            Servers::One(s) => (n == 0).then_some(s),
            Servers::Cluster(t) => t.server_mut(n),
            Servers::Galera(g) => (n < g.len()).then(|| g.server_mut(n)),
        }
    }
}

struct Harness {
    kind: Kind,
    tls: bool,
    self_signed: bool,
    /// Dropped before the servers (see `shut_down`).
    proxy: Option<Proxy>,
    servers: Servers,
    roles: Vec<&'static str>,
    /// `mysql8`'s server (no MariaDB then).
    mysql8: Option<Mysql8>,
}

type Answer = Result<Value, String>;

impl Harness {
    fn start(a: &Args) -> Harness {
        let tls = match (a.tls, a.self_signed) {
            (false, _) => None,
            (true, false) => Some(ServerCert::Localhost),
            (true, true) => Some(ServerCert::SelfSignedCa),
        };
        let (servers, roles) = match a.kind {
            Kind::Server => {
                let s = MariaDb::start_with(ServerOpts {
                    args: a.args.clone(),
                    replication: None,
                    tls,
                });
                (Servers::One(s), vec!["server"])
            }
            Kind::Topology => {
                let t = Topology::start(TopologyOpts {
                    replicas: a.replicas,
                    args: a.args.clone(),
                    replica_args: a.replica_args.clone(),
                    tls,
                    app_read_only_admin: false,
                });
                let mut roles = vec!["primary"];
                roles.extend(std::iter::repeat("replica").take(a.replicas));
                (Servers::Cluster(t), roles)
            }
            Kind::Galera => {
                let g = Galera::start(GaleraOpts {
                    nodes: a.nodes,
                    args: a.args.clone(),
                });
                (Servers::Galera(g), vec!["node"; a.nodes])
            }
            Kind::Proxy | Kind::Mysql8 => (Servers::None, Vec::new()),
        };
        let mysql8 = (a.kind == Kind::Mysql8).then(|| {
            Mysql8::start_with(Mysql8Opts {
                tls,
                warm_sha2_cache: a.warm_sha2_cache,
                ..Mysql8Opts::default()
            })
        });
        let proxy = if a.proxy {
            let target = match (&servers, &a.target) {
                (_, Some(t)) => resolve(t).unwrap_or_else(|e| panic!("{e}")),
                (s, None) => s.get(0).expect("a server").addr(),
            };
            Some(Proxy::start(target))
        } else {
            None
        };
        Harness {
            kind: a.kind,
            tls: a.tls,
            self_signed: a.self_signed,
            proxy,
            servers,
            roles,
            mysql8,
        }
    }

    /// Query parameters every app URL carries (`?...` or empty).
    fn url_params(&self) -> String {
        if self.self_signed {
            // The server's own certificate is the CA's: pinned by it.
            format!("?tls_mode=verify_ca&tls_ca={}", test_certs().ca.display())
        } else if self.tls {
            format!(
                "?tls_mode=verify_identity&tls_ca={}",
                test_certs().ca.display()
            )
        } else {
            String::new()
        }
    }

    fn app_url(&self, port: u16) -> String {
        format!(
            "mysql://{APP_USER}:{APP_PASS}@127.0.0.1:{port}/{DB_NAME}{}",
            self.url_params()
        )
    }

    fn topology_url(&self) -> Option<String> {
        match &self.servers {
            Servers::Cluster(t) => {
                let p = self.url_params();
                Some(t.url(p.trim_start_matches('?')))
            }
            Servers::Galera(g) => Some(g.url("")),
            _ => None,
        }
    }

    fn ready(&self) -> Value {
        if let Some(m) = &self.mysql8 {
            return self.mysql8_ready(m);
        }
        let servers: Vec<Value> = (0..self.servers.len())
            .filter_map(|i| self.servers.get(i).map(|s| (i, s)))
            .map(|(i, s)| {
                json!({
                    "index": i,
                    "role": self.roles[i],
                    "host": "127.0.0.1",
                    "port": s.port(),
                    "pid": s.pid(),
                    "socket": s.socket_path().display().to_string(),
                    "dir": s.dir().display().to_string(),
                    "server_id": match self.kind {
                        Kind::Topology => json!(1 + i),
                        _ => Value::Null,
                    },
                    "url": self.app_url(s.port()),
                    "root_url": s.root_url(),
                })
            })
            .collect();
        let proxy = self.proxy.as_ref().map(|p| {
            json!({
                "host": "127.0.0.1",
                "port": p.port(),
                "url": self.app_url(p.port()),
                "target": p.target().to_string(),
            })
        });
        let topology_url = self.topology_url();
        let url = match (&topology_url, &self.proxy, self.servers.get(0)) {
            (Some(t), _, _) => t.clone(),
            (None, Some(p), _) => self.app_url(p.port()),
            (None, None, Some(s)) => self.app_url(s.port()),
            (None, None, None) => String::new(),
        };
        let tls = self.tls_paths();
        let user = |u: &str, p: &str| json!({"user": u, "password": p});
        json!({
            "ready": true,
            "kind": self.kind.name(),
            "pid": std::process::id(),
            "url": url,
            "servers": servers,
            "proxy": proxy,
            "topology_url": topology_url,
            "database": DB_NAME,
            "users": {
                "app": user(APP_USER, APP_PASS),
                "least": user(LEAST_USER, LEAST_PASS),
                "root": user("root", ""),
                "monitor": user(MONITOR_USER, MONITOR_PASS),
                "repl": user(REPL_USER, REPL_PASS),
            },
            "tls": tls,
        })
    }

    fn tls_paths(&self) -> Option<Value> {
        self.tls.then(|| {
            let c = test_certs();
            json!({
                "ca": c.ca.display().to_string(),
                "client_cert": c.client_cert.display().to_string(),
                "client_key": c.client_key.display().to_string(),
                "other_ca": c.other_ca.display().to_string(),
            })
        })
    }

    fn mysql8_ready(&self, m: &Mysql8) -> Value {
        let user = |u: &str, p: &str, plugin: AuthPlugin| json!({"user": u, "password": p, "plugin": plugin.name()});
        json!({
            "ready": true,
            "kind": self.kind.name(),
            "pid": std::process::id(),
            "url": m.url(),
            "host": "127.0.0.1",
            "port": m.port(),
            "socket": m.socket_path().display().to_string(),
            "server_pid": m.pid(),
            "server_version": m.server_version(),
            "database": DB_NAME,
            "users": {
                "native": user(NATIVE_USER, NATIVE_PASS, AuthPlugin::MysqlNativePassword),
                "sha2": user(SHA2_USER, SHA2_PASS, AuthPlugin::CachingSha2Password),
            },
            "tls": self.tls_paths(),
        })
    }

    fn server_index(&self, word: Option<&str>) -> Result<usize, String> {
        let n = match word {
            None => 0,
            Some(w) => w
                .parse::<usize>()
                .map_err(|_| format!("{w:?} is not a server index"))?,
        };
        if n >= self.servers.len() {
            return Err(match self.servers.len() {
                0 if self.kind == Kind::Mysql8 => {
                    "there are no servers here to drive (mysql8: status, help, quit)".into()
                }
                0 => "there are no servers here (proxy only)".into(),
                len => format!("no server {n} (indexes 0 to {})", len - 1),
            });
        }
        Ok(n)
    }

    fn server(&self, word: Option<&str>) -> Result<&MariaDb, String> {
        let n = self.server_index(word)?;
        Ok(self.servers.get(n).expect("index checked"))
    }

    fn server_mut(&mut self, word: Option<&str>) -> Result<&mut MariaDb, String> {
        let n = self.server_index(word)?;
        Ok(self.servers.get_mut(n).expect("index checked"))
    }

    fn proxy(&self) -> Result<&Proxy, String> {
        self.proxy
            .as_ref()
            .ok_or_else(|| "no proxy here (start with --proxy)".to_string())
    }

    fn status(&self) -> Value {
        let servers: Vec<Value> = (0..self.servers.len())
            .filter_map(|i| self.servers.get(i).map(|s| (i, s)))
            .map(|(i, s)| {
                json!({
                    "index": i,
                    "role": self.roles[i],
                    "port": s.port(),
                    "pid": s.pid(),
                    "running": s.is_running(),
                    "frozen": s.is_frozen(),
                })
            })
            .collect();
        let proxy = self.proxy.as_ref().map(|p| {
            json!({
                "port": p.port(),
                "target": p.target().to_string(),
                "mode": mode_name(p.mode()),
                "open": p.open_connections(),
                "accepted": p.accepted(),
            })
        });
        let mysql8 = self
            .mysql8
            .as_ref()
            .map(|m| json!({"port": m.port(), "pid": m.pid(), "running": m.is_running()}));
        json!({"ok": true, "servers": servers, "proxy": proxy, "mysql8": mysql8})
    }

    /// One command line (not `quit`, handled by the caller).
    fn command(&mut self, line: &str) -> Answer {
        let (cmd, rest) = split_word(line);
        let words: Vec<&str> = rest.split_whitespace().collect();
        let at_most = |n: usize| -> Result<(), String> {
            if words.len() > n {
                Err(format!("too many arguments for {cmd}"))
            } else {
                Ok(())
            }
        };
        match cmd {
            "help" => Ok(json!({"ok": true, "commands": COMMANDS})),
            "status" => {
                at_most(0)?;
                Ok(self.status())
            }
            "freeze" => {
                at_most(1)?;
                let s = self.server(words.first().copied())?;
                if !s.is_running() {
                    return Err("server is not running".into());
                }
                s.freeze();
                Ok(json!({"ok": true}))
            }
            "thaw" => {
                at_most(1)?;
                let s = self.server(words.first().copied())?;
                if !s.is_running() {
                    return Err("server is not running".into());
                }
                s.thaw();
                Ok(json!({"ok": true}))
            }
            "kill" => {
                at_most(1)?;
                let s = self.server_mut(words.first().copied())?;
                if !s.is_running() {
                    return Err("server is not running".into());
                }
                s.kill9();
                Ok(json!({"ok": true}))
            }
            "stop" => {
                at_most(1)?;
                let s = self.server_mut(words.first().copied())?;
                if !s.is_running() {
                    return Err("server is not running".into());
                }
                s.stop();
                Ok(json!({"ok": true}))
            }
            "start" => {
                at_most(1)?;
                let s = self.server_mut(words.first().copied())?;
                if s.is_running() {
                    return Err("server is already running (restart restarts it)".into());
                }
                self.restart(words.first().copied())
            }
            "restart" => {
                at_most(1)?;
                self.restart(words.first().copied())
            }
            "kill-connections" | "connection-count" => {
                at_most(2)?;
                let user = words
                    .first()
                    .ok_or_else(|| format!("usage: {cmd} USER [N]"))?;
                let s = self.server(words.get(1).copied())?;
                if cmd == "kill-connections" {
                    Ok(json!({"ok": true, "killed": s.kill_connections(user)}))
                } else {
                    Ok(json!({"ok": true, "count": s.connection_count(user)}))
                }
            }
            "sql" | "query" => {
                let (n, stmt) = split_word(rest);
                if n.is_empty() || stmt.is_empty() {
                    return Err(format!("usage: {cmd} N STATEMENT..."));
                }
                let s = self.server(Some(n))?;
                if cmd == "sql" {
                    s.sql(stmt);
                    Ok(json!({"ok": true}))
                } else {
                    Ok(json!({"ok": true, "rows": s.query_rows(stmt)}))
                }
            }
            "promote" => {
                at_most(1)?;
                let Servers::Cluster(t) = &self.servers else {
                    return Err("promote needs a topology".into());
                };
                let w = words
                    .first()
                    .ok_or("usage: promote N (a replica's index)")?;
                let n = self.server_index(Some(w))?;
                if n == 0 || self.roles[n] != "replica" {
                    return Err(format!("server {n} is not a replica ({})", self.roles[n]));
                }
                t.promote(n - 1);
                self.roles[n] = "promoted";
                Ok(json!({"ok": true}))
            }
            "isolate" | "heal" | "desync" | "resync" | "rejoin-sst" | "wsrep" | "wait-synced" => {
                at_most(1)?;
                let w = words
                    .first()
                    .ok_or_else(|| format!("usage: {cmd} N (a node's index)"))?;
                let n = self.server_index(Some(w))?;
                let Servers::Galera(g) = &mut self.servers else {
                    return Err(format!("{cmd} needs a galera cluster"));
                };
                if !g.server(n).is_running() || g.server(n).is_frozen() {
                    return Err(format!("node {n} is not running (or frozen)"));
                }
                match cmd {
                    "isolate" | "heal" => g.isolate(n, cmd == "isolate"),
                    "desync" | "resync" => g.desync(n, cmd == "desync"),
                    "wait-synced" => g.wait_synced(n),
                    "rejoin-sst" => {
                        let took = g.rejoin_sst(n);
                        return Ok(json!({"ok": true, "transfer": g.last_transfer(n),
                            "ms": took.as_millis() as u64}));
                    }
                    _ => {
                        let s = g.state(n);
                        return Ok(json!({"ok": true, "state": s.local_state,
                            "comment": s.state_comment, "cluster_status": s.cluster_status,
                            "ready": s.ready, "size": s.cluster_size, "index": s.local_index,
                            "recv_queue": s.recv_queue}));
                    }
                }
                Ok(json!({"ok": true}))
            }
            "mode" => {
                let p = self.proxy()?;
                let mode = parse_mode(&words)?;
                p.set_mode(mode);
                Ok(json!({"ok": true, "mode": mode_name(mode)}))
            }
            "target" => {
                at_most(1)?;
                let p = self.proxy()?;
                let w = words.first().ok_or("usage: target N | target HOST:PORT")?;
                let addr = if w.bytes().all(|b| b.is_ascii_digit()) {
                    self.server(Some(w))?.addr()
                } else {
                    resolve(w)?
                };
                p.set_target(addr);
                Ok(json!({"ok": true, "target": addr.to_string()}))
            }
            "sever" => {
                at_most(0)?;
                let p = self.proxy()?;
                let n = p.open_connections();
                p.sever_all();
                Ok(json!({"ok": true, "severed": n}))
            }
            "" => Err("empty command".into()),
            other => Err(format!(
                "unknown command {other:?} (try help: {})",
                COMMANDS.join(", ")
            )),
        }
    }

    /// (Re)start server `word`; a Galera node also waits until Synced.
    fn restart(&mut self, word: Option<&str>) -> Answer {
        let n = self.server_index(word)?;
        if let Servers::Galera(g) = &mut self.servers {
            g.restart(n);
            let pid = g.server(n).pid();
            return Ok(json!({"ok": true, "pid": pid, "transfer": g.last_transfer(n)}));
        }
        let s = self.servers.get_mut(n).expect("index checked");
        s.restart();
        Ok(json!({"ok": true, "pid": s.pid()}))
    }

    /// Stop the proxy, then every server, in parallel (their `Drop` kills
    /// them and removes their directories).
    fn shut_down(self) {
        let t0 = std::time::Instant::now();
        let Harness {
            proxy,
            servers,
            mysql8,
            ..
        } = self;
        drop(proxy);
        drop(mysql8);
        let servers = match servers {
            Servers::None => Vec::new(),
            Servers::One(s) => vec![s],
            Servers::Cluster(t) => {
                let (p, mut rs) = t.into_parts();
                rs.insert(0, p);
                rs
            }
            Servers::Galera(g) => g.into_servers(),
        };
        std::thread::scope(|sc| {
            for s in servers {
                sc.spawn(move || drop(s));
            }
        });
        log(&format!("stopped in {:?}", t0.elapsed()));
    }
}

fn parse_mode(words: &[&str]) -> Result<Mode, String> {
    let num = |what: &str| -> Result<u64, String> {
        match words {
            [_, v] => v
                .parse::<u64>()
                .map_err(|_| format!("{} needs {what}, got {v:?}", words[0])),
            _ => Err(format!("usage: mode {} {what}", words[0])),
        }
    };
    let bare = || -> Result<(), String> {
        if words.len() == 1 {
            Ok(())
        } else {
            Err(format!("mode {} takes no argument", words[0]))
        }
    };
    let Some(name) = words.first() else {
        return Err("usage: mode pass|blackhole|reset|latency MS|drip MS|close-after BYTES".into());
    };
    Ok(match *name {
        "pass" => bare().map(|()| Mode::Pass)?,
        "blackhole" | "black-hole" => bare().map(|()| Mode::BlackHole)?,
        "reset" => bare().map(|()| Mode::Reset)?,
        "latency" => Mode::Latency(Duration::from_millis(num("milliseconds")?)),
        "drip" => Mode::Drip(Duration::from_millis(num("milliseconds")?)),
        "close-after" => Mode::CloseAfter(num("a byte count")? as usize),
        other => {
            return Err(format!(
                "unknown mode {other:?} (pass, blackhole, reset, latency MS, drip MS, close-after BYTES)"
            ))
        }
    })
}

fn mode_name(m: Mode) -> String {
    match m {
        Mode::Pass => "pass".into(),
        Mode::BlackHole => "blackhole".into(),
        Mode::Reset => "reset".into(),
        Mode::Latency(d) => format!("latency {}", d.as_millis()),
        Mode::Drip(d) => format!("drip {}", d.as_millis()),
        Mode::CloseAfter(n) => format!("close-after {n}"),
    }
}

/// The first word of `s` and the rest (leading blanks trimmed, the rest's
/// inner spacing kept).
fn split_word(s: &str) -> (&str, &str) {
    let s = s.trim();
    match s.find(char::is_whitespace) {
        Some(i) => (&s[..i], s[i..].trim_start()),
        None => (s, ""),
    }
}

fn panic_text(p: &(dyn Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "panicked".to_string()
    }
}

// ---------------------------------------------------------------------------
// Stdout and stdin.

/// `v` on one line, with `ready` / `ok` as the first key (serde_json's
/// maps are sorted otherwise).
fn one_line(v: &Value) -> String {
    const LEAD: [&str; 2] = ["ready", "ok"];
    let Value::Object(m) = v else {
        return v.to_string();
    };
    let lead = LEAD.iter().filter_map(|k| m.get_key_value(*k));
    let rest = m.iter().filter(|(k, _)| !LEAD.contains(&k.as_str()));
    let fields: Vec<String> = lead
        .chain(rest)
        .map(|(k, x)| format!("{}:{x}", Value::from(k.as_str())))
        .collect();
    format!("{{{}}}", fields.join(","))
}

/// Write one JSON line to stdout; false if nobody reads it any more.
fn emit(v: &Value) -> bool {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", one_line(v))
        .and_then(|()| out.flush())
        .is_ok()
}

enum Input {
    Line(String),
    Eof,
    Signal(i32),
}

/// Lines of fd 0, read with `poll` so that a signal is noticed within
/// `POLL_MS` even when no input comes.
struct Stdin {
    file: ManuallyDrop<File>,
    buf: Vec<u8>,
    eof: bool,
}

impl Stdin {
    fn new() -> Stdin {
        Stdin {
            // SAFETY: fd 0 stays open for the life of the process; the File is
            // never dropped (ManuallyDrop), so it is not closed here.
            file: ManuallyDrop::new(unsafe { File::from_raw_fd(0) }),
            buf: Vec::new(),
            eof: false,
        }
    }

    fn next(&mut self) -> Input {
        loop {
            let sig = stop_signal();
            if sig != 0 {
                return Input::Signal(sig);
            }
            if let Some(i) = self.buf.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.buf.drain(..=i).collect();
                return Input::Line(String::from_utf8_lossy(&line).trim().to_string());
            }
            if self.eof {
                if self.buf.is_empty() {
                    return Input::Eof;
                }
                // A last line without a newline.
                let line = std::mem::take(&mut self.buf);
                return Input::Line(String::from_utf8_lossy(&line).trim().to_string());
            }
            let mut pfd = libc::pollfd {
                fd: 0,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd, bounded wait.
            let r = unsafe { libc::poll(&mut pfd, 1, POLL_MS) };
            if r <= 0 {
                continue; // timeout or EINTR: look at the flag again
            }
            let mut chunk = [0u8; 8192];
            match self.file.read(&mut chunk) {
                Ok(0) => self.eof = true,
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    log(&format!("stdin: {e}: stopping"));
                    self.eof = true;
                }
            }
        }
    }
}

fn log(msg: &str) {
    eprintln!("staunch-testkit: {msg}");
}

// ---------------------------------------------------------------------------

fn main() -> ExitCode {
    install_signal_handlers();
    std::panic::set_hook(Box::new(|info| log(&info.to_string())));
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let args = match parse_args(&argv) {
        Ok(Parsed::Help) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Ok(Parsed::Run(a)) => a,
        Err(e) => {
            log(&e);
            eprint!("{USAGE}");
            emit(&json!({"ready": false, "error": e}));
            return ExitCode::from(2);
        }
    };
    let harness = match catch_unwind(AssertUnwindSafe(|| Harness::start(&args))) {
        Ok(h) => h,
        Err(p) => {
            let e = panic_text(&*p);
            emit(&json!({"ready": false, "error": e}));
            return ExitCode::from(1);
        }
    };
    let sig = stop_signal();
    if sig != 0 {
        harness.shut_down();
        emit(&json!({"ready": false, "error": format!("signal {sig} during startup")}));
        return ExitCode::from(128 + sig as u8);
    }
    let mut harness = harness;
    if !emit(&harness.ready()) {
        harness.shut_down();
        return ExitCode::from(1);
    }
    log(&format!("ready ({}); reading commands", args.kind.name()));
    let mut stdin = Stdin::new();
    loop {
        match stdin.next() {
            Input::Eof => {
                log("end of stdin: stopping");
                harness.shut_down();
                break ExitCode::SUCCESS;
            }
            Input::Signal(sig) => {
                log(&format!("signal {sig}: stopping"));
                harness.shut_down();
                break ExitCode::from(128 + sig as u8);
            }
            Input::Line(line) if line == "quit" => {
                log("quit: stopping");
                harness.shut_down();
                emit(&json!({"ok": true}));
                break ExitCode::SUCCESS;
            }
            Input::Line(line) => {
                let answer = catch_unwind(AssertUnwindSafe(|| harness.command(&line)))
                    .unwrap_or_else(|p| Err(panic_text(&*p)));
                let v = match answer {
                    Ok(v) => v,
                    Err(e) => json!({"ok": false, "error": e}),
                };
                if !emit(&v) {
                    log("stdout closed: stopping");
                    harness.shut_down();
                    break ExitCode::from(1);
                }
            }
        }
    }
}
