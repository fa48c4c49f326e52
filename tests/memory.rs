//! What a pooled connection keeps resident between borrows (issue 50).
//!
//! The `mysql` crate reads into a 4 MiB buffer that each read fills a little
//! further on, so its pages turn resident as the crate's reads walk through
//! it. With the library's own allocator (the `mimalloc` feature: the C
//! library and every package; `scripts/test.sh` runs this file with it too)
//! the return replaces a connection whose crate reads passed 1 MiB, and the
//! allocator gives its buffers back; under another allocator (glibc's, as
//! here without the feature) the connection is kept: a replacement would
//! cost a connect and free nothing. The resident figures themselves are a
//! benchmark (benches/memory) and a check on the shipped artifacts
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

/// Reads an answer of about `rows` × 110 bytes through the crate (the Rust
/// API's statements are the crate's), on a borrow returned at the end, more
/// than 100 ms after the last return (the return asks the kernel how far
/// the crate read at most that often).
fn carry(pool: &Pool, rows: u32) {
    let mut c = pool.get().unwrap();
    let got: Vec<(u32, String)> = c
        .query(format!("SELECT seq, REPEAT('x', 100) FROM seq_1_to_{rows}"))
        .unwrap();
    assert_eq!(got.len(), rows as usize);
    std::thread::sleep(std::time::Duration::from_millis(150));
}

#[test]
fn a_connection_the_crate_read_a_mib_through_is_replaced_with_the_shipped_allocator() {
    let s = MariaDb::start();
    let pool = Pool::from_url(&format!("{}?max_size=1&min_idle=1", s.url())).unwrap();
    let first = conn_id(&pool);

    // 300 KB through the crate: well under the bound, kept.
    carry(&pool, 3_000);
    assert_eq!(
        conn_id(&pool),
        first,
        "a connection under the bound is kept"
    );
    assert_eq!(pool.stats().closed_max_lifetime, 0);

    // Another 1.3 MB: past 1 MiB since the connection opened.
    carry(&pool, 12_000);
    let next = conn_id(&pool);
    if cfg!(feature = "mimalloc") {
        assert_ne!(
            next, first,
            "the worn connection was replaced at its return"
        );
        assert_eq!(pool.stats().closed_max_lifetime, 1);
        assert_eq!(pool.stats().closed_broken, 0);
        // The count starts again with the new connection.
        carry(&pool, 3_000);
        assert_eq!(conn_id(&pool), next);
    } else {
        assert_eq!(next, first, "under glibc's malloc the connection is kept");
        assert_eq!(pool.stats().closed_max_lifetime, 0);
    }
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
