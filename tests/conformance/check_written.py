#!/usr/bin/python3
"""Independent conformance checker for zTensor spec 1.2.0 files.

Written from the spec text (seeds/001, "File Format Specification, Version
1.2.0") only: it does not import libztensor or its bindings. The CBOR manifest
is decoded with cbor2 (python3-cbor2), zstd blobs with python3-zstandard or,
if that module is missing, the zstd command-line tool.

    check_written.py [--quiet] FILE_OR_DIR...

Every .zt file given (directories are searched recursively) is checked
against the rules below; each violation is printed as

    FILE: object 'NAME' component 'ROLE': RULE: message

and the exit status is 1 if any file has a violation (2 on usage errors).
Rules that the spec leaves open (unknown logical types, formats or digest
algorithms, quantized_group without zeros) are printed as warnings and do not
fail the check.

Rules (section of the spec in brackets):
  header        bytes 0..8 are "ZTEN1000"                          [4]
  footer        the last 8 bytes are "ZTEN1000", the 8 before them the
                manifest size (u64 LE), manifest size <= 1 GiB and fits
                between header and footer                        [4, 5]
  cbor          the manifest is exactly one well-formed CBOR item, with no
                duplicate map keys                                     [1]
  root          a map; version "1.2.0" (text); objects a map with text keys;
                attributes, if present, a map                          [1]
  object        a map; shape an array of uint64; format text; components a
                map with text keys; attributes, if present, a map      [1]
  component     a map; dtype one of the 13 storage types; offset, length
                (and uncompressed_length) uint64; encoding "raw"/"zstd";
                type (if present) text                                 [1, 2]
  alignment     offset % 64 == 0                                       [1, 4]
  bounds        offset >= 8 and offset + length <= start of manifest  [4, 5]
  overlap       no two blobs partially overlap (identical ranges, i.e. a
                shared blob, are only a warning: the spec is silent)   [4]
  padding       every byte of the blob region not in a blob is 0x00   [4]
  zstd          zstd carries uncompressed_length; the frame(s) decode to
                exactly uncompressed_length bytes                       [1]
  raw_length    uncompressed_length on a raw component equals length
                (warning only: the field is defined for zstd)           [1]
  digest        "sha256:<64 hex>" or "crc32c:<8 hex>" (an "0x" prefix is
                accepted for crc32c: the reference implementation writes
                it), recomputed over the stored bytes and equal          [1]
  logical_type  a known logical type over its storage dtype: f8_* over u8,
                complex64 over f32, complex128 over f64                 [2]
  dense         a "data" component whose decoded size is
                product(shape) * ratio * byte_size(dtype)              [2, 3]
  bool          bool elements are 0x00 or 0x01                          [2]
  sparse        index components (indices, indptr, coords) are u64;
                sparse_csr: 2-D shape, values/indices/indptr present,
                indptr has rows+1 entries starting at 0, non-decreasing, last
                = nnz, nnz values and indices, indices < cols; sparse_coo:
                values/coords present, coords has ndim*nnz entries, each
                below its dimension                                    [3]
  quantized     packed_weight and scales present (zeros: warning if absent);
                attributes bits and group_size positive integers, packing
                text; scales and zeros hold rows*ceil(cols/group_size)
                entries, packed_weight rows*ceil(cols/N) for packing
                "N_per_i32"/"N_per_u8" (the spec's example: [4096, 4096],
                group_size 128, 8_per_i32)                              [3]
"""
import hashlib
import io
import os
import re
import shutil
import struct
import subprocess
import sys

import cbor2

try:
    import zstandard
except ImportError:  # Debian: python3-zstandard; else the zstd CLI
    zstandard = None
if os.environ.get("ZT_CHECK_ZSTD_CLI"):  # force the CLI path (tests of it)
    zstandard = None

MAGIC = b"ZTEN1000"
MAX_MANIFEST = 1 << 30
U64_MAX = (1 << 64) - 1

