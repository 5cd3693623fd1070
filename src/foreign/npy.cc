// NumPy .npy (format versions 1-3) and .npz (a zip of .npy members, stored
// or deflated, read with libzip). The .npy header is a Python dict literal:
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }.

#include <cstring>
#include <memory>

#include "foreign.h"
#include "zip_layout.h"
#include "zip_member.h"

namespace zt::foreign {
namespace {

constexpr size_t kNpyPrefix = 10;                      // magic(6) + version(2) + u16 length
constexpr uint64_t kMaxNpyHeader = uint64_t{1} << 20;  // numpy itself writes a few hundred bytes
constexpr uint64_t kPiece = uint64_t{4} << 20;

struct NpyHeader {
  uint64_t data_offset = 0;  // bytes before the array
  zt_dtype dtype = ZT_DTYPE_UNKNOWN;
  std::string logical_type;
  size_t swap_esize = 1;  // element size to swap for big-endian data, 1 = none
  size_t esize = 0;       // bytes per element (complex: both parts)
  bool fortran = false;
  std::vector<uint64_t> shape;
  uint64_t nbytes = 0;
};

// The length of the whole header (prefix included) from its first bytes.
uint64_t npy_header_length(const uint8_t *p, size_t avail, const std::string &what) {
  if (avail < kNpyPrefix || std::memcmp(p, "\x93NUMPY", 6) != 0)
    throw format_error(what + ": not a .npy array (magic \\x93NUMPY missing or file truncated)");
  const uint8_t major = p[6];
  if (major == 1) return kNpyPrefix + (p[8] | (uint64_t{p[9]} << 8));
  if (major == 2 || major == 3) {
    if (avail < 12) throw format_error(what + ": truncated .npy header");
    uint64_t n = p[8] | (uint64_t{p[9]} << 8) | (uint64_t{p[10]} << 16) | (uint64_t{p[11]} << 24);
    return 12 + n;
  }
  throw format_error(what + ": unsupported .npy format version " + std::to_string(major) + "." + std::to_string(p[7]));
}

// A tiny reader for the restricted Python literal numpy writes.
class DictParser {
 public:
  DictParser(const char *p, size_t n, const std::string &what) : p_(p), end_(p + n), what_(what) {}

  NpyHeader parse() {
    NpyHeader h;
    bool have_descr = false, have_order = false, have_shape = false;
    expect('{');
    for (;;) {
      ws();
      if (peek() == '}') break;
      std::string key = str();
      ws();
      expect(':');
      ws();
      if (key == "descr") {
        if (peek() == '[') throw format_error(what_ + ": structured dtypes (record arrays) cannot be converted");
        descr(str(), h);
        have_descr = true;
      } else if (key == "fortran_order") {
        h.fortran = boolean();
        have_order = true;
      } else if (key == "shape") {
        h.shape = tuple();
        have_shape = true;
      } else {
        throw format_error(what_ + ": unexpected key '" + key + "' in the .npy header");
      }
      ws();
      if (peek() == ',') ++p_;
    }
    if (!have_descr || !have_order || !have_shape)
      throw format_error(what_ + ": .npy header lacks descr, fortran_order or shape");
    return h;
  }

