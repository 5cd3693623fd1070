"""The identity of a zTensor v2 model (spec §6.3, §6.4), as functions of a
Reader: its content digest and whether it is in canonical form."""

import ctypes
from ctypes import byref, c_size_t, c_uint32, c_void_p
from typing import TYPE_CHECKING, NamedTuple, Tuple

from ._handle import _holding
from ._lib import check, lib

if TYPE_CHECKING:  # pragma: no cover
    from .reader import Reader

_DIGEST_ALGORITHMS = {"sha256": 2, "xxh3": 4}


class CanonicalForm(NamedTuple):
    """What Reader.canonical() finds (spec §6.3). canonical: True when the
    file is in canonical form; rule: 0 then, else the number (1..6) of the
    first rule it misses; misses: every miss, "rule N: ...", naming the part
    and offsets."""
    canonical: bool
    rule: int
    misses: Tuple[str, ...]


@_holding
def content_digest(self: "Reader", algorithm: str = "sha256") -> str:
    """The content digest of a zTensor v2 model (v2 spec §6.4),
    "sha256:<hex>" or "xxh3:<hex>": the same for the same tensors
    whatever their placement, encoding or number of files. Computed from
    the manifest alone (no tensor bytes are read). Raises ZTensorError
    when it is undefined (a part carries no digest; the message names
    it) or the file is not v2; ValueError for another algorithm."""
    if algorithm not in _DIGEST_ALGORITHMS:
        raise ValueError("content_digest: algorithm must be 'sha256' or 'xxh3', not %r" % (algorithm,))
    ptr = self._require_open().ptr
    n = c_size_t()
    check(lib.zt_file_content_digest(ptr, _DIGEST_ALGORITHMS[algorithm], None, 0, byref(n)))
    buf = ctypes.create_string_buffer(n.value + 1)
    check(lib.zt_file_content_digest(ptr, _DIGEST_ALGORITHMS[algorithm], buf, len(buf), byref(n)))
    return buf.value.decode("ascii")


@_holding
def canonical(self: "Reader") -> CanonicalForm:
    """Whether this zTensor v2 file is in canonical form (spec §6.3: one
    manifest, no unreferenced blobs; blobs at 64 KiB boundaries packed in
    name order; identical parts sharing a blob; raw parts with xxh3
    digests; NFC names; no shard table), and which rules it misses:

        form = r.canonical()
        if not form.canonical:
            print(form.rule, form.misses)

    Raises ZTensorError for a file that is not v2 (canonical form is not
    defined for it). Reads the footer again, no tensor bytes."""
    rule, message = c_uint32(), c_void_p()
    check(lib.zt_file_canonical(self._require_open().ptr, byref(rule), byref(message)))
    try:
        text = ctypes.string_at(message.value).decode("utf-8", "replace") if message.value else ""
    finally:
        lib.zt_free(message)
    return CanonicalForm(rule.value == 0, rule.value, tuple(text.split("; ")) if text else ())
