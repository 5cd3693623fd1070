#include "manifest/cbor_tree.h"

#include <algorithm>
#include <cstring>
#include <functional>

#include "manifest/cbor_events.h"
#include "util/error.h"

namespace zt::cbor {
namespace {

using detail::Builder;
using Open = detail::OpenItem;

bool keys_equal(const Tree &t, const Node &a, const Node &b, const uint8_t *data) {
  if (a.kind != b.kind) return false;
  if (a.kind == Kind::Text || a.kind == Kind::Bytes) return t.text(a) == t.text(b);
  if (a.kind == Kind::Uint || a.kind == Kind::Negint || a.kind == Kind::Bool) return a.value == b.value;
  return a.end - a.begin == b.end - b.begin && std::memcmp(data + a.begin, data + b.begin, a.end - a.begin) == 0;
}

}  // namespace

const char *kind_name(Kind k) {
  switch (k) {
    case Kind::Uint:
      return "unsigned integer";
    case Kind::Negint:
      return "negative integer";
    case Kind::Bytes:
      return "byte string";
    case Kind::Text:
      return "text string";
    case Kind::Array:
      return "array";
    case Kind::Map:
      return "map";
    case Kind::Tag:
      return "tagged item";
    case Kind::Float:
      return "float";
    case Kind::Bool:
      return "bool";
    case Kind::Null:
      return "null";
    case Kind::Undefined:
      return "undefined";
  }
  return "?";
}

std::string_view Tree::text(const Node &n) const {
  if (!n.joined) return {reinterpret_cast<const char *>(data_) + n.end - n.value, static_cast<size_t>(n.value)};
  // Joined strings are found by node index, so n must be one of ours.
  const auto idx = static_cast<size_t>(&n - nodes_.data());
  if (std::less<const Node *>()(&n, nodes_.data()) || idx >= nodes_.size())
    fail(ZT_E_INTERNAL, "cbor::Tree::text: a node of another tree");
  auto it = std::lower_bound(joined_.begin(), joined_.end(), idx, [](const auto &j, size_t i) { return j.first < i; });
  if (it == joined_.end() || it->first != idx) fail(ZT_E_INTERNAL, "cbor::Tree::text: joined string not found");
  return it->second;
}

double Tree::real(const Node &n) const {
  double d;
  std::memcpy(&d, &n.value, sizeof d);
  return d;
}

uint32_t Tree::find(uint32_t map, std::string_view key) const {
  const Node &m = nodes_[map];
  if (m.kind != Kind::Map || (m.collapsed && m.next == map + 1)) return 0;  // children dropped
  uint32_t k = map + 1;
  for (uint64_t i = 0; i < m.value; ++i) {
    uint32_t v = nodes_[k].next;
    if (nodes_[k].kind == Kind::Text && text(k) == key) return v;
    k = nodes_[v].next;
  }
  return 0;
}

Tree::Tree(const uint8_t *data, size_t size, const std::string &what, size_t max_depth) {
  ParseOptions opts;
  opts.max_depth = max_depth;
  parse(data, size, what, opts);
}

Tree::Tree(const uint8_t *data, size_t size, const std::string &what, const ParseOptions &opts) {
  parse(data, size, what, opts);
}

void Tree::parse(const uint8_t *data, size_t size, const std::string &what, const ParseOptions &opts) {
  data_ = data;
  base_ = opts.base_offset;
  nodes_.clear();
  joined_.clear();
  const size_t base = opts.base_offset;
  // Offsets in messages are within the buffer `what` names.
  auto at = [base](size_t pos) { return std::to_string(base + pos); };
  if (size > UINT32_MAX)
    fail(ZT_E_LIMIT, what + ": " + std::to_string(size) + " bytes of CBOR, more than this parser takes (4 GiB)");
  stack_.clear();
  Builder b(stack_);
  b.data = data;
  b.data_end = data + size;
  b.nodes = &nodes_;
  b.max_depth = opts.max_depth;
  b.collapse_depth = opts.collapse_depth;
  // Most items are a few bytes: reserve a guess to limit regrowth (a
  // collapsed tree keeps far fewer nodes than items).
  if (opts.collapse_depth == 0 && !opts.check_only) nodes_.reserve(std::min<size_t>(size / 4 + 1, size_t{1} << 24));

  auto check_duplicates = [&](uint32_t map) {
    const Node &m = nodes_[map];
    // Most maps are small (a component's fields): no allocation for those.
    uint32_t small[16];
    std::vector<uint32_t> large;
    if (m.value > 16) large.resize(m.value);
    const size_t nkeys = m.value;
    uint32_t *keys = nkeys > 16 ? large.data() : small;
    uint32_t k = map + 1;
    for (size_t i = 0; i < nkeys; ++i) {
      keys[i] = k;
      k = nodes_[nodes_[k].next].next;
    }
    auto dup = [&](uint32_t a) {
      const Node &n = nodes_[a];
      std::string shown = n.kind == Kind::Text ? "'" + printable(std::string(text(n))) + "'"
                                               : std::string("a ") + kind_name(n.kind) + " key";
      fail(ZT_E_DUPLICATE_KEY, what + ": duplicate map key " + shown + " at byte " + at(n.begin) + " of the manifest");
    };
    if (nkeys <= 16) {
      for (size_t i = 0; i < nkeys; ++i)
        for (size_t j = i + 1; j < nkeys; ++j)
          if (keys_equal(*this, nodes_[keys[i]], nodes_[keys[j]], data_)) dup(keys[j]);
      return;
    }
    // Larger maps (the objects map of a big manifest) usually come sorted,
    // as writers emit them: keys strictly increasing in one total order that
    // agrees with keys_equal are distinct, and checking that is one pass
    // over neighbours, with no table.
    auto less = [&](const Node &a, const Node &b) {
      if (a.kind != b.kind) return a.kind < b.kind;
      if (a.kind == Kind::Text || a.kind == Kind::Bytes) return text(a) < text(b);
      if (a.kind == Kind::Uint || a.kind == Kind::Negint || a.kind == Kind::Bool) return a.value < b.value;
      return raw(static_cast<uint32_t>(&a - nodes_.data())) < raw(static_cast<uint32_t>(&b - nodes_.data()));
    };
    size_t ordered = 1;
    while (ordered < nkeys && less(nodes_[keys[ordered - 1]], nodes_[keys[ordered]])) ++ordered;
    if (ordered == nkeys) return;
    // Otherwise a hash table of the keys: one pass, O(n) on keys as they
    // come. Integer keys hash by value, as keys_equal compares them, so a
    // non-canonical encoding of the same number still collides. The file's
    // author chooses the keys, though, and keys chosen to collide make
    // linear probing quadratic: past a probe budget a few times the key
    // count, give the table up and sort instead, which is O(n log n)
    // whatever the keys.
    auto hash_of = [&](uint32_t i) -> size_t {
      const Node &n = nodes_[i];
      std::string_view bytes;
      if (n.kind == Kind::Text || n.kind == Kind::Bytes)
        bytes = text(n);
      else if (n.kind == Kind::Uint || n.kind == Kind::Negint || n.kind == Kind::Bool)
        bytes = {reinterpret_cast<const char *>(&n.value), sizeof n.value};
      else
        bytes = {reinterpret_cast<const char *>(data_) + n.begin, n.end - n.begin};
      return std::hash<std::string_view>()(bytes) * 31 + static_cast<size_t>(n.kind);
    };
    size_t cap = 64;
    while (cap < nkeys * 2) cap <<= 1;
    std::vector<uint32_t> slots(cap, UINT32_MAX);
    // At load 1/2 linear probing averages 1.5 probes per insertion.
    size_t budget = 8 * nkeys;
    bool table_ok = true;
    for (size_t j = 0; j < nkeys && table_ok; ++j) {
      const uint32_t key = keys[j];
      size_t i = hash_of(key) & (cap - 1);
      for (; slots[i] != UINT32_MAX; i = (i + 1) & (cap - 1)) {
        if (keys_equal(*this, nodes_[slots[i]], nodes_[key], data_)) dup(key);
        if (budget-- == 0) {
          table_ok = false;
          break;
        }
      }
      slots[i] = key;
    }
    if (table_ok) return;
    std::vector<uint32_t>().swap(slots);
    // Each key carries the kind and first 7 bytes of its text (big-endian,
    // zero-padded), an order that never contradicts `less`: most comparisons
    // end there, without a cache miss into the nodes and the manifest.
    struct Sorted {
      uint64_t prefix;
      uint32_t key;
    };
    std::vector<Sorted> sorted(nkeys);
    for (size_t j = 0; j < nkeys; ++j) {
      const Node &n = nodes_[keys[j]];
      uint64_t p = uint64_t{static_cast<uint8_t>(n.kind)} << 56;
      if (n.kind == Kind::Text || n.kind == Kind::Bytes) {
        const std::string_view t = text(n);
        for (size_t b = 0; b < 7 && b < t.size(); ++b) p |= uint64_t{static_cast<uint8_t>(t[b])} << (48 - 8 * b);
      }
      sorted[j] = {p, keys[j]};
    }
    // Stable, so of two equal keys the one reported is the later in the file.
    std::stable_sort(sorted.begin(), sorted.end(), [&](const Sorted &a, const Sorted &b) {
      return a.prefix != b.prefix ? a.prefix < b.prefix : less(nodes_[a.key], nodes_[b.key]);
    });
    for (size_t i = 1; i < nkeys; ++i)
      if (sorted[i - 1].prefix == sorted[i].prefix &&
          keys_equal(*this, nodes_[sorted[i - 1].key], nodes_[sorted[i].key], data_))
        dup(sorted[i].key);
  };

  // In place, for the same store-forwarding reason as Builder::push.
  // Whether the item about to open is a value of a key named
  // opts.check_only_under in its parent map.
  auto under_checked_key = [&]() {
    if (opts.check_only_under.empty() || b.stack.empty() || b.stack.size() >= 32 ||
        !(opts.check_only_depths & (uint32_t{1} << b.stack.size())))
      return false;
    const Open &parent = b.stack.back();
    if (nodes_[parent.node].kind != Kind::Map || parent.done % 2 != 1) return false;
    const Node &key = nodes_[parent.last_key];
    return key.kind == Kind::Text && text(key) == opts.check_only_under;
  };
  auto push_open = [&](uint32_t node, uint64_t remaining, bool is_string, Kind kind) {
    const bool check_only = opts.check_only || (!b.stack.empty() && b.stack.back().check_only) || under_checked_key();
    Open &o = b.stack.emplace_back();
    o.node = node;
    o.remaining = remaining;
    o.done = 0;
    o.is_string = is_string;
    o.string_kind = kind;
    o.check_only = check_only;
    o.last_key = 0;
  };
  // A container's last child is in: check it, drop a collapsed one's children.
  auto close = [&](uint32_t c, size_t end) {
    if (nodes_[c].kind == Kind::Map && !opts.already_checked) check_duplicates(c);
    nodes_[c].end = static_cast<uint32_t>(end);
    nodes_[c].next = static_cast<uint32_t>(nodes_.size());
    if (nodes_[c].collapsed) {
      if (opts.on_collapsed) opts.on_collapsed(*this, c, stack_.data(), stack_.size());
      nodes_.resize(c + 1);
      nodes_[c].next = c + 1;
      while (!joined_.empty() && joined_.back().first > c) joined_.pop_back();
    }
  };
  // check_only: a checked item is no longer needed in full. An array's or
  // tag's element goes; a map's key or value stays as one node (the map's
  // duplicate check walks key, value, key, ... through `next`).
  auto shrink = [&](uint32_t idx) {
    if (b.stack.empty() || !b.stack.back().check_only) return;
    const Kind parent = nodes_[b.stack.back().node].kind;
    const uint32_t keep = parent == Kind::Map ? idx + 1 : idx;
    nodes_.resize(keep);
    if (keep > idx) nodes_[idx].next = keep;
    while (!joined_.empty() && joined_.back().first >= keep) joined_.pop_back();
  };
  // An item (leaf or closed container) is complete: close parents as needed.
  auto complete = [&](uint32_t idx, size_t end) {
    nodes_[idx].end = static_cast<uint32_t>(end);
    nodes_[idx].next = static_cast<uint32_t>(nodes_.size());
    uint32_t item = idx;
    for (;;) {
      shrink(item);
      if (b.stack.empty()) break;
      Open &top = b.stack.back();
      if (top.done % 2 == 0 && nodes_[top.node].kind == Kind::Map) top.last_key = item;
      ++top.done;
      if (top.remaining == UINT64_MAX) return;  // indefinite: waits for break
      if (--top.remaining > 0) return;
      item = top.node;
      b.stack.pop_back();
      close(item, end);
    }
    b.done = true;
  };

  while (!b.done) {
    if (b.pos >= size) fail(ZT_E_CBOR, what + ": CBOR ends early (truncated at byte " + at(b.pos) + ")");
    b.event = Builder::Event::None;
    cbor_decoder_result r = cbor_stream_decode(data + b.pos, size - b.pos, &detail::kBuilderCallbacks, &b);
    if (b.error) fail(b.error_status, what + ": " + b.error_message + " at byte " + at(b.pos));
    if (r.status == CBOR_DECODER_NEDATA)
      fail(ZT_E_CBOR,
           what + ": CBOR item at byte " + at(b.pos) + " runs past the end (" + std::to_string(size) + " bytes)");
    if (r.status != CBOR_DECODER_FINISHED || r.read == 0)
      fail(ZT_E_CBOR, what + ": malformed CBOR at byte " + at(b.pos));
    size_t end = b.pos + r.read;
    if (nodes_.size() > UINT32_MAX - 2) fail(ZT_E_CBOR, what + ": too many CBOR items");
    switch (b.event) {
      case Builder::Event::Leaf:
        complete(static_cast<uint32_t>(nodes_.size() - 1), end);
        break;
      case Builder::Event::Open: {
        uint32_t idx = static_cast<uint32_t>(nodes_.size() - 1);
        Node &n = nodes_[idx];
        if (b.stack.size() + 1 > b.max_depth)
          fail(ZT_E_CBOR_DEPTH,
               what + ": CBOR nesting deeper than " + std::to_string(b.max_depth) + " levels at byte " + at(b.pos));
        bool is_string = n.kind == Kind::Bytes || n.kind == Kind::Text;
        if (b.open_indef) {
          if (is_string) {
            joined_.emplace_back(idx, std::string());
            n.joined = true;
          }
          push_open(idx, UINT64_MAX, is_string, n.kind);
        } else {
          uint64_t items = b.open_count;
          if (n.kind == Kind::Map) {
            // Each pair needs at least two bytes: a count beyond the bytes
            // left is a lie, refused before anything is sized from it.
            if (items > (size - end) / 2)
              fail(ZT_E_CBOR, what + ": map at byte " + at(b.pos) + " claims " + std::to_string(items) +
                                  " pairs, more than the bytes left");
            items *= 2;
          } else if (items > size - end) {
            fail(ZT_E_CBOR, what + ": " + kind_name(n.kind) + " at byte " + at(b.pos) + " claims " +
                                std::to_string(items) + " items, more than the bytes left");
          }
          if (items == 0) {
            complete(idx, end);
          } else {
            push_open(idx, items, false, n.kind);
          }
        }
        break;
      }
      case Builder::Event::Chunk: {
        std::string &s = joined_.back().second;
        s.append(b.chunk, b.chunk_len);
        nodes_[b.stack.back().node].value = s.size();
        break;
      }
      case Builder::Event::Break: {
        if (b.stack.empty() || b.stack.back().remaining != UINT64_MAX)
          fail(ZT_E_CBOR, what + ": unexpected CBOR break at byte " + at(b.pos));
        Open top = b.stack.back();
        Node &n = nodes_[top.node];
        if (n.kind == Kind::Map) {
          // A map needs an even number of items.
          if (top.done % 2)
            fail(ZT_E_CBOR, what + ": indefinite map at byte " + at(n.begin) + " ends after a key with no value");
          n.value = top.done / 2;
        } else if (n.kind == Kind::Array) {
          n.value = top.done;
        } else if (n.kind == Kind::Tag) {
          fail(ZT_E_CBOR, what + ": break inside a tag at byte " + at(b.pos));
        }
        b.stack.pop_back();
        close(top.node, end);
        complete(top.node, end);  // a completed item of its parent
        break;
      }
      case Builder::Event::None:
        fail(ZT_E_CBOR, what + ": unsupported CBOR item at byte " + at(b.pos));
    }
    b.pos = end;
  }
  if (b.pos != size)
    fail(ZT_E_CBOR,
         what + ": " + std::to_string(size - b.pos) + " bytes left after the CBOR item (at byte " + at(b.pos) + ")");
}

}  // namespace zt::cbor
