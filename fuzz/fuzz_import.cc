// Fuzz target: the library's readers of foreign formats (src/foreign), which
// zt_open and zt convert share. Byte 0 picks the format (0 safetensors, 1
// npy, 2 zip: npz or PyTorch, 3 gguf, 4 a bare pickle through the PyTorch
// interpreter, 5 ONNX, 6 HDF5; higher values wrap), the rest is the file. Only
// zt::Error may escape a reader (a clear message, exit 1 in the
// tool); every tensor it accepts must then deliver exactly the byte count it
// announced. Then the same bytes go through zt_open_memory, as a zt_file:
// opening, reading and verifying every object end in data or a negative
// status. Limits are small so a hostile size cannot drive a large allocation.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "foreign/foreign.h"
#include "foreign/pickle.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  zt::foreign::Limits limits;
  limits.max_header = uint64_t{1} << 20;
  limits.max_member = uint64_t{64} << 20;
  limits.max_elements_in_array = uint64_t{1} << 16;
  const uint8_t *file = data + 1;
  const size_t file_size = size - 1;
  try {
    zt::foreign::Imported r;
    switch (data[0] % 7) {
      case 0:
        r = zt::foreign::read_safetensors(file, file_size, "fuzz", limits);
        break;
      case 1:
        r = zt::foreign::read_npy(file, file_size, "fuzz", "t", limits);
        break;
      case 2:
        r = zt::foreign::read_zip(file, file_size, "fuzz", limits);
        break;
      case 3:
        r = zt::foreign::read_gguf(file, file_size, "fuzz", limits);
        break;
      case 5:
        r = zt::foreign::read_onnx(file, file_size, "fuzz", "", limits);
        break;
      case 6:  // libhdf5 parses these bytes (as a file image): its bugs are found, not fixed, here
        r = zt::foreign::read_hdf5(file, file_size, "fuzz", "", limits);
        break;
      default: {
        zt::foreign::PickleLimits pl;
        pl.max_values = uint64_t{1} << 16;
        pl.max_memo = uint64_t{1} << 12;
        zt::foreign::unpickle_torch(file, file_size, "fuzz", pl);
        break;
      }
    }
    for (const auto &t : r.tensors) {
      uint64_t got = 0;
      try {
        t.emit([&](const void *, size_t n) { got += n; });
      } catch (const zt::Error &) {
        continue;  // a member that turns out shorter or longer: refused
      }
      if (got != t.nbytes) std::abort();  // delivered other than announced
    }
  } catch (const zt::Error &) {
  }
  // Through the C ABI (recognised by content, as zt_open does).
  zt_open_options opts;
  zt_open_options_init(&opts);
  opts.max_manifest_size = limits.max_header;
  opts.max_decoded_size = limits.max_member;
  zt_file *f = nullptr;
  if (zt_open_memory(file, file_size, &opts, &f) == ZT_OK) {
    size_t n = 0;
    zt_file_object_count(f, &n);
    for (size_t i = 0; i < n; ++i) {
      const zt_object *o = nullptr;
      if (zt_file_object_at(f, i, &o) != ZT_OK) std::abort();
      size_t need = 0;
      if (zt_component_read(o, 0, nullptr, 0, &need) == ZT_E_BUFFER_TOO_SMALL) {
        std::string buf(need, '\0');
        size_t got = 0;
        if (zt_component_read(o, 0, &buf[0], need, &got) == ZT_OK && got != need) std::abort();
      }
      const void *view = nullptr;
      size_t len = 0;
      if (zt_component_view(o, 0, &view, &len) == ZT_OK && len != need) std::abort();
    }
    zt_file_verify(f, 1, nullptr, nullptr);
    char *json = nullptr;
    if (zt_file_to_json(f, &json) == ZT_OK) zt_free(json);
    zt_close(f);
  } else if (f) {
    std::abort();  // a failed open hands out no handle
  }
  return 0;
}
