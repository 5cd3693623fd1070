#!/usr/bin/env bash
# Cross builds (docs/cross.md). Not part of the default `meson test`; the
# default CI run (tools/dev.sh test) runs `tools/cross.sh i686`, which is
# native and cheap; the emulated targets are opt-in (ZT_CROSS=...).
#
#   tools/cross.sh TARGET   TARGET is one of
#     i686      32-bit x86 Linux, run natively (a 32-bit size_t)
#     aarch64   64-bit ARM Linux, under qemu-user
#     armhf     32-bit ARM Linux (ARMv7 hard float), under qemu-user
#     ppc64le   64-bit little-endian POWER Linux, under qemu-user
#     s390x     big-endian Linux (IBM Z), under qemu-user
#   tools/cross.sh all      every target above, then a summary table
#     windows-x64, windows-x86
#               Windows DLLs with mingw-w64, run under wine, and their zips
#               (tools/cross-windows.sh)
#
# Each target: adds its architecture to dpkg and installs Debian's cross
# compiler, qemu-user-static and the multiarch dev packages; builds in
# build-TARGET/ with cross/TRIPLET.ini; runs the suites (below) there; and
# compares the files it writes (a test program, zt convert, zt export) byte
# for byte with those of the native build/ (tools/dev.sh test makes it).
#
# Options (environment):
#   ZT_CROSS_SUITES   suites to run (default: "core capi c cli reject fuzz
#                     crash conformance examples"); a test also in the
#                     'inproc' suite is left out (the host's Python loads the
#                     library in its process)
#   ZT_CROSS_SKIP     tests left out (default: none; "reject_sweep_test",
#                     which flips every byte of many files, takes about 3.5
#                     minutes under qemu against 36 s natively)
#   ZT_CROSS_NO_DEPS  1: do not touch apt (the packages are there already)
set -euo pipefail
cd "$(dirname "$0")/.."

LINUX_TARGETS="i686 aarch64 armhf ppc64le s390x"

# as_root CMD...: run as root, through sudo when needed.
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

# Multi-Arch: same packages must have one version on every architecture. A
# mirror may carry a newer amd64 security update that it has no build of for
# the other architecture yet: install both at the version the other side has.
same_version_pair() {
  local pkg=$1 arch=$2 v
  v=$(apt-cache policy "$pkg:$arch" | awk '/Candidate:/ {print $2}')
  if [ -z "$v" ] || [ "$v" = "(none)" ]; then
    echo "cross.sh: no $pkg:$arch in the apt sources" >&2
    exit 1
  fi
  echo "$pkg=$v" "$pkg:$arch=$v"
}

# target_info TARGET: sets TRIPLET (the GNU triplet of the cross compiler and
# the cross file's name), DEBARCH (the dpkg architecture), QEMU (the emulator,
# empty when the host runs the programs itself).
target_info() {
  case "$1" in
    i686) TRIPLET=i686-linux-gnu DEBARCH=i386 QEMU= ;;
    aarch64) TRIPLET=aarch64-linux-gnu DEBARCH=arm64 QEMU=qemu-aarch64-static ;;
    armhf) TRIPLET=arm-linux-gnueabihf DEBARCH=armhf QEMU=qemu-arm-static ;;
    ppc64le) TRIPLET=powerpc64le-linux-gnu DEBARCH=ppc64el QEMU=qemu-ppc64le-static ;;
    s390x) TRIPLET=s390x-linux-gnu DEBARCH=s390x QEMU=qemu-s390x-static ;;
    *) return 1 ;;
  esac
}

