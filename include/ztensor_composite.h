/*
 * ztensor_composite.h — composite objects of zTensor spec 1.2 (sparse_csr,
 * sparse_coo, quantized_group) and logical types (fp8, complex): writing with
 * validation, strict structural checks, and decoding to usable numbers.
 *
 * Same conventions as ztensor.h (status returns, outputs last-but-named
 * `out`, struct_size in structs, thread-local zt_last_error()). Every failure
 * message names the object, the component and the first bad position.
 *
 * Statuses, one per rule:
 *   ZT_E_COMPONENT_MISSING  a component the format requires is absent
 *   ZT_E_SHAPE              CSR not 2-D; COO / quantized_group with no dims
 *   ZT_E_INDEX_DTYPE        indices / indptr / coords not of an integer dtype
 *   ZT_E_SPARSE_INDPTR      CSR indptr: not rows+1 entries, not starting at 0,
 *                           decreasing, last entry != nnz, or negative
 *   ZT_E_SPARSE_INDEX       CSR column index >= cols, COO coordinate >= its
 *                           dimension, or a negative index
 *   ZT_E_SPARSE_NNZ         CSR values count != indices count; COO coords
 *                           count != ndim x values count
 *   ZT_E_QUANT_PARAMS       bits / group_size missing or not positive
 *                           integers, packing not text, packing disagreeing
 *                           with bits or with the packed dtype, scales not a
 *                           float dtype, zeros not numeric
 *   ZT_E_QUANT_SIZE         packed / scales / zeros element count wrong
 *   ZT_E_WRONG_FORMAT       the object is not of the format the call needs
 *
 * Sparse layouts. Index components are written as u64; any integer dtype is
 * read (spec 1.1), negative entries are errors. CSR: shape [rows, cols],
 * indptr[rows+1], indices[nnz] (column of each value), values[nnz]; column
 * indices within a row may be unsorted or repeated. COO: coords has
 * ndim x nnz entries in Structure-of-Arrays order (all dim-0 indices, then
 * all dim-1, ...), values[nnz]; positions may repeat.
 *
 * quantized_group conventions (GPTQ style):
 *  - Shape [..., cols]; rows = product of all dimensions but the last.
 *    Packing and groups both run along the last dimension (input features),
 *    each row on its own: a row fills ceil(cols / values_per_word) words and
 *    the unused slots of its last word are ignored. (A GPTQ checkpoint's
 *    qweight [in/8, out] is the transpose: store the weight as [out, in].)
 *  - Packings (values are unsigned, q in [0, 2^bits)):
 *      "16_per_i32" / "8_per_i32" / "4_per_i32": 2/4/8-bit values packed
 *        32/bits per little-endian 32-bit word (dtype i32 or u32); value k
 *        of a word sits in bits [k*bits, (k+1)*bits) — GPTQ's layout.
 *      "4_per_u8" / "2_per_u8" / "1_per_u8": 2/4/8-bit values packed 8/bits
 *        per byte (dtype u8 or i8), value k in bits [k*bits, (k+1)*bits):
 *        "2_per_u8" is low nibble first; "1_per_u8" is one value per byte.
 *  - Group g of a row covers columns [g*group_size, (g+1)*group_size) (the
 *    last group may be shorter). scales and zeros hold
 *    rows x ceil(cols / group_size) entries, row-major ([rows, groups]).
 *  - Dequantization: w = (q - zero) * scale with the scale and zero of q's
 *    group. scales are a float dtype (f16, bf16, f32, f64, or u8 typed as
 *    one of the fp8 logical types when read); zeros hold the
 *    zero point as a number of any numeric dtype (f16 like the spec's
 *    example, or integers). Without a zeros component the zero point is
 *    2^(bits-1), GPTQ's symmetric quantization.
 *  - Files from the original implementation may hold the packed values in a
 *    "data" component instead of "packed_weight" and omit "packing" (its
 *    documented variant: u8 "data" typed "u4", f32 "scales", bits 4). Such
 *    objects are read: "data" stands for "packed_weight", and a missing
 *    packing is inferred from bits and the packed dtype (i32/u32 ->
 *    "N_per_i32", u8/i8 -> "N_per_u8"). An unknown packing name is kept and
 *    everything but the packed size is still checked; dequantization then
 *    returns ZT_E_UNSUPPORTED.
 *
 * Logical types: "f8_e4m3fn", "f8_e5m2", "f8_e4m3fnuz", "f8_e5m2fnuz" over
 * u8 (1:1); "complex64" over f32 and "complex128" over f64 (2 storage
 * elements per logical element, interleaved [re, im]). Write them with
 * zt_blob_options.logical_type; the byte size is checked with the ratio.
 * fp8 decoding (exact, every fp8 value is an f32):
 *   format        bias  infinities          NaN codes             -0
 *   f8_e4m3fn       7   none                0x7F, 0xFF            yes
 *   f8_e5m2        15   0x7C, 0xFC          exp 11111, mant != 0  yes
 *   f8_e4m3fnuz     8   none                0x80 only             no
 *   f8_e5m2fnuz    16   none                0x80 only             no
 * (largest finite: 448, 57344, 240, 57344; saturation only concerns encoding.)
 */
