// A flat, read-only tree of one CBOR item, built with libcbor's streaming
// decoder. Flat (one vector of nodes, children following their parent) so a
// manifest of 100 000 objects costs a few allocations, not millions; every
// node remembers its byte range so unknown fields and attributes can be kept
// and re-emitted exactly as found. Hostile input is bounded: nesting depth,
// element counts against the bytes left, duplicate map keys.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace zt::cbor {

enum class Kind : uint8_t { Uint, Negint, Bytes, Text, Array, Map, Tag, Float, Bool, Null, Undefined };

// 24 bytes: a 100 000-object manifest is millions of items, and their
// memory, not their parsing, is what an open pays for.
struct Node {
  uint64_t value = 0;  // Uint; Negint n means -1-n; Array/Map: item/pair
                       // count; Tag: tag number; Bool: 0/1; Bytes/Text:
                       // length; Float: the double's bits
  uint32_t next = 0;   // index of the node after this subtree
  uint32_t begin = 0;  // the item's encoded bytes in the buffer
  uint32_t end = 0;
  Kind kind = Kind::Null;
  bool collapsed = false;  // a container whose children were not kept
  bool joined = false;     // an indefinite-length string, chunks joined
};

namespace detail {
struct OpenItem {
  uint32_t node;
  uint64_t remaining;  // items still expected; UINT64_MAX if indefinite
  uint64_t done;       // items completed so far
  bool is_string;      // an indefinite byte/text string gathering chunks
  Kind string_kind;
  bool check_only;    // items inside are checked, then shrunk (see ParseOptions)
  uint32_t last_key;  // a map's most recent key node
};
}  // namespace detail

class Tree;

// The containers enclosing a collapsed item, root first: ancestors[i].node
// is a node index; ancestors[depth - 1].done is the item's position in its
// parent (for a map: even = key, odd = value).
using CollapsedHook = std::function<void(const Tree &, uint32_t node, const detail::OpenItem *ancestors, size_t depth)>;

struct ParseOptions {
  size_t max_depth = 256;
  // Containers this deep (the root is depth 0; 0 = never) are checked in full
  // but kept as one node without children (`collapsed`): a caller that walks
  // a big manifest one object at a time parses each object's bytes again into
  // a small tree, so memory follows the largest object, not the file.
  size_t collapse_depth = 0;
  // Where `data` starts within the buffer named by `what`, for messages.
  size_t base_offset = 0;
  // Called for each collapsed item once it is complete and checked, with
  // its children still present: a decoder can use the item right away
  // instead of parsing its bytes again.
  CollapsedHook on_collapsed;
  // The bytes were already parsed with these limits (the item was collapsed
  // in a bigger tree): skip the duplicate-key checks, which cannot fail now.
  bool already_checked = false;
  // Only check the item (well-formed, depth, duplicate keys); the tree is
  // not for reading. Elements of arrays and tags are dropped as soon as they
  // are checked and map keys and values kept as one node each, so memory
  // follows the widest map, not the item count: a 100 MB array of small
  // integers would otherwise take 24 bytes per element.
  bool check_only = false;
  // The same, only for the values of map keys equal to this text in maps at
  // the depths set in check_only_depths (bit d: a map at depth d - 1, its
  // value at depth d; the root is depth 0). "attributes" at the root and in
  // each object: the decoder keeps those as raw bytes, so their insides need
  // checking but no nodes. Only those places: an object may itself be named
  // "attributes", and its fields must stay. Empty: none.
  std::string_view check_only_under;
  uint32_t check_only_depths = 0;
};

class Tree {
 public:
  // Decodes exactly one item filling [data, data+size). Throws zt::Error:
  // ZT_E_CBOR (malformed, truncated, trailing bytes), ZT_E_CBOR_DEPTH,
  // ZT_E_DUPLICATE_KEY. `what` names the buffer in messages.
  Tree(const uint8_t *data, size_t size, const std::string &what, size_t max_depth = 256);
  Tree(const uint8_t *data, size_t size, const std::string &what, const ParseOptions &opts);
  Tree() = default;
  // Replaces the contents with a new item, reusing the node storage.
  void parse(const uint8_t *data, size_t size, const std::string &what, const ParseOptions &opts);

  const Node &node(uint32_t i) const { return nodes_[i]; }
  uint32_t root() const { return 0; }
  size_t size() const { return nodes_.size(); }
  const uint8_t *data() const { return data_; }

  // Children of an array (items) or map (key, value, key, value...); never
  // of a collapsed node, whose bytes are raw(i).
  uint32_t first_child(uint32_t i) const { return i + 1; }
  uint32_t next(uint32_t i) const { return nodes_[i].next; }

  // Map lookup by text key; returns 0 (the root, never a value) if absent.
  uint32_t find(uint32_t map, std::string_view key) const;

  // Contents of a Bytes/Text node; n must be a reference into this tree
  // (node(i)), not a copy.
  std::string_view text(const Node &n) const;
  std::string_view text(uint32_t i) const { return text(nodes_[i]); }
  double real(const Node &n) const;

  // Where a node starts in the buffer named in messages (see base_offset).
  size_t offset_of(uint32_t i) const { return base_ + nodes_[i].begin; }

  // The raw encoded bytes of a node.
  std::string_view raw(uint32_t i) const {
    return {reinterpret_cast<const char *>(data_) + nodes_[i].begin, nodes_[i].end - nodes_[i].begin};
  }

 private:
  const uint8_t *data_ = nullptr;
  size_t base_ = 0;
  std::vector<Node> nodes_;
  // Contents of indefinite-length strings, by node index (ascending).
  std::vector<std::pair<uint32_t, std::string>> joined_;
  std::vector<detail::OpenItem> stack_;  // parse scratch, kept for reuse
};

const char *kind_name(Kind k);

}  // namespace zt::cbor
