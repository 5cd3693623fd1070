package ztensor

/*
#include "wrappers.h"
*/
import "C"

import (
	"runtime"
	"strings"
	"sync"
	"unsafe"
)

// WriterOptions are the defaults of a writer's blobs and how the file is
// finished; the zero value (or nil) means the library's defaults.
type WriterOptions struct {
	Digest              DigestAlg // default for blobs (DigestDefault = none)
	Encoding            Encoding  // default for blobs (EncodingDefault = raw)
	ZstdLevel           int32     // 0 = 3
	Threads             uint32    // zstd workers for large blobs; 0 = cores
	NoSync              bool      // skip the fsync of file and directory on finish
	NoValidate          bool      // skip the check of composite objects on finish
	VerifyBeforeReplace bool      // re-read the new file before it replaces the destination
	// Format is the generation written: 0 or 1 spec 1.2 (the default), 2
	// zTensor v2 (docs/v2.md, Writing), canonical unless NonCanonical. In
	// v2, Digest is the parts' digest (DigestDefault = xxh3; DigestSHA256,
	// DigestNone when non-canonical), Encoding zstd is zt.zstd-seekable/1,
	// and Alignment (non-canonical; 0 = 65536) a multiple of 4096.
	Format       uint32
	NonCanonical bool
	Alignment    uint64
}

func (o *WriterOptions) toC() C.zt_writer_options {
	var c C.zt_writer_options
	C.zt_writer_options_init(&c)
	if o == nil {
		return c
	}
	if o.Format == 2 {
		c.format = 2
		if o.NonCanonical {
			c.canonical = 0
		}
		c.alignment = C.uint64_t(o.Alignment)
		if o.Digest != DigestDefault {
			c.v2_digest = o.Digest.toC()
		}
	} else if o.Digest != DigestDefault {
		c.digest = o.Digest.toC()
	}
	if o.Encoding != EncodingDefault {
		c.encoding = C.uint32_t(o.Encoding)
	}
	if o.ZstdLevel != 0 {
		c.zstd_level = C.int32_t(o.ZstdLevel)
	}
	c.threads = C.uint32_t(o.Threads)
	if o.NoSync {
		c.sync = 0
	}
	if o.NoValidate {
		c.validate = 0
	}
	if o.VerifyBeforeReplace {
		c.verify_before_replace = 1
	}
	return c
}

// BlobOptions are per-blob settings; zero fields keep the writer's defaults.
type BlobOptions struct {
	Encoding    Encoding
	ZstdLevel   int32
	Digest      DigestAlg
	LogicalType string // "complex64", "f8_e4m3fn", ...
}

// blobC converts opts; the returned func frees the C string it holds. A
// logical type holding a NUL (which C would cut) is an error.
func blobC(opts *BlobOptions) (*C.zt_blob_options, func(), error) {
	if opts == nil {
		return nil, func() {}, nil
	}
	if err := cText(opts.LogicalType, "logical type"); err != nil {
		return nil, func() {}, err
	}
	c := (*C.zt_blob_options)(C.malloc(C.size_t(unsafe.Sizeof(C.zt_blob_options{}))))
	C.zt_blob_options_init(c)
	c.encoding = C.uint32_t(opts.Encoding)
	if opts.ZstdLevel != 0 {
		c.zstd_level = C.int32_t(opts.ZstdLevel)
	}
	if opts.Digest != DigestDefault {
		c.digest = opts.Digest.toC()
	}
	if opts.LogicalType != "" {
		c.logical_type = C.CString(opts.LogicalType)
	}
	return c, func() {
		C.free(unsafe.Pointer(c.logical_type))
		C.free(unsafe.Pointer(c))
	}, nil
}

// Writer builds a .zt file. Nothing appears at the destination before
// Finish succeeds. Its calls are serialised by a mutex; a writer that is
// garbage-collected unfinished is discarded.
type Writer struct {
	mu   sync.Mutex
	h    *C.zt_writer
	blob bool // a BlobWriter is open
}

func newWriter(h *C.zt_writer) *Writer {
	w := &Writer{h: h}
	runtime.SetFinalizer(w, (*Writer).Discard)
	return w
}

// Create starts a file at path (written to a temporary beside it, renamed
// into place by Finish).
func Create(path string, opts *WriterOptions) (*Writer, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	co := opts.toC()
	var h *C.zt_writer
	var e *C.char
	if err := check(C.ztg_writer_create(cpath, &co, &h, &e), e); err != nil {
		return nil, err
	}
	return newWriter(h), nil
}

