//! The life of a statement on a borrowed connection, against real servers:
//! no statement ever reads another one's answer, time limits that keep the
//! session (or, when the server does not answer, cut it off within a
//! bound), cancellation from another thread, a return that costs no round
//! trip for a read-only borrow, and session state that never reaches the
//! next borrower. The conformance scenarios of the same subjects
//! (conf_no_crossed_answer, conf_statement_timeout, conf_cancel_statement,
//! conf_cancel_get, conf_session_reset) are in tests/conformance.rs.

use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use staunch::prelude::*;
use staunch::{ErrorKind, Pool};
use staunch_testkit::{MariaDb, Mode, Proxy, ServerOpts};

/// How many times the server ran a command, from performance_schema
/// (`statement/sql/rollback`, `statement/com/Reset connection`, ...;
/// MariaDB counts no `Com_reset_connection` status variable).
fn com(s: &MariaDb, event: &str) -> i64 {
    settled(
        s,
        &format!(
        "SELECT COUNT_STAR FROM performance_schema.events_statements_summary_global_by_event_name \
         WHERE EVENT_NAME = '{event}'"
    ),
    )
}

/// A performance_schema count. The summary is updated just after the
/// client got its answer: read until two reads 50 ms apart agree.
fn settled(s: &MariaDb, count: &str) -> i64 {
    let read = || s.query_i64(count).expect("performance_schema counts it");
    let mut last = read();
    loop {
        thread::sleep(Duration::from_millis(50));
        let now = read();
        if now == last {
            return now;
        }
        last = now;
    }
}

const ROLLBACK: &str = "statement/sql/rollback";
const RESET: &str = "statement/com/Reset connection";
const CHANGE_USER: &str = "statement/com/Change user";
const INIT_DB: &str = "statement/com/Init DB";

fn server_with_performance_schema() -> MariaDb {
    MariaDb::start_with(ServerOpts {
        args: vec!["--performance-schema=ON".into()],
        ..Default::default()
    })
}

/// Point 1 of the issue exactly: a statement past its time limit, then
/// another on the same handle. Before server-side limits, the per-read
/// timeout fired and `SELECT 222` read 111.
#[test]
fn a_timed_out_statement_leaves_no_answer_for_the_next_one() {
    let s = MariaDb::start();
    let pool = Pool::from_url(&format!("{}?query_timeout=300ms&max_size=1", s.url())).unwrap();
    let mut c = pool.get().unwrap();
    let t = Instant::now();
    let e = c
        .query_first::<i64, _>("SELECT 111 + SLEEP(0.6)")
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::StatementTimeout, "{e}");
    assert!(
        t.elapsed() < Duration::from_millis(1200),
        "{:?}",
        t.elapsed()
    );
    thread::sleep(Duration::from_millis(500));
    assert_eq!(c.query_first::<i64, _>("SELECT 222").unwrap(), Some(222));
    drop(c);
    assert_eq!(pool.stats().closed_broken, 0, "the session was kept");
}

/// A statement whose answer was read (to its end, or dropped before it)
/// through its `QueryResult` (`query_iter`, which `query_first` and the
/// other `Queryable` methods read through) is over: the connection, held
/// idle after it for longer than the limit + grace, is not cut off.
#[test]
fn a_connection_held_idle_after_a_statement_is_not_cut() {
    let s = MariaDb::start();
    let pool = Pool::from_url(&format!("{}?query_timeout=300ms&max_size=1", s.url())).unwrap();
    let mut c = pool.get().unwrap();
    assert_eq!(c.query_first::<i64, _>("SELECT 1").unwrap(), Some(1));
    thread::sleep(Duration::from_millis(1_800));
    assert_eq!(c.query_first::<i64, _>("SELECT 2").unwrap(), Some(2));
    let mut r = c.query_iter("SELECT seq FROM seq_1_to_1000").unwrap();
    let first = r.iter().unwrap().next().unwrap().unwrap();
    assert_eq!(staunch::from_row::<i64>(first), 1);
    drop(r);
    thread::sleep(Duration::from_millis(1_800));
    assert_eq!(c.query_first::<i64, _>("SELECT 3").unwrap(), Some(3));
    drop(c);
    assert_eq!(pool.stats().closed_broken, 0, "the session was kept");
}

/// A frozen server answers nothing: the statement is bounded by limit +
/// grace (+ the watchdog's tick), and the connection is discarded.
#[test]
fn a_statement_on_a_frozen_server_is_bounded_and_the_connection_discarded() {
    let s = MariaDb::start();
    let pool = Pool::from_url(&format!("{}?query_timeout=300ms&max_size=2", s.url())).unwrap();
    let mut c = pool.get().unwrap();
    c.query_drop("SELECT 1").unwrap();
    s.freeze();
    let t = Instant::now();
    let e = c.query_first::<i64, _>("SELECT 1").unwrap_err();
    let took = t.elapsed();
    s.thaw();
    assert_eq!(e.kind(), ErrorKind::StatementTimeout, "{e}");
    assert!(took < Duration::from_millis(2500), "took {took:?}");
    drop(c);
    assert_eq!(pool.stats().closed_broken, 1);
    let mut c = pool.get().unwrap();
    assert_eq!(c.query_first::<i64, _>("SELECT 5").unwrap(), Some(5));
}

/// A pool (query_timeout 300 ms, one connection) through a proxy that
/// passes `s`'s answers on one byte every 3 ms; keep the proxy alive.
fn dripping_pool(s: &MariaDb) -> (Proxy, Pool) {
    let proxy = Proxy::start(s.addr());
    proxy.set_mode(Mode::Drip(Duration::from_millis(3)));
    let url = format!(
        "mysql://app:app-secret@127.0.0.1:{}/staunch_test?query_timeout=300ms&max_size=1\
         &connect_timeout=20s&connection_timeout=30s",
        proxy.port()
    );
    let pool = Pool::from_url(&url).unwrap();
    (proxy, pool)
}

