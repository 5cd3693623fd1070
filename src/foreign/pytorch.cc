// PyTorch checkpoints: the zip archive torch.save writes since torch 1.6
// (PREFIX/data.pkl, the tensors' storages as PREFIX/data/KEY, optionally
// PREFIX/byteorder), read through the restricted pickle interpreter of
// pickle.h; nothing of the pickle is ever executed. Every tensor reachable
// from the pickled object (a state dict, or dicts and lists nesting them)
// becomes a dense object named by its dotted path ("state_dict.fc.weight").
// Each tensor gets bytes of its own, read from its storage member when it
// is first read: views with an offset or strides are copied to C order.
#include <cstring>
#include <map>
#include <memory>
#include <unordered_map>

#include "foreign.h"
#include "pickle.h"
#include "zip_layout.h"
#include "zip_member.h"

namespace zt::foreign {

Imported read_pickle_file(const uint8_t *data, size_t size, const std::string &what, const Limits &) {
  if (is_legacy_torch_pickle(data, size))
    throw format_error(what +
                       ": a PyTorch checkpoint in the legacy format (torch before 1.6, or "
                       "_use_new_zipfile_serialization=False) is not read; load it with torch and save it again with "
                       "torch.save, which writes the zip format");
  throw format_error(what + ": a bare pickle, not a PyTorch zip checkpoint; only torch.save's zip format is read");
}

#ifdef ZT_HAVE_LIBZIP
namespace {

constexpr uint64_t kPiece = uint64_t{4} << 20;
constexpr size_t kMaxDepth = 64;

struct NamedTensor {
  std::string name;
  uint32_t tensor;
};

// Walks the pickled object: each container once (a pickle can make a list
// hold itself, or a DAG with exponentially many paths), tensors at every
// path that reaches them (tied weights under two names).
class Namer {
 public:
  Namer(const Pickle &pk, const std::string &what) : pk_(pk), what_(what), seen_(pk.values.size(), false) {}
  std::vector<NamedTensor> run() {
    walk(pk_.root, "", 0);
    return std::move(out_);
  }

 private:
  static bool container(PyValue::Kind k) { return k == PyValue::Dict || k == PyValue::List || k == PyValue::Tuple; }
  std::string key_text(uint32_t k) const {
    const PyValue &v = pk_.values[k];
    if (v.kind == PyValue::Str || v.kind == PyValue::Bytes) return pk_.strings[v.ref];
    if (v.kind == PyValue::Int) return std::to_string(v.i);
    throw format_error(what_ + ": a dict holding tensors under a key that is not a string or an integer");
  }
  static std::string join(const std::string &prefix, const std::string &k) {
    return prefix.empty() ? k : prefix + "." + k;
  }
  void walk(uint32_t v, const std::string &path, size_t depth) {
    const PyValue &val = pk_.values[v];
    if (val.kind == PyValue::Tensor) {
      out_.push_back({path.empty() ? std::string("tensor") : path, val.ref});
      return;
    }
    if (!container(val.kind) || seen_[v]) return;
    if (depth >= kMaxDepth) throw format_error(what_ + ": the pickled object nests deeper than 64 levels");
    seen_[v] = true;
    const std::vector<uint32_t> &items = pk_.lists[val.ref];
    if (val.kind == PyValue::Dict) {
      for (size_t i = 0; i + 1 < items.size(); i += 2) {
        const PyValue::Kind vk = pk_.values[items[i + 1]].kind;
        if (vk != PyValue::Tensor && !container(vk)) continue;  // numbers, strings: not tensors
        walk(items[i + 1], join(path, key_text(items[i])), depth + 1);
      }
    } else {
      for (size_t i = 0; i < items.size(); ++i) walk(items[i], join(path, std::to_string(i)), depth + 1);
    }
  }

