//! One text-protocol statement, ITERATIONS times, on one connection,
//! through the `mysql` crate (`query_iter`, what staunch's connections use
//! today) or through src/wire on the same socket; every cell of every row
//! is looked at (its length summed). For counting what each executes per
//! statement: `scripts/wire-bench.sh` runs it under callgrind at two
//! iteration counts, so that start-up and connecting cancel out.
//!
//!   cargo run --release --example wire_statement_loop -- URL crate|wire ITERATIONS SQL
//!
//! Before the loop it creates the tables the benchmark's statements read
//! (the same work in every run).

use std::net::TcpStream;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::process::ExitCode;

use mysql::prelude::Queryable;
use staunch::wire::{caps, Columns, Framer, Next, Response};

const SETUP: &str = "
    CREATE OR REPLACE TABLE wire_bench_one (id INT PRIMARY KEY, a INT, s VARCHAR(40), d DECIMAL(12,2), t DATETIME);
    INSERT INTO wire_bench_one VALUES (1, 2, 'hello world', 12.50, '2026-12-01 18:00:00');
    CREATE OR REPLACE TABLE wire_bench_rows (id INT PRIMARY KEY, name VARCHAR(40), score DOUBLE, price DECIMAL(10,2));
    INSERT INTO wire_bench_rows SELECT seq, CONCAT('name-', seq, '-', REPEAT('x', seq % 17)), seq / 7,
      seq * 1.25 FROM seq_1_to_10000";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let (Some(url), Some(way), Some(n), Some(sql)) =
        (args.get(1), args.get(2), args.get(3), args.get(4))
    else {
        eprintln!("usage: statement_loop URL crate|wire ITERATIONS SQL");
        return ExitCode::from(2);
    };
    let Ok(n) = n.parse::<u64>() else {
        eprintln!("ITERATIONS must be a number");
        return ExitCode::from(2);
    };
    let opts = mysql::OptsBuilder::from_opts(mysql::Opts::from_url(url).expect("a mysql:// URL"))
        .prefer_socket(false);
    let mut conn = mysql::Conn::new(opts).expect("connect");
    conn.query_drop(SETUP).expect("set-up");
    let mut total = 0usize;
    match way.as_str() {
        "crate" => {
            for _ in 0..n {
                let mut result = conn.query_iter(sql.as_str()).expect("query");
                while let Some(set) = result.iter() {
                    for row in set {
                        for v in row.expect("row").unwrap() {
                            if let mysql::Value::Bytes(b) = v {
                                total += b.len();
                            }
                        }
                    }
                }
            }
        }
        "wire" => {
            // SAFETY: the crate's open socket, borrowed only to dup it; the
            // crate is idle from here on.
            let fd = unsafe { BorrowedFd::borrow_raw(conn.as_raw_fd()) }
                .try_clone_to_owned()
                .expect("dup");
            let mut f = Framer::new(TcpStream::from(fd), caps::PROTOCOL_41);
            let mut columns = Columns::new();
            for _ in 0..n {
                f.send_query(sql.as_bytes()).expect("send");
                if f.read_response(&mut columns).expect("answer") == Response::ResultSet {
                    while let Next::Row(row) = f.next_row().expect("row") {
                        total += row.cells().flatten().map(<[u8]>::len).sum::<usize>();
                    }
                }
            }
        }
        other => {
            eprintln!("the way is crate or wire, not {other}");
            return ExitCode::from(2);
        }
    }
    // So that the loop is not optimised away, and a run can be checked.
    eprintln!("{total} bytes of cells");
    ExitCode::SUCCESS
}
