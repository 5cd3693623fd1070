/*
 * ztensor_set.h — sharded checkpoints: several .zt files (shards) and a JSON
 * index that maps every tensor to the shard holding it, presented as one
 * set of objects. The index convention is described in docs/sharding.md:
 *
 *   {"metadata": {...},
 *    "weight_map": {"layer.0.w": "model-00001-of-00002.zt", ...}}
 *
 * Shard locations are relative to the index's folder; an absolute path, a
 * URL, an empty, "." or ".." path component, a backslash or a NUL is
 * refused. At zt_open_set every shard is opened (with the same options) and
 * the index is checked against the shards: each listed tensor must be in its
 * shard (ZT_E_NOT_FOUND otherwise), no object may be in two shards
 * (ZT_E_DUPLICATE_KEY), and every object of a shard must be listed
 * (ZT_E_MANIFEST). The objects handed out are the shards' ordinary
 * zt_object handles: every call of ztensor.h and ztensor_composite.h works
 * on them unchanged, and they stay valid until zt_set_close.
 *
 * Limits for untrusted indexes: the index file may be no larger than
 * zt_open_options.max_manifest_size (1 GiB by default; ZT_E_MANIFEST_LIMIT),
 * JSON may nest at most 64 levels (ZT_E_CBOR_DEPTH), a duplicate key in any
 * JSON object is ZT_E_DUPLICATE_KEY, and a set has at most
 * ZT_SET_MAX_SHARDS shards (ZT_E_LIMIT). Opening costs O(n log n) in the
 * index size plus the opening of each shard.
 *
 * A local set never reaches outside its index's folder: shards are opened
 * beneath it one path component at a time with O_NOFOLLOW, so a symlinked
 * shard or subfolder is refused (ZT_E_IO), as is a shard or index that is
 * not a regular file (a FIFO is refused at once, never waited on). Mapped
 * shards do not each keep a file descriptor (docs/sharding.md).
 *
 * Added in 1.1.0 (symbol version ZTENSOR_1.1).
 */
#ifndef ZTENSOR_SET_H
#define ZTENSOR_SET_H

#include "ztensor.h"
#include "ztensor_io.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Each open shard holds a mapping (or a descriptor): a set of more shards
 * than this is refused. */
#define ZT_SET_MAX_SHARDS 65536

typedef struct zt_set zt_set; /* an open sharded checkpoint */

/* Opens the index at index_path and every shard it names. opts (may be NULL)
 * apply to every shard; its max_manifest_size also bounds the index file.
 * An http:// or https:// index_path is read remotely, as
 * zt_open_set_url(index_path, NULL, opts, out) does.
 * On success *out owns the set (release with zt_set_close); on failure *out
 * is NULL and zt_last_error() names the index, the shard, the tensor and
 * the rule. */
ZT_API zt_status zt_open_set(const char *index_path,
                             const zt_open_options *opts, zt_set **out);

/* A set whose index is at an http(s) URL: the index is fetched with ranged
 * GETs and every shard is opened with zt_open_url(shard URL, uopts, opts),
 * the shard URL being the index URL's folder (without its query string or
 * fragment) joined with the location. uopts (bearer token, timeouts, cache)
 * and opts may be NULL. ZT_E_UNSUPPORTED without libcurl. */
ZT_API zt_status zt_open_set_url(const char *index_url,
                                 const zt_url_options *uopts,
                                 const zt_open_options *opts, zt_set **out);

/* Closes every shard. NULL is accepted; a closed set is ZT_E_MISUSE (with
 * the same caveat about reused addresses as zt_close). */
ZT_API zt_status zt_set_close(zt_set *set);

/* Objects of all shards: shards in the order of their locations (sorted
 * bytewise, so model-00001-of-00003.zt comes first), each shard's objects
 * in its manifest order. Borrowed, valid until zt_set_close. */
ZT_API zt_status zt_set_object_count(const zt_set *set, size_t *out);
ZT_API zt_status zt_set_object_at(const zt_set *set, size_t index,
                                  const zt_object **out);
/* O(log n). ZT_E_NOT_FOUND when no shard holds that name. */
ZT_API zt_status zt_set_object_by_name(const zt_set *set, const char *name,
                                       size_t name_len,
                                       const zt_object **out);

/* The index's "metadata" member as compact JSON text, keys in the index's
 * own order (caller frees with zt_free); "null" when the index has none. */
ZT_API zt_status zt_set_metadata_json(const zt_set *set, char **out);

/* The shards, in the order described above: the open file (borrowed, owned
 * by the set: do not zt_close it) and its location as written in the index
 * (borrowed). Either out pointer may be NULL. */
ZT_API zt_status zt_set_shard_count(const zt_set *set, size_t *out);
ZT_API zt_status zt_set_shard_at(const zt_set *set, size_t index,
                                 const zt_file **out_file,
                                 const char **out_location);

#ifdef __cplusplus
}
#endif

#endif /* ZTENSOR_SET_H */
