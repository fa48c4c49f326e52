//! Gives the shared library (the cdylib) its SONAME, `libstaunch.so.<major>`,
//! so that programs linked against it record the major version of the ABI
//! they were built for (see the ABI promise in include/staunch.h), and a
//! build id (which GCC's Debian linker adds by default and zig's does not),
//! by which debuggers find the split-off debug info of the released library
//! (scripts/dist.sh). Only the cdylib gets the flags; the rlib and staticlib
//! are untouched.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap_or_default();
    if os == "linux" || os == "android" || os.ends_with("bsd") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libstaunch.so.{major}");
        println!("cargo:rustc-cdylib-link-arg=-Wl,--build-id=sha1");
    }
}
