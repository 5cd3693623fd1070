"""What ztensor.numpy and ztensor.torch share: the safetensors-style calls
(save_file, load_file, save, load, safe_open) over Reader and Writer, with
the framework's conversions passed in.

Metadata is safetensors' dict[str, str]: it is stored as the file's
attributes and given back by safe_open(...).metadata().
"""

from types import TracebackType
from typing import Any, Callable, Dict, Generic, List, Mapping, Optional, Tuple, Type, TypeVar

import numpy as np

from . import _attributes
from ._lib import ZTensorError, has
from ._types import Array, PathLike, Source
from .reader import Reader, Slice
from .writer import Digest, Writer, Zstd

T = TypeVar("T")  # the framework's tensor type

# One tensor for writing: (little-endian contiguous array, zTensor dtype name
# or None to take the array's own).
ToNumpy = Callable[[str, Any], Tuple[Array, Optional[str]]]
# Back: (array as the Reader gives it, zTensor element type name, name) -> tensor.
FromNumpy = Callable[[Array, str, str], Any]


class SafetensorError(ZTensorError):
    """safetensors' SafetensorError, for the misuse it raises it for: a
    closed handle, an index out of range in get_slice, a non-empty index
    list. A ZTensorError, so code catching either sees it; str(e) is the
    message alone, as safetensors gives it."""

    def __init__(self, message: str) -> None:
        super().__init__(-2, message)  # ZT_E_MISUSE
        self.args = (message,)

    def __str__(self) -> str:
        return self.message


BACKENDS = {"mmap": True, "pread": False}  # safetensors' backend -> Reader(mmap=)


def reader_mmap(backend: str) -> bool:
    """Reader's mmap= for safetensors' backend=; ValueError for other names."""
    if not isinstance(backend, str) or backend not in BACKENDS:
        raise ValueError(f'backend {backend!r} is invalid (expected one of: "mmap", "pread")')
    return BACKENDS[backend]


def check_metadata(metadata: Optional[Mapping[str, str]]) -> Optional[Dict[str, str]]:
    """safetensors' rule: metadata is None or a dict of str to str."""
    if metadata is None:
        return None
    if not isinstance(metadata, Mapping):
        raise TypeError(f"metadata must be a dict of str to str, not {type(metadata).__name__}")
    for k, v in metadata.items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise TypeError(f"metadata must be a dict of str to str; entry {k!r}: {v!r} is "
                            f"{type(k).__name__} to {type(v).__name__}")
    return dict(metadata)


def metadata_of(reader: Reader) -> Optional[Dict[str, str]]:
    """The file attributes as safetensors metadata: None when there are none;
    values that are not text (files written by other tools) as JSON text."""
    attrs = reader.attributes
    if attrs is None:
        return None
    if not isinstance(attrs, dict):
        return {"__metadata__": _attributes.to_json_text(attrs)}
    return {str(k): v if isinstance(v, str) else _attributes.to_json_text(v) for k, v in attrs.items()}


def write(tensors: Mapping[str, Any], target: Optional[PathLike], metadata: Optional[Mapping[str, str]],
          to_numpy: ToNumpy, zstd: Zstd, digest: Digest, format: Any = None) -> Optional[bytes]:
    """Writes tensors (atomically for a path); target None gives the file's bytes."""
    if not isinstance(tensors, Mapping):
        raise TypeError(f"tensors must be a dict of name to tensor, not {type(tensors).__name__}")
    meta = check_metadata(metadata)
    converted = []
    for name, value in tensors.items():
        if not isinstance(name, str):
            raise TypeError(f"tensor names are str, not {type(name).__name__} ({name!r})")
        converted.append((name, *to_numpy(name, value)))
    # One state dict gives one file, whatever the insertion order: tensors
    # are written in name order (as safetensors' header is sorted).
    converted.sort(key=lambda entry: entry[0])
    with Writer(target, zstd=zstd, digest=digest, format=format,
                canonical=not zstd and digest in (None, "xxh3")) as w:
        for name, array, dtype in converted:
            w.add(name, array, dtype=dtype)
        if meta is not None:
            w.attributes = meta
    return w.getvalue() if target is None else None


def dense_names(reader: Reader) -> List[str]:
    """Every object's name; objects that are not dense tensors are refused by name."""
    names = list(reader)
    table = reader._table
    if table is not None and bool(table.rows["dense"].all()):
        return names
    for name in names:
        fmt = reader.format_of(name)
        if fmt != "dense":
            raise ValueError(f"{name!r} is a {fmt} object; ztensor.numpy/ztensor.torch load dense tensors "
                             "(read the others with ztensor.Reader)")
    return names


