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
ZT_API zt_status zt_open_set(const char *index_path, const zt_open_options *opts, zt_set **out);

/* A set whose index is at an http(s) URL: the index is fetched with ranged
 * GETs and every shard is opened with zt_open_url(shard URL, uopts, opts),
 * the shard URL being the index URL's folder (without its query string or
 * fragment) joined with the location. uopts (bearer token, timeouts, cache)
 * and opts may be NULL. ZT_E_UNSUPPORTED without libcurl. */
ZT_API zt_status zt_open_set_url(const char *index_url, const zt_url_options *uopts, const zt_open_options *opts,
                                 zt_set **out);

/* Closes every shard. NULL is accepted; a closed set is ZT_E_MISUSE (with
 * the same caveat about reused addresses as zt_close). */
ZT_API zt_status zt_set_close(zt_set *set);

/* Objects of all shards: shards in the order of their locations (sorted
 * bytewise, so model-00001-of-00003.zt comes first), each shard's objects
 * in its manifest order. Borrowed, valid until zt_set_close. */
ZT_API zt_status zt_set_object_count(const zt_set *set, size_t *out);
ZT_API zt_status zt_set_object_at(const zt_set *set, size_t index, const zt_object **out);
/* O(log n). ZT_E_NOT_FOUND when no shard holds that name. */
ZT_API zt_status zt_set_object_by_name(const zt_set *set, const char *name, size_t name_len, const zt_object **out);

/* The index's "metadata" member as compact JSON text, keys in the index's
 * own order (caller frees with zt_free); "null" when the index has none. */
ZT_API zt_status zt_set_metadata_json(const zt_set *set, char **out);

/* The shards, in the order described above: the open file (borrowed, owned
 * by the set: do not zt_close it) and its location as written in the index
 * (borrowed). Either out pointer may be NULL. */
ZT_API zt_status zt_set_shard_count(const zt_set *set, size_t *out);
ZT_API zt_status zt_set_shard_at(const zt_set *set, size_t index, const zt_file **out_file, const char **out_location);

/* ---- Format v2 shards (spec §7; docs/v2.md, "Shards") -------------------
 *
 * A v2 root's parts may live in other files, named in its shard table by a
 * label plus each file's exact size and whole-file digest. zt_open and
 * zt_open_url resolve them by the positional convention (Appendix B): for a
 * root <stem>.zt, shard n is the file <stem>-<n>.zt beside it, opened
 * beneath the root's folder exactly as a local set's shards are (never
 * outside it, no symbolic link), or next to the root's URL. Every shard the
 * parts name is opened with the root (remote ones in parallel) and checked:
 * v2 footer magic and version, and the exact size the table states. A shard
 * that is missing or fails a check does not fail the open: each part in it
 * then reports why (its status: ZT_E_IO, ZT_E_NOT_FOUND, or a rejection
 * naming the rule ShardIdentity) on every read and verify. zt_file_verify
 * also checks each shard's whole-file digest. Any .zt v2 file, one with its
 * own manifest included, may serve as a shard. zt_open_memory and
 * zt_open_io reach no other file: their shard parts report ZT_E_UNSUPPORTED.
 *
 * zt_open_sharded takes a resolver for any other convention. Added in
 * 1.3.0 (symbol version ZTENSOR_1.3). */

/* What a resolver is asked for. Borrowed for the call only. */
typedef struct zt_shard_request {
  uint32_t struct_size; /* sizeof(zt_shard_request) as the library knows it */
  uint32_t reserved;
  const char *root;   /* the root's location as given to zt_open_sharded */
  const char *name;   /* the shard's name (1-64 of A-Z a-z 0-9 . _ -) */
  uint64_t size;      /* its exact size in bytes, from the root's table */
  const char *digest; /* its whole-file digest, "sha256:<hex>" or "xxh3:<hex>" */
} zt_shard_request;

/* The longest location a resolver may write, its NUL included. */
#define ZT_SHARD_LOCATION_MAX 4096

/* Writes the shard's location, a path or an http(s)/s3 URL (opened as
 * given: the resolver is trusted), NUL-terminated, into location (capacity
 * bytes, ZT_SHARD_LOCATION_MAX), and returns ZT_OK; or returns
 * ZT_E_NOT_FOUND when it knows no such file, or another status on failure.
 * The parts in a shard it does not
 * resolve report that status. Called once per shard the root's parts name,
 * from the thread that opens the root, one call at a time. */
typedef zt_status (*zt_shard_resolver)(void *user, const zt_shard_request *req, char *location, size_t capacity);

typedef struct zt_shard_options {
  uint32_t struct_size; /* sizeof(zt_shard_options), set by init */
  uint32_t reserved;
  zt_shard_resolver resolve; /* NULL: positional, as zt_open */
  void *user;                /* passed to resolve */
} zt_shard_options;

/* Fills every field with its default (positional resolution). */
ZT_API void zt_shard_options_init(zt_shard_options *sopts);

/* Opens a v2 root (a path, or an http://, https:// or s3:// URL read as
 * zt_open_url reads it, with uopts) and resolves its shards with sopts
 * (NULL: positional). opts and uopts may be NULL. Any other file opens as
 * zt_open / zt_open_url open it. */
ZT_API zt_status zt_open_sharded(const char *root, const zt_open_options *opts, const zt_url_options *uopts,
                                 const zt_shard_options *sopts, zt_file **out);

/* A resolver by identity (Appendix B), the one convention that survives any
 * renaming: zt_shard_scan_open lists the files directly in `folder` whose
 * names end in ".zt", by size (reading none); zt_shard_resolve_by_identity,
 * given the scan as `user`, answers with the file whose size and whole-file
 * digest are the shard's (the first in bytewise path order), ZT_E_NOT_FOUND
 * if none. Each group of files of one size is hashed once per algorithm, the
 * first time a shard of that size is asked for: a model of n shards of
 * equal size costs n digests, not n². A scan may serve several opens, from
 * several threads; close it with zt_shard_scan_close once no open that uses
 * it is running (opened files do not need it). */
typedef struct zt_shard_scan zt_shard_scan;
ZT_API zt_status zt_shard_scan_open(const char *folder, zt_shard_scan **out);
ZT_API zt_status zt_shard_scan_close(zt_shard_scan *scan);
ZT_API zt_status zt_shard_resolve_by_identity(void *user, const zt_shard_request *req, char *location, size_t capacity);

/* Writing a v2 multi-file model (what `zt split --format 2` does): each
 * shard_paths[i], a complete v2 file as a v2 zt_writer writes it (its
 * manifest last, no shard table), is rewritten in place as a data shard
 * (§7.2) named shard_names[i] (§7.1 characters), and a new root is written
 * at root_path (which must not exist) naming every object of every file,
 * each part pointing into its shard, with the shard table: each shard's
 * exact size and whole-file digest by `alg`, ZT_DIGEST_SHA256 (what §6.5
 * advises: a signature over the root then covers every shard byte) or
 * ZT_DIGEST_XXH3. The root keeps the first file's attributes. Every file is
 * checked first (valid v2, manifest last, object names unique across the
 * files, names valid): on those failures nothing is changed. sync: 1 to
 * fsync each file. For the positional convention, name the files
 * <stem>-<name>.zt beside <stem>.zt. */
ZT_API zt_status zt_v2_make_sharded(const char *root_path, const char *const *shard_paths,
                                    const char *const *shard_names, size_t count, zt_digest_alg alg, uint32_t sync);

#ifdef __cplusplus
}
#endif

#endif /* ZTENSOR_SET_H */
