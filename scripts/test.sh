#!/usr/bin/env bash
# Runs every test of staunch: the Rust unit and integration tests against real
# throwaway MariaDB servers (TLS and resource limits included), the loom model
# of the pool core, a 60 s chaos soak, the unit tests under Miri, the C ABI
# tests (normal, AddressSanitizer + UBSan, valgrind) and a short run of every
# fuzz target. Installs what it needs (MariaDB, valgrind, cbindgen, Miri,
# cargo-fuzz) when missing. Usage: scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-mariadb.sh

echo "== Rust: unit and integration tests (real MariaDB servers), every crate of the workspace"
cargo test --workspace --no-fail-fast

echo "== fuzz: the committed corpus replayed through the targets' bodies (stable)"
cargo test --manifest-path fuzz/Cargo.toml --target-dir target --lib

echo "== Rust: loom model of the entry state machine and hand-off"
RUSTFLAGS="--cfg loom" cargo test -p staunch --release --lib --target-dir target/loom loom_model

echo "== chaos soak: 60 s, seed 1 (the debug build cargo test made)"
SOAK_PROFILE=dev scripts/soak.sh 60s 1 --quiet

echo "== Rust: unit tests under Miri"
set +e
scripts/miri.sh
code=$?
set -e
if [ "$code" = 3 ]; then
  echo "== Miri SKIPPED: the nightly miri component could not be installed here"
elif [ "$code" != 0 ]; then
  exit "$code"
fi

if [ -x scripts/c-tests.sh ]; then
  echo "== C ABI: ctest (normal, ASan+UBSan, valgrind)"
  scripts/c-tests.sh
fi
if [ -d fuzz ]; then
  echo "== fuzz: every target for 20 s from the committed corpus"
  scripts/fuzz.sh 20
fi
echo "== all tests passed"
