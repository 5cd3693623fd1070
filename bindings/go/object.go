package ztensor

/*
#include "wrappers.h"
*/
import "C"

import (
	"io"
	"runtime"
	"sync/atomic"
	"unsafe"
)

// Object is an object of a File or a Set. It keeps its owner reachable,
// and its calls fail with ErrMisuse once the owner is closed.
type Object struct {
	g   *guard
	h   *C.zt_object
	mem *cmem
}

// ObjectInfo is what zt_object_get_info says about an object.
type ObjectInfo struct {
	Name           string
	Format         string // "dense", "sparse_csr", ...; "" if missing
	Shape          []uint64
	ComponentCount int
	Err            error // nil, or why this object cannot be read
	HasAttributes  bool
}

// ComponentInfo describes one component.
type ComponentInfo struct {
	Role          string
	Dtype         Dtype // DtypeUnknown for a name the library does not know
	DtypeName     string
	LogicalType   string // "complex64", ...; "" if none
	Ratio         int    // storage elements per logical element
	Encoding      Encoding
	EncodingName  string
	Offset        uint64 // of the stored bytes, in the file
	Length        uint64 // stored bytes
	DecodedLength uint64 // bytes a read yields
	BigEndian     bool   // legacy 0.1 data stored big-endian (reads swap)
	Digest        string // "sha256:..." / "crc32c:0x..."; "" if none
	DigestAlg     DigestAlg
	Err           error // nil, or the damage found at open
}

func statusErr(s C.zt_status) error {
	if s == C.ZT_OK {
		return nil
	}
	return Status(s)
}

// Info returns the object's name, format, shape and status.
func (o *Object) Info() (ObjectInfo, error) {
	defer runtime.KeepAlive(o) // reachable until the C call returns (see the package doc)
	if err := o.g.enter(); err != nil {
		return ObjectInfo{}, err
	}
	defer o.g.leave()
	var ci C.zt_object_info
	var e *C.char
	if err := check(C.ztg_object_info(o.h, &ci, &e), e); err != nil {
		return ObjectInfo{}, err
	}
	in := ObjectInfo{
		Name:           C.GoStringN(ci.name, C.int(ci.name_len)),
		Format:         C.GoStringN(ci.format, C.int(ci.format_len)), // may hold NULs: "dense\x00x" is not "dense"
		ComponentCount: int(ci.component_count),
		Err:            statusErr(ci.status),
		HasAttributes:  ci.has_attributes != 0,
	}
	in.Shape = make([]uint64, int(ci.ndim))
	if ci.ndim > 0 {
		copy(in.Shape, unsafe.Slice((*uint64)(unsafe.Pointer(ci.shape)), int(ci.ndim)))
	}
	return in, nil
}

// Name is the object's name.
func (o *Object) Name() (string, error) {
	in, err := o.Info()
	return in.Name, err
}

// Component describes component index.
func (o *Object) Component(index int) (ComponentInfo, error) {
	defer runtime.KeepAlive(o) // reachable until the C call returns (see the package doc)
	if err := o.g.enter(); err != nil {
		return ComponentInfo{}, err
	}
	defer o.g.leave()
	var c C.zt_component_info
	var e *C.char
	if err := check(C.ztg_component(o.h, C.size_t(index), &c, &e), e); err != nil {
		return ComponentInfo{}, err
	}
	r := ComponentInfo{
		// Strings by length: a role or type name may hold NULs.
		Role: C.GoStringN(c.role, C.int(c.role_len)), Dtype: Dtype(c.dtype),
		DtypeName: C.GoStringN(c.dtype_name, C.int(c.dtype_name_len)), Ratio: int(c.ratio),
		Encoding: Encoding(c.encoding), EncodingName: C.GoStringN(c.encoding_name, C.int(c.encoding_name_len)),
		Offset: uint64(c.offset), Length: uint64(c.length), DecodedLength: uint64(c.decoded_length),
		BigEndian: c.big_endian != 0, DigestAlg: digestFromC(c.digest_alg), Err: statusErr(c.status),
	}
	if c.logical_type != nil {
		r.LogicalType = C.GoStringN(c.logical_type, C.int(c.logical_type_len))
	}
	if c.digest != nil {
		r.Digest = C.GoString(c.digest)
	}
	return r, nil
}

