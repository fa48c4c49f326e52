#!/usr/bin/env bash
# SQLAlchemy's third-party dialect compliance suite (bindings/python/test,
# SQLAlchemy pinned by python-tests.sh) through staunch and through PyMySQL as
# the reference, and through staunch.aio's dialect and asyncmy, at once, each against a test-kit server of its own; the
# whole reports go to target/python-suites/DRIVER.log, each run's summary here.
#
# Called by scripts/python-tests.sh (after the package is installed); alone:
#   scripts/python-suites.sh [PYTEST_ARGS...]
# Environment: STAUNCH_PY_VENV (default target/py-venv), STAUNCH_TESTKIT,
# STAUNCH_SUITE_DRIVERS (default "staunch pymysql staunch_async asyncmy":
# the blocking dialect beside PyMySQL, the asyncio one beside asyncmy).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VENV=${STAUNCH_PY_VENV:-$ROOT/target/py-venv}
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
case $TARGET in /*) ;; *) TARGET=$ROOT/$TARGET ;; esac
export STAUNCH_TESTKIT=${STAUNCH_TESTKIT:-$TARGET/debug/staunch-testkit}
cd bindings/python
# shellcheck disable=SC2086
exec env -u STAUNCH_LIBRARY "$VENV/bin/python" test/run_suites.py "$TARGET/python-suites" \
  ${STAUNCH_SUITE_DRIVERS:-staunch pymysql staunch_async asyncmy} -- "$@"
