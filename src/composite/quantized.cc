#include "composite/quantized.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "composite/parts.h"
#include "composite/to_f32.h"
#include "manifest/cbor_tree.h"
#include "types/dtype.h"
#include "util/error.h"
#include "v2/layout_profiles.h"

namespace zt {
namespace {

constexpr Packing kPackings[] = {
    {"16_per_i32", 2, 16, {ZT_I32, ZT_U32}}, {"8_per_i32", 4, 8, {ZT_I32, ZT_U32}},
    {"4_per_i32", 8, 4, {ZT_I32, ZT_U32}},   {"4_per_u8", 2, 4, {ZT_U8, ZT_I8}},
    {"2_per_u8", 4, 2, {ZT_U8, ZT_I8}},      {"1_per_u8", 8, 1, {ZT_U8, ZT_I8}},
};

std::string n(uint64_t v) {
  return std::to_string(v);
}

bool is_float(zt_dtype d) {
  return d == ZT_F16 || d == ZT_BF16 || d == ZT_F32 || d == ZT_F64;
}

// u8 storage typed as one of the fp8 logical types (spec 1.2 §2): floats
// too, decoded exactly by elements_to_f32.
bool is_fp8(const Component &c) {
  const LogicalType *lt = c.has_type ? logical_type_find(c.logical_type) : nullptr;
  return lt && lt->ratio == 1 && lt->storage == ZT_U8 && c.dtype == ZT_U8;
}

uint64_t ceil_div(uint64_t a, uint64_t b) {
  return a / b + (a % b != 0);
}

void append_head(std::string &s, int major, uint64_t v) {
  uint8_t m = static_cast<uint8_t>(major << 5);
  if (v < 24) {
    s += static_cast<char>(m | v);
    return;
  }
  int bytes = v <= 0xff ? 1 : v <= 0xffff ? 2 : v <= 0xffffffffull ? 4 : 8;
  s += static_cast<char>(m | (bytes == 1 ? 24 : bytes == 2 ? 25 : bytes == 4 ? 26 : 27));
  for (int i = bytes - 1; i >= 0; --i) s += static_cast<char>(v >> (8 * i));
}

void append_text(std::string &s, const std::string &t) {
  append_head(s, 3, t.size());
  s += t;
}

// Reads bits / group_size / packing from the attributes map.
void parse_params(const Object &obj, QuantLayout &q) {
  const std::string ctx = where(obj.name) + ": quantized_group attributes";
  if (!obj.has_attributes) fail(ZT_E_QUANT_PARAMS, ctx + " are missing (bits and group_size are required)");
  // Only top-level scalars are read: nested values need no nodes.
  cbor::ParseOptions opts;
  opts.check_only = true;
  cbor::Tree t(reinterpret_cast<const uint8_t *>(obj.attributes.data()), obj.attributes.size(), ctx, opts);
  if (t.node(t.root()).kind != cbor::Kind::Map) fail(ZT_E_QUANT_PARAMS, ctx + " are not a map");
  auto positive = [&](const char *key, uint64_t max) {
    uint32_t i = t.find(t.root(), key);
    if (!i) fail(ZT_E_QUANT_PARAMS, ctx + ": '" + key + "' is missing");
    const cbor::Node &v = t.node(i);
    uint64_t value = 0;
    if (v.kind == cbor::Kind::Uint) {
      value = v.value;
    } else if (v.kind == cbor::Kind::Float) {
      // Attributes are free-form (spec 1.2 §3): a writer may store a number
      // as a half, single or double float. A whole one is that integer.
      const double d = t.real(v);
      if (d >= 1 && d < 18446744073709551616.0 && std::floor(d) == d) value = static_cast<uint64_t>(d);
    }
    if (value == 0 || value > max)
      fail(ZT_E_QUANT_PARAMS, ctx + ": '" + key + "' must be an integer in [1, " + n(max) + "]");
    return value;
  };
  q.bits = positive("bits", 32);
  q.group_size = positive("group_size", UINT64_MAX);
  if (uint32_t i = t.find(t.root(), "packing")) {
    if (t.node(i).kind != cbor::Kind::Text) fail(ZT_E_QUANT_PARAMS, ctx + ": 'packing' is not text");
    q.has_packing_attr = true;
    q.packing_name = std::string(t.text(i));
  }
}

void check_count(const Object &obj, const Component &c, uint64_t have, uint64_t want, const std::string &why) {
  if (have != want)
    fail(ZT_E_QUANT_SIZE,
         where(obj.name, c.role) + ": has " + n(have) + " elements, but " + why + " = " + n(want) + " are needed");
}

}  // namespace

const Packing *packing_find(const std::string &name) {
  for (const auto &p : kPackings)
    if (name == p.name) return &p;
  return nullptr;
}

const Packing *packing_infer(uint64_t bits, zt_dtype packed_dtype) {
  for (const auto &p : kPackings)
    if (p.bits == bits && (p.word_dtypes[0] == packed_dtype || p.word_dtypes[1] == packed_dtype)) return &p;
  return nullptr;
}

namespace {

// zt.quant_group/1 (spec/profiles/zt.quant_group-1.md; its metadata rules
// ran at open, v2/layout_profiles.cc) where it is the 1.x model: groups and
// lsb-first packing along the last axis, u32 or u8 words filling each row
// exactly, zero points none, implied or plain numbers, factor scales.
// Other points of the space are ZT_E_UNSUPPORTED, naming what.
QuantLayout describe_quant_group_v2(const Object &obj) {
  if (obj.status != ZT_OK) fail(obj.status, obj.error);
  const v2::QuantGroupParams p = v2::quant_group_params(obj, "");
  auto unsupported = [&](const std::string &what) {
    fail(ZT_E_UNSUPPORTED, where(obj.name) + ": zt.quant_group/1 with " + what +
                               " is not one this library dequantizes (its parts read as stored)");
  };
  if (obj.shape.empty() || p.axis + 1 != obj.shape.size()) unsupported("groups along an axis other than the last");
  if (p.order != "lsb_first") unsupported("packing order '" + p.order + "'");
  if (p.scale_form == "e8m0_exponent") unsupported("scale_form 'e8m0_exponent'");
  if (p.zero_form == "tensor" && p.zero_packing != "plain") unsupported("zero points packed like the data");
  QuantLayout q;
  q.packed = &require_component(obj, "data");
  q.scales = &require_component(obj, "scales");
  q.zeros = p.zero_form == "tensor" ? &require_component(obj, "zeros") : nullptr;
  q.bits = p.bits;
  q.group_size = p.group_size;
  q.packing = packing_infer(p.bits, q.packed->dtype);
  if (!q.packing || q.packing->per_word != p.per_word) unsupported("a " + p.word + " word");
  q.packing_name = q.packing->name;
  q.has_packing_attr = true;
  q.cols = obj.shape.back();
  if (q.cols % q.packing->per_word) unsupported("rows that do not fill whole words");
  q.rows = obj.numel / std::max<uint64_t>(q.cols, 1);
  if (q.cols == 0) q.rows = 0;
  q.groups_per_row = q.cols / q.group_size;
  q.groups = q.rows * q.groups_per_row;  // sizes checked at open: no overflow
  q.words_per_row = q.cols / q.packing->per_word;
  if (p.zero_form != "tensor") {
    q.has_zero_const = true;
    q.zero_const = static_cast<float>(p.zero_value);
  }
  return q;
}

}  // namespace

QuantLayout describe_quantized(const Object &obj, const ComponentBytes *reader) {
  if (obj.format == "zt.quant_group/1") return describe_quant_group_v2(obj);
  if (obj.format != "quantized_group")
    fail(ZT_E_WRONG_FORMAT, where(obj.name) + ": format is '" + obj.format + "', not quantized_group");
  QuantLayout q;
  q.packed = find_component(obj, "packed_weight");
  if (!q.packed) q.packed = find_component(obj, "data");
  if (!q.packed) require_component(obj, "packed_weight");
  q.scales = &require_component(obj, "scales");
  q.zeros = find_component(obj, "zeros");
  parse_params(obj, q);

  const std::string pctx = where(obj.name, q.packed->role);
  if (q.has_packing_attr) {
    q.packing = packing_find(q.packing_name);
    if (q.packing && q.packing->bits != q.bits)
      fail(ZT_E_QUANT_PARAMS, pctx + ": packing '" + q.packing_name + "' holds " + n(q.packing->bits) +
                                  "-bit values, but bits is " + n(q.bits));
    if (q.packing && q.packed->dtype != q.packing->word_dtypes[0] && q.packed->dtype != q.packing->word_dtypes[1])
      fail(ZT_E_QUANT_PARAMS, pctx + ": packing '" + q.packing_name + "' needs dtype " +
                                  dtype_name(q.packing->word_dtypes[0]) + " or " +
                                  dtype_name(q.packing->word_dtypes[1]) + ", not " + q.packed->dtype_name);
  } else {
    q.packing = packing_infer(q.bits, q.packed->dtype);
  }

  if (obj.shape.empty()) fail(ZT_E_SHAPE, where(obj.name) + ": quantized_group needs at least one dimension");
  std::vector<uint64_t> lead(obj.shape.begin(), obj.shape.end() - 1);
  auto rows = shape_numel(lead);
  if (!rows || !shape_numel(obj.shape)) fail(ZT_E_SHAPE, where(obj.name) + ": the product of the shape overflows");
  q.rows = *rows;
  q.cols = obj.shape.back();
  q.groups_per_row = ceil_div(q.cols, q.group_size);
  auto groups = checked_mul(q.rows, q.groups_per_row);
  if (!groups) fail(ZT_E_SHAPE, where(obj.name) + ": the number of groups overflows");
  q.groups = *groups;

  // Elements of `per` bytes in a component; nullopt when its decoded size is
  // not declared (spec 1.1 zstd) and there is no reader to decode it.
  auto count = [&](const Component &c, uint64_t per) -> std::optional<uint64_t> {
    if (!per) return 0;
    if (c.decoded_known) return c.decoded_length / per;
    if (!reader) return std::nullopt;
    return reader->decoded_size(obj, c) / per;
  };
  if (q.packing) {
    q.words_per_row = ceil_div(q.cols, q.packing->per_word);
    auto words = checked_mul(q.rows, q.words_per_row);
    if (!words) fail(ZT_E_SHAPE, where(obj.name) + ": the packed size overflows");
    // Storage elements (the packed component's logical type, if any, is not
    // one with a ratio: "u4" and the like are unknown, read as raw elements).
    if (auto have = count(*q.packed, dtype_size(q.packed->dtype)))
      check_count(obj, *q.packed, *have, *words,
                  "rows × ceil(cols / " + n(q.packing->per_word) + ") for packing '" + q.packing->name + "'");
  }
  if (!is_float(q.scales->dtype) && !is_fp8(*q.scales))
    fail(ZT_E_QUANT_PARAMS, where(obj.name, "scales") + ": dtype " + q.scales->dtype_name +
                                " is not a float dtype (nor u8 typed as an fp8 format)");
  const std::string gwhy = "rows × ceil(cols / group_size) = " + n(q.rows) + " × " + n(q.groups_per_row);
  if (auto have = count(*q.scales, element_bytes(*q.scales))) check_count(obj, *q.scales, *have, q.groups, gwhy);
  if (q.zeros) {
    if (q.zeros->dtype == ZT_BOOL || dtype_size(q.zeros->dtype) == 0)
      fail(ZT_E_QUANT_PARAMS, where(obj.name, "zeros") + ": dtype " + q.zeros->dtype_name + " is not numeric");
    if (auto have = count(*q.zeros, element_bytes(*q.zeros))) check_count(obj, *q.zeros, *have, q.groups, gwhy);
  }
  return q;
}

void dequantize(const ComponentBytes &reader, const Object &obj, float *dst) {
  QuantLayout q = describe_quantized(obj, &reader);
  if (!q.packing)
    fail(ZT_E_UNSUPPORTED, where(obj.name) + ": packing '" + q.packing_name + "' (bits " + n(q.bits) +
                               ") is not one this library can unpack");
  std::vector<uint8_t> packed = reader.read_vector(obj, *q.packed);
  auto as_f32 = [&](const Component &c) {
    std::vector<uint8_t> raw = reader.read_vector(obj, c);
    std::vector<float> f(q.groups);
    // Unknown logical types on scales/zeros are read as their storage dtype.
    elements_to_f32(c.dtype, logical_type_find(c.logical_type) ? c.logical_type : "", raw.data(), q.groups, f.data());
    return f;
  };
  std::vector<float> scales = as_f32(*q.scales);
  std::vector<float> zeros;
  if (q.zeros) zeros = as_f32(*q.zeros);
  const float default_zero = std::ldexp(1.0f, static_cast<int>(q.bits) - 1);
  const size_t word_bytes = dtype_size(q.packed->dtype);
  const unsigned per = q.packing->per_word, bits = q.packing->bits;
  const uint32_t mask = bits == 32 ? 0xffffffffu : (1u << bits) - 1;
  for (uint64_t r = 0; r < q.rows; ++r) {
    const uint8_t *row = packed.data() + r * q.words_per_row * word_bytes;
    for (uint64_t c = 0; c < q.cols; ++c) {
      const uint8_t *w = row + (c / per) * word_bytes;
      // A read hands elements over in the host's byte order.
      uint32_t word = 0;
      if (word_bytes == 4) {
        std::memcpy(&word, w, 4);
      } else {
        for (size_t b = 0; b < word_bytes; ++b) word |= static_cast<uint32_t>(w[b]) << (8 * b);
      }
      const uint32_t v = (word >> ((c % per) * bits)) & mask;
      const uint64_t g = r * q.groups_per_row + c / q.group_size;
      const float zero = q.zeros ? zeros[g] : q.has_zero_const ? q.zero_const : default_zero;
      dst[r * q.cols + c] = (static_cast<float>(v) - zero) * scales[g];
    }
  }
}

std::string encode_quant_attributes(uint64_t bits, uint64_t group_size, const std::string &packing) {
  std::string s;
  append_head(s, 5, 3);
  append_text(s, "bits");
  append_head(s, 0, bits);
  append_text(s, "group_size");
  append_head(s, 0, group_size);
  append_text(s, "packing");
  append_text(s, packing);
  return s;
}

void check_quant_arrays(const std::string &object, const std::vector<uint64_t> &shape, uint64_t bits,
                        uint64_t group_size, const std::string &packing, zt_dtype packed_dtype, uint64_t packed_bytes,
                        zt_dtype scales_dtype, uint64_t scales_bytes, bool has_zeros, zt_dtype zeros_dtype,
                        uint64_t zeros_bytes) {
  // The same rules as for a stored object, run on a model of the one we are
  // about to write.
  Object o;
  o.name = object;
  o.format = "quantized_group";
  o.shape = shape;
  o.has_attributes = true;
  o.attributes = encode_quant_attributes(bits, group_size, packing);
  auto add = [&](const char *role, zt_dtype d, uint64_t bytes) {
    const size_t es = dtype_size(d);
    if (!es) fail(ZT_E_INVALID_ARG, where(object, role) + ": dtype is not a known storage dtype");
    if (bytes % es)
      fail(ZT_E_INVALID_ARG,
           where(object, role) + ": " + n(bytes) + " bytes is not a whole number of " + dtype_name(d) + " elements");
    Component c;
    c.role = role;
    c.dtype = d;
    c.dtype_name = dtype_name(d);
    c.decoded_length = bytes;
    o.components.push_back(c);
  };
  add("packed_weight", packed_dtype, packed_bytes);
  add("scales", scales_dtype, scales_bytes);
  if (has_zeros) add("zeros", zeros_dtype, zeros_bytes);
  if (bits == 0 || bits > 32 || group_size == 0)
    fail(ZT_E_QUANT_PARAMS, where(object) + ": bits must be in [1, 32] and group_size positive");
  QuantLayout q = describe_quantized(o);
  if (!q.packing)
    fail(ZT_E_QUANT_PARAMS, where(object) + ": packing '" + packing +
                                "' is not one this library writes (16_per_i32, 8_per_i32, 4_per_i32, 4_per_u8, "
                                "2_per_u8, 1_per_u8)");
}

}  // namespace zt
