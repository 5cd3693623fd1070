"""The original package's current API (2.x: pie-project/ztensor main,
ztensor-py/python/ztensor/_ztensor.pyi), side by side with ours; cases
from its tests/test_api.py, run on the files this library writes: v2 where
the 2.x form of Writer makes them (test_the_2x_form_writes_v2_as_2x_does),
1.2 where our form or format="1.2" does."""

import builtins
import struct
from collections.abc import Mapping

import numpy
import pytest

import ztensor


def f32(*vals):
    return struct.pack(f"<{len(vals)}f", *vals)


@pytest.fixture
def simple(tmp_path):
    path = tmp_path / "simple.zt"
    with ztensor.Writer(str(path)) as w:
        w.add("a.weight", f32(1, 2, 3, 4, 5, 6), shape=[2, 3], dtype="f32")
        w.add("b.bias", bytes([7] * 8), shape=[8], dtype="u8")
    return path


def test_source_is_a_mapping_of_tensors(simple):
    with ztensor.open(str(simple)) as src:
        assert isinstance(src, Mapping) and isinstance(src, ztensor.Source)
        assert len(src) == 2 and "a.weight" in src and "nope" not in src
        assert list(src) == ["a.weight", "b.bias"]
        assert src.keys() == ["a.weight", "b.bias"]
        assert [t.name for t in src.values()] == ["a.weight", "b.bias"]
        assert [k for k, _ in src.items()] == ["a.weight", "b.bias"]
        assert src.get("nope") is None
        with pytest.raises(KeyError):
            src["nope"]
        assert src.files == [str(simple)] and src.provenance == "root"


def test_closing_is_explicit(simple):
    src = ztensor.open(str(simple))
    assert len(src) == 2
    src.close()
    with pytest.raises(ValueError):
        len(src)


def test_tensor_metadata(simple):
    with ztensor.open(str(simple)) as src:
        t = src["a.weight"]
        assert isinstance(t, ztensor.Tensor)
        assert t.name == "a.weight" and t.shape == [2, 3] and t.dtype == "f32"
        assert t.logical is None and t.layout == "dense" and t.nbytes == 24
        assert t.parts == ["data"] and t.part == "data"


def test_bytes_buffer_and_dlpack(simple):
    with ztensor.open(str(simple)) as src:
        assert src["a.weight"].tobytes() == f32(1, 2, 3, 4, 5, 6)
        assert src["b.bias"].tobytes() == bytes([7] * 8)
        view = memoryview(src["a.weight"])
        assert view.readonly and len(view) == 24 and bytes(view) == f32(1, 2, 3, 4, 5, 6)
        arr = numpy.from_dlpack(src["a.weight"])
        assert arr.dtype == numpy.float32 and arr.shape == (2, 3) and arr[1, 2] == 6.0
    del src
    assert arr[0, 0] == 1.0 and arr[1, 2] == 6.0  # the export outlives the handle
    src = ztensor.open(str(simple))
    view = memoryview(src["a.weight"])
    src.close()
    del src
    assert bytes(view) == f32(1, 2, 3, 4, 5, 6)


def test_location_and_caps(simple):
    with ztensor.open(str(simple)) as src:
        at = src["a.weight"].location
        assert at.path == str(simple) and at.nbytes == 24
        with builtins.open(simple, "rb") as f:
            f.seek(at.offset)
            assert f.read(at.nbytes) == f32(1, 2, 3, 4, 5, 6)
        for t in src.values():
            caps = t.caps
            assert caps.verify is t.verify()
            assert caps.alignment >= 1 and caps.map and caps.locate
            assert t.location.nbytes == t.nbytes
            t.prefetch()
            t.evict()
            assert t.tobytes()  # read again after evict


def test_an_encoded_part_is_copied_not_located(tmp_path):
    path = tmp_path / "enc.zt"
    with ztensor.Writer(str(path), canonical=False) as w:  # canonical form is raw, as in 2.x
        w.add("z", bytes(4096), shape=[4096], dtype="u8", encoding="zstd")
    with ztensor.open(str(path)) as src:
        t = src["z"]
        assert not t.caps.map and not t.caps.locate
        with pytest.raises(ValueError):
            t.location
        arr = numpy.from_dlpack(t)
        assert arr.shape == (4096,) and arr.dtype == numpy.uint8 and not arr.any()
        with pytest.raises(BufferError):
            t.__dlpack__(copy=False)


