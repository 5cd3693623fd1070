// The baseline for writes: what the original implementation does, in plain
// C++ — open the destination itself with O_TRUNC, write the magic, each
// blob (and its padding to 64 bytes) with its own write() while it records
// each object in a map by name (its BTreeMap of serde structs), encode that
// map as the CBOR manifest, then write the manifest, its size and the
// footer. Optionally fsync before close.
#pragma once

#include <string>

#include "workloads.h"

namespace bench {

// Raw blobs.
void write_original(const Workload &w, const std::string &path, bool sync);

// Each blob compressed with single-threaded ZSTD_compress (level) first.
void write_original_zstd(const Workload &w, const std::string &path, int level);

}  // namespace bench