linux_deps() {
  [ "${ZT_CROSS_NO_DEPS:-0}" = 1 ] && return
  if ! dpkg --print-foreign-architectures | grep -qx "$DEBARCH"; then
    as_root dpkg --add-architecture "$DEBARCH"
  fi
  # A mirror caught mid-sync ("File has unexpected size") fails the update
  # without making the lists already here unusable: go on with them, and let
  # the install below fail if something is really missing.
  as_root apt-get -o DPkg::Lock::Timeout=600 update -qq ||
    echo "cross.sh: apt-get update failed; using the package lists already on this machine" >&2
  local qemu_pkg=()
  [ -n "$QEMU" ] && qemu_pkg=(qemu-user-static)
  # The CLI tests' drivers need the test packages of tools/dev.sh (numpy,
  # cbor2, ...): they come with the native build/ the comparisons need.
  # shellcheck disable=SC2046  # the pairs are words on purpose
  apt_install meson ninja-build pkg-config python3 nlohmann-json3-dev libdlpack-dev \
    libzstd-dev libcbor-dev libgtest-dev \
    "g++-$TRIPLET" "${qemu_pkg[@]}" \
    "libstdc++6:$DEBARCH" "libzstd-dev:$DEBARCH" "libcbor-dev:$DEBARCH" \
    "libgtest-dev:$DEBARCH" "libgmock-dev:$DEBARCH" "libxxhash-dev:$DEBARCH" "libutf8proc-dev:$DEBARCH" \
    $(same_version_pair libssl3 "$DEBARCH") $(same_version_pair libssl-dev "$DEBARCH") \
    "openssl=$(apt-cache policy "libssl3:$DEBARCH" | awk '/Candidate:/ {print $2}')"
}

# seconds since $1 (date +%s.%N)
since() { python3 -c "import sys, time; print(f'{time.time() - float(sys.argv[1]):.0f}')" "$1"; }

# run_host PROGRAM ARGS...: a program of the cross build, under its emulator.
run_host() {
  if [ -n "$QEMU" ]; then
    "$QEMU" "$@"
  else
    "$@"
  fi
}

