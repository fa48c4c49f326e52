#!/usr/bin/env bash
# Two version numbers, both in Cargo.toml: the Rust crate's ([workspace.package]
# version: the Rust API's semver, 2.x since the Rust face stopped being the
# `mysql` crate's), and the C library's ([package.metadata.staunch]
# library-version: the C ABI's, 1.x, additions only within a major; the
# SONAME's major). Everything else that states a version follows the
# library's:
#
#   src/ffi/mod.rs              STAUNCH_VERSION_MAJOR/_MINOR/_PATCH, STAUNCH_VERSION
#   include/staunch.h (+ _cdef)  the same macros (cbindgen, scripts/check-header.sh)
#   bindings/python/pyproject.toml   [project] version (the wheel's, the sdist's;
#                                    staunch.__version__ is the loaded library's)
#   bindings/java/pom.xml       the project's <version>
#   bindings/go/version.go      const Version
#
#   scripts/version.sh            print the library's version
#   scripts/version.sh --crate    print the Rust crate's version
#   scripts/version.sh --check    fail (exit 1, naming each file) on any drift
#   scripts/version.sh --update   rewrite them all from Cargo.toml (and regenerate
#                                 the header), after a bump of library-version
set -euo pipefail
cd "$(dirname "$0")/.."

rust_crate=$(sed -n '/^\[workspace.package\]/,/^\[/ s/^version *= *"\([^"]*\)".*/\1/p' Cargo.toml | head -n1)
crate=$(sed -n '/^\[package.metadata.staunch\]/,/^\[/ s/^library-version *= *"\([^"]*\)".*/\1/p' Cargo.toml | head -n1)
[[ $rust_crate =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] \
  || { echo "version.sh: no X.Y.Z version in Cargo.toml's [workspace.package] (got '$rust_crate')" >&2; exit 1; }
[[ $crate =~ ^([0-9]+)\.([0-9]+)\.([0-9]+)$ ]] \
  || { echo "version.sh: no X.Y.Z library-version in Cargo.toml's [package.metadata.staunch] (got '$crate')" >&2; exit 1; }
major=${BASH_REMATCH[1]} minor=$((10#${BASH_REMATCH[2]})) patch=$((10#${BASH_REMATCH[3]}))
number=$((major * 10000 + minor * 100 + patch))

ffi_const() { sed -n "s/^pub const $1: u32 = \([0-9]*\);/\1/p" src/ffi/mod.rs; }
header_macro() { sed -n "s/^#define $1 \([0-9]*\)$/\1/p" "$2"; }
pyproject() { sed -n '/^\[project\]/,/^\[/ s/^version *= *"\([^"]*\)".*/\1/p' bindings/python/pyproject.toml; }
# The project's own <version>: the only one indented by two spaces (a child
# of <project>; dependencies' and plugins' are deeper).
pom() { sed -n 's/^  <version>\(.*\)<\/version>$/\1/p' bindings/java/pom.xml; }
gover() { sed -n 's/^const Version = "\(.*\)"$/\1/p' bindings/go/version.go 2>/dev/null; }
# The Go modules nested in bindings/go (staunchprom, staunchotel) require the
# binding's module at this version (their `replace ../` serves a checkout;
# `go get` users, for whom a dependency's replace does not apply, get the
# tagged release).
GO_NESTED=(bindings/go/staunchprom bindings/go/staunchotel)
goreq() { sed -n 's|^\s*github.com/staunch-db/staunch/bindings/go v\(.*\)$|\1|p' "$1/go.mod"; }
# The pages that tell a user what to install name the release's artifacts.
INSTALL_PAGES=(README.md docs/install.md docs/bindings.md bindings/python/README.md bindings/go/README.md)
# Every version an install line names (the .deb, the tarball, the wheel and
# sdist, `go get ...@vX.Y.Z`, the Maven coordinate, "library X.Y.Z shown").
doc_versions() {
  grep -ohE 'libstaunch[0-9a-z-]*[_-][0-9]+\.[0-9]+\.[0-9]+|staunch-[0-9]+\.[0-9]+\.[0-9]+[.-]|bindings/go[a-z/]*@v[0-9]+\.[0-9]+\.[0-9]+|dev\.staunch:staunch:[0-9]+\.[0-9]+\.[0-9]+|[Ll]ibrary [0-9]+\.[0-9]+\.[0-9]+ shown' "$1" \
    | grep -oE '[0-9]+\.[0-9]+\.[0-9]+' | sort -u
}

case ${1:-} in
  "")
    echo "$crate" ;;
  --crate)
    echo "$rust_crate" ;;
  --check)
    bad=0
    want() { # want WHAT FOUND EXPECTED
      if [ "$2" != "$3" ]; then
        echo "version drift: $1 is '${2}', Cargo.toml's library-version says '${3}' (run scripts/version.sh --update)" >&2
        bad=1
      fi
    }
    want "src/ffi/mod.rs STAUNCH_VERSION_MAJOR" "$(ffi_const STAUNCH_VERSION_MAJOR)" "$major"
    want "src/ffi/mod.rs STAUNCH_VERSION_MINOR" "$(ffi_const STAUNCH_VERSION_MINOR)" "$minor"
    want "src/ffi/mod.rs STAUNCH_VERSION_PATCH" "$(ffi_const STAUNCH_VERSION_PATCH)" "$patch"
    want "src/ffi/mod.rs STAUNCH_VERSION" "$(ffi_const STAUNCH_VERSION)" "$number"
    for h in include/staunch.h include/staunch_cdef.h; do
      want "$h STAUNCH_VERSION_MAJOR" "$(header_macro STAUNCH_VERSION_MAJOR "$h")" "$major"
      want "$h STAUNCH_VERSION_MINOR" "$(header_macro STAUNCH_VERSION_MINOR "$h")" "$minor"
      want "$h STAUNCH_VERSION_PATCH" "$(header_macro STAUNCH_VERSION_PATCH "$h")" "$patch"
      want "$h STAUNCH_VERSION" "$(header_macro STAUNCH_VERSION "$h")" "$number"
    done
    want "bindings/python/pyproject.toml [project] version" "$(pyproject)" "$crate"
    want "bindings/java/pom.xml <version>" "$(pom)" "$crate"
    want "bindings/go/version.go Version" "$(gover)" "$crate"
    for m in "${GO_NESTED[@]}"; do
      want "$m/go.mod's require of bindings/go" "$(goreq "$m")" "$crate"
    done
    for page in "${INSTALL_PAGES[@]}"; do
      for v in $(doc_versions "$page"); do
        [ "$v" = "$crate" ] || [ "$v" = "$rust_crate" ] || want "$page's install lines" "$v" "$crate"
      done
    done
    [ $bad = 0 ] && echo "library version $crate (the Rust crate: $rust_crate): src/ffi, include/staunch.h, pyproject.toml, pom.xml, version.go, the nested Go modules' go.mod and the install pages agree"
    exit $bad ;;
  --update)
    sed -i -e "s/^pub const STAUNCH_VERSION_MAJOR: u32 = [0-9]*;/pub const STAUNCH_VERSION_MAJOR: u32 = $major;/" \
      -e "s/^pub const STAUNCH_VERSION_MINOR: u32 = [0-9]*;/pub const STAUNCH_VERSION_MINOR: u32 = $minor;/" \
      -e "s/^pub const STAUNCH_VERSION_PATCH: u32 = [0-9]*;/pub const STAUNCH_VERSION_PATCH: u32 = $patch;/" \
      -e "s/^pub const STAUNCH_VERSION: u32 = [0-9]*;/pub const STAUNCH_VERSION: u32 = $number;/" src/ffi/mod.rs
    sed -i '/^\[project\]/,/^\[/ s/^version *= *"[^"]*"/version = "'"$crate"'"/' bindings/python/pyproject.toml
    sed -i 's|^  <version>.*</version>$|  <version>'"$crate"'</version>|' bindings/java/pom.xml
    sed -i 's/^const Version = ".*"$/const Version = "'"$crate"'"/' bindings/go/version.go
    for m in "${GO_NESTED[@]}"; do
      sed -i 's|^\(\s*github.com/staunch-db/staunch/bindings/go\) v.*$|\1 v'"$crate"'|' "$m/go.mod"
    done
    for page in "${INSTALL_PAGES[@]}"; do
      for v in $(doc_versions "$page"); do
        if [ "$v" != "$crate" ] && [ "$v" != "$rust_crate" ]; then
          sed -i "s/\b${v//./\\.}\b/$crate/g" "$page"
        fi
      done
    done
    scripts/check-header.sh --update
    exec "$0" --check ;;
  *)
    echo "usage: scripts/version.sh [--crate | --check | --update]" >&2
    exit 2 ;;
esac
