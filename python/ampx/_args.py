"""Argument checks shared by the package: TypeError for a wrong type,
ValueError for a wrong value, each naming the argument."""

from __future__ import annotations

import os
from typing import Any, Iterable, Mapping


def text(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, not {type(value).__name__}")
    return value


def optional_text(name: str, value: Any) -> str | None:
    return None if value is None else text(name, value)


def flag(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, not {type(value).__name__}")
    return value


def count(name: str, value: Any, *, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be {minimum} or more, got {value}")
    return value


def names(name: str, value: Any) -> list[str]:
    """A list of names: a str is one name, any other iterable of str is many."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if not isinstance(value, Iterable):
        raise TypeError(f"{name} must be a str or a list of str, not {type(value).__name__}")
    out = list(value)
    for v in out:
        if not isinstance(v, str):
            raise TypeError(f"{name} must hold str, not {type(v).__name__}")
    return out


def path(name: str, value: Any) -> str:
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str or os.PathLike, not {type(value).__name__}")
    return value


def device_list(value: Any) -> str:
    """devices=: "a,b", ["a", "b"] or None (AMPX_DEVICES, else cpu_ref:0)."""
    if value is None:
        return ""
    ids = names("devices", value)
    if not ids:
        raise ValueError("devices must name at least one device (or be None)")
    return ",".join(ids)


def shapes(value: Any) -> dict[str, list[int]]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise TypeError(f"input_shapes must be a dict of name -> shape, not {type(value).__name__}")
    out: dict[str, list[int]] = {}
    for key, dims in value.items():
        text("input_shapes key", key)
        if isinstance(dims, (str, bytes)) or not isinstance(dims, Iterable):
            raise TypeError(f"input_shapes[{key!r}] must be a sequence of int")
        dims = list(dims)
        for d in dims:
            if isinstance(d, bool) or not isinstance(d, int):
                raise TypeError(f"input_shapes[{key!r}] must hold int, not {type(d).__name__}")
            if d <= 0:
                raise ValueError(f"input_shapes[{key!r}]: dimensions must be positive, got {d}")
        out[key] = dims
    return out


def pins(value: Any) -> list[tuple[str, str]]:
    """place=: {"head*": "cpu_ref:0"} or [("head*", "cpu_ref:0")]."""
    if value is None:
        return []
    items = value.items() if isinstance(value, Mapping) else value
    out = []
    for item in items:
        if not isinstance(item, tuple) or len(item) != 2:
            raise TypeError("place must map a node pattern to a device id")
        out.append((text("place pattern", item[0]), text("place device", item[1])))
    return out


def feed(name: str, value: Any, inputs: Iterable[str]) -> Mapping[str, Any]:
    """A run's {input name: array}: a Mapping naming every input once and
    nothing else."""
    if not isinstance(value, Mapping):
        raise TypeError(f"{name} must be a dict of name -> array, not {type(value).__name__}")
    known = list(inputs)
    for key in value:
        if key not in known:
            raise ValueError(
                f"'{key}' is not an input of the model (inputs: {', '.join(sorted(known))})")
    missing = [n for n in known if n not in value]
    if missing:
        raise ValueError(f"missing input(s): {', '.join(missing)}")
    return value
