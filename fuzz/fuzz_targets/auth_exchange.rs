#![no_main]
//! See `staunch_fuzz::auth_exchange` (fuzz/src/lib.rs) for what this target feeds and checks.

libfuzzer_sys::fuzz_target!(|data: &[u8]| staunch_fuzz::auth_exchange(data));
