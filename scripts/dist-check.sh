#!/usr/bin/env bash
# Proves each artifact scripts/dist.sh wrote into dist/ where the checkout is
# not: from a temporary directory outside it, each is installed the way a
# user installs it, and a small program (scripts/dist/check/) opens a pool on
# a test-kit server, borrows, queries with a parameter, cancels a running
# statement from another thread, goes on on the same connection, returns it
# and closes the pool:
#
#   deb      dpkg -i the three .debs; a C program built with only
#            `pkg-config --cflags --libs staunch`, one with CMake's
#            find_package(staunch 1.0); the -dbgsym's debug file matches the
#            library's build id; then the Go module (below); apt-get remove
#   go       the module zip through GOPROXY=file://dist/goproxy, fresh
#            GOPATH and GOMODCACHE, against the installed .deb (no CGO_* flags:
#            the binding's `#cgo pkg-config: staunch` finds the .deb's .pc)
#   tarball  unpacked into a fresh prefix: pkg-config (shared), CMake (shared
#            and static), then the Go module as above against the prefix
#            (PKG_CONFIG_PATH=PREFIX/lib/pkgconfig, no CGO_* flags)
#   wheel    into a fresh venv, with no cargo on PATH
#   (deb and wheel also: resident memory per idle connection and after large
#   answers, within the shipped build's bounds: benches/memory)
#   sdist    into a fresh venv, built by cargo (the crate inside the sdist)
#   maven    Check.java with the jar that Maven resolves from dist/maven into a
#            fresh local repository (no STAUNCH_LIBRARY: the jar's own library)
#   crate    a scratch Cargo project whose `staunch` is [patch]ed to the
#            unpacked .crate
#
# Usage: scripts/dist-check.sh [ARTIFACT ...]   (default: all, in this order)
# Needs root for dpkg/apt-get. Installs pkg-config and cmake when missing.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
DIST=$REPO/dist
VERSION=$("$REPO/scripts/version.sh")
MAJOR=${VERSION%%.*}
CRATE_VERSION=$("$REPO/scripts/version.sh" --crate)
CARGO_TARGET=${CARGO_TARGET_DIR:-$REPO/target}
case $CARGO_TARGET in /*) ;; *) CARGO_TARGET=$REPO/$CARGO_TARGET ;; esac
export CARGO_TERM_COLOR=never

all=(deb tarball wheel sdist maven crate)
checks=("$@")
[ ${#checks[@]} -gt 0 ] || checks=("${all[@]}")
for c in "${checks[@]}"; do
  case " ${all[*]} " in *" $c "*) ;; *) echo "dist-check.sh: unknown artifact $c (${all[*]})" >&2; exit 2 ;; esac
done
[ -d "$DIST" ] || { echo "dist-check.sh: no dist/ (run scripts/dist.sh)" >&2; exit 1; }

for tool in pkg-config cmake; do
  if ! command -v $tool >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pkg-config cmake >/dev/null
    break
  fi
done

# The test kit's server (built from the checkout: it is the test's server,
# not an artifact).
echo "== dist-check: the test kit (cargo build -p staunch-testkit) and its server"
(cd "$REPO" && cargo build -p staunch-testkit)
TESTKIT=$CARGO_TARGET/debug/staunch-testkit

W=$(mktemp -d /tmp/staunch-dist-check-XXXXXX)
debs_installed=
cleanup() {
  local code=$?
  if [ -n "$debs_installed" ]; then
    DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq "libstaunch$MAJOR-dbgsym" libstaunch-dev "libstaunch$MAJOR" >/dev/null 2>&1 || true
  fi
  if [ -n "${TK_PID:-}" ]; then
    if [ -n "${TK[1]:-}" ]; then echo quit >&"${TK[1]}" 2>/dev/null || true; fi
    wait "$TK_PID" 2>/dev/null || true
  fi
  rm -rf "$W"
  exit $code
}
trap cleanup EXIT
cd "$W"
cp -r "$REPO/scripts/dist/check" "$W/src"

coproc TK { exec "$TESTKIT" server 2>"$W/testkit.log"; }
TK_PID=$TK_PID
# Bounded: a server that never says it is ready fails here, with its log.
read -t 120 -r ready <&"${TK[0]}" || { echo "dist-check: the test kit did not say it was ready within 120 s" >&2; cat "$W/testkit.log" >&2; exit 1; }
URL=$(python3 -c 'import json, sys; r = json.loads(sys.argv[1]); assert r["ready"], r; print(r["url"])' "$ready")

results=()
section() { echo "== dist-check: $*"; t_section=$SECONDS; }
passed() { results+=("$(printf '%-10s %4ds  %s' "$1" $((SECONDS - t_section)) "$2")"); }

# loads_from BINARY LIBRARY: the binary's libstaunch resolves to LIBRARY
# (through links: /lib is /usr/lib on merged-/usr systems).
loads_from() {
  local got
  got=$(ldd "$1" | awk '/libstaunch[.]so/ {print $3}')
  [ -n "$got" ] && [ "$(readlink -f "$got")" = "$(readlink -f "$2")" ] \
    || { echo "$1 loads libstaunch from '$got', not $2" >&2; ldd "$1" >&2; return 1; }
}

# memory_check CONTENDER=COMMAND...: resident memory per connection of each
# (benches/memory/mem_bench.py, on a server of its own) within the shipped
# build's bounds: 64 KB per idle connection and 128 KB after each of 100
# connections carried a 10,000-row answer (measured: about 20 and 25-60; the
# allocator's huge pages had made it 4,100 and 4,200).
memory_check() {
  python3 "$REPO/benches/memory/mem_bench.py" --testkit "$TESTKIT" --sizes 100 --rows 10000 \
    --check-n 100 --check-kb 64 --check-after-kb 128 "$@" 2>"$W/mem.log" \
    || { cat "$W/mem.log" >&2; return 1; }
}

newest_glibc() { objdump -T "$1" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n1; }

check_go() { # check_go deb|tarball: against the C package the .debs installed, or the unpacked tarball
  local from=$1 lib=/usr/lib/x86_64-linux-gnu/libstaunch.so.$MAJOR
  section "Go module from GOPROXY=file://dist/goproxy, fresh GOPATH and GOMODCACHE, the $from's library through pkg-config"
  ROOT=$REPO source "$REPO/scripts/go-env.sh"
  ensure_go >/dev/null
  mkdir -p "$W/go-$from"
  cp "$W/src/go/main.go" "$W/go-$from/"
  local gomod
  gomod=$(sed -n 's/^module //p' "$REPO/bindings/go/go.mod")
  (
    cd "$W/go-$from"
    export GOPATH=$W/gopath-$from GOMODCACHE=$W/gomodcache-$from GOPROXY=file://$DIST/goproxy GOSUMDB=off \
      GOFLAGS=-modcacherw GOTOOLCHAIN=local
    unset CGO_CFLAGS CGO_LDFLAGS CGO_CPPFLAGS PKG_CONFIG_PATH LD_LIBRARY_PATH
    if [ "$from" = tarball ]; then
      # The one setting a prefix needs: where its relocatable staunch.pc is.
      export PKG_CONFIG_PATH=$W/prefix/lib/pkgconfig
      lib=$W/prefix/lib/libstaunch.so.$MAJOR
    fi
    go mod init staunch.invalid/distcheck >/dev/null 2>&1
    go get "$gomod@v$VERSION" 2>&1 | grep -v '^go: downloading' || true
    go build -o check-go .
    test -d "$GOMODCACHE/$gomod@v$VERSION" || { echo "the module is not in the fresh GOMODCACHE" >&2; exit 1; }
    # The tarball's library is not on the loader's path: a program built
    # against it runs with LD_LIBRARY_PATH (or an rpath of its own).
    [ "$from" = deb ] || export LD_LIBRARY_PATH=$W/prefix/lib
    loads_from ./check-go "$lib"
    ./check-go "$URL"
    if [ "$from" = deb ]; then
      # The optional modules nested in the binding resolve too: staunch's
      # from the dist tree, their third-party requirements (client_golang,
      # OpenTelemetry) from the module proxy this machine uses.
      local sub
      for sub in staunchprom staunchotel; do
        (
          export GOPROXY="file://$DIST/goproxy,$(GOPROXY= go env GOPROXY)" \
            GONOSUMDB="$gomod" GOSUMDB=sum.golang.org
          mkdir -p "$W/go-$sub" && cd "$W/go-$sub"
          go mod init staunch.invalid/distcheck-$sub >/dev/null 2>&1
          printf 'package main\n\nimport _ "%s"\n\nfunc main() {}\n' "$gomod/$sub" >main.go
          go get "$gomod/$sub@v$VERSION" 2>&1 | grep -v '^go: downloading' || true
          go build -o /dev/null .
          test -d "$GOMODCACHE/$gomod/$sub@v$VERSION" || { echo "$sub is not in the fresh GOMODCACHE" >&2; exit 1; }
          echo "go get $gomod/$sub@v$VERSION: built"
        )
      done
    fi
  ) | tee "$W/go-$from.out"
  passed "go-$from" "$(tail -n1 "$W/go-$from.out")"
}

for c in "${checks[@]}"; do
  case $c in
    deb)
      section "Debian packages: dpkg -i, pkg-config and find_package consumers, debug symbols, apt-get remove"
      if dpkg -s "libstaunch$MAJOR" >/dev/null 2>&1; then
        echo "dist-check: libstaunch$MAJOR is already installed on this machine; not touching it" >&2
        exit 1
      fi
      debs_installed=1
      dpkg -i "$DIST/libstaunch${MAJOR}_${VERSION}_amd64.deb" "$DIST/libstaunch-dev_${VERSION}_amd64.deb" \
        "$DIST/libstaunch${MAJOR}-dbgsym_${VERSION}_amd64.deb" >/dev/null
      mkdir -p "$W/deb"
      # shellcheck disable=SC2046
      cc -std=c11 -Wall -Wextra -Wpedantic -Werror -o "$W/deb/check-pc" "$W/src/check.c" \
        $(pkg-config --cflags --libs staunch) -pthread
      loads_from "$W/deb/check-pc" "/usr/lib/x86_64-linux-gnu/libstaunch.so.$MAJOR"
      "$W/deb/check-pc" "$URL" | tee "$W/deb.out" | sed 's/^/   pkg-config: /'
      cmake -S "$W/src" -B "$W/deb/cmake" >/dev/null
      cmake --build "$W/deb/cmake" >/dev/null
      "$W/deb/cmake/check_cmake" "$URL" | sed 's/^/   find_package: /'
      "$W/deb/cmake/check_static" "$URL" | sed 's/^/   find_package, static: /'
      lib=/usr/lib/x86_64-linux-gnu/libstaunch.so.$MAJOR
      id=$(readelf -n "$lib" | awk '/Build ID/ {print $3}')
      dbgfile=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
      test -f "$dbgfile" || { echo "no $dbgfile for the library's build id $id" >&2; exit 1; }
      grep -q '\.debug_line' <<<"$(readelf -S "$dbgfile")" || { echo "$dbgfile holds no .debug_line" >&2; exit 1; }
      ! grep -q '\.debug_' <<<"$(readelf -S "$lib")" || { echo "$lib still holds debug sections" >&2; exit 1; }
      echo "   debug symbols: $dbgfile (build id of $lib); the library itself has none"
      echo "   the library needs at most GLIBC_$(newest_glibc "$lib")"
      passed deb "$(tail -n1 "$W/deb.out")"
      section "memory per connection of the .deb's library (issue 50)"
      # shellcheck disable=SC2046
      cc -std=c11 -O2 -Wall -Wextra -Werror -o "$W/deb/idle" "$REPO/benches/memory/idle.c" \
        $(pkg-config --cflags --libs staunch)
      loads_from "$W/deb/idle" "$lib"
      memory_check "staunch-deb=$W/deb/idle {url} {n} {rows} text" \
        "staunch-deb-prepared=$W/deb/idle {url} {n} {rows} default" | tee "$W/deb-mem.out"
      passed memory "$(tail -n1 "$W/deb-mem.out")"
      check_go deb
      section "apt-get remove"
      DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq "libstaunch$MAJOR-dbgsym" libstaunch-dev "libstaunch$MAJOR" >/dev/null
      debs_installed=
      for f in /usr/include/staunch.h "$lib" /usr/lib/x86_64-linux-gnu/pkgconfig/staunch.pc "$dbgfile"; do
        [ ! -e "$f" ] || { echo "$f is still there after apt-get remove" >&2; exit 1; }
      done
      ! pkg-config --exists staunch || { echo "pkg-config still finds staunch" >&2; exit 1; }
      passed remove "removed: no header, library, .pc or debug file left" ;;
    tarball)
      section "tarball into a fresh prefix"
      mkdir -p "$W/prefix"
      tar -xzf "$DIST/libstaunch-$VERSION-linux-x86_64.tar.gz" -C "$W/prefix" --strip-components=1
      (cd "$W/prefix" && find . -type f -o -type l | sort | sed 's/^/   /')
      export PKG_CONFIG_PATH=$W/prefix/lib/pkgconfig
      libdir=$(pkg-config --variable=libdir staunch)
      # shellcheck disable=SC2046
      cc -std=c11 -Wall -Wextra -Wpedantic -Werror -o "$W/check-tar" "$W/src/check.c" \
        $(pkg-config --cflags --libs staunch) -pthread -Wl,-rpath,"$libdir"
      loads_from "$W/check-tar" "$libdir/libstaunch.so.$MAJOR"
      "$W/check-tar" "$URL" | tee "$W/tar.out" | sed 's/^/   pkg-config: /'
      unset PKG_CONFIG_PATH
      cmake -S "$W/src" -B "$W/tar-cmake" -DCMAKE_PREFIX_PATH="$W/prefix" >/dev/null
      cmake --build "$W/tar-cmake" >/dev/null
      "$W/tar-cmake/check_cmake" "$URL" | sed 's/^/   find_package: /'
      "$W/tar-cmake/check_static" "$URL" | sed 's/^/   find_package, static: /'
      passed tarball "$(tail -n1 "$W/tar.out")"
      check_go tarball ;;
    wheel)
      section "wheel into a fresh venv, no cargo on PATH"
      python3 -m venv "$W/venv-wheel"
      (
        export PATH=$W/venv-wheel/bin:/usr/local/bin:/usr/bin:/bin
        ! command -v cargo >/dev/null || { echo "cargo is on PATH" >&2; exit 1; }
        pip install -q --disable-pip-version-check --no-index "$DIST"/staunch-"$VERSION"-cp39-abi3-manylinux*.whl
        cd "$W" && env -u STAUNCH_LIBRARY python "$W/src/check.py" "$URL"
      ) | tee "$W/wheel.out"
      passed wheel "$(tail -n1 "$W/wheel.out")"
      section "memory per connection through the wheel (issue 50)"
      (
        unset STAUNCH_LIBRARY
        memory_check \
          "staunch-wheel=$W/venv-wheel/bin/python $REPO/benches/memory/mem_bench.py --child staunch {url} {n} {rows}"
      ) | tee "$W/wheel-mem.out"
      passed memory "$(tail -n1 "$W/wheel-mem.out")" ;;
    sdist)
      section "sdist into a fresh venv, built by cargo"
      python3 -m venv "$W/venv-sdist"
      (
        # The crate's compiled dependencies are reused from the checkout's
        # target directory (a cache keyed by their sources; the crate itself
        # is compiled from the sdist).
        export CARGO_TARGET_DIR=$CARGO_TARGET/dist-check-sdist
        [ -d "$CARGO_TARGET_DIR" ] || { [ -d "$CARGO_TARGET/release" ] && mkdir -p "$CARGO_TARGET_DIR" \
          && cp -al "$CARGO_TARGET/release" "$CARGO_TARGET_DIR/release"; } || true
        "$W/venv-sdist/bin/pip" install -q --disable-pip-version-check "$DIST/staunch-$VERSION.tar.gz"
        cd "$W" && env -u STAUNCH_LIBRARY "$W/venv-sdist/bin/python" "$W/src/check.py" "$URL"
      ) | tee "$W/sdist.out"
      passed sdist "$(tail -n1 "$W/sdist.out")" ;;
    maven)
      section "jar from dist/maven, fresh local Maven repository, no STAUNCH_LIBRARY"
      jdk_ok() { [ -x "$1/bin/java" ] && [[ $("$1/bin/java" -version 2>&1) =~ version\ \"(2[2-9]|[3-9][0-9]) ]]; }
      if [ -z "${JAVA_HOME:-}" ] || ! jdk_ok "$JAVA_HOME"; then
        JAVA_HOME=
        for d in /usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/temurin-25-jdk* /usr/lib/jvm/*25* /usr/lib/jvm/*2[2-9]*; do
          if jdk_ok "$d"; then JAVA_HOME=$d; break; fi
        done
        [ -n "$JAVA_HOME" ] || { echo "dist-check: no JDK >= 22 under /usr/lib/jvm" >&2; exit 1; }
      fi
      export JAVA_HOME
      mkdir -p "$W/maven"
      cp "$W/src/pom.xml" "$W/src/Check.java" "$W/maven/"
      (
        cd "$W/maven"
        export PATH=$JAVA_HOME/bin:$PATH
        mvn -B -q -Dmaven.repo.local="$W/m2" -Dstaunch.repo="file://$DIST/maven" -Dstaunch.version="$VERSION" \
          org.apache.maven.plugins:maven-dependency-plugin:3.8.1:build-classpath -Dmdep.outputFile="$W/maven/cp.txt" \
          2>&1 | grep -v 'sun.misc.Unsafe\|WARNING: Please consider' || true
        cp=$(cat cp.txt)
        [ "$cp" = "$W/m2/dev/staunch/staunch/$VERSION/staunch-$VERSION.jar" ] \
          || { echo "the class path is '$cp', not the jar alone from the fresh repository" >&2; exit 1; }
        env -u STAUNCH_LIBRARY java --enable-native-access=ALL-UNNAMED -cp "$cp" Check.java "$URL"
      ) | tee "$W/maven.out"
      passed maven "$(tail -n1 "$W/maven.out")" ;;
    crate)
      section "the packaged .crate, [patch]ed into a scratch project"
      mkdir -p "$W/crate/src" "$W/staunch-crate"
      tar -xzf "$DIST/staunch-$CRATE_VERSION.crate" -C "$W/staunch-crate" --strip-components=1
      cp "$W/src/rust/main.rs" "$W/crate/src/main.rs"
      cat > "$W/crate/Cargo.toml" <<EOF
[package]
name = "staunch-dist-check"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
staunch = "=$CRATE_VERSION"

[patch.crates-io]
staunch = { path = "$W/staunch-crate" }
EOF
      # The packaged crate's lock file pins its dependencies (and makes
      # cargo reuse what the checkout's target directory already compiled).
      cp "$W/staunch-crate/Cargo.lock" "$W/crate/Cargo.lock"
      (
        cd "$W/crate"
        CARGO_TARGET_DIR=$CARGO_TARGET cargo build -q
        from=$(cargo metadata --format-version 1 -q | python3 -c '
import json, sys
print(*[p["manifest_path"] for p in json.load(sys.stdin)["packages"] if p["name"] == "staunch"])')
        [ "$from" = "$W/staunch-crate/Cargo.toml" ] || { echo "staunch comes from $from, not the .crate" >&2; exit 1; }
        "$CARGO_TARGET/debug/staunch-dist-check" "$URL"
      ) | tee "$W/crate.out"
      passed crate "$(tail -n1 "$W/crate.out")" ;;
  esac
done

echo "== dist-check: every artifact works outside the checkout (dir $W, seconds each)"
printf '   %s\n' "${results[@]}"
