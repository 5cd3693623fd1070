#!/usr/bin/env bash
# ThreadSanitizer build of the shared-reader concurrency test (issue 5) and
# of zt_file_read_many on several threads (chunks, batches, zstd jobs):
# one reader handle used by 8 threads at once must be race-free.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${ZT_TSAN_BUILD:-build-tsan}
if [ ! -f "$dir/build.ninja" ]; then
  meson setup "$dir" -Db_sanitize=thread -Dbuildtype=debugoptimized -Db_lundef=false >/dev/null
fi
ninja -C "$dir" tests/capi_concurrency_test tests/capi_read_many_test
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
  meson test -C "$dir" --no-rebuild --print-errorlogs capi_concurrency_test capi_read_many_test
