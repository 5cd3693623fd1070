#include "manifest/decode.h"

#include <algorithm>
#include <cstring>

#include "manifest/decode_internal.h"
#include "util/cbor_out.h"
#include "util/error.h"

namespace zt {

using namespace manifest_decode;

std::string encode_raw_map(const std::vector<RawField> &fields) {
  std::string out;
  cbor::put_map(out, fields.size());
  for (const auto &f : fields) {
    out += f.key;
    out += f.value;
  }
  return out;
}

void settle_object_status(Object &obj) {
  if (obj.status != ZT_OK) return;
  for (const auto &c : obj.components) {
    if (c.status != ZT_OK) {
      obj.status = c.status;
      obj.error = c.error;
      return;
    }
  }
}

const Object *Manifest::find(std::string_view name) const {
  auto it = std::lower_bound(name_order.begin(), name_order.end(), name,
                             [&](uint32_t i, std::string_view n) { return std::string_view(objects[i].name) < n; });
  if (it == name_order.end() || objects[*it].name != name) return nullptr;
  return &objects[*it];
}

namespace {

// RFC 8949 §3.4.6: tag 55799 ("self-described CBOR") may prefix the manifest
// and adds no meaning (docs/reading-rules.md accepts it). Returns the bytes it takes up:
// it may repeat, and its head may use any integer width.
size_t self_describe_prefix(const uint8_t *data, size_t size) {
  size_t pos = 0;
  while (pos < size && (data[pos] >> 5) == 6) {
    const unsigned ai = data[pos] & 31;
    if (ai > 27) break;
    const size_t n = ai < 24 ? 0 : size_t{1} << (ai - 24);
    if (size - pos - 1 < n) break;
    uint64_t tag = ai < 24 ? ai : 0;
    for (size_t i = 0; i < n; ++i) tag = tag << 8 | data[pos + 1 + i];
    if (tag != 55799) break;
    pos += 1 + n;
  }
  return pos;
}

}  // namespace

Manifest decode_manifest(const uint8_t *data, size_t size, Container container, uint64_t data_end,
                         const DecodeLimits &limits, const std::string &path) {
  Manifest man;
  man.data_end = data_end;
  cbor::ParseOptions opts;
  opts.max_depth = kMaxDepth;
  // The item under a self-describe tag is the manifest: parsed on its own, so
  // the root map stays at depth 0 (objects collapse at kCollapseObjects).
  const size_t prefix = self_describe_prefix(data, size);
  data += prefix;
  size -= prefix;
  opts.base_offset = prefix;
  // File and object attributes are kept as their raw bytes: checked, but
  // their insides take no nodes (a big metadata array would cost 24 bytes
  // per element).
  EarlyObjects early(man, limits, size);
  if (container != Container::V0) {
    // The file's attributes (a value of the root) and each object's (a value
    // of an object map, two levels further down).
    opts.check_only_under = "attributes";
    opts.check_only_depths = (1u << 1) | (1u << 3);
    opts.collapse_depth = kCollapseObjects;
    opts.on_collapsed = [&early](const Tree &t, uint32_t node, const cbor::detail::OpenItem *anc, size_t depth) {
      early.offer(t, node, anc, depth);
    };
  }
  Tree tree(data, size, "'" + path + "' manifest", opts);
  if (container == Container::V0)
    decode_v0(tree, man, limits, path);
  else
    decode_v1(tree, man, limits, path, std::move(early.objects));
  validate_overlaps(man);
  if (man.objects.size() > UINT32_MAX) fail(ZT_E_LIMIT, "'" + path + "': more than 2^32 objects");
  man.name_order.resize(man.objects.size());
  for (uint32_t i = 0; i < man.name_order.size(); ++i) man.name_order[i] = i;
  auto by_name = [&](uint32_t a, uint32_t b) { return man.objects[a].name < man.objects[b].name; };
  if (!std::is_sorted(man.name_order.begin(), man.name_order.end(), by_name))
    std::sort(man.name_order.begin(), man.name_order.end(), by_name);
  for (size_t k = 1; k < man.name_order.size(); ++k) {
    const std::string &name = man.objects[man.name_order[k]].name;
    if (name == man.objects[man.name_order[k - 1]].name)
      fail(ZT_E_DUPLICATE_KEY, "'" + path + "': two objects are named '" + printable(name) + "'");
  }
  for (size_t i = 0; i < man.objects.size(); ++i) {
    Object &o = man.objects[i];
    // A damaged component (a role that is not text, say) is the first fault;
    // settle it before judging which components a dense object lacks.
    settle_object_status(o);
    if (o.status == ZT_OK && o.format == "dense") {
      bool has_data = false;
      for (const auto &c : o.components) has_data |= c.role == "data";
      if (!has_data) {
        o.status = ZT_E_COMPONENT_MISSING;
        o.error = where(o.name) + ": dense object has no 'data' component";
      }
    }
    settle_object_status(o);
    if (limits.strict && o.status != ZT_OK) fail(o.status, "'" + path + "': " + o.error);
  }
  return man;
}

}  // namespace zt
