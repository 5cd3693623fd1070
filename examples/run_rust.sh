#!/bin/sh
# Builds the ztensor crate's example interop_digests (formerly
# examples/rust/main.rs) with cargo against the library just built, runs it,
# and compares the component digests it prints with expected.json.
# usage: run_rust.sh BUILD_DIR SOURCE_ROOT INTEROP_DIR
# Exits 77 (skip) only when no cargo is installed.
set -eu
build=$1 src=$2 interop=$3
. "$src/bindings/rust/cargo_env.sh"
cargo_env "$build"
(cd "$src/bindings/rust" && "$cargo" build --offline --quiet --example interop_digests)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/zt-rust-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
. "$src/examples/run_common.sh"
run_and_compare "$CARGO_TARGET_DIR/debug/examples/interop_digests" "$tmp" "$interop"
