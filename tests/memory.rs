//! What a pooled connection keeps between borrows (issue 50).
//!
//! staunch's protocol layer gives its buffers back to their first size when
//! a connection returns (`wire::Framer::give_back`), so a connection that
//! carried a large answer is kept as it is, under any allocator (the
//! `mysql` crate's 4 MiB read buffer, which once made the return replace
//! such connections, went with the crate). The resident figures themselves
//! are a benchmark (benches/memory) and a check on the shipped artifacts
//! (scripts/dist-check.sh), not a test.

use staunch_testkit as support;

use staunch::prelude::*;
use staunch::Pool;
use support::MariaDb;

/// The connection's id, as the server numbers it.
fn conn_id(pool: &Pool) -> u64 {
    pool.get()
        .unwrap()
        .query_first("SELECT CONNECTION_ID()")
        .unwrap()
        .unwrap()
}

/// Reads an answer of about `rows` × 110 bytes, on a borrow returned at
/// the end.
fn carry(pool: &Pool, rows: u32) {
    let mut c = pool.get().unwrap();
    let got: Vec<(u32, String)> = c
        .query(format!("SELECT seq, REPEAT('x', 100) FROM seq_1_to_{rows}"))
        .unwrap();
    assert_eq!(got.len(), rows as usize);
    std::thread::sleep(std::time::Duration::from_millis(150));
}

#[test]
fn a_connection_that_carried_a_large_answer_is_kept() {
    let s = MariaDb::start();
    let pool = Pool::from_url(&format!("{}?max_size=1&min_idle=1", s.url())).unwrap();
    let first = conn_id(&pool);
    // 300 KB, then another 1.3 MB: the connection is kept each time, with
    // the shipped allocator or without it.
    carry(&pool, 3_000);
    carry(&pool, 12_000);
    assert_eq!(conn_id(&pool), first, "the connection is kept");
    let st = pool.stats();
    assert_eq!(st.closed_max_lifetime, 0);
    assert_eq!(st.closed_broken, 0);
}

#[test]
fn a_transaction_left_open_on_a_worn_connection_is_not_seen_by_the_next_borrower() {
    let s = MariaDb::start();
    s.sql("CREATE TABLE staunch_test.worn (id INT PRIMARY KEY) ENGINE=InnoDB");
    let pool = Pool::from_url(&format!("{}?max_size=1&min_idle=1", s.url())).unwrap();
    {
        let mut c = pool.get().unwrap();
        c.query_drop("START TRANSACTION").unwrap();
        c.query_drop("INSERT INTO worn VALUES (1)").unwrap();
        let got: Vec<(u32, String)> = c
            .query("SELECT seq, REPEAT('x', 100) FROM seq_1_to_12000")
            .unwrap();
        assert_eq!(got.len(), 12_000);
        std::thread::sleep(std::time::Duration::from_millis(150));
        // Returned with the transaction open: rolled back, or the
        // connection replaced (the server rolls back what a closed
        // connection had open).
    }
    let mut c = pool.get().unwrap();
    let n: Option<i64> = c.query_first("SELECT COUNT(*) FROM worn").unwrap();
    assert_eq!(n, Some(0), "the returned transaction's insert is gone");
    // Nor does its lock hold the next writer up.
    c.query_drop("SET SESSION innodb_lock_wait_timeout = 1")
        .unwrap();
    c.query_drop("INSERT INTO worn VALUES (1)").unwrap();
}
