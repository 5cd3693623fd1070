#include "foreign/onnx_layout.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include <climits>

namespace zt::foreign {
namespace {

using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;

// onnx.proto's field numbers.
constexpr uint32_t kModelGraph = 7;
constexpr uint32_t kGraphInitializer = 5;
constexpr uint32_t kGraphSparseInitializer = 15;
constexpr uint32_t kTensorRawData = 9;

bool length_delimited(uint32_t tag) {
  return WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
}

size_t position(const CodedInputStream &in) {
  return static_cast<size_t>(in.CurrentPosition());
}

// A length-delimited field's length, within what is left of the message.
bool read_length(CodedInputStream &in, int &len) {
  uint32_t n = 0;
  if (!in.ReadVarint32(&n) || n > static_cast<uint32_t>(INT_MAX) || static_cast<int>(n) > in.BytesUntilLimit())
    return false;
  len = static_cast<int>(n);
  return true;
}

void keep(std::vector<ByteRange> &rest, size_t begin, size_t end) {
  if (end > begin) rest.push_back({begin, end});
}

// One TensorProto, [begin, end): its raw_data field found, the rest kept.
bool scan_tensor(CodedInputStream &in, size_t begin, size_t end, OnnxLayout::Initializer &init) {
  size_t from = begin;
  for (;;) {
    const size_t at = position(in);
    const uint32_t tag = in.ReadTag();
    if (tag == 0) break;
    if (WireFormatLite::GetTagFieldNumber(tag) == kTensorRawData) {
      int len = 0;
      if (!length_delimited(tag) || init.has_raw || !read_length(in, len)) return false;
      init.has_raw = true;
      init.raw = {position(in), static_cast<uint64_t>(len)};
      if (!in.Skip(len)) return false;
      keep(init.rest, from, at);
      from = position(in);
    } else if (!WireFormatLite::SkipField(&in, tag)) {
      return false;
    }
  }
  if (!in.ConsumedEntireMessage()) return false;
  keep(init.rest, from, end);
  return true;
}

bool scan_graph(CodedInputStream &in, size_t begin, size_t end, OnnxLayout &out) {
  size_t from = begin;
  for (;;) {
    const size_t at = position(in);
    const uint32_t tag = in.ReadTag();
    if (tag == 0) break;
    const uint32_t field = WireFormatLite::GetTagFieldNumber(tag);
    if (field == kGraphSparseInitializer) return false;  // refused by the full parse, which names one
    if (field != kGraphInitializer) {
      if (!WireFormatLite::SkipField(&in, tag)) return false;
      continue;
    }
    int len = 0;
    if (!length_delimited(tag) || !read_length(in, len)) return false;
    const size_t tbegin = position(in);
    const CodedInputStream::Limit limit = in.PushLimit(len);
    OnnxLayout::Initializer init;
    if (!scan_tensor(in, tbegin, tbegin + static_cast<size_t>(len), init)) return false;
    in.PopLimit(limit);
    out.initializers.push_back(std::move(init));
    keep(out.graph_rest, from, at);
    from = position(in);
  }
  if (!in.ConsumedEntireMessage()) return false;
  keep(out.graph_rest, from, end);
  return true;
}

}  // namespace

bool onnx_layout(const uint8_t *data, size_t size, OnnxLayout &out) {
  if (size > static_cast<size_t>(INT_MAX)) return false;
  CodedInputStream in(data, static_cast<int>(size));
  in.SetRecursionLimit(64);  // groups skipped by SkipField nest
  const CodedInputStream::Limit whole = in.PushLimit(static_cast<int>(size));
  bool have_graph = false;
  size_t from = 0;
  for (;;) {
    const size_t at = position(in);
    const uint32_t tag = in.ReadTag();
    if (tag == 0) break;
    if (WireFormatLite::GetTagFieldNumber(tag) != kModelGraph) {
      if (!WireFormatLite::SkipField(&in, tag)) return false;
      continue;
    }
    int len = 0;
    if (!length_delimited(tag) || have_graph || !read_length(in, len)) return false;
    have_graph = true;
    const size_t gbegin = position(in);
    const CodedInputStream::Limit limit = in.PushLimit(len);
    if (!scan_graph(in, gbegin, gbegin + static_cast<size_t>(len), out)) return false;
    in.PopLimit(limit);
    keep(out.model_rest, from, at);
    from = position(in);
  }
  if (!in.ConsumedEntireMessage() || position(in) != size) return false;
  in.PopLimit(whole);
  keep(out.model_rest, from, size);
  return have_graph;
}

std::string gather(const uint8_t *data, const std::vector<ByteRange> &ranges) {
  size_t n = 0;
  for (const ByteRange &r : ranges) n += r.end - r.begin;
  std::string out;
  out.reserve(n);
  for (const ByteRange &r : ranges) out.append(reinterpret_cast<const char *>(data + r.begin), r.end - r.begin);
  return out;
}

}  // namespace zt::foreign
