#![no_main]
//! See `staunch_fuzz::binary_answer` (fuzz/src/lib.rs) for what this target feeds and checks.

libfuzzer_sys::fuzz_target!(|data: &[u8]| staunch_fuzz::binary_answer(data));
