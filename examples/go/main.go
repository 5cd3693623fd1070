// libztensor from Go through cgo.
//
// usage: ztensor_go_example SCRATCH.zt [FILE.zt ...]
//  1. writes SCRATCH.zt (a raw f32 tensor and a zstd i32 tensor), opens it,
//     lists its objects and checks every component's bytes, decoded and
//     zero-copy, against what was written;
//  2. checks that a failure returns a status and a detail message;
//  3. prints "file<TAB>object<TAB>role<TAB>sha256-of-decoded-bytes" for every
//     component of each FILE (the test compares them with expected.json).
//
// zt_last_error() is thread-local and a goroutine may move to another OS
// thread between two cgo calls, so every call goes through a C wrapper that
// copies the message into the caller's buffer inside the same cgo call.
package main

/*
#cgo LDFLAGS: -lztensor
#include <stdlib.h>
#include <string.h>
#include "ztensor.h"

static void copy_error(char *err, size_t cap) {
  if (!err || cap == 0) return;
  strncpy(err, zt_last_error(), cap - 1);
  err[cap - 1] = '\0';
}

#define ZT_CALL(call)                      \
  do {                                     \
    zt_status s_ = (call);                 \
    if (s_ != ZT_OK) copy_error(err, cap); \
    return s_;                             \
  } while (0)

static zt_status go_open(const char *path, zt_file **out, char *err, size_t cap) {
  ZT_CALL(zt_open(path, NULL, out));
}
static zt_status go_object_count(const zt_file *f, size_t *out, char *err, size_t cap) {
  ZT_CALL(zt_file_object_count(f, out));
}
static zt_status go_object_at(const zt_file *f, size_t i, zt_object **out, char *err, size_t cap) {
  ZT_CALL(zt_file_object_at(f, i, (const zt_object **)out));
}
static zt_status go_object_info(zt_object *o, zt_object_info *out, char *err, size_t cap) {
  out->struct_size = sizeof *out;
  ZT_CALL(zt_object_get_info(o, out));
}
static zt_status go_component(zt_object *o, size_t i, zt_component_info *out, char *err, size_t cap) {
  out->struct_size = sizeof *out;
  ZT_CALL(zt_object_component(o, i, out));
}
static zt_status go_read(zt_object *o, size_t i, void *dst, size_t dst_cap, size_t *out, char *err, size_t cap) {
  ZT_CALL(zt_component_read(o, i, dst, dst_cap, out));
}
static zt_status go_view(zt_object *o, size_t i, void **out, size_t *len, char *err, size_t cap) {
  ZT_CALL(zt_component_view(o, i, (const void **)out, len));
}
static zt_status go_writer_create(const char *path, zt_writer **out, char *err, size_t cap) {
  ZT_CALL(zt_writer_create(path, NULL, out));
}
static zt_status go_add_dense(zt_writer *w, const char *name, size_t name_len, zt_dtype dtype, const uint64_t *shape,
                              size_t ndim, const void *data, size_t len, int zstd, char *err, size_t cap) {
  zt_blob_options o;
  zt_blob_options_init(&o);
  if (zstd) o.encoding = ZT_ENCODING_ZSTD;
  ZT_CALL(zt_writer_add_dense(w, name, name_len, dtype, shape, ndim, data, len, &o));
}
static zt_status go_finish(zt_writer *w, char *err, size_t cap) { ZT_CALL(zt_writer_finish(w)); }
*/
import "C"

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unsafe"
)

// Error is a failed library call: its status and detail message.
type Error struct {
	Status int
	Name   string
	Msg    string
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Name, e.Msg) }

// call runs one wrapper with an error buffer and turns its status into an error.
func call(f func(err *C.char, cap C.size_t) C.zt_status) error {
	buf := make([]byte, 1024)
	s := f((*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)))
	if s == C.ZT_OK {
		return nil
	}
	msg := string(buf[:bytes.IndexByte(buf, 0)])
	return &Error{Status: int(s), Name: C.GoString(C.zt_status_str(s)), Msg: msg}
}

type File struct{ h *C.zt_file }

