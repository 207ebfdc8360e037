"""ampx.CompiledModel: a compiled plan, run on NumPy arrays."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from . import _ampx, _args, _tensors
from ._plan import Plan


@dataclass(frozen=True)
class TensorInfo:
    name: str
    dtype: str  # ampx's name: f32, f16, bf16, f64, i64, i32, i8, u8, bool
    shape: tuple[int, ...]


class CompiledModel:
    """What Session.compile returns (ampx::CompiledModel): fused per device,
    kernels prepared, weights on the devices. ``run`` is one run of ``ampx run``."""

    def __init__(self, impl: _ampx.CompiledModel, plan: Plan):
        self._impl = impl
        self._plan = plan
        self._inputs = [TensorInfo(n, d, tuple(s)) for n, d, s in impl.inputs()]
        self._outputs = [TensorInfo(n, d, tuple(s)) for n, d, s in impl.outputs()]

    @property
    def plan(self) -> Plan:
        return self._plan

    @property
    def inputs(self) -> list[TensorInfo]:
        return list(self._inputs)

    @property
    def outputs(self) -> list[TensorInfo]:
        return list(self._outputs)

    def _arrays(self, feed: Mapping[str, Any]) -> list[np.ndarray]:
        _args.feed("the inputs", feed, (t.name for t in self._inputs))
        return [_tensors.to_input(t.name, t.dtype, feed[t.name]) for t in self._inputs]

    @staticmethod
    def _outputs_of(raw: list[tuple[str, str, np.ndarray]]) -> dict[str, np.ndarray]:
        return {name: _tensors.from_output(dtype, arr) for name, dtype, arr in raw}

    def run(self, feed: Mapping[str, Any], *, profile: bool = False, runs: int = 1,
            trace: Any = None) -> Any:
        """One run: {input name: array} -> {output name: array}.

        An array of the input's dtype that is C-contiguous is read in place;
        others are converted first. With ``profile=True`` (or ``trace=PATH``),
        ``runs`` profiled runs, every kernel and copy timed: returns (outputs
        of the last, the per-node table as ``ampx run --per-node --format json``
        gives it); ``trace`` also writes the Chrome trace there."""
        _args.flag("profile", profile)
        arrays = self._arrays(feed)
        if not profile and trace is None:
            return self._outputs_of(self._impl.run(arrays))
        _args.count("runs", runs, minimum=1)
        raw, per_node = self._impl.run_profiled(
            arrays, runs, "" if trace is None else _args.path("trace", trace))
        return self._outputs_of(raw), json.loads(per_node)

    def trace(self, path: Any, feed: Mapping[str, Any], runs: int = 10) -> None:
        """Write `runs` profiled runs to PATH as Chrome trace events (Perfetto,
        chrome://tracing), as ``ampx run --trace`` does."""
        self.run(feed, runs=runs, trace=path)

    def stats(self) -> dict[str, Any]:
        """Kernels, copies and memory per run."""
        return self._impl.stats()

    def _input_addresses(self, feed: Mapping[str, Any]) -> list[int]:
        """Where a run reads each input from (the zero-copy tests)."""
        return self._impl.input_addresses(self._arrays(feed))

    def __repr__(self) -> str:
        ins = ", ".join(f"{t.name}: {t.dtype}{list(t.shape)}" for t in self._inputs)
        return f"<ampx.CompiledModel {self._plan.model} ({ins})>"
