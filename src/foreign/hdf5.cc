// HDF5 files (.h5, .hdf5) through Debian's libhdf5: every dataset becomes a
// dense object named by its path ("model_weights/dense/dense/kernel:0"),
// its attributes the object's attributes, the attributes of groups file
// attributes ("GROUP/NAME"; the root's by NAME). Contiguous datasets whose
// bytes lie whole in the file are read in place (zero-copy views);
// chunked, compressed and compact ones are read through libhdf5 and its
// filters on first read, row blocks at a time.
//
// Debian's libhdf5 is built without thread safety: every libhdf5 call of
// this library runs under one process-wide mutex (hdf5_lock), and libhdf5's
// automatic error printing is turned off for the duration of each call and
// restored after it. A program that also calls libhdf5 itself, on other
// threads, must not do so while a zTensor reads an HDF5 file.
#include <cstring>
#include <memory>

#include "foreign.h"

#ifdef ZT_HAVE_HDF5
#include <hdf5.h>

#include <mutex>
#endif

namespace zt::foreign {

#ifndef ZT_HAVE_HDF5
Imported read_hdf5(const uint8_t *, size_t, const std::string &what, const std::string &, const Limits &) {
  throw format_error(what + ": this build reads no HDF5 files (configured without libhdf5: install libhdf5-dev)");
}
#else
namespace {

constexpr uint64_t kPiece = uint64_t{4} << 20;
constexpr uint64_t kMaxAttributeValues = uint64_t{1} << 16;

// Recursive: a file's handles close (under the lock) also while an open
// that holds it unwinds.
std::recursive_mutex &hdf5_mutex() {
  static std::recursive_mutex m;
  return m;
}

// Held around every libhdf5 call: the one lock, and libhdf5's error
// printing off (restored as it was).
class Hdf5Lock {
 public:
  Hdf5Lock() : lock_(hdf5_mutex()) {
    H5Eget_auto2(H5E_DEFAULT, &fn_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~Hdf5Lock() { H5Eset_auto2(H5E_DEFAULT, fn_, data_); }

 private:
  std::lock_guard<std::recursive_mutex> lock_;
  H5E_auto2_t fn_ = nullptr;
  void *data_ = nullptr;
};

// The innermost message of libhdf5's error stack.
std::string hdf5_error() {
  std::string msg;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_DOWNWARD,
      [](unsigned n, const H5E_error2_t *e, void *out) -> herr_t {
        if (n == 0 && e->desc) *static_cast<std::string *>(out) = e->desc;
        return 0;
      },
      &msg);
  H5Eclear2(H5E_DEFAULT);
  return msg.empty() ? "libhdf5 failed" : msg;
}

// An hid_t closed by its own close function.
class Id {
 public:
  Id() = default;
  Id(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  ~Id() { reset(); }
  Id(Id &&o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = -1; }
  Id &operator=(Id &&o) noexcept {
    reset();
    id_ = o.id_;
    close_ = o.close_;
    o.id_ = -1;
    return *this;
  }
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }
  void reset() {
    if (id_ >= 0 && close_) close_(id_);
    id_ = -1;
  }

