// zt split: one .zt file → shards of bounded size plus a JSON index
// (docs/sharding.md), written through a SetOutput: all or nothing, never
// replacing a file.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "commands.h"
#include "progress.h"
#include "set_output.h"
#include "terminal_text.h"
#include "util/redact_url.h"

namespace ztcli {

const char *const kSplitUsage =
    "usage: zt split IN.zt --max-shard-size SIZE -o OUTDIR [--prefix STEM]\n"
    "                [--format 1.2|2 [--no-canonical] [--shard-digest sha256|xxh3]]\n"
    "                [--quiet] [--json] [--no-sync]\n\n"
    "Writes the objects of IN.zt, in order, into shards STEM-00001-of-0000N.zt\n"
    "of at most SIZE stored bytes each, plus the index STEM.zt.index.json that\n"
    "maps every object to its shard (docs/sharding.md; read it back with\n"
    "zt_open_set, ztensor.load_sharded or 'zt merge'). An object is never split:\n"
    "one larger than SIZE gets a shard of its own. Each shard is a complete .zt\n"
    "file with IN's file attributes; objects are copied as they are (encoding,\n"
    "dtypes, attributes; digests recomputed). The index's metadata holds\n"
    "total_size, the stored bytes of all objects.\n"
    "SIZE takes a unit: B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB\n"
    "(powers of 1024), e.g. 5GB. STEM defaults to IN's name without '.zt'.\n"
    "OUTDIR is created if missing (its parent must exist). Files are written in a\n"
    "temporary folder inside OUTDIR and renamed into place at the end, the index\n"
    "last; if a shard or index name already exists in OUTDIR nothing is written.\n\n"
    "--format 2 writes a zTensor v2 multi-file model instead (docs/v2.md, Shards):\n"
    "data shards STEM-00001-of-0000N.zt (no manifest of their own; parts written\n"
    "as v2 writes them, canonical placement unless --no-canonical) and the root\n"
    "STEM.zt, whose manifest names every object and whose shard table gives each\n"
    "shard's size and whole-file digest (--shard-digest, sha256 by default: a\n"
    "signature over the root then covers every shard, spec §6.5). No index is\n"
    "written: zt_open of the root finds its shards beside it (Appendix B).\n";

namespace {

struct Shard {
  std::string name;
  std::vector<const zt_object *> objects;
  uint64_t bytes = 0;
};

std::string object_name(const zt_object *o) {
  const zt_object_info info = object_info(o);
  return std::string(info.name, info.name_len);
}

std::string stem_of(const std::string &url_or_path) {
  // An http(s):// URL's query (a signature, a token) never becomes part of
  // a file name; an s3:// key is literal.
  const bool http = is_url(url_or_path) && !zt::starts_with_ascii_nocase(url_or_path, "s3://");
  const std::string path = http ? url_or_path.substr(0, url_or_path.find_first_of("?#")) : url_or_path;
  std::string base = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  if (base.size() > 3 && base.compare(base.size() - 3, 3, ".zt") == 0) base.resize(base.size() - 3);
  return base.empty() ? "model" : base;
}

std::string shard_name(const std::string &stem, size_t i, size_t n) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "-%05zu-of-%05zu.zt", i + 1, n);
  return stem + buf;
}

}  // namespace

