//! `staunch drill`: set-up, the fault schedule, and the final check of every
//! acknowledged write. What is measured lives in `workload`, the verdicts and
//! the report in `report`.

use std::collections::{HashMap, HashSet};
use std::net::{SocketAddr, ToSocketAddrs};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use staunch::config::redact_url;
use staunch::{Event, Pool};

use crate::report::{Bounds, NotRun, Report, Verification};
use crate::support::mariadb::{APP_USER, DB_NAME};
use crate::support::{MariaDb, Mode, Proxy};
use crate::workload::{self, fmt_d, lock, Acked, Kind, Shared, Window};
use crate::{panic_text, race, signals};
use crate::{EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_SETUP};

pub struct Options {
    pub url: Option<String>,
    pub json: Option<PathBuf>,
    pub soak: Option<Duration>,
    pub seed: Option<u64>,
    pub threads: u32,
    pub quiet: bool,
}

/// The pool knobs of the drill (a --url may override any of them).
const DRILL_KNOBS: &[(&str, &str)] = &[
    ("max_size", "8"),
    ("min_idle", "2"),
    ("connect_timeout", "1s"),
    ("connection_timeout", "2s"),
    ("validation_timeout", "500ms"),
    ("query_timeout", "2s"),
];

/// Normal load before the first fault.
const BASELINE: Duration = Duration::from_secs(5);
/// Normal load after each fault of the fixed sequence.
const GAP: Duration = Duration::from_secs(8);
/// How long a black hole or a freeze lasts in the fixed sequence.
const HOLD: Duration = Duration::from_secs(3);
/// How long a killed server stays down before it is restarted.
const DOWN: Duration = Duration::from_secs(1);
/// How long the keepalive race runs.
const RACE: Duration = Duration::from_secs(3);
/// Longest wait for a first success after a fault before moving on (the
/// verdict then says "no successful operation").
const RECOVERY_WAIT: Duration = Duration::from_secs(15);

/// Where the faults are injected.
enum Env {
    /// Two throwaway servers; the proxy (the VIP) points at `servers[target]`.
    Local {
        servers: Vec<MariaDb>,
        target: usize,
        proxy: Proxy,
    },
    /// An existing server behind a local chaos proxy; `admin` is a pool
    /// straight to the server (not through the proxy).
    Remote {
        server: SocketAddr,
        proxy: Proxy,
        admin: Pool,
    },
}

impl Env {
    fn proxy(&self) -> &Proxy {
        match self {
            Env::Local { proxy, .. } | Env::Remote { proxy, .. } => proxy,
        }
    }

    /// Faults possible here, in the order of the fixed sequence.
    fn faults(&self) -> Vec<Kind> {
        match self {
            Env::Local { .. } => vec![
                Kind::KillConnections,
                Kind::VipBlackHole,
                Kind::Freeze,
                Kind::KillRestart,
                Kind::KeepaliveRace,
            ],
            Env::Remote { .. } => vec![
                Kind::KillConnections,
                Kind::VipBlackHole,
                Kind::KeepaliveRace,
            ],
        }
    }

    fn label(&self, kind: Kind, hold: Duration) -> String {
        let local = matches!(self, Env::Local { .. });
        match kind {
            Kind::Baseline => "baseline (no fault)".into(),
            Kind::KillConnections if local => "server-side KILL of every pooled connection".into(),
            Kind::KillConnections => "server-side KILL of the pool's connections".into(),
            Kind::VipBlackHole if local => {
                format!("A: VIP's server dies ({}), VIP moves", fmt_hold(hold))
            }
            Kind::VipBlackHole => format!("A: black hole ({}), same server back", fmt_hold(hold)),
            Kind::Freeze => format!("frozen server (SIGSTOP {})", fmt_hold(hold)),
            Kind::KillRestart => "server killed (kill -9) and restarted".into(),
            Kind::KeepaliveRace => "C: keepalive racing borrowers".into(),
        }
    }

