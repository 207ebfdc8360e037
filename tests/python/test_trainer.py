"""Session.trainer: `ampx train` from Python, on the digits, as the CLI trains them."""

import json
import subprocess

import numpy as np
import pytest

import ampx
from conftest import TickCounter

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


# --- progress, resume, overflow diagnostics (ampx train's, from Python) ---

import os
import pty
import re
import sys
import threading
import time

# A loss scale that moves within an epoch (x2 after every 20 clean steps;
# digits has 45 steps of 32): a resume must carry where it stands.
MOVING_SCALE = dict(OPTIONS, loss_scale="dynamic:65536,2,20")
SAME_FIELDS = ("epoch", "steps", "loss", "loss_scale", "overflow_steps", "skipped_steps",
               "eval_loss", "eval_accuracy")


def same_state(a, b):
    assert a.keys() == b.keys()
    for k in a:
        assert a[k].dtype == b[k].dtype and a[k].tobytes() == b[k].tobytes(), k


def test_resume_continues_as_the_uninterrupted_run(tmp_path):
    (x, y), (xt, yt) = ampx.load_digits()
    sess = ampx.Session(devices="cpu_ref:0")
    whole = sess.trainer("builtin:digits-cnn", **MOVING_SCALE)
    expected = whole.fit(x, y, epochs=2, eval=(xt, yt), progress=False)
    assert expected[0]["loss_scale"] != expected[1]["loss_scale"]  # the scale does move

    ckpt = tmp_path / "ckpt"
    first = sess.trainer("builtin:digits-cnn", **MOVING_SCALE)
    first.fit(x, y, epochs=1, eval=(xt, yt), checkpoint=ckpt, progress=False)
    # fit(resume=True): epochs in all, as `ampx train --epochs 2 --resume`.
    resumed = sess.trainer("builtin:digits-cnn", **MOVING_SCALE)
    history = resumed.fit(x, y, epochs=2, eval=(xt, yt), checkpoint=ckpt, resume=True,
                          progress=False)
    assert len(history) == 1
    for k in SAME_FIELDS:
        assert history[0][k] == expected[1][k], k
    assert (resumed.epoch, resumed.step) == (whole.epoch, whole.step) == (2, 90)
    same_state(resumed.state_dict(), whole.state_dict())
    # Run again, the same call has nothing left to do.
    assert resumed.fit(x, y, epochs=2, checkpoint=ckpt, resume=True, progress=False) == []

    # Trainer.restore(DIR or FILE), then one more epoch.
    other = sess.trainer("builtin:digits-cnn", **MOVING_SCALE)
    assert other.restore(ckpt) == str(ckpt / "epoch-0002.ampxckpt")
    assert (other.epoch, other.step) == (2, 90)
    other.restore(ckpt / "epoch-0001.ampxckpt")
    assert (other.epoch, other.step) == (1, 45)
    (record,) = other.fit(x, y, epochs=1, eval=(xt, yt), progress=False)
    for k in SAME_FIELDS:
        assert record[k] == expected[1][k], k
    same_state(other.state_dict(), whole.state_dict())


def test_resume_with_no_checkpoint_yet_starts_afresh(tmp_path):
    (x, y), _ = ampx.load_digits()
    sess = ampx.Session(devices="cpu_ref:0")
    trainer = sess.trainer("builtin:digits-cnn", **OPTIONS)
    with pytest.raises(ValueError, match="checkpoint"):
        trainer.fit(x[:64], y[:64], resume=True)
    with pytest.raises(ampx.Error, match="no checkpoint"):
        trainer.restore(tmp_path)
    history = trainer.fit(x[:64], y[:64], epochs=1, checkpoint=tmp_path / "new", resume=True,
                          progress=False)
    assert [r["epoch"] for r in history] == [1]
    assert (tmp_path / "new" / "epoch-0001.ampxckpt").is_file()


