"""A zTensor v2 root's shards resolved by the caller (zt_open_sharded,
ztensor_set.h; docs/v2.md "Shards"): Reader(path, shard_resolver=...).

A resolver is either a callable, resolver(name, size, digest) -> str | None,
given each shard's name, exact size and whole-file digest ("sha256:<hex>" or
"xxh3:<hex>") and answering a path or an http(s)/s3 URL (None: no such
file), or an IdentityScan(folder), the library's own identity resolver
(Appendix B: the .zt file in folder whose size and digest are the shard's)."""

import os
from ctypes import CFUNCTYPE, POINTER, Structure, byref, c_char_p, c_int, c_size_t, c_uint32, c_uint64, c_void_p, memmove
from typing import Any, Callable, List, Optional, Union

from ._lib import ZT_E_BUFFER_TOO_SMALL, ZT_E_NOT_FOUND, ZT_OK, OpenOptions, UrlOptions, check, lib
from ._types import PathLike

ZT_E_IO = -4


class ShardRequest(Structure):
    _fields_ = [("struct_size", c_uint32), ("reserved", c_uint32), ("root", c_char_p), ("name", c_char_p),
                ("size", c_uint64), ("digest", c_char_p)]


ShardResolverFn = CFUNCTYPE(c_int, c_void_p, POINTER(ShardRequest), c_void_p, c_size_t)


class ShardOptions(Structure):
    _fields_ = [("struct_size", c_uint32), ("reserved", c_uint32), ("resolve", c_void_p), ("user", c_void_p)]


lib.zt_shard_options_init.argtypes, lib.zt_shard_options_init.restype = [POINTER(ShardOptions)], None
lib.zt_open_sharded.argtypes = [c_char_p, POINTER(OpenOptions), POINTER(UrlOptions), POINTER(ShardOptions),
                                POINTER(c_void_p)]
lib.zt_open_sharded.restype = c_int
lib.zt_shard_scan_open.argtypes, lib.zt_shard_scan_open.restype = [c_char_p, POINTER(c_void_p)], c_int
lib.zt_shard_scan_close.argtypes, lib.zt_shard_scan_close.restype = [c_void_p], c_int


class IdentityScan:
    """The identity resolver over one folder: its .zt files listed by size
    once; each group of one size hashed once per algorithm, the first time a
    shard of that size is asked for. May serve several opens; close() (or a
    with block) once none is running. Opened files do not need it."""

    def __init__(self, folder: PathLike) -> None:
        out = c_void_p()
        check(lib.zt_shard_scan_open(os.fsencode(folder), byref(out)))
        self._scan: Optional[int] = out.value
        self.folder = os.fsdecode(folder)

    def close(self) -> None:
        if self._scan is not None:
            scan, self._scan = self._scan, None
            check(lib.zt_shard_scan_close(c_void_p(scan)))

    def __enter__(self) -> "IdentityScan":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass


Resolver = Union[IdentityScan, Callable[[str, int, str], Optional[str]]]


def open_sharded(location: Union[str, bytes], opts: Any, uopts: Any, resolver: Resolver, out: c_void_p) -> int:
    """zt_open_sharded with `resolver`; returns its status. An exception the
    callable raises is re-raised here, after the open returns."""
    sopts = ShardOptions()
    lib.zt_shard_options_init(byref(sopts))
    raised: List[BaseException] = []
    if isinstance(resolver, IdentityScan):
        if resolver._scan is None:
            raise ValueError("shard_resolver: the IdentityScan is closed")
        sopts.resolve = c_void_p(ctypes_address(lib.zt_shard_resolve_by_identity))
        sopts.user = c_void_p(resolver._scan)
        fn = None
    elif callable(resolver):
        find: Callable[[str, int, str], Optional[str]] = resolver

        def call(user: int, req: Any, location: int, capacity: int) -> int:
            try:
                r = req.contents
                where = find(r.name.decode("utf-8", "replace"), int(r.size), r.digest.decode("ascii", "replace"))
                if where is None:
                    return ZT_E_NOT_FOUND
                data = os.fsencode(where)
                if len(data) + 1 > capacity:
                    return ZT_E_BUFFER_TOO_SMALL
                memmove(location, data + b"\0", len(data) + 1)
                return ZT_OK
            except BaseException as e:  # noqa: B036 -- never across the C call
                raised.append(e)
                return ZT_E_IO
        fn = ShardResolverFn(call)
        sopts.resolve = c_void_p(ctypes_address(fn))
    else:
        raise TypeError(f"shard_resolver takes a callable or an IdentityScan, not {type(resolver).__name__}")
    status = int(lib.zt_open_sharded(location.encode() if isinstance(location, str) else location,
                                     opts, uopts, byref(sopts), byref(out)))
    del fn  # the resolver is called during the open only
    if raised:
        if status == ZT_OK and out.value:
            lib.zt_close(out)
            out.value = None
        raise raised[0]
    return status


def ctypes_address(fn: Any) -> int:
    from ctypes import cast
    return int(cast(fn, c_void_p).value or 0)
