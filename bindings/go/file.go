// Package ztensor reads and writes zTensor (.zt) tensor files through
// libztensor's C ABI (cgo, pkg-config "ztensor").
//
// # Lifetimes and threads
//
// A *File (and a *Set) may be used by many goroutines at once: the library's
// readers are immutable after open. Close is idempotent and waits for the
// calls in flight on other goroutines (a read-write lock), because the C
// ABI requires zt_close to come after every other call on the file. A
// finalizer closes a File that was never closed; it cannot race an
// explicit Close (both take the lock, and a finalizer only runs once the
// File is unreachable). After Close every method returns ErrMisuse.
//
// Reads copy by default (Read, ReadInto, ReadSlice, ReadBytes): the result is
// ordinary Go memory that outlives the file. View is the zero-copy
// exception: its slice points into the file's mapping and is valid only
// until Close — keep the File open, and reachable, while you use it (a
// deferred f.Close() does both). Copies are the default because a view used
// after Close, or after the File was garbage-collected, reads unmapped
// memory, which Go's type system cannot prevent.
//
// A *Writer serialises its calls with a mutex (the C writer is used by one
// thread at a time), and a finalizer discards a writer that was neither
// finished nor discarded.
//
// Every method that hands a handle to C keeps its receiver (and, for an
// Object, the File or Set it belongs to) reachable until the C call
// returns (a deferred runtime.KeepAlive), so no finalizer can close a
// file, stream or writer under a call in progress.
//
// # Callbacks
//
// The library calls back into Go from C++ frames (OpenReaderAt's ReadAt,
// VerifyAll's failures). A panic must never unwind through them: each
// callback recovers it and returns it to the library as an I/O error
// (zt_io_set_error), which the Go call then returns as an *Error. A ReadAt
// that reports more bytes than asked, or a negative count, is an error too.
package ztensor

/*
#cgo pkg-config: ztensor
#include "wrappers.h"
*/
import "C"

