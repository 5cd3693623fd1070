/*
 * ztensor.h — the C ABI of libztensor, a reader and writer for zTensor (.zt)
 * tensor files (spec 1.2.0 written; container v2, 1.2.0, 1.1.0 and legacy 0.1.0 read).
 *
 * Conventions (see docs/c-abi.md):
 *  - Every fallible call returns a zt_status: ZT_OK (0) or a negative error.
 *    The values are pinned forever; new ones are only ever appended.
 *  - Outputs are pointer parameters named `out`, placed first after the
 *    handle they belong to.
 *  - zt_last_error() describes the last failure on the calling thread (the
 *    rule, the object, the component, the offset). The status decides
 *    success, never the message.
 *  - Handles are opaque. A closed, finished or foreign handle is reported as
 *    ZT_E_MISUSE where it can be detected. Close functions accept NULL.
 *  - Ownership is stated on each function. "Borrowed" pointers stay valid
 *    until the handle they came from is closed; nothing borrowed is ever to
 *    be freed by the caller. Strings the caller owns are freed with zt_free().
 *  - Sizes of memory are size_t, offsets and shapes uint64_t; names and roles
 *    are UTF-8, given as (pointer, length) where they may contain NUL.
 *  - Option structs carry `struct_size` and have an init function, so fields
 *    can be appended without breaking compiled callers.
 *  - A reader handle (zt_file) is immutable after zt_open and may be shared
 *    between threads; a zt_writer is used by one thread at a time.
 *  - Enums are 32 bits wide and signed (the *_FORCE32_ entries are not
 *    values, they give every enum the whole int32 range), so a caller may
 *    pass any int32, negative ones included, and an unknown one is refused
 *    with a status.
 *
 * WARNING about untrusted files: every size read from a file is checked
 * against the file and the limits in zt_open_options before anything is
 * allocated. Keep max_decoded_size at a value your process can afford.
 */
#ifndef ZTENSOR_H
#define ZTENSOR_H

#include <stddef.h>
#include <stdint.h>

/* The library version: the single source of truth (Meson reads it here). */
#define ZT_VERSION_MAJOR 1
#define ZT_VERSION_MINOR 3
#define ZT_VERSION_PATCH 0
#define ZT_VERSION_NUMBER (ZT_VERSION_MAJOR * 10000 + ZT_VERSION_MINOR * 100 + ZT_VERSION_PATCH)

/* The on-disk format version this library writes (independent of the above). */
#define ZT_FORMAT_VERSION "1.2.0"

#if defined(_WIN32) && defined(ZT_BUILDING_LIBRARY)
#define ZT_API __declspec(dllexport)
#elif defined(_WIN32)
#define ZT_API __declspec(dllimport)
#elif defined(__GNUC__) && defined(ZT_BUILDING_LIBRARY)
#define ZT_API __attribute__((visibility("default")))
#else
#define ZT_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Status codes                                                              */
/* ------------------------------------------------------------------------ */

typedef enum zt_status {
  ZT_OK = 0,

  /* API use and environment */
  ZT_E_INVALID_ARG = -1,      /* NULL where not allowed, bad enum, bad size */
  ZT_E_MISUSE = -2,           /* closed/foreign handle, writer used after end */
  ZT_E_NOMEM = -3,            /* allocation failed */
  ZT_E_IO = -4,               /* open/read/write/rename failed (errno in msg) */
  ZT_E_NOT_FOUND = -5,        /* no object / component / role of that name */
  ZT_E_BUFFER_TOO_SMALL = -6, /* dst_capacity below the decoded size */
  ZT_E_UNSUPPORTED = -7,      /* valid but not handled (e.g. unknown format) */
  ZT_E_LIMIT = -8,            /* a configured limit would be exceeded */
  ZT_E_INTERNAL = -9,         /* a bug: please report */
  ZT_E_EXISTS = -10,          /* object/component already written */
  ZT_E_NOT_ZERO_COPY = -11,   /* no borrowed view possible (zstd, big-endian,
                                 pread access) */

  /* Container (refuses the open) */
  ZT_E_FORMAT = -20,         /* not a zTensor file: header magic */
  ZT_E_FOOTER = -21,         /* footer magic wrong (truncated or damaged) */
  ZT_E_TRUNCATED = -22,      /* file shorter than the fixed parts */
  ZT_E_MANIFEST_SIZE = -23,  /* manifest size larger than the file allows */
  ZT_E_MANIFEST_LIMIT = -24, /* manifest size above 1 GiB / configured max */

  /* Manifest root (refuses the open) */
  ZT_E_CBOR = -30,          /* malformed CBOR, or bytes after the item */
  ZT_E_CBOR_DEPTH = -31,    /* CBOR nesting deeper than the decoder allows */
  ZT_E_DUPLICATE_KEY = -32, /* the same key twice in one CBOR map */
  ZT_E_MANIFEST = -33,      /* root not a map, objects missing/not a map */
  ZT_E_VERSION = -34,       /* version missing, not text, or major != 1 */

  /* One object or component (reported by that object; open fails in strict) */
  ZT_E_FIELD = -40,                  /* required field missing or of the wrong type */
  ZT_E_DTYPE = -41,                  /* unknown storage dtype */
  ZT_E_ENCODING = -42,               /* unknown encoding */
  ZT_E_ALIGNMENT = -43,              /* offset not a multiple of 64 */
  ZT_E_BOUNDS = -44,                 /* offset < 8, overflow, or past the manifest */
  ZT_E_OVERLAP = -45,                /* two blobs partially overlap */
  ZT_E_SHAPE = -46,                  /* shape product overflows */
  ZT_E_LENGTH = -47,                 /* stored/declared length disagrees with shape */
  ZT_E_NO_UNCOMPRESSED_LENGTH = -48, /* zstd without uncompressed_length */
  ZT_E_DECODED_SIZE = -49,           /* frame decodes to more/fewer bytes than said */
  ZT_E_CORRUPT = -50,                /* corrupt zstd frame */
  ZT_E_DIGEST_MISMATCH = -51,        /* stored bytes do not match the digest */
  ZT_E_DIGEST_FORMAT = -52,          /* digest string malformed */
  ZT_E_NAME = -53,                   /* name/role not valid UTF-8 */
  ZT_E_BOOL_VALUE = -54,             /* bool byte other than 0/1 (strict verify) */
  ZT_E_VALUE = -55,                  /* a stored value its logical type or layout
                                        forbids (v2: f4_e2m1 padding nibble, CSR
                                        index order); since 1.3.0 */

  /* Composite formats (sparse, quantized) */
  ZT_E_COMPONENT_MISSING = -60, /* a component the format requires is absent */
  ZT_E_SPARSE_INDPTR = -61,     /* CSR indptr: count, start, order or end */
  ZT_E_SPARSE_INDEX = -62,      /* CSR index / COO coordinate out of range */
  ZT_E_SPARSE_NNZ = -63,        /* values / coords count disagree with nnz */
  ZT_E_QUANT_PARAMS = -64,      /* bits / group_size / packing missing or bad */
  ZT_E_QUANT_SIZE = -65,        /* packed/scales/zeros size inconsistent */
  ZT_E_WRONG_FORMAT = -66,      /* object is not of the format the call needs */
  ZT_E_INDEX_DTYPE = -67,       /* index component not of an integer dtype */
  ZT_E_COMPRESS = -70,          /* zstd compression failed */

  /* Remote and caller-supplied sources (ztensor_io.h; since 1.1) */
  ZT_E_CHANGED = -80,             /* the object changed while being read (its
                                     ETag/Last-Modified differ from the first
                                     response); nothing mixed is returned */
  ZT_STATUS_FORCE32_ = 0x7fffffff /* not a status: keeps the enum 32 bits wide */
} zt_status;

