//! The Rust face (`staunch::prelude::Queryable` on a borrowed connection and
//! on a transaction) against a real MariaDB: what code written for
//! `mysql::PooledConn` relies on (result sets one after another, the
//! figures of the last statement, prepared statements with named
//! parameters, batches), and where staunch answers with an error where the
//! `mysql` crate panicked or said nothing.

use staunch::prelude::*;
use staunch::{params, ErrorKind, Pool, Row, TxOpts};
use staunch_testkit::MariaDb;

fn pool(s: &MariaDb) -> Pool {
    Pool::from_url(&format!("{}?max_size=1", s.url())).unwrap()
}

/// The first column of every row of each result set of `r`, as text.
fn sets(r: &mut staunch::QueryResult<'_>) -> Vec<Vec<String>> {
    let mut all = Vec::new();
    while let Some(set) = r.iter() {
        let rows: Vec<String> = set
            .map(|row| row.unwrap().get::<String, _>(0).unwrap())
            .collect();
        all.push(rows);
    }
    all
}

#[test]
fn result_sets_one_after_another_and_their_figures() {
    let s = MariaDb::start();
    s.sql("CREATE TABLE staunch_test.a (id INT AUTO_INCREMENT PRIMARY KEY, v INT)");
    let pool = pool(&s);
    let mut c = pool.get().unwrap();

    // Every set in turn, a set without rows (DO) among them.
    let mut r = c
        .query_iter("SELECT 1; SELECT seq FROM seq_2_to_3; DO 1; SELECT 'x'")
        .unwrap();
    assert_eq!(
        sets(&mut r),
        [vec!["1"], vec!["2", "3"], vec![], vec!["x"]]
            .map(|v| v.into_iter().map(String::from).collect::<Vec<_>>())
    );
    r.finish().unwrap();

    // A set left half read is read off when the next one is asked for.
    let mut r = c
        .query_iter("SELECT seq FROM seq_1_to_1000; SELECT 7")
        .unwrap();
    let first = r.iter().unwrap().next().unwrap().unwrap();
    assert_eq!(staunch::from_row::<i64>(first), 1);
    let next: Vec<i64> = r
        .iter()
        .unwrap()
        .map(|row| staunch::from_row(row.unwrap()))
        .collect();
    assert_eq!(next, [7]);
    assert!(r.iter().is_none());
    drop(r);

    // The figures of an INSERT, on its answer and on the connection.
    let r = c
        .query_iter("INSERT INTO a (v) VALUES (10), (20), (30)")
        .unwrap();
    assert_eq!(r.affected_rows(), 3);
    let id = r.last_insert_id().expect("an AUTO_INCREMENT id");
    assert!(r.info_str().contains("Records: 3"), "{}", r.info_str());
    r.finish().unwrap();
    assert_eq!((c.affected_rows(), c.last_insert_id()), (3, id));
    c.query_drop("UPDATE a SET v = v + 1 WHERE v > 10").unwrap();
    assert_eq!(c.affected_rows(), 2);
    assert!(c.info_str().contains("Rows matched: 2"), "{}", c.info_str());
    let r = c.query_iter("UPDATE a SET v = v WHERE id = -1").unwrap();
    assert_eq!((r.affected_rows(), r.last_insert_id()), (0, None));
    drop(r);
    c.query_drop("SELECT CAST('1x' AS SIGNED)").unwrap();
    assert_eq!(c.warnings(), 1);

    // The connection is in step after all of it.
    assert_eq!(c.query_first::<i64, _>("SELECT 8").unwrap(), Some(8));
    drop(c);
    assert_eq!(pool.stats().closed_broken, 0);
}

