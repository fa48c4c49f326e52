//! The password never leaks from the command line: `staunch check` and
//! `staunch monitor` output is searched for a known password (and for the
//! monitor's, and for the percent-encoded form of a password that needs it).
//! The library's own output is searched by the library's tests/secrets.rs.

use std::process::{Command, Stdio};
use std::time::Duration;

use staunch_testkit::MariaDb;

const PW: &str = "Zq9-very-secret-pw";
const MON_PW: &str = "Mq7-monitor-secret";
const ODD_PW: &str = "Kx4/s@cret:pw#%";
const ODD_PW_URL: &str = "Kx4%2Fs%40cret%3Apw%23%25";

fn assert_clean(what: &str, text: &str) {
    for secret in [PW, ODD_PW, ODD_PW_URL, MON_PW] {
        assert!(!text.contains(secret), "{what} shows a password: {text}");
    }
}

fn output_text(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn check_prints_no_password() {
    let s = MariaDb::start();
    s.sql(&format!("CREATE USER 'sec'@'%' IDENTIFIED BY '{PW}'"));
    s.sql("GRANT ALL ON staunch_test.* TO 'sec'@'%'");
    let url = format!(
        "mysql://sec:{PW}@127.0.0.1:{}/staunch_test?connect_timeout=300ms&monitor_password={MON_PW}",
        s.port()
    );
    let out = Command::new(env!("CARGO_BIN_EXE_staunch"))
        .args(["check", &url])
        .output()
        .unwrap();
    let text = output_text(&out);
    assert!(out.status.success(), "check failed: {text}");
    assert_clean("staunch check", &text);

    // And when the server refuses the password.
    let wrong = url.replace(PW, "not-the-password");
    let out = Command::new(env!("CARGO_BIN_EXE_staunch"))
        .args(["check", &wrong])
        .output()
        .unwrap();
    let text = output_text(&out);
    assert!(!out.status.success(), "check must fail: {text}");
    assert_clean("staunch check (access denied)", &text);
}

/// `staunch monitor` for a few status lines on a split brain, then SIGTERM.
#[test]
fn monitor_prints_no_password() {
    let a = MariaDb::start();
    let b = MariaDb::start();
    for s in [&a, &b] {
        s.sql(&format!("CREATE USER 'odd'@'%' IDENTIFIED BY '{ODD_PW}'"));
        s.sql("GRANT ALL ON staunch_test.* TO 'odd'@'%'");
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
    let child = Command::new(env!("CARGO_BIN_EXE_staunch"))
        .args(["monitor", &url])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: kill(2) on the PID of the child this test started.
    #[allow(unsafe_code)]
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    assert_eq!(rc, 0);
    let out = child.wait_with_output().unwrap();
    let text = output_text(&out);
    assert!(out.status.success(), "monitor failed: {text}");
    assert!(
        text.to_lowercase().contains("split brain"),
        "the monitor must report the split brain: {text}"
    );
    assert_clean("staunch monitor", &text);
}