    /// Injects `kind` and ends it (`sh.end_fault`) when it is over.
    fn inject(
        &mut self,
        kind: Kind,
        hold: Duration,
        w: &Window,
        sh: &Shared,
        url: &str,
    ) -> Result<(), String> {
        match kind {
            Kind::Baseline => Ok(()),
            Kind::KillConnections => self.kill_connections(w, sh),
            Kind::VipBlackHole => self.black_hole(hold, w, sh),
            Kind::Freeze => self.freeze(hold, w, sh),
            Kind::KillRestart => self.kill_restart(hold, w, sh),
            Kind::KeepaliveRace => {
                sh.set_phase("C: race");
                sh.event(format!(
                    "a second pool ({} connections, keepalive every 10ms) races {} borrowers for {}",
                    race::CONNECTIONS,
                    race::BORROWERS,
                    fmt_hold(hold)
                ));
                let r = race::run(url, hold)?;
                sh.end_fault(w);
                sh.event(format!(
                    "race over: {} queries, {} validations ({} keepalive checks), {} ownership violations, {} crossed answers",
                    r.queries, r.validations, r.keepalives, r.violations + r.pool_violations, r.crossed
                ));
                *lock(&w.race) = Some(r);
                Ok(())
            }
        }
    }

    fn kill_connections(&mut self, w: &Window, sh: &Shared) -> Result<(), String> {
        sh.set_phase("KILL");
        match self {
            Env::Local {
                servers, target, ..
            } => {
                let s = &servers[*target];
                let n = s.kill_connections(APP_USER);
                sh.end_fault(w);
                let what = format!(
                    "KILL CONNECTION of {n} sessions of `{APP_USER}` on {}",
                    s.addr()
                );
                sh.event(&what);
                w.note(what);
            }
            Env::Remote { admin, server, .. } => {
                let ids: Vec<u64> = lock(&sh.conn_ids).drain().map(|(_, t)| t).collect();
                let mut c = admin.get().map_err(|e| format!("admin connection: {e}"))?;
                let mut n = 0;
                for id in ids {
                    match c.query_drop(format!("KILL CONNECTION {id}")) {
                        Ok(()) => n += 1,
                        // 1094: unknown thread id (the pool closed it already).
                        Err(mysql::Error::MySqlError(e)) if e.code == 1094 => {}
                        Err(e) => return Err(format!("KILL CONNECTION {id}: {e}")),
                    }
                }
                sh.end_fault(w);
                let what = format!("KILL CONNECTION of the pool's {n} sessions on {server}");
                sh.event(&what);
                w.note(what);
            }
        }
        Ok(())
    }

    fn black_hole(&mut self, hold: Duration, w: &Window, sh: &Shared) -> Result<(), String> {
        sh.set_phase("A: black hole");
        let proxy = self.proxy();
        proxy.set_mode(Mode::BlackHole);
        proxy.sever_all();
        sh.event(
            "VIP: its server is gone: open connections severed, new connects accepted and never greeted",
        );
        let t = Instant::now();
        let completed = signals::sleep(hold);
        let held = t.elapsed();
        match self {
            Env::Local {
                servers,
                target,
                proxy,
            } => {
                let to = 1 - *target;
                proxy.set_target(servers[to].addr());
                proxy.set_mode(Mode::Pass);
                *target = to;
                sh.end_fault(w);
                let what = format!(
                    "VIP moved to server {} ({}) after {}",
                    to + 1,
                    servers[to].addr(),
                    fmt_d(held)
                );
                sh.event(&what);
                w.note(what);
            }
            Env::Remote { proxy, server, .. } => {
                proxy.set_mode(Mode::Pass);
                sh.end_fault(w);
                let what = format!("VIP passes to {server} again after {}", fmt_d(held));
                sh.event(&what);
                w.note(what);
            }
        }
        if completed {
            sh.set_phase("A: VIP back");
        }
        Ok(())
    }

