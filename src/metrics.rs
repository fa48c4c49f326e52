//! A pool's figures as Prometheus text (exposition format 0.0.4, which
//! OpenMetrics parsers read too), named after OpenTelemetry's semantic
//! conventions for database client connections (`db.client.connection.*`,
//! `db.client.operation.duration`) as OpenTelemetry's Prometheus exporter
//! writes them: dots become underscores, the unit a suffix (`_seconds`),
//! counters end in `_total`. Figures only staunch keeps are `staunch_*`.
//!
//! Every series carries `db_client_connection_pool_name`, and the host's
//! `server_address` and `server_port` (a topology pool writes one series
//! per host; sum over the hosts for the pool). Histograms have fixed
//! buckets (every fourth power of two microseconds, 1 µs to 19 h), so they
//! add up across hosts, processes and scrapes.
//!
//! The bindings' exporters (the Python collector, the Go collector, the JVM
//! binder) read this one text, so the names are decided here once.

use std::fmt::Write;
use std::time::Duration;

use crate::pool::stats::Buckets;
use crate::topology::{HostHealth, HostStats, Pool};
use crate::trace::split_server;

/// Every `EDGE_STEP`-th bucket edge is written (2^0, 2^2, ... µs): a
/// cumulative count at a subset of the edges is still exact.
const EDGE_STEP: usize = 2;
/// The last edge written: 2^36 µs (19 h); above it only `+Inf`.
const LAST_EDGE: u32 = 36;

