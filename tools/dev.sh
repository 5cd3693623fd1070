#!/usr/bin/env bash
# One entry point for building, the demo and the test suite on Debian 12.
#   tools/dev.sh deps   install the Debian packages the project needs (idempotent)
#   tools/dev.sh demo   the packages the library needs + build + run the
#                       end-to-end demo (README command 1)
#   tools/dev.sh test   deps + build + the whole test suite, then the
#                       ASan/UBSan build and suite (README command 2; CI runs this)
#                       ZT_DEBIAN_CHECK=1 also builds, installs and tries the
#                       Debian packages (tools/debian-check.sh)
#                       then the Linux i686 build and suite, natively
#                       (tools/cross.sh i686; ZT_SKIP_I686=1 skips it)
#                       ZT_CROSS="s390x armhf ..." or ZT_CROSS=all also runs
#                       those cross builds under qemu (tools/cross.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

# What building the library, the zt tool and the demo needs.
DEMO_PACKAGES=(
  build-essential meson ninja-build pkg-config python3
  libzstd-dev libcbor-dev libssl-dev libisal-dev nlohmann-json3-dev
  libzip-dev libdlpack-dev libcurl4-openssl-dev libxxhash-dev libutf8proc-dev
  libprotobuf-dev protobuf-compiler libonnx-dev libhdf5-dev
)
# What the whole test suite needs on top: GoogleTest, the Python binding's
# tests, its C++ extension (python3-dev) and its venv install, other languages' examples, the independent
# conformance checker, the install test's CMake consumer, the clang builds,
# the real HTTP server of the remote-read tests (tests/remote), botocore for
# their S3 signature checks (node and npm, for s3rver, are added by deps()).
TEST_PACKAGES=(
  libgtest-dev libgmock-dev cmake abigail-tools
  python3-numpy python3-pytest python3-scipy python3-torch python3-onnx python3-h5py python3-cbor2 python3-zstandard python3-mypy
  python3-venv python3-pip python3-mesonpy python3-setuptools python3-wheel python3-dev
  golang-go clang libclang-rt-14-dev zstd binutils
  clang-format cargo rustc rustfmt bindgen librust-half-dev librust-pkg-config-dev
  nginx-light python3-botocore openssl aria2
)

# install_missing PACKAGE...: apt-get install of those not yet installed.
install_missing() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "dev.sh: all Debian packages present"
    return
  fi
  echo "dev.sh: installing ${missing[*]}"
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || {
      echo "dev.sh: these Debian packages are missing and neither root nor sudo is available:" >&2
      echo "  apt-get install ${missing[*]}" >&2
      exit 1
    }
    sudo="sudo"
  fi
  # A mirror caught mid-sync fails the update but leaves usable lists: go on,
  # and let the install fail if a package is really missing.
  $sudo apt-get update -qq || echo "dev.sh: apt-get update failed; using the package lists already here" >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
}

demo_deps() { install_missing "${DEMO_PACKAGES[@]}"; }

deps() {
  local extra=()
  # The s3:// tests install s3rver with npm (tests/remote/s3rver). A node
  # from elsewhere (NodeSource, nvm) brings its own npm, which Debian's npm
  # package would conflict with: only when there is none.
  if ! command -v npm >/dev/null 2>&1; then
    extra+=(nodejs npm)
  fi
  install_missing "${DEMO_PACKAGES[@]}" "${TEST_PACKAGES[@]}" "${extra[@]}"
}

# Whether build/ was configured with the tests on.
tests_enabled() {
  meson introspect build --buildoptions | python3 -c \
    'import json, sys; sys.exit(0 if any(o["name"] == "tests" and o["value"] for o in json.load(sys.stdin)) else 1)'
}

# build true|false: configure build/ (tests on or off) and compile.
build() {
  local tests=$1
  if [ ! -f build/build.ninja ]; then
    # CI builds without debug info: a third less compile time on two cores.
    local debug=true
    [ "${CI:-}" = true ] && debug=false
    meson setup build --buildtype=debugoptimized -Ddebug=$debug -Dtests="$tests"
  elif [ "$tests" = true ] && ! tests_enabled; then
    # A build/ set up by the demo has the tests off.
    meson configure build -Dtests=true
  fi
  ninja -C build
}

case "${1:-}" in
  deps) deps ;;
  demo)
    demo_deps
    build false
    ninja -C build run-demo
    ;;
  test)
    deps
    build true
    meson test -C build --print-errorlogs --num-processes 2
    if [ -x .ci/sanitize.sh ] && [ "${ZT_SKIP_SANITIZERS:-0}" != 1 ]; then
      .ci/sanitize.sh
      .ci/tsan.sh
    fi
    # The Debian packages: build, lint, install, use, purge (about three
    # minutes; it installs packages system-wide, so it is opt-in, and CI opts in).
    if [ "${ZT_DEBIAN_CHECK:-0}" = 1 ]; then
      tools/debian-check.sh
    fi
    # Linux i686 (a 32-bit size_t, run natively: tools/cross.sh,
    # docs/cross.md): the plain suite, no sanitizers. ZT_SKIP_I686=1 skips it.
    if [ "${ZT_SKIP_I686:-0}" != 1 ]; then
      tools/cross.sh i686
    fi
    # The emulated cross builds under qemu (about 15 minutes each on two
    # cores), opt-in: ZT_CROSS="s390x armhf" (targets) or ZT_CROSS=all.
    for target in ${ZT_CROSS:-}; do
      tools/cross.sh "$target"
    done
    ;;
  *)
    echo "usage: tools/dev.sh deps|demo|test" >&2
    exit 2
    ;;
esac
