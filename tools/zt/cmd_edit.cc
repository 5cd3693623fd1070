// zt append / zt remove / zt merge: edits that never lose data if
// interrupted. Each writes a complete new file (a temporary beside the
// destination, renamed over it on success by zt_writer_finish), copying the
// kept objects with zt_writer_copy_object, which preserves dtypes, logical
// types, encodings, attributes and unknown fields and recomputes digests.
// Until the rename, the destination is the old, complete file.
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "cli.h"
#include "commands.h"
#include "decode_budget.h"
#include "output_guard.h"
#include "platform.h"
#include "progress.h"
#include "signal_cleanup.h"
#include "terminal_text.h"

namespace ztcli {

const char *const kAppendUsage =
    "usage: zt append FILE --from OTHER.zt [--format 1.2|2 [--no-canonical]] [--quiet] [--json] [--no-sync]\n\n"
    "--format 2 writes the result as zTensor v2 (docs/v2.md, Writing).\n"
    "Adds every object of OTHER.zt to FILE, and OTHER's file attributes to\n"
    "FILE's. An object name or attribute key present in both (with a different\n"
    "value) is an error and FILE is left unchanged. FILE is rewritten to a\n"
    "temporary file and renamed into place: if interrupted, FILE is the old\n"
    "complete file.\n"
    "FILE keeps its permissions and owner; if FILE is a symlink, the file it\n"
    "points at is rewritten and the link stays. A FILE with several hard links\n"
    "is refused (a rewrite would update only this name).\n";

const char *const kRemoveUsage =
    "usage: zt remove FILE NAME... [--format 1.2|2 [--no-canonical]] [--quiet] [--json] [--no-sync]\n\n"
    "--format 2 writes the result as zTensor v2 (docs/v2.md, Writing).\n"
    "Removes the named objects from FILE (each must exist), rewriting FILE to a\n"
    "temporary file renamed into place: if interrupted, FILE is the old\n"
    "complete file. Permissions, owner, symlinks and hard links are handled as\n"
    "for append.\n";

const char *const kMergeUsage =
    "usage: zt merge INPUT... -o OUT.zt [--format 1.2|2 [--no-canonical]] [--quiet] [--json] [--no-sync]\n\n"
    "--format 2 writes the result as zTensor v2 (docs/v2.md, Writing).\n"
    "Writes every object of the inputs into OUT.zt (atomically), with the union\n"
    "of their file attributes. An INPUT is a .zt file or the index of a sharded\n"
    "set (a name ending in .json, e.g. model.zt.index.json; docs/sharding.md),\n"
    "which stands for all its shards, in set order; the index's own metadata is\n"
    "not copied. A zTensor v2 root whose parts live in shards (zt split --format 2)\n"
    "stands for itself and its shards, found beside it (docs/v2.md, Shards): one\n"
    "such root joins them back into one file.\n"
    "Give two or more inputs, or one index or v2 root. A name present in two\n"
    "inputs, or an attribute key with different values, is an error and no\n"
    "output is left behind. OUT.zt may not be one of the inputs or shards.\n";

namespace {

struct Options {
  bool quiet = false, json = false, sync = true;
  uint32_t format = 1, canonical = 1;  // --format 2 [--no-canonical]: write v2
};

std::string object_name(const zt_object *o) {
  const zt_object_info info = object_info(o);
  return std::string(info.name, info.name_len);
}

int open_all(const char *cmd, const std::vector<std::string> &paths, std::vector<ztensor::File> &out) {
  for (const auto &p : paths) {
    ztensor::File f;
    if (int rc = open_input(p, f, std::string(cmd) + ": cannot open '" + display_path(p) + "'")) return rc;
    out.push_back(std::move(f));
  }
  return kOk;
}

// A foreign file (safetensors, .npy, .npz, GGUF) opens read-only: rewriting
// it in place as a .zt would replace the user's file with another format.
int refuse_foreign_target(const char *cmd, const std::string &path, const zt_file *f) {
  const char *version = nullptr;
  if (zt_file_version(f, &version) != ZT_OK || !version || (version[0] >= '0' && version[0] <= '9')) return kOk;
  std::fprintf(stderr,
               "zt %s: '%s' is a %s file, which zt reads but never rewrites in place; 'zt convert' makes a .zt of "
               "it (nothing changed)\n",
               cmd, path.c_str(), version);
  return kFailure;
}

std::vector<const zt_file *> raw_files(const std::vector<ztensor::File> &files) {
  std::vector<const zt_file *> raw;
  for (const auto &f : files) raw.push_back(f.handle());
  return raw;
}

// Writes `objects` (from `files`) to `out`, with the union of the files'
// attributes; nothing is left at `out` (beyond what was there) on failure.
int write_objects(const char *cmd, const std::string &out, const std::vector<const zt_file *> &raw,
                  std::vector<const zt_object *> objects, const Options &o) {
  // A canonical v2 file puts its blobs in name order: given in that order,
  // the writer places each one once instead of reordering them at finish.
  if (o.format == 2)
    std::stable_sort(objects.begin(), objects.end(),
                     [](const zt_object *a, const zt_object *b) { return object_name(a) < object_name(b); });
  std::set<std::string> names;
  uint64_t total = 0;
  for (const zt_object *obj : objects) {
    std::string n = object_name(obj);
    if (!names.insert(n).second) {
      std::fprintf(stderr, "zt %s: object '%s' is in more than one input; names must be unique (nothing written)\n",
                   cmd, shown(n).c_str());
      return kFailure;
    }
    total += stored_bytes(obj);
  }
  // Every object written is decoded (a shared blob once per object), from
  // all the inputs and shards together: one budget for the command.
  DecodeBudget budget(cmd, DecodeBudget::Count::EachWrite);
  if (int rc = budget.add(nullptr, objects, "its inputs")) return rc;
  zt_writer_options wo;
  zt_writer_options_init(&wo);
  wo.sync = o.sync ? 1 : 0;
  wo.format = o.format;
  wo.canonical = o.canonical;
  // The destination is usually an input: the result is re-read and checked
  // before it replaces anything.
  wo.verify_before_replace = 1;
  const SignalCleanup on_signal(SignalCleanup::kOutputFile, replaced_target(out));
  zt_writer *w = nullptr;
  zt_status st = zt_writer_create(out.c_str(), &wo, &w);
  if (st != ZT_OK) return report(std::string(cmd) + ": cannot create '" + out + "'", st);
  ztensor::Writer owner = ztensor::Writer::adopt(w);  // discards w unless finished
  st = zt_writer_copy_file_fields(w, raw.data(), raw.size());
  if (st != ZT_OK) return report(std::string(cmd) + ": file attributes", st);
  Progress progress(cmd, total, o.quiet || o.json);
  for (const zt_object *obj : objects) {
    st = zt_writer_copy_object(w, obj, nullptr, 0);
    if (st != ZT_OK) {
      progress.done();
      return report(std::string(cmd) + ": object '" + object_name(obj) + "'", st);
    }
    progress.add(stored_bytes(obj));
  }
  progress.done();
  st = zt_writer_finish(owner.release());
  if (st != ZT_OK) return report(std::string(cmd) + ": cannot finish '" + out + "'", st);
  return kOk;
}

void summary(const char *cmd, const std::string &out, size_t objects, const Options &o, const char *extra_key,
             const std::vector<std::string> &extra) {
  struct stat st;
  const uint64_t size = ::stat(out.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
  if (o.json) {
    nlohmann::ordered_json j{{"command", cmd}, {"output", out}, {"objects", objects}, {"output_bytes", size}};
    j[extra_key] = extra;
    if (std::string(extra_key) == "inputs")  // merge's inputs may be URLs
      for (auto &v : j[extra_key]) v = display_path(v.get<std::string>());
    std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace).c_str());
  } else if (!o.quiet) {
    std::printf("%s: %zu objects, %s\n", out.c_str(), objects, human_bytes(size).c_str());
  }
}

bool parse_common(const char *cmd, const std::vector<std::string> &argv, const std::vector<std::string> &with_value,
                  Args &a, Options &o, int &rc) {
  std::string err;
  std::vector<std::string> values = with_value;
  values.push_back(kFormatOption);
  if (!parse_args(argv, {"--quiet", "--json", "--no-sync", kNoCanonicalFlag}, values, a, err) ||
      !parse_format(a, o.format, o.canonical, err)) {
    rc = usage_error(cmd, err);
    return false;
  }
  o.quiet = a.has("--quiet");
  o.json = a.has("--json");
  o.sync = !a.has("--no-sync");
  return true;
}

// append and remove replace the file they read from. Windows cannot replace
// a file that is open (MoveFileExW fails with ERROR_ACCESS_DENIED even when
// it is shared for deletion), so the rewrite would always fail at the end;
// it is refused before anything is written instead.
int refuse_in_place(const char *cmd, const std::string &path) {
  if (can_replace_open_file()) return kOk;
  std::fprintf(stderr,
               "zt %s: rewriting '%s' in place is not supported on Windows: Windows cannot replace a file while "
               "it is being read; write the result to a new file with zt merge ... -o NEW.zt (nothing changed)\n",
               cmd, path.c_str());
  return kFailure;
}

}  // namespace

