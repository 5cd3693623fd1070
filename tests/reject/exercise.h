// Drives every read path of the C ABI over one open file — enumerate, info,
// size query, read, ranged read, view, verify (lenient and strict), JSON —
// and checks what must hold whatever the bytes were: a call either succeeds
// with consistent results or returns a negative status. Shared by the
// sweeps (tests/reject) and the fuzz targets (fuzz/), so hostile input takes
// every path the tests know about.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "ztensor.h"

namespace zttest {

// Problems found (a success with inconsistent results); 0 when clean.
// Decoded sizes above `max_read` are not allocated (a ranged read is tried).
inline int exercise_file(const zt_file *f, size_t max_read = size_t{64} << 20) {
  int problems = 0;
  auto expect = [&](bool ok) { problems += ok ? 0 : 1; };
  const char *version = nullptr;
  expect(zt_file_version(f, &version) == ZT_OK && version != nullptr);
  char *json = nullptr;
  if (zt_file_to_json(f, &json) == ZT_OK) expect(json != nullptr);
  zt_free(json);
  json = nullptr;
  if (zt_file_attributes_json(f, &json) == ZT_OK) expect(json != nullptr);
  zt_free(json);
  size_t count = 0;
  expect(zt_file_object_count(f, &count) == ZT_OK);
  for (size_t i = 0; i < count; ++i) {
    const zt_object *o = nullptr;
    if (zt_file_object_at(f, i, &o) != ZT_OK || !o) {
      ++problems;
      continue;
    }
    zt_object_info info;
    std::memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    if (zt_object_get_info(o, &info) != ZT_OK) {
      ++problems;
      continue;
    }
    const zt_object *again = nullptr;
    expect(zt_file_object_by_name(f, info.name, info.name_len, &again) == ZT_OK && again != nullptr);
    const char *err = nullptr;
    expect(zt_object_error(o, &err) == ZT_OK && err != nullptr);
    uint64_t numel = 0;
    (void)zt_object_numel(o, &numel);
    json = nullptr;
    if (zt_object_attributes_json(o, &json) == ZT_OK) zt_free(json);
    for (size_t c = 0; c < info.component_count; ++c) {
      zt_component_info ci;
      std::memset(&ci, 0, sizeof ci);
      ci.struct_size = sizeof ci;
      if (zt_object_component(o, c, &ci) != ZT_OK) {
        ++problems;
        continue;
      }
      size_t need = 0;
      zt_status st = zt_component_read(o, c, nullptr, 0, &need);
      if (st == ZT_OK) expect(need == 0);
      if (st == ZT_E_BUFFER_TOO_SMALL && need <= max_read) {
        std::vector<uint8_t> buf(need);
        size_t got = 0;
        st = zt_component_read(o, c, buf.data(), buf.size(), &got);
        if (st == ZT_OK)
          expect(got == need);
        else
          expect(st < 0);
      } else if (st == ZT_E_BUFFER_TOO_SMALL) {
        size_t es = zt_dtype_size(ci.dtype);
        uint8_t one[8];
        st = zt_component_read_range(o, c, 0, 1, one, sizeof one);
        expect(st <= 0 && es <= 8);
      } else {
        expect(st < 0 || st == ZT_OK);
      }
      // Structural access (1.3): the stored bytes, whatever they are.
      size_t stored = 0;
      st = zt_component_read_stored(o, c, nullptr, 0, &stored);
      expect(st < 0 || (st == ZT_OK && ci.length == 0));
      if (st == ZT_E_BUFFER_TOO_SMALL && stored <= max_read) {
        expect(stored == ci.length);
        std::vector<uint8_t> raw(stored);
        size_t got = 0;
        st = zt_component_read_stored(o, c, raw.data(), raw.size(), &got);
        expect(st < 0 || (st == ZT_OK && got == stored));
      }
      const void *view = nullptr;
      size_t view_len = 0;
      if (zt_component_view(o, c, &view, &view_len) == ZT_OK) {
        expect(view != nullptr && view_len == ci.length);
        volatile uint8_t sink = 0;
        if (view_len) sink = static_cast<const uint8_t *>(view)[view_len - 1];
        (void)sink;
      }
      // The misaligned variant lends at least what zt_component_view lends.
      const void *loose = nullptr;
      size_t loose_len = 0;
      if (zt_component_view_unaligned(o, c, &loose, &loose_len) == ZT_OK) {
        expect(loose != nullptr && loose_len == ci.length);
        expect(!view || (view == loose && view_len == loose_len));
        volatile uint8_t sink = 0;
        if (loose_len) sink = static_cast<const uint8_t *>(loose)[loose_len - 1];
        (void)sink;
      } else {
        expect(view == nullptr);
      }
      zt_verify_result vr;
      st = zt_component_verify(o, c, &vr);
      if (st == ZT_OK) expect(vr == ZT_VERIFY_NO_DIGEST || vr == ZT_VERIFY_OK || vr == ZT_VERIFY_UNVERIFIABLE);
    }
    expect(zt_object_verify(o) <= 0);
  }
  expect(zt_file_verify(f, 0, nullptr, nullptr) <= 0);
  expect(zt_file_verify(f, 1, nullptr, nullptr) <= 0);
  return problems;
}

// Opens bytes from memory (lenient and strict) and exercises what opens.
inline int exercise_bytes(const void *data, size_t size) {
  int problems = 0;
  for (uint32_t strict = 0; strict < 2; ++strict) {
    zt_open_options opts;
    zt_open_options_init(&opts);
    opts.strict = strict;
    opts.threads = 1;
    opts.max_decoded_size = size_t{256} << 20;
    zt_file *f = nullptr;
    zt_status st = zt_open_memory(data, size, &opts, &f);
    if (st != ZT_OK) {
      problems += (st < 0 && f == nullptr) ? 0 : 1;
      continue;
    }
    problems += exercise_file(f);
    problems += zt_close(f) == ZT_OK ? 0 : 1;
  }
  return problems;
}

}  // namespace zttest
