// zt export --to gguf. GGUF v3 (ggml's docs/gguf.md): "GGUF", u32 version,
// u64 tensor count, u64 key/value count, the key/values (u64-length string
// key, u32 value type, value), the tensor infos (name, u32 n_dims, u64 dims
// innermost first, u32 ggml type, u64 offset from the data start), padding
// to general.alignment (32 when the key is absent), then each tensor's
// bytes at an aligned offset. All little-endian.
//
// File attributes become key/values. JSON loses GGUF's value types, so each
// value gets the type that holds it and that llama.cpp expects for most
// keys: see typed_value(). Dense objects map to F32, F16, BF16, F64, I8..I64;
// objects of format ggml_quantized (what zt convert makes of GGUF block
// types) go back to their ggml type.
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "export_foreign.h"
#include "foreign/foreign.h"
#include "temp_output.h"
#include "terminal_text.h"

namespace ztcli {
namespace {

using json = nlohmann::json;
using namespace zt::foreign;  // GgufValueType (kU8, kString, ...)

constexpr uint32_t kGgmlMaxDims = 4;
// ggml's reader takes any power of two as general.alignment, and every
// tensor is padded to it: a hostile attribute of 2^30 made a file of a few
// hundred bytes export as GiBs of zeros. Writers use 32 (the default) or a
// small multiple of it; 64 KiB (a large page) is far above any of them.
constexpr uint64_t kMaxAlignment = uint64_t{1} << 16;
constexpr size_t kGgmlMaxName = 64;  // ggml's GGML_MAX_NAME, including the NUL

// Thrown with the reason an attribute or object cannot be written.
struct Refusal {
  std::string why;
};

void put_le(std::string &out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void put_str(std::string &out, const std::string &s) {
  put_le(out, s.size(), 8);
  out += s;
}

std::string unhex(const std::string &h, const std::string &key) {
  auto nib = [&](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    throw Refusal{"attribute '" + key + "': $bytes is not hex"};
  };
  if (h.size() % 2) throw Refusal{"attribute '" + key + "': $bytes is not hex"};
  std::string out;
  for (size_t i = 0; i < h.size(); i += 2) out.push_back(static_cast<char>(nib(h[i]) * 16 + nib(h[i + 1])));
  return out;
}

bool is_marker(const json &v, const char *name) {
  return v.is_object() && v.size() == 1 && v.contains(name);
}

// The GGUF type a JSON value is written as:
//   string, {"$bytes": hex} → STRING (bytes as they are)
//   bool → BOOL
//   integer ≥ 0 → U32, or U64 beyond 2^32-1
//   integer < 0 → I32, or I64 beyond its range
//   float → F32 when exactly representable, else F64; {"$float": "nan"...} → F32
//   array → ARRAY of one element type: strings; bools; integers as I32 when all
//           fit, else U32/I64/U64; any float → F32 (F64 if one needs it);
//           arrays of arrays. An empty array is an ARRAY of I32.
// Anything else (null, maps, other markers) is refused.
uint32_t scalar_type(const json &v, const std::string &key) {
  if (v.is_string() || is_marker(v, "$bytes")) return kString;
  if (v.is_boolean()) return kBool;
  if (v.is_number_unsigned()) return v.get<uint64_t>() <= std::numeric_limits<uint32_t>::max() ? kU32 : kU64;
  if (v.is_number_integer()) return v.get<int64_t>() >= std::numeric_limits<int32_t>::min() ? kI32 : kI64;
  if (v.is_number_float()) {
    const double d = v.get<double>();
    return static_cast<double>(static_cast<float>(d)) == d ? kF32 : kF64;
  }
  if (is_marker(v, "$float")) return kF32;
  if (v.is_array()) return kArray;
  // An object is a map (a plain one, or the {"$map": ...} form that maps
  // with a '$' key or a non-text key take) or another CBOR value JSON lacks.
  std::string what = v.type_name();
  if (is_marker(v, "$bigint"))
    what = "integer beyond 64 bits";
  else if (v.is_object() && v.size() == 2 && v.contains("$tag") && v.contains("$value"))
    what = "tagged CBOR value";
  else if (is_marker(v, "$undefined"))
    what = "CBOR undefined";
  else if (v.is_object())
    what = "map";
  throw Refusal{"attribute '" + key + "' is a " + what + ", which GGUF metadata cannot hold"};
}

uint32_t array_elem_type(const json &arr, const std::string &key) {
  if (arr.empty()) return kI32;
  bool any_float = false, need_f64 = false, all_int = true, fits_i32 = true, fits_u32 = true, has_neg = false,
       big_pos = false;
  uint32_t first = scalar_type(arr[0], key);
  bool same = true;
  for (const auto &v : arr) {
    const uint32_t t = scalar_type(v, key);
    if (t != first) same = false;
    switch (t) {
      case kU32:
      case kU64:
        if (v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) fits_i32 = false;
        if (t == kU64) fits_u32 = false;
        if (v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) big_pos = true;
        break;
      case kI32:
      case kI64:
        has_neg = true;
        fits_u32 = false;
        if (t == kI64) fits_i32 = false;
        break;
      case kF32:
      case kF64:
        any_float = true;
        all_int = false;
        if (t == kF64) need_f64 = true;
        break;
      default:
        all_int = false;
    }
  }
  if (same && (first == kString || first == kBool || first == kArray)) return first;
  if (all_int) {
    if (fits_i32) return kI32;
    if (fits_u32) return kU32;
    if (has_neg && big_pos)
      throw Refusal{"attribute '" + key + "': an integer array mixes values below 0 and above 2^63-1"};
    return has_neg ? kI64 : kU64;
  }
  if (any_float) {
    for (const auto &v : arr)
      if (!v.is_number() && !is_marker(v, "$float"))
        throw Refusal{"attribute '" + key + "': an array mixes numbers and other values; GGUF arrays have one type"};
    return need_f64 ? kF64 : kF32;
  }
  throw Refusal{"attribute '" + key + "': an array mixes value types; GGUF arrays have one type"};
}

double float_of(const json &v) {
  if (!is_marker(v, "$float")) return v.get<double>();
  const json &m = v["$float"];
  const std::string s = m.is_string() ? m.get<std::string>() : "";
  if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (s == "inf") return std::numeric_limits<double>::infinity();
  if (s == "-inf") return -std::numeric_limits<double>::infinity();
  throw Refusal{"a $float value is not nan, inf or -inf"};
}

void put_value(std::string &out, const json &v, uint32_t type, const std::string &key, int depth) {
  if (depth > 8) throw Refusal{"attribute '" + key + "': arrays nested deeper than 8 levels"};
  switch (type) {
    case kString:
      put_str(out, v.is_string() ? v.get<std::string>() : unhex(v["$bytes"].get<std::string>(), key));
      return;
    case kBool:
      put_le(out, v.get<bool>() ? 1 : 0, 1);
      return;
    case kU32:
    case kU64:
      put_le(out, v.get<uint64_t>(), type == kU32 ? 4 : 8);
      return;
    case kI32:
    case kI64:
      put_le(out, static_cast<uint64_t>(v.get<int64_t>()), type == kI32 ? 4 : 8);
      return;
    case kF32: {
      const float f = static_cast<float>(float_of(v));
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      put_le(out, bits, 4);
      return;
    }
    case kF64: {
      const double d = float_of(v);
      uint64_t bits;
      std::memcpy(&bits, &d, 8);
      put_le(out, bits, 8);
      return;
    }
    case kArray: {
      const uint32_t elem = array_elem_type(v, key);
      put_le(out, elem, 4);
      put_le(out, v.size(), 8);
      for (const auto &e : v) put_value(out, e, elem, key, depth + 1);
      return;
    }
    default:
      throw Refusal{"attribute '" + key + "': internal: unknown type"};
  }
}

struct TensorPlan {
  const ExportObject *obj;
  uint32_t ggml_type;
  uint64_t offset;
};

// The ggml type an object is written as, or a Refusal naming why not.
uint32_t ggml_type_of(const ExportObject &o) {
  const std::string ctx = "object '" + o.name + "'";
  if (o.name.size() >= kGgmlMaxName)
    throw Refusal{ctx + ": the name is " + std::to_string(o.name.size()) + " bytes; GGUF readers (ggml) allow " +
                  std::to_string(kGgmlMaxName - 1)};
  if (o.shape.empty()) throw Refusal{ctx + " is 0-dimensional; GGUF tensors have 1 to 4 dimensions"};
  if (o.shape.size() > kGgmlMaxDims)
    throw Refusal{ctx + " has " + std::to_string(o.shape.size()) + " dimensions; GGUF tensors have at most 4"};
  if (o.format == "dense" || o.format == "ggml_quantized")
    if (const std::string why = single_data_problem(o); !why.empty()) throw Refusal{why};
  if (o.format == "dense") {
    if (o.has_attributes) throw Refusal{ctx + " has object attributes, which GGUF cannot hold"};
    if (o.data.logical_type)
      throw Refusal{ctx + ": logical type " + std::string(logical_type_of(o.data)) + " has no GGUF tensor type"};
    for (uint32_t id = 0; id < 64; ++id) {
      const zt::foreign::GgmlTypeInfo *g = zt::foreign::ggml_type_info(id);
      if (g && g->dtype == o.data.dtype) return id;
    }
    throw Refusal{ctx + ": dtype " + std::string(dtype_name_of(o.data)) +
                  " has no GGUF tensor type (GGUF has f32, f16, bf16, f64, i8, i16, i32, i64)"};
  }
  if (o.format != "ggml_quantized")
    throw Refusal{ctx + " has format '" + o.format + "'; GGUF holds dense and ggml block-quantized tensors only"};
  char *text = nullptr;
  zt_object_attributes_json(o.obj, &text);
  const json attrs = json::parse(text ? text : "null", nullptr, false);
  zt_free(text);
  if (!attrs.is_object() || !attrs.contains("ggml_type_id") || !attrs["ggml_type_id"].is_number_unsigned())
    throw Refusal{ctx + ": a ggml_quantized object needs the attribute ggml_type_id"};
  for (auto it = attrs.begin(); it != attrs.end(); ++it)
    if (it.key() != "ggml_type" && it.key() != "ggml_type_id" && it.key() != "block_size" && it.key() != "type_size")
      throw Refusal{ctx + ": object attribute '" + it.key() + "' has no place in GGUF"};
  const uint64_t id = attrs["ggml_type_id"].get<uint64_t>();
  const zt::foreign::GgmlTypeInfo *g =
      id <= 0xffffffffu ? zt::foreign::ggml_type_info(static_cast<uint32_t>(id)) : nullptr;
  if (!g || g->dtype != ZT_DTYPE_UNKNOWN)
    throw Refusal{ctx + ": ggml_type_id " + std::to_string(id) + " is not a known block type"};
  const std::string logical = std::string("ggml.") + g->name;
  if (o.data.dtype != ZT_U8 || !o.data.logical_type || logical_type_of(o.data) != logical)
    throw Refusal{ctx + ": data is not u8 of logical type " + logical};
  const uint64_t inner = o.shape.back();
  if (inner % g->block_size) throw Refusal{ctx + ": innermost dimension is not a multiple of the block size"};
  uint64_t bytes = inner / g->block_size * g->type_size;
  for (size_t i = 0; i + 1 < o.shape.size(); ++i)
    if (__builtin_mul_overflow(bytes, o.shape[i], &bytes)) throw Refusal{ctx + ": shape overflows"};
  if (bytes != o.data.decoded_length)
    throw Refusal{ctx + ": " + std::to_string(o.data.decoded_length) + " data bytes, but its shape needs " +
                  std::to_string(bytes) + " of " + g->name};
  return g->id;
}

}  // namespace

int export_gguf(const zt_file *f, const std::string &out, bool quiet) {
  std::vector<ExportObject> objs;
  if (!export_objects("export", f, objs)) return kFailure;
  std::string head;
  std::vector<TensorPlan> plan;
  uint64_t alignment = 32, total = 0;
  try {
    char *attrs_text = nullptr;
    if (zt_status st = zt_file_attributes_json(f, &attrs_text); st != ZT_OK) return report("export: attributes", st);
    const json attrs = json::parse(attrs_text, nullptr, false);
    zt_free(attrs_text);
    std::vector<std::pair<std::string, const json *>> entries;
    if (std::string why; !attribute_entries(attrs, entries, why)) throw Refusal{why};
    std::string kv;
    size_t n_kv = 0;
    for (const auto &[key, value] : entries) {
      uint32_t type = scalar_type(*value, key);
      if (key == "general.alignment") {
        const json &v = *value;
        if (!v.is_number_unsigned() || v.get<uint64_t>() == 0 || v.get<uint64_t>() > kMaxAlignment ||
            (v.get<uint64_t>() & (v.get<uint64_t>() - 1)))
          throw Refusal{"attribute 'general.alignment' must be a power of two of at most " +
                        std::to_string(kMaxAlignment) + " (GGUF readers use 32)"};
        alignment = v.get<uint64_t>();
        type = kU32;
      }
      put_str(kv, key);
      put_le(kv, type, 4);
      put_value(kv, *value, type, key, 0);
      ++n_kv;
    }
    std::string infos;
    uint64_t offset = 0;
    for (const auto &o : objs) {
      const uint32_t type = ggml_type_of(o);
      plan.push_back({&o, type, offset});
      put_str(infos, o.name);
      put_le(infos, o.shape.size(), 4);
      for (auto d = o.shape.rbegin(); d != o.shape.rend(); ++d) put_le(infos, *d, 8);
      put_le(infos, type, 4);
      put_le(infos, offset, 8);
      offset += (o.data.decoded_length + alignment - 1) / alignment * alignment;
      total += o.data.decoded_length;
    }
    head = "GGUF";
    put_le(head, 3, 4);
    put_le(head, objs.size(), 8);
    put_le(head, n_kv, 8);
    head += kv;
    head += infos;
    head.append((alignment - head.size() % alignment) % alignment, '\0');
  } catch (const Refusal &r) {
    std::fprintf(stderr, "zt export: %s; nothing written\n", shown(r.why).c_str());  // names come from the file
    return kFailure;
  } catch (const json::exception &e) {
    std::fprintf(stderr, "zt export: %s; nothing written\n", shown(e.what()).c_str());
    return kFailure;
  }

  TempOutput tmp;
  if (!tmp.open("export", out)) return kIo;
  auto io_error = [&] {
    std::fprintf(stderr, "zt export: cannot write '%s': %s\n", out.c_str(), std::strerror(errno));
    return kIo;
  };
  if (std::fwrite(head.data(), 1, head.size(), tmp.fp()) != head.size()) return io_error();
  Progress progress("exporting", total, quiet);
  int rc = kOk;
  static const char zeros[64] = {};
  for (const auto &p : plan) {
    if (!write_object_data("export", tmp.fp(), *p.obj, progress, rc)) return rc;
    for (uint64_t pad = (alignment - p.obj->data.decoded_length % alignment) % alignment; pad;) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(pad, sizeof zeros));
      if (std::fwrite(zeros, 1, n, tmp.fp()) != n) return io_error();
      pad -= n;
    }
  }
  progress.done();
  return tmp.commit() ? kOk : kIo;
}

}  // namespace ztcli
