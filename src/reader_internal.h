// What the Reader's source files share (reader.cc: opening and reading one
// component; reader_read_many.cc: batched reads; reader_verify.cc:
// verification): the context prefix of their messages.
#pragma once

#include <cstddef>
#include <string>

#include "manifest/model.h"
#include "util/error.h"

namespace zt::reader_detail {

inline constexpr size_t kPieceSize = size_t{8} << 20;

inline std::string ctx_of(const Object &o, const Component &c) {
  return where(o.name, c.role);
}

// What a strict verify says of a 1.2 zstd component read without its
// required uncompressed_length.
inline std::string missing_length_message(const Object &o, const Component &c) {
  return ctx_of(o, c) + ": zstd component has no uncompressed_length, which spec 1.2 requires (read with the size " +
         (c.decoded_known ? "its shape implies" : "its frame records, or by a bounded decode") + ")";
}

// The same prefix, built only when a message (or a codec call) needs it: a
// copy-read of a 10 KiB tensor should not pay for formatting it.
struct LazyCtx {
  const Object &o;
  const Component &c;
  std::string str() const { return ctx_of(o, c); }
};
inline std::string operator+(const LazyCtx &l, const char *s) {
  return l.str() + s;
}

}  // namespace zt::reader_detail
