//! The socket staunch connects itself (`wire::Socket`), and the watchdog's
//! way of cutting a connect that stalls: a duplicate of that socket, shut
//! down from another thread (incident A at the engine's level: a listener
//! that accepts and never greets).

use std::net::TcpListener;
use std::thread;
use std::time::{Duration, Instant};

use staunch::wire::{Framer, Login, Socket, Target};
use staunch_testkit::MariaDb;

#[test]
fn a_connect_that_gets_no_greeting_is_cut_by_shutting_its_socket_down() {
    // The kernel completes the TCP handshake into the backlog; nothing is
    // ever sent.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = silent.local_addr().unwrap();
    let sock = Socket::connect(Target::Tcp(addr), Duration::from_secs(30)).unwrap();
    assert!(!sock.is_unix());
    let watchdog = sock.try_clone().unwrap();
    let cutter = thread::spawn(move || {
        thread::sleep(Duration::from_millis(300));
        watchdog.shutdown();
    });
    let t = Instant::now();
    let e = Framer::connect(sock, &Login::default(), None).unwrap_err();
    let took = t.elapsed();
    cutter.join().unwrap();
    assert!(e.is_fatal(), "{e}");
    assert!(
        took < Duration::from_secs(3),
        "the cut took {took:?} (the read limit is 30 s): {e}"
    );
    drop(silent);
}

#[test]
fn every_read_is_bounded_by_the_connect_limit() {
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = silent.local_addr().unwrap();
    let sock = Socket::connect(Target::Tcp(addr), Duration::from_millis(300)).unwrap();
    let t = Instant::now();
    let e = Framer::connect(sock, &Login::default(), None).unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(3), "{e}");
    assert!(e.is_fatal(), "{e}");
}

#[test]
fn no_time_left_is_an_error_not_no_limit() {
    let e =
        Socket::connect(Target::Tcp("127.0.0.1:9".parse().unwrap()), Duration::ZERO).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput, "{e}");
}

#[test]
fn a_session_over_tcp_and_over_the_unix_socket() {
    let s = MariaDb::start();
    let path = s.socket_path();
    for target in [Target::Tcp(s.addr()), Target::Unix(&path)] {
        let sock = Socket::connect(target, Duration::from_secs(10)).unwrap();
        let login = Login {
            user: "app",
            password: "app-secret",
            database: Some("staunch_test"),
            unix_socket: sock.is_unix(),
            ..Login::default()
        };
        let (mut f, _) =
            Framer::connect(sock, &login, None).unwrap_or_else(|e| panic!("{target:?}: {e}"));
        f.send_query(b"SELECT 1").unwrap();
        let mut cols = staunch::wire::Columns::new();
        assert_eq!(
            f.read_response(&mut cols).unwrap(),
            staunch::wire::Response::ResultSet
        );
    }
}
