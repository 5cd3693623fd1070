"""s3:// reads signed with AWS SigV4, checked request by request by a
loopback server that recomputes each signature with botocore
(s3_sig_server.py): right credentials pass and wrong ones fail with a 403
that names the credential source and the likely cause, for awkward keys,
session tokens, ranges, every way of naming the region and every credential
source; secrets appear in no message."""
import os
import subprocess

import numpy as np
import pytest

import ztensor

from s3_sig_server import SigV4Server

REGION = "eu-central-1"
AK, SECRET = "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
TAK, TSECRET, TOKEN = "ASIATEMP", "tempSecret/+=", "FwoGZXIvYXdzEJr//////////wEaDOtoken+/="
KEYS = ["plain.zt", "with space.zt", "a+b=c&d.zt", "100%.zt", "ünï/cödé €.zt", "dir//double.zt", "x/./y/../z.zt",
        "tilde~*'().zt"]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """A file larger than the tail read, so opens and reads take ranges."""
    path = tmp_path_factory.mktemp("m") / "m.zt"
    rng = np.random.default_rng(5)
    tensors = {f"w{i}": rng.standard_normal((64, 64)).astype(np.float32) for i in range(6)}
    ztensor.save_file(tensors, str(path))
    return tensors, path.read_bytes()


@pytest.fixture(scope="module")
def s3(model):
    data = model[1]
    objects = {("bkt", k): data for k in KEYS}
    objects[("pub", "open.zt")] = data
    srv = SigV4Server(objects, {AK: (SECRET, None), TAK: (TSECRET, TOKEN)}, region=REGION, public=["pub"])
    yield srv
    srv.close()


@pytest.fixture(autouse=True)
def clean_env(monkeypatch, tmp_path):
    """No AWS setting of the machine leaks in; HOME has no ~/.aws."""
    for k in list(os.environ):
        if k.startswith("AWS_"):
            monkeypatch.delenv(k)
    monkeypatch.setenv("HOME", str(tmp_path))


def read_all(url, **opts):
    with ztensor.open_url(url, tail_bytes=4096, **opts) as r:
        return {n: np.array(r[n]) for n in r}, r.io_stats()


def same(got, tensors):
    assert sorted(got) == sorted(tensors)
    for n in tensors:
        np.testing.assert_array_equal(got[n], tensors[n])


def fails(url, pattern, **opts):
    with pytest.raises(ztensor.ZTensorError) as e:
        read_all(url, **opts)
    msg = str(e.value)
    import re
    assert re.search(pattern, msg), msg
    for secret in (SECRET, TSECRET, TOKEN, "wrong-secret"):
        assert secret not in msg
    return msg


@pytest.mark.parametrize("key", KEYS)
def test_keys_right_and_wrong_secret(s3, model, key, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", s3.endpoint)
    monkeypatch.setenv("AWS_REGION", REGION)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", AK)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    n = len(s3.log)
    got, stats = read_all(f"s3://bkt/{key}")
    same(got, model[0])
    log = s3.log[n:]
    # Several signed ranged requests, every one accepted.
    assert len(log) >= 3 and all(signed and status == 206 for _, _, _, signed, status in log), log
    assert stats["requests"] == len(log)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wrong-secret")
    msg = fails(f"s3://bkt/{key}", r"403 SignatureDoesNotMatch: the secret key does not match")
    assert "environment (AWS_ACCESS_KEY_ID" in msg and f"region '{REGION}' from AWS_REGION" in msg


def test_session_token(s3, model, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3.endpoint)
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", TAK)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", TSECRET)
    monkeypatch.setenv("AWS_SESSION_TOKEN", TOKEN)
    same(read_all("s3://bkt/plain.zt")[0], model[0])
    monkeypatch.setenv("AWS_SESSION_TOKEN", TOKEN + "x")
    fails("s3://bkt/plain.zt", r"InvalidToken: the session token is invalid or expired.*AWS_SESSION_TOKEN")
    monkeypatch.delenv("AWS_SESSION_TOKEN")
    fails("s3://bkt/plain.zt", r"403")  # the server requires the token signed


