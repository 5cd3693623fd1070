#!/bin/sh
# The meson test `rust_sys_bindings`: regenerates ztensor-sys's bindings
# from the headers with bindgen and fails when they differ from the
# checked-in src/bindings.rs (run ztensor-sys/generate.sh after changing a
# header). Skips (77) only when bindgen is not installed.
# usage: check_bindings.sh SOURCE_ROOT TMPDIR
set -eu
src=$1 tmp=$2
command -v "${BINDGEN:-bindgen}" >/dev/null || { echo "SKIP: bindgen not found (Debian: bindgen)"; exit 77; }
mkdir -p "$tmp"
"$src/bindings/rust/ztensor-sys/generate.sh" "$src/include" "$tmp/bindings.rs"
if ! diff -u "$src/bindings/rust/ztensor-sys/src/bindings.rs" "$tmp/bindings.rs"; then
  echo "FAIL: bindings/rust/ztensor-sys/src/bindings.rs is out of date with include/*.h;"
  echo "      run bindings/rust/ztensor-sys/generate.sh and commit the result"
  exit 1
fi
echo "ztensor-sys bindings match the headers"
