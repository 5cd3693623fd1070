# Sourced by the meson tests of the Rust bindings: picks Debian's cargo and
# rustc (the crates' MSRV is Debian 12's rustc 1.63), keeps every cache in
# the build directory, and points pkg-config and the loader at the library
# just built (meson-uninstalled/ztensor-uninstalled.pc).
# cargo_env BUILD_DIR; sets $cargo or exits 77 (skip) when none is installed.
cargo_env() {
  build=$1
  cargo=${CARGO:-}
  if [ -z "$cargo" ]; then
    for c in /usr/bin/cargo "$(command -v cargo || true)"; do
      [ -n "$c" ] && [ -x "$c" ] && { cargo=$c; break; }
    done
  fi
  [ -n "$cargo" ] || { echo "SKIP: cargo not found (Debian: cargo, rustc)"; exit 77; }
  # The rustc beside that cargo, not a rustup one earlier in PATH.
  dir=$(dirname "$cargo")
  [ -x "$dir/rustc" ] && export RUSTC="${RUSTC:-$dir/rustc}"
  [ -x "$dir/rustdoc" ] && export RUSTDOC="${RUSTDOC:-$dir/rustdoc}"
  export CARGO_HOME="$build/bindings/rust/cargo-home"
  export CARGO_TARGET_DIR="$build/bindings/rust/target"
  export PKG_CONFIG_PATH="$build/meson-uninstalled${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
  export LD_LIBRARY_PATH="$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export CARGO_TERM_COLOR=never CARGO_INCREMENTAL=0
  mkdir -p "$CARGO_HOME"
}
