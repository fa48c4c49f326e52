//! What each way of putting a session back costs, against a throwaway
//! MariaDB (TCP, like every other bench here), on one raw `mysql::Conn`: the
//! choice behind the return after raw access (`&mut *guard`, see
//! `Session::reset`). Interleaved rounds; µs per operation, client and
//! server together (the wall clock of a round trip on loopback).
//!
//! - `SELECT 1`, `COM_PING`: yardsticks;
//! - `COM_RESET_CONNECTION` alone: what staunch does on return (it keeps
//!   the session's current database, which is selected again before the
//!   next statement through the guard's own methods);
//! - `COM_RESET_CONNECTION` + `COM_INIT_DB`: what staunch did on every such
//!   return until 1.1 (two round trips);
//! - `COM_CHANGE_USER` (same user, the URL's database): resets and selects
//!   the database, but re-authenticates, and MariaDB 10.11 answers it with
//!   an auth switch request: two round trips too.
//!
//! Run: `cargo bench --bench reset_cost [-- --reps=7 --ops=2000]`.

#[path = "common/mod.rs"]
mod common;

use std::time::Instant;

use mysql::prelude::Queryable;

fn main() {
    let reps: usize = common::knob("reps", 7);
    let ops: usize = common::knob("ops", 2000);
    let s = staunch_testkit::MariaDb::start();
    let opts = mysql::Opts::from_url(&s.url()).expect("url");
    let db = opts
        .get_db_name()
        .expect("the test kit's URL names a database")
        .to_owned();
    let mut c = mysql::Conn::new(mysql::OptsBuilder::from_opts(opts).prefer_socket(false))
        .expect("connect");
    type Op = Box<dyn Fn(&mut mysql::Conn)>;
    let db2 = db.clone();
    let ways: Vec<(&str, Op)> = vec![
        ("SELECT 1", Box::new(|c| c.query_drop("SELECT 1").unwrap())),
        ("COM_PING", Box::new(|c| c.ping().unwrap())),
        ("COM_RESET_CONNECTION", Box::new(|c| c.reset().unwrap())),
        (
            "COM_RESET_CONNECTION + COM_INIT_DB",
            Box::new(move |c| {
                c.reset().unwrap();
                c.select_db(&db2).unwrap();
            }),
        ),
        (
            "COM_CHANGE_USER",
            Box::new(|c| c.change_user(mysql::ChangeUserOpts::DEFAULT).unwrap()),
        ),
    ];
    let mut us: Vec<Vec<f64>> = vec![Vec::new(); ways.len()];
    for r in 0..reps + 1 {
        for (i, (_, op)) in ways.iter().enumerate() {
            let t = Instant::now();
            for _ in 0..ops {
                op(&mut c);
            }
            if r > 0 {
                // round 0 warms up
                us[i].push(t.elapsed().as_secs_f64() * 1e6 / ops as f64);
            }
        }
    }
    println!(
        "### Putting a session back: µs per operation (median of {reps} rounds of {ops}; load {})",
        common::loadavg()
    );
    println!();
    println!("| operation | µs | ÷ COM_RESET_CONNECTION + COM_INIT_DB |");
    println!("|---|---:|---:|");
    let base = common::median(&us[3]);
    for (i, (name, _)) in ways.iter().enumerate() {
        let m = common::median(&us[i]);
        println!("| {name} | {m:.1} | {:.2}× |", m / base);
    }
}
