//! What the fuzz targets need that the public API does not offer: the few
//! crate-private items they check. Their bodies live in `fuzz/src/lib.rs`.
//! Hidden and unstable; compiled only with the `fuzzing` feature.
#![allow(unsafe_code)]

use std::ffi::CStr;
use std::time::Duration;

use mysql_common::packets::Column;
use mysql_common::value::Value;

use crate::ffi::{staunch_column_type, staunch_param, staunch_rows, staunch_status};
use crate::Config;

/// Largest `max_size` accepted.
pub const MAX_POOL_SIZE: usize = crate::pool::config::MAX_POOL_SIZE;

/// Every knob name, as URLs and `Builder::set` take them.
pub fn knob_names() -> Vec<&'static str> {
    crate::config::KNOBS.iter().map(|k| k.name).collect()
}

/// Every status of the C ABI, with its name.
pub fn status_names() -> &'static [(staunch_status, &'static CStr)] {
    crate::ffi::error::STATUS_NAMES
}

/// The C column type staunch reports for server metadata `c`.
pub fn column_type(c: &Column) -> staunch_column_type {
    crate::ffi::rows::column_type(c)
}

/// A row set holding `rows`, as a statement would produce it; free it with
/// `staunch_rows_free`.
pub fn rows_from_values(
    columns: Vec<(Vec<u8>, staunch_column_type)>,
    rows: Vec<Vec<Value>>,
) -> *mut staunch_rows {
    Box::into_raw(Box::new(staunch_rows::from_values(columns, rows)))
}

/// A parameter that does not convert: its status and message.
#[derive(Debug)]
pub struct ParamError {
    pub status: staunch_status,
    pub message: String,
}

/// Converts one C parameter, as `staunch_conn_execute` does.
///
/// # Safety
/// `p`'s text/bytes pointer is NULL or valid for its length.
pub unsafe fn param_to_value(i: usize, p: &staunch_param) -> Result<Value, ParamError> {
    // SAFETY: per this function's contract.
    unsafe { crate::ffi::values::to_param(i, p) }
        .map(|p| p.to_value())
        .map_err(|f| ParamError {
            status: f.status,
            message: f.message,
        })
}

/// Converts a C parameter array, as `staunch_conn_execute` does.
///
/// # Safety
/// `params` is NULL or points to `n` parameters valid as for
/// [`param_to_value`].
pub unsafe fn params_to_values(
    params: *const staunch_param,
    n: usize,
) -> Result<Vec<Value>, ParamError> {
    // SAFETY: per this function's contract.
    unsafe { crate::ffi::values::to_params(params, n) }
        .map(|ps| ps.iter().map(crate::client::Param::to_value).collect())
        .map_err(|f| ParamError {
            status: f.status,
            message: f.message,
        })
}

/// The statement as `staunch_conn_execute` / `_query` prepare it when some
/// parameters are bytes (`bytes[i]`: parameter i is), in a session with the
/// default `sql_mode`: each of those placeholders cast to BINARY; None when
/// none is bytes or the placeholders are not one per parameter (see
/// `client::sql::cast_for_prepare`).
pub fn bind_bytes_as_binary(sql: &str, bytes: &[bool]) -> Option<String> {
    use crate::client::{sql, Lexing, Param};
    let at = sql::scan(sql, &Lexing::default()).placeholders;
    if at.len() != bytes.len() {
        return None;
    }
    let params: Vec<Param> = bytes
        .iter()
        .map(|b| {
            if *b {
                Param::Bytes(Vec::new())
            } else {
                Param::Null
            }
        })
        .collect();
    sql::cast_for_prepare(sql, &at, &params)
}

/// Where the scanner finds `sql`'s placeholders (see `client::sql::scan`).
pub fn scan(sql: &str, lex: &crate::Lexing) -> crate::Scan {
    crate::client::sql::scan(sql, lex)
}

/// The version number executable comments compare (see
/// `client::sql::version_number`).
pub fn version_number(v: &str) -> Option<u32> {
    crate::client::sql::version_number(v)
}

/// The scanner's placeholder count for `sql` (see `client::sql::scan`).
pub fn count_placeholders(sql: &str, lex: &crate::Lexing) -> usize {
    crate::client::sql::count_placeholders(sql, lex)
}

/// `sql` with its placeholders replaced by `params` written as literals
/// for a session lexing as `lex`, or the fault of the first that cannot be
/// (the caller gives one parameter per placeholder).
pub fn interpolate(
    sql: &str,
    params: &[crate::Param],
    lex: &crate::Lexing,
) -> Result<String, String> {
    use crate::client::sql;
    let at = sql::scan(sql, lex).placeholders;
    sql::interpolate(sql, &at, params, lex).map_err(|f| f.to_string())
}

/// The fields of a configuration that the checks look at.
#[derive(Debug)]
pub struct ConfigView {
    pub max_size: usize,
    pub min_idle: usize,
    pub adder_threads: usize,
    pub initialization_fail_timeout: Option<Duration>,
    pub host: String,
    pub port: u16,
    pub socket: Option<String>,
    pub more_hosts: usize,
}

/// What `cfg` holds.
pub fn view(cfg: &Config) -> ConfigView {
    let (p, c) = (cfg.pool(), cfg.connect());
    ConfigView {
        max_size: p.max_size,
        min_idle: p.min_idle,
        adder_threads: p.adder_threads,
        initialization_fail_timeout: p.initialization_fail_timeout,
        host: c.host.clone(),
        port: c.port,
        socket: c.socket.clone(),
        more_hosts: cfg.topology().more_hosts.len(),
    }
}

/// `cfg` with both passwords (if set) replaced by `pw`.
pub fn with_passwords(cfg: &Config, pw: &str) -> Config {
    let mut other = cfg.clone();
    if let Some(p) = other.connect.password.as_mut() {
        *p = pw.into();
    }
    if let Some(p) = other.topology.monitor_password.as_mut() {
        *p = pw.into();
    }
    other
}

/// Sets the MariaDB extended capability flags `f`'s connection agreed on
/// (the handshake's to set): for a reader fed a server's bytes to take
/// the paths of `MARIADB_CLIENT_CACHE_METADATA`.
pub fn set_mariadb_caps<S>(f: &mut crate::wire::Framer<S>, caps: u32) {
    f.mariadb_caps = caps;
}
