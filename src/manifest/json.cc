#include "manifest/json.h"

#include <cbor.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <type_traits>

#include "manifest/cbor_tree.h"
#include "types/half.h"
#include "util/cbor_out.h"
#include "util/error.h"
#include "util/json_sax.h"
#include "util/u128.h"

namespace zt {
namespace {

using cbor::Kind;

void append_hex(std::string &out, const char *p, size_t n) {
  static const char *hex = "0123456789abcdef";
  for (size_t i = 0; i < n; ++i) {
    unsigned char b = static_cast<unsigned char>(p[i]);
    out += hex[b >> 4];
    out += hex[b & 15];
  }
}

void append_double(std::string &out, double d) {
  if (std::isnan(d)) {
    out += "{\"$float\":\"nan\"}";
    return;
  }
  if (std::isinf(d)) {
    out += d > 0 ? "{\"$float\":\"inf\"}" : "{\"$float\":\"-inf\"}";
    return;
  }
  char buf[40];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  out += buf;
  // Keep floats recognisable as floats ("3.0", not "3").
  if (!std::strpbrk(buf, ".eEn")) out += ".0";
}

void emit(const cbor::Tree &t, uint32_t i, std::string &out) {
  const auto &n = t.node(i);
  switch (n.kind) {
    case Kind::Uint:
      out += std::to_string(n.value);
      break;
    case Kind::Negint:
      if (n.value <= static_cast<uint64_t>(INT64_MAX)) {
        out += std::to_string(-1 - static_cast<int64_t>(n.value));
      } else {
        out += "{\"$bigint\":\"-" + U128(n.value).plus_one().to_decimal() + "\"}";
      }
      break;
    case Kind::Bytes:
      out += "{\"$bytes\":\"";
      append_hex(out, t.text(n).data(), t.text(n).size());
      out += "\"}";
      break;
    case Kind::Text:
      json_escape(out, t.text(n));
      break;
    case Kind::Array: {
      out += '[';
      bool first = true;
      for (uint32_t c = t.first_child(i); c < n.next; c = t.next(c)) {
        if (!first) out += ',';
        first = false;
        emit(t, c, out);
      }
      out += ']';
      break;
    }
    case Kind::Map: {
      // A plain JSON object only when every key is text and none starts
      // with '$': a map such as {"$bytes": "6869"} would otherwise read back
      // as the byte string "hi" (and {"$map": ...} as another map). Such
      // maps take the {"$map": [[k, v], ...]} form, which is unambiguous.
      bool text_keys = true;
      for (uint32_t c = t.first_child(i); c < n.next; c = t.next(t.next(c)))
        if (t.node(c).kind != Kind::Text || (!t.text(c).empty() && t.text(c)[0] == '$')) text_keys = false;
      out += text_keys ? "{" : "{\"$map\":[";
      bool first = true;
      for (uint32_t c = t.first_child(i); c < n.next; c = t.next(t.next(c))) {
        if (!first) out += ',';
        first = false;
        if (text_keys) {
          json_escape(out, t.text(c));
          out += ':';
          emit(t, t.next(c), out);
        } else {
          out += '[';
          emit(t, c, out);
          out += ',';
          emit(t, t.next(c), out);
          out += ']';
        }
      }
      out += text_keys ? "}" : "]}";
      break;
    }
    case Kind::Tag: {
      uint32_t c = t.first_child(i);
      const auto &v = t.node(c);
      if ((n.value == 2 || n.value == 3) && v.kind == Kind::Bytes && v.value <= 16) {
        U128 x;
        for (char ch : t.text(v)) x = x.shifted_in(static_cast<unsigned char>(ch));
        if (n.value == 3) {
          out += "{\"$bigint\":\"-" + x.plus_one().to_decimal() + "\"}";
        } else {
          out += "{\"$bigint\":\"" + x.to_decimal() + "\"}";
        }
        break;
      }
      out += "{\"$tag\":" + std::to_string(n.value) + ",\"$value\":";
      emit(t, c, out);
      out += '}';
      break;
    }
    case Kind::Float:
      append_double(out, t.real(n));
      break;
    case Kind::Bool:
      out += n.value ? "true" : "false";
      break;
    case Kind::Null:
      out += "null";
      break;
    case Kind::Undefined:
      out += "{\"$undefined\":true}";
      break;
  }
}

// ---- JSON → CBOR ----

// A parsed JSON value with object members in document order. (nlohmann's
// ordered_json keeps order too, but looks every key up by a linear scan:
// quadratic in the keys of an object, and the JSON comes from users' files.)
struct JValue {
  enum class Type { Null, Bool, Int, Uint, Float, String, Array, Object } type = Type::Null;
  bool b = false;
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0;
  std::string s;
  std::vector<JValue> items;                            // Array
  std::vector<std::pair<std::string, JValue>> members;  // Object, in order
  // The single member named `key` of a one-member object, or nullptr.
  const JValue *only(const char *key) const {
    return type == Type::Object && members.size() == 1 && members[0].first == key ? &members[0].second : nullptr;
  }
};

constexpr size_t kMaxJsonDepth = 200;

// Builds a JValue from nlohmann's SAX events. Duplicate keys in an object
// are refused (JsonSaxBase sorts its keys once the object is complete:
// O(k log k)): a silently dropped value is lost data.
class JsonBuilder : public JsonSaxBase {
 public:
  JsonBuilder() : JsonSaxBase(kMaxJsonDepth) {}
  JValue root;

