#!/bin/sh
# The meson tests gofmt and rustfmt: the Go module is as gofmt writes it
# (gofmt -l lists nothing) and the Rust crates as cargo fmt writes them
# (cargo fmt --check, with bindings/rust/rustfmt.toml). Exit 77 (skipped)
# when the tool is not installed (Debian: golang-go; cargo and rustfmt).
# usage: check_format.sh go|rust SOURCE_ROOT BUILD_DIR
set -eu
lang=$1 src=$2 build=$3
case "$lang" in
  go)
    gofmt=$(command -v gofmt || true)
    [ -z "$gofmt" ] && [ -x /usr/lib/go/bin/gofmt ] && gofmt=/usr/lib/go/bin/gofmt
    [ -n "$gofmt" ] || { echo "SKIP: gofmt not found (Debian: golang-go)"; exit 77; }
    files=$("$gofmt" -l "$src/bindings/go")
    if [ -n "$files" ]; then
      echo "FAIL: not as gofmt writes them (run gofmt -w bindings/go):"
      echo "$files"
      "$gofmt" -d "$src/bindings/go"
      exit 1
    fi
    echo "bindings/go: gofmt -l lists nothing"
    ;;
  rust)
    # Debian's cargo and its rustfmt (as the rust test builds with them),
    # else whatever cargo is first in PATH.
    cargo=/usr/bin/cargo
    [ -x "$cargo" ] || cargo=$(command -v cargo || true)
    [ -n "$cargo" ] || { echo "SKIP: cargo not found (Debian: cargo)"; exit 77; }
    dir=$(dirname "$cargo")
    if [ ! -x "$dir/cargo-fmt" ] || [ ! -x "$dir/rustfmt" ]; then
      echo "SKIP: cargo fmt not found beside $cargo (Debian: rustfmt)"
      exit 77
    fi
    export PATH="$dir:$PATH" CARGO_HOME="$build/bindings/rust/cargo-home-fmt" CARGO_TERM_COLOR=never
    cd "$src/bindings/rust"
    if ! "$cargo" fmt --all --check; then
      echo "FAIL: not as cargo fmt writes them (run cargo fmt in bindings/rust)"
      exit 1
    fi
    echo "bindings/rust: cargo fmt --check is clean"
    ;;
  *)
    echo "usage: check_format.sh go|rust SOURCE_ROOT BUILD_DIR" >&2
    exit 2
    ;;
esac
