#!/usr/bin/env bash
# The C ABI micro-benchmarks, with the release library (shared), against a
# throwaway MariaDB (or $STAUNCH_TEST_URL): ns per staunch_pool_get +
# staunch_conn_free on an idle, warm pool (`c_abi_get_release_ns=<n>`), then
# ns per cell read with the one-value getters against staunch_rows_fetch, on
# the same 200k x 4 answer in one run (`... ratio=<per-cell/bulk>`).
#
# --instructions counts instead of timing: the user-space instructions the
# process executes per statement (valgrind --tool=callgrind, the difference
# between runs of 3N and N statements / 2N, so start-up and connecting cancel
# out) through cbuild/bench/statement_loop.c, for `SELECT 1`, a 5-column
# SELECT by primary key and a 10,000-row scan of 4 columns, with the library
# built on glibc's malloc and with the `mimalloc` feature (as shipped), side
# by side. Neither the machine's load nor the server moves these figures.
#
#   scripts/c-bench.sh [ITERATIONS]     (default 1000000)
#   scripts/c-bench.sh --instructions   (needs valgrind)
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET_DIR=${STAUNCH_C_TARGET_DIR:-$PWD/target/c-abi}
ALLOCS=(system mimalloc)

build_benches() { # TARGET...: the benchmarks, against $TARGET_DIR's release library
  cmake -S cbuild -B cbuild/build-bench -DCMAKE_BUILD_TYPE=Release -DSTAUNCH_PROFILE=release \
    -DSTAUNCH_LINK=shared -DSTAUNCH_BUILD_TESTS=OFF -DSTAUNCH_CARGO_TARGET_DIR="$TARGET_DIR" >/dev/null
  cmake --build cbuild/build-bench --target "$@" >/dev/null
}

if [ "${1:-}" = "--run-instructions" ]; then
  root=${STAUNCH_TEST_ROOT_URL#mysql://}
  hostport=${root#*@}
  hostport=${hostport%%/*}
  mariadb -uroot -h"${hostport%:*}" -P"${hostport#*:}" staunch_test -e "
    DROP TABLE IF EXISTS bench_one, bench_rows;
    CREATE TABLE bench_one (id INT PRIMARY KEY, a INT, s VARCHAR(40), d DECIMAL(12,2), t DATETIME);
    INSERT INTO bench_one VALUES (1, 2, 'hello world', 12.50, '2026-12-01 18:00:00');
    CREATE TABLE bench_rows (id INT PRIMARY KEY, name VARCHAR(40), score DOUBLE, price DECIMAL(10,2));
    INSERT INTO bench_rows SELECT seq, CONCAT('name-', seq, '-', REPEAT('x', seq % 17)), seq / 7,
      seq * 1.25 FROM seq_1_to_10000;"
  . scripts/instructions.sh
  count() { # library N SQL -> instructions of the whole process
    LD_PRELOAD="$TARGET_DIR/alloc-$1/libstaunch.so.1" callgrind_refs \
      cbuild/build-bench/bench_statement_loop "$STAUNCH_TEST_URL" "$2" "$3"
  }
  per_statement count system mimalloc <<'STATEMENTS'
SELECT 1|500|SELECT 1
5 columns by id|500|SELECT id, a, s, d, t FROM bench_one WHERE id = 1
10,000 rows x 4 columns|2|SELECT id, name, score, price FROM bench_rows
STATEMENTS
  echo "(user-space instructions per statement of the whole process: get, query, step over"
  echo " the rows, free; mimalloc / system below 1 means mimalloc executes fewer)"
  exit 0
fi

if [ "${1:-}" = "--instructions" ]; then
  command -v valgrind >/dev/null || { echo "c-bench.sh --instructions needs valgrind" >&2; exit 2; }
  for a in "${ALLOCS[@]}"; do
    features=()
    [ "$a" = mimalloc ] && features=(--features mimalloc)
    cargo build -q -p staunch --lib --release ${features[@]+"${features[@]}"} --target-dir "$TARGET_DIR"
    mkdir -p "$TARGET_DIR/alloc-$a"
    cp "$TARGET_DIR/release/libstaunch.so" "$TARGET_DIR/alloc-$a/libstaunch.so.1"
  done
  build_benches bench_statement_loop
  if [ -n "${STAUNCH_TEST_URL:-}" ]; then exec "$0" --run-instructions; fi
  scripts/install-mariadb.sh
  exec scripts/c-mariadb.sh "$0" --run-instructions
fi

if [ "${1:-}" = "--run" ]; then
  shift
  cbuild/build-bench/bench_get_release "$STAUNCH_TEST_URL" "$@"
  exec cbuild/build-bench/bench_fetch_vs_getters "$STAUNCH_TEST_URL"
fi

# The library as the packages ship it (`cargo build --lib --features mimalloc
# --release`; see c-tests.sh).
cargo build -p staunch --lib --features mimalloc --release --target-dir "$TARGET_DIR"
build_benches bench_get_release bench_fetch_vs_getters
if [ -n "${STAUNCH_TEST_URL:-}" ]; then
  exec "$0" --run "$@"
fi
scripts/install-mariadb.sh
exec scripts/c-mariadb.sh "$0" --run "$@"