/* A fixed, static English description of a status. Never NULL. */
ZT_API const char *zt_status_str(zt_status status);

/* The detail message of the last failure on this thread. Never NULL;
 * library-owned; valid until the next failing call on this thread. */
ZT_API const char *zt_last_error(void);

/* `path_or_url` (len bytes) as the library's messages show it: a URL's
 * "user:password@" becomes "<credentials>@", its query "?<redacted>", its
 * fragment is dropped (s3://: only a "...@" before the bucket goes, the key
 * is literal); anything that is not a URL is returned unchanged. Writes
 * the text and a NUL into dst; *out_len (may be NULL) gets its length
 * without the NUL. A capacity below that + 1 (dst = NULL, capacity = 0 to
 * ask) gives ZT_E_BUFFER_TOO_SMALL with *out_len set. For bindings, so that
 * their reprs and messages follow the library's one rule (docs/remote.md,
 * Security). Since 1.3.0. */
ZT_API zt_status zt_redact_url(const char *path_or_url, size_t len, char *dst, size_t capacity, size_t *out_len);

/* "1.0.0": the library version at run time. */
ZT_API const char *zt_version_string(void);

/* Frees memory the library handed to the caller (JSON text, decoded arrays).
 * Accepts NULL. */
ZT_API void zt_free(void *ptr);

/* ------------------------------------------------------------------------ */
/* Types                                                                     */
/* ------------------------------------------------------------------------ */

typedef enum zt_dtype {
  ZT_DTYPE_UNKNOWN = 0,
  ZT_F64 = 1,
  ZT_F32 = 2,
  ZT_F16 = 3,
  ZT_BF16 = 4,
  ZT_I64 = 5,
  ZT_I32 = 6,
  ZT_I16 = 7,
  ZT_I8 = 8,
  ZT_U64 = 9,
  ZT_U32 = 10,
  ZT_U16 = 11,
  ZT_U8 = 12,
  ZT_BOOL = 13,
  ZT_DTYPE_FORCE32_ = 0x7fffffff,         /* not a dtype: keeps the enum 32 bits wide */
  ZT_DTYPE_MIN_FORCE32_ = -0x7fffffff - 1 /* not a value: makes every int32 one of the enum's */
} zt_dtype;

typedef enum zt_encoding {
  ZT_ENCODING_UNKNOWN = 0,
  ZT_ENCODING_RAW = 1,
  ZT_ENCODING_ZSTD = 2,
  ZT_ENCODING_FORCE32_ = 0x7fffffff,         /* not an encoding */
  ZT_ENCODING_MIN_FORCE32_ = -0x7fffffff - 1 /* not a value: makes every int32 one of the enum's */
} zt_encoding;

typedef enum zt_digest_alg {
  ZT_DIGEST_NONE = 0,                      /* no digest */
  ZT_DIGEST_CRC32C = 1,                    /* "crc32c:0x%08X" */
  ZT_DIGEST_SHA256 = 2,                    /* "sha256:<64 lowercase hex>" */
  ZT_DIGEST_UNKNOWN = 3,                   /* an algorithm this library cannot check */
  ZT_DIGEST_XXH3 = 4,                      /* "xxh3:<16 lowercase hex>": XXH3-64 (format v2; since 1.3.0) */
  ZT_DIGEST_FORCE32_ = 0x7fffffff,         /* not an algorithm */
  ZT_DIGEST_MIN_FORCE32_ = -0x7fffffff - 1 /* not a value: makes every int32 one of the enum's */
} zt_digest_alg;

/* "f32", "bf16", ...; NULL for ZT_DTYPE_UNKNOWN or an out-of-range value. */
ZT_API const char *zt_dtype_name(zt_dtype dtype);
/* Bytes per element (1..8); 0 for unknown. */
ZT_API size_t zt_dtype_size(zt_dtype dtype);
/* Parses a short name ("f32") or a legacy long name ("float32"). */
ZT_API zt_dtype zt_dtype_from_name(const char *name);

/* ------------------------------------------------------------------------ */
/* Reading                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct zt_file zt_file;     /* an open file (reader handle) */
typedef struct zt_object zt_object; /* borrowed from its zt_file */

/* A mapped file that another process truncates while it is open faults
 * (SIGBUS) when a view, or a small copy from the map, touches the vanished
 * pages; zt_file_read_many and large copies read with pread and report
 * ZT_E_IO instead. Use ZT_ACCESS_PREAD for files that may change underfoot. */
