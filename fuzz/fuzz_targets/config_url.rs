#![no_main]
//! See `staunch_fuzz::config_url` (fuzz/src/lib.rs) for what this target feeds and checks.

libfuzzer_sys::fuzz_target!(|data: &[u8]| staunch_fuzz::config_url(data));
