"""Hand-built .zt files (spec layout: 8-byte magic, 64-aligned blobs, a CBOR
manifest, its u64 length, the magic again), written with python3-cbor2 and
python3-zstandard rather than with our writer, so that tests can give the
reader what our writer never makes: hostile names, shared frames with
conflicting declared sizes, missing fields."""
import struct

import cbor2
import zstandard


def zstd_frame(data, content_size=True, level=1):
    """One zstd frame of `data`; content_size=False leaves the decoded size
    out of the frame header (streaming writers do)."""
    c = zstandard.ZstdCompressor(level=level, write_content_size=content_size)
    if content_size:
        return c.compress(data)
    obj = c.compressobj()
    return obj.compress(data) + obj.flush()


def zstd_zeros(n, content_size=True):
    """A frame of n zero bytes, built in pieces (n may be GiBs)."""
    c = zstandard.ZstdCompressor(level=1, write_content_size=content_size)
    obj = c.compressobj(size=n if content_size else -1)
    piece = bytes(min(n, 8 << 20) or 1)
    out, left = [], n
    while left:
        k = min(left, len(piece))
        out.append(obj.compress(piece[:k]))
        left -= k
    out.append(obj.flush())
    return b"".join(out)


def build(path, blobs, objects, version="1.2.0", attributes=None):
    """blobs: list of bytes; objects: {name: {"shape", "format",
    "components": {role: {..., "blob": index}}}} where "blob" is replaced by
    that blob's offset and length. Returns the manifest written."""
    body = bytearray(b"ZTEN1000")
    placed = []
    for b in blobs:
        body += bytes(-len(body) % 64)
        placed.append((len(body), len(b)))
        body += b
    for o in objects.values():
        for c in o["components"].values():
            if "blob" in c:
                c["offset"], c["length"] = placed[c.pop("blob")]
    man = {"version": version, "objects": objects}
    if attributes is not None:
        man["attributes"] = attributes
    enc = cbor2.dumps(man)
    with open(path, "wb") as f:
        f.write(bytes(body) + enc + struct.pack("<Q", len(enc)) + b"ZTEN1000")
    return man
