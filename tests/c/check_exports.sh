#!/bin/sh
# libztensor.so exports the C ABI (zt_* functions, in the ZTENSOR_1.x version
# nodes: docs/c-abi.md) and, in the separate node ZTENSOR_PRIVATE, the few
# C++ functions of namespace zt that the zt tool of the same build calls
# (src/internal/internal_api.h). Nothing else, nothing in the wrong node.
lib="$1"
syms=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVWiu]$/ {print $3}')
# Public: zt_NAME@ZTENSOR_1 or @@ZTENSOR_1.N (nm shows no version on old binutils).
public=$(printf '%s\n' "$syms" | grep -E '^zt_[A-Za-z0-9_]*(@@?ZTENSOR_1(\.[0-9]+)?)?$' || true)
private=$(printf '%s\n' "$syms" | grep -E '@@?ZTENSOR_PRIVATE$' || true)
bad=$(printf '%s\n' "$syms" | grep -vE '^zt_[A-Za-z0-9_]*(@@?ZTENSOR_1(\.[0-9]+)?)?$' | grep -vE '@@?ZTENSOR_PRIVATE$' | grep -v '^$' || true)
if [ -n "$bad" ]; then
  echo "symbols exported outside the C ABI and ZTENSOR_PRIVATE:"; echo "$bad"; exit 1
fi
# A private symbol is a C++ name of namespace zt (mangled _ZN2zt..., or the
# typeinfo/vtable of such a class: _ZTIN2zt, _ZTSN2zt, _ZTVN2zt); a zt_*
# function there would be public API hidden in the wrong node.
wrong=$(printf '%s\n' "$private" | grep -vE '^_Z(N|T[ISV]N)2zt' | grep -v '^$' || true)
if [ -n "$wrong" ]; then
  echo "ZTENSOR_PRIVATE holds symbols outside C++ namespace zt:"; echo "$wrong"; exit 1
fi
count=$(printf '%s\n' "$public" | grep -c '^zt_')
nprivate=$(printf '%s\n' "$private" | grep -c . || true)
if [ "$count" -lt 40 ]; then
  echo "only $count zt_ symbols exported"; exit 1
fi
# The internal interface stays small: a new ZT_INTERNAL declaration is a
# deliberate choice (raise the bound with it).
if [ "$nprivate" -gt 16 ]; then
  echo "$nprivate symbols in ZTENSOR_PRIVATE (at most 16):"; echo "$private"; exit 1
fi
echo "$count zt_* symbols exported, $nprivate in ZTENSOR_PRIVATE, nothing else"
