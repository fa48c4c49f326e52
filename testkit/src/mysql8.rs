//! A second server implementation for the tests: the server side of
//! Vitess's `go/mysql` package (`vitess.io/vitess` v0.24.4), which greets
//! like MySQL 8 and speaks `caching_sha2_password`, neither of which the
//! kit's MariaDB does (and MySQL itself is not installable here).
//!
//! The server is the small Go program in `testkit/mysql8/`, built with the
//! `go` command on first use in a process (into `<target>/staunch-mysql8/`;
//! Go's build cache makes every later build a link or nothing). It knows a
//! handful of statements: `SELECT` of `1`, `@@version` (and a few other
//! variables), `CURRENT_USER()`, `CONNECTION_ID()`; `SET`, `USE` and
//! `FLUSH PRIVILEGES` answer OK; anything else is MySQL's error 1235
//! (`ER_NOT_SUPPORTED_YET`). It is a protocol peer, not a database.
//!
//! What Vitess's server does with `caching_sha2_password`, as this kit runs
//! it (see `testkit/mysql8/main.go`):
//! - the first login of a user after the start (or after `FLUSH
//!   PRIVILEGES`) is answered `0x01 0x04` (full authentication): the client
//!   sends its clear password, which Vitess takes only over TLS or the unix
//!   socket; later logins are answered `0x01 0x03` (fast path) from the
//!   cache of verified passwords. [`Mysql8Opts::warm_sha2_cache`] fills the
//!   cache at start, so that the first login takes the fast path too;
//! - over plain TCP no `caching_sha2_password` account can log in at all:
//!   Vitess's method refuses any user on a connection that is neither TLS
//!   nor the unix socket, so the server asks the client to switch to the
//!   next method that takes the user, and with none it sends error 2012
//!   (`No authentication methods available for authentication.`). It never
//!   serves the RSA public key request (`0x02`).
//!
//! Like [`MariaDb`](crate::MariaDb), each server has its own directory
//! under `/tmp/stn-<pid>-<n>/` (its socket, its users file, its stderr),
//! which `Drop` removes after killing the process, and which the `atexit`
//! hook cleans for servers never dropped. A test process killed outright
//! takes its servers with it too: the server's standard input is a pipe from
//! this process and it exits when that pipe closes.

use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use mysql::{OptsBuilder, SslOpts};
use once_cell::sync::OnceCell;

use crate::mariadb::{
    client_opts, free_port, install_atexit_cleanup, new_server_dir, test_certs, track_dir,
    track_pid, untrack, ServerCert, DB_NAME, NEXT_ID,
};

/// The `mysql_native_password` account of [`Mysql8Opts::default`].
pub const NATIVE_USER: &str = "native";
pub const NATIVE_PASS: &str = "native-secret";
/// The `caching_sha2_password` account of [`Mysql8Opts::default`].
pub const SHA2_USER: &str = "sha2";
pub const SHA2_PASS: &str = "sha2-secret";

/// Bound on the server's ready line after the spawn.
const READY_TIMEOUT: Duration = Duration::from_secs(30);
/// Timeouts of the client options made here.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(5);
/// How many fresh ports `start` tries when the port turns out to be taken.
const START_ATTEMPTS: usize = 5;

/// The authentication plugin of an account, or of the server's greeting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthPlugin {
    MysqlNativePassword,
    CachingSha2Password,
}

impl AuthPlugin {
    /// The plugin's name as the protocol spells it.
    pub fn name(self) -> &'static str {
        match self {
            AuthPlugin::MysqlNativePassword => "mysql_native_password",
            AuthPlugin::CachingSha2Password => "caching_sha2_password",
        }
    }
}

/// One account of the server. Its `Debug` leaves the password out.
#[derive(Clone)]
pub struct Mysql8User {
    pub user: String,
    pub password: String,
    pub plugin: AuthPlugin,
}

impl Mysql8User {
    pub fn new(user: &str, password: &str, plugin: AuthPlugin) -> Mysql8User {
        Mysql8User {
            user: user.to_string(),
            password: password.to_string(),
            plugin,
        }
    }
}