impl Pool {
    /// The pool's figures as Prometheus text (see the module doc of
    /// `metrics`): gauges, counters and histograms, one series per host.
    /// Turns timings on (see [`keep_timings`](Pool::keep_timings)) so that
    /// the next scrape's `use_time` and operation histograms count. Never
    /// blocks (reads atomics); any thread.
    pub fn metrics_text(&self) -> String {
        self.keep_timings(true);
        let hosts = self.host_stats();
        let mut w = Text {
            out: String::with_capacity(8192 * hosts.len()),
            pool: escape(self.name()),
        };
        let labels: Vec<String> = hosts.iter().map(|h| w.host_labels(h)).collect();
        let each = |f: &dyn Fn(&HostStats) -> f64| -> Vec<(String, f64)> {
            hosts
                .iter()
                .zip(&labels)
                .map(|(h, l)| (l.clone(), f(h)))
                .collect()
        };

        w.family(
            "db_client_connection_count",
            "gauge",
            "Connections open now, by state: idle (ready to hand out) or used (borrowed, or held by a pool thread)",
        );
        for (h, l) in hosts.iter().zip(&labels) {
            let used = h.stats.active + h.stats.reserved;
            w.sample(
                "db_client_connection_count",
                &format!("{l},db_client_connection_state=\"idle\""),
                h.stats.idle as f64,
            );
            w.sample(
                "db_client_connection_count",
                &format!("{l},db_client_connection_state=\"used\""),
                used as f64,
            );
        }
        w.gauge(
            "db_client_connection_max",
            "The most connections the pool opens (max_size)",
            each(&|h| h.stats.max_size as f64),
        );
        w.gauge(
            "db_client_connection_idle_max",
            "The most idle connections the pool keeps (max_size)",
            each(&|h| h.stats.max_size as f64),
        );
        w.gauge(
            "db_client_connection_idle_min",
            "The fewest idle connections the pool keeps (min_idle)",
            each(&|_| self.min_idle() as f64),
        );
        w.gauge(
            "db_client_connection_pending_requests",
            "Callers waiting for a connection now",
            each(&|h| h.stats.waiting as f64),
        );
        w.counter(
            "db_client_connection_timeouts",
            "Borrows that timed out waiting for a connection",
            each(&|h| h.stats.acquire_timeouts as f64),
        );

        w.histogram(
            "db_client_connection_wait_time_seconds",
            "Time a borrow waited for a connection (one handed out at once counts under 1 µs)",
            hosts
                .iter()
                .zip(&labels)
                .map(|(h, l)| (l, &h.histograms.acquire_wait)),
        );
        w.histogram(
            "db_client_connection_create_time_seconds",
            "Time a successful connect took: TCP, greeting, authentication, TLS, session set-up",
            hosts
                .iter()
                .zip(&labels)
                .map(|(h, l)| (l, &h.histograms.connect_time)),
        );
        w.histogram(
            "db_client_connection_use_time_seconds",
            "Time a connection stayed borrowed, from the borrow to its return (counted while timings are on)",
            hosts.iter().zip(&labels).map(|(h, l)| (l, &h.histograms.use_time)),
        );
        w.histogram(
            "db_client_operation_duration_seconds",
            "Time a statement took, from its sending to the end of its answer (counted while timings are on)",
            hosts.iter().zip(&labels).map(|(h, l)| (l, &h.histograms.statement_time)),
        );

        w.counter(
            "staunch_acquires",
            "Successful borrows",
            each(&|h| h.stats.acquired as f64),
        );
        w.counter(
            "staunch_acquires_waited",
            "Successful borrows that found no idle connection and waited",
            each(&|h| h.stats.acquires_waited as f64),
        );
        w.counter(
            "staunch_acquires_cancelled",
            "Borrows cancelled through their cancel token while they waited",
            each(&|h| h.stats.acquires_cancelled as f64),
        );
        w.counter(
            "staunch_connections_created",
            "Connections opened",
            each(&|h| h.stats.created as f64),
        );
        w.counter(
            "staunch_connect_failures",
            "Connect attempts that failed",
            each(&|h| h.stats.connect_failures as f64),
        );
        w.counter(
            "staunch_connects_abandoned",
            "Connect attempts cut off at connect_timeout",
            each(&|h| h.stats.abandoned_connects as f64),
        );
        w.family(
            "staunch_connections_closed_total",
            "counter",
            "Connections closed, by reason",
        );
        for (h, l) in hosts.iter().zip(&labels) {
            let s = &h.stats;
            for (reason, n) in [
                ("idle_timeout", s.closed_idle_timeout),
                ("max_lifetime", s.closed_max_lifetime),
                ("broken", s.closed_broken),
                ("evicted", s.closed_evicted),
                ("pool_closed", s.closed_pool_closed),
            ] {
                w.sample(
                    "staunch_connections_closed_total",
                    &format!("{l},reason=\"{reason}\""),
                    n as f64,
                );
            }
        }
        w.counter(
            "staunch_validation_failures",
            "Validations (on borrow or keepalive) that failed",
            each(&|h| h.stats.validation_failures as f64),
        );
        w.counter(
            "staunch_keepalives",
            "Keepalive checks run",
            each(&|h| h.stats.keepalives as f64),
        );
        w.counter(
            "staunch_leaks_reported",
            "Borrows reported as possible leaks (leak_detection_threshold)",
            each(&|h| h.stats.leaks_reported as f64),
        );
        w.counter(
            "staunch_rollbacks_on_return",
            "Transactions rolled back because a connection came back inside one",
            each(&|h| h.stats.rollbacks_on_return as f64),
        );
        w.counter(
            "staunch_resets_on_return",
            "Sessions reset on return because their state had changed",
            each(&|h| h.stats.resets_on_return as f64),
        );
        w.counter(
            "staunch_statements_cut",
            "Statements cut off: the server did not answer within their bound",
            each(&|h| h.stats.statements_cut as f64),
        );
        w.counter(
            "staunch_invariant_violations",
            "Broken internal invariants observed (must be 0)",
            each(&|h| h.stats.violations as f64),
        );
        w.gauge(
            "staunch_connects_running",
            "Connects running now",
            each(&|h| h.stats.connecting as f64),
        );
        w.gauge(
            "staunch_host_writer",
            "1 for the host taking writes, 0 for the others",
            each(&|h| f64::from(u8::from(h.is_writer))),
        );
        w.gauge(
            "staunch_host_health",
            "What the monitor last found: 0 unknown, 1 healthy, 2 lagging, 3 down, 4 stale",
            each(&|h| health(h.health)),
        );
        let lagging: Vec<_> = hosts
            .iter()
            .zip(&labels)
            .filter_map(|(h, l)| Some((l.clone(), h.lag?.as_secs_f64())))
            .collect();
        w.gauge(
            "staunch_replication_lag_seconds",
            "Replication lag last measured (replicas only)",
            lagging,
        );
        w.out
    }
}

