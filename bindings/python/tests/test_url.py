"""The URL entry points of the binding without a server (the remote suite,
tests/remote, runs them against a real nginx): argument checks, and a clean
ZTensorError when nothing listens."""
import socket

import pytest

import ztensor

ZT_E_IO = -4


def closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_open_url_refuses_other_schemes():
    with pytest.raises(ValueError):
        ztensor.open_url("ftp://example.org/model.zt")


def test_url_only_options_are_refused_for_paths(tmp_path):
    with pytest.raises(ValueError):
        ztensor.Reader(str(tmp_path / "m.zt"), bearer_token="t")


def test_unknown_url_option():
    with pytest.raises(ValueError, match="unknown url option"):
        ztensor.open(f"http://127.0.0.1:{closed_port()}/m.zt", url_options={"no_such_option": 1})


def test_nothing_listening_is_a_clean_io_error():
    url = f"http://user:pw-secret@127.0.0.1:{closed_port()}/m.zt?sig=qs-secret"
    with pytest.raises(ztensor.ZTensorError) as e:
        ztensor.open_url(url, retries=0, bearer_token="tok-secret")
    assert e.value.status == ZT_E_IO
    for secret in ("pw-secret", "qs-secret", "tok-secret"):
        assert secret not in str(e.value)
    assert "127.0.0.1" in str(e.value)
