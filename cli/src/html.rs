//! `staunch drill --html PATH`: the drill's report as one self-contained
//! page (inline CSS and SVG, written by hand; no script, font or network):
//! the results table, the same figures as the text and JSON reports, and per
//! fault a timeline of the workload (per 100 ms: throughput, `get()` wait
//! p50/p99, errors) with the moments of the fault, of its end and of the
//! recovery marked.
//!
//! Every text that comes from outside (errors, notes, labels, the redacted
//! URL) goes through [`esc`].

use std::fmt::Write as _;
use std::sync::atomic::Ordering::SeqCst;
use std::time::Duration;

use crate::report::{Report, Verification};
use crate::workload::{fmt_d, lock, Kind, Sample, Window, BUCKET, NEVER};

/// Text for HTML, in elements and in attribute values.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// Normal load shown before each fault.
pub const LEAD: Duration = Duration::from_secs(2);

// The chart's geometry (SVG user units).
const WIDTH: f64 = 760.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 16.0;
const PLOT_W: f64 = WIDTH - LEFT - RIGHT;
/// Room above the first panel for the markers' labels (three rows).
const TOP: f64 = 42.0;
const PANEL_H: f64 = 80.0;
const PANEL_GAP: f64 = 26.0;
const HEIGHT: f64 = TOP + 3.0 * PANEL_H + 2.0 * PANEL_GAP + 30.0;
/// The get() wait panel's floor (log scale).
const WAIT_FLOOR_US: f64 = 10.0;

