//! The password never leaks: Debug/Display of the configuration, the pool,
//! stats, errors, events and log lines are all searched for a known password
//! (and for the monitor's). The command line's output is searched by
//! cli/tests/secrets.rs.

use staunch_testkit as support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use staunch::prelude::*;
use staunch::{Config, Event, Pool};
use support::{MariaDb, Mode, Proxy};

const PW: &str = "Zq9-very-secret-pw";
const MON_PW: &str = "Mq7-monitor-secret";

struct Capture(Mutex<Vec<String>>);

impl log::Log for Capture {
    fn enabled(&self, _: &log::Metadata) -> bool {
        true
    }
    fn log(&self, r: &log::Record) {
        self.0
            .lock()
            .unwrap()
            .push(format!("{} {}", r.target(), r.args()));
    }
    fn flush(&self) {}
}

static LOGS: Capture = Capture(Mutex::new(Vec::new()));

/// A password with characters that must be percent-encoded in a URL, and
/// that encoding: neither form may show.
const ODD_PW: &str = "Kx4/s@cret:pw#%";
const ODD_PW_URL: &str = "Kx4%2Fs%40cret%3Apw%23%25";

fn assert_clean(what: &str, text: &str) {
    assert!(!text.contains(PW), "{what} shows the password: {text}");
    assert!(!text.contains(ODD_PW), "{what} shows the password: {text}");
    assert!(
        !text.contains(ODD_PW_URL),
        "{what} shows the encoded password: {text}"
    );
    assert!(
        !text.contains(MON_PW),
        "{what} shows the monitor password: {text}"
    );
}

/// A pool whose events are recorded as their Debug text.
fn recording_pool(url: &str) -> (Pool, Arc<Mutex<Vec<String>>>) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let ev = events.clone();
    let pool = Pool::builder()
        .url(url)
        .event_listener(Arc::new(move |e: &Event| {
            ev.lock().unwrap().push(format!("{e:?}"))
        }))
        .build()
        .unwrap();
    (pool, events)
}

fn capture_logs() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        log::set_logger(&LOGS).unwrap();
        log::set_max_level(log::LevelFilter::Trace);
    });
}

#[test]
fn the_password_appears_nowhere() {
    capture_logs();
    let s = MariaDb::start();
    s.sql(&format!("CREATE USER 'sec'@'%' IDENTIFIED BY '{PW}'"));
    s.sql("GRANT ALL ON staunch_test.* TO 'sec'@'%'");
    let proxy = Proxy::start(s.addr());
    let url = format!(
        "mysql://sec:{PW}@127.0.0.1:{}/staunch_test?connect_timeout=300ms&connection_timeout=700ms\
         &monitor_password={MON_PW}&leak_detection_threshold=50ms",
        proxy.port()
    );
    let mut seen = Vec::<String>::new();

    // Configuration and builder.
    let cfg = staunch::Config::from_url(&url).unwrap();
    seen.push(format!("{cfg:?}"));
    seen.push(format!("{:?}", staunch::Builder::new().url(&url)));
    // Config errors that quote the URL or a knob.
    for bad in [
        url.replace("mysql://", "postgres://"),
        format!("{url}&bogus=1"),
        format!("{url}&max_size=x"),
        url.replace("/staunch_test", ":99999/staunch_test"),
    ] {
        let e = Pool::from_url(&bad).unwrap_err();
        seen.push(format!("{e} {e:?}"));
    }

    // A pool through a proxy that fails, recovers, leaks and closes.
    proxy.set_mode(Mode::BlackHole);
    let (pool, events) = recording_pool(&url);
    let e = pool.get().unwrap_err();
    seen.push(format!("{e} {e:?}"));
    proxy.set_mode(Mode::Pass);
    let mut c = pool.get_timeout(Duration::from_secs(3)).unwrap();
    c.query_drop("SELECT 1").unwrap();
    // The leak report (its stack is resolved on a thread of its own).
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !events
        .lock()
        .unwrap()
        .iter()
        .any(|x| x.contains("LeakSuspected"))
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(c);
    seen.push(format!("{pool:?}"));
    seen.push(format!("{:?}", pool.stats()));
    seen.push(format!("{:?}", pool.host_stats()));
    pool.close();

    // Wrong password: the server's answer, and our error around it.
    let wrong = url.replace(PW, "not-the-password");
    let p2 = Pool::from_url(&wrong).unwrap();
    let e = p2.get().unwrap_err();
    seen.push(format!("{e} {e:?}"));

    seen.extend(events.lock().unwrap().iter().cloned());
    seen.extend(LOGS.0.lock().unwrap().iter().cloned());
    assert!(
        seen.iter().any(|x| x.contains("LeakSuspected")),
        "the leak event must be there"
    );
    assert!(
        seen.iter().any(|x| x.contains("ConnectFailed")),
        "a connect failure must be there"
    );
    for (i, text) in seen.iter().enumerate() {
        assert_clean(&format!("output #{i}"), text);
    }
}