    fn freeze(&mut self, hold: Duration, w: &Window, sh: &Shared) -> Result<(), String> {
        let Env::Local {
            servers, target, ..
        } = self
        else {
            return Err("a freeze needs a local server".into());
        };
        let s = &servers[*target];
        sh.set_phase("frozen");
        s.freeze();
        sh.event(format!(
            "SIGSTOP to mariadbd pid {} ({}): TCP still accepted, nothing answered",
            s.pid(),
            s.addr()
        ));
        // Thawed whatever happens, even on Ctrl-C.
        let t = Instant::now();
        signals::sleep(hold);
        s.thaw();
        sh.end_fault(w);
        let what = format!(
            "SIGCONT after {}: {} answers again",
            fmt_d(t.elapsed()),
            s.addr()
        );
        sh.event(&what);
        w.note(what);
        Ok(())
    }

    fn kill_restart(&mut self, down: Duration, w: &Window, sh: &Shared) -> Result<(), String> {
        let Env::Local {
            servers, target, ..
        } = self
        else {
            return Err("kill -9 needs a local server".into());
        };
        let s = &mut servers[*target];
        sh.set_phase("killed");
        let pid = s.pid();
        s.kill9();
        sh.event(format!(
            "kill -9 of mariadbd pid {pid}: {} refuses connections",
            s.addr()
        ));
        if !signals::sleep(down) {
            return Ok(());
        }
        sh.set_phase("restarting");
        let t = Instant::now();
        s.restart();
        sh.end_fault(w);
        let what = format!(
            "killed, down {}, restarted on the same port in {} (pid {})",
            fmt_hold(down),
            fmt_d(t.elapsed()),
            s.pid()
        );
        sh.event(format!(
            "restarted on {} in {}",
            s.addr(),
            fmt_d(t.elapsed())
        ));
        w.note(what);
        Ok(())
    }

    /// Every id in the drill's table, over every server the writes could
    /// have gone to.
    fn stored_ids(&self, table: &str) -> Result<HashSet<u64>, String> {
        let q = format!("SELECT id FROM {table}");
        let mut all = HashSet::new();
        match self {
            Env::Local { servers, .. } => {
                for s in servers {
                    let ids: Vec<u64> = catch_unwind(AssertUnwindSafe(|| s.admin().query(&q)))
                        .map_err(|p| panic_text(&*p))?
                        .map_err(|e| format!("{}: {e}", s.addr()))?;
                    all.extend(ids);
                }
            }
            Env::Remote { admin, server, .. } => {
                let mut c = admin.get().map_err(|e| e.to_string())?;
                let ids: Vec<u64> = c.query(&q).map_err(|e| format!("{server}: {e}"))?;
                all.extend(ids);
            }
        }
        Ok(all)
    }
}

fn fmt_hold(d: Duration) -> String {
    let s = d.as_secs_f64();
    if (s - s.round()).abs() < 1e-9 {
        format!("{s:.0}s")
    } else {
        format!("{s:.1}s")
    }
}

/// A small xorshift generator for the soak's schedule (not for secrets).
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        // splitmix64 of the seed, so that small seeds differ at once.
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Rng((z ^ (z >> 31)) | 1)
    }
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// A duration in [lo, hi] ms, in 100 ms steps.
    fn millis(&mut self, lo: u64, hi: u64) -> Duration {
        Duration::from_millis(lo + self.below((hi - lo) / 100 + 1) * 100)
    }
}

pub fn run(o: Options) -> u8 {
    let env = match &o.url {
        None => setup_local(),
        Some(u) => setup_remote(u),
    };
    let (env, pool_url, table, version) = match env {
        Ok(x) => x,
        Err(e) => {
            eprintln!("staunch drill: cannot set up: {e}");
            return if signals::interrupted() {
                EXIT_INTERRUPTED
            } else {
                EXIT_SETUP
            };
        }
    };
    drive(o, env, pool_url, table, version)
}

type Setup = (Env, String, String, String);

fn create_table_sql(table: &str) -> String {
    format!(
        "CREATE TABLE {table} (id BIGINT UNSIGNED NOT NULL PRIMARY KEY, \
         worker INT UNSIGNED NOT NULL, seq BIGINT UNSIGNED NOT NULL) ENGINE=InnoDB"
    )
}

