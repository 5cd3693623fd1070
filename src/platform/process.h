// Which process this is, for objects that hold threads or locks and may be
// inherited by a forked child (issue 37). The child gets a copy of the
// parent's memory but only the thread that called fork: a thread an object
// started is not there to join, a mutex another thread held stays locked
// forever, and joining, detaching or destroying either (pthread_join on a
// thread id that the child has since reused, pthread_cond_destroy waiting
// for waiters that are gone) aborts or hangs. Such objects remember the
// process that made them and, in any other, leave that state alone (leak
// it: a few hundred bytes) and work without it. A pid check rather than a
// pthread_atfork handler: it also sees children made by clone() or
// _Fork(), which run no handlers, and needs no registry of live objects.
#pragma once

namespace zt {

// Cheap enough per call that matters here (a system call: ~50 ns):
// getpid(), GetCurrentProcessId() (src/platform/posix/process.cc,
// src/platform/win32/process.cc).
unsigned long current_process_id() noexcept;

// Registers functions run around fork(2): before it in the forking thread,
// after it in the parent and in the child (pthread_atfork). Nothing on
// Windows, which has no fork.
void at_fork(void (*prepare)(), void (*parent)(), void (*child)()) noexcept;

}  // namespace zt
