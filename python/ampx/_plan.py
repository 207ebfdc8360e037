"""ampx.Plan: a model's precision and placement plan, as `ampx plan` shows it."""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from . import _ampx, _args


@dataclass(frozen=True)
class NodeRecord:
    """One node of the plan (a row of `ampx plan`)."""

    name: str
    op: str
    intended: str  # what the policy wants: f32, f16 or bf16
    effective: str  # what the plan computes in on its device
    reason: str  # one word: why `effective` (white-list, no-native-kernel, cost, ...)
    device: str
    placement: str  # why that device: first-choice, fallback, cost, override
    predicted_us: float | None  # the cost model's prediction; None without one
    cost_origin: str | None  # measured, probe or hint
    origin: str | None  # the imported ONNX op(s) it stands for
    placement_note: str | None = None
    device_16bit_support: str | None = None  # the device's answer: native, emulated, unsupported
    time_f32_us: float | None = None
    time_16bit_us: float | None = None

    @classmethod
    def _from_json(cls, j: dict[str, Any]) -> "NodeRecord":
        return cls(
            name=j["name"],
            op=j["op"],
            intended=j["intended"],
            effective=j["effective"],
            reason=j["reason"],
            device=j["device"],
            placement=j["placement"],
            predicted_us=j.get("predicted_us"),
            cost_origin=j.get("cost_origin"),
            origin=j.get("origin"),
            placement_note=j.get("placement_note"),
            device_16bit_support=j.get("device_16bit_support"),
            time_f32_us=j.get("time_f32_us"),
            time_16bit_us=j.get("time_16bit_us"),
        )


@dataclass(frozen=True)
class CastRecord:
    """A Cast the plan inserted."""

    name: str
    value: str  # the value it converts
    from_dtype: str
    to_dtype: str
    on_constant: bool  # a weight's: folded once at load
    device: str


class Plan:
    """What Session.plan returns: every node's intended and effective dtype,
    its device and why, the Casts, and the summary. ``str(plan)`` is ``ampx
    plan``'s table, ``to_json()`` its ``--format json`` (schema ampx.plan/1)."""

    def __init__(self, impl: _ampx.Plan):
        self._impl = impl

    @cached_property
    def _json(self) -> dict[str, Any]:
        return json.loads(self._impl.to_json())

    def to_json(self) -> str:
        return self._impl.to_json()

    @property
    def model(self) -> str:
        return self._impl.model

    @property
    def devices(self) -> list[str]:
        return list(self._impl.devices)

    @property
    def amp(self) -> str:
        return self._json["amp"]

    @property
    def dtype(self) -> str:
        """The 16-bit type planned with (``dtype="auto"`` resolved)."""
        return self._json["dtype"]

    @cached_property
    def nodes(self) -> list[NodeRecord]:
        return [NodeRecord._from_json(n) for n in self._json["nodes"]]

    @cached_property
    def casts(self) -> list[CastRecord]:
        return [
            CastRecord(c["name"], c["value"], c["from"], c["to"], c["on_constant"], c["device"])
            for c in self._json["casts"]
        ]

    @property
    def summary(self) -> dict[str, Any]:
        """Counts: nodes, intended and effective 16-bit, kept f32 and why, casts, copies."""
        return dict(self._json["summary"])

    @property
    def predicted_us(self) -> float | None:
        return self._json.get("predicted_us")

    def export(self, path: Any) -> dict[str, Any]:
        """Write the planned graph (its Casts and 16-bit nodes) as ONNX opset 17, as
        ``ampx export`` does; returns what was written."""
        return self._impl.export(_args.path("path", path))

    def __str__(self) -> str:
        return self._impl.text()

    def __repr__(self) -> str:
        s = self.summary
        return (
            f"<ampx.Plan {self.model}: {self._impl.title}; {s['effective_16bit']} of "
            f"{s['intended_16bit']} intended 16-bit nodes effective, {s['casts']} casts>"
        )

    def _repr_html_(self) -> str:
        """The plan as a table, for Jupyter."""
        e = html.escape
        head = ["node", "op", "intended", "effective", "reason", "device", "predicted us"]
        rows = []
        for n in self.nodes:
            us = "" if n.predicted_us is None else f"{n.predicted_us:.1f}"
            cells = [n.name, n.op, n.intended, n.effective, n.reason, n.device, us]
            style = ' style="background:#eef7ee"' if n.effective in ("f16", "bf16") else ""
            rows.append(f"<tr{style}>" + "".join(f"<td>{e(str(c))}</td>" for c in cells) + "</tr>")
        s = self.summary
        caption = (
            f"{e(self.model)}: {e(self._impl.title)} &mdash; {s['effective_16bit']} of "
            f"{s['intended_16bit']} intended 16-bit nodes effective, {s['casts']} casts"
        )
        return (
            f"<table><caption>{caption}</caption><thead><tr>"
            + "".join(f"<th>{h}</th>" for h in head)
            + "</tr></thead><tbody>"
            + "".join(rows)
            + "</tbody></table>"
        )
