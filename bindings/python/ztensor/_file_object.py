"""Reading from a Python file object (anything with read and seek: an open
file, io.BytesIO, an fsspec file) through zt_open_io: the callback that
hands the library byte ranges, trusting nothing the file object returns."""

import ctypes
import os
import threading
from ctypes import byref, c_size_t, c_void_p
from typing import Any, Optional

from ._handle import _file_position, _read_result
from ._lib import ZT_OK, Io, IoReadAt, OpenOptions, check, lib, new_struct


def open_file_object(fileobj: Any, opts: OpenOptions, out: c_void_p) -> Any:
    """Opens a Python file object (anything with read and seek: an open
    file, io.BytesIO, an fsspec file) through zt_open_io. The library
    calls back for byte ranges; the calls are serialised (threads=1 and
    a lock), each a seek and a read."""
    lock = threading.Lock()
    fileobj.seek(0, os.SEEK_END)
    size = _file_position(fileobj.tell(), f"{type(fileobj).__name__}.tell()")

    def read_at(_user: Optional[int], offset: int, length: int, dst: Optional[int],
                out_len: "ctypes._Pointer[c_size_t]") -> int:
        # Nothing the file object returns is trusted: a read() of more
        # than `length` bytes would overflow dst (the library's buffer).
        try:
            with lock:
                where = fileobj.seek(offset)
                if where is not None and _file_position(where, "seek()") != offset:
                    raise ValueError(f"seek({offset}) returned {where}")
                data = _read_result(fileobj.read(length), length)
            n = len(data)
            if n:
                ctypes.memmove(dst or 0, data, n)
            out_len[0] = n
            return ZT_OK
        except BaseException as e:  # never unwind through the library
            lib.zt_io_set_error(f"{type(fileobj).__name__}.read at {offset}: {type(e).__name__}: {e}"
                                .encode("utf-8", "replace"))
            return -4  # ZT_E_IO

    callback = IoReadAt(read_at)
    io = new_struct(Io)
    io.size = size
    io.read_at = callback
    name = getattr(fileobj, "name", None) or getattr(fileobj, "path", None)
    io.name = str(name).encode("utf-8", "replace") if name is not None else None
    opts.threads = 1
    opts.access = 1  # no mapping: every byte comes through read_at
    check(lib.zt_open_io(byref(io), byref(opts), byref(out)))
    return callback