// Components describes every component, in order.
func (o *Object) Components() ([]ComponentInfo, error) {
	in, err := o.Info()
	if err != nil {
		return nil, err
	}
	out := make([]ComponentInfo, in.ComponentCount)
	for i := range out {
		if out[i], err = o.Component(i); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ComponentIndex is the index of the component with that role, matched
// whole (a role, like a name, may hold NULs).
func (o *Object) ComponentIndex(role string) (int, error) {
	defer runtime.KeepAlive(o) // reachable until the C call returns (see the package doc)
	if err := o.g.enter(); err != nil {
		return 0, err
	}
	defer o.g.leave()
	cr := C.CString(role)
	defer C.free(unsafe.Pointer(cr))
	var i C.size_t
	var e *C.char
	if err := check(C.ztg_component_index(o.h, cr, C.size_t(len(role)), &i, &e), e); err != nil {
		return 0, err
	}
	return int(i), nil
}

// AttributesJSON is the object attributes as JSON text ("null" if none).
func (o *Object) AttributesJSON() (string, error) {
	defer runtime.KeepAlive(o) // reachable until the C call returns (see the package doc)
	if err := o.g.enter(); err != nil {
		return "", err
	}
	defer o.g.leave()
	var p, e *C.char
	if err := check(C.ztg_object_attributes_json(o.h, &p, &e), e); err != nil {
		return "", err
	}
	defer C.zt_free(unsafe.Pointer(p))
	return C.GoString(p), nil
}

// dtypeOf returns the component's dtype and decoded size (one cheap call).
// The caller holds the guard.
func (o *Object) dtypeOf(index int) (Dtype, uint64, error) {
	defer runtime.KeepAlive(o) // reachable until the C call returns (see the package doc)
	var d C.zt_dtype
	var n C.uint64_t
	var e *C.char
	if err := check(C.ztg_component_dtype(o.h, C.size_t(index), &d, &n, &e), e); err != nil {
		return 0, 0, err
	}
	return Dtype(d), uint64(n), nil
}

func checkType[T Element](o *Object, index int) (uint64, error) {
	d, n, err := o.dtypeOf(index)
	if err != nil {
		return 0, err
	}
	if !reads[T](d) {
		return 0, errorf(ErrInvalidArg, "component %d is stored as %s, not readable as %s", index, d, DtypeOf[T]())
	}
	return n, nil
}

// ReadBytes is component index decoded (little-endian elements on every
// common host), as a new byte slice.
func (o *Object) ReadBytes(index int) ([]byte, error) {
	defer runtime.KeepAlive(o) // reachable until the C call returns (see the package doc)
	if err := o.g.enter(); err != nil {
		return nil, err
	}
	defer o.g.leave()
	_, n, err := o.dtypeOf(index)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, n)
	var got C.size_t
	var e *C.char
	if err := check(C.ztg_read(o.h, C.size_t(index), ptr(buf), C.size_t(n), &got, &e), e); err != nil {
		return nil, err
	}
	return buf[:got], nil
}

// Read is component index decoded into a new []T (a copy: it outlives the
// file). T must match the component's dtype.
func Read[T Element](o *Object, index int) ([]T, error) {
	defer runtime.KeepAlive(o) // reachable until the C call returns (see the package doc)
	if err := o.g.enter(); err != nil {
		return nil, err
	}
	defer o.g.leave()
	n, err := checkType[T](o, index)
	if err != nil {
		return nil, err
	}
	var z T
	out := make([]T, n/uint64(unsafe.Sizeof(z)))
	b := bytesOf(out)
	var got C.size_t
	var e *C.char
	if err := check(C.ztg_read(o.h, C.size_t(index), ptr(b), C.size_t(len(b)), &got, &e), e); err != nil {
		return nil, err
	}
	return out[:int(got)/int(unsafe.Sizeof(z))], nil
}

// ReadInto decodes component index into dst, which must hold all of it;
// it returns the number of elements written.
func ReadInto[T Element](o *Object, index int, dst []T) (int, error) {
	defer runtime.KeepAlive(o) // reachable until the C call returns (see the package doc)
	if err := o.g.enter(); err != nil {
		return 0, err
	}
	defer o.g.leave()
	if _, err := checkType[T](o, index); err != nil {
		return 0, err
	}
	var z T
	b := bytesOf(dst)
	var got C.size_t
	var e *C.char
	if err := check(C.ztg_read(o.h, C.size_t(index), ptr(b), C.size_t(len(b)), &got, &e), e); err != nil {
		return 0, err
	}
	return int(got) / int(unsafe.Sizeof(z)), nil
}

// ReadRange reads elements [first, first+len(dst)) of component index.
func ReadRange[T Element](o *Object, index int, first uint64, dst []T) error {
	defer runtime.KeepAlive(o) // reachable until the C call returns (see the package doc)
	if err := o.g.enter(); err != nil {
		return err
	}
	defer o.g.leave()
	if _, err := checkType[T](o, index); err != nil {
		return err
	}
	b := bytesOf(dst)
	var e *C.char
	return check(C.ztg_read_range(o.h, C.size_t(index), C.uint64_t(first), C.uint64_t(len(dst)), ptr(b),
		C.size_t(len(b)), &e), e)
}

// ReadSlice reads the N-d box [start[d], stop[d]) of component index, row
// major, like numpy's a[s0:e0, s1:e1]. The "data" component of a dense
// object is sliced along the object's shape (a compound logical element,
// complex64, counts as one); others are 1-d.
func ReadSlice[T Element](o *Object, index int, start, stop []uint64) ([]T, error) {
	defer runtime.KeepAlive(o) // reachable until the C call returns (see the package doc)
	if len(start) != len(stop) {
		return nil, errorf(ErrInvalidArg, "slice start has %d dimensions, stop %d", len(start), len(stop))
	}
	c, err := o.Component(index)
	if err != nil {
		return nil, err
	}
	if err := o.g.enter(); err != nil {
		return nil, err
	}
	defer o.g.leave()
	if _, err := checkType[T](o, index); err != nil {
		return nil, err
	}
	n := uint64(1)
	if c.Ratio > 1 {
		n = uint64(c.Ratio)
	}
	for d := range start {
		if stop[d] > start[d] {
			n *= stop[d] - start[d]
		} else {
			n = 0
		}
	}
	out := make([]T, n)
	b := bytesOf(out)
	var e *C.char
	var sp, ep *C.uint64_t
	if len(start) > 0 {
		sp, ep = (*C.uint64_t)(&start[0]), (*C.uint64_t)(&stop[0])
	}
	if err := check(C.ztg_read_slice(o.h, C.size_t(index), C.size_t(len(start)), sp, ep, ptr(b), C.size_t(len(b)),
		&e), e); err != nil {
		return nil, err
	}
	return out, nil
}

// View is component index without a copy: a slice of the file's mapping,
// valid until the File is closed. Keep the File open and reachable while
// using it (defer f.Close() does both); do not write through it. Raw
// components of mapped or memory files only; else ErrNotZeroCopy.
func View[T Element](o *Object, index int) ([]T, error) {
	defer runtime.KeepAlive(o) // reachable until the C call returns (see the package doc)
	if err := o.g.enter(); err != nil {
		return nil, err
	}
	defer o.g.leave()
	if _, err := checkType[T](o, index); err != nil {
		return nil, err
	}
	var p unsafe.Pointer
	var n C.size_t
	var e *C.char
	if err := check(C.ztg_view(o.h, C.size_t(index), &p, &n, &e), e); err != nil {
		return nil, err
	}
	var z T
	size := uintptr(unsafe.Sizeof(z))
	if uintptr(p)%size != 0 {
		return nil, errorf(ErrNotZeroCopy, "component %d is not aligned for %s", index, DtypeOf[T]())
	}
	if n == 0 {
		return []T{}, nil
	}
	return unsafe.Slice((*T)(p), uintptr(n)/size), nil
}

// Verified is what VerifyComponent found.
type Verified int

const (
	VerifiedNoDigest     Verified = 0 // structure checked, nothing else to check
	VerifiedOK           Verified = 1 // the digest matched
	VerifiedUnverifiable Verified = 2 // a digest of an unknown algorithm
)

// VerifyComponent checks component index: structure, digest, zstd frame.
func (o *Object) VerifyComponent(index int) (Verified, error) {
	defer runtime.KeepAlive(o) // reachable until the C call returns (see the package doc)
	if err := o.g.enter(); err != nil {
		return 0, err
	}
	defer o.g.leave()
	var r C.zt_verify_result
	var e *C.char
	err := check(C.ztg_component_verify(o.h, C.size_t(index), &r, &e), e)
	return Verified(r), err
}

// Verify checks every component of the object.
func (o *Object) Verify() error {
	defer runtime.KeepAlive(o) // reachable until the C call returns (see the package doc)
	if err := o.g.enter(); err != nil {
		return err
	}
	defer o.g.leave()
	var e *C.char
	return check(C.ztg_object_verify(o.h, &e), e)
}

// Stream is a component decoded in pieces, as an io.ReadCloser, with
// memory bounded by one input chunk. It holds the open file, so it stays
// usable after the File is closed; one goroutine at a time may use it.
type Stream struct {
	h       *C.zt_component_stream
	mem     *cmem
	buf     *C.char // a C buffer the library fills (C may not keep Go pointers)
	pending []byte
}

const streamChunk = 1 << 16

// streamsOpen counts the Streams not yet closed: the tests check with it
// that no finalizer closes a Stream under its own Read.
var streamsOpen int64

// Stream opens a reader over component index.
func (o *Object) Stream(index int) (*Stream, error) {
	defer runtime.KeepAlive(o) // reachable until the C call returns (see the package doc)
	if err := o.g.enter(); err != nil {
		return nil, err
	}
	defer o.g.leave()
	var h *C.zt_component_stream
	var e *C.char
	if err := check(C.ztg_stream_open(o.h, C.size_t(index), &h, &e), e); err != nil {
		return nil, err
	}
	s := &Stream{h: h, mem: o.mem.retain(), buf: (*C.char)(C.malloc(streamChunk))}
	atomic.AddInt64(&streamsOpen, 1)
	runtime.SetFinalizer(s, (*Stream).Close)
	return s, nil
}

// Read implements io.Reader.
func (s *Stream) Read(p []byte) (int, error) {
	defer runtime.KeepAlive(s) // reachable until the C call returns (see the package doc)
	if s.h == nil {
		return 0, errorf(ErrMisuse, "the stream is closed")
	}
	if len(s.pending) == 0 {
		var n C.size_t
		var e *C.char
		if err := check(C.ztg_stream_read(s.h, unsafe.Pointer(s.buf), streamChunk, &n, &e), e); err != nil {
			return 0, err
		}
		if n == 0 {
			return 0, io.EOF
		}
		s.pending = unsafe.Slice((*byte)(unsafe.Pointer(s.buf)), int(n))
	}
	k := copy(p, s.pending)
	s.pending = s.pending[k:]
	return k, nil
}

// Close releases the stream; it may be called more than once.
func (s *Stream) Close() error {
	defer runtime.KeepAlive(s) // reachable until the C call returns (see the package doc)
	if s.h == nil {
		return nil
	}
	runtime.SetFinalizer(s, nil)
	C.zt_component_stream_close(s.h)
	C.free(unsafe.Pointer(s.buf))
	s.h, s.buf, s.pending = nil, nil, nil
	s.mem.release()
	atomic.AddInt64(&streamsOpen, -1)
	return nil
}
