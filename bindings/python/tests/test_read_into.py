"""Reader.read_into: checks before it writes (issue 36, §1), from the
original 1.x package's contract (ztensor-py Reader.read_into: "Must match
tensor shape/dtype", filled with np.copyto / Tensor.copy_) and its dict
form read_into({name: dst})."""

import numpy as np
import pytest

import ztensor


@pytest.fixture
def path(tmp_path):
    p = tmp_path / "m.zt"
    with ztensor.Writer(p) as w:
        w.add("f32", np.arange(12, dtype=np.float32).reshape(3, 4))
        w.add("i16", np.arange(6, dtype=np.int16).reshape(2, 3))
        w.add("bf16", ztensor.float32_to_bf16(np.array([1.5, -2.0, 3.25], np.float32)), dtype="bf16")
        w.add("f8", np.array([0x38, 0x40], np.uint8), dtype="f8_e4m3fn")
        w.add("z", np.arange(8, dtype=np.float64), zstd=True)
    return p


SENTINEL = 7


def _untouched(*arrays):
    return all(bool((a == np.asarray(SENTINEL).astype(a.dtype)).all()) for a in arrays)


def test_same_shape_and_dtype_is_read_straight_in(path):
    with ztensor.Reader(path) as r:
        out = np.full((3, 4), SENTINEL, np.float32)
        assert r.read_into("f32", out) is out
        np.testing.assert_array_equal(out, np.arange(12, dtype=np.float32).reshape(3, 4))
        z = np.zeros(8)
        r.read_into("z", z)  # zstd: decoded
        np.testing.assert_array_equal(z, np.arange(8.0))


@pytest.mark.parametrize("shape", [(12,), (4, 3), (3, 4, 1), (2, 4), (3, 5)])
def test_a_wrong_shape_raises_and_writes_nothing(path, shape):
    with ztensor.Reader(path) as r:
        out = np.full(shape, SENTINEL, np.float32)
        with pytest.raises(ValueError, match=r"'f32' has shape \[3, 4\]"):
            r.read_into("f32", out)
        assert _untouched(out)


def test_a_different_dtype_converts_as_np_copyto(path):
    with ztensor.Reader(path) as r:
        wide = np.full((3, 4), SENTINEL, np.float64)  # the case: was garbage
        r.read_into("f32", wide)
        np.testing.assert_array_equal(wide, np.arange(12.0).reshape(3, 4))
        as_float = np.zeros((2, 3), np.float32)
        r.read_into("i16", as_float)  # same_kind: int -> float is allowed by np.copyto
        np.testing.assert_array_equal(as_float, np.arange(6.0).reshape(2, 3))
        bf = np.zeros(3, np.float32)
        r.read_into("bf16", bf)  # values, not the uint16 bit patterns
        np.testing.assert_array_equal(bf, [1.5, -2.0, 3.25])
        bits = np.zeros(3, np.uint16)
        r.read_into("bf16", bits)
        np.testing.assert_array_equal(bits, ztensor.float32_to_bf16(np.array([1.5, -2.0, 3.25], np.float32)))


@pytest.mark.parametrize("name,dtype", [("f32", np.int32), ("f32", np.int16), ("i16", np.uint16), ("f32", np.bool_),
                                        ("f8", np.float32), ("f8", np.int8)])
def test_a_cast_np_copyto_refuses_raises_value_error_untouched(path, name, dtype):
    with ztensor.Reader(path) as r:
        shape = r.info(name).shape
        out = np.full(shape, SENTINEL, dtype)
        with pytest.raises(ValueError):
            r.read_into(name, out)
        assert _untouched(out)


def test_read_only_and_strided_destinations(path):
    with ztensor.Reader(path) as r:
        ro = np.full((3, 4), SENTINEL, np.float32)
        ro.flags.writeable = False
        with pytest.raises(ValueError, match="read-only"):
            r.read_into("f32", ro)
        big = np.full((3, 8), SENTINEL, np.float32)
        r.read_into("f32", big[:, ::2])  # a strided view: filled through a copy
        np.testing.assert_array_equal(big[:, ::2], np.arange(12, dtype=np.float32).reshape(3, 4))
        assert _untouched(big[:, 1::2])


def test_byte_buffers_take_exactly_the_bytes(path):
    with ztensor.Reader(path) as r:
        raw = bytearray(48)
        r.read_into("f32", raw)
        assert np.frombuffer(raw, np.float32).tolist() == list(range(12))
        for size in (47, 49, 100):
            short = bytearray([SENTINEL]) * size
            with pytest.raises(ValueError, match="48 bytes"):
                r.read_into("f32", short)
            assert set(short) == {SENTINEL}


def test_dict_form_fills_all_or_none(path):
    with ztensor.Reader(path) as r:
        a = np.full((3, 4), SENTINEL, np.float32)
        b = np.full((2, 3), SENTINEL, np.int64)
        c = np.full(8, SENTINEL, np.float64)
        targets = {"f32": a, "i16": b, "z": c}
        assert r.read_into(targets) is targets
        np.testing.assert_array_equal(a, np.arange(12, dtype=np.float32).reshape(3, 4))
        np.testing.assert_array_equal(b, np.arange(6).reshape(2, 3))
        np.testing.assert_array_equal(c, np.arange(8.0))
        # one bad destination (the last): none is written
        a2, b2 = np.full((3, 4), SENTINEL, np.float32), np.full((2, 3), SENTINEL, np.int16)
        with pytest.raises(ValueError):
            r.read_into({"f32": a2, "i16": b2, "z": np.zeros(7)})
        assert _untouched(a2, b2)
        with pytest.raises(KeyError):
            r.read_into({"f32": a2, "nope": b2})
        assert _untouched(a2, b2)
        with pytest.raises(TypeError):
            r.read_into("f32")
        with pytest.raises(TypeError):
            r.read_into({"f32": a2}, a2)


def test_torch_destinations(path):
    torch = pytest.importorskip("torch")
    with ztensor.Reader(path) as r:
        t = torch.full((3, 4), float(SENTINEL))
        r.read_into("f32", t)
        assert t.tolist() == np.arange(12, dtype=np.float32).reshape(3, 4).tolist()
        d = torch.zeros(3, 4, dtype=torch.float64)  # converts, as Tensor.copy_
        r.read_into("f32", d)
        assert d.tolist() == np.arange(12.0).reshape(3, 4).tolist()
        bf = torch.zeros(3, dtype=torch.bfloat16)
        r.read_into("bf16", bf)
        assert bf.float().tolist() == [1.5, -2.0, 3.25]
        wrong = torch.full((4, 3), float(SENTINEL))
        with pytest.raises(ValueError, match="shape"):
            r.read_into("f32", wrong)
        assert bool((wrong == SENTINEL).all())
        strided = torch.full((4, 3), float(SENTINEL)).t()
        r.read_into("f32", strided)
        assert strided.tolist() == np.arange(12, dtype=np.float32).reshape(3, 4).tolist()
        leaf = torch.zeros(3, 4, requires_grad=True)
        with pytest.raises(ValueError, match="requires grad"):
            r.read_into("f32", leaf)
        both = {"f32": torch.zeros(3, 4), "i16": np.zeros((2, 3), np.int16)}
        r.read_into(both)
        assert both["f32"].sum().item() == 66 and both["i16"].sum() == 15
