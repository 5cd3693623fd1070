#!/bin/sh
# Builds the Go module's command interop_digests (formerly
# examples/go/main.go) against the library just built, runs it, and compares
# the component digests it prints with expected.json.
# usage: run_go.sh BUILD_DIR SOURCE_ROOT INTEROP_DIR
# Exits 77 (skip) only when no Go toolchain is installed.
set -eu
build=$1 src=$2 interop=$3
. "$src/bindings/go/go_env.sh"
go_env "$build"
out=$build/examples/go
mkdir -p "$out"
(cd "$src/bindings/go" && "$go" build -o "$out/interop_digests" ./cmd/interop_digests)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/zt-go-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
. "$src/examples/run_common.sh"
run_and_compare "$out/interop_digests" "$tmp" "$interop"
