//! The drill's verdicts, its final table, and the same report as JSON
//! (written by hand: the crate has no JSON dependency).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::Arc;
use std::time::Duration;

use crate::json::js;
use crate::workload::{fmt_d, lock, Bounds, Kind, Window};

/// A fault of the set that this run could not inject.
pub struct NotRun {
    pub label: String,
    pub key: String,
    pub reason: String,
    /// It should have run and could not be set up: the drill fails.
    pub failed: bool,
}

/// The read-back of every acknowledged write.
pub enum Verification {
    Done {
        acked: u64,
        found: u64,
        /// Missing ids, by the window they were acknowledged in.
        missing_by_window: HashMap<usize, u64>,
        missing_sample: Vec<u64>,
    },
    Skipped(String),
}

impl Verification {
    /// The read-backs of two phases as one (window indices are distinct).
    pub fn merge(self, other: Verification) -> Verification {
        match (self, other) {
            (
                Verification::Done {
                    acked,
                    found,
                    mut missing_by_window,
                    mut missing_sample,
                },
                Verification::Done {
                    acked: a2,
                    found: f2,
                    missing_by_window: m2,
                    missing_sample: s2,
                },
            ) => {
                missing_by_window.extend(m2);
                missing_sample.extend(s2);
                missing_sample.truncate(10);
                Verification::Done {
                    acked: acked + a2,
                    found: found + f2,
                    missing_by_window,
                    missing_sample,
                }
            }
            (Verification::Skipped(a), Verification::Skipped(b)) => {
                Verification::Skipped(format!("{a}; {b}"))
            }
            (Verification::Skipped(a), _) | (_, Verification::Skipped(a)) => {
                Verification::Skipped(a)
            }
        }
    }
}

pub struct Report {
    pub mode: &'static str,
    pub url: String,
    pub server_version: String,
    pub threads: u32,
    pub soak: Option<Duration>,
    pub seed: Option<u64>,
    /// The bounds of the single-server faults.
    pub bounds: Bounds,
    /// The bounds of incidents B and D (their pool has its own knobs).
    pub cluster_bounds: Option<Bounds>,
    pub windows: Vec<Arc<Window>>,
    pub not_run: Vec<NotRun>,
    pub verification: Verification,
    /// Pool invariant violations, over every pool of the drill.
    pub violations: u64,
    pub interrupted: bool,
    pub duration: Duration,
    /// The soak's run-wide figures and invariants (with --soak).
    pub soak_figures: Option<crate::soak::SoakFigures>,
    /// The workload per 100 ms, over every phase (with --html; else empty).
    pub timeline: Vec<crate::workload::Sample>,
}

/// One row of the table, evaluated.
pub(crate) struct Row {
    pub label: String,
    pub key: &'static str,
    pub detection: String,
    pub recovery: String,
    pub wait: String,
    pub errors: String,
    pub verdict: String,
    pub survived: bool,
    pub problems: Vec<String>,
}

impl Report {
    fn missing_in(&self, w: &Window) -> u64 {
        match &self.verification {
            Verification::Done {
                missing_by_window, ..
            } => missing_by_window.get(&w.index).copied().unwrap_or(0),
            Verification::Skipped(_) => 0,
        }
    }

