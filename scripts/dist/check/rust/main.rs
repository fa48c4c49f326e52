//! What scripts/dist-check.sh builds in a scratch project whose `staunch`
//! dependency is patched to the packaged `.crate` (unpacked): open a pool on
//! the URL in argv[1], borrow, query with a parameter, cancel a running
//! statement from another thread (ErrorKind::Cancelled, the connection goes
//! on), return the connection, close the pool. The crate's own API (2.x):
//! `staunch::prelude`'s `Queryable`, `staunch::Error`.
use staunch::prelude::*;
use std::time::{Duration, Instant};

fn main() {
    let url = std::env::args().nth(1).expect("usage: check URL");
    let pool = staunch::Pool::from_url(&url).expect("open the pool");
    let mut conn = pool.get().expect("borrow");
    let n: Option<i64> = conn.exec_first("SELECT ? + 1", (41,)).expect("SELECT ? + 1");
    assert_eq!(n, Some(42));

    let handle = conn.cancel_handle();
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        handle.cancel()
    });
    let t0 = Instant::now();
    let e = conn
        .exec_first::<i64, _, _>("SELECT SLEEP(?)", (30,))
        .expect_err("the statement was not cancelled");
    let found = canceller.join().expect("the canceller").expect("cancel");
    assert_eq!(e.kind(), staunch::ErrorKind::Cancelled, "{e}");
    assert!(found, "the cancel found no statement running");
    assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
    let n: Option<i64> = conn.exec_first("SELECT ? * 2", (21,)).expect("after the cancel");
    assert_eq!(n, Some(42));

    drop(conn); // back to the pool
    drop(pool);
    // SAFETY: a static NUL-terminated string.
    let version = unsafe { std::ffi::CStr::from_ptr(staunch::ffi::staunch_version_string()) };
    println!(
        "staunch {} (Rust, the packaged crate; the version is its C library's): borrowed, queried, cancelled a statement, closed",
        version.to_string_lossy()
    );
}
