//! The password never leaks: Debug/Display of the configuration, the pool,
//! stats, errors, events, log lines and the command line's output are all
//! searched for a known password (and for the monitor's).

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mysql::prelude::Queryable;
use staunch::{Event, Pool};
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

fn assert_clean(what: &str, text: &str) {
    assert!(!text.contains(PW), "{what} shows the password: {text}");
    assert!(
        !text.contains(MON_PW),
        "{what} shows the monitor password: {text}"
    );
}

#[test]
fn the_password_appears_nowhere() {
    log::set_logger(&LOGS).unwrap();
    log::set_max_level(log::LevelFilter::Trace);
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
    let events = Arc::new(Mutex::new(Vec::new()));
    let ev = events.clone();
    proxy.set_mode(Mode::BlackHole);
    let pool = Pool::builder()
        .url(&url)
        .event_listener(Arc::new(move |e: &Event| {
            ev.lock().unwrap().push(format!("{e:?}"))
        }))
        .build()
        .unwrap();
    let e = pool.get().unwrap_err();
    seen.push(format!("{e} {e:?}"));
    proxy.set_mode(Mode::Pass);
    let mut c = pool.get_timeout(Duration::from_secs(3)).unwrap();
    c.query_drop("SELECT 1").unwrap();
    std::thread::sleep(Duration::from_millis(300)); // leak report
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

    // The command line.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_staunch"))
        .args(["check", &url])
        .output()
        .unwrap();
    let cli = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "check failed: {cli}");
    seen.push(cli);

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
