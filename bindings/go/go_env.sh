# Sourced by the meson tests of the Go module: Debian's go (1.19), no
# network (GOPROXY=off, GOFLAGS=-mod=mod: the module has no dependencies),
# every cache under the build directory, pkg-config and the loader pointed
# at the library just built (meson-uninstalled/ztensor-uninstalled.pc).
# go_env BUILD_DIR; sets $go or exits 77 (skip) when none is installed.
go_env() {
  build=$1
  go=${GO:-$(command -v go || true)}
  if [ -z "$go" ] && [ -x /usr/lib/go/bin/go ]; then go=/usr/lib/go/bin/go; fi
  [ -n "$go" ] || { echo "SKIP: go not found (Debian: golang-go)"; exit 77; }
  export GOCACHE="$build/bindings/go/cache" GOPATH="$build/bindings/go/gopath"
  export GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local GO111MODULE=on CGO_ENABLED=1 GOTELEMETRY=off
  export PKG_CONFIG_PATH="$build/meson-uninstalled${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
  export LD_LIBRARY_PATH="$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  mkdir -p "$GOCACHE" "$GOPATH"
}
