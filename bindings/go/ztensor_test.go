package ztensor_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"

	ztensor "github.com/libztensor/libztensor/bindings/go"
)

// values is 24 small integers converted to T (exact in every dtype).
func values[T ztensor.Element](conv func(int) T) []T {
	out := make([]T, 24)
	for i := range out {
		out[i] = conv((i*7)%23 - 5*(i%2) + 10)
	}
	return out
}

func roundTrip[T ztensor.Element](t *testing.T, f *ztensor.File, name string, want []T, zeroCopy bool) {
	t.Helper()
	o, err := f.ObjectByName(name)
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := o.Component(0); c.Dtype != ztensor.DtypeOf[T]() {
		t.Errorf("%s: dtype %v", name, c.Dtype)
	}
	got, err := ztensor.Read[T](o, 0)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("%s: Read %v %v, want %v", name, got, err, want)
	}
	buf := make([]T, len(want))
	if n, err := ztensor.ReadInto(o, 0, buf); err != nil || n != len(want) || !reflect.DeepEqual(buf, want) {
		t.Errorf("%s: ReadInto %d %v", name, n, err)
	}
	part := make([]T, 5)
	if err := ztensor.ReadRange(o, 0, 7, part); err != nil || !reflect.DeepEqual(part, want[7:12]) {
		t.Errorf("%s: ReadRange %v %v", name, part, err)
	}
	// [1:2, 0:3, 1:3] of a [2, 3, 4] tensor.
	slice, err := ztensor.ReadSlice[T](o, 0, []uint64{1, 0, 1}, []uint64{2, 3, 3})
	var exp []T
	for j := 0; j < 3; j++ {
		exp = append(exp, want[12+4*j+1], want[12+4*j+2])
	}
	if err != nil || !reflect.DeepEqual(slice, exp) {
		t.Errorf("%s: ReadSlice %v %v, want %v", name, slice, err, exp)
	}
	s, err := o.Stream(0)
	if err != nil {
		t.Fatal(err)
	}
	streamed, err := io.ReadAll(s)
	s.Close()
	raw, _ := o.ReadBytes(0)
	if err != nil || !bytes.Equal(streamed, raw) {
		t.Errorf("%s: Stream %v", name, err)
	}
	view, err := ztensor.View[T](o, 0)
	if zeroCopy && (err != nil || !reflect.DeepEqual(view, want)) {
		t.Errorf("%s: View %v %v", name, view, err)
	}
	if !zeroCopy && !errors.Is(err, ztensor.ErrNotZeroCopy) {
		t.Errorf("%s: View of a zstd component: %v", name, err)
	}
}

func writeAll(t *testing.T, w *ztensor.Writer, opts *ztensor.BlobOptions) {
	shape := []uint64{2, 3, 4}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(ztensor.AddDense(w, "f64", shape, values(func(i int) float64 { return float64(i) * 0.25 }), opts))
	must(ztensor.AddDense(w, "f32", shape, values(func(i int) float32 { return float32(i) * 0.5 }), opts))
	must(ztensor.AddDense(w, "f16", shape, values(func(i int) ztensor.Float16 { return ztensor.Float16(0x3c00 + i) }), opts))
	must(ztensor.AddDense(w, "bf16", shape, values(func(i int) ztensor.BFloat16 { return ztensor.BFloat16(0x3f80 + i) }), opts))
	must(ztensor.AddDense(w, "i64", shape, values(func(i int) int64 { return int64(i) * -1000000007 }), opts))
	must(ztensor.AddDense(w, "i32", shape, values(func(i int) int32 { return int32(i) * -65537 }), opts))
	must(ztensor.AddDense(w, "i16", shape, values(func(i int) int16 { return int16(i) * -300 }), opts))
	must(ztensor.AddDense(w, "i8", shape, values(func(i int) int8 { return int8(-i) }), opts))
	must(ztensor.AddDense(w, "u64", shape, values(func(i int) uint64 { return uint64(i) * 1000000007 }), opts))
	must(ztensor.AddDense(w, "u32", shape, values(func(i int) uint32 { return uint32(i) * 65537 }), opts))
	must(ztensor.AddDense(w, "u16", shape, values(func(i int) uint16 { return uint16(i) * 300 }), opts))
	must(ztensor.AddDense(w, "u8", shape, values(func(i int) uint8 { return uint8(i) }), opts))
	bools := make([]bool, 24)
	for i := range bools {
		bools[i] = i%3 == 0
	}
	must(w.AddDenseBool("bool", shape, bools, opts))
}

