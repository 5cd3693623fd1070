// A workload written as a format v2 file (spec §2-§3: blobs at 4096-byte
// boundaries, a deterministic-CBOR manifest, the 40-byte footer), for the
// v2 rows of zt_bench: the same tensors as the 1.2 file of the same run.
// Not a writer (that is the library's, when it writes v2): the manifest is
// built with tests/support/v2_image.h, the test-only image builder.
#pragma once

#include <string>

#include "workloads.h"

namespace bench {

void write_v2(const Workload &w, const std::string &path);

}  // namespace bench
