#!/usr/bin/python3
"""Conformance test: everything libztensor's writers produce must be a valid
spec 1.2.0 file for an independent reader.

    run_conformance.py [EMULATOR] WRITE_ALL

1. The checker must reject each file of the reference implementation's
   negative corpus ($ZT_INTEROP_DIR/v1/negative), and accept its positive
   files (custom_format.zt aside: its 'qg_data_scales' object uses the
   original's own variant, a "data" component instead of "packed_weight").
2. WRITE_ALL (tests/conformance/write_all.cc, the public C API) writes its
   files into a temporary directory.
3. The zt tool ($ZT_TOOL) migrates the legacy and 1.2 interop files, converts
   .npy / .npz / .safetensors files written here, and runs compress,
   decompress, merge, append and remove. A zt built without libzip (the
   cross builds, docs/cross.md) converts the .npz members' .npy files
   instead, into the same objects.
4. check_written.py checks every output; once more with zstd decoded by the
   zstd command-line tool instead of python3-zstandard, on a sample.
"""
import glob
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "cli"))
import ztcli  # noqa: E402  (fixture builders: GGUF from its public description)
CHECK = os.path.join(HERE, "check_written.py")
ZT = os.environ.get("ZT_TOOL", "zt")
INTEROP = os.environ.get("ZT_INTEROP_DIR", "")
PY = sys.executable


def run(cmd, **kw):
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    if p.returncode != 0:
        sys.exit("FAILED (%d): %s\n%s%s" % (p.returncode, " ".join(map(str, cmd)), p.stdout, p.stderr))
    return p


def check(paths, env=None):
    p = subprocess.run([PY, CHECK, "--quiet", *paths], capture_output=True, text=True, env=env)
    sys.stdout.write(p.stdout)
    sys.stderr.write(p.stderr)
    return p.returncode


def self_test():
    neg = sorted(glob.glob(os.path.join(INTEROP, "v1", "negative", "*.zt")))
    pos = [f for f in sorted(glob.glob(os.path.join(INTEROP, "v1", "*.zt")))
           if os.path.basename(f) != "custom_format.zt"]
    if not neg or not pos:
        sys.exit("self-test: no interop files under %r (ZT_INTEROP_DIR; they ship in tests/data/interop)" % INTEROP)
    for f in neg:
        p = subprocess.run([PY, CHECK, "--quiet", f], capture_output=True, text=True)
        if p.returncode != 1:
            sys.exit("self-test: the checker accepts the negative vector %s\n%s%s" % (f, p.stdout, p.stderr))
    if check(pos) != 0:
        sys.exit("self-test: the checker rejects files of the reference implementation")
    print("self-test: %d negative vectors rejected, %d reference files accepted" % (len(neg), len(pos)))


def safetensors(path, tensors, metadata=None):
    """https://github.com/huggingface/safetensors#format"""
    header, blobs, off = {}, [], 0
    if metadata:
        header["__metadata__"] = metadata
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


# The arrays of each .npz foreign_inputs writes (each also has its .npy).
NPZ_MEMBERS = {"deflated": ("i64", "u16_be", "empty"), "stored": ("f32", "b", "c64", "scalar")}


