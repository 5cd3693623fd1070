#include "v2/layout_profiles.h"

#include <optional>

#include "types/dtype.h"
#include "util/error.h"
#include "v2/det_cbor.h"
#include "v2/rule.h"
#include "v2/vocab.h"

namespace zt::v2 {
namespace {

// A map of the object's attributes (deterministic CBOR, checked with the
// manifest), read by key.
class Attrs {
 public:
  Attrs(const std::string &cbor, size_t pos)
      : s_(&cbor), cur_(reinterpret_cast<const uint8_t *>(cbor.data()), cbor.size()), pos_(pos) {}
  static std::optional<Attrs> of(const Object &o) {
    if (!o.has_attributes || o.attributes.empty()) return std::nullopt;
    Attrs a(o.attributes, 0);
    if (a.cur_.head(0).major != cbor::kMap) return std::nullopt;
    return a;
  }
  // The position of key's value, if present.
  std::optional<size_t> find(std::string_view key) const {
    const cbor::Head h = cur_.head(pos_);
    size_t p = h.payload;
    for (uint64_t i = 0; i < h.arg; ++i) {
      const cbor::Head k = cur_.head(p);
      const size_t v = cur_.skip(p);
      if (k.major == cbor::kText && cur_.text(k) == key) return v;
      p = cur_.skip(v);
    }
    return std::nullopt;
  }
  const cbor::Cursor &cursor() const { return cur_; }
  const std::string &bytes() const { return *s_; }

 private:
  const std::string *s_;
  cbor::Cursor cur_;
  size_t pos_;
};

struct Checker {
  const Object &o;
  const std::string &pre;
  const char *profile;

