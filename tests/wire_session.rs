//! The session's state as the engine sees it without asking: the status
//! flags of each answer's last OK or EOF (`Framer::status`), what the
//! return path will decide from (no `COMMIT` or `ROLLBACK` for a borrow
//! that opened no transaction); and the small commands (`COM_PING`,
//! `COM_RESET_CONNECTION`, `COM_INIT_DB`, `COM_QUIT`), against MariaDB.

use std::time::Duration;

use staunch::wire::{
    status, BinaryColumns, BinaryNext, Columns, Framer, Login, Next, Response, Socket, Stream,
    Target, WireError,
};
use staunch_testkit::MariaDb;

type Session = Framer<Stream<Socket>>;

fn open(s: &MariaDb) -> Session {
    let sock = Socket::connect(Target::Tcp(s.addr()), Duration::from_secs(10)).unwrap();
    Framer::connect(
        sock,
        &Login {
            user: "app",
            password: "app-secret",
            database: Some("staunch_test"),
            ..Login::default()
        },
        None,
    )
    .unwrap()
    .0
}

/// Runs `sql` and reads its whole answer; the first cell of the first row
/// as text, if there is one.
fn run(f: &mut Session, sql: &str) -> Option<String> {
    f.send_query(sql.as_bytes()).unwrap();
    let mut cols = Columns::new();
    let mut first = None;
    loop {
        let more = match f.read_response(&mut cols).unwrap() {
            Response::Ok(ok) => ok.status & status::MORE_RESULTS_EXISTS != 0,
            Response::ResultSet => loop {
                match f.next_row().unwrap() {
                    Next::Row(r) => {
                        if first.is_none() {
                            first = r
                                .cells()
                                .next()
                                .flatten()
                                .map(|c| String::from_utf8_lossy(c).into_owned());
                        }
                    }
                    Next::End(ok) => break ok.status & status::MORE_RESULTS_EXISTS != 0,
                }
            },
        };
        if !more {
            return first;
        }
    }
}

#[test]
fn the_status_flags_say_whether_a_transaction_is_open() {
    let s = MariaDb::start();
    s.sql("CREATE TABLE staunch_test.st (v INT) ENGINE=InnoDB");
    s.sql("INSERT INTO staunch_test.st VALUES (1)");
    let mut f = open(&s);
    assert_ne!(
        f.status() & status::AUTOCOMMIT,
        0,
        "the login's OK: autocommit on"
    );
    assert!(!f.in_transaction());

    // Under autocommit=0 a statement that touches no table opens nothing;
    // a read of an InnoDB table opens a transaction, which COMMIT ends.
    run(&mut f, "SET autocommit=0");
    assert_eq!(f.status() & status::AUTOCOMMIT, 0);
    run(&mut f, "SELECT 1");
    assert!(!f.in_transaction(), "SELECT 1 opened a transaction");
    assert_eq!(run(&mut f, "SELECT v FROM st").as_deref(), Some("1"));
    assert!(
        f.in_transaction(),
        "a read of an InnoDB table under autocommit=0"
    );
    run(&mut f, "COMMIT");
    assert!(!f.in_transaction());

    // Explicit transactions, and the binary protocol's answers too.
    run(&mut f, "SET autocommit=1");
    run(&mut f, "BEGIN");
    assert!(f.in_transaction());
    let mut stmt = f.prepare(b"SELECT v FROM st WHERE v = ?").unwrap();
    run(&mut f, "ROLLBACK");
    assert!(!f.in_transaction());
    run(&mut f, "START TRANSACTION");
    f.send_execute(&mut stmt, &[staunch::wire::Param::Int(1)])
        .unwrap();
    let mut cols = BinaryColumns::default();
    assert_eq!(
        f.read_execute_response(&mut stmt, &mut cols).unwrap(),
        Response::ResultSet
    );
    while let BinaryNext::Row(_) = f.next_binary_row(&cols).unwrap() {}
    assert!(
        f.in_transaction(),
        "after a prepared read inside START TRANSACTION"
    );
    run(&mut f, "COMMIT");
    assert!(!f.in_transaction());
}

#[test]
fn ping_reset_init_db_and_quit() {
    let s = MariaDb::start();
    let mut f = open(&s);
    f.ping().unwrap();

    run(&mut f, "SET @kept = 7, autocommit = 0");
    run(&mut f, "BEGIN");
    assert!(f.in_transaction());
    f.reset_connection().unwrap();
    // The reset's OK: no transaction, autocommit back on, the variable
    // gone, the database kept.
    assert!(!f.in_transaction());
    assert_ne!(f.status() & status::AUTOCOMMIT, 0);
    assert_eq!(run(&mut f, "SELECT @kept"), None);
    assert_eq!(
        run(&mut f, "SELECT DATABASE()").as_deref(),
        Some("staunch_test")
    );

    f.init_db("mysql").unwrap();
    assert_eq!(run(&mut f, "SELECT DATABASE()").as_deref(), Some("mysql"));
    match f.init_db("no_such_database") {
        Err(WireError::Server(e)) => assert_eq!(e.code, 1049, "{e}"),
        other => panic!("{other:?}"),
    }
    // The session is still in step after the error.
    f.ping().unwrap();

    f.quit().unwrap();
    let e = f.ping().unwrap_err();
    assert!(e.is_fatal(), "{e}");
}

/// Connection attributes reach `performance_schema.session_connect_attrs`
/// as sent, `_client_name` included (the `mysql` crate drops every name
/// starting with `_` and sends its own).
#[test]
fn connect_attributes_are_what_the_server_shows() {
    use staunch_testkit::ServerOpts;
    let s = MariaDb::start_with(ServerOpts::default().with_performance_schema());
    let sock = Socket::connect(Target::Tcp(s.addr()), Duration::from_secs(10)).unwrap();
    let attrs = [
        ("_client_name", "staunch"),
        ("_client_version", env!("CARGO_PKG_VERSION")),
        ("program_name", "wire_session"),
        ("team", "payments ünïcode"),
    ];
    let (mut f, _) = Framer::connect(
        sock,
        &Login {
            user: "app",
            password: "app-secret",
            connect_attrs: &attrs,
            ..Login::default()
        },
        None,
    )
    .unwrap();
    for (name, value) in attrs {
        let got = run(
            &mut f,
            &format!(
                "SELECT ATTR_VALUE FROM performance_schema.session_connect_attrs \
                 WHERE PROCESSLIST_ID = CONNECTION_ID() AND ATTR_NAME = '{name}'"
            ),
        );
        assert_eq!(got.as_deref(), Some(value), "{name}");
    }
}

/// An XA transaction is a transaction to the status flags in each of its
/// states (active, idle, prepared), until `XA COMMIT` or `XA ROLLBACK`
/// ends it: a return that follows the flags still sends its `ROLLBACK`,
/// which fails in one and closes the connection (see the core's
/// `an_xa_transaction_left_open_closes_its_connection`).
#[test]
fn the_status_flags_hold_an_xa_transaction_open_in_every_state() {
    let s = MariaDb::start();
    s.sql("CREATE TABLE staunch_test.xs (v INT) ENGINE=InnoDB");
    let mut f = open(&s);
    for sql in [
        "XA START 'x'",
        "INSERT INTO xs VALUES (1)",
        "XA END 'x'",
        "XA PREPARE 'x'",
    ] {
        run(&mut f, sql);
        assert!(f.in_transaction(), "after {sql}");
    }
    run(&mut f, "XA ROLLBACK 'x'");
    assert!(!f.in_transaction());
}
