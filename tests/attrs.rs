//! Connection attributes (`connect_attrs`), read back where a DBA reads
//! them: `performance_schema.session_connect_attrs` of a server started
//! with performance_schema on (the test kit's opt-in).

use staunch_testkit as support;

use std::collections::BTreeMap;

use staunch::prelude::*;
use staunch::Pool;
use support::{MariaDb, ServerOpts};

/// The attributes the server holds for the session `c` is on.
fn attrs_of(c: &mut staunch::PooledConn) -> BTreeMap<String, String> {
    c.query::<(String, String), _>(
        "SELECT ATTR_NAME, ATTR_VALUE FROM performance_schema.session_connect_attrs \
         WHERE PROCESSLIST_ID = CONNECTION_ID()",
    )
    .unwrap()
    .into_iter()
    .collect()
}

#[test]
fn attrs_reach_session_connect_attrs() {
    let s = MariaDb::start_with(ServerOpts::default().with_performance_schema());
    let program = std::env::current_exe().unwrap();
    let program = program.file_name().unwrap().to_str().unwrap();

    // The URL's knob, percent-decoded, after a reset too.
    let url = format!(
        "{}?max_size=1&reset_on_return=true&connect_attrs=service:billing%20api,endpoint:http://x:8080",
        s.url()
    );
    let p = Pool::from_url(&url).unwrap();
    for round in 0..2 {
        let mut c = p.get().unwrap();
        let a = attrs_of(&mut c);
        assert_eq!(
            a.get("service").map(String::as_str),
            Some("billing api"),
            "{a:?}"
        );
        assert_eq!(
            a.get("endpoint").map(String::as_str),
            Some("http://x:8080"),
            "{a:?}"
        );
        assert_eq!(
            a.get("program_name").map(String::as_str),
            Some(program),
            "{a:?}"
        );
        assert_eq!(
            a.get("staunch_version").map(String::as_str),
            Some(env!("STAUNCH_LIBRARY_VERSION")),
            "{a:?}"
        );
        // staunch opens the connection and names itself, as
        // libmysqlclient does.
        assert_eq!(
            a.get("_client_name").map(String::as_str),
            Some("staunch"),
            "{a:?}"
        );
        assert_eq!(
            a.get("_client_version").map(String::as_str),
            Some(env!("STAUNCH_LIBRARY_VERSION")),
            "{a:?}"
        );
        assert_eq!(
            a.get("_pid"),
            Some(&std::process::id().to_string()),
            "{a:?}"
        );
        assert!(!a.values().any(|v| v.contains("app-secret")), "{a:?}");
        drop(c);
        assert_eq!(p.stats().created, 1, "round {round}");
    }
    drop(p);

    // The builder's setters; program_name replaces the default.
    let p = Pool::builder()
        .url(&format!("{}?max_size=1", s.url()))
        .program_name("billing-worker")
        .connect_attrs([("shard", "7")])
        .build()
        .unwrap();
    let a = attrs_of(&mut p.get().unwrap());
    assert_eq!(
        a.get("program_name").map(String::as_str),
        Some("billing-worker"),
        "{a:?}"
    );
    assert_eq!(a.get("shard").map(String::as_str), Some("7"), "{a:?}");
    assert!(!a.contains_key("service"), "{a:?}");

    // Bad input is a Config error naming the knob, before any connect.
    for (q, what) in [
        ("connect_attrs=service", "no ':'"),
        ("connect_attrs=_client_name:me", "starts with '_'"),
        ("connect_attrs=pw:app-secret", "holds a password"),
    ] {
        let e = Pool::from_url(&format!("{}?{q}", s.url())).unwrap_err();
        assert_eq!(e.kind(), staunch::ErrorKind::Config, "{e}");
        let m = e.to_string();
        assert!(m.contains("connect_attrs") && m.contains(what), "{m}");
        assert!(!m.contains("app-secret"), "{m}");
    }
}
