#!/bin/sh
# Compares the ABI of a freshly built libztensor.so with the stored baseline of
# the last release (abi/libztensor-X.Y.Z.abi) using libabigail's abidiff.
#
# Fails when:
#   - a symbol of the baseline is gone, or a function signature, an enum or a
#     struct layout changed in a way old programs would notice (any change
#     that is not listed as compatible below);
#   - the ABI grew (new functions, fields appended to versioned structs) but
#     the version in include/ztensor.h is still the baseline's: such growth
#     needs a minor bump (docs/versioning.md).
# Compatible, so allowed: added functions; fields appended at the END of an
# option/info struct whose first member is `uint32_t struct_size` (callers
# pass sizeof); added enumerators (libabigail counts them as harmless).
#
# usage: check_abi.sh ABI_DIR LIBRARY INCLUDE_DIR VERSION
set -eu
abi_dir=$1 lib=$2 include=$3 version=$4

if ! command -v abidiff >/dev/null 2>&1; then
  # Skipped on a developer's machine, an error in CI (which sets CI=true): an
  # ABI check that silently never runs protects nothing.
  if [ "${CI:-}" = true ]; then
    echo "FAIL: abidiff not found; install the Debian package abigail-tools (tools/dev.sh deps)"
    exit 1
  fi
  echo "SKIP: abidiff not found; it is in the Debian package abigail-tools (apt-get install abigail-tools)"
  exit 77
fi
baseline=$(for f in "$abi_dir"/libztensor-*.abi; do [ -e "$f" ] && echo "$f"; done | sort -V | tail -n 1)
if [ -z "$baseline" ]; then
  echo "FAIL: no baseline abi/libztensor-*.abi in $abi_dir (tools/abi-baseline.sh makes one)"
  exit 1
fi
if ! grep -q " filepath=" "$baseline"; then
  echo "FAIL: $baseline has no source locations; abidiff --headers-dir would then hide every type"
  echo "      change. Regenerate it with tools/abi-baseline.sh."
  exit 1
fi
base_version=$(basename "$baseline" .abi)
base_version=${base_version#libztensor-}
echo "baseline: $baseline (version $base_version); library: $lib (version $version)"

if ! readelf -S "$lib" | grep -q '\.debug_info'; then
  echo "FAIL: $lib has no debug info, so abidiff cannot see types (build it with -g)"
  exit 1
fi

base_major=${base_version%%.*}
major=${version%%.*}
if [ "$major" != "$base_major" ]; then
  echo "FAIL: the major version changed ($base_version -> $version), so the soname is new and the"
  echo "      $base_version baseline no longer applies: at the $version release run tools/abi-baseline.sh"
  echo "      and delete the old baseline (docs/versioning.md)."
  exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/zt-abi-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# Versioned structs: `typedef struct NAME {` whose next line declares struct_size.
versioned=$(awk '
  /^typedef struct [a-z_0-9]+ \{/ { name = $3; next }
  name != "" { if ($0 ~ /^[ \t]*uint32_t[ \t]+struct_size;/) print name; name = "" }
' "$include"/*.h | paste -sd '|' -)
echo "versioned structs (fields may be appended): $versioned"
cat >"$tmp/compatible.suppr" <<SUPPR
[suppress_type]
  type_kind = struct
  name_regexp = ^($versioned)\$
  has_data_member_inserted_at = end
SUPPR

opts="--drop-private-types --exported-interfaces-only --headers-dir2 $include"

# 1. Nothing incompatible: additions and appended fields are filtered out, any
#    other reported change fails.
rc=0
# shellcheck disable=SC2086 # opts is a word list
abidiff $opts --no-added-syms --suppressions "$tmp/compatible.suppr" "$baseline" "$lib" >"$tmp/strict.txt" 2>&1 || rc=$?
if [ "$rc" -ne 0 ]; then
  cat "$tmp/strict.txt"
  if [ $((rc & 3)) -ne 0 ]; then
    echo "FAIL: abidiff could not compare (exit $rc)"
  else
    [ $((rc & 8)) -ne 0 ] && kind="incompatible (symbols removed)" || kind="incompatible (types or signatures changed)"
    echo "FAIL: ABI change against $base_version is $kind (abidiff exit $rc)."
    echo "      Old programs linked against libztensor.so.$base_major would break. Undo the change, or"
    echo "      make it a major release with a new soname (docs/versioning.md)."
  fi
  exit 1
fi

# 2. Any growth at all needs a version above the baseline's.
rc=0
# shellcheck disable=SC2086
abidiff $opts "$baseline" "$lib" >"$tmp/all.txt" 2>&1 || rc=$?
if [ $((rc & 3)) -ne 0 ]; then
  cat "$tmp/all.txt"; echo "FAIL: abidiff could not compare (exit $rc)"; exit 1
fi
if [ "$rc" -ne 0 ]; then
  cat "$tmp/all.txt"
  if [ "${version%.*}" = "${base_version%.*}" ]; then
    echo "FAIL: the ABI grew compatibly but the version $version has the minor of $base_version: bump"
    echo "      ZT_VERSION_MINOR in include/ztensor.h (docs/versioning.md)."
    exit 1
  fi
  echo "OK: compatible additions since $base_version; version $version"
  exit 0
fi
echo "OK: ABI identical to $base_version"