import (
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Version is the library's version at run time ("1.1.0").
func Version() string { return C.GoString(C.zt_version_string()) }

// Access is how an opened file's bytes are reached.
type Access uint32

const (
	AccessMmap  Access = 0 // memory-map the file: zero-copy views (default)
	AccessPread Access = 1 // pread(2): no views; for files that change underfoot
)

// OpenOptions are the options of the Open functions; the zero value (or a
// nil pointer) means the library's defaults.
type OpenOptions struct {
	Access          Access
	Strict          bool   // refuse the file at the first invalid object
	Threads         uint32 // workers of Verify and ReadMany; 0 = cores
	MaxManifestSize uint64 // 0 = default (1 GiB)
	MaxDecodedSize  uint64 // per component; 0 = default (64 GiB)
	VerifyOnRead    bool   // check each component's digest on first read
	// Most of the file will be read soon (a whole-model load): a background
	// thread reads the file's data into the page cache in file order from
	// the open on, and ReadMany copies behind it (docs/cold-reads.md).
	// Local files on Linux and other POSIX systems; ignored elsewhere.
	Prefetch bool
}

func (o *OpenOptions) toC() C.zt_open_options {
	var c C.zt_open_options
	C.zt_open_options_init(&c)
	if o == nil {
		return c
	}
	c.access = C.uint32_t(o.Access)
	if o.Strict {
		c.strict = 1
	}
	c.threads = C.uint32_t(o.Threads)
	if o.MaxManifestSize != 0 {
		c.max_manifest_size = C.uint64_t(o.MaxManifestSize)
	}
	if o.MaxDecodedSize != 0 {
		c.max_decoded_size = C.uint64_t(o.MaxDecodedSize)
	}
	if o.VerifyOnRead {
		c.verify_on_read = 1
	}
	if o.Prefetch {
		c.prefetch = 1
	}
	return c
}

// guard is the lock of an owner (File or Set): calls hold it for reading,
// Close for writing. Objects point into their owner's guard, which keeps
// the owner reachable (no finalizer) while an Object is in use.
type guard struct {
	mu     sync.RWMutex
	closed bool
}

func (g *guard) enter() error {
	g.mu.RLock()
	if g.closed {
		g.mu.RUnlock()
		return errorf(ErrMisuse, "the file is closed")
	}
	return nil
}

func (g *guard) leave() { g.mu.RUnlock() }

// cmem is C memory shared by a File opened from memory and its streams,
// freed when the last of them lets go.
type cmem struct {
	p    unsafe.Pointer
	refs int32
}

func (m *cmem) retain() *cmem {
	if m != nil {
		atomic.AddInt32(&m.refs, 1)
	}
	return m
}

func (m *cmem) release() {
	if m != nil && atomic.AddInt32(&m.refs, -1) == 0 {
		C.free(m.p)
	}
}

// File is an open .zt file.
type File struct {
	g   guard
	h   *C.zt_file
	mem *cmem
}

func newFile(h *C.zt_file, mem *cmem) *File {
	f := &File{h: h, mem: mem}
	runtime.SetFinalizer(f, (*File).Close)
	return f
}

// Open opens a .zt file of any supported version with default options.
func Open(path string) (*File, error) { return OpenWith(path, nil) }

// OpenWith opens a .zt file with options.
func OpenWith(path string, opts *OpenOptions) (*File, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	co := opts.toC()
	var h *C.zt_file
	var e *C.char
	if err := check(C.ztg_open(cpath, &co, &h, &e), e); err != nil {
		return nil, err
	}
	return newFile(h, nil), nil
}

// OpenMemory opens the file held in data. The bytes are copied into C
// memory first (C may not keep pointers to Go memory), so data may be
// reused at once; views point into the copy.
func OpenMemory(data []byte, opts *OpenOptions) (*File, error) {
	p := C.malloc(C.size_t(len(data) + 1))
	if p == nil {
		return nil, errorf(ErrNoMem, "cannot allocate %d bytes", len(data))
	}
	copy(unsafe.Slice((*byte)(p), len(data)), data)
	mem := &cmem{p: p, refs: 1}
	co := opts.toC()
	var h *C.zt_file
	var e *C.char
	if err := check(C.ztg_open_memory(p, C.size_t(len(data)), &co, &h, &e), e); err != nil {
		mem.release()
		return nil, err
	}
	return newFile(h, mem), nil
}

// URLOptions are the settings of OpenURL; zero fields keep the defaults.
type URLOptions struct {
	ConnectTimeoutMs uint32
	TimeoutMs        uint32
	MaxParallel      uint32
	CacheBytes       uint64
	BearerToken      string // sent as "Authorization: Bearer ..."; never in messages
}

// OpenURL opens an http:// or https:// URL with ranged GETs. Views are not
// available (ErrNotZeroCopy).
func OpenURL(url string, uopts *URLOptions, opts *OpenOptions) (*File, error) {
	var cu C.zt_url_options
	C.zt_url_options_init(&cu)
	if uopts != nil {
		if uopts.ConnectTimeoutMs != 0 {
			cu.connect_timeout_ms = C.uint32_t(uopts.ConnectTimeoutMs)
		}
		if uopts.TimeoutMs != 0 {
			cu.timeout_ms = C.uint32_t(uopts.TimeoutMs)
		}
		if uopts.MaxParallel != 0 {
			cu.max_parallel = C.uint32_t(uopts.MaxParallel)
		}
		if uopts.CacheBytes != 0 {
			cu.cache_bytes = C.uint64_t(uopts.CacheBytes)
		}
		if uopts.BearerToken != "" {
			t := C.CString(uopts.BearerToken)
			defer C.free(unsafe.Pointer(t))
			cu.bearer_token = t
		}
	}
	curl := C.CString(url)
	defer C.free(unsafe.Pointer(curl))
	co := opts.toC()
	var h *C.zt_file
	var e *C.char
	if err := check(C.ztg_open_url(curl, &cu, &co, &h, &e), e); err != nil {
		return nil, err
	}
	return newFile(h, nil), nil
}

// Close closes the file. It waits for calls in flight on other goroutines
// and may be called any number of times; views become invalid.
func (f *File) Close() error {
	defer runtime.KeepAlive(f) // reachable until the C call returns (see the package doc)
	f.g.mu.Lock()
	defer f.g.mu.Unlock()
	if f.g.closed {
		return nil
	}
	f.g.closed = true
	runtime.SetFinalizer(f, nil)
	s := C.zt_close(f.h)
	f.h = nil
	f.mem.release()
	if s != C.ZT_OK {
		return &Error{Status: Status(s), Message: "zt_close"}
	}
	return nil
}

// Version is the spec version the file declares ("1.2.0", "0.1.0", ...).
// ContentDigest is the content digest of a zTensor v2 model (v2 spec §6.4),
// "sha256:<hex>" or "xxh3:<hex>" (alg DigestSHA256 or DigestXXH3): the same
// for the same tensors whatever their placement, encoding or number of
// files, computed from the manifest alone. When a part carries no digest it
// is undefined: an error with ErrUnsupported naming the part.
func (f *File) ContentDigest(alg DigestAlg) (string, error) {
	defer runtime.KeepAlive(f) // reachable until the C call returns (see the package doc)
	if err := f.g.enter(); err != nil {
		return "", err
	}
	defer f.g.leave()
	calg := C.zt_digest_alg(alg.toC())
	var n C.size_t
	var e *C.char
	if err := check(C.ztg_file_content_digest(f.h, calg, nil, 0, &n, &e), e); err != nil {
		return "", err
	}
	buf := make([]byte, int(n)+1)
	if err := check(C.ztg_file_content_digest(f.h, calg, (*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)), &n, &e), e); err != nil {
		return "", err
	}
	return string(buf[:int(n)]), nil
}