/// A server that drips its answer one byte at a time defeats a per-read
/// timeout; the watchdog bounds the whole statement.
#[test]
fn a_dripping_server_cannot_stretch_a_statement() {
    let s = MariaDb::start();
    let (_proxy, pool) = dripping_pool(&s);
    let mut c = pool.get().unwrap();
    // 4,000 bytes at 3 ms each: 12 s if nothing cut it.
    let t = Instant::now();
    let e = c
        .query_first::<String, _>("SELECT REPEAT('x', 4000)")
        .unwrap_err();
    let took = t.elapsed();
    assert_eq!(e.kind(), ErrorKind::StatementTimeout, "{e}");
    assert!(took < Duration::from_millis(2500), "took {took:?}");
    assert!(c.broken().is_some());
}

/// Rows read through `query_iter`'s result, at the borrower's pace:
/// past limit + grace the watchdog cuts a read that
/// waits on a server dripping its answer, but not a borrower that takes its
/// time between rows (nor one holding the connection after them: see
/// `a_connection_held_idle_after_a_statement_is_not_cut`).
#[test]
fn through_query_iter_a_slow_reader_is_not_cut_and_a_dripping_server_is() {
    let s = MariaDb::start();
    let pool = Pool::from_url(&format!("{}?query_timeout=300ms&max_size=1", s.url())).unwrap();
    let mut c = pool.get().unwrap();
    let mut n = 0i64;
    for row in c.query_iter("SELECT seq FROM seq_1_to_5000").unwrap() {
        n += 1;
        assert_eq!(staunch::from_row::<i64>(row.unwrap()), n);
        if n == 10 {
            thread::sleep(Duration::from_millis(1_800));
        }
    }
    assert_eq!(n, 5000);
    assert_eq!(c.query_first::<i64, _>("SELECT 2").unwrap(), Some(2));
    drop(c);
    assert_eq!(pool.stats().closed_broken, 0, "the session was kept");

    let (_proxy, pool) = dripping_pool(&s);
    let mut c = pool.get().unwrap();
    // 4,000 bytes at 3 ms each: 12 s if nothing cut it.
    let t = Instant::now();
    let r = c
        .query_iter("SELECT REPEAT('x', 4000)")
        .and_then(|r| r.collect::<staunch::Result<Vec<staunch::Row>>>());
    let took = t.elapsed();
    let e = r.expect_err("cut");
    assert_eq!(e.kind(), ErrorKind::StatementTimeout, "{e}");
    assert!(took < Duration::from_millis(2500), "took {took:?}");
    assert!(c.broken().is_some());
    let e = c.query_drop("SELECT 1").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Broken, "{e}");
    assert!(e.to_string().contains("time limit"), "{e}");
}

/// A borrow's own limit, shorter and longer than the pool's.
#[test]
fn a_borrow_can_set_its_own_statement_timeout() {
    let s = MariaDb::start();
    let pool = Pool::from_url(&format!("{}?max_size=1", s.url())).unwrap();
    let mut c = pool.get().unwrap();
    assert_eq!(c.statement_timeout(), None);
    c.set_statement_timeout(Some(Duration::from_millis(200)));
    let t = Instant::now();
    let e = c.query_drop("SELECT SLEEP(3)").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::StatementTimeout, "{e}");
    assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
    c.set_statement_timeout(None);
    assert_eq!(
        c.query_first::<i64, _>("SELECT SLEEP(0.3)").unwrap(),
        Some(0)
    );
    c.set_statement_timeout(Some(Duration::from_millis(200)));
    drop(c);
    // The next borrower has the pool's (none) again.
    let mut c = pool.get().unwrap();
    assert_eq!(c.statement_timeout(), None);
    assert_eq!(
        c.query_first::<i64, _>("SELECT SLEEP(0.4)").unwrap(),
        Some(0)
    );
}

/// The race the gate closes: a cancel asked for while a statement runs,
/// whose `KILL QUERY` is slow to arrive (its own connection goes through a
/// slow proxy) and lands after that statement ended. The next statement on
/// the connection waits for the kill to be done, so it is never its
/// target.
#[test]
fn a_late_cancel_never_reaches_the_next_statement() {
    let s = MariaDb::start();
    let proxy = Proxy::start(s.addr());
    let url = format!(
        "mysql://app:app-secret@127.0.0.1:{}/staunch_test?max_size=1&connect_timeout=10s",
        proxy.port()
    );
    let pool = Pool::from_url(&url).unwrap();
    let mut c = pool.get().unwrap();
    c.query_drop("SELECT 1").unwrap();
    // Connections made from now on (the cancel's) crawl; ours does not.
    proxy.set_mode(Mode::Latency(Duration::from_millis(150)));
    let h = c.cancel_handle();
    let canceller = thread::spawn(move || {
        thread::sleep(Duration::from_millis(20));
        let r = h.cancel();
        (r, Instant::now())
    });
    let first: Option<i64> = c.query_first("SELECT SLEEP(0.1)").unwrap();
    let second: staunch::Result<Option<i64>> = c.query_first("SELECT SLEEP(1)");
    let second_done = Instant::now();
    let (r, kill_done) = canceller.join().unwrap();
    assert!(r.unwrap(), "the cancel found the first statement running");
    assert_eq!(first, Some(0), "the kill arrived after the first statement");
    assert_eq!(
        second.unwrap(),
        Some(0),
        "the kill reached the next statement"
    );
    assert!(second_done > kill_done);
}

