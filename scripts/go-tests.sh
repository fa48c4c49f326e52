#!/usr/bin/env bash
# The Go binding's tests (bindings/go): builds the Rust library and the test
# kit, checks gofmt and go vet, runs `go test -race` (the conformance
# scenarios against throwaway MariaDB servers from staunch-testkit), builds
# and runs a few tests once more with the static library (-tags
# staunch_static), runs the sqlx/GORM interop module's tests, the
# Prometheus collector module's (staunchprom) and the OpenTelemetry tracer
# module's (staunchotel), and sqlx's own tests with go-sql-driver and with
# staunch (scripts/go-suites.sh).
#
# Usage: scripts/go-tests.sh   (one command from a fresh checkout)
# Env: STAUNCH_TEST_SLACK_MS (timing slack, default 500), GOFLAGS.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
# shellcheck source=scripts/go-env.sh
. scripts/go-env.sh

scripts/install-mariadb.sh
ensure_go
echo "== $(go version)"
build_staunch debug

cd "$ROOT/bindings/go"
echo "== gofmt"
bad=$(gofmt -l .)
if [ -n "$bad" ]; then
  echo "gofmt: not formatted:" >&2
  echo "$bad" >&2
  exit 1
fi
echo "== go vet"
go vet ./...
(cd interop && go vet ./...)
(cd staunchprom && go vet ./...)
(cd staunchotel && go vet ./...)
(cd suites/mysqlshim && go vet ./...)
"$ROOT/scripts/check-docs.sh" go run-go

echo "== go test -race (shared library)"
go test -race -count=1 -timeout 5m ./...

echo "== static link (-tags staunch_static): build, check, run"
bin=$(mktemp -d)/staunch-static.test
trap 'rm -rf "$(dirname "$bin")"' EXIT
CGO_LDFLAGS="-L$STAUNCH_LIBDIR" go test -c -tags staunch_static -o "$bin" .
if grep -q libstaunch <<<"$(ldd "$bin")"; then
  echo "the static build links libstaunch.so:" >&2
  ldd "$bin" >&2
  exit 1
fi
"$bin" -test.count=1 -test.run 'Test_conf_basic$|Test_conf_cancel_statement$|Test_conf_events$|Test_sql_conf_basic|Test_sql_streaming|Test_acquire_waits_in_the_netpoller$'

echo "== interop: sqlx and GORM over staunch.OpenDB and by DSN, gormstaunch (go test -race)"
(cd interop && go test -race -count=1 -timeout 3m ./...)

# Without -race: the collector keeps no state and starts no goroutine, and
# building client_golang for the race detector would add a minute cold.
echo "== staunchprom: the Prometheus collector against a pool (go test)"
(cd staunchprom && go test -count=1 -timeout 3m ./...)

# Without -race too: the tracer keeps no state of its own (the SDK's span
# recorder does, under its lock); one server, a few seconds.
echo "== staunchotel: OpenTelemetry spans and metrics of a pool (go test)"
(cd staunchotel && go test -count=1 -timeout 3m ./...)

echo "== outside suites: sqlx's own tests with go-sql-driver, then with staunch (scripts/go-suites.sh)"
"$ROOT/scripts/go-suites.sh"
echo "== Go binding: all passed"
