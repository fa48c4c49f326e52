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
#   staunch-go, staunch-go-sql, go-sql-driver   benches/memory/go: the Go
#                        module's pool, database/sql over it, go-sql-driver
#   staunch-jdbc-17/-25, hikari-17/-25   benches/memory/java: the jar's JDBC
#                        DataSource (JNI on 17, FFM on 25), HikariCP +
#                        MariaDB Connector/J
#
# Usage: scripts/mem-bench.sh [--sizes 1,100,1000] [--rows 10000] [--only a,b] [--json FILE]
# (about 15 minutes after the builds, each "after" figure 12 s after the
# return; installs libmariadb-dev, pkg-config and the Python peers into
# target/py-venv as scripts/python-bench.sh does; needs Go, Maven, JDK 17
# and 25)

set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
scripts/install-mariadb.sh
# shellcheck source=scripts/python-peers.sh
. scripts/python-peers.sh
python_peers_venv

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

# Go: the binding linked against the shipped library in $W (through a
# staunch.pc for it, as scripts/go-env.sh writes one for target/), and
# go-sql-driver/mysql (pinned by benches/memory/go/go.sum).
# shellcheck source=scripts/go-env.sh
. scripts/go-env.sh
ensure_go
ensure_pkg_config
cat > "$W/staunch.pc" <<EOF
libdir=$W
includedir=$ROOT/include

Name: staunch
Description: staunch as shipped (scripts/mem-bench.sh)
Version: $(scripts/version.sh)
Cflags: -I\${includedir}
Libs: -L\${libdir} -lstaunch
EOF
echo "== go build benches/memory/go"
(cd benches/memory/go && PKG_CONFIG_PATH=$W CGO_LDFLAGS="-Wl,-rpath,$W" go build -o "$W/memchild" .)
# JVM: JDK 17 (the jar's JNI path: the shim beside libstaunch.so) and
# Temurin 25 (FFM); the staunch jar, HikariCP and Connector/J by Maven.
JDK17=${STAUNCH_JDK17:-/usr/lib/jvm/java-17-openjdk-amd64}
JDK25=${STAUNCH_JDK25:-/usr/lib/jvm/temurin-25-jdk-amd64}
cc -shared -fPIC -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Iinclude \
  -I"$JDK25/include" -I"$JDK25/include/linux" bindings/java/src/main/c/staunch_jni.c \
  -o "$W/libstaunch_jni.so" -ldl -lpthread
echo "== the staunch jar and benches/memory/java/MemChild.java (Maven)"
JCP=$(JAVA_HOME=$JDK25 benches/memory/java/classpath.sh "$W/java")

CHILD=$TARGET/release/examples/memory_child
env -u STAUNCH_LIBRARY "$PY" benches/memory/mem_bench.py --testkit "$TARGET/debug/staunch-testkit" "$@" \
  "staunch-c=$W/idle {url} {n} {rows} text" \
  "staunch-c-prepared=$W/idle {url} {n} {rows} default" \
  "staunch-python=$PY benches/memory/mem_bench.py --child staunch {url} {n} {rows}" \
  "mysqlclient=$PY benches/memory/mem_bench.py --child mysqlclient {url} {n} {rows}" \
  "pymysql=$PY benches/memory/mem_bench.py --child pymysql {url} {n} {rows}" \
  "staunch-rust=$CHILD staunch {url} {n} {rows}" \
  "mysql-pool=$CHILD mysql-pool {url} {n} {rows}" \
  "r2d2=$CHILD r2d2 {url} {n} {rows}" \
  "staunch-go=$W/memchild staunch {url} {n} {rows}" \
  "staunch-go-sql=$W/memchild staunch-sql {url} {n} {rows}" \
  "go-sql-driver=$W/memchild go-sql-driver {url} {n} {rows}" \
  "staunch-jdbc-17=$JDK17/bin/java -Dstaunch.library=$W/libstaunch.so -cp $JCP MemChild staunch-jdbc {url} {n} {rows}" \
  "hikari-17=$JDK17/bin/java -cp $JCP MemChild hikari {url} {n} {rows}" \
  "staunch-jdbc-25=$JDK25/bin/java --enable-native-access=ALL-UNNAMED -Dstaunch.library=$W/libstaunch.so -cp $JCP MemChild staunch-jdbc {url} {n} {rows}" \
  "hikari-25=$JDK25/bin/java -cp $JCP MemChild hikari {url} {n} {rows}"
