"""safetensors' sub-byte and FNUZ dtypes (safetensors/src/tensor.rs: its
Dtype enum and bitsize; bindings/python/src/lib.rs: what get_tensor gives).
Files with F4, F6_E2M3, F6_E3M2, F8_E8M0, F8_E4M3FNUZ and F8_E5M2FNUZ open;
F4 reads as uint8 pairs along the last axis (torch's float4_e2m1fn_x2, the
header's last dimension halved, as safetensors gives it to torch); F6 has
no array of whole bytes and raises SafetensorError naming it (safetensors:
"Dtype not understood"), its bytes still readable through Reader.read."""
import json
import struct

import numpy as np
import pytest

import ztensor
import ztensor._safetensors_format as stf
import ztensor.numpy as ztnp

F4 = bytes([0x21, 0x43, 0x65, 0x07])  # [2, 4] F4: 8 elements, 4 bytes


def st_bytes(entries):
    """safetensors bytes as its writer lays them out (entries in its order)."""
    header, data = {}, b""
    for name, dtype, shape, raw in entries:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + data


ENTRIES = [("n5", "F8_E5M2FNUZ", [1], b"\x05"), ("n4", "F8_E4M3FNUZ", [2], b"\x04\x14"),
           ("e8", "F8_E8M0", [2], b"\x7f\x80"), ("g", "F6_E3M2", [2, 4], bytes(range(6))),
           ("h", "F6_E2M3", [4], b"\x01\x02\x03"), ("f", "F4", [2, 4], F4)]


@pytest.fixture
def path(tmp_path):
    p = tmp_path / "sub.safetensors"
    p.write_bytes(st_bytes(ENTRIES))
    return p


def test_every_dtype_opens_with_its_name_and_shape(path):
    with ztnp.safe_open(path, framework="np") as f:
        assert sorted(f.keys()) == sorted(e[0] for e in ENTRIES)
        for name, dtype, shape, _ in ENTRIES:
            s = f.get_slice(name)
            assert (s.get_dtype(), s.get_shape()) == (dtype, shape)
    with ztensor.Reader(path) as r:
        assert r.info("f").components[0].logical_type == "f4_e2m1"
        assert r.info("g").components[0].logical_type == "f6_e3m2"
        assert r.read("g").tobytes() == bytes(range(6))  # the packed bytes, as stored
        assert r.read("f").tobytes() == F4


@pytest.mark.parametrize("copy", [True, False])
def test_f4_reads_as_uint8_pairs(path, copy):
    with ztnp.safe_open(path, framework="np", copy=copy) as f:
        t = f.get_tensor("f")
        assert t.dtype == np.uint8 and t.shape == (2, 2) and t.tobytes() == F4
        assert f.get_tensor("n4").tolist() == [4, 20] and f.get_tensor("e8").tolist() == [127, 128]
    with ztensor.Reader(path) as r:
        assert r["f"].shape == (2, 2)
        assert r.read_many(["f", "n5"])["f"].shape == (2, 2)
        assert r.mapped_views(["n4", "f", "n5"])["f"].tobytes() == F4


def test_f6_has_no_array_and_says_so(path):
    with ztnp.safe_open(path, framework="np") as f:
        with pytest.raises(ztensor.SafetensorError, match="'h': f6_e2m3 of shape \\[4\\] packs 6-bit elements"):
            f.get_tensor("h")
    with pytest.raises(ztensor.SafetensorError, match="f6_e3m2"):
        ztnp.load_file(path)
    with ztensor.Reader(path) as r:
        with pytest.raises(ztensor.ZTensorError, match="Reader.read"):
            r["g"]
        with pytest.raises(ztensor.ZTensorError):
            r.tensor("g").__dlpack__()  # no DLPack type either (the library refuses it)


def test_f4_of_an_odd_last_dimension(tmp_path):
    p = tmp_path / "odd.safetensors"
    p.write_bytes(st_bytes([("f", "F4", [2, 3], b"\x21\x43\x65")]))  # 6 elements: whole bytes
    with ztnp.safe_open(p, framework="np") as f:
        assert f.get_slice("f").get_shape() == [2, 3]
        with pytest.raises(ztensor.SafetensorError, match="must be even"):
            f.get_tensor("f")


def test_saved_back_as_safetensors_writes(path, tmp_path):
    # The same bytes safetensors' writer gives for these tensors: its order
    # (larger dtypes first), F4's header shape from the uint8 pairs doubled.
    no_f6 = [e for e in ENTRIES if not e[1].startswith("F6")]
    src = tmp_path / "no_f6.safetensors"
    src.write_bytes(st_bytes(no_f6))
    with ztensor.Reader(src) as r:
        arrays = r.read_many()
        entries = stf.entries_of([(n, arrays[n], r.element_type(n)) for n in reversed(list(arrays))])
    out = tmp_path / "out.safetensors"
    stf.write_file(entries, out, None)
    assert out.read_bytes() == src.read_bytes()


def test_torch_gets_float4_e2m1fn_x2_or_a_clear_refusal(path):
    torch = pytest.importorskip("torch")
    import ztensor.torch as ztpt
    with ztpt.safe_open(path, framework="pt") as f:
        if hasattr(torch, "float4_e2m1fn_x2"):
            t = f.get_tensor("f")
            assert t.dtype == torch.float4_e2m1fn_x2 and tuple(t.shape) == (2, 2)
        else:  # safetensors: AttributeError from getattr(torch, "float4_e2m1fn_x2")
            with pytest.raises(TypeError, match="f4_e2m1, which this torch"):
                f.get_tensor("f")


def test_v2_f4_e2m1_reads_as_pairs(tmp_path):
    with ztensor.Writer(tmp_path / "p.zt", canonical=False, align=4096) as w:  # the 2.x form
        w.add("q", bytes([0x21] * 16), shape=[4, 8], dtype="u8", logical="f4_e2m1")
    with ztensor.Reader(tmp_path / "p.zt") as r:
        q = r["q"]
        assert q.shape == (4, 4) and q.dtype == np.uint8 and (q == 0x21).all()
        assert r.read_many()["q"].shape == (4, 4)
        assert ztensor.load_file(tmp_path / "p.zt")["q"].shape == (4, 4)
