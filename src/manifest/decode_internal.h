// The internals shared by the manifest decoders (decode.cc, the entry;
// decode_v1.cc, spec 1.x maps; decode_v0.cc, legacy 0.1 arrays): damage
// recording, message context and the field readers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "manifest/cbor_tree.h"
#include "manifest/decode.h"
#include "util/error.h"

namespace zt::manifest_decode {

using cbor::Kind;
using cbor::Tree;

inline constexpr size_t kMaxDepth = 256;
// In a 1.x manifest the root map is depth 0, 'objects' 1, each object 2.
inline constexpr size_t kCollapseObjects = 2;

// Records damage on an object or component without stopping the decode.
struct Damage {
  zt_status status = ZT_OK;
  std::string message;
  void set(zt_status s, std::string m) {
    if (status == ZT_OK) {
      status = s;
      message = std::move(m);
    }
  }
};

// The "object 'x', component 'y'" prefix of damage messages, built only when
// a message is: an intact object of a 100 000-object manifest never pays for
// it (it was a third of the decode time).
struct Ctx {
  const std::string &object;
  const std::string *role = nullptr;
  std::string str() const { return role ? where(object, *role) : where(object); }
};
inline std::string operator+(const Ctx &c, const char *s) {
  return c.str() + s;
}

inline std::string raw_string(const Tree &t, uint32_t i) {
  return std::string(t.raw(i));
}

inline bool is_null(const Tree &t, uint32_t i) {
  return t.node(i).kind == Kind::Null || t.node(i).kind == Kind::Undefined;
}

// Parses "1.2.0" → major, minor.
inline bool parse_version(std::string_view v, int &major, int &minor) {
  major = minor = 0;
  size_t i = 0;
  auto number = [&](int &out) {
    size_t start = i;
    long long x = 0;
    while (i < v.size() && v[i] >= '0' && v[i] <= '9' && i - start < 9) x = x * 10 + (v[i++] - '0');
    out = static_cast<int>(x);
    return i > start;
  };
  if (!number(major)) return false;
  if (i < v.size() && v[i] == '.') {
    ++i;
    if (!number(minor)) return false;
  }
  return true;
}

inline bool read_uint(const Tree &t, uint32_t i, uint64_t &out) {
  if (t.node(i).kind != Kind::Uint) return false;
  out = t.node(i).value;
  return true;
}

inline bool read_shape(const Tree &t, uint32_t i, Shape &out) {
  const auto &n = t.node(i);
  if (n.kind != Kind::Array) return false;
  out.clear();
  out.reserve(n.value);
  for (uint32_t c = t.first_child(i); c < n.next; c = t.next(c)) {
    if (t.node(c).kind != Kind::Uint) return false;
    out.push_back(t.node(c).value);
  }
  return true;
}

// Calls fn(k, v, key) for each key/value pair of the map `node`; key is
// the key's text (empty when the key is not text: fn tells by t.node(k)).
template <typename Fn>
void for_each_pair(const Tree &t, uint32_t node, Fn fn) {
  const uint64_t pairs = t.node(node).value;
  uint32_t k = t.first_child(node);
  for (uint64_t p = 0; p < pairs; ++p) {
    const uint32_t v = t.next(k);
    const auto &kn = t.node(k);
    fn(k, v, kn.kind == Kind::Text ? t.text(kn) : std::string_view());
    k = t.next(v);
  }
}

// An 'encoding' name: raw, zstd, or unknown (damage).
inline void set_encoding(Component &c, std::string_view name, Damage &dmg, const Ctx &ctx) {
  c.encoding_name = std::string(name);
  c.encoding = c.encoding_name == "raw"    ? ZT_ENCODING_RAW
               : c.encoding_name == "zstd" ? ZT_ENCODING_ZSTD
                                           : ZT_ENCODING_UNKNOWN;
  if (!c.encoding) dmg.set(ZT_E_ENCODING, ctx + ": unknown encoding '" + printable(c.encoding_name) + "'");
}

// A field whose value `read` takes (read_uint, read_shape): stored, with
// `have` set, or `wrong` told what the value should have been.
template <typename T, typename Wrong>
void take(bool (*read)(const Tree &, uint32_t, T &), const Tree &t, uint32_t v, T &out, bool &have, const char *want,
          Wrong wrong) {
  if (read(t, v, out))
    have = true;
  else
    wrong(want);
}

// An optional text field: null means absent. True, with its text in
// `out`, when the value is text; `wrong` is told when it is neither.
template <typename Wrong>
bool optional_text(const Tree &t, uint32_t v, std::string_view &out, Wrong wrong) {
  if (is_null(t, v)) return false;
  if (t.node(v).kind != Kind::Text) {
    wrong("text");
    return false;
  }
  out = t.text(v);
  return true;
}

inline void parse_digest_into(Component &c, Damage &dmg, const Ctx &ctx) {
  try {
    c.parsed_digest = parse_digest(c.digest);
  } catch (const Error &e) {
    dmg.set(e.status(), ctx + ": " + e.what());
  }
}

void decode_object_v1(const Tree &t, uint32_t node, Object &o, Manifest &man, const DecodeLimits &limits);
void decode_v1(const Tree &t, Manifest &man, const DecodeLimits &limits, const std::string &path,
               std::vector<Object> early);
void decode_v0(const Tree &t, Manifest &man, const DecodeLimits &limits, const std::string &path);

// Decodes the objects of a 1.x manifest while the tree is being parsed: each
// object, collapsed at depth 2, is decoded as soon as it completes, from
// the nodes the parser built anyway, so its bytes are parsed once. Only
// possible when 'version' came before 'objects' (the spec version steers
// decoding) and every name so far is text; otherwise decode_v1 takes over
// from the first object not decoded here, parsing those again. Object
// damage is recorded, never thrown, so decoding early changes no outcome:
// manifest-level faults are still found by decode_v1, in order.
class EarlyObjects {
 public:
  EarlyObjects(Manifest &man, const DecodeLimits &limits, size_t manifest_bytes)
      : man_(man), limits_(limits), manifest_bytes_(manifest_bytes) {}

