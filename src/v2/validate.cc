#include "v2/validate.h"

#include <algorithm>
#include <vector>

#include "util/error.h"
#include "v2/footer.h"
#include "v2/rule.h"
#include "v2/vocab.h"

namespace zt::v2 {

void validate_manifest(Manifest &m, uint64_t manifest_offset, uint64_t manifest_length, const std::string &pre) {
  struct Ref {
    uint32_t file;  // 0: this file; k: shard k - 1
    uint64_t offset, length;
    const Object *o;
    const Component *c;
  };
  std::vector<Ref> refs;
  refs.push_back({0, manifest_offset, manifest_length, nullptr, nullptr});
  auto shard_index = [&](const std::string &name) -> uint32_t {
    // The table is sorted by name (v2/manifest.cc).
    auto it = std::lower_bound(m.shards.begin(), m.shards.end(), name,
                               [](const Manifest::ShardEntry &e, const std::string &n) { return e.name < n; });
    if (it == m.shards.end() || it->name != name) return 0;
    return static_cast<uint32_t>(it - m.shards.begin()) + 1;
  };
  for (Object &o : m.objects) {
    for (const Component &c : o.components) {
      auto ctx = [&] { return pre + where(o.name, c.role) + ": "; };
      if (c.offset % kAlignFloor != 0 || c.offset < kAlignFloor)
        reject(Rule::BlobAlignment,
               ctx() + "blob offset " + std::to_string(c.offset) + " is not a multiple of 4096 at or after 4096");
      uint32_t file = 0;
      uint64_t region_end = m.data_end;
      if (!c.shard.empty()) {
        file = shard_index(c.shard);
        if (file == 0)
          reject(Rule::ShardRef, ctx() + "names shard '" + c.shard + "', which the shard table does not declare");
        region_end = m.shards[file - 1].size - kFooterSize;  // size >= 48 (v2/manifest.cc)
      }
      if (c.length > region_end || c.offset > region_end - c.length)
        reject(Rule::BlobBounds, ctx() + "blob [" + std::to_string(c.offset) + ", +" + std::to_string(c.length) +
                                     ") runs past the data region of " +
                                     (c.shard.empty() ? std::string("this file") : "shard '" + c.shard + "'") +
                                     " (ends at " + std::to_string(region_end) + ")");
      if (c.length > 0) refs.push_back({file, c.offset, c.length, &o, &c});
    }
    if (const LayoutDef *l = find_layout(o.format)) {
      if (!l->object_only) {
        l->validate(o, pre);
      } else {
        // Profiles the original reads unchecked: a breach refuses the
        // object (reads and verify name the rule), not the whole file.
        try {
          l->validate(o, pre);
        } catch (const Error &e) {
          if (o.status == ZT_OK) {
            o.status = e.status();
            o.error = e.what();
          }
        }
      }
    }
  }
  auto by_place = [](const Ref &a, const Ref &b) {
    if (a.file != b.file) return a.file < b.file;
    if (a.offset != b.offset) return a.offset < b.offset;
    return a.length < b.length;
  };
  if (!std::is_sorted(refs.begin(), refs.end(), by_place)) std::sort(refs.begin(), refs.end(), by_place);
  // Sorted, a partial overlap shows between neighbours once identical
  // references are passed over: keep the reference reaching furthest.
  size_t far = 0;
  for (size_t i = 1; i < refs.size(); ++i) {
    const Ref &r = refs[i], &f = refs[far];
    if (r.file != f.file) {
      far = i;
      continue;
    }
    if (r.offset == f.offset && r.length == f.length) continue;
    if (r.offset < f.offset + f.length) {
      auto name = [&](const Ref &x) { return x.o ? where(x.o->name, x.c->role) : std::string("the manifest blob"); };
      const std::string file = r.file == 0 ? "this file" : "shard '" + m.shards[r.file - 1].name + "'";
      reject(Rule::BlobOverlap, pre + name(f) + " [" + std::to_string(f.offset) + ", +" + std::to_string(f.length) +
                                    ") and " + name(r) + " [" + std::to_string(r.offset) + ", +" +
                                    std::to_string(r.length) + ") partially overlap in " + file);
    }
    if (r.offset + r.length > f.offset + f.length) far = i;
  }
}

}  // namespace zt::v2