  const Pickle &pk_;
  const std::string &what_;
  std::vector<bool> seen_;
  std::vector<NamedTensor> out_;
};

struct StorageMember {
  zip_uint64_t index = 0;
  uint64_t size = 0;
  bool stored = false;
  uint64_t in_file = UINT64_MAX;  // where a stored member's bytes start in the archive, if known
};

// Skips `n` bytes of an open member (seeks a stored one, reads a deflated one).
void skip_member(zip_file_t *f, uint64_t n, bool stored, const std::string &ctx) {
  if (n == 0) return;
  if (stored && zip_fseek(f, static_cast<zip_int64_t>(n), SEEK_SET) == 0) return;
  std::vector<uint8_t> buf(static_cast<size_t>(std::min(n, kPiece)));
  while (n) {
    const size_t k = static_cast<size_t>(std::min<uint64_t>(n, buf.size()));
    if (read_member(f, buf.data(), k, ctx) != k) throw format_error(ctx + ": the storage member ends early");
    n -= k;
  }
}

}  // namespace

Imported read_pytorch(std::shared_ptr<zip_t> za, const uint8_t *data, size_t size, const std::string &what,
                      const Limits &limits) {
  zip_t *z = za.get();
  // The pickle: PREFIX/data.pkl, exactly one.
  std::string prefix;
  zip_int64_t pkl = -1;
  const zip_int64_t count = zip_get_num_entries(z, 0);
  for (zip_int64_t i = 0; i < count; ++i) {
    const char *name = zip_get_name(z, static_cast<zip_uint64_t>(i), 0);
    if (!name) continue;
    const std::string n = name;
    const bool top = n == "data.pkl";
    const bool nested = n.size() > 9 && n.compare(n.size() - 9, 9, "/data.pkl") == 0 && n.find('/') == n.size() - 9;
    if (!top && !nested) continue;
    if (pkl >= 0) throw format_error(what + ": two data.pkl members; not a PyTorch checkpoint torch.save wrote");
    pkl = i;
    prefix = top ? "" : n.substr(0, n.size() - 8);  // "archive/"
  }
  const ZipEntry pe = zip_entry(z, static_cast<zip_uint64_t>(pkl), limits.max_pickle, what);
  std::vector<uint8_t> pickle(static_cast<size_t>(pe.size));
  {
    ZipFile f = open_member(z, static_cast<zip_uint64_t>(pkl), what + ": member '" + pe.name + "'");
    if (read_member(f.get(), pickle.data(), pickle.size(), what) != pickle.size())
      throw format_error(what + ": member '" + pe.name + "' is shorter than it declares");
  }
  const Pickle pk = unpickle_torch(pickle.data(), pickle.size(), what + ": " + pe.name);

  // Byte order: torch since 2.1 records it; older versions wrote the host's (little-endian in practice).
  bool big = false;
  const zip_int64_t bo = zip_name_locate(z, (prefix + "byteorder").c_str(), 0);
  if (bo >= 0) {
    const ZipEntry e = zip_entry(z, static_cast<zip_uint64_t>(bo), 16, what);
    std::string text(static_cast<size_t>(e.size), '\0');
    ZipFile f = open_member(z, static_cast<zip_uint64_t>(bo), what);
    text.resize(read_member(f.get(), reinterpret_cast<uint8_t *>(&text[0]), text.size(), what));
    if (text != "little" && text != "big") throw format_error(what + ": byteorder member says '" + text + "'");
    big = text == "big";
  }

  Imported r;
  r.format_name = "pickle";
  r.keepalive = za;
  std::map<std::string, StorageMember> members;  // by storage key
  // Stored storage members (torch stores them all, 64-byte aligned) are
  // read in place: contiguous tensors over them are zero-copy.
  const std::unordered_map<std::string, ZipDataRange> placed = zip_data_ranges(data, size);
  for (const NamedTensor &nt : Namer(pk, what).run()) {
    const PyTensor &t = pk.tensors[nt.tensor];
    const PyStorage &s = pk.storages[t.storage];
    const std::string ctx = what + ": tensor '" + nt.name + "'";
    auto it = members.find(s.key);
    if (it == members.end()) {
      const std::string mname = prefix + "data/" + s.key;
      const zip_int64_t mi = zip_name_locate(z, mname.c_str(), 0);
      if (mi < 0) throw format_error(ctx + ": its storage member '" + mname + "' is missing");
      const ZipEntry e = zip_entry(z, static_cast<zip_uint64_t>(mi), limits.max_member, what);
      StorageMember m{static_cast<zip_uint64_t>(mi), e.size, e.stored, UINT64_MAX};
      const auto pl = placed.find(mname);
      if (e.stored && pl != placed.end() && pl->second.stored && pl->second.size == e.size)
        m.in_file = pl->second.offset;
      it = members.emplace(s.key, m).first;
    }
    const StorageMember sm = it->second;
    const uint64_t storage_bytes = checked_mul(s.numel, s.esize, ctx + ": storage size");
    if (storage_bytes != sm.size)
      throw format_error(ctx + ": its storage declares " + std::to_string(storage_bytes) + " bytes (" +
                         std::to_string(s.numel) + " × " + s.type_name + "), the member holds " +
                         std::to_string(sm.size));
    uint64_t numel = 1;
    for (uint64_t d : t.size) numel = checked_mul(numel, d, ctx + ": shape");
    const uint64_t nbytes = checked_mul(numel, s.esize, ctx + ": shape × element size");
    // The elements [offset, offset + span) of the storage hold the tensor.
    uint64_t span = numel ? 1 : 0;
    bool contiguous = true;
    uint64_t want_stride = 1;
    for (size_t k = t.size.size(); k-- > 0;) {
      if (numel) span = checked_add(span, checked_mul(t.size[k] - 1, t.stride[k], ctx + ": stride"), ctx);
      if (t.size[k] != 1 && t.stride[k] != want_stride) contiguous = false;
      want_stride *= t.size[k] ? t.size[k] : 1;
    }
    if (numel && checked_add(t.offset, span, ctx) > s.numel)
      throw format_error(ctx + ": its view (offset " + std::to_string(t.offset) + ", " + std::to_string(span) +
                         " elements) runs past its storage of " + std::to_string(s.numel) + " elements");
    const uint64_t span_bytes = span * s.esize;
    if (!contiguous && span_bytes > std::max<uint64_t>(8 * nbytes, uint64_t{64} << 20))
      throw format_error(ctx + ": a strided view spanning " + std::to_string(span_bytes) +
                         " bytes of its storage for " + std::to_string(nbytes) +
                         " bytes of elements is not read (save it with .contiguous())");
    Tensor out;
    out.name = nt.name;
    out.dtype = s.dtype;
    out.logical_type = s.logical_type;
    out.shape = t.size;
    out.nbytes = nbytes;
    const size_t swap = big ? zt_dtype_size(s.dtype) : 1;
    const uint64_t skip = t.offset * s.esize;
    if (contiguous && sm.in_file != UINT64_MAX) {
      out.in_place = true;
      out.offset = sm.in_file + skip;
      out.big_endian = big;
    }
    const std::vector<uint64_t> size = t.size, stride = t.stride;
    const size_t esize = s.esize;
    out.emit = [z, sm, ctx, skip, nbytes, span_bytes, contiguous, size, stride, esize, swap](const PieceFn &fn) {
      if (nbytes == 0) return;
      ZipFile f = open_member(z, sm.index, ctx);
      skip_member(f.get(), skip, sm.stored, ctx);
      std::vector<uint8_t> piece(static_cast<size_t>(std::min(nbytes, kPiece / esize * esize)));
      if (contiguous) {
        for (uint64_t done = 0; done < nbytes;) {
          const size_t k = static_cast<size_t>(std::min<uint64_t>(piece.size(), nbytes - done));
          if (read_member(f.get(), piece.data(), k, ctx) != k)
            throw format_error(ctx + ": the storage member ends early");
          byteswap(piece.data(), k, swap);
          fn(piece.data(), k);
          done += k;
        }
        return;
      }
      // Strided: the span read once, gathered in C order piece by piece.
      std::vector<uint8_t> src(static_cast<size_t>(span_bytes));
      if (read_member(f.get(), src.data(), src.size(), ctx) != src.size())
        throw format_error(ctx + ": the storage member ends early");
      const size_t nd = size.size();
      std::vector<uint64_t> idx(nd, 0);
      size_t fill = 0;
      for (uint64_t e = 0, at = 0; e < nbytes / esize; ++e) {
        std::memcpy(piece.data() + fill, src.data() + at * esize, esize);
        fill += esize;
        if (fill == piece.size()) {
          byteswap(piece.data(), fill, swap);
          fn(piece.data(), fill);
          fill = 0;
        }
        for (size_t k = nd; k-- > 0;) {  // odometer, last index fastest
          if (++idx[k] < size[k]) {
            at += stride[k];
            break;
          }
          at -= stride[k] * (size[k] - 1);
          idx[k] = 0;
        }
      }
      if (fill) {
        byteswap(piece.data(), fill, swap);
        fn(piece.data(), fill);
      }
    };
    r.tensors.push_back(std::move(out));
  }
  return r;
}
#endif  // ZT_HAVE_LIBZIP

}  // namespace zt::foreign