// CanonicalForm is what File.Canonical finds (v2 spec §6.3).
type CanonicalForm struct {
	// Rule is 0 when the file is canonical; else the number (1..6) of the
	// first rule it misses.
	Rule uint32
	// Misses lists every miss, "rule N: ...", naming the part and offsets
	// (empty when canonical).
	Misses []string
}

// IsCanonical reports whether the file is in canonical form.
func (c CanonicalForm) IsCanonical() bool { return c.Rule == 0 }

// Canonical reports whether a zTensor v2 file is in canonical form (v2 spec
// §6.3: one manifest and no unreferenced blobs; blobs at 64 KiB boundaries
// in name order; identical parts sharing a blob; raw parts with xxh3
// digests; NFC names; no shard table), and which rules it misses. An error
// with ErrWrongFormat for a file that is not v2.
func (f *File) Canonical() (CanonicalForm, error) {
	defer runtime.KeepAlive(f) // reachable until the C call returns (see the package doc)
	if err := f.g.enter(); err != nil {
		return CanonicalForm{}, err
	}
	defer f.g.leave()
	var rule C.uint32_t
	var msg, e *C.char
	if err := check(C.ztg_file_canonical(f.h, &rule, &msg, &e), e); err != nil {
		return CanonicalForm{}, err
	}
	form := CanonicalForm{Rule: uint32(rule)}
	if msg != nil {
		defer C.zt_free(unsafe.Pointer(msg))
		if text := C.GoString(msg); text != "" {
			form.Misses = strings.Split(text, "; ")
		}
	}
	return form, nil
}

func (f *File) Version() (string, error) {
	defer runtime.KeepAlive(f) // reachable until the C call returns (see the package doc)
	if err := f.g.enter(); err != nil {
		return "", err
	}
	defer f.g.leave()
	var p *C.char
	var e *C.char
	if err := check(C.ztg_file_version(f.h, &p, &e), e); err != nil {
		return "", err
	}
	return C.GoString(p), nil
}

// Len is the number of objects.
func (f *File) Len() (int, error) {
	defer runtime.KeepAlive(f) // reachable until the C call returns (see the package doc)
	if err := f.g.enter(); err != nil {
		return 0, err
	}
	defer f.g.leave()
	var n C.size_t
	var e *C.char
	if err := check(C.ztg_object_count(f.h, &n, &e), e); err != nil {
		return 0, err
	}
	return int(n), nil
}

// Object is the object at index, in manifest order.
func (f *File) Object(index int) (*Object, error) {
	defer runtime.KeepAlive(f) // reachable until the C call returns (see the package doc)
	if err := f.g.enter(); err != nil {
		return nil, err
	}
	defer f.g.leave()
	var o *C.zt_object
	var e *C.char
	if err := check(C.ztg_object_at(f.h, C.size_t(index), &o, &e), e); err != nil {
		return nil, err
	}
	return &Object{g: &f.g, h: o, mem: f.mem}, nil
}

// ObjectByName is the object called name (ErrNotFound if none).
func (f *File) ObjectByName(name string) (*Object, error) {
	defer runtime.KeepAlive(f) // reachable until the C call returns (see the package doc)
	if err := f.g.enter(); err != nil {
		return nil, err
	}
	defer f.g.leave()
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var o *C.zt_object
	var e *C.char
	if err := check(C.ztg_object_by_name(f.h, cname, C.size_t(len(name)), &o, &e), e); err != nil {
		return nil, err
	}
	return &Object{g: &f.g, h: o, mem: f.mem}, nil
}

