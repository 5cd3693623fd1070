// Parsing of a sharded checkpoint's JSON index (a .zt set's, and the
// safetensors index zt convert reads): one SAX pass, O(n log n) in the
// entries, refusing a key that appears twice in any object.
#include "set/shard_index.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "util/error.h"
#include "util/json_sax.h"

namespace zt {
namespace {

using json = nlohmann::json;

constexpr size_t kMaxDepth = 64;

// nlohmann's parser keeps a stack per nesting level: bound the depth before
// handing it hostile text. One linear pass.
void check_depth(std::string_view text, const std::string &what) {
  const size_t at = json_too_deep_at(text, kMaxDepth);
  if (at != std::string_view::npos)
    fail(ZT_E_CBOR_DEPTH, what + ": JSON nests deeper than " + std::to_string(kMaxDepth) + " levels (offset " +
                              std::to_string(at) + ")");
}

// The "metadata" member written back as compact JSON text while it is
// parsed, in document order: no tree of it is ever built (a tree costs
// ~100 bytes per value, and walking a large one was most of the time).
class JsonTextWriter {
 public:
  std::string out;
  void null() { value("null"); }
  void boolean(bool v) { value(v ? "true" : "false"); }
  void number_integer(int64_t v) { value(std::to_string(v)); }
  void number_unsigned(uint64_t v) { value(std::to_string(v)); }
  void number_float(double, const std::string &text) { value(text); }  // as written: no rounding through double
  void string(const std::string &s) {
    comma();
    escape(s);
  }
  void key(const std::string &k) {
    comma();
    escape(k);
    out += ':';
    after_key_ = true;
  }
  void open(char c) {
    comma();
    out += c;
    first_.push_back(true);
  }
  void close(char c) {
    out += c;
    first_.pop_back();
  }

 private:
  void value(const char *text) {
    comma();
    out += text;
  }
  void value(const std::string &text) {
    comma();
    out += text;
  }
  void comma() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (!first_.empty()) {
      if (!first_.back()) out += ',';
      first_.back() = false;
    }
  }
  void escape(const std::string &s) {
    static const char hex[] = "0123456789abcdef";
    out += '"';
    for (unsigned char c : s) {
      if (c == '"' || c == '\\') {
        out += '\\';
        out += static_cast<char>(c);
      } else if (c < 0x20) {
        out += "\\u00";
        out += hex[c >> 4];
        out += hex[c & 15];
      } else {
        out += static_cast<char>(c);  // UTF-8, checked by the parser
      }
    }
    out += '"';
  }
  std::vector<bool> first_;  // per open container: nothing written in it yet
  bool after_key_ = false;
};

// The index read by a plain SAX pass (linear in its size; nlohmann's
// callback parser rescans a parent object each time a nested one closes,
// quadratic in the entries). Only what the set needs is kept: the tensor
// names, one id per distinct shard location, and the "metadata" member as
// JSON text. Every object is checked for a key that appears twice.
class IndexSax : public JsonSaxBase {
 public:
  IndexSax(const std::string &what, size_t max_shards) : what_(what), max_shards_(max_shards) {}

  std::map<std::string, size_t> shard_ids;              // location → provisional id (first appearance)
  std::vector<std::pair<std::string, size_t>> tensors;  // in document order
  std::string metadata_json = "null";
  bool has_weight_map = false;

  bool parse_error(std::size_t pos, const std::string &, const nlohmann::detail::exception &) override {
    fail(ZT_E_MANIFEST,
         what_ + ": the index is not valid JSON (or not UTF-8) at byte " + std::to_string(pos == 0 ? 0 : pos - 1));
  }

 private:
  void scalar(const JsonScalar &v) override {
    begin_value(v.kind);
    if (meta_) replay(v, *meta_);
    if (v.kind == JsonKind::String && depth() == 2 && in_weight_map_) add_tensor(*v.string);
  }
  // weight_map's keys are kept in `tensors` anyway, and checked there.
  bool check_keys_of_next_object() override { return !(depth() == 1 && root_key_ == "weight_map"); }
  void open(JsonKind kind) override {
    begin_value(kind);
    if (meta_) meta_->open(kind == JsonKind::Object ? '{' : '[');
  }
  void on_key(std::string &k) override {
    if (meta_) meta_->key(k);
    if (depth() == 1)
      root_key_ = k;
    else if (depth() == 2 && in_weight_map_)
      tensor_ = std::move(k);
  }
  void close(JsonKind kind) override {
    if (meta_) meta_->close(kind == JsonKind::Object ? '}' : ']');
    if (depth() == 1) {
      if (meta_) metadata_json = std::move(meta_->out);
      meta_.reset();
      in_weight_map_ = false;
    }
  }
  [[noreturn]] void duplicate_key(const std::string &key) override {
    fail(ZT_E_DUPLICATE_KEY, what_ + ": key '" + printable(key) + "' appears twice in one JSON object");
  }

