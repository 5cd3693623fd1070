#include "foreign_info.h"

#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>

#include "cli.h"
#include "foreign/foreign.h"

namespace ztcli {
namespace {

bool ends_with(const std::string &s, const char *suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

// Parses the input; nullptr-equivalent (false) after a message.
bool load(const char *cmd, const std::string &path, ztimport::Imported &out) {
  try {
    out = ztimport::import_file(path, ztimport::Limits{});
    return true;
  } catch (const ztimport::InputError &e) {
    std::fprintf(stderr, "zt %s: %s\n", cmd, e.what());
  } catch (const std::bad_alloc &) {
    std::fprintf(stderr, "zt %s: out of memory reading '%s'\n", cmd, path.c_str());
  }
  return false;
}

nlohmann::json component_json(const ztimport::Tensor &t) {
  nlohmann::json c = nlohmann::json::object();
  c["role"] = "data";
  c["dtype"] = zt_dtype_name(t.dtype);
  c["type"] = t.logical_type.empty() ? nlohmann::json() : nlohmann::json(t.logical_type);
  c["encoding"] = "raw";
  c["offset"] = t.offset == UINT64_MAX ? nlohmann::json() : nlohmann::json(t.offset);
  c["length"] = t.nbytes;
  c["uncompressed_length"] = nullptr;
  c["decoded_length"] = t.nbytes;
  c["digest"] = nullptr;
  c["status"] = 0;
  return c;
}

std::string offset_text(uint64_t offset) {
  return offset == UINT64_MAX ? "-" : std::to_string(offset);
}

}  // namespace

bool is_foreign_input(const std::string &path) {
  if (ends_with(path, ".safetensors") || ends_with(path, ".npy") || ends_with(path, ".npz") || ends_with(path, ".gguf"))
    return true;
  if (ends_with(path, ".zt")) return false;
  char magic[6] = {};
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;  // the .zt reader reports the error
  const ssize_t n = ::read(fd, magic, sizeof magic);
  ::close(fd);
  return (n >= 4 && std::memcmp(magic, "GGUF", 4) == 0) || (n >= 6 && std::memcmp(magic, "\x93NUMPY", 6) == 0) ||
         (n >= 4 && (std::memcmp(magic, "PK\x03\x04", 4) == 0 || std::memcmp(magic, "PK\x05\x06", 4) == 0));
}

// A value for display, in the JSON conventions zt_file_attributes_json
// uses: byte strings as {"$bytes": hex}, non-finite floats as
// {"$float": "nan"|"inf"|"-inf"}.
static nlohmann::json displayable(nlohmann::json v) {
  if (v.is_binary()) {
    static const char digits[] = "0123456789abcdef";
    std::string hex;
    for (uint8_t b : v.get_binary()) {
      hex.push_back(digits[b >> 4]);
      hex.push_back(digits[b & 15]);
    }
    return nlohmann::json{{"$bytes", hex}};
  }
  if (v.is_number_float() && !std::isfinite(v.get<double>())) {
    const double d = v.get<double>();
    return nlohmann::json{{"$float", std::isnan(d) ? "nan" : d > 0 ? "inf" : "-inf"}};
  }
  if (v.is_array())
    for (auto &e : v) e = displayable(std::move(e));
  if (v.is_object())
    for (auto &e : v.items()) e.value() = displayable(std::move(e.value()));
  return v;
}

// Attributes (CBOR items by key) as one JSON object; null when there are none.
static nlohmann::json attributes_json(const ztimport::CborAttributes &attributes) {
  if (attributes.empty()) return nullptr;
  nlohmann::json out = nlohmann::json::object();
  for (const auto &[key, item] : attributes) {
    // Our own importers' output: well-formed, tags never used.
    out[key] = displayable(nlohmann::json::from_cbor(item, true, true, nlohmann::json::cbor_tag_handler_t::ignore));
  }
  return out;
}

int foreign_info(const std::string &path, bool as_json) {
  ztimport::Imported in;
  if (!load("info", path, in)) return kFailure;
  if (as_json) {
    // The keys of zt_file_to_json, plus the foreign format; "version" is the
    // zTensor spec version, which a foreign file has none of.
    nlohmann::json doc = nlohmann::json::object();
    doc["version"] = nullptr;
    doc["source_format"] = in.format_name;
    doc["attributes"] = attributes_json(in.attributes);
    nlohmann::json objects = nlohmann::json::array();
    for (const auto &t : in.tensors) {
      nlohmann::json o = nlohmann::json::object();
      o["name"] = t.name;
      o["shape"] = t.shape;
      o["format"] = t.format;
      o["attributes"] = attributes_json(t.attributes);
      o["status"] = 0;
      o["components"] = nlohmann::json::array({component_json(t)});
      objects.push_back(std::move(o));
    }
    doc["objects"] = std::move(objects);
    std::printf("%s\n", doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return kOk;
  }
  const std::string attrs =
      attributes_json(in.attributes).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::printf("file:       %s\n", path.c_str());
  std::printf("version:    none (%s file; 'zt convert' makes a .zt of it)\n", in.format_name.c_str());
  std::printf("attributes: %s\n", attrs.c_str());
  std::printf("objects:    %zu\n", in.tensors.size());
  for (const auto &t : in.tensors) {
    std::printf("\n%s\n", t.name.c_str());
    std::printf("  shape:      %s\n", shape_string(t.shape.data(), t.shape.size()).c_str());
    std::printf("  format:     %s\n", t.format.c_str());
    if (!t.attributes.empty())
      std::printf("  attributes: %s\n",
                  attributes_json(t.attributes).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    std::printf("  component data: %s%s%s, raw, offset %s, stored %llu, decoded %llu\n", zt_dtype_name(t.dtype),
                t.logical_type.empty() ? "" : " as ", t.logical_type.c_str(), offset_text(t.offset).c_str(),
                static_cast<unsigned long long>(t.nbytes), static_cast<unsigned long long>(t.nbytes));
  }
  return kOk;
}

int foreign_ls(const std::string &path) {
  ztimport::Imported in;
  if (!load("ls", path, in)) return kFailure;
  for (const auto &t : in.tensors)
    std::printf(
        "%s\t%s\t%s\t%s\t%s\n", t.name.c_str(), t.format.c_str(), shape_string(t.shape.data(), t.shape.size()).c_str(),
        t.logical_type.empty() ? zt_dtype_name(t.dtype) : t.logical_type.c_str(), human_bytes(t.nbytes).c_str());
  return kOk;
}

}  // namespace ztcli
