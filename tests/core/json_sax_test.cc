// util/json_sax.h: the nesting pre-scan and the SAX skeleton shared by the
// safetensors header, the shard index and attribute JSON readers.
#include "util/json_sax.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

TEST(JsonTooDeepAt, CountsBracketsOutsideStrings) {
  EXPECT_EQ(zt::json_too_deep_at("[[1]]", 2), std::string_view::npos);
  EXPECT_EQ(zt::json_too_deep_at("[[1]]", 1), 1u);
  EXPECT_EQ(zt::json_too_deep_at("{\"a\":[{}]}", 2), 6u);
  // Brackets inside strings, escaped quotes included, do not count.
  EXPECT_EQ(zt::json_too_deep_at("[\"[[[\\\"[[\"]", 1), std::string_view::npos);
  // Closing brings the depth back down: siblings are not nesting.
  EXPECT_EQ(zt::json_too_deep_at("[[],[],[]]", 2), std::string_view::npos);
  EXPECT_EQ(zt::json_too_deep_at(std::string(100, '['), 64), 64u);
}

// Records the events in order, as a reader would see them.
class Recorder : public zt::JsonSaxBase {
 public:
  explicit Recorder(size_t max_depth = 1000) : JsonSaxBase(max_depth) {}
  std::vector<std::string> events;
  bool skip_root_keys = false;

  bool parse_error(std::size_t pos, const std::string &, const nlohmann::detail::exception &) override {
    throw std::runtime_error("parse error at " + std::to_string(pos));
  }

 private:
  void scalar(const zt::JsonScalar &v) override {
    std::string e = "d" + std::to_string(depth()) + ":";
    switch (v.kind) {
      case zt::JsonKind::Null:
        e += "null";
        break;
      case zt::JsonKind::Bool:
        e += v.boolean ? "true" : "false";
        break;
      case zt::JsonKind::Integer:
        e += "i" + std::to_string(v.integer);
        break;
      case zt::JsonKind::Unsigned:
        e += "u" + std::to_string(v.unsigned_integer);
        break;
      case zt::JsonKind::Float:
        e += "f" + *v.float_text;
        break;
      case zt::JsonKind::String:
        e += "s" + *v.string;
        break;
      default:
        e += "?";
    }
    events.push_back(e);
  }
  void open(zt::JsonKind k) override {
    events.push_back("d" + std::to_string(depth()) + (k == zt::JsonKind::Object ? ":{" : ":["));
  }
  void close(zt::JsonKind k) override {
    events.push_back("d" + std::to_string(depth()) + (k == zt::JsonKind::Object ? ":}" : ":]"));
  }
  void on_key(std::string &k) override { events.push_back("k" + k); }
  bool check_keys_of_next_object() override { return !(skip_root_keys && depth() == 0); }
  [[noreturn]] void duplicate_key(const std::string &key) override { throw std::runtime_error("dup " + key); }
  [[noreturn]] void too_deep() override { throw std::runtime_error("deep"); }
};

TEST(JsonSaxBase, EventsWithDepthsAndScalarsAsWritten) {
  Recorder r;
  const std::string text = R"({"a":[null,true,-3,7,1.50,"x"],"b":{}})";
  nlohmann::json::sax_parse(text, &r);
  const std::vector<std::string> want = {"d0:{",     "ka",    "d1:[", "d2:null", "d2:true", "d2:i-3", "d2:u7",
                                         "d2:f1.50", "d2:sx", "d1:]", "kb",      "d1:{",    "d1:}",   "d0:}"};
  EXPECT_EQ(r.events, want);
}

TEST(JsonSaxBase, RefusesARepeatedKeyInAnyObject) {
  Recorder r;
  try {
    nlohmann::json::sax_parse(std::string(R"({"a":{"x":1,"y":2,"x":3}})"), &r);
    FAIL() << "no error";
  } catch (const std::runtime_error &e) {
    EXPECT_STREQ(e.what(), "dup x");
  }
  // The same key in two objects is not a repeat.
  Recorder ok;
  EXPECT_NO_THROW(nlohmann::json::sax_parse(std::string(R"({"a":{"x":1},"b":{"x":1}})"), &ok));
  // An object whose keys the reader checks itself is skipped.
  Recorder skip;
  skip.skip_root_keys = true;
  EXPECT_NO_THROW(nlohmann::json::sax_parse(std::string(R"({"a":1,"a":2})"), &skip));
}

TEST(JsonSaxBase, StopsPastItsDepthLimit) {
  Recorder r(3);
  EXPECT_NO_THROW(nlohmann::json::sax_parse(std::string("[[[1]]]"), &r));
  Recorder deep(3);
  try {
    nlohmann::json::sax_parse(std::string("[[[[1]]]]"), &deep);
    FAIL() << "no error";
  } catch (const std::runtime_error &e) {
    EXPECT_STREQ(e.what(), "deep");
  }
  Recorder deep_object(3);
  EXPECT_THROW(nlohmann::json::sax_parse(std::string(R"({"a":{"b":[{}]}})"), &deep_object), std::runtime_error);
}

}  // namespace