def test_parts_are_tensors_too(tmp_path):
    path = tmp_path / "csr.zt"
    with ztensor.Writer(path) as w:
        w.add_sparse_csr("s", numpy.array([1.0, 2.0], numpy.float32), [0, 2], [0, 1, 2], (2, 3))
    with ztensor.open(str(path)) as src:
        t = src["s"]
        assert t.part is None and t.layout == "sparse_csr" and set(t.parts) == {"values", "indices", "indptr"}
        values = t["values"]
        assert values.part == "values" and values.dtype == "f32"
        assert numpy.from_dlpack(values).tolist() == [1.0, 2.0]
        with pytest.raises(KeyError):
            t["nope"]


def test_open_accepts_a_list_and_refuses_a_name_in_two(tmp_path):
    first, second = tmp_path / "a.zt", tmp_path / "b.zt"
    with ztensor.Writer(str(first)) as w:
        w.add("x", bytes([1] * 4), shape=[4], dtype="u8")
    with ztensor.Writer(str(second)) as w:
        w.add("y", bytes([2] * 4), shape=[4], dtype="u8")
    with ztensor.open([str(first), str(second)]) as src:
        assert sorted(src) == ["x", "y"] and src["y"].tobytes() == bytes([2] * 4)
    with pytest.raises(ztensor.ZTensorError, match="'x'"):
        ztensor.open([str(first), str(first)])


def test_writer_2x_keywords_attributes_verify_convert_detect(tmp_path):
    path = tmp_path / "w.zt"
    with ztensor.Writer(str(path), canonical=False, align=4096, publish=True) as w:
        w.add("x", bytes([1] * 4), [4], "u8")  # positional, as 2.x
        w.set_attributes({"k": "v"})
    with ztensor.open(str(path)) as src:
        assert src.attributes == {"k": "v"}
    with pytest.raises(ValueError):
        ztensor.Writer(str(tmp_path / "bad.zt"), align=3)
    checked, undigested = ztensor.verify(str(path))
    assert (checked, undigested) == (1, 0)  # the 2.x form of add digests every part, as 2.x does
    with ztensor.Writer(str(tmp_path / "d.zt"), digest="sha256") as w:
        w.add("x", bytes(8), shape=[2], dtype="f32")
    assert tuple(ztensor.verify(str(tmp_path / "d.zt"), deep=True)) == (1, 0)
    with ztensor.Writer(str(path), append=True) as w:
        w.add("y", bytes([2] * 2), shape=[2], dtype="u8")
    assert sorted(ztensor.open(str(path))) == ["x", "y"]
    # safetensors in, canonical .zt out (2.x test_convert_adds_what_a_projection_could_not)
    st = tmp_path / "w.safetensors"
    header = b'{"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}}'
    header += b" " * (-len(header) % 8)
    st.write_bytes(struct.pack("<Q", len(header)) + header + f32(1, 2, 3, 4))
    assert ztensor.detect(str(st)) == "safetensors" and ztensor.detect(str(path)) == "zt"
    with ztensor.open(str(st)) as src:
        assert not src["w"].caps.verify  # safetensors carries no digests
    size = ztensor.convert(str(st), str(tmp_path / "c.zt"))
    assert size == (tmp_path / "c.zt").stat().st_size
    with ztensor.open(str(tmp_path / "c.zt")) as src:
        assert src["w"].tobytes() == f32(1, 2, 3, 4)
    assert ztensor.page_size() >= 4096 and ztensor.page_size() & (ztensor.page_size() - 1) == 0


def test_the_two_apis_told_apart_by_arguments(simple):
    # open(path) / open([paths]): 2.x's Source; with Reader keywords: our Reader (numpy arrays)
    assert isinstance(ztensor.open(str(simple)), ztensor.Source)
    r = ztensor.open(str(simple), mmap=True)
    assert isinstance(r, ztensor.Reader) and r["a.weight"].shape == (2, 3)
    r = ztensor.open(simple.read_bytes())  # a file's bytes: a Reader over them, as before
    assert isinstance(r, ztensor.Reader) and r["a.weight"].shape == (2, 3)
    # Writer.add: an array, or bytes with shape=
    with ztensor.Writer(simple.parent / "both.zt") as w:
        w.add("arr", numpy.ones((2, 2), numpy.float32))
        w.add("raw", f32(1, 1, 1, 1), shape=[2, 2], dtype="f32")
    r = ztensor.Reader(simple.parent / "both.zt")
    numpy.testing.assert_array_equal(r["arr"], r["raw"])


def _versioned(capsule):
    """The DLManagedTensorVersioned behind a "dltensor_versioned" capsule
    (2.x test_api.py's reader of it), through a private ctypes function."""
    import ctypes
    get = ctypes.pythonapi._FuncPtr(("PyCapsule_GetPointer", ctypes.pythonapi))
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    from ztensor._dlpack import DLManagedTensorVersioned
    return ctypes.cast(get(capsule, b"dltensor_versioned"), ctypes.POINTER(DLManagedTensorVersioned)).contents


