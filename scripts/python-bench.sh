#!/usr/bin/env bash
# The Python binding's benchmark (not part of the tests): staunch vs PyMySQL and
# mysqlclient under SQLAlchemy's QueuePool, side by side in one run. Installs
# mysqlclient's build needs (libmariadb-dev, pkg-config) from Debian's packages,
# PyMySQL, mysqlclient and SQLAlchemy from PyPI into the test venv, and the
# package with `pip install ./bindings/python`.
#
# Usage: scripts/python-bench.sh [--hooks] [--baseline REV] [--seconds S] [--rounds N] [--only pool|statements]
#                                [--where] [--json FILE]
#   --hooks         also staunch with metrics and a tracer (a no-op one, OpenTelemetry's SDK), issue 47
#   --baseline REV  also runs the Python package of git revision REV (e.g. main) over the
#                   same library, as "staunch (baseline)": before and after in one run
#   --only statements  only #20's insert5 and select_by_id (staunch interpolated and
#                   server-prepared, PyMySQL, mysqlclient; one connection each); --only pool:
#                   only the checkout and fetch benchmarks
#   --where         then where the time of one checkout goes, per phase (bench/bench.py)
#   --instructions  instead of timing: user-space instructions per operation, every
#                   contender (valgrind's callgrind; load-independent; bench/bench.py)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
scripts/install-mariadb.sh
if [[ " $* " == *" --instructions "* ]] && ! command -v valgrind >/dev/null; then
  apt-get update -qq && apt-get install -y -qq valgrind >/dev/null
fi
# shellcheck source=scripts/python-peers.sh
. scripts/python-peers.sh
HOOKS=()
# --hooks: the exporters its contenders register, as the tests pin them.
[[ " $* " == *" --hooks "* ]] && HOOKS=('prometheus-client==0.26.0' 'opentelemetry-api==1.45.2' 'opentelemetry-sdk==1.45.2')
python_peers_venv 'pytest>=7' 'SQLAlchemy==2.1.9' ${HOOKS[@]+"${HOOKS[@]}"}
ARGS=()
while [ $# -gt 0 ]; do
  if [ "$1" = --baseline ]; then
    BASE=$(mktemp -d)
    trap 'rm -rf "$BASE"' EXIT
    git archive "${2:?--baseline needs a git revision, e.g. main}" bindings/python/src/staunch | tar -x -C "$BASE"
    ARGS+=(--baseline "$BASE/bindings/python/src/staunch")
    shift 2
  else
    ARGS+=("$1")
    shift
  fi
done
cargo build -q -p staunch-testkit
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
case $TARGET in /*) ;; *) TARGET=$ROOT/$TARGET ;; esac
export STAUNCH_TESTKIT=$TARGET/debug/staunch-testkit
"$PY" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps ./bindings/python
env -u STAUNCH_LIBRARY "$PY" bindings/python/bench/bench.py ${ARGS[@]+"${ARGS[@]}"}
