"""ztensor.numpy and ztensor.torch against what the safetensors documentation
promises for safetensors.numpy / safetensors.torch (written down here as
cases: safetensors itself is not installed and no network is used). The
same cases run for both frameworks through the `fw` fixture."""
import os
import subprocess
import sys

import numpy as np
import pytest

import ztensor
import ztensor.numpy as ztnp


class Np:
    name, framework, mod = "numpy", "np", ztnp

    @staticmethod
    def tensor(values, dtype="f32"):
        return np.asarray(values, dtype={"f32": np.float32, "i64": np.int64, "bool": np.bool_, "u8": np.uint8,
                                         "f64": np.float64, "c64": np.complex64}[dtype])

    @staticmethod
    def to_np(t):
        return np.asarray(t)


class Pt:
    name, framework = "torch", "pt"

    def __init__(self):
        self.torch = pytest.importorskip("torch")
        import ztensor.torch as ztpt
        self.mod = ztpt

    def tensor(self, values, dtype="f32"):
        t = self.torch
        return t.tensor(values, dtype={"f32": t.float32, "i64": t.int64, "bool": t.bool, "u8": t.uint8,
                                       "f64": t.float64, "c64": t.complex64}[dtype])

    @staticmethod
    def to_np(t):
        return t.numpy()


@pytest.fixture(params=["numpy", "torch"])
def fw(request):
    return Np() if request.param == "numpy" else Pt()


def sample(fw):
    return {"a": fw.tensor([[1, 2, 3], [4, 5, 6]]), "b": fw.tensor([7, 8], "i64"),
            "c": fw.tensor([True, False], "bool"),
            "s": fw.tensor(3.5, "f64"), "e": fw.tensor(np.zeros((0, 4)), "f32"), "z": fw.tensor([1 + 2j], "c64")}


def assert_same(fw, got, want):
    assert set(got) == set(want)
    for k in want:
        g, w = fw.to_np(got[k]), fw.to_np(want[k])
        assert g.dtype == w.dtype and g.shape == w.shape, k
        np.testing.assert_array_equal(g, w)


# -- save_file / load_file / save / load --------------------------------------
def test_save_file_load_file_round_trip(fw, tmp_path):
    p = tmp_path / "m.zt"
    fw.mod.save_file(sample(fw), p)
    assert_same(fw, fw.mod.load_file(p), sample(fw))


def test_save_load_bytes(fw):
    data = fw.mod.save(sample(fw), metadata={"k": "v"})
    assert isinstance(data, bytes) and data[:8] == b"ZTEN1000"
    assert_same(fw, fw.mod.load(data), sample(fw))
    assert_same(fw, fw.mod.load(bytearray(data)), sample(fw))
    assert_same(fw, fw.mod.load(memoryview(data)), sample(fw))
    with fw.mod.safe_open(data, framework=fw.framework) as f:
        assert f.metadata() == {"k": "v"}


def test_loaded_tensors_are_writable_and_the_file_unchanged(fw, tmp_path):
    p = tmp_path / "m.zt"
    fw.mod.save_file({"w": fw.tensor([1, 2, 3])}, p)
    before = p.read_bytes()
    t = fw.mod.load_file(p)["w"]
    t += 1
    np.testing.assert_array_equal(fw.to_np(t), [2, 3, 4])
    with fw.mod.safe_open(p, framework=fw.framework) as f:
        g = f.get_tensor("w")
        g *= 2
        np.testing.assert_array_equal(fw.to_np(g), [2, 4, 6])
    assert p.read_bytes() == before
    np.testing.assert_array_equal(fw.to_np(fw.mod.load_file(p)["w"]), [1, 2, 3])


def test_metadata_is_a_dict_of_str(fw, tmp_path):
    p = tmp_path / "m.zt"
    fw.mod.save_file({"a": fw.tensor([1])}, p, metadata={"format": fw.framework, "note": "é"})
    with fw.mod.safe_open(p, framework=fw.framework) as f:
        assert f.metadata() == {"format": fw.framework, "note": "é"}
    fw.mod.save_file({"a": fw.tensor([1])}, p)
    with fw.mod.safe_open(p, framework=fw.framework) as f:
        assert f.metadata() is None  # safetensors: None without metadata
    with pytest.raises(TypeError, match="'n'"):
        fw.mod.save_file({"a": fw.tensor([1])}, tmp_path / "bad.zt", metadata={"n": 3})
    assert not (tmp_path / "bad.zt").exists()


