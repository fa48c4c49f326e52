#!/usr/bin/env bash
# Runs the library's unit tests under Miri (nightly): the pool core with its
# scripted fake connector, config parsing and the C ABI's Rust side, checked
# for undefined behaviour, data races and leaks of the interpreter's kind.
# Tests that need real sockets, or real-time bounds that Miri's ~100x
# slowdown breaks, are marked `#[cfg_attr(miri, ignore = "...")]` and say why.
#
# Installs the nightly `miri` and `rust-src` components when missing. If they
# cannot be installed (no toolchain server reachable), it says so and exits
# 3, which scripts/test.sh reports as skipped; any Miri finding exits non-zero.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! cargo +nightly --version >/dev/null 2>&1; then
  echo "miri.sh: the nightly toolchain is missing (rustup toolchain install nightly)" >&2
  exit 3
fi
if ! cargo +nightly miri --version >/dev/null 2>&1; then
  if ! rustup component add --toolchain nightly miri rust-src; then
    echo "miri.sh: could not install the nightly miri component" >&2
    exit 3
  fi
fi
# Isolation off: the pool reads the monotonic clock and names its threads.
MIRIFLAGS="${MIRIFLAGS:--Zmiri-disable-isolation}" \
  cargo +nightly miri test -p staunch --lib --target-dir target/miri "$@"
