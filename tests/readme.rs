//! The docs' claims that can rot: every test the incident table
//! (docs/incidents.md) names exists. (The Rust snippets of the README and
//! docs/ are doctests: `ReadmeDoctests` and `docs_doctests` in lib.rs; the
//! other languages' are checked by scripts/check-docs.sh.)

use std::path::Path;

fn sources(dir: &Path, out: &mut String) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push_str(&std::fs::read_to_string(&p).unwrap());
        }
    }
}

#[test]
fn the_incident_table_names_tests_that_exist() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let page = std::fs::read_to_string(root.join("docs/incidents.md")).unwrap();
    let mut code = String::new();
    for d in ["tests", "src", "cli"] {
        sources(&root.join(d), &mut code);
    }
    let table = page
        .split("# Why it exists")
        .nth(1)
        .and_then(|t| t.split("\n## ").next())
        .expect("the incident table");
    let mut named = 0;
    for row in table.lines().filter(|l| l.starts_with("| ")) {
        let last = row.trim_end_matches('|').rsplit('|').next().unwrap();
        for name in last.split('`').skip(1).step_by(2) {
            if name.contains("::") {
                continue; // a module path, e.g. the loom model
            }
            named += 1;
            assert!(
                code.contains(&format!("fn {name}(")),
                "docs/incidents.md names the test {name}, which does not exist"
            );
        }
    }
    assert!(named >= 15, "only {named} test names found in the table");
}
