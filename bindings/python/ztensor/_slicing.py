"""Turning a Python index (ints, slices, `...`, tuples of them) into the box
zt_component_read_slice reads, plus what numpy must still do to it.

The library reads a contiguous box [start, stop) per dimension; steps and
dropped dimensions are applied afterwards on that (small) box, so a strided
slice reads only the span it covers, never the whole tensor.
"""

from typing import Any, List, NamedTuple, Sequence, Tuple, Union

Index = Union[int, slice, "ellipsis", Tuple[Union[int, slice, "ellipsis"], ...]]  # noqa: F821


class Box(NamedTuple):
    """start/stop per dimension (stop > start, or both 0 for an empty box),
    then `post`, the index to apply to the box read (steps, dropped ints)."""
    start: Tuple[int, ...]
    stop: Tuple[int, ...]
    post: Tuple[Union[int, slice], ...]


def _as_int(x: Any) -> int:
    try:
        return int(x.__index__())
    except (AttributeError, TypeError):
        raise TypeError(f"indices must be ints, slices or ..., not {type(x).__name__}") from None


def _expand(index: Any, ndim: int) -> List[Union[int, slice]]:
    """The index as one int or slice per dimension (`...` and missing trailing dims become `:`)."""
    items = list(index) if isinstance(index, tuple) else [index]
    if sum(1 for i in items if i is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    explicit = sum(1 for i in items if i is not Ellipsis)
    if explicit > ndim:
        raise IndexError(f"too many indices: the tensor has {ndim} dimension(s), the index has {explicit}")
    out: List[Union[int, slice]] = []
    for i in items:
        if i is Ellipsis:
            out.extend([slice(None)] * (ndim - explicit))
        elif i is None:
            raise IndexError("None (newaxis) is not supported in slices; reshape the result instead")
        elif isinstance(i, slice):
            out.append(i)
        else:
            out.append(_as_int(i))
    out.extend([slice(None)] * (ndim - len(out)))
    return out


def box_of(index: Index, shape: Sequence[int]) -> Box:
    """The box to read for `index` on a tensor of `shape`, as numpy would index it.

        box_of((1, slice(0, 4, 2)), (3, 5)) == Box((1, 0), (2, 3), (0, slice(None, None, 2)))
    """
    ndim = len(shape)
    start: List[int] = []
    stop: List[int] = []
    post: List[Union[int, slice]] = []
    for dim, (item, size) in enumerate(zip(_expand(index, ndim), shape)):
        if isinstance(item, int):
            i = item + size if item < 0 else item
            if not 0 <= i < size:
                raise IndexError(f"index {item} is out of bounds for dimension {dim} with size {size}")
            start.append(i)
            stop.append(i + 1)
            post.append(0)
            continue
        first, end, step = item.indices(size)  # validates step != 0, clamps like Python
        count = len(range(first, end, step))
        if count == 0:
            start.append(0)
            stop.append(0)
            post.append(slice(None))
        elif step > 0:
            start.append(first)
            stop.append(first + (count - 1) * step + 1)
            post.append(slice(None, None, step))
        else:
            last = first + (count - 1) * step  # the smallest index taken
            start.append(last)
            stop.append(first + 1)
            post.append(slice(None, None, step))  # from the box's end backwards
    return Box(tuple(start), tuple(stop), tuple(post))
