package ztensor

import (
	"errors"
	"io"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// gcDuringRead serves a file's bytes; once armed, its next ReadAt (made by
// the library from inside a Stream.Read) collects garbage, lets finalizers
// run, records whether a Stream was closed meanwhile, and fails the read.
type gcDuringRead struct {
	data         []byte
	armed        int32
	closedDuring int32
}

func (r *gcDuringRead) ReadAt(p []byte, off int64) (int, error) {
	if atomic.LoadInt32(&r.armed) == 1 {
		before := atomic.LoadInt64(&streamsOpen)
		for i := 0; i < 3; i++ {
			runtime.GC()
			time.Sleep(5 * time.Millisecond)
		}
		if atomic.LoadInt64(&streamsOpen) < before {
			atomic.StoreInt32(&r.closedDuring, 1)
		}
		return 0, errors.New("refused after a GC")
	}
	if off >= int64(len(r.data)) {
		return 0, io.EOF
	}
	n := copy(p, r.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// readOnce opens a stream and reads from it once: the Stream is reachable
// only through Read's receiver while the C call runs.
//
//go:noinline
func readOnce(o *Object) error {
	s, err := o.Stream(0)
	if err != nil {
		return err
	}
	_, err = s.Read(make([]byte, 16))
	return err
}

func TestNoFinalizerRunsUnderAStreamRead(t *testing.T) {
	w, err := CreateMemory(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := AddDense(w, "x", []uint64{1 << 18}, make([]float32, 1<<18), nil); err != nil {
		t.Fatal(err)
	}
	data, err := w.FinishMemory()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		src := &gcDuringRead{data: data}
		f, err := OpenReaderAt(src, int64(len(data)), "gc.zt", nil)
		if err != nil {
			t.Fatal(err)
		}
		o, err := f.ObjectByName("x")
		if err != nil {
			t.Fatal(err)
		}
		// Streams of earlier rounds are garbage: let their finalizers run
		// first, so that only this round's stream can be closed below.
		for j := 0; j < 100 && atomic.LoadInt64(&streamsOpen) != 0; j++ {
			runtime.GC()
			time.Sleep(time.Millisecond)
		}
		if n := atomic.LoadInt64(&streamsOpen); n != 0 {
			t.Fatalf("%d streams of earlier rounds were never finalized", n)
		}
		atomic.StoreInt32(&src.armed, 1)
		if err := readOnce(o); err == nil || !errors.Is(err, ErrIO) {
			t.Fatalf("the refused read: %v", err)
		}
		if atomic.LoadInt32(&src.closedDuring) != 0 {
			t.Fatal("a Stream was finalized while its Read was in the library")
		}
		f.Close()
	}
	runtime.GC()
}
