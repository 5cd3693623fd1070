package ztensor

/*
#include "wrappers.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"io"
	"runtime/cgo"
	"unsafe"
)

func newHandle(v any) cgo.Handle { return cgo.NewHandle(v) }

// readerSource is what the C callbacks of OpenReaderAt reach.
type readerSource struct {
	r    io.ReaderAt
	size int64
}

// OpenReaderAt opens a .zt file of size bytes read through r (zt_open_io),
// so any storage client that offers io.ReaderAt plugs in. The library may
// call ReadAt from several threads at once (Verify, ReadMany), which
// io.ReaderAt allows. Views are not available (ErrNotZeroCopy). r is kept
// until Close; name appears in error messages.
func OpenReaderAt(r io.ReaderAt, size int64, name string, opts *OpenOptions) (*File, error) {
	h := cgo.NewHandle(&readerSource{r: r, size: size})
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	co := opts.toC()
	var f *C.zt_file
	var e *C.char
	// The handle is freed by the close callback, which runs whatever the
	// outcome of the open.
	if err := check(C.ztg_open_io(C.uintptr_t(h), C.uint64_t(size), cname, &co, &f, &e), e); err != nil {
		return nil, err
	}
	return newFile(f, nil), nil
}

//export ztgoReadAt
func ztgoReadAt(user C.uintptr_t, off C.uint64_t, n C.size_t, dst unsafe.Pointer, out *C.size_t) (status C.int) {
	// A panic must not unwind through the library's C++ frames: it becomes
	// this read's error.
	defer func() {
		if p := recover(); p != nil {
			*out = 0
			status = ioError(fmt.Sprintf("ReadAt at %d panicked: %v", uint64(off), p))
		}
	}()
	*out = 0
	src := cgo.Handle(user).Value().(*readerSource)
	buf := unsafe.Slice((*byte)(dst), int(n))
	got, err := src.r.ReadAt(buf, int64(off))
	if got < 0 || got > len(buf) {
		return ioError(fmt.Sprintf("ReadAt at %d of %d bytes reported %d", uint64(off), len(buf), got))
	}
	*out = C.size_t(got)
	if err != nil && !(errors.Is(err, io.EOF) && got > 0) {
		if errors.Is(err, io.EOF) {
			return C.ZT_OK // no progress: the library reports the short read
		}
		return ioError(err.Error())
	}
	return C.ZT_OK
}

// ioError hands msg to the library as the failing callback's message.
func ioError(msg string) C.int {
	c := C.CString(msg)
	C.zt_io_set_error(c)
	C.free(unsafe.Pointer(c))
	return C.ZT_E_IO
}

//export ztgoIOClose
func ztgoIOClose(user C.uintptr_t) { cgo.Handle(user).Delete() }

//export ztgoVerifyFailure
func ztgoVerifyFailure(user C.uintptr_t, object *C.char, objectLen C.size_t, role *C.char, roleLen C.size_t,
	status C.int, message *C.char) {
	defer func() { _ = recover() }() // never unwind through the library (the failure is then not listed)
	out := cgo.Handle(user).Value().(*[]VerifyFailure)
	*out = append(*out, VerifyFailure{
		// Whole names and roles: either may hold NULs.
		Object: C.GoStringN(object, C.int(objectLen)), Role: C.GoStringN(role, C.int(roleLen)),
		Err: &Error{Status: Status(status), Message: C.GoString(message)},
	})
}