# compare_files BUILD: byte identity with the native build/, beyond the
# checked-in references the host_order tests compare with: the same
# program's output, the same zt convert, and zt export read back. Prints the
# verdict; returns 1 when a file differs.
compare_files() {
  local b=$1
  if [ ! -x build/tests/cross/host_order_file ] || [ ! -x build/tools/zt ]; then
    echo "skipped (no native build/: tools/dev.sh test makes one)"
    return 0
  fi
  local tmp enc verdict=identical
  tmp=$(mktemp -d)
  for enc in raw zstd v2 v2zstd; do  # spec 1.2, then zTensor v2
    build/tests/cross/host_order_file "$tmp/native_$enc.zt" "$enc" >/dev/null
    run_host "$b/tests/cross/host_order_file" "$tmp/cross_$enc.zt" "$enc" >/dev/null
    cmp "$tmp/native_$enc.zt" "$tmp/cross_$enc.zt" >&2 || verdict="DIFFERENT ($enc)"
  done
  # zt convert: foreign little-endian files (.npy exported by the native zt
  # from the reference) become the same .zt on both hosts.
  local o inputs=()
  for o in a_f64 e_i16 h_u32 k_f16 o_c64; do
    build/tools/zt export tests/data/host_order/raw.zt "$o" -o "$tmp/$o.npy"
    inputs+=("$tmp/$o.npy")
  done
  build/tools/zt convert "${inputs[@]}" -o "$tmp/native_convert.zt" --no-sync --quiet
  run_host "$b/tools/zt" convert "${inputs[@]}" -o "$tmp/cross_convert.zt" --no-sync --quiet
  cmp "$tmp/native_convert.zt" "$tmp/cross_convert.zt" >&2 || verdict="DIFFERENT (zt convert)"
  # zt export on the cross host labels its host-order data ('>f8' on a
  # big-endian one): converted back natively it gives the same .zt again.
  mkdir "$tmp/x"
  for o in a_f64 e_i16 h_u32 k_f16 o_c64; do
    run_host "$b/tools/zt" export tests/data/host_order/raw.zt "$o" -o "$tmp/x/$o.npy"
  done
  build/tools/zt convert "$tmp"/x/*.npy -o "$tmp/cross_export.zt" --no-sync --quiet
  cmp "$tmp/native_convert.zt" "$tmp/cross_export.zt" >&2 || verdict="DIFFERENT (zt export)"
  rm -rf "$tmp"
  echo "$verdict"
  [ "$verdict" = identical ]
}

# select_tests BUILD SUITES SKIP names|outputs: the tests of SUITES less
# SKIP and the in-process ones, by name; or the files they need built
# (relative to BUILD, for ninja). Shared with tools/cross-windows.sh.
select_tests() {
  python3 tools/cross_select_tests.py "$@"
}

# linux_target TARGET: deps, build, suites, byte identity; a summary line in
# $SUMMARY_FILE when set.
linux_target() {
  local target=$1
  target_info "$target"
  linux_deps
  local b=build-$target
  local suites=${ZT_CROSS_SUITES:-"core capi c cli reject fuzz crash conformance examples"}
  local skip=${ZT_CROSS_SKIP-}
  local t0 build_s test_s
  t0=$(date +%s.%N)
  if [ ! -f "$b/build.ninja" ]; then
    # libzip: Debian 12's foreign-architecture libzip-dev needs
    # linux-libc-dev at the amd64 version, which mirrors often lack; zt then
    # cannot read .npz. ISA-L and libcurl are x86_64/optional: software
    # CRC32C, and zt_open_url says HTTP is not built in.
    meson setup "$b" --cross-file "cross/$TRIPLET.ini" \
      -Doptimization=2 -Ddebug=false -Dlibzip=disabled -Disal=disabled -Dcurl=disabled
  else
    # An existing build regenerates first when a meson.build changed, so the
    # test list read from `meson introspect` below is the current one.
    ninja -C "$b" build.ninja >/dev/null
  fi
  # The tests of those suites, by name, less the skipped and in-process
  # ones; and what they need built (not the targets of the suites left out:
  # the abi test's second library, the language examples, ...).
  local tests=() outputs=()
  mapfile -t tests < <(select_tests "$b" "$suites" "$skip" names)
  mapfile -t outputs < <(select_tests "$b" "$suites" "$skip" outputs)
  ninja -C "$b" "${outputs[@]}"
  build_s=$(since "$t0")

  t0=$(date +%s.%N)
  local rc=0 passed total=${#tests[@]}
  # qemu-user runs a program several times slower: the timeouts stretch.
  meson test -C "$b" --no-rebuild --print-errorlogs --num-processes 2 -t 4 "${tests[@]}" || rc=$?
  passed=$(python3 -c '
import json, sys
ok = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    ok += r["result"] in ("OK", "EXPECTEDFAIL", "SKIP")
print(ok)' "$b/meson-logs/testlog.json")
  test_s=$(since "$t0")

  local same
  same=$(compare_files "$b") || rc=1

  local host="$TRIPLET natively"
  [ -n "$QEMU" ] && host="$TRIPLET under $($QEMU --version | head -1)"
  echo
  echo "== cross.sh $target summary"
  echo "   host:            $host"
  echo "   build time:      ${build_s} s ($b/)"
  echo "   suites:          $suites (${total} tests; skipped: ${skip:-none}; in-process Python tests left out)"
  echo "   passed:          $passed of $total"
  echo "   suite time:      ${test_s} s"
  echo "   files vs x86_64: $same"
  echo "   result:          $([ $rc -eq 0 ] && echo PASS || echo FAIL)"
  if [ -n "${SUMMARY_FILE:-}" ]; then
    echo "| $target | $suites ($total tests) | $passed/$total, files $same | build ${build_s} s, suite ${test_s} s | $([ $rc -eq 0 ] && echo PASS || echo FAIL) |" >>"$SUMMARY_FILE"
  fi
  return $rc
}

usage() {
  echo "usage: tools/cross.sh i686|aarch64|armhf|ppc64le|s390x|windows-x64|windows-x86|all   (docs/cross.md)" >&2
  exit 2
}

case "${1:-}" in
  all)
    SUMMARY_FILE=$(mktemp)
    export SUMMARY_FILE
    rc=0
    for t in $LINUX_TARGETS; do
      (linux_target "$t") || rc=1
    done
    for t in x64 x86; do
      tools/cross-windows.sh "$t" || rc=1
    done
    echo
    echo "| target | ran | passed | time | result |"
    echo "| --- | --- | --- | --- | --- |"
    cat "$SUMMARY_FILE"
    rm -f "$SUMMARY_FILE"
    exit $rc
    ;;
  windows-x64 | windows-x86)
    exec tools/cross-windows.sh "${1#windows-}"
    ;;
  *)
    target_info "${1:-}" || usage
    linux_target "$1"
    ;;
esac
