#!/usr/bin/env bash
# The C ABI tests: builds the Rust library, builds cbuild/ (C tests, examples,
# benchmark) three ways and runs ctest for each against a throwaway MariaDB
# (scripts/c-mariadb.sh), then checks the install rules:
#
#   plain      shared library (debug), -Wall -Wextra -Wpedantic -Werror
#   asan       static library (debug) in binaries built with
#              -fsanitize=address,undefined: ASan's allocator interposes
#              malloc/free for the Rust code too, so LeakSanitizer also sees
#              staunch objects a test forgets to free. No suppressions needed.
#   valgrind   shared library (release: the debug build is too slow
#              under valgrind), memcheck with --leak-check=full and
#              --error-exitcode=1; the only suppressions (cbuild/valgrind.supp)
#              are documented there and are not staunch's memory.
#   install    cmake --install into a temporary prefix, then a consumer built
#              with find_package(staunch) and one built with pkg-config.
#
# Usage: scripts/c-tests.sh [plain|asan|valgrind|install ...]   (default: all)
# With STAUNCH_TEST_URL set, that server is used instead of a throwaway one.
# The library is built into target/c-abi (STAUNCH_C_TARGET_DIR overrides).
# Exits non-zero if any pass fails (every pass runs regardless).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

if [ "${1:-}" = "--run-passes" ]; then
  shift
  failed=()
  for pass in "$@"; do
    echo
    echo "== C ABI: $pass"
    case $pass in
      plain)
        ctest --test-dir cbuild/build-plain --output-on-failure || failed+=("$pass") ;;
      asan)
        ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:strict_string_checks=1 \
        UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        STAUNCH_TEST_SLACK_MS=1000 \
          ctest --test-dir cbuild/build-asan --output-on-failure || failed+=("$pass") ;;
      valgrind)
        # Generous timeouts (valgrind runs ~20x slower, one thread at a time),
        # and 8 x 50 instead of 8 x 500 checkouts in conf_threads. The
        # examples run too: they return from main right after
        # staunch_pool_free, which joins the pool's threads, so no thread of
        # ours is left for valgrind to find half-exited. tls_connect is left
        # out: ring's AES-GCM is assembly (from BoringSSL) that memcheck
        # follows as uninitialised data (it reports a conditional jump in
        # ring's open_within and uninitialised bytes in rustls's writev), the
        # false positive OpenSSL's GCM assembly is known for; the plain and
        # ASan+UBSan passes run it (and conf_auth_plugins_sha2 and
        # conf_tls_exact, over TLS too).
        sep='?'; case $STAUNCH_TEST_URL in *\?*) sep='&' ;; esac
        STAUNCH_TEST_URL="$STAUNCH_TEST_URL${sep}connect_timeout=30s&connection_timeout=60s" \
        STAUNCH_TEST_SLACK_MS=3000 STAUNCH_TEST_THREAD_ROUNDS=50 \
          ctest --test-dir cbuild/build-valgrind --output-on-failure -E '^(tls_connect|conf_auth_plugins_sha2|conf_tls_exact)$' \
          || failed+=("$pass") ;;
      install)
        "$ROOT/scripts/c-install-check.sh" || failed+=("$pass") ;;
      *) echo "unknown pass $pass" >&2; failed+=("$pass") ;;
    esac
  done
  echo
  if [ ${#failed[@]} -gt 0 ]; then
    echo "== C ABI: FAILED: ${failed[*]}"
    exit 1
  fi
  echo "== C ABI: passed: $*"
  exit 0
fi

passes=("$@")
[ ${#passes[@]} -gt 0 ] || passes=(plain asan valgrind install)
want() { local p; for p in "${passes[@]}"; do [ "$p" = "$1" ] && return 0; done; return 1; }

# Tools (CI runs this as root on a fresh Debian 12 machine).
missing=()
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v cc >/dev/null 2>&1 || missing+=(gcc)
command -v c++ >/dev/null 2>&1 || missing+=(g++)
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
if want valgrind && ! command -v valgrind >/dev/null 2>&1; then missing+=(valgrind); fi
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing ${missing[*]}..."
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "c-tests: missing ${missing[*]} (install them, or run as root with apt-get)" >&2
    exit 1
  fi
fi
[ -n "${STAUNCH_TEST_URL:-}" ] || scripts/install-mariadb.sh

# A target directory of its own: `cargo test` builds the library with the
# dev-dependencies' features unified in (e.g. mysql with zlib), and would
# overwrite target/debug/libstaunch.{a,so} with a library needing other system
# libraries. The C side gets exactly what `cargo build --lib` makes: without
# the `mimalloc` feature the packages are built with, so that ASan and
# memcheck see every allocation the library makes (mimalloc's own arenas are
# opaque to them). The Python, Go and JVM suites and dist-check run the
# library as shipped.
TARGET_DIR=${STAUNCH_C_TARGET_DIR:-$ROOT/target/c-abi}
echo "== cargo build --lib (into $TARGET_DIR)"
cargo build -p staunch --lib --target-dir "$TARGET_DIR"
if want valgrind; then cargo build -p staunch --lib --release --target-dir "$TARGET_DIR"; fi
# The test kit's command line, for the tests that freeze a server.
cargo build -p staunch-testkit --bin staunch-testkit --target-dir "$TARGET_DIR"
export STAUNCH_TESTKIT=${STAUNCH_TESTKIT:-$TARGET_DIR/debug/staunch-testkit}

configure() {   # dir, cmake args...
  local dir=$1
  shift
  cmake -S cbuild -B "$dir" -DCMAKE_BUILD_TYPE=Debug -DSTAUNCH_CARGO_TARGET_DIR="$TARGET_DIR" "$@" \
    >"$dir.configure.log" 2>&1 || {
    cat "$dir.configure.log" >&2
    return 1
  }
  cmake --build "$dir" -j "$(nproc)" >"$dir.build.log" 2>&1 || {
    cat "$dir.build.log" >&2
    return 1
  }
}
mkdir -p cbuild
if want plain || want install; then
  echo "== cmake: cbuild/build-plain (shared, -Werror)"
  configure cbuild/build-plain -DSTAUNCH_PROFILE=debug -DSTAUNCH_LINK=shared
fi
if want plain; then
  # What a reader copies must build: every ```c block of the README, docs/
  # and cbuild/README.md, as a whole program, compiled and linked with the
  # tests' warnings; and the README's quick start must run.
  STAUNCH_LIBDIR="$TARGET_DIR/debug" scripts/check-docs.sh c run-c
fi
if want asan; then
  echo "== cmake: cbuild/build-asan (static, -fsanitize=address,undefined)"
  configure cbuild/build-asan -DSTAUNCH_PROFILE=debug -DSTAUNCH_LINK=static \
    -DSTAUNCH_SANITIZE=address,undefined
fi
if want valgrind; then
  echo "== cmake: cbuild/build-valgrind (shared release library under memcheck)"
  configure cbuild/build-valgrind -DSTAUNCH_PROFILE=release -DSTAUNCH_LINK=shared \
    "-DSTAUNCH_TEST_WRAPPER=valgrind;--quiet;--error-exitcode=1;--leak-check=full;--show-leak-kinds=definite,possible;--errors-for-leak-kinds=definite,possible;--num-callers=40;--suppressions=$ROOT/cbuild/valgrind.supp"
fi

if [ -n "${STAUNCH_TEST_URL:-}" ]; then
  exec "$0" --run-passes "${passes[@]}"
fi
exec scripts/c-mariadb.sh "$0" --run-passes "${passes[@]}"