fn table_name() -> String {
    format!("staunch_drill_{}", std::process::id())
}

fn setup_local() -> Result<Setup, String> {
    println!("starting two throwaway MariaDB servers ...");
    let t = Instant::now();
    let started = catch_unwind(|| {
        thread::scope(|s| {
            let a = s.spawn(MariaDb::start);
            let b = s.spawn(MariaDb::start);
            (a.join(), b.join())
        })
    });
    let servers = match started {
        Ok((Ok(a), Ok(b))) => vec![a, b],
        Ok((Err(p), _)) | Ok((_, Err(p))) | Err(p) => {
            return Err(format!(
                "{}\n(the drill needs mariadbd and mariadb-install-db: run scripts/drill.sh, \
                 which installs them, or point the drill at a server with --url)",
                panic_text(&*p)
            ))
        }
    };
    if signals::interrupted() {
        return Err("interrupted".into());
    }
    let table = table_name();
    let version = catch_unwind(AssertUnwindSafe(|| {
        for s in &servers {
            s.sql(&create_table_sql(&table));
        }
        servers[0]
            .query_string("SELECT VERSION()")
            .unwrap_or_default()
    }))
    .map_err(|p| panic_text(&*p))?;
    println!(
        "  servers   MariaDB {version}: server 1 on {}, server 2 on {} (ready in {})",
        servers[0].addr(),
        servers[1].addr(),
        fmt_d(t.elapsed())
    );
    let proxy = Proxy::start(servers[0].addr());
    println!("  VIP       chaos proxy on {} -> server 1", proxy.addr());
    let knobs: Vec<String> = DRILL_KNOBS
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let url = format!(
        "mysql://{APP_USER}:{}@{}/{DB_NAME}?{}",
        crate::support::mariadb::APP_PASS,
        proxy.addr(),
        knobs.join("&")
    );
    Ok((
        Env::Local {
            servers,
            target: 0,
            proxy,
        },
        url,
        table,
        version,
    ))
}

fn setup_remote(url: &str) -> Result<Setup, String> {
    let cfg = staunch::Config::from_url(url).map_err(|e| e.to_string())?;
    let ep = cfg.connect().endpoint();
    if ep.starts_with("unix:") {
        return Err(
            "--url must name a TCP address: the drill puts a chaos proxy in front of it".into(),
        );
    }
    let server = ep
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {ep}: {e}"))?
        .next()
        .ok_or_else(|| format!("{ep} resolves to no address"))?;
    let admin = staunch::Builder::new()
        .url(url)
        .max_size(2)
        .min_idle(0)
        .query_timeout(Some(Duration::from_secs(10)))
        .build()
        .map_err(|e| e.to_string())?;
    let budget = admin.config().connect_timeout() + Duration::from_millis(500);
    let table = table_name();
    let version = {
        let mut c = admin
            .get_timeout(budget)
            .map_err(|e| format!("{}: {e}", redact_url(url)))?;
        let v: Option<String> = c
            .query_first("SELECT VERSION()")
            .map_err(|e| e.to_string())?;
        c.query_drop(create_table_sql(&table))
            .map_err(|e| format!("cannot create the drill's table {table}: {e}"))?;
        v.unwrap_or_default()
    };
    let proxy = Proxy::start(server);
    println!("  server    {version} on {server}");
    println!(
        "  VIP       local chaos proxy on {} -> {server}",
        proxy.addr()
    );
    let pool_url = via_proxy(url, proxy.port())?;
    Ok((
        Env::Remote {
            server,
            proxy,
            admin,
        },
        pool_url,
        table,
        version,
    ))
}

