// zt split: one .zt file → shards of bounded size plus a JSON index
// (docs/sharding.md). Every shard and the index are written in a temporary
// folder inside OUTDIR and renamed into place only when all of them are
// complete, the index last; names already in OUTDIR are refused up front,
// so a split never replaces anything.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "commands.h"
#include "progress.h"

namespace ztcli {

const char *const kSplitUsage =
    "usage: zt split IN.zt --max-shard-size SIZE -o OUTDIR [--prefix STEM]\n"
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
    "last; if a shard or index name already exists in OUTDIR nothing is written.\n";

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

std::string stem_of(const std::string &path) {
  std::string base = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  if (base.size() > 3 && base.compare(base.size() - 3, 3, ".zt") == 0) base.resize(base.size() - 3);
  return base.empty() ? "model" : base;
}

std::string shard_name(const std::string &stem, size_t i, size_t n) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "-%05zu-of-%05zu.zt", i + 1, n);
  return stem + buf;
}

// Removes the temporary folder and whatever is still in it.
struct TempFolder {
  std::string path;
  std::vector<std::string> files;
  ~TempFolder() {
    for (const auto &f : files) ::unlink((path + "/" + f).c_str());
    if (!path.empty()) ::rmdir(path.c_str());
  }
};

bool write_text_file(const std::string &path, const std::string &text, bool sync, std::string &err) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    err = std::strerror(errno);
    return false;
  }
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      err = std::strerror(errno);
      ::close(fd);
      return false;
    }
    done += static_cast<size_t>(n);
  }
  if ((sync && ::fsync(fd) != 0) || ::close(fd) != 0) {
    err = std::strerror(errno);
    return false;
  }
  return true;
}

void sync_dir(const std::string &dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

}  // namespace