 private:
  char peek() {
    if (p_ >= end_) throw format_error(what_ + ": .npy header ends early");
    return *p_;
  }
  void ws() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
  }
  void expect(char c) {
    if (peek() != c) throw format_error(what_ + ": malformed .npy header: expected '" + std::string(1, c) + "'");
    ++p_;
  }
  std::string str() {
    char q = peek();
    if (q != '\'' && q != '"') throw format_error(what_ + ": malformed .npy header: expected a string");
    ++p_;
    std::string s;
    while (peek() != q) s.push_back(*p_++);
    ++p_;
    return s;
  }
  bool boolean() {
    auto word = [&](const char *w) {
      size_t n = std::strlen(w);
      if (static_cast<size_t>(end_ - p_) >= n && std::memcmp(p_, w, n) == 0) {
        p_ += n;
        return true;
      }
      return false;
    };
    if (word("True")) return true;
    if (word("False")) return false;
    throw format_error(what_ + ": malformed .npy header: fortran_order is not True or False");
  }
  std::vector<uint64_t> tuple() {
    std::vector<uint64_t> dims;
    expect('(');
    for (;;) {
      ws();
      if (peek() == ')') break;
      if (peek() < '0' || peek() > '9')
        throw format_error(what_ + ": malformed .npy header: shape entry is not a number");
      uint64_t v = 0;
      while (peek() >= '0' && peek() <= '9') {
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, uint64_t(*p_ - '0'), &v))
          throw format_error(what_ + ": shape entry overflows 64 bits");
        ++p_;
      }
      if (peek() == 'L') ++p_;
      dims.push_back(v);
      if (dims.size() > 64) throw format_error(what_ + ": shape has more than 64 dimensions");
      ws();
      if (peek() == ',')
        ++p_;
      else if (peek() != ')')
        throw format_error(what_ + ": malformed .npy header: shape tuple");
    }
    ++p_;
    return dims;
  }
  void descr(const std::string &d, NpyHeader &h) {
    if (d.size() < 3) throw format_error(what_ + ": unsupported dtype '" + d + "'");
    const char order = d[0];
    const std::string kind = d.substr(1);
    struct Map {
      const char *kind;
      zt_dtype dtype;
      const char *logical;
      size_t esize;
    };
    static const Map kMap[] = {
        {"b1", ZT_BOOL, "", 1},         {"i1", ZT_I8, "", 1},
        {"i2", ZT_I16, "", 2},          {"i4", ZT_I32, "", 4},
        {"i8", ZT_I64, "", 8},          {"u1", ZT_U8, "", 1},
        {"u2", ZT_U16, "", 2},          {"u4", ZT_U32, "", 4},
        {"u8", ZT_U64, "", 8},          {"f2", ZT_F16, "", 2},
        {"f4", ZT_F32, "", 4},          {"f8", ZT_F64, "", 8},
        {"c8", ZT_F32, "complex64", 8}, {"c16", ZT_F64, "complex128", 16},
    };
    const Map *m = nullptr;
    for (const auto &k : kMap)
      if (kind == k.kind) m = &k;
    if (!m) throw format_error(what_ + ": dtype '" + d + "' has no zTensor storage type");
    if (order != '<' && order != '>' && order != '|' && order != '=')
      throw format_error(what_ + ": dtype '" + d + "' has an unknown byte order");
    h.dtype = m->dtype;
    h.logical_type = m->logical;
    h.esize = m->esize;
    // Importers deliver little-endian elements (zt convert turns them into
    // the host's order for the writer); complex numbers swap each part, and
    // '=' is the order of the host that wrote the file, taken as this one.
    const bool big = order == '>' || (order == '=' && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__);
    h.swap_esize = big ? zt_dtype_size(m->dtype) : 1;
  }

  const char *p_;
  const char *end_;
  const std::string &what_;
};

NpyHeader parse_npy_header(const uint8_t *p, size_t avail, const std::string &what) {
  uint64_t total = npy_header_length(p, avail, what);
  if (total > kMaxNpyHeader)
    throw format_error(what + ": .npy header length " + std::to_string(total) + " exceeds 1 MiB");
  if (total > avail) throw format_error(what + ": .npy header runs past the end of the data");
  const size_t prefix = p[6] == 1 ? kNpyPrefix : 12;
  NpyHeader h = DictParser(reinterpret_cast<const char *>(p + prefix), total - prefix, what).parse();
  h.data_offset = total;
  uint64_t numel = 1;
  for (uint64_t d : h.shape) numel = checked_mul(numel, d, what + ": shape");
  h.nbytes = checked_mul(numel, h.esize, what + ": shape × element size");
  return h;
}

