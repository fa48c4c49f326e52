//! `staunch check URL`: connect once, with the pool's hard deadlines, and say
//! what the server is, or exactly why it could not be reached.
//!
//! The connect goes through a `staunch::Pool` (min_idle 0, one connection):
//! the watchdog that cuts a connect stuck past `connect_timeout` lives there,
//! so a server that accepts TCP and never greets is reported at the deadline
//! instead of hanging. Every query afterwards is bounded by a socket timeout.

use std::time::{Duration, Instant};

use staunch::prelude::*;
use staunch::{Row, Value};

use crate::workload::fmt_d;
use crate::{EXIT_FAILED, EXIT_OK};

pub fn run(url: &str) -> u8 {
    println!("staunch check {}", staunch::Config::redact_url(url));
    let cfg = match staunch::Config::from_url(url) {
        Ok(c) => c,
        Err(e) => {
            println!("  cannot check: {e}");
            return EXIT_FAILED;
        }
    };
    let connect_timeout = cfg.pool().connect_timeout();
    let query_timeout = connect_timeout.max(Duration::from_secs(2));
    let pool = match staunch::Builder::new()
        .url(url)
        .max_size(1)
        .min_idle(0)
        .initialization_fail_timeout(None)
        .query_timeout(Some(query_timeout))
        .build()
    {
        Ok(p) => p,
        Err(e) => {
            println!("  cannot check: {e}");
            return EXIT_FAILED;
        }
    };
    let t = Instant::now();
    // One whole connect (bounded by connect_timeout), and a little slack.
    let got = pool.get_timeout(connect_timeout + Duration::from_millis(250));
    let took = t.elapsed();
    let mut c = match got {
        Ok(c) => c,
        Err(e) => {
            println!(
                "  could not connect to {} (gave up after {}; connect_timeout {})",
                cfg.connect().endpoint(),
                fmt_d(took),
                staunch::duration::fmt_duration(connect_timeout)
            );
            println!("  error ({}): {e}", e.kind().as_str());
            pool.close();
            return EXIT_FAILED;
        }
    };
    println!(
        "  connected to {} in {}",
        cfg.connect().endpoint(),
        fmt_d(took)
    );
    let row: staunch::Result<Option<Row>> = c.query_first(
        "SELECT VERSION(), @@version_comment, @@hostname, @@port, @@read_only, \
         @@log_bin, CURRENT_USER(), DATABASE(), CONNECTION_ID()",
    );
    let row = match row {
        Ok(Some(r)) => r,
        Ok(None) => {
            println!("  the server answered a SELECT with no row");
            return EXIT_FAILED;
        }
        Err(e) => {
            println!("  connected, but the first query failed: {e}");
            return EXIT_FAILED;
        }
    };
    let v = |i: usize| row.as_ref(i).map(text).unwrap_or_default();
    let on_off = |s: String| match s.as_str() {
        "1" => "ON".to_string(),
        "0" => "OFF".to_string(),
        _ => s,
    };
    print_field("server", &format!("{} ({})", v(0), v(1)));
    print_field("hostname", &v(2));
    print_field("port", &v(3));
    let ro = on_off(v(4));
    let ro_note = if ro == "OFF" {
        " (writes allowed)"
    } else {
        " (writes refused for users without the read-only admin privilege)"
    };
    print_field("read_only", &format!("{ro}{ro_note}"));
    print_field("binary log", &on_off(v(5)));
    print_field(
        "session",
        &format!("user {}, database {}, connection id {}", v(6), v(7), v(8)),
    );
    print_field("replication", &replication(&mut c));
    print_field("monitor", &monitor(&mut c, &cfg));
    let uptime: staunch::Result<Option<(String, String)>> =
        c.query_first("SHOW GLOBAL STATUS LIKE 'Uptime'");
    let uptime = match uptime {
        Ok(Some((_, secs))) => secs.parse::<u64>().map(fmt_uptime).unwrap_or_else(|_| secs),
        Ok(None) => "unknown".into(),
        Err(e) => format!("unknown ({e})"),
    };
    print_field("uptime", &uptime);
    drop(c);
    pool.close();
    EXIT_OK
}

