/*
 * ztensor_io.h — opening a zTensor file from somewhere other than a local
 * path: caller-supplied read callbacks (any storage SDK, in any language),
 * or an http:// / https:// URL read with ranged GETs (docs/remote.md).
 *
 * Everything here follows the conventions of ztensor.h: zt_status returns,
 * outputs last, option structs with struct_size and an init function,
 * details in zt_last_error(). A file opened either way is an ordinary
 * zt_file: every reading call of ztensor.h works on it, except zero-copy
 * views (zt_component_view returns ZT_E_NOT_ZERO_COPY, as for pread access).
 */
#ifndef ZTENSOR_IO_H
#define ZTENSOR_IO_H

#include "ztensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Caller-supplied I/O                                                       */
/* ------------------------------------------------------------------------ */

/* One range of a vectored read. The library fills offset, len and dst; the
 * callback sets out_len to the bytes it placed at dst (the library sets it
 * to 0 before the call). */
typedef struct zt_io_range {
  uint64_t offset;
  size_t len;
  void *dst;
  size_t out_len; /* out */
} zt_io_range;

/* A readable byte source of a fixed size.
 *
 * read_at copies up to len bytes at offset into dst and sets *out_len to how
 * many it copied. A short read (*out_len < len) is allowed: the library asks
 * again for the rest, and a call that makes no progress is reported as a
 * truncated source. Any status other than ZT_OK fails the read; its detail
 * may be given with zt_io_set_error() from inside the callback. The library
 * never asks for bytes beyond `size`.
 *
 * read_at_v (optional, NULL = one read_at per range) reads several ranges at
 * once; ranges are sorted by offset, do not overlap and their dst do not
 * overlap. A range left short is completed with read_at.
 *
 * Callbacks may be called from several threads at once (zt_file_read_many,
 * zt_file_verify; set zt_open_options.threads = 1 for calls from one thread
 * at a time) and only during a call into the library on the file.
 *
 * close (optional) is called exactly once: by zt_close(), or before
 * zt_open_io() returns an error (except when io itself is NULL or its
 * struct_size is too small to hold the close member). */
typedef struct zt_io {
  uint32_t struct_size; /* sizeof(zt_io), set by zt_io_init */
  void *user;           /* passed to every callback */
  uint64_t size;        /* total size of the file in bytes */
  zt_status (*read_at)(void *user, uint64_t offset, size_t len, void *dst, size_t *out_len);
  zt_status (*read_at_v)(void *user, zt_io_range *ranges, size_t n);
  void (*close)(void *user);
  const char *name; /* for error messages (e.g. "s3://bucket/key"); copied at
                       open; NULL = "<io>" */
} zt_io;

ZT_API void zt_io_init(zt_io *io);

/* Opens a .zt file of any supported version through io (copied: the struct
 * itself need not outlive the call, `user` must live until close). opts may
 * be NULL; opts->access is ignored. */
ZT_API zt_status zt_open_io(const zt_io *io, const zt_open_options *opts, zt_file **out);

/* From inside a read callback: the detail to report with its failure status
 * (copied; thread-local). Ignored outside a callback. */
ZT_API void zt_io_set_error(const char *message);

/* ------------------------------------------------------------------------ */
/* HTTP(S) range reads                                                       */
/* ------------------------------------------------------------------------ */

/* Limits and settings of zt_open_url. Zero in a numeric field means its
 * default; the defaults are those zt_url_options_init writes. */
