// Command interop_digests uses the ztensor package (it was the single-file
// example examples/go/main.go; the meson test go_example runs it).
//
// usage: interop_digests SCRATCH.zt [FILE.zt ...]
//  1. writes SCRATCH.zt (a raw f32 tensor and a zstd i32 tensor), opens it,
//     lists its objects and checks every component's bytes, decoded and
//     zero-copy, against what was written;
//  2. checks that a failure returns a status and a detail message;
//  3. prints "file<TAB>object<TAB>role<TAB>sha256-of-decoded-bytes" for every
//     component of each FILE (the test compares them with expected.json).
package main

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	ztensor "github.com/libztensor/libztensor/bindings/go"
)

func roundTrip(path string) error {
	f32s := make([]float32, 6)
	for i := range f32s {
		f32s[i] = float32(i)*0.5 - 1
	}
	i32s := make([]int32, 1000)
	for i := range i32s {
		i32s[i] = int32((i*7919)%1009 - 500)
	}
	w, err := ztensor.Create(path, nil)
	if err != nil {
		return err
	}
	if err := ztensor.AddDense(w, "weights", []uint64{2, 3}, f32s, nil); err != nil {
		return err
	}
	if err := ztensor.AddDense(w, "ids", []uint64{uint64(len(i32s))}, i32s,
		&ztensor.BlobOptions{Encoding: ztensor.Zstd}); err != nil {
		return err
	}
	if err := w.Finish(); err != nil {
		return err
	}
	f, err := ztensor.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	objs, err := f.Objects()
	if err != nil {
		return err
	}
	var seen []string
	for _, o := range objs {
		in, err := o.Info()
		if err != nil {
			return err
		}
		c, err := o.Component(0)
		if err != nil {
			return err
		}
		fmt.Printf("object %s format=%s shape=%v components=%d dtype=%s encoding=%s\n", in.Name, in.Format, in.Shape,
			in.ComponentCount, c.DtypeName, c.EncodingName)
		switch in.Name {
		case "weights":
			got, err := ztensor.Read[float32](o, 0)
			view, verr := ztensor.View[float32](o, 0)
			if err != nil || verr != nil || !reflect.DeepEqual(got, f32s) || !reflect.DeepEqual(view, f32s) ||
				fmt.Sprint(in.Shape) != "[2 3]" {
				return fmt.Errorf("weights: decoded bytes, zero-copy view or shape wrong (%v, %v)", err, verr)
			}
		case "ids":
			got, err := ztensor.Read[int32](o, 0)
			if err != nil || !reflect.DeepEqual(got, i32s) {
				return fmt.Errorf("ids: decoded bytes differ from what was written (%v)", err)
			}
		default:
			return fmt.Errorf("unexpected object %q", in.Name)
		}
		seen = append(seen, in.Name)
	}
	sort.Strings(seen)
	if strings.Join(seen, ",") != "ids,weights" {
		return fmt.Errorf("listed objects %v", seen)
	}
	// A failure: the status, and the message fetched in the same cgo call.
	_, err = ztensor.Open(path + ".missing")
	var zerr *ztensor.Error
	if !errors.Is(err, ztensor.ErrIO) || !errors.As(err, &zerr) || !strings.Contains(zerr.Message, ".missing") {
		return fmt.Errorf("opening a missing file gave %v", err)
	}
	fmt.Printf("round trip OK (libztensor %s)\n", ztensor.Version())
	return nil
}

func printDigests(path string) error {
	f, err := ztensor.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	objs, err := f.Objects()
	if err != nil {
		return err
	}
	for _, o := range objs {
		name, _ := o.Name()
		comps, err := o.Components()
		if err != nil {
			return err
		}
		for i, c := range comps {
			data, err := o.ReadBytes(i)
			if err != nil {
				return err
			}
			fmt.Printf("%s\t%s\t%s\t%x\n", filepath.Base(path), name, c.Role, sha256.Sum256(data))
		}
	}
	return nil
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintf(os.Stderr, "usage: %s SCRATCH.zt [FILE.zt ...]\n", os.Args[0])
		os.Exit(2)
	}
	err := roundTrip(os.Args[1])
	for _, p := range os.Args[2:] {
		if err != nil {
			break
		}
		err = printDigests(p)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
