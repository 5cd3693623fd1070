#!/bin/sh
# Runs a libFuzzer campaign on one target with ASan + UBSan.
#   fuzz/run.sh TARGET SECONDS [extra libFuzzer args...]
# TARGET: fuzz_open | fuzz_manifest | fuzz_roundtrip. Builds in
# build-fuzz-libfuzzer/ (clang, -Dfuzzing_engine=libfuzzer, the whole library
# instrumented), seeds a working corpus in build-fuzz-libfuzzer/corpus/TARGET
# from fuzz/corpus/TARGET and the reject-corpus seeds, and writes crashes to
# build-fuzz-libfuzzer/artifacts/. Exit status: libFuzzer's (0 = no finding).
set -eu
target=${1:?usage: fuzz/run.sh TARGET SECONDS [libFuzzer args]}
seconds=${2:?usage: fuzz/run.sh TARGET SECONDS [libFuzzer args]}
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
build=${ZT_FUZZ_BUILD_DIR:-$root/build-fuzz-libfuzzer}
cc=${CC:-clang}
cxx=${CXX:-clang++}

if [ ! -f "$build/build.ninja" ]; then
  # fuzzer-no-link instruments the library for coverage; the targets link
  # -fsanitize=fuzzer (fuzz/meson.build). Warnings are not errors here: the
  # point is finding crashes with whatever clang is installed.
  CC=$cc CXX=$cxx meson setup "$build" "$root" \
    -Dfuzzing_engine=libfuzzer -Db_sanitize=address,undefined -Db_lundef=false \
    -Dwerror=false -Dbuildtype=debugoptimized \
    -Dc_args=-fsanitize=fuzzer-no-link -Dcpp_args=-fsanitize=fuzzer-no-link
fi
ninja -C "$build" -j"${ZT_FUZZ_JOBS:-2}" "fuzz/$target" fuzz/seeds.stamp

corpus=$build/corpus/$target
mkdir -p "$corpus" "$build/artifacts"
seeds="$root/fuzz/corpus/$target"
case $target in
  fuzz_open) seeds="$seeds $build/fuzz/seeds/open" ;;
  fuzz_manifest) seeds="$seeds $build/fuzz/seeds/manifest" ;;
  fuzz_composite) seeds="$seeds $build/fuzz/seeds/open" ;;
esac
# Strip the "fuzz_" prefix for the checked-in folder names.
seeds=$(echo "$seeds" | sed "s|fuzz/corpus/fuzz_|fuzz/corpus/|")

export ASAN_OPTIONS=${ASAN_OPTIONS:-allocator_may_return_null=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
# -rss_limit_mb: hostile sizes must never drive allocation.
exec "$build/fuzz/$target" "$corpus" $seeds \
  -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=65536 -timeout=10 \
  -artifact_prefix="$build/artifacts/$target-" -print_final_stats=1 "$@"
