"""setuptools side of bindings/python/pyproject.toml: the version comes from
include/ztensor.h (its one source), and the package gets the _build_info.py
that meson writes for the root install, saying no library is bundled. The
C++ extension ztensor._ext is built when a compiler and numpy's headers are
there (optional: without them the package uses ctypes alone)."""
import re
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

HEADER = Path(__file__).resolve().parents[2] / "include" / "ztensor.h"


def header_version() -> str:
    try:
        text = HEADER.read_text(encoding="utf-8")
    except OSError as e:
        raise SystemExit(f"ztensor: {HEADER} not found ({e}); install from a libztensor source tree") from None
    parts = [re.search(r"#define ZT_VERSION_%s (\d+)" % k, text) for k in ("MAJOR", "MINOR", "PATCH")]
    if not all(parts):
        raise SystemExit(f"ztensor: no ZT_VERSION_MAJOR/MINOR/PATCH in {HEADER}")
    return ".".join(m.group(1) for m in parts if m)


class BuildPy(build_py):
    def run(self) -> None:
        super().run()
        info = Path(self.build_lib, "ztensor", "_build_info.py")
        info.write_text('"""Written by bindings/python/setup.py: the binding without a bundled library."""\n\n'
                        f'version = "{header_version()}"\n'
                        "# None: no libztensor in this package; the system's is used.\n"
                        "library = None\n", encoding="utf-8")


def extensions() -> "list[Extension]":
    try:
        import numpy
    except ImportError:
        return []
    return [Extension("ztensor._ext", ["ext/ztensor_ext.cpp"], include_dirs=[str(HEADER.parent), numpy.get_include()],
                      language="c++", extra_compile_args=["-std=c++17"], optional=True)]


setup(version=header_version(), cmdclass={"build_py": BuildPy}, ext_modules=extensions())
