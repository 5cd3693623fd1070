// Rewrites any readable file (0.1, 1.1, 1.2) as spec 1.2.0, keeping every
// object, component, attribute and unknown field; legacy big-endian data is
// stored little-endian.
#pragma once

#include <string>

#include "reader.h"
#include "writer.h"

namespace zt {

struct MigrateOptions {
  int recompress = 0;  // 0 keep, 1 zstd, -1 raw
  int zstd_level = 3;
  zt_digest_alg digest = ZT_DIGEST_UNKNOWN;  // UNKNOWN: keep each component's
  bool sync = true;
};

// Copies every object of `in` into `w` (which the caller finishes).
void copy_objects(const Reader &in, Writer &w, const MigrateOptions &opts);

void migrate_file(const std::string &in_path, const std::string &out_path, const MigrateOptions &opts);

}  // namespace zt