/// A cancel asked for just after a statement ended finds nothing to do,
/// and the next statement runs whole.
#[test]
fn a_cancel_after_the_statement_ended_does_nothing() {
    let s = MariaDb::start();
    let pool = Pool::from_url(&s.url()).unwrap();
    let mut c = pool.get().unwrap();
    let h = c.cancel_handle();
    for _ in 0..20 {
        assert_eq!(c.query_first::<i64, _>("SELECT 1").unwrap(), Some(1));
        assert!(!h.cancel().unwrap());
        assert_eq!(
            c.query_first::<i64, _>("SELECT SLEEP(0.01)").unwrap(),
            Some(0)
        );
    }
    // A handle outlives its borrow harmlessly: the next borrower of the same
    // connection is not its target.
    drop(c);
    let mut c = pool.get().unwrap();
    let h2 = h.clone();
    let t = thread::spawn(move || {
        thread::sleep(Duration::from_millis(200));
        h2.cancel()
    });
    assert_eq!(
        c.query_first::<i64, _>("SELECT SLEEP(0.5)").unwrap(),
        Some(0)
    );
    assert!(!t.join().unwrap().unwrap());
}

/// A thousand read-only borrows: no rollback, no reset. A borrower that
/// changed its database and a variable is reset (`COM_RESET_CONNECTION`,
/// which keeps the session's database): the configured one is selected
/// again (`COM_INIT_DB`) with the reset, once. `COM_CHANGE_USER`
/// would do both at once but costs the server more than the two (`cargo
/// bench --bench reset_cost`), and on MariaDB takes two round trips.
#[test]
fn a_read_only_borrow_costs_no_round_trip_on_return() {
    let s = server_with_performance_schema();
    let pool = Pool::from_url(&format!("{}?max_size=2", s.url())).unwrap();
    pool.get().unwrap().query_drop("SELECT 1").unwrap();
    let (rb, rs) = (com(&s, ROLLBACK), com(&s, RESET));
    for i in 0..1000 {
        let mut c = pool.get().unwrap();
        let v: Option<i64> = c.exec_first("SELECT ?", (i,)).unwrap();
        assert_eq!(v, Some(i));
    }
    assert_eq!(com(&s, ROLLBACK) - rb, 0);
    assert_eq!(com(&s, RESET) - rs, 0);
    let st = pool.stats();
    assert_eq!((st.rollbacks_on_return, st.resets_on_return), (0, 0));

    // A `USE` is undone on return, once, by a reset and the configured
    // database selected again.
    let (rb, rs, cu) = (com(&s, ROLLBACK), com(&s, RESET), com(&s, CHANGE_USER));
    let db0 = com(&s, INIT_DB);
    {
        let mut c = pool.get().unwrap();
        c.query_drop("USE mysql").unwrap();
        c.query_drop("SET @left = 1").unwrap();
    }
    for _ in 0..2 {
        let (db, left): (String, Option<i64>) = pool
            .get()
            .unwrap()
            .query_first("SELECT DATABASE(), @left")
            .unwrap()
            .unwrap();
        assert_eq!((db.as_str(), left), ("staunch_test", None));
    }
    assert_eq!(com(&s, INIT_DB) - db0, 1);
    assert_eq!(
        (
            com(&s, ROLLBACK) - rb,
            com(&s, RESET) - rs,
            com(&s, CHANGE_USER) - cu
        ),
        (0, 1, 0)
    );
    assert_eq!(pool.stats().resets_on_return, 1);
}

/// A statement with parameters on a fresh connection, and on connections
/// whose borrowers set their own time limit, leaves nothing to reset: the
/// prepare's answer is no OK packet, so what the last OK packet said (the
/// session set-up's, the limit's `SET`) is not the prepare's doing. Before,
/// the prepare read that stale report as a change: a reset on every return,
/// which emptied the statement cache, so the next borrow prepared again.
#[test]
fn a_prepared_statement_alone_leaves_nothing_to_reset() {
    let s = server_with_performance_schema();
    let pool = Pool::from_url(&format!("{}?max_size=1", s.url())).unwrap();
    let rs = com(&s, RESET);
    for i in 0..100 {
        let mut c = pool.get().unwrap();
        if i % 2 == 1 {
            c.set_statement_timeout(Some(Duration::from_secs(5)));
        }
        let v: Option<i64> = c.exec_first("SELECT ?", (i,)).unwrap();
        assert_eq!(v, Some(i));
    }
    assert_eq!(pool.stats().resets_on_return, 0);
    assert_eq!(com(&s, RESET) - rs, 0);
    // One prepare in all: the statement cache survived every return.
    let prepares = com(&s, "statement/com/Prepare");
    for i in 0..10 {
        let v: Option<i64> = pool.get().unwrap().exec_first("SELECT ?", (i,)).unwrap();
        assert_eq!(v, Some(i));
    }
    assert_eq!(com(&s, "statement/com/Prepare") - prepares, 0);
    // A prepared statement that does change the session still counts.
    {
        let mut c = pool.get().unwrap();
        c.exec_drop("SET @y = ?", (7,)).unwrap();
    }
    assert_eq!(pool.stats().resets_on_return, 1);
    let y: Option<Option<i64>> = pool.get().unwrap().query_first("SELECT @y").unwrap();
    assert_eq!(y, Some(None));
}

/// A transaction left open is always rolled back before the next borrower
/// gets the connection: a ROLLBACK, no reset, whether its last statement
/// wrote or read; under autocommit=0 (a changed session) the reset.
#[test]
fn a_transaction_left_open_is_rolled_back_on_return() {
    let s = server_with_performance_schema();
    s.sql("CREATE TABLE staunch_test.t (v INT) ENGINE=InnoDB");
    let pool = Pool::from_url(&format!("{}?max_size=1", s.url())).unwrap();
    let (rb, rs) = (com(&s, ROLLBACK), com(&s, RESET));
    {
        let mut c = pool.get().unwrap();
        c.query_drop("BEGIN").unwrap();
        c.exec_drop("INSERT INTO t VALUES (?)", (1,)).unwrap();
    }
    let st = pool.stats();
    assert_eq!((st.rollbacks_on_return, st.resets_on_return), (1, 0));
    assert_eq!((com(&s, ROLLBACK) - rb, com(&s, RESET) - rs), (1, 0));
    {
        let mut c = pool.get().unwrap();
        c.query_drop("START TRANSACTION").unwrap();
        c.exec_drop("INSERT INTO t VALUES (?)", (2,)).unwrap();
        c.query_drop("SELECT 1").unwrap();
    }
    let st = pool.stats();
    assert_eq!((st.rollbacks_on_return, st.resets_on_return), (2, 0));
    assert_eq!((com(&s, ROLLBACK) - rb, com(&s, RESET) - rs), (2, 0));
    {
        // autocommit=0: an implicit transaction, and a changed session.
        let mut c = pool.get().unwrap();
        c.query_drop("SET autocommit = 0").unwrap();
        c.exec_drop("INSERT INTO t VALUES (?)", (3,)).unwrap();
    }
    let mut c = pool.get().unwrap();
    let n: Option<i64> = c.query_first("SELECT COUNT(*) FROM t").unwrap();
    assert_eq!(n, Some(0));
    let ac: Option<i64> = c.query_first("SELECT @@autocommit").unwrap();
    assert_eq!(ac, Some(1));
    assert_eq!(
        c.query_first::<i64, _>("SELECT @@in_transaction").unwrap(),
        Some(0)
    );
}