int cmd_append(const std::vector<std::string> &argv) {
  Args a;
  Options o;
  int rc = kOk;
  if (!parse_common("append", argv, {"--from"}, a, o, rc)) return rc;
  if (a.positional.size() != 1 || !a.has("--from")) return usage_error("append", "expected FILE --from OTHER.zt");
  if (int rc = refuse_url("append", "file", a.positional[0])) return rc;
  if (int rc = refuse_output_is_input("append", a.positional[0], {a.get("--from")})) return rc;
  if (int rc = refuse_hard_linked("append", a.positional[0])) return rc;
  if (int rc = refuse_in_place("append", a.positional[0])) return rc;
  std::vector<ztensor::File> files;
  if ((rc = open_all("append", {a.positional[0], a.get("--from")}, files))) return rc;
  if ((rc = refuse_foreign_target("append", a.positional[0], files[0].handle()))) return rc;
  std::vector<const zt_object *> objects = objects_of(files[0].handle());
  std::vector<std::string> added;
  for (const zt_object *obj : objects_of(files[1].handle())) {
    objects.push_back(obj);
    added.push_back(object_name(obj));
  }
  if ((rc = write_objects("append", a.positional[0], raw_files(files), objects, o))) return rc;
  summary("append", a.positional[0], objects.size(), o, "added", added);
  return kOk;
}

