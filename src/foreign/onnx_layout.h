// Where the parts of an ONNX model lie in its bytes, found with protobuf's
// own CodedInputStream (tags, lengths and skips; no field is decoded here),
// so that raw_data, usually nearly all of a model, is neither parsed nor
// copied: protobuf parses the rest (onnx.cc) and the tensors are read in
// place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace zt::foreign {

// Bytes [begin, end) of the model.
struct ByteRange {
  size_t begin, end;
};

// A raw_data field's value: its bytes in the model.
struct RawData {
  uint64_t offset, length;
};

struct OnnxLayout {
  // The ModelProto without its graph field, and the GraphProto without its
  // initializer fields: ranges whose concatenation is a message of that type
  // (fields may come in any order on the wire; their order is kept).
  std::vector<ByteRange> model_rest, graph_rest;
  struct Initializer {
    std::vector<ByteRange> rest;  // the TensorProto without its raw_data field
    bool has_raw = false;
    RawData raw{0, 0};
  };
  std::vector<Initializer> initializers;  // in the graph's order
};

// False when the model is not plain: no graph field or two (protobuf would
// merge them), a sparse initializer, a raw_data field twice or one of these
// fields with another wire type, or bytes that are no wire format at all.
// The caller then parses the whole model with protobuf, whose verdict and
// messages stand.
bool onnx_layout(const uint8_t *data, size_t size, OnnxLayout &out);

// The ranges' bytes, concatenated.
std::string gather(const uint8_t *data, const std::vector<ByteRange> &ranges);

}  // namespace zt::foreign