 private:
  hid_t id_ = -1;
  herr_t (*close_)(hid_t) = nullptr;
};

Id checked(hid_t id, herr_t (*close)(hid_t), const std::string &ctx) {
  if (id < 0) throw format_error(ctx + ": " + hdf5_error());
  return Id(id, close);
}

struct ElementType {
  zt_dtype dtype = ZT_DTYPE_UNKNOWN;
  std::string logical;
  size_t esize = 0;
  bool big_endian = false;
  bool in_place_ok = true;  // the file's bytes are the element's bytes
};

// The zTensor type of an HDF5 datatype, or a message saying why not.
ElementType element_type(hid_t t, const std::string &ctx) {
  ElementType e;
  const H5T_class_t cls = H5Tget_class(t);
  const size_t size = H5Tget_size(t);
  e.esize = size;
  if (cls == H5T_INTEGER) {
    const bool sign = H5Tget_sign(t) == H5T_SGN_2;
    switch (size) {
      case 1:
        e.dtype = sign ? ZT_I8 : ZT_U8;
        break;
      case 2:
        e.dtype = sign ? ZT_I16 : ZT_U16;
        break;
      case 4:
        e.dtype = sign ? ZT_I32 : ZT_U32;
        break;
      case 8:
        e.dtype = sign ? ZT_I64 : ZT_U64;
        break;
      default:
        throw format_error(ctx + ": " + std::to_string(size) + "-byte integers have no zTensor storage type");
    }
    if (H5Tget_precision(t) != size * 8 || H5Tget_offset(t) != 0)
      throw format_error(ctx + ": integers with padding bits are not supported");
    e.big_endian = H5Tget_order(t) == H5T_ORDER_BE;
    return e;
  }
  if (cls == H5T_FLOAT) {
    size_t spos, epos, esize, mpos, msize;
    if (H5Tget_fields(t, &spos, &epos, &esize, &mpos, &msize) < 0) throw format_error(ctx + ": " + hdf5_error());
    const bool ieee_like = spos == size * 8 - 1 && mpos == 0 && epos == msize && epos + esize == spos;
    if (ieee_like && size == 2 && esize == 5) e.dtype = ZT_F16;
    if (ieee_like && size == 2 && esize == 8) e.dtype = ZT_BF16;
    if (ieee_like && size == 4 && esize == 8) e.dtype = ZT_F32;
    if (ieee_like && size == 8 && esize == 11) e.dtype = ZT_F64;
    if (e.dtype == ZT_DTYPE_UNKNOWN)
      throw format_error(ctx + ": a " + std::to_string(size) +
                         "-byte float of this layout has no zTensor storage type");
    e.big_endian = H5Tget_order(t) == H5T_ORDER_BE;
    return e;
  }
  if (cls == H5T_ENUM && size == 1 && H5Tget_nmembers(t) == 2) {  // h5py's bool: enum {FALSE = 0, TRUE = 1}
    char *a = H5Tget_member_name(t, 0), *b = H5Tget_member_name(t, 1);
    const bool is_bool = a && b && std::strcmp(a, "FALSE") == 0 && std::strcmp(b, "TRUE") == 0;
    H5free_memory(a);
    H5free_memory(b);
    if (is_bool) {
      e.dtype = ZT_BOOL;
      return e;
    }
  }
  if (cls == H5T_COMPOUND && H5Tget_nmembers(t) == 2) {  // h5py's complex: {r, i}
    char *a = H5Tget_member_name(t, 0), *b = H5Tget_member_name(t, 1);
    const bool ri = a && b && std::strcmp(a, "r") == 0 && std::strcmp(b, "i") == 0;
    H5free_memory(a);
    H5free_memory(b);
    if (ri && H5Tget_member_offset(t, 0) == 0 && H5Tget_member_offset(t, 1) == size / 2) {
      Id m0(H5Tget_member_type(t, 0), H5Tclose), m1(H5Tget_member_type(t, 1), H5Tclose);
      if (m0.ok() && m1.ok() && H5Tequal(m0.get(), m1.get()) > 0 && H5Tget_class(m0.get()) == H5T_FLOAT) {
        const ElementType part = element_type(m0.get(), ctx);
        if (part.dtype == ZT_F32 || part.dtype == ZT_F64) {
          e.dtype = part.dtype;
          e.logical = part.dtype == ZT_F32 ? "complex64" : "complex128";
          e.big_endian = part.big_endian;
          return e;
        }
      }
    }
  }
  static const char *const kClass[] = {"integer",  "float",     "time", "string",          "bitfield", "opaque",
                                       "compound", "reference", "enum", "variable-length", "array"};
  const char *name = cls >= 0 && cls < 11 ? kClass[cls] : "unknown";
  throw format_error(ctx + ": HDF5 " + name + " data has no zTensor storage type");
}

struct Walk {
  std::vector<std::string> datasets;
  std::vector<std::string> groups;  // besides the root
  std::string error;
};

herr_t visit_link(hid_t group, const char *name, const H5L_info_t *info, void *data) {
  Walk &w = *static_cast<Walk *>(data);
  if (info->type != H5L_TYPE_HARD) return 0;  // soft and external links: the objects are reached by their own path
  H5O_info_t oi;
  if (H5Oget_info_by_name2(group, name, &oi, H5O_INFO_BASIC, H5P_DEFAULT) < 0) {
    w.error = std::string("'") + name + "': " + hdf5_error();
    return -1;
  }
  if (oi.type == H5O_TYPE_DATASET) w.datasets.push_back(name);
  if (oi.type == H5O_TYPE_GROUP) w.groups.push_back(name);
  return 0;
}

// Attributes of an object as CBOR items (numbers, strings, 1-D arrays of
// them); `prefix` is put before each key.
void read_attributes(hid_t obj, const std::string &prefix, CborAttributes &out, const std::string &ctx) {
  H5O_info_t oi;
  if (H5Oget_info2(obj, &oi, H5O_INFO_NUM_ATTRS) < 0) throw format_error(ctx + ": " + hdf5_error());
  for (hsize_t i = 0; i < oi.num_attrs; ++i) {
    Id a = checked(H5Aopen_by_idx(obj, ".", H5_INDEX_NAME, H5_ITER_INC, i, H5P_DEFAULT, H5P_DEFAULT), H5Aclose, ctx);
    if (!a.ok()) continue;
    ssize_t n = H5Aget_name(a.get(), 0, nullptr);
    if (n < 0) throw format_error(ctx + ": " + hdf5_error());
    std::string name(static_cast<size_t>(n), '\0');
    H5Aget_name(a.get(), static_cast<size_t>(n) + 1, &name[0]);
    const std::string actx = ctx + ": attribute '" + name + "'";
    Id type = checked(H5Aget_type(a.get()), H5Tclose, actx);
    Id space = checked(H5Aget_space(a.get()), H5Sclose, actx);
    const hssize_t count = H5Sget_simple_extent_npoints(space.get());
    const int rank = H5Sget_simple_extent_ndims(space.get());
    if (count < 0 || static_cast<uint64_t>(count) > kMaxAttributeValues || rank > 1)
      throw format_error(actx + ": more than 2^16 values, or more than one dimension");
    const H5T_class_t cls = H5Tget_class(type.get());
    CborItem item;
    const bool scalar = rank == 0;
    if (!scalar) cbor_append_array_head(item, static_cast<uint64_t>(count));
    if (cls == H5T_INTEGER || cls == H5T_ENUM) {
      const bool is_unsigned = cls == H5T_INTEGER && H5Tget_sign(type.get()) == H5T_SGN_NONE;
      std::vector<int64_t> v(static_cast<size_t>(count));
      if (H5Aread(a.get(), is_unsigned ? H5T_NATIVE_ULLONG : H5T_NATIVE_LLONG, v.data()) < 0)
        throw format_error(actx + ": " + hdf5_error());
      for (int64_t x : v) {
        if (is_unsigned)
          cbor_append_uint(item, static_cast<uint64_t>(x));
        else
          cbor_append_int(item, x);
      }
    } else if (cls == H5T_FLOAT) {
      std::vector<double> v(static_cast<size_t>(count));
      if (H5Aread(a.get(), H5T_NATIVE_DOUBLE, v.data()) < 0) throw format_error(actx + ": " + hdf5_error());
      for (double x : v) cbor_append_f64(item, x);
    } else if (cls == H5T_STRING) {
      if (H5Tis_variable_str(type.get()) > 0) {
        Id mem = checked(H5Tcopy(H5T_C_S1), H5Tclose, actx);
        H5Tset_size(mem.get(), H5T_VARIABLE);
        H5Tset_cset(mem.get(), H5Tget_cset(type.get()));
        std::vector<char *> v(static_cast<size_t>(count), nullptr);
        if (H5Aread(a.get(), mem.get(), v.data()) < 0) throw format_error(actx + ": " + hdf5_error());
        for (char *s : v) cbor_append_string(item, s ? s : "");
        H5Dvlen_reclaim(mem.get(), space.get(), H5P_DEFAULT, v.data());
      } else {
        const size_t width = H5Tget_size(type.get());
        if (width == 0 || width > (1u << 20))
          throw format_error(actx + ": a fixed-length string of " + std::to_string(width) + " bytes");
        std::vector<char> v(width * static_cast<size_t>(count));
        if (H5Aread(a.get(), type.get(), v.data()) < 0) throw format_error(actx + ": " + hdf5_error());
        for (hssize_t k = 0; k < count; ++k) {
          const char *s = v.data() + static_cast<size_t>(k) * width;
          cbor_append_string(item, std::string_view(s, strnlen(s, width)));
        }
      }
    } else {
      continue;  // references, compounds, opaque: not attribute values we can show
    }
    out[prefix + name] = std::move(item);
  }
}

struct File {
  Id fapl, file;
  File() = default;
  File(File &&) = default;
  ~File() {
    Hdf5Lock lock;
    file.reset();
    fapl.reset();
  }
};

// Opens the file by path (read-only) or, for bytes in memory, as a file
// image (libhdf5 copies it).
File open_file(const uint8_t *data, size_t size, const std::string &path, const std::string &what) {
  File f;
  f.fapl = checked(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, what);
  if (path.empty() || path == "<memory>") {
    if (H5Pset_fapl_core(f.fapl.get(), 1 << 20, 0) < 0 ||
        H5Pset_file_image(f.fapl.get(), const_cast<uint8_t *>(data), size) < 0)
      throw format_error(what + ": " + hdf5_error());
    f.file = checked(H5Fopen("zt-memory-image.h5", H5F_ACC_RDONLY, f.fapl.get()), H5Fclose,
                     what + ": not a readable HDF5 file");
  } else {
    f.file =
        checked(H5Fopen(path.c_str(), H5F_ACC_RDONLY, f.fapl.get()), H5Fclose, what + ": not a readable HDF5 file");
  }
  return f;
}

}  // namespace

Imported read_hdf5(const uint8_t *data, size_t size, const std::string &what, const std::string &path, const Limits &) {
  Hdf5Lock lock;
  auto file = std::make_shared<File>(open_file(data, size, path, what));
  const bool by_path = !(path.empty() || path == "<memory>");
  hsize_t file_size = 0;
  if (by_path && (H5Fget_filesize(file->file.get(), &file_size) < 0 || file_size != size))
    throw format_error(what + ": the file changed while being opened");
  hsize_t userblock = 0;
  {
    Id fcpl = checked(H5Fget_create_plist(file->file.get()), H5Pclose, what);
    H5Pget_userblock(fcpl.get(), &userblock);
  }
  Walk w;
  if (H5Lvisit(file->file.get(), H5_INDEX_NAME, H5_ITER_INC, visit_link, &w) < 0)
    throw format_error(what + ": " + (w.error.empty() ? hdf5_error() : w.error));

  Imported r;
  r.format_name = "hdf5";
  r.keepalive = file;
  {
    Id root = checked(H5Gopen2(file->file.get(), "/", H5P_DEFAULT), H5Gclose, what);
    read_attributes(root.get(), "", r.attributes, what + ": group '/'");
    for (const std::string &g : w.groups) {
      Id gid = checked(H5Gopen2(file->file.get(), g.c_str(), H5P_DEFAULT), H5Gclose, what);
      read_attributes(gid.get(), g + "/", r.attributes, what + ": group '" + g + "'");
    }
  }
  for (const std::string &name : w.datasets) {
    const std::string ctx = what + ": dataset '" + name + "'";
    Id d = checked(H5Dopen2(file->file.get(), name.c_str(), H5P_DEFAULT), H5Dclose, ctx);
    Id type = checked(H5Dget_type(d.get()), H5Tclose, ctx);
    Id space = checked(H5Dget_space(d.get()), H5Sclose, ctx);
    Id dcpl = checked(H5Dget_create_plist(d.get()), H5Pclose, ctx);
    const ElementType et = element_type(type.get(), ctx);
    if (H5Sget_simple_extent_type(space.get()) == H5S_NULL) throw format_error(ctx + ": a dataset without a dataspace");
    const int rank = H5Sget_simple_extent_ndims(space.get());
    if (rank < 0 || rank > 64) throw format_error(ctx + ": more than 64 dimensions");
    std::vector<hsize_t> dims(static_cast<size_t>(rank));
    H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
    Tensor t;
    t.name = name;
    t.dtype = et.dtype;
    t.logical_type = et.logical;
    uint64_t numel = 1;
    for (hsize_t x : dims) {
      t.shape.push_back(x);
      numel = checked_mul(numel, x, ctx + ": shape");
    }
    t.nbytes = checked_mul(numel, et.esize, ctx + ": shape × element size");
    read_attributes(d.get(), "", t.attributes, ctx);
    const H5D_layout_t layout = H5Pget_layout(dcpl.get());
    if (layout == H5D_VIRTUAL) throw format_error(ctx + ": virtual datasets (data in other files) are not read");
    if (H5Pget_external_count(dcpl.get()) > 0)
      throw format_error(ctx + ": its data is in external files, which are not read");
    if (layout == H5D_CHUNKED) {
      const int nf = H5Pget_nfilters(dcpl.get());
      for (int k = 0; k < nf; ++k) {
        unsigned flags = 0, cd[8];
        size_t ncd = 8;
        char fname[64] = {0};
        const H5Z_filter_t id =
            H5Pget_filter2(dcpl.get(), static_cast<unsigned>(k), &flags, &ncd, cd, sizeof fname, fname, nullptr);
        if (id < 0 || H5Zfilter_avail(id) <= 0)
          throw format_error(ctx + ": HDF5 filter " + std::to_string(id) +
                             (fname[0] ? std::string(" ('") + fname + "')" : "") +
                             " is not available in this libhdf5; the dataset cannot be read");
      }
    }
    if (layout == H5D_CONTIGUOUS && by_path && et.in_place_ok) {
      const haddr_t off = H5Dget_offset(d.get());
      if (off != HADDR_UNDEF && H5Dget_storage_size(d.get()) == t.nbytes && off + userblock <= size &&
          t.nbytes <= size - (off + userblock)) {
        t.in_place = true;
        t.offset = off + userblock;
        t.big_endian = et.big_endian;
      }
    }
    // The bytes through libhdf5 (filters, fill values), in blocks of rows,
    // little-endian: the read that decode-on-read and zt convert use.
    const uint64_t nbytes = t.nbytes;
    const size_t swap = et.big_endian ? (et.logical.empty() ? et.esize : et.esize / 2) : 1;
    std::weak_ptr<File> weak = file;
    t.emit = [weak, name, ctx, dims, nbytes, swap](const PieceFn &fn) {
      if (nbytes == 0) return;
      Hdf5Lock lock;
      std::shared_ptr<File> f = weak.lock();
      if (!f) throw format_error(ctx + ": the file is closed");
      Id d = checked(H5Dopen2(f->file.get(), name.c_str(), H5P_DEFAULT), H5Dclose, ctx);
      Id type = checked(H5Dget_type(d.get()), H5Tclose, ctx);
      Id fspace = checked(H5Dget_space(d.get()), H5Sclose, ctx);
      const uint64_t rows = dims.empty() ? 1 : dims[0];
      const uint64_t row_bytes = nbytes / rows;
      const uint64_t per = std::max<uint64_t>(1, kPiece / row_bytes);
      std::vector<uint8_t> buf(static_cast<size_t>(std::min(rows, per) * row_bytes));
      for (uint64_t r0 = 0; r0 < rows; r0 += per) {
        const uint64_t k = std::min(per, rows - r0);
        Id mspace;
        if (dims.empty()) {
          mspace = checked(H5Screate(H5S_SCALAR), H5Sclose, ctx);
        } else {
          std::vector<hsize_t> start(dims.size(), 0), count(dims);
          start[0] = r0;
          count[0] = k;
          if (H5Sselect_hyperslab(fspace.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr) < 0)
            throw format_error(ctx + ": " + hdf5_error());
          mspace = checked(H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr), H5Sclose, ctx);
        }
        const size_t len = static_cast<size_t>(k * row_bytes);
        if (H5Dread(d.get(), type.get(), mspace.get(), dims.empty() ? H5S_ALL : fspace.get(), H5P_DEFAULT, buf.data()) <
            0)
          throw format_error(ctx + ": reading it failed: " + hdf5_error());
        byteswap(buf.data(), len, swap);  // the file's order is kept in memory: make it little-endian
        fn(buf.data(), len);
      }
    };
    r.tensors.push_back(std::move(t));
  }
  return r;
}
#endif  // ZT_HAVE_HDF5

}  // namespace zt::foreign