def foreign_inputs(d):
    rng = np.random.default_rng(7)
    arrays = {
        "f32": rng.standard_normal((3, 5)).astype("<f4"),
        "f64_be": rng.standard_normal((4,)).astype(">f8"),
        "f16": rng.standard_normal((2, 2, 2)).astype("<f2"),
        "i8": rng.integers(-100, 100, (7,)).astype("i1"),
        "u16_be": rng.integers(0, 60000, (3, 3)).astype(">u2"),
        "i64": rng.integers(-2**40, 2**40, (5,)).astype("<i8"),
        "u32": rng.integers(0, 2**31, (2, 3)).astype("<u4"),
        "b": rng.integers(0, 2, (9,)).astype("?"),
        "c64": (rng.standard_normal((3,)) + 1j * rng.standard_normal((3,))).astype("<c8"),
        "c128_be": (rng.standard_normal((2, 2)) + 1j).astype(">c16"),
        "fortran": np.asfortranarray(rng.standard_normal((4, 3)).astype("<f4")),
        "scalar": np.array(3.5, dtype="<f8"),
        "empty": np.zeros((0, 4), dtype="<i4"),
    }
    npys = []
    for name, a in arrays.items():
        p = os.path.join(d, name + ".npy")
        np.save(p, a)
        npys.append(p)
    np.savez(os.path.join(d, "stored.npz"), **{k: arrays[k] for k in NPZ_MEMBERS["stored"]})
    np.savez_compressed(os.path.join(d, "deflated.npz"), **{k: arrays[k] for k in NPZ_MEMBERS["deflated"]})
    safetensors(os.path.join(d, "model.safetensors"), {
        "w": ("F32", [2, 3], rng.standard_normal(6).astype("<f4").tobytes()),
        "h": ("BF16", [4], bytes(range(8))),
        "f8": ("F8_E4M3", [5], bytes([0x38, 0x40, 0x00, 0x80, 0x7e])),
        "f8b": ("F8_E5M2", [1, 2], bytes([0x3c, 0xbc])),
        "c": ("C64", [2], rng.standard_normal(4).astype("<f4").tobytes()),
        "mask": ("BOOL", [3], bytes([1, 0, 1])),
        "e8m0": ("F8_E8M0", [2], bytes([127, 128])),
        "none": ("I32", [0], b""),
    }, metadata={"format": "pt", "note": "conformance"})
    g = ztcli
    kvs = [("general.architecture", g.GGUF_STRING, "llama"), ("general.alignment", g.GGUF_U32, 32),
           ("x.scale", g.GGUF_F32, 0.5), ("x.tokens", g.GGUF_ARRAY, (g.GGUF_STRING, ["a", "b"])),
           ("x.ids", g.GGUF_ARRAY, (g.GGUF_I32, [1, -2, 3]))]
    tensors = []
    for name, ne, tid in [("f32", [5, 3], 0), ("f16", [4], 1), ("bf16", [2, 2], 30), ("i8", [7], 24),
                          ("q4_0", [64, 2], 2), ("q8_0", [32], 8), ("q4_k", [256, 3], 12), ("q6_k", [512], 14)]:
        tensors.append((name, ne, tid, bytes(rng.integers(0, 256, g.ggml_nbytes(tid, ne), dtype=np.uint8))))
    with open(os.path.join(d, "model.gguf"), "wb") as f:
        f.write(g.gguf_bytes(kvs, tensors))
    return npys


def v11_sparse(path):
    """A spec 1.1.0 file whose sparse index components are i32 / i16 (1.1
    allowed any integer dtype; 1.2 requires u64): migrate, merge, compress
    must widen them."""
    import cbor2
    vals = struct.pack("<2f", 1, 2)
    body, objs = bytearray(b"ZTEN1000"), {}
    for name, fmt, parts in [
            ("c", "sparse_csr", [("values", "f32", vals), ("indices", "i32", struct.pack("<2i", 0, 1)),
                                 ("indptr", "i32", struct.pack("<3i", 0, 1, 2))]),
            ("o", "sparse_coo", [("values", "f32", vals), ("coords", "i16", struct.pack("<4h", 0, 1, 1, 0))])]:
        comps = {}
        for role, dt, b in parts:
            body += b"\0" * (-len(body) % 64)
            comps[role] = {"dtype": dt, "offset": len(body), "length": len(b)}
            body += b
        objs[name] = {"shape": [2, 2], "format": fmt, "components": comps}
    m = cbor2.dumps({"version": "1.1.0", "objects": objs})
    with open(path, "wb") as f:
        f.write(bytes(body) + m + struct.pack("<Q", len(m)) + b"ZTEN1000")


