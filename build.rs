//! Gives the shared library (the cdylib) its SONAME, `libstaunch.so.<major>`,
//! so that programs linked against it record the major version of the ABI
//! they were built for (see the ABI promise in include/staunch.h), and a
//! build id (which GCC's Debian linker adds by default and zig's does not),
//! by which debuggers find the split-off debug info of the released library
//! (scripts/dist.sh). Only the cdylib gets the flags; the rlib and staticlib
//! are untouched.
//!
//! The major is the C library's (`[package.metadata.staunch]
//! library-version` in Cargo.toml), not the crate's: the Rust API and the C
//! ABI are versioned apart. It reaches the code as `STAUNCH_LIBRARY_VERSION`.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=Cargo.toml");
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let manifest = std::fs::read_to_string(format!("{dir}/Cargo.toml")).unwrap_or_default();
    let version = library_version(&manifest).unwrap_or_else(|| {
        panic!("no library-version under [package.metadata.staunch] in {dir}/Cargo.toml")
    });
    println!("cargo:rustc-env=STAUNCH_LIBRARY_VERSION={version}");
    let major = version.split('.').next().unwrap_or_default();
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if os == "linux" || os == "android" || os.ends_with("bsd") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libstaunch.so.{major}");
        println!("cargo:rustc-cdylib-link-arg=-Wl,--build-id=sha1");
    }
}

/// `library-version = "X.Y.Z"` in the `[package.metadata.staunch]` table.
fn library_version(manifest: &str) -> Option<String> {
    let mut inside = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            inside = line == "[package.metadata.staunch]";
            continue;
        }
        if let (true, Some(rest)) = (inside, line.strip_prefix("library-version")) {
            let v = rest
                .trim_start()
                .strip_prefix('=')?
                .trim()
                .trim_matches('"');
            return Some(v.to_string());
        }
    }
    None
}
