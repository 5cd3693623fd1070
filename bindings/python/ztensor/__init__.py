"""ztensor: read and write zTensor (.zt) tensor files from Python.

Python over libztensor's C ABI (ctypes) with numpy arrays, and a C++
extension (ztensor._ext) doing the per-tensor work of whole-file loads when
it was built. The library is $ZTENSOR_LIBRARY if set, else the one `pip
install` put in this package, else a system-wide install;
`ztensor.library_path` and `ztensor.library_source` say which was loaded,
`ztensor.extension_path` which extension (None: ctypes alone, see
ztensor._native).

    import ztensor
    ztensor.save_file({"w": np.eye(3, dtype=np.float32)}, "m.zt")
    tensors = ztensor.load_file("m.zt")           # writable arrays
    with ztensor.Reader("m.zt") as r:
        w = r["w"]                                # zero-copy, read-only
        t = numpy.from_dlpack(r.tensor("w"))      # DLPack (a private copy)
        part = r.get_slice("w")[0:2, ::2]         # reads only that box
        arrays = r.read_many(["w"])               # batched, parallel

safetensors users switch with one import line; the same calls
(save_file, load_file, save, load, safe_open; save_model/load_model for
torch) live in two submodules, imported on demand:

    from ztensor.torch import save_file, load_file, safe_open   # help(ztensor.torch)
    from ztensor.numpy import save_file, load_file, safe_open   # help(ztensor.numpy)
    from ztensor import safe_open            # framework="pt" | "np", as safetensors' one

Bytes in, bytes out: ztensor.Reader(data) opens a file held in memory
(bytes, bytearray, memoryview, mmap) without copying it, and
ztensor.Writer.memory() / ztensor.numpy.save() give a file's bytes.

Sharded checkpoints read as one reader:

    shards = ztensor.load_sharded("model.zt.index.json")  # docs/sharding.md
"""

import os
from typing import Any, Dict, Mapping, Optional, Union

import numpy as np

from . import _openers, _v2
from ._handle import is_url
from ._identity import CanonicalForm
from ._v2 import Caps, Location, Source, V2Tensor, Verification, convert, detect, page_size, verify
from ._v2_index import index
from ._attributes import UNDEFINED, Tagged
from ._dtypes import bf16_to_float32, float32_to_bf16
from ._lib import ZTensorError, library_path, library_source, lib as _lib
from ._native import extension_path
from ._redact import redact_url as _redact_url
from ._locate import LibraryNotFoundError
from ._errors import SafetensorError, SafetensorFileError, TensorNotFoundError
from ._frameworks import _safe_open_handle, safe_open
from ._serialize import TensorSpec, deserialize, serialize, serialize_file
from ._version import __version__
from ._types import ArrayLike, ObjectValue, PathLike
from .reader import ComponentInfo, ObjectInfo, Quantized, Reader, Slice, SparseCOO, SparseCSR, Tensor, TensorMetadata
from .sharded import ShardedReader, load_sharded
from .writer import Digest, Format, Writer, Zstd

__all__ = ["Reader", "Writer", "Tensor", "Slice", "ObjectInfo", "ComponentInfo", "SparseCSR", "SparseCOO", "Quantized",
           "ZTensorError", "SafetensorError", "SafetensorFileError", "TensorNotFoundError", "_safe_open_handle", "TensorSpec", "serialize", "serialize_file", "deserialize", "TensorMetadata", "remove_tensors", "replace_tensor", "Tagged", "UNDEFINED", "save_file", "load_file", "safe_open", "ShardedReader",
           "load_sharded", "bf16_to_float32", "float32_to_bf16", "library_version", "library_path",
           "library_source", "extension_path", "LibraryNotFoundError", "__version__", "open", "open_url",
           "Source", "V2Tensor", "Caps", "Location", "Verification", "verify", "detect", "convert", "page_size", "index",
           "CanonicalForm"]