int cmd_remove(const std::vector<std::string> &argv) {
  Args a;
  Options o;
  int rc = kOk;
  if (!parse_common("remove", argv, {}, a, o, rc)) return rc;
  if (a.positional.size() < 2) return usage_error("remove", "expected FILE NAME...");
  if (int rc = refuse_url("remove", "file", a.positional[0])) return rc;
  if (int rc = refuse_hard_linked("remove", a.positional[0])) return rc;
  if (int rc = refuse_in_place("remove", a.positional[0])) return rc;
  std::vector<ztensor::File> files;
  if ((rc = open_all("remove", {a.positional[0]}, files))) return rc;
  if ((rc = refuse_foreign_target("remove", a.positional[0], files[0].handle()))) return rc;
  std::set<std::string> drop(a.positional.begin() + 1, a.positional.end());
  for (const auto &n : drop) {
    const zt_object *obj = nullptr;
    zt_status st = zt_file_object_by_name(files[0].handle(), n.data(), n.size(), &obj);
    if (st != ZT_OK) return report("remove: object '" + n + "' (nothing changed)", st);
  }
  std::vector<const zt_object *> kept;
  for (const zt_object *obj : objects_of(files[0].handle()))
    if (!drop.count(object_name(obj))) kept.push_back(obj);
  if ((rc = write_objects("remove", a.positional[0], raw_files(files), kept, o))) return rc;
  summary("remove", a.positional[0], kept.size(), o, "removed", std::vector<std::string>(drop.begin(), drop.end()));
  return kOk;
}

