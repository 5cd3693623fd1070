"""Which implementation does the per-tensor work of loads: the C++ extension
ztensor._ext when it is there, else ctypes and numpy (the fallback, for
installs that had no compiler or no Python headers).

The extension is the module installed in this package (pip builds it), or,
for the source tree's tests, the one $ZTENSOR_EXTENSION names (meson's build
dir). ZTENSOR_PURE_PYTHON=1 forces the ctypes path. `ext` is the module or
None, `extension_path` its file, `pure_python_reason` why it is None.

The extension is handed the addresses of the functions of the very library
ctypes loaded (it does not link libztensor), so one process never mixes two
copies of the library.
"""

import ctypes
import importlib.util
import os
from types import ModuleType
from typing import Optional, Tuple

from ._lib import lib


def _find() -> Tuple[Optional[ModuleType], str]:
    if os.environ.get("ZTENSOR_PURE_PYTHON", "") not in ("", "0"):
        return None, "ZTENSOR_PURE_PYTHON is set"
    module: Optional[ModuleType] = None
    path = os.environ.get("ZTENSOR_EXTENSION")
    if path:
        spec = importlib.util.spec_from_file_location("ztensor._ext", path)
        if spec is None or spec.loader is None:
            raise ImportError(f"ZTENSOR_EXTENSION={path!r} is not a Python extension module")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    else:
        try:
            from . import _ext as module  # checked against _ext.pyi
        except ImportError as e:
            return None, f"ztensor._ext is not installed ({e})"
    assert module is not None

    def address(name: str) -> int:
        return ctypes.cast(getattr(lib, name), ctypes.c_void_p).value or 0

    module.bind(address("zt_file_object_table"), address("zt_file_read_many"), address("zt_free"),
                address("zt_object_component"), address("zt_component_view"), address("zt_component_read"))
    return module, ""


ext, pure_python_reason = _find()
extension_path: Optional[str] = getattr(ext, "__file__", None)