// Objects lists every object, in manifest order.
func (f *File) Objects() ([]*Object, error) {
	n, err := f.Len()
	if err != nil {
		return nil, err
	}
	out := make([]*Object, n)
	for i := range out {
		if out[i], err = f.Object(i); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// AttributesJSON is the file attributes as JSON text ("null" if none).
func (f *File) AttributesJSON() (string, error) {
	defer runtime.KeepAlive(f) // reachable until the C call returns (see the package doc)
	if err := f.g.enter(); err != nil {
		return "", err
	}
	defer f.g.leave()
	var p, e *C.char
	if err := check(C.ztg_file_attributes_json(f.h, &p, &e), e); err != nil {
		return "", err
	}
	defer C.zt_free(unsafe.Pointer(p))
	return C.GoString(p), nil
}

// VerifyFailure is one failure found by File.VerifyAll.
type VerifyFailure struct {
	Object, Role string // "" at file or object level
	Err          *Error
}

// Verify checks every object (structure, digests, zstd frames) in parallel;
// the error is the first failure in manifest order.
func (f *File) Verify(strict bool) error {
	_, err := f.verify(strict, false)
	return err
}

// VerifyAll returns every failure Verify finds, in manifest order, and the
// first as the error.
func (f *File) VerifyAll(strict bool) ([]VerifyFailure, error) { return f.verify(strict, true) }

func (f *File) verify(strict, collect bool) ([]VerifyFailure, error) {
	defer runtime.KeepAlive(f) // reachable until the C call returns (see the package doc)
	if err := f.g.enter(); err != nil {
		return nil, err
	}
	defer f.g.leave()
	var failures []VerifyFailure
	var h C.uintptr_t
	if collect {
		handle := newHandle(&failures)
		defer handle.Delete()
		h = C.uintptr_t(handle)
	}
	var cs C.uint32_t
	if strict {
		cs = 1
	}
	var e *C.char
	err := check(C.ztg_file_verify(f.h, cs, h, &e), e)
	return failures, err
}

// ReadRequest is one component to decode in File.ReadMany.
type ReadRequest struct {
	Object    *Object
	Component int
	Dst       []byte // filled with the decoded bytes
	N         int    // out: bytes written (or needed, with ErrBufferTooSmall)
	Err       error  // out: this request's outcome
}

// ReadMany decodes several components at once, in parallel. Each request
// gets its own N and Err; the error returned is the first failed one's.
// The library writes into C memory, copied into each Dst afterwards (C may
// not hold pointers to Go memory).
func (f *File) ReadMany(reqs []ReadRequest) error {
	defer runtime.KeepAlive(f) // reachable until the C call returns (see the package doc)
	if len(reqs) == 0 {
		return nil
	}
	if err := f.g.enter(); err != nil {
		return err
	}
	defer f.g.leave()
	total := 0
	for i := range reqs {
		if reqs[i].Object == nil || reqs[i].Object.g != &f.g {
			return errorf(ErrInvalidArg, "read request %d: object not of this file", i)
		}
		total += len(reqs[i].Dst)
	}
	size := C.size_t(unsafe.Sizeof(C.zt_read_request{}))
	creqs := (*C.zt_read_request)(C.calloc(C.size_t(len(reqs)), size))
	buf := C.malloc(C.size_t(total + 1))
	defer C.free(unsafe.Pointer(creqs))
	defer C.free(buf)
	cr := unsafe.Slice(creqs, len(reqs))
	off := 0
	for i, r := range reqs {
		cr[i].object = r.Object.h
		cr[i].component = C.size_t(r.Component)
		cr[i].dst = unsafe.Add(buf, off)
		cr[i].dst_capacity = C.size_t(len(r.Dst))
		off += len(r.Dst)
	}
	var e *C.char
	err := check(C.ztg_read_many(f.h, creqs, C.size_t(len(reqs)), &e), e)
	for i := range reqs {
		reqs[i].N = int(cr[i].out_size)
		if cr[i].status == C.ZT_OK {
			copy(reqs[i].Dst, unsafe.Slice((*byte)(cr[i].dst), reqs[i].N))
			reqs[i].Err = nil
		} else {
			reqs[i].Err = &Error{Status: Status(cr[i].status), Message: "read_many request"}
		}
	}
	return err
}
