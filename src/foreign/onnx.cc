// ONNX models (.onnx): every initializer of the main graph becomes a dense
// object. The model is parsed by protobuf (libprotobuf-lite) with code
// protoc generates at build time from libonnx-dev's onnx.proto (package
// renamed zt_onnx, src/meson.build); nothing here reads the wire format by
// hand. Tensor bytes come from raw_data, the typed fields (float_data,
// int32_data, ...) or external data: a file beneath the model's folder
// (the rules of a local set's shards, docs/sharding.md), never outside it.
//
// raw_data is not copied: onnx_layout.cc finds where each initializer's
// raw_data lies in the file (protobuf's CodedInputStream walking tags), and
// protobuf parses the model with those bytes left out. The tensor is then
// read in place (zero-copy views where its offset suits its element size).
#include <cstring>
#include <memory>
#include <optional>

#include "foreign.h"

#ifdef ZT_HAVE_ONNX
#include <google/protobuf/io/coded_stream.h>

#include <climits>

#include "foreign/onnx_layout.h"
#include "platform/file.h"
#include "platform/open_beneath.h"
#include "set/shard_index.h"
#include "util/error.h"
#include "zt_onnx.pb.h"
#endif

namespace zt::foreign {

#ifndef ZT_HAVE_ONNX
Imported read_onnx(const uint8_t *, size_t, const std::string &what, const std::string &, const Limits &) {
  throw format_error(what +
                     ": this build reads no ONNX models (configured without protobuf, protoc or onnx.proto: install "
                     "libprotobuf-dev protobuf-compiler libonnx-dev and reconfigure)");
}
#else
namespace {

constexpr uint64_t kPiece = uint64_t{4} << 20;

struct OnnxType {
  int id;
  const char *name;
  zt_dtype dtype;
  const char *logical;
  size_t esize;  // bytes per element (complex: both parts)
};
// TensorProto.DataType (onnx.proto); 17-20 are the float8 types of ONNX 1.14.
const OnnxType kTypes[] = {
    {1, "FLOAT", ZT_F32, "", 4},
    {2, "UINT8", ZT_U8, "", 1},
    {3, "INT8", ZT_I8, "", 1},
    {4, "UINT16", ZT_U16, "", 2},
    {5, "INT16", ZT_I16, "", 2},
    {6, "INT32", ZT_I32, "", 4},
    {7, "INT64", ZT_I64, "", 8},
    {9, "BOOL", ZT_BOOL, "", 1},
    {10, "FLOAT16", ZT_F16, "", 2},
    {11, "DOUBLE", ZT_F64, "", 8},
    {12, "UINT32", ZT_U32, "", 4},
    {13, "UINT64", ZT_U64, "", 8},
    {14, "COMPLEX64", ZT_F32, "complex64", 8},
    {15, "COMPLEX128", ZT_F64, "complex128", 16},
    {16, "BFLOAT16", ZT_BF16, "", 2},
    {17, "FLOAT8E4M3FN", ZT_U8, "f8_e4m3fn", 1},
    {18, "FLOAT8E4M3FNUZ", ZT_U8, "f8_e4m3fnuz", 1},
    {19, "FLOAT8E5M2", ZT_U8, "f8_e5m2", 1},
    {20, "FLOAT8E5M2FNUZ", ZT_U8, "f8_e5m2fnuz", 1},
};

const OnnxType *onnx_type(int id) {
  for (const auto &t : kTypes)
    if (t.id == id) return &t;
  return nullptr;
}

// Delivers `count` values, each written as `width` little-endian bytes by
// put(i, dst), in pieces.
template <class Put>
void emit_values(uint64_t count, size_t width, const PieceFn &fn, Put put) {
  std::vector<uint8_t> piece(static_cast<size_t>(std::min<uint64_t>(count * width, kPiece)));
  size_t fill = 0;
  for (uint64_t i = 0; i < count; ++i) {
    put(i, piece.data() + fill);
    fill += width;
    if (fill == piece.size()) {
      fn(piece.data(), fill);
      fill = 0;
    }
  }
  if (fill) fn(piece.data(), fill);
}

void put_le(uint8_t *dst, uint64_t v, size_t width) {
  for (size_t k = 0; k < width; ++k) dst[k] = static_cast<uint8_t>(v >> (8 * k));
}

uint64_t parse_decimal(const std::string &s, const std::string &ctx) {
  if (s.empty() || s.size() > 19) throw format_error(ctx + ": '" + s + "' is not a byte count");
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') throw format_error(ctx + ": '" + s + "' is not a byte count");
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

// External data: a file beneath the model's folder, checked at open and
// opened again (beneath the folder) by each read.
struct External {
  std::string model_path, location;
  uint64_t offset = 0, length = 0;
};

// The external data's file, opened beneath the model's folder (throws
// zt::Error ZT_E_IO: missing, a symbolic link, not a regular file).
std::unique_ptr<zt::platform::InputFile> open_external(const External &e, const std::string &ctx) {
  zt::IndexFolder folder(e.model_path);
  return std::make_unique<zt::platform::InputFile>(zt::open_beneath(folder, e.location, ctx), e.location);
}

void emit_external(const External &e, const std::string &ctx, const PieceFn &fn) {
  const auto file = open_external(e, ctx);
  const uint64_t size = file->size();
  if (e.offset > size || e.length > size - e.offset)
    throw format_error(ctx + ": its external data '" + e.location + "' is " + std::to_string(size) +
                       " bytes now, shorter than offset + length");
  std::vector<uint8_t> piece(static_cast<size_t>(std::min(e.length, kPiece)));
  for (uint64_t done = 0; done < e.length;) {
    const size_t k = static_cast<size_t>(std::min<uint64_t>(piece.size(), e.length - done));
    try {
      zt::platform::read_at(file->get(), ctx + ": its external data '" + e.location + "'", e.offset + done,
                            piece.data(), k);
    } catch (const zt::Error &err) {
      fail(ZT_E_IO, err.what());
    }
    fn(piece.data(), k);
    done += k;
  }
}

// One initializer as a tensor. `raw`: where its raw_data lies in `file`
// when the parse left it out (t then has none), else nullptr.
Tensor tensor_of(const zt_onnx::TensorProto &t, const RawData *raw, const uint8_t *file, const std::string &what,
                 const std::string &model_path) {
  const std::string ctx = what + ": initializer '" + t.name() + "'";
  if (t.name().empty()) throw format_error(what + ": an initializer without a name");
  const OnnxType *ty = onnx_type(t.data_type());
  if (!ty)
    throw format_error(ctx + ": ONNX data type " + std::to_string(t.data_type()) +
                       " (STRING, 4-bit or unknown) has no zTensor storage type");
  if (t.has_segment()) throw format_error(ctx + ": segmented tensors are not supported");
  Tensor out;
  out.name = t.name();
  out.dtype = ty->dtype;
  out.logical_type = ty->logical;
  if (t.dims_size() > 64) throw format_error(ctx + ": more than 64 dimensions");
  uint64_t numel = 1;
  for (int64_t d : t.dims()) {
    if (d < 0) throw format_error(ctx + ": a negative dimension");
    out.shape.push_back(static_cast<uint64_t>(d));
    numel = checked_mul(numel, static_cast<uint64_t>(d), ctx + ": shape");
  }
  out.nbytes = checked_mul(numel, ty->esize, ctx + ": shape × element size");
  const uint64_t nbytes = out.nbytes;
  const zt_onnx::TensorProto *tp = &t;

  if (t.data_location() == zt_onnx::TensorProto::EXTERNAL) {
    External e;
    e.model_path = model_path;
    bool have_length = false;
    for (const auto &kv : t.external_data()) {
      if (kv.key() == "location")
        e.location = kv.value();
      else if (kv.key() == "offset")
        e.offset = parse_decimal(kv.value(), ctx + ": external data offset");
      else if (kv.key() == "length") {
        e.length = parse_decimal(kv.value(), ctx + ": external data length");
        have_length = true;
      }
    }
    if (!have_length) e.length = nbytes;
    if (e.length != nbytes)
      throw format_error(ctx + ": external data of " + std::to_string(e.length) + " bytes, the shape needs " +
                         std::to_string(nbytes));
    if (model_path.empty() || model_path == "<memory>")
      throw format_error(ctx + ": its data is in an external file, and a model read from memory has no folder");
    try {
      zt::check_shard_location(e.location, ctx + ": external data location");
    } catch (const zt::Error &err) {
      throw format_error(std::string(err.what()) + " (rule: external data lies beneath the model's folder)");
    }  // (a location is malformed input: ZT_E_FORMAT)
    const uint64_t have = open_external(e, ctx)->size();
    if (e.offset > have || e.length > have - e.offset)
      throw format_error(ctx + ": its external data '" + e.location + "' holds " + std::to_string(have) +
                         " bytes, fewer than offset " + std::to_string(e.offset) + " + length " +
                         std::to_string(e.length));
    out.emit = [e, ctx](const PieceFn &fn) { emit_external(e, ctx, fn); };
  } else if (raw) {  // raw_data left in the file: read in place
    if (raw->length != nbytes)
      throw format_error(ctx + ": raw_data holds " + std::to_string(raw->length) + " bytes, the shape needs " +
                         std::to_string(nbytes));
    out.in_place = true;
    out.offset = raw->offset;
    const uint8_t *p = file + raw->offset;
    out.emit = [p, nbytes](const PieceFn &fn) { emit_bytes(p, nbytes, 1, fn); };
  } else if (t.has_raw_data()) {
    if (t.raw_data().size() != nbytes)
      throw format_error(ctx + ": raw_data holds " + std::to_string(t.raw_data().size()) + " bytes, the shape needs " +
                         std::to_string(nbytes));
    out.emit = [tp](const PieceFn &fn) {
      emit_bytes(reinterpret_cast<const uint8_t *>(tp->raw_data().data()), tp->raw_data().size(), 1, fn);
    };
  } else {
    // The typed field the data type uses (onnx.proto's comments).
    const bool complex = ty->logical[0] == 'c';
    const uint64_t values = complex ? numel * 2 : numel;
    const size_t width = complex ? ty->esize / 2 : ty->esize;
    uint64_t have = 0;
    const char *field = "";
    switch (ty->id) {
      case 1:
      case 14:
        have = static_cast<uint64_t>(t.float_data_size());
        field = "float_data";
        out.emit = [tp, values](const PieceFn &fn) {
          emit_values(values, 4, fn, [tp](uint64_t i, uint8_t *d) {
            uint32_t bits;
            const float f = tp->float_data(static_cast<int>(i));
            std::memcpy(&bits, &f, 4);
            put_le(d, bits, 4);
          });
        };
        break;
      case 11:
      case 15:
        have = static_cast<uint64_t>(t.double_data_size());
        field = "double_data";
        out.emit = [tp, values](const PieceFn &fn) {
          emit_values(values, 8, fn, [tp](uint64_t i, uint8_t *d) {
            uint64_t bits;
            const double f = tp->double_data(static_cast<int>(i));
            std::memcpy(&bits, &f, 8);
            put_le(d, bits, 8);
          });
        };
        break;
      case 7:
        have = static_cast<uint64_t>(t.int64_data_size());
        field = "int64_data";
        out.emit = [tp, values](const PieceFn &fn) {
          emit_values(values, 8, fn, [tp](uint64_t i, uint8_t *d) {
            put_le(d, static_cast<uint64_t>(tp->int64_data(static_cast<int>(i))), 8);
          });
        };
        break;
      case 12:
      case 13:
        have = static_cast<uint64_t>(t.uint64_data_size());
        field = "uint64_data";
        out.emit = [tp, values, width](const PieceFn &fn) {
          emit_values(values, width, fn,
                      [tp, width](uint64_t i, uint8_t *d) { put_le(d, tp->uint64_data(static_cast<int>(i)), width); });
        };
        break;
      default:  // int32_data: INT32, the narrower integers, BOOL, FLOAT16, BFLOAT16 (their bits), float8
        have = static_cast<uint64_t>(t.int32_data_size());
        field = "int32_data";
        out.emit = [tp, values, width](const PieceFn &fn) {
          emit_values(values, width, fn, [tp, width](uint64_t i, uint8_t *d) {
            put_le(d, static_cast<uint32_t>(tp->int32_data(static_cast<int>(i))), width);
          });
        };
        break;
    }
    if (have != values)
      throw format_error(ctx + ": " + field + " holds " + std::to_string(have) + " values, the shape needs " +
                         std::to_string(values) + (values && !have ? " (no data at all)" : ""));
  }
  return out;
}

// Parses `bytes` as `msg` as the whole model would be parsed.
bool parse_part(google::protobuf::MessageLite &msg, const std::string &bytes) {
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t *>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  in.SetRecursionLimit(64);  // subgraphs nest; a hostile file must not exhaust the stack
  return msg.ParsePartialFromCodedStream(&in) && in.ConsumedEntireMessage();
}

// The model parsed without its raw_data, which stays in the file (the
// tensors are read in place). Every other byte goes through protobuf, as
// in a whole parse: the model without its graph, the graph without its
// initializers, each initializer without its raw_data. Empty when the
// layout is not plain or a part does not parse: the whole parse then
// decides, with its messages.
std::optional<Imported> read_in_place(const uint8_t *data, size_t size, const std::string &what,
                                      const std::string &model_path) {
  OnnxLayout layout;
  if (!onnx_layout(data, size, layout)) return std::nullopt;
  {
    zt_onnx::ModelProto model;  // checked, not kept: only the graph's initializers are read
    zt_onnx::GraphProto graph;
    if (!parse_part(model, gather(data, layout.model_rest)) || !parse_part(graph, gather(data, layout.graph_rest)))
      return std::nullopt;
  }
  auto protos = std::make_shared<std::vector<zt_onnx::TensorProto> >(layout.initializers.size());
  for (size_t i = 0; i < protos->size(); ++i)
    if (!parse_part((*protos)[i], gather(data, layout.initializers[i].rest))) return std::nullopt;
  Imported r;
  r.format_name = "onnx";
  r.keepalive = protos;  // the typed fields' emit reads them
  r.tensors.reserve(protos->size());
  for (size_t i = 0; i < protos->size(); ++i) {
    const OnnxLayout::Initializer &init = layout.initializers[i];
    r.tensors.push_back(tensor_of((*protos)[i], init.has_raw ? &init.raw : nullptr, data, what, model_path));
  }
  return r;
}

}  // namespace

Imported read_onnx(const uint8_t *data, size_t size, const std::string &what, const std::string &model_path,
                   const Limits &) {
  if (size > static_cast<size_t>(INT_MAX))
    throw format_error(what + ": an ONNX file of " + std::to_string(size) +
                       " bytes is past protobuf's 2 GiB message limit; larger models keep their tensors as external "
                       "data (onnx.save_model(..., save_as_external_data=True))");
  if (std::optional<Imported> r = read_in_place(data, size, what, model_path)) return std::move(*r);
  // Not plain (or not valid): the whole model through protobuf, raw_data copied.
  auto model = std::make_shared<zt_onnx::ModelProto>();
  {
    google::protobuf::io::CodedInputStream in(data, static_cast<int>(size));
    in.SetRecursionLimit(64);  // subgraphs nest; a hostile file must not exhaust the stack
    if (!model->ParsePartialFromCodedStream(&in) || !in.ConsumedEntireMessage())
      throw format_error(what + ": not a valid ONNX model (protobuf cannot parse it, or it nests deeper than 64)");
  }
  if (!model->has_graph()) throw format_error(what + ": an ONNX model without a graph");
  Imported r;
  r.format_name = "onnx";
  r.keepalive = model;
  const zt_onnx::GraphProto &g = model->graph();
  if (g.sparse_initializer_size() > 0)
    throw format_error(what + ": sparse initializers ('" + g.sparse_initializer(0).values().name() +
                       "') are not supported");
  r.tensors.reserve(static_cast<size_t>(g.initializer_size()));
  for (const zt_onnx::TensorProto &t : g.initializer())
    r.tensors.push_back(tensor_of(t, nullptr, data, what, model_path));
  return r;
}
#endif  // ZT_HAVE_ONNX

}  // namespace zt::foreign
