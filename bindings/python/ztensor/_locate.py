"""Finding and loading libztensor.

Order: $ZTENSOR_LIBRARY (an explicit choice: used or failed, never replaced),
the library installed inside this package by `pip install` (the one it was
built with), then a system-wide install: the dynamic loader (LD_LIBRARY_PATH,
ld.so.cache, default dirs), pkg-config's libdir (prefixes the loader does not
search), ctypes.util.find_library. Every miss is recorded so that the error
says where it looked and why each place failed.
"""

import ctypes
import ctypes.util
import glob
import os
import subprocess
import sys
from typing import Callable, Iterator, List, Mapping, NamedTuple, Optional, Tuple

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))

FIX_HINT = ("install the package from the libztensor source tree so it carries its own library\n"
            "    (pip install --no-build-isolation --no-index <libztensor source dir>),\n"
            "  or install libztensor system-wide (meson install, then ldconfig),\n"
            "  or set ZTENSOR_LIBRARY to the path of libztensor.so")


class LibraryNotFoundError(ImportError):
    """libztensor could not be loaded; the message lists every place tried."""


class Loaded(NamedTuple):
    lib: ctypes.CDLL
    path: str  # the file loaded (as the dynamic linker names it)
    source: str  # "ZTENSOR_LIBRARY", "package", "system loader", "pkg-config" or "find_library"


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p), ("dli_sname", ctypes.c_char_p),
                ("dli_saddr", ctypes.c_void_p)]


def _loaded_file(lib: ctypes.CDLL, fallback: str) -> str:
    """The file the loader mapped for `lib` (a soname like libztensor.so.1
    says nothing about where it lives), by dladdr on one of its functions."""
    try:
        dladdr = ctypes.CDLL(None).dladdr  # glibc >= 2.34 and macOS have it in the C library
    except (OSError, AttributeError):
        try:
            dladdr = ctypes.CDLL(ctypes.util.find_library("dl") or "libdl.so.2").dladdr
        except (OSError, AttributeError):
            return fallback
    dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
    dladdr.restype = ctypes.c_int
    info = _DlInfo()
    fn = ctypes.cast(lib.zt_version_string, ctypes.c_void_p)
    if not dladdr(fn, ctypes.byref(info)) or not info.dli_fname:
        return fallback
    return os.fsdecode(info.dli_fname)


def _soname(major: Optional[str]) -> Optional[str]:
    if major is None:
        return None
    if sys.platform == "darwin":
        return f"libztensor.{major}.dylib"
    return f"libztensor.so.{major}"


def _bundled(package_dir: str, bundled_name: Optional[str]) -> Iterator[str]:
    if bundled_name:  # pip-installed: exactly the file meson put there
        yield os.path.join(package_dir, bundled_name)
        return
    # source tree: a library copied beside the package by hand
    for pattern in ("libztensor.so", "libztensor.so.*", "libztensor*.dylib", "ztensor.dll"):
        yield from sorted(glob.glob(os.path.join(package_dir, pattern)))


def _pkg_config_libdir() -> Optional[str]:
    try:
        out = subprocess.run(["pkg-config", "--variable=libdir", "ztensor"], capture_output=True, text=True,
                             timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    return out.stdout.strip() or None


# (source, path to dlopen or None when the place had nothing, what to say about it)
_Candidate = Tuple[str, Optional[str], str]


def _candidates(package_dir: str, bundled_name: Optional[str], major: Optional[str],
                pkg_config_libdir: Callable[[], Optional[str]],
                find_library: Callable[[str], Optional[str]]) -> Iterator[_Candidate]:
    bundled = list(_bundled(package_dir, bundled_name))
    if not bundled:
        yield "package", None, f"no libztensor in {package_dir}"
    for path in bundled:
        yield "package", path, path
    soname = _soname(major)
    if soname:
        yield "system loader", soname, soname
    libdir = pkg_config_libdir()
    if libdir and soname:
        yield "pkg-config", os.path.join(libdir, soname), os.path.join(libdir, soname)
    else:
        yield "pkg-config", None, "no ztensor.pc found"
    found = find_library("ztensor")
    yield "find_library", found, found or "found nothing"


def load(environ: Mapping[str, str] = os.environ, package_dir: str = PACKAGE_DIR,
         bundled_name: Optional[str] = None, major: Optional[str] = None,
         pkg_config_libdir: Callable[[], Optional[str]] = _pkg_config_libdir,
         find_library: Callable[[str], Optional[str]] = ctypes.util.find_library) -> Loaded:
    """Loads libztensor, or raises LibraryNotFoundError naming every place tried.

    `bundled_name` is the library file pip installed in the package
    (from _build_info); `major` the ABI major the binding is written for.
    The other parameters exist so tests can stand in for the system."""
    override = environ.get("ZTENSOR_LIBRARY")
    if override:
        try:
            lib = ctypes.CDLL(override)
        except OSError as e:
            raise LibraryNotFoundError(
                f"ZTENSOR_LIBRARY={override!r} cannot be loaded: {e}\n"
                "  fix: point ZTENSOR_LIBRARY at a libztensor.so, or unset it to use the library "
                "installed with this package or system-wide") from None
        if not hasattr(lib, "zt_version_string"):
            raise LibraryNotFoundError(f"ZTENSOR_LIBRARY={override!r} is not libztensor (no zt_version_string)")
        return Loaded(lib, override, "ZTENSOR_LIBRARY")
    tried = ["ZTENSOR_LIBRARY: not set"]
    for source, path, what in _candidates(package_dir, bundled_name, major, pkg_config_libdir, find_library):
        if path is None:
            tried.append(f"{source}: {what}")
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"{source}: {e}")
            continue
        if not hasattr(lib, "zt_version_string"):  # some other library of that name
            tried.append(f"{source}: {path} is not libztensor (no zt_version_string)")
            continue
        return Loaded(lib, _loaded_file(lib, path), source)
    raise LibraryNotFoundError("libztensor not found; tried, in order:\n  " + "\n  ".join(tried) +
                               "\n  fix: " + FIX_HINT)


def require_compatible(found: str, binding: str, path: str, source: str) -> None:
    """Raises ImportError unless libztensor `found` is the binding's
    (`binding`, its __version__) major version, at its minor version or
    later ("0+unknown" skips the check): the binding has no branches for
    older libraries."""
    if binding.startswith("0+"):
        return
    major, minor = (int(x) for x in binding.split(".")[:2])
    try:
        have = tuple(int(x) for x in found.split(".")[:2])
    except ValueError:
        have = (-1, -1)
    if have[0] != major or have[1] < minor:
        raise ImportError(f"{path} (found via {source}) is libztensor {found}, but this ztensor package "
                          f"({binding}) needs libztensor {major}.{minor} or a newer {major}.x (the package ships "
                          "its own library; this one is another copy)\n  fix: " + FIX_HINT)
