#!/bin/sh
# Builds examples/go/main.go with cgo against the library just built (no
# network: GOFLAGS=-mod=mod not needed, caches under the build dir), runs it,
# and compares the component digests it prints with expected.json.
# usage: run_go.sh BUILD_DIR SOURCE_ROOT INTEROP_DIR
# Exits 77 (skip) only when no Go toolchain is installed.
set -eu
build=$1 src=$2 interop=$3

go=${GO:-$(command -v go || true)}
if [ -z "$go" ] && [ -x /usr/lib/go/bin/go ]; then go=/usr/lib/go/bin/go; fi
[ -n "$go" ] || { echo "SKIP: go not found (Debian: golang-go)"; exit 77; }

out=$build/examples/go
mkdir -p "$out/cache" "$out/gopath"
GOCACHE=$out/cache GOPATH=$out/gopath GO111MODULE=off GOFLAGS= GOPROXY=off CGO_ENABLED=1 \
  CGO_CFLAGS="-I$src/include" CGO_LDFLAGS="-L$build -Wl,-rpath,$build" \
  "$go" build -o "$out/ztensor_go_example" "$src/examples/go/main.go"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/zt-go-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
. "$src/examples/run_common.sh"
run_and_compare "$out/ztensor_go_example" "$tmp" "$interop"