/// How many `SELECT`s the server ran for one session (performance_schema,
/// read from another session).
fn selects_of(s: &MariaDb, connection_id: u32) -> i64 {
    settled(
        s,
        &format!(
            "SELECT COALESCE(SUM(e.COUNT_STAR), 0) \
         FROM performance_schema.events_statements_summary_by_thread_by_event_name e \
         JOIN performance_schema.threads t USING (THREAD_ID) \
         WHERE t.PROCESSLIST_ID = {connection_id} AND e.EVENT_NAME = 'statement/sql/select'"
        ),
    )
}

/// A server with an InnoDB table `t`, whose default list of tracked system
/// variables is MariaDB's (`tracked_by_default`) or empty, so that a
/// session's OK packets report no variable at all.
fn server_with_table_t(tracked_by_default: bool, args: &[&str]) -> MariaDb {
    let mut args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    if !tracked_by_default {
        args.push("--session-track-system-variables=".into());
    }
    let s = MariaDb::start_with(ServerOpts {
        args,
        ..Default::default()
    });
    s.sql("CREATE TABLE staunch_test.t (v INT) ENGINE=InnoDB");
    s
}

/// `init_sql` runs before the pool's settings statement, which reports the
/// `sql_mode`, character set and `autocommit` it left: the first
/// interpolated statement asks nothing first (it used to run `SELECT
/// @@SESSION.sql_mode, ...` on every new or reset session with an
/// `init_sql`). On a server that tracks no variable by default the
/// settings are asked for during set-up instead, and autocommit=0 from
/// `init_sql` is seen there too (it used to be missed, so a read's open
/// transaction went to the next borrower).
#[test]
fn init_sql_leaves_the_session_known() {
    for tracked_by_default in [true, false] {
        let s = server_with_table_t(tracked_by_default, &["--performance-schema=ON"]);
        let pool = Pool::builder()
            .url(&format!("{}?max_size=1&interpolate_params=true", s.url()))
            .init_sql(Some(
                "SET autocommit = 0, sql_mode = CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')",
            ))
            .build()
            .unwrap();
        let mut c = pool.get().unwrap();
        let what = format!("variables tracked by default: {tracked_by_default}");
        assert!(
            !c.autocommit(),
            "autocommit=0 from init_sql is seen; {what}"
        );
        let id = c.connection_id();
        let before = selects_of(&s, id);
        let tricky = r"a\\'b";
        let v: Vec<String> = c
            .query_params(
                "SELECT ? FROM t UNION ALL SELECT ?",
                &[
                    staunch::Param::Text(tricky.into()),
                    staunch::Param::Text(tricky.into()),
                ],
            )
            .unwrap();
        assert_eq!(v, [tricky], "quoted for NO_BACKSLASH_ESCAPES; {what}");
        assert_eq!(
            selects_of(&s, id) - before,
            1,
            "the statement alone: nothing was asked before it; {what}"
        );
        assert!(c.lexing().unwrap().no_backslash_escapes, "{what}");
        assert!(c.in_transaction(), "a read under autocommit=0; {what}");
        drop(c);
        assert_eq!(pool.stats().rollbacks_on_return, 1, "{what}");
    }
}

/// A borrower's `SET` of a setting staunch relies on is seen at once, on a
/// server that reports variables and on one that reports none (its global
/// `session_track_system_variables` empty: MariaDB then reports only that
/// the state changed, even after the session sets its own list, and staunch
/// asks). Before, on the second server, `autocommit` stayed on as far as
/// staunch knew, text in a latin1 session went out as UTF-8, and the
/// placeholder scanner lexed without `ANSI_QUOTES`.
#[test]
fn settings_a_borrower_changes_are_seen_even_where_unreported() {
    for tracked_by_default in [true, false] {
        let s = server_with_table_t(tracked_by_default, &[]);
        let pool =
            Pool::from_url(&format!("{}?max_size=1&interpolate_params=true", s.url())).unwrap();
        let what = format!("variables tracked by default: {tracked_by_default}");
        let mut c = pool.get().unwrap();
        assert!(c.autocommit(), "{what}");
        c.query_drop("SET autocommit = 0").unwrap();
        assert!(!c.autocommit(), "SET autocommit = 0 is seen; {what}");
        let n: Option<i64> = c.query_first("SELECT COUNT(*) FROM t").unwrap();
        assert_eq!(n, Some(0));
        assert!(c.in_transaction(), "a read under autocommit=0; {what}");
        c.query_drop("SET autocommit = 1").unwrap();
        assert!(c.autocommit(), "SET autocommit = 1 is seen; {what}");
        assert!(!c.in_transaction(), "turning autocommit on commits; {what}");

        c.query_drop("SET sql_mode = CONCAT(@@sql_mode, ',ANSI_QUOTES')")
            .unwrap();
        assert!(
            c.lexing().unwrap().ansi_quotes,
            "ANSI_QUOTES is seen; {what}"
        );

        c.query_drop("SET NAMES latin1").unwrap();
        let e = c
            .query_params::<String>("SELECT ?", &[staunch::Param::Text("é".into())])
            .expect_err("UTF-8 text is not sent to a latin1 session");
        assert!(
            e.to_string().contains("character_set_client is latin1"),
            "{e}; {what}"
        );
        drop(c);
        assert_eq!(pool.stats().resets_on_return, 1, "{what}");
    }
}

