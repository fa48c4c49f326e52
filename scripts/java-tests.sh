#!/usr/bin/env bash
# The JVM binding's tests (bindings/java): builds the C library and the test
# kit, then `mvn -B test` with JDK 25 (the FFM API is final since 22; the
# machine's default java is 17). Downloads the Maven dependencies on first use
# (JUnit 5, spring-jdbc/spring-tx, MyBatis, HikariCP, MariaDB Connector/J for the
# incident and metadata side-by-side tests; Flyway, Liquibase, Hibernate, jOOQ
# and Spring Boot 4.1.2's starters for ToolsTest and SpringBootAppTest).
#
#   scripts/java-tests.sh [-Dtest=ConformanceTest ...]   (extra arguments go to mvn)
#
# JAVA_HOME: Temurin 25 (or any JDK >= 22) unless JAVA_HOME already is one.
# STAUNCH_JAVA_PROFILE=release builds the library in release (default: debug, which
# the Rust stage of scripts/test.sh has already built, so this stage adds little).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

scripts/install-mariadb.sh

jdk_ok() { [ -x "$1/bin/java" ] && "$1/bin/java" -version 2>&1 | grep -Eq 'version "(2[2-9]|[3-9][0-9])'; }
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
echo "== cargo build -p staunch --lib ($profile), cargo build -p staunch-testkit"
if [ "$profile" = release ]; then
  cargo build -p staunch --lib --release
  lib=$target/release/libstaunch.so
else
  cargo build -p staunch --lib
  lib=$target/debug/libstaunch.so
fi
cargo build -p staunch-testkit

echo "== mvn test (bindings/java, $(java -version 2>&1 | head -1))"
cd bindings/java
mvn -B -q ${STAUNCH_MAVEN_ARGS:-} -Dstaunch.library="$lib" -Dstaunch.testkit="$target/debug/staunch-testkit" test "$@"
