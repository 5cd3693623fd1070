#!/bin/sh
# Windows: the DLL exports the zt_* functions (docs/c-abi.md) and, as the
# internal interface of the zt tool of the same build, a few C++ names of
# namespace zt marked ZT_INTERNAL (src/internal/internal_api.h), read from
# its export table with the cross toolchain's objdump -p. Nothing else.
objdump="$1"
dll="$2"
names=$("$objdump" -p "$dll" | awk '/\[Ordinal\/Name Pointer\] Table/ {t = 1; next} t && /^\t\[/ {print $NF; next} t {t = 0}')
bad=$(printf '%s\n' "$names" | grep -v '^zt_' | grep -vE '^_Z(N|T[ISV]N)2zt' | grep -v '^$' || true)
count=$(printf '%s\n' "$names" | grep -c '^zt_')
nprivate=$(printf '%s\n' "$names" | grep -cE '^_Z(N|T[ISV]N)2zt' || true)
if [ -n "$bad" ]; then
  echo "symbols exported from $dll outside the C ABI and the internal interface:"; echo "$bad"; exit 1
fi
if [ "$count" -lt 40 ]; then
  echo "only $count zt_ symbols exported from $dll"; exit 1
fi
# zt::Error's members and the ZT_INTERNAL functions: a new one is a deliberate choice.
if [ "$nprivate" -gt 32 ]; then
  echo "$nprivate internal C++ symbols exported from $dll (at most 32)"; exit 1
fi
echo "$count zt_* symbols exported from $(basename "$dll"), $nprivate internal, nothing else"