def test_non_tensor_values_are_refused_by_name(fw, tmp_path):
    with pytest.raises(ValueError, match="Key `x` is invalid"):
        fw.mod.save_file({"x": [1, 2]}, tmp_path / "m.zt")
    with pytest.raises(TypeError):
        fw.mod.save_file({1: fw.tensor([1])}, tmp_path / "m.zt")
    assert not (tmp_path / "m.zt").exists()


def test_a_failed_save_leaves_the_previous_file(fw, tmp_path):
    p = tmp_path / "m.zt"
    fw.mod.save_file({"old": fw.tensor([1])}, p)
    with pytest.raises(ValueError):
        fw.mod.save_file({"new": fw.tensor([2]), "bad": object()}, p)
    assert set(fw.mod.load_file(p)) == {"old"}


# -- safe_open -----------------------------------------------------------------
def test_safe_open_keys_get_tensor(fw, tmp_path):
    p = tmp_path / "m.zt"
    fw.mod.save_file({"zeta": fw.tensor([1]), "alpha": fw.tensor([2]), "mid": fw.tensor([3])}, p)
    with fw.mod.safe_open(p, framework=fw.framework, device="cpu") as f:
        assert f.keys() == ["alpha", "mid", "zeta"]  # sorted, as safetensors gives them
        # save_file writes in name order (one state dict, one file), so the
        # data order is the sorted order; a file written otherwise keeps its own.
        assert f.offset_keys() == ["alpha", "mid", "zeta"]
    with ztensor.Writer(p) as w:
        for name, value in (("zeta", 1), ("alpha", 2), ("mid", 3)):
            w.add(name, np.array([value], np.float32))
    with fw.mod.safe_open(p, framework=fw.framework, device="cpu") as f:
        assert f.offset_keys() == ["zeta", "alpha", "mid"]
        np.testing.assert_array_equal(fw.to_np(f.get_tensor("mid")), [3])
        with pytest.raises(KeyError, match="does not contain tensor nope"):
            f.get_tensor("nope")
    with pytest.raises(ValueError, match="framework nonsense is invalid"):  # also a SafetensorError
        fw.mod.safe_open(p, framework="nonsense")
    # safetensors has one safe_open; so does ztensor, for every module
    with ztensor.safe_open(p, framework=fw.framework) as f:
        assert type(f.get_tensor("mid")) is type(fw.tensor([3]))
    other = "np" if fw.framework == "pt" else "pt"
    if other == "pt":
        pytest.importorskip("torch")
    with fw.mod.safe_open(p, framework=other) as f:
        assert type(f.get_tensor("mid")) is not type(fw.tensor([3]))


def test_get_slice_matches_numpy_indexing(fw, tmp_path):
    full = np.arange(4 * 5 * 6, dtype=np.float32).reshape(4, 5, 6)
    p = tmp_path / "m.zt"
    fw.mod.save_file({"raw": fw.tensor(full), "packed": fw.tensor(full)}, p)
    ztensor.numpy.save_file({"packed": full}, tmp_path / "z.zt", zstd=True)
    cases = [np.s_[:], np.s_[1], np.s_[-1], np.s_[1:3], np.s_[1:3, :, 2:4], np.s_[..., 0], np.s_[::2, 1::2, ::-1],
             np.s_[2, ..., 3], np.s_[:, -2:], np.s_[3:1], np.s_[1, 2, 3], np.s_[::-3, 4:0:-2]]
    for path in (p, tmp_path / "z.zt"):
        with fw.mod.safe_open(path, framework=fw.framework) as f:
            s = f.get_slice("packed")
            assert s.get_shape() == [4, 5, 6] and s.get_dtype() == "F32" and len(s) == 4
            for idx in cases:
                if fw.framework == "pt" and any(isinstance(i, slice) and (i.step or 1) < 0
                                                for i in (idx if isinstance(idx, tuple) else (idx,))):
                    with pytest.raises(ValueError, match="step must be greater than zero"):  # torch's rule
                        s[idx]
                    continue
                got = fw.to_np(s[idx])
                assert got.shape == full[idx].shape, idx
                np.testing.assert_array_equal(got, full[idx])
            if fw.framework == "pt":  # torch's rules: a slice clamps, an int past the end is IndexError
                assert fw.to_np(s[10:20]).shape == (0, 5, 6) and fw.to_np(s[2:20]).shape == (2, 5, 6)
                with pytest.raises(IndexError):
                    s[4]
            else:
                with pytest.raises(ztensor.SafetensorError):  # safetensors raises where numpy would clip
                    s[10:20]
                with pytest.raises(ztensor.SafetensorError):
                    s[4]
            with pytest.raises(IndexError):
                s[0, 0, 0, 0]
            with pytest.raises(ValueError):
                s[::0]


