// zt_file_read_many: many components decoded into caller buffers in one call,
// spread over the reader's threads.
#include <cstdint>
#include <vector>

#include "handles.h"

using namespace zt;
using namespace zt::capi;

namespace {

// The request's object must be one of this file's (objects live in the
// file's array), so a stale or foreign pointer is caught without touching it.
bool belongs_to(const zt_file &f, const zt_object *o) {
  auto p = reinterpret_cast<uintptr_t>(o);
  auto first = reinterpret_cast<uintptr_t>(f.objects.data());
  auto end = reinterpret_cast<uintptr_t>(f.objects.data() + f.objects.size());
  return p >= first && p < end && (p - first) % sizeof(zt_object) == 0;
}

}  // namespace

extern "C" {

ZT_API zt_status zt_file_read_many(const zt_file *file, zt_read_request *reqs, size_t count) {
  return guard([&] {
    const zt_file &f = file_ref(file, "zt_file_read_many");
    if (!reqs && count) invalid("zt_file_read_many: reqs is NULL");
    std::vector<ReadJob> jobs(count);
    for (size_t i = 0; i < count; ++i) {
      zt_read_request &r = reqs[i];
      ReadJob &j = jobs[i];
      r.out_size = 0;
      r.status = ZT_OK;
      auto req = [i] { return "zt_file_read_many: request " + std::to_string(i); };
      if (!r.object) {
        j.status = ZT_E_INVALID_ARG;
        j.error = req() + ": object is NULL";
      } else if (!belongs_to(f, r.object)) {
        j.status = ZT_E_MISUSE;
        j.error = req() + ": object does not belong to this file (or its file was closed)";
      } else if (r.component >= r.object->obj->components.size()) {
        j.status = ZT_E_NOT_FOUND;
        j.error = req() + ": " + where(r.object->obj->name) + " has " +
                  std::to_string(r.object->obj->components.size()) + " components, index " +
                  std::to_string(r.component) + " does not exist";
      } else {
        j.object = r.object->obj;
        j.component = &r.object->obj->components[r.component];
        j.dst = r.dst;
        j.capacity = r.dst_capacity;
      }
    }
    f.reader->read_many(jobs);
    zt_status first = ZT_OK;
    for (size_t i = 0; i < count; ++i) {
      reqs[i].out_size = jobs[i].out_size;
      reqs[i].status = jobs[i].status;
      if (first == ZT_OK && jobs[i].status != ZT_OK) {
        first = jobs[i].status;
        set_error(jobs[i].error);
      }
    }
    return first;
  });
}

}  // extern "C"