int cmd_split(const std::vector<std::string> &argv) {
  Args a;
  std::string err;
  if (!parse_args(argv, {"--quiet", "--json", "--no-sync", kNoCanonicalFlag},
                  {"-o", "--output", "--max-shard-size", "--prefix", "--format", "--shard-digest"}, a, err))
    return usage_error("split", err);
  uint32_t format = 1, canonical = 1;
  if (!parse_format(a, format, canonical, err)) return usage_error("split", err);
  zt_digest_alg shard_digest = ZT_DIGEST_SHA256;
  if (a.has("--shard-digest")) {
    if (format != 2) return usage_error("split", "--shard-digest applies to --format 2 only");
    const std::string d = a.get("--shard-digest");
    if (d == "xxh3")
      shard_digest = ZT_DIGEST_XXH3;
    else if (d != "sha256")
      return usage_error("split", "--shard-digest takes sha256 or xxh3");
  }
  const std::string in = a.positional.size() == 1 ? a.positional[0] : "";
  const std::string outdir = a.get("-o", a.get("--output"));
  if (in.empty() || outdir.empty() || !a.has("--max-shard-size"))
    return usage_error("split", "expected IN.zt --max-shard-size SIZE -o OUTDIR");
  if (int rc = refuse_url("split", "output", outdir)) return rc;
  uint64_t max_size = 0;
  if (!parse_byte_size(a.get("--max-shard-size"), max_size))
    return usage_error("split", "--max-shard-size takes a size such as 5GB, 500MiB or 1000000");
  const std::string stem = a.get("--prefix", stem_of(in));
  if (stem.empty() || stem.find('/') != std::string::npos || stem == "." || stem == "..")
    return usage_error("split", "--prefix takes a file name stem without '/'");
  const bool quiet = a.has("--quiet"), as_json = a.has("--json"), sync = !a.has("--no-sync");

  ztensor::File file;
  if (int rc = open_input(in, file, "split: cannot open '" + display_path(in) + "'")) return rc;
  size_t count = 0;
  zt_file_object_count(file.handle(), &count);

  // Greedy packing in manifest order: a shard closes before the object that
  // would take it past the limit.
  std::vector<Shard> shards;
  uint64_t total = 0;
  for (size_t i = 0; i < count; ++i) {
    const zt_object *o = nullptr;
    zt_file_object_at(file.handle(), i, &o);
    const uint64_t bytes = stored_bytes(o);
    if (shards.empty() || (!shards.back().objects.empty() && shards.back().bytes + bytes > max_size))
      shards.emplace_back();
    shards.back().objects.push_back(o);
    shards.back().bytes += bytes;
    total += bytes;
  }
  if (shards.empty()) shards.emplace_back();  // an empty file is one empty shard
  // Never write a set that zt_open_set would refuse (ZT_E_LIMIT).
  if (shards.size() > ZT_SET_MAX_SHARDS)
    return usage_error("split", "--max-shard-size " + a.get("--max-shard-size") + " would make " +
                                    std::to_string(shards.size()) + " shards, more than readers accept (" +
                                    std::to_string(ZT_SET_MAX_SHARDS) +
                                    ", ZT_SET_MAX_SHARDS); choose a larger size (nothing written)");
  for (size_t i = 0; i < shards.size(); ++i) shards[i].name = shard_name(stem, i, shards.size());
  // v2: the root STEM.zt instead of an index; shard names are the segment
  // between "STEM-" and ".zt", so the positional convention finds them.
  const std::string index_name = format == 2 ? stem + ".zt" : stem + ".zt.index.json";

  nlohmann::json index;  // sorted maps: no quadratic insertion for many objects
  index["metadata"] = {{"total_size", total}};
  index["weight_map"] = nlohmann::json::object();
  for (const auto &s : shards)
    for (const zt_object *o : s.objects) index["weight_map"][object_name(o)] = s.name;
  std::string index_text;
  try {
    index_text = index.dump(2) + "\n";
  } catch (const nlohmann::json::exception &e) {
    std::fprintf(stderr, "zt split: an object name is not valid UTF-8 (%s); nothing written\n",
                 shown(e.what()).c_str());
    return kFailure;
  }

  std::vector<std::string> targets;
  for (const auto &s : shards) targets.push_back(s.name);
  targets.push_back(index_name);
  SetOutput tmp;
  if (int rc = tmp.begin("split", outdir, targets)) return rc;

  zt_writer_options wo;
  zt_writer_options_init(&wo);
  wo.sync = sync ? 1 : 0;
  wo.format = format;
  wo.canonical = canonical;
  Progress progress("split", total, quiet || as_json);
  const zt_file *src = file.handle();
  for (const auto &s : shards) {
    zt_writer *w = nullptr;
    const std::string path = tmp.temp_path(s.name);
    zt_status rc = zt_writer_create(path.c_str(), &wo, &w);
    if (rc != ZT_OK) return report("split: cannot create '" + path + "'", rc);
    ztensor::Writer owner = ztensor::Writer::adopt(w);  // discards w unless finished
    rc = zt_writer_copy_file_fields(w, &src, 1);
    for (size_t i = 0; rc == ZT_OK && i < s.objects.size(); ++i) {
      rc = zt_writer_copy_object(w, s.objects[i], nullptr, 0);
      if (rc != ZT_OK) {
        progress.done();
        return report("split: object '" + object_name(s.objects[i]) + "' (nothing written)", rc);
      }
      progress.add(stored_bytes(s.objects[i]));
    }
    if (rc != ZT_OK) return report("split: file attributes (nothing written)", rc);
    rc = zt_writer_finish(owner.release());
    if (rc != ZT_OK) return report("split: cannot finish '" + path + "' (nothing written)", rc);
  }
  progress.done();
  if (format == 2) {
    std::vector<std::string> paths, names;
    for (const auto &s : shards) {
      paths.push_back(tmp.temp_path(s.name));
      names.push_back(s.name.substr(stem.size() + 1, s.name.size() - stem.size() - 4));
    }
    std::vector<const char *> path_ptrs, name_ptrs;
    for (size_t i = 0; i < paths.size(); ++i) {
      path_ptrs.push_back(paths[i].c_str());
      name_ptrs.push_back(names[i].c_str());
    }
    const zt_status rc = zt_v2_make_sharded(tmp.temp_path(index_name).c_str(), path_ptrs.data(), name_ptrs.data(),
                                            paths.size(), shard_digest, sync ? 1 : 0);
    if (rc != ZT_OK) return report("split: cannot write the v2 root (nothing written)", rc);
  } else if (int rc = tmp.write_text(index_name, index_text, sync)) {
    return rc;
  }
  if (int rc = tmp.commit(sync)) return rc;

  if (as_json) {
    nlohmann::ordered_json j{
        {"command", "split"},           {"input", display_path(in)}, {"index", outdir + "/" + index_name},
        {"shards", targets.size() - 1}, {"objects", count},          {"total_size", total}};
    std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace).c_str());
  } else if (!quiet) {
    std::printf("%s/%s: %zu objects in %zu shard(s), %s\n", outdir.c_str(), index_name.c_str(), count, shards.size(),
                human_bytes(total).c_str());
  }
  return kOk;
}

}  // namespace ztcli
