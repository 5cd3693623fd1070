#include "pickle.h"

#include <cstring>
#include <unordered_map>

#include "foreign.h"
#include "pickle_allowlist.h"

namespace zt::foreign {
namespace {

class Interpreter {
 public:
  Interpreter(const uint8_t *p, size_t n, const std::string &what, const PickleLimits &limits)
      : p_(p), n_(n), what_(what), limits_(limits) {}

  Pickle run() {
    for (;;) {
      op_at_ = pos_;
      const uint8_t op = byte();
      switch (op) {
        case 0x80:  // PROTO
          if (byte() > 5) fail("unsupported pickle protocol");
          break;
        case 0x95:  // FRAME: a length hint, the opcodes follow inline
          take(8);
          break;
        case '.': {  // STOP
          out_.root = pop();
          if (!stack_.empty() || !marks_.empty()) fail("STOP leaves values on the stack");
          return std::move(out_);
        }
        case '(':  // MARK
          if (marks_.size() >= limits_.max_marks) fail("MARK nested deeper than " + std::to_string(limits_.max_marks));
          marks_.push_back(stack_.size());
          break;
        case 'N':
          push(make(PyValue::None));
          break;
        case 0x88:
          push(make_int(PyValue::Bool, 1));
          break;  // NEWTRUE
        case 0x89:
          push(make_int(PyValue::Bool, 0));
          break;     // NEWFALSE
        case 'J': {  // BININT
          const uint8_t *b = take(4);
          push(make_int(PyValue::Int, static_cast<int32_t>(le(b, 4))));
          break;
        }
        case 'K':
          push(make_int(PyValue::Int, byte()));
          break;  // BININT1
        case 'M':
          push(make_int(PyValue::Int, static_cast<int64_t>(le(take(2), 2))));
          break;      // BININT2
        case 0x8a: {  // LONG1
          const size_t k = byte();
          if (k > 8) fail("an integer of " + std::to_string(k) + " bytes is wider than 64 bits");
          const uint8_t *b = take(k);
          uint64_t v = le(b, k);
          if (k && k < 8 && (b[k - 1] & 0x80)) v |= ~uint64_t{0} << (8 * k);  // sign-extend
          push(make_int(PyValue::Int, static_cast<int64_t>(v)));
          break;
        }
        case 'G': {  // BINFLOAT (big-endian double)
          const uint8_t *b = take(8);
          uint64_t bits = 0;
          for (int k = 0; k < 8; ++k) bits = (bits << 8) | b[k];
          push(make_int(PyValue::Float, static_cast<int64_t>(bits)));
          break;
        }
        case 'X':
          text(PyValue::Str, le(take(4), 4));
          break;  // BINUNICODE
        case 0x8c:
          text(PyValue::Str, byte());
          break;  // SHORT_BINUNICODE
        case 'U':
          text(PyValue::Bytes, byte());
          break;  // SHORT_BINSTRING
        case 'B':
          text(PyValue::Bytes, le(take(4), 4));
          break;  // BINBYTES
        case 'C':
          text(PyValue::Bytes, byte());
          break;  // SHORT_BINBYTES
        case ')':
          push(make_list(PyValue::Tuple, {}));
          break;  // EMPTY_TUPLE
        case ']':
          push(make_list(PyValue::List, {}));
          break;  // EMPTY_LIST
        case '}':
          push(make_list(PyValue::Dict, {}));
          break;  // EMPTY_DICT
        case 0x8f:
          push(make_list(PyValue::Set, {}));
          break;  // EMPTY_SET
        case 't':
          push(make_list(PyValue::Tuple, pop_mark()));
          break;  // TUPLE
        case 0x85:
        case 0x86:
        case 0x87: {  // TUPLE1..3
          const size_t k = op - 0x84u;
          if (stack_.size() < k + floor()) fail("stack underflow");
          std::vector<uint32_t> items(stack_.end() - k, stack_.end());
          stack_.resize(stack_.size() - k);
          push(make_list(PyValue::Tuple, std::move(items)));
          break;
        }
        case 'a': {  // APPEND
          const uint32_t item = pop();
          list_of(top(), PyValue::List, "APPEND").push_back(item);
          break;
        }
        case 'e': {  // APPENDS
          std::vector<uint32_t> items = pop_mark();
          auto &l = list_of(top(), PyValue::List, "APPENDS");
          l.insert(l.end(), items.begin(), items.end());
          break;
        }
        case 's': {  // SETITEM
          const uint32_t v = pop(), k = pop();
          auto &d = list_of(top(), PyValue::Dict, "SETITEM");
          d.push_back(k);
          d.push_back(v);
          break;
        }
        case 'u': {  // SETITEMS
          std::vector<uint32_t> items = pop_mark();
          if (items.size() % 2) fail("SETITEMS with an odd number of items");
          auto &d = list_of(top(), PyValue::Dict, "SETITEMS");
          d.insert(d.end(), items.begin(), items.end());
          break;
        }
        case 'h':
          get(byte());
          break;  // BINGET
        case 'j':
          get(le(take(4), 4));
          break;  // LONG_BINGET
        case 'q':
          put(byte());
          break;  // BINPUT
        case 'r':
          put(le(take(4), 4));
          break;  // LONG_BINPUT
        case 0x94:
          put(memo_.size());
          break;  // MEMOIZE
        case 'c':
          global();
          break;  // GLOBAL
        case 'Q':
          persistent_id();
          break;  // BINPERSID
        case 'R':
          reduce();
          break;  // REDUCE
        case 0x81:
          newobj();
          break;  // NEWOBJ
        case 'b':
          build();
          break;  // BUILD
        default: {
          const char *name = opcode_name(op);
          char hexop[8];
          std::snprintf(hexop, sizeof hexop, "0x%02x", op);
          fail(std::string("pickle opcode ") + (name ? name : "(unknown)") + " (" + hexop +
               ") is not allowed (only the opcodes of torch's weights_only loader)");
        }
      }
    }
  }

