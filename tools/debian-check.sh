#!/usr/bin/env bash
# Builds the Debian packages from this source tree, checks them with lintian,
# installs them, and uses them the way a user would: an outside C and C++
# program built with nothing but `pkg-config --cflags --libs ztensor`, the
# installed `zt` with an empty environment, and `import ztensor` in Python.
# Everything installed from the .debs is purged again at the end.
#
# Meant for a throwaway Debian 12 machine or container (CI); needs root or
# sudo for apt. The build happens in a temporary copy of the tree, so nothing
# is written next to the checkout (dpkg-buildpackage writes to the parent of
# the source directory).
#   tools/debian-check.sh           build, lint, install, use, purge
#   ZT_DEBIAN_KEEP=DIR tools/debian-check.sh   also copy the .debs to DIR
set -euo pipefail
cd "$(dirname "$0")/.."
src_root=$PWD
jobs=${ZT_JOBS:-2}

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "debian-check: needs root or sudo (apt-get install)" >&2; exit 1; }
  sudo="sudo"
fi
apt_install() {
  echo "debian-check: installing missing packages: $*"
  # A mirror caught mid-sync fails the update but leaves usable lists: go on,
  # and let the install fail if a package is really missing.
  $sudo apt-get update -qq || echo "debian-check: apt-get update failed; using the package lists already here" >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@"
}
missing_of() {  # prints the packages of "$@" that are not installed, one a line
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}

# Packages of our own must not be installed already: the test would use them,
# and the purge at the end would remove somebody else's copy.
ours=(libztensor1 libztensor-dev ztensor-tools python3-ztensor)
mapfile -t present < <(dpkg-query -W -f='${binary:Package} ${Status}\n' 'libztensor*' 'ztensor*' 'python3-ztensor*' \
  2>/dev/null | awk '$NF == "installed" {print $1}')
