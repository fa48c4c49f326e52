//! Self-test of the Galera cluster support: one 3-node cluster, every fault
//! the kit offers, in sequence. Run with `cargo test -p staunch-testkit --test galera`.

use std::time::Instant;

use mysql::prelude::Queryable;
use mysql::Conn;
use staunch_testkit::{Galera, GaleraOpts};

fn app(g: &Galera, i: usize) -> Conn {
    Conn::new(g.server(i).app_opts()).expect("app connection")
}

#[test]
fn galera_cluster_faults() {
    let t0 = Instant::now();
    let mut g = Galera::start(GaleraOpts::default());
    eprintln!("3-node cluster up in {:?}", t0.elapsed());
    assert_eq!(g.len(), 3);
    let mut indexes: Vec<u32> = (0..3).map(|i| g.state(i).local_index).collect();
    indexes.sort();
    assert_eq!(
        indexes,
        vec![0, 1, 2],
        "each node has its own wsrep_local_index"
    );

    // Synchronous replication: a write on node 0 is read on node 2. A
    // commit returns once certified, before other nodes have applied it:
    // the read waits for them (`wsrep_sync_wait=1`, as tests/galera.rs
    // reads; without it node 2 once answered no row, 2026-12-03).
    g.server(0)
        .sql("CREATE TABLE kit (id INT PRIMARY KEY, v INT)");
    app(&g, 0)
        .query_drop("INSERT INTO kit VALUES (1, 10)")
        .expect("insert");
    let mut reader = app(&g, 2);
    reader
        .query_drop("SET SESSION wsrep_sync_wait = 1")
        .expect("causal reads");
    let v: Option<i64> = reader
        .query_first("SELECT v FROM kit WHERE id = 1")
        .expect("read on node 2");
    assert_eq!(v, Some(10));

    // Isolated: non-Primary, statements refused with 1047; healed: Synced.
    g.isolate(2, true);
    g.wait_until(2, "non-Primary", |s| s.cluster_status != "Primary");
    let err = app(&g, 2)
        .query_drop("SELECT * FROM kit")
        .expect_err("a non-Primary node refuses statements");
    match err {
        mysql::Error::MySqlError(e) => assert_eq!(e.code, 1047, "{e}"),
        other => panic!("expected 1047, got {other}"),
    }
    g.wait_until(0, "a 2-node Primary component", |s| {
        s.healthy() && s.cluster_size == 2
    });
    g.isolate(2, false);
    g.wait_synced(2);
    g.wait_until(0, "the full cluster", |s| s.cluster_size == 3);

    // Desynced: Donor/Desynced (2), still serves.
    g.desync(1, true);
    let s = g.state(1);
    assert_eq!(
        (s.local_state, s.cluster_status.as_str()),
        (2, "Primary"),
        "{s:?}"
    );
    app(&g, 1)
        .query_drop("SELECT * FROM kit")
        .expect("a desynced node serves");
    g.desync(1, false);
    g.wait_synced(1);

    // kill -9 and the rejoin by SST that follows are exercised by the
    // library's tests/galera.rs on its own cluster; not repeated here.

    // A rejoin that goes through a full state transfer.
    app(&g, 0)
        .query_drop("INSERT INTO kit VALUES (2, 20), (3, 30)")
        .expect("insert");
    let took = g.rejoin_sst(1);
    eprintln!("node 1 rejoined by SST in {took:?}");
    assert_eq!(g.last_transfer(1), Some("SST"));
    let v: Option<i64> = app(&g, 1)
        .query_first("SELECT v FROM kit WHERE id = 3")
        .expect("read after SST");
    assert_eq!(v, Some(30));

    // A graceful stop and restart: IST.
    g.stop(2);
    app(&g, 0)
        .query_drop("INSERT INTO kit VALUES (4, 40)")
        .expect("insert");
    g.restart(2);
    assert_eq!(g.last_transfer(2), Some("IST"));
    let v: Option<i64> = app(&g, 2)
        .query_first("SELECT v FROM kit WHERE id = 4")
        .expect("read after IST");
    assert_eq!(v, Some(40));

    // Freeze/thaw: the frozen node is evicted, then rejoins.
    g.freeze(2);
    g.wait_until(0, "a 2-node Primary component", |s| s.cluster_size == 2);
    g.thaw(2);
    g.wait_synced(2);
    eprintln!("self-test done in {:?}", t0.elapsed());
}
