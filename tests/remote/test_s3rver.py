"""s3:// against s3rver, an independent S3 server implementation (npm):
every interop vector equals expected.json; S3's errors (NoSuchKey,
NoSuchBucket, InvalidAccessKeyId) end
in clear messages; an object replaced mid-read is ZT_E_CHANGED by its ETag;
`zt info s3://...` works with credentials from the environment, from a
profile, and anonymously; a sharded set lives in a bucket; a column split
through the link simulator costs the requests the cost model says."""
import json
import os
import subprocess

import numpy as np
import pytest

import ztensor

from s3rver_server import ACCESS_KEY, SECRET_KEY, S3rver, install
from test_remote import INTEROP, ZT_E_CHANGED, component_hashes, expected_hashes

BUCKET = "models"


@pytest.fixture(scope="module")
def s3rver(tmp_path_factory):
    binary = install(os.environ["ZT_NPM_PREFIX"])
    srv = S3rver(binary, str(tmp_path_factory.mktemp("s3rver")), [BUCKET])
    srv.start()
    for sub in ("v1", "v0"):
        for name in os.listdir(os.path.join(INTEROP, sub)):
            if name.endswith(".zt"):
                with open(os.path.join(INTEROP, sub, name), "rb") as f:
                    srv.put(BUCKET, f"{sub}/{name}", f.read())
    yield srv
    srv.stop()


@pytest.fixture
def aws_env(monkeypatch, tmp_path, s3rver):
    for k in list(os.environ):
        if k.startswith("AWS_"):
            monkeypatch.delenv(k)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", s3rver.endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    return monkeypatch


@pytest.mark.parametrize("sub", ["v1", "v0"])
def test_vectors_equal_expected(s3rver, aws_env, sub):
    exp = json.load(open(os.path.join(INTEROP, sub, "expected.json")))
    for fname, entry in exp["files"].items():
        with ztensor.open(f"s3://{BUCKET}/{sub}/{fname}") as r:
            assert r.version == entry["version"]
            assert component_hashes(r) == expected_hashes(entry), fname
            r.verify()


def test_s3_errors(s3rver, aws_env):
    with pytest.raises(ztensor.ZTensorError, match=r"404 NoSuchKey: bucket 'models' has no key 'v1/none.zt'"):
        ztensor.open(f"s3://{BUCKET}/v1/none.zt")
    with pytest.raises(ztensor.ZTensorError, match=r"404 NoSuchBucket: there is no bucket 'nobucket'"):
        ztensor.open("s3://nobucket/v1/dense_f32.zt")
    # s3rver checks the access key id (signatures: test_s3_sig.py, botocore)
    aws_env.setenv("AWS_ACCESS_KEY_ID", "AKUNKNOWN")
    aws_env.setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret")
    with pytest.raises(ztensor.ZTensorError) as e:
        ztensor.open(f"s3://{BUCKET}/v1/dense_f32.zt")
    msg = str(e.value)
    assert "403 InvalidAccessKeyId: the server does not know the access key id" in msg, msg
    assert "credentials: environment (AWS_ACCESS_KEY_ID" in msg and "not-the-secret" not in msg


def test_replaced_object_is_a_change(s3rver, aws_env):
    rng = np.random.default_rng(1)
    big = {f"t{i}": rng.standard_normal(40000).astype(np.float32) for i in range(4)}
    path = os.path.join(os.environ["HOME"], "big.zt")
    ztensor.save_file(big, path)
    data = open(path, "rb").read()
    s3rver.put(BUCKET, "big.zt", data)
    with ztensor.open(f"s3://{BUCKET}/big.zt") as r:
        np.testing.assert_array_equal(r["t0"], big["t0"])
        s3rver.put(BUCKET, "big.zt", data[:-100] + b"\0" * 100)  # a new ETag
        with pytest.raises(ztensor.ZTensorError) as e:
            r["t3"]
        assert e.value.status == ZT_E_CHANGED, e.value


def run_zt(args, env):
    return subprocess.run([os.environ["ZT_TOOL"], *args], capture_output=True, text=True, env=env, timeout=60)