def _torch_checkpoint(path: str) -> Optional[bytes]:
    """Reader's way into PyTorch checkpoints: ztensor.torch's converter, when
    torch is installed (imported only for a file the library cannot open)."""
    try:
        from . import torch as zt_torch
    except ImportError:
        return None
    return zt_torch.checkpoint_as_zt(path)


_openers.register(_torch_checkpoint)


def library_version() -> str:
    """The version of the loaded libztensor ("1.0.0")."""
    return str(_lib.zt_version_string().decode())


def open(path_or_url: Any, **kwargs: Any) -> Any:  # noqa: A001 (ztensor.open, like io.open)
    """Two APIs under one name, told apart by the arguments:

    - ztensor.open(path) or ztensor.open([path, ...]): the original
      package's 2.x API, a Source (a mapping of names to Tensor handles:
      shape, dtype, parts, memoryview, DLPack, location, caps, ...).
    - ztensor.open(url_or_path, **reader_options) (an http(s):// or s3://
      URL, or any keyword of Reader: mmap=, verify=, prefetch=,
      bearer_token=, url_options=, ...): a Reader, as Reader(...) gives
      (names to numpy arrays); also what the original 1.x open() gave.

        with ztensor.open("model.zt") as src:                  # 2.x
            t = src["w"]; t.shape, t.dtype, memoryview(t)
        with ztensor.open("https://example.org/model.zt",
                          bearer_token=os.environ.get("HF_TOKEN")) as r:
            w = r["w"]                                          # numpy
    """
    if kwargs or (isinstance(path_or_url, str) and is_url(path_or_url)) or \
            not isinstance(path_or_url, (str, os.PathLike, list, tuple)):  # bytes: a file in memory
        return Reader(path_or_url, **kwargs)
    return _v2.Source(path_or_url)


def open_url(url: str, *, bearer_token: Optional[str] = None, strict: bool = False,
             **url_options: Union[int, str]) -> Reader:
    """Opens a .zt file over HTTP(S) or S3 (s3://bucket/key, signed with the
    AWS tools' credentials); url_options are zt_url_options fields
    (timeout_ms=, retries=, cache_bytes=, max_parallel=, s3_region=,
    s3_endpoint=, s3_profile=, and since 1.3 the range cost model's
    rtt_ms=, link_bytes_per_s=, max_overfetch_percent=, chunk_bytes=, ...)."""
    if not isinstance(url, str) or not url[:8].lower().startswith(("http://", "https://", "s3://")):
        raise ValueError("open_url needs an http://, https:// or s3:// URL")
    return Reader(url, bearer_token=bearer_token, strict=strict, url_options=url_options)


def save_file(tensors: Mapping[str, ArrayLike], path: PathLike, metadata: Any = None, *, zstd: Zstd = None,
              digest: Digest = None, format: Any = None) -> None:  # noqa: A002
    """Writes a dict of numpy arrays (dense tensors) as a .zt file, atomically;
    metadata (a dict) becomes the file attributes.

        ztensor.save_file({"w": np.eye(3, dtype=np.float32)}, "m.zt", metadata={"step": 3}, zstd=3)

    A path ending in ".safetensors" (or format="safetensors") gets the
    safetensors format itself, byte for byte what safetensors writes
    (metadata then a dict of str to str); format="zt" forces zTensor.
    """
    from . import _safe, _safetensors_format
    if _safetensors_format.wants_safetensors(path, format):
        _safe.write(tensors, path, metadata, lambda name, v: (np.asarray(v), None), zstd, digest, "safetensors")
        return
    items = list(tensors.items())
    generation = _safetensors_format.zt_generation(format)
    if generation == 2:  # v2 places blobs in name order: given so, none is moved at finish
        items.sort(key=lambda kv: kv[0].encode("utf-8") if isinstance(kv[0], str) else b"")
    with Writer(path, zstd=zstd, digest=digest, format=generation,
                canonical=(not zstd and digest in (None, "xxh3")) if generation == 2 else None) as w:
        for name, array in items:
            w.add(name, array)
        if metadata is not None:
            w.attributes = metadata


