#!/usr/bin/env bash
# Runs every test of staunch: the Rust unit and integration tests against real
# throwaway MariaDB servers, the loom model of the pool core, and the C ABI
# tests (normal, AddressSanitizer + UBSan, valgrind). Installs what it needs
# (MariaDB, valgrind, cbindgen) when missing. Usage: scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-mariadb.sh

echo "== Rust: unit and integration tests (real MariaDB servers)"
cargo test --no-fail-fast

echo "== Rust: loom model of the entry state machine and hand-off"
RUSTFLAGS="--cfg loom" cargo test --release --lib --target-dir target/loom loom_model

if [ -x scripts/c-tests.sh ]; then
  echo "== C ABI: ctest (normal, ASan+UBSan, valgrind)"
  scripts/c-tests.sh
fi
echo "== all tests passed"