def zt_outputs(tmp):
    """Runs the zt tool's writing commands; returns the .zt files written."""
    out = os.path.join(tmp, "zt")
    src = os.path.join(tmp, "src")
    os.makedirs(out)
    os.makedirs(src)
    written = []

    def at(name):
        return os.path.join(out, name + ".zt")

    def o(name):
        written.append(at(name))
        return at(name)

    v11 = os.path.join(src, "v11_sparse.zt")
    v11_sparse(v11)
    run([ZT, "migrate", v11, "-o", o("migrate_v11_sparse"), "--no-sync"])
    run([ZT, "compress", v11, "-o", o("compress_v11_sparse"), "--quiet", "--no-sync"])
    run([ZT, "merge", v11, os.path.join(INTEROP, "v1", "dense_f32.zt"), "-o", o("merge_v11_sparse"), "--quiet",
         "--no-sync"])
    legacy = sorted(glob.glob(os.path.join(INTEROP, "v0", "*.zt")))
    v1 = [f for f in sorted(glob.glob(os.path.join(INTEROP, "v1", "*.zt")))
          if os.path.basename(f) != "custom_format.zt"]
    variants = [[], ["--zstd", "3", "--digest", "sha256"], ["--raw", "--digest", "crc32c"], ["--digest", "none"]]
    for f in legacy + v1:
        stem = os.path.basename(os.path.dirname(f)) + "_" + os.path.basename(f)[:-3]
        for i, extra in enumerate(variants):
            run([ZT, "migrate", f, "-o", o("migrate_%s_%d" % (stem, i)), "--no-sync", *extra])

    npys = foreign_inputs(src)
    st = os.path.join(src, "model.safetensors")
    for i, extra in enumerate([[], ["--zstd", "5"], ["--digest", "crc32c"], ["--zstd", "1", "--digest", "sha256"]]):
        for p in npys:
            name = os.path.basename(p)[:-4]
            run([ZT, "convert", p, "-o", o("convert_npy_%s_%d" % (name, i)), "--quiet", "--no-sync", *extra])
        for name, members in sorted(NPZ_MEMBERS.items()):
            inputs = [os.path.join(src, name + ".npz")]
            if not ztcli.HAVE_NPZ:
                inputs = [os.path.join(src, m + ".npy") for m in members]
            run([ZT, "convert", *inputs, "-o", o("convert_npz_%s_%d" % (name, i)), "--quiet", "--no-sync", *extra])
        run([ZT, "convert", st, "-o", o("convert_safetensors_%d" % i), "--quiet", "--no-sync", *extra])
        run([ZT, "convert", os.path.join(src, "model.gguf"), "-o", o("convert_gguf_%d" % i), "--quiet", "--no-sync",
             *extra])
        run([ZT, "convert", *npys[:4], st, "-o", o("convert_many_%d" % i), "--quiet", "--no-sync", *extra])

    base = at("convert_safetensors_0")
    for i, extra in enumerate([[], ["--zstd", "9", "--digest", "sha256"]]):
        run([ZT, "compress", base, "-o", o("compress_%d" % i), "--quiet", "--no-sync", *extra])
    run([ZT, "decompress", at("compress_1"), "-o", o("decompress"), "--quiet", "--no-sync",
         "--digest", "crc32c"])
    run([ZT, "merge", base, at("convert_npz_deflated_1"), "-o", o("merge"), "--quiet", "--no-sync"])
    edited = o("edited")
    shutil.copy(at("convert_npz_stored_2"), edited)
    run([ZT, "append", edited, "--from", at("convert_npz_deflated_3"), "--quiet", "--no-sync"])
    run([ZT, "remove", edited, "b", "--quiet", "--no-sync"])
    return written


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: run_conformance.py [EMULATOR] WRITE_ALL")
    self_test()
    tmp = tempfile.mkdtemp(prefix="zt-conformance-")
    try:
        lib = os.path.join(tmp, "lib")
        os.makedirs(lib)
        print(run([*sys.argv[1:], lib]).stdout.strip())
        tool = zt_outputs(tmp)
        print("zt: %d files" % len(set(tool)))
        rc = check([lib, os.path.join(tmp, "zt")])
        # The zstd CLI path of the checker, on the files with zstd blobs.
        sample = sorted(glob.glob(os.path.join(lib, "*zstd*.zt")))[:12]
        env = dict(os.environ, ZT_CHECK_ZSTD_CLI="1")
        if shutil.which("zstd") and sample:
            rc |= check(sample, env=env)
        if rc:
            if os.environ.get("ZT_KEEP_CONFORMANCE"):
                print("outputs kept in %s" % tmp)
                tmp = None
            sys.exit("conformance: some written files violate spec 1.2.0 (see above)")
        print("conformance: all written files conform to spec 1.2.0")
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
