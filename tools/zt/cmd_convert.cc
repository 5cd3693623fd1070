// zt convert: safetensors, NumPy .npy/.npz, GGUF, PyTorch, ONNX and HDF5 files → one .zt file.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include "cli.h"
#include "commands.h"
#include "foreign/foreign.h"
#include "le_to_host.h"
#include "output_guard.h"
#include "progress.h"
#include "set_output.h"
#include "signal_cleanup.h"
#include "terminal_text.h"

namespace ztcli {

const char *const kConvertUsage =
    "usage: zt convert INPUT... -o OUT.zt [--zstd LEVEL] [--digest none|crc32c|sha256]\n"
    "                  [--format 1.2|2 [--no-canonical]] [--max-member-size BYTES] [--verify]\n"
    "                  [--quiet] [--json] [--no-sync]\n"
    "       zt convert NAME.safetensors.index.json|FOLDER -o OUTDIR [options as above]\n\n"
    "--format 2 writes zTensor v2, canonical unless --no-canonical (docs/v2.md).\n"
    "Converts one or more foreign tensor files into one zTensor file (written\n"
    "atomically: on any error nothing is left at OUT; OUT may not be one of the\n"
    "inputs). Inputs are recognised by\n"
    "their extension, else by their magic bytes:\n"
    "  .safetensors  every tensor, named as in the file. F8_E4M3 / F8_E5M2 /\n"
    "                F8_E8M0 / F8_E4M3FNUZ / F8_E5M2FNUZ become u8 with logical\n"
    "                type f8_e4m3fn / f8_e5m2 / f8_e8m0fnu / f8_e4m3fnuz /\n"
    "                f8_e5m2fnuz, C64 becomes f32 + complex64; __metadata__\n"
    "                becomes file attributes. The sub-byte F4 / F6_E2M3 /\n"
    "                F6_E3M2 are packed u8 bytes as f4_e2m1 / f6_e2m3 / f6_e3m2:\n"
    "                --format 2 holds f4_e2m1; spec 1.2 refuses them.\n"
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
    "                metadata becomes file attributes (arrays as arrays).\n"
    "  .pt .pth .bin PyTorch zip checkpoints (torch.save since 1.6), read by a\n"
    "                restricted pickle reader (no Python, nothing executed): every\n"
    "                tensor, named by its dotted path (state_dict.fc.weight);\n"
    "                views copied to C order. The legacy format is refused.\n"
    "  .onnx         every initializer (raw, typed fields, external data beneath\n"
    "                the model's folder).\n"
    "  .h5 .hdf5     every dataset, named by its path; attributes kept.\n"
    "Several inputs are merged; two tensors of the same name, or one file\n"
    "attribute with different values, are an error.\n\n"
    "A sharded safetensors checkpoint (its index, NAME.safetensors.index.json,\n"
    "or the folder holding exactly one such index) is converted to a sharded\n"
    "zTensor set in the folder OUT (created if missing): each shard X.safetensors\n"
    "becomes X.zt with the tensors the index maps to it (a listed tensor missing\n"
    "from its shard, or an unlisted one in it, is an error), and NAME.zt.index.json\n"
    "keeps the index's metadata (docs/sharding.md). Shard locations must stay in\n"
    "the index's folder. All files appear together at the end, the index last;\n"
    "an existing name in OUT is refused and nothing is written.\n\n"
    "  --zstd LEVEL      compress every component with zstd at LEVEL\n"
    "  --digest ALG      digest every component (default none)\n"
    "  --max-member-size BYTES  refuse npz members that inflate to more (16 GiB)\n"
    "  --quiet           no progress bar, no summary\n"
    "  --json            print a JSON summary on stdout\n"
    "  --no-sync         do not fsync the output\n"
    "  --verify          before OUT is replaced, open what was written with an\n"
    "                    independent reader and check every object, digest and\n"
    "                    zstd frame; on a failure OUT is left as it was\n";

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

// v2 has profiles for what 1.2 spells otherwise: a GGUF block array is the
// opaque profile gguf.<type>/1 (spec/profiles/gguf.md) with the constants a
// reader validates sizes by, and no logical type; safetensors' F8_E8M0 is
// v2's f8_e8m0 (Appendix A).
void to_v2_projection(zt::foreign::Tensor &t) {
  if (t.format == "ggml_quantized") {
    const std::string type = t.logical_type.substr(t.logical_type.find('.') + 1);  // "ggml.q4_k" → "q4_k"
    zt::foreign::CborAttributes a;
    a["elems_per_block"] = t.attributes["block_size"];
    a["block_bytes"] = t.attributes["type_size"];
    t.format = "gguf." + type + "/1";
    t.logical_type.clear();
    t.attributes = std::move(a);
  } else if (t.logical_type == "f8_e8m0fnu") {
    t.logical_type = "f8_e8m0";
  }
}

// Writes the tensors of `inputs` and `attributes` as one .zt file at `out`
// (atomically: on failure nothing is left). Returns kOk or an exit code
// after a message.
int write_zt(std::vector<zt::foreign::Imported> &inputs, const zt::foreign::CborAttributes &attributes,
             const std::string &out, const zt_writer_options &wo, Progress &progress, size_t &objects) {
  const SignalCleanup on_signal(SignalCleanup::kOutputFile, replaced_target(out));
  zt_writer *w = nullptr;
  zt_status st = zt_writer_create(out.c_str(), &wo, &w);
  if (st != ZT_OK) return report("convert: cannot create '" + out + "'", st);
  ztensor::Writer owner = ztensor::Writer::adopt(w);  // discards w unless finished
  try {
    // CBOR, not JSON text: foreign keys and values are taken as they are,
    // never as the JSON conventions ("$bytes", "$map", ...).
    if (!attributes.empty()) {
      const zt::foreign::CborItem cbor = zt::foreign::cbor_map(attributes);
      check(zt_writer_set_attributes_cbor(w, cbor.data(), cbor.size()), "convert: file attributes");
    }
    // v2 places blobs in name order: handed over in that order, each is
    // placed once instead of being reordered at finish.
    std::vector<zt::foreign::Tensor *> order;
    for (auto &in : inputs)
      for (auto &t : in.tensors) order.push_back(&t);
    if (wo.format == 2)
      std::stable_sort(order.begin(), order.end(),
                       [](const zt::foreign::Tensor *a, const zt::foreign::Tensor *b) { return a->name < b->name; });
    for (zt::foreign::Tensor *tp : order) {
      {
        zt::foreign::Tensor &t = *tp;
        const std::string where = "convert: object '" + t.name + "'";
        if (wo.format == 2) to_v2_projection(t);
        check(zt_writer_begin_object(w, t.name.data(), t.name.size(), t.format.c_str(), t.shape.data(), t.shape.size()),
              where);
        if (!t.attributes.empty()) {
          const zt::foreign::CborItem cbor = zt::foreign::cbor_map(t.attributes);
          check(zt_writer_set_object_attributes_cbor(w, t.name.data(), t.name.size(), cbor.data(), cbor.size()), where);
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
          throw zt::foreign::format_error("object '" + t.name + "': source delivered " + std::to_string(written) +
                                          " bytes, expected " + std::to_string(t.nbytes));
        check(zt_write_blob_end(w), where);
        ++objects;
      }
    }
  } catch (const WriteFailure &f) {
    return report(f.what, f.status);
  } catch (const zt::Error &e) {
    std::fprintf(stderr, "zt convert: %s\n", shown(e.what()).c_str());  // may quote the input
    return kFailure;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "zt convert: %s\n", shown(e.what()).c_str());  // may quote the input
    return kFailure;
  }
  zt_status fst = zt_writer_finish(owner.release());
  if (fst != ZT_OK) return report("convert: cannot finish '" + out + "'", fst);
  return kOk;
}

// The index of a sharded safetensors checkpoint named by `input` (the index
// itself, or the folder holding exactly one *.safetensors.index.json); ""
// if `input` is neither (an ordinary input file).
bool sharded_index(const std::string &input, std::string &index, std::string &err) {
  struct stat st;
  if (::stat(input.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    DIR *d = ::opendir(input.c_str());
    if (!d) {
      err = "cannot read folder '" + input + "'";
      return true;
    }
    std::vector<std::string> found;
    const std::string suffix = ".safetensors.index.json";
    while (const dirent *e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (n.size() > suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0)
        found.push_back(n);
    }
    ::closedir(d);
    if (found.size() != 1)
      err = "folder '" + input + "' holds " + std::to_string(found.size()) +
            " *.safetensors.index.json files; name the index to convert";
    else
      index = input + "/" + found[0];
    return true;
  }
  const std::string suffix = ".json";
  if (input.size() > suffix.size() && input.compare(input.size() - suffix.size(), suffix.size(), suffix) == 0) {
    index = input;
    return true;
  }
  return false;
}

std::string replace_suffix(const std::string &name, const std::string &from, const std::string &to) {
  if (name.size() > from.size() && name.compare(name.size() - from.size(), from.size(), from) == 0)
    return name.substr(0, name.size() - from.size()) + to;
  return name + to;
}

// zt convert INDEX -o OUTDIR: every shard to a .zt shard, and a .zt index.
int convert_sharded(const std::string &index, const std::string &outdir, const zt_writer_options &wo,
                    const zt::foreign::Limits &limits, bool quiet, bool as_json) {
  const size_t slash = index.rfind('/');
  const std::string dir = slash == std::string::npos ? std::string() : index.substr(0, slash + 1);
  const std::string base = index.substr(dir.size());
  const std::string out_index =
      replace_suffix(replace_suffix(base, ".json", ""), ".safetensors.index", "") + ".zt.index.json";
  zt::foreign::ShardIndexFile idx;
  std::map<std::string, std::set<std::string>> by_shard;  // location → tensors the index puts there
  try {
    idx = zt::foreign::read_shard_index(index, limits);
    for (const auto &[name, loc] : idx.weight_map) {
      if (loc.find('/') != std::string::npos)
        throw zt::foreign::format_error("'" + index + "': shard '" + loc +
                                        "' is in a subfolder; zt convert writes the shards of a set side by side");
      by_shard[loc].insert(name);
    }
  } catch (const zt::Error &e) {
    std::fprintf(stderr, "zt convert: %s (nothing written)\n", shown(e.what()).c_str());
    return kFailure;
  }
  std::vector<std::string> names;
  std::map<std::string, std::string> renamed;  // safetensors shard → zt shard
  for (const auto &[loc, tensors] : by_shard) {
    renamed[loc] = replace_suffix(loc, ".safetensors", ".zt");
    names.push_back(renamed[loc]);
  }
  names.push_back(out_index);
  SetOutput set;
  if (int rc = set.begin("convert", outdir, names)) return rc;

  size_t objects = 0;
  for (const auto &[loc, tensors] : by_shard) {
    std::vector<zt::foreign::Imported> inputs;
    try {
      inputs.push_back(zt::foreign::import_file(dir + loc, limits));
      std::set<std::string> held;
      for (const auto &t : inputs[0].tensors) {
        if (!tensors.count(t.name))
          throw zt::foreign::format_error("shard '" + loc + "' holds tensor '" + t.name +
                                          "', which the index does not map to it");
        held.insert(t.name);
      }
      for (const auto &name : tensors)
        if (!held.count(name))
          throw zt::foreign::format_error("the index maps tensor '" + name + "' to shard '" + loc +
                                          "', which does not hold it");
    } catch (const zt::Error &e) {
      std::fprintf(stderr, "zt convert: %s (nothing written)\n", shown(e.what()).c_str());
      return kFailure;
    }
    Progress progress("converting " + loc, 0, quiet || as_json);
    if (int rc = write_zt(inputs, inputs[0].attributes, set.temp_path(renamed[loc]), wo, progress, objects)) return rc;
  }
  // The metadata goes through as the index parser wrote it back (checked
  // JSON text): no tree of a large one is built again.
  nlohmann::json weight_map = nlohmann::json::object();  // sorted: no quadratic insertion
  for (const auto &[name, loc] : idx.weight_map) weight_map[name] = renamed[loc];
  std::string text = "{\n";
  if (idx.metadata_json != "null") text += "  \"metadata\": " + idx.metadata_json + ",\n";
  text += "  \"weight_map\": " + weight_map.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n}\n";
  if (int rc = set.write_text(out_index, text, wo.sync != 0)) return rc;
  if (int rc = set.commit(wo.sync != 0)) return rc;
  if (as_json) {
    json j{{"command", "convert"},
           {"output", outdir + "/" + out_index},
           {"inputs", {index}},
           {"objects", objects},
           {"shards", by_shard.size()}};
    std::printf("%s\n", j.dump(-1, ' ', false, json::error_handler_t::replace).c_str());
  } else if (!quiet) {
    std::printf("%s/%s: %zu objects in %zu shard(s)\n", outdir.c_str(), out_index.c_str(), objects, by_shard.size());
  }
  return kOk;
}

}  // namespace

