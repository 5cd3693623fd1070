package ztensor_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	ztensor "github.com/libztensor/libztensor/bindings/go"
)

// makeSharded writes root.zt naming data shards "a" and "b" (positional
// files root-a.zt, root-b.zt), each holding one u8 tensor of its name.
func makeSharded(t *testing.T, dir string) (root string, data map[string][]byte) {
	t.Helper()
	data = map[string][]byte{"a": bytes.Repeat([]byte{1}, 64), "b": bytes.Repeat([]byte{2}, 64)}
	var paths []string
	for _, n := range []string{"a", "b"} {
		p := filepath.Join(dir, "root-"+n+".zt")
		w, err := ztensor.Create(p, &ztensor.WriterOptions{Format: 2})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.AddDenseBytes("t."+n, ztensor.U8, []uint64{64}, data[n], nil); err != nil {
			t.Fatal(err)
		}
		if err := w.Finish(); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	root = filepath.Join(dir, "root.zt")
	if err := ztensor.MakeShardedV2(root, paths, []string{"a", "b"}, ztensor.DigestXXH3, false); err != nil {
		t.Fatal(err)
	}
	return root, data
}

func readNamed(f *ztensor.File, name string) ([]byte, error) {
	o, err := f.ObjectByName(name)
	if err != nil {
		return nil, err
	}
	return o.ReadBytes(0)
}

func TestOpenShardedWithAResolver(t *testing.T) {
	dir := t.TempDir()
	root, data := makeSharded(t, dir)
	store := filepath.Join(dir, "store")
	if err := os.Mkdir(store, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "root-a.zt"), filepath.Join(store, "first")); err != nil {
		t.Fatal(err)
	}
	var asked []string
	f, err := ztensor.OpenSharded(root, nil, nil, func(name string, size uint64, digest string) (string, error) {
		asked = append(asked, name)
		if name == "a" {
			return filepath.Join(store, "first"), nil
		}
		return "", nil // b: not found
	})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if len(asked) != 2 {
		t.Fatalf("resolver asked for %v", asked)
	}
	if got, err := readNamed(f, "t.a"); err != nil || !bytes.Equal(got, data["a"]) {
		t.Fatalf("t.a: %v %v", got, err)
	}
	if _, err := readNamed(f, "t.b"); !errors.Is(err, ztensor.ErrNotFound) {
		t.Fatalf("t.b: want ErrNotFound, got %v", err)
	}
	// A resolver's error fails the shard's parts (ErrIO; the C ABI carries
	// the status, not the message).
	g, err := ztensor.OpenSharded(root, nil, nil, func(string, uint64, string) (string, error) {
		return "", errors.New("catalogue down")
	})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, err := readNamed(g, "t.a"); !errors.Is(err, ztensor.ErrIO) || !bytes.Contains([]byte(err.Error()), []byte("resolver failed")) {
		t.Fatalf("want the resolver's failure, got %v", err)
	}
}

func TestOpenShardedByIdentity(t *testing.T) {
	dir := t.TempDir()
	root, data := makeSharded(t, dir)
	store := filepath.Join(dir, "store")
	if err := os.Mkdir(store, 0o755); err != nil {
		t.Fatal(err)
	}
	for n, to := range map[string]string{"a": "y.zt", "b": "x.zt"} { // renamed, and crosswise
		if err := os.Rename(filepath.Join(dir, "root-"+n+".zt"), filepath.Join(store, to)); err != nil {
			t.Fatal(err)
		}
	}
	scan, err := ztensor.NewIdentityScan(store)
	if err != nil {
		t.Fatal(err)
	}
	f, err := ztensor.OpenShardedByIdentity(root, nil, nil, scan)
	if err != nil {
		t.Fatal(err)
	}
	if err := scan.Close(); err != nil { // opened files do not need it
		t.Fatal(err)
	}
	defer f.Close()
	for _, n := range []string{"a", "b"} {
		if got, err := readNamed(f, "t."+n); err != nil || !bytes.Equal(got, data[n]) {
			t.Fatalf("t.%s: %v %v", n, got, err)
		}
	}
	if _, err := ztensor.OpenShardedByIdentity(root, nil, nil, scan); !errors.Is(err, ztensor.ErrInvalidArg) {
		t.Fatalf("closed scan: want ErrInvalidArg, got %v", err)
	}
}
