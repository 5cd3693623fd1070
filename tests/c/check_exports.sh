#!/bin/sh
# Only zt_* symbols may be exported from libztensor.so (docs/c-abi.md).
lib="$1"
bad=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVWiu]$/ {print $3}' | grep -v '^zt_' || true)
count=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -c '^zt_')
if [ -n "$bad" ]; then
  echo "non-zt_ symbols exported:"; echo "$bad"; exit 1
fi
if [ "$count" -lt 40 ]; then
  echo "only $count zt_ symbols exported"; exit 1
fi
echo "$count zt_* symbols exported, nothing else"
