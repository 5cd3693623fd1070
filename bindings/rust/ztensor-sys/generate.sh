#!/bin/sh
# Regenerates src/bindings.rs from the C headers with Debian's bindgen
# (0.60). The checked-in file is what the crate compiles; the meson test
# rust_sys_bindings (tests/bindings_drift.sh) runs this into a temporary file
# and fails when the two differ, so a header change cannot go unnoticed.
# usage: generate.sh INCLUDE_DIR OUT.rs
set -eu
here=$(cd "$(dirname "$0")" && pwd)
inc=${1:-$here/../../../include}
out=${2:-$here/src/bindings.rs}
bindgen=${BINDGEN:-bindgen}
"$bindgen" "$here/wrapper.h" -o "$out" \
  --allowlist-function 'zt_.*' --allowlist-type 'zt_.*' --allowlist-var 'ZT_.*' \
  --no-prepend-enum-name --size_t-is-usize --ctypes-prefix 'std::os::raw' \
  --no-doc-comments --rust-target 1.47 \
  -- -I"$inc"
