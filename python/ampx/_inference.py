"""ampx.InferenceSession: ONNX Runtime's InferenceSession shape over ampx's
Session, so that trying ampx is one changed import:

    import ampx as ort                      # was: import onnxruntime as ort
    sess = ort.InferenceSession("model.onnx", providers=["onednn:0"])
    outputs = sess.run(None, {"input": x})

The model is planned (amp level, 16-bit type) and compiled at its first run
and again for each new set of input shapes (a symbolic dimension takes the
run's) and, for a model whose shapes come from an input's values (a
Reshape's shape, Resize's scales, TopK's k fed as graph inputs), for each
new value of those inputs: the Session's ShapeCachedModel (docs/SESSION.md),
the pipeline and bounded cache of ``ampx run --input``."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from . import _ampx, _args, _tensors
from ._plan import Plan
from ._session import Session, _model_bytes, _plan_args

# ONNX Runtime's type names -> ampx's dtypes.
_DTYPES = {onnx_type: dtype for dtype, onnx_type in _tensors.ONNX_TYPES.items()}



def _kind(type_name: str) -> tuple[str | None, str | None]:
    """(kind, ampx dtype) of ONNX Runtime's type name: kind "tensor", "seq",
    "optional" (of a tensor) or "optional(seq)"; None for what ampx does not
    take (a sequence of sequences, a string tensor)."""
    for prefix in ("optional(", "seq("):
        if type_name.startswith(prefix) and type_name.endswith(")"):
            inner, dtype = _kind(type_name[len(prefix):-1])
            if prefix == "seq(":
                return ("seq" if inner == "tensor" else None), dtype
            return {"tensor": "optional", "seq": "optional(seq)"}.get(inner or ""), dtype
    return "tensor", _DTYPES.get(type_name)


# ONNX Runtime's provider names and the ampx devices they stand for.
_PROVIDERS = {
    "CPUExecutionProvider": ["onednn:0", "cpu_ref:0"],
    "DnnlExecutionProvider": ["onednn:0"],
    "CUDAExecutionProvider": ["cuda:0"],
    "TensorrtExecutionProvider": ["cuda:0"],
}


@dataclass(frozen=True)
class NodeArg:
    """onnxruntime.NodeArg: an input or output as declared by the model."""

    name: str
    type: str  # "tensor(float)", ...
    shape: list[Any]  # ints, and str for symbolic dimensions (None: unnamed)


class InferenceSession:
    """onnxruntime.InferenceSession over ampx (see the module's doc).

    providers: ampx device ids ("onednn:0") or ONNX Runtime provider names
        (CPUExecutionProvider: onednn:0 where present, else cpu_ref:0);
        None: the Session's default ($AMPX_DEVICES, else cpu_ref:0).
    amp, dtype and the other keywords: as Session.plan."""

    def __init__(self, path_or_bytes: Any, sess_options: Any = None,
                 providers: Sequence[Any] | None = None, provider_options: Any = None, *,
                 amp: str = "O2", dtype: str = "auto", **plan_options: Any):
        self._open(path_or_bytes, Session(devices=self._devices(providers)),
                   dict(amp=amp, dtype=dtype, **plan_options))

    @classmethod
    def _on(cls, session: Session, path_or_bytes: Any, plan_options: dict[str, Any]) -> "InferenceSession":
        """One on an open Session (ampx.backend keeps one per device list)."""
        self = cls.__new__(cls)
        self._open(path_or_bytes, session, plan_options)
        return self

    def _open(self, path_or_bytes: Any, session: Session, plan_options: dict[str, Any]) -> None:
        self._tmp = None
        data = _model_bytes(path_or_bytes)
        if data is not None:
            import tempfile

            self._tmp = tempfile.TemporaryDirectory(prefix="ampx-model-")
            self._path = os.path.join(self._tmp.name, "model.onnx")
            with open(self._path, "wb") as f:
                f.write(data)
        else:
            self._path = _args.path("path_or_bytes", path_or_bytes)
        if not self._path.endswith(".onnx"):
            raise ValueError(f"'{self._path}': expected an ONNX model (a path ending in .onnx)")
        self._session = session
        if "input_shapes" in plan_options:
            raise TypeError("InferenceSession takes its input shapes from each run, not input_shapes")
        inputs, outputs = _ampx.model_signature(self._path)
        self._inputs = [NodeArg(n, t, list(d)) for n, t, d in inputs]
        self._outputs = [NodeArg(n, t, list(d)) for n, t, d in outputs]
        self._model = session._impl.shape_cached(self._path, **_plan_args(**plan_options))
        # Fixed shapes: planned and compiled now (or refused now), unless
        # the graph is built from an input's values, planned at the first run.
        # A sequence's length and an optional's presence come with each
        # run, so a model taking one is planned at its first run.
        typed = [(a.name, _DTYPES.get(a.type), a.shape) for a in self._inputs]
        fixed = [t for t in typed if t[1] is not None and all(isinstance(n, int) for n in t[2])]
        untaken = [a for a in self._inputs if None in _kind(a.type)]
        if untaken:
            # An input of a type ampx does not take: the import says why
            # (the op, opset or element type), else this.
            self._model.prepare(fixed)
            raise _ampx.ModelError(f"input '{untaken[0].name}': ampx does not take {untaken[0].type}")
        if len(fixed) == len(typed):
            self._model.prepare(fixed)

    def _devices(self, providers: Sequence[Any] | None) -> list[str] | None:
        if providers is None:
            return None
        available = set(_ampx.Session(trust_plugins=False).device_ids) if any(
            isinstance(p, str) and p in _PROVIDERS for p in providers) else set()
        ids: list[str] = []
        for p in providers:
            name = p[0] if isinstance(p, tuple) else p  # (name, options) as ORT takes it
            name = _args.text("providers entry", name)
            if name in _PROVIDERS:
                present = [d for d in _PROVIDERS[name] if d in available]
                if not present:
                    raise _ampx.DeviceError(
                        f"provider {name}: none of {', '.join(_PROVIDERS[name])} is available")
                ids.append(present[0])
            elif ":" in name:
                ids.append(name)
            else:
                raise ValueError(
                    f"provider '{name}': expected an ampx device id (onednn:0) or one of "
                    f"{', '.join(_PROVIDERS)}")
        return list(dict.fromkeys(ids))

    def get_inputs(self) -> list[NodeArg]:
        return list(self._inputs)

    def get_outputs(self) -> list[NodeArg]:
        return list(self._outputs)

    def get_providers(self) -> list[str]:
        """The devices planned on (before any plan: the session's list)."""
        plan = self.plan
        return plan.devices if plan is not None else self._session.device_ids

    @property
    def plan(self) -> Plan | None:
        """The plan of the last run, or the one made at construction (ampx.Plan);
        None while nothing is planned."""
        return Plan(self._model.plan()) if self._model.cached() else None

    def cache_stats(self) -> dict[str, Any]:
        """The plan cache: runs, plans (imports, plans and compiles: one per
        new shape or value), evictions (the least recently used plan dropped;
        4 are kept), last_plan_ms, total_plan_ms and cached (plans kept)."""
        return self._model.stats()

    def run(self, output_names: Iterable[str] | None, input_feed: Mapping[str, Any],
            run_options: Any = None) -> list[Any]:
        """The outputs named (None: all, in the model's order) for `input_feed`."""
        _args.feed("input_feed", input_feed, (a.name for a in self._inputs))
        names = [o.name for o in self._outputs] if output_names is None else list(output_names)
        for n in names:
            if n not in {o.name for o in self._outputs}:
                raise ValueError(f"'{n}' is not an output of the model")
        arrays: list[tuple[str, str, Any]] = []
        lengths: dict[str, int] = {}
        absent: list[str] = []
        for arg in self._inputs:
            kind, dtype = _kind(arg.type)  # the constructor refused what ampx does not take
            value = input_feed[arg.name]
            if kind in ("optional", "optional(seq)") and value is None:
                absent.append(arg.name)
            elif kind in ("seq", "optional(seq)"):
                if not isinstance(value, (list, tuple)):
                    raise TypeError(f"input '{arg.name}' is a sequence ({arg.type}): pass a list "
                                    f"of arrays, not {type(value).__name__}")
                lengths[arg.name] = len(value)
                for i, element in enumerate(value):
                    name = f"{arg.name}[{i}]"
                    arrays.append((name, dtype, _tensors.to_input(name, dtype, element)))
            else:
                arrays.append((arg.name, dtype, _tensors.to_input(arg.name, dtype, value)))
        raw = self._model.run(arrays, lengths, absent)
        # Named as imported: an output NAME, or a sequence's NAME[0], NAME[1], ...
        by_name = {name: _tensors.from_output(dtype, arr) for name, dtype, arr in raw}
        outputs = {arg.name: self._output(arg, by_name) for arg in self._outputs}
        return [outputs[n] for n in names]

    @staticmethod
    def _output(arg: NodeArg, by_name: dict[str, Any]) -> Any:
        """Output `arg` of a run: an array, a list of them (a sequence) or
        None (an optional holding none)."""
        if arg.name in by_name:
            return by_name[arg.name]
        kind, _ = _kind(arg.type)
        if kind == "tensor" and arg.type in _DTYPES:
            raise _ampx.Error(f"the run gave no output '{arg.name}'")
        elements = []
        while f"{arg.name}[{len(elements)}]" in by_name:
            elements.append(by_name[f"{arg.name}[{len(elements)}]"])
        # An optional sequence holding an empty one is not told from none.
        return None if kind in ("optional", "optional(seq)") and not elements else elements
