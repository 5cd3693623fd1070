#include "migrate/v2_to_1x.h"

#include "composite/parts.h"
#include "composite/quantized.h"
#include "composite/sparse.h"
#include "manifest/cbor_tree.h"
#include "types/dtype.h"
#include "util/error.h"
#include "v2/det_cbor_encode.h"
#include "v2/layout_profiles.h"

namespace zt::migrate {
namespace {

[[noreturn]] void refuse(const std::string &object, const std::string &part, const std::string &why) {
  fail(ZT_E_UNSUPPORTED, "cannot migrate to spec 1.2: " + where(object, part) + ": " + why +
                             " has no spec 1.2 form (docs/v2.md, Migration); the input is unchanged");
}

std::string text_item(const std::string &s) {
  v2::DetCbor o;
  o.text(s);
  return o.out;
}

std::string uint_item(uint64_t v) {
  v2::DetCbor o;
  o.uint(v);
  return o.out;
}

// A part's dtype and logical type in 1.2 terms.
Part1x part_to_1x(const Object &o, const Component &c) {
  Part1x p;
  p.role = c.role;
  p.dtype = c.dtype;
  if (c.dtype == ZT_DTYPE_UNKNOWN) refuse(o.name, c.role, "dtype '" + c.dtype_name + "'");
  if (c.encoding != ZT_ENCODING_RAW && c.encoding != ZT_ENCODING_ZSTD)
    refuse(o.name, c.role, "encoding '" + c.encoding_name + "'");
  if (!c.has_type) return p;
  if (c.logical_type == "bool") {
    p.dtype = ZT_BOOL;  // 1.2's bool is a dtype of its own
    return p;
  }
  // 1.2 knows these with the same names and storage (types/dtype.h).
  const LogicalType *t = logical_type_find(c.logical_type);
  if (!t || t->storage != c.dtype) refuse(o.name, c.role, "logical type '" + c.logical_type + "'");
  p.has_type = true;
  p.logical_type = c.logical_type;
  return p;
}

// zt.quant_group/1 where it is the 1.x quantized_group model: groups and
// lsb-first packing along the last axis in u32 or u8 words filling each row
// exactly, factor scales, zero points from a plain "zeros" part or the
// implied 2^(bits-1). The inverse of v2/quant_group_1x.cc: the attributes
// lose axis, the packing map and zero_point (1.x implies them), gain the
// 1.x packing name, and keep scale_form only when it is "f16_factors" (an
// extra key 1.x readers keep, so the way back restates it).
void quant_group_to_1x(const Object &o, Object1x &out) {
  const v2::QuantGroupParams q = v2::quant_group_params(o, "");
  auto off_model = [&](const std::string &what) { refuse(o.name, "", "zt.quant_group/1 with " + what); };
  if (o.shape.empty() || q.axis + 1 != o.shape.size()) off_model("groups along an axis other than the last");
  if (q.group_size == 0) off_model("group_size 0 (per channel)");
  if (q.order != "lsb_first") off_model("packing order '" + q.order + "'");
  if (q.scale_form != "f32_factors" && q.scale_form != "f16_factors") off_model("scale_form '" + q.scale_form + "'");
  const Component *data = find_component(o, "data");
  if (!data) off_model("no 'data' part");
  const Packing *packing = packing_infer(q.bits, data->dtype);
  if (!packing || packing->per_word != q.per_word)
    off_model(std::to_string(q.bits) + "-bit codes in " + data->dtype_name + " words");
  if (o.shape.back() % packing->per_word) off_model("rows that do not fill whole words");
  if (q.zero_form == "tensor" && q.zero_packing != "plain") off_model("zero points packed like the data");
  if (q.zero_form == "none") off_model("no zero point");
  if (q.zero_form == "implied" && q.zero_value != (int64_t{1} << (q.bits - 1)))
    off_model("an implied zero point of " + std::to_string(q.zero_value) + " (1.x implies " +
              std::to_string(int64_t{1} << (q.bits - 1)) + ")");

  std::vector<std::pair<std::string, std::string>> entries;
  const std::string ctx = where(o.name) + ": attributes";
  cbor::Tree t(reinterpret_cast<const uint8_t *>(o.attributes.data()), o.attributes.size(), ctx);
  uint32_t k = t.first_child(t.root());
  for (uint64_t pair = 0; pair < t.node(t.root()).value; ++pair) {
    const uint32_t v = t.next(k);
    const std::string_view key = t.node(k).kind == cbor::Kind::Text ? t.text(k) : std::string_view();
    const bool restated = key == "bits" || key == "group_size" || key == "axis" || key == "packing" ||
                          key == "scale_form" || key == "zero_point";
    if (!restated) entries.emplace_back(std::string(t.raw(k)), std::string(t.raw(v)));
    k = t.next(v);
  }
  entries.emplace_back(text_item("bits"), uint_item(q.bits));
  entries.emplace_back(text_item("group_size"), uint_item(q.group_size));
  entries.emplace_back(text_item("packing"), text_item(packing->name));
  if (q.scale_form == "f16_factors") entries.emplace_back(text_item("scale_form"), text_item(q.scale_form));
  v2::DetCbor m;
  v2::emit_sorted_map(m, entries, ctx);
  out.format = "quantized_group";
  out.has_attributes = true;
  out.attributes = std::move(m.out);
  for (Part1x &p : out.parts)
    if (p.role == "data") p.role = "packed_weight";  // spec 1.2's name
}

}  // namespace

Object1x object_to_1x(const Object &o) {
  // What 1.2 cannot hold first (the layout, then each part), whatever else
  // the reader thinks of the object: an unknown logical type, say, also
  // makes it unreadable except structurally.
  const bool quant_group = o.format == "zt.quant_group/1";
  if (o.format == "zt.mx/1" || v2::is_gguf_layout(o.format)) refuse(o.name, "", "layout profile '" + o.format + "'");
  if (o.format != "dense" && o.format != kCsrV2 && o.format != kCooV2 && !quant_group)
    refuse(o.name, "", "layout '" + o.format + "' (a profile this library does not know)");
  Object1x out;
  out.format = o.format == kCsrV2 ? "sparse_csr" : o.format == kCooV2 ? "sparse_coo" : o.format;
  out.has_attributes = o.has_attributes;
  out.attributes = o.attributes;
  for (const Component &c : o.components) out.parts.push_back(part_to_1x(o, c));
  if (o.status != ZT_OK) fail(o.status, "cannot migrate: " + o.error);
  if (quant_group) quant_group_to_1x(o, out);
  return out;
}

std::vector<Object1x> plan_v2_to_1x(const Manifest &m) {
  std::vector<Object1x> plan;
  plan.reserve(m.objects.size());
  for (const Object &o : m.objects) plan.push_back(object_to_1x(o));
  return plan;
}

}  // namespace zt::migrate
