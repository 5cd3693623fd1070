// zt_url_options (as the caller's struct_size allows) → the HTTP source's
// settings; shared by zt_open_url and by sets whose index is a URL.
#pragma once

#include "io/http_source.h"
#include "ztensor_io.h"

namespace zt::capi {

// fn names the calling function in messages.
UrlSettings to_url_settings(const zt_url_options *u, const char *fn);

}  // namespace zt::capi
