#!/bin/sh
# zt is a client of libztensor.so (docs/architecture.md): it needs the shared
# library and defines no function of the library's namespace zt itself, so
# no library source is compiled into it a second time. (Inline functions of
# the header-only helpers it shares, src/util/redact_url.h and the like, are
# weak definitions, W; a compiled-in library source shows up as T.)
zt="$1"
if ! readelf -d "$zt" | grep -q 'NEEDED.*\[libztensor\.so\.'; then
  echo "$zt does not link libztensor.so"; exit 1
fi
own=$(nm --defined-only "$zt" | awk '$2 == "T" && $3 ~ /^_Z(N|T[ISV]N)2zt/ {print $3}')
if [ -n "$own" ]; then
  echo "$zt defines functions of the library (a src/ file compiled into it again):"
  printf '%s\n' "$own" | c++filt | head -20
  exit 1
fi
echo "$(basename "$zt") links libztensor.so and compiles none of the library in"
