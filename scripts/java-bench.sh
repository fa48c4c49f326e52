#!/usr/bin/env bash
# JMH benchmarks of the JVM binding, side by side in one run:
# getConnection + SELECT 1 + close at 1 and 8 threads, for
#   staunchNative     the native API (Pool.get + Conn.queryText)
#   staunchJdbc       StaunchDataSource (JDBC)
#   hikariConnectorJ  HikariCP 7.1.0 + MariaDB Connector/J 3.5.7
# each at its defaults, against the same throwaway MariaDB (staunch-testkit).
# Prints the JMH table and the ratios to HikariCP. Not part of the test stage.
#
#   scripts/java-bench.sh [quick]    (quick: shorter iterations)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
scripts/install-mariadb.sh >/dev/null
JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
"$JAVA_HOME/bin/java" -version 2>&1 | grep -Eq 'version "(2[2-9]|[3-9][0-9])' || JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64
export JAVA_HOME PATH="$JAVA_HOME/bin:$PATH"
target=${CARGO_TARGET_DIR:-$repo/target}

cargo build -p staunch --lib --release
cargo build -p staunch-testkit
lib=$target/release/libstaunch.so

echo "== building the binding and the benchmarks"
(cd bindings/java && mvn -B -q install -DskipTests ${STAUNCH_MAVEN_ARGS:-})
(cd bindings/java/bench && mvn -B -q ${STAUNCH_MAVEN_ARGS:-} package dependency:build-classpath -Dmdep.outputFile=target/cp.txt)
cp="$repo/bindings/java/bench/target/classes:$(cat bindings/java/bench/target/cp.txt)"

echo "== starting a throwaway MariaDB (staunch-testkit server)"
coproc TK { exec "$target/debug/staunch-testkit" server; }
read -r ready <&"${TK[0]}"
port=$(printf '%s' "$ready" | python3 -c 'import json,sys; print(json.load(sys.stdin)["servers"][0]["port"])')
trap 'exec {TK[1]}>&-; wait "$TK_PID" 2>/dev/null || true' EXIT

if [ "${1:-}" = quick ]; then iters=(-wi 1 -w 2s -i 2 -r 2s); else iters=(-wi 2 -w 3s -i 3 -r 4s); fi
out=$(mktemp)
for t in 1 8; do
  java -cp "$cp" org.openjdk.jmh.Main GetSelectClose -f 1 -t "$t" "${iters[@]}" \
    -jvmArgsAppend "--enable-native-access=ALL-UNNAMED -Dstaunch.library=$lib -Dstaunch.bench.port=$port" \
    -rf csv -rff "$out.$t.csv" | grep -E '^(Benchmark|GetSelectClose)' || true
done
echo
echo "== ratios to HikariCP + Connector/J (ops/ms, higher is better; targets: JDBC >= 0.8x, native >= 1x)"
python3 - "$out.1.csv" "$out.8.csv" <<'PY'
import csv, sys
for path, threads in zip(sys.argv[1:], (1, 8)):
    rows = {r["Benchmark"].rsplit(".", 1)[1]: float(r["Score"]) for r in csv.DictReader(open(path))}
    h = rows["hikariConnectorJ"]
    print(f"{threads} thread(s): hikari {h:8.2f} ops/ms | staunchJdbc {rows['staunchJdbc']:8.2f} ({rows['staunchJdbc']/h:.2f}x) | "
          f"staunchNative {rows['staunchNative']:8.2f} ({rows['staunchNative']/h:.2f}x)")
PY
rm -f "$out" "$out".*.csv
