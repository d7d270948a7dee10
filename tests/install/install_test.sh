#!/usr/bin/env bash
# Install the built tree into a temporary prefix, then build and run an external
# program against it twice: through find_package(rdlm CONFIG) and through pkg-config.
# usage: install_test.sh <build-dir> <source-dir>
set -euo pipefail
build=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log"
libdir=$(find "$tmp/prefix" -name 'librdlm.so.0' -printf '%h\n' | head -1)
test -n "$libdir" || { echo "FAIL: librdlm.so.0 (soname = major) not installed"; exit 1; }
if find "$tmp/prefix/include" -name '*.h' | xargs grep -l 'RDLM_BUILDING_LIBRARY' | grep -v export.h; then
  echo "FAIL: an installed header depends on the library's build macro"; exit 1
fi

# 1. CMake package
cmake -S "$src/tests/install/consumer" -B "$tmp/cmake-build" \
      -DCMAKE_PREFIX_PATH="$tmp/prefix" > "$tmp/cmake.log"
cmake --build "$tmp/cmake-build" > "$tmp/cmake-build.log"
LD_LIBRARY_PATH="$libdir" "$tmp/cmake-build/consumer"

# 2. pkg-config
PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --exists rdlm
cc -std=c11 -o "$tmp/consumer-pc" "$src/tests/install/consumer/consumer.c" \
   $(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags --libs rdlm)
LD_LIBRARY_PATH="$libdir" "$tmp/consumer-pc"
echo "install test: both consumers built and ran"