// CreateMemory starts a file built in memory; FinishMemory returns it.
func CreateMemory(opts *WriterOptions) (*Writer, error) {
	co := opts.toC()
	var h *C.zt_writer
	var e *C.char
	if err := check(C.ztg_writer_create_memory(&co, &h, &e), e); err != nil {
		return nil, err
	}
	return newWriter(h), nil
}

// cText refuses a role, format or logical type holding a NUL: the C writer
// takes these as C strings and would cut it there (writing another role).
func cText(text, what string) error {
	if strings.IndexByte(text, 0) >= 0 {
		return errorf(ErrInvalidArg, "%s %q holds a NUL byte, which the writer cannot store", what, text)
	}
	return nil
}

func (w *Writer) lock() error {
	w.mu.Lock()
	if w.h == nil {
		w.mu.Unlock()
		return errorf(ErrMisuse, "the writer is finished or discarded")
	}
	return nil
}

// SetAttributesJSON sets the file attributes (a JSON object).
func (w *Writer) SetAttributesJSON(json string) error {
	defer runtime.KeepAlive(w) // reachable until the C call returns (see the package doc)
	if err := w.lock(); err != nil {
		return err
	}
	defer w.mu.Unlock()
	cj := C.CString(json)
	defer C.free(unsafe.Pointer(cj))
	var e *C.char
	return check(C.ztg_set_attributes_json(w.h, cj, &e), e)
}

// SetObjectAttributesJSON sets a declared object's attributes.
func (w *Writer) SetObjectAttributesJSON(name, json string) error {
	defer runtime.KeepAlive(w) // reachable until the C call returns (see the package doc)
	if err := w.lock(); err != nil {
		return err
	}
	defer w.mu.Unlock()
	cn, cj := C.CString(name), C.CString(json)
	defer C.free(unsafe.Pointer(cn))
	defer C.free(unsafe.Pointer(cj))
	var e *C.char
	return check(C.ztg_set_object_attributes_json(w.h, cn, C.size_t(len(name)), cj, &e), e)
}

// AddDense writes a dense tensor of T with shape (row-major data).
func AddDense[T Element](w *Writer, name string, shape []uint64, data []T, opts *BlobOptions) error {
	return w.AddDenseBytes(name, DtypeOf[T](), shape, bytesOf(data), opts)
}

// AddDenseBool writes a dense bool tensor (bytes 0 and 1).
func (w *Writer) AddDenseBool(name string, shape []uint64, data []bool, opts *BlobOptions) error {
	var b []byte
	if len(data) > 0 {
		b = unsafe.Slice((*byte)(unsafe.Pointer(&data[0])), len(data))
	}
	return w.AddDenseBytes(name, Bool, shape, b, opts)
}

func shapePtr(shape []uint64) *C.uint64_t {
	if len(shape) == 0 {
		return nil
	}
	return (*C.uint64_t)(&shape[0])
}

// AddDenseBytes writes a dense tensor given as the bytes of dtype elements
// in the host's byte order.
func (w *Writer) AddDenseBytes(name string, dtype Dtype, shape []uint64, data []byte, opts *BlobOptions) error {
	defer runtime.KeepAlive(w) // reachable until the C call returns (see the package doc)
	if err := w.lock(); err != nil {
		return err
	}
	defer w.mu.Unlock()
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	co, free, err := blobC(opts)
	defer free()
	if err != nil {
		return err
	}
	var e *C.char
	return check(C.ztg_add_dense(w.h, cn, C.size_t(len(name)), C.zt_dtype(dtype), shapePtr(shape),
		C.size_t(len(shape)), ptr(data), C.size_t(len(data)), co, &e), e)
}

// BeginObject declares an object of format ("dense", "sparse_csr", ...);
// its components follow with WriteBlob or BeginBlob.
func (w *Writer) BeginObject(name, format string, shape []uint64) error {
	defer runtime.KeepAlive(w) // reachable until the C call returns (see the package doc)
	if err := cText(format, "format"); err != nil {
		return err
	}
	if err := w.lock(); err != nil {
		return err
	}
	defer w.mu.Unlock()
	cn, cf := C.CString(name), C.CString(format)
	defer C.free(unsafe.Pointer(cn))
	defer C.free(unsafe.Pointer(cf))
	var e *C.char
	return check(C.ztg_begin_object(w.h, cn, C.size_t(len(name)), cf, shapePtr(shape), C.size_t(len(shape)), &e), e)
}

