#!/usr/bin/env bash
# The C ABI micro-benchmarks, with the release library (shared), against a
# throwaway MariaDB (or $STAUNCH_TEST_URL): ns per staunch_pool_get +
# staunch_conn_free on an idle, warm pool (`c_abi_get_release_ns=<n>`), then
# ns per cell read with the one-value getters against staunch_rows_fetch, on
# the same 200k x 4 answer in one run (`... ratio=<per-cell/bulk>`).
#
#   scripts/c-bench.sh [ITERATIONS]     (default 1000000)
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = "--run" ]; then
  shift
  cbuild/build-bench/bench_get_release "$STAUNCH_TEST_URL" "$@"
  exec cbuild/build-bench/bench_fetch_vs_getters "$STAUNCH_TEST_URL"
fi

# The library exactly as `cargo build --lib --release` makes it (see c-tests.sh).
TARGET_DIR=${STAUNCH_C_TARGET_DIR:-$PWD/target/c-abi}
cargo build -p staunch --lib --release --target-dir "$TARGET_DIR"
cmake -S cbuild -B cbuild/build-bench -DCMAKE_BUILD_TYPE=Release -DSTAUNCH_PROFILE=release \
  -DSTAUNCH_LINK=shared -DSTAUNCH_BUILD_TESTS=OFF -DSTAUNCH_CARGO_TARGET_DIR="$TARGET_DIR" >/dev/null
cmake --build cbuild/build-bench --target bench_get_release bench_fetch_vs_getters >/dev/null
if [ -n "${STAUNCH_TEST_URL:-}" ]; then
  exec "$0" --run "$@"
fi
scripts/install-mariadb.sh
exec scripts/c-mariadb.sh "$0" --run "$@"
