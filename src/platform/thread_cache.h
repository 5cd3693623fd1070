// One object of type T per thread and per Tag, made on first use and
// destroyed when the thread exits: the per-thread zstd contexts, scratch
// buffers and error texts. Tag tells apart two caches of one type (the last
// error and a callback's error are both strings).
//
// On POSIX this is a thread_local. On Windows it is not: mingw's GCC
// implements thread_local with emutls, and in a DLL a thread's emutls
// storage can be released before its thread_local destructors run, which
// then touch freed memory (windows-x86 under wine crashed now and then in
// ~DCtxHolder and ~basic_string as parallel_for's worker threads exited,
// docs/cross.md). There the object lives in a fiber-local storage slot
// whose callback deletes it at thread exit; the slot is freed when the
// library is unloaded.
//
// After fork(2) the child has the forking thread's objects (and leaks the
// other threads', which are never destroyed: harmless). An object that
// holds threads of its own (a zstd context with workers) must check that
// it is still in the process that made it (src/platform/process.h).
#pragma once

#ifdef _WIN32
#include <windows.h>

#include <memory>
#endif

namespace zt {

#ifndef _WIN32

// nullptr never: a thread_local exists as long as its thread.
template <class T, class Tag = T>
T *thread_cache() noexcept {
  thread_local T t;
  return &t;
}

#else

namespace detail {
template <class T>
void WINAPI delete_thread_cached(void *p) {
  delete static_cast<T *>(p);
}
template <class T, class Tag>
struct FlsSlot {
  DWORD index = ::FlsAlloc(&delete_thread_cached<T>);
  ~FlsSlot() {
    if (index != FLS_OUT_OF_INDEXES) ::FlsFree(index);
  }
};
}  // namespace detail

// nullptr when the slot or the object cannot be had (out of memory or of
// FLS slots): callers fail with ZT_E_NOMEM or do without.
template <class T, class Tag = T>
T *thread_cache() noexcept {
  static detail::FlsSlot<T, Tag> slot;
  if (slot.index == FLS_OUT_OF_INDEXES) return nullptr;
  if (void *p = ::FlsGetValue(slot.index)) return static_cast<T *>(p);
  T *made = new (std::nothrow) T();
  if (made && !::FlsSetValue(slot.index, made)) {
    delete made;
    made = nullptr;
  }
  return made;
}

#endif

}  // namespace zt
