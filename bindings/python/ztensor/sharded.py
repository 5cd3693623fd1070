"""Sharded checkpoints: an index (model.zt.index.json) and the .zt shards it
names, read as one mapping (zt_open_set; the convention is docs/sharding.md)."""

import ctypes
import os
from ctypes import byref, c_char_p, c_size_t, c_void_p
from typing import Any, Dict, List, Literal, Optional, Tuple

from . import _attributes
from ._lib import ZTensorError, ZT_OK, check, lib, take_string, verify_file
from ._types import ObjectValue, PathLike
from ._table import Table as _Table, read as _read_table
from ._handle import _FileHandle
from .reader import Reader


class _SetHandle(_FileHandle):
    """Owns one zt_set * (and so every shard). Zero-copy arrays hold it too,
    so the shards stay mapped until the reader is closed AND the last such
    array is gone."""

    __slots__ = ()

    def __del__(self) -> None:
        ptr, self.ptr = self.ptr, None
        if ptr and lib is not None:
            lib.zt_set_close(ptr)


class ShardedReader(Reader):
    """A sharded checkpoint read as one Reader: reader[name], info(name),
    tensor(name), read(name, role), ... work as for a single file, whichever
    shard holds the object.

        with ztensor.ShardedReader("model.zt.index.json") as r:
            w = r["model.layers.0.mlp.up_proj.weight"]
            print(r.metadata, r.shards)

    Opening checks the index against the shards (each tensor in the shard
    the index names, no tensor in two shards, no unlisted object) and raises
    ZTensorError naming the tensor and the shards otherwise.
    """

    def __init__(self, index: PathLike, *, mmap: bool = True, strict: bool = False,
                 sparse: Literal["tuple", "scipy"] = "tuple", verify: bool = False) -> None:
        if sparse not in ("tuple", "scipy"):
            raise ValueError('sparse must be "tuple" or "scipy"')
        self._sparse = sparse
        opts = self._open_options(mmap, strict, verify)
        out = c_void_p()
        check(lib.zt_open_set(os.fsencode(index), byref(opts), byref(out)))
        handle = _SetHandle(out.value)
        self._h = handle
        self.path = os.fsdecode(index)
        count = c_size_t()
        check(lib.zt_set_object_count(handle.ptr, byref(count)))
        # The set lists each shard's objects in its manifest order, shards in
        # order: the shards' tables (one call each with libztensor >= 1.2)
        # give every name without a call per object.
        self._shard_tables: List[Tuple[Optional[int], _Table]] = [(f, _read_table(f)) for f, _ in self._shard_files()]
        self._names: List[str] = [n for _, t in self._shard_tables for n in t.names]
        if len(self._names) != count.value:  # not the documented order: ask the set object by object
            self._names = []
            for i in range(count.value):
                info = self._c_info(self._object_at(i))
                self._names.append(ctypes.string_at(info.name, info.name_len).decode("utf-8", "surrogateescape"))
        self._index = {n: i for i, n in enumerate(self._names)}
        self._attributes: Any = None
        self._attributes_read = False

    def _object_at(self, i: int) -> Optional[int]:
        out = c_void_p()
        check(lib.zt_set_object_at(self._require_open().ptr, i, byref(out)))
        return out.value

    def _shard_files(self) -> List[Tuple[Optional[int], str]]:
        h = self._require_open()
        n = c_size_t()
        check(lib.zt_set_shard_count(h.ptr, byref(n)))
        out: List[Tuple[Optional[int], str]] = []
        for i in range(n.value):
            f, loc = c_void_p(), c_char_p()
            check(lib.zt_set_shard_at(h.ptr, i, byref(f), byref(loc)))
            out.append((f.value, (loc.value or b"").decode("utf-8", "surrogateescape")))
        return out

    def _file_of(self, name: str, handle: _FileHandle) -> Optional[int]:
        """The shard file holding `name` (zt_file_read_many batches per file)."""
        where = getattr(self, "_shard_of", None)
        if where is None:
            where = {}
            for f, table in self._shard_tables:
                where.update(dict.fromkeys(table.rows["object"].tolist(), f))
            self._shard_of = where
        obj = self._object(name)
        return where.get(obj)

    def _dense_sources(self, handle: _FileHandle) -> List[Tuple[Optional[int], _Table]]:
        """Every shard with its table, for the batched reads."""
        return self._shard_tables

    @property
    def shards(self) -> List[str]:
        """The shard locations as the index writes them, in set order."""
        return [loc for _, loc in self._shard_files()]

    @property  # type: ignore[override]
    def metadata(self) -> Any:  # the index's metadata, not an object's (Reader.metadata(name))
        """The index's "metadata" member (None when absent)."""
        p = c_void_p()
        check(lib.zt_set_metadata_json(self._require_open().ptr, byref(p)))
        return _attributes.from_json_text(take_string(p.value))

    @property
    def version(self) -> str:
        """The format versions of the shards, comma-separated when they differ."""
        seen: List[str] = []
        for f, _ in self._shard_files():
            v = c_char_p()
            check(lib.zt_file_version(f, byref(v)))
            text = (v.value or b"").decode()
            if text not in seen:
                seen.append(text)
        return ",".join(seen)

    @property
    def attributes(self) -> Any:
        """The union of the shards' file attributes (zt split gives every
        shard those of the file it split); None when no shard has any. A key
        with different values in two shards raises ZTensorError."""
        if not self._attributes_read:
            merged: Optional[Dict[Any, Any]] = None
            for f, loc in self._shard_files():
                p = c_void_p()
                check(lib.zt_file_attributes_json(f, byref(p)))
                attrs = _attributes.from_json_text(take_string(p.value))
                if attrs is None:
                    continue
                if not isinstance(attrs, dict):
                    raise ZTensorError(-33, f"shard '{loc}': file attributes are not a map")
                merged = {} if merged is None else merged
                for k, v in attrs.items():
                    if k in merged and merged[k] != v:
                        raise ZTensorError(-10, f"file attribute {k!r} differs between shards (in '{loc}')")
                    merged[k] = v
            self._attributes = merged
            self._attributes_read = True
        return self._attributes

    def verify(self, strict: bool = False) -> None:
        """Checks every object of every shard, as Reader.verify does."""
        failures: List[Tuple[Optional[str], Optional[str], int, Optional[str]]] = []
        first = ZT_OK
        for f, _ in self._shard_files():
            status = verify_file(f, strict, failures)
            if first == ZT_OK:
                first = status
        if first != ZT_OK:
            err = ZTensorError(first, "; ".join(f"{m}" for _, _, _, m in failures) or "verification failed")
            err.failures = failures  # type: ignore[attr-defined]
            raise err


def load_sharded(index: PathLike) -> Dict[str, ObjectValue]:
    """Reads every object of a sharded checkpoint into a dict, as load_file
    does for one file.

        tensors = ztensor.load_sharded("model.zt.index.json")
    """
    with ShardedReader(index) as r:
        return {name: r[name] for name in r}
