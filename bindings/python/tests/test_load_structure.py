"""What a whole-file load builds, beyond the values (test_native checks
those): the work issue 36 took out of the per-tensor cost, checked by its
structure, never by time (bench/python_load_bench.py measures the time).

- load_file never builds the name -> row index of the object table (a
  dict of one int per tensor): it reads every object, by position;
- ztensor.torch.load_file gives plain leaf tensors over the one buffer
  (made by unbind with autograd's dispatch keys excluded), not autograd
  views of it, and leaves torch's dispatch state as it found it.
"""
import numpy as np
import pytest

import ztensor
import ztensor.numpy as ztnp
from ztensor import _table


def write(path, count=50):
    rng = np.random.default_rng(3)
    tensors = {f"w{i:03d}": rng.random((4, 6), dtype=np.float32) for i in range(count)}
    tensors["bias"] = rng.random(6).astype(np.float64)
    tensors["scalar"] = np.float32(2.5).reshape(())
    ztnp.save_file(tensors, path)
    return tensors


@pytest.fixture
def index_builds(monkeypatch):
    """How many times a Table built its name index (counted through a
    wrapper around the lazy property)."""
    built = []
    original = _table.Table.index

    def counting(table):
        if table._index is None:
            built.append(len(table.names))
        return original.fget(table)

    monkeypatch.setattr(_table.Table, "index", property(counting))
    return built


def test_numpy_load_file_builds_no_name_index(tmp_path, index_builds):
    path = str(tmp_path / "m.zt")
    tensors = write(path)
    loaded = ztnp.load_file(path)
    assert index_builds == []
    assert list(loaded) == sorted(tensors)
    for name, value in tensors.items():
        np.testing.assert_array_equal(loaded[name], value)
    assert loaded["w000"].flags.writeable


def test_torch_load_file_builds_no_name_index(tmp_path, index_builds):
    pytest.importorskip("torch")
    import ztensor.torch as ztpt
    path = str(tmp_path / "m.zt")
    tensors = write(path)
    loaded = ztpt.load_file(path)
    assert index_builds == []
    assert sorted(loaded) == sorted(tensors)


def test_a_lookup_by_name_builds_the_index_once(tmp_path, index_builds):
    path = str(tmp_path / "m.zt")
    write(path)
    with ztensor.Reader(path) as r:
        assert index_builds == []  # opening lists names, without the index
        assert "w007" in r and "nope" not in r
        np.testing.assert_array_equal(r.read_many(["w007", "bias"])["w007"], r["w007"])
        assert r.format_of("w001") == "dense"
        assert index_builds == [52]


def test_torch_load_file_gives_leaf_tensors_over_one_buffer(tmp_path):
    torch = pytest.importorskip("torch")
    import ztensor.torch as ztpt
    path = str(tmp_path / "m.zt")
    tensors = write(path)
    excluded = getattr(torch._C, "_dispatch_tls_local_exclude_set", lambda: None)
    before = str(excluded())  # DispatchKeySet has no ==
    loaded = ztpt.load_file(path)
    assert str(excluded()) == before  # the guard around unbind is gone
    group = [loaded[f"w{i:03d}"] for i in range(50)]
    first = group[0]
    for k, t in enumerate(group):
        np.testing.assert_array_equal(t.numpy(), tensors[f"w{k:03d}"])
        assert t.shape == (4, 6) and t.dtype == torch.float32
        # A leaf of its own, not an autograd view of the group's block.
        assert not t._is_view() and t._base is None and t.is_leaf
        assert not t.requires_grad and not t.is_inference()
        # Over the one buffer: the group's block, tensor after tensor.
        assert t.storage().data_ptr() == first.storage().data_ptr()
        assert t.data_ptr() - first.data_ptr() == k * 4 * 6 * 4
    assert loaded["scalar"].shape == () and float(loaded["scalar"]) == 2.5
    assert not loaded["scalar"]._is_view()
    # Independent: an in-place op bumps only its own version counter and
    # changes only its own values.
    group[3].add_(1)
    assert group[3]._version == 1 and group[2]._version == 0 and group[4]._version == 0
    np.testing.assert_array_equal(group[4].numpy(), tensors["w004"])
    np.testing.assert_array_equal(group[3].numpy(), tensors["w003"] + 1)
    # Normal tensors for autograd later: views of them are views, and
    # gradients flow.
    w = group[5].requires_grad_()
    view = w.view(-1)
    assert view._is_view() and view._base is w
    (view * 3).sum().backward()
    assert torch.equal(w.grad, torch.full((4, 6), 3.0))


def test_torch_load_keeps_working_under_no_grad_and_inference_mode(tmp_path):
    torch = pytest.importorskip("torch")
    import ztensor.torch as ztpt
    path = str(tmp_path / "m.zt")
    tensors = write(path, count=5)
    with torch.no_grad():
        loaded = ztpt.load_file(path)
    assert not loaded["w001"].is_inference()
    np.testing.assert_array_equal(loaded["w001"].numpy(), tensors["w001"])
    with torch.inference_mode():
        inside = ztpt.load_file(path)
    np.testing.assert_array_equal(inside["w002"].numpy(), tensors["w002"])
    x = torch.ones(2, requires_grad=True)
    (x * 2).sum().backward()  # autograd works after the loads
    assert torch.equal(x.grad, torch.full((2,), 2.0))
