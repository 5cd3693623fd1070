// What composite code (validation, sparse and quantized loading) reads of
// an object's parts: their decoded sizes and bytes, nothing else. The
// Reader provides it (reader.h), so the arrow points one way: the reader
// uses composite validation for strict verification; composite code never
// sees the Reader.
#pragma once

#include <cstdint>
#include <vector>

#include "manifest/model.h"

namespace zt {

class ComponentBytes {
 public:
  // Decoded size; for legacy zstd of unknown size this decodes (bounded).
  virtual uint64_t decoded_size(const Object &o, const Component &c) const = 0;
  // The component's decoded bytes, checked as every typed read checks them.
  virtual std::vector<uint8_t> read_vector(const Object &o, const Component &c) const = 0;

 protected:
  ~ComponentBytes() = default;
};

}  // namespace zt
