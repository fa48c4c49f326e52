//! The `staunch` command line.
//!
//! - `staunch drill`: a mixed read/write workload through a chaos proxy (the
//!   "VIP") in front of throwaway MariaDB servers, while faults are injected one
//!   after another; prints how long each took to notice and to recover from,
//!   the longest `get()` wait, and whether every acknowledged write survived.
//! - `staunch check URL`: connects once, with the pool's hard deadlines, and
//!   says what the server is, or exactly why it could not be reached.
//! - `staunch monitor URL`: runs the primary monitor of a topology pool on
//!   its own and prints what it finds, MHA-style, until Ctrl-C.
//!
//! The throwaway servers and the chaos proxy come from the test kit
//! (`staunch-testkit`), the same code the integration tests use.

mod check;
mod drill;
mod html;
mod json;
mod monitor;
mod race;
mod report;
mod soak;
mod vitals;
mod workload;

use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};

/// Exit code: every fault that ran was survived / the server answered.
const EXIT_OK: u8 = 0;
/// Exit code: a fault was not survived / the server could not be reached.
const EXIT_FAILED: u8 = 1;
/// Exit code: the drill could not be set up (no MariaDB, bad URL, ...).
const EXIT_SETUP: u8 = 2;
/// Exit code: interrupted (Ctrl-C or SIGTERM); nothing is left running.
const EXIT_INTERRUPTED: u8 = 130;

#[derive(Parser, Debug)]
#[command(
    name = "staunch",
    version,
    about = "staunch: a MySQL/MariaDB connection pool that never hangs. \
             This tool shows it under faults (drill), checks a server (check) and \
             watches a primary and its replicas (monitor).",
    propagate_version = true
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a workload through a chaos proxy while faults are injected, and
    /// report how the pool held up (the project's main demo).
    #[command(long_about = DRILL_HELP)]
    Drill(DrillArgs),
    /// Connect once and print what the server is, or exactly why it could not
    /// be reached.
    ///
    /// The connect goes through a staunch pool, so it is bounded by
    /// connect_timeout (from the URL; default 3s) even when the server accepts
    /// TCP and never sends its greeting. Prints the version, host name, port,
    /// read_only, binary log, replication status (SHOW SLAVE STATUS, summed
    /// up) and uptime; or the staunch error that says why it could not
    /// connect. Exit code 0 if the server answered, 1 if not.
    Check(CheckArgs),
    /// Run the primary monitor of a topology pool on its own and print what
    /// it finds, MHA-style, until Ctrl-C.
    #[command(long_about = MONITOR_HELP)]
    Monitor(MonitorArgs),
    /// Start a throwaway primary and two replicas (as the drill's B and D
    /// do) and print a URL for `staunch monitor`; then read commands from
    /// stdin: freeze, thaw, promote, status, quit. For trying the monitor.
    #[command(hide = true)]
    Cluster,
}

const MONITOR_HELP: &str = "\
Run the primary monitor of a topology pool on its own and print what it finds,
MHA-style (timestamp - [level] text), until Ctrl-C (exit 0).

URL: mysql://user:pass@h1:p1,h2:p2,h3:p3/db?knob=value&... The first host is
the initial primary, the others replicas; with several hosts
topology=replication is implied. The pool opens with monitor=true and
min_idle=0: it holds no application connection, only the monitor's probes
connect (as monitor_user/monitor_password if given, else as the URL's user,
who needs the REPLICATION CLIENT or SLAVE MONITOR privilege for SHOW SLAVE
STATUS).

