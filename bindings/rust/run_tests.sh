#!/bin/sh
# The meson test `rust`: cargo test (unit, integration and doc tests, the
# compile_fail one included), cargo doc, the README's program on an interop
# vector, and the benchmark (a short run: it must work, the figures are for
# people). Offline: crates come from Debian's librust-*-dev packages.
# usage: run_tests.sh BUILD_DIR SOURCE_ROOT INTEROP_DIR
set -eu
build=$1 src=$2 interop=$3
. "$src/bindings/rust/cargo_env.sh"
cargo_env "$build"
export ZT_INTEROP_DIR="$interop"
cd "$src/bindings/rust"
"$cargo" --version
"$RUSTC" --version
"$cargo" test --offline --workspace
"$cargo" doc --offline --no-deps --workspace
out=$("$cargo" run --offline --quiet --example verify -- "$interop/v1/dense_f32.zt")
echo "$out"
printf '%s\n' "$out" | grep -q '^verified$' || { echo "FAIL: the README program did not verify"; exit 1; }
printf '%s\n' "$out" | grep -q 'first values' || { echo "FAIL: the README program read no tensor"; exit 1; }
ZT_BENCH_ITERS=${ZT_BENCH_ITERS:-20000} "$cargo" bench --offline --bench calls
