#!/usr/bin/env bash
# docs/knobs.md is generated from the core's knob table (src/config.rs's
# KNOBS, with what each means in src/config/knob_docs.rs). Checks that it is
# current, that every knob is documented once and that every documented
# default is the default; `--update` writes it.
#
# Usage: scripts/check-knobs.sh [--update]
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = --update ]; then
  export STAUNCH_UPDATE_KNOBS=1
fi
cargo test -q -p staunch --lib config::knob_docs