  void offer(const Tree &t, uint32_t node, const cbor::detail::OpenItem *anc, size_t depth) {
    if (stopped_ || depth != 2) return;
    const auto &root = anc[0], &parent = anc[1];
    // The item must be a value of the map that is the value of the root's
    // 'objects' key.
    if (parent.node != objects_) {
      if (objects_ != 0 || !is_objects_map(t, root, parent.node)) return stop();
      objects_ = parent.node;
      if (!learn_version(t, root)) return stop();
      // The claimed count is only checked against the bytes left: a valid
      // object takes ~30 bytes, so reserve no more than those could hold (a
      // lying count must not reserve gigabytes before the parse fails).
      objects.reserve(std::min<uint64_t>(t.node(parent.node).value, manifest_bytes_ / kMinObjectBytes));
    }
    if (parent.done % 2 != 1 || parent.done / 2 != objects.size()) return stop();
    const uint32_t key = node - 1;  // a depth-2 key is one node: a leaf or collapsed
    if (t.node(key).kind != Kind::Text) return stop();
    Object &o = objects.emplace_back();
    o.name = std::string(t.text(key));
    decode_object_v1(t, node, o, man_, limits_);
    if (limits_.on_early_object) limits_.on_early_object(o);
  }

  std::vector<Object> objects;  // the first objects.size() objects, decoded

 private:
  void stop() { stopped_ = true; }

  // Whether `map` is the value of a text key "objects" in the root map.
  static bool is_objects_map(const Tree &t, const cbor::detail::OpenItem &root, uint32_t map) {
    if (t.node(root.node).kind != Kind::Map || root.done % 2 != 1) return false;
    uint32_t k = t.first_child(root.node);
    for (uint64_t i = 0; i + 1 < root.done; ++i) k = t.next(k);  // the key just before `map`
    return t.next(k) == map && t.node(k).kind == Kind::Text && t.text(k) == "objects";
  }

  // The spec version from a 'version' key that came before 'objects'.
  bool learn_version(const Tree &t, const cbor::detail::OpenItem &root) {
    // Only the pairs before 'objects' are complete: find() would walk on.
    uint32_t version = 0;
    uint32_t k = t.first_child(root.node);
    for (uint64_t i = 0; i + 1 < root.done && !version; i += 2) {
      const uint32_t v = t.next(k);
      if (t.node(k).kind == Kind::Text && t.text(k) == "version") version = v;
      k = t.next(v);
    }
    if (!version || t.node(version).kind != Kind::Text) return false;
    int major, minor;
    if (!parse_version(t.text(version), major, minor) || major != 1) return false;
    man_.spec = minor >= 2 ? SpecVersion::V1_2 : SpecVersion::V1_1;
    return true;
  }

  // A name byte, then shape/format/components keys and values.
  static constexpr uint64_t kMinObjectBytes = 29;
  Manifest &man_;
  const DecodeLimits &limits_;
  size_t manifest_bytes_;
  uint32_t objects_ = 0;
  bool stopped_ = false;
};

}  // namespace zt::manifest_decode