int cmd_convert(const std::vector<std::string> &argv) {
  Args a;
  std::string err;
  if (!parse_args(argv, {"--quiet", "--json", "--no-sync", "--verify", kNoCanonicalFlag},
                  {"-o", "--output", "--zstd", "--digest", "--max-member-size", kFormatOption}, a, err))
    return usage_error("convert", err);
  const std::string out = a.get("-o", a.get("--output"));
  if (a.positional.empty() || out.empty()) return usage_error("convert", "expected INPUT... and -o OUT.zt");
  // The converters read local files: a URL is refused before it is quoted.
  for (const auto &p : a.positional)
    if (int rc = refuse_url("convert", "input", p)) return rc;
  if (int rc = refuse_url("convert", "output", out)) return rc;
  std::string index, index_err;
  const bool sharded = a.positional.size() == 1 && sharded_index(a.positional[0], index, index_err);
  if (sharded && !index_err.empty()) {
    std::fprintf(stderr, "zt convert: %s\n", index_err.c_str());
    return kFailure;
  }
  if (!sharded)
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
  if (a.has("--verify")) wo.verify_before_replace = 1;
  if (!parse_format(a, wo.format, wo.canonical, err)) return usage_error("convert", err);
  if (wo.format == 2 && wo.canonical && (a.has("--zstd") || a.has("--digest")))
    return usage_error("convert", "canonical v2 is raw with xxh3 digests; add --no-canonical for --zstd or --digest");
  if (wo.format == 2 && a.has("--digest")) {
    if (wo.digest == ZT_DIGEST_CRC32C) return usage_error("convert", "v2 digests are xxh3, sha256 or none");
    wo.v2_digest = wo.digest;
  }
  zt::foreign::Limits limits;
  if (a.has("--max-member-size")) {
    char *end = nullptr;
    const std::string v = a.get("--max-member-size");
    limits.max_member = std::strtoull(v.c_str(), &end, 10);
    if (v.empty() || !end || *end) return usage_error("convert", "--max-member-size takes a byte count");
  }
  const bool quiet = a.has("--quiet"), as_json = a.has("--json");
  if (sharded) return convert_sharded(index, out, wo, limits, quiet, as_json);

  // Read every input's structure first: clashes and malformed inputs are
  // found before a byte is written.
  std::vector<zt::foreign::Imported> inputs;
  zt::foreign::CborAttributes attributes;     // sorted: see Imported::attributes
  std::map<std::string, std::string> origin;  // object name → input
  uint64_t total = 0;
  try {
    for (const auto &path : a.positional) {
      inputs.push_back(zt::foreign::import_file(path, limits));
      for (const auto &t : inputs.back().tensors) {
        auto [it, fresh] = origin.emplace(t.name, path);
        if (!fresh)
          throw zt::foreign::format_error("tensor '" + t.name + "' is in both '" + it->second + "' and '" + path +
                                          "'; names must be unique");
        total += t.nbytes;
      }
      for (auto &[key, value] : inputs.back().attributes) {
        auto [it, fresh] = attributes.emplace(key, value);
        // Equal means the same encoded item (a NaN equals itself here).
        if (!fresh && it->second != value)
          throw zt::foreign::format_error("attribute '" + key + "' differs between inputs ('" + path +
                                          "' and an earlier one)");
      }
    }
  } catch (const zt::Error &e) {
    std::fprintf(stderr, "zt convert: %s\n", shown(e.what()).c_str());  // may quote the input
    return kFailure;
  } catch (const std::bad_alloc &) {
    std::fprintf(stderr, "zt convert: out of memory while reading the inputs\n");
    return kFailure;
  }

  Progress progress("converting", total, quiet || as_json);
  size_t objects = 0;
  if (int rc = write_zt(inputs, attributes, out, wo, progress, objects)) return rc;
  progress.done();
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