impl std::fmt::Debug for Mysql8User {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mysql8User")
            .field("user", &self.user)
            .field("plugin", &self.plugin)
            .finish_non_exhaustive()
    }
}

/// Options for [`Mysql8::start_with`].
#[derive(Clone, Debug)]
pub struct Mysql8Opts {
    /// The accounts. Defaults to [`NATIVE_USER`] (`mysql_native_password`)
    /// and [`SHA2_USER`] (`caching_sha2_password`).
    pub users: Vec<Mysql8User>,
    /// `Some(..)` offers TLS with that certificate of [`test_certs`].
    /// Defaults to `None`: no TLS.
    pub tls: Option<ServerCert>,
    /// Fill the `caching_sha2_password` cache at start, so that the first
    /// login takes the fast path. Defaults to false: an empty cache, as a
    /// MySQL 8 server has after a start.
    pub warm_sha2_cache: bool,
    /// The plugin named in the greeting. Defaults to
    /// `caching_sha2_password`, MySQL 8's default.
    pub greeting_plugin: AuthPlugin,
    /// Refuse every connection that does not switch to TLS (the unix
    /// socket's too). Defaults to false.
    pub require_tls: bool,
}

impl Default for Mysql8Opts {
    fn default() -> Mysql8Opts {
        Mysql8Opts {
            users: vec![
                Mysql8User::new(NATIVE_USER, NATIVE_PASS, AuthPlugin::MysqlNativePassword),
                Mysql8User::new(SHA2_USER, SHA2_PASS, AuthPlugin::CachingSha2Password),
            ],
            tls: None,
            warm_sha2_cache: false,
            greeting_plugin: AuthPlugin::CachingSha2Password,
            require_tls: false,
        }
    }
}

// ---------------------------------------------------------------------------
// Building the Go program.

static BINARY: OnceCell<Result<(PathBuf, Duration), String>> = OnceCell::new();

/// The server's binary, built on first use in this process: `$STAUNCH_MYSQL8`
/// if set (a binary built beforehand), else `go build` of `testkit/mysql8/`
/// into `<target>/staunch-mysql8/mysql8`. The error names what is missing
/// (`go`) or carries `go build`'s output.
pub fn binary() -> Result<&'static Path, String> {
    match BINARY.get_or_init(build_binary) {
        Ok((p, _)) => Ok(p),
        Err(e) => Err(e.clone()),
    }
}

/// How long this process's build of the server took (next to nothing
/// when Go's build cache is warm, about 45 s of CPU when it is cold), or
/// `None` before the first [`binary`] call or when it failed.
pub fn build_time() -> Option<Duration> {
    BINARY.get().and_then(|r| r.as_ref().ok()).map(|(_, d)| *d)
}

fn build_binary() -> Result<(PathBuf, Duration), String> {
    if let Some(p) = std::env::var_os("STAUNCH_MYSQL8") {
        return Ok((PathBuf::from(p), Duration::ZERO));
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("mysql8");
    let out_dir = target_dir().join("staunch-mysql8");
    fs::create_dir_all(&out_dir).map_err(|e| format!("create {}: {e}", out_dir.display()))?;
    let out = out_dir.join("mysql8");
    let go = go_bin()?;
    // Test binaries run in parallel: one `go build` writes the binary at a
    // time, so none runs a half-written one.
    let lock = File::create(out_dir.join("build.lock"))
        .map_err(|e| format!("create {}/build.lock: {e}", out_dir.display()))?;
    // SAFETY: flock on a descriptor we own; released when `lock` is closed.
    if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) } != 0 {
        return Err(format!(
            "lock {}/build.lock: {}",
            out_dir.display(),
            std::io::Error::last_os_error()
        ));
    }
    let t0 = Instant::now();
    // Without optimisation or inlining (`-N -l`) a cold build takes about
    // 40% less CPU (39 s instead of 68 s here), and a test peer has no use
    // for the speed.
    let run = Command::new(&go)
        .args(["build", "-buildvcs=false", "-gcflags=all=-N -l", "-o"])
        .arg(&out)
        .arg(".")
        .current_dir(&src)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| {
            format!(
                "cannot run {} (Go, to build the mysql8 test server): {e}",
                go.display()
            )
        })?;
    let took = t0.elapsed();
    drop(lock);
    if !run.status.success() {
        return Err(format!(
            "`{} build` of the mysql8 test server in {} failed ({}):\n{}",
            go.display(),
            src.display(),
            run.status,
            String::from_utf8_lossy(&run.stderr)
        ));
    }
    log::info!("mysql8 test server built in {took:?}: {}", out.display());
    Ok((out, took))
}

