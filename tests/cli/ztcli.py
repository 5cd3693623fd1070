"""Helpers for the zt CLI tests: run the tool, build foreign-format fixtures
from each format's public description, read results back."""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

import numpy as np

ZT = os.environ.get("ZT_TOOL", "zt")


def _asan_instrumented(path):
    """Whether the zt under test links AddressSanitizer's runtime (.ci/sanitize.sh):
    its shadow memory adds ~100 MB of RSS, so peak-RSS bounds do not apply."""
    try:
        return "libasan" in subprocess.run(["ldd", shutil.which(path) or path], capture_output=True,
                                           text=True).stdout
    except OSError:
        return False


# An RSS bound for zt processes (MB), or None under ASan.
RSS_BOUNDS_APPLY = not _asan_instrumented(ZT)
# Cross builds are configured with -Dlibzip=disabled (docs/cross.md): their
# zt reads no .npz and says so; tests of .npz contents need libzip.
HAVE_NPZ = os.environ.get("ZT_HAVE_LIBZIP", "1") == "1"
NPZ_DISABLED = "-Dlibzip=disabled"
# The pointer width of the zt under test (32 on i686 and armhf).
HOST_BITS = int(os.environ.get("ZT_HOST_BITS", "64"))
# The byte order of the host zt runs on ("big" on s390x; tests/meson.build
# sets it from the cross file). zt cat and zt export hand elements over in
# that order and zt export labels them so ('>f4' there): the byte-order
# contract of docs/cross.md. Inputs (.npy, safetensors, GGUF) stay
# little-endian whatever the host.
HOST_ORDER = os.environ.get("ZT_HOST_ENDIAN", sys.byteorder)
assert HOST_ORDER in ("little", "big"), HOST_ORDER


def host_dtype(dtype):
    """`dtype` as zt cat and zt export hand it out: in the host's byte order
    (1-byte dtypes have none)."""
    dt = np.dtype(dtype)
    return dt if dt.byteorder == "|" else dt.newbyteorder("<" if HOST_ORDER == "little" else ">")


def host_bytes(a):
    """The bytes zt cat prints, and zt export stores, for the values of `a`:
    its elements in the host's byte order, C order."""
    a = np.asarray(a)
    return np.ascontiguousarray(a).astype(host_dtype(a.dtype)).tobytes()


# The emulator zt runs under in a cross build (qemu-user; empty natively).
EMULATOR = os.environ.get("ZT_EXE_WRAPPER", "")


needs_npz = unittest.skipUnless(HAVE_NPZ, "zt built with -Dlibzip=disabled (cross builds): no .npz")


def run(*args, check=True, **kw):
    p = subprocess.run([ZT, *map(str, args)], capture_output=True, text=True, **kw)
    if p.returncode < 0:
        raise AssertionError("zt %s crashed with signal %d\n%s" % (args, -p.returncode, p.stderr))
    if check and p.returncode != 0:
        raise AssertionError("zt %s failed (%d):\n%s" % (args, p.returncode, p.stderr))
    return p


def info(path):
    return json.loads(run("info", "--json", path).stdout)


def objects(path):
    return {o["name"]: o for o in info(path)["objects"]}


def export(zt_path, name, tmp):
    out = os.path.join(tmp, "export-%s.npy" % abs(hash(name)))
    run("export", zt_path, name, "-o", out)
    return np.load(out)


def manifest(path):
    """The manifest of a .zt file decoded with cbor2 (Debian python3-cbor2),
    not with our reader: what a third-party reader of the file would see."""
    import cbor2
    with open(path, "rb") as f:
        buf = f.read()
    assert buf[-8:] == b"ZTEN1000", "no footer magic in %s" % path
    size = struct.unpack("<Q", buf[-16:-8])[0]
    return cbor2.loads(buf[-16 - size:-16])


def cat(zt_path, name, role="data"):
    return subprocess.run([ZT, "cat", zt_path, name, "--component", role], capture_output=True, check=True).stdout


def temp_being_written(pid, folder):
    """Size of the biggest file process `pid` has open for writing in
    `folder` under a temporary name: an unnamed O_TMPFILE file (shown as
    "folder/#inode (deleted)") or a named "*.zt-tmp-*" / "*.zt-export-*"
    one; 0 if none (yet)."""
    best = 0
    fd_dir = "/proc/%d/fd" % pid
    try:
        fds = os.listdir(fd_dir)
    except OSError:
        return 0
    for fd in fds:
        try:
            target = os.readlink(os.path.join(fd_dir, fd))
            if os.path.dirname(target) != folder:
                continue
            name = os.path.basename(target)
            if not (name.startswith("#") or ".zt-tmp-" in name or ".zt-export-" in name):
                continue
            best = max(best, os.stat(os.path.join(fd_dir, fd)).st_size)
        except OSError:
            continue
    return best


class TmpCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="zt-cli-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.tmp, name)

    def assert_no_leftovers(self, expected):
        """Only the expected files are in the temp dir: no output, no temp file."""
        self.assertEqual(sorted(os.listdir(self.tmp)), sorted(expected))


# ---------------------------------------------------------------- safetensors
# https://github.com/huggingface/safetensors#format: u64 little-endian N, N
# bytes of JSON {name: {"dtype", "shape", "data_offsets": [begin, end]}},
# optional "__metadata__" (str -> str), then the byte buffer.

def safetensors_bytes(tensors, metadata=None, raw_header=None):
    """tensors: list of (name, dtype_str, shape, raw bytes)."""
    header, buf = {}, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dt, shape, data in tensors:
        header[name] = {"dtype": dt, "shape": list(shape), "data_offsets": [len(buf), len(buf) + len(data)]}
        buf += data
    h = raw_header if raw_header is not None else json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + buf


# ----------------------------------------------------------------------- GGUF
# https://github.com/ggml-org/ggml/blob/master/docs/gguf.md

GGUF_U8, GGUF_I8, GGUF_U16, GGUF_I16, GGUF_U32, GGUF_I32, GGUF_F32, GGUF_BOOL = range(8)
GGUF_STRING, GGUF_ARRAY, GGUF_U64, GGUF_I64, GGUF_F64 = 8, 9, 10, 11, 12
_SCALAR = {GGUF_U8: "<B", GGUF_I8: "<b", GGUF_U16: "<H", GGUF_I16: "<h", GGUF_U32: "<I", GGUF_I32: "<i",
           GGUF_F32: "<f", GGUF_BOOL: "<?", GGUF_U64: "<Q", GGUF_I64: "<q", GGUF_F64: "<d"}


def gguf_str(s):
    b = s.encode() if isinstance(s, str) else s
    return struct.pack("<Q", len(b)) + b


def gguf_value(t, v):
    if t == GGUF_STRING:
        return gguf_str(v)
    if t == GGUF_ARRAY:
        et, items = v
        return struct.pack("<IQ", et, len(items)) + b"".join(gguf_value(et, x) for x in items)
    return struct.pack(_SCALAR[t], v)


# ggml type id: (name, block size, bytes per block)
GGML = {0: ("f32", 1, 4), 1: ("f16", 1, 2), 2: ("q4_0", 32, 18), 3: ("q4_1", 32, 20), 6: ("q5_0", 32, 22),
        7: ("q5_1", 32, 24), 8: ("q8_0", 32, 34), 9: ("q8_1", 32, 36), 10: ("q2_k", 256, 84),
        11: ("q3_k", 256, 110), 12: ("q4_k", 256, 144), 13: ("q5_k", 256, 176), 14: ("q6_k", 256, 210),
        15: ("q8_k", 256, 292), 16: ("iq2_xxs", 256, 66), 17: ("iq2_xs", 256, 74), 18: ("iq3_xxs", 256, 98),
        19: ("iq1_s", 256, 50), 20: ("iq4_nl", 32, 18), 21: ("iq3_s", 256, 110), 22: ("iq2_s", 256, 82),
        23: ("iq4_xs", 256, 136), 24: ("i8", 1, 1), 25: ("i16", 1, 2), 26: ("i32", 1, 4), 27: ("i64", 1, 8),
        28: ("f64", 1, 8), 29: ("iq1_m", 256, 56), 30: ("bf16", 1, 2), 34: ("tq1_0", 256, 54),
        35: ("tq2_0", 256, 66), 39: ("mxfp4", 32, 17)}


def ggml_nbytes(type_id, ne):
    _, bs, ts = GGML[type_id]
    n = ne[0] // bs * ts
    for d in ne[1:]:
        n *= d
    return n


def gguf_bytes(kvs, tensors, version=3, alignment=32, patch=None):
    """kvs: list of (key, type, value); tensors: list of (name, ne, type_id, data)."""
    out = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(kvs))
    for k, t, v in kvs:
        out += gguf_str(k) + struct.pack("<I", t) + gguf_value(t, v)
    offset, blobs = 0, []
    for name, ne, tid, data in tensors:
        out += gguf_str(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<Q", d) for d in ne)
        out += struct.pack("<IQ", tid, offset)
        blobs.append((offset, data))
        offset += len(data) + (-len(data) % alignment)
    out += b"\0" * (-len(out) % alignment)
    start = len(out)
    for off, data in blobs:
        out += b"\0" * (start + off - len(out)) + data
    return out