typedef enum zt_access {
  ZT_ACCESS_MMAP = 0, /* memory-map the file: zero-copy views (default) */
  ZT_ACCESS_PREAD = 1 /* read with pread(2); no views */
} zt_access;

typedef struct zt_open_options {
  uint32_t struct_size;       /* sizeof(zt_open_options), set by init */
  uint32_t access;            /* zt_access */
  uint32_t strict;            /* 1: refuse the file at the first invalid
                                 object, check composite structure and bool
                                 bytes; 0 (default): lenient, see docs/reading-rules.md */
  uint32_t threads;           /* worker threads for whole-file verify/read;
                                 0 = number of cores */
  uint64_t max_manifest_size; /* default and upper bound 1 GiB */
  uint64_t max_decoded_size;  /* per component; default 64 GiB */
  /* Since 1.1.0 (a caller compiled against 1.0 leaves it off):
   * 1: check each component's digest the first time any read touches its
   * bytes (zt_component_read, _read_range, _read_slice, _view, DLPack
   * export, zt_file_read_many, composite reads, component streams); a
   * mismatch is ZT_E_DIGEST_MISMATCH naming file, object, component and
   * algorithm. Success is remembered per component, so a view is checked
   * once and then handed out freely. Ranged and slice reads check the whole
   * component (once). Components without a digest, or with an algorithm
   * this library does not know, are read unchecked. 0 (default): digests
   * are checked only by the zt_*_verify calls. */
  uint32_t verify_on_read;
  /* Never read. These 4 bytes were the 1.1 struct's trailing padding
   * (sizeof was 40), which a 1.1 caller may have left uninitialised with
   * struct_size = 40: a field here could not tell a value from garbage. */
  uint32_t reserved0;
  /* Since 1.2.0 (a caller compiled against 1.1 or 1.0 leaves it off):
   * 1: the caller will read most of the file soon (a whole-model load, a
   * loader that maps the file and touches every tensor). zt_open starts one
   * background thread that reads the file's data into the page cache in
   * file order, while the manifest is still being parsed; reads and views
   * then find their bytes in memory instead of waiting on the disk one
   * tensor (or one page) at a time. It stops when the data was read (at
   * most half the machine's memory) or at zt_close; zt_file_read_many
   * copies uncached ranges behind it instead of reading them itself.
   * Ranges already in the page cache are skipped. Files opened by path on Linux and other
   * POSIX systems. A URL open (zt_open_url) instead opens the connections
   * a whole-file load uses while its own requests are in flight (since
   * 1.3, docs/remote.md). Ignored for memory and callback opens, by
   * zt_open_set (its shards are opened together) and on Windows. 0 (default): nothing is read before it is asked for.
   * Other values are ZT_E_INVALID_ARG. docs/cold-reads.md has the figures. */
  uint32_t prefetch;
} zt_open_options;

/* Fills every field with its default, struct_size included. The struct grew
 * in 1.1.0 and 1.2.0: a program built against older headers keeps calling
 * the version of this function it was linked with (symbol versions
 * ZTENSOR_1, ZTENSOR_1.1), which writes only the fields it knew; programs
 * built now get the 1.2 one (ZTENSOR_1.2). Bindings
 * that mirror the struct (ctypes, FFI) get the newest version and must
 * declare every field. */
ZT_API void zt_open_options_init(zt_open_options *opts);

/* Opens a .zt file of any supported version. opts may be NULL (defaults).
 * On success *out owns the file; release it with zt_close(). On failure
 * *out is set to NULL.
 * Foreign tensor files are opened too, read-only, recognised by their bytes
 * (docs/foreign.md): safetensors, NumPy .npy and .npz, GGUF v2/v3. Each
 * tensor is a dense object (GGUF block types: format "ggml_quantized") with
 * one raw "data" component; the file's metadata are its attributes. Tensors
 * stored in C order are read in place (views where the byte order and
 * alignment allow); .npz members and Fortran-order arrays are decoded once,
 * at open, within max_decoded_size. A malformed one fails with ZT_E_FORMAT
 * and a message naming the rule. Same for zt_open_memory. */
ZT_API zt_status zt_open(const char *path, const zt_open_options *opts, zt_file **out);

/* Same over a caller's buffer, which is borrowed: it must stay valid and
 * unchanged until zt_close(). Views point into it. */
ZT_API zt_status zt_open_memory(const void *data, size_t size, const zt_open_options *opts, zt_file **out);

/* Releases the handle (the mapping lives on while DLPack tensors made from it
 * are alive). NULL is accepted and returns ZT_OK; a handle already closed
 * returns ZT_E_MISUSE as long as a later zt_open has not been given the same
 * address (the allocator may reuse it; a stale pointer then names the new
 * file), so drop every copy of a handle when you close it.
 * A zt_file may be shared by threads for reading, but zt_close must come
 * after every other call on it (and on its objects) has returned, as with
 * fclose: closing while another thread reads is undefined behaviour. */
ZT_API zt_status zt_close(zt_file *file);

/* The spec version the file declares: "1.2.0", "1.1.0", "0.1.0", ...
 * For a foreign file, its format instead: "safetensors", "npy", "npz",
 * "gguf v2", "gguf v3" (never starting with a digit). Borrowed. */
ZT_API zt_status zt_file_version(const zt_file *file, const char **out);

/* 1 when the file is a format v2 data shard (a footer with no manifest:
 * it describes nothing, has no objects, and its blobs are reached only
 * through a root manifest that names it), else 0. Since 1.3.0. */
ZT_API zt_status zt_file_data_shard(const zt_file *file, uint32_t *out);
ZT_API zt_status zt_file_object_count(const zt_file *file, size_t *out);

/* Objects are in manifest order. Borrowed. */
ZT_API zt_status zt_file_object_at(const zt_file *file, size_t index, const zt_object **out);
ZT_API zt_status zt_file_object_by_name(const zt_file *file, const char *name, size_t name_len, const zt_object **out);

/* File attributes as the CBOR item stored in the file (a map), borrowed;
 * *out = NULL and *out_len = 0 when the file has none. */
