//! Throwaway MariaDB servers for integration tests.
//!
//! A template datadir is prepared once per test process (`mariadb-install-db`,
//! then one boot to create the `staunch_test` database and the test users) and
//! copied for every server, so a new server is ready in a fraction of a second.
//!
//! Everything lives under short directories `/tmp/stn-<pid>-<n>/` (unix socket
//! paths are limited to ~107 bytes). Each `MariaDb` owns exactly one `mariadbd`
//! child process; only that PID is ever signalled. `Drop` kills it and removes
//! the directory, and an `atexit` hook does the same for servers that were
//! never dropped (e.g. kept in a `static`).
//!
//! Users created in the template:
//! - `root` over TCP with an empty password,
//! - `app` (`%`, `localhost`, `127.0.0.1`) / `app-secret`, ALL on `*.*`,
//! - `least` (`%`, `localhost`, `127.0.0.1`) / `least-secret`: ALL on `staunch_test.*`
//!   and nothing global, as applications' users are usually created (issue #49: no
//!   SLAVE MONITOR, so the monitor runs degraded unless given `monitor_user`),
//! - `monitor@%` / `monitor-secret`: PROCESS, REPLICATION CLIENT, SLAVE MONITOR, SELECT,
//! - `repl@%` / `repl-secret`: REPLICATION SLAVE.

use std::collections::{HashMap, HashSet};
use std::fs::{self, OpenOptions};
use std::io::ErrorKind;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, Once, TryLockError};
use std::thread;
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use mysql::{Conn, OptsBuilder, Row, Value};
use once_cell::sync::{Lazy, OnceCell};

/// Database created in every server.
pub const DB_NAME: &str = "staunch_test";
pub const APP_USER: &str = "app";
pub const APP_PASS: &str = "app-secret";
/// The least-privilege application user: `ALL ON staunch_test.*`, nothing
/// global (no SLAVE MONITOR, no READ_ONLY ADMIN).
pub const LEAST_USER: &str = "least";
pub const LEAST_PASS: &str = "least-secret";
pub const MONITOR_USER: &str = "monitor";
pub const MONITOR_PASS: &str = "monitor-secret";
pub const REPL_USER: &str = "repl";
pub const REPL_PASS: &str = "repl-secret";

/// Bound on "server accepts queries" after a (re)start.
const READY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long `mariadb-install-db` may take (2-6 s here; its bootstrap server
/// once waited without end, which left a test kit that never said it was
/// ready).
const INSTALL_TIMEOUT: Duration = Duration::from_secs(120);
/// Bound on a graceful shutdown before falling back to SIGKILL.
const STOP_TIMEOUT: Duration = Duration::from_secs(30);
/// Bound on reaping the process after SIGKILL.
const REAP_TIMEOUT: Duration = Duration::from_secs(10);
/// Bound on the port refusing connections once the process is gone.
const PORT_CLOSE_TIMEOUT: Duration = Duration::from_secs(5);
/// Timeouts of `admin()` connections.
const ADMIN_TIMEOUT: Duration = Duration::from_secs(5);
/// How many fresh ports `start` tries when the port turns out to be taken.
const START_ATTEMPTS: usize = 5;
/// Lines of the error log included in panic messages.
const LOG_TAIL_LINES: usize = 40;

fn mariadbd_bin() -> String {
    std::env::var("STAUNCH_MARIADBD").unwrap_or_else(|_| "/usr/sbin/mariadbd".to_string())
}

fn install_db_bin() -> String {
    std::env::var("STAUNCH_MARIADB_INSTALL_DB")
        .unwrap_or_else(|_| "/usr/bin/mariadb-install-db".to_string())
}

/// Options for [`MariaDb::start_with`].
#[derive(Clone, Debug, Default)]
pub struct ServerOpts {
    /// Extra `mariadbd` arguments, appended last (so they override the
    /// defaults), e.g. `"--max-connections=5"`, `"--wait-timeout=2"`.
    pub args: Vec<String>,
    /// `Some(server_id)` enables the binary log for replication
    /// (`log_bin`, `log_slave_updates`, `binlog_format=ROW`, GTIDs).
    pub replication: Option<u32>,
    /// `Some(..)` starts the server with TLS (`--ssl-ca/--ssl-cert/--ssl-key`)
    /// using the test certificates of [`test_certs`]; `None` (the default):
    /// no TLS at all, as before.
    pub tls: Option<ServerCert>,
}

/// The `mariadbd` arguments of [`ServerOpts::with_performance_schema`]:
/// `performance_schema=ON` (MariaDB's default is OFF), with every history,
/// digest and lock/mutex/file/statement instrument sized to nothing, so
/// that the threads and their connection attributes
/// (`performance_schema.session_connect_attrs`, up to 2 KiB a session)
/// cost about 4 MB more than a server without it instead of about 100 MB.
pub const PERFORMANCE_SCHEMA_ARGS: &[&str] = &[
    "--performance-schema=ON",
    "--performance-schema-session-connect-attrs-size=2048",
    "--performance-schema-max-thread-instances=256",
    "--performance-schema-digests-size=0",
    "--performance-schema-max-digest-length=0",
    "--performance-schema-max-sql-text-length=0",
    "--performance-schema-max-statement-stack=1",
    "--performance-schema-events-statements-history-long-size=0",
    "--performance-schema-events-statements-history-size=0",
    "--performance-schema-events-stages-history-long-size=0",
    "--performance-schema-events-stages-history-size=0",
    "--performance-schema-events-waits-history-long-size=0",
    "--performance-schema-events-waits-history-size=0",
    "--performance-schema-events-transactions-history-long-size=0",
    "--performance-schema-events-transactions-history-size=0",
    "--performance-schema-max-table-instances=0",
    "--performance-schema-max-table-handles=0",
    "--performance-schema-max-index-stat=0",
    "--performance-schema-max-table-lock-stat=0",
    "--performance-schema-max-prepared-statements-instances=0",
    "--performance-schema-max-program-instances=0",
    "--performance-schema-max-metadata-locks=0",
    "--performance-schema-max-mutex-classes=0",
    "--performance-schema-max-rwlock-classes=0",
    "--performance-schema-max-cond-classes=0",
    "--performance-schema-max-file-classes=0",
    "--performance-schema-max-socket-classes=0",
    "--performance-schema-max-stage-classes=0",
    "--performance-schema-max-statement-classes=0",
    "--performance-schema-max-memory-classes=0",
    "--performance-schema-max-mutex-instances=0",
    "--performance-schema-max-rwlock-instances=0",
    "--performance-schema-max-cond-instances=0",
    "--performance-schema-max-file-instances=0",
    "--performance-schema-max-socket-instances=0",
];

impl ServerOpts {
    /// Adds [`PERFORMANCE_SCHEMA_ARGS`]: an opt-in for the tests that read
    /// `performance_schema` (connection attributes), so that the other
    /// servers keep MariaDB's default (OFF) and their memory.
    pub fn with_performance_schema(mut self) -> ServerOpts {
        self.args
            .extend(PERFORMANCE_SCHEMA_ARGS.iter().map(|a| a.to_string()));
        self
    }
}

/// Which server certificate a TLS server presents (all signed by
/// [`TestCerts::ca`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerCert {
    /// Subject alternative names `DNS:localhost` and `IP:127.0.0.1`.
    Localhost,
    /// Only `DNS:db.staunch.test`: valid for neither `localhost` nor
    /// 127.0.0.1, for host-name mismatch tests.
    OtherName,
    /// The test CA's own certificate and key: self-signed with
    /// `basicConstraints CA:TRUE`, as `openssl req -x509` makes them.
    SelfSignedCa,
}

