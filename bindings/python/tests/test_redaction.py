"""A URL's credentials never reach a repr or a message (issue 37,
docs/remote.md "Security"): the binding's redact_url follows the library's
rule exactly (checked here against the library's own messages), Writer,
save_file, zt_open and zt_migrate refuse a URL as a local path with it
redacted and make no file from it, and remove_tensors / replace_tensor
refuse one before reading it. (Reader and ShardedReader reprs over a real
server: tests/remote/test_log_redaction.py.)"""
import ctypes
import os

import numpy as np
import pytest

import ztensor
from ztensor._lib import lib
from ztensor._redact import redact_url

URLS = [
    "http://user:pw@example.org/m.zt?sig=1",
    "https://a@b:c@example.org:8443/d/m.zt?x=1&y=2#f",
    "HTTPS://example.org/m.zt#frag?x",
    "http://example.org/a@b/c.zt?",
    "http://user@example.org",
    "http://example.org?x/y@z",
    "https://[::1]:9/p;q?r",
    "s3://bkt/key?v=1#2.zt",
    "s3://u:p@bkt/k.zt",
    "S3://bkt/a@b.zt",
    "ftp://bob:pw@127.0.0.1/x.zt?y",
    "file://u@/etc/x?y",
    "svn+ssh://u:p@h/r",
]


def library_shown(url):
    """How the library quotes `url` in a message (zt_writer_create's refusal)."""
    w = ctypes.c_void_p()
    assert lib.zt_writer_create(url.encode(), None, ctypes.byref(w)) != 0
    msg = lib.zt_last_error().decode()
    start = msg.index("the path '") + len("the path '")
    return msg[start:msg.index("' is a URL")]


@pytest.mark.parametrize("url", URLS)
def test_binding_and_library_agree(url):
    assert redact_url(url) == library_shown(url)


def test_the_rule():
    assert redact_url("http://user:pw@example.org/m.zt?sig=1") == "http://<credentials>@example.org/m.zt?<redacted>"
    assert redact_url("s3://bkt/key?v=1#2.zt") == "s3://bkt/key?v=1#2.zt"  # a literal key
    assert redact_url("s3://u:p@bkt/k.zt") == "s3://<credentials>@bkt/k.zt"
    assert redact_url("/local/pa?th@x") == "/local/pa?th@x"
    assert redact_url("C://x?y@z") == "C://x?y@z"  # a drive, not a scheme


def test_local_path_calls_refuse_urls(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    url = "http://user:pw-secret@127.0.0.1:1/d/m.zt?sig=qs-secret"
    shown = "'http://<credentials>@127.0.0.1:1/d/m.zt?<redacted>'"
    for call in (lambda: ztensor.Writer(url), lambda: ztensor.save_file({"x": np.ones(2)}, url)):
        with pytest.raises(ztensor.ZTensorError, match="is a URL") as e:
            call()
        assert shown in str(e.value) and "secret" not in str(e.value)
    for call in (lambda: ztensor.remove_tensors(url, None, ["x"]),
                 lambda: ztensor.replace_tensor(url, "x", np.ones(2))):
        with pytest.raises(ValueError, match="is a URL") as e:
            call()
        assert shown in str(e.value) and "secret" not in str(e.value)
    f = ctypes.c_void_p()
    assert lib.zt_open(url.encode(), None, ctypes.byref(f)) != 0
    msg = lib.zt_last_error().decode()
    assert shown in msg and "secret" not in msg and "zt_open_url" in msg
    for args in ((url.encode(), b"out.zt"), (b"in.zt", url.encode())):
        assert lib.zt_migrate(*args, None) != 0
        msg = lib.zt_last_error().decode()
        assert shown in msg and "secret" not in msg
    assert os.listdir(tmp_path) == []  # no "http:" folder, no temporary


def test_reader_of_another_scheme_is_refused_redacted():
    """Reader reads http(s):// and s3:// remotely; another scheme is a local
    path to zt_open, which refuses it without quoting its credentials."""
    with pytest.raises(ztensor.ZTensorError) as e:
        ztensor.Reader("ftp://bob:pw-secret@127.0.0.1/x.zt?sig=qs-secret")
    assert "secret" not in str(e.value) and "secret" not in str(getattr(e.value, "filename", ""))
    assert "ftp://<credentials>@127.0.0.1/x.zt?<redacted>" in str(e.value)
