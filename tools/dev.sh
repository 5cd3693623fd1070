#!/usr/bin/env bash
# One entry point for building, the demo and the test suite on Debian 12.
#   tools/dev.sh deps   install the Debian packages the project needs (idempotent)
#   tools/dev.sh demo   deps + build + run the end-to-end demo (README command 1)
#   tools/dev.sh test   deps + build + the whole test suite, then the
#                       ASan/UBSan build and suite (README command 2; CI runs this)
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  build-essential meson ninja-build pkg-config python3
  libzstd-dev libcbor-dev libssl-dev libisal-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libzip-dev libdlpack-dev
  python3-numpy python3-pytest python3-scipy python3-torch python3-cbor2 python3-zstandard python3-mypy
  python3-venv python3-mesonpy python3-setuptools python3-wheel
  golang-go clang libclang-rt-14-dev zstd binutils
)

deps() {
  local missing=()
  # The Rust example needs a rustc; the machines may already have one from rustup.
  if ! command -v rustc >/dev/null 2>&1 && [ ! -x "${HOME:-/root}/.cargo/bin/rustc" ]; then
    PACKAGES+=(rustc)
  fi
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "dev.sh: all Debian packages present"
    return
  fi
  echo "dev.sh: installing ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
}

build() {
  if [ ! -f build/build.ninja ]; then
    # CI builds without debug info: a third less compile time on two cores.
    local debug=true
    [ "${CI:-}" = true ] && debug=false
    meson setup build --buildtype=debugoptimized -Ddebug=$debug
  fi
  ninja -C build
}

case "${1:-}" in
  deps) deps ;;
  demo)
    deps
    build
    ninja -C build run-demo
    ;;
  test)
    deps
    build
    meson test -C build --print-errorlogs --num-processes 2
    if [ -x .ci/sanitize.sh ] && [ "${ZT_SKIP_SANITIZERS:-0}" != 1 ]; then
      .ci/sanitize.sh
      .ci/tsan.sh
    fi
    ;;
  *)
    echo "usage: tools/dev.sh deps|demo|test" >&2
    exit 2
    ;;
esac