def test_ranges_are_signed(s3, model, monkeypatch):
    """A slice read is a Range the server checks as signed (it refuses an
    unsigned Range header)."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", AK)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    n = len(s3.log)
    with ztensor.open_url("s3://bkt/plain.zt", s3_endpoint=s3.endpoint, s3_region=REGION, tail_bytes=4096) as r:
        part = r.get_slice("w3")[8:16] if hasattr(r, "get_slice") else np.array(r["w3"])[8:16]
        np.testing.assert_array_equal(np.asarray(part), model[0]["w3"][8:16])
    assert all(status == 206 for *_, status in s3.log[n:])


def test_region_forms(s3, model, monkeypatch, tmp_path):
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", s3.endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", AK)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    url = "s3://bkt/plain.zt"
    # No region anywhere: us-east-1, which this bucket is not in.
    msg = fails(url, r"the region looks wrong: signed for region 'us-east-1' from the default, "
                     rf"the bucket is in '{REGION}'")
    same(read_all(url, s3_region=REGION)[0], model[0])  # explicit
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    same(read_all(url)[0], model[0])
    monkeypatch.setenv("AWS_REGION", REGION)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-west-2")  # AWS_REGION wins
    same(read_all(url)[0], model[0])
    monkeypatch.delenv("AWS_REGION")
    fails(url, r"region 'us-west-2' from AWS_DEFAULT_REGION")
    monkeypatch.delenv("AWS_DEFAULT_REGION")
    (tmp_path / ".aws").mkdir()
    (tmp_path / ".aws" / "config").write_text(f"[default]\nregion = {REGION}\n")
    same(read_all(url)[0], model[0])  # the profile's region
    assert "us-east-1" not in msg.split("signed for")[0]


def test_credential_sources(s3, model, monkeypatch, tmp_path):
    aws = tmp_path / ".aws"
    aws.mkdir()
    (aws / "credentials").write_text(f"[default]\naws_access_key_id = nobody\naws_secret_access_key = x\n"
                                     f"[dev]\naws_access_key_id = {AK}\naws_secret_access_key = {SECRET}\n"
                                     f"[temp]\naws_access_key_id = {TAK}\naws_secret_access_key = {TSECRET}\n"
                                     f"aws_session_token = {TOKEN}\n")
    (aws / "config").write_text(f"[profile dev]\nregion = {REGION}\nendpoint_url = {s3.endpoint}\n"
                                f"[profile temp]\nregion = {REGION}\ns3 =\n  endpoint_url = {s3.endpoint}\n")
    url = "s3://bkt/plain.zt"
    monkeypatch.setenv("AWS_PROFILE", "dev")  # credentials, region and endpoint from the profile
    same(read_all(url)[0], model[0])
    monkeypatch.setenv("AWS_PROFILE", "temp")  # a session token; the nested s3 endpoint_url
    same(read_all(url)[0], model[0])
    # The environment's keys come before the profile's.
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKUNKNOWN")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "whatever")
    msg = fails(url, r"InvalidAccessKeyId: the server does not know the access key id \[credentials: environment")
    # An explicit profile comes before the environment; explicit keys before all.
    same(read_all(url, s3_profile="dev")[0], model[0])
    same(read_all(url, aws_access_key_id=AK, aws_secret_access_key=SECRET)[0], model[0])
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    monkeypatch.setenv("AWS_PROFILE", "missing")
    fails(url, r"AWS profile 'missing' is in neither")
    # The default profile, its wrong secret named by its file.
    monkeypatch.delenv("AWS_PROFILE")
    fails(url, r"InvalidAccessKeyId.*profile 'default' in .*credentials", s3_endpoint=s3.endpoint,
          s3_region=REGION)
    assert "whatever" not in msg


def test_anonymous(s3, model, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3.endpoint)
    monkeypatch.setenv("AWS_REGION", REGION)
    n = len(s3.log)
    same(read_all("s3://pub/open.zt")[0], model[0])
    assert not any(signed for *_, signed, _ in s3.log[n:])
    fails("s3://bkt/plain.zt", r"403 AccessDenied: access denied \[credentials: none found \(anonymous")
    # s3_unsigned ignores credentials that are there
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", AK)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    n = len(s3.log)
    same(read_all("s3://pub/open.zt", s3_unsigned=1)[0], model[0])
    assert not any(signed for *_, signed, _ in s3.log[n:])


def test_clock_skew_named(model, monkeypatch):
    srv = SigV4Server({("bkt", "m.zt"): model[1]}, {AK: (SECRET, None)}, region=REGION, skew_seconds=3600)
    try:
        fails("s3://bkt/m.zt", r"RequestTimeTooSkewed: this machine's clock looks wrong", s3_endpoint=srv.endpoint,
              s3_region=REGION, aws_access_key_id=AK, aws_secret_access_key=SECRET)
    finally:
        srv.close()


def test_virtual_hosted(s3, model, monkeypatch):
    """bucket.localhost:port (libcurl resolves *.localhost to loopback)."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", AK)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    n = len(s3.log)
    same(read_all("s3://bkt/with space.zt", s3_endpoint=f"http://localhost:{s3.port}", s3_region=REGION,
                  s3_addressing=2)[0], model[0])
    assert all(host == f"bkt.localhost:{s3.port}" and path == "/with%20space.zt"
               for _, path, host, _, _ in s3.log[n:]), s3.log[n:]


