"""Session.trainer: `ampx train` from Python, on the digits, as the CLI trains them."""

import json
import subprocess

import numpy as np
import pytest

import ampx

OPTIONS = dict(optimizer="sgd", lr=0.1, momentum=0.9, amp="O2", dtype="f16", batch=32)


def cli_epochs(cli, db, epochs):
    p = subprocess.run([cli, "train", "builtin:digits-cnn", "--data", "builtin:digits", "--epochs",
                        str(epochs), "--batch", "32", "--lr", "0.1", "--momentum", "0.9",
                        "--optimizer", "sgd", "--amp", "O2", "--dtype", "f16", "--device",
                        "cpu_ref:0", "--db", db, "--format", "json"],
                       check=True, capture_output=True, text=True)
    return [j for j in map(json.loads, p.stdout.splitlines()) if j.get("event") == "epoch"]


def test_fit_on_digits_as_the_cli(cli, tmp_path):
    epochs = 2
    expected = cli_epochs(cli, str(tmp_path / "cli.db"), epochs)
    (x, y), (xt, yt) = ampx.load_digits()
    assert x.shape == (1437, 1, 8, 8) and xt.shape == (360, 1, 8, 8)
    sess = ampx.Session(devices="cpu_ref:0", db=str(tmp_path / "py.db"))
    trainer = sess.trainer("builtin:digits-cnn", **OPTIONS)
    seen = []
    history = trainer.fit(x, y, epochs=epochs, eval=(xt, yt), callback=seen.append,
                          checkpoint=tmp_path / "ckpt")
    assert seen == history and len(history) == epochs
    for got, want in zip(history, expected):
        assert got["loss"] == want["train_loss"]
        assert got["eval_accuracy"] == want["eval_accuracy"]
        assert got["eval_loss"] == want["eval_loss"]
        assert got["loss_scale"] == want["loss_scale"]
        assert got["skipped_steps"] == want["skipped_steps"]
    assert history[-1]["eval_accuracy"] > 0.8
    assert list((tmp_path / "ckpt").iterdir())
    ev = trainer.evaluate(xt, yt)
    assert ev["accuracy"] == history[-1]["eval_accuracy"] and ev["samples"] == 360
    state = trainer.state_dict()
    assert state and all(isinstance(v, np.ndarray) for v in state.values())
    out = tmp_path / "digits.onnx"
    trainer.export(out)
    import onnxruntime as ort

    o = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    (logits,) = o.run(None, {o.get_inputs()[0].name: xt})
    accuracy = float((logits.argmax(1) == yt).mean())
    assert abs(accuracy - ev["accuracy"]) <= 2 / 360  # f16 inside ampx, f32 in ORT


def test_trainer_arguments():
    sess = ampx.Session(devices="cpu_ref:0")
    with pytest.raises(ampx.UsageError):
        sess.trainer("builtin:digits-cnn", optimizer="rmsprop")
    with pytest.raises(ValueError):
        sess.trainer("builtin:digits-cnn", lr=-1.0)
    trainer = sess.trainer("builtin:digits-cnn", batch=16)
    (x, y), _ = ampx.load_digits()
    with pytest.raises(ValueError, match="batch"):
        trainer.fit(x[:64], y[:64], batch=32)
    with pytest.raises(ValueError):
        trainer.fit(x[:64], y[:63])
    with pytest.raises(ampx.UsageError):
        trainer.fit(x[:64], np.full(64, 99))  # a label out of the classes
