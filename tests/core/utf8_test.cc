// util/utf8.h: the one strict UTF-8 decoder (names, roles, CBOR text, the
// zt tool's terminal escapes). Each boundary of RFC 3629 both ways: the
// shortest and longest form of each length, overlong forms, surrogates,
// code points past U+10FFFF, truncated and stray continuation bytes.
#include "util/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace {

size_t seq(const std::string &s, uint32_t &cp) {
  return zt::utf8_sequence(s, 0, cp);
}

TEST(Utf8, SequenceLengthsAndCodePoints) {
  uint32_t cp = 0;
  EXPECT_EQ(seq("A", cp), 1u);
  EXPECT_EQ(cp, 0x41u);
  EXPECT_EQ(seq(std::string(1, '\0'), cp), 1u);
  EXPECT_EQ(cp, 0u);
  EXPECT_EQ(seq("\xc2\x80", cp), 2u);
  EXPECT_EQ(cp, 0x80u);
  EXPECT_EQ(seq("\xdf\xbf", cp), 2u);
  EXPECT_EQ(cp, 0x7ffu);
  EXPECT_EQ(seq("\xe0\xa0\x80", cp), 3u);
  EXPECT_EQ(cp, 0x800u);
  EXPECT_EQ(seq("\xef\xbf\xbf", cp), 3u);
  EXPECT_EQ(cp, 0xffffu);
  EXPECT_EQ(seq("\xf0\x90\x80\x80", cp), 4u);
  EXPECT_EQ(cp, 0x10000u);
  EXPECT_EQ(seq("\xf4\x8f\xbf\xbf", cp), 4u);
  EXPECT_EQ(cp, 0x10ffffu);
}

TEST(Utf8, RejectsWhatRfc3629Forbids) {
  uint32_t cp = 0;
  for (const char *bad : {
           "\x80",                  // stray continuation byte
           "\xc0\xae",              // overlong '.'
           "\xc1\xbf",              // overlong U+007F
           "\xe0\x80\xae",          // overlong '.', three bytes
           "\xe0\x9f\xbf",          // overlong U+07FF
           "\xf0\x80\x80\xae",      // overlong '.', four bytes
           "\xf0\x8f\xbf\xbf",      // overlong U+FFFF
           "\xed\xa0\x80",          // U+D800, a surrogate
           "\xed\xbf\xbf",          // U+DFFF
           "\xf4\x90\x80\x80",      // U+110000
           "\xf8\x88\x80\x80\x80",  // five-byte form
           "\xff",
           "\xc2",      // truncated
           "\xe2\x82",  // truncated
           "\xc2\x41",  // continuation missing
       }) {
    EXPECT_EQ(seq(bad, cp), 0u) << zt::valid_utf8(bad, std::char_traits<char>::length(bad));
    EXPECT_FALSE(zt::valid_utf8(std::string(bad)));
  }
}

TEST(Utf8, ValidatesWholeStringsAndStopsAtTheEnd) {
  EXPECT_TRUE(zt::valid_utf8(std::string()));
  EXPECT_TRUE(zt::valid_utf8(std::string("w\xc3\xa9ight \xe2\x82\xac \xf0\x9f\x98\x80")));
  EXPECT_TRUE(zt::valid_utf8(std::string("a\0b", 3)));
  // The sequence is cut by the length given, not by a NUL: the decoder
  // never reads past n.
  const char euro[] = "\xe2\x82\xac";
  EXPECT_TRUE(zt::valid_utf8(euro, 3));
  EXPECT_FALSE(zt::valid_utf8(euro, 2));
  uint32_t cp = 0;
  EXPECT_EQ(zt::utf8_sequence(std::string_view(euro, 2), 0, cp), 0u);
  EXPECT_EQ(zt::utf8_sequence(std::string_view("xx\xe2\x82\xac", 5), 2, cp), 3u);
  EXPECT_EQ(cp, 0x20acu);
  EXPECT_FALSE(zt::valid_utf8(std::string("ok\xed\xa0\x80ok")));
}

}  // namespace