/// Under autocommit=0 (here from `init_sql`, as a DB-API binding sets it)
/// a statement that only reads an InnoDB table opens a transaction too,
/// which the server reports only in the status flags of the answer's last
/// packet, and the `mysql` crate (the Rust API's engine) keeps those
/// private: a borrow that read rows is rolled back on return, through text
/// and prepared statements alike, and the next borrower is in no
/// transaction. A borrow that committed last costs nothing. (The C ABI's
/// text path reads the flags: `conf_readonly_return_c_abi`.)
#[test]
fn under_autocommit_off_a_read_is_rolled_back_on_return() {
    let s = server_with_performance_schema();
    s.sql("CREATE TABLE staunch_test.t (v INT) ENGINE=InnoDB");
    s.sql("INSERT INTO staunch_test.t VALUES (1)");
    let pool = Pool::builder()
        .url(&format!("{}?max_size=1", s.url()))
        .init_sql(Some("SET autocommit = 0"))
        .build()
        .unwrap();
    for prepared in [false, true] {
        let rb = com(&s, ROLLBACK);
        {
            let mut c = pool.get().unwrap();
            assert!(!c.autocommit());
            let n: Option<i64> = if prepared {
                c.exec_first("SELECT COUNT(*) FROM t WHERE v = ?", (1,))
                    .unwrap()
            } else {
                c.query_first("SELECT COUNT(*) FROM t").unwrap()
            };
            assert_eq!(n, Some(1));
            assert!(c.in_transaction(), "a read under autocommit=0");
        }
        assert_eq!(com(&s, ROLLBACK) - rb, 1, "prepared: {prepared}");
        let mut c = pool.get().unwrap();
        let open: Option<i64> = c.query_first("SELECT @@in_transaction").unwrap();
        assert_eq!(open, Some(0), "prepared: {prepared}");
        c.query_drop("COMMIT").unwrap();
        assert!(!c.in_transaction());
    }
    let st = pool.stats();
    assert_eq!((st.rollbacks_on_return, st.resets_on_return), (2, 0));
}

/// `LOCK TABLES` outlives `COMMIT` and `ROLLBACK` (the server keeps the
/// locks until `UNLOCK TABLES` or a reset), so a borrower that locked tables
/// and then ended its transaction is still in one as far as the pool is
/// concerned, and its return resets the session: the next borrower may read
/// any table. Before, the `COMMIT` cleared the mark and the next borrower
/// got error 1100 ("Table 'u' was not locked with LOCK TABLES").
#[test]
fn locked_tables_outlive_commit_and_never_reach_the_next_borrower() {
    let s = server_with_performance_schema();
    s.sql("CREATE TABLE staunch_test.t (v INT) ENGINE=InnoDB");
    s.sql("CREATE TABLE staunch_test.u (v INT) ENGINE=InnoDB");
    let pool = Pool::from_url(&format!("{}?max_size=1", s.url())).unwrap();
    for end in ["COMMIT", "ROLLBACK", "SET autocommit = 1"] {
        let resets = pool.stats().resets_on_return;
        {
            let mut c = pool.get().unwrap();
            if end.starts_with("SET") {
                c.query_drop("SET autocommit = 0").unwrap();
            }
            c.query_drop("LOCK TABLES t WRITE").unwrap();
            c.exec_drop("INSERT INTO t VALUES (?)", (1,)).unwrap();
            c.query_drop(end).unwrap();
            assert!(c.in_transaction(), "tables still locked after {end}");
        }
        assert_eq!(pool.stats().resets_on_return - resets, 1, "after {end}");
        let mut c = pool.get().unwrap();
        let n: Option<i64> = c
            .query_first("SELECT COUNT(*) FROM u")
            .unwrap_or_else(|e| panic!("the next borrower, after {end}: {e}"));
        assert_eq!(n, Some(0));
    }
}

/// What the server's session tracker never reports (checked statement by
/// statement on MariaDB 10.11): a user-level lock, a user variable set
/// inside a statement, an open `HANDLER`, the next transaction's
/// characteristics, a global read lock. The pool sees them in the statement's text and resets the
/// session on return, so the next borrower holds no lock and sees none of
/// it. Before, each went back to the pool as it was: a `GET_LOCK` stayed
/// held by an idle pooled connection.
#[test]
fn changes_the_server_does_not_report_never_reach_the_next_borrower() {
    let s = MariaDb::start();
    s.sql("CREATE TABLE staunch_test.t (v INT) ENGINE=InnoDB");
    let app = Pool::from_url(&format!("{}?max_size=1", s.url())).unwrap();
    let root = Pool::from_url(&format!("{}?max_size=1", s.root_url())).unwrap();
    // (pool, statement, what the next borrower would see of it: 1 if it leaked)
    let cases = [
        (
            &app,
            "SELECT GET_LOCK('staunch', 0)",
            "SELECT IS_USED_LOCK('staunch') IS NOT NULL",
        ),
        (&app, "SELECT @b := 2", "SELECT @b IS NOT NULL"),
        (&app, "SELECT 7 INTO @c", "SELECT @c IS NOT NULL"),
        (&app, "HANDLER t OPEN", "SELECT 0"),
        (&app, "SET TRANSACTION READ ONLY", "SELECT 0"),
        (&root, "FLUSH TABLES WITH READ LOCK", "SELECT 0"),
    ];
    for (pool, sql, seen) in cases {
        let resets = pool.stats().resets_on_return;
        pool.get().unwrap().query_drop(sql).unwrap();
        assert_eq!(pool.stats().resets_on_return - resets, 1, "{sql}");
        let mut c = pool.get().unwrap();
        let leaked: Option<i64> = c.query_first(seen).unwrap();
        assert_eq!(leaked, Some(0), "the next borrower saw {sql}");
        // What the rest leave is seen by using it.
        c.query_drop("INSERT INTO staunch_test.t VALUES (1)")
            .unwrap_or_else(|e| panic!("a write after {sql}: {e}"));
        let open = c.query_drop("HANDLER t READ FIRST");
        assert!(open.is_err(), "a HANDLER left open after {sql}");
    }
    let held: Option<i64> = s.query_i64("SELECT IS_FREE_LOCK('staunch')");
    assert_eq!(held, Some(1), "the lock is free while the session idles");
    // Prepared, the second time from the statement cache: the same.
    for round in 0..2 {
        let resets = app.stats().resets_on_return;
        app.get()
            .unwrap()
            .exec_drop("SELECT GET_LOCK(?, 0)", ("staunch",))
            .unwrap();
        assert_eq!(app.stats().resets_on_return - resets, 1, "round {round}");
        let free = s.query_i64("SELECT IS_FREE_LOCK('staunch')");
        assert_eq!(free, Some(1), "round {round}");
    }
}

