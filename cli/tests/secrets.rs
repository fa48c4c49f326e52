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
    // 'sec' has ALL ON staunch_test.* only: the monitor's missing privilege
    // is told as the monitor tells it (issue #49).
    assert!(
        text.contains("may not run SHOW SLAVE STATUS")
            && text.contains("GRANT SLAVE MONITOR ON *.* TO 'sec'@'%'")
            && text.contains("monitor_user="),
        "{text}"
    );

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

/// One HTTP/1.0 `GET path` to `port` on loopback: the whole answer.
fn http_get(port: u16, path: &str) -> std::io::Result<String> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(5)))?;
    write!(s, "GET {path} HTTP/1.0\r\n\r\n")?;
    let mut answer = String::new();
    s.read_to_string(&mut answer)?;
    Ok(answer)
}

/// `staunch monitor` for a few status lines on a split brain, then SIGTERM.
/// Its `--prometheus` scrape names both hosts, and no password either.
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
    let port = staunch_testkit::mariadb::free_port();
    let child = Command::new(env!("CARGO_BIN_EXE_staunch"))
        .args([
            "monitor",
            &url,
            "--prometheus",
            &format!("127.0.0.1:{port}"),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let scrape = http_get(port, "/metrics").unwrap();
    assert!(scrape.starts_with("HTTP/1.0 200 OK\r\n"), "{scrape}");
    for s in [&a, &b] {
        let host = format!("server_address=\"127.0.0.1\",server_port=\"{}\"", s.port());
        assert!(
            scrape.contains(&format!(
                "staunch_host_writer{{db_client_connection_pool_name=\"staunch-1\",{host}}} "
            )),
            "{scrape}"
        );
    }
    assert_clean("staunch monitor --prometheus", &scrape);
    assert!(http_get(port, "/nothing")
        .unwrap()
        .starts_with("HTTP/1.0 404"));
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

/// conf_secret_never_printed on the command line: `staunch check` and
/// `staunch monitor` given URLs whose password holds each of `/ ? # @ : % +`
/// and a space, raw and percent-encoded, well-formed (against a port nothing
/// listens on) and broken in each part: neither half of the password shows
/// in their output.
#[test]
fn conf_secret_never_printed() {
    const HALVES: [&str; 2] = ["Qv3lft", "Zr8rgt"];
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let encode = |s: &str| -> String {
        s.bytes()
            .map(|b| match b.is_ascii_alphanumeric() {
                true => (b as char).to_string(),
                false => format!("%{b:02X}"),
            })
            .collect()
    };
    let q = "connect_timeout=200ms&connection_timeout=300ms";
    let mut runs = 0;
    for c in ['/', '?', '#', '@', ':', '%', '+', ' '] {
        let pw = format!("{}{c}{}", HALVES[0], HALVES[1]);
        for form in [pw.clone(), encode(&pw)] {
            for (part, url) in [
                (
                    "none",
                    format!("mysql://app:{form}@127.0.0.1:{port}/db?{q}"),
                ),
                (
                    "scheme",
                    format!("mysq://app:{form}@127.0.0.1:{port}/db?{q}"),
                ),
                ("scheme", format!("app:{form}@127.0.0.1:{port}/db?{q}")),
                (
                    "host",
                    format!("mysql://app:{form}@[127.0.0.1:{port}/db?{q}"),
                ),
                ("port", format!("mysql://app:{form}@127.0.0.1:99999/db?{q}")),
                (
                    "path",
                    format!("mysql://app:{form}@127.0.0.1:{port}/d%zz?{q}"),
                ),
                (
                    "query knob",
                    format!("mysql://app:{form}@127.0.0.1:{port}/db?{q}&max_size=x"),
                ),
                (
                    "unknown knob",
                    format!("mysql://app:{form}@127.0.0.1:{port}/db?{q}&bogus=1"),
                ),
            ] {
                let check = Command::new(env!("CARGO_BIN_EXE_staunch"))
                    .args(["check", &url])
                    .output()
                    .unwrap();
                let mut texts = vec![("staunch check", output_text(&check))];
                assert!(!check.status.success(), "{url}: {}", texts[0].1);
                let mut child = Command::new(env!("CARGO_BIN_EXE_staunch"))
                    .args(["monitor", &url])
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap();
                if part == "none" {
                    // It runs until stopped: a few failed probes first.
                    std::thread::sleep(Duration::from_millis(700));
                    // SAFETY: kill(2) on the PID of the child this test started.
                    #[allow(unsafe_code)]
                    let rc = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
                    assert_eq!(rc, 0);
                }
                let _ = child.stdin.take();
                let out = child.wait_with_output().unwrap();
                texts.push(("staunch monitor", output_text(&out)));
                for (what, text) in texts {
                    assert!(!text.trim().is_empty(), "{what} {url}: no output");
                    for h in HALVES {
                        assert!(
                            !text.contains(h),
                            "{what} {url} (broken: {part}) shows the password: {text}"
                        );
                    }
                }
                runs += 1;
            }
        }
    }
    assert_eq!(runs, 8 * 2 * 8);
}