/// Certificates and keys (PEM) made once per test process with the `openssl`
/// command line, under `/tmp/stn-<pid>-certs/` (removed at exit). EC P-256
/// keys, certificates valid for ten years.
#[derive(Debug)]
pub struct TestCerts {
    pub dir: PathBuf,
    /// The CA that signed every certificate below, and its key.
    pub ca: PathBuf,
    pub ca_key: PathBuf,
    /// Server certificate and key: `DNS:localhost`, `IP:127.0.0.1`.
    pub server_cert: PathBuf,
    pub server_key: PathBuf,
    /// Server certificate and key for `DNS:db.staunch.test` only.
    pub other_name_cert: PathBuf,
    pub other_name_key: PathBuf,
    /// Client certificate (CN `staunch-client`, clientAuth) and key.
    pub client_cert: PathBuf,
    pub client_key: PathBuf,
    /// A second CA, unrelated to `ca`, that signed nothing here.
    pub other_ca: PathBuf,
}

fn openssl_bin() -> String {
    std::env::var("STAUNCH_OPENSSL").unwrap_or_else(|_| "/usr/bin/openssl".to_string())
}

static CERTS: OnceCell<Result<TestCerts, String>> = OnceCell::new();

/// The test certificates, made on first use. Panics with openssl's output if
/// they cannot be made.
pub fn test_certs() -> &'static TestCerts {
    match CERTS.get_or_init(make_certs) {
        Ok(c) => c,
        Err(e) => panic!("cannot make the TLS test certificates: {e}"),
    }
}

fn run_openssl(dir: &Path, args: &[&str]) -> Result<(), String> {
    let out = Command::new(openssl_bin())
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", openssl_bin()))?;
    if !out.status.success() {
        return Err(format!(
            "openssl {} failed ({}): {}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(())
}

fn make_certs() -> Result<TestCerts, String> {
    install_atexit_cleanup();
    let dir = PathBuf::from(format!("/tmp/stn-{}-certs", std::process::id()));
    let id = NEXT_ID.fetch_add(1, Ordering::SeqCst);
    track_dir(id, &dir);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).map_err(|e| format!("create {}: {e}", dir.display()))?;
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
    ];
    // A self-signed CA.
    let ca = |name: &str, cn: &str| -> Result<(), String> {
        let (key, pem, subj) = (
            format!("{name}.key"),
            format!("{name}.pem"),
            format!("/CN={cn}"),
        );
        let mut a = vec!["req", "-x509"];
        a.extend(ec);
        a.extend([
            "-keyout",
            &key,
            "-out",
            &pem,
            "-days",
            "3650",
            "-subj",
            &subj,
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
        ]);
        run_openssl(&dir, &a)
    };
    ca("ca", "staunch test CA")?;
    ca("other-ca", "staunch unrelated CA")?;
    // A leaf signed by `ca`: key + CSR, then the CA signs it with `ext`.
    let mut serial = 0x5EED_0000_u32;
    let mut leaf = |name: &str, cn: &str, ext: &str| -> Result<(), String> {
        serial += 1;
        let (key, csr, pem, extf, subj, ser) = (
            format!("{name}.key"),
            format!("{name}.csr"),
            format!("{name}.pem"),
            format!("{name}.ext"),
            format!("/CN={cn}"),
            format!("{serial}"),
        );
        fs::write(dir.join(&extf), ext).map_err(|e| format!("write {extf}: {e}"))?;
        let mut a = vec!["req", "-new"];
        a.extend(ec);
        a.extend(["-keyout", &key, "-out", &csr, "-subj", &subj]);
        run_openssl(&dir, &a)?;
        run_openssl(
            &dir,
            &[
                "x509",
                "-req",
                "-in",
                &csr,
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca.key",
                "-set_serial",
                &ser,
                "-days",
                "3650",
                "-extfile",
                &extf,
                "-out",
                &pem,
            ],
        )
    };
    let server_ext = |san: &str| {
        format!(
            "basicConstraints=critical,CA:FALSE\n\
             keyUsage=critical,digitalSignature,keyEncipherment\n\
             extendedKeyUsage=serverAuth\n\
             subjectAltName={san}\n"
        )
    };
    leaf(
        "server",
        "localhost",
        &server_ext("DNS:localhost,IP:127.0.0.1"),
    )?;
    leaf(
        "other-name",
        "db.staunch.test",
        &server_ext("DNS:db.staunch.test"),
    )?;
    leaf(
        "client",
        "staunch-client",
        "basicConstraints=critical,CA:FALSE\n\
         keyUsage=critical,digitalSignature\n\
         extendedKeyUsage=clientAuth\n",
    )?;
    // The server drops to the mysql user when we are root: it must read them.
    chown_to_mysql(&dir)?;
    for entry in fs::read_dir(&dir).map_err(|e| format!("list {}: {e}", dir.display()))? {
        let path = entry.map_err(|e| e.to_string())?.path();
        chown_to_mysql(&path)?;
    }
    let f = |n: &str| dir.join(n);
    Ok(TestCerts {
        ca: f("ca.pem"),
        ca_key: f("ca.key"),
        server_cert: f("server.pem"),
        server_key: f("server.key"),
        other_name_cert: f("other-name.pem"),
        other_name_key: f("other-name.key"),
        client_cert: f("client.pem"),
        client_key: f("client.key"),
        other_ca: f("other-ca.pem"),
        dir,
    })
}

/// Client options for a TCP connection to `addr` (never the unix socket),
/// with `timeout` as connect, read and write timeout, default db `staunch_test`.
pub fn client_opts(addr: SocketAddr, user: &str, pass: &str, timeout: Duration) -> OptsBuilder {
    let pass = if pass.is_empty() { None } else { Some(pass) };
    OptsBuilder::new()
        .ip_or_hostname(Some(addr.ip().to_string()))
        .tcp_port(addr.port())
        .user(Some(user))
        .pass(pass)
        .db_name(Some(DB_NAME))
        .prefer_socket(false)
        .tcp_connect_timeout(Some(timeout))
        .read_timeout(Some(timeout))
        .write_timeout(Some(timeout))
}

// ---------------------------------------------------------------------------
// Process-wide bookkeeping: running children and directories to clean at exit.

#[derive(Default)]
struct Tracked {
    /// PID of a child not yet reaped (safe to signal: it cannot be reused).
    pid: Option<u32>,
    dir: Option<PathBuf>,
}

static REGISTRY: Lazy<Mutex<HashMap<u64, Tracked>>> = Lazy::new(|| Mutex::new(HashMap::new()));
pub(crate) static NEXT_ID: AtomicU64 = AtomicU64::new(1);
static ATEXIT: Once = Once::new();

fn registry() -> MutexGuard<'static, HashMap<u64, Tracked>> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

pub(crate) fn track_dir(id: u64, dir: &Path) {
    registry().entry(id).or_default().dir = Some(dir.to_path_buf());
}

pub(crate) fn track_pid(id: u64, pid: Option<u32>) {
    registry().entry(id).or_default().pid = pid;
}

/// Forget `id` once its process is reaped and its directory removed.
pub(crate) fn untrack(id: u64) {
    registry().remove(&id);
}

extern "C" fn cleanup_at_exit() {
    let mut reg = match REGISTRY.try_lock() {
        Ok(g) => g,
        Err(TryLockError::Poisoned(p)) => p.into_inner(),
        Err(TryLockError::WouldBlock) => return,
    };
    let pids: Vec<u32> = reg.values_mut().filter_map(|t| t.pid.take()).collect();
    for &pid in &pids {
        // SAFETY: plain syscalls on PIDs of our own unreaped children.
        unsafe {
            libc::kill(pid as libc::pid_t, libc::SIGKILL);
        }
    }
    let deadline = Instant::now() + Duration::from_secs(3);
    for &pid in &pids {
        loop {
            let mut status = 0;
            // SAFETY: see above.
            let r = unsafe { libc::waitpid(pid as libc::pid_t, &mut status, libc::WNOHANG) };
            if r != 0 || Instant::now() > deadline {
                break;
            }
            thread::sleep(Duration::from_millis(10));
        }
    }
    for t in reg.values() {
        if let Some(dir) = &t.dir {
            let _ = fs::remove_dir_all(dir);
        }
    }
    reg.clear();
}

pub(crate) fn install_atexit_cleanup() {
    ATEXIT.call_once(|| {
        // SAFETY: registering a plain extern "C" fn.
        unsafe {
            libc::atexit(cleanup_at_exit);
        }
    });
}

/// Remove `/tmp/stn-<pid>-*` directories left behind by test processes that
/// no longer exist, stopping the server still running in one: a test
/// process that was killed ran no exit handler, so its servers outlive it
/// until the next test process of the kit starts.
fn remove_stale_dirs() {
    let me = std::process::id();
    let Ok(entries) = fs::read_dir("/tmp") else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(rest) = name.strip_prefix("stn-") else {
            continue;
        };
        let Some(Ok(owner)) = rest.split('-').next().map(str::parse::<u32>) else {
            continue;
        };
        if owner == me || Path::new(&format!("/proc/{owner}")).exists() {
            continue;
        }
        let dir = entry.path();
        if let Ok(pid) = fs::read_to_string(dir.join("m.pid")) {
            if let Ok(pid) = pid.trim().parse::<libc::pid_t>() {
                stop_orphan(pid, &dir);
            }
        }
        let _ = fs::remove_dir_all(&dir);
    }
}

