#!/bin/sh
# Installs the build into a temporary DESTDIR, then builds and runs outside
# programs with nothing but `pkg-config --cflags --libs ztensor`.
# usage: run_consumer.sh BUILD_DIR SOURCE_DIR VERSION
set -eu
build=$1 src=$2 version=$3
CC=${CC:-cc}
CXX=${CXX:-c++}
for tool in pkg-config "$CC" "$CXX"; do
  command -v "$tool" >/dev/null 2>&1 || { echo "SKIP: $tool not found"; exit 77; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/zt-pkgconfig-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
meson install -C "$build" --destdir "$tmp/root" --no-rebuild --quiet >"$tmp/install.log" 2>&1 || {
  cat "$tmp/install.log"; exit 1; }

pc=$(find "$tmp/root" -name ztensor.pc | head -n 1)
[ -n "$pc" ] || { echo "FAIL: ztensor.pc was not installed"; exit 1; }
libdir=$(dirname "$(find "$tmp/root" -name 'libztensor.so' | head -n 1)")
# The .pc file names the final prefix; the sysroot variable maps it into
# the DESTDIR, the way a staged install is consumed.
export PKG_CONFIG_PATH="$(dirname "$pc")"
export PKG_CONFIG_SYSROOT_DIR="$tmp/root"
flags=$(pkg-config --cflags --libs ztensor)
echo "pkg-config --cflags --libs ztensor: $flags"
case "$flags" in *"$tmp/root"*) ;; *) echo "FAIL: flags do not point into the install"; exit 1;; esac

# shellcheck disable=SC2086 # flags are a word list by design
"$CC" -std=c11 -Wall -Wextra -Werror -DZTENSOR_EXPECTED_VERSION="\"$version\"" \
  "$src/consumer.c" -o "$tmp/consumer" $flags
# shellcheck disable=SC2086
"$CXX" -std=c++17 -Wall -Wextra -Werror "$src/consumer_cpp.cc" -o "$tmp/consumer_cpp" $flags

# Only the installed library may be found: not the build tree's.
export LD_LIBRARY_PATH="$libdir"
ldd "$tmp/consumer" | grep -q "$libdir/libztensor" || { echo "FAIL: consumer does not load the installed library"; ldd "$tmp/consumer"; exit 1; }
"$tmp/consumer" "$tmp/c.zt"
"$tmp/consumer_cpp" "$tmp/cpp.zt"
