#!/usr/bin/env bash
# A system install as a stranger gets it: configure a fresh build of this
# source tree with --prefix in a temporary directory, `meson install`, then
#  - build and run a C program with nothing but pkg-config,
#  - build and run a C++ program with nothing but CMake's find_package,
#  - run the installed zt with an empty environment (RUNPATH, no
#    LD_LIBRARY_PATH), and check its man page lists every command,
#  - move the whole prefix and check zt and find_package still work.
# usage: run_install_test.sh SOURCE_DIR
set -euo pipefail
src=$(cd "$1" && pwd)
here="$src/tests/install"
for tool in meson ninja pkg-config cmake cc c++; do
  command -v "$tool" >/dev/null 2>&1 || {
    echo "FAIL: '$tool' not found; install it (Debian: tools/dev.sh deps installs meson, ninja-build, pkg-config, cmake, build-essential)"
    exit 1
  }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/zt-install-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"
step() { echo "== $*"; }

step "meson setup --prefix $prefix (library and tool only)"
meson setup "$tmp/build" "$src" --prefix="$prefix" -Dtests=false -Dbench=false \
  --buildtype=release -Ddebug=false >"$tmp/setup.log" 2>&1 || { cat "$tmp/setup.log"; exit 1; }
ninja -C "$tmp/build" >"$tmp/build.log" 2>&1 || { tail -50 "$tmp/build.log"; exit 1; }
meson install -C "$tmp/build" --no-rebuild --quiet >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; exit 1; }
rm -rf "$tmp/build"  # nothing below may depend on the build tree

pc=$(find "$prefix" -name ztensor.pc | head -n 1)
cmake_dir=$(find "$prefix" -type d -path '*/cmake/ztensor' | head -n 1)
man=$(find "$prefix" -name zt.1 | head -n 1)
for what in "ztensor.pc:$pc" "cmake/ztensor:$cmake_dir" "zt.1:$man"; do
  [ -n "${what#*:}" ] || { echo "FAIL: ${what%%:*} was not installed under $prefix"; exit 1; }
done
[ -x "$prefix/bin/zt" ] || { echo "FAIL: bin/zt was not installed"; exit 1; }

step "C consumer through pkg-config"
export PKG_CONFIG_PATH="$(dirname "$pc")"
flags=$(pkg-config --cflags --libs ztensor)
libdir=$(pkg-config --variable=libdir ztensor)
echo "pkg-config --cflags --libs ztensor: $flags"
version=$(pkg-config --modversion ztensor)
# shellcheck disable=SC2086 # flags are a word list by design
cc -std=c11 -Wall -Wextra -Werror -DZTENSOR_EXPECTED_VERSION="\"$version\"" \
  "$src/tests/pkgconfig/consumer.c" -o "$tmp/consumer" $flags -Wl,-rpath,"$libdir"
env -i "$tmp/consumer" "$tmp/c.zt"

step "C++ consumer through CMake find_package(ztensor)"
cmake_build() {  # cmake_build BUILD_DIR PREFIX
  cmake -S "$here/cmake_consumer" -B "$1" -DCMAKE_PREFIX_PATH="$2" \
    -DCONSUMER_SOURCE="$src/tests/pkgconfig/consumer_cpp.cc" >"$1.log" 2>&1 || { cat "$1.log"; return 1; }
  cmake --build "$1" >>"$1.log" 2>&1 || { cat "$1.log"; return 1; }
}
cmake_build "$tmp/cmake1" "$prefix"
env -i "$tmp/cmake1/consumer_cpp" "$tmp/cpp.zt"
# A version of another major must not be accepted.
sed 's/find_package(ztensor 1.0 REQUIRED)/find_package(ztensor 2.0 REQUIRED)/' \
  "$here/cmake_consumer/CMakeLists.txt" >"$tmp/CMakeLists.major2.txt"
mkdir -p "$tmp/major2" && cp "$tmp/CMakeLists.major2.txt" "$tmp/major2/CMakeLists.txt"
if cmake -S "$tmp/major2" -B "$tmp/major2/build" -DCMAKE_PREFIX_PATH="$prefix" \
     -DCONSUMER_SOURCE="$src/tests/pkgconfig/consumer_cpp.cc" >"$tmp/major2.log" 2>&1; then
  echo "FAIL: find_package(ztensor 2.0) accepted a 1.x install"; exit 1
fi
grep -q "ztensorConfigVersion.cmake\|version" "$tmp/major2.log" || { cat "$tmp/major2.log"; exit 1; }

step "installed zt with an empty environment"
readelf -d "$prefix/bin/zt" | grep -E 'RUNPATH|RPATH'
env -i "$prefix/bin/zt" --help >"$tmp/help.txt"
head -n 1 "$tmp/help.txt"
env -i "$prefix/bin/zt" info "$tmp/c.zt" >/dev/null
env -i "$prefix/bin/zt" verify "$tmp/cpp.zt"
python3 "$here/check_man.py" "$prefix/bin/zt" "$man"

step "the prefix moved elsewhere"
mv "$prefix" "$tmp/moved"
env -i "$tmp/moved/bin/zt" verify "$tmp/c.zt"
cmake_build "$tmp/cmake2" "$tmp/moved"
env -i "$tmp/cmake2/consumer_cpp" "$tmp/cpp2.zt"

echo "install test OK"
