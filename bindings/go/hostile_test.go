package ztensor_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	ztensor "github.com/libztensor/libztensor/bindings/go"
)

// hostileReader serves data, but behaves as told from the read that starts
// at or after `from` on.
type hostileReader struct {
	data []byte
	from int64
	how  string // "panic", "panic-error", "too-many", "negative"
}

func (r *hostileReader) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > r.from {
		switch r.how {
		case "panic":
			panic("the storage client blew up")
		case "panic-error":
			panic(errors.New("a panic with an error value"))
		case "too-many":
			return len(p) + 4096, nil
		case "negative":
			return -7, nil
		}
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

func smallFile(t *testing.T) []byte {
	w, err := ztensor.CreateMemory(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ztensor.AddDense(w, "x", []uint64{1024}, make([]float32, 1024), nil); err != nil {
		t.Fatal(err)
	}
	data, err := w.FinishMemory()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A ReaderAt that panics (or lies about its count) at open: Open returns an
// error; the panic never unwinds through the library's C++ frames (which
// aborted the process).
func TestReaderAtMisbehavingAtOpenIsAnError(t *testing.T) {
	data := smallFile(t)
	for _, how := range []string{"panic", "panic-error", "too-many", "negative"} {
		r := &hostileReader{data: data, from: 0, how: how}
		f, err := ztensor.OpenReaderAt(r, int64(len(data)), "hostile.zt", nil)
		if err == nil {
			f.Close()
			t.Errorf("%s: OpenReaderAt succeeded", how)
			continue
		}
		if !errors.Is(err, ztensor.ErrIO) {
			t.Errorf("%s: %v, want an I/O error", how, err)
		}
		if strings.HasPrefix(how, "panic") && !strings.Contains(err.Error(), "panicked") {
			t.Errorf("%s: the error does not say the reader panicked: %v", how, err)
		}
	}
}

// The same, on a data read after a good open.
func TestReaderAtPanickingOnReadIsAnError(t *testing.T) {
	data := smallFile(t)
	r := &hostileReader{data: data, from: int64(len(data)), how: "panic"}
	f, err := ztensor.OpenReaderAt(r, int64(len(data)), "hostile.zt", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	o, err := f.ObjectByName("x")
	if err != nil {
		t.Fatal(err)
	}
	r.from = 0 // every later read panics
	if _, err := ztensor.Read[float32](o, 0); !errors.Is(err, ztensor.ErrIO) || !strings.Contains(err.Error(), "panicked") {
		t.Errorf("read through a panicking ReaderAt: %v", err)
	}
	// The file stays usable once the reader behaves.
	r.from = 1 << 62
	if got, err := ztensor.Read[float32](o, 0); err != nil || len(got) != 1024 {
		t.Errorf("read after the panics: %d elements, %v", len(got), err)
	}
}

// nulFile is a hand-built 1.2 file (the writer takes roles and formats as C
// strings, so it cannot make it): objects "a" (1.0) and "a\x00b" (2.0, its
// digest wrong), "mine" with roles "r" (3.0) and "r\x00s" (4.0), and "d" of
// format "dense\x00x". Its manifest is CBOR written by hand.
func nulFile() []byte {
	var body []byte
	body = append(body, "ZTEN1000"...)
	var offs []int
	for _, v := range []uint32{0x3f800000, 0x40000000, 0x40400000, 0x40800000, 0x40a00000} { // 1.0 .. 5.0
		for len(body)%64 != 0 {
			body = append(body, 0)
		}
		offs = append(offs, len(body))
		body = append(body, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
	}
	var m []byte
	text := func(s string) { m = append(m, 0x78, byte(len(s))); m = append(m, s...) } // text, 1-byte length
	uint16v := func(v int) { m = append(m, 0x19, byte(v>>8), byte(v)) }
	comp := func(role string, i int, digest bool) {
		text(role)
		if digest {
			m = append(m, 0xa4)
		} else {
			m = append(m, 0xa3)
		}
		text("dtype")
		text("f32")
		text("offset")
		uint16v(offs[i])
		text("length")
		m = append(m, 0x04)
		if digest {
			text("digest")
			text("sha256:" + strings.Repeat("0", 64))
		}
	}
	object := func(name, format string, comps func()) {
		text(name)
		m = append(m, 0xa3)
		text("shape")
		m = append(m, 0x81, 0x01)
		text("format")
		text(format)
		text("components")
		comps()
	}
	m = append(m, 0xa2)
	text("version")
	text("1.2.0")
	text("objects")
	m = append(m, 0xa4)
	object("a", "dense", func() { m = append(m, 0xa1); comp("data", 0, false) })
	object("a\x00b", "dense", func() { m = append(m, 0xa1); comp("data", 1, true) })
	object("mine", "mine", func() { m = append(m, 0xa2); comp("r", 2, false); comp("r\x00s", 3, false) })
	object("d", "dense\x00x", func() { m = append(m, 0xa1); comp("data", 4, false) })
	body = append(body, m...)
	n := uint64(len(m))
	for i := 0; i < 8; i++ {
		body = append(body, byte(n>>(8*i)))
	}
	return append(body, "ZTEN1000"...)
}

// Names, roles and formats come whole (with their lengths): "a\x00b" is not
// "a", "r\x00s" not "r", "dense\x00x" not "dense".
func TestNamesWithNUL(t *testing.T) {
	f, err := ztensor.OpenMemory(nulFile(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	anb, err := f.ObjectByName("a\x00b")
	if err != nil {
		t.Fatal(err)
	}
	if name, _ := anb.Name(); name != "a\x00b" {
		t.Errorf("name %q", name)
	}
	if v, err := ztensor.Read[float32](anb, 0); err != nil || v[0] != 2 {
		t.Errorf("a\\x00b reads %v, %v", v, err)
	}
	d, _ := f.ObjectByName("d")
	if info, _ := d.Info(); info.Format != "dense\x00x" {
		t.Errorf("format %q", info.Format)
	}
	mine, _ := f.ObjectByName("mine")
	if c, err := mine.Component(1); err != nil || c.Role != "r\x00s" {
		t.Errorf("role %q, %v", c.Role, err)
	}
	if i, err := mine.ComponentIndex("r\x00s"); err != nil || i != 1 {
		t.Errorf("ComponentIndex(r\\x00s) = %d, %v", i, err)
	}
	if i, err := mine.ComponentIndex("r"); err != nil || i != 0 {
		t.Errorf("ComponentIndex(r) = %d, %v", i, err)
	}
	failures, err := f.VerifyAll(false)
	if !errors.Is(err, ztensor.ErrDigestMismatch) || len(failures) != 1 || failures[0].Object != "a\x00b" ||
		failures[0].Role != "data" {
		t.Errorf("VerifyAll: %+v, %v", failures, err)
	}
}

// The writer takes roles and formats as C strings: one holding a NUL is
// refused, not cut ("r\x00s" was written as "r").
func TestWriterRefusesRolesItWouldCut(t *testing.T) {
	w, err := ztensor.CreateMemory(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Discard()
	if err := w.BeginObject("p", "mi\x00ne", []uint64{1}); !errors.Is(err, ztensor.ErrInvalidArg) {
		t.Errorf("format with a NUL: %v", err)
	}
	if err := w.BeginObject("o", "mine", []uint64{1}); err != nil {
		t.Fatal(err)
	}
	if err := ztensor.WriteBlob(w, "o", "r\x00s", []float32{1}, nil); !errors.Is(err, ztensor.ErrInvalidArg) {
		t.Errorf("role with a NUL: %v", err)
	}
	if _, err := w.BeginBlob("o", "r\x00s", ztensor.F32, nil); !errors.Is(err, ztensor.ErrInvalidArg) {
		t.Errorf("streamed role with a NUL: %v", err)
	}
	lt := &ztensor.BlobOptions{LogicalType: "complex64\x00x"}
	if err := ztensor.AddDense(w, "c", []uint64{1}, []float32{1, 2}, lt); !errors.Is(err, ztensor.ErrInvalidArg) {
		t.Errorf("logical type with a NUL: %v", err)
	}
}
