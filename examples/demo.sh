#!/bin/sh
# Runs the demo program, then the zt tool on the file it wrote.
set -e
demo="$1"; zt="$2"; out="${3:-demo_model.zt}"
"$demo" "$out"
echo; echo "\$ zt info $out"; "$zt" info "$out"
echo; echo "\$ zt verify $out"; "$zt" verify "$out"
