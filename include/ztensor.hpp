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
// File and Writer own their handle and are move-only; Object is a borrowed
// view valid while its File is open. ByteView and Span<T> are non-owning
// (pointer, size) views, standing in for std::span before C++20.
#ifndef ZTENSOR_HPP
#define ZTENSOR_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "ztensor.h"

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
  std::string_view format() const noexcept { return info_.format; }
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

  size_t component_index(const std::string &role) const {
    size_t i = 0;
    detail::check(zt_object_component_index(h_, role.c_str(), &i));
    return i;
  }
  bool has_component(const std::string &role) const {
    size_t i = 0;
    return zt_object_component_index(h_, role.c_str(), &i) == ZT_OK;
  }
  ComponentInfo component(size_t index) const {
    zt_component_info c;
    std::memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    detail::check(zt_object_component(h_, index, &c));
    ComponentInfo r;
    r.role = c.role;
    r.dtype = c.dtype;
    r.dtype_name = c.dtype_name;
    if (c.logical_type) r.logical_type = c.logical_type;
    r.ratio = c.ratio;
    r.encoding = c.encoding;
    r.encoding_name = c.encoding_name;
    r.offset = c.offset;
    r.length = c.length;
    r.decoded_length = c.decoded_length;
    r.big_endian = c.big_endian != 0;
    if (c.digest) r.digest = c.digest;
    r.digest_alg = c.digest_alg;
    r.status = c.status;
    return r;
  }
  ComponentInfo component(const std::string &role) const { return component(component_index(role)); }

  // Zero-copy bytes of a raw host-order component of a mapped file; throws
  // Error(ZT_E_NOT_ZERO_COPY) otherwise (use read()).
  ByteView view(size_t index) const {
    const void *p = nullptr;
    size_t n = 0;
    detail::check(zt_component_view(h_, index, &p, &n));
    return {static_cast<const uint8_t *>(p), n};
  }
  ByteView view(const std::string &role) const { return view(component_index(role)); }

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
  std::vector<uint8_t> read(const std::string &role) const { return read(component_index(role)); }

  // Decoded elements as T; the component's dtype must be T's.
  template <typename T>
  std::vector<T> read_as(size_t index) const {
    ComponentInfo c = component(index);
    if (c.dtype != dtype_of<T>::value)
      throw Error(ZT_E_INVALID_ARG,
                  "component '" + c.role + "' is " + c.dtype_name + ", not " + zt_dtype_name(dtype_of<T>::value));
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
  std::vector<T> read_as(const std::string &role) const {
    return read_as<T>(component_index(role));
  }

  // Structure and digests of every component (strictness of the open).
  void verify() const { detail::check(zt_object_verify(h_)); }

 private:
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
  explicit File(const std::string &path, const zt_open_options *opts = nullptr) {
    detail::check(zt_open(path.c_str(), opts, &h_));
  }
  // The buffer is borrowed: keep it valid and unchanged while the File lives.
  static File from_memory(const void *data, size_t size, const zt_open_options *opts = nullptr) {
    zt_file *h = nullptr;
    detail::check(zt_open_memory(data, size, opts, &h));
    return File(h);
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

// A file being written (owning, move-only). Nothing appears at `path` until
// finish(); a Writer destroyed without finish() discards its temporary.
class Writer {
 public:
  explicit Writer(const std::string &path, const zt_writer_options *opts = nullptr) {
    detail::check(zt_writer_create(path.c_str(), opts, &h_));
  }
  Writer(Writer &&o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  Writer &operator=(Writer &&o) noexcept {
    if (this != &o) {
      zt_writer_discard(h_);
      h_ = std::exchange(o.h_, nullptr);
    }
    return *this;
  }
  Writer(const Writer &) = delete;
  Writer &operator=(const Writer &) = delete;
  ~Writer() { zt_writer_discard(h_); }

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
    return add_dense(name, dtype_of<T>::value, shape, values.data(), values.size_bytes(), opts);
  }
  template <typename T>
  Writer &add(std::string_view name, const std::vector<uint64_t> &shape, const std::vector<T> &values,
              const zt_blob_options *opts = nullptr) {
    return add<T>(name, shape, Span<const T>(values.data(), values.size()), opts);
  }
  // std::vector<bool> is packed; it is written as one 0/1 byte per element.
  Writer &add(std::string_view name, const std::vector<uint64_t> &shape, const std::vector<bool> &values,
              const zt_blob_options *opts = nullptr) {
    std::vector<uint8_t> bytes(values.begin(), values.end());
    return add_dense(name, ZT_BOOL, shape, bytes.data(), bytes.size(), opts);
  }
  // The generic path: declare an object of any format, then its components.
  Writer &begin_object(std::string_view name, const std::string &format, const std::vector<uint64_t> &shape) {
    detail::check(zt_writer_begin_object(h_, name.data(), name.size(), format.c_str(), shape.data(), shape.size()));
    return *this;
  }
  Writer &write_blob(std::string_view name, const std::string &role, zt_dtype dtype, const void *data, size_t len,
                     const zt_blob_options *opts = nullptr) {
    detail::check(zt_write_blob(h_, name.data(), name.size(), role.c_str(), dtype, data, len, opts));
    return *this;
  }

  // Writes manifest and footer and renames into place. The handle is gone
  // afterwards whatever the outcome.
  void finish() { detail::check(zt_writer_finish(std::exchange(h_, nullptr))); }
  void discard() { detail::check(zt_writer_discard(std::exchange(h_, nullptr))); }

 private:
  zt_writer *h_ = nullptr;
};

}  // namespace ztensor

#endif  // ZTENSOR_HPP