/// `$STAUNCH_GO`, else `go` on `PATH`, else the places `scripts/go-env.sh`
/// puts it.
fn go_bin() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("STAUNCH_GO") {
        return Ok(PathBuf::from(p));
    }
    let on_path: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).map(|d| d.join("go")).collect())
        .unwrap_or_default();
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    let known = [
        PathBuf::from("/usr/local/go/bin/go"),
        home.join(".cache/staunch-go/bin/go"),
    ];
    on_path
        .into_iter()
        .chain(known)
        .find(|p| p.is_file())
        .ok_or_else(|| {
            "the mysql8 test server is built with Go, and no `go` was found on PATH, in \
             /usr/local/go/bin or ~/.cache/staunch-go/bin (set STAUNCH_GO, or run \
             scripts/go-env.sh's ensure_go, which installs one)"
                .to_string()
        })
}

/// Cargo's target directory: `$CARGO_TARGET_DIR`, else the ancestor of this
/// executable that holds cargo's `CACHEDIR.TAG`, else the workspace's.
fn target_dir() -> PathBuf {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    if let Some(t) = std::env::var_os("CARGO_TARGET_DIR") {
        return workspace.join(t); // an absolute path replaces `workspace`
    }
    std::env::current_exe()
        .ok()
        .and_then(|exe| {
            exe.ancestors()
                .find(|d| d.join("CACHEDIR.TAG").is_file())
                .map(Path::to_path_buf)
        })
        .unwrap_or_else(|| workspace.join("target"))
}

// ---------------------------------------------------------------------------
// The server.

/// The process and the two ends of its pipes: closing `stdin` stops it.
struct Proc {
    child: Option<Child>,
    stdin: Option<ChildStdin>,
    /// Kept open so that the server never writes to a closed pipe.
    _stdout: Option<BufReader<ChildStdout>>,
}

/// One Vitess `go/mysql` server (see the module docs) on a free port of
/// 127.0.0.1 and a unix socket of its own.
pub struct Mysql8 {
    id: u64,
    dir: PathBuf,
    port: u16,
    pid: u32,
    tls: Option<ServerCert>,
    server_version: String,
    proc_: Mutex<Proc>,
}

impl Mysql8 {
    /// Start a server with [`Mysql8Opts::default`]. Panics with the reason
    /// (no `go`, a failed build, the server's stderr) if it does not come
    /// up; once this returns it accepts connections.
    pub fn start() -> Mysql8 {
        Self::start_with(Mysql8Opts::default())
    }

    pub fn start_with(opts: Mysql8Opts) -> Mysql8 {
        install_atexit_cleanup();
        let bin = binary().unwrap_or_else(|e| panic!("mysql8 test server: {e}"));
        let mut last_err = String::new();
        for _ in 0..START_ATTEMPTS {
            let dir = new_server_dir().unwrap_or_else(|e| panic!("mysql8 test server: {e}"));
            let id = NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            track_dir(id, &dir);
            match Mysql8::spawn(bin, id, &dir, free_port(), &opts) {
                Ok(server) => return server,
                Err(e) => {
                    untrack(id);
                    let _ = fs::remove_dir_all(&dir);
                    let taken = e.contains("address already in use");
                    last_err = e;
                    if !taken {
                        break;
                    }
                }
            }
        }
        panic!("mysql8 test server: {last_err}");
    }

