#!/usr/bin/env bash
# Resident memory per pooled connection (issue 50), staunch beside each
# language's usual driver, each contender in a process of its own at its
# defaults, against one throwaway MariaDB (benches/memory/mem_bench.py says
# what is measured): idle, and after every connection has carried one answer
# of ROWS rows and gone back.
#
#   staunch-c            the C library as shipped (`--features mimalloc`,
#                        release), benches/memory/idle.c; the large answer
#                        as the bindings ask for it (STAUNCH_QUERY_TEXT)
#   staunch-c-prepared   the same, the large answer with flags 0 (prepared:
#                        read by the `mysql` crate)
#   staunch-python       the Python package over that library
#   mysqlclient, pymysql one connection each, kept in a list
#   staunch-rust         the Rust face (the program's allocator: glibc)
#   mysql-pool, r2d2     the `mysql` crate's pool, r2d2 + r2d2_mysql
#
# Usage: scripts/mem-bench.sh [--sizes 1,100,1000] [--rows 10000] [--only a,b] [--json FILE]
# (about 2 minutes after the builds; installs libmariadb-dev, pkg-config and
# the Python peers into target/py-venv as scripts/python-bench.sh does)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
scripts/install-mariadb.sh
if ! dpkg -s libmariadb-dev pkg-config >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq libmariadb-dev pkg-config >/dev/null
fi
PYTHON=${PYTHON:-python3}
VENV=${STAUNCH_PY_VENV:-$ROOT/target/py-venv}
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
PY=$VENV/bin/python
"$PY" -m pip install -q --disable-pip-version-check 'PyMySQL==1.2.4' 'mysqlclient==2.3.2'

TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
case $TARGET in /*) ;; *) TARGET=$ROOT/$TARGET ;; esac
# The shipped library in a target directory of its own, so the Rust
# contenders' build (without the feature: a Rust program's allocator is its
# own) does not overwrite it.
SHIPPED=$TARGET/mem-shipped
echo "== cargo build --release -p staunch --lib --features mimalloc (the library as shipped)"
CARGO_TARGET_DIR=$SHIPPED cargo build -q --release -p staunch --lib --features mimalloc
echo "== cargo build --release --example memory_child; cargo build -p staunch-testkit"
cargo build -q --release --example memory_child
cargo build -q -p staunch-testkit
W=$(mktemp -d /tmp/staunch-mem-XXXXXX)
trap 'rm -rf "$W"' EXIT
cp "$SHIPPED/release/libstaunch.so" "$W/libstaunch.so"
ln -s libstaunch.so "$W/libstaunch.so.1"
cc -std=c11 -O2 -Wall -Wextra -Werror -Iinclude benches/memory/idle.c -o "$W/idle" \
  -L"$W" -lstaunch -Wl,-rpath,"$W"
STAUNCH_PREBUILT_LIBRARY=$W/libstaunch.so "$PY" -m pip install -q --disable-pip-version-check \
  --force-reinstall --no-deps ./bindings/python

CHILD=$TARGET/release/examples/memory_child
env -u STAUNCH_LIBRARY "$PY" benches/memory/mem_bench.py --testkit "$TARGET/debug/staunch-testkit" "$@" \
  "staunch-c=$W/idle {url} {n} {rows} text" \
  "staunch-c-prepared=$W/idle {url} {n} {rows} default" \
  "staunch-python=$PY benches/memory/mem_bench.py --child staunch {url} {n} {rows}" \
  "mysqlclient=$PY benches/memory/mem_bench.py --child mysqlclient {url} {n} {rows}" \
  "pymysql=$PY benches/memory/mem_bench.py --child pymysql {url} {n} {rows}" \
  "staunch-rust=$CHILD staunch {url} {n} {rows}" \
  "mysql-pool=$CHILD mysql-pool {url} {n} {rows}" \
  "r2d2=$CHILD r2d2 {url} {n} {rows}"