def test_cli_credentials_from_each_source(s3rver, tmp_path):
    base = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    base["HOME"] = str(tmp_path)
    url = f"s3://{BUCKET}/v1/dense_f32.zt"
    env = dict(base, AWS_ENDPOINT_URL=s3rver.endpoint, AWS_ACCESS_KEY_ID=ACCESS_KEY, AWS_SECRET_ACCESS_KEY=SECRET_KEY)
    p = run_zt(["info", url], env)
    assert p.returncode == 0, p.stderr
    (tmp_path / ".aws").mkdir()
    (tmp_path / ".aws" / "credentials").write_text(f"[ci]\naws_access_key_id = {ACCESS_KEY}\n"
                                                   f"aws_secret_access_key = {SECRET_KEY}\n"
                                                   "[bad]\naws_access_key_id = NOPE\naws_secret_access_key = nope\n")
    (tmp_path / ".aws" / "config").write_text(f"[profile ci]\nendpoint_url = {s3rver.endpoint}\n"
                                              f"[profile bad]\nendpoint_url = {s3rver.endpoint}\n")
    p = run_zt(["info", url], dict(base, AWS_PROFILE="ci"))
    assert p.returncode == 0, p.stderr
    p = run_zt(["ls", url], dict(base, AWS_PROFILE="bad"))
    assert p.returncode == 3 and "InvalidAccessKeyId" in p.stderr and "profile 'bad' in" in p.stderr, p.stderr
    p = run_zt(["verify", url], dict(base, AWS_ENDPOINT_URL=s3rver.endpoint))  # anonymous
    assert p.returncode == 0, p.stderr


def test_sharded_set_in_a_bucket(s3rver, aws_env, tmp_path):
    a = {"a": np.arange(6, dtype=np.float32)}
    b = {"b": np.ones((2, 3), np.int16)}
    for name, t in (("set/m-1.zt", a), ("set/sub/m-2.zt", b)):
        ztensor.save_file(t, str(tmp_path / "x.zt"))
        s3rver.put(BUCKET, name, (tmp_path / "x.zt").read_bytes())
    s3rver.put(BUCKET, "set/m.zt.index.json",
               json.dumps({"weight_map": {"a": "m-1.zt", "b": "sub/m-2.zt"}}).encode())
    with ztensor.ShardedReader(f"s3://{BUCKET}/set/m.zt.index.json") as r:
        np.testing.assert_array_equal(r["a"], a["a"])
        np.testing.assert_array_equal(r["b"], b["b"])


def test_v2_sharded_root_in_a_bucket(s3rver, aws_env, tmp_path):
    """A v2 root's shards (zt split --format 2) next to its s3:// key."""
    t = {f"t{i}": np.full(1024, i, dtype=np.float32) for i in range(3)}
    ztensor.save_file(t, str(tmp_path / "model.zt"))
    out = tmp_path / "out"
    p = run_zt(["split", str(tmp_path / "model.zt"), "--max-shard-size", "4KiB", "-o", str(out), "--format", "2",
                "--quiet"], dict(os.environ))
    assert p.returncode == 0, p.stderr
    for f in sorted(os.listdir(out)):
        s3rver.put(BUCKET, "v2/" + f, (out / f).read_bytes())
    with ztensor.Reader(f"s3://{BUCKET}/v2/model.zt") as r:
        assert sorted(r) == sorted(t)
        for name, want in t.items():
            np.testing.assert_array_equal(r[name], want)
        r.verify()


def test_column_split_through_link_simulator(s3rver, aws_env, tmp_path):
    # s3rver behind a 20 ms link (tests/remote/link_sim.py): s3:// never
    # asks several ranges in one request (S3 answers those with the whole
    # object), so a column split's rows are single ranges, merged by the
    # cost model within the overfetch bound (50%); the simulator counts the
    # same requests the library does.
    from link_client import LinkSim
    from ztensor.distributed import read_planned
    rows, cols, world = 128, 1024, 4
    w = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols)
    path = tmp_path / "tp.zt"
    ztensor.save_file({"w": w, "pad": np.zeros(1 << 17, dtype=np.float32)}, str(path))
    s3rver.put(BUCKET, "tp.zt", path.read_bytes())
    port = int(s3rver.endpoint.rsplit(":", 1)[1])
    sim = LinkSim(port, 20)
    try:
        aws_env.setenv("AWS_ENDPOINT_URL_S3", sim.base)
        with ztensor.open(f"s3://{BUCKET}/tp.zt") as r:
            before = r.io_stats()
            sim.reset()
            parts = read_planned(r, {"w": 1}, 1, world)
            after = r.io_stats()
        sim.settle()
        seen = sim.stats()
    finally:
        sim.stop()
    np.testing.assert_array_equal(parts["w"], w[:, cols // world:2 * cols // world])
    requests = after["requests"] - before["requests"]
    fetched = after["bytes"] - before["bytes"]
    needed = rows * cols * 4 // world
    assert seen["requests"] == requests, (seen, requests)
    assert needed <= fetched <= 1.5 * needed, (fetched, needed)
    gap = cols * 4 - cols * 4 // world
    assert requests == rows - int(needed * 0.5) // gap, (requests, fetched)