/// `url` with its host and port replaced by the proxy's, and the drill's
/// knobs added where the url does not set them.
fn via_proxy(url: &str, port: u16) -> Result<String, String> {
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| "the url must start with mysql://".to_string())?;
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let userinfo = authority
        .rsplit_once('@')
        .map(|(u, _)| format!("{u}@"))
        .unwrap_or_default();
    let mut out = format!("{scheme}://{userinfo}127.0.0.1:{port}{tail}");
    let present: HashSet<&str> = tail
        .split_once('?')
        .map(|(_, q)| q.split('&').filter_map(|p| p.split('=').next()).collect())
        .unwrap_or_default();
    for (k, v) in DRILL_KNOBS {
        if !present.contains(k) {
            let sep = if !out.contains('?') {
                "?"
            } else if out.ends_with('?') || out.ends_with('&') {
                ""
            } else {
                "&"
            };
            out.push_str(&format!("{sep}{k}={v}"));
        }
    }
    Ok(out)
}

fn drive(o: Options, mut env: Env, pool_url: String, table: String, version: String) -> u8 {
    let sink = Arc::new(workload::Sink::new());
    let listener = {
        let sink = sink.clone();
        move |e: &Event| match e {
            Event::ConnectFailed { error, attempt, .. } if *attempt == 1 => {
                sink.push(format!("pool: a connect failed: {error}"));
            }
            Event::Recovered {
                failures, outage, ..
            } => sink.push(format!(
                "pool: connects work again after {} ({} outage)",
                if *failures == 1 {
                    "1 failed attempt".to_string()
                } else {
                    format!("{failures} failed attempts")
                },
                fmt_d(*outage)
            )),
            _ => {}
        }
    };
    let pool = match staunch::Builder::new()
        .url(&pool_url)
        .event_listener(Arc::new(listener))
        .build()
    {
        Ok(p) => p,
        Err(e) => {
            eprintln!("staunch drill: cannot open the pool: {e}");
            return EXIT_SETUP;
        }
    };
    let bounds = Bounds::of(pool.config());
    println!("  pool      {}", redact_url(&pool_url));
    println!(
        "  workload  {} threads: reads (SELECT ? of a tag of their own) and writes \
         (BEGIN; INSERT a unique id; COMMIT) into {table}",
        o.threads
    );
    println!(
        "  survived  every get() within {} (connection_timeout + 500ms), a first success within {} \
         of the fault's end (connect_timeout + 2s), no acknowledged write lost, no crossed answer",
        fmt_d(bounds.wait),
        fmt_d(bounds.recovery)
    );
    let seed = o.soak.map(|_| {
        o.seed.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64 % 1_000_000)
                .unwrap_or(1)
        })
    });
    if let (Some(d), Some(seed)) = (o.soak, seed) {
        println!(
            "  soak      {} of faults picked at random, seed {seed} (repeat with --soak {} --seed {seed})",
            fmt_hold(d),
            staunch::config::fmt_duration(d)
        );
    }
    println!();

    let remote = matches!(env, Env::Remote { .. });
    let sh = Shared::new(pool.clone(), table.clone(), remote, sink);
    let mut workers = Vec::new();
    for n in 0..o.threads {
        let sh2 = sh.clone();
        match thread::Builder::new()
            .name(format!("drill-worker-{n}"))
            .spawn(move || workload::worker(sh2, n))
        {
            Ok(h) => workers.push(h),
            Err(e) => {
                eprintln!("staunch drill: cannot start a worker thread: {e}");
                sh.stop.store(true, SeqCst);
                break;
            }
        }
    }
    let reporter_done = Arc::new(AtomicBool::new(false));
    let reporter = {
        let (sh2, done) = (sh.clone(), reporter_done.clone());
        let quiet = o.quiet;
        thread::Builder::new()
            .name("drill-reporter".into())
            .spawn(move || workload::reporter(sh2, quiet, done))
            .ok()
    };

    sh.say("baseline: normal load, no fault");
    signals::sleep(if o.soak.is_some() {
        Duration::from_secs(3)
    } else {
        BASELINE
    });

    match (o.soak, seed) {
        (Some(d), Some(seed)) => soak(&mut env, &sh, &pool_url, d, seed),
        _ => fixed(&mut env, &sh, &pool_url),
    }
    let interrupted = signals::interrupted();

    sh.say(if interrupted {
        "interrupted: stopping the workload"
    } else {
        "stopping the workload"
    });
    sh.stop.store(true, SeqCst);
    let mut acked: Vec<Acked> = Vec::new();
    for h in workers {
        match h.join() {
            Ok(a) => acked.extend(a),
            Err(_) => eprintln!("staunch drill: a worker thread panicked"),
        }
    }
    sh.finish();
    reporter_done.store(true, SeqCst);
    if let Some(r) = reporter {
        let _ = r.join();
    }
    let final_stats = pool.stats();
    pool.close();
    // Make sure the servers can be read (a Ctrl-C may have come mid-fault).
    env.proxy().set_mode(Mode::Pass);

    let verification = if interrupted {
        Verification::Skipped("interrupted".into())
    } else {
        sh.say(if remote {
            "reading every acknowledged write back from the server"
        } else {
            "reading every acknowledged write back from both servers"
        });
        match env.stored_ids(&table) {
            Ok(stored) => {
                let mut missing_by_window: HashMap<usize, u64> = HashMap::new();
                let mut missing = Vec::new();
                for (id, w) in &acked {
                    if !stored.contains(id) {
                        *missing_by_window.entry(*w).or_default() += 1;
                        missing.push(*id);
                    }
                }
                Verification::Done {
                    acked: acked.len() as u64,
                    found: acked.len() as u64 - missing.len() as u64,
                    missing_by_window,
                    missing_sample: missing.into_iter().take(10).collect(),
                }
            }
            Err(e) => Verification::Skipped(format!("could not read the table back: {e}")),
        }
    };

    if let Env::Remote { admin, .. } = &env {
        match admin.get().map_err(|e| e.to_string()).and_then(|mut c| {
            c.query_drop(format!("DROP TABLE IF EXISTS {table}"))
                .map_err(|e| e.to_string())
        }) {
            Ok(()) => println!("[{}] dropped table {table}", workload::stamp(sh.elapsed())),
            Err(e) => eprintln!("staunch drill: could not drop {table} ({e}): drop it by hand"),
        }
        admin.close();
    }

    let mut not_run = Vec::new();
    if remote {
        for (label, key) in [
            ("frozen server (SIGSTOP)", "frozen_server"),
            (
                "server killed (kill -9) and restarted",
                "server_killed_restarted",
            ),
        ] {
            not_run.push(NotRun {
                label: label.into(),
                key: key.into(),
                reason: "not run (needs a local server: run without --url)".into(),
            });
        }
    }
    for (label, key) in [
        (
            "B: idle replica connections expire",
            "incident_b_idle_replicas",
        ),
        (
            "D: primary dies, replica promoted",
            "incident_d_primary_promotion",
        ),
    ] {
        not_run.push(NotRun {
            label: label.into(),
            key: key.into(),
            reason: "not run (needs topology support)".into(),
        });
    }

    let report = Report {
        mode: if remote { "url" } else { "local" },
        url: redact_url(&pool_url),
        server_version: version,
        threads: o.threads,
        soak: o.soak,
        seed,
        bounds,
        windows: sh.windows(),
        not_run,
        verification,
        final_stats,
        interrupted,
        duration: sh.elapsed(),
    };
    println!();
    report.print();
    if let Some(path) = &o.json {
        match std::fs::write(path, report.to_json()) {
            Ok(()) => println!("report written to {}", path.display()),
            Err(e) => eprintln!("staunch drill: cannot write {}: {e}", path.display()),
        }
    }
    drop(env); // stops the proxy and the servers
    if interrupted {
        EXIT_INTERRUPTED
    } else if report.passed() {
        EXIT_OK
    } else {
        EXIT_FAILED
    }
}

