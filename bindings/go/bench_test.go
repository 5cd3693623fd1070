package ztensor_test

import (
	"fmt"
	"testing"

	ztensor "github.com/libztensor/libztensor/bindings/go"
)

// benchFile is 64 small f32 tensors in a memory file.
func benchFile(b *testing.B) *ztensor.File {
	w, _ := ztensor.CreateMemory(nil)
	data := make([]float32, 16)
	for i := 0; i < 64; i++ {
		if err := ztensor.AddDense(w, fmt.Sprintf("t%d", i), []uint64{16}, data, nil); err != nil {
			b.Fatal(err)
		}
	}
	bytes, _ := w.FinishMemory()
	f, err := ztensor.OpenMemory(bytes, nil)
	if err != nil {
		b.Fatal(err)
	}
	return f
}

// BenchmarkCallsC is the C library's own cost: zt_file_object_by_name +
// zt_component_read of 64 bytes, b.N times in one C loop (one cgo call).
func BenchmarkCallsC(b *testing.B) {
	f := benchFile(b)
	defer f.Close()
	b.ResetTimer()
	if err := ztensor.BenchCLoop(f, "t42", b.N); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkCallsGo is the same work through the Go API: ObjectByName +
// ReadInto, each call crossing cgo (plus the dtype check and the lock).
// Its ns/op minus BenchmarkCallsC's is the per-iteration overhead of Go.
func BenchmarkCallsGo(b *testing.B) {
	f := benchFile(b)
	defer f.Close()
	dst := make([]float32, 16)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		o, err := f.ObjectByName("t42")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ztensor.ReadInto(o, 0, dst); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCallsGoParallel: the same from all Ps (the read lock is shared).
func BenchmarkCallsGoParallel(b *testing.B) {
	f := benchFile(b)
	defer f.Close()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		dst := make([]float32, 16)
		for pb.Next() {
			o, _ := f.ObjectByName("t42")
			if _, err := ztensor.ReadInto(o, 0, dst); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