 private:
  [[noreturn]] void fail(const std::string &msg) const {
    throw format_error(what_ + ": data.pkl offset " + std::to_string(op_at_) + ": " + msg);
  }
  uint8_t byte() { return *take(1); }
  const uint8_t *take(size_t k) {
    if (k > n_ - pos_) fail("the pickle ends early (truncated?)");
    const uint8_t *b = p_ + pos_;
    pos_ += k;
    return b;
  }
  static uint64_t le(const uint8_t *b, size_t k) {
    uint64_t v = 0;
    for (size_t i = k; i-- > 0;) v = (v << 8) | b[i];
    return v;
  }
  uint32_t add(const PyValue &v) {
    if (out_.values.size() >= limits_.max_values) fail("more than " + std::to_string(limits_.max_values) + " values");
    out_.values.push_back(v);
    return static_cast<uint32_t>(out_.values.size() - 1);
  }
  uint32_t make(PyValue::Kind kind) {
    PyValue v;
    v.kind = kind;
    return add(v);
  }
  uint32_t make_int(PyValue::Kind kind, int64_t i) {
    PyValue v;
    v.kind = kind;
    v.i = i;
    return add(v);
  }
  uint32_t make_list(PyValue::Kind kind, std::vector<uint32_t> items) {
    PyValue v;
    v.kind = kind;
    v.ref = static_cast<uint32_t>(out_.lists.size());
    out_.lists.push_back(std::move(items));
    return add(v);
  }
  uint32_t make_string(PyValue::Kind kind, std::string s, int64_t i = 0) {
    PyValue v;
    v.kind = kind;
    v.i = i;
    v.ref = static_cast<uint32_t>(out_.strings.size());
    out_.strings.push_back(std::move(s));
    return add(v);
  }
  void text(PyValue::Kind kind, uint64_t len) {
    if (len > n_ - pos_) fail("a string runs past the end of the pickle");
    const uint8_t *b = take(static_cast<size_t>(len));
    push(make_string(kind, std::string(reinterpret_cast<const char *>(b), static_cast<size_t>(len))));
  }
  size_t floor() const { return marks_.empty() ? 0 : marks_.back(); }
  void push(uint32_t v) { stack_.push_back(v); }
  uint32_t pop() {
    if (stack_.size() <= floor()) fail("stack underflow");
    const uint32_t v = stack_.back();
    stack_.pop_back();
    return v;
  }
  uint32_t top() {
    if (stack_.size() <= floor()) fail("stack underflow");
    return stack_.back();
  }
  std::vector<uint32_t> pop_mark() {
    if (marks_.empty()) fail("no MARK to pop to");
    const size_t m = marks_.back();
    marks_.pop_back();
    std::vector<uint32_t> items(stack_.begin() + static_cast<std::ptrdiff_t>(m), stack_.end());
    stack_.resize(m);
    return items;
  }
  const PyValue &val(uint32_t i) const { return out_.values[i]; }
  std::vector<uint32_t> &list_of(uint32_t i, PyValue::Kind kind, const char *op) {
    if (val(i).kind != kind)
      fail(std::string(op) + " on something that is not a " + (kind == PyValue::List ? "list" : "dict"));
    return out_.lists[val(i).ref];
  }
  const std::vector<uint32_t> &tuple(uint32_t i, const char *what) {
    if (val(i).kind != PyValue::Tuple) fail(std::string(what) + " is not a tuple");
    return out_.lists[val(i).ref];
  }
  void get(uint64_t key) {
    auto it = memo_.find(key);
    if (it == memo_.end()) fail("memo key " + std::to_string(key) + " was never stored");
    push(it->second);
  }
  void put(uint64_t key) {
    if (memo_.size() >= limits_.max_memo && !memo_.count(key))
      fail("more than " + std::to_string(limits_.max_memo) + " memo entries");
    memo_[key] = top();
  }
  std::string line() {
    const size_t start = pos_;
    while (pos_ < n_ && p_[pos_] != '\n') {
      if (pos_ - start > 256) fail("a GLOBAL name longer than 256 bytes");
      ++pos_;
    }
    if (pos_ >= n_) fail("the pickle ends inside a GLOBAL");
    ++pos_;
    return std::string(reinterpret_cast<const char *>(p_ + start), pos_ - 1 - start);
  }
  void global() {
    const std::string module = line(), name = line();
    const std::string full = module + "." + name;
    GlobalId id;
    if (!allowed_global(full, id))
      fail("pickle global '" + printable_name(full) +
           "' is not allowed (only what torch.load(weights_only=True) allows); nothing was called");
    push(make_string(PyValue::Global, full, id));
  }
  static std::string printable_name(const std::string &s) {
    std::string r;
    for (unsigned char c : s) {
      if (c >= 0x20 && c < 0x7f) {
        r += static_cast<char>(c);
      } else {
        char b[8];
        std::snprintf(b, sizeof b, "\\x%02x", c);
        r += b;
      }
    }
    return r;
  }
  const std::string &global_name(uint32_t v) const { return out_.strings[val(v).ref]; }
  int64_t integer(uint32_t v, const char *what) {
    if (val(v).kind != PyValue::Int && val(v).kind != PyValue::Bool) fail(std::string(what) + " is not an integer");
    return val(v).i;
  }
  std::vector<uint64_t> dims(uint32_t v, const char *what) {
    std::vector<uint64_t> out;
    for (uint32_t x : tuple(v, what)) {
      const int64_t d = integer(x, what);
      if (d < 0) fail(std::string(what) + " has a negative entry");
      out.push_back(static_cast<uint64_t>(d));
    }
    if (out.size() > 64) fail(std::string(what) + " has more than 64 dimensions");
    return out;
  }
  void persistent_id() {
    const uint32_t pid = pop();
    if (val(pid).kind != PyValue::Tuple) fail("a persistent id that is not a tuple");
    const std::vector<uint32_t> t = out_.lists[val(pid).ref];
    if (t.empty() || (val(t[0]).kind != PyValue::Str && val(t[0]).kind != PyValue::Bytes) ||
        out_.strings[val(t[0]).ref] != "storage")
      fail("only persistent ids of storages are allowed");
    if (t.size() != 5) fail("a storage persistent id of " + std::to_string(t.size()) + " items, not 5");
    if (val(t[1]).kind != PyValue::Global) fail("a storage whose type is not a global");
    const std::string &type = global_name(t[1]);
    const StorageType *st = storage_type(type);
    if (!st) fail("storage type '" + type + "' is not supported (quantized or untyped storages)");
    if (val(t[2]).kind != PyValue::Str) fail("a storage key that is not a string");
    PyStorage s;
    s.type_name = type;
    s.dtype = st->dtype;
    s.logical_type = st->logical;
    s.esize = st->esize;
    s.key = out_.strings[val(t[2]).ref];
    const int64_t numel = integer(t[4], "a storage's element count");
    if (numel < 0) fail("a storage of negative size");
    s.numel = static_cast<uint64_t>(numel);
    PyValue v;
    v.kind = PyValue::Storage;
    v.ref = static_cast<uint32_t>(out_.storages.size());
    out_.storages.push_back(std::move(s));
    push(add(v));
  }
  uint32_t rebuild_tensor(const std::vector<uint32_t> &a, size_t min_args) {
    if (a.size() < min_args || a.size() > 7) fail("_rebuild_tensor with " + std::to_string(a.size()) + " arguments");
    if (val(a[0]).kind != PyValue::Storage) fail("_rebuild_tensor of something that is not a storage");
    const int64_t off = integer(a[1], "a tensor's storage offset");
    if (off < 0) fail("a negative storage offset");
    PyTensor t;
    t.storage = val(a[0]).ref;
    t.offset = static_cast<uint64_t>(off);
    t.size = dims(a[2], "a tensor's size");
    t.stride = dims(a[3], "a tensor's stride");
    if (t.size.size() != t.stride.size()) fail("a tensor's size and stride differ in length");
    PyValue v;
    v.kind = PyValue::Tensor;
    v.ref = static_cast<uint32_t>(out_.tensors.size());
    out_.tensors.push_back(std::move(t));
    return add(v);
  }
  void reduce() {
    const uint32_t args_v = pop();
    const uint32_t fn = top();
    if (val(fn).kind != PyValue::Global) fail("REDUCE calls something that is not an allowed global");
    const std::vector<uint32_t> args = tuple(args_v, "REDUCE's arguments");
    uint32_t result = 0;
    switch (val(fn).i) {
      case kOrderedDict:
        if (!args.empty()) fail("OrderedDict called with arguments");
        result = make_list(PyValue::Dict, {});
        break;
      case kSize:
        if (args.size() != 1) fail("torch.Size with " + std::to_string(args.size()) + " arguments");
        tuple(args[0], "torch.Size's argument");
        result = args[0];
        break;
      case kRebuildTensorV2:
        result = rebuild_tensor(args, 6);
        break;
      case kRebuildTensor:
        result = rebuild_tensor(args, 4);
        break;
      case kRebuildParameter:
        if (args.empty() || val(args[0]).kind != PyValue::Tensor) fail("_rebuild_parameter of something not a tensor");
        result = args[0];
        break;
      default:
        fail("'" + global_name(fn) +
             "' is allowed by torch but not supported here (sparse, quantized and meta tensors, layouts)");
    }
    stack_.back() = result;
  }
  void newobj() {
    const uint32_t args_v = pop();
    const uint32_t cls = pop();
    if (val(cls).kind != PyValue::Global || val(cls).i != kParameter) fail("NEWOBJ may only make a torch.nn.Parameter");
    const std::vector<uint32_t> args = tuple(args_v, "Parameter's arguments");
    if (args.empty() || val(args[0]).kind != PyValue::Tensor) fail("a Parameter of something not a tensor");
    push(args[0]);
  }
  void build() {
    pop();  // the state: an OrderedDict's attributes (a state_dict's _metadata)
    if (val(top()).kind != PyValue::Dict)
      fail("BUILD may only set the attributes of a dict (a tensor's set_ is not supported)");
  }

  const uint8_t *p_;
  size_t n_, pos_ = 0, op_at_ = 0;
  const std::string &what_;
  PickleLimits limits_;
  Pickle out_;
  std::vector<uint32_t> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, uint32_t> memo_;
};

}  // namespace

Pickle unpickle_torch(const uint8_t *p, size_t n, const std::string &what, const PickleLimits &limits) {
  return Interpreter(p, n, what, limits).run();
}

bool is_legacy_torch_pickle(const uint8_t *p, size_t n) {
  static const uint8_t kMagic[] = {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19};
  return n >= sizeof kMagic && std::memcmp(p, kMagic, sizeof kMagic) == 0;
}

}  // namespace zt::foreign
