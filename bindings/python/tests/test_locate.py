"""Which libztensor the package loads, and what it says when there is none."""
import os
import subprocess
import sys

import pytest

import ztensor
from ztensor import _locate


def _nothing_anywhere(tmp_path, **kw):
    args = dict(environ={}, package_dir=str(tmp_path), major="999", pkg_config_libdir=lambda: None,
                find_library=lambda name: None)
    args.update(kw)
    with pytest.raises(ztensor.LibraryNotFoundError) as e:
        _locate.load(**args)
    return str(e.value)


def test_nothing_found_names_every_place_and_the_fix(tmp_path):
    msg = _nothing_anywhere(tmp_path)
    for expected in ("ZTENSOR_LIBRARY: not set", f"no libztensor in {tmp_path}", "libztensor.so.999",
                     "pkg-config: no ztensor.pc", "find_library: found nothing", "fix:", "pip install"):
        assert expected in msg


def test_a_missing_bundled_library_is_named(tmp_path):
    msg = _nothing_anywhere(tmp_path, bundled_name="libztensor.so.9.9.9")
    assert str(tmp_path / "libztensor.so.9.9.9") in msg


def test_a_bad_override_fails_instead_of_falling_back(tmp_path):
    bad = str(tmp_path / "nope.so")
    msg = _nothing_anywhere(tmp_path, environ={"ZTENSOR_LIBRARY": bad})
    assert bad in msg and "unset it" in msg


def test_import_with_a_bad_override_says_so():
    env = dict(os.environ, ZTENSOR_LIBRARY="/nonexistent/libztensor.so.1")
    r = subprocess.run([sys.executable, "-c", "import ztensor"], env=env, capture_output=True, text=True)
    assert r.returncode != 0
    assert "LibraryNotFoundError: ZTENSOR_LIBRARY='/nonexistent/libztensor.so.1' cannot be loaded" in r.stderr


def test_the_loaded_library_is_reported_and_compatible():
    assert ztensor.library_source in ("ZTENSOR_LIBRARY", "package", "system loader", "pkg-config", "find_library")
    if ztensor.library_source in ("ZTENSOR_LIBRARY", "package"):
        assert os.path.isfile(ztensor.library_path)
    assert ztensor.library_version().split(".")[0] == ztensor.__version__.split(".")[0]


def test_another_major_version_is_refused():
    with pytest.raises(ImportError, match=r"/x/libztensor.so.2 \(found via system loader\) is libztensor 2.0.0, "
                                          r"but this ztensor package \(1.4.0\) needs libztensor 1.4 or a newer 1.x"):
        _locate.require_compatible("2.0.0", "1.4.0", "/x/libztensor.so.2", "system loader")
    # No branches for older libraries: an older minor version is refused at import too (issue 36, §2)
    with pytest.raises(ImportError, match=r"is libztensor 1.3.9, but this ztensor package \(1.4.0\) needs libztensor "
                                          r"1.4 or a newer 1.x"):
        _locate.require_compatible("1.3.9", "1.4.0", "/x/libztensor.so.1", "package")
    _locate.require_compatible("1.4.0", "1.4.0", "/x/libztensor.so.1", "package")
    _locate.require_compatible("1.5.2", "1.4.0", "/x/libztensor.so.1", "package")  # newer: a superset
