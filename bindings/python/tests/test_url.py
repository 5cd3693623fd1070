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


def test_aws_files_are_not_read_when_the_options_give_everything(tmp_path):
    """Keys, region and endpoint given as options: neither AWS file is
    opened, so a FIFO there (which a blocking open would wait on for ever)
    costs nothing; the open ends at the closed port. Run in a child with a
    timeout, so that a reader that does open the FIFO fails the test instead
    of hanging it."""
    import os
    import subprocess
    import sys
    if os.name != "posix":
        pytest.skip("FIFOs: POSIX hosts")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_CONFIG_FILE=str(fifo), AWS_SHARED_CREDENTIALS_FILE=str(fifo), HOME=str(tmp_path),
               ZTENSOR_LIBRARY=ztensor.library_path,
               PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(ztensor.__file__))))
    code = ("import ztensor\n"
            "try:\n"
            f"    ztensor.open_url('s3://bkt/m.zt', s3_endpoint='http://127.0.0.1:{closed_port()}', "
            "s3_region='eu-west-1', aws_access_key_id='AKIDEXAMPLE', aws_secret_access_key='wJalrXUtnFEMI/K7MDENG', "
            "aws_session_token='FwoGZXIvYXdzEJr', retries=0)\n"
            "except ztensor.ZTensorError as e:\n"
            "    print(e)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=30)
    assert p.returncode == 0, p.stderr
    assert "Couldn't connect" in p.stdout and "AWS file" not in p.stdout, p.stdout
    # The same open with the keys left to the profile does read them: the
    # FIFO is refused at once, not waited on.
    code = code.replace("aws_access_key_id='AKIDEXAMPLE', aws_secret_access_key='wJalrXUtnFEMI/K7MDENG', "
                        "aws_session_token='FwoGZXIvYXdzEJr', ", "")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=30)
    assert p.returncode == 0, p.stderr
    assert "is a FIFO, not a regular file" in p.stdout, p.stdout