def mlp_model(path):
    """Another model for the digits: Flatten, Gemm (a checkpoint of it does
    not fit digits-cnn)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.normal(0, 0.1, (64, 10)).astype(np.float32), "w")
    b = numpy_helper.from_array(np.zeros(10, np.float32), "b")
    g = helper.make_graph(
        [helper.make_node("Flatten", ["x"], ["f"], axis=1),
         helper.make_node("Gemm", ["f", "w", "b"], ["logits"])],
        "digits-mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 1, 8, 8])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])], [w, b])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)


def cli_resume_error(cli, ckpt, db):
    """`ampx train --resume`'s one line for the checkpoint in `ckpt`."""
    p = subprocess.run([cli, "train", "builtin:digits-cnn", "--data", "builtin:digits", "--epochs",
                        "2", "--batch", "32", "--lr", "0.1", "--momentum", "0.9", "--amp", "O2",
                        "--dtype", "f16", "--device", "cpu_ref:0", "--db", db, "--checkpoint",
                        str(ckpt), "--resume"], capture_output=True, text=True)
    assert p.returncode != 0 and p.stderr.startswith("ampx: error: "), p.stderr
    assert p.stderr.count("\n") == 1, p.stderr
    return p.stderr[len("ampx: error: "):].rstrip("\n")


