# Sourced by scripts/go-tests.sh and scripts/go-bench.sh: makes sure a Go
# toolchain is there, builds the Rust library (PROFILE: debug or release)
# and the test kit, and exports what cgo and the tests need:
#
#   CGO_LDFLAGS      -L<cargo output dir> -Wl,-rpath,<cargo output dir>
#   STAUNCH_TESTKIT  the staunch-testkit binary
#   STAUNCH_LIBDIR   the cargo output dir (libstaunch.so, libstaunch.so.1, libstaunch.a)
#   PKG_CONFIG_PATH  <cargo output dir>/pkgconfig first: a staunch.pc for this
#                    checkout (the repo's include/, the cargo output dir), which
#                    the binding's `#cgo pkg-config: staunch` reads as it reads
#                    an installed C package's
#
# Go: the `go` on PATH (or /usr/local/go/bin/go) if it is 1.22 or newer
# (go.mod's `go` line then fetches a newer toolchain through the Go proxy
# itself when needed, GOTOOLCHAIN=auto); else Debian's golang-go is installed
# and used to download the Go toolchain module (golang.org/toolchain, from
# the Go module proxy) into ~/.cache/staunch-go.
# shellcheck shell=bash

GO_BOOTSTRAP_VERSION=${GO_BOOTSTRAP_VERSION:-1.26.8}

go_ok() { # a go binary of version >= 1.22
  local v
  v=$("$1" env GOVERSION 2>/dev/null) || return 1
  v=${v#go}
  local major=${v%%.*} rest=${v#*.}
  local minor=${rest%%.*}
  minor=${minor%%[!0-9]*}
  [ "$major" -gt 1 ] || { [ "$major" = 1 ] && [ "${minor:-0}" -ge 22 ]; }
}

ensure_go() {
  local g
  if [ -z "${STAUNCH_GO_BOOTSTRAP:-}" ]; then
    for g in "$(command -v go || true)" /usr/local/go/bin/go "$HOME/.cache/staunch-go/bin/go"; do
      if [ -n "$g" ] && [ -x "$g" ] && go_ok "$g"; then
        export PATH="$(dirname "$g"):$PATH"
        return 0
      fi
    done
  fi
  local old
  old=$(command -v go || true)
  if [ -z "$old" ]; then
    echo "installing golang-go from Debian's packages (to fetch a newer toolchain with it)..."
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq golang-go >/dev/null
    old=$(command -v go)
  fi
  local arch
  arch=$("$old" env GOARCH)
  local cache="$HOME/.cache/staunch-go"
  mkdir -p "$cache"
  echo "downloading the Go $GO_BOOTSTRAP_VERSION toolchain module through $("$old" env GOPROXY)..."
  local dir
  dir=$(cd "$cache" && GOFLAGS=-modcacherw GOMODCACHE="$cache/mod" GO111MODULE=on \
    "$old" mod download -json "golang.org/toolchain@v0.0.1-go$GO_BOOTSTRAP_VERSION.linux-$arch" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -n "$dir" ] && [ -f "$dir/bin/go" ] || { echo "go-env: no toolchain in the download" >&2; return 1; }
  # Module zips do not keep the executable bits.
  chmod +x "$dir"/bin/* "$dir"/pkg/tool/*/* 2>/dev/null || true
  ln -sfn "$dir" "$cache/root"
  mkdir -p "$cache/bin"
  ln -sf "$cache/root/bin/go" "$cache/bin/go"
  ln -sf "$cache/root/bin/gofmt" "$cache/bin/gofmt"
  export PATH="$cache/bin:$PATH"
  go_ok "$cache/bin/go"
}

ensure_pkg_config() { # cgo runs it for the binding's `#cgo pkg-config: staunch`
  command -v pkg-config >/dev/null 2>&1 && return 0
  echo "installing pkg-config from Debian's packages..."
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pkg-config >/dev/null
}

build_staunch() { # build_staunch debug|release
  local profile=$1 flag=
  [ "$profile" = release ] && flag=--release
  local target=${CARGO_TARGET_DIR:-$ROOT/target}
  echo "== cargo build -p staunch --lib --features mimalloc $flag; cargo build -p staunch-testkit"
  cargo build -q -p staunch --lib --features mimalloc $flag
  cargo build -q -p staunch-testkit
  STAUNCH_LIBDIR="$target/$profile"
  # The cdylib's SONAME is libstaunch.so.1 (build.rs); cargo writes only
  # libstaunch.so.
  ln -sf libstaunch.so "$STAUNCH_LIBDIR/libstaunch.so.1"
  export STAUNCH_LIBDIR
  ensure_pkg_config
  mkdir -p "$STAUNCH_LIBDIR/pkgconfig"
  cat > "$STAUNCH_LIBDIR/pkgconfig/staunch.pc" <<EOF
# Written by scripts/go-env.sh: staunch as built in this checkout.
libdir=$STAUNCH_LIBDIR
includedir=$ROOT/include

Name: staunch
Description: staunch built in $ROOT (not installed)
Version: $("$ROOT/scripts/version.sh")
Cflags: -I\${includedir}
Libs: -L\${libdir} -lstaunch
EOF
  export PKG_CONFIG_PATH="$STAUNCH_LIBDIR/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
  # The rpath lets the test binaries find libstaunch.so without
  # LD_LIBRARY_PATH; -L serves the static build (-tags staunch_static),
  # which does not use pkg-config.
  export CGO_LDFLAGS="-L$STAUNCH_LIBDIR -Wl,-rpath,$STAUNCH_LIBDIR"
  export STAUNCH_TESTKIT="$target/debug/staunch-testkit"
}