  void begin_value(JsonKind kind) {
    if (depth() == 0) {
      if (kind != JsonKind::Object) fail(ZT_E_MANIFEST, what_ + ": the index is not a JSON object");
    } else if (depth() == 1 && root_key_ == "metadata") {
      if (kind == JsonKind::Null) return;
      if (kind != JsonKind::Object) fail(ZT_E_MANIFEST, what_ + ": \"metadata\" is not a JSON object");
      meta_.reset(new JsonTextWriter());
    } else if (depth() == 1 && root_key_ == "weight_map") {
      if (kind != JsonKind::Object) fail(ZT_E_MANIFEST, what_ + ": \"weight_map\" is not a JSON object");
      in_weight_map_ = has_weight_map = true;
    } else if (depth() == 2 && in_weight_map_ && kind != JsonKind::String) {
      fail(ZT_E_MANIFEST, what_ + ": tensor '" + printable(tensor_) + "': its shard is not a JSON string");
    }
  }
  void add_tensor(const std::string &loc) {
    auto found = shard_ids.find(loc);
    if (found == shard_ids.end()) {
      check_shard_location(loc, what_ + ": tensor '" + printable(tensor_) + "'");
      if (shard_ids.size() >= max_shards_)
        fail(ZT_E_LIMIT, what_ + ": more than " + std::to_string(max_shards_) + " shards");
      found = shard_ids.emplace(loc, shard_ids.size()).first;
    }
    tensors.emplace_back(std::move(tensor_), found->second);
    tensor_.clear();
  }

  const std::string &what_;
  const size_t max_shards_;
  std::string root_key_, tensor_;
  bool in_weight_map_ = false;
  std::unique_ptr<JsonTextWriter> meta_;
};

// A path component as a web server would see it after decoding %XX
// escapes (and IIS's %uXXXX), up to three times (double-encoded
// "%252e%252e" too).
std::string percent_decoded(const std::string &part) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  auto hex4 = [&](const std::string &s, size_t i) -> int {  // s[i..i+3], or -1
    if (i + 4 > s.size()) return -1;
    int v = 0;
    for (size_t k = i; k < i + 4; ++k) {
      if (hex(s[k]) < 0) return -1;
      v = v * 16 + hex(s[k]);
    }
    return v;
  };
  std::string cur = part;
  for (int round = 0; round < 3 && cur.find('%') != std::string::npos; ++round) {
    std::string next;
    for (size_t i = 0; i < cur.size(); ++i) {
      if (cur[i] == '%' && i + 2 < cur.size() && hex(cur[i + 1]) >= 0 && hex(cur[i + 2]) >= 0) {
        next += static_cast<char>(hex(cur[i + 1]) * 16 + hex(cur[i + 2]));
        i += 2;
      } else if (cur[i] == '%' && i + 1 < cur.size() && (cur[i + 1] == 'u' || cur[i + 1] == 'U') &&
                 hex4(cur, i + 2) >= 0) {
        const int cp = hex4(cur, i + 2);  // UTF-8 of a BMP code point
        if (cp < 0x80) {
          next += static_cast<char>(cp);
        } else if (cp < 0x800) {
          next += static_cast<char>(0xC0 | (cp >> 6));
          next += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
          next += static_cast<char>(0xE0 | (cp >> 12));
          next += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
          next += static_cast<char>(0x80 | (cp & 0x3F));
        }
        i += 5;
      } else {
        next += cur[i];
      }
    }
    if (next == cur) break;
    cur = std::move(next);
  }
  return cur;
}

