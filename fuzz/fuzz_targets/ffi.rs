#![no_main]
//! See `staunch::__fuzz::ffi` for what this target feeds and checks.

libfuzzer_sys::fuzz_target!(|data: &[u8]| staunch::__fuzz::ffi(data));