func checkAll(t *testing.T, f *ztensor.File, zeroCopy bool) {
	roundTrip(t, f, "f64", values(func(i int) float64 { return float64(i) * 0.25 }), zeroCopy)
	roundTrip(t, f, "f32", values(func(i int) float32 { return float32(i) * 0.5 }), zeroCopy)
	roundTrip(t, f, "f16", values(func(i int) ztensor.Float16 { return ztensor.Float16(0x3c00 + i) }), zeroCopy)
	roundTrip(t, f, "bf16", values(func(i int) ztensor.BFloat16 { return ztensor.BFloat16(0x3f80 + i) }), zeroCopy)
	roundTrip(t, f, "i64", values(func(i int) int64 { return int64(i) * -1000000007 }), zeroCopy)
	roundTrip(t, f, "i32", values(func(i int) int32 { return int32(i) * -65537 }), zeroCopy)
	roundTrip(t, f, "i16", values(func(i int) int16 { return int16(i) * -300 }), zeroCopy)
	roundTrip(t, f, "i8", values(func(i int) int8 { return int8(-i) }), zeroCopy)
	roundTrip(t, f, "u64", values(func(i int) uint64 { return uint64(i) * 1000000007 }), zeroCopy)
	roundTrip(t, f, "u32", values(func(i int) uint32 { return uint32(i) * 65537 }), zeroCopy)
	roundTrip(t, f, "u16", values(func(i int) uint16 { return uint16(i) * 300 }), zeroCopy)
	roundTrip(t, f, "u8", values(func(i int) uint8 { return uint8(i) }), zeroCopy)
	o, _ := f.ObjectByName("bool")
	got, err := ztensor.Read[uint8](o, 0)
	if err != nil || len(got) != 24 || got[0] != 1 || got[1] != 0 || got[3] != 1 {
		t.Errorf("bool: %v %v", got, err)
	}
	if n, _ := f.Len(); n != len(ztensor.AllDtypes) {
		t.Errorf("%d objects, want one per dtype", n)
	}
}

