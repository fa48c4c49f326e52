#!/usr/bin/env bash
# One ThreadSanitizer run of the library's unit tests (pool core with its
# scripted fake connector, config, the C ABI's Rust side): std is rebuilt
# with -Zsanitizer=thread (nightly, rust-src), so every atomic and lock in
# the process is seen. halt_on_error: the first race report fails the run.
# Slow to build (~5 min on 2 idle cores), so not part of scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

rustup component add --toolchain nightly rust-src >/dev/null
target="$(rustc -vV | sed -n 's/^host: //p')"
RUSTFLAGS="-Zsanitizer=thread" RUSTDOCFLAGS="-Zsanitizer=thread" \
  TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1 second_deadlock_stack=1}" \
  cargo +nightly test -Zbuild-std --target "$target" -p staunch --lib --target-dir target/tsan "$@"