/// A server error in a later result set of a multi-statement reaches the
/// reader: through `query_drop`, `query` (which reads the rest of the
/// answer) and `QueryResult::iter`/`finish`, never taken for the end of the
/// answer.
#[test]
fn an_error_in_a_later_result_set_is_not_lost() {
    let s = MariaDb::start();
    let pool = pool(&s);
    let mut c = pool.get().unwrap();
    let sql = "SELECT 1; SELECT * FROM no_such_table; SELECT 3";

    let e = c.query_drop(sql).unwrap_err();
    assert_eq!(e.server_code(), Some(1146), "{e}");
    let e = c.query::<i64, _>(sql).unwrap_err();
    assert_eq!(e.server_code(), Some(1146), "{e}");

    let mut r = c.query_iter(sql).unwrap();
    let first: Vec<i64> = r
        .iter()
        .unwrap()
        .map(|row| staunch::from_row(row.unwrap()))
        .collect();
    assert_eq!(first, [1]);
    // The failed set: an error where its rows would be, or from finish().
    let mut seen = None;
    if let Some(mut set) = r.iter() {
        if let Some(Err(e)) = set.next() {
            seen = Some(e);
        }
    }
    let seen = match seen {
        Some(e) => {
            drop(r);
            e
        }
        None => r
            .finish()
            .expect_err("the failed statement must show, not end the answer quietly"),
    };
    assert_eq!(seen.server_code(), Some(1146), "{seen}");

    assert_eq!(c.query_first::<i64, _>("SELECT 9").unwrap(), Some(9));
    drop(c);
    assert_eq!(pool.stats().closed_broken, 0);
}

#[test]
fn prepared_statements_named_parameters_and_batches() {
    let s = MariaDb::start();
    s.sql("CREATE TABLE staunch_test.p (k INT PRIMARY KEY, name VARCHAR(20))");
    let pool = pool(&s);
    let mut c = pool.get().unwrap();

    let ins = c
        .prep("INSERT INTO p (k, name) VALUES (:k, :name)")
        .unwrap();
    assert_eq!(ins.num_params(), 2);
    assert_eq!(ins.num_columns(), 0);
    let names: Vec<&[u8]> = ins
        .named_params()
        .unwrap()
        .iter()
        .map(Vec::as_slice)
        .collect();
    assert_eq!(names, [&b"k"[..], b"name"]);
    c.exec_batch(
        &ins,
        (1..=3).map(|k| params! { "name" => format!("n{k}"), "k" => k }),
    )
    .unwrap();
    c.exec_drop(&ins, params! { "k" => 4, "name" => "n4" })
        .unwrap();

    let sel = c
        .prep("SELECT k, name FROM p WHERE k >= ? ORDER BY k")
        .unwrap();
    assert_eq!(sel.num_params(), 1);
    let cols: Vec<String> = sel
        .columns()
        .iter()
        .map(|c| c.name_str().into_owned())
        .collect();
    assert_eq!(cols, ["k", "name"]);
    let rows: Vec<(i64, String)> = c.exec(&sel, (3,)).unwrap();
    assert_eq!(rows, [(3, "n3".to_owned()), (4, "n4".to_owned())]);
    let n: usize = c.exec_fold(&sel, (1,), 0, |n, _: Row| n + 1).unwrap();
    assert_eq!(n, 4);
    let names: Vec<String> = c
        .exec_map(&sel, (2,), |(_, name): (i64, String)| name)
        .unwrap();
    assert_eq!(names, ["n2", "n3", "n4"]);
    // Text is prepared through the connection's cache.
    let one: Option<String> = c
        .exec_first("SELECT name FROM p WHERE k = ?", (1,))
        .unwrap();
    assert_eq!(one.as_deref(), Some("n1"));

    // A named parameter missing, or a count that does not match: refused
    // before anything runs, and the connection answers next.
    let e = c.exec_drop(&ins, params! { "k" => 5 }).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    let e = c.exec_drop(&sel, (1, 2)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.to_string().contains("parameter"), "{e}");

    // Closed on the server, the statement is prepared again when used.
    c.close(sel.clone()).unwrap();
    let rows: Vec<(i64, String)> = c.exec(&sel, (4,)).unwrap();
    assert_eq!(rows, [(4, "n4".to_owned())]);
    drop(c);
    assert_eq!(pool.stats().closed_broken, 0);
}

