//! The connection staunch's engine opens (`client::link`, through the
//! hidden `staunch::__link`): TCP and unix socket, the upkeep commands and
//! the status flags, its connection attributes, the watchdog's cut of a
//! greeting that never comes, refusals in words. Against MariaDB.

use std::net::TcpListener;
use std::time::{Duration, Instant};

use staunch::__link::{cancel, Link};
use staunch::pool::ConnectAttempt;
use staunch_testkit::{MariaDb, ServerOpts};

#[allow(dead_code)]
fn config(url: &str) -> String {
    url.to_string()
}

fn open(url: &str) -> staunch::Result<Link> {
    Link::open(url, Duration::from_secs(10))
}

fn text(row: &Option<Vec<Option<Vec<u8>>>>, i: usize) -> String {
    let cell = row.as_ref().unwrap()[i].as_deref().unwrap();
    String::from_utf8_lossy(cell).into_owned()
}

/// A session opened over TCP and over the unix socket answers, knows
/// its id, and runs the upkeep commands; the status flags say what the
/// server did with the transaction.
#[test]
fn opens_over_tcp_and_unix_socket_and_runs_the_upkeep() {
    let s = MariaDb::start();
    let by_socket = format!(
        "mysql://app:app-secret@localhost/staunch_test?socket={}",
        s.socket_path().display()
    );
    for url in [s.url(), by_socket] {
        let mut l = open(&url).unwrap();
        let row = l.first_row("SELECT CONNECTION_ID(), DATABASE()").unwrap();
        assert_eq!(text(&row, 0), l.connection_id().to_string());
        assert_eq!(text(&row, 1), "staunch_test");
        l.ping().unwrap();
        l.run("CREATE TEMPORARY TABLE t (a INT) ENGINE=InnoDB")
            .unwrap();
        l.run("SET autocommit=0").unwrap();
        assert!(!l.autocommit());
        l.run("SELECT 1").unwrap();
        assert!(!l.in_transaction(), "SELECT 1 opens no transaction");
        l.run("INSERT INTO t VALUES (1), (2)").unwrap();
        assert!(l.in_transaction());
        assert_eq!(l.affected_rows(), 2);
        l.run("COMMIT").unwrap();
        assert!(!l.in_transaction());
        l.reset().unwrap();
        assert!(l.autocommit(), "the reset puts autocommit back");
        assert!(
            l.run("SELECT * FROM t").is_err(),
            "the reset drops the table"
        );
        l.select_db("mysql").unwrap();
        assert_eq!(text(&l.first_row("SELECT DATABASE()").unwrap(), 0), "mysql");
        // Several results: all read, the last one's packet kept.
        l.run("SELECT 1; INSERT INTO mysql.nope VALUES (1); DO 3")
            .unwrap_err();
        l.ping().unwrap();
        l.run("SELECT 1; SELECT 2; UPDATE staunch_test.nothing SET a = 1 WHERE 0")
            .unwrap_err();
        l.run("SELECT 1; SELECT 2; DO 3").unwrap();
        assert_eq!(l.affected_rows(), 0);
        assert_eq!(
            l.first_row("SELECT 5; SELECT 6").unwrap().unwrap(),
            vec![Some(b"5".to_vec())]
        );
        l.quit();
    }
}

/// The connection attributes name staunch as the client
/// (`_client_name`), beside the program's and the user's.
#[test]
fn sends_its_own_connection_attributes() {
    let s = MariaDb::start_with(ServerOpts::default().with_performance_schema());
    let mut l = open(&format!("{}?connect_attrs=team:billing", s.url())).unwrap();
    let id = l.connection_id();
    let rows = s.query_rows(&format!(
        "SELECT ATTR_NAME, ATTR_VALUE FROM performance_schema.session_connect_attrs \
         WHERE PROCESSLIST_ID = {id} ORDER BY ATTR_NAME"
    ));
    let attrs: Vec<(String, String)> = rows
        .into_iter()
        .map(|r| (r[0].clone().unwrap(), r[1].clone().unwrap_or_default()))
        .collect();
    let get = |k: &str| attrs.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    assert_eq!(get("_client_name"), Some("staunch"), "{attrs:?}");
    assert_eq!(
        get("_client_version"),
        Some(env!("STAUNCH_LIBRARY_VERSION"))
    );
    assert_eq!(get("team"), Some("billing"));
    assert_eq!(get("_pid"), Some(std::process::id().to_string().as_str()));
    l.ping().unwrap();
}

/// Incident A at the connect: a listener that accepts and never greets
/// is cut at the deadline by the watchdog, which shuts down its own
/// duplicate of the socket, and the error says what it found.
#[test]
fn a_greeting_that_never_comes_is_cut_at_the_deadline() {
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let url = format!("mysql://app:x@127.0.0.1:{port}/db");
    // A socket time limit far past the deadline: only the watchdog
    // can end the read in time.
    let attempt = ConnectAttempt::new(Duration::from_secs(30));
    let a2 = attempt.clone();
    let started = Instant::now();
    let watchdog = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        cancel(&a2)
    });
    let e = Link::open_in(&url, &attempt).unwrap_err();
    assert_eq!(watchdog.join().unwrap(), Some(true));
    let took = started.elapsed();
    assert!(took < Duration::from_secs(5), "took {took:?}");
    let text = e.to_string();
    assert!(text.contains("no greeting came from the server"), "{text}");
    assert!(!text.contains("x@"), "{text}");
    drop(silent);
}

/// A login the server refuses is a server error naming the user, with
/// no password in it; a server that is not there is a TCP error.
#[test]
fn refusals_are_sentences() {
    let s = MariaDb::start();
    let url = format!(
        "mysql://app:wrong-secret@127.0.0.1:{}/staunch_test",
        s.port()
    );
    let e = open(&url).unwrap_err().to_string();
    assert!(e.contains("1045"), "{e}");
    assert!(!e.contains("wrong-secret"), "{e}");
    let free = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let e = open(&format!("mysql://app:x@127.0.0.1:{free}/db"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("TCP connect to 127.0.0.1:"), "{e}");
}
