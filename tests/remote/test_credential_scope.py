"""Each credential goes only where it was given for (docs/remote.md,
"Credential scope"): the bearer token (zt_url_options.bearer_token,
$ZT_BEARER_TOKEN, --bearer-token-file) only to http(s):// URLs, never to an
S3 endpoint, signed or not; AWS keys, session tokens and profiles only into
the signature of s3:// requests, never to an http(s):// URL; and none of
them to another host, whether a redirect names it or a set's index does.
Every request's headers are captured by the loopback servers."""
import json
import os
import subprocess

import numpy as np
import pytest

import ztensor

from fault_server import FaultServer
from s3_sig_server import SigV4Server

REGION = "eu-central-1"
AK, SECRET = "AKIDSCOPE", "scopeSecret/K7MDENG+bPxRfiCYEXAMPLEKEY"
TAK, TSECRET, TOKEN = "ASIASCOPE", "scopeTempSecret/+=", "FwoGZXIvYXdzEJr//scope-session-token+/="
BEARER = "bearer-scope-7f3a9c"
# What no request may carry outside the credential's own kind of URL.
SECRETS = (AK, SECRET, TAK, TSECRET, TOKEN, BEARER)


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    path = tmp_path_factory.mktemp("m") / "m.zt"
    tensors = {f"w{i}": np.full((64, 64), i, dtype=np.float32) for i in range(4)}
    ztensor.save_file(tensors, str(path))
    return tensors, path.read_bytes()


@pytest.fixture(autouse=True)
def clean_env(monkeypatch, tmp_path):
    """No AWS setting or token of the machine leaks in; HOME has no ~/.aws."""
    for k in list(os.environ):
        if k.startswith("AWS_") or k == "ZT_BEARER_TOKEN":
            monkeypatch.delenv(k)
    monkeypatch.setenv("HOME", str(tmp_path))


@pytest.fixture
def s3(model):
    srv = SigV4Server({("pub", "m.zt"): model[1], ("bkt", "m.zt"): model[1]},
                      {AK: (SECRET, None), TAK: (TSECRET, TOKEN)}, region=REGION, public=["pub"])
    yield srv
    srv.close()


@pytest.fixture
def web(model):
    srv = FaultServer(model[1])
    yield srv
    srv.close()


def carried(headers, secret):
    """The header names whose value holds `secret`."""
    return [k for k, v in headers.items() if secret in v]


def no_secret_in(requests, secrets=SECRETS):
    assert requests, "the server saw no request"
    for headers in requests:
        for s in secrets:
            assert not carried(headers, s), (s, headers)
        assert "authorization" not in headers or not headers["authorization"].startswith("Bearer"), headers


def read_all(url, **opts):
    with ztensor.open_url(url, tail_bytes=4096, **opts) as r:
        return {n: np.array(r[n]) for n in r}


def zt(*args, env):
    return subprocess.run([os.environ["ZT_TOOL"], *args], capture_output=True, text=True, env=env, timeout=60)


# -- the bearer token: http(s) only ------------------------------------


def test_bearer_token_is_not_sent_to_an_unsigned_s3_endpoint(s3, model):
    got = read_all("s3://pub/m.zt", bearer_token=BEARER, s3_endpoint=s3.endpoint, s3_region=REGION)
    assert sorted(got) == sorted(model[0])
    no_secret_in(s3.headers)
    assert not any("authorization" in h for h in s3.headers), s3.headers


def test_bearer_token_is_not_sent_to_a_signed_s3_endpoint(s3, model):
    got = read_all("s3://bkt/m.zt", bearer_token=BEARER, s3_endpoint=s3.endpoint, s3_region=REGION,
                   aws_access_key_id=AK, aws_secret_access_key=SECRET)
    assert sorted(got) == sorted(model[0])
    assert all(h["authorization"].startswith("AWS4-HMAC-SHA256 ") for h in s3.headers), s3.headers
    no_secret_in(s3.headers, (BEARER,))


@pytest.mark.parametrize("source", ["ZT_BEARER_TOKEN", "--bearer-token-file"])
def test_cli_token_is_not_sent_to_s3(s3, tmp_path, source):
    env = dict(os.environ, AWS_ENDPOINT_URL_S3=s3.endpoint, AWS_REGION=REGION)
    args = []
    if source == "ZT_BEARER_TOKEN":
        env["ZT_BEARER_TOKEN"] = BEARER
    else:
        (tmp_path / "token").write_text(BEARER + "\n")
        args = ["--bearer-token-file", str(tmp_path / "token")]
    p = zt(*args, "ls", "s3://pub/m.zt", env=env)
    assert p.returncode == 0, p.stderr
    no_secret_in(s3.headers)


