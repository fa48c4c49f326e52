#!/usr/bin/env bash
# Readies MemChild.java (the JVM contenders of benches/memory/mem_bench.py)
# and prints the classpath to run it with:
#
#   cp=$(benches/memory/java/classpath.sh OUT)
#   java -cp "$cp" MemChild staunch-jdbc|hikari URL N ROWS
#
# Installs the staunch jar into the local Maven repository (`mvn install` in
# bindings/java, with a JDK >= 22: the jar's FFM part needs it), resolves
# pom.xml's dependencies (`mvn dependency:build-classpath`: the staunch jar,
# HikariCP, MariaDB Connector/J), compiles MemChild for Java 17 into
# OUT/classes and prints OUT/classes:<the dependencies>. Maven's output goes
# to stderr. JAVA_HOME: a JDK >= 22 (default: Temurin 25).
set -euo pipefail
out=${1:?usage: classpath.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
export PATH="$JAVA_HOME/bin:$PATH"
mkdir -p "$out/classes"
out=$(cd "$out" && pwd)
(cd "$root/bindings/java" && mvn -B -q install -Dmaven.test.skip=true ${STAUNCH_MAVEN_ARGS:-}) >&2
mvn -B -q -f "$here/pom.xml" ${STAUNCH_MAVEN_ARGS:-} dependency:build-classpath \
  -Dmdep.outputFile="$out/cp.txt" >&2
deps=$(cat "$out/cp.txt")
javac --release 17 -Xlint:all -Werror -d "$out/classes" -cp "$deps" "$here/MemChild.java" >&2
echo "$out/classes:$deps"
