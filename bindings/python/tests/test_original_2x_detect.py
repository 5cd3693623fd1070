"""detect(), convert() and page_size() as the original 2.x package has them
(pie-project/ztensor main: ztensor-py/src/lib.rs over
ztensor-compat/src/detect.rs): its labels ("pt", not "pytorch"), its zip
rule (a member ending in data.pkl), ONNX by extension, and a ValueError
"unsupported: cannot detect the format of PATH" for anything else."""

import io
import os
import zipfile

import numpy
import pytest

import ztensor


def test_detect_labels_a_torch_zip_pt_and_any_other_zip_npz(tmp_path):
    pt = tmp_path / "model.bin"  # the name does not decide: the members do
    with zipfile.ZipFile(pt, "w") as z:
        z.writestr("archive/data.pkl", b"\x80\x02}q\x00.")
    assert ztensor.detect(str(pt)) == "pt"
    npz = tmp_path / "arrays.pt"
    buf = io.BytesIO()
    numpy.savez(buf, a=numpy.arange(3))
    npz.write_bytes(buf.getvalue())
    assert ztensor.detect(str(npz)) == "npz"


def test_detect_onnx_by_extension_and_refuses_the_unknown_as_2x(tmp_path):
    blob = b"\x08\x07\x12\x04test"  # protobuf: no magic
    (tmp_path / "m.onnx").write_bytes(blob)
    assert ztensor.detect(str(tmp_path / "m.onnx")) == "onnx"
    unknown = tmp_path / "m.bin"
    unknown.write_bytes(blob)
    with pytest.raises(ValueError) as e:
        ztensor.detect(str(unknown))
    assert type(e.value) is ValueError
    assert str(e.value) == f"unsupported: cannot detect the format of {unknown}"
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    with pytest.raises(ValueError, match="cannot detect the format of"):
        ztensor.detect(str(empty))
    with pytest.raises(OSError):  # 2.x: an io error is an OSError
        ztensor.detect(str(tmp_path / "missing.zt"))


def test_detect_safetensors_header_bound_is_2x_100_mib(tmp_path):
    big = tmp_path / "big"
    big.write_bytes((100 << 20).to_bytes(8, "little") + b"{}")
    with pytest.raises(ValueError):
        ztensor.detect(str(big))
    ok = tmp_path / "ok"
    ok.write_bytes(((100 << 20) - 1).to_bytes(8, "little") + b"{}")
    assert ztensor.detect(str(ok)) == "safetensors"


def test_page_size_is_the_os_page_size():
    assert ztensor.page_size() == os.sysconf("SC_PAGESIZE")


def _safetensors(path):
    import struct
    header = b'{"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}}'
    path.write_bytes(struct.pack("<Q", len(header)) + header + struct.pack("<4f", 1, 2, 3, 4))
    return path


def test_convert_writes_v2_canonical_as_2x(tmp_path):
    st = _safetensors(tmp_path / "m.safetensors")
    out = tmp_path / "m.zt"
    size = ztensor.convert(str(st), str(out))
    assert size == out.stat().st_size
    assert out.read_bytes()[:8] == b"\x89ZT2\r\n\x1a\n"  # 2.x writes container v2
    with ztensor.Reader(str(out)) as r:
        assert r.canonical().canonical
    with ztensor.open(str(out)) as src:
        assert src["w"].caps.verify and src["w"].location.offset % 4096 == 0


def test_convert_align_is_honoured_non_canonical(tmp_path):
    st = _safetensors(tmp_path / "m.safetensors")
    out = tmp_path / "a.zt"
    ztensor.convert(str(st), str(out), align=1 << 20)
    assert out.read_bytes()[:8] == b"\x89ZT2\r\n\x1a\n"
    with ztensor.open(str(out)) as src:
        assert src["w"].location.offset % (1 << 20) == 0  # canonical would place it at 128 KiB
        assert src["w"].caps.verify and src["w"].tobytes() == (tmp_path / "m.safetensors").read_bytes()[-16:]
    with pytest.raises(ValueError):
        ztensor.convert(str(st), str(tmp_path / "b.zt"), align=3)


def test_verify_damage_raises_valueerror_as_2x(tmp_path):
    path = tmp_path / "v.zt"
    with ztensor.Writer(str(path)) as w:  # the 2.x form: v2, every part digested
        w.add("x", bytes(range(64)), shape=[64], dtype="u8")
    assert tuple(ztensor.verify(str(path))) == (1, 0)
    with ztensor.open(str(path)) as src:
        offset = src["x"].location.offset
    data = bytearray(path.read_bytes())
    data[offset + 3] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError) as e:
        ztensor.verify(str(path))
    assert isinstance(e.value, ztensor.ZTensorError)
    with ztensor.open(str(path)) as src, pytest.raises(ValueError):
        src.verify(deep=True)
    (tmp_path / "junk.zt").write_bytes(b"\x89ZT2\r\n\x1a\n" + bytes(100))
    with pytest.raises(ValueError):
        ztensor.verify(str(tmp_path / "junk.zt"))
    with pytest.raises(OSError):
        ztensor.verify(str(tmp_path / "missing.zt"))