ZT_API zt_status zt_file_attributes_cbor(const zt_file *file, const uint8_t **out, size_t *out_len);
/* The same as JSON text (caller frees with zt_free); "null" when absent.
 * Byte strings become {"$bytes": hex}, non-finite floats {"$float": "nan"},
 * tags {"$tag": n, "$value": v}, maps with non-text keys {"$map": [[k, v]]},
 * integers beyond 64 bits {"$bigint": "..."}, undefined {"$undefined": true}.
 * Since 1.2.0 a map with a key starting with '$' is also written in the
 * {"$map": [[k, v]]} form, so that a map such as {"$bytes": "00"} is never
 * read as one of these conventions. */
ZT_API zt_status zt_file_attributes_json(const zt_file *file, char **out);

/* Fields in the manifest root other than version/attributes/objects, as a
 * CBOR map (caller frees with zt_free); *out = NULL when there are none. */
ZT_API zt_status zt_file_extra_fields_cbor(const zt_file *file, uint8_t **out, size_t *out_len);

typedef struct zt_object_info {
  uint32_t struct_size; /* set by the caller: sizeof(zt_object_info) */
  const char *name;     /* borrowed, NUL-terminated (may hold NULs) */
  size_t name_len;
  const char *format; /* "dense", "sparse_csr", ...; "" if missing */
  size_t ndim;
  const uint64_t *shape; /* borrowed, ndim entries */
  size_t component_count;
  zt_status status; /* ZT_OK, or why this object cannot be read */
  uint32_t has_attributes;
  /* Added in 1.3.0 (filled when struct_size covers it): the bytes of
   * format, which may hold NULs like a name ("dense\0x" is not "dense"). */
  size_t format_len;
} zt_object_info;

ZT_API zt_status zt_object_get_info(const zt_object *obj, zt_object_info *out);

/* The detail of zt_object_info.status (rule, component, offset); borrowed;
 * "" when the object is valid. */
ZT_API zt_status zt_object_error(const zt_object *obj, const char **out);

/* Number of elements: product of the shape (1 for a scalar). */
ZT_API zt_status zt_object_numel(const zt_object *obj, uint64_t *out);

ZT_API zt_status zt_object_attributes_cbor(const zt_object *obj, const uint8_t **out, size_t *out_len);
ZT_API zt_status zt_object_attributes_json(const zt_object *obj, char **out);
/* Unknown keys of the object's manifest map (CBOR map; zt_free). */
ZT_API zt_status zt_object_extra_fields_cbor(const zt_object *obj, uint8_t **out, size_t *out_len);

typedef struct zt_component_info {
  uint32_t struct_size;     /* set by the caller: sizeof(zt_component_info) */
  const char *role;         /* "data", "values", ...; borrowed */
  zt_dtype dtype;           /* ZT_DTYPE_UNKNOWN if the name is unknown */
  const char *dtype_name;   /* as normalised (1.2 short name, or as found) */
  const char *logical_type; /* "f8_e4m3fn", "complex64", ...; NULL if none */
  uint32_t ratio;           /* storage elements per logical element */
  zt_encoding encoding;
  const char *encoding_name; /* as written ("raw" when absent) */
  uint64_t offset;           /* absolute, in the file */
  uint64_t length;           /* stored bytes */
  uint64_t decoded_length;   /* bytes after decoding (what a read yields) */
  uint32_t has_uncompressed_length;
  uint32_t big_endian; /* legacy 0.1 data stored big-endian */
  const char *digest;  /* "sha256:..." / "crc32c:0x..."; NULL if none */
  zt_digest_alg digest_alg;
  zt_status status; /* ZT_OK or the damage found at open */
  /* Added in 1.3.0 (filled when struct_size covers them): the length in
   * bytes of each string above. A role, like an object name, is any UTF-8
   * text in a 1.x file and may hold NULs, so read it as (role, role_len),
   * not as a C string; the same holds for the type names as found. */
  size_t role_len;
  size_t dtype_name_len;
  size_t logical_type_len; /* 0 when logical_type is NULL */
  size_t encoding_name_len;
} zt_component_info;

ZT_API zt_status zt_object_component(const zt_object *obj, size_t index, zt_component_info *out);
/* The index of the component whose role is the C string `role` (a role
 * holding a NUL cannot be named this way: see zt_object_component_index_n). */
ZT_API zt_status zt_object_component_index(const zt_object *obj, const char *role, size_t *out);
/* The same for the role_len bytes at role (1.3.0). ZT_E_NOT_FOUND when no
 * component has exactly that role. */
ZT_API zt_status zt_object_component_index_n(const zt_object *obj, const char *role, size_t role_len, size_t *out);

/* Decodes component `index` of `obj` into dst, elements in the host's byte
 * order (little-endian on x86 and ARM; swapped on a big-endian host).
 * Pass dst = NULL / dst_capacity = 0 to learn the size: returns
 * ZT_E_BUFFER_TOO_SMALL with *out_size = decoded length. out_size may be
 * NULL. Digests are checked only when the file was opened with
 * zt_open_options.verify_on_read (else see zt_component_verify). */
ZT_API zt_status zt_component_read(const zt_object *obj, size_t index, void *dst, size_t dst_capacity,
                                   size_t *out_size);

/* Structural access: the component's stored bytes exactly as they are in
 * the file (still encoded, in the stored byte order, its logical type not
 * interpreted), with no digest check. The one read of a format v2 part
 * whose logical type or encoding this library does not know (the typed
 * reads return ZT_E_UNSUPPORTED naming the id). Sizes as zt_component_read,
 * in stored bytes. A part whose blob is in another shard is
 * ZT_E_UNSUPPORTED. Since 1.3.0. */
ZT_API zt_status zt_component_read_stored(const zt_object *obj, size_t index, void *dst, size_t dst_capacity,
                                          size_t *out_size);

/* Reads elements [first, first+count) of a component, counted in storage
 * elements of its dtype. Raw components read only those bytes; zstd ones
 * decode only up to the end of the range. */
ZT_API zt_status zt_component_read_range(const zt_object *obj, size_t index, uint64_t first, uint64_t count, void *dst,
                                         size_t dst_capacity);