// Delivers Fortran-order (column-major) elements in C (row-major) order, in
// pieces of at most kPiece bytes, byte-swapped as the header says: the input
// is read in place and only one piece is ever held, never a second copy of
// the array.
void emit_fortran_as_c(const uint8_t *in, const NpyHeader &h, const PieceFn &fn) {
  const size_t n = h.shape.size(), e = h.esize;
  if (h.nbytes == 0) return;
  std::vector<uint64_t> fstride(n), idx(n, 0);
  uint64_t s = e;
  for (size_t k = 0; k < n; ++k) {
    fstride[k] = s;
    s *= h.shape[k];
  }
  std::vector<uint8_t> piece(static_cast<size_t>(std::min<uint64_t>(h.nbytes, std::max<uint64_t>(kPiece / e, 1) * e)));
  size_t fill = 0;
  auto flush = [&] {
    byteswap(piece.data(), fill, h.swap_esize);
    fn(piece.data(), fill);
    fill = 0;
  };
  const uint64_t inner = h.shape[n - 1], inner_stride = fstride[n - 1];
  uint64_t base = 0;  // Fortran offset of idx with idx[n-1] = 0
  for (;;) {
    const uint8_t *src = in + base;
    for (uint64_t j = 0; j < inner; ++j) {
      std::memcpy(piece.data() + fill, src + j * inner_stride, e);
      fill += e;
      if (fill == piece.size()) flush();
    }
    // Advance the outer indices, last-but-one fastest.
    size_t k = n - 1;
    for (;;) {
      if (k == 0) {
        if (fill) flush();
        return;
      }
      --k;
      if (++idx[k] < h.shape[k]) {
        base += fstride[k];
        break;
      }
      base -= fstride[k] * (h.shape[k] - 1);
      idx[k] = 0;
    }
  }
}

bool needs_transpose(const NpyHeader &h) {
  if (!h.fortran) return false;
  size_t non_trivial = 0;
  for (uint64_t d : h.shape) non_trivial += d > 1;
  return non_trivial > 1;  // vectors read the same either way
}

Tensor tensor_from(const std::string &name, const NpyHeader &h) {
  Tensor t;
  t.name = name;
  t.dtype = h.dtype;
  t.logical_type = h.logical_type;
  t.shape = h.shape;
  t.nbytes = h.nbytes;
  return t;
}

}  // namespace

Imported read_npy(const uint8_t *data, size_t size, const std::string &what, const std::string &stem, const Limits &) {
  NpyHeader h = parse_npy_header(data, size, what);
  const uint64_t avail = size - h.data_offset;
  if (avail != h.nbytes)
    throw format_error(what + ": the array needs " + std::to_string(h.nbytes) +
                       " bytes after the header, the file has " + std::to_string(avail) +
                       (avail < h.nbytes ? " (truncated)" : ""));
  Imported r;
  Tensor t = tensor_from(stem, h);
  t.offset = h.data_offset;
  const uint8_t *p = data + h.data_offset;
  if (needs_transpose(h)) {
    t.emit = [p, h](const PieceFn &fn) { emit_fortran_as_c(p, h, fn); };
  } else {
    t.in_place = true;
    t.big_endian = h.swap_esize > 1;
    t.emit = [p, h](const PieceFn &fn) { emit_bytes(p, h.nbytes, h.swap_esize, fn); };
  }
  r.tensors.push_back(std::move(t));
  return r;
}

#ifdef ZT_HAVE_LIBZIP
std::shared_ptr<zip_t> open_zip(const uint8_t *data, size_t size, const std::string &what) {
  zip_error_t ze;
  zip_error_init(&ze);
  zip_source_t *src = zip_source_buffer_create(data, size, 0, &ze);
  if (!src) throw format_error(what + ": " + zip_error_strerror(&ze));
  zip_t *raw = zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &ze);
  if (!raw) {
    zip_source_free(src);
    std::string msg = zip_error_strerror(&ze);
    zip_error_fini(&ze);
    throw format_error(what + ": not a readable zip archive: " + msg);
  }
  return std::shared_ptr<zip_t>(raw, ZipCloser());
}

ZipFile open_member(zip_t *za, zip_uint64_t i, const std::string &ctx) {
  zip_file_t *f = zip_fopen_index(za, i, 0);
  if (!f) throw format_error(ctx + ": cannot open member: " + zip_strerror(za));
  return ZipFile(f);
}

