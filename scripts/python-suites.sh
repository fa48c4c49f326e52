#!/usr/bin/env bash
# The outside suites of the Python binding, against one test-kit server:
# SQLAlchemy's third-party dialect compliance suite (bindings/python/test,
# SQLAlchemy pinned by python-tests.sh), once through staunch and once through
# PyMySQL as the reference, in the same run, each with its counts.
#
# Called by scripts/python-tests.sh (after the package is installed); alone:
#   scripts/python-suites.sh [PYTEST_ARGS...]
# Environment: STAUNCH_PY_VENV (default target/py-venv), STAUNCH_TESTKIT,
# STAUNCH_SUITE_DRIVERS (default "staunch pymysql").
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VENV=${STAUNCH_PY_VENV:-$ROOT/target/py-venv}
PY=$VENV/bin/python
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
case $TARGET in /*) ;; *) TARGET=$ROOT/$TARGET ;; esac
TESTKIT=${STAUNCH_TESTKIT:-$TARGET/debug/staunch-testkit}

# One server for the suites; the kit removes it when its stdin closes.
coproc TK { exec "$TESTKIT" server; }
TK_PID=$TK_PID
trap 'exec {TK[1]}>&- 2>/dev/null || true; wait "$TK_PID" 2>/dev/null || true' EXIT
read -r ready <&"${TK[0]}"
port=$("$PY" -c 'import json,sys; print(json.loads(sys.argv[1])["servers"][0]["port"])' "$ready")
sql() { echo "sql 0 $1" >&"${TK[1]}"; read -r answer <&"${TK[0]}"; case $answer in *'"ok":true'*) ;; *) echo "$answer" >&2; exit 1 ;; esac; }
# The suite's databases (README.dialects.rst: the default one, test_schema and
# test_schema_2), utf8mb4 as SQLAlchemy's MySQL provisioning makes them.
for db in test test_schema test_schema_2; do
  sql "CREATE DATABASE $db CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"
done

LOGS=$TARGET/python-suites
mkdir -p "$LOGS"
cd bindings/python
status=0
for driver in ${STAUNCH_SUITE_DRIVERS:-staunch pymysql}; do
  case $driver in
    staunch) url="mariadb+staunch://root@127.0.0.1:$port/test" ;;
    pymysql) url="mariadb+pymysql://root@127.0.0.1:$port/test?charset=utf8mb4" ;;
    *) echo "python-suites.sh: unknown driver $driver" >&2; exit 2 ;;
  esac
  echo "== python: SQLAlchemy dialect compliance suite through $driver"
  t=$SECONDS
  # The whole report in the log; its summary (failures, skips with their
  # reasons, the counts) here.
  env -u STAUNCH_LIBRARY "$PY" -m pytest test/test_suite.py -c setup.cfg --rootdir . -p no:cacheprovider \
    -q -rfEs --dburi "$url" -o timeout=120 "$@" >"$LOGS/$driver.log" 2>&1 || status=1
  sed -n '/short test summary info/,$p' "$LOGS/$driver.log" | grep -v '^SKIPPED' || tail -n 20 "$LOGS/$driver.log"
  echo "   $driver: $(grep -c '^SKIPPED' "$LOGS/$driver.log" || true) skip lines in $LOGS/$driver.log; $((SECONDS - t)) s"
done
exit $status