#ifndef ZTENSOR_COMPOSITE_H
#define ZTENSOR_COMPOSITE_H

#include "ztensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Writing                                                                   */
/* ------------------------------------------------------------------------ */

/* Writes a sparse_csr object of shape [rows, cols]: values (nnz elements of
 * values_dtype, or of opts->logical_type over it, e.g. 2*nnz f32 for
 * complex64), indices[nnz] and indptr[rows+1] (written as u64). The arrays
 * are checked first (rules above); on a violation nothing is written and the
 * writer stays usable. opts (NULL = writer defaults) applies to all three
 * components; its logical_type only to values. Arrays are borrowed for the
 * call only. values may be NULL when nnz is 0. */
ZT_API zt_status zt_writer_add_csr(zt_writer *w, const char *name, size_t name_len, uint64_t rows, uint64_t cols,
                                   zt_dtype values_dtype, const void *values, uint64_t nnz, const uint64_t *indices,
                                   const uint64_t *indptr, const zt_blob_options *opts);

/* Writes a sparse_coo object: values[nnz] as for CSR, coords[ndim*nnz] in
 * Structure-of-Arrays order (written as u64). Checked first, as above. */
ZT_API zt_status zt_writer_add_coo(zt_writer *w, const char *name, size_t name_len, const uint64_t *shape, size_t ndim,
                                   zt_dtype values_dtype, const void *values, uint64_t nnz, const uint64_t *coords,
                                   const zt_blob_options *opts);

/* Parameters of a quantized_group object. Lengths are in bytes. */
typedef struct zt_quant_params {
  uint32_t struct_size;  /* sizeof(zt_quant_params), set by init */
  uint32_t bits;         /* 2, 4 or 8 */
  uint64_t group_size;   /* values per group along the last dimension */
  const char *packing;   /* "8_per_i32", "2_per_u8", ... (see above) */
  zt_dtype packed_dtype; /* i32/u32 for *_per_i32, u8/i8 for *_per_u8 */
  const void *packed;
  size_t packed_len;
  zt_dtype scales_dtype; /* f16, bf16, f32 or f64 */
  const void *scales;
  size_t scales_len;
  zt_dtype zeros_dtype; /* any numeric dtype */
  const void *zeros;    /* NULL: no zeros component (zero point 2^(bits-1)) */
  size_t zeros_len;
} zt_quant_params;

/* Sets struct_size, bits 4, group_size 128, packing "8_per_i32", packed i32,
 * scales and zeros f16, all pointers NULL. */
ZT_API void zt_quant_params_init(zt_quant_params *params);

/* Writes a quantized_group object: attributes {bits, group_size, packing},
 * components packed_weight, scales and (if given) zeros. Sizes are checked
 * first against the shape (ZT_E_QUANT_PARAMS / ZT_E_QUANT_SIZE / ZT_E_SHAPE);
 * on a violation nothing is written. The arrays are borrowed for the call. */
ZT_API zt_status zt_writer_add_quantized_group(zt_writer *w, const char *name, size_t name_len, const uint64_t *shape,
                                               size_t ndim, const zt_quant_params *params, const zt_blob_options *opts);

/* ------------------------------------------------------------------------ */
/* Reading                                                                   */
/* ------------------------------------------------------------------------ */

/* The strict structural check of the object's format (the one zt verify
 * --strict and zt_object_verify in a strict open run), without digests:
 * ZT_OK, the object's own damage if it has any, or a status from the table
 * above. Dense objects need "data"; unknown formats pass. */
ZT_API zt_status zt_object_validate(const zt_object *obj);

