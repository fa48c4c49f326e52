#!/usr/bin/env bash
# Runs every test of staunch, stage by stage, and says what each one cost:
#
#   rust      the unit and integration tests of every crate of the workspace
#             (the library, the command, the test kit) against real throwaway
#             MariaDB servers (TLS and resource limits included)
#   fuzz      the committed fuzz corpus replayed through the targets' bodies
#             (stable; the fuzzers themselves: scripts/fuzz.sh SECONDS)
#   loom      the loom model of the pool's entry registry
#   soak      a 60 s chaos soak of the drill, then the drill's Galera part
#             (STAUNCH_CI_GALERA_DRILL=0 skips the latter); each writes its
#             --html page, checked for one timeline per fault
#   miri      the library's unit tests under Miri (nightly)
#   c         the C ABI tests (plain, AddressSanitizer + UBSan, valgrind, install)
#   python, go, java   each binding's own tests (when the binding is there)
#   dist      the release artifacts (scripts/dist.sh: the library for glibc
#             2.17, the C tarball and .debs, the crate, the wheel and sdist, the
#             jar and Maven repository, the Go module zip, the ABI check), each
#             installed and run outside the checkout (scripts/dist-check.sh)
#
# Usage: scripts/test.sh [STAGE ...]   (default: every stage, in this order)
# Installs what it needs (MariaDB, valgrind, Miri, ...) when missing.
#
# Each stage runs in a session of its own under a watchdog: one that runs
# longer than STAUNCH_STAGE_LIMIT seconds (default 1500; the longest, java,
# takes about 12 minutes on 2 cores) is stopped, after the processes still
# running are listed, and the run fails there and then, saying which stage
# and what was waiting, instead of hanging until CI's own limit ends it
# with nothing to go on.
#
# Under CI (CI set), a stage that builds into a target directory of its own
# (fuzz, miri, c) removes it when it ends: CI's disk is finite (stop 60 failed
# in the c stage with "No space left on device"), and no later stage reads them.
# Every stage's line in the summary says what the disk had free after it.
set -euo pipefail
cd "$(dirname "$0")/.."

all=(rust fuzz loom soak miri c python go java dist)
inner=
if [ "${1:-}" = --stage ]; then inner=$2; set -- "$2"; fi
stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=("${all[@]}")
for s in "${stages[@]}"; do
  case " ${all[*]} " in *" $s "*) ;; *) echo "test.sh: unknown stage $s (stages: ${all[*]})" >&2; exit 2 ;; esac
done

[ -n "$inner" ] || scripts/install-mariadb.sh

# The drill's --html page ($1) exists and has one chart (<svg) per fault:
# $2 is the JSON report, which lists the faults that ran (every run entry
# but the baselines), or their number.
check_drill_html() {
  local html=$1 faults=$2 charts
  [ -s "$html" ] || { echo "test.sh: the drill wrote no $html" >&2; return 1; }
  if [ -f "$2" ]; then
    faults=$(grep '"ran": true' "$2" | grep -vc '"kind": "baseline"' || true)
  fi
  charts=$(grep -o '<svg' "$html" | wc -l || true)
  if [ "$faults" -lt 1 ] || [ "$charts" != "$faults" ]; then
    echo "test.sh: $html has $charts charts for $faults faults ($2)" >&2
    return 1
  fi
  echo "== $html: one timeline per fault ($charts)"
}

