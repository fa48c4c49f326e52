#![no_main]
//! See `staunch_fuzz::text_answer` (fuzz/src/lib.rs) for what this target feeds and checks.

libfuzzer_sys::fuzz_target!(|data: &[u8]| staunch_fuzz::text_answer(data));
