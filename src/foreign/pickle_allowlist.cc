#include "pickle_allowlist.h"

#include <cstring>

namespace zt::foreign {

namespace {

const StorageType kStorageTypes[] = {
    {"DoubleStorage", ZT_F64, "", 8},
    {"FloatStorage", ZT_F32, "", 4},
    {"HalfStorage", ZT_F16, "", 2},
    {"BFloat16Storage", ZT_BF16, "", 2},
    {"LongStorage", ZT_I64, "", 8},
    {"IntStorage", ZT_I32, "", 4},
    {"ShortStorage", ZT_I16, "", 2},
    {"CharStorage", ZT_I8, "", 1},
    {"ByteStorage", ZT_U8, "", 1},
    {"BoolStorage", ZT_BOOL, "", 1},
    {"ComplexFloatStorage", ZT_F32, "complex64", 8},
    {"ComplexDoubleStorage", ZT_F64, "complex128", 16},
};

}  // namespace

const StorageType *storage_type(const std::string &full) {
  std::string base;
  if (full.compare(0, 6, "torch.") == 0) base = full.substr(6);
  if (base.compare(0, 5, "cuda.") == 0) base = base.substr(5);  // saved from a GPU: the bytes are the same
  for (const auto &t : kStorageTypes)
    if (base == t.name) return &t;
  return nullptr;
}

namespace {

// Allowed by torch but not something this reader builds (sparse, meta,
// layouts, classes, dtypes).
bool allowed_unused(const std::string &g) {
  static const char *const kNames[] = {
      "torch.Tensor",
      "torch.serialization._get_layout",
      "torch._utils._rebuild_sparse_tensor",
      "torch._utils._rebuild_sparse_csr_tensor",
      "torch._utils._rebuild_meta_tensor_no_storage",
      "torch.storage.TypedStorage",
      "torch.storage.UntypedStorage",
      "torch.complex32",
      "torch.complex64",
      "torch.complex128",
      "torch.float16",
      "torch.float32",
      "torch.float64",
      "torch.int8",
      "torch.int16",
      "torch.int32",
      "torch.int64",
  };
  for (const char *n : kNames)
    if (g == n) return true;
  // The tensor and storage classes torch lists (quantized storages among
  // them): allowed names, refused when used.
  static const char *const kPrefixes[] = {"torch.", "torch.cuda.", "torch.sparse.", "torch.cuda.sparse."};
  for (const char *pre : kPrefixes) {
    const size_t n = std::strlen(pre);
    if (g.compare(0, n, pre) != 0) continue;
    const std::string rest = g.substr(n);
    if (rest.find('.') != std::string::npos || rest.size() < 7) continue;
    const bool tensor = rest.compare(rest.size() - 6, 6, "Tensor") == 0;
    const bool storage = rest.size() > 7 && rest.compare(rest.size() - 7, 7, "Storage") == 0;
    static const char *const kScalars[] = {"BFloat16", "Bool",  "Byte",     "Char",     "Double",        "Float",
                                           "Half",     "Int",   "Long",     "Short",    "ComplexDouble", "ComplexFloat",
                                           "QInt32",   "QInt8", "QUInt2x4", "QUInt4x2", "QUInt8"};
    const std::string scalar = rest.substr(0, rest.size() - (tensor ? 6 : 7));
    for (const char *s : kScalars)
      if ((tensor || storage) && scalar == s) return true;
  }
  return false;
}

}  // namespace

bool allowed_global(const std::string &full, GlobalId &id) {
  if (full == "collections.OrderedDict")
    id = kOrderedDict;
  else if (full == "torch.nn.parameter.Parameter")
    id = kParameter;
  else if (full == "torch.Size")
    id = kSize;
  else if (full == "torch._utils._rebuild_tensor_v2")
    id = kRebuildTensorV2;
  else if (full == "torch._utils._rebuild_tensor")
    id = kRebuildTensor;
  else if (full == "torch._utils._rebuild_parameter")
    id = kRebuildParameter;
  else if (storage_type(full))
    id = kStorageClass;
  else if (allowed_unused(full))
    id = kAllowedUnused;
  else
    return false;
  return true;
}

const char *opcode_name(uint8_t op) {
  switch (op) {
    case '(':
      return "MARK";
    case '.':
      return "STOP";
    case '0':
      return "POP";
    case '1':
      return "POP_MARK";
    case '2':
      return "DUP";
    case 'F':
      return "FLOAT";
    case 'I':
      return "INT";
    case 'L':
      return "LONG";
    case 'P':
      return "PERSID";
    case 'S':
      return "STRING";
    case 'T':
      return "BINSTRING";
    case 'V':
      return "UNICODE";
    case 'b':
      return "BUILD";
    case 'c':
      return "GLOBAL";
    case 'd':
      return "DICT";
    case 'g':
      return "GET";
    case 'i':
      return "INST";
    case 'l':
      return "LIST";
    case 'o':
      return "OBJ";
    case 'p':
      return "PUT";
    case 0x82:
      return "EXT1";
    case 0x83:
      return "EXT2";
    case 0x84:
      return "EXT4";
    case 0x8b:
      return "LONG4";
    case 0x8d:
      return "BINUNICODE8";
    case 0x8e:
      return "BINBYTES8";
    case 0x90:
      return "ADDITEMS";
    case 0x91:
      return "FROZENSET";
    case 0x92:
      return "NEWOBJ_EX";
    case 0x93:
      return "STACK_GLOBAL";
    case 0x96:
      return "BYTEARRAY8";
    case 0x97:
      return "NEXT_BUFFER";
    case 0x98:
      return "READONLY_BUFFER";
    default:
      return nullptr;
  }
}

}  // namespace zt::foreign
