// The benchmark workloads of PERF-ANCHORS.md, generated in memory: tensor
// shapes plus one arena holding every tensor's bytes back to back, and the
// writer that turns a workload into a .zt file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench_util.h"

namespace bench {

struct TensorSpec {
  std::string name;
  std::vector<uint64_t> shape;
  uint64_t offset = 0;  // in the arena
  uint64_t bytes = 0;   // f32
};

struct Workload {
  std::string name;
  std::vector<TensorSpec> tensors;
  Buffer arena;
  uint64_t total_bytes() const { return arena.size(); }
};

// scale 1: the 256 MiB shapes of PERF-ANCHORS.md; scale 4: ~1 GiB (--big).
Workload make_large(int scale);
Workload make_mixed(int scale);
Workload make_small(int scale);
// large, values drawn from 300 distinct floats (compresses ~2.7x at zstd-3)
Workload make_large_zstd(int scale);
// n tiny [4] f32 tensors (a manifest-bound file)
Workload make_many(size_t n);

struct WriteSettings {
  zt_encoding encoding = ZT_ENCODING_RAW;
  zt_digest_alg digest = ZT_DIGEST_NONE;
  int zstd_level = 3;
  uint32_t threads = 0;  // writer zstd threads; 0 = cores
  bool sync = false;
  size_t stream_piece = 0;  // > 0: each blob streamed in pieces of this size
  uint32_t format = 1;      // 2: zTensor v2 (docs/v2.md, Writing)
  bool canonical = true;    // v2
  uint64_t alignment = 0;   // v2 non-canonical; 0 = 65536
  bool reversed = false;    // add the tensors in reverse name order
};

// Writes w to path (zt_writer_add_dense per tensor, or streamed).
void write_zt(const Workload &w, const std::string &path, const WriteSettings &s);

// "name d0 d1 ...\n" per tensor, for the numpy side of the comparison.
void write_shape_list(const Workload &w, const std::string &path);

}  // namespace bench