  [[noreturn]] void bad(const std::string &m, zt_status s = ZT_E_FIELD) const {
    reject(Rule::LayoutRule, pre + where(o.name) + ": " + profile + " " + m, s);
  }
  [[noreturn]] void overflow() const {
    reject(Rule::Shape, pre + where(o.name) + ": " + profile + " sizes overflow 64 bits");
  }
  uint64_t mul(uint64_t a, uint64_t b) const {
    auto r = checked_mul(a, b);
    if (!r) overflow();
    return *r;
  }
  // The parts, by role, exactly `roles` (nullptr entries end the list).
  std::vector<const Component *> parts(std::initializer_list<const char *> roles) const {
    std::vector<const Component *> out;
    for (const char *r : roles) {
      const Component *found = nullptr;
      for (const auto &c : o.components)
        if (c.role == r) found = &c;
      if (!found) bad("needs a part named '" + std::string(r) + "'", ZT_E_COMPONENT_MISSING);
      out.push_back(found);
    }
    if (o.components.size() != roles.size()) {
      std::string list;
      for (const char *r : roles) list += (list.empty() ? "'" : ", '") + std::string(r) + "'";
      bad("has exactly the parts " + list + " (it has " + std::to_string(o.components.size()) + ")",
          ZT_E_COMPONENT_MISSING);
    }
    return out;
  }
  void size_is(const Component &c, uint64_t want, const std::string &why) const {
    if (c.decoded_length != want)
      bad("'" + c.role + "' decoded size " + std::to_string(c.decoded_length) + " is not the " + std::to_string(want) +
              " " + why,
          ZT_E_LENGTH);
  }
  // Decoded size of n elements of c's type; unchecked (nullopt) when the type is unknown.
  std::optional<uint64_t> size_of_n(const Component &c, uint64_t n) const {
    bool ov = false;
    auto r = size_of(c, n, &ov);
    if (ov) overflow();
    return r;
  }
  // Attribute readers: `a` at value position p.
  uint64_t uint_at(const Attrs &a, std::optional<size_t> p, const std::string &key) const {
    if (!p) bad("requires the attribute '" + key + "'");
    const cbor::Head h = a.cursor().head(*p);
    if (h.major != cbor::kUint) bad("attribute '" + key + "' must be an unsigned integer");
    return h.arg;
  }
  std::string text_at(const Attrs &a, std::optional<size_t> p, const std::string &key) const {
    if (!p) bad("requires the attribute '" + key + "'");
    const cbor::Head h = a.cursor().head(*p);
    if (h.major != cbor::kText) bad("attribute '" + key + "' must be text");
    return std::string(a.cursor().text(h));
  }
  Attrs map_at(const Attrs &a, std::optional<size_t> p, const std::string &key) const {
    if (!p) bad("requires the attribute '" + key + "'");
    if (a.cursor().head(*p).major != cbor::kMap) bad("attribute '" + key + "' must be a map");
    return Attrs(a.bytes(), *p);
  }
  Attrs attrs() const {
    auto a = Attrs::of(o);
    if (!a) bad("requires its attributes (a map)");
    return *a;
  }
};

bool plain_index(const Component &c) {
  return (c.dtype == ZT_U32 || c.dtype == ZT_U64) && !c.has_type;
}

}  // namespace

// spec/profiles/zt.sparse_coo-1.md, metadata rules.
void validate_sparse_coo(const Object &o, const std::string &pre) {
  const Checker k{o, pre, "zt.sparse_coo/1"};
  if (o.shape.empty()) k.bad("needs a shape of rank >= 1", ZT_E_SHAPE);
  auto p = k.parts({"values", "coords"});
  const Component &values = *p[0], &coords = *p[1];
  if (!plain_index(coords)) k.bad("'coords' must be plain u32 or u64", ZT_E_INDEX_DTYPE);
  const uint64_t per = k.mul(dtype_size(coords.dtype), o.shape.size());
  if (coords.decoded_length % per != 0)
    k.bad("'coords' size " + std::to_string(coords.decoded_length) +
              " is not a multiple of width x ndim = " + std::to_string(per),
          ZT_E_LENGTH);
  const uint64_t nnz = coords.decoded_length / per;
  if (auto want = k.size_of_n(values, nnz)) k.size_is(values, *want, "of nnz = " + std::to_string(nnz) + " values");
}

// spec/profiles/zt.quant_group-1.md, metadata rules.
void validate_quant_group(const Object &o, const std::string &pre) {
  const Checker k{o, pre, "zt.quant_group/1"};
  const Attrs a = k.attrs();
  const uint64_t bits = k.uint_at(a, a.find("bits"), "bits");
  const uint64_t group_size = k.uint_at(a, a.find("group_size"), "group_size");
  const uint64_t axis = k.uint_at(a, a.find("axis"), "axis");
  const Attrs packing = k.map_at(a, a.find("packing"), "packing");
  const std::string scale_form = k.text_at(a, a.find("scale_form"), "scale_form");
  const Attrs zp = k.map_at(a, a.find("zero_point"), "zero_point");
  const std::string word = k.text_at(packing, packing.find("word"), "packing.word");
  const std::string order = k.text_at(packing, packing.find("order"), "packing.order");
  const uint64_t per_word = k.uint_at(packing, packing.find("per_word"), "packing.per_word");
  const std::string form = k.text_at(zp, zp.find("form"), "zero_point.form");

  if (bits == 3 || bits == 5 || bits == 6)
    k.bad("bits " + std::to_string(bits) +
          " is refused: the profile lists it, but it divides no word width (8, 16, 32, 64) and a packing with "
          "unused bits is not expressible in this profile");
  if (bits != 2 && bits != 4 && bits != 8) k.bad("bits must be 2, 4 or 8, not " + std::to_string(bits));
  const zt_dtype w = storage_dtype(word);
  if (w != ZT_U8 && w != ZT_U16 && w != ZT_U32 && w != ZT_U64)
    k.bad("packing.word must be \"u8\", \"u16\", \"u32\" or \"u64\", not \"" + printable(word) + "\"");
  if (order != "lsb_first" && order != "msb_first")
    k.bad("packing.order must be \"lsb_first\" or \"msb_first\", not \"" + printable(order) + "\"");
  const uint64_t word_bits = 8 * dtype_size(w);
  if (per_word != word_bits / bits)
    k.bad("packing.per_word " + std::to_string(per_word) +
          " is not 8 x width(word) / bits = " + std::to_string(word_bits / bits));
  if (group_size == 0)
    k.bad(
        "group_size 0 is refused: the profile's text says both 'one scale per row of axis' and "
        "'groups = shape[axis]', which disagree; state the group size");
  if (axis >= o.shape.size())
    k.bad("axis " + std::to_string(axis) + " is not below the rank " + std::to_string(o.shape.size()), ZT_E_SHAPE);
  const uint64_t along = o.shape[axis];
  if (along % group_size != 0)
    k.bad("group_size " + std::to_string(group_size) + " does not divide shape[axis] = " + std::to_string(along),
          ZT_E_SHAPE);
  bool tensor = false;
  if (form == "none") {
  } else if (form == "implied") {
    auto v = zp.find("value");
    if (!v) k.bad("requires zero_point.value when zero_point.form is \"implied\"");
    const auto m = zp.cursor().head(*v).major;
    if (m != cbor::kUint && m != cbor::kNint) k.bad("zero_point.value must be an integer");
  } else if (form == "tensor") {
    tensor = true;
  } else {
    k.bad("zero_point.form must be \"none\", \"implied\" or \"tensor\", not \"" + printable(form) + "\"");
  }
  std::string zpack;
  if (tensor) {
    zpack = k.text_at(zp, zp.find("packing"), "zero_point.packing");
    if (zpack != "same_as_data" && zpack != "plain")
      k.bad("zero_point.packing must be \"same_as_data\" or \"plain\", not \"" + printable(zpack) + "\"");
  }
  auto p = tensor ? k.parts({"data", "scales", "zeros"}) : k.parts({"data", "scales"});
  const Component &data = *p[0], &scales = *p[1];
  // The word's unsigned counterpart: data may be the signed type of its width.
  const bool word_ok = !data.has_type && dtype_is_integer(data.dtype) && dtype_size(data.dtype) == dtype_size(w);
  if (!word_ok)
    k.bad("'data' must be plain " + word + " (or its signed counterpart), matching packing.word", ZT_E_DTYPE);
  if (scale_form == "f32_factors") {
    if (scales.has_type ||
        (scales.dtype != ZT_F16 && scales.dtype != ZT_BF16 && scales.dtype != ZT_F32 && scales.dtype != ZT_F64))
      k.bad("scale_form \"f32_factors\" needs float 'scales' (f16, bf16, f32, f64)", ZT_E_DTYPE);
  } else if (scale_form == "f16_factors") {
    if (scales.has_type || (scales.dtype != ZT_F16 && scales.dtype != ZT_BF16))
      k.bad("scale_form \"f16_factors\" needs f16 or bf16 'scales'", ZT_E_DTYPE);
  } else if (scale_form == "e8m0_exponent") {
    if (!scales.has_type || scales.logical_type != "f8_e8m0")
      k.bad("scale_form \"e8m0_exponent\" needs 'scales' of u8 with type f8_e8m0", ZT_E_DTYPE);
  } else {
    k.bad("scale_form must be \"f32_factors\", \"f16_factors\" or \"e8m0_exponent\", not \"" + printable(scale_form) +
          "\"");
  }
  // Sizes. lanes = product of the other dimensions (also when along is 0).
  uint64_t lanes = 1;
  for (size_t d = 0; d < o.shape.size(); ++d)
    if (d != axis) lanes = k.mul(lanes, o.shape[d]);
  const uint64_t codes = k.mul(lanes, along), groups = along / group_size, scale_n = k.mul(groups, lanes);
  const uint64_t ww = dtype_size(w);
  if (codes % per_word != 0)
    k.bad(std::to_string(codes) + " codes do not fill whole words of " + std::to_string(per_word), ZT_E_LENGTH);
  k.size_is(data, k.mul(codes / per_word, ww), "that codes / per_word x width(word) gives");
  if (auto want = k.size_of_n(scales, scale_n)) k.size_is(scales, *want, "of groups x lanes scales");
  if (tensor) {
    const Component &zeros = *p[2];
    if (zpack == "plain") {
      if (auto want = k.size_of_n(zeros, scale_n)) k.size_is(zeros, *want, "of groups x lanes zero points");
    } else {
      if (zeros.dtype != data.dtype || zeros.has_type)
        k.bad("'zeros' packed same_as_data must be of the dtype of 'data'", ZT_E_DTYPE);
      if (scale_n % per_word != 0)
        k.bad(std::to_string(scale_n) + " zero points do not fill whole words of " + std::to_string(per_word),
              ZT_E_LENGTH);
      k.size_is(zeros, k.mul(scale_n / per_word, ww), "that groups x lanes / per_word x width(word) gives");
    }
  }
}

// spec/profiles/zt.mx-1.md, metadata rules.
void validate_mx(const Object &o, const std::string &pre) {
  const Checker k{o, pre, "zt.mx/1"};
  const Attrs a = k.attrs();
  const uint64_t block = k.uint_at(a, a.find("block_size"), "block_size");
  const std::string form = k.text_at(a, a.find("scale_form"), "scale_form");
  if (form != "e8m0_exponent") k.bad("scale_form must be \"e8m0_exponent\", not \"" + printable(form) + "\"");
  if (o.shape.empty()) k.bad("needs a shape of rank >= 1", ZT_E_SHAPE);
  uint64_t axis = o.shape.size() - 1;
  if (auto p = a.find("axis")) axis = k.uint_at(a, p, "axis");
  if (axis >= o.shape.size())
    k.bad("axis " + std::to_string(axis) + " is not below the rank " + std::to_string(o.shape.size()), ZT_E_SHAPE);
  if (block < 2) k.bad("block_size must be at least 2, not " + std::to_string(block));
  if (o.shape[axis] % block != 0)
    k.bad("block_size " + std::to_string(block) + " does not divide shape[axis] = " + std::to_string(o.shape[axis]),
          ZT_E_SHAPE);
  auto p = k.parts({"data", "scales"});
  const Component &data = *p[0], &scales = *p[1];
  if (!scales.has_type || scales.logical_type != "f8_e8m0") k.bad("'scales' must be u8 with type f8_e8m0", ZT_E_DTYPE);
  const bool elem_ok = data.has_type ? (data.logical_type == "f4_e2m1" || data.logical_type == "f8_e4m3fn" ||
                                        data.logical_type == "f8_e5m2")
                                     : data.dtype == ZT_I8;
  if (!elem_ok)
    k.bad("'data' must be f4_e2m1, f8_e4m3fn or f8_e5m2 (over u8), or plain i8, not " +
              (data.has_type ? printable(data.logical_type) : data.dtype_name),
          ZT_E_DTYPE);
  if (auto want = k.size_of_n(data, o.numel)) k.size_is(data, *want, "of the shape's elements");
  k.size_is(scales, o.numel / block, "of one scale a block");
}

MxParams mx_params(const Object &o, const std::string &pre) {
  const Checker k{o, pre, "zt.mx/1"};
  const Attrs a = k.attrs();
  MxParams m;
  m.block_size = k.uint_at(a, a.find("block_size"), "block_size");
  m.axis = o.shape.empty() ? 0 : o.shape.size() - 1;
  if (auto p = a.find("axis")) m.axis = k.uint_at(a, p, "axis");
  return m;
}

QuantGroupParams quant_group_params(const Object &o, const std::string &pre) {
  const Checker k{o, pre, "zt.quant_group/1"};
  const Attrs a = k.attrs();
  QuantGroupParams q;
  q.bits = k.uint_at(a, a.find("bits"), "bits");
  q.group_size = k.uint_at(a, a.find("group_size"), "group_size");
  q.axis = k.uint_at(a, a.find("axis"), "axis");
  const Attrs packing = k.map_at(a, a.find("packing"), "packing");
  q.word = k.text_at(packing, packing.find("word"), "packing.word");
  q.order = k.text_at(packing, packing.find("order"), "packing.order");
  q.per_word = k.uint_at(packing, packing.find("per_word"), "packing.per_word");
  q.scale_form = k.text_at(a, a.find("scale_form"), "scale_form");
  const Attrs zp = k.map_at(a, a.find("zero_point"), "zero_point");
  q.zero_form = k.text_at(zp, zp.find("form"), "zero_point.form");
  if (q.zero_form == "implied") {
    auto v = zp.find("value");
    if (!v) k.bad("requires zero_point.value when zero_point.form is \"implied\"");
    const cbor::Head h = zp.cursor().head(*v);
    if (h.major == cbor::kUint && h.arg <= INT64_MAX)
      q.zero_value = static_cast<int64_t>(h.arg);
    else if (h.major == cbor::kNint && h.arg <= INT64_MAX)
      q.zero_value = -1 - static_cast<int64_t>(h.arg);
    else
      k.bad("zero_point.value must be an integer that fits 64 bits");
  }
  if (q.zero_form == "tensor") q.zero_packing = k.text_at(zp, zp.find("packing"), "zero_point.packing");
  return q;
}

bool is_gguf_layout(std::string_view id) {
  static const char *kTypes[] = {"q4_0",  "q4_1",    "q5_0",  "q5_1",   "q8_0",   "q8_1",  "q2_k",    "q3_k",
                                 "q4_k",  "q5_k",    "q6_k",  "q8_k",   "iq1_s",  "iq1_m", "iq2_xxs", "iq2_xs",
                                 "iq2_s", "iq3_xxs", "iq3_s", "iq4_nl", "iq4_xs", "mxfp4"};
  constexpr std::string_view kPre = "gguf.", kPost = "/1";
  if (id.size() <= kPre.size() + kPost.size() || id.substr(0, kPre.size()) != kPre ||
      id.substr(id.size() - kPost.size()) != kPost)
    return false;
  const std::string_view t = id.substr(kPre.size(), id.size() - kPre.size() - kPost.size());
  for (const char *x : kTypes)
    if (t == x) return true;
  return false;
}

// spec/profiles/gguf.md, metadata rules; the bytes pass through as stored.
void validate_gguf(const Object &o, const std::string &pre) {
  const std::string id = o.format;
  const Checker k{o, pre, id.c_str()};
  const Attrs a = k.attrs();
  const uint64_t epb = k.uint_at(a, a.find("elems_per_block"), "elems_per_block");
  const uint64_t bb = k.uint_at(a, a.find("block_bytes"), "block_bytes");
  if (epb < 1) k.bad("elems_per_block must be at least 1");
  if (bb < 1) k.bad("block_bytes must be at least 1");
  auto p = k.parts({"data"});
  const Component &data = *p[0];
  if (data.dtype != ZT_U8 || data.has_type) k.bad("'data' must be plain u8", ZT_E_DTYPE);
  if (o.numel % epb != 0)
    k.bad("elems_per_block " + std::to_string(epb) + " does not divide the " + std::to_string(o.numel) + " elements",
          ZT_E_SHAPE);
  if (!o.shape.empty() && o.shape.back() % epb != 0)
    k.bad("elems_per_block " + std::to_string(epb) + " does not divide the fastest-varying dimension " +
              std::to_string(o.shape.back()) + " (a block would span two rows)",
          ZT_E_SHAPE);
  k.size_is(data, k.mul(o.numel / epb, bb), "that blocks x block_bytes gives");
}

}  // namespace zt::v2