// The files a v2 root's shards are (positional, beside it; docs/v2.md),
// empty for any other file or one that cannot be opened. A root URL's are
// named as if local (only to tell that it has shards: OUT is local).
std::vector<std::string> v2_shard_files(const std::string &root) {
  if (is_set_index(root)) return {};
  zt_file *f = nullptr;
  if ((is_url(root) ? zt_open_url(root.c_str(), nullptr, nullptr, &f) : zt_open(root.c_str(), nullptr, &f)) != ZT_OK)
    return {};
  const ztensor::File file = ztensor::File::adopt(f);
  char *json = nullptr;
  if (zt_file_to_json(f, &json) != ZT_OK) return {};
  const nlohmann::json j = nlohmann::json::parse(json, json + std::strlen(json), nullptr, false);
  zt_free(json);
  std::vector<std::string> out;
  if (!j.is_object() || !j.contains("shards") || !j["shards"].is_object()) return out;
  const size_t slash = root.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "" : root.substr(0, slash + 1);
  std::string stem = slash == std::string::npos ? root : root.substr(slash + 1);
  if (stem.size() > 3 && stem.compare(stem.size() - 3, 3, ".zt") == 0) stem.resize(stem.size() - 3);
  for (const auto &item : j["shards"].items()) out.push_back(dir + stem + "-" + item.key() + ".zt");
  return out;
}

int cmd_merge(const std::vector<std::string> &argv) {
  Args a;
  Options o;
  int rc = kOk;
  if (!parse_common("merge", argv, {"-o", "--output"}, a, o, rc)) return rc;
  const std::string out = a.get("-o", a.get("--output"));
  const std::vector<std::string> root_shards =
      a.positional.size() == 1 ? v2_shard_files(a.positional[0]) : std::vector<std::string>();
  const bool one_set = a.positional.size() == 1 && (is_set_index(a.positional[0]) || !root_shards.empty());
  if ((a.positional.size() < 2 && !one_set) || out.empty())
    return usage_error("merge", "expected INPUT... (two or more, or one set index or v2 root) -o OUT.zt");
  if (int rc = refuse_url("merge", "output", out)) return rc;
  // Open sets first: their shards are inputs too, which OUT must not be.
  std::vector<ztensor::Set> sets;
  std::vector<std::string> guarded = a.positional;
  guarded.insert(guarded.end(), root_shards.begin(), root_shards.end());
  for (const auto &p : a.positional) {
    if (!is_set_index(p)) continue;
    ztensor::Set s;
    if ((rc = open_set_input(p, s, "merge: cannot open set '" + display_path(p) + "'"))) return rc;
    for (const auto &shard : shard_paths(p, s.handle())) guarded.push_back(shard);
    sets.push_back(std::move(s));
  }
  if (int rc = refuse_output_is_input("merge", out, guarded)) return rc;
  std::vector<ztensor::File> files;
  std::vector<const zt_file *> attribute_sources;
  std::vector<const zt_object *> objects;
  size_t next_set = 0;
  for (const auto &p : a.positional) {
    if (is_set_index(p)) {
      const zt_set *s = sets[next_set++].handle();
      size_t n = 0;
      zt_set_shard_count(s, &n);
      for (size_t i = 0; i < n; ++i) {
        const zt_file *f = nullptr;
        zt_set_shard_at(s, i, &f, nullptr);
        attribute_sources.push_back(f);
        for (const zt_object *obj : objects_of(f)) objects.push_back(obj);
      }
      continue;
    }
    ztensor::File f;
    if ((rc = open_input(p, f, "merge: cannot open '" + display_path(p) + "'"))) return rc;
    attribute_sources.push_back(f.handle());
    for (const zt_object *obj : objects_of(f.handle())) objects.push_back(obj);
    files.push_back(std::move(f));
  }
  if ((rc = write_objects("merge", out, attribute_sources, objects, o))) return rc;
  summary("merge", out, objects.size(), o, "inputs", a.positional);
  return kOk;
}

}  // namespace ztcli
