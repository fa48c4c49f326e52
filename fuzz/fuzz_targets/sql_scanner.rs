#![no_main]
//! See `staunch_fuzz::sql_scanner` (fuzz/src/lib.rs) for what this target feeds and checks.

libfuzzer_sys::fuzz_target!(|data: &[u8]| staunch_fuzz::sql_scanner(data));
