// Dense objects as DLPack tensors: zero-copy into the mapping where the bytes
// are usable as they are, otherwise decoded into a buffer the tensor owns.
// The tensor holds a reference to the Reader, so the mapping outlives
// zt_close() until the consumer runs the deleter.
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "handles.h"
#include "types/dtype.h"
#include "ztensor_dlpack.h"

using namespace zt;
using namespace zt::capi;

namespace {

// Everything a tensor needs after the call returns; manager_ctx points here.
struct DlpackHolder {
  DLManagedTensor managed{};
  std::shared_ptr<const Reader> reader;  // zero-copy: keeps the mapping alive
  std::unique_ptr<uint8_t[]> owned;      // decoded copy, when not zero-copy
  std::vector<int64_t> shape;
};

void delete_holder(DLManagedTensor *self) {
  if (self) delete static_cast<DlpackHolder *>(self->manager_ctx);
}

DLDataType storage_type(zt_dtype d) {
  switch (d) {
    case ZT_F64:
      return {kDLFloat, 64, 1};
    case ZT_F32:
      return {kDLFloat, 32, 1};
    case ZT_F16:
      return {kDLFloat, 16, 1};
    case ZT_BF16:
      return {kDLBfloat, 16, 1};
    case ZT_I64:
      return {kDLInt, 64, 1};
    case ZT_I32:
      return {kDLInt, 32, 1};
    case ZT_I16:
      return {kDLInt, 16, 1};
    case ZT_I8:
      return {kDLInt, 8, 1};
    case ZT_U64:
      return {kDLUInt, 64, 1};
    case ZT_U32:
      return {kDLUInt, 32, 1};
    case ZT_U16:
      return {kDLUInt, 16, 1};
    case ZT_U8:
      return {kDLUInt, 8, 1};
#if DLPACK_VERSION >= 80
    case ZT_BOOL:
      return {kDLBool, 8, 1};
#else
    case ZT_BOOL:
      return {kDLUInt, 8, 1};  // no kDLBool before DLPack 0.8
#endif
    default:
      return {0, 0, 0};
  }
}

// The DLPack type of one logical element of the component (see the header).
DLDataType element_type(const Object &o, const Component &c) {
  const std::string ctx = where(o.name, c.role);
  if (c.has_type) {
    const std::string &t = c.logical_type;
    if (t == "complex64" && c.dtype == ZT_F32) return {kDLComplex, 64, 1};
    if (t == "complex128" && c.dtype == ZT_F64) return {kDLComplex, 128, 1};
    // fp8 and other byte-sized logical types travel as their storage bytes.
    if (c.ratio != 1)
      fail(ZT_E_UNSUPPORTED,
           ctx + ": logical type '" + printable(t) + "' on " + c.dtype_name + " has no DLPack equivalent");
  }
  DLDataType dt = storage_type(c.dtype);
  if (dt.bits == 0) fail(ZT_E_UNSUPPORTED, ctx + ": dtype '" + printable(c.dtype_name) + "' has no DLPack code");
  return dt;
}

const Component &data_component(const Object &o) {
  if (o.format != "dense")
    fail(ZT_E_WRONG_FORMAT,
         where(o.name) + ": DLPack export needs a dense object, format is '" + printable(o.format) + "'");
  for (const Component &c : o.components)
    if (c.role == "data") return c;
  fail(ZT_E_COMPONENT_MISSING, where(o.name) + ": dense object has no 'data' component");
}

}  // namespace

extern "C" {

ZT_API zt_status zt_object_to_dlpack(const zt_object *obj, DLManagedTensor **out) {
  return guard([&] {
    if (!out) invalid("zt_object_to_dlpack: out is NULL");
    *out = nullptr;
    const zt_object &o = object_ref(obj, "zt_object_to_dlpack");
    const Object &m = *o.obj;
    const Component &c = data_component(m);
    const DLDataType dtype = element_type(m, c);
    // A packed sub-byte type (f4_e2m1, safetensors' F6_*: u8 bytes holding
    // shape × 4 or 6 bits) has fewer bytes than shape × the storage element,
    // and no DLPack type: a tensor of the shape would reach past its bytes.
    const auto numel = shape_numel(m.shape);
    const auto need = numel ? checked_mul(*numel, uint64_t{dtype.bits} / 8 * dtype.lanes) : std::nullopt;
    if (!need || *need != o.reader->decoded_size(m, c))
      fail(ZT_E_UNSUPPORTED, where(m.name, c.role) + ": " +
                                 (c.has_type ? "logical type '" + printable(c.logical_type) + "'"
                                             : "dtype '" + printable(c.dtype_name) + "'") +
                                 " packs its elements below a byte (" + std::to_string(o.reader->decoded_size(m, c)) +
                                 " bytes for " + (numel ? std::to_string(*numel) : std::string("2^64 or more")) +
                                 " elements); it has no DLPack equivalent");

    auto holder = std::make_unique<DlpackHolder>();
    holder->shape.reserve(m.shape.size() + 1);  // data() non-NULL for scalars too
    for (uint64_t d : m.shape) {
      if (d > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        fail(ZT_E_LIMIT, where(m.name) + ": dimension " + std::to_string(d) + " does not fit DLPack's int64_t");
      holder->shape.push_back(static_cast<int64_t>(d));
    }
    if (m.shape.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
      fail(ZT_E_LIMIT, where(m.name) + ": too many dimensions for DLPack");

    void *data = nullptr;
    try {
      size_t len = 0;
      data = const_cast<uint8_t *>(o.reader->view(m, c, &len));  // read-only by contract
      holder->reader = o.file->reader;
    } catch (const Error &e) {
      if (e.status() != ZT_E_NOT_ZERO_COPY) throw;
      uint64_t need = o.reader->decoded_size(m, c);
      if (need > std::numeric_limits<size_t>::max())
        fail(ZT_E_LIMIT, where(m.name, c.role) + ": decoded size does not fit in memory");
      // One byte at least, so an empty tensor still has a non-NULL pointer.
      holder->owned.reset(new uint8_t[need ? static_cast<size_t>(need) : 1]);
      o.reader->read(m, c, holder->owned.get(), static_cast<size_t>(need));
      data = holder->owned.get();
    }

    DLTensor &t = holder->managed.dl_tensor;
    t.data = data;
    t.device = {kDLCPU, 0};
    t.ndim = static_cast<int>(holder->shape.size());
    t.dtype = dtype;
    t.shape = holder->shape.data();
    t.strides = nullptr;
    t.byte_offset = 0;
    holder->managed.manager_ctx = holder.get();
    holder->managed.deleter = delete_holder;
    *out = &holder.release()->managed;
    return ZT_OK;
  });
}

}  // extern "C"