def zt_type(reader: Reader, name: str) -> str:
    """The element type name of a dense object: its logical type, else its storage dtype."""
    return reader.element_type(name)


def read_all(reader: Reader, from_numpy: FromNumpy, split: Optional[Callable[[Any, str, str], Any]] = None,
             arrays_as_they_are: bool = False) -> Dict[str, Any]:
    """Every tensor, as views of one new buffer this process owns (not a
    mapping of the file): writable, and untouched by later changes to the file.
    With the C++ extension: split(block, zt_type, name) gives the tensors
    of a group of one type and shape (None: numpy arrays, when
    arrays_as_they_are says from_numpy changes nothing)."""
    names = dense_names(reader)
    if split is not None or arrays_as_they_are:
        fast = reader._read_native(None, split, from_numpy)
        if fast is not None:
            return fast
    dense = reader.read_dense(names)
    return dict(zip(dense.names, dense.split(from_numpy)))


def file_is_copy_on_write(reader: Reader) -> bool:
    """Whether writes through zero-copy views of this reader stay private to
    the process: a mapped file, from a library that maps them copy-on-write
    (ABI 1.1, the release that also brought zt_component_read_slice)."""
    return reader.path is not None and has("zt_component_read_slice")


class SafeOpen(Generic[T]):
    """The object safe_open gives: a lazy handle on a .zt file.

        with safe_open("model.zt", framework="pt") as f:
            for k in f.keys():
                t = f.get_tensor(k)
            part = f.get_slice("embed")[:, 0:64]
            meta = f.metadata()
    """

    def __init__(self, source: Source, framework: str, device: Any, copy: bool, verify: bool,
                 from_numpy: FromNumpy, zero_copy: Optional[Callable[[Reader, str, Array, str], Any]],
                 backend: str = "mmap", *, split: Optional[Callable[[Any, str, str], Any]] = None,
                 arrays_as_they_are: bool = False) -> None:
        self._reader = Reader(source, verify=verify, mmap=reader_mmap(backend))
        self._split = split  # read_all's fast path (the C++ extension)
        self._arrays_as_they_are = arrays_as_they_are
        self.framework = framework
        self.device = device
        self.copy = copy
        self._from_numpy = from_numpy
        self._zero_copy = zero_copy

    def __enter__(self) -> "SafeOpen[T]":
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        self.close()

    def close(self) -> None:
        """Closes the file (tensors already returned stay valid)."""
        self._reader.close()

    @property
    def reader(self) -> Reader:
        """The underlying ztensor.Reader (info, verify, composite objects, ...)."""
        return self._open()

    def _open(self) -> Reader:
        if self._reader._h is None:
            raise SafetensorError("File is closed")
        return self._reader

    def keys(self) -> List[str]:
        """The tensor names, sorted (as safetensors gives them)."""
        return sorted(self._open())

    def offset_keys(self) -> List[str]:
        """The tensor names in the order of their data in the file."""
        reader = self._open()

        def offset(name: str) -> int:
            return min((c.offset for c in reader.info(name).components), default=0)
        return sorted(reader, key=offset)

    def metadata(self) -> Optional[Dict[str, str]]:
        """The metadata given to save_file (the file's attributes), or None."""
        return metadata_of(self._open())

    def get_tensors(self) -> Dict[str, T]:
        """Every tensor, {name: tensor} in file order (safetensors'
        get_tensors), read in one batched call into memory this process owns
        (with copy=False, zero-copy where the data allows)."""
        reader = self._open()
        if not self.copy and self._zero_copy is not None:
            return {name: self.get_tensor(name) for name in dense_names(reader)}
        return self._place(read_all(reader, self._from_numpy, self._split, self._arrays_as_they_are))

    def _place(self, tensors: Dict[str, Any]) -> Dict[str, T]:
        """Moves tensors to the handle's device (torch overrides it)."""
        return tensors

    def _name(self, name: str) -> str:
        if name not in self._open():
            raise KeyError(f"File does not contain tensor {name}")
        return name

    def get_tensor(self, name: str) -> T:
        """The whole tensor: writable (a private copy) by default; with
        safe_open(..., copy=False), zero-copy where the data allows."""
        self._name(name)
        if not self.copy and self._zero_copy is not None:
            view = self._reader[name]
            result: T = self._zero_copy(self._reader, name, view, zt_type(self._reader, name))
            return result
        if self._reader.format_of(name) != "dense":
            dense_names(self._reader)  # raises, naming it
        array = self._reader.read_many([name])[name]
        converted: T = self._from_numpy(array, zt_type(self._reader, name), name)
        return converted

    def get_slice(self, name: str) -> "SafeSlice[T]":
        """A lazy slice handle: get_shape(), get_dtype(), and [index] reading only that part."""
        return SafeSlice(self._open().get_slice(self._name(name)), self._from_numpy)


