// Unicode Normalization Form C for the v2 writer (spec §3.5, §6.3 rule 5),
// through libutf8proc. The writer refuses a name that is not NFC rather
// than rewriting it: a silently changed name is one the caller can no
// longer find (docs/v2.md, Writing).
#pragma once

#include <string>
#include <string_view>

namespace zt::v2 {

// s must be valid UTF-8. ASCII is NFC and costs one pass.
bool is_nfc(std::string_view s);
// The NFC form of s (valid UTF-8), for messages that suggest it.
std::string to_nfc(std::string_view s);

}  // namespace zt::v2
