#!/bin/sh
# Runs the demo program, then the zt tool on the file it wrote; both under
# $ZT_EXE_WRAPPER when set (the emulator of a cross build).
set -e
demo="$1"; zt="$2"; out="${3:-demo_model.zt}"
$ZT_EXE_WRAPPER "$demo" "$out"
echo; echo "\$ zt info $out"; $ZT_EXE_WRAPPER "$zt" info "$out"
echo; echo "\$ zt verify $out"; $ZT_EXE_WRAPPER "$zt" verify "$out"