/// An XA transaction left open in any state (active, idle, prepared)
/// never reaches the next borrower: the `ROLLBACK` on return fails in one,
/// and the connection is closed (a prepared one stays on the server, for
/// `XA RECOVER`). A reset would not do: after one, a session left in a
/// prepared XA transaction fails its next statement (error 1031 on
/// MariaDB 10.11). A finished one costs nothing.
#[test]
fn an_xa_transaction_left_open_closes_its_connection() {
    let s = MariaDb::start();
    s.sql("CREATE TABLE staunch_test.t (v INT) ENGINE=InnoDB");
    let pool = Pool::from_url(&format!("{}?max_size=1", s.url())).unwrap();
    let left_open: [&[&str]; 3] = [
        &["XA START 'a'", "INSERT INTO t VALUES (1)"],
        &["XA START 'b'", "INSERT INTO t VALUES (2)", "XA END 'b'"],
        &[
            "XA START 'c'",
            "INSERT INTO t VALUES (3)",
            "XA END 'c'",
            "XA PREPARE 'c'",
        ],
    ];
    for steps in left_open {
        let id = {
            let mut c = pool.get().unwrap();
            for sql in steps {
                c.query_drop(sql).unwrap();
            }
            c.connection_id()
        };
        let mut c = pool.get().unwrap();
        assert_ne!(c.connection_id(), id, "{steps:?}");
        let n: Option<i64> = c
            .query_first("SELECT COUNT(*) FROM t")
            .unwrap_or_else(|e| panic!("the next borrower, after {steps:?}: {e}"));
        assert_eq!(n, Some(0), "{steps:?}");
    }
    let id = {
        let mut c = pool.get().unwrap();
        for sql in [
            "XA START 'd'",
            "INSERT INTO t VALUES (4)",
            "XA END 'd'",
            "XA COMMIT 'd' ONE PHASE",
        ] {
            c.query_drop(sql).unwrap();
        }
        c.connection_id()
    };
    let resets = pool.stats().resets_on_return;
    let mut c = pool.get().unwrap();
    assert_eq!(
        c.connection_id(),
        id,
        "a finished XA transaction keeps its connection"
    );
    let n: Option<i64> = c.query_first("SELECT COUNT(*) FROM t").unwrap();
    assert_eq!((n, resets), (Some(1), 0));
}

/// Turning autocommit on commits what is open, and the server reports a
/// change of transaction state only when it had reported one open: after a
/// read under autocommit=0 (which it reports in no packet) or with nothing
/// run since a `COMMIT`, `SET autocommit = 1` reports none. The pool knows
/// there is no transaction then, as the server does, unless tables are
/// still locked.
#[test]
fn turning_autocommit_on_ends_the_transaction_the_pool_sees() {
    let s = MariaDb::start();
    s.sql("CREATE TABLE staunch_test.t (v INT) ENGINE=InnoDB");
    let pool = Pool::builder()
        .url(&format!("{}?max_size=1", s.url()))
        .init_sql(Some("SET autocommit = 0"))
        .build()
        .unwrap();
    let before: [&[&str]; 4] = [
        &["COMMIT"],
        &["SELECT COUNT(*) FROM t"],
        &["INSERT INTO t VALUES (1)"],
        &["START TRANSACTION", "SELECT COUNT(*) FROM t"],
    ];
    for statements in before {
        let mut c = pool.get().unwrap();
        for sql in statements {
            c.query_drop(sql).unwrap();
        }
        let open = statements != ["COMMIT"];
        assert_eq!(c.in_transaction(), open, "after {statements:?}");
        c.query_drop("SET autocommit = 1").unwrap();
        let server: Option<i64> = c.query_first("SELECT @@in_transaction").unwrap();
        assert_eq!(server, Some(0), "after {statements:?}");
        assert!(c.autocommit());
        assert!(!c.in_transaction(), "after {statements:?}");
    }
    let mut c = pool.get().unwrap();
    c.query_drop("LOCK TABLES t READ").unwrap();
    c.query_drop("COMMIT").unwrap();
    c.query_drop("SET autocommit = 1").unwrap();
    assert!(c.in_transaction(), "tables are still locked");
}

