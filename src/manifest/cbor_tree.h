// A flat, read-only tree of one CBOR item, built with libcbor's streaming
// decoder. Flat (one vector of nodes, children following their parent) so a
// manifest of 100 000 objects costs a few allocations, not millions; every
// node remembers its byte range so unknown fields and attributes can be kept
// and re-emitted exactly as found. Hostile input is bounded: nesting depth,
// element counts against the bytes left, duplicate map keys.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

namespace zt::cbor {

enum class Kind : uint8_t { Uint, Negint, Bytes, Text, Array, Map, Tag, Float, Bool, Null, Undefined };

struct Node {
  Kind kind;
  uint64_t value = 0;         // Uint; Negint n means -1-n; Array/Map: item/pair
                              // count; Tag: tag number; Bool: 0/1
  double f = 0;               // Float
  const char *str = nullptr;  // Bytes/Text contents (definite or joined)
  size_t len = 0;
  uint32_t next = 0;          // index of the node after this subtree
  size_t begin = 0, end = 0;  // the item's encoded bytes in the buffer

  std::string_view text() const { return {str, len}; }
};

class Tree {
 public:
  // Decodes exactly one item filling [data, data+size). Throws zt::Error:
  // ZT_E_CBOR (malformed, truncated, trailing bytes), ZT_E_CBOR_DEPTH,
  // ZT_E_DUPLICATE_KEY. `what` names the buffer in messages.
  Tree(const uint8_t *data, size_t size, const std::string &what, size_t max_depth = 256);

  const Node &node(uint32_t i) const { return nodes_[i]; }
  uint32_t root() const { return 0; }
  size_t size() const { return nodes_.size(); }
  const uint8_t *data() const { return data_; }

  // Children of an array (items) or map (key, value, key, value...).
  uint32_t first_child(uint32_t i) const { return i + 1; }
  uint32_t next(uint32_t i) const { return nodes_[i].next; }

  // Map lookup by text key; returns 0 (the root, never a value) if absent.
  uint32_t find(uint32_t map, std::string_view key) const;

  // The raw encoded bytes of a node.
  std::string_view raw(uint32_t i) const {
    return {reinterpret_cast<const char *>(data_) + nodes_[i].begin, nodes_[i].end - nodes_[i].begin};
  }

  std::vector<Node> &mutable_nodes() { return nodes_; }
  std::deque<std::string> &joined() { return joined_; }

 private:
  const uint8_t *data_;
  std::vector<Node> nodes_;
  std::deque<std::string> joined_;  // contents of indefinite-length strings
};

const char *kind_name(Kind k);

}  // namespace zt::cbor