    fn spawn(
        bin: &Path,
        id: u64,
        dir: &Path,
        port: u16,
        opts: &Mysql8Opts,
    ) -> Result<Mysql8, String> {
        let users = dir.join("users.json");
        write_users(&users, &opts.users)?;
        let d = |p: &Path| p.display().to_string();
        let mut args = vec![
            "-tcp".to_string(),
            format!("127.0.0.1:{port}"),
            "-socket".into(),
            d(&dir.join("s.sock")),
            "-users".into(),
            d(&users),
            "-default-auth".into(),
            opts.greeting_plugin.name().into(),
            format!(
                "-sha2-cache={}",
                if opts.warm_sha2_cache {
                    "warm"
                } else {
                    "empty"
                }
            ),
            format!("-require-tls={}", opts.require_tls),
        ];
        if let Some(which) = opts.tls {
            let c = test_certs();
            let (cert, key) = match which {
                ServerCert::Localhost => (&c.server_cert, &c.server_key),
                ServerCert::OtherName => (&c.other_name_cert, &c.other_name_key),
                ServerCert::SelfSignedCa => (&c.ca, &c.ca_key),
            };
            args.extend(["-tls-cert".into(), d(cert), "-tls-key".into(), d(key)]);
        }
        let stderr_path = dir.join("stderr.log");
        let stderr = File::create(&stderr_path)
            .map_err(|e| format!("create {}: {e}", stderr_path.display()))?;
        let mut child = Command::new(bin)
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .map_err(|e| format!("cannot spawn {}: {e}", bin.display()))?;
        track_pid(id, Some(child.id()));
        let pid = child.id();
        let stdout = child.stdout.take().map(BufReader::new);
        let mut server = Mysql8 {
            id,
            dir: dir.to_path_buf(),
            port,
            pid,
            tls: opts.tls,
            server_version: String::new(),
            proc_: Mutex::new(Proc {
                stdin: child.stdin.take(),
                child: Some(child),
                _stdout: None,
            }),
        };
        let (line, stdout) = read_ready_line(stdout)
            .map_err(|e| format!("{e}; its stderr:\n{}", server.stderr_log()))?;
        server.lock_proc()._stdout = stdout;
        let ready: serde_json::Value = serde_json::from_str(&line)
            .map_err(|e| format!("its ready line {line:?} is not JSON: {e}"))?;
        if ready["ready"] != true || ready["port"] != port {
            return Err(format!("unexpected ready line {line:?} (port {port})"));
        }
        server.server_version = ready["server_version"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        Ok(server)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn addr(&self) -> SocketAddr {
        SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, self.port))
    }

    /// The server's process.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The server's unix socket.
    pub fn socket_path(&self) -> PathBuf {
        self.dir.join("s.sock")
    }

    /// Directory holding the socket, the users file and `stderr.log`.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The version string of the greeting, e.g. `8.4.6-Vitess`.
    pub fn server_version(&self) -> &str {
        &self.server_version
    }

    /// Whether it offers TLS.
    pub fn tls(&self) -> Option<ServerCert> {
        self.tls
    }

    /// URL of the [`SHA2_USER`] account (database `staunch_test`); with TLS it
    /// verifies the server's certificate against the test CA.
    pub fn url(&self) -> String {
        self.url_for(SHA2_USER, SHA2_PASS)
    }

    /// URL of any account, as [`url`](Mysql8::url).
    pub fn url_for(&self, user: &str, pass: &str) -> String {
        let params = match self.tls {
            Some(_) => format!(
                "?tls_mode=verify_identity&tls_ca={}",
                test_certs().ca.display()
            ),
            None => String::new(),
        };
        format!(
            "mysql://{user}:{pass}@127.0.0.1:{}/{DB_NAME}{params}",
            self.port
        )
    }