func Open(path string) (*File, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	f := &File{}
	err := call(func(e *C.char, n C.size_t) C.zt_status { return C.go_open(cpath, &f.h, e, n) })
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (f *File) Close() { C.zt_close(f.h) }

func (f *File) Objects() ([]*C.zt_object, error) {
	var n C.size_t
	if err := call(func(e *C.char, c C.size_t) C.zt_status { return C.go_object_count(f.h, &n, e, c) }); err != nil {
		return nil, err
	}
	out := make([]*C.zt_object, int(n))
	for i := range out {
		idx := C.size_t(i)
		if err := call(func(e *C.char, c C.size_t) C.zt_status { return C.go_object_at(f.h, idx, &out[i], e, c) }); err != nil {
			return nil, err
		}
	}
	return out, nil
}

type objectInfo struct {
	name, format string
	shape        []uint64
	components   int
}

func info(o *C.zt_object) (objectInfo, error) {
	var ci C.zt_object_info
	if err := call(func(e *C.char, c C.size_t) C.zt_status { return C.go_object_info(o, &ci, e, c) }); err != nil {
		return objectInfo{}, err
	}
	r := objectInfo{name: C.GoStringN(ci.name, C.int(ci.name_len)), format: C.GoString(ci.format),
		components: int(ci.component_count)}
	if ci.ndim > 0 {
		r.shape = append([]uint64(nil), unsafe.Slice((*uint64)(unsafe.Pointer(ci.shape)), int(ci.ndim))...)
	}
	return r, nil
}

func component(o *C.zt_object, i int) (C.zt_component_info, error) {
	var ci C.zt_component_info
	err := call(func(e *C.char, c C.size_t) C.zt_status { return C.go_component(o, C.size_t(i), &ci, e, c) })
	return ci, err
}

func read(o *C.zt_object, i int) ([]byte, error) {
	var need C.size_t
	err := call(func(e *C.char, c C.size_t) C.zt_status { return C.go_read(o, C.size_t(i), nil, 0, &need, e, c) })
	if zerr, ok := err.(*Error); err != nil && (!ok || zerr.Status != int(C.ZT_E_BUFFER_TOO_SMALL)) {
		return nil, err
	}
	buf := C.malloc(need + 1) // C memory: the library writes into it during the call
	defer C.free(buf)
	err = call(func(e *C.char, c C.size_t) C.zt_status { return C.go_read(o, C.size_t(i), buf, need, &need, e, c) })
	if err != nil {
		return nil, err
	}
	return C.GoBytes(buf, C.int(need)), nil
}

func writeScratch(path string, f32s []float32, i32s []int32) error {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var w *C.zt_writer
	if err := call(func(e *C.char, c C.size_t) C.zt_status { return C.go_writer_create(cpath, &w, e, c) }); err != nil {
		return err
	}
	add := func(name string, dtype C.zt_dtype, shape []uint64, data []byte, zstd C.int) error {
		cname := C.CString(name)
		defer C.free(unsafe.Pointer(cname))
		cshape := C.malloc(C.size_t(8 * len(shape)))
		defer C.free(cshape)
		copy(unsafe.Slice((*uint64)(cshape), len(shape)), shape)
		cdata := C.CBytes(data)
		defer C.free(cdata)
		return call(func(e *C.char, c C.size_t) C.zt_status {
			return C.go_add_dense(w, cname, C.size_t(len(name)), dtype, (*C.uint64_t)(cshape), C.size_t(len(shape)),
				cdata, C.size_t(len(data)), zstd, e, c)
		})
	}
	if err := add("weights", C.ZT_F32, []uint64{2, 3}, leF32(f32s), 0); err != nil {
		return err
	}
	if err := add("ids", C.ZT_I32, []uint64{uint64(len(i32s))}, leI32(i32s), 1); err != nil {
		return err
	}
	return call(func(e *C.char, c C.size_t) C.zt_status { return C.go_finish(w, e, c) })
}

func leF32(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func leI32(v []int32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return b
}

func roundTrip(path string) error {
	f32s := make([]float32, 6)
	for i := range f32s {
		f32s[i] = float32(i)*0.5 - 1
	}
	i32s := make([]int32, 1000)
	for i := range i32s {
		i32s[i] = int32((i*7919)%1009 - 500)
	}
	if err := writeScratch(path, f32s, i32s); err != nil {
		return err
	}
	f, err := Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	objs, err := f.Objects()
	if err != nil {
		return err
	}
	var seen []string
	for _, o := range objs {
		in, err := info(o)
		if err != nil {
			return err
		}
		ci, err := component(o, 0)
		if err != nil {
			return err
		}
		fmt.Printf("object %s format=%s shape=%v components=%d dtype=%s encoding=%s\n", in.name, in.format, in.shape,
			in.components, C.GoString(ci.dtype_name), C.GoString(ci.encoding_name))
		got, err := read(o, 0)
		if err != nil {
			return err
		}
		var want []byte
		switch in.name {
		case "weights":
			want = leF32(f32s)
		case "ids":
			want = leI32(i32s)
		default:
			return fmt.Errorf("unexpected object %q", in.name)
		}
		if !bytes.Equal(got, want) {
			return fmt.Errorf("%s: decoded bytes differ from what was written", in.name)
		}
		if in.name == "weights" {
			var p unsafe.Pointer
			var n C.size_t
			if err := call(func(e *C.char, c C.size_t) C.zt_status { return C.go_view(o, 0, &p, &n, e, c) }); err != nil {
				return err
			}
			if !bytes.Equal(C.GoBytes(p, C.int(n)), want) || fmt.Sprint(in.shape) != "[2 3]" {
				return fmt.Errorf("weights: zero-copy view or shape wrong")
			}
		}
		seen = append(seen, in.name)
	}
	sort.Strings(seen)
	if strings.Join(seen, ",") != "ids,weights" {
		return fmt.Errorf("listed objects %v", seen)
	}
	// A failure: the status, and the message fetched in the same cgo call.
	_, err = Open(path + ".missing")
	zerr, ok := err.(*Error)
	if !ok || zerr.Status != int(C.ZT_E_IO) || !strings.Contains(zerr.Msg, ".missing") {
		return fmt.Errorf("opening a missing file gave %v", err)
	}
	fmt.Printf("round trip OK (libztensor %s)\n", C.GoString(C.zt_version_string()))
	return nil
}

func printDigests(path string) error {
	f, err := Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	objs, err := f.Objects()
	if err != nil {
		return err
	}
	for _, o := range objs {
		in, err := info(o)
		if err != nil {
			return err
		}
		for i := 0; i < in.components; i++ {
			ci, err := component(o, i)
			if err != nil {
				return err
			}
			data, err := read(o, i)
			if err != nil {
				return err
			}
			fmt.Printf("%s\t%s\t%s\t%x\n", filepath.Base(path), in.name, C.GoString(ci.role), sha256.Sum256(data))
		}
	}
	return nil
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintf(os.Stderr, "usage: %s SCRATCH.zt [FILE.zt ...]\n", os.Args[0])
		os.Exit(2)
	}
	err := roundTrip(os.Args[1])
	for _, p := range os.Args[2:] {
		if err != nil {
			break
		}
		err = printDigests(p)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