def test_reader_slices_every_dtype_and_rank(tmp_path):
    arrays = {"i8": np.arange(-5, 7, dtype=np.int8).reshape(3, 4), "u16": np.arange(24, dtype=np.uint16),
              "c": (np.arange(6) + 1j).astype(np.complex128).reshape(2, 3), "s": np.array(7, np.int64),
              "b": np.array([[True, False, True]])}
    p = tmp_path / "r.zt"
    ztensor.save_file(arrays, p)
    with ztensor.Reader(p) as r:
        np.testing.assert_array_equal(r.get_slice("i8")[1:, ::3], arrays["i8"][1:, ::3])
        np.testing.assert_array_equal(r.read_slice("u16", np.s_[5:17:4]), arrays["u16"][5:17:4])
        np.testing.assert_array_equal(r.get_slice("c")[:, 1], arrays["c"][:, 1])
        assert r.get_slice("c").get_dtype() == "C128"
        got = r.get_slice("s")[...]
        assert got.shape == () and got == 7
        np.testing.assert_array_equal(r.get_slice("b")[0, 2], True)


# -- dtypes ----------------------------------------------------------------------
def test_numpy_dtypes_round_trip(tmp_path):
    arrays = {str(dt): np.arange(6).astype(dt).reshape(2, 3) for dt in
              (np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
               np.uint32, np.uint64, np.bool_, np.complex64, np.complex128)}
    arrays["big_endian"] = np.arange(3, dtype=">i4")
    arrays["strided"] = np.arange(12.0).reshape(3, 4)[:, ::2]
    back = ztnp.load(ztnp.save(arrays))
    for k, a in arrays.items():
        assert back[k].dtype == a.dtype.newbyteorder("<") and back[k].flags.writeable
        np.testing.assert_array_equal(back[k], a)
    with pytest.raises(TypeError, match="'o'"):
        ztnp.save({"o": np.array(["x"], dtype=object)})


def test_torch_every_dtype_round_trips(tmp_path):
    torch = pytest.importorskip("torch")
    import ztensor.torch as ztpt
    names = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
             "complex64", "complex128", "uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2",
             "float8_e4m3fnuz", "float8_e5m2fnuz"]
    base = torch.tensor([[0.5, -1.0, 2.0], [3.0, 0.0, 1.0]])
    tensors = {n: base.to(getattr(torch, n)) for n in names if hasattr(torch, n)}
    assert {"bfloat16", "float16", "complex64", "complex128", "bool"} <= set(tensors)
    p = tmp_path / "t.zt"
    ztpt.save_file(tensors, p)
    back = ztpt.load_file(p)
    for n, t in tensors.items():
        assert back[n].dtype == t.dtype and back[n].shape == t.shape, n
        assert torch.equal(back[n].view(torch.uint8), t.view(torch.uint8)) if t.dtype.is_floating_point and \
            t.element_size() == 1 else torch.equal(back[n], t), n
    with ztensor.Reader(p) as r:
        assert r.info("bfloat16").dtype == "bf16"
        assert r.get_slice("bfloat16").get_dtype() == "BF16"


