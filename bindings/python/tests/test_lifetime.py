"""Python never crashes the interpreter: closing a Reader under other
threads' calls, and files rewritten or truncated under loaded tensors.

Each scenario runs in a child interpreter, so a regression shows as a failed
test (the child's signal) instead of killing the test run."""
import os
import subprocess
import sys
import textwrap

import pytest


def run_child(code, tmp_path, timeout=120):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) for p in sys.path if p)
    if env.get("ZTENSOR_LIBRARY"):
        env["ZTENSOR_LIBRARY"] = os.path.abspath(env["ZTENSOR_LIBRARY"])
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, (f"child ended with {proc.returncode} (negative: killed by that signal)\n"
                                  f"stdout: {proc.stdout}\nstderr: {proc.stderr}")
    return proc.stdout


def test_close_while_other_threads_read(tmp_path):
    # 20,000 small tensors: the file's object table and mapping are large
    # enough that the allocator returns them to the system at zt_close, so a
    # call still using them faults instead of reading stale memory. Every
    # thread must end with its reads done or with an exception: never a crash.
    out = run_child("""
        import random, threading, time
        import numpy as np
        import ztensor
        names = [f"t{i:05d}" for i in range(20000)]
        with ztensor.Writer("t.zt") as w:
            for i, n in enumerate(names):
                w.add(n, np.full(16, i, np.float32))
        lock = threading.Lock()
        seen = {"ok": 0, "closed": 0}
        for round in range(16):
            r = ztensor.Reader("t.zt")
            start = threading.Barrier(5)
            def work(k):
                rng = random.Random(k)
                start.wait()
                try:
                    while True:
                        i = rng.randrange(len(names))
                        n = names[i]
                        if k == 0:
                            got = r.get_slice(n)[2:]
                        elif k == 1:
                            got = r.read_many([n, names[-1 - i]])[n]
                        elif k == 2:
                            got = np.array(r[n])
                        else:
                            got = np.array([r.info(n).shape[0]], np.float32) * 0 + r.read(n)[0]
                        assert got.flat[0] == i, (n, got)
                        with lock:
                            seen["ok"] += 1
                except ValueError as e:
                    assert "closed" in str(e), e
                    with lock:
                        seen["closed"] += 1
            threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
            for t in threads:
                t.start()
            start.wait()
            time.sleep(0.001 * (round % 5))
            r.close()
            for t in threads:
                t.join()
        print(seen["ok"], seen["closed"])
    """, tmp_path)
    ok, closed = map(int, out.split())
    assert closed == 64  # every thread of every round saw the close as an exception


SCENARIO = """
    import os, sys
    import numpy as np
    import ztensor, ztensor.numpy as ztnp
    framework, change = sys.argv[1:3]
    shape = (64, 1024)                          # 256 KiB per tensor: many pages
    first = {f"t{i}": np.full(shape, i + 1, np.float32) for i in range(8)}
    second = {f"t{i}": np.full(shape, -7, np.float32) for i in range(8)}
    ztnp.save_file(first, "ckpt.zt")
    ztnp.save_file(second, "new.zt")
    if framework == "torch":
        import ztensor.torch as ztpt
        loaded = {k: v.numpy() for k, v in ztpt.load_file("ckpt.zt").items()}
    elif framework == "numpy":
        loaded = ztnp.load_file("ckpt.zt")
    elif framework == "ztensor":
        loaded = ztensor.load_file("ckpt.zt")
    else:
        with ztnp.safe_open("ckpt.zt", "np") as f:
            loaded = {k: f.get_tensor(k) for k in f.keys()}
    if change == "overwrite":                   # what `cp new.zt ckpt.zt` does: same inode, new bytes
        with open("new.zt", "rb") as src, open("ckpt.zt", "r+b") as dst:
            dst.write(src.read())
    else:                                       # truncated under the tensors
        os.truncate("ckpt.zt", 0)
    for k, v in loaded.items():
        assert np.all(v == first[k]), (k, v.ravel()[:4])
    print("kept")
"""


@pytest.mark.parametrize("change", ["overwrite", "truncate"])
@pytest.mark.parametrize("framework", ["torch", "numpy", "ztensor", "safe_open"])
def test_loaded_tensors_survive_the_file_changing(tmp_path, framework, change):
    if framework == "torch":
        pytest.importorskip("torch")
    code = SCENARIO + "\n"
    env_argv = f"import sys; sys.argv = ['x', {framework!r}, {change!r}]\n"
    assert run_child(env_argv + textwrap.dedent(code), tmp_path).strip() == "kept"


def test_mapped_views_are_an_explicit_opt_in(tmp_path):
    pytest.importorskip("torch")
    # copy=False still gives tensors over the file's mapping (nothing read at
    # load): their storage is not an allocation of this process.
    out = run_child("""
        import numpy as np, torch
        import ztensor.numpy as ztnp, ztensor.torch as ztpt
        ztnp.save_file({"a": np.arange(1 << 16, dtype=np.float32)}, "m.zt")
        owned = ztpt.load_file("m.zt")["a"]
        mapped = ztpt.load_file("m.zt", copy=False)["a"]
        maps = open("/proc/self/maps").read().splitlines()
        def mapping_of(t):
            p = t.data_ptr()
            for line in maps:
                lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
                if lo <= p < hi:
                    return line.split()[-1]
            return ""
        print(mapping_of(owned).endswith("m.zt"), mapping_of(mapped).endswith("m.zt"),
              bool(torch.equal(owned, mapped)))
    """, tmp_path)
    assert out.split() == ["False", "True", "True"]
