package ztensor_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ztensor "github.com/libztensor/libztensor/bindings/go"
)

// interopDir is tests/data/interop of this repository, or $ZT_INTEROP_DIR.
func interopDir() string {
	if d := os.Getenv("ZT_INTEROP_DIR"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "tests", "data", "interop")
}

type expected struct {
	Files map[string]struct {
		Version string `json:"version"`
		Objects []struct {
			Name       string   `json:"name"`
			Shape      []uint64 `json:"shape"`
			Format     string   `json:"format"`
			Components []struct {
				Role     string `json:"role"`
				Encoding string `json:"encoding"`
				SHA256   string `json:"sha256"`
			} `json:"components"`
		} `json:"objects"`
	} `json:"files"`
}

func checkFolder(t *testing.T, sub string, opts *ztensor.OpenOptions, viaReaderAt bool) int {
	dir := filepath.Join(interopDir(), sub)
	text, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatalf("%v (the vectors ship in tests/data/interop)", err)
	}
	var exp expected
	if err := json.Unmarshal(text, &exp); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for name, want := range exp.Files {
		path := filepath.Join(dir, name)
		var f *ztensor.File
		if viaReaderAt {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			f, err = ztensor.OpenReaderAt(bytes.NewReader(data), int64(len(data)), name, opts)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		} else if f, err = ztensor.OpenWith(path, opts); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if v, _ := f.Version(); v != want.Version {
			t.Errorf("%s: version %q, want %q", name, v, want.Version)
		}
		if n, _ := f.Len(); n != len(want.Objects) {
			t.Errorf("%s: %d objects, want %d", name, n, len(want.Objects))
		}
		for _, wo := range want.Objects {
			o, err := f.ObjectByName(wo.Name)
			if err != nil {
				t.Fatalf("%s %q: %v", name, wo.Name, err)
			}
			info, _ := o.Info()
			if info.Format != wo.Format || len(info.Shape) != len(wo.Shape) {
				t.Errorf("%s %q: format %q shape %v, want %q %v", name, wo.Name, info.Format, info.Shape, wo.Format,
					wo.Shape)
			}
			for i, wc := range wo.Components {
				got, err := o.ReadBytes(i)
				if err != nil {
					t.Fatalf("%s %q %s: %v", name, wo.Name, wc.Role, err)
				}
				sum := sha256.Sum256(got)
				if hex.EncodeToString(sum[:]) != wc.SHA256 {
					t.Errorf("%s %q %s: sha256 differs from expected.json", name, wo.Name, wc.Role)
				}
				c, _ := o.Component(i)
				view, err := ztensor.View[uint8](o, i)
				zeroCopy := !viaReaderAt && (opts == nil || opts.Access == ztensor.AccessMmap) &&
					wc.Encoding == "raw" && !c.BigEndian && (c.Dtype == ztensor.U8 || c.Dtype == ztensor.Bool)
				switch {
				case zeroCopy && (err != nil || !bytes.Equal(view, got)):
					t.Errorf("%s %q: view %v", name, wo.Name, err)
				case !zeroCopy && err == nil && c.Dtype == ztensor.U8:
					t.Errorf("%s %q: a view where none is possible", name, wo.Name)
				}
				checked++
			}
		}
		if err := f.Verify(false); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		f.Close()
	}
	return checked
}

func TestInteropVectors(t *testing.T) {
	for _, sub := range []string{"v1", "v0"} {
		if n := checkFolder(t, sub, nil, false); n < 5 {
			t.Errorf("%s: only %d components checked", sub, n)
		}
		checkFolder(t, sub, &ztensor.OpenOptions{Access: ztensor.AccessPread}, false)
	}
}

// Through io.ReaderAt (zt_open_io): the same digests.
func TestInteropVectorsThroughReaderAt(t *testing.T) {
	if n := checkFolder(t, "v1", nil, true); n < 50 {
		t.Errorf("only %d components checked", n)
	}
}

// Damaged vectors carry the statuses of tests/capi/interop_test.cc.
func TestNegativeVectors(t *testing.T) {
	dir := filepath.Join(interopDir(), "v1", "negative")
	for file, want := range map[string]ztensor.Status{
		"bad_header_magic.zt": ztensor.ErrFormat, "bad_footer_magic.zt": ztensor.ErrFooter,
		"truncated.zt": ztensor.ErrFooter, "manifest_not_a_map.zt": ztensor.ErrManifest,
		"missing_version.zt": ztensor.ErrVersion,
	} {
		_, err := ztensor.Open(filepath.Join(dir, file))
		var zerr *ztensor.Error
		if !errors.Is(err, want) || !errors.As(err, &zerr) || zerr.Message == "" {
			t.Errorf("%s: %v, want %v with a message", file, err, want)
		}
	}
	for file, want := range map[string]ztensor.Status{
		"bad_crc32c.zt": ztensor.ErrDigestMismatch, "bad_sha256_zstd.zt": ztensor.ErrDigestMismatch,
		"misaligned_offset.zt": ztensor.ErrAlignment, "unknown_dtype.zt": ztensor.ErrDtype,
	} {
		f, err := ztensor.Open(filepath.Join(dir, file))
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		failures, err := f.VerifyAll(false)
		if !errors.Is(err, want) || len(failures) != 1 || !errors.Is(failures[0].Err, want) {
			t.Errorf("%s: %v %+v, want one %v", file, err, failures, want)
		}
		f.Close()
	}
}

// Format v2 (the original's conformance corpus, tests/data/v2-conformance)
// reads through the same Open.
func TestFormatV2ReadsUnchanged(t *testing.T) {
	path := filepath.Join(interopDir(), "..", "v2-conformance", "valid", "canonical-basic.zt")
	f, err := ztensor.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if v, _ := f.Version(); v != "2" {
		t.Errorf("version %q, want 2", v)
	}
	if n, _ := f.Len(); n != 3 {
		t.Errorf("%d objects, want 3", n)
	}
	o, err := f.ObjectByName("a.bias")
	if err != nil {
		t.Fatal(err)
	}
	b, err := o.ReadBytes(0)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, bytes.Repeat([]byte{1}, 16)) {
		t.Errorf("a.bias reads %v", b)
	}
	_, err = ztensor.Open(filepath.Join(interopDir(), "..", "v2-conformance", "reject", "manifest-hash-mismatch.zt"))
	if err == nil || !strings.Contains(err.Error(), "rejected (ManifestHash)") {
		t.Errorf("a damaged v2 manifest: %v", err)
	}
}
