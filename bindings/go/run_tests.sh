#!/bin/sh
# The meson test `go`: go vet, go test -race (interop vectors, round trips,
# errors, goroutines, the README's program as Example), and the benchmarks
# (a short run: they must work; the figures are for people).
# usage: run_tests.sh BUILD_DIR SOURCE_ROOT INTEROP_DIR
set -eu
build=$1 src=$2 interop=$3
. "$src/bindings/go/go_env.sh"
go_env "$build"
export ZT_INTEROP_DIR="$interop"
cd "$src/bindings/go"
"$go" version
"$go" vet ./...
"$go" test -race -count=1 ./...
"$go" test -count=1 -run '^$' -bench . -benchtime "${ZT_BENCH_ITERS:-20000}x" .