/* Reads an N-d box of a component, like numpy's a[start0:stop0, ...]:
 * for each of the ndim dimensions, start[d] <= stop[d] <= shape[d] (stop
 * exclusive). The result is row-major and contiguous in dst, in the host's byte order,
 * and fills exactly prod(stop[d] - start[d]) * element size bytes.
 * The shape is the object's for the "data" component of a dense object (a
 * logical element of a compound type, e.g. complex64, counts as one); any
 * other component is 1-d, counted in storage elements. A 0-d tensor takes
 * ndim = 0 (start/stop may be NULL). An empty box reads nothing.
 * Raw components read only the bytes of the box; zstd ones are decoded
 * from the start only as far as the box's last byte, in bounded memory.
 * Errors: ZT_E_INVALID_ARG (ndim not the component's rank, start > stop,
 * stop past the dimension, NULL pointers), ZT_E_BUFFER_TOO_SMALL,
 * ZT_E_UNSUPPORTED (a dtype without an element size; the dense data of a
 * packed sub-byte type, f4_e2m1 or safetensors' F6, whose elements are not
 * whole bytes).
 * Since 1.1.0. */
ZT_API zt_status zt_component_read_slice(const zt_object *obj, size_t index, size_t ndim, const uint64_t *start,
                                         const uint64_t *stop, void *dst, size_t dst_capacity);

/* Several slices of one file's components as one read plan: what
 * zt_component_read_slice does for each request, but a remote file
 * (zt_open_url) plans the requests of all of them together, merging
 * neighbouring ranges across tensors (docs/remote.md, "Tensor-parallel
 * loading"). Every object must belong to `file`. On failure the status of
 * the first request that failed is returned (its message in
 * zt_last_error()) and the buffers' contents are unspecified. Since 1.3.0. */
typedef struct zt_slice_request {
  const zt_object *object;
  size_t component; /* index of the component (0: the data) */
  size_t ndim;
  const uint64_t *start; /* ndim values */
  const uint64_t *stop;  /* ndim values */
  void *dst;
  size_t dst_capacity;
} zt_slice_request;

ZT_API zt_status zt_file_read_slices(const zt_file *file, const zt_slice_request *reqs, size_t n);

/* Streaming reads: a whole component, decoded, in pieces the caller sizes,
 * with memory bounded by a 1 MiB input chunk and libzstd's window (at most
 * 128 MiB for a hostile frame, a few MiB for what writers produce) however
 * large the component. Since 1.1.0.
 *
 * zt_component_stream_open: *out owns the stream; release it with
 * zt_component_stream_close (NULL accepted). The stream shares the open
 * file, so it stays usable after zt_close of the handle it came from.
 *
 * zt_component_stream_read: fills dst with the next decoded bytes, in the
 * host's byte order: as many as fit, rounded down to whole storage elements
 * (fewer only at the end); *out_len = 0 means everything was delivered.
 * A capacity below one element while bytes remain is
 * ZT_E_BUFFER_TOO_SMALL (the stream stays usable). A zstd component is
 * never decoded past its declared size: more or fewer bytes than declared
 * is ZT_E_DECODED_SIZE, reported by the read that would deliver the last
 * byte. With zt_open_options.verify_on_read the digest is computed over the
 * stored bytes as they pass and checked by that same last read
 * (ZT_E_DIGEST_MISMATCH): the bytes of earlier reads are not confirmed
 * until the stream has returned its last piece without error. After an
 * error other than a caller's (BUFFER_TOO_SMALL, INVALID_ARG) every later
 * read fails the same way. */
typedef struct zt_component_stream zt_component_stream;

ZT_API zt_status zt_component_stream_open(const zt_object *obj, size_t index, zt_component_stream **out);
ZT_API zt_status zt_component_stream_read(zt_component_stream *stream, void *dst, size_t capacity, size_t *out_len);
ZT_API zt_status zt_component_stream_close(zt_component_stream *stream);

/* A borrowed zero-copy view of a raw component stored in the host's byte
 * order (any 1-byte dtype; little-endian data except on a big-endian host)
 * of a memory-mapped (or memory) file, valid until zt_close(). Else
 * ZT_E_NOT_ZERO_COPY. Empty components give a non-NULL pointer, *len 0.
 * The view is const in the contract. Still, files opened with zt_open are
 * mapped private copy-on-write (since 1.1.0): a write through a view (or a
 * DLPack tensor made from it) does not crash and never reaches the file;
 * the written pages become private to the process, and later views of the
 * same component in this handle see the write. (Where the system refuses a
 * private mapping, under strict overcommit, vm.overcommit_memory = 2, the
 * file is mapped read-only as in 1.0 and such a write faults.) The private
 * mapping reserves no memory up front: files larger than RAM + swap open
 * as before. zt_open_memory lends the
 * caller's own buffer: a write there changes that buffer, as the caller
 * allows or forbids. */
ZT_API zt_status zt_component_view(const zt_object *obj, size_t index, const void **out, size_t *out_len);

/* zt_component_view, but the address may be misaligned for the element type:
 * zt_component_view refuses (ZT_E_NOT_ZERO_COPY) data that a foreign file
 * places at an address not a multiple of its element size (stored .npz
 * members, whose offsets numpy.savez leaves to chance; ONNX raw_data; a
 * safetensors header not padded to 8), and this function lends it. The
 * pointer is only byte-aligned: copy elements out with memcpy, or hand it to
 * a consumer that allows misaligned data (a numpy array with ALIGNED=False);
 * never dereference it as a typed pointer (undefined behaviour in C, a
 * fault on some CPUs). Data zt_component_view lends comes back the same,
 * aligned; every other refusal of zt_component_view (pread access, encoded
 * or byte-swapped data) stands. .zt components are always aligned. Since 1.3.0. */
ZT_API zt_status zt_component_view_unaligned(const zt_object *obj, size_t index, const void **out, size_t *out_len);

typedef enum zt_verify_result {
  ZT_VERIFY_NO_DIGEST = 0,   /* nothing to check (structure was checked) */
  ZT_VERIFY_OK = 1,          /* digest matched */
  ZT_VERIFY_UNVERIFIABLE = 2 /* digest of an unknown algorithm */
} zt_verify_result;

