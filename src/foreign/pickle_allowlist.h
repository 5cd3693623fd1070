// What torch's `weights_only=True` loader allows in a checkpoint's pickle
// (torch/_weights_only_unpickler.py of torch 1.13): the globals, each a tag
// the interpreter (pickle.cc) acts on itself, the storage classes with the
// dtype each stores, and the opcodes' names for messages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "ztensor.h"

namespace zt::foreign {

// The globals torch 1.13's weights_only loader allows, as tags.
enum GlobalId : int64_t {
  kOrderedDict,
  kParameter,  // torch.nn.parameter.Parameter (NEWOBJ)
  kSize,       // torch.Size
  kRebuildTensorV2,
  kRebuildTensor,
  kRebuildParameter,
  kStorageClass,   // torch.FloatStorage, ...: the storage's dtype
  kAllowedUnused,  // allowed by torch but not something this reader builds (sparse, meta, layouts, classes, dtypes)
};

struct StorageType {
  const char *name;
  zt_dtype dtype;
  const char *logical;
  size_t esize;
};

// The storage class `full` names ("torch.FloatStorage", also under
// torch.cuda.), or nullptr.
const StorageType *storage_type(const std::string &full);
// Whether torch allows the global `full` ("module.name"), and its tag.
bool allowed_global(const std::string &full, GlobalId &id);
// The name of pickle opcode `op`, or nullptr for one no protocol defines.
const char *opcode_name(uint8_t op);

}  // namespace zt::foreign