fn print_field(name: &str, value: &str) {
    println!("  {name:<12} {value}");
}

/// `SHOW SLAVE STATUS` (or `SHOW REPLICA STATUS` where the former is gone),
/// summed up in one line.
fn replication(c: &mut staunch::PooledConn) -> String {
    let mut status: staunch::Result<Option<Row>> = c.query_first("SHOW SLAVE STATUS");
    if let Err(e) = &status {
        // 1064: syntax error (MySQL 8.4 removed SHOW SLAVE STATUS).
        if e.server_code() == Some(1064) {
            status = c.query_first("SHOW REPLICA STATUS");
        }
    }
    let row = match status {
        Ok(Some(r)) => r,
        Ok(None) => return "not a replica".into(),
        Err(e) if e.server_code() == Some(1227) => {
            return format!(
                "unknown: the user may not run SHOW SLAVE STATUS (needs REPLICATION CLIENT or SLAVE MONITOR): {e}"
            )
        }
        Err(e) => return format!("unknown: SHOW SLAVE STATUS failed: {e}"),
    };
    let get = |names: &[&str]| -> String {
        for (i, col) in row.columns_ref().iter().enumerate() {
            if names.iter().any(|n| col.name_str().eq_ignore_ascii_case(n)) {
                return row.as_ref(i).map(text).unwrap_or_default();
            }
        }
        String::new()
    };
    let host = get(&["Master_Host", "Source_Host"]);
    let port = get(&["Master_Port", "Source_Port"]);
    let io = get(&["Slave_IO_Running", "Replica_IO_Running"]);
    let sql = get(&["Slave_SQL_Running", "Replica_SQL_Running"]);
    let behind = get(&["Seconds_Behind_Master", "Seconds_Behind_Source"]);
    let mut s = format!("replica of {host}:{port}, IO thread {io}, SQL thread {sql}");
    if behind.is_empty() || behind == "NULL" {
        s.push_str(", lag unknown");
    } else {
        s.push_str(&format!(", {behind}s behind"));
    }
    for (what, names) in [
        ("last IO error", ["Last_IO_Error", "Last_IO_Error"]),
        ("last SQL error", ["Last_SQL_Error", "Last_SQL_Error"]),
    ] {
        let e = get(&names);
        if !e.is_empty() {
            s.push_str(&format!("; {what}: {e}"));
        }
    }
    s
}

/// Whether the topology monitor may run its probe as this session's user:
/// the same `MonitorPrivilegeMissing` text the monitor tells at its first
/// look, or that nothing is missing.
fn monitor(c: &mut staunch::PooledConn, cfg: &staunch::Config) -> String {
    if let Some(user) = cfg.topology().monitor_user() {
        return format!(
            "runs as monitor_user {user} (not checked here: this session is the URL's user)"
        );
    }
    match staunch::missing_privileges(c, &cfg.connect().endpoint()) {
        Ok(told) if told.is_empty() => {
            "this user may run every statement of the monitor's probe".into()
        }
        Ok(told) => told
            .iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join("; "),
        Err(e) => format!("unknown: {e}"),
    }
}

/// A value as text (NULL as `NULL`).
fn text(v: &Value) -> String {
    match v {
        Value::NULL => "NULL".into(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Double(d) => d.to_string(),
        other => other.as_sql(true),
    }
}

fn fmt_uptime(secs: u64) -> String {
    let (d, h, m, s) = (secs / 86400, secs / 3600 % 24, secs / 60 % 60, secs % 60);
    if d > 0 {
        format!("{d}d {h}h {m}m {s}s")
    } else if h > 0 {
        format!("{h}h {m}m {s}s")
    } else if m > 0 {
        format!("{m}m {s}s")
    } else {
        format!("{s}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uptime_reads_well() {
        assert_eq!(fmt_uptime(5), "5s");
        assert_eq!(fmt_uptime(3 * 3600 + 61), "3h 1m 1s");
        assert_eq!(fmt_uptime(2 * 86400 + 5), "2d 0h 0m 5s");
    }
}