/// Where the `mysql` crate panics (a row that does not convert to the type
/// asked for), staunch returns an error, reads off the rest of the answer,
/// and keeps the connection.
#[test]
fn a_row_that_does_not_convert_is_an_error_not_a_panic() {
    let s = MariaDb::start();
    let pool = pool(&s);
    let mut c = pool.get().unwrap();
    let e = c
        .query::<i64, _>("SELECT 'not a number' FROM seq_1_to_1000")
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.to_string().contains("does not convert"), "{e}");
    let e = c
        .query_first::<(i64, i64), _>("SELECT 1")
        .expect_err("one column for two");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    let e = c
        .exec_first::<u8, _, _>("SELECT ?", (1000,))
        .expect_err("1000 is no u8");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert_eq!(c.query_first::<i64, _>("SELECT 5").unwrap(), Some(5));
    drop(c);
    assert_eq!(pool.stats().closed_broken, 0);
}

#[test]
fn a_transaction_is_queryable_and_ends_by_commit_rollback_or_drop() {
    let s = MariaDb::start();
    s.sql("CREATE TABLE staunch_test.t (id INT AUTO_INCREMENT PRIMARY KEY, v INT) ENGINE=InnoDB");
    let pool = pool(&s);
    let mut c = pool.get().unwrap();
    let mut tx = c.start_transaction(TxOpts::default()).unwrap();
    tx.exec_drop("INSERT INTO t (v) VALUES (?)", (1,)).unwrap();
    assert_eq!(tx.affected_rows(), 1);
    assert!(tx.last_insert_id() > 0);
    let n: Option<i64> = tx.query_first("SELECT COUNT(*) FROM t").unwrap();
    assert_eq!(n, Some(1));
    tx.commit().unwrap();
    assert!(!c.in_transaction());

    let mut tx = c.start_transaction(TxOpts::default()).unwrap();
    tx.query_drop("INSERT INTO t (v) VALUES (2)").unwrap();
    tx.rollback().unwrap();
    let mut tx = c.start_transaction(TxOpts::default()).unwrap();
    tx.query_drop("INSERT INTO t (v) VALUES (3)").unwrap();
    drop(tx);
    assert!(!c.in_transaction());
    let vs: Vec<i64> = c.query("SELECT v FROM t").unwrap();
    assert_eq!(vs, [1]);
    drop(c);
    let st = pool.stats();
    assert_eq!((st.rollbacks_on_return, st.resets_on_return), (0, 0));
}

