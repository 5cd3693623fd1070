// The libcbor streaming decoder's side of cbor::Tree: Builder turns each
// decoder callback into a node of the tree (or an event the parse loop in
// cbor_tree.cc acts on once the decoder says how many bytes it read).
#pragma once

#include <cbor.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "manifest/cbor_tree.h"
#include "ztensor.h"

namespace zt::cbor::detail {

using Open = OpenItem;

struct Builder {
  explicit Builder(std::vector<Open> &s) : stack(s) {}
  std::vector<Node> *nodes;
  std::vector<Open> &stack;
  const unsigned char *data = nullptr;  // the buffer being decoded
  const unsigned char *data_end = nullptr;
  size_t pos = 0;  // offset of the item being decoded
  size_t max_depth = 256;
  size_t collapse_depth = 0;
  bool done = false;
  // Set by callbacks, acted on once the decoder says how much it read.
  enum class Event { None, Leaf, Open, Break, Chunk } event = Event::None;
  uint64_t open_count = 0;
  bool open_indef = false;
  bool error = false;
  zt_status error_status = ZT_E_CBOR;
  std::string error_message;
  const char *chunk = nullptr;
  size_t chunk_len = 0;
  Kind chunk_kind = Kind::Bytes;

  void set_error(zt_status st, std::string msg) {
    if (!error) {
      error = true;
      error_status = st;
      error_message = std::move(msg);
    }
  }

  // The 64-bit argument of the head of the item being decoded, read from
  // its bytes (libcbor has checked they are there): see StringLength.
  uint64_t head_argument() const {
    const unsigned char *p = data + pos;
    const unsigned info = p[0] & 31u;
    if (info < 24) return info;
    const size_t n = size_t{1} << (info - 24);  // 24..27: 1, 2, 4, 8 bytes
    uint64_t v = 0;
    for (size_t i = 1; i <= n; ++i) v = (v << 8) | p[i];
    return v;
  }

  Node &push(Kind k) {
    // Built in place: a Node assembled on the stack and copied in stalls
    // on store forwarding, once per item.
    Node &n = nodes->emplace_back();
    n.kind = k;
    n.begin = static_cast<uint32_t>(pos);
    return n;
  }
  // Inside an indefinite string only same-kind definite chunks may appear.
  bool in_string() const { return !stack.empty() && stack.back().is_string; }
  void leaf(Kind k, uint64_t v) {
    if (in_string()) return set_error(ZT_E_CBOR, "non-string item inside an indefinite-length string");
    push(k).value = v;
    event = Event::Leaf;
  }
  void real(double d) {
    if (in_string()) return set_error(ZT_E_CBOR, "non-string item inside an indefinite-length string");
    Node &n = push(Kind::Float);
    std::memcpy(&n.value, &d, sizeof d);
    event = Event::Leaf;
  }
  void string(Kind k, const unsigned char *data, uint64_t len) {
    if (in_string()) {
      if (stack.back().string_kind != k)
        return set_error(ZT_E_CBOR, "chunk of the wrong type inside an indefinite-length string");
      chunk = reinterpret_cast<const char *>(data);
      chunk_len = len;
      event = Event::Chunk;
      return;
    }
    (void)data;  // a definite string is the tail of its item's bytes
    push(k).value = len;
    event = Event::Leaf;
  }
  void open(Kind k, uint64_t count, bool indef) {
    if (in_string()) return set_error(ZT_E_CBOR, "container inside an indefinite-length string");
    Node &n = push(k);
    n.value = indef ? 0 : count;
    n.collapsed = collapse_depth != 0 && stack.size() == collapse_depth;
    open_count = count;
    open_indef = indef;
    event = Event::Open;
  }
  void open_string(Kind k) {
    if (in_string()) return set_error(ZT_E_CBOR, "nested indefinite-length string");
    push(k);
    open_indef = true;
    open_count = 0;
    event = Event::Open;
  }
};

// The decoder callbacks, each calling into the Builder passed as context.
extern const cbor_callbacks kBuilderCallbacks;

}  // namespace zt::cbor::detail
