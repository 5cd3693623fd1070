// zt export --to safetensors. The format (huggingface/safetensors): an
// 8-byte little-endian header length N, N bytes of JSON
//   {"__metadata__": {str: str}, name: {"dtype", "shape", "data_offsets"}}
// padded with spaces so the data starts at a multiple of 8, then the tensors'
// bytes back to back, offsets relative to the data start, no gaps.
// Tensors are laid out as the safetensors library itself writes them (larger
// dtypes first, then by name), so a file it wrote comes back with the same
// header and the same bytes after a round trip through zt.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "export_foreign.h"
#include "temp_output.h"
#include "terminal_text.h"

namespace ztcli {
namespace {

struct StType {
  zt_dtype dtype;
  const char *logical;  // nullptr = none
  const char *name;
  int rank;  // position in the safetensors library's Dtype enum (order of size)
};

constexpr StType kTypes[] = {
    {ZT_BOOL, nullptr, "BOOL", 0},
    {ZT_U8, "f4_e2m1", "F4", 1},
    {ZT_U8, "f6_e2m3", "F6_E2M3", 2},
    {ZT_U8, "f6_e3m2", "F6_E3M2", 3},
    {ZT_U8, nullptr, "U8", 4},
    {ZT_I8, nullptr, "I8", 5},
    {ZT_U8, "f8_e5m2", "F8_E5M2", 6},
    {ZT_U8, "f8_e4m3fn", "F8_E4M3", 7},
    {ZT_U8, "f8_e8m0fnu", "F8_E8M0", 8},
    {ZT_U8, "f8_e8m0", "F8_E8M0", 8},  // v2's name
    {ZT_U8, "f8_e4m3fnuz", "F8_E4M3FNUZ", 9},
    {ZT_U8, "f8_e5m2fnuz", "F8_E5M2FNUZ", 10},
    {ZT_I16, nullptr, "I16", 11},
    {ZT_U16, nullptr, "U16", 12},
    {ZT_F16, nullptr, "F16", 13},
    {ZT_BF16, nullptr, "BF16", 14},
    {ZT_I32, nullptr, "I32", 15},
    {ZT_U32, nullptr, "U32", 16},
    {ZT_F32, nullptr, "F32", 17},
    {ZT_F32, "complex64", "C64", 18},
    {ZT_F64, nullptr, "F64", 19},
    {ZT_I64, nullptr, "I64", 20},
    {ZT_U64, nullptr, "U64", 21},
};

// Bits per element of the sub-byte types (safetensors' Dtype::bitsize);
// 0 for whole-byte ones, whose size the shape already gives.
unsigned sub_byte_bits(const StType &t) {
  const std::string n = t.name;
  return n == "F4" ? 4 : (n == "F6_E2M3" || n == "F6_E3M2") ? 6 : 0;
}

// The safetensors library refuses headers above 100 MB.
constexpr uint64_t kMaxHeader = 100'000'000;

const StType *st_type(const zt_component_info &c) {
  for (const auto &t : kTypes) {
    if (t.dtype != c.dtype) continue;
    if ((t.logical == nullptr) != (c.logical_type == nullptr)) continue;
    if (t.logical && logical_type_of(c) != t.logical) continue;
    return &t;
  }
  return nullptr;
}

std::string quoted(const std::string &s) {
  return nlohmann::json(s).dump();
}

int refuse(const std::string &msg) {
  std::fprintf(stderr, "zt export: %s; nothing written\n", shown(msg).c_str());  // names come from the file
  return kFailure;
}

}  // namespace

int export_safetensors(const zt_file *f, const std::string &out, bool quiet) {
  std::vector<ExportObject> objs;
  if (!export_objects("export", f, objs)) return kFailure;

  // File attributes → __metadata__, which holds only strings.
  char *attrs_text = nullptr;
  if (zt_status st = zt_file_attributes_json(f, &attrs_text); st != ZT_OK) return report("export: attributes", st);
  const nlohmann::json attrs = nlohmann::json::parse(attrs_text, nullptr, /*allow_exceptions=*/false);
  zt_free(attrs_text);
  std::vector<std::pair<std::string, const nlohmann::json *>> entries;
  if (std::string why; !attribute_entries(attrs, entries, why))
    return refuse(why + "; safetensors __metadata__ is a map of strings");
  nlohmann::json metadata = nlohmann::json::object();
  for (const auto &[key, value] : entries) {
    if (!value->is_string())
      return refuse("file attribute '" + key + "' is a " +
                    (value->is_object() ? std::string("map or a value JSON cannot hold") : value->type_name()) +
                    ", but safetensors __metadata__ holds only strings");
    metadata[key] = *value;
  }

  std::vector<std::pair<const ExportObject *, const StType *>> items;
  for (const auto &o : objs) {
    const std::string ctx = "object '" + o.name + "'";
    if (o.format != "dense")
      return refuse(ctx + " has format '" + o.format + "'; safetensors holds dense tensors only");
    if (const std::string why = single_data_problem(o); !why.empty()) return refuse(why);
    if (o.name == "__metadata__") return refuse(ctx + ": the name is reserved by safetensors");
    if (o.has_attributes) return refuse(ctx + " has object attributes, which safetensors cannot hold");
    const StType *t = st_type(o.data);
    if (!t)
      return refuse(ctx + ": dtype " + std::string(dtype_name_of(o.data)) + (o.data.logical_type ? " as " : "") +
                    std::string(logical_type_of(o.data)) + " has no safetensors dtype");
    // safetensors holds a sub-byte tensor as exactly shape × bits / 8 bytes
    // (a v2 f4_e2m1 tensor of an odd count has a padding nibble it cannot).
    if (const unsigned bits = sub_byte_bits(*t)) {
      uint64_t numel = 1;
      for (uint64_t dim : o.shape) numel *= dim;  // bounded: the object's bytes hold them
      if (numel * bits % 8 != 0 || numel * bits / 8 != o.data.decoded_length)
        return refuse(ctx + ": " + std::to_string(numel) + " " + t->name + " elements in " +
                      std::to_string(o.data.decoded_length) + " bytes; safetensors needs exactly shape × " +
                      std::to_string(bits) + " bits, whole bytes");
    }
    items.emplace_back(&o, t);
  }
  std::sort(items.begin(), items.end(), [](const auto &a, const auto &b) {
    return a.second->rank != b.second->rank ? a.second->rank > b.second->rank : a.first->name < b.first->name;
  });

  std::string header = "{";
  if (!metadata.empty()) header += "\"__metadata__\":" + metadata.dump();
  uint64_t offset = 0;
  for (const auto &[o, t] : items) {
    if (header.size() > 1) header += ',';
    header += quoted(o->name) + ":{\"dtype\":\"" + t->name + "\",\"shape\":[";
    for (size_t i = 0; i < o->shape.size(); ++i) header += (i ? "," : "") + std::to_string(o->shape[i]);
    const uint64_t end = offset + o->data.decoded_length;
    header += "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(end) + "]}";
    offset = end;
    if (header.size() > kMaxHeader) break;
  }
  header += '}';
  header.append((8 - header.size() % 8) % 8, ' ');
  if (header.size() > kMaxHeader)
    return refuse("the safetensors header would exceed " + std::to_string(kMaxHeader) +
                  " bytes, the limit safetensors readers enforce");

  TempOutput tmp;
  if (!tmp.open("export", out)) return kIo;
  uint8_t len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<uint8_t>((uint64_t{header.size()} >> (8 * i)) & 0xff);
  if (std::fwrite(len, 1, 8, tmp.fp()) != 8 ||
      std::fwrite(header.data(), 1, header.size(), tmp.fp()) != header.size()) {
    std::fprintf(stderr, "zt export: cannot write '%s': %s\n", out.c_str(), std::strerror(errno));
    return kIo;
  }
  Progress progress("exporting", offset, quiet);
  int rc = kOk;
  for (const auto &item : items)
    if (!write_object_data("export", tmp.fp(), *item.first, progress, rc)) return rc;
  progress.done();
  return tmp.commit() ? kOk : kIo;
}

}  // namespace ztcli
