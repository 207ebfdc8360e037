"""ampx.devices() and ampx.plugins(): what `ampx devices` lists."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable

from . import _ampx, _args


@dataclass(frozen=True)
class Device:
    """One device a plugin offers (`ampx devices`)."""

    id: str  # "onednn:0": what Session(devices=...) takes
    plugin: str
    name: str
    kind: str  # "cpu", "gpu" or "other"
    vendor: str
    driver_version: str
    fingerprint: str  # the capability database's key for this hardware and software
    memory_bytes: int
    compute_units: int
    # op -> the float dtypes ("f32", "f16", "bf16") the device answers
    # `native` for: the planner's own capability question, asked at the
    # probe's representative shapes (docs/PYTHON.md, "Devices"). Ops the
    # probe has no case for are absent.
    native: dict[str, tuple[str, ...]] = field(default_factory=dict, hash=False)
    # Set (and `native` empty) when the plugin's capability query failed.
    native_error: str = ""

    def __str__(self) -> str:
        return f"{self.id}: {self.name} [{self.kind}]"

    def is_native(self, op: str, dtype: str) -> bool:
        """Whether the device has a native kernel for `op` in `dtype`
        ("f32", "f16" or "bf16"), as the planner asks it. ValueError for an
        op it was not asked about (not in `native`), or another dtype;
        DeviceError when its plugin could not answer."""
        if not isinstance(op, str) or not isinstance(dtype, str):
            raise TypeError("is_native: op and dtype must be str")
        if dtype not in _DTYPES:
            raise ValueError(f"is_native: dtype '{dtype}': expected one of {', '.join(_DTYPES)}")
        if self.native_error:
            raise _ampx.DeviceError(f"{self.id}: {self.native_error}")
        if op not in self.native:
            raise ValueError(
                f"is_native: op '{op}' was not asked of {self.id}: not an op of the set, or one "
                "the probe has no case for (docs/PYTHON.md, \"Devices\")"
            )
        return dtype in self.native[op]


_DTYPES = ("f32", "f16", "bf16")


def _device(d: dict[str, Any]) -> Device:
    fields = Device.__dataclass_fields__
    plain = {k: v for k, v in d.items() if k in fields and k != "native"}
    native = {op: tuple(dtypes) for op, dtypes in d.get("native", {}).items()}
    return Device(kind=d["type"], native=native, **plain)


def _listing(plugin_dirs: Iterable[str] | None, exclude_plugins: Iterable[str] | None) -> dict[str, Any]:
    return json.loads(
        _ampx.list_devices(
            [_args.path("plugin_dirs entry", d) for d in (plugin_dirs or [])],
            _args.names("exclude_plugins", exclude_plugins),
        )
    )


def devices(plugin_dirs: Iterable[str] | None = None, exclude_plugins: Iterable[str] | None = None) -> list[Device]:
    """Every device of the plugins found (the package's own, AMPX_PLUGIN_PATH,
    `plugin_dirs`), with its native dtypes per op (`Device.native`)."""
    return [_device(d) for d in _listing(plugin_dirs, exclude_plugins)["devices"]]


def plugins(plugin_dirs: Iterable[str] | None = None, exclude_plugins: Iterable[str] | None = None) -> dict[str, Any]:
    """`ampx devices --format json` (schema ampx.devices/1): search directories,
    plugins loaded, devices, and plugins skipped with the reason."""
    return _listing(plugin_dirs, exclude_plugins)