/* Checks the component's structure and digest (and, for zstd, that the frame
 * decodes to the declared size). out may be NULL. */
ZT_API zt_status zt_component_verify(const zt_object *obj, size_t index, zt_verify_result *out);

/* Every component of the object, plus (strict) its format's structure. */
ZT_API zt_status zt_object_verify(const zt_object *obj);

/* Called for every failure zt_file_verify finds; object/role may be "". */
typedef void (*zt_verify_callback)(void *user, const char *object, const char *role, zt_status status,
                                   const char *message);

/* Checks every object in the file (in parallel); returns the first failure
 * in manifest order, ZT_OK if none. The callback (may be NULL) sees all of
 * them, from the calling thread, in manifest order. */
ZT_API zt_status zt_file_verify(const zt_file *file, uint32_t strict, zt_verify_callback cb, void *user);

/* As zt_verify_callback, with the length of the object's name and of the
 * role (either may hold NULs; both are also NUL-terminated). 1.3.0. */
typedef void (*zt_verify_callback_n)(void *user, const char *object, size_t object_len, const char *role,
                                     size_t role_len, zt_status status, const char *message);

/* zt_file_verify, reporting each failure to a zt_verify_callback_n. 1.3.0. */
ZT_API zt_status zt_file_verify_n(const zt_file *file, uint32_t strict, zt_verify_callback_n cb, void *user);

/* The content digest of a v2 model (spec §6.4): "<alg>:<hex>" over each
 * object's shape, layout and attributes and each part's dtype, logical type
 * and digest, so the same tensors give the same answer in one file or many,
 * at any placement, raw or compressed. alg: ZT_DIGEST_XXH3 or
 * ZT_DIGEST_SHA256. Written NUL-terminated into dst; *out_len (required)
 * gets its length without the NUL. dst = NULL / dst_capacity = 0 asks the
 * size; a capacity below *out_len + 1 gives ZT_E_BUFFER_TOO_SMALL.
 * Undefined when a part carries no digest: ZT_E_UNSUPPORTED, the message
 * naming the first such part; ZT_E_WRONG_FORMAT for a 1.x file or a data
 * shard. Reads no tensor bytes. 1.3.0. */
ZT_API zt_status zt_file_content_digest(const zt_file *file, zt_digest_alg alg, char *dst, size_t dst_capacity,
                                        size_t *out_len);

/* Whether a v2 file is in canonical form (spec §6.3: one manifest and no
 * unreferenced blobs; blobs at 64 KiB boundaries from 65536, packed in
 * (object, part) name order; identical parts sharing one blob; raw parts
 * with xxh3 digests; names in NFC; no shard table). *out_rule = 0 when it
 * is; otherwise the number (1..6) of the first rule it misses (rules 6
 * and 5 are checked first, then the parts in name order; a blob out of
 * place is reported once, not again for what it displaces), and
 * *out_message (optional: NULL to skip; caller frees with zt_free; NULL
 * when canonical) lists every miss as "rule N: ...", naming the part and
 * offsets. Zero-length parts are placed as the canonical writer places
 * them (docs/v2.md). ZT_E_WRONG_FORMAT for a file that is not v2. Reads
 * the footer again, no tensor bytes. 1.3.0. */
ZT_API zt_status zt_file_canonical(const zt_file *file, uint32_t *out_rule, char **out_message);

/* The whole manifest model as one JSON document (caller frees, zt_free). */
ZT_API zt_status zt_file_to_json(const zt_file *file, char **out);

/* ------------------------------------------------------------------------ */
/* Writing                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct zt_writer zt_writer;

typedef struct zt_writer_options {
  uint32_t struct_size; /* sizeof(zt_writer_options), set by init */
  uint32_t digest;      /* zt_digest_alg default for blobs (NONE) */
  uint32_t encoding;    /* zt_encoding default for blobs (RAW) */
  int32_t zstd_level;   /* default level for zstd blobs (3) */
  uint32_t threads;     /* zstd worker threads for large blobs; 0 = cores;
                           1 also keeps digests on the caller's thread */
  uint32_t sync;        /* 1 (default): fsync file and directory on finish */
  uint32_t validate;    /* 1 (default): check composite objects on finish */
  /* Since 1.1.0 (a caller compiled against 1.0 leaves it off): 1: before
   * zt_writer_finish replaces `path`, it opens the file it wrote with an
   * independent strict reader and checks every object, digest and zstd
   * frame (a full read of the new file); a file that fails is removed, the
   * destination is untouched, and finish returns the failure. Memory
   * writers check their buffer; callback writers cannot (their bytes are
   * gone) and skip it. 0 (default): no check. The zt tool's append, remove
   * and merge turn it on. */
  uint32_t verify_before_replace;
  /* Since 1.3.0 (a caller compiled against 1.2 or older gets 1.2 files).
   * The format generation written: 1 (default) spec 1.2; 2 zTensor v2
   * (docs/v2.md, Writing). With 2, `encoding` ZSTD means the
   * zt.zstd-seekable/1 encoding and `digest` is not used (v2_digest is). */
  uint32_t format;
  /* v2: 1 (default) canonical form (v2 spec §6.3): blobs at 64 KiB from
   * 65536 in (object, part) name order, identical parts sharing one blob,
   * raw parts with xxh3 digests, names in NFC (refused otherwise). 0: the
   * alignment, encoding and digests below and per blob are free. */
  uint32_t canonical;
  /* v2: default digest of a part: ZT_DIGEST_XXH3 (default), ZT_DIGEST_SHA256
   * or ZT_DIGEST_NONE (non-canonical only). */
  uint32_t v2_digest;
  uint32_t reserved_; /* 0 */
  /* v2, non-canonical: blob alignment, a multiple of 4096; 0 = 65536. */
  uint64_t alignment;
} zt_writer_options;

ZT_API void zt_writer_options_init(zt_writer_options *opts);

