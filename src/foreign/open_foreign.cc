#include "foreign/open_foreign.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <string>

#include "foreign/decode_on_read.h"
#include "foreign/foreign.h"
#include "platform/file.h"
#include "types/dtype.h"
#include "util/error.h"

namespace zt {
namespace {

constexpr uint64_t kAlign = 64;  // where each decoded tensor starts in memory

Object object_of(const zt::foreign::Tensor &t, uint64_t offset) {
  Object o;
  o.name = t.name;
  o.shape = Shape(t.shape.begin(), t.shape.end());
  o.has_format = true;
  o.format = t.format;
  if (!t.attributes.empty()) {
    const zt::foreign::CborItem map = zt::foreign::cbor_map(t.attributes);
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
zt::foreign::Kind kind_of(const uint8_t *head, size_t n, const Source &src) {
  const zt::foreign::Kind kind = zt::foreign::detect(head, n, src.size());
  if (kind != zt::foreign::Kind::None || (n >= 4 && std::memcmp(head, "ZTEN", 4) == 0)) return kind;
  const std::string &p = src.path();
  if (ends_with(p, ".safetensors")) return zt::foreign::Kind::Safetensors;
  if (ends_with(p, ".npy")) return zt::foreign::Kind::Npy;
  if (ends_with(p, ".npz") || ends_with(p, ".pt") || ends_with(p, ".pth")) return zt::foreign::Kind::Npz;  // zips
  if (ends_with(p, ".gguf")) return zt::foreign::Kind::Gguf;
  if (ends_with(p, ".onnx")) return zt::foreign::Kind::Onnx;                         // protobuf has no magic
  if (ends_with(p, ".h5") || ends_with(p, ".hdf5")) return zt::foreign::Kind::Hdf5;  // a user block before the magic
  return zt::foreign::Kind::None;
}

DecodeOnReadSource::Budget decode_budget(const ForeignLimits &limits, uint64_t file_size) {
  DecodeOnReadSource::Budget b;
  b.per_tensor = limits.max_decoded_size;
  const uint64_t multiple = file_size > UINT64_MAX / kDecodeMultiple ? UINT64_MAX : file_size * kDecodeMultiple;
  b.total = std::max(multiple, kDecodeFloor);
  b.rule = std::to_string(kDecodeMultiple) + " times the file's size, at least " + std::to_string(kDecodeFloor >> 20) +
           " MiB";
  if (limits.max_decoded_size_set && limits.max_decoded_size > b.total) {
    b.total = limits.max_decoded_size;
    b.rule = "max_decoded_size";
  }
  return b;
}

}  // namespace

const char *foreign_format(const Source &src) {
  std::vector<uint8_t> scratch;
  const size_t n = static_cast<size_t>(std::min<uint64_t>(src.size(), 16));
  const uint8_t *head = src.read_meta(0, n, scratch);
  const zt::foreign::Kind kind = kind_of(head, n, src);
  return kind == zt::foreign::Kind::None ? nullptr : zt::foreign::kind_name(kind);
}

ForeignFile open_foreign(std::unique_ptr<Source> src, const ForeignLimits &limits) {
  const std::string path = src->path();
  std::vector<uint8_t> scratch;
  const size_t head_n = static_cast<size_t>(std::min<uint64_t>(src->size(), 16));
  const uint8_t *head = src->read_meta(0, head_n, scratch);
  const zt::foreign::Kind kind = kind_of(head, head_n, *src);
  if (kind == zt::foreign::Kind::None) fail(ZT_E_FORMAT, "'" + path + "': not a foreign tensor file");

  // The parsers read a whole buffer: the source's map, or (pread access) a
  // read-only map made for the parse alone (not counted as the process's
  // data, so --max-memory style limits are not spent on it).
  std::shared_ptr<platform::FileView> pm;
  const uint8_t *bytes = src->data();
  if (!bytes && src->size() > 0) {  // a file opened for pread: sources without a map are not offered
    if (src->size() > std::numeric_limits<size_t>::max())
      fail(ZT_E_LIMIT, "'" + path + "': a foreign file of " + std::to_string(src->size()) +
                           " bytes is larger than this " + std::to_string(8 * sizeof(size_t)) +
                           "-bit process can map for parsing");
    // Of the size the source has: a file replaced since it was opened
    // could end before the bytes the parse reads (SIGBUS).
    pm = std::make_shared<platform::FileView>(path, src->size());
    bytes = pm->data();
  }
  static const uint8_t kEmpty = 0;
  if (!bytes) bytes = &kEmpty;

  zt::foreign::Limits il;
  il.max_header = std::min(il.max_header, limits.max_header);
  il.max_member = std::max(il.max_member, limits.max_decoded_size);  // one member: checked when it is read
  // zt::Error: ZT_E_FORMAT for a malformed file; ZT_E_IO (external data), ZT_E_LIMIT as thrown.
  zt::foreign::Imported imp = zt::foreign::import_buffer(kind, bytes, static_cast<size_t>(src->size()),
                                                         "'" + path + "'", zt::foreign::stem_of(path), il, path);

  ForeignFile ff;
  Manifest &m = ff.manifest;
  m.version = imp.format_name;
  m.foreign = imp.format_name;
  m.spec = SpecVersion::V1_2;
  if (!imp.attributes.empty()) {
    const zt::foreign::CborItem map = zt::foreign::cbor_map(imp.attributes);
    m.has_attributes = true;
    m.attributes.assign(map.begin(), map.end());
  }
  const bool all_in_place =
      std::all_of(imp.tensors.begin(), imp.tensors.end(), [](const zt::foreign::Tensor &t) { return t.in_place; });
  m.objects.reserve(imp.tensors.size());
  if (all_in_place) {
    for (const auto &t : imp.tensors) m.objects.push_back(object_of(t, t.offset));
    m.data_end = src->size();
    ff.source = std::move(src);
  } else {
    // Decoded on first read, each tensor 64-byte aligned: opening and
    // listing inflate nothing.
    std::vector<DecodeOnReadSource::Tensor> lazy;
    lazy.reserve(imp.tensors.size());
    uint64_t total = 0;
    for (auto &t : imp.tensors) {
      const uint64_t padded = (t.nbytes + kAlign - 1) / kAlign * kAlign;
      if (padded < t.nbytes || padded > std::numeric_limits<uint64_t>::max() - total)
        fail(ZT_E_LIMIT, "'" + path + "': its tensors declare more than 2^64 bytes");
      m.objects.push_back(object_of(t, total));
      m.objects.back().components[0].big_endian = false;  // decoded bytes are little-endian, C order
      lazy.push_back({t.name, total, t.nbytes, std::move(t.emit)});
      total += padded;
    }
    // What emit reads: the parser's state (zip archive), then the bytes it
    // parses (the file's map or the parse map), released in that order.
    struct Inputs {
      std::unique_ptr<Source> file;
      std::shared_ptr<platform::FileView> map;
      std::shared_ptr<void> parsed;  // last: released first
    };
    auto inputs = std::make_shared<Inputs>();
    inputs->file = std::move(src);
    inputs->map = std::move(pm);
    inputs->parsed = std::move(imp.keepalive);
    const uint64_t file_size = inputs->file->size();
    ff.source =
        std::make_unique<DecodeOnReadSource>(path, total, std::move(lazy), decode_budget(limits, file_size), inputs);
    m.data_end = total;
    m.foreign_decoded = true;
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
