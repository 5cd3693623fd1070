// Versioned structs (docs/versioning.md): every public options and info
// struct starts with `uint32_t struct_size`, the size of the struct the
// caller was compiled with. A field appended in a later release is read
// from, or written into, only a caller's struct that includes it. These are
// the one way the C ABI asks that question, fills a struct in *_init, and
// serves callers built against an older, smaller version of a struct.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "util/error.h"

namespace zt::capi {

template <typename P>
using pointee_t = std::remove_cv_t<std::remove_pointer_t<P>>;

}  // namespace zt::capi

// The size of struct T up to and including field F: the struct_size of the
// release that appended F.
#define ZT_SIZE_THROUGH(T, F) (offsetof(T, F) + sizeof(static_cast<T *>(nullptr)->F))

// Whether the caller's struct *p (by its struct_size) includes field F.
#define ZT_HAS_FIELD(p, F) ((p)->struct_size >= ZT_SIZE_THROUGH(::zt::capi::pointee_t<decltype(p)>, F))

namespace zt::capi {

// The common start of every *_init: the struct zeroed and struct_size set
// to the size this library knows. False (nothing done) for NULL.
template <typename T>
bool init_struct(T *o) {
  if (!o) return false;
  std::memset(o, 0, sizeof *o);
  o->struct_size = sizeof *o;
  return true;
}

// The body of an init kept for callers built against an older, smaller
// version of a struct_size struct: fills the current struct with `init`
// and hands over only its first `old_size` bytes, struct_size saying so.
template <typename T>
void init_older_struct(T *o, size_t old_size, void (*init)(T *)) {
  if (!o) return;
  T full;
  init(&full);
  full.struct_size = static_cast<uint32_t>(old_size);
  std::memcpy(o, &full, old_size);
}

// The caller's struct over this library's defaults (`init`): the fields an
// older caller's struct lacks keep them, and struct_size becomes ours.
template <typename T>
T current_struct(const T &caller, void (*init)(T *)) {
  T out;
  init(&out);
  std::memcpy(&out, &caller, std::min<size_t>(caller.struct_size, sizeof out));
  out.struct_size = sizeof out;
  return out;
}

// An out-struct the library fills: `out` must be non-NULL and its
// struct_size at least `min_size` (the fields of the first release).
template <typename T>
void check_out_struct(const T *out, const char *fn, size_t min_size = sizeof(T)) {
  if (!out) fail(ZT_E_INVALID_ARG, std::string(fn) + ": out is NULL");
  if (out->struct_size < min_size)
    fail(ZT_E_INVALID_ARG, std::string(fn) + ": out->struct_size must be set to sizeof the struct");
}

}  // namespace zt::capi
