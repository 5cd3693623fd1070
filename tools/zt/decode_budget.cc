#include "decode_budget.h"

#include <cstdio>
#include <cstring>

#include "cli.h"

namespace ztcli {

DecodeBudget::DecodeBudget(std::string cmd, Count mode)
    : cmd_(std::move(cmd)), mode_(mode), budget_(read_options().max_total_decoded) {}

std::vector<const zt_object *> objects_of(const zt_file *f) {
  size_t n = 0;
  zt_file_object_count(f, &n);
  std::vector<const zt_object *> v(n);
  for (size_t i = 0; i < n; ++i) zt_file_object_at(f, i, &v[i]);
  return v;
}

int DecodeBudget::add_file(const zt_file *f, const std::string &what) {
  if (!budget_) return kOk;
  return add(f, objects_of(f), what);
}

int DecodeBudget::add(const zt_file *f, const std::vector<const zt_object *> &objects, const std::string &what) {
  if (!budget_) return kOk;
  // A component without a declared decoded size (spec 1.1, or a 1.2 file
  // that leaves uncompressed_length out) may decode up to the per-component
  // limit: it counts as that much.
  const uint64_t per_component = read_options().max_decoded_size ? read_options().max_decoded_size : uint64_t{64} << 30;
  auto add_to_total = [&](uint64_t n) { total_ = n > UINT64_MAX - total_ ? UINT64_MAX : total_ + n; };
  for (const zt_object *o : objects) {
    zt_object_info info{};
    info.struct_size = sizeof info;
    if (zt_object_get_info(o, &info) != ZT_OK) continue;
    for (size_t k = 0; k < info.component_count; ++k) {
      zt_component_info c{};
      c.struct_size = sizeof c;
      if (zt_object_component(o, k, &c) != ZT_OK || c.encoding != ZT_ENCODING_ZSTD) continue;
      const uint64_t size = c.has_uncompressed_length ? c.decoded_length : per_component;
      if (mode_ == Count::EachWrite) {
        add_to_total(size);
        continue;
      }
      auto [it, fresh] = blobs_.emplace(std::make_tuple(f, c.offset, c.length), size);
      if (fresh) {
        add_to_total(size);
      } else if (size > it->second) {
        add_to_total(size - it->second);
        it->second = size;
      }
    }
  }
  if (total_ <= budget_) return kOk;
  std::fprintf(stderr,
               "zt %s: %s: the zstd components this command decodes come to %llu bytes in all (over every input; "
               "components without a declared size counted at --max-decoded-size), more than --max-total-decoded "
               "%llu; nothing was done\n",
               cmd_.c_str(), what.c_str(), static_cast<unsigned long long>(total_),
               static_cast<unsigned long long>(budget_));
  return kFailure;
}

int check_rewrite_budget(const char *cmd, const std::string &path) {
  if (!read_options().max_total_decoded) return kOk;
  ztensor::File f;
  if (int rc = open_input(path, f, std::string(cmd) + ": cannot open '" + display_path(path) + "'")) return rc;
  DecodeBudget budget(cmd, DecodeBudget::Count::EachWrite);
  return budget.add_file(f.handle(), "'" + display_path(path) + "'");
}

}  // namespace ztcli