  bool parse_error(std::size_t, const std::string &, const nlohmann::detail::exception &e) override {
    fail(ZT_E_INVALID_ARG, std::string("invalid JSON: ") + e.what());
  }

 private:
  std::vector<JValue *> stack_;

  void scalar(const JsonScalar &v) override {
    JValue j;
    switch (v.kind) {
      case JsonKind::Null:
        break;
      case JsonKind::Bool:
        j.type = JValue::Type::Bool;
        j.b = v.boolean;
        break;
      case JsonKind::Integer:
        j.type = JValue::Type::Int;
        j.i = v.integer;
        break;
      case JsonKind::Unsigned:
        j.type = JValue::Type::Uint;
        j.u = v.unsigned_integer;
        break;
      case JsonKind::Float:
        j.type = JValue::Type::Float;
        j.d = v.real;
        break;
      case JsonKind::String:
        j.type = JValue::Type::String;
        j.s = std::move(*v.string);
        break;
      case JsonKind::Object:
      case JsonKind::Array:
        break;
    }
    *slot() = std::move(j);
  }
  void open(JsonKind kind) override {
    JValue j;
    j.type = kind == JsonKind::Object ? JValue::Type::Object : JValue::Type::Array;
    JValue *at = slot();
    *at = std::move(j);
    stack_.push_back(at);
  }
  void on_key(std::string &k) override { stack_.back()->members.emplace_back(std::move(k), JValue{}); }
  void close(JsonKind) override { stack_.pop_back(); }
  [[noreturn]] void duplicate_key(const std::string &key) override {
    fail(ZT_E_INVALID_ARG, "invalid JSON: the key \"" + printable(key) + "\" appears twice in one object");
  }
  [[noreturn]] void too_deep() override { fail(ZT_E_LIMIT, "JSON nesting deeper than 200 levels"); }

