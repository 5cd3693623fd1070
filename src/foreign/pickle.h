// A restricted pickle interpreter for PyTorch checkpoints: it knows only
// what torch's own `weights_only=True` loader allows (the reference is
// torch/_weights_only_unpickler.py of torch 1.13): the protocol-2 opcodes
// torch emits (plus the data-only opcodes of later protocols: floats,
// bytes, short strings, MEMOIZE, FRAME), collections.OrderedDict,
// torch._utils._rebuild_tensor(_v2) and _rebuild_parameter, torch.Size,
// torch.nn.Parameter, the storage classes and dtypes. Nothing is ever
// called: each allowed global is a tag this interpreter acts on itself,
// and every other global or opcode is an error naming it. Values live in
// one arena and refer to each other by index (no reference cycles, no deep
// copies); memo, stack, mark depth and value count are bounded, and every
// opcode costs time linear in what it pops, so a pickle of n bytes costs
// O(n) time and memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ztensor.h"

namespace zt::foreign {

struct PickleLimits {
  uint64_t max_values = uint64_t{1} << 22;  // values made in all (16 bytes each, plus payload)
  uint64_t max_memo = uint64_t{1} << 22;    // memo entries
  size_t max_marks = 4096;                  // MARK nesting
};

struct PyStorage {
  std::string type_name;  // "torch.FloatStorage"
  zt_dtype dtype = ZT_DTYPE_UNKNOWN;
  std::string logical_type;  // "complex64" / "complex128", else ""
  size_t esize = 0;          // bytes per element (complex: both parts)
  std::string key;           // the member data/<key>
  uint64_t numel = 0;        // elements, as the pickle declares
};

struct PyTensor {
  uint32_t storage = 0;  // index into Pickle::storages
  uint64_t offset = 0;   // in elements
  std::vector<uint64_t> size, stride;
};

struct PyValue {
  enum Kind : uint8_t { None, Bool, Int, Float, Str, Bytes, Tuple, List, Dict, Set, Global, Storage, Tensor };
  Kind kind = None;
  int64_t i = 0;     // Bool, Int; Float: its IEEE bits; Global: its GlobalId
  uint32_t ref = 0;  // Str/Bytes/Global: Pickle::strings; Tuple/List/Dict/Set: Pickle::lists (Dict: k, v, k, v...);
                     // Storage: Pickle::storages; Tensor: Pickle::tensors
};

struct Pickle {
  std::vector<PyValue> values;
  std::vector<std::string> strings;
  std::vector<std::vector<uint32_t>> lists;
  std::vector<PyStorage> storages;
  std::vector<PyTensor> tensors;
  uint32_t root = 0;  // the value STOP returned
};

// Runs the pickle [p, p+n). Throws zt::Error (ZT_E_FORMAT) (prefixed with `what`)
// naming the refused opcode or global and its offset.
Pickle unpickle_torch(const uint8_t *p, size_t n, const std::string &what, const PickleLimits &limits = {});

// The legacy (before torch 1.6) serialization starts with a pickled magic
// number: PROTO 2, LONG1 of 10 bytes 0x1950a86a20f9469cfc6c.
bool is_legacy_torch_pickle(const uint8_t *p, size_t n);

}  // namespace zt::foreign