/// The fixed sequence: every fault possible here once.
fn fixed(env: &mut Env, sh: &Arc<Shared>, url: &str) {
    let faults = env.faults();
    let total = faults.len();
    for (i, kind) in faults.into_iter().enumerate() {
        if signals::interrupted() {
            return;
        }
        let hold = match kind {
            Kind::KillRestart => DOWN,
            Kind::KeepaliveRace => RACE,
            _ => HOLD,
        };
        let label = format!("{} {}", i + 1, env.label(kind, hold));
        sh.say(format!(
            "fault {} of {total}: {}",
            i + 1,
            env.label(kind, hold)
        ));
        run_fault(env, sh, url, kind, hold, &label);
        let gap = if kind == Kind::KeepaliveRace {
            Duration::from_secs(3)
        } else {
            GAP
        };
        settle(sh, kind, gap);
    }
}

/// Faults picked at random for `duration`.
fn soak(env: &mut Env, sh: &Arc<Shared>, url: &str, duration: Duration, seed: u64) {
    let mut rng = Rng::new(seed);
    let faults = env.faults();
    let start = Instant::now();
    let mut n = 0;
    while start.elapsed() < duration && !signals::interrupted() {
        let kind = faults[rng.below(faults.len() as u64) as usize];
        let hold = match kind {
            Kind::KillRestart => rng.millis(300, 2500),
            Kind::KeepaliveRace => rng.millis(1000, 3000),
            _ => rng.millis(500, 4000),
        };
        n += 1;
        let label = format!("#{n} {}", env.label(kind, hold));
        sh.say(format!("fault #{n}: {}", env.label(kind, hold)));
        run_fault(env, sh, url, kind, hold, &label);
        let left = duration.saturating_sub(start.elapsed());
        settle(sh, kind, rng.millis(2000, 5000).min(left));
    }
}