    /// Why a window does not count as survived (empty: it does).
    fn problems(&self, w: &Window) -> Vec<String> {
        let b = &w.bounds;
        let mut p = Vec::new();
        if let Some(f) = lock(&w.failure).clone() {
            p.push(f);
        }
        let wait = w.longest_wait();
        if wait > b.wait {
            p.push(format!(
                "a get() waited {} (bound {})",
                fmt_d(wait),
                fmt_d(b.wait)
            ));
        }
        if w.kind == Kind::PrimaryPromotion {
            match (w.detection(), b.failover_detection) {
                (None, _) => p.push("writes never moved to the promoted replica".into()),
                (Some(d), Some(bound)) if d > bound => p.push(format!(
                    "writes moved to the promoted replica {} after the freeze (bound {})",
                    fmt_d(d),
                    fmt_d(bound)
                )),
                _ => {}
            }
        }
        if w.kind.has_recovery() {
            let bound = b.recovery_for(w.kind);
            match (w.fault_end(), w.recovery()) {
                (None, _) => p.push("the fault never ended (interrupted)".into()),
                (Some(_), None) => p.push(match w.kind {
                    Kind::IdleReplicas => "no successful read after the pause".into(),
                    Kind::PrimaryPromotion => "no successful write after the promotion".into(),
                    _ => "no successful operation after the fault".into(),
                }),
                (Some(_), Some(r)) if r > bound => p.push(format!(
                    "recovery took {} (bound {})",
                    fmt_d(r),
                    fmt_d(bound)
                )),
                _ => {}
            }
        }
        if w.kind == Kind::IdleReplicas && w.errors() > 0 {
            p.push(format!(
                "{} errors ({} of reads): none expected, every replica connection is validated",
                w.errors(),
                w.read_errors.load(SeqCst)
            ));
        }
        if w.kind == Kind::Baseline && w.errors() > 0 {
            p.push(format!("{} errors without any fault", w.errors()));
        }
        let missing = self.missing_in(w);
        if missing > 0 {
            p.push(format!("{missing} acknowledged writes missing"));
        }
        if w.crossed() > 0 {
            p.push(format!("{} crossed answers", w.crossed()));
        }
        if let Some(r) = lock(&w.race).as_ref() {
            if r.violations > 0 {
                p.push(format!("{} ownership violations", r.violations));
            }
            if r.pool_violations > 0 {
                p.push(format!("{} pool invariant violations", r.pool_violations));
            }
            if r.keepalives == 0 {
                p.push("keepalive never ran: the race was not exercised".into());
            }
        } else if w.kind == Kind::KeepaliveRace && lock(&w.failure).is_none() {
            p.push("the race did not run".into());
        }
        p
    }

    pub(crate) fn rows(&self) -> Vec<Row> {
        let mut rows = Vec::new();
        for w in &self.windows {
            let cut_short = w.interrupted.load(SeqCst);
            let problems = if cut_short {
                vec!["interrupted before the fault and its recovery were observed".to_string()]
            } else {
                self.problems(w)
            };
            let survived = problems.is_empty();
            let dash = "-".to_string();
            let detection = match w.kind {
                Kind::Baseline | Kind::KeepaliveRace => dash.clone(),
                _ => w.detection().map_or("none seen".into(), fmt_d),
            };
            let recovery = if w.kind.has_recovery() {
                w.recovery().map_or("never".into(), fmt_d)
            } else {
                dash.clone()
            };
            let verdict = if cut_short {
                "interrupted".to_string()
            } else if survived {
                if w.kind == Kind::Baseline {
                    "ok".to_string()
                } else {
                    "survived".to_string()
                }
            } else {
                format!("FAILED: {}", problems.join("; "))
            };
            rows.push(Row {
                label: w.label.clone(),
                key: w.kind.key(),
                detection,
                recovery,
                wait: fmt_d(w.longest_wait()),
                errors: w.errors().to_string(),
                verdict,
                survived,
                problems,
            });
        }
        rows
    }

    /// The soak's invariants, evaluated (empty without --soak).
    pub(crate) fn soak_invariants(&self) -> Vec<crate::soak::Invariant> {
        let Some(f) = &self.soak_figures else {
            return Vec::new();
        };
        let writes = match &self.verification {
            Verification::Done { acked, found, .. } => Some((*acked, *found)),
            Verification::Skipped(_) => None,
        };
        f.invariants(writes, self.crossed())
    }

    /// Every fault that ran was survived, and the global invariants hold.
    pub fn passed(&self) -> bool {
        let all_rows = self.rows().iter().all(|r| r.survived);
        let verified = match &self.verification {
            Verification::Done { acked, found, .. } => acked == found,
            Verification::Skipped(_) => false,
        };
        all_rows
            && verified
            && self.crossed() == 0
            && self.violations == 0
            && !self.not_run.iter().any(|n| n.failed)
            && !self.interrupted
            && self.soak_invariants().iter().all(|i| i.ok)
    }

    pub(crate) fn crossed(&self) -> u64 {
        self.windows.iter().map(|w| w.crossed()).sum()
    }

    pub(crate) fn faults_ran(&self) -> usize {
        self.windows
            .iter()
            .filter(|w| w.kind != Kind::Baseline)
            .count()
    }

