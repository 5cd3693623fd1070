// Opening files from caller callbacks and from URLs (ztensor_io.h), and the
// request counters of remote files.
#include <algorithm>
#include <cstddef>
#include <cstring>

#include "handles.h"
#include "io/callback_source.h"
#include "io/http_source.h"
#include "set/v2_shards.h"
#include "url_settings.h"
#include "ztensor_io.h"

using namespace zt;
using namespace zt::capi;

namespace {

// The members an io must hold for the library to use it (through close).
constexpr size_t kIoMinSize = ZT_SIZE_THROUGH(zt_io, close);

}  // namespace

namespace zt::capi {

UrlSettings to_url_settings(const zt_url_options *u, const char *fn) {
  UrlSettings s;
  if (u) {
    if (!ZT_HAS_FIELD(u, connect_timeout_ms))
      invalid((std::string(fn) + ": zt_url_options.struct_size is not set (call zt_url_options_init)").c_str());
      // Fields beyond what the caller's struct holds keep their defaults;
      // zero means the default too.
#define ZT_URL_FIELD(name) \
  if (ZT_HAS_FIELD(u, name) && u->name != 0) s.name = u->name
    ZT_URL_FIELD(connect_timeout_ms);
    ZT_URL_FIELD(timeout_ms);
    ZT_URL_FIELD(max_redirects);
    ZT_URL_FIELD(cache_bytes);
    ZT_URL_FIELD(tail_bytes);
    ZT_URL_FIELD(max_header_bytes);
#undef ZT_URL_FIELD
    // max_parallel: 0 (what init writes) lets a bulk read use as many
    // connections as the link makes worthwhile; a value is a hard cap.
    if (ZT_HAS_FIELD(u, max_parallel) && u->max_parallel != 0) {
      s.max_parallel = u->max_parallel;
      s.max_parallel_set = true;
    }
    // Zero is meaningful for these: take them as given.
    if (ZT_HAS_FIELD(u, retries)) s.retries = u->retries;
    if (ZT_HAS_FIELD(u, allow_any_scheme)) s.allow_any_scheme = u->allow_any_scheme != 0;
    if (ZT_HAS_FIELD(u, max_unranged_bytes)) s.max_unranged_bytes = u->max_unranged_bytes;
    if (ZT_HAS_FIELD(u, bearer_token) && u->bearer_token) s.bearer_token = u->bearer_token;
    if (ZT_HAS_FIELD(u, user_agent) && u->user_agent) s.user_agent = u->user_agent;
    // 1.2 fields. A member past the caller's struct_size is never read,
    // not even to be ignored: a 1.1 caller's struct ends before these (ASan
    // caught such a read when the size check came after it).
    if (ZT_HAS_FIELD(u, low_speed_bytes)) s.low_speed_bytes = u->low_speed_bytes;
    if (ZT_HAS_FIELD(u, low_speed_time_ms) && u->low_speed_time_ms) s.low_speed_time_ms = u->low_speed_time_ms;
    if (ZT_HAS_FIELD(u, deadline_ms)) s.deadline_ms = u->deadline_ms;
#define ZT_URL_TEXT(name) \
  if (ZT_HAS_FIELD(u, name) && u->name) s.name = u->name
    ZT_URL_TEXT(s3_region);
    ZT_URL_TEXT(s3_endpoint);
    ZT_URL_TEXT(s3_profile);
    ZT_URL_TEXT(aws_access_key_id);
    ZT_URL_TEXT(aws_secret_access_key);
    ZT_URL_TEXT(aws_session_token);
#undef ZT_URL_TEXT
    if (ZT_HAS_FIELD(u, s3_addressing)) {
      if (u->s3_addressing > ZT_S3_ADDRESSING_VIRTUAL)
        invalid((std::string(fn) + ": zt_url_options.s3_addressing is " + std::to_string(u->s3_addressing) +
                 " (ZT_S3_ADDRESSING_AUTO, _PATH or _VIRTUAL)")
                    .c_str());
      s.s3_addressing = u->s3_addressing;
    }
    if (ZT_HAS_FIELD(u, s3_unsigned)) s.s3_unsigned = u->s3_unsigned != 0;
    // 1.3 fields: the range cost model.
    if (ZT_HAS_FIELD(u, rtt_ms)) s.rtt_ms = u->rtt_ms;
    if (ZT_HAS_FIELD(u, max_overfetch_percent)) s.max_overfetch_percent = u->max_overfetch_percent;
    if (ZT_HAS_FIELD(u, link_bytes_per_s)) s.link_bytes_per_s = u->link_bytes_per_s;
    if (ZT_HAS_FIELD(u, chunk_bytes) && u->chunk_bytes) s.chunk_bytes = u->chunk_bytes;
  }
  return s;
}

}  // namespace zt::capi

