"""ampx.Session: the one pipeline (plugins -> model -> devices -> plan ->
compile -> run), as the ``ampx`` CLI drives it."""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any, Iterable, Mapping

from . import _ampx, _args
from ._compiled import CompiledModel
from ._plan import Plan
from ._trainer import Trainer


def _model_bytes(model: Any) -> bytes | None:
    """An onnx.ModelProto's or a bytes model's serialised form; None for a path."""
    if isinstance(model, (bytes, bytearray, memoryview)):
        return bytes(model)
    if hasattr(model, "SerializeToString") and hasattr(model, "graph"):
        return model.SerializeToString()
    return None


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, not {type(value).__name__}")
    return float(value)


def _plan_args(amp: str = "O2", dtype: str = "auto", keep_fp32: Iterable[str] | None = None,
               force_16bit: Iterable[str] | None = None, *,
               place: Mapping[str, str] | None = None, white_list: str | None = None,
               black_list: str | None = None, cost: bool = True, tuned: bool = True,
               capability_blind: bool = False) -> dict[str, Any]:
    """Session.plan's planning options, checked, as the module's plan and
    shape_cached take them (one mapping onto the PlanRequest, in C++)."""
    return dict(
        amp=_args.text("amp", amp),
        dtype=_args.text("dtype", dtype),
        keep_fp32=_args.names("keep_fp32", keep_fp32),
        force_16bit=_args.names("force_16bit", force_16bit),
        place=_args.pins(place),
        white_list=_args.optional_text("white_list", white_list),
        black_list=_args.optional_text("black_list", black_list),
        cost=_args.flag("cost", cost),
        tuned=_args.flag("tuned", tuned),
        capability_blind=_args.flag("capability_blind", capability_blind),
    )