// True when some common server or file system reads the (decoded)
// component as "." or ".." (or "..." as old Windows did): what is left once
//  - a ';' path parameter is cut (Tomcat, Jetty and Spring read "..;x" as
//    ".."), and so is what follows '?' or '#' (the query or fragment);
//  - the byte sequences decoders take for '.' are read as '.' (overlong
//    UTF-8 C0 AE, E0 80 AE, F0 80 80 AE; NFKC-folded U+FF0E, U+FE52, U+2024,
//    and U+2025 "‥", U+2026 "…", which fold to two and three dots);
//  - spaces and other ASCII white space are dropped (Windows and IIS strip
//    trailing ones: ".. " is "..")
// is nothing but dots.
bool read_as_dot_segment(const std::string &decoded) {
  static const char *const kDotForms[] = {"\xC0\xAE",     "\xE0\x80\xAE", "\xF0\x80\x80\xAE", "\xEF\xBC\x8E",
                                          "\xEF\xB9\x92", "\xE2\x80\xA4", "\xE2\x80\xA5",     "\xE2\x80\xA6"};
  std::string v = decoded.substr(0, decoded.find_first_of(";?#"));
  size_t dots = 0;
  for (size_t i = 0; i < v.size();) {
    const char c = v[i];
    if (c == '.') {
      ++dots;
      ++i;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f') {
      ++i;
      continue;
    }
    bool matched = false;
    for (const char *form : kDotForms) {
      const size_t n = std::strlen(form);
      if (v.compare(i, n, form) == 0) {
        ++dots;
        i += n;
        matched = true;
        break;
      }
    }
    if (!matched) return false;
  }
  return dots > 0;
}

}  // namespace

void check_shard_location(const std::string &loc, const std::string &ctx) {
  auto bad = [&](const std::string &why) {
    fail(ZT_E_MANIFEST, ctx + ": shard location '" + printable(loc) + "' " + why +
                            " (rule: shard locations are relative paths inside the index's folder)");
  };
  if (loc.empty()) bad("is empty");
  if (loc.find('\0') != std::string::npos) bad("contains a NUL byte");
  if (loc.find('\\') != std::string::npos) bad("contains a backslash");
  if (loc.front() == '/') bad("is absolute");
  if (loc.find("://") != std::string::npos || loc.find(':') != std::string::npos) bad("has a URL scheme or drive");
  size_t start = 0;
  while (true) {
    const size_t slash = loc.find('/', start);
    const std::string part = loc.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (part.empty()) bad("has an empty path component");
    if (part == "." || part == "..") bad("has a '" + part + "' path component");
    // A remote index's shard is fetched by URL and servers decode %XX
    // before resolving dot segments: "%2e%2e" is ".." to them.
    const std::string dec = part.find('%') != std::string::npos ? percent_decoded(part) : part;
    if (dec != part) {
      if (dec == "." || dec == "..") bad("has a percent-encoded '" + dec + "' path component");
      if (dec.find_first_of(std::string("/\\\0", 3)) != std::string::npos)
        bad("has a percent-encoded '/', '\\' or NUL");
    }
    // Whatever else some server reads as a parent or current folder:
    // "..;jsessionid=x", "%2e%2e;", ". .", "..?", "%c0%ae%c0%ae", "...".
    if (read_as_dot_segment(dec))
      bad("has a path component '" + printable(part) + "' that web servers or file systems read as '.' or '..'");
    // An empty component once a server cuts the ';' parameter ("a/;x/b"
    // is "a//b" to Tomcat), or the query ("a/?x" is the folder "a/").
    if (dec.front() == ';' || dec.front() == '?' || dec.front() == '#')
      bad("has a path component that is empty once a ';' parameter, query or fragment is cut");
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
}

std::string resolve_shard_location(const std::string &index_location, const std::string &shard) {
  const size_t slash = index_location.rfind('/');
  if (slash == std::string::npos) return shard;
  return index_location.substr(0, slash + 1) + shard;
}

ShardIndex parse_shard_index(std::string_view text, const std::string &what, size_t max_shards) {
  check_depth(text, what);
  IndexSax sax(what, max_shards);
  json::sax_parse(text.begin(), text.end(), &sax);
  if (!sax.has_weight_map) fail(ZT_E_MANIFEST, what + ": \"weight_map\" is missing");
  ShardIndex idx;
  idx.metadata_json = std::move(sax.metadata_json);
  std::map<std::string, size_t> &shard_ids = sax.shard_ids;
  std::vector<std::pair<std::string, size_t>> tensors = std::move(sax.tensors);
  // Sorted by name; a tensor listed twice must not quietly lose one shard.
  std::sort(tensors.begin(), tensors.end());
  for (size_t i = 1; i < tensors.size(); ++i)
    if (tensors[i - 1].first == tensors[i].first)
      fail(ZT_E_DUPLICATE_KEY,
           what + ": key '" + printable(tensors[i].first) + "' appears twice in one JSON object (weight_map)");
  // Number the shards in sorted order of their locations.
  std::vector<size_t> renumber(shard_ids.size());
  for (const auto &[loc, id] : shard_ids) {
    renumber[id] = idx.shards.size();
    idx.shards.push_back(loc);
  }
  for (auto &t : tensors) t.second = renumber[t.second];
  idx.tensors = std::move(tensors);
  return idx;
}

}  // namespace zt