def test_dlpack_versions_devices_and_streams(simple):
    with ztensor.open(str(simple)) as src:
        t = src["a.weight"]
        cap = t.__dlpack__(max_version=(1, 0))  # kept: the struct lives as long as the capsule
        m = _versioned(cap)
        assert (m.version.major, m.version.minor) == (1, 0)
        assert m.flags & 1, "a mapping is not the consumer's to write"  # DLPACK_FLAG_BITMASK_READ_ONLY
        assert m.dl_tensor.ndim == 2 and [m.dl_tensor.shape[i] for i in range(2)] == [2, 3]
        assert (m.dl_tensor.dtype.code, m.dl_tensor.dtype.bits) == (2, 32)
        copied = t.__dlpack__(max_version=(1, 0), copy=True)
        assert not (_versioned(copied).flags & 1)
        assert t.__dlpack_device__() == (1, 0)
        with pytest.raises(BufferError):
            t.__dlpack__(dl_device=(2, 0))
        with pytest.raises(ValueError):
            t.__dlpack__(stream=object())


def test_errors_and_names_as_2x(tmp_path):
    first, second = tmp_path / "a.zt", tmp_path / "b.zt"
    for path in (first, second):
        with ztensor.Writer(str(path)) as w:
            w.add("shared", bytes([1] * 4), shape=[4], dtype="u8")
    with pytest.raises(ValueError, match="shared"):
        ztensor.open([str(first), str(second)])
    with pytest.raises(ValueError, match="pick one"):
        ztensor.Writer(str(tmp_path / "x.zt"), canonical=False, append=True, publish=True)
    with ztensor.open(str(first)) as src:
        assert src.provenance == "root"
    with ztensor.open([str(first)]) as src:
        assert src.provenance == "root"
    # an unpadded safetensors header leaves the data unaligned: read, converted, digested
    st = tmp_path / "model.safetensors"
    header = b'{"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}}'
    st.write_bytes(struct.pack("<Q", len(header)) + header + f32(1, 2, 3, 4))
    with ztensor.open(str(st)) as src:
        assert src.provenance == "projection" and not src["w"].caps.map
        assert src["w"].tobytes() == f32(1, 2, 3, 4)
    ztensor.convert(str(st), str(tmp_path / "model.zt"))
    with ztensor.open(str(tmp_path / "model.zt")) as src:
        assert src["w"].caps.verify and src["w"].verify() and src["w"].tobytes() == f32(1, 2, 3, 4)


def test_add_object_and_stream_in_the_2x_form(tmp_path):
    # test_api.py: test_a_single_part_tensor_resolves_whatever_it_is_called,
    # test_verify_covers_every_part, test_streaming_a_tensor_that_is_not_in_memory
    path = tmp_path / "o.zt"
    payload = bytes(range(256)) * 4
    # format="1.2": this zt.quant_group/1 object lacks the attributes v2's
    # profile requires (bits, axis, packing, ...), which 2.x does not check
    with ztensor.Writer(str(path), canonical=False, format="1.2") as w:
        w.add_object("t", [4], {"only": {"dtype": "u8", "data": bytes(range(4))}}, layout="example.one/1")
        w.add_object("q", [4, 4], {"data": {"dtype": "u8", "data": bytes(range(16))},
                                   "scales": {"dtype": "u8", "data": bytes([8] * 4), "logical": "f8_e8m0fnu"}},
                     layout="zt.quant_group/1", attributes={"group_size": 4})
        w.add_object("mine", "my_format", (2,), {"data": numpy.zeros(2, numpy.float32)})  # ours, by its format
        with w.stream("big", [1024], {"data": {"dtype": "u8", "nbytes": len(payload)}}) as sink:
            assert sink.part == "data"
            for i in range(0, len(payload), 64):
                sink.write(payload[i:i + 64])
            assert sink.written == len(payload)
    with ztensor.open(str(path)) as src:
        t = src["t"]
        assert t.parts == ["only"] and t.part == "only" and t.tobytes() == bytes(range(4))
        q = src["q"]
        assert q.verify() is True and q["data"].verify() is True and q["scales"].verify() is True
        assert src["big"].tobytes() == payload
    assert ztensor.Reader(path).info("mine").format == "my_format"
    w = ztensor.Writer(str(tmp_path / "short.zt"))
    with pytest.raises(ValueError, match="got 3 of 8"):
        with w.stream("s", [8], {"data": {"dtype": "u8", "nbytes": 8}}) as sink:
            sink.write(b"abc")
    assert not (tmp_path / "short.zt").exists()


