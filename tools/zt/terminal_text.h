// Strings taken from a file (object names, component roles, dtype and
// encoding names, attribute keys, foreign tensor names) as they may be
// printed to a terminal. A hostile file must not be able to move the cursor,
// retitle the window, rewrite earlier lines or hide text: control characters
// become visible escapes, as the library's own messages show them.
#pragma once

#include <string>
#include <string_view>

namespace ztcli {

// `s` with every C0 control (U+0000..U+001F, including ESC, BEL, CR, LF,
// TAB), DEL and every byte that is not part of valid UTF-8 written as \xNN,
// and every C1 control (U+0080..U+009F, which terminals also obey, e.g.
// U+009B = CSI) as \u00NN. Everything else, including valid multi-byte
// UTF-8, is kept.
std::string shown(std::string_view s);
inline std::string shown(const char *s) {
  return shown(std::string_view(s ? s : ""));
}

}  // namespace ztcli