size_t read_member(zip_file_t *f, uint8_t *dst, size_t n, const std::string &ctx) {
  size_t got = 0;
  while (got < n) {
    zip_int64_t r = zip_fread(f, dst + got, n - got);
    if (r < 0) throw format_error(ctx + ": cannot read member: " + zip_file_strerror(f));
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  return got;
}

ZipEntry zip_entry(zip_t *za, zip_uint64_t i, uint64_t max_size, const std::string &what) {
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat_index(za, i, 0, &st) != 0)
    throw format_error(what + ": cannot read zip entry " + std::to_string(i) + ": " + zip_strerror(za));
  ZipEntry e;
  e.name = (st.valid & ZIP_STAT_NAME) && st.name ? st.name : "";
  const std::string ctx = what + ": member '" + e.name + "'";
  if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE)
    throw format_error(ctx + ": encrypted members are not supported");
  if (!(st.valid & ZIP_STAT_COMP_METHOD) || (st.comp_method != ZIP_CM_STORE && st.comp_method != ZIP_CM_DEFLATE))
    throw format_error(ctx + ": compression method " + std::to_string(st.comp_method) +
                       " is not supported (only stored and deflated)");
  if (!(st.valid & ZIP_STAT_SIZE) || !(st.valid & ZIP_STAT_COMP_SIZE))
    throw format_error(ctx + ": the zip entry does not declare its sizes");
  // Zip bombs: the declared size is bounded by the limit and by what
  // deflate can physically produce (at most ~1032:1); the actual inflated
  // byte count is checked against it while reading.
  if (st.size > max_size)
    throw format_error(ctx + ": declared uncompressed size " + std::to_string(st.size) + " exceeds the limit of " +
                       std::to_string(max_size) + " bytes");
  if (st.comp_method == ZIP_CM_DEFLATE && st.size / 1032 > st.comp_size + 1024)
    throw format_error(ctx + ": declared uncompressed size " + std::to_string(st.size) + " is impossible for " +
                       std::to_string(st.comp_size) + " deflated bytes (zip bomb?)");
  if (st.comp_method == ZIP_CM_STORE && st.size != st.comp_size)
    throw format_error(ctx + ": stored member declares different compressed and uncompressed sizes");
  e.size = st.size;
  e.comp_size = st.comp_size;
  e.stored = st.comp_method == ZIP_CM_STORE;
  return e;
}

// A member path ending in "data.pkl" at the top or one folder down: the
// archive torch.save writes (since torch 1.6).
bool has_torch_pickle(zip_t *za) {
  const zip_int64_t count = zip_get_num_entries(za, 0);
  for (zip_int64_t i = 0; i < count; ++i) {
    const char *name = zip_get_name(za, static_cast<zip_uint64_t>(i), 0);
    if (!name) continue;
    const std::string n = name;
    if (n == "data.pkl" ||
        (n.size() > 9 && n.compare(n.size() - 9, 9, "/data.pkl") == 0 && n.find('/') == n.size() - 9))
      return true;
  }
  return false;
}

Imported read_zip(const uint8_t *data, size_t size, const std::string &what, const Limits &limits) {
  prefetch_local_headers(data, size);  // before libzip's consistency check reads them one by one
  std::shared_ptr<zip_t> za = open_zip(data, size, what);
  if (has_torch_pickle(za.get())) return read_pytorch(za, data, size, what, limits);
  return read_npz(za, data, size, what, limits);
}

