// A Source whose bytes come from a caller's callbacks (zt_open_io): any
// storage the caller can read by offset, e.g. an object-store SDK. Nothing
// is mapped, so views are refused as for pread access; every callback
// failure or short read becomes a zt::Error naming the source and range.
#pragma once

#include <memory>
#include <string>

#include "container/source.h"
#include "ztensor_io.h"

namespace zt {

// Takes ownership of io->user: its close callback runs when the source is
// destroyed (also when the constructor fails).
std::unique_ptr<Source> open_callback_source(const zt_io &io);

// The detail a callback gave with zt_io_set_error, for the failure it is
// about to return. Only a callback running on this thread may set it.
void set_callback_error(const char *message);

}  // namespace zt
