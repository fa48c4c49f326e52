//! `staunch monitor URL`: the primary monitor of a topology pool, standalone.
//!
//! Opens a pool over the URL's hosts with `monitor=true` and `min_idle=0`
//! (so it holds no application connection) and prints, MHA-style with a
//! wall-clock timestamp, every event of the monitor and every change it makes
//! to a host's state, plus one status line per `ping_interval`: the writer
//! and each host's health and replication lag (`Pool::host_stats`). Runs
//! until Ctrl-C or SIGTERM (exit 0).
//!
//! The drill prints the same event lines (`describe`).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use staunch::duration::fmt_duration;
use staunch::{Event, HostHealth, HostStats};

use crate::workload::lock;
use crate::{signals, EXIT_OK, EXIT_SETUP};

/// Knobs of the monitor shown in the header: (name, default). The library
/// does not expose the parsed topology knobs, so they are read back from the
/// URL, with the library's defaults.
const SHOWN_KNOBS: &[(&str, &str)] = &[
    ("ping_type", "select"),
    ("ping_interval", "1s"),
    ("ping_timeout", "2s"),
    ("failure_threshold", "4"),
    ("secondary_check", "replicas"),
    ("max_replication_lag", "30s"),
    ("min_failover_interval", "60s"),
];

/// One line for a topology event: its MHA-style level and the library's own
/// text (`Event`'s `Display`). None for the per-connection events
/// (connects, closes, ...).
pub fn describe(e: &Event) -> Option<(&'static str, String)> {
    match e {
        Event::Connected { .. }
        | Event::ConnectFailed { .. }
        | Event::Recovered { .. }
        | Event::Closed { .. }
        | Event::ValidationFailed { .. }
        | Event::LeakSuspected { .. }
        | Event::AcquireTimeout { .. }
        | Event::PoolClosed => None,
        _ => Some((
            match e.level() {
                log::Level::Error => "error",
                log::Level::Warn => "warning",
                _ => "info",
            },
            e.to_string(),
        )),
    }
}

/// `Sat Jun 15 10:20:30.123 2024`: local wall-clock time, as MHA prints it
/// (with milliseconds).
pub fn wall_clock(t: SystemTime) -> String {
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs() as libc::time_t;
    // SAFETY: localtime_r only writes the struct we own.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let ok = unsafe { !libc::localtime_r(&secs, &mut tm).is_null() };
    if !ok {
        return format!("{}.{:03}", d.as_secs(), d.subsec_millis());
    }
    format!(
        "{} {} {:>2} {:02}:{:02}:{:02}.{:03} {}",
        DAYS[tm.tm_wday.clamp(0, 6) as usize],
        MONTHS[tm.tm_mon.clamp(0, 11) as usize],
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        d.subsec_millis(),
        tm.tm_year + 1900
    )
}

fn print_line(t: SystemTime, level: &str, text: &str) {
    println!("{} - [{level}] {text}", wall_clock(t));
}

/// The URL's query parameters, in order (values as written).
fn params(url: &str) -> Vec<(String, String)> {
    staunch::Config::url_query(url)
        .map(|q| {
            q.split('&')
                .filter_map(|p| p.split_once('='))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        })
        .unwrap_or_default()
}

/// How many hosts the URL names (`h1:p1,h2:p2,...`).
fn host_count(url: &str) -> usize {
    let hosts = staunch::Config::url_hosts(url);
    if hosts.is_empty() {
        1
    } else {
        hosts.split(',').count()
    }
}

/// The URL with `topology=replication` added when it names several hosts
/// and says nothing about the topology.
pub fn with_topology(url: &str) -> String {
    if host_count(url) < 2 || params(url).iter().any(|(k, _)| k == "topology") {
        return url.to_string();
    }
    let sep = if !url.contains('?') {
        "?"
    } else if url.ends_with('?') || url.ends_with('&') {
        ""
    } else {
        "&"
    };
    format!("{url}{sep}topology=replication")
}