/// Stops the server `pid` if it is one this kit started in `dir` (its
/// command line names the directory: a reused pid is left alone), and waits
/// up to 3 s for it to go.
fn stop_orphan(pid: libc::pid_t, dir: &Path) {
    let runs_there = || {
        let cmdline = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        String::from_utf8_lossy(&cmdline).contains(&*dir.to_string_lossy())
    };
    if !runs_there() {
        return;
    }
    log::warn!(
        "stopping mariadbd {pid}, left running in {} by a test process that is gone",
        dir.display()
    );
    // SAFETY: a plain syscall on a pid whose command line was just checked.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
    }
    let deadline = Instant::now() + Duration::from_secs(3);
    while runs_there() && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(20));
    }
}

// ---------------------------------------------------------------------------
// Users, ports, directories.

fn running_as_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// uid/gid of the `mysql` user when running as root (the server drops to it).
static MYSQL_IDS: Lazy<Result<Option<(u32, u32)>, String>> = Lazy::new(|| {
    if !running_as_root() {
        return Ok(None);
    }
    // SAFETY: getpwnam with a NUL-terminated literal; the result is read
    // immediately, and this runs once (Lazy), so the static buffer is not raced
    // by this module.
    unsafe {
        let pw = libc::getpwnam(b"mysql\0".as_ptr().cast());
        if pw.is_null() {
            return Err("running as root but there is no `mysql` user to run mariadbd".into());
        }
        Ok(Some(((*pw).pw_uid, (*pw).pw_gid)))
    }
});

fn mysql_ids() -> Result<Option<(u32, u32)>, String> {
    MYSQL_IDS.clone()
}

fn chown_to_mysql(path: &Path) -> Result<(), String> {
    if let Some((uid, gid)) = mysql_ids()? {
        std::os::unix::fs::chown(path, Some(uid), Some(gid))
            .map_err(|e| format!("chown mysql {}: {e}", path.display()))?;
    }
    Ok(())
}

/// Ports handed out by this process are never handed out again, so the port
/// of a killed server stays reserved for its `restart`.
static USED_PORTS: Lazy<Mutex<HashSet<u16>>> = Lazy::new(|| Mutex::new(HashSet::new()));
static PORT_CURSOR: AtomicU32 = AtomicU32::new(0);

/// A free TCP port on 127.0.0.1. Prefers ports below the kernel's ephemeral
/// range, so that outgoing connections (e.g. from a proxy) never grab the port
/// of a server that is down between `kill9` and `restart`.
pub fn free_port() -> u16 {
    let mut used = USED_PORTS.lock().unwrap_or_else(|e| e.into_inner());
    let eph_low = fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|s| {
            s.split_whitespace()
                .next()
                .and_then(|p| p.parse::<u32>().ok())
        })
        .unwrap_or(32768);
    const LOW: u32 = 10_000;
    if eph_low > LOW + 1_000 {
        let span = eph_low - LOW;
        let seed = std::process::id().wrapping_mul(7919)
            ^ std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0);
        let _ =
            PORT_CURSOR.compare_exchange(0, seed % span + 1, Ordering::SeqCst, Ordering::SeqCst);
        for _ in 0..500 {
            let c = PORT_CURSOR.fetch_add(1, Ordering::SeqCst);
            let port = (LOW + c % span) as u16;
            if used.contains(&port) {
                continue;
            }
            if TcpListener::bind((Ipv4Addr::LOCALHOST, port)).is_ok() {
                used.insert(port);
                return port;
            }
        }
    }
    for _ in 0..100 {
        let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .unwrap_or_else(|e| panic!("cannot bind 127.0.0.1:0 to find a free port: {e}"));
        if used.insert(port) {
            return port;
        }
    }
    panic!("no free TCP port found on 127.0.0.1");
}

static NEXT_DIR: AtomicU64 = AtomicU64::new(1);

