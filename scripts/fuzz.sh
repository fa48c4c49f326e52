#!/usr/bin/env bash
# Runs every cargo-fuzz target in fuzz/ for SECONDS each (default 30), starting
# from the committed corpus fuzz/corpus/<target>/, which stays read-only: new
# inputs go to a temporary directory that is deleted afterwards. A crash, a
# broken invariant, a leak or a hang (no progress for 30 s) makes it exit
# non-zero; the input that did it is kept in fuzz/artifacts/<target>/ (not
# committed; replay it with `cd fuzz && cargo +nightly fuzz run <target> FILE`).
# Needs the nightly toolchain; installs cargo-fuzz if missing.
# Usage: scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."

secs="${1:-30}"
case "$secs" in
  '' | *[!0-9]*)
    echo "usage: scripts/fuzz.sh [SECONDS]  (SECONDS per target, default 30)" >&2
    exit 2
    ;;
esac

if ! cargo +nightly --version >/dev/null 2>&1; then
  echo "fuzz.sh: the nightly Rust toolchain is missing; cargo-fuzz (libFuzzer) needs it." >&2
  echo "fuzz.sh: install it with: rustup toolchain install nightly" >&2
  exit 1
fi
if ! command -v cargo-fuzz >/dev/null 2>&1; then
  echo "== installing cargo-fuzz"
  cargo install --locked cargo-fuzz
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

failed=()
cd fuzz
# Leaks on the detached probe threads of a topology monitor are thread-exit
# races, not leaks (see the file); leaks on the calling thread are reported.
export LSAN_OPTIONS="suppressions=$PWD/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
for target in $(cargo +nightly fuzz list); do
  mkdir -p "$work/$target" "artifacts/$target"
  echo "== fuzz $target for ${secs}s (corpus: fuzz/corpus/$target, read-only)"
  # The first corpus directory receives new inputs: the temporary one.
  if ! nice -n 10 cargo +nightly fuzz run "$target" "$work/$target" "corpus/$target" -- \
    -max_total_time="$secs" -timeout=30 -print_final_stats=1; then
    failed+=("$target")
  fi
done

if [ "${#failed[@]}" -gt 0 ]; then
  echo "fuzz.sh: FAILED: ${failed[*]} (inputs in fuzz/artifacts/)" >&2
  exit 1
fi
echo "== fuzz: every target ran ${secs}s without a failure"
