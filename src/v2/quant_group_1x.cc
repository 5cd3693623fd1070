#include "v2/quant_group_1x.h"

#include <cmath>

#include "composite/quantized.h"
#include "manifest/cbor_tree.h"
#include "types/dtype.h"
#include "util/error.h"
#include "v2/det_cbor_encode.h"

namespace zt::v2 {
namespace {

[[noreturn]] void refuse(const std::string &where, const std::string &why) {
  fail(ZT_E_UNSUPPORTED, where + ": this 1.x quantized_group object has no zt.quant_group/1 form: " + why);
}

std::string text_item(const char *s) {
  DetCbor o;
  o.text(s);
  return o.out;
}

std::string uint_item(uint64_t v) {
  DetCbor o;
  o.uint(v);
  return o.out;
}

}  // namespace

std::string quant_group_attributes(const QuantGroup1x &q, const std::string &where) {
  if (q.attributes.empty()) refuse(where, "it has no attributes (bits and group_size are required)");
  cbor::Tree t(reinterpret_cast<const uint8_t *>(q.attributes.data()), q.attributes.size(), where + ": attributes");
  if (t.node(t.root()).kind != cbor::Kind::Map) refuse(where, "its attributes are not a map");
  auto number = [&](const char *key) -> uint64_t {
    const uint32_t i = t.find(t.root(), key);
    if (!i) refuse(where, std::string("'") + key + "' is missing");
    const cbor::Node &v = t.node(i);
    if (v.kind == cbor::Kind::Uint && v.value > 0) return v.value;
    if (v.kind == cbor::Kind::Float) {  // 1.x allows a whole number as a float
      const double d = t.real(v);
      if (d >= 1 && d < 18446744073709551616.0 && std::floor(d) == d) return static_cast<uint64_t>(d);
    }
    refuse(where, std::string("'") + key + "' is not a positive integer");
  };
  const uint64_t bits = number("bits"), group_size = number("group_size");
  const zt_dtype word_dtype = dtype_from_short_name(q.data_dtype);
  const Packing *packing = nullptr;
  if (const uint32_t i = t.find(t.root(), "packing")) {
    if (t.node(i).kind != cbor::Kind::Text) refuse(where, "'packing' is not text");
    packing = packing_find(std::string(t.text(i)));
    if (!packing) refuse(where, "packing '" + std::string(t.text(i)) + "' is unknown");
  } else {
    packing = packing_infer(bits, word_dtype);
    if (!packing) refuse(where, std::to_string(bits) + "-bit codes in " + q.data_dtype + " words");
  }
  if (packing->bits != bits || (word_dtype != packing->word_dtypes[0] && word_dtype != packing->word_dtypes[1]))
    refuse(where, "packing '" + std::string(packing->name) + "' does not match bits " + std::to_string(bits) +
                      " and the " + q.data_dtype + " words");
  if (q.shape.empty()) refuse(where, "it has no dimensions");
  const uint64_t cols = q.shape.back();
  if (cols % group_size)
    refuse(where, "group_size " + std::to_string(group_size) + " does not divide the last dimension " +
                      std::to_string(cols) + " (a zt.quant_group/1 group never spans two rows)");
  if (cols % packing->per_word)
    refuse(where, std::to_string(packing->per_word) + " codes per word do not divide the last dimension " +
                      std::to_string(cols) + " (1.x pads each row's last word; the profile packs rows together)");
  const bool float_scales = q.scales_dtype == "f16" || q.scales_dtype == "bf16" || q.scales_dtype == "f32" ||
                            q.scales_dtype == "f64" || (q.scales_dtype == "u8" && q.scales_type.rfind("f8_", 0) == 0);
  if (!float_scales) refuse(where, "its scales (" + q.scales_dtype + ") are not floats");

  std::vector<std::pair<std::string, std::string>> entries;
  // 1.x keys this profile does not define are kept as they are.
  uint32_t k = t.first_child(t.root());
  for (uint64_t pair = 0; pair < t.node(t.root()).value; ++pair) {
    const uint32_t v = t.next(k);
    const bool known = t.node(k).kind == cbor::Kind::Text && (t.text(k) == "bits" || t.text(k) == "group_size" ||
                                                              t.text(k) == "packing" || t.text(k) == "scale_form");
    if (!known) entries.emplace_back(std::string(t.raw(k)), std::string(t.raw(v)));
    k = t.next(v);
  }
  auto add = [&](const char *key, std::string value) { entries.emplace_back(text_item(key), std::move(value)); };
  add("bits", uint_item(bits));
  add("group_size", uint_item(group_size));
  add("axis", uint_item(q.shape.size() - 1));
  {
    std::vector<std::pair<std::string, std::string>> p = {
        {text_item("word"), text_item(dtype_size(word_dtype) == 4 ? "u32" : "u8")},
        {text_item("order"), text_item("lsb_first")},
        {text_item("per_word"), uint_item(packing->per_word)}};
    DetCbor m;
    emit_sorted_map(m, p, where);
    add("packing", m.out);
  }
  // 1.x widens every scale to f32, unless the object came from a v2
  // "f16_factors" one (migrate/v2_to_1x.cc keeps that key for the way back).
  std::string scale_form = "f32_factors";
  if (const uint32_t i = t.find(t.root(), "scale_form")) {
    if (t.node(i).kind != cbor::Kind::Text || (t.text(i) != "f32_factors" && t.text(i) != "f16_factors"))
      refuse(where, "'scale_form' is not \"f32_factors\" or \"f16_factors\"");
    scale_form = std::string(t.text(i));
  }
  add("scale_form", text_item(scale_form.c_str()));
  {
    std::vector<std::pair<std::string, std::string>> z;
    if (q.has_zeros) {
      z = {{text_item("form"), text_item("tensor")}, {text_item("packing"), text_item("plain")}};
    } else {
      z = {{text_item("form"), text_item("implied")}, {text_item("value"), uint_item(uint64_t{1} << (bits - 1))}};
    }
    DetCbor m;
    emit_sorted_map(m, z, where);
    add("zero_point", m.out);
  }
  DetCbor out;
  emit_sorted_map(out, entries, where + ": attributes");
  return std::move(out.out);
}

}  // namespace zt::v2