/// The answer every face reads (`staunch::Answer`, the C ABI's
/// `staunch_rows`), read by a Rust caller: buffered with its result sets
/// and figures, and streamed on a connection it gives back when its first
/// set is read, or when it is dropped unread.
#[test]
fn an_answer_is_read_whole_or_streamed_and_gives_its_connection_back() {
    use staunch::{Answer, Param, SendAs, Value, Way};
    let s = MariaDb::start();
    s.sql("CREATE TABLE staunch_test.t (id INT PRIMARY KEY, v VARCHAR(8))");
    let pool = pool(&s);
    let mut c = pool.get().unwrap();

    // Buffered, two result sets sent as text, with their figures.
    let mut a: Answer = c
        .answer(
            "INSERT INTO t VALUES (1, 'a'), (2, NULL); SELECT id, v FROM t ORDER BY id",
            &[],
            SendAs::Text,
        )
        .unwrap();
    assert!(!a.is_streaming());
    assert_eq!((a.column_count(), a.affected_rows()), (0, 2));
    assert!(!a.next_row().unwrap());
    assert!(a.next_set().unwrap());
    assert_eq!(a.row_count(), Some(2));
    let names: Vec<String> = a.columns().iter().map(|c| c.name_str().into()).collect();
    assert_eq!(names, ["id", "v"]);
    assert_eq!(a.get(0), None, "no current row before next_row");
    assert!(a.next_row().unwrap());
    assert_eq!(a.get(0), Some(Value::Int(1)));
    assert_eq!(a.get(1), Some(Value::Bytes(b"a".to_vec())));
    assert_eq!(a.get(2), None, "no column 2");
    assert!(a.next_row().unwrap());
    assert_eq!((a.get(1), a.is_null(1)), (Some(Value::NULL), Some(true)));
    assert!(!a.next_row().unwrap());
    assert!(!a.next_set().unwrap());

    // Parameters go the way asked; text takes none.
    for way in [Way::Prepare, Way::Interpolate] {
        let mut a = c
            .answer(
                "SELECT v FROM t WHERE id = ?",
                &[Param::Int(1)],
                SendAs::Way(way),
            )
            .unwrap();
        assert!(a.next_row().unwrap());
        assert_eq!(a.get(0), Some(Value::Bytes(b"a".to_vec())), "{way:?}");
    }
    let e = c
        .answer("SELECT ?", &[Param::Int(1)], SendAs::Text)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    drop(c);

    // Streamed: the answer holds the connection (the pool of one has none
    // to lend) until its rows are read; then `give_back` has it.
    let (tx, rx) = std::sync::mpsc::channel();
    let mut a = pool
        .get()
        .unwrap()
        .answer_streamed(
            "SELECT seq FROM seq_1_to_1000 WHERE seq > ?",
            &[Param::Int(990)],
            SendAs::Default,
            move |conn| tx.send(conn).unwrap(),
        )
        .unwrap();
    assert!(a.is_streaming());
    assert_eq!(a.row_count(), None);
    let mut got = Vec::new();
    while a.next_row().unwrap() {
        assert!(
            rx.try_recv().is_err(),
            "given back before its rows were read"
        );
        got.push(a.get(0).unwrap());
    }
    assert_eq!(got, (991..=1000).map(Value::UInt).collect::<Vec<_>>());
    let mut back = rx.try_recv().expect("given back once its rows were read");
    let v: Option<u32> = back.query_first("SELECT 7").unwrap();
    assert_eq!(v, Some(7));
    drop(back);

    // Dropped unread, it gives the connection back usable, to the pool.
    let mut a = pool
        .get()
        .unwrap()
        .answer_streamed("SELECT seq FROM seq_1_to_100000", &[], SendAs::Text, drop)
        .unwrap();
    assert!(a.next_row().unwrap());
    drop(a);
    let v: Option<u32> = pool.get().unwrap().query_first("SELECT 8").unwrap();
    assert_eq!(v, Some(8));
}

/// `text_without_params` (the Python, Go and JDBC faces' default) sends a
/// statement without parameters as text; without it, such a statement is
/// prepared. Told by the server's count of prepares.
#[test]
fn text_without_params_is_the_cores_choice_of_protocol() {
    use staunch::{Param, SendAs};
    let s = MariaDb::start();
    for (knob, prepares) in [("false", 1), ("true", 0)] {
        let pool = Pool::from_url(&format!(
            "{}?max_size=1&text_without_params={knob}",
            s.url()
        ))
        .unwrap();
        let mut c = pool.get().unwrap();
        let count = |c: &mut staunch::PooledConn| -> u64 {
            let row: Option<(String, u64)> = c
                .query_first("SHOW SESSION STATUS LIKE 'Com_stmt_prepare'")
                .unwrap();
            row.unwrap().1
        };
        let before = count(&mut c);
        let mut a = c.answer("SELECT 41 + 1", &[], SendAs::Default).unwrap();
        assert!(a.next_row().unwrap());
        assert_eq!(a.get(0), Some(staunch::Value::Int(42)), "{knob}");
        assert_eq!(
            count(&mut c) - before,
            prepares,
            "text_without_params={knob}"
        );
        // A statement may still ask for a way; parameters are unaffected.
        let before = count(&mut c);
        c.answer(
            "SELECT 1 + ?",
            &[Param::Int(1)],
            SendAs::Way(staunch::Way::Prepare),
        )
        .unwrap();
        c.answer("SELECT 2", &[], SendAs::Way(staunch::Way::Prepare))
            .unwrap();
        assert_eq!(count(&mut c) - before, 2, "{knob}");
    }
}
