// The structs behind the opaque C handles, the registry that recognises
// live ones, and the guard every exported function runs its body through:
// no exception crosses the ABI, every failure becomes a status plus the
// thread-local detail message.
#pragma once

#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "container/memory_sink.h"
#include "reader.h"
#include "struct_size.h"
#include "util/error.h"
#include "util/redact_url.h"
#include "writer.h"
#include "ztensor.h"

namespace zt::capi {

constexpr uint32_t kFileTag = 0x5a544631;    // "ZTF1"
constexpr uint32_t kObjectTag = 0x5a544f31;  // "ZTO1"
constexpr uint32_t kWriterTag = 0x5a545731;  // "ZTW1"

}  // namespace zt::capi

struct zt_object {
  uint32_t tag = zt::capi::kObjectTag;
  const zt_file *file = nullptr;
  const zt::Object *obj = nullptr;
  const zt::Reader *reader = nullptr;
};

struct zt_file {
  uint32_t tag = zt::capi::kFileTag;
  std::shared_ptr<zt::Reader> reader;
  std::vector<zt_object> objects;
};

struct zt_writer {
  uint32_t tag = zt::capi::kWriterTag;
  std::unique_ptr<zt::Writer> writer;
  zt::MemorySink *memory = nullptr;  // the writer's sink, for a memory writer
};

namespace zt::capi {

// Live handles: a pointer not registered is closed or foreign, and is
// reported as ZT_E_MISUSE without being dereferenced.
void register_handle(const void *h);
bool unregister_handle(const void *h);
bool is_live(const void *h);
// The object array of a live file: a zt_object pointer is checked against
// these ranges before it is dereferenced, so one kept past zt_close() (or a
// foreign pointer) is reported as ZT_E_MISUSE instead of read after free.
void register_objects(const zt_object *begin, size_t count);
void unregister_objects(const zt_object *begin);
// True for an element of a registered array whose file is still open.
bool is_live_object(const zt_object *o);

// zt_open_options (NULL = defaults; an older caller's smaller struct keeps
// the defaults of fields it lacks) as the reader's options.
ReaderOptions to_reader_options(const zt_open_options *o);
// Wraps an open reader in a new registered zt_file handle.
zt_status finish_open(std::shared_ptr<Reader> reader, zt_file **out);

void set_error(const std::string &msg);
void clear_error();

// Runs body; maps exceptions to statuses and records the message.
template <typename F>
zt_status guard(F &&body) noexcept {
  try {
    return body();
  } catch (const zt::Error &e) {
    set_error(e.what());
    return e.status();
  } catch (const std::bad_alloc &) {
    set_error("out of memory");
    return ZT_E_NOMEM;
  } catch (const std::exception &e) {
    set_error(std::string("internal error: ") + e.what());
    return ZT_E_INTERNAL;
  } catch (...) {
    set_error("internal error: unknown exception");
    return ZT_E_INTERNAL;
  }
}

[[noreturn]] inline void invalid(const char *what) {
  zt::fail(ZT_E_INVALID_ARG, what);
}

// Calls that take a local path (zt_open, zt_writer_create, zt_migrate)
// refuse a URL (http(s)://, s3://, any scheme://) before anything quotes it: the message
// shows it redacted (util/redact_url.h), and no "./http:/host/..." file or
// temporary is ever made. `instead` names the call that reads URLs, if any.
inline void refuse_url_path(const char *fn, const char *role, const char *path, const char *instead) {
  if (!zt::looks_like_url(path)) return;
  zt::fail(ZT_E_INVALID_ARG, std::string(fn) + ": the " + role + " '" + zt::printable(zt::redact_url_text(path)) +
                                 "' is a URL, and " + fn + " works on local files" +
                                 (instead ? std::string(" (read a URL with ") + instead + ")" : std::string()));
}

const zt_file &file_ref(const zt_file *f, const char *fn);
zt_writer &writer_ref(zt_writer *w, const char *fn);
const zt_object &object_ref(const zt_object *o, const char *fn);
const zt::Component &component_ref(const zt_object &o, size_t index, const char *fn);

// Copies a string into malloc'd memory the caller frees with zt_free.
char *dup_string(const std::string &s);
uint8_t *dup_bytes(const std::string &s);

// Turns a status of another exported call into an exception, keeping its
// message.
inline void ok_or_throw(zt_status st) {
  if (st != ZT_OK) fail(st, zt_last_error());
}

// Declares an object for a one-call add (zt_writer_add_dense, _csr, _coo,
// _quantized_group) and, if the call fails before its first blob (a wrong
// size, a logical type over the wrong dtype, a bad encoding or digest, a
// blob still streaming), forgets it again: such a call promises that
// nothing is written, and an object without its components would break the
// format.
class NewObject {
 public:
  NewObject(zt_writer *w, const std::string &name, const char *format, const uint64_t *shape, size_t ndim)
      : w_(w), name_(name) {
    ok_or_throw(zt_writer_begin_object(w, name.data(), name.size(), format, shape, ndim));
    armed_ = true;
  }
  ~NewObject() {
    if (armed_) w_->writer->drop_object_if_empty(name_);
  }
  void keep() { armed_ = false; }
  NewObject(const NewObject &) = delete;
  NewObject &operator=(const NewObject &) = delete;

 private:
  zt_writer *w_;
  std::string name_;
  bool armed_ = false;
};

}  // namespace zt::capi
