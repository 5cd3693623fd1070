# Sourced by run_rust.sh and run_go.sh: runs an example program and compares
# the "file<TAB>object<TAB>role<TAB>sha256" lines it prints for a few interop
# vectors with the sha256 values in their expected.json.
# run_and_compare PROGRAM TMPDIR INTEROP_DIR

run_and_compare() {
  prog=$1 dir=$2 vectors=$3
  files=""
  for f in v1/dense_all_dtypes.zt v1/zstd_levels.zt v1/sparse_csr.zt v1/quantized_group.zt v1/logical_types.zt \
           v0/v01_raw_be.zt v0/v01_zstd.zt; do
    [ -f "$vectors/$f" ] && files="$files $vectors/$f"
  done
  # shellcheck disable=SC2086 # a list of paths without spaces
  "$prog" "$dir/scratch.zt" $files >"$dir/out.txt"
  cat "$dir/out.txt"
  grep -q '^round trip OK' "$dir/out.txt" || { echo "FAIL: no round-trip confirmation"; return 1; }
  if [ -z "$files" ]; then
    echo "FAIL: no interop vectors under '$vectors' (they ship in tests/data/interop)"
    return 1
  fi
  py=$(command -v /usr/bin/python3 || command -v python3)
  # shellcheck disable=SC2086
  "$py" - $files >"$dir/expected.txt" <<'PY'
import json, os, sys
for path in sys.argv[1:]:
    exp = json.load(open(os.path.join(os.path.dirname(path), "expected.json")))["files"][os.path.basename(path)]
    for o in exp["objects"]:
        for c in o["components"]:
            print(f"{os.path.basename(path)}\t{o['name']}\t{c['role']}\t{c['sha256']}")
PY
  grep "$(printf '\t')" "$dir/out.txt" | sort >"$dir/got.sorted"
  sort "$dir/expected.txt" >"$dir/expected.sorted"
  [ -s "$dir/expected.sorted" ] || { echo "FAIL: no expected digests"; return 1; }
  if ! diff -u "$dir/expected.sorted" "$dir/got.sorted"; then
    echo "FAIL: component digests differ from expected.json"
    return 1
  fi
  echo "$(wc -l <"$dir/got.sorted") component digests match expected.json"
}
