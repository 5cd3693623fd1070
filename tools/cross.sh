#!/usr/bin/env bash
# Cross builds run under emulation (docs/cross.md). Not part of the default
# `meson test`; CI runs it when ZT_CROSS=s390x is set (tools/dev.sh test).
#
#   tools/cross.sh s390x    big-endian Linux (IBM Z): installs Debian's cross
#                           compiler, qemu-user-static and the :s390x dev
#                           packages, builds in build-s390x/, runs the core,
#                           C ABI, C, reject and fuzz-replay suites under qemu,
#                           and compares the files written there (by a test
#                           program and by zt convert) with those written by
#                           a native build (build/).
#
# Options (environment):
#   ZT_CROSS_SUITES   suites to run (default: "core capi c reject fuzz")
#   ZT_CROSS_SKIP     tests left out (default: "reject_sweep_test", which
#                     flips every byte of many files: 10 minutes under qemu;
#                     set it to "" to run it)
#   ZT_CROSS_NO_DEPS  1: do not touch apt (the packages are there already)
set -euo pipefail
cd "$(dirname "$0")/.."

SUITES=${ZT_CROSS_SUITES:-"core capi c reject fuzz"}
SKIP=${ZT_CROSS_SKIP-"reject_sweep_test"}

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
# mirror may carry a newer amd64 security update that it has no s390x build
# of yet: install both at the version the s390x side has.
same_version_pair() {
  local pkg=$1 arch=$2 v
  v=$(apt-cache policy "$pkg:$arch" | awk '/Candidate:/ {print $2}')
  if [ -z "$v" ] || [ "$v" = "(none)" ]; then
    echo "cross.sh: no $pkg:$arch in the apt sources" >&2
    exit 1
  fi
  echo "$pkg=$v" "$pkg:$arch=$v"
}

s390x_deps() {
  [ "${ZT_CROSS_NO_DEPS:-0}" = 1 ] && return
  if ! dpkg --print-foreign-architectures | grep -qx s390x; then
    as_root dpkg --add-architecture s390x
  fi
  as_root apt-get -o DPkg::Lock::Timeout=600 update -qq
  # shellcheck disable=SC2046  # the pairs are words on purpose
  apt_install meson ninja-build pkg-config python3 nlohmann-json3-dev libdlpack-dev \
    libzstd-dev libcbor-dev libgtest-dev \
    g++-s390x-linux-gnu qemu-user-static \
    libstdc++6:s390x libzstd-dev:s390x libcbor-dev:s390x libgtest-dev:s390x libgmock-dev:s390x \
    $(same_version_pair libssl3 s390x) $(same_version_pair libssl-dev s390x) \
    "openssl=$(apt-cache policy libssl3:s390x | awk '/Candidate:/ {print $2}')"
}

# seconds since $1 (date +%s.%N)
since() { python3 -c "import sys, time; print(f'{time.time() - float(sys.argv[1]):.0f}')" "$1"; }

s390x() {
  s390x_deps
  local t0 build_s test_s
  t0=$(date +%s.%N)
  if [ ! -f build-s390x/build.ninja ]; then
    # libzip: Debian 12's :s390x build needs linux-libc-dev at the amd64
    # version, which mirrors often lack; zt then cannot read .npz.
    meson setup build-s390x --cross-file cross/s390x-linux-gnu.ini \
      -Doptimization=2 -Ddebug=false -Dlibzip=disabled -Disal=disabled
  fi
  ninja -C build-s390x
  build_s=$(since "$t0")

  t0=$(date +%s.%N)
  # The tests of those suites, by name, less the skipped ones.
  local tests=()
  mapfile -t tests < <(meson test -C build-s390x --list --no-rebuild 2>/dev/null | python3 -c '
import sys
suites, skip = set(sys.argv[1].split()), set(sys.argv[2].split())
for line in sys.stdin:
    parts = [p.strip() for p in line.split("/")]
    if len(parts) == 2 and parts[0].split(":")[-1] in suites and parts[1] not in skip:
        print(parts[1])' "$SUITES" "$SKIP")
  local rc=0
  # qemu-user runs a program several times slower: the timeouts stretch.
  meson test -C build-s390x --no-rebuild --print-errorlogs --num-processes 2 -t 4 "${tests[@]}" || rc=$?
  test_s=$(since "$t0")

  # Byte identity with a little-endian build, beyond the checked-in
  # references the host_order tests compare with: the same program's output,
  # the same zt convert, and zt export read back.
  local same="skipped (no native build/: tools/dev.sh test makes one)"
  if [ -x build/tests/cross/host_order_file ] && [ -x build/tools/zt ]; then
    same="identical"
    local tmp enc
    tmp=$(mktemp -d)
    for enc in raw zstd; do
      build/tests/cross/host_order_file "$tmp/le_$enc.zt" "$enc" >/dev/null
      qemu-s390x-static build-s390x/tests/cross/host_order_file "$tmp/be_$enc.zt" "$enc" >/dev/null
      if ! cmp "$tmp/le_$enc.zt" "$tmp/be_$enc.zt"; then
        same="DIFFERENT ($enc)"
        rc=1
      fi
    done
    # zt convert: foreign little-endian files (.npy exported by the native
    # zt from the reference) become the same .zt on both hosts.
    local o inputs=()
    for o in a_f64 e_i16 h_u32 k_f16 o_c64; do
      build/tools/zt export tests/data/host_order/raw.zt "$o" -o "$tmp/$o.npy"
      inputs+=("$tmp/$o.npy")
    done
    build/tools/zt convert "${inputs[@]}" -o "$tmp/le_convert.zt" --no-sync --quiet
    qemu-s390x-static build-s390x/tools/zt convert "${inputs[@]}" -o "$tmp/be_convert.zt" --no-sync --quiet
    if ! cmp "$tmp/le_convert.zt" "$tmp/be_convert.zt"; then
      same="DIFFERENT (zt convert)"
      rc=1
    fi
    # zt export on s390x labels its host-order data big-endian ('>f8'):
    # converted back on x86_64 it gives the same .zt again.
    mkdir "$tmp/be"
    for o in a_f64 e_i16 h_u32 k_f16 o_c64; do
      qemu-s390x-static build-s390x/tools/zt export tests/data/host_order/raw.zt "$o" -o "$tmp/be/$o.npy"
    done
    build/tools/zt convert "$tmp"/be/*.npy -o "$tmp/be_export.zt" --no-sync --quiet
    if ! cmp "$tmp/le_convert.zt" "$tmp/be_export.zt"; then
      same="DIFFERENT (zt export)"
      rc=1
    fi
    rm -rf "$tmp"
  fi

  echo
  echo "== cross.sh s390x summary"
  echo "   host:            s390x-linux-gnu (big-endian) under $(qemu-s390x-static --version | head -1)"
  echo "   build time:      ${build_s} s (build-s390x/)"
  echo "   suites:          $SUITES (${#tests[@]} tests; skipped: ${SKIP:-none})"
  echo "   suite time:      ${test_s} s under qemu"
  echo "   files vs x86_64: $same"
  echo "   result:          $([ $rc -eq 0 ] && echo PASS || echo FAIL)"
  return $rc
}

case "${1:-}" in
  s390x) s390x ;;
  *)
    echo "usage: tools/cross.sh s390x   (see docs/cross.md; the Windows build is not there yet)" >&2
    exit 2
    ;;
esac