def test_bearer_token_goes_to_its_http_host_only(model, web):
    """Sent to the host it was given for; a redirect to another host (name
    and port) gets the request without it."""
    other = FaultServer(model[1])
    try:
        url = f"{web.base}/to/localhost:{other.port}/ok"
        assert sorted(read_all(url, bearer_token=BEARER)) == sorted(model[0])
        first = [h for p, h in web.requests]
        assert first and all(h.get("authorization") == "Bearer " + BEARER for h in first), first
        no_secret_in([h for p, h in other.requests])
        # user:password@ in the URL (HTTP Basic): the same.
        web.requests.clear()
        other.requests.clear()
        url = f"http://scope-user:{BEARER}@127.0.0.1:{web.port}/to/localhost:{other.port}/ok"
        assert sorted(read_all(url)) == sorted(model[0])
        assert all(h.get("authorization", "").startswith("Basic ") for p, h in web.requests), web.requests
        assert other.requests and not any("authorization" in h for p, h in other.requests), other.requests
    finally:
        other.close()


def test_set_shards_on_another_host_get_nothing(model, web, tmp_path):
    """A remote set's index cannot name a shard on another host: it is
    refused before any request reaches that host (zt merge reads a set)."""
    other = FaultServer(model[1])
    env = dict(os.environ, ZT_BEARER_TOKEN=BEARER)
    try:
        for loc in (f"//localhost:{other.port}/ok", f"http://localhost:{other.port}/ok",
                    f"localhost:{other.port}/ok"):
            web.files["/set/model.index.json"] = json.dumps({"weight_map": {"w0": loc}}).encode()
            p = zt("merge", f"{web.base}/set/model.index.json", "-o", str(tmp_path / "out.zt"), env=env)
            assert p.returncode != 0 and "shard location" in p.stderr, p.stderr
        assert other.requests == []
        # The same index naming a shard in its own folder: sent the token.
        web.files["/set/s1.zt"] = model[1]
        web.files["/set/model.index.json"] = json.dumps({"weight_map": {n: "s1.zt" for n in model[0]}}).encode()
        p = zt("merge", f"{web.base}/set/model.index.json", "-o", str(tmp_path / "out.zt"), env=env)
        assert p.returncode == 0, p.stderr
        shard = [h for p, h in web.requests if p == "/set/s1.zt"]
        assert shard and all(h.get("authorization") == "Bearer " + BEARER for h in shard)
    finally:
        other.close()


# -- AWS credentials: s3:// signing only -------------------------------


def aws_files(tmp_path):
    aws = tmp_path / ".aws"
    aws.mkdir(exist_ok=True)
    (aws / "credentials").write_text(f"[default]\naws_access_key_id = {AK}\naws_secret_access_key = {SECRET}\n"
                                     f"[temp]\naws_access_key_id = {TAK}\naws_secret_access_key = {TSECRET}\n"
                                     f"aws_session_token = {TOKEN}\n")
    (aws / "config").write_text(f"[default]\nregion = {REGION}\n[profile temp]\nregion = {REGION}\n")


@pytest.mark.parametrize("source", ["environment keys", "environment session token", "default profile",
                                    "AWS_PROFILE with a session token", "zt_url_options keys and token",
                                    "zt_url_options profile"])
def test_aws_credentials_never_reach_an_http_url(model, web, monkeypatch, tmp_path, source):
    aws_files(tmp_path)
    opts = {}
    if source == "environment keys":
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", AK)
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    elif source == "environment session token":
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", TAK)
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", TSECRET)
        monkeypatch.setenv("AWS_SESSION_TOKEN", TOKEN)
    elif source == "AWS_PROFILE with a session token":
        monkeypatch.setenv("AWS_PROFILE", "temp")
    elif source == "zt_url_options keys and token":
        opts = dict(aws_access_key_id=TAK, aws_secret_access_key=TSECRET, aws_session_token=TOKEN)
    elif source == "zt_url_options profile":
        opts = dict(s3_profile="temp")
    assert sorted(read_all(f"{web.base}/ok", **opts)) == sorted(model[0])
    requests = [h for p, h in web.requests]
    no_secret_in(requests)
    for h in requests:
        assert "authorization" not in h and not any(k.startswith("x-amz-") for k in h), h
    # The same credentials do sign an s3:// read (the control: they were there).
    srv = SigV4Server({("bkt", "m.zt"): model[1]}, {AK: (SECRET, None), TAK: (TSECRET, TOKEN)}, region=REGION)
    try:
        assert sorted(read_all("s3://bkt/m.zt", s3_endpoint=srv.endpoint, **opts)) == sorted(model[0])
        assert srv.headers and all(h["authorization"].startswith("AWS4-HMAC-SHA256 ") for h in srv.headers)
    finally:
        srv.close()


def test_cli_aws_credentials_never_reach_an_http_url(model, web, tmp_path):
    aws_files(tmp_path)
    env = dict(os.environ, AWS_ACCESS_KEY_ID=TAK, AWS_SECRET_ACCESS_KEY=TSECRET, AWS_SESSION_TOKEN=TOKEN)
    p = zt("ls", f"{web.base}/ok", env=env)
    assert p.returncode == 0, p.stderr
    no_secret_in([h for p, h in web.requests])