# [2] Storage types: the closed set of 13 and their byte widths.
DTYPE_SIZE = {
    "f64": 8, "f32": 4, "f16": 2, "bf16": 2,
    "i64": 8, "i32": 4, "i16": 2, "i8": 1,
    "u64": 8, "u32": 4, "u16": 2, "u8": 1,
    "bool": 1,
}
INT_DTYPES = {"i64", "i32", "i16", "i8", "u64", "u32", "u16", "u8"}
FLOAT_DTYPES = {"f64", "f32", "f16", "bf16"}
# [2] Logical types: name -> (storage dtype, storage elements per element).
LOGICAL = {
    "f8_e4m3fn": ("u8", 1), "f8_e5m2": ("u8", 1),
    "f8_e4m3fnuz": ("u8", 1), "f8_e5m2fnuz": ("u8", 1),
    "complex64": ("f32", 2), "complex128": ("f64", 2),
}
KNOWN_FORMATS = {"dense", "sparse_csr", "sparse_coo", "quantized_group"}
STRUCT_FMT = {"u64": "<Q", "u32": "<I", "u16": "<H", "u8": "<B",
              "i64": "<q", "i32": "<i", "i16": "<h", "i8": "<b"}


# --------------------------------------------------------------- CRC-32C
# Castagnoli polynomial 0x1EDC6F41, reflected 0x82F63B78, init and final
# xor 0xFFFFFFFF (RFC 3720 B.4). Bitwise, then a table built from it.
def _crc32c_bitwise_byte(c):
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    return c


_CRC_TABLE = [_crc32c_bitwise_byte(i) for i in range(256)]


def crc32c(data):
    crc = 0xFFFFFFFF
    t = _CRC_TABLE
    for b in data:
        crc = (crc >> 8) ^ t[(crc ^ b) & 0xFF]
    return crc ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283  # the standard check value


# --------------------------------------------------------------- zstd
def zstd_decode(blob, limit):
    """Decodes every frame of blob; returns (bytes, frame count or None), or
    raises ValueError. Stops once more than `limit` bytes come out."""
    if zstandard is not None:
        out = bytearray()
        frames = 0
        rest = memoryview(blob)
        while len(rest):
            d = zstandard.ZstdDecompressor().decompressobj()
            try:
                out += d.decompress(bytes(rest))
            except zstandard.ZstdError as e:
                raise ValueError("corrupt zstd frame: %s" % e)
            if not d.eof:
                raise ValueError("truncated zstd frame")
            frames += 1
            rest = memoryview(d.unused_data)
            if len(out) > limit:
                break
        return bytes(out), frames
    if shutil.which("zstd") is None:
        raise ValueError("neither python3-zstandard nor the zstd CLI is installed")
    p = subprocess.run(["zstd", "-d", "-c", "-q"], input=bytes(blob), capture_output=True)
    if p.returncode != 0:
        raise ValueError("corrupt zstd frame: %s" % p.stderr.decode(errors="replace").strip())
    return p.stdout, None


# --------------------------------------------------------------- CBOR scan
class CborScanError(Exception):
    pass


