"""Session.plan against `ampx plan`: the same decisions, the same JSON."""

import json
import os
import subprocess

import numpy as np
import pytest

import ampx


def cli_plan(cli, model, device, db, *extra):
    out = subprocess.run([cli, "plan", model, "--device", device, "--amp", "O2", "--dtype", "auto",
                          "--db", db, "--format", "json", *extra],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def decisions(nodes):
    return [(n["name"], n["op"], n["intended"], n["effective"], n["reason"], n["device"],
             n["placement"]) for n in nodes]


@pytest.mark.parametrize("model", ["builtin:cnn", "builtin:encoder"])
def test_plan_matches_cli(cli, run_devices, tmp_path, model):
    for device in run_devices:
        expected = cli_plan(cli, model, device, str(tmp_path / "cli.db"))
        sess = ampx.Session(devices=device, db=str(tmp_path / "py.db"))
        plan = sess.plan(model, amp="O2", dtype="auto")
        got = json.loads(plan.to_json())
        assert got["schema"] == "ampx.plan/1"
        assert decisions(got["nodes"]) == decisions(expected["nodes"])
        assert got["summary"] == expected["summary"]
        assert got["dtype"] == expected["dtype"] == plan.dtype
        assert [(c["name"], c["from"], c["to"]) for c in got["casts"]] == \
            [(c["name"], c["from"], c["to"]) for c in expected["casts"]]
        # The records say the same as the JSON.
        assert [(n.name, n.op, n.intended, n.effective, n.reason, n.device, n.placement)
                for n in plan.nodes] == decisions(expected["nodes"])
        assert plan.summary == expected["summary"]
        assert len(plan.casts) == len(expected["casts"])


def test_plan_records_and_views(run_devices):
    sess = ampx.Session(devices=run_devices[-1])
    plan = sess.plan("builtin:cnn", amp="O2", dtype="f16", keep_fp32=["conv1"])
    by_name = {n.name: n for n in plan.nodes}
    assert by_name["conv1"].effective == "f32"
    assert by_name["conv1"].reason == "override"
    assert all(n.predicted_us is None or n.predicted_us >= 0 for n in plan.nodes)
    assert all(n.cost_origin in (None, "measured", "probe", "hint") for n in plan.nodes)
    text = str(plan)
    assert "conv1" in text and "summary:" in text
    html = plan._repr_html_()
    assert html.startswith("<table>") and "conv1" in html
    assert "ampx.Plan builtin:cnn" in repr(plan)


def test_force_16bit_and_amp_levels():
    sess = ampx.Session(devices="cpu_ref:0")
    o0 = sess.plan("builtin:cnn", amp="O0")
    assert all(n.effective == "f32" for n in o0.nodes)
    forced = sess.plan("builtin:cnn", amp="O0", dtype="f16", force_16bit=["conv1"], cost=False,
                       capability_blind=True)
    assert {n.name: n.effective for n in forced.nodes}["conv1"] == "f16"


def test_export_runs_in_onnxruntime(tmp_path, models_dir):
    import onnxruntime as ort

    sess = ampx.Session(devices="cpu_ref:0")
    model = os.path.join(models_dir, "mobilenet.onnx")
    plan = sess.plan(model, amp="O2", dtype="f16", capability_blind=True)
    out = tmp_path / "planned.onnx"
    written = plan.export(out)
    assert written["casts"] > 0 and written["bytes"] == os.path.getsize(out)
    o = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    x = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32)
    ref = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, {"image": x})[0]
    got = o.run(None, {"image": x})[0]
    assert np.abs(got - ref).max() / np.abs(ref).max() < 2e-2


def test_model_forms(models_dir):
    """A path, os.PathLike, bytes and an onnx.ModelProto plan alike."""
    import pathlib

    import onnx

    path = os.path.join(models_dir, "mobilenet.onnx")
    sess = ampx.Session(devices="cpu_ref:0")
    plans = [sess.plan(m, amp="O2", dtype="f16") for m in
             (path, pathlib.Path(path), open(path, "rb").read(), onnx.load(path))]
    first = decisions(json.loads(plans[0].to_json())["nodes"])
    for p in plans[1:]:
        assert decisions(json.loads(p.to_json())["nodes"]) == first
