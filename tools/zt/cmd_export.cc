// zt export: one dense object as a NumPy .npy file.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "cli.h"
#include "commands.h"
#include "le_to_host.h"  // kHostBigEndian
#include "output_guard.h"
#include "progress.h"

namespace ztcli {

const char *const kExportUsage =
    "usage: zt export FILE OBJECT -o OUT.npy [--quiet]\n\n"
    "Writes a dense object, decoded, as a NumPy .npy file (format 1.0, or 2.0\n"
    "when the shape is too long for 1.0's header; C order,\n"
    "little-endian). Dtypes map to '<f8' '<f4' '<f2' '<i8' ... '|u1' '|b1';\n"
    "logical types complex64/complex128 to '<c8'/'<c16'; fp8 types\n"
    "(f8_e4m3fn, f8_e5m2, ...) are written as their u8 bytes ('|u1'), and bf16,\n"
    "which NumPy has no dtype for, as its raw 16-bit patterns ('<u2'); both\n"
    "with a warning on stderr. Other formats (sparse, quantized) are refused.\n"
    "OUT is written to a temporary file and renamed, so a failure leaves nothing;\n"
    "a symlink at OUT is followed (its target gets the data, the link stays) and\n"
    "an existing OUT keeps its permissions. OUT may not be FILE itself.\n";

namespace {

const char *npy_descr(zt_dtype d) {
  switch (d) {
    case ZT_F64:
      return "<f8";
    case ZT_F32:
      return "<f4";
    case ZT_F16:
      return "<f2";
    case ZT_BF16:
      return "<u2";
    case ZT_I64:
      return "<i8";
    case ZT_I32:
      return "<i4";
    case ZT_I16:
      return "<i2";
    case ZT_I8:
      return "|i1";
    case ZT_U64:
      return "<u8";
    case ZT_U32:
      return "<u4";
    case ZT_U16:
      return "<u2";
    case ZT_U8:
      return "|u1";
    case ZT_BOOL:
      return "|b1";
    default:
      return nullptr;
  }
}

// Format 1.0 stores the header length in 2 bytes; a longer header (about
// 2900 dims or more) needs format 2.0 and its 4-byte length, which NumPy
// reads since 1.9. The caller refuses a header that even 4 bytes cannot give.
std::string npy_header(const std::string &descr, const uint64_t *shape, size_t ndim) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < ndim; ++i) dict += std::to_string(shape[i]) + (ndim == 1 ? "," : i + 1 < ndim ? ", " : "");
  dict += "), }";
  const bool v2 = 10 + dict.size() + 1 + 63 > 0xffff;
  const size_t prefix = v2 ? 12 : 10;
  // Pad with spaces and a final newline so that the data starts 64-aligned.
  size_t total = prefix + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  std::string h = "\x93NUMPY";
  h.push_back(v2 ? 2 : 1);
  h.push_back(0);
  const uint64_t len = dict.size();
  for (size_t i = 0; i < prefix - 8; ++i) h.push_back(static_cast<char>((len >> (8 * i)) & 0xff));
  return h + dict;
}

