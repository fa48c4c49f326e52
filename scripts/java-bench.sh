#!/usr/bin/env bash
# JMH benchmarks of the JVM binding, side by side in one run, at 1 and 8
# threads: GetSelectClose (getConnection + SELECT 1 + close) and QueryForList
# (Spring JdbcTemplate.queryForList of 1,000 rows by a bound parameter; the
# native API reads the same rows), for
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
(cd bindings/java && mvn -B -q install -Dmaven.test.skip=true ${STAUNCH_MAVEN_ARGS:-})
(cd bindings/java/bench && mvn -B -q ${STAUNCH_MAVEN_ARGS:-} package dependency:build-classpath -Dmdep.outputFile=target/cp.txt)
cp="$repo/bindings/java/bench/target/classes:$(cat bindings/java/bench/target/cp.txt)"

echo "== starting a throwaway MariaDB (staunch-testkit server)"
coproc TK { exec "$target/debug/staunch-testkit" server; }
read -r ready <&"${TK[0]}"
port=$(printf '%s' "$ready" | python3 -c 'import json,sys; print(json.load(sys.stdin)["servers"][0]["port"])')
trap 'exec {TK[1]}>&-; wait "$TK_PID" 2>/dev/null || true' EXIT

# The machine may be busy (CI, other builds): the three are interleaved, in
# rounds of one short JMH run each, and compared on the median of all their
# measurement iterations (the JMH tables of every round are printed too).
if [ "${1:-}" = quick ]; then rounds=1; iters=(-wi 1 -w 1s -i 2 -r 1s); else rounds=5; iters=(-wi 1 -w 1s -i 3 -r 1s); fi
out=$(mktemp -d)
benches=${STAUNCH_BENCHES:-GetSelectClose QueryForList}
for k in $benches; do
  for t in 1 8; do
    for r in $(seq "$rounds"); do
      for b in staunchNative staunchJdbc hikariConnectorJ; do
        java -cp "$cp" org.openjdk.jmh.Main "$k.$b\$" -f 1 -t "$t" "${iters[@]}" \
          -jvmArgsAppend "--enable-native-access=ALL-UNNAMED -Dstaunch.library=$lib -Dstaunch.bench.port=$port" \
          -rf json -rff "$out/$k-$t-$r-$b.json" | grep -E "^$k" | sed "s/^/threads=$t round=$r  /" || true
      done
    done
  done
done
echo
echo "== median throughput over every measurement iteration, and ratios to HikariCP + Connector/J"
echo "   (higher is better; issue #23's targets: JDBC >= 1.0x, native >= 1.1x)"
python3 - "$out" $benches <<'PY'
import glob, json, os, statistics, sys
d = sys.argv[1]
for k in sys.argv[2:]:
    unit = {"GetSelectClose": "ops/ms", "QueryForList": "ops/s"}.get(k, "ops")
    print()
    print(f"{k}")
    print("| threads | HikariCP + Connector/J | StaunchDataSource (JDBC) | staunch native API |")
    print("|---|---|---|---|")
    for t in (1, 8):
        med = {}
        for b in ("hikariConnectorJ", "staunchJdbc", "staunchNative"):
            xs = []
            for f in glob.glob(os.path.join(d, f"{k}-{t}-*-{b}.json")):
                for res in json.load(open(f)):
                    for fork in res["primaryMetric"]["rawData"]:
                        xs.extend(fork)
            med[b] = statistics.median(xs) if xs else float("nan")
        h = med["hikariConnectorJ"]
        print(f"| {t} | {h:.2f} {unit} (1.00x) | {med['staunchJdbc']:.2f} {unit} ({med['staunchJdbc']/h:.2f}x) | "
              f"{med['staunchNative']:.2f} {unit} ({med['staunchNative']/h:.2f}x) |")
PY
rm -rf "$out"