def cbor_scan(buf):
    """Walks one CBOR item structurally (RFC 8949 well-formedness) and
    reports duplicate keys in any map (compared by their encoded bytes).
    Returns the end offset of the item."""

    def head(pos):
        if pos >= len(buf):
            raise CborScanError("truncated at byte %d" % pos)
        ib = buf[pos]
        mt, ai = ib >> 5, ib & 31
        pos += 1
        if ai < 24:
            return mt, ai, pos, False
        if ai in (24, 25, 26, 27):
            n = 1 << (ai - 24)
            if pos + n > len(buf):
                raise CborScanError("truncated argument at byte %d" % pos)
            return mt, int.from_bytes(buf[pos:pos + n], "big"), pos + n, False
        if ai == 31 and mt in (2, 3, 4, 5, 7):
            return mt, None, pos, True
        raise CborScanError("reserved additional info %d at byte %d" % (ai, pos - 1))

    def item(pos, depth):
        if depth > 256:
            raise CborScanError("nesting deeper than 256")
        mt, arg, pos, indef = head(pos)
        if mt in (0, 1):
            return pos
        if mt in (2, 3):
            if not indef:
                if pos + arg > len(buf):
                    raise CborScanError("string past the end at byte %d" % pos)
                return pos + arg
            while True:
                if pos < len(buf) and buf[pos] == 0xFF:
                    return pos + 1
                cmt, carg, pos, cindef = head(pos)
                if cmt != mt or cindef:
                    raise CborScanError("bad chunk in indefinite string at byte %d" % pos)
                pos += carg
        if mt == 4:
            if indef:
                while True:
                    if pos < len(buf) and buf[pos] == 0xFF:
                        return pos + 1
                    pos = item(pos, depth + 1)
            for _ in range(arg):
                pos = item(pos, depth + 1)
            return pos
        if mt == 5:
            seen = set()
            i = 0
            while True:
                if indef:
                    if pos < len(buf) and buf[pos] == 0xFF:
                        return pos + 1
                elif i == arg:
                    return pos
                kstart = pos
                pos = item(pos, depth + 1)
                key = bytes(buf[kstart:pos])
                if key in seen:
                    raise CborScanError("duplicate map key %r at byte %d" % (key, kstart))
                seen.add(key)
                pos = item(pos, depth + 1)
                i += 1
        if mt == 6:
            return item(pos, depth + 1)
        # mt 7: simple / float
        if indef:
            raise CborScanError("unexpected break at byte %d" % (pos - 1))
        return pos

    return item(0, 0)


# --------------------------------------------------------------- checker
class Report:
    def __init__(self, path):
        self.path = path
        self.errors = []
        self.warnings = []

    @staticmethod
    def _where(obj, comp):
        s = ""
        if obj is not None:
            s += "object %r" % obj
        if comp is not None:
            s += " component %r" % comp
        return s + ": " if s else ""

    def err(self, rule, msg, obj=None, comp=None):
        self.errors.append("%s: %s%s: %s" % (self.path, self._where(obj, comp), rule, msg))

    def warn(self, rule, msg, obj=None, comp=None):
        self.warnings.append("%s: warning: %s%s: %s" % (self.path, self._where(obj, comp), rule, msg))


def is_uint64(v):
    return type(v) is int and 0 <= v <= U64_MAX