/// A knob's value as written in the URL, or its default.
fn knob(url: &str, name: &str, default: &str) -> String {
    params(url)
        .into_iter()
        .rev()
        .find(|(k, _)| k == name)
        .map_or_else(|| default.to_string(), |(_, v)| v)
}

fn health(h: HostHealth) -> &'static str {
    match h {
        HostHealth::Healthy => "healthy",
        HostHealth::Lagging => "lagging",
        HostHealth::Down => "down",
        HostHealth::Stale => "stale primary (no reads, no writes)",
        _ => "unknown",
    }
}

/// `127.0.0.1:3306 writer, healthy` or `127.0.0.1:3307 healthy, lag 0s`.
fn host_line(h: &HostStats) -> String {
    let state = match (h.health, h.lag) {
        (HostHealth::Healthy, Some(l)) if !h.is_writer => format!("healthy, lag {}s", l.as_secs()),
        (HostHealth::Lagging, Some(l)) => format!("lagging {}s (no reads)", l.as_secs()),
        (HostHealth::Lagging, None) => "not replicating (no reads)".to_string(),
        (HostHealth::Down, _) => "down".to_string(),
        (other, _) => health(other).to_string(),
    };
    if h.is_writer {
        format!("{} writer, {state}", h.endpoint)
    } else {
        format!("{} {state}", h.endpoint)
    }
}

/// Serves `pool`'s Prometheus text to every `GET /metrics` (or `GET /`) on
/// `listener`, one request per connection, each bounded (2 s to read the
/// request, 2 s to write the answer), until the process ends.
fn serve_prometheus(listener: std::net::TcpListener, pool: staunch::Pool) {
    use std::io::{Read, Write};
    for stream in listener.incoming() {
        let Ok(mut s) = stream else { continue };
        let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
        let _ = s.set_write_timeout(Some(Duration::from_secs(2)));
        let mut req = Vec::with_capacity(512);
        let mut buf = [0u8; 1024];
        while !req.windows(4).any(|w| w == b"\r\n\r\n") && req.len() < 8192 {
            match s.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => req.extend_from_slice(&buf[..n]),
            }
        }
        let line = String::from_utf8_lossy(&req);
        let path = line.split(' ').nth(1).unwrap_or("");
        let reply = if line.starts_with("GET ") && matches!(path, "/metrics" | "/") {
            let body = pool.metrics_text();
            format!(
                "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
        } else {
            "HTTP/1.0 404 Not Found\r\nContent-Length: 25\r\nConnection: close\r\n\r\nthe figures are /metrics\n".to_owned()
        };
        let _ = s.write_all(reply.as_bytes());
    }
}

