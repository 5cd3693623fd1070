package ztensor

/*
#include "wrappers.h"
*/
import "C"

import (
	"fmt"
	"runtime/cgo"
	"unsafe"
)

// ShardResolver finds a zTensor v2 shard by the caller's convention: given
// the shard's name, exact size and whole-file digest ("sha256:<hex>" or
// "xxh3:<hex>"), it returns a path or an http(s)/s3 URL, opened as given,
// or "" when it knows no such file (the parts in that shard then report
// ErrNotFound). An error (or a panic) fails that shard's parts with ErrIO,
// "the resolver failed": the C ABI carries its status only. Called
// on the opening goroutine, once per shard, one call at a time.
type ShardResolver func(name string, size uint64, digest string) (string, error)

// OpenSharded opens a v2 root (a path, or an http(s)/s3 URL read as OpenURL
// reads it, with uopts) whose shards resolve gets (zt_open_sharded; nil:
// positional, beside the root). Any other file opens as Open/OpenURL open it.
func OpenSharded(root string, uopts *URLOptions, opts *OpenOptions, resolve ShardResolver) (*File, error) {
	var h cgo.Handle
	if resolve != nil {
		h = cgo.NewHandle(resolve)
		defer h.Delete() // the resolver runs during the open only
	}
	return openSharded(root, uopts, opts, h, nil)
}

// OpenShardedByIdentity opens a v2 root whose shards are the .zt files in
// scan's folder with the sizes and whole-file digests its table gives
// (spec Appendix B: survives any renaming).
func OpenShardedByIdentity(root string, uopts *URLOptions, opts *OpenOptions, scan *IdentityScan) (*File, error) {
	if scan == nil || scan.h == nil {
		return nil, errorf(ErrInvalidArg, "OpenShardedByIdentity: the IdentityScan is nil or closed")
	}
	return openSharded(root, uopts, opts, 0, scan.h)
}

func openSharded(root string, uopts *URLOptions, opts *OpenOptions, h cgo.Handle, scan *C.zt_shard_scan) (*File, error) {
	cu, free := uopts.toC()
	defer free()
	croot := C.CString(root)
	defer C.free(unsafe.Pointer(croot))
	co := opts.toC()
	var f *C.zt_file
	var e *C.char
	if err := check(C.ztg_open_sharded(croot, &cu, &co, C.uintptr_t(h), scan, &f, &e), e); err != nil {
		return nil, err
	}
	return newFile(f, nil), nil
}

//export ztgoResolveShard
func ztgoResolveShard(user C.uintptr_t, name *C.char, size C.uint64_t, digest *C.char, location *C.char,
	capacity C.size_t) (status C.int) {
	defer func() { // a panic must not unwind through the library
		if p := recover(); p != nil {
			status = ioError(fmt.Sprintf("shard resolver panicked: %v", p))
		}
	}()
	resolve := cgo.Handle(user).Value().(ShardResolver)
	where, err := resolve(C.GoString(name), uint64(size), C.GoString(digest))
	if err != nil {
		return ioError(err.Error())
	}
	if where == "" {
		return C.ZT_E_NOT_FOUND
	}
	if len(where)+1 > int(capacity) {
		return C.ZT_E_BUFFER_TOO_SMALL
	}
	dst := unsafe.Slice((*byte)(unsafe.Pointer(location)), int(capacity))
	copy(dst, where)
	dst[len(where)] = 0
	return C.ZT_OK
}

// IdentityScan lists the .zt files directly in a folder by size (reading
// none); each group of one size is hashed once per algorithm, the first
// time a shard of that size is asked for. It may serve several opens, from
// several goroutines; Close it once no open that uses it is running.
type IdentityScan struct{ h *C.zt_shard_scan }

// NewIdentityScan scans folder (zt_shard_scan_open).
func NewIdentityScan(folder string) (*IdentityScan, error) {
	c := C.CString(folder)
	defer C.free(unsafe.Pointer(c))
	var h *C.zt_shard_scan
	var e *C.char
	if err := check(C.ztg_shard_scan_open(c, &h, &e), e); err != nil {
		return nil, err
	}
	return &IdentityScan{h: h}, nil
}

// Close frees the scan; files opened with it stay usable.
func (s *IdentityScan) Close() error {
	if s == nil || s.h == nil {
		return nil
	}
	h := s.h
	s.h = nil
	if st := C.zt_shard_scan_close(h); st != C.ZT_OK {
		return errorf(Status(st), "zt_shard_scan_close failed")
	}
	return nil
}

// MakeShardedV2 turns complete v2 files (a v2 Writer's output) into the
// data shards named names of a new root at root, with the shard table
// (size and whole-file digest, DigestSHA256 or DigestXXH3): what
// `zt split --format 2` does (zt_v2_make_sharded).
func MakeShardedV2(root string, shardPaths, names []string, alg DigestAlg, sync bool) error {
	if len(shardPaths) != len(names) {
		return errorf(ErrInvalidArg, "MakeShardedV2: %d paths but %d names", len(shardPaths), len(names))
	}
	n := len(shardPaths)
	arr := C.malloc(C.size_t(2*n+1) * C.size_t(unsafe.Sizeof(uintptr(0))))
	defer C.free(arr)
	ptrs := unsafe.Slice((**C.char)(arr), 2*n+1)
	for i := 0; i < n; i++ {
		ptrs[i] = C.CString(shardPaths[i])
		ptrs[n+i] = C.CString(names[i])
	}
	defer func() {
		for i := 0; i < 2*n; i++ {
			C.free(unsafe.Pointer(ptrs[i]))
		}
	}()
	croot := C.CString(root)
	defer C.free(unsafe.Pointer(croot))
	s := C.uint32_t(0)
	if sync {
		s = 1
	}
	var e *C.char
	return check(C.ztg_v2_make_sharded(croot, &ptrs[0], &ptrs[n], C.size_t(n), C.zt_digest_alg(alg.toC()), s, &e), e)
}
