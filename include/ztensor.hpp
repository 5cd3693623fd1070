// ztensor.hpp — a header-only C++17 RAII wrapper over the C ABI (ztensor.h).
//
//   ztensor::File f("model.zt");
//   for (ztensor::Object o : f) {
//     std::cout << o.name() << " " << o.format() << "\n";
//     auto w = o.read_as<float>("data");   // decoded, host-order elements
//   }
//
// Failures throw ztensor::Error, carrying the zt_status and the library's
// detail message (fetched on the failing thread, right after the call).
// File, Set and Writer own their handle and are move-only; Object is a
// borrowed view valid while its File (or Set) is open. A handle made by a C
// call the wrapper does not cover (zt_open_url, zt_open_io, ...) is taken
// over with File::adopt / Set::adopt / Writer::adopt, and given back with
// release(). ByteView and Span<T> are non-owning
// (pointer, size) views, standing in for std::span before C++20.
//
// Options are plain structs whose unset (std::nullopt) members keep the
// library's defaults, so a default-constructed OpenOptions, WriterOptions or
// BlobOptions behaves exactly like passing NULL to the C call.
//
// When <dlpack/dlpack.h> is on the include path, Object::to_dlpack() is
// available too.
#ifndef ZTENSOR_HPP
#define ZTENSOR_HPP

#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "ztensor.h"
#include "ztensor_composite.h"
#include "ztensor_set.h"
#if defined(__has_include)
#if __has_include(<dlpack/dlpack.h>)
#include "ztensor_dlpack.h"
#define ZTENSOR_HPP_HAS_DLPACK 1
#endif
#endif

namespace ztensor {

// A failed C call: the status and the detail message of that failure.
class Error : public std::runtime_error {
 public:
  Error(zt_status status, const std::string &message)
      : std::runtime_error(std::string(zt_status_str(status)) + ": " + message), status_(status) {}
  zt_status status() const noexcept { return status_; }

 private:
  zt_status status_;
};

namespace detail {

inline void check(zt_status s) {
  if (s != ZT_OK) throw Error(s, zt_last_error());
}

// A role or format the C writer takes as a C string: one holding a NUL
// would be cut there (written as another role), so it is refused.
inline void check_c_text(const std::string &text, const char *what) {
  if (text.find('\0') != std::string::npos)
    throw Error(ZT_E_INVALID_ARG, std::string(what) + " holds a NUL byte, which the writer cannot store");
}

// Takes ownership of a string the library allocated.
inline std::string take_string(char *p) {
  std::string s(p ? p : "");
  zt_free(p);
  return s;
}

}  // namespace detail

// A non-owning view of contiguous elements (std::span for C++17).
template <typename T>
class Span {
 public:
  using element_type = T;
  using value_type = std::remove_cv_t<T>;
  using iterator = T *;

  constexpr Span() noexcept = default;
  constexpr Span(T *data, size_t size) noexcept : data_(data), size_(size) {}
  template <typename C, typename = decltype(std::declval<C &>().data())>
  constexpr Span(C &c) noexcept : data_(c.data()), size_(c.size()) {}

  constexpr T *data() const noexcept { return data_; }
  constexpr size_t size() const noexcept { return size_; }
  constexpr size_t size_bytes() const noexcept { return size_ * sizeof(T); }
  constexpr bool empty() const noexcept { return size_ == 0; }
  constexpr T &operator[](size_t i) const noexcept { return data_[i]; }
  constexpr iterator begin() const noexcept { return data_; }
  constexpr iterator end() const noexcept { return data_ + size_; }
  constexpr Span subspan(size_t offset, size_t count) const noexcept { return Span(data_ + offset, count); }

 private:
  T *data_ = nullptr;
  size_t size_ = 0;
};

// Read-only bytes: zero-copy views into a mapped file.
using ByteView = Span<const uint8_t>;

// The storage dtype of a C++ element type (for typed reads and writes).
template <typename T>
struct dtype_of;
template <>
struct dtype_of<double> {
  static constexpr zt_dtype value = ZT_F64;
};
template <>
struct dtype_of<float> {
  static constexpr zt_dtype value = ZT_F32;
};
template <>
struct dtype_of<int64_t> {
  static constexpr zt_dtype value = ZT_I64;
};
template <>
struct dtype_of<int32_t> {
  static constexpr zt_dtype value = ZT_I32;
};
template <>
struct dtype_of<int16_t> {
  static constexpr zt_dtype value = ZT_I16;
};
template <>
struct dtype_of<int8_t> {
  static constexpr zt_dtype value = ZT_I8;
};
template <>
struct dtype_of<uint64_t> {
  static constexpr zt_dtype value = ZT_U64;
};
template <>
struct dtype_of<uint32_t> {
  static constexpr zt_dtype value = ZT_U32;
};
template <>
struct dtype_of<uint16_t> {
  static constexpr zt_dtype value = ZT_U16;
};
template <>
struct dtype_of<uint8_t> {
  static constexpr zt_dtype value = ZT_U8;
};
template <>
struct dtype_of<bool> {
  static constexpr zt_dtype value = ZT_BOOL;
};

// 16-bit floats have no standard C++17 type: these hold the raw bits, so
// typed views and writes of f16 / bf16 components are possible. Convert with
// Object::read_f32() or your own code.
struct f16 {
  uint16_t bits;
};
struct bf16 {
  uint16_t bits;
};
static_assert(sizeof(f16) == 2 && sizeof(bf16) == 2, "16-bit float holders must be 2 bytes");
template <>
struct dtype_of<f16> {
  static constexpr zt_dtype value = ZT_F16;
};
template <>
struct dtype_of<bf16> {
  static constexpr zt_dtype value = ZT_BF16;
};
// Complex numbers are the logical types complex64 / complex128 stored as
// interleaved [re, im] f32 / f64 elements.
template <>
struct dtype_of<std::complex<float>> {
  static constexpr zt_dtype value = ZT_F32;
};
template <>
struct dtype_of<std::complex<double>> {
  static constexpr zt_dtype value = ZT_F64;
};

// The logical type a C++ element type is written with (nullptr: none).
template <typename T>
struct logical_type_of {
  static constexpr const char *value = nullptr;
};
template <>
struct logical_type_of<std::complex<float>> {
  static constexpr const char *value = "complex64";
};
template <>
struct logical_type_of<std::complex<double>> {
  static constexpr const char *value = "complex128";
};

namespace detail {

// T is usable as a typed element: a dtype_of specialisation exists.
template <typename T, typename = void>
struct has_dtype : std::false_type {};
template <typename T>
struct has_dtype<T, std::void_t<decltype(dtype_of<T>::value)>> : std::true_type {};

// The element type of a contiguous container (anything with data() and
// size(): std::vector, std::array, Span, ...). Detected through a function
// overload rather than an alias in a partial specialisation: clang treats a
// deleted non-public data() (std::vector<bool>) there as a hard error.
template <typename C>
auto data_pointer_of(int)
    -> decltype(std::declval<const C &>().data(), std::declval<const C &>().size(), std::declval<const C &>().data());
template <typename C>
void data_pointer_of(...);

template <typename C>
using element_of = std::remove_cv_t<std::remove_pointer_t<decltype(data_pointer_of<C>(0))>>;

template <typename C>
struct is_contiguous : std::integral_constant<bool, std::is_pointer_v<decltype(data_pointer_of<C>(0))> &&
                                                        has_dtype<element_of<C>>::value> {};

// Calls call(&ptr, &len) and takes ownership of the bytes the library
// allocated (freed with zt_free).
template <typename F>
std::vector<uint8_t> take_bytes(F &&call) {
  uint8_t *p = nullptr;
  size_t n = 0;
  check(call(&p, &n));
  std::vector<uint8_t> out(p, p + (p ? n : 0));
  zt_free(p);
  return out;
}

inline bool same_logical(const std::optional<std::string> &have, const char *want) {
  if (!want) return !have.has_value();
  return have.has_value() && *have == want;
}

}  // namespace detail

// ---------------------------------------------------------------------------
// Options: std::nullopt keeps the library's default.

enum class Access : uint32_t { Mmap = ZT_ACCESS_MMAP, Pread = ZT_ACCESS_PREAD };

struct OpenOptions {
  Access access = Access::Mmap;
  bool strict = false;                        // refuse at the first invalid object
  uint32_t threads = 0;                       // 0 = number of cores
  std::optional<uint64_t> max_manifest_size;  // library default: 1 GiB
  std::optional<uint64_t> max_decoded_size;   // per component; default 64 GiB
  bool verify_on_read = false;                // check each digest on first read
  bool prefetch = false;                      // most of the file will be read soon:
                                              // read it into the page cache from the open on

