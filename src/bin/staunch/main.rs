//! The `staunch` command line.
//!
//! - `staunch drill`: a mixed read/write workload through a chaos proxy (the
//!   "VIP") in front of throwaway MariaDB servers, while faults are injected one
//!   after another; prints how long each took to notice and to recover from,
//!   the longest `get()` wait, and whether every acknowledged write survived.
//! - `staunch check URL`: connects once, with the pool's hard deadlines, and
//!   says what the server is, or exactly why it could not be reached.
//!
//! The throwaway servers and the chaos proxy are the integration tests'
//! support code, included here as a module (not copied).

#[path = "../../../tests/support/mod.rs"]
mod support;

mod check;
mod drill;
mod race;
mod report;
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
             This tool shows it under faults (drill) and checks a server (check).",
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
}

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
Incidents B and D need the primary/replica topology support and are reported
as not run.

A fault is survived when every get() returned within connection_timeout +
500ms, the first successful operation came within connect_timeout + 2s of the
fault's end, no acknowledged write is missing (every id is read back from the
servers at the end) and no answer crossed. Exit code: 0 when every fault that
ran was survived, 1 when one was not, 2 when the drill could not be set up,
130 when interrupted. Ctrl-C stops the drill cleanly: no server is left behind.

With --url the drill runs against an existing server instead: a local chaos
proxy goes in front of it, the faults are KILL of the pool's own connections,
a black hole that recovers to the same server, and the keepalive race; the
workload uses its own table staunch_drill_<pid> and drops it at the end.";

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
}

#[derive(clap::Args, Debug)]
struct CheckArgs {
    /// The server: mysql://user:pass@host:port/db?connect_timeout=2s
    /// (connect_timeout bounds the whole connect; default 3s).
    #[arg(value_name = "URL")]
    url: String,
}

fn parse_soak(s: &str) -> Result<Duration, String> {
    let d = staunch::config::parse_duration("--soak", s).map_err(|e| e.to_string())?;
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
                url: a.url,
                json: a.json,
                soak: a.soak,
                seed: a.seed,
                threads: a.threads,
                quiet: a.quiet,
            })
        }
        Command::Check(a) => check::run(&a.url),
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
