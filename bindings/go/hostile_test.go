package ztensor_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"ztensor"
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
