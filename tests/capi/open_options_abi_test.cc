// zt_open_options grew in 1.1.0. A program linked against 1.0 calls
// zt_open_options_init@ZTENSOR_1 on the 1.0 struct: that version must write
// the 1.0 bytes only (a canary after them survives) and say so in
// struct_size, which zt_open then honours; the default version fills the
// whole 1.1 struct.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>

#include "ztensor.h"

namespace {

// The struct as 1.0's header declared it.
struct OpenOptions10 {
  uint32_t struct_size, access, strict, threads;
  uint64_t max_manifest_size, max_decoded_size;
};

TEST(OpenOptionsAbi, TheOneZeroInitWritesOnlyTheOneZeroStruct) {
  void *lib = dlopen("libztensor.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!lib) lib = dlopen("libztensor.so.1", RTLD_NOW);
  ASSERT_NE(lib, nullptr) << dlerror();
  using Init = void (*)(void *);
  auto init10 = reinterpret_cast<Init>(dlvsym(lib, "zt_open_options_init", "ZTENSOR_1"));
  auto init11 = reinterpret_cast<Init>(dlvsym(lib, "zt_open_options_init", "ZTENSOR_1.1"));
  ASSERT_NE(init10, nullptr) << "zt_open_options_init@ZTENSOR_1 must stay exported";
  ASSERT_NE(init11, nullptr);
  EXPECT_EQ(reinterpret_cast<void *>(init11), reinterpret_cast<void *>(&zt_open_options_init))
      << "programs built now must get the 1.1 init";

  struct {
    OpenOptions10 o;
    unsigned char canary[16];
  } old;
  std::memset(&old, 0xA5, sizeof old);
  init10(&old.o);
  EXPECT_EQ(old.o.struct_size, sizeof(OpenOptions10));
  EXPECT_EQ(old.o.max_decoded_size, uint64_t{64} << 30);
  for (unsigned char b : old.canary) ASSERT_EQ(b, 0xA5) << "the 1.0 init wrote past the 1.0 struct";
  // zt_open takes it (verify_on_read, beyond it, reads as off).
  zt_file *f = nullptr;
  EXPECT_EQ(zt_open("/nonexistent/x.zt", reinterpret_cast<const zt_open_options *>(&old.o), &f), ZT_E_IO);

  zt_open_options cur;
  std::memset(&cur, 0xA5, sizeof cur);
  init11(&cur);
  EXPECT_EQ(cur.struct_size, sizeof(zt_open_options));
  EXPECT_EQ(cur.verify_on_read, 0u);
  dlclose(lib);
}

}  // namespace
