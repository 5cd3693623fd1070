// Rewrites any readable file (0.1, 1.1, 1.2) as spec 1.2.0, keeping every
// object, component, attribute and unknown field; legacy big-endian data is
// stored little-endian.
#pragma once

#include <string>
#include <vector>

#include "reader.h"
#include "writer.h"

namespace zt {

struct MigrateOptions {
  int recompress = 0;  // 0 keep, 1 zstd, -1 raw
  int zstd_level = 3;
  zt_digest_alg digest = ZT_DIGEST_UNKNOWN;  // UNKNOWN: keep each component's
  bool sync = true;
  int format = 1;         // 2: write zTensor v2 (docs/v2.md, Writing)
  bool canonical = true;  // v2: canonical form (§6.3)
};

// Spec 1.1 allowed any integer dtype for the index components of sparse
// objects (indices, indptr, coords); 1.2 requires u64. For such a component
// of another integer dtype, writes it to `w` as blob (name, role) of u64
// entries, decoded and widened piece by piece (a negative entry is
// ZT_E_SPARSE_INDEX), and returns true; else false and writes nothing.
// Memory stays bounded: a few KB of zstd u8 indices can decode to
// gigabytes, eight times that once widened.
bool copy_sparse_index_as_u64(const Reader &in, const Object &o, const Component &c, Writer &w, const std::string &name,
                              const BlobOptions &bo);

// Whether a v2 writer takes o's sparse index components as they are: all
// of them u32 (v2 allows u32 and u64, one dtype for indices and indptr);
// otherwise each is widened to u64 as for 1.2.
bool v2_keeps_u32_indices(const Object &o, const Writer &w);

// Copies every object of `in` into `w` (which the caller finishes).
void copy_objects(const Reader &in, Writer &w, const MigrateOptions &opts);

void migrate_file(const std::string &in_path, const std::string &out_path, const MigrateOptions &opts);

}  // namespace zt