typedef struct zt_sparse_info {
  uint32_t struct_size; /* set by the caller: sizeof(zt_sparse_info) */
  uint32_t is_csr;      /* 1: sparse_csr, 0: sparse_coo */
  uint64_t nnz;         /* stored values (duplicates counted) */
  uint64_t numel;       /* product of the shape */
  double density;       /* nnz / numel; 0 when numel is 0 */
  zt_dtype values_dtype;
  const char *values_logical_type; /* borrowed; NULL if none */
  size_t values_element_size;      /* bytes per value (dtype size x ratio) */
  zt_dtype index_dtype;            /* of indices (CSR) or coords (COO) */
  size_t values_index;             /* component indices, for zt_component_read */
  size_t indices_index;            /* CSR: indices; COO: coords */
  size_t indptr_index;             /* CSR only; SIZE_MAX for COO */
} zt_sparse_info;

/* Describes a sparse object from its manifest (nothing is validated beyond
 * the required components): ZT_E_WRONG_FORMAT for other formats,
 * ZT_E_COMPONENT_MISSING. No data is read, except that spec 1.1 zstd values
 * declare no decoded size, so they are decoded once to count nnz. */
ZT_API zt_status zt_object_sparse_info(const zt_object *obj, zt_sparse_info *out);

/* Reads an index component ("indices", "indptr" or "coords") as u64 from
 * whatever integer dtype it is stored in. Pass dst = NULL, dst_count = 0 to
 * learn the count (ZT_E_BUFFER_TOO_SMALL, *out_count set). out_count may be
 * NULL. ZT_E_INDEX_DTYPE for a non-integer dtype; a negative entry gives
 * ZT_E_SPARSE_INDPTR (indptr) or ZT_E_SPARSE_INDEX. Values are not range
 * checked here (zt_object_validate does that). */
ZT_API zt_status zt_object_read_index(const zt_object *obj, const char *role, uint64_t *dst, size_t dst_count,
                                      size_t *out_count);

/* Densifies a sparse_csr / sparse_coo object into dst: numel elements of the
 * values' type (values_element_size bytes each, complex as [re, im]),
 * row-major, zero bytes where nothing is stored. A position stored more than
 * once takes the LAST value in storage order (last-wins; not summed). The
 * object is fully validated first. Pass dst = NULL / dst_capacity = 0 to
 * learn the size in bytes (ZT_E_BUFFER_TOO_SMALL with *out_size).
 * out_size may be NULL. */
ZT_API zt_status zt_object_densify(const zt_object *obj, void *dst, size_t dst_capacity, size_t *out_size);

typedef struct zt_quant_info {
  uint32_t struct_size; /* set by the caller: sizeof(zt_quant_info) */
  uint32_t bits;
  uint64_t group_size;
  const char *packing;       /* static canonical name of a supported packing,
                                NULL when the stored name is unknown */
  uint32_t packing_inferred; /* 1: no packing attribute; inferred */
  uint32_t has_zeros;
  const char *packed_role; /* "packed_weight", or "data" (see above) */
  uint64_t rows;           /* product of all dimensions but the last */
  uint64_t cols;           /* the last dimension */
  uint64_t groups;         /* rows x ceil(cols / group_size) */
} zt_quant_info;

/* Parses and checks a quantized_group object's parameters and sizes (no data
 * is read). ZT_E_WRONG_FORMAT for other formats. */
ZT_API zt_status zt_object_quant_info(const zt_object *obj, zt_quant_info *out);

/* Dequantizes a quantized_group object into dst: rows x cols f32 values,
 * row-major, w = (q - zero) * scale. ZT_E_BUFFER_TOO_SMALL when count is
 * below numel; ZT_E_UNSUPPORTED for an unknown packing. A v2 zt.mx/1
 * object (blocks along the last axis) gives its numel values,
 * 2^(scale - 127) x element (docs/v2.md). */
ZT_API zt_status zt_object_dequantize(const zt_object *obj, float *dst, size_t count);

/* Converts src_len bytes of host-order storage elements of `dtype` (what a
 * read returns) to
 * f32, one output per storage element: f16, bf16, f32, f64 (rounded), all
 * integer dtypes (rounded to nearest f32), bool (0/1). logical_type (NULL or
 * "" for none) selects the fp8 decoders over u8; complex64 / complex128
 * components come out as their interleaved [re, im] storage elements
 * (2 floats per complex number). ZT_E_INVALID_ARG if src_len is not a whole
 * number of elements; ZT_E_BUFFER_TOO_SMALL if dst_count is below the
 * element count; ZT_E_UNSUPPORTED for an unknown logical type; ZT_E_DTYPE
 * for a known one over the wrong storage dtype. */
ZT_API zt_status zt_convert_to_f32(zt_dtype dtype, const char *logical_type, const void *src, size_t src_len,
                                   float *dst, size_t dst_count);

#ifdef __cplusplus
}
#endif

#endif /* ZTENSOR_COMPOSITE_H */