fn health(h: HostHealth) -> f64 {
    f64::from(h as u8)
}

/// The text being written, and the pool's escaped name.
struct Text {
    out: String,
    pool: String,
}

impl Text {
    fn host_labels(&self, h: &HostStats) -> String {
        let (addr, port) = split_server(&h.endpoint);
        let mut l = format!(
            "db_client_connection_pool_name=\"{}\",server_address=\"{}\"",
            self.pool,
            escape(addr)
        );
        if let Some(p) = port {
            let _ = write!(l, ",server_port=\"{p}\"");
        }
        l
    }

    fn family(&mut self, name: &str, kind: &str, help: &str) {
        let _ = writeln!(self.out, "# HELP {name} {help}\n# TYPE {name} {kind}");
    }

    fn sample(&mut self, name: &str, labels: &str, v: f64) {
        let _ = writeln!(self.out, "{name}{{{labels}}} {}", number(v));
    }

    fn gauge(&mut self, name: &str, help: &str, values: Vec<(String, f64)>) {
        self.family(name, "gauge", help);
        for (l, v) in values {
            self.sample(name, &l, v);
        }
    }

    fn counter(&mut self, name: &str, help: &str, values: Vec<(String, f64)>) {
        let name = format!("{name}_total");
        self.family(&name, "counter", help);
        for (l, v) in values {
            self.sample(&name, &l, v);
        }
    }

    fn histogram<'a>(
        &mut self,
        name: &str,
        help: &str,
        series: impl Iterator<Item = (&'a String, &'a Buckets)>,
    ) {
        self.family(name, "histogram", help);
        for (l, b) in series {
            for (edge, below) in b.cumulative().step_by(EDGE_STEP) {
                if edge > Duration::from_micros(1 << LAST_EDGE) {
                    break;
                }
                let le = number(edge.as_secs_f64());
                let _ = writeln!(self.out, "{name}_bucket{{{l},le=\"{le}\"}} {below}");
            }
            let n = b.count();
            let _ = writeln!(self.out, "{name}_bucket{{{l},le=\"+Inf\"}} {n}");
            let _ = writeln!(
                self.out,
                "{name}_sum{{{l}}} {}",
                number(b.sum.as_secs_f64())
            );
            let _ = writeln!(self.out, "{name}_count{{{l}}} {n}");
        }
    }
}

/// A sample value as Prometheus writes one: integers without a fraction.
fn number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// A label value, escaped as the text format wants: `\`, `"` and newline.
fn escape(v: &str) -> String {
    let mut s = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => s.push_str("\\\\"),
            '"' => s.push_str("\\\""),
            '\n' => s.push_str("\\n"),
            c => s.push(c),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_and_numbers_are_written_as_the_text_format_wants() {
        assert_eq!(escape("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
        assert_eq!(number(3.0), "3");
        assert_eq!(number(0.016384), "0.016384");
        assert_eq!(number(Duration::from_micros(1).as_secs_f64()), "0.000001");
    }

    #[test]
    fn servers_split_into_address_and_port() {
        assert_eq!(split_server("10.0.0.7:3307"), ("10.0.0.7", Some(3307)));
        assert_eq!(split_server("[::1]:3306"), ("::1", Some(3306)));
        assert_eq!(
            split_server("unix:/run/mysqld.sock"),
            ("unix:/run/mysqld.sock", None)
        );
    }
}