  zt_open_options to_c() const {
    zt_open_options o;
    zt_open_options_init(&o);
    o.access = static_cast<uint32_t>(access);
    o.strict = strict ? 1 : 0;
    o.threads = threads;
    o.verify_on_read = verify_on_read ? 1 : 0;
    o.prefetch = prefetch ? 1 : 0;
    if (max_manifest_size) o.max_manifest_size = *max_manifest_size;
    if (max_decoded_size) o.max_decoded_size = *max_decoded_size;
    return o;
  }
};

struct WriterOptions {
  std::optional<zt_digest_alg> digest;        // default for blobs: none
  std::optional<zt_encoding> encoding;        // default: raw
  std::optional<int32_t> zstd_level;          // default: 3
  std::optional<uint32_t> threads;            // zstd workers; 0 = cores
  std::optional<bool> sync;                   // default: fsync on finish
  std::optional<bool> validate;               // default: check composites on finish
  std::optional<bool> verify_before_replace;  // default: off (re-read before rename)
  // Since 1.3: the generation written, 1 (spec 1.2, default) or 2 (zTensor
  // v2; docs/v2.md, Writing). For v2: canonical form (default on), and when
  // off the parts' digest (xxh3 default, sha256, none; `digest` above is 1.2's)
  // and the blob alignment (a multiple of 4096; default 65536).
  std::optional<uint32_t> format;
  std::optional<bool> canonical;
  std::optional<zt_digest_alg> v2_digest;
  std::optional<uint64_t> alignment;

  zt_writer_options to_c() const {
    zt_writer_options o;
    zt_writer_options_init(&o);
    if (digest) o.digest = static_cast<uint32_t>(*digest);
    if (encoding) o.encoding = static_cast<uint32_t>(*encoding);
    if (zstd_level) o.zstd_level = *zstd_level;
    if (threads) o.threads = *threads;
    if (sync) o.sync = *sync ? 1 : 0;
    if (validate) o.validate = *validate ? 1 : 0;
    if (verify_before_replace) o.verify_before_replace = *verify_before_replace ? 1 : 0;
    if (format) o.format = *format;
    if (canonical) o.canonical = *canonical ? 1 : 0;
    if (v2_digest) o.v2_digest = static_cast<uint32_t>(*v2_digest);
    if (alignment) o.alignment = *alignment;
    return o;
  }
};

// Per-blob settings; unset members take the writer's defaults.
struct BlobOptions {
  std::optional<zt_encoding> encoding;
  std::optional<int32_t> zstd_level;
  std::optional<zt_digest_alg> digest;
  std::optional<std::string> logical_type;  // "complex64", "f8_e4m3fn", ...

  static BlobOptions zstd(int32_t level = 3) {
    BlobOptions b;
    b.encoding = ZT_ENCODING_ZSTD;
    b.zstd_level = level;
    return b;
  }
  // The C struct borrows logical_type's characters: use it while *this lives.
  zt_blob_options to_c() const {
    zt_blob_options o;
    zt_blob_options_init(&o);
    if (encoding) o.encoding = static_cast<uint32_t>(*encoding);
    if (zstd_level) o.zstd_level = *zstd_level;
    if (digest) o.digest = static_cast<uint32_t>(*digest);
    if (logical_type) o.logical_type = logical_type->c_str();
    return o;
  }
};

struct MigrateOptions {
  int32_t recompress = 0;               // 0 keep, 1 zstd at zstd_level, -1 raw
  std::optional<int32_t> zstd_level;    // default 3
  std::optional<zt_digest_alg> digest;  // default: keep each component's
  std::optional<bool> sync;

  zt_migrate_options to_c() const {
    zt_migrate_options o;
    zt_migrate_options_init(&o);
    o.recompress = recompress;
    if (zstd_level) o.zstd_level = *zstd_level;
    if (digest) o.digest = static_cast<uint32_t>(*digest);
    if (sync) o.sync = *sync ? 1 : 0;
    return o;
  }
};

// Description of one component; string fields are copied.
struct ComponentInfo {
  std::string role;
  zt_dtype dtype = ZT_DTYPE_UNKNOWN;
  std::string dtype_name;
  std::optional<std::string> logical_type;
  uint32_t ratio = 1;
  zt_encoding encoding = ZT_ENCODING_UNKNOWN;
  std::string encoding_name;
  uint64_t offset = 0;
  uint64_t length = 0;
  uint64_t decoded_length = 0;
  bool big_endian = false;
  std::optional<std::string> digest;
  zt_digest_alg digest_alg = ZT_DIGEST_NONE;
  zt_status status = ZT_OK;
};

// A borrowed object of an open File; valid until that File is closed.
class Object {
 public:
  explicit Object(const zt_object *h) : h_(h) { detail::check(zt_object_get_info(h_, &info_)); }

