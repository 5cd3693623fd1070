/* LD_PRELOAD shim for the CLI tests: open(2) with O_TMPFILE fails with
 * EOPNOTSUPP, as on a filesystem without it (vfat, older NFS, many FUSE
 * filesystems), so the named-temporary path of the writers is exercised on
 * any machine. Everything else goes to the real open. */
#undef _FILE_OFFSET_BITS /* both open and open64 are defined here, not one redirected to the other */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>

typedef int (*open_fn)(const char *, int, ...);

static int forward(const char *name, const char *path, int flags, mode_t mode) {
  open_fn real;
  void *sym = dlsym(RTLD_NEXT, name);
  memcpy(&real, &sym, sizeof real); /* ISO C has no object-to-function pointer cast */
  if (!sym) {
    errno = ENOSYS;
    return -1;
  }
  return real(path, flags, mode);
}

#define SHIM(name)                             \
  int name(const char *path, int flags, ...) { \
    mode_t mode = 0;                           \
    if (flags & (O_CREAT | __O_TMPFILE)) {     \
      va_list ap;                              \
      va_start(ap, flags);                     \
      mode = (mode_t)va_arg(ap, int);          \
      va_end(ap);                              \
    }                                          \
    if ((flags & O_TMPFILE) == O_TMPFILE) {    \
      errno = EOPNOTSUPP;                      \
      return -1;                               \
    }                                          \
    return forward(#name, path, flags, mode);  \
  }

SHIM(open)
SHIM(open64)
