#!/usr/bin/env bash
# Checks that include/staunch.h is what cbindgen generates from src/ffi now:
# regenerates it into a temporary file with the pinned cbindgen and diffs.
# Fails (and prints the diff) on drift.
#
#   scripts/check-header.sh            check (CI)
#   scripts/check-header.sh --update   rewrite include/staunch.h
#
# cbindgen is pinned: another version formats differently, which would show
# as drift. It is installed with `cargo install --locked` when missing.
set -euo pipefail
cd "$(dirname "$0")/.."

CBINDGEN_VERSION=0.29.0
HEADER=include/staunch.h

cbindgen_bin() {
  local c
  for c in "${CBINDGEN:-}" "$(command -v cbindgen || true)" "$HOME/.cargo/bin/cbindgen"; do
    if [ -n "$c" ] && [ -x "$c" ] && "$c" --version 2>/dev/null | grep -qx "cbindgen $CBINDGEN_VERSION"; then
      echo "$c"
      return 0
    fi
  done
  return 1
}

if ! CB=$(cbindgen_bin); then
  echo "installing cbindgen $CBINDGEN_VERSION..." >&2
  cargo install cbindgen --version "$CBINDGEN_VERSION" --locked >&2
  CB=$(cbindgen_bin) || { echo "cbindgen $CBINDGEN_VERSION not found after install" >&2; exit 1; }
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# src/ffi/mod.rs as the input: cbindgen parses that module tree only.
"$CB" --quiet --config cbindgen.toml --output "$tmp/staunch.h" src/ffi/mod.rs

if [ "${1:-}" = "--update" ]; then
  mkdir -p "$(dirname "$HEADER")"
  if cmp -s "$tmp/staunch.h" "$HEADER"; then
    echo "$HEADER is up to date"
  else
    cp "$tmp/staunch.h" "$HEADER"
    echo "$HEADER regenerated"
  fi
  exit 0
fi

if ! diff -u "$HEADER" "$tmp/staunch.h"; then
  echo >&2
  echo "$HEADER is out of date with src/ffi (diff above: - committed, + generated)." >&2
  echo "Run scripts/check-header.sh --update and commit the result." >&2
  exit 1
fi
echo "$HEADER matches src/ffi (cbindgen $CBINDGEN_VERSION)"