/* Starts a new file. Bytes go to a temporary file beside `path`, renamed to
 * `path` by zt_writer_finish(); an existing file is replaced only then. The
 * temporary has no name where the filesystem has O_TMPFILE, so a killed
 * process leaves nothing (docs/writing-rules.md). A symlink at `path` is
 * followed; a dangling one is refused (ZT_E_IO). */
ZT_API zt_status zt_writer_create(const char *path, const zt_writer_options *opts, zt_writer **out);

/* Writers that are not files (since 1.1.0). Every rule of the file writer
 * holds (alignment, padding, manifest, digests, zstd, streaming blobs): for
 * the same calls the bytes are identical to those of zt_writer_create.
 * zt_writer_options.sync is ignored.
 *
 * zt_writer_create_memory: the file is built in memory (one buffer that
 * grows by doubling) and handed over by zt_writer_finish_memory.
 * zt_writer_finish on a memory writer is ZT_E_MISUSE and leaves the writer
 * open; zt_writer_discard frees the buffer. */
ZT_API zt_status zt_writer_create_memory(const zt_writer_options *opts, zt_writer **out);

/* Finishes a memory writer: on success *out (caller frees with zt_free)
 * holds the *out_len bytes of the file, which zt_open_memory reads. The
 * writer is freed whatever the outcome; on failure nothing is handed out
 * (*out = NULL, *out_len = 0) and the buffer is freed. */
ZT_API zt_status zt_writer_finish_memory(zt_writer *w, uint8_t **out, size_t *out_len);

/* Called with the file's bytes in order, each byte exactly once (small
 * pieces are gathered into 64 KiB ones; large blobs come straight from the
 * caller's memory). Returns 0 when it took all `len` bytes; any other value
 * fails the writer with ZT_E_IO (the value is in the message), after which
 * only zt_writer_discard is left. */
typedef int (*zt_write_callback)(void *user, const void *data, size_t len);

/* A writer whose bytes go to `write` (sequential writes only: the format
 * never seeks back). zt_writer_finish sends the last bytes. The receiver
 * holds a complete file only when zt_writer_finish returned ZT_OK: on any
 * failure, or zt_writer_discard, what it received is a partial file to be
 * thrown away (the library cannot take back bytes already sent). */
ZT_API zt_status zt_writer_create_callbacks(zt_write_callback write, void *user, const zt_writer_options *opts,
                                            zt_writer **out);

/* Per-blob settings; NULL means the writer's defaults. */
typedef struct zt_blob_options {
  uint32_t struct_size;     /* sizeof(zt_blob_options), set by init */
  uint32_t encoding;        /* zt_encoding; ZT_ENCODING_UNKNOWN = default */
  int32_t zstd_level;       /* used when encoding is zstd */
  uint32_t digest;          /* zt_digest_alg; ZT_DIGEST_UNKNOWN = default */
  const char *logical_type; /* e.g. "f8_e4m3fn", "complex64"; NULL = none */
} zt_blob_options;

ZT_API void zt_blob_options_init(zt_blob_options *opts);

/* File attributes, as one CBOR map item or as JSON text (an object; the
 * $bytes/$float/$tag conventions of zt_file_attributes_json are accepted). */
ZT_API zt_status zt_writer_set_attributes_cbor(zt_writer *w, const uint8_t *cbor, size_t len);
ZT_API zt_status zt_writer_set_attributes_json(zt_writer *w, const char *json);

/* Declares an object. format NULL means "dense". Names must be valid UTF-8
 * and unique. Components are then added with zt_write_blob(). */
ZT_API zt_status zt_writer_begin_object(zt_writer *w, const char *name, size_t name_len, const char *format,
                                        const uint64_t *shape, size_t ndim);
ZT_API zt_status zt_writer_set_object_attributes_cbor(zt_writer *w, const char *name, size_t name_len,
                                                      const uint8_t *cbor, size_t len);
ZT_API zt_status zt_writer_set_object_attributes_json(zt_writer *w, const char *name, size_t name_len,
                                                      const char *json);

/* Writes one component (`role`) of a declared object: the bytes are
 * elements of `dtype` in the host's byte order, stored little-endian (a
 * big-endian host swaps them), encoded and digested as opts say.
 * A len that cannot fit the shape (ZT_E_LENGTH), a bad dtype or option is
 * refused before anything is written, and the writer stays usable. A
 * failure while writing (I/O) fails the writer: only discard is left. */
ZT_API zt_status zt_write_blob(zt_writer *w, const char *name, size_t name_len, const char *role, zt_dtype dtype,
                               const void *data, size_t len, const zt_blob_options *opts);

/* Streaming: one component in pieces, memory bounded by one piece. Only one
 * blob may be open at a time. Its size is known only at the end: a total
 * that does not fit the shape fails the writer at zt_write_blob_end. */
ZT_API zt_status zt_write_blob_begin(zt_writer *w, const char *name, size_t name_len, const char *role, zt_dtype dtype,
                                     const zt_blob_options *opts);
ZT_API zt_status zt_write_blob_append(zt_writer *w, const void *data, size_t len);
ZT_API zt_status zt_write_blob_end(zt_writer *w);

/* One call for a dense tensor: begin_object + write_blob("data"). When it
 * is refused, the object is not declared either. */
ZT_API zt_status zt_writer_add_dense(zt_writer *w, const char *name, size_t name_len, zt_dtype dtype,
                                     const uint64_t *shape, size_t ndim, const void *data, size_t len,
                                     const zt_blob_options *opts);

/* Writes the manifest and footer and renames the file into place. The writer
 * is freed whatever the outcome; on failure nothing is left on disk. */
ZT_API zt_status zt_writer_finish(zt_writer *w);

/* Abandons the file (the temporary is removed) and frees the writer. NULL is
 * accepted. */
ZT_API zt_status zt_writer_discard(zt_writer *w);

/* ------------------------------------------------------------------------ */
/* Migration                                                                 */
/* ------------------------------------------------------------------------ */