/// The topology side: the monitor's probes, host checks and events, a split
/// brain, and a password that needs percent-encoding in the URL.
#[test]
fn the_password_appears_nowhere_in_topology_and_monitor() {
    capture_logs();
    let a = MariaDb::start();
    let b = MariaDb::start();
    for s in [&a, &b] {
        s.sql(&format!("CREATE USER 'odd'@'%' IDENTIFIED BY '{ODD_PW}'"));
        s.sql("GRANT ALL ON staunch_test.* TO 'odd'@'%'");
    }
    for s in [&a, &b] {
        s.sql(&format!("CREATE USER 'mon'@'%' IDENTIFIED BY '{MON_PW}'"));
        s.sql("GRANT ALL ON *.* TO 'mon'@'%'");
    }
    let url = format!(
        "mysql://odd:{ODD_PW_URL}@127.0.0.1:{},127.0.0.1:{}/staunch_test?topology=replication\
         &monitor_user=mon&monitor_password={MON_PW}&ping_interval=100ms&ping_timeout=500ms\
         &connect_timeout=500ms&connection_timeout=1s",
        a.port(),
        b.port()
    );
    let mut seen = Vec::<String>::new();
    let cfg = staunch::Config::from_url(&url).unwrap();
    seen.push(format!("{cfg:?}"));
    let e = Pool::from_url(&url.replace(ODD_PW_URL, "Kx4%2")).unwrap_err();
    seen.push(format!("{e} {e:?}"));

    let (pool, events) = recording_pool(&url);
    // Both hosts are writable: once the monitor has looked, that is a split
    // brain (reported; the first host stays the writer).
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !events
        .lock()
        .unwrap()
        .iter()
        .any(|x| x.contains("SplitBrain"))
    {
        assert!(
            std::time::Instant::now() < deadline,
            "no split brain reported: {:?}",
            events.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut w = pool.get().unwrap();
    w.query_drop("SELECT 1").unwrap();
    drop(w);
    let mut r = pool.get_read().unwrap();
    r.query_drop("SELECT 1").unwrap();
    drop(r);
    seen.push(format!("{pool:?}"));
    seen.push(format!("{:?}", pool.stats()));
    seen.push(format!("{:?}", pool.host_stats()));
    pool.close();
    let events = events.lock().unwrap().clone();
    assert!(
        events.iter().any(|x| x.contains("SplitBrain")),
        "the split brain event must be there: {events:?}"
    );
    seen.extend(events);

    seen.extend(LOGS.0.lock().unwrap().iter().cloned());
    for (i, text) in seen.iter().enumerate() {
        assert_clean(&format!("output #{i}"), text);
    }
}

/// The characters a generated password often holds that a URL gives a
/// meaning to, and a space.
const URL_CHARS: [char; 8] = ['/', '?', '#', '@', ':', '%', '+', ' '];
/// The two halves of every password below: neither may show anywhere.
const HALVES: [&str; 2] = ["Qv3lft", "Zr8rgt"];

/// `%XX` for every byte but ASCII letters and digits.
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// (broken part, url) for a password written `pw` and a server at `port`.
fn url_matrix(pw: &str, port: u16) -> Vec<(&'static str, String)> {
    let q = "connect_timeout=200ms&connection_timeout=300ms";
    vec![
        ("none", format!("mysql://app:{pw}@127.0.0.1:{port}/db?{q}")),
        ("scheme", format!("mysq://app:{pw}@127.0.0.1:{port}/db?{q}")),
        ("scheme", format!("mysql:/app:{pw}@127.0.0.1:{port}/db?{q}")),
        ("scheme", format!("app:{pw}@127.0.0.1:{port}/db?{q}")),
        ("host", format!("mysql://app:{pw}@[127.0.0.1:{port}/db?{q}")),
        (
            "host",
            format!("mysql://app:{pw}@127.0.0.1,,h:{port}/db?{q}"),
        ),
        ("port", format!("mysql://app:{pw}@127.0.0.1:99999/db?{q}")),
        ("port", format!("mysql://app:{pw}@127.0.0.1:3x06/db?{q}")),
        (
            "path",
            format!("mysql://app:{pw}@127.0.0.1:{port}/d%zz?{q}"),
        ),
        (
            "path",
            format!("mysql://app:{pw}@127.0.0.1:{port}/d%C3?{q}"),
        ),
        (
            "query knob",
            format!("mysql://app:{pw}@127.0.0.1:{port}/db?{q}&max_size=x"),
        ),
        (
            "query knob",
            format!("mysql://app:{pw}@127.0.0.1:{port}/db?{q}&max_size"),
        ),
        (
            "unknown knob",
            format!("mysql://app:{pw}@127.0.0.1:{port}/db?{q}&bogus=1"),
        ),
    ]
}

/// conf_secret_never_printed: passwords holding each of `/ ? # @ : % +` and
/// a space, written raw and percent-encoded, in URLs well-formed and broken
/// in each part. Every configuration, builder, pool, error (with its whole
/// `source()` chain), event and log line is printed (`{}` and `{:?}`), and
/// neither half of the password may show. A well-formed URL must also
/// parse with the user and host it names, the password's `@`, `/` or `?`
/// notwithstanding.
#[test]
fn conf_secret_never_printed() {
    capture_logs();
    // A port nothing listens on: connects are refused at once.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut seen = Vec::<(String, String)>::new();
    let mut matrix = Vec::new();
    for c in URL_CHARS {
        let pw = format!("{}{c}{}", HALVES[0], HALVES[1]);
        for (written, form) in [("raw", pw.clone()), ("encoded", encode(&pw))] {
            for (part, url) in url_matrix(&form, port) {
                let what = format!("{c:?} {written} broken={part}: {url}");
                let mut out = vec![Config::redact_url(&url)];
                out.push(format!("{:?}", staunch::Builder::new().url(&url)));
                let parsed = staunch::Config::from_url(&url);
                match &parsed {
                    Ok(cfg) => {
                        out.push(format!("{cfg} {cfg:?}"));
                        assert_eq!(cfg.connect().user(), Some("app"), "{what}");
                        assert_eq!(
                            cfg.connect().endpoint(),
                            format!("127.0.0.1:{port}"),
                            "{what}"
                        );
                    }
                    Err(e) => out.push(chain(e)),
                }
                if part == "none" && (written == "encoded" || c != '%') {
                    assert!(parsed.is_ok(), "{what}: {}", chain(&parsed.unwrap_err()));
                }
                if part != "none" {
                    assert!(parsed.is_err(), "{what} must not parse");
                }
                let events = Arc::new(Mutex::new(Vec::new()));
                let ev = events.clone();
                match Pool::builder()
                    .url(&url)
                    .event_listener(Arc::new(move |e: &Event| {
                        ev.lock().unwrap().push(format!("{e} {e:?}"))
                    }))
                    .build()
                {
                    Ok(pool) => {
                        out.push(format!("{pool} {pool:?}"));
                        let e = pool.get().unwrap_err();
                        out.push(chain(&e));
                        out.push(format!("{:?}", pool.stats()));
                        pool.close();
                    }
                    Err(e) => out.push(chain(&e)),
                }
                out.extend(events.lock().unwrap().iter().cloned());
                // And through the default listener, the log.
                if let Ok(pool) = Pool::from_url(&url) {
                    out.push(chain(&pool.get().unwrap_err()));
                    pool.close();
                }
                matrix.push(format!(
                    "{c:?} {written} {part}: {}",
                    if parsed.is_ok() {
                        "parsed"
                    } else {
                        "config error"
                    }
                ));
                seen.extend(out.into_iter().map(|o| (what.clone(), o)));
            }
        }
    }
    let logs = LOGS.0.lock().unwrap().clone();
    assert!(
        !logs.is_empty(),
        "the refused connects must have been logged"
    );
    seen.extend(logs.into_iter().map(|l| ("log".to_string(), l)));
    for (what, text) in &seen {
        for h in HALVES {
            assert!(!text.contains(h), "{what}: the password shows in: {text}");
        }
    }
    eprintln!("{}", matrix.join("\n"));
}

/// An error as anyhow's `{:#}` and `{:?}` show it: each cause in turn.
fn chain(e: &staunch::Error) -> String {
    let mut s = format!("{e} {e:?}");
    let mut cur: Option<&dyn std::error::Error> = std::error::Error::source(e);
    while let Some(c) = cur {
        s.push_str(&format!(": {c} {c:?}"));
        cur = c.source();
    }
    s
}
