"""ampx.backend: ONNX's backend API (``onnx.backend.base.Backend``) over
ampx's Session, as ``onnxruntime.backend`` is over ONNX Runtime's:

    import ampx.backend as backend
    rep = backend.prepare(model, "onednn:0")        # plan and compile once
    outputs = rep.run([x])                          # a tuple, in the model's order
    outputs = backend.run_model(model, [x], "CPU", amp="O2", dtype="bf16")
    outputs = backend.run_node(onnx.helper.make_node("Relu", ["x"], ["y"]), [x])

The device is ONNX's ("CPU": onednn:0 where present, else cpu_ref:0;
"CUDA" or "CUDA:N": cuda:N) or a list of ampx device ids
("onednn:0,cpu_ref:0"). Plan options come as keyword arguments or after the
device, separated by ';' ("onednn:0;amp=O2;dtype=bf16"); keywords win.

    amp       O0 (the default: the backend API validates models, so it
              computes what ONNX defines, in the model's types), O1, O2,
              O3 or auto
    dtype     f16, bf16 or auto
    fallback  False (the default, as onnxruntime.backend disables its own):
              a node the device has no kernel for is an error
              (ampx.DeviceError); True: it runs on cpu_ref:0
    keep_fp32, force_16bit, place, white_list, black_list, cost, tuned,
    capability_blind:
              as Session.plan

Sessions (plugins loaded, devices opened) are kept per devices and
fallback, so preparing many models pays for that once."""

from __future__ import annotations

import functools
import inspect
import threading
from typing import Any, Mapping, Sequence

import numpy as np
import onnx
from onnx.backend.base import Backend, BackendRep, namedtupledict

from . import _ampx, _args
from ._inference import _PROVIDERS, InferenceSession
from ._session import Session, _plan_args

# The plan options a device string may carry, with their parsers.
_STRING_OPTIONS = {
    "amp": str,
    "dtype": str,
    "fallback": lambda v: _truth("fallback", v),
    "cost": lambda v: _truth("cost", v),
    "tuned": lambda v: _truth("tuned", v),
}
# Session.plan's options, as InferenceSession takes them.
_PLAN_KEYWORDS = set(inspect.signature(_plan_args).parameters)
_ONNX_KEYWORDS = {"rtol", "atol", "opset_version"}  # what ONNX's test runner passes along


def _truth(name: str, value: str) -> bool:
    if value.lower() in ("1", "true", "yes", "on"):
        return True
    if value.lower() in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"device option {name}={value!r}: expected true or false")


_sessions: dict[tuple[str, bool], Session] = {}
_sessions_lock = threading.Lock()


def _session(devices: str, fallback: bool) -> Session:
    with _sessions_lock:
        key = (devices, fallback)
        if key not in _sessions:
            _sessions[key] = Session(devices=devices, fallback=fallback)
        return _sessions[key]


@functools.cache
def _available() -> frozenset[str]:
    """Every device the plugins offer (looked up once: it loads them)."""
    return frozenset(_ampx.Session(trust_plugins=False).device_ids)


def _devices_of(device: str) -> str:
    """ONNX's device name or ampx ids -> ampx ids ("onednn:0,cpu_ref:0")."""
    kind, _, index = device.partition(":")
    if kind == "CPU":
        if index not in ("", "0"):
            raise ValueError(f"device '{device}': ampx has one CPU device per plugin (CPU or CPU:0)")
        # As ONNX Runtime's CPUExecutionProvider maps for InferenceSession.
        return next(d for d in _PROVIDERS["CPUExecutionProvider"] if d in _available())
    if kind == "CUDA":
        if index and not index.isdigit():
            raise ValueError(f"device '{device}': expected CUDA or CUDA:N")
        return f"cuda:{index or 0}"
    ids = [d.strip() for d in device.split(",")]
    for d in ids:
        name, _, number = d.partition(":")
        if not name or not number.isdigit():
            raise ValueError(
                f"device '{device}': expected CPU, CUDA[:N] or ampx device ids such as "
                f"onednn:0,cpu_ref:0")
    return ",".join(ids)


def _parse(device: str | None, kwargs: Mapping[str, Any]) -> tuple[str, bool, dict[str, Any]]:
    """(ampx devices, fallback, plan options) from the device string and keywords."""
    device = "CPU" if device is None else _args.text("device", device)
    head, *options = [part.strip() for part in device.split(";")]
    settings: dict[str, Any] = {"amp": "O0", "fallback": False}
    for option in options:
        key, sep, value = option.partition("=")
        if not sep or key not in _STRING_OPTIONS:
            raise ValueError(
                f"device '{device}': option '{option}' is not one of "
                f"{', '.join(k + '=...' for k in _STRING_OPTIONS)}")
        settings[key] = _STRING_OPTIONS[key](value)
    for key, value in kwargs.items():
        if key in _PLAN_KEYWORDS or key == "fallback":
            settings[key] = value
        elif key not in _ONNX_KEYWORDS:
            raise TypeError(f"ampx.backend: unknown keyword argument '{key}'")
    fallback = _args.flag("fallback", settings.pop("fallback"))
    return _devices_of(head), fallback, settings


