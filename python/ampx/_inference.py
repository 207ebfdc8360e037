"""ampx.InferenceSession: ONNX Runtime's InferenceSession shape over ampx's
Session, so that trying ampx is one changed import:

    import ampx as ort                      # was: import onnxruntime as ort
    sess = ort.InferenceSession("model.onnx", providers=["onednn:0"])
    outputs = sess.run(None, {"input": x})

The model is planned (amp level, 16-bit type) and compiled once per set of
input shapes: at construction when every input's shape is fixed, else at
the first run of each new shape (a symbolic dimension takes the run's)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from . import _ampx, _args
from ._session import Session, _model_bytes

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
        self._plan_options = plan_options
        inputs, outputs = _ampx.model_signature(self._path)
        self._inputs = [NodeArg(n, t, list(d)) for n, t, d in inputs]
        self._outputs = [NodeArg(n, t, list(d)) for n, t, d in outputs]
        self._compiled: dict[tuple, Any] = {}
        if all(isinstance(d, int) for arg in self._inputs for d in arg.shape):
            self._compiled_for({})

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

    def _compiled_for(self, shapes: Mapping[str, tuple]) -> Any:
        key = tuple(sorted(shapes.items()))
        compiled = self._compiled.get(key)
        if compiled is None:
            plan = self._session.plan(self._path, input_shapes=dict(shapes), **self._plan_options)
            compiled = self._compiled[key] = self._session.compile(plan)
        return compiled

    def get_inputs(self) -> list[NodeArg]:
        return list(self._inputs)

    def get_outputs(self) -> list[NodeArg]:
        return list(self._outputs)

    def get_providers(self) -> list[str]:
        """The devices planned on (the session's list)."""
        compiled = next(iter(self._compiled.values()), None)
        return compiled.plan.devices if compiled else self._session.device_ids

    @property
    def plan(self):
        """The plan of the last shapes compiled (ampx.Plan), or None before a run."""
        compiled = next(reversed(self._compiled.values()), None)
        return compiled.plan if compiled else None

    def run(self, output_names: Iterable[str] | None, input_feed: Mapping[str, Any],
            run_options: Any = None) -> list[Any]:
        """The outputs named (None: all, in the model's order) for `input_feed`."""
        if not isinstance(input_feed, Mapping):
            raise TypeError(f"input_feed must be a dict of name -> array, not {type(input_feed).__name__}")
        import numpy as np

        shapes = {}
        for arg in self._inputs:
            if any(not isinstance(d, int) for d in arg.shape) and arg.name in input_feed:
                shapes[arg.name] = tuple(np.shape(input_feed[arg.name]))
        outputs = self._compiled_for(shapes).run(input_feed)
        names = [o.name for o in self._outputs] if output_names is None else list(output_names)
        for n in names:
            if n not in outputs:
                raise ValueError(f"'{n}' is not an output of the model")
        return [outputs[n] for n in names]