def test_open_of_one_path_still_answers_the_readers_methods(tmp_path):
    # ztensor.open(path) returned a Reader before the 2.x API took the name:
    # its methods stay reachable on the Source of one file.
    path = tmp_path / "one.zt"
    ztensor.save_file({"w": numpy.arange(4, dtype=numpy.float32)}, path)
    with ztensor.open(str(path)) as src:
        assert isinstance(src, Mapping)
        assert src.io_stats() is not None
        assert list(src.read_numpy(["w"])["w"]) == [0, 1, 2, 3]
        with pytest.raises(AttributeError):
            src.no_such_method


def test_the_2x_form_writes_v2_as_2x_does(tmp_path):
    # test_api.py: test_location_is_an_address, test_caps_match_what_happens,
    # test_parts_are_tensors_too; Writer(path) given none of our 1.2 options
    # writes v2, canonical (64 KiB placement) unless canonical=False.
    path = tmp_path / "c.zt"
    with ztensor.Writer(str(path)) as w:
        w.add("b", bytes([7] * 8), shape=[8], dtype="u8")
        w.add("a", f32(1, 2, 3), shape=[3], dtype="f32")
    assert path.read_bytes()[:8] == b"\x89ZT2\r\n\x1a\n" and ztensor.detect(str(path)) == "zt"
    with ztensor.open(str(path)) as src:
        assert list(src) == ["a", "b"] and src.provenance == "root"  # 2.x: names sorted
        at = src["a"].location
        assert at.offset % 65536 == 0 and src["a"].caps.alignment >= 65536
        with builtins.open(path, "rb") as f:
            f.seek(at.offset)
            assert f.read(at.nbytes) == f32(1, 2, 3)
    with ztensor.Writer(str(tmp_path / "q.zt"), canonical=False, align=4096) as w:
        w.add("q", bytes([1] * 16), shape=[32], dtype="u8", logical="f4_e2m1")
    with ztensor.open(str(tmp_path / "q.zt")) as src:
        q = src["q"]
        assert q.logical == "f4_e2m1" and q["data"].nbytes == 16 and q.location.offset % 4096 == 0
        with pytest.raises(TypeError, match="f4_e2m1"):
            numpy.from_dlpack(q)
        with pytest.raises(BufferError):  # a DLPack exporter's error too
            q.__dlpack__()
    # our forms, or any of our 1.2 options, keep spec 1.2
    for name, make in (("ours.zt", lambda p: ztensor.Writer(p)), ("digest.zt", lambda p: ztensor.Writer(p, digest="sha256"))):
        with make(str(tmp_path / name)) as w:
            w.add("x", numpy.ones(2, numpy.float32))
            w.add("y", bytes(4), shape=[4], dtype="u8")
        assert (tmp_path / name).read_bytes()[:4] == b"ZTEN"
    with ztensor.Writer(str(tmp_path / "d.zt"), digest="sha256") as w:
        w.add("y", bytes(4), shape=[4], dtype="u8")
    assert (tmp_path / "d.zt").read_bytes()[:4] == b"ZTEN"


@pytest.mark.parametrize("generation", ["1.2", 2])
def test_index_locates_and_reads_without_mapping(tmp_path, generation):
    # test_api.py: test_an_indexed_source_locates_but_does_not_map; 2.x's
    # index(): "names, shapes, and addresses, but no borrowed bytes"
    path = tmp_path / "i.zt"
    with ztensor.Writer(str(path), format=generation, canonical=False) as w:
        w.add("a", f32(1, 2, 3, 4, 5, 6), shape=[2, 3], dtype="f32")
        w.add("z", bytes(64), shape=[64], dtype="u8", encoding="zstd")
    with ztensor.index(str(path)) as src:
        assert isinstance(src, ztensor.Source) and list(src) == ["a", "z"]
        a = src["a"]
        assert a.caps.locate and not a.caps.map and not a.caps.evict
        assert (a.shape, a.dtype, a.nbytes, a.parts, a.part) == ([2, 3], "f32", 24, ["data"], "data")
        with pytest.raises((BufferError, ValueError)):
            memoryview(a)
        assert a.tobytes() == f32(1, 2, 3, 4, 5, 6)
        with builtins.open(path, "rb") as f:
            f.seek(a.location.offset)
            assert f.read(a.location.nbytes) == a.tobytes()
        typed = numpy.from_dlpack(a)  # a copy of its own
        assert typed.shape == (2, 3) and typed.dtype == numpy.float32 and typed[1, 2] == 6
        with pytest.raises(BufferError):
            a.__dlpack__(copy=False)
        assert a.verify() is True and a["data"].tobytes() == a.tobytes()
        z = src["z"]  # encoded: neither mapped nor located, read on request
        assert not z.caps.locate and z.tobytes() == bytes(64) and z.nbytes == 64
        with pytest.raises(ValueError):
            z.location
    with ztensor.index([str(path)]) as src:
        assert src.provenance == "root" and len(src) == 2