fn run_fault(env: &mut Env, sh: &Arc<Shared>, url: &str, kind: Kind, hold: Duration, label: &str) {
    let w = sh.begin(kind, label);
    let r = catch_unwind(AssertUnwindSafe(|| env.inject(kind, hold, &w, sh, url)));
    let failed = match r {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(e),
        Err(p) => Some(panic_text(&*p)),
    };
    if let Some(e) = failed {
        sh.event(format!("could not inject the fault: {e}"));
        w.fail(format!("could not inject the fault: {e}"));
        // Whatever state the proxy was left in, let traffic through again.
        env.proxy().set_mode(Mode::Pass);
    }
    if signals::interrupted() {
        w.interrupted.store(true, SeqCst);
    } else if w.fault_end().is_none() {
        sh.end_fault(&w);
    }
}

/// Normal load after a fault: first until the workload succeeds again (or
/// RECOVERY_WAIT passes), then for the rest of `gap`.
fn settle(sh: &Shared, kind: Kind, gap: Duration) {
    let start = Instant::now();
    let w = sh.current();
    if kind.has_recovery() {
        sh.set_phase("recovering");
        while w.recovery().is_none() && start.elapsed() < RECOVERY_WAIT {
            if !signals::sleep(Duration::from_millis(10)) {
                w.interrupted.store(true, SeqCst);
                return;
            }
        }
    }
    sh.set_phase("normal load");
    signals::sleep(gap.saturating_sub(start.elapsed()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxy_url_keeps_user_db_and_knobs() {
        let u = via_proxy("mysql://u:p@db.example:3307/shop?max_size=3", 4000).unwrap();
        assert!(
            u.starts_with("mysql://u:p@127.0.0.1:4000/shop?max_size=3&min_idle=2"),
            "{u}"
        );
        assert!(!u.contains("max_size=8"), "{u}");
        let u = via_proxy("mysql://db.example", 4000).unwrap();
        assert!(u.starts_with("mysql://127.0.0.1:4000?max_size=8&"), "{u}");
    }

    #[test]
    fn rng_is_repeatable() {
        let a: Vec<u64> = {
            let mut r = Rng::new(7);
            (0..5).map(|_| r.below(100)).collect()
        };
        let mut r = Rng::new(7);
        let b: Vec<u64> = (0..5).map(|_| r.below(100)).collect();
        assert_eq!(a, b);
    }
}