typedef struct zt_url_options {
  uint32_t struct_size;        /* sizeof(zt_url_options), set by init */
  uint32_t connect_timeout_ms; /* per connection; default 10000 */
  uint32_t timeout_ms;         /* per request, whole transfer; default 60000 */
  uint32_t retries;            /* extra attempts after a 5xx, a timeout or a
                                  reset connection; default 3; backoff 100 ms
                                  doubling */
  uint32_t max_parallel;       /* range requests of the file in flight at
                                  once, across threads; a hard cap when
                                  set. 0 (what init writes since 1.3):
                                  16, and a bulk read as many as the
                                  measured link makes worthwhile, up to
                                  64 (docs/remote.md). Was 16 in 1.3's
                                  first builds, 4 before 1.3 */
  uint32_t max_redirects;      /* default 5 */
  uint32_t allow_any_scheme;   /* 1: allow schemes other than http/https
                                  (libcurl's, e.g. file://); default 0 */
  uint32_t reserved0;          /* must be 0 */
  uint64_t cache_bytes;        /* block cache limit; default 64 MiB */
  uint64_t tail_bytes;         /* the first, tail read at open; default 64 KiB */
  uint64_t max_unranged_bytes; /* a server that ignores Range may send the
                                  whole object only if it is at most this
                                  size; default 0 = never (refused) */
  uint64_t max_header_bytes;   /* total response header bytes; default 64 KiB */
  const char *bearer_token;    /* "Authorization: Bearer ..." to http(s)://
                                  URLs only (never to an s3:// endpoint, nor
                                  to another host a redirect names); NULL =
                                  none; never appears in messages */
  const char *user_agent;      /* NULL = "libztensor/<version>" */
  /* Added in 1.2 (programs built against 1.1 pass the smaller struct_size;
   * the library then uses the defaults for these). */
  uint32_t low_speed_bytes;   /* a request slower than this many bytes/s
                                 for low_speed_time_ms is a timeout
                                 (retried as one); default 0 = off */
  uint32_t low_speed_time_ms; /* default 10000 (whole seconds count) */
  uint64_t deadline_ms;       /* no request of the file runs later than
                                 open + this; retries stop; default 0 =
                                 none. Meant for one-shot tools */
  /* s3://bucket/key (docs/remote.md, "S3"). NULL or 0 = found as the AWS
   * tools find them: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
   * AWS_SESSION_TOKEN, then the profile (AWS_PROFILE or "default") in
   * ~/.aws/credentials and ~/.aws/config, else unsigned (anonymous). None
   * of these ever appears in a message. */
  const char *s3_region;             /* else AWS_REGION, AWS_DEFAULT_REGION, the
                                        profile's region, "us-east-1" */
  const char *s3_endpoint;           /* "http(s)://host[:port][/path]" of an
                                        S3-compatible store; else
                                        AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the
                                        profile's endpoint_url, AWS itself */
  const char *s3_profile;            /* a profile of the AWS files, used before the
                                        environment's keys */
  const char *aws_access_key_id;     /* with aws_secret_access_key: used */
  const char *aws_secret_access_key; /* before anything else */
  const char *aws_session_token;     /* optional, with the two above */
  uint32_t s3_addressing;            /* ZT_S3_ADDRESSING_*: default AUTO = path-style
                                        when an endpoint is set (or the bucket
                                        has a '.'), virtual-hosted otherwise */
  uint32_t s3_unsigned;              /* 1: never sign, even when credentials are
                                        found (public buckets); default 0 */
  /* Added in 1.3: the range cost model (docs/remote.md, "Ranges under
   * latency"). A gap between two needed ranges is fetched, joining them
   * into one request, when gap / rate < rtt / requests in flight. */
  uint32_t rtt_ms;                /* round-trip time; default 0 = measured
                                     from the responses */
  uint32_t max_overfetch_percent; /* gap bytes fetched to save requests stay
                                     within this percent of the bytes needed;
                                     default 50; 0 = never fetch a gap */
  uint64_t link_bytes_per_s;      /* one connection's rate; default 0 =
                                     measured from the responses */
  uint64_t chunk_bytes;           /* the largest request a large read is cut
                                     into, a hard cap (at least 1 MiB);
                                     default 0 = 32 round trips' worth
                                     of the measured link, 8..64 MiB */
} zt_url_options;

#define ZT_S3_ADDRESSING_AUTO 0u
#define ZT_S3_ADDRESSING_PATH 1u    /* https://endpoint/bucket/key */
#define ZT_S3_ADDRESSING_VIRTUAL 2u /* https://bucket.endpoint/key */

ZT_API void zt_url_options_init(zt_url_options *uopts);

/* Opens the .zt file at url (http://, https://, or s3://bucket/key signed
 * with AWS Signature V4 since 1.2) with ranged GETs: at most
 * two requests for any manifest size (one tail read, then the manifest if
 * it did not fit). uopts and opts may be NULL. Credentials in the URL
 * (user:pass@) and the token are redacted from every message. A response
 * whose ETag or Last-Modified differs from the first is ZT_E_CHANGED.
 * ZT_E_UNSUPPORTED when the library was built without libcurl. */
ZT_API zt_status zt_open_url(const char *url, const zt_url_options *uopts, const zt_open_options *opts, zt_file **out);

/* Request counters of a file opened by zt_open_url (all 0 otherwise):
 * HTTP requests sent (retries included) and bytes received in bodies. */
typedef struct zt_io_stats {
  uint32_t struct_size; /* set by the caller: sizeof(zt_io_stats) */
  uint32_t reserved0;
  uint64_t requests;
  uint64_t bytes;
  uint64_t cache_hits;
  /* Added in 1.3 (written only when struct_size holds them). */
  uint64_t bytes_needed; /* bytes readers asked for, the open's included:
                            bytes / bytes_needed is what was fetched per
                            byte needed (gaps, cache blocks, retries) */
  uint64_t wait_ns;      /* time reading calls waited on requests, summed
                            over threads */
} zt_io_stats;

ZT_API zt_status zt_file_io_stats(const zt_file *file, zt_io_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* ZTENSOR_IO_H */
