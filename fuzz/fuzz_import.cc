// Fuzz target: the readers of zt convert's foreign formats. Byte 0 picks the
// format (0 safetensors, 1 npy, 2 npz, 3 gguf; higher values wrap), the rest
// is the file. Only ztimport::InputError may escape a reader (a clear
// message, exit 1 in the tool); every tensor it accepts must then deliver
// exactly the byte count it announced. Limits are small so a hostile size
// cannot drive a large allocation.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "foreign/foreign.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  ztimport::Limits limits;
  limits.max_header = uint64_t{1} << 20;
  limits.max_member = uint64_t{64} << 20;
  limits.max_elements_in_array = uint64_t{1} << 16;
  const uint8_t *file = data + 1;
  const size_t file_size = size - 1;
  try {
    ztimport::Imported r;
    switch (data[0] % 4) {
      case 0:
        r = ztimport::read_safetensors(file, file_size, "fuzz", limits);
        break;
      case 1:
        r = ztimport::read_npy(file, file_size, "fuzz", "t", limits);
        break;
      case 2:
        r = ztimport::read_npz(file, file_size, "fuzz", limits);
        break;
      default:
        r = ztimport::read_gguf(file, file_size, "fuzz", limits);
        break;
    }
    for (const auto &t : r.tensors) {
      uint64_t got = 0;
      try {
        t.emit([&](const void *, size_t n) { got += n; });
      } catch (const ztimport::InputError &) {
        continue;  // a member that turns out shorter or longer: refused
      }
      if (got != t.nbytes) std::abort();  // delivered other than announced
    }
  } catch (const ztimport::InputError &) {
  }
  return 0;
}
