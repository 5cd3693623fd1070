#!/usr/bin/env bash
# Windows cross builds (docs/cross.md, "Windows"): tools/cross.sh windows-x64
# and windows-x86 run this file. Not part of the default CI.
#
#   tools/cross-windows.sh x64|x86
#
# 1. installs Debian's mingw-w64 and wine (wine64; wine32 for x86, through
#    the i386 multiarch) and googletest's sources;
# 2. fetches the pinned Debian source tarballs of libzstd, libcbor, libxxhash
#    and libutf8proc from
#    the mirror apt is configured with (cross/windows/deps.sha256), checks
#    their sha256 and builds them as static libraries with mingw into
#    build-windows-ARCH/deps;
# 3. configures build-windows-ARCH/ with cross/TRIPLET.ini, builds the DLL,
#    its import library, the .def file and the tests, and runs the suites
#    under wine;
# 4. compares a file written under wine with the x86_64 reference
#    (tests/data/host_order/) byte for byte;
# 5. lays out ztensor-VERSION-windows-ARCH.zip and checks it with a C program
#    built against the unpacked zip only, run under wine.
#
# Options (environment): ZT_CROSS_NO_DEPS=1 (do not touch apt),
# ZT_CROSS_SUITES (default "core capi c reject windows"), ZT_CROSS_SKIP
# (default: the tests listed in WINDOWS_SKIP below, with the reason),
# ZT_CROSS_CLI (the CLI's Python drivers run with zt.exe under wine; default
# those that test nothing POSIX-only: docs/cross.md, "CLI drivers under wine").
set -euo pipefail
cd "$(dirname "$0")/.."

ARCH=${1:-}
case "$ARCH" in
  # Debian's wine64 package alone puts its loader in /usr/lib/wine.
  x64) TRIPLET=x86_64-w64-mingw32 WINE=/usr/lib/wine/wine64 CMAKE_CPU=AMD64 ;;
  # x86: a wine32 of its own in build-windows-x86/wine32 (see wine32_private).
  x86) TRIPLET=i686-w64-mingw32 WINE=$PWD/build-windows-x86/wine32/wine CMAKE_CPU=X86 ;;
  *)
    echo "usage: tools/cross-windows.sh x64|x86" >&2
    exit 2
    ;;
esac
B=build-windows-$ARCH
DEPS=$PWD/$B/deps
# The posix thread model of Debian's mingw-w64: std::thread and std::mutex
# (the win32 model of GCC 12 has neither).
CC=$TRIPLET-gcc-posix
CXX=$TRIPLET-g++-posix

as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  else
    sudo "$@"
  fi
}

apt_install() {
  DEBIAN_FRONTEND=noninteractive as_root apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "$@"
}

install_packages() {
  [ "${ZT_CROSS_NO_DEPS:-0}" = 1 ] && return
  if [ "$ARCH" = x86 ]; then
    dpkg --print-foreign-architectures | grep -qx i386 || as_root dpkg --add-architecture i386
    as_root apt-get -o DPkg::Lock::Timeout=600 update -qq || echo "cross-windows.sh: apt-get update failed; using the lists here" >&2
  fi
  # wine64 also brings libz-mingw-w64 (zlib1.dll, which wine's user32 needs).
  local i386=()
  [ "$ARCH" = x86 ] && i386=(libc6:i386)  # the 32-bit wine's loader
  apt_install mingw-w64 cmake meson ninja-build pkg-config python3 python3-numpy curl xz-utils zip unzip \
    nlohmann-json3-dev libdlpack-dev googletest wine64 libz-mingw-w64 "${i386[@]}"
}

