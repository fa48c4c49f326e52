#!/usr/bin/env bash
# The chaos soak: `staunch drill --soak` against throwaway local MariaDB
# servers, for DURATION with the fault schedule of SEED, checking the soak's
# invariants at the end (see docs/drill.md, "The chaos soak").
#
#   scripts/soak.sh              # 60 s, seed 1 (what CI runs)
#   scripts/soak.sh 10m          # the 10-minute soak
#   scripts/soak.sh 5m 42        # 5 minutes, seed 42
#   scripts/soak.sh 10m 1 --quiet   # further arguments go to the drill
#
# The JSON report goes to $SOAK_JSON (default target/soak-<DURATION>-<SEED>.json).
# SOAK_PROFILE=dev uses the debug build (what `cargo test` already built)
# instead of --release: for CI, where a release build would take minutes.
# Exit code: the drill's (0 passed, 1 an invariant or a fault's verdict
# failed, 2 set-up failed, 130 interrupted).
set -euo pipefail
cd "$(dirname "$0")/.."

duration="${1:-60s}"
seed="${2:-1}"
shift $(( $# < 2 ? $# : 2 ))
json="${SOAK_JSON:-target/soak-${duration}-${seed}.json}"
mkdir -p "$(dirname "$json")"

have_mariadbd() {
  command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] ||
    [ -n "${STAUNCH_MARIADBD:-}" ]
}
if ! have_mariadbd; then
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "soak.sh: mariadbd is missing; install MariaDB (as root: apt-get install -y mariadb-server)" >&2
    exit 2
  fi
  scripts/install-mariadb.sh
fi

# Exited threads' stacks (the in-process proxy starts two threads per
# connection) stay resident in glibc's stack cache, up to 40 MiB: not the
# pool's memory, so not in the RSS the soak bounds (see docs/drill.md).
export GLIBC_TUNABLES="${GLIBC_TUNABLES:+$GLIBC_TUNABLES:}glibc.pthread.stack_cache_size=0"
set +e
cargo run --profile "${SOAK_PROFILE:-release}" --bin staunch -- drill --soak "$duration" --seed "$seed" --json "$json" "$@"
code=$?
set -e
echo "soak.sh: exit code $code; JSON report in $json"
exit "$code"