Imported read_npz(std::shared_ptr<zip_t> za, const uint8_t *data, size_t size, const std::string &what,
                  const Limits &limits) {
  zip_t *raw = za.get();
  // Stored members (numpy.savez) are read in place: C-order arrays over them
  // are zero-copy where aligned; deflated ones are decoded on first read.
  const std::unordered_map<std::string, ZipDataRange> placed = zip_data_ranges(data, size);
  Imported r;
  r.format_name = "npz";
  r.keepalive = za;
  const zip_int64_t count = zip_get_num_entries(raw, 0);
  for (zip_int64_t i = 0; i < count; ++i) {
    const char *name = zip_get_name(raw, static_cast<zip_uint64_t>(i), 0);
    if (!name) throw format_error(what + ": cannot read zip entry " + std::to_string(i) + ": " + zip_strerror(raw));
    const std::string member = name;
    const std::string ctx = what + ": member '" + member + "'";
    if (!member.empty() && member.back() == '/') continue;  // a directory entry
    if (member.size() < 5 || member.compare(member.size() - 4, 4, ".npy") != 0)
      throw format_error(ctx + ": not a .npy member; refusing to drop it");
    const ZipEntry entry = zip_entry(raw, static_cast<zip_uint64_t>(i), limits.max_member, what);
    const uint64_t member_size = entry.size;
    const auto index = static_cast<zip_uint64_t>(i);
    std::vector<uint8_t> head(12);
    {
      ZipFile f = open_member(raw, index, ctx);
      size_t got = read_member(f.get(), head.data(), head.size(), ctx);
      uint64_t total = npy_header_length(head.data(), got, ctx);
      if (total > kMaxNpyHeader || total > member_size)
        throw format_error(ctx + ": .npy header length " + std::to_string(total) + " is larger than allowed");
      head.resize(static_cast<size_t>(total));
      if (total > got) got += read_member(f.get(), head.data() + got, head.size() - got, ctx);
      if (got != total) throw format_error(ctx + ": member ends inside its .npy header");
    }
    NpyHeader h = parse_npy_header(head.data(), head.size(), ctx);
    if (member_size - h.data_offset != h.nbytes)
      throw format_error(ctx + ": the array needs " + std::to_string(h.nbytes) + " bytes, the member declares " +
                         std::to_string(member_size - h.data_offset));
    Tensor t = tensor_from(member.substr(0, member.size() - 4), h);
    const auto pl = placed.find(member);
    if (entry.stored && !needs_transpose(h) && pl != placed.end() && pl->second.stored &&
        pl->second.size == member_size) {
      t.in_place = true;
      t.offset = pl->second.offset + h.data_offset;
      t.big_endian = h.swap_esize > 1;
    }
    zip_t *zraw = raw;
    t.emit = [zraw, index, h, ctx](const PieceFn &fn) {
      ZipFile f = open_member(zraw, index, ctx);
      std::vector<uint8_t> skip(static_cast<size_t>(h.data_offset));
      if (read_member(f.get(), skip.data(), skip.size(), ctx) != skip.size())
        throw format_error(ctx + ": member ends inside its header");
      auto short_read = [&](uint64_t got) {
        return format_error(ctx + ": member inflates to " + std::to_string(got) + " array bytes, " +
                            std::to_string(h.nbytes) + " declared (truncated or corrupt)");
      };
      if (needs_transpose(h)) {
        std::vector<uint8_t> all(static_cast<size_t>(h.nbytes));
        size_t got = read_member(f.get(), all.data(), all.size(), ctx);
        if (got != all.size()) throw short_read(got);
        emit_fortran_as_c(all.data(), h, fn);
      } else {
        std::vector<uint8_t> buf(static_cast<size_t>(std::min(kPiece, std::max<uint64_t>(h.nbytes, 1))));
        uint64_t done = 0;
        while (done < h.nbytes) {
          size_t want = static_cast<size_t>(std::min<uint64_t>(buf.size(), h.nbytes - done));
          size_t got = read_member(f.get(), buf.data(), want, ctx);
          if (got != want) throw short_read(done + got);
          byteswap(buf.data(), got, h.swap_esize);
          fn(buf.data(), got);
          done += got;
        }
      }
      uint8_t extra;
      if (read_member(f.get(), &extra, 1, ctx) != 0)
        throw format_error(ctx + ": member inflates to more bytes than it declares (zip bomb?)");
    };
    r.tensors.push_back(std::move(t));
  }
  return r;
}
#else
Imported read_zip(const uint8_t *, size_t, const std::string &what, const Limits &) {
  throw format_error(
      what +
      ": this zt was configured with -Dlibzip=disabled (as the s390x cross build is), so it cannot read .npz archives");
}
#endif  // ZT_HAVE_LIBZIP

}  // namespace zt::foreign
