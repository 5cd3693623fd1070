package ztensor

/*
#include "wrappers.h"
*/
import "C"

import "unsafe"

// Dtype is a storage dtype (zt_dtype).
type Dtype int32

const (
	DtypeUnknown Dtype = 0
	F64          Dtype = 1
	F32          Dtype = 2
	F16          Dtype = 3
	BF16         Dtype = 4
	I64          Dtype = 5
	I32          Dtype = 6
	I16          Dtype = 7
	I8           Dtype = 8
	U64          Dtype = 9
	U32          Dtype = 10
	U16          Dtype = 11
	U8           Dtype = 12
	Bool         Dtype = 13
)

// AllDtypes lists every dtype the format defines.
var AllDtypes = []Dtype{F64, F32, F16, BF16, I64, I32, I16, I8, U64, U32, U16, U8, Bool}

// String is the dtype's name ("f32", "bf16", ...).
func (d Dtype) String() string {
	p := C.zt_dtype_name(C.zt_dtype(d))
	if p == nil {
		return "unknown"
	}
	return C.GoString(p)
}

// Size is the bytes per element (0 for unknown).
func (d Dtype) Size() int { return int(C.zt_dtype_size(C.zt_dtype(d))) }

// Float16 holds the bits of an IEEE 754 half-precision value (Go has no
// such type); BFloat16 those of a bfloat16.
type (
	Float16  uint16
	BFloat16 uint16
)

// Element is a Go type whose values are the elements of a dtype, in the
// host's byte order. A bool component is read as uint8 and written with
// Writer.AddDenseBool.
type Element interface {
	float64 | float32 | Float16 | BFloat16 | int64 | int32 | int16 | int8 | uint64 | uint32 | uint16 | uint8
}

// DtypeOf is the dtype written for T.
func DtypeOf[T Element]() Dtype {
	var z T
	switch any(z).(type) {
	case float64:
		return F64
	case float32:
		return F32
	case Float16:
		return F16
	case BFloat16:
		return BF16
	case int64:
		return I64
	case int32:
		return I32
	case int16:
		return I16
	case int8:
		return I8
	case uint64:
		return U64
	case uint32:
		return U32
	case uint16:
		return U16
	default:
		return U8
	}
}

// reads says whether components of dtype d can be read as T (uint8 also
// reads bool, whose bytes are 0 or 1).
func reads[T Element](d Dtype) bool {
	want := DtypeOf[T]()
	return d == want || (want == U8 && d == Bool)
}

// Encoding is how a component is stored (zt_encoding); EncodingDefault in
// options means "the writer's default".
type Encoding int32

const (
	EncodingDefault Encoding = 0
	Raw             Encoding = 1
	Zstd            Encoding = 2
)

func (e Encoding) String() string {
	switch e {
	case Raw:
		return "raw"
	case Zstd:
		return "zstd"
	}
	return "default"
}

// DigestAlg is a component's digest algorithm. In BlobOptions the zero
// value, DigestDefault, keeps the writer's default; the others map to
// zt_digest_alg.
type DigestAlg int32

const (
	DigestDefault DigestAlg = iota
	DigestNone
	DigestCRC32C
	DigestSHA256
	DigestUnknown // an algorithm this library cannot compute
	DigestXXH3    // "xxh3:<16 hex>", zTensor v2 only (libztensor 1.3)
)

func digestFromC(d C.zt_digest_alg) DigestAlg {
	switch d {
	case C.ZT_DIGEST_NONE:
		return DigestNone
	case C.ZT_DIGEST_CRC32C:
		return DigestCRC32C
	case C.ZT_DIGEST_SHA256:
		return DigestSHA256
	case C.ZT_DIGEST_XXH3:
		return DigestXXH3
	}
	return DigestUnknown
}

func (d DigestAlg) toC() C.uint32_t {
	switch d {
	case DigestNone:
		return C.ZT_DIGEST_NONE
	case DigestCRC32C:
		return C.ZT_DIGEST_CRC32C
	case DigestSHA256:
		return C.ZT_DIGEST_SHA256
	case DigestXXH3:
		return C.ZT_DIGEST_XXH3
	}
	return C.ZT_DIGEST_UNKNOWN
}

// bytesOf is the memory of a slice of elements as bytes (no copy).
func bytesOf[T Element](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(z)))
}

// noBytes gives empty slices an address: the library refuses NULL data.
var noBytes [8]byte

// ptr is the address of a slice's first byte (a dummy one when empty).
func ptr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return unsafe.Pointer(&noBytes[0])
	}
	return unsafe.Pointer(&b[0])
}
