"""ampx.Trainer: `ampx train` from Python (docs/TRAINING.md), on NumPy data."""

from __future__ import annotations

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
    def loss_scale(self) -> str:
        """The loss-scale schedule (`--loss-scale`), as `ampx train` prints it."""
        return self._impl.loss_scale

    def fit(self, x: Any, y: Any, epochs: int = 1, batch: int | None = None,
            eval: tuple[Any, Any] | None = None, checkpoint: Any = None,
            callback: Callable[[dict[str, Any]], Any] | None = None) -> list[dict[str, Any]]:
        """Train `epochs` epochs (shuffled by the seed and the epoch, batches of
        the trainer's size). Returns the history, one dict per epoch: loss,
        eval_loss and eval_accuracy (with ``eval``), step_ms, samples_per_s,
        loss_scale, overflow_steps and skipped_steps. ``checkpoint=DIR`` writes
        a checkpoint after every epoch (`ampx train --checkpoint`);
        ``callback(record)`` is called after every epoch."""
        _args.count("epochs", epochs, minimum=1)
        if batch is not None and _args.count("batch", batch, minimum=1) != self._impl.batch:
            raise ValueError(f"batch {batch}: this trainer's step is compiled for "
                             f"{self._impl.batch} (Session.trainer(batch=...))")
        if callback is not None and not callable(callback):
            raise TypeError("callback must be callable")
        x, y = self._data(x, y)
        ev = None if eval is None else self._data(*eval)
        history = []
        for _ in range(epochs):
            record = dict(self._impl.train_epoch(x, y))
            if ev is not None:
                e = self._impl.evaluate(*ev)
                record["eval_loss"] = e["loss"]
                if "accuracy" in e:
                    record["eval_accuracy"] = e["accuracy"]
            if checkpoint is not None:
                record["checkpoint"] = self._impl.checkpoint(_args.path("checkpoint", checkpoint))
            history.append(record)
            if callback is not None:
                callback(record)
        return history

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