/// What a borrower changes in its session never reaches the next one: a
/// user variable, the time zone, the SQL mode, a temporary table, the
/// schema. `init_sql` is the baseline it goes back to.
#[test]
fn session_state_does_not_leak_between_borrowers() {
    let s = MariaDb::start();
    let pool = Pool::builder()
        .url(&format!("{}?max_size=1", s.url()))
        .init_sql(Some("SET time_zone = '+01:00'"))
        .build()
        .unwrap();
    let baseline_mode: Option<String> = pool
        .get()
        .unwrap()
        .query_first("SELECT @@sql_mode")
        .unwrap();
    {
        let mut c = pool.get().unwrap();
        let tz: Option<String> = c.query_first("SELECT @@time_zone").unwrap();
        assert_eq!(tz.as_deref(), Some("+01:00"), "init_sql ran");
        c.query_drop("SET @x = 42").unwrap();
        c.query_drop("SET time_zone = '+05:17'").unwrap();
        c.query_drop("SET sql_mode = ''").unwrap();
        c.query_drop("CREATE TEMPORARY TABLE tmp (a INT)").unwrap();
        c.query_drop("USE mysql").unwrap();
        // One more statement after the changes: the last one says nothing.
        c.query_drop("SELECT 1").unwrap();
    }
    let mut c = pool.get().unwrap();
    let (x, tz, mode, db): (Option<i64>, String, String, String) = c
        .query_first("SELECT @x, @@time_zone, @@sql_mode, DATABASE()")
        .unwrap()
        .unwrap();
    assert_eq!(x, None);
    assert_eq!(tz, "+01:00");
    assert_eq!(Some(mode), baseline_mode);
    assert_eq!(db, "staunch_test");
    let e = c.query_drop("SELECT * FROM tmp").unwrap_err();
    assert!(e.to_string().contains("doesn't exist"), "{e}");
    assert_eq!(pool.stats().created, 1, "the same physical connection");
}

/// `found_rows`: UPDATE reports the rows it matched, not only those it
/// changed.
#[test]
fn found_rows_reports_matched_rows() {
    let s = MariaDb::start();
    s.sql("CREATE TABLE staunch_test.f (v INT)");
    s.sql("INSERT INTO staunch_test.f VALUES (1), (1)");
    for (knob, want) in [("false", 0), ("true", 2)] {
        let pool = Pool::from_url(&format!("{}?found_rows={knob}", s.url())).unwrap();
        let mut c = pool.get().unwrap();
        c.query_drop("UPDATE f SET v = 1").unwrap();
        assert_eq!(c.affected_rows(), want, "found_rows={knob}");
    }
}

