// zt export: one dense object as a NumPy .npy file, or (--to) the whole file
// as safetensors or GGUF (export_safetensors.cc, export_gguf.cc).
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
#include "decode_budget.h"
#include "export_foreign.h"
#include "le_to_host.h"  // kHostBigEndian
#include "output_guard.h"
#include "progress.h"
#include "temp_output.h"
#include "terminal_text.h"

namespace ztcli {

const char *const kExportUsage =
    "usage: zt export FILE OBJECT -o OUT.npy [--verify] [--quiet]\n"
    "       zt export FILE --to safetensors|gguf -o OUT [--quiet]\n\n"
    "Writes a dense object, decoded, as a NumPy .npy file (format 1.0, or 2.0\n"
    "when the shape is too long for 1.0's header; C order,\n"
    "little-endian). Dtypes map to '<f8' '<f4' '<f2' '<i8' ... '|u1' '|b1';\n"
    "logical types complex64/complex128 to '<c8'/'<c16'; fp8 types\n"
    "(f8_e4m3fn, f8_e5m2, ...) are written as their u8 bytes ('|u1'), and bf16,\n"
    "which NumPy has no dtype for, as its raw 16-bit patterns ('<u2'); both\n"
    "with a warning on stderr. Other formats (sparse, quantized) are refused.\n"
    "OUT is written to a temporary file and renamed, so a failure leaves nothing;\n"
    "a symlink at OUT is followed (its target gets the data, the link stays) and\n"
    "an existing OUT keeps its permissions. OUT may not be FILE itself.\n"
    "The data is decoded in pieces: memory stays bounded whatever its size.\n"
    "  --verify   check the object's digest as it is read; on a mismatch OUT is\n"
    "             left as it was.\n\n"
    "--to safetensors writes every object of FILE as one .safetensors file:\n"
    "dense objects of every safetensors dtype (fp8 logical types as F8_*,\n"
    "complex64 as C64), file attributes as __metadata__ (strings only), tensors\n"
    "laid out as the safetensors library does (larger dtypes first, then by\n"
    "name), the header padded to 8 bytes.\n"
    "--to gguf writes a GGUF v3 file: dense f32/f16/bf16/f64/i8..i64 objects\n"
    "(shapes reversed to GGUF's innermost-first order, at most 4 dims), objects\n"
    "of format ggml_quantized (from 'zt convert' of a GGUF) back as their ggml\n"
    "block type, file attributes as key/values (typed as docs/export.md says),\n"
    "data aligned to general.alignment (32 unless the attributes set it; a power\n"
    "of two of at most 65536). zstd data is decoded in pieces: memory stays\n"
    "bounded whatever the size.\n"
    "Anything the target cannot hold (sparse or quantized_group objects, object\n"
    "attributes, dtypes it lacks, non-string metadata for safetensors) is\n"
    "refused, naming the object or attribute, before anything is written.\n";

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

// zt export FILE --to FORMAT -o OUT: the whole file in a foreign format.
int export_whole_file(const Args &a) {
  const std::string to = a.get("--to");
  std::string out = a.get("-o", a.get("--output"));
  if (out.empty() && a.positional.size() == 2) out = a.positional[1];
  if (a.positional.empty() || a.positional.size() > (a.has("-o") || a.has("--output") ? 1u : 2u) || out.empty())
    return usage_error("export", "expected FILE --to safetensors|gguf -o OUT");
  if (to != "safetensors" && to != "gguf") return usage_error("export", "--to takes safetensors or gguf");
  if (int rc = refuse_url("export", "output", out)) return rc;
  if (int rc = refuse_output_is_input("export", out, {a.positional[0]})) return rc;
  ztensor::File f;
  if (int rc = open_input(a.positional[0], f, "export: cannot open '" + display_path(a.positional[0]) + "'")) return rc;
  // Every object is written, so decoded: a blob shared by n objects n times.
  DecodeBudget budget("export", DecodeBudget::Count::EachWrite);
  if (int rc = budget.add_file(f.handle(), "'" + display_path(a.positional[0]) + "'")) return rc;
  return to == "safetensors" ? export_safetensors(f.handle(), out, a.has("--quiet"))
                             : export_gguf(f.handle(), out, a.has("--quiet"));
}

}  // namespace

