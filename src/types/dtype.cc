#include "types/dtype.h"

#include <cstring>

namespace zt {
namespace {

struct DtypeRow {
  zt_dtype dtype;
  const char *name;
  const char *legacy;
  size_t size;
  bool integer;
};

constexpr DtypeRow kDtypes[] = {
    {ZT_F64, "f64", "float64", 8, false},    {ZT_F32, "f32", "float32", 4, false}, {ZT_F16, "f16", "float16", 2, false},
    {ZT_BF16, "bf16", "bfloat16", 2, false}, {ZT_I64, "i64", "int64", 8, true},    {ZT_I32, "i32", "int32", 4, true},
    {ZT_I16, "i16", "int16", 2, true},       {ZT_I8, "i8", "int8", 1, true},       {ZT_U64, "u64", "uint64", 8, true},
    {ZT_U32, "u32", "uint32", 4, true},      {ZT_U16, "u16", "uint16", 2, true},   {ZT_U8, "u8", "uint8", 1, true},
    {ZT_BOOL, "bool", "bool", 1, false},
};

const DtypeRow *row(zt_dtype d) {
  int i = static_cast<int>(d);
  if (i < 1 || i > 13) return nullptr;
  return &kDtypes[i - 1];
}

constexpr LogicalType kLogical[] = {
    {"f8_e4m3fn", ZT_U8, 1},   {"f8_e5m2", ZT_U8, 1},    {"f8_e4m3fnuz", ZT_U8, 1},
    {"f8_e5m2fnuz", ZT_U8, 1}, {"complex64", ZT_F32, 2}, {"complex128", ZT_F64, 2},
};

}  // namespace

const char *dtype_name(zt_dtype d) {
  const DtypeRow *r = row(d);
  return r ? r->name : nullptr;
}

size_t dtype_size(zt_dtype d) {
  const DtypeRow *r = row(d);
  return r ? r->size : 0;
}

bool dtype_is_integer(zt_dtype d) {
  const DtypeRow *r = row(d);
  return r && r->integer;
}

zt_dtype dtype_from_short_name(std::string_view name) {
  for (const auto &r : kDtypes)
    if (name == r.name) return r.dtype;
  return ZT_DTYPE_UNKNOWN;
}

zt_dtype dtype_from_legacy_name(std::string_view name) {
  for (const auto &r : kDtypes)
    if (name == r.legacy) return r.dtype;
  return dtype_from_short_name(name);
}

const LogicalType *logical_type_find(std::string_view name) {
  for (const auto &t : kLogical)
    if (name == t.name) return &t;
  return nullptr;
}

uint32_t logical_ratio(std::string_view logical_type) {
  const LogicalType *t = logical_type_find(logical_type);
  return t ? t->ratio : 1;
}

std::optional<uint64_t> shape_numel(ShapeRef shape) {
  for (uint64_t d : shape)
    if (d == 0) return 0;
  uint64_t n = 1;
  for (uint64_t d : shape) {
    auto m = checked_mul(n, d);
    if (!m) return std::nullopt;
    n = *m;
  }
  return n;
}

std::optional<uint64_t> dense_byte_size(ShapeRef shape, zt_dtype dtype, uint32_t ratio) {
  auto n = shape_numel(shape);
  if (!n) return std::nullopt;
  auto r = checked_mul(*n, ratio);
  if (!r) return std::nullopt;
  return checked_mul(*r, dtype_size(dtype));
}

}  // namespace zt
