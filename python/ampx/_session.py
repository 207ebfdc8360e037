"""ampx.Session: the one pipeline (plugins -> model -> devices -> plan ->
compile -> run), as the ``ampx`` CLI drives it."""

from __future__ import annotations

import os
import tempfile
from typing import Any, Iterable, Mapping

from . import _ampx, _args
from ._compiled import CompiledModel
from ._plan import Plan


def _model_bytes(model: Any) -> bytes | None:
    """An onnx.ModelProto's or a bytes model's serialised form; None for a path."""
    if isinstance(model, (bytes, bytearray, memoryview)):
        return bytes(model)
    if hasattr(model, "SerializeToString") and hasattr(model, "graph"):
        return model.SerializeToString()
    return None


class Session:
    """Plugins loaded once, devices chosen, and the plans and compiled models
    made on them (ampx::Session, docs/SESSION.md).

    devices: "onednn:0,cpu_ref:0", a list of ids, "auto", or None
        ($AMPX_DEVICES, else cpu_ref:0), in preference order.
    db: the capability database (None: the default, docs/capability-db.md).
    threads: per CPU plugin (None: the plugin's default).
    fallback: nodes no listed device runs go to cpu_ref:0 (False: an error).

    One session is used by one thread at a time: calls from other threads
    wait (the GIL is released meanwhile). Sessions of their own run in
    parallel."""

    def __init__(self, devices: str | Iterable[str] | None = None, db: Any = None,
                 threads: int | None = None, fallback: bool = True, *,
                 plugin_dirs: Iterable[Any] | None = None,
                 exclude_plugins: Iterable[str] | None = None, trust_plugins: bool = False,
                 determinism: str = "thread-count-free", tuned: bool = True):
        self._impl = _ampx.Session(
            devices=_args.device_list(devices),
            db=None if db is None else _args.path("db", db),
            threads=0 if threads is None else _args.count("threads", threads, minimum=1),
            fallback=_args.flag("fallback", fallback),
            plugin_dirs=[_args.path("plugin_dirs entry", d) for d in (plugin_dirs or [])],
            exclude_plugins=_args.names("exclude_plugins", exclude_plugins),
            trust_plugins=_args.flag("trust_plugins", trust_plugins),
            determinism=_args.text("determinism", determinism),
            use_tuned=_args.flag("tuned", tuned),
        )

    @property
    def device_ids(self) -> list[str]:
        """Every device of the session's plugins."""
        return list(self._impl.device_ids)

    def plan(self, model: Any, amp: str = "O2", dtype: str = "auto",
             keep_fp32: Iterable[str] | None = None, force_16bit: Iterable[str] | None = None,
             input_shapes: Mapping[str, Iterable[int]] | None = None, *,
             place: Mapping[str, str] | None = None, white_list: str | None = None,
             black_list: str | None = None, cost: bool = True, tuned: bool = True,
             capability_blind: bool = False) -> Plan:
        """Precision and placement of every node (``ampx plan``).

        model: a path to an .onnx file, "builtin:NAME", an onnx.ModelProto or
            the model's bytes.
        amp: O0, O1, O2, O3 or auto.  dtype: f16, bf16 or auto (what the
            devices run natively).
        keep_fp32 / force_16bit: node names or prefixes ending in '*'.
        input_shapes: {input: shape} for ONNX inputs with symbolic dimensions.
        place: {node pattern: device id} pins (``--place``)."""
        args = dict(
            amp=_args.text("amp", amp),
            dtype=_args.text("dtype", dtype),
            keep_fp32=_args.names("keep_fp32", keep_fp32),
            force_16bit=_args.names("force_16bit", force_16bit),
            input_shapes=_args.shapes(input_shapes),
            place=_args.pins(place),
            white_list=_args.optional_text("white_list", white_list),
            black_list=_args.optional_text("black_list", black_list),
            cost=_args.flag("cost", cost),
            tuned=_args.flag("tuned", tuned),
            capability_blind=_args.flag("capability_blind", capability_blind),
        )
        data = _model_bytes(model)
        if data is None:
            return Plan(self._impl.plan(_args.path("model", model), **args))
        # The importer reads files: the bytes go through a private directory.
        with tempfile.TemporaryDirectory(prefix="ampx-model-") as tmp:
            path = os.path.join(tmp, "model.onnx")
            with open(path, "wb") as f:
                f.write(data)
            return Plan(self._impl.plan(path, **args))

    def compile(self, plan: Plan, *, eager: bool = False, fuse: bool = True,
                max_memory: int | None = None) -> CompiledModel:
        """Fusion per device, kernels and weights (``ampx run``'s compile).

        eager: run node by node at every run (``--eager``); fuse=False: one
        kernel per node (``--no-fuse``); max_memory: refuse a plan needing
        more bytes than this in all (``--max-memory``)."""
        if not isinstance(plan, Plan):
            raise TypeError(f"compile takes a Plan from Session.plan, not {type(plan).__name__}")
        impl = self._impl.compile(
            plan._impl, eager=_args.flag("eager", eager), fuse=_args.flag("fuse", fuse),
            check=False,
            max_memory=0 if max_memory is None else _args.count("max_memory", max_memory, minimum=1))
        return CompiledModel(impl, plan)

    def __repr__(self) -> str:
        return f"<ampx.Session devices: {', '.join(self.device_ids)}>"
