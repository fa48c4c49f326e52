//! Issue 20: the two ways to send a statement with parameters, side by side
//! with the raw `mysql::Conn`, against a throwaway MariaDB started here, one
//! thread, one connection each (borrowed once, so the pool's checkout is not
//! in the figures):
//!
//! - `one-shot INSERT` of 5 parameters (an int, a text, a double, a decimal,
//!   a date-time) whose text differs every time (a comment with a counter),
//!   as a statement run once is: the prepared ways prepare, execute and close
//!   (the `mysql` crate's statement cache is 32 entries, so it closes the
//!   oldest), the interpolated way sends one text;
//! - `repeated SELECT ... WHERE id = ?`: the same text every time, so the
//!   prepared ways prepare once (cached) and then only execute.
//!
//! Contenders: `staunch prepared` (`exec_params_with`/`query_params_with`,
//! `Way::Prepare`), `staunch interpolated` (`Way::Interpolate`), `raw
//! mysql::Conn prepared` (`exec_drop`/`exec_first` with the same values,
//! the decimal as a string: the crate's own default), `raw mysql::Conn text`
//! (the values formatted into the SQL by hand, no escaping: the floor).
//!
//! Each round runs every contender for `dur_ms` in a rotating order; reported:
//! median statements/s over rounds and the ratios to raw prepared and raw
//! text, from the same rounds.
//!
//! Run: `cargo bench --bench statements [-- --reps=7 --dur-ms=300 --quick]`.

#[path = "common/mod.rs"]
mod common;
use staunch_testkit as support;

use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use mysql::{Conn, Opts, OptsBuilder, Row};
use staunch::{Decimal, Param, Pool, PooledConn, Way};

const CONTENDERS: [&str; 4] = [
    "staunch prepared",
    "staunch interpolated",
    "raw mysql::Conn prepared",
    "raw mysql::Conn text",
];

struct Side {
    staunch: PooledConn,
    raw: Conn,
    n: u64,
}

fn insert_params(n: u64) -> Vec<Param> {
    vec![
        Param::Int(n as i64),
        Param::Text(format!("name {n} with a ' quote")),
        Param::Double(n as f64 * 0.5),
        Param::Decimal("12345.67".parse::<Decimal>().unwrap()),
        Param::DateTime(2026, 12, 1, 18, 0, 0, 123456),
    ]
}

const INSERT: &str = "INSERT INTO bench_t (id, name, score, amount, at) VALUES (?, ?, ?, ?, ?)";

/// One statement of `kind` (0: one-shot insert, 1: repeated select) by
/// contender `who`.
fn op(s: &mut Side, kind: usize, who: usize) {
    s.n += 1;
    let n = s.n;
    if kind == 0 {
        let sql = format!("{INSERT} /* {n} */");
        match who {
            0 | 1 => {
                let way = if who == 0 { Way::Prepare } else { Way::Interpolate };
                s.staunch
                    .exec_params_with(&sql, &insert_params(n), way)
                    .unwrap();
            }
            2 => s
                .raw
                .exec_drop(
                    &sql,
                    (
                        n as i64,
                        format!("name {n} with a ' quote"),
                        n as f64 * 0.5,
                        "12345.67",
                        mysql::Value::Date(2026, 12, 1, 18, 0, 0, 123456),
                    ),
                )
                .unwrap(),
            _ => s
                .raw
                .query_drop(format!(
                    "INSERT INTO bench_t (id, name, score, amount, at) VALUES ({n}, 'name {n} with a '' quote', {:e}, 12345.67, TIMESTAMP'2026-12-01 18:00:00.123456') /* {n} */",
                    n as f64 * 0.5
                ))
                .unwrap(),
        }
    } else {
        let id = (n % 1000) as i64 + 1;
        let sql = "SELECT id, name, score, amount, at FROM bench_r WHERE id = ?";
        let got = match who {
            0 | 1 => {
                let way = if who == 0 {
                    Way::Prepare
                } else {
                    Way::Interpolate
                };
                let rows: Vec<Row> = s
                    .staunch
                    .query_params_with(sql, &[Param::Int(id)], way)
                    .unwrap();
                rows.len()
            }
            2 => s
                .raw
                .exec_first::<Row, _, _>(sql, (id,))
                .unwrap()
                .into_iter()
                .count(),
            _ => s
                .raw
                .query_first::<Row, _>(format!(
                    "SELECT id, name, score, amount, at FROM bench_r WHERE id = {id}"
                ))
                .unwrap()
                .into_iter()
                .count(),
        };
        assert_eq!(got, 1);
    }
}

fn main() {
    let quick = common::quick();
    let reps: usize = common::knob("reps", if quick { 3 } else { 7 });
    let dur = Duration::from_millis(common::knob("dur-ms", if quick { 200 } else { 300 }));
    let db = support::MariaDb::start();
    db.sql(
        "CREATE TABLE staunch_test.bench_t (id BIGINT, name VARCHAR(100), score DOUBLE, \
         amount DECIMAL(20,2), at DATETIME(6)); \
         CREATE TABLE staunch_test.bench_r (id BIGINT PRIMARY KEY, name VARCHAR(100), \
         score DOUBLE, amount DECIMAL(20,2), at DATETIME(6)); \
         INSERT INTO staunch_test.bench_r SELECT seq, CONCAT('row ', seq), seq / 3, seq * 1.25, \
         '2026-12-01 18:00:00.5' FROM seq_1_to_1000",
    );
    let url = db.url();
    let pool = Pool::from_url(&format!("{url}?max_size=1")).unwrap();
    let raw = Conn::new(OptsBuilder::from_opts(Opts::from_url(&url).unwrap()).prefer_socket(false))
        .unwrap();
    let mut side = Side {
        staunch: pool.get().unwrap(),
        raw,
        n: 0,
    };
    eprintln!(
        "issue 20 statements: MariaDB {} ; {reps} rounds x {} ms per contender; nproc {}, load {}",
        db.query_string("SELECT VERSION()").unwrap_or_default(),
        dur.as_millis(),
        common::nproc(),
        common::loadavg()
    );
    for (kind, name) in [
        "one-shot INSERT, 5 parameters",
        "repeated SELECT ... WHERE id = ?",
    ]
    .iter()
    .enumerate()
    {
        // Warm-up: every contender once for a while.
        for who in 0..4 {
            let t = Instant::now();
            while t.elapsed() < dur / 2 {
                op(&mut side, kind, who);
            }
        }
        let mut rates = vec![Vec::new(); 4];
        for round in 0..reps {
            for who in common::rotation(4, round) {
                let t = Instant::now();
                let mut k = 0u64;
                while t.elapsed() < dur {
                    op(&mut side, kind, who);
                    k += 1;
                }
                rates[who].push(k as f64 / t.elapsed().as_secs_f64());
            }
        }
        println!("\n{name}:");
        println!("| contender | statements/s (median of {reps}) | vs raw prepared | vs raw text |");
        println!("|---|---|---|---|");
        for who in 0..4 {
            println!(
                "| {} | {:.0} | {:.2}x | {:.2}x |",
                CONTENDERS[who],
                common::median(&rates[who]),
                common::paired_ratio(&rates[who], &rates[2]),
                common::paired_ratio(&rates[who], &rates[3]),
            );
        }
        println!(
            "staunch interpolated / staunch prepared: {:.2}x",
            common::paired_ratio(&rates[1], &rates[0])
        );
    }
}
