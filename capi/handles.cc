#include "handles.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <shared_mutex>
#include <unordered_set>

#include "platform/process.h"
#include "platform/thread_cache.h"

namespace zt::capi {
namespace {

struct Registry {
  std::shared_mutex mu;
  std::unordered_set<const void *> live;
  std::map<uintptr_t, size_t> objects;  // array start → element count
};

// fork(2) copies the lock as it is: held by a thread that does not exist in
// the child, it would stay held there forever, and the child's first open
// or close would hang. The lock is taken around fork, so the maps are
// consistent, and the child gets a fresh one (the copy names the parent's
// thread as its writer: glibc would not let the child unlock it).
void lock_for_fork();
void unlock_in_parent();
void renew_in_child();

Registry &registry() {
  static Registry *r = [] {
    auto *made = new Registry;  // never destroyed: handles may outlive statics
    at_fork(lock_for_fork, unlock_in_parent, renew_in_child);
    return made;
  }();
  return *r;
}

void lock_for_fork() {
  registry().mu.lock();
}
void unlock_in_parent() {
  registry().mu.unlock();
}
void renew_in_child() {
  // The old lock's memory is simply reused: destroying a held rwlock is
  // undefined, and it owns no other resource.
  new (&registry().mu) std::shared_mutex;
}

// The last error of this thread (thread_cache: not a thread_local
// std::string, whose destructor a Windows DLL cannot run safely at thread
// exit, docs/cross.md).
struct LastErrorTag;
std::string *error_text() noexcept {
  return thread_cache<std::string, LastErrorTag>();
}

}  // namespace

void register_handle(const void *h) {
  auto &r = registry();
  std::unique_lock<std::shared_mutex> lock(r.mu);
  r.live.insert(h);
}

bool unregister_handle(const void *h) {
  auto &r = registry();
  std::unique_lock<std::shared_mutex> lock(r.mu);
  return r.live.erase(h) != 0;
}

bool is_live(const void *h) {
  auto &r = registry();
  std::shared_lock<std::shared_mutex> lock(r.mu);
  return r.live.count(h) != 0;
}

void register_objects(const zt_object *begin, size_t count) {
  if (count == 0) return;
  auto &r = registry();
  std::unique_lock<std::shared_mutex> lock(r.mu);
  r.objects[reinterpret_cast<uintptr_t>(begin)] = count;
}

void unregister_objects(const zt_object *begin) {
  auto &r = registry();
  std::unique_lock<std::shared_mutex> lock(r.mu);
  r.objects.erase(reinterpret_cast<uintptr_t>(begin));
}

bool is_live_object(const zt_object *o) {
  const auto p = reinterpret_cast<uintptr_t>(o);
  auto &r = registry();
  // One lock for both checks: enumerating a big file calls this a few times
  // per object.
  std::shared_lock<std::shared_mutex> lock(r.mu);
  auto it = r.objects.upper_bound(p);
  if (it == r.objects.begin()) return false;
  --it;
  const uintptr_t off = p - it->first;
  if (off % sizeof(zt_object) != 0 || off / sizeof(zt_object) >= it->second) return false;
  // Inside a registered array, so safe to read; its file must be open too.
  return o->tag == kObjectTag && r.live.count(o->file) != 0;
}

void set_error(const std::string &msg) {
  try {
    if (std::string *e = error_text()) *e = msg;
  } catch (...) {
    // Keep the old message rather than throw across the ABI.
  }
}

void clear_error() {
  if (std::string *e = error_text()) e->clear();
}

const char *last_error() {
  const std::string *e = error_text();
  return e ? e->c_str() : "";
}

const zt_file &file_ref(const zt_file *f, const char *fn) {
  if (!f) fail(ZT_E_INVALID_ARG, std::string(fn) + ": file handle is NULL");
  if (!is_live(f) || f->tag != kFileTag)
    fail(ZT_E_MISUSE, std::string(fn) + ": file handle is closed or not a zt_file");
  return *f;
}

zt_writer &writer_ref(zt_writer *w, const char *fn) {
  if (!w) fail(ZT_E_INVALID_ARG, std::string(fn) + ": writer handle is NULL");
  if (!is_live(w) || w->tag != kWriterTag)
    fail(ZT_E_MISUSE, std::string(fn) + ": writer handle is finished, discarded or not a zt_writer");
  return *w;
}

const zt_object &object_ref(const zt_object *o, const char *fn) {
  if (!o) fail(ZT_E_INVALID_ARG, std::string(fn) + ": object is NULL");
  // Objects live inside their file: a pointer outside every open file's
  // object array is stale or foreign, and is not dereferenced.
  if (!is_live_object(o))
    fail(ZT_E_MISUSE, std::string(fn) + ": object handle is stale (file closed) or not a zt_object");
  return *o;
}

const zt::Component &component_ref(const zt_object &o, size_t index, const char *fn) {
  if (index >= o.obj->components.size())
    fail(ZT_E_NOT_FOUND, std::string(fn) + ": " + where(o.obj->name) + " has " +
                             std::to_string(o.obj->components.size()) + " components, index " + std::to_string(index) +
                             " does not exist");
  return o.obj->components[index];
}

char *dup_string(const std::string &s) {
  char *p = static_cast<char *>(std::malloc(s.size() + 1));
  if (!p) throw std::bad_alloc();
  std::memcpy(p, s.data(), s.size());
  p[s.size()] = '\0';
  return p;
}

uint8_t *dup_bytes(const std::string &s) {
  auto *p = static_cast<uint8_t *>(std::malloc(s.size() ? s.size() : 1));
  if (!p) throw std::bad_alloc();
  if (!s.empty()) std::memcpy(p, s.data(), s.size());
  return p;
}

}  // namespace zt::capi