const STYLE: &str = "\
body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px;color:#1d2330;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px}h3{font-size:15px;margin:0 0 6px}
.meta{color:#555;margin:0 0 16px}code{font:12px ui-monospace,monospace;background:#f3f4f6;padding:1px 4px}
table{border-collapse:collapse;margin:8px 0}th,td{padding:3px 10px;border-bottom:1px solid #e3e5ea;text-align:left;vertical-align:top}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}th{background:#f6f7f9}
.ok{color:#17803d}.fail{color:#c0262d;font-weight:600}.skip{color:#777}
.fault{display:flex;flex-wrap:wrap;gap:8px 24px;border-top:1px solid #e3e5ea;padding:14px 0}
.fault svg{flex:0 0 auto;max-width:100%;height:auto}.side{flex:1 1 280px;min-width:260px}
.side dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 10px;margin:6px 0}.side dt{color:#555}.side dd{margin:0}
.side ul{margin:6px 0;padding-left:18px;color:#333}
.legend span{display:inline-block;margin-right:14px}.sw{display:inline-block;width:14px;height:3px;vertical-align:middle;margin-right:4px}
svg text{font:11px system-ui,sans-serif;fill:#555}svg .frame{fill:none;stroke:#c9ccd3}svg .grid{stroke:#eceef2}
svg .ops{fill:none;stroke:#2f6fdb;stroke-width:1.5}svg .p50{fill:none;stroke:#0f9d8a;stroke-width:1.5}
svg .p99{fill:none;stroke:#e07b00;stroke-width:1.5}svg .p50.dot{fill:#0f9d8a;stroke:none}svg .p99.dot{fill:#e07b00;stroke:none}svg .err{fill:#c0262d}svg .bound{stroke:#c0262d;stroke-dasharray:4 3}
svg .mk{stroke-width:1.5}svg .mk.fault{stroke:#c0262d}svg .mk.end{stroke:#7a7f8c;stroke-dasharray:3 3}
svg .mk.recovery{stroke:#17803d}svg .mk.moved{stroke:#7b3fc4;stroke-dasharray:5 2}
";

/// The page.
pub fn page(r: &Report) -> String {
    let rows = r.rows();
    let verdict = if r.interrupted {
        ("INTERRUPTED", "skip")
    } else if r.passed() {
        ("PASSED", "ok")
    } else {
        ("FAILED", "fail")
    };
    let mut o = String::new();
    o.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n");
    o.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n");
    let _ = writeln!(o, "<title>staunch drill: {}</title>", verdict.0);
    let _ = writeln!(o, "<style>\n{STYLE}</style>\n</head>\n<body>");
    let _ = writeln!(
        o,
        "<h1>staunch drill: <span class=\"{}\">{}</span></h1>",
        verdict.1, verdict.0
    );
    let mut meta = format!(
        "{} faults in {}; {} worker threads; pool <code>{}</code>",
        r.faults_ran(),
        fmt_d(r.duration),
        r.threads,
        esc(&r.url)
    );
    if !r.server_version.is_empty() {
        let _ = write!(meta, "; MariaDB {}", esc(&r.server_version));
    }
    if let (Some(d), Some(seed)) = (r.soak, r.seed) {
        let _ = write!(
            meta,
            "; soak {}, seed {seed}",
            staunch::duration::fmt_duration(d)
        );
    }
    let _ = writeln!(o, "<p class=\"meta\">{meta}</p>");

    // The results table: the text report's.
    o.push_str("<h2>Results</h2>\n<table>\n<thead><tr><th>fault</th><th>detection</th><th>recovery</th><th>longest get() wait</th><th>errors</th><th>verdict</th></tr></thead>\n<tbody>\n");
    for row in &rows {
        let class = if row.survived { "ok" } else { "fail" };
        let _ = writeln!(
            o,
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"{class}\">{}</td></tr>",
            esc(&row.label),
            esc(&row.detection),
            esc(&row.recovery),
            esc(&row.wait),
            esc(&row.errors),
            esc(&row.verdict)
        );
    }
    for n in &r.not_run {
        let class = if n.failed { "fail" } else { "skip" };
        let _ = writeln!(
            o,
            "<tr><td>{}</td><td class=\"n\">-</td><td class=\"n\">-</td><td class=\"n\">-</td><td class=\"n\">-</td><td class=\"{class}\">{}</td></tr>",
            esc(&n.label),
            esc(&n.reason)
        );
    }
    o.push_str("</tbody>\n</table>\n");
    let _ = writeln!(
        o,
        "<p>detection: fault start to the first error the workload saw; recovery: fault end to the first \
         successful operation (bound {}); longest get() wait bound {}.</p>",
        fmt_d(r.bounds.recovery),
        fmt_d(r.bounds.wait)
    );
    if let Some(cb) = &r.cluster_bounds {
        let _ = writeln!(
            o,
            "<p>B and D (their pool): longest get() wait bound {}; B: recovery is the first read after \
             the pause (bound {}), any error fails it; D: detection is the freeze to writes moving to the \
             promoted replica (bound {}), recovery the freeze to the first successful write (bound {}).</p>",
            fmt_d(cb.wait),
            fmt_d(cb.recovery),
            cb.failover_detection.map_or("-".into(), fmt_d),
            fmt_d(cb.recovery_for(Kind::PrimaryPromotion))
        );
    }
    o.push_str("<ul>\n");
    match &r.verification {
        Verification::Done {
            acked,
            found,
            missing_sample,
            ..
        } => {
            let class = if found == acked { "ok" } else { "fail" };
            let _ = write!(
                o,
                "<li class=\"{class}\">acknowledged writes verified: {found} of {acked}"
            );
            if found != acked {
                let _ = write!(
                    o,
                    " (missing ids, first {}: {missing_sample:?})",
                    missing_sample.len()
                );
            }
            o.push_str("</li>\n");
        }
        Verification::Skipped(why) => {
            let _ = writeln!(
                o,
                "<li class=\"fail\">acknowledged writes not verified: {}</li>",
                esc(why)
            );
        }
    }
    let _ = writeln!(o, "<li>crossed answers: {}</li>", r.crossed());
    let _ = writeln!(o, "<li>pool invariant violations: {}</li>", r.violations);
    o.push_str("</ul>\n");
    if let Some(f) = &r.soak_figures {
        soak_section(&mut o, f, &r.soak_invariants());
    }

    // The timelines.
    o.push_str("<h2>Timelines</h2>\n");
    o.push_str(&legend(
        &format!(
            "Per {} of the drill's workload, from {} before each fault to the next one:",
            fmt_d(BUCKET),
            fmt_d(LEAD)
        ),
        "get() wait",
        true,
        &["fault over", "D: writes moved", "recovery (first success)"],
    ));
    if r.timeline.is_empty() {
        o.push_str("<p class=\"skip\">No timeline was sampled.</p>\n");
    }
    for (w, row) in r.windows.iter().zip(&rows) {
        if w.kind == Kind::Baseline {
            continue;
        }
        let class = if row.survived { "ok" } else { "fail" };
        let _ = writeln!(o, "<section class=\"fault\" id=\"fault-{}\">", w.index);
        o.push_str(&chart(w, &r.timeline));
        o.push_str("<div class=\"side\">\n");
        let _ = writeln!(o, "<h3>{}</h3>", esc(&w.label));
        let _ = writeln!(o, "<p class=\"{class}\">{}</p>", esc(&row.verdict));
        let _ = writeln!(
            o,
            "<dl><dt>detection</dt><dd>{}</dd><dt>recovery</dt><dd>{}</dd><dt>longest get() wait</dt><dd>{}</dd><dt>errors</dt><dd>{}</dd><dt>operations</dt><dd>{}</dd></dl>",
            esc(&row.detection),
            esc(&row.recovery),
            esc(&row.wait),
            esc(&row.errors),
            w.ops.load(SeqCst)
        );
        let notes = window_notes(w);
        if !notes.is_empty() {
            o.push_str("<ul>\n");
            for n in notes {
                let _ = writeln!(o, "<li>{}</li>", esc(&n));
            }
            o.push_str("</ul>\n");
        }
        o.push_str("</div>\n</section>\n");
    }
    o.push_str("</body>\n</html>\n");
    o
}

/// The charts' key: `intro`, the series (the wait panel named `wait`),
/// and the markers after the fault (end, moved, recovery).
fn legend(intro: &str, wait: &str, bound: bool, marks: &[&str; 3]) -> String {
    let item = |color: &str, text: &str| {
        format!(
            "<span><i class=\"sw\" style=\"background:{color}\"></i>{}</span>",
            esc(text)
        )
    };
    format!(
        "<p class=\"legend\">{} {}{}{}{}. Markers: {}{}{}{}</p>\n",
        esc(intro),
        item("#2f6fdb", "successful operations per second"),
        item("#0f9d8a", &format!("{wait} p50")),
        item(
            "#e07b00",
            if bound {
                "p99 (log scale; dashed: the bound)"
            } else {
                "p99 (log scale)"
            }
        ),
        item("#c0262d", "errors"),
        item("#c0262d", "fault"),
        item("#7a7f8c", marks[0]),
        item("#7b3fc4", marks[1]),
        item("#17803d", marks[2]),
    )
}

/// One fault of a part with a report of its own (the Galera part): its
/// chart beside its verdict and figures.
pub struct Section {
    pub title: String,
    pub verdict: String,
    pub ok: bool,
    pub svg: String,
    pub facts: Vec<(String, String)>,
}

/// A page for a part with a report of its own: a table (`head`, rows of
/// cells and whether the row passed), lines under it, and a section per
/// fault.
#[allow(clippy::too_many_arguments)]
pub fn plain_page(
    title: &str,
    passed: bool,
    meta: &str,
    head: &[&str],
    rows: &[(Vec<String>, bool)],
    lines: &[String],
    (wait, marks): (&str, &[&str; 3]),
    sections: &[Section],
) -> String {
    let (verdict, class) = if passed {
        ("PASSED", "ok")
    } else {
        ("FAILED", "fail")
    };
    let mut o = String::new();
    o.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n");
    o.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n");
    let _ = writeln!(o, "<title>{}: {verdict}</title>", esc(title));
    let _ = writeln!(o, "<style>\n{STYLE}</style>\n</head>\n<body>");
    let _ = writeln!(
        o,
        "<h1>{}: <span class=\"{class}\">{verdict}</span></h1>\n<p class=\"meta\">{}</p>",
        esc(title),
        esc(meta)
    );
    o.push_str("<h2>Results</h2>\n<table>\n<thead><tr>");
    for h in head {
        let _ = write!(o, "<th>{}</th>", esc(h));
    }
    o.push_str("</tr></thead>\n<tbody>\n");
    for (cells, ok) in rows {
        o.push_str("<tr>");
        for (i, c) in cells.iter().enumerate() {
            let class = match (i, i + 1 == cells.len()) {
                (0, _) => "",
                (_, true) if *ok => " class=\"ok\"",
                (_, true) => " class=\"fail\"",
                _ => " class=\"n\"",
            };
            let _ = write!(o, "<td{class}>{}</td>", esc(c));
        }
        o.push_str("</tr>\n");
    }
    o.push_str("</tbody>\n</table>\n");
    for l in lines {
        let _ = writeln!(o, "<p>{}</p>", esc(l));
    }
    o.push_str("<h2>Timelines</h2>\n");
    o.push_str(&legend(
        &format!(
            "Per {} of the operations, from up to {} before each fault:",
            fmt_d(BUCKET),
            fmt_d(LEAD)
        ),
        wait,
        false,
        marks,
    ));
    for s in sections {
        o.push_str("<section class=\"fault\">\n");
        o.push_str(&s.svg);
        let _ = writeln!(
            o,
            "<div class=\"side\">\n<h3>{}</h3>\n<p class=\"{}\">{}</p>\n<dl>",
            esc(&s.title),
            if s.ok { "ok" } else { "fail" },
            esc(&s.verdict)
        );
        for (k, v) in &s.facts {
            let _ = write!(o, "<dt>{}</dt><dd>{}</dd>", esc(k), esc(v));
        }
        o.push_str("</dl>\n</div>\n</section>\n");
    }
    o.push_str("</body>\n</html>\n");
    o
}

/// What the text report prints under the table for a window.
fn window_notes(w: &Window) -> Vec<String> {
    let mut parts: Vec<String> = lock(&w.notes).clone();
    if let Some(r) = lock(&w.race).as_ref() {
        parts.push(format!(
            "{} queries on {} connections, {} validations ({} keepalive checks), {} ownership violations \
             (the race's own borrowers are not in the timeline)",
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
    if let Some(d) = crate::report::stats_delta(w) {
        parts.push(d);
    }
    if let Some(e) = lock(&w.first_error).as_ref() {
        parts.push(format!("first error: {e}"));
    }
    parts
}

fn soak_section(o: &mut String, f: &crate::soak::SoakFigures, inv: &[crate::soak::Invariant]) {
    let _ = writeln!(
        o,
        "<h2>Soak</h2>\n<p>seed {}, {} faults run of {} planned, {} operations ({} reads, {} acknowledged writes)</p>",
        f.seed,
        f.faults_run,
        f.schedule.len(),
        f.ops,
        f.reads,
        f.acked
    );
    let list = |m: &mut dyn Iterator<Item = (String, u64)>| {
        let v: Vec<String> = m.map(|(k, n)| format!("{} {n}", esc(&k))).collect();
        if v.is_empty() {
            "none".to_string()
        } else {
            v.join(", ")
        }
    };
    let _ = writeln!(
        o,
        "<p>faults by kind: {}<br/>errors by kind: {}</p>",
        list(&mut f.faults_by_kind.iter().map(|(k, n)| (k.to_string(), *n))),
        list(&mut f.errors_by_kind.iter().map(|(k, n)| (k.clone(), *n)))
    );
    o.push_str("<table>\n<thead><tr><th></th><th>invariant</th><th>figure</th><th>bound</th></tr></thead>\n<tbody>\n");
    for i in inv {
        let _ = writeln!(
            o,
            "<tr><td class=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            if i.ok { "ok" } else { "fail" },
            if i.ok { "ok" } else { "FAIL" },
            esc(i.name),
            esc(&i.figure),
            esc(&i.bound)
        );
    }
    o.push_str("</tbody>\n</table>\n");
}

/// What one fault's chart shows besides the samples.
pub struct Spec {
    /// For the chart's accessible name.
    pub label: String,
    /// The fault (drill clock, ns): the time axis counts from it.
    pub start_ns: u64,
    /// Where the axis ends ([`NEVER`]: at the last sample).
    pub end_ns: u64,
    /// The wait panel's name, and the bound drawn dashed across it.
    pub wait_name: &'static str,
    pub wait_bound: Option<Duration>,
    /// Vertical markers: CSS class (`fault`, `end`, `recovery`, `moved`),
    /// time (drill clock, ns), label.
    pub marks: Vec<(&'static str, u64, String)>,
}

impl Spec {
    /// A window of the drill: the fault, its end, D's writer change, the
    /// recovery.
    pub fn of(w: &Window) -> Spec {
        let fault_end = w.fault_end_ns.load(SeqCst);
        let recovered = w.first_ok_after_end_ns.load(SeqCst);
        let moved = w.writer_changed_ns.load(SeqCst);
        let mut marks = vec![("fault", w.start_ns, "fault".to_string())];
        if fault_end != NEVER && fault_end > w.start_ns + BUCKET.as_nanos() as u64 / 2 {
            marks.push(("end", fault_end, "over".into()));
        }
        if w.kind == Kind::PrimaryPromotion && moved != NEVER {
            marks.push(("moved", moved, "moved".into()));
        }
        if w.kind.has_recovery() && recovered != NEVER {
            marks.push(("recovery", recovered, "recovered".into()));
        }
        Spec {
            label: w.label.clone(),
            start_ns: w.start_ns,
            end_ns: w.end_ns.load(SeqCst),
            wait_name: "get() wait",
            wait_bound: Some(w.bounds.wait),
            marks,
        }
    }
}

/// The time axis of one fault's chart: drill-clock nanoseconds to x.
#[derive(Clone, Copy, Debug)]
pub struct Axis {
    pub from_ns: u64,
    pub to_ns: u64,
}

impl Axis {
    /// From `LEAD` before the fault (not before the samples begin) to the
    /// window's end (or the last sample).
    pub fn of(w: &Spec, samples: &[Sample]) -> Axis {
        let first = samples
            .iter()
            .map(|s| s.start().as_nanos() as u64)
            .filter(|&t| t <= w.start_ns)
            .min()
            .unwrap_or(w.start_ns);
        let from_ns = w.start_ns.saturating_sub(LEAD.as_nanos() as u64).max(first);
        let end = w.end_ns;
        let to_ns = if end != NEVER {
            end
        } else {
            samples
                .iter()
                .map(|s| (s.start() + BUCKET).as_nanos() as u64)
                .max()
                .unwrap_or(w.start_ns)
        };
        Axis {
            from_ns,
            to_ns: to_ns.max(from_ns + BUCKET.as_nanos() as u64),
        }
    }
    pub fn x(&self, ns: u64) -> f64 {
        let span = (self.to_ns - self.from_ns) as f64;
        let ns = ns.clamp(self.from_ns, self.to_ns);
        LEFT + (ns - self.from_ns) as f64 / span * PLOT_W
    }
    fn contains(&self, s: &Sample) -> bool {
        let t = s.start().as_nanos() as u64;
        t >= self.from_ns && t < self.to_ns
    }
}

/// A number for an SVG attribute.
fn n(x: f64) -> String {
    format!("{x:.1}")
}

/// A round top for a linear scale at or above `v` (1, 2, 5 × 10^k).
fn nice(v: f64) -> f64 {
    if v <= 1.0 {
        return 1.0;
    }
    let p = 10f64.powf(v.log10().floor());
    for m in [1.0, 2.0, 5.0, 10.0] {
        if m * p >= v {
            return m * p;
        }
    }
    10.0 * p
}

/// One fault's chart: three panels over the same time axis, and the
/// markers across them.
pub fn chart(w: &Window, samples: &[Sample]) -> String {
    draw(&Spec::of(w), samples)
}

/// The chart of `w` over `samples`.
pub fn draw(w: &Spec, samples: &[Sample]) -> String {
    let ax = Axis::of(w, samples);
    let ss: Vec<&Sample> = samples.iter().filter(|s| ax.contains(s)).collect();
    let per_s = 1.0 / BUCKET.as_secs_f64();
    let mid = |s: &Sample| ax.x((s.start() + BUCKET / 2).as_nanos() as u64);
    let panel_y = |i: usize| TOP + i as f64 * (PANEL_H + PANEL_GAP);
    let mut o = String::new();
    let _ = writeln!(
        o,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"timeline of {}\">",
        WIDTH,
        HEIGHT,
        WIDTH,
        HEIGHT,
        esc(&w.label)
    );

    // Panel 1: successful operations per second.
    let ops_top = nice(ss.iter().map(|s| s.ops as f64 * per_s).fold(0.0, f64::max));
    let y0 = panel_y(0);
    frame(&mut o, y0, "ops/s", &format!("{ops_top:.0}"), "0");
    if !ss.is_empty() {
        let pts: Vec<String> = ss
            .iter()
            .map(|s| {
                let y = y0 + PANEL_H - s.ops as f64 * per_s / ops_top * PANEL_H;
                format!("{},{}", n(mid(s)), n(y))
            })
            .collect();
        let _ = writeln!(o, "<polyline class=\"ops\" points=\"{}\"/>", pts.join(" "));
    }

    // Panel 2: get() wait p50 and p99, log scale, with the bound.
    let y1 = panel_y(1);
    let bound_us = w.wait_bound.map(|b| b.as_micros() as f64);
    let max_us = ss
        .iter()
        .map(|s| s.p99_us as f64)
        .fold(bound_us.unwrap_or(0.0), f64::max)
        .max(WAIT_FLOOR_US * 10.0);
    let top_us = 10f64.powf(max_us.log10().ceil());
    let wy = |us: f64| {
        let f = (us.max(WAIT_FLOOR_US).log10() - WAIT_FLOOR_US.log10())
            / (top_us.log10() - WAIT_FLOOR_US.log10());
        y1 + PANEL_H - f * PANEL_H
    };
    frame(
        &mut o,
        y1,
        w.wait_name,
        &fmt_d(Duration::from_micros(top_us as u64)),
        "≤10µs",
    );
    let mut decade = WAIT_FLOOR_US * 10.0;
    while decade < top_us {
        let _ = writeln!(
            o,
            "<line class=\"grid\" x1=\"{}\" x2=\"{}\" y1=\"{y}\" y2=\"{y}\"/><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            n(LEFT),
            n(LEFT + PLOT_W),
            n(LEFT - 4.0),
            n(wy(decade) + 4.0),
            fmt_d(Duration::from_micros(decade as u64)),
            y = n(wy(decade))
        );
        decade *= 10.0;
    }
    if let Some(b) = bound_us {
        let _ = writeln!(
            o,
            "<line class=\"bound\" x1=\"{}\" x2=\"{}\" y1=\"{y}\" y2=\"{y}\"/>",
            n(LEFT),
            n(LEFT + PLOT_W),
            y = n(wy(b))
        );
    }
    for (class, pick) in [
        ("p50", (|s: &Sample| s.p50_us) as fn(&Sample) -> u32),
        ("p99", |s: &Sample| s.p99_us),
    ] {
        // A bucket without a get() breaks the line; a lone bucket is a dot.
        let mut runs: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
        for s in &ss {
            if s.waits == 0 {
                runs.push(Vec::new());
            } else if let Some(run) = runs.last_mut() {
                run.push((mid(s), wy(pick(s) as f64)));
            }
        }
        let mut d = String::new();
        for run in runs.iter().filter(|r| r.len() > 1) {
            for (i, (x, y)) in run.iter().enumerate() {
                let _ = write!(d, "{}{},{} ", if i == 0 { "M" } else { "L" }, n(*x), n(*y));
            }
        }
        if !d.is_empty() {
            let _ = writeln!(o, "<path class=\"{class}\" d=\"{}\"/>", d.trim_end());
        }
        for run in runs.iter().filter(|r| r.len() == 1) {
            let _ = writeln!(
                o,
                "<circle class=\"{class} dot\" cx=\"{}\" cy=\"{}\" r=\"2\"/>",
                n(run[0].0),
                n(run[0].1)
            );
        }
    }

    // Panel 3: errors per bucket.
    let y2 = panel_y(2);
    let err_top = nice(ss.iter().map(|s| s.errors as f64).fold(0.0, f64::max));
    frame(
        &mut o,
        y2,
        &format!("errors/{}", fmt_d(BUCKET)),
        &format!("{err_top:.0}"),
        "0",
    );
    for s in ss.iter().filter(|s| s.errors > 0) {
        let x0 = ax.x(s.start().as_nanos() as u64);
        let x1 = ax.x((s.start() + BUCKET).as_nanos() as u64);
        let h = s.errors as f64 / err_top * PANEL_H;
        let _ = writeln!(
            o,
            "<rect class=\"err\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>",
            n(x0),
            n(y2 + PANEL_H - h),
            n((x1 - x0 - 0.5).max(0.5)),
            n(h)
        );
    }

    // The time axis: seconds from the fault.
    let ybase = y2 + PANEL_H;
    let span_s = (ax.to_ns - ax.from_ns) as f64 / 1e9;
    let step = nice(span_s / 8.0).max(1.0);
    let mut t = -((w.start_ns - ax.from_ns) as f64 / 1e9 / step).floor() * step + 0.0;
    while t <= ax.to_ns.saturating_sub(w.start_ns) as f64 / 1e9 + 1e-9 {
        let ns = (w.start_ns as f64 + t * 1e9).max(0.0) as u64;
        if ns >= ax.from_ns {
            let _ = writeln!(
                o,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}{t:.0}s</text>",
                n(ax.x(ns)),
                n(ybase + 16.0),
                if t > 0.0 { "+" } else { "" }
            );
        }
        t += step;
    }
    let _ = writeln!(
        o,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">time from the fault</text>",
        n(LEFT + PLOT_W),
        n(ybase + 28.0)
    );

    // The markers, across the three panels.
    let mut last_label_x = f64::NEG_INFINITY;
    let mut row = 0;
    for (class, ns, label) in &w.marks {
        let (ns, label) = (*ns, esc(label));
        let x = ax.x(ns);
        let _ = writeln!(
            o,
            "<line class=\"mk {class}\" x1=\"{x}\" x2=\"{x}\" y1=\"{}\" y2=\"{}\" data-ms=\"{}\"/>",
            n(TOP - 4.0),
            n(ybase),
            (ns as f64 / 1e6).round(),
            x = n(x)
        );
        // Labels of markers close together go on up to three rows.
        row = if x - last_label_x < 70.0 {
            (row + 1) % 3
        } else {
            0
        };
        last_label_x = x;
        let _ = writeln!(
            o,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{label}</text>",
            n(x),
            n(TOP - 8.0 - 11.0 * row as f64)
        );
    }
    o.push_str("</svg>\n");
    o
}

/// A panel's frame, its name and the labels of its scale.
fn frame(o: &mut String, y: f64, name: &str, top: &str, bottom: &str) {
    let _ = writeln!(
        o,
        "<rect class=\"frame\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>",
        n(LEFT),
        n(y),
        n(PLOT_W),
        n(PANEL_H)
    );
    let _ = writeln!(
        o,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text><text x=\"{}\" y=\"{}\">{}</text>",
        n(LEFT - 4.0),
        n(y + 10.0),
        esc(top),
        n(LEFT - 4.0),
        n(y + PANEL_H),
        esc(bottom),
        n(LEFT + 4.0),
        n(y + 12.0),
        esc(name)
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::NotRun;
    use crate::workload::{Bounds, Window};
    use std::collections::HashMap;
    use std::sync::Arc;

    const MS: u64 = 1_000_000;

    fn bounds() -> Bounds {
        Bounds {
            connection_timeout: Duration::from_secs(2),
            connect_timeout: Duration::from_secs(1),
            wait: Duration::from_millis(2500),
            recovery: Duration::from_secs(3),
            failover_detection: None,
        }
    }

    fn window(index: usize, kind: Kind, label: &str, start_ms: u64, end_ms: u64) -> Window {
        let w = Window::new(
            index,
            kind,
            label,
            start_ms * MS,
            staunch::Stats::default(),
            bounds(),
        );
        w.end_ns.store(end_ms * MS, SeqCst);
        w
    }

    /// A report as a drill of a baseline (0-5 s) and two faults would give:
    /// a KILL at 5 s (over at once, recovered at 5.3 s), a black hole at
    /// 13 s (over at 16 s, recovered at 16.5 s) whose first error carries
    /// markup; a timeline of 100 ms buckets over the 21 s.
    pub(crate) fn synthetic() -> Report {
        let base = window(0, Kind::Baseline, "baseline (no fault)", 0, 5000);
        let kill = window(
            1,
            Kind::KillConnections,
            "1 server-side KILL of every pooled connection",
            5000,
            13000,
        );
        kill.fault_end_ns.store(5001 * MS, SeqCst);
        kill.first_ok_after_end_ns.store(5300 * MS, SeqCst);
        kill.first_error_ns.store(5020 * MS, SeqCst);
        kill.errors.store(4, SeqCst);
        kill.ops.store(9000, SeqCst);
        *lock(&kill.first_error) = Some("write: i/o ConnectionReset".into());
        kill.note("KILL CONNECTION of 6 sessions of `app` on 127.0.0.1:3307");
        let hole = window(
            2,
            Kind::VipBlackHole,
            "2 A: VIP's server dies (3s), VIP moves",
            13000,
            21000,
        );
        hole.fault_end_ns.store(16000 * MS, SeqCst);
        hole.first_ok_after_end_ns.store(16500 * MS, SeqCst);
        hole.first_error_ns.store(13001 * MS, SeqCst);
        hole.errors.store(8, SeqCst);
        hole.ops.store(7000, SeqCst);
        hole.longest_wait_us.store(2_000_000, SeqCst);
        *lock(&hole.first_error) = Some("get(): <script>alert(\"x\")</script> & 'more'".into());
        let mut timeline = Vec::new();
        for b in 0..210u32 {
            let t = b as u64 * 100;
            let down = (13000..16500).contains(&t) || (5000..5300).contains(&t);
            timeline.push(Sample {
                bucket: b,
                ops: if down { 0 } else { 120 },
                errors: if t == 5000 || t == 13000 || t == 15900 {
                    4
                } else {
                    0
                },
                waits: if (13000..16000).contains(&t) && t % 1000 != 0 {
                    0
                } else {
                    100
                },
                p50_us: if down { 1_900_000 } else { 300 },
                p99_us: if down { 2_000_000 } else { 4_000 },
            });
        }
        Report {
            mode: "local",
            url: "mysql://app:<redacted>@127.0.0.1:4000/staunch_test?max_size=8".into(),
            server_version: "11.4.2-MariaDB".into(),
            threads: 4,
            soak: None,
            seed: None,
            bounds: bounds(),
            cluster_bounds: None,
            windows: vec![Arc::new(base), Arc::new(kill), Arc::new(hole)],
            not_run: vec![NotRun {
                label: "D: primary dies, replica promoted".into(),
                key: "incident_d_primary_promotion".into(),
                reason: "not run (needs a local cluster)".into(),
                failed: false,
            }],
            verification: Verification::Done {
                acked: 8000,
                found: 8000,
                missing_by_window: HashMap::new(),
                missing_sample: Vec::new(),
            },
            violations: 0,
            interrupted: false,
            duration: Duration::from_secs(21),
            soak_figures: None,
            timeline,
        }
    }

    /// The tags of `html`, checked to nest: every element opened is closed,
    /// in order (`<x/>` closes itself). Returns the names opened.
    fn check_nesting(html: &str) -> Vec<String> {
        let mut stack: Vec<String> = Vec::new();
        let mut opened = Vec::new();
        let mut rest = html;
        while let Some(i) = rest.find('<') {
            rest = &rest[i + 1..];
            let end = rest.find('>').expect("a tag is closed by >");
            let tag = &rest[..end];
            rest = &rest[end + 1..];
            assert!(!tag.contains('<'), "a < inside a tag: {tag}");
            if tag.starts_with('!') {
                continue;
            }
            if let Some(name) = tag.strip_prefix('/') {
                let top = stack
                    .pop()
                    .unwrap_or_else(|| panic!("</{name}> closes nothing"));
                assert_eq!(top, name, "<{top}> closed by </{name}>");
                continue;
            }
            let name: String = tag
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect();
            assert!(!name.is_empty(), "a tag without a name: <{tag}>");
            opened.push(name.clone());
            if !tag.ends_with('/') {
                stack.push(name);
            }
        }
        assert!(stack.is_empty(), "never closed: {stack:?}");
        opened
    }

    /// The x of the first marker line of `class` in `svg`.
    fn marker_x(svg: &str, class: &str) -> Option<f64> {
        let pat = format!("<line class=\"mk {class}\" x1=\"");
        let at = svg.find(&pat)? + pat.len();
        svg[at..].split('"').next()?.parse().ok()
    }

    #[test]
    fn page_is_well_formed_with_one_chart_per_fault() {
        let r = synthetic();
        let html = page(&r);
        let tags = check_nesting(&html);
        // One chart per fault (the baseline has none), none elsewhere.
        assert_eq!(tags.iter().filter(|t| *t == "svg").count(), 2);
        assert_eq!(html.matches("<svg").count(), r.faults_ran());
        assert!(html.starts_with("<!DOCTYPE html>"));
        // Self-contained: no script, no external resource.
        for bad in [
            "<script", "src=", "href=", "http://", "https://", "@import", "url(",
        ] {
            let outside_ns = html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
            assert!(!outside_ns.contains(bad), "{bad} in the page");
        }
        // The table's figures: the text report's rows.
        for row in r.rows() {
            assert!(html.contains(&esc(&row.label)), "{}", row.label);
            assert!(html.contains(&format!(">{}</td>", esc(&row.verdict))));
        }
        assert!(html.contains("not run (needs a local cluster)"));
        // A section per fault, named by its window (kinds repeat in a soak).
        assert!(html.contains("id=\"fault-1\"") && html.contains("id=\"fault-2\""));
        assert!(html.contains("acknowledged writes verified: 8000 of 8000"));
        assert!(html.contains("staunch drill: <span class=\"ok\">PASSED</span>"));
        // The password never was in the report; the redaction mark is escaped.
        assert!(html.contains("mysql://app:&lt;redacted&gt;@127.0.0.1:4000"));
    }

    #[test]
    fn messages_from_outside_are_escaped() {
        let html = page(&synthetic());
        assert!(!html.contains("<script>"));
        assert!(html.contains(
            "first error: get(): &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;more&#39;"
        ));
        assert_eq!(esc("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&#39;");
    }

    #[test]
    fn markers_sit_at_the_fault_and_the_recovery() {
        let r = synthetic();
        let hole = &r.windows[2];
        let svg = chart(hole, &r.timeline);
        // The axis: 2 s before the fault (11 s) to the window's end (21 s).
        let ax = Axis::of(&Spec::of(hole), &r.timeline);
        assert_eq!((ax.from_ns, ax.to_ns), (11000 * MS, 21000 * MS));
        let at = |ms: u64| LEFT + (ms - 11000) as f64 / 10000.0 * PLOT_W;
        let near = |got: Option<f64>, want: f64| {
            let got = got.expect("the marker is drawn");
            assert!((got - want).abs() < 0.06, "marker at {got}, want {want}");
        };
        near(marker_x(&svg, "fault"), at(13000));
        near(marker_x(&svg, "end"), at(16000));
        near(marker_x(&svg, "recovery"), at(16500));
        assert!(marker_x(&svg, "moved").is_none());
        assert!(svg.contains("data-ms=\"16500\""));
        // The KILL: over at once (no separate "over" marker), recovered 300 ms
        // later; its lead is the baseline's last 2 s.
        let kill = &r.windows[1];
        let svg = chart(kill, &r.timeline);
        let ax = Axis::of(&Spec::of(kill), &r.timeline);
        assert_eq!((ax.from_ns, ax.to_ns), (3000 * MS, 13000 * MS));
        near(marker_x(&svg, "fault"), LEFT + 0.2 * PLOT_W);
        near(marker_x(&svg, "recovery"), LEFT + 0.23 * PLOT_W);
        assert!(marker_x(&svg, "end").is_none());
    }

    #[test]
    fn a_plain_page_has_its_sections_and_escapes() {
        let spec = Spec {
            label: "writer killed (kill -9)".into(),
            start_ns: 5000 * MS,
            end_ns: NEVER,
            wait_name: "latency",
            wait_bound: None,
            marks: vec![
                ("fault", 5000 * MS, "fault".into()),
                ("recovery", 6000 * MS, "first <write>".into()),
            ],
        };
        let samples =
            crate::workload::samples_of((30..110).map(|b| (b * 100 * MS + MS, b != 52, 500)));
        let svg = draw(&spec, &samples);
        // 3 s to 11 s: the lead is clipped to the first sample's bucket.
        let ax = Axis::of(&spec, &samples);
        assert_eq!((ax.from_ns, ax.to_ns), (3000 * MS, 11000 * MS));
        let x = marker_x(&svg, "recovery").unwrap();
        assert!((x - (LEFT + 3.0 / 8.0 * PLOT_W)).abs() < 0.06, "{x}");
        assert!(svg.contains(">first &lt;write&gt;</text>"));
        assert!(!svg.contains("class=\"bound\""));
        assert_eq!(svg.matches("<rect class=\"err\"").count(), 1);
        let sec = |ok| Section {
            title: "t <1>".into(),
            verdict: "survived".into(),
            ok,
            svg: svg.clone(),
            facts: vec![("failed".into(), "8 & more".into())],
        };
        let html = plain_page(
            "staunch drill --galera",
            false,
            "3 nodes",
            &["galera fault", "verdict"],
            &[(vec!["a".into(), "FAILED <x>".into()], false)],
            &["lost: 0".into()],
            ("latency", &["survivors ok", "moved", "first write"]),
            &[sec(true), sec(false)],
        );
        check_nesting(&html);
        assert_eq!(html.matches("<svg").count(), 2);
        assert!(html.contains("<td class=\"fail\">FAILED &lt;x&gt;</td>"));
        assert!(html.contains("<dd>8 &amp; more</dd>") && html.contains("<h3>t &lt;1&gt;</h3>"));
        assert!(html.contains("latency p50</span>") && html.contains("p99 (log scale)</span>"));
    }

    #[test]
    fn series_follow_the_samples() {
        let r = synthetic();
        let svg = chart(&r.windows[2], &r.timeline);
        // 100 buckets between 11 s and 21 s: one point each for throughput.
        let pts = svg
            .split("<polyline class=\"ops\" points=\"")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .expect("a throughput line");
        assert_eq!(pts.split(' ').count(), 100);
        // The wait lines break where no get() returned (27 buckets).
        let p99 = svg
            .split("<path class=\"p99\" d=\"")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .expect("a p99 line");
        // The lone buckets at 14 s and 15 s are dots; the rest, two lines.
        assert_eq!(svg.matches("<circle class=\"p99 dot\"").count(), 2);
        assert_eq!(
            p99.matches('L').count() + p99.matches('M').count(),
            100 - 27 - 2
        );
        assert_eq!(p99.matches('M').count(), 2);
        // Errors: the bars of the buckets at 13.0 s and 15.9 s.
        assert_eq!(svg.matches("<rect class=\"err\"").count(), 2);
    }
}

/// `STAUNCH_HTML_EXAMPLE=PATH cargo test -p staunch-cli --bin staunch
/// html::example -- --ignored` writes the synthetic report's page to PATH.
#[cfg(test)]
mod example {
    #[test]
    #[ignore = "writes a file: run by hand"]
    fn example() {
        let path = std::env::var("STAUNCH_HTML_EXAMPLE").expect("STAUNCH_HTML_EXAMPLE=PATH");
        std::fs::write(&path, super::page(&super::tests::synthetic())).unwrap();
    }
}
