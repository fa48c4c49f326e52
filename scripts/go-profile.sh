#!/usr/bin/env bash
# Where a Go statement's client cost goes: runs bindings/go/bench's
# TestProfile (N operations of one implementation over G goroutines, with
# the release library) and, with perf stat attached to the client process
# alone (not the test kit's server), counts its system calls and context
# switches per operation (tracepoints: it barely slows the client, where
# strace would);
# TestProfile itself prints cgo calls, allocations, context switches and CPU
# per operation. With PERF=1, a perf profile (perf record -g) of the client
# instead of strace: its top entries are printed.
#
#   scripts/go-profile.sh IMPL [G] [N]
#     IMPL: go-sql-driver, staunch-native, staunch-OpenDB, go-sql-driver-ctx,
#           staunch-OpenDB-ctx (the last two with a context that can end) (acquire +
#           SELECT 1 + release), crowd-go-sql-driver, crowd-staunch-native
#           (the same on 8 connections each, as BenchmarkSelect1Crowd) or
#           scan-go-sql-driver, scan-staunch-native, scan-staunch-OpenDB
#           (10,000 rows)
#
# Needs perf (Debian: linux-perf). A measuring tool, not a test.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
IMPL=${1:?usage: scripts/go-profile.sh IMPL [G] [N]}
G=${2:-1}
N=${3:-20000}
# shellcheck source=scripts/go-env.sh
. scripts/go-env.sh
scripts/install-mariadb.sh
ensure_go
build_staunch release
OUT=${CARGO_TARGET_DIR:-$ROOT/target}/go-bench
mkdir -p "$OUT"
(cd bindings/go/bench && go test -c -o "$OUT/bench.test" .)
WAIT=$OUT/profile.go
rm -f "$WAIT" "$WAIT.done"
STAUNCH_PROFILE="$IMPL:$G:$N" STAUNCH_PROFILE_WAIT=$WAIT \
  "$OUT/bench.test" -test.run '^TestProfile$' -test.v 2>"$OUT/profile.err" >/dev/null &
TEST=$!
for _ in $(seq 600); do
  grep -q '^PROFILE-PID' "$OUT/profile.err" 2>/dev/null && break
  kill -0 $TEST 2>/dev/null || { cat "$OUT/profile.err"; exit 1; }
  sleep 0.1
done
PID=$(sed -n 's/^PROFILE-PID //p' "$OUT/profile.err")
if [ "${PERF:-0}" = 1 ]; then
  perf record -q -g -o "$OUT/perf.data" -p "$PID" 2>/dev/null &
else
  EVENTS=raw_syscalls:sys_enter,context-switches,cpu-migrations
  for s in futex sendto recvfrom read write nanosleep epoll_pwait sched_yield setsockopt getsockopt poll ppoll clock_gettime; do
    [ -d /sys/kernel/tracing/events/syscalls/sys_enter_$s ] && EVENTS=$EVENTS,syscalls:sys_enter_$s
  done
  perf stat -x, -e "$EVENTS" -o "$OUT/perfstat.txt" -p "$PID" &
fi
TRACER=$!
sleep 1 # attached to every thread
touch "$WAIT"
while [ ! -e "$WAIT.done" ]; do
  kill -0 $TEST 2>/dev/null || break
  sleep 0.05
done
kill -INT $TRACER
wait $TRACER || true
wait $TEST || true
grep '^PROFILE ' "$OUT/profile.err"
if [ "${PERF:-0}" = 1 ]; then
  perf report -i "$OUT/perf.data" --no-children --sort dso,symbol --stdio 2>/dev/null |
    grep -v '^#' | grep '%' | head -40
else
  # Per operation: each count divided by N (raw_syscalls: every system call).
  awk -F, -v n="$N" '$1 ~ /^[0-9]+$/ { printf "%-36s %8.2f/op\n", $3, $1 / n }' "$OUT/perfstat.txt"
fi
