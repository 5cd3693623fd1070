// Fuzz target: any bytes as a .zt file in memory, then every composite path
// of ztensor_composite.h on every object — sparse info, index reads,
// densify, quantization info, dequantize, validate — lenient and strict.
// Each call ends in data or a status; a success must be consistent (sizes
// as announced). Decoded sizes above 64 MiB are not allocated.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "ztensor.h"
#include "ztensor_composite.h"

namespace {

constexpr size_t kMaxAlloc = size_t{64} << 20;

void check(bool ok) {
  if (!ok) std::abort();  // a success with inconsistent results
}

void exercise_object(const zt_object *o) {
  zt_sparse_info si{};
  si.struct_size = sizeof si;
  if (zt_object_sparse_info(o, &si) == ZT_OK) {
    for (const char *role : {"indices", "indptr", "coords"}) {
      size_t n = 0;
      zt_status st = zt_object_read_index(o, role, nullptr, 0, &n);
      if (st == ZT_E_BUFFER_TOO_SMALL && n <= kMaxAlloc / 8) {
        std::vector<uint64_t> v(n);
        size_t got = 0;
        if (zt_object_read_index(o, role, v.data(), v.size(), &got) == ZT_OK) check(got == n);
      } else if (st == ZT_OK) {
        check(n == 0);
      }
    }
    size_t bytes = 0;
    zt_status st = zt_object_densify(o, nullptr, 0, &bytes);
    if (st == ZT_OK) check(bytes == 0);
    if (st == ZT_E_BUFFER_TOO_SMALL && bytes <= kMaxAlloc) {
      std::vector<uint8_t> d(bytes);
      size_t got = 0;
      if (zt_object_densify(o, d.data(), d.size(), &got) == ZT_OK) check(got == bytes);
    }
  }
  zt_quant_info qi{};
  qi.struct_size = sizeof qi;
  if (zt_object_quant_info(o, &qi) == ZT_OK) {
    uint64_t numel = 0;
    if (!__builtin_mul_overflow(qi.rows, qi.cols, &numel) && numel <= kMaxAlloc / sizeof(float)) {
      std::vector<float> w(static_cast<size_t>(numel));
      (void)zt_object_dequantize(o, w.data(), w.size());
      if (numel > 0) check(zt_object_dequantize(o, w.data(), w.size() - 1) != ZT_OK);
    }
  }
  (void)zt_object_validate(o);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  for (uint32_t strict : {0u, 1u}) {
    zt_open_options opts;
    zt_open_options_init(&opts);
    opts.strict = strict;
    opts.max_decoded_size = kMaxAlloc;
    zt_file *f = nullptr;
    if (zt_open_memory(data, size, &opts, &f) != ZT_OK) continue;
    size_t n = 0;
    check(zt_file_object_count(f, &n) == ZT_OK);
    for (size_t i = 0; i < n && i < 256; ++i) {
      const zt_object *o = nullptr;
      check(zt_file_object_at(f, i, &o) == ZT_OK);
      exercise_object(o);
    }
    zt_close(f);
  }
  return 0;
}