class Session:
    """Plugins loaded once, devices chosen, and the plans and compiled models
    made on them (ampx::Session, docs/SESSION.md).

    devices: "onednn:0,cpu_ref:0", a list of ids, "auto", or None
        ($AMPX_DEVICES, else cpu_ref:0), in preference order.
    db: the capability database (None: the default, docs/capability-db.md).
    threads: per CPU plugin (None: the plugin's default).
    fallback: nodes no listed device runs go to cpu_ref:0 (False: an error).
    max_memory: bytes every model this session compiles may need in all, the
        Trainer's steps included (``--max-memory``; None: the devices' own
        limits); ``compile(max_memory=)`` sets another for one model.

    One session is used by one thread at a time: calls from other threads
    wait (the GIL is released meanwhile). Sessions of their own run in
    parallel."""

    def __init__(self, devices: str | Iterable[str] | None = None, db: Any = None,
                 threads: int | None = None, fallback: bool = True, *,
                 plugin_dirs: Iterable[Any] | None = None,
                 exclude_plugins: Iterable[str] | None = None, trust_plugins: bool = False,
                 determinism: str = "thread-count-free", tuned: bool = True,
                 max_memory: int | None = None):
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
            max_memory=0 if max_memory is None else _args.count("max_memory", max_memory, minimum=1),
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
        args = _plan_args(amp, dtype, keep_fp32, force_16bit, place=place,
                          white_list=white_list, black_list=black_list, cost=cost, tuned=tuned,
                          capability_blind=capability_blind)
        args["input_shapes"] = _args.shapes(input_shapes)
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

    def tune(self, model: Any, amp: str = "O2", dtype: str = "auto",
             keep_fp32: Iterable[str] | None = None, force_16bit: Iterable[str] | None = None,
             input_shapes: Mapping[str, Iterable[int]] | None = None, *,
             place: Mapping[str, str] | None = None, store: bool = True, max_replans: int = 4,
             profile_runs: int = 10, verify_rounds: int = 5, verify_runs: int = 10,
             seed: int = 1, progress: Any = True) -> dict[str, Any]:
        """``ampx tune``: measure the plan node by node, re-plan from the
        measurements, verify against O0 and keep the plan that is not slower
        (docs/TUNING.md). With ``store`` the kept plan goes into the capability
        database, and later plans of the same model and options apply it.
        Returns ``ampx tune --format json`` (schema ampx.tune/1).

        progress: True, the CLI's bar on a terminal; False; or a callable
        (done, total, what) that must not call into this session."""
        plan = self.plan(model, amp, dtype, keep_fp32, force_16bit, input_shapes, place=place,
                         tuned=False)
        return json.loads(self._impl.tune(
            plan._impl, store=_args.flag("store", store),
            max_replans=_args.count("max_replans", max_replans, minimum=1),
            profile_runs=_args.count("profile_runs", profile_runs, minimum=1),
            verify_rounds=_args.count("verify_rounds", verify_rounds, minimum=1),
            verify_runs=_args.count("verify_runs", verify_runs, minimum=1),
            seed=_args.count("seed", seed), progress=progress))

    def report(self, models: Any, format: str = "text", *, devices: Iterable[str] | None = None,
               dtype: str = "auto", run: bool = True, iters: int = 3, warmup: int = 1,
               input_shapes: Mapping[str, Iterable[int]] | None = None,
               placements: Iterable[str] | None = None, cost: bool = True, tuned: bool = True,
               progress: Any = True) -> str:
        """``ampx report``: what O0-O3 really mean for each model on each
        device (coverage, predicted and, with ``run``, measured time and
        error), as text, "md", "json" (ampx.report/1) or one "html" file.

        models: a path or "builtin:NAME", or a list of them (paths only: the
        report reads each model itself). devices: ids (None: every device)."""
        return self._impl.report(
            [_args.path("models entry", m) for m in ([models] if isinstance(models, (str, os.PathLike)) else models)],
            format=_args.text("format", format), devices=_args.names("devices", devices),
            dtype=_args.text("dtype", dtype), run=_args.flag("run", run),
            iters=_args.count("iters", iters, minimum=1), warmup=_args.count("warmup", warmup),
            input_shapes=_args.shapes(input_shapes),
            placements=_args.names("placements", placements), cost=_args.flag("cost", cost),
            tuned=_args.flag("tuned", tuned), progress=progress)

    def probe(self, devices: str | Iterable[str] | None = None, quick: bool = False,
              ops: str | Iterable[str] | None = None, timeout: float | None = None,
              progress: Any = True) -> dict[str, Any]:
        """``ampx probe``: measure each device's kernels (16-bit and f32),
        Casts and copies and store the profiles in this session's capability
        database (docs/capability-db.md), which later plans' cost model reads.
        Returns ``ampx probe --format json`` (schema ampx.probe/1).

        devices: "a,b", a list of ids, or None (every device of the session's
            plugins).  quick: fewer, smaller shapes and repeats (``--quick``).
        ops: only these op types, "Relu,MatMul" or a list (``--ops``).
        timeout: the time budget per device in seconds (None: 300, 60 with
            quick); once spent, the remaining cases are answered but not timed.
        progress: True, the CLI's bar per device on a terminal; False; or a
            callable (done, total, what), done counting from 0 for each
            device, that must not call into this session.

        The probe runs in this process, not in a child per device as ``ampx
        probe`` does: a plugin that crashes takes Python down with it, and
        one that hangs hangs this call (the timeout is a budget, not a kill).
        Probe plugins you do not trust with ``ampx probe``. A device whose
        probe fails raises DeviceError after the others are probed and stored."""
        if isinstance(ops, str):
            ops = [o.strip() for o in ops.split(",") if o.strip()]
        if timeout is not None and _number("timeout", timeout) <= 0:
            raise ValueError(f"timeout must be positive (or None), got {timeout}")
        return json.loads(self._impl.probe(
            devices=_args.device_list(devices), quick=_args.flag("quick", quick),
            ops=_args.names("ops", ops), timeout=0.0 if timeout is None else float(timeout),
            progress=progress))

    def trainer(self, model: Any, optimizer: str = "sgd", lr: float = 0.01, momentum: float = 0.0,
                amp: str = "O2", dtype: str = "auto", loss_scale: str = "auto", *,
                batch: int = 32, loss: str = "cross-entropy", nesterov: bool = False,
                weight_decay: float = 0.0, seed: int = 0, freeze: Iterable[str] | None = None,
                clip_grad_norm: float = 0.0, eager: bool = False, capability_blind: bool = False,
                input_shapes: Mapping[str, Iterable[int]] | None = None,
                diagnose_overflow: bool = False, auto_fallback: bool = False,
                fallback_after: int = 2, fallback_window: int = 200,
                fallback_underflow: float = 0.0, keep_fp32: Iterable[str] | None = None,
                force_16bit: Iterable[str] | None = None, white_list: str | None = None,
                black_list: str | None = None, data_parallel: bool = False,
                bucket_mb: float = 25.0, allreduce_dtype: str = "f32",
                comm_timeout: float = 60.0, shard_optimizer: bool = False) -> Trainer:
        """``ampx train``'s Trainer (docs/TRAINING.md): the training step of
        MODEL planned at `amp` and compiled on this session's devices, with
        ``ampx train``'s options (optimizer sgd, adam or adamw; loss_scale
        "auto", "none", "fixed[:S]", "dynamic[:INIT[,FACTOR[,WINDOW]]]" or
        "torch"). keep_fp32, force_16bit, white_list and black_list are
        Session.plan's (``--keep-fp32``, ``--force-16bit``, ``--white-list``,
        ``--black-list``), for the forward; the backward follows it.

        The overflow diagnostics (docs/TRAINING.md, "Overflow diagnostics"):
        diagnose_overflow=True probes every layer each step, and each epoch's
        record names the layer that overflowed first (``overflows``);
        auto_fallback=True (implies it) moves a layer named first at more than
        ``fallback_after`` overflowed steps within the last
        ``fallback_window`` to f32, and with ``fallback_underflow`` > 0 one
        whose gradients averaged more than that share below the 16-bit
        normal range (``--diagnose-overflow``, ``--auto-fallback``,
        ``--fallback-after``, ``--fallback-window``, ``--fallback-underflow``).

        data_parallel=True (``ampx train --data-parallel``, docs/DISTRIBUTED.md):
        this process is one rank of an MPI job (``mpirun -np N python
        script.py``); every rank makes the same trainer and calls fit with the
        same data. ``batch`` is per rank, the global batch N times it; the
        gradients are summed over the ranks in buckets of ``bucket_mb`` MiB,
        as ``allreduce_dtype`` ("f32", "bf16", "f16" or "auto"); a collective
        that waits more than ``comm_timeout`` seconds stops the run. Each
        epoch's record gains ``data_parallel`` (the communication); rank 0
        writes the checkpoints. Every rank returns the same history: print
        from one (``trainer.rank == 0``). shard_optimizer=True
        (``--shard-optimizer``, ZeRO-1): each rank keeps and updates the
        optimizer state and f32 masters of the weights it owns; every rank
        writes its checkpoint shard, rank 0 the manifest; state_dict(),
        evaluate(), checkpoint() and export() are then collective (every
        rank calls them)."""
        if not isinstance(lr, (int, float)) or isinstance(lr, bool):
            raise TypeError("lr must be a number")
        data = _model_bytes(model)
        if data is not None:
            raise TypeError("trainer takes a path or builtin:NAME (save the model first)")
        path = _args.path("model", model)
        impl = self._impl.trainer(
            path, optimizer=_args.text("optimizer", optimizer), lr=float(lr),
            momentum=float(momentum), nesterov=_args.flag("nesterov", nesterov),
            weight_decay=float(weight_decay), loss=_args.text("loss", loss),
            amp=_args.text("amp", amp), dtype=_args.text("dtype", dtype),
            loss_scale=_args.text("loss_scale", loss_scale),
            batch=_args.count("batch", batch, minimum=1), seed=_args.count("seed", seed),
            freeze=_args.names("freeze", freeze), clip_grad_norm=float(clip_grad_norm),
            eager=_args.flag("eager", eager), capability_blind=_args.flag("capability_blind", capability_blind),
            input_shapes=_args.shapes(input_shapes),
            diagnose_overflow=_args.flag("diagnose_overflow", diagnose_overflow),
            auto_fallback=_args.flag("auto_fallback", auto_fallback),
            fallback_after=_args.count("fallback_after", fallback_after),
            fallback_window=_args.count("fallback_window", fallback_window, minimum=1),
            fallback_underflow=_number("fallback_underflow", fallback_underflow),
            keep_fp32=_args.names("keep_fp32", keep_fp32),
            force_16bit=_args.names("force_16bit", force_16bit),
            white_list=_args.optional_text("white_list", white_list),
            black_list=_args.optional_text("black_list", black_list),
            data_parallel=_args.flag("data_parallel", data_parallel),
            bucket_mb=_number("bucket_mb", bucket_mb),
            allreduce_dtype=_args.text("allreduce_dtype", allreduce_dtype),
            comm_timeout=_number("comm_timeout", comm_timeout),
            shard_optimizer=_args.flag("shard_optimizer", shard_optimizer))
        return Trainer(impl, path)

    def __repr__(self) -> str:
        return f"<ampx.Session devices: {', '.join(self.device_ids)}>"
