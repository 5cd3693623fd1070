#!/bin/sh
# Fails when a tracked C/C++ file differs from clang-format's output
# (.clang-format at the top). Exit 77 (meson: skipped) when clang-format or
# git is missing, e.g. in a source tarball without .git.
# Usage: tools/check-format.sh [--fix] [source-root]   (--fix rewrites the files in place)
set -eu
fix=0
if [ "${1:-}" = "--fix" ]; then
  fix=1
  shift
fi
root=$(cd "${1:-$(dirname "$0")/..}" && pwd)
command -v clang-format >/dev/null 2>&1 || { echo "clang-format not installed: skipped"; exit 77; }
command -v git >/dev/null 2>&1 && git -C "$root" rev-parse --git-dir >/dev/null 2>&1 ||
  { echo "not a git checkout: skipped"; exit 77; }
files=$(git -C "$root" ls-files '*.c' '*.cc' '*.cpp' '*.h' '*.hpp')
cd "$root"
if [ $fix = 1 ]; then
  echo "$files" | xargs clang-format -i
  exit 0
fi
bad=$(echo "$files" | xargs clang-format --dry-run --Werror 2>&1 | sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' | sort -u)
if [ -n "$bad" ]; then
  echo "These files differ from clang-format's output (run: tools/check-format.sh --fix):"
  echo "$bad"
  exit 1
fi
echo "all $(echo "$files" | wc -l) C/C++ files are clang-formatted"