pub(crate) fn new_server_dir() -> Result<PathBuf, String> {
    let n = NEXT_DIR.fetch_add(1, Ordering::SeqCst);
    let dir = PathBuf::from(format!("/tmp/stn-{}-{n}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    create_private_tmpdir(&dir)?;
    Ok(dir)
}

/// Create `dir` and `dir/tmp`, owned by mysql.
///
/// Every server needs its own `--tmpdir`: at startup mariadbd deletes every
/// `#sql*` file in its tmpdir, i.e. the on-disk temporary tables (e.g. of any
/// `information_schema.PROCESSLIST` query) of every other server sharing it.
fn create_private_tmpdir(dir: &Path) -> Result<(), String> {
    let tmp = dir.join("tmp");
    fs::create_dir_all(&tmp).map_err(|e| format!("create {}: {e}", tmp.display()))?;
    chown_to_mysql(dir)?;
    chown_to_mysql(&tmp)
}

// ---------------------------------------------------------------------------
// Template datadir.

static TEMPLATE: OnceCell<Result<PathBuf, String>> = OnceCell::new();

fn template_datadir() -> &'static Path {
    match TEMPLATE.get_or_init(build_template) {
        Ok(p) => p,
        Err(e) => panic!("cannot prepare the MariaDB template datadir: {e}"),
    }
}

fn template_setup_sql() -> Vec<String> {
    let mut v = vec![format!("CREATE DATABASE {DB_NAME}")];
    for host in ["%", "localhost", "127.0.0.1"] {
        v.push(format!(
            "CREATE USER '{APP_USER}'@'{host}' IDENTIFIED BY '{APP_PASS}'"
        ));
        v.push(format!(
            "GRANT ALL PRIVILEGES ON *.* TO '{APP_USER}'@'{host}'"
        ));
    }
    for host in ["%", "localhost", "127.0.0.1"] {
        v.push(format!(
            "CREATE USER '{LEAST_USER}'@'{host}' IDENTIFIED BY '{LEAST_PASS}'"
        ));
        v.push(format!(
            "GRANT ALL PRIVILEGES ON {DB_NAME}.* TO '{LEAST_USER}'@'{host}'"
        ));
    }
    v.push(format!(
        "CREATE USER '{MONITOR_USER}'@'%' IDENTIFIED BY '{MONITOR_PASS}'"
    ));
    v.push(format!(
        "GRANT PROCESS, REPLICATION CLIENT, SLAVE MONITOR, SELECT ON *.* TO '{MONITOR_USER}'@'%'"
    ));
    v.push(format!(
        "CREATE USER '{REPL_USER}'@'%' IDENTIFIED BY '{REPL_PASS}'"
    ));
    v.push(format!(
        "GRANT REPLICATION SLAVE ON *.* TO '{REPL_USER}'@'%'"
    ));
    v
}

fn build_template() -> Result<PathBuf, String> {
    install_atexit_cleanup();
    remove_stale_dirs();
    let t0 = Instant::now();
    let root = PathBuf::from(format!("/tmp/stn-{}-tpl", std::process::id()));
    let id = NEXT_ID.fetch_add(1, Ordering::SeqCst);
    track_dir(id, &root);
    let _ = fs::remove_dir_all(&root);
    create_private_tmpdir(&root)?;
    let datadir = root.join("data");
    let tmpdir = root.join("tmp");

    let mut cmd = Command::new(install_db_bin());
    cmd.arg("--no-defaults");
    if mysql_ids()?.is_some() {
        cmd.arg("--user=mysql");
    }
    let log_path = root.join("install-db.log");
    let log =
        fs::File::create(&log_path).map_err(|e| format!("create {}: {e}", log_path.display()))?;
    let log2 = log
        .try_clone()
        .map_err(|e| format!("{}: {e}", log_path.display()))?;
    cmd.arg(format!("--datadir={}", datadir.display()))
        .arg("--auth-root-authentication-method=normal")
        .arg("--skip-test-db")
        // Passed through to the bootstrap mariadbd (see create_private_tmpdir).
        .arg(format!("--tmpdir={}", tmpdir.display()))
        .env("TMPDIR", &tmpdir)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log2);
    // A group of its own: the script and the bootstrap server it starts are
    // stopped together when it outlives INSTALL_TIMEOUT.
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", install_db_bin()))?;
    let deadline = Instant::now() + INSTALL_TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break st,
            Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(20)),
            Ok(None) => {
                // SAFETY: kill(2) on the group this child leads; no memory involved.
                unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
                let _ = child.wait();
                let text = fs::read_to_string(&log_path).unwrap_or_default();
                return Err(format!(
                    "{} did not finish within {INSTALL_TIMEOUT:?} (stopped):\n{}",
                    install_db_bin(),
                    tail_lines(&text, LOG_TAIL_LINES)
                ));
            }
            Err(e) => return Err(format!("wait for {}: {e}", install_db_bin())),
        }
    };
    if !status.success() {
        let text = fs::read_to_string(&log_path).unwrap_or_default();
        return Err(format!(
            "{} failed ({status}):\n{}",
            install_db_bin(),
            tail_lines(&text, LOG_TAIL_LINES)
        ));
    }

    let mut last_err = String::new();
    for _ in 0..START_ATTEMPTS {
        let mut tpl = MariaDb::new_unstarted(root.clone(), free_port(), &ServerOpts::default());
        tpl.owns_dir = false;
        let booted = tpl.spawn().and_then(|()| tpl.wait_ready());
        if let Err(e) = booted {
            let tail = tpl.error_log_tail();
            tpl.kill_and_reap();
            last_err = format!("template server failed to start: {e}\n{tail}");
            if port_in_use(&tail) {
                continue;
            }
            return Err(last_err);
        }
        let mut conn = tpl
            .connect_root(None, ADMIN_TIMEOUT)
            .map_err(|e| format!("template: root connect: {e}\n{}", tpl.error_log_tail()))?;
        // Root accounts for this machine's hostname and anonymous accounts are
        // useless here and only produce --skip-name-resolve warnings.
        let extra: Vec<(String, String)> = conn
            .query(
                "SELECT User, Host FROM mysql.user \
                 WHERE User = '' OR Host NOT IN ('localhost', '127.0.0.1', '::1', '%')",
            )
            .map_err(|e| format!("template: list users: {e}"))?;
        let mut stmts: Vec<String> = extra
            .into_iter()
            .map(|(u, h)| format!("DROP USER '{u}'@'{h}'"))
            .collect();
        stmts.extend(template_setup_sql());
        for s in &stmts {
            conn.query_drop(s)
                .map_err(|e| format!("template: `{s}` failed: {e}"))?;
        }
        drop(conn);
        tpl.stop_gracefully()
            .map_err(|e| format!("template: stop: {e}\n{}", tpl.error_log_tail()))?;
        log::debug!("MariaDB template datadir ready in {:?}", t0.elapsed());
        return Ok(datadir);
    }
    Err(last_err)
}

fn port_in_use(log: &str) -> bool {
    log.contains("Address already in use")
        || log.contains("Do you already have another")
        || log.contains("another server (socket")
}

