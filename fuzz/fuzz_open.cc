// Fuzz target: any bytes as a .zt file in memory — open (lenient and
// strict), enumerate, read every component, view, verify. Whatever the
// bytes, every call must end in data or a status (exercise.h checks the
// results are consistent); sanitizers catch the rest.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "exercise.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (zttest::exercise_bytes(data, size) != 0) std::abort();  // a success with inconsistent results
  return 0;
}
