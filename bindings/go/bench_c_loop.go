package ztensor

/*
#include "wrappers.h"
*/
import "C"

import "unsafe"

// benchCLoop runs n iterations of zt_file_object_by_name +
// zt_component_read (component 0 of name, into a C buffer) inside one C
// loop: the library's own per-call cost, against which the benchmarks
// measure what cgo and this package add. For benchmarks only: not part of
// the package's API (export_test.go hands it to bench_test.go; a _test.go
// file cannot use cgo itself).
func benchCLoop(f *File, name string, n int) error {
	if err := f.g.enter(); err != nil {
		return err
	}
	defer f.g.leave()
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	buf := C.malloc(1 << 16)
	defer C.free(buf)
	if s := C.ztg_bench_c_loop(f.h, cn, C.size_t(len(name)), buf, 1<<16, C.size_t(n)); s != C.ZT_OK {
		return Status(s)
	}
	return nil
}