typedef struct zt_migrate_options {
  uint32_t struct_size; /* set by init */
  int32_t recompress;   /* 0 (default): keep each component's encoding;
                           1: zstd at zstd_level; -1: decompress to raw */
  int32_t zstd_level;   /* default 3 */
  uint32_t digest;      /* zt_digest_alg: ZT_DIGEST_UNKNOWN (default)
                           keeps each component's algorithm (recomputed) */
  uint32_t sync;        /* as zt_writer_options.sync */
  /* Since 1.3.0: the generation written, as zt_writer_options.format: 1
   * (default) spec 1.2, 2 zTensor v2; and, for v2, canonical (1, default)
   * or not (recompress and digest apply then; crc32c becomes xxh3). */
  uint32_t format;
  uint32_t canonical;
} zt_migrate_options;

ZT_API void zt_migrate_options_init(zt_migrate_options *opts);

/* Rewrites any readable file as spec 1.2.0 (or, with format 2, zTensor v2:
 * docs/v2.md, Writing) at out_path (atomically), keeping
 * every object, component, attribute and unknown field; big-endian data
 * becomes little-endian. Refuses out_path == in_path (ZT_E_INVALID_ARG).
 * A zTensor v2 input written as 1.2 keeps every v2 feature 1.2 can hold
 * (docs/v2.md, Migration); one it cannot (zt.mx/1, gguf.*, f4_e2m1, ...)
 * is ZT_E_UNSUPPORTED naming the object, with nothing written.
 * Since 1.1.0 the new file is checked by an independent strict reader
 * before it replaces out_path (zt_writer_options.verify_before_replace). */
ZT_API zt_status zt_migrate(const char *in_path, const char *out_path, const zt_migrate_options *opts);

/* ------------------------------------------------------------------------ */
/* Editing: copying from open files into a writer                            */
/* ------------------------------------------------------------------------ */

/* Copies one object of an open file into w, keeping its format, shape,
 * object attributes, unknown fields and, per component, role, dtype,
 * logical type, encoding (zstd is re-encoded at the writer's level), unknown
 * fields and digest algorithm (recomputed over the new bytes; an algorithm
 * this library cannot compute is dropped). The source is verified first: a
 * damaged object or a digest mismatch fails the copy. new_name NULL keeps
 * the object's name. A name already in w is ZT_E_EXISTS. On failure w may
 * hold a partial object: discard it (zt_writer_discard). */
ZT_API zt_status zt_writer_copy_object(zt_writer *w, const zt_object *obj, const char *new_name, size_t new_name_len);

/* Sets w's file attributes and unknown manifest fields to the union of those
 * of `files` (count entries). A key present in several files with different
 * values is ZT_E_EXISTS; one source's attributes are kept byte for byte.
 * Replaces attributes set earlier on w. */
ZT_API zt_status zt_writer_copy_file_fields(zt_writer *w, const zt_file *const *files, size_t count);

/* ------------------------------------------------------------------------ */
/* Batched reads                                                             */
/* ------------------------------------------------------------------------ */

/* One component to decode into a caller's buffer. The caller fills object,
 * component, dst and dst_capacity; zt_file_read_many fills out_size (bytes
 * written, or the size needed when status is ZT_E_BUFFER_TOO_SMALL) and
 * status. */
typedef struct zt_read_request {
  const zt_object *object; /* borrowed from the file passed to read_many */
  size_t component;        /* component index within the object */
  void *dst;
  size_t dst_capacity;
  size_t out_size;  /* out */
  zt_status status; /* out: this request's outcome */
} zt_read_request;

/* Reads `count` components at once, in parallel on up to
 * zt_open_options.threads threads (0 = cores): raw components are copied
 * straight into dst (large ones split across threads), zstd ones decoded
 * into it. Requests are independent: each gets its own status. Returns
 * ZT_OK when all succeeded, else the status of the first failed request (in
 * array order), whose detail zt_last_error() gives. The buffers of different
 * requests must not overlap. Digests are checked (in parallel, before any
 * byte of a request is copied) only with zt_open_options.verify_on_read. */
ZT_API zt_status zt_file_read_many(const zt_file *file, zt_read_request *reqs, size_t count);

/* ------------------------------------------------------------------------ */
/* Every object at once (1.2.0)                                              */
/* ------------------------------------------------------------------------ */

/* One object, as zt_file_object_table lists it: what a binding needs to
 * present and read a dense tensor without a call per field. Rows are
 * zt_object_table.row_size bytes apart (a later release may append fields;
 * read only the ones declared here). */
typedef struct zt_object_row {
  const zt_object *object; /* as zt_file_object_at gives it */
  uint64_t name_offset;    /* the name is names[name_offset ..] */
  uint64_t name_len;       /* bytes (names may hold NULs) */
  uint64_t dims_offset;    /* the shape is dims[dims_offset ..] */
  uint32_t ndim;
  uint32_t dense;                 /* 1: the format is "dense" */
  uint64_t data_component;        /* index of the "data" component, or
                                     UINT64_MAX when there is none */
  int32_t data_dtype;             /* its zt_dtype; -1 when there is none */
  uint32_t data_has_logical_type; /* 1: it has a logical type ("complex64",
                                     "f8_e4m3fn"; see zt_object_component) */
  uint64_t data_decoded_length;   /* its decoded size in bytes */
  zt_status status;               /* as zt_object_info.status */
  uint32_t reserved;              /* 0 */
} zt_object_row;

/* The table zt_file_object_table returns: one allocation, released with
 * zt_free(table). The pointers inside point into that allocation; the
 * zt_object handles in the rows live until zt_close(file). */
typedef struct zt_object_table {
  size_t count;    /* rows, in file (zt_file_object_at) order */
  size_t row_size; /* distance between rows in bytes */
  const zt_object_row *rows;
  const char *names; /* every name in row order, each followed
                        by a NUL (names may hold NULs too) */
  size_t names_len;
  const uint64_t *dims; /* every shape, concatenated in row order */
  size_t dims_len;
} zt_object_table;

/* Lists every object of the file in one call (name, shape, format, the
 * "data" component's type and decoded size, status): for bindings, where a
 * call per object and field costs more than reading a small tensor. */
ZT_API zt_status zt_file_object_table(const zt_file *file, zt_object_table **out);

#ifdef __cplusplus
}
#endif

#endif /* ZTENSOR_H */
