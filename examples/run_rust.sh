#!/bin/sh
# Builds examples/rust/main.rs with rustc against the library just built, runs
# it, and compares the component digests it prints with expected.json.
# usage: run_rust.sh BUILD_DIR SOURCE_ROOT INTEROP_DIR
# Exits 77 (skip) only when no rustc is installed.
set -eu
build=$1 src=$2 interop=$3

rustc=${RUSTC:-$(command -v rustc || true)}
if [ -z "$rustc" ] && [ -x "${HOME:-/root}/.cargo/bin/rustc" ]; then rustc=${HOME:-/root}/.cargo/bin/rustc; fi
[ -n "$rustc" ] || { echo "SKIP: rustc not found (install rustc or set RUSTC)"; exit 77; }

out=$build/examples/rust
mkdir -p "$out"
"$rustc" --edition 2021 -D warnings "$src/examples/rust/main.rs" -o "$out/ztensor_rust_example" \
  -L "$build" -l ztensor -C link-arg=-Wl,-rpath,"$build"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/zt-rust-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
. "$src/examples/run_common.sh"
run_and_compare "$out/ztensor_rust_example" "$tmp" "$interop"