  const zt_object *handle() const noexcept { return h_; }
  // May contain NUL bytes.
  std::string_view name() const noexcept { return {info_.name, info_.name_len}; }
  // May contain NUL bytes ("dense\0x" is not "dense").
  std::string_view format() const noexcept { return {info_.format, info_.format_len}; }
  Span<const uint64_t> shape() const noexcept { return {info_.shape, info_.ndim}; }
  size_t ndim() const noexcept { return info_.ndim; }
  size_t component_count() const noexcept { return info_.component_count; }
  // ZT_OK, or why the object cannot be read (see error()).
  zt_status status() const noexcept { return info_.status; }
  bool has_attributes() const noexcept { return info_.has_attributes != 0; }

  std::string error() const {
    const char *msg = nullptr;
    detail::check(zt_object_error(h_, &msg));
    return msg;
  }
  uint64_t numel() const {
    uint64_t n = 0;
    detail::check(zt_object_numel(h_, &n));
    return n;
  }
  // JSON text; "null" when the object has none.
  std::string attributes_json() const {
    char *p = nullptr;
    detail::check(zt_object_attributes_json(h_, &p));
    return detail::take_string(p);
  }

  // Roles, like names, may contain NUL bytes: matched by length.
  size_t component_index(std::string_view role) const {
    size_t i = 0;
    detail::check(zt_object_component_index_n(h_, role.data(), role.size(), &i));
    return i;
  }
  bool has_component(std::string_view role) const {
    size_t i = 0;
    return zt_object_component_index_n(h_, role.data(), role.size(), &i) == ZT_OK;
  }
  ComponentInfo component(size_t index) const {
    zt_component_info c;
    std::memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    detail::check(zt_object_component(h_, index, &c));
    ComponentInfo r;
    r.role.assign(c.role, c.role_len);  // the whole role, NULs included
    r.dtype = c.dtype;
    r.dtype_name.assign(c.dtype_name, c.dtype_name_len);
    if (c.logical_type) r.logical_type = std::string(c.logical_type, c.logical_type_len);
    r.ratio = c.ratio;
    r.encoding = c.encoding;
    r.encoding_name.assign(c.encoding_name, c.encoding_name_len);
    r.offset = c.offset;
    r.length = c.length;
    r.decoded_length = c.decoded_length;
    r.big_endian = c.big_endian != 0;
    if (c.digest) r.digest = c.digest;
    r.digest_alg = c.digest_alg;
    r.status = c.status;
    return r;
  }
  ComponentInfo component(std::string_view role) const { return component(component_index(role)); }

  // Zero-copy bytes of a raw host-order component of a mapped file; throws
  // Error(ZT_E_NOT_ZERO_COPY) otherwise (use read()).
  ByteView view(size_t index) const {
    const void *p = nullptr;
    size_t n = 0;
    detail::check(zt_component_view(h_, index, &p, &n));
    return {static_cast<const uint8_t *>(p), n};
  }
  ByteView view(std::string_view role) const { return view(component_index(role)); }
  // view(), and also data a foreign file leaves misaligned for its element
  // type (stored .npz members, ONNX raw_data; zt_component_view_unaligned,
  // 1.3): bytes only, copy elements out with memcpy. view_as<T> never
  // returns such data (its Span<const T> is a typed pointer).
  ByteView view_unaligned(size_t index) const {
    const void *p = nullptr;
    size_t n = 0;
    detail::check(zt_component_view_unaligned(h_, index, &p, &n));
    return {static_cast<const uint8_t *>(p), n};
  }
  ByteView view_unaligned(std::string_view role) const { return view_unaligned(component_index(role)); }

  // Decoded bytes (host-order elements), copied.
  std::vector<uint8_t> read(size_t index) const {
    size_t need = 0;
    zt_status s = zt_component_read(h_, index, nullptr, 0, &need);
    if (s != ZT_OK && s != ZT_E_BUFFER_TOO_SMALL) detail::check(s);
    std::vector<uint8_t> out(need);
    detail::check(zt_component_read(h_, index, out.data(), out.size(), &need));
    out.resize(need);
    return out;
  }
  std::vector<uint8_t> read(std::string_view role) const { return read(component_index(role)); }

  // Decoded elements as T; the component's dtype must be T's.
  template <typename T>
  std::vector<T> read_as(size_t index) const {
    check_element<T>(index);
    std::vector<uint8_t> bytes = read(index);
    if constexpr (std::is_same_v<T, bool>) {
      return std::vector<bool>(bytes.begin(), bytes.end());  // std::vector<bool> is packed: no memcpy
    } else {
      std::vector<T> out(bytes.size() / sizeof(T));
      if (!bytes.empty()) std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
      return out;
    }
  }
  template <typename T>
  std::vector<T> read_as(std::string_view role) const {
    return read_as<T>(component_index(role));
  }

  // Zero-copy typed elements of a raw little-endian component (see view()).
  // T must match the component's dtype and logical type (std::complex<float>
  // for complex64, ztensor::bf16 for bf16, ...). bool has no typed view
  // (a stored byte other than 0/1 is not a valid C++ bool): use uint8_t.
  template <typename T>
  Span<const T> view_as(size_t index) const {
    static_assert(!std::is_same_v<T, bool>, "view bool components as uint8_t");
    if constexpr (std::is_same_v<T, uint8_t>) {
      check_element<T>(index, ZT_BOOL);
    } else {
      check_element<T>(index);
    }
    ByteView b = view(index);
    return {reinterpret_cast<const T *>(b.data()), b.size() / sizeof(T)};
  }
  template <typename T>
  Span<const T> view_as(std::string_view role) const {
    return view_as<T>(component_index(role));
  }

  // Decodes into the caller's buffer; returns the bytes written. Throws
  // Error(ZT_E_BUFFER_TOO_SMALL) when capacity is below the decoded size.
  size_t read_into(size_t index, void *dst, size_t capacity) const {
    size_t n = 0;
    detail::check(zt_component_read(h_, index, dst, capacity, &n));
    return n;
  }

  // Storage elements [first, first + count) of a component, decoded. zstd
  // components are decoded only up to the end of the range.
  std::vector<uint8_t> read_range(size_t index, uint64_t first, uint64_t count) const {
    ComponentInfo c = component(index);
    const size_t esize = zt_dtype_size(c.dtype);
    if (esize == 0) throw Error(ZT_E_DTYPE, "component '" + c.role + "' has an unknown dtype " + c.dtype_name);
    if (count > SIZE_MAX / esize) throw Error(ZT_E_LIMIT, "range of " + std::to_string(count) + " elements");
    std::vector<uint8_t> out(static_cast<size_t>(count) * esize);
    detail::check(zt_component_read_range(h_, index, first, count, out.data(), out.size()));
    return out;
  }
  // Elements [first, first + count) counted in T (complex: whole numbers).
  template <typename T>
  std::vector<T> read_range_as(size_t index, uint64_t first, uint64_t count) const {
    static_assert(!std::is_same_v<T, bool>, "read bool ranges with read_range");
    check_element<T>(index);
    constexpr uint64_t ratio = sizeof(T) / sizeof_storage<T>();
    if (first > UINT64_MAX / ratio || count > UINT64_MAX / ratio)
      throw Error(ZT_E_LIMIT, "range overflows the element count");
    std::vector<T> out(static_cast<size_t>(count));
    detail::check(zt_component_read_range(h_, index, first * ratio, count * ratio, out.data(), out.size() * sizeof(T)));
    return out;
  }

