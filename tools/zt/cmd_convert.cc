// zt convert: safetensors, NumPy .npy/.npz and GGUF files → one .zt file.
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include "cli.h"
#include "commands.h"
#include "import/import.h"
#include "le_to_host.h"
#include "output_guard.h"
#include "progress.h"

namespace ztcli {

const char *const kConvertUsage =
    "usage: zt convert INPUT... -o OUT.zt [--zstd LEVEL] [--digest none|crc32c|sha256]\n"
    "                  [--max-member-size BYTES] [--quiet] [--json] [--no-sync]\n\n"
    "Converts one or more foreign tensor files into one zTensor file (written\n"
    "atomically: on any error nothing is left at OUT; OUT may not be one of the\n"
    "inputs). Inputs are recognised by\n"
    "their extension, else by their magic bytes:\n"
    "  .safetensors  every tensor, named as in the file. F8_E4M3 / F8_E5M2 /\n"
    "                F8_E8M0 become u8 with logical type f8_e4m3fn / f8_e5m2 /\n"
    "                f8_e8m0fnu, C64 becomes f32 + complex64; __metadata__\n"
    "                becomes file attributes. F4/F6 (sub-byte) are refused.\n"
    "  .npy          one object named after the file's stem (w.npy -> w).\n"
    "  .npz          one object per member, named without '.npy'; stored and\n"
    "                deflated members. Byte orders '<', '>', '|' ('>' is stored\n"
    "                little-endian); Fortran order is converted to C order;\n"
    "                complex64/128 become f32/f64 + complex64/complex128.\n"
    "  .gguf         versions 2 and 3; every tensor. Shapes are reversed from\n"
    "                GGUF's innermost-first order into row-major order (as numpy\n"
    "                and torch show them). F32, F16, BF16, F64, I8..I64 map to\n"
    "                dense objects; block-quantized types (Q4_0, Q8_0, Q2_K..Q8_K,\n"
    "                IQ*, TQ*, MXFP4) become objects of format 'ggml_quantized'\n"
    "                with one u8 'data' component of logical type ggml.<type>\n"
    "                (e.g. ggml.q4_k), the logical shape kept and attributes\n"
    "                ggml_type, ggml_type_id, block_size, type_size. Key/value\n"
    "                metadata becomes file attributes (arrays as JSON arrays).\n"
    "Several inputs are merged; two tensors of the same name, or one file\n"
    "attribute with different values, are an error.\n\n"
    "  --zstd LEVEL      compress every component with zstd at LEVEL\n"
    "  --digest ALG      digest every component (default none)\n"
    "  --max-member-size BYTES  refuse npz members that inflate to more (16 GiB)\n"
    "  --quiet           no progress bar, no summary\n"
    "  --json            print a JSON summary on stdout\n"
    "  --no-sync         do not fsync the output\n";

namespace {

using json = nlohmann::ordered_json;

uint64_t file_size(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

// Thrown out of the write loop with the writer's status.
struct WriteFailure {
  std::string what;
  zt_status status;
};

void check(zt_status st, const std::string &what) {
  if (st != ZT_OK) throw WriteFailure{what, st};
}

}  // namespace

int cmd_convert(const std::vector<std::string> &argv) {
  Args a;
  std::string err;
  if (!parse_args(argv, {"--quiet", "--json", "--no-sync"},
                  {"-o", "--output", "--zstd", "--digest", "--max-member-size"}, a, err))
    return usage_error("convert", err);
  const std::string out = a.get("-o", a.get("--output"));
  if (a.positional.empty() || out.empty()) return usage_error("convert", "expected INPUT... and -o OUT.zt");
  if (int rc = refuse_output_is_input("convert", out, a.positional)) return rc;
  zt_writer_options wo;
  zt_writer_options_init(&wo);
  if (a.has("--zstd")) {
    if (!parse_zstd_level(a.get("--zstd"), wo.zstd_level))
      return usage_error("convert", "--zstd takes a level (-131072..22)");
    wo.encoding = ZT_ENCODING_ZSTD;
  }
  if (a.has("--digest") && !parse_digest(a.get("--digest"), wo.digest))
    return usage_error("convert", "--digest takes none, crc32c or sha256");
  if (a.has("--no-sync")) wo.sync = 0;
  ztimport::Limits limits;
  if (a.has("--max-member-size")) {
    char *end = nullptr;
    const std::string v = a.get("--max-member-size");
    limits.max_member = std::strtoull(v.c_str(), &end, 10);
    if (v.empty() || !end || *end) return usage_error("convert", "--max-member-size takes a byte count");
  }
  const bool quiet = a.has("--quiet"), as_json = a.has("--json");

  // Read every input's structure first: clashes and malformed inputs are
  // found before a byte is written.
  std::vector<ztimport::Imported> inputs;
  nlohmann::json attributes = nlohmann::json::object();  // sorted: see Imported::attributes
  std::map<std::string, std::string> origin;  // object name → input
  uint64_t total = 0;
  try {
    for (const auto &path : a.positional) {
      inputs.push_back(ztimport::import_file(path, limits));
      for (const auto &t : inputs.back().tensors) {
        auto [it, fresh] = origin.emplace(t.name, path);
        if (!fresh)
          throw ztimport::InputError("tensor '" + t.name + "' is in both '" + it->second + "' and '" + path +
                                     "'; names must be unique");
        total += t.nbytes;
      }
      for (auto kv = inputs.back().attributes.begin(); kv != inputs.back().attributes.end(); ++kv) {
        if (attributes.contains(kv.key()) && attributes[kv.key()] != kv.value())
          throw ztimport::InputError("attribute '" + kv.key() + "' differs between inputs ('" + path +
                                     "' and an earlier one)");
        attributes[kv.key()] = kv.value();
      }
    }
  } catch (const ztimport::InputError &e) {
    std::fprintf(stderr, "zt convert: %s\n", e.what());
    return kFailure;
  } catch (const std::bad_alloc &) {
    std::fprintf(stderr, "zt convert: out of memory while reading the inputs\n");
    return kFailure;
  }

  zt_writer *w = nullptr;
  zt_status st = zt_writer_create(out.c_str(), &wo, &w);
  if (st != ZT_OK) return report("convert: cannot create '" + out + "'", st);
  Progress progress("converting", total, quiet || as_json);
  size_t objects = 0;
  try {
    if (!attributes.empty()) {
      const std::string text = attributes.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      check(zt_writer_set_attributes_json(w, text.c_str()), "convert: file attributes");
    }
    for (auto &in : inputs) {
      for (auto &t : in.tensors) {
        const std::string where = "convert: object '" + t.name + "'";
        check(zt_writer_begin_object(w, t.name.data(), t.name.size(), t.format.c_str(), t.shape.data(), t.shape.size()),
              where);
        if (!t.attributes.is_null()) {
          const std::string text = t.attributes.dump();
          check(zt_writer_set_object_attributes_json(w, t.name.data(), t.name.size(), text.c_str()), where);
        }
        zt_blob_options bo;
        zt_blob_options_init(&bo);
        bo.logical_type = t.logical_type.empty() ? nullptr : t.logical_type.c_str();
        check(zt_write_blob_begin(w, t.name.data(), t.name.size(), "data", t.dtype, &bo), where);
        uint64_t written = 0;
        LeToHost to_host(zt_dtype_size(t.dtype),
                         [&](const void *p, size_t n) { check(zt_write_blob_append(w, p, n), where); });
        t.emit([&](const void *p, size_t n) {
          to_host(p, n);
          written += n;
          progress.add(n);
        });
        to_host.flush();
        if (written != t.nbytes)
          throw ztimport::InputError("object '" + t.name + "': source delivered " + std::to_string(written) +
                                     " bytes, expected " + std::to_string(t.nbytes));
        check(zt_write_blob_end(w), where);
        ++objects;
      }
    }
  } catch (const WriteFailure &f) {
    int rc = report(f.what, f.status);
    zt_writer_discard(w);
    return rc;
  } catch (const ztimport::InputError &e) {
    zt_writer_discard(w);
    std::fprintf(stderr, "zt convert: %s\n", e.what());
    return kFailure;
  } catch (const std::exception &e) {
    zt_writer_discard(w);
    std::fprintf(stderr, "zt convert: %s\n", e.what());
    return kFailure;
  }
  progress.done();
  st = zt_writer_finish(w);
  if (st != ZT_OK) return report("convert: cannot finish '" + out + "'", st);
  const uint64_t out_size = file_size(out);
  if (as_json) {
    json j{{"command", "convert"}, {"output", out},         {"inputs", a.positional},
           {"objects", objects},   {"tensor_bytes", total}, {"output_bytes", out_size}};
    std::printf("%s\n", j.dump(-1, ' ', false, json::error_handler_t::replace).c_str());
  } else if (!quiet) {
    std::printf("%s: %zu objects from %zu input(s), %s of tensor data, %s written\n", out.c_str(), objects,
                a.positional.size(), human_bytes(total).c_str(), human_bytes(out_size).c_str());
  }
  return kOk;
}

}  // namespace ztcli
