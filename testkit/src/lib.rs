//! staunch's test kit: throwaway MariaDB servers, replication topologies and a
//! chaos TCP proxy, for the library's integration tests, the `staunch drill`
//! and, through the `staunch-testkit` command line, the Python, Go and JVM
//! tests (one harness for every face).
//!
//! - [`MariaDb`]: a `mariadbd` of its own (temporary data directory, free
//!   port, own socket) that a test can freeze, kill, restart, replicate from
//!   and `KILL` connections on; cleaned up on drop, on panic and at exit.
//! - [`Topology`]: a primary and N read-only replicas replicating from it,
//!   started in parallel, with [`Topology::promote`] as an operator does it.
//! - [`Galera`]: a Galera cluster of N nodes on loopback, with faults per
//!   node (kill, freeze, isolate, desync, rejoin by SST).
//! - [`Proxy`]: a TCP proxy whose [`Mode`] (pass, black hole, reset, latency,
//!   drip, ...) and target change at run time.
//! - [`Mysql8`]: a second server implementation, Vitess's `go/mysql` server
//!   (built with `go` on first use), for what MariaDB does not speak: a
//!   MySQL 8 greeting and `caching_sha2_password`.
//! - [`ownership::Instrumented`]: a connector that counts two owners of one
//!   connection at once (incident C).

pub mod galera;
pub mod mariadb;
pub mod mysql8;
pub mod ownership;
pub mod proxy;
pub mod topology;

pub use galera::{Galera, GaleraOpts, WsrepState};
pub use mariadb::{test_certs, MariaDb, ServerCert, ServerOpts, PERFORMANCE_SCHEMA_ARGS};
pub use mysql8::{AuthPlugin, Mysql8, Mysql8Opts, Mysql8User};
pub use proxy::{Mode, Proxy};
pub use topology::{Topology, TopologyOpts};