  // An N-d box a[start0:stop0, start1:stop1, ...] of a component (the
  // object's shape for a dense "data" component, else 1-d), row-major.
  // zstd components are decoded only as far as the box's last byte.
  std::vector<uint8_t> read_slice(size_t index, const std::vector<uint64_t> &start,
                                  const std::vector<uint64_t> &stop) const {
    if (start.size() != stop.size())
      throw Error(ZT_E_INVALID_ARG, "read_slice: start has " + std::to_string(start.size()) + " entries, stop " +
                                        std::to_string(stop.size()));
    ComponentInfo c = component(index);
    // The dense "data" component counts logical elements (complex64: one
    // element of two f32); every other component storage elements.
    const bool logical = format() == "dense" && c.role == "data";
    const size_t elem = zt_dtype_size(c.dtype) * (logical && c.ratio ? c.ratio : 1);
    uint64_t count = 1;
    for (size_t d = 0; d < start.size(); ++d) {
      const uint64_t extent = stop[d] >= start[d] ? stop[d] - start[d] : 0;
      if (extent != 0 && count > UINT64_MAX / extent) throw Error(ZT_E_LIMIT, "read_slice: box too large");
      count *= extent;
    }
    if (elem != 0 && count > SIZE_MAX / elem) throw Error(ZT_E_LIMIT, "read_slice: box too large");
    std::vector<uint8_t> out(static_cast<size_t>(count) * elem);
    detail::check(zt_component_read_slice(h_, index, start.size(), start.data(), stop.data(), out.data(), out.size()));
    return out;
  }
  template <typename T>
  std::vector<T> read_slice_as(size_t index, const std::vector<uint64_t> &start,
                               const std::vector<uint64_t> &stop) const {
    static_assert(!std::is_same_v<T, bool>, "read bool slices with read_slice");
    check_element<T>(index);
    std::vector<uint8_t> bytes = read_slice(index, start, stop);
    std::vector<T> out(bytes.size() / sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
    return out;
  }

  // A whole component decoded in pieces the caller sizes, memory bounded
  // whatever the component's size (see zt_component_stream_read).
  class Stream {
   public:
    explicit Stream(zt_component_stream *s) : s_(s) {}
    Stream(Stream &&o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
    Stream &operator=(Stream &&o) noexcept {
      if (this != &o) {
        zt_component_stream_close(s_);
        s_ = std::exchange(o.s_, nullptr);
      }
      return *this;
    }
    Stream(const Stream &) = delete;
    Stream &operator=(const Stream &) = delete;
    ~Stream() { zt_component_stream_close(s_); }
    // Bytes written to dst (whole elements); 0 once everything was read.
    size_t read(void *dst, size_t capacity) {
      size_t n = 0;
      detail::check(zt_component_stream_read(s_, dst, capacity, &n));
      return n;
    }

   private:
    zt_component_stream *s_;
  };
  Stream stream(size_t index) const {
    zt_component_stream *s = nullptr;
    detail::check(zt_component_stream_open(h_, index, &s));
    return Stream(s);
  }
  Stream stream(std::string_view role) const { return stream(component_index(role)); }

  // Every storage element converted to f32 (f16, bf16, fp8 logical types,
  // integers, bool; complex as [re, im] pairs).
  std::vector<float> read_f32(size_t index) const {
    ComponentInfo c = component(index);
    std::vector<uint8_t> bytes = read(index);
    const size_t esize = zt_dtype_size(c.dtype);
    std::vector<float> out(esize ? bytes.size() / esize : 0);
    detail::check(zt_convert_to_f32(c.dtype, c.logical_type ? c.logical_type->c_str() : nullptr, bytes.data(),
                                    bytes.size(), out.data(), out.size()));
    return out;
  }
  std::vector<float> read_f32(std::string_view role) const { return read_f32(component_index(role)); }

  // The attributes' CBOR bytes as stored (borrowed from the File; empty when
  // the object has none).
  ByteView attributes_cbor() const {
    const uint8_t *p = nullptr;
    size_t n = 0;
    detail::check(zt_object_attributes_cbor(h_, &p, &n));
    return {p, p ? n : 0};
  }
  // Manifest fields this library does not know, as a CBOR map.
  std::vector<uint8_t> extra_fields_cbor() const {
    return detail::take_bytes([&](uint8_t **p, size_t *n) { return zt_object_extra_fields_cbor(h_, p, n); });
  }

  // Structure and digests of every component (strictness of the open).
  void verify() const { detail::check(zt_object_verify(h_)); }
  zt_verify_result verify_component(size_t index) const {
    zt_verify_result r = ZT_VERIFY_NO_DIGEST;
    detail::check(zt_component_verify(h_, index, &r));
    return r;
  }
  // The strict structural check of the object's format, without digests.
  void validate() const { detail::check(zt_object_validate(h_)); }

  // --- sparse_csr / sparse_coo ---------------------------------------------
  bool is_sparse() const { return format() == "sparse_csr" || format() == "sparse_coo"; }
  zt_sparse_info sparse_info() const {
    zt_sparse_info i;
    std::memset(&i, 0, sizeof i);
    i.struct_size = sizeof i;
    detail::check(zt_object_sparse_info(h_, &i));
    return i;
  }
  // "indices", "indptr" or "coords" as u64, whatever integer dtype is stored.
  // (Fixed roles of the sparse formats: zt_object_read_index takes a C string.)
  std::vector<uint64_t> read_index(const std::string &role) const {
    size_t count = 0;
    zt_status s = zt_object_read_index(h_, role.c_str(), nullptr, 0, &count);
    if (s != ZT_OK && s != ZT_E_BUFFER_TOO_SMALL) detail::check(s);
    std::vector<uint64_t> out(count);
    detail::check(zt_object_read_index(h_, role.c_str(), out.data(), out.size(), &count));
    out.resize(count);
    return out;
  }
  // The dense bytes of a sparse object (row-major; duplicates: last wins).
  std::vector<uint8_t> densify() const {
    size_t need = 0;
    zt_status s = zt_object_densify(h_, nullptr, 0, &need);
    if (s != ZT_OK && s != ZT_E_BUFFER_TOO_SMALL) detail::check(s);
    std::vector<uint8_t> out(need);
    detail::check(zt_object_densify(h_, out.data(), out.size(), &need));
    return out;
  }
  template <typename T>
  std::vector<T> densify_as() const {
    static_assert(!std::is_same_v<T, bool>, "densify bool values with densify()");
    zt_sparse_info i = sparse_info();
    const std::optional<std::string> lt =
        i.values_logical_type ? std::optional<std::string>(i.values_logical_type) : std::nullopt;
    if (i.values_dtype != dtype_of<T>::value || !detail::same_logical(lt, logical_type_of<T>::value))
      throw Error(ZT_E_INVALID_ARG, "values of '" + std::string(name()) + "' are " + zt_dtype_name_or(i.values_dtype) +
                                        (lt ? " (" + *lt + ")" : "") + ", not the requested element type");
    std::vector<uint8_t> bytes = densify();
    std::vector<T> out(bytes.size() / sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
    return out;
  }

  // --- quantized_group -----------------------------------------------------
  zt_quant_info quant_info() const {
    zt_quant_info i;
    std::memset(&i, 0, sizeof i);
    i.struct_size = sizeof i;
    detail::check(zt_object_quant_info(h_, &i));
    return i;
  }
  // rows x cols f32 values, w = (q - zero) * scale.
  std::vector<float> dequantize() const {
    zt_quant_info i = quant_info();
    if (i.cols != 0 && i.rows > SIZE_MAX / sizeof(float) / i.cols)
      throw Error(ZT_E_LIMIT, "dequantized size of '" + std::string(name()) + "' does not fit in memory");
    std::vector<float> out(static_cast<size_t>(i.rows * i.cols));
    detail::check(zt_object_dequantize(h_, out.data(), out.size()));
    return out;
  }

#ifdef ZTENSOR_HPP_HAS_DLPACK
  // A DLPack tensor of a dense object; the mapping stays alive while it does.
  struct DLPackDeleter {
    void operator()(DLManagedTensor *t) const {
      if (t && t->deleter) t->deleter(t);
    }
  };
  using DLPackTensor = std::unique_ptr<DLManagedTensor, DLPackDeleter>;
  DLPackTensor to_dlpack() const {
    DLManagedTensor *t = nullptr;
    detail::check(zt_object_to_dlpack(h_, &t));
    return DLPackTensor(t);
  }
#endif

 private:
  static std::string zt_dtype_name_or(zt_dtype d) {
    const char *n = zt_dtype_name(d);
    return n ? n : "an unknown dtype";
  }
  // Bytes per storage element of T (complex: of one part).
  template <typename T>
  static constexpr size_t sizeof_storage() {
    if constexpr (std::is_same_v<T, std::complex<float>>) return sizeof(float);
    if constexpr (std::is_same_v<T, std::complex<double>>) return sizeof(double);
    return sizeof(T);
  }
  // Throws unless component `index` holds T (dtype and logical type), or
  // `also` (e.g. bool bytes read as uint8_t).
  template <typename T>
  void check_element(size_t index, zt_dtype also = ZT_DTYPE_UNKNOWN) const {
    ComponentInfo c = component(index);
    const bool dtype_ok = c.dtype == dtype_of<T>::value || (also != ZT_DTYPE_UNKNOWN && c.dtype == also);
    if (!dtype_ok || !detail::same_logical(c.logical_type, logical_type_of<T>::value))
      throw Error(
          ZT_E_INVALID_ARG,
          "component '" + c.role + "' of '" + std::string(name()) + "' is " + c.dtype_name +
              (c.logical_type ? " (" + *c.logical_type + ")" : "") + ", not " + zt_dtype_name_or(dtype_of<T>::value) +
              (logical_type_of<T>::value ? " (" + std::string(logical_type_of<T>::value) + ")" : std::string()));
  }
  const zt_object *h_;
  zt_object_info info_ = make_info();
  static zt_object_info make_info() {
    zt_object_info i;
    std::memset(&i, 0, sizeof i);
    i.struct_size = sizeof i;
    return i;
  }
};

// An open .zt file (owning, move-only). Iterating yields its Objects in
// manifest order.
class File {
 public:
  // No file (is_open() false) until one is assigned.
  File() noexcept = default;
  explicit File(const std::string &path, const zt_open_options *opts = nullptr) {
    detail::check(zt_open(path.c_str(), opts, &h_));
  }
  File(const std::string &path, const OpenOptions &opts) {
    const zt_open_options o = opts.to_c();
    detail::check(zt_open(path.c_str(), &o, &h_));
  }
  // The buffer is borrowed: keep it valid and unchanged while the File lives.
  static File from_memory(const void *data, size_t size, const zt_open_options *opts = nullptr) {
    zt_file *h = nullptr;
    detail::check(zt_open_memory(data, size, opts, &h));
    return File(h);
  }
  static File from_memory(const void *data, size_t size, const OpenOptions &opts) {
    const zt_open_options o = opts.to_c();
    return from_memory(data, size, &o);
  }
  File(File &&o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  File &operator=(File &&o) noexcept {
    if (this != &o) {
      zt_close(h_);
      h_ = std::exchange(o.h_, nullptr);
    }
    return *this;
  }
  File(const File &) = delete;
  File &operator=(const File &) = delete;
  ~File() { zt_close(h_); }

  // Takes ownership of an open handle (nullptr gives an empty File).
  static File adopt(zt_file *h) noexcept { return File(h); }
  // Gives up ownership: the caller closes the handle (zt_close).
  zt_file *release() noexcept { return std::exchange(h_, nullptr); }

  // Closes now (the destructor then does nothing); reports a failure.
  void close() { detail::check(zt_close(std::exchange(h_, nullptr))); }
  bool is_open() const noexcept { return h_ != nullptr; }
  const zt_file *handle() const noexcept { return h_; }

  std::string version() const {
    const char *v = nullptr;
    detail::check(zt_file_version(h_, &v));
    return v;
  }
  size_t size() const {
    size_t n = 0;
    detail::check(zt_file_object_count(h_, &n));
    return n;
  }
  Object at(size_t index) const {
    const zt_object *o = nullptr;
    detail::check(zt_file_object_at(h_, index, &o));
    return Object(o);
  }
  Object operator[](size_t index) const { return at(index); }
  // Throws Error(ZT_E_NOT_FOUND) when absent.
  Object get(std::string_view name) const {
    const zt_object *o = nullptr;
    detail::check(zt_file_object_by_name(h_, name.data(), name.size(), &o));
    return Object(o);
  }
  Object operator[](std::string_view name) const { return get(name); }
  std::optional<Object> find(std::string_view name) const {
    const zt_object *o = nullptr;
    zt_status s = zt_file_object_by_name(h_, name.data(), name.size(), &o);
    if (s == ZT_E_NOT_FOUND) return std::nullopt;
    detail::check(s);
    return Object(o);
  }
  bool contains(std::string_view name) const { return find(name).has_value(); }

  std::string attributes_json() const {
    char *p = nullptr;
    detail::check(zt_file_attributes_json(h_, &p));
    return detail::take_string(p);
  }
  std::string to_json() const {
    char *p = nullptr;
    detail::check(zt_file_to_json(h_, &p));
    return detail::take_string(p);
  }
  // Every object; throws the first failure in manifest order.
  void verify(bool strict = false) const { detail::check(zt_file_verify(h_, strict ? 1 : 0, nullptr, nullptr)); }

  // One failure found by verify_all.
  struct VerifyFailure {
    std::string object;  // "" for a file-level failure
    std::string role;    // "" for an object-level failure
    zt_status status;
    std::string message;
  };
  // Every failure in manifest order (empty: the file is sound).
  std::vector<VerifyFailure> verify_all(bool strict = false) const {
    std::vector<VerifyFailure> out;
    zt_status s = zt_file_verify_n(
        h_, strict ? 1 : 0,
        [](void *user, const char *object, size_t object_len, const char *role, size_t role_len, zt_status status,
           const char *message) {
          // Names and roles by length: either may hold NULs.
          static_cast<std::vector<VerifyFailure> *>(user)->push_back(
              {object ? std::string(object, object_len) : std::string(),
               role ? std::string(role, role_len) : std::string(), status, message ? message : ""});
        },
        &out);
    if (s != ZT_OK && out.empty()) detail::check(s);  // a failure no callback saw (argument, memory)
    return out;
  }

  // The file attributes' CBOR bytes as stored (empty when there are none).
  ByteView attributes_cbor() const {
    const uint8_t *p = nullptr;
    size_t n = 0;
    detail::check(zt_file_attributes_cbor(h_, &p, &n));
    return {p, p ? n : 0};
  }
  // Unknown manifest root fields as a CBOR map (empty when there are none).
  std::vector<uint8_t> extra_fields_cbor() const {
    return detail::take_bytes([&](uint8_t **p, size_t *n) { return zt_file_extra_fields_cbor(h_, p, n); });
  }

  // Object names in manifest order (names may contain NUL bytes).
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    const size_t n = size();
    out.reserve(n);
    for (size_t i = 0; i < n; ++i) out.emplace_back(at(i).name());
    return out;
  }

  // One component to decode into a caller's buffer (see zt_file_read_many).
  struct ReadRequest {
    const zt_object *object = nullptr;
    size_t component = 0;
    void *dst = nullptr;
    size_t capacity = 0;
    size_t out_size = 0;       // out: bytes written, or needed
    zt_status status = ZT_OK;  // out
  };
  // Reads all requests at once, in parallel; each gets its own status. Throws
  // the first failure in array order after all have run, unless
  // throw_on_error is false.
  void read_many(std::vector<ReadRequest> &reqs, bool throw_on_error = true) const {
    std::vector<zt_read_request> c(reqs.size());
    for (size_t i = 0; i < reqs.size(); ++i) {
      c[i].object = reqs[i].object;
      c[i].component = reqs[i].component;
      c[i].dst = reqs[i].dst;
      c[i].dst_capacity = reqs[i].capacity;
    }
    const zt_status s = zt_file_read_many(h_, c.data(), c.size());
    const std::string message = s == ZT_OK ? std::string() : zt_last_error();
    for (size_t i = 0; i < reqs.size(); ++i) {
      reqs[i].out_size = c[i].out_size;
      reqs[i].status = c[i].status;
    }
    if (s != ZT_OK && throw_on_error) throw Error(s, message);
  }
  // Decodes every component of the named objects (all their components, in
  // order), in one parallel batch.
  std::vector<std::vector<uint8_t>> read_all(const std::vector<std::string> &object_names) const {
    std::vector<std::vector<uint8_t>> out;
    std::vector<ReadRequest> reqs;
    for (const std::string &n : object_names) {
      Object o = get(n);
      for (size_t i = 0; i < o.component_count(); ++i) {
        out.emplace_back(static_cast<size_t>(o.component(i).decoded_length));
        reqs.push_back({o.handle(), i, out.back().data(), out.back().size(), 0, ZT_OK});
      }
    }
    read_many(reqs, false);
    for (size_t i = 0; i < reqs.size(); ++i) {
      if (reqs[i].status == ZT_E_BUFFER_TOO_SMALL) {
        // A spec 1.1 zstd component declares no decoded size: read it alone.
        out[i] = Object(reqs[i].object).read(reqs[i].component);
      } else if (reqs[i].status != ZT_OK) {
        // Re-run alone to get this request's own message.
        (void)Object(reqs[i].object).read(reqs[i].component);
        throw Error(reqs[i].status, "reading component " + std::to_string(reqs[i].component));
      } else {
        out[i].resize(reqs[i].out_size);
      }
    }
    return out;
  }

  class iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Object;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = Object;
    iterator(const File *f, size_t i) : f_(f), i_(i) {}
    Object operator*() const { return f_->at(i_); }
    iterator &operator++() {
      ++i_;
      return *this;
    }
    iterator operator++(int) {
      iterator t = *this;
      ++i_;
      return t;
    }
    bool operator==(const iterator &o) const { return f_ == o.f_ && i_ == o.i_; }
    bool operator!=(const iterator &o) const { return !(*this == o); }

   private:
    const File *f_;
    size_t i_;
  };
  iterator begin() const { return iterator(this, 0); }
  iterator end() const { return iterator(this, size()); }

 private:
  explicit File(zt_file *h) : h_(h) {}
  zt_file *h_ = nullptr;
};

// An open sharded set (ztensor_set.h; owning, move-only): one index and its
// shards, whose objects are Objects as a File's are.
class Set {
 public:
  // No set (is_open() false) until one is assigned.
  Set() noexcept = default;
  explicit Set(const std::string &index_path, const zt_open_options *opts = nullptr) {
    detail::check(zt_open_set(index_path.c_str(), opts, &h_));
  }
  Set(Set &&o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  Set &operator=(Set &&o) noexcept {
    if (this != &o) {
      zt_set_close(h_);
      h_ = std::exchange(o.h_, nullptr);
    }
    return *this;
  }
  Set(const Set &) = delete;
  Set &operator=(const Set &) = delete;
  ~Set() { zt_set_close(h_); }

  // Takes ownership of an open handle (zt_open_set_url's, say).
  static Set adopt(zt_set *h) noexcept {
    Set s;
    s.h_ = h;
    return s;
  }
  // Gives up ownership: the caller closes the handle (zt_set_close).
  zt_set *release() noexcept { return std::exchange(h_, nullptr); }
  void close() { detail::check(zt_set_close(std::exchange(h_, nullptr))); }
  bool is_open() const noexcept { return h_ != nullptr; }
  const zt_set *handle() const noexcept { return h_; }

  // Objects of all shards (shards in location order, each in manifest order).
  size_t size() const {
    size_t n = 0;
    detail::check(zt_set_object_count(h_, &n));
    return n;
  }
  Object at(size_t index) const {
    const zt_object *o = nullptr;
    detail::check(zt_set_object_at(h_, index, &o));
    return Object(o);
  }
  // Throws Error(ZT_E_NOT_FOUND) when no shard holds it.
  Object get(std::string_view name) const {
    const zt_object *o = nullptr;
    detail::check(zt_set_object_by_name(h_, name.data(), name.size(), &o));
    return Object(o);
  }
  // The index's "metadata" as compact JSON ("null" when it has none).
  std::string metadata_json() const {
    char *p = nullptr;
    detail::check(zt_set_metadata_json(h_, &p));
    return detail::take_string(p);
  }
  size_t shard_count() const {
    size_t n = 0;
    detail::check(zt_set_shard_count(h_, &n));
    return n;
  }
  // A shard's location as the index writes it.
  std::string shard_location(size_t index) const {
    const char *loc = nullptr;
    detail::check(zt_set_shard_at(h_, index, nullptr, &loc));
    return loc ? loc : "";
  }

 private:
  zt_set *h_ = nullptr;
};

// A file being written (owning, move-only). Nothing appears at `path` until
// finish(); a Writer destroyed without finish() discards its temporary.
class Writer {
 public:
  explicit Writer(const std::string &path, const zt_writer_options *opts = nullptr) {
    detail::check(zt_writer_create(path.c_str(), opts, &h_));
  }
  Writer(const std::string &path, const WriterOptions &opts) {
    const zt_writer_options o = opts.to_c();
    detail::check(zt_writer_create(path.c_str(), &o, &h_));
  }
  // A file built in memory; take it with finish_memory().
  static Writer memory(const WriterOptions &opts = {}) {
    const zt_writer_options o = opts.to_c();
    Writer w;
    detail::check(zt_writer_create_memory(&o, &w.h_));
    return w;
  }
  // A file sent to `sink` in order (sequential writes only); it is complete
  // only when finish() returns. A sink that throws or returns false fails the
  // writer.
  using SinkFn = std::function<bool(const void *data, size_t len)>;
  static Writer to_sink(SinkFn sink, const WriterOptions &opts = {}) {
    const zt_writer_options o = opts.to_c();
    Writer w;
    w.sink_ = std::make_unique<SinkFn>(std::move(sink));
    detail::check(zt_writer_create_callbacks(
        [](void *user, const void *data, size_t len) -> int {
          try {
            return (*static_cast<SinkFn *>(user))(data, len) ? 0 : 1;
          } catch (...) {
            return 2;  // no exception crosses the C library
          }
        },
        w.sink_.get(), &o, &w.h_));
    return w;
  }
  Writer(Writer &&o) noexcept : h_(std::exchange(o.h_, nullptr)), sink_(std::move(o.sink_)) {}
  Writer &operator=(Writer &&o) noexcept {
    if (this != &o) {
      zt_writer_discard(h_);
      h_ = std::exchange(o.h_, nullptr);
      sink_ = std::move(o.sink_);
    }
    return *this;
  }
  Writer(const Writer &) = delete;
  Writer &operator=(const Writer &) = delete;
  ~Writer() { zt_writer_discard(h_); }

  // Takes ownership of a writer handle (nullptr gives an empty Writer,
  // whose destructor does nothing); a Writer destroyed unfinished discards.
  static Writer adopt(zt_writer *h) noexcept {
    Writer w;
    w.h_ = h;
    return w;
  }
  // Gives up ownership: the caller finishes or discards the handle.
  zt_writer *release() noexcept { return std::exchange(h_, nullptr); }
  bool is_open() const noexcept { return h_ != nullptr; }
  zt_writer *handle() const noexcept { return h_; }

  Writer &set_attributes_json(const std::string &json) {
    detail::check(zt_writer_set_attributes_json(h_, json.c_str()));
    return *this;
  }
  Writer &set_object_attributes_json(std::string_view name, const std::string &json) {
    detail::check(zt_writer_set_object_attributes_json(h_, name.data(), name.size(), json.c_str()));
    return *this;
  }
  Writer &add_dense(std::string_view name, zt_dtype dtype, const std::vector<uint64_t> &shape, const void *data,
                    size_t len, const zt_blob_options *opts = nullptr) {
    detail::check(
        zt_writer_add_dense(h_, name.data(), name.size(), dtype, shape.data(), shape.size(), data, len, opts));
    return *this;
  }
  template <typename T>
  Writer &add(std::string_view name, const std::vector<uint64_t> &shape, Span<const T> values,
              const zt_blob_options *opts = nullptr) {
    if (logical_type_of<T>::value && (!opts || !opts->logical_type)) {
      zt_blob_options o;
      if (opts) {
        o = *opts;
      } else {
        zt_blob_options_init(&o);
      }
      o.logical_type = logical_type_of<T>::value;
      return add_dense(name, dtype_of<T>::value, shape, values.data(), values.size_bytes(), &o);
    }
    return add_dense(name, dtype_of<T>::value, shape, values.data(), values.size_bytes(), opts);
  }
  template <typename T>
  Writer &add(std::string_view name, const std::vector<uint64_t> &shape, const std::vector<T> &values,
              const zt_blob_options *opts = nullptr) {
    return add<T>(name, shape, Span<const T>(values.data(), values.size()), opts);
  }
  // Any contiguous container of a typed element (std::vector, std::array,
  // Span, a C array, ...): w.add("a", {2, 3}, std::array<float, 6>{}).
  // std::complex<float> / <double> elements are written as complex64 /
  // complex128 over f32 / f64.
  template <typename C, typename = std::enable_if_t<detail::is_contiguous<C>::value>>
  Writer &add(std::string_view name, const std::vector<uint64_t> &shape, const C &values,
              const BlobOptions &opts = {}) {
    using T = detail::element_of<C>;
    static_assert(!std::is_same_v<T, bool> || sizeof(bool) == 1, "bool must be one byte");
    BlobOptions o = opts;
    if (logical_type_of<T>::value && !o.logical_type) o.logical_type = logical_type_of<T>::value;
    const zt_blob_options c = o.to_c();
    return add_dense(name, dtype_of<T>::value, shape, values.data(), values.size() * sizeof(T), &c);
  }
  template <typename T, size_t N, typename = std::enable_if_t<detail::has_dtype<T>::value>>
  Writer &add(std::string_view name, const std::vector<uint64_t> &shape, const T (&values)[N],
              const BlobOptions &opts = {}) {
    return add(name, shape, Span<const T>(values, N), opts);
  }
  Writer &add_dense(std::string_view name, zt_dtype dtype, const std::vector<uint64_t> &shape, const void *data,
                    size_t len, const BlobOptions &opts) {
    const zt_blob_options c = opts.to_c();
    return add_dense(name, dtype, shape, data, len, &c);
  }
  // std::vector<bool> is packed; it is written as one 0/1 byte per element.
  Writer &add(std::string_view name, const std::vector<uint64_t> &shape, const std::vector<bool> &values,
              const zt_blob_options *opts = nullptr) {
    std::vector<uint8_t> bytes(values.begin(), values.end());
    return add_dense(name, ZT_BOOL, shape, bytes.data(), bytes.size(), opts);
  }
  // The generic path: declare an object of any format, then its components.
  Writer &begin_object(std::string_view name, const std::string &format, const std::vector<uint64_t> &shape) {
    detail::check_c_text(format, "format");
    detail::check(zt_writer_begin_object(h_, name.data(), name.size(), format.c_str(), shape.data(), shape.size()));
    return *this;
  }
  Writer &write_blob(std::string_view name, const std::string &role, zt_dtype dtype, const void *data, size_t len,
                     const zt_blob_options *opts = nullptr) {
    detail::check_c_text(role, "role");
    detail::check(zt_write_blob(h_, name.data(), name.size(), role.c_str(), dtype, data, len, opts));
    return *this;
  }

  Writer &write_blob(std::string_view name, const std::string &role, zt_dtype dtype, const void *data, size_t len,
                     const BlobOptions &opts) {
    const zt_blob_options c = opts.to_c();
    return write_blob(name, role, dtype, data, len, &c);
  }

  // Streaming: one component in pieces (memory bounded by one piece); only
  // one blob may be open at a time. The logical type in opts must outlive
  // begin_blob only (it is copied).
  Writer &begin_blob(std::string_view name, const std::string &role, zt_dtype dtype, const BlobOptions &opts = {}) {
    detail::check_c_text(role, "role");
    const zt_blob_options c = opts.to_c();
    detail::check(zt_write_blob_begin(h_, name.data(), name.size(), role.c_str(), dtype, &c));
    return *this;
  }
  Writer &append(const void *data, size_t len) {
    detail::check(zt_write_blob_append(h_, data, len));
    return *this;
  }
  template <typename C, typename = std::enable_if_t<detail::is_contiguous<C>::value>>
  Writer &append(const C &values) {
    return append(values.data(), values.size() * sizeof(detail::element_of<C>));
  }
  Writer &end_blob() {
    detail::check(zt_write_blob_end(h_));
    return *this;
  }

  // Attributes as CBOR bytes (one map item).
  Writer &set_attributes_cbor(const void *cbor, size_t len) {
    detail::check(zt_writer_set_attributes_cbor(h_, static_cast<const uint8_t *>(cbor), len));
    return *this;
  }

  // sparse_csr [rows, cols]: values (nnz of T), indices[nnz], indptr[rows+1].
  template <typename T>
  Writer &add_csr(std::string_view name, uint64_t rows, uint64_t cols, const std::vector<T> &values,
                  const std::vector<uint64_t> &indices, const std::vector<uint64_t> &indptr,
                  const BlobOptions &opts = {}) {
    if (indices.size() != values.size())
      throw Error(ZT_E_INVALID_ARG, "add_csr '" + std::string(name) + "': " + std::to_string(values.size()) +
                                        " values but " + std::to_string(indices.size()) + " indices");
    if (indptr.size() != rows + 1)
      throw Error(ZT_E_INVALID_ARG, "add_csr '" + std::string(name) + "': indptr needs rows + 1 = " +
                                        std::to_string(rows + 1) + " entries, got " + std::to_string(indptr.size()));
    BlobOptions o = with_logical<T>(opts);
    const zt_blob_options c = o.to_c();
    detail::check(zt_writer_add_csr(h_, name.data(), name.size(), rows, cols, dtype_of<T>::value, values.data(),
                                    values.size(), indices.data(), indptr.data(), &c));
    return *this;
  }
  // sparse_coo: values (nnz of T), coords[ndim * nnz] (one row per dimension).
  template <typename T>
  Writer &add_coo(std::string_view name, const std::vector<uint64_t> &shape, const std::vector<T> &values,
                  const std::vector<uint64_t> &coords, const BlobOptions &opts = {}) {
    if (coords.size() != shape.size() * values.size())
      throw Error(ZT_E_INVALID_ARG, "add_coo '" + std::string(name) +
                                        "': coords needs ndim * nnz = " + std::to_string(shape.size() * values.size()) +
                                        " entries, got " + std::to_string(coords.size()));
    BlobOptions o = with_logical<T>(opts);
    const zt_blob_options c = o.to_c();
    detail::check(zt_writer_add_coo(h_, name.data(), name.size(), shape.data(), shape.size(), dtype_of<T>::value,
                                    values.data(), values.size(), coords.data(), &c));
    return *this;
  }
  // quantized_group: see zt_quant_params (initialise with zt_quant_params_init).
  Writer &add_quantized_group(std::string_view name, const std::vector<uint64_t> &shape, const zt_quant_params &params,
                              const BlobOptions &opts = {}) {
    const zt_blob_options c = opts.to_c();
    detail::check(zt_writer_add_quantized_group(h_, name.data(), name.size(), shape.data(), shape.size(), &params, &c));
    return *this;
  }

  // Copies an object of an open file (verified first); new_name keeps the
  // object's own name when empty.
  Writer &copy_object(const Object &obj, std::optional<std::string_view> new_name = std::nullopt) {
    detail::check(zt_writer_copy_object(h_, obj.handle(), new_name ? new_name->data() : nullptr,
                                        new_name ? new_name->size() : 0));
    return *this;
  }
  // File attributes and unknown root fields: the union of those files'.
  Writer &copy_file_fields(const std::vector<const File *> &files) {
    std::vector<const zt_file *> handles;
    for (const File *f : files) handles.push_back(f->handle());
    detail::check(zt_writer_copy_file_fields(h_, handles.data(), handles.size()));
    return *this;
  }

  // Writes manifest and footer and renames into place. The handle is gone
  // afterwards whatever the outcome.
  void finish() { detail::check(zt_writer_finish(std::exchange(h_, nullptr))); }
  // Finishes a memory writer and hands over the file's bytes.
  std::vector<uint8_t> finish_memory() {
    return detail::take_bytes(
        [&](uint8_t **p, size_t *n) { return zt_writer_finish_memory(std::exchange(h_, nullptr), p, n); });
  }
  void discard() { detail::check(zt_writer_discard(std::exchange(h_, nullptr))); }

 private:
  template <typename T>
  static BlobOptions with_logical(const BlobOptions &opts) {
    BlobOptions o = opts;
    if (logical_type_of<T>::value && !o.logical_type) o.logical_type = logical_type_of<T>::value;
    return o;
  }
  Writer() = default;
  zt_writer *h_ = nullptr;
  std::unique_ptr<SinkFn> sink_;  // to_sink's callback; outlives the handle
};

// Rewrites any readable file as spec 1.2.0 at out_path (atomically).
inline void migrate(const std::string &in_path, const std::string &out_path, const MigrateOptions &opts = {}) {
  const zt_migrate_options o = opts.to_c();
  detail::check(zt_migrate(in_path.c_str(), out_path.c_str(), &o));
}

// The version of the libztensor actually loaded ("1.1.0").
inline std::string library_version() {
  return zt_version_string();
}

}  // namespace ztensor

#endif  // ZTENSOR_HPP
