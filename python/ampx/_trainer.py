"""ampx.Trainer: `ampx train` from Python (docs/TRAINING.md), on NumPy data."""

from __future__ import annotations

import json
import os
from typing import Any, Callable

import numpy as np

from . import _ampx, _args, _tensors


class Trainer:
    """What Session.trainer returns: the model's training step planned and
    compiled on the session's devices (f32 master weights, the optimizer,
    loss scaling), trained epoch by epoch on NumPy arrays."""

    def __init__(self, impl: _ampx.Trainer, model: str):
        self._impl = impl
        self._model = model

    def _data(self, x: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
        x = np.ascontiguousarray(x, dtype=np.float32)
        if self._impl.mse:
            y = np.ascontiguousarray(y, dtype=np.float32)
        else:
            y = np.asarray(y)
            if y.dtype.kind not in "iu":
                raise TypeError(f"labels must be integers for cross-entropy, not {y.dtype}")
            y = np.ascontiguousarray(y, dtype=np.int64)
        if x.ndim < 1 or y.ndim < 1 or len(x) != len(y):
            raise ValueError(f"x and y must hold the same number of samples (got {x.shape} and {y.shape})")
        return x, y

    @property
    def epoch(self) -> int:
        return self._impl.epoch

    @property
    def step(self) -> int:
        """Steps trained so far, over the whole run (a resumed one included)."""
        return self._impl.step

    @property
    def rank(self) -> int:
        """This process's rank in a data-parallel run (0 otherwise)."""
        return self._impl.rank

    @property
    def ranks(self) -> int:
        """The ranks of a data-parallel run (1 otherwise)."""
        return self._impl.ranks

    @property
    def loss_scale(self) -> str:
        """The loss-scale schedule (`--loss-scale`), as `ampx train` prints it."""
        return self._impl.loss_scale

    def fit(self, x: Any, y: Any, epochs: int = 1, batch: int | None = None,
            eval: tuple[Any, Any] | None = None, checkpoint: Any = None,
            callback: Callable[[dict[str, Any]], Any] | None = None, *, progress: Any = True,
            resume: bool = False, keep: int = 3, reset_loss_scale: bool = False,
            profile_step: int | None = None, trace: Any = None, report: Any = None,
            report_label: str | None = None) -> list[dict[str, Any]]:
        """Train `epochs` more epochs (shuffled by the seed and the epoch,
        batches of the trainer's size). Returns the history, one dict per
        epoch: epoch, steps, loss, eval_loss and eval_accuracy (with ``eval``),
        step_ms, samples_per_s, loss_scale, overflow_steps and skipped_steps;
        with the overflow diagnostics (Session.trainer(diagnose_overflow=...)),
        also `ampx train --format json`'s overflows, fallbacks and replan_ms.

        checkpoint=DIR: a checkpoint after every epoch, the last ``keep`` kept
        (``ampx train --checkpoint --keep``); DIR is made before the first
        epoch. resume=True (``--resume``): first continue from the newest
        checkpoint in DIR, if any, and then ``epochs`` counts the epochs in
        all, as ``ampx train --epochs`` does (a run restarted with the same
        call trains only the epochs it lacks). reset_loss_scale=True: the
        resumed run starts its loss-scale schedule afresh
        (``--reset-loss-scale``).

        callback(record) is called after every epoch. progress: True, the
        CLI's bar per step on a terminal (nothing elsewhere); False or None;
        or a callable (done, total, what) called after every step of an
        epoch (what: "loss 0.1234", the running loss), which must not call
        into this trainer or its session; an exception it raises ends the
        epoch there (the steps done stay done) and comes out of fit.

        profile_step=N (``--profile-step``): step N of the run, counted from
        1 over the whole run (trainer.step), runs through the profiled
        executor; trainer.profile() has it afterwards. trace=FILE
        (``--trace``): that step as a Chrome trace (without profile_step,
        step 3, or the next step if it is later, at most the run's last).

        report=FILE.html (``--report``): the training curves (loss per step,
        loss scale, skipped steps, accuracy per epoch), rewritten after every
        epoch; a run under another label is added beside those already in the
        file, one under the same label replaced. report_label (``--report-label``):
        the run's name (default: amp level, dtype and loss scale)."""
        _args.count("epochs", epochs, minimum=1)
        if batch is not None and _args.count("batch", batch, minimum=1) != self._impl.batch:
            raise ValueError(f"batch {batch}: this trainer's step is compiled for "
                             f"{self._impl.batch} (Session.trainer(batch=...))")
        if callback is not None and not callable(callback):
            raise TypeError("callback must be callable")
        if progress is not None and not isinstance(progress, bool) and not callable(progress):
            raise TypeError("progress must be True, False, None or a callable (done, total, what)")
        _args.flag("resume", resume)
        _args.flag("reset_loss_scale", reset_loss_scale)
        _args.count("keep", keep, minimum=1)
        if resume and checkpoint is None:
            raise ValueError("resume=True needs checkpoint=DIR (ampx train --resume --checkpoint)")
        if reset_loss_scale and not resume:
            raise ValueError("reset_loss_scale=True applies to a resumed run (resume=True)")
        ckpt = None if checkpoint is None else _args.path("checkpoint", checkpoint)
        if profile_step is not None and _args.count("profile_step", profile_step) < 1:
            raise ValueError(f"profile_step {profile_step}: steps count from 1")
        trace = None if trace is None else _args.path("trace", trace)
        report = None if report is None else _args.path("report", report)
        report_label = _args.optional_text("report_label", report_label)
        if report_label is not None and report is None:
            raise ValueError("report_label names the run in report=FILE: give report too")
        if trace is not None:
            _ampx.Trainer.check_trace_path(trace)
        x, y = self._data(x, y)
        ev = None if eval is None else self._data(*eval)
        # The epoch the run ends at: with resume, `epochs` in all (--epochs).
        last = epochs if resume else self.epoch + epochs
        run_steps = last * -(-len(x) // self._impl.batch)
        if profile_step is not None and profile_step > run_steps:
            raise ValueError(f"profile_step {profile_step}: the run has {run_steps} steps")
        # Made once the data are known good, yet before the first epoch's work.
        if ckpt is not None:
            self._impl.make_checkpoint_dir(ckpt)
        if resume:
            self._impl.resume_latest(ckpt, reset_loss_scale)
        if profile_step is not None or trace is not None:
            self._profile_at(profile_step, run_steps)
        if report is not None:
            self._impl.start_report(report, report_label or "")
        history = []
        try:
            while self.epoch < last:
                label = f"epoch {self.epoch + 1}/{last}"
                record = dict(self._impl.train_epoch(x, y, progress, label, *(ev or (None, None))))
                overflows = record.pop("overflows_json", None)
                if overflows is not None:
                    record.update(json.loads(overflows))
                data_parallel = record.pop("data_parallel_json", None)
                if data_parallel is not None:
                    record["data_parallel"] = json.loads(data_parallel)
                if ckpt is not None:
                    record["checkpoint"] = self._impl.checkpoint(ckpt, keep)
                history.append(record)
                if callback is not None:
                    callback(record)
        finally:
            self._impl.end_report()
        if trace is not None:
            self._impl.write_trace(trace)
        return history

    def _profile_at(self, step: int | None, run_steps: int) -> None:
        """``ampx train --profile-step``'s default (3, or the run's next step
        after a resume, within the run) and its check against the steps run."""
        if step is None:
            step = min(run_steps, max(3, self.step + 1))
        if step <= self.step:
            raise ValueError(f"profile_step {step}: this trainer has run {self.step} steps "
                             f"already (the next is {self.step + 1})")
        self._impl.profile_at_step(step)

    def profile(self) -> dict[str, Any] | None:
        """The step that fit(profile_step=...) profiled, as ``ampx train
        --format json``'s ``profile`` event: step, epoch, rows (samples),
        devices and per_node (every node's time, the kernel it ran on, the
        reorders it caused, as ``ampx run --per-node`` shows them); None
        before it ran."""
        p = self._impl.profiled_step()
        return None if p is None else json.loads(p)

    def restore(self, path: Any, *, reset_loss_scale: bool = False) -> str:
        """Continue from a checkpoint (``ampx train --resume``): a checkpoint
        file, or a directory (its newest). The weights, optimizer state, epoch
        and step counters, loss-scale state and fallback layers are taken up,
        so that further epochs train as the uninterrupted run would (bit for
        bit on cpu_ref). A truncated or corrupt file, or one of another
        model, options, seed or loss-scale schedule, raises ampx.Error with
        the CLI's one line and changes nothing. reset_loss_scale=True starts
        the loss-scale schedule afresh (``--reset-loss-scale``). Returns the
        file taken up."""
        path = _args.path("path", path)
        _args.flag("reset_loss_scale", reset_loss_scale)
        if os.path.isdir(path):
            restored = self._impl.resume_latest(path, reset_loss_scale)
            if restored is None:
                raise _ampx.Error(f"{path}: no checkpoint in it (epoch-NNNN.ampxckpt)")
            return restored
        self._impl.restore_file(path, reset_loss_scale)
        return path

    def overflow_diagnostics(self) -> dict[str, Any] | None:
        """The per-layer overflow and underflow summary and the layers moved
        to f32 so far (`ampx train --format json`'s ``done`` record's
        ``diagnostics``); None unless Session.trainer(diagnose_overflow=True
        or auto_fallback=True) asked for them, or the trainer turned them on
        itself (overflows in a row at the lowest scale)."""
        d = self._impl.overflow_diagnostics()
        return None if d is None else json.loads(d)

    def evaluate(self, x: Any, y: Any) -> dict[str, Any]:
        """Loss (and accuracy, for cross-entropy) of the current weights."""
        return dict(self._impl.evaluate(*self._data(x, y)))

    def state_dict(self) -> dict[str, np.ndarray]:
        """Every state tensor: weights, running statistics, optimizer moments."""
        return {name: _tensors.from_output(dtype, arr) for name, dtype, arr in self._impl.state_dict()}

    def export(self, path: Any) -> None:
        """The trained model as ONNX, its batch dimension symbolic (`ampx train --export`)."""
        self._impl.export(_args.path("path", path))

    def plan_json(self) -> str:
        """The training step's plan (forward, backward, updates), ampx.plan/1."""
        return self._impl.plan_json()

    def __repr__(self) -> str:
        return f"<ampx.Trainer {self._model}: epoch {self.epoch}, loss scale {self.loss_scale}>"


def load_digits() -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """builtin:digits split as `ampx train` splits it: ((x_train, y_train), (x_test, y_test))."""
    return _ampx.load_digits()