extern "C" {

ZT_API void zt_io_init(zt_io *io) {
  if (!init_struct(io)) return;
}

ZT_API void zt_io_set_error(const char *message) {
  set_callback_error(message);
}

ZT_API zt_status zt_open_io(const zt_io *io, const zt_open_options *opts, zt_file **out) {
  return guard([&] {
    if (!io) {
      if (out) *out = nullptr;
      invalid("zt_open_io: io is NULL");
    }
    if (io->struct_size < kIoMinSize)
      fail(ZT_E_INVALID_ARG, "zt_open_io: zt_io.struct_size is " + std::to_string(io->struct_size) + ", below the " +
                                 std::to_string(kIoMinSize) + " bytes of the 1.1 members (call zt_io_init)");
    // From here on the caller's user pointer is ours: every failure closes it.
    zt_io copy = current_struct(*io, zt_io_init);
    auto close_user = [&] {
      if (copy.close) copy.close(copy.user);
    };
    if (!out) {
      close_user();
      invalid("zt_open_io: out is NULL");
    }
    *out = nullptr;
    if (!copy.read_at) {
      close_user();
      invalid("zt_open_io: zt_io.read_at is NULL");
    }
    ReaderOptions ropts;
    try {
      ropts = to_reader_options(opts);
    } catch (...) {
      close_user();
      throw;
    }
    // The source owns user now: destroying it (on any failure below) closes.
    auto src = open_callback_source(copy);
    return finish_open(Reader::open_source(std::move(src), ropts), out);
  });
}

ZT_API void zt_url_options_init(zt_url_options *u) {
  if (!init_struct(u)) return;
  const UrlSettings d;
  u->connect_timeout_ms = d.connect_timeout_ms;
  u->timeout_ms = d.timeout_ms;
  u->retries = d.retries;
  u->max_parallel = 0;  // from the link (UrlSettings::max_parallel_set)
  u->max_redirects = d.max_redirects;
  u->cache_bytes = d.cache_bytes;
  u->tail_bytes = d.tail_bytes;
  u->max_unranged_bytes = d.max_unranged_bytes;
  u->max_header_bytes = d.max_header_bytes;
  u->low_speed_time_ms = d.low_speed_time_ms;
  u->max_overfetch_percent = d.max_overfetch_percent;
  u->chunk_bytes = d.chunk_bytes;
}

// zt_url_options grew in 1.2 (stall limits, deadline, S3). A program built
// against 1.1 calls zt_url_options_init@ZTENSOR_1.1 with the 1.1 struct:
// that version writes only the 1.1 fields. Programs built against 1.2 get
// zt_url_options_init@@ZTENSOR_1.2 (capi/ztensor.map).
#if defined(__ELF__)
extern "C" __attribute__((visibility("default"))) void ztensor_url_options_init_1_1(zt_url_options *u) {
  init_older_struct(u, ZT_SIZE_THROUGH(zt_url_options, user_agent), zt_url_options_init);
}
__asm__(".symver ztensor_url_options_init_1_1, zt_url_options_init@ZTENSOR_1.1");
// 1.3 appended the cost model's fields: a program built against 1.2 calls
// zt_url_options_init@ZTENSOR_1.2, which writes the 1.2 struct only.
extern "C" __attribute__((visibility("default"))) void ztensor_url_options_init_1_2(zt_url_options *u) {
  init_older_struct(u, ZT_SIZE_THROUGH(zt_url_options, s3_unsigned), zt_url_options_init);
}
__asm__(".symver ztensor_url_options_init_1_2, zt_url_options_init@ZTENSOR_1.2");
#endif

ZT_API zt_status zt_open_url(const char *url, const zt_url_options *u, const zt_open_options *opts, zt_file **out) {
  return guard([&] {
    if (!out) invalid("zt_open_url: out is NULL");
    *out = nullptr;
    if (!url) invalid("zt_open_url: url is NULL");
    const UrlSettings s = to_url_settings(u, "zt_open_url");
    ReaderOptions ropts = to_reader_options(opts);
    // A v2 root's shards: positional, next to its URL (set/v2_shards.h).
    ropts.shards = positional_remote_shards(url, s);
    // prefetch: a whole-file load follows, whose connections the open
    // connects while its own requests are in flight (docs/remote.md).
    UrlSettings mine = s;
    mine.warm_bulk = ropts.prefetch != 0;
    return finish_open(Reader::open_source(open_http_source(url, mine, ropts.max_manifest_size), ropts), out);
  });
}

ZT_API zt_status zt_file_io_stats(const zt_file *file, zt_io_stats *out) {
  return guard([&] {
    const zt_file &f = file_ref(file, "zt_file_io_stats");
    if (!out) invalid("zt_file_io_stats: out is NULL");
    if (!ZT_HAS_FIELD(out, reserved0)) invalid("zt_file_io_stats: zt_io_stats.struct_size is not set");
    IoStats st = http_stats(f.reader->source());
    // Only the fields the caller's struct holds are written.
#define ZT_PUT_STAT(F) \
  if (ZT_HAS_FIELD(out, F)) out->F = st.F
    ZT_PUT_STAT(requests);
    ZT_PUT_STAT(bytes);
    ZT_PUT_STAT(cache_hits);
    ZT_PUT_STAT(bytes_needed);
    ZT_PUT_STAT(wait_ns);
#undef ZT_PUT_STAT
    return ZT_OK;
  });
}

}  // extern "C"