# wine32 unpacked into build-windows-x86/wine32 rather than installed:
# installing the wine32 package pulls in some hundred i386 libraries, each
# of which must have the very version of its amd64 twin (Multi-Arch: same),
# and Debian 12 mirrors often lag the i386 builds of amd64 security updates
# (liblzma5, libpcre2-8-0, ... here), so apt would have to downgrade the
# host's libraries. The 32-bit wine loader, its DLLs and zlib1.dll are all a
# console program needs; fonts, sound and graphics are not loaded.
wine32_private() {
  local dir=$B/wine32
  [ -x "$dir/wine" ] && return
  rm -rf "$dir" && mkdir -p "$dir/debs"
  (cd "$dir/debs" && apt-get download "wine32:i386=$(wine_version)" "libwine:i386=$(wine_version)")
  local d
  for d in "$dir"/debs/*.deb; do dpkg -x "$d" "$dir/root"; done
  local dlls=$PWD/$dir/root/usr/lib/i386-linux-gnu/wine
  cp /usr/i686-w64-mingw32/lib/zlib1.dll "$dlls/i386-windows/"
  cat >"$dir/wine" <<SH
#!/bin/sh
# The unpacked 32-bit wine of tools/cross-windows.sh (its DLLs are not where
# an installed wine32 keeps them).
WINEDLLPATH=$dlls exec $PWD/$dir/root/usr/lib/wine/wine "\$@"
SH
  chmod +x "$dir/wine"
}

# The version of the wine64 installed here: wine32 must be the same.
wine_version() {
  dpkg-query -W -f '${Version}' wine64
}

# The Debian mirror apt uses (the first http(s) URI of a "debian" archive in
# the sources), read at run time: no host name is written in the repo.
debian_mirror() {
  local uri
  uri=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list 2>/dev/null |
    grep -Eo 'https?://[^ ]+' | grep -Ev 'security|/debian-[a-z]' | grep -E '/debian/?$' | head -1)
  if [ -z "$uri" ]; then
    echo "cross-windows.sh: no Debian mirror found in the apt sources" >&2
    exit 1
  fi
  echo "${uri%/}"
}

# fetch_tarball POOLDIR NAME: downloads into $B/downloads (once) and checks
# the pinned sha256.
fetch_tarball() {
  local pool=$1 name=$2 dir=$B/downloads want
  mkdir -p "$dir"
  want=$(awk -v n="$name" '$2 == n {print $1}' cross/windows/deps.sha256)
  [ -n "$want" ] || { echo "cross-windows.sh: $name has no pinned sha256 in cross/windows/deps.sha256" >&2; exit 1; }
  if [ ! -f "$dir/$name" ] || [ "$(sha256sum "$dir/$name" | cut -d' ' -f1)" != "$want" ]; then
    curl -fsSL -o "$dir/$name.part" "$(debian_mirror)/pool/main/$pool/$name"
    mv "$dir/$name.part" "$dir/$name"
  fi
  if [ "$(sha256sum "$dir/$name" | cut -d' ' -f1)" != "$want" ]; then
    echo "cross-windows.sh: $name does not match its pinned sha256 ($want): refusing to build it" >&2
    rm -f "$dir/$name"
    exit 1
  fi
}

cmake_cross() {
  cmake -G Ninja -DCMAKE_SYSTEM_NAME=Windows -DCMAKE_SYSTEM_PROCESSOR="$CMAKE_CPU" \
    -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" -DCMAKE_RC_COMPILER="$TRIPLET-windres" \
    -DCMAKE_FIND_ROOT_PATH="/usr/$TRIPLET;$DEPS" -DCMAKE_FIND_ROOT_PATH_MODE_PROGRAM=NEVER \
    -DCMAKE_FIND_ROOT_PATH_MODE_LIBRARY=ONLY -DCMAKE_FIND_ROOT_PATH_MODE_INCLUDE=ONLY \
    -DCMAKE_BUILD_TYPE=Release -Wno-dev -DCMAKE_INSTALL_PREFIX="$DEPS" -DCMAKE_INSTALL_LIBDIR=lib "$@"
}

# A static library of one C file of a source tree, with a pkg-config file:
# static_c_lib NAME VERSION SRCDIR FILE HEADERS CFLAGS (CFLAGS also go in the
# .pc file, for the code that includes the headers).
static_c_lib() {
  local name=$1 version=$2 dir=$3 file=$4 headers=$5 cflags=$6
  # shellcheck disable=SC2086  # the flags are words
  "$CC" -O2 $cflags -c "$dir/$file" -o "$dir/$name.o"
  "$TRIPLET-ar" rcs "$DEPS/lib/$name.a" "$dir/$name.o"
  # shellcheck disable=SC2086  # the headers are words
  (cd "$dir" && cp $headers "$DEPS/include/")
  cat >"$DEPS/lib/pkgconfig/$name.pc" <<PC
Name: $name
Description: $name $version (Debian's source, built by tools/cross-windows.sh)
Version: $version
Libs: -L$DEPS/lib -l${name#lib}
Cflags: -I$DEPS/include $cflags
PC
}

# Static libzstd, libcbor, libxxhash and libutf8proc in $DEPS, and
# pkg-config files for them and for the header-only nlohmann_json and dlpack
# (their headers are copied: the cross compiler must never see the host's
# /usr/include).
build_deps() {
  # deps-2: libxxhash and libutf8proc joined libzstd and libcbor.
  if [ -f "$DEPS/.done-2" ]; then
    return
  fi
  fetch_tarball libz/libzstd libzstd_1.5.4+dfsg2.orig.tar.xz
  fetch_tarball libc/libcbor libcbor_0.10.2.orig.tar.gz
  fetch_tarball x/xxhash xxhash_0.8.1.orig.tar.gz
  fetch_tarball u/utf8proc utf8proc_2.8.0.orig.tar.gz
  rm -rf "$DEPS" "$B/src"
  mkdir -p "$B/src" "$DEPS/include" "$DEPS/lib/pkgconfig"
  tar -C "$B/src" -xf "$B/downloads/libzstd_1.5.4+dfsg2.orig.tar.xz"
  tar -C "$B/src" -xf "$B/downloads/libcbor_0.10.2.orig.tar.gz"
  tar -C "$B/src" -xf "$B/downloads/xxhash_0.8.1.orig.tar.gz"
  tar -C "$B/src" -xf "$B/downloads/utf8proc_2.8.0.orig.tar.gz"
  (cd "$B/src/zstd-1.5.4/build/cmake" &&
    cmake_cross -S . -B out -DZSTD_BUILD_SHARED=OFF -DZSTD_BUILD_STATIC=ON -DZSTD_BUILD_PROGRAMS=OFF \
      -DZSTD_BUILD_TESTS=OFF -DZSTD_BUILD_CONTRIB=OFF -DZSTD_MULTITHREAD_SUPPORT=OFF >/dev/null &&
    nice -n 10 ninja -C out -j2 >/dev/null && ninja -C out install >/dev/null)
  # libcbor turns on LTO wherever the compiler has it: its objects would then
  # be GCC bytecode that only an LTO link can use. Plain objects instead.
  sed -i 's/check_ipo_supported(RESULT use_lto)/set(use_lto FALSE)/' "$B/src/libcbor-0.10.2/CMakeLists.txt"
  (cd "$B/src/libcbor-0.10.2" &&
    cmake_cross -S . -B out -DBUILD_SHARED_LIBS=OFF -DWITH_TESTS=OFF -DWITH_EXAMPLES=OFF >/dev/null &&
    nice -n 10 ninja -C out -j2 >/dev/null && ninja -C out install >/dev/null)
  # xxhash.c is the whole library (XXH3 included); utf8proc.c includes its
  # data tables. UTF8PROC_STATIC: no __declspec(dllimport) in utf8proc.h.
  static_c_lib libxxhash 0.8.1 "$B/src/xxHash-0.8.1" xxhash.c "xxhash.h xxh3.h" ""
  static_c_lib libutf8proc 2.8.0 "$B/src/utf8proc-2.8.0" utf8proc.c utf8proc.h -DUTF8PROC_STATIC
  cp -r /usr/include/nlohmann /usr/include/dlpack "$DEPS/include/"
  cat >"$DEPS/lib/pkgconfig/nlohmann_json.pc" <<PC
Name: nlohmann_json
Description: JSON for Modern C++ (headers copied from the host's nlohmann-json3-dev)
Version: $(pkg-config --modversion nlohmann_json)
Cflags: -I$DEPS/include
PC
  touch "$DEPS/.done-2"
}

# Wine runs in a prefix of its own inside the build folder (not ~/.wine),
# quietly, without offering to install Mono or Gecko.
export WINEPREFIX=$PWD/$B/wineprefix WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
[ "$ARCH" = x86 ] && export WINEARCH=win32

configure() {
  # Written each time: a reconfigure (meson.build changed) reads it again.
  cat >"$B/deps.ini" <<INI
[properties]
pkg_config_libdir = ['$DEPS/lib/pkgconfig']
# The CLI tests' Python drivers run zt.exe through this (tests/meson.build).
zt_exe_wrapper = '$WINE'

$([ "$ARCH" = x86 ] && printf "[binaries]\nexe_wrapper = ['%s']\n" "$WINE")

[built-in options]
c_args = ['-I$DEPS/include']
cpp_args = ['-I$DEPS/include']
INI
  if [ -f "$B/build.ninja" ]; then
    # Regenerate now when a meson.build changed, so the test list read from
    # `meson introspect` (select_tests) is the current one.
    ninja -C "$B" build.ninja >/dev/null
    return
  fi
  # No libzip, ISA-L or libcurl (as the Linux cross builds): .npz is not
  # read, CRC32C runs in software, zt_open_url returns ZT_E_UNSUPPORTED.
  meson setup "$B" --cross-file "cross/$TRIPLET.ini" --cross-file "$B/deps.ini" \
    -Doptimization=2 -Ddebug=false -Dtests=true -Dlibzip=disabled -Disal=disabled -Dcurl=disabled
}

# select_tests SUITES SKIP names|outputs: tools/cross_select_tests.py for $B.
select_tests() {
  python3 tools/cross_select_tests.py "$B" "$@"
}

# The tests that do not build or run on Windows, and why (docs/cross.md,
# "Windows", lists them too).
#   core_replaced_file_test    the deferred release of a replaced file: POSIX O_PATH and mmap
#   core_s3_location_test      setenv, unsetenv, mkdtemp
#   capi_open_options_abi_test loads the library with dlopen/dlsym and ELF symbol versions
#   capi_replace_test          symlinks, modes and owners of the replaced file
#   capi_write_path_test       O_TMPFILE, flock-ed temporaries, rlimits, /proc
WINDOWS_SKIP=(core_replaced_file_test core_s3_location_test capi_open_options_abi_test capi_replace_test capi_write_path_test)

run_suites() {
  local suites=${ZT_CROSS_SUITES:-"core capi c reject windows"}
  local skip="${ZT_CROSS_SKIP-${WINDOWS_SKIP[*]}} reject_sweep_test"
  local tests=() outputs=()
  mapfile -t tests < <(select_tests "$suites" "$skip" names)
  mapfile -t outputs < <(select_tests "$suites" "$skip" outputs)
  # The CLI drivers start zt.exe through wine (tests/zt_under_wrapper.sh).
  local cli
  for cli in ${ZT_CROSS_CLI-cli_malformed cli_missing_length cli_terminal_output}; do tests+=("$cli"); done
  # (set -e does not apply inside a function called with ||: checked here.)
  nice -n 5 ninja -C "$B" -j2 "${outputs[@]}" libztensor-1.dll tests/cross/host_order_file.exe tools/zt.exe || return 1
  TOTAL=${#tests[@]}
  # The first wine start makes the prefix (half a minute): not inside a test.
  "$WINE" cmd /c exit >/dev/null 2>&1 || true
  local rc=0
  meson test -C "$B" --no-rebuild --print-errorlogs --num-processes 2 -t 4 "${tests[@]}" || rc=$?
  PASSED=$(python3 -c '
import json, sys
print(sum(json.loads(l)["result"] in ("OK", "EXPECTEDFAIL", "SKIP") for l in open(sys.argv[1])))' "$B/meson-logs/testlog.json")
  return $rc
}

# A file written under wine, byte for byte the x86_64 reference.
compare_files() {
  local tmp enc verdict=identical
  tmp=$(mktemp -d)
  for enc in raw zstd; do
    # WINEPATH: where wine looks for the DLL (meson test sets it itself).
    WINEPATH="Z:$PWD/$B" "$WINE" "$B/tests/cross/host_order_file.exe" "$tmp/$enc.zt" "$enc" >/dev/null
    cmp "tests/data/host_order/$enc.zt" "$tmp/$enc.zt" >&2 || verdict="DIFFERENT ($enc)"
  done
  rm -rf "$tmp"
  echo "$verdict"
  [ "$verdict" = identical ]
}

# zt.exe under wine on interop vectors: info, verify, cat (the sha256 of
# every dense component as in expected.json), a migrate and an
# export/convert round trip (verified, and the same bytes back), and the
# commands that cannot work on Windows refusing with a message.
check_cli() {
  local tmp rc=0
  tmp=$(mktemp -d)
  WINEPATH="Z:$PWD/$B" ZT_RUN="$WINE $B/tools/zt.exe" python3 - "$tmp" <<'PY' || rc=1
import hashlib, json, os, shlex, subprocess, sys
tmp = sys.argv[1]
zt = shlex.split(os.environ["ZT_RUN"])
v1 = "tests/data/interop/v1"
want = json.load(open(v1 + "/expected.json"))["files"]
fails = []

def run(*args, ok=True):
    p = subprocess.run(zt + list(args), capture_output=True)
    if ok and p.returncode != 0:
        fails.append(f"zt {' '.join(args)}: exit {p.returncode}: {p.stderr.decode(errors='replace')}")
    return p

def dense(name):
    return [(o["name"], c["sha256"]) for o in want[name]["objects"] if o["format"] == "dense"
            for c in o["components"] if c["role"] == "data" and c["sha256"]]

checked = 0
for f in ["dense_u8.zt", "dense_f32.zt", "dense_all_dtypes.zt", "zstd_levels.zt", "checksum_sha256.zt"]:
    path = f"{v1}/{f}"
    if b"objects:" not in run("info", path).stdout:
        fails.append(f"zt info {f}: no object list")
    if b": OK (" not in run("verify", path).stdout:
        fails.append(f"zt verify {f}: not OK")
    out = f"{tmp}/{f}"
    run("migrate", path, "-o", out)
    if b": OK (" not in run("verify", out).stdout:
        fails.append(f"zt verify of the migrated {f}: not OK")
    for name, sha in dense(f):
        for src in (path, out):
            got = hashlib.sha256(run("cat", src, name).stdout).hexdigest()
            checked += 1
            if got != sha:
                fails.append(f"zt cat {src} {name}: sha256 {got}, expected {sha}")

# export to safetensors and back: the same tensors, verified.
st, back = f"{tmp}/e.safetensors", f"{tmp}/back.zt"
run("export", f"{v1}/dense_all_dtypes.zt", "--to", "safetensors", "-o", st)
run("convert", st, "-o", back)
if b": OK (" not in run("verify", back).stdout:
    fails.append("zt verify of the converted file: not OK")
for name, sha in dense("dense_all_dtypes.zt"):
    if hashlib.sha256(run("cat", back, name).stdout).hexdigest() != sha:
        fails.append(f"export/convert round trip changed {name}")

# What cannot work on Windows says so and writes nothing.
p = run("split", back, "--max-shard-size", "1000", "-o", f"{tmp}/set", ok=False)
if p.returncode == 0 or b"not supported on Windows" not in p.stderr or os.path.exists(f"{tmp}/set"):
    fails.append(f"zt split: expected a refusal, got {p.returncode}: {p.stderr!r}")
p = run("--max-memory", "1G", "info", back, ok=False)
if p.returncode == 0 or b"not supported on Windows" not in p.stderr:
    fails.append(f"zt --max-memory: expected a refusal, got {p.returncode}: {p.stderr!r}")
# The same file is told from another by its file index (Windows' stat has
# no inode): a migrate over another existing file works, over its input not.
other = f"{tmp}/other.zt"
run("migrate", f"{v1}/dense_f32.zt", "-o", other)
run("migrate", f"{v1}/dense_u8.zt", "-o", other)
p = run("migrate", other, "-o", other, ok=False)
if p.returncode == 0 or b"is the input" not in p.stderr:
    fails.append(f"zt migrate X -o X: expected a refusal, got {p.returncode}: {p.stderr!r}")
before = open(back, "rb").read()
for args in (["append", back, "--from", f"{v1}/dense_f32.zt"], ["remove", back, "one"]):
    p = run(*args, ok=False)
    if p.returncode == 0 or b"not supported on Windows" not in p.stderr or open(back, "rb").read() != before:
        fails.append(f"zt {args[0]} in place: expected a refusal and no change, got {p.returncode}: {p.stderr!r}")
left = [n for n in os.listdir(tmp) if ".zt-tmp-" in n or ".zt-export-" in n]
if left:
    fails.append(f"temporaries left behind: {left}")
if fails:
    sys.exit("zt.exe under wine:\n  " + "\n  ".join(fails))
print(f"zt.exe under wine: info, verify, migrate, export/convert OK; {checked} components by zt cat with the expected sha256")
PY
  rm -rf "$tmp"
  return $rc
}

# The zip a Windows user unpacks: bin/ (the DLL), lib/ (import library,
# .def for MSVC's lib.exe, pkg-config file), include/ (the public headers
# and dlpack.h, which ztensor_dlpack.h includes).
make_zip() {
  local version name stage
  version=$(meson introspect "$B" --projectinfo | python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])')
  name=ztensor-$version-windows-$ARCH
  stage=$B/zip/$name
  rm -rf "$B/zip" "$B/$name.zip"
  mkdir -p "$stage/bin" "$stage/lib/pkgconfig" "$stage/include/dlpack"
  cp "$B/libztensor-1.dll" "$B/tools/zt.exe" "$stage/bin/"
  "$TRIPLET-strip" --strip-unneeded "$stage/bin/libztensor-1.dll" "$stage/bin/zt.exe"
  cp "$B/libztensor.dll.a" "$stage/lib/"
  # The linker's .def has no LIBRARY line; lib.exe would then name the DLL
  # after the .def file (ztensor.dll) in the .lib it makes.
  { echo "LIBRARY libztensor-1.dll"; cat "$B/ztensor.def"; } >"$stage/lib/ztensor.def"
  cp include/ztensor.h include/ztensor_composite.h include/ztensor_io.h include/ztensor_dlpack.h \
    include/ztensor.hpp include/ztensor_set.h "$stage/include/"
  cp /usr/include/dlpack/dlpack.h "$stage/include/dlpack/"
  cp LICENSE "$stage/"
  cat >"$stage/lib/pkgconfig/ztensor.pc" <<PC
prefix=\${pcfiledir}/../..
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: ztensor
Description: Reader and writer for zTensor (.zt) tensor files
Version: $version
Libs: -L\${libdir} -lztensor
Cflags: -I\${includedir}
PC
  (cd "$B/zip" && zip -qr "../$name.zip" "$name")
  ZIP=$B/$name.zip
}

# A C program built with mingw against the unpacked zip alone reads an
# interop vector under wine: every component's sha256 as in expected.json.
check_zip() {
  local tmp u f rc=0
  tmp=$(mktemp -d)
  unzip -q "$ZIP" -d "$tmp"
  u=$(echo "$tmp"/ztensor-*)
  # The .def names the DLL and lists exactly the functions it exports.
  python3 - "$u/lib/ztensor.def" <("$TRIPLET-objdump" -p "$u/bin/libztensor-1.dll") <<'PY' || return 1
import re, sys
lines = [l.strip() for l in open(sys.argv[1]) if l.strip()]
table = open(sys.argv[2]).read().split("[Ordinal/Name Pointer] Table", 1)[1]
exported = sorted(re.findall(r"^\s*\[\s*\d+\] (\S+)$", table, re.M))
listed = sorted(l.split()[0] for l in lines[2:])
if lines[:2] != ["LIBRARY libztensor-1.dll", "EXPORTS"] or listed != exported:
    sys.exit(f"ztensor.def does not match the DLL: {lines[:2]}, {len(listed)} names listed, {len(exported)} exported")
print(f"ztensor.def: LIBRARY libztensor-1.dll, the {len(listed)} exported functions")
PY
  # The flags from the zip's own ztensor.pc: -I and -L into the unpacked folder.
  local flags
  flags=$(PKG_CONFIG_LIBDIR="$u/lib/pkgconfig" pkg-config --cflags --libs ztensor)
  case "$flags" in *"-I$u/"*"-L$u/"*) ;; *)
    echo "cross-windows.sh: the zip's ztensor.pc gives '$flags', not the unpacked folder" >&2
    return 1
    ;;
  esac
  # shellcheck disable=SC2086  # the flags are words
  "$CC" -std=c11 -Wall -Wextra -Werror tests/windows/zip_consumer.c $flags -lbcrypt -o "$tmp/zip_consumer.exe"
  cp "$u/bin/libztensor-1.dll" "$tmp/"
  # The zip's zt.exe runs with the DLL beside it (bin/) and nothing else.
  if ! "$WINE" "$u/bin/zt.exe" verify tests/data/interop/v1/checksum_sha256.zt | grep -q ': OK ('; then
    echo "cross-windows.sh: the zip's bin/zt.exe does not verify checksum_sha256.zt" >&2
    rc=1
  fi
  for f in checksum_sha256 dense_all_dtypes dense_f32 zstd_levels; do
    [ -f "tests/data/interop/v1/$f.zt" ] || continue
    "$WINE" "$tmp/zip_consumer.exe" "tests/data/interop/v1/$f.zt" >"$tmp/$f.txt" || { rc=1; continue; }
    python3 - "$f.zt" "$tmp/$f.txt" <<'PY' || rc=1
import json, sys
want = json.load(open("tests/data/interop/v1/expected.json"))["files"][sys.argv[1]]
exp = sorted((o["name"], c["role"], c["sha256"]) for o in want["objects"] for c in o["components"])
got = sorted(tuple(l.rstrip("\r\n").split("\t")) for l in open(sys.argv[2]) if l.strip())
if exp != got or not got:
    sys.exit(f"zip consumer, {sys.argv[1]}: expected {exp}, got {got}")
print(f"zip consumer, {sys.argv[1]}: {len(got)} components with the expected sha256")
PY
  done
  rm -rf "$tmp"
  return $rc
}

install_packages
t0=$(date +%s)
[ "$ARCH" = x86 ] && wine32_private
build_deps
configure
rc=0
run_suites || rc=1
test_s=$(($(date +%s) - t0))
same=$(compare_files) || rc=1
cli=PASS
check_cli || { rc=1; cli=FAIL; }
make_zip
check_zip || rc=1
echo
echo "== cross.sh windows-$ARCH summary"
echo "   host:            $TRIPLET under $($WINE --version 2>/dev/null)"
echo "   passed:          ${PASSED:-0} of ${TOTAL:-?} tests, CLI drivers included (skipped: ${WINDOWS_SKIP[*]} reject_sweep_test)"
echo "   build and suite: ${test_s} s ($B/)"
echo "   files vs x86_64: $same"
echo "   zt.exe checks:   $cli"
echo "   zip:             $ZIP"
echo "   result:          $([ $rc -eq 0 ] && echo PASS || echo FAIL)"
if [ -n "${SUMMARY_FILE:-}" ]; then
  echo "| windows-$ARCH | suites under wine ($TOTAL tests), zip consumer | $PASSED/$TOTAL, files $same, zt.exe $cli | ${test_s} s | $([ $rc -eq 0 ] && echo PASS || echo FAIL) |" >>"$SUMMARY_FILE"
fi
exit $rc