def test_bad_checkpoint_raises_the_cli_line_and_changes_nothing(cli, tmp_path):
    (x, y), (xt, yt) = ampx.load_digits()
    sess = ampx.Session(devices="cpu_ref:0")
    good = tmp_path / "good"
    sess.trainer("builtin:digits-cnn", **OPTIONS).fit(x[:64], y[:64], checkpoint=good,
                                                       progress=False)
    truncated = tmp_path / "truncated"
    truncated.mkdir()
    data = (good / "epoch-0001.ampxckpt").read_bytes()
    (truncated / "epoch-0001.ampxckpt").write_bytes(data[: len(data) // 2])
    mlp = tmp_path / "mlp.onnx"
    mlp_model(str(mlp))
    wrong = tmp_path / "wrong"
    sess.trainer(str(mlp), **OPTIONS).fit(x[:64], y[:64], checkpoint=wrong, progress=False)

    trainer = sess.trainer("builtin:digits-cnn", **OPTIONS)
    trainer.fit(x, y, epochs=1, progress=False)
    before = trainer.state_dict()
    db = str(tmp_path / "cli.db")
    for ckpt in (truncated, wrong):
        file = str(ckpt / "epoch-0001.ampxckpt")
        message = cli_resume_error(cli, ckpt, db)
        assert message.startswith(file + ": ")
        with pytest.raises(ampx.Error) as e:
            trainer.restore(ckpt)
        assert str(e.value) == message
        with pytest.raises(ampx.Error) as e:
            trainer.fit(x, y, epochs=3, checkpoint=ckpt, resume=True, progress=False)
        assert str(e.value) == message
        assert (trainer.epoch, trainer.step) == (1, 45)
        same_state(trainer.state_dict(), before)
        assert os.listdir(ckpt) == ["epoch-0001.ampxckpt"]  # nothing written after it
    assert "another model" in cli_resume_error(cli, wrong, db)
    # ... and it trains on as if nothing had been tried.
    fresh = sess.trainer("builtin:digits-cnn", **OPTIONS)
    fresh.fit(x, y, epochs=2, progress=False)
    trainer.fit(x, y, epochs=1, progress=False)
    same_state(trainer.state_dict(), fresh.state_dict())


def test_progress_callable_per_step_and_gil_released():
    (x, y), _ = ampx.load_digits()
    sess = ampx.Session(devices="cpu_ref:0")
    trainer = sess.trainer("builtin:digits-cnn", **OPTIONS)
    calls = []
    history = trainer.fit(x[:96], y[:96], epochs=2,
                          progress=lambda done, total, what: calls.append((done, total, what)))
    assert [(d, t) for d, t, _ in calls] == [(1, 3), (2, 3), (3, 3)] * 2
    assert all(re.fullmatch(r"loss \d+\.\d{4}", w) for _, _, w in calls)
    assert calls[2][2] == f"loss {history[0]['loss']:.4f}"  # the epoch's running loss at its end
    with pytest.raises(TypeError, match="progress"):
        trainer.fit(x[:96], y[:96], progress="yes")

    def stop(done, total, what):
        if done == 2:
            raise KeyboardInterrupt("stopped")

    with pytest.raises(KeyboardInterrupt, match="stopped"):
        trainer.fit(x[:96], y[:96], progress=stop)
    assert (trainer.epoch, trainer.step) == (2, 8)  # the epoch ended at its second step

    with TickCounter() as ticks:
        (record,) = trainer.fit(x, y, epochs=1, progress=None)
    # Held through the epoch, the counter could not tick until its end.
    assert ticks.during > record["steps"], (ticks.during, ticks.seconds)


PROGRESS_SCRIPT = """
import sys, ampx
(x, y), _ = ampx.load_digits()
t = ampx.Session(devices="cpu_ref:0").trainer("builtin:digits-cnn", optimizer="sgd", lr=0.1,
                                              dtype="f16", batch=32)
h = t.fit(x[:96], y[:96], epochs=2, progress={progress})
print(" ".join(f"{{r['loss']:.4f}}" for r in h))
"""


def run_fit_script(progress, tty):
    """stdout and stderr of a fit in a fresh interpreter, stderr a terminal
    (a pseudo-terminal) or a pipe."""
    script = PROGRESS_SCRIPT.format(progress=progress)
    if not tty:
        p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           check=True)
        return p.stdout, p.stderr
    master, slave = pty.openpty()
    p = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    err = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the child closed its end
            break
        if not chunk:
            break
        err += chunk
    os.close(master)
    out = p.stdout.read().decode()
    assert p.wait() == 0, err
    return out, err.decode()


def test_progress_bar_on_a_terminal_only():
    out, err = run_fit_script("True", tty=True)
    losses = out.split()
    assert len(losses) == 2
    # ampx train's bar: per step "epoch E/N [###---] done/total loss L",
    # redrawn in place, then the epoch's loss on the same line.
    for e in (1, 2):
        for done in (1, 2, 3):
            assert re.search(rf"\repoch {e}/2 +\[#*-*\] +{done}/3 +loss \d+\.\d{{4}}", err), err
        assert re.search(rf"\repoch {e}/2 +loss {losses[e - 1]} *\r?\n", err), err
    out, err = run_fit_script("False", tty=True)
    assert err == "" and len(out.split()) == 2
    out, err = run_fit_script("True", tty=False)
    assert err == "" and len(out.split()) == 2


def hot_model(path):
    """digits-cnn with conv1's weights times 1e5: its f16 output overflows
    whatever the loss scale (docs/TRAINING.md, "Overflow diagnostics")."""
    import onnx
    from onnx import numpy_helper

    base = str(path) + ".base.onnx"
    ampx.Session(devices="cpu_ref:0").trainer("builtin:digits-cnn", batch=32).export(base)
    m = onnx.load(base)
    for i in m.graph.initializer:
        if i.name == "conv1.weight":
            i.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(i) * np.float32(1e5), i.name))
    onnx.save(m, str(path))