def load_file(path: PathLike, *, copy: bool = True, verify: bool = False) -> Dict[str, ObjectValue]:
    """Reads every object of a .zt file into a dict: numpy arrays for dense
    objects, as Reader[name] gives for the others.

        tensors = ztensor.load_file("m.zt")
        tensors["w"] += 1                          # the file is not touched

    copy=True (default): dense arrays are new and writable, read in one
    batched call into memory this process owns (later changes to the file
    cannot reach them). copy=False: zero-copy arrays of the file's private
    copy-on-write mapping where the data allows, writable (a write stays in
    this process, never reaching the file; read-only for a caller's buffer
    and under strict overcommit). They keep the file mapped; if the
    file is rewritten in place their values change, and if it is truncated
    reading them kills the process with SIGBUS: only for files nothing
    modifies meanwhile).
    verify=True: digests are checked as each object is read.
    """
    with Reader(path, verify=verify, prefetch=True) as r:
        if not copy:
            return {name: r[name] for name in r}
        dense = r.read_many()
        return {name: dense[name] if name in dense else r[name] for name in r}


def _refuse_url_target(call: str, target: PathLike) -> None:
    """A file rewritten in place (or written) is local: a URL is refused
    before anything reads it, quoting it redacted."""
    t = os.fsdecode(target) if isinstance(target, (str, os.PathLike)) else target
    if isinstance(t, str) and t[:8].lower().startswith(("http://", "https://", "s3://")):
        raise ValueError(f"{call}: {_redact_url(t)!r} is a URL, and {call} writes local files only")


def remove_tensors(path: PathLike, output: Optional[PathLike], names: Any) -> None:
    """Writes `path` without the objects `names` (a name or a list) to
    `output` (None: replaces `path`, atomically). Every other object is
    copied as it is (verified; digests recomputed). An unknown name raises
    KeyError and writes nothing. (The original zTensor package's call.)

        ztensor.remove_tensors("model.zt", None, ["optimizer.state"])
    """
    drop = {names} if isinstance(names, str) else set(names)
    _refuse_url_target("remove_tensors", output if output is not None else path)
    with Reader(path, mmap=False) as r:
        missing = sorted(drop - set(r))
        if missing:
            raise KeyError(f"{_redact_url(os.fsdecode(path))!r} has no object {missing[0]!r}")
        _rewrite(r, output if output is not None else path, lambda name, w: name in drop)


def replace_tensor(path: PathLike, name: str, data: ArrayLike, *, zstd: Zstd = None) -> None:
    """Replaces the dense object `name` of `path` by `data` (a numpy array or
    torch tensor; shape and type may change), atomically: the file is
    rewritten with every other object copied as it is. An unknown name
    raises KeyError. (The original zTensor package's call.)"""
    _refuse_url_target("replace_tensor", path)
    with Reader(path, mmap=False) as r:
        if name not in r:
            raise KeyError(f"{_redact_url(os.fsdecode(path))!r} has no object {name!r}")

        def put(obj_name: str, w: Writer) -> bool:
            if obj_name != name:
                return False
            if hasattr(data, "detach"):  # a torch tensor
                w.write_torch(name, data, zstd=zstd)
            else:
                w.add(name, data, zstd=zstd)
            return True
        _rewrite(r, path, put)


def _rewrite(r: Reader, target: PathLike, handled: Any) -> None:
    """Copies every object of r into a new file at target, except those
    handled(name, writer) takes care of (returning True)."""
    import ctypes
    from ._lib import check
    with Writer(target) as w:
        handle = r._require_open()
        files = (ctypes.c_void_p * 1)(handle.ptr)
        check(_lib.zt_writer_copy_file_fields(w._handle(), files, 1))
        for i, obj_name in enumerate(r.keys()):
            if not handled(obj_name, w):
                check(_lib.zt_writer_copy_object(w._handle(), r._object_at(i), None, 0))
