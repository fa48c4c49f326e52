//! The pool's figures as Prometheus text (`Pool::metrics_text`, issue 47):
//! what a scrape says after borrows and statements on a real server. The
//! bindings' tests read the same text with their ecosystem's own parsers
//! (`prometheus_client`, Go's `expfmt`).

use std::collections::HashMap;

use staunch_testkit as support;

use mysql::prelude::Queryable;
use staunch::Pool;
use support::MariaDb;

/// The samples of a scrape: `name{labels}` to value (labels as written).
fn samples(text: &str) -> HashMap<String, f64> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let (k, v) = l
                .rsplit_once(' ')
                .expect("a sample is `name{labels} value`");
            (
                k.to_owned(),
                v.parse().expect("a sample's value is a number"),
            )
        })
        .collect()
}

/// The one sample of `name` whose labels contain `with`.
fn one(s: &HashMap<String, f64>, name: &str, with: &str) -> f64 {
    let found: Vec<_> = s
        .iter()
        .filter(|(k, _)| k.starts_with(&format!("{name}{{")) && k.contains(with))
        .collect();
    assert_eq!(found.len(), 1, "{name} with {with}: {found:?}");
    *found[0].1
}

/// Every histogram's buckets rise with `le` and end at `_count`.
fn check_histograms(text: &str, s: &HashMap<String, f64>) {
    let mut last: HashMap<&str, f64> = HashMap::new();
    for l in text.lines().filter(|l| l.contains("_bucket{")) {
        let (name, _) = l.split_once("_bucket{").unwrap();
        let v: f64 = l.rsplit_once(' ').unwrap().1.parse().unwrap();
        let before = last.insert(name, v).unwrap_or(0.0);
        if l.contains("le=\"+Inf\"") {
            assert_eq!(v, one(s, &format!("{name}_count"), ""), "{name}");
            last.remove(name);
        } else {
            assert!(v >= before, "{name}: buckets must rise: {l}");
        }
    }
}

#[test]
fn a_scrape_counts_borrows_statements_and_their_times_per_host() {
    let s = MariaDb::start();
    let pool = Pool::from_url(&format!(
        "{}?max_size=2&min_idle=0&pool_name=orders%20db",
        s.url()
    ))
    .unwrap();
    assert_eq!(pool.name(), "orders db");
    for _ in 0..3 {
        pool.get().unwrap().query_drop("DO 1").unwrap();
    }
    // Timings start with the first scrape: these borrows are not timed.
    let first = samples(&pool.metrics_text());
    let host = format!(
        "db_client_connection_pool_name=\"orders db\",server_address=\"127.0.0.1\",server_port=\"{}\"",
        s.port()
    );
    assert_eq!(
        one(&first, "db_client_connection_use_time_seconds_count", &host),
        0.0
    );
    assert_eq!(one(&first, "staunch_acquires_total", &host), 3.0);

    for _ in 0..3 {
        let mut c = pool.get().unwrap();
        c.query_drop("DO 1").unwrap();
        c.query_drop("DO SLEEP(0.05)").unwrap();
    }
    let text = pool.metrics_text();
    let after = samples(&text);
    check_histograms(&text, &after);
    let n = |name: &str| one(&after, name, &host);
    assert_eq!(n("staunch_acquires_total"), 6.0);
    assert_eq!(n("db_client_connection_wait_time_seconds_count"), 6.0);
    assert_eq!(n("db_client_connection_use_time_seconds_count"), 3.0);
    assert_eq!(n("db_client_operation_duration_seconds_count"), 6.0);
    // Three statements slept 50 ms: under 16 ms, only the three others.
    let below = |le: &str| {
        one(
            &after,
            "db_client_operation_duration_seconds_bucket",
            &format!("{host},le=\"{le}\""),
        )
    };
    assert_eq!(below("0.016384"), 3.0);
    assert_eq!(below("0.065536"), 6.0);
    assert!(n("db_client_operation_duration_seconds_sum") >= 0.15);
    assert!(n("db_client_connection_use_time_seconds_sum") >= 0.15);
    assert_eq!(
        n("db_client_connection_create_time_seconds_count"),
        n("staunch_connections_created_total")
    );
    assert_eq!(n("db_client_connection_max"), 2.0);
    assert_eq!(n("db_client_connection_timeouts_total"), 0.0);
    let idle = one(&after, "db_client_connection_count", "state=\"idle\"");
    let used = one(&after, "db_client_connection_count", "state=\"used\"");
    assert_eq!((used, idle), (0.0, n("staunch_connections_created_total")));
}

#[test]
fn timings_on_counts_from_the_start_and_a_bad_pool_name_is_refused() {
    let s = MariaDb::start();
    let pool = Pool::from_url(&format!("{}?max_size=1&timings=on", s.url())).unwrap();
    assert!(pool.name().starts_with("staunch-"), "{}", pool.name());
    pool.get().unwrap().query_drop("DO 1").unwrap();
    let h = pool.histograms();
    assert_eq!((h.use_time.count(), h.statement_time.count()), (1, 1));
    let Err(e) = Pool::from_url(&format!("{}?pool_name=a%0Ab", s.url())) else {
        panic!("a name with a newline is refused");
    };
    assert!(e.to_string().contains("pool_name"), "{e}");
}
