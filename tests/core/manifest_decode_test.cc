// decode_manifest decodes a 1.x manifest's objects while parsing when
// 'version' comes first, and parses them again afterwards otherwise. Both
// paths must give the same model, damage and messages included, so each
// manifest here is decoded in both key orders and the results compared.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cbor_writer.h"
#include "manifest/decode.h"
#include "manifest/model_json.h"
#include "util/error.h"

using zttest::Cbor;

namespace {

// The objects map of a manifest: valid objects, damaged ones, unknown keys,
// attributes, explicit nulls and (1.1) a logical type spelled as a dtype.
std::string objects_map(bool indefinite) {
  Cbor c;
  if (indefinite)
    c.indef_map();
  else
    c.map(6);
  auto comp = [](Cbor &c, const char *dtype, uint64_t offset, uint64_t length) {
    c.map(4).text("dtype").text(dtype).text("encoding").text("raw");
    c.text("offset").uint(offset).text("length").uint(length);
  };
  c.text("a").map(4).text("shape").shape({2}).text("format").text("dense").text("note").text("kept");
  c.text("components").map(1).text("data");
  comp(c, "f32", 64, 8);
  c.text("bad_dtype").map(3).text("shape").shape({2}).text("format").text("dense");
  c.text("components").map(1).text("data");
  comp(c, "f8_e4m3", 128, 2);
  c.text("no_offset").map(3).text("shape").shape({1}).text("format").text("dense");
  c.text("components").map(1).text("data").map(3).text("dtype").text("u8").text("type").null().text("length").uint(1);
  c.text("overlap").map(4).text("shape").shape({4}).text("format").text("dense").text("attributes");
  c.map(1).text("k").uint(1).text("components").map(1).text("data");
  comp(c, "u8", 66, 4);
  c.text("no_data").map(3).text("shape").shape({1}).text("format").text("dense").text("components").map(0);
  c.text("not_a_map").text("x");
  if (indefinite) c.brk();
  return c.bytes;
}

std::string manifest(const std::string &version, const std::string &objects, bool version_first) {
  Cbor c;
  c.map(3);
  if (version_first) c.text("version").text(version);
  c.text("attributes").map(1).text("file").text("level");
  c.text("objects").raw(objects);
  if (!version_first) c.text("version").text(version);
  return c.bytes;
}

// Each "byte N" in a message becomes "byte #", and the Ns are returned.
std::string without_offsets(const std::string &msg, std::vector<unsigned long> *offsets = nullptr) {
  std::string out;
  size_t i = 0;
  for (size_t at; (at = msg.find("byte ", i)) != std::string::npos;) {
    size_t digits = at + 5, end = digits;
    while (end < msg.size() && msg[end] >= '0' && msg[end] <= '9') ++end;
    out += msg.substr(i, digits - i);
    if (end > digits) {
      out += '#';
      if (offsets) offsets->push_back(std::stoul(msg.substr(digits, end - digits)));
    }
    i = end;
  }
  return out + msg.substr(i);
}

struct Outcome {
  std::string json;      // the model, or the error
  std::string messages;  // every object's and component's error text
};

Outcome decode(const std::string &bytes, bool strict = false) {
  zt::DecodeLimits limits;
  limits.strict = strict;
  Outcome out;
  try {
    zt::Manifest m = zt::decode_manifest(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size(),
                                         zt::Container::V1, 4096, limits, "t.zt");
    out.json = zt::manifest_to_json(m);
    for (const auto &o : m.objects) {
      out.messages += o.name + ": " + std::to_string(o.status) + " " + o.error + "\n";
      for (const auto &c : o.components) out.messages += "  " + std::to_string(c.status) + " " + c.error + "\n";
    }
  } catch (const zt::Error &e) {
    out.json = "error " + std::to_string(e.status()) + ": " + e.what();
  }
  return out;
}

TEST(ManifestDecode, VersionFirstAndVersionLastDecodeAlike) {
  for (const char *version : {"1.2.0", "1.1.0"}) {
    for (bool indefinite : {false, true}) {
      for (bool strict : {false, true}) {
        SCOPED_TRACE(std::string(version) + (indefinite ? " indefinite" : "") + (strict ? " strict" : ""));
        const std::string objects = objects_map(indefinite);
        Outcome early = decode(manifest(version, objects, true), strict);
        Outcome late = decode(manifest(version, objects, false), strict);
        EXPECT_EQ(early.json, late.json);
        EXPECT_EQ(early.messages, late.messages);
        if (!strict) {
          EXPECT_NE(early.json.find("\"not_a_map\""), std::string::npos) << early.json;
          // The damaged objects are damaged, for the same reasons, either way.
          EXPECT_NE(early.messages.find("no_offset: " + std::to_string(ZT_E_FIELD)), std::string::npos)
              << early.messages;
          EXPECT_NE(early.messages.find("not a map"), std::string::npos) << early.messages;
        }
      }
    }
  }
  // 1.1 spelled fp8 as a dtype: readable there, an unknown dtype in 1.2.
  EXPECT_NE(decode(manifest("1.1.0", objects_map(false), true)).messages.find("bad_dtype: 0"), std::string::npos);
  EXPECT_EQ(decode(manifest("1.2.0", objects_map(false), true)).messages.find("bad_dtype: 0"), std::string::npos);
}

TEST(ManifestDecode, RootFaultsWinOverObjectsDecodedEarly) {
  // A non-text object name after decodable ones, a bad version, a duplicate
  // object name: the open fails the same way whichever order the keys have.
  Cbor named;
  named.map(2).text("a").map(0).uint(7).map(0);
  Cbor dup;
  dup.map(2).text("a").map(0).text("a").map(0);
  for (const std::string &objects : {named.bytes, dup.bytes}) {
    Outcome early = decode(manifest("1.2.0", objects, true)), late = decode(manifest("1.2.0", objects, false));
    EXPECT_EQ(early.json.rfind("error ", 0), 0u) << early.json;
    // Only the byte offsets may differ: 'version' moved.
    EXPECT_EQ(without_offsets(early.json), without_offsets(late.json));
  }
  Outcome bad_version = decode(manifest("3.0.0", objects_map(false), true));
  EXPECT_EQ(bad_version.json.rfind("error " + std::to_string(ZT_E_VERSION), 0), 0u) << bad_version.json;
}

// Offsets in messages count from the start of the manifest, self-describe
// tag (3 bytes here) included.
TEST(ManifestDecode, OffsetsCountTheSelfDescribeTag) {
  Cbor named;
  named.map(2).text("a").map(0).uint(7).map(0);
  Cbor dup;
  dup.map(1).text("a").map(2).text("k").uint(1).text("k").uint(2);
  for (const std::string &objects : {named.bytes, dup.bytes}) {
    for (bool version_first : {true, false}) {
      const std::string plain = manifest("1.2.0", objects, version_first);
      const std::string tagged = std::string("\xd9\xd9\xf7", 3) + plain;
      const std::string a = decode(plain).json, b = decode(tagged).json;
      std::vector<unsigned long> oa, ob;
      EXPECT_EQ(without_offsets(a, &oa), without_offsets(b, &ob));
      ASSERT_EQ(oa.size(), 1u) << a;
      ASSERT_EQ(ob.size(), 1u) << b;
      EXPECT_EQ(ob[0], oa[0] + 3) << a << "\n" << b;
    }
  }
}

}  // namespace