def product(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def unpack(data, dtype):
    fmt = STRUCT_FMT[dtype]
    size = DTYPE_SIZE[dtype]
    return [x[0] for x in struct.iter_unpack(fmt, data[: len(data) - len(data) % size])]


class FileChecker:
    def __init__(self, path):
        self.path = path
        self.r = Report(path)

    def run(self):
        with open(self.path, "rb") as f:
            self.buf = f.read()
        try:
            self.check_container()
        except _Fatal:
            pass
        return self.r

    def fatal(self, rule, msg):
        self.r.err(rule, msg)
        raise _Fatal()

    # ---- [4], [5] container
    def check_container(self):
        buf = self.buf
        if len(buf) < 24:
            self.fatal("header", "file is %d bytes, shorter than header + footer" % len(buf))
        if buf[:8] != MAGIC:
            self.fatal("header", "magic at 0 is %r, not %r" % (buf[:8], MAGIC))
        if buf[-8:] != MAGIC:
            self.fatal("footer", "magic at EOF-8 is %r, not %r" % (buf[-8:], MAGIC))
        msize = struct.unpack("<Q", buf[-16:-8])[0]
        if msize > MAX_MANIFEST:
            self.fatal("footer", "manifest size %d above 1 GiB" % msize)
        if msize > len(buf) - 24:
            self.fatal("footer", "manifest size %d does not fit a %d-byte file" % (msize, len(buf)))
        self.mstart = len(buf) - 16 - msize
        mbytes = buf[self.mstart:len(buf) - 16]
        try:
            end = cbor_scan(mbytes)
        except CborScanError as e:
            self.fatal("cbor", "manifest is not well-formed CBOR: %s" % e)
        if end != len(mbytes):
            self.fatal("cbor", "%d bytes after the manifest's CBOR item" % (len(mbytes) - end))
        try:
            dec = cbor2.CBORDecoder(io.BytesIO(mbytes))
            manifest = dec.decode()
        except Exception as e:  # cbor2 raises several types
            self.fatal("cbor", "cbor2 cannot decode the manifest: %s" % e)
        self.check_manifest(manifest)

    # ---- [1] manifest
    def check_manifest(self, m):
        r = self.r
        if not isinstance(m, dict):
            self.fatal("root", "manifest is a %s, not a map" % type(m).__name__)
        if "version" not in m:
            self.fatal("root", "no 'version'")
        if m["version"] != "1.2.0":
            r.err("root", "version is %r, not '1.2.0'" % (m["version"],))
        if "attributes" in m and not isinstance(m["attributes"], dict):
            r.err("root", "attributes is a %s, not a map" % type(m["attributes"]).__name__)
        if "objects" not in m:
            self.fatal("root", "no 'objects'")
        objs = m["objects"]
        if not isinstance(objs, dict):
            self.fatal("root", "objects is a %s, not a map" % type(objs).__name__)
        self.blobs = []  # (offset, length, object, role)
        for name, obj in objs.items():
            if not isinstance(name, str):
                r.err("root", "object key %r is not text" % (name,))
                continue
            self.check_object(name, obj)
        self.check_layout()

    def check_object(self, name, obj):
        r = self.r
        if not isinstance(obj, dict):
            r.err("object", "a %s, not a map" % type(obj).__name__, name)
            return
        shape = obj.get("shape")
        shape_ok = isinstance(shape, list) and all(is_uint64(d) for d in shape)
        if not shape_ok:
            r.err("object", "shape %r is not an array of uint64" % (shape,), name)
            shape = None
        fmt = obj.get("format")
        if not isinstance(fmt, str):
            r.err("object", "format %r missing or not text" % (fmt,), name)
            fmt = None
        if "attributes" in obj and not isinstance(obj["attributes"], dict):
            r.err("object", "attributes is a %s, not a map" % type(obj["attributes"]).__name__, name)
        comps = obj.get("components")
        if not isinstance(comps, dict):
            r.err("object", "components %r missing or not a map" % (type(comps).__name__,), name)
            return
        decoded = {}  # role -> (component map, decoded bytes or None)
        for role, c in comps.items():
            if not isinstance(role, str):
                r.err("object", "component key %r is not text" % (role,), name)
                continue
            decoded[role] = (c, self.check_component(name, role, c))
        if shape is None or fmt is None:
            return
        if fmt == "dense":
            self.check_dense(name, shape, decoded)
        elif fmt == "sparse_csr":
            self.check_csr(name, shape, decoded)
        elif fmt == "sparse_coo":
            self.check_coo(name, shape, decoded)
        elif fmt == "quantized_group":
            self.check_quant(name, shape, obj.get("attributes"), decoded)
        else:
            r.warn("object", "format %r is not one the spec defines; only its components were checked" % fmt, name)

    def check_component(self, name, role, c):
        """Checks one component; returns its decoded bytes, or None."""
        r, buf = self.r, self.buf
        if not isinstance(c, dict):
            r.err("component", "a %s, not a map" % type(c).__name__, name, role)
            return None
        ok = True
        dtype = c.get("dtype")
        if dtype not in DTYPE_SIZE:
            r.err("component", "dtype %r is not one of the 13 storage types" % (dtype,), name, role)
            ok = False
        for key in ("offset", "length"):
            if not is_uint64(c.get(key)):
                r.err("component", "%s %r missing or not a uint64" % (key, c.get(key)), name, role)
                ok = False
        enc = c.get("encoding", "raw")
        if enc not in ("raw", "zstd"):
            r.err("component", "encoding %r is neither 'raw' nor 'zstd'" % (enc,), name, role)
            ok = False
        ulen = c.get("uncompressed_length")
        if "uncompressed_length" in c and not is_uint64(ulen):
            r.err("component", "uncompressed_length %r is not a uint64" % (ulen,), name, role)
            ok = False
        if "type" in c:
            t = c["type"]
            if not isinstance(t, str):
                r.err("logical_type", "type %r is not text" % (t,), name, role)
            elif t in LOGICAL:
                if LOGICAL[t][0] != dtype:
                    r.err("logical_type", "type %r needs dtype %r, not %r" % (t, LOGICAL[t][0], dtype), name, role)
            else:
                r.warn("logical_type", "type %r is not one the spec lists" % t, name, role)
        if not ok:
            return None
        off, length = c["offset"], c["length"]
        if off % 64:
            r.err("alignment", "offset %d is not a multiple of 64" % off, name, role)
        if off < 8 or off + length > self.mstart:
            r.err("bounds", "blob [%d, %d) is outside the blob region [8, %d)" % (off, off + length, self.mstart),
                  name, role)
            return None
        self.blobs.append((off, length, name, role))
        stored = memoryview(buf)[off:off + length]
        if "digest" in c:
            self.check_digest(name, role, c["digest"], stored)
        if enc == "raw":
            if ulen is not None and ulen != length:
                r.warn("raw_length", "raw component has uncompressed_length %d != length %d" % (ulen, length),
                       name, role)
            data = bytes(stored)
        else:
            if ulen is None:
                r.err("zstd", "zstd component without uncompressed_length (required in 1.2)", name, role)
                return None
            try:
                data, frames = zstd_decode(stored, ulen)
            except ValueError as e:
                r.err("zstd", str(e), name, role)
                return None
            if len(data) != ulen:
                r.err("zstd", "frame decodes to %s bytes, uncompressed_length says %d" %
                      (len(data) if len(data) <= ulen else "more than %d" % ulen, ulen), name, role)
                return None
            if frames is not None and frames != 1:
                r.warn("zstd", "%d zstd frames in one blob (valid zstd, but readers that decode a single "
                       "frame will stop early)" % frames, name, role)
        if dtype == "bool":
            bad = next((i for i, b in enumerate(data) if b > 1), None)
            if bad is not None:
                r.err("bool", "element %d is 0x%02X, not 0x00/0x01" % (bad, data[bad]), name, role)
        return data

    def check_digest(self, name, role, d, stored):
        r = self.r
        if not isinstance(d, str) or ":" not in d:
            r.err("digest", "digest %r is not 'algorithm:hex'" % (d,), name, role)
            return
        alg, hexpart = d.split(":", 1)
        if alg == "sha256":
            if not re.fullmatch(r"[0-9a-fA-F]{64}", hexpart):
                r.err("digest", "%r is not sha256:<64 hex>" % d, name, role)
                return
            if hexpart.lower() != hashlib.sha256(stored).hexdigest():
                r.err("digest", "sha256 mismatch: stored %s, computed %s" %
                      (hexpart, hashlib.sha256(stored).hexdigest()), name, role)
        elif alg == "crc32c":
            m = re.fullmatch(r"(0[xX])?([0-9a-fA-F]{8})", hexpart)
            if not m:
                r.err("digest", "%r is not crc32c:<8 hex>" % d, name, role)
                return
            got = crc32c(stored)
            if int(m.group(2), 16) != got:
                r.err("digest", "crc32c mismatch: stored %s, computed %08X" % (hexpart, got), name, role)
        else:
            r.warn("digest", "algorithm %r unknown to this checker: not verified" % alg, name, role)

    # ---- [2], [3] formats
    @staticmethod
    def elem_size(c):
        ratio = LOGICAL.get(c.get("type"), (None, 1))[1]
        return DTYPE_SIZE[c["dtype"]] * ratio

    def require(self, name, fmt, decoded, roles):
        missing = [x for x in roles if x not in decoded]
        for x in missing:
            self.r.err(fmt, "required component %r missing" % x, name)
        return not missing

    def count(self, name, role, decoded, rule):
        """Element count of a decoded component (None if unusable)."""
        c, data = decoded[role]
        if data is None:
            return None
        es = self.elem_size(c)
        if len(data) % es:
            self.r.err(rule, "%d bytes is not a whole number of %d-byte elements" % (len(data), es), name, role)
            return None
        return len(data) // es

    def index(self, name, role, decoded):
        c, data = decoded[role]
        if c.get("dtype") != "u64":
            self.r.err("sparse", "index component has dtype %r; the spec requires u64" % (c.get("dtype"),),
                       name, role)
            return None
        if data is None:
            return None
        if len(data) % 8:
            self.r.err("sparse", "%d bytes is not a whole number of u64" % len(data), name, role)
            return None
        return unpack(data, "u64")

    def check_dense(self, name, shape, decoded):
        if not self.require(name, "dense", decoded, ["data"]):
            return
        c, data = decoded["data"]
        for role in decoded:
            if role != "data":
                self.r.warn("dense", "extra component %r in a dense object" % role, name)
        if data is None:
            return
        want = product(shape) * self.elem_size(c)
        if len(data) != want:
            self.r.err("dense", "data is %d bytes; product(shape %s) * ratio * size(%s) = %d" %
                       (len(data), shape, c["dtype"], want), name, "data")

    def check_csr(self, name, shape, decoded):
        if len(shape) != 2:
            self.r.err("sparse", "sparse_csr shape %s is not 2-D" % (shape,), name)
            return
        if not self.require(name, "sparse", decoded, ["values", "indices", "indptr"]):
            return
        rows, cols = shape
        indices = self.index(name, "indices", decoded)
        indptr = self.index(name, "indptr", decoded)
        nnz = self.count(name, "values", decoded, "sparse")
        if indptr is not None:
            if len(indptr) != rows + 1:
                self.r.err("sparse", "indptr has %d entries, rows + 1 = %d" % (len(indptr), rows + 1), name, "indptr")
            elif indptr[0] != 0:
                self.r.err("sparse", "indptr[0] is %d, not 0" % indptr[0], name, "indptr")
            else:
                bad = next((i for i in range(1, len(indptr)) if indptr[i] < indptr[i - 1]), None)
                if bad is not None:
                    self.r.err("sparse", "indptr decreases at %d" % bad, name, "indptr")
                if nnz is not None and indptr[-1] != nnz:
                    self.r.err("sparse", "indptr ends at %d, %d values" % (indptr[-1], nnz), name, "indptr")
        if indices is not None:
            if nnz is not None and len(indices) != nnz:
                self.r.err("sparse", "%d indices for %d values" % (len(indices), nnz), name, "indices")
            bad = next((i for i, x in enumerate(indices) if x >= cols), None)
            if bad is not None:
                self.r.err("sparse", "indices[%d] = %d >= cols %d" % (bad, indices[bad], cols), name, "indices")

    def check_coo(self, name, shape, decoded):
        if not self.require(name, "sparse", decoded, ["values", "coords"]):
            return
        coords = self.index(name, "coords", decoded)
        nnz = self.count(name, "values", decoded, "sparse")
        if coords is None or nnz is None:
            return
        nd = len(shape)
        if len(coords) != nd * nnz:
            self.r.err("sparse", "coords has %d entries, ndim %d * nnz %d = %d" % (len(coords), nd, nnz, nd * nnz),
                       name, "coords")
            return
        for d in range(nd):
            for k in range(nnz):
                if coords[d * nnz + k] >= shape[d]:
                    self.r.err("sparse", "coords of dim %d, entry %d = %d >= %d" %
                               (d, k, coords[d * nnz + k], shape[d]), name, "coords")
                    return

    def check_quant(self, name, shape, attrs, decoded):
        r = self.r
        ok = self.require(name, "quantized", decoded, ["packed_weight", "scales"])
        if "zeros" not in decoded:
            r.warn("quantized", "no 'zeros' component (the spec lists it; it does not say it is optional)", name)
        if not isinstance(attrs, dict):
            r.err("quantized", "no attributes map holding bits / group_size / packing", name)
            return
        bits, gs, packing = attrs.get("bits"), attrs.get("group_size"), attrs.get("packing")
        for k, v in (("bits", bits), ("group_size", gs)):
            if not (type(v) is int and v > 0):
                r.err("quantized", "attribute %s %r is not a positive integer" % (k, v), name)
                ok = False
        if not isinstance(packing, str):
            r.err("quantized", "attribute packing %r is not text" % (packing,), name)
            packing = None
        if not ok or not shape:
            if not shape:
                r.err("quantized", "quantized_group with a 0-D shape", name)
            return
        cols = shape[-1]
        rows = product(shape[:-1])
        groups = rows * -(-cols // gs)
        for role in ("scales", "zeros"):
            if role in decoded:
                n = self.count(name, role, decoded, "quantized")
                if n is not None and n != groups:
                    r.err("quantized", "%d entries; rows %d * ceil(cols %d / group_size %d) = %d" %
                          (n, rows, cols, gs, groups), name, role)
        if "scales" in decoded and decoded["scales"][0].get("dtype") not in FLOAT_DTYPES | {"u8"}:
            r.err("quantized", "scales dtype %r is not a float type" % decoded["scales"][0].get("dtype"), name, "scales")
        m = re.fullmatch(r"(\d+)_per_(i32|u8)", packing or "")
        if not m:
            r.warn("quantized", "packing %r not understood: packed size not checked" % (packing,), name)
            return
        per = int(m.group(1))
        word_bits = 32 if m.group(2) == "i32" else 8
        if per * bits != word_bits:
            r.err("quantized", "packing %r with bits %d does not fill a %d-bit word" % (packing, bits, word_bits), name)
        pc = decoded["packed_weight"][0]
        if DTYPE_SIZE.get(pc.get("dtype"), 0) * 8 != word_bits:
            r.err("quantized", "packing %r stored as %r" % (packing, pc.get("dtype")), name, "packed_weight")
            return
        n = self.count(name, "packed_weight", decoded, "quantized")
        want = rows * -(-cols // per)
        if n is not None and n != want:
            r.err("quantized", "%d words; rows %d * ceil(cols %d / %d) = %d" % (n, rows, cols, per, want),
                  name, "packed_weight")

    # ---- [4] blob layout: overlaps and padding
    def check_layout(self):
        r = self.r
        blobs = sorted(self.blobs)
        seen = {}
        for off, length, name, role in blobs:
            key = (off, length)
            if key in seen and length:
                r.warn("overlap", "shares blob [%d, %d) with %r/%r (the spec is silent on shared blobs)" %
                       ((off, off + length) + seen[key]), name, role)
            seen.setdefault(key, (name, role))
        prev_end, prev = 8, None
        for off, length, name, role in blobs:
            if off < prev_end and length and (off, length) != prev[:2]:
                r.err("overlap", "blob [%d, %d) overlaps %r/%r ending at %d" %
                      (off, off + length, prev[2], prev[3], prev_end), name, role)
            if off > prev_end:
                self.check_zero(prev_end, off)
            if off + length >= prev_end:
                prev_end, prev = off + length, (off, length, name, role)
        if self.mstart > prev_end:
            self.check_zero(prev_end, self.mstart)

    def check_zero(self, a, b):
        gap = self.buf[a:b]
        if gap.count(0) != len(gap):
            i = next(i for i, x in enumerate(gap) if x)
            self.r.err("padding", "byte %d (gap [%d, %d) between blobs) is 0x%02X, not 0x00" % (a + i, a, b, gap[i]))


class _Fatal(Exception):
    pass


def main(argv):
    quiet = "--quiet" in argv
    args = [a for a in argv if a != "--quiet"]
    if not args:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    files = []
    for a in args:
        if os.path.isdir(a):
            for root, _, names in os.walk(a):
                files += [os.path.join(root, n) for n in names if n.endswith(".zt")]
        else:
            files.append(a)
    files.sort()
    if not files:
        print("check_written: no .zt files in %s" % " ".join(args), file=sys.stderr)
        return 2
    bad = 0
    for path in files:
        rep = FileChecker(path).run()
        for w in rep.warnings:
            print(w)
        for e in rep.errors:
            print(e)
        if rep.errors:
            bad += 1
        elif not quiet:
            print("%s: ok" % path)
    print("check_written: %d file(s), %d conform, %d violate spec 1.2.0%s" %
          (len(files), len(files) - bad, bad, "" if zstandard else " (zstd via the CLI)"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
