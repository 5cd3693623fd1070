// The skeleton every SAX reader of JSON text here shares (the safetensors
// header, a set's shard index, attribute JSON): nlohmann's plain SAX pass,
// which is linear in the text where its callback parser rescans a parent
// object each time a nested one closes; nesting counted; every object's
// keys checked for one that appears twice (a silently dropped value is lost
// data); and the scalar events folded into one. A reader says what the
// events mean in its document through the hooks below.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

#include "util/json_object_keys.h"

namespace zt {

// Offset of the first '[' or '{' that opens nesting level max_depth + 1 of
// the JSON text, or npos: one linear pass, run before nlohmann's parser
// (which keeps state per level) is handed hostile text.
inline size_t json_too_deep_at(std::string_view text, size_t max_depth) {
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return i;
    } else if ((c == ']' || c == '}') && depth) {
      --depth;
    }
  }
  return std::string_view::npos;
}

enum class JsonKind { Null, Bool, Integer, Unsigned, Float, String, Object, Array };

// One scalar value of the text, as its SAX event gave it.
struct JsonScalar {
  JsonKind kind = JsonKind::Null;
  bool boolean = false;
  int64_t integer = 0;
  uint64_t unsigned_integer = 0;
  double real = 0;
  const std::string *float_text = nullptr;  // Float: the number as written
  std::string *string = nullptr;            // String: the value (a reader may move it)
};

// Replays a scalar on another SAX-shaped consumer (nlohmann's DOM builder,
// a text writer) that copies part of the document as it is read.
template <typename Sax>
void replay(const JsonScalar &v, Sax &to) {
  switch (v.kind) {
    case JsonKind::Null:
      to.null();
      break;
    case JsonKind::Bool:
      to.boolean(v.boolean);
      break;
    case JsonKind::Integer:
      to.number_integer(v.integer);
      break;
    case JsonKind::Unsigned:
      to.number_unsigned(v.unsigned_integer);
      break;
    case JsonKind::Float:
      to.number_float(v.real, *v.float_text);
      break;
    case JsonKind::String:
      to.string(*v.string);
      break;
    case JsonKind::Object:
    case JsonKind::Array:
      break;
  }
}

class JsonSaxBase : public nlohmann::json_sax<nlohmann::json> {
 public:
  // max_depth: containers allowed open at once (past it, too_deep()); a
  // reader that pre-scans with json_too_deep_at leaves the default.
  explicit JsonSaxBase(size_t max_depth = std::numeric_limits<size_t>::max()) : max_depth_(max_depth) {}

  bool null() final { return scalar_event(JsonScalar{}); }
  bool boolean(bool v) final {
    JsonScalar s;
    s.kind = JsonKind::Bool;
    s.boolean = v;
    return scalar_event(s);
  }
  bool number_integer(number_integer_t v) final {
    JsonScalar s;
    s.kind = JsonKind::Integer;
    s.integer = v;
    return scalar_event(s);
  }
  bool number_unsigned(number_unsigned_t v) final {
    JsonScalar s;
    s.kind = JsonKind::Unsigned;
    s.unsigned_integer = v;
    return scalar_event(s);
  }
  bool number_float(number_float_t v, const string_t &text) final {
    JsonScalar s;
    s.kind = JsonKind::Float;
    s.real = v;
    s.float_text = &text;
    return scalar_event(s);
  }
  bool string(string_t &v) final {
    JsonScalar s;
    s.kind = JsonKind::String;
    s.string = &v;
    return scalar_event(s);
  }
  // nlohmann's JSON parser never emits this (its CBOR and MessagePack
  // readers do): JSON text has no binary values.
  bool binary(binary_t &) final { throw std::logic_error("a binary value in JSON text"); }
  bool start_object(std::size_t) final {
    if (depth_ >= max_depth_) too_deep();
    keys_.open(check_keys_of_next_object());
    open(JsonKind::Object);
    ++depth_;
    return true;
  }
  bool key(string_t &k) final {
    keys_.add(k);
    on_key(k);
    return true;
  }
  bool end_object() final {
    if (const std::string *dup = keys_.close()) duplicate_key(*dup);
    --depth_;
    close(JsonKind::Object);
    return true;
  }
  bool start_array(std::size_t) final {
    if (depth_ >= max_depth_) too_deep();
    open(JsonKind::Array);
    ++depth_;
    return true;
  }
  bool end_array() final {
    --depth_;
    close(JsonKind::Array);
    return true;
  }

 protected:
  // Containers open around the next event (in close(): around the one that
  // just closed).
  size_t depth() const { return depth_; }

  // A scalar value, at depth().
  virtual void scalar(const JsonScalar &v) = 0;
  // A container starts at depth() (incremented after this returns).
  virtual void open(JsonKind kind) = 0;
  // A container ended; depth() is already the one it stood at.
  virtual void close(JsonKind kind) = 0;
  // A key of the innermost object (already recorded for the repeat check;
  // the reader may move it).
  virtual void on_key(std::string &key) = 0;
  // False for an object whose keys the reader keeps and checks itself
  // (they are then not copied twice).
  virtual bool check_keys_of_next_object() { return true; }
  [[noreturn]] virtual void duplicate_key(const std::string &key) = 0;
  [[noreturn]] virtual void too_deep() { throw std::logic_error("JSON nesting past the reader's limit"); }

 private:
  bool scalar_event(const JsonScalar &v) {
    scalar(v);
    return true;
  }

  const size_t max_depth_;
  size_t depth_ = 0;
  JsonObjectKeys keys_;
};

}  // namespace zt
