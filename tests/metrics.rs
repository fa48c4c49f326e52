//! The pool's figures as Prometheus text (`Pool::metrics_text`, issue 47):
//! what a scrape says after borrows and statements on a real server. The
//! bindings' tests read the same text with their ecosystem's own parsers
//! (`prometheus_client`, Go's `expfmt`).

use std::collections::HashMap;

use staunch_testkit as support;

use staunch::prelude::*;
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
    // Three statements slept at least 50 ms: none of them is counted below
    // 16.384 ms, whatever the machine's load (how fast the others ran is a
    // benchmark's business, not this test's).
    let below = one(
        &after,
        "db_client_operation_duration_seconds_bucket",
        &format!("{host},le=\"0.016384\""),
    );
    assert!(below <= 3.0, "{below} statements below 16 ms");
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

/// What a tracer heard: kind, statement, error code, whether it failed,
/// connection number, server, and the thread it was told on.
type Heard = (
    staunch::TraceKind,
    Option<String>,
    u16,
    bool,
    u64,
    String,
    std::thread::ThreadId,
);

#[test]
fn a_tracer_hears_each_acquire_and_statement_on_the_borrowing_thread() {
    use staunch::TraceKind::*;
    let s = MariaDb::start();
    let heard = std::sync::Arc::new(std::sync::Mutex::new(Vec::<Heard>::new()));
    let h = heard.clone();
    let pool = Pool::builder()
        .url(&format!("{}?max_size=1&pool_name=traced", s.url()))
        .tracer(std::sync::Arc::new(move |e: &staunch::TraceEvent<'_>| {
            assert_eq!(e.pool, "traced");
            h.lock().unwrap().push((
                e.kind,
                e.statement.map(str::to_owned),
                e.error_code,
                e.error.is_some(),
                e.connection_id,
                e.server.to_owned(),
                std::thread::current().id(),
            ))
        }))
        .build()
        .unwrap();
    let me = std::thread::current().id();
    let server = format!("127.0.0.1:{}", s.port());
    {
        let mut c = pool.get().unwrap();
        c.query_drop("DO 1").unwrap();
        assert!(c.query_drop("SELECT * FROM no_such_table").is_err());
        // A streamed answer the borrower reads itself ends at the next
        // statement on its connection (or the return).
        let rows = c.query_iter("SELECT seq FROM seq_1_to_3").unwrap();
        drop(rows);
        c.query_drop("DO 2").unwrap();
        // The one connection is borrowed: a second borrow times out.
        assert!(pool
            .get_timeout(std::time::Duration::from_millis(50))
            .is_err());
    }
    let heard = heard.lock().unwrap();
    let id = heard[1].4;
    assert!(id > 0);
    let got: Vec<_> = heard
        .iter()
        .map(|(k, sql, code, failed, _, _, _)| (*k, sql.as_deref(), *code, *failed))
        .collect();
    assert_eq!(
        got,
        [
            (AcquireStart, None, 0, false),
            (AcquireEnd, None, 0, false),
            (StatementStart, Some("DO 1"), 0, false),
            (StatementEnd, Some("DO 1"), 0, false),
            (
                StatementStart,
                Some("SELECT * FROM no_such_table"),
                0,
                false
            ),
            (
                StatementEnd,
                Some("SELECT * FROM no_such_table"),
                1146,
                true
            ),
            (StatementStart, Some("SELECT seq FROM seq_1_to_3"), 0, false),
            (StatementEnd, Some("SELECT seq FROM seq_1_to_3"), 0, false),
            (StatementStart, Some("DO 2"), 0, false),
            (StatementEnd, Some("DO 2"), 0, false),
            (AcquireStart, None, 0, false),
            (AcquireEnd, None, 0, true),
        ]
    );
    for (i, (k, _, _, _, conn, srv, thread)) in heard.iter().enumerate() {
        assert_eq!(*thread, me, "event {i} told on another thread");
        if matches!(k, StatementStart | StatementEnd) || i == 1 {
            assert_eq!((*conn, srv.as_str()), (id, server.as_str()), "event {i}");
        }
    }
}