if [ ${#present[@]} -gt 0 ]; then
  echo "debian-check: already installed, refusing to touch them: ${present[*]}" >&2
  echo "  (remove them first: apt-get purge ${present[*]})" >&2
  exit 1
fi

# Tools for building, linting and the consumer build, then the Build-Depends.
tools=(dpkg-dev debhelper lintian build-essential pkg-config libdlpack-dev git cmake)
mapfile -t miss < <(missing_of "${tools[@]}")
[ ${#miss[@]} -eq 0 ] || apt_install "${miss[@]}"
if ! unmet=$(dpkg-checkbuilddeps debian/control 2>&1); then
  echo "debian-check: $unmet"
  echo "debian-check: installing the Build-Depends of debian/control (apt-get build-dep)"
  # A mirror caught mid-sync fails the update but leaves usable lists: go on,
  # and let the install fail if a package is really missing.
  $sudo apt-get update -qq || echo "debian-check: apt-get update failed; using the package lists already here" >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get build-dep -y -qq --no-install-recommends "$src_root"
fi

version=$(dpkg-parsechangelog -S Version)
upstream=${version%-*}
header_version=$(python3 tools/header_version.py include/ztensor.h)
if [ "$upstream" != "$header_version" ]; then
  echo "debian-check: debian/changelog says $version but include/ztensor.h says $header_version;" >&2
  echo "  add a changelog entry (dch -v $header_version-1) when the version changes" >&2
  exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/zt-debian-XXXXXX")
installed=0
cleanup() {
  if [ "$installed" = 1 ]; then
    echo "debian-check: purging the installed packages"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get purge -y -qq "${ours[@]}" >/dev/null || true
    # Dependencies that came in with the .debs go too, so the machine is left as it was.
    local extra
    mapfile -t extra < <(comm -13 "$tmp/before.txt" <(dpkg-query -W -f='${binary:Package}\n' | sort))
    if [ ${#extra[@]} -gt 0 ]; then
      echo "debian-check: purging packages pulled in by the .debs: ${extra[*]}"
      DEBIAN_FRONTEND=noninteractive $sudo apt-get purge -y -qq "${extra[@]}" >/dev/null || true
    fi
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

# A copy of the tree as git sees it (tracked and untracked files, not ignored
# ones such as build directories), so uncommitted work is packaged too.
srcdir="$tmp/libztensor-$upstream"
mkdir -p "$srcdir"
if git -C "$src_root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git -C "$src_root" ls-files -z -co --exclude-standard |
    while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
    tar --null -T - -cf - | tar -xf - -C "$srcdir"
else
  tar --exclude='./build*' -cf - . | tar -xf - -C "$srcdir"
fi

start=$(date +%s)
echo "debian-check: dpkg-buildpackage -us -uc -b in $srcdir"
(cd "$srcdir" && DEB_BUILD_OPTIONS="parallel=$jobs" dpkg-buildpackage -us -uc -b) >"$tmp/build.log" 2>&1 || {
  tail -n 80 "$tmp/build.log"; echo "debian-check: FAIL: dpkg-buildpackage (log above)"; exit 1; }
grep -E "^dpkg-gensymbols|^dpkg-deb: building" "$tmp/build.log" || true
echo "debian-check: built in $(( $(date +%s) - start ))s"

echo "debian-check: lintian --fail-on error"
changes=$(ls "$tmp"/*.changes)
lintian --fail-on error "$changes" || {
  echo "debian-check: FAIL: lintian reports errors"; exit 1; }

if [ -n "${ZT_DEBIAN_KEEP:-}" ]; then
  mkdir -p "$ZT_DEBIAN_KEEP" && cp "$tmp"/*.deb "$tmp"/*.changes "$ZT_DEBIAN_KEEP"/
fi

dpkg-query -W -f='${binary:Package}\n' | sort >"$tmp/before.txt"
installed=1
debs=()
for d in "$tmp"/*.deb; do
  case "$d" in *-dbgsym_*) ;; *) debs+=("./${d##*/}") ;; esac
done
echo "debian-check: apt-get install ${debs[*]}"
(cd "$tmp" && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${debs[@]}") \
  >"$tmp/install.log" 2>&1 || {
  cat "$tmp/install.log"; echo "debian-check: FAIL: apt-get install"; exit 1; }

# An outside program, compiled with only what pkg-config says.
work="$tmp/consumer"
mkdir -p "$work"
pcversion=$(pkg-config --modversion ztensor)
[ "$pcversion" = "$upstream" ] || { echo "debian-check: FAIL: pkg-config says $pcversion, expected $upstream"; exit 1; }
flags=$(pkg-config --cflags --libs ztensor)
echo "debian-check: pkg-config --cflags --libs ztensor: $flags"
# shellcheck disable=SC2086 # flags are a word list
cc -std=c11 -Wall -Wextra -Werror -DZTENSOR_EXPECTED_VERSION="\"$upstream\"" \
  tests/pkgconfig/consumer.c -o "$work/consumer" $flags
# shellcheck disable=SC2086
c++ -std=c++17 -Wall -Wextra -Werror tests/pkgconfig/consumer_cpp.cc -o "$work/consumer_cpp" $flags
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
# /lib is /usr/lib on a merged-/usr system.
# Whole outputs into variables before grep -q: grep stops at its first match,
# and with pipefail the writer's SIGPIPE would fail the check at random.
consumer_libs=$(ldd "$work/consumer")
grep -qE "libztensor\.so\.1 => (/usr)?/lib/$multiarch/libztensor\.so\.1 " <<<"$consumer_libs" || {
  echo "$consumer_libs"; echo "debian-check: FAIL: consumer does not load the packaged library"; exit 1; }
env -i "$work/consumer" "$work/c.zt"
env -i "$work/consumer_cpp" "$work/cpp.zt"

# The tool, with an empty environment, and no RUNPATH in a packaged binary.
env -i /usr/bin/zt --help >"$work/help.txt"
head -n 3 "$work/help.txt"
zt_dynamic=$(readelf -d /usr/bin/zt)
if grep -qE 'RPATH|RUNPATH' <<<"$zt_dynamic"; then
  echo "debian-check: FAIL: /usr/bin/zt carries an RPATH/RUNPATH"; exit 1
fi
env -i /usr/bin/zt verify "$work/c.zt"

# The Python module finds the library through the system loader.
env -i /usr/bin/python3 - "$work/c.zt" <<'PY'
import sys
import ztensor
with ztensor.Reader(sys.argv[1]) as r:
    v = r["v"]
    assert list(v) == [7, -1, 1 << 20, 0], v
assert ztensor.library_source == "system loader", ztensor.library_source
assert ztensor.__version__ != "0+unknown", ztensor.__version__
print("python3: ztensor", ztensor.__version__, "from", ztensor.__file__, "with", ztensor.library_path,
      "read", list(v))
PY

# The CMake package and the man page of the -dev and tools packages.
cmake_dir="$work/cmake-consumer"
cmake -S "$src_root/tests/install/cmake_consumer" -B "$cmake_dir" \
  -DCONSUMER_SOURCE="$src_root/tests/pkgconfig/consumer_cpp.cc" >"$work/cmake.log" 2>&1 || { cat "$work/cmake.log"; exit 1; }
cmake --build "$cmake_dir" >>"$work/cmake.log" 2>&1 || { cat "$work/cmake.log"; exit 1; }
env -i "$cmake_dir/consumer_cpp" "$work/cmake.zt"
# (Read from the .deb: minimal images exclude /usr/share/man when installing.)
tools_deb_files=$(dpkg-deb -c "$tmp"/ztensor-tools_*.deb)
grep -q 'usr/share/man/man1/zt\.1' <<<"$tools_deb_files" ||
  { echo "debian-check: FAIL: ztensor-tools has no man page for zt"; exit 1; }

echo "debian-check: OK ($(cd "$tmp" && echo *.deb)) in $(( $(date +%s) - start ))s"
