#!/usr/bin/env bash
# Checks cbuild's install rules: `cmake --install` into a temporary prefix,
# then builds and runs a consumer (cbuild/install-test) found through
# find_package(staunch) (shared and static) and one built with pkg-config.
# Needs cbuild/build-plain (scripts/c-tests.sh configures it).
set -euo pipefail
cd "$(dirname "$0")/.."

prefix=$(mktemp -d /tmp/stinst-XXXXXX)
trap 'rm -rf "$prefix"' EXIT

cmake --install cbuild/build-plain --prefix "$prefix" >/dev/null
libdir=$(find "$prefix" -name 'libstaunch.so' -printf '%h\n' | head -n1)
test -f "$prefix/include/staunch.h"
test -f "$prefix/include/staunch_cdef.h"
# The library's SONAME and the links of the usual triple.
soname=$(objdump -p "$libdir/libstaunch.so" | awk '/SONAME/ {print $2}')
test "$soname" = libstaunch.so.1 || { echo "SONAME is '$soname', not libstaunch.so.1" >&2; exit 1; }
test -L "$libdir/libstaunch.so.1" && test -L "$libdir/libstaunch.so"
test -f "$(readlink -f "$libdir/libstaunch.so")"
test -f "$libdir/libstaunch.a"
test -f "$libdir/pkgconfig/staunch.pc"
test -f "$libdir/cmake/staunch/staunchConfig.cmake"

cmake -S cbuild/install-test -B "$prefix/consumer" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$prefix/consumer" >/dev/null
LD_LIBRARY_PATH="$libdir" "$prefix/consumer/consumer_shared"
# It loads the library by its SONAME.
grep -Eq 'NEEDED +libstaunch[.]so[.]1$' <<<"$(objdump -p "$prefix/consumer/consumer_shared")"
"$prefix/consumer/consumer_static"

export PKG_CONFIG_PATH="$libdir/pkgconfig"
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Wpedantic -Werror -o "$prefix/consumer_pc" cbuild/install-test/main.c \
  $(pkg-config --cflags --libs staunch)
LD_LIBRARY_PATH="$libdir" "$prefix/consumer_pc"
echo "install rules: header, libraries, pkg-config and CMake package config work"
