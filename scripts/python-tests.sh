#!/usr/bin/env bash
# The Python binding's tests: installs what they need (python3-venv from
# Debian's packages if missing; from PyPI into target/py-venv, pinned: pytest,
# pytest-timeout, ruff, SQLAlchemy, PyMySQL (the reference driver),
# dbapi-compliance (PEP 249's dbapi20 suite), Django, prometheus-client and
# OpenTelemetry's API and SDK (for staunch.otel's spans)), builds the test kit, installs
# the package with `pip install ./bindings/python` (which builds libstaunch.so
# with cargo, release), then runs ruff, pytest against throwaway MariaDB
# servers, and SQLAlchemy's dialect compliance suite through staunch and
# PyMySQL (scripts/python-suites.sh; STAUNCH_PY_SUITES=0 leaves it out).
#
# Usage: scripts/python-tests.sh [PYTEST_ARGS...]
# Environment: PYTHON (default python3), STAUNCH_PY_VENV (default target/py-venv),
# CARGO_TARGET_DIR as for cargo.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
t0=$SECONDS

scripts/install-mariadb.sh

PYTHON=${PYTHON:-python3}
if ! command -v "$PYTHON" >/dev/null 2>&1 || ! "$PYTHON" -c 'import venv, ensurepip' >/dev/null 2>&1; then
  echo "== python: installing python3 and python3-venv from Debian's packages"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq python3 python3-venv python3-dev >/dev/null
  PYTHON=python3
fi
"$PYTHON" -c 'import sys; assert sys.version_info >= (3, 9), sys.version' \
  || { echo "python-tests.sh: Python 3.9+ needed" >&2; exit 1; }

VENV=${STAUNCH_PY_VENV:-$ROOT/target/py-venv}
if [ ! -x "$VENV/bin/python" ]; then
  echo "== python: creating $VENV"
  "$PYTHON" -m venv "$VENV"
fi
PY=$VENV/bin/python
"$PY" -m pip install -q --disable-pip-version-check --upgrade pip
"$PY" -m pip install -q --disable-pip-version-check \
  'pytest>=7' 'pytest-timeout>=2' 'ruff>=0.5' 'SQLAlchemy==2.1.9' 'PyMySQL==1.2.4' 'dbapi-compliance==1.15.0' 'Django==5.2.19' 'prometheus-client==0.26.0' \
  'opentelemetry-api==1.45.2' 'opentelemetry-sdk==1.45.2' 'greenlet==3.5.6' 'asyncmy==0.2.18'

echo "== python: building the test kit"
cargo build -q -p staunch-testkit
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
case $TARGET in /*) ;; *) TARGET=$ROOT/$TARGET ;; esac
export STAUNCH_TESTKIT=$TARGET/debug/staunch-testkit

echo "== python: pip install ./bindings/python (cargo build --release of the library)"
t1=$SECONDS
"$PY" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps ./bindings/python
echo "   installed in $((SECONDS - t1)) s"

echo "== python: ruff"
"$VENV/bin/ruff" check bindings/python
"$VENV/bin/ruff" format --check bindings/python

echo "== python: pytest"
cd bindings/python
# The package was built here with a C compiler: its row converter in C must
# be in it (tests/test_convert.py; the Python one is tested beside it).
export STAUNCH_EXPECT_SPEEDUPS=1
# STAUNCH_LIBRARY must not point elsewhere: the tests check the installed package.
env -u STAUNCH_LIBRARY "$PY" -m pytest -q -p no:cacheprovider "$@"
cd "$ROOT"
PYTHON=$PY env -u STAUNCH_LIBRARY scripts/check-docs.sh run-python
if [ "${STAUNCH_PY_SUITES:-1}" != 0 ] && [ $# -eq 0 ]; then
  t2=$SECONDS
  scripts/python-suites.sh
  echo "   SQLAlchemy's suite, every driver: $((SECONDS - t2)) s"
fi
echo "== python: done in $((SECONDS - t0)) s"
