"""The peers' own test suites (tests/data/peers: safetensors' Python tests
and the original 2.x package's test_api.py, copied unchanged) run against
this package, each in a fresh directory and interpreter. Every case must
pass except those listed here with the reason."""

import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
PEERS = pathlib.Path(os.environ["ZT_INTEROP_DIR"]).parent / "peers" if os.environ.get("ZT_INTEROP_DIR") \
    else HERE.parents[2] / "tests" / "data" / "peers"

# safetensors.* mapped onto ztensor.*: the one-line switch, plus save() asking
# for safetensors bytes (save() gives zTensor bytes here, by design).
SHIM = {
    "__init__.py": "from ztensor import (SafetensorError, TensorSpec, _safe_open_handle, deserialize, safe_open,\n"
                   "                     serialize, serialize_file)\n__version__ = '0+ztensor'\n",
    "numpy.py": "from ztensor.numpy import load, load_file, safe_open, save_file  # noqa: F401\n"
                "import ztensor.numpy as _z\n\n\n"
                "def save(tensor_dict, metadata=None):\n"
                "    return _z.save(tensor_dict, metadata, format='safetensors')\n",
    "torch.py": "from ztensor.torch import (_end_ptr, _filter_shared_not_shared, _find_shared_tensors,  # noqa: F401\n"
                "                           _is_complete, _remove_duplicate_names, load, load_file, load_model,\n"
                "                           safe_open, save_file, save_model, storage_ptr, storage_size)\n"
                "import ztensor.torch as _z\n\n\n"
                "def save(tensors, metadata=None):\n"
                "    return _z.save(tensors, metadata, format='safetensors')\n",
}

EXPECTED_FAILURES = {
    "ztensor2": {
        # Its zt.quant_group/1 object has group_size only; the v2 profile
        # (spec/profiles/zt.quant_group-1.md) requires bits, axis, packing,
        # scale_form and zero_point, which the original does not check (it
        # registers no such profile) and this library's reader does.
        "test_api.py::test_verify_covers_every_part",
    },
}


def _run(suite, tmp_path, needs, at_least):
    for module in needs:
        pytest.importorskip(module)
    src = PEERS / suite
    if not src.is_dir():
        pytest.fail(f"{src} is missing (the peers' suites ship in tests/data/peers)")
    work = tmp_path / suite
    shutil.copytree(src, work)
    (work / "tests" / "data").mkdir(parents=True)  # where safetensors' tests write
    (work / "tests" / "data" / "__init__.py").write_text("")
    path = [str(work)]
    if suite == "safetensors":
        shim = tmp_path / "shim" / "safetensors"
        shim.mkdir(parents=True)
        for name, text in SHIM.items():
            (shim / name).write_text(text)
        path.insert(0, str(shim.parent))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path + [os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", "-o",
                           "addopts=", str(work)], cwd=work, env=env, capture_output=True, text=True, timeout=600)
    outcomes = dict((m.group(2), m.group(1)) for m in re.finditer(r"^(PASSED|FAILED|ERROR) (\S+)", proc.stdout,
                                                                   re.M))
    outcomes = {k.split("/")[-1].split(" ")[0]: v for k, v in outcomes.items()}
    failed = {k for k, v in outcomes.items() if v != "PASSED"}
    expected = EXPECTED_FAILURES.get(suite, set())
    assert outcomes, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert failed == expected, (f"unexpected: {sorted(failed - expected)}; now passing: {sorted(expected - failed)}\n"
                                + proc.stdout[-4000:])
    passed = sum(1 for v in outcomes.values() if v == "PASSED")
    assert passed >= at_least, f"only {passed} cases passed (skips: torch/CUDA/devices absent?)\n" + proc.stdout[-2000:]


def test_safetensors_own_tests(tmp_path):
    _run("safetensors", tmp_path, ["torch", "fsspec"], at_least=50)  # 53 on a CPU-only machine


def test_original_2x_own_tests(tmp_path):
    _run("ztensor2", tmp_path, [], at_least=36)
