// What zt export --to safetensors and --to gguf share: describing the
// objects of the input, and copying an object's decoded data.
#include "export_foreign.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "cli.h"
#include "le_to_host.h"
#include "progress.h"

namespace ztcli {

bool export_objects(const char *cmd, const zt_file *f, std::vector<ExportObject> &out) {
  size_t count = 0;
  zt_file_object_count(f, &count);
  for (size_t i = 0; i < count; ++i) {
    ExportObject e;
    zt_file_object_at(f, i, &e.obj);
    const zt_object_info info = object_info(e.obj);
    e.name.assign(info.name, info.name_len);
    e.format = std::string(format_of(info));
    e.shape.assign(info.shape, info.shape + info.ndim);
    e.has_attributes = info.has_attributes != 0;
    if (info.status != ZT_OK) {
      report(std::string(cmd) + ": object '" + e.name + "' is damaged (nothing written)", info.status);
      return false;
    }
    e.component_count = info.component_count;
    if (zt_object_component_index(e.obj, "data", &e.data_index) != ZT_OK) e.data_index = 0;
    e.data = component_info(e.obj, e.data_index);
    out.push_back(std::move(e));
  }
  return true;
}

std::string single_data_problem(const ExportObject &o) {
  if (o.component_count == 1 && role_of(o.data) == "data") return "";
  return "object '" + o.name + "' has " + std::to_string(o.component_count) +
         " components; only objects with exactly one, 'data', can be exported";
}

bool attribute_entries(const nlohmann::json &attrs, std::vector<std::pair<std::string, const nlohmann::json *>> &out,
                       std::string &why) {
  if (attrs.is_null()) return true;
  if (!attrs.is_object()) {
    why = "the file attributes are not a map";
    return false;
  }
  const auto m = attrs.find("$map");
  if (attrs.size() == 1 && m != attrs.end() && m->is_array()) {
    for (const auto &pair : *m) {
      if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string()) {
        why = "a file attribute key is not text";
        return false;
      }
      out.emplace_back(pair[0].get<std::string>(), &pair[1]);
    }
    return true;
  }
  for (auto it = attrs.begin(); it != attrs.end(); ++it) out.emplace_back(it.key(), &it.value());
  return true;
}

namespace {

// The stream sink of write_object_data: reads hand elements over in the
// host's order, safetensors and GGUF store them little-endian. LeToHost's
// reversal is its own inverse: on a big-endian host it turns each element
// back (a no-op on little-endian hosts).
struct LittleEndianFileSink {
  LittleEndianFileSink(FILE *fp, Progress *progress, size_t esize)
      : file{fp, progress}, to_le(esize, [this](const void *data, size_t len) {
          if (!file.failed) FileStreamSink::write(&file, data, len);
        }) {}
  LittleEndianFileSink(const LittleEndianFileSink &) = delete;
  LittleEndianFileSink &operator=(const LittleEndianFileSink &) = delete;
  static bool write(void *user, const void *data, size_t len) {
    auto *s = static_cast<LittleEndianFileSink *>(user);
    s->to_le(data, len);
    return !s->file.failed;
  }
  FileStreamSink file;
  LeToHost to_le;
};

}  // namespace

bool write_object_data(const char *cmd, FILE *fp, const ExportObject &o, Progress &progress, int &rc) {
  const size_t esize = zt_dtype_size(o.data.dtype);
  auto io_error = [&] {
    std::fprintf(stderr, "zt %s: cannot write: %s (nothing written)\n", cmd, std::strerror(errno));
    rc = kIo;
    return false;
  };
  if (o.data.encoding == ZT_ENCODING_RAW && esize) {
    // Raw data is read in ranges: memory stays bounded for huge tensors.
    const uint64_t count = o.data.decoded_length / esize, per = (uint64_t{8} << 20) / esize;
    std::vector<uint8_t> buf(static_cast<size_t>(std::min(count, per) * esize));
    for (uint64_t first = 0; first < count; first += per) {
      const uint64_t n = std::min(per, count - first);
      const zt_status st = zt_component_read_range(o.obj, o.data_index, first, n, buf.data(), buf.size());
      if (st != ZT_OK) {
        rc = report(std::string(cmd) + ": object '" + o.name + "' (nothing written)", st);
        return false;
      }
      if (kHostBigEndian)  // host order back to the little-endian order of the file
        for (uint64_t i = 0; i < n * esize; i += esize) std::reverse(buf.begin() + i, buf.begin() + i + esize);
      if (std::fwrite(buf.data(), 1, n * esize, fp) != n * esize) return io_error();
      progress.add(n * esize);
    }
    return true;
  }
  // zstd (or anything else): decoded in pieces, as .npy export does; the
  // stream checks that the frame decodes to the declared size.
  LittleEndianFileSink sink(fp, &progress, esize);
  rc = stream_component(o.obj, o.data_index, std::string(cmd) + ": object '" + o.name + "' (nothing written)",
                        LittleEndianFileSink::write, &sink);
  sink.to_le.flush();
  if (sink.file.failed) return io_error();
  return rc == kOk;
}

}  // namespace ztcli