def test_torch_types_it_lacks_are_refused_by_name(tmp_path):
    torch = pytest.importorskip("torch")
    import ztensor.torch as ztpt
    with ztensor.Writer(tmp_path / "f8.zt") as w:
        w.add("f8", np.array([0x38], np.uint8), dtype="f8_e4m3fn")
    if hasattr(torch, "float8_e4m3fn"):
        assert ztpt.load_file(tmp_path / "f8.zt")["f8"].dtype == torch.float8_e4m3fn
    else:
        with pytest.raises(TypeError, match="'f8' is f8_e4m3fn"):
            ztpt.load_file(tmp_path / "f8.zt")
    with pytest.raises(TypeError, match="'q'"):
        ztpt.save({"q": torch.quantize_per_tensor(torch.ones(2), 0.1, 0, torch.quint8)})
    with pytest.raises(ValueError, match="'sp'"):
        ztpt.save({"sp": torch.ones(2, 2).to_sparse()})
    with pytest.raises(NotImplementedError, match="meta tensor"):  # torch's, as safetensors lets it through
        ztpt.save({"m": torch.empty(2, device="meta")})
    ztpt.save_file({"w": torch.ones(2)}, tmp_path / "w.zt")
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="'w'.*cuda"):
            ztpt.load_file(tmp_path / "w.zt", device="cuda:0")
    with pytest.raises(RuntimeError):
        ztpt.safe_open(tmp_path / "w.zt", "pt", device="nowhere")


def test_torch_grad_noncontiguous_and_views(tmp_path):
    torch = pytest.importorskip("torch")
    import ztensor.torch as ztpt
    w = torch.randn(3, 4, requires_grad=True)
    tensors = {"w": w, "t": torch.arange(12).reshape(3, 4).t(), "conj": torch.tensor([1 + 2j]).conj(),
               "exp": torch.ones(1).expand(3)}
    for name in ("t", "exp"):  # safetensors refuses non-contiguous tensors, naming them
        with pytest.raises(ValueError, match=f"non contiguous tensor: `{name}`"):
            ztpt.save({name: tensors[name]})
    tensors = {k: v.contiguous() for k, v in tensors.items()}
    back = ztpt.load(ztpt.save(tensors))
    assert not back["w"].requires_grad and torch.equal(back["w"], w.detach())
    assert torch.equal(back["t"], torch.arange(12).reshape(3, 4).t())
    assert back["conj"].tolist() == [1 - 2j]
    assert back["exp"].tolist() == [1.0, 1.0, 1.0]


