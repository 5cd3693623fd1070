// zt info / zt ls / zt cat: reading commands.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "commands.h"
#include "composite_info.h"
#include "terminal_text.h"

namespace ztcli {

const char *const kInfoUsage =
    "usage: zt info FILE [--json]\n\n"
    "Prints the spec version, the file attributes and every object (name, shape,\n"
    "format, attributes) with its components (role, dtype, logical type,\n"
    "encoding, offset, stored and decoded length, digest). Damaged objects are\n"
    "listed with their error. For a zTensor v2 file, 'content' is its content\n"
    "digest (v2 spec §6.4: the same tensors give the same one whatever the\n"
    "placement, encoding or number of files), or why it is undefined.\n"
    "--json prints the whole model as one JSON document.\n"
    "FILE may also be a .safetensors, .npy, .npz or .gguf file (by extension, or\n"
    "the magic bytes of the last three): it is described the same way, with\n"
    "version 'none' (in JSON: \"version\": null and \"source_format\"), every\n"
    "tensor as an object with one raw 'data' component (offset '-' / null where\n"
    "the bytes are not stored contiguously, as in a deflated npz member).\n";

const char *const kLsUsage =
    "usage: zt ls FILE\n\n"
    "One line per object: name, format, shape, dtype of its first component,\n"
    "stored bytes. FILE may also be a .safetensors, .npy, .npz or .gguf file\n"
    "(see 'zt info --help').\n";

const char *const kCatUsage =
    "usage: zt cat FILE OBJECT [--component ROLE] [--verify]\n\n"
    "Writes the decoded bytes (little-endian elements) of one component of OBJECT\n"
    "to stdout; ROLE defaults to 'data'. The component is decoded in pieces:\n"
    "memory stays bounded whatever its size.\n"
    "  --verify   check the component's digest (and that a zstd frame decodes to\n"
    "             its declared size) before writing anything: damaged data never\n"
    "             reaches stdout. Without it, damage found while decoding stops\n"
    "             the output part way, with an error and exit status 1.\n";

namespace {

// Attributes as JSON text, whose escaping leaves DEL and C1 controls raw:
// shown() escapes those too (JSON text holds no other control bytes).
std::string json_or_null(char *s) {
  std::string r = s ? shown(s) : "null";
  zt_free(s);
  return r;
}

}  // namespace

int cmd_info(const std::vector<std::string> &argv) {
  Args a;
  std::string err;
  if (!parse_args(argv, {"--json"}, {}, a, err)) return usage_error("info", err);
  if (a.positional.size() != 1) return usage_error("info", "expected one FILE");
  ztensor::File f;
  if (int rc = open_input(a.positional[0], f)) return rc;
  if (a.has("--json")) {
    char *json = nullptr;
    zt_status st = zt_file_to_json(f.handle(), &json);
    if (st != ZT_OK) return report("info", st);
    std::printf("%s\n", json);
    zt_free(json);
    return kOk;
  }
  const char *version = nullptr;
  zt_file_version(f.handle(), &version);
  size_t count = 0;
  zt_file_object_count(f.handle(), &count);
  char *attrs = nullptr;
  zt_file_attributes_json(f.handle(), &attrs);
  std::printf("file:       %s\n", display_path(a.positional[0]).c_str());
  if (version && (version[0] < '0' || version[0] > '9'))  // a foreign file (docs/foreign.md): its format
    std::printf("version:    none (%s file, read-only; 'zt convert' makes a .zt of it)\n", shown(version).c_str());
  else
    std::printf("version:    %s\n", shown(version).c_str());
  std::printf("attributes: %s\n", json_or_null(attrs).c_str());
  uint32_t data_shard = 0;
  if (zt_file_data_shard(f.handle(), &data_shard) == ZT_OK && data_shard)
    std::printf("data shard: yes (format v2: no manifest; its blobs are read through a root that names it)\n");
  else if (version && version[0] == '2') {
    // The model's identity (v2 spec §6.4), from the manifest alone.
    size_t len = 0;
    std::string digest(80, '\0');
    if (zt_file_content_digest(f.handle(), ZT_DIGEST_SHA256, &digest[0], digest.size(), &len) == ZT_OK)
      std::printf("content:    %s\n", digest.substr(0, len).c_str());
    else
      std::printf("content:    undefined (%s)\n", shown(zt_last_error()).c_str());
  }
  // A v2 root's shard table (spec §7.1), and which shard each part is in:
  // from the manifest's JSON form (no C call names a part's shard).
  std::vector<std::vector<std::string>> part_shard(count);
  if (version && version[0] == '2' && !data_shard) {
    char *json = nullptr;
    if (zt_file_to_json(f.handle(), &json) == ZT_OK) {
      const nlohmann::json j = nlohmann::json::parse(json, json + std::strlen(json), nullptr, false);
      zt_free(json);
      if (j.is_object() && j.contains("shards") && j["shards"].is_object() && !j["shards"].empty()) {
        std::printf("shards:     %zu (found beside the file: docs/v2.md, Shards)\n", j["shards"].size());
        for (const auto &item : j["shards"].items())
          std::printf("  %s: %s bytes, %s\n", shown(item.key()).c_str(),
                      item.value().value("size", nlohmann::json()).dump().c_str(),
                      shown(item.value().value("digest", std::string())).c_str());
        const auto &objs = j.value("objects", nlohmann::json::array());
        for (size_t i = 0; i < count && i < objs.size(); ++i)
          for (const auto &c : objs[i].value("components", nlohmann::json::array()))
            part_shard[i].push_back(c.is_object() && c.contains("shard") && c["shard"].is_string()
                                        ? c["shard"].get<std::string>()
                                        : std::string());
      }
    }
  }
  std::printf("objects:    %zu\n", count);
  for (size_t i = 0; i < count; ++i) {
    const zt_object *o = nullptr;
    zt_file_object_at(f.handle(), i, &o);
    const zt_object_info info = object_info(o);
    // Names, formats, roles, dtype and encoding strings come from the file:
    // shown() keeps its control characters off the terminal.
    std::printf("\n%s\n", shown(std::string_view(info.name, info.name_len)).c_str());
    std::printf("  shape:      %s\n", shape_string(info.shape, info.ndim).c_str());
    std::printf("  format:     %s\n", shown(format_of(info)).c_str());
    if (info.has_attributes) {
      char *oa = nullptr;
      zt_object_attributes_json(o, &oa);
      std::printf("  attributes: %s\n", json_or_null(oa).c_str());
    }
    // nnz/density of sparse objects, parameters of quantized ones.
    std::fputs(composite_info_text(o).c_str(), stdout);
    if (info.status != ZT_OK) {
      const char *e = "";
      zt_object_error(o, &e);
      std::printf("  ERROR:      %s: %s\n", zt_status_str(info.status), shown(e).c_str());
    }
    for (size_t k = 0; k < info.component_count; ++k) {
      const zt_component_info c = component_info(o, k);
      std::printf("  component %s: %s%s%s, %s, offset %llu, stored %llu, decoded %llu%s%s%s\n",
                  shown(role_of(c)).c_str(), shown(dtype_name_of(c)).c_str(), c.logical_type ? " as " : "",
                  shown(logical_type_of(c)).c_str(), shown(encoding_name_of(c)).c_str(),
                  static_cast<unsigned long long>(c.offset), static_cast<unsigned long long>(c.length),
                  static_cast<unsigned long long>(c.decoded_length), c.digest ? ", digest " : "",
                  shown(c.digest).c_str(), c.big_endian ? ", big-endian" : "");
      if (k < part_shard[i].size() && !part_shard[i][k].empty())
        std::printf("    in shard %s\n", shown(part_shard[i][k]).c_str());
    }
  }
  return kOk;
}

int cmd_ls(const std::vector<std::string> &argv) {
  Args a;
  std::string err;
  if (!parse_args(argv, {}, {}, a, err)) return usage_error("ls", err);
  if (a.positional.size() != 1) return usage_error("ls", "expected one FILE");
  ztensor::File f;
  if (int rc = open_input(a.positional[0], f)) return rc;
  size_t count = 0;
  zt_file_object_count(f.handle(), &count);
  for (size_t i = 0; i < count; ++i) {
    const zt_object *o = nullptr;
    zt_file_object_at(f.handle(), i, &o);
    const zt_object_info info = object_info(o);
    uint64_t stored = 0;
    std::string dtype = "-";
    for (size_t k = 0; k < info.component_count; ++k) {
      const zt_component_info c = component_info(o, k);
      stored += c.length;
      if (k == 0) dtype = std::string(c.logical_type ? logical_type_of(c) : dtype_name_of(c));
    }
    // One line per object, fields split by TAB: a name's own TAB or LF
    // (escaped by shown()) can neither add a column nor forge a line.
    std::printf("%s\t%s\t%s\t%s\t%s%s\n", shown(std::string_view(info.name, info.name_len)).c_str(),
                shown(format_of(info)).c_str(), shape_string(info.shape, info.ndim).c_str(), shown(dtype).c_str(),
                human_bytes(stored).c_str(), info.status == ZT_OK ? "" : "\tDAMAGED");
  }
  return kOk;
}

int cmd_cat(const std::vector<std::string> &argv) {
  Args a;
  std::string err;
  if (!parse_args(argv, {"--verify"}, {"--component"}, a, err)) return usage_error("cat", err);
  if (a.positional.size() != 2) return usage_error("cat", "expected FILE and OBJECT");
  if (a.has("--verify")) read_options().verify = true;
  ztensor::File f;
  if (int rc = open_input(a.positional[0], f)) return rc;
  const std::string &name = a.positional[1];
  const zt_object *o = nullptr;
  zt_status st = zt_file_object_by_name(f.handle(), name.data(), name.size(), &o);
  if (st != ZT_OK) return report("cat", st);
  size_t idx = 0;
  std::string role = a.get("--component", "data");
  st = zt_object_component_index_n(o, role.data(), role.size(), &idx);
  if (st != ZT_OK) return report("cat", st);
  // stdout cannot be taken back: with --verify the whole component is
  // checked first (the stream then finds it verified and does not digest
  // it again).
  if (a.has("--verify") && (st = zt_component_verify(o, idx, nullptr)) != ZT_OK) return report("cat", st);
  auto to_stdout = [](void *, const void *data, size_t len) {
    if (std::fwrite(data, 1, len, stdout) == len) return true;
    std::fprintf(stderr, "zt cat: write to stdout failed\n");
    return false;
  };
  if (int rc = stream_component(o, idx, "cat", to_stdout, nullptr)) return rc;
  if (std::fflush(stdout) != 0) {
    std::fprintf(stderr, "zt cat: write to stdout failed\n");
    return kIo;
  }
  return kOk;
}

}  // namespace ztcli