Printed: every monitor event (a failed probe of the primary, an error that
proves it alive, a suspected partition, the primary declared dead, a writer
change, split brain, a deferred failover, a replica lagging or back, a stale
primary writable again, transactions a promoted replica lacks) and
every state change (writer, a host's health), as they happen; and once per
ping_interval the writer and each host's health and replication lag.

Knobs that matter (URL parameters, defaults in brackets):
  ping_type              select: SELECT 1 on a kept connection; connect: a new
                         connection each time; insert: upsert into
                         heartbeat_table [select]
  ping_interval          time between probes, and between status lines [1s]
  ping_timeout           hard bound on one probe or host check [2s]
  failure_threshold      failed probes in a row before the secondary check [4]
  secondary_check        replicas: a replica still sees the primary only if
                         what it received from it advanced since the primary
                         stopped answering (a frozen primary keeps the I/O
                         thread at Yes); none: skip [replicas]
  min_failover_interval  least time between two writer changes [60s]
  max_replication_lag    a replica further behind gets no reads [30s]
  alive_error_codes      server errors that prove the primary alive [MHA's list]
  connect_timeout        bound on the monitor's connects too [3s]
Every host is probed on a kept connection (read_only, server_id, GTID
positions, SHOW SLAVE STATUS: one round trip per host per ping_interval),
every 200ms while the writer fails or answers read-only. staunch follows a
promotion, it never makes one: a failing writer and exactly one other host
with read_only=0 that no longer replicates, or a writer turned read-only and
one other host writable, move writes at once; a former primary writable again
is stale (no writes, no reads).

Exit code: 0 when stopped with Ctrl-C or SIGTERM, 2 when the URL is bad.";

const DRILL_HELP: &str = "\
Run a workload through a chaos proxy while faults are injected, and report how
the pool held up (the project's main demo).

With no arguments the drill starts two throwaway MariaDB servers (needs
`mariadbd` and `mariadb-install-db`; scripts/drill.sh installs them) and a
chaos TCP proxy in front of the first one: the \"VIP\". A staunch pool goes
through the VIP (max_size 8, min_idle 2, connect_timeout 1s,
connection_timeout 2s, validation_timeout 500ms, query_timeout 2s). Worker
threads run a mix of reads (SELECT ? of a tag of their own; any other answer is
a \"crossed answer\") and writes (BEGIN; INSERT a unique id; COMMIT: an id
counts as acknowledged when COMMIT returned Ok).

Faults, one after another, with normal load in between:
  1. server-side KILL of every pooled connection;
  2. incident A: the VIP's server dies (new connects hang in a black hole,
     open ones are severed), then the VIP moves to the second server;
  3. the server behind the VIP is frozen (SIGSTOP) for 3s;
  4. the server behind the VIP is killed (kill -9) and restarted;
  5. incident C: a second pool with a 10ms keepalive races 8 borrowers over
     3 connections; ownership violations are counted.
Then a second phase on a primary and two replicas of its own (replicas with
--read-only=1 --wait-timeout=2, MariaDB's replication defaults), through a
topology pool (connect_timeout 500ms, connection_timeout 1s, the monitor at
its defaults: ping_interval 1s, ping_timeout 2s, failure_threshold 4,
secondary_check replicas): the same workload, writes through get() (the
writer), reads through get_read() (the replicas), a short baseline, then:
  6. incident B: the read load pauses 3s, past the replicas' wait_timeout,
     so they close the pool's idle connections; then reads resume;
  7. incident D: the primary is frozen (SIGSTOP); 3s later replica 1 is
     promoted (STOP SLAVE; RESET SLAVE ALL; SET GLOBAL read_only=0), as MHA
     or an orchestrator would, replica 2 left on the frozen primary; 2s after
     writes moved, the old primary thaws, still writable.

A fault is survived when every get() returned within connection_timeout +
500ms, the first successful operation came within connect_timeout + 2s of the
fault's end, no acknowledged write is missing (every id is read back from the
servers at the end) and no answer crossed. B also needs no error at all (its
recovery is the first read after the pause); D needs writes to move to the
promoted replica within 1s of the promotion (the monitor's bound at its
defaults; +1s slack), a first write within that + connect_timeout + 2s, the
thawed old primary reported stale, and no write acknowledged on it after
writes moved (each row records the server that executed it, and when); D's
writes are read back from the old primary and the promoted replica. Exit code:
0 when every fault that ran was survived, 1 when one was not (or the cluster
could not be set up), 2 when the drill could not be set up, 130 when
interrupted. Ctrl-C stops the drill cleanly: no server is left behind.

With --url the drill runs against an existing server instead: a local chaos
proxy goes in front of it, the faults are KILL of the pool's own connections,
a black hole that recovers to the same server, and the keepalive race; the
workload uses its own table staunch_drill_<pid> and drops it at the end. B
and D need a local cluster and are not run.

--html PATH also writes the report as one self-contained page (inline CSS
and SVG, no script): the results table and, per fault, a chart of the
workload per 100 ms from 2s before the fault to the next one (successful
operations per second, get() wait p50 and p99, errors) with the fault, its
end and the recovery marked. Only then is the timeline sampled. With
--galera, a page of the Galera part's own: its table and per fault a chart
of the pool's operations (their whole latency), with the fault, the
survivors committing again, the writer's move and the first write marked.

--galera runs the Galera part instead (needs Debian's galera-4, rsync and ss
besides MariaDB; ~90 s): a throwaway 3-node Galera cluster from the test kit,
a pool over its three nodes at the defaults (no knob: the pool finds Galera
out from wsrep_on), --threads writers (BEGIN; where am I; INSERT; COMMIT) and
2 readers through it, a direct client inserting into a survivor (Galera's own
stall), and three faults on the current writer: desynced (wsrep_desync),
isolated (gmcast.isolate: it leaves the Primary component; healed after),
killed (kill -9). Each fault prints its timeline: when the survivors could
commit again, when writes moved, the first write acknowledged elsewhere, the
failed writes, and the statements served by a node outside the Primary
component or not Synced (each statement asks where it runs). A fault is
survived when none ran on a non-Primary node, none on a non-Synced node later
than 2s (ping_interval + 1s) after the first one there, and the first write
was acknowledged within 2s of the survivors committing again (the desync: no
write failed); the run fails when an acknowledged write is missing on a
surviving node.

--soak DURATION (with --seed N; same seed, same schedule, printed at the
start) is the chaos soak: faults drawn at random from the single-server set
and the chaos proxy's modes (latency 50-300ms per chunk, drip 1-15ms per
byte, accept-and-reset, black hole; each held 0.5-4s, then the VIP passes
again), each followed by 2-5s of normal load, until DURATION has passed;
then 5s of load and the end checks. B and D are not run. Besides each
fault's verdict (every get() within connection_timeout + 250ms in the soak),
it fails (exit 1) unless, over the whole run: the longest get() wait is
within connection_timeout + 250ms; every acknowledged write is read back;
no answer crossed; within 20s of the workload's end the pool holds at most
max_size connections, min_idle..max_size of them idle, none borrowed, no
connect in flight, and its threads, the process's threads and open fds are
back to their level after the warm-up (allowing 2 threads and 7 fds per
connection the pool holds beyond it: the in-process proxy's); resident
memory grew by at most max(20 MiB, 50 %) (glibc's malloc arenas are capped
at 2 in the soak, so that their retention does not stand in for the pool's
memory). RSS, malloc'd memory, fds and threads are sampled every second; the
report shows start, end, peak and the trend, operations, faults and errors
by kind.";

#[derive(clap::Args, Debug)]
struct DrillArgs {
    /// Run against this existing server instead of throwaway local ones
    /// (mysql://user:pass@host:port/db; the user needs CREATE, INSERT, SELECT
    /// and DROP on db).
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// Also write the report as JSON to this file.
    #[arg(long, value_name = "PATH")]
    json: Option<std::path::PathBuf>,
    /// Also write the report as one self-contained HTML page (inline SVG,
    /// no script): per fault, a timeline of throughput, get() wait p50/p99
    /// and errors per 100 ms, with the fault and its recovery marked.
    #[arg(long, value_name = "PATH")]
    html: Option<std::path::PathBuf>,
    /// Instead of the fixed sequence, inject faults picked at random from the
    /// same set for this long (e.g. 30s, 5m); same checks, same report.
    #[arg(long, value_name = "DURATION", value_parser = parse_soak)]
    soak: Option<Duration>,
    /// Seed of the soak's fault schedule (default: from the clock; printed
    /// either way, so a run can be repeated).
    #[arg(long, value_name = "N", requires = "soak")]
    seed: Option<u64>,
    /// Worker threads of the workload.
    #[arg(long, value_name = "N", default_value_t = 4,
          value_parser = clap::value_parser!(u32).range(1..=64))]
    threads: u32,
    /// No once-per-second progress lines (faults and the report still print).
    #[arg(long)]
    quiet: bool,
    /// Instead of the fixed sequence, the Galera part: a throwaway 3-node
    /// Galera cluster, a pool over it at the defaults, and the writer
    /// desynced, isolated and killed under load, each with its timeline
    /// (see the long help).
    #[arg(long, conflicts_with_all = ["url", "soak"])]
    galera: bool,
}

