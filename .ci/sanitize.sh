#!/usr/bin/env bash
# CI: the whole test suite under AddressSanitizer + UndefinedBehaviorSanitizer
# (gcc), in build-asan/. Hostile-input tests (tests/reject, the fuzz corpus
# replays) run here with leak detection on; an allocation that fails must be
# a clean ZT_E_NOMEM, so allocator_may_return_null=1.
#   .ci/sanitize.sh [extra meson test args...]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${ZT_ASAN_BUILD_DIR:-build-asan}
jobs=${ZT_JOBS:-2}

if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debugoptimized
fi
ninja -C "$build" -j"$jobs"

export ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# Programs that are not themselves built with the sanitizers (Python, Rust,
# Go, the installed pkg-config consumer) cannot load an ASan-instrumented
# libztensor.so; they run in the plain build of tools/dev.sh test. The
# 'inproc' suite holds the Python drivers of zt that also load the library
# in-process (and measure peak RSS, which ASan's shadow and quarantine skew).
meson test -C "$build" --num-processes "$jobs" --print-errorlogs --timeout-multiplier 3 \
  --no-suite bindings --no-suite languages --no-suite install --no-suite complexity --no-suite inproc "$@"