/// Many threads, statements cut and cancelled among them: every answer is
/// its own.
#[test]
fn under_cuts_and_cancels_no_answer_crosses() {
    let expected = |e: &staunch::Error| {
        matches!(
            e.kind(),
            ErrorKind::StatementTimeout | ErrorKind::Cancelled | ErrorKind::Broken
        )
    };
    let s = MariaDb::start();
    let pool = Pool::from_url(&format!("{}?query_timeout=200ms&max_size=4", s.url())).unwrap();
    let pool = Arc::new(pool);
    let workers: Vec<_> = (0..4)
        .map(|w| {
            let pool = pool.clone();
            thread::spawn(move || {
                for i in 0..60i64 {
                    let tag = w * 1000 + i;
                    let mut c = pool.get().unwrap();
                    let h = c.cancel_handle();
                    let sql = match i % 4 {
                        0 => format!("SELECT {tag} + SLEEP(0.5)"),
                        1 => format!(
                            "SET STATEMENT max_statement_time=0 FOR SELECT {tag} + SLEEP(0.05)"
                        ),
                        _ => format!("SELECT {tag}"),
                    };
                    if i % 5 == 0 {
                        thread::spawn(move || {
                            thread::sleep(Duration::from_millis(10));
                            let _ = h.cancel();
                        });
                    }
                    match c.query_first::<i64, _>(&sql) {
                        // An interrupted SLEEP() may return 1 instead of
                        // failing (MariaDB): tag + 1 is no other statement's
                        // answer (earlier tags are smaller).
                        Ok(v) => assert!(
                            v == Some(tag) || (i % 4 < 2 && v == Some(tag + 1)),
                            "{sql}: {v:?}"
                        ),
                        Err(e) => assert!(expected(&e), "{sql}: {e}"),
                    }
                    // The same handle answers its own next statement, or
                    // fails (broken, or cut itself: concurrent KILLs of
                    // SLEEP()s can stall MariaDB past the bound, its SLEEP
                    // shares one mutex); never with an older answer.
                    match c.query_first::<i64, _>(format!("SELECT {}", tag + 500)) {
                        Ok(v) => assert_eq!(v, Some(tag + 500)),
                        Err(e) => assert!(expected(&e), "{e}"),
                    }
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    assert_eq!(pool.stats().violations, 0);
}

/// `start_transaction` on the guard, as `mysql::Conn`'s users write it,
/// stays on the tracked path: a committed, a rolled back and a read-only
/// transaction cost no reset and no rollback on return; one dropped open is
/// rolled back by the transaction itself (its writes gone), still without a
/// reset.
#[test]
fn start_transaction_on_the_guard_costs_no_reset() {
    use staunch::{AccessMode, IsolationLevel, TxOpts};
    let s = server_with_performance_schema();
    s.sql("CREATE TABLE staunch_test.tx (v INT) ENGINE=InnoDB");
    let pool = Pool::from_url(&format!("{}?max_size=1", s.url())).unwrap();
    let rs = com(&s, RESET);
    for i in 0..20 {
        let mut c = pool.get().unwrap();
        let mut tx = c.start_transaction(TxOpts::default()).unwrap();
        tx.exec_drop("INSERT INTO tx VALUES (?)", (i,)).unwrap();
        assert_eq!(tx.affected_rows(), 1);
        tx.commit().unwrap();
        assert!(!c.in_transaction());
    }
    {
        let mut c = pool.get().unwrap();
        let ro = TxOpts::default()
            .set_access_mode(Some(AccessMode::ReadOnly))
            .set_with_consistent_snapshot(true);
        let mut tx = c.start_transaction(ro).unwrap();
        let n: Option<i64> = tx.query_first("SELECT COUNT(*) FROM tx").unwrap();
        assert_eq!(n, Some(20));
        let e = tx.query_drop("INSERT INTO tx VALUES (99)").unwrap_err();
        assert!(e.to_string().contains("READ ONLY"), "{e}");
        tx.commit().unwrap();
    }
    {
        let mut c = pool.get().unwrap();
        let mut tx = c.start_transaction(TxOpts::default()).unwrap();
        tx.exec_drop("INSERT INTO tx VALUES (?)", (100,)).unwrap();
        tx.rollback().unwrap();
        let mut tx = c.start_transaction(TxOpts::default()).unwrap();
        tx.exec_drop("INSERT INTO tx VALUES (?)", (101,)).unwrap();
        drop(tx); // rolled back here
        assert!(!c.in_transaction());
    }
    let st = pool.stats();
    assert_eq!((st.rollbacks_on_return, st.resets_on_return), (0, 0));
    assert_eq!(com(&s, RESET) - rs, 0);
    let n: Option<i64> = pool
        .get()
        .unwrap()
        .query_first("SELECT COUNT(*) FROM tx")
        .unwrap();
    assert_eq!(n, Some(20), "the rolled back and dropped writes are gone");
    // An isolation level is for the next transaction only.
    {
        let mut c = pool.get().unwrap();
        let opts = TxOpts::default().set_isolation_level(Some(IsolationLevel::Serializable));
        let tx = c.start_transaction(opts).unwrap();
        tx.commit().unwrap();
    }
    // SET TRANSACTION (no SESSION), taken by the START TRANSACTION right
    // after it, changes nothing that lasts: no reset.
    assert_eq!(pool.stats().resets_on_return, 0);
    assert_eq!(com(&s, RESET) - rs, 0);
}

/// A deadlock (two transactions taking the same two row locks in opposite
/// orders) is `ErrorKind::Conflict`, as a Galera certification failure is:
/// server error 1213, SQLSTATE 40001; the server rolled the loser back and
/// its connection stays usable.
#[test]
fn a_deadlock_is_a_conflict() {
    let s = MariaDb::start();
    s.sql("CREATE TABLE staunch_test.dl (id INT PRIMARY KEY, v INT NOT NULL) ENGINE=InnoDB");
    s.sql("INSERT INTO staunch_test.dl VALUES (1, 0), (2, 0)");
    let pool = Pool::from_url(&format!("{}?max_size=2", s.url())).unwrap();
    let mut a = pool.get().unwrap();
    let mut b = pool.get().unwrap();
    a.query_drop("BEGIN").unwrap();
    a.query_drop("UPDATE dl SET v = 1 WHERE id = 1").unwrap();
    b.query_drop("BEGIN").unwrap();
    b.query_drop("UPDATE dl SET v = 2 WHERE id = 2").unwrap();
    // b waits for a's lock on row 1 (on its own thread); then a asks for
    // b's lock on row 2: InnoDB sees the cycle and rolls one of them back.
    let waiter = thread::spawn(move || {
        let r = b.query_drop("UPDATE dl SET v = 2 WHERE id = 1");
        (b, r)
    });
    thread::sleep(Duration::from_millis(300));
    let ra = a.query_drop("UPDATE dl SET v = 1 WHERE id = 2");
    if ra.is_ok() {
        // b lost: a commits once b's rollback frees row 1.
        a.query_drop("COMMIT").unwrap();
    }
    let (mut b, rb) = waiter.join().unwrap();
    let lost = match (&ra, &rb) {
        (Err(e), Ok(())) | (Ok(()), Err(e)) => e,
        _ => panic!("exactly one deadlock victim: {ra:?} {rb:?}"),
    };
    let e = lost;
    assert_eq!(e.kind(), ErrorKind::Conflict, "{e}");
    assert!(e.is_conflict());
    assert_eq!(e.server_code(), Some(1213));
    assert_eq!(e.sql_state(), Some("40001"));
    if rb.is_ok() {
        b.query_drop("COMMIT").unwrap();
    }
    // Both sessions stay in step and usable.
    for c in [&mut a, &mut b] {
        assert_eq!(c.query_first::<i64, _>("SELECT 7").unwrap(), Some(7));
        assert!(c.broken().is_none());
    }
    drop((a, b));
    assert_eq!(pool.stats().closed_broken, 0);
}

/// Every face raises its exception class from the one category table in
/// the core: a duplicate key is an integrity error, a syntax error a
/// programming error, a value too long for its column under strict mode a
/// data error, and a code the table does not name falls back to its
/// SQLSTATE's class (SIGNAL sets both).
#[test]
fn server_errors_carry_their_category() {
    use staunch::ErrorCategory;
    let s = MariaDb::start();
    s.sql("CREATE TABLE staunch_test.cat (id INT PRIMARY KEY, name VARCHAR(3))");
    let p = Pool::from_url(&s.url()).unwrap();
    let mut c = p.get().unwrap();
    c.query_drop("SET SESSION sql_mode = 'STRICT_ALL_TABLES'")
        .unwrap();
    c.query_drop("INSERT INTO cat VALUES (1, 'a')").unwrap();
    let cases = [
        (
            "INSERT INTO cat VALUES (1, 'b')",
            1062,
            ErrorCategory::Integrity,
        ),
        ("SELEKT 1", 1064, ErrorCategory::Programming),
        (
            "INSERT INTO cat VALUES (2, 'abcd')",
            1406,
            ErrorCategory::Data,
        ),
        (
            "SIGNAL SQLSTATE '23001' SET MYSQL_ERRNO = 30001, MESSAGE_TEXT = 'x'",
            30001,
            ErrorCategory::Integrity,
        ),
        (
            "SIGNAL SQLSTATE '0A001' SET MYSQL_ERRNO = 30002, MESSAGE_TEXT = 'x'",
            30002,
            ErrorCategory::NotSupported,
        ),
        ("SIGNAL SQLSTATE '45000'", 1644, ErrorCategory::Operational),
    ];
    for (sql, code, want) in cases {
        let e = c.query_drop(sql).unwrap_err();
        assert_eq!(e.server_code(), Some(code), "{sql}: {e}");
        assert_eq!(e.category(), Some(want), "{sql}: {e}");
    }
    // An error without a server's code has no category.
    let e = staunch::Config::from_url("not a url").unwrap_err();
    assert_eq!(e.category(), None, "no server error, no category: {e}");
}