    /// `mysql` crate options over TCP (never the unix socket); with TLS,
    /// TLS verified against the test CA.
    pub fn opts(&self, user: &str, pass: &str) -> OptsBuilder {
        let o = client_opts(self.addr(), user, pass, CLIENT_TIMEOUT);
        match self.tls {
            Some(_) => o.ssl_opts(Some(
                SslOpts::default().with_root_cert_path(Some(test_certs().ca.clone())),
            )),
            None => o,
        }
    }

    /// `mysql` crate options over the unix socket, without TLS.
    pub fn socket_opts(&self, user: &str, pass: &str) -> OptsBuilder {
        let pass = (!pass.is_empty()).then_some(pass);
        OptsBuilder::new()
            .socket(Some(self.socket_path().display().to_string()))
            .user(Some(user))
            .pass(pass)
            .db_name(Some(DB_NAME))
            .read_timeout(Some(CLIENT_TIMEOUT))
            .write_timeout(Some(CLIENT_TIMEOUT))
    }

    /// What the server wrote to stderr (Vitess's log lines).
    pub fn stderr_log(&self) -> String {
        fs::read(self.dir.join("stderr.log"))
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    }

    /// Whether the process still runs.
    pub fn is_running(&self) -> bool {
        let mut p = self.lock_proc();
        match p.child.as_mut().map(Child::try_wait) {
            Some(Ok(None)) => true,
            Some(Ok(Some(_))) => {
                p.child = None;
                track_pid(self.id, None);
                false
            }
            Some(Err(_)) => true,
            None => false,
        }
    }

    fn lock_proc(&self) -> MutexGuard<'_, Proc> {
        self.proc_.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for Mysql8 {
    fn drop(&mut self) {
        if thread::panicking() {
            eprintln!(
                "--- test panicked; stderr of mysql8 port {} (pid {}) ---\n{}",
                self.port,
                self.pid,
                self.stderr_log()
            );
        }
        let mut p = self.lock_proc();
        p.stdin = None; // the server exits at the end of its stdin
        if let Some(mut child) = p.child.take() {
            // The pipe alone would do; SIGKILL makes it immediate.
            let _ = child.kill();
            let _ = child.wait();
        }
        drop(p);
        untrack(self.id);
        let _ = fs::remove_dir_all(&self.dir);
    }
}

impl std::fmt::Debug for Mysql8 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mysql8")
            .field("port", &self.port)
            .field("pid", &self.pid)
            .field("dir", &self.dir)
            .field("server_version", &self.server_version)
            .field("tls", &self.tls)
            .finish()
    }
}

/// The users file, readable by its owner only (it holds the passwords).
fn write_users(path: &Path, users: &[Mysql8User]) -> Result<(), String> {
    let list: Vec<serde_json::Value> = users
        .iter()
        .map(|u| serde_json::json!({"user": u.user, "password": u.password, "auth": u.plugin.name()}))
        .collect();
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| format!("create {}: {e}", path.display()))?;
    writeln!(f, "{}", serde_json::Value::Array(list))
        .map_err(|e| format!("write {}: {e}", path.display()))
}

type Stdout = Option<BufReader<ChildStdout>>;

/// The server's first stdout line, within [`READY_TIMEOUT`]; the reader is
/// handed back to be kept open.
fn read_ready_line(stdout: Stdout) -> Result<(String, Stdout), String> {
    let Some(mut stdout) = stdout else {
        return Err("no stdout pipe to the server".into());
    };
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut line = String::new();
        let r = stdout.read_line(&mut line);
        let _ = tx.send((r, line, stdout));
    });
    match rx.recv_timeout(READY_TIMEOUT) {
        Ok((Ok(0), _, _)) => Err("the server exited before it was ready".into()),
        Ok((Ok(_), line, stdout)) => Ok((line.trim().to_string(), Some(stdout))),
        Ok((Err(e), _, _)) => Err(format!("reading the server's ready line: {e}")),
        Err(_) => Err(format!(
            "no ready line from the server after {READY_TIMEOUT:?}"
        )),
    }
}
