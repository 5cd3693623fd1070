package ztensor

/*
#include "wrappers.h"
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// Set is a sharded checkpoint (a JSON index and its .zt shards) opened as
// one (docs/sharding.md). Like File: shared by goroutines, Close idempotent,
// closed by a finalizer if forgotten.
type Set struct {
	g guard
	h *C.zt_set
}

// OpenSet opens the index at indexPath and every shard it names.
func OpenSet(indexPath string, opts *OpenOptions) (*Set, error) {
	cp := C.CString(indexPath)
	defer C.free(unsafe.Pointer(cp))
	co := opts.toC()
	var h *C.zt_set
	var e *C.char
	if err := check(C.ztg_open_set(cp, &co, &h, &e), e); err != nil {
		return nil, err
	}
	s := &Set{h: h}
	runtime.SetFinalizer(s, (*Set).Close)
	return s, nil
}

// Close closes every shard; it may be called more than once.
func (s *Set) Close() error {
	defer runtime.KeepAlive(s) // reachable until the C call returns (see the package doc)
	s.g.mu.Lock()
	defer s.g.mu.Unlock()
	if s.g.closed {
		return nil
	}
	s.g.closed = true
	runtime.SetFinalizer(s, nil)
	st := C.zt_set_close(s.h)
	s.h = nil
	return statusErr(st)
}

// Len is the number of objects of all shards.
func (s *Set) Len() (int, error) {
	defer runtime.KeepAlive(s) // reachable until the C call returns (see the package doc)
	if err := s.g.enter(); err != nil {
		return 0, err
	}
	defer s.g.leave()
	var n C.size_t
	var e *C.char
	if err := check(C.ztg_set_object_count(s.h, &n, &e), e); err != nil {
		return 0, err
	}
	return int(n), nil
}

// Object is the object at index (shards in location order, then manifest order).
func (s *Set) Object(index int) (*Object, error) {
	defer runtime.KeepAlive(s) // reachable until the C call returns (see the package doc)
	if err := s.g.enter(); err != nil {
		return nil, err
	}
	defer s.g.leave()
	var o *C.zt_object
	var e *C.char
	if err := check(C.ztg_set_object_at(s.h, C.size_t(index), &o, &e), e); err != nil {
		return nil, err
	}
	return &Object{g: &s.g, h: o}, nil
}

// ObjectByName is the object called name, whichever shard holds it.
func (s *Set) ObjectByName(name string) (*Object, error) {
	defer runtime.KeepAlive(s) // reachable until the C call returns (see the package doc)
	if err := s.g.enter(); err != nil {
		return nil, err
	}
	defer s.g.leave()
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	var o *C.zt_object
	var e *C.char
	if err := check(C.ztg_set_object_by_name(s.h, cn, C.size_t(len(name)), &o, &e), e); err != nil {
		return nil, err
	}
	return &Object{g: &s.g, h: o}, nil
}