#[derive(clap::Args, Debug)]
struct MonitorArgs {
    /// The hosts: mysql://user:pass@primary:port,replica:port,.../db?ping_interval=500ms
    /// (the first host is the initial primary).
    #[arg(value_name = "URL")]
    url: String,
    /// Also serve the pool's figures as Prometheus text at
    /// http://ADDR/metrics (ADDR as 127.0.0.1:9187).
    #[arg(long, value_name = "ADDR")]
    prometheus: Option<std::net::SocketAddr>,
}

#[derive(clap::Args, Debug)]
struct CheckArgs {
    /// The server: mysql://user:pass@host:port/db?connect_timeout=2s
    /// (connect_timeout bounds the whole connect; default 3s).
    #[arg(value_name = "URL")]
    url: String,
}

fn parse_soak(s: &str) -> Result<Duration, String> {
    let d = staunch::duration::parse_duration("--soak", s).map_err(|e| e.to_string())?;
    if d < Duration::from_secs(5) || d > Duration::from_secs(24 * 3600) {
        return Err(format!("--soak must be between 5s and 24h, got {s}"));
    }
    Ok(d)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    quiet_panics();
    let code = match cli.command {
        Command::Drill(a) => {
            signals::install();
            drill::run(drill::Options {
                galera: a.galera,
                url: a.url,
                json: a.json,
                html: a.html,
                soak: a.soak,
                seed: a.seed,
                threads: a.threads,
                quiet: a.quiet,
            })
        }
        Command::Check(a) => check::run(&a.url),
        Command::Monitor(a) => {
            signals::install();
            monitor::run(&a.url, a.prometheus)
        }
        Command::Cluster => {
            signals::install();
            drill::cluster_shell()
        }
    };
    ExitCode::from(code)
}