# -- shared tensors, save_model / load_model ---------------------------------------
def _tied_model(torch):
    class Tied(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(5, 3)
            self.head = torch.nn.Linear(3, 5, bias=False)
            self.head.weight = self.emb.weight
            self.norm = torch.nn.LayerNorm(3)
    return Tied()


def test_save_file_refuses_shared_tensors_naming_them(tmp_path):
    torch = pytest.importorskip("torch")
    import ztensor.torch as ztpt
    m = _tied_model(torch)
    with pytest.raises(RuntimeError, match=r"(?s)share memory.*head.weight.*save_model") as e:
        ztpt.save_file(m.state_dict(), tmp_path / "m.zt")
    assert "emb.weight" in str(e.value)
    assert isinstance(e.value, ValueError)  # the original zTensor package's class
    assert not (tmp_path / "m.zt").exists()
    base = torch.arange(10.0)
    ztpt.save_file({"lo": base[:5], "hi": base[5:]}, tmp_path / "disjoint.zt")  # same storage, no overlap
    assert ztpt.load_file(tmp_path / "disjoint.zt")["hi"].tolist() == [5, 6, 7, 8, 9]


def test_save_model_load_model_keep_ties(tmp_path):
    torch = pytest.importorskip("torch")
    import ztensor.torch as ztpt
    m = _tied_model(torch)
    p = tmp_path / "m.zt"
    ztpt.save_model(m, p, metadata={"user": "x"})
    with ztpt.safe_open(p, framework="pt") as f:
        assert f.keys() == ["emb.weight", "norm.bias", "norm.weight"]  # stored once
        assert f.metadata() == {"user": "x", "head.weight": "emb.weight"}
    m2 = _tied_model(torch)
    assert ztpt.load_model(m2, p) == ([], [])
    assert m2.head.weight.data_ptr() == m2.emb.weight.data_ptr()  # still tied
    for k, v in m.state_dict().items():
        assert torch.equal(m2.state_dict()[k], v), k


def test_save_model_refuses_overlaps_no_tensor_covers(tmp_path):
    torch = pytest.importorskip("torch")
    import ztensor.torch as ztpt
    m = torch.nn.Module()
    base = torch.arange(10.0)
    m.register_buffer("a", base[0:6])
    m.register_buffer("b", base[4:10])  # overlaps a; neither covers the storage
    with pytest.raises(RuntimeError, match=r"amongst: \{'.', '.'\}.*None is covering the entire storage"):
        ztpt.save_model(m, tmp_path / "m.zt")
    assert not (tmp_path / "m.zt").exists()


def test_load_model_strict_reports_missing_and_unexpected(tmp_path):
    torch = pytest.importorskip("torch")
    import ztensor.torch as ztpt
    p = tmp_path / "m.zt"
    ztpt.save_file({"weight": torch.ones(2, 2), "extra": torch.ones(1)}, p)
    m = torch.nn.Linear(2, 2)
    with pytest.raises(RuntimeError, match=r'Missing key\(s\) in state_dict: "bias"[\s\S]*Unexpected.*"extra"'):
        ztpt.load_model(m, p)
    missing, unexpected = ztpt.load_model(m, p, strict=False)
    assert missing == ["bias"] and unexpected == ["extra"]
    assert torch.equal(m.weight.detach(), torch.ones(2, 2))


# -- zero-copy, verify, memory, streaming, batched ------------------------------------
def test_zero_copy_mode_is_copy_on_write_numpy(tmp_path):
    p = tmp_path / "m.zt"
    ztnp.save_file({"w": np.arange(4.0)}, p)
    before = p.read_bytes()
    with ztnp.safe_open(p, framework="np", copy=False) as f:
        w = f.get_tensor("w")
        assert w.flags.writeable
        w += 1  # this process's pages only
        assert w[0] == 1.0
    assert p.read_bytes() == before
    assert ztensor.load_file(p, copy=False)["w"].flags.writeable
    assert ztensor.load_file(p)["w"][0] == 0.0


CRASH_CASES = {
    "dlpack": "torch.from_dlpack(ztensor.Reader(p).tensor('w')).add_(1)",
    "dlpack_zero_copy": "torch.from_dlpack(ztensor.Reader(p).tensor('w', copy=False)).add_(1)",
    "numpy_view_via_torch": "torch.from_numpy(ztensor.Reader(p)['w']).add_(1)",
    "load_file": "torch.from_numpy(ztensor.load_file(p)['w']).add_(1)",
    "numpy_load_file": "torch.from_numpy(ztensor.numpy.load_file(p)['w']).add_(1)",
    "torch_load_file": "ztensor.torch.load_file(p)['w'].add_(1)",
    "safe_open_zero_copy": "ztensor.torch.safe_open(p, 'pt', copy=False).get_tensor('w').add_(1)",
}


def test_in_place_ops_on_loaded_tensors_do_not_crash(tmp_path):
    # Once a SIGSEGV (the mapping was read-only), so in a child process; one
    # child runs every case (importing torch takes seconds), printing each
    # case's name when it is done, so a crash names the case that died.
    pytest.importorskip("torch")
    p = tmp_path / "m.zt"
    ztnp.save_file({"w": np.arange(1 << 14, dtype=np.float32)}, p)
    before = p.read_bytes()
    code = ["import sys, warnings, torch, ztensor, ztensor.numpy, ztensor.torch",
            "warnings.simplefilter('ignore')", "p = sys.argv[1]"]
    for case in sorted(CRASH_CASES):
        code += [CRASH_CASES[case], f"print({case!r}, flush=True)"]
    r = subprocess.run([sys.executable, "-c", "\n".join(code), str(p)], capture_output=True, text=True, timeout=300)
    done = r.stdout.split()
    assert r.returncode == 0, (f"exit {r.returncode} in case {sorted(CRASH_CASES)[len(done)]!r}", r.stderr[-2000:])
    assert done == sorted(CRASH_CASES)
    assert p.read_bytes() == before


def test_verify_catches_damage_on_read(fw, tmp_path):
    p = tmp_path / "m.zt"
    fw.mod.save_file({"w": fw.tensor(np.arange(64.0)), "ok": fw.tensor([1])}, p, digest="sha256")
    with ztensor.Reader(p) as r:
        offset = r.info("w").components[0].offset
    data = bytearray(p.read_bytes())
    data[offset + 9] ^= 0xFF
    p.write_bytes(bytes(data))
    fw.mod.load_file(p)  # without verify the damage goes unnoticed, as before
    with pytest.raises(ztensor.ZTensorError, match="w") as e:
        fw.mod.load_file(p, verify=True)
    assert e.value.status == -51  # ZT_E_DIGEST_MISMATCH
    with fw.mod.safe_open(p, framework=fw.framework, verify=True) as f:
        np.testing.assert_array_equal(fw.to_np(f.get_tensor("ok")), [1])
        with pytest.raises(ztensor.ZTensorError):
            f.get_tensor("w")
        with pytest.raises(ztensor.ZTensorError):
            f.get_slice("w")[0:2]
    with pytest.raises(ztensor.ZTensorError):  # zero-copy views are checked too
        ztensor.load_file(p, copy=False, verify=True)
    with fw.mod.safe_open(p, framework=fw.framework, verify=True, copy=False) as f:
        with pytest.raises(ztensor.ZTensorError):
            f.get_tensor("w")


def test_reader_from_memory_keeps_the_buffer(tmp_path):
    import gc
    import mmap
    data = ztnp.save({"w": np.arange(5, dtype=np.int32)})
    r = ztensor.Reader(bytearray(data))
    view = r["w"]
    r.close()
    del r
    gc.collect()
    np.testing.assert_array_equal(view, np.arange(5))  # the buffer lives on in the view
    p = tmp_path / "m.zt"
    p.write_bytes(data)
    with open(p, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        with ztensor.Reader(mm) as r:
            np.testing.assert_array_equal(r.read_many()["w"], np.arange(5))
    with pytest.raises(ztensor.ZTensorError):
        ztensor.Reader(b"not a zt file at all, nothing like one")
    with pytest.raises(TypeError, match="Reader takes a path or a buffer"):
        ztensor.Reader(12)


def test_writer_memory_and_streaming(tmp_path):
    with ztensor.Writer.memory(digest="crc32c") as w:
        w.add("a", np.ones(3, np.float32))
        with w.add_stream("big", (6, 4), "i64", zstd=True) as append:
            for start in range(0, 6, 2):
                append(np.arange(start * 4, (start + 2) * 4).reshape(2, 4))
        w.begin_object("bits", "dense", (3,))
        w.write_blob_begin("bits", "data", "bf16")
        w.write_blob_append(np.array([1.0, 2.0], np.float32))  # rounded to bf16
        w.write_blob_append(ztensor.float32_to_bf16([3.0]).tobytes())
        w.write_blob_end()
    data = w.getvalue()
    with ztensor.Reader(data) as r:
        r.verify()
        np.testing.assert_array_equal(r["big"], np.arange(24).reshape(6, 4))
        np.testing.assert_array_equal(ztensor.bf16_to_float32(r["bits"]), [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="getvalue"):
        with ztensor.Writer(tmp_path / "f.zt") as w2:
            w2.add("a", np.ones(1))
        w2.getvalue()
    with pytest.raises(ztensor.ZTensorError):
        with ztensor.Writer.memory() as w3:
            with w3.add_stream("short", (10,), "f32") as append:
                append(np.ones(3, np.float32))  # 3 of 10 elements: refused at the end


def test_memory_writer_bytes_equal_the_file_writers(tmp_path, monkeypatch):
    import tempfile
    from ztensor._lib import has
    if has("zt_writer_create_memory"):  # no scratch file then
        monkeypatch.setattr(tempfile, "mkdtemp", lambda *a, **k: pytest.fail("memory writer used a scratch folder"))
    tensors = {"a": np.arange(10.0), "b": np.ones((3, 3), np.int8)}
    data = ztnp.save(tensors, metadata={"m": "1"}, zstd=True, digest="sha256")
    ztnp.save_file(tensors, tmp_path / "f.zt", metadata={"m": "1"}, zstd=True, digest="sha256")
    assert data == (tmp_path / "f.zt").read_bytes()
    with pytest.raises(ValueError):  # refused before anything is written; the writer is discarded
        ztnp.save({"a": np.ones(2), "b": "x"})


def test_writer_to_a_stream(tmp_path):
    import io
    tensors = {"a": np.arange(10.0), "big": np.ones((300, 300), np.float32)}
    sink = io.BytesIO()
    with ztensor.Writer.to_stream(sink, digest="sha256") as w:
        for k, v in tensors.items():
            w.add(k, v)
    assert sink.getvalue() == ztnp.save(tensors, digest="sha256")

    class Full(io.RawIOBase):
        def write(self, b):
            raise OSError(28, "No space left on device")
    with pytest.raises(ztensor.ZTensorError, match="No space left") as e:
        with ztensor.Writer.to_stream(Full()) as w:
            w.add("big", tensors["big"])
    assert isinstance(e.value.__cause__, OSError)


def test_iter_chunks_streams_in_pieces(tmp_path):
    p = tmp_path / "m.zt"
    big = np.arange(10_000, dtype=np.int64)
    with ztensor.Writer(p, digest="sha256") as w:
        w.add("raw", big)
        w.add("z", big, zstd=True)
        w.add("c", np.arange(5) * (1 + 1j))
    with ztensor.Reader(p) as r:
        for name in ("raw", "z"):
            pieces = list(r.iter_chunks(name, chunk_bytes=4096))
            assert len(pieces) == 20 and all(x.size <= 512 for x in pieces)
            np.testing.assert_array_equal(np.concatenate(pieces), big)
        np.testing.assert_array_equal(np.concatenate(list(r.iter_chunks("c", chunk_bytes=20))), np.arange(5) * (1 + 1j))
    data = bytearray(p.read_bytes())
    with ztensor.Reader(p) as r:
        off = r.info("z").components[0].offset
    data[off + 20] ^= 0x01
    with ztensor.Reader(bytes(data), verify=True) as r:
        with pytest.raises(ztensor.ZTensorError):
            for _ in r.iter_chunks("z", chunk_bytes=4096):
                pass


def test_read_many_and_copies(tmp_path):
    p = tmp_path / "m.zt"
    with ztensor.Writer(p) as w:
        w.add("a", np.arange(6.0).reshape(2, 3))
        w.add("z", np.arange(100), zstd=True)
        w.add("h", np.array([1.0, 2.0], np.float32), dtype="bf16")
        w.add_sparse_csr("s", [1.0], [0], [0, 1], (1, 1))
    with ztensor.Reader(p) as r:
        got = r.read_many(["a", "z"])
        assert got["a"].flags.writeable and got["a"].shape == (2, 3)
        np.testing.assert_array_equal(got["z"], np.arange(100))
        assert set(r.read_many()) == {"a", "z", "h"}
        with pytest.raises(ValueError, match="'s' is sparse_csr"):
            r.read_many(["s"])
        with pytest.raises(KeyError):
            r.read_many(["nope"])
        torch = pytest.importorskip("torch")
        t = torch.from_dlpack(r.tensor("h"))  # a private copy, typed as the library types it
        assert t.dtype == torch.bfloat16 and t.tolist() == [1.0, 2.0]
        t.add_(1)
        assert ztensor.bf16_to_float32(r["h"]).tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="'s' is a sparse_csr object"):
        ztnp.load_file(p)


def test_help_reads_like_the_safetensors_docs():
    import ztensor.numpy
    for fn in (ztnp.save_file, ztnp.load_file, ztnp.save, ztnp.load, ztnp.safe_open):
        assert fn.__doc__ and ">>>" not in fn.__doc__ and fn.__annotations__
    assert "ztensor.torch" in ztensor.__doc__ and "safe_open" in ztensor.numpy.__doc__
