"""safe_open for every framework name safetensors accepts, and
_safe_open_handle: the one dispatch, which the numpy and torch adapters
and ztensor.safe_open all call (it imports no adapter: the torch handle
lives in _torch_open, imported when asked for)."""

import os
from typing import Any, Callable

from ._errors import InvalidArgumentError
from ._safe import SafeOpen
from ._types import Array, Source
from .reader import Reader


# safetensors' framework names -> the adapter that serves them; the others
# are served by numpy then converted (FOREIGN), when the package is there.
FRAMEWORKS = {"np": "numpy", "numpy": "numpy", "pt": "torch", "torch": "torch", "pytorch": "torch",
              "tf": "tensorflow", "tensorflow": "tensorflow", "jax": "flax", "flax": "flax", "mlx": "mlx",
              "paddle": "paddle"}
# framework -> (the package it needs, how an array becomes its tensor)
FOREIGN = {"tensorflow": ("tensorflow", "convert_to_tensor"), "flax": ("jax", "numpy.array"),
           "mlx": ("mlx", "core.array"), "paddle": ("paddle", "to_tensor")}


def framework_name(framework: str) -> str:
    """The framework safetensors' name means ("numpy", "torch",
    "tensorflow", "flax", "mlx", "paddle"); SafetensorError (also a
    ValueError) for other names."""
    if not isinstance(framework, str) or framework not in FRAMEWORKS:
        raise InvalidArgumentError(f"framework {framework} is invalid")
    return FRAMEWORKS[framework]


def foreign_converter(framework: str) -> Callable[[Any], Any]:
    """array -> the framework's tensor, for tensorflow, flax/jax, mlx and
    paddle; ImportError naming the package when it is not installed."""
    import importlib
    package, path = FOREIGN[framework]
    try:
        module: Any = importlib.import_module(package if package != "mlx" else "mlx.core")
    except ImportError as e:
        raise ImportError(f"safe_open(framework={framework!r}) needs the {package!r} package, which is not "
                          f"installed ({e})", name=package) from e
    if package == "jax":
        module = importlib.import_module("jax.numpy")
        return module.array  # type: ignore[no-any-return]
    if package == "mlx":
        return module.array  # type: ignore[no-any-return]
    return getattr(module, path)  # type: ignore[no-any-return]


def _numpy_array(array: Array, zt_type: str, name: str) -> Array:
    return array


def _numpy_zero_copy(reader: Reader, name: str, view: Array, zt_type: str) -> Array:
    return view  # read-only: numpy refuses writes


def safe_open(filename: Source, framework: str, device: Any = "cpu", *, backend: str = "mmap", copy: bool = True,
              verify: bool = False) -> "SafeOpen[Any]":
    """ztensor.safe_open: the framework's own safe_open (ztensor.torch is
    imported only when asked for). tensorflow, flax/jax, mlx and paddle get
    numpy's arrays converted by the framework (ImportError naming the
    package when it is not installed)."""
    name = framework_name(framework)
    if name == "torch":
        from . import _torch_open
        return _torch_open.safe_open(filename, framework, device, backend=backend, copy=copy, verify=verify)
    if name == "numpy":
        if device != "cpu":
            raise ValueError(f"numpy arrays live on the CPU; device {device!r} is not available (use ztensor.torch)")
        return SafeOpen(filename, framework, device, copy, verify, _numpy_array, _numpy_zero_copy, backend,
                        arrays_as_they_are=True)
    convert = foreign_converter(name)
    return SafeOpen(filename, framework, device, True, verify, lambda a, t, n: convert(a), None, backend)


def _safe_open_handle(f: Any, framework: str, device: Any = "cpu", *, backend: str = "mmap") -> "SafeOpen[Any]":
    """safetensors' _safe_open_handle: safe_open over an open file object. A
    file with a name on disk (open(path), even in text mode) is opened by
    that name, as safetensors does; any other (fsspec, io.BytesIO) is read
    through the object itself (read and seek)."""
    name = getattr(f, "name", None)
    if hasattr(f, "fileno") and isinstance(name, (str, bytes, os.PathLike)) and os.path.isfile(name):
        return safe_open(name, framework, device, backend=backend)
    if not (hasattr(f, "read") and hasattr(f, "seek")):
        raise TypeError(f"_safe_open_handle takes an open file object, not {type(f).__name__}")
    return safe_open(f, framework, device, backend=backend)