/// Helpers of the test support panic when something cannot be done (a server
/// that does not start); the drill catches those and reports them. Print one
/// readable line instead of the default panic text.
fn quiet_panics() {
    std::panic::set_hook(Box::new(|info| {
        let msg = panic_text(info.payload());
        let at = info
            .location()
            .map(|l| format!(" (at {}:{})", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!("staunch: {msg}{at}");
    }));
}

/// The message of a panic payload.
pub fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "a helper panicked".to_string()
    }
}

/// Ctrl-C and SIGTERM set a flag that every phase of the drill checks; the
/// drill then stops its workload, lets the servers go (their `Drop` kills
/// them) and exits 130.
pub mod signals {
    use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
    use std::time::{Duration, Instant};

    static INTERRUPTED: AtomicBool = AtomicBool::new(false);

    extern "C" fn on_signal(_: libc::c_int) {
        // Only an atomic store: async-signal-safe.
        INTERRUPTED.store(true, SeqCst);
    }

    pub fn install() {
        let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        // SAFETY: installing a handler that only stores to an atomic.
        unsafe {
            libc::signal(libc::SIGINT, handler);
            libc::signal(libc::SIGTERM, handler);
        }
    }

    pub fn interrupted() -> bool {
        INTERRUPTED.load(SeqCst)
    }

    /// As if Ctrl-C had been pressed.
    pub fn request_stop() {
        INTERRUPTED.store(true, SeqCst);
    }

    /// Sleeps `d` in small slices; false if interrupted meanwhile.
    pub fn sleep(d: Duration) -> bool {
        let end = Instant::now() + d;
        loop {
            if interrupted() {
                return false;
            }
            let now = Instant::now();
            if now >= end {
                return true;
            }
            std::thread::sleep((end - now).min(Duration::from_millis(20)));
        }
    }
}
