"""Versioned structs (docs/versioning.md) are made by asking the library:
each options struct's size and defaults come from its *_init, and a newer
library whose struct has grown never writes past the binding's."""
import ctypes
import importlib

import pytest

# The module (the package binds the name _lib to the loaded library itself).
_lib = importlib.import_module("ztensor._lib")


@pytest.mark.parametrize("cls", list(_lib._INITS), ids=lambda c: c.__name__)
def test_binding_layout_is_the_librarys(cls):
    # The library's struct is the one the binding declares: a field added on
    # one side only shows up here, not as a misread field.
    assert _lib.library_struct_size(cls) == ctypes.sizeof(cls)


def test_options_carry_the_librarys_defaults():
    direct = _lib.OpenOptions()
    _lib.lib.zt_open_options_init(ctypes.byref(direct))
    made = _lib.new_struct(_lib.OpenOptions)
    assert bytes(made) == bytes(direct)
    assert made.max_decoded_size == 64 << 30
    w = _lib.new_struct(_lib.WriterOptions)
    assert (w.struct_size, w.zstd_level, w.sync, w.format) == (ctypes.sizeof(_lib.WriterOptions), 3, 1, 1)


def test_out_structs_are_zeroed_with_the_bindings_size():
    info = _lib.new_struct(_lib.ComponentInfo)
    assert info.struct_size == ctypes.sizeof(_lib.ComponentInfo)
    assert bytes(info)[4:] == bytes(ctypes.sizeof(_lib.ComponentInfo) - 4)


def test_a_grown_library_struct_is_cut_to_the_bindings(monkeypatch):
    # A later library whose zt_open_options has 64 more bytes: its init
    # fills all of them; the binding keeps its own fields and says so.
    size = ctypes.sizeof(_lib.OpenOptions)
    grown = size + 64

    def init(p):
        ctypes.memset(p, 0x5A, grown)
        ctypes.c_uint32.from_address(ctypes.addressof(p.contents)).value = grown

    monkeypatch.setitem(_lib._INITS, _lib.OpenOptions, init)
    monkeypatch.setitem(_lib._library_sizes, _lib.OpenOptions, grown)
    assert _lib.library_struct_size(_lib.OpenOptions) == grown
    made = _lib.new_struct(_lib.OpenOptions)
    assert made.struct_size == size
    assert bytes(made)[4:] == b"\x5a" * (size - 4)