def test_overflow_diagnostics_and_fallback_as_the_cli(cli, tmp_path):
    hot = tmp_path / "hot.onnx"
    hot_model(hot)
    p = subprocess.run([cli, "train", str(hot), "--data", "builtin:digits", "--epochs", "1",
                        "--batch", "32", "--lr", "0.1", "--momentum", "0.9", "--amp", "O2",
                        "--dtype", "f16", "--capability-blind", "--auto-fallback",
                        "--fallback-after", "2", "--fallback-window", "100", "--device",
                        "cpu_ref:0", "--db", str(tmp_path / "cli.db"), "--format", "json"],
                       check=True, capture_output=True, text=True)
    lines = [json.loads(line) for line in p.stdout.splitlines()]
    (want,) = [j for j in lines if j.get("event") == "epoch"]
    (done,) = [j for j in lines if j.get("event") == "done"]
    assert want["fallbacks"] and want["overflows"]  # the model does overflow, and moves

    (x, y), (xt, yt) = ampx.load_digits()
    sess = ampx.Session(devices="cpu_ref:0")
    trainer = sess.trainer(str(hot), **OPTIONS, capability_blind=True, auto_fallback=True,
                           fallback_after=2, fallback_window=100)
    (got,) = trainer.fit(x, y, epochs=1, eval=(xt, yt), progress=False)
    for k in ("loss_scale", "overflow_steps", "skipped_steps", "eval_loss", "eval_accuracy",
              "overflows", "fallbacks"):
        assert got[k] == want[k], k
    assert got["loss"] == want["train_loss"] and "replan_ms" in got
    assert got["overflows"][0]["layer"] == "conv1"  # the first overflowing layer named
    assert trainer.overflow_diagnostics() == done["diagnostics"]

    # Diagnostics alone: the overflows named, nothing moved.
    probe = sess.trainer(str(hot), **OPTIONS, capability_blind=True, diagnose_overflow=True)
    (r,) = probe.fit(x[:128], y[:128], progress=False)
    assert r["overflows"] and r["overflows"][0]["layer"] == "conv1" and r["fallbacks"] == []
    assert probe.overflow_diagnostics()["fallbacks"] == []
    # Without them: no such fields, no summary.
    plain = sess.trainer("builtin:digits-cnn", **OPTIONS)
    (r,) = plain.fit(x[:64], y[:64], progress=False)
    assert "overflows" not in r and plain.overflow_diagnostics() is None
    with pytest.raises(ValueError):
        sess.trainer("builtin:digits-cnn", fallback_window=0)
    with pytest.raises(ampx.UsageError, match="underflow"):
        sess.trainer("builtin:digits-cnn", auto_fallback=True, fallback_underflow=2.0)


def test_checkpoint_dir_refused_before_the_first_epoch(tmp_path):
    (x, y), _ = ampx.load_digits()
    trainer = ampx.Session(devices="cpu_ref:0").trainer("builtin:digits-cnn", **OPTIONS)
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("")
    with pytest.raises(ampx.Error, match="file"):
        trainer.fit(x[:64], y[:64], checkpoint=not_a_dir, progress=False)
    assert trainer.epoch == 0  # refused before any work, as ampx train does
    with pytest.raises(ValueError, match="reset_loss_scale"):
        trainer.fit(x[:64], y[:64], reset_loss_scale=True)


def test_plan_overrides_as_the_cli(cli, tmp_path):
    p = subprocess.run([cli, "train", "builtin:digits-cnn", "--data", "builtin:digits", "--epochs",
                        "1", "--batch", "32", "--lr", "0.1", "--momentum", "0.9", "--amp", "O2",
                        "--dtype", "f16", "--capability-blind", "--keep-fp32", "conv1",
                        "--device", "cpu_ref:0", "--db", str(tmp_path / "cli.db"), "--format",
                        "json"], check=True, capture_output=True, text=True)
    (want,) = [j for j in map(json.loads, p.stdout.splitlines()) if j.get("event") == "epoch"]
    (x, y), _ = ampx.load_digits()
    sess = ampx.Session(devices="cpu_ref:0")
    trainer = sess.trainer("builtin:digits-cnn", **OPTIONS, capability_blind=True,
                           keep_fp32=["conv1"])
    nodes = {n["name"]: n for n in json.loads(trainer.plan_json())["nodes"]}
    assert nodes["conv1"]["effective"] == "f32" and nodes["conv1"]["intent_reason"] == "override"
    assert nodes["conv2"]["effective"] == "f16"
    (got,) = trainer.fit(x, y, progress=False)
    assert got["loss"] == want["train_loss"]
    with pytest.raises(ampx.UsageError):
        sess.trainer("builtin:digits-cnn", white_list="NoSuchOp")


