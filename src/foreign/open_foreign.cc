#include "foreign/open_foreign.h"

#ifdef _WIN32
#include <windows.h>
#else
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <string>

#include "foreign/foreign.h"
#include "types/dtype.h"
#include "util/error.h"
#ifndef _WIN32
#include "util/regular_file.h"
#endif

namespace zt {
namespace {

constexpr uint64_t kAlign = 64;  // where each decoded tensor starts in memory

// Anonymous memory holding decoded tensors: the source of a file whose
// tensors are not all in place. Page-aligned, read-only once filled.
class DecodedSource final : public Source {
 public:
  DecodedSource(const std::string &path, uint64_t size) {
    path_ = path;
    size_ = size;
    if (size == 0) return;
#ifdef _WIN32
    void *p = ::VirtualAlloc(nullptr, static_cast<size_t>(size), MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
    if (!p)
#else
    void *p = ::mmap(nullptr, static_cast<size_t>(size), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
#endif
      fail(ZT_E_NOMEM, "'" + path + "': cannot allocate " + std::to_string(size) + " bytes for its decoded tensors");
    base_ = static_cast<uint8_t *>(p);
    data_ = base_;
  }
  ~DecodedSource() override {
#ifdef _WIN32
    if (base_) ::VirtualFree(base_, 0, MEM_RELEASE);
#else
    if (base_) ::munmap(base_, static_cast<size_t>(size_));
#endif
  }
  uint8_t *writable() {
    return base_;
  }
  void seal() {
#ifdef _WIN32
    DWORD old;
    if (base_) ::VirtualProtect(base_, static_cast<size_t>(size_), PAGE_READONLY, &old);
#else
    if (base_) ::mprotect(base_, static_cast<size_t>(size_), PROT_READ);
#endif
  }
  void read(uint64_t offset, size_t len, void *dst) const override {
    std::memcpy(dst, base_ + offset, len);
  }

 private:
  uint8_t *base_ = nullptr;
};

// A read-only private map of a file opened for pread, only while parsing.
struct ParseMap {
  void *addr = nullptr;
  size_t size = 0;
#ifdef _WIN32
  std::string copy;  // Windows: the file read whole instead (see open_foreign)
#else
  ~ParseMap() {
    if (addr) ::munmap(addr, size);
  }
#endif
};

Object object_of(const ztimport::Tensor &t, uint64_t offset) {
  Object o;
  o.name = t.name;
  o.shape = Shape(t.shape.begin(), t.shape.end());
  o.has_format = true;
  o.format = t.format;
  if (!t.attributes.empty()) {
    const ztimport::CborItem map = ztimport::cbor_map(t.attributes);
    o.has_attributes = true;
    o.attributes.assign(map.begin(), map.end());
  }
  o.numel = shape_numel(o.shape).value_or(0);
  Component c;
  c.role = "data";
  c.dtype = t.dtype;
  c.dtype_name = dtype_name(t.dtype);
  if (!t.logical_type.empty()) {
    c.has_type = true;
    c.logical_type = t.logical_type;
    c.ratio = logical_ratio(t.logical_type);
  }
  c.offset = offset;
  c.length = t.nbytes;
  c.decoded_length = t.nbytes;
  c.big_endian = t.big_endian;
  o.components.push_back(std::move(c));
  return o;
}

bool ends_with(const std::string &s, const char *suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

// By content first; a file too damaged to show its format (a truncated
// safetensors header) still goes to its parser by extension, whose message
// then names what is wrong — unless it starts like a .zt file.
ztimport::Kind kind_of(const uint8_t *head, size_t n, const Source &src) {
  const ztimport::Kind kind = ztimport::detect(head, n, src.size());
  if (kind != ztimport::Kind::None || (n >= 4 && std::memcmp(head, "ZTEN", 4) == 0)) return kind;
  const std::string &p = src.path();
  if (ends_with(p, ".safetensors")) return ztimport::Kind::Safetensors;
  if (ends_with(p, ".npy")) return ztimport::Kind::Npy;
  if (ends_with(p, ".npz")) return ztimport::Kind::Npz;
  if (ends_with(p, ".gguf")) return ztimport::Kind::Gguf;
  return ztimport::Kind::None;
}

}  // namespace

const char *foreign_format(const Source &src) {
  std::vector<uint8_t> scratch;
  const size_t n = static_cast<size_t>(std::min<uint64_t>(src.size(), 16));
  const uint8_t *head = src.read_meta(0, n, scratch);
  const ztimport::Kind kind = kind_of(head, n, src);
  return kind == ztimport::Kind::None ? nullptr : ztimport::kind_name(kind);
}

ForeignFile open_foreign(std::unique_ptr<Source> src, const ForeignLimits &limits) {
  const std::string &path = src->path();
  std::vector<uint8_t> scratch;
  const size_t head_n = static_cast<size_t>(std::min<uint64_t>(src->size(), 16));
  const uint8_t *head = src->read_meta(0, head_n, scratch);
  const ztimport::Kind kind = kind_of(head, head_n, *src);
  if (kind == ztimport::Kind::None) fail(ZT_E_FORMAT, "'" + path + "': not a foreign tensor file");

  // The parsers read a whole buffer: the source's map, or (pread access) a
  // read-only map made for the parse alone (not counted as the process's
  // data, so --max-memory style limits are not spent on it).
  ParseMap pm;
  const uint8_t *bytes = src->data();
  if (!bytes && src->size() > 0) {  // a file opened for pread: sources without a map are not offered
    if (src->size() > std::numeric_limits<size_t>::max())
      fail(ZT_E_LIMIT, "'" + path + "': a foreign file of " + std::to_string(src->size()) +
                           " bytes is larger than this " + std::to_string(8 * sizeof(size_t)) +
                           "-bit process can map for parsing");
#ifdef _WIN32
    // Read through the source itself: the same handle, so no second open
    // that a replaced file could slip into.
    pm.copy.resize(static_cast<size_t>(src->size()));
    src->read(0, pm.copy.size(), &pm.copy[0]);
    bytes = reinterpret_cast<const uint8_t *>(pm.copy.data());
#else
    struct stat st;
    const char *what = nullptr;
    const int fd = open_regular_file(AT_FDCWD, path.c_str(), 0, &st, &what);
    if (fd < 0 && what) fail(ZT_E_IO, "'" + path + "' is " + what + ", not a regular file");
    if (fd < 0) fail(ZT_E_IO, "cannot open '" + path + "': " + std::strerror(errno));
    if (static_cast<uint64_t>(st.st_size) != src->size()) {
      // Replaced since it was opened: a map of the new file could end
      // before the bytes the parse reads (SIGBUS).
      ::close(fd);
      fail(ZT_E_CHANGED, "'" + path + "' changed size while being opened (" + std::to_string(src->size()) + " -> " +
                             std::to_string(st.st_size) + " bytes)");
    }
    pm.size = static_cast<size_t>(src->size());
    void *a = ::mmap(nullptr, pm.size, PROT_READ, MAP_PRIVATE, fd, 0);
    const int e = errno;
    ::close(fd);
    if (a == MAP_FAILED) fail(ZT_E_IO, "cannot map '" + path + "': " + std::strerror(e));
    pm.addr = a;
    bytes = static_cast<const uint8_t *>(a);
#endif
  }
  static const uint8_t kEmpty = 0;
  if (!bytes) bytes = &kEmpty;

  ztimport::Limits il;
  il.max_header = std::min(il.max_header, limits.max_header);
  il.max_member = std::min(il.max_member, limits.max_decoded_size);
  ztimport::Imported imp;
  try {
    imp = ztimport::import_buffer(kind, bytes, static_cast<size_t>(src->size()), "'" + path + "'",
                                  ztimport::stem_of(path), il);
  } catch (const ztimport::InputError &e) {
    fail(ZT_E_FORMAT, e.what());
  }

  ForeignFile ff;
  Manifest &m = ff.manifest;
  m.version = imp.format_name;
  m.foreign = imp.format_name;
  m.spec = SpecVersion::V1_2;
  if (!imp.attributes.empty()) {
    const ztimport::CborItem map = ztimport::cbor_map(imp.attributes);
    m.has_attributes = true;
    m.attributes.assign(map.begin(), map.end());
  }
  const bool all_in_place =
      std::all_of(imp.tensors.begin(), imp.tensors.end(), [](const ztimport::Tensor &t) { return t.in_place; });
  m.objects.reserve(imp.tensors.size());
  if (all_in_place) {
    for (const auto &t : imp.tensors) m.objects.push_back(object_of(t, t.offset));
    m.data_end = src->size();
    ff.source = std::move(src);
  } else {
    // Decoded once, each tensor 64-byte aligned, within the decode budget.
    uint64_t total = 0;
    std::vector<uint64_t> at;
    at.reserve(imp.tensors.size());
    for (const auto &t : imp.tensors) {
      at.push_back(total);
      const uint64_t padded = (t.nbytes + kAlign - 1) / kAlign * kAlign;
      if (t.nbytes > limits.max_decoded_size || padded > limits.max_decoded_size - total)
        fail(ZT_E_LIMIT, "'" + path + "': decoding its tensors (up to '" + printable(t.name) + "') needs more than " +
                             std::to_string(limits.max_decoded_size) + " bytes (max_decoded_size)");
      total += padded;
    }
    auto dec = std::make_unique<DecodedSource>(path, total);
    for (size_t i = 0; i < imp.tensors.size(); ++i) {
      const ztimport::Tensor &t = imp.tensors[i];
      uint64_t got = 0;
      try {
        t.emit([&](const void *p, size_t n) {
          if (n > t.nbytes - got)
            throw ztimport::InputError("'" + path + "': tensor '" + t.name + "' delivers more bytes than it declares");
          std::memcpy(dec->writable() + at[i] + got, p, n);
          got += n;
        });
      } catch (const ztimport::InputError &e) {
        fail(ZT_E_FORMAT, e.what());
      }
      if (got != t.nbytes)
        fail(ZT_E_FORMAT, "'" + path + "': tensor '" + printable(t.name) + "' delivers " + std::to_string(got) +
                              " bytes, not the " + std::to_string(t.nbytes) + " it declares");
      m.objects.push_back(object_of(t, at[i]));
      m.objects.back().components[0].big_endian = false;  // decoded bytes are little-endian, C order
    }
    dec->seal();
    m.data_end = total;
    m.foreign_decoded = true;
    ff.source = std::move(dec);
  }
  imp.tensors.clear();  // the readers' state (zip archive) goes before the map
  if (m.objects.size() > UINT32_MAX) fail(ZT_E_LIMIT, "'" + path + "': more than 2^32 objects");
  m.name_order.resize(m.objects.size());
  for (uint32_t i = 0; i < m.name_order.size(); ++i) m.name_order[i] = i;
  auto by_name = [&](uint32_t a, uint32_t b) { return m.objects[a].name < m.objects[b].name; };
  if (!std::is_sorted(m.name_order.begin(), m.name_order.end(), by_name))  // the parsers sort most
    std::sort(m.name_order.begin(), m.name_order.end(), by_name);
  for (size_t k = 1; k < m.name_order.size(); ++k) {
    const std::string &name = m.objects[m.name_order[k]].name;
    if (name == m.objects[m.name_order[k - 1]].name)
      fail(ZT_E_DUPLICATE_KEY, "'" + path + "': two tensors are named '" + printable(name) + "'");
  }
  return ff;
}

}  // namespace zt