    pub fn print(&self) {
        let rows = self.rows();
        let mut table: Vec<[String; 6]> = vec![[
            "fault".into(),
            "detection".into(),
            "recovery".into(),
            "longest get() wait".into(),
            "errors".into(),
            "verdict".into(),
        ]];
        for r in &rows {
            table.push([
                r.label.clone(),
                r.detection.clone(),
                r.recovery.clone(),
                r.wait.clone(),
                r.errors.clone(),
                r.verdict.clone(),
            ]);
        }
        for n in &self.not_run {
            table.push([
                n.label.clone(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                n.reason.clone(),
            ]);
        }
        let mut widths = [0usize; 6];
        for row in &table {
            for (i, c) in row.iter().enumerate() {
                widths[i] = widths[i].max(c.chars().count());
            }
        }
        for (i, row) in table.iter().enumerate() {
            let mut line = String::new();
            for (j, c) in row.iter().enumerate() {
                let pad = widths[j] - c.chars().count();
                if j == 5 {
                    line.push_str(c);
                } else if (1..=4).contains(&j) {
                    // Figures right-aligned.
                    let _ = write!(line, "{}{c}  ", " ".repeat(pad));
                } else {
                    let _ = write!(line, "{c}{}  ", " ".repeat(pad));
                }
            }
            println!("{}", line.trim_end());
            if i == 0 {
                let total: usize = widths.iter().sum::<usize>() + 2 * 5;
                println!("{}", "-".repeat(total));
            }
        }
        println!();
        println!(
            "detection: fault start to the first error the workload saw; recovery: fault end to \
             the first successful operation (bound {}); longest get() wait bound {}",
            fmt_d(self.bounds.recovery),
            fmt_d(self.bounds.wait)
        );
        if let Some(cb) = &self.cluster_bounds {
            println!(
                "B and D (their pool: connect_timeout {}, connection_timeout {}): longest get() wait \
                 bound {}; B: recovery is the first read after the pause (bound {}), and any error \
                 fails it; D: detection is the freeze to writes moving to the promoted replica (bound {}), \
                 recovery the freeze to the first successful write (bound {})",
                fmt_d(cb.connect_timeout),
                fmt_d(cb.connection_timeout),
                fmt_d(cb.wait),
                fmt_d(cb.recovery),
                cb.failover_detection.map_or("-".into(), fmt_d),
                fmt_d(cb.recovery_for(Kind::PrimaryPromotion))
            );
        }
        println!();
        for w in &self.windows {
            let mut parts: Vec<String> = lock(&w.notes).clone();
            if let Some(r) = lock(&w.race).as_ref() {
                parts.push(format!(
                    "{} queries on {} connections, {} validations ({} keepalive checks), {} ownership violations",
                    r.queries,
                    crate::race::CONNECTIONS,
                    r.validations,
                    r.keepalives,
                    r.violations + r.pool_violations
                ));
                if let Some(e) = &r.first_error {
                    parts.push(format!("race's first error: {e}"));
                }
            }
            if let Some(d) = stats_delta(w) {
                parts.push(d);
            }
            if let Some(e) = lock(&w.first_error).as_ref() {
                parts.push(format!("first error: {e}"));
            }
            if !parts.is_empty() {
                println!("{}:", w.label);
                for p in parts {
                    println!("    {p}");
                }
            }
        }
        println!();
        match &self.verification {
            Verification::Done {
                acked,
                found,
                missing_sample,
                ..
            } => {
                println!("acknowledged writes verified: {found} of {acked}");
                if found != acked {
                    println!(
                        "    missing ids (first {}): {missing_sample:?}",
                        missing_sample.len()
                    );
                }
            }
            Verification::Skipped(why) => println!("acknowledged writes not verified: {why}"),
        }
        println!("crossed answers: {}", self.crossed());
        println!("pool invariant violations: {}", self.violations);
        if let Some(f) = &self.soak_figures {
            println!();
            f.print(&self.soak_invariants());
            println!();
        }
        let ran = self.faults_ran();
        let survived = rows
            .iter()
            .filter(|r| r.survived && r.key != "baseline")
            .count();
        let not_run = self.not_run.iter().filter(|n| !n.failed).count();
        let setup_failed = self.not_run.len() - not_run;
        println!(
            "ran {} in {}",
            count(ran as u64, "fault", "faults"),
            fmt_d(self.duration)
        );
        if self.interrupted {
            println!("result: INTERRUPTED ({survived} of {ran} faults survived before Ctrl-C)");
        } else if self.passed() {
            println!(
                "result: PASSED: every fault that ran was survived ({survived} of {ran}; {not_run} not run)"
            );
        } else if setup_failed > 0 {
            println!(
                "result: FAILED ({survived} of {ran} faults survived; {setup_failed} could not be set up, see above)"
            );
        } else {
            println!(
                "result: FAILED ({survived} of {ran} faults survived; see the verdicts above)"
            );
        }
    }

    pub fn to_json(&self) -> String {
        let rows = self.rows();
        let mut o = String::from("{\n");
        let _ = writeln!(o, "  \"mode\": {},", js(self.mode));
        let _ = writeln!(o, "  \"url\": {},", js(&self.url));
        let _ = writeln!(o, "  \"server_version\": {},", js(&self.server_version));
        let _ = writeln!(o, "  \"threads\": {},", self.threads);
        let _ = writeln!(
            o,
            "  \"soak_s\": {},",
            self.soak.map_or("null".into(), |d| num(d.as_secs_f64()))
        );
        let _ = writeln!(
            o,
            "  \"seed\": {},",
            self.seed.map_or("null".into(), |s| s.to_string())
        );
        let _ = writeln!(o, "  \"duration_ms\": {},", ms(self.duration));
        let b = &self.bounds;
        let _ = writeln!(
            o,
            "  \"bounds\": {{\"connection_timeout_ms\": {}, \"connect_timeout_ms\": {}, \"longest_get_wait_ms\": {}, \"recovery_ms\": {}}},",
            ms(b.connection_timeout),
            ms(b.connect_timeout),
            ms(b.wait),
            ms(b.recovery)
        );
        if let Some(cb) = &self.cluster_bounds {
            let _ = writeln!(o, "  \"cluster_bounds\": {},", bounds_json(cb));
        }
        o.push_str("  \"faults\": [\n");
        let mut items = Vec::new();
        for (w, r) in self.windows.iter().zip(&rows) {
            let mut f = String::from("    {");
            let _ = write!(
                f,
                "\"name\": {}, \"kind\": {}, \"ran\": true",
                js(&r.label),
                js(r.key)
            );
            let _ = write!(
                f,
                ", \"start_ms\": {}",
                ms(Duration::from_nanos(w.start_ns))
            );
            let _ = write!(
                f,
                ", \"detection_ms\": {}",
                opt_ms(w.detection().filter(|_| w.kind != Kind::Baseline))
            );
            let _ = write!(
                f,
                ", \"recovery_ms\": {}",
                opt_ms(w.recovery().filter(|_| w.kind.has_recovery()))
            );
            let _ = write!(f, ", \"longest_get_wait_ms\": {}", ms(w.longest_wait()));
            let _ = write!(f, ", \"bounds\": {}", bounds_json(&w.bounds));
            let _ = write!(f, ", \"errors\": {}", w.errors());
            let _ = write!(f, ", \"read_errors\": {}", w.read_errors.load(SeqCst));
            let _ = write!(f, ", \"ops\": {}", w.ops.load(SeqCst));
            let _ = write!(f, ", \"reads\": {}", w.reads.load(SeqCst));
            if w.kind == Kind::PrimaryPromotion {
                let _ = write!(
                    f,
                    ", \"writer_changed_ms\": {}",
                    opt_ms(w.since_start(w.writer_changed_ns.load(SeqCst)))
                );
            }
            let _ = write!(f, ", \"crossed_answers\": {}", w.crossed());
            let _ = write!(f, ", \"missing_writes\": {}", self.missing_in(w));
            let _ = write!(
                f,
                ", \"first_error\": {}",
                lock(&w.first_error).as_deref().map_or("null".into(), js)
            );
            let notes: Vec<String> = lock(&w.notes).iter().map(|n| js(n)).collect();
            let _ = write!(f, ", \"notes\": [{}]", notes.join(", "));
            if let Some(rr) = lock(&w.race).as_ref() {
                let _ = write!(
                    f,
                    ", \"race\": {{\"queries\": {}, \"validations\": {}, \"keepalives\": {}, \"ownership_violations\": {}, \"pool_violations\": {}, \"crossed_answers\": {}, \"errors\": {}}}",
                    rr.queries, rr.validations, rr.keepalives, rr.violations, rr.pool_violations, rr.crossed, rr.errors
                );
            }
            if let (Some(a), s) = (lock(&w.stats_at_end).clone(), &w.stats_at_start) {
                let _ = write!(
                    f,
                    ", \"pool\": {{\"created\": {}, \"connect_failures\": {}, \"abandoned_connects\": {}, \"validation_failures\": {}, \"closed_broken\": {}, \"acquire_timeouts\": {}}}",
                    a.created - s.created,
                    a.connect_failures - s.connect_failures,
                    a.abandoned_connects - s.abandoned_connects,
                    a.validation_failures - s.validation_failures,
                    a.closed_broken - s.closed_broken,
                    a.acquire_timeouts - s.acquire_timeouts
                );
            }
            let _ = write!(
                f,
                ", \"survived\": {}, \"verdict\": {}, \"problems\": [{}]}}",
                r.survived,
                js(&r.verdict),
                r.problems
                    .iter()
                    .map(|p| js(p))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            items.push(f);
        }
        for n in &self.not_run {
            items.push(format!(
                "    {{\"name\": {}, \"kind\": {}, \"ran\": false, \"survived\": {}, \"verdict\": {}}}",
                js(&n.label),
                js(&n.key),
                if n.failed { "false" } else { "null" },
                js(&n.reason)
            ));
        }
        o.push_str(&items.join(",\n"));
        o.push_str("\n  ],\n");
        match &self.verification {
            Verification::Done {
                acked,
                found,
                missing_sample,
                ..
            } => {
                let _ = writeln!(
                    o,
                    "  \"acknowledged_writes\": {acked},\n  \"verified_writes\": {found},\n  \"missing_writes\": {},\n  \"missing_sample\": [{}],",
                    acked - found,
                    missing_sample.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
                );
            }
            Verification::Skipped(why) => {
                let _ = writeln!(
                    o,
                    "  \"acknowledged_writes\": null,\n  \"verified_writes\": null,\n  \"verification_skipped\": {},",
                    js(why)
                );
            }
        }
        let _ = writeln!(o, "  \"crossed_answers\": {},", self.crossed());
        let _ = writeln!(o, "  \"pool_invariant_violations\": {},", self.violations);
        if let Some(f) = &self.soak_figures {
            let _ = writeln!(o, "  \"soak\": {},", f.to_json(&self.soak_invariants()));
        }
        let _ = writeln!(o, "  \"interrupted\": {},", self.interrupted);
        let _ = writeln!(o, "  \"passed\": {}", self.passed());
        o.push_str("}\n");
        o
    }
}

/// A window's bounds as a JSON object.
fn bounds_json(b: &Bounds) -> String {
    format!(
        "{{\"connection_timeout_ms\": {}, \"connect_timeout_ms\": {}, \"longest_get_wait_ms\": {}, \"recovery_ms\": {}, \"failover_detection_ms\": {}, \"failover_recovery_ms\": {}}}",
        ms(b.connection_timeout),
        ms(b.connect_timeout),
        ms(b.wait),
        ms(b.recovery),
        opt_ms(b.failover_detection),
        opt_ms(b.failover_detection.map(|_| b.recovery_for(Kind::PrimaryPromotion)))
    )
}

/// What the pool did during a window, in a few words.
pub(crate) fn stats_delta(w: &Window) -> Option<String> {
    let a = lock(&w.stats_at_end).clone()?;
    let s = &w.stats_at_start;
    let created = a.created - s.created;
    let failed = a.connect_failures - s.connect_failures;
    let abandoned = a.abandoned_connects - s.abandoned_connects;
    let invalid = a.validation_failures - s.validation_failures;
    let broken = a.closed_broken - s.closed_broken;
    let timeouts = a.acquire_timeouts - s.acquire_timeouts;
    if created + failed + abandoned + invalid + broken + timeouts == 0 {
        return None;
    }
    Some(format!(
        "pool: {} made, {} failed ({abandoned} abandoned), {} failed, {} closed as broken, {}",
        count(created, "connection", "connections"),
        count(failed, "connect", "connects"),
        count(invalid, "validation", "validations"),
        broken,
        count(timeouts, "get() timeout", "get() timeouts"),
    ))
}

/// `1 fault`, `3 faults`.
fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn ms(d: Duration) -> String {
    num(d.as_secs_f64() * 1e3)
}

fn opt_ms(d: Option<Duration>) -> String {
    d.map_or("null".into(), ms)
}

fn num(x: f64) -> String {
    let r = (x * 1000.0).round() / 1000.0;
    if r.is_finite() {
        format!("{r}")
    } else {
        "null".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_read_well() {
        assert_eq!(count(1, "fault", "faults"), "1 fault");
        assert_eq!(count(0, "fault", "faults"), "0 faults");
    }
}
