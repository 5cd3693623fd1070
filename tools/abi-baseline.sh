#!/usr/bin/env bash
# Writes the ABI baseline of the current version, abi/libztensor-X.Y.Z.abi,
# from a throwaway debug build. Run it only when cutting a release
# (docs/versioning.md): the baseline is what every later build of the same
# major version is checked against (meson test --suite abi).
#   tools/abi-baseline.sh           write the baseline for include/ztensor.h's version
#   tools/abi-baseline.sh --force   overwrite an existing baseline of that version
set -euo pipefail
cd "$(dirname "$0")/.."
command -v abidw >/dev/null || { echo "abi-baseline.sh: abidw not found; apt-get install abigail-tools" >&2; exit 1; }
version=$(python3 tools/header_version.py include/ztensor.h)
out="abi/libztensor-$version.abi"
if [ -e "$out" ] && [ "${1:-}" != --force ]; then
  echo "abi-baseline.sh: $out exists; a released baseline is not rewritten (--force to do it anyway)" >&2
  exit 1
fi
build=$(mktemp -d "${TMPDIR:-/tmp}/zt-abi-build-XXXXXX")
trap 'rm -rf "$build"' EXIT
meson setup "$build" --buildtype=debugoptimized -Ddebug=true -Dtests=false -Dinstall_rpath=false >/dev/null
ninja -C "$build" -j"${ZT_JOBS:-2}" "libztensor.so.$version"
mkdir -p abi
# Locations stay (file names only): abidiff --headers-dir decides which types are
# public by where they are declared, and a baseline without them hides every
# type change.
abidw --headers-dir include --drop-private-types --drop-undefined-syms --exported-interfaces-only \
  --short-locs --no-corpus-path --no-comp-dir-path --out-file "$out" "$build/libztensor.so.$version"
echo "abi-baseline.sh: wrote $out ($(grep -c '<elf-symbol ' "$out") symbols)"
