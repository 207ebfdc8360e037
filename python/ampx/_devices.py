"""ampx.devices() and ampx.plugins(): what `ampx devices` lists."""

from __future__ import annotations

import json
from dataclasses import dataclass
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

    def __str__(self) -> str:
        return f"{self.id}: {self.name} [{self.kind}]"


def _listing(plugin_dirs: Iterable[str] | None, exclude_plugins: Iterable[str] | None) -> dict[str, Any]:
    return json.loads(
        _ampx.list_devices(
            [_args.path("plugin_dirs entry", d) for d in (plugin_dirs or [])],
            _args.names("exclude_plugins", exclude_plugins),
        )
    )


def devices(plugin_dirs: Iterable[str] | None = None, exclude_plugins: Iterable[str] | None = None) -> list[Device]:
    """Every device of the plugins found (the package's own, AMPX_PLUGIN_PATH, `plugin_dirs`)."""
    fields = Device.__dataclass_fields__
    return [
        Device(kind=d["type"], **{k: v for k, v in d.items() if k in fields})
        for d in _listing(plugin_dirs, exclude_plugins)["devices"]
    ]


def plugins(plugin_dirs: Iterable[str] | None = None, exclude_plugins: Iterable[str] | None = None) -> dict[str, Any]:
    """`ampx devices --format json` (schema ampx.devices/1): search directories,
    plugins loaded, devices, and plugins skipped with the reason."""
    return _listing(plugin_dirs, exclude_plugins)
