"""What zt and the Python binding show of a URL they read, over a real
server (fault_server.py): the repr of a Reader and a ShardedReader opened on
a URL, zt's JSON fields and summary lines, and the names of the files zt
split makes from a URL, carry neither "user:password@" nor the query string
(issue 37, docs/remote.md "Security")."""
import json
import os
import subprocess

import numpy as np
import pytest

import ztensor

from fault_server import FaultServer

SECRETS = ("pw-secret", "qs-secret", "user-secret")


@pytest.fixture
def web(tmp_path):
    path = tmp_path / "m.zt"
    tensors = {"a": np.arange(6, dtype=np.float32), "b": np.ones((2, 3), dtype=np.int16)}
    ztensor.save_file(tensors, str(path))
    shard = tmp_path / "s1.zt"
    ztensor.save_file({"c": np.zeros(3, dtype=np.float32), "d": np.ones(2, dtype=np.uint8)}, str(shard))
    srv = FaultServer(path.read_bytes())
    srv.files["/set/s1.zt"] = shard.read_bytes()
    srv.files["/set/model.index.json"] = json.dumps({"weight_map": {"c": "s1.zt", "d": "s1.zt"}}).encode()
    yield srv
    srv.close()


def url(web, path):
    return f"http://user-secret:pw-secret@127.0.0.1:{web.port}{path}?sig=qs-secret"


def shown(web, path):
    return f"http://<credentials>@127.0.0.1:{web.port}{path}?<redacted>"


def clean(text):
    for s in SECRETS:
        assert s not in text, text


def test_reader_reprs(web):
    with ztensor.open(url(web, "/ok")) as r:
        assert sorted(r) == ["a", "b"]
        text = repr(r)
    clean(text)
    assert shown(web, "/ok") in text
    clean(repr(r))  # closed
    with ztensor.ShardedReader(url(web, "/set/model.index.json")) as s:
        assert sorted(s) == ["c", "d"]
        text = repr(s)
    clean(text)
    assert shown(web, "/set/model.index.json") in text


def zt(*args, cwd):
    p = subprocess.run([os.environ["ZT_TOOL"], *args], capture_output=True, text=True, timeout=60, cwd=cwd)
    assert p.returncode == 0, p.stderr
    clean(p.stdout + p.stderr)
    return p


def test_zt_json_and_summaries(web, tmp_path):
    p = zt("split", url(web, "/ok"), "--max-shard-size", "1MB", "-o", "parts", "--json", cwd=tmp_path)
    assert json.loads(p.stdout)["input"] == shown(web, "/ok")
    # The query never becomes part of a file name (or of the index).
    for name in os.listdir(tmp_path / "parts"):
        clean(name)
        assert "sig" not in name, name
        clean((tmp_path / "parts" / name).read_bytes().decode("latin-1"))
    p = zt("merge", url(web, "/ok"), url(web, "/set/model.index.json"), "-o", "m.zt", "--json", cwd=tmp_path)
    assert json.loads(p.stdout)["inputs"] == [shown(web, "/ok"), shown(web, "/set/model.index.json")]
    p = zt("verify", url(web, "/ok"), cwd=tmp_path)
    assert shown(web, "/ok") in p.stdout
    p = zt("info", url(web, "/ok"), cwd=tmp_path)
    assert shown(web, "/ok") in p.stdout