def test_profile_step_and_trace_as_the_cli(cli, tmp_path):
    p = subprocess.run([cli, "train", "builtin:digits-cnn", "--data", "builtin:digits", "--epochs",
                        "1", "--batch", "32", "--lr", "0.1", "--momentum", "0.9", "--amp", "O2",
                        "--dtype", "f16", "--device", "cpu_ref:0", "--db", str(tmp_path / "cli.db"),
                        "--profile-step", "5", "--format", "json"],
                       check=True, capture_output=True, text=True)
    lines = [json.loads(line) for line in p.stdout.splitlines()]
    (epoch,) = [j for j in lines if j.get("event") == "epoch"]
    (want,) = [j for j in lines if j.get("event") == "profile"]
    (x, y), _ = ampx.load_digits()
    sess = ampx.Session(devices="cpu_ref:0")
    trainer = sess.trainer("builtin:digits-cnn", **OPTIONS)
    with pytest.raises(ValueError, match="count from 1"):
        trainer.fit(x, y, profile_step=0)
    with pytest.raises(ValueError, match="45 steps"):
        trainer.fit(x, y, profile_step=46)
    with pytest.raises(ampx.UsageError, match="no directory"):
        trainer.fit(x, y, trace=tmp_path / "no" / "t.json")
    assert trainer.epoch == 0 and trainer.profile() is None
    trace = tmp_path / "step.json"
    (record,) = trainer.fit(x, y, profile_step=5, trace=trace, progress=False)
    assert record["loss"] == epoch["train_loss"]  # the profiled step trains as the others
    got = trainer.profile()
    for k in ("schema", "event", "step", "epoch", "rows", "devices"):
        assert got[k] == want[k], k
    def nodes(j):
        return [(s["name"], s["op"], s["device"], s["dtype"], s["implementation"], s["shapes"])
                for s in j["per_node"]["steps"]]
    assert nodes(got) == nodes(want) and nodes(got)
    assert json.loads(trace.read_text())["traceEvents"]
    with pytest.raises(ValueError, match="45 steps already"):
        trainer.fit(x, y, profile_step=5)


def report_runs(path):
    text = path.read_text()
    m = re.search(r'<script type="application/json" id="train-data">(.*?)</script>', text, re.S)
    return json.loads(m.group(1))["runs"]


def test_curves_report_as_the_cli(cli, tmp_path):
    cli_html = tmp_path / "cli.html"
    subprocess.run([cli, "train", "builtin:digits-cnn", "--data", "builtin:digits", "--epochs", "1",
                    "--batch", "32", "--lr", "0.1", "--momentum", "0.9", "--amp", "O2", "--dtype",
                    "f16", "--device", "cpu_ref:0", "--db", str(tmp_path / "cli.db"), "--report",
                    str(cli_html)], check=True, capture_output=True, text=True)
    (x, y), (xt, yt) = ampx.load_digits()
    sess = ampx.Session(devices="cpu_ref:0")
    trainer = sess.trainer("builtin:digits-cnn", **OPTIONS)
    with pytest.raises(ampx.UsageError, match="report"):
        trainer.fit(x, y, report=tmp_path / "no" / "r.html")
    with pytest.raises(ValueError, match="report"):
        trainer.fit(x, y, report_label="O2")
    assert trainer.epoch == 0
    html = tmp_path / "py.html"
    trainer.fit(x, y, eval=(xt, yt), report=html, progress=False)
    (want,) = report_runs(cli_html)
    (got,) = report_runs(html)
    assert got == want and got["label"] == "O2 f16, loss scale dynamic:16777216,2,2000"
    assert got["epochs"][0]["eval_accuracy"] > 0.5
    # Another run under another label goes beside it.
    other = sess.trainer("builtin:digits-cnn", **dict(OPTIONS, amp="O0"))
    other.fit(x[:64], y[:64], report=html, report_label="fp32", progress=False)
    assert [r["label"] for r in report_runs(html)] == [want["label"], "fp32"]
