//! The C ABI (see include/staunch.h). Being written.
#![allow(unsafe_code)]
