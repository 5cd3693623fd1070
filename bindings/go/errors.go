package ztensor

/*
#include "wrappers.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Status is a libztensor status code (zt_status); every value is also an
// error, so the sentinels below work with errors.Is:
//
//	if errors.Is(err, ztensor.ErrDigestMismatch) { ... }
type Status int32

// The statuses of the C ABI (values pinned forever by the library).
const (
	ErrInvalidArg           Status = -1
	ErrMisuse               Status = -2
	ErrNoMem                Status = -3
	ErrIO                   Status = -4
	ErrNotFound             Status = -5
	ErrBufferTooSmall       Status = -6
	ErrUnsupported          Status = -7
	ErrLimit                Status = -8
	ErrInternal             Status = -9
	ErrExists               Status = -10
	ErrNotZeroCopy          Status = -11
	ErrFormat               Status = -20
	ErrFooter               Status = -21
	ErrTruncated            Status = -22
	ErrManifestSize         Status = -23
	ErrManifestLimit        Status = -24
	ErrCBOR                 Status = -30
	ErrCBORDepth            Status = -31
	ErrDuplicateKey         Status = -32
	ErrManifest             Status = -33
	ErrVersion              Status = -34
	ErrField                Status = -40
	ErrDtype                Status = -41
	ErrEncoding             Status = -42
	ErrAlignment            Status = -43
	ErrBounds               Status = -44
	ErrOverlap              Status = -45
	ErrShape                Status = -46
	ErrLength               Status = -47
	ErrNoUncompressedLength Status = -48
	ErrDecodedSize          Status = -49
	ErrCorrupt              Status = -50
	ErrDigestMismatch       Status = -51
	ErrDigestFormat         Status = -52
	ErrName                 Status = -53
	ErrBoolValue            Status = -54
	ErrComponentMissing     Status = -60
	ErrSparseIndptr         Status = -61
	ErrSparseIndex          Status = -62
	ErrSparseNNZ            Status = -63
	ErrQuantParams          Status = -64
	ErrQuantSize            Status = -65
	ErrWrongFormat          Status = -66
	ErrIndexDtype           Status = -67
	ErrCompress             Status = -70
	ErrChanged              Status = -80
)

// Error returns the library's fixed description of the status.
func (s Status) Error() string { return C.GoString(C.zt_status_str(C.zt_status(s))) }

// Error is a failed call: its Status and the library's detail message
// (which file, object, component, rule and offset). errors.Is(err, status)
// compares the status; errors.As(err, &e) gives the message.
type Error struct {
	Status  Status
	Message string
}

func (e *Error) Error() string {
	if e.Message == "" {
		return e.Status.Error()
	}
	return fmt.Sprintf("%s: %s", e.Status.Error(), e.Message)
}

// Unwrap returns the Status, so errors.Is(err, ErrNotFound) works.
func (e *Error) Unwrap() error { return e.Status }

// check turns a wrapper's status and malloc'd message into an error.
func check(s C.zt_status, msg *C.char) error {
	if s == C.ZT_OK {
		return nil
	}
	text := ""
	if msg != nil {
		text = C.GoString(msg)
		C.free(unsafe.Pointer(msg))
	}
	return &Error{Status: Status(s), Message: text}
}

// errorf is an error raised on the Go side, before any library call.
func errorf(s Status, format string, args ...any) error {
	return &Error{Status: s, Message: fmt.Sprintf(format, args...)}
}