int cmd_split(const std::vector<std::string> &argv) {
  Args a;
  std::string err;
  if (!parse_args(argv, {"--quiet", "--json", "--no-sync"}, {"-o", "--output", "--max-shard-size", "--prefix"}, a, err))
    return usage_error("split", err);
  const std::string in = a.positional.size() == 1 ? a.positional[0] : "";
  const std::string outdir = a.get("-o", a.get("--output"));
  if (in.empty() || outdir.empty() || !a.has("--max-shard-size"))
    return usage_error("split", "expected IN.zt --max-shard-size SIZE -o OUTDIR");
  uint64_t max_size = 0;
  if (!parse_byte_size(a.get("--max-shard-size"), max_size))
    return usage_error("split", "--max-shard-size takes a size such as 5GB, 500MiB or 1000000");
  const std::string stem = a.get("--prefix", stem_of(in));
  if (stem.empty() || stem.find('/') != std::string::npos || stem == "." || stem == "..")
    return usage_error("split", "--prefix takes a file name stem without '/'");
  const bool quiet = a.has("--quiet"), as_json = a.has("--json"), sync = !a.has("--no-sync");

  FilePtr file;
  if (int rc = open_input(in, file, "split: cannot open '" + in + "'")) return rc;
  size_t count = 0;
  zt_file_object_count(file.get(), &count);

  // Greedy packing in manifest order: a shard closes before the object that
  // would take it past the limit.
  std::vector<Shard> shards;
  uint64_t total = 0;
  for (size_t i = 0; i < count; ++i) {
    const zt_object *o = nullptr;
    zt_file_object_at(file.get(), i, &o);
    const uint64_t bytes = stored_bytes(o);
    if (shards.empty() || (!shards.back().objects.empty() && shards.back().bytes + bytes > max_size))
      shards.emplace_back();
    shards.back().objects.push_back(o);
    shards.back().bytes += bytes;
    total += bytes;
  }
  if (shards.empty()) shards.emplace_back();  // an empty file is one empty shard
  for (size_t i = 0; i < shards.size(); ++i) shards[i].name = shard_name(stem, i, shards.size());
  const std::string index_name = stem + ".zt.index.json";

  nlohmann::json index;  // sorted maps: no quadratic insertion for many objects
  index["metadata"] = {{"total_size", total}};
  index["weight_map"] = nlohmann::json::object();
  for (const auto &s : shards)
    for (const zt_object *o : s.objects) index["weight_map"][object_name(o)] = s.name;
  std::string index_text;
  try {
    index_text = index.dump(2) + "\n";
  } catch (const nlohmann::json::exception &e) {
    std::fprintf(stderr, "zt split: an object name is not valid UTF-8 (%s); nothing written\n", e.what());
    return kFailure;
  }

  struct stat st;
  if (::stat(outdir.c_str(), &st) != 0) {
    if (::mkdir(outdir.c_str(), 0777) != 0) {
      std::fprintf(stderr, "zt split: cannot create '%s': %s\n", outdir.c_str(), std::strerror(errno));
      return kIo;
    }
  } else if (!S_ISDIR(st.st_mode)) {
    std::fprintf(stderr, "zt split: '%s' exists and is not a folder\n", outdir.c_str());
    return kFailure;
  }
  std::vector<std::string> targets;
  for (const auto &s : shards) targets.push_back(s.name);
  targets.push_back(index_name);
  for (const auto &t : targets) {
    if (::lstat((outdir + "/" + t).c_str(), &st) == 0) {
      std::fprintf(stderr, "zt split: '%s/%s' already exists; nothing written (remove it or use another -o/--prefix)\n",
                   outdir.c_str(), t.c_str());
      return kFailure;
    }
  }

  TempFolder tmp;
  std::string tmpl = outdir + "/.zt-split-XXXXXX";
  if (!::mkdtemp(tmpl.data())) {
    std::fprintf(stderr, "zt split: cannot create a temporary folder in '%s': %s\n", outdir.c_str(),
                 std::strerror(errno));
    return kIo;
  }
  tmp.path = tmpl;

  zt_writer_options wo;
  zt_writer_options_init(&wo);
  wo.sync = sync ? 1 : 0;
  Progress progress("split", total, quiet || as_json);
  const zt_file *src = file.get();
  for (const auto &s : shards) {
    zt_writer *w = nullptr;
    const std::string path = tmp.path + "/" + s.name;
    zt_status rc = zt_writer_create(path.c_str(), &wo, &w);
    if (rc != ZT_OK) return report("split: cannot create '" + path + "'", rc);
    rc = zt_writer_copy_file_fields(w, &src, 1);
    for (size_t i = 0; rc == ZT_OK && i < s.objects.size(); ++i) {
      rc = zt_writer_copy_object(w, s.objects[i], nullptr, 0);
      if (rc != ZT_OK) {
        progress.done();
        zt_writer_discard(w);
        return report("split: object '" + object_name(s.objects[i]) + "' (nothing written)", rc);
      }
      progress.add(stored_bytes(s.objects[i]));
    }
    if (rc != ZT_OK) {
      zt_writer_discard(w);
      return report("split: file attributes (nothing written)", rc);
    }
    rc = zt_writer_finish(w);
    if (rc != ZT_OK) return report("split: cannot finish '" + path + "' (nothing written)", rc);
    tmp.files.push_back(s.name);
  }
  progress.done();
  if (!write_text_file(tmp.path + "/" + index_name, index_text, sync, err)) {
    std::fprintf(stderr, "zt split: cannot write the index: %s (nothing written)\n", err.c_str());
    return kIo;
  }
  tmp.files.push_back(index_name);

  // Into place, the index last: a set without its index is never mistaken
  // for a complete one. A failure takes back what was already moved.
  std::vector<std::string> moved;
  for (const auto &t : targets) {
    const std::string dst = outdir + "/" + t;
    std::string why;
    if (::lstat(dst.c_str(), &st) == 0)
      why = "it appeared meanwhile";
    else if (::rename((tmp.path + "/" + t).c_str(), dst.c_str()) != 0)
      why = std::strerror(errno);
    if (!why.empty()) {
      for (const auto &m : moved) ::unlink((outdir + "/" + m).c_str());
      std::fprintf(stderr, "zt split: cannot move '%s' into place: %s (nothing written)\n", dst.c_str(), why.c_str());
      return kIo;
    }
    moved.push_back(t);
  }
  tmp.files.clear();
  if (sync) sync_dir(outdir);

  if (as_json) {
    nlohmann::ordered_json j{{"command", "split"},           {"input", in},      {"index", outdir + "/" + index_name},
                             {"shards", targets.size() - 1}, {"objects", count}, {"total_size", total}};
    std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace).c_str());
  } else if (!quiet) {
    std::printf("%s/%s: %zu objects in %zu shard(s), %s\n", outdir.c_str(), index_name.c_str(), count, shards.size(),
                human_bytes(total).c_str());
  }
  return kOk;
}

}  // namespace ztcli