// WriteBlob writes component role of the declared object name.
func WriteBlob[T Element](w *Writer, name, role string, data []T, opts *BlobOptions) error {
	defer runtime.KeepAlive(w) // reachable until the C call returns (see the package doc)
	if err := cText(role, "role"); err != nil {
		return err
	}
	if err := w.lock(); err != nil {
		return err
	}
	defer w.mu.Unlock()
	cn, cr := C.CString(name), C.CString(role)
	defer C.free(unsafe.Pointer(cn))
	defer C.free(unsafe.Pointer(cr))
	co, free, err := blobC(opts)
	defer free()
	if err != nil {
		return err
	}
	b := bytesOf(data)
	var e *C.char
	return check(C.ztg_write_blob(w.h, cn, C.size_t(len(name)), cr, C.zt_dtype(DtypeOf[T]()), ptr(b),
		C.size_t(len(b)), co, &e), e)
}

// BlobWriter is a component written in pieces (an io.WriteCloser of its
// bytes); Close ends it. Only one is open per Writer at a time.
type BlobWriter struct {
	w *Writer
}

// BeginBlob starts component role of the declared object name.
func (w *Writer) BeginBlob(name, role string, dtype Dtype, opts *BlobOptions) (*BlobWriter, error) {
	defer runtime.KeepAlive(w) // reachable until the C call returns (see the package doc)
	if err := cText(role, "role"); err != nil {
		return nil, err
	}
	if err := w.lock(); err != nil {
		return nil, err
	}
	defer w.mu.Unlock()
	cn, cr := C.CString(name), C.CString(role)
	defer C.free(unsafe.Pointer(cn))
	defer C.free(unsafe.Pointer(cr))
	co, free, err := blobC(opts)
	defer free()
	if err != nil {
		return nil, err
	}
	var e *C.char
	if err := check(C.ztg_blob_begin(w.h, cn, C.size_t(len(name)), cr, C.zt_dtype(dtype), co, &e), e); err != nil {
		return nil, err
	}
	w.blob = true
	return &BlobWriter{w: w}, nil
}

// Write appends bytes to the component.
func (b *BlobWriter) Write(p []byte) (int, error) {
	defer runtime.KeepAlive(b) // reachable until the C call returns (see the package doc)
	if err := b.w.lock(); err != nil {
		return 0, err
	}
	defer b.w.mu.Unlock()
	var e *C.char
	if err := check(C.ztg_blob_append(b.w.h, ptr(p), C.size_t(len(p)), &e), e); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close ends the component; its total must fit the object's shape.
func (b *BlobWriter) Close() error {
	defer runtime.KeepAlive(b) // reachable until the C call returns (see the package doc)
	if err := b.w.lock(); err != nil {
		return err
	}
	defer b.w.mu.Unlock()
	if !b.w.blob {
		return nil
	}
	b.w.blob = false
	var e *C.char
	return check(C.ztg_blob_end(b.w.h, &e), e)
}

func (w *Writer) take() (*C.zt_writer, error) {
	defer runtime.KeepAlive(w) // reachable until the C call returns (see the package doc)
	if err := w.lock(); err != nil {
		return nil, err
	}
	defer w.mu.Unlock()
	h := w.h
	w.h = nil
	runtime.SetFinalizer(w, nil)
	if w.blob {
		C.zt_writer_discard(h)
		return nil, errorf(ErrMisuse, "a blob was not closed: the file was discarded")
	}
	return h, nil
}

// Finish writes the manifest and footer and renames the file into place.
// The writer is released whatever the outcome.
func (w *Writer) Finish() error {
	defer runtime.KeepAlive(w) // reachable until the C call returns (see the package doc)
	h, err := w.take()
	if err != nil {
		return err
	}
	var e *C.char
	return check(C.ztg_writer_finish(h, &e), e)
}

// FinishMemory finishes a memory writer and returns the file's bytes.
func (w *Writer) FinishMemory() ([]byte, error) {
	defer runtime.KeepAlive(w) // reachable until the C call returns (see the package doc)
	h, err := w.take()
	if err != nil {
		return nil, err
	}
	var p *C.uint8_t
	var n C.size_t
	var e *C.char
	if err := check(C.ztg_writer_finish_memory(h, &p, &n, &e), e); err != nil {
		return nil, err
	}
	defer C.zt_free(unsafe.Pointer(p))
	return C.GoBytes(unsafe.Pointer(p), C.int(n)), nil
}

// Discard abandons the file (its temporary is removed). It may be called
// more than once, and after Finish.
func (w *Writer) Discard() error {
	defer runtime.KeepAlive(w) // reachable until the C call returns (see the package doc)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.h == nil {
		return nil
	}
	runtime.SetFinalizer(w, nil)
	s := C.zt_writer_discard(w.h)
	w.h = nil
	return statusErr(s)
}