def test_missing_key_and_bad_urls(s3, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3.endpoint)
    monkeypatch.setenv("AWS_REGION", REGION)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", AK)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    fails("s3://bkt/nope.zt", r"404 NoSuchKey: bucket 'bkt' has no key 'nope.zt'")
    fails("s3://bkt/", r"no object key")
    fails("s3://B!/k", r"not an S3 bucket name")
    fails("s3://bkt/plain.zt", r"not a region name", s3_region="eu:west")
    monkeypatch.setenv("AWS_ENDPOINT_URL", "ftp://x")
    fails("s3://bkt/plain.zt", r"is not an http:// or https:// URL")


def test_cli_reads_s3(s3, monkeypatch):
    env = dict(os.environ, AWS_ENDPOINT_URL_S3=s3.endpoint, AWS_REGION=REGION, AWS_ACCESS_KEY_ID=AK,
               AWS_SECRET_ACCESS_KEY=SECRET)
    p = subprocess.run([os.environ["ZT_TOOL"], "info", "s3://bkt/ünï/cödé €.zt"], capture_output=True, text=True,
                       env=env)
    assert p.returncode == 0, p.stderr
    assert "w5" in p.stdout or "6" in p.stdout
    env["AWS_SECRET_ACCESS_KEY"] = "wrong-secret"
    p = subprocess.run([os.environ["ZT_TOOL"], "ls", "s3://bkt/plain.zt"], capture_output=True, text=True, env=env)
    assert p.returncode != 0 and "SignatureDoesNotMatch" in p.stderr and "wrong-secret" not in p.stderr


def test_redirect_is_not_followed(model, monkeypatch):
    """S3 answers a bucket of another region with a 301: reported as a wrong
    region, and nothing (no signature, no session token) goes to the host
    the redirect names."""
    other = SigV4Server({("bkt", "m.zt"): model[1]}, {TAK: (TSECRET, TOKEN)}, region="us-west-2")
    srv = SigV4Server({}, {TAK: (TSECRET, TOKEN)}, region=REGION,
                      redirects={"bkt": (f"http://localhost:{other.port}/bkt/m.zt", "us-west-2")})
    try:
        fails("s3://bkt/m.zt", r"301 PermanentRedirect: the region looks wrong: signed for region "
                               rf"'{REGION}' from zt_url_options, the bucket is in 'us-west-2'",
              s3_endpoint=srv.endpoint, s3_region=REGION, aws_access_key_id=TAK, aws_secret_access_key=TSECRET,
              aws_session_token=TOKEN)
        assert other.log == []
    finally:
        srv.close()
        other.close()