func TestEveryDtypeRoundTripsOnDisk(t *testing.T) {
	path := filepath.Join(t.TempDir(), "all.zt")
	w, err := ztensor.Create(path, &ztensor.WriterOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	writeAll(t, w, nil)
	if err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	f, err := ztensor.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	checkAll(t, f, true)
	// The prefetch hint changes when the bytes arrive, not what they are.
	pf, err := ztensor.OpenWith(path, &ztensor.OpenOptions{Prefetch: true})
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	checkAll(t, pf, true)
}

func TestEveryDtypeRoundTripsInMemoryZstdDigests(t *testing.T) {
	w, err := ztensor.CreateMemory(&ztensor.WriterOptions{Digest: ztensor.DigestSHA256})
	if err != nil {
		t.Fatal(err)
	}
	writeAll(t, w, &ztensor.BlobOptions{Encoding: ztensor.Zstd, ZstdLevel: 5, Digest: ztensor.DigestCRC32C})
	data, err := w.FinishMemory()
	if err != nil {
		t.Fatal(err)
	}
	f, err := ztensor.OpenMemory(data, &ztensor.OpenOptions{VerifyOnRead: true})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i := range data {
		data[i] = 0 // OpenMemory copied: the caller's slice is free again
	}
	checkAll(t, f, false)
	o, _ := f.ObjectByName("f32")
	c, _ := o.Component(0)
	if c.Encoding != ztensor.Zstd || c.DigestAlg != ztensor.DigestCRC32C || !strings.HasPrefix(c.Digest, "crc32c:") {
		t.Errorf("component %+v", c)
	}
	if v, err := o.VerifyComponent(0); v != ztensor.VerifiedOK || err != nil {
		t.Errorf("VerifyComponent %v %v", v, err)
	}
	if err := f.Verify(true); err != nil {
		t.Error(err)
	}
}

func TestStreamingBlobsAttributesReadMany(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.zt")
	w, err := ztensor.Create(path, &ztensor.WriterOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	ints := make([]int32, 1000)
	for i := range ints {
		ints[i] = int32(i)
	}
	steps := []error{
		w.SetAttributesJSON(`{"model": "tiny"}`),
		w.BeginObject("big", "dense", []uint64{1000}),
	}
	b, err := w.BeginBlob("big", "data", ztensor.I32, &ztensor.BlobOptions{Encoding: ztensor.Zstd})
	if err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, 4000)
	for i, v := range ints {
		raw[4*i], raw[4*i+1] = byte(v), byte(v>>8)
	}
	for off := 0; off < len(raw); off += 999 {
		end := off + 999
		if end > len(raw) {
			end = len(raw)
		}
		if _, err := b.Write(raw[off:end]); err != nil {
			t.Fatal(err)
		}
	}
	steps = append(steps, b.Close(), w.SetObjectAttributesJSON("big", `{"unit": "count"}`),
		w.BeginObject("c64", "dense", []uint64{2}),
		ztensor.WriteBlob(w, "c64", "data", []float32{1, 2, 3, 4}, &ztensor.BlobOptions{LogicalType: "complex64"}),
		w.Finish())
	for i, err := range steps {
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	f, err := ztensor.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if a, _ := f.AttributesJSON(); !strings.Contains(a, "tiny") {
		t.Errorf("attributes %s", a)
	}
	big, _ := f.ObjectByName("big")
	if a, _ := big.AttributesJSON(); !strings.Contains(a, "count") {
		t.Errorf("object attributes %s", a)
	}
	if got, err := ztensor.Read[int32](big, 0); err != nil || !reflect.DeepEqual(got, ints) {
		t.Errorf("streamed blob: %v", err)
	}
	c64, _ := f.ObjectByName("c64")
	if got, err := ztensor.ReadSlice[float32](c64, 0, []uint64{1}, []uint64{2}); err != nil ||
		!reflect.DeepEqual(got, []float32{3, 4}) {
		t.Errorf("complex64 slice %v %v", got, err)
	}
	reqs := []ztensor.ReadRequest{
		{Object: big, Component: 0, Dst: make([]byte, 4000)},
		{Object: c64, Component: 0, Dst: make([]byte, 16)},
		{Object: c64, Component: 0, Dst: make([]byte, 3)},
	}
	err = f.ReadMany(reqs)
	if !errors.Is(err, ztensor.ErrBufferTooSmall) || reqs[0].Err != nil || reqs[1].Err != nil ||
		!errors.Is(reqs[2].Err, ztensor.ErrBufferTooSmall) || reqs[0].N != 4000 || !bytes.Equal(reqs[0].Dst, raw) {
		t.Errorf("ReadMany: %v %+v", err, reqs[2])
	}
}

func TestErrorsCarryTheStatus(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.zt")
	_, err := ztensor.Open(missing)
	var zerr *ztensor.Error
	if !errors.Is(err, ztensor.ErrIO) || !errors.As(err, &zerr) || !strings.Contains(zerr.Message, "nope.zt") {
		t.Errorf("missing file: %v", err)
	}
	if errors.Is(err, ztensor.ErrNotFound) {
		t.Error("an I/O error matched ErrNotFound")
	}
	w, _ := ztensor.CreateMemory(nil)
	if err := ztensor.AddDense(w, "x", []uint64{2, 2}, []float32{1, 2, 3, 4}, nil); err != nil {
		t.Fatal(err)
	}
	if err := ztensor.AddDense(w, "y", []uint64{3}, []float32{1}, nil); !errors.Is(err, ztensor.ErrLength) {
		t.Errorf("short data: %v", err)
	}
	if err := ztensor.AddDense(w, "x", []uint64{1}, []float32{1}, nil); !errors.Is(err, ztensor.ErrExists) {
		t.Errorf("duplicate: %v", err)
	}
	data, _ := w.FinishMemory()
	if _, err := w.FinishMemory(); !errors.Is(err, ztensor.ErrMisuse) {
		t.Errorf("finishing twice: %v", err)
	}
	f, _ := ztensor.OpenMemory(data, nil)
	if _, err := f.ObjectByName("zz"); !errors.Is(err, ztensor.ErrNotFound) {
		t.Errorf("missing object: %v", err)
	}
	x, _ := f.ObjectByName("x")
	if _, err := ztensor.Read[int32](x, 0); !errors.Is(err, ztensor.ErrInvalidArg) || !strings.Contains(err.Error(), "f32") {
		t.Errorf("wrong element type: %v", err)
	}
	if _, err := ztensor.ReadInto(x, 0, make([]float32, 3)); !errors.Is(err, ztensor.ErrBufferTooSmall) {
		t.Errorf("short buffer: %v", err)
	}
	// Close is idempotent; afterwards calls fail cleanly.
	if f.Close() != nil || f.Close() != nil {
		t.Error("Close twice")
	}
	if _, err := ztensor.Read[float32](x, 0); !errors.Is(err, ztensor.ErrMisuse) {
		t.Errorf("read after Close: %v", err)
	}
	if _, err := f.Len(); !errors.Is(err, ztensor.ErrMisuse) {
		t.Errorf("Len after Close: %v", err)
	}
}

func TestDamagedDigestIsDigestMismatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.zt")
	w, _ := ztensor.Create(path, &ztensor.WriterOptions{NoSync: true, Digest: ztensor.DigestSHA256})
	if err := ztensor.AddDense(w, "w", []uint64{64}, make([]float32, 64), nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	f, _ := ztensor.Open(path)
	o, _ := f.Object(0)
	c, _ := o.Component(0)
	f.Close()
	data, _ := os.ReadFile(path)
	data[c.Offset+10] ^= 0xff
	os.WriteFile(path, data, 0o644)
	f, _ = ztensor.OpenWith(path, &ztensor.OpenOptions{VerifyOnRead: true})
	defer f.Close()
	o, _ = f.Object(0)
	_, err := ztensor.Read[float32](o, 0)
	if !errors.Is(err, ztensor.ErrDigestMismatch) || !strings.Contains(err.Error(), "sha256") {
		t.Errorf("damaged component: %v", err)
	}
}

// Goroutines share one File (run under -race); Close waits for them.
func TestConcurrentReads(t *testing.T) {
	w, _ := ztensor.CreateMemory(nil)
	for k := 0; k < 8; k++ {
		data := make([]int64, 4096)
		for i := range data {
			data[i] = int64(i * (k + 1))
		}
		var opts *ztensor.BlobOptions
		if k%2 == 1 {
			opts = &ztensor.BlobOptions{Encoding: ztensor.Zstd, ZstdLevel: 1}
		}
		if err := ztensor.AddDense(w, string(rune('a'+k)), []uint64{4096}, data, opts); err != nil {
			t.Fatal(err)
		}
	}
	data, _ := w.FinishMemory()
	f, err := ztensor.OpenMemory(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for r := 0; r < 40; r++ {
				k := (g + r) % 8
				o, err := f.ObjectByName(string(rune('a' + k)))
				if err != nil {
					t.Error(err)
					return
				}
				v, err := ztensor.Read[int64](o, 0)
				if err != nil || v[4095] != int64(4095*(k+1)) {
					t.Errorf("goroutine %d: %v", g, err)
					return
				}
			}
		}(g)
	}
	// A stream of a memory file outlives Close (it shares the buffer).
	o, _ := f.ObjectByName("b")
	s, _ := o.Stream(0)
	wg.Wait()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	got, err := io.ReadAll(s)
	if err != nil || len(got) != 4096*8 {
		t.Errorf("stream after Close: %d bytes, %v", len(got), err)
	}
	s.Close()
}

// The finalizer closes what the user forgot (no leak, no crash).
func TestFinalizerClosesForgottenFiles(t *testing.T) {
	path := filepath.Join(interopDir(), "v1", "dense_f32.zt")
	for i := 0; i < 200; i++ {
		f, err := ztensor.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Len(); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.GC()
}

func TestSet(t *testing.T) {
	dir := t.TempDir()
	for i, name := range []string{"a", "b"} {
		w, _ := ztensor.Create(filepath.Join(dir, "m-"+name+".zt"), &ztensor.WriterOptions{NoSync: true})
		if err := ztensor.AddDense(w, name, []uint64{3}, []int32{int32(i), 1, 2}, nil); err != nil {
			t.Fatal(err)
		}
		w.Finish()
	}
	index := filepath.Join(dir, "m.zt.index.json")
	os.WriteFile(index, []byte(`{"metadata": null, "weight_map": {"a": "m-a.zt", "b": "m-b.zt"}}`), 0o644)
	s, err := ztensor.OpenSet(index, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n, _ := s.Len(); n != 2 {
		t.Errorf("%d objects", n)
	}
	o, err := s.ObjectByName("b")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := ztensor.Read[int32](o, 0); err != nil || !reflect.DeepEqual(v, []int32{1, 1, 2}) {
		t.Errorf("%v %v", v, err)
	}
}

// Writing zTensor v2 (docs/v2.md, Writing): Format 2 gives a canonical file,
// the same bytes whatever order the tensors come in; NonCanonical takes
// zstd (zt.zstd-seekable/1) and sha256.
func TestWriteV2(t *testing.T) {
	write := func(order []string, opts *ztensor.WriterOptions) []byte {
		w, err := ztensor.CreateMemory(opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range order {
			data := make([]float32, 6)
			for i := range data {
				data[i] = float32(i + len(name))
			}
			if err := ztensor.AddDense(w, name, []uint64{2, 3}, data, nil); err != nil {
				t.Fatal(err)
			}
		}
		b, err := w.FinishMemory()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	opts := &ztensor.WriterOptions{Format: 2}
	a := write([]string{"a", "bb", "ccc"}, opts)
	b := write([]string{"ccc", "a", "bb"}, opts)
	if string(a[:8]) != "\x89ZT2\r\n\x1a\n" || string(a) != string(b) {
		t.Fatalf("not a canonical v2 file independent of order")
	}
	nc := write([]string{"x"}, &ztensor.WriterOptions{Format: 2, NonCanonical: true, Encoding: ztensor.Zstd,
		Digest: ztensor.DigestSHA256, Alignment: 4096})
	if !strings.Contains(string(nc), "zt.zstd-seekable/1") || !strings.Contains(string(nc), "sha256:") {
		t.Fatalf("non-canonical options not applied")
	}
	if _, err := ztensor.CreateMemory(&ztensor.WriterOptions{Format: 2, Encoding: ztensor.Zstd}); err == nil {
		t.Fatalf("canonical v2 took zstd")
	}
	if d := write([]string{"x"}, nil); string(d[:4]) != "ZTEN" {
		t.Fatalf("the default is no longer 1.2")
	}
}

// The content digest of a v2 model (spec §6.4): the same tensors give the
// same digest at 64 KiB or 4 KiB placement, in any order, raw or
// zstd-seekable; other tensors another; no part digest, no content digest.
func TestContentDigestV2(t *testing.T) {
	write := func(order []string, opts *ztensor.WriterOptions) []byte {
		w, err := ztensor.CreateMemory(opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range order {
			if err := ztensor.AddDense(w, name, []uint64{3}, []float32{1, 2, float32(len(name))}, nil); err != nil {
				t.Fatal(err)
			}
		}
		b, err := w.FinishMemory()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	digest := func(b []byte, alg ztensor.DigestAlg) (string, error) {
		f, err := ztensor.OpenMemory(b, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		return f.ContentDigest(alg)
	}
	canonical := write([]string{"a", "bb"}, &ztensor.WriterOptions{Format: 2})
	floor := write([]string{"bb", "a"}, &ztensor.WriterOptions{Format: 2, NonCanonical: true, Alignment: 4096})
	zstd := write([]string{"a", "bb"}, &ztensor.WriterOptions{Format: 2, NonCanonical: true, Encoding: ztensor.Zstd})
	if string(canonical) == string(floor) || string(canonical) == string(zstd) {
		t.Fatalf("the files should differ")
	}
	for _, alg := range []ztensor.DigestAlg{ztensor.DigestSHA256, ztensor.DigestXXH3} {
		d, err := digest(canonical, alg)
		if err != nil {
			t.Fatal(err)
		}
		for _, other := range [][]byte{floor, zstd} {
			if o, err := digest(other, alg); err != nil || o != d {
				t.Fatalf("content digest %q vs %q (%v)", d, o, err)
			}
		}
	}
	d, _ := digest(canonical, ztensor.DigestSHA256)
	if !strings.HasPrefix(d, "sha256:") || len(d) != 7+64 {
		t.Fatalf("digest %q", d)
	}
	if o, _ := digest(write([]string{"a", "cc"}, &ztensor.WriterOptions{Format: 2}), ztensor.DigestSHA256); o == d {
		t.Fatalf("different tensors, same content digest")
	}
	none := write([]string{"w"}, &ztensor.WriterOptions{Format: 2, NonCanonical: true, Digest: ztensor.DigestNone})
	_, err := digest(none, ztensor.DigestSHA256)
	if !errors.Is(err, ztensor.ErrUnsupported) || !strings.Contains(err.Error(), "'w' part 'data' carries no digest") {
		t.Fatalf("want ErrUnsupported naming the part, got %v", err)
	}
}

// Canonical form (spec §6.3): the canonical writer's file is canonical; 4 KiB
// placement misses rule 2, zstd rule 4; a 1.x file has no
// canonical form (ErrWrongFormat).
func TestCanonicalFormV2(t *testing.T) {
	form := func(order []string, opts *ztensor.WriterOptions) (ztensor.CanonicalForm, error) {
		w, err := ztensor.CreateMemory(opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range order {
			if err := ztensor.AddDense(w, name, []uint64{2}, []float32{1, 2}, nil); err != nil {
				t.Fatal(err)
			}
		}
		b, err := w.FinishMemory()
		if err != nil {
			t.Fatal(err)
		}
		f, err := ztensor.OpenMemory(b, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		return f.Canonical()
	}
	c, err := form([]string{"bb", "a"}, &ztensor.WriterOptions{Format: 2})
	if err != nil || !c.IsCanonical() || c.Rule != 0 || len(c.Misses) != 0 {
		t.Fatalf("canonical writer: %+v %v", c, err)
	}
	c, err = form([]string{"a", "bb"}, &ztensor.WriterOptions{Format: 2, NonCanonical: true, Alignment: 4096})
	if err != nil || c.IsCanonical() || c.Rule != 2 || len(c.Misses) == 0 {
		t.Fatalf("4 KiB placement: %+v %v", c, err)
	}
	for _, m := range c.Misses {
		if !strings.HasPrefix(m, "rule 2: ") {
			t.Fatalf("miss %q", m)
		}
	}
	if !strings.Contains(c.Misses[0], "'a'") {
		t.Fatalf("first miss %q does not name 'a'", c.Misses[0])
	}
	c, err = form([]string{"a"}, &ztensor.WriterOptions{Format: 2, NonCanonical: true, Encoding: ztensor.Zstd})
	if err != nil || c.Rule != 4 {
		t.Fatalf("zstd: %+v %v", c, err)
	}
	_, err = form([]string{"a"}, nil)
	if !errors.Is(err, ztensor.ErrWrongFormat) || !strings.Contains(err.Error(), "v2 files only") {
		t.Fatalf("a 1.x file: want ErrWrongFormat, got %v", err)
	}
}
