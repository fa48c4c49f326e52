#!/usr/bin/env bash
# Outside suites of the Go binding, run twice against one throwaway MariaDB
# (staunch-testkit): once with go-sql-driver/mysql, once with staunch in its
# place, their code unchanged. Called by scripts/go-tests.sh (after go-env.sh
# and build_staunch); `scripts/go-suites.sh` alone does both.
#
#   sqlx v1.4.0: its own tests (SQLX_MYSQL_DSN), fetched through the Go module
#   proxy into the module cache, copied to a temp dir; for staunch, a replace
#   directive points github.com/go-sql-driver/mysql at bindings/go/suites/mysqlshim
#   (registers staunch's driver as "mysql"). PostgreSQL and SQLite tests are
#   skipped (SQLX_*_DSN=skip), as sqlx's own CI does without those servers.
#
# GORM's tests/ module is not run: it is a nested module of gorm.io/gorm that
# the module proxy does not serve (gorm.io/gorm's zip leaves tests/ out, and
# gorm.io/gorm/tests is no module path), and CI reaches only the registries.
#
# A suite passes for staunch when it fails no test that passes with
# go-sql-driver. Timing-flaky tests retried once: none so far.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
if [ -z "${STAUNCH_LIBDIR:-}" ]; then
  # shellcheck source=scripts/go-env.sh
  . scripts/go-env.sh
  scripts/install-mariadb.sh
  ensure_go
  build_staunch debug
fi
SQLX_VERSION=v1.4.0

work=$(mktemp -d)
cleanup() {
  if [ -n "${TK_PID:-}" ]; then exec {TK[1]}>&-; wait "$TK_PID" 2>/dev/null || true; fi
  chmod -R u+w "$work" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

t0=$SECONDS
echo "== go mod download github.com/jmoiron/sqlx@$SQLX_VERSION"
src=$(cd "$work" && GOFLAGS=-mod=mod go mod download -json "github.com/jmoiron/sqlx@$SQLX_VERSION" |
  sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -n "$src" ] && [ -d "$src" ] || { echo "go-suites: sqlx not downloaded" >&2; exit 1; }
for d in gosqldriver staunch; do
  cp -r "$src" "$work/sqlx-$d"
  chmod -R u+w "$work/sqlx-$d"
done
(cd "$work/sqlx-staunch" &&
  go mod edit -replace "github.com/go-sql-driver/mysql=$ROOT/bindings/go/suites/mysqlshim" \
    -replace "github.com/staunch-db/staunch/bindings/go=$ROOT/bindings/go")
(cd "$work/sqlx-gosqldriver" && GOFLAGS=-mod=mod go mod download)
(cd "$work/sqlx-staunch" && GOFLAGS=-mod=mod go mod tidy >/dev/null 2>&1 || true)
echo "   (download and copy: $((SECONDS - t0)) s)"

echo "== starting a throwaway MariaDB (staunch-testkit server)"
coproc TK { exec "$STAUNCH_TESTKIT" server; }
read -t 120 -r ready <&"${TK[0]}"
dsn=$(printf '%s' "$ready" | python3 -c '
import json, sys, urllib.parse
u = urllib.parse.urlsplit(json.load(sys.stdin)["servers"][0]["url"])
q = urllib.parse.unquote
print(q(u.username or "") + ":" + q(u.password or "") + "@tcp(%s:%d)%s?parseTime=true" % (u.hostname, u.port, u.path))')

# run_suite NAME DIR: go test -v, the verdict of every test into $work/NAME.results
run_suite() {
  local name=$1 dir=$2 t=$SECONDS
  echo "== sqlx's own tests with $name"
  (cd "$dir" && SQLX_MYSQL_DSN="$dsn" SQLX_POSTGRES_DSN=skip SQLX_SQLITE_DSN=skip \
    GOFLAGS=-mod=mod go test -count=1 -v -timeout 5m ./... >"$work/$name.log" 2>&1) || true
  if grep -q 'Disabling MySQL' "$work/$name.log"; then
    echo "sqlx with $name: MySQL tests were disabled:" >&2
    cat "$work/$name.log" >&2
    exit 1
  fi
  grep -E '^\s*--- (PASS|FAIL|SKIP)' "$work/$name.log" | sed -E 's/^\s*--- (PASS|FAIL|SKIP): (\S+).*/\2 \1/' | sort >"$work/$name.results"
  echo "   $(grep -c ' PASS$' "$work/$name.results") passed, $(grep -c ' FAIL$' "$work/$name.results" || true) failed, $(grep -c ' SKIP$' "$work/$name.results" || true) skipped ($((SECONDS - t)) s)"
}
run_suite gosqldriver "$work/sqlx-gosqldriver"
run_suite staunch "$work/sqlx-staunch"

# Every test that passes with go-sql-driver must pass with staunch.
bad=$(join <(grep ' PASS$' "$work/gosqldriver.results") <(grep -v ' PASS$' "$work/staunch.results" || true) | awk '{print $1}')
missing=$(join -v1 <(grep ' PASS$' "$work/gosqldriver.results") "$work/staunch.results" | awk '{print $1}')
if [ -n "$bad$missing" ]; then
  echo "sqlx: passes with go-sql-driver, not with staunch: $bad $missing" >&2
  grep -v -E '^(=== |--- PASS|    --- PASS)' "$work/staunch.log" >&2
  exit 1
fi
p=$(grep -c ' PASS$' "$work/staunch.results")
f=$(grep -c ' FAIL$' "$work/staunch.results" || true)
echo "sqlx: $p passed, $f failed (staunch); nothing failing that go-sql-driver passes ($((SECONDS - t0)) s)"
