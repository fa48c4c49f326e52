#!/usr/bin/env bash
# The Go binding's benchmarks (bindings/go/bench), side by side in one run
# against one throwaway MariaDB from staunch-testkit, with the release
# library: acquire + SELECT 1 + release at 1 and 8 goroutines (staunch
# native, staunch through OpenDB, database/sql + go-sql-driver/mysql at its
# defaults, and go-sql-driver with 8 idle connections), scanning 10,000
# rows, and #20's statements with parameters (a one-shot INSERT of 5 values,
# a repeated SELECT by id), each sent prepared (the Go default of both) and
# interpolated (staunch's interpolate_params, go-sql-driver's
# interpolateParams=true: the "-interp" implementations). benchstat
# summarizes; then the ratios to go-sql-driver at its defaults (> 1: staunch
# is faster), from benchstat's medians, and for the statements with
# parameters also to go-sql-driver with interpolateParams=true. Last, what
# observability costs: staunch-native-hooks (timings on, as an exporter's
# first scrape leaves them, and a Tracer that does nothing) over
# staunch-native at the defaults (issue 47), and the same measured in one
# loop that alternates the two pools (Select1Overhead: steadier).
#
#   scripts/go-bench.sh [COUNT] [BENCHTIME]     (default 8 runs of 1s each)
#   GO_BENCH_CPU=2,8 scripts/go-bench.sh        (also at GOMAXPROCS=8: each
#                        goroutine blocked in a cgo call holds a P, see README)
#   GO_BENCH='Select1|Scan10k' scripts/go-bench.sh   (only these benchmarks)
#
# The raw output stays in target/go-bench/bench.txt (benchstat it again with
# target/go-bin/benchstat). Besides ns/op, each benchmark reports cpu-ns/op:
# the client process's CPU time (user + system) per operation, steadier than
# the wall clock on a shared machine.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
COUNT=${1:-8}
BENCHTIME=${2:-1s}
# shellcheck source=scripts/go-env.sh
. scripts/go-env.sh

scripts/install-mariadb.sh
ensure_go
build_staunch release
OUT=${CARGO_TARGET_DIR:-$ROOT/target}/go-bench
mkdir -p "$OUT"
BENCHSTAT=${CARGO_TARGET_DIR:-$ROOT/target}/go-bin/benchstat
if [ ! -x "$BENCHSTAT" ]; then
  GOBIN=$(dirname "$BENCHSTAT") go install golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
fi

cd "$ROOT/bindings/go/bench"
# One test binary, run COUNT times: each run goes through every
# implementation in turn (interleaved), so a slow moment of a shared machine
# hits them all alike instead of one implementation's samples.
go test -c -o "$OUT/bench.test" .
echo "== $COUNT interleaved runs of the benchmarks, -benchtime $BENCHTIME ($(go version), GOMAXPROCS=${GOMAXPROCS:-$(nproc)})"
: >"$OUT/bench.txt"
for i in $(seq "$COUNT"); do
  echo "-- run $i/$COUNT"
  "$OUT/bench.test" -test.run '^$' -test.bench "${GO_BENCH:-.}" -test.count 1 -test.benchtime "$BENCHTIME" \
    ${GO_BENCH_CPU:+-test.cpu "$GO_BENCH_CPU"} -test.timeout 30m | tee -a "$OUT/bench.txt"
done
echo
"$BENCHSTAT" -col /impl "$OUT/bench.txt" | tee "$OUT/benchstat.txt"
echo
echo "== throughput ratios to go-sql-driver at its defaults (median sec/op of go-sql-driver / of each; > 1 = faster)"
"$BENCHSTAT" -format csv -col /impl "$OUT/bench.txt" 2>/dev/null | awk -F, '
  # The first table of the CSV is sec/op: a line of implementation names,
  # a line of units, then one line per benchmark.
  /^,/ && names == "" { for (i = 2; i <= NF; i++) if ($i != "") { col[i] = $i; names = names " " $i }; next }
  /^,sec\/op/ { next }
  names != "" && /^$/ { exit }
  names != "" && $1 != "geomean" && $2 != "" {
    base = $2; line = sprintf("%-20s", $1)
    for (i = 2; i <= NF; i++) if (i in col && col[i] != "go-sql-driver" && $i != "")
      line = line sprintf("  %s %.2fx", col[i], base / $i)
    print line
  }' | tee "$OUT/ratios.txt"
echo
echo "== what observability costs: staunch-native-hooks (timings on, a Tracer that does nothing) ÷ staunch-native at the defaults (throughput; 1.00 = free)"
"$BENCHSTAT" -format csv -col /impl "$OUT/bench.txt" 2>/dev/null | awk -F, '
  /^,/ && names == "" { for (i = 2; i <= NF; i++) if ($i != "") { col[$i] = i; names = 1 }; next }
  /^,sec\/op/ { next }
  names != "" && /^$/ { exit }
  names != "" && $1 != "geomean" && ("staunch-native-hooks" in col) && $col["staunch-native-hooks"] != "" {
    printf "%-20s  hooks/defaults %.3fx\n", $1, $col["staunch-native"] / $col["staunch-native-hooks"]
  }' | tee -a "$OUT/ratios.txt"
echo
echo "== the same in one loop (Select1Overhead: the two pools take turns in phases of 32 operations per goroutine): the hooks pool's time ÷ the defaults', wall and CPU (1.00 = free; issue 47's target <= 1.03)"
awk '
  # A line of Select1Overhead: its name, then value-unit pairs.
  /^BenchmarkSelect1Overhead\// {
    wv = cv = ""
    for (i = 3; i < NF; i++) {
      if ($(i + 1) == "hooks-over-defaults") wv = $i
      if ($(i + 1) == "cpu-hooks-over-defaults") cv = $i
    }
    if (wv != "" && cv != "") { k = $1; n[k]++; w[k, n[k]] = wv; c[k, n[k]] = cv }
  }
  function median(a, m,   i, j, t) {
    for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
  }
  END {
    for (k in n) {
      m = n[k]; line = ""
      for (i = 1; i <= m; i++) { a[i] = w[k, i]; b[i] = c[k, i]; line = line sprintf(" %.3f/%.3f", w[k, i], c[k, i]) }
      printf "%-32s  hooks/defaults wall %.3fx, cpu %.3fx (medians of %d runs, wall/cpu:%s)\n", k, median(a, m), median(b, m), m, line
    }
  }' "$OUT/bench.txt" | sort | tee -a "$OUT/ratios.txt"
echo
echo "== the statements with parameters: ratios to go-sql-driver with interpolateParams=true"
"$BENCHSTAT" -format csv -col /impl "$OUT/bench.txt" 2>/dev/null | awk -F, '
  /^,/ && names == "" { for (i = 2; i <= NF; i++) if ($i != "") { col[i] = $i; if ($i == "go-sql-driver-interp") b = i; names = names " " $i }; next }
  /^,sec\/op/ { next }
  names != "" && /^$/ { exit }
  names != "" && $1 != "geomean" && b && $b != "" {
    line = sprintf("%-20s", $1)
    for (i = 2; i <= NF; i++) if (i in col && col[i] ~ /^staunch/ && $i != "")
      line = line sprintf("  %s %.2fx", col[i], $b / $i)
    print line
  }' | tee -a "$OUT/ratios.txt"
