//! B3 (issue 5): connection set-up. The time to open one new connection to a
//! throwaway MariaDB on 127.0.0.1:
//!
//! - `staunch`: `MysqlConnector::connect` (picks a local port, TCP handshake
//!   with `bind_address`, then the session set-up statement
//!   `SET SESSION session_track_transaction_info = 'STATE'`);
//! - `mysql default`: `mysql::Conn::new` with the crate's defaults, i.e.
//!   prefer_socket(true): for a loopback TCP address it connects over TCP,
//!   asks the server for `@@socket`, and opens a *second* connection through
//!   that unix socket (shown by the server's `Connections` counter and by the
//!   `HOST` the server sees);
//! - `mysql TCP`: `mysql::Conn::new` with prefer_socket(false);
//! - `mysql TCP + session init`: the last one followed by staunch's session
//!   set-up statement (what staunch adds, to split its cost).
//!
//! Contenders are interleaved; each sample is one connect (close excluded).
//!
//! Run: `cargo bench --bench connect [-- --iters=200]`.

#[path = "common/mod.rs"]
mod common;
use staunch_testkit as support;

use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use mysql::{Conn, Opts, OptsBuilder};
use staunch::pool::{ConnectAttempt, Connector};
use staunch::MysqlConnector;

use common::{median, percentile_sorted};

const NAMES: [&str; 4] = [
    "staunch MysqlConnector::connect",
    "mysql::Conn::new, defaults (prefer_socket true)",
    "mysql::Conn::new, prefer_socket(false)",
    "mysql::Conn::new, prefer_socket(false) + staunch's session init",
];

/// A connection each contender opened.
enum Opened {
    Staunch(Box<staunch::Session>),
    Crate(Conn),
}

impl Opened {
    /// The host the server sees it come from.
    fn host(self) -> String {
        const SQL: &str =
            "SELECT HOST FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()";
        match self {
            Opened::Staunch(mut s) => s
                .query_first_text(SQL)
                .expect("processlist")
                .and_then(|r| r.into_iter().next().flatten())
                .unwrap_or_default(),
            Opened::Crate(mut c) => c
                .query_first::<String, _>(SQL)
                .expect("processlist")
                .unwrap_or_default(),
        }
    }
}

fn main() {
    let quick = common::quick();
    let iters: usize = common::knob("iters", if quick { 50 } else { 200 });
    let started = Instant::now();
    let db = support::MariaDb::start();
    let url = db.url();
    let config = staunch::Config::from_url(&url).expect("config");
    let connector = MysqlConnector::new(config.connect().clone(), Duration::from_secs(1));
    let default_opts = Opts::from_url(&url).expect("url");
    let tcp_opts = Opts::from(OptsBuilder::from_opts(default_opts.clone()).prefer_socket(false));
    eprintln!(
        "B3 connect: MariaDB {} at {}; {iters} connects per contender; nproc {}, load {}",
        db.query_string("SELECT VERSION()").unwrap_or_default(),
        db.addr(),
        common::nproc(),
        common::loadavg()
    );

    let connect = |k: usize| -> Opened {
        match k {
            0 => Opened::Staunch(Box::new(
                connector
                    .connect(&ConnectAttempt::new(Duration::from_secs(3)))
                    .expect("staunch connect"),
            )),
            1 => Opened::Crate(Conn::new(default_opts.clone()).expect("mysql default connect")),
            2 => Opened::Crate(Conn::new(tcp_opts.clone()).expect("mysql tcp connect")),
            3 => {
                let mut c = Conn::new(tcp_opts.clone()).expect("mysql tcp connect");
                c.query_drop("SET SESSION session_track_transaction_info = 'STATE'")
                    .expect("session init");
                Opened::Crate(c)
            }
            _ => unreachable!(),
        }
    };
    // The server's count of connections ever opened.
    let server_connections = || -> i64 {
        db.query_string(
            "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'CONNECTIONS'",
        )
        .and_then(|s| s.parse().ok())
        .expect("Connections counter")
    };

    // What each contender opens on the server, and how the server sees it.
    let mut opened = Vec::new();
    let mut via = Vec::new();
    for k in 0..NAMES.len() {
        let probe = 20;
        let before = server_connections();
        for _ in 0..probe {
            drop(connect(k));
        }
        let after = server_connections();
        // (The helper session that reads the counter is already open.)
        opened.push((after - before) as f64 / probe as f64);
        let host = connect(k).host();
        via.push(if host.starts_with("localhost") {
            "unix socket".to_string()
        } else {
            format!("TCP ({})", host.split(':').next().unwrap_or(""))
        });
    }

    // Warm-up, then interleaved samples.
    for k in 0..NAMES.len() {
        for _ in 0..10 {
            drop(connect(k));
        }
    }
    let mut samples: Vec<Vec<u64>> = vec![Vec::new(); NAMES.len()];
    for _ in 0..iters {
        for (k, s) in samples.iter_mut().enumerate() {
            let t0 = Instant::now();
            let c = connect(k);
            let ns = t0.elapsed().as_nanos() as u64;
            drop(c);
            s.push(ns);
        }
    }
    for s in samples.iter_mut() {
        s.sort_unstable();
    }
    let med = |k: usize| median(&samples[k].iter().map(|&x| x as f64).collect::<Vec<_>>());
    let base = med(2);

    println!("### B3: connection set-up\n");
    println!(
        "One new connection to MariaDB on 127.0.0.1, {iters} samples per contender (interleaved, after 10 warm-up connects each; close not timed). \
         Load average at start: {}.\n",
        common::loadavg()
    );
    println!("| contender | median | p10 | p90 | ÷ bare TCP Conn::new | server connections opened per connect | session ends up on |");
    println!("|:---|---:|---:|---:|---:|---:|:---|");
    for k in 0..NAMES.len() {
        let m = med(k);
        println!(
            "| {} | {:.0} µs | {:.0} µs | {:.0} µs | {:.2}× | {:.1} | {} |",
            NAMES[k],
            m / 1e3,
            percentile_sorted(&samples[k], 0.10) as f64 / 1e3,
            percentile_sorted(&samples[k], 0.90) as f64 / 1e3,
            m / base,
            opened[k],
            via[k]
        );
    }
    println!();
    println!(
        "staunch ÷ mysql defaults: {:.2}×; staunch ÷ mysql prefer_socket(false): {:.2}×.\n",
        med(0) / med(1),
        med(0) / med(2)
    );
    drop(db);
    eprintln!("B3 done in {:.0} s", started.elapsed().as_secs_f64());
}