pub fn run(url: &str, prometheus: Option<std::net::SocketAddr>) -> u8 {
    let url = with_topology(url);
    let cfg = match staunch::Config::from_url(&url) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("staunch monitor: {e}");
            return EXIT_SETUP;
        }
    };
    let ping_interval =
        staunch::duration::parse_duration("ping_interval", &knob(&url, "ping_interval", "1s"))
            .unwrap_or(Duration::from_secs(1));
    let events: Arc<Mutex<Vec<(SystemTime, Event)>>> = Arc::default();
    let listener = {
        let events = events.clone();
        move |e: &Event| {
            if describe(e).is_some() {
                lock(&events).push((SystemTime::now(), e.clone()));
            }
        }
    };
    let pool = match staunch::Builder::new()
        .url(&url)
        .set("monitor", "true")
        .min_idle(0)
        .initialization_fail_timeout(None)
        .event_listener(Arc::new(listener))
        .build()
    {
        Ok(p) => p,
        Err(e) => {
            eprintln!("staunch monitor: cannot open the pool: {e}");
            return EXIT_SETUP;
        }
    };
    let now = SystemTime::now();
    if let Some(addr) = prometheus {
        let listener = match std::net::TcpListener::bind(addr) {
            Ok(l) => l,
            Err(e) => {
                eprintln!("staunch monitor: cannot listen on {addr} for --prometheus: {e}");
                return EXIT_SETUP;
            }
        };
        let p = pool.clone();
        if let Err(e) = std::thread::Builder::new()
            .name("staunch-prometheus".into())
            .spawn(move || serve_prometheus(listener, p))
        {
            eprintln!("staunch monitor: cannot start the --prometheus thread: {e}");
            return EXIT_SETUP;
        }
        print_line(
            now,
            "info",
            &format!("serving the pool's figures as Prometheus text at http://{addr}/metrics"),
        );
    }
    let hosts = pool.host_stats();
    print_line(
        now,
        "info",
        &format!(
            "staunch monitor {}: {} {}",
            staunch::Config::redact_url(&url),
            hosts.len(),
            if hosts.len() == 1 { "host" } else { "hosts" }
        ),
    );
    let knobs: Vec<String> = SHOWN_KNOBS
        .iter()
        .map(|(k, d)| format!("{k}={}", knob(&url, k, d)))
        .collect();
    print_line(
        now,
        "info",
        &format!(
            "{}, connect_timeout={}",
            knobs.join(", "),
            fmt_duration(cfg.pool().connect_timeout())
        ),
    );
    print_line(
        now,
        "info",
        &format!(
            "initial writer {} (first host; the first check looks for the one host with read_only=0); Ctrl-C to stop",
            pool.writer().unwrap_or_else(|| "none".into())
        ),
    );

    let mut last: Vec<HostStats> = hosts;
    let mut last_writer = pool.writer();
    let mut next_tick = Instant::now() + ping_interval;
    loop {
        for (t, e) in std::mem::take(&mut *lock(&events)) {
            if let Some((level, text)) = describe(&e) {
                print_line(t, level, &text);
            }
        }
        if signals::interrupted() {
            print_line(SystemTime::now(), "info", "interrupted: closing the pool");
            pool.close();
            return EXIT_OK;
        }
        if Instant::now() >= next_tick {
            next_tick += ping_interval;
            if next_tick < Instant::now() {
                next_tick = Instant::now() + ping_interval;
            }
            let now = SystemTime::now();
            let hs = pool.host_stats();
            let writer = pool.writer();
            if writer != last_writer {
                print_line(
                    now,
                    if writer.is_some() { "info" } else { "warning" },
                    &format!(
                        "state: writer {} -> {}",
                        last_writer.as_deref().unwrap_or("none"),
                        writer.as_deref().unwrap_or("none (writes refused)")
                    ),
                );
                last_writer = writer.clone();
            }
            for h in &hs {
                if let Some(before) = last.iter().find(|b| b.endpoint == h.endpoint) {
                    if before.health != h.health {
                        let level = match h.health {
                            HostHealth::Healthy => "info",
                            _ => "warning",
                        };
                        print_line(
                            now,
                            level,
                            &format!(
                                "state: {} {} -> {}",
                                h.endpoint,
                                health(before.health),
                                health(h.health)
                            ),
                        );
                    }
                }
            }
            let parts: Vec<String> = hs.iter().map(host_line).collect();
            print_line(
                now,
                "info",
                &format!(
                    "writer {} | {}",
                    writer.as_deref().unwrap_or("none"),
                    parts.join(" | ")
                ),
            );
            last = hs;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn several_hosts_imply_replication() {
        assert_eq!(
            with_topology("mysql://u:p@a:1,b:2/db"),
            "mysql://u:p@a:1,b:2/db?topology=replication"
        );
        assert_eq!(
            with_topology("mysql://u:p@a:1,b:2/db?ping_interval=1s"),
            "mysql://u:p@a:1,b:2/db?ping_interval=1s&topology=replication"
        );
        assert_eq!(
            with_topology("mysql://a:1,b:2?topology=single"),
            "mysql://a:1,b:2?topology=single"
        );
        assert_eq!(with_topology("mysql://u:p@a:1/db"), "mysql://u:p@a:1/db");
    }

    #[test]
    fn knobs_are_read_back() {
        let u = "mysql://a:1,b:2/db?ping_interval=250ms&failure_threshold=3";
        assert_eq!(knob(u, "ping_interval", "1s"), "250ms");
        assert_eq!(knob(u, "ping_timeout", "2s"), "2s");
    }
}