stage_body() {
  local s=$1
  case $s in
    rust)
      echo "== Rust: unit and integration tests (real MariaDB servers), every crate of the workspace"
      cargo test --workspace --no-fail-fast
      echo "== Rust: the shipped build's allocator (the mimalloc feature);"
      echo "   the tracing feature's spans, the metrics feature's facade (one build of the library for all)"
      cargo test -p staunch --lib --features mimalloc,tracing,metrics -- alloc:: trace::
      cargo test -p staunch --features mimalloc,tracing,metrics --test memory --test metrics_facade ;;
    fuzz)
      echo "== fuzz: the committed corpus replayed through the targets' bodies (stable)"
      # A target directory of its own: the library is a cdylib, whose rlib cargo
      # names without a hash, so the workspace build (no `fuzzing` feature) and
      # this one would overwrite each other's target/debug/deps/libstaunch.rlib.
      cargo test --manifest-path fuzz/Cargo.toml --target-dir target/fuzz-replay --lib ;;
    loom)
      echo "== Rust: loom model of the entry state machine and hand-off"
      cargo test -p staunch --lib --features loom-model loom_model ;;
    soak)
      echo "== chaos soak: 60 s, seed 1 (debug build), with the HTML report"
      SOAK_PROFILE=dev SOAK_JSON=target/soak-60s-1.json scripts/soak.sh 60s 1 --quiet --html target/drill.html
      check_drill_html target/drill.html target/soak-60s-1.json
      if [ "${STAUNCH_CI_GALERA_DRILL:-1}" != 0 ]; then
        # The drill's Galera part (55-75 s on this machine, a 3-node cluster of
        # its own); STAUNCH_CI_GALERA_DRILL=0 skips it.
        echo "== the drill's Galera part (debug build)"
        local tg=$SECONDS
        cargo run --bin staunch -- drill --galera --quiet --html target/drill-galera.html
        check_drill_html target/drill-galera.html 3
        echo "== the drill's Galera part took $((SECONDS - tg)) s"
      fi ;;
    miri)
      echo "== Rust: unit tests under Miri"
      local code=0
      scripts/miri.sh || code=$?
      if [ "$code" = 3 ]; then
        echo "== Miri SKIPPED: the nightly miri component could not be installed here"
      elif [ "$code" != 0 ]; then
        return "$code"
      fi ;;
    c)
      echo "== C ABI: ctest (normal, ASan+UBSan, valgrind)"
      scripts/c-tests.sh ;;
    python | go | java)
      if [ -x "scripts/$s-tests.sh" ]; then
        echo "== $s binding"
        "scripts/$s-tests.sh"
      else
        echo "== $s binding: not built yet (no scripts/$s-tests.sh)"
      fi ;;
    dist)
      echo "== release artifacts: build (scripts/dist.sh), install and run each outside the checkout"
      scripts/dist.sh
      scripts/dist-check.sh ;;
  esac
}

# The target directory only STAGE builds into, removed after it under CI (the
# c stage's only when it is the default: one given in STAUNCH_C_TARGET_DIR
# may be shared).
own_target() {
  case $1 in
    fuzz) echo target/fuzz-replay ;;
    miri) echo target/miri ;;
    c) [ -n "${STAUNCH_C_TARGET_DIR:-}" ] || echo target/c-abi ;;
  esac
}

# Under CI, STAGE's own target directory goes when the stage ends, passed or
# not (an EXIT trap: `stage_body || ...` would turn off set -e inside it).
prune_own_target() {
  local own
  own=$(own_target "$1")
  if [ -n "${CI:-}" ] && [ -n "$own" ] && [ -d "$own" ]; then
    echo "== CI: removing $own ($(du -sh "$own" | cut -f1)), which no later stage reads"
    rm -rf "$own"
  fi
}

if [ -n "$inner" ]; then
  trap 'prune_own_target "$inner"' EXIT
  stage_body "$inner"
  exit
fi

# run_stage STAGE: the stage in a session of its own (setsid: its process
# group is its pid, so every process it starts can be listed and stopped),
# watched until it ends or outlives the limit.
limit=${STAUNCH_STAGE_LIMIT:-1500}
stage_pid=
trap '[ -z "$stage_pid" ] || kill -TERM -- "-$stage_pid" 2>/dev/null || true' INT TERM
timings=()
run_stage() {
  local s=$1 t0=$SECONDS code=0
  setsid "$0" --stage "$s" &
  stage_pid=$!
  while kill -0 "$stage_pid" 2>/dev/null; do
    if ((SECONDS - t0 > limit)); then
      echo "== stage $s: still running after $limit s (STAUNCH_STAGE_LIMIT); what is running:" >&2
      ps -eo pid,ppid,pgid,etimes,stat,wchan:20,args --forest | cut -c1-240 >&2 || true
      # SIGTERM first: the test kits stop their servers and remove their data.
      kill -TERM -- "-$stage_pid" 2>/dev/null || true
      for _ in $(seq 30); do kill -0 -- "-$stage_pid" 2>/dev/null || break; sleep 0.5; done
      kill -KILL -- "-$stage_pid" 2>/dev/null || true
      break
    fi
    sleep 1
  done
  wait "$stage_pid" || code=$?
  stage_pid=
  if ((SECONDS - t0 > limit)); then
    echo "== stage $s: stopped after $((SECONDS - t0)) s: over its limit of $limit s" >&2
    return 124
  fi
  if [ "$code" != 0 ]; then
    echo "== stage $s: FAILED (exit $code) after $((SECONDS - t0)) s" \
      "(disk free: $(df -h --output=avail . 2>/dev/null | tail -1 | tr -d ' ' || true))" >&2
    return "$code"
  fi
  local free
  free=$(df -h --output=avail . 2>/dev/null | tail -1 | tr -d ' ' || true)
  echo "== stage $s: passed in $((SECONDS - t0)) s (disk free after it: ${free:-?})"
  timings+=("$(printf '%-8s %5ds   %s free' "$s" $((SECONDS - t0)) "${free:-?}")")
}

for s in "${stages[@]}"; do
  run_stage "$s"
done
echo "== time per stage"
printf '   %s\n' "${timings[@]}"
echo "== all tests passed"