int cmd_export(const std::vector<std::string> &argv) {
  Args a;
  std::string err;
  if (!parse_args(argv, {"--quiet", "--verify"}, {"-o", "--output", "--to"}, a, err)) return usage_error("export", err);
  if (a.has("--verify")) read_options().verify = true;
  if (a.has("--to")) return export_whole_file(a);
  const std::string out = a.get("-o", a.get("--output"));
  if (a.positional.size() != 2 || out.empty()) return usage_error("export", "expected FILE OBJECT -o OUT.npy");
  if (int rc = refuse_url("export", "output", out)) return rc;
  if (int rc = refuse_output_is_input("export", out, {a.positional[0]})) return rc;
  ztensor::File f;
  if (int rc = open_input(a.positional[0], f, "export: cannot open '" + display_path(a.positional[0]) + "'")) return rc;
  zt_status st = ZT_OK;
  const std::string &name = a.positional[1];
  const zt_object *o = nullptr;
  st = zt_file_object_by_name(f.handle(), name.data(), name.size(), &o);
  if (st != ZT_OK) return report("export: object '" + name + "'", st);
  const zt_object_info info = object_info(o);
  if (info.status != ZT_OK) return report("export: object '" + name + "' is damaged", info.status);
  if (format_of(info) != "dense") {
    std::fprintf(stderr, "zt export: object '%s' has format '%s'; only dense objects can be exported\n",
                 shown(name).c_str(), shown(format_of(info)).c_str());
    return kFailure;
  }
  size_t idx = 0;
  st = zt_object_component_index(o, "data", &idx);
  if (st != ZT_OK) return report("export: object '" + name + "'", st);
  DecodeBudget budget("export", DecodeBudget::Count::EachWrite);
  if (int rc = budget.add(f.handle(), {o}, "object '" + name + "'")) return rc;
  const zt_component_info c = component_info(o, idx);
  const char *descr = npy_descr(c.dtype);
  if (!descr) {
    std::fprintf(stderr, "zt export: object '%s': dtype '%s' has no NumPy equivalent\n", shown(name).c_str(),
                 shown(dtype_name_of(c)).c_str());
    return kFailure;
  }
  std::string d = descr;
  const std::string lt(logical_type_of(c));
  if (lt == "complex64" && c.dtype == ZT_F32) {
    d = "<c8";
  } else if (lt == "complex128" && c.dtype == ZT_F64) {
    d = "<c16";
  } else if (!lt.empty()) {
    std::fprintf(
        stderr,
        "zt export: warning: object '%s' has logical type '%s', which NumPy lacks; writing its %s storage elements\n",
        shown(name).c_str(), shown(lt).c_str(), shown(dtype_name_of(c)).c_str());
  } else if (c.dtype == ZT_BF16) {
    std::fprintf(
        stderr,
        "zt export: warning: object '%s' is bf16, which NumPy lacks; writing its bit patterns as uint16 ('<u2')\n",
        shown(name).c_str());
  }

  // Reads hand elements over in the host's byte order: say which.
  if (kHostBigEndian && d[0] == '<') d[0] = '>';

  TempOutput tmp;  // removed unless committed, also on Ctrl-C (signal_cleanup.h)
  if (!tmp.open("export", out)) return kIo;
  FILE *fp = tmp.fp();
  auto fail_io = [&](const char *what) {
    std::fprintf(stderr, "zt export: %s '%s': %s\n", what, out.c_str(), std::strerror(errno));
    return kIo;
  };
  const std::string header = npy_header(d, info.shape, info.ndim);
  if (header.size() - 12 > 0xffffffffu) {
    std::fprintf(stderr, "zt export: object '%s' has %zu dims: too many for any .npy header\n", name.c_str(),
                 info.ndim);
    return kFailure;
  }
  if (std::fwrite(header.data(), 1, header.size(), fp) != header.size()) return fail_io("cannot write");
  Progress progress("exporting", c.decoded_length, a.has("--quiet"));
  // Raw or zstd, the data is streamed: memory stays bounded for huge
  // tensors; the digest (--verify) and the decoded size are checked by the
  // last piece, before the temporary file is renamed into place.
  FileStreamSink sink{fp, &progress};
  if (int rc = stream_component(o, idx, "export: object '" + name + "'", FileStreamSink::write, &sink)) {
    if (sink.failed) return fail_io("cannot write");
    return rc;
  }
  if (!tmp.commit()) return kIo;
  return kOk;
}

}  // namespace ztcli
