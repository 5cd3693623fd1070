"""Format v2 files (the original implementation's conformance corpus,
tests/data/v2-conformance) read through Reader, safe_open and load_file
unchanged."""
import numpy as np
import pytest

import ztensor
import ztensor.numpy as ztnp


@pytest.fixture
def corpus(interop_dir):
    return interop_dir.parent / "v2-conformance"


def test_reader_safe_open_and_load_file_read_v2(corpus):
    path = corpus / "valid" / "canonical-basic.zt"
    with ztensor.Reader(path) as r:
        assert r.version == "2"
        assert sorted(r.keys()) == ["a.bias", "a.weight", "tied"]
        bias = r["a.bias"]
        assert bias.dtype == np.float32 and bias.shape == (4,)
        assert bias.tobytes() == b"\x01" * 16
        assert r.info("a.weight").format == "dense"
        assert r["a.weight"].shape == (2, 4)
        r.verify()
    with ztnp.safe_open(path, framework="np") as f:
        assert sorted(f.keys()) == ["a.bias", "a.weight", "tied"]
        assert f.get_tensor("a.bias").tobytes() == b"\x01" * 16
    loaded = ztnp.load_file(path)
    assert loaded["a.bias"].tobytes() == b"\x01" * 16
    everything = ztensor.load_file(path)
    assert sorted(everything) == ["a.bias", "a.weight", "tied"]


def test_v2_rejection_names_its_rule(corpus):
    with pytest.raises(ztensor.ZTensorError, match=r"rejected \(ManifestHash\)"):
        ztensor.Reader(corpus / "reject" / "manifest-hash-mismatch.zt")
