package ztensor_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	ztensor "github.com/libztensor/libztensor/bindings/go"
)

// The README's program: open an interop vector, read a tensor, verify the file.
func Example() {
	f, err := ztensor.Open(filepath.Join(interopDir(), "v1", "dense_f32.zt"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	o, err := f.ObjectByName("tensor_4x5x6")
	if err != nil {
		fmt.Println(err)
		return
	}
	info, _ := o.Info()
	values, err := ztensor.Read[float32](o, 0) // a copy, decoded whatever the encoding
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(info.Name, info.Shape, len(values))
	if err := f.Verify(false); err != nil { // every digest and zstd frame
		fmt.Println("damaged:", err)
		return
	}
	fmt.Println("verified")
	// Output:
	// tensor_4x5x6 [4 5 6] 120
	// verified
}

// Errors match the library's statuses with errors.Is.
func ExampleStatus() {
	_, err := ztensor.Open(filepath.Join(os.TempDir(), "no-such-file.zt"))
	fmt.Println(errors.Is(err, ztensor.ErrIO), errors.Is(err, ztensor.ErrDigestMismatch))
	// Output: true false
}

// Writing a file in memory and reading it back.
func ExampleWriter() {
	w, _ := ztensor.CreateMemory(nil)
	_ = ztensor.AddDense(w, "weights", []uint64{2, 2}, []float32{1, 2, 3, 4},
		&ztensor.BlobOptions{Encoding: ztensor.Zstd, Digest: ztensor.DigestCRC32C})
	data, _ := w.FinishMemory()
	f, _ := ztensor.OpenMemory(data, nil)
	defer f.Close()
	o, _ := f.ObjectByName("weights")
	row, _ := ztensor.ReadSlice[float32](o, 0, []uint64{1, 0}, []uint64{2, 2})
	fmt.Println(row)
	// Output: [3 4]
}