  // Where the next value goes: the root, the end of an array, or the member
  // whose key was just read.
  JValue *slot() {
    if (stack_.empty()) return &root;
    JValue &top = *stack_.back();
    if (top.type == JValue::Type::Array) {
      top.items.emplace_back();
      return &top.items.back();
    }
    return &top.members.back().second;
  }
};

// The narrowest IEEE width holding d exactly.
void put_float(std::string &out, double d) {
  unsigned char buf[9];
  size_t n;
  float f = static_cast<float>(d);
  if (std::isnan(d)) {
    n = cbor_encode_half(NAN, buf, sizeof buf);
  } else if (static_cast<double>(f) == d) {
    n = cbor_encode_half(f, buf, sizeof buf);
    uint16_t h = static_cast<uint16_t>((buf[1] << 8) | buf[2]);
    if (half_to_float(h) != f) n = cbor_encode_single(f, buf, sizeof buf);
  } else {
    n = cbor_encode_double(d, buf, sizeof buf);
  }
  out.append(reinterpret_cast<char *>(buf), n);
}

std::string unhex(const std::string &h) {
  if (h.size() % 2) fail(ZT_E_INVALID_ARG, "JSON $bytes value has an odd number of hex digits");
  std::string out;
  for (size_t i = 0; i < h.size(); i += 2) {
    auto v = [&](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      fail(ZT_E_INVALID_ARG, "JSON $bytes value has a non-hex digit");
    };
    out += static_cast<char>(v(h[i]) * 16 + v(h[i + 1]));
  }
  return out;
}

void put_bigint(std::string &out, const std::string &s) {
  bool neg = !s.empty() && s[0] == '-';
  U128 x;
  size_t i = neg ? 1 : 0;
  if (i >= s.size()) fail(ZT_E_INVALID_ARG, "JSON $bigint is empty");
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') fail(ZT_E_INVALID_ARG, "JSON $bigint is not a decimal integer");
    if (!x.times10_plus(static_cast<unsigned>(s[i] - '0'))) fail(ZT_E_INVALID_ARG, "JSON $bigint beyond 128 bits");
  }
  if (neg) {
    if (x.is_zero()) return cbor::put_uint(out, 0);
    const U128 m = x.minus_one();
    if (m.fits_u64()) return cbor::put_negint(out, m.lo);
    x = m;
  } else if (x.fits_u64()) {
    return cbor::put_uint(out, x.lo);
  }
  std::string b;
  while (!x.is_zero()) {
    b.insert(b.begin(), static_cast<char>(x.low_byte()));
    x = x.shifted_out();
  }
  cbor::put_tag(out, neg ? 3 : 2);
  cbor::put_bytes(out, b);
}

void encode(const JValue &j, std::string &out) {
  switch (j.type) {
    case JValue::Type::Null:
      out += static_cast<char>(0xf6);
      return;
    case JValue::Type::Bool:
      out += static_cast<char>(j.b ? 0xf5 : 0xf4);
      return;
    case JValue::Type::Uint:
      return cbor::put_uint(out, j.u);
    case JValue::Type::Int:
      if (j.i >= 0) return cbor::put_uint(out, static_cast<uint64_t>(j.i));
      return cbor::put_negint(out, static_cast<uint64_t>(-1 - j.i));
    case JValue::Type::Float:
      return put_float(out, j.d);
    case JValue::Type::String:
      return cbor::put_text(out, j.s);
    case JValue::Type::Array:
      cbor::put_array(out, j.items.size());
      for (const auto &e : j.items) encode(e, out);
      return;
    case JValue::Type::Object: {
      // The conventions of cbor_to_json, read back (see json.h).
      if (const JValue *v = j.only("$bytes"); v && v->type == JValue::Type::String)
        return cbor::put_bytes(out, unhex(v->s));
      if (const JValue *v = j.only("$float"); v && v->type == JValue::Type::String) {
        if (v->s == "nan") return put_float(out, NAN);
        if (v->s == "inf") return put_float(out, INFINITY);
        if (v->s == "-inf") return put_float(out, -INFINITY);
        fail(ZT_E_INVALID_ARG, "JSON $float must be \"nan\", \"inf\" or \"-inf\"");
      }
      if (const JValue *v = j.only("$bigint"); v && v->type == JValue::Type::String) return put_bigint(out, v->s);
      if (j.only("$undefined")) {
        out += static_cast<char>(0xf7);
        return;
      }
      if (j.members.size() == 2) {
        const JValue *tag = nullptr, *value = nullptr;
        for (const auto &m : j.members) {
          if (m.first == "$tag") tag = &m.second;
          if (m.first == "$value") value = &m.second;
        }
        if (tag && value && (tag->type == JValue::Type::Uint || (tag->type == JValue::Type::Int && tag->i >= 0))) {
          cbor::put_tag(out, tag->type == JValue::Type::Uint ? tag->u : static_cast<uint64_t>(tag->i));
          return encode(*value, out);
        }
      }
      if (const JValue *v = j.only("$map"); v && v->type == JValue::Type::Array) {
        cbor::put_map(out, v->items.size());
        for (const auto &p : v->items) {
          if (p.type != JValue::Type::Array || p.items.size() != 2)
            fail(ZT_E_INVALID_ARG, "JSON $map entries must be [key, value]");
          encode(p.items[0], out);
          encode(p.items[1], out);
        }
        return;
      }
      cbor::put_map(out, j.members.size());
      for (const auto &m : j.members) {
        cbor::put_text(out, m.first);
        encode(m.second, out);
      }
      return;
    }
  }
}

}  // namespace

void json_escape(std::string &out, std::string_view s) {
  out += '"';
  const bool utf8 = valid_utf8(s.data(), s.size());
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || (!utf8 && c >= 0x80)) {
          char buf[8];
          // Invalid UTF-8 bytes are shown as the code points U+0080..U+00FF.
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

std::string cbor_to_json(const uint8_t *data, size_t size) {
  if (size == 0) return "null";
  cbor::Tree t(data, size, "attributes");
  std::string out;
  emit(t, t.root(), out);
  return out;
}

std::string json_to_cbor(std::string_view json) {
  JsonBuilder b;
  try {
    nlohmann::json::sax_parse(json.begin(), json.end(), &b);
  } catch (const Error &) {
    throw;
  } catch (const std::exception &e) {
    fail(ZT_E_INVALID_ARG, std::string("invalid JSON: ") + e.what());
  }
  std::string out;
  encode(b.root, out);
  return out;
}

void check_cbor_item(const uint8_t *data, size_t size, const char *what) {
  try {
    cbor::ParseOptions opts;
    opts.check_only = true;  // memory follows the widest map, not the item count
    cbor::Tree t(data, size, what, opts);
  } catch (const Error &e) {
    fail(ZT_E_INVALID_ARG, e.what());
  }
}

}  // namespace zt
