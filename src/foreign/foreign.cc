// Maps an input file and hands it to the reader for its format.
#include "foreign.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "platform/file.h"
#include "util/error.h"
#include "util/json_sax.h"

namespace zt::foreign {

uint64_t checked_mul(uint64_t a, uint64_t b, const std::string &ctx) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) throw format_error(ctx + ": size overflows 64 bits");
  return r;
}

uint64_t checked_add(uint64_t a, uint64_t b, const std::string &ctx) {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) throw format_error(ctx + ": offset overflows 64 bits");
  return r;
}

void refuse_overlapping(std::vector<DataRange> ranges, const std::string &what) {
  ranges.erase(std::remove_if(ranges.begin(), ranges.end(), [](const DataRange &r) { return r.begin == r.end; }),
               ranges.end());
  std::sort(ranges.begin(), ranges.end(), [](const DataRange &a, const DataRange &b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  size_t furthest = 0;  // of the ranges so far, the one reaching furthest
  for (size_t i = 1; i < ranges.size(); ++i) {
    const DataRange &a = ranges[furthest], &b = ranges[i];
    if (b.begin < a.end)
      throw format_error(what + ": the data of tensors '" + a.name + "' [" + std::to_string(a.begin) + ", " +
                         std::to_string(a.end) + ") and '" + b.name + "' [" + std::to_string(b.begin) + ", " +
                         std::to_string(b.end) + ") overlap; refusing a file whose tensors share bytes");
    if (b.end > a.end) furthest = i;
  }
}

void check_json_depth(const char *p, size_t n, const std::string &what) {
  if (json_too_deep_at(std::string_view(p, n), 64) != std::string_view::npos)
    throw format_error(what + ": JSON header nests deeper than 64 levels");
}

std::string hex(const uint8_t *p, size_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string s;
  s.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) {
    s.push_back(digits[p[i] >> 4]);
    s.push_back(digits[p[i] & 15]);
  }
  return s;
}

void byteswap(uint8_t *p, size_t n, size_t esize) {
  if (esize <= 1) return;
  for (size_t i = 0; i + esize <= n; i += esize) std::reverse(p + i, p + i + esize);
}

void emit_bytes(const uint8_t *p, uint64_t n, size_t swap_esize, const PieceFn &fn) {
  constexpr uint64_t kPiece = uint64_t{8} << 20;  // a multiple of every element size
  if (swap_esize <= 1) {
    for (uint64_t off = 0; off < n; off += kPiece) fn(p + off, static_cast<size_t>(std::min(kPiece, n - off)));
    return;
  }
  std::vector<uint8_t> buf(static_cast<size_t>(std::min(kPiece, n)));
  for (uint64_t off = 0; off < n; off += kPiece) {
    size_t len = static_cast<size_t>(std::min(kPiece, n - off));
    std::memcpy(buf.data(), p + off, len);
    byteswap(buf.data(), len, swap_esize);
    fn(buf.data(), len);
  }
}

namespace {

bool ends_with(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::string stem_of(const std::string &path) {
  size_t slash = path.find_last_of('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  size_t dot = base.find_last_of('.');
  return dot == std::string::npos ? base : base.substr(0, dot);
}

Kind detect(const uint8_t *head, size_t n, uint64_t file_size) {
  auto starts = [&](const char *magic, size_t k) { return n >= k && std::memcmp(head, magic, k) == 0; };
  if (starts("\x93NUMPY", 6)) return Kind::Npy;
  if (starts("PK\x03\x04", 4) || starts("PK\x05\x06", 4)) return Kind::Npz;
  if (starts("GGUF", 4)) return Kind::Gguf;
  if (starts("\x89HDF\r\n\x1a\n", 8)) return Kind::Hdf5;
  if (n >= 2 && head[0] == 0x80 && head[1] >= 2 && head[1] <= 5) return Kind::Pickle;
  if (n >= 9 && head[8] == '{') {
    uint64_t len = 0;
    for (int i = 7; i >= 0; --i) len = (len << 8) | head[i];
    if (len >= 2 && len <= file_size - 8) return Kind::Safetensors;
  }
  return Kind::None;
}

const char *kind_name(Kind kind) {
  switch (kind) {
    case Kind::Safetensors:
      return "safetensors";
    case Kind::Npy:
      return "npy";
    case Kind::Npz:
      return "npz";
    case Kind::Gguf:
      return "gguf";
    case Kind::Pickle:
      return "pickle";
    case Kind::Onnx:
      return "onnx";
    case Kind::Hdf5:
      return "hdf5";
    case Kind::None:
      break;
  }
  return "none";
}

Imported import_buffer(Kind kind, const uint8_t *data, size_t size, const std::string &what, const std::string &stem,
                       const Limits &limits, const std::string &path) {
  Imported r;
  switch (kind) {
    case Kind::Safetensors:
      r = read_safetensors(data, size, what, limits);
      r.format_name = "safetensors";
      break;
    case Kind::Npy:
      r = read_npy(data, size, what, stem, limits);
      r.format_name = "npy";
      break;
    case Kind::Npz:
      r = read_zip(data, size, what, limits);  // "npz" or "pickle"
      break;
    case Kind::Pickle:
      r = read_pickle_file(data, size, what, limits);
      break;
    case Kind::Onnx:
      r = read_onnx(data, size, what, path, limits);
      break;
    case Kind::Hdf5:
      r = read_hdf5(data, size, what, path, limits);
      break;
    case Kind::Gguf:
      r = read_gguf(data, size, what, limits);  // names itself with its version
      break;
    case Kind::None:
      throw format_error(what + ": not a foreign tensor file");
  }
  return r;
}

// Picks the reader by extension or magic and keeps `owner` (the bytes'
// mapping or copy) alive as long as anything the reader made needs it.
static Imported dispatch(const std::string &path, const uint8_t *data, size_t size, const Limits &limits,
                         std::shared_ptr<void> owner) {
  auto starts = [&](const char *magic, size_t n) { return size >= n && std::memcmp(data, magic, n) == 0; };

  Kind kind = Kind::None;
  if (ends_with(path, ".safetensors"))
    kind = Kind::Safetensors;
  else if (ends_with(path, ".npy") || (!ends_with(path, ".npz") && !ends_with(path, ".gguf") && starts("\x93NUMPY", 6)))
    kind = Kind::Npy;
  else if (ends_with(path, ".npz") ||
           (!ends_with(path, ".gguf") && (starts("PK\x03\x04", 4) || starts("PK\x05\x06", 4))))
    kind = Kind::Npz;
  else if (ends_with(path, ".gguf") || starts("GGUF", 4))
    kind = Kind::Gguf;
  else if (size >= 2 && data[0] == 0x80 && data[1] >= 2 && data[1] <= 5)
    kind = Kind::Pickle;
  else if (ends_with(path, ".onnx"))
    kind = Kind::Onnx;
  else if (ends_with(path, ".h5") || ends_with(path, ".hdf5") || starts("\x89HDF\r\n\x1a\n", 8))
    kind = Kind::Hdf5;
  else
    throw format_error("'" + path +
                       "': unknown input format (expected .safetensors, .npy, .npz, .gguf, .onnx, .h5 or a PyTorch "
                       ".pt/.pth/.bin zip by name or magic)");
  Imported r = import_buffer(kind, data, size, path, stem_of(path), limits, path);
  // (The pair destroys its second member first: the reader's state, then the bytes.)
  std::shared_ptr<void> inner = r.keepalive;
  r.keepalive = std::make_shared<std::pair<std::shared_ptr<void>, std::shared_ptr<void>>>(std::move(owner), inner);
  return r;
}

// The zt tool's inputs: mapped (POSIX), or read whole (Windows), by the
// platform seam (platform/file.h, FileView).
Imported import_file(const std::string &path, const Limits &limits) {
  std::shared_ptr<zt::platform::FileView> view;
  try {
    view = std::make_shared<zt::platform::FileView>(path);
  } catch (const zt::Error &e) {
    throw format_error(e.what());
  } catch (const std::bad_alloc &) {
    throw format_error("'" + path + "': out of memory opening it");
  }
  const uint8_t *data = view->data();
  const size_t size = view->size();
  return dispatch(path, data, size, limits, view);
}

}  // namespace zt::foreign
