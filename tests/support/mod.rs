//! Integration-test support: throwaway MariaDB servers and a chaos TCP proxy.
//!
//! Every test binary that wants these declares `mod support;` and uses a
//! subset of what is here, hence the `dead_code` / `unused_imports` allowances.
#![allow(dead_code)]

pub mod mariadb;
pub mod ownership;
pub mod proxy;

#[allow(unused_imports)]
pub use mariadb::{test_certs, MariaDb, ServerCert, ServerOpts};
#[allow(unused_imports)]
pub use proxy::{Mode, Proxy};
