"""Attribute values between Python and the library's JSON form of CBOR.

The library writes byte strings as {"$bytes": hex}, non-finite floats as
{"$float": "nan"|"inf"|"-inf"}, tags as {"$tag": n, "$value": v}, maps with
non-text keys (or a key starting with '$', which a plain object would let
pass for one of these conventions) as {"$map": [[k, v], ...]}, integers beyond 64 bits as
{"$bigint": "..."} and undefined as {"$undefined": true}. Here they are
bytes, float, Tagged, dict, int and UNDEFINED, in both directions.
"""

import json
import math
from typing import Any, NamedTuple

import numpy as np


class Tagged(NamedTuple):
    """A CBOR tag: tag number and the tagged value (Tagged(1, 1700000000) is an epoch time)."""
    tag: int
    value: Any


class _Undefined:
    __slots__ = ()

    def __repr__(self) -> str:
        return "ztensor.UNDEFINED"


UNDEFINED = _Undefined()

_INT64_MIN, _UINT64_MAX = -(1 << 63), (1 << 64) - 1


def from_json_text(text: str) -> Any:
    return decode(json.loads(text))


def decode(v: Any) -> Any:
    if isinstance(v, list):
        return [decode(x) for x in v]
    if not isinstance(v, dict):
        return v
    if len(v) == 1:
        (k, x), = v.items()
        if k == "$bytes" and isinstance(x, str):
            return bytes.fromhex(x)
        if k == "$float" and isinstance(x, str):
            return float(x)
        if k == "$bigint" and isinstance(x, str):
            return int(x)
        if k == "$undefined":
            return UNDEFINED
        if k == "$map" and isinstance(x, list):
            return {_hashable(decode(p[0])): decode(p[1]) for p in x}
    if len(v) == 2 and "$tag" in v and "$value" in v:
        return Tagged(v["$tag"], decode(v["$value"]))
    return {k: decode(x) for k, x in v.items()}


def _hashable(k: Any) -> Any:  # Hashable
    if isinstance(k, list):
        return tuple(_hashable(x) for x in k)
    if isinstance(k, dict):
        return tuple(sorted((_hashable(a), _hashable(b)) for a, b in k.items()))
    return k


def to_json_text(value: Any) -> str:
    return json.dumps(encode(value), allow_nan=False, separators=(",", ":"))


def encode(v: Any) -> Any:
    if isinstance(v, np.generic):
        v = v.item()
    elif isinstance(v, np.ndarray):
        v = v.tolist()
    if v is UNDEFINED:
        return {"$undefined": True}
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, int):
        return v if _INT64_MIN <= v <= _UINT64_MAX else {"$bigint": str(v)}
    if isinstance(v, float):
        if math.isnan(v):
            return {"$float": "nan"}
        if math.isinf(v):
            return {"$float": "inf" if v > 0 else "-inf"}
        return v
    if isinstance(v, (bytes, bytearray, memoryview)):
        return {"$bytes": bytes(v).hex()}
    if isinstance(v, Tagged):
        return {"$tag": int(v.tag), "$value": encode(v.value)}
    if isinstance(v, dict):
        if all(isinstance(k, str) and not k.startswith("$") for k in v):
            return {k: encode(x) for k, x in v.items()}
        return {"$map": [[encode(k), encode(x)] for k, x in v.items()]}
    if isinstance(v, (list, tuple)):
        return [encode(x) for x in v]
    raise TypeError(f"attribute value of type {type(v).__name__} cannot be stored")