class AmpxBackendRep(BackendRep):
    """A model prepared on its devices (``Backend.prepare``): an
    ampx.InferenceSession underneath, so a model with symbolic input
    dimensions is planned and compiled per set of input shapes, at the first
    run of each. ``run`` takes the inputs as a list in the model's input
    order, a dict by name, or one array for a one-input model, and returns
    the outputs as a tuple in the model's output order (also by name)."""

    def __init__(self, session: InferenceSession):
        self._session = session
        self._inputs = [a.name for a in session.get_inputs()]
        self._outputs = [a.name for a in session.get_outputs()]

    @property
    def plan(self):
        """The effective plan of the last shapes compiled (ampx.Plan)."""
        return self._session.plan

    def run(self, inputs: Any, **kwargs: Any) -> tuple[Any, ...]:
        if isinstance(inputs, Mapping):
            feed = dict(inputs)
        elif isinstance(inputs, (list, tuple)):
            if len(inputs) != len(self._inputs):
                raise ValueError(f"the model has {len(self._inputs)} input(s), {len(inputs)} given")
            feed = dict(zip(self._inputs, inputs))
        else:
            if len(self._inputs) != 1:
                raise ValueError(f"the model has {len(self._inputs)} inputs: pass a list or a dict")
            feed = {self._inputs[0]: inputs}
        outputs = self._session.run(None, feed)
        return namedtupledict("Outputs", self._outputs)(*outputs)


class AmpxBackend(Backend):
    """onnx.backend.base.Backend over ampx (see the module's doc)."""

    @classmethod
    def supports_device(cls, device: str) -> bool:
        """Whether every device the string names is present ("CPU": always)."""
        try:
            ids = _devices_of(device.split(";")[0])
        except ValueError:
            return False
        return all(d in _available() for d in ids.split(","))

    @classmethod
    def is_compatible(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> bool:
        return cls.supports_device(device)

    @classmethod
    def prepare(cls, model: Any, device: str = "CPU", **kwargs: Any) -> AmpxBackendRep:
        """Plan MODEL (an onnx.ModelProto, its bytes or a path) at the amp
        level asked on the devices asked, and compile it."""
        devices, fallback, options = _parse(device, kwargs)
        return AmpxBackendRep(InferenceSession._on(_session(devices, fallback), model, options))

    @classmethod
    def run_model(cls, model: Any, inputs: Any, device: str = "CPU", **kwargs: Any) -> tuple[Any, ...]:
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node: onnx.NodeProto, inputs: Any, device: str = "CPU",
                 outputs_info: Sequence[tuple[Any, tuple[int, ...]]] | None = None,
                 **kwargs: Any) -> tuple[Any, ...]:
        """Run one node on `inputs` (a list, in the node's input order, or a
        dict by name): the node becomes a one-node model of opset
        ``opset_version`` (default: the newest ampx imports)."""
        if not isinstance(node, onnx.NodeProto):
            raise TypeError(f"run_node takes an onnx.NodeProto, not {type(node).__name__}")
        opset = kwargs.get("opset_version", _ampx.onnx_opsets()[1])
        names = [n for n in node.input if n]
        if isinstance(inputs, Mapping):
            feed = dict(inputs)
        else:
            values = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
            if len(values) != len(names):
                raise ValueError(f"node '{node.name or node.op_type}' has {len(names)} input(s), "
                                 f"{len(values)} given")
            feed = dict(zip(names, values))
        graph_inputs = []
        for name in names:
            arr = np.asarray(feed[name])
            elem = onnx.helper.np_dtype_to_tensor_dtype(arr.dtype)
            graph_inputs.append(onnx.helper.make_tensor_value_info(name, elem, arr.shape))
        if outputs_info is not None:
            graph_outputs = [onnx.helper.make_tensor_value_info(
                name, onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), shape)
                for name, (dtype, shape) in zip(node.output, outputs_info)]
        else:
            graph_outputs = [onnx.helper.make_empty_tensor_value_info(n) for n in node.output if n]
        graph = onnx.helper.make_graph([node], "run_node", graph_inputs, graph_outputs)
        model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", opset)])
        if outputs_info is None:
            model = onnx.shape_inference.infer_shapes(model)
        return cls.prepare(model, device, **{k: v for k, v in kwargs.items()
                                             if k != "opset_version"}).run(feed)


# ONNX's module-level functions, as onnxruntime.backend exposes them.
is_compatible = AmpxBackend.is_compatible
prepare = AmpxBackend.prepare
run_model = AmpxBackend.run_model
run_node = AmpxBackend.run_node
supports_device = AmpxBackend.supports_device