class SafeSlice(Generic[T]):
    """safetensors' PySafeSlice: get_shape(), get_dtype(), and [ints, slices
    with any step, ..., tuples] reading only the indexed box.

        s = f.get_slice("w")
        s.get_shape()    # [4096, 1024]
        s[:, 0:64:2]     # a tensor of shape (4096, 32)
    """

    def __init__(self, inner: Slice, from_numpy: FromNumpy) -> None:
        self._inner = inner
        self._from_numpy = from_numpy

    def get_shape(self) -> List[int]:
        return self._inner.get_shape()

    def get_dtype(self) -> str:
        return self._inner.get_dtype()

    def __len__(self) -> int:
        return len(self._inner)

    def __getitem__(self, index: Any) -> T:
        array = self._inner[check_index(index, self._inner.shape)]
        out: T = self._from_numpy(array, self._inner.zt_type, self._inner.name)
        return out


def check_index(index: Any, shape: Tuple[int, ...]) -> Any:
    """safetensors' rules for a slice index, before numpy's: an int or a
    slice bound outside its dimension raises SafetensorError (numpy would
    clip a slice), [] selects nothing (an empty tensor), a non-empty list
    is refused, other types raise TypeError. Steps and `...`, which
    safetensors lacks, are kept."""
    if isinstance(index, list):
        if index:
            raise SafetensorError("Non empty lists are not implemented")
        return slice(0, 0)
    items = index if isinstance(index, tuple) else (index,)
    if any(item is Ellipsis for item in items):
        at = next(k for k, item in enumerate(items) if item is Ellipsis)
        fill = max(len(shape) - (len(items) - 1), 0)
        items = items[:at] + (slice(None),) * fill + items[at + 1:]
    for dim, (item, size) in enumerate(zip(items, shape)):
        if isinstance(item, slice):
            for bound in (item.start, item.stop):
                if bound is None:
                    continue
                if not isinstance(bound, (int, np.integer)) or isinstance(bound, bool):
                    raise TypeError(f"slice bounds must be integers, not {type(bound).__name__}")
                if bound > size or bound < -size:
                    raise SafetensorError(f"Error during slicing {index!r} with shape {list(shape)}: index "
                                          f"{bound} out of bounds for tensor dimension #{dim} of size {size}")
        elif isinstance(item, (int, np.integer)) and not isinstance(item, bool):
            if item < -size:
                raise SafetensorError(f"Invalid index {item} for dimension {dim} of size {size}")
            if item >= size:
                raise SafetensorError(f"Error during slicing {index!r} with shape {list(shape)}: index {item} "
                                      f"out of bounds for tensor dimension #{dim} of size {size}")
        else:
            raise TypeError(f"a slice index takes ints, slices, ... and tuples of them, not {type(item).__name__}")
    return index


FRAMEWORKS = {"np": "numpy", "numpy": "numpy", "pt": "torch", "torch": "torch"}


def framework_name(framework: str) -> str:
    """"numpy" or "torch" for the names safetensors accepts; ValueError for others."""
    if framework not in FRAMEWORKS:
        raise ValueError(f"framework {framework!r} is not one of {', '.join(repr(k) for k in FRAMEWORKS)}")
    return FRAMEWORKS[framework]


def safe_open(filename: Source, framework: str, device: Any = "cpu", *, backend: str = "mmap", copy: bool = True,
              verify: bool = False) -> "SafeOpen[Any]":
    """ztensor.safe_open: the framework's own safe_open (ztensor.torch is imported only when asked for)."""
    if framework_name(framework) == "torch":
        from . import torch as zt_torch
        return zt_torch.safe_open(filename, framework, device, backend=backend, copy=copy, verify=verify)
    from . import numpy as zt_numpy
    return zt_numpy.safe_open(filename, framework, device, backend=backend, copy=copy, verify=verify)

