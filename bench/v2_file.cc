#include "v2_file.h"

#include <cstdio>
#include <vector>

#include "v2_image.h"

namespace bench {

void write_v2(const Workload &w, const std::string &path) {
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f) die("cannot create " + path);
  // Large writes, as the library's writer makes: the page cache keeps a
  // file in folios as large as the writes that filled it, and mapping a
  // file of 4 KiB folios costs the reads after it twice the kernel time
  // (stdio's default 4 KiB buffer made v2 look 30% slower on 'small').
  static std::vector<char> buffer(size_t{16} << 20);
  std::setvbuf(f, buffer.data(), _IOFBF, buffer.size());
  std::fwrite(v2img::kMagic, 1, 8, f);
  uint64_t pos = 8;
  const std::vector<char> zeros(4096, 0);
  v2img::Fields objects;
  objects.reserve(w.tensors.size());
  for (const TensorSpec &t : w.tensors) {
    const uint64_t at = (pos + 4095) / 4096 * 4096;
    std::fwrite(zeros.data(), 1, at - pos, f);
    std::fwrite(w.arena.data() + t.offset, 1, t.bytes, f);
    pos = at + t.bytes;
    objects.push_back({t.name, v2img::dense("f32", t.shape, at, t.bytes)});
  }
  const std::string m = v2img::manifest(objects);
  const uint64_t m_at = (pos + 4095) / 4096 * 4096;
  std::fwrite(zeros.data(), 1, m_at - pos, f);
  std::fwrite(m.data(), 1, m.size(), f);
  std::vector<uint8_t> footer(40, 0);
  v2img::put_le(footer, 0, m_at, 8);
  v2img::put_le(footer, 8, m.size(), 8);
  v2img::put_le(footer, 16, XXH3_64bits(m.data(), m.size()), 8);
  v2img::put_le(footer, 24, 2, 4);
  std::copy(v2img::kMagic, v2img::kMagic + 8, footer.begin() + 32);
  std::fwrite(footer.data(), 1, footer.size(), f);
  if (std::fclose(f) != 0) die("cannot write " + path);
}

}  // namespace bench
