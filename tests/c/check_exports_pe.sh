#!/bin/sh
# Windows: the DLL exports only zt_* functions (docs/c-abi.md), read from
# its export table with the cross toolchain's objdump -p.
objdump="$1"
dll="$2"
names=$("$objdump" -p "$dll" | awk '/\[Ordinal\/Name Pointer\] Table/ {t = 1; next} t && /^\t\[/ {print $NF; next} t {t = 0}')
bad=$(printf '%s\n' "$names" | grep -v '^zt_' | grep -v '^$' || true)
count=$(printf '%s\n' "$names" | grep -c '^zt_')
if [ -n "$bad" ]; then
  echo "non-zt_ symbols exported from $dll:"; echo "$bad"; exit 1
fi
if [ "$count" -lt 40 ]; then
  echo "only $count zt_ symbols exported from $dll"; exit 1
fi
echo "$count zt_* symbols exported from $(basename "$dll"), nothing else"
