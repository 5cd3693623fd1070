// ZT_INTERNAL marks the few C++ declarations of the core that the `zt` tool
// built from this tree calls through libztensor.so: the foreign-format
// importers behind `zt convert` and the GGUF type table of `zt export`
// (docs/architecture.md, "Internal interface").
//
// They are no API. The linker map (capi/ztensor.map) puts them in the version
// node ZTENSOR_PRIVATE, apart from the ZTENSOR_1.x nodes of the C ABI; no
// header in include/ declares them, no compatibility is promised, and a zt
// must run with the libztensor of its own build (Debian: ztensor-tools
// depends on libztensor1 (= ${binary:Version})). Everything unmarked stays
// hidden (-fvisibility=hidden). Mark a declaration only when zt needs it,
// and add its pattern to ZTENSOR_PRIVATE; tests/c/check_exports.sh fails on
// anything exported outside the C ABI and that node.
#pragma once

#if defined(_WIN32) && defined(ZT_BUILDING_LIBRARY)
#define ZT_INTERNAL __declspec(dllexport)
#elif defined(_WIN32)
#define ZT_INTERNAL __declspec(dllimport)
#elif defined(__GNUC__)
#define ZT_INTERNAL __attribute__((visibility("default")))
#else
#define ZT_INTERNAL
#endif