// The file the .npy replaces: `out` with symlinks followed, so a link keeps
// pointing at the new data. Empty (after a message) if it cannot be written.
std::string export_target(const std::string &out) {
  struct stat st;
  if (::lstat(out.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return out;
  char *real = ::realpath(out.c_str(), nullptr);
  if (!real) {
    std::fprintf(stderr, "zt export: '%s' is a symlink whose target cannot be resolved: %s\n", out.c_str(),
                 std::strerror(errno));
    return std::string();
  }
  std::string r = real;
  std::free(real);
  return r;
}

// A new temporary file beside `target`, created exclusively (O_EXCL: never
// through an attacker's symlink), with the mode `target` has now, or the
// usual 0666 & ~umask for a new file.
FILE *create_temp_beside(const std::string &target, std::string &tmp) {
  std::string tmpl = target + ".zt-export-XXXXXX";
  int fd = ::mkostemp(&tmpl[0], O_CLOEXEC);
  if (fd < 0) return nullptr;
  tmp = tmpl;
  struct stat st;
  if (::stat(target.c_str(), &st) == 0) {
    ::fchmod(fd, st.st_mode & 07777);
  } else {
    mode_t mask = ::umask(0);
    ::umask(mask);
    ::fchmod(fd, 0666 & ~mask);
  }
  FILE *fp = ::fdopen(fd, "wb");
  if (!fp) {
    ::close(fd);
    ::unlink(tmp.c_str());
  }
  return fp;
}

}  // namespace

int cmd_export(const std::vector<std::string> &argv) {
  Args a;
  std::string err;
  if (!parse_args(argv, {"--quiet"}, {"-o", "--output"}, a, err)) return usage_error("export", err);
  const std::string out = a.get("-o", a.get("--output"));
  if (a.positional.size() != 2 || out.empty()) return usage_error("export", "expected FILE OBJECT -o OUT.npy");
  if (int rc = refuse_output_is_input("export", out, {a.positional[0]})) return rc;
  FilePtr f;
  if (int rc = open_input(a.positional[0], f, "export: cannot open '" + a.positional[0] + "'")) return rc;
  zt_status st = ZT_OK;
  const std::string &name = a.positional[1];
  const zt_object *o = nullptr;
  st = zt_file_object_by_name(f.get(), name.data(), name.size(), &o);
  if (st != ZT_OK) return report("export: object '" + name + "'", st);
  const zt_object_info info = object_info(o);
  if (info.status != ZT_OK) return report("export: object '" + name + "' is damaged", info.status);
  if (std::strcmp(info.format, "dense") != 0) {
    std::fprintf(stderr, "zt export: object '%s' has format '%s'; only dense objects can be exported\n", name.c_str(),
                 info.format);
    return kFailure;
  }
  size_t idx = 0;
  st = zt_object_component_index(o, "data", &idx);
  if (st != ZT_OK) return report("export: object '" + name + "'", st);
  const zt_component_info c = component_info(o, idx);
  const char *descr = npy_descr(c.dtype);
  if (!descr) {
    std::fprintf(stderr, "zt export: object '%s': dtype '%s' has no NumPy equivalent\n", name.c_str(), c.dtype_name);
    return kFailure;
  }
  std::string d = descr;
  const std::string lt = c.logical_type ? c.logical_type : "";
  if (lt == "complex64" && c.dtype == ZT_F32) {
    d = "<c8";
  } else if (lt == "complex128" && c.dtype == ZT_F64) {
    d = "<c16";
  } else if (!lt.empty()) {
    std::fprintf(
        stderr,
        "zt export: warning: object '%s' has logical type '%s', which NumPy lacks; writing its %s storage elements\n",
        name.c_str(), lt.c_str(), c.dtype_name);
  } else if (c.dtype == ZT_BF16) {
    std::fprintf(
        stderr,
        "zt export: warning: object '%s' is bf16, which NumPy lacks; writing its bit patterns as uint16 ('<u2')\n",
        name.c_str());
  }

  // Reads hand elements over in the host's byte order: say which.
  if (kHostBigEndian && d[0] == '<') d[0] = '>';

  const std::string target = export_target(out);
  if (target.empty()) return kIo;
  std::string tmp;
  FILE *fp = create_temp_beside(target, tmp);
  if (!fp) {
    std::fprintf(stderr, "zt export: cannot create a temporary file beside '%s': %s\n", target.c_str(),
                 std::strerror(errno));
    return kIo;
  }
  auto fail_io = [&](const char *what) {
    std::fprintf(stderr, "zt export: %s '%s': %s\n", what, out.c_str(), std::strerror(errno));
    std::fclose(fp);
    std::remove(tmp.c_str());
    return kIo;
  };
  const std::string header = npy_header(d, info.shape, info.ndim);
  if (header.size() - 12 > 0xffffffffu) {
    std::fclose(fp);
    std::remove(tmp.c_str());
    std::fprintf(stderr, "zt export: object '%s' has %zu dims: too many for any .npy header\n", name.c_str(),
                 info.ndim);
    return kFailure;
  }
  if (std::fwrite(header.data(), 1, header.size(), fp) != header.size()) return fail_io("cannot write");
  Progress progress("exporting", c.decoded_length, a.has("--quiet"));
  const size_t esize = zt_dtype_size(c.dtype);
  if (c.encoding == ZT_ENCODING_RAW && esize) {
    // Raw data is read in ranges: memory stays bounded for huge tensors.
    const uint64_t count = c.decoded_length / esize, per = (uint64_t{8} << 20) / esize;
    std::vector<uint8_t> buf(static_cast<size_t>(std::min(count, per) * esize));
    for (uint64_t first = 0; first < count; first += per) {
      const uint64_t n = std::min(per, count - first);
      st = zt_component_read_range(o, idx, first, n, buf.data(), buf.size());
      if (st != ZT_OK) {
        std::fclose(fp);
        std::remove(tmp.c_str());
        return report("export: object '" + name + "'", st);
      }
      if (std::fwrite(buf.data(), 1, n * esize, fp) != n * esize) return fail_io("cannot write");
      progress.add(n * esize);
    }
  } else {
    size_t size = 0;
    st = zt_component_read(o, idx, nullptr, 0, &size);
    std::vector<uint8_t> buf;
    if (st == ZT_E_BUFFER_TOO_SMALL) {
      buf.resize(size);
      st = zt_component_read(o, idx, buf.data(), buf.size(), &size);
    }
    if (st != ZT_OK) {
      std::fclose(fp);
      std::remove(tmp.c_str());
      return report("export: object '" + name + "'", st);
    }
    if (size && std::fwrite(buf.data(), 1, size, fp) != size) return fail_io("cannot write");
    progress.add(size);
  }
  if (std::fflush(fp) != 0 || ::fsync(fileno(fp)) != 0) return fail_io("cannot write");
  if (std::fclose(fp) != 0) {
    std::remove(tmp.c_str());
    std::fprintf(stderr, "zt export: cannot write '%s': %s\n", out.c_str(), std::strerror(errno));
    return kIo;
  }
  if (std::rename(tmp.c_str(), target.c_str()) != 0) {
    std::fprintf(stderr, "zt export: cannot rename onto '%s': %s\n", out.c_str(), std::strerror(errno));
    std::remove(tmp.c_str());
    return kIo;
  }
  return kOk;
}

}  // namespace ztcli