fn tail_lines(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

// ---------------------------------------------------------------------------
// The server.

#[derive(Default)]
struct Proc {
    child: Option<Child>,
    last_exit: Option<ExitStatus>,
}

/// One throwaway `mariadbd` process with its own datadir and port.
pub struct MariaDb {
    id: u64,
    dir: PathBuf,
    port: u16,
    replication: Option<u32>,
    tls: Option<ServerCert>,
    extra_args: Vec<String>,
    proc_: Mutex<Proc>,
    /// Root session used by the helpers (`sql`, `query_i64`, ...): one cached
    /// connection, so helper calls leave no lingering root sessions behind.
    helper: Mutex<Option<Conn>>,
    pid: AtomicU32,
    frozen: AtomicBool,
    owns_dir: bool,
}

impl MariaDb {
    /// Start a server with default options. Panics (with the error-log tail)
    /// if it does not come up; once this returns it accepts queries.
    pub fn start() -> MariaDb {
        Self::start_with(ServerOpts::default())
    }

    pub fn start_with(opts: ServerOpts) -> MariaDb {
        let template = template_datadir();
        let mut last_err = String::new();
        for _ in 0..START_ATTEMPTS {
            let dir = new_server_dir().unwrap_or_else(|e| panic!("MariaDB test server: {e}"));
            let server = MariaDb::new_unstarted(dir, free_port(), &opts);
            if let Err(e) = copy_datadir(template, &server.datadir()) {
                panic!("MariaDB test server: {e}");
            }
            match server.spawn().and_then(|()| server.wait_ready()) {
                Ok(()) => return server,
                Err(e) => {
                    let tail = server.error_log_tail();
                    server.kill_and_reap();
                    last_err = format!(
                        "MariaDB failed to start on port {}: {e}\n--- error log tail ({}) ---\n{tail}",
                        server.port,
                        server.log_path().display()
                    );
                    if !port_in_use(&tail) {
                        break;
                    }
                    // Port taken meanwhile by someone else: try another one.
                }
            }
        }
        panic!("{last_err}");
    }

    fn new_unstarted(dir: PathBuf, port: u16, opts: &ServerOpts) -> MariaDb {
        let id = NEXT_ID.fetch_add(1, Ordering::SeqCst);
        track_dir(id, &dir);
        MariaDb {
            id,
            dir,
            port,
            replication: opts.replication,
            tls: opts.tls,
            extra_args: opts.args.clone(),
            proc_: Mutex::new(Proc::default()),
            helper: Mutex::new(None),
            pid: AtomicU32::new(0),
            frozen: AtomicBool::new(false),
            owns_dir: true,
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Replaces the extra `mariadbd` arguments used from the next
    /// [`restart`](MariaDb::restart) on (e.g. a Galera node that
    /// bootstrapped its cluster rejoins it without `--wsrep-new-cluster`).
    pub fn set_args(&mut self, args: Vec<String>) {
        self.extra_args = args;
    }

    /// The whole error log (empty if there is none).
    pub fn error_log(&self) -> String {
        fs::read(self.log_path())
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    }

    pub fn addr(&self) -> SocketAddr {
        SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, self.port))
    }

    /// PID of the most recently started `mariadbd` process.
    pub fn pid(&self) -> u32 {
        self.pid.load(Ordering::SeqCst)
    }

    /// URL of the application user (`app`), database `staunch_test`.
    pub fn url(&self) -> String {
        format!(
            "mysql://{APP_USER}:{APP_PASS}@127.0.0.1:{}/{DB_NAME}",
            self.port
        )
    }

    pub fn root_url(&self) -> String {
        format!("mysql://root@127.0.0.1:{}/{DB_NAME}", self.port)
    }

    /// Directory holding `data/`, the socket, the pid file and the error log.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn datadir(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// The server's unix socket.
    pub fn socket_path(&self) -> PathBuf {
        self.dir.join("s.sock")
    }

    fn pid_path(&self) -> PathBuf {
        self.dir.join("m.pid")
    }

    fn log_path(&self) -> PathBuf {
        self.dir.join("err.log")
    }

    fn stderr_path(&self) -> PathBuf {
        self.dir.join("stderr.log")
    }

    /// TCP client options for this server (5 s timeouts, db `staunch_test`).
    pub fn opts(&self, user: &str, pass: &str) -> OptsBuilder {
        client_opts(self.addr(), user, pass, ADMIN_TIMEOUT)
    }

    /// Client options of the `app` user.
    pub fn app_opts(&self) -> OptsBuilder {
        self.opts(APP_USER, APP_PASS)
    }

    fn command_args(&self) -> Vec<String> {
        let d = |p: PathBuf| p.display().to_string();
        let mut a = vec!["--no-defaults".to_string()];
        if running_as_root() {
            a.push("--user=mysql".into());
        }
        a.extend([
            format!("--datadir={}", d(self.datadir())),
            format!("--port={}", self.port),
            "--bind-address=127.0.0.1".into(),
            format!("--socket={}", d(self.socket_path())),
            format!("--pid-file={}", d(self.pid_path())),
            format!("--log-error={}", d(self.log_path())),
            // Private: mariadbd wipes `#sql*` files in its tmpdir at startup.
            format!("--tmpdir={}", d(self.dir.join("tmp"))),
            "--skip-name-resolve".into(),
            // Aborted handshakes (chaos proxy, black holes) must never get
            // 127.0.0.1 blocked.
            "--host-cache-size=0".into(),
            "--max-connect-errors=1000000".into(),
            "--innodb-buffer-pool-size=32M".into(),
            "--innodb-log-file-size=16M".into(),
            // Durable across a process kill (not an OS crash), much faster.
            "--innodb-flush-log-at-trx-commit=2".into(),
            "--max-connections=200".into(),
        ]);
        match self.replication {
            Some(server_id) => a.extend([
                format!("--server-id={server_id}"),
                "--log-bin=mysql-bin".into(),
                "--log-slave-updates".into(),
                "--binlog-format=ROW".into(),
                "--relay-log=relay-bin".into(),
                "--sync-binlog=0".into(),
                "--report-host=127.0.0.1".into(),
                format!("--report-port={}", self.port),
            ]),
            None => a.push("--skip-log-bin".into()),
        }
        if let Some(which) = self.tls {
            let c = test_certs();
            let (cert, key) = match which {
                ServerCert::Localhost => (&c.server_cert, &c.server_key),
                ServerCert::OtherName => (&c.other_name_cert, &c.other_name_key),
                ServerCert::SelfSignedCa => (&c.ca, &c.ca_key),
            };
            a.extend([
                format!("--ssl-ca={}", d(c.ca.clone())),
                format!("--ssl-cert={}", d(cert.clone())),
                format!("--ssl-key={}", d(key.clone())),
            ]);
        }
        a.extend(self.extra_args.iter().cloned());
        a
    }

    fn lock_proc(&self) -> MutexGuard<'_, Proc> {
        self.proc_.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Reap the child if it has exited. Returns whether it is still running.
    fn refresh(&self, p: &mut Proc) -> bool {
        let Some(child) = p.child.as_mut() else {
            return false;
        };
        match child.try_wait() {
            Ok(None) => true,
            Ok(Some(status)) => {
                p.child = None;
                p.last_exit = Some(status);
                track_pid(self.id, None);
                false
            }
            Err(e) => {
                log::warn!("try_wait on mariadbd pid {}: {e}", child.id());
                true
            }
        }
    }

    /// Send `sig` to our child if it is still running (the lock prevents a
    /// concurrent reap, so the PID cannot have been reused).
    fn signal(&self, sig: libc::c_int) -> bool {
        let mut p = self.lock_proc();
        if !self.refresh(&mut p) {
            return false;
        }
        let pid = p.child.as_ref().map(|c| c.id()).unwrap_or(0);
        // SAFETY: signalling our own unreaped child.
        pid != 0 && unsafe { libc::kill(pid as libc::pid_t, sig) } == 0
    }

    fn wait_exit(&self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            {
                let mut p = self.lock_proc();
                if !self.refresh(&mut p) {
                    return p.last_exit;
                }
            }
            if Instant::now() >= deadline {
                return None;
            }
            thread::sleep(Duration::from_millis(5));
        }
    }

    fn spawn(&self) -> Result<(), String> {
        let mut p = self.lock_proc();
        if self.refresh(&mut p) {
            return Err("mariadbd is already running".into());
        }
        let stderr = OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.stderr_path())
            .map(Stdio::from)
            .unwrap_or_else(|_| Stdio::null());
        let child = Command::new(mariadbd_bin())
            .args(self.command_args())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .map_err(|e| format!("cannot spawn {}: {e}", mariadbd_bin()))?;
        self.pid.store(child.id(), Ordering::SeqCst);
        track_pid(self.id, Some(child.id()));
        p.child = Some(child);
        p.last_exit = None;
        self.frozen.store(false, Ordering::SeqCst);
        Ok(())
    }

    fn wait_ready(&self) -> Result<(), String> {
        let t0 = Instant::now();
        let socket = self.socket_path().display().to_string();
        let mut last: String;
        loop {
            {
                let mut p = self.lock_proc();
                if !self.refresh(&mut p) {
                    return Err(format!(
                        "mariadbd exited during startup ({})",
                        p.last_exit
                            .map_or("not started".to_string(), |s| s.to_string())
                    ));
                }
            }
            match self.connect_root(None, Duration::from_secs(2)) {
                Ok(mut c) => match c.query_first::<String, _>("SELECT @@socket") {
                    Ok(Some(s)) if s == socket => {
                        log::debug!("mariadbd on port {} ready in {:?}", self.port, t0.elapsed());
                        // Keep it as the helper session (no lingering root
                        // session), unless the database does not exist yet.
                        if c.query_drop(format!("USE {DB_NAME}")).is_ok() {
                            *self.lock_helper() = Some(c);
                        }
                        return Ok(());
                    }
                    Ok(other) => {
                        return Err(format!(
                            "port {} is answered by another server (socket {other:?})",
                            self.port
                        ))
                    }
                    Err(e) => last = e.to_string(),
                },
                Err(e) => last = e.to_string(),
            }
            if t0.elapsed() > READY_TIMEOUT {
                return Err(format!(
                    "not accepting queries after {READY_TIMEOUT:?} (last error: {last})"
                ));
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    fn wait_port_closed(&self) -> Result<(), String> {
        let deadline = Instant::now() + PORT_CLOSE_TIMEOUT;
        loop {
            match TcpStream::connect_timeout(&self.addr(), Duration::from_millis(200)) {
                Err(e) if e.kind() == ErrorKind::ConnectionRefused => return Ok(()),
                _ if Instant::now() >= deadline => {
                    return Err(format!(
                        "port {} still accepts connections {PORT_CLOSE_TIMEOUT:?} after mariadbd exited",
                        self.port
                    ))
                }
                _ => thread::sleep(Duration::from_millis(10)),
            }
        }
    }

    /// SIGKILL and reap without panicking (for error paths and Drop).
    fn kill_and_reap(&self) -> bool {
        if self.frozen.swap(false, Ordering::SeqCst) {
            self.signal(libc::SIGCONT);
        }
        self.signal(libc::SIGKILL);
        self.wait_exit(REAP_TIMEOUT).is_some() || !self.is_running()
    }

    fn stop_gracefully(&self) -> Result<(), String> {
        if !self.signal(libc::SIGTERM) {
            return Ok(());
        }
        if self.frozen.swap(false, Ordering::SeqCst) {
            self.signal(libc::SIGCONT);
        }
        if self.wait_exit(STOP_TIMEOUT).is_none() {
            log::warn!(
                "mariadbd pid {} ignored SIGTERM for {STOP_TIMEOUT:?}: SIGKILL",
                self.pid()
            );
            self.signal(libc::SIGKILL);
            if self.wait_exit(REAP_TIMEOUT).is_none() {
                return Err(format!("mariadbd pid {} survives SIGKILL", self.pid()));
            }
        }
        self.wait_port_closed()
    }

    fn connect_root(&self, db: Option<&str>, timeout: Duration) -> Result<Conn, mysql::Error> {
        let opts = client_opts(self.addr(), "root", "", timeout).db_name(db);
        Conn::new(opts)
    }

    /// A new root connection over TCP (5 s timeouts, db `staunch_test`).
    pub fn admin(&self) -> Conn {
        self.connect_root(Some(DB_NAME), ADMIN_TIMEOUT)
            .unwrap_or_else(|e| {
                panic!(
                    "root connection to MariaDB on port {} failed: {e}\n--- error log tail ---\n{}",
                    self.port,
                    self.error_log_tail()
                )
            })
    }

    fn lock_helper(&self) -> MutexGuard<'_, Option<Conn>> {
        self.helper.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Run `f` on the cached root helper session (db `staunch_test`),
    /// reconnecting if it broke (e.g. after `kill9`/`restart`).
    fn with_helper<R>(&self, what: &str, f: impl FnOnce(&mut Conn) -> R) -> R {
        assert!(
            !self.is_frozen(),
            "{what}: MariaDB on port {} is frozen (SIGSTOP); thaw() it first",
            self.port
        );
        let mut guard = self.lock_helper();
        if let Some(c) = guard.as_mut() {
            if c.ping().is_err() {
                *guard = None;
            }
        }
        let conn = guard.get_or_insert_with(|| self.admin());
        f(conn)
    }

    /// Run one statement as root; panics with the statement on error.
    ///
    /// All helpers share one cached root session, so session state set here
    /// (`LOCK TABLES`, `FLUSH TABLES WITH READ LOCK`, user variables, an open
    /// transaction) persists across calls; use `admin()` for a private session.
    pub fn sql(&self, q: &str) {
        self.with_helper(q, |c| c.query_drop(q))
            .unwrap_or_else(|e| panic!("SQL failed on MariaDB port {}: `{q}`: {e}", self.port));
    }

    fn first_value(&self, q: &str) -> Option<Value> {
        let row: Option<Row> = self
            .with_helper(q, |c| c.query_first(q))
            .unwrap_or_else(|e| panic!("query failed on MariaDB port {}: `{q}`: {e}", self.port));
        match row?.as_ref(0)? {
            Value::NULL => None,
            v => Some(v.clone()),
        }
    }

    /// Every row of `q`'s result, each value as text (None: NULL), on the
    /// helper session (see [`MariaDb::sql`]); panics with the statement on
    /// error.
    pub fn query_rows(&self, q: &str) -> Vec<Vec<Option<String>>> {
        let rows: Vec<Row> = self
            .with_helper(q, |c| c.query(q))
            .unwrap_or_else(|e| panic!("query failed on MariaDB port {}: `{q}`: {e}", self.port));
        rows.into_iter()
            .map(|row| row.unwrap().into_iter().map(value_text).collect())
            .collect()
    }

    /// First column of the first row as i64 (None: no row or NULL).
    pub fn query_i64(&self, q: &str) -> Option<i64> {
        let v = self.first_value(q)?;
        Some(
            mysql::from_value_opt::<i64>(v)
                .unwrap_or_else(|e| panic!("`{q}`: first column is not an integer: {e}")),
        )
    }

    /// First column of the first row as a string (None: no row or NULL).
    pub fn query_string(&self, q: &str) -> Option<String> {
        let v = self.first_value(q)?;
        Some(
            mysql::from_value_opt::<String>(v)
                .unwrap_or_else(|e| panic!("`{q}`: first column is not a string: {e}")),
        )
    }

    /// `SET GLOBAL var = value`; `value` is inserted verbatim (quote strings
    /// yourself). Applies to connections opened afterwards for session vars
    /// such as `wait_timeout`.
    pub fn set_global(&self, var: &str, value: &str) {
        self.sql(&format!("SET GLOBAL {var} = {value}"));
    }

    /// SIGSTOP: the kernel still accepts TCP connections into the backlog;
    /// nothing is answered until `thaw`.
    ///
    /// Returns once every thread of the process is stopped: `kill` only queues
    /// the stop, and a busy machine can otherwise still answer a query sent
    /// right after it.
    pub fn freeze(&self) {
        assert!(
            self.signal(libc::SIGSTOP),
            "freeze: mariadbd on port {} is not running",
            self.port
        );
        self.frozen.store(true, Ordering::SeqCst);
        if !self.wait_threads(true) {
            log::warn!(
                "freeze: mariadbd pid {} not fully stopped after 2 s",
                self.pid()
            );
        }
    }

    /// SIGCONT; returns once the process runs again.
    pub fn thaw(&self) {
        assert!(
            self.signal(libc::SIGCONT),
            "thaw: mariadbd on port {} is not running",
            self.port
        );
        if !self.wait_threads(false) {
            log::warn!("thaw: mariadbd pid {} still stopped after 2 s", self.pid());
        }
        self.frozen.store(false, Ordering::SeqCst);
    }

    /// Wait (2 s max) until all threads are stopped (`stopped`) or none is.
    fn wait_threads(&self, stopped: bool) -> bool {
        let deadline = Instant::now() + Duration::from_secs(2);
        let task_dir = format!("/proc/{}/task", self.pid());
        loop {
            let mut all_stopped = true;
            let mut any_stopped = false;
            for entry in fs::read_dir(&task_dir).into_iter().flatten().flatten() {
                let Ok(stat) = fs::read_to_string(entry.path().join("stat")) else {
                    continue; // thread just exited
                };
                // "<tid> (<comm>) <state> ...": comm may contain spaces/parens.
                let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
                    continue;
                };
                if stat[open + 1..close].starts_with("iou-") {
                    continue; // io_uring workers do not take part in job control
                }
                let state = stat[close + 1..].trim_start().chars().next().unwrap_or('?');
                let is_stopped = matches!(state, 'T' | 't' | 'Z' | 'X');
                all_stopped &= is_stopped;
                any_stopped |= matches!(state, 'T' | 't');
            }
            if (stopped && all_stopped) || (!stopped && !any_stopped) {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            thread::sleep(Duration::from_millis(1));
        }
    }

    pub fn is_frozen(&self) -> bool {
        self.frozen.load(Ordering::SeqCst)
    }

    /// SIGKILL; returns once the process is reaped and the port refuses
    /// connections.
    pub fn kill9(&mut self) {
        self.signal(libc::SIGKILL);
        if self.wait_exit(REAP_TIMEOUT).is_none() {
            panic!(
                "mariadbd pid {} not reaped {REAP_TIMEOUT:?} after SIGKILL",
                self.pid()
            );
        }
        self.frozen.store(false, Ordering::SeqCst);
        if let Err(e) = self.wait_port_closed() {
            panic!("kill9: {e}");
        }
    }

    /// Graceful shutdown (SIGTERM, bounded wait, then SIGKILL); returns once
    /// the port refuses connections.
    pub fn stop(&mut self) {
        if let Err(e) = self.stop_gracefully() {
            panic!(
                "stop: {e}\n--- error log tail ---\n{}",
                self.error_log_tail()
            );
        }
    }

    /// Start again on the same port and datadir (after `kill9` or `stop`; a
    /// running server is stopped gracefully first). Returns when ready.
    pub fn restart(&mut self) {
        if self.is_running() {
            self.stop();
        }
        if let Err(e) = self.spawn().and_then(|()| self.wait_ready()) {
            let tail = self.error_log_tail();
            self.kill_and_reap();
            panic!(
                "MariaDB failed to restart on port {}: {e}\n--- error log tail ({}) ---\n{tail}",
                self.port,
                self.log_path().display()
            );
        }
    }

    /// Whether the process is alive (a frozen server is running).
    pub fn is_running(&self) -> bool {
        let mut p = self.lock_proc();
        self.refresh(&mut p)
    }

    /// Server-side `KILL CONNECTION` of every session of `user` (except the
    /// admin connection doing it). Returns how many were killed, after they
    /// left the processlist (bounded wait).
    pub fn kill_connections(&self, user: &str) -> usize {
        self.with_helper("kill_connections", |c| Self::kill_connections_on(c, user))
    }

    fn kill_connections_on(c: &mut Conn, user: &str) -> usize {
        let ids: Vec<u64> = c
            .exec(
                "SELECT ID FROM information_schema.PROCESSLIST \
                 WHERE USER = ? AND ID <> CONNECTION_ID() AND COMMAND <> 'Killed'",
                (user,),
            )
            .unwrap_or_else(|e| panic!("kill_connections({user}): processlist: {e}"));
        let mut killed = Vec::new();
        for id in ids {
            match c.query_drop(format!("KILL CONNECTION {id}")) {
                Ok(()) => killed.push(id),
                // 1094: unknown thread id (it ended meanwhile).
                Err(mysql::Error::MySqlError(e)) if e.code == 1094 => {}
                Err(e) => panic!("kill_connections({user}): KILL CONNECTION {id}: {e}"),
            }
        }
        if !killed.is_empty() {
            let list = killed
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(",");
            let q =
                format!("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID IN ({list})");
            let deadline = Instant::now() + Duration::from_secs(2);
            while Instant::now() < deadline {
                match c.query_first::<u64, _>(&q) {
                    Ok(Some(0)) | Err(_) => break,
                    _ => thread::sleep(Duration::from_millis(5)),
                }
            }
        }
        killed.len()
    }

    /// Live sessions of `user` (killed ones excluded, the admin's own too).
    pub fn connection_count(&self, user: &str) -> usize {
        let n: Option<u64> = self
            .with_helper("connection_count", |c| {
                c.exec_first(
                    "SELECT COUNT(*) FROM information_schema.PROCESSLIST \
                     WHERE USER = ? AND ID <> CONNECTION_ID() AND COMMAND <> 'Killed'",
                    (user,),
                )
            })
            .unwrap_or_else(|e| panic!("connection_count({user}): {e}"));
        n.unwrap_or(0) as usize
    }

    /// Wait (bounded) until `connection_count(user) == expected`: sessions
    /// closed by a client leave the processlist asynchronously.
    pub fn wait_connection_count(&self, user: &str, expected: usize, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        loop {
            let n = self.connection_count(user);
            if n == expected {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{user} has {n} sessions on port {}, expected {expected} within {timeout:?}",
                self.port
            );
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// `CHANGE MASTER TO ... MASTER_USE_GTID=slave_pos; START SLAVE`, then wait
    /// until both replication threads run. Both servers need
    /// `ServerOpts::replication` with distinct server ids.
    pub fn make_replica_of(&self, primary: &MariaDb) {
        let (Some(mine), Some(theirs)) = (self.replication, primary.replication) else {
            panic!("make_replica_of: both servers must be started with ServerOpts {{ replication: Some(server_id), .. }}");
        };
        assert_ne!(mine, theirs, "make_replica_of: server ids must differ");
        self.sql(&format!(
            "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={}, \
             MASTER_USER='{REPL_USER}', MASTER_PASSWORD='{REPL_PASS}', \
             MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1",
            primary.port
        ));
        self.sql("START SLAVE");
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            let st = self.slave_status();
            let get = |k: &str| st.get(k).cloned().unwrap_or_default();
            let (io, sql) = (get("Slave_IO_Running"), get("Slave_SQL_Running"));
            if io == "Yes" && sql == "Yes" {
                return;
            }
            let sql_err = get("Last_SQL_Error");
            if sql == "No" && !sql_err.is_empty() {
                panic!("make_replica_of: SQL thread stopped: {sql_err}");
            }
            if Instant::now() >= deadline {
                panic!(
                    "make_replica_of: replication threads not running after {READY_TIMEOUT:?}: \
                     IO={io} ({}), SQL={sql} ({sql_err})\n--- replica error log ---\n{}",
                    get("Last_IO_Error"),
                    self.error_log_tail()
                );
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// Make this server (a former primary, or a replica of one) replicate
    /// from `primary`, continuing from its own GTID position
    /// (`MASTER_USE_GTID=current_pos`: a former primary's position is in its
    /// binary log, not in `gtid_slave_pos`), then wait until both
    /// replication threads run. Stops replication first if it runs. Leaves
    /// `read_only` as it is.
    pub fn repoint_to(&self, primary: &MariaDb) {
        self.sql("STOP SLAVE");
        self.sql(&format!(
            "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={}, \
             MASTER_USER='{REPL_USER}', MASTER_PASSWORD='{REPL_PASS}', \
             MASTER_USE_GTID=current_pos, MASTER_CONNECT_RETRY=1",
            primary.port
        ));
        self.sql("START SLAVE");
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            let st = self.slave_status();
            let get = |k: &str| st.get(k).cloned().unwrap_or_default();
            if get("Slave_IO_Running") == "Yes" && get("Slave_SQL_Running") == "Yes" {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "repoint_to: replication from port {} not running after {READY_TIMEOUT:?}: \
                 IO={} ({}), SQL={} ({})",
                primary.port,
                get("Slave_IO_Running"),
                get("Last_IO_Error"),
                get("Slave_SQL_Running"),
                get("Last_SQL_Error")
            );
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// `SHOW SLAVE STATUS` as column name -> value (empty if not a replica).
    pub fn slave_status(&self) -> HashMap<String, String> {
        let row: Option<Row> = self
            .with_helper("slave_status", |c| c.query_first("SHOW SLAVE STATUS"))
            .unwrap_or_else(|e| panic!("SHOW SLAVE STATUS on port {}: {e}", self.port));
        let mut out = HashMap::new();
        if let Some(row) = row {
            for (i, col) in row.columns_ref().iter().enumerate() {
                let v = match row.as_ref(i) {
                    Some(Value::NULL) | None => String::new(),
                    Some(v) => mysql::from_value_opt::<String>(v.clone()).unwrap_or_default(),
                };
                out.insert(col.name_str().into_owned(), v);
            }
        }
        out
    }

    /// Wait (bounded, 20 s) until this replica has applied everything in
    /// `primary`'s binary log so far (`MASTER_GTID_WAIT`).
    pub fn catch_up_with(&self, primary: &MariaDb) {
        let pos = primary
            .query_string("SELECT @@gtid_binlog_pos")
            .unwrap_or_default();
        if pos.is_empty() {
            return;
        }
        let mut c = self
            .connect_root(None, Duration::from_secs(25))
            .unwrap_or_else(|e| panic!("catch_up_with: connect to replica: {e}"));
        let r: Option<i64> = c
            .query_first(format!("SELECT MASTER_GTID_WAIT('{pos}', 20)"))
            .unwrap_or_else(|e| panic!("catch_up_with: MASTER_GTID_WAIT: {e}"));
        assert_eq!(
            r,
            Some(0),
            "replica on port {} did not reach GTID {pos} in 20 s; slave status: {:?}",
            self.port,
            self.slave_status()
        );
    }

    /// The last lines of the server's error log (and of its stderr, if any).
    pub fn error_log_tail(&self) -> String {
        let mut out = match fs::read(self.log_path()) {
            Ok(b) => tail_lines(&String::from_utf8_lossy(&b), LOG_TAIL_LINES),
            Err(e) => format!("(no error log at {}: {e})", self.log_path().display()),
        };
        if let Ok(b) = fs::read(self.stderr_path()) {
            let s = String::from_utf8_lossy(&b);
            if !s.trim().is_empty() {
                out.push_str("\n--- stderr ---\n");
                out.push_str(&tail_lines(&s, LOG_TAIL_LINES));
            }
        }
        out
    }
}

impl Drop for MariaDb {
    fn drop(&mut self) {
        if thread::panicking() && self.owns_dir {
            // The directory is about to go: keep the evidence in the test output.
            eprintln!(
                "--- test panicked; error log tail of MariaDB port {} (pid {}) ---\n{}",
                self.port,
                self.pid(),
                self.error_log_tail()
            );
        }
        let reaped = self.kill_and_reap();
        if !reaped {
            log::warn!(
                "mariadbd pid {} not reaped; left for atexit cleanup",
                self.pid()
            );
            return;
        }
        registry().remove(&self.id);
        if self.owns_dir {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}

impl std::fmt::Debug for MariaDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MariaDb")
            .field("port", &self.port)
            .field("pid", &self.pid())
            .field("dir", &self.dir)
            .field("replication", &self.replication)
            .finish()
    }
}

/// A value as the text protocol would show it (None: NULL).
fn value_text(v: Value) -> Option<String> {
    match v {
        Value::NULL => None,
        Value::Bytes(b) => Some(String::from_utf8_lossy(&b).into_owned()),
        Value::Int(i) => Some(i.to_string()),
        Value::UInt(u) => Some(u.to_string()),
        Value::Float(f) => Some(f.to_string()),
        Value::Double(d) => Some(d.to_string()),
        other => Some(other.as_sql(true).trim_matches('\'').to_string()),
    }
}

fn copy_datadir(template: &Path, dest: &Path) -> Result<(), String> {
    let out = Command::new("cp")
        .arg("-a")
        .arg(template)
        .arg(dest)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run cp: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cp -a {} {} failed: {}",
            template.display(),
            dest.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(())
}
